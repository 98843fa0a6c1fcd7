/* build.c — the corpus pipeline (see build.h).
 *
 * Determinism: a task's draws depend only on (master_seed, template,
 * index, attempt); workers fill slots indexed by task, and everything that
 * looks across tasks (unique gold programs, table order) runs afterwards
 * on one thread in task order, so --jobs cannot change a byte. */
#include "build.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admit.h"
#include "split.h"
#include "tables.h"
#include "template.h"

struct slot {
    struct vat_task task;
    struct vat_replay replay;
    const struct vat_template *tmpl;
    const json_t *cfg;
    int admitted;
    long redraws;
    char last_err[512];
};

struct pool {
    const struct vat_config *c;
    const struct vat_build_opts *o;
    struct slot *slots;
    size_t n;
    size_t next;
    size_t done;
    pthread_mutex_t mu;
};

static void slot_draw_from(struct pool *p, struct slot *s, uint32_t first_attempt)
{
    struct vat_draw_opts d = {
        .master_seed = p->c->master_seed,
        .cfg = s->cfg,
        .inline_max_bytes = (size_t)p->c->inline_max_bytes,
        .strength_target = p->c->strength_target,
        .inline_full = p->c->inline_full,
    };
    s->admitted = 0;
    for (uint32_t a = first_attempt; a <= first_attempt + (uint32_t)p->c->max_redraws; a++) {
        struct vat_err e = {{0}};
        if (vat_task_draw(&s->task, a, &d, &s->replay, &e) == 0) {
            s->admitted = 1;
            return;
        }
        s->redraws++;
        snprintf(s->last_err, sizeof s->last_err, "%s", e.msg);
    }
}

static void *worker(void *arg)
{
    struct pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next < p->n ? p->next++ : p->n;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n)
            break;
        slot_draw_from(p, &p->slots[i], 0);
        pthread_mutex_lock(&p->mu);
        p->done++;
        if (p->o->progress)
            fprintf(p->o->progress, "\rvat: drawing tasks %zu/%zu", p->done, p->n);
        pthread_mutex_unlock(&p->mu);
    }
    return NULL;
}

static bool only_has(const char *only, const char *name)
{
    if (!only)
        return true;
    size_t n = strlen(name);
    for (const char *p = only; *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        if (!c)
            break;
        p = c + 1;
    }
    return false;
}

/* Removes fixtures/<template>/ files of this template so a smaller count
 * leaves nothing stale behind; touches only names "<template>-*". */
static int clear_template_fixtures(const char *root, const char *tmpl, struct vat_err *e)
{
    char *rel = vat_xasprintf("fixtures/%s", tmpl);
    char *dir = vat_path_join(root, rel);
    free(rel);
    DIR *d = opendir(dir);
    if (!d) {
        free(dir);
        return 0;
    }
    size_t tl = strlen(tmpl);
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, tmpl, tl) != 0 || de->d_name[tl] != '-')
            continue;
        char *f = vat_xasprintf("%s/%s", dir, de->d_name);
        if (remove(f) != 0 && errno != ENOENT)
            rc = vat_err_set(e, "vat: cannot remove '%s': %s", f, strerror(errno));
        free(f);
    }
    closedir(d);
    free(dir);
    return rc;
}

/* Gold programs compare after folding runs of white space. */
static char *normalise_program(const char *s)
{
    struct vat_buf b = VAT_BUF_INIT;
    int space = 0;
    for (; *s; s++) {
        if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
            space = 1;
            continue;
        }
        if (space && b.len)
            vat_buf_putc(&b, ' ');
        space = 0;
        vat_buf_putc(&b, *s);
    }
    return vat_buf_detach(&b);
}

/* Program answers (regex, sql) must not repeat within a template: a later
 * task whose gold repeats an earlier one is redrawn from its next attempt,
 * in index order, on this thread. */
static void make_programs_unique(struct pool *p, size_t from, size_t to)
{
    const char *kind = p->slots[from].tmpl->answer_kind;
    if (strcmp(kind, "regex") != 0 && strcmp(kind, "sql") != 0)
        return;
    char **seen = vat_xcalloc(to - from, sizeof *seen);
    for (size_t i = from; i < to; i++) {
        struct slot *s = &p->slots[i];
        for (int round = 0; s->admitted && round <= p->c->max_redraws; round++) {
            char *norm = normalise_program(s->task.gold);
            bool dup = false;
            for (size_t j = from; j < i && !dup; j++)
                dup = seen[j - from] && strcmp(seen[j - from], norm) == 0;
            if (!dup) {
                seen[i - from] = norm;
                break;
            }
            free(norm);
            s->redraws++;
            snprintf(s->last_err, sizeof s->last_err, "%s: gold program repeats an earlier task",
                     s->task.id);
            slot_draw_from(p, s, s->task.attempt + 1);
            if (round == p->c->max_redraws)
                s->admitted = 0;
        }
    }
    for (size_t i = 0; i < to - from; i++)
        free(seen[i]);
    free(seen);
}

static int cmp_slot_id(const void *a, const void *b)
{
    const struct slot *const *x = a, *const *y = b;
    return strcmp((*x)->task.id, (*y)->task.id);
}

int vat_build(const struct vat_config *c, const struct vat_build_opts *o,
              struct vat_build_stats *stats, struct vat_err *e)
{
    if (o->only) {
        for (const char *p = o->only; *p;) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            char *name = vat_xstrndup(p, len);
            const struct vat_template *t = vat_template_find(name);
            if (!t) {
                vat_err_set(e, "vat: unknown template '%s' in --only", name);
                free(name);
                return -1;
            }
            free(name);
            if (!comma)
                break;
            p = comma + 1;
        }
    }

    /* A root that cannot be written fails now, not after every draw. */
    if (mkdir(o->root, 0777) != 0 && errno != EEXIST)
        return vat_err_set(e, "vat: cannot create '%s': %s", o->root, strerror(errno));
    if (access(o->root, W_OK | X_OK) != 0)
        return vat_err_set(e, "vat: cannot write to '%s': %s", o->root, strerror(errno));

    /* The slots, template by template in registry order. */
    size_t n = 0, ntmpl = 0;
    for (size_t i = 0; vat_registry[i]; i++) {
        if (!only_has(o->only, vat_registry[i]->name))
            continue;
        const json_t *cfg = json_object_get(c->templates, vat_registry[i]->name);
        n += (size_t)json_integer_value(json_object_get(cfg, "count"));
        ntmpl++;
    }
    struct pool p = {.c = c, .o = o, .slots = vat_xcalloc(n ? n : 1, sizeof(struct slot)), .n = n};
    pthread_mutex_init(&p.mu, NULL);
    struct vat_template_stats *per = vat_xcalloc(ntmpl ? ntmpl : 1, sizeof *per);
    size_t *first = vat_xcalloc(ntmpl + 1, sizeof *first);
    size_t k = 0, ti = 0;
    int rc = 0;
    for (size_t i = 0; vat_registry[i]; i++) {
        const struct vat_template *tm = vat_registry[i];
        if (!only_has(o->only, tm->name))
            continue;
        const json_t *cfg = json_object_get(c->templates, tm->name);
        long count = (long)json_integer_value(json_object_get(cfg, "count"));
        per[ti].name = tm->name;
        per[ti].requested = count;
        first[ti] = k;
        if (clear_template_fixtures(o->root, tm->name, e) != 0)
            rc = -1;
        for (long j = 0; j < count; j++, k++) {
            p.slots[k].tmpl = tm;
            p.slots[k].cfg = cfg;
            vat_task_init(&p.slots[k].task, tm, (uint32_t)j, o->root);
        }
        ti++;
    }
    first[ntmpl] = n;
    if (rc != 0)
        goto done;
    (void)vat_checker_version("regex"); /* fill its static before threads */

    int jobs = o->jobs < 1 ? 1 : o->jobs;
    if ((size_t)jobs > n)
        jobs = n ? (int)n : 1;
    pthread_t *th = vat_xcalloc((size_t)jobs, sizeof *th);
    for (int j = 0; j < jobs; j++)
        pthread_create(&th[j], NULL, worker, &p);
    for (int j = 0; j < jobs; j++)
        pthread_join(th[j], NULL);
    free(th);
    if (o->progress)
        fputs("\n", o->progress);

    for (size_t t = 0; t < ntmpl; t++)
        if (first[t] < first[t + 1])
            make_programs_unique(&p, first[t], first[t + 1]);

    /* Tables, rows in task_id order. */
    struct slot **order = vat_xcalloc(n ? n : 1, sizeof *order);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (p.slots[i].admitted)
            order[m++] = &p.slots[i];
    qsort(order, m, sizeof *order, cmp_slot_id);
    struct vat_tables tb;
    memset(&tb, 0, sizeof tb);
    for (size_t i = 0; i < m; i++)
        vat_tables_add_task(&tb, &order[i]->task, &order[i]->replay,
                            vat_split_side(c, order[i]->tmpl->name, order[i]->task.index));
    free(order);
    if (vat_tables_write(&tb, o->root, e) != 0)
        rc = -1;
    vat_tables_release(&tb);

    /* Per-template summary. */
    for (size_t t = 0; t < ntmpl; t++) {
        for (size_t i = first[t]; i < first[t + 1]; i++) {
            struct slot *s = &p.slots[i];
            per[t].redrawn += s->redraws;
            if (s->admitted) {
                per[t].admitted++;
            } else {
                per[t].rejected++;
                snprintf(per[t].last_rejection, sizeof per[t].last_rejection, "%s", s->last_err);
                /* A task that never admitted leaves no fixture behind. */
                for (int f = 0; f < s->task.n_fixtures; f++) {
                    char *path = vat_path_join(o->root, s->task.fixture[f].path);
                    remove(path);
                    free(path);
                }
            }
        }
        if (per[t].rejected && rc == 0)
            rc = 1;
    }
    if (o->summary) {
        fprintf(o->summary, "%-22s %9s %9s %8s %8s\n", "template", "requested", "admitted",
                "redrawn", "rejected");
        long tot[4] = {0};
        for (size_t t = 0; t < ntmpl; t++) {
            fprintf(o->summary, "%-22s %9ld %9ld %8ld %8ld\n", per[t].name, per[t].requested,
                    per[t].admitted, per[t].redrawn, per[t].rejected);
            tot[0] += per[t].requested;
            tot[1] += per[t].admitted;
            tot[2] += per[t].redrawn;
            tot[3] += per[t].rejected;
        }
        fprintf(o->summary, "%-22s %9ld %9ld %8ld %8ld\n", "total", tot[0], tot[1], tot[2],
                tot[3]);
        for (size_t t = 0; t < ntmpl; t++)
            if (per[t].rejected)
                fprintf(o->summary, "vat: '%s' admitted %ld of %ld; last rejection: %s\n",
                        per[t].name, per[t].admitted, per[t].requested, per[t].last_rejection);
    }

done:
    if (stats) {
        stats->per = per;
        stats->n = ntmpl;
        stats->tasks = (long)n;
        stats->admitted = stats->rejected = 0;
        for (size_t t = 0; t < ntmpl; t++) {
            stats->admitted += per[t].admitted;
            stats->rejected += per[t].rejected;
        }
    } else {
        free(per);
    }
    for (size_t i = 0; i < n; i++)
        vat_task_clear(&p.slots[i].task);
    free(p.slots);
    free(first);
    pthread_mutex_destroy(&p.mu);
    return rc;
}

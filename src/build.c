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
#include "card.h"
#include "split.h"
#include "store.h"
#include "tables.h"
#include "template.h"

struct slot {
    struct vat_task task;
    struct vat_replay replay;
    const struct vat_template *tmpl;
    const json_t *cfg;
    int admitted;
    int fatal; /* a checker's last-resort net stopped a draw */
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
    };
    s->admitted = 0;
    for (uint32_t a = first_attempt; a <= first_attempt + (uint32_t)p->c->max_redraws; a++) {
        struct vat_err e = {{0}};
        int rc = vat_task_draw(&s->task, a, &d, &s->replay, &e);
        if (rc == 0) {
            s->admitted = 1;
            return;
        }
        if (rc == VAT_DRAW_FATAL) {
            s->fatal = 1;
            snprintf(s->last_err, sizeof s->last_err, "%s", e.msg);
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

/* ---- up-front refusals ---------------------------------------------------------- */

/* Table bytes one task of each template contributes, measured on the
 * default corpus (inline_max_bytes 6000, default params) and rounded up
 * to whole KiB; a template missing here counts as the largest. */
static const struct {
    const char *name;
    long kib;
} row_kib[] = {
    {"date_window", 27},    {"dedupe_aggregate", 28}, {"dup_header", 13},
    {"filtered_total", 25}, {"grouped_count", 29},    {"grouped_mean", 25},
    {"grouped_sum", 23},    {"join_aggregate", 27},   {"pivot", 27},
    {"regex_amounts", 19},  {"regex_iso_dates", 18},  {"regex_order_ids", 16},
    {"sql_order_counts", 35}, {"sql_paid_revenue", 33}, {"threshold_flags", 26},
    {"top_n", 25},          {"unanswerable", 18},
};
#define ROW_KIB_MAX 36

double vat_build_memory_estimate(const struct vat_config *c, const char *only, long *tasks)
{
    double bytes = 0;
    long n = 0;
    /* Prompts inline up to inline_max_bytes of data and appear in four
     * tables (experience, sft_examples twice, preference_pairs). */
    double extra = c->inline_max_bytes > 6000 ? 4.0 * (double)(c->inline_max_bytes - 6000) : 0;
    for (size_t i = 0; vat_registry[i]; i++) {
        const char *name = vat_registry[i]->name;
        if (!only_has(only, name))
            continue;
        const json_t *cfg = json_object_get(c->templates, name);
        long count = (long)json_integer_value(json_object_get(cfg, "count"));
        long kib = ROW_KIB_MAX;
        for (size_t k = 0; k < sizeof row_kib / sizeof row_kib[0]; k++)
            if (strcmp(row_kib[k].name, name) == 0)
                kib = row_kib[k].kib;
        /* Held twice until the tables are written: as the slot's task
         * (prompt, gold, spec, replay) and as the table buffers' rows. */
        bytes += (double)count * ((double)sizeof(struct slot) + 2.0 * ((double)kib * 1024 + extra));
        n += count;
    }
    if (tasks)
        *tasks = n;
    return bytes;
}

/* --only rebuilds some templates from scratch: into a root that holds
 * other templates' tasks it would drop them all (the tables are written
 * whole), so such a root is refused. */
static int only_refuses_root(const char *root, const char *only, struct vat_err *e)
{
    for (int s = 0; s < VAT_N_SPLITS; s++) {
        char rel[64];
        snprintf(rel, sizeof rel, "out/experience/%s.jsonl", vat_split_names[s]);
        char *data = NULL;
        size_t len = 0;
        struct vat_err ignore;
        if (vat_read_file_beneath(root, rel, (size_t)1 << 34, &data, &len, &ignore) != 0)
            continue; /* no such table: nothing to lose */
        int rc = 0;
        for (char *line = data, *nl; rc == 0 && *line; line = nl ? nl + 1 : line + strlen(line)) {
            nl = strchr(line, '\n');
            json_t *row = json_loadb(line, nl ? (size_t)(nl - line) : strlen(line), 0, NULL);
            const char *tm = json_string_value(json_object_get(row, "template"));
            const char *id = json_string_value(json_object_get(row, "task_id"));
            if (!tm || !only_has(only, tm))
                rc = vat_err_set(e, "vat: --only builds into an empty root, and '%s' holds "
                                    "tasks of other templates (e.g. '%s'); use a new --root",
                                 root, id ? id : "an unreadable row");
            json_decref(row);
        }
        free(data);
        if (rc != 0)
            return -1;
    }
    return 0;
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
    const struct vat_template *tm = p->slots[from].tmpl;
    if (strcmp(tm->answer_kind, "regex") != 0 && strcmp(tm->answer_kind, "sql") != 0 &&
        !tm->progform)
        return;
    char **seen = vat_xcalloc(to - from, sizeof *seen);
    for (size_t i = from; i < to; i++) {
        struct slot *s = &p->slots[i];
        for (int round = 0; s->admitted && round <= p->c->max_redraws; round++) {
            /* Analytics tasks in their value form answer with values. */
            const char *kind = vat_task_answer_kind(&s->task);
            if (strcmp(kind, "regex") != 0 && strcmp(kind, "sql") != 0)
                break;
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
    if (stats)
        memset(stats, 0, sizeof *stats);
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

    long want = 0;
    double need = vat_build_memory_estimate(c, o->only, &want);
    if (need > (double)VAT_BUILD_MEMORY_BOUND)
        return vat_err_set(e, "vat: this config would hold about %.1f GiB in memory while "
                              "building %ld tasks, over vat's bound of %.0f GiB; lower the "
                              "counts or build in parts",
                           need / (1 << 30), want, (double)VAT_BUILD_MEMORY_BOUND / (1 << 30));

    /* Everything is written into a stage beside the live trees and made
     * current at the end (store.h); a root that cannot be written, or is
     * being built by another vat, fails now, not after every draw. */
    struct vat_store store;
    if (vat_store_begin_build(&store, o->root, e) != 0)
        return -1;
    if (o->only && only_refuses_root(o->root, o->only, e) != 0) {
        vat_store_abort(&store);
        return -1;
    }
    const char *root = store.stage;

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
        for (long j = 0; j < count; j++, k++) {
            p.slots[k].tmpl = tm;
            p.slots[k].cfg = cfg;
            vat_task_init(&p.slots[k].task, tm, (uint32_t)j, root);
        }
        ti++;
    }
    first[ntmpl] = n;
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
    for (size_t i = 0; i < n; i++)
        if (p.slots[i].fatal) { /* the first in task order, whatever --jobs */
            rc = vat_err_set(e, "vat: build failed: %s", p.slots[i].last_err);
            goto done;
        }

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
    if (vat_tables_write(&tb, root, e) != 0)
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
                    char *path = vat_path_join(root, s->task.fixture[f].path);
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

done:;
    struct vat_build_stats st = {.per = per, .n = ntmpl, .tasks = (long)n};
    for (size_t t = 0; t < ntmpl; t++) {
        st.admitted += per[t].admitted;
        st.rejected += per[t].rejected;
    }
    /* The card describes the staged tables; then the manifest and the swap. */
    if (rc >= 0) {
        struct vat_build_opts staged = *o;
        staged.root = root;
        if ((o->card && vat_card_write(c, &staged, &st, e) != 0) ||
            vat_store_commit(&store, e) != 0)
            rc = -1;
    }
    if (rc < 0)
        vat_store_abort(&store);
    else
        vat_store_close(&store);
    if (stats)
        *stats = st;
    else
        free(per);
    for (size_t i = 0; i < n; i++)
        vat_task_clear(&p.slots[i].task);
    free(p.slots);
    free(first);
    pthread_mutex_destroy(&p.mu);
    return rc;
}

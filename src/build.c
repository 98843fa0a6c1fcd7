/* build.c — the corpus pipeline (see build.h).
 *
 * Determinism: a task's draws depend only on (master_seed, template,
 * index, attempt); workers fill slots indexed by task, and everything that
 * looks across tasks (the check that gold programs are unique, table
 * order) runs afterwards on one thread in task order, so --jobs cannot
 * change a byte.  No task's draws depend on another task, so a shard
 * (--shard K/N) builds its tasks exactly as the whole build does. */
#include "build.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "admit.h"
#include "card.h"
#include "filememo.h"
#include "lines.h"
#include "prints.h"
#include "shard.h"
#include "split.h"
#include "store.h"
#include "tables.h"
#include "template.h"

struct slot {
    struct vat_task task;
    struct vat_replay replay;
    struct vat_task_prints prints; /* what the audit compares, of an admitted task */
    int prints_failed;             /* its fixtures could not be read as the audit does */
    char prints_err[512];
    const struct vat_template *tmpl;
    const json_t *cfg;
    size_t tix;   /* the template's place in the build's template list */
    int state;    /* SLOT_FREE, SLOT_DRAWING, SLOT_DONE or SLOT_WRITTEN */
    int admitted;
    int fatal; /* a checker's last-resort net stopped a draw */
    long redraws;
    char last_err[512];
};

/* SLOT_WRITTEN: the writer is done with the slot, whose task the next
 * worker to take the slot frees (or the writer, at the end). */
enum { SLOT_FREE, SLOT_DRAWING, SLOT_DONE, SLOT_WRITTEN };

/* One task of the build, by template and index; the build's list is
 * sorted by task id, the order the tables are written in. */
struct work {
    uint32_t tix;
    uint32_t index;
};

/* Workers draw the tasks of the sorted list in order into a window of
 * slots (list position k uses ring[k % window]); the writer (the thread
 * that called vat_build) takes the slots in the same order, writes the
 * task's rows and frees the slot.  A worker waits while the window is
 * full, so at most `window` tasks are held at once whatever the count. */
struct pool {
    const struct vat_config *c;
    const struct vat_build_opts *o;
    const char *root;
    const struct vat_template **tmpl;
    const json_t **cfg;
    struct work *list;
    struct slot *ring;
    size_t window;
    size_t n;
    size_t next;    /* next list position to draw */
    size_t written; /* list positions taken by the writer */
    size_t done;    /* draws finished */
    size_t wake_at; /* done count from which a finished draw wakes the writer */
    bool stop;      /* the build has failed: draw nothing more */
    pthread_mutex_t mu;
    pthread_cond_t slot_done, slot_free;
};

/* The fingerprints of an admitted task (its fixtures' rows read back as
 * the audit reads them), taken on the worker inside the draw, while the
 * draw's memo still holds the fixtures, so the writer only sorts them. */
static void slot_prints(struct vat_task *t, void *arg)
{
    struct slot *s = arg;
    struct vat_err e = {{0}};
    vat_task_prints_release(&s->prints);
    if (vat_task_prints_make(&s->prints, t, t->side, (unsigned)s->tix, &e) != 0) {
        s->prints_failed = 1;
        snprintf(s->prints_err, sizeof s->prints_err, "%s", e.msg);
    }
}

/* Removes the fixture files t's last draw wrote. */
static void remove_fixtures(const struct vat_task *t)
{
    for (int f = 0; f < t->n_fixtures; f++) {
        char *path = vat_path_join(t->root, t->fixture[f].path);
        remove(path);
        free(path);
    }
}

static void slot_draw_from(struct pool *p, struct slot *s, uint32_t first_attempt)
{
    struct vat_draw_opts d = {
        .master_seed = p->c->master_seed,
        .cfg = s->cfg,
        .inline_max_bytes = (size_t)p->c->inline_max_bytes,
        .strength_target = p->c->strength_target,
        .inline_full = p->c->inline_full,
        .admitted = slot_prints,
        .admitted_arg = s,
    };
    s->admitted = 0;
    for (uint32_t a = first_attempt; a <= first_attempt + (uint32_t)p->c->max_redraws; a++) {
        struct vat_err e = {{0}};
        int rc = vat_task_draw(&s->task, a, &d, &s->replay, &e);
        if (rc == 0 && s->prints_failed) {
            s->fatal = 1;
            snprintf(s->last_err, sizeof s->last_err, "%s", s->prints_err);
            return;
        }
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
        /* The next attempt may write other files (a CSV where this one
         * wrote a workbook, no variants): only the admitted draw's
         * fixtures stay. */
        remove_fixtures(&s->task);
    }
}

static void *worker(void *arg)
{
    struct pool *p = arg;
    vat_dirs_keep_across(p->root);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (p->stop || p->next >= p->n)
            break;
        size_t k = p->next;
        if (k >= p->written + p->window) { /* window full: wait for the writer */
            pthread_cond_wait(&p->slot_free, &p->mu);
            continue;
        }
        p->next++;
        struct slot *s = &p->ring[k % p->window];
        pthread_mutex_unlock(&p->mu);
        const struct work *w = &p->list[k];
        /* Freed here, not by the writer: a task's memory comes from the
         * worker's malloc arena, and the writer freeing it took that
         * arena's lock against the worker's own allocations. */
        if (s->state == SLOT_WRITTEN) {
            vat_task_clear(&s->task);
            vat_task_prints_release(&s->prints);
        }
        memset(s, 0, sizeof *s);
        s->tix = w->tix;
        s->tmpl = p->tmpl[w->tix];
        s->cfg = p->cfg[w->tix];
        vat_task_init(&s->task, s->tmpl, w->index, p->root);
        /* Its side, known before its draws (docs/determinism.md). */
        s->task.side = strcmp(vat_split_side(p->c, s->tmpl->name, w->index), "test") == 0
                           ? VAT_SPLIT_TEST
                           : VAT_SPLIT_TRAIN;
        slot_draw_from(p, s, 0);
        pthread_mutex_lock(&p->mu);
        s->state = SLOT_DONE;
        p->done++;
        if (p->done >= p->wake_at)
            pthread_cond_broadcast(&p->slot_done);
    }
    pthread_mutex_unlock(&p->mu);
    vat_dirs_keep_across(NULL);
    return NULL;
}

/* ---- progress ------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct progress {
    FILE *f;
    int tty;
    double start, last, every;
    int drawn; /* a live line is on the terminal */
};

static void progress_init(struct progress *pr, const struct vat_build_opts *o)
{
    memset(pr, 0, sizeof *pr);
    pr->f = o->progress;
    pr->tty = o->progress_tty;
    pr->every = pr->tty ? 0.2 : (o->progress_every > 0 ? o->progress_every : 5.0);
    pr->start = pr->last = now_s();
}

static void progress_line(struct progress *pr, size_t done, size_t n, int force)
{
    if (!pr->f)
        return;
    double t = now_s();
    if (!force && t - pr->last < pr->every)
        return;
    pr->last = t;
    double el = t - pr->start;
    double rate = el > 0 ? (double)done / el : 0;
    double eta = rate > 0 ? (double)(n - done) / rate : 0;
    char etas[32];
    if (rate > 0)
        snprintf(etas, sizeof etas, "%ldm%02lds", (long)eta / 60, (long)eta % 60);
    else
        snprintf(etas, sizeof etas, "?");
    if (pr->tty) {
        fprintf(pr->f, "\rvat: %zu/%zu tasks, %.1f tasks/s, ETA %s\033[K", done, n, rate, etas);
        pr->drawn = 1;
    } else {
        fprintf(pr->f, "vat: %zu/%zu tasks (%.0f%%), %.1f tasks/s, ETA %s\n", done, n,
                n ? 100.0 * (double)done / (double)n : 100.0, rate, etas);
    }
    fflush(pr->f);
}

static void progress_end(struct progress *pr, size_t n)
{
    if (pr->f && pr->tty) {
        progress_line(pr, n, n, 1);
        fputs("\n", pr->f);
    }
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
    {"date_window", 43},    {"dedupe_aggregate", 45}, {"dup_header", 21},
    {"filtered_total", 40}, {"grouped_count", 46},    {"grouped_mean", 40},
    {"grouped_sum", 37},    {"join_aggregate", 43},   {"pivot", 43},
    {"regex_amounts", 27},  {"regex_iso_dates", 26},  {"regex_order_ids", 23},
    {"sql_order_counts", 53}, {"sql_paid_revenue", 50}, {"threshold_flags", 41},
    {"top_n", 39},          {"unanswerable", 29},
};
#define ROW_KIB_MAX 55

double vat_build_memory_estimate(const struct vat_config *c, const char *only, int jobs,
                                 long *tasks)
{
    double bytes = 0, row_max = 0;
    long n = 0;
    /* Prompts inline up to inline_max_bytes of data and appear in six
     * places (experience, sft_examples, preference_pairs, grpo,
     * sft_reasoning, and the draw's own copy). */
    double extra = c->inline_max_bytes > 6000 ? 6.0 * (double)(c->inline_max_bytes - 6000) : 0;
    for (size_t i = 0; vat_registry[i]; i++) {
        const struct vat_template *tm = vat_registry[i];
        if (!only_has(only, tm->name))
            continue;
        const json_t *cfg = json_object_get(c->templates, tm->name);
        long count = (long)json_integer_value(json_object_get(cfg, "count"));
        long kib = ROW_KIB_MAX;
        for (size_t k = 0; k < sizeof row_kib / sizeof row_kib[0]; k++)
            if (strcmp(row_kib[k].name, tm->name) == 0)
                kib = row_kib[k].kib;
        double row = (double)kib * 1024 + extra;
        if (count > 0 && row > row_max)
            row_max = row;
        /* The list entry, and a program answer's normalised text (with
         * its hash-set cell) for regex and sql. */
        bool program = strcmp(tm->answer_kind, "regex") == 0 || strcmp(tm->answer_kind, "sql") == 0;
        bytes += (double)count * ((double)sizeof(struct work) + (program ? 512.0 : 0));
        n += count;
    }
    /* The window: each slot holds a task (prompt, gold, spec, replay) and
     * the writer one task's rows, at most the largest template's. */
    double window = (double)VAT_BUILD_WINDOW_PER_JOB * (jobs < 1 ? 1 : jobs);
    bytes += window * ((double)sizeof(struct slot) + 2.0 * row_max);
    /* The audit's fingerprints, held up to their budget: some 200 records
     * of 20 to 24 bytes a task, each with a 16-byte place in the sort. */
    double prints = (double)n * 8192.0;
    bytes += prints < (double)VAT_BUILD_PRINTS_BUDGET ? prints : (double)VAT_BUILD_PRINTS_BUDGET;
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

/* Program answers (regex, sql) must not repeat within a template.  The
 * templates make them distinct by construction (the question of task i is
 * element i of a permutation of the template's question space,
 * vat_task_question), so no task depends on another and a shard builds
 * its tasks alone; this check only proves it as the rows are written, and
 * fails the build, naming both tasks, where two gold programs still
 * coincide (a count past the question space).  The normalised golds seen
 * so far are kept per template in a hash set, each key followed by the
 * task id that first gave it ("norm\0id"). */
struct seen_set {
    char **v;
    size_t cap, n;
};

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The stored entry whose normalised program is k ("norm\0id"), or NULL. */
static const char *seen_find(const struct seen_set *ss, const char *k)
{
    if (!ss->cap)
        return NULL;
    for (size_t i = str_hash(k) & (ss->cap - 1); ss->v[i]; i = (i + 1) & (ss->cap - 1))
        if (strcmp(ss->v[i], k) == 0)
            return ss->v[i];
    return NULL;
}

static void seen_add(struct seen_set *ss, char *k) /* takes k */
{
    if (2 * (ss->n + 1) > ss->cap) {
        size_t cap = ss->cap ? 2 * ss->cap : 64;
        char **v = vat_xcalloc(cap, sizeof *v);
        for (size_t j = 0; j < ss->cap; j++)
            if (ss->v[j]) {
                size_t i = str_hash(ss->v[j]) & (cap - 1);
                while (v[i])
                    i = (i + 1) & (cap - 1);
                v[i] = ss->v[j];
            }
        free(ss->v);
        ss->v = v;
        ss->cap = cap;
    }
    size_t i = str_hash(k) & (ss->cap - 1);
    while (ss->v[i])
        i = (i + 1) & (ss->cap - 1);
    ss->v[i] = k;
    ss->n++;
}

static void seen_release(struct seen_set *ss)
{
    for (size_t i = 0; i < ss->cap; i++)
        free(ss->v[i]);
    free(ss->v);
}

static void check_program_unique(struct slot *s, struct seen_set *ss)
{
    /* An analytics task in its program form answers with a program too. */
    const char *kind = vat_task_answer_kind(&s->task);
    if (!s->admitted || (strcmp(kind, "regex") != 0 && strcmp(kind, "sql") != 0))
        return;
    char *norm = normalise_program(s->task.gold);
    const char *first = seen_find(ss, norm);
    if (first) {
        s->fatal = 1;
        snprintf(s->last_err, sizeof s->last_err,
                 "tasks '%s' and '%s' have the same gold program (is the count past the "
                 "template's question space, or its level's share of it?)",
                 first + strlen(first) + 1, s->task.id);
        free(norm);
        return;
    }
    size_t nl = strlen(norm), il = strlen(s->task.id);
    char *entry = vat_xrealloc(norm, nl + il + 2);
    memcpy(entry + nl + 1, s->task.id, il + 1);
    seen_add(ss, entry);
}

/* The tables, streamed: each of out/<table>/<split>.jsonl is written to a
 * temporary file as the rows come and renamed into place at the end. */
#define TABLE_IOBUF (256 << 10)
struct table_files {
    FILE *f[VAT_N_TABLES][VAT_N_SPLITS];
    char *iobuf[VAT_N_TABLES][VAT_N_SPLITS]; /* each file's stdio buffer */
    char *tmp[VAT_N_TABLES][VAT_N_SPLITS];
    char *dst[VAT_N_TABLES][VAT_N_SPLITS];
    /* each file's digest as it is written, for the manifest (vat_written_*) */
    struct vat_sha256 *sha[VAT_N_TABLES][VAT_N_SPLITS];
    const char *root;
};

static int table_files_open(struct table_files *tf, const char *root, struct vat_err *e)
{
    memset(tf, 0, sizeof *tf);
    tf->root = root;
    bool noted = vat_written_on(root);
    for (int i = 0; i < VAT_N_TABLES; i++)
        for (int s = 0; s < VAT_N_SPLITS; s++) {
            char rel[VAT_TABLE_REL_MAX];
            vat_table_rel(rel, i, s);
            if (vat_mkdirs_for(root, rel, e) != 0)
                return -1;
            tf->dst[i][s] = vat_path_join(root, rel);
            tf->tmp[i][s] = vat_xasprintf("%s.tmp", tf->dst[i][s]);
            tf->f[i][s] = fopen(tf->tmp[i][s], "wbx");
            if (!tf->f[i][s])
                return vat_err_set(e, "vat: cannot create '%s': %s", tf->tmp[i][s],
                                   strerror(errno));
            /* Written in large pieces, not stdio's 4 KiB (glibc takes a
             * size only with a buffer): a 100,000-task build writes
             * gigabytes of rows. */
            tf->iobuf[i][s] = vat_xmalloc(TABLE_IOBUF);
            setvbuf(tf->f[i][s], tf->iobuf[i][s], _IOFBF, TABLE_IOBUF);
            if (noted)
                tf->sha[i][s] = vat_sha256_begin();
        }
    return 0;
}

/* Moves the rows in tb's buffers to the files and empties the buffers. */
static int table_files_flush(struct table_files *tf, struct vat_tables *tb, struct vat_err *e)
{
    for (int i = 0; i < VAT_N_TABLES; i++)
        for (int s = 0; s < VAT_N_SPLITS; s++) {
            struct vat_buf *b = &tb->buf[i][s];
            if (b->len && fwrite(b->data, 1, b->len, tf->f[i][s]) != b->len)
                return vat_err_set(e, "vat: cannot write '%s': %s", tf->tmp[i][s],
                                   strerror(errno));
            if (b->len && tf->sha[i][s])
                vat_sha256_add(tf->sha[i][s], b->data, b->len);
            b->len = 0;
        }
    return 0;
}

/* Closes every file; with commit, renames each into place.  0 or -1. */
static int table_files_close(struct table_files *tf, int commit, struct vat_err *e)
{
    int rc = 0;
    for (int i = 0; i < VAT_N_TABLES; i++)
        for (int s = 0; s < VAT_N_SPLITS; s++) {
            if (tf->f[i][s] && fclose(tf->f[i][s]) != 0 && rc == 0 && commit)
                rc = vat_err_set(e, "vat: cannot write '%s': %s", tf->tmp[i][s],
                                 strerror(errno));
            if (commit && rc == 0 && rename(tf->tmp[i][s], tf->dst[i][s]) != 0)
                rc = vat_err_set(e, "vat: cannot rename '%s': %s", tf->tmp[i][s],
                                 strerror(errno));
            if (tf->sha[i][s]) {
                unsigned char d[32];
                vat_sha256_end(tf->sha[i][s], d);
                struct stat st;
                char rel[VAT_TABLE_REL_MAX];
                vat_table_rel(rel, i, s);
                if (commit && rc == 0 && lstat(tf->dst[i][s], &st) == 0 && S_ISREG(st.st_mode)) {
                    struct vat_file_id id;
                    vat_file_id_of(&st, &id);
                    vat_written_note(tf->root, rel, &id, d);
                }
            }
            if (tf->tmp[i][s] && (!commit || rc != 0))
                remove(tf->tmp[i][s]);
            free(tf->iobuf[i][s]);
            free(tf->tmp[i][s]);
            free(tf->dst[i][s]);
        }
    memset(tf, 0, sizeof *tf);
    return rc;
}

static _Thread_local const struct vat_template **sort_tmpl;

static int cmp_work_id(const void *a, const void *b)
{
    const struct work *x = a, *y = b;
    char ix[96], iy[96];
    snprintf(ix, sizeof ix, "%s-%05u", sort_tmpl[x->tix]->name, (unsigned)x->index);
    snprintf(iy, sizeof iy, "%s-%05u", sort_tmpl[y->tix]->name, (unsigned)y->index);
    return strcmp(ix, iy);
}

/* Every name of --only (comma-separated) is a template; 0, or -1 with e. */
static int only_names_known(const char *only, struct vat_err *e)
{
    /* every name, an empty one too ('', 'a,' or ','): none is a
     * template, so none builds an empty corpus */
    for (const char *p = only;;) {
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
    return 0;
}

/* Draws the n tasks of list on o->jobs threads and writes the admitted
 * ones' rows in list order (per and seen counted per template), stopping
 * at the first fatal task.  0, -2 for a fatal task, or -1 (e set). */
/* Waits until slot s, of list position w (of n), is drawn, showing the
 * progress meanwhile. */
static void wait_for_slot(struct pool *p, struct slot *s, size_t w, size_t n,
                          struct progress *pr)
{
    pthread_mutex_lock(&p->mu);
    /* Woken once a batch of draws is done, not after each: a wake-up
     * per task cost more than writing it.  The window holds a batch
     * many times over, so the draws can always reach it. */
    p->wake_at = w + VAT_BUILD_WAKE_BATCH < n ? w + VAT_BUILD_WAKE_BATCH : n;
    while (s->state != SLOT_DONE || w >= p->next) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += 200 * 1000 * 1000;
        if (dl.tv_nsec >= 1000000000) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&p->slot_done, &p->mu, &dl);
        size_t done = p->done;
        pthread_mutex_unlock(&p->mu);
        progress_line(pr, done, n, 0);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
}

static int draw_and_write(const struct vat_config *c, const struct vat_build_opts *o,
                          const char *root, const struct vat_template **tmpls,
                          const json_t **cfgs, struct work *list, size_t n,
                          struct vat_template_stats *per, struct seen_set *seen, size_t ntmpl,
                          struct vat_err *e)
{
    int rc = 0;
    sort_tmpl = tmpls;
    qsort(list, n, sizeof *list, cmp_work_id);
    (void)vat_checker_version("regex"); /* fill its static before threads */

    int jobs = o->jobs < 1 ? 1 : o->jobs;
    if ((size_t)jobs > n)
        jobs = n ? (int)n : 1;
    struct pool p = {.c = c, .o = o, .root = root, .tmpl = tmpls, .cfg = cfgs, .list = list,
                     .n = n, .window = VAT_BUILD_WINDOW_PER_JOB * (size_t)jobs};
    p.ring = vat_xcalloc(p.window, sizeof *p.ring);
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.slot_done, NULL);
    pthread_cond_init(&p.slot_free, NULL);

    struct table_files tf;
    int io_failed = table_files_open(&tf, root, e) != 0;
    /* What the audit compares across the split, of every admitted task,
     * sorted on disk beside the stage (a shard also writes it out). */
    struct vat_prints prints;
    {
        const char **names = vat_xcalloc(ntmpl ? ntmpl : 1, sizeof *names);
        for (size_t t = 0; t < ntmpl; t++)
            names[t] = tmpls[t]->name;
        vat_prints_init(&prints, root, VAT_BUILD_PRINTS_BUDGET, names, ntmpl);
        free(names);
    }
    struct vat_tables tb;
    memset(&tb, 0, sizeof tb);
    size_t fatal_at = (size_t)-1; /* list position of the fatal task */
    char fatal_msg[512] = "";

    struct progress pr;
    progress_init(&pr, o);
    pthread_t *th = vat_xcalloc((size_t)jobs, sizeof *th);
    for (int j = 0; j < jobs && n; j++)
        pthread_create(&th[j], NULL, worker, &p);

    /* The writer: slots in list order, as each completes. */
    for (size_t w = 0; w < n; w++) {
        struct slot *s = &p.ring[w % p.window];
        wait_for_slot(&p, s, w, n, &pr);

        struct vat_template_stats *pt = &per[s->tix];
        if (!s->fatal)
            check_program_unique(s, &seen[s->tix]);
        if (s->fatal) {
            /* Nothing of a failed build is kept, so nothing more is drawn:
             * the build stops at the first fatal task in list order (the
             * same one whatever --jobs), not after drawing every task (a
             * count past a template's question space once drew 80,000
             * tasks past its first repeat). */
            fatal_at = w;
            snprintf(fatal_msg, sizeof fatal_msg, "%s", s->last_err);
            pthread_mutex_lock(&p.mu);
            p.stop = true;
            pthread_cond_broadcast(&p.slot_free);
            pthread_mutex_unlock(&p.mu);
            break;
        }
        pt->redrawn += s->redraws;
        if (s->admitted && !s->fatal) {
            pt->admitted++;
            vat_tables_add_task(&tb, &s->task, &s->replay,
                                vat_split_side(c, s->tmpl->name, s->task.index));
            if (!io_failed && table_files_flush(&tf, &tb, e) != 0)
                io_failed = 1;
            if (!io_failed && vat_prints_add(&prints, &s->prints, e) != 0)
                io_failed = 1;
        } else {
            pt->rejected++;
            snprintf(pt->last_rejection, sizeof pt->last_rejection, "%s", s->last_err);
            /* A task that never admitted leaves no fixture behind. */
            remove_fixtures(&s->task);
        }
        pthread_mutex_lock(&p.mu);
        s->state = SLOT_WRITTEN;
        p.written = w + 1;
        pthread_cond_broadcast(&p.slot_free);
        pthread_mutex_unlock(&p.mu);
        progress_line(&pr, p.done, n, 0);
    }
    for (int j = 0; j < jobs && n; j++)
        pthread_join(th[j], NULL);
    free(th);
    for (size_t r = 0; r < p.window; r++)
        if (p.ring[r].state == SLOT_WRITTEN || p.ring[r].state == SLOT_DONE) {
            vat_task_clear(&p.ring[r].task);
            vat_task_prints_release(&p.ring[r].prints);
        }
    progress_end(&pr, n);
    vat_tables_release(&tb);
    for (size_t t = 0; t < ntmpl; t++)
        seen_release(&seen[t]);
    free(seen);

    /* The audit's cross-split checks on what was admitted: a corpus that
     * would fail them is not swapped in. */
    bool leaked = false;
    if (fatal_at == (size_t)-1 && !io_failed) {
        struct vat_audit_report leaks;
        vat_audit_init(&leaks, 1);
        if (vat_prints_finish(&prints, o->shards ? root : NULL, &leaks, e) != 0) {
            io_failed = 1;
        } else if (leaks.findings) {
            leaked = true;
            snprintf(fatal_msg, sizeof fatal_msg,
                     "%s: %s (%ld finding%s of the audit's cross-split checks in what was "
                     "admitted)",
                     vat_audit_kind_name(leaks.f[0].kind), leaks.f[0].detail, leaks.findings,
                     leaks.findings == 1 ? "" : "s");
        }
        vat_audit_release(&leaks);
    }
    vat_prints_release(&prints);

    if (fatal_at != (size_t)-1 || leaked) {
        table_files_close(&tf, 0, e);
        vat_err_set(e, "vat: build failed at task %zu of %zu (stopped there): %s", fatal_at + 1,
                    n, fatal_msg);
        rc = -2; /* a corpus problem, not an input error: exit 1 */
        goto out;
    }
    if (io_failed) {
        table_files_close(&tf, 0, e);
        rc = -1;
    } else if (table_files_close(&tf, 1, e) != 0) {
        rc = -1;
    }
out:
    free(p.ring);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.slot_done);
    pthread_cond_destroy(&p.slot_free);
    return rc;
}

/* The per-template summary table, and each template's last rejection. */
static void print_summary(FILE *out, const struct vat_template_stats *per, size_t ntmpl)
{
    fprintf(out, "%-22s %9s %9s %8s %8s\n", "template", "requested", "admitted",
            "redrawn", "rejected");
    long tot[4] = {0};
    for (size_t t = 0; t < ntmpl; t++) {
        fprintf(out, "%-22s %9ld %9ld %8ld %8ld\n", per[t].name, per[t].requested,
                per[t].admitted, per[t].redrawn, per[t].rejected);
        tot[0] += per[t].requested;
        tot[1] += per[t].admitted;
        tot[2] += per[t].redrawn;
        tot[3] += per[t].rejected;
    }
    fprintf(out, "%-22s %9ld %9ld %8ld %8ld\n", "total", tot[0], tot[1], tot[2],
            tot[3]);
    for (size_t t = 0; t < ntmpl; t++)
        if (per[t].rejected)
            vat_cli_linef(out, "vat: '%s' admitted %ld of %ld; last rejection: %s",
                          per[t].name, per[t].admitted, per[t].requested,
                          per[t].last_rejection);
}

int vat_build(const struct vat_config *c, const struct vat_build_opts *o,
              struct vat_build_stats *stats, struct vat_err *e)
{
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (o->only && only_names_known(o->only, e) != 0)
        return -1;

    long want = 0;
    double need = vat_build_memory_estimate(c, o->only, o->jobs, &want);
    if (o->shards > 1) { /* a shard holds about 1/N of the tasks */
        need /= o->shards;
        want = (want + o->shards - 1) / o->shards;
    }
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
    vat_written_begin(root);

    /* The templates in registry order, and the list of every task sorted
     * by task id: the order the rows are written in. */
    size_t n = 0, ntmpl = 0;
    for (size_t i = 0; vat_registry[i]; i++) {
        if (!only_has(o->only, vat_registry[i]->name))
            continue;
        const json_t *cfg = json_object_get(c->templates, vat_registry[i]->name);
        long count = (long)json_integer_value(json_object_get(cfg, "count"));
        for (long j = 0; j < count; j++)
            n += vat_shard_has(o, (uint32_t)j);
        ntmpl++;
    }
    struct vat_template_stats *per = vat_xcalloc(ntmpl ? ntmpl : 1, sizeof *per);
    const struct vat_template **tmpls = vat_xcalloc(ntmpl ? ntmpl : 1, sizeof *tmpls);
    const json_t **cfgs = vat_xcalloc(ntmpl ? ntmpl : 1, sizeof *cfgs);
    struct work *list = vat_xcalloc(n ? n : 1, sizeof *list);
    struct seen_set *seen = vat_xcalloc(ntmpl ? ntmpl : 1, sizeof *seen);
    size_t k = 0, ti = 0;
    int rc = 0;
    for (size_t i = 0; vat_registry[i]; i++) {
        const struct vat_template *tm = vat_registry[i];
        if (!only_has(o->only, tm->name))
            continue;
        const json_t *cfg = json_object_get(c->templates, tm->name);
        long count = (long)json_integer_value(json_object_get(cfg, "count"));
        per[ti].name = tm->name;
        per[ti].requested = 0;
        tmpls[ti] = tm;
        cfgs[ti] = cfg;
        for (long j = 0; j < count; j++) {
            if (!vat_shard_has(o, (uint32_t)j))
                continue;
            list[k++] = (struct work){(uint32_t)ti, (uint32_t)j};
            per[ti].requested++;
        }
        ti++;
    }
    rc = draw_and_write(c, o, root, tmpls, cfgs, list, n, per, seen, ntmpl, e);
    if (rc < 0)
        goto done;

    /* Per-template summary. */
    for (size_t t = 0; t < ntmpl; t++)
        if (per[t].rejected && rc == 0)
            rc = 1;
    if (o->summary)
        print_summary(o->summary, per, ntmpl);

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
            (o->shards && vat_shard_write(c, &staged, &st, e) != 0) ||
            vat_store_commit(&store, e) != 0)
            rc = -1;
    }
    vat_written_end();
    if (rc < 0)
        vat_store_abort(&store);
    else
        vat_store_close(&store);
    if (stats)
        *stats = st;
    else
        free(per);
    free(list);
    free(tmpls);
    free(cfgs);
    return rc;
}

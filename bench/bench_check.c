/* bench_check.c — checker throughput through the reward library, the cost
 * a user pays when vat's checkers serve as reward functions: for every
 * task of a built corpus, the gold answer is scored with vat_corpus_score
 * (include/libvat.h) on one thread, repeatedly, and checks per second are
 * reported per template beside a plain-Python peer of the same checks
 * (--pycheck, bench/pycheck.py: json, re and sqlite3 as a user would write
 * them, run in the same invocation on the same corpus), with the ratio and
 * the target vat holds itself to (5x value and regex, 2x SQL).  SQL
 * templates get four rows: `cold`, every check a distinct answer text (the
 * query is prepared and runs), beside the peer's SQL checks on the same
 * distinct texts (its --serve mode, in turns with vat: measure_cold; the
 * target is judged there); `repeated`, the gold text again and again
 * (served by the verdict memo after its first check), beside the peer's
 * own repeated gold; and, for reference, `sqlite-cold` and `sqlite-warm`
 * (measure_bare: plain SQLite, a connection per fixture, no sandbox).
 *
 * Also, when asked: the time to open a large corpus and score its first
 * answer (--big-root), a task-id lookup in it and in the default corpus,
 * and the time the Python package's Corpus.score adds to the C call on a
 * value task (--pyvat, the folder holding python/vat); and the memory of
 * a long run (--memory-root): every task's gold scored twice through one
 * handle, on one thread, with a cache budget of 16 MiB and of the default
 * 256 MiB, each in a fresh process (this program run again with
 * --memory-child), giving its peak RSS, checks per CPU second and the
 * most bytes its cache counted; then the same of every task's expert
 * transcript replayed twice through vat_episode_* (--episode-child).
 *
 * usage: vat-bench --root DIR [--seconds S] [--pycheck FILE]
 *                  [--big-root DIR] [--pyvat DIR --libvat FILE] [--only PREFIX]
 *                  [--memory-root DIR]
 *
 * --only times only the templates whose name starts with PREFIX. */
#define _GNU_SOURCE /* popen, pclose, getline */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "corpus.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* This process's CPU time: on a loaded machine the wall clock also counts
 * other processes' turns. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct tmpl {
    char name[64], kind[16];
    size_t n, cap;
    const char **id, **gold;
    double rate, py;
    double cold;    /* SQL: checks/s on distinct texts (0 for other kinds) */
    double py_cold; /* SQL: Python's checks/s on the same distinct texts */
    double bare_warm, bare_cold; /* SQL: plain SQLite's figures (measure_bare) */
};

static struct tmpl *tmpl_for(struct tmpl **list, size_t *n, const char *name, const char *kind)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i].name, name) == 0 && strcmp((*list)[i].kind, kind) == 0)
            return &(*list)[i];
    *list = vat_xrealloc(*list, (*n + 1) * sizeof **list);
    struct tmpl *t = &(*list)[(*n)++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->kind, sizeof t->kind, "%s", kind);
    return t;
}

static int tmpl_cmp(const void *a, const void *b)
{
    const struct tmpl *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->kind, y->kind);
}

/* Distinct answer texts for cold SQL checks: the gold with a trailing SQL
 * comment whose number never repeats in this process, so neither the
 * verdict memo (lib/corpus.c) nor a pooled statement cache can serve it;
 * the gate accepts a comment and the rows are the gold's (measure checks
 * every score is 1). */
static unsigned long cold_serial;

static const char *cold_text(const char *gold, char **buf, size_t *cap, size_t *len)
{
    size_t g = strlen(gold);
    if (*cap < g + 32) {
        *cap = g + 32;
        *buf = vat_xrealloc(*buf, *cap);
    }
    int k = snprintf(*buf, *cap, "%s\n-- %lu", gold, ++cold_serial);
    *len = (size_t)k;
    return *buf;
}

/* One untimed pass over t's golds: a task's first score builds its state
 * (spec, SQL fixtures and gold rows), as pycheck.py loads before it times. */
static void warm_up(vat_corpus *c, const struct tmpl *t)
{
    for (size_t x = 0; x < t->n; x++) {
        vat_result *r;
        if (vat_corpus_score(c, t->id[x], t->gold[x], strlen(t->gold[x]), VAT_EXTRACT_RAW, &r,
                             NULL) == 0)
            vat_result_free(r);
    }
}

/* Scores every gold of t for about `seconds` of this process's CPU time,
 * adding the checks made and the CPU seconds taken to *checks and *cpu.
 * cold: every check a distinct text (cold_text); else the gold text
 * itself, repeated (a memoized SQL verdict serves it after the first). */
static void measure_slice(vat_corpus *c, const struct tmpl *t, double seconds, bool cold,
                          long *checks, double *cpu)
{
    char *buf = NULL;
    size_t cap = 0;
    /* the CPU clock is a system call: read it every 64 checks or so, not
     * after every pass over a dozen sub-microsecond checks */
    size_t passes = t->n < 64 ? (64 + t->n - 1) / (t->n ? t->n : 1) : 1;
    double t0 = cpu_now(), t1 = t0;
    while (t1 - t0 < seconds) {
        for (size_t pass = 0; pass < passes; pass++) {
            for (size_t x = 0; x < t->n; x++) {
                vat_result *r;
                size_t len = strlen(t->gold[x]);
                const char *text = cold ? cold_text(t->gold[x], &buf, &cap, &len) : t->gold[x];
                if (vat_corpus_score(c, t->id[x], text, len, VAT_EXTRACT_RAW, &r, NULL) == 0) {
                    if (vat_result_score(r) != 1.0)
                        fprintf(stderr, "vat-bench: %sgold of %s scores %g (%s)\n",
                                cold ? "commented " : "", t->id[x], vat_result_score(r),
                                vat_result_code(r));
                    vat_result_free(r);
                }
                ++*checks;
            }
        }
        t1 = cpu_now();
    }
    free(buf);
    *cpu += t1 - t0;
}

/* Checks per CPU second over about `seconds`, after a warm-up pass. */
static double measure(vat_corpus *c, const struct tmpl *t, double seconds, bool cold)
{
    warm_up(c, t);
    long checks = 0;
    double cpu = 0;
    measure_slice(c, t, seconds, cold, &checks, &cpu);
    return cpu > 0 ? (double)checks / cpu : 0;
}

/* ---- a reference: plain SQLite ----------------------------------------------- */

/* What a straightforward C checker pays: the same query on the same
 * in-memory fixtures through a plain SQLite connection per fixture (no
 * sandbox, no authorizer, no limits, no gate, no comparison), every row
 * stepped and each value read as vat reads it.  warm: the statement
 * prepared once per fixture and reset (a warm statement cache, as
 * pycheck.py's repeated gold enjoys); cold: the distinct texts of the
 * cold rows, prepared and finalized per check.  In this process SQLite's
 * allocations still go through vat's counting allocator (installed before
 * main), uncounted here: a header per allocation.  Returns checks per CPU
 * second, or 0 when a task's fixtures are not plain SQLite files (an
 * analytics task's CSV, loaded through vat's loader). */
#define BARE_MAX_FIXTURES 16
struct bare_task {
    size_t n;
    sqlite3 *db[BARE_MAX_FIXTURES];
    sqlite3_stmt *st[BARE_MAX_FIXTURES];
};

static int bare_open(struct bare_task *b, vat_corpus *c, const char *root, const char *id,
                     const char *gold)
{
    memset(b, 0, sizeof *b);
    const json_t *row = vat_corpus_row(c, id);
    const char *sj = json_string_value(json_object_get(row, "spec_json"));
    json_t *spec = sj ? json_loads(sj, 0, NULL) : NULL;
    const json_t *fx = json_object_get(spec, "fixtures");
    int rc = json_is_array(fx) && json_array_size(fx) <= BARE_MAX_FIXTURES &&
                     !json_object_get(spec, "load")
                 ? 0
                 : -1;
    for (size_t i = 0; rc == 0 && i < json_array_size(fx); i++) {
        const char *rel = json_string_value(json_array_get(fx, i));
        char *data = NULL;
        size_t len = 0;
        struct vat_err e = {{0}};
        if (!rel || vat_read_file_beneath(root, rel, (size_t)1 << 30, &data, &len, &e) != 0 ||
            len < 100) {
            free(data);
            rc = -1;
            break;
        }
        unsigned char *img = sqlite3_malloc64(len);
        if (img) {
            memcpy(img, data, len);
            if (img[18] == 2)
                img[18] = 1;
            if (img[19] == 2)
                img[19] = 1;
        }
        free(data);
        sqlite3 *db = NULL;
        rc = img && sqlite3_open(":memory:", &db) == SQLITE_OK &&
                     sqlite3_deserialize(db, "main", img, (sqlite3_int64)len,
                                         (sqlite3_int64)len,
                                         SQLITE_DESERIALIZE_FREEONCLOSE |
                                             SQLITE_DESERIALIZE_READONLY) == SQLITE_OK &&
                     sqlite3_prepare_v2(db, gold, -1, &b->st[i], NULL) == SQLITE_OK
                 ? 0
                 : -1;
        if (!db)
            sqlite3_free(img);
        b->db[b->n++] = db;
    }
    json_decref(spec);
    return rc;
}

static void bare_close(struct bare_task *b)
{
    for (size_t i = 0; i < b->n; i++) {
        sqlite3_finalize(b->st[i]);
        sqlite3_close(b->db[i]);
    }
}

/* Steps st to its end, reading every value as vat's rows_take does. */
static long bare_rows(sqlite3_stmt *st)
{
    long cells = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int nc = sqlite3_column_count(st);
        for (int k = 0; k < nc; k++, cells++)
            switch (sqlite3_column_type(st, k)) {
            case SQLITE_INTEGER: cells += sqlite3_column_int64(st, k) & 1; break;
            case SQLITE_FLOAT: cells += sqlite3_column_double(st, k) > 0; break;
            case SQLITE_TEXT: cells += sqlite3_column_text(st, k) != NULL; break;
            case SQLITE_BLOB: cells += sqlite3_column_blob(st, k) != NULL; break;
            default: break;
            }
    }
    return cells;
}

static double measure_bare(vat_corpus *c, const struct tmpl *t, const char *root,
                           double seconds, bool cold)
{
    struct bare_task *b = vat_xcalloc(t->n ? t->n : 1, sizeof *b);
    bool ok = true;
    for (size_t x = 0; x < t->n; x++)
        if (bare_open(&b[x], c, root, t->id[x], t->gold[x]) != 0)
            ok = false;
    char *buf = NULL;
    size_t cap = 0;
    long checks = 0, cells = 0;
    size_t passes = t->n < 64 ? (64 + t->n - 1) / (t->n ? t->n : 1) : 1;
    double t0 = cpu_now(), t1 = t0;
    while (ok && t1 - t0 < seconds) {
        for (size_t pass = 0; pass < passes; pass++)
            for (size_t x = 0; x < t->n; x++, checks++)
                for (size_t i = 0; i < b[x].n; i++) {
                    if (!cold) {
                        cells += bare_rows(b[x].st[i]);
                        sqlite3_reset(b[x].st[i]);
                        continue;
                    }
                    size_t len;
                    const char *text = cold_text(t->gold[x], &buf, &cap, &len);
                    sqlite3_stmt *st = NULL;
                    if (sqlite3_prepare_v2(b[x].db[i], text, (int)len, &st, NULL) == SQLITE_OK)
                        cells += bare_rows(st);
                    sqlite3_finalize(st);
                }
        t1 = cpu_now();
    }
    for (size_t x = 0; x < t->n; x++)
        bare_close(&b[x]);
    free(b);
    free(buf);
    return ok && cells > 0 ? (double)checks / (t1 - t0) : 0;
}

/* ---- the Python peer ---------------------------------------------------------- */

/* Runs the peer on the corpus (`/usr/bin/python3 SCRIPT ROOT SECONDS`) and
 * stores each `template checker rate` line it prints in the matching
 * template's py.  The peer reads the corpus as built and times itself in
 * CPU seconds of its own process, as vat's side is timed: on a machine
 * shared with other work the wall clock counts their turns too.  Its own
 * agreement with vat's rollouts goes to standard error, shown as is. */
static void run_pycheck(const char *script, const char *root, double seconds,
                        struct tmpl *list, size_t n)
{
    char *cmd = vat_xasprintf("/usr/bin/python3 '%s' '%s' %g", script, root, seconds);
    fflush(stdout);
    FILE *p = popen(cmd, "r");
    free(cmd);
    if (!p)
        return;
    char line[512], name[128], kind[32];
    double rate;
    while (fgets(line, sizeof line, p))
        if (sscanf(line, "%127s %31s %lf", name, kind, &rate) == 3)
            for (size_t i = 0; i < n; i++)
                if (strcmp(list[i].name, name) == 0 && strcmp(list[i].kind, kind) == 0)
                    list[i].py = rate;
    if (pclose(p) != 0)
        fprintf(stderr, "vat-bench: %s did not finish cleanly: its figures may be missing\n",
                script);
}

/* ---- Python on the same distinct texts, in turns with vat -------------------- */

/* The peer's --serve mode (bench/pycheck.py --serve ROOT), a child that times a template's
 * cold SQL checks for the CPU seconds it is told and answers "CHECKS
 * SECONDS".  vat and it take turns in short slices, so a machine whose
 * speed drifts (a shared host) weighs on both sides alike. */
struct pyco {
    pid_t pid;
    FILE *to, *from;
};

static int pyco_start(struct pyco *p, const char *script, const char *root)
{
    int in[2], out[2];
    memset(p, 0, sizeof *p);
    if (pipe(in) != 0)
        return -1;
    if (pipe(out) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execl("/usr/bin/python3", "python3", script, "--serve", root, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    if (pid < 0) {
        close(in[1]);
        close(out[0]);
        return -1;
    }
    p->pid = pid;
    p->to = fdopen(in[1], "w");
    p->from = fdopen(out[0], "r");
    char line[64];
    if (!p->to || !p->from || !fgets(line, sizeof line, p->from) ||
        strncmp(line, "ready", 5) != 0)
        return -1;
    return 0;
}

static int pyco_slice(struct pyco *p, const char *tmpl, double seconds, long *checks,
                      double *cpu)
{
    char line[128];
    long k;
    double s;
    if (fprintf(p->to, "%s %g\n", tmpl, seconds) < 0 || fflush(p->to) != 0 ||
        !fgets(line, sizeof line, p->from) || sscanf(line, "%ld %lf", &k, &s) != 2)
        return -1;
    *checks += k;
    *cpu += s;
    return 0;
}

static void pyco_stop(struct pyco *p)
{
    if (p->to)
        fclose(p->to);
    if (p->from)
        fclose(p->from);
    if (p->pid > 0)
        waitpid(p->pid, NULL, 0);
    memset(p, 0, sizeof *p);
}

/* A SQL template's cold rows: vat and, when co runs, Python on the same
 * distinct texts, in ten turns each of a tenth of `seconds`. */
#define COLD_TURNS 10
static void measure_cold(vat_corpus *c, struct tmpl *t, double seconds, struct pyco *co)
{
    warm_up(c, t);
    long checks = 0, py_checks = 0;
    double cpu = 0, py_cpu = 0;
    bool py = co != NULL;
    for (int turn = 0; turn < COLD_TURNS; turn++) {
        measure_slice(c, t, seconds / COLD_TURNS, true, &checks, &cpu);
        if (py && pyco_slice(co, t->name, seconds / COLD_TURNS, &py_checks, &py_cpu) != 0)
            py = false;
    }
    t->cold = cpu > 0 ? (double)checks / cpu : 0;
    t->py_cold = py && py_cpu > 0 ? (double)py_checks / py_cpu : 0;
}

/* Mean time of one has_task lookup over every id of c, in ns. */
/* ---- the memory of a long run ----------------------------------------------- */

/* --memory-child ROOT BYTES: scores every task's gold twice through one
 * handle with a cache of BYTES and prints "PEAK_KB CHECKS CPU_S
 * CACHE_PEAK TASKS NOT_ONE".  The golds are read first through a handle
 * of their own, closed before the measured one opens. */
static int memory_child(const char *root, size_t bytes)
{
    vat_corpus *g;
    vat_error err;
    if (vat_corpus_open(&g, root, &err) != 0) {
        fprintf(stderr, "vat-bench: %s\n", err.message);
        return 2;
    }
    size_t n = vat_corpus_task_count(g);
    char **id = vat_xcalloc(n ? n : 1, sizeof *id), **gold = vat_xcalloc(n ? n : 1, sizeof *gold);
    for (size_t i = 0; i < n; i++) {
        id[i] = vat_xstrdup(vat_corpus_task_id(g, i));
        const char *a = vat_corpus_rollout_answer(g, id[i], "gold");
        gold[i] = vat_xstrdup(a ? a : "");
    }
    vat_corpus_close(g);
    vat_open_options o = VAT_OPEN_OPTIONS_INIT;
    o.cache_bytes = bytes;
    vat_corpus *c;
    if (vat_corpus_open_opts(&c, root, &o, &err) != 0) {
        fprintf(stderr, "vat-bench: %s\n", err.message);
        return 2;
    }
    long checks = 0, not_one = 0;
    double t0 = cpu_now();
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            vat_result *r;
            if (vat_corpus_score(c, id[i], gold[i], strlen(gold[i]), VAT_EXTRACT_RAW, &r, NULL) ==
                0) {
                not_one += vat_result_score(r) != 1.0;
                checks++;
                vat_result_free(r);
            }
        }
    double cpu = cpu_now() - t0;
    struct vat_cache_stats st;
    vat_corpus_cache_stats(c, &st);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%ld %ld %.3f %zu %zu %ld\n", ru.ru_maxrss, checks, cpu, st.peak, n, not_one);
    vat_corpus_close(c);
    for (size_t i = 0; i < n; i++) {
        free(id[i]);
        free(gold[i]);
    }
    free(id);
    free(gold);
    return 0;
}

/* One task's expert transcript: its tool calls in order (the env
 * table's completion column). */
struct transcript {
    char *id;
    size_t n;
    char **name, **args;
};

/* The transcripts of every row of the corpus's env table; *n of them. */
static struct transcript *transcripts_read(const char *root, size_t *n)
{
    struct transcript *t = NULL;
    size_t cap = 0;
    *n = 0;
    for (int s = 0; s < 2; s++) {
        char *path = vat_xasprintf("%s/out/env/%s.jsonl", root, s ? "test" : "train");
        FILE *f = fopen(path, "r");
        free(path);
        char *line = NULL;
        size_t lcap = 0;
        ssize_t len;
        while (f && (len = getline(&line, &lcap, f)) > 0) {
            json_t *row = json_loadb(line, (size_t)len, 0, NULL);
            const char *id = json_string_value(json_object_get(row, "task_id"));
            if (!id) {
                json_decref(row);
                continue;
            }
            if (*n == cap) {
                cap = cap ? 2 * cap : 1024;
                t = vat_xrealloc(t, cap * sizeof *t);
            }
            struct transcript *x = &t[(*n)++];
            memset(x, 0, sizeof *x);
            x->id = vat_xstrdup(id);
            size_t i;
            json_t *m;
            json_array_foreach(json_object_get(row, "completion"), i, m) {
                const json_t *fn =
                    json_object_get(json_array_get(json_object_get(m, "tool_calls"), 0), "function");
                const char *name = json_string_value(json_object_get(fn, "name"));
                const char *args = json_string_value(json_object_get(fn, "arguments"));
                if (!name || !args)
                    continue;
                x->name = vat_xrealloc(x->name, (x->n + 1) * sizeof *x->name);
                x->args = vat_xrealloc(x->args, (x->n + 1) * sizeof *x->args);
                x->name[x->n] = vat_xstrdup(name);
                x->args[x->n++] = vat_xstrdup(args);
            }
            json_decref(row);
        }
        free(line);
        if (f)
            fclose(f);
    }
    return t;
}

/* --episode-child ROOT BYTES: replays every task's expert transcript
 * twice through one handle with a cache of BYTES (vat_episode_*) and
 * prints "PEAK_KB CALLS CPU_S CACHE_PEAK TASKS NOT_ONE".  The transcripts
 * are read before the handle opens. */
static int episode_child(const char *root, size_t bytes)
{
    size_t n;
    struct transcript *t = transcripts_read(root, &n);
    vat_open_options o = VAT_OPEN_OPTIONS_INIT;
    o.cache_bytes = bytes;
    vat_corpus *c;
    vat_error err;
    if (vat_corpus_open_opts(&c, root, &o, &err) != 0) {
        fprintf(stderr, "vat-bench: %s\n", err.message);
        return 2;
    }
    long calls = 0, not_one = 0;
    double t0 = cpu_now();
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            vat_episode *ep;
            if (vat_episode_open(c, t[i].id, &ep, &err) != 0) {
                not_one++;
                continue;
            }
            for (size_t k = 0; k < t[i].n; k++, calls++)
                vat_episode_step(ep, t[i].name[k], t[i].args[k], strlen(t[i].args[k]), &err);
            not_one += vat_episode_reward(ep) != 1.0;
            vat_episode_close(ep);
        }
    double cpu = cpu_now() - t0;
    struct vat_cache_stats st;
    vat_corpus_cache_stats(c, &st);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%ld %ld %.3f %zu %zu %ld\n", ru.ru_maxrss, calls, cpu, st.peak, n, not_one);
    vat_corpus_close(c);
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < t[i].n; k++) {
            free(t[i].name[k]);
            free(t[i].args[k]);
        }
        free(t[i].name);
        free(t[i].args);
        free(t[i].id);
    }
    free(t);
    return 0;
}

/* Runs memory_child, then episode_child, in a fresh process for each
 * budget and prints a line each. */
static void measure_memory(const char *root)
{
    static const size_t budgets[] = {(size_t)16 << 20, VAT_CACHE_DEFAULT_BYTES};
    printf("memory: every task's gold scored twice through one handle, one thread, each budget "
           "in a fresh process (peak RSS of the process; cache = the most bytes the cache "
           "counted)\n");
    for (size_t k = 0; k < 2 * sizeof budgets / sizeof budgets[0]; k++) {
        bool episodes = k >= sizeof budgets / sizeof budgets[0];
        size_t budget = budgets[k % (sizeof budgets / sizeof budgets[0])];
        if (episodes && budget == budgets[0])
            printf("memory: every task's expert transcript replayed twice through one handle "
                   "(vat_episode_*), one thread, each budget in a fresh process\n");
        char *cmd = vat_xasprintf("'/proc/%ld/exe' --%s-child '%s' %zu", (long)getpid(),
                                  episodes ? "episode" : "memory", root, budget);
        FILE *p = popen(cmd, "r");
        free(cmd);
        long kb = 0, checks = 0, not_one = 0;
        double cpu = 0;
        size_t peak = 0, tasks = 0;
        int got = p ? fscanf(p, "%ld %ld %lf %zu %zu %ld", &kb, &checks, &cpu, &peak, &tasks,
                             &not_one)
                    : 0;
        if (p)
            pclose(p);
        if (got != 6 || cpu <= 0) {
            printf("memory: the %s run with a %zu MiB cache failed\n",
                   episodes ? "episode" : "scoring", budget >> 20);
            continue;
        }
        printf("memory: cache %4zu MiB: %zu tasks x 2, peak RSS %.1f MB, %.0f %s/s, cache "
               "at most %.1f MiB%s\n",
               budget >> 20, tasks, (double)kb / 1024.0, (double)checks / cpu,
               episodes ? "tool calls" : "checks", (double)peak / 1048576.0,
               not_one ? (episodes ? " (some transcripts did not score 1: MISSED)"
                                   : " (some golds did not score 1: MISSED)")
                       : "");
    }
}

static double lookup_ns(vat_corpus *c)
{
    size_t n = vat_corpus_task_count(c);
    long hits = 0, rounds = 0;
    double t0 = now(), t1 = t0;
    while (t1 - t0 < 0.2) {
        for (size_t i = 0; i < n; i++)
            hits += vat_corpus_has_task(c, vat_corpus_task_id(c, i));
        rounds++;
        t1 = now();
    }
    return hits ? (t1 - t0) * 1e9 / (double)(rounds * (long)n) : 0;
}

/* The corpus at big (10,000 tasks): its opening and first score, and a
 * task id lookup in it. */
static void bench_big(const char *big)
{
    vat_error err;
    /* The first task's gold, read through a handle of its own before
     * the clock starts: the timed handle does only what a user's does
     * (its first score reads the rollouts for the task's trap). */
    char *gold = NULL, *id = NULL;
    vat_corpus *g;
    if (vat_corpus_open(&g, big, &err) == 0) {
        const char *gid = vat_corpus_task_id(g, 0);
        const char *ga = gid ? vat_corpus_rollout_answer(g, gid, "gold") : NULL;
        id = gid ? vat_xstrdup(gid) : NULL;
        gold = ga ? vat_xstrdup(ga) : NULL;
        vat_corpus_close(g);
    }
    double t0 = now(), c0 = cpu_now();
    vat_corpus *b;
    if (!id || vat_corpus_open(&b, big, &err) != 0) {
        fprintf(stderr, "vat-bench: %s\n", id ? err.message : "no task in the big corpus");
    } else {
        double t1 = now(), c1 = cpu_now();
        vat_result *r = NULL;
        double t2 = now(), c2 = cpu_now();
        if (gold)
            vat_corpus_score(b, id, gold, strlen(gold), VAT_EXTRACT_RAW, &r, NULL);
        double t3 = now(), c3 = cpu_now();
        double wall = t1 - t0 + t3 - t2, cpu = c1 - c0 + c3 - c2;
        printf("open: %zu tasks in %.1f ms, first score (%s, %s) %.1f ms: open+first score "
               "%.1f ms wall, %.1f ms CPU (target 300 ms)%s\n",
               vat_corpus_size(b), (t1 - t0) * 1e3, id, r ? vat_result_code(r) : "-",
               (t3 - t2) * 1e3, wall * 1e3, cpu * 1e3, wall > 0.3 ? " MISSED" : "");
        printf("lookup: %.0f ns per task id in the corpus of %zu tasks\n", lookup_ns(b),
               vat_corpus_size(b));
        vat_result_free(r);
        vat_corpus_close(b);
    }
    free(id);
    free(gold);
}

/* What the Python package adds to a call: the first value task's gold
 * scored through vat.Corpus and through the C call, in CPU time. */
static void bench_python(vat_corpus *c, const char *root, const struct tmpl *list, size_t nt,
                         const char *pyvat, const char *libvat)
{
    /* The first value task's gold, through Python and through C. */
    const struct tmpl *v = NULL;
    for (size_t k = 0; k < nt && !v; k++)
        if (strcmp(list[k].kind, "value") == 0)
            v = &list[k];
    if (v) {
        /* CPU time on both sides: the figure is what the call costs */
        long n = 0;
        double t0 = cpu_now(), t1 = t0;
        while (t1 - t0 < 0.5) {
            vat_result *r;
            vat_corpus_score(c, v->id[0], v->gold[0], strlen(v->gold[0]), VAT_EXTRACT_RAW,
                             &r, NULL);
            vat_result_free(r);
            n++;
            t1 = cpu_now();
        }
        double c_us = (t1 - t0) * 1e6 / (double)n;
        /* the id and the answer travel in the environment, unquoted */
        setenv("VAT_BENCH_ROOT", root, 1);
        setenv("VAT_BENCH_TASK", v->id[0], 1);
        setenv("VAT_BENCH_ANSWER", v->gold[0], 1);
        char *cmd = vat_xasprintf(
            "PYTHONPATH='%s' VAT_LIBRARY='%s' /usr/bin/python3 -c '"
            "import os, time, vat\n"
            "e = os.environ\n"
            "c = vat.Corpus(e[\"VAT_BENCH_ROOT\"])\n"
            "t, a = e[\"VAT_BENCH_TASK\"], e[\"VAT_BENCH_ANSWER\"]\n"
            "c.score(t, a, extract=\"raw\")\n"
            "n, t0 = 0, time.process_time()\n"
            "while time.process_time() - t0 < 0.5:\n"
            "    c.score(t, a, extract=\"raw\"); n += 1\n"
            "print((time.process_time() - t0) * 1e6 / n)'",
            pyvat, libvat);
        FILE *p = popen(cmd, "r");
        free(cmd);
        double py_us = -1;
        if (p) {
            if (fscanf(p, "%lf", &py_us) != 1)
                py_us = -1;
            pclose(p);
        }
        if (py_us > 0)
            printf("python: Corpus.score %.2f us CPU, the C call %.2f us: %.2f us added "
                   "(target 20 us)%s\n",
                   py_us, c_us, py_us - c_us, py_us - c_us > 20 ? " MISSED" : "");
        else
            printf("python: the vat package at '%s' did not run\n", pyvat);
    }
}

/* One line per template and kind of answer: checks per second beside the
 * Python peer's; the number of judged rows that missed their target. */
static int print_rates(const struct tmpl *list, size_t nt)
{
    int missed = 0;
    for (size_t k = 0; k < nt; k++) {
        const struct tmpl *t = &list[k];
        bool sql = strcmp(t->kind, "sql") == 0;
        double target = sql ? 2.0 : 5.0;
        static const char *const sql_rows[] = {"cold", "repeated", "sqlite-cold", "sqlite-warm"};
        for (int row = 0; row < (sql ? 4 : 1); row++) {
            /* SQL: judged on the cold row, against Python on the same texts */
            const char *ans = sql ? sql_rows[row] : "repeated";
            double rate = !sql ? t->rate
                          : row == 0 ? t->cold
                          : row == 1 ? t->rate
                          : row == 2 ? t->bare_cold
                                     : t->bare_warm;
            double py = sql && row % 2 == 0 ? t->py_cold : t->py;
            bool judged = !sql || row == 0;
            if (rate <= 0)
                continue;
            if (py > 0) {
                double ratio = rate / py;
                missed += judged && ratio < target;
                printf("%-24s %-8s %-11s %6zu %12.0f %10.1f %12.0f %7.1fx %5.0fx%s\n", t->name,
                       t->kind, ans, t->n, rate, 1e6 / rate, py, ratio, target,
                       !judged ? row >= 2 ? " (reference)" : " (not judged)"
                       : ratio < target ? " MISSED"
                                        : "");
            } else {
                printf("%-24s %-8s %-11s %6zu %12.0f %10.1f %12s %8s %7s\n", t->name, t->kind,
                       ans, t->n, rate, 1e6 / rate, "-", "-", "-");
            }
        }
    }
    return missed;
}

int main(int argc, char **argv)
{
    const char *root = NULL, *pycheck = NULL, *big = NULL, *pyvat = NULL,
               *libvat = NULL;
    const char *only = NULL; /* a template-name prefix: time only those */
    const char *memory_root = NULL;
    double seconds = 1.0;
    if (argc == 4 && strcmp(argv[1], "--memory-child") == 0)
        return memory_child(argv[2], (size_t)strtoull(argv[3], NULL, 10));
    if (argc == 4 && strcmp(argv[1], "--episode-child") == 0)
        return episode_child(argv[2], (size_t)strtoull(argv[3], NULL, 10));
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--root") == 0 && i + 1 < argc)
            root = argv[++i];
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--pycheck") == 0 && i + 1 < argc)
            pycheck = argv[++i];
        else if (strcmp(argv[i], "--big-root") == 0 && i + 1 < argc)
            big = argv[++i];
        else if (strcmp(argv[i], "--pyvat") == 0 && i + 1 < argc)
            pyvat = argv[++i];
        else if (strcmp(argv[i], "--libvat") == 0 && i + 1 < argc)
            libvat = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--memory-root") == 0 && i + 1 < argc)
            memory_root = argv[++i];
        else
            root = NULL, seconds = 0, i = argc;
    }
    if (!root || seconds <= 0) {
        fprintf(stderr, "usage: vat-bench --root DIR [--seconds S] [--pycheck FILE] "
                        "[--big-root DIR] [--pyvat DIR --libvat FILE] [--only PREFIX]\n"
                        "                 [--memory-root DIR]\n");
        return 2;
    }
    vat_corpus *c;
    vat_error err;
    if (vat_corpus_open(&c, root, &err) != 0) {
        fprintf(stderr, "vat-bench: %s\n", err.message);
        return 2;
    }
    struct tmpl *list = NULL;
    size_t nt = 0;
    for (size_t i = 0; i < vat_corpus_task_count(c); i++) {
        const char *id = vat_corpus_task_id(c, i);
        const json_t *row = vat_corpus_row(c, id);
        const char *name = json_string_value(json_object_get(row, "template"));
        const char *kind = json_string_value(json_object_get(row, "checker"));
        const char *gold = vat_corpus_rollout_answer(c, id, "gold");
        if (!name || !kind || !gold || (only && strncmp(name, only, strlen(only)) != 0))
            continue;
        struct tmpl *t = tmpl_for(&list, &nt, name, kind);
        if (t->n == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 16;
            t->id = vat_xrealloc(t->id, t->cap * sizeof *t->id);
            t->gold = vat_xrealloc(t->gold, t->cap * sizeof *t->gold);
        }
        t->id[t->n] = id;
        t->gold[t->n++] = gold;
    }
    qsort(list, nt, sizeof *list, tmpl_cmp);
    bool with_pycheck = pycheck && access(pycheck, R_OK) == 0;
    if (pycheck && !with_pycheck)
        fprintf(stderr, "vat-bench: no Python peer at '%s': vat's figures only\n", pycheck);
    struct pyco co;
    bool co_on = with_pycheck && pyco_start(&co, pycheck, root) == 0;
    if (with_pycheck && !co_on)
        fprintf(stderr, "vat-bench: %s --serve did not start\n", pycheck);
    /* vat's repeated answers, then (all on one core) the peer's; SQL's
     * cold answers in turns with the peer's on the same texts */
    for (size_t k = 0; k < nt; k++) {
        list[k].rate = measure(c, &list[k], seconds, false);
        if (strcmp(list[k].kind, "sql") == 0) {
            measure_cold(c, &list[k], seconds, co_on ? &co : NULL);
            list[k].bare_cold = measure_bare(c, &list[k], root, seconds, true);
            list[k].bare_warm = measure_bare(c, &list[k], root, seconds, false);
        }
    }
    if (co_on)
        pyco_stop(&co);
    if (with_pycheck)
        run_pycheck(pycheck, root, seconds, list, nt);
    printf("vat-bench: libvat %s, one thread, %ld cores online; gold answers, %g CPU s per "
           "template\n",
           vat_version(), sysconf(_SC_NPROCESSORS_ONLN), seconds);
    printf("answers: repeated = the gold text scored again and again (an SQL verdict is then "
           "served by the verdict memo; python/s is the Python peer's, sqlite3's statement "
           "cache serving its text); cold = SQL only, every check a distinct text (the gold "
           "with a trailing '-- n' comment), so the query is prepared and runs (python/s: the "
           "peer's SQL checks on the same distinct texts, in turns with vat); "
           "sqlite-cold and sqlite-warm = for reference, the same texts through plain SQLite in "
           "C, a connection per fixture on the same in-memory fixtures, no sandbox, no "
           "comparison (warm: prepared once per fixture; vat's cold row serves a task's "
           "fixtures as one set and prepares once per check)\n");
    printf("%-24s %-8s %-11s %6s %12s %10s %12s %8s %7s\n", "template", "checker", "answers",
           "tasks", "checks/s", "us/check", "python/s", "ratio", "target");
    int missed = print_rates(list, nt);
    if (pycheck)
        printf("targets missed: %d of %zu templates (value and regex on repeated answers; SQL "
               "on cold answers against Python on the same texts; the other SQL rows not "
               "judged)\n",
               missed, nt);
    printf("lookup: %.0f ns per task id in the corpus of %zu tasks\n", lookup_ns(c),
           vat_corpus_task_count(c));

    if (big)
        bench_big(big);

    if (pyvat && libvat)
        bench_python(c, root, list, nt, pyvat, libvat);
    if (memory_root) {
        fflush(stdout);
        measure_memory(memory_root);
    }
    for (size_t k = 0; k < nt; k++) {
        free(list[k].id);
        free(list[k].gold);
    }
    free(list);
    vat_corpus_close(c);
    return 0;
}

/* host_sqlite_first.c — libvat loaded by a host that uses SQLite itself
 * (include/libvat.h, "SQLite's allocator").  Not linked with libvat: it
 * loads the shared library with dlopen, as a Python or C host would.
 *
 *   host_sqlite_first LIBVAT VAT SEEDS first   the host opens a connection
 *       before loading libvat: SQLite refuses the allocator, so
 *       vat_sqlite_counting() and vat_init() are 0, and the gold answers
 *       of an SQL template's corpus (built by VAT from SEEDS) still score
 *       1, bounded by the process-wide heap net;
 *   host_sqlite_first LIBVAT VAT SEEDS later   libvat is loaded first: the
 *       allocator is installed (both 1), the host's own connection works
 *       with SQLite's memory statistics off (sqlite3_memory_used() 0), and
 *       the gold answers score 1.
 * Exits 0 when all holds, 1 (saying what did not) otherwise. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "libvat.h"

static int fail(const char *what)
{
    fprintf(stderr, "host_sqlite_first: %s\n", what);
    return 1;
}

/* The host's own use of SQLite: a table, a row, a query. */
static int host_query(void)
{
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK)
        return -1;
    int rc = sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (42); SELECT x FROM t",
                          NULL, NULL, NULL);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

/* The libvat calls this host makes, found with dlsym. */
struct api {
    int (*counting)(void);
    int (*init)(void);
    int (*open)(vat_corpus **, const char *, vat_error *);
    int (*score)(vat_corpus *, const char *, const char *, size_t, vat_extract_mode, vat_result **,
                 vat_error *);
    double (*result_score)(const vat_result *);
    void (*result_free)(vat_result *);
    void (*close)(vat_corpus *);
};

static bool api_load(void *lib, struct api *a)
{
    *(void **)&a->counting = dlsym(lib, "vat_sqlite_counting");
    *(void **)&a->init = dlsym(lib, "vat_init");
    *(void **)&a->open = dlsym(lib, "vat_corpus_open");
    *(void **)&a->score = dlsym(lib, "vat_corpus_score");
    *(void **)&a->result_score = dlsym(lib, "vat_result_score");
    *(void **)&a->result_free = dlsym(lib, "vat_result_free");
    *(void **)&a->close = dlsym(lib, "vat_corpus_close");
    return a->counting && a->init && a->open && a->score && a->result_score && a->result_free &&
           a->close;
}

/* Scores every gold rollout of the corpus at root; the number scored, or
 * -1 when one does not score 1. */
static long score_golds(const struct api *a, const char *root)
{
    vat_corpus *c;
    vat_error err;
    if (a->open(&c, root, &err) != 0) {
        fprintf(stderr, "host_sqlite_first: %s\n", err.message);
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/out/rollouts/train.jsonl", root);
    FILE *f = fopen(path, "r");
    long n = 0;
    char *line = NULL;
    size_t cap = 0;
    while (f && n >= 0 && getline(&line, &cap, f) > 0) {
        json_t *row = json_loads(line, 0, NULL);
        const char *role = json_string_value(json_object_get(row, "role"));
        const char *id = json_string_value(json_object_get(row, "task_id"));
        const char *ans = json_string_value(json_object_get(row, "answer"));
        if (role && id && ans && strcmp(role, "gold") == 0) {
            vat_result *r = NULL;
            if (a->score(c, id, ans, strlen(ans), VAT_EXTRACT_RAW, &r, &err) != 0 ||
                a->result_score(r) != 1.0) {
                fprintf(stderr, "host_sqlite_first: gold of '%s' does not score 1\n", id);
                n = -1;
            } else {
                n++;
            }
            a->result_free(r);
        }
        json_decref(row);
    }
    free(line);
    if (f)
        fclose(f);
    a->close(c);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 5 || (strcmp(argv[4], "first") != 0 && strcmp(argv[4], "later") != 0))
        return fail("usage: host_sqlite_first LIBVAT VAT SEEDS first|later");
    bool first = strcmp(argv[4], "first") == 0;
    char root[] = "/tmp/vat-host-sqlite-XXXXXX";
    if (!mkdtemp(root))
        return fail("cannot make a scratch folder");
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "'%s' build --config '%s' --only sql_paid_revenue --root '%s' >/dev/null 2>&1",
             argv[2], argv[3], root);
    if (system(cmd) != 0)
        return fail("vat build failed");
    if (first && host_query() != 0)
        return fail("the host's own query failed before libvat was loaded");
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return fail(dlerror());
    struct api a;
    if (!api_load(lib, &a))
        return fail("libvat lacks vat_sqlite_counting, vat_init or a scoring call");
    int want = first ? 0 : 1;
    if (a.counting() != want || a.init() != want || a.counting() != want)
        return fail(first ? "the allocator counts although SQLite had started"
                          : "the allocator is not installed although SQLite had not started");
    if (!first) {
        if (host_query() != 0)
            return fail("the host's own query failed under libvat's allocator");
        if (sqlite3_memory_used() != 0)
            return fail("SQLite's memory statistics are on under libvat's allocator");
    }
    long n = score_golds(&a, root);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "host_sqlite_first: could not remove '%s'\n", root);
    if (n <= 0)
        return fail("the gold answers do not all score 1 (or there are none)");
    printf("host_sqlite_first %s: allocator %s, %ld gold SQL answers score 1\n", argv[4],
           want ? "installed" : "refused", n);
    /* libvat stays loaded, as a host keeps it: what it holds for the
     * process (SHA-256's digest method, the sandbox VFS) stays reachable */
    return 0;
}

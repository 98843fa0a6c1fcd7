/* test_episode.c — tool-use episodes (include/libvat.h vat_episode_*) over
 * a corpus built in-process with every kind of main fixture (CSV in both
 * answer forms, workbooks, SQLite databases, regex example lines, the
 * probes): every expert transcript of the env table replays to the same
 * observation bytes and reward 1.0; every task's trap submitted scores
 * below 1.0; the same calls give the same bytes from 8 threads at once;
 * no call writes (the fixtures' bytes and the tree's files are unchanged
 * after every write, ATTACH and pragma an agent can send), attaches, or
 * reads a held-out variant or case (an env row pointed at a variant is
 * refused; held-out lines never appear in an observation); every bound of
 * docs/limits.md gives its observation or ends the episode with
 * episode_limit; a bad call is an observation; a corpus without its env
 * table, or with a changed one, is an error value. */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "build.h"
#include "config.h"
#include "corpus.h"
#include "episode.h"
#include "libvat.h"
#include "tables.h"
#include "testutil.h"
#include "vat.h"

/* The inline cap shows the threshold_flags files whole, so they are asked
 * as values (a value prompt shows every row): the expert reads a result
 * longer than one observation page by page. */
static const char config_text[] = "[corpus]\nmaster_seed = 4646\ntest_fraction = 0.25\n"
                                  "inline_max_bytes = 20000\n"
                                  "[templates.grouped_sum]\ncount = 8\n"
                                  "[templates.join_aggregate]\ncount = 8\n"
                                  "[templates.pivot]\ncount = 4\n"
                                  "[templates.regex_iso_dates]\ncount = 4\n"
                                  "[templates.sql_order_counts]\ncount = 3\n"
                                  "[templates.dup_header]\ncount = 8\n"
                                  "[templates.unanswerable]\ncount = 8\n"
                                  /* results longer than one observation */
                                  "[templates.threshold_flags]\ncount = 3\nrows_min = 140\n"
                                  "rows_max = 150\nanswer_form = \"value\"\n";

struct corpus {
    char *root;
    json_t *env;       /* task_id -> env row */
    json_t *rollouts;  /* "<task_id>/<role>" -> answer */
    json_t *verifiers; /* task_id -> spec */
    vat_corpus *c;
};

static json_t *read_rows(const char *root, const char *table)
{
    json_t *rows = json_array();
    for (int s = 0; s < 2; s++) {
        char *path = vat_xasprintf("%s/out/%s/%s.jsonl", root, table, s ? "test" : "train");
        size_t len;
        char *data = vat_test_read_file(path, &len);
        free(path);
        for (char *p = data, *nl; p && *p; p = nl + 1) {
            nl = strchr(p, '\n');
            json_t *row = json_loadb(p, (size_t)(nl - p), 0, NULL);
            assert_non_null(row);
            json_array_append_new(rows, row);
        }
        free(data);
    }
    return rows;
}

static int setup(void **state)
{
    struct corpus *c = calloc(1, sizeof *c);
    c->root = vat_test_tmpdir("episode");
    *state = c;
    struct vat_config cfg;
    struct vat_err e = {{0}};
    if (vat_config_parse(&cfg, config_text, strlen(config_text), "seeds.toml", &e) != 0)
        return -1;
    struct vat_build_opts o = {.root = c->root, .jobs = 2};
    int rc = vat_build(&cfg, &o, NULL, &e);
    vat_config_release(&cfg);
    if (rc != 0) {
        fprintf(stderr, "build: %s\n", e.msg);
        return -1;
    }
    c->env = json_object();
    c->rollouts = json_object();
    c->verifiers = json_object();
    json_t *rows = read_rows(c->root, "env");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
        json_object_set(c->env, json_string_value(json_object_get(r, "task_id")), r);
    json_decref(rows);
    rows = read_rows(c->root, "rollouts");
    json_array_foreach(rows, i, r) {
        char *k = vat_xasprintf("%s/%s", json_string_value(json_object_get(r, "task_id")),
                                json_string_value(json_object_get(r, "role")));
        json_object_set(c->rollouts, k, json_object_get(r, "answer"));
        free(k);
    }
    json_decref(rows);
    rows = read_rows(c->root, "verifiers");
    json_array_foreach(rows, i, r)
        json_object_set_new(c->verifiers, json_string_value(json_object_get(r, "task_id")),
                            vat_verifier_spec(r));
    json_decref(rows);
    vat_error err;
    if (vat_corpus_open(&c->c, c->root, &err) != 0) {
        fprintf(stderr, "open: %s\n", err.message);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    struct corpus *c = *state;
    vat_corpus_close(c->c);
    json_decref(c->env);
    json_decref(c->rollouts);
    json_decref(c->verifiers);
    vat_test_rmtree(c->root);
    free(c->root);
    free(c);
    return 0;
}

static vat_episode *open_ep(struct corpus *c, const char *task)
{
    vat_episode *ep = NULL;
    vat_error err;
    if (vat_episode_open(c->c, task, &ep, &err) != 0)
        fail_msg("%s: %s", task, err.message);
    return ep;
}

static const char *step(vat_episode *ep, const char *tool, const char *args)
{
    vat_error err;
    assert_int_equal(vat_episode_step(ep, tool, args, strlen(args), &err), 0);
    size_t n;
    const char *obs = vat_episode_observation(ep, &n);
    assert_int_equal(strlen(obs), n);
    return obs;
}

/* The first task of a template (and, when want is not NULL, whose env
 * row's env_json holds want). */
static const char *task_of(struct corpus *c, const char *tmpl, const char *want)
{
    const char *k;
    json_t *r;
    json_object_foreach(c->env, k, r) {
        const char *spec = json_string_value(json_object_get(r, "env_json"));
        if (strcmp(json_string_value(json_object_get(r, "template")), tmpl) == 0 &&
            (!want || strstr(spec, want)))
            return k;
    }
    fail_msg("no %s task%s%s", tmpl, want ? " with " : "", want ? want : "");
    return NULL;
}

/* The name of the first table task's env loads (data tools). */
static const char *first_table(struct corpus *c, const char *task)
{
    static char name[128];
    const json_t *row = json_object_get(c->env, task);
    json_t *spec = json_loads(json_string_value(json_object_get(row, "env_json")), 0, NULL);
    const json_t *t = json_array_get(json_object_get(spec, "tables"), 0);
    const char *n = json_is_string(t) ? json_string_value(t)
                                      : json_string_value(json_object_get(t, "name"));
    assert_non_null(n);
    snprintf(name, sizeof name, "%s", n);
    json_decref(spec);
    return name;
}

/* The arguments {"<key>": value} as JSON text (new string). */
static char *args_of(const char *key, const char *value)
{
    json_t *a = json_pack("{s:s}", key, value);
    char *s = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return s;
}

/* ---- the transcripts --------------------------------------------------------- */

static void test_transcripts_replay(void **state)
{
    struct corpus *c = *state;
    const char *k;
    json_t *r;
    size_t tasks = 0, formats[3] = {0, 0, 0}, paged = 0;
    json_object_foreach(c->env, k, r) {
        const json_t *msgs = json_object_get(r, "completion");
        assert_true(json_array_size(msgs) >= 4); /* a call, its observation, ..., the answer */
        vat_episode *ep = open_ep(c, k);
        assert_string_equal(vat_episode_prompt(ep),
                            json_string_value(json_object_get(
                                json_array_get(json_object_get(r, "prompt"), 0), "content")));
        assert_string_equal(vat_episode_tools(ep), json_string_value(json_object_get(r, "tools")));
        size_t i;
        json_t *m;
        const char *submitted = NULL;
        json_array_foreach(msgs, i, m) {
            const json_t *calls = json_object_get(m, "tool_calls");
            if (!json_array_size(calls))
                continue;
            const json_t *fn = json_object_get(json_array_get(calls, 0), "function");
            const char *name = json_string_value(json_object_get(fn, "name"));
            const char *args = json_string_value(json_object_get(fn, "arguments"));
            const char *obs = step(ep, name, args);
            paged += strstr(args, " OFFSET ") != NULL;
            const json_t *rec = json_array_get(msgs, i + 1);
            assert_string_equal(json_string_value(json_object_get(rec, "role")), "tool");
            assert_string_equal(obs, json_string_value(json_object_get(rec, "content")));
            if (strcmp(name, "submit") == 0) {
                json_t *a = json_loads(args, 0, NULL);
                submitted = json_string_value(json_object_get(a, "answer"));
                char *key = vat_xasprintf("%s/agent", k);
                assert_string_equal(submitted,
                                    json_string_value(json_object_get(c->rollouts, key)));
                free(key);
                json_decref(a);
            }
        }
        assert_non_null(submitted);
        assert_true(vat_episode_done(ep));
        assert_true(vat_episode_reward(ep) == 1.0);
        assert_string_equal(vat_episode_code(ep), "ok");
        /* the final message is the answer the transcript submitted */
        const json_t *last = json_array_get(msgs, json_array_size(msgs) - 1);
        assert_string_equal(json_string_value(json_object_get(last, "role")), "assistant");
        const char *spec = json_string_value(json_object_get(r, "env_json"));
        formats[strstr(spec, "\"format\":\"csv\"") ? 0 : strstr(spec, "\"xlsx\"") ? 1 : 2]++;
        vat_episode_close(ep);
        tasks++;
    }
    assert_int_equal(tasks, vat_corpus_size(c->c));
    for (int f = 0; f < 3; f++)
        assert_true(formats[f] > 0);
    /* a value read from a result longer than one observation, page by page */
    assert_true(paged > 0);
}

static void test_trap_scores_below_one(void **state)
{
    struct corpus *c = *state;
    const char *k;
    json_t *r;
    size_t armed = 0;
    json_object_foreach(c->env, k, r) {
        char *key = vat_xasprintf("%s/trap", k);
        const char *trap = json_string_value(json_object_get(c->rollouts, key));
        free(key);
        assert_non_null(trap);
        vat_episode *ep = open_ep(c, k);
        json_t *a = json_pack("{s:s}", "answer", trap);
        char *args = json_dumps(a, JSON_COMPACT);
        json_decref(a);
        step(ep, "submit", args);
        free(args);
        assert_true(vat_episode_done(ep));
        assert_true(vat_episode_reward(ep) < 1.0);
        assert_int_equal(vat_episode_is_trap(ep), 1);
        armed++;
        vat_episode_close(ep);
    }
    assert_int_equal(armed, vat_corpus_size(c->c));
}

/* ---- determinism across threads ------------------------------------------------- */

struct worker {
    struct corpus *c;
    const char *task;
    const char *queries[4];
    char *obs[4];
};

static void *work(void *arg)
{
    struct worker *w = arg;
    for (int round = 0; round < 20; round++) {
        vat_episode *ep = NULL;
        vat_error err;
        if (vat_episode_open(w->c->c, w->task, &ep, &err) != 0)
            return "open failed";
        for (int q = 0; q < 4; q++) {
            json_t *a = json_pack("{s:s}", "query", w->queries[q]);
            char *args = json_dumps(a, JSON_COMPACT);
            json_decref(a);
            vat_episode_step(ep, "sql", args, strlen(args), &err);
            free(args);
            const char *o = vat_episode_observation(ep, NULL);
            if (round == 0)
                w->obs[q] = strdup(o);
            else if (strcmp(o, w->obs[q]) != 0)
                return "observation differs";
        }
        vat_episode_close(ep);
    }
    return NULL;
}

static void test_same_calls_same_bytes_threads(void **state)
{
    struct corpus *c = *state;
    const char *sqlite_task = task_of(c, "join_aggregate", "\"format\":\"sqlite\"");
    const char *xlsx_task = task_of(c, "grouped_sum", "\"format\":\"xlsx\"");
    char *count = vat_xasprintf("SELECT count(*), sum(amount) FROM \"%s\"",
                                first_table(c, xlsx_task));
    struct worker w[8];
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].c = c;
        w[i].task = i % 2 ? sqlite_task : xlsx_task;
        w[i].queries[0] = "SELECT 1 + 1 AS two, 0.1 + 0.2 AS r, 'a|b\\c' AS t, NULL AS n";
        w[i].queries[1] = i % 2 ? "SELECT * FROM customer_history ORDER BY 1, 2, 3"
                                : count;
        w[i].queries[2] = "SELECT x FROM nowhere";
        w[i].queries[3] = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                          "WHERE i < 60) SELECT i, i * 1.5 FROM n";
    }
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
    for (int i = 0; i < 8; i++) {
        void *res;
        pthread_join(th[i], &res);
        if (res)
            fail_msg("thread %d: %s", i, (const char *)res);
    }
    for (int i = 2; i < 8; i++)
        for (int q = 0; q < 4; q++)
            assert_string_equal(w[i].obs[q], w[i % 2].obs[q]);
    assert_string_equal(w[0].obs[0],
                        "two | r | t | n\n2 | 0.3 | a\\|b\\\\c | NULL\n(1 row)");
    assert_non_null(strstr(w[0].obs[3], "(the first 50 of 60 rows shown)"));
    assert_non_null(strstr(w[0].obs[2], "error (parse)"));
    assert_non_null(strstr(w[0].obs[1], "(1 row)"));
    for (int i = 0; i < 8; i++)
        for (int q = 0; q < 4; q++)
            free(w[i].obs[q]);
    free(count);
}

/* ---- no write, no attach, no held-out --------------------------------------------- */

/* Every file below root with its bytes' digest, one line each, sorted. */
static char *tree_digest(const char *root, const char *rel)
{
    char *dir = vat_xasprintf("%s/%s", root, rel);
    DIR *d = opendir(dir);
    free(dir);
    assert_non_null(d);
    char **names = NULL;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *x = names[j];
            names[j] = names[j - 1];
            names[j - 1] = x;
        }
    struct vat_buf b = VAT_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        char *sub = rel[0] ? vat_xasprintf("%s/%s", rel, names[i]) : vat_xstrdup(names[i]);
        char *full = vat_xasprintf("%s/%s", root, sub);
        struct stat st;
        assert_int_equal(lstat(full, &st), 0);
        if (S_ISDIR(st.st_mode)) {
            char *t = tree_digest(root, sub);
            vat_buf_puts(&b, t);
            free(t);
        } else {
            size_t len;
            char *data = vat_test_read_file(full, &len);
            char hex[65];
            vat_sha256_hex(data, len, hex);
            vat_buf_printf(&b, "%s %s\n", hex, sub);
            free(data);
        }
        free(full);
        free(sub);
        free(names[i]);
    }
    free(names);
    return vat_buf_detach(&b);
}

static void test_no_write_no_attach(void **state)
{
    struct corpus *c = *state;
    char *before = tree_digest(c->root, "");
    static const char *const hostile[] = {
        "DELETE FROM data",
        "INSERT INTO data VALUES (1)",
        "UPDATE data SET amount = 0",
        "DROP TABLE data",
        "CREATE TABLE x (a)",
        "CREATE TEMP TABLE x AS SELECT 1",
        "PRAGMA writable_schema = 1",
        "PRAGMA journal_mode = WAL",
        "VACUUM INTO 'fixtures/copy.sqlite'",
        "ATTACH DATABASE 'fixtures/x.sqlite' AS x",
        "ATTACH 'file:x?mode=memory' AS m",
        "DETACH main",
        "REPLACE INTO data VALUES (1)",
        "WITH t AS (SELECT 1) DELETE FROM data",
        "SELECT 1; DELETE FROM data",
        "SELECT writefile('fixtures/x', 'y')",
        "SELECT load_extension('/tmp/x')",
        "SELECT * FROM sqlite_schema",
        "SELECT * FROM pragma_database_list",
        "SELECT readfile('/etc/passwd')",
        "SELECT * FROM fixtures.data",
    };
    const char *tasks[] = {task_of(c, "join_aggregate", "\"format\":\"sqlite\""),
                           task_of(c, "grouped_sum", "\"format\":\"csv\""),
                           task_of(c, "pivot", "\"format\":\"xlsx\"")};
    for (size_t t = 0; t < 3; t++) {
        vat_episode *ep = open_ep(c, tasks[t]);
        for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
            char *args = args_of("query", hostile[i]);
            const char *obs = step(ep, "sql", args);
            free(args);
            if (strncmp(obs, "error", 5) != 0)
                fail_msg("%s: '%s' gave: %s", tasks[t], hostile[i], obs);
            if (i == 15) { /* every sql call is counted: a fresh episode */
                vat_episode_close(ep);
                ep = open_ep(c, tasks[t]);
            }
        }
        vat_episode_close(ep);
    }
    char *after = tree_digest(c->root, "");
    assert_string_equal(before, after);
    free(before);
    free(after);
}

static void test_no_heldout(void **state)
{
    struct corpus *c = *state;
    /* regex: the held-out strings never show, whatever is asked */
    const char *k;
    json_t *r;
    size_t checked = 0;
    json_object_foreach(c->env, k, r) {
        if (strcmp(json_string_value(json_object_get(r, "tool_set")), "regex") != 0)
            continue;
        const json_t *spec = json_object_get(c->verifiers, k);
        vat_episode *ep = open_ep(c, k);
        const char *calls[][2] = {{"sample", "{\"n\":20}"},
                                  {"try", "{\"pattern\":\"(?s).+\"}"},
                                  {"try", "{\"pattern\":\"\\\\d+\"}"},
                                  {"sample", "{\"table\":\"heldout\"}"}};
        for (size_t q = 0; q < 4; q++) {
            const char *obs = step(ep, calls[q][0], calls[q][1]);
            size_t i;
            json_t *cs;
            json_array_foreach(json_object_get(spec, "cases"), i, cs) {
                const char *text = json_string_value(json_object_get(cs, "text"));
                if (json_is_true(json_object_get(cs, "heldout")) && strlen(text) > 8)
                    assert_null(strstr(obs, text));
            }
            checked++;
        }
        vat_episode_close(ep);
    }
    assert_true(checked > 0);
    /* an env row pointed at a variant is refused: the corpus is tampered */
    char *copy = vat_test_tmpdir("episode-variant");
    char *cmd = vat_xasprintf("cp -r '%s/.' '%s/'", c->root, copy);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    const char *task = task_of(c, "grouped_sum", "\"format\":\"csv\"");
    const json_t *row = json_object_get(c->env, task);
    char *spec = vat_xstrdup(json_string_value(json_object_get(row, "env_json")));
    const json_t *ver = json_object_get(c->verifiers, task);
    const char *variant = json_string_value(json_array_get(json_object_get(ver, "fixtures"), 1));
    if (!variant) { /* a value-form task: any other task's variant */
        const char *kk;
        json_t *vv;
        json_object_foreach(c->verifiers, kk, vv) {
            variant = json_string_value(json_array_get(json_object_get(vv, "fixtures"), 1));
            if (variant && strstr(variant, ".csv"))
                break;
            variant = NULL;
        }
    }
    assert_non_null(variant);
    for (int s = 0; s < 2; s++) {
        char *path = vat_xasprintf("%s/out/env/%s.jsonl", copy, s ? "test" : "train");
        size_t len;
        char *data = vat_test_read_file(path, &len);
        json_t *spec_j = json_loads(spec, 0, NULL);
        const char *main_rel = json_string_value(json_object_get(spec_j, "fixture"));
        /* the row's env_json names the variant instead of the main fixture */
        struct vat_buf b = VAT_BUF_INIT;
        const char *p = data;
        const char *hit;
        while ((hit = strstr(p, main_rel)) != NULL) {
            vat_buf_putn(&b, p, (size_t)(hit - p));
            vat_buf_puts(&b, variant);
            p = hit + strlen(main_rel);
        }
        vat_buf_puts(&b, p);
        FILE *f = fopen(path, "wb");
        fwrite(b.data, 1, b.len, f);
        fclose(f);
        vat_buf_release(&b);
        json_decref(spec_j);
        free(data);
        free(path);
    }
    /* with the manifest: the changed table is tampered; without: the
     * variant is not the task's main fixture */
    for (int manifest = 1; manifest >= 0; manifest--) {
        if (!manifest) {
            char *m = vat_xasprintf("%s/out/manifest.json", copy);
            unlink(m);
            free(m);
        }
        vat_corpus *cc;
        vat_error err;
        assert_int_equal(vat_corpus_open(&cc, copy, &err), 0);
        vat_episode *ep = NULL;
        assert_int_equal(vat_episode_open(cc, task, &ep, &err), -1);
        assert_null(ep);
        assert_non_null(strstr(err.message, manifest ? "tampered" : "tampered"));
        vat_corpus_close(cc);
    }
    free(spec);
    vat_test_rmtree(copy);
    free(copy);
}

/* ---- bounds and bad calls ------------------------------------------------------------- */

static void test_bounds(void **state)
{
    struct corpus *c = *state;
    const char *task = task_of(c, "grouped_sum", "\"format\":\"csv\"");
    char *sample = args_of("table", first_table(c, task));
    /* tool calls: 32, then the episode ends with episode_limit */
    vat_episode *ep = open_ep(c, task);
    for (int i = 0; i < VAT_EP_MAX_CALLS; i++)
        assert_false(strncmp(step(ep, "describe", "{}"), "error", 5) == 0);
    assert_false(vat_episode_done(ep));
    assert_non_null(strstr(step(ep, "describe", "{}"), "tool calls are spent"));
    assert_true(vat_episode_done(ep));
    assert_true(vat_episode_reward(ep) == 0.0);
    assert_string_equal(vat_episode_code(ep), "episode_limit");
    assert_non_null(strstr(step(ep, "submit", "{\"answer\":\"1\"}"), "the episode is over"));
    assert_true(vat_episode_reward(ep) == 0.0);
    vat_episode_close(ep);
    /* sql and sample calls: 16 */
    ep = open_ep(c, task);
    for (int i = 0; i < VAT_EP_MAX_SQL; i++)
        assert_false(strncmp(step(ep, "sql", "{\"query\":\"SELECT 1\"}"), "error", 5) == 0);
    assert_non_null(strstr(step(ep, "sql", "{\"query\":\"SELECT 1\"}"), "sql and sample calls"));
    assert_non_null(strstr(step(ep, "sample", sample), "sql and sample calls"));
    free(sample);
    vat_episode_close(ep);
    /* rows: 1000 a query, 5000 an episode */
    static const char thousand[] = "{\"query\":\"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                                   "SELECT i + 1 FROM n WHERE i < 1000) SELECT i FROM n\"}";
    static const char more[] = "{\"query\":\"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                               "SELECT i + 1 FROM n WHERE i < 1001) SELECT i FROM n\"}";
    ep = open_ep(c, task);
    assert_non_null(strstr(step(ep, "sql", more), "sql_budget"));
    for (int i = 0; i < VAT_EP_MAX_ROWS / VAT_EP_QUERY_ROWS; i++)
        assert_non_null(strstr(step(ep, "sql", thousand), "(the first 50 of 1000 rows shown)"));
    assert_non_null(strstr(step(ep, "sql", thousand), "episode's 5000"));
    vat_episode_close(ep);
    /* bytes: one observation is cut at 8192 at a row, and says so; the
     * episode's observations end it past 65536 */
    static const char wide[] = "{\"query\":\"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT "
                               "i + 1 FROM n WHERE i < 50) SELECT i, printf('%.190c', 'x') AS a, "
                               "printf('%.190c', 'y') AS b FROM n\"}";
    ep = open_ep(c, task);
    const char *obs = step(ep, "sql", wide);
    assert_true(strlen(obs) <= VAT_EP_OBS_BYTES);
    assert_non_null(strstr(obs, "rows shown)"));
    int n = 1;
    while (!vat_episode_done(ep) && n < VAT_EP_MAX_SQL) {
        obs = step(ep, "sql", wide);
        n++;
    }
    assert_true(vat_episode_done(ep));
    assert_string_equal(vat_episode_code(ep), "episode_limit");
    assert_non_null(strstr(obs, "65536"));
    assert_true(n * VAT_EP_OBS_BYTES > VAT_EP_TOTAL_BYTES);
    vat_episode_close(ep);
    /* a long text cell is cut at 200 bytes */
    ep = open_ep(c, task);
    obs = step(ep, "sql", "{\"query\":\"SELECT printf('%.300c', 'z') AS long\"}");
    assert_non_null(strstr(obs, "zzz..."));
    assert_true(strlen(obs) < 300);
    vat_episode_close(ep);
}

static void test_bad_calls_are_observations(void **state)
{
    struct corpus *c = *state;
    const char *task = task_of(c, "grouped_sum", "\"format\":\"csv\"");
    char *n0 = vat_xasprintf("{\"table\":\"%s\",\"n\":0}", first_table(c, task));
    char *n25 = vat_xasprintf("{\"table\":\"%s\",\"n\":2.5}", first_table(c, task));
    vat_episode *ep = open_ep(c, task);
    const char *const bad[][3] = {
        {"nope", "{}", "no tool 'nope'"},
        {"try", "{\"pattern\":\"x\"}", "no tool 'try'"},
        {"sql", "[1]", "must be a JSON object"},
        {"sql", "{", "must be a JSON object"},
        {"sql", "{\"query\":1}", "must be a string"},
        {"sql", "{}", "needs the argument 'query'"},
        {"sql", "{\"query\":\"SELECT 1\",\"x\":2}", "takes no argument 'x'"},
        {"sql", "{\"query\":\"SELECT 1\",\"query\":\"SELECT 2\"}", "must be a JSON object"},
        {"sample", n0, "from 1 to 20"},
        {"sample", n25, "from 1 to 20"},
        {"sample", "{\"table\":\"no such\"}", "no table 'no such'"},
        {"describe", "{\"x\":1}", "takes no argument"},
        {"submit", "{}", "needs the argument 'answer'"},
        {"sql", "{\"query\":\"\"}", "error (parse)"},
        {"sql", "{\"query\":\"SELECT \\u0000\"}", "error (parse)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *obs = step(ep, bad[i][0], bad[i][1]);
        if (!strstr(obs, bad[i][2]))
            fail_msg("%s %s: %s", bad[i][0], bad[i][1], obs);
    }
    assert_false(vat_episode_done(ep));
    free(n0);
    free(n25);
    /* a name with bytes that are not UTF-8, a huge call */
    const char *obs = step(ep, "\xff\xfe", "{}");
    assert_non_null(strstr(obs, "\\xff"));
    size_t big = VAT_EP_ARG_BYTES + 10;
    char *args = malloc(big + 1);
    memset(args, ' ', big);
    args[big] = 0;
    vat_error err;
    assert_int_equal(vat_episode_step(ep, "sql", args, big, &err), 0);
    assert_non_null(strstr(vat_episode_observation(ep, NULL), "byte limit"));
    free(args);
    /* arguments need not be NUL-terminated; a length of 0 is {} */
    assert_int_equal(vat_episode_step(ep, "describe", "{}xyz", 2, &err), 0);
    assert_non_null(strstr(vat_episode_observation(ep, NULL), "rows"));
    assert_int_equal(vat_episode_step(ep, "describe", NULL, 0, &err), 0);
    assert_non_null(strstr(vat_episode_observation(ep, NULL), "rows"));
    /* calls that cannot run */
    assert_int_equal(vat_episode_step(NULL, "describe", "{}", 2, &err), -1);
    assert_int_equal(vat_episode_step(ep, NULL, "{}", 2, &err), -1);
    assert_int_equal(vat_episode_step(ep, "sql", NULL, 5, &err), -1);
    vat_episode_close(ep);
    vat_episode_close(NULL);
    /* unknown tasks and missing arguments are error values */
    ep = NULL;
    assert_int_equal(vat_episode_open(c->c, "nope-00001", &ep, &err), -1);
    assert_non_null(strstr(err.message, "no task"));
    assert_int_equal(vat_episode_open(c->c, NULL, &ep, &err), -1);
    assert_int_equal(vat_episode_open(c->c, task, NULL, &err), -1);
    assert_string_equal(vat_tools_json("regex"), vat_env_tools_json("regex"));
    json_t *tools = json_loads(vat_tools_json("data"), 0, NULL);
    assert_int_equal(json_array_size(tools), 4);
    json_decref(tools);
}

static void test_no_env_table(void **state)
{
    struct corpus *c = *state;
    char *copy = vat_test_tmpdir("episode-noenv");
    char *cmd = vat_xasprintf("cp -r '%s/.' '%s/' && rm -r '%s/out/env' '%s/out/manifest.json'",
                              c->root, copy, copy, copy);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    vat_corpus *cc;
    vat_error err;
    assert_int_equal(vat_corpus_open(&cc, copy, &err), 0);
    vat_episode *ep = NULL;
    const char *task = task_of(c, "grouped_sum", NULL);
    assert_int_equal(vat_episode_open(cc, task, &ep, &err), -1);
    assert_non_null(strstr(err.message, "no env table"));
    /* scoring is unaffected */
    vat_result *res;
    assert_int_equal(vat_corpus_score(cc, task, "{}", 2, VAT_EXTRACT_RAW, &res, &err), 0);
    assert_string_not_equal(vat_result_code(res), "tampered");
    vat_result_free(res);
    vat_corpus_close(cc);
    vat_test_rmtree(copy);
    free(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transcripts_replay),
        cmocka_unit_test(test_trap_scores_below_one),
        cmocka_unit_test(test_same_calls_same_bytes_threads),
        cmocka_unit_test(test_no_write_no_attach),
        cmocka_unit_test(test_no_heldout),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_bad_calls_are_observations),
        cmocka_unit_test(test_no_env_table),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

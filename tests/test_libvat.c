/* test_libvat.c — the reward library (include/libvat.h) over a corpus
 * built in-process: every gold scores 1 and is not the trap, every trap
 * scores below 1 and is recognised as the trap, every malformed answer
 * fails the gate; auto extraction takes a gold out of a chat completion;
 * an unknown task is an error value; one handle scored from 8 threads at
 * once gives the single-thread verdicts (run in the sanitizer build too),
 * also with the SQL verdict memo evicting under contention;
 * a changed fixture scores `tampered`, and with out/manifest.json a
 * changed verifiers file makes every score `tampered`; the manifest reads
 * the same through the one-pass scanner and through jansson (escaped keys,
 * an exponent, "files" twice, truncated), and a fixture digest changed in
 * it alone makes that SQL task `tampered`; `vat score` with 8
 * samples for each of 200 tasks reports pass@8 and mean@8 per template
 * as recomputed from the predictions. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "build.h"
#include "cli.h"
#include "config.h"
#include "corpus.h"
#include "jsonout.h"
#include "libvat.h"
#include "testutil.h"
#include "vat.h"

static const char config_text[] = "[corpus]\nmaster_seed = 777\ntest_fraction = 0.2\n"
                                  "[templates.grouped_sum]\ncount = 90\n"
                                  "[templates.grouped_count]\ncount = 60\n"
                                  "[templates.unanswerable]\ncount = 50\n"
                                  "[templates.regex_iso_dates]\ncount = 6\n"
                                  "[templates.sql_paid_revenue]\ncount = 6\n";

enum { ROLES = 3 };
static const char *const roles[ROLES] = {"gold", "trap", "malformed"};

struct task {
    char *id, *tmpl;
    char *answer[ROLES];
};

struct corpus {
    char *root;
    struct task *t;
    size_t n;
};

static int setup(void **state)
{
    struct corpus *c = calloc(1, sizeof *c);
    c->root = vat_test_tmpdir("libvat");
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
    /* tasks in verifiers order, answers from the rollouts */
    json_t *tasks = json_object();
    for (int s = 0; s < 2; s++)
        for (int tb = 0; tb < 2; tb++) {
            char *path = vat_xasprintf("%s/out/%s/%s.jsonl", c->root, tb ? "rollouts" : "verifiers",
                                       s ? "test" : "train");
            size_t len;
            char *data = vat_test_read_file(path, &len);
            free(path);
            if (!data)
                return -1;
            for (char *line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
                json_t *row = json_loads(line, 0, NULL);
                const char *id = json_string_value(json_object_get(row, "task_id"));
                if (!tb) {
                    json_object_set_new(tasks, id, json_object());
                    json_object_set(json_object_get(tasks, id), "template",
                                    json_object_get(row, "template"));
                } else {
                    json_object_set(json_object_get(tasks, id),
                                    json_string_value(json_object_get(row, "role")),
                                    json_object_get(row, "answer"));
                }
                json_decref(row);
            }
            free(data);
        }
    c->t = calloc(json_object_size(tasks), sizeof *c->t);
    const char *id;
    json_t *o2;
    json_object_foreach(tasks, id, o2) {
        struct task *t = &c->t[c->n++];
        t->id = strdup(id);
        t->tmpl = strdup(json_string_value(json_object_get(o2, "template")));
        for (int r = 0; r < ROLES; r++)
            t->answer[r] = strdup(json_string_value(json_object_get(o2, roles[r])));
    }
    json_decref(tasks);
    return 0;
}

static int teardown(void **state)
{
    struct corpus *c = *state;
    vat_test_rmtree(c->root);
    for (size_t i = 0; i < c->n; i++) {
        free(c->t[i].id);
        free(c->t[i].tmpl);
        for (int r = 0; r < ROLES; r++)
            free(c->t[i].answer[r]);
    }
    free(c->t);
    free(c->root);
    free(c);
    return 0;
}

/* One scoring, flattened for comparison. */
struct outcome {
    int gate, trap;
    double score;
    char code[32];
};

static struct outcome score(vat_corpus *vc, const char *id, const char *text,
                            vat_extract_mode mode)
{
    struct outcome o = {0};
    vat_result *r = NULL;
    vat_error err;
    assert_int_equal(vat_corpus_score(vc, id, text, strlen(text), mode, &r, &err), 0);
    o.gate = vat_result_gate_passed(r);
    o.trap = vat_result_is_trap(r);
    o.score = vat_result_score(r);
    snprintf(o.code, sizeof o.code, "%s", vat_result_code(r));
    vat_result_free(r);
    return o;
}

static void test_roles(void **state)
{
    struct corpus *c = *state;
    vat_corpus *vc;
    vat_error err;
    assert_int_equal(vat_corpus_open(&vc, c->root, &err), 0);
    assert_int_equal(vat_corpus_size(vc), c->n);
    assert_string_equal(vat_version(), VAT_VERSION);
    for (size_t i = 0; i < c->n; i++) {
        const struct task *t = &c->t[i];
        assert_int_equal(vat_corpus_has_task(vc, t->id), 1);
        struct outcome g = score(vc, t->id, t->answer[0], VAT_EXTRACT_RAW);
        struct outcome tr = score(vc, t->id, t->answer[1], VAT_EXTRACT_RAW);
        struct outcome m = score(vc, t->id, t->answer[2], VAT_EXTRACT_RAW);
        if (g.score != 1.0 || g.trap || tr.score >= 1.0 || !tr.trap || m.gate)
            fail_msg("%s: gold %g/%d trap %g/%d malformed gate %d (%s)", t->id, g.score, g.trap,
                     tr.score, tr.trap, m.gate, tr.code);
    }
    assert_int_equal(vat_corpus_has_task(vc, "nope-00000"), 0);
    vat_result *r = (vat_result *)1;
    assert_int_equal(vat_corpus_score(vc, "nope-00000", "1", 1, VAT_EXTRACT_RAW, &r, &err), -1);
    assert_null(r);
    assert_non_null(strstr(err.message, "nope-00000"));
    vat_corpus_close(vc);
}

static void test_auto_extraction(void **state)
{
    struct corpus *c = *state;
    vat_corpus *vc;
    assert_int_equal(vat_corpus_open(&vc, c->root, NULL), 0);
    for (size_t i = 0; i < c->n; i += 7) {
        const struct task *t = &c->t[i];
        char *wrapped = vat_xasprintf("<think>first try: 0</think>\nHere it is:\n```\n%s\n```\n",
                                      t->answer[0]);
        vat_result *r;
        assert_int_equal(
            vat_corpus_score(vc, t->id, wrapped, strlen(wrapped), VAT_EXTRACT_AUTO, &r, NULL), 0);
        if (vat_result_score(r) != 1.0)
            fail_msg("%s: wrapped gold scores %g (%s)", t->id, vat_result_score(r),
                     vat_result_reason(r));
        assert_string_equal(vat_result_extract_rule(r), "fence");
        size_t len;
        const char *x = vat_result_extracted(r, &len);
        assert_int_equal(len, strlen(t->answer[0]));
        assert_memory_equal(x, t->answer[0], len);
        vat_result_free(r);
        /* raw: the same completion is not the answer */
        assert_true(score(vc, t->id, wrapped, VAT_EXTRACT_RAW).score < 1.0);
        free(wrapped);
    }
    vat_corpus_close(vc);
}

/* ---- threads ------------------------------------------------------------------ */

struct worker {
    const struct corpus *c;
    vat_corpus *vc;
    const struct outcome *want; /* [task][role] */
    size_t start;
    int bad;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    for (int round = 0; round < 3; round++)
        for (size_t k = 0; k < w->c->n; k++) {
            size_t i = (w->start + k * 7) % w->c->n;
            for (int r = 0; r < ROLES; r++) {
                const char *a = w->c->t[i].answer[r];
                vat_result *res;
                if (vat_corpus_score(w->vc, w->c->t[i].id, a, strlen(a), VAT_EXTRACT_AUTO, &res,
                                     NULL) != 0) {
                    w->bad++;
                    continue;
                }
                const struct outcome *o = &w->want[i * ROLES + (size_t)r];
                if (vat_result_score(res) != o->score || vat_result_is_trap(res) != o->trap ||
                    strcmp(vat_result_code(res), o->code) != 0)
                    w->bad++;
                vat_result_free(res);
            }
        }
    return NULL;
}

static void test_threads_share_one_handle(void **state)
{
    struct corpus *c = *state;
    vat_corpus *vc;
    assert_int_equal(vat_corpus_open(&vc, c->root, NULL), 0);
    struct outcome *want = calloc(c->n * ROLES, sizeof *want);
    for (size_t i = 0; i < c->n; i++)
        for (int r = 0; r < ROLES; r++)
            want[i * ROLES + (size_t)r] = score(vc, c->t[i].id, c->t[i].answer[r], VAT_EXTRACT_AUTO);
    vat_corpus_close(vc);
    /* a fresh handle: the threads race for every lazily built part */
    assert_int_equal(vat_corpus_open(&vc, c->root, NULL), 0);
    enum { N = 8 };
    pthread_t th[N];
    struct worker w[N];
    for (int k = 0; k < N; k++) {
        w[k] = (struct worker){c, vc, want, (size_t)k * c->n / N, 0};
        assert_int_equal(pthread_create(&th[k], NULL, work, &w[k]), 0);
    }
    int bad = 0;
    for (int k = 0; k < N; k++) {
        pthread_join(th[k], NULL);
        bad += w[k].bad;
    }
    assert_int_equal(bad, 0);
    vat_corpus_close(vc);
    free(want);
}

/* The verdict memo under contention: 8 threads score the SQL tasks' gold
 * (repeated, and with distinct trailing comments), trap and malformed
 * answers on one handle whose memo bounds are tiny, so entries are found,
 * added and evicted concurrently; every verdict is the single-thread one. */
struct churn {
    const struct corpus *c;
    vat_corpus *vc;
    const struct outcome *want; /* [task][role], from a handle without memo */
    int k, bad, sql;
};

static void *churn_work(void *arg)
{
    struct churn *w = arg;
    char buf[4096];
    for (int round = 0; round < 12; round++)
        for (size_t i = 0; i < w->c->n; i++) {
            if (strcmp(w->c->t[i].tmpl, "sql_paid_revenue") != 0)
                continue;
            for (int r = 0; r < ROLES; r++) {
                const char *a = w->c->t[i].answer[r];
                /* gold: every other round a text no other thread uses */
                if (r == 0 && round % 2)
                    snprintf(buf, sizeof buf, "%s\n-- t%d r%d", a, w->k, round);
                else
                    snprintf(buf, sizeof buf, "%s", a);
                vat_result *res;
                if (vat_corpus_score(w->vc, w->c->t[i].id, buf, strlen(buf), VAT_EXTRACT_RAW,
                                     &res, NULL) != 0) {
                    w->bad++;
                    continue;
                }
                const struct outcome *o = &w->want[i * ROLES + (size_t)r];
                if (vat_result_score(res) != o->score || vat_result_is_trap(res) != o->trap ||
                    strcmp(vat_result_code(res), o->code) != 0 ||
                    vat_result_gate_passed(res) != o->gate)
                    w->bad++;
                w->sql++;
                vat_result_free(res);
            }
        }
    return NULL;
}

static void test_threads_memo_churn(void **state)
{
    struct corpus *c = *state;
    setenv("VAT_VERDICT_MEMO", "0", 1);
    vat_corpus *vc;
    assert_int_equal(vat_corpus_open(&vc, c->root, NULL), 0);
    unsetenv("VAT_VERDICT_MEMO");
    struct outcome *want = calloc(c->n * ROLES, sizeof *want);
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->t[i].tmpl, "sql_paid_revenue") == 0)
            for (int r = 0; r < ROLES; r++)
                want[i * ROLES + (size_t)r] =
                    score(vc, c->t[i].id, c->t[i].answer[r], VAT_EXTRACT_RAW);
    vat_corpus_close(vc);
    assert_int_equal(vat_corpus_open(&vc, c->root, NULL), 0);
    /* two entries a task, about one of these answers a shard */
    vat_corpus_memo_limits(vc, 2, 16 * 700, 16384);
    enum { N = 8 };
    pthread_t th[N];
    struct churn w[N];
    for (int k = 0; k < N; k++) {
        w[k] = (struct churn){c, vc, want, k, 0, 0};
        assert_int_equal(pthread_create(&th[k], NULL, churn_work, &w[k]), 0);
    }
    int bad = 0, sql = 0;
    for (int k = 0; k < N; k++) {
        pthread_join(th[k], NULL);
        bad += w[k].bad;
        sql += w[k].sql;
    }
    assert_int_equal(bad, 0);
    assert_true(sql > 0);
    struct vat_memo_stats st;
    vat_corpus_memo_stats(vc, &st);
    assert_true(st.enabled);
    assert_true(st.hits > 0);
    assert_true(st.bytes <= st.bytes_cap);
    assert_true(st.entries <= 2 * c->n);
    vat_corpus_close(vc);
    free(want);
}

/* ---- tampering ------------------------------------------------------------------ */

static char *copy_corpus(const struct corpus *c, const char *tag)
{
    char *dir = vat_test_tmpdir(tag);
    char *cmd = vat_xasprintf("cp -r '%s/out' '%s/fixtures' '%s/'", c->root, c->root, dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    return dir;
}

static const struct task *first_of(const struct corpus *c, const char *tmpl)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->t[i].tmpl, tmpl) == 0)
            return &c->t[i];
    fail_msg("no %s task", tmpl);
    return NULL;
}

static void test_changed_fixture_is_tampered(void **state)
{
    struct corpus *c = *state;
    char *dir = copy_corpus(c, "libvat-fx");
    const struct task *t = first_of(c, "sql_paid_revenue");
    /* one byte of the main fixture's last page changes: still a database */
    char *path = vat_xasprintf("%s/fixtures/sql_paid_revenue/000/%s.sqlite", dir, t->id);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, -2, SEEK_END);
    int ch = fgetc(f);
    fseek(f, -2, SEEK_END);
    fputc(ch ^ 1, f);
    fclose(f);
    vat_corpus *vc;
    assert_int_equal(vat_corpus_open(&vc, dir, NULL), 0);
    struct outcome o = score(vc, t->id, t->answer[0], VAT_EXTRACT_RAW);
    assert_string_equal(o.code, "tampered");
    assert_true(o.score == 0.0);
    /* the other SQL tasks are untouched */
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->t[i].tmpl, "sql_paid_revenue") == 0 && &c->t[i] != t)
            assert_true(score(vc, c->t[i].id, c->t[i].answer[0], VAT_EXTRACT_RAW).score == 1.0);
    vat_corpus_close(vc);
    vat_test_rmtree(dir);
    free(path);
    free(dir);
}

static void sha256_file(const char *path, char hex[65])
{
    size_t n;
    char *d = vat_test_read_file(path, &n);
    assert_non_null(d);
    unsigned char md[32];
    unsigned ml;
    EVP_Digest(d, n, md, &ml, EVP_sha256(), NULL);
    for (int k = 0; k < 32; k++)
        snprintf(hex + 2 * k, 3, "%02x", md[k]);
    free(d);
}

/* Writes out/manifest.json listing the table files the library reads. */
static void write_manifest(const char *dir)
{
    static const char *const rel[] = {
        "out/verifiers/train.jsonl", "out/verifiers/test.jsonl", "out/experience/train.jsonl",
        "out/experience/test.jsonl", "out/rollouts/train.jsonl", "out/rollouts/test.jsonl"};
    json_t *files = json_object();
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++) {
        char *p = vat_xasprintf("%s/%s", dir, rel[k]);
        char hex[65];
        sha256_file(p, hex);
        json_object_set_new(files, rel[k], json_string(hex));
        free(p);
    }
    json_t *m = json_pack("{s:i, s:s, s:o}", "manifest_version", 1, "vat_version", VAT_VERSION,
                          "files", files);
    char *s = vat_json_dumps(m);
    char *p = vat_xasprintf("%s/out/manifest.json", dir);
    FILE *f = fopen(p, "wb");
    fputs(s, f);
    fclose(f);
    free(p);
    free(s);
    json_decref(m);
}

static void test_manifest_guards_verifiers(void **state)
{
    struct corpus *c = *state;
    char *dir = copy_corpus(c, "libvat-man");
    write_manifest(dir);
    const struct task *t = first_of(c, "grouped_sum");
    vat_corpus *vc;
    assert_int_equal(vat_corpus_open(&vc, dir, NULL), 0);
    assert_true(score(vc, t->id, t->answer[0], VAT_EXTRACT_RAW).score == 1.0);
    vat_corpus_close(vc);
    /* a loosened tolerance in the verifiers table: a trap would now pass */
    char *cmd = vat_xasprintf("sed -i 's/rel_tol\\\\\":1e-09/rel_tol\\\\\":1e308/' '%s'/out/verifiers/*.jsonl",
                              dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    assert_int_equal(vat_corpus_open(&vc, dir, NULL), 0);
    for (int r = 0; r < ROLES; r++) {
        struct outcome o = score(vc, t->id, t->answer[r], VAT_EXTRACT_RAW);
        assert_string_equal(o.code, "tampered");
        assert_true(o.score == 0.0);
    }
    vat_corpus_close(vc);
    vat_test_rmtree(dir);
    free(dir);
}

/* The manifest is read by a one-pass scanner where it can be and by
 * jansson otherwise (lib/corpus.c, man_scan): the verdicts are the same
 * either way.  Each case rewrites the built corpus's out/manifest.json and
 * scores an SQL gold (its fixture digests come from the manifest) and a
 * value gold; want_ok says whether they score 1 or `tampered`. */
static void put_manifest(const char *dir, const char *text)
{
    char *p = vat_xasprintf("%s/out/manifest.json", dir);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(p);
}

static char *replace_all(const char *s, const char *from, const char *to)
{
    struct vat_buf b = VAT_BUF_INIT;
    size_t fl = strlen(from);
    for (const char *p = s, *q; *p; p = q + fl) {
        q = strstr(p, from);
        if (!q) {
            vat_buf_puts(&b, p);
            break;
        }
        vat_buf_putn(&b, p, (size_t)(q - p));
        vat_buf_puts(&b, to);
    }
    return vat_buf_detach(&b);
}

static void test_manifest_forms(void **state)
{
    struct corpus *c = *state;
    char *dir = copy_corpus(c, "libvat-forms");
    char *mp = vat_xasprintf("%s/out/manifest.json", dir);
    char *real = vat_test_read_file(mp, NULL);
    assert_non_null(real);
    const struct task *sq = first_of(c, "sql_paid_revenue"), *val = first_of(c, "grouped_sum");
    char *fx_key = vat_xasprintf("\"fixtures/sql_paid_revenue/000/%s.sqlite\"", sq->id);
    assert_non_null(strstr(real, fx_key));
    const char *files_at = strstr(real, "\"files\"");
    assert_non_null(files_at);
    /* a fixture's digest changed in the manifest alone */
    char *fx_bad = vat_xstrdup(real);
    char *hex = strstr(fx_bad, fx_key) + strlen(fx_key);
    hex = strchr(hex, '"') + 1;
    hex[0] = hex[0] == '0' ? '1' : '0';
    char *escaped = replace_all(real, "out/", "out\\/");   /* keys with escapes: jansson */
    char *exponent = replace_all(real, "\"manifest_version\": 1", "\"manifest_version\": 1e0");
    char *truncated = vat_xstrndup(real, strlen(real) / 2);
    /* "files" twice: the last one holds, as jansson reads it */
    char *twice_ok = vat_xasprintf("{\"files\": {}, %s", strchr(real, '{') + 1);
    char *twice_bad = vat_xasprintf("%.*s, \"files\": [], \"x\": 0}",
                                    (int)(strrchr(real, '}') - real), real);
    char *compact = replace_all(real, "\n", "");
    char *files_array = replace_all(real, "\"files\"", "\"filez\"");
    /* every rewrite took */
    assert_string_not_equal(escaped, real);
    assert_string_not_equal(exponent, real);
    assert_string_not_equal(compact, real);
    assert_string_not_equal(files_array, real);
    const struct {
        const char *name, *text;
        int sql_ok, value_ok;
        const char *reason; /* in the tampered reason */
    } cases[] = {
        {"as built", real, 1, 1, NULL},
        {"compact", compact, 1, 1, NULL},
        {"escaped keys", escaped, 1, 1, NULL},
        {"an exponent", exponent, 1, 1, NULL},
        {"files twice, the last real", twice_ok, 1, 1, NULL},
        {"a fixture digest changed", fx_bad, 0, 1, "sha256"},
        {"truncated", truncated, 0, 0, "cannot be read as a manifest"},
        {"files twice, the last an array", twice_bad, 0, 0, "cannot be read as a manifest"},
        {"no files", files_array, 0, 0, "cannot be read as a manifest"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        put_manifest(dir, cases[k].text);
        vat_corpus *vc;
        assert_int_equal(vat_corpus_open(&vc, dir, NULL), 0);
        const struct task *tk[2] = {sq, val};
        int want[2] = {cases[k].sql_ok, cases[k].value_ok};
        for (int i = 0; i < 2; i++) {
            vat_result *r;
            const char *a = tk[i]->answer[0];
            assert_int_equal(vat_corpus_score(vc, tk[i]->id, a, strlen(a), VAT_EXTRACT_RAW, &r,
                                              NULL),
                             0);
            if (want[i] ? vat_result_score(r) != 1.0
                        : strcmp(vat_result_code(r), "tampered") != 0 ||
                              !strstr(vat_result_reason(r), cases[k].reason))
                fail_msg("manifest %s: %s scores %g (%s: %s)", cases[k].name, tk[i]->id,
                         vat_result_score(r), vat_result_code(r), vat_result_reason(r));
            vat_result_free(r);
        }
        vat_corpus_close(vc);
    }
    free(fx_key);
    free(fx_bad);
    free(escaped);
    free(exponent);
    free(truncated);
    free(twice_ok);
    free(twice_bad);
    free(compact);
    free(files_array);
    free(real);
    free(mp);
    vat_test_rmtree(dir);
    free(dir);
}

/* ---- vat score with samples ------------------------------------------------------ */

static void test_score_eight_samples(void **state)
{
    struct corpus *c = *state;
    assert_true(c->n >= 200);
    /* task i gets (i % 9) golds among its 8 samples (0..8), the rest traps */
    struct vat_buf b = VAT_BUF_INIT;
    json_t *want = json_object(); /* template -> [tasks, passed tasks, sum of means] */
    for (size_t i = 0; i < 200; i++) {
        const struct task *t = &c->t[i];
        int golds = (int)(i % 9);
        for (int s = 0; s < 8; s++) {
            json_t *o = json_pack("{s:s, s:s, s:i}", "task_id", t->id, "answer",
                                  t->answer[s < golds ? 0 : 1], "sample", s);
            vat_json_dump_buf(&b, o);
            vat_buf_putc(&b, '\n');
            json_decref(o);
        }
        json_t *w = json_object_get(want, t->tmpl);
        if (!w) {
            w = json_pack("[f, f, f]", 0.0, 0.0, 0.0);
            json_object_set_new(want, t->tmpl, w);
        }
        json_array_set_new(w, 0, json_real(json_real_value(json_array_get(w, 0)) + 1));
        json_array_set_new(w, 1, json_real(json_real_value(json_array_get(w, 1)) + (golds > 0)));
        json_array_set_new(w, 2,
                           json_real(json_real_value(json_array_get(w, 2)) + golds / 8.0));
    }
    FILE *in = fmemopen(b.data, b.len, "rb");
    char *outbuf = NULL;
    size_t outlen = 0;
    FILE *out = open_memstream(&outbuf, &outlen);
    char msg[512];
    int rc = vat_score_run_mode(c->root, "all", VAT_EXTRACT_RAW, in, "p.jsonl", out, msg,
                                sizeof msg);
    fclose(in);
    fclose(out);
    assert_int_equal(rc, 0);
    int seen = 0;
    for (char *line = strtok(outbuf, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *o = json_loads(line, 0, NULL);
        assert_non_null(o);
        const char *sum = json_string_value(json_object_get(o, "summary"));
        if (sum && strcmp(sum, "template") == 0) {
            const char *name = json_string_value(json_object_get(o, "template"));
            json_t *w = json_object_get(want, name);
            double tasks = w ? json_real_value(json_array_get(w, 0)) : 0;
            if (tasks > 0) {
                seen++;
                assert_int_equal(json_integer_value(json_object_get(o, "k")), 8);
                assert_int_equal(json_integer_value(json_object_get(o, "answered")), (int)tasks);
                assert_int_equal(json_integer_value(json_object_get(o, "predictions")),
                                 (int)tasks * 8);
                double pass = json_number_value(json_object_get(o, "pass@8"));
                double mean = json_number_value(json_object_get(o, "mean@8"));
                double wp = json_real_value(json_array_get(w, 1)) / tasks;
                double wm = json_real_value(json_array_get(w, 2)) / tasks;
                if (pass - wp > 1e-12 || wp - pass > 1e-12 || mean - wm > 1e-12 ||
                    wm - mean > 1e-12)
                    fail_msg("%s: pass@8 %g mean@8 %g, want %g %g", name, pass, mean, wp, wm);
            }
        } else if (sum && strcmp(sum, "total") == 0) {
            assert_int_equal(json_integer_value(json_object_get(o, "predictions")), 1600);
            assert_int_equal(json_integer_value(json_object_get(o, "answered")), 200);
            assert_int_equal(json_integer_value(json_object_get(o, "checker_errors")), 0);
        }
        json_decref(o);
    }
    assert_int_equal(seen, (int)json_object_size(want));
    free(outbuf);
    vat_buf_release(&b);
    json_decref(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roles),
        cmocka_unit_test(test_auto_extraction),
        cmocka_unit_test(test_threads_share_one_handle),
        cmocka_unit_test(test_threads_memo_churn),
        cmocka_unit_test(test_changed_fixture_is_tampered),
        cmocka_unit_test(test_manifest_guards_verifiers),
        cmocka_unit_test(test_manifest_forms),
        cmocka_unit_test(test_score_eight_samples),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

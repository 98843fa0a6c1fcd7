/* test_cache.c — the byte budget of a corpus handle's cache (lib/corpus.c,
 * include/libvat.h's vat_open_options): over a corpus of 3,000 tasks (every
 * registered template in equal share, built in-process), a handle with a
 * 16 MiB budget scores every task's gold twice and its cache's own byte
 * count never passes the budget, after any score; it evicts and builds
 * tasks again, and every gold still scores 1.  A task evicted and built
 * again gives the verdict (gate, score, code, reason, trap, extraction) of
 * a handle that kept it, for gold, trap and malformed answers.  8 threads
 * on a small budget agree with one thread.  The budget comes from the
 * options, else VAT_CACHE_BYTES, else 256 MiB; a bad VAT_CACHE_BYTES fails
 * the open with a message. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "build.h"
#include "config.h"
#include "corpus.h"
#include "libvat.h"
#include "template.h"
#include "testutil.h"
#include "vat.h"

#define CORPUS_TASKS 3000
#define SMALL_BUDGET ((size_t)16 << 20)

enum { ROLES = 3 };
static const char *const roles[ROLES] = {"gold", "trap", "malformed"};

struct corpus {
    char *root;
    size_t n;
    char **id;
    char **answer[ROLES];
};

static int setup(void **state)
{
    struct corpus *c = calloc(1, sizeof *c);
    c->root = vat_test_tmpdir("cache");
    *state = c;
    size_t n_templates = 0;
    while (vat_registry[n_templates])
        n_templates++;
    struct vat_buf cfg_text = VAT_BUF_INIT;
    vat_buf_printf(&cfg_text, "[corpus]\nmaster_seed = 4141\ntest_fraction = 0.2\n");
    for (size_t k = 0; k < n_templates; k++)
        vat_buf_printf(&cfg_text, "[templates.%s]\ncount = %zu\n", vat_registry[k]->name,
                       CORPUS_TASKS / n_templates + (k < CORPUS_TASKS % n_templates));
    struct vat_config cfg;
    struct vat_err e = {{0}};
    int rc = vat_config_parse(&cfg, cfg_text.data, cfg_text.len, "seeds.toml", &e);
    vat_buf_release(&cfg_text);
    if (rc != 0) {
        fprintf(stderr, "config: %s\n", e.msg);
        return -1;
    }
    struct vat_build_opts o = {.root = c->root, .jobs = 2};
    rc = vat_build(&cfg, &o, NULL, &e);
    vat_config_release(&cfg);
    if (rc != 0) {
        fprintf(stderr, "build: %s\n", e.msg);
        return -1;
    }
    /* the tasks and their rollout answers, read once through a handle of
     * their own */
    vat_corpus *vc;
    vat_error err;
    if (vat_corpus_open(&vc, c->root, &err) != 0) {
        fprintf(stderr, "%s\n", err.message);
        return -1;
    }
    c->n = vat_corpus_task_count(vc);
    c->id = calloc(c->n, sizeof *c->id);
    for (int r = 0; r < ROLES; r++)
        c->answer[r] = calloc(c->n, sizeof *c->answer[r]);
    for (size_t i = 0; i < c->n; i++) {
        c->id[i] = strdup(vat_corpus_task_id(vc, i));
        for (int r = 0; r < ROLES; r++) {
            const char *a = vat_corpus_rollout_answer(vc, c->id[i], roles[r]);
            c->answer[r][i] = strdup(a ? a : "");
        }
    }
    vat_corpus_close(vc);
    return c->n == CORPUS_TASKS ? 0 : -1;
}

static int teardown(void **state)
{
    struct corpus *c = *state;
    if (c->root)
        vat_test_rmtree(c->root);
    for (size_t i = 0; i < c->n; i++) {
        free(c->id[i]);
        for (int r = 0; r < ROLES; r++)
            free(c->answer[r][i]);
    }
    free(c->id);
    for (int r = 0; r < ROLES; r++)
        free(c->answer[r]);
    free(c->root);
    free(c);
    return 0;
}

static vat_corpus *open_budget(const struct corpus *c, size_t bytes)
{
    vat_open_options o = VAT_OPEN_OPTIONS_INIT;
    o.cache_bytes = bytes;
    vat_corpus *vc = NULL;
    vat_error err;
    if (vat_corpus_open_opts(&vc, c->root, &o, &err) != 0)
        fail_msg("open: %s", err.message);
    assert_int_equal(vat_corpus_cache_budget(vc), bytes);
    return vc;
}

/* What a verdict is made of, compared field by field. */
struct seen {
    int gate, trap;
    double score;
    long long work;
    char code[32], reason[256], rule[16];
    char *extracted;
    size_t extracted_len;
};

static struct seen score(vat_corpus *vc, const char *id, const char *answer)
{
    struct seen s;
    memset(&s, 0, sizeof s);
    vat_result *r;
    vat_error err;
    if (vat_corpus_score(vc, id, answer, strlen(answer), VAT_EXTRACT_RAW, &r, &err) != 0)
        fail_msg("score %s: %s", id, err.message);
    s.gate = vat_result_gate_passed(r);
    s.trap = vat_result_is_trap(r);
    s.score = vat_result_score(r);
    s.work = vat_result_work(r);
    snprintf(s.code, sizeof s.code, "%s", vat_result_code(r));
    snprintf(s.reason, sizeof s.reason, "%s", vat_result_reason(r));
    snprintf(s.rule, sizeof s.rule, "%s", vat_result_extract_rule(r));
    const char *x = vat_result_extracted(r, &s.extracted_len);
    s.extracted = malloc(s.extracted_len + 1);
    memcpy(s.extracted, x, s.extracted_len + 1);
    vat_result_free(r);
    return s;
}

static void assert_same(const struct seen *a, const struct seen *b, const char *id,
                        const char *role)
{
    if (a->gate != b->gate || a->trap != b->trap || a->score != b->score || a->work != b->work ||
        strcmp(a->code, b->code) != 0 || strcmp(a->reason, b->reason) != 0 ||
        strcmp(a->rule, b->rule) != 0 || a->extracted_len != b->extracted_len ||
        memcmp(a->extracted, b->extracted, a->extracted_len) != 0)
        fail_msg("%s %s: (%d %g %s trap %d work %lld: %s) vs (%d %g %s trap %d work %lld: %s)", id,
                 role, a->gate, a->score, a->code, a->trap, a->work, a->reason, b->gate, b->score,
                 b->code, b->trap, b->work, b->reason);
}

/* ---- the budget holds --------------------------------------------------------- */

static void test_budget_never_passed(void **state)
{
    struct corpus *c = *state;
    vat_corpus *vc = open_budget(c, SMALL_BUDGET);
    struct vat_cache_stats st;
    size_t most = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < c->n; i++) {
            struct seen s = score(vc, c->id[i], c->answer[0][i]);
            if (s.score != 1.0)
                fail_msg("gold of %s scores %g (%s: %s)", c->id[i], s.score, s.code, s.reason);
            free(s.extracted);
            vat_corpus_cache_stats(vc, &st);
            if (st.bytes > SMALL_BUDGET)
                fail_msg("after %s the cache counts %zu bytes, over its %zu", c->id[i], st.bytes,
                         SMALL_BUDGET);
            most = st.bytes > most ? st.bytes : most;
        }
    vat_corpus_cache_stats(vc, &st);
    /* the shards' highs add up to no more than the budget either */
    assert_true(st.peak <= SMALL_BUDGET);
    /* it was full, let tasks go and built them again */
    assert_true(most > SMALL_BUDGET / 2);
    assert_true(st.evictions > 0);
    assert_true(st.state_builds > c->n);
    print_message("  16 MiB over %zu tasks twice: at most %zu bytes counted (shards' peaks "
                  "%zu), %llu evictions, %llu task states built\n",
                  c->n, most, st.peak, st.evictions, st.state_builds);
    vat_corpus_close(vc);
}

/* ---- evicted and built again: the same verdict ----------------------------------- */

static void test_evicted_gives_the_same_verdict(void **state)
{
    struct corpus *c = *state;
    /* one byte keeps nothing: every score builds its task afresh */
    vat_corpus *keep = open_budget(c, VAT_CACHE_DEFAULT_BYTES), *none = open_budget(c, 1);
    size_t compared = 0;
    for (size_t i = 0; i < c->n; i += 7)
        for (int r = 0; r < ROLES; r++) {
            const char *a = c->answer[r][i];
            struct seen k1 = score(keep, c->id[i], a), k2 = score(keep, c->id[i], a);
            struct seen n1 = score(none, c->id[i], a), n2 = score(none, c->id[i], a);
            assert_same(&k1, &k2, c->id[i], roles[r]);
            assert_same(&k1, &n1, c->id[i], roles[r]);
            assert_same(&k1, &n2, c->id[i], roles[r]);
            free(k1.extracted);
            free(k2.extracted);
            free(n1.extracted);
            free(n2.extracted);
            compared++;
        }
    struct vat_cache_stats st;
    vat_corpus_cache_stats(none, &st);
    assert_int_equal(st.bytes, 0);
    assert_int_equal(st.states, 0);
    assert_true(st.state_builds >= 2 * compared);
    vat_corpus_close(keep);
    vat_corpus_close(none);
}

/* ---- threads on a small budget --------------------------------------------------- */

struct worker {
    const struct corpus *c;
    vat_corpus *vc;
    const struct seen *want; /* per task: the gold's and the trap's verdicts */
    size_t from, step;
    int bad;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    for (int round = 0; round < 2; round++)
        for (size_t i = w->from; i < w->c->n; i += w->step)
            for (int r = 0; r < 2; r++) {
                struct seen s = score(w->vc, w->c->id[i], w->c->answer[r][i]);
                const struct seen *x = &w->want[2 * (i / w->step) + (size_t)r];
                w->bad += s.score != x->score || s.trap != x->trap || strcmp(s.code, x->code) != 0;
                free(s.extracted);
            }
    return NULL;
}

static void test_threads_on_a_small_budget(void **state)
{
    struct corpus *c = *state;
    enum { N = 8, STEP = 23 };
    /* a slice of the corpus, each task scored by every thread */
    size_t n_want = 2 * (c->n / STEP + 1);
    struct seen *want = calloc(n_want, sizeof *want);
    vat_corpus *one = open_budget(c, VAT_CACHE_DEFAULT_BYTES);
    for (size_t i = 0; i < c->n; i += STEP)
        for (int r = 0; r < 2; r++) {
            want[2 * (i / STEP) + (size_t)r] = score(one, c->id[i], c->answer[r][i]);
            free(want[2 * (i / STEP) + (size_t)r].extracted);
        }
    vat_corpus_close(one);
    const size_t budget = (size_t)2 << 20;
    vat_corpus *vc = open_budget(c, budget);
    pthread_t th[N];
    struct worker w[N];
    for (int k = 0; k < N; k++) {
        w[k] = (struct worker){c, vc, want, 0, STEP, 0};
        assert_int_equal(pthread_create(&th[k], NULL, work, &w[k]), 0);
    }
    int bad = 0;
    for (int k = 0; k < N; k++) {
        pthread_join(th[k], NULL);
        bad += w[k].bad;
    }
    assert_int_equal(bad, 0);
    struct vat_cache_stats st;
    vat_corpus_cache_stats(vc, &st);
    assert_true(st.bytes <= budget);
    assert_true(st.peak <= budget);
    vat_corpus_close(vc);
    free(want);
}

/* ---- where the budget comes from ------------------------------------------------- */

static void test_budget_sources(void **state)
{
    struct corpus *c = *state;
    vat_corpus *vc;
    vat_error err;
    unsetenv("VAT_CACHE_BYTES");
    assert_int_equal(vat_corpus_open(&vc, c->root, &err), 0);
    assert_int_equal(vat_corpus_cache_budget(vc), VAT_CACHE_DEFAULT_BYTES);
    vat_corpus_close(vc);
    static const struct {
        const char *text;
        size_t bytes;
    } good[] = {{"1048576", 1048576}, {"64M", (size_t)64 << 20}, {"64MiB", (size_t)64 << 20},
                {"2g", (size_t)2 << 30}, {"512k", 512 << 10}, {"3KB", 3 << 10}};
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        setenv("VAT_CACHE_BYTES", good[k].text, 1);
        assert_int_equal(vat_corpus_open(&vc, c->root, &err), 0);
        assert_int_equal(vat_corpus_cache_budget(vc), good[k].bytes);
        vat_corpus_close(vc);
    }
    /* the option wins over the environment */
    vat_open_options o = VAT_OPEN_OPTIONS_INIT;
    o.cache_bytes = 12345;
    assert_int_equal(vat_corpus_open_opts(&vc, c->root, &o, &err), 0);
    assert_int_equal(vat_corpus_cache_budget(vc), 12345);
    vat_corpus_close(vc);
    static const char *const bad[] = {"lots", "0", "-1", "12Q", "1.5G", "99999999999999999999",
                                      "16 M"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        setenv("VAT_CACHE_BYTES", bad[k], 1);
        vc = NULL;
        if (vat_corpus_open(&vc, c->root, &err) == 0)
            fail_msg("VAT_CACHE_BYTES='%s' was accepted", bad[k]);
        assert_null(vc);
        assert_non_null(strstr(err.message, "VAT_CACHE_BYTES"));
    }
    unsetenv("VAT_CACHE_BYTES");
    /* options from a program built against a header with fewer members:
     * the ones it lacks keep their defaults */
    vat_open_options old = {.size = sizeof(size_t), .cache_bytes = 999};
    assert_int_equal(vat_corpus_open_opts(&vc, c->root, &old, &err), 0);
    assert_int_equal(vat_corpus_cache_budget(vc), VAT_CACHE_DEFAULT_BYTES);
    vat_corpus_close(vc);
    old.size = 0;
    assert_int_equal(vat_corpus_open_opts(&vc, c->root, &old, &err), -1);
    assert_int_equal(vat_corpus_open_opts(&vc, c->root, NULL, &err), 0);
    vat_corpus_close(vc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget_sources),
        cmocka_unit_test(test_budget_never_passed),
        cmocka_unit_test(test_evicted_gives_the_same_verdict),
        cmocka_unit_test(test_threads_on_a_small_budget),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

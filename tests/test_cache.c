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
 * the open with a message.
 *
 * Tool-use episodes keep their task's environment in the same cache: every
 * task's expert transcript replayed twice on a 4 MiB budget gives the
 * recorded observations and reward 1.0 while the count never passes the
 * budget; an environment evicted and built again gives the observation
 * bytes of one kept (transcripts and further calls, against a handle
 * that keeps nothing); and an episode held open while other threads
 * evict everything keeps answering, and submits, with the environment it
 * holds. */
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    json_t **calls; /* per task: its expert transcript, [[tool, arguments, observation], ...] */
};

/* Every task's expert transcript from the env table, in c->id's order. */
static int read_transcripts(struct corpus *c)
{
    json_t *by_id = json_object();
    for (int s = 0; s < 2; s++) {
        char *path = vat_xasprintf("%s/out/env/%s.jsonl", c->root, s ? "test" : "train");
        size_t len;
        char *data = vat_test_read_file(path, &len);
        free(path);
        for (char *p = data, *nl; p && *p; p = nl + 1) {
            nl = strchr(p, '\n');
            json_t *row = json_loadb(p, (size_t)(nl - p), 0, NULL);
            json_t *calls = json_array();
            const json_t *msgs = json_object_get(row, "completion");
            size_t i;
            json_t *m;
            json_array_foreach(msgs, i, m) {
                const json_t *fn = json_object_get(
                    json_array_get(json_object_get(m, "tool_calls"), 0), "function");
                if (!fn)
                    continue;
                json_array_append_new(
                    calls, json_pack("[OOO]", json_object_get(fn, "name"),
                                     json_object_get(fn, "arguments"),
                                     json_object_get(json_array_get(msgs, i + 1), "content")));
            }
            json_object_set_new(by_id, json_string_value(json_object_get(row, "task_id")), calls);
            json_decref(row);
        }
        free(data);
    }
    c->calls = calloc(c->n, sizeof *c->calls);
    for (size_t i = 0; i < c->n; i++) {
        c->calls[i] = json_incref(json_object_get(by_id, c->id[i]));
        if (json_array_size(c->calls[i]) < 2) {
            json_decref(by_id);
            return -1;
        }
    }
    json_decref(by_id);
    return 0;
}

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
    return c->n == CORPUS_TASKS ? read_transcripts(c) : -1;
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
        if (c->calls)
            json_decref(c->calls[i]);
    }
    free(c->calls);
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


/* ---- episodes: their environments in the same cache ------------------------------- */

static vat_episode *episode_open(vat_corpus *vc, const char *id)
{
    vat_episode *ep = NULL;
    vat_error err;
    if (vat_episode_open(vc, id, &ep, &err) != 0)
        fail_msg("episode on %s: %s", id, err.message);
    return ep;
}

/* Call k of a transcript on ep; its observation (borrowed). */
static const char *episode_call(vat_episode *ep, const json_t *call)
{
    const char *args = json_string_value(json_array_get(call, 1));
    vat_error err;
    if (vat_episode_step(ep, json_string_value(json_array_get(call, 0)), args, strlen(args),
                         &err) != 0)
        fail_msg("step: %s", err.message);
    return vat_episode_observation(ep, NULL);
}

static void test_episodes_within_budget(void **state)
{
    struct corpus *c = *state;
    const size_t budget = (size_t)4 << 20;
    vat_corpus *vc = open_budget(c, budget);
    struct vat_cache_stats st;
    size_t most = 0, steps = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < c->n; i++) {
            vat_episode *ep = episode_open(vc, c->id[i]);
            size_t k;
            json_t *call;
            json_array_foreach(c->calls[i], k, call) {
                const char *obs = episode_call(ep, call);
                if (strcmp(obs, json_string_value(json_array_get(call, 2))) != 0)
                    fail_msg("%s call %zu: %s\nrecorded: %s", c->id[i], k, obs,
                             json_string_value(json_array_get(call, 2)));
                vat_corpus_cache_stats(vc, &st);
                if (st.bytes > budget)
                    fail_msg("after %s call %zu the cache counts %zu bytes, over its %zu",
                             c->id[i], k, st.bytes, budget);
                most = st.bytes > most ? st.bytes : most;
                steps++;
            }
            if (vat_episode_reward(ep) != 1.0)
                fail_msg("%s: reward %g (%s)", c->id[i], vat_episode_reward(ep),
                         vat_episode_code(ep));
            vat_episode_close(ep);
        }
    vat_corpus_cache_stats(vc, &st);
    assert_true(st.peak <= budget);
    /* it held environments, let them go and built them again */
    assert_true(most > budget / 2);
    assert_true(st.evictions > 0);
    assert_true(st.env_builds > c->n);
    print_message("  4 MiB, %zu transcripts twice (%zu calls): at most %zu bytes counted, %llu "
                  "evictions, %llu environments built\n",
                  c->n, steps, most, st.evictions, st.env_builds);
    vat_corpus_close(vc);
}

/* The transcript's calls but its submit, a few more, then the submit:
 * every observation, and the verdict, as one text. */
static char *episode_text(vat_corpus *vc, const struct corpus *c, size_t i)
{
    static const char *const more_data[][2] = {
        {"describe", "{}"},
        {"sql", "{\"query\":\"SELECT x FROM nowhere\"}"},
        {"sql", "{\"query\":\"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                "WHERE i < 70) SELECT i, i * 0.1 FROM n\"}"},
    };
    static const char *const more_regex[][2] = {
        {"sample", "{\"n\":20}"}, {"try", "{\"pattern\":\"(\"}"}, {"try", "{\"pattern\":\"\\\\d+\"}"}};
    struct vat_buf b = VAT_BUF_INIT;
    vat_episode *ep = episode_open(vc, c->id[i]);
    bool regex = strstr(vat_episode_tools(ep), "\"try\"") != NULL;
    size_t n = json_array_size(c->calls[i]);
    for (size_t k = 0; k + 1 < n; k++)
        vat_buf_printf(&b, "%s\n", episode_call(ep, json_array_get(c->calls[i], k)));
    for (size_t k = 0; k < 3; k++) {
        const char *const *call = regex ? more_regex[k] : more_data[k];
        json_t *j = json_pack("[ss]", call[0], call[1]);
        vat_buf_printf(&b, "%s\n", episode_call(ep, j));
        json_decref(j);
    }
    vat_buf_printf(&b, "%s\n", episode_call(ep, json_array_get(c->calls[i], n - 1)));
    vat_buf_printf(&b, "%g %s %d %s", vat_episode_reward(ep), vat_episode_code(ep),
                   vat_episode_is_trap(ep), vat_episode_reason(ep));
    vat_episode_close(ep);
    return vat_buf_detach(&b);
}

static void test_evicted_env_gives_the_same_bytes(void **state)
{
    struct corpus *c = *state;
    /* one byte keeps nothing: every episode builds its environment afresh */
    vat_corpus *keep = open_budget(c, VAT_CACHE_DEFAULT_BYTES), *none = open_budget(c, 1);
    size_t compared = 0;
    for (size_t i = 0; i < c->n; i += 5) {
        char *k1 = episode_text(keep, c, i), *k2 = episode_text(keep, c, i);
        char *n1 = episode_text(none, c, i), *n2 = episode_text(none, c, i);
        if (strcmp(k1, k2) != 0 || strcmp(k1, n1) != 0 || strcmp(k1, n2) != 0)
            fail_msg("%s: kept:\n%s\nkept again:\n%s\nbuilt afresh:\n%s\nagain:\n%s", c->id[i],
                     k1, k2, n1, n2);
        assert_non_null(strstr(k1, "\n1 ok 0 "));
        free(k1);
        free(k2);
        free(n1);
        free(n2);
        compared++;
    }
    struct vat_cache_stats sk, sn;
    vat_corpus_cache_stats(keep, &sk);
    vat_corpus_cache_stats(none, &sn);
    /* kept: one environment a task; none: one an episode, and nothing counted */
    assert_int_equal(sk.env_builds, compared);
    assert_int_equal(sk.evictions, 0);
    assert_int_equal(sn.env_builds, 2 * compared);
    assert_int_equal(sn.bytes, 0);
    assert_int_equal(sn.states, 0);
    vat_corpus_close(keep);
    vat_corpus_close(none);
}

/* Other threads replaying transcripts and scoring golds (every task but
 * one) until told to stop. */
struct storm {
    const struct corpus *c;
    vat_corpus *vc;
    size_t from, step, spared;
    _Atomic size_t *done;
    _Atomic int *stop;
    int bad;
};

static void *storm_work(void *arg)
{
    struct storm *w = arg;
    while (!atomic_load(w->stop))
        for (size_t i = w->from; i < w->c->n && !atomic_load(w->stop); i += w->step) {
            if (i == w->spared)
                continue;
            vat_episode *ep = NULL;
            vat_error err;
            if (vat_episode_open(w->vc, w->c->id[i], &ep, &err) != 0) {
                w->bad++;
                continue;
            }
            size_t k;
            json_t *call;
            json_array_foreach(w->c->calls[i], k, call) {
                const char *args = json_string_value(json_array_get(call, 1));
                vat_episode_step(ep, json_string_value(json_array_get(call, 0)), args,
                                 strlen(args), &err);
                w->bad += strcmp(vat_episode_observation(ep, NULL),
                                 json_string_value(json_array_get(call, 2))) != 0;
            }
            w->bad += vat_episode_reward(ep) != 1.0;
            vat_episode_close(ep);
            vat_result *r;
            const char *gold = w->c->answer[0][i];
            if (vat_corpus_score(w->vc, w->c->id[i], gold, strlen(gold), VAT_EXTRACT_RAW, &r,
                                 &err) == 0) {
                w->bad += vat_result_score(r) != 1.0;
                vat_result_free(r);
            }
            atomic_fetch_add(w->done, 1);
        }
    return NULL;
}

static void wait_for(_Atomic size_t *done, size_t at_least)
{
    while (atomic_load(done) < at_least) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

static void test_episode_across_eviction_storm(void **state)
{
    struct corpus *c = *state;
    enum { N = 4 };
    const size_t budget = (size_t)16 << 20;
    vat_corpus *vc = open_budget(c, budget);
    /* a task with data tools and a long enough transcript */
    size_t t = 0;
    while (t < c->n && (json_array_size(c->calls[t]) < 4 ||
                        strcmp(json_string_value(json_array_get(json_array_get(c->calls[t], 0), 0)),
                               "describe") != 0))
        t++;
    assert_true(t < c->n);
    const json_t *calls = c->calls[t];
    size_t n = json_array_size(calls);
    /* the task's state as scoring leaves it, then with its environment,
     * then with a query's sandbox pooled: each counted */
    struct seen gold = score(vc, c->id[t], c->answer[0][t]);
    free(gold.extracted);
    struct vat_cache_stats st;
    vat_corpus_cache_stats(vc, &st);
    size_t scored = st.bytes;
    assert_int_equal(st.states, 1);
    vat_episode *ep = episode_open(vc, c->id[t]);
    for (size_t k = 0; k < 2; k++)
        assert_string_equal(episode_call(ep, json_array_get(calls, k)),
                            json_string_value(json_array_get(json_array_get(calls, k), 2)));
    vat_corpus_cache_stats(vc, &st);
    assert_int_equal(st.states, 1); /* the cache holds it */
    assert_int_equal(st.env_builds, 1);
    assert_true(st.bytes > scored + (100 << 10));
    _Atomic size_t done = 0;
    _Atomic int stop = 0;
    pthread_t th[N];
    struct storm w[N];
    for (int k = 0; k < N; k++) {
        w[k] = (struct storm){c, vc, (size_t)k, N, t, &done, &stop, 0};
        assert_int_equal(pthread_create(&th[k], NULL, storm_work, &w[k]), 0);
    }
    /* between calls, others' episodes enough to evict the whole cache */
    size_t calls_made = 1;
    for (size_t round = 0; round < 3; round++)
        for (size_t k = 2; k + 1 < n; k++) {
            wait_for(&done, 150 * calls_made++);
            const json_t *call = json_array_get(calls, k);
            assert_string_equal(episode_call(ep, call),
                                json_string_value(json_array_get(call, 2)));
        }
    wait_for(&done, 150 * calls_made);
    episode_call(ep, json_array_get(calls, n - 1));
    atomic_store(&stop, 1);
    int bad = 0;
    for (int k = 0; k < N; k++) {
        pthread_join(th[k], NULL);
        bad += w[k].bad;
    }
    assert_int_equal(bad, 0);
    assert_true(vat_episode_done(ep));
    assert_true(vat_episode_reward(ep) == 1.0);
    assert_string_equal(vat_episode_code(ep), "ok");
    /* its environment had been let go: the next episode builds it again */
    vat_corpus_cache_stats(vc, &st);
    unsigned long long builds = st.env_builds;
    assert_true(st.evictions > 0);
    assert_true(st.bytes <= budget && st.peak <= budget);
    vat_episode *again = episode_open(vc, c->id[t]);
    vat_corpus_cache_stats(vc, &st);
    assert_int_equal(st.env_builds, builds + 1);
    print_message("  one episode open across %zu others' episodes and scores on %d threads, "
                  "%llu evictions\n",
                  (size_t)atomic_load(&done), N, st.evictions);
    /* episodes closed after their corpus (Python's garbage collector may
     * do that): the one whose state the cache held, the one it let go */
    vat_corpus_close(vc);
    vat_episode_close(again);
    vat_episode_close(ep);
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
        cmocka_unit_test(test_episodes_within_budget),
        cmocka_unit_test(test_evicted_env_gives_the_same_bytes),
        cmocka_unit_test(test_episode_across_eviction_storm),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

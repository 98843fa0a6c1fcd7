/* test_memo.c — the verdict memo of SQL answers in libvat (lib/corpus.c):
 * over the default corpus (the repository's seeds.toml, built by the vat
 * binary under test), every rollout answer of every SQL-checked task (gold,
 * trap, malformed) and every mutant of its gold, scored twice with the memo
 * on and twice with it off (VAT_VERDICT_MEMO=0), gives the same verdict
 * each time (gate, score, code, reason, is_trap, extracted text, work
 * count), and the memo then serves the repeats; a query stopped by the
 * step budget is memoized like any other (its count is the same on every
 * run) and scores sql_budget again on repeat; many distinct answers
 * keep the memo inside its bounds (per task and in total) with verdicts
 * still right after eviction. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "corpus.h"
#include "libvat.h"
#include "mutate.h"
#include "testutil.h"
#include "vat.h"
#include "verifiers.h"

struct fix {
    char *root;
    vat_corpus *on, *off;
    vat_corpus *apart; /* memo off, each fixture on its own connection */
    const char **sql_ids; /* the SQL-checked tasks, borrowed from on */
    size_t n_sql;
};

static int setup(void **state)
{
    struct fix *f = calloc(1, sizeof *f);
    *state = f;
    const char *src = getenv("VAT_SOURCE_DIR"), *bin = getenv("VAT_BINARY");
    if (!src || !bin)
        return -1;
    f->root = vat_test_tmpdir("memo");
    char *cmd = vat_xasprintf("'%s' build --config '%s/seeds.toml' --root '%s' --jobs 2 "
                              ">/dev/null 2>&1",
                              bin, src, f->root);
    int rc = system(cmd);
    free(cmd);
    if (rc != 0)
        return -1;
    unsetenv("VAT_VERDICT_MEMO");
    if (vat_corpus_open(&f->on, f->root, NULL) != 0)
        return -1;
    setenv("VAT_VERDICT_MEMO", "0", 1);
    rc = vat_corpus_open(&f->off, f->root, NULL);
    if (rc == 0)
        rc = vat_corpus_open(&f->apart, f->root, NULL);
    unsetenv("VAT_VERDICT_MEMO");
    if (rc != 0)
        return -1;
    f->sql_ids = calloc(vat_corpus_task_count(f->on), sizeof *f->sql_ids);
    for (size_t i = 0; i < vat_corpus_task_count(f->on); i++) {
        const char *id = vat_corpus_task_id(f->on, i);
        const json_t *row = vat_corpus_row(f->on, id);
        if (strcmp(json_string_value(json_object_get(row, "checker")), "sql") == 0)
            f->sql_ids[f->n_sql++] = id;
    }
    return 0;
}

static int teardown(void **state)
{
    struct fix *f = *state;
    vat_corpus_close(f->on);
    vat_corpus_close(f->off);
    vat_corpus_close(f->apart);
    if (f->root)
        vat_test_rmtree(f->root);
    free(f->root);
    free(f->sql_ids);
    free(f);
    return 0;
}

/* One verdict, every field a user reads. */
struct seen {
    int gate, trap;
    double score;
    char code[32], reason[256], rule[16];
    char *extracted;
    long long work;
};

static struct seen score(vat_corpus *c, const char *id, const char *text, vat_extract_mode mode)
{
    struct seen s = {0};
    vat_result *r = NULL;
    vat_error err;
    assert_int_equal(vat_corpus_score(c, id, text, strlen(text), mode, &r, &err), 0);
    s.gate = vat_result_gate_passed(r);
    s.trap = vat_result_is_trap(r);
    s.score = vat_result_score(r);
    s.work = vat_result_work(r);
    snprintf(s.code, sizeof s.code, "%s", vat_result_code(r));
    snprintf(s.reason, sizeof s.reason, "%s", vat_result_reason(r));
    snprintf(s.rule, sizeof s.rule, "%s", vat_result_extract_rule(r));
    size_t n;
    const char *x = vat_result_extracted(r, &n);
    s.extracted = vat_xstrndup(x, n);
    vat_result_free(r);
    return s;
}

static void assert_same(const struct seen *a, const struct seen *b, const char *id)
{
    if (a->gate != b->gate || a->trap != b->trap || a->score != b->score ||
        strcmp(a->code, b->code) != 0 || strcmp(a->reason, b->reason) != 0 ||
        strcmp(a->rule, b->rule) != 0 || strcmp(a->extracted, b->extracted) != 0 ||
        a->work != b->work)
        fail_msg("%s: memo on gives %d/%g/%s/trap %d/work %lld '%s', off %d/%g/%s/trap %d/work "
                 "%lld '%s'",
                 id, a->gate, a->score, a->code, a->trap, a->work, a->reason, b->gate, b->score,
                 b->code, b->trap, b->work, b->reason);
}

/* Scores text for id twice on each handle (the task's fixtures served as
 * one set on on and off), and once with every fixture on a connection of
 * its own (VAT_SQL_FIXTURE_SET=0 when the task is first prepared on
 * apart); every verdict the same. */
static void four_ways(struct fix *f, const char *id, const char *text, vat_extract_mode mode)
{
    struct seen on1 = score(f->on, id, text, mode), on2 = score(f->on, id, text, mode);
    struct seen off1 = score(f->off, id, text, mode), off2 = score(f->off, id, text, mode);
    setenv("VAT_SQL_FIXTURE_SET", "0", 1);
    struct seen ap = score(f->apart, id, text, mode);
    unsetenv("VAT_SQL_FIXTURE_SET");
    assert_same(&on1, &off1, id);
    assert_same(&on2, &off1, id);
    assert_same(&off2, &off1, id);
    assert_same(&ap, &off1, id);
    free(on1.extracted);
    free(on2.extracted);
    free(off1.extracted);
    free(off2.extracted);
    free(ap.extracted);
}

static void test_on_and_off_agree_on_the_default_corpus(void **state)
{
    struct fix *f = *state;
    assert_true(f->n_sql >= 36); /* the three SQL templates, program forms besides */
    static const char *const roles[] = {"gold", "trap", "malformed"};
    size_t answers = 0, mutants = 0, trap_seen = 0, in_sets = 0, n_fixtures = 0;
    for (size_t i = 0; i < f->n_sql; i++) {
        const char *id = f->sql_ids[i];
        for (size_t r = 0; r < 3; r++) {
            const char *a = vat_corpus_rollout_answer(f->on, id, roles[r]);
            assert_non_null(a);
            four_ways(f, id, a, VAT_EXTRACT_RAW);
            /* the same answer in a chat completion: the key is the
             * extracted text, so it meets the raw answer's entry */
            char *wrapped = vat_xasprintf("<think>rows first</think>\n```sql\n%s\n```\n", a);
            four_ways(f, id, wrapped, VAT_EXTRACT_AUTO);
            free(wrapped);
            answers += 2;
            if (r == 1) {
                struct seen t = score(f->on, id, a, VAT_EXTRACT_RAW);
                trap_seen += (size_t)t.trap;
                free(t.extracted);
            }
        }
        const json_t *row = vat_corpus_row(f->on, id);
        const char *gold = vat_corpus_rollout_answer(f->on, id, "gold");
        json_t *spec = json_loads(json_string_value(json_object_get(row, "spec_json")), 0, NULL);
        assert_non_null(spec);
        bool ordered = json_is_true(json_object_get(spec, "ordered"));
        struct vat_verdict pv;
        struct vat_sql_prep *p = vat_sql_prepare(spec, f->root, NULL, NULL, 0, &pv);
        assert_non_null(p);
        n_fixtures += json_array_size(json_object_get(spec, "fixtures"));
        in_sets += vat_sql_prep_uses_fixture_set(p);
        vat_sql_prep_free(p);
        json_decref(spec);
        struct vat_mutants m = VAT_MUTANTS_INIT;
        struct vat_err e = {{0}};
        if (vat_mutate_sql(gold, ordered, &m, &e) == 0)
            for (size_t k = 0; k < m.n; k++) {
                four_ways(f, id, m.v[k].text, VAT_EXTRACT_RAW);
                mutants++;
            }
        vat_mutants_release(&m);
    }
    print_message("  %zu SQL tasks: %zu rollout answers and %zu mutants, each scored twice with "
                  "the memo on and off (fixture sets) and once a connection per fixture\n",
                  f->n_sql, answers, mutants);
    /* vat's own fixtures of a task share a schema: all served as sets */
    print_message("  %zu of %zu SQL tasks (%zu fixtures) served as fixture sets\n", in_sets,
                  f->n_sql, n_fixtures);
    assert_int_equal(in_sets, f->n_sql);
    assert_true(mutants > f->n_sql);
    assert_true(trap_seen > 0); /* traps are recognised through the memo too */
    struct vat_memo_stats on, off;
    vat_corpus_memo_stats(f->on, &on);
    vat_corpus_memo_stats(f->off, &off);
    assert_true(on.enabled);
    assert_false(off.enabled);
    assert_int_equal(off.entries, 0);
    assert_true(off.hits == 0);
    /* every pure verdict's repeat was a hit */
    assert_true(on.entries > 0);
    assert_true(on.hits >= on.entries);
    assert_true(on.bytes <= on.bytes_cap);
}

static void test_step_budget_memoized(void **state)
{
    struct fix *f = *state;
    const char *id = f->sql_ids[0];
    const char *q = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r "
                    "WHERE x < 100000000) SELECT count(*) FROM r";
    struct vat_memo_stats before, after;
    vat_corpus_memo_stats(f->on, &before);
    struct seen a = score(f->on, id, q, VAT_EXTRACT_RAW);
    struct seen b = score(f->on, id, q, VAT_EXTRACT_RAW);
    struct seen c = score(f->off, id, q, VAT_EXTRACT_RAW);
    vat_corpus_memo_stats(f->on, &after);
    assert_string_equal(a.code, "sql_budget");
    assert_non_null(strstr(a.reason, "budget of"));
    assert_true(a.work > 0);
    assert_same(&a, &b, id);
    assert_same(&a, &c, id);
    /* the first score ran the query and kept its verdict, the second was
     * served from the memo */
    assert_true(after.misses == before.misses + 1);
    assert_true(after.hits == before.hits + 1);
    assert_int_equal(after.entries, before.entries + 1);
    free(a.extracted);
    free(b.extracted);
    free(c.extracted);
}

static void test_eviction_bounds_memory(void **state)
{
    struct fix *f = *state;
    vat_corpus *c;
    assert_int_equal(vat_corpus_open(&c, f->root, NULL), 0);
    enum { PER_TASK = 4, TASKS = 6, DISTINCT = 40 };
    /* 1 KiB a shard (of 16): two entries of these answers each, under the
     * per-task bound, so the total bound is the one that evicts */
    const size_t total = 16 * 1024;
    vat_corpus_memo_limits(c, PER_TASK, total, 16384);
    size_t peak_bytes = 0, peak_entries = 0;
    for (int k = 0; k < DISTINCT; k++)
        for (size_t t = 0; t < TASKS && t < f->n_sql; t++) {
            const char *id = f->sql_ids[t];
            const char *gold = vat_corpus_rollout_answer(c, id, "gold");
            char *a = vat_xasprintf("%s\n-- sample %d", gold, k);
            struct seen s = score(c, id, a, VAT_EXTRACT_RAW);
            assert_true(s.score == 1.0);
            assert_string_equal(s.code, "ok");
            free(s.extracted);
            free(a);
            struct vat_memo_stats st;
            vat_corpus_memo_stats(c, &st);
            peak_bytes = st.bytes > peak_bytes ? st.bytes : peak_bytes;
            peak_entries = st.entries > peak_entries ? st.entries : peak_entries;
            assert_true(st.bytes <= total);
            assert_true(st.entries <= (size_t)PER_TASK * TASKS);
        }
    assert_true(peak_entries > 0);
    assert_true(peak_entries < (size_t)PER_TASK * TASKS);
    /* the first answers were evicted long ago: scored again, still right */
    for (size_t t = 0; t < TASKS && t < f->n_sql; t++) {
        const char *id = f->sql_ids[t];
        const char *gold = vat_corpus_rollout_answer(c, id, "gold");
        char *a = vat_xasprintf("%s\n-- sample %d", gold, 0);
        struct seen s = score(c, id, a, VAT_EXTRACT_RAW);
        assert_true(s.score == 1.0);
        free(s.extracted);
        free(a);
        const char *trap = vat_corpus_rollout_answer(c, id, "trap");
        s = score(c, id, trap, VAT_EXTRACT_RAW);
        struct seen want = score(f->off, id, trap, VAT_EXTRACT_RAW);
        assert_true(s.score < 1.0);
        assert_same(&s, &want, id);
        free(s.extracted);
        free(want.extracted);
    }
    /* the per-task bound alone: one task, many answers, a large total */
    vat_corpus_memo_limits(c, PER_TASK, (size_t)64 << 20, 16384);
    const char *id = f->sql_ids[0];
    const char *gold = vat_corpus_rollout_answer(c, id, "gold");
    struct vat_memo_stats st0, st1;
    vat_corpus_memo_stats(c, &st0);
    for (int k = 0; k < DISTINCT; k++) {
        char *a = vat_xasprintf("%s\n-- again %d", gold, k);
        struct seen s = score(c, id, a, VAT_EXTRACT_RAW);
        assert_true(s.score == 1.0);
        free(s.extracted);
        free(a);
    }
    vat_corpus_memo_stats(c, &st1);
    assert_true(st1.entries <= st0.entries + PER_TASK);
    /* an answer over the size bound is checked, not kept */
    vat_corpus_memo_limits(c, PER_TASK, (size_t)64 << 20, 8);
    vat_corpus_memo_stats(c, &st0);
    char *a = vat_xasprintf("%s\n-- long", gold);
    struct seen s1 = score(c, id, a, VAT_EXTRACT_RAW), s2 = score(c, id, a, VAT_EXTRACT_RAW);
    assert_same(&s1, &s2, id);
    assert_true(s1.score == 1.0);
    vat_corpus_memo_stats(c, &st1);
    assert_true(st1.hits == st0.hits);
    free(s1.extracted);
    free(s2.extracted);
    free(a);
    print_message("  eviction: peak %zu entries, %zu bytes of a %zu-byte bound\n", peak_entries,
                  peak_bytes, total);
    vat_corpus_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_on_and_off_agree_on_the_default_corpus),
        cmocka_unit_test(test_step_budget_memoized),
        cmocka_unit_test(test_eviction_bounds_memory),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* test_date_window.c — what is particular to the date_window template: over
 * 60 tasks every fixture holds a payment at D1 00:00:00, one late on D2 and
 * one a second outside each bound, so the trap (paid_at <= 'D2' as text) and
 * the other bound mistakes (exclusive bounds, the end of D2 taken as D2+1
 * 00:00:00, the start of D1 taken from the day before) all miss gold; the
 * prompt names both days, also for a one-day window; confirm catches a writer
 * bug.  Admission within the redraws allowed, "same seed, same bytes", the
 * prompt's data section, confirm refusing the trap as gold and a nudged gold,
 * and the golden cases of tests/data/cases/date_window.txt (both bounds,
 * exact cents, broken timestamps, checker cases) are checked for every
 * analytics template by tests/test_analytics.c.
 * The program form: every variant CSV has a payment at D1 00:00:00, one a
 * second before, one at D2+1 00:00:00 and one on D2 after midnight, blank
 * payer and method cells and its own corner case (D2 at 23:59:59 with no
 * payment inside the window, a payment of 0.01 and one at D2 00:00:00, a
 * blank amount and the largest one); the trap query differs from gold on
 * every fixture and the other bound mistakes (exclusive bounds, the end of
 * D2 written as 'D2 23:59:59' exclusive or 'D2+1 00:00:00' inclusive, the
 * main fixture's total written out) fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "analytics.h"
#include "csvio.h"
#include "jsonout.h"
#include "sqlgen.h"
#include "template.h"
#include "testutil.h"
#include "values.h"
#include "verifiers.h"

#define SEED 33071u /* also in tests/data/cases/date_window.txt */
#define NTASKS 60
#define MAX_ATTEMPTS 40

extern const struct vat_template vat_tmpl_date_window;
static const struct vat_template *const T = &vat_tmpl_date_window;

/* ---- sixty tasks ------------------------------------------------------------ */

/* The ways to read the window, over timestamp text "YYYY-MM-DD HH:MM:SS";
 * lo/hi are the bounds of each as text. */
enum way {
    WAY_GOLD,         /* D1 00:00:00 <= at <= D2 23:59:59                  */
    WAY_BARE_DATES,   /* at >= 'D1' AND at <= 'D2' (the trap)              */
    WAY_EXCL_LOWER,   /* D1 left out: date > D1                             */
    WAY_EXCL_UPPER,   /* D2 left out: date < D2                             */
    WAY_NEXT_MIDNIGHT,/* at <= 'D2+1 00:00:00'                              */
    WAY_PREV_SECOND,  /* at >= 'D1-1 23:59:59' (lower bound one second off) */
    N_WAYS
};

static bool in_window(enum way w, const char *at, const char *d1, const char *d2,
                      const char *next, const char *prev)
{
    char day[11];
    memcpy(day, at, 10);
    day[10] = 0;
    switch (w) {
    case WAY_GOLD: return strcmp(day, d1) >= 0 && strcmp(day, d2) <= 0;
    case WAY_BARE_DATES: return strcmp(at, d1) >= 0 && strcmp(at, d2) <= 0;
    case WAY_EXCL_LOWER: return strcmp(day, d1) > 0 && strcmp(day, d2) <= 0;
    case WAY_EXCL_UPPER: return strcmp(day, d1) >= 0 && strcmp(day, d2) < 0;
    case WAY_NEXT_MIDNIGHT:
        return strcmp(day, d1) >= 0 && strcmp(at, next) <= 0;
    case WAY_PREV_SECOND:
        return strcmp(at, prev) >= 0 && strcmp(day, d2) <= 0;
    case N_WAYS: break;
    }
    return false;
}

static void test_sixty_tasks(void **state)
{
    struct vat_tt_env *v = *state;
    int midnight_d2 = 0, one_day = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        /* every file shown whole: the value form, whatever its size */
        vat_tt_draw(v, &t, NULL, i, 1 << 20, MAX_ATTEMPTS, &r);
        assert_int_equal(json_array_size(t.fixture[0].columns), 5);

        const char *d1 = json_string_value(json_object_get(t.params, "from"));
        const char *d2 = json_string_value(json_object_get(t.params, "to"));
        int32_t n1, n2;
        assert_int_equal(vat_parse_date(d1, &n1), 0);
        assert_int_equal(vat_parse_date(d2, &n2), 0);
        assert_true(n1 <= n2);
        assert_non_null(strstr(t.prompt, d1));
        assert_non_null(strstr(t.prompt, d2));
        one_day += n1 == n2;
        char next[20], prev[20], d1_mid[20], d2_mid[20];
        vat_fmt_timestamp((int64_t)(n2 + 1) * 86400, next);
        vat_fmt_timestamp((int64_t)n1 * 86400 - 1, prev);
        vat_fmt_timestamp((int64_t)n1 * 86400, d1_mid);
        vat_fmt_timestamp((int64_t)n2 * 86400, d2_mid);

        /* The planted rows, found in the file as written. */
        struct vat_csv c = VAT_CSV_INIT;
        struct vat_err e = {{0}};
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
        bool at_d1 = false, late_d2 = false, before = false, after = false, mid_d2 = false;
        int64_t sum[N_WAYS] = {0};
        for (size_t k = 1; k < c.nrows; k++) {
            const char *at = vat_csv_get(&c, k, 4);
            at_d1 = at_d1 || strcmp(at, d1_mid) == 0;
            before = before || strcmp(at, prev) == 0;
            after = after || strcmp(at, next) == 0;
            mid_d2 = mid_d2 || (n1 != n2 && strcmp(at, d2_mid) == 0);
            late_d2 = late_d2 || (strncmp(at, d2, 10) == 0 && strcmp(at + 11, "23:00:00") >= 0);
            int64_t cents;
            assert_int_equal(vat_parse_cents(vat_csv_get(&c, k, 3), &cents), 0);
            for (int w = 0; w < N_WAYS; w++)
                if (in_window((enum way)w, at, d1, d2, next, prev))
                    sum[w] += cents;
        }
        vat_csv_release(&c);
        assert_true(at_d1 && late_d2 && before && after);
        midnight_d2 += mid_d2;

        /* Gold is the whole-day sum recomputed here; the trap is the bare
         * date comparison, and every other bound mistake misses too. */
        json_t *gold = json_loads(t.gold, JSON_DECODE_ANY, NULL);
        json_t *trap = json_loads(t.trap, JSON_DECODE_ANY, NULL);
        assert_true(json_real_value(gold) == (double)sum[WAY_GOLD] / 100.0);
        assert_true(json_real_value(trap) == (double)sum[WAY_BARE_DATES] / 100.0);
        assert_false(vat_close(json_real_value(gold), json_real_value(trap), 1e-9, 1e-6));
        assert_true(json_real_value(trap) < json_real_value(gold));
        for (int w = 1; w < N_WAYS; w++) {
            char ans[40];
            snprintf(ans, sizeof ans, "%.2f", (double)sum[w] / 100.0);
            struct vat_verdict vd = vat_tt_check(&t, ans);
            if (!vd.gate_passed || vd.score != 0.0)
                fail_msg("%s: mistake %d (%s) scored %g", t.id, w, ans, vd.score);
        }
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
    print_message("  %d/%d tasks have a payment at D2 00:00:00, %d a one-day window\n",
                  midnight_d2, NTASKS, one_day);
    assert_true(midnight_d2 >= 10);
}

/* ---- the prompt ----------------------------------------------------------- */

static void test_prompt_states_the_question(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 3, 1 << 20, MAX_ATTEMPTS, &r);
    const char *d1 = json_string_value(json_object_get(t.params, "from"));
    const char *d2 = json_string_value(json_object_get(t.params, "to"));
    char expect[160];
    snprintf(expect, sizeof expect, "made from %s through %s inclusive", d1, d2);
    assert_non_null(strstr(t.prompt, expect));
    assert_non_null(strstr(t.prompt, "whatever its time of day"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 1e-6"));
    vat_tt_assert_states_shape(&t);
    assert_true(json_is_true(json_object_get(t.params, "inclusive")));
    vat_task_clear(&t);
}

static void test_one_day_window_prompt(void **state)
{
    struct vat_tt_env *v = *state;
    /* A window of one day reads as "made on D1". */
    json_t *cfg = json_deep_copy(v->cfg);
    json_object_set_new(cfg, "window_min", json_integer(1));
    json_object_set_new(cfg, "window_max", json_integer(1));
    /* the value form (its trap is the number 0): every file shown whole */
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = cfg, .inline_max_bytes = 1 << 20};
    for (uint32_t i = 0; i < 10; i++) {
        struct vat_task t;
        struct vat_replay r;
        struct vat_err e = {{0}};
        vat_task_init(&t, T, i, v->dir);
        if (vat_task_draw(&t, 0, &o, &r, &e) != 0)
            fail_msg("%s", e.msg);
        const char *d1 = json_string_value(json_object_get(t.params, "from"));
        assert_string_equal(d1, json_string_value(json_object_get(t.params, "to")));
        /* every phrasing of the question names the day, and the rule
         * after it says the whole day counts */
        char expect[80];
        snprintf(expect, sizeof expect, "payments made on %s", d1);
        assert_non_null(strstr(t.prompt, expect));
        snprintf(expect, sizeof expect, "falls on %s, whatever its time of day", d1);
        assert_non_null(strstr(t.prompt, expect));
        /* Comparing with the bare date drops the whole day: the trap is 0. */
        assert_string_equal(t.trap, "0.0");
        assert_true(r.v[VAT_ROLE_TRAP].gate_passed && r.v[VAT_ROLE_TRAP].score == 0.0);
        vat_task_clear(&t);
    }
    json_decref(cfg);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 21, 6000, MAX_ATTEMPTS, &r);
    /* Move the payment at D1 00:00:00 one second back, as a writer with an
     * off-by-one in its clock would: the file's window total drops, the
     * planted one does not. */
    const char *d1 = json_string_value(json_object_get(t.params, "from"));
    int32_t n1;
    assert_int_equal(vat_parse_date(d1, &n1), 0);
    char mid[20], prev[20];
    vat_fmt_timestamp((int64_t)n1 * 86400, mid);
    vat_fmt_timestamp((int64_t)n1 * 86400 - 1, prev);
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    size_t k = 1;
    while (strcmp(vat_csv_get(&c, k, 4), mid) != 0)
        k++;
    assert_true(vat_csv_set(&c, k, 4, prev));
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    vat_csv_release(&c);
    free(t.gold);
    t.gold = NULL;
    assert_int_equal(T->reference(&t, &e), 0);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "planted"));
    vat_task_clear(&t);
}

/* ---- the program form ------------------------------------------------------ */

/* The first fixture on which query's rows differ from gold's (0 is the
 * main one), or -1 when they agree on all. */
static int first_difference(const struct vat_task *t, const char *query)
{
    struct vat_err e = {{0}};
    json_t *g = vat_sqlgen_run_all(t, t->gold, &e), *q = vat_sqlgen_run_all(t, query, &e);
    assert_non_null(g);
    if (!q) {
        json_decref(g);
        return 0;
    }
    int at = -1;
    for (size_t i = 0; at < 0 && i < json_array_size(g); i++)
        if (!vat_sqlgen_rows_equal(json_array_get(g, i), json_array_get(q, i), true, 1e-9, 1e-6,
                                   NULL, 0))
            at = (int)i;
    json_decref(g);
    json_decref(q);
    return at;
}

/* Whether query's rows differ from gold's on fixture f. */
static bool differs_on(const struct vat_task *t, const char *query, int f)
{
    struct vat_verdict v;
    json_t *g = vat_sql_run(t->spec, t->root, t->fixture[f].path, t->gold, strlen(t->gold), &v);
    json_t *q = vat_sql_run(t->spec, t->root, t->fixture[f].path, query, strlen(query), &v);
    assert_non_null(g);
    bool differ = !q || !vat_sqlgen_rows_equal(g, q, true, 1e-9, 1e-6, NULL, 0);
    json_decref(g);
    json_decref(q);
    return differ;
}

/* Variant k's bounds and corner cases, read back from its file; returns
 * how many blank payer or method cells it has. */
static int check_variant_corners(const struct vat_task *t, int k, int32_t n1, int32_t n2)
{
    char d1_mid[20], prev[20], next[20], d2_mid[20], d2_end[20], d1_end[20];
    vat_fmt_timestamp((int64_t)n1 * 86400, d1_mid);
    vat_fmt_timestamp((int64_t)n1 * 86400 - 1, prev);
    vat_fmt_timestamp((int64_t)(n2 + 1) * 86400, next);
    vat_fmt_timestamp((int64_t)n2 * 86400, d2_mid);
    vat_fmt_timestamp((int64_t)(n2 + 1) * 86400 - 1, d2_end);
    vat_fmt_timestamp((int64_t)(n1 + 1) * 86400 - 1, d1_end);
    char max[32];
    snprintf(max, sizeof max, "%ld.00",
             (long)json_integer_value(json_object_get(t->cfg, "amount_max")));
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t->root, t->fixture[k].path, &e), 0);
    bool at_d1 = false, before = false, after = false, late_d2 = false;
    bool end_d2 = false, cent_d1 = false, mid_d2 = false, blank_d1 = false, largest = false;
    int blanks = 0, inside = 0;
    for (size_t i = 1; i < c.nrows; i++) {
        const char *at = vat_csv_get(&c, i, 4), *amount = vat_csv_get(&c, i, 3);
        at_d1 = at_d1 || strcmp(at, d1_mid) == 0;
        before = before || strcmp(at, prev) == 0;
        after = after || strcmp(at, next) == 0;
        late_d2 = late_d2 || (strcmp(at, d2_mid) > 0 && strcmp(at, next) < 0);
        end_d2 = end_d2 || strcmp(at, d2_end) == 0;
        cent_d1 = cent_d1 || (strcmp(at, d1_mid) == 0 && strcmp(amount, "0.01") == 0);
        mid_d2 = mid_d2 || strcmp(at, d2_mid) == 0;
        blank_d1 = blank_d1 || (strcmp(at, d1_end) == 0 && !*amount);
        largest = largest || strcmp(amount, max) == 0;
        inside += strcmp(at, d1_end) > 0 && strcmp(at, d2_mid) < 0;
        blanks += !*vat_csv_get(&c, i, 1) + !*vat_csv_get(&c, i, 2);
    }
    vat_csv_release(&c);
    assert_true(at_d1 && before && after && late_d2);
    if (k == 1)
        assert_true(end_d2 && inside == 0);
    if (k == 2)
        assert_true(cent_d1 && mid_d2);
    if (k == 3)
        assert_true(blank_d1 && largest);
    return blanks;
}

static void test_program_form(void **state)
{
    (void)state;
    struct vat_tt_env *v = vat_tt_env_new(T, SEED);
    json_object_set_new(v->cfg, "answer_form", json_string("sql"));
    for (uint32_t i = 0; i < 12; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, MAX_ATTEMPTS, &r);
        vat_tt_assert_replays(&r);
        assert_string_equal(vat_task_answer_form(&t), "sql");
        assert_int_equal(t.n_fixtures, 4);
        const char *table = json_string_value(json_object_get(json_object_get(t.spec, "load"),
                                                              "table"));
        const char *d1 = vat_tt_param_str(&t, "from"), *d2 = vat_tt_param_str(&t, "to");
        int32_t n1, n2;
        assert_int_equal(vat_parse_date(d1, &n1), 0);
        assert_int_equal(vat_parse_date(d2, &n2), 0);
        char expect[160];
        snprintf(expect, sizeof expect, "made from %s through %s inclusive", d1, d2);
        assert_non_null(strstr(t.prompt, expect));
        snprintf(expect, sizeof expect, "CREATE TABLE %s (", table);
        assert_non_null(strstr(t.prompt, expect));
        assert_non_null(strstr(t.gold, table));
        int blanks = 0;
        for (int k = 1; k <= 3; k++)
            blanks += check_variant_corners(&t, k, n1, n2);
        assert_true(blanks > 0);

        /* The trap differs from gold on every fixture. */
        struct vat_err e = {{0}};
        json_t *g = vat_sqlgen_run_all(&t, t.gold, &e), *tr = vat_sqlgen_run_all(&t, t.trap, &e);
        assert_non_null(g);
        assert_non_null(tr);
        for (size_t f = 0; f < json_array_size(g); f++)
            assert_false(vat_sqlgen_rows_equal(json_array_get(g, f), json_array_get(tr, f), true,
                                               1e-9, 1e-6, NULL, 0));

        char next[11];
        vat_fmt_date(n2 + 1, next);
        char *miss[6];
        miss[0] = vat_xasprintf("SELECT SUM(amount) AS x FROM %s WHERE date(paid_at) > '%s' AND "
                                "date(paid_at) < '%s'", table, d1, d2);
        miss[1] = vat_xasprintf("SELECT SUM(amount) AS x FROM %s WHERE date(paid_at) >= '%s' AND "
                                "date(paid_at) < '%s'", table, d1, d2);
        miss[2] = vat_xasprintf("SELECT SUM(amount) AS x FROM %s WHERE paid_at >= '%s 00:00:00' "
                                "AND paid_at < '%s 23:59:59'", table, d1, d2);
        miss[3] = vat_xasprintf("SELECT SUM(amount) AS x FROM %s WHERE paid_at >= '%s' AND "
                                "paid_at <= '%s 00:00:00'", table, d1, next);
        miss[4] = vat_xasprintf("SELECT SUM(amount) AS x FROM %s WHERE paid_at > '%s 00:00:00' "
                                "AND paid_at < '%s'", table, d1, next);
        json_t *main_rows = json_array_get(g, 0);
        miss[5] = vat_xasprintf("SELECT %.2f AS x",
                                json_number_value(json_array_get(json_array_get(main_rows, 0),
                                                                 0)));
        for (int m = 0; m < 6; m++) {
            struct vat_verdict vd = vat_tt_check(&t, miss[m]);
            if (!vd.gate_passed || vd.score != 0.0)
                fail_msg("%s: near-miss %d scored %g (%s)", t.id, m, vd.score, vd.reason);
            int at = first_difference(&t, miss[m]);
            assert_true(at >= 0);
            /* 23:59:59 taken as the end, exclusive: variant 1 shows it */
            if (m == 2)
                assert_true(differs_on(&t, miss[m], 1));
            /* the main fixture's total passes there only */
            if (m == 5)
                assert_true(at >= 1);
            free(miss[m]);
        }
        json_decref(g);
        json_decref(tr);
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

/* A one-day window in the program form: gold compares the day with
 * '=', the trap (bare dates) finds no payment at all, every variant still
 * holds the bounds. */
static void test_program_form_one_day(void **state)
{
    (void)state;
    struct vat_tt_env *v = vat_tt_env_new(T, SEED);
    json_object_set_new(v->cfg, "answer_form", json_string("sql"));
    json_object_set_new(v->cfg, "window_min", json_integer(1));
    json_object_set_new(v->cfg, "window_max", json_integer(1));
    for (uint32_t i = 0; i < 6; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, MAX_ATTEMPTS, &r);
        vat_tt_assert_replays(&r);
        const char *d1 = vat_tt_param_str(&t, "from");
        int32_t n1;
        assert_int_equal(vat_parse_date(d1, &n1), 0);
        char expect[80];
        snprintf(expect, sizeof expect, "date(paid_at) = '%s'", d1);
        assert_non_null(strstr(t.gold, expect));
        snprintf(expect, sizeof expect, "payments made on %s", d1);
        assert_non_null(strstr(t.prompt, expect));
        for (int k = 1; k <= 3; k++)
            check_variant_corners(&t, k, n1, n1);
        /* the trap's sum is NULL on every fixture */
        struct vat_err e = {{0}};
        json_t *tr = vat_sqlgen_run_all(&t, t.trap, &e);
        assert_non_null(tr);
        for (size_t f = 0; f < json_array_size(tr); f++)
            assert_true(json_is_null(json_array_get(json_array_get(json_array_get(tr, f), 0), 0)));
        json_decref(tr);
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

int main(void)
{
    struct vat_tt_env *v = vat_tt_env_new(T, SEED);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_sixty_tasks, v),
        cmocka_unit_test_prestate(test_prompt_states_the_question, v),
        cmocka_unit_test_prestate(test_one_day_window_prompt, v),
        cmocka_unit_test_prestate(test_confirm_catches_a_writer_bug, v),
        cmocka_unit_test(test_program_form),
        cmocka_unit_test(test_program_form_one_day),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    vat_tt_env_free(v);
    return rc;
}

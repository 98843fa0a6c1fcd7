/* test_dedupe_aggregate.c — what is particular to the dedupe_aggregate
 * template: over 60 tasks the trap is armed (some user's total differs beyond
 * tolerance) and every retried event repeats its payload with a new
 * delivery_id and a later received_at; the prompt states the retry rule;
 * confirm catches a writer bug.  Admission within the redraws allowed, "same
 * seed, same bytes", the prompt's data section, confirm refusing the trap as
 * gold and a nudged gold, and the golden cases of
 * tests/data/cases/dedupe_aggregate.txt (an event delivered three times, a
 * user whose only event was retried, retries whose payload differs, checker
 * cases) are checked for every analytics template by tests/test_analytics.c.
 * The program form: every variant CSV holds its corner cases (an event
 * delivered three times and another of the same amount, a user with only
 * blank amounts, blank sources, the variant's boundary amount), the trap
 * query differs from gold on every fixture, and plausible near-misses (a
 * sum of distinct amounts, SUM without COALESCE, a filter on amount > 0, a
 * dedupe on user and amount, the main fixture's totals written out, the
 * other order) fail; gold is the same text shape whatever the names. */
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

#define SEED 51123u /* also in tests/data/cases/dedupe_aggregate.txt */
#define NTASKS 60
#define MAX_ATTEMPTS 40

extern const struct vat_template vat_tmpl_dedupe_aggregate;
static const struct vat_template *const T = &vat_tmpl_dedupe_aggregate;

/* ---- sixty tasks ------------------------------------------------------------ */

/* Checks the retry rule on the file as written; returns the largest
 * number of deliveries of one event. */
static int check_retries(const struct vat_task *t)
{
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t->root, t->fixture[0].path, &e), 0);
    int most = 1;
    for (size_t i = 1; i < c.nrows; i++) {
        int copies = 1;
        for (size_t j = 1; j < c.nrows; j++) {
            if (j == i)
                continue;
            /* delivery ids never repeat */
            assert_string_not_equal(vat_csv_get(&c, i, 0), vat_csv_get(&c, j, 0));
            if (strcmp(vat_csv_get(&c, i, 2), vat_csv_get(&c, j, 2)) != 0)
                continue;
            copies++;
            for (size_t col = 3; col < 6; col++)
                assert_string_equal(vat_csv_get(&c, i, col), vat_csv_get(&c, j, col));
            /* a later row of the same event arrived strictly later */
            if (j > i)
                assert_true(strcmp(vat_csv_get(&c, j, 1), vat_csv_get(&c, i, 1)) > 0);
        }
        if (copies > most)
            most = copies;
        /* rows are in arrival order */
        if (i > 1)
            assert_true(strcmp(vat_csv_get(&c, i - 1, 1), vat_csv_get(&c, i, 1)) <= 0);
    }
    vat_csv_release(&c);
    return most;
}

static void test_sixty_tasks(void **state)
{
    struct vat_tt_env *v = *state;
    int three_copies = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        /* every file shown whole: the value form, whatever its size */
        vat_tt_draw(v, &t, NULL, i, 1 << 20, MAX_ATTEMPTS, &r);
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        assert_string_equal(json_string_value(json_object_get(t.params, "count_once_per")),
                            "event_id");

        int most = check_retries(&t);
        assert_true(most >= 2 && most <= 3);
        three_copies += most == 3;

        /* Armed: same users, every trap total at least gold's, one beyond
         * the tolerance. */
        json_t *gold = json_loads(t.gold, 0, NULL), *trap = json_loads(t.trap, 0, NULL);
        assert_non_null(gold);
        assert_non_null(trap);
        assert_int_equal(json_object_size(gold), json_object_size(trap));
        const char *k;
        json_t *g;
        int differ = 0;
        json_object_foreach(gold, k, g) {
            json_t *x = json_object_get(trap, k);
            assert_non_null(x);
            assert_true(json_real_value(x) >= json_real_value(g));
            differ += !vat_close(json_real_value(x), json_real_value(g), 1e-9, 1e-6);
        }
        assert_true(differ >= 1);
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
    print_message("  %d/%d tasks deliver an event three times\n", three_copies, NTASKS);
    assert_true(three_copies >= 6);
}

/* ---- the prompt ----------------------------------------------------------- */

static void test_prompt_states_the_question(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 3, 1 << 20, MAX_ATTEMPTS, &r);
    /* every phrasing of the question counts each distinct event once */
    assert_non_null(strstr(t.prompt, "distinct `event_id`"));
    assert_non_null(strstr(t.prompt, "exactly once"));
    assert_non_null(strstr(t.prompt, "same `event_id`, `user`, `source` and `amount`"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 1e-6"));
    assert_non_null(strstr(t.prompt, "relative tolerance of 1e-9"));
    assert_non_null(strstr(t.prompt, "{\"<user>\": <total>"));
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 21, 6000, MAX_ATTEMPTS, &r);
    /* Drop the first delivery of the file, as a writer that lost a row
     * would: if it was an event's only delivery, the file's totals change
     * and the planted ones do not; otherwise drop another. */
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    size_t k = 1;
    for (;; k++) {
        int copies = 0;
        for (size_t j = 1; j < c.nrows; j++)
            copies += strcmp(vat_csv_get(&c, j, 2), vat_csv_get(&c, k, 2)) == 0;
        if (copies == 1)
            break;
    }
    struct vat_csv_row gone = c.row[k];
    memmove(&c.row[k], &c.row[k + 1], (c.nrows - k - 1) * sizeof c.row[0]);
    c.row[c.nrows - 1] = gone;
    c.nrows--;
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    c.nrows++;
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
        return 0; /* a query that fails to run fails on the main fixture */
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

/* The corner cases of variant k, read back from its file. */
static void check_variant_corners(const struct vat_task *t, int k)
{
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t->root, t->fixture[k].path, &e), 0);
    bool triple = false, blank_source = false, boundary = false, blank_only_user = false;
    for (size_t i = 1; i < c.nrows; i++) {
        int copies = 0;
        for (size_t j = 1; j < c.nrows; j++)
            copies += strcmp(vat_csv_get(&c, i, 2), vat_csv_get(&c, j, 2)) == 0;
        triple = triple || copies == 3;
        blank_source = blank_source || !*vat_csv_get(&c, i, 4);
        const char *amount = vat_csv_get(&c, i, 5);
        boundary = boundary || (k == 1 && strcmp(amount, "0.00") == 0) ||
                   (k == 2 && strcmp(amount, "0.01") == 0);
        if (k == 3 && *amount) {
            char max[32];
            snprintf(max, sizeof max, "%ld.00", (long)json_integer_value(
                                                    json_object_get(t->cfg, "amount_max")));
            boundary = boundary || strcmp(amount, max) == 0;
        }
        if (!*amount) {
            /* every row of this user has a blank amount */
            bool all = true;
            for (size_t j = 1; j < c.nrows; j++)
                if (strcmp(vat_csv_get(&c, j, 3), vat_csv_get(&c, i, 3)) == 0)
                    all = all && !*vat_csv_get(&c, j, 5);
            blank_only_user = blank_only_user || all;
        }
    }
    vat_csv_release(&c);
    assert_true(triple && blank_source && boundary && blank_only_user);
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
        assert_non_null(table);
        /* the prompt: the table, the question in the value form's words,
         * the shape with its rule for blank amounts */
        char create[96];
        snprintf(create, sizeof create, "CREATE TABLE %s (", table);
        assert_non_null(strstr(t.prompt, create));
        assert_non_null(strstr(t.prompt, "distinct `event_id`"));
        assert_non_null(strstr(t.prompt, "exactly once"));
        assert_non_null(strstr(t.prompt, "has the total 0"));
        assert_non_null(strstr(t.gold, table));
        bool desc = strstr(t.gold, " DESC") != NULL;
        assert_true(desc == (strstr(t.prompt, "by `user` descending") != NULL));

        for (int k = 1; k <= 3; k++)
            check_variant_corners(&t, k);
        /* The trap differs from gold on every fixture, not just one. */
        struct vat_err e = {{0}};
        json_t *g = vat_sqlgen_run_all(&t, t.gold, &e), *tr = vat_sqlgen_run_all(&t, t.trap, &e);
        assert_non_null(g);
        assert_non_null(tr);
        for (size_t f = 0; f < json_array_size(g); f++)
            assert_false(vat_sqlgen_rows_equal(json_array_get(g, f), json_array_get(tr, f), true,
                                               1e-9, 1e-6, NULL, 0));

        /* Near-misses, each failing somewhere (most only on a variant). */
        const char *dir = desc ? " DESC" : "";
        char *miss[7];
        miss[0] = vat_xasprintf("SELECT user, COALESCE(SUM(DISTINCT amount), 0) AS x FROM %s "
                                "GROUP BY user ORDER BY user%s", table, dir);
        miss[1] = vat_xasprintf("SELECT user, SUM(amount) AS x FROM (SELECT DISTINCT event_id, "
                                "user, amount FROM %s) GROUP BY user ORDER BY user%s", table, dir);
        miss[2] = vat_xasprintf("SELECT user, SUM(amount) AS x FROM (SELECT DISTINCT event_id, "
                                "user, amount FROM %s WHERE amount > 0) GROUP BY user ORDER BY "
                                "user%s", table, dir);
        miss[3] = vat_xasprintf("SELECT user, COALESCE(SUM(amount), 0) AS x FROM (SELECT DISTINCT "
                                "user, amount FROM %s) GROUP BY user ORDER BY user%s", table, dir);
        miss[4] = vat_xasprintf("SELECT user, COALESCE(SUM(amount), 0) AS x FROM (SELECT DISTINCT "
                                "event_id, user, amount FROM %s) GROUP BY user ORDER BY user%s",
                                table, desc ? "" : " DESC");
        /* events delivered once only: the retried ones dropped */
        miss[5] = vat_xasprintf("SELECT user, COALESCE(SUM(amount), 0) AS x FROM %s WHERE "
                                "event_id IN (SELECT event_id FROM %s GROUP BY event_id HAVING "
                                "COUNT(*) = 1) GROUP BY user ORDER BY user%s",
                                table, table, dir);
        /* the main fixture's totals, looked up by user */
        json_t *main_rows = json_array_get(g, 0);
        struct vat_buf b = VAT_BUF_INIT;
        vat_buf_puts(&b, "SELECT DISTINCT user, CASE user");
        size_t ri;
        json_t *row;
        json_array_foreach(main_rows, ri, row) {
            vat_buf_puts(&b, " WHEN ");
            vat_sqlgen_put_literal(&b, json_string_value(json_array_get(row, 0)));
            vat_buf_printf(&b, " THEN %.2f", json_number_value(json_array_get(row, 1)));
        }
        vat_buf_printf(&b, " ELSE 0 END AS x FROM %s ORDER BY user%s", table, dir);
        miss[6] = vat_buf_detach(&b);
        for (int m = 0; m < 7; m++) {
            struct vat_verdict vd = vat_tt_check(&t, miss[m]);
            if (!vd.gate_passed || vd.score != 0.0)
                fail_msg("%s: near-miss %d scored %g (%s)", t.id, m, vd.score, vd.reason);
            int at = first_difference(&t, miss[m]);
            assert_true(at >= 0);
            /* the literal totals pass the main fixture, fail a variant */
            if (m == 6)
                assert_true(at >= 1);
            free(miss[m]);
        }
        json_decref(g);
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
        cmocka_unit_test_prestate(test_confirm_catches_a_writer_bug, v),
        cmocka_unit_test(test_program_form),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    vat_tt_env_free(v);
    return rc;
}

/* test_top_n.c — what is particular to the top_n template: over 60 tasks the
 * trap is armed (its list names a customer gold leaves out), gold agrees with
 * a ranking recomputed here and ties are planted inside the top N and at the
 * N-th place; the prompt states N and the tie rule; confirm catches a wrong
 * gold and a writer bug.  In the program form: each variant's gold rows
 * are the ranking recomputed here, leave out the largest single sale and
 * the most sales, and tie or nearly tie at the N-th place; near misses
 * (reversed tie-break, no blank-customer filter, whole units, count,
 * average, N + 1, the listed main answer) fail and other correct queries
 * pass.  Admission within the redraws allowed, "same seed,
 * same bytes", the prompt's data section, confirm refusing the trap as gold
 * and a nudged gold, and the golden cases of tests/data/cases/top_n.txt (ties
 * at the boundary, three-way ties, broken files, checker cases) are checked
 * for every analytics template by tests/test_analytics.c. */
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
#include "template.h"
#include "testutil.h"
#include "values.h"
#include "verifiers.h"

#define SEED 90417u /* also in tests/data/cases/top_n.txt */
#define NTASKS 60
#define MAX_ATTEMPTS 40

extern const struct vat_template vat_tmpl_top_n;
static const struct vat_template *const T = &vat_tmpl_top_n;

static long task_n(const struct vat_task *t)
{
    return (long)json_integer_value(json_object_get(t->params, "n"));
}

/* Per-customer totals and largest sales from the file, computed here
 * without the template's code. */
struct cust {
    char name[64];
    int64_t total, top;
};

static size_t read_customers(const struct vat_task *t, struct cust *out, size_t cap)
{
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t->root, t->fixture[0].path, &e), 0);
    size_t n = 0;
    for (size_t i = 1; i < c.nrows; i++) {
        const char *who = vat_csv_get(&c, i, 2);
        int64_t cents;
        assert_int_equal(vat_parse_cents(vat_csv_get(&c, i, 5), &cents), 0);
        size_t k = 0;
        while (k < n && strcmp(out[k].name, who) != 0)
            k++;
        if (k == n) {
            assert_true(n < cap);
            snprintf(out[n].name, sizeof out[n].name, "%s", who);
            out[n].total = out[n].top = 0;
            n++;
        }
        out[k].total += cents;
        if (cents > out[k].top)
            out[k].top = cents;
    }
    vat_csv_release(&c);
    return n;
}

static const struct cust *find_cust(const struct cust *cs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cs[i].name, name) == 0)
            return &cs[i];
    return NULL;
}

/* ---- sixty tasks ------------------------------------------------------------ */

static void test_sixty_tasks(void **state)
{
    struct vat_tt_env *v = *state;
    int boundary_ties = 0, inner_ties = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        /* every file shown whole: the value form, whatever its size */
        vat_tt_draw(v, &t, NULL, i, 1 << 20, MAX_ATTEMPTS, &r);
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);

        long n = task_n(&t);
        assert_true(n >= 3 && n <= 5);
        json_t *gold = json_loads(t.gold, 0, NULL), *trap = json_loads(t.trap, 0, NULL);
        assert_non_null(gold);
        assert_non_null(trap);
        assert_int_equal(json_array_size(gold), (size_t)n);
        assert_int_equal(json_array_size(trap), (size_t)n);

        /* Gold is the ranking by total, ties by name, recomputed here. */
        struct cust cs[64];
        size_t nc = read_customers(&t, cs, 64);
        assert_true(nc >= (size_t)n + 2);
        const struct cust *last = NULL;
        for (size_t k = 0; k < (size_t)n; k++) {
            const struct cust *c = find_cust(cs, nc, json_string_value(json_array_get(gold, k)));
            assert_non_null(c);
            if (last)
                assert_true(last->total > c->total ||
                            (last->total == c->total && strcmp(last->name, c->name) < 0));
            last = c;
        }
        int64_t nth = last->total, beyond = 0;
        for (size_t k = 0; k < nc; k++) {
            bool in = false;
            for (size_t g = 0; g < (size_t)n; g++)
                in = in || strcmp(json_string_value(json_array_get(gold, g)), cs[k].name) == 0;
            if (in)
                continue;
            /* Everyone left out ranks below the N-th customer. */
            assert_true(cs[k].total < nth ||
                        (cs[k].total == nth && strcmp(cs[k].name, last->name) > 0));
            if (cs[k].total == nth)
                beyond++;
        }
        boundary_ties += beyond > 0;
        for (size_t k = 1; k < (size_t)n; k++) {
            const char *prev = json_string_value(json_array_get(gold, k - 1));
            const struct cust *a = find_cust(cs, nc, prev);
            const struct cust *b = find_cust(cs, nc, json_string_value(json_array_get(gold, k)));
            if (a->total == b->total) {
                inner_ties++;
                break;
            }
        }

        /* Armed: the trap's first name has the largest single sale and is
         * not in gold at all. */
        assert_false(json_equal(gold, trap));
        const char *decoy = json_string_value(json_array_get(trap, 0));
        for (size_t g = 0; g < (size_t)n; g++)
            assert_string_not_equal(json_string_value(json_array_get(gold, g)), decoy);
        const struct cust *d = find_cust(cs, nc, decoy);
        for (size_t k = 0; k < nc; k++)
            if (&cs[k] != d)
                assert_true(cs[k].top < d->top);
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
    print_message("  %d/%d tasks tie at the N-th place, %d inside the top N\n",
                  boundary_ties, NTASKS, inner_ties);
    assert_true(boundary_ties >= 6);
    assert_true(inner_ties >= 3);
}

/* ---- the prompt ----------------------------------------------------------- */

static void test_prompt_states_the_question(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 3, 1 << 20, MAX_ATTEMPTS, &r);
    char expect[160];
    snprintf(expect, sizeof expect, "%ld customers have the", task_n(&t));
    assert_non_null(strstr(t.prompt, expect));
    snprintf(expect, sizeof expect, "an array of exactly %ld strings", task_n(&t));
    assert_non_null(strstr(t.prompt, expect));
    assert_non_null(strstr(t.prompt, "ascending byte order"));
    assert_non_null(strstr(t.prompt, "The order matters"));
    assert_non_null(strstr(t.prompt, "[\"<customer ranked 1>\""));
    size_t len;
    char *file = vat_tt_fixture_text(&t, 0, &len);
    /* The tie illustration uses names no fixture can hold. */
    assert_null(strstr(file, "Jo Ann"));
    assert_null(strstr(file, "Joan Day"));
    free(file);
    vat_task_clear(&t);
}

/* ---- confirm -------------------------------------------------------------- */

static void test_confirm_catches_a_wrong_gold(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 20, 6000, MAX_ATTEMPTS, &r);
    struct vat_err e = {{0}};
    assert_int_equal(T->confirm(&t, &e), 0);
    json_t *gold = json_loads(t.gold, 0, NULL);

    /* One name short (the first two swapped: tests/test_analytics.c). */
    json_t *shorter = json_deep_copy(gold);
    json_array_remove(shorter, json_array_size(shorter) - 1);
    free(t.gold);
    t.gold = vat_json_dumps(shorter);
    assert_int_equal(T->confirm(&t, &e), -1);
    json_decref(shorter);
    json_decref(gold);
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 21, 6000, MAX_ATTEMPTS, &r);
    /* Credit a customer outside gold with a huge sale, as a writer that
     * garbled an amount would: the file's own ranking changes, the
     * planted totals do not. */
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    json_t *gold = json_loads(t.gold, 0, NULL);
    size_t k = 1;
    for (;; k++) {
        bool in = false;
        for (size_t g = 0; g < json_array_size(gold); g++)
            in = in ||
                 strcmp(json_string_value(json_array_get(gold, g)), vat_csv_get(&c, k, 2)) == 0;
        if (!in)
            break;
    }
    assert_true(vat_csv_set(&c, k, 5, "999999.99"));
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    vat_csv_release(&c);
    json_decref(gold);
    free(t.gold);
    t.gold = NULL;
    assert_int_equal(T->reference(&t, &e), 0);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "planted"));
    vat_task_clear(&t);
}

/* ---- the program form ------------------------------------------------------ */

#define PF_TASKS 6

static const char *pf_table(const struct vat_task *t)
{
    const char *table = json_string_value(json_object_get(json_object_get(t->spec, "load"),
                                                          "table"));
    assert_non_null(table);
    return table;
}

/* query with the task's table for each {T} and N for each {N}, scored. */
static struct vat_verdict pf_score(const struct vat_task *t, const char *query)
{
    char n[16];
    snprintf(n, sizeof n, "%ld", task_n(t));
    struct vat_buf b = VAT_BUF_INIT;
    for (const char *p = query; *p;) {
        if (strncmp(p, "{T}", 3) == 0 || strncmp(p, "{N}", 3) == 0) {
            vat_buf_puts(&b, p[1] == 'T' ? pf_table(t) : n);
            p += 3;
        } else {
            vat_buf_putc(&b, *p++);
        }
    }
    struct vat_verdict v = vat_tt_check(t, b.data);
    vat_buf_release(&b);
    return v;
}

static json_t *pf_rows(const struct vat_task *t, int k, const char *query)
{
    struct vat_verdict v;
    json_t *rows = vat_sql_run(t->spec, t->root, t->fixture[k].path, query, strlen(query), &v);
    assert_non_null(rows);
    return rows;
}

static bool in_rows(const json_t *rows, const char *name)
{
    for (size_t k = 0; k < json_array_size(rows); k++)
        if (strcmp(json_string_value(json_array_get(json_array_get(rows, k), 0)), name) == 0)
            return true;
    return false;
}

/* A variant's customers, computed here: total and largest sale over the
 * sales with an amount, how many such sales; blank-customer sales apart. */
struct vcust {
    char name[64];
    int64_t total, top;
    long n;
};

static int vcust_rank(const void *a, const void *b)
{
    const struct vcust *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Each variant of a task in the sql form: gold's rows are the ranking
 * recomputed here and differ from the main fixture's; the customer with
 * the largest single sale and the one with the most sales are left out;
 * blank-customer sales outweigh every customer; a customer has no amount
 * at all; variant 1 and 3 tie the N-th total with one left out, variant
 * 2 leaves out a total a cent below the N-th with a name sorting first. */
static void test_program_form_variants(void **state)
{
    (void)state;
    struct vat_tt_env *v = vat_tt_env_new(T, SEED);
    json_object_set_new(v->cfg, "answer_form", json_string("sql"));
    for (uint32_t i = 0; i < PF_TASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, MAX_ATTEMPTS, &r);
        assert_string_equal(vat_task_answer_form(&t), "sql");
        assert_int_equal(t.n_fixtures, 4);
        long n = task_n(&t);
        json_t *main_rows = pf_rows(&t, 0, t.gold);
        for (int k = 1; k < t.n_fixtures; k++) {
            struct vat_csv c = VAT_CSV_INIT;
            struct vat_err e = {{0}};
            assert_int_equal(vat_csv_read(&c, t.root, t.fixture[k].path, &e), 0);
            struct vcust cs[64];
            size_t nc = 0;
            int64_t nobody = 0;
            bool noamount = false;
            for (size_t row = 1; row < c.nrows; row++) {
                const char *who = vat_csv_get(&c, row, 2), *amt = vat_csv_get(&c, row, 5);
                int64_t cents = 0;
                if (*amt)
                    assert_int_equal(vat_parse_cents(amt, &cents), 0);
                if (!*who) {
                    nobody += cents;
                    continue;
                }
                size_t x = 0;
                while (x < nc && strcmp(cs[x].name, who) != 0)
                    x++;
                if (x == nc) {
                    assert_true(nc < 64);
                    snprintf(cs[nc].name, sizeof cs[nc].name, "%s", who);
                    cs[nc].total = cs[nc].top = 0;
                    cs[nc].n = 0;
                    nc++;
                }
                if (*amt) {
                    cs[x].total += cents;
                    cs[x].top = cs[x].n == 0 || cents > cs[x].top ? cents : cs[x].top;
                    cs[x].n++;
                }
            }
            vat_csv_release(&c);
            size_t ranked = 0, big = 0, many = 0;
            for (size_t x = 0; x < nc; x++) {
                noamount = noamount || cs[x].n == 0;
                if (cs[x].n == 0)
                    continue;
                cs[ranked++] = cs[x];
            }
            assert_true(noamount);
            qsort(cs, ranked, sizeof *cs, vcust_rank);
            assert_true(nobody > cs[0].total);
            json_t *g = pf_rows(&t, k, t.gold);
            assert_int_equal(json_array_size(g), (size_t)n);
            for (size_t x = 0; x < (size_t)n; x++)
                assert_string_equal(json_string_value(json_array_get(json_array_get(g, x), 0)),
                                    cs[x].name);
            assert_false(json_equal(g, main_rows));
            for (size_t x = 1; x < ranked; x++) {
                big = cs[x].top > cs[big].top ? x : big;
                many = cs[x].n > cs[many].n ? x : many;
            }
            assert_true(big >= (size_t)n && many >= (size_t)n);
            assert_false(in_rows(g, cs[big].name));
            for (size_t x = 0; x < ranked; x++)
                if (x != many)
                    assert_true(cs[x].n < cs[many].n);
            const struct vcust *nth = &cs[n - 1], *next = &cs[n];
            if (k == 2)
                assert_true(next->total == nth->total - 1 && strcmp(next->name, nth->name) < 0);
            else
                assert_true(next->total == nth->total);
            /* The trap's rows differ. */
            json_t *tr = pf_rows(&t, k, t.trap);
            assert_false(json_equal(g, tr));
            json_decref(tr);
            json_decref(g);
        }
        json_decref(main_rows);
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

/* Plausible near misses fail on some fixture; other correct wordings
 * pass; a query that lists the main fixture's answer fails. */
static void test_program_form_near_misses(void **state)
{
    (void)state;
    static const char *const pass[] = {
        "SELECT customer FROM {T} WHERE customer IS NOT NULL GROUP BY customer "
        "ORDER BY ROUND(SUM(amount), 2) DESC, customer LIMIT {N}",
        "select customer as who from {T} where customer is not null and amount is not null "
        "group by 1 order by sum(cast(round(amount * 100) as integer)) desc, customer asc "
        "limit {N};",
    };
    static const char *const miss[] = {
        /* the trap */
        "SELECT customer FROM {T} WHERE customer IS NOT NULL GROUP BY customer "
        "ORDER BY MAX(amount) DESC, customer LIMIT {N}",
        "SELECT customer FROM {T} WHERE customer IS NOT NULL GROUP BY customer "
        "ORDER BY ROUND(SUM(amount), 2) DESC, customer DESC LIMIT {N}",
        "SELECT customer FROM {T} GROUP BY customer "
        "ORDER BY ROUND(SUM(amount), 2) DESC, customer LIMIT {N}",
        "SELECT customer FROM {T} WHERE customer IS NOT NULL GROUP BY customer "
        "ORDER BY ROUND(SUM(amount)) DESC, customer LIMIT {N}",
        "SELECT customer FROM {T} WHERE customer IS NOT NULL GROUP BY customer "
        "ORDER BY COUNT(amount) DESC, customer LIMIT {N}",
        "SELECT customer FROM {T} WHERE customer IS NOT NULL GROUP BY customer "
        "ORDER BY AVG(amount) DESC, customer LIMIT {N}",
        "SELECT customer FROM {T} WHERE customer IS NOT NULL GROUP BY customer "
        "ORDER BY ROUND(SUM(amount), 2) DESC, customer LIMIT {N} + 1",
    };
    struct vat_tt_env *v = vat_tt_env_new(T, SEED + 1);
    json_object_set_new(v->cfg, "answer_form", json_string("sql"));
    for (uint32_t i = 0; i < PF_TASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, MAX_ATTEMPTS, &r);
        for (size_t k = 0; k < sizeof pass / sizeof *pass; k++) {
            struct vat_verdict vd = pf_score(&t, pass[k]);
            if (!vd.gate_passed)
                fail_msg("task %u: query %zu gated: %s: %s", i, k, vd.code, vd.reason);
            if (vd.score != 1.0)
                fail_msg("task %u: correct query %zu fails: %s", i, k, vd.reason);
        }
        for (size_t k = 0; k < sizeof miss / sizeof *miss; k++) {
            struct vat_verdict vd = pf_score(&t, miss[k]);
            assert_true(vd.gate_passed);
            if (vd.score >= 1.0)
                fail_msg("task %u: near miss %zu passes: %s", i, k, miss[k]);
        }
        /* The main fixture's customers, listed and ranked. */
        json_t *rows = pf_rows(&t, 0, t.gold);
        struct vat_buf b = VAT_BUF_INIT;
        vat_buf_printf(&b, "SELECT customer FROM %s WHERE customer IN (", pf_table(&t));
        for (size_t k = 0; k < json_array_size(rows); k++) {
            const char *name = json_string_value(json_array_get(json_array_get(rows, k), 0));
            vat_buf_puts(&b, k ? ", '" : "'");
            for (const char *p = name; *p; p++)
                vat_buf_puts(&b, *p == '\'' ? "''" : (char[2]){*p, 0});
            vat_buf_putc(&b, '\'');
        }
        vat_buf_puts(&b, ") GROUP BY customer ORDER BY ROUND(SUM(amount), 2) DESC, customer");
        struct vat_verdict vd = vat_tt_check(&t, b.data);
        assert_true(vd.gate_passed);
        assert_true(vd.score < 1.0);
        vat_buf_release(&b);
        json_decref(rows);
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
        cmocka_unit_test_prestate(test_confirm_catches_a_wrong_gold, v),
        cmocka_unit_test_prestate(test_confirm_catches_a_writer_bug, v),
        cmocka_unit_test(test_program_form_variants),
        cmocka_unit_test(test_program_form_near_misses),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    vat_tt_env_free(v);
    return rc;
}

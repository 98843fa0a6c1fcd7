/* test_top_n.c — what is particular to the top_n template: over 60 tasks the
 * trap is armed (its list names a customer gold leaves out), gold agrees with
 * a ranking recomputed here and ties are planted inside the top N and at the
 * N-th place; the prompt states N and the tie rule; confirm catches a wrong
 * gold and a writer bug.  Admission within the redraws allowed, "same seed,
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
    int boundary_ties = 0, inner_ties = 0, truncated = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, MAX_ATTEMPTS, &r);
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        truncated += strstr(t.prompt, "too long to show whole") != NULL;

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
    print_message("  %d/%d tasks tie at the N-th place, %d inside the top N, "
                  "%d truncate the inline data\n",
                  boundary_ties, NTASKS, inner_ties, truncated);
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
    snprintf(expect, sizeof expect, "which %ld customers have the largest total `amount`",
             task_n(&t));
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
    free(c.row[k].cell[5]);
    c.row[k].cell[5] = vat_xstrdup("999999.99");
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

int main(void)
{
    struct vat_tt_env *v = vat_tt_env_new(T, SEED);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_sixty_tasks, v),
        cmocka_unit_test_prestate(test_prompt_states_the_question, v),
        cmocka_unit_test_prestate(test_confirm_catches_a_wrong_gold, v),
        cmocka_unit_test_prestate(test_confirm_catches_a_writer_bug, v),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    vat_tt_env_free(v);
    return rc;
}

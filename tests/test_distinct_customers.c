/* test_distinct_customers.c — what is particular to the distinct_customers
 * template: over 30 tasks the fixture spans the asked month and its two
 * neighbours, the trap's corner (one customer twice in the month, clean and
 * dirty) is planted, orders sit on the month's last day and the next
 * month's first, one customer orders only outside the month; gold is the
 * count recomputed here from the file (independently of the template),
 * and the trap exceeds it; the prompt names the month, its exact bounds
 * and the normalisation; answers: gold 1, near misses and the trap 0,
 * other shapes gated.  The golden cases (tests/data/cases/
 * distinct_customers.txt), admission, same bytes and confirm's refusals
 * are checked for every analytics template by tests/test_analytics.c; the
 * rules by tests/test_rules.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "csvio.h"
#include "template.h"
#include "testutil.h"
#include "values.h"

#define SEED 4242u /* also in tests/data/cases/distinct_customers.txt */
#define NTASKS 30

extern const struct vat_template vat_tmpl_distinct_customers;

static int group_setup(void **state)
{
    *state = vat_tt_drawn_new(&vat_tmpl_distinct_customers, SEED, NTASKS);
    return 0;
}

static int group_teardown(void **state)
{
    vat_tt_drawn_free(*state);
    return 0;
}

/* The asked month of t. */
static void asked(const struct vat_task *t, int *y, int *m)
{
    assert_int_equal(vat_parse_month(vat_tt_param_str(t, "month"), y, m), 0);
}

/* Reads t's fixture back and counts, for the asked month, the distinct
 * addresses lower-cased and trimmed here by hand (not vat_norm_label), the
 * raw distinct strings, the orders on the month's edges and the customers
 * ordering only outside it. */
struct facts {
    int gold, raw, on_last, on_next_first, outside_only, months_off;
};

static int lookup(char (*keys)[80], int n, const char *k)
{
    for (int i = 0; i < n; i++)
        if (strcmp(keys[i], k) == 0)
            return i;
    return -1;
}

static struct facts read_facts(const struct vat_task *t)
{
    struct facts f = {0};
    int y, m;
    asked(t, &y, &m);
    int32_t first = vat_date_from_civil(y, m, 1);
    int ny = m == 12 ? y + 1 : y, nm = m == 12 ? 1 : m + 1;
    int py = m == 1 ? y - 1 : y, pm = m == 1 ? 12 : m - 1;
    int32_t next = vat_date_from_civil(ny, nm, 1), prev = vat_date_from_civil(py, pm, 1);
    int32_t after = vat_date_from_civil(nm == 12 ? ny + 1 : ny, nm == 12 ? 1 : nm + 1, 1);
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t->root, t->fixture[0].path, &e), 0);
    char(*in)[80] = calloc(c.nrows, sizeof *in), (*raw)[80] = calloc(c.nrows, sizeof *raw);
    char(*all)[80] = calloc(c.nrows, sizeof *all);
    int nin = 0, nraw = 0, nall = 0;
    bool *inside = calloc(c.nrows, sizeof *inside);
    for (size_t r = 1; r < c.nrows; r++) {
        const char *cell = vat_csv_get(&c, r, 1);
        int32_t d;
        assert_int_equal(vat_parse_date(vat_csv_get(&c, r, 3), &d), 0);
        char k[80];
        size_t a = 0, b = strlen(cell);
        while (a < b && cell[a] == ' ')
            a++;
        while (b > a && cell[b - 1] == ' ')
            b--;
        assert_true(b - a < sizeof k);
        for (size_t i = a; i < b; i++)
            k[i - a] = (char)(cell[i] >= 'A' && cell[i] <= 'Z' ? cell[i] + 32 : cell[i]);
        k[b - a] = 0;
        int ai = lookup(all, nall, k);
        if (ai < 0) {
            ai = nall++;
            snprintf(all[ai], sizeof all[ai], "%s", k);
        }
        f.months_off += d < prev || d >= after;
        f.on_last += d == next - 1;
        f.on_next_first += d == next;
        if (d < first || d >= next)
            continue;
        inside[ai] = true;
        if (lookup(in, nin, k) < 0)
            snprintf(in[nin++], sizeof in[0], "%s", k);
        if (lookup(raw, nraw, cell) < 0)
            snprintf(raw[nraw++], sizeof raw[0], "%s", cell);
    }
    for (int i = 0; i < nall; i++)
        f.outside_only += !inside[i];
    f.gold = nin;
    f.raw = nraw;
    free(in), free(raw), free(all), free(inside);
    vat_csv_release(&c);
    return f;
}

/* Gold is the count recomputed here; the trap is the raw count, larger;
 * the fixture spans only M-1 .. M+1, has orders on M's last day and the
 * next month's first, and a customer who orders only outside M. */
static void test_gold_trap_and_corners(void **state)
{
    struct vat_tt_drawn *d = *state;
    for (uint32_t i = 0; i < d->n; i++) {
        const struct vat_task *t = &d->t[i];
        struct facts f = read_facts(t);
        char want[16];
        snprintf(want, sizeof want, "%d", f.gold);
        assert_string_equal(t->gold, want);
        snprintf(want, sizeof want, "%d", f.raw);
        assert_string_equal(t->trap, want);
        assert_true(f.raw > f.gold);
        assert_true(f.gold >= 1);
        assert_int_equal(f.months_off, 0);
        assert_true(f.on_last >= 1);
        assert_true(f.on_next_first >= 1);
        assert_true(f.outside_only >= 1);
    }
}

/* The prompt names the month by name and number, its exact bounds (leap
 * years included) and the normalisation, and asks for a JSON integer. */
static void test_prompt_states_the_month(void **state)
{
    struct vat_tt_drawn *d = *state;
    for (uint32_t i = 0; i < d->n; i++) {
        const struct vat_task *t = &d->t[i];
        int y, m;
        asked(t, &y, &m);
        /* the phrasings differ around them, not in the month or bounds */
        char want[96];
        snprintf(want, sizeof want, "%s %d", vat_month_name(m), y);
        if (!strstr(t->prompt, want))
            fail_msg("%s: prompt lacks '%s'", t->id, want);
        snprintf(want, sizeof want, "`ordered_on` from %04d-%02d-01 through %04d-%02d-%02d", y, m,
                 y, m, vat_month_days(y, m));
        if (!strstr(t->prompt, want))
            fail_msg("%s: prompt lacks '%s'", t->id, want);
        assert_non_null(strstr(t->prompt, "removing the spaces at both ends and lower-casing"));
        assert_non_null(strstr(t->prompt, "JSON integer"));
    }
}

/* Gold passes; gold +-1, the trap and counting every month fail behind a
 * passed gate; other shapes fail the gate. */
static void test_answers(void **state)
{
    struct vat_tt_drawn *d = *state;
    for (uint32_t i = 0; i < d->n; i++) {
        const struct vat_task *t = &d->t[i];
        long g = strtol(t->gold, NULL, 10);
        struct vat_verdict v = vat_tt_check(t, t->gold);
        assert_string_equal(v.code, "ok");
        char buf[64];
        for (long delta = -1; delta <= 1; delta += 2) {
            snprintf(buf, sizeof buf, "%ld", g + delta);
            v = vat_tt_check(t, buf);
            assert_true(v.gate_passed);
            assert_true(v.score == 0.0);
        }
        v = vat_tt_check(t, t->trap);
        assert_string_equal(v.code, "wrong_value");
        static const char *const gated[] = {"[1]", "{\"n\":1}", "one", "", "null", "true"};
        for (size_t k = 0; k < sizeof gated / sizeof gated[0]; k++) {
            v = vat_tt_check(t, gated[k]);
            if (v.gate_passed)
                fail_msg("%s: '%s' passed the gate", t->id, gated[k]);
        }
        snprintf(buf, sizeof buf, "The answer is %s", t->gold);
        assert_false(vat_tt_check(t, buf).gate_passed);
    }
}

/* Task 3 drawn twice: the same bytes; redrawn: another fixture. */
static void test_same_and_redraw(void **state)
{
    struct vat_tt_drawn *d = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(d->env, &t, NULL, 3, 6000, 1, &r);
    vat_tt_assert_replays(&r);
    vat_tt_assert_same_task(&d->t[3], &t);
    vat_tt_assert_redraw_differs(d->env, NULL, 3, &d->t[3]);
    vat_task_clear(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gold_trap_and_corners),
        cmocka_unit_test(test_prompt_states_the_month),
        cmocka_unit_test(test_answers),
        cmocka_unit_test(test_same_and_redraw),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

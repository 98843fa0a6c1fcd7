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
 * rules by tests/test_rules.c.  The program form (answer_form = "sql"):
 * honest rewrites of gold (the month by prefix, LIKE, a half-open range, a
 * subquery) pass; near misses (lower() or trim() alone, no DISTINCT, a
 * bound off by one either way, an amount filter, the main count
 * hard-coded) fail on some fixture; the trap gives other rows than gold
 * on every fixture.  The generic checks of the form are in
 * tests/test_progform.c. */
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
#include "sqlgen.h"
#include "template.h"
#include "testutil.h"
#include "values.h"
#include "verifiers.h"

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


/* ---- the program form ------------------------------------------------------ */

/* q with {t} (the table), {o} (the value column), {m} (YYYY-MM), {f} (the
 * month's first day), {l} (its last), {p} (the day before it), {n} (the
 * day after it) and {c} (the main fixture's count). */
static char *pf_query(const struct vat_task *t, const char *q)
{
    const char *tab =
        json_string_value(json_object_get(json_object_get(t->spec, "load"), "table"));
    const char *a = strstr(t->gold, ") AS ");
    assert_non_null(tab);
    assert_non_null(a);
    a += strlen(") AS ");
    char out[64], ym[8], f[11], l[11], pd[11], nd[11], c[32];
    snprintf(out, sizeof out, "%.*s", (int)strcspn(a, "\n"), a);
    int y, m;
    asked(t, &y, &m);
    int32_t first = vat_month_first_day(y, m), last = first + vat_month_days(y, m) - 1;
    vat_fmt_month(y, m, ym);
    vat_fmt_date(first, f);
    vat_fmt_date(last, l);
    vat_fmt_date(first - 1, pd);
    vat_fmt_date(last + 1, nd);
    snprintf(c, sizeof c, "%lld",
             (long long)json_integer_value(json_object_get(t->spec, "value_answer")));
    struct vat_buf b = VAT_BUF_INIT;
    for (const char *s = q; *s; s++) {
        if (s[0] == '{' && s[1] && s[2] == '}') {
            const char *x = s[1] == 't'   ? tab
                            : s[1] == 'o' ? out
                            : s[1] == 'm' ? ym
                            : s[1] == 'f' ? f
                            : s[1] == 'l' ? l
                            : s[1] == 'p' ? pd
                            : s[1] == 'n' ? nd
                                          : c;
            vat_buf_puts(&b, x);
            s += 2;
        } else {
            vat_buf_putc(&b, *s);
        }
    }
    return vat_buf_detach(&b);
}

static void test_program_form(void **state)
{
    (void)state;
    static const char *const good[] = {
        "select count(distinct lower(trim(customer_email))) as {o} from {t} "
        "where substr(ordered_on, 1, 7) = '{m}'",
        "SELECT COUNT(DISTINCT LOWER(TRIM(customer_email))) AS {o} FROM {t} "
        "WHERE ordered_on LIKE '{m}-%'",
        "SELECT COUNT(DISTINCT LOWER(TRIM(customer_email))) AS {o} FROM {t} "
        "WHERE ordered_on >= '{f}' AND ordered_on < '{n}'",
        "SELECT COUNT(*) AS {o} FROM (SELECT DISTINCT LOWER(TRIM(customer_email)) FROM {t} "
        "WHERE ordered_on BETWEEN '{f}' AND '{l}');",
    };
    static const char *const near[] = {
        /* lower() alone keeps the edge spaces, trim() alone the case */
        "SELECT COUNT(DISTINCT LOWER(customer_email)) AS {o} FROM {t} "
        "WHERE ordered_on BETWEEN '{f}' AND '{l}'",
        "SELECT COUNT(DISTINCT TRIM(customer_email)) AS {o} FROM {t} "
        "WHERE ordered_on BETWEEN '{f}' AND '{l}'",
        /* orders, not customers */
        "SELECT COUNT(LOWER(TRIM(customer_email))) AS {o} FROM {t} "
        "WHERE ordered_on BETWEEN '{f}' AND '{l}'",
        /* a bound off by one, either way, at either end */
        "SELECT COUNT(DISTINCT LOWER(TRIM(customer_email))) AS {o} FROM {t} "
        "WHERE ordered_on > '{f}' AND ordered_on <= '{l}'",
        "SELECT COUNT(DISTINCT LOWER(TRIM(customer_email))) AS {o} FROM {t} "
        "WHERE ordered_on >= '{f}' AND ordered_on < '{l}'",
        "SELECT COUNT(DISTINCT LOWER(TRIM(customer_email))) AS {o} FROM {t} "
        "WHERE ordered_on >= '{p}' AND ordered_on <= '{l}'",
        "SELECT COUNT(DISTINCT LOWER(TRIM(customer_email))) AS {o} FROM {t} "
        "WHERE ordered_on >= '{f}' AND ordered_on <= '{n}'",
        /* an order without an amount, or of 0.00, is still an order */
        "SELECT COUNT(DISTINCT LOWER(TRIM(customer_email))) AS {o} FROM {t} "
        "WHERE ordered_on BETWEEN '{f}' AND '{l}' AND amount IS NOT NULL",
        "SELECT COUNT(DISTINCT LOWER(TRIM(customer_email))) AS {o} FROM {t} "
        "WHERE ordered_on BETWEEN '{f}' AND '{l}' AND amount > 0",
        /* the main file's answer */
        "SELECT {c} AS {o}",
        "SELECT MAX({c}, COUNT(*) * 0) AS {o} FROM {t}",
    };
    struct vat_tt_env *v = vat_tt_env_new(&vat_tmpl_distinct_customers, SEED);
    json_object_set_new(v->cfg, "answer_form", json_string("sql"));
    for (uint32_t i = 0; i < 8; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, 20, &r);
        assert_string_equal(vat_task_answer_form(&t), "sql");
        assert_non_null(strstr(t.prompt, "removing the spaces at both ends and lower-casing"));
        for (size_t q = 0; q < sizeof good / sizeof *good; q++) {
            char *sql = pf_query(&t, good[q]);
            struct vat_verdict vd = vat_tt_check(&t, sql);
            if (vd.score != 1.0)
                print_message("task %u, good query %zu: %s: %s\n", i, q, vd.code, vd.reason);
            assert_true(vd.score == 1.0);
            free(sql);
        }
        for (size_t q = 0; q < sizeof near / sizeof *near; q++) {
            char *sql = pf_query(&t, near[q]);
            struct vat_verdict vd = vat_tt_check(&t, sql);
            if (!(vd.gate_passed && vd.score == 0.0))
                print_message("task %u, near miss %zu passes: %s\n", i, q, sql);
            assert_true(vd.gate_passed);
            assert_true(vd.score == 0.0);
            free(sql);
        }
        /* The trap returns another count than gold on every fixture, and
         * every variant's count differs from the main file's. */
        json_int_t main_n = json_integer_value(json_object_get(t.spec, "value_answer"));
        for (int k = 0; k < t.n_fixtures; k++) {
            struct vat_verdict vd;
            json_t *g = vat_sql_run(t.spec, t.root, t.fixture[k].path, t.gold, strlen(t.gold), &vd);
            json_t *tr = vat_sql_run(t.spec, t.root, t.fixture[k].path, t.trap, strlen(t.trap), &vd);
            assert_non_null(g);
            assert_non_null(tr);
            json_int_t gn = json_integer_value(json_array_get(json_array_get(g, 0), 0));
            json_int_t tn = json_integer_value(json_array_get(json_array_get(tr, 0), 0));
            assert_true(tn > gn);
            if (k > 0)
                assert_true(gn != main_n);
            json_decref(g);
            json_decref(tr);
        }
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gold_trap_and_corners),
        cmocka_unit_test(test_prompt_states_the_month),
        cmocka_unit_test(test_answers),
        cmocka_unit_test(test_same_and_redraw),
        cmocka_unit_test(test_program_form),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

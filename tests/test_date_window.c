/* test_date_window.c — the date_window template: 60 tasks admit (at most 5
 * redraws in all) with gold 1, trap 0 (gate passed) and the malformed
 * answer gated out; every fixture holds a payment at D1 00:00:00, one late
 * on D2 and one a second outside each bound, so the trap (paid_at <= 'D2'
 * as text) and the other bound mistakes (exclusive bounds, the end of D2
 * taken as D2+1 00:00:00, the start of D1 taken from the day before) all
 * miss gold; same seed -> same bytes; the prompt names the file and both
 * days; hand-made fixtures for both bounds and a one-day window; broken
 * timestamps are refused; confirm catches a wrong gold and a writer bug;
 * checker cases around the gold. */
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

#define SEED 33071u
#define NTASKS 60
#define MAX_ATTEMPTS 40

extern const struct vat_template vat_tmpl_date_window;
static const struct vat_template *const T = &vat_tmpl_date_window;

struct env {
    char *dir;
    json_t *cfg;
};

static int setup(void **state)
{
    struct env *v = calloc(1, sizeof *v);
    v->dir = vat_test_tmpdir("dwin");
    v->cfg = vat_template_default_params(T);
    *state = v;
    return 0;
}

static int teardown(void **state)
{
    struct env *v = *state;
    vat_test_rmtree(v->dir);
    free(v->dir);
    json_decref(v->cfg);
    free(v);
    return 0;
}

/* Draws task index into root, redrawing until admitted; returns the number
 * of redraws and fails the test if no attempt is admitted. */
static unsigned draw(struct vat_task *t, const struct env *v, const char *root, uint32_t index,
                     size_t inline_max, struct vat_replay *r)
{
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = inline_max};
    struct vat_err e = {{0}};
    vat_task_init(t, T, index, root);
    for (uint32_t a = 0; a < MAX_ATTEMPTS; a++) {
        if (vat_task_draw(t, a, &o, r, &e) == 0)
            return a;
        print_message("  %s attempt %u refused: %s\n", t->id, a, e.msg);
    }
    fail_msg("%s not admitted in %d attempts: %s", t->id, MAX_ATTEMPTS, e.msg);
    return MAX_ATTEMPTS;
}

static char *fixture_text(const struct vat_task *t, size_t *len)
{
    char *path = vat_path_join(t->root, t->fixture[0].path);
    char *s = vat_test_read_file(path, len);
    free(path);
    assert_non_null(s);
    return s;
}

static struct vat_verdict check(const struct vat_task *t, const char *answer)
{
    return T->check(t, answer, strlen(answer));
}

/* ---- admission over many tasks -------------------------------------------- */

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

static void test_sixty_tasks_admit(void **state)
{
    struct env *v = *state;
    unsigned redraws = 0;
    int midnight_d2 = 0, one_day = 0, truncated = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        redraws += draw(&t, v, v->dir, i, 6000, &r);

        assert_true(r.v[VAT_ROLE_GOLD].gate_passed);
        assert_true(r.v[VAT_ROLE_GOLD].score == 1.0);
        assert_string_equal(r.v[VAT_ROLE_GOLD].code, "ok");
        assert_true(r.v[VAT_ROLE_TRAP].gate_passed);
        assert_true(r.v[VAT_ROLE_TRAP].score == 0.0);
        assert_string_equal(r.v[VAT_ROLE_TRAP].code, "wrong_value");
        assert_false(r.v[VAT_ROLE_MALFORMED].gate_passed);
        assert_non_null(strstr(t.prompt, t.fixture[0].path));
        assert_true(t.difficulty >= 1 && t.difficulty <= 5);
        assert_int_equal(json_array_size(t.fixture[0].columns), 5);
        truncated += strstr(t.prompt, "too long to show whole") != NULL;

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
        assert_int_equal((long)c.nrows - 1, t.fixture[0].rows);
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
            struct vat_verdict vd = check(&t, ans);
            if (!vd.gate_passed || vd.score != 0.0)
                fail_msg("%s: mistake %d (%s) scored %g", t.id, w, ans, vd.score);
        }
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
    print_message("  %u redraws; %d/%d tasks have a payment at D2 00:00:00, %d a one-day "
                  "window, %d truncate the inline data\n",
                  redraws, midnight_d2, NTASKS, one_day, truncated);
    assert_true(redraws <= 5);
    assert_true(midnight_d2 >= 10);
}

static void test_same_seed_same_bytes(void **state)
{
    struct env *v = *state;
    char *other = vat_test_tmpdir("dwin-b");
    for (uint32_t i = 0; i < 5; i++) {
        struct vat_task a, b, c;
        struct vat_replay r;
        draw(&a, v, v->dir, i, 6000, &r);
        draw(&b, v, other, i, 6000, &r);
        size_t la, lb;
        char *fa = fixture_text(&a, &la), *fb = fixture_text(&b, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(fa, fb, la);
        assert_string_equal(a.fixture[0].sha256, b.fixture[0].sha256);
        assert_string_equal(a.prompt, b.prompt);
        assert_string_equal(a.gold, b.gold);
        assert_string_equal(a.trap, b.trap);
        char *pa = vat_json_dumps(a.params), *pb = vat_json_dumps(b.params);
        char *sa = vat_json_dumps(a.spec), *sb = vat_json_dumps(b.spec);
        assert_string_equal(pa, pb);
        assert_string_equal(sa, sb);
        free(pa), free(pb), free(sa), free(sb);
        draw(&c, v, other, i + 100, 6000, &r);
        assert_string_not_equal(a.fixture[0].sha256, c.fixture[0].sha256);
        vat_task_clear(&c);
        free(fa), free(fb);
        vat_task_clear(&a);
        vat_task_clear(&b);
    }
    vat_test_rmtree(other);
    free(other);
}

/* ---- the prompt ----------------------------------------------------------- */

static void test_prompt_states_the_question(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 3, 1 << 20, &r);
    const char *d1 = json_string_value(json_object_get(t.params, "from"));
    const char *d2 = json_string_value(json_object_get(t.params, "to"));
    char expect[160];
    snprintf(expect, sizeof expect, "made from %s through %s inclusive", d1, d2);
    assert_non_null(strstr(t.prompt, expect));
    assert_non_null(strstr(t.prompt, "whatever its time of day"));
    assert_non_null(strstr(t.prompt, "`fixtures/date_window/date_window-00003.csv`"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 1e-6"));
    assert_non_null(strstr(t.prompt, "Answer with one JSON value: the total as a JSON number"));
    assert_non_null(strstr(t.prompt, "Its full contents"));
    assert_true(json_is_true(json_object_get(t.params, "inclusive")));
    size_t len;
    char *file = fixture_text(&t, &len);
    assert_non_null(strstr(t.prompt, file));
    free(file);
    vat_task_clear(&t);
}

static void test_one_day_window_prompt(void **state)
{
    struct env *v = *state;
    /* A window of one day reads as "made on D1". */
    json_t *cfg = json_deep_copy(v->cfg);
    json_object_set_new(cfg, "window_min", json_integer(1));
    json_object_set_new(cfg, "window_max", json_integer(1));
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = cfg, .inline_max_bytes = 6000};
    for (uint32_t i = 0; i < 10; i++) {
        struct vat_task t;
        struct vat_replay r;
        struct vat_err e = {{0}};
        vat_task_init(&t, T, i, v->dir);
        if (vat_task_draw(&t, 0, &o, &r, &e) != 0)
            fail_msg("%s", e.msg);
        const char *d1 = json_string_value(json_object_get(t.params, "from"));
        assert_string_equal(d1, json_string_value(json_object_get(t.params, "to")));
        char expect[80];
        snprintf(expect, sizeof expect, "payments made on %s?", d1);
        assert_non_null(strstr(t.prompt, expect));
        /* Comparing with the bare date drops the whole day: the trap is 0. */
        assert_string_equal(t.trap, "0.0");
        assert_true(r.v[VAT_ROLE_TRAP].gate_passed && r.v[VAT_ROLE_TRAP].score == 0.0);
        vat_task_clear(&t);
    }
    json_decref(cfg);
}

/* ---- hand-made fixtures ----------------------------------------------------- */

/* Draws task index, replaces its fixture with text and the window with
 * [from, to], and recomputes gold, confirm and trap from the file.  The
 * planted total no longer describes the file, so it is dropped. */
static int craft(struct vat_task *t, const struct env *v, uint32_t index, const char *from,
                 const char *to, const char *text, struct vat_err *e)
{
    struct vat_replay r;
    draw(t, v, v->dir, index, 6000, &r);
    char *path = vat_path_join(t->root, t->fixture[0].path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(path);
    t->priv_free(t->priv);
    t->priv = NULL;
    free(t->gold);
    free(t->trap);
    t->gold = t->trap = NULL;
    json_object_del(t->spec, "expected");
    json_object_set_new(t->params, "from", json_string(from));
    json_object_set_new(t->params, "to", json_string(to));
    if (T->reference(t, e) != 0 || T->confirm(t, e) != 0 || T->trap_answer(t, e) != 0)
        return -1;
    return 0;
}

#define HDR "payment_id,payer,method,amount,paid_at\n"

static void test_both_bounds_and_late_d2(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 10, "2024-02-28", "2024-03-01",
                   HDR "PAY-0000001,Ana Cruz,card,1000.00,2024-02-27 23:59:59\n"
                       "PAY-0000002,Bo Lee,wallet,1.00,2024-02-28 00:00:00\n"
                       "PAY-0000003,Bo Lee,card,2.00,2024-02-29 12:30:00\n"
                       "PAY-0000004,Cy Nash,bank_transfer,4.00,2024-03-01 00:00:00\n"
                       "PAY-0000005,Cy Nash,card,8.00,2024-03-01 23:59:59\n"
                       "PAY-0000006,Ana Cruz,card,2000.00,2024-03-02 00:00:00\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    /* Leap day inside; both midnights in; a second outside either side out. */
    assert_string_equal(t.gold, "15.0");
    /* paid_at <= '2024-03-01' keeps neither row of that day. */
    assert_string_equal(t.trap, "3.0");
    struct vat_verdict g = check(&t, t.gold), tr = check(&t, t.trap);
    assert_true(g.gate_passed && g.score == 1.0);
    assert_true(tr.gate_passed && tr.score == 0.0);
    assert_string_equal(tr.code, "wrong_value");
    /* D1 left out (14); D2 left out (3); D2+1 00:00:00 counted (2015);
     * D1-1 23:59:59 counted (1015); D2 00:00:00 dropped (11); only D2
     * 00:00:00 kept of D2, paid_at <= 'D2 00:00:00' (7) */
    static const char *const wrong[] = {"14", "3", "2015", "1015", "11", "7"};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        struct vat_verdict vd = check(&t, wrong[i]);
        assert_true(vd.gate_passed);
        assert_true(vd.score == 0.0);
    }
    vat_task_clear(&t);
}

static void test_cents_sum_exactly(void **state)
{
    struct env *v = *state;
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, HDR);
    for (int i = 0; i < 10; i++)
        vat_buf_printf(&b, "PAY-%07d,Ana Cruz,card,0.10,2023-07-0%d 0%d:00:00\n", i, 1 + i % 3,
                       i);
    vat_buf_puts(&b, "PAY-0000099,Ana Cruz,card,0.30,2023-07-04 00:00:00\n");
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 11, "2023-07-01", "2023-07-03", b.data, &e);
    vat_buf_release(&b);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "1.0");
    vat_task_clear(&t);
}

static void test_broken_fixtures_are_refused(void **state)
{
    struct env *v = *state;
    static const struct {
        const char *text;
        const char *msg;
    } bad[] = {
        {HDR "PAY-1,Ana Cruz,card,1.00,2024-03-01T10:00:00\n", "not YYYY-MM-DD HH:MM:SS"},
        {HDR "PAY-1,Ana Cruz,card,1.00,2024-03-01 24:00:00\n", "not YYYY-MM-DD HH:MM:SS"},
        {HDR "PAY-1,Ana Cruz,card,1.00,2024-03-01 10:00\n", "not YYYY-MM-DD HH:MM:SS"},
        {HDR "PAY-1,Ana Cruz,card,1.00,2023-02-29 10:00:00\n", "not YYYY-MM-DD HH:MM:SS"},
        {HDR "PAY-1,Ana Cruz,card,1.00,\n", "not YYYY-MM-DD HH:MM:SS"},
        {HDR "PAY-1,Ana Cruz,card,1.0.0,2024-03-01 10:00:00\n", "not a decimal"},
        {HDR "PAY-1,Ana Cruz,card,1.00,2024-04-01 10:00:00\n", "no payment falls"},
        {"payment_id,payer,method,amount,paid_on\n"
         "PAY-1,Ana Cruz,card,1.00,2024-03-01 10:00:00\n",
         "header column 5"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vat_task t;
        struct vat_err e = {{0}};
        assert_int_equal(craft(&t, v, 13, "2024-03-01", "2024-03-02", bad[i].text, &e), -1);
        assert_non_null(strstr(e.msg, "date_window-00013"));
        if (!strstr(e.msg, bad[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, e.msg, bad[i].msg);
        vat_task_clear(&t);
    }
    /* a window whose end is before its start */
    struct vat_task t;
    struct vat_err e = {{0}};
    assert_int_equal(craft(&t, v, 13, "2024-03-02", "2024-03-01",
                           HDR "PAY-1,Ana Cruz,card,1.00,2024-03-01 10:00:00\n", &e),
                     -1);
    assert_non_null(strstr(e.msg, "'from' and 'to'"));
    vat_task_clear(&t);
}

/* ---- confirm -------------------------------------------------------------- */

static void test_confirm_catches_a_wrong_gold(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 20, 6000, &r);
    struct vat_err e = {{0}};
    assert_int_equal(T->confirm(&t, &e), 0);
    free(t.gold);
    t.gold = vat_xstrdup(t.trap);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "sql over the loaded csv disagrees"));
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 21, 6000, &r);
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
    free(c.row[k].cell[4]);
    c.row[k].cell[4] = vat_xstrdup(prev);
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    vat_csv_release(&c);
    free(t.gold);
    t.gold = NULL;
    assert_int_equal(T->reference(&t, &e), 0);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "planted"));
    vat_task_clear(&t);
}

/* ---- checker cases ---------------------------------------------------------- */

static void test_checker_cases(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 30, "2023-09-01", "2023-09-30",
                   HDR "PAY-1,Ana Cruz,card,1200.00,2023-09-01 08:00:00\n"
                       "PAY-2,Bo Lee,card,34.00,2023-09-30 18:00:00\n"
                       "PAY-3,Bo Lee,card,5.00,2023-10-01 00:00:00\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "1234.0");

    static const char *const pass[] = {
        "1234.0", "1234", "1234.00", "\"1234\"", "\"1,234.00\"", "1.234e3", "1234.0000001",
        " 1234\n",
    };
    for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++) {
        struct vat_verdict vd = check(&t, pass[i]);
        if (!(vd.gate_passed && vd.score == 1.0))
            fail_msg("'%s' should pass: %s %s", pass[i], vd.code, vd.reason);
    }
    static const char *const scored0[] = {"1200", "1239", "1234.01", "1233.99", "1230", "0"};
    for (size_t i = 0; i < sizeof scored0 / sizeof scored0[0]; i++) {
        struct vat_verdict vd = check(&t, scored0[i]);
        if (!vd.gate_passed || vd.score != 0.0 || strcmp(vd.code, "wrong_value") != 0)
            fail_msg("'%s' should score 0 with wrong_value, got %s (%s)", scored0[i], vd.code,
                     vd.reason);
    }
    static const char *const gated[] = {
        "The answer is: 1234.0", "[1234]", "{\"total\":1234}", "\"$1234.00\"", "\"1234 EUR\"",
        "\"12,34\"", "NaN", "null", "true", "",
    };
    for (size_t i = 0; i < sizeof gated / sizeof gated[0]; i++) {
        struct vat_verdict vd = check(&t, gated[i]);
        if (vd.gate_passed || vd.score != 0.0)
            fail_msg("'%s' should fail the gate, got %s (%s)", gated[i], vd.code, vd.reason);
    }
    vat_task_clear(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixty_tasks_admit),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_prompt_states_the_question),
        cmocka_unit_test(test_one_day_window_prompt),
        cmocka_unit_test(test_both_bounds_and_late_d2),
        cmocka_unit_test(test_cents_sum_exactly),
        cmocka_unit_test(test_broken_fixtures_are_refused),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
        cmocka_unit_test(test_confirm_catches_a_writer_bug),
        cmocka_unit_test(test_checker_cases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

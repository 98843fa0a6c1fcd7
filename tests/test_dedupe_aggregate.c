/* test_dedupe_aggregate.c — the dedupe_aggregate template: 60 tasks admit
 * (at most 5 redraws in all) with gold 1, trap 0 (gate passed) and the
 * malformed answer gated out; the trap is armed in every task (some user's
 * total differs beyond tolerance) and every retried event in the file
 * repeats its payload with a new delivery_id and a later received_at;
 * same seed -> same bytes; the prompt names the file and the retry rule;
 * hand-made fixtures for an event delivered three times, a user whose only
 * event was retried and retries whose payload differs; confirm catches a
 * wrong gold and a writer bug; checker cases around the gold. */
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

#define SEED 51123u
#define NTASKS 60
#define MAX_ATTEMPTS 40

extern const struct vat_template vat_tmpl_dedupe_aggregate;
static const struct vat_template *const T = &vat_tmpl_dedupe_aggregate;

struct env {
    char *dir;
    json_t *cfg;
};

static int setup(void **state)
{
    struct env *v = calloc(1, sizeof *v);
    v->dir = vat_test_tmpdir("dedupe");
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

/* Checks the retry rule on the file as written; returns the largest
 * number of deliveries of one event. */
static int check_retries(const struct vat_task *t)
{
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t->root, t->fixture[0].path, &e), 0);
    assert_int_equal((long)c.nrows - 1, t->fixture[0].rows);
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

static void test_sixty_tasks_admit(void **state)
{
    struct env *v = *state;
    unsigned redraws = 0;
    int three_copies = 0, truncated = 0;
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
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        assert_string_equal(json_string_value(json_object_get(t.params, "count_once_per")),
                            "event_id");
        truncated += strstr(t.prompt, "too long to show whole") != NULL;

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
    print_message("  %u redraws; %d/%d tasks deliver an event three times, %d truncate the "
                  "inline data\n",
                  redraws, three_copies, NTASKS, truncated);
    assert_true(redraws <= 5);
    assert_true(three_copies >= 6);
}

static void test_same_seed_same_bytes(void **state)
{
    struct env *v = *state;
    char *other = vat_test_tmpdir("dedupe-b");
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
    assert_non_null(strstr(t.prompt, "`fixtures/dedupe_aggregate/dedupe_aggregate-00003.csv`"));
    assert_non_null(strstr(t.prompt, "each distinct `event_id`) exactly once"));
    assert_non_null(strstr(t.prompt, "same `event_id`, `user`, `source` and `amount`"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 1e-6"));
    assert_non_null(strstr(t.prompt, "relative tolerance of 1e-9"));
    assert_non_null(strstr(t.prompt, "{\"<user>\": <total>"));
    assert_non_null(strstr(t.prompt, "Its full contents"));
    size_t len;
    char *file = fixture_text(&t, &len);
    assert_non_null(strstr(t.prompt, file));
    free(file);
    vat_task_clear(&t);

    draw(&t, v, v->dir, 4, 500, &r);
    assert_non_null(strstr(t.prompt, "too long to show whole"));
    vat_task_clear(&t);
}

/* ---- hand-made fixtures ----------------------------------------------------- */

/* Draws task index, replaces its fixture with text and recomputes gold,
 * confirm and trap from it.  The planted totals no longer describe the
 * file, so they are dropped. */
static int craft(struct vat_task *t, const struct env *v, uint32_t index, const char *text,
                 struct vat_err *e)
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
    if (T->reference(t, e) != 0 || T->confirm(t, e) != 0 || T->trap_answer(t, e) != 0)
        return -1;
    return 0;
}

#define HDR "delivery_id,received_at,event_id,user,source,amount\n"

static void test_three_deliveries_and_lone_retried_user(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    /* evt_a delivered three times; bo.lee's only event retried once. */
    int rc = craft(&t, v, 10,
                   HDR "dlv_00000001,2023-05-01 10:00:00,evt_a,ana.cruz,ios,4.99\n"
                       "dlv_00000002,2023-05-01 10:00:05,evt_b,bo.lee,web,19.99\n"
                       "dlv_00000003,2023-05-01 10:01:00,evt_a,ana.cruz,ios,4.99\n"
                       "dlv_00000004,2023-05-01 10:02:00,evt_c,ana.cruz,android,0.99\n"
                       "dlv_00000005,2023-05-01 10:03:00,evt_a,ana.cruz,ios,4.99\n"
                       "dlv_00000006,2023-05-01 10:09:00,evt_b,bo.lee,web,19.99\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "{\"ana.cruz\":5.98,\"bo.lee\":19.99}");
    assert_string_equal(t.trap, "{\"ana.cruz\":15.96,\"bo.lee\":39.98}");
    assert_true(check(&t, "{\"bo.lee\":19.99,\"ana.cruz\":5.98}").score == 1.0);
    vat_task_clear(&t);
}

static void test_cents_sum_exactly(void **state)
{
    struct env *v = *state;
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, HDR);
    /* Ten distinct events of 0.10, each delivered twice: gold is 1.0, which
     * summing doubles in order would miss (0.9999999999999999). */
    for (int i = 0; i < 10; i++)
        vat_buf_printf(&b, "dlv_%08d,2023-05-02 09:00:%02d,evt_%d,kim,web,0.10\n", 2 * i, i, i);
    for (int i = 0; i < 10; i++)
        vat_buf_printf(&b, "dlv_%08d,2023-05-02 09:10:%02d,evt_%d,kim,web,0.10\n", 2 * i + 1, i,
                       i);
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 11, b.data, &e);
    vat_buf_release(&b);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "{\"kim\":1.0}");
    assert_string_equal(t.trap, "{\"kim\":2.0}");
    vat_task_clear(&t);
}

static void test_broken_fixtures_are_refused(void **state)
{
    struct env *v = *state;
    static const struct {
        const char *text;
        const char *msg;
    } bad[] = {
        /* a repeated event_id with another amount is not a retry */
        {HDR "dlv_1,2023-05-01 10:00:00,evt_a,ana,ios,4.99\n"
             "dlv_2,2023-05-01 10:01:00,evt_a,ana,ios,5.99\n",
         "different amount"},
        /* ... nor with another user */
        {HDR "dlv_1,2023-05-01 10:00:00,evt_a,ana,ios,4.99\n"
             "dlv_2,2023-05-01 10:01:00,evt_a,bo,ios,4.99\n",
         "different user"},
        {HDR "dlv_1,2023-05-01 10:00:00,evt_a,ana,ios,4.9\n"
             "dlv_2,2023-05-01 10:01:00,evt_a,ana,ios,4.9x\n",
         "not a decimal"},
        {HDR "dlv_1,2023-05-01 10:00:00,,ana,ios,4.99\n", "blank event_id"},
        {"delivery_id,received_at,event,user,source,amount\n"
         "dlv_1,2023-05-01 10:00:00,evt_a,ana,ios,4.99\n",
         "header column 3"},
        {HDR, "no event"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vat_task t;
        struct vat_err e = {{0}};
        assert_int_equal(craft(&t, v, 13, bad[i].text, &e), -1);
        assert_non_null(strstr(e.msg, "dedupe_aggregate-00013"));
        if (!strstr(e.msg, bad[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, e.msg, bad[i].msg);
        vat_task_clear(&t);
    }
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
    /* gold replaced by the trap: the duplicates counted */
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

/* ---- checker cases ---------------------------------------------------------- */

static void test_checker_cases(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 30,
                   HDR "dlv_1,2023-05-01 10:00:00,evt_a,ana.cruz,ios,1200.00\n"
                       "dlv_2,2023-05-01 10:00:01,evt_b,bo.lee,web,34.50\n"
                       "dlv_3,2023-05-01 10:00:02,evt_c,ana.cruz,ios,34.50\n"
                       "dlv_4,2023-05-01 10:05:00,evt_b,bo.lee,web,34.50\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "{\"ana.cruz\":1234.5,\"bo.lee\":34.5}");

    static const char *const pass[] = {
        "{\"ana.cruz\":1234.5,\"bo.lee\":34.5}",
        "{\"bo.lee\":34.5,\"ana.cruz\":1234.5}",
        "{\"ana.cruz\":1234.50,\"bo.lee\":34.50}",
        "{\"ana.cruz\":\"1,234.50\",\"bo.lee\":\"34.5\"}",
        "{\"ana.cruz\":1.2345e3,\"bo.lee\":34.5000000001}",
        "\n{ \"ana.cruz\" : 1234.5 , \"bo.lee\" : 34.5 }\n",
    };
    for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++) {
        struct vat_verdict vd = check(&t, pass[i]);
        if (!(vd.gate_passed && vd.score == 1.0))
            fail_msg("'%s' should pass: %s %s", pass[i], vd.code, vd.reason);
    }

    static const struct {
        const char *answer;
        const char *code;
    } scored0[] = {
        {"{\"ana.cruz\":1234.5,\"bo.lee\":69.0}", "wrong_value"},   /* the trap */
        {"{\"ana.cruz\":1235,\"bo.lee\":34.5}", "wrong_value"},     /* rounded */
        {"{\"ana.cruz\":1234.5,\"bo.lee\":34.49}", "wrong_value"},
        {"{\"ana.cruz\":1234.5}", "missing_key"},
        {"{\"ana.cruz\":1234.5,\"bo.lee\":34.5,\"cy\":0}", "extra_key"},
        {"{\"Ana.Cruz\":1234.5,\"bo.lee\":34.5}", "key_case"},
        {"{\"ana.cruz \":1234.5,\"bo.lee\":34.5}", "key_case"},
    };
    for (size_t i = 0; i < sizeof scored0 / sizeof scored0[0]; i++) {
        struct vat_verdict vd = check(&t, scored0[i].answer);
        if (!vd.gate_passed || vd.score != 0.0 || strcmp(vd.code, scored0[i].code) != 0)
            fail_msg("'%s' should score 0 with %s, got gate %d score %g %s (%s)",
                     scored0[i].answer, scored0[i].code, vd.gate_passed, vd.score, vd.code,
                     vd.reason);
    }

    static const char *const gated[] = {
        "The answer is: {\"ana.cruz\":1234.5,\"bo.lee\":34.5}",
        "[1234.5, 34.5]",
        "1269.0",
        "{\"ana.cruz\":\"$1234.50\",\"bo.lee\":34.5}",
        "{\"ana.cruz\":\"1234.5 USD\",\"bo.lee\":34.5}",
        "{\"ana.cruz\":null,\"bo.lee\":34.5}",
        "{\"ana.cruz\":1234.5,\"ana.cruz\":1234.5,\"bo.lee\":34.5}",
        "{\"ana.cruz\":1234.5,\"bo.lee\":Infinity}",
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
        cmocka_unit_test(test_three_deliveries_and_lone_retried_user),
        cmocka_unit_test(test_cents_sum_exactly),
        cmocka_unit_test(test_broken_fixtures_are_refused),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
        cmocka_unit_test(test_confirm_catches_a_writer_bug),
        cmocka_unit_test(test_checker_cases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* test_payments_reconciliation.c — what is particular to the compound
 * payments_reconciliation template: over 60 tasks every fixture holds the
 * rows that arm each trap (a settled event delivered twice inside the
 * window, an unsettled event inside it, a settled payment during D2, and,
 * when the prompt says refund signs are mixed, a refund written positive),
 * gold is recomputed here from the file, and each trap's answer is the
 * file's sum with exactly that one mistake made; with inline = "full"
 * every fixture is shown whole, traps still armed.  Admission, same
 * bytes and the golden cases of tests/data/cases/payments_reconciliation.txt
 * are checked by tests/test_analytics.c, the two styles by test_prompt.c. */
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
#include "jsonout.h"
#include "template.h"
#include "testutil.h"
#include "values.h"
#include "verifiers.h"

#define SEED 51013u
#define NTASKS 60

enum { M_DUP = 1, M_STATUS = 2, M_WINDOW = 4, M_SIGN = 8 };

/* The net per group recomputed here from the file, with `mistakes` made. */
static json_t *net(const struct vat_task *t, int mistakes)
{
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t->root, t->fixture[0].path, &e), 0);
    const char *d1 = vat_tt_param_str(t, "from"), *d2 = vat_tt_param_str(t, "to");
    size_t gcol = strcmp(vat_tt_param_str(t, "group_by"), "customer") == 0 ? 3 : 4;
    json_t *seen = json_object(), *out = json_object();
    for (size_t i = 1; i < c.nrows; i++) {
        const char *id = vat_csv_get(&c, i, 0), *at = vat_csv_get(&c, i, 2);
        if (!(mistakes & M_DUP)) {
            if (json_object_get(seen, id))
                continue;
            json_object_set_new(seen, id, json_true());
        }
        if (!(mistakes & M_STATUS) && strcmp(vat_csv_get(&c, i, 6), "settled") != 0)
            continue;
        bool in = (mistakes & M_WINDOW) ? strcmp(at, d1) >= 0 && strcmp(at, d2) <= 0
                                        : strncmp(at, d1, 10) >= 0 && strncmp(at, d2, 10) <= 0;
        if (!in)
            continue;
        int64_t cents;
        assert_int_equal(vat_parse_cents(vat_csv_get(&c, i, 7), &cents), 0);
        if (strcmp(vat_csv_get(&c, i, 5), "refund") == 0 && !(mistakes & M_SIGN))
            cents = cents < 0 ? cents : -cents;
        const char *k = vat_csv_get(&c, i, gcol);
        json_t *v = json_object_get(out, k);
        json_object_set_new(out, k, json_integer((v ? json_integer_value(v) : 0) + cents));
    }
    /* cents -> numbers, as gold prints them */
    const char *k;
    json_t *v;
    json_t *res = json_object();
    json_object_foreach(out, k, v)
        json_object_set_new(res, k, json_real((double)json_integer_value(v) / 100.0));
    json_decref(out);
    json_decref(seen);
    vat_csv_release(&c);
    return res;
}

static void assert_answer(const struct vat_task *t, const char *answer, json_t *want)
{
    json_t *got = json_loads(answer, 0, NULL);
    assert_non_null(got);
    if (!json_equal(got, want)) {
        char *w = vat_json_dumps(want);
        fail_msg("%s: answer %s, recomputed %s", t->id, answer, w);
    }
    json_decref(got);
    json_decref(want);
}

static void test_sixty_tasks_arm_every_trap(void **state)
{
    (void)state;
    struct vat_tt_env *v = vat_tt_env_new(vat_template_find("payments_reconciliation"), SEED);
    int four = 0, by_currency = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, 40, &r);
        bool mixed = json_is_true(json_object_get(t.params, "mixed_refund_signs"));
        assert_int_equal(t.n_traps, mixed ? 4 : 3);
        four += t.n_traps == 4;
        by_currency += strcmp(vat_tt_param_str(&t, "group_by"), "currency") == 0;
        assert_answer(&t, t.gold, net(&t, 0));
        int all = 0;
        for (int k = 0; k < t.n_traps; k++) {
            const char *nm = t.traps[k].name;
            int bit = strcmp(nm, "duplicates") == 0 ? M_DUP
                      : strcmp(nm, "status") == 0   ? M_STATUS
                      : strcmp(nm, "window") == 0   ? M_WINDOW
                      : strcmp(nm, "refund_sign") == 0 ? M_SIGN
                                                       : 0;
            assert_true(bit != 0);
            all |= bit;
            assert_answer(&t, t.traps[k].answer, net(&t, bit));
            struct vat_verdict vd = vat_tt_check(&t, t.traps[k].answer);
            assert_true(vd.gate_passed);
            assert_true(vd.score == 0.0);
            assert_true(r.traps[k].score == 0.0);
        }
        assert_int_equal(all, mixed ? 15 : 7);
        assert_answer(&t, t.trap, net(&t, all));
        /* the prompt's data fact follows the file */
        assert_true(mixed == (strstr(t.prompt, "positive or negative") != NULL));
        assert_true(mixed == !strstr(t.prompt, "refunds are written as negative amounts"));
        assert_true(t.difficulty >= 2 && t.difficulty <= 5);
        vat_task_clear(&t);
    }
    print_message("  %d/%d tasks arm four traps, %d group by currency\n", four, NTASKS,
                  by_currency);
    assert_true(four >= NTASKS / 3 && four < NTASKS);
    assert_true(by_currency >= 5 && by_currency < NTASKS);
    vat_tt_env_free(v);
}

/* inline = "full": the whole file is in the prompt, traps still armed. */
static void test_inline_full(void **state)
{
    (void)state;
    struct vat_tt_env *v = vat_tt_env_new(vat_template_find("payments_reconciliation"), SEED);
    json_object_set_new(v->cfg, "rows_min", json_integer(200));
    json_object_set_new(v->cfg, "rows_max", json_integer(400));
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = 6000,
                              .inline_full = true};
    for (uint32_t i = 0; i < 10; i++) {
        struct vat_task t;
        struct vat_replay r;
        struct vat_err e = {{0}};
        vat_task_init(&t, v->tmpl, i, v->dir);
        uint32_t a = 0;
        while (vat_task_draw(&t, a, &o, &r, &e) != 0)
            assert_true(++a < 40);
        assert_true(t.inline_full);
        assert_true(t.n_traps >= 3);
        size_t len;
        char *file = vat_tt_fixture_text(&t, 0, &len);
        char *block = vat_tt_inline_block(t.prompt, "csv");
        assert_string_equal(block, file);
        free(block);
        free(file);
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixty_tasks_arm_every_trap),
        cmocka_unit_test(test_inline_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_payments_reconciliation.c — what is particular to the compound
 * payments_reconciliation template: over 60 tasks every fixture holds the
 * rows that arm each trap (a settled event delivered twice inside the
 * window, an unsettled event inside it, a settled payment during D2, and,
 * when the prompt says refund signs are mixed, a refund written positive),
 * gold is recomputed here from the file, and each trap's answer is the
 * file's sum with exactly that one mistake made; with inline = "full"
 * every fixture is shown whole, traps still armed.  Admission, same
 * bytes and the golden cases of tests/data/cases/payments_reconciliation.txt
 * are checked by tests/test_analytics.c, the two styles by test_prompt.c.
 *
 * The program form (the generic checks are test_progform.c's):
 * each named mistake is a query of its own, armed on every fixture, whose
 * rows on the main fixture read as that mistake's value answer; the
 * question is the value form's explicit one; near-miss queries that pass
 * the main fixture (status NOT IN the three unsettled ones, status >=
 * 'settled', the window's end exclusive) fail on some variant; a compound
 * program form without traps_sql, or with a single mistake that gives
 * gold's rows, is refused. */
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
#include "progform.h"
#include "prompt.h"
#include "sqlgen.h"
#include "tables.h"
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
        /* every file shown whole: the value form, whatever its size */
        vat_tt_draw(v, &t, NULL, i, 1 << 20, 40, &r);
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
        /* the level asked for: default params ask for none, level 1 */
        assert_int_equal(t.difficulty, 1);
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

/* ---- the program form ------------------------------------------------------ */

static int mistake_bit(const char *nm)
{
    return strcmp(nm, "duplicates") == 0    ? M_DUP
           : strcmp(nm, "status") == 0      ? M_STATUS
           : strcmp(nm, "window") == 0      ? M_WINDOW
           : strcmp(nm, "refund_sign") == 0 ? M_SIGN
                                            : 0;
}

/* The value form of the same task (same attempt), below root, drawn with
 * cfg (t's with answer_form "value"; the caller frees it after u) and a
 * cap that shows the whole file (a value prompt shows every row). */
static json_t *draw_value_twin(const struct vat_task *t, uint32_t attempt, const char *root,
                               struct vat_task *u)
{
    json_t *cfg = json_deep_copy(t->cfg);
    json_object_set_new(cfg, "answer_form", json_string("value"));
    struct vat_draw_opts o = {.master_seed = t->master_seed, .cfg = cfg,
                              .inline_max_bytes = 1 << 20};
    struct vat_replay r;
    struct vat_err e = {{0}};
    vat_task_init(u, t->tmpl, t->index, root);
    assert_int_equal(vat_task_draw(u, attempt, &o, &r, &e), 0);
    return cfg;
}

/* The tables of a task in its program form: one rollout per single
 * mistake, role trap:<name>, its SQL scored 0 by the sql checker; the
 * preference pair a program pair whose rejected side is the combined
 * trap's SQL. */
static void assert_tables_replay_programs(const struct vat_task *t, const struct vat_replay *r)
{
    struct vat_tables tb;
    memset(&tb, 0, sizeof tb);
    vat_tables_add_task(&tb, t, r, "train");
    const struct vat_buf *b = &tb.buf[VAT_T_ROLLOUTS][VAT_SPLIT_TRAIN];
    char *text = vat_xstrndup(b->data, b->len);
    char *save = NULL;
    int traps = 0;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        json_t *row = json_loads(l, 0, NULL);
        assert_non_null(row);
        const char *role = json_string_value(json_object_get(row, "role"));
        if (strncmp(role, "trap:", 5) == 0) {
            int k = 0;
            while (k < t->n_traps && strcmp(t->traps[k].name, role + 5) != 0)
                k++;
            assert_true(k < t->n_traps);
            assert_string_equal(json_string_value(json_object_get(row, "answer")),
                                t->traps[k].answer);
            assert_true(json_is_true(json_object_get(row, "gate_passed")));
            assert_true(json_real_value(json_object_get(row, "score")) == 0.0);
            traps++;
        }
        json_decref(row);
    }
    assert_int_equal(traps, t->n_traps);
    free(text);
    b = &tb.buf[VAT_T_PREFERENCE_PAIRS][VAT_SPLIT_TRAIN];
    json_t *pair = json_loadb(b->data, b->len, JSON_DISABLE_EOF_CHECK, NULL);
    assert_non_null(pair);
    assert_string_equal(json_string_value(json_object_get(pair, "pair_kind")), "program");
    json_t *rej = json_object_get(json_array_get(json_object_get(pair, "rejected"), 0), "content");
    assert_string_equal(json_string_value(rej), t->trap);
    json_decref(pair);
    vat_tables_release(&tb);
}

static void test_program_form_single_mistakes(void **state)
{
    (void)state;
    const struct vat_template *tm = vat_template_find("payments_reconciliation");
    struct vat_tt_env *v = vat_tt_env_new(tm, SEED);
    json_object_set_new(v->cfg, "answer_form", json_string("sql"));
    json_object_set_new(v->cfg, "prompt_style", json_string("mixed"));
    char *other = vat_test_tmpdir("pr-value");
    int seen = 0;
    for (uint32_t i = 0; i < 8; i++) {
        struct vat_task t, u;
        struct vat_replay r;
        uint32_t a = vat_tt_draw(v, &t, NULL, i, 6000, 40, &r);
        assert_string_equal(vat_task_answer_form(&t), "sql");
        assert_true(t.n_fixtures >= 3);
        bool mixed = json_is_true(json_object_get(t.params, "mixed_refund_signs"));
        assert_int_equal(t.n_traps, mixed ? 4 : 3);
        struct vat_err e = {{0}};
        json_t *gold = vat_sqlgen_run_all(&t, t.gold, &e);
        assert_non_null(gold);
        int all = 0;
        for (int k = 0; k < t.n_traps; k++) {
            const char *sql = t.traps[k].answer;
            int bit = mistake_bit(t.traps[k].name);
            assert_true(bit != 0);
            all |= bit;
            assert_true(strncmp(sql, "SELECT ", 7) == 0);
            assert_string_not_equal(sql, t.trap);
            /* scored in admission through the sql checker: gate, then 0 */
            assert_true(r.traps[k].gate_passed);
            assert_true(r.traps[k].score == 0.0);
            /* armed on every fixture, the main one and each variant */
            json_t *rows = vat_sqlgen_run_all(&t, sql, &e);
            assert_non_null(rows);
            assert_int_equal(json_array_size(rows), (size_t)t.n_fixtures);
            for (int f = 0; f < t.n_fixtures; f++)
                assert_false(vat_sqlgen_rows_equal(json_array_get(gold, (size_t)f),
                                                   json_array_get(rows, (size_t)f), true, 1e-9,
                                                   1e-6, NULL, 0));
            /* on the main fixture its rows are that mistake's value answer */
            json_t *got = vat_progform_rows_value(json_array_get(rows, 0), VAT_AN_OBJECT, &e);
            assert_non_null(got);
            json_t *want = net(&t, bit);
            if (vat_an_agree("single mistake's rows vs its value", want, got, 1e-9, 1e-6, &e) != 0)
                fail_msg("%s: %s: %s", t.id, t.traps[k].name, e.msg);
            json_decref(want);
            json_decref(got);
            json_decref(rows);
        }
        assert_int_equal(all, mixed ? 15 : 7);
        if (i == 0)
            assert_tables_replay_programs(&t, &r);
        /* the value twin's mistakes are values */
        json_t *ucfg = draw_value_twin(&t, a, other, &u);
        assert_int_equal(u.n_traps, t.n_traps);
        for (int k = 0; k < u.n_traps; k++) {
            assert_string_equal(u.traps[k].name, t.traps[k].name);
            assert_true(u.traps[k].answer[0] == '{');
        }
        /* the question is the value form's question in the task's style:
         * the program form states it once, with the task's own window (an
         * explicit one after "Question: ", the dates as written in params;
         * a natural one with the dates as people write them) */
        const char *from = json_string_value(json_object_get(t.params, "from"));
        const char *to = json_string_value(json_object_get(t.params, "to"));
        assert_non_null(from);
        assert_non_null(to);
        assert_string_equal(t.prompt_style, u.prompt_style);
        char *line;
        if (strcmp(t.prompt_style, "explicit") == 0) {
            const char *q = strstr(t.prompt, "\nQuestion: ");
            assert_non_null(q);
            size_t ql = strcspn(q + 1, "\n");
            line = vat_xasprintf("%.*s", (int)ql, q + 1);
            assert_non_null(strstr(line, from));
            assert_non_null(strstr(line, to));
        } else {
            line = vat_xstrdup(t.prompt);
            int32_t d1, d2;
            char h1[32], h2[32];
            assert_int_equal(vat_parse_date(from, &d1), 0);
            assert_int_equal(vat_parse_date(to, &d2), 0);
            vat_prompt_human_date(d1, h1);
            vat_prompt_human_date(d2, h2);
            assert_non_null(strstr(line, h1));
            assert_non_null(strstr(line, h2));
            assert_non_null(strstr(line, "occurred"));
        }
        assert_non_null(strstr(line, "settled"));
        /* ... the same window as the value twin's */
        assert_string_equal(json_string_value(json_object_get(u.params, "from")), from);
        assert_string_equal(json_string_value(json_object_get(u.params, "to")), to);
        free(line);
        seen++;
        vat_task_clear(&u);
        json_decref(ucfg);
        json_decref(gold);
        vat_task_clear(&t);
    }
    assert_true(seen >= 1);
    vat_test_rmtree(other);
    free(other);
    vat_tt_env_free(v);
}

/* Replaces the first `from` in text by `to` (new string). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *p = strstr(text, from);
    assert_non_null(p);
    return vat_xasprintf("%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
}

/* Near misses that pass the main fixture fail on some variant. */
static void test_program_form_near_misses(void **state)
{
    (void)state;
    struct vat_tt_env *v = vat_tt_env_new(vat_template_find("payments_reconciliation"), SEED);
    json_object_set_new(v->cfg, "answer_form", json_string("sql"));
    for (uint32_t i = 0; i < 6; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, 40, &r);
        const char *to = vat_tt_param_str(&t, "to");
        char between[64], exclusive[96];
        snprintf(between, sizeof between, "BETWEEN '%s' AND '%s'", vat_tt_param_str(&t, "from"),
                 to);
        snprintf(exclusive, sizeof exclusive, ">= '%s' AND date(occurred_at) < '%s'",
                 vat_tt_param_str(&t, "from"), to);
        char *near[] = {
            replace(t.gold, "status = 'settled'",
                    "status NOT IN ('declined', 'failed', 'pending')"),
            replace(t.gold, "status = 'settled'", "status >= 'settled'"),
            replace(t.gold, between, exclusive),
        };
        struct vat_err e = {{0}};
        json_t *gold = vat_sqlgen_run_all(&t, t.gold, &e);
        assert_non_null(gold);
        for (size_t k = 0; k < sizeof near / sizeof *near; k++) {
            json_t *rows = vat_sqlgen_run_all(&t, near[k], &e);
            assert_non_null(rows);
            bool main_ok = vat_sqlgen_rows_equal(json_array_get(gold, 0),
                                                 json_array_get(rows, 0), true, 1e-9, 1e-6,
                                                 NULL, 0);
            /* the status ones pass the main fixture (it has no other status) */
            if (k < 2)
                assert_true(main_ok);
            struct vat_verdict vd = vat_tt_check(&t, near[k]);
            assert_true(vd.gate_passed);
            assert_true(vd.score < 1.0);
            json_decref(rows);
            free(near[k]);
        }
        json_decref(gold);
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

static char *gold_as_single(const struct vat_task *t, const struct vat_pf_names *n,
                            const char *name)
{
    (void)name;
    return t->tmpl->progform->gold_sql(t, n);
}

/* progform.c refuses a compound template whose single mistakes would stay
 * values, or one of which is not armed. */
static void test_program_form_refusals(void **state)
{
    (void)state;
    const struct vat_template *tm = vat_template_find("payments_reconciliation");
    struct vat_tt_env *v = vat_tt_env_new(tm, SEED);
    struct vat_progform pf = *tm->progform;
    for (int c = 0; c < 2; c++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, 0, 1 << 20, 40, &r); /* shown whole: the value form */
        assert_string_equal(vat_task_answer_form(&t), "value");
        pf.traps_sql = c == 0 ? NULL : gold_as_single;
        struct vat_err e = {{0}};
        assert_int_equal(vat_progform_apply(&t, &pf, &e), -1);
        assert_non_null(strstr(e.msg, c == 0 ? "no traps_sql" : "gives gold's rows"));
        /* the value answers stay */
        assert_true(t.traps[0].answer[0] == '{');
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixty_tasks_arm_every_trap),
        cmocka_unit_test(test_inline_full),
        cmocka_unit_test(test_program_form_single_mistakes),
        cmocka_unit_test(test_program_form_near_misses),
        cmocka_unit_test(test_program_form_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

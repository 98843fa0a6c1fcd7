/* test_grouped_count.c — the grouped_count template: 60 tasks admit (at
 * most five redraws in all) with gold 1, trap 0 (gate passed) and the
 * malformed answer gated out; the trap is armed in every task (some team
 * has two spellings in every file, often one differing only by a trailing
 * space); same seed -> same bytes; the prompt states the normalisation;
 * hand-made fixtures for trailing-space, case and inner-space labels and
 * broken files; confirm catches a wrong gold and a writer bug; checker
 * cases for key case, untrimmed keys and counts. */
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

#define SEED 64411u
#define NTASKS 60
#define MAX_ATTEMPTS 40

extern const struct vat_template vat_tmpl_grouped_count;
static const struct vat_template *const T = &vat_tmpl_grouped_count;

struct env {
    char *dir;
    json_t *cfg;
};

static int setup(void **state)
{
    struct env *v = calloc(1, sizeof *v);
    v->dir = vat_test_tmpdir("gcount");
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

/* Draws task index into root, redrawing as the pipeline would; returns
 * how many redraws it took (fails the test if none admits). */
static uint32_t draw(struct vat_task *t, const struct env *v, const char *root, uint32_t index,
                     size_t inline_max, struct vat_replay *r)
{
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = inline_max};
    struct vat_err e = {{0}};
    vat_task_init(t, T, index, root);
    for (uint32_t a = 0; a < MAX_ATTEMPTS; a++)
        if (vat_task_draw(t, a, &o, r, &e) == 0)
            return a;
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

/* Returns the text between "```csv\n" and the closing "```" of the prompt. */
static char *inline_block(const char *prompt)
{
    const char *a = strstr(prompt, "```csv\n");
    assert_non_null(a);
    a += 7;
    const char *z = strstr(a, "```");
    assert_non_null(z);
    return vat_xstrndup(a, (size_t)(z - a));
}

static struct vat_verdict check(const struct vat_task *t, const char *answer)
{
    return T->check(t, answer, strlen(answer));
}

/* The key the prompt defines: spaces trimmed at both ends, ASCII lower case. */
static void normalise(const char *s, char *out, size_t cap)
{
    size_t n = strlen(s);
    while (n && *s == ' ')
        s++, n--;
    while (n && s[n - 1] == ' ')
        n--;
    if (n >= cap)
        n = cap - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
    out[n] = 0;
}

/* ---- admission over many tasks -------------------------------------------- */

static void test_sixty_tasks_admit(void **state)
{
    struct env *v = *state;
    uint32_t redraws = 0;
    int with_trailing_only = 0, with_case_only = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        redraws += draw(&t, v, v->dir, i, 6000, &r);

        assert_true(r.v[VAT_ROLE_GOLD].gate_passed);
        assert_true(r.v[VAT_ROLE_GOLD].score == 1.0);
        assert_string_equal(r.v[VAT_ROLE_GOLD].code, "ok");
        assert_true(r.v[VAT_ROLE_TRAP].gate_passed);
        assert_true(r.v[VAT_ROLE_TRAP].score == 0.0);
        assert_false(r.v[VAT_ROLE_MALFORMED].gate_passed);

        assert_non_null(strstr(t.prompt, t.fixture[0].path));
        assert_true(t.difficulty >= 1 && t.difficulty <= 5);
        assert_string_equal(t.fixture[0].format, "csv");
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 3)), "team");
        assert_true(json_is_true(json_object_get(t.spec, "integer")));

        json_t *gold = json_loads(t.gold, 0, NULL), *trap = json_loads(t.trap, 0, NULL);
        assert_non_null(gold);
        assert_non_null(trap);
        struct vat_err e = {{0}};
        assert_int_equal(vat_an_agree("trap", gold, trap, 0, 0, &e), -1);

        /* Gold keys are normalised, counts add up to the rows, and some team
         * has two raw spellings in every file. */
        const char *k;
        json_t *x;
        json_int_t total = 0;
        json_object_foreach(gold, k, x) {
            char nk[64];
            normalise(k, nk, sizeof nk);
            assert_string_equal(k, nk);
            assert_true(json_is_integer(x));
            total += json_integer_value(x);
        }
        assert_int_equal(total, t.fixture[0].rows);
        assert_true(json_object_size(trap) > json_object_size(gold));
        bool trailing_only = false, case_only = false;
        const char *k2;
        json_t *y;
        json_object_foreach(trap, k, x) {
            json_object_foreach(trap, k2, y) {
                size_t n = strlen(k);
                if (strlen(k2) == n + 1 && strncmp(k, k2, n) == 0 && k2[n] == ' ')
                    trailing_only = true;
                char a[64], b[64];
                normalise(k, a, sizeof a);
                normalise(k2, b, sizeof b);
                if (strcmp(k, k2) != 0 && strlen(k2) == n && strlen(a) == n && strcmp(a, b) == 0)
                    case_only = true;
            }
        }
        with_trailing_only += trailing_only;
        with_case_only += case_only;
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
    assert_true(redraws <= 5);
    /* The subtle variants are exercised, not just possible. */
    assert_true(with_trailing_only >= 25);
    assert_true(with_case_only >= 10);
    print_message("  %u redraws; %d/%d tasks hold a label differing only by a trailing space, %d "
                  "one differing only by case\n",
                  redraws, with_trailing_only, NTASKS, with_case_only);
}

static void test_same_seed_same_bytes(void **state)
{
    struct env *v = *state;
    char *other = vat_test_tmpdir("gcount-b");
    for (uint32_t i = 0; i < 5; i++) {
        struct vat_task a, b;
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
        char *sa = vat_json_dumps(a.spec), *sb = vat_json_dumps(b.spec);
        assert_string_equal(sa, sb);
        free(sa), free(sb);

        struct vat_task n;
        draw(&n, v, other, i + 100, 6000, &r);
        assert_string_not_equal(a.fixture[0].sha256, n.fixture[0].sha256);
        vat_task_clear(&n);

        free(fa), free(fb);
        vat_task_clear(&a);
        vat_task_clear(&b);
    }
    vat_test_rmtree(other);
    free(other);
}

/* ---- the prompt ----------------------------------------------------------- */

static void test_prompt_states_the_rules(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 3, 1 << 20, &r);
    size_t len;
    char *file = fixture_text(&t, &len);
    char *block = inline_block(t.prompt);
    /* The edge spaces of the labels reach the prompt byte for byte. */
    assert_string_equal(block, file);
    assert_non_null(strstr(t.prompt, "`fixtures/grouped_count/grouped_count-00003.csv`"));
    assert_non_null(strstr(t.prompt, "removing the spaces at both ends and lower-casing"));
    assert_non_null(strstr(t.prompt, "spaces inside a name stay"));
    assert_non_null(strstr(t.prompt, "trimmed and in lower case"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 0"));
    assert_non_null(strstr(t.prompt, "Answer with one JSON value"));
    json_t *gold = json_loads(t.gold, 0, NULL);
    const char *k;
    json_t *x;
    json_object_foreach(gold, k, x) {
        char quoted[80];
        snprintf(quoted, sizeof quoted, "`%s`", k);
        assert_null(strstr(t.prompt, quoted));
    }
    json_decref(gold);
    assert_string_equal(json_string_value(json_object_get(t.params, "key_normalisation")),
                        "trim spaces at both ends, lower-case");
    free(block);
    free(file);
    vat_task_clear(&t);
}

/* ---- hand-made fixtures ----------------------------------------------------- */

/* Draws task index, then replaces its fixture with text and recomputes
 * gold, confirm and trap from it.  The generator's planted counts no
 * longer describe the file, so they are dropped. */
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

#define HDR "ticket_id,opened_at,requester,team,priority,channel\n"

static void test_labels_differing_by_a_trailing_space(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 10,
                   HDR "TCK-000001,2023-01-02 09:14:00,Maria Lopez,Billing,high,email\n"
                       "TCK-000002,2023-01-02 09:20:31,Wei Chen,Billing ,normal,chat\n"
                       "TCK-000003,2023-01-02 10:01:00,Ana Silva,Search,low,web\n"
                       "TCK-000004,2023-01-02 11:45:10,Omar Haddad,billing,normal,email\n"
                       "TCK-000005,2023-01-03 08:02:59,Kofi Mensah, BILLING,urgent,phone\n"
                       "TCK-000006,2023-01-03 08:30:00,Hana Sato,Billing,normal,email\n"
                       "TCK-000007,2023-01-03 09:00:00,Liam Murphy,Search  ,normal,chat\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "{\"billing\":5,\"search\":2}");
    assert_string_equal(t.trap, "{\" BILLING\":1,\"Billing\":2,\"Billing \":1,\"Search\":1,"
                                "\"Search  \":1,\"billing\":1}");
    struct vat_verdict g = check(&t, t.gold), tr = check(&t, t.trap);
    assert_true(g.gate_passed && g.score == 1.0);
    assert_true(tr.gate_passed && tr.score == 0.0);

    /* Lower-cased but not trimmed: "billing " is a team of its own. */
    struct vat_verdict u = check(&t, "{\"billing\":4,\"billing \":1,\"search\":2}");
    assert_true(u.gate_passed && u.score == 0.0);
    assert_string_equal(u.code, "extra_key");
    /* Trimmed but not lower-cased: the prompt fixes the case. */
    struct vat_verdict c = check(&t, "{\"Billing\":5,\"Search\":2}");
    assert_true(c.gate_passed && c.score == 0.0);
    assert_string_equal(c.code, "key_case");
    vat_task_clear(&t);
}

static void test_inner_spaces_stay(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 11,
                   HDR "TCK-000001,2023-01-02 09:14:00,Maria Lopez,Site Reliability,high,email\n"
                       "TCK-000002,2023-01-02 09:20:31,Wei Chen, site reliability ,normal,chat\n"
                       "TCK-000003,2023-01-02 10:01:00,Ana Silva,SITE RELIABILITY,low,web\n"
                       "TCK-000004,2023-01-02 11:45:10,Omar Haddad,Site  Reliability,normal,"
                       "email\n"
                       "TCK-000005,2023-01-03 08:02:59,\"Mensah, Kofi\",Data,urgent,phone\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "{\"data\":1,\"site  reliability\":1,\"site reliability\":3}");
    vat_task_clear(&t);
}

static void test_broken_fixtures_are_refused(void **state)
{
    struct env *v = *state;
    static const char *const bad[] = {
        /* renamed column */
        "ticket_id,opened_at,requester,queue,priority,channel\n"
        "TCK-000001,2023-01-02 09:14:00,Maria Lopez,Billing,high,email\n",
        /* a ticket without a team, blank or only spaces */
        HDR "TCK-000001,2023-01-02 09:14:00,Maria Lopez,,high,email\n",
        HDR "TCK-000001,2023-01-02 09:14:00,Maria Lopez,   ,high,email\n",
        /* a short record */
        HDR "TCK-000001,2023-01-02 09:14:00,Maria Lopez,Billing,high\n",
        /* no ticket at all */
        HDR,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vat_task t;
        struct vat_err e = {{0}};
        assert_int_equal(craft(&t, v, 13, bad[i], &e), -1);
        assert_true(e.msg[0] != 0);
        assert_non_null(strstr(e.msg, "grouped_count-00013"));
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

    json_t *gold = json_loads(t.gold, 0, NULL);
    const char *k = json_object_iter_key(json_object_iter(gold));
    json_t *x = json_object_get(gold, k);
    json_integer_set(x, json_integer_value(x) + 1);
    free(t.gold);
    t.gold = vat_json_dumps(gold);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "sql over the loaded csv disagrees"));
    assert_non_null(strstr(e.msg, k));
    json_decref(gold);
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 21, 6000, &r);
    /* Move one ticket to another team in the file, as a faulty writer
     * would: reference and SQL agree, the planted counts do not. */
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    char a[64], b[64];
    normalise(vat_csv_get(&c, 1, 3), a, sizeof a);
    size_t k = 2;
    for (;; k++) {
        assert_true(k < c.nrows);
        normalise(vat_csv_get(&c, k, 3), b, sizeof b);
        if (strcmp(a, b) != 0)
            break;
    }
    free(c.row[1].cell[3]);
    c.row[1].cell[3] = vat_xstrdup(vat_csv_get(&c, k, 3));
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
    struct vat_buf text = VAT_BUF_INIT;
    vat_buf_puts(&text, HDR);
    for (int i = 0; i < 12; i++)
        vat_buf_printf(&text, "TCK-1%05d,2023-02-01 10:00:00,Ana Silva,%s,normal,web\n", i,
                       i % 3 == 0 ? "Payments " : i % 3 == 1 ? "payments" : "Payments");
    vat_buf_puts(&text, "TCK-200000,2023-02-02 10:00:00,Wei Chen,Mobile,high,chat\n"
                        "TCK-200001,2023-02-02 11:00:00,Wei Chen,MOBILE,low,chat\n");
    int rc = craft(&t, v, 30, text.data, &e);
    vat_buf_release(&text);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "{\"mobile\":2,\"payments\":12}");

    static const char *const pass[] = {
        "{\"mobile\":2,\"payments\":12}",
        "{\"payments\":12,\"mobile\":2}",
        "{\"mobile\":2.0,\"payments\":12.0}",
        "{\"mobile\":\"2\",\"payments\":\"12\"}",
        "{\"mobile\":2,\"payments\":1.2e1}",
        "\n{ \"mobile\" : 2 , \"payments\" : 12 }\n",
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
        {"{\"mobile\":2,\"payments\":11}", "wrong_value"},
        {"{\"mobile\":2,\"payments\":12.5}", "wrong_value"},
        {"{\"mobile\":2,\"payments\":8}", "wrong_value"},
        {"{\"payments\":12}", "missing_key"},
        {"{\"mobile\":2,\"payments\":12,\"billing\":0}", "extra_key"},
        {"{\"Mobile\":2,\"payments\":12}", "key_case"},
        {"{\"mobile\":2,\"payments \":12}", "key_case"},
        {"{\"Mobile\":1,\"MOBILE\":1,\"Payments\":4,\"Payments \":4,\"payments\":4}", "key_case"},
    };
    for (size_t i = 0; i < sizeof scored0 / sizeof scored0[0]; i++) {
        struct vat_verdict vd = check(&t, scored0[i].answer);
        if (!vd.gate_passed || vd.score != 0.0 || strcmp(vd.code, scored0[i].code) != 0)
            fail_msg("'%s' should score 0 with %s, got gate %d score %g %s (%s)",
                     scored0[i].answer, scored0[i].code, vd.gate_passed, vd.score, vd.code,
                     vd.reason);
    }

    static const char *const gated[] = {
        "The answer is: {\"mobile\":2,\"payments\":12}",
        "[[\"mobile\",2],[\"payments\",12]]",
        "14",
        "{\"mobile\":\"two\",\"payments\":12}",
        "{\"mobile\":true,\"payments\":12}",
        "{\"mobile\":2,\"mobile\":2,\"payments\":12}",
        "{\"mobile\":2 \"payments\":12}",
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
        cmocka_unit_test(test_prompt_states_the_rules),
        cmocka_unit_test(test_labels_differing_by_a_trailing_space),
        cmocka_unit_test(test_inner_spaces_stay),
        cmocka_unit_test(test_broken_fixtures_are_refused),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
        cmocka_unit_test(test_confirm_catches_a_writer_bug),
        cmocka_unit_test(test_checker_cases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

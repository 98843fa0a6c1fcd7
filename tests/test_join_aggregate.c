/* test_join_aggregate.c — the join_aggregate template: 60 tasks admit (at
 * most 5 redraws in all) with gold 1, trap 0 (gate passed) and the
 * malformed answer gated out; every fixture holds a customer with three
 * history rows who ordered, and the trap (fan-out) inflates the totals in
 * every task; same seed -> same bytes; the prompt shows schema and rows,
 * whole or truncated; a hand-made database with a three-row customer who
 * moved back, stored newest first; broken databases are refused; confirm
 * (C over plain row reads) catches a wrong gold and a writer bug; checker
 * cases around the gold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "admit.h"
#include "analytics.h"
#include "jsonout.h"
#include "sqlio.h"
#include "template.h"
#include "testutil.h"

#define SEED 33911u
#define NTASKS 60
#define MAX_REDRAWS 5

extern const struct vat_template vat_tmpl_join_aggregate;
static const struct vat_template *const T = &vat_tmpl_join_aggregate;

struct env {
    char *dir;
    json_t *cfg;
};

static int setup(void **state)
{
    struct env *v = calloc(1, sizeof *v);
    v->dir = vat_test_tmpdir("joinagg");
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

/* Draws task index into root, redrawing as the pipeline would; adds the
 * redraws used to *redraws and fails when none of the attempts admits. */
static void draw_counting(struct vat_task *t, const struct env *v, const char *root,
                          uint32_t index, size_t inline_max, struct vat_replay *r, int *redraws)
{
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = inline_max};
    struct vat_err e = {{0}};
    vat_task_init(t, T, index, root);
    for (uint32_t a = 0; a <= MAX_REDRAWS; a++) {
        if (vat_task_draw(t, a, &o, r, &e) == 0)
            return;
        if (redraws)
            ++*redraws;
    }
    fail_msg("%s not admitted: %s", t->id, e.msg);
}

static void draw(struct vat_task *t, const struct env *v, const char *root, uint32_t index,
                 size_t inline_max, struct vat_replay *r)
{
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = inline_max};
    struct vat_err e = {{0}};
    vat_task_init(t, T, index, root);
    if (vat_task_draw(t, 0, &o, r, &e) != 0)
        fail_msg("%s not admitted: %s", t->id, e.msg);
}

static char *fixture_bytes(const struct vat_task *t, size_t *len)
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

/* Asserts two JSON texts hold the same value (numbers exactly equal). */
static void assert_same_json(const char *got, const char *want)
{
    json_t *g = json_loads(got, JSON_DECODE_ANY, NULL), *w = json_loads(want, JSON_DECODE_ANY, NULL);
    assert_non_null(g);
    assert_non_null(w);
    struct vat_err e = {{0}};
    if (vat_an_agree("json", w, g, 0, 0, &e) != 0)
        fail_msg("'%s' is not '%s': %s", got, want, e.msg);
    json_decref(g);
    json_decref(w);
}

/* Runs a one-number query on the task's fixture. */
static long long query_number(const struct vat_task *t, const char *sql)
{
    sqlite3 *db = NULL;
    struct vat_err e = {{0}};
    assert_int_equal(vat_sqlite_open_ro(t->root, t->fixture[0].path, &db, &e), 0);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* The sum of an object's numbers. */
static double total_of(const char *text)
{
    json_t *o = json_loads(text, 0, NULL);
    assert_non_null(o);
    double s = 0;
    const char *k;
    json_t *x;
    json_object_foreach(o, k, x) s += json_number_value(x);
    json_decref(o);
    return s;
}

/* ---- admission over many tasks -------------------------------------------- */

static void test_sixty_tasks_admit(void **state)
{
    struct env *v = *state;
    int redraws = 0, newest_first = 0, truncated = 0, moved_back = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        draw_counting(&t, v, v->dir, i, 6000, &r, &redraws);

        assert_true(r.v[VAT_ROLE_GOLD].gate_passed);
        assert_true(r.v[VAT_ROLE_GOLD].score == 1.0);
        assert_string_equal(r.v[VAT_ROLE_GOLD].code, "ok");
        assert_true(r.v[VAT_ROLE_TRAP].gate_passed);
        assert_true(r.v[VAT_ROLE_TRAP].score == 0.0);
        assert_false(r.v[VAT_ROLE_MALFORMED].gate_passed);

        assert_non_null(strstr(t.prompt, t.fixture[0].path));
        assert_true(t.difficulty >= 1 && t.difficulty <= 5);
        assert_string_equal(t.fixture[0].format, "sqlite");
        assert_string_equal(t.fixture[0].role, "main");
        assert_int_equal(t.n_fixtures, 1);
        assert_int_equal(json_array_size(t.fixture[0].columns), 7);
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 5)),
                            "customer_history.country");
        assert_int_equal(t.fixture[0].rows,
                         query_number(&t, "SELECT (SELECT COUNT(*) FROM orders) + "
                                          "(SELECT COUNT(*) FROM customer_history)"));
        /* A customer with three history rows placed an order. */
        assert_true(query_number(&t, "SELECT COUNT(*) FROM orders WHERE customer_id IN (SELECT "
                                     "customer_id FROM customer_history GROUP BY customer_id "
                                     "HAVING COUNT(*) = 3)") >= 1);
        /* Storage order: some customer's latest row is not its last row. */
        newest_first += query_number(&t, "SELECT COUNT(*) FROM customer_history AS h WHERE "
                                         "h.rowid = (SELECT MAX(rowid) FROM customer_history AS "
                                         "x WHERE x.customer_id = h.customer_id) AND "
                                         "h.valid_from < (SELECT MAX(valid_from) FROM "
                                         "customer_history AS x WHERE x.customer_id = "
                                         "h.customer_id)") > 0;
        moved_back += query_number(&t, "SELECT COUNT(*) FROM (SELECT customer_id FROM "
                                       "customer_history GROUP BY customer_id HAVING COUNT(*) > "
                                       "COUNT(DISTINCT country))") > 0;
        truncated += strstr(t.prompt, "Only the leading rows fit") != NULL;
        vat_task_clear(&t);
    }
    assert_true(redraws <= MAX_REDRAWS);
    assert_true(newest_first >= 5);
    assert_true(moved_back >= 3);
    print_message("  %d redraws; %d/%d tasks store history newest first, %d have a customer who "
                  "moved back, %d a truncated inline section\n",
                  redraws, newest_first, NTASKS, moved_back, truncated);
}

/* The trap differs from gold in every task: the fan-out counts an order
 * once per history row, so the trap's grand total is larger. */
static void test_trap_armed_in_every_task(void **state)
{
    struct env *v = *state;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        draw_counting(&t, v, v->dir, i, 6000, &r, NULL);
        json_t *gold = json_loads(t.gold, 0, NULL), *trap = json_loads(t.trap, 0, NULL);
        assert_non_null(gold);
        assert_non_null(trap);
        struct vat_err e = {{0}};
        assert_int_equal(vat_an_agree("trap", gold, trap, 1e-9, 1e-6, &e), -1);
        json_decref(gold);
        json_decref(trap);
        double g = total_of(t.gold), x = total_of(t.trap);
        assert_true(x > g + 5.0 - 1e-6); /* at least one order of 5.00 or more, counted again */
        /* Gold's grand total is every order once. */
        long long cents = query_number(&t, "SELECT SUM(CAST(round(amount * 100) AS INTEGER)) "
                                           "FROM orders");
        assert_true(g * 100 > (double)cents - 0.5 && g * 100 < (double)cents + 0.5);
        vat_task_clear(&t);
    }
}

static void test_same_seed_same_bytes(void **state)
{
    struct env *v = *state;
    char *other = vat_test_tmpdir("joinagg-b");
    for (uint32_t i = 0; i < 5; i++) {
        struct vat_task a, b;
        struct vat_replay r;
        draw(&a, v, v->dir, i, 6000, &r);
        draw(&b, v, other, i, 6000, &r);
        size_t la, lb;
        char *fa = fixture_bytes(&a, &la), *fb = fixture_bytes(&b, &lb);
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

static void test_prompt_shows_schema_and_rows(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 3, 1 << 20, &r);
    assert_non_null(strstr(t.prompt, "`fixtures/join_aggregate/join_aggregate-00003.sqlite`"));
    assert_non_null(strstr(t.prompt, "CREATE TABLE orders"));
    assert_non_null(strstr(t.prompt, "CREATE TABLE customer_history"));
    assert_non_null(strstr(t.prompt, "INSERT INTO orders VALUES"));
    assert_non_null(strstr(t.prompt, "INSERT INTO customer_history VALUES"));
    assert_non_null(strstr(t.prompt, "The schema and all rows"));
    assert_null(strstr(t.prompt, "Only the leading rows fit"));
    /* The rules a solver needs are stated. */
    assert_non_null(strstr(t.prompt, "latest `valid_from`"));
    assert_non_null(strstr(t.prompt, "count each order exactly once"));
    assert_non_null(strstr(t.prompt, "lived elsewhere on the order date"));
    assert_non_null(strstr(t.prompt, "not listed with 0"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 1e-6"));
    /* Every order is shown. */
    char expect[64];
    snprintf(expect, sizeof expect, "-- orders: all %lld rows",
             query_number(&t, "SELECT COUNT(*) FROM orders"));
    assert_non_null(strstr(t.prompt, expect));
    /* The format example uses placeholders, never a real country. */
    json_t *gold = json_loads(t.gold, 0, NULL);
    const char *k;
    json_t *x;
    json_object_foreach(gold, k, x) {
        char quoted[80];
        snprintf(quoted, sizeof quoted, "{\"%s\"", k);
        assert_null(strstr(t.prompt, quoted));
    }
    json_decref(gold);
    vat_task_clear(&t);

    draw(&t, v, v->dir, 4, 700, &r);
    assert_non_null(strstr(t.prompt, "the leading rows of each table"));
    assert_non_null(strstr(t.prompt, "Only the leading rows fit"));
    assert_non_null(strstr(t.prompt, "CREATE TABLE customer_history"));
    vat_task_clear(&t);
}

/* ---- hand-made databases ---------------------------------------------------- */

#define SCHEMA                                                                          \
    "CREATE TABLE orders (order_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, "      \
    "amount REAL NOT NULL, ordered_on TEXT NOT NULL);"                                  \
    "CREATE TABLE customer_history (customer_id TEXT NOT NULL, country TEXT NOT NULL, " \
    "valid_from TEXT NOT NULL);"

/* Draws task index, then replaces its database with the one sql builds
 * and recomputes gold, confirm and trap (the planted totals are dropped:
 * they no longer describe the file). */
static int craft(struct vat_task *t, const struct env *v, uint32_t index, const char *sql,
                 struct vat_err *e)
{
    struct vat_replay r;
    draw(t, v, v->dir, index, 6000, &r);
    struct vat_sqlw w;
    assert_int_equal(vat_sqlw_open(&w, t->root, t->fixture[0].path, sql, e), 0);
    assert_int_equal(vat_sqlw_commit(&w, e), 0);
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

/* CUST-A lived in France, then Spain, then France again (three rows,
 * stored newest first); CUST-D moved from Chile to Peru; CUST-C moved but
 * never ordered. */
static const char three_rows_db[] =
    SCHEMA "INSERT INTO orders VALUES ('SO-1', 'CUST-A', 10.0, '2023-01-05'),"
           "('SO-2', 'CUST-A', 5.5, '2023-02-01'), ('SO-3', 'CUST-B', 2.25, '2023-03-01'),"
           "('SO-4', 'CUST-D', 0.1, '2023-03-02'), ('SO-5', 'CUST-D', 0.2, '2023-03-03');"
           "INSERT INTO customer_history VALUES ('CUST-A', 'France', '2023-06-01'),"
           "('CUST-A', 'Spain', '2021-03-15'), ('CUST-A', 'France', '2019-01-01'),"
           "('CUST-B', 'Japan', '2018-07-07'), ('CUST-C', 'Peru', '2020-01-01'),"
           "('CUST-C', 'Chile', '2022-01-01'), ('CUST-D', 'Chile', '2017-01-01'),"
           "('CUST-D', 'Peru', '2022-05-05');";

static void test_customer_with_three_history_rows(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    if (craft(&t, v, 10, three_rows_db, &e) != 0)
        fail_msg("%s", e.msg);
    /* 0.1 + 0.2 is summed in cents: exactly 0.3. */
    assert_string_equal(t.gold, "{\"France\":15.5,\"Japan\":2.25,\"Peru\":0.3}");
    /* The fan-out: CUST-A's orders three times (twice in France), CUST-D's
     * twice. */
    assert_same_json(t.trap,
                     "{\"Chile\":0.3,\"France\":31.0,\"Japan\":2.25,\"Peru\":0.3,\"Spain\":15.5}");
    struct vat_verdict g = check(&t, t.gold), tr = check(&t, t.trap);
    assert_true(g.gate_passed && g.score == 1.0);
    assert_true(tr.gate_passed && tr.score == 0.0);
    assert_string_equal(tr.code, "extra_key");
    /* Other plausible mistakes score 0 too: the country on the order date
     * (an as-of join), and the first history row stored. */
    struct vat_verdict asof = check(&t, "{\"Japan\":2.25,\"Peru\":0.3,\"Spain\":15.5}");
    assert_true(asof.gate_passed && asof.score == 0.0);
    struct vat_verdict first = check(&t, "{\"France\":15.5,\"Japan\":2.25,\"Chile\":0.3}");
    assert_true(first.gate_passed && first.score == 0.0);
    vat_task_clear(&t);
}

static void test_broken_databases_are_refused(void **state)
{
    struct env *v = *state;
    static const char *const bad[] = {
        /* two rows with the same valid_from: no single latest */
        SCHEMA "INSERT INTO orders VALUES ('SO-1', 'CUST-A', 10.0, '2023-01-05');"
               "INSERT INTO customer_history VALUES ('CUST-A', 'France', '2020-01-01'),"
               "('CUST-A', 'Spain', '2020-01-01');",
        /* an order of a customer without history */
        SCHEMA "INSERT INTO orders VALUES ('SO-1', 'CUST-A', 10.0, '2023-01-05'),"
               "('SO-2', 'CUST-Z', 1.0, '2023-01-06');"
               "INSERT INTO customer_history VALUES ('CUST-A', 'France', '2020-01-01');",
        /* a date in another format: text order would not be date order */
        SCHEMA "INSERT INTO orders VALUES ('SO-1', 'CUST-A', 10.0, '2023-01-05');"
               "INSERT INTO customer_history VALUES ('CUST-A', 'France', '2020/01/01');",
        /* an amount in fractions of a cent */
        SCHEMA "INSERT INTO orders VALUES ('SO-1', 'CUST-A', 10.005, '2023-01-05');"
               "INSERT INTO customer_history VALUES ('CUST-A', 'France', '2020-01-01');",
        /* an amount stored as text */
        "CREATE TABLE orders (order_id TEXT, customer_id TEXT, amount, ordered_on TEXT);"
        "CREATE TABLE customer_history (customer_id TEXT, country TEXT, valid_from TEXT);"
        "INSERT INTO orders VALUES ('SO-1', 'CUST-A', '10.00', '2023-01-05');"
        "INSERT INTO customer_history VALUES ('CUST-A', 'France', '2020-01-01');",
        /* a blank country */
        SCHEMA "INSERT INTO orders VALUES ('SO-1', 'CUST-A', 10.0, '2023-01-05');"
               "INSERT INTO customer_history VALUES ('CUST-A', '', '2020-01-01');",
        /* no order at all */
        SCHEMA "INSERT INTO customer_history VALUES ('CUST-A', 'France', '2020-01-01');",
        /* the history table under another name */
        "CREATE TABLE orders (order_id TEXT, customer_id TEXT, amount REAL, ordered_on TEXT);"
        "CREATE TABLE customers (customer_id TEXT, country TEXT, valid_from TEXT);",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vat_task t;
        struct vat_err e = {{0}};
        if (craft(&t, v, 13, bad[i], &e) != -1)
            fail_msg("database %zu was accepted: gold %s", i, t.gold);
        assert_true(e.msg[0] != 0);
        assert_non_null(strstr(e.msg, "join_aggregate-00013"));
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

    /* One cent more in one country. */
    json_t *gold = json_loads(t.gold, 0, NULL);
    const char *k = json_object_iter_key(json_object_iter(gold));
    json_t *x = json_object_get(gold, k);
    json_real_set(x, json_real_value(x) + 0.01);
    char *orig = t.gold;
    t.gold = vat_json_dumps(gold);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "c over plain row reads disagrees"));
    assert_non_null(strstr(e.msg, k));
    json_decref(gold);
    free(t.gold);

    /* The fan-out answer as gold. */
    t.gold = vat_xstrdup(t.trap);
    assert_int_equal(T->confirm(&t, &e), -1);
    free(t.gold);
    t.gold = orig;
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 21, 6000, &r);
    /* A writer that lost a cent on one order: the SQL reference and the C
     * row reads both read the file and agree, the planted totals do not. */
    char *path = vat_path_join(t.root, t.fixture[0].path);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "UPDATE orders SET amount = amount - 0.01 WHERE rowid = "
                                  "(SELECT MIN(rowid) FROM orders)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    free(path);
    struct vat_err e = {{0}};
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
    if (craft(&t, v, 30, three_rows_db, &e) != 0)
        fail_msg("%s", e.msg);

    static const char *const pass[] = {
        "{\"France\":15.5,\"Japan\":2.25,\"Peru\":0.3}",
        "{\"Peru\":0.3,\"France\":15.5,\"Japan\":2.25}",
        "{\"France\":15.50,\"Japan\":2.250,\"Peru\":0.30}",
        "{\"France\":\"15.50\",\"Japan\":\"2.25\",\"Peru\":\"0.30\"}",
        "{\"France\":15.5000000001,\"Japan\":2.25,\"Peru\":0.30000000000000004}",
        "{\"France\":1.55e1,\"Japan\":2.25,\"Peru\":3e-1}",
        "\n{ \"France\": 15.5, \"Japan\": 2.25, \"Peru\": 0.3 }\n",
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
        {"{\"France\":15.51,\"Japan\":2.25,\"Peru\":0.3}", "wrong_value"},
        {"{\"France\":16,\"Japan\":2.25,\"Peru\":0.3}", "wrong_value"},
        {"{\"France\":31.0,\"Japan\":2.25,\"Peru\":0.3}", "wrong_value"},
        {"{\"France\":15.5,\"Japan\":2.25}", "missing_key"},
        {"{\"France\":15.5,\"Japan\":2.25,\"Peru\":0.3,\"Spain\":0}", "extra_key"},
        {"{\"france\":15.5,\"Japan\":2.25,\"Peru\":0.3}", "key_case"},
    };
    for (size_t i = 0; i < sizeof scored0 / sizeof scored0[0]; i++) {
        struct vat_verdict vd = check(&t, scored0[i].answer);
        if (!vd.gate_passed || vd.score != 0.0 || strcmp(vd.code, scored0[i].code) != 0)
            fail_msg("'%s' should score 0 with %s, got gate %d score %g %s (%s)",
                     scored0[i].answer, scored0[i].code, vd.gate_passed, vd.score, vd.code,
                     vd.reason);
    }

    static const char *const gated[] = {
        "The answer is: {\"France\":15.5,\"Japan\":2.25,\"Peru\":0.3}",
        "18.05",
        "[[\"France\",15.5],[\"Japan\",2.25],[\"Peru\",0.3]]",
        "{\"France\":\"15.5 EUR\",\"Japan\":2.25,\"Peru\":0.3}",
        "{\"France\":{\"total\":15.5},\"Japan\":2.25,\"Peru\":0.3}",
        "{\"France\":15.5,\"France\":15.5,\"Japan\":2.25,\"Peru\":0.3}",
        "SELECT country, SUM(amount) FROM orders",
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
        cmocka_unit_test(test_trap_armed_in_every_task),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_prompt_shows_schema_and_rows),
        cmocka_unit_test(test_customer_with_three_history_rows),
        cmocka_unit_test(test_broken_databases_are_refused),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
        cmocka_unit_test(test_confirm_catches_a_writer_bug),
        cmocka_unit_test(test_checker_cases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

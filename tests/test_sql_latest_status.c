/* test_sql_latest_status.c — the sql_latest_status template: 24 draws
 * admitted on their first draw with the right replays (gold 1, the trap 0
 * behind a passed gate, the malformed answer gated); every fixture holds
 * its corners, read back from the file (a backfilled order, a tie at the
 * latest time, an order of one change, a reversed import, a long
 * history), and gold's rows on every fixture equal a third derivation
 * written here; equivalent queries pass (a window function, a correlated
 * subquery with LIMIT, SQLite's bare column beside MAX) and near misses
 * fail (latest by id, MAX of the status, ties kept, ties to the lower id,
 * the other direction, rows hard-coded from the main fixture); gold's
 * mutants are killed; the question follows the task index; the same seed
 * gives the same bytes; confirm refuses a wrong gold and a fixture whose
 * timestamp is not one; the row params size the fixture. */
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
#include "sqlgen.h"
#include "strength.h"
#include "template.h"
#include "testutil.h"
#include "values.h"
#include "vat.h"

extern const struct vat_template vat_tmpl_sql_latest_status;
#define TMPL (&vat_tmpl_sql_latest_status)

#define SEED 20261205u
#define NTASKS 24

static int group_setup(void **state)
{
    *state = vat_tt_drawn_new(TMPL, SEED, NTASKS);
    return 0;
}

static int group_teardown(void **state)
{
    vat_tt_drawn_free(*state);
    return 0;
}

static const char *param(const struct vat_task *t, const char *key)
{
    return vat_tt_param_str(t, key);
}

static const char *alias(const struct vat_task *t)
{
    const char *s = json_string_value(json_array_get(json_object_get(t->params, "output_columns"), 1));
    assert_non_null(s);
    return s;
}

static bool descending(const struct vat_task *t)
{
    return strcmp(param(t, "order"), "descending") == 0;
}

/* ---- one fixture's changes, read back from the file ----------------------------- */

struct change {
    const char *oid, *status;
    int64_t at, eid;
};

struct log {
    json_t *rows;
    struct change *v;
    size_t n;
};

static void log_read(const struct vat_task *t, int f, struct log *l)
{
    struct vat_err e = {{0}};
    json_t *cols = NULL;
    l->rows = vat_sqlgen_read_table(t->root, t->fixture[f].path, param(t, "table"), &cols, &e);
    if (!l->rows)
        fail_msg("%s: %s", t->id, e.msg);
    int ko = vat_sqlgen_col(cols, param(t, "order_id_column"));
    int ks = vat_sqlgen_col(cols, param(t, "status_column"));
    int kt = vat_sqlgen_col(cols, param(t, "time_column"));
    int ke = vat_sqlgen_col(cols, param(t, "event_id_column"));
    assert_true(ko >= 0 && ks >= 0 && kt >= 0 && ke >= 0);
    l->n = json_array_size(l->rows);
    l->v = vat_xcalloc(l->n + 1, sizeof *l->v);
    for (size_t i = 0; i < l->n; i++) {
        const json_t *r = json_array_get(l->rows, i);
        struct change *c = &l->v[i];
        c->oid = json_string_value(json_array_get(r, (size_t)ko));
        c->status = json_string_value(json_array_get(r, (size_t)ks));
        c->eid = json_integer_value(json_array_get(r, (size_t)ke));
        assert_non_null(c->oid);
        assert_non_null(c->status);
        assert_int_equal(vat_parse_timestamp(json_string_value(json_array_get(r, (size_t)kt)),
                                             &c->at),
                         0);
    }
    json_decref(cols);
}

static void log_free(struct log *l)
{
    json_decref(l->rows);
    free(l->v);
}

/* What one order's changes show: its change with the latest time (the
 * higher id on a tie), its change with the highest id, how many changes,
 * whether two share the latest time with other statuses, and whether its
 * ids run against its times throughout (a reversed import). */
struct order_view {
    const struct change *latest, *top_id;
    size_t n;
    bool tie, reversed;
};

static struct order_view view(const struct log *l, const char *oid)
{
    struct order_view o = {NULL, NULL, 0, false, true};
    for (size_t i = 0; i < l->n; i++) {
        const struct change *c = &l->v[i];
        if (strcmp(c->oid, oid) != 0)
            continue;
        o.n++;
        if (!o.latest || c->at > o.latest->at || (c->at == o.latest->at && c->eid > o.latest->eid))
            o.latest = c;
        if (!o.top_id || c->eid > o.top_id->eid)
            o.top_id = c;
        for (size_t j = 0; j < l->n; j++) {
            const struct change *d = &l->v[j];
            if (j != i && strcmp(d->oid, oid) == 0 && d->eid > c->eid && d->at >= c->at)
                o.reversed = false;
        }
    }
    for (size_t i = 0; i < l->n; i++) {
        const struct change *c = &l->v[i];
        if (c != o.latest && strcmp(c->oid, oid) == 0 && c->at == o.latest->at &&
            strcmp(c->status, o.latest->status) != 0)
            o.tie = true;
    }
    o.reversed = o.reversed && o.n >= 2;
    return o;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct order ids of a log, sorted. */
static const char **order_ids(const struct log *l, size_t *n)
{
    const char **ids = vat_xcalloc(l->n + 1, sizeof *ids);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        bool seen = false;
        for (size_t j = 0; j < k && !seen; j++)
            seen = strcmp(ids[j], l->v[i].oid) == 0;
        if (!seen)
            ids[k++] = l->v[i].oid;
    }
    qsort(ids, k, sizeof *ids, cmp_str);
    *n = k;
    return ids;
}

/* ---- the tests -------------------------------------------------------------------- */

static void test_admitted_with_replays(void **state)
{
    struct vat_tt_drawn *d = *state;
    for (uint32_t i = 0; i < d->n; i++) {
        const struct vat_task *t = &d->t[i];
        struct vat_replay r = {.v = {vat_tt_check(t, t->gold), vat_tt_check(t, t->trap),
                                     vat_tt_check(t, t->malformed)}};
        vat_tt_assert_replays(&r);
        assert_int_equal(t->n_fixtures, 4);
        assert_string_equal(t->fixture[0].role, "main");
        for (int k = 1; k < t->n_fixtures; k++) {
            assert_string_equal(t->fixture[k].role, "variant");
            assert_string_equal(t->fixture[k].format, "sqlite");
        }
        /* the level asked for: default params ask for none, level 1 */
        assert_int_equal(t->difficulty, 1);
        /* the default row params: 20..40 changes in the main fixture */
        assert_true(t->fixture[0].rows >= 20 && t->fixture[0].rows <= 40);
    }
}

static void test_spec_params_prompt(void **state)
{
    struct vat_tt_drawn *d = *state;
    static const char *const named[] = {"table", "order_id_column", "status_column",
                                        "time_column", "event_id_column"};
    for (uint32_t i = 0; i < d->n; i++) {
        const struct vat_task *t = &d->t[i];
        assert_string_equal(json_string_value(json_object_get(t->spec, "checker")), "sql");
        assert_true(json_is_true(json_object_get(t->spec, "ordered")));
        assert_string_equal(json_string_value(json_object_get(t->spec, "reference_sql")),
                            t->gold);
        assert_null(strstr(t->gold, "LIMIT"));
        assert_non_null(strstr(t->prompt, t->fixture[0].path));
        assert_non_null(strstr(t->prompt, "CREATE TABLE"));
        for (size_t k = 0; k < VAT_N_OF(named); k++) {
            /* the table in its CREATE statement, the columns backticked */
            char *q = vat_xasprintf(k == 0 ? "CREATE TABLE %s (" : "`%s`", param(t, named[k]));
            if (!strstr(t->prompt, q))
                fail_msg("%s: the prompt never names %s", t->id, q);
            free(q);
        }
        char *a = vat_xasprintf("`%s`", alias(t));
        assert_non_null(strstr(t->prompt, a));
        free(a);
        assert_non_null(strstr(t->prompt, param(t, "order")));
        for (int f = 1; f < t->n_fixtures; f++)
            assert_null(strstr(t->prompt, t->fixture[f].path));
    }
}

/* Every fixture holds its corners, read from the file, and gold's rows on
 * it equal the latest change per order found here. */
static void test_fixture_corners_and_gold(void **state)
{
    struct vat_tt_drawn *d = *state;
    for (uint32_t i = 0; i < d->n; i++) {
        const struct vat_task *t = &d->t[i];
        struct vat_err e = {{0}};
        json_t *runs = vat_sqlgen_run_all(t, t->gold, &e);
        if (!runs)
            fail_msg("%s: %s", t->id, e.msg);
        for (int f = 0; f < t->n_fixtures; f++) {
            struct log l;
            log_read(t, f, &l);
            size_t n;
            const char **ids = order_ids(&l, &n);
            bool backfill = false, tie = false, single = false, reversed = false, longest = false;
            json_t *want = json_array();
            for (size_t k = 0; k < n; k++) {
                const char *oid = ids[descending(t) ? n - 1 - k : k];
                struct order_view o = view(&l, oid);
                backfill |= o.top_id != o.latest && strcmp(o.top_id->status, o.latest->status) != 0;
                tie |= o.tie;
                single |= o.n == 1;
                reversed |= o.reversed;
                longest |= o.n == 6;
                json_array_append_new(want, json_pack("[ss]", oid, o.latest->status));
            }
            int kind = f == 0 ? 0 : (f - 1) % 3 + 1;
            if (!backfill)
                fail_msg("%s fixture %d: no order whose highest id is not its latest change",
                         t->id, f);
            if ((kind <= 1 && !tie) || (kind != 2 && !single) || (kind == 2 && !reversed) ||
                (kind == 3 && !longest))
                fail_msg("%s fixture %d (kind %d): corners tie %d single %d reversed %d long %d",
                         t->id, f, kind, tie, single, reversed, longest);
            char why[256] = "";
            if (!vat_sqlgen_rows_equal(want, json_array_get(runs, (size_t)f), true, 0, 0, why,
                                       sizeof why))
                fail_msg("%s fixture %d: gold's rows differ from the latest changes: %s", t->id,
                         f, why);
            json_decref(want);
            free(ids);
            log_free(&l);
        }
        json_decref(runs);
    }
}

/* A query for task t from a pattern whose @1..@7 stand for, in order:
 * the table, the order id, status, time and event id columns, the
 * status's alias and the direction (ASC or DESC). */
static char *query(const struct vat_task *t, const char *fmt)
{
    const char *args[7] = {param(t, "table"),       param(t, "order_id_column"),
                           param(t, "status_column"), param(t, "time_column"),
                           param(t, "event_id_column"), alias(t),
                           descending(t) ? "DESC" : "ASC"};
    struct vat_buf b = VAT_BUF_INIT;
    for (const char *p = fmt; *p; p++) {
        if (*p == '@' && p[1] >= '1' && p[1] <= '7') {
            vat_buf_puts(&b, args[p[1] - '1']);
            p++;
        } else {
            vat_buf_putc(&b, *p);
        }
    }
    return vat_buf_detach(&b);
}

static void test_equivalent_queries_pass(void **state)
{
    static const char *const good[] = {
        /* a window function */
        "SELECT @2, @3 AS @6 FROM (SELECT @2, @3, ROW_NUMBER() OVER (PARTITION BY @2 ORDER BY "
        "@4 DESC, @5 DESC) AS rn FROM @1) WHERE rn = 1 ORDER BY @2 @7",
        /* a correlated subquery with LIMIT, lower case, a semicolon */
        "select e.@2, e.@3 as @6 from @1 e where e.@5 = (select x.@5 from @1 x where x.@2 = "
        "e.@2 order by x.@4 desc, x.@5 desc limit 1) order by e.@2 @7;",
        /* SQLite's bare column beside MAX: the row of the greatest key */
        "SELECT @2, @3 AS @6 FROM (SELECT @2, @3, MAX(@4 || printf('%012d', @5)) FROM @1 GROUP "
        "BY @2) ORDER BY @2 @7",
        /* the conditions spelled out, in a CTE */
        "WITH last AS (SELECT @2 AS o, MAX(@4) AS ts FROM @1 GROUP BY @2) SELECT e.@2, e.@3 AS "
        "@6 FROM @1 AS e JOIN last ON last.o = e.@2 AND last.ts = e.@4 WHERE e.@5 = (SELECT "
        "MAX(y.@5) FROM @1 AS y WHERE y.@2 = e.@2 AND y.@4 = e.@4) ORDER BY e.@2 @7",
    };
    struct vat_tt_drawn *d = *state;
    for (uint32_t i = 0; i < d->n; i++) {
        const struct vat_task *t = &d->t[i];
        for (size_t k = 0; k < VAT_N_OF(good); k++) {
            char *q = query(t, good[k]);
            struct vat_verdict v = vat_tt_check(t, q);
            if (strcmp(v.code, "ok") != 0)
                fail_msg("%s: equivalent query %zu scored %s (%s):\n%s", t->id, k, v.code,
                         v.reason, q);
            free(q);
        }
    }
}

/* Hard-coded rows: gold's result on the main fixture as a VALUES list. */
static char *hard_coded(const struct vat_task *t)
{
    struct vat_err e = {{0}};
    json_t *runs = vat_sqlgen_run_all(t, t->gold, &e);
    assert_non_null(runs);
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, "SELECT column1, column2 FROM (VALUES ");
    const json_t *rows = json_array_get(runs, 0);
    for (size_t r = 0; r < json_array_size(rows); r++) {
        const json_t *row = json_array_get(rows, r);
        vat_buf_puts(&b, r ? ", (" : "(");
        vat_sqlgen_put_literal(&b, json_string_value(json_array_get(row, 0)));
        vat_buf_puts(&b, ", ");
        vat_sqlgen_put_literal(&b, json_string_value(json_array_get(row, 1)));
        vat_buf_puts(&b, ")");
    }
    vat_buf_puts(&b, ")");
    json_decref(runs);
    return vat_buf_detach(&b);
}

static void test_near_misses_fail(void **state)
{
    static const char *const bad[] = {
        /* latest by id (the trap, spelled otherwise) */
        "SELECT @2, @3 AS @6 FROM @1 WHERE @5 IN (SELECT MAX(@5) FROM @1 GROUP BY @2) ORDER BY "
        "@2 @7",
        /* the greatest status as text */
        "SELECT @2, MAX(@3) AS @6 FROM @1 GROUP BY @2 ORDER BY @2 @7",
        /* ties kept: two rows for an order whose latest changes share a time */
        "SELECT e.@2, e.@3 AS @6 FROM @1 AS e WHERE e.@4 = (SELECT MAX(l.@4) FROM @1 AS l WHERE "
        "l.@2 = e.@2) ORDER BY e.@2 @7",
        /* ties to the lower id */
        "SELECT @2, @3 AS @6 FROM (SELECT @2, @3, ROW_NUMBER() OVER (PARTITION BY @2 ORDER BY "
        "@4 DESC, @5 ASC) AS rn FROM @1) WHERE rn = 1 ORDER BY @2 @7",
        /* the first change, not the latest */
        "SELECT @2, @3 AS @6 FROM (SELECT @2, @3, ROW_NUMBER() OVER (PARTITION BY @2 ORDER BY "
        "@4 ASC, @5 ASC) AS rn FROM @1) WHERE rn = 1 ORDER BY @2 @7",
    };
    struct vat_tt_drawn *d = *state;
    for (uint32_t i = 0; i < d->n; i++) {
        const struct vat_task *t = &d->t[i];
        char *q[VAT_N_OF(bad) + 2];
        for (size_t k = 0; k < VAT_N_OF(bad); k++)
            q[k] = query(t, bad[k]);
        /* the other direction */
        char *flip = query(t, descending(t) ? "ASC" : "DESC");
        q[VAT_N_OF(bad)] = query(t, "SELECT e.@2, e.@3 AS @6 FROM @1 AS e WHERE NOT EXISTS "
                                    "(SELECT * FROM @1 AS l WHERE l.@2 = e.@2 AND (l.@4, l.@5) > "
                                    "(e.@4, e.@5)) ORDER BY e.@2 ");
        char *full = vat_xasprintf("%s%s", q[VAT_N_OF(bad)], flip);
        free(q[VAT_N_OF(bad)]);
        free(flip);
        q[VAT_N_OF(bad)] = full;
        q[VAT_N_OF(bad) + 1] = hard_coded(t);
        for (size_t k = 0; k < VAT_N_OF(q); k++) {
            struct vat_verdict v = vat_tt_check(t, q[k]);
            if (!v.gate_passed || v.score != 0.0)
                fail_msg("%s: near miss %zu scored %g (%s %s):\n%s", t->id, k, v.score, v.code,
                         v.reason, q[k]);
            free(q[k]);
        }
        /* the trap itself: the highest event id, with MAX */
        assert_non_null(strstr(t->trap, "MAX("));
    }
}

static void test_mutants_killed(void **state)
{
    struct vat_tt_drawn *d = *state;
    struct vat_strength all = VAT_STRENGTH_INIT;
    for (uint32_t i = 0; i < d->n; i++) {
        struct vat_strength s = VAT_STRENGTH_INIT;
        assert_int_equal(vat_strength_task(&d->t[i], &s), 0);
        if (vat_strength_share(&s) < 0.9)
            fail_msg("%s: only %.0f%% of mutants killed", d->t[i].id,
                     100 * vat_strength_share(&s));
        vat_strength_add(&all, &s);
        vat_strength_release(&s);
    }
    print_message("  %ld of %ld mutants killed\n", all.killed, all.killed + all.survivors);
    assert_true(vat_strength_share(&all) >= 0.98);
    vat_strength_release(&all);
}

/* The parts of the question the gold spells (docs/scale.md). */
static char *question_parts(const struct vat_task *t)
{
    return vat_xasprintf("%s|%s|%s|%s|%s|%s|%s", param(t, "table"), param(t, "order_id_column"),
                         param(t, "status_column"), param(t, "time_column"),
                         param(t, "event_id_column"), alias(t), param(t, "order"));
}

/* Task i asks question i of the space: the parts differ between tasks and
 * a redraw asks the same question over new data. */
static void test_question_from_index(void **state)
{
    struct vat_tt_drawn *d = *state;
    char *parts[NTASKS];
    bool seen_desc = false, seen_asc = false;
    for (uint32_t i = 0; i < d->n; i++) {
        parts[i] = question_parts(&d->t[i]);
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(parts[i], parts[j]) == 0)
                fail_msg("%s and %s ask the same question %s", d->t[j].id, d->t[i].id, parts[i]);
        seen_desc |= descending(&d->t[i]);
        seen_asc |= !descending(&d->t[i]);
    }
    assert_true(seen_desc && seen_asc);
    /* redrawn in a root of their own: the group's files stay as drawn */
    char *root = vat_test_tmpdir("latest-redraw");
    for (uint32_t i = 0; i < 3; i++) {
        struct vat_task t;
        struct vat_replay r;
        struct vat_err e = {{0}};
        struct vat_draw_opts o = {
            .master_seed = d->env->seed, .cfg = d->env->cfg, .inline_max_bytes = 6000};
        vat_task_init(&t, d->env->tmpl, i, root);
        assert_int_equal(vat_task_draw(&t, 1, &o, &r, &e), 0);
        assert_string_not_equal(t.fixture[0].sha256, d->t[i].fixture[0].sha256);
        char *again = question_parts(&t);
        assert_string_equal(again, parts[i]);
        free(again);
        vat_task_clear(&t);
    }
    vat_test_rmtree(root);
    free(root);
    for (uint32_t i = 0; i < d->n; i++)
        free(parts[i]);
}

static void test_same_seed_same_bytes(void **state)
{
    struct vat_tt_drawn *d = *state;
    char *root2 = vat_test_tmpdir("latest2");
    for (uint32_t i = 0; i < 4; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(d->env, &t, root2, i, 6000, 1, &r);
        vat_tt_assert_same_task(&d->t[i], &t);
        vat_task_clear(&t);
    }
    vat_tt_assert_redraw_differs(d->env, root2, 0, &d->t[0]);
    vat_test_rmtree(root2);
    free(root2);
}

static void test_confirm_catches_a_wrong_gold(void **state)
{
    struct vat_tt_drawn *d = *state;
    struct vat_task *t = &d->t[3];
    struct vat_err e = {{0}};
    assert_int_equal(t->tmpl->confirm(t, &e), 0);
    char *gold = t->gold;
    t->gold = t->trap;
    assert_int_equal(t->tmpl->confirm(t, &e), -1);
    assert_non_null(strstr(e.msg, "disagree"));
    t->gold = gold;
}

/* A fixture whose timestamp is not one: confirm (which parses times, not
 * compares text) refuses it naming the file, the row and the cell. */
static void test_confirm_refuses_a_bad_timestamp(void **state)
{
    struct vat_tt_drawn *d = *state;
    char *root = vat_test_tmpdir("latest-bad");
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(d->env, &t, root, 0, 6000, 1, &r);
    char *path = vat_xasprintf("%s/%s", t.root, t.fixture[0].path);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *sql = vat_xasprintf("UPDATE %s SET %s = '2026-02-30 10:00:00' WHERE rowid = "
                              "(SELECT MIN(rowid) FROM %s)",
                              param(&t, "table"), param(&t, "time_column"), param(&t, "table"));
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    struct vat_err e = {{0}};
    assert_int_equal(t.tmpl->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "'2026-02-30 10:00:00' is not a timestamp"));
    assert_non_null(strstr(e.msg, "row 1"));
    free(sql);
    free(path);
    vat_task_clear(&t);
    vat_test_rmtree(root);
    free(root);
}

/* events_min and events_max size the main fixture exactly, at the
 * smallest the corners allow and far above it; a prompt over budget shows
 * the leading rows and says so. */
static void test_row_params(void **state)
{
    (void)state;
    static const long sizes[][2] = {{20, 20}, {300, 320}};
    for (size_t s = 0; s < VAT_N_OF(sizes); s++) {
        struct vat_tt_env *v = vat_tt_env_new(TMPL, SEED);
        json_object_set_new(v->cfg, "events_min", json_integer(sizes[s][0]));
        json_object_set_new(v->cfg, "events_max", json_integer(sizes[s][1]));
        for (uint32_t i = 0; i < 4; i++) {
            struct vat_task t;
            struct vat_replay r;
            vat_tt_draw(v, &t, NULL, i, 6000, 1, &r);
            vat_tt_assert_replays(&r);
            assert_true(t.fixture[0].rows >= sizes[s][0] && t.fixture[0].rows <= sizes[s][1]);
            assert_int_equal(strstr(t.prompt, "Only the leading rows fit here") != NULL, s == 1);
            vat_task_clear(&t);
        }
        vat_tt_env_free(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admitted_with_replays),
        cmocka_unit_test(test_spec_params_prompt),
        cmocka_unit_test(test_fixture_corners_and_gold),
        cmocka_unit_test(test_equivalent_queries_pass),
        cmocka_unit_test(test_near_misses_fail),
        cmocka_unit_test(test_mutants_killed),
        cmocka_unit_test(test_question_from_index),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
        cmocka_unit_test(test_confirm_refuses_a_bad_timestamp),
        cmocka_unit_test(test_row_params),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

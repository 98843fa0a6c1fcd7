/* test_trapmods.c — the cross-cutting trap modules (templates/trapmod.h):
 * planting then cleaning gives the table back, each module's own mistake
 * is what its cleaning switched off reads, the SQL cleaning agrees with
 * the C one, and every template declaring modules, built at levels 3 to
 * 5 as the pipeline draws it, arms as many as its level promises, each
 * proven on its own (its trap passes the gate and scores below 1), in
 * the value form and in the program form. */
#include <ctype.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "analytics.h"
#include "csvio.h"
#include "progform.h"
#include "template.h"
#include "testutil.h"
#include "trapmod.h"

#define SEED 20261205
#define MAX_REDRAWS 40
#define TASKS 2
/* Level-3 value tasks per template: one module each, every accepted
 * one among them. */
#define VALUE_TASKS 20

extern const struct vat_template vat_tmpl_grouped_sum;

static const char *const cols[] = {"order_id", "customer", "region",
                                   "status",   "amount",   "ordered_on"};

static void fill(struct vat_csv *c, size_t n)
{
    static const char *const st[] = {"paid", "pending", "refunded"};
    vat_csv_add_row(c, cols, 6);
    for (size_t i = 0; i < n; i++) {
        char id[32], amt[32];
        snprintf(id, sizeof id, "ORD-%06zu", 100000 + i);
        snprintf(amt, sizeof amt, "%zu.%02zu", 17 + i * 731 % 4000, i * 37 % 100);
        vat_csv_row_begin(c);
        vat_csv_add(c, id);
        vat_csv_add(c, i % 5 ? "Ada Lee" : "");
        vat_csv_add(c, i % 3 ? "North" : "South");
        vat_csv_add(c, st[i % 3]);
        vat_csv_add(c, amt);
        vat_csv_add(c, "2024-03-01");
    }
}

static bool same_table(const struct vat_csv *a, const struct vat_csv *b)
{
    if (a->nrows != b->nrows)
        return false;
    for (size_t i = 0; i < a->nrows; i++)
        for (size_t j = 0; j < 6; j++)
            if (strcmp(vat_csv_get(a, i, j), vat_csv_get(b, i, j)) != 0)
                return false;
    return true;
}

static size_t count_cells(const struct vat_csv *c, size_t col, const char *chars)
{
    size_t n = 0;
    for (size_t i = 1; i < c->nrows; i++)
        n += strpbrk(vat_csv_get(c, i, col), chars) != NULL;
    return n;
}

static size_t count_prefix(const struct vat_csv *c, size_t col, const char *prefix)
{
    size_t n = 0;
    for (size_t i = 1; i < c->nrows; i++)
        n += strncmp(vat_csv_get(c, i, col), prefix, strlen(prefix)) == 0;
    return n;
}

/* A fresh copy of c (header and data rows, the planted columns too), to
 * clean. */
static void data_rows(struct vat_csv *all, const struct vat_csv *c)
{
    for (size_t i = 0; i < c->nrows; i++) {
        vat_csv_row_begin(all);
        for (size_t j = 0; j < c->row[i].n; j++)
            vat_csv_add(all, vat_csv_get(c, i, j));
    }
}

/* A copy of c's rows into *all, cleaned as a reader does (the planted
 * columns, then the rows) with the modules in `off` left out
 * (t->trapmods_off is set to it). */
static void clean_copy(struct vat_task *t, const struct vat_csv *c, unsigned off,
                       struct vat_csv *all)
{
    data_rows(all, c);
    t->trapmods_off = off;
    vat_trapmod_columns(t, all);
    vat_trapmod_clean(t, all);
}

/* Planting every module but the sign convention (whose refunds take
 * money off), then cleaning every one, gives the table back; each
 * cleaning switched off leaves exactly its module's rows. */
static void test_plant_then_clean(void **state)
{
    (void)state;
    struct vat_task t;
    vat_task_init(&t, &vat_tmpl_grouped_sum, 3, "/nonexistent");
    t.master_seed = SEED;
    t.trapmods = vat_trapmod_accepted(&vat_tmpl_grouped_sum) & ~VAT_TM_SIGN;
    struct vat_csv orig = VAT_CSV_INIT, c = VAT_CSV_INIT;
    fill(&orig, 60);
    fill(&c, 60);
    vat_trapmod_plant(&t, &c, ".csv");
    assert_true(c.nrows >= orig.nrows + 8);            /* copies appended  */
    assert_true(count_cells(&c, 4, "$,") >= 2);         /* text numbers     */
    assert_true(count_cells(&c, 3, "PAID ") >= 2);      /* status spellings */
    assert_false(same_table(&orig, &c));

    struct vat_csv all = VAT_CSV_INIT;
    clean_copy(&t, &c, 0, &all);
    assert_true(same_table(&orig, &all));
    vat_csv_release(&all);

    /* text numbers off: their rows are skipped, nothing else moves */
    clean_copy(&t, &c, VAT_TM_TEXTNUM, &all);
    assert_true(all.nrows < orig.nrows);
    assert_int_equal(count_cells(&all, 4, "$,"), 0);
    vat_csv_release(&all);

    /* duplicates off: the copies stay, the test entries and the rows
     * loaded after the cut-off go */
    size_t tests = count_prefix(&c, 0, "TEST-"), late = 0, gone = 0;
    int lc = vat_csv_col(&c, 0, "loaded_at");
    assert_int_equal(lc, (int)c.row[0].n - 1);
    for (size_t i = 1; i < c.nrows; i++) {
        bool is_late = strcmp(vat_csv_get(&c, i, (size_t)lc), "2026-01-05 06:30:15") > 0;
        late += is_late;
        gone += is_late || strncmp(vat_csv_get(&c, i, 0), "TEST-", 5) == 0;
    }
    assert_true(tests >= 3);
    assert_true(late >= 3);
    clean_copy(&t, &c, VAT_TM_DUPLICATES, &all);
    assert_int_equal(all.nrows, c.nrows - gone);
    assert_int_equal(count_prefix(&all, 0, "TEST-"), 0);
    vat_csv_release(&all);

    /* late rows off: the amendments stay (but those of a test entry, and
     * a second copy of one), each with its source's id and another
     * amount */
    clean_copy(&t, &c, VAT_TM_LATE, &all);
    assert_true(all.nrows > orig.nrows && all.nrows <= orig.nrows + late);
    for (size_t i = orig.nrows; i < all.nrows; i++) {
        bool found = false, other = true;
        for (size_t j = 1; j < orig.nrows; j++)
            if (strcmp(vat_csv_get(&all, i, 0), vat_csv_get(&orig, j, 0)) == 0) {
                found = true;
                other = strcmp(vat_csv_get(&all, i, 4), vat_csv_get(&orig, j, 4)) != 0;
            }
        assert_true(found && other);
    }
    vat_csv_release(&all);

    /* the boundary off: the two rows loaded at the cut-off itself go */
    size_t at_cut = 0;
    for (size_t i = 1; i < c.nrows; i++)
        at_cut += strcmp(vat_csv_get(&c, i, (size_t)lc), "2026-01-05 06:30:15") == 0;
    assert_true(at_cut >= 2);
    clean_copy(&t, &c, VAT_TM_BOUNDARY, &all);
    assert_int_equal(all.nrows, orig.nrows - 2);
    vat_csv_release(&all);

    /* test entries off: they stay, each a copy of a real row but its id
     * (once each: a test entry the duplicates copied is dropped as one) */
    size_t distinct = 0;
    for (size_t i = 1; i < c.nrows; i++) {
        const char *id = vat_csv_get(&c, i, 0);
        bool again = false;
        for (size_t j = 1; j < i && !again; j++)
            again = strcmp(vat_csv_get(&c, j, 0), id) == 0;
        distinct += !again && strncmp(id, "TEST-", 5) == 0;
    }
    clean_copy(&t, &c, VAT_TM_TEST, &all);
    assert_int_equal(count_prefix(&all, 0, "TEST-"), distinct);
    assert_int_equal(all.nrows, orig.nrows + distinct);
    vat_csv_release(&all);

    /* the look-alike, planted right after the amount, dropped by the
     * reader; off, its figures (each amount raised by 5-25%) read as the
     * amounts */
    assert_string_equal(vat_csv_get(&c, 0, 5), "list_amount");
    clean_copy(&t, &c, VAT_TM_LOOKALIKE, &all);
    assert_int_equal(all.nrows, orig.nrows);
    for (size_t i = 1; i < orig.nrows; i++) {
        assert_int_equal(all.row[i].n, 6);
        double got = strtod(vat_csv_get(&all, i, 4), NULL);
        double was = strtod(vat_csv_get(&orig, i, 4), NULL);
        assert_true(got >= was * 1.05 - 0.006 && got <= was * 1.25 + 0.006);
    }
    vat_csv_release(&all);

    /* nothing armed: nothing planted, nothing cleaned */
    t.trapmods = 0;
    t.trapmods_off = 0;
    struct vat_csv again = VAT_CSV_INIT;
    fill(&again, 60);
    vat_trapmod_plant(&t, &again, ".csv");
    vat_trapmod_clean(&t, &again);
    assert_true(same_table(&orig, &again));
    vat_csv_release(&again);
    vat_csv_release(&orig);
    vat_csv_release(&c);
    vat_task_clear(&t);
}

/* sign_convention with every other module: entry_type planted before
 * loaded_at, "charge" on every row but the refunds, each a partial copy
 * (10-45% of the amount) of a paid row placed after it, never the source
 * of another module's copy; cleaned, a refund's amount is negated and
 * the paid total drops by the refunds; off, they add as written. */
static void test_sign_convention(void **state)
{
    (void)state;
    struct vat_task t;
    vat_task_init(&t, &vat_tmpl_grouped_sum, 4, "/nonexistent");
    t.master_seed = SEED;
    t.trapmods = vat_trapmod_accepted(&vat_tmpl_grouped_sum);
    assert_true(t.trapmods & VAT_TM_SIGN);
    struct vat_csv orig = VAT_CSV_INIT, c = VAT_CSV_INIT;
    fill(&orig, 90);
    fill(&c, 90);
    vat_trapmod_plant(&t, &c, ".csv");
    size_t n = c.row[0].n;
    assert_string_equal(vat_csv_get(&c, 0, n - 2), "entry_type");
    assert_string_equal(vat_csv_get(&c, 0, n - 1), "loaded_at");
    double refunded = 0;
    size_t refunds = 0;
    for (size_t i = 1; i < c.nrows; i++) {
        const char *kind = vat_csv_get(&c, i, n - 2);
        if (strcmp(kind, "refund") != 0) {
            assert_string_equal(kind, "charge");
            continue;
        }
        refunds++;
        const char *id = vat_csv_get(&c, i, 0);
        /* no other module copied a refund: not a test entry, not loaded
         * late, not repeated */
        assert_int_not_equal(strncmp(id, "TEST-", 5), 0);
        assert_true(strcmp(vat_csv_get(&c, i, n - 1), "2026-01-05 06:30:15") <= 0);
        for (size_t j = i + 1; j < c.nrows; j++)
            assert_false(strcmp(vat_csv_get(&c, j, 0), id) == 0 &&
                         strcmp(vat_csv_get(&c, j, n - 2), "refund") == 0);
        assert_string_equal(vat_csv_get(&c, i, 3), "paid");
        /* the source, the first row with its id, comes before */
        size_t src = 0;
        for (size_t j = 1; j < c.nrows && !src; j++)
            if (strcmp(vat_csv_get(&c, j, 0), id) == 0)
                src = j;
        assert_true(src > 0 && src < i);
        double x = strtod(vat_csv_get(&c, i, 4), NULL);
        size_t o = 0;
        while (strcmp(vat_csv_get(&orig, o, 0), id) != 0)
            o++;
        double was = strtod(vat_csv_get(&orig, o, 4), NULL);
        assert_true(x >= was * 0.10 - 0.006 && x <= was * 0.45 + 0.006);
        refunded += x;
    }
    assert_true(refunds >= 3);
    double paid = 0, clean = 0, off = 0;
    for (size_t i = 1; i < orig.nrows; i++)
        if (strcmp(vat_csv_get(&orig, i, 3), "paid") == 0)
            paid += strtod(vat_csv_get(&orig, i, 4), NULL);
    struct vat_csv all = VAT_CSV_INIT;
    for (int pass = 0; pass < 2; pass++) {
        clean_copy(&t, &c, pass ? VAT_TM_SIGN : 0, &all);
        assert_int_equal(all.row[0].n, 6);
        assert_int_equal(all.nrows, orig.nrows + refunds);
        double sum = 0;
        for (size_t i = 1; i < all.nrows; i++)
            if (strcmp(vat_csv_get(&all, i, 3), "paid") == 0)
                sum += strtod(vat_csv_get(&all, i, 4), NULL);
        *(pass ? &off : &clean) = sum;
        vat_csv_release(&all);
    }
    assert_true(fabs(clean - (paid - refunded)) < 1e-6);
    assert_true(fabs(off - (paid + refunded)) < 1e-6);
    vat_csv_release(&orig);
    vat_csv_release(&c);
    vat_task_clear(&t);
}

/* The CTE the program form prefixes cleans in SQL what the C reader
 * cleans: the planted table's paid total per region equals that of the
 * rows the C cleaning keeps. */
static void test_sql_cleaning_agrees(void **state)
{
    (void)state;
    struct vat_task t;
    vat_task_init(&t, &vat_tmpl_grouped_sum, 5, "/nonexistent");
    t.master_seed = SEED;
    t.trapmods = vat_trapmod_accepted(&vat_tmpl_grouped_sum);
    struct vat_csv orig = VAT_CSV_INIT, c = VAT_CSV_INIT;
    fill(&orig, 40);
    fill(&c, 40);
    vat_trapmod_plant(&t, &c, ".csv");
    static const char *const types[] = {"TEXT", "TEXT", "TEXT", "TEXT", "REAL", "TEXT"};
    /* the planted table: the look-alike after the amount, entry_type and
     * loaded_at last */
    static const char *const planted[] = {"TEXT", "TEXT", "TEXT", "TEXT", "REAL",
                                          "REAL", "TEXT", "TEXT", "TEXT"};
    assert_int_equal(c.row[0].n, 9);
    /* what the C reader keeps */
    vat_csv_release(&orig);
    clean_copy(&t, &c, 0, &orig);
    t.trapmods_off = 0;
    sqlite3 *a = NULL, *b = NULL;
    assert_int_equal(sqlite3_open(":memory:", &a), SQLITE_OK);
    assert_int_equal(sqlite3_open(":memory:", &b), SQLITE_OK);
    struct vat_err e;
    assert_int_equal(vat_csv_to_sqlite(&orig, 0, a, "orders", types, 1, &e), 0);
    assert_int_equal(vat_csv_to_sqlite(&c, 0, b, "orders", planted, 1, &e), 0);
    json_t *want = vat_an_sql_json(a, "SELECT region, SUM(amount) FROM orders WHERE status = "
                                      "'paid' GROUP BY region ORDER BY region",
                                   VAT_AN_OBJECT, &e);
    const struct vat_progform *pf = vat_tmpl_grouped_sum.progform;
    char *gold = vat_trapmod_wrap_sql(&t, pf, "orders",
                                      "SELECT region, SUM(amount) FROM orders WHERE status = "
                                      "'paid' GROUP BY region ORDER BY region",
                                      0);
    json_t *got = vat_an_sql_json(b, gold, VAT_AN_OBJECT, &e);
    assert_non_null(want);
    assert_non_null(got);
    assert_int_equal(vat_an_agree("cleaned", want, got, 1e-9, 1e-6, &e), 0);
    /* each module's cleaning left out gives other totals */
    for (unsigned m = 1; m <= VAT_TM_LAST; m <<= 1) {
        if (!(t.trapmods & m))
            continue;
        char *trap = vat_trapmod_wrap_sql(&t, pf, "orders",
                                          "SELECT region, SUM(amount) FROM orders WHERE status "
                                          "= 'paid' GROUP BY region ORDER BY region",
                                          m);
        json_t *tv = vat_an_sql_json(b, trap, VAT_AN_OBJECT, &e);
        assert_non_null(tv);
        assert_int_not_equal(vat_an_agree("trap", want, tv, 1e-9, 1e-6, &e), 0);
        json_decref(tv);
        free(trap);
    }
    /* the UPDATE/DELETE cleaning of a loaded CSV agrees too */
    assert_int_equal(vat_trapmod_clean_sqlite(&t, b, "orders", &e), 0);
    json_t *loaded = vat_an_sql_json(b, "SELECT region, SUM(amount) FROM orders WHERE status = "
                                        "'paid' GROUP BY region ORDER BY region",
                                     VAT_AN_OBJECT, &e);
    assert_non_null(loaded);
    assert_int_equal(vat_an_agree("loaded", want, loaded, 1e-9, 1e-6, &e), 0);
    json_decref(loaded);
    json_decref(want);
    json_decref(got);
    free(gold);
    sqlite3_close(a);
    sqlite3_close(b);
    vat_csv_release(&orig);
    vat_csv_release(&c);
    vat_task_clear(&t);
}

/* The totals line: appended last, TOTAL under the id and the label, the
 * amounts' sum under amount; cleaned in C, by the loaded table's DELETE
 * and by the program form's CTE; left in, it is one more record. */
static void test_totals_line(void **state)
{
    (void)state;
    static const struct vat_trapmods mods = {
        .id = "order_id", .totals = true, .label = "region", .total = "amount"};
    struct vat_template tm = vat_tmpl_grouped_sum;
    tm.modules = &mods;
    struct vat_task t;
    vat_task_init(&t, &tm, 4, "/nonexistent");
    t.master_seed = SEED;
    t.trapmods = VAT_TM_TOTALS;
    struct vat_csv orig = VAT_CSV_INIT, c = VAT_CSV_INIT;
    fill(&orig, 30);
    fill(&c, 30);
    vat_trapmod_plant(&t, &c, ".csv");
    assert_int_equal(c.nrows, orig.nrows + 1);
    size_t last = c.nrows - 1;
    assert_string_equal(vat_csv_get(&c, last, 0), "TOTAL");
    assert_string_equal(vat_csv_get(&c, last, 2), "TOTAL");
    assert_string_equal(vat_csv_get(&c, last, 3), "");
    double sum = 0;
    for (size_t i = 1; i < orig.nrows; i++)
        sum += strtod(vat_csv_get(&orig, i, 4), NULL);
    assert_true(strtod(vat_csv_get(&c, last, 4), NULL) - sum < 0.006 &&
                sum - strtod(vat_csv_get(&c, last, 4), NULL) < 0.006);

    struct vat_csv all = VAT_CSV_INIT;
    clean_copy(&t, &c, 0, &all);
    assert_true(same_table(&orig, &all));
    vat_csv_release(&all);
    clean_copy(&t, &c, VAT_TM_TOTALS, &all);
    assert_int_equal(all.nrows, c.nrows);
    vat_csv_release(&all);
    t.trapmods_off = 0;

    static const char *const types[] = {"TEXT", "TEXT", "TEXT", "TEXT", "REAL", "TEXT"};
    static const char q[] = "SELECT COUNT(*) FROM orders";
    sqlite3 *db = NULL;
    struct vat_err e;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(vat_csv_to_sqlite(&c, 0, db, "orders", types, 1, &e), 0);
    char *gold = vat_trapmod_wrap_sql(&t, tm.progform, "orders", q, 0);
    char *trap = vat_trapmod_wrap_sql(&t, tm.progform, "orders", q, VAT_TM_TOTALS);
    json_t *g = vat_an_sql_json(db, gold, VAT_AN_NUMBER, &e);
    json_t *tr = vat_an_sql_json(db, trap, VAT_AN_NUMBER, &e);
    assert_int_equal(json_integer_value(g) + json_real_value(g), 30);
    assert_int_equal(json_integer_value(tr) + json_real_value(tr), 31);
    assert_int_equal(vat_trapmod_clean_sqlite(&t, db, "orders", &e), 0);
    json_t *loaded = vat_an_sql_json(db, q, VAT_AN_NUMBER, &e);
    assert_int_equal(json_integer_value(loaded) + json_real_value(loaded), 30);
    json_decref(g);
    json_decref(tr);
    json_decref(loaded);
    free(gold);
    free(trap);
    sqlite3_close(db);
    vat_csv_release(&orig);
    vat_csv_release(&c);
    vat_task_clear(&t);
}

/* Ratings spelled out and dates written day first: planted, then cleaned
 * in C, in the loaded table and by the program form's CTE, each giving
 * the original's mean rating per product and count per day; left out,
 * each cleaning gives other figures. */
static const char *const rcols[] = {"review_id", "product", "rating", "reviewed_on"};
static const char *const rtypes[] = {"TEXT", "TEXT", "REAL", "TEXT"};

static void fill_ratings(struct vat_csv *c, size_t n)
{
    vat_csv_add_row(c, rcols, 4);
    for (size_t i = 0; i < n; i++) {
        char id[32], rating[8], day[16];
        snprintf(id, sizeof id, "RV-%05zu", 100 + i);
        snprintf(rating, sizeof rating, "%zu", 1 + i * 7 % 5);
        snprintf(day, sizeof day, "2024-0%zu-%02zu", 1 + i % 3, 1 + i % 28);
        vat_csv_row_begin(c);
        vat_csv_add(c, id);
        vat_csv_add(c, i % 4 ? "Kettle" : "Lamp");
        vat_csv_add(c, rating);
        vat_csv_add(c, day);
    }
}

/* The result of sql with prefix (a CTE, or "") in front, as kind. */
static json_t *prefixed(sqlite3 *db, const char *prefix, const char *sql,
                        enum vat_an_result kind)
{
    struct vat_err e;
    char *q = vat_xasprintf("%s%s", prefix, sql);
    json_t *v = vat_an_sql_json(db, q, kind, &e);
    free(q);
    assert_non_null(v);
    return v;
}

static json_t *figures(sqlite3 *db, const char *sql_prefix)
{
    return prefixed(db, sql_prefix,
                    "SELECT product || ' ' || reviewed_on, AVG(rating) FROM reviews GROUP BY 1 "
                    "ORDER BY 1",
                    VAT_AN_OBJECT);
}

static void test_words_and_dates(void **state)
{
    (void)state;
    static const struct vat_trapmods mods = {
        .amount = "rating", .amount_words = true, .date = "reviewed_on"};
    static const struct vat_progform pf = {.columns = rcols, .types = rtypes, .ncols = 4};
    struct vat_template tm = vat_tmpl_grouped_sum;
    tm.modules = &mods;
    struct vat_task t;
    vat_task_init(&t, &tm, 2, "/nonexistent");
    t.master_seed = SEED;
    t.trapmods = VAT_TM_TEXTNUM | VAT_TM_DATES;
    struct vat_csv orig = VAT_CSV_INIT, c = VAT_CSV_INIT;
    fill_ratings(&orig, 60);
    fill_ratings(&c, 60);
    vat_trapmod_plant(&t, &c, ".csv");
    size_t words = 0, dayfirst = 0;
    for (size_t i = 1; i < c.nrows; i++) {
        words += isalpha((unsigned char)vat_csv_get(&c, i, 2)[0]) != 0;
        dayfirst += vat_csv_get(&c, i, 3)[2] == '/';
    }
    assert_true(words >= 2);
    assert_true(dayfirst >= 2);

    struct vat_csv all = VAT_CSV_INIT;
    vat_csv_add_row(&all, rcols, 4);
    for (size_t i = 1; i < c.nrows; i++)
        vat_csv_add_row(&all, (const char *const[]){vat_csv_get(&c, i, 0), vat_csv_get(&c, i, 1),
                                                    vat_csv_get(&c, i, 2), vat_csv_get(&c, i, 3)},
                        4);
    vat_trapmod_clean(&t, &all);
    assert_int_equal(all.nrows, orig.nrows);
    for (size_t i = 0; i < orig.nrows; i++)
        for (size_t j = 0; j < 4; j++)
            assert_string_equal(vat_csv_get(&all, i, j), vat_csv_get(&orig, i, j));
    vat_csv_release(&all);

    sqlite3 *a = NULL, *b = NULL;
    struct vat_err e;
    assert_int_equal(sqlite3_open(":memory:", &a), SQLITE_OK);
    assert_int_equal(sqlite3_open(":memory:", &b), SQLITE_OK);
    assert_int_equal(vat_csv_to_sqlite(&orig, 0, a, "reviews", rtypes, 1, &e), 0);
    assert_int_equal(vat_csv_to_sqlite(&c, 0, b, "reviews", rtypes, 1, &e), 0);
    json_t *want = figures(a, "");
    /* the CTE */
    char *cte = vat_trapmod_wrap_sql(&t, &pf, "reviews", "", 0);
    json_t *got = figures(b, cte);
    assert_int_equal(vat_an_agree("cte", want, got, 1e-9, 1e-9, &e), 0);
    json_decref(got);
    free(cte);
    for (unsigned m = VAT_TM_TEXTNUM; m; m = m == VAT_TM_TEXTNUM ? VAT_TM_DATES : 0) {
        char *off = vat_trapmod_wrap_sql(&t, &pf, "reviews", "", m);
        json_t *tv = figures(b, off);
        assert_int_not_equal(vat_an_agree("trap", want, tv, 1e-9, 1e-9, &e), 0);
        json_decref(tv);
        free(off);
    }
    /* the loaded table's UPDATEs */
    assert_int_equal(vat_trapmod_clean_sqlite(&t, b, "reviews", &e), 0);
    got = figures(b, "");
    assert_int_equal(vat_an_agree("loaded", want, got, 1e-9, 1e-9, &e), 0);
    json_decref(got);
    json_decref(want);
    sqlite3_close(a);
    sqlite3_close(b);
    vat_csv_release(&orig);
    vat_csv_release(&c);
    vat_task_clear(&t);
}

/* Keys counted distinct: test copies under test accounts, a placeholder
 * written over repeat orders, and one customer's every date day first.
 * Cleaned in C, by the loaded table's statements and by the CTE, the
 * count is the original's; each cleaning left out gives another. */
static const char *const kcols[] = {"order_id", "email", "amount", "ordered_on"};
static const char *const ktypes[] = {"TEXT", "TEXT", "REAL", "TEXT"};
#define K_CUSTOMERS 5

static void fill_keys(struct vat_csv *c, size_t n)
{
    vat_csv_add_row(c, kcols, 4);
    for (size_t i = 0; i < n; i++) {
        char id[32], email[32], day[16];
        snprintf(id, sizeof id, "ORD-%05zu", 100 + i);
        /* customer 4 orders once, the others many times */
        snprintf(email, sizeof email, "c%zu@example.com", i == 7 ? 4 : i % (K_CUSTOMERS - 1));
        snprintf(day, sizeof day, "2024-03-%02zu", 1 + i % 28);
        vat_csv_add_row(c, (const char *const[]){id, email, "10.00", day}, 4);
    }
}

/* day_first_dates: customer 4's orders; placeholder_keys: repeat orders
 * of customer 0; test_records: every order. */
static void key_targets(const struct vat_task *t, const struct vat_csv *c, unsigned m, bool *is)
{
    (void)t;
    bool seen = false;
    for (size_t i = 1; i < c->nrows; i++) {
        const char *k = vat_csv_get(c, i, 1);
        if (m == VAT_TM_DATES)
            is[i] = strcmp(k, "c4@example.com") == 0;
        else if (m == VAT_TM_PLACEHOLDER) {
            is[i] = seen && strcmp(k, "c0@example.com") == 0;
            seen = seen || strcmp(k, "c0@example.com") == 0;
        } else
            is[i] = true;
    }
}

static long key_count(sqlite3 *db, const char *prefix)
{
    json_t *v = prefixed(db, prefix,
                         "SELECT COUNT(DISTINCT email) FROM orders WHERE ordered_on BETWEEN "
                         "'2024-03-01' AND '2024-03-31'",
                         VAT_AN_NUMBER);
    long n = (long)(json_integer_value(v) + json_real_value(v));
    json_decref(v);
    return n;
}

static void test_placeholder_and_test_keys(void **state)
{
    (void)state;
    static const struct vat_trapmods mods = {.id = "order_id",
                                             .test_key = "email",
                                             .date = "ordered_on",
                                             .date_only = true,
                                             .placeholder_col = "email",
                                             .placeholder = "guest@checkout.invalid",
                                             .mark_all = VAT_TM_DATES,
                                             .targets = key_targets};
    static const struct vat_progform pf = {.columns = kcols, .types = ktypes, .ncols = 4};
    struct vat_template tm = vat_tmpl_grouped_sum;
    tm.modules = &mods;
    assert_int_equal(vat_trapmod_accepted(&tm), VAT_TM_TEST | VAT_TM_DATES | VAT_TM_PLACEHOLDER);
    struct vat_task t;
    vat_task_init(&t, &tm, 5, "/nonexistent");
    t.master_seed = SEED;
    t.trapmods = vat_trapmod_accepted(&tm);
    struct vat_csv c = VAT_CSV_INIT;
    fill_keys(&c, 40);
    vat_trapmod_plant(&t, &c, ".csv");
    size_t guests = 0, tests = 0, c4 = 0;
    for (size_t i = 1; i < c.nrows; i++) {
        const char *k = vat_csv_get(&c, i, 1), *d = vat_csv_get(&c, i, 3);
        guests += strcmp(k, "guest@checkout.invalid") == 0;
        if (strncmp(vat_csv_get(&c, i, 0), "TEST-", 5) == 0) {
            tests++;
            assert_memory_equal(k, "test+c", 6); /* a test account */
        }
        if (strcmp(k, "c4@example.com") == 0) {
            c4++;
            assert_string_equal(d, "08/03/2024"); /* every one day first */
        }
    }
    assert_int_equal(guests, 2);
    assert_int_equal(tests, 3);
    assert_int_equal(c4, 1);

    /* C: the count of the cleaned rows, with and without each cleaning */
    static const unsigned ms[] = {0, VAT_TM_TEST, VAT_TM_DATES, VAT_TM_PLACEHOLDER};
    static const long want[] = {K_CUSTOMERS, K_CUSTOMERS + 1, K_CUSTOMERS - 1, K_CUSTOMERS + 1};
    for (size_t k = 0; k < 4; k++) {
        struct vat_csv all = VAT_CSV_INIT;
        vat_csv_add_row(&all, kcols, 4);
        for (size_t i = 1; i < c.nrows; i++)
            vat_csv_add_row(&all, (const char *const[]){vat_csv_get(&c, i, 0),
                                                        vat_csv_get(&c, i, 1),
                                                        vat_csv_get(&c, i, 2),
                                                        vat_csv_get(&c, i, 3)},
                            4);
        t.trapmods_off = ms[k];
        vat_trapmod_clean(&t, &all);
        struct vat_an_tally seen = VAT_AN_TALLY_INIT;
        for (size_t i = 1; i < all.nrows; i++)
            if (strncmp(vat_csv_get(&all, i, 3), "2024-03-", 8) == 0)
                vat_an_tally_add(&seen, vat_csv_get(&all, i, 1), 1);
        assert_true(k == 1 ? (long)seen.n > K_CUSTOMERS : (long)seen.n == want[k]);
        vat_an_tally_release(&seen);
        vat_csv_release(&all);
    }
    t.trapmods_off = 0;

    /* the CTE, each cleaning on and off, then the loaded table's DELETEs */
    sqlite3 *db = NULL;
    struct vat_err e;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(vat_csv_to_sqlite(&c, 0, db, "orders", ktypes, 1, &e), 0);
    for (size_t k = 0; k < 4; k++) {
        char *cte = vat_trapmod_wrap_sql(&t, &pf, "orders", "", ms[k]);
        long n = key_count(db, cte);
        assert_true(k == 1 ? n > K_CUSTOMERS : n == want[k]);
        free(cte);
    }
    assert_int_equal(vat_trapmod_clean_sqlite(&t, db, "orders", &e), 0);
    assert_int_equal(key_count(db, ""), K_CUSTOMERS);
    sqlite3_close(db);
    vat_csv_release(&c);
    vat_task_clear(&t);
}

/* A SQLite fixture's two tables: each module plants and cleans in the
 * table holding its column; vat_trapmod_clean_db and the CTE over both
 * tables give the original's figures; each cleaning left out gives
 * others. */
static const char *const ocols[] = {"order_id", "amount"};
static const char *const hcols[] = {"customer_id", "valid_from"};
static const char *const otypes[] = {"TEXT", "REAL"};
static const char *const htypes[] = {"TEXT", "TEXT"};

static void fill_db(struct vat_csv *o, struct vat_csv *h)
{
    vat_csv_add_row(o, ocols, 2);
    for (size_t i = 0; i < 30; i++) {
        char id[16], amt[16];
        snprintf(id, sizeof id, "SO-%04zu", 100 + i);
        snprintf(amt, sizeof amt, "%zu.25", 900 + i * 37);
        vat_csv_add_row(o, (const char *const[]){id, amt}, 2);
    }
    vat_csv_add_row(h, hcols, 2);
    for (size_t i = 0; i < 12; i++) {
        char day[16];
        /* the latest, 2023-02-12, is the last row */
        snprintf(day, sizeof day, "20%02zu-0%zu-12", 12 + i, 1 + i % 5);
        vat_csv_add_row(h, (const char *const[]){"CUST-1", day}, 2);
    }
}

/* day_first_dates: the latest row only. */
static void db_targets(const struct vat_task *t, const struct vat_csv *c, unsigned m, bool *is)
{
    (void)t;
    for (size_t i = 1; i < c->nrows; i++)
        is[i] = m != VAT_TM_DATES || i == c->nrows - 1;
}

/* A database in memory holding o as `orders` and h as `history`. */
static sqlite3 *open_db(const struct vat_csv *o, const struct vat_csv *h)
{
    sqlite3 *db = NULL;
    struct vat_err e;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(vat_csv_to_sqlite(o, 0, db, "orders", otypes, 1, &e), 0);
    assert_int_equal(vat_csv_to_sqlite(h, 0, db, "history", htypes, 1, &e), 0);
    return db;
}

static json_t *db_figures(sqlite3 *db, const char *prefix)
{
    return prefixed(db, prefix,
                    "SELECT 'total', TOTAL(amount) FROM orders UNION ALL SELECT 'n', COUNT(*) "
                    "FROM orders UNION ALL SELECT 'latest', julianday(MAX(valid_from)) FROM "
                    "history",
                    VAT_AN_OBJECT);
}

static void test_db_tables(void **state)
{
    (void)state;
    static const struct vat_trapmod_table tables[] = {
        {.name = "orders", .columns = ocols, .ncols = 2, .renamed = true},
        {.name = "history", .columns = hcols, .ncols = 2},
    };
    static const struct vat_trapmods mods = {.amount = "amount",
                                             .id = "order_id",
                                             .date = "valid_from",
                                             .date_only = true,
                                             .mark_all = VAT_TM_DATES,
                                             .marked_only = VAT_TM_DATES,
                                             .targets = db_targets,
                                             .db_tables = tables,
                                             .ndb_tables = 2};
    struct vat_template tm = vat_tmpl_grouped_sum;
    tm.modules = &mods;
    struct vat_task t;
    vat_task_init(&t, &tm, 6, "/nonexistent");
    t.master_seed = SEED;
    t.trapmods = VAT_TM_TEXTNUM | VAT_TM_TEST | VAT_TM_DATES;
    struct vat_csv o0 = VAT_CSV_INIT, h0 = VAT_CSV_INIT, o = VAT_CSV_INIT, h = VAT_CSV_INIT;
    fill_db(&o0, &h0);
    fill_db(&o, &h);
    vat_trapmod_plant(&t, &o, ".orders");
    vat_trapmod_plant(&t, &h, ".history");
    assert_int_equal(o.nrows, o0.nrows + 3);         /* test copies in orders only */
    assert_int_equal(h.nrows, h0.nrows);
    assert_true(count_prefix(&o, 0, "TEST-") == 3);
    assert_string_equal(vat_csv_get(&h, h.nrows - 1, 1), "12/02/2023"); /* marked only */
    for (size_t i = 1; i + 1 < h.nrows; i++)
        assert_string_equal(vat_csv_get(&h, i, 1), vat_csv_get(&h0, i, 1));

    sqlite3 *a = open_db(&o0, &h0), *b = open_db(&o, &h);
    struct vat_err e;
    json_t *want = db_figures(a, "");
    char *cte = vat_trapmod_wrap_sql(&t, NULL, "orders", "", 0);
    assert_non_null(strstr(cte, "history AS ("));
    json_t *got = db_figures(b, cte);
    assert_int_equal(vat_an_agree("cte", want, got, 1e-9, 1e-9, &e), 0);
    json_decref(got);
    free(cte);
    for (unsigned m = VAT_TM_TEXTNUM; m <= VAT_TM_DATES; m <<= 1) {
        if (!(t.trapmods & m))
            continue;
        char *off = vat_trapmod_wrap_sql(&t, NULL, "orders", "", m);
        json_t *tv = db_figures(b, off);
        assert_int_not_equal(vat_an_agree("trap", want, tv, 1e-9, 1e-9, &e), 0);
        json_decref(tv);
        free(off);
    }
    /* each table's statements touch the table holding the column only */
    assert_int_equal(vat_trapmod_clean_db(&t, b, &e), 0);
    got = db_figures(b, "");
    assert_int_equal(vat_an_agree("cleaned", want, got, 1e-9, 1e-9, &e), 0);
    json_decref(got);
    json_decref(want);
    sqlite3_close(a);
    sqlite3_close(b);
    vat_csv_release(&o0);
    vat_csv_release(&h0);
    vat_csv_release(&o);
    vat_csv_release(&h);
    vat_task_clear(&t);
}

/* distractor_table: the gold figures never read the distractor (the CTE
 * with nothing off and the cleaned copy give the original's), its
 * mistake reads the imitated table from it, in the CTE and on the copy
 * alike; the prompt names it. */
static void test_distractor_table(void **state)
{
    (void)state;
    static const struct vat_trapmod_table tables[] = {
        {.name = "orders", .columns = ocols, .ncols = 2, .renamed = true},
        {.name = "history", .columns = hcols, .ncols = 2},
    };
    static const struct vat_trapmods mods = {
        .amount = "amount",
        .id = "order_id",
        .db_tables = tables,
        .ndb_tables = 2,
        .distractor = "snapshot",
        .distractor_for = "history",
        .distractor_as = "SELECT customer_id, taken_on AS valid_from FROM snapshot",
        .distractor_is = "an old snapshot"};
    struct vat_template tm = vat_tmpl_grouped_sum;
    tm.modules = &mods;
    assert_int_equal(vat_trapmod_accepted(&tm), VAT_TM_TEXTNUM | VAT_TM_TEST | VAT_TM_DISTRACTOR);
    struct vat_task t;
    vat_task_init(&t, &tm, 7, "/nonexistent");
    t.master_seed = SEED;
    t.trapmods = VAT_TM_TEST | VAT_TM_DISTRACTOR;
    struct vat_csv o0 = VAT_CSV_INIT, h0 = VAT_CSV_INIT, o = VAT_CSV_INIT, h = VAT_CSV_INIT;
    fill_db(&o0, &h0);
    fill_db(&o, &h);
    vat_trapmod_plant(&t, &o, ".orders");
    vat_trapmod_plant(&t, &h, ".history");
    sqlite3 *a = open_db(&o0, &h0), *b = open_db(&o, &h);
    struct vat_err e;
    assert_int_equal(sqlite3_exec(b,
                                  "CREATE TABLE snapshot (customer_id TEXT, taken_on TEXT);"
                                  "INSERT INTO snapshot VALUES ('CUST-1', '2015-01-12')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    json_t *want = db_figures(a, "");
    char *cte = vat_trapmod_wrap_sql(&t, NULL, "orders", "", 0);
    assert_null(strstr(cte, "snapshot"));
    json_t *got = db_figures(b, cte);
    assert_int_equal(vat_an_agree("cte", want, got, 1e-9, 1e-9, &e), 0);
    json_decref(got);
    free(cte);
    /* the mistake: history is the snapshot, its one row 2015-01-12 */
    char *off = vat_trapmod_wrap_sql(&t, NULL, "orders", "", VAT_TM_DISTRACTOR);
    assert_non_null(strstr(off, "history AS (SELECT customer_id, taken_on AS valid_from FROM "
                                "snapshot)"));
    json_t *tv = db_figures(b, off);
    assert_int_not_equal(vat_an_agree("trap", want, tv, 1e-9, 1e-9, &e), 0);
    double latest = json_real_value(json_object_get(tv, "latest"));
    assert_true(fabs(latest - 2457034.5) < 1e-9); /* julianday('2015-01-12') */
    json_decref(tv);
    free(off);
    t.trapmods_off = VAT_TM_DISTRACTOR;
    assert_int_equal(vat_trapmod_clean_db(&t, b, &e), 0);
    got = db_figures(b, "");
    assert_true(fabs(json_real_value(json_object_get(got, "latest")) - 2457034.5) < 1e-9);
    json_decref(got);
    t.trapmods_off = 0;
    /* the prompt says what the table is */
    t.prompt = vat_xstrdup("Question?\n");
    vat_trapmod_prompt(&t);
    assert_non_null(strstr(t.prompt, "`snapshot`"));
    assert_non_null(strstr(t.prompt, "an old snapshot"));
    json_decref(want);
    sqlite3_close(a);
    sqlite3_close(b);
    vat_csv_release(&o0);
    vat_csv_release(&h0);
    vat_csv_release(&o);
    vat_csv_release(&h);
    vat_task_clear(&t);
}

static int popcount(unsigned x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

/* One template at one level in one answer form: `tasks` tasks admitted,
 * the promised number of modules armed, each one's trap named, gated
 * in and scoring below 1; *seen gathers the modules armed.  Returns the
 * failures. */
static int one(const struct vat_template *tm, int level, const char *form, size_t inline_max,
               const char *root, uint32_t tasks, unsigned *seen)
{
    json_t *cfg = vat_tt_level_cfg(tm, level);
    if (json_object_get(cfg, "answer_form"))
        json_object_set_new(cfg, "answer_form", json_string(form));
    if (json_object_get(cfg, "fixture_format"))
        json_object_set_new(cfg, "fixture_format", json_string("csv"));
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = cfg, .inline_max_bytes = inline_max,
                              .strength_target = 0.9};
    unsigned acc = vat_trapmod_accepted(tm);
    int want = level >= 4 ? popcount(acc) : 1;
    int failures = 0;
    for (uint32_t i = 0; i < tasks; i++) {
        struct vat_task t;
        struct vat_replay r;
        struct vat_err e = {{0}};
        vat_task_init(&t, tm, i, root);
        if (vat_tt_draw_with(&t, &o, MAX_REDRAWS, &r, &e) > MAX_REDRAWS) {
            fprintf(stderr, "  %s level %d %s never admitted: %s\n", t.id, level, form, e.msg);
            failures++;
            vat_task_clear(&t);
            continue;
        }
        vat_tt_assert_replays(&r);
        int armed = 0;
        for (int k = 0; k < t.n_traps; k++) {
            if (!t.traps[k].module)
                continue;
            armed++;
            assert_true(t.traps[k].module & acc);
            assert_string_equal(t.traps[k].name, vat_trapmod_name(t.traps[k].module));
            assert_true(r.traps[k].gate_passed);
            assert_true(r.traps[k].score < 1.0);
            assert_string_not_equal(t.traps[k].answer, t.gold);
        }
        *seen |= t.trapmods;
        if (armed != want || popcount(t.trapmods) != want) {
            fprintf(stderr, "  %s level %d %s: %d modules armed, want %d\n", t.id, level, form,
                    armed, want);
            failures++;
        }
        if (strcmp(vat_task_answer_form(&t), form) != 0 && strcmp(form, "value") == 0) {
            fprintf(stderr, "  %s level %d: drawn as %s, want value\n", t.id, level,
                    vat_task_answer_form(&t));
            failures++;
        }
        assert_int_equal(vat_task_confirm(&t, &e), 0);
        vat_task_clear(&t);
    }
    json_decref(cfg);
    return failures;
}

/* Every template declaring modules: level 3 in the value form (prompts
 * large enough to show the data), over enough tasks that each accepted
 * module is armed on its own in some, and levels 3 to 5 in the program
 * form, every module at once from level 4. */
static void test_every_declaring_template(void **state)
{
    (void)state;
    int failures = 0, declaring = 0;
    for (size_t k = 0; vat_registry[k]; k++) {
        const struct vat_template *tm = vat_registry[k];
        if (!vat_trapmod_accepted(tm))
            continue;
        declaring++;
        assert_non_null(tm->progform);
        char *root = vat_test_tmpdir(tm->name);
        unsigned seen = 0;
        failures += one(tm, 3, "value", 1 << 20, root, VALUE_TASKS, &seen);
        if (seen != vat_trapmod_accepted(tm)) {
            fprintf(stderr, "  %s: level 3 armed modules %#x alone, accepted %#x\n", tm->name,
                    seen, vat_trapmod_accepted(tm));
            failures++;
        }
        for (int level = 3; level <= 5; level++) {
            seen = 0;
            failures += one(tm, level, "sql", 6000, root, TASKS, &seen);
            if (level >= 4 && seen != vat_trapmod_accepted(tm))
                failures++;
        }
        vat_test_rmtree(root);
        free(root);
    }
    assert_true(declaring >= 3);
    assert_int_equal(failures, 0);
}

/* Below level 3 nothing is armed: the task is drawn as before modules. */
static void test_low_levels_unarmed(void **state)
{
    (void)state;
    for (size_t k = 0; vat_registry[k]; k++) {
        const struct vat_template *tm = vat_registry[k];
        if (!vat_trapmod_accepted(tm))
            continue;
        for (int level = 1; level <= 2; level++) {
            struct vat_task t;
            vat_task_init(&t, tm, 0, "/nonexistent");
            t.master_seed = SEED;
            t.level = level;
            vat_trapmod_arm(&t);
            assert_int_equal(t.trapmods, 0);
            vat_task_clear(&t);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plant_then_clean),
        cmocka_unit_test(test_sign_convention),
        cmocka_unit_test(test_distractor_table),
        cmocka_unit_test(test_sql_cleaning_agrees),
        cmocka_unit_test(test_totals_line),
        cmocka_unit_test(test_words_and_dates),
        cmocka_unit_test(test_placeholder_and_test_keys),
        cmocka_unit_test(test_db_tables),
        cmocka_unit_test(test_low_levels_unarmed),
        cmocka_unit_test(test_every_declaring_template),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_xlsxio.c — workbooks: A1 addresses, deterministic writing, reading
 * back every cell type, the messy layouts placed and found again, and
 * hostile files refused with an error (generators/xlsxio.c, xlsxlay.c).
 *
 * Run as `test_xlsxio --emit DIR` it writes the layout workbooks and, next
 * to each, a JSON description of every cell as our reader sees it, for
 * tests/python_xlsx.py to compare with openpyxl's reading. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zip.h>

#include "csvio.h"
#include "testutil.h"
#include "xlsxio.h"
#include "xlsxlay.h"

static int setup_dir(void **state)
{
    *state = vat_test_tmpdir("xlsxio");
    return 0;
}

static int teardown_dir(void **state)
{
    vat_test_rmtree(*state);
    free(*state);
    return 0;
}

/* ---- addresses ------------------------------------------------------------ */

static void test_addresses(void **state)
{
    (void)state;
    char b[16];
    assert_string_equal(vat_xl_col_name(0, b, sizeof b), "A");
    assert_string_equal(vat_xl_col_name(25, b, sizeof b), "Z");
    assert_string_equal(vat_xl_col_name(26, b, sizeof b), "AA");
    assert_string_equal(vat_xl_col_name(701, b, sizeof b), "ZZ");
    assert_string_equal(vat_xl_col_name(702, b, sizeof b), "AAA");
    assert_string_equal(vat_xl_col_name(16383, b, sizeof b), "XFD");
    assert_string_equal(vat_xl_addr(0, 0, b, sizeof b), "A1");
    assert_string_equal(vat_xl_addr(1048575, 16383, b, sizeof b), "XFD1048576");
    uint32_t r, c;
    assert_int_equal(vat_xl_parse_addr("B12", 3, &r, &c), 0);
    assert_int_equal(r, 11);
    assert_int_equal(c, 1);
    assert_int_equal(vat_xl_parse_addr("XFD1048576", 10, &r, &c), 0);
    assert_int_equal(r, 1048575);
    assert_int_equal(c, 16383);
    static const char *const bad[] = {"", "A", "12", "A0", "a1", "XFE1", "A1048577", "A01",
                                      "A1B", "AAAA1", "A-1", "A 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(vat_xl_parse_addr(bad[i], strlen(bad[i]), &r, &c), -1);
}

/* ---- round trip -------------------------------------------------------------- */

static void build_sample(struct vat_xl_book *b)
{
    struct vat_xl_sheet *s = vat_xl_add_sheet(b, "Orders");
    vat_xl_set_str(s, 0, 0, "Quarterly report", VAT_XL_TITLE);
    vat_xl_set_str(s, 2, 1, "Q1", VAT_XL_BOLD);
    vat_xl_merge(s, 2, 1, 2, 2);
    vat_xl_set_str(s, 3, 0, "region", VAT_XL_BOLD);
    vat_xl_set_str(s, 3, 1, "Units", VAT_XL_BOLD);
    vat_xl_set_str(s, 3, 2, "Revenue", VAT_XL_BOLD);
    vat_xl_set_str(s, 4, 0, "North & \"East\" <1>", VAT_XL_PLAIN);
    vat_xl_set_num(s, 4, 1, 12, VAT_XL_PLAIN);
    vat_xl_set_num(s, 4, 2, 1234.5, VAT_XL_MONEY);
    vat_xl_set_str(s, 5, 0, "Zürich", VAT_XL_PLAIN);
    vat_xl_set_str(s, 5, 1, "7", VAT_XL_PLAIN); /* a number stored as text */
    vat_xl_set_blank(s, 5, 2, VAT_XL_MONEY);
    vat_xl_set_bool(s, 6, 0, true);
    vat_xl_set_bool(s, 6, 1, false);
    vat_xl_set_num(s, 6, 2, -0.1, VAT_XL_PLAIN);
    vat_xl_set_num(s, 7, 27, 1e-300, VAT_XL_PLAIN);
    struct vat_xl_sheet *l = vat_xl_add_sheet(b, "Lookup table");
    vat_xl_set_str(l, 0, 0, "code", VAT_XL_BOLD);
    vat_xl_set_str(l, 1, 0, "  spaced  ", VAT_XL_PLAIN);
    vat_xl_set_str(l, 2, 0, "line\nbreak", VAT_XL_PLAIN);
}

static void test_round_trip(void **state)
{
    const char *dir = *state;
    struct vat_xl_book b = VAT_XL_BOOK_INIT, r = VAT_XL_BOOK_INIT;
    struct vat_err e = {{0}};
    build_sample(&b);
    assert_int_equal(vat_xl_write(&b, dir, "a/sample.xlsx", &e), 0);
    assert_int_equal(vat_xl_read(&r, dir, "a/sample.xlsx", &e), 0);
    assert_int_equal(r.nsheets, 2);
    assert_string_equal(r.sheet[0].name, "Orders");
    assert_string_equal(r.sheet[1].name, "Lookup table");
    for (size_t i = 0; i < b.nsheets; i++) {
        const struct vat_xl_sheet *w = &b.sheet[i], *g = &r.sheet[i];
        size_t valued = 0;
        for (size_t k = 0; k < w->ncells; k++) {
            const struct vat_xl_cell *c = &w->cell[k];
            const struct vat_xl_cell *d = vat_xl_get(g, c->row, c->col);
            if (c->type == VAT_XL_BLANK) {
                assert_null(d); /* a styled blank carries no value */
                continue;
            }
            valued++;
            assert_non_null(d);
            assert_int_equal(d->type, c->type);
            if (c->type == VAT_XL_STRING)
                assert_string_equal(d->s, c->s);
            else if (c->type == VAT_XL_NUMBER)
                assert_true(d->num == c->num);
            else
                assert_int_equal(d->b, c->b);
        }
        /* Merged blanks aside, nothing appears that was not written. */
        assert_int_equal(g->ncells, valued);
    }
    assert_int_equal(r.sheet[0].nmerge, 1);
    const struct vat_xl_range *m = vat_xl_merge_at(&r.sheet[0], 2, 2);
    assert_non_null(m);
    assert_int_equal(m->r1, 2);
    assert_int_equal(m->c1, 1);
    assert_int_equal(m->c2, 2);
    assert_null(vat_xl_merge_at(&r.sheet[0], 3, 1));
    assert_int_equal(vat_xl_nrows(&r.sheet[0]), 8);
    assert_int_equal(vat_xl_ncols(&r.sheet[0]), 28);
    vat_xl_release(&b);
    vat_xl_release(&r);
}

/* Equal books give equal bytes, whenever they are written. */
static void test_deterministic(void **state)
{
    const char *dir = *state;
    struct vat_xl_book b = VAT_XL_BOOK_INIT;
    struct vat_err e = {{0}};
    build_sample(&b);
    assert_int_equal(vat_xl_write(&b, dir, "one.xlsx", &e), 0);
    sleep(2); /* past zip's two-second clock and the core properties' second */
    assert_int_equal(vat_xl_write(&b, dir, "two.xlsx", &e), 0);
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/one.xlsx", dir);
    snprintf(p2, sizeof p2, "%s/two.xlsx", dir);
    size_t n1, n2;
    char *a = vat_test_read_file(p1, &n1), *c = vat_test_read_file(p2, &n2);
    assert_non_null(a);
    assert_non_null(c);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, c, n1);
    free(c);
    /* A changed cell changes the bytes. */
    vat_xl_set_num(&b.sheet[0], 4, 1, 13, VAT_XL_PLAIN);
    assert_int_equal(vat_xl_write(&b, dir, "three.xlsx", &e), 0);
    snprintf(p2, sizeof p2, "%s/three.xlsx", dir);
    c = vat_test_read_file(p2, &n2);
    assert_non_null(c);
    assert_true(n1 != n2 || memcmp(a, c, n1) != 0);
    /* And no temporary file is left behind. */
    snprintf(p1, sizeof p1, "%s/one.xlsx.tmp", dir);
    assert_int_equal(access(p1, F_OK), -1);
    free(a);
    free(c);
    vat_xl_release(&b);
}

static void test_write_refuses(void **state)
{
    const char *dir = *state;
    struct vat_xl_book b = VAT_XL_BOOK_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_xl_write(&b, dir, "empty.xlsx", &e), -1);
    assert_non_null(strstr(e.msg, "at least one sheet"));
    vat_xl_add_sheet(&b, "bad[name]");
    assert_int_equal(vat_xl_write(&b, dir, "bad.xlsx", &e), -1);
    assert_non_null(strstr(e.msg, "refused"));
    vat_xl_release(&b);
}

/* ---- layouts ----------------------------------------------------------------- */

static const char *const lay_cols[] = {"order_id", "region", "units", "amount"};
static const enum vat_xl_kind lay_kind[] = {VAT_XLK_TEXT, VAT_XLK_TEXT, VAT_XLK_INT, VAT_XLK_MONEY};

static void lay_data(struct vat_csv *c, int variant)
{
    vat_csv_add_row(c, lay_cols, 4);
    static const char *const rows[][4] = {{"A-1", "North", "3", "10.50"},
                                          {"A-2", "South", "", "7.25"},
                                          {"A-3", "North", "2", "100.00"},
                                          {"A-4", "East", "5", ""}};
    for (size_t i = 0; i < 4; i++) {
        vat_csv_row_begin(c);
        for (size_t k = 0; k < 4; k++)
            vat_csv_addf(c, "%s%s", variant && k == 0 ? "B" : "", rows[i][k]);
    }
}

static void assert_same_csv(const struct vat_csv *a, const struct vat_csv *b)
{
    assert_int_equal(a->nrows, b->nrows);
    for (size_t r = 0; r < a->nrows; r++) {
        assert_int_equal(a->row[r].n, b->row[r].n);
        for (size_t k = 0; k < a->row[r].n; k++)
            assert_string_equal(vat_csv_get(a, r, k), vat_csv_get(b, r, k));
    }
}

/* Builds the workbook holding every layout: sheet Orders with a title,
 * notes, a group row, text numbers, blanks and a totals row, then a
 * second table below blank rows; sheet Regions a lookup table. */
static void build_layouts(struct vat_xl_book *b, struct vat_csv *d1, struct vat_csv *d2,
                          struct vat_xl_where *w1, struct vat_xl_where *w2)
{
    struct vat_err e = {{0}};
    lay_data(d1, 0);
    lay_data(d2, 1);
    static const char *const notes[] = {"Exported 2024-01-05", "Amounts in EUR"};
    static const char *const groups[] = {"Order", "Order", "Sales", "Sales"};
    bool as_text[16] = {false};
    as_text[0 * 4 + 3] = true; /* A-1's amount stored as text */
    as_text[2 * 4 + 2] = true; /* A-3's units stored as text  */
    static const bool total_of[] = {false, false, true, true};
    struct vat_xl_sheet *s = vat_xl_add_sheet(b, "Orders");
    struct vat_xl_table t1 = {.title = "Orders 2024", .notes = notes, .nnotes = 2, .data = d1,
                              .kind = lay_kind, .group = groups, .as_text = as_text,
                              .totals_col = 0, .total_of = total_of};
    uint32_t next;
    assert_int_equal(vat_xl_place(s, 0, 0, &t1, w1, &next, &e), 0);
    struct vat_xl_table t2 = {.title = "Orders 2023 (archive)", .data = d2, .kind = lay_kind,
                              .totals_col = -1};
    assert_int_equal(vat_xl_place(s, next + 2, 0, &t2, w2, &next, &e), 0);
    struct vat_xl_sheet *l = vat_xl_add_sheet(b, "Regions");
    struct vat_csv lk = VAT_CSV_INIT;
    static const char *const lh[] = {"region", "manager"};
    static const enum vat_xl_kind lkind[] = {VAT_XLK_TEXT, VAT_XLK_TEXT};
    vat_csv_add_row(&lk, lh, 2);
    static const char *const r1[] = {"North", "Ann"}, *const r2[] = {"South", "Bo"};
    vat_csv_add_row(&lk, r1, 2);
    vat_csv_add_row(&lk, r2, 2);
    struct vat_xl_table t3 = {.data = &lk, .kind = lkind, .totals_col = -1};
    struct vat_xl_where w3;
    assert_int_equal(vat_xl_place(l, 0, 1, &t3, &w3, &next, &e), 0);
    vat_csv_release(&lk);
}

static void test_layouts(void **state)
{
    const char *dir = *state;
    struct vat_xl_book b = VAT_XL_BOOK_INIT, r = VAT_XL_BOOK_INIT;
    struct vat_csv d1 = VAT_CSV_INIT, d2 = VAT_CSV_INIT;
    struct vat_xl_where w1, w2, f;
    struct vat_err e = {{0}};
    build_layouts(&b, &d1, &d2, &w1, &w2);
    assert_int_equal(w1.title_row, 0);
    assert_int_equal(w1.group_row, 4); /* title, 2 notes, blank */
    assert_int_equal(w1.header_row, 5);
    assert_int_equal(w1.first_row, 6);
    assert_int_equal(w1.nrows, 4);
    assert_int_equal(w1.totals_row, 10);
    assert_int_equal(w2.title_row, 13);
    assert_int_equal(vat_xl_write(&b, dir, "layouts.xlsx", &e), 0);
    assert_int_equal(vat_xl_read(&r, dir, "layouts.xlsx", &e), 0);
    const struct vat_xl_sheet *s = vat_xl_find_sheet(&r, "Orders");
    assert_non_null(s);

    /* The group row is merged over its runs. */
    assert_int_equal(s->nmerge, 2);
    assert_non_null(vat_xl_merge_at(s, 4, 1));
    assert_non_null(vat_xl_merge_at(s, 4, 3));
    /* Numbers are numbers, text numbers text, blanks absent. */
    assert_int_equal(vat_xl_get(s, 6, 3)->type, VAT_XL_STRING);
    assert_int_equal(vat_xl_get(s, 7, 3)->type, VAT_XL_NUMBER);
    assert_null(vat_xl_get(s, 7, 2));
    assert_true(vat_xl_get(s, 10, 3)->num == 117.75);

    /* The first table as its CSV would read, totals row left out. */
    struct vat_csv got = VAT_CSV_INIT;
    struct vat_xl_find_opts o = {.title = "Orders 2024"};
    assert_int_equal(vat_xl_find(s, lay_cols, lay_kind, 4, &o, &got, &f, &e), 0);
    assert_same_csv(&got, &d1);
    assert_int_equal(f.header_row, 5);
    assert_int_equal(f.group_row, 4);
    assert_int_equal(f.totals_row, 10);
    assert_int_equal(f.nrows, 4);
    vat_csv_release(&got);
    /* No title: the first table too. */
    assert_int_equal(vat_xl_find(s, lay_cols, lay_kind, 4, NULL, &got, &f, &e), 0);
    assert_same_csv(&got, &d1);
    vat_csv_release(&got);
    /* The traps' readings. */
    o.keep_totals = true;
    assert_int_equal(vat_xl_find(s, lay_cols, lay_kind, 4, &o, &got, &f, &e), 0);
    assert_int_equal(got.nrows, 6);
    assert_string_equal(vat_csv_get(&got, 5, 0), "Total");
    assert_string_equal(vat_csv_get(&got, 5, 2), "10");
    assert_string_equal(vat_csv_get(&got, 5, 3), "117.75");
    vat_csv_release(&got);
    o.keep_totals = false;
    o.drop_text_numbers = true;
    assert_int_equal(vat_xl_find(s, lay_cols, lay_kind, 4, &o, &got, &f, &e), 0);
    assert_string_equal(vat_csv_get(&got, 1, 3), "");
    assert_string_equal(vat_csv_get(&got, 3, 2), "");
    assert_string_equal(vat_csv_get(&got, 2, 3), "7.25");
    vat_csv_release(&got);
    /* The second table, by its title. */
    struct vat_xl_find_opts o2 = {.title = "Orders 2023 (archive)"};
    assert_int_equal(vat_xl_find(s, lay_cols, lay_kind, 4, &o2, &got, &f, &e), 0);
    assert_same_csv(&got, &d2);
    assert_int_equal(f.group_row, -1);
    vat_csv_release(&got);
    /* The lookup sheet, placed from column B. */
    static const char *const lh[] = {"region", "manager"};
    static const enum vat_xl_kind lkind[] = {VAT_XLK_TEXT, VAT_XLK_TEXT};
    assert_int_equal(vat_xl_find(vat_xl_find_sheet(&r, "Regions"), lh, lkind, 2, NULL, &got, &f, &e),
                     0);
    assert_int_equal(f.col0, 1);
    assert_int_equal(got.nrows, 3);
    assert_string_equal(vat_csv_get(&got, 2, 1), "Bo");
    vat_csv_release(&got);
    /* What is not there is an error, not an empty table. */
    struct vat_xl_find_opts o3 = {.title = "Orders 1999"};
    assert_int_equal(vat_xl_find(s, lay_cols, lay_kind, 4, &o3, &got, &f, &e), -1);
    assert_non_null(strstr(e.msg, "Orders 1999"));
    static const char *const wrong[] = {"order_id", "region", "qty"};
    assert_int_equal(vat_xl_find(s, wrong, lay_kind, 3, NULL, &got, &f, &e), -1);
    assert_non_null(strstr(e.msg, "no row with the columns"));
    /* A money column holding a fraction of a cent is refused. */
    vat_xl_set_num((struct vat_xl_sheet *)s, 7, 3, 7.255, VAT_XL_PLAIN);
    assert_int_equal(vat_xl_find(s, lay_cols, lay_kind, 4, &o, &got, &f, &e), -1);
    assert_non_null(strstr(e.msg, "D8"));

    /* The grid names cells as the prompt promises. */
    struct vat_buf g = VAT_BUF_INIT;
    vat_xl_grid(&g, vat_xl_find_sheet(&r, "Orders"), 11);
    assert_non_null(strstr(g.data, "|   | A | B | C | D |\n"));
    assert_non_null(strstr(g.data, "| 1 | Orders 2024 |"));
    assert_non_null(strstr(g.data, "| 7 | A-1 | North | 3 | '10.50 |\n"));
    assert_non_null(strstr(g.data, "| 8 | A-2 | South | | 7.255 |\n"));
    assert_non_null(strstr(g.data, "Merged cells: A5:B5, C5:D5\n"));
    assert_null(strstr(g.data, "| 12 |"));
    vat_buf_release(&g);

    vat_csv_release(&d1);
    vat_csv_release(&d2);
    vat_xl_release(&b);
    vat_xl_release(&r);
}

/* A sheet as CSV lines (dup_header's reading): merged-over cells blank,
 * whole numbers as integers, other numbers in cents, refusing finer. */
static void test_sheet_csv(void **state)
{
    (void)state;
    struct vat_xl_book b = VAT_XL_BOOK_INIT;
    struct vat_xl_sheet *s = vat_xl_add_sheet(&b, "Report");
    vat_xl_set_str(s, 0, 1, "Budget", VAT_XL_BOLD);
    vat_xl_merge(s, 0, 1, 0, 2);
    vat_xl_set_str(s, 1, 0, "region", VAT_XL_BOLD);
    vat_xl_set_str(s, 1, 1, "amount", VAT_XL_BOLD);
    vat_xl_set_str(s, 1, 2, "count", VAT_XL_BOLD);
    vat_xl_set_str(s, 2, 0, "North", VAT_XL_PLAIN);
    vat_xl_set_num(s, 2, 1, 1200, VAT_XL_MONEY);
    vat_xl_set_num(s, 2, 2, 7, VAT_XL_PLAIN);
    vat_xl_set_str(s, 3, 0, "South", VAT_XL_PLAIN);
    vat_xl_set_num(s, 3, 1, 0.1, VAT_XL_MONEY);
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_xl_sheet_csv(s, &c, &e), 0);
    assert_int_equal(c.nrows, 4);
    for (size_t r = 0; r < 4; r++)
        assert_int_equal(c.row[r].n, 3);
    assert_string_equal(vat_csv_get(&c, 0, 0), "");
    assert_string_equal(vat_csv_get(&c, 0, 1), "Budget");
    assert_string_equal(vat_csv_get(&c, 0, 2), "");
    assert_string_equal(vat_csv_get(&c, 2, 1), "1200");
    assert_string_equal(vat_csv_get(&c, 2, 2), "7");
    assert_string_equal(vat_csv_get(&c, 3, 1), "0.10");
    assert_string_equal(vat_csv_get(&c, 3, 2), "");
    vat_csv_release(&c);
    vat_xl_set_num(s, 3, 2, 0.125, VAT_XL_PLAIN);
    assert_int_equal(vat_xl_sheet_csv(s, &c, &e), -1);
    assert_non_null(strstr(e.msg, "C4"));
    vat_xl_release(&b);
}

/* The prompt's section: whole up to the inline limit, else the same
 * share of every sheet's leading rows, saying how many. */
static void test_prompt_cut(void **state)
{
    (void)state;
    struct vat_xl_book b = VAT_XL_BOOK_INIT;
    struct vat_xl_sheet *s = vat_xl_add_sheet(&b, "Big");
    for (uint32_t r = 0; r < 200; r++)
        vat_xl_set_num(s, r, 0, r, VAT_XL_PLAIN);
    vat_xl_set_str(vat_xl_add_sheet(&b, "Small"), 0, 0, "x", VAT_XL_PLAIN);
    struct vat_task t;
    memset(&t, 0, sizeof t);
    snprintf(t.id, sizeof t.id, "x-00000");
    struct vat_fixture *f = &t.fixture[0];
    f->path = (char *)"fixtures/x/x-00000.xlsx";
    f->format = "xlsx";
    t.n_fixtures = 1;
    t.inline_max_bytes = 100000;
    struct vat_buf p = VAT_BUF_INIT;
    assert_true(vat_xl_prompt(&p, &t, 0, &b));
    assert_non_null(strstr(p.data, "`fixtures/x/x-00000.xlsx` (2 sheets)"));
    assert_non_null(strstr(p.data, "Sheet `Big` (rows 1 to 200):"));
    assert_non_null(strstr(p.data, "| 200 | 199 |\n"));
    assert_non_null(strstr(p.data, "Sheet `Small` (rows 1 to 1):"));
    vat_buf_release(&p);
    t.inline_max_bytes = 1000;
    assert_false(vat_xl_prompt(&p, &t, 0, &b));
    assert_non_null(strstr(p.data, "of 200 shown; the rest are in the file"));
    assert_null(strstr(p.data, "| 200 | 199 |"));
    assert_non_null(strstr(p.data, "| 1 | 0 |\n"));
    vat_buf_release(&p);
    vat_xl_release(&b);
}

/* ---- hostile and odd files ----------------------------------------------------- */

struct part {
    const char *name;
    const char *text; /* NULL: use big/bign */
    const char *big;
    size_t bign;
};

static const char wb_xml[] =
    "<?xml version=\"1.0\"?><workbook "
    "xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" "
    "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"><sheets>"
    "<sheet name=\"S\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>";
static const char rels_xml[] =
    "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
    "<Relationship Id=\"rId1\" "
    "Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet\" "
    "Target=\"worksheets/sheet1.xml\"/>"
    "<Relationship Id=\"rId2\" "
    "Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings\" "
    "Target=\"/xl/sharedStrings.xml\"/></Relationships>";
static const char sst_xml[] =
    "<sst xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\">"
    "<si><t>plain</t></si>"
    "<si><r><t>ri</t></r><r><rPr><b/></rPr><t xml:space=\"preserve\">ch </t></r>"
    "<rPh><t>PHONETIC</t></rPh></si></sst>";

#define SHEET_OPEN                                                                        \
    "<x:worksheet xmlns:x=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\">" \
    "<x:sheetData>"
#define SHEET_CLOSE "</x:sheetData></x:worksheet>"

/* Writes a zip of the given parts (the sheet replaced by sheet_xml) to
 * dir/name, and reads it back: returns the reader's rc, e set. */
static int read_crafted(const char *dir, const char *name, const struct part *extra, size_t nextra,
                        const char *sheet_xml, struct vat_xl_book *b, struct vat_err *e)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int zerr = 0;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    assert_non_null(z);
    struct part base[] = {{"xl/workbook.xml", wb_xml, NULL, 0},
                          {"xl/_rels/workbook.xml.rels", rels_xml, NULL, 0},
                          {"xl/sharedStrings.xml", sst_xml, NULL, 0},
                          {"xl/worksheets/sheet1.xml", sheet_xml, NULL, 0}};
    for (size_t i = 0; i < 4 + nextra; i++) {
        const struct part *p = i < 4 ? &base[i] : &extra[i - 4];
        bool overridden = false;
        for (size_t k = 0; i < 4 && k < nextra; k++)
            if (strcmp(extra[k].name, p->name) == 0)
                overridden = true;
        if (overridden || (i < 4 && !p->text))
            continue;
        const char *data = p->text ? p->text : p->big;
        size_t n = p->text ? strlen(p->text) : p->bign;
        if (!data) /* an extra entry with neither removes the base part */
            continue;
        zip_source_t *src = zip_source_buffer(z, data, n, 0);
        assert_non_null(src);
        assert_true(zip_file_add(z, p->name, src, ZIP_FL_OVERWRITE) >= 0);
    }
    assert_int_equal(zip_close(z), 0);
    memset(b, 0, sizeof *b);
    return vat_xl_read(b, dir, name, e);
}

static void test_reads_what_writers_write(void **state)
{
    const char *dir = *state;
    struct vat_xl_book b;
    struct vat_err e = {{0}};
    const char *sheet = SHEET_OPEN
        "<x:row r=\"2\"><x:c r=\"A2\" t=\"s\"><x:v>1</x:v></x:c>"
        "<x:c r=\"B2\" t=\"inlineStr\"><x:is><x:t>in&amp;line</x:t></x:is></x:c>"
        "<x:c r=\"C2\" t=\"inlineStr\"><x:is><x:r><x:t>a</x:t></x:r><x:r><x:t>b</x:t></x:r></x:is></x:c>"
        "<x:c r=\"D2\" t=\"b\"><x:v>0</x:v></x:c>"
        "<x:c r=\"E2\"><x:f>1+1</x:f><x:v>2</x:v></x:c>"
        "<x:c r=\"F2\" t=\"str\"><x:f>\"x\"</x:f><x:v>x</x:v></x:c>"
        "<x:c r=\"G2\" s=\"3\"/><x:c r=\"H2\"><x:v>1.5E3</x:v></x:c></x:row>"
        /* rows and cells without r follow their predecessors */
        "<x:row><x:c t=\"s\"><x:v>0</x:v></x:c><x:c><x:v>-4</x:v></x:c></x:row>"
        SHEET_CLOSE "<!-- trailing comment -->";
    assert_int_equal(read_crafted(dir, "ok.xlsx", NULL, 0, sheet, &b, &e), 0);
    const struct vat_xl_sheet *s = &b.sheet[0];
    assert_string_equal(s->name, "S");
    assert_string_equal(vat_xl_get(s, 1, 0)->s, "rich ");
    assert_string_equal(vat_xl_get(s, 1, 1)->s, "in&line");
    assert_string_equal(vat_xl_get(s, 1, 2)->s, "ab");
    assert_int_equal(vat_xl_get(s, 1, 3)->type, VAT_XL_BOOL);
    assert_false(vat_xl_get(s, 1, 3)->b);
    assert_true(vat_xl_get(s, 1, 4)->num == 2.0);
    assert_true(vat_xl_get(s, 1, 4)->formula);
    assert_string_equal(vat_xl_get(s, 1, 5)->s, "x");
    assert_null(vat_xl_get(s, 1, 6));
    assert_true(vat_xl_get(s, 1, 7)->num == 1500.0);
    assert_string_equal(vat_xl_get(s, 2, 0)->s, "plain");
    assert_true(vat_xl_get(s, 2, 1)->num == -4.0);
    vat_xl_release(&b);

    /* No shared strings part at all is fine when no cell needs one. */
    static const char rels_nosst[] =
        "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
        "<Relationship Id=\"rId1\" Type=\"t/worksheet\" Target=\"worksheets/sheet1.xml\"/>"
        "</Relationships>";
    struct part np[] = {{"xl/_rels/workbook.xml.rels", rels_nosst, NULL, 0},
                        {"xl/sharedStrings.xml", NULL, NULL, 0}};
    assert_int_equal(read_crafted(dir, "nosst.xlsx", np, 2,
                                  SHEET_OPEN "<x:row r=\"1\"><x:c r=\"A1\"><x:v>1</x:v></x:c></x:row>" SHEET_CLOSE,
                                  &b, &e), 0);
    vat_xl_release(&b);
}

/* One hostile sheet body and the words its error must hold. */
struct hostile {
    const char *sheet;
    const char *want;
};

static void test_refuses_hostile_sheets(void **state)
{
    const char *dir = *state;
    static const struct hostile cases[] = {
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"A1\" t=\"e\"><x:v>#DIV/0!</x:v></x:c></x:row>" SHEET_CLOSE,
         "error value '#DIV/0!'"},
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"A1\" t=\"d\"><x:v>2024-01-01</x:v></x:c></x:row>" SHEET_CLOSE,
         "typed date"},
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"A1\" t=\"zz\"><x:v>1</x:v></x:c></x:row>" SHEET_CLOSE,
         "unknown type 'zz'"},
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"A1\" t=\"s\"><x:v>2</x:v></x:c></x:row>" SHEET_CLOSE,
         "shared string index '2'"},
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"A1\" t=\"s\"><x:v>-1</x:v></x:c></x:row>" SHEET_CLOSE,
         "shared string index"},
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"A1\"><x:v>12abc</x:v></x:c></x:row>" SHEET_CLOSE,
         "not a number"},
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"A1\"><x:v>nan</x:v></x:c></x:row>" SHEET_CLOSE,
         "not a number"},
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"A1\"><x:v>1e999</x:v></x:c></x:row>" SHEET_CLOSE,
         "not a number"},
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"A1\" t=\"b\"><x:v>2</x:v></x:c></x:row>" SHEET_CLOSE,
         "neither 0 nor 1"},
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"A1\"><x:f>A2</x:f></x:c></x:row>" SHEET_CLOSE,
         "formula without a cached value"},
        {SHEET_OPEN "<x:row r=\"1048577\"><x:c><x:v>1</x:v></x:c></x:row>" SHEET_CLOSE,
         "row number '1048577'"},
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"XFE1\"><x:v>1</x:v></x:c></x:row>" SHEET_CLOSE,
         "not an A1 address"},
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"A2\"><x:v>1</x:v></x:c></x:row>" SHEET_CLOSE,
         "outside its row"},
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"B1\"><x:v>1</x:v></x:c><x:c r=\"A1\"><x:v>1</x:v></x:c></x:row>" SHEET_CLOSE,
         "out of order or repeated"},
        {SHEET_OPEN "<x:row r=\"1\"><x:c r=\"B1\"><x:v>1</x:v></x:c><x:c r=\"B1\"><x:v>1</x:v></x:c></x:row>" SHEET_CLOSE,
         "out of order or repeated"},
        {SHEET_OPEN "<x:row r=\"2\"/><x:row r=\"1\"/>" SHEET_CLOSE, "comes after"},
        {SHEET_OPEN "<x:row r=\"0\"/>" SHEET_CLOSE, "not in 1.."},
        {SHEET_OPEN "</x:sheetData><x:mergeCells><x:mergeCell ref=\"B2:A1\"/></x:mergeCells>"
                    "</x:worksheet>",
         "not a range"},
        {SHEET_OPEN "</x:sheetData><x:mergeCells><x:mergeCell ref=\"A1:B2\"/><x:mergeCell "
                    "ref=\"B2:C3\"/></x:mergeCells></x:worksheet>",
         "overlaps"},
        {"<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 "
         "\"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]><worksheet>&lol2;</worksheet>",
         "DTD is not allowed"},
        {"<worksheet><sheetData>", "XML error"},
        {"not xml at all", "XML error"},
        {"", "XML error"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct vat_xl_book b;
        struct vat_err e = {{0}};
        char name[32];
        snprintf(name, sizeof name, "h%zu.xlsx", i);
        int rc = read_crafted(dir, name, NULL, 0, cases[i].sheet, &b, &e);
        if (rc != -1 || !strstr(e.msg, cases[i].want))
            fail_msg("case %zu: rc %d, error '%s' lacks '%s'", i, rc, e.msg, cases[i].want);
        assert_int_equal(b.nsheets, 0); /* released */
        assert_non_null(strstr(e.msg, "xlsx: '"));
    }
}

static void test_refuses_deep_and_big(void **state)
{
    const char *dir = *state;
    struct vat_xl_book b;
    struct vat_err e = {{0}};

    /* Nesting far past the cap. */
    struct vat_buf deep = VAT_BUF_INIT;
    for (int i = 0; i < 100000; i++)
        vat_buf_puts(&deep, "<a>");
    assert_int_equal(read_crafted(dir, "deep.xlsx", NULL, 0, deep.data, &b, &e), -1);
    assert_non_null(strstr(e.msg, "nest deeper"));
    vat_buf_release(&deep);

    /* A zip bomb: 40 MiB of one byte inflate past the part cap from a
     * file of a few tens of kilobytes. */
    size_t n = (size_t)40 << 20;
    char *zeros = vat_xmalloc(n);
    memset(zeros, ' ', n);
    memcpy(zeros, "<x:worksheet xmlns:x=\"u\">", 25);
    struct part bomb[] = {{"xl/worksheets/sheet1.xml", NULL, zeros, n}};
    assert_int_equal(read_crafted(dir, "bomb.xlsx", bomb, 1, NULL, &b, &e), -1);
    assert_non_null(strstr(e.msg, "inflates to"));
    /* Many parts each under the cap, but past the total cap together:
     * three sheets of 15 MiB and a fourth. */
    size_t m = (size_t)15 << 20;
    memcpy(zeros + m - 16, "</x:worksheet>  ", 16);
    static const char wb4[] =
        "<workbook xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\">"
        "<sheets><sheet name=\"A\" r:id=\"rId1\"/><sheet name=\"B\" r:id=\"rId1b\"/>"
        "<sheet name=\"C\" r:id=\"rId1c\"/><sheet name=\"D\" r:id=\"rId1d\"/></sheets></workbook>";
    static const char rels4[] =
        "<Relationships><Relationship Id=\"rId1\" Type=\"w\" Target=\"worksheets/sheet1.xml\"/>"
        "<Relationship Id=\"rId1b\" Type=\"w\" Target=\"worksheets/sheet1.xml\"/>"
        "<Relationship Id=\"rId1c\" Type=\"w\" Target=\"worksheets/sheet1.xml\"/>"
        "<Relationship Id=\"rId1d\" Type=\"w\" Target=\"worksheets/sheet1.xml\"/></Relationships>";
    struct part many[] = {{"xl/worksheets/sheet1.xml", NULL, zeros, m},
                          {"xl/workbook.xml", wb4, NULL, 0},
                          {"xl/_rels/workbook.xml.rels", rels4, NULL, 0}};
    assert_int_equal(read_crafted(dir, "many.xlsx", many, 3, NULL, &b, &e), -1);
    assert_non_null(strstr(e.msg, "in all"));
    free(zeros);

    /* A text node past Excel's cell limit. */
    struct vat_buf lng = VAT_BUF_INIT;
    vat_buf_puts(&lng, SHEET_OPEN "<x:row r=\"1\"><x:c r=\"A1\" t=\"inlineStr\"><x:is><x:t>");
    for (int i = 0; i < 40000; i++)
        vat_buf_putc(&lng, 'a');
    vat_buf_puts(&lng, "</x:t></x:is></x:c></x:row>" SHEET_CLOSE);
    assert_int_equal(read_crafted(dir, "long.xlsx", NULL, 0, lng.data, &b, &e), -1);
    assert_non_null(strstr(e.msg, "longer than"));
    vat_buf_release(&lng);

    /* The largest address is fine and costs nothing: cells are sparse. */
    assert_int_equal(read_crafted(dir, "far.xlsx", NULL, 0,
                                  SHEET_OPEN "<x:row r=\"1048576\"><x:c r=\"XFD1048576\"><x:v>1</x:v>"
                                             "</x:c></x:row>" SHEET_CLOSE,
                                  &b, &e), 0);
    assert_int_equal(vat_xl_nrows(&b.sheet[0]), 1048576);
    assert_int_equal(b.sheet[0].ncells, 1);
    vat_xl_release(&b);
}

static void test_refuses_broken_packages(void **state)
{
    const char *dir = *state;
    struct vat_xl_book b;
    struct vat_err e = {{0}};
    const char *ok = SHEET_OPEN SHEET_CLOSE;

    struct part nowb[] = {{"xl/workbook.xml", NULL, NULL, 0}};
    assert_int_equal(read_crafted(dir, "nowb.xlsx", nowb, 1, ok, &b, &e), -1);
    assert_non_null(strstr(e.msg, "lacks the part 'xl/workbook.xml'"));

    static const char rels_out[] =
        "<Relationships><Relationship Id=\"rId1\" Type=\"w\" Target=\"../../etc/passwd\"/>"
        "</Relationships>";
    struct part out[] = {{"xl/_rels/workbook.xml.rels", rels_out, NULL, 0}};
    assert_int_equal(read_crafted(dir, "out.xlsx", out, 1, ok, &b, &e), -1);
    assert_non_null(strstr(e.msg, "leaves the package"));

    static const char rels_none[] = "<Relationships/>";
    struct part none[] = {{"xl/_rels/workbook.xml.rels", rels_none, NULL, 0}};
    assert_int_equal(read_crafted(dir, "norel.xlsx", none, 1, ok, &b, &e), -1);
    assert_non_null(strstr(e.msg, "has no relationship 'rId1'"));

    static const char wb_dup[] =
        "<workbook xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\">"
        "<sheets><sheet name=\"S\" r:id=\"rId1\"/><sheet name=\"S\" r:id=\"rId1\"/></sheets></workbook>";
    struct part dup[] = {{"xl/workbook.xml", wb_dup, NULL, 0}};
    assert_int_equal(read_crafted(dir, "dup.xlsx", dup, 1, ok, &b, &e), -1);
    assert_non_null(strstr(e.msg, "two sheets"));

    static const char wb_empty[] = "<workbook><sheets/></workbook>";
    struct part empty[] = {{"xl/workbook.xml", wb_empty, NULL, 0}};
    assert_int_equal(read_crafted(dir, "nosheet.xlsx", empty, 1, ok, &b, &e), -1);
    assert_non_null(strstr(e.msg, "names no sheet"));

    struct part nosheet[] = {{"xl/worksheets/sheet1.xml", NULL, NULL, 0}};
    assert_int_equal(read_crafted(dir, "missing.xlsx", nosheet, 1, NULL, &b, &e), -1);
    assert_non_null(strstr(e.msg, "lacks the part 'xl/worksheets/sheet1.xml'"));

    /* Not a zip, an empty file, a truncated workbook, a flipped byte. */
    memset(&b, 0, sizeof b);
    assert_int_equal(vat_xl_read_mem(&b, "PK\3\4 nothing", 13, "junk", &e), -1);
    assert_non_null(strstr(e.msg, "not a zip"));
    assert_int_equal(vat_xl_read_mem(&b, "", 0, "empty", &e), -1);
    assert_int_equal(vat_xl_read(&b, dir, "no-such.xlsx", &e), -1);
    assert_non_null(strstr(e.msg, "cannot open"));

    struct vat_xl_book w = VAT_XL_BOOK_INIT;
    build_sample(&w);
    assert_int_equal(vat_xl_write(&w, dir, "good.xlsx", &e), 0);
    vat_xl_release(&w);
    char path[512];
    snprintf(path, sizeof path, "%s/good.xlsx", dir);
    size_t n;
    char *bytes = vat_test_read_file(path, &n);
    assert_non_null(bytes);
    assert_int_equal(vat_xl_read_mem(&b, bytes, n, "good", &e), 0);
    vat_xl_release(&b);
    assert_int_equal(vat_xl_read_mem(&b, bytes, n / 2, "half", &e), -1);
    assert_int_equal(b.nsheets, 0);
    /* Flip bytes across the file: each read succeeds or fails cleanly,
     * never crashes (ASan watches); most fail. */
    int failed = 0;
    for (size_t i = 0; i < n; i += 97) {
        bytes[i] ^= 0x5a;
        if (vat_xl_read_mem(&b, bytes, n, "flipped", &e) != 0)
            failed++;
        else
            vat_xl_release(&b);
        bytes[i] ^= 0x5a;
    }
    assert_true(failed > 0);
    free(bytes);
}

/* ---- --emit: workbooks for openpyxl to read ------------------------------------ */

static json_t *book_json(const struct vat_xl_book *b)
{
    json_t *sheets = json_array();
    for (size_t i = 0; i < b->nsheets; i++) {
        const struct vat_xl_sheet *s = &b->sheet[i];
        json_t *cells = json_object(), *merges = json_array();
        for (size_t k = 0; k < s->ncells; k++) {
            const struct vat_xl_cell *c = &s->cell[k];
            char a[16];
            json_t *v;
            switch (c->type) {
            case VAT_XL_STRING: v = json_pack("[s,s]", "s", c->s); break;
            case VAT_XL_NUMBER: v = json_pack("[s,f]", "n", c->num); break;
            case VAT_XL_BOOL: v = json_pack("[s,b]", "b", c->b); break;
            default: continue;
            }
            json_object_set_new(cells, vat_xl_addr(c->row, c->col, a, sizeof a), v);
        }
        for (size_t k = 0; k < s->nmerge; k++) {
            char a[16], z[16];
            json_array_append_new(merges, json_sprintf("%s:%s",
                vat_xl_addr(s->merge[k].r1, s->merge[k].c1, a, sizeof a),
                vat_xl_addr(s->merge[k].r2, s->merge[k].c2, z, sizeof z)));
        }
        json_array_append_new(sheets, json_pack("{s:s, s:o, s:o}", "name", s->name, "cells", cells,
                                                "merges", merges));
    }
    return sheets;
}

static int emit(const char *dir)
{
    struct vat_err e = {{0}};
    struct vat_xl_book books[2] = {VAT_XL_BOOK_INIT, VAT_XL_BOOK_INIT};
    struct vat_csv d1 = VAT_CSV_INIT, d2 = VAT_CSV_INIT;
    struct vat_xl_where w1, w2;
    build_sample(&books[0]);
    build_layouts(&books[1], &d1, &d2, &w1, &w2);
    static const char *const names[] = {"sample", "layouts"};
    for (int i = 0; i < 2; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "%s.xlsx", names[i]);
        struct vat_xl_book r = VAT_XL_BOOK_INIT;
        if (vat_xl_write(&books[i], dir, rel, &e) != 0 || vat_xl_read(&r, dir, rel, &e) != 0) {
            fprintf(stderr, "%s\n", e.msg);
            return 1;
        }
        char *path = vat_xasprintf("%s/%s.json", dir, names[i]);
        json_t *j = book_json(&r);
        int rc = json_dump_file(j, path, JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
        json_decref(j);
        free(path);
        vat_xl_release(&r);
        vat_xl_release(&books[i]);
        if (rc != 0)
            return 1;
    }
    vat_csv_release(&d1);
    vat_csv_release(&d2);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--emit") == 0)
        return emit(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_addresses),
        cmocka_unit_test_setup_teardown(test_round_trip, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_deterministic, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_write_refuses, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_layouts, setup_dir, teardown_dir),
        cmocka_unit_test(test_sheet_csv),
        cmocka_unit_test(test_prompt_cut),
        cmocka_unit_test_setup_teardown(test_reads_what_writers_write, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_refuses_hostile_sheets, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_refuses_deep_and_big, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_refuses_broken_packages, setup_dir, teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

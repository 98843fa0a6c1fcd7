/* compare.c — comparing rows (as a multiset or a list, numbers within
 * tolerance), reasons that keep a held-out fixture hidden, rows as JSON.
 * Part of the SQL checker: what it rests on is verifiers/sql/README.md. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include "sql_internal.h"

/* ---- comparing rows -------------------------------------------------------------- */

static int type_rank(int type)
{
    switch (type) {
    case SQLITE_NULL: return 0;
    case SQLITE_INTEGER:
    case SQLITE_FLOAT: return 1;
    case SQLITE_TEXT: return 2;
    default: return 3;
    }
}

/* A total order over typed values: NULL < numbers (by value) < TEXT <
 * BLOB (bytes), as SQLite sorts them. */
static int val_order(const struct sql_val *a, const struct sql_val *b)
{
    int ra = type_rank(a->type), rb = type_rank(b->type);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    if (ra == 0)
        return 0;
    if (ra == 1) {
        if (a->type == SQLITE_INTEGER && b->type == SQLITE_INTEGER)
            return a->i < b->i ? -1 : a->i > b->i;
        /* long double holds every int64 exactly, so mixed pairs order
         * consistently. */
        long double x = a->type == SQLITE_INTEGER ? (long double)a->i : (long double)a->d;
        long double y = b->type == SQLITE_INTEGER ? (long double)b->i : (long double)b->d;
        if (isnan(x) || isnan(y))
            return isnan(x) ? (isnan(y) ? 0 : -1) : 1;
        return x < y ? -1 : x > y;
    }
    size_t m = a->n < b->n ? a->n : b->n;
    int c = m ? memcmp(a->p, b->p, m) : 0;
    if (c)
        return c < 0 ? -1 : 1;
    return a->n < b->n ? -1 : a->n > b->n;
}

static double val_num(const struct sql_val *x)
{
    return x->type == SQLITE_INTEGER ? (double)x->i : x->d;
}

/* INTEGER and REAL agree within tolerance, TEXT and BLOB byte for byte,
 * NULL with NULL; a number never equals text. */
static bool val_equal(const struct sql_val *a, const struct sql_val *b, double rel, double abs)
{
    int ra = type_rank(a->type);
    if (ra != type_rank(b->type))
        return false;
    if (ra == 0)
        return true;
    if (ra == 1) {
        if (a->type == SQLITE_INTEGER && b->type == SQLITE_INTEGER && a->i == b->i)
            return true;
        double x = val_num(a), y = val_num(b);
        if (!isfinite(x) || !isfinite(y))
            return x == y; /* the same infinity */
        return vat_close(x, y, rel, abs);
    }
    if (a->type != b->type || a->n != b->n)
        return false;
    return a->n == 0 || memcmp(a->p, b->p, a->n) == 0;
}

static int row_order(const struct sql_rows *x, size_t a, const struct sql_rows *y, size_t b)
{
    const struct sql_val *ra = row_at(x, a), *rb = row_at(y, b);
    for (size_t c = 0; c < x->ncol; c++) {
        int o = val_order(&ra[c], &rb[c]);
        if (o)
            return o;
    }
    return 0;
}

static bool row_equal(const struct sql_rows *x, size_t a, const struct sql_rows *y, size_t b,
                      double rel, double abs)
{
    const struct sql_val *ra = row_at(x, a), *rb = row_at(y, b);
    for (size_t c = 0; c < x->ncol; c++)
        if (!val_equal(&ra[c], &rb[c], rel, abs))
            return false;
    return true;
}

/* Merge sort of row indices (qsort has no context argument in C11). */
static void sort_rows(const struct sql_rows *r, size_t *idx, size_t *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_rows(r, idx, tmp, h);
    sort_rows(r, idx + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = row_order(r, idx[j], r, idx[i]) < 0 ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

static size_t *sorted_index(const struct sql_rows *r)
{
    size_t *idx = vat_xcalloc(r->nrow, sizeof *idx);
    size_t *tmp = vat_xcalloc(r->nrow, sizeof *tmp);
    for (size_t i = 0; i < r->nrow; i++)
        idx[i] = i;
    sort_rows(r, idx, tmp, r->nrow);
    free(tmp);
    return idx;
}

/* Whether got and exp (as many rows each) hold the same rows in some
 * order: both sorted by the total order, then compared row by row. */
static bool same_rows(const struct sql_rows *got, const struct sql_rows *exp, double rel,
                      double abs)
{
    size_t *gi = sorted_index(got), *ei = sorted_index(exp);
    bool same = true;
    for (size_t k = 0; k < got->nrow && same; k++)
        same = row_equal(got, gi[k], exp, ei[k], rel, abs);
    free(gi);
    free(ei);
    return same;
}

/* Pairs exp's rows with got's as multisets: both sorted by the total
 * order, walked together, rows that agree within tolerance paired.  Sets
 * *miss to the first expected row left unpaired and *extra to the first
 * answer row left unpaired (in that order), SIZE_MAX when none. */
static void multiset_pair(const struct sql_rows *exp, const struct sql_rows *got, double rel,
                          double abs, size_t *miss, size_t *extra)
{
    size_t ne = exp->nrow, ng = got->nrow;
    size_t *gi = sorted_index(got), *ei = sorted_index(exp);
    size_t i = 0, j = 0;
    *miss = *extra = SIZE_MAX;
    while (i < ne && j < ng) {
        if (row_equal(exp, ei[i], got, gi[j], rel, abs)) {
            i++;
            j++;
        } else if (row_order(exp, ei[i], got, gi[j]) < 0) {
            if (*miss == SIZE_MAX)
                *miss = ei[i];
            i++;
        } else {
            if (*extra == SIZE_MAX)
                *extra = gi[j];
            j++;
        }
    }
    if (i < ne && *miss == SIZE_MAX)
        *miss = ei[i];
    if (j < ng && *extra == SIZE_MAX)
        *extra = gi[j];
    free(gi);
    free(ei);
}

/* Shortest text that reads back as the same double, with ".0" on whole
 * numbers so a reason shows a REAL apart from an INTEGER. */
static void fmt_real(char *buf, size_t cap, double d)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    if (isfinite(d) && !strpbrk(buf, ".eE"))
        strncat(buf, ".0", cap - strlen(buf) - 1);
}

static void reason_row(struct vat_reason *r, const struct sql_rows *rows, size_t row)
{
    const struct sql_val *v = row_at(rows, row);
    size_t start = r->n;
    vat_reason_esc_puts(r, "[");
    for (size_t c = 0; c < rows->ncol; c++) {
        char num[40];
        if (c)
            vat_reason_esc_puts(r, ", ");
        if (r->n - start > 72) {
            vat_reason_esc_puts(r, "...");
            break;
        }
        switch (v[c].type) {
        case SQLITE_INTEGER:
            snprintf(num, sizeof num, "%lld", (long long)v[c].i);
            vat_reason_esc_puts(r, num);
            break;
        case SQLITE_FLOAT:
            fmt_real(num, sizeof num, v[c].d);
            vat_reason_esc_puts(r, num);
            break;
        case SQLITE_TEXT:
            vat_reason_esc_puts(r, "'");
            vat_reason_esc(r, (const char *)v[c].p, v[c].n, 24);
            vat_reason_esc_puts(r, "'");
            break;
        case SQLITE_BLOB:
            vat_reason_esc_puts(r, "x'");
            for (size_t i = 0; i < v[c].n && i < 8; i++) {
                snprintf(num, sizeof num, "%02x", v[c].p[i]);
                vat_reason_esc_puts(r, num);
            }
            vat_reason_esc_puts(r, v[c].n > 8 ? "...'" : "'");
            break;
        default:
            vat_reason_esc_puts(r, "NULL");
        }
    }
    vat_reason_esc_puts(r, "]");
}

/* The code of rows that differ, by their shape: the column count, then
 * the row count (an ordered comparison tells a wrong order from wrong
 * rows only by sorting both sides, which rows_agree does for its reason). */
const char *rows_differ_code(const struct sql_rows *got, const struct sql_rows *exp)
{
    if (got->ncol != exp->ncol)
        return VAT_COLUMN_COUNT;
    return got->nrow < exp->nrow   ? VAT_MISSING_ROWS
           : got->nrow > exp->nrow ? VAT_EXTRA_ROWS
                                   : VAT_WRONG_ROWS;
}

/* Compares an answer's rows with the expected rows on one fixture.
 * Returns true when they agree; else false with *v (gate passed, score 0)
 * naming the fixture by label and the first difference, or with nothing
 * more when v is NULL (whether the answer is the trap: no reason wanted). */
bool rows_agree(const struct sql_rows *got, const struct sql_rows *exp, bool ordered,
                double rel, double abs, const char *label, struct vat_verdict *v)
{
    struct vat_reason r = {{0}, 0};
    if (!v && got->ncol != exp->ncol)
        return false;
    if (got->ncol != exp->ncol) {
        *v = vat_reason_verdictf(true, VAT_COLUMN_COUNT,
                                 "fixture %s: the query returns %zu column%s, expected %zu", label,
                                 got->ncol, got->ncol == 1 ? "" : "s", exp->ncol);
        return false;
    }
    size_t ng = got->nrow, ne = exp->nrow;
    const char *code = rows_differ_code(got, exp);
    if (ordered) {
        size_t i = 0, m = ng < ne ? ng : ne;
        while (i < m && row_equal(got, i, exp, i, rel, abs))
            i++;
        if (i == m && ng == ne)
            return true;
        if (!v)
            return false;
        if (ng != ne) {
            vat_reason_esc_printf(&r, "fixture %s: %zu rows, expected %zu; ", label, ng, ne);
            if (i < m) {
                vat_reason_esc_printf(&r, "row %zu is ", i + 1);
                reason_row(&r, got, i);
                vat_reason_esc_puts(&r, ", expected ");
                reason_row(&r, exp, i);
            } else if (ng < ne) {
                vat_reason_esc_puts(&r, "missing ");
                reason_row(&r, exp, i);
            } else {
                vat_reason_esc_puts(&r, "unexpected ");
                reason_row(&r, got, i);
            }
            *v = vat_reason_verdict(true, 0, code, &r);
            return false;
        }
        /* Same count: right rows in the wrong order, or wrong rows? */
        bool same_set = same_rows(got, exp, rel, abs);
        vat_reason_esc_printf(&r, "fixture %s: %s; row %zu is ", label,
                              same_set ? "the right rows in the wrong order" : "wrong rows", i + 1);
        reason_row(&r, got, i);
        vat_reason_esc_puts(&r, ", expected ");
        reason_row(&r, exp, i);
        *v = vat_reason_verdict(true, 0, same_set ? VAT_WRONG_ORDER : VAT_WRONG_ROWS, &r);
        return false;
    }
    /* Multiset: sort both by the total order, then walk them together,
     * pairing rows that agree within tolerance.  Caveat: numbers that agree
     * only within tolerance can sort on either side of a neighbour, so a
     * pairing can fail that a perfect matching would find; it takes rows
     * whose values differ by less than the tolerance and are otherwise
     * interleaved, which real results do not produce. */
    size_t miss, extra;
    multiset_pair(exp, got, rel, abs, &miss, &extra);
    if (miss == SIZE_MAX && extra == SIZE_MAX)
        return true;
    if (!v)
        return false;
    vat_reason_esc_printf(&r, "fixture %s: %zu rows, expected %zu", label, ng, ne);
    if (extra != SIZE_MAX) {
        vat_reason_esc_puts(&r, "; unexpected ");
        reason_row(&r, got, extra);
    }
    if (miss != SIZE_MAX) {
        vat_reason_esc_puts(&r, "; missing ");
        reason_row(&r, exp, miss);
    }
    *v = vat_reason_verdict(true, 0, code, &r);
    return false;
}

/* ---- reasons that keep a held-out fixture hidden ----------------------------------- */

/* A value's kind, in words that hold none of it. */
static const char *val_kind(const struct sql_val *x)
{
    static const char *const kinds[] = {"NULL", "a number", "text", "a blob"};
    return kinds[type_rank(x->type)];
}

/* Where row a of x first differs from row b of y: its column and how,
 * without a value ("column 2: text, expected a number", "column 3:
 * another number"). */
static void reason_cell(struct vat_reason *r, const struct sql_rows *x, size_t a,
                        const struct sql_rows *y, size_t b, double rel, double abs)
{
    const struct sql_val *ra = row_at(x, a), *rb = row_at(y, b);
    for (size_t c = 0; c < x->ncol; c++) {
        if (val_equal(&ra[c], &rb[c], rel, abs))
            continue;
        int kx = type_rank(ra[c].type), ky = type_rank(rb[c].type);
        static const char *const other[] = {"", "another number", "other text", "another blob"};
        if (kx != ky)
            vat_reason_esc_printf(r, "column %zu: %s, expected %s", c + 1, val_kind(&ra[c]),
                                  val_kind(&rb[c]));
        else
            vat_reason_esc_printf(r, "column %zu: %s", c + 1, other[kx]);
        return;
    }
}

/* The verdict of rows that differ on a held-out fixture (rows_agree has
 * said they do): the counts, the first row and column that differ, an
 * order; never a value of the fixture or of the answer's rows on it. */
static struct vat_verdict rows_hidden_verdict(const struct sql_rows *got,
                                              const struct sql_rows *exp, bool ordered,
                                              double rel, double abs, const char *label)
{
    struct vat_reason r = {{0}, 0};
    size_t ng = got->nrow, ne = exp->nrow;
    const char *code = rows_differ_code(got, exp);
    vat_reason_esc_printf(&r, "fixture %s (held out): ", label);
    if (got->ncol != exp->ncol) {
        vat_reason_esc_printf(&r, "the query returns %zu column%s, expected %zu", got->ncol,
                              got->ncol == 1 ? "" : "s", exp->ncol);
        return vat_reason_verdict(true, 0, code, &r);
    }
    vat_reason_esc_printf(&r, "%zu row%s, expected %zu", ng, ng == 1 ? "" : "s", ne);
    if (ordered) {
        size_t i = 0, m = ng < ne ? ng : ne;
        while (i < m && row_equal(got, i, exp, i, rel, abs))
            i++;
        bool same_set = ng == ne && same_rows(got, exp, rel, abs);
        if (same_set) {
            vat_reason_esc_printf(
                &r, "; the right rows in the wrong order: row %zu is out of place", i + 1);
            return vat_reason_verdict(true, 0, VAT_WRONG_ORDER, &r);
        }
        if (i < m) {
            vat_reason_esc_printf(&r, "; row %zu differs at ", i + 1);
            reason_cell(&r, got, i, exp, i, rel, abs);
        } else if (ng < ne) {
            vat_reason_esc_printf(&r, "; the %zu given agree, row %zu is missing", ng, ng + 1);
        } else {
            vat_reason_esc_printf(&r, "; the %zu expected agree, row %zu is unexpected", ne,
                                  ne + 1);
        }
        return vat_reason_verdict(true, 0, code, &r);
    }
    /* as rows_agree pairs them: the first unexpected and missing rows in
     * the total order, the answer's row named by its position */
    size_t miss, extra;
    multiset_pair(exp, got, rel, abs, &miss, &extra);
    if (extra != SIZE_MAX)
        vat_reason_esc_printf(&r, "; row %zu of the answer is not expected", extra + 1);
    if (miss != SIZE_MAX)
        vat_reason_esc_puts(&r, "; an expected row is missing");
    if (extra != SIZE_MAX && miss != SIZE_MAX) {
        vat_reason_esc_puts(&r, "; they first differ at ");
        reason_cell(&r, got, extra, exp, miss, rel, abs);
    }
    return vat_reason_verdict(true, 0, code, &r);
}

/* rows_agree, with the hidden reason when hide is set. */
bool rows_agree_as(const struct sql_rows *got, const struct sql_rows *exp, bool ordered,
                   double rel, double abs, const char *label, bool hide,
                   struct vat_verdict *v)
{
    if (!hide || !v)
        return rows_agree(got, exp, ordered, rel, abs, label, v);
    if (rows_agree(got, exp, ordered, rel, abs, label, NULL))
        return true;
    *v = rows_hidden_verdict(got, exp, ordered, rel, abs, label);
    return false;
}

/* A run that failed on a held-out fixture: SQLite's message of a run-time
 * error can quote a value the query read (a JSON path taken from a row),
 * so it is withheld; the other failures (budgets, caps) hold no value. */
void hide_run_failure(struct vat_verdict *v, const char *label, bool hide)
{
    if (hide && strcmp(v->code, VAT_SQL_ERROR) == 0)
        *v = vat_reason_verdictf(
            true, VAT_SQL_ERROR,
            "fixture %s (held out): the query fails with a run-time error there", label);
}

/* ---- rows as JSON ------------------------------------------------------------------ */

json_t *text_json(const unsigned char *p, size_t n)
{
    if (vat_utf8_prefix((const char *)p, n) == n)
        return json_stringn((const char *)p, n);
    /* TEXT built from bytes (CAST(x'ff' AS TEXT)) need not be UTF-8; JSON
     * must be, so invalid bytes become U+FFFD. */
    struct vat_buf b = VAT_BUF_INIT;
    for (size_t i = 0; i < n;) {
        size_t k = vat_utf8_seq(p + i, n - i);
        if (k) {
            vat_buf_putn(&b, (const char *)p + i, k);
            i += k;
        } else {
            vat_buf_puts(&b, "\xEF\xBF\xBD");
            i++;
        }
    }
    json_t *j = json_stringn(b.data ? b.data : "", b.len);
    vat_buf_release(&b);
    return j;
}

json_t *rows_json(const struct sql_rows *r)
{
    json_t *out = json_array();
    for (size_t row = 0; row < r->nrow; row++) {
        json_t *a = json_array();
        const struct sql_val *v = row_at(r, row);
        for (size_t c = 0; c < r->ncol; c++) {
            json_t *x;
            switch (v[c].type) {
            case SQLITE_INTEGER:
                x = json_integer((json_int_t)v[c].i);
                break;
            case SQLITE_FLOAT:
                /* JSON has no infinities; SQLite can make them (1e999). */
                x = isfinite(v[c].d) ? json_real(v[c].d)
                                     : json_string(v[c].d > 0 ? "Infinity" : "-Infinity");
                break;
            case SQLITE_TEXT:
                x = text_json(v[c].p, v[c].n);
                break;
            case SQLITE_BLOB: {
                char *hex = vat_xmalloc(v[c].n * 2 + 1);
                for (size_t i = 0; i < v[c].n; i++)
                    snprintf(hex + 2 * i, 3, "%02x", v[c].p[i]);
                hex[v[c].n * 2] = 0;
                x = json_string(hex);
                free(hex);
                break;
            }
            default:
                x = json_null();
            }
            json_array_append_new(a, x);
        }
        json_array_append_new(out, a);
    }
    return out;
}

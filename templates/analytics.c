/* analytics.c — helpers shared by the analytics templates: CSV fixtures
 * written and read back, the prompt's data section, value specs and gold,
 * keyed tallies, SQLite second derivations, and the steps of reference,
 * confirm and trap every template repeats (see analytics.h). */
#include "analytics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "sqlio.h"
#include "template.h"
#include "trace.h"
#include "trapmod.h"
#include "values.h"
#include "verifiers.h"

/* ---- fixtures ------------------------------------------------------------ */

int vat_an_write_csv(struct vat_task *t, const struct vat_csv *c, const char *suffix,
                     const char *role, struct vat_err *e)
{
    if (c->nrows < 1)
        return vat_err_set(e, "%s: csv fixture has no header row", t->id);
    /* Armed trap modules plant their rows in the table itself, so the
     * prompt the template builds from it shows what the file holds. */
    vat_trapmod_plant(t, (struct vat_csv *)c, suffix);
    char *rel = vat_task_fixture_relpath(t, suffix);
    if (vat_csv_write(c, t->root, rel, e) != 0) {
        free(rel);
        return -1;
    }
    struct vat_fixture *f = vat_task_add_fixture(t, rel, "csv", role);
    free(rel);
    f->rows = (long)c->nrows - 1;
    for (size_t j = 0; j < c->row[0].n; j++)
        json_array_append_new(f->columns, json_string(c->row[0].cell[j]));
    return t->n_fixtures - 1;
}

int vat_an_read_csv(const struct vat_task *t, int fi, const char *const *cols, size_t ncols,
                    struct vat_csv *c, struct vat_err *e)
{
    if (fi < 0 || fi >= t->n_fixtures)
        return vat_err_set(e, "%s: no fixture %d", t->id, fi);
    const char *rel = t->fixture[fi].path;
    if (vat_csv_read(c, t->root, rel, e) != 0)
        return -1;
    if (c->nrows < 1) {
        vat_csv_release(c);
        return vat_err_set(e, "%s: '%s' is empty", t->id, rel);
    }
    bool csv = strcmp(t->fixture[fi].format, "csv") == 0;
    if (csv)
        vat_trapmod_columns(t, c);
    const struct vat_csv_row *h = &c->row[0];
    if (h->n != ncols) {
        size_t got = h->n;
        vat_csv_release(c);
        return vat_err_set(e, "%s: '%s' has %zu header columns, expected %zu", t->id, rel, got,
                           ncols);
    }
    for (size_t j = 0; j < ncols; j++) {
        if (strcmp(h->cell[j], cols[j]) != 0) {
            vat_err_set(e, "%s: '%s' header column %zu is '%s', expected '%s'", t->id, rel,
                        j + 1, h->cell[j], cols[j]);
            vat_csv_release(c);
            return -1;
        }
    }
    for (size_t i = 1; i < c->nrows; i++) {
        if (c->row[i].n != ncols) {
            size_t got = c->row[i].n;
            vat_csv_release(c);
            return vat_err_set(e, "%s: '%s' record %zu has %zu cells, expected %zu", t->id, rel,
                               i + 1, got, ncols);
        }
    }
    if (csv)
        vat_trapmod_clean(t, c);
    return 0;
}

/* ---- the prompt ---------------------------------------------------------- */

size_t vat_an_prompt_csv(struct vat_buf *b, struct vat_task *t, int fi,
                         const struct vat_csv *c)
{
    const char *rel = t->fixture[fi].path;
    size_t data_rows = c->nrows ? c->nrows - 1 : 0;
    size_t *ends;
    char *text = vat_csv_to_string_ends(c, &ends);
    size_t shown = data_rows;

    if (c->nrows && ends[c->nrows - 1] > vat_task_inline_cap(t)) {
        /* Records are serialised one after another, so the text of the
         * first k rows is a prefix of the file: the largest k whose prefix
         * fits, cut in place.  The header always stays: the question names
         * its columns. */
        size_t k = 1;
        while (k < c->nrows && ends[k] <= vat_task_inline_cap(t))
            k++;
        text[ends[k - 1]] = 0;
        shown = k - 1;
    }
    free(ends);

    vat_buf_printf(b, "The data is the CSV file `%s`: a header line, then %zu data row%s.", rel,
                   data_rows, data_rows == 1 ? "" : "s");
    if (shown == data_rows)
        vat_buf_puts(b, " Its full contents:\n\n```csv\n");
    else
        vat_buf_printf(b,
                       " It is too long to show whole here: below are its header and its first "
                       "%zu data rows only; the other %zu %s in the file, and the answer must "
                       "cover all %zu.\n\n```csv\n",
                       shown, data_rows - shown, data_rows - shown == 1 ? "row is" : "rows are",
                       data_rows);
    vat_buf_puts(b, text);
    if (b->len && b->data[b->len - 1] != '\n')
        vat_buf_putc(b, '\n');
    vat_buf_puts(b, "```\n");
    free(text);
    /* A value answer depends on every row, so the prompt is self-contained
     * only when each fixture it shows is shown whole. */
    t->self_contained = (fi == 0 || t->self_contained) && shown == data_rows;
    return shown;
}

/* Writes x in short form ("1e-6", "0.001", "0"); returns out. */
static char *fmt_tol(double x, char out[32])
{
    snprintf(out, 32, "%g", x);
    char *p = strstr(out, "e-0");
    if (!p)
        p = strstr(out, "e+0");
    if (p)
        memmove(p + 2, p + 3, strlen(p + 3) + 1);
    return out;
}

void vat_an_prompt_tolerance(struct vat_buf *b, double rel_tol, double abs_tol)
{
    char a[32], r[32];
    vat_buf_printf(b,
                   "Numbers are compared with an absolute tolerance of %s and a relative "
                   "tolerance of %s",
                   fmt_tol(abs_tol, a), fmt_tol(rel_tol, r));
}

/* ---- checker spec and gold ------------------------------------------------ */

json_t *vat_an_value_spec(const struct vat_an_spec *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "checker", json_string("value"));
    json_object_set_new(o, "shape", json_string(s->shape));
    if (strcmp(s->shape, "list") == 0) {
        json_object_set_new(o, "items", json_string(s->items ? s->items : "string"));
        json_object_set_new(o, "ordered", json_boolean(s->ordered));
        json_object_set_new(o, "unique", json_boolean(s->unique));
    }
    json_object_set_new(o, "integer", json_boolean(s->integer));
    json_object_set_new(o, "rel_tol", json_real(s->rel_tol));
    json_object_set_new(o, "abs_tol", json_real(s->abs_tol));
    return o;
}

void vat_an_set_gold(struct vat_task *t, json_t *gold)
{
    free(t->gold);
    t->gold = vat_json_dumps(gold);
    if (!t->spec)
        t->spec = json_object();
    json_object_set_new(t->spec, "expected", gold);
}

void vat_an_set_trap(struct vat_task *t, json_t *v)
{
    free(t->trap);
    t->trap = vat_json_dumps(v);
    json_decref(v);
}

/* ---- keyed tallies -------------------------------------------------------- */

const struct vat_an_entry *vat_an_tally_find(const struct vat_an_tally *t, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->e[i].key, key) == 0)
            return &t->e[i];
    return NULL;
}

struct vat_an_entry *vat_an_tally_get(struct vat_an_tally *t, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->e[i].key, key) == 0)
            return &t->e[i];
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 8;
        t->e = vat_xrealloc(t->e, t->cap * sizeof *t->e);
    }
    struct vat_an_entry *x = &t->e[t->n++];
    x->key = vat_xstrdup(key);
    x->sum = 0;
    x->n = 0;
    return x;
}

void vat_an_tally_add(struct vat_an_tally *t, const char *key, int64_t v)
{
    struct vat_an_entry *x = vat_an_tally_get(t, key);
    x->sum += v;
    x->n++;
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const struct vat_an_entry *)a)->key, ((const struct vat_an_entry *)b)->key);
}

void vat_an_tally_sort(struct vat_an_tally *t)
{
    if (t->n > 1)
        qsort(t->e, t->n, sizeof *t->e, entry_cmp);
}

json_t *vat_an_tally_cents_json(struct vat_an_tally *t)
{
    vat_an_tally_sort(t);
    json_t *o = json_object();
    for (size_t i = 0; i < t->n; i++)
        json_object_set_new(o, t->e[i].key, json_real((double)t->e[i].sum / 100.0));
    return o;
}

json_t *vat_an_tally_counts_json(struct vat_an_tally *t)
{
    vat_an_tally_sort(t);
    json_t *o = json_object();
    for (size_t i = 0; i < t->n; i++)
        json_object_set_new(o, t->e[i].key, json_integer((json_int_t)t->e[i].n));
    return o;
}

void vat_an_tally_release(struct vat_an_tally *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->e[i].key);
    free(t->e);
    t->e = NULL;
    t->n = t->cap = 0;
}

/* ---- second derivation through SQLite ------------------------------------- */

/* This thread's loader (struct vat_csv_loader): confirmations load one
 * fixture after another of the same shape, so the table is refilled, not
 * created afresh, on one connection kept for the thread's life. */
static pthread_key_t loader_key;
static pthread_once_t loader_once = PTHREAD_ONCE_INIT;
static bool loader_keyed;

static void loader_free(void *arg)
{
    vat_csv_loader_close(arg);
    free(arg);
}

static void loader_init(void)
{
    loader_keyed = pthread_key_create(&loader_key, loader_free) == 0;
}

static struct vat_csv_loader *loader_get(void)
{
    pthread_once(&loader_once, loader_init);
    if (!loader_keyed)
        return NULL;
    struct vat_csv_loader *l = pthread_getspecific(loader_key);
    if (!l) {
        l = vat_xcalloc(1, sizeof *l);
        if (pthread_setspecific(loader_key, l) != 0) {
            free(l);
            return NULL;
        }
    }
    return l;
}

int vat_an_csv_sqlite(const struct vat_task *t, int fi, const char *table,
                      const char *const *types, int blank_is_null, sqlite3 **db,
                      struct vat_err *e)
{
    *db = NULL;
    if (fi < 0 || fi >= t->n_fixtures)
        return vat_err_set(e, "%s: no fixture %d", t->id, fi);
    struct vat_csv c = VAT_CSV_INIT;
    vat_trace_note("csv loaded into sqlite", t->fixture[fi].path);
    if (vat_csv_read(&c, t->root, t->fixture[fi].path, e) != 0)
        return -1;
    if (c.nrows < 1) {
        vat_csv_release(&c);
        return vat_err_set(e, "%s: '%s' is empty", t->id, t->fixture[fi].path);
    }
    /* the columns the armed modules planted, typed */
    const char *typed[64];
    if (vat_trapmod_header_types(t, &c.row[0], types, typed, 64))
        types = typed;
    /* The thread's loader, unless its table is still lent (a caller
     * holding two at once gets a connection of its own for the second). */
    struct vat_csv_loader *l = loader_get();
    if (l && !l->lent) {
        int rc = vat_csv_loader_load(l, &c, 0, table, types, blank_is_null, e);
        vat_csv_release(&c);
        if (rc != 0)
            return -1;
        *db = l->db;
        /* the armed modules' cleaning writes the table before it is lent
         * (the loader's authorizer refuses writes to a lent table) */
        l->lent = false;
        rc = vat_trapmod_clean_sqlite(t, *db, table, e);
        l->lent = true;
        if (rc != 0) {
            vat_an_csv_done(*db);
            *db = NULL;
            return -1;
        }
        return 0;
    }
    if (sqlite3_open_v2(":memory:", db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        vat_err_set(e, "%s: cannot open an in-memory database: %s", t->id,
                    *db ? sqlite3_errmsg(*db) : "out of memory");
        sqlite3_close(*db);
        *db = NULL;
        vat_csv_release(&c);
        return -1;
    }
    int rc = vat_csv_to_sqlite(&c, 0, *db, table, types, blank_is_null, e);
    vat_csv_release(&c);
    if (rc == 0)
        rc = vat_trapmod_clean_sqlite(t, *db, table, e);
    if (rc != 0) {
        sqlite3_close(*db);
        *db = NULL;
        return -1;
    }
    return 0;
}

void vat_an_csv_done(sqlite3 *db)
{
    struct vat_csv_loader *l = loader_keyed ? pthread_getspecific(loader_key) : NULL;
    if (l && l->lent && db == l->db)
        l->lent = false;
    else
        sqlite3_close(db);
}

/* Returns the column as a JSON number, or NULL when it is not numeric. */
static json_t *col_number(sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER: return json_integer((json_int_t)sqlite3_column_int64(st, i));
    case SQLITE_FLOAT: return json_real(sqlite3_column_double(st, i));
    default: return NULL;
    }
}

/* Returns the column's text (NULL for SQL NULL). */
static const char *col_text(sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return NULL;
    return (const char *)sqlite3_column_text(st, i);
}

json_t *vat_an_sql_json(sqlite3 *db, const char *sql, enum vat_an_result kind,
                        struct vat_err *e)
{
    static const int want_cols[] = {1, 1, 2, 3, 2};
    sqlite3_stmt *st = NULL;
    vat_trace_note("sql", sql);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        vat_err_set(e, "sql: %s", sqlite3_errmsg(db));
        return NULL;
    }
    if (sqlite3_column_count(st) != want_cols[kind]) {
        vat_err_set(e, "sql: query returns %d columns, expected %d", sqlite3_column_count(st),
                    want_cols[kind]);
        sqlite3_finalize(st);
        return NULL;
    }
    json_t *out = kind == VAT_AN_LIST ? json_array() : kind == VAT_AN_NUMBER ? NULL : json_object();
    long nrows = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        nrows++;
        const char *k1, *k2;
        json_t *num = NULL, *inner;
        switch (kind) {
        case VAT_AN_NUMBER:
            if (nrows > 1) {
                vat_err_set(e, "sql: query returns more than one row");
                goto fail;
            }
            if (!(out = col_number(st, 0))) {
                vat_err_set(e, "sql: row 1 has a non-numeric value");
                goto fail;
            }
            break;
        case VAT_AN_LIST:
            if (!(k1 = col_text(st, 0))) {
                vat_err_set(e, "sql: row %ld has a NULL item", nrows);
                goto fail;
            }
            json_array_append_new(out, json_string(k1));
            break;
        case VAT_AN_OBJECT:
            k1 = col_text(st, 0);
            if (!k1 || !(num = col_number(st, 1))) {
                vat_err_set(e, "sql: row %ld has a NULL key or a non-numeric value", nrows);
                goto fail;
            }
            if (json_object_get(out, k1)) {
                vat_err_set(e, "sql: key '%s' repeats", k1);
                json_decref(num);
                goto fail;
            }
            json_object_set_new(out, k1, num);
            break;
        case VAT_AN_OBJECT_OF_OBJECTS:
            k1 = col_text(st, 0);
            k2 = col_text(st, 1);
            if (!k1 || !k2 || !(num = col_number(st, 2))) {
                vat_err_set(e, "sql: row %ld has a NULL key or a non-numeric value", nrows);
                goto fail;
            }
            inner = json_object_get(out, k1);
            if (!inner) {
                inner = json_object();
                json_object_set_new(out, k1, inner);
            }
            if (json_object_get(inner, k2)) {
                vat_err_set(e, "sql: key '%s'.'%s' repeats", k1, k2);
                json_decref(num);
                goto fail;
            }
            json_object_set_new(inner, k2, num);
            break;
        case VAT_AN_OBJECT_OF_STRINGS:
            k1 = col_text(st, 0);
            k2 = col_text(st, 1);
            if (!k1 || !k2) {
                vat_err_set(e, "sql: row %ld has a NULL key or value", nrows);
                goto fail;
            }
            if (json_object_get(out, k1)) {
                vat_err_set(e, "sql: key '%s' repeats", k1);
                goto fail;
            }
            json_object_set_new(out, k1, json_string(k2));
            break;
        }
    }
    if (rc != SQLITE_DONE) {
        vat_err_set(e, "sql: %s", sqlite3_errmsg(db));
        goto fail;
    }
    if (kind == VAT_AN_NUMBER && !out) {
        vat_err_set(e, "sql: query returns no rows");
        goto fail;
    }
    sqlite3_finalize(st);
    return out;
fail:
    sqlite3_finalize(st);
    json_decref(out);
    return NULL;
}

json_t *vat_an_csv_query(const struct vat_task *t, int fi, const char *table,
                         const char *const *types, int blank_is_null, const char *sql,
                         enum vat_an_result kind, struct vat_err *e)
{
    sqlite3 *db;
    if (vat_an_csv_sqlite(t, fi, table, types, blank_is_null, &db, e) != 0)
        return NULL;
    json_t *v = vat_an_sql_json(db, sql, kind, e);
    vat_an_csv_done(db);
    return v;
}

/* Appends a short rendering of v for messages. */
static void show(struct vat_buf *b, const json_t *v)
{
    char *s = v ? vat_json_dumps(v) : vat_xstrdup("nothing");
    if (strlen(s) > 60)
        strcpy(s + 57, "...");
    vat_buf_puts(b, s);
    free(s);
}

/* Recursive comparison; on the first difference writes "at PATH: ..." to
 * msg and returns -1. */
static int agree(const json_t *want, const json_t *got, double rel, double abs,
                 struct vat_buf *path, struct vat_buf *msg)
{
    size_t mark = path->len;
    if (json_is_number(want) && json_is_number(got)) {
        if (vat_close(json_number_value(want), json_number_value(got), rel, abs))
            return 0;
        goto differ;
    }
    if (json_typeof(want) != json_typeof(got))
        goto differ;
    switch (json_typeof(want)) {
    case JSON_STRING:
        if (json_string_length(want) == json_string_length(got) &&
            memcmp(json_string_value(want), json_string_value(got), json_string_length(want)) == 0)
            return 0;
        goto differ;
    case JSON_ARRAY:
        if (json_array_size(want) != json_array_size(got)) {
            vat_buf_printf(msg, "at %s: want %zu items, got %zu", path->len ? path->data : "top",
                           json_array_size(want), json_array_size(got));
            return -1;
        }
        for (size_t i = 0; i < json_array_size(want); i++) {
            vat_buf_printf(path, "[%zu]", i);
            if (agree(json_array_get(want, i), json_array_get(got, i), rel, abs, path, msg) != 0)
                return -1;
            path->len = mark;
            path->data[mark] = 0;
        }
        return 0;
    case JSON_OBJECT: {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)want, k, x) {
            vat_buf_printf(path, "['%s']", k);
            json_t *y = json_object_get(got, k);
            if (!y) {
                vat_buf_printf(msg, "at %s: missing (want ", path->data);
                show(msg, x);
                vat_buf_putc(msg, ')');
                return -1;
            }
            if (agree(x, y, rel, abs, path, msg) != 0)
                return -1;
            path->len = mark;
            path->data[mark] = 0;
        }
        json_object_foreach((json_t *)got, k, x) {
            if (!json_object_get(want, k)) {
                vat_buf_printf(msg, "at %s['%s']: unexpected (got ", path->len ? path->data : "",
                               k);
                show(msg, x);
                vat_buf_putc(msg, ')');
                return -1;
            }
        }
        return 0;
    }
    default:
        if (json_equal(want, got))
            return 0;
        goto differ;
    }
differ:
    vat_buf_printf(msg, "at %s: want ", path->len ? path->data : "top");
    show(msg, want);
    vat_buf_puts(msg, ", got ");
    show(msg, got);
    return -1;
}

int vat_an_agree(const char *what, const json_t *want, const json_t *got, double rel_tol,
                 double abs_tol, struct vat_err *e)
{
    struct vat_buf path = VAT_BUF_INIT, msg = VAT_BUF_INIT;
    vat_buf_puts(&path, "");
    int rc = agree(want, got, rel_tol, abs_tol, &path, &msg);
    if (rc != 0)
        vat_err_set(e, "%s: %s", what, msg.data);
    vat_buf_release(&path);
    vat_buf_release(&msg);
    return rc;
}

int vat_an_confirm_gold(const struct vat_task *t, const json_t *derived, const char *how,
                        double rel_tol, double abs_tol, struct vat_err *e)
{
    if (!t->gold)
        return vat_err_set(e, "%s: no gold to confirm", t->id);
    json_error_t je;
    json_t *gold = json_loads(t->gold, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (!gold)
        return vat_err_set(e, "%s: gold is not JSON: %s", t->id, je.text);
    char *what = vat_xasprintf("%s: %s disagrees with gold", t->id, how);
    int rc = vat_an_agree(what, gold, derived, rel_tol, abs_tol, e);
    free(what);
    json_decref(gold);
    return rc;
}

/* ---- the steps every analytics template repeats ----------------------------- */

static int param_missing(const struct vat_task *t, const char *key, struct vat_err *e)
{
    return vat_err_set(e, "%s: params lack a valid '%s'", t->id, key);
}

int vat_an_param_int(const struct vat_task *t, const char *key, long lo, long hi, long *v,
                     struct vat_err *e)
{
    json_t *j = json_object_get(t->params, key);
    if (!json_is_integer(j) || json_integer_value(j) < lo || json_integer_value(j) > hi)
        return param_missing(t, key, e);
    *v = (long)json_integer_value(j);
    return 0;
}

int vat_an_param_real(const struct vat_task *t, const char *key, double lo, double hi, double *v,
                      struct vat_err *e)
{
    json_t *j = json_object_get(t->params, key);
    double x = json_number_value(j);
    /* written so that NaN fails too */
    if (!json_is_number(j) || !(x >= lo && x <= hi))
        return param_missing(t, key, e);
    *v = x;
    return 0;
}

const char *vat_an_param_str(const struct vat_task *t, const char *key, struct vat_err *e)
{
    const char *s = json_string_value(json_object_get(t->params, key));
    if (!s || !*s) {
        param_missing(t, key, e);
        return NULL;
    }
    return s;
}

int vat_an_csv_cents(const struct vat_task *t, int fi, const struct vat_csv *c, size_t row,
                     size_t col, int64_t *cents, struct vat_err *e)
{
    const char *cell = vat_csv_get(c, row, col);
    if (vat_parse_cents(cell, cents) == 0)
        return 0;
    return vat_err_set(e, "%s: '%s' record %zu: %s '%s' is not a decimal with two places", t->id,
                       t->fixture[fi].path, row + 1, vat_csv_get(c, 0, col), cell);
}

int vat_an_csv_date(const struct vat_task *t, int fi, const struct vat_csv *c, size_t row,
                    size_t col, int32_t *days, struct vat_err *e)
{
    const char *cell = vat_csv_get(c, row, col);
    if (vat_parse_date(cell, days) == 0)
        return 0;
    return vat_err_set(e, "%s: '%s' record %zu: %s '%s' is not a date YYYY-MM-DD", t->id,
                       t->fixture[fi].path, row + 1, vat_csv_get(c, 0, col), cell);
}

int vat_an_csv_int(const struct vat_task *t, int fi, const struct vat_csv *c, size_t row,
                   size_t col, int64_t *v, struct vat_err *e)
{
    const char *cell = vat_csv_get(c, row, col), *p = cell + (cell[0] == '-');
    size_t n = strspn(p, "0123456789");
    if (n >= 1 && n <= 18 && !p[n]) {
        *v = strtoll(cell, NULL, 10);
        return 0;
    }
    return vat_err_set(e, "%s: '%s' record %zu: %s '%s' is not a whole number", t->id,
                       t->fixture[fi].path, row + 1, vat_csv_get(c, 0, col), cell);
}

int vat_an_csv_timestamp(const struct vat_task *t, int fi, const struct vat_csv *c, size_t row,
                         size_t col, int64_t *secs, struct vat_err *e)
{
    const char *cell = vat_csv_get(c, row, col);
    if (vat_parse_timestamp(cell, secs) == 0)
        return 0;
    return vat_err_set(e, "%s: '%s' record %zu: %s '%s' is not a timestamp YYYY-MM-DD HH:MM:SS",
                       t->id, t->fixture[fi].path, row + 1, vat_csv_get(c, 0, col), cell);
}

int vat_an_param_month(const struct vat_task *t, const char *key, int *year, int *month,
                       struct vat_err *e)
{
    const char *s = json_string_value(json_object_get(t->params, key));
    if (!s || vat_parse_month(s, year, month) != 0) {
        param_missing(t, key, e);
        return -1;
    }
    return 0;
}

static int cmp_word(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void vat_an_prompt_words(struct vat_buf *b, const char **words, size_t n)
{
    /* equal words print alike, so qsort's tie order cannot show */
    if (n > 1)
        qsort(words, n, sizeof *words, cmp_word);
    for (size_t i = 0; i < n; i++)
        vat_buf_printf(b, "%s`%s`", i == 0 ? "" : i == n - 1 ? " or " : ", ", words[i]);
}

const char *vat_an_json_kind(const json_t *v)
{
    if (json_is_number(v))
        return "a number";
    if (json_is_string(v))
        return "a string";
    if (json_is_array(v))
        return "a list";
    if (!json_is_object(v))
        return "neither a number, a string, a list nor an object";
    size_t nums = 0, strs = 0, objs = 0, n = json_object_size(v);
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) {
        nums += json_is_number(x);
        strs += json_is_string(x);
        objs += json_is_object(x);
    }
    if (n && nums == n)
        return "an object of numbers";
    if (n && strs == n)
        return "an object of strings";
    if (n && objs == n)
        return "an object of objects";
    return n ? "an object of mixed values" : "an empty object";
}

int vat_an_gold_shape(const struct vat_task *t, const json_t *spec, const json_t *gold,
                      struct vat_err *e)
{
    const char *checker = json_string_value(json_object_get(spec, "checker"));
    if (!checker || strcmp(checker, "value") != 0)
        return 0;
    json_t *probe = json_deep_copy(spec);
    json_object_set(probe, "expected", (json_t *)gold);
    char *text = vat_json_dumps(gold);
    struct vat_verdict v = vat_check_value(probe, text, strlen(text));
    json_decref(probe);
    int rc = 0;
    if (strcmp(v.code, VAT_INTERNAL) == 0) {
        const char *shape = json_string_value(json_object_get(spec, "shape"));
        rc = vat_err_set(e,
                         "%s: gold %.80s is %s, but the checker spec's shape is '%s' (%s). Mend: "
                         "when the params change the answer's shape, build t->spec from "
                         "t->params (vat_an_value_spec with the shape reference gives)",
                         t->id, text, vat_an_json_kind(gold), shape ? shape : "(none)", v.reason);
    }
    free(text);
    return rc;
}

int vat_an_gold_from(struct vat_task *t, json_t *gold, const char *empty, struct vat_err *e)
{
    if (!gold)
        return -1;
    size_t n = json_is_array(gold) ? json_array_size(gold) : json_object_size(gold);
    if (empty && (json_is_array(gold) || json_is_object(gold)) && n == 0) {
        json_decref(gold);
        return vat_err_set(e, "%s: %s", t->id, empty);
    }
    if (vat_an_gold_shape(t, t->spec, gold, e) != 0) {
        json_decref(gold);
        return -1;
    }
    vat_an_set_gold(t, gold);
    return 0;
}

int vat_an_trap_from(struct vat_task *t, json_t *v)
{
    if (!v)
        return -1;
    vat_an_set_trap(t, v);
    return 0;
}

int vat_an_confirm_query(const struct vat_task *t, const struct vat_an_query *q, double rel_tol,
                         double abs_tol, struct vat_err *e)
{
    struct vat_err qe = {{0}};
    json_t *v = vat_an_csv_query(t, q->fi, q->table, q->types, q->blank_is_null, q->sql, q->kind,
                                 &qe);
    if (!v)
        return vat_err_set(e, "%s: confirm: %s", t->id, qe.msg);
    return vat_an_confirm_value(t, v, q->how ? q->how : "sql over the loaded csv", rel_tol,
                                  abs_tol, e);
}

int vat_an_confirm_value(const struct vat_task *t, json_t *derived, const char *how,
                         double rel_tol, double abs_tol, struct vat_err *e)
{
    int rc = vat_an_confirm_gold(t, derived, how, rel_tol, abs_tol, e);
    json_decref(derived);
    return rc;
}

json_t *vat_an_db_query(const struct vat_task *t, int fi, const struct vat_an_sanity *checks,
                        size_t n, const char *sql, enum vat_an_result kind, struct vat_err *e)
{
    if (fi < 0 || fi >= t->n_fixtures) {
        vat_err_set(e, "%s: no fixture %d", t->id, fi);
        return NULL;
    }
    const char *rel = t->fixture[fi].path;
    sqlite3 *file = NULL, *db = NULL;
    if (vat_sqlite_open_ro(t->root, rel, &file, e) != 0)
        return NULL;
    json_t *out = NULL;
    struct vat_err qe = {{0}};
    db = file;
    const struct vat_trapmods *d = t->tmpl->modules;
    if (t->trapmods && d && d->db_tables) {
        /* the armed modules' cleaning, on a copy in memory */
        sqlite3_backup *bk = NULL;
        db = NULL;
        if (sqlite3_open_v2(":memory:", &db,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                            NULL) != SQLITE_OK ||
            !(bk = sqlite3_backup_init(db, "main", file, "main")) ||
            sqlite3_backup_step(bk, -1) != SQLITE_DONE) {
            vat_err_set(e, "%s: '%s': cannot copy the database: %s", t->id, rel,
                        db ? sqlite3_errmsg(db) : "out of memory");
            sqlite3_backup_finish(bk);
            goto done;
        }
        sqlite3_backup_finish(bk);
        if (vat_trapmod_clean_db(t, db, e) != 0)
            goto done;
        /* a module's mistake may leave what the checks refuse (an order
         * whose customer's every history row was dropped): they guard
         * gold */
        if (t->trapmods_off)
            n = 0;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *bad = vat_an_sql_json(db, checks[i].sql, VAT_AN_NUMBER, &qe);
        if (!bad) {
            vat_err_set(e, "%s: '%s': %s", t->id, rel, qe.msg);
            goto done;
        }
        bool clean = json_is_integer(bad) && json_integer_value(bad) == 0;
        json_decref(bad);
        if (!clean) {
            vat_err_set(e, "%s: '%s': %s", t->id, rel, checks[i].what);
            goto done;
        }
    }
    out = vat_an_sql_json(db, sql, kind, &qe);
    if (!out)
        vat_err_set(e, "%s: '%s': %s", t->id, rel, qe.msg);
done:
    if (db != file)
        sqlite3_close(db);
    vat_sqlite_close_ro(file);
    return out;
}

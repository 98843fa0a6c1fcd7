/* sqlgen.c — shared machinery for the SQL templates: fixture sets (main
 * plus held-out variants), prompt rendering of schema and rows, the sql
 * checker spec, plain row reads and result comparison (see sqlgen.h). */
#include "sqlgen.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "prompt.h"
#include "values.h"
#include "template.h"
#include "trace.h"
#include "verifiers.h"

void vat_sqlgen_put_literal(struct vat_buf *b, const char *s)
{
    vat_buf_put_quoted(b, s, '\'');
}

/* Appends name as a double-quoted SQL identifier, so reads work whatever
 * the table is called. */
static void put_ident(struct vat_buf *b, const char *name)
{
    vat_buf_put_quoted(b, name, '"');
}

/* Prepares sql on db, a connection from vat_sqlite_open_ro (ended by
 * vat_sqlite_stmt_done: on the thread's shared connection it is compiled
 * once for the task's fixtures); 0 or -1 with e naming what failed. */
static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st, const char *rel,
                   struct vat_err *e)
{
    if (vat_sqlite_prepare_ro(db, sql, st) != SQLITE_OK)
        return vat_err_set(e, "vat: cannot read '%s': %s", rel, sqlite3_errmsg(db));
    return 0;
}

/* Counts the rows of every table and lists "table.column" names of the
 * fixture as written into f.  0 or -1. */
static int describe_fixture(const char *root, struct vat_fixture *f, const char *const *tables,
                            size_t ntables, struct vat_err *e)
{
    sqlite3 *db = NULL;
    if (vat_sqlite_open_ro(root, f->path, &db, e) != 0)
        return -1;
    int rc = 0;
    f->rows = 0;
    for (size_t i = 0; i < ntables && rc == 0; i++) {
        struct vat_buf q = VAT_BUF_INIT;
        sqlite3_stmt *st = NULL;
        vat_buf_puts(&q, "SELECT COUNT(*) FROM ");
        put_ident(&q, tables[i]);
        rc = prepare(db, q.data, &st, f->path, e);
        if (rc == 0 && sqlite3_step(st) == SQLITE_ROW)
            f->rows += (long)sqlite3_column_int64(st, 0);
        vat_sqlite_stmt_done(st);
        vat_buf_release(&q);
        if (rc != 0)
            break;

        vat_buf_puts(&q, "PRAGMA table_info(");
        put_ident(&q, tables[i]);
        vat_buf_putc(&q, ')');
        rc = prepare(db, q.data, &st, f->path, e);
        while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
            const char *col = (const char *)sqlite3_column_text(st, 1);
            char *full = vat_xasprintf("%s.%s", tables[i], col ? col : "");
            json_array_append_new(f->columns, json_string(full));
            free(full);
        }
        vat_sqlite_stmt_done(st);
        vat_buf_release(&q);
    }
    vat_sqlite_close_ro(db);
    return rc;
}

/* Writes one fixture of the set at rel with the given corner and stream
 * and adds it to the task (described by the caller). */
static int write_one(struct vat_task *t, const struct vat_sqlgen_set *s, const char *rel,
                     int corner, struct vat_rng *rng, const char *role, struct vat_err *e)
{
    struct vat_sqlw w;
    if (vat_sqlw_open(&w, t->root, rel, s->schema_sql, e) != 0)
        return -1;
    if (s->fill(s->ctx, rng, corner, &w, e) != 0) {
        /* A failed insert poisons the writer (w.db is gone) and keeps its
         * own message, which commit reports better than the fill can. */
        if (!w.db)
            vat_sqlw_commit(&w, e);
        else
            vat_sqlw_abort(&w);
        return -1;
    }
    if (vat_sqlw_commit(&w, e) != 0)
        return -1;
    vat_task_add_fixture(t, rel, "sqlite", role);
    return 0;
}

int vat_sqlgen_write_set(struct vat_task *t, struct vat_rng *rng, const struct vat_sqlgen_set *s,
                         struct vat_err *e)
{
    if (s->nvariants < 0 || s->nvariants + 1 > VAT_MAX_FIXTURES)
        return vat_err_set(e, "%s: %d variant fixtures do not fit", t->id, s->nvariants);
    int first = t->n_fixtures;
    char *rel = vat_task_fixture_relpath(t, ".sqlite");
    int rc = write_one(t, s, rel, 0, rng, "main", e);
    free(rel);
    for (int k = 1; k <= s->nvariants && rc == 0; k++) {
        char suffix[32], purpose[32];
        struct vat_rng vr;
        snprintf(suffix, sizeof suffix, ".v%d.sqlite", k);
        snprintf(purpose, sizeof purpose, "variant%d", k);
        vat_rng_stream(&vr, t->master_seed, t->tmpl ? t->tmpl->name : "task", t->index, purpose,
                       t->attempt, NULL);
        rel = vat_task_fixture_relpath(t, suffix);
        rc = write_one(t, s, rel, k, &vr, "variant", e);
        free(rel);
    }
    /* Described once all are written: the thread's shared connection then
     * turns from writer to reader once, not at every fixture (each turn
     * recompiles its statements), and each reading statement is compiled
     * once for the set. */
    for (int i = first; i < t->n_fixtures && rc == 0; i++)
        rc = describe_fixture(t->root, &t->fixture[i], s->tables, s->ntables, e);
    return rc;
}

/* ---- rendering ----------------------------------------------------------- */

/* Shortest fixed-point text that reads back as x ("12.5", "10.0",
 * "0.1"), so rendered money looks like money; %g's exponents only for
 * magnitudes where fixed point would be absurd. */
static void put_real(struct vat_buf *b, double x)
{
    char out[64];
    double ax = fabs(x);
    if (isfinite(x) && (ax == 0 || (ax >= 1e-6 && ax < 1e15))) {
        vat_fmt_fixed(x, 1, 20, out, sizeof out); /* the 20-digit text if none reads back */
        vat_buf_puts(b, out);
        return;
    }
    char num[32];
    vat_buf_puts(b, vat_fmt_real(x, num));
}

/* Appends column i of the current row of st as an SQL literal. */
static void put_value(struct vat_buf *b, sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER: {
        char d[24];
        vat_buf_puts(b, vat_fmt_int((long long)sqlite3_column_int64(st, i), 0, d));
        break;
    }
    case SQLITE_FLOAT:
        put_real(b, sqlite3_column_double(st, i));
        break;
    case SQLITE_TEXT:
        vat_sqlgen_put_literal(b, (const char *)sqlite3_column_text(st, i));
        break;
    case SQLITE_BLOB: {
        const unsigned char *p = sqlite3_column_blob(st, i);
        int n = sqlite3_column_bytes(st, i);
        vat_buf_puts(b, "X'");
        for (int k = 0; k < n; k++)
            vat_buf_printf(b, "%02X", p[k]);
        vat_buf_putc(b, '\'');
        break;
    }
    default:
        vat_buf_puts(b, "NULL");
    }
}

struct rendered_table {
    char *schema;
    char **line;   /* "(v1, v2, ...)" per row */
    size_t nlines;
    size_t bytes;  /* all lines with their indent and separator */
    size_t shown;
};

static void rendered_release(struct rendered_table *r)
{
    free(r->schema);
    for (size_t i = 0; i < r->nlines; i++)
        free(r->line[i]);
    free(r->line);
}

/* Each row line costs its text plus the indent and ",\n" around it. */
static size_t line_cost(const char *line)
{
    return strlen(line) + 4;
}

static int render_read(sqlite3 *db, const char *rel, const char *table, struct rendered_table *r,
                       struct vat_err *e)
{
    sqlite3_stmt *st = NULL;
    if (prepare(db, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1", &st, rel,
                e) != 0)
        return -1;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 0) != SQLITE_TEXT) {
        vat_sqlite_stmt_done(st);
        return vat_err_set(e, "vat: '%s' has no table '%s'", rel, table);
    }
    r->schema = vat_xstrdup((const char *)sqlite3_column_text(st, 0));
    vat_sqlite_stmt_done(st);

    struct vat_buf q = VAT_BUF_INIT;
    vat_buf_puts(&q, "SELECT * FROM ");
    put_ident(&q, table);
    int rc = prepare(db, q.data, &st, rel, e);
    vat_buf_release(&q);
    if (rc != 0)
        return -1;
    size_t cap = 0;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        struct vat_buf line = VAT_BUF_INIT;
        vat_buf_putc(&line, '(');
        for (int i = 0; i < sqlite3_column_count(st); i++) {
            if (i)
                vat_buf_puts(&line, ", ");
            put_value(&line, st, i);
        }
        vat_buf_putc(&line, ')');
        if (r->nlines == cap) {
            cap = cap ? 2 * cap : 64;
            r->line = vat_xrealloc(r->line, cap * sizeof *r->line);
        }
        r->line[r->nlines] = vat_buf_detach(&line);
        r->bytes += line_cost(r->line[r->nlines]);
        r->nlines++;
    }
    if (step != SQLITE_DONE)
        rc = vat_err_set(e, "vat: cannot read '%s': %s", rel, sqlite3_errmsg(db));
    vat_sqlite_stmt_done(st);
    return rc;
}

/* Shares max_bytes among the tables: a table that needs less than an even
 * share keeps all its rows and leaves the rest to the others (water
 * filling), so one long table cannot hide a short one. */
static void render_allot(struct rendered_table *r, size_t n, size_t max_bytes)
{
    size_t left = max_bytes, open = n;
    bool *done = vat_xcalloc(n ? n : 1, sizeof *done);
    for (bool changed = true; changed && open > 0;) {
        changed = false;
        size_t share = left / open;
        for (size_t i = 0; i < n; i++) {
            if (!done[i] && r[i].bytes <= share) {
                r[i].shown = r[i].nlines;
                left -= r[i].bytes;
                done[i] = true;
                open--;
                changed = true;
            }
        }
    }
    size_t share = open ? left / open : 0;
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        size_t used = 0, k = 0;
        while (k < r[i].nlines && used + line_cost(r[i].line[k]) <= share)
            used += line_cost(r[i].line[k++]);
        r[i].shown = k;
    }
    free(done);
}

int vat_sqlgen_render(const char *root, const char *rel, const char *const *tables,
                      size_t ntables, size_t max_bytes, struct vat_buf *b, bool *truncated,
                      struct vat_err *e)
{
    sqlite3 *db = NULL;
    if (vat_sqlite_open_ro(root, rel, &db, e) != 0)
        return -1;
    struct rendered_table *r = vat_xcalloc(ntables ? ntables : 1, sizeof *r);
    int rc = 0;
    for (size_t i = 0; i < ntables && rc == 0; i++)
        rc = render_read(db, rel, tables[i], &r[i], e);
    vat_sqlite_close_ro(db);

    if (rc == 0) {
        render_allot(r, ntables, max_bytes);
        bool cut = false;
        for (size_t i = 0; i < ntables; i++) {
            if (i)
                vat_buf_putc(b, '\n');
            vat_buf_printf(b, "%s;\n", r[i].schema);
            if (r[i].nlines == 0) {
                vat_buf_printf(b, "-- %s: no rows\n", tables[i]);
                continue;
            }
            if (r[i].shown == r[i].nlines) {
                vat_buf_printf(b, "-- %s: all %zu rows\n", tables[i], r[i].nlines);
            } else {
                cut = true;
                if (r[i].shown == 0) {
                    vat_buf_printf(b, "-- %s: %zu rows, none shown here (they are in the file)\n",
                                   tables[i], r[i].nlines);
                    continue;
                }
                vat_buf_printf(b,
                               "-- %s: the first %zu of %zu rows (the other %zu are in the "
                               "file)\n",
                               tables[i], r[i].shown, r[i].nlines, r[i].nlines - r[i].shown);
            }
            vat_buf_printf(b, "INSERT INTO %s VALUES\n", tables[i]);
            for (size_t k = 0; k < r[i].shown; k++)
                vat_buf_printf(b, "  %s%s\n", r[i].line[k], k + 1 < r[i].shown ? "," : ";");
        }
        if (truncated)
            *truncated = cut;
    }
    for (size_t i = 0; i < ntables; i++)
        rendered_release(&r[i]);
    free(r);
    return rc;
}

/* ---- spec, reads, runs, comparison ---------------------------------------- */

int vat_sqlgen_write_table(struct vat_task *t, struct vat_rng *rng, const char *schema_sql,
                           const char *const *table, vat_sqlgen_fill_fn fill, void *ctx,
                           struct vat_err *e)
{
    struct vat_sqlgen_set set = {
        .schema_sql = schema_sql,
        .tables = table,
        .ntables = 1,
        .nvariants = (int)vat_task_int(t, "variants"),
        .fill = fill,
        .ctx = ctx,
    };
    if (vat_sqlgen_write_set(t, rng, &set, e) != 0)
        return -1;
    t->spec = vat_sqlgen_spec(t, table, 1, true, 0.0, 0.0);
    return 0;
}

json_t *vat_sqlgen_spec(const struct vat_task *t, const char *const *tables, size_t ntables,
                        bool ordered, double rel_tol, double abs_tol)
{
    json_t *spec = json_object();
    json_t *fx = json_array(), *tb = json_array();
    for (int i = 0; i < t->n_fixtures; i++)
        json_array_append_new(fx, json_string(t->fixture[i].path));
    for (size_t i = 0; i < ntables; i++)
        json_array_append_new(tb, json_string(tables[i]));
    json_object_set_new(spec, "checker", json_string("sql"));
    json_object_set_new(spec, "dialect", json_string("sqlite"));
    json_object_set_new(spec, "fixtures", fx);
    json_object_set_new(spec, "tables", tb);
    json_object_set_new(spec, "ordered", json_boolean(ordered));
    json_object_set_new(spec, "rel_tol", json_real(rel_tol));
    json_object_set_new(spec, "abs_tol", json_real(abs_tol));
    json_object_set_new(spec, "step_budget", json_integer(VAT_SQLGEN_STEP_BUDGET));
    json_object_set_new(spec, "max_rows", json_integer(VAT_SQLGEN_MAX_ROWS));
    json_object_set_new(spec, "max_bytes", json_integer(VAT_SQLGEN_MAX_BYTES));
    return spec;
}

/* Opens root/rel (the kept reader, vat_sqlite_open_ro) with SELECT * of
 * table prepared on it.  0, or -1 with e set and nothing open. */
static int table_select(const char *root, const char *rel, const char *table, sqlite3 **db,
                        sqlite3_stmt **st, struct vat_err *e)
{
    vat_trace_note("table rows", table);
    if (vat_sqlite_open_ro(root, rel, db, e) != 0)
        return -1;
    struct vat_buf q = VAT_BUF_INIT;
    vat_buf_puts(&q, "SELECT * FROM ");
    put_ident(&q, table);
    int rc = prepare(*db, q.data, st, rel, e);
    vat_buf_release(&q);
    if (rc != 0) {
        vat_sqlite_close_ro(*db);
        *db = NULL;
    }
    return rc;
}

/* Ends a table_select read: step is the last sqlite3_step's code
 * (SQLITE_DONE when it read every row, or when the caller stopped it and
 * has set e itself). */
static int table_done(sqlite3 *db, sqlite3_stmt *st, int step, const char *rel,
                      struct vat_err *e)
{
    int rc = step == SQLITE_DONE
                 ? 0
                 : vat_err_set(e, "vat: cannot read '%s': %s", rel, sqlite3_errmsg(db));
    vat_sqlite_stmt_done(st);
    vat_sqlite_close_ro(db);
    return rc;
}

json_t *vat_sqlgen_read_table(const char *root, const char *rel, const char *table,
                              json_t **columns, struct vat_err *e)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    if (table_select(root, rel, table, &db, &st, e) != 0)
        return NULL;
    int ncol = sqlite3_column_count(st);
    if (columns) {
        *columns = json_array();
        for (int i = 0; i < ncol; i++)
            json_array_append_new(*columns, json_string(sqlite3_column_name(st, i)));
    }
    json_t *rows = json_array();
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *row = json_array();
        for (int i = 0; i < ncol; i++) {
            json_t *v;
            switch (sqlite3_column_type(st, i)) {
            case SQLITE_INTEGER: v = json_integer(sqlite3_column_int64(st, i)); break;
            case SQLITE_FLOAT: v = json_real(sqlite3_column_double(st, i)); break;
            case SQLITE_NULL: v = json_null(); break;
            default: {
                const char *p = (const char *)sqlite3_column_blob(st, i);
                v = json_stringn_nocheck(p ? p : "", (size_t)sqlite3_column_bytes(st, i));
            }
            }
            json_array_append_new(row, v);
        }
        json_array_append_new(rows, row);
    }
    if (table_done(db, st, step, rel, e) != 0) {
        json_decref(rows);
        rows = NULL;
        if (columns) {
            json_decref(*columns);
            *columns = NULL;
        }
    }
    return rows;
}

int vat_sqlgen_scan_table(const char *root, const char *rel, const char *table,
                          const char *const *want, int nwant, vat_sqlgen_row_fn fn, void *ctx,
                          struct vat_err *e)
{
    enum { MAX_WANT = 16 };
    if (nwant < 0 || nwant > MAX_WANT)
        return vat_err_set(e, "vat: %d columns asked of table '%s' (at most %d)", nwant, table,
                           MAX_WANT);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    if (table_select(root, rel, table, &db, &st, e) != 0)
        return -1;
    int col[MAX_WANT];
    int ncol = sqlite3_column_count(st);
    for (int w = 0; w < nwant; w++) {
        col[w] = -1;
        for (int i = 0; i < ncol && col[w] < 0; i++) {
            const char *name = sqlite3_column_name(st, i);
            if (name && strcmp(name, want[w]) == 0)
                col[w] = i;
        }
        if (col[w] < 0) {
            table_done(db, st, SQLITE_DONE, rel, e);
            return vat_err_set(e, "vat: '%s' lacks the column '%s' of table '%s'", rel, want[w],
                               table);
        }
    }
    struct vat_sqlgen_cell cell[MAX_WANT];
    size_t row = 0;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        for (int w = 0; w < nwant; w++) {
            struct vat_sqlgen_cell *c = &cell[w];
            *c = (struct vat_sqlgen_cell){.type = sqlite3_column_type(st, col[w])};
            switch (c->type) {
            case SQLITE_INTEGER: c->i = sqlite3_column_int64(st, col[w]); break;
            case SQLITE_FLOAT: c->d = sqlite3_column_double(st, col[w]); break;
            case SQLITE_TEXT:
            case SQLITE_BLOB: {
                /* text of a blob is its bytes, NUL-terminated */
                const char *p = (const char *)sqlite3_column_text(st, col[w]);
                c->n = (size_t)sqlite3_column_bytes(st, col[w]);
                c->s = p ? p : "";
                break;
            }
            default: break;
            }
        }
        if (fn(ctx, row++, cell, e) != 0) {
            table_done(db, st, SQLITE_DONE, rel, e);
            return -1;
        }
    }
    return table_done(db, st, step, rel, e);
}

int vat_sqlgen_col(const json_t *columns, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(columns, i, c) {
        const char *s = json_string_value(c);
        if (s && strcmp(s, name) == 0)
            return (int)i;
    }
    return -1;
}

json_t *vat_sqlgen_run_all(const struct vat_task *t, const char *query, struct vat_err *e)
{
    json_t *all = json_array();
    vat_trace_note("sql", query);
    for (int i = 0; i < t->n_fixtures; i++) {
        struct vat_verdict v;
        json_t *rows = vat_sql_run(t->spec, t->root, t->fixture[i].path, query, strlen(query), &v);
        if (!rows) {
            vat_err_set(e, "%s: query failed on '%s' (%s: %s)", t->id, t->fixture[i].path,
                        v.code ? v.code : "?", v.reason);
            json_decref(all);
            return NULL;
        }
        json_array_append_new(all, rows);
    }
    return all;
}

static bool value_equal(const json_t *a, const json_t *b, double rel_tol, double abs_tol)
{
    if (json_is_number(a) && json_is_number(b))
        return vat_close(json_number_value(a), json_number_value(b), rel_tol, abs_tol);
    if (json_is_string(a) && json_is_string(b))
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    if (json_is_null(a) || json_is_null(b))
        return json_is_null(a) && json_is_null(b);
    return json_equal((json_t *)a, (json_t *)b);
}

static bool row_equal(const json_t *a, const json_t *b, double rel_tol, double abs_tol)
{
    if (json_array_size(a) != json_array_size(b))
        return false;
    for (size_t i = 0; i < json_array_size(a); i++)
        if (!value_equal(json_array_get(a, i), json_array_get(b, i), rel_tol, abs_tol))
            return false;
    return true;
}

/* Writes "what: want <row> got <row>" into why, each row as JSON. */
static void describe_rows(char *why, size_t cap, const char *what, const json_t *want,
                          const json_t *got)
{
    if (!why || cap == 0)
        return;
    char *w = want ? vat_json_dumps(want) : vat_xstrdup("none");
    char *g = got ? vat_json_dumps(got) : vat_xstrdup("none");
    snprintf(why, cap, "%s: want %s, got %s", what, w, g);
    free(w);
    free(g);
}

bool vat_sqlgen_rows_equal(const json_t *want, const json_t *got, bool ordered, double rel_tol,
                           double abs_tol, char *why, size_t cap)
{
    size_t n = json_array_size(want), m = json_array_size(got);
    if (n != m) {
        if (why && cap)
            snprintf(why, cap, "%zu rows expected, %zu returned", n, m);
        return false;
    }
    if (ordered) {
        for (size_t i = 0; i < n; i++) {
            const json_t *a = json_array_get(want, i), *b = json_array_get(got, i);
            if (!row_equal(a, b, rel_tol, abs_tol)) {
                char what[48];
                snprintf(what, sizeof what, "row %zu differs", i + 1);
                describe_rows(why, cap, what, a, b);
                return false;
            }
        }
        return true;
    }
    /* Multiset: each wanted row claims the first unclaimed equal row. */
    bool *used = vat_xcalloc(n ? n : 1, sizeof *used);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const json_t *a = json_array_get(want, i);
        size_t k = 0;
        while (k < n && (used[k] || !row_equal(a, json_array_get(got, k), rel_tol, abs_tol)))
            k++;
        if (k == n) {
            describe_rows(why, cap, "a row is missing", a, NULL);
            ok = false;
        } else {
            used[k] = true;
        }
    }
    free(used);
    return ok;
}

int vat_sqlgen_variants_differ(const struct vat_task *t, const json_t *results, bool ordered,
                               double rel_tol, double abs_tol, struct vat_err *e)
{
    const json_t *main_rows = json_array_get(results, 0);
    for (size_t i = 1; i < json_array_size(results) && (int)i < t->n_fixtures; i++)
        if (vat_sqlgen_rows_equal(main_rows, json_array_get(results, i), ordered, rel_tol,
                                  abs_tol, NULL, 0))
            return vat_err_set(e, "%s: variant '%s' gives the same rows as the main fixture",
                               t->id, t->fixture[i].path);
    return 0;
}

int vat_sqlgen_confirm(const struct vat_task *t, vat_sqlgen_derive_fn derive,
                       const void *question, double rel_tol, double abs_tol, struct vat_err *e)
{
    bool ordered = json_is_true(json_object_get(t->spec, "ordered"));
    for (int i = 0; i < t->n_fixtures; i++) {
        const char *rel = t->fixture[i].path;
        json_t *want = derive(question, t->root, rel, e);
        if (!want)
            return -1;
        struct vat_verdict v;
        json_t *got = vat_sql_run(t->spec, t->root, rel, t->gold, strlen(t->gold), &v);
        if (!got) {
            json_decref(want);
            return vat_err_set(e, "%s: gold failed on '%s' (%s: %s)", t->id, rel, v.code,
                               v.reason);
        }
        char why[200];
        bool same = vat_sqlgen_rows_equal(want, got, ordered, rel_tol, abs_tol, why, sizeof why);
        json_decref(want);
        json_decref(got);
        if (!same)
            return vat_err_set(e, "%s: row reads disagree with gold on '%s': %s", t->id, rel,
                               why);
    }
    return 0;
}

int vat_sqlgen_set_trap(struct vat_task *t, char *trap_sql, double rel_tol, double abs_tol,
                        struct vat_err *e)
{
    bool ordered = json_is_true(json_object_get(t->spec, "ordered"));
    struct vat_verdict v;
    const char *rel = t->fixture[0].path;
    json_t *g = vat_sql_run(t->spec, t->root, rel, t->gold, strlen(t->gold), &v);
    json_t *tr = g ? vat_sql_run(t->spec, t->root, rel, trap_sql, strlen(trap_sql), &v) : NULL;
    int rc = 0;
    if (!g || !tr)
        rc = vat_err_set(e, "%s: trap query failed on '%s' (%s: %s)", t->id, rel, v.code,
                         v.reason);
    else if (vat_sqlgen_rows_equal(g, tr, ordered, rel_tol, abs_tol, NULL, 0))
        rc = vat_err_set(e, "%s: trap not armed on '%s'", t->id, rel);
    json_decref(g);
    json_decref(tr);
    if (rc != 0) {
        free(trap_sql);
        return -1;
    }
    free(t->trap);
    t->trap = trap_sql;
    return 0;
}

/* ---- customers and their orders (the order-count templates) -------------- */

void vat_sqlgen_add_order(struct vat_sqlgen_plan *p, struct vat_rng *rng, int cust, int32_t day)
{
    if (p->no == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 64;
        p->o = vat_xrealloc(p->o, p->cap * sizeof *p->o);
    }
    struct vat_sqlgen_ord *o = &p->o[p->no];
    memset(o, 0, sizeof *o);
    o->cust = cust;
    o->day = day;
    o->secs = (int32_t)vat_rng_range(rng, 7 * 3600, 22 * 3600 + 1800);
    o->channel = (int)vat_rng_below(rng, (uint32_t)p->n_channels);
    o->cents = vat_gen_cents(rng, 799, 48000);
    o->seq = (int)p->no;
    p->no++;
}

int32_t vat_sqlgen_draw_day(const struct vat_sqlgen_plan *p, struct vat_rng *rng, bool want_in)
{
    const struct vat_sqlgen_window *w = &p->w;
    for (int tries = 0; tries < 200; tries++) {
        int32_t d = (int32_t)vat_rng_range(rng, w->span_lo, w->span_hi);
        if (w->none || (d >= w->lo && d <= w->hi) == want_in)
            return d;
    }
    /* A narrow window: take its edge or the day next to it. */
    if (want_in)
        return w->lo != INT32_MIN ? w->lo : w->hi;
    return w->lo != INT32_MIN ? w->lo - 1 : w->hi + 1;
}

int64_t vat_sqlgen_side_id(int side, bool coded, const char *prefix, int64_t id)
{
    return coded ? vat_side_next_id(side, prefix, 5, (long)id)
                 : vat_side_next_id(side, "", 0, (long)id);
}

void vat_sqlgen_draw_customers(struct vat_sqlgen_plan *p, bool coded, const char *prefix,
                               int side, struct vat_rng *rng, size_t nc)
{
    p->nc = nc;
    p->c = vat_xcalloc(nc, sizeof *p->c);
    int64_t id = coded ? vat_rng_range(rng, 10, 4000) : vat_rng_range(rng, 1, 900);
    size_t ncity;
    const char *const *cities = vat_words("city", &ncity);
    for (size_t i = 0; i < nc; i++) {
        id += vat_rng_range(rng, 1, 9);
        id = vat_sqlgen_side_id(side, coded, prefix, id);
        p->c[i].num = id;
        vat_gen_person(rng, p->c[i].name, sizeof p->c[i].name);
        p->c[i].city =
            vat_rng_chance(rng, 0.1) ? NULL : cities[vat_rng_below(rng, (uint32_t)ncity)];
        p->c[i].signup = (int32_t)vat_rng_range(rng, p->w.span_lo - 900, p->w.span_lo + 300);
    }
    /* Names are not unique: grouping by name would merge two customers. */
    size_t a = vat_rng_below(rng, (uint32_t)nc), b = vat_rng_below(rng, (uint32_t)(nc - 1));
    if (b >= a)
        b++;
    memcpy(p->c[b].name, p->c[a].name, sizeof p->c[b].name);
}

size_t vat_sqlgen_boundary_days(const struct vat_sqlgen_plan *p, int32_t out[4])
{
    const struct vat_sqlgen_window *w = &p->w;
    size_t n = 0;
    if (w->lo != INT32_MIN) {
        out[n++] = w->lo - 1;
        out[n++] = w->lo;
    }
    if (w->hi != INT32_MAX) {
        out[n++] = w->hi;
        out[n++] = w->hi + 1;
    }
    return n;
}

int64_t vat_sqlgen_unknown_id(const struct vat_sqlgen_plan *p, struct vat_rng *rng)
{
    for (int tries = 0; tries < 50; tries++) {
        size_t i = vat_rng_below(rng, (uint32_t)p->nc);
        int64_t cand = p->c[i].num + 1;
        if (i + 1 == p->nc || p->c[i + 1].num != cand)
            return cand;
    }
    return p->c[p->nc - 1].num + 1;
}

int vat_sqlgen_accept_gold(struct vat_task *t, char *gold, bool ordered, double rel_tol,
                           double abs_tol, struct vat_err *e)
{
    /* The admission check reads the query from the spec. */
    json_object_set_new(t->spec, "reference_sql", json_string(gold));
    struct vat_err ae;
    if (vat_sql_gold_admissible(t->spec, t->root, &ae) != 0) {
        vat_err_set(e, "%s: %s", t->id, ae.msg);
        free(gold);
        return -1;
    }
    json_t *results = vat_sqlgen_run_all(t, gold, e);
    int rc = results ? vat_sqlgen_variants_differ(t, results, ordered, rel_tol, abs_tol, e) : -1;
    json_decref(results);
    if (rc != 0) {
        free(gold);
        return -1;
    }
    t->gold = gold;
    return 0;
}

void vat_sqlgen_mark_roles(int *roles, size_t nc, struct vat_rng *rng, size_t k, int r)
{
    for (size_t done = 0, tries = 0; done < k && tries < 1000; tries++) {
        size_t i = vat_rng_below(rng, (uint32_t)nc);
        if (roles[i] == 0) {
            roles[i] = r;
            done++;
        }
    }
}

int vat_sqlgen_cmp_order(const void *a, const void *b)
{
    const struct vat_sqlgen_ord *x = a, *y = b;
    if (x->day != y->day)
        return x->day < y->day ? -1 : 1;
    if (x->secs != y->secs)
        return x->secs < y->secs ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

void vat_sqlgen_fmt_key(bool coded, const char *prefix, int64_t num, char out[32])
{
    if (coded)
        snprintf(out, 32, "%s%05lld", prefix, (long long)num);
    else
        snprintf(out, 32, "%lld", (long long)num);
}

int vat_sqlgen_insert_customer(struct vat_sqlw *w, const char *stmt, bool coded,
                               const char *prefix, const struct vat_sqlgen_cust *c)
{
    char key[32], signup[11];
    vat_fmt_date(c->signup, signup);
    if (coded) {
        vat_sqlgen_fmt_key(coded, prefix, c->num, key);
        return vat_sqlw_insert(w, stmt, "tttt", key, c->name, c->city, signup);
    }
    return vat_sqlw_insert(w, stmt, "ittt", c->num, c->name, c->city, signup);
}

/* ---- the order-count templates' second derivation ---------------------------- */

struct count_tally {
    const json_t *key, *name;
    long count;
};

static int cmp_key(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        return (x > y) - (x < y);
    }
    const char *x = json_string_value(a), *y = json_string_value(b);
    return strcmp(x ? x : "", y ? y : "");
}

static bool same_key(const json_t *a, const json_t *b)
{
    if (!a || !b || json_is_null(a) || json_is_null(b))
        return false;
    if (json_is_integer(a) != json_is_integer(b))
        return false;
    return cmp_key(a, b) == 0;
}

/* One comparator per ordering of the rows (qsort takes no context). */
static int cmp_id_asc(const void *a, const void *b)
{
    return cmp_key(((const struct count_tally *)a)->key, ((const struct count_tally *)b)->key);
}

static int cmp_id_desc(const void *a, const void *b)
{
    return -cmp_id_asc(a, b);
}

static int cmp_count_desc(const void *a, const void *b)
{
    const struct count_tally *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return cmp_id_asc(a, b);
}

static int cmp_count_asc(const void *a, const void *b)
{
    const struct count_tally *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? -1 : 1;
    return cmp_id_asc(a, b);
}

/* Day number of the 'YYYY-MM-DD' that starts s, or INT32_MIN. */
static int32_t day_of(const char *s)
{
    char d[11];
    int32_t days;
    if (!s || strlen(s) < 10)
        return INT32_MIN;
    memcpy(d, s, 10);
    d[10] = 0;
    return vat_parse_date(d, &days) == 0 ? days : INT32_MIN;
}

json_t *vat_sqlgen_count_orders(const struct vat_sqlgen_count_query *q, const char *root,
                                const char *rel, struct vat_err *e)
{
    json_t *ccols = NULL, *ocols = NULL;
    json_t *crows = vat_sqlgen_read_table(root, rel, q->ctable, &ccols, e);
    json_t *orows = crows ? vat_sqlgen_read_table(root, rel, q->otable, &ocols, e) : NULL;
    json_t *out = NULL;
    if (!orows)
        goto done;
    int ck = vat_sqlgen_col(ccols, q->key), cn = vat_sqlgen_col(ccols, q->name_col),
        of = vat_sqlgen_col(ocols, q->fk), od = vat_sqlgen_col(ocols, q->date_col),
        os = q->status_col ? vat_sqlgen_col(ocols, q->status_col) : 0;
    if (ck < 0 || cn < 0 || of < 0 || od < 0 || os < 0) {
        vat_err_set(e, "vat: '%s' lacks a column the question names", rel);
        goto done;
    }
    size_t nc = json_array_size(crows);
    struct count_tally *tl = vat_xcalloc(nc + 1, sizeof *tl);
    for (size_t i = 0; i < nc; i++) {
        tl[i].key = json_array_get(json_array_get(crows, i), (size_t)ck);
        tl[i].name = json_array_get(json_array_get(crows, i), (size_t)cn);
    }
    size_t i;
    json_t *row;
    json_array_foreach(orows, i, row) {
        const json_t *fk = json_array_get(row, (size_t)of);
        int32_t day = day_of(json_string_value(json_array_get(row, (size_t)od)));
        if (day == INT32_MIN) {
            vat_err_set(e, "vat: '%s' has an order without a readable date", rel);
            free(tl);
            goto done;
        }
        if (day < q->lo || day > q->hi)
            continue;
        if (q->status_col) {
            const char *st = json_string_value(json_array_get(row, (size_t)os));
            if (!st || strcmp(st, "paid") != 0)
                continue;
        }
        for (size_t k = 0; k < nc; k++)
            if (same_key(fk, tl[k].key)) {
                tl[k].count++;
                break;
            }
    }
    static int (*const cmps[])(const void *, const void *) = {cmp_id_asc, cmp_id_desc,
                                                              cmp_count_desc, cmp_count_asc};
    qsort(tl, nc, sizeof *tl, cmps[q->order]);
    out = json_array();
    for (size_t k = 0; k < nc; k++) {
        json_t *r = json_array();
        json_array_append(r, (json_t *)tl[k].key);
        if (q->with_name)
            json_array_append(r, (json_t *)tl[k].name);
        json_array_append_new(r, json_integer(tl[k].count));
        json_array_append_new(out, r);
    }
    free(tl);
done:
    json_decref(ccols);
    json_decref(ocols);
    json_decref(crows);
    json_decref(orows);
    return out;
}

/* ---- the family's prompt sentences ----------------------------------------- */

static const char count_columns_explicit[] =
    "[[Return|The result has|It must return]] exactly {n} columns, [[in this order|in "
    "order|as follows]]:\n"
    "1. `{key}`: [[the customer's id, as stored|the customer id as stored|the id of the "
    "customer, as stored]];\n{name}"
    "{n}. `{count}`: [[the number of orders, an integer|the order count, an integer|how "
    "many orders, as an integer]].\n"
    "[[One row per customer|A row for each customer|Each customer on one row]], "
    "[[ordered|sorted]] by {order}.\n";
static const char count_columns_natural[] =
    "[[Return|I'd like|Give me]] {n} columns, [[in this order|in order|as follows]]:\n"
    "1. `{key}`: [[the customer's id, as stored|the customer id as stored|the id of the "
    "customer, as stored]];\n{name}"
    "{n}. `{count}`: [[the number of orders, an integer|how many orders, an integer|the "
    "order count, an integer]].\n"
    "[[One row per customer|A row for each customer|Each customer on one row]], "
    "[[ordered|sorted]] by {order}.\n";

void vat_sqlgen_prompt_count_columns(struct vat_buf *b, struct vat_task *t,
                                     const struct vat_sqlgen_count_query *c,
                                     const char *count_name)
{
    char n[4], *name = NULL, *order = NULL;
    snprintf(n, sizeof n, "%d", c->with_name ? 3 : 2);
    name = c->with_name ? vat_xasprintf("2. `%s`: [[the customer's name|the name of the "
                                        "customer|their name]];\n",
                                        c->name_col)
                        : vat_xstrdup("");
    switch (c->order) {
    case VAT_SQLGEN_ID_ASC: order = vat_xasprintf("`%s` ascending", c->key); break;
    case VAT_SQLGEN_ID_DESC: order = vat_xasprintf("`%s` descending", c->key); break;
    case VAT_SQLGEN_COUNT_DESC:
        order = vat_xasprintf("`%s` descending (most orders first), ties by `%s` ascending",
                              count_name, c->key);
        break;
    default:
        order = vat_xasprintf("`%s` ascending (fewest orders first), ties by `%s` ascending",
                              count_name, c->key);
        break;
    }
    /* the name's line is grammar: realised first */
    char *name_said = vat_prompt_text(t, 'o', name, NULL);
    const char *kv[] = {"n", n, "key", c->key, "name", name_said, "count", count_name,
                        "order", order, NULL};
    vat_prompt_say(b, t, 'o', vat_prompt_natural(t) ? count_columns_natural
                                                     : count_columns_explicit, kv);
    free(name_said);
    free(name);
    free(order);
}

static const char held_explicit[] =
    "[[The query is also run on other databases with the same schema and different "
    "rows|The same query also runs on held-out databases with the same schema and other "
    "rows|Other databases with the same schema and different rows are queried too|It is also "
    "run against other databases of the same schema with different rows]], so it must "
    "[[compute the result from the data|work the result out from the data|derive the result "
    "from the data]], [[not list values|not list the values|never list values]].\n\n";
static const char answer_explicit[] =
    "[[Answer with one SQL SELECT statement (SQLite dialect) and nothing else: no prose, no "
    "Markdown fence|Reply with exactly one SQL SELECT statement (SQLite dialect), without "
    "prose or a Markdown fence|Give one SQL SELECT statement (SQLite dialect) as the whole "
    "answer: no explanation, no fence|Your answer is one SQL SELECT statement in the SQLite "
    "dialect, alone: no prose, no Markdown|Return one SQL SELECT statement (SQLite dialect) "
    "and nothing around it]]; [[a trailing semicolon|the final semicolon|a semicolon at the "
    "end]] is optional.\n";
static const char held_natural[] =
    "[[It will also run|We will run it too|The same query runs|We reuse it]] on other "
    "databases with the same schema and [[different|other|new]] rows, so it [[has to|must|"
    "should]] [[compute the result from the data|work the result out from the data|derive "
    "the result from the data]][[, not list values| rather than list values| instead of "
    "listing values]].\n\n";
static const char answer_natural[] =
    "[[Reply with just the SQLite SELECT statement, no explanation or fence|Send me only the "
    "SELECT query (SQLite) as your answer, nothing around it|Answer with one SQLite SELECT and "
    "nothing else|Just the SQL in your reply, please: a single SQLite SELECT statement, no "
    "prose|In your answer I only need the SELECT statement (SQLite)]].\n";

/* The opening sentence of an SQL task: the database file, what its
 * tables hold ({what}, grammar of the template) and how much of them is
 * shown ({rows}: "all the rows", "the leading rows of each table"). */
static const char intro_text[] =
    "[[The SQLite database file|The SQLite file|The database file]] `{path}` holds {what}. "
    "[[The schema and {rows}|Its schema and {rows}|Here are the schema and {rows}]]:\n\n";

void vat_sqlgen_prompt_intro(struct vat_buf *b, struct vat_task *t, const char *what,
                             const char *rows)
{
    struct vat_buf w = VAT_BUF_INIT;
    vat_prompt_say(&w, t, 'i', what, NULL);
    const char *kv[] = {"path", t->fixture[0].path, "what", w.data, "rows", rows, NULL};
    vat_prompt_say(b, t, 'i', intro_text, kv);
    vat_buf_release(&w);
}

int vat_sqlgen_prompt_data(struct vat_buf *b, struct vat_task *t, const char *const *tables,
                           size_t ntables, const char *what, struct vat_err *e)
{
    struct vat_buf data = VAT_BUF_INIT;
    bool cut = false;
    if (vat_sqlgen_render(t->root, t->fixture[0].path, tables, ntables, vat_task_inline_cap(t),
                          &data, &cut, e) != 0) {
        vat_buf_release(&data);
        return -1;
    }
    t->self_contained = true;
    vat_sqlgen_prompt_intro(b, t, what, cut ? "the leading rows" : "all the rows");
    vat_buf_putn(b, data.data, data.len);
    if (cut)
        vat_buf_puts(b, "\nOnly the leading rows fit here; the full table is in the file.\n");
    vat_buf_release(&data);
    vat_buf_puts(b, "\n");
    return 0;
}

void vat_sqlgen_prompt_close(struct vat_buf *b, struct vat_task *t)
{
    bool nat = vat_prompt_natural(t);
    vat_prompt_say(b, t, 'h', nat ? held_natural : held_explicit, NULL);
    vat_prompt_say(b, t, 'a', nat ? answer_natural : answer_explicit, NULL);
}

/* expert.c — a task as a tool-use environment (see expert.h).
 *
 * How a main fixture loads (the env spec of lib/episode.h):
 *   - a SQLite database as it is, its tables by their names;
 *   - an analytics CSV in its program form as the prompt's CREATE TABLE
 *     says (the spec's "load"); in its value form under the names its
 *     program form would spell (progform.h), with the same declared types;
 *   - a workbook's table (params.workbook: sheet and range of the data
 *     rows) under those names too, a join template's lookup sheet beside
 *     it; the column names are the header's, above the range;
 *   - anything else (the probes) with its header's names made plain SQL
 *     identifiers (lower case, '_' for other bytes; a name seen before gets
 *     _2, _3, ... in file order; two header lines join as group_column),
 *     the lines above the header as a notes table, and declared types read
 *     from the cells (INTEGER when every cell is an integer, REAL when a
 *     number, else TEXT).
 * Everything here is a function of the task, so the env table is as
 * deterministic as the others. */
#include "expert.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "csvio.h"
#include "episode.h"
#include "jsonout.h"
#include "progform.h"
#include "template.h"
#include "verifiers.h"
#include "xlsxio.h"

/* ---- column names and types ------------------------------------------------ */

static bool ident_plain(const char *s)
{
    if (!s || !*s || strlen(s) > 60 || !(isalpha((unsigned char)*s) || *s == '_'))
        return false;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return false;
    return true;
}

/* A plain identifier for header text s (new string). */
static char *ident_of(const char *s, size_t k)
{
    if (ident_plain(s))
        return vat_xstrdup(s);
    struct vat_buf b = VAT_BUF_INIT;
    bool sep = false;
    for (const char *p = s; p && *p && b.len < 60; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c)) {
            if (sep && b.len)
                vat_buf_putc(&b, '_');
            sep = false;
            vat_buf_putc(&b, (char)tolower(c));
        } else {
            sep = true;
        }
    }
    if (!b.len)
        vat_buf_printf(&b, "column_%zu", k + 1);
    else if (isdigit((unsigned char)b.data[0])) {
        char *x = vat_buf_detach(&b);
        vat_buf_printf(&b, "c_%s", x);
        free(x);
    }
    return vat_buf_detach(&b);
}

/* names[k] made unique: the second of a name is name_2, and so on. */
static void idents_dedupe(char **names, size_t n)
{
    char **orig = vat_xcalloc(n ? n : 1, sizeof *orig);
    for (size_t k = 0; k < n; k++)
        orig[k] = vat_xstrdup(names[k]);
    for (size_t k = 0; k < n; k++) {
        int seen = 1;
        for (size_t j = 0; j < k; j++)
            if (strcmp(orig[j], orig[k]) == 0)
                seen++;
        if (seen > 1) {
            char *x = vat_xasprintf("%s_%d", orig[k], seen);
            free(names[k]);
            names[k] = x;
        }
    }
    for (size_t k = 0; k < n; k++)
        free(orig[k]);
    free(orig);
}

static bool cell_integer(const char *s)
{
    const char *p = s;
    if (*p == '-')
        p++;
    if (!isdigit((unsigned char)*p) || (p[0] == '0' && p[1]) || strlen(p) > 15)
        return false;
    for (; *p; p++)
        if (!isdigit((unsigned char)*p))
            return false;
    return true;
}

static bool cell_number(const char *s)
{
    const char *p = s;
    if (*p == '-')
        p++;
    if (!isdigit((unsigned char)*p) || (p[0] == '0' && isdigit((unsigned char)p[1])))
        return false;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return *p == 0 && strlen(s) <= 20;
}

/* The declared type cells read as: INTEGER, REAL or TEXT (all empty: TEXT). */
struct type_guess {
    bool any, all_int, all_num;
};
static void guess_add(struct type_guess *g, const char *s)
{
    if (!s || !*s)
        return;
    if (!g->any) {
        g->any = true;
        g->all_int = g->all_num = true;
    }
    g->all_int = g->all_int && cell_integer(s);
    g->all_num = g->all_num && cell_number(s);
}
static const char *guess_type(const struct type_guess *g)
{
    return !g->any ? "TEXT" : g->all_int ? "INTEGER" : g->all_num ? "REAL" : "TEXT";
}

/* A table spec {"name", "columns", ...} with names and types. */
static json_t *table_spec(const char *name, char *const *cols, const char *const *types,
                          size_t n)
{
    json_t *t = json_object(), *c = json_array();
    json_object_set_new(t, "name", json_string(name));
    for (size_t k = 0; k < n; k++)
        json_array_append_new(c, json_pack("[s,s]", cols[k], types[k]));
    json_object_set_new(t, "columns", c);
    return t;
}

/* The declared type of column name by the program form's list, or NULL. */
static const char *pf_type(const struct vat_progform *pf, const char *name)
{
    for (size_t k = 0; pf && pf->columns && k < pf->ncols; k++)
        if (strcmp(pf->columns[k], name) == 0)
            return pf->types[k];
    return NULL;
}

/* ---- the env spec ---------------------------------------------------------- */

/* What the builder knows about a task's environment beside its spec. */
struct env_build {
    json_t *spec;
    const char *tool_set;
    struct vat_buf how; /* how the fixture loads, for the agent prompt */
    /* the program-form names (analytics), else unset */
    bool have_names;
    struct vat_pf_names names;
    /* probes: the table and the measure column an expert sums */
    char table[80];
    char measure[80];
};

/* A CSV table from header record hdr (data after it) of c: names from
 * the header (or, with two header records, group row g joined), types
 * from pf or the cells.  new spec. */
static json_t *csv_table(const struct vat_csv *c, size_t hdr, long grow, const char *name,
                         const struct vat_progform *pf, bool keep_names)
{
    size_t n = c->row[hdr].n;
    char **cols = vat_xcalloc(n, sizeof *cols);
    const char **types = vat_xcalloc(n, sizeof *types);
    char carry[128] = "";
    for (size_t k = 0; k < n; k++) {
        const char *sub = vat_csv_get(c, hdr, k);
        if (grow >= 0) {
            const char *g = vat_csv_get(c, (size_t)grow, k);
            if (!*sub) { /* a name on the group row alone, no group under it */
                cols[k] = ident_of(g, k);
                carry[0] = 0;
                continue;
            }
            if (*g)
                snprintf(carry, sizeof carry, "%s", g);
            if (carry[0]) {
                char *joined = vat_xasprintf("%s %s", carry, sub);
                cols[k] = ident_of(joined, k);
                free(joined);
                continue;
            }
        }
        cols[k] = keep_names && ident_plain(sub) ? vat_xstrdup(sub) : ident_of(sub, k);
    }
    idents_dedupe(cols, n);
    for (size_t k = 0; k < n; k++) {
        types[k] = pf_type(pf, cols[k]);
        if (!types[k]) {
            struct type_guess g = {0};
            for (size_t r = hdr + 1; r < c->nrows; r++)
                guess_add(&g, vat_csv_get(c, r, k));
            types[k] = guess_type(&g);
        }
    }
    json_t *t = table_spec(name, cols, types, n);
    json_object_set_new(t, "skip", json_integer((json_int_t)hdr + 1));
    for (size_t k = 0; k < n; k++)
        free(cols[k]);
    free(cols);
    free(types);
    return t;
}

static uint32_t xl_last_row(const struct vat_xl_sheet *s, uint32_t from, uint32_t c1, uint32_t c2)
{
    uint32_t last = from;
    char buf[64];
    for (uint32_t r = from; r < vat_xl_nrows(s); r++) {
        bool any = false;
        for (uint32_t k = c1; k <= c2 && !any; k++)
            any = *vat_xl_text(vat_xl_get(s, r, k), buf, sizeof buf) != 0;
        if (!any)
            break;
        last = r;
    }
    return last;
}

/* An xlsx table: rows r1..r2, columns c1..c2 (0-based) of sheet, names
 * from header row h (and group row g >= 0 joined). */
static json_t *xl_table(const struct vat_xl_sheet *s, const char *sheet, uint32_t h, long g,
                        uint32_t r1, uint32_t r2, uint32_t c1, uint32_t c2, const char *name,
                        const struct vat_progform *pf)
{
    size_t n = c2 - c1 + 1;
    char **cols = vat_xcalloc(n, sizeof *cols);
    const char **types = vat_xcalloc(n, sizeof *types);
    char buf[64], gbuf[64], carry[128] = "";
    for (size_t k = 0; k < n; k++) {
        const char *sub = vat_xl_text(vat_xl_get(s, h, c1 + (uint32_t)k), buf, sizeof buf);
        if (g >= 0) {
            const struct vat_xl_range *m = vat_xl_merge_at(s, (uint32_t)g, c1 + (uint32_t)k);
            const char *gl = vat_xl_text(
                vat_xl_get(s, m ? m->r1 : (uint32_t)g, m ? m->c1 : c1 + (uint32_t)k), gbuf,
                sizeof gbuf);
            if (!*sub) {
                cols[k] = ident_of(gl, k);
                carry[0] = 0;
                continue;
            }
            if (*gl)
                snprintf(carry, sizeof carry, "%s", gl);
            if (carry[0]) {
                char *joined = vat_xasprintf("%s %s", carry, sub);
                cols[k] = ident_of(joined, k);
                free(joined);
                continue;
            }
        }
        cols[k] = ident_of(sub, k);
    }
    idents_dedupe(cols, n);
    for (size_t k = 0; k < n; k++) {
        types[k] = pf_type(pf, cols[k]);
        if (!types[k]) {
            struct type_guess gu = {0};
            for (uint32_t r = r1; r <= r2; r++)
                guess_add(&gu, vat_xl_text(vat_xl_get(s, r, c1 + (uint32_t)k), buf, sizeof buf));
            types[k] = guess_type(&gu);
        }
    }
    json_t *t = table_spec(name, cols, types, n);
    char a1[16], a2[16];
    json_object_set_new(t, "sheet", json_string(sheet));
    json_object_set_new(t, "range", json_sprintf("%s:%s", vat_xl_addr(r1, c1, a1, sizeof a1),
                                                 vat_xl_addr(r2, c2, a2, sizeof a2)));
    for (size_t k = 0; k < n; k++)
        free(cols[k]);
    free(cols);
    free(types);
    return t;
}

static int parse_range(const char *range, uint32_t *r1, uint32_t *c1, uint32_t *r2, uint32_t *c2)
{
    const char *colon = range ? strchr(range, ':') : NULL;
    if (!colon || vat_xl_parse_addr(range, (size_t)(colon - range), r1, c1) != 0 ||
        vat_xl_parse_addr(colon + 1, strlen(colon + 1), r2, c2) != 0 || *r2 < *r1 || *c2 < *c1)
        return -1;
    return 0;
}

static void how_table(struct env_build *b, const json_t *ts, const char *rel)
{
    const char *name = json_string_value(json_object_get(ts, "name"));
    if (json_object_get(ts, "notes")) {
        vat_buf_printf(&b->how,
                       "Table `%s` holds the %lld line%s above the header, one row per line "
                       "(`line` numbers them from 1, `text` holds the line).\n",
                       name, (long long)json_integer_value(json_object_get(ts, "notes")),
                       json_integer_value(json_object_get(ts, "notes")) == 1 ? "" : "s");
    } else if (json_object_get(ts, "range")) {
        vat_buf_printf(&b->how,
                       "Table `%s` holds the data rows of the table on sheet `%s` (cells %s), "
                       "one row per sheet row, its columns named by the table's header.\n",
                       name, json_string_value(json_object_get(ts, "sheet")),
                       json_string_value(json_object_get(ts, "range")));
    } else {
        long long skip = (long long)json_integer_value(json_object_get(ts, "skip"));
        vat_buf_printf(&b->how, "Table `%s` holds the CSV file `%s`: ", name, rel);
        if (skip <= 1)
            vat_buf_puts(&b->how, "its header line names the columns and every later line is "
                                  "one row.\n");
        else
            vat_buf_printf(&b->how, "its first %lld lines are not rows (the header and what is "
                                    "above it); every later line is one row.\n",
                           skip);
    }
}

/* Loads the main CSV's header view for the probes and the fallbacks. */
static int env_csv_generic(struct vat_task *t, struct env_build *b, const char *name,
                           struct vat_err *e)
{
    struct vat_csv c = VAT_CSV_INIT;
    const char *rel = t->fixture[0].path;
    if (vat_csv_read(&c, t->root, rel, e) != 0)
        return -1;
    if (c.nrows < 2) {
        vat_csv_release(&c);
        return vat_err_set(e, "%s: env: '%s' holds no data row", t->id, rel);
    }
    /* the header: the first record as wide as the widest whose fields
     * are all named (title and note lines above it may be padded with
     * empty fields); with two header records (the probe's shape says so)
     * the first as wide as the widest and the next */
    size_t width = 0, hdr = 0;
    for (size_t r = 0; r < c.nrows; r++)
        if (c.row[r].n > width)
            width = c.row[r].n;
    const char *shape = json_string_value(json_object_get(t->params, "shape"));
    long grow = -1;
    bool grouped = shape && strcmp(shape, "grouped") == 0;
    for (hdr = 0; hdr < c.nrows; hdr++) {
        bool named = c.row[hdr].n == width;
        for (size_t k = 0; named && !grouped && k < width; k++)
            named = *vat_csv_get(&c, hdr, k) != 0;
        if (named)
            break;
    }
    if (hdr >= c.nrows)
        hdr = 0;
    if (grouped && hdr + 1 < c.nrows) {
        grow = (long)hdr;
        hdr++;
    }
    json_t *tables = json_array();
    if (hdr > 0 && grow < 0) {
        json_t *nt = json_object();
        char *nn = vat_xasprintf("%s_notes", name);
        json_object_set_new(nt, "name", json_string(nn));
        json_object_set_new(nt, "notes", json_integer((json_int_t)hdr));
        free(nn);
        how_table(b, nt, rel);
        json_array_append_new(tables, nt);
    }
    json_t *ts = csv_table(&c, hdr, grow, name, NULL, false);
    how_table(b, ts, rel);
    json_array_insert_new(tables, 0, ts);
    json_object_set_new(b->spec, "tables", tables);
    snprintf(b->table, sizeof b->table, "%s", name);
    vat_csv_release(&c);
    return 0;
}

static void how_names(struct env_build *b, const json_t *tables, const char *shape)
{
    /* a repeated or joined name is worth saying */
    size_t i;
    const json_t *ts;
    bool dup = false, joined = false;
    json_array_foreach(tables, i, ts) {
        size_t k;
        const json_t *c;
        json_array_foreach(json_object_get(ts, "columns"), k, c) {
            const char *n = json_string_value(json_array_get(c, 0));
            size_t l = strlen(n);
            if (l > 2 && n[l - 2] == '_' && isdigit((unsigned char)n[l - 1]))
                dup = true;
        }
    }
    joined = shape && strcmp(shape, "grouped") == 0;
    if (dup)
        vat_buf_puts(&b->how, "Columns that share a name in the file keep it for the first and "
                              "get _2, _3, ... after it for the next ones, in file order.\n");
    if (joined)
        vat_buf_puts(&b->how, "The two header lines make one column name: the group's name and "
                              "the column's, in lower case, joined by '_' (spaces too).\n");
}

static int env_xlsx(struct vat_task *t, struct env_build *b, const struct vat_progform *pf,
                    struct vat_err *e)
{
    const char *rel = t->fixture[0].path;
    const json_t *wb = json_object_get(t->params, "workbook");
    const char *sheet = json_string_value(json_object_get(wb, "sheet"));
    struct vat_xl_book book = VAT_XL_BOOK_INIT;
    if (!sheet)
        return vat_err_set(e, "%s: env: params name no workbook sheet", t->id);
    if (vat_xl_read(&book, t->root, rel, e) != 0)
        return -1;
    const struct vat_xl_sheet *s = vat_xl_find_sheet(&book, sheet);
    int rc = 0;
    json_t *tables = json_array();
    if (!s) {
        rc = vat_err_set(e, "%s: env: no sheet '%s'", t->id, sheet);
        goto done;
    }
    const char *range = json_string_value(json_object_get(wb, "range"));
    uint32_t r1, c1, r2, c2;
    if (range) {
        if (parse_range(range, &r1, &c1, &r2, &c2) != 0 || r1 == 0) {
            rc = vat_err_set(e, "%s: env: bad workbook range '%s'", t->id, range);
            goto done;
        }
        if (b->have_names && !pf->db_table) { /* the table on sheet Orders is `orders` */
            char *id = ident_of(sheet, 0);
            snprintf(b->names.table, sizeof b->names.table, "%s", id);
            free(id);
        }
        const char *name = b->have_names ? b->names.table : "data";
        json_t *ts = xl_table(s, sheet, r1 - 1, -1, r1, r2, c1, c2, name, pf);
        how_table(b, ts, rel);
        json_array_append_new(tables, ts);
        snprintf(b->table, sizeof b->table, "%s", name);
        const char *lsheet = json_string_value(json_object_get(wb, "lookup_sheet"));
        const char *lrange = json_string_value(json_object_get(wb, "lookup_range"));
        const struct vat_xl_sheet *ls = lsheet ? vat_xl_find_sheet(&book, lsheet) : NULL;
        if (lsheet || lrange) {
            if (!ls || parse_range(lrange, &r1, &c1, &r2, &c2) != 0 || r1 == 0) {
                rc = vat_err_set(e, "%s: env: bad lookup sheet or range", t->id);
                goto done;
            }
            /* the join templates' history table, by the name their query reads */
            ts = xl_table(ls, lsheet, r1 - 1, -1, r1, r2, c1, c2, "customer_history", pf);
            how_table(b, ts, rel);
            json_array_append_new(tables, ts);
        }
    } else {
        /* the probes: a header row (two with a group row) and data to the
         * first blank row */
        json_int_t hr = json_integer_value(json_object_get(wb, "header_row"));
        json_int_t dr = json_integer_value(json_object_get(wb, "data_row"));
        const char *shape = json_string_value(json_object_get(t->params, "shape"));
        bool grouped = shape && strcmp(shape, "grouped") == 0;
        if (hr < 1 || dr <= hr || (grouped && hr < 2)) {
            rc = vat_err_set(e, "%s: env: params give no header and data rows", t->id);
            goto done;
        }
        uint32_t h = (uint32_t)hr - 1, d = (uint32_t)dr - 1;
        uint32_t last_col = 0;
        char buf[64];
        for (uint32_t k = 0; k < vat_xl_ncols(s); k++)
            if (*vat_xl_text(vat_xl_get(s, h, k), buf, sizeof buf))
                last_col = k;
        uint32_t last = xl_last_row(s, d, 0, last_col);
        if (!grouped && h > 0) {
            json_t *nt = json_object();
            json_object_set_new(nt, "name", json_string("report_notes"));
            json_object_set_new(nt, "sheet", json_string(sheet));
            json_object_set_new(nt, "notes", json_integer((json_int_t)h));
            how_table(b, nt, rel);
            json_array_append_new(tables, nt);
        }
        json_t *ts = xl_table(s, sheet, h, grouped ? (long)h - 1 : -1, d, last, 0, last_col,
                              "report", NULL);
        how_table(b, ts, rel);
        json_array_insert_new(tables, 0, ts);
        snprintf(b->table, sizeof b->table, "report");
    }
    json_object_set_new(b->spec, "tables", json_incref(tables));
done:
    json_decref(tables);
    vat_xl_release(&book);
    return rc;
}

/* The names of an SQLite fixture's tables, in schema order. */
static int sqlite_tables(const struct vat_task *t, json_t *out, struct vat_err *e)
{
    char *data = NULL;
    size_t n = 0;
    if (vat_read_file_beneath(t->root, t->fixture[0].path, (size_t)64 << 20, &data, &n, e) != 0)
        return -1;
    sqlite3 *db = NULL;
    unsigned char *copy = sqlite3_malloc64(n ? n : 1);
    int rc = -1;
    if (copy && sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY,
                                NULL) == SQLITE_OK) {
        memcpy(copy, data, n);
        if (sqlite3_deserialize(db, "main", copy, (sqlite3_int64)n, (sqlite3_int64)n,
                                SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY) ==
            SQLITE_OK) {
            copy = NULL;
            sqlite3_stmt *st = NULL;
            if (sqlite3_prepare_v2(db,
                                   "SELECT name FROM sqlite_schema WHERE type = 'table' AND "
                                   "name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
                                   -1, &st, NULL) == SQLITE_OK) {
                while (sqlite3_step(st) == SQLITE_ROW)
                    json_array_append_new(out,
                                          json_string((const char *)sqlite3_column_text(st, 0)));
                rc = 0;
            }
            sqlite3_finalize(st);
        } else {
            copy = NULL; /* freed by deserialize on failure */
        }
    }
    sqlite3_free(copy);
    sqlite3_close(db);
    free(data);
    if (rc != 0 || json_array_size(out) == 0)
        return vat_err_set(e, "%s: env: cannot list the tables of '%s'", t->id,
                           t->fixture[0].path);
    return 0;
}

static int env_build(struct vat_task *t, struct env_build *b, struct vat_err *e)
{
    const char *kind = vat_task_answer_kind(t);
    const struct vat_progform *pf = t->tmpl->progform;
    const char *format = t->fixture[0].format;
    const char *rel = t->fixture[0].path;
    b->spec = json_object();
    bool regex = strcmp(kind, "regex") == 0;
    b->tool_set = regex ? "regex" : "data";
    json_object_set_new(b->spec, "tools", json_string(b->tool_set));
    json_object_set_new(b->spec, "fixture", json_string(rel));
    json_object_set_new(b->spec, "format", json_string(format));
    if (regex)
        return 0;
    if (pf) {
        vat_progform_names(t, pf, &b->names);
        b->have_names = true;
        /* a value-form task's prompt names no table: its file loads under
         * the template's plain name for it ("orders"), the program form's
         * query run under that name (a program-form task keeps the name
         * its prompt gives) */
        if (strcmp(kind, "sql") != 0)
            snprintf(b->names.table, sizeof b->names.table, "%s",
                     pf->db_table ? pf->db_table : pf->tables[0]);
    }
    if (strcmp(format, "sqlite") == 0) {
        json_t *tables = json_array();
        if (sqlite_tables(t, tables, e) != 0) {
            json_decref(tables);
            return -1;
        }
        json_object_set_new(b->spec, "tables", tables);
        vat_buf_printf(&b->how, "The SQLite file `%s` is queried as it is.\n", rel);
        snprintf(b->table, sizeof b->table, "%s",
                 pf && pf->db_table && strcmp(kind, "sql") != 0
                     ? pf->db_table
                     : json_string_value(json_array_get(tables, 0)));
        return 0;
    }
    const char *shape = json_string_value(json_object_get(t->params, "shape"));
    if (strcmp(format, "xlsx") == 0) {
        if (env_xlsx(t, b, pf, e) != 0)
            return -1;
        if (!b->have_names)
            how_names(b, json_object_get(b->spec, "tables"), shape);
        return 0;
    }
    const json_t *load = json_object_get(t->spec, "load");
    if (load) {
        /* the program form: the prompt's CREATE TABLE */
        json_t *ts = json_object();
        json_object_set(ts, "name", json_object_get(load, "table"));
        json_object_set(ts, "columns", json_object_get(load, "columns"));
        json_object_set_new(ts, "skip", json_integer(1));
        how_table(b, ts, rel);
        json_object_set_new(b->spec, "tables", json_pack("[o]", ts));
        snprintf(b->table, sizeof b->table, "%s", json_string_value(json_object_get(load,
                                                                                     "table")));
        return 0;
    }
    if (pf && pf->columns) {
        struct vat_csv c = VAT_CSV_INIT;
        if (vat_csv_read(&c, t->root, rel, e) != 0)
            return -1;
        bool same = c.nrows > 0 && c.row[0].n == pf->ncols;
        for (size_t k = 0; same && k < pf->ncols; k++)
            same = strcmp(vat_csv_get(&c, 0, k), pf->columns[k]) == 0;
        vat_csv_release(&c);
        if (same) {
            json_t *ts = table_spec(b->names.table, (char *const *)pf->columns, pf->types,
                                    pf->ncols);
            json_object_set_new(ts, "skip", json_integer(1));
            how_table(b, ts, rel);
            json_object_set_new(b->spec, "tables", json_pack("[o]", ts));
            snprintf(b->table, sizeof b->table, "%s", b->names.table);
            return 0;
        }
    }
    const char *name = strcmp(t->tmpl->name, "unanswerable") == 0 ? "orders"
                       : strcmp(t->tmpl->family, "probe") == 0  ? "report"
                                                                : "data";
    if (env_csv_generic(t, b, name, e) != 0)
        return -1;
    how_names(b, json_object_get(b->spec, "tables"), shape);
    return 0;
}

/* ---- reading the tools' text tables ---------------------------------------- */

/* A text table as the sql tool renders it, back into cells: rows of
 * unescaped strings (NULL for NULL).  false when it is not one, or was
 * cut. */
struct text_rows {
    size_t ncol, nrow;
    char **cell;
};

static void text_rows_free(struct text_rows *r)
{
    for (size_t i = 0; i < r->ncol * r->nrow; i++)
        free(r->cell[i]);
    free(r->cell);
    memset(r, 0, sizeof *r);
}

static char *unescape_cell(const char *s, size_t n)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_putn(&b, "", 0);
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 >= n) {
            vat_buf_putc(&b, s[i]);
            continue;
        }
        char c = s[++i];
        if (c == 'n')
            vat_buf_putc(&b, '\n');
        else if (c == 'r')
            vat_buf_putc(&b, '\r');
        else if (c == 't')
            vat_buf_putc(&b, '\t');
        else if (c == 'x' && i + 2 < n) {
            char hex[3] = {s[i + 1], s[i + 2], 0};
            vat_buf_putc(&b, (char)strtol(hex, NULL, 16));
            i += 2;
        } else
            vat_buf_putc(&b, c);
    }
    return vat_buf_detach(&b);
}

static bool read_text_rows(const char *obs, struct text_rows *out)
{
    memset(out, 0, sizeof *out);
    if (strncmp(obs, "error", 5) == 0)
        return false;
    const char *p = obs;
    size_t ncol = 0, cap = 0;
    bool header = true;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (!nl) { /* the footer: the whole result, not a cut */
            char want[48];
            snprintf(want, sizeof want, "(%zu row%s)", out->nrow, out->nrow == 1 ? "" : "s");
            if (strlen(want) != len || memcmp(p, want, len) != 0) {
                text_rows_free(out);
                return false;
            }
            break;
        }
        /* cells split at " | " (a '|' inside a value is written "\|") */
        size_t k = 0, start = 0;
        char **row = NULL;
        for (size_t i = 0; i <= len; i++) {
            if (i == len || (i + 3 <= len && memcmp(p + i, " | ", 3) == 0)) {
                row = vat_xrealloc(row, (k + 1) * sizeof *row);
                row[k++] = unescape_cell(p + start, i - start);
                if (i < len)
                    i += 2;
                start = i + 1;
            }
        }
        if (header) {
            ncol = out->ncol = k;
            for (size_t j = 0; j < k; j++)
                free(row[j]);
            header = false;
        } else {
            if (k != ncol) {
                for (size_t j = 0; j < k; j++)
                    free(row[j]);
                free(row);
                text_rows_free(out);
                return false;
            }
            if ((out->nrow + 1) * ncol > cap) {
                cap = cap ? 2 * cap : 16 * ncol;
                out->cell = vat_xrealloc(out->cell, cap * sizeof *out->cell);
            }
            for (size_t j = 0; j < k; j++) {
                if (strcmp(row[j], "NULL") == 0) {
                    free(row[j]);
                    row[j] = NULL;
                }
                out->cell[out->nrow * ncol + j] = row[j];
            }
            out->nrow++;
        }
        free(row);
        p = nl + 1;
    }
    out->ncol = ncol;
    return !header;
}

/* A number cell as JSON: an integer as one, a real from its shown text
 * (15 significant digits, as the tool shows it).  NULL when not one. */
static json_t *number_json(const char *s)
{
    if (!s)
        return NULL;
    char *end;
    if (cell_integer(s))
        return json_integer((json_int_t)strtoll(s, NULL, 10));
    double d = strtod(s, &end);
    if (end == s || *end || !isfinite(d))
        return NULL;
    return json_real(d);
}

/* The rows as the value answer kind reads them (vat_progform_rows_value's
 * shapes: keys from text cells, values from number cells).  NULL with
 * e set. */
static json_t *rows_value(const struct text_rows *r, enum vat_an_result kind, struct vat_err *e)
{
    json_t *rows = json_array();
    static const size_t want[] = {1, 1, 2, 3};
    for (size_t i = 0; i < r->nrow; i++) {
        json_t *row = json_array();
        for (size_t k = 0; k < r->ncol; k++) {
            const char *c = r->cell[i * r->ncol + k];
            bool value_col = k + 1 == want[kind] && kind != VAT_AN_LIST;
            json_t *x = !c ? json_null() : value_col ? number_json(c) : json_string(c);
            json_array_append_new(row, x ? x : json_null());
        }
        json_array_append_new(rows, row);
    }
    json_t *v = vat_progform_rows_value(rows, kind, e);
    json_decref(rows);
    return v;
}

/* ---- the agent prompt -------------------------------------------------------- */

static bool starts(const char *line, size_t len, const char *w)
{
    size_t n = strlen(w);
    return len >= n && memcmp(line, w, n) == 0;
}

/* The task's prompt with its data taken out: fenced CSV and grid blocks
 * and every INSERT statement (fenced or not) go, with the row comments
 * and merged-cell lists beside them; a note says the rows are the
 * tools'. */
static void prompt_without_data(const char *prompt, bool regex, struct vat_buf *out)
{
    const char *note = regex ? "(The example lines are not shown here: read them with sample.)"
                             : "(The rows are not shown here: read them with the tools below.)";
    const char *p = prompt;
    bool in_fence = false, drop_fence = false, in_insert = false, noted = false;
    struct vat_buf tmp = VAT_BUF_INIT;
    vat_buf_putn(&tmp, "", 0);
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        bool keep = true;
        if (in_insert) {
            keep = false;
            if (len >= 2 && p[len - 2] == ')' && p[len - 1] == ';')
                in_insert = false;
            else if (len >= 1 && p[len - 1] == ';')
                in_insert = false;
        } else if (starts(p, len, "```")) {
            if (!in_fence) {
                in_fence = true;
                const char *info = p + 3;
                size_t il = len - 3;
                drop_fence = !(il == 3 && memcmp(info, "sql", 3) == 0);
                if (drop_fence) {
                    keep = false;
                    if (!noted) {
                        vat_buf_puts(&tmp, note);
                        vat_buf_putc(&tmp, '\n');
                        noted = true;
                    }
                }
            } else {
                in_fence = false;
                keep = !drop_fence;
                drop_fence = false;
            }
        } else if (in_fence && drop_fence) {
            keep = false;
        } else if (starts(p, len, "INSERT INTO ")) {
            keep = false;
            in_insert = !(len >= 1 && p[len - 1] == ';');
            if (!noted && !in_fence) {
                vat_buf_puts(&tmp, note);
                vat_buf_putc(&tmp, '\n');
                noted = true;
            }
        } else if (starts(p, len, "-- ") && memchr(p, ':', len) &&
                   (strstr(p, " row") != NULL) && (size_t)(strstr(p, " row") - p) < len) {
            keep = false; /* "-- orders: all 66 rows" */
        } else if (starts(p, len, "Merged cells:")) {
            keep = false;
        }
        if (keep) {
            vat_buf_putn(&tmp, p, len);
            vat_buf_putc(&tmp, '\n');
        }
        p = nl ? nl + 1 : p + len;
    }
    /* at most one blank line in a row, none at the end */
    const char *s = tmp.data;
    size_t blank = 0;
    for (size_t i = 0; i < tmp.len; i++) {
        if (s[i] == '\n') {
            blank++;
            if (blank > 2)
                continue;
        } else {
            blank = 0;
        }
        vat_buf_putc(out, s[i]);
    }
    while (out->len && out->data[out->len - 1] == '\n')
        out->data[--out->len] = 0;
    vat_buf_release(&tmp);
}

/* ---- the transcript ------------------------------------------------------------ */

struct transcript {
    json_t *messages; /* the completion: assistant calls, tool observations */
    json_t *calls;    /* [name, arguments text] per call, for the replay */
    struct vat_ep *ep;
    int n;
};

/* Calls name with args (an object, taken) in the episode and records the
 * call and its observation.  Returns the observation (borrowed). */
static const char *tr_call(struct transcript *tr, const char *name, json_t *args)
{
    char *text = vat_json_dumps(args);
    json_decref(args);
    size_t olen;
    const char *obs = vat_ep_call(tr->ep, name, strlen(name), text, strlen(text), &olen);
    char id[24];
    snprintf(id, sizeof id, "call_%d", ++tr->n);
    json_t *call = json_pack("{s:s, s:s, s:{s:s, s:s}}", "id", id, "type", "function",
                             "function", "name", name, "arguments", text);
    json_array_append_new(tr->messages,
                          json_pack("{s:s, s:s, s:[o], s:s, s:s}", "role", "assistant",
                                    "content", "", "tool_calls", call, "tool_call_id", "",
                                    "name", ""));
    json_array_append_new(tr->messages,
                          json_pack("{s:s, s:s%, s:[], s:s, s:s}", "role", "tool", "content", obs,
                                    olen, "tool_calls", "tool_call_id", id, "name", name));
    json_array_append_new(tr->calls, json_pack("[s,s]", name, text));
    free(text);
    return obs;
}

static json_t *args1(const char *key, const char *value)
{
    return json_pack("{s:s}", key, value);
}

/* "(the first k of n rows shown)": k and n; false for any other line. */
static bool cut_footer(const char *obs, size_t *k, size_t *n)
{
    const char *f = strrchr(obs, '\n');
    f = f ? f + 1 : obs;
    char tail[8];
    return sscanf(f, "(the first %zu of %zu rows shown%7s", k, n, tail) == 3 &&
           strcmp(tail, ")") == 0 && *k > 0 && *k < *n;
}

/* The observation of a query whose result was cut, read page by page:
 * the query again as a subquery with LIMIT and OFFSET (the sandbox does
 * not flatten subqueries, so an ordered result keeps its order), each
 * page's rows appended.  false when a page fails. */
static bool read_pages(struct transcript *tr, const char *q, const char *first,
                       struct text_rows *all)
{
    size_t k, n;
    if (read_text_rows(first, all))
        return true;
    if (!cut_footer(first, &k, &n))
        return false;
    /* the shown rows: the observation without its footer, read whole */
    const char *nl = strrchr(first, '\n');
    char *head = vat_xasprintf("%.*s\n(%zu row%s)", (int)(nl - first), first, k,
                               k == 1 ? "" : "s");
    bool ok = read_text_rows(head, all);
    free(head);
    size_t got = k;
    while (ok && got < n) {
        char *page = vat_xasprintf("SELECT * FROM (\n%s\n) LIMIT %d OFFSET %zu", q,
                                   VAT_EP_SHOW_ROWS, got);
        const char *obs = tr_call(tr, "sql", args1("query", page));
        free(page);
        struct text_rows r;
        size_t pk = 0, pn = 0;
        if (read_text_rows(obs, &r)) {
            pk = r.nrow;
        } else if (cut_footer(obs, &pk, &pn)) {
            nl = strrchr(obs, '\n');
            head = vat_xasprintf("%.*s\n(%zu row%s)", (int)(nl - obs), obs, pk,
                                 pk == 1 ? "" : "s");
            ok = read_text_rows(head, &r);
            free(head);
        } else {
            ok = false;
        }
        if (ok && (r.ncol != all->ncol || pk == 0))
            ok = false;
        if (ok) {
            all->cell = vat_xrealloc(all->cell, (all->nrow + r.nrow) * all->ncol *
                                                    sizeof *all->cell);
            memcpy(all->cell + all->nrow * all->ncol, r.cell,
                   r.nrow * r.ncol * sizeof *r.cell);
            all->nrow += r.nrow;
            got += r.nrow;
            free(r.cell);
            memset(&r, 0, sizeof r);
        }
        text_rows_free(&r);
    }
    if (!ok)
        text_rows_free(all);
    return ok && got == n;
}

/* A query's value through the sql tool, read as kind (a result longer
 * than one observation read page by page).  NULL when the observation is
 * not a result of that shape. */
static json_t *sql_value(struct transcript *tr, const char *q, enum vat_an_result kind)
{
    const char *obs = tr_call(tr, "sql", args1("query", q));
    char *first = vat_xstrdup(obs);
    struct text_rows r;
    bool ok = read_pages(tr, q, first, &r);
    free(first);
    if (!ok)
        return NULL;
    struct vat_err e = {{0}};
    json_t *v = rows_value(&r, kind, &e);
    text_rows_free(&r);
    return v;
}

/* The value answer as the prompt asks it: canonical JSON text; reals as
 * the tool showed them (15 significant digits). */
static char *value_text(json_t *v)
{
    char *s = vat_json_dumps(v);
    return s;
}

static char *quoted_ident(const char *s)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_put_quoted(&b, s, '"');
    return vat_buf_detach(&b);
}

static char *quoted_text(const char *s)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_put_quoted(&b, s, '\'');
    return vat_buf_detach(&b);
}

/* The probes' program: sum the asked column per key or for one key. */
static char *dup_header_answer(struct transcript *tr, const struct vat_task *t,
                               const struct env_build *b)
{
    const char *shape = json_string_value(json_object_get(t->params, "shape"));
    const char *key = json_string_value(json_object_get(t->params, "key"));
    const char *measure = json_string_value(json_object_get(t->params, "measure"));
    const char *answer = json_string_value(json_object_get(t->params, "answer"));
    if (!shape || !key || !measure || !answer)
        return NULL;
    char col[160];
    if (strcmp(shape, "grouped") == 0) {
        const char *group = json_string_value(json_object_get(t->params, "group"));
        char *joined = vat_xasprintf("%s %s", group ? group : "", measure);
        char *id = ident_of(joined, 0);
        snprintf(col, sizeof col, "%s", id);
        free(id);
        free(joined);
    } else {
        json_int_t k = json_integer_value(json_object_get(t->params, "occurrence"));
        if (k < 1)
            return NULL;
        if (k == 1)
            snprintf(col, sizeof col, "%s", measure);
        else
            snprintf(col, sizeof col, "%s_%lld", measure, (long long)k);
    }
    char *qt = quoted_ident(b->table), *qk = quoted_ident(key), *qc = quoted_ident(col);
    char *q = NULL;
    json_t *v = NULL;
    if (strcmp(answer, "one_key") == 0) {
        const char *kv = json_string_value(json_object_get(t->params, "key_value"));
        char *lit = quoted_text(kv ? kv : "");
        q = vat_xasprintf("SELECT SUM(%s) AS total FROM %s WHERE %s = %s", qc, qt, qk, lit);
        free(lit);
        v = sql_value(tr, q, VAT_AN_NUMBER);
    } else {
        q = vat_xasprintf("SELECT %s, SUM(%s) AS total FROM %s GROUP BY %s ORDER BY %s", qk, qc,
                          qt, qk, qk);
        v = sql_value(tr, q, VAT_AN_OBJECT);
    }
    free(q);
    free(qt);
    free(qk);
    free(qc);
    char *s = v ? value_text(v) : NULL;
    json_decref(v);
    return s;
}

/* The unanswerable probe: the asked column among describe's, the month
 * within the dates the file spans, the customer among its rows; then the
 * total, or the abstention. */
static char *unanswerable_answer(struct transcript *tr, const struct vat_task *t,
                                 const struct env_build *b, const char *described)
{
    const char *col = json_string_value(json_object_get(t->params, "column"));
    const char *cust = json_string_value(json_object_get(t->params, "customer"));
    const char *month = json_string_value(json_object_get(t->params, "month"));
    const json_t *abst = json_object_get(t->spec, "abstention");
    if (!col || !cust || !month || !abst)
        return NULL;
    char *line = vat_xasprintf("\n  %s ", col);
    bool has_col = strstr(described, line) != NULL;
    free(line);
    if (!has_col)
        return vat_json_dumps(abst);
    char *qt = quoted_ident(b->table), *lc = quoted_text(cust), *lm = quoted_text(month);
    char *q = vat_xasprintf("SELECT substr(min(ordered_on), 1, 7) AS first_month, "
                            "substr(max(ordered_on), 1, 7) AS last_month, "
                            "sum(customer = %s) AS customer_orders FROM %s",
                            lc, qt);
    const char *obs = tr_call(tr, "sql", args1("query", q));
    free(q);
    struct text_rows r;
    char *answer = NULL;
    if (read_text_rows(obs, &r) && r.nrow == 1 && r.ncol == 3) {
        const char *first = r.cell[0], *last = r.cell[1], *n = r.cell[2];
        bool covered = first && last && strcmp(month, first) >= 0 && strcmp(month, last) <= 0;
        bool present = n && strcmp(n, "0") != 0;
        if (!covered || !present) {
            answer = vat_json_dumps(abst);
        } else {
            char *qc = quoted_ident(col);
            q = vat_xasprintf("SELECT coalesce(SUM(%s), 0) AS total FROM %s WHERE customer = %s "
                              "AND substr(ordered_on, 1, 7) = %s",
                              qc, qt, lc, lm);
            json_t *v = sql_value(tr, q, VAT_AN_NUMBER);
            free(q);
            free(qc);
            answer = v ? value_text(v) : NULL;
            json_decref(v);
        }
    }
    text_rows_free(&r);
    free(qt);
    free(lc);
    free(lm);
    return answer;
}

/* Runs the expert on a fresh episode into tr; the answer it submitted
 * (new string) or NULL when it found none. */
static char *expert_play(struct transcript *tr, struct vat_task *t, const struct env_build *b,
                         const struct vat_env_task *et)
{
    const char *kind = vat_task_answer_kind(t);
    const struct vat_progform *pf = t->tmpl->progform;
    char *answer = NULL;
    if (strcmp(kind, "regex") == 0) {
        tr_call(tr, "sample", json_pack("{s:i}", "n", (int)VAT_EP_SAMPLE_MAX));
        tr_call(tr, "try", args1("pattern", t->gold));
        answer = vat_xstrdup(t->gold);
    } else {
        const char *described = tr_call(tr, "describe", json_object());
        char *desc = vat_xstrdup(described);
        const char *first = vat_env_task_table(et, 0);
        if (strcmp(kind, "sql") == 0) {
            tr_call(tr, "sample", json_pack("{s:s, s:i}", "table", first, "n", 3));
            /* the program is submitted once it runs (its rows, cut or not,
             * are the ones the task asks for) */
            const char *obs = tr_call(tr, "sql", args1("query", t->gold));
            if (strncmp(obs, "error (" VAT_SQL_BUDGET ")", 7 + strlen(VAT_SQL_BUDGET) + 1) == 0) {
                /* more rows than one query may return (a high level's
                 * answer): the expert counts them instead */
                size_t len = strlen(t->gold);
                while (len && (t->gold[len - 1] == ';' || t->gold[len - 1] == ' ' ||
                               t->gold[len - 1] == '\n'))
                    len--;
                char *count = vat_xasprintf("SELECT COUNT(*) AS result_rows FROM (%.*s)",
                                            (int)len, t->gold);
                obs = tr_call(tr, "sql", args1("query", count));
                free(count);
            }
            if (strncmp(obs, "error", 5) != 0)
                answer = vat_xstrdup(t->gold);
        } else if (pf && b->have_names) {
            tr_call(tr, "sample", json_pack("{s:s, s:i}", "table", b->table, "n", 3));
            char *q = vat_progform_gold_sql(t, pf, &b->names);
            json_t *v = sql_value(tr, q, pf->kind);
            free(q);
            answer = v ? value_text(v) : NULL;
            json_decref(v);
        } else if (strcmp(t->tmpl->name, "dup_header") == 0) {
            const char *notes = vat_env_task_table(et, 1);
            if (notes)
                tr_call(tr, "sample", json_pack("{s:s, s:i}", "table", notes, "n", 20));
            else
                tr_call(tr, "sample", json_pack("{s:s, s:i}", "table", first, "n", 3));
            answer = dup_header_answer(tr, t, b);
        } else if (strcmp(t->tmpl->name, "unanswerable") == 0) {
            answer = unanswerable_answer(tr, t, b, desc);
        }
        free(desc);
    }
    if (answer)
        tr_call(tr, "submit", args1("answer", answer));
    return answer;
}

/* Scores with the task's check (build time). */
struct scoring {
    struct vat_task *t;
    vat_expert_check check;
    void *ctx;
};

static void task_scorer(void *ctx, const char *answer, size_t len, struct vat_verdict *v,
                        bool *is_trap)
{
    const struct scoring *sc = ctx;
    *v = sc->check ? sc->check(sc->ctx, sc->t, answer, len)
                   : sc->t->tmpl->check(sc->t, answer, len);
    *is_trap = false;
}

/* Replays calls through a fresh episode: true when every observation is
 * the one recorded and the episode ends with 1.0 (*v its verdict). */
static bool replay(const struct vat_env_task *et, struct scoring *sc, const json_t *calls,
                   const json_t *messages, struct vat_verdict *v)
{
    struct vat_ep *ep = vat_ep_new(et, task_scorer, sc);
    bool same = true;
    size_t i;
    const json_t *c;
    json_array_foreach(calls, i, c) {
        const char *name = json_string_value(json_array_get(c, 0));
        const json_t *args = json_array_get(c, 1);
        size_t olen;
        const char *obs = vat_ep_call(ep, name, strlen(name), json_string_value(args),
                                      json_string_length(args), &olen);
        const json_t *rec = json_object_get(json_array_get(messages, 2 * i + 1), "content");
        same = same && json_string_length(rec) == olen &&
               memcmp(json_string_value(rec), obs, olen) == 0;
    }
    *v = *vat_ep_verdict(ep);
    bool ok = same && vat_ep_done(ep) && vat_ep_reward(ep) == 1.0;
    vat_ep_free(ep);
    return ok;
}

/* The agent prompt: the task's prompt without its data, the tools, how
 * the file loads, and the tables' schema with their first rows. */
static char *agent_prompt(struct vat_task *t, const struct env_build *b,
                          const struct vat_env_task *et)
{
    bool regex = strcmp(b->tool_set, "regex") == 0;
    struct vat_buf p = VAT_BUF_INIT;
    prompt_without_data(t->prompt, regex, &p);
    vat_buf_puts(&p, "\n\nYou can look at the data before you answer, with these tools:\n");
    if (regex) {
        vat_buf_puts(&p, "- sample(n): the first n example lines (n from 1 to 20);\n"
                         "- try(pattern): what a pattern extracts from each example line;\n");
    } else {
        vat_buf_puts(&p,
                     "- describe(): the tables, their columns with declared types, and row "
                     "counts;\n"
                     "- sample(table, n): the first n rows of a table (n from 1 to 20);\n"
                     "- sql(query): runs one read-only SQLite SELECT over the tables and shows "
                     "its result (at most 50 rows);\n");
    }
    vat_buf_printf(&p,
                   "- submit(answer): your final answer, written exactly as asked above; it "
                   "ends the episode and is scored.\n"
                   "You have %d tool calls in all", VAT_EP_MAX_CALLS);
    if (!regex)
        vat_buf_printf(&p, ", at most %d of them sql or sample", VAT_EP_MAX_SQL);
    vat_buf_puts(&p, ".\n\n");
    struct vat_ep *ep = vat_ep_new(et, NULL, NULL);
    if (regex) {
        size_t n = 0;
        const char *obs = vat_ep_call(ep, "sample", 6, "{\"n\":2}", 7, &n);
        vat_buf_printf(&p, "The example lines are in `%s` (columns line_id, text). The first "
                           "two, as sample shows them:\n\n",
                       t->fixture[0].path);
        vat_buf_putn(&p, obs, n);
    } else {
        vat_buf_putn(&p, b->how.data ? b->how.data : "", b->how.len);
        if (strcmp(t->fixture[0].format, "sqlite") != 0)
            vat_buf_puts(&p, "A cell is stored as text converted by its column's declared type "
                             "(SQLite's affinity); an empty cell is NULL.\n");
        vat_buf_puts(&p, "\nThe tables, as describe shows them:\n\n");
        vat_buf_puts(&p, vat_env_task_describe(et));
        for (size_t i = 0; vat_env_task_table(et, i); i++) {
            const char *name = vat_env_task_table(et, i);
            json_t *a = json_pack("{s:s, s:i}", "table", name, "n", 3);
            char *text = vat_json_dumps(a);
            json_decref(a);
            size_t n = 0;
            const char *obs = vat_ep_call(ep, "sample", 6, text, strlen(text), &n);
            free(text);
            vat_buf_printf(&p, "\nThe first rows of %s:\n", name);
            vat_buf_putn(&p, obs, n);
            vat_buf_putc(&p, '\n');
        }
    }
    vat_ep_free(ep);
    while (p.len && p.data[p.len - 1] == '\n')
        p.data[--p.len] = 0;
    return vat_buf_detach(&p);
}

int vat_expert_run(struct vat_task *t, vat_expert_check check, void *ctx, struct vat_err *e)
{
    struct scoring sc = {t, check, ctx};
    struct env_build b;
    memset(&b, 0, sizeof b);
    int rc = -1;
    struct vat_env_task *et = NULL;
    char *prompt = NULL, *answer = NULL;
    struct transcript tr = {json_array(), json_array(), NULL, 0};
    if (env_build(t, &b, e) != 0)
        goto done;
    struct vat_verdict v;
    et = vat_env_task_new(b.spec, t->spec, t->root, t->fixture[0].sha256, &v);
    if (!et) {
        vat_err_set(e, "%s: env: %s", t->id, v.reason);
        goto done;
    }
    prompt = agent_prompt(t, &b, et);
    tr.ep = vat_ep_new(et, task_scorer, &sc);
    answer = expert_play(&tr, t, &b, et);
    bool kept = false;
    if (answer && vat_ep_done(tr.ep) && vat_ep_reward(tr.ep) == 1.0 &&
        replay(et, &sc, tr.calls, tr.messages, &v)) {
        kept = true;
        json_array_append_new(tr.messages,
                              json_pack("{s:s, s:s, s:[], s:s, s:s}", "role", "assistant",
                                        "content", answer, "tool_calls", "tool_call_id", "",
                                        "name", ""));
    }
    json_t *env = json_object();
    json_object_set_new(env, "tool_set", json_string(b.tool_set));
    json_object_set_new(env, "prompt", json_string(prompt));
    json_object_set_new(env, "tools", json_string(vat_env_tools_json(b.tool_set)));
    char *spec_text = vat_json_dumps(b.spec);
    json_object_set_new(env, "env_json", json_string(spec_text));
    free(spec_text);
    json_object_set_new(env, "completion", kept ? json_incref(tr.messages) : json_array());
    json_object_set_new(env, "agent",
                        kept ? json_pack("{s:s, s:b, s:f, s:s, s:s}", "answer", answer,
                                         "gate_passed", v.gate_passed, "score", v.score, "code",
                                         v.code, "reason", v.reason)
                             : json_null());
    json_decref(t->env);
    t->env = env;
    rc = 0;
done:
    vat_ep_free(tr.ep);
    json_decref(tr.messages);
    json_decref(tr.calls);
    vat_env_task_free(et);
    json_decref(b.spec);
    vat_buf_release(&b.how);
    free(prompt);
    free(answer);
    return rc;
}

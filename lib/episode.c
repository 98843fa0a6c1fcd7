/* episode.c — a task's environment and the episodes on it (see
 * episode.h).  The tables are loaded once into an SQLite image held by
 * the sql checker's sandbox (vat_sql_db), so every query an agent sends
 * passes the checker's gate and runs under its authorizer and budgets;
 * the loading follows the checker's CSV loader (verifiers/sqlload.c).
 * Observations are pure functions of the calls: no clock, no address, no
 * pool state reaches one. */
#include "episode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "jsonout.h"
#include "verifiers.h"
#include "xlsx.h"

/* ---- the tool schemas ------------------------------------------------------ */

#define TOOL_DESCRIBE                                                                              \
    "{\"type\":\"function\",\"function\":{\"name\":\"describe\",\"description\":\"Lists the "     \
    "tables of the data: each table's columns with their declared types, and its row "           \
    "count.\",\"parameters\":{\"type\":\"object\",\"properties\":{},\"required\":[]}}}"
#define TOOL_SUBMIT                                                                                \
    "{\"type\":\"function\",\"function\":{\"name\":\"submit\",\"description\":\"Submits the "     \
    "final answer, written exactly as the task asks for it. The episode ends and the answer "    \
    "is scored.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":"      \
    "\"string\",\"description\":\"The answer text.\"}},\"required\":[\"answer\"]}}}"

static const char data_tools[] =
    "[" TOOL_DESCRIBE ","
    "{\"type\":\"function\",\"function\":{\"name\":\"sample\",\"description\":\"Shows the first "
    "n rows of a table as a text table.\",\"parameters\":{\"type\":\"object\",\"properties\":{"
    "\"table\":{\"type\":\"string\",\"description\":\"The table's name, as describe lists "
    "it.\"},\"n\":{\"type\":\"integer\",\"description\":\"How many rows, 1 to 20 (default "
    "5).\"}},\"required\":[\"table\"]}}},"
    "{\"type\":\"function\",\"function\":{\"name\":\"sql\",\"description\":\"Runs one read-only "
    "SQLite SELECT statement over the tables and shows its result as a text table: a header "
    "line, one line per row with the values separated by ' | ', then the row count. At most 50 "
    "rows are shown; the cut is stated.\",\"parameters\":{\"type\":\"object\",\"properties\":{"
    "\"query\":{\"type\":\"string\",\"description\":\"One SQLite SELECT statement.\"}},"
    "\"required\":[\"query\"]}}}," TOOL_SUBMIT "]";

static const char regex_tools[] =
    "[{\"type\":\"function\",\"function\":{\"name\":\"sample\",\"description\":\"Shows the "
    "first n example lines, one per line as '<line_id>: <text>'.\",\"parameters\":{\"type\":"
    "\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"description\":\"How many lines, "
    "1 to 20 (default 5).\"}},\"required\":[]}}},"
    "{\"type\":\"function\",\"function\":{\"name\":\"try\",\"description\":\"Shows what a "
    "pattern extracts from each example line: the full matches of re.finditer(pattern, line), "
    "as a JSON list per line.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"pattern\":"
    "{\"type\":\"string\",\"description\":\"A Python re pattern.\"}},\"required\":"
    "[\"pattern\"]}}}," TOOL_SUBMIT "]";

const char *vat_env_tools_json(const char *tools)
{
    return tools && strcmp(tools, "regex") == 0 ? regex_tools : data_tools;
}

/* ---- CSV records ----------------------------------------------------------- */

/* A parsed CSV file: records of fields (RFC 4180 as the sql checker's
 * loader reads it: comma, double quotes doubled inside a quoted field,
 * records ended by LF or CRLF). */
struct csv_rec {
    char **f;
    size_t n;
};
struct csv_file {
    struct csv_rec *r;
    size_t n, cap;
};

static void csv_free(struct csv_file *c)
{
    for (size_t i = 0; i < c->n; i++) {
        for (size_t k = 0; k < c->r[i].n; k++)
            free(c->r[i].f[k]);
        free(c->r[i].f);
    }
    free(c->r);
    memset(c, 0, sizeof *c);
}

/* 0, or -1 with why set. */
static int csv_parse(const char *s, size_t n, struct csv_file *c, char *why, size_t cap)
{
    memset(c, 0, sizeof *c);
    if (memchr(s, 0, n)) {
        snprintf(why, cap, "holds a NUL byte");
        return -1;
    }
    size_t i = 0;
    struct vat_buf field = VAT_BUF_INIT;
    while (i < n) {
        if (c->n == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 64;
            c->r = vat_xrealloc(c->r, c->cap * sizeof *c->r);
        }
        struct csv_rec *rec = &c->r[c->n++];
        memset(rec, 0, sizeof *rec);
        size_t fcap = 0;
        for (;;) {
            field.len = 0;
            vat_buf_putn(&field, "", 0);
            if (i < n && s[i] == '"') {
                i++;
                for (;;) {
                    if (i >= n) {
                        snprintf(why, cap, "record %zu: an unterminated quoted field", c->n);
                        vat_buf_release(&field);
                        return -1;
                    }
                    if (s[i] == '"') {
                        if (i + 1 < n && s[i + 1] == '"') {
                            vat_buf_putc(&field, '"');
                            i += 2;
                            continue;
                        }
                        i++;
                        break;
                    }
                    vat_buf_putc(&field, s[i++]);
                }
            } else {
                while (i < n && s[i] != ',' && s[i] != '\n' && s[i] != '\r') {
                    if (s[i] == '"') {
                        snprintf(why, cap, "record %zu: a quote inside an unquoted field", c->n);
                        vat_buf_release(&field);
                        return -1;
                    }
                    vat_buf_putc(&field, s[i++]);
                }
            }
            if (rec->n == fcap) {
                fcap = fcap ? 2 * fcap : 8;
                rec->f = vat_xrealloc(rec->f, fcap * sizeof *rec->f);
            }
            rec->f[rec->n++] = vat_xstrndup(field.data ? field.data : "", field.len);
            if (i >= n)
                break;
            if (s[i] == ',') {
                i++;
                continue;
            }
            if (s[i] == '\n') {
                i++;
                break;
            }
            if (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') {
                i += 2;
                break;
            }
            snprintf(why, cap, "record %zu: a field is followed by a stray byte", c->n);
            vat_buf_release(&field);
            return -1;
        }
    }
    vat_buf_release(&field);
    return 0;
}

/* ---- loading tables into an image ----------------------------------------- */

static bool type_ok(const char *t)
{
    static const char *const ok[] = {"TEXT", "INTEGER", "REAL", "NUMERIC"};
    for (size_t i = 0; t && i < sizeof ok / sizeof *ok; i++)
        if (strcmp(t, ok[i]) == 0)
            return true;
    return false;
}

/* One table being loaded: its name, columns and rows of cells. */
struct load_table {
    const char *name;
    size_t ncol;
    const char **col, **type;
    char **cell; /* row-major, ncol per row; NULL is an empty cell */
    size_t nrow, cap;
};

static void lt_free(struct load_table *t)
{
    for (size_t i = 0; i < t->nrow * t->ncol; i++)
        free(t->cell[i]);
    free(t->cell);
    free(t->col);
    free(t->type);
    memset(t, 0, sizeof *t);
}

static void lt_row(struct load_table *t, char **cells)
{
    if ((t->nrow + 1) * t->ncol > t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64 * t->ncol;
        t->cell = vat_xrealloc(t->cell, t->cap * sizeof *t->cell);
    }
    memcpy(t->cell + t->nrow * t->ncol, cells, t->ncol * sizeof *cells);
    t->nrow++;
}

static int load_fail(char *why, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int load_fail(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* The columns of table spec ts into t (names and types checked). */
static int lt_columns(struct load_table *t, const json_t *ts, char *why, size_t cap)
{
    static const char *const note_col[] = {"line", "text"}, *const note_type[] = {"INTEGER",
                                                                                    "TEXT"};
    t->name = json_string_value(json_object_get(ts, "name"));
    if (!t->name || !*t->name || strlen(t->name) > 64)
        return load_fail(why, cap, "a table needs a name of 1 to 64 bytes");
    if (json_object_get(ts, "notes")) {
        t->ncol = 2;
        t->col = vat_xcalloc(2, sizeof *t->col);
        t->type = vat_xcalloc(2, sizeof *t->type);
        for (int k = 0; k < 2; k++) {
            t->col[k] = note_col[k];
            t->type[k] = note_type[k];
        }
        return 0;
    }
    const json_t *cols = json_object_get(ts, "columns");
    t->ncol = json_array_size(cols);
    if (!t->ncol || t->ncol > 64)
        return load_fail(why, cap, "table '%s' needs 1 to 64 columns", t->name);
    t->col = vat_xcalloc(t->ncol, sizeof *t->col);
    t->type = vat_xcalloc(t->ncol, sizeof *t->type);
    for (size_t k = 0; k < t->ncol; k++) {
        const json_t *c = json_array_get(cols, k);
        t->col[k] = json_string_value(json_array_get(c, 0));
        t->type[k] = json_string_value(json_array_get(c, 1));
        if (!t->col[k] || !*t->col[k] || strlen(t->col[k]) > 64 || !type_ok(t->type[k]))
            return load_fail(why, cap, "table '%s': column %zu needs a name and a type", t->name,
                             k + 1);
    }
    return 0;
}

static long spec_count(const json_t *ts, const char *key)
{
    const json_t *j = json_object_get(ts, key);
    return json_is_integer(j) && json_integer_value(j) >= 0 && json_integer_value(j) <= 1000000
               ? (long)json_integer_value(j)
               : -1;
}

/* A CSV table of spec ts from the parsed file. */
static int lt_csv(struct load_table *t, const json_t *ts, const struct csv_file *csv, char *why,
                  size_t cap)
{
    long notes = spec_count(ts, "notes");
    if (json_object_get(ts, "notes")) {
        if (notes < 0 || (size_t)notes > csv->n)
            return load_fail(why, cap, "table '%s': 'notes' must count records of the file",
                             t->name);
        for (long r = 0; r < notes; r++) {
            struct vat_buf text = VAT_BUF_INIT;
            vat_buf_putn(&text, "", 0);
            for (size_t k = 0; k < csv->r[r].n; k++) {
                if (!csv->r[r].f[k][0])
                    continue;
                if (text.len)
                    vat_buf_putc(&text, ' ');
                vat_buf_puts(&text, csv->r[r].f[k]);
            }
            char *cells[2] = {vat_xasprintf("%ld", r + 1), vat_buf_detach(&text)};
            lt_row(t, cells);
        }
        return 0;
    }
    long skip = spec_count(ts, "skip");
    if (skip < 0 || (size_t)skip > csv->n)
        return load_fail(why, cap, "table '%s': 'skip' must count records of the file", t->name);
    for (size_t r = (size_t)skip; r < csv->n; r++) {
        const struct csv_rec *rec = &csv->r[r];
        if (rec->n != t->ncol)
            return load_fail(why, cap, "table '%s': record %zu has %zu fields, not %zu", t->name,
                             r + 1, rec->n, t->ncol);
        char **cells = vat_xcalloc(t->ncol, sizeof *cells);
        for (size_t k = 0; k < t->ncol; k++)
            cells[k] = rec->f[k][0] ? vat_xstrdup(rec->f[k]) : NULL;
        lt_row(t, cells);
        free(cells);
    }
    return 0;
}

/* An xlsx table of spec ts from the workbook. */
static int lt_xlsx(struct load_table *t, const json_t *ts, const struct vat_xl_book *book,
                   char *why, size_t cap)
{
    const char *sheet = json_string_value(json_object_get(ts, "sheet"));
    const struct vat_xl_sheet *s = sheet ? vat_xl_find_sheet(book, sheet) : NULL;
    if (!s)
        return load_fail(why, cap, "table '%s': no sheet '%s'", t->name, sheet ? sheet : "");
    char buf[64];
    if (json_object_get(ts, "notes")) {
        long notes = spec_count(ts, "notes");
        if (notes < 0 || notes > (long)vat_xl_nrows(s))
            return load_fail(why, cap, "table '%s': 'notes' must count rows of the sheet",
                             t->name);
        uint32_t nc = vat_xl_ncols(s);
        for (long r = 0; r < notes; r++) {
            struct vat_buf text = VAT_BUF_INIT;
            for (uint32_t k = 0; k < nc; k++) {
                const char *x = vat_xl_text(vat_xl_get(s, (uint32_t)r, k), buf, sizeof buf);
                if (!*x)
                    continue;
                if (text.len)
                    vat_buf_putc(&text, ' ');
                vat_buf_puts(&text, x);
            }
            char *cells[2] = {vat_xasprintf("%ld", r + 1), vat_buf_detach(&text)};
            lt_row(t, cells);
        }
        return 0;
    }
    const char *range = json_string_value(json_object_get(ts, "range"));
    const char *colon = range ? strchr(range, ':') : NULL;
    uint32_t r1, c1, r2, c2;
    if (!colon || vat_xl_parse_addr(range, (size_t)(colon - range), &r1, &c1) != 0 ||
        vat_xl_parse_addr(colon + 1, strlen(colon + 1), &r2, &c2) != 0 || r2 < r1 ||
        c2 < c1 || c2 - c1 + 1 != t->ncol || r2 - r1 > 1000000)
        return load_fail(why, cap, "table '%s': 'range' must span its columns", t->name);
    char **cells = vat_xcalloc(t->ncol, sizeof *cells);
    for (uint32_t r = r1; r <= r2; r++) {
        for (uint32_t k = c1; k <= c2; k++) {
            const char *x = vat_xl_text(vat_xl_get(s, r, k), buf, sizeof buf);
            cells[k - c1] = *x ? vat_xstrdup(x) : NULL;
        }
        lt_row(t, cells);
    }
    free(cells);
    return 0;
}

/* Builds the image of the loaded tables (*img malloc'd), as the sql
 * checker's loader builds one table's: CREATE TABLE "T" ("c" type, ...),
 * every cell bound as text, an empty cell NULL.  0 or -1 with why. */
static int tables_image(struct load_table *lt, size_t n, unsigned char **img, size_t *img_n,
                        char *why, size_t cap)
{
    sqlite3 *db = NULL;
    int rc = -1;
    if (sqlite3_open_v2(":memory:", &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY |
                            SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        load_fail(why, cap, "cannot open an in-memory database");
        goto done;
    }
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        struct load_table *t = &lt[i];
        struct vat_buf create = VAT_BUF_INIT, insert = VAT_BUF_INIT;
        vat_buf_puts(&create, "CREATE TABLE ");
        vat_buf_put_quoted(&create, t->name, '"');
        vat_buf_puts(&create, " (");
        vat_buf_puts(&insert, "INSERT INTO ");
        vat_buf_put_quoted(&insert, t->name, '"');
        vat_buf_puts(&insert, " VALUES (");
        for (size_t k = 0; k < t->ncol; k++) {
            if (k) {
                vat_buf_puts(&create, ", ");
                vat_buf_puts(&insert, ", ");
            }
            vat_buf_put_quoted(&create, t->col[k], '"');
            vat_buf_printf(&create, " %s", t->type[k]);
            vat_buf_putc(&insert, '?');
        }
        vat_buf_puts(&create, ")");
        vat_buf_puts(&insert, ")");
        sqlite3_stmt *st = NULL;
        bool ok = sqlite3_exec(db, create.data, NULL, NULL, NULL) == SQLITE_OK &&
                  sqlite3_prepare_v2(db, insert.data, -1, &st, NULL) == SQLITE_OK;
        for (size_t r = 0; ok && r < t->nrow; r++) {
            for (size_t k = 0; k < t->ncol; k++) {
                const char *x = t->cell[r * t->ncol + k];
                if (x)
                    sqlite3_bind_text(st, (int)k + 1, x, -1, SQLITE_STATIC);
                else
                    sqlite3_bind_null(st, (int)k + 1);
            }
            ok = sqlite3_step(st) == SQLITE_DONE && sqlite3_reset(st) == SQLITE_OK;
        }
        if (!ok)
            load_fail(why, cap, "table '%s' cannot be loaded: %s", t->name, sqlite3_errmsg(db));
        sqlite3_finalize(st);
        vat_buf_release(&create);
        vat_buf_release(&insert);
        if (!ok)
            goto done;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        load_fail(why, cap, "cannot commit the loaded tables");
        goto done;
    }
    sqlite3_int64 sz = 0;
    unsigned char *ser = sqlite3_serialize(db, "main", &sz, 0);
    if (!ser || sz <= 0) {
        sqlite3_free(ser);
        load_fail(why, cap, "cannot serialise the loaded tables");
        goto done;
    }
    *img = vat_xmalloc((size_t)sz);
    memcpy(*img, ser, (size_t)sz);
    *img_n = (size_t)sz;
    sqlite3_free(ser);
    rc = 0;
done:
    sqlite3_close(db);
    return rc;
}

/* ---- the environment of a task -------------------------------------------- */

struct rx_line {
    char *id, *text;
};

struct vat_env_task {
    bool regex;
    /* data tools */
    struct vat_sql_db *db;
    char **table; /* names, NULL-ended */
    size_t ntables;
    char *describe;
    size_t fixed; /* what vat_env_task_bytes counts besides db */
    /* regex tools */
    struct rx_line *line;
    size_t nlines;
    json_t *rx_spec; /* the checker's limits, no cases */
};

void vat_env_task_free(struct vat_env_task *et)
{
    if (!et)
        return;
    vat_sql_db_free(et->db);
    for (size_t i = 0; i < et->ntables; i++)
        free(et->table[i]);
    free(et->table);
    free(et->describe);
    for (size_t i = 0; i < et->nlines; i++) {
        free(et->line[i].id);
        free(et->line[i].text);
    }
    free(et->line);
    json_decref(et->rx_spec);
    free(et);
}

const char *vat_env_task_tools(const struct vat_env_task *et)
{
    return et && et->regex ? "regex" : "data";
}

const char *vat_env_task_describe(const struct vat_env_task *et)
{
    return et && et->describe ? et->describe : "";
}

const char *vat_env_task_table(const struct vat_env_task *et, size_t i)
{
    return et && i < et->ntables ? et->table[i] : NULL;
}

size_t vat_env_task_bytes(const struct vat_env_task *et)
{
    return et ? et->fixed + vat_sql_db_bytes(et->db) : 0;
}

/* What et holds that does not grow: its struct, table names, description,
 * example lines (each with the allocator's headers) and the regex limits
 * (twice their JSON text, for jansson's structs). */
static void count_fixed(struct vat_env_task *et)
{
    size_t n = sizeof *et + (et->describe ? strlen(et->describe) + 1 : 0);
    for (size_t i = 0; i < et->ntables; i++)
        n += sizeof *et->table + strlen(et->table[i]) + 1 + 16;
    for (size_t i = 0; i < et->nlines; i++)
        n += sizeof *et->line + strlen(et->line[i].id) + strlen(et->line[i].text) + 2 + 32;
    if (et->rx_spec) {
        char *text = vat_json_dumps(et->rx_spec);
        n += 2 * strlen(text);
        free(text);
    }
    et->fixed = n;
}

static void table_add(struct vat_env_task *et, const char *name)
{
    et->table = vat_xrealloc(et->table, (et->ntables + 2) * sizeof *et->table);
    et->table[et->ntables++] = vat_xstrdup(name);
    et->table[et->ntables] = NULL;
}

static void describe_table(struct vat_buf *b, const char *name, long long rows,
                           const char *const *col, const char *const *type, size_t ncol)
{
    if (b->len)
        vat_buf_putc(b, '\n');
    vat_buf_printf(b, "table %s: %lld row%s\n", name, rows, rows == 1 ? "" : "s");
    for (size_t k = 0; k < ncol; k++)
        vat_buf_printf(b, "  %s%s%s\n", col[k], type[k] && *type[k] ? " " : "",
                       type[k] ? type[k] : "");
}

/* The description of an SQLite image's tables named in et->table, read
 * through a private read-only connection.  0 or -1 with why. */
static int describe_image(struct vat_env_task *et, const unsigned char *img, size_t n,
                          struct vat_buf *b, char *why, size_t cap)
{
    sqlite3 *db = NULL;
    unsigned char *copy = sqlite3_malloc64(n);
    int rc = -1;
    if (!copy ||
        sqlite3_open_v2(":memory:", &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        sqlite3_free(copy);
        load_fail(why, cap, "cannot open the fixture");
        goto done;
    }
    memcpy(copy, img, n);
    /* a WAL image reads in rollback mode (the pages are the same) */
    if (n > 19) {
        copy[18] = copy[18] == 2 ? 1 : copy[18];
        copy[19] = copy[19] == 2 ? 1 : copy[19];
    }
    if (sqlite3_deserialize(db, "main", copy, (sqlite3_int64)n, (sqlite3_int64)n,
                            SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY) !=
        SQLITE_OK) {
        load_fail(why, cap, "cannot load the fixture");
        goto done;
    }
    for (size_t i = 0; i < et->ntables; i++) {
        char *q = sqlite3_mprintf("SELECT name, type FROM pragma_table_info(%Q)", et->table[i]);
        sqlite3_stmt *st = NULL;
        const char **col = NULL, **type = NULL;
        size_t ncol = 0;
        char **own = NULL;
        if (q && sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
            while (sqlite3_step(st) == SQLITE_ROW) {
                own = vat_xrealloc(own, (2 * ncol + 2) * sizeof *own);
                own[2 * ncol] = vat_xstrdup((const char *)sqlite3_column_text(st, 0)
                                                ? (const char *)sqlite3_column_text(st, 0)
                                                : "");
                own[2 * ncol + 1] = vat_xstrdup((const char *)sqlite3_column_text(st, 1)
                                                    ? (const char *)sqlite3_column_text(st, 1)
                                                    : "");
                ncol++;
            }
        }
        sqlite3_finalize(st);
        sqlite3_free(q);
        long long rows = -1;
        if (ncol) {
            q = sqlite3_mprintf("SELECT count(*) FROM \"%w\"", et->table[i]);
            if (q && sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK &&
                sqlite3_step(st) == SQLITE_ROW)
                rows = sqlite3_column_int64(st, 0);
            sqlite3_finalize(st);
            sqlite3_free(q);
        }
        if (ncol && rows >= 0) {
            col = vat_xcalloc(ncol, sizeof *col);
            type = vat_xcalloc(ncol, sizeof *type);
            for (size_t k = 0; k < ncol; k++) {
                col[k] = own[2 * k];
                type[k] = own[2 * k + 1];
            }
            describe_table(b, et->table[i], rows, col, type, ncol);
        }
        for (size_t k = 0; k < 2 * ncol; k++)
            free(own[k]);
        free(own);
        free(col);
        free(type);
        if (!ncol || rows < 0) {
            load_fail(why, cap, "the fixture has no table '%s'", et->table[i]);
            goto done;
        }
    }
    rc = 0;
done:
    sqlite3_close(db);
    return rc;
}

static struct vat_env_task *env_fail(struct vat_env_task *et, struct vat_verdict *err,
                                     const char *code, const char *rel, const char *why)
{
    *err = vat_verdict_make(false, 0, code, "env of '%.100s': %.300s", rel ? rel : "", why);
    vat_env_task_free(et);
    return NULL;
}

/* The sandbox spec of the data tools: the tables, the checker's limits. */
static json_t *db_spec(const struct vat_env_task *et)
{
    json_t *s = json_object(), *tables = json_array();
    for (size_t i = 0; i < et->ntables; i++)
        json_array_append_new(tables, json_string(et->table[i]));
    json_object_set_new(s, "dialect", json_string("sqlite"));
    json_object_set_new(s, "tables", tables);
    json_object_set_new(s, "max_rows", json_integer(VAT_EP_QUERY_ROWS));
    return s;
}

struct vat_env_task *vat_env_task_new(const json_t *spec, const json_t *checker,
                                      const char *root, const char *sha256,
                                      struct vat_verdict *err)
{
    struct vat_env_task *et = vat_xcalloc(1, sizeof *et);
    char why[400];
    const char *tools = json_string_value(json_object_get(spec, "tools"));
    const char *rel = json_string_value(json_object_get(spec, "fixture"));
    const char *format = json_string_value(json_object_get(spec, "format"));
    if (!tools || (strcmp(tools, "data") != 0 && strcmp(tools, "regex") != 0))
        return env_fail(et, err, VAT_INTERNAL, rel, "'tools' must be \"data\" or \"regex\"");
    if (!rel || !vat_path_is_safe(rel))
        return env_fail(et, err, VAT_INTERNAL, rel, "'fixture' must be a safe relative path");
    if (!format || (strcmp(format, "csv") != 0 && strcmp(format, "sqlite") != 0 &&
                    strcmp(format, "xlsx") != 0))
        return env_fail(et, err, VAT_INTERNAL, rel, "'format' must be csv, sqlite or xlsx");
    et->regex = strcmp(tools, "regex") == 0;
    char *data = NULL;
    size_t n = 0;
    struct vat_err ve = {{0}};
    if (vat_read_file_beneath(root, rel, (size_t)64 << 20, &data, &n, &ve) != 0)
        return env_fail(et, err, VAT_INTERNAL, rel, ve.msg);
    if (sha256) {
        char hex[65];
        vat_sha256_hex(data, n, hex);
        if (strcmp(hex, sha256) != 0) {
            free(data);
            return env_fail(et, err, VAT_TAMPERED, rel,
                            "the fixture does not match the sha256 the tables record");
        }
    }
    if (et->regex) {
        struct csv_file csv;
        if (strcmp(format, "csv") != 0 || csv_parse(data, n, &csv, why, sizeof why) != 0) {
            free(data);
            return env_fail(et, err, VAT_INTERNAL, rel,
                            strcmp(format, "csv") != 0 ? "example lines must be a csv file" : why);
        }
        free(data);
        if (csv.n < 1 || csv.r[0].n != 2 || strcmp(csv.r[0].f[0], "line_id") != 0 ||
            strcmp(csv.r[0].f[1], "text") != 0) {
            csv_free(&csv);
            return env_fail(et, err, VAT_INTERNAL, rel,
                            "the example lines' header must be line_id,text");
        }
        et->line = vat_xcalloc(csv.n, sizeof *et->line);
        for (size_t r = 1; r < csv.n; r++) {
            if (csv.r[r].n != 2) {
                csv_free(&csv);
                return env_fail(et, err, VAT_INTERNAL, rel, "an example line needs two fields");
            }
            et->line[et->nlines].id = vat_xstrdup(csv.r[r].f[0]);
            et->line[et->nlines++].text = vat_xstrdup(csv.r[r].f[1]);
        }
        csv_free(&csv);
        /* try() runs under the checker's limits; the cases stay behind */
        et->rx_spec = json_object();
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)checker, k, x) {
            if (strcmp(k, "cases") != 0 && strcmp(k, "expected") != 0)
                json_object_set(et->rx_spec, k, x);
        }
        count_fixed(et);
        return et;
    }
    const json_t *tables = json_object_get(spec, "tables");
    if (!json_is_array(tables) || json_array_size(tables) == 0 || json_array_size(tables) > 16) {
        free(data);
        return env_fail(et, err, VAT_INTERNAL, rel, "'tables' must list 1 to 16 tables");
    }
    unsigned char *img = NULL;
    size_t img_n = 0;
    struct vat_buf desc = VAT_BUF_INIT;
    if (strcmp(format, "sqlite") == 0) {
        for (size_t i = 0; i < json_array_size(tables); i++) {
            const char *name = json_string_value(json_array_get(tables, i));
            if (!name || !*name) {
                free(data);
                return env_fail(et, err, VAT_INTERNAL, rel, "'tables' must hold names");
            }
            table_add(et, name);
        }
        img = (unsigned char *)data;
        img_n = n;
        data = NULL;
        if (img_n < 512 || memcmp(img, "SQLite format 3", 16) != 0 ||
            describe_image(et, img, img_n, &desc, why, sizeof why) != 0) {
            free(img);
            vat_buf_release(&desc);
            return env_fail(et, err, VAT_INTERNAL, rel,
                            img_n < 512 ? "the fixture is not an sqlite database" : why);
        }
    } else {
        size_t nt = json_array_size(tables);
        struct load_table *lt = vat_xcalloc(nt, sizeof *lt);
        struct csv_file csv = {0};
        struct vat_xl_book book = VAT_XL_BOOK_INIT;
        int rc = 0;
        if (strcmp(format, "csv") == 0)
            rc = csv_parse(data, n, &csv, why, sizeof why);
        else if (vat_xl_read_mem(&book, data, n, rel, &ve) != 0)
            rc = load_fail(why, sizeof why, "%s", ve.msg);
        free(data);
        data = NULL;
        for (size_t i = 0; rc == 0 && i < nt; i++) {
            const json_t *ts = json_array_get(tables, i);
            rc = lt_columns(&lt[i], ts, why, sizeof why);
            for (size_t k = 0; rc == 0 && k < i; k++)
                if (strcmp(lt[k].name, lt[i].name) == 0)
                    rc = load_fail(why, sizeof why, "table '%s' is named twice", lt[i].name);
            if (rc == 0)
                rc = csv.r ? lt_csv(&lt[i], ts, &csv, why, sizeof why)
                           : lt_xlsx(&lt[i], ts, &book, why, sizeof why);
        }
        if (rc == 0)
            rc = tables_image(lt, nt, &img, &img_n, why, sizeof why);
        for (size_t i = 0; rc == 0 && i < nt; i++) {
            table_add(et, lt[i].name);
            describe_table(&desc, lt[i].name, (long long)lt[i].nrow, lt[i].col, lt[i].type,
                           lt[i].ncol);
        }
        for (size_t i = 0; i < nt; i++)
            lt_free(&lt[i]);
        free(lt);
        csv_free(&csv);
        vat_xl_release(&book);
        if (rc != 0) {
            vat_buf_release(&desc);
            return env_fail(et, err, VAT_INTERNAL, rel, why);
        }
    }
    et->describe = vat_buf_detach(&desc);
    json_t *s = db_spec(et);
    struct vat_verdict v;
    et->db = vat_sql_db_new(s, img, img_n, &v);
    json_decref(s);
    if (!et->db)
        return env_fail(et, err, VAT_INTERNAL, rel, v.reason);
    count_fixed(et);
    return et;
}

/* ---- an episode ------------------------------------------------------------- */

struct vat_ep {
    const struct vat_env_task *et;
    vat_ep_scorer scorer;
    void *ctx;
    int calls, sql_calls;
    long rows;
    size_t obs_total;
    bool done, is_trap;
    double reward;
    struct vat_verdict verdict;
    struct vat_buf obs;
};

struct vat_ep *vat_ep_new(const struct vat_env_task *et, vat_ep_scorer scorer, void *ctx)
{
    struct vat_ep *ep = vat_xcalloc(1, sizeof *ep);
    ep->et = et;
    ep->scorer = scorer;
    ep->ctx = ctx;
    ep->verdict.code = "";
    return ep;
}

void vat_ep_free(struct vat_ep *ep)
{
    if (!ep)
        return;
    vat_buf_release(&ep->obs);
    free(ep);
}

const char *vat_ep_call_last(const struct vat_ep *ep, size_t *olen)
{
    if (olen)
        *olen = ep && ep->obs.data ? ep->obs.len : 0;
    return ep && ep->obs.data ? ep->obs.data : "";
}

bool vat_ep_done(const struct vat_ep *ep)
{
    return ep && ep->done;
}

double vat_ep_reward(const struct vat_ep *ep)
{
    return ep ? ep->reward : 0;
}

const struct vat_verdict *vat_ep_verdict(const struct vat_ep *ep)
{
    return ep ? &ep->verdict : NULL;
}

bool vat_ep_is_trap(const struct vat_ep *ep)
{
    return ep && ep->is_trap;
}

int vat_ep_calls(const struct vat_ep *ep)
{
    return ep ? ep->calls : 0;
}

/* Appends untrusted text: valid UTF-8 kept, control bytes escaped, at
 * most max bytes of s (then "..."). */
static void put_text(struct vat_buf *b, const char *s, size_t n, size_t max, bool cell)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t shown = 0;
    for (size_t i = 0; i < n;) {
        if (shown >= max) {
            vat_buf_puts(b, "...");
            return;
        }
        size_t k = vat_utf8_seq(u + i, n - i);
        if (k == 0) {
            vat_buf_printf(b, "\\x%02x", u[i]);
            i++;
            shown++;
            continue;
        }
        if (k == 1) {
            char c = s[i];
            if (c == '\n')
                vat_buf_puts(b, "\\n");
            else if (c == '\r')
                vat_buf_puts(b, "\\r");
            else if (c == '\t')
                vat_buf_puts(b, "\\t");
            else if (cell && c == '\\')
                vat_buf_puts(b, "\\\\");
            else if (cell && c == '|')
                vat_buf_puts(b, "\\|");
            else if ((unsigned char)c < 0x20 || c == 0x7f)
                vat_buf_printf(b, "\\x%02x", (unsigned char)c);
            else
                vat_buf_putc(b, c);
        } else {
            vat_buf_putn(b, s + i, k);
        }
        i += k;
        shown += k;
    }
}

static void put_value(struct vat_buf *b, const json_t *v)
{
    char num[40];
    if (json_is_integer(v)) {
        vat_buf_printf(b, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        /* as the sqlite3 shell shows a REAL (15 significant digits), and
         * always as one: 12.0, not 12 */
        snprintf(num, sizeof num, "%.15g", json_real_value(v));
        vat_buf_puts(b, num);
        if (!strpbrk(num, ".eEn"))
            vat_buf_puts(b, ".0");
    } else if (json_is_string(v)) {
        put_text(b, json_string_value(v), json_string_length(v), VAT_EP_CELL_BYTES, true);
    } else {
        vat_buf_puts(b, "NULL");
    }
}

/* A result as a text table: the column names, one line per row (values
 * separated by " | "), then the count and any cut. */
static void render_rows(struct vat_buf *b, const json_t *cols, const json_t *rows)
{
    size_t ncol = json_array_size(cols), nrow = json_array_size(rows);
    for (size_t c = 0; c < ncol; c++) {
        if (c)
            vat_buf_puts(b, " | ");
        const json_t *name = json_array_get(cols, c);
        put_text(b, json_string_value(name), json_string_length(name), VAT_EP_CELL_BYTES, true);
    }
    vat_buf_putc(b, '\n');
    size_t shown = 0;
    /* room for the footer within one observation */
    size_t room = VAT_EP_OBS_BYTES - 160;
    for (; shown < nrow && shown < VAT_EP_SHOW_ROWS; shown++) {
        size_t before = b->len;
        const json_t *row = json_array_get(rows, shown);
        for (size_t c = 0; c < ncol; c++) {
            if (c)
                vat_buf_puts(b, " | ");
            put_value(b, json_array_get(row, c));
        }
        vat_buf_putc(b, '\n');
        if (b->len > room) {
            b->len = before;
            b->data[b->len] = 0;
            break;
        }
    }
    if (shown == nrow)
        vat_buf_printf(b, "(%zu row%s)", nrow, nrow == 1 ? "" : "s");
    else
        vat_buf_printf(b, "(the first %zu of %zu rows shown)", shown, nrow);
}

static void obs_error(struct vat_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void obs_error(struct vat_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vat_buf_puts(b, "error: ");
    vat_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

/* The checker's verdict on a query, as an observation. */
static void obs_verdict(struct vat_buf *b, const struct vat_verdict *v)
{
    vat_buf_printf(b, "error (%s): ", v->code);
    vat_buf_puts(b, v->reason);
}

/* A query through the sandbox, rendered. */
static void run_query(struct vat_ep *ep, const char *q, size_t qlen)
{
    struct vat_buf *b = &ep->obs;
    if (ep->sql_calls >= VAT_EP_MAX_SQL) {
        obs_error(b, "the episode's %d sql and sample calls are spent; submit an answer",
                  VAT_EP_MAX_SQL);
        return;
    }
    ep->sql_calls++;
    json_t *cols = NULL, *rows = NULL;
    struct vat_verdict v;
    if (vat_sql_db_query(ep->et->db, q, qlen, VAT_EP_QUERY_ROWS, &cols, &rows, &v) != 0) {
        obs_verdict(b, &v);
        return;
    }
    long n = (long)json_array_size(rows);
    if (ep->rows + n > VAT_EP_MAX_ROWS) {
        obs_error(b, "the query returns %ld rows, past the %ld left of the episode's %d; "
                     "aggregate or filter",
                  n, VAT_EP_MAX_ROWS - ep->rows, VAT_EP_MAX_ROWS);
    } else {
        ep->rows += n;
        render_rows(b, cols, rows);
    }
    json_decref(cols);
    json_decref(rows);
}

/* The arguments as an object whose members are all among names[]
 * (required ones flagged).  NULL with an error observation. */
static json_t *args_read(struct vat_ep *ep, const char *tool, const char *args, size_t alen,
                         const char *const *names, const bool *required)
{
    size_t i = 0;
    while (i < alen && (args[i] == ' ' || args[i] == '\n' || args[i] == '\t' || args[i] == '\r'))
        i++;
    json_t *a = i == alen ? json_object()
                          : json_loadb(args, alen,
                                       JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL,
                                       NULL);
    if (!json_is_object(a)) {
        json_decref(a);
        obs_error(&ep->obs, "the arguments of %s must be a JSON object", tool);
        return NULL;
    }
    const char *k;
    json_t *x;
    json_object_foreach(a, k, x) {
        size_t j = 0;
        while (names[j] && strcmp(names[j], k) != 0)
            j++;
        if (!names[j]) {
            obs_error(&ep->obs, "%s takes no argument '", tool);
            put_text(&ep->obs, k, strlen(k), 40, false);
            vat_buf_putc(&ep->obs, '\'');
            json_decref(a);
            return NULL;
        }
    }
    for (size_t j = 0; names[j]; j++)
        if (required[j] && !json_object_get(a, names[j])) {
            obs_error(&ep->obs, "%s needs the argument '%s'", tool, names[j]);
            json_decref(a);
            return NULL;
        }
    return a;
}

/* The string argument key of a (present), or NULL with an error. */
static const char *arg_string(struct vat_ep *ep, const char *tool, const json_t *a,
                              const char *key, size_t *len)
{
    const json_t *x = json_object_get(a, key);
    if (!json_is_string(x)) {
        obs_error(&ep->obs, "the argument '%s' of %s must be a string", key, tool);
        return NULL;
    }
    *len = json_string_length(x);
    return json_string_value(x);
}

/* n of sample(): default 5, 1 to VAT_EP_SAMPLE_MAX.  -1 with an error. */
static long arg_n(struct vat_ep *ep, const json_t *a)
{
    const json_t *x = json_object_get(a, "n");
    if (!x)
        return 5;
    double d = json_number_value(x);
    if (!json_is_number(x) || d != floor(d) || d < 1 || d > VAT_EP_SAMPLE_MAX) {
        obs_error(&ep->obs, "the argument 'n' of sample must be an integer from 1 to %d",
                  VAT_EP_SAMPLE_MAX);
        return -1;
    }
    return (long)d;
}

static void tool_describe(struct vat_ep *ep, const char *args, size_t alen)
{
    static const char *const names[] = {NULL};
    json_t *a = args_read(ep, "describe", args, alen, names, NULL);
    if (!a)
        return;
    json_decref(a);
    vat_buf_puts(&ep->obs, ep->et->describe);
    if (ep->obs.len && ep->obs.data[ep->obs.len - 1] == '\n')
        ep->obs.data[--ep->obs.len] = 0;
}

static void tool_sample_data(struct vat_ep *ep, const char *args, size_t alen)
{
    static const char *const names[] = {"table", "n", NULL};
    static const bool req[] = {true, false};
    json_t *a = args_read(ep, "sample", args, alen, names, req);
    if (!a)
        return;
    size_t tlen;
    const char *table = arg_string(ep, "sample", a, "table", &tlen);
    long n = table ? arg_n(ep, a) : -1;
    size_t i = 0;
    if (n > 0) {
        while (vat_env_task_table(ep->et, i) &&
               !(strlen(ep->et->table[i]) == tlen && memcmp(ep->et->table[i], table, tlen) == 0))
            i++;
        if (!vat_env_task_table(ep->et, i)) {
            obs_error(&ep->obs, "no table '");
            put_text(&ep->obs, table, tlen, 64, false);
            vat_buf_puts(&ep->obs, "'; describe lists the tables");
        } else {
            struct vat_buf q = VAT_BUF_INIT;
            vat_buf_puts(&q, "SELECT * FROM ");
            vat_buf_put_quoted(&q, ep->et->table[i], '"');
            vat_buf_printf(&q, " LIMIT %ld", n);
            run_query(ep, q.data, q.len);
            vat_buf_release(&q);
        }
    }
    json_decref(a);
}

static void tool_sql(struct vat_ep *ep, const char *args, size_t alen)
{
    static const char *const names[] = {"query", NULL};
    static const bool req[] = {true};
    json_t *a = args_read(ep, "sql", args, alen, names, req);
    if (!a)
        return;
    size_t qlen;
    const char *q = arg_string(ep, "sql", a, "query", &qlen);
    if (q)
        run_query(ep, q, qlen);
    json_decref(a);
}

static void tool_sample_regex(struct vat_ep *ep, const char *args, size_t alen)
{
    static const char *const names[] = {"n", NULL};
    static const bool req[] = {false};
    json_t *a = args_read(ep, "sample", args, alen, names, req);
    if (!a)
        return;
    long n = arg_n(ep, a);
    json_decref(a);
    if (n < 0)
        return;
    size_t k = 0;
    for (; k < ep->et->nlines && k < (size_t)n; k++) {
        const struct rx_line *l = &ep->et->line[k];
        put_text(&ep->obs, l->id, strlen(l->id), 64, false);
        vat_buf_puts(&ep->obs, ": ");
        put_text(&ep->obs, l->text, strlen(l->text), 4 * VAT_EP_CELL_BYTES, false);
        vat_buf_putc(&ep->obs, '\n');
    }
    vat_buf_printf(&ep->obs, "(%zu of %zu example line%s)", k, ep->et->nlines,
                   ep->et->nlines == 1 ? "" : "s");
}

static void tool_try(struct vat_ep *ep, const char *args, size_t alen)
{
    static const char *const names[] = {"pattern", NULL};
    static const bool req[] = {true};
    json_t *a = args_read(ep, "try", args, alen, names, req);
    if (!a)
        return;
    size_t plen;
    const char *p = arg_string(ep, "try", a, "pattern", &plen);
    for (size_t k = 0; p && k < ep->et->nlines; k++) {
        const struct rx_line *l = &ep->et->line[k];
        struct vat_verdict v;
        json_t *got = vat_regex_extract(ep->et->rx_spec, p, plen, l->text, &v);
        if (!got) {
            ep->obs.len = 0;
            obs_verdict(&ep->obs, &v);
            break;
        }
        char *text = vat_json_dumps(got);
        json_decref(got);
        put_text(&ep->obs, l->id, strlen(l->id), 64, false);
        vat_buf_puts(&ep->obs, ": ");
        vat_buf_puts(&ep->obs, text);
        vat_buf_putc(&ep->obs, '\n');
        free(text);
    }
    if (ep->obs.len && ep->obs.data[ep->obs.len - 1] == '\n')
        ep->obs.data[--ep->obs.len] = 0;
    json_decref(a);
}

static void end_episode(struct vat_ep *ep, const struct vat_verdict *v, bool is_trap)
{
    ep->done = true;
    ep->verdict = *v;
    ep->reward = v->score;
    ep->is_trap = is_trap;
}

static void tool_submit(struct vat_ep *ep, const char *args, size_t alen)
{
    static const char *const names[] = {"answer", NULL};
    static const bool req[] = {true};
    json_t *a = args_read(ep, "submit", args, alen, names, req);
    if (!a)
        return;
    size_t len;
    const char *ans = arg_string(ep, "submit", a, "answer", &len);
    if (ans) {
        struct vat_verdict v = vat_verdict_make(false, 0, VAT_INTERNAL, "no scorer");
        bool trap = false;
        if (ep->scorer)
            ep->scorer(ep->ctx, ans, len, &v, &trap);
        end_episode(ep, &v, trap);
        char num[40];
        vat_fmt_real(v.score, num);
        vat_buf_printf(&ep->obs, "submitted: score %s (%s); the episode is over", num, v.code);
    }
    json_decref(a);
}

static bool name_is(const char *name, size_t nlen, const char *w)
{
    return nlen == strlen(w) && memcmp(name, w, nlen) == 0;
}

/* Cuts the observation to one observation's bytes (at a line, with the
 * cut stated). */
static void obs_cap(struct vat_buf *b)
{
    if (b->len <= VAT_EP_OBS_BYTES)
        return;
    size_t keep = VAT_EP_OBS_BYTES - 64;
    while (keep > 0 && b->data[keep] != '\n')
        keep--;
    /* never inside a UTF-8 sequence */
    while (keep > 0 && ((unsigned char)b->data[keep] & 0xc0) == 0x80)
        keep--;
    b->len = keep;
    b->data[b->len] = 0;
    vat_buf_printf(b, "%s(the observation is cut at %d bytes)", keep ? "\n" : "",
                   VAT_EP_OBS_BYTES);
}

const char *vat_ep_call(struct vat_ep *ep, const char *name, size_t nlen, const char *args,
                        size_t alen, size_t *olen)
{
    struct vat_buf *b = &ep->obs;
    b->len = 0;
    vat_buf_putn(b, "", 0);
    if (!name)
        name = "", nlen = 0;
    if (!args)
        args = "", alen = 0;
    bool regex = ep->et->regex;
    if (ep->done) {
        obs_error(b, "the episode is over");
    } else if (ep->calls >= VAT_EP_MAX_CALLS) {
        struct vat_verdict v =
            vat_verdict_make(false, 0, VAT_EPISODE_LIMIT,
                             "the episode's %d tool calls were spent without a submitted answer",
                             VAT_EP_MAX_CALLS);
        end_episode(ep, &v, false);
        obs_error(b, "the episode's %d tool calls are spent; it ends with score 0",
                  VAT_EP_MAX_CALLS);
    } else {
        ep->calls++;
        if (nlen + alen > VAT_EP_ARG_BYTES)
            obs_error(b, "the call is %zu bytes, over the %d-byte limit", nlen + alen,
                      VAT_EP_ARG_BYTES);
        else if (name_is(name, nlen, "submit"))
            tool_submit(ep, args, alen);
        else if (!regex && name_is(name, nlen, "describe"))
            tool_describe(ep, args, alen);
        else if (!regex && name_is(name, nlen, "sql"))
            tool_sql(ep, args, alen);
        else if (name_is(name, nlen, "sample"))
            (regex ? tool_sample_regex : tool_sample_data)(ep, args, alen);
        else if (regex && name_is(name, nlen, "try"))
            tool_try(ep, args, alen);
        else {
            obs_error(b, "no tool '");
            put_text(b, name, nlen, 40, false);
            vat_buf_printf(b, "'; the tools are %s",
                           regex ? "sample, try and submit" : "describe, sample, sql and submit");
        }
        obs_cap(b);
        if (!ep->done && ep->obs_total + b->len > VAT_EP_TOTAL_BYTES) {
            struct vat_verdict v = vat_verdict_make(
                false, 0, VAT_EPISODE_LIMIT,
                "the episode's %d bytes of observations were spent without a submitted answer",
                VAT_EP_TOTAL_BYTES);
            end_episode(ep, &v, false);
            b->len = 0;
            obs_error(b, "this observation would pass the episode's %d bytes of observations; "
                         "it ends with score 0",
                      VAT_EP_TOTAL_BYTES);
        }
        ep->obs_total += b->len;
    }
    if (olen)
        *olen = b->len;
    return b->data;
}

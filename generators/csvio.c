/* csvio.c — CSV tables in memory, written and read back with libcsv, and
 * loaded into SQLite (see csvio.h).  Exports the vat_csv_* functions.
 *
 * The file bytes and vat_csv_to_string come from one serialiser, so a
 * prompt that inlines the CSV shows exactly what lies on disk.  Quoting
 * uses libcsv's csv_write (the buffer twin of csv_fwrite).  The reader is
 * strict and keeps every byte: libcsv's default trimming of spaces and
 * tabs around unquoted fields is switched off, since an RFC 4180 reader
 * (Python's csv, SQLite's .import) keeps them and gold must agree with
 * what such a reader sees.  Blank lines are no records (libcsv skips
 * them), so a row of zero cells does not survive a round trip; a row of
 * one empty cell does, written as "". */
#include "csvio.h"
#include "trace.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>

/* Fixtures are small; anything this large is not one of ours. */
#define CSV_MAX_BYTES ((size_t)64 << 20)

/* ---- building ----------------------------------------------------------- */

void vat_csv_row_begin(struct vat_csv *c)
{
    if (c->nrows == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->row = vat_xrealloc(c->row, c->cap * sizeof *c->row);
    }
    c->row[c->nrows].cell = NULL;
    c->row[c->nrows].n = 0;
    c->nrows++;
}

/* Appends an allocated cell to the last row, taking ownership.  A row's
 * capacity is implied by its length (the next power of two), which keeps
 * the public struct free of a second count. */
static void add_owned(struct vat_csv *c, char *cell)
{
    if (c->nrows == 0)
        vat_csv_row_begin(c);
    struct vat_csv_row *r = &c->row[c->nrows - 1];
    if ((r->n & (r->n - 1)) == 0) /* 0, 1, 2, 4, ...: full */
        r->cell = vat_xrealloc(r->cell, (r->n ? 2 * r->n : 1) * sizeof *r->cell);
    r->cell[r->n++] = cell;
}

void vat_csv_add(struct vat_csv *c, const char *cell)
{
    add_owned(c, vat_xstrdup(cell ? cell : ""));
}

void vat_csv_addf(struct vat_csv *c, const char *fmt, ...)
{
    struct vat_buf b = VAT_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    vat_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    add_owned(c, vat_buf_detach(&b));
}

void vat_csv_add_row(struct vat_csv *c, const char *const *cells, size_t n)
{
    vat_csv_row_begin(c);
    for (size_t i = 0; i < n; i++)
        vat_csv_add(c, cells[i]);
}

const char *vat_csv_get(const struct vat_csv *c, size_t row, size_t col)
{
    if (row >= c->nrows || col >= c->row[row].n)
        return "";
    return c->row[row].cell[col];
}

int vat_csv_col(const struct vat_csv *c, size_t hdr, const char *name)
{
    if (hdr >= c->nrows)
        return -1;
    for (size_t i = 0; i < c->row[hdr].n; i++)
        if (strcmp(c->row[hdr].cell[i], name) == 0)
            return (int)i;
    return -1;
}

/* Whether cell text p lies in c's arena (and so is not its own block). */
static bool in_arena(const struct vat_csv *c, const char *p)
{
    uintptr_t a = (uintptr_t)c->arena, x = (uintptr_t)p;
    return c->arena && x >= a && x < a + c->arena_len;
}

bool vat_csv_set(struct vat_csv *c, size_t row, size_t col, const char *text)
{
    if (row >= c->nrows || col >= c->row[row].n)
        return false;
    char **cell = &c->row[row].cell[col];
    char *copy = vat_xstrdup(text ? text : ""); /* text may be the cell itself */
    if (!in_arena(c, *cell))
        free(*cell);
    *cell = copy;
    return true;
}

void vat_csv_insert_cell(struct vat_csv *c, size_t row, size_t col, const char *text)
{
    if (row >= c->nrows || col > c->row[row].n)
        return;
    struct vat_csv_row *r = &c->row[row];
    /* room as add_owned's implied capacity has it: the next power of two */
    size_t cap = 1;
    while (cap < r->n + 1)
        cap *= 2;
    r->cell = vat_xrealloc(r->cell, cap * sizeof *r->cell);
    memmove(&r->cell[col + 1], &r->cell[col], (r->n - col) * sizeof *r->cell);
    r->cell[col] = vat_xstrdup(text ? text : "");
    r->n++;
}

void vat_csv_drop_cell(struct vat_csv *c, size_t row, size_t col)
{
    if (row >= c->nrows || col >= c->row[row].n)
        return;
    struct vat_csv_row *r = &c->row[row];
    if (!in_arena(c, r->cell[col]))
        free(r->cell[col]);
    memmove(&r->cell[col], &r->cell[col + 1], (r->n - col - 1) * sizeof *r->cell);
    r->n--;
}

void vat_csv_drop_row(struct vat_csv *c, size_t row)
{
    if (row >= c->nrows)
        return;
    for (size_t i = 0; i < c->row[row].n; i++)
        if (!in_arena(c, c->row[row].cell[i]))
            free(c->row[row].cell[i]);
    free(c->row[row].cell);
    memmove(&c->row[row], &c->row[row + 1], (c->nrows - row - 1) * sizeof *c->row);
    c->nrows--;
}

void vat_csv_release(struct vat_csv *c)
{
    for (size_t r = 0; r < c->nrows; r++) {
        for (size_t i = 0; i < c->row[r].n; i++)
            if (!in_arena(c, c->row[r].cell[i]))
                free(c->row[r].cell[i]);
        free(c->row[r].cell);
    }
    free(c->row);
    free(c->arena);
    c->row = NULL;
    c->nrows = c->cap = 0;
    c->arena = NULL;
    c->arena_len = 0;
}

/* ---- writing ------------------------------------------------------------ */

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* A field is quoted where RFC 4180 needs it (comma, quote, CR, LF), where
 * a trimming reader would lose edge blanks, and when it is the only, empty
 * field of its row: a bare empty line reads as no row at all. */
static int needs_quotes(const char *s, size_t n, size_t ncells)
{
    if (n == 0)
        return ncells == 1;
    if (is_blank(s[0]) || is_blank(s[n - 1]))
        return 1;
    return strpbrk(s, ",\"\r\n") != NULL;
}

/* ends (NULL, or room for c->nrows) gets each row's end offset in b. */
static void serialise(const struct vat_csv *c, struct vat_buf *b, size_t *ends)
{
    for (size_t r = 0; r < c->nrows; r++) {
        const struct vat_csv_row *row = &c->row[r];
        for (size_t i = 0; i < row->n; i++) {
            const char *s = row->cell[i];
            size_t n = strlen(s);
            if (i > 0)
                vat_buf_putc(b, ',');
            if (!needs_quotes(s, n, row->n)) {
                vat_buf_putn(b, s, n);
                continue;
            }
            size_t need = csv_write(NULL, 0, s, n);
            char *q = vat_xmalloc(need);
            csv_write(q, need, s, n);
            vat_buf_putn(b, q, need);
            free(q);
        }
        vat_buf_putc(b, '\n');
        if (ends)
            ends[r] = b->len;
    }
}

char *vat_csv_to_string(const struct vat_csv *c)
{
    struct vat_buf b = VAT_BUF_INIT;
    serialise(c, &b, NULL);
    return vat_buf_detach(&b);
}

char *vat_csv_to_string_ends(const struct vat_csv *c, size_t **ends)
{
    *ends = vat_xmalloc((c->nrows ? c->nrows : 1) * sizeof **ends);
    struct vat_buf b = VAT_BUF_INIT;
    serialise(c, &b, *ends);
    return vat_buf_detach(&b);
}

int vat_csv_write(const struct vat_csv *c, const char *root, const char *rel, struct vat_err *e)
{
    if (!vat_path_is_safe(rel))
        return vat_err_set(e, "vat: refusing unsafe path '%s'", rel ? rel : "");
    struct vat_buf b = VAT_BUF_INIT;
    serialise(c, &b, NULL);
    /* New file then rename, resolved beneath root (see vat.h). */
    int rc = vat_write_file_atomic(root, rel, b.data ? b.data : "", b.len, e);
    vat_buf_release(&b);
    return rc;
}

/* ---- reading ------------------------------------------------------------ */

/* A field's text goes into the table's arena, sized before parsing for
 * the most the file can hold (every byte a field's, plus a NUL per field,
 * and a field needs a byte of separator or line end but the last), so it
 * never moves; a field past it (not expected) gets a block of its own.  A
 * row's cells gather in a scratch array (reused from row to row) and move
 * into the table at the row's end, in one allocation of the capacity
 * add_owned implies (the next power of two). */
struct reader {
    struct vat_csv *c;
    size_t arena_cap;
    char **cells;
    size_t n, cap;
};

static void on_field(void *s, size_t n, void *data)
{
    struct reader *rd = data;
    struct vat_csv *c = rd->c;
    if (rd->n == rd->cap) {
        rd->cap = rd->cap ? 2 * rd->cap : 16;
        rd->cells = vat_xrealloc(rd->cells, rd->cap * sizeof *rd->cells);
    }
    if (!s)
        n = 0;
    char *cell;
    if (c->arena && n < rd->arena_cap - c->arena_len) {
        cell = c->arena + c->arena_len;
        if (n)
            memcpy(cell, s, n);
        cell[n] = 0;
        c->arena_len += n + 1;
    } else {
        cell = s ? vat_xstrndup(s, n) : vat_xstrdup("");
    }
    rd->cells[rd->n++] = cell;
}

/* The capacity add_owned implies for a row of n cells. */
static size_t row_capacity(size_t n)
{
    size_t cap = 1;
    while (cap < n)
        cap *= 2;
    return cap;
}

static void reader_flush(struct reader *rd)
{
    if (rd->n == 0)
        return;
    vat_csv_row_begin(rd->c);
    struct vat_csv_row *r = &rd->c->row[rd->c->nrows - 1];
    r->cell = vat_xmalloc(row_capacity(rd->n) * sizeof *r->cell);
    memcpy(r->cell, rd->cells, rd->n * sizeof *r->cell);
    r->n = rd->n;
    rd->n = 0;
}

static void on_row(int ch, void *data)
{
    (void)ch;
    reader_flush(data);
}

/* Nothing is a space: fields keep their edge blanks (see the top). */
static int no_space(unsigned char ch)
{
    (void)ch;
    return 0;
}

/* dst (empty) = a copy of src: its arena copied whole, other cells one by
 * one. */
static void csv_copy(struct vat_csv *dst, const struct vat_csv *src)
{
    if (src->arena) {
        dst->arena = vat_xmalloc(src->arena_len ? src->arena_len : 1);
        memcpy(dst->arena, src->arena, src->arena_len);
        dst->arena_len = src->arena_len;
    }
    for (size_t i = 0; i < src->nrows; i++) {
        const struct vat_csv_row *from = &src->row[i];
        vat_csv_row_begin(dst);
        struct vat_csv_row *r = &dst->row[dst->nrows - 1];
        if (from->n == 0)
            continue;
        r->cell = vat_xmalloc(row_capacity(from->n) * sizeof *r->cell);
        for (size_t k = 0; k < from->n; k++)
            r->cell[k] = in_arena(src, from->cell[k])
                             ? dst->arena + (from->cell[k] - src->arena)
                             : vat_xstrdup(from->cell[k]);
        r->n = from->n;
    }
}

static void csv_obj_free(void *p)
{
    vat_csv_release(p);
    free(p);
}

/* During a task's draw (the file memo on) a fixture's CSV is read by the
 * reference, the trap, the confirmation and the prompt: the first read
 * parses the bytes as read from disk and keeps the table, tied to that
 * read; later reads of the same bytes get a copy of it.  A rewrite of the
 * file drops it (vat_write_file_atomic). */
#define CSV_MEMO_TAG "csv-parsed"

int vat_csv_read(struct vat_csv *c, const char *root, const char *rel, struct vat_err *e)
{
    if (!vat_path_is_safe(rel))
        return vat_err_set(e, "vat: refusing unsafe path '%s'", rel ? rel : "");
    vat_trace_note("csv rows", rel);
    if (vat_file_memo_on()) {
        unsigned long serial = 0;
        struct vat_csv *kept = vat_file_memo_take_obj(root, rel, CSV_MEMO_TAG, &serial);
        if (kept && serial == vat_file_memo_serial(root, rel)) {
            struct vat_csv out = VAT_CSV_INIT;
            csv_copy(&out, kept);
            vat_file_memo_put_obj(root, rel, CSV_MEMO_TAG, serial, kept, csv_obj_free);
            vat_csv_release(c);
            *c = out;
            return 0;
        }
        if (kept)
            csv_obj_free(kept);
    }
    char *data = NULL;
    size_t len = 0;
    /* Opened beneath root: no symbolic link on the way is followed. */
    if (vat_read_file_beneath(root, rel, CSV_MAX_BYTES, &data, &len, e) != 0)
        return -1;

    /* Cells are C strings: a NUL byte would silently cut one short. */
    const char *nul = memchr(data, 0, len);
    if (nul) {
        vat_err_set(e, "vat: cannot parse '%s': NUL byte at byte %zu", rel, (size_t)(nul - data));
        free(data);
        return -1;
    }

    struct vat_csv out = VAT_CSV_INIT;
    struct reader rd = {&out, 2 * len + 2, NULL, 0, 0};
    out.arena = vat_xmalloc(rd.arena_cap);
    struct csv_parser p;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
        free(data);
        return vat_err_set(e, "vat: cannot parse '%s': parser setup failed", rel);
    }
    csv_set_space_func(&p, no_space);
    int rc = 0;
    size_t used = csv_parse(&p, data, len, on_field, on_row, &rd);
    if (used != len) {
        vat_err_set(e, "vat: cannot parse '%s': %s at byte %zu", rel, csv_strerror(csv_error(&p)),
                    used);
        rc = -1;
    } else if (csv_fini(&p, on_field, on_row, &rd) != 0) {
        /* Only an unterminated quoted field fails here; it runs to the end. */
        vat_err_set(e, "vat: cannot parse '%s': %s at byte %zu", rel, csv_strerror(csv_error(&p)),
                    len);
        rc = -1;
    }
    csv_free(&p);
    free(data);
    reader_flush(&rd); /* a last row the parser left open */
    free(rd.cells);
    if (rc != 0) {
        vat_csv_release(&out);
        return -1;
    }
    unsigned long serial = vat_file_memo_on() ? vat_file_memo_serial(root, rel) : 0;
    if (serial) {
        struct vat_csv *kept = vat_xcalloc(1, sizeof *kept);
        csv_copy(kept, &out);
        vat_file_memo_put_obj(root, rel, CSV_MEMO_TAG, serial, kept, csv_obj_free);
    }
    vat_csv_release(c);
    *c = out;
    return 0;
}

/* ---- loading into SQLite ------------------------------------------------ */

static void put_ident(struct vat_buf *b, const char *name)
{
    vat_buf_put_quoted(b, name, '"');
}

/* Column types are spliced into CREATE TABLE, so only type-name
 * characters are allowed ("REAL", "DECIMAL(10,2)"). */
static int type_ok(const char *t)
{
    if (!t || !*t)
        return 0;
    for (const char *p = t; *p; p++) {
        char ch = *p;
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == ' ' || ch == '_' || ch == '(' || ch == ')' || ch == ','))
            return 0;
    }
    return 1;
}

static int db_fail(sqlite3 *db, const char *table, struct vat_err *e)
{
    return vat_err_set(e, "vat: cannot load table '%s': %s", table, sqlite3_errmsg(db));
}

/* Builds the CREATE TABLE and the INSERT that load c's rows (row hdr
 * naming the columns) into `table`.  0, or -1 with e set (both released). */
static int load_statements(const struct vat_csv *c, size_t hdr, const char *table,
                           const char *const *types, struct vat_buf *create,
                           struct vat_buf *insert, struct vat_err *e)
{
    if (hdr >= c->nrows)
        return vat_err_set(e, "vat: cannot load table '%s': no header row %zu", table, hdr);
    const struct vat_csv_row *h = &c->row[hdr];
    if (h->n == 0)
        return vat_err_set(e, "vat: cannot load table '%s': header row %zu is empty", table, hdr);
    if (h->n > 2000)
        return vat_err_set(e, "vat: cannot load table '%s': %zu columns", table, h->n);
    vat_buf_puts(create, "CREATE TABLE ");
    put_ident(create, table);
    vat_buf_puts(create, " (");
    vat_buf_puts(insert, "INSERT INTO ");
    put_ident(insert, table);
    vat_buf_puts(insert, " VALUES (");
    for (size_t i = 0; i < h->n; i++) {
        const char *type = types ? types[i] : "TEXT";
        if (!type_ok(type)) {
            vat_buf_release(create);
            vat_buf_release(insert);
            return vat_err_set(e, "vat: cannot load table '%s': bad column type '%s'", table,
                               type ? type : "");
        }
        if (i > 0) {
            vat_buf_puts(create, ", ");
            vat_buf_putc(insert, ',');
        }
        put_ident(create, h->cell[i]);
        vat_buf_printf(create, " %s", type);
        vat_buf_putc(insert, '?');
    }
    vat_buf_putc(create, ')');
    vat_buf_putc(insert, ')');
    return 0;
}

/* Steps ins (the table's INSERT) once per data row of c.  Every row binds
 * every parameter (a ragged row is refused first), so the bindings are
 * cleared once, by insert_rows, not after each row.  0, or -1 with e set. */
static int insert_rows_bound(sqlite3 *db, sqlite3_stmt *ins, const struct vat_csv *c,
                             size_t hdr, const char *table, int blank_is_null, struct vat_err *e)
{
    size_t ncol = c->row[hdr].n;
    for (size_t r = hdr + 1; r < c->nrows; r++) {
        const struct vat_csv_row *row = &c->row[r];
        /* A ragged data row would lose or invent cells; refuse it. */
        if (row->n != ncol)
            return vat_err_set(e,
                               "vat: cannot load table '%s': row %zu has %zu cells, header has %zu",
                               table, r, row->n, ncol);
        for (size_t i = 0; i < row->n; i++) {
            const char *s = row->cell[i];
            int brc = (blank_is_null && !*s)
                          ? sqlite3_bind_null(ins, (int)i + 1)
                          : sqlite3_bind_text(ins, (int)i + 1, s, -1, SQLITE_STATIC);
            if (brc != SQLITE_OK)
                return db_fail(db, table, e);
        }
        int rc = sqlite3_step(ins);
        sqlite3_reset(ins);
        if (rc != SQLITE_DONE)
            return db_fail(db, table, e);
    }
    return 0;
}

/* insert_rows_bound, its bindings cleared after, so none outlives c. */
static int insert_rows(sqlite3 *db, sqlite3_stmt *ins, const struct vat_csv *c, size_t hdr,
                       const char *table, int blank_is_null, struct vat_err *e)
{
    int rc = insert_rows_bound(db, ins, c, hdr, table, blank_is_null, e);
    sqlite3_clear_bindings(ins);
    return rc;
}

int vat_csv_to_sqlite(const struct vat_csv *c, size_t hdr, sqlite3 *db, const char *table,
                      const char *const *types, int blank_is_null, struct vat_err *e)
{
    struct vat_buf create = VAT_BUF_INIT, insert = VAT_BUF_INIT;
    if (load_statements(c, hdr, table, types, &create, &insert, e) != 0)
        return -1;
    /* A savepoint, not BEGIN, so loading also works inside a caller's
     * transaction; on failure the table is gone again. */
    int rc = -1;
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(db, "SAVEPOINT vat_csv_load", NULL, NULL, NULL) != SQLITE_OK) {
        db_fail(db, table, e);
        goto out;
    }
    if (sqlite3_exec(db, create.data, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, insert.data, -1, &st, NULL) != SQLITE_OK) {
        db_fail(db, table, e);
        goto undo;
    }
    if (insert_rows(db, st, c, hdr, table, blank_is_null, e) != 0)
        goto undo;
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_exec(db, "RELEASE vat_csv_load", NULL, NULL, NULL) != SQLITE_OK) {
        db_fail(db, table, e);
        goto undo;
    }
    rc = 0;
    goto out;
undo:
    sqlite3_finalize(st);
    st = NULL;
    sqlite3_exec(db, "ROLLBACK TO vat_csv_load; RELEASE vat_csv_load", NULL, NULL, NULL);
out:
    vat_buf_release(&create);
    vat_buf_release(&insert);
    return rc;
}

/* While a loader's table is lent out, its connection only reads, so the
 * next load finds the one table it left, as it left it: no row written,
 * no schema changed, no database attached, no transaction opened and no
 * pragma set (a pragma may be read, or describe a table).  An update of
 * the schema table alone passes: a table-valued pragma declares its
 * columns through it, and writing that table for real needs the
 * writable_schema pragma set first. */
static int loader_authorize(void *arg, int action, const char *a3, const char *a4,
                            const char *a5, const char *a6)
{
    (void)a5, (void)a6;
    const struct vat_csv_loader *l = arg;
    if (!l->lent)
        return SQLITE_OK;
    static const char *const describe[] = {"table_info", "table_xinfo", "index_list",
                                           "index_info", "index_xinfo", "foreign_key_list"};
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;
    case SQLITE_UPDATE:
        return a3 && (strcmp(a3, "sqlite_master") == 0 || strcmp(a3, "sqlite_schema") == 0)
                   ? SQLITE_OK
                   : SQLITE_DENY;
    case SQLITE_PRAGMA:
        if (!a4)
            return SQLITE_OK;
        for (size_t i = 0; a3 && i < sizeof describe / sizeof describe[0]; i++)
            if (strcmp(a3, describe[i]) == 0)
                return SQLITE_OK;
        return SQLITE_DENY;
    default:
        return SQLITE_DENY;
    }
}

/* Forgets the table l holds: its statements' texts and its INSERT. */
static void loader_forget(struct vat_csv_loader *l)
{
    sqlite3_finalize(l->insert);
    free(l->create);
    free(l->clear);
    free(l->drop);
    l->insert = NULL;
    l->create = l->clear = l->drop = NULL;
}

void vat_csv_loader_close(struct vat_csv_loader *l)
{
    loader_forget(l);
    sqlite3_close(l->db);
    *l = (struct vat_csv_loader){0};
}

int vat_csv_loader_load(struct vat_csv_loader *l, const struct vat_csv *c, size_t hdr,
                        const char *table, const char *const *types, int blank_is_null,
                        struct vat_err *e)
{
    struct vat_buf create = VAT_BUF_INIT, insert = VAT_BUF_INIT;
    if (load_statements(c, hdr, table, types, &create, &insert, e) != 0)
        return -1;
    l->lent = false;
    int rc = -1;
    if (!l->db) {
        if (sqlite3_open_v2(":memory:", &l->db,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
                SQLITE_OK ||
            sqlite3_set_authorizer(l->db, loader_authorize, l) != SQLITE_OK) {
            vat_err_set(e, "vat: cannot load table '%s': cannot open an in-memory database: %s",
                        table, l->db ? sqlite3_errmsg(l->db) : "out of memory");
            goto fail;
        }
    }
    bool same = l->create && strcmp(l->create, create.data) == 0;
    if (!same && l->create) {
        int drc = sqlite3_exec(l->db, l->drop, NULL, NULL, NULL);
        loader_forget(l);
        if (drc != SQLITE_OK) {
            db_fail(l->db, table, e);
            goto fail;
        }
    }
    if (sqlite3_exec(l->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        db_fail(l->db, table, e);
        goto fail;
    }
    if (same) {
        /* Emptied without a WHERE, the table is truncated whole and its
         * rowids start again from 1, as in a new table. */
        if (sqlite3_exec(l->db, l->clear, NULL, NULL, NULL) != SQLITE_OK) {
            db_fail(l->db, table, e);
            goto fail;
        }
    } else {
        if (sqlite3_exec(l->db, create.data, NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_prepare_v3(l->db, insert.data, -1, SQLITE_PREPARE_PERSISTENT, &l->insert,
                               NULL) != SQLITE_OK) {
            db_fail(l->db, table, e);
            goto fail;
        }
        struct vat_buf clear = VAT_BUF_INIT, drop = VAT_BUF_INIT;
        vat_buf_puts(&clear, "DELETE FROM ");
        put_ident(&clear, table);
        vat_buf_puts(&drop, "DROP TABLE ");
        put_ident(&drop, table);
        l->clear = vat_buf_detach(&clear);
        l->drop = vat_buf_detach(&drop);
        l->create = vat_buf_detach(&create);
    }
    if (insert_rows(l->db, l->insert, c, hdr, table, blank_is_null, e) != 0)
        goto fail;
    if (sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        db_fail(l->db, table, e);
        goto fail;
    }
    l->lent = true;
    rc = 0;
    goto out;
fail:
    /* A connection in an unknown state is not worth mending: the next
     * load starts from a new one. */
    vat_csv_loader_close(l);
out:
    vat_buf_release(&create);
    vat_buf_release(&insert);
    return rc;
}

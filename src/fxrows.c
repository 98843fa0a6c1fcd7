/* fxrows.c — a fixture file's digest and data rows as the leak audit
 * compares them (see fxrows.h). */
#include "fxrows.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "csvio.h"
#include "xlsxio.h"

/* SQLite progress-handler calls (every 1000 VM steps) allowed per fixture. */
#define MAX_SQLITE_TICKS 100000

uint64_t vat_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void vat_h64_feed(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        *h ^= b[i];
        *h *= 0x100000001b3ULL;
    }
}

/* Length-prefixed, so cells ("ab","c") and ("a","bc") hash apart. */
void vat_h64_feed_field(uint64_t *h, char tag, const void *p, size_t n)
{
    unsigned char len[9];
    len[0] = (unsigned char)tag;
    for (int k = 0; k < 8; k++)
        len[k + 1] = (unsigned char)((uint64_t)n >> (8 * k));
    vat_h64_feed(h, len, sizeof len);
    vat_h64_feed(h, p, n);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

size_t vat_sort_unique_u64(uint64_t *v, size_t n)
{
    if (n < 2)
        return n;
    qsort(v, n, sizeof *v, cmp_u64);
    size_t m = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[m - 1])
            v[m++] = v[i];
    return m;
}

FILE *vat_fx_open(const char *root, const char *rel, size_t *size, char *why, size_t cap)
{
    /* Beneath root: a symbolic link anywhere on the way is not followed. */
    int fd = vat_open_beneath(root, rel, O_RDONLY | O_NONBLOCK, NULL);
    struct stat sb;
    if (fd < 0) {
        snprintf(why, cap, "%s", errno == ELOOP ? "a symbolic link on the way (not followed)"
                                                : strerror(errno));
        return NULL;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(why, cap, "not a regular file");
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl != -1)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(why, cap, "%s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (size)
        *size = (size_t)sb.st_size;
    return f;
}

struct rowset {
    uint64_t *v;
    size_t n, cap;
};

static void rowset_push(struct rowset *rs, uint64_t h)
{
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? 2 * rs->cap : 64;
        rs->v = vat_xrealloc(rs->v, rs->cap * sizeof *rs->v);
    }
    rs->v[rs->n++] = h;
}

/* A workbook's rows: every row of every sheet holding two cells or more
 * (titles and notes are single cells), hashed cell by cell with the
 * cell's type, as read by our workbook reader. */
static int xlsx_rows(const unsigned char *img, size_t len, const char *rel, struct rowset *rs,
                     char *why, size_t cap)
{
    struct vat_xl_book b = VAT_XL_BOOK_INIT;
    struct vat_err e = {{0}};
    if (vat_xl_read_mem(&b, img, len, rel, &e) != 0) {
        snprintf(why, cap, "%s", e.msg);
        return -1;
    }
    char buf[64];
    for (size_t i = 0; i < b.nsheets; i++) {
        const struct vat_xl_sheet *s = &b.sheet[i];
        for (size_t k = 0; k < s->ncells;) {
            size_t end = k;
            uint64_t h = VAT_H64_INIT;
            while (end < s->ncells && s->cell[end].row == s->cell[k].row) {
                const struct vat_xl_cell *c = &s->cell[end];
                const char *txt = vat_xl_text(c, buf, sizeof buf);
                vat_h64_feed_field(&h, c->type == VAT_XL_STRING ? 's' : 'n', txt, strlen(txt));
                end++;
            }
            if (end - k >= 2)
                rowset_push(rs, vat_mix64(h));
            k = end;
        }
    }
    vat_xl_release(&b);
    return 0;
}

static int csv_rows(const char *root, const char *rel, struct rowset *rs, char *why, size_t cap)
{
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    if (vat_csv_read(&c, root, rel, &e) != 0) {
        snprintf(why, cap, "%s", e.msg);
        vat_csv_release(&c);
        return -1;
    }
    for (size_t r = 1; r < c.nrows; r++) {
        uint64_t h = VAT_H64_INIT;
        for (size_t k = 0; k < c.row[r].n; k++)
            vat_h64_feed_field(&h, 's', c.row[r].cell[k], strlen(c.row[r].cell[k]));
        rowset_push(rs, vat_mix64(h));
    }
    vat_csv_release(&c);
    return 0;
}

static int sqlite_budget(void *arg)
{
    long *ticks = arg;
    return ++*ticks > MAX_SQLITE_TICKS;
}

/* Hashes every row of every ordinary table of a database image.  The
 * image is read in memory, read-only, defensively, with a step budget:
 * it is untrusted and must neither touch the disk nor run for ever.
 * Table names are left out of the hash, so renaming a table does not
 * hide copied rows. */
static int sqlite_rows(unsigned char *img, size_t len, struct rowset *rs, char *why, size_t cap)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *list = NULL, *st = NULL;
    long ticks = 0;
    int rc = -1;
    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        goto out;
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
    sqlite3_progress_handler(db, 1000, sqlite_budget, &ticks);
    if (sqlite3_deserialize(db, "main", img, (sqlite3_int64)len, (sqlite3_int64)len,
                            SQLITE_DESERIALIZE_READONLY) != SQLITE_OK)
        goto out;
    if (sqlite3_prepare_v2(db,
                           "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                           "'sqlite\\_%' ESCAPE '\\' AND sql NOT LIKE 'CREATE VIRTUAL%' "
                           "ORDER BY name",
                           -1, &list, NULL) != SQLITE_OK)
        goto out;
    int lrc;
    while ((lrc = sqlite3_step(list)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(list, 0);
        struct vat_buf q = VAT_BUF_INIT;
        vat_buf_puts(&q, "SELECT * FROM \"");
        for (const char *p = name ? name : ""; *p; p++) {
            if (*p == '"')
                vat_buf_putc(&q, '"');
            vat_buf_putc(&q, *p);
        }
        vat_buf_putc(&q, '"');
        int prc = sqlite3_prepare_v2(db, q.data, -1, &st, NULL);
        vat_buf_release(&q);
        if (prc != SQLITE_OK)
            goto out;
        int src;
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
            uint64_t h = VAT_H64_INIT;
            int nc = sqlite3_column_count(st);
            for (int k = 0; k < nc; k++) {
                char num[40];
                switch (sqlite3_column_type(st, k)) {
                case SQLITE_INTEGER:
                    snprintf(num, sizeof num, "%lld", (long long)sqlite3_column_int64(st, k));
                    vat_h64_feed_field(&h, 'i', num, strlen(num));
                    break;
                case SQLITE_FLOAT:
                    snprintf(num, sizeof num, "%.17g", sqlite3_column_double(st, k));
                    vat_h64_feed_field(&h, 'r', num, strlen(num));
                    break;
                case SQLITE_TEXT:
                    vat_h64_feed_field(&h, 't', sqlite3_column_text(st, k),
                                   (size_t)sqlite3_column_bytes(st, k));
                    break;
                case SQLITE_BLOB:
                    vat_h64_feed_field(&h, 'b', sqlite3_column_blob(st, k),
                                   (size_t)sqlite3_column_bytes(st, k));
                    break;
                default:
                    vat_h64_feed_field(&h, 'n', "", 0);
                    break;
                }
            }
            rowset_push(rs, vat_mix64(h));
        }
        sqlite3_finalize(st);
        st = NULL;
        if (src != SQLITE_DONE)
            goto out;
    }
    if (lrc == SQLITE_DONE)
        rc = 0;
out:
    if (rc != 0)
        snprintf(why, cap, "%s", ticks > MAX_SQLITE_TICKS ? "step budget exhausted"
                                 : db                     ? sqlite3_errmsg(db)
                                                          : "out of memory");
    sqlite3_finalize(st);
    sqlite3_finalize(list);
    sqlite3_close(db);
    return rc;
}

/* The data rows of an image (the file's bytes) into ff: state 0, or -2
 * with why when they cannot be parsed. */
static void parse_rows(struct vat_fx_rows *ff, unsigned char *img, size_t len, const char *root,
                       const char *path, char *why, size_t cap)
{
    struct rowset rs = {NULL, 0, 0};
    int rc;
    if (len >= 16 && memcmp(img, "SQLite format 3", 16) == 0)
        rc = sqlite_rows(img, len, &rs, why, cap);
    else if (len >= 4 && memcmp(img, "PK\3\4", 4) == 0)
        rc = xlsx_rows(img, len, path, &rs, why, cap);
    else
        rc = csv_rows(root, path, &rs, why, cap);
    ff->state = rc == 0 ? 0 : -2;
    ff->nrows = vat_sort_unique_u64(rs.v, rs.n);
    ff->rows = rs.v;
    if (rc != 0) {
        free(ff->rows);
        ff->rows = NULL;
        ff->nrows = 0;
    }
}

int vat_fx_rows_read(struct vat_fx_rows *ff, const char *root, const char *path, char *why,
                     size_t cap)
{
    size_t len = 0;
    memset(ff, 0, sizeof *ff);
    FILE *f = vat_fx_open(root, path, &len, why, cap);
    ff->state = -1;
    if (!f)
        return -1;
    if (len > VAT_FX_MAX_BYTES) {
        snprintf(why, cap, "larger than %zu bytes", VAT_FX_MAX_BYTES);
        fclose(f);
        return -1;
    }
    unsigned char *img = vat_xmalloc(len ? len : 1);
    size_t got = fread(img, 1, len, f);
    int err = ferror(f);
    fclose(f);
    if (err || got != len) {
        snprintf(why, cap, "cannot read it");
        free(img);
        return -1;
    }
    vat_sha256_hex(img, len, ff->sha);
    parse_rows(ff, img, len, root, path, why, cap);
    free(img);
    return ff->state;
}

int vat_fx_rows_from(struct vat_fx_rows *ff, unsigned char *img, size_t len, const char *root,
                     const char *path, char *why, size_t cap)
{
    memset(ff, 0, sizeof *ff);
    parse_rows(ff, img, len, root, path, why, cap);
    return ff->state;
}

void vat_fx_rows_release(struct vat_fx_rows *ff)
{
    free(ff->rows);
    memset(ff, 0, sizeof *ff);
}

/* xlsx.c — workbooks in memory, read by our own reader over libzip and
 * expat (see xlsx.h; the writer is generators/xlsxio.c).  Exports the
 * vat_xl_* functions but vat_xl_write.
 *
 * Reading: the file is read whole (capped), opened by libzip from memory
 * with its consistency checks, and each part inflated into a buffer no
 * larger than its cap; a part whose stated size is a lie, or whose CRC
 * fails, is an error.  expat parses with namespaces split off so a
 * prefix other than the usual one still reads; a DTD or entity
 * declaration stops the parse (a workbook never needs one, a billion-laughs
 * file always does), and nesting past VAT_XL_MAX_DEPTH stops it too. */
#include "xlsx.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <expat.h>
#include <zip.h>

/* ---- building ------------------------------------------------------------ */

struct vat_xl_sheet *vat_xl_add_sheet(struct vat_xl_book *b, const char *name)
{
    b->sheet = vat_xrealloc(b->sheet, (b->nsheets + 1) * sizeof *b->sheet);
    struct vat_xl_sheet *s = &b->sheet[b->nsheets++];
    memset(s, 0, sizeof *s);
    s->name = vat_xstrdup(name);
    return s;
}

static int cell_cmp(uint32_t r1, uint32_t c1, uint32_t r2, uint32_t c2)
{
    if (r1 != r2)
        return r1 < r2 ? -1 : 1;
    if (c1 != c2)
        return c1 < c2 ? -1 : 1;
    return 0;
}

/* Index of the first cell not before (row, col). */
static size_t lower_bound(const struct vat_xl_sheet *s, uint32_t row, uint32_t col)
{
    size_t lo = 0, hi = s->ncells;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cell_cmp(s->cell[mid].row, s->cell[mid].col, row, col) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The cell slot for (row, col): an existing one cleared, or a new one
 * inserted in order (appending, the usual case, moves nothing). */
static struct vat_xl_cell *slot(struct vat_xl_sheet *s, uint32_t row, uint32_t col)
{
    size_t i = s->ncells;
    if (s->ncells && cell_cmp(s->cell[s->ncells - 1].row, s->cell[s->ncells - 1].col, row, col) >= 0)
        i = lower_bound(s, row, col);
    if (i < s->ncells && s->cell[i].row == row && s->cell[i].col == col) {
        free(s->cell[i].s);
    } else {
        if (s->ncells == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 64;
            s->cell = vat_xrealloc(s->cell, s->cap * sizeof *s->cell);
        }
        memmove(&s->cell[i + 1], &s->cell[i], (s->ncells - i) * sizeof *s->cell);
        s->ncells++;
    }
    struct vat_xl_cell *c = &s->cell[i];
    memset(c, 0, sizeof *c);
    c->row = row;
    c->col = col;
    return c;
}

void vat_xl_set_str(struct vat_xl_sheet *s, uint32_t row, uint32_t col, const char *text,
                    enum vat_xl_style st)
{
    struct vat_xl_cell *c = slot(s, row, col);
    c->type = VAT_XL_STRING;
    c->style = st;
    c->s = vat_xstrdup(text ? text : "");
}

void vat_xl_set_num(struct vat_xl_sheet *s, uint32_t row, uint32_t col, double v,
                    enum vat_xl_style st)
{
    struct vat_xl_cell *c = slot(s, row, col);
    c->type = VAT_XL_NUMBER;
    c->style = st;
    c->num = v;
}

void vat_xl_set_bool(struct vat_xl_sheet *s, uint32_t row, uint32_t col, bool v)
{
    struct vat_xl_cell *c = slot(s, row, col);
    c->type = VAT_XL_BOOL;
    c->b = v;
}

void vat_xl_set_blank(struct vat_xl_sheet *s, uint32_t row, uint32_t col, enum vat_xl_style st)
{
    struct vat_xl_cell *c = slot(s, row, col);
    c->type = VAT_XL_BLANK;
    c->style = st;
}

void vat_xl_merge(struct vat_xl_sheet *s, uint32_t r1, uint32_t c1, uint32_t r2, uint32_t c2)
{
    if (s->nmerge == s->mcap) {
        s->mcap = s->mcap ? 2 * s->mcap : 8;
        s->merge = vat_xrealloc(s->merge, s->mcap * sizeof *s->merge);
    }
    s->merge[s->nmerge++] = (struct vat_xl_range){r1, c1, r2, c2};
}

void vat_xl_release(struct vat_xl_book *b)
{
    for (size_t i = 0; i < b->nsheets; i++) {
        struct vat_xl_sheet *s = &b->sheet[i];
        for (size_t k = 0; k < s->ncells; k++)
            free(s->cell[k].s);
        free(s->cell);
        free(s->merge);
        free(s->name);
    }
    free(b->sheet);
    b->sheet = NULL;
    b->nsheets = 0;
}

/* ---- looking up ------------------------------------------------------------ */

const struct vat_xl_sheet *vat_xl_find_sheet(const struct vat_xl_book *b, const char *name)
{
    for (size_t i = 0; i < b->nsheets; i++)
        if (strcmp(b->sheet[i].name, name) == 0)
            return &b->sheet[i];
    return NULL;
}

const struct vat_xl_cell *vat_xl_get(const struct vat_xl_sheet *s, uint32_t row, uint32_t col)
{
    size_t i = lower_bound(s, row, col);
    if (i < s->ncells && s->cell[i].row == row && s->cell[i].col == col)
        return &s->cell[i];
    return NULL;
}

uint32_t vat_xl_nrows(const struct vat_xl_sheet *s)
{
    uint32_t n = s->ncells ? s->cell[s->ncells - 1].row + 1 : 0;
    for (size_t i = 0; i < s->nmerge; i++)
        if (s->merge[i].r2 + 1 > n)
            n = s->merge[i].r2 + 1;
    return n;
}

uint32_t vat_xl_ncols(const struct vat_xl_sheet *s)
{
    uint32_t n = 0;
    for (size_t i = 0; i < s->ncells; i++)
        if (s->cell[i].col + 1 > n)
            n = s->cell[i].col + 1;
    for (size_t i = 0; i < s->nmerge; i++)
        if (s->merge[i].c2 + 1 > n)
            n = s->merge[i].c2 + 1;
    return n;
}

const struct vat_xl_range *vat_xl_merge_at(const struct vat_xl_sheet *s, uint32_t row,
                                           uint32_t col)
{
    for (size_t i = 0; i < s->nmerge; i++) {
        const struct vat_xl_range *m = &s->merge[i];
        if (row >= m->r1 && row <= m->r2 && col >= m->c1 && col <= m->c2)
            return m;
    }
    return NULL;
}

const char *vat_xl_text(const struct vat_xl_cell *c, char *buf, size_t n)
{
    if (n == 0)
        return "";
    buf[0] = '\0';
    if (!c)
        return buf;
    switch (c->type) {
    case VAT_XL_STRING: return c->s;
    case VAT_XL_BOOL: snprintf(buf, n, "%s", c->b ? "TRUE" : "FALSE"); break;
    case VAT_XL_NUMBER:
        snprintf(buf, n, "%.15g", c->num);
        if (strtod(buf, NULL) != c->num)
            snprintf(buf, n, "%.17g", c->num);
        break;
    case VAT_XL_BLANK: break;
    }
    return buf;
}

/* ---- addresses --------------------------------------------------------------- */

char *vat_xl_col_name(uint32_t col, char *buf, size_t n)
{
    char tmp[8];
    size_t k = 0;
    uint32_t v = col + 1;
    while (v > 0 && k < sizeof tmp) {
        uint32_t d = (v - 1) % 26;
        tmp[k++] = (char)('A' + d);
        v = (v - 1) / 26;
    }
    size_t i = 0;
    while (k > 0 && i + 1 < n)
        buf[i++] = tmp[--k];
    if (n)
        buf[i] = '\0';
    return buf;
}

char *vat_xl_addr(uint32_t row, uint32_t col, char *buf, size_t n)
{
    char c[8], tmp[32];
    snprintf(tmp, sizeof tmp, "%s%lu", vat_xl_col_name(col, c, sizeof c), (unsigned long)row + 1);
    if (n) {
        size_t k = strlen(tmp) < n ? strlen(tmp) : n - 1;
        memcpy(buf, tmp, k);
        buf[k] = '\0';
    }
    return buf;
}

int vat_xl_parse_addr(const char *s, size_t len, uint32_t *row, uint32_t *col)
{
    size_t i = 0;
    uint64_t c = 0, r = 0;
    while (i < len && s[i] >= 'A' && s[i] <= 'Z' && i < 3)
        c = c * 26 + (uint64_t)(s[i++] - 'A' + 1);
    if (i == 0 || c > VAT_XL_MAX_COLS)
        return -1;
    size_t d0 = i;
    while (i < len && s[i] >= '0' && s[i] <= '9' && i - d0 < 7)
        r = r * 10 + (uint64_t)(s[i++] - '0');
    if (i == d0 || i != len || s[d0] == '0' || r == 0 || r > VAT_XL_MAX_ROWS)
        return -1;
    *row = (uint32_t)(r - 1);
    *col = (uint32_t)(c - 1);
    return 0;
}

/* Empties a buffer, keeping it NUL-terminated (its data is read as a
 * C string afterwards). */
static void buf_reset(struct vat_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

/* ---- reading: the zip ---------------------------------------------------------- */

struct xl_zip {
    zip_t *za;
    const char *name;  /* for messages */
    size_t total;      /* inflated bytes read so far */
};

/* Inflates part `part` into a new buffer (NUL-terminated) of *len bytes.
 * 1 when the part is absent, 0 when read, -1 with e set. */
static int zip_part(struct xl_zip *z, const char *part, char **out, size_t *len,
                    struct vat_err *e)
{
    zip_int64_t idx = zip_name_locate(z->za, part, ZIP_FL_NOCASE);
    if (idx < 0)
        return 1;
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z->za, (zip_uint64_t)idx, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
        return vat_err_set(e, "xlsx: '%s': cannot stat part '%s'", z->name, part);
    if (st.size > VAT_XL_MAX_PART_BYTES)
        return vat_err_set(e, "xlsx: '%s': part '%s' inflates to %llu bytes (cap %zu)", z->name,
                           part, (unsigned long long)st.size, VAT_XL_MAX_PART_BYTES);
    if (z->total + st.size > VAT_XL_MAX_TOTAL_BYTES)
        return vat_err_set(e, "xlsx: '%s': parts inflate past %zu bytes in all", z->name,
                           VAT_XL_MAX_TOTAL_BYTES);
    zip_file_t *zf = zip_fopen_index(z->za, (zip_uint64_t)idx, 0);
    if (!zf)
        return vat_err_set(e, "xlsx: '%s': cannot open part '%s': %s", z->name, part,
                           zip_strerror(z->za));
    size_t want = (size_t)st.size;
    char *buf = vat_xmalloc(want + 2);
    size_t got = 0;
    int rc = 0;
    /* Read one byte past the stated size: a stream longer than its
     * header says is a lie we refuse rather than follow. */
    while (got < want + 1) {
        zip_int64_t n = zip_fread(zf, buf + got, want + 1 - got);
        if (n < 0) {
            rc = vat_err_set(e, "xlsx: '%s': part '%s' is corrupt: %s", z->name, part,
                             zip_file_strerror(zf));
            break;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    if (rc == 0 && got != want)
        rc = vat_err_set(e, "xlsx: '%s': part '%s' holds %s bytes than its header says", z->name,
                         part, got > want ? "more" : "fewer");
    zip_fclose(zf);
    if (rc != 0) {
        free(buf);
        return -1;
    }
    buf[got] = '\0';
    z->total += got;
    *out = buf;
    *len = got;
    return 0;
}

/* ---- reading: XML ---------------------------------------------------------------- */

enum xl_part { P_WORKBOOK, P_RELS, P_SST, P_SHEET };

struct xl_rel {
    char *id, *target, *type;
};

struct xl_wbsheet {
    char *name, *rid;
};

struct xl_parse {
    XML_Parser p;
    enum xl_part kind;
    const char *file, *part;
    int depth;
    char err[400];       /* first error; stops the parser */
    /* workbook */
    struct xl_wbsheet *ws;
    size_t nws;
    /* rels */
    struct xl_rel *rel;
    size_t nrel;
    /* shared strings */
    char **sst;
    size_t nsst, sstcap;
    bool in_si, in_rph;
    /* text collection (shared string, <v>, inline <t>) */
    bool collect;
    struct vat_buf text;
    /* sheet */
    struct vat_xl_sheet *sheet;
    size_t *cells_left;
    const char *const *strings;
    size_t nstrings;
    bool in_sheetdata, in_row, in_cell, in_is, have_v, have_is, have_f;
    uint32_t row;         /* current row, 0-based */
    int64_t last_row;     /* last row seen, -1 before the first */
    int64_t next_col;     /* column of the next cell without r */
    uint32_t crow, ccol;
    char ctype[16];
    struct vat_buf v, is;
};

static void xp_fail(struct xl_parse *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void xp_fail(struct xl_parse *x, const char *fmt, ...)
{
    if (x->err[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err, sizeof x->err, fmt, ap);
    va_end(ap);
    XML_StopParser(x->p, XML_FALSE);
}

/* The local part of an expat "uri|local" name. */
static const char *local(const char *name)
{
    const char *bar = strrchr(name, '|');
    return bar ? bar + 1 : name;
}

static const char *attr(const XML_Char **atts, const char *name)
{
    for (size_t i = 0; atts[i]; i += 2)
        if (strcmp(atts[i], name) == 0)
            return atts[i + 1];
    return NULL;
}

/* An attribute by local name whose namespace is the relationships one. */
static const char *attr_rel(const XML_Char **atts, const char *lname)
{
    for (size_t i = 0; atts[i]; i += 2) {
        const char *bar = strrchr(atts[i], '|');
        if (bar && strcmp(bar + 1, lname) == 0 && strstr(atts[i], "relationships"))
            return atts[i + 1];
    }
    return NULL;
}

static void sheet_start(struct xl_parse *x, const char *el, const XML_Char **atts)
{
    char a[16];
    if (strcmp(el, "sheetData") == 0) {
        x->in_sheetdata = true;
    } else if (x->in_sheetdata && strcmp(el, "row") == 0) {
        const char *r = attr(atts, "r");
        int64_t rn = x->last_row + 1;
        if (r) {
            char *end;
            errno = 0;
            long long v = strtoll(r, &end, 10);
            if (*r < '0' || *r > '9' || *end || errno || v < 1 || v > (long long)VAT_XL_MAX_ROWS)
                return xp_fail(x, "row number '%.20s' is not in 1..%u", r, VAT_XL_MAX_ROWS);
            rn = v - 1;
        }
        if (rn <= x->last_row)
            return xp_fail(x, "row %lld comes after row %lld", (long long)rn + 1,
                           (long long)x->last_row + 1);
        if (rn >= (int64_t)VAT_XL_MAX_ROWS)
            return xp_fail(x, "more than %u rows", VAT_XL_MAX_ROWS);
        x->row = (uint32_t)rn;
        x->last_row = rn;
        x->next_col = 0;
        x->in_row = true;
    } else if (x->in_row && strcmp(el, "c") == 0) {
        const char *r = attr(atts, "r");
        uint32_t row = x->row, col;
        if (r) {
            if (vat_xl_parse_addr(r, strlen(r), &row, &col) != 0)
                return xp_fail(x, "cell address '%.20s' is not an A1 address within XFD%u", r,
                               VAT_XL_MAX_ROWS);
            if (row != x->row)
                return xp_fail(x, "cell %.20s lies outside its row %lu", r,
                               (unsigned long)x->row + 1);
            if ((int64_t)col < x->next_col)
                return xp_fail(x, "cell %.20s is out of order or repeated", r);
        } else {
            if (x->next_col >= (int64_t)VAT_XL_MAX_COLS)
                return xp_fail(x, "more than %u columns in row %lu", VAT_XL_MAX_COLS,
                               (unsigned long)x->row + 1);
            col = (uint32_t)x->next_col;
        }
        const char *t = attr(atts, "t");
        snprintf(x->ctype, sizeof x->ctype, "%s", t ? t : "n");
        if (t && strlen(t) >= sizeof x->ctype)
            return xp_fail(x, "cell %s has an unknown type", vat_xl_addr(row, col, a, sizeof a));
        x->crow = row;
        x->ccol = col;
        x->next_col = (int64_t)col + 1;
        x->in_cell = true;
        x->have_v = x->have_is = x->have_f = false;
        buf_reset(&x->v);
        buf_reset(&x->is);
    } else if (x->in_cell && strcmp(el, "v") == 0) {
        x->have_v = true;
        x->collect = true;
        x->text.len = 0;
    } else if (x->in_cell && strcmp(el, "f") == 0) {
        x->have_f = true;
    } else if (x->in_cell && strcmp(el, "is") == 0) {
        x->in_is = true;
        x->have_is = true;
    } else if (x->in_is && strcmp(el, "rPh") == 0) {
        x->in_rph = true;
    } else if (x->in_is && !x->in_rph && strcmp(el, "t") == 0) {
        x->collect = true;
        x->text.len = 0;
    } else if (strcmp(el, "mergeCell") == 0) {
        const char *ref = attr(atts, "ref");
        const char *colon = ref ? strchr(ref, ':') : NULL;
        struct vat_xl_range m;
        if (!colon || vat_xl_parse_addr(ref, (size_t)(colon - ref), &m.r1, &m.c1) != 0 ||
            vat_xl_parse_addr(colon + 1, strlen(colon + 1), &m.r2, &m.c2) != 0 ||
            m.r1 > m.r2 || m.c1 > m.c2)
            return xp_fail(x, "merged range '%.40s' is not a range like A1:B2",
                           ref ? ref : "(none)");
        if (x->sheet->nmerge >= VAT_XL_MAX_MERGES)
            return xp_fail(x, "more than %u merged ranges", VAT_XL_MAX_MERGES);
        for (size_t i = 0; i < x->sheet->nmerge; i++) {
            const struct vat_xl_range *o = &x->sheet->merge[i];
            if (m.r1 <= o->r2 && o->r1 <= m.r2 && m.c1 <= o->c2 && o->c1 <= m.c2)
                return xp_fail(x, "merged range '%.40s' overlaps another", ref);
        }
        vat_xl_merge(x->sheet, m.r1, m.c1, m.r2, m.c2);
    }
}

/* Turns the finished <c> into a cell (or nothing for a value-less one). */
static void sheet_cell_end(struct xl_parse *x)
{
    char a[16];
    vat_xl_addr(x->crow, x->ccol, a, sizeof a);
    const char *t = x->ctype;
    if (strcmp(t, "inlineStr") == 0) {
        if (!x->have_is)
            return; /* styled blank */
        if (*x->cells_left == 0)
            return xp_fail(x, "more than %u cells", VAT_XL_MAX_CELLS);
        (*x->cells_left)--;
        vat_xl_set_str(x->sheet, x->crow, x->ccol, x->is.data ? x->is.data : "", VAT_XL_PLAIN);
        return;
    }
    if (!x->have_v) {
        if (x->have_f)
            return xp_fail(x, "cell %s holds a formula without a cached value", a);
        return; /* a styled blank: no value means missing */
    }
    if (*x->cells_left == 0)
        return xp_fail(x, "more than %u cells", VAT_XL_MAX_CELLS);
    (*x->cells_left)--;
    const char *v = x->v.data ? x->v.data : "";
    if (strcmp(t, "n") == 0) {
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        if (!*v || *end || errno == ERANGE || !isfinite(d) || strchr(v, 'x') || strchr(v, 'X') ||
            strpbrk(v, "nNiI"))
            return xp_fail(x, "cell %s: '%.40s' is not a number", a, v);
        vat_xl_set_num(x->sheet, x->crow, x->ccol, d, VAT_XL_PLAIN);
    } else if (strcmp(t, "s") == 0) {
        char *end;
        errno = 0;
        unsigned long long k = strtoull(v, &end, 10);
        if (*v < '0' || *v > '9' || *end || errno || k >= x->nstrings)
            return xp_fail(x, "cell %s: shared string index '%.20s' is not below %zu", a, v,
                           x->nstrings);
        vat_xl_set_str(x->sheet, x->crow, x->ccol, x->strings[k], VAT_XL_PLAIN);
    } else if (strcmp(t, "str") == 0) {
        vat_xl_set_str(x->sheet, x->crow, x->ccol, v, VAT_XL_PLAIN);
    } else if (strcmp(t, "b") == 0) {
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            return xp_fail(x, "cell %s: boolean '%.20s' is neither 0 nor 1", a, v);
        vat_xl_set_bool(x->sheet, x->crow, x->ccol, v[0] == '1');
    } else if (strcmp(t, "e") == 0) {
        return xp_fail(x, "cell %s holds the error value '%.20s'", a, v);
    } else if (strcmp(t, "d") == 0) {
        return xp_fail(x, "cell %s is a typed date, which this reader does not support", a);
    } else {
        return xp_fail(x, "cell %s has the unknown type '%s'", a, t);
    }
    if (x->have_f) {
        const struct vat_xl_cell *c = vat_xl_get(x->sheet, x->crow, x->ccol);
        if (c)
            ((struct vat_xl_cell *)c)->formula = true;
    }
}

static void sheet_end(struct xl_parse *x, const char *el)
{
    if (strcmp(el, "sheetData") == 0) {
        x->in_sheetdata = false;
    } else if (x->in_sheetdata && strcmp(el, "row") == 0) {
        x->in_row = false;
    } else if (x->in_cell && strcmp(el, "c") == 0) {
        x->in_cell = false;
        sheet_cell_end(x);
    } else if (x->in_cell && strcmp(el, "v") == 0) {
        x->collect = false;
        buf_reset(&x->v);
        vat_buf_putn(&x->v, x->text.data ? x->text.data : "", x->text.len);
    } else if (x->in_is && strcmp(el, "rPh") == 0) {
        x->in_rph = false;
    } else if (x->in_is && !x->in_rph && strcmp(el, "t") == 0) {
        x->collect = false;
        vat_buf_putn(&x->is, x->text.data ? x->text.data : "", x->text.len);
        if (x->is.len > VAT_XL_MAX_TEXT)
            xp_fail(x, "a cell's text is longer than %u bytes", VAT_XL_MAX_TEXT);
    } else if (x->in_cell && strcmp(el, "is") == 0) {
        x->in_is = false;
    }
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    struct xl_parse *x = ud;
    if (x->err[0])
        return;
    if (++x->depth > VAT_XL_MAX_DEPTH)
        return xp_fail(x, "elements nest deeper than %d", VAT_XL_MAX_DEPTH);
    const char *el = local(name);
    switch (x->kind) {
    case P_WORKBOOK:
        if (strcmp(el, "sheet") == 0) {
            const char *n = attr(atts, "name"), *rid = attr_rel(atts, "id");
            if (!n || !rid || !*n)
                return xp_fail(x, "a <sheet> lacks its name or r:id");
            if (x->nws >= VAT_XL_MAX_SHEETS)
                return xp_fail(x, "more than %d sheets", VAT_XL_MAX_SHEETS);
            x->ws = vat_xrealloc(x->ws, (x->nws + 1) * sizeof *x->ws);
            x->ws[x->nws].name = vat_xstrdup(n);
            x->ws[x->nws].rid = vat_xstrdup(rid);
            x->nws++;
        }
        break;
    case P_RELS:
        if (strcmp(el, "Relationship") == 0) {
            const char *id = attr(atts, "Id"), *tg = attr(atts, "Target"), *ty = attr(atts, "Type");
            if (!id || !tg || !ty)
                return xp_fail(x, "a <Relationship> lacks Id, Target or Type");
            if (x->nrel >= VAT_XL_MAX_ENTRIES)
                return xp_fail(x, "more than %d relationships", VAT_XL_MAX_ENTRIES);
            x->rel = vat_xrealloc(x->rel, (x->nrel + 1) * sizeof *x->rel);
            x->rel[x->nrel++] = (struct xl_rel){vat_xstrdup(id), vat_xstrdup(tg), vat_xstrdup(ty)};
        }
        break;
    case P_SST:
        if (strcmp(el, "si") == 0) {
            if (x->in_si)
                return xp_fail(x, "<si> inside <si>");
            if (x->nsst >= VAT_XL_MAX_STRINGS)
                return xp_fail(x, "more than %u shared strings", VAT_XL_MAX_STRINGS);
            x->in_si = true;
            buf_reset(&x->is);
        } else if (x->in_si && strcmp(el, "rPh") == 0) {
            x->in_rph = true;
        } else if (x->in_si && !x->in_rph && strcmp(el, "t") == 0) {
            x->collect = true;
            x->text.len = 0;
        }
        break;
    case P_SHEET: sheet_start(x, el, atts); break;
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    struct xl_parse *x = ud;
    if (x->err[0])
        return;
    x->depth--;
    const char *el = local(name);
    if (x->kind == P_SST) {
        if (x->in_si && strcmp(el, "rPh") == 0) {
            x->in_rph = false;
        } else if (x->in_si && !x->in_rph && strcmp(el, "t") == 0) {
            x->collect = false;
            vat_buf_putn(&x->is, x->text.data ? x->text.data : "", x->text.len);
            if (x->is.len > VAT_XL_MAX_TEXT)
                xp_fail(x, "shared string %zu is longer than %u bytes", x->nsst, VAT_XL_MAX_TEXT);
        } else if (x->in_si && strcmp(el, "si") == 0) {
            x->in_si = false;
            if (x->nsst == x->sstcap) {
                x->sstcap = x->sstcap ? 2 * x->sstcap : 64;
                x->sst = vat_xrealloc(x->sst, x->sstcap * sizeof *x->sst);
            }
            x->sst[x->nsst++] = vat_xstrndup(x->is.data ? x->is.data : "", x->is.len);
        }
    } else if (x->kind == P_SHEET) {
        sheet_end(x, el);
    }
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    struct xl_parse *x = ud;
    if (x->err[0] || !x->collect)
        return;
    if (x->text.len + (size_t)len > VAT_XL_MAX_TEXT)
        return xp_fail(x, "a text node is longer than %u bytes", VAT_XL_MAX_TEXT);
    vat_buf_putn(&x->text, s, (size_t)len);
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sys,
                               const XML_Char *pub, int has_internal)
{
    (void)name, (void)sys, (void)pub, (void)has_internal;
    xp_fail(ud, "a DTD is not allowed in a workbook part");
}

static void XMLCALL on_entity(void *ud, const XML_Char *name, int is_param, const XML_Char *value,
                              int value_len, const XML_Char *base, const XML_Char *sys,
                              const XML_Char *pub, const XML_Char *notation)
{
    (void)name, (void)is_param, (void)value, (void)value_len, (void)base, (void)sys, (void)pub,
        (void)notation;
    xp_fail(ud, "an entity declaration is not allowed in a workbook part");
}

/* Parses one part's text with x's handlers.  0 or -1 with e set. */
static int xml_parse(struct xl_parse *x, const char *data, size_t len, struct vat_err *e)
{
    x->p = XML_ParserCreateNS(NULL, '|');
    if (!x->p)
        return vat_err_set(e, "xlsx: out of memory creating an XML parser");
    XML_SetUserData(x->p, x);
    XML_SetElementHandler(x->p, on_start, on_end);
    XML_SetCharacterDataHandler(x->p, on_text);
    XML_SetStartDoctypeDeclHandler(x->p, on_doctype);
    XML_SetEntityDeclHandler(x->p, on_entity);
    x->depth = 0;
    x->err[0] = '\0';
    enum XML_Status st = XML_Parse(x->p, data, (int)len, XML_TRUE);
    int rc = 0;
    if (x->err[0])
        rc = vat_err_set(e, "xlsx: '%s' part '%s': %s", x->file, x->part, x->err);
    else if (st != XML_STATUS_OK)
        rc = vat_err_set(e, "xlsx: '%s' part '%s': XML error at line %lu: %s", x->file, x->part,
                         (unsigned long)XML_GetCurrentLineNumber(x->p),
                         XML_ErrorString(XML_GetErrorCode(x->p)));
    XML_ParserFree(x->p);
    x->p = NULL;
    return rc;
}

/* Reads and parses a part; a missing required part is an error. */
static int parse_part(struct xl_zip *z, struct xl_parse *x, enum xl_part kind, const char *part,
                      bool required, struct vat_err *e)
{
    char *data = NULL;
    size_t len = 0;
    int rc = zip_part(z, part, &data, &len, e);
    if (rc < 0)
        return -1;
    if (rc == 1)
        return required ? vat_err_set(e, "xlsx: '%s' lacks the part '%s'", z->name, part) : 1;
    if (len > (size_t)0x7fffffff) {
        free(data);
        return vat_err_set(e, "xlsx: '%s' part '%s' is too large to parse", z->name, part);
    }
    x->kind = kind;
    x->part = part;
    rc = xml_parse(x, data, len, e);
    free(data);
    return rc;
}

/* The zip path a workbook relationship target names ("worksheets/s1.xml"
 * relative to xl/, or "/xl/worksheets/s1.xml" absolute).  NULL when it
 * climbs out (".."), which no writer needs. */
static char *resolve_target(const char *target)
{
    if (strstr(target, ".."))
        return NULL;
    if (target[0] == '/')
        return vat_xstrdup(target + 1);
    return vat_xasprintf("xl/%s", target);
}

static const char *rel_target(const struct xl_parse *x, const char *id)
{
    for (size_t i = 0; i < x->nrel; i++)
        if (strcmp(x->rel[i].id, id) == 0)
            return x->rel[i].target;
    return NULL;
}

static void parse_release(struct xl_parse *x)
{
    for (size_t i = 0; i < x->nws; i++) {
        free(x->ws[i].name);
        free(x->ws[i].rid);
    }
    free(x->ws);
    for (size_t i = 0; i < x->nrel; i++) {
        free(x->rel[i].id);
        free(x->rel[i].target);
        free(x->rel[i].type);
    }
    free(x->rel);
    for (size_t i = 0; i < x->nsst; i++)
        free(x->sst[i]);
    free(x->sst);
    vat_buf_release(&x->text);
    vat_buf_release(&x->v);
    vat_buf_release(&x->is);
}

static int read_book(struct vat_xl_book *b, struct xl_zip *z, struct xl_parse *x,
                     struct vat_err *e)
{
    zip_int64_t n = zip_get_num_entries(z->za, 0);
    if (n < 0 || n > VAT_XL_MAX_ENTRIES)
        return vat_err_set(e, "xlsx: '%s' has %lld zip entries (cap %d)", z->name, (long long)n,
                           VAT_XL_MAX_ENTRIES);
    if (parse_part(z, x, P_WORKBOOK, "xl/workbook.xml", true, e) != 0)
        return -1;
    if (x->nws == 0)
        return vat_err_set(e, "xlsx: '%s': xl/workbook.xml names no sheet", z->name);
    if (parse_part(z, x, P_RELS, "xl/_rels/workbook.xml.rels", true, e) != 0)
        return -1;
    for (size_t i = 0; i < x->nrel; i++) {
        size_t tl = strlen(x->rel[i].type);
        if (tl >= 14 && strcmp(x->rel[i].type + tl - 14, "/sharedStrings") == 0) {
            char *part = resolve_target(x->rel[i].target);
            if (!part)
                return vat_err_set(e, "xlsx: '%s': target '%.60s' leaves the package", z->name,
                                   x->rel[i].target);
            int rc = parse_part(z, x, P_SST, part, true, e);
            free(part);
            if (rc != 0)
                return -1;
            break;
        }
    }
    x->strings = (const char *const *)x->sst;
    x->nstrings = x->nsst;
    size_t cells_left = VAT_XL_MAX_CELLS;
    for (size_t i = 0; i < x->nws; i++) {
        for (size_t k = 0; k < i; k++)
            if (strcmp(x->ws[k].name, x->ws[i].name) == 0)
                return vat_err_set(e, "xlsx: '%s': two sheets are called '%.40s'", z->name,
                                   x->ws[i].name);
        const char *tg = rel_target(x, x->ws[i].rid);
        if (!tg)
            return vat_err_set(e, "xlsx: '%s': sheet '%.40s' has no relationship '%.40s'",
                               z->name, x->ws[i].name, x->ws[i].rid);
        char *part = resolve_target(tg);
        if (!part)
            return vat_err_set(e, "xlsx: '%s': target '%.60s' leaves the package", z->name, tg);
        x->sheet = vat_xl_add_sheet(b, x->ws[i].name);
        x->cells_left = &cells_left;
        x->in_sheetdata = x->in_row = x->in_cell = x->in_is = x->in_rph = x->collect = false;
        x->last_row = -1;
        x->next_col = 0;
        int rc = parse_part(z, x, P_SHEET, part, true, e);
        free(part);
        if (rc != 0)
            return -1;
    }
    return 0;
}

int vat_xl_read_mem(struct vat_xl_book *b, const void *data, size_t len, const char *name,
                    struct vat_err *e)
{
    if (len > VAT_XL_MAX_FILE_BYTES)
        return vat_err_set(e, "xlsx: '%s' is larger than %zu bytes", name, VAT_XL_MAX_FILE_BYTES);
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(len ? data : "", len, 0, &ze);
    if (!src) {
        zip_error_fini(&ze);
        return vat_err_set(e, "xlsx: '%s': cannot open the buffer", name);
    }
    zip_t *za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
    if (!za) {
        vat_err_set(e, "xlsx: '%s' is not a zip archive: %s", name, zip_error_strerror(&ze));
        zip_source_free(src);
        zip_error_fini(&ze);
        return -1;
    }
    zip_error_fini(&ze);
    struct xl_zip z = {.za = za, .name = name};
    struct xl_parse x;
    memset(&x, 0, sizeof x);
    x.file = name;
    int rc = read_book(b, &z, &x, e);
    parse_release(&x);
    zip_discard(za); /* read-only: nothing to write back; frees src */
    if (rc != 0)
        vat_xl_release(b);
    return rc;
}

/* A deep copy of src into dst (empty). */
static void book_copy(struct vat_xl_book *dst, const struct vat_xl_book *src)
{
    dst->nsheets = src->nsheets;
    dst->sheet = vat_xcalloc(src->nsheets ? src->nsheets : 1, sizeof *dst->sheet);
    for (size_t i = 0; i < src->nsheets; i++) {
        const struct vat_xl_sheet *a = &src->sheet[i];
        struct vat_xl_sheet *d = &dst->sheet[i];
        *d = *a;
        d->name = vat_xstrdup(a->name);
        d->cap = a->ncells;
        d->cell = vat_xcalloc(a->ncells ? a->ncells : 1, sizeof *d->cell);
        for (size_t k = 0; k < a->ncells; k++) {
            d->cell[k] = a->cell[k];
            if (a->cell[k].s)
                d->cell[k].s = vat_xstrdup(a->cell[k].s);
        }
        d->mcap = a->nmerge;
        d->merge = vat_xcalloc(a->nmerge ? a->nmerge : 1, sizeof *d->merge);
        if (a->nmerge)
            memcpy(d->merge, a->merge, a->nmerge * sizeof *d->merge);
    }
}

/* The last workbook each thread parsed, by its bytes: a task reads its
 * workbook for the prompt, the reference, the confirmation and the trap,
 * and only the first read parses it; the later ones still read the file
 * and get a copy of the parse only when its bytes are the same, so what
 * they see is the file as it is. */
struct xl_last {
    char *bytes;
    size_t len;
    struct vat_xl_book book;
};
static pthread_key_t xl_last_key;
static pthread_once_t xl_last_once = PTHREAD_ONCE_INIT;

static void xl_last_free(void *arg)
{
    struct xl_last *l = arg;
    free(l->bytes);
    vat_xl_release(&l->book);
    free(l);
}

static void xl_last_init(void)
{
    pthread_key_create(&xl_last_key, xl_last_free);
}

int vat_xl_read(struct vat_xl_book *b, const char *root, const char *rel, struct vat_err *e)
{
    char *path = vat_path_join(root, rel);
    FILE *f = fopen(path, "rb");
    if (!f) {
        vat_err_set(e, "xlsx: cannot open '%s': %s", path, strerror(errno));
        free(path);
        return -1;
    }
    free(path);
    size_t cap = VAT_XL_MAX_FILE_BYTES + 1, len = 0;
    char *buf = vat_xmalloc(cap);
    size_t n;
    while (len < cap && (n = fread(buf + len, 1, cap - len, f)) > 0)
        len += n;
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return vat_err_set(e, "xlsx: cannot read '%s'", rel);
    }
    pthread_once(&xl_last_once, xl_last_init);
    struct xl_last *last = pthread_getspecific(xl_last_key);
    if (last && last->len == len && memcmp(last->bytes, buf, len) == 0) {
        free(buf);
        book_copy(b, &last->book);
        return 0;
    }
    int rc = vat_xl_read_mem(b, buf, len, rel, e);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    if (!last) {
        last = vat_xcalloc(1, sizeof *last);
        pthread_setspecific(xl_last_key, last);
    }
    free(last->bytes);
    vat_xl_release(&last->book);
    last->bytes = vat_xrealloc(buf, len ? len : 1);
    last->len = len;
    book_copy(&last->book, b);
    return 0;
}

/* ---- the prompt's view ---------------------------------------------------------- */

/* A text cell a reader would take for a number: Excel flags these with a
 * green triangle, and the grid shows them with a leading apostrophe. */
static bool looks_numeric(const char *s)
{
    if (!*s)
        return false;
    char *end;
    (void)strtod(s, &end);
    return *end == '\0' && !strpbrk(s, "xXnNiI") && s[0] != ' ';
}

static void put_cell_text(struct vat_buf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            vat_buf_puts(out, "\\|");
        else if (*s == '\n')
            vat_buf_puts(out, "\\n");
        else
            vat_buf_putc(out, *s);
    }
}

size_t vat_xl_grid(struct vat_buf *out, const struct vat_xl_sheet *s, uint32_t nrows)
{
    size_t start = out->len;
    uint32_t ncols = vat_xl_ncols(s);
    char nb[40], cn[8];
    vat_buf_puts(out, "|   |");
    for (uint32_t c = 0; c < ncols; c++)
        vat_buf_printf(out, " %s |", vat_xl_col_name(c, cn, sizeof cn));
    vat_buf_puts(out, "\n|---|");
    for (uint32_t c = 0; c < ncols; c++)
        vat_buf_puts(out, "---|");
    vat_buf_putc(out, '\n');
    for (uint32_t r = 0; r < nrows; r++) {
        vat_buf_printf(out, "| %lu |", (unsigned long)r + 1);
        for (uint32_t c = 0; c < ncols; c++) {
            const struct vat_xl_cell *cell = vat_xl_get(s, r, c);
            const char *txt = vat_xl_text(cell, nb, sizeof nb);
            vat_buf_putc(out, ' ');
            if (cell && cell->type == VAT_XL_STRING && looks_numeric(txt))
                vat_buf_putc(out, '\'');
            put_cell_text(out, txt);
            vat_buf_puts(out, txt[0] || (cell && cell->type == VAT_XL_STRING) ? " |" : "|");
        }
        vat_buf_putc(out, '\n');
    }
    if (s->nmerge) {
        vat_buf_puts(out, "Merged cells:");
        for (size_t i = 0; i < s->nmerge; i++) {
            char a1[16], a2[16];
            vat_buf_printf(out, "%s %s:%s", i ? "," : "",
                           vat_xl_addr(s->merge[i].r1, s->merge[i].c1, a1, sizeof a1),
                           vat_xl_addr(s->merge[i].r2, s->merge[i].c2, a2, sizeof a2));
        }
        vat_buf_putc(out, '\n');
    }
    return out->len - start;
}

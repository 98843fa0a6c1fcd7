/* extsort.c — the external merge sort (see extsort.h).  A run on disk is
 * a sequence of records, each a 4-byte little-endian length and its
 * bytes; all runs of one pass live in one temporary file. */
#include "extsort.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An in-memory record: its first 8 bytes as a big-endian number (zero
 * padded) decide most comparisons without touching the arena. */
struct vat_xsort_entry {
    uint64_t head;
    uint32_t off, len;
};

#define READ_BUF ((size_t)64 << 10)

/* A run being read: a window of the file in buf[0, have), the current
 * record at buf + at, len bytes long. */
struct vat_xsort_reader {
    int fd;
    uint64_t head;      /* the current record's first 8 bytes (head_of) */
    uint64_t next, end; /* file offsets: what is not read yet */
    unsigned char *buf;
    size_t cap, have, at, len;
};

static const char *temp_dir(const char *dir)
{
    if (dir && *dir)
        return dir;
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

int vat_temp_fd(const char *dir, struct vat_err *e)
{
    char *path = vat_xasprintf("%s/vat-sort-XXXXXX", temp_dir(dir));
    int fd = mkstemp(path);
    if (fd < 0) {
        vat_err_set(e, "vat: cannot create a temporary file in '%s': %s", temp_dir(dir),
                    strerror(errno));
        free(path);
        return -1;
    }
    unlink(path);
    free(path);
    return fd;
}

void vat_xsort_init(struct vat_xsort *s, const char *dir, size_t budget)
{
    memset(s, 0, sizeof *s);
    s->dir = dir ? vat_xstrdup(dir) : NULL;
    s->budget = budget < VAT_XSORT_MIN_BUDGET ? VAT_XSORT_MIN_BUDGET : budget;
    if (s->budget > ((size_t)1 << 30)) /* arena offsets are 32-bit */
        s->budget = (size_t)1 << 30;
    s->fd = -1;
}

static uint64_t head_of(const unsigned char *p, size_t len)
{
    uint64_t h = 0;
    for (size_t i = 0; i < 8; i++)
        h = h << 8 | (i < len ? p[i] : 0);
    return h;
}

static int cmp_bytes(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c)
        return c;
    return (alen > blen) - (alen < blen);
}

static _Thread_local const unsigned char *sort_arena;

static int cmp_entry(const void *pa, const void *pb)
{
    const struct vat_xsort_entry *a = pa, *b = pb;
    if (a->head != b->head)
        return a->head < b->head ? -1 : 1;
    size_t n = a->len < b->len ? a->len : b->len;
    if (n > 8) {
        int c = memcmp(sort_arena + a->off + 8, sort_arena + b->off + 8, n - 8);
        if (c)
            return c;
    }
    return (a->len > b->len) - (a->len < b->len);
}

/* Sorts the entries: by their heads with a radix sort (a byte a pass,
 * least significant first, passes whose byte never varies skipped), then
 * each run of equal heads by the whole records (cmp_entry).  The order is
 * cmp_entry's either way; the radix sort only makes it linear in the
 * records for the usual keys, which differ in their first eight bytes. */
static void sort_memory(struct vat_xsort *s)
{
    size_t n = s->nent;
    if (n < 2)
        return;
    sort_arena = s->arena;
    if (n < 256) {
        qsort(s->ent, n, sizeof *s->ent, cmp_entry);
        sort_arena = NULL;
        return;
    }
    struct vat_xsort_entry *a = s->ent, *b = vat_xmalloc(n * sizeof *b);
    size_t count[256];
    for (int pass = 0; pass < 8; pass++) {
        int shift = 8 * pass;
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++)
            count[(a[i].head >> shift) & 0xff]++;
        if (count[(a[0].head >> shift) & 0xff] == n)
            continue; /* one value of this byte: nothing moves */
        size_t at = 0;
        for (int d = 0; d < 256; d++) {
            size_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            b[count[(a[i].head >> shift) & 0xff]++] = a[i];
        struct vat_xsort_entry *t = a;
        a = b;
        b = t;
    }
    if (a != s->ent) {
        memcpy(s->ent, a, n * sizeof *a);
        b = a;
    }
    free(b);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && s->ent[j].head == s->ent[i].head)
            j++;
        if (j - i > 1)
            qsort(s->ent + i, j - i, sizeof *s->ent, cmp_entry);
        i = j;
    }
    sort_arena = NULL;
}

int vat_pwrite_all(int fd, uint64_t off, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    while (len) {
        ssize_t w = pwrite(fd, p, len, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        off += (uint64_t)w;
        len -= (size_t)w;
    }
    return 0;
}

int vat_pread_all(int fd, uint64_t off, void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len) {
        ssize_t got = pread(fd, p, len, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got == 0)
                errno = EIO;
            return -1;
        }
        p += got;
        off += (uint64_t)got;
        len -= (size_t)got;
    }
    return 0;
}

/* Buffered appends to a run file. */
struct run_writer {
    int fd;
    uint64_t off;
    unsigned char *buf;
    size_t len;
};

static int rw_flush(struct run_writer *w)
{
    if (w->len && vat_pwrite_all(w->fd, w->off, w->buf, w->len) != 0)
        return -1;
    w->off += w->len;
    w->len = 0;
    return 0;
}

static int rw_put(struct run_writer *w, const unsigned char *rec, size_t len)
{
    if (w->len + 4 + len > READ_BUF && rw_flush(w) != 0)
        return -1;
    if (4 + len > READ_BUF) { /* a record larger than the buffer goes alone */
        unsigned char n[4] = {(unsigned char)len, (unsigned char)(len >> 8),
                              (unsigned char)(len >> 16), (unsigned char)(len >> 24)};
        if (vat_pwrite_all(w->fd, w->off, n, 4) != 0 || vat_pwrite_all(w->fd, w->off + 4, rec, len) != 0)
            return -1;
        w->off += 4 + len;
        return 0;
    }
    unsigned char *p = w->buf + w->len;
    p[0] = (unsigned char)len;
    p[1] = (unsigned char)(len >> 8);
    p[2] = (unsigned char)(len >> 16);
    p[3] = (unsigned char)(len >> 24);
    if (len)
        memcpy(p + 4, rec, len);
    w->len += 4 + len;
    return 0;
}

static void add_run(struct vat_xsort *s, uint64_t off, uint64_t len)
{
    if (s->nruns == s->capruns) {
        s->capruns = s->capruns ? 2 * s->capruns : 16;
        s->run_off = vat_xrealloc(s->run_off, s->capruns * sizeof *s->run_off);
        s->run_len = vat_xrealloc(s->run_len, s->capruns * sizeof *s->run_len);
    }
    s->run_off[s->nruns] = off;
    s->run_len[s->nruns] = len;
    s->nruns++;
}

static int io_error(struct vat_xsort *s, struct vat_err *e, const char *what)
{
    return vat_err_set(e, "vat: cannot %s a temporary file in '%s': %s", what, temp_dir(s->dir),
                       errno ? strerror(errno) : "short write");
}

/* Sorts what memory holds and writes it as one run. */
static int spill(struct vat_xsort *s, struct vat_err *e)
{
    if (!s->nent)
        return 0;
    if (s->fd < 0 && (s->fd = vat_temp_fd(s->dir, e)) < 0)
        return -1;
    sort_memory(s);
    struct run_writer w = {s->fd, s->fend, vat_xmalloc(READ_BUF), 0};
    int rc = 0;
    for (size_t i = 0; i < s->nent && rc == 0; i++)
        rc = rw_put(&w, s->arena + s->ent[i].off, s->ent[i].len);
    if (rc == 0)
        rc = rw_flush(&w);
    free(w.buf);
    if (rc != 0)
        return io_error(s, e, "write");
    add_run(s, s->fend, w.off - s->fend);
    s->fend = w.off;
    s->nent = 0;
    s->alen = 0;
    return 0;
}

int vat_xsort_add(struct vat_xsort *s, const void *rec, size_t len, struct vat_err *e)
{
    if (len > UINT32_MAX)
        return vat_err_set(e, "vat: a sort record of %zu bytes is too large", len);
    /* the entries twice: the radix sort moves them through a copy */
    size_t need = s->alen + len + 2 * (s->nent + 1) * sizeof *s->ent;
    if (need > s->budget && s->nent && spill(s, e) != 0)
        return -1;
    if (s->alen + len > s->acap) {
        size_t cap = s->acap ? s->acap : 4096;
        while (cap < s->alen + len)
            cap *= 2;
        s->arena = vat_xrealloc(s->arena, cap);
        s->acap = cap;
    }
    if (s->nent == s->capent) {
        s->capent = s->capent ? 2 * s->capent : 256;
        s->ent = vat_xrealloc(s->ent, s->capent * sizeof *s->ent);
    }
    if (len)
        memcpy(s->arena + s->alen, rec, len);
    s->ent[s->nent++] = (struct vat_xsort_entry){head_of(rec, len), (uint32_t)s->alen,
                                                 (uint32_t)len};
    s->alen += len;
    s->count++;
    return 0;
}

/* ---- reading runs ----------------------------------------------------------- */

/* Makes the next record of r current: 1, 0 at the run's end, -1 on error. */
static int reader_step(struct vat_xsort_reader *r)
{
    r->at += r->len;
    r->len = 0;
    for (;;) {
        size_t avail = r->have - r->at;
        if (avail >= 4) {
            const unsigned char *p = r->buf + r->at;
            size_t len = (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 |
                         (size_t)p[3] << 24;
            if (avail >= 4 + len) {
                r->at += 4;
                r->len = len;
                r->head = head_of(r->buf + r->at, len);
                return 1;
            }
            if (4 + len > r->cap) { /* a record larger than the buffer */
                r->cap = 4 + len;
                unsigned char *nb = vat_xmalloc(r->cap);
                memcpy(nb, r->buf + r->at, avail);
                free(r->buf);
                r->buf = nb;
                r->have = avail;
                r->at = 0;
            }
        }
        if (r->next >= r->end) {
            if (r->have != r->at) {
                errno = EIO; /* a run cut short */
                return -1;
            }
            return 0;
        }
        /* keep the unread tail, fill the rest */
        memmove(r->buf, r->buf + r->at, avail);
        r->have = avail;
        r->at = 0;
        size_t want = r->cap - r->have;
        if ((uint64_t)want > r->end - r->next)
            want = (size_t)(r->end - r->next);
        ssize_t got;
        do
            got = pread(r->fd, r->buf + r->have, want, (off_t)r->next);
        while (got < 0 && errno == EINTR);
        if (got <= 0) {
            if (got == 0)
                errno = EIO;
            return -1;
        }
        r->have += (size_t)got;
        r->next += (uint64_t)got;
    }
}

static int reader_cmp(const struct vat_xsort_reader *a, const struct vat_xsort_reader *b)
{
    if (a->head != b->head)
        return a->head < b->head ? -1 : 1;
    return cmp_bytes(a->buf + a->at, a->len, b->buf + b->at, b->len);
}

static void heap_down(struct vat_xsort_reader *rd, size_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && reader_cmp(&rd[h[l]], &rd[h[m]]) < 0)
            m = l;
        if (l + 1 < n && reader_cmp(&rd[h[l + 1]], &rd[h[m]]) < 0)
            m = l + 1;
        if (m == i)
            return;
        size_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void readers_free(struct vat_xsort *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s->rd[i].buf);
    free(s->rd);
    free(s->heap);
    s->rd = NULL;
    s->heap = NULL;
    s->nheap = 0;
}

/* Opens readers on the n runs at off[i], len[i] and builds the heap. */
static int readers_open(struct vat_xsort *s, const uint64_t *off, const uint64_t *len, size_t n)
{
    s->rd = vat_xcalloc(n ? n : 1, sizeof *s->rd);
    s->heap = vat_xcalloc(n ? n : 1, sizeof *s->heap);
    s->nheap = 0;
    for (size_t i = 0; i < n; i++) {
        struct vat_xsort_reader *r = &s->rd[i];
        r->fd = s->fd;
        r->next = off[i];
        r->end = off[i] + len[i];
        r->cap = READ_BUF;
        r->buf = vat_xmalloc(r->cap);
        int st = reader_step(r);
        if (st < 0)
            return -1;
        if (st > 0)
            s->heap[s->nheap++] = i;
    }
    for (size_t i = s->nheap / 2; i-- > 0;)
        heap_down(s->rd, s->heap, s->nheap, i);
    s->advance = 0;
    return 0;
}

/* The smallest current record: 1, 0 when every run is done, -1 on error. */
static int heap_next(struct vat_xsort *s, const unsigned char **rec, size_t *len)
{
    if (s->advance && s->nheap) {
        struct vat_xsort_reader *r = &s->rd[s->heap[0]];
        int st = reader_step(r);
        if (st < 0)
            return -1;
        if (st == 0)
            s->heap[0] = s->heap[--s->nheap];
        heap_down(s->rd, s->heap, s->nheap, 0);
    }
    s->advance = 0;
    if (!s->nheap)
        return 0;
    struct vat_xsort_reader *r = &s->rd[s->heap[0]];
    *rec = r->buf + r->at;
    *len = r->len;
    s->advance = 1;
    return 1;
}

/* Merges the runs in passes until at most VAT_XSORT_FANIN are left. */
static int merge_passes(struct vat_xsort *s, struct vat_err *e)
{
    while (s->nruns > VAT_XSORT_FANIN) {
        int out = vat_temp_fd(s->dir, e);
        if (out < 0)
            return -1;
        size_t nold = s->nruns;
        uint64_t *old_off = s->run_off, *old_len = s->run_len;
        s->run_off = s->run_len = NULL;
        s->nruns = s->capruns = 0;
        struct run_writer w = {out, 0, vat_xmalloc(READ_BUF), 0};
        int rc = 0;
        for (size_t first = 0; first < nold && rc == 0; first += VAT_XSORT_FANIN) {
            size_t n = nold - first < VAT_XSORT_FANIN ? nold - first : VAT_XSORT_FANIN;
            rc = readers_open(s, old_off + first, old_len + first, n);
            uint64_t start = w.off + w.len;
            const unsigned char *rec;
            size_t len;
            int st;
            while (rc == 0 && (st = heap_next(s, &rec, &len)) != 0)
                rc = st < 0 ? -1 : rw_put(&w, rec, len);
            readers_free(s, n);
            if (rc == 0)
                add_run(s, start, w.off + w.len - start);
        }
        if (rc == 0)
            rc = rw_flush(&w);
        free(w.buf);
        free(old_off);
        free(old_len);
        close(s->fd);
        s->fd = out;
        s->fend = w.off;
        if (rc != 0)
            return io_error(s, e, "merge runs in");
    }
    return 0;
}

int vat_xsort_finish(struct vat_xsort *s, struct vat_err *e)
{
    if (s->nruns == 0) {
        sort_memory(s);
        s->reading = 1;
        s->pos = 0;
        return 0;
    }
    if (spill(s, e) != 0)
        return -1;
    free(s->arena);
    free(s->ent);
    s->arena = NULL;
    s->ent = NULL;
    s->acap = s->alen = s->capent = s->nent = 0;
    if (merge_passes(s, e) != 0)
        return -1;
    if (readers_open(s, s->run_off, s->run_len, s->nruns) != 0)
        return io_error(s, e, "read");
    s->reading = 2;
    return 0;
}

int vat_xsort_next(struct vat_xsort *s, const unsigned char **rec, size_t *len,
                   struct vat_err *e)
{
    if (s->reading == 1) {
        if (s->pos >= s->nent)
            return 0;
        const struct vat_xsort_entry *x = &s->ent[s->pos++];
        *rec = s->arena + x->off;
        *len = x->len;
        return 1;
    }
    if (s->reading != 2)
        return 0;
    int st = heap_next(s, rec, len);
    if (st < 0)
        return io_error(s, e, "read");
    return st;
}

void vat_xsort_release(struct vat_xsort *s)
{
    if (s->rd)
        readers_free(s, s->nruns);
    if (s->fd >= 0)
        close(s->fd);
    free(s->arena);
    free(s->ent);
    free(s->run_off);
    free(s->run_len);
    free(s->dir);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

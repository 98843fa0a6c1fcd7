/* extsort.h — sorting more records than memory holds (an external merge
 * sort).  Records are byte strings; they order by their bytes (memcmp,
 * a prefix before its extensions), so two records that compare equal are
 * the same bytes and the order is total whatever sort runs.  Records are
 * gathered up to a memory budget, sorted and written to a temporary file
 * as a run; reading them back merges the runs through a heap, in passes
 * of at most VAT_XSORT_FANIN runs when there are more.  Memory: the
 * budget while adding, a read buffer per merged run while reading.  The
 * temporary files are unlinked as soon as they are made, so nothing is
 * left behind however the process ends.
 * Exports struct vat_xsort and the vat_xsort_* functions. */
#ifndef VAT_EXTSORT_H
#define VAT_EXTSORT_H

#include <stddef.h>
#include <stdint.h>

#include "vat.h"

/* Runs one merge reads at once (each with a 64 KiB buffer). */
#define VAT_XSORT_FANIN 256
/* The smallest budget a sorter takes (a smaller one is raised to it). */
#define VAT_XSORT_MIN_BUDGET ((size_t)1 << 16)

struct vat_xsort_entry;
struct vat_xsort_reader;

struct vat_xsort {
    char *dir;     /* where temporary files go */
    size_t budget; /* bytes of records and their index held before a spill */
    unsigned char *arena;
    size_t alen, acap;
    struct vat_xsort_entry *ent;
    size_t nent, capent;
    int fd;        /* the file holding the runs, -1 before the first spill */
    uint64_t fend; /* its length */
    uint64_t *run_off, *run_len;
    size_t nruns, capruns;
    uint64_t count; /* records added */
    int reading;    /* 0 adding, 1 from memory, 2 merging runs */
    size_t pos;     /* next entry (from memory) */
    struct vat_xsort_reader *rd;
    size_t *heap, nheap;
    int advance; /* the heap's top was returned and must move on first */
};

/* Prepares s: temporary files in dir (NULL: $TMPDIR, else /tmp), at most
 * budget bytes of records held in memory. */
void vat_xsort_init(struct vat_xsort *s, const char *dir, size_t budget);
/* Adds one record of len bytes (copied).  0, or -1 with e set when a
 * spill cannot be written. */
int vat_xsort_add(struct vat_xsort *s, const void *rec, size_t len, struct vat_err *e);
/* Ends adding and starts reading in order.  0 or -1 with e set. */
int vat_xsort_finish(struct vat_xsort *s, struct vat_err *e);
/* The next record in order: 1 with *rec and *len set (valid until the
 * next call), 0 at the end, -1 with e set on a read error. */
int vat_xsort_next(struct vat_xsort *s, const unsigned char **rec, size_t *len,
                   struct vat_err *e);
/* Frees everything s holds and closes its temporary file. */
void vat_xsort_release(struct vat_xsort *s);

/* Big-endian field writers and readers for building records that sort by
 * their fields in order. */
static inline void vat_be_put(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--) {
        p[i] = (unsigned char)v;
        v >>= 8;
    }
}
static inline uint64_t vat_be_get(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = v << 8 | p[i];
    return v;
}

/* All len bytes written at (read from) offset off of fd, retrying short
 * transfers and EINTR: 0, or -1 with errno set (EIO for a file that ends
 * first). */
int vat_pwrite_all(int fd, uint64_t off, const void *buf, size_t len);
int vat_pread_all(int fd, uint64_t off, void *buf, size_t len);

/* A temporary file in dir (NULL: $TMPDIR, else /tmp), opened for reading
 * and writing and already unlinked.  The descriptor, or -1 with e set. */
int vat_temp_fd(const char *dir, struct vat_err *e);

#endif

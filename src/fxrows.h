/* fxrows.h — a fixture file as the leak audit compares it: the SHA-256 of
 * its bytes and the set of its data rows, each a 64-bit hash of its typed
 * cell values.  The data rows are the CSV records after the first (the
 * header), every row of every ordinary table of a SQLite file (table
 * names left out, so renaming a table does not hide copied rows), or
 * every row of two cells or more of every sheet of a workbook.  The file
 * is untrusted: opened beneath the root, a regular file only, at most 256
 * MiB, a SQLite image read in memory, read-only, defensively and with a
 * step budget.  `vat audit` reads fixtures through it, and the build
 * takes the fingerprints of what it admitted through it (prints.h), so
 * both see the same rows.
 * Exports struct vat_fx_rows, vat_fx_rows_read, vat_fx_rows_release,
 * vat_fx_open and the 64-bit hashing helpers. */
#ifndef VAT_FXROWS_H
#define VAT_FXROWS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vat.h"

/* A fixture larger than this is reported, not read. */
#define VAT_FX_MAX_BYTES ((size_t)256 << 20)

struct vat_fx_rows {
    int state;      /* 0 read, -1 not read (missing, too large, not a file),
                       -2 bytes read but rows not parsed */
    char sha[65];   /* the digest of its bytes (state 0 and -2) */
    uint64_t *rows; /* distinct data-row hashes, ascending (state 0) */
    size_t nrows;
};

/* Reads root/path into *ff.  Returns ff->state; why says what failed. */
int vat_fx_rows_read(struct vat_fx_rows *ff, const char *root, const char *path, char *why,
                     size_t cap);
/* The same from the file's bytes img (len of them) already read, without
 * the digest (ff->sha left empty): state 0 or -2.  A CSV's rows are read
 * through vat_csv_read, which a draw's file memo serves. */
int vat_fx_rows_from(struct vat_fx_rows *ff, unsigned char *img, size_t len, const char *root,
                     const char *path, char *why, size_t cap);
void vat_fx_rows_release(struct vat_fx_rows *ff);

/* Opens root/rel for reading only if it is a regular file beneath root:
 * a FIFO or device planted in a corpus must not block or stream for ever,
 * a symbolic link on the way is not followed.  *size (when not NULL) gets
 * its length.  NULL with why set. */
FILE *vat_fx_open(const char *root, const char *rel, size_t *size, char *why, size_t cap);

/* 64-bit FNV-1a, a finishing mix, and a length-prefixed tagged field (so
 * cells ("ab","c") and ("a","bc") hash apart). */
#define VAT_H64_INIT 0xcbf29ce484222325ULL
uint64_t vat_mix64(uint64_t z);
void vat_h64_feed(uint64_t *h, const void *p, size_t n);
void vat_h64_feed_field(uint64_t *h, char tag, const void *p, size_t n);
/* Sorts v ascending and drops repeats; returns the new count. */
size_t vat_sort_unique_u64(uint64_t *v, size_t n);

#endif

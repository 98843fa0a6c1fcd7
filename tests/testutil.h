/* testutil.h — helpers shared by the cmocka tests: scratch directories
 * and file reads.  Exports vat_test_tmpdir, vat_test_rmtree,
 * vat_test_read_file. */
#ifndef VAT_TESTUTIL_H
#define VAT_TESTUTIL_H

#include <stddef.h>

/* Creates a fresh directory under $TMPDIR (or /tmp); returns a new string. */
char *vat_test_tmpdir(const char *tag);
/* Removes a directory tree (only below /tmp or $TMPDIR). */
void vat_test_rmtree(const char *dir);
/* Reads a whole file into a new NUL-terminated buffer; NULL if unreadable. */
char *vat_test_read_file(const char *path, size_t *len);

#endif

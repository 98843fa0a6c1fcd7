/* sqlfile.h — pieces shared by vat's two SQLite VFSes that serve database
 * images from memory: the SQL checker's fixture sets (verifiers/sql/vfs.c)
 * and the fixture writer's shared connection (generators/sqlio.c).
 * Exports vat_sqlfile_*. */
#ifndef VAT_SQLFILE_H
#define VAT_SQLFILE_H

#include <stddef.h>

#include <sqlite3.h>

/* xRead over the len bytes at img: the part of [off, off + amt) inside
 * the image is copied, the rest zero-filled (SQLITE_IOERR_SHORT_READ, as
 * a file read past its end). */
int vat_sqlfile_read(const unsigned char *img, size_t len, void *buf, int amt, sqlite3_int64 off);
/* xClose of a file that owns nothing. */
int vat_sqlfile_close(sqlite3_file *f);
/* xSync, xLock and xUnlock where there is nothing to sync or lock: one
 * connection per image. */
int vat_sqlfile_ok(sqlite3_file *f, int arg);
/* xCheckReservedLock: nobody else holds one. */
int vat_sqlfile_unreserved(sqlite3_file *f, int *out);
/* xFileControl: no file control is known. */
int vat_sqlfile_no_control(sqlite3_file *f, int op, void *arg);
/* xFullPathname: the name as it is (it names no file on disk). */
int vat_sqlfile_name_as_is(sqlite3_vfs *vfs, const char *name, int n, char *out);

#endif

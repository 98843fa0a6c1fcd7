/* sqlfile.c — see sqlfile.h. */
#include "sqlfile.h"

#include <string.h>

int vat_sqlfile_read(const unsigned char *img, size_t len, void *buf, int amt, sqlite3_int64 off)
{
    size_t want = amt > 0 ? (size_t)amt : 0;
    size_t have = off >= 0 && (size_t)off < len ? len - (size_t)off : 0;
    if (have > want)
        have = want;
    if (have)
        memcpy(buf, img + off, have);
    if (have == want)
        return SQLITE_OK;
    memset((unsigned char *)buf + have, 0, want - have);
    return SQLITE_IOERR_SHORT_READ;
}

int vat_sqlfile_close(sqlite3_file *f)
{
    (void)f;
    return SQLITE_OK;
}

int vat_sqlfile_ok(sqlite3_file *f, int arg)
{
    (void)f;
    (void)arg;
    return SQLITE_OK;
}

int vat_sqlfile_unreserved(sqlite3_file *f, int *out)
{
    (void)f;
    *out = 0;
    return SQLITE_OK;
}

int vat_sqlfile_no_control(sqlite3_file *f, int op, void *arg)
{
    (void)f;
    (void)op;
    (void)arg;
    return SQLITE_NOTFOUND;
}

int vat_sqlfile_name_as_is(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
    (void)vfs;
    if (!name || n <= 0 || strlen(name) >= (size_t)n)
        return SQLITE_CANTOPEN;
    memcpy(out, name, strlen(name) + 1);
    return SQLITE_OK;
}

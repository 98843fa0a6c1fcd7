/* vfs.c — the sandbox VFS, which opens no file and has no clock, and a
 * fixture set's switch: one connection that serves a task's fixtures in
 * turn.
 * Part of the SQL checker: what it rests on is verifiers/sql/README.md. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include "sql_internal.h"

struct switch_file {
    sqlite3_file base;
    struct switch_state *st;
};

/* The state the next main-database open on this thread serves (set by
 * sandbox_open_switch around its sqlite3_open_v2). */
_Thread_local struct switch_state *switch_opening;

/* The state a main-database open serves, handed over once. */
static struct switch_state *switch_take(int flags)
{
    struct switch_state *st = (flags & SQLITE_OPEN_MAIN_DB) ? switch_opening : NULL;
    if (st)
        switch_opening = NULL;
    return st;
}

static int switch_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
    const struct switch_state *st = ((struct switch_file *)f)->st;
    return vat_sqlfile_read(st->set->img[st->cur], st->set->len[st->cur], buf, n, off);
}

static int switch_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
    (void)f;
    (void)buf;
    (void)n;
    (void)off;
    return SQLITE_READONLY;
}

static int switch_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    (void)f;
    (void)size;
    return SQLITE_READONLY;
}

static int switch_size(sqlite3_file *f, sqlite3_int64 *size)
{
    const struct switch_state *st = ((struct switch_file *)f)->st;
    *size = (sqlite3_int64)st->set->len[st->cur];
    return SQLITE_OK;
}

static int switch_sector(sqlite3_file *f)
{
    (void)f;
    return 512;
}

static int switch_device(sqlite3_file *f)
{
    (void)f;
    return 0; /* not SQLITE_IOCAP_IMMUTABLE: the pager must check the header */
}

static const sqlite3_io_methods switch_methods = {
    .iVersion = 1,
    .xClose = vat_sqlfile_close,
    .xRead = switch_read,
    .xWrite = switch_write,
    .xTruncate = switch_truncate,
    .xSync = vat_sqlfile_ok,
    .xFileSize = switch_size,
    .xLock = vat_sqlfile_ok,
    .xUnlock = vat_sqlfile_ok,
    .xCheckReservedLock = vat_sqlfile_unreserved,
    .xFileControl = vat_sqlfile_no_control,
    .xSectorSize = switch_sector,
    .xDeviceCharacteristics = switch_device,
};

/* ---- the sandbox VFS: no files, no clock ------------------------------------ */

static sqlite3_vfs sandbox_vfs;
int sandbox_vfs_rc = SQLITE_ERROR;
pthread_once_t sandbox_vfs_once = PTHREAD_ONCE_INIT;

/* Every file SQLite would open here, but a fixture set's main database
 * (below), is temporary storage for a sort, an ephemeral table or a
 * journal: refusing it caps memory at the page caches and keeps answers
 * off the disk.  SQLITE_FULL tells the runner why. */
static int vfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
    (void)vfs;
    (void)name;
    struct switch_state *st = switch_take(flags);
    if (st) {
        ((struct switch_file *)f)->st = st;
        f->pMethods = &switch_methods;
        if (out)
            *out = SQLITE_OPEN_READONLY | SQLITE_OPEN_MAIN_DB;
        return SQLITE_OK;
    }
    f->pMethods = NULL;
    return SQLITE_FULL;
}

static int vfs_delete(sqlite3_vfs *vfs, const char *name, int sync)
{
    (void)vfs;
    (void)name;
    (void)sync;
    return SQLITE_IOERR_DELETE;
}

static int vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
    (void)vfs;
    (void)name;
    (void)flags;
    *out = 0;
    return SQLITE_OK;
}

static void *vfs_dlopen(sqlite3_vfs *vfs, const char *name)
{
    (void)vfs;
    (void)name;
    return NULL;
}

static void vfs_dlerror(sqlite3_vfs *vfs, int n, char *msg)
{
    (void)vfs;
    if (n > 0)
        snprintf(msg, (size_t)n, "extensions are disabled in the sandbox");
}

static void (*vfs_dlsym(sqlite3_vfs *vfs, void *lib, const char *sym))(void)
{
    (void)vfs;
    (void)lib;
    (void)sym;
    return NULL;
}

static void vfs_dlclose(sqlite3_vfs *vfs, void *lib)
{
    (void)vfs;
    (void)lib;
}

/* No clock: date('now') and date() then yield NULL on every run, so even a
 * 'now' the text check cannot see (built by concatenation, read from a
 * column) cannot make a result depend on the time. */
static int vfs_time(sqlite3_vfs *vfs, double *out)
{
    (void)vfs;
    (void)out;
    return SQLITE_ERROR;
}

static int vfs_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
    (void)vfs;
    (void)out;
    return SQLITE_ERROR;
}

void sandbox_vfs_init(void)
{
    sqlite3_vfs *base = sqlite3_vfs_find(NULL);
    if (!base)
        return;
    sandbox_vfs = *base; /* keeps szOsFile, mxPathname and the path helpers */
    sandbox_vfs.pNext = NULL;
    sandbox_vfs.zName = SANDBOX_VFS_NAME;
    if ((size_t)sandbox_vfs.szOsFile < sizeof(struct switch_file))
        sandbox_vfs.szOsFile = (int)sizeof(struct switch_file);
    sandbox_vfs.xOpen = vfs_open;
    sandbox_vfs.xFullPathname = vat_sqlfile_name_as_is; /* the fixture set's, as it is */
    sandbox_vfs.xDelete = vfs_delete;
    sandbox_vfs.xAccess = vfs_access;
    sandbox_vfs.xDlOpen = vfs_dlopen;
    sandbox_vfs.xDlError = vfs_dlerror;
    sandbox_vfs.xDlSym = vfs_dlsym;
    sandbox_vfs.xDlClose = vfs_dlclose;
    sandbox_vfs.xCurrentTime = vfs_time;
    if (sandbox_vfs.iVersion >= 2)
        sandbox_vfs.xCurrentTimeInt64 = vfs_time64;
    sandbox_vfs_rc = sqlite3_vfs_register(&sandbox_vfs, 0);
}

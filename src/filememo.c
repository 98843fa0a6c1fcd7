/* filememo.c — what a build hangs under file access (core/vat.h,
 * struct vat_file_hooks): a task's folder handles, its file memo, and the
 * digests of the files a build wrote.  All three serve the builder only;
 * libvat in a user's program reads and writes the disk as it is.  The
 * hooks are installed by the first begin of any of them.  Exports
 * vat_dirs_keep_*, vat_file_memo_begin, vat_file_memo_end,
 * vat_file_id_of and vat_written_*. */
#include "filememo.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void install(void);

/* ---- a task's folder handles ---------------------------------------------
 * A task's files sit in a few folders (fixtures/<template>/, its own
 * folder), and its draw reads and writes them dozens of times; each access
 * walked from the root one component at a time.  Between
 * vat_dirs_keep_begin and _end (which the file memo's begin and end call,
 * so one task attempt, on one thread), the folder a walk ends in is kept
 * open, by root and folder path, and later accesses beneath that root
 * start from it.  A kept handle is the very folder the walk opened, with
 * no link followed, so containment is as before; the window in which the
 * tree could be rearranged under it is the bracket, and its end closes
 * them all. */
#define DIR_KEEP 4
static _Thread_local struct dir_kept {
    char *root, *dir; /* root as given; rel's folder part ("" for the root) */
    int fd;
} dir_kept[DIR_KEEP];
static _Thread_local size_t n_dir_kept;
static _Thread_local bool dir_keep_on;
static _Thread_local char *dir_keep_root; /* vat_dirs_keep_across */

static void dir_kept_drop(struct dir_kept *k)
{
    close(k->fd);
    free(k->root);
    free(k->dir);
}

/* Closes the kept folders but those beneath dir_keep_root. */
static void dir_kept_clear(void)
{
    size_t kept = 0;
    for (size_t i = 0; i < n_dir_kept; i++) {
        if (dir_keep_root && strcmp(dir_kept[i].root, dir_keep_root) == 0)
            dir_kept[kept++] = dir_kept[i];
        else
            dir_kept_drop(&dir_kept[i]);
    }
    n_dir_kept = kept;
}

void vat_dirs_keep_across(const char *root)
{
    install();
    free(dir_keep_root);
    dir_keep_root = root ? vat_xstrdup(root) : NULL;
    dir_kept_clear();
}

void vat_dirs_keep_begin(void)
{
    install();
    dir_kept_clear();
    dir_keep_on = true;
}

void vat_dirs_keep_end(void)
{
    dir_kept_clear();
    dir_keep_on = false;
}

/* The kept handle of root's folder dir[0..n) (struct vat_file_hooks). */
static int dir_find(const char *root, const char *dir, size_t n)
{
    if (!dir_keep_on)
        return -1;
    for (size_t i = 0; i < n_dir_kept; i++)
        if (strcmp(dir_kept[i].root, root) == 0 && strlen(dir_kept[i].dir) == n &&
            memcmp(dir_kept[i].dir, dir, n) == 0)
            return dir_kept[i].fd;
    return -1;
}

/* Keeps fd, just opened for root's folder dir[0..n), while a bracket is
 * on (struct vat_file_hooks). */
static bool dir_keep(const char *root, const char *dir, size_t n, int fd)
{
    if (!dir_keep_on)
        return false;
    if (n_dir_kept == DIR_KEEP) { /* the oldest goes */
        dir_kept_drop(&dir_kept[0]);
        memmove(&dir_kept[0], &dir_kept[1], --n_dir_kept * sizeof dir_kept[0]);
    }
    struct dir_kept *k = &dir_kept[n_dir_kept++];
    k->root = vat_xstrdup(root);
    k->dir = vat_xstrndup(dir, n);
    k->fd = fd;
    return true;
}

/* ---- the digests of the files a build wrote ---------------------------- */

/* One note: the identity a file had once written (its path beneath the
 * root, device, inode, size, modification and change times), as the first
 * 16 bytes of the SHA-256 of those fields, and the SHA-256 of the bytes
 * written.  A lookup computes the same fingerprint from the file as listed
 * and finds the note only when every field is the same (a fingerprint
 * shared by two identities is a SHA-256 collision).  48 bytes a file,
 * kept in one array, sorted once for the manifest's lookups: a
 * 100,000-task build writes about 250,000 files. */
struct written_note {
    unsigned char id[16];
    unsigned char sha[32];
};

static struct {
    pthread_mutex_t mu;
    char *root;
    struct written_note *v;
    size_t n, cap;
    bool sorted;
    unsigned long hits;
} written = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void put_le64(unsigned char *p, uint64_t x)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

void vat_file_id_of(const struct stat *st, struct vat_file_id *id)
{
    *id = (struct vat_file_id){.dev = (uint64_t)st->st_dev,
                               .ino = (uint64_t)st->st_ino,
                               .size = (int64_t)st->st_size,
                               .mtim_s = (int64_t)st->st_mtim.tv_sec,
                               .mtim_ns = (int64_t)st->st_mtim.tv_nsec,
                               .ctim_s = (int64_t)st->st_ctim.tv_sec,
                               .ctim_ns = (int64_t)st->st_ctim.tv_nsec};
}

static void file_identity(const char *rel, const struct vat_file_id *fid, unsigned char id[16])
{
    const uint64_t f[7] = {fid->dev,
                           fid->ino,
                           (uint64_t)fid->size,
                           (uint64_t)fid->mtim_s,
                           (uint64_t)fid->mtim_ns,
                           (uint64_t)fid->ctim_s,
                           (uint64_t)fid->ctim_ns};
    size_t n = strlen(rel);
    unsigned char stack[512];
    unsigned char *buf = 56 + n <= sizeof stack ? stack : vat_xmalloc(56 + n);
    for (int i = 0; i < 7; i++)
        put_le64(buf + 8 * i, f[i]);
    memcpy(buf + 56, rel, n);
    unsigned char d[32];
    vat_sha256(buf, 56 + n, d);
    memcpy(id, d, 16);
    if (buf != stack)
        free(buf);
}

static void written_clear(void)
{
    free(written.root);
    free(written.v);
    written.root = NULL;
    written.v = NULL;
    written.n = written.cap = 0;
    written.sorted = true;
}

void vat_written_begin(const char *root)
{
    install();
    pthread_mutex_lock(&written.mu);
    written_clear();
    written.root = vat_xstrdup(root ? root : "");
    pthread_mutex_unlock(&written.mu);
}

void vat_written_end(void)
{
    pthread_mutex_lock(&written.mu);
    written_clear();
    pthread_mutex_unlock(&written.mu);
}

static bool written_root_is(const char *root)
{
    return written.root && root && strcmp(written.root, root) == 0;
}

bool vat_written_on(const char *root)
{
    pthread_mutex_lock(&written.mu);
    bool on = written_root_is(root);
    pthread_mutex_unlock(&written.mu);
    return on;
}

void vat_written_note(const char *root, const char *rel, const struct vat_file_id *id,
                      const unsigned char sha[32])
{
    struct written_note x;
    file_identity(rel, id, x.id);
    memcpy(x.sha, sha, 32);
    pthread_mutex_lock(&written.mu);
    if (written_root_is(root)) {
        if (written.n == written.cap) {
            written.cap = written.cap ? 2 * written.cap : 1024;
            written.v = vat_xrealloc(written.v, written.cap * sizeof *written.v);
        }
        written.v[written.n++] = x;
        written.sorted = false;
    }
    pthread_mutex_unlock(&written.mu);
}

static int cmp_note(const void *a, const void *b)
{
    return memcmp(((const struct written_note *)a)->id, ((const struct written_note *)b)->id, 16);
}

bool vat_written_find(const char *root, const char *rel, const struct vat_file_id *id,
                      char out[65])
{
    struct written_note key;
    file_identity(rel, id, key.id);
    const struct written_note *x = NULL;
    unsigned char sha[32];
    pthread_mutex_lock(&written.mu);
    if (written_root_is(root) && written.n) {
        if (!written.sorted) {
            qsort(written.v, written.n, sizeof *written.v, cmp_note);
            written.sorted = true;
        }
        x = bsearch(&key, written.v, written.n, sizeof *written.v, cmp_note);
        if (x) {
            memcpy(sha, x->sha, 32);
            written.hits++;
        }
    }
    pthread_mutex_unlock(&written.mu);
    if (x)
        vat_hex(sha, 32, out);
    return x != NULL;
}

unsigned long vat_written_hits(void)
{
    pthread_mutex_lock(&written.mu);
    unsigned long h = written.hits;
    pthread_mutex_unlock(&written.mu);
    return h;
}

/* ---- a task's file memo ------------------------------------------------ */

/* Entries of this thread's memo: a file's bytes as first read (tag NULL),
 * or something derived from them (tag names what, e.g. a CSV fixture's
 * SQLite image for one load spec). */
struct memo_entry {
    char *root, *rel, *tag;
    char *data; /* or an object of the caller's, freed by obj_free */
    size_t len;
    void *obj;
    void (*obj_free)(void *);
    unsigned long serial; /* a file's: its read; an object's: its file's read */
};
#define MEMO_MAX_BYTES ((size_t)256 << 20)
static _Thread_local struct {
    bool on;
    struct memo_entry *e;
    size_t n, cap, bytes;
    unsigned long serial;
} memo;

static void entry_free(struct memo_entry *x)
{
    free(x->root);
    free(x->rel);
    free(x->tag);
    free(x->data);
    if (x->obj)
        x->obj_free(x->obj);
}

static void memo_clear(void)
{
    for (size_t i = 0; i < memo.n; i++)
        entry_free(&memo.e[i]);
    free(memo.e);
    memo.e = NULL;
    memo.n = memo.cap = memo.bytes = 0;
}

void vat_file_memo_begin(void)
{
    install();
    memo_clear();
    vat_dirs_keep_begin();
    memo.on = true;
}

static bool memo_on(void)
{
    return memo.on;
}

void vat_file_memo_end(void)
{
    memo_clear();
    vat_dirs_keep_end();
    memo.on = false;
}

static bool tag_same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static struct memo_entry *memo_find(const char *root, const char *rel, const char *tag)
{
    if (!memo.on)
        return NULL;
    for (size_t i = 0; i < memo.n; i++)
        if (strcmp(memo.e[i].rel, rel) == 0 && strcmp(memo.e[i].root, root) == 0 &&
            tag_same(memo.e[i].tag, tag))
            return &memo.e[i];
    return NULL;
}

static const char *memo_get(const char *root, const char *rel, const char *tag, size_t *len)
{
    struct memo_entry *x = memo_find(root, rel, tag);
    if (!x || x->obj)
        return NULL;
    *len = x->len;
    return x->data;
}

static struct memo_entry *memo_add(const char *root, const char *rel, const char *tag)
{
    if (memo.n == memo.cap) {
        memo.cap = memo.cap ? 2 * memo.cap : 16;
        memo.e = vat_xrealloc(memo.e, memo.cap * sizeof *memo.e);
    }
    struct memo_entry *x = &memo.e[memo.n++];
    memset(x, 0, sizeof *x);
    x->root = vat_xstrdup(root);
    x->rel = vat_xstrdup(rel);
    x->tag = tag ? vat_xstrdup(tag) : NULL;
    return x;
}

static void memo_put(const char *root, const char *rel, const char *tag, const char *data,
                     size_t len)
{
    if (!memo.on || memo.bytes + len > MEMO_MAX_BYTES || memo_find(root, rel, tag))
        return;
    struct memo_entry *x = memo_add(root, rel, tag);
    x->data = vat_xmalloc(len + 1);
    memcpy(x->data, data, len);
    x->data[len] = 0;
    x->len = len;
    x->serial = ++memo.serial;
    memo.bytes += len;
}

static unsigned long memo_serial(const char *root, const char *rel)
{
    struct memo_entry *x = memo_find(root, rel, NULL);
    return x ? x->serial : 0;
}

static void memo_put_obj(const char *root, const char *rel, const char *tag,
                         unsigned long serial, void *obj, void (*obj_free)(void *))
{
    if (!serial || serial != memo_serial(root, rel) || memo_find(root, rel, tag)) {
        obj_free(obj);
        return;
    }
    struct memo_entry *x = memo_add(root, rel, tag);
    x->obj = obj;
    x->obj_free = obj_free;
    x->serial = serial;
}

static void *memo_take_obj(const char *root, const char *rel, const char *tag,
                           unsigned long *serial)
{
    struct memo_entry *x = memo_find(root, rel, tag);
    if (!x || !x->obj)
        return NULL;
    void *obj = x->obj;
    *serial = x->serial;
    x->obj = NULL;
    entry_free(x);
    *x = memo.e[--memo.n];
    return obj;
}

/* A path rewritten: every entry read from or derived from it goes, under
 * whatever spelling of the root. */
static void memo_forget(const char *rel)
{
    for (size_t i = 0; i < memo.n;) {
        if (strcmp(memo.e[i].rel, rel) != 0) {
            i++;
            continue;
        }
        memo.bytes -= memo.e[i].len;
        entry_free(&memo.e[i]);
        memo.e[i] = memo.e[--memo.n];
    }
}

/* root/rel, named last in dir, now holds the len bytes at data: while the
 * build notes what it writes beneath root, its digest is noted for the
 * manifest and kept in the memo for vat_file_sha256, so neither reads the
 * file back to hash it. */
static void note_written(int dir, const char *last, const char *root, const char *rel,
                         const char *data, size_t len)
{
    struct stat st;
    if (!vat_written_on(root) || fstatat(dir, last, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode))
        return;
    unsigned char d[32];
    vat_sha256(data, len, d);
    struct vat_file_id id;
    vat_file_id_of(&st, &id);
    vat_written_note(root, rel, &id, d);
    if (memo.on) {
        char hex[65];
        vat_hex(d, 32, hex);
        memo_put(root, rel, "sha256", hex, 64);
    }
}

static const struct vat_file_hooks build_hooks = {
    .memo_on = memo_on,
    .memo_get = memo_get,
    .memo_put = memo_put,
    .memo_serial = memo_serial,
    .memo_put_obj = memo_put_obj,
    .memo_take_obj = memo_take_obj,
    .forget = memo_forget,
    .dir_find = dir_find,
    .dir_keep = dir_keep,
    .wrote = note_written,
};

/* Every begin installs the hooks: the same pointer each time. */
static void install(void)
{
    vat_file_hooks_install(&build_hooks);
}

/* vat.c — errors, allocation, buffers, verdicts, task records and safe
 * corpus paths (see vat.h). */
#include "vat.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>


int vat_err_set(struct vat_err *e, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void oom(void)
{
    fputs("vat: out of memory\n", stderr);
    abort();
}

void *vat_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *vat_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom();
    return p;
}

void *vat_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom();
    return q;
}

char *vat_xstrdup(const char *s)
{
    return vat_xstrndup(s, strlen(s));
}

char *vat_xstrndup(const char *s, size_t n)
{
    char *p = vat_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *vat_xasprintf(const char *fmt, ...)
{
    struct vat_buf b = VAT_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    vat_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    return vat_buf_detach(&b);
}

static void buf_grow(struct vat_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->data = vat_xrealloc(b->data, cap);
    b->cap = cap;
}

void vat_buf_putn(struct vat_buf *b, const char *s, size_t n)
{
    buf_grow(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void vat_buf_puts(struct vat_buf *b, const char *s)
{
    vat_buf_putn(b, s, strlen(s));
}

void vat_buf_put_quoted(struct vat_buf *b, const char *s, char q)
{
    vat_buf_putc(b, q);
    for (const char *p; (p = strchr(s, q)) != NULL; s = p + 1) {
        vat_buf_putn(b, s, (size_t)(p - s) + 1); /* the run and the quote */
        vat_buf_putc(b, q);
    }
    vat_buf_puts(b, s);
    vat_buf_putc(b, q);
}

void vat_buf_putc(struct vat_buf *b, char c)
{
    buf_grow(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = 0;
}

void vat_buf_vprintf(struct vat_buf *b, const char *fmt, va_list ap)
{
    /* Formatted straight into the free space when it fits (most calls:
     * a number, a short name), so the text is formatted once, not
     * measured first and formatted again. */
    buf_grow(b, 64);
    va_list ap2;
    va_copy(ap2, ap);
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->data + b->len, room, fmt, ap2);
    va_end(ap2);
    if (n <= 0) {
        b->data[b->len] = 0;
        return;
    }
    if ((size_t)n >= room) {
        buf_grow(b, (size_t)n);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    }
    b->len += (size_t)n;
}

void vat_buf_printf(struct vat_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vat_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

char *vat_buf_detach(struct vat_buf *b)
{
    char *p = b->data ? b->data : vat_xstrdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

void vat_buf_release(struct vat_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *vat_fmt_int(long long x, int width, char *out)
{
    char d[24];
    int n = 0;
    unsigned long long u = x < 0 ? 0ull - (unsigned long long)x : (unsigned long long)x;
    do
        d[n++] = (char)('0' + u % 10);
    while (u /= 10);
    char *p = out;
    if (x < 0)
        *p++ = '-';
    for (int pad = width - n - (x < 0); pad > 0; pad--)
        *p++ = '0';
    while (n > 0)
        *p++ = d[--n];
    *p = 0;
    return out;
}

size_t vat_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    size_t len;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong below */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates above */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong below */
        else if (c == 0xF4)
            hi = 0x8F; /* past U+10FFFF above */
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

size_t vat_utf8_prefix(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        /* Eight ASCII bytes at a time through the stretches of plain text
         * that prompts and answers mostly are. */
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, u + i, sizeof w);
            if (!(w & 0x8080808080808080u)) {
                i += 8;
                continue;
            }
        }
        size_t k = vat_utf8_seq(u + i, n - i);
        if (!k)
            return i;
        i += k;
    }
    return n;
}

/* Reasons reach JSON output and one-line reports: keep them valid UTF-8
 * without control bytes even when truncation cut a character or an
 * answer's bytes slipped in ('?' replaces them; a group name holding a
 * newline once put it in a regex reason, found by fuzz/fuzz_regex.c). */
static void utf8_sanitise(char *s)
{
    unsigned char *p = (unsigned char *)s;
    size_t n = strlen(s), i = 0;
    while (i < n) {
        size_t k = vat_utf8_seq(p + i, n - i);
        if (k == 0) {
            if (n - i < 4 && p[i] >= 0xc2) { /* a cut trailing character */
                p[i] = 0;
                return;
            }
            p[i] = '?';
            k = 1;
        } else if (k == 1 && (p[i] < 0x20 || p[i] == 0x7f)) {
            p[i] = '?';
        }
        i += k;
    }
}

static _Thread_local unsigned long checker_limit_hits;

unsigned long vat_checker_limit_hits(void)
{
    return checker_limit_hits;
}

struct vat_verdict vat_verdict_make(bool gate_passed, double score, const char *code,
                                    const char *fmt, ...)
{
    struct vat_verdict v;
    if (code && strcmp(code, VAT_CHECKER_LIMIT) == 0)
        checker_limit_hits++;
    v.gate_passed = gate_passed;
    v.score = score;
    v.code = code;
    /* A reason without a conversion is its format, cut to fit: copied, as
     * vsnprintf would write it, without the formatting machinery (the
     * verdict of every passing value check is one). */
    if (!strchr(fmt, '%')) {
        size_t n = strlen(fmt);
        if (n >= sizeof v.reason)
            n = sizeof v.reason - 1;
        memcpy(v.reason, fmt, n);
        v.reason[n] = 0;
    } else {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(v.reason, sizeof v.reason, fmt, ap);
        va_end(ap);
    }
    utf8_sanitise(v.reason);
    return v;
}

char *vat_path_join(const char *root, const char *rel)
{
    if (!root || !*root)
        return vat_xstrdup(rel);
    size_t rl = strlen(root);
    if (root[rl - 1] == '/')
        return vat_xasprintf("%s%s", root, rel);
    return vat_xasprintf("%s/%s", root, rel);
}

bool vat_is_lfs_pointer(const void *p, size_t n)
{
    static const char head[] = "version https://git-lfs.github.com/spec/v1";
    const size_t k = sizeof head - 1;
    /* a pointer is a small text file; the spec allows \r\n line ends */
    return n > k && n < 1024 && memcmp(p, head, k) == 0 &&
           (((const char *)p)[k] == '\n' || ((const char *)p)[k] == '\r');
}

bool vat_side_owns(int side, const void *s, size_t n)
{
    /* FNV-1a over a fixed prefix and the bytes, then a finishing mix
     * (splitmix64's): its top bit names the side. */
    static const char key[] = "vat split";
    uint64_t h = 0xcbf29ce484222325ULL;
    const unsigned char *b = (const unsigned char *)key;
    for (size_t i = 0; i < sizeof key - 1; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    b = s;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return (int)(h >> 63) == (side == VAT_SPLIT_TEST);
}

long vat_side_next_id(int side, const char *prefix, int width, long id)
{
    size_t pl = strlen(prefix), need = pl + 48 + (width > 0 ? (size_t)width : 0);
    char buf[128];
    char *text = need <= sizeof buf ? buf : vat_xmalloc(need);
    memcpy(text, prefix, pl);
    while (!vat_side_owns(side, text, pl + strlen(vat_fmt_int(id, width, text + pl))))
        id++;
    if (text != buf)
        free(text);
    return id;
}

bool vat_path_is_safe(const char *rel)
{
    if (!rel || !*rel || rel[0] == '/')
        return false;
    const char *p = rel;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)p[i];
            if (c < 0x20 || c == 0x7f || c == '\\')
                return false;
        }
        if (!slash)
            break;
        p = slash + 1;
        if (!*p)
            return false; /* trailing slash: not a file */
    }
    return true;
}

void vat_hex(const unsigned char *d, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[2 * n] = 0;
}

/* SHA-256 is fetched from OpenSSL's provider once: EVP_sha256() makes
 * OpenSSL 3 look the implementation up again (a locked property query)
 * at every digest, which cost more than hashing a small fixture.  The
 * fetched method is shared by all threads and kept for the process. */
static EVP_MD *sha256_fetched;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
    sha256_fetched = EVP_MD_fetch(NULL, "SHA2-256", NULL);
}

static const EVP_MD *sha256_md(void)
{
    pthread_once(&sha256_once, sha256_fetch);
    return sha256_fetched ? sha256_fetched : EVP_sha256();
}

struct vat_sha256 *vat_sha256_begin(void)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || EVP_DigestInit_ex(ctx, sha256_md(), NULL) != 1)
        oom();
    return (struct vat_sha256 *)ctx;
}

void vat_sha256_add(struct vat_sha256 *h, const void *data, size_t n)
{
    EVP_DigestUpdate((EVP_MD_CTX *)h, data, n);
}

void vat_sha256_end(struct vat_sha256 *h, unsigned char out[32])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int ml = 0;
    EVP_DigestFinal_ex((EVP_MD_CTX *)h, md, &ml);
    EVP_MD_CTX_free((EVP_MD_CTX *)h);
    memcpy(out, md, 32);
}

void vat_sha256(const void *data, size_t n, unsigned char out[32])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int ml = 0;
    if (EVP_Digest(data, n, md, &ml, sha256_md(), NULL) != 1)
        oom();
    memcpy(out, md, 32);
}

void vat_sha256_hex(const void *data, size_t n, char out[65])
{
    unsigned char md[32];
    vat_sha256(data, n, md);
    vat_hex(md, 32, out);
}

/* ---- what a build hangs under file access ---------------------------------- */

static _Atomic(const struct vat_file_hooks *) installed_hooks;

void vat_file_hooks_install(const struct vat_file_hooks *h)
{
    atomic_store_explicit(&installed_hooks, h, memory_order_release);
}

static const struct vat_file_hooks *file_hooks(void)
{
    return atomic_load_explicit(&installed_hooks, memory_order_acquire);
}

bool vat_file_memo_on(void)
{
    const struct vat_file_hooks *h = file_hooks();
    return h && h->memo_on();
}

const char *vat_file_memo_get(const char *root, const char *rel, const char *tag, size_t *len)
{
    const struct vat_file_hooks *h = file_hooks();
    return h ? h->memo_get(root, rel, tag, len) : NULL;
}

void vat_file_memo_put(const char *root, const char *rel, const char *tag, const char *data,
                       size_t len)
{
    const struct vat_file_hooks *h = file_hooks();
    if (h)
        h->memo_put(root, rel, tag, data, len);
}

unsigned long vat_file_memo_serial(const char *root, const char *rel)
{
    const struct vat_file_hooks *h = file_hooks();
    return h ? h->memo_serial(root, rel) : 0;
}

void vat_file_memo_put_obj(const char *root, const char *rel, const char *tag,
                           unsigned long serial, void *obj, void (*obj_free)(void *))
{
    const struct vat_file_hooks *h = file_hooks();
    if (h)
        h->memo_put_obj(root, rel, tag, serial, obj, obj_free);
    else
        obj_free(obj);
}

void *vat_file_memo_take_obj(const char *root, const char *rel, const char *tag,
                             unsigned long *serial)
{
    const struct vat_file_hooks *h = file_hooks();
    return h ? h->memo_take_obj(root, rel, tag, serial) : NULL;
}

/* ---- containment ---------------------------------------------------------- */

int vat_root_open(const char *root, struct vat_err *e)
{
    const char *r = root && *root ? root : ".";
    int fd = open(r, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        vat_err_set(e, "vat: cannot open the root '%s': %s", r, strerror(err));
        errno = err;
    }
    return fd;
}

/* Why opening component [0, n) of rel beneath dirfd failed: a symbolic
 * link is named as such, anything else by its errno. */
static int beneath_fail(int dirfd, const char *comp, const char *rel, size_t n, int err,
                        struct vat_err *e)
{
    struct stat st;
    if (fstatat(dirfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
        vat_err_set(e, "vat: '%.*s' is a symbolic link; vat follows none below the root",
                    (int)n, rel);
        err = ELOOP;
    } else {
        vat_err_set(e, "vat: cannot open '%.*s': %s", (int)n, rel, strerror(err));
    }
    errno = err;
    return -1;
}

/* Opens every component of rel but the last as a directory beneath dirfd
 * (creating them when mkdirs); returns the last directory's descriptor
 * (dirfd itself duplicated when rel has one component) and sets *last. */
static int beneath_parent(int dirfd, const char *rel, bool mkdirs, const char **last,
                          struct vat_err *e)
{
    if (!vat_path_is_safe(rel)) {
        vat_err_set(e, "vat: refusing unsafe path '%s'", rel ? rel : "");
        errno = EINVAL;
        return -1;
    }
    int cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (cur < 0)
        return vat_err_set(e, "vat: cannot open '%s': %s", rel, strerror(errno));
    const char *p = rel;
    for (const char *slash; (slash = strchr(p, '/')) != NULL; p = slash + 1) {
        char comp[256];
        size_t n = (size_t)(slash - p);
        if (n >= sizeof comp) {
            close(cur);
            errno = ENAMETOOLONG;
            return vat_err_set(e, "vat: cannot open '%s': %s", rel, strerror(errno));
        }
        memcpy(comp, p, n);
        comp[n] = 0;
        if (mkdirs && mkdirat(cur, comp, 0777) != 0 && errno != EEXIST) {
            int err = errno;
            vat_err_set(e, "vat: cannot create directory '%.*s': %s", (int)(slash - rel), rel,
                        strerror(err));
            close(cur);
            errno = err;
            return -1;
        }
        int next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            beneath_fail(cur, comp, rel, (size_t)(slash - rel), errno, e);
            int err = errno;
            close(cur);
            errno = err;
            return -1;
        }
        close(cur);
        cur = next;
    }
    *last = p;
    return cur;
}

/* Opens last (the final component of rel) in the directory dir, as
 * vat_openat_beneath describes; dir is left open. */
static int open_last(int dir, const char *last, const char *rel, int flags, struct vat_err *e)
{
    bool reading = (flags & O_ACCMODE) == O_RDONLY && !(flags & (O_DIRECTORY | O_CREAT));
    /* O_NONBLOCK while opening: a FIFO planted there must not block. */
    int fd = openat(dir, last, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | (reading ? O_NONBLOCK : 0),
                    0666);
    if (fd < 0) {
        beneath_fail(dir, last, rel, strlen(rel), errno, e);
        return -1;
    }
    if (reading && !(flags & O_NONBLOCK))
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

int vat_openat_beneath(int dirfd, const char *rel, int flags, struct vat_err *e)
{
    const char *last;
    int dir = beneath_parent(dirfd, rel, false, &last, e);
    if (dir < 0)
        return -1;
    int fd = open_last(dir, last, rel, flags, e);
    int err = errno;
    close(dir);
    errno = err;
    return fd;
}

/* The folder of root/rel, opened beneath root (created when mkdirs), with
 * *last set to rel's final component; *kept says the handle is this
 * thread's to keep (the caller must not close it).  -1 with e set. */
static int parent_open(const char *root, const char *rel, bool mkdirs, const char **last,
                       bool *kept, struct vat_err *e)
{
    *kept = false;
    const char *r = root ? root : "";
    const struct vat_file_hooks *h = file_hooks();
    if (h && vat_path_is_safe(rel)) {
        const char *slash = strrchr(rel, '/');
        size_t n = slash ? (size_t)(slash - rel) : 0;
        int fd = h->dir_find(r, rel, n);
        if (fd >= 0) {
            *last = slash ? slash + 1 : rel;
            *kept = true;
            return fd;
        }
    }
    int rfd = vat_root_open(root, e);
    if (rfd < 0)
        return -1;
    int dir = beneath_parent(rfd, rel, mkdirs, last, e);
    int err = errno;
    close(rfd);
    errno = err;
    if (dir < 0 || !h)
        return dir;
    *kept = h->dir_keep(r, rel, (size_t)(*last - rel) - (*last > rel), dir);
    return dir;
}

static void parent_close(int dir, bool kept)
{
    if (!kept)
        close(dir);
}

int vat_open_beneath(const char *root, const char *rel, int flags, struct vat_err *e)
{
    const char *last;
    bool kept;
    int dir = parent_open(root, rel, false, &last, &kept, e);
    if (dir < 0)
        return -1;
    int fd = open_last(dir, last, rel, flags, e);
    int err = errno;
    parent_close(dir, kept);
    errno = err;
    return fd;
}

int vat_open_beneath_linked(const char *root, const char *rel, int flags, bool *linked,
                            struct vat_err *e)
{
    *linked = false;
    if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC | O_DIRECTORY))) {
        errno = EINVAL;
        return vat_err_set(e, "vat: '%s' is opened through a link for reading only", rel);
    }
    const char *last;
    bool kept;
    int dir = parent_open(root, rel, false, &last, &kept, e);
    if (dir < 0)
        return -1;
    int fd = openat(dir, last, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    int err = errno;
    if (fd < 0 && err == ELOOP) {
        /* The file itself is a link: followed to what it names (O_NONBLOCK:
         * a FIFO there must not block), which must be a regular file. */
        fd = openat(dir, last, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        err = errno;
        struct stat st;
        if (fd < 0) {
            vat_err_set(e, "vat: '%s' is a symbolic link to nothing vat can read (%s)", rel,
                        strerror(err));
        } else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            err = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
            vat_err_set(e, "vat: '%s' is a symbolic link to %s; vat follows links to regular "
                           "files only",
                        rel, S_ISDIR(st.st_mode) ? "a folder" : "something other than a file");
            close(fd);
            fd = -1;
        } else {
            *linked = true;
        }
    } else if (fd < 0) {
        beneath_fail(dir, last, rel, strlen(rel), err, e);
        err = errno;
    }
    parent_close(dir, kept);
    errno = err;
    return fd;
}

/* Reads the regular file open on fd (closed here), at most cap bytes, into
 * a new NUL-terminated buffer.  0, or -1 with e naming rel. */
static int read_whole_fd(int fd, const char *rel, size_t cap, char **out, size_t *len,
                         struct vat_err *e)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return vat_err_set(e, "vat: cannot read '%s': not a regular file", rel);
    }
    if ((uintmax_t)st.st_size > cap) {
        close(fd);
        return vat_err_set(e, "vat: cannot read '%s': larger than %zu bytes", rel, cap);
    }
    size_t n = (size_t)st.st_size, got = 0;
    char *buf = vat_xmalloc(n + 1);
    while (got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int err = k < 0 ? errno : EIO;
            close(fd);
            free(buf);
            return vat_err_set(e, "vat: cannot read '%s': %s", rel,
                               k < 0 ? strerror(err) : "the file shrank while read");
        }
        got += (size_t)k;
    }
    close(fd);
    buf[n] = 0;
    *out = buf;
    *len = n;
    return 0;
}

int vat_sha256_fd(int fd, const char *rel, char out[65], struct vat_err *e)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return vat_err_set(e, "vat: '%s' is not a regular file", rel);
    }
    struct vat_sha256 *h = vat_sha256_begin();
    char buf[65536];
    int rc = 0;
    for (;;) {
        ssize_t k = read(fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            rc = vat_err_set(e, "vat: cannot read '%s': %s", rel, strerror(errno));
            break;
        }
        if (k == 0)
            break;
        vat_sha256_add(h, buf, (size_t)k);
    }
    close(fd);
    unsigned char d[32];
    vat_sha256_end(h, d);
    vat_hex(d, 32, out);
    return rc;
}

int vat_read_file_linked(const char *root, const char *rel, size_t cap, const char *want,
                         bool any_link, char **out, size_t *len, struct vat_err *e)
{
    *out = NULL;
    *len = 0;
    if (!want && !any_link)
        return vat_read_file_beneath(root, rel, cap, out, len, e);
    bool linked = false;
    int fd = vat_open_beneath_linked(root, rel, O_RDONLY, &linked, e);
    char *buf;
    size_t n;
    if (fd < 0 || read_whole_fd(fd, rel, cap, &buf, &n, e) != 0)
        return -1;
    if (linked && want) {
        char hex[65];
        vat_sha256_hex(buf, n, hex);
        if (strcmp(hex, want) != 0) {
            const char *lfs = vat_lfs_pointer(buf, n);
            free(buf);
            return lfs ? vat_err_set(e, "vat: '%s' is a %s", rel, lfs)
                       : vat_err_set(e, "vat: '%s' is a symbolic link to a file whose sha256 is "
                                        "not the one out/manifest.json lists",
                                     rel);
        }
    }
    *out = buf;
    *len = n;
    return 0;
}

int vat_sha256_beneath_linked(const char *root, const char *rel, char out[65], bool *linked,
                              struct vat_err *e)
{
    int fd = vat_open_beneath_linked(root, rel, O_RDONLY, linked, e);
    return fd < 0 ? -1 : vat_sha256_fd(fd, rel, out, e);
}

const char *vat_lfs_pointer(const void *data, size_t n)
{
    /* https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md: a pointer
     * is a small text file whose first line names the spec. */
    static const char head[] = "version https://git-lfs.github.com/spec/v1\n";
    if (!data || n > 1024 || n < sizeof head - 1 || memcmp(data, head, sizeof head - 1) != 0)
        return NULL;
    static const char oid[] = "\noid sha256:";
    const char *p = data;
    for (size_t i = 0; i + sizeof oid - 1 <= n; i++)
        if (memcmp(p + i, oid, sizeof oid - 1) == 0)
            return VAT_LFS_POINTER_REASON;
    return NULL;
}

FILE *vat_fopen_beneath(const char *root, const char *rel, struct vat_err *e)
{
    /* O_NONBLOCK kept: the file is read only once fstat says it is regular,
     * where it changes nothing (and clearing it costs two calls a file). */
    int fd = vat_open_beneath(root, rel, O_RDONLY | O_NONBLOCK, e);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        vat_err_set(e, "vat: cannot read '%s': not a regular file", rel);
        errno = EINVAL;
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int err = errno;
        close(fd);
        vat_err_set(e, "vat: cannot open '%s': %s", rel, strerror(err));
        errno = err;
    }
    return f;
}

int vat_file_sha256(const char *root, const char *rel, const void *data, size_t n, char out[65],
                    struct vat_err *e)
{
    size_t mn;
    const char *m = vat_file_memo_get(root, rel, "sha256", &mn);
    if (m && mn == 64) {
        memcpy(out, m, 65);
        return 0;
    }
    char *read = NULL;
    if (!data) {
        if (vat_read_file_beneath(root, rel, (size_t)1 << 34, &read, &n, e) != 0)
            return -1;
        data = read;
    }
    vat_sha256_hex(data, n, out);
    free(read);
    vat_file_memo_put(root, rel, "sha256", out, 64);
    return 0;
}

int vat_read_file_beneath(const char *root, const char *rel, size_t cap, char **out, size_t *len,
                          struct vat_err *e)
{
    *out = NULL;
    *len = 0;
    size_t mlen;
    const char *m = vat_file_memo_get(root, rel, NULL, &mlen);
    if (m) {
        if (mlen > cap)
            return vat_err_set(e, "vat: cannot read '%s': larger than %zu bytes", rel, cap);
        *out = vat_xmalloc(mlen + 1);
        memcpy(*out, m, mlen + 1);
        *len = mlen;
        return 0;
    }
    /* O_NONBLOCK kept: the file is read only once fstat says it is regular,
     * where it changes nothing (and clearing it costs two calls a file). */
    int fd = vat_open_beneath(root, rel, O_RDONLY | O_NONBLOCK, e);
    if (fd < 0 || read_whole_fd(fd, rel, cap, out, len, e) != 0)
        return -1;
    vat_file_memo_put(root, rel, NULL, *out, *len);
    return 0;
}

int vat_mkdirs_for(const char *root, const char *rel, struct vat_err *e)
{
    const char *last;
    bool kept;
    int dir = parent_open(root, rel, true, &last, &kept, e);
    if (dir < 0)
        return -1;
    parent_close(dir, kept);
    return 0;
}

int vat_write_all_close(int fd, const char *data, size_t len)
{
    int err = 0;
    size_t put = 0;
    while (put < len) {
        ssize_t k = write(fd, data + put, len - put);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            err = k < 0 ? errno : -1;
            break;
        }
        put += (size_t)k;
    }
    if (close(fd) != 0 && err == 0)
        err = errno;
    return err;
}

int vat_write_file_atomic(const char *root, const char *rel, const char *data, size_t len,
                          struct vat_err *e)
{
    const struct vat_file_hooks *h = file_hooks();
    bool memo_on = h && h->memo_on();
    if (memo_on)
        h->forget(rel);
    const char *last;
    bool kept;
    int dir = parent_open(root, rel, true, &last, &kept, e);
    if (dir < 0)
        return -1;
    int rc = 0;
    const int wflags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
    /* During a draw the root is the build's stage, a tree renamed into
     * place whole (src/store.c) and dropped whole when a build dies: a
     * file not there yet is created under its own name (O_EXCL), sparing
     * the file system a second name and a rename per fixture.  One already
     * there (a redraw, a rewrite) is replaced through a temporary below. */
    if (memo_on) {
        int fd = openat(dir, last, wflags, 0666);
        if (fd >= 0) {
            int err = vat_write_all_close(fd, data, len);
            if (err != 0) {
                rc = vat_err_set(e, "vat: cannot write '%s': %s", rel,
                                 err > 0 ? strerror(err) : "short write");
                unlinkat(dir, last, 0);
            } else {
                h->wrote(dir, last, root, rel, data, len);
            }
            parent_close(dir, kept);
            return rc;
        }
    }
    struct stat st;
    if (fstatat(dir, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
        rc = vat_err_set(e, "vat: '%s' is %s; refusing to replace it", rel,
                         S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
        parent_close(dir, kept);
        return rc;
    }
    char *tmp = vat_xasprintf("%s.tmp", last);
    int fd = openat(dir, tmp, wflags, 0666);
    /* A stale temporary of ours (a regular file) goes; anything else there
     * is reported, never opened. */
    if (fd < 0 && errno == EEXIST && fstatat(dir, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode) && unlinkat(dir, tmp, 0) == 0)
        fd = openat(dir, tmp, wflags, 0666);
    if (fd < 0) {
        rc = vat_err_set(e, "vat: cannot write '%s.tmp': %s", rel, strerror(errno));
    } else {
        int err = vat_write_all_close(fd, data, len);
        if (err != 0)
            rc = vat_err_set(e, "vat: cannot write '%s.tmp': %s", rel,
                             err > 0 ? strerror(err) : "short write");
        if (rc == 0 && renameat(dir, tmp, dir, last) != 0)
            rc = vat_err_set(e, "vat: cannot rename '%s.tmp': %s", rel, strerror(errno));
        if (rc != 0)
            unlinkat(dir, tmp, 0);
        else
            if (h)
                h->wrote(dir, last, root, rel, data, len);
    }
    free(tmp);
    parent_close(dir, kept);
    return rc;
}

/* vat.h — the core types every part of vat shares: errors as values,
 * growable buffers, allocation that never returns NULL, the verdict,
 * SHA-256, UTF-8 and paths kept beneath a root.  Nothing here knows of
 * tasks or templates (the task record is templates/task.h).  Exports
 * struct vat_err, struct vat_buf, struct vat_verdict and their helpers. */
#ifndef VAT_H
#define VAT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>


/* The vat version ("0.2.0"): CMakeLists.txt's project(VERSION) is its one
 * source, passed to every compilation (and to the Python package's
 * metadata by python/setup.py). */
#ifndef VAT_VERSION
#error "VAT_VERSION comes from the build: CMakeLists.txt's project(VERSION)"
#endif

/* ---- errors travel as values ------------------------------------------ */

struct vat_err {
    char msg[512];
};

/* Formats the message into e (if e is not NULL); returns -1 so callers can
 * write `return vat_err_set(e, "...")`. */
int vat_err_set(struct vat_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- allocation: out of memory is the one thing we do not survive ------ */

void *vat_xmalloc(size_t n);
void *vat_xcalloc(size_t n, size_t size);
void *vat_xrealloc(void *p, size_t n);
char *vat_xstrdup(const char *s);
char *vat_xstrndup(const char *s, size_t n);
/* Returns a newly allocated printf-formatted string. */
char *vat_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Difficulty levels run 1..VAT_LEVELS: seeds.toml asks for them
 * (docs/difficulty.md) and every template scales with them. */
#define VAT_LEVELS 5

/* ---- growable byte buffer (always NUL-terminated) ---------------------- */

struct vat_buf {
    char *data;
    size_t len;
    size_t cap;
};
#define VAT_BUF_INIT {NULL, 0, 0}

void vat_buf_putn(struct vat_buf *b, const char *s, size_t n);
void vat_buf_puts(struct vat_buf *b, const char *s);
void vat_buf_putc(struct vat_buf *b, char c);
/* Appends s between two q characters with each q inside doubled, as SQL
 * quotes a literal ('it''s') or an identifier ("a""b"). */
void vat_buf_put_quoted(struct vat_buf *b, const char *s, char q);
void vat_buf_printf(struct vat_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void vat_buf_vprintf(struct vat_buf *b, const char *fmt, va_list ap);
/* Returns the contents (never NULL; "" when empty) and resets b. */
char *vat_buf_detach(struct vat_buf *b);
void vat_buf_release(struct vat_buf *b);

/* x in decimal, zero-padded to width characters (the sign among them),
 * as snprintf's "%0*lld" writes it: out holds at least 24 bytes plus
 * width.  Returns out.  Cheaper than the printf family where every row of
 * a fixture or a prompt formats numbers. */
char *vat_fmt_int(long long x, int width, char *out);

/* Length of the well-formed UTF-8 sequence at s, n > 0 bytes available
 * (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF, as
 * jansson's strings require), or 0 when it is not one. */
size_t vat_utf8_seq(const unsigned char *s, size_t n);
/* The length of the longest well-formed UTF-8 prefix of s[0..n): n when
 * all of it is. */
size_t vat_utf8_prefix(const char *s, size_t n);

/* ---- verdicts ----------------------------------------------------------- */

/* Stable verdict codes; reports group failures by these, never by reason. */
#define VAT_OK "ok"
#define VAT_SHAPE "shape"               /* wrong JSON type / shape          */
#define VAT_TYPE "type"                 /* a position holds another JSON type than asked */
#define VAT_NO_ANSWER "no_answer"       /* extraction found no answer in the completion */
#define VAT_PARSE "parse"               /* not parseable at all             */
#define VAT_TOO_LARGE "too_large"       /* over the length / depth caps     */
#define VAT_NOT_FINITE "not_finite"     /* NaN / Infinity / overflow        */
#define VAT_WRONG_VALUE "wrong_value"   /* a number outside tolerance       */
#define VAT_MISSING_KEY "missing_key"
#define VAT_EXTRA_KEY "extra_key"
#define VAT_KEY_CASE "key_case"         /* key differs only by case/space   */
#define VAT_WRONG_ITEMS "wrong_items"   /* list holds other items           */
#define VAT_WRONG_ORDER "wrong_order"   /* right items, wrong order         */
#define VAT_DUPLICATE "duplicate"       /* repeated item where unique       */
#define VAT_WRONG_LENGTH "wrong_length"
#define VAT_REGEX_COMPILE "regex_compile"
#define VAT_REGEX_UNSUPPORTED "regex_unsupported"
#define VAT_REGEX_LIMIT "regex_limit"
#define VAT_WRONG_EXTRACTION "wrong_extraction"
#define VAT_SQL_MULTI "sql_multi"       /* more than one statement          */
#define VAT_SQL_NOT_SELECT "sql_not_select"
#define VAT_SQL_DENIED "sql_denied"     /* the authorizer refused an action */
#define VAT_SQL_BUDGET "sql_budget"     /* VM steps / rows / memory cap     */
#define VAT_SQL_ERROR "sql_error"       /* runtime error of the query       */
#define VAT_COLUMN_COUNT "column_count"
#define VAT_MISSING_ROWS "missing_rows"
#define VAT_EXTRA_ROWS "extra_rows"
#define VAT_WRONG_ROWS "wrong_rows"     /* same count, different rows       */
#define VAT_ABSTAINED "abstained"       /* abstained where an answer exists */
#define VAT_NOT_ABSTAINED "not_abstained"
#define VAT_INTERNAL "internal"         /* the task itself is unusable      */
#define VAT_COMPLETION_TOO_LARGE "completion_too_large" /* over VAT_MAX_COMPLETION_BYTES (extract.h) */
#define VAT_TAMPERED "tampered"         /* a fixture or verifier whose digest does not match */
/* A last-resort net of the checker (CPU time, the process-wide SQLite
 * heap) stopped it: the checker, not the answer, hit a limit.  Scores 0;
 * fatal during build admission and strength (docs/limits.md). */
#define VAT_CHECKER_LIMIT "checker_limit"

struct vat_verdict {
    bool gate_passed;
    double score;
    const char *code;   /* one of the VAT_* codes above (static storage) */
    char reason[256];
};

/* Builds a verdict; reason is printf-formatted and truncated to fit. */
struct vat_verdict vat_verdict_make(bool gate_passed, double score, const char *code,
                                    const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* How many checker_limit verdicts this thread has made so far: admission
 * and strength compare it before and after a task, so a last-resort net hit
 * anywhere inside (a generator's own reference run included) is fatal
 * rather than a silent rejection. */
unsigned long vat_checker_limit_hits(void);

/* The two sides of the split.  A task's side is a function of its id
 * (src/split.h); the pipeline records it on the task before generate. */
enum { VAT_SPLIT_TRAIN, VAT_SPLIT_TEST, VAT_N_SPLITS };

/* Whether the n bytes at s lie in side's half of all strings.  A fixed
 * hash of the bytes cuts every possible string into two halves, one per
 * side; material the leak audit compares across the split (a regex task's
 * lines, a fixture row's id) is drawn in its task's half, so a train
 * task and a test task can never share it, at any count and in any shard,
 * with no task looking at another (docs/determinism.md). */
bool vat_side_owns(int side, const void *s, size_t n);
/* The first of id, id + 1, ... whose text — prefix, then the number
 * zero-padded to width digits as "%0*ld" writes it — side owns: a fixture
 * row whose id is drawn so is never a row of the other side. */
long vat_side_next_id(int side, const char *prefix, int width, long id);

/* The 2n lowercase hex digits of the n bytes at d, NUL-terminated (out
 * holds 2n + 1 bytes). */
void vat_hex(const unsigned char *d, size_t n, char *out);
/* The SHA-256 of the n bytes at data, as 64 hex digits and a NUL. */
void vat_sha256_hex(const void *data, size_t n, char out[65]);
/* The SHA-256 of the n bytes at data, as 32 bytes. */
void vat_sha256(const void *data, size_t n, unsigned char out[32]);
/* An incremental SHA-256: begin (never NULL; aborts when out of memory),
 * add bytes, end (writes the 32 bytes and frees the state). */
struct vat_sha256;
struct vat_sha256 *vat_sha256_begin(void);
void vat_sha256_add(struct vat_sha256 *h, const void *data, size_t n);
void vat_sha256_end(struct vat_sha256 *h, unsigned char out[32]);
/* Whether the n bytes at p are a Git LFS pointer file (its first line is
 * "version https://git-lfs.github.com/spec/v1"): a checkout made without
 * `git lfs pull` holds these in place of the files.  VAT_LFS_POINTER is
 * the reason given for one. */
bool vat_is_lfs_pointer(const void *p, size_t n);
#define VAT_LFS_POINTER "Git LFS pointer, not the file: run git lfs pull"
/* Joins root and a relative path into a new string (no checks). */
char *vat_path_join(const char *root, const char *rel);
/* Returns true if rel is a safe corpus-relative path: not absolute, no "..",
 * no empty or "." components, no backslashes or control bytes. */
bool vat_path_is_safe(const char *rel);
/* Creates the parent directories of root/rel beneath root, following no
 * symbolic link (a planted one is reported); 0 or -1 with e set. */
int vat_mkdirs_for(const char *root, const char *rel, struct vat_err *e);

/* Writes data whole to the open fd (retrying after EINTR) and closes it:
 * 0, or the errno of the first failure (-1 for a write of nothing). */
int vat_write_all_close(int fd, const char *data, size_t len);

/* Writes len bytes to root/rel: a new file rel.tmp (O_EXCL, so an
 * existing file, or a hard link to one outside the root, is never opened
 * for writing) renamed over rel, creating parent directories, all
 * resolved beneath root with no symbolic link followed.  A symbolic link
 * or directory at rel is reported, never replaced.  While the file memo is
 * on (a build's draw, whose root is the build's stage: a tree renamed into
 * place whole), a rel not there yet is created as rel itself (O_EXCL)
 * instead, and unlinked again if the write fails.  0, or -1 with e set. */
int vat_write_file_atomic(const char *root, const char *rel, const char *data, size_t len,
                          struct vat_err *e);

/* ---- containment: every path below a corpus root ------------------------- *
 * The root itself is the user's choice and is opened as given; below it
 * every component is opened from the directory handle of the one before
 * (openat with O_NOFOLLOW, O_DIRECTORY for folders), so no symbolic link
 * anywhere under the root is followed and ".." never appears (rel must
 * pass vat_path_is_safe). */

/* Opens the root directory (root "" is the current directory); returns a
 * descriptor or -1 with e set. */
int vat_root_open(const char *root, struct vat_err *e);
/* Opens rel beneath the directory dirfd.  flags are open(2) flags (O_RDONLY,
 * O_DIRECTORY, O_WRONLY|O_CREAT|O_EXCL, ...); O_NOFOLLOW, O_CLOEXEC and
 * O_NOCTTY are added.  A plain read-only open never blocks on a FIFO (it
 * is opened O_NONBLOCK, cleared afterwards unless flags ask for it); the
 * caller checks the file type with fstat.  Returns a
 * descriptor, or -1 with errno set (ELOOP for a symbolic link on the way)
 * and e set (e may be NULL) naming the component that failed. */
int vat_openat_beneath(int dirfd, const char *rel, int flags, struct vat_err *e);
/* The same from a root path: vat_root_open then vat_openat_beneath. */
int vat_open_beneath(const char *root, const char *rel, int flags, struct vat_err *e);
/* Opens root/rel for reading as vat_open_beneath does, with one exception:
 * when rel's last component is a symbolic link (as a Hugging Face cache
 * snapshot lays out its files, each a link into blobs/), it is followed,
 * wherever it points, and must end at a regular file; *linked says so.
 * Folders on the way are never followed, and nothing is opened for
 * writing (flags other than a plain read are refused with EINVAL).  A
 * caller accepts a linked file's bytes only by their digest: the SHA-256
 * of the bytes it loads must be the one the corpus lists for rel
 * (docs/corpus-store.md).  A dangling link, a link to a folder or to
 * anything but a regular file is refused, naming it.  Returns a
 * descriptor, or -1 with errno and e set (e may be NULL). */
int vat_open_beneath_linked(const char *root, const char *rel, int flags, bool *linked,
                            struct vat_err *e);
/* Reads root/rel whole as vat_read_file_beneath does; when want is given
 * (the SHA-256 hex the corpus manifest lists for rel), rel may be a
 * symbolic link to a regular file, whose bytes as read must have that
 * digest (trust by content: nothing is read twice).  With any_link, a link
 * is followed without a digest (the manifest itself: what the others are
 * trusted by).  0, or -1 with e set. */
int vat_read_file_linked(const char *root, const char *rel, size_t cap, const char *want,
                         bool any_link, char **out, size_t *len, struct vat_err *e);
/* The SHA-256 (hex) of the regular file open on fd (closed here), rel
 * naming it in errors.  0, or -1 with e set. */
int vat_sha256_fd(int fd, const char *rel, char out[65], struct vat_err *e);
/* The SHA-256 (hex) of root/rel's bytes as read, opened as
 * vat_open_beneath_linked does.  0, or -1 with e set. */
int vat_sha256_beneath_linked(const char *root, const char *rel, char out[65], bool *linked,
                              struct vat_err *e);
/* Why a file cannot be what its digest promises, when its bytes are a Git
 * LFS pointer (a clone made without `git lfs pull` holds these in place of
 * binary files): VAT_LFS_POINTER_REASON, else NULL. */
#define VAT_LFS_POINTER_REASON "Git LFS pointer, not the file: run git lfs pull"
const char *vat_lfs_pointer(const void *data, size_t n);
/* Opens root/rel for reading as a stdio stream: beneath root, a regular
 * file only (a FIFO or device is refused without blocking).  NULL with
 * errno and e set (e may be NULL). */
FILE *vat_fopen_beneath(const char *root, const char *rel, struct vat_err *e);
/* Reads root/rel (a regular file, opened beneath root) whole into a new
 * NUL-terminated buffer; a file larger than cap bytes is refused.  0, or
 * -1 with e set. */
int vat_read_file_beneath(const char *root, const char *rel, size_t cap, char **out, size_t *len,
                          struct vat_err *e);

/* ---- what a build hangs under file access -------------------------------- *
 * A build (src/filememo.h) reads each of a task's files many times, and
 * writes thousands of files whose digests its manifest needs; it keeps, on
 * each worker thread, the folders a walk ended in, the bytes of each file
 * as first read (the file memo: "during a draw"), and the digest of every
 * file written.  Core knows none of that: it calls these hooks, which the
 * builder installs once, process-wide, before its first task.  With none
 * installed (libvat in a user's program, every checker a user calls) the
 * calls below read and write the disk as it is and the memo is off. */
struct vat_file_hooks {
    /* The file memo: on for this thread (a draw), and the calls below. */
    bool (*memo_on)(void);
    const char *(*memo_get)(const char *root, const char *rel, const char *tag, size_t *len);
    void (*memo_put)(const char *root, const char *rel, const char *tag, const char *data,
                     size_t len);
    unsigned long (*memo_serial)(const char *root, const char *rel);
    void (*memo_put_obj)(const char *root, const char *rel, const char *tag,
                         unsigned long serial, void *obj, void (*obj_free)(void *));
    void *(*memo_take_obj)(const char *root, const char *rel, const char *tag,
                           unsigned long *serial);
    /* rel is about to be written (called only while memo_on). */
    void (*forget)(const char *rel);
    /* The kept handle of root's folder dir (its first n bytes: "" for the
     * root), or -1; dir_keep offers the handle just opened for it and
     * returns true when it is kept (the caller then must not close it). */
    int (*dir_find)(const char *root, const char *dir, size_t n);
    bool (*dir_keep)(const char *root, const char *dir, size_t n, int fd);
    /* root/rel, named last in the folder dir, now holds the len bytes at
     * data (vat_write_file_atomic). */
    void (*wrote)(int dir, const char *last, const char *root, const char *rel,
                  const char *data, size_t len);
};
/* Installs h for every thread (h is kept, never copied); NULL removes. */
void vat_file_hooks_install(const struct vat_file_hooks *h);

/* ---- a task's file memo, as the readers see it ----------------------------- *
 * While a build draws a task (src/filememo.h: vat_file_memo_begin and
 * _end), vat_read_file_beneath keeps the bytes of each file as first read
 * from disk and hands later readers of the same root and rel a copy of
 * them; vat_write_file_atomic forgets every entry of the path it writes.
 * Nothing but the build turns the memo on, so the checkers a user calls
 * read the disk as it is. */
bool vat_file_memo_on(void);
/* The bytes memoised for root/rel under tag (NULL: the file itself;
 * otherwise something derived from it, e.g. "csv-image <load spec>"),
 * borrowed until rel is written (vat_write_file_atomic) or the memo ends
 * (other memo calls leave them in place); NULL when off or not there. */
const char *vat_file_memo_get(const char *root, const char *rel, const char *tag, size_t *len);
/* Keeps a copy of data for root/rel under tag (no-op when off). */
void vat_file_memo_put(const char *root, const char *rel, const char *tag, const char *data,
                       size_t len);
/* Objects made from a memoised file (an open read-only connection, say):
 * the serial of root/rel's read (0 when not memoised; a rewrite and a new
 * read give a new one); put_obj keeps obj, made from the read of that
 * serial, under tag, or frees it with obj_free when the file has since
 * been rewritten (or the memo is off); take_obj hands it back to one user
 * at a time (and its serial), or NULL. */
unsigned long vat_file_memo_serial(const char *root, const char *rel);
void vat_file_memo_put_obj(const char *root, const char *rel, const char *tag,
                           unsigned long serial, void *obj, void (*obj_free)(void *));
void *vat_file_memo_take_obj(const char *root, const char *rel, const char *tag,
                             unsigned long *serial);

/* The SHA-256 of file root/rel as 64 hex digits and a NUL.  data, when
 * not NULL, holds its n bytes as just read; otherwise the file is read
 * beneath root.  Within a draw (the memo on) the digest is kept beside the
 * file's bytes and forgotten with them, so each read of a file is hashed
 * once however many readers ask.  0, or -1 with *e. */
int vat_file_sha256(const char *root, const char *rel, const void *data, size_t n, char out[65],
                    struct vat_err *e);


#endif

/* vat.h — the core types every part of vat shares: errors as values,
 * growable buffers, allocation that never returns NULL, the task record
 * and the verdict.  Exports struct vat_err, struct vat_buf, struct
 * vat_task, struct vat_fixture, struct vat_verdict and their helpers. */
#ifndef VAT_H
#define VAT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "rng.h"

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

/* ---- tasks -------------------------------------------------------------- */

#define VAT_MAX_FIXTURES 8

struct vat_fixture {
    char *path;         /* relative to the corpus root: fixtures/<tmpl>/<bucket>/<id>.csv */
    const char *format; /* "csv" | "sqlite" (static)                           */
    const char *role;   /* "main" | "variant" (static)                         */
    long rows;          /* data rows (all tables for sqlite)                   */
    json_t *columns;    /* array of column names; for sqlite "table.column"   */
    char sha256[65];    /* filled by the pipeline after generate               */
};

struct vat_template;

/* Compound templates arm several traps at once; each is one single mistake
 * whose answer admission proves separately (differs from gold, passes the
 * gate, scores below 1) and the tables replay under its own role. */
#define VAT_MAX_TRAPS 6
struct vat_trap {
    const char *name;   /* short, stable: "duplicates" (static)             */
    const char *text;   /* one sentence: the mistake (static)               */
    char *answer;       /* what that mistake alone answers                  */
};

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

struct vat_task {
    const struct vat_template *tmpl;
    char id[96];            /* "<template>-<index:05>"                           */
    uint32_t index;
    int side;               /* VAT_SPLIT_TRAIN or VAT_SPLIT_TEST: set by the
                               pipeline before generate (train when nothing
                               sets it), kept across redraws                  */
    uint32_t attempt;       /* redraw number: 0 for the first draw               */
    uint64_t master_seed;
    char stream_hex[33];    /* the derived PCG32 (state, seq) that drew it       */
    const char *root;       /* corpus root: fixtures live below it               */
    const json_t *cfg;      /* the template's resolved params from seeds.toml    */
    size_t inline_max_bytes;/* prompts inline the data up to this size          */

    /* generate() fills these */
    char *prompt;
    json_t *params;         /* the question's values, as the prompt states them */
    int difficulty;         /* 1 (easy) .. 5 (hard)                              */
    /* True when the prompt alone answers the question without opening a
     * file: for value answers every fixture row the answer depends on is
     * shown; for regex and SQL the description of the strings or of the
     * schema suffices (held-out cases and variants are hidden by design).
     * generate() sets it (the prompt helpers of generators/ do for the
     * templates that use them); false until then. */
    bool self_contained;
    struct vat_fixture fixture[VAT_MAX_FIXTURES]; /* [0] is the main fixture */
    int n_fixtures;
    json_t *spec;           /* checker parameters; reference() completes it      */
    void *priv;             /* template-private state (planted truth etc.)       */
    void (*priv_free)(void *);

    /* reference() fills gold; trap_answer() fills trap (and may set
     * malformed, otherwise the pipeline derives one from the answer kind). */
    char *gold;             /* the answer exactly as a solver should give it    */
    char *trap;
    char *malformed;

    /* Prompt style: set by the pipeline before generate() from
     * the "prompt" sub-stream, so neither changes a fixture draw. */
    const char *prompt_style; /* "explicit" | "natural" (static)               */
    struct vat_rng prompt_rng;/* phrasings are drawn from here only            */
    char phrasing[128];       /* the phrasings drawn, e.g. "o0d21q3c1a40"       */
    bool inline_full;         /* seeds.toml inline = "full": size fixtures to
                                 be shown whole in the prompt                  */
    /* trap_answer() of a compound template fills these (t->trap is then
     * the answer of every mistake at once). */
    struct vat_trap traps[VAT_MAX_TRAPS];
    int n_traps;
    /* "sql" when the task is an analytics question in its program form
     * (templates/progform.h: one SELECT, checked on variant CSVs), else
     * NULL: the answer is of the template's answer_kind. */
    const char *answer_form;
    /* The task as a tool-use environment, filled after admission
     * (templates/expert.h): the env table's row and the expert's replay. */
    json_t *env;
    /* Admission fills it: the worked completion of the sft_reasoning
     * table (src/reasoning.h), proven to score 1.0 under auto extraction. */
    char *reasoned;
};

/* Sets t->id and the identity fields; everything else zeroed. */
void vat_task_init(struct vat_task *t, const struct vat_template *tmpl, uint32_t index,
                   const char *root);
/* Frees everything the task owns (keeps identity fields) so it can be redrawn. */
void vat_task_clear(struct vat_task *t);

/* Adds a fixture record; path is relative to the root and copied.
 * Returns the fixture (never NULL; aborts past VAT_MAX_FIXTURES). */
struct vat_fixture *vat_task_add_fixture(struct vat_task *t, const char *relpath,
                                         const char *format, const char *role);
/* Tasks per fixture folder: a task's files go to the folder of its index
 * divided by this, so with at most VAT_MAX_FIXTURES files a task no folder
 * holds more than 8,000 entries (dataset hubs ask for at most 10,000 per
 * folder), and a template's folder holds one subfolder per 1,000 tasks. */
#define VAT_FIXTURE_BUCKET 1000
/* The folder of task index's fixtures below fixtures/<template>/: the
 * index divided by VAT_FIXTURE_BUCKET, three digits at least ("000" for
 * tasks 0-999, "012" for 12,000-12,999).  Written into out (16 bytes). */
void vat_fixture_bucket(uint32_t index, char out[16]);
/* The relative path "fixtures/<template>/<bucket>/<id><suffix>" in a new
 * string (vat_fixture_bucket). */
char *vat_task_fixture_relpath(const struct vat_task *t, const char *suffix);
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

/* Between begin and end, on this thread, the folder each walk beneath a
 * root ends in is kept open (a few, most recent), and vat_open_beneath,
 * vat_read_file_beneath, vat_write_file_atomic and vat_mkdirs_for start
 * from it instead of walking from the root again; end closes them.  The
 * file memo's begin and end call these; a loop over many files of a few
 * folders (the manifest's digests) may too.  Containment is unchanged: a
 * kept folder was reached with no symbolic link followed. */
void vat_dirs_keep_begin(void);
void vat_dirs_keep_end(void);
/* Folders kept beneath root (as spelled) outlive the brackets on this
 * thread until vat_dirs_keep_across(NULL), which closes every kept folder:
 * a build's worker keeps its stage's folders for all its tasks (the stage
 * is the build's own, locked against other builds).  They serve only
 * within a bracket, as before. */
void vat_dirs_keep_across(const char *root);

/* ---- a task's file memo --------------------------------------------------- *
 * While a task is drawn its fixtures are read many times (digest,
 * reference, confirmation, prompt, admission), each a walk beneath the
 * root, an open and a read.  Between vat_file_memo_begin and
 * vat_file_memo_end, on one thread, vat_read_file_beneath keeps the bytes
 * of each file as first read from disk and hands later readers of the same
 * root and rel a copy of them; vat_write_file_atomic forgets every entry of
 * the path it writes (so the next read is of the new file, from disk), and
 * end forgets everything.  The build brackets each task attempt with them;
 * nothing else turns the memo on, so the checkers a user calls read the
 * disk as it is.  At most 256 MiB are kept; beyond that reads go to disk. */
void vat_file_memo_begin(void);
void vat_file_memo_end(void);
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

/* ---- the digests of the files a build wrote ---------------------------- *
 * Between vat_written_begin(root) and vat_written_end (the build, from its
 * stage's making to its manifest), every file vat writes beneath that root
 * (vat_write_file_atomic, the streamed tables) is noted with the SHA-256
 * of the bytes written and the identity the file has once written (its
 * path beneath root, device, inode, size, modification and change times).
 * The manifest takes a file's digest from the note when the file it lists
 * has that identity, field for field, instead of reading the file back; a
 * file rewritten since, by vat or not (a new inode, size or time), or
 * never noted, is read and hashed as before.  The path is part of the
 * identity, so an inode number freed and reused by another file never
 * serves.  Not seen: a file changed in place, keeping its size, within
 * the clock tick of vat's write; nothing in a build does that (every
 * writer makes a new file), and vat verify reads every file.  Any thread. */
struct stat;
/* What the notes tell a file by, taken from its stat (48 bytes, not the
 * 144 of a struct stat: the manifest's walk keeps one per file). */
struct vat_file_id {
    uint64_t dev, ino;
    int64_t size;
    int64_t mtim_s, mtim_ns, ctim_s, ctim_ns;
};
void vat_file_id_of(const struct stat *st, struct vat_file_id *id);
void vat_written_begin(const char *root);
void vat_written_end(void);
/* Whether writes beneath root (spelled as given to begin) are noted. */
bool vat_written_on(const char *root);
/* Notes the digest of the bytes just written to root/rel, whose identity
 * is now *id (ignored when not on for root). */
void vat_written_note(const char *root, const char *rel, const struct vat_file_id *id,
                      const unsigned char sha[32]);
/* The noted digest of root/rel when the file still has identity *id:
 * true with out (64 hex digits and a NUL) filled; false otherwise. */
bool vat_written_find(const char *root, const char *rel, const struct vat_file_id *id,
                      char out[65]);
/* How many lookups found a note since the process started (for tests). */
unsigned long vat_written_hits(void);

/* Resolved template params from seeds.toml (aborts on a missing name: the
 * template declared it, so config.c always provides it). */
long vat_task_int(const struct vat_task *t, const char *name);
/* How many bytes of data a prompt may inline: t->inline_max_bytes, or no
 * limit under inline = "full" (then config.c has capped the params
 * rows_min and rows_max of analytics, SQL and probe templates at about
 * inline_max_bytes / VAT_INLINE_ROW_BYTES rows, never below the param's
 * declared minimum, so every fixture is drawn small enough to show whole). */
size_t vat_task_inline_cap(const struct vat_task *t);
#define VAT_INLINE_ROW_BYTES 70
double vat_task_real(const struct vat_task *t, const char *name);
bool vat_task_bool(const struct vat_task *t, const char *name);
const char *vat_task_str(const struct vat_task *t, const char *name);

#endif

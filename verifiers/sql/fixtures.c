/* fixtures.c — fixtures as the sandbox reads them: a file read once into
 * an image (a CSV loaded by its spec), and the caches kept while a build
 * draws a task, behind the file memo the builder owns (core/vat.h, struct
 * vat_file_hooks): off in every program but the build.
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

/* ---- fixtures ------------------------------------------------------------------ */

static int fixture_fail(struct vat_verdict *v, const char *rel, const char *what,
                        const char *detail)
{
    struct vat_reason r = {{0}, 0};
    vat_reason_esc_puts(&r, "fixture '");
    vat_reason_esc(&r, rel, strlen(rel), 100);
    vat_reason_esc_puts(&r, "' ");
    vat_reason_esc_puts(&r, what);
    if (detail) {
        vat_reason_esc_puts(&r, ": ");
        vat_reason_esc_puts(&r, detail);
    }
    *v = vat_reason_verdict(false, 0, VAT_INTERNAL, &r);
    return -1;
}

/* Whether the n bytes at p start as an SQLite database does. */
bool is_sqlite_image(const void *p, size_t n)
{
    return n >= 512 && memcmp(p, "SQLite format 3", 16) == 0;
}

/* A CSV fixture (spec "load") is turned into a database image by the
 * loader of sqlload.c; raw_sha (if not NULL) receives the sha256 of the
 * file's bytes as read, which is what the tables record. */
static int fixture_take(const char *root, const char *rel, const json_t *load,
                        unsigned char *buf, size_t n, char *tag, struct fixture_img *img,
                        char raw_sha[65], struct vat_verdict *v);

/* Reads root/rel whole into memory (the only time the file is touched).
 * Refuses an unsafe path without opening anything.  With borrow, an image
 * the draw's file memo holds is lent (img->own NULL) rather than copied.
 * With want (a digest the corpus records for rel), rel may be a symbolic
 * link to a regular file (a Hugging Face cache snapshot), and the bytes
 * read must have that SHA-256, whatever rel is (else tampered).
 * Returns 0, or -1 with *v internal (tampered for a digest mismatch). */
int fixture_load(const char *root, const char *rel, const json_t *load, bool borrow,
                 const char *want, struct fixture_img *img, char raw_sha[65],
                 struct vat_verdict *v)
{
    img->data = img->own = NULL;
    img->n = 0;
    if (!rel || !vat_path_is_safe(rel))
        return spec_unsafe_path(v, rel ? rel : "");
    /* A CSV fixture's image for this load spec, made earlier in the same
     * task's draw (the build's file memo; off everywhere else). */
    char *tag = NULL;
    size_t mn;
    const char *m;
    if (load && vat_file_memo_on()) {
        char *spec_text = json_dumps(load, JSON_COMPACT | JSON_SORT_KEYS);
        tag = vat_xasprintf("csv-image %s", spec_text ? spec_text : "");
        free(spec_text);
        size_t rn;
        const char *raw = vat_file_memo_get(root, rel, NULL, &rn);
        if (raw && (m = vat_file_memo_get(root, rel, tag, &mn)) != NULL) {
            if (raw_sha)
                vat_file_sha256(root, rel, raw, rn, raw_sha, NULL);
            free(tag);
            img->n = mn;
            if (borrow) {
                img->data = (const unsigned char *)m;
                return 0;
            }
            img->data = img->own = vat_xmalloc(mn ? mn : 1);
            memcpy(img->own, m, mn);
            return 0;
        }
    }
    if ((m = vat_file_memo_get(root, rel, NULL, &mn)) != NULL) {
        if (borrow && !load) {
            free(tag);
            if (raw_sha)
                vat_file_sha256(root, rel, m, mn, raw_sha, NULL);
            if (!is_sqlite_image(m, mn))
                return fixture_fail(v, rel, "is not an sqlite database", NULL);
            img->data = (const unsigned char *)m;
            img->n = mn;
            return 0;
        }
        unsigned char *buf = vat_xmalloc(mn ? mn : 1);
        memcpy(buf, m, mn);
        return fixture_take(root, rel, load, buf, mn, tag, img, raw_sha, v);
    }
    /* Beneath root, no symbolic link followed (but rel itself, when its
     * digest is known); O_NONBLOCK: a FIFO placed there must not hang the
     * checker. */
    bool linked = false;
    struct vat_err le = {{0}};
    int fd = want ? vat_open_beneath_linked(root, rel, O_RDONLY, &linked, &le)
                  : vat_open_beneath(root, rel, O_RDONLY | O_NONBLOCK, NULL);
    int open_errno = errno;
    if (fd < 0) {
        free(tag);
        return fixture_fail(v, rel, "cannot be opened",
                            le.msg[0] ? le.msg + (strncmp(le.msg, "vat: ", 5) == 0 ? 5 : 0)
                                      : strerror(open_errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        free(tag);
        return fixture_fail(v, rel, "is not a regular file", NULL);
    }
    if ((uintmax_t)st.st_size > SQL_MAX_FIXTURE_BYTES) {
        close(fd);
        free(tag);
        return fixture_fail(v, rel, "is larger than 64 MiB", NULL);
    }
    size_t n = (size_t)st.st_size, got = 0;
    unsigned char *buf = vat_xmalloc(n ? n : 1);
    while (got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int err = k < 0 ? errno : 0;
            close(fd);
            free(buf);
            free(tag);
            return fixture_fail(v, rel, "cannot be read", err ? strerror(err) : "short read");
        }
        got += (size_t)k;
    }
    close(fd);
    if (want) {
        /* trust by content: the bytes just read, nothing read again */
        char hex[65];
        vat_sha256_hex(buf, n, hex);
        if (strcmp(hex, want) != 0) {
            const char *lfs = vat_lfs_pointer(buf, n);
            struct vat_reason r = {{0}, 0};
            vat_reason_esc_puts(&r, "fixture '");
            vat_reason_esc(&r, rel, strlen(rel), 100);
            vat_reason_esc_puts(&r, lfs ? "' is a "
                                    : linked ? "' is a symbolic link to a file whose "
                                               "sha256 is not the one the corpus records"
                                             : "' does not match the sha256 the corpus "
                                               "records");
            if (lfs)
                vat_reason_esc_puts(&r, lfs);
            *v = vat_reason_verdict(false, 0, VAT_TAMPERED, &r);
            free(buf);
            free(tag);
            return -1;
        }
    }
    vat_file_memo_put(root, rel, NULL, (const char *)buf, n);
    return fixture_take(root, rel, load, buf, n, tag, img, raw_sha, v);
}

/* Makes img of the n bytes of rel read into buf (taken): as they are, or
 * loaded as CSV by load (the image memoised under tag when given). */
static int fixture_take(const char *root, const char *rel, const json_t *load,
                        unsigned char *buf, size_t n, char *tag, struct fixture_img *img,
                        char raw_sha[65], struct vat_verdict *v)
{
    if (raw_sha)
        vat_file_sha256(root, rel, buf, n, raw_sha, NULL);
    if (vat_is_lfs_pointer(buf, n)) {
        /* a checkout without its LFS objects: the corpus, not the task */
        free(buf);
        free(tag);
        struct vat_reason r = {{0}, 0};
        vat_reason_esc_puts(&r, "fixture '");
        vat_reason_esc(&r, rel, strlen(rel), 100);
        vat_reason_esc_puts(&r, "' is a " VAT_LFS_POINTER);
        *v = vat_reason_verdict(false, 0, VAT_TAMPERED, &r);
        return -1;
    }
    if (load) {
        char why[200];
        unsigned char *db = NULL;
        size_t dn = 0;
        int lrc = vat_sql_csv_image(buf, n, load, &db, &dn, why, sizeof why);
        free(buf);
        if (lrc != 0) {
            free(tag);
            return fixture_fail(v, rel, "cannot be loaded as CSV", why);
        }
        if (tag)
            vat_file_memo_put(root, rel, tag, (const char *)db, dn);
        free(tag);
        img->data = img->own = db;
        img->n = dn;
        return 0;
    }
    free(tag);
    if (!is_sqlite_image(buf, n)) {
        free(buf);
        return fixture_fail(v, rel, "is not an sqlite database", NULL);
    }
    img->data = img->own = buf;
    img->n = n;
    return 0;
}

/* A new sandbox for spec s, set up to join a pool: open on img as mode
 * sees it, or, with img NULL, on the fixture set (which keeps normal
 * locking).  NULL with *v internal. */
struct sandbox *sandbox_new(const struct sql_spec *s, const struct query_facts *qf,
                            const struct fixture_img *img, enum run_mode mode,
                            const struct switch_set *set, struct vat_verdict *v)
{
    struct sandbox *sb = vat_xcalloc(1, sizeof *sb);
    sb->tables = s->tables;
    sb->step_budget = s->step_budget;
    sb->mentions_now = qf->mentions_now;
    sb->writable = img && mode == RUN_PLAIN && vat_file_memo_on();
    int rc = img ? sandbox_open(sb, img->data, img->n, mode, v) : sandbox_open_switch(sb, set, v);
    if (rc != 0) { /* closed by sandbox_fail */
        free(sb);
        return NULL;
    }
    if (sandbox_pool_setup(sb, img != NULL, v) != 0)
        return NULL; /* destroyed */
    return sb;
}

/* Each thread keeps its last few sandboxes, by fixture bytes, run mode,
 * step budget and allowed tables: a task's reference, confirmation and
 * admission runs (and the builder's next draw on the same bytes) then
 * open and parse a fixture once instead of once per query.  Sixteen
 * holds a task's admission of its gold query (three run modes on each of
 * up to five fixtures) with room to spare, so the plain runs that follow
 * it, and the pool of the task's prepared check (sb_cache_take), find
 * their sandboxes still open.  A sandbox
 * goes back only after a query that ran to completion and is rearmed
 * before each query, as the prepared checks' pools are (see
 * vat_sql_prepare below), so a reused connection is as strict as a new
 * one.  Freed when the thread exits. */
#define SB_CACHE_SIZE 16
void rows_copy(struct sql_rows *dst, const struct sql_rows *src)
{
    memset(dst, 0, sizeof *dst);
    dst->nrow = src->nrow;
    dst->ncol = src->ncol;
    dst->cap = src->nrow * src->ncol;
    dst->v = vat_xmalloc((dst->cap ? dst->cap : 1) * sizeof *dst->v);
    for (size_t k = 0; k < dst->cap; k++) {
        dst->v[k] = src->v[k];
        if (src->v[k].p) {
            dst->v[k].p = rows_bytes(dst, src->v[k].n + 1);
            memcpy(dst->v[k].p, src->v[k].p, src->v[k].n + 1);
        }
    }
}

void memo_release(struct sb_cache_entry *x)
{
    for (size_t i = 0; i < x->nmemo; i++) {
        free(x->memo[i].q);
        rows_release(&x->memo[i].rows);
    }
    x->nmemo = 0;
}

struct rows_memo *memo_find_rows(struct sb_cache_entry *x, const struct sql_spec *s,
                                 const char *q, size_t qlen, enum run_mode how)
{
    for (size_t i = 0; i < x->nmemo; i++) {
        struct rows_memo *m = &x->memo[i];
        if (m->qlen == qlen && m->how == how && m->max_rows == s->max_rows &&
            m->max_bytes == s->max_bytes && memcmp(m->q, q, qlen) == 0)
            return m;
    }
    return NULL;
}

void memo_keep_rows(struct sb_cache_entry *x, const struct sql_spec *s, const char *q,
                    size_t qlen, enum run_mode how, const struct sql_rows *rows,
                    long long work)
{
    if (x->nmemo == SB_ROWS_MEMO) { /* the oldest goes */
        free(x->memo[0].q);
        rows_release(&x->memo[0].rows);
        memmove(&x->memo[0], &x->memo[1], (SB_ROWS_MEMO - 1) * sizeof x->memo[0]);
        x->nmemo--;
    }
    struct rows_memo *m = &x->memo[x->nmemo++];
    m->q = vat_xmalloc(qlen ? qlen : 1);
    memcpy(m->q, q, qlen);
    m->qlen = qlen;
    m->how = how;
    m->max_rows = s->max_rows;
    m->max_bytes = s->max_bytes;
    m->work = work;
    rows_copy(&m->rows, rows);
}

/* A writable plain sandbox let go of (by a task's prepared check when it
 * is freed, or by the cache when a new one comes in) is kept as a spare
 * instead of closed, and the next fixture that needs a writable plain
 * sandbox gets it with the new image put under the same connection
 * (sandbox_reimage): the connection's opening and hardening (options,
 * pragmas, limits, functions, authorizer, progress handler) are done once
 * per spare, not once per fixture. */
#define SB_SPARES 4
struct sb_cache {
    /* most recent first; moved by pointer, an entry being large (its
     * memo) */
    struct sb_cache_entry *e[SB_CACHE_SIZE];
    size_t used;
    struct sandbox *spare[SB_SPARES];
    size_t nspare;
};
static pthread_key_t sb_cache_key;
static pthread_once_t sb_cache_once = PTHREAD_ONCE_INIT;

static void sb_entry_free(struct sb_cache_entry *x)
{
    memo_release(x);
    sandbox_destroy(x->sb);
    free(x->img);
    json_decref(x->tables);
}

static void sb_cache_free(void *arg)
{
    struct sb_cache *c = arg;
    for (size_t i = 0; i < c->used; i++) {
        sb_entry_free(c->e[i]);
        free(c->e[i]);
    }
    for (size_t i = 0; i < c->nspare; i++)
        sandbox_destroy(c->spare[i]);
    free(c);
}

static struct sb_cache *sb_cache_get(void);

/* Keeps sb as one of this thread's spares when it is a writable plain
 * sandbox on a fixture image at rest (no transaction open, nothing set
 * aside) and there is room; destroys it otherwise. */
void sandbox_retire(struct sandbox *sb)
{
    struct sb_cache *c = sb_cache_get();
    if (sb->writable && !sb->sw.set && !sb->aside && c->nspare < SB_SPARES &&
        sqlite3_get_autocommit(sb->db))
        c->spare[c->nspare++] = sb;
    else
        sandbox_destroy(sb);
}

/* Frees cache entry x, its sandbox retired (sandbox_retire). */
static void sb_entry_retire(struct sb_cache_entry *x)
{
    memo_release(x);
    free(x->img);
    json_decref(x->tables);
    sandbox_retire(x->sb);
}

static void sb_cache_init(void)
{
    pthread_key_create(&sb_cache_key, sb_cache_free);
}

static struct sb_cache *sb_cache_get(void)
{
    pthread_once(&sb_cache_once, sb_cache_init);
    struct sb_cache *c = pthread_getspecific(sb_cache_key);
    if (!c) {
        c = vat_xcalloc(1, sizeof *c);
        pthread_setspecific(sb_cache_key, c);
    }
    return c;
}

static bool tables_same(const json_t *a, const json_t *b)
{
    return (!a && !b) || (a && b && json_equal((json_t *)a, (json_t *)b));
}

/* This thread's cached sandbox of those fixture bytes, mode and limits, or
 * NULL (left in the cache). */
struct sb_cache_entry *sb_cache_find(const struct sql_spec *s,
                                     const struct fixture_img *img, enum run_mode mode)
{
    struct sb_cache *c = sb_cache_get();
    for (size_t i = 0; i < c->used; i++) {
        struct sb_cache_entry *e = c->e[i];
        if (e->mode == mode && e->n == img->n && e->step_budget == s->step_budget &&
            memcmp(e->img, img->data, img->n) == 0 && tables_same(e->tables, s->tables))
            return e;
    }
    return NULL;
}

/* Moves this thread's cached sandbox for img in mode with s's budget and
 * tables out of the cache into *out; false (and *out zeroed) when none. */
static bool sb_cache_pull(const struct sql_spec *s, const struct fixture_img *img,
                          enum run_mode mode, struct sb_cache_entry *out)
{
    memset(out, 0, sizeof *out);
    struct sb_cache *c = sb_cache_get();
    struct sb_cache_entry *e = sb_cache_find(s, img, mode);
    if (!e)
        return false;
    *out = *e;
    size_t i = 0;
    while (c->e[i] != e)
        i++;
    free(e);
    memmove(&c->e[i], &c->e[i + 1], (c->used - i - 1) * sizeof c->e[0]);
    c->used--;
    return true;
}

/* Takes out of this thread's cache the sandbox for img in mode with s's
 * budget and tables, or returns NULL; the caller owns it (its tables
 * pointer is left for the caller to set). */
struct sandbox *sb_cache_take(const struct sql_spec *s, const struct fixture_img *img,
                              enum run_mode mode)
{
    struct sb_cache_entry x;
    if (!sb_cache_pull(s, img, mode, &x))
        return NULL;
    memo_release(&x);
    free(x.img);
    json_decref(x.tables);
    return x.sb;
}

/* Runs our own statement sql (a pragma, a rollback) on sb with its
 * limits, authorizer and progress handler stepped aside for it.
 * SQLITE_OK, or the failure. */
int sandbox_exec_aside(struct sandbox *sb, const char *sql)
{
    sandbox_step_aside(sb, true);
    int rc = sqlite3_exec(sb->db, sql, NULL, NULL, NULL);
    sandbox_step_aside(sb, false);
    return rc;
}

/* Turns reverse_unordered_selects on or off on sb's connection.  0, or -1
 * with *v internal (v may be NULL). */
static int sandbox_scan_order(struct sandbox *sb, bool reverse, struct vat_verdict *v)
{
    if (sandbox_exec_aside(sb, reverse ? "PRAGMA reverse_unordered_selects=ON"
                                       : "PRAGMA reverse_unordered_selects=OFF") != SQLITE_OK) {
        if (v)
            *v = vat_reason_verdictf(false, VAT_INTERNAL, "the sandbox cannot set its scan order");
        return -1;
    }
    return 0;
}

/* Whether the n bytes at now are img as a sandbox holds it (a WAL image
 * read in rollback mode). */
static bool image_same(const unsigned char *now, size_t nn, const unsigned char *img, size_t n)
{
    return now && nn == n && n >= 100 && memcmp(now, img, 18) == 0 &&
           now[18] == rollback_byte(img[18]) && now[19] == rollback_byte(img[19]) &&
           memcmp(now + 20, img + 20, n - 20) == 0;
}

/* Runs q on the writable plain sandbox sb of fixture image img with the
 * task's rows stored in reverse order: the copy is made inside a
 * transaction by sandbox_reverse_rows, with limits, authorizer and
 * progress handler aside as when a separate sandbox makes it, the query
 * runs under them as always, and the transaction is rolled back.  Returns 0 (rows in
 * *out), -1 with *v (the query failed), or 1 when the copy could not be
 * made (nothing run).  *restored says whether sb's image is afterwards
 * byte for byte what it was; when not, the caller closes sb. */
static int sandbox_query_rows_reversed(struct sandbox *sb, const struct fixture_img *img,
                                       const struct sql_spec *s, const char *label,
                                       const char *q, size_t qlen, const struct query_facts *qf,
                                       struct sql_rows *out, struct vat_verdict *v,
                                       bool *restored, long long *work)
{
    *restored = false;
    sandbox_step_aside(sb, true);
    int rc = sqlite3_exec(sb->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK &&
                     sandbox_reverse_rows(sb) == 0
                 ? 0
                 : 1;
    sandbox_step_aside(sb, false);
    if (rc == 0) {
        sandbox_rearm(sb, qf);
        rc = sandbox_query(sb, s, label, q, qlen, out, v, work);
    }
    /* A rollback, not a savepoint released: releasing would commit the
     * emptied transaction, and a commit bumps the header's change
     * counter. */
    bool back = sqlite3_get_autocommit(sb->db) == 0 &&
                sandbox_exec_aside(sb, "ROLLBACK") == SQLITE_OK;
    if (back && sqlite3_get_autocommit(sb->db)) {
        sqlite3_int64 nn = 0;
        const unsigned char *now =
            sqlite3_serialize(sb->db, "main", &nn, SQLITE_SERIALIZE_NOCOPY);
        *restored = image_same(now, (size_t)nn, img->data, img->n);
    }
    return rc;
}

static void sb_cache_push(struct sb_cache *c, struct sb_cache_entry *x)
{
    struct sb_cache_entry *kept;
    if (c->used == SB_CACHE_SIZE) {
        kept = c->e[--c->used];
        sb_entry_retire(kept);
    } else {
        kept = vat_xmalloc(sizeof *kept);
    }
    *kept = *x;
    memmove(&c->e[1], &c->e[0], c->used * sizeof c->e[0]);
    c->e[0] = kept;
    c->used++;
}

/* Puts fixture image img under the spare sandbox sb as sandbox_open puts
 * one under a new connection: a private resizeable copy read in rollback
 * mode, the schema read (by listing the fixture's tables again) with the
 * limits, authorizer and progress handler aside (as on a connection not
 * yet hardened) and exclusive locking set on the new pager; the statement
 * cache starts empty and the hardening stays as sandbox_harden left it.
 * 0, or -1 (sb then is the caller's to destroy). */
static int sandbox_reimage(struct sandbox *sb, const struct sql_spec *s,
                           const struct query_facts *qf, const struct fixture_img *img)
{
    if (img->n < 100)
        return -1; /* sandbox_new says what is wrong with it */
    sb->tables = s->tables;
    sb->step_budget = s->step_budget;
    sb->mentions_now = qf->mentions_now;
    sandbox_stmt_cache_reset(sb);
    sandbox_names_free(sb);
    sql_sandbox_opens++;
    sql_sandbox_reimages++;
    sandbox_step_aside(sb, true);
    int rc = sandbox_deserialize(sb, img->data, img->n, SQLITE_DESERIALIZE_RESIZEABLE);
    /* Listing the tables is the first statement on the new image, so it
     * reads the schema (sandbox_harden reads it by a statement of its own
     * to tell an unreadable fixture from an unlistable one; a spare that
     * fails here is destroyed and sandbox_new says which it was). */
    if (rc == SQLITE_OK && sandbox_names(sb) != 0)
        rc = SQLITE_ERROR;
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(sb->db, sandbox_exclusive_sql, NULL, NULL, NULL);
    sandbox_step_aside(sb, false);
    return rc == SQLITE_OK ? 0 : -1;
}

/* A spare sandbox of this thread's cache with img put under it, or NULL
 * (none, or it would not take the image: destroyed). */
static struct sandbox *sb_spare_take(struct sb_cache *c, const struct sql_spec *s,
                                     const struct query_facts *qf,
                                     const struct fixture_img *img)
{
    if (c->nspare == 0)
        return NULL;
    struct sandbox *sb = c->spare[--c->nspare];
    if (sandbox_reimage(sb, s, qf, img) != 0) {
        sandbox_destroy(sb);
        return NULL;
    }
    return sb;
}

/* sandbox_run; allow_inside false keeps the rows-reversed run out of the
 * plain sandbox. */
static int sandbox_run_in(const struct sql_spec *s, const struct fixture_img *img,
                          const char *label, const char *q, size_t qlen,
                          const struct query_facts *qf, enum run_mode mode, struct sql_rows *out,
                          struct vat_verdict *v, bool allow_inside, long long *work)
{
    memset(out, 0, sizeof *out);
    if (*work > s->step_budget) {
        *v = budget_verdict(s, label);
        return -1;
    }
    const long long base = *work;
    pthread_once(&mem_net_once, mem_net_init);
    const enum run_mode how = mode; /* the order the rows are computed in */
    /* A backwards scan is the plain connection with the pragma turned on
     * for this one query (it expires the connection's compiled statements,
     * so nothing prepared in one order runs in the other). */
    bool backwards = mode == RUN_REVERSE_SCAN;
    if (backwards)
        mode = RUN_PLAIN;
    struct sb_cache *c = sb_cache_get();
    struct sb_cache_entry x;
    bool memo = vat_file_memo_on();
    /* During a draw, rows stored in reverse order are made inside the
     * fixture's writable plain sandbox, when it is open, and rolled back
     * (no second connection, schema parse and copy of the image);
     * otherwise in a sandbox of their own. */
    bool inside = false;
    if (mode == RUN_REVERSE_ROWS && memo && allow_inside) {
        sb_cache_pull(s, img, RUN_PLAIN, &x);
        if (x.sb && x.sb->writable) {
            inside = true;
            mode = RUN_PLAIN;
        } else {
            if (x.sb)
                sb_cache_push(c, &x);
            sb_cache_pull(s, img, RUN_REVERSE_ROWS, &x);
        }
    } else {
        sb_cache_pull(s, img, mode, &x);
    }
    struct rows_memo *m = memo && x.sb ? memo_find_rows(&x, s, q, qlen, how) : NULL;
    if (m) {
        sb_cache_push(c, &x);
        /* what running it would count (sandbox_query) */
        if (base + m->work > s->step_budget) {
            *work = s->step_budget + 1;
            *v = budget_verdict(s, label);
            return -1;
        }
        *work = base + m->work;
        rows_copy(out, &m->rows);
        return 0;
    }
    if (!x.sb) {
        if (mode == RUN_PLAIN && memo)
            x.sb = sb_spare_take(c, s, qf, img);
        if (!x.sb && !(x.sb = sandbox_new(s, qf, img, mode, NULL, v)))
            return -1;
        x.img = vat_xmalloc(img->n ? img->n : 1);
        memcpy(x.img, img->data, img->n);
        x.n = img->n;
        x.mode = mode;
        x.step_budget = s->step_budget;
        x.tables = s->tables ? json_deep_copy(s->tables) : NULL;
    }
    x.sb->tables = s->tables;
    int rc;
    bool restored = true;
    if (inside) {
        rc = sandbox_query_rows_reversed(x.sb, img, s, label, q, qlen, qf, out, v, &restored,
                                         work);
        if (rc == 1) { /* no copy made: the rows reversed in a sandbox of their own */
            x.sb->tables = x.tables;
            if (restored)
                sb_cache_push(c, &x);
            else
                sb_entry_free(&x);
            return sandbox_run_in(s, img, label, q, qlen, qf, RUN_REVERSE_ROWS, out, v, false,
                                  work);
        }
    } else {
        rc = backwards ? sandbox_scan_order(x.sb, true, v) : 0;
        sandbox_rearm(x.sb, qf);
        if (rc == 0)
            rc = sandbox_query(x.sb, s, label, q, qlen, out, v, work);
        if (backwards && sandbox_scan_order(x.sb, false, rc == 0 ? v : NULL) != 0 && rc == 0) {
            rows_release(out);
            rc = -1;
        }
    }
    x.sb->tables = x.tables;
    if (rc != 0 || !restored) {
        sb_entry_free(&x);
        return rc;
    }
    if (memo)
        memo_keep_rows(&x, s, q, qlen, how, out, *work - base);
    sb_cache_push(c, &x);
    return 0;
}

/* Runs q on img as mode says, in a sandbox of this thread's cache or a
 * new one, as part of a check whose work so far is *work (sandbox_query).
 * 0, or -1 with *v set. */
int sandbox_run(const struct sql_spec *s, const struct fixture_img *img,
                const char *label, const char *q, size_t qlen,
                const struct query_facts *qf, enum run_mode mode, struct sql_rows *out,
                struct vat_verdict *v, long long *work)
{
    return sandbox_run_in(s, img, label, q, qlen, qf, mode, out, v, true, work);
}

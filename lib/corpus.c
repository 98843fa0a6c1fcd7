/* corpus.c — libvat: a built corpus opened once and scored from many
 * threads (include/libvat.h is the contract; lib/corpus.h the internal
 * calls of vat's own tools).
 *
 * Opening reads out/verifiers/{train,test}.jsonl whole and indexes every
 * row by its task id in an open-addressing hash table without parsing the
 * rows: the index holds byte ranges, found by the "task_id" member's
 * bytes (a row whose id is escaped is parsed to read it).  A row is parsed
 * on its task's first score and the task's state (its checker spec, its
 * trap, its prepared SQL check with fixtures and gold rows) is built and
 * handed to the cache, which keeps it, with the verdict memo, under the
 * handle's byte budget (see "the cache"); a score takes its shard's lock
 * for a moment to find the state and a reference to it.  The experience
 * and rollouts tables are indexed the same way on first need (the fixture
 * digests, the trap).
 *
 * Tampering: when out/manifest.json exists, every table file the handle
 * reads must have the sha256 the manifest gives it; otherwise every score
 * of the corpus is `tampered` (opening still succeeds, so an RL loop gets
 * zero rewards with a reason, and `vat score` exits 1).  An SQL fixture
 * whose bytes do not have the sha256 recorded for it (by the manifest,
 * else by its experience row) gives `tampered` on that task.
 *
 * SQL verdicts of answers already checked are memoized per task (the
 * verdict memo below; VAT_VERDICT_MEMO=0 at open turns it off).
 *
 * Threads: the handle is shared; the parts the tools read (rows, table
 * indexes) are built under one mutex and published with release stores,
 * read with acquire loads; task states are built under their shard's
 * build lock and reference counted. */
#define _GNU_SOURCE /* memmem */
#include "corpus.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extract.h"
#include "verifier_row.h"
#include "verifiers.h"

/* ---- one table file read whole ------------------------------------------- */

struct tfile {
    char *data;
    size_t n;
    bool present;
};

static void tfile_release(struct tfile *f)
{
    free(f->data);
    memset(f, 0, sizeof *f);
}

/* Reads root/rel into f.  A missing file is not an error (f->present
 * false); anything else is.  With linked, rel itself may be a symbolic
 * link to a regular file (a Hugging Face cache snapshot): the caller then
 * trusts the bytes read only by their digest (manifest_check). */
static int tfile_read(const char *root, const char *rel, bool linked, struct tfile *f, char *msg,
                      size_t cap)
{
    memset(f, 0, sizeof *f);
    /* Beneath root, no symbolic link on the way followed (docs/corpus-store.md). */
    struct vat_err ve = {{0}};
    bool was_link;
    int fd = linked ? vat_open_beneath_linked(root, rel, O_RDONLY | O_NOCTTY, &was_link, &ve)
                    : vat_open_beneath(root, rel, O_RDONLY | O_NOCTTY | O_NONBLOCK, &ve);
    int e = errno;
    if (fd < 0) {
        if (e == ENOENT)
            return 0;
        snprintf(msg, cap, "%.200s", ve.msg[0] ? ve.msg : strerror(e));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(msg, cap, "'%s' is not a regular file", rel);
        return -1;
    }
    size_t n = (size_t)st.st_size, got = 0;
    char *buf = vat_xmalloc(n + 1);
    while (got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    if (got != n) {
        free(buf);
        snprintf(msg, cap, "cannot read '%s'", rel);
        return -1;
    }
    buf[n] = 0;
    f->data = buf;
    f->n = n;
    f->present = true;
    return 0;
}

/* ---- finding a member's string without parsing the row ------------------- */

/* Finds the string value of member key in one JSONL row by its bytes: the
 * first `"key":"` whose opening quote is a real quote (an even run of
 * backslashes before it; inside a JSON string every quote is escaped).
 * Returns false when it is absent or holds an escape (the caller parses
 * the row then). */
static bool key_string(const char *s, size_t n, const char *key, const char **v, size_t *vlen)
{
    char pat[40];
    int pl = snprintf(pat, sizeof pat, "\"%s\":\"", key);
    if (pl <= 0 || (size_t)pl >= sizeof pat)
        return false;
    const char *end = s + n, *p = s;
    while (p + pl <= end) {
        const char *hit = memmem(p, (size_t)(end - p), pat, (size_t)pl);
        if (!hit)
            return false;
        size_t bs = 0;
        while (hit - bs > s && hit[-(ptrdiff_t)bs - 1] == '\\')
            bs++;
        if (bs % 2 == 0) {
            const char *q = hit + pl, *e = q;
            while (e < end && *e != '"' && *e != '\\')
                e++;
            if (e >= end || *e == '\\')
                return false;
            *v = q;
            *vlen = (size_t)(e - q);
            return true;
        }
        p = hit + 1;
    }
    return false;
}

/* ---- the task index ---------------------------------------------------------- */

enum { ROLE_GOLD, ROLE_TRAP, ROLE_MALFORMED, N_ROLES };
static const char *const role_names[N_ROLES] = {"gold", "trap", "malformed"};

enum kind { K_NONE, K_VALUE, K_REGEX, K_SQL, K_ABSTAIN };

/* What scoring a task needs, built whole on its first score (and again
 * after the cache let it go) and immutable once published, but for the
 * caches inside its preps, which grow (and are counted as they grow). */
struct task_state {
    json_t *spec;          /* vat_verifier_spec(row) */
    enum kind kind;
    const char *kind_name; /* "value" | "regex" | "sql" | "abstain" */
    struct vat_sql_prep *prep; /* sql tasks: NULL with prep_v when it cannot be built */
    struct vat_verdict prep_v;
    json_t *trap_spec;      /* value/abstain/regex: answer scoring 1 here is the trap */
    bool trap_abstains;     /* abstain: the trap is the abstention */
    /* read once with the row, so a check walks no spec JSON */
    struct vat_value_prep *value;  /* value tasks */
    struct vat_rx_cache *rx;       /* regex tasks: compiled answers */
    struct vat_rx_prep *rx_prep;   /* regex tasks: the spec through rx */
    struct vat_rx_prep *trap_rx;   /* regex tasks: trap_spec through rx */
    struct vat_value_prep *trap_value; /* value tasks: trap_spec read once */
    struct vat_abstain_prep *abstain;  /* abstain tasks */
    /* lib/env.c's environment of the task, made on its first episode
     * (vat_corpus_task_env), counted with the state and freed with it */
    _Atomic(struct vat_task_env *) env;
    /* in the cache (lib/corpus.c "the cache"): the cache's reference while
     * it holds the state, plus one per score using it */
    _Atomic unsigned refs;
    struct entry *task;
    struct task_state *prev, *next; /* its shard's list, most recent first */
    bool held;                      /* in that list (under the shard's lock) */
    unsigned long long used;        /* the shard's tick at its last use */
    _Atomic size_t charged;         /* the bytes its shard counts for it */
    size_t fixed;                   /* state_bytes' part that does not grow */
};

struct entry {
    const char *id;
    size_t id_len;
    uint64_t hash;
    const char *row;
    size_t row_len;
    struct task_state *st;     /* held in the cache (its shard's lock) */
    _Atomic(json_t *) row_json; /* vat_corpus_row's parse, kept for the tools */
    /* filled when the experience / rollouts tables are indexed */
    const char *exp_row, *roll_row[N_ROLES];
    size_t exp_len, roll_len[N_ROLES];
    _Atomic(json_t *) exp_json;
    _Atomic(char *) roll_answer[N_ROLES];
    /* the task's memoized SQL verdicts, most recent first (its shard's lock) */
    struct memo_ent *memo_head, *memo_tail;
    size_t memo_n;
    /* the same entries with their hashes side by side, in no order, so a
     * lookup scans one small array instead of chasing the list */
    struct memo_slot *memo_slots;
    size_t memo_cap;
};

/* ---- the verdict memo (declarations; the code is below) ---------------------- */

/* One memoized verdict of an SQL task: the exact extracted answer bytes it
 * was checked on, and what the check gave.  Linked in its task's list (for
 * lookup and the per-task bound) and in its shard's LRU list (for the total
 * bound), both most recent first. */
struct memo_slot {
    uint64_t hash;
    struct memo_ent *m;
};

struct memo_ent {
    struct memo_ent *t_prev, *t_next; /* the task's list */
    size_t slot;                      /* its place in the task's memo_slots */
    struct memo_ent *l_prev, *l_next; /* the shard's LRU list */
    struct entry *task;
    uint64_t hash;
    size_t len;
    unsigned long long used; /* its shard's tick at its last use */
    struct vat_verdict v;
    bool is_trap;
    long long work;
    char ans[];
};

/* The cache: what a handle keeps between scores (the verdict memo, and
 * each task's state with its SQL fixtures, fixture sets, pooled sandboxes
 * and their statements, compiled regexes, and the tool-use environment
 * of its episodes) lives under one byte budget,
 * split evenly over the shards.  Tasks map to shards by their index, so a
 * task's entries share one lock and threads scoring different tasks
 * rarely meet.  A shard keeps its memo entries and its task states in two
 * lists, most recent first, stamped with the shard's tick at each use;
 * when something must make room, the older of the two lists' tails goes
 * first, so a shard's least recently used entry goes, whatever its kind. */
#define MEMO_SHARDS 16
struct memo_shard {
    pthread_mutex_t lock;
    struct memo_ent *lru_head, *lru_tail;
    size_t bytes, entries; /* the memo's */
    struct task_state *st_head, *st_tail;
    size_t st_bytes, st_entries; /* the task states' */
    unsigned long long tick;
    size_t peak;                 /* the most bytes + st_bytes ever held */
    unsigned long long evictions;
    /* states are built under it, so two threads do not build one state */
    pthread_mutex_t build_lock;
};

enum { T_VER_TRAIN, T_VER_TEST, T_EXP_TRAIN, T_EXP_TEST, T_ROLL_TRAIN, T_ROLL_TEST, N_TFILES };
static const char *const tfile_rel[N_TFILES] = {
    "out/verifiers/train.jsonl",  "out/verifiers/test.jsonl", "out/experience/train.jsonl",
    "out/experience/test.jsonl", "out/rollouts/train.jsonl",  "out/rollouts/test.jsonl",
};

struct vat_corpus {
    char *root;
    struct tfile file[N_TFILES];
    struct entry *ent;
    size_t n;
    size_t *slot; /* index+1 into ent; 0 empty */
    size_t nslot; /* a power of two */
    /* out/manifest.json's "files": c->man (its bytes) indexed by man_scan,
     * or, for a manifest the scanner leaves to jansson, man_json */
    bool has_manifest;
    struct tfile man;
    struct man_ent *man_ent;
    size_t man_n, *man_slot, man_nslot;
    json_t *man_json;
    pthread_mutex_t lock;        /* lazily built parts */
    pthread_mutex_t tamper_lock; /* tamper_msg; may be taken under lock */
    _Atomic int exp_ready, roll_ready;
    _Atomic int tampered;
    char tamper_msg[256];
    /* the verdict memo: on unless VAT_VERDICT_MEMO=0 at open; bounds in
     * vat_corpus_memo_limits */
    bool memo_on;
    size_t memo_per_task, memo_max_answer, memo_shard_bytes;
    struct memo_shard memo[MEMO_SHARDS];
    _Atomic unsigned long long memo_hits, memo_misses;
    /* VAT_OPEN_REVEAL_HIDDEN: reasons quote held-out cases (the memo's
     * verdicts are this handle's, so they agree) */
    bool reveal;
    /* the cache's budget: cache_bytes in all, shard_cap a shard */
    size_t cache_bytes, shard_cap;
    _Atomic unsigned long long state_builds, env_builds;
    /* lib/env.c's state of the handle (vat_corpus_ext), freed at close */
    _Atomic(void *) ext;
    void (*ext_free)(void *);
};

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static struct entry *find(const vat_corpus *c, const char *id, size_t len)
{
    if (!c || !id || !c->nslot)
        return NULL;
    uint64_t h = hash_bytes(id, len);
    for (size_t i = (size_t)h & (c->nslot - 1);; i = (i + 1) & (c->nslot - 1)) {
        size_t k = c->slot[i];
        if (!k)
            return NULL;
        struct entry *e = &c->ent[k - 1];
        if (e->hash == h && e->id_len == len && memcmp(e->id, id, len) == 0)
            return e;
    }
}

/* ---- out/manifest.json without a DOM ------------------------------------------ */

/* A corpus of 10,000 tasks has a manifest of some 23,000 files (3 MB);
 * jansson builds it into objects in about 100 ms, a third of the open
 * budget, when a handle needs a handful of its entries.  man_scan reads
 * the document in one pass and indexes "files" by the bytes of its keys.
 * It accepts only what jansson accepts the same way: ASCII text, strings
 * without escapes, numbers of at most 15 digits without an exponent,
 * nesting up to 32 deep, nothing after the value; anything else (an
 * escape, a non-ASCII byte, a syntax error) leaves the document to jansson
 * (json_loadb, as before), so every manifest reads as it did. */
struct man_ent {
    const char *key, *val; /* val NULL: the member is not a string */
    size_t key_len, val_len;
    uint64_t hash;
};

static void set_tampered(vat_corpus *c, const char *rel, const char *what);

struct man_scan {
    const char *p, *end;
    int depth;
    /* the top-level "files" object's members, when it is one */
    const char *files_at;
    struct man_ent *ent;
    size_t n, cap;
    bool in_files;
};

static void ms_ws(struct man_scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* A string without escapes, of printable ASCII bytes. */
static bool ms_string(struct man_scan *s, const char **v, size_t *n)
{
    if (s->p >= s->end || *s->p != '"')
        return false;
    const char *q = ++s->p;
    while (s->p < s->end && *s->p != '"') {
        unsigned char ch = (unsigned char)*s->p;
        if (ch < 0x20 || ch >= 0x80 || ch == '\\')
            return false;
        s->p++;
    }
    if (s->p >= s->end)
        return false;
    *v = q;
    *n = (size_t)(s->p - q);
    s->p++;
    return true;
}

static bool ms_value(struct man_scan *s, bool top, const char **sv, size_t *sn);

static bool ms_number(struct man_scan *s)
{
    const char *q = s->p;
    if (s->p < s->end && *s->p == '-')
        s->p++;
    size_t digits = 0;
    if (s->p < s->end && *s->p == '0') {
        s->p++;
        digits++;
    } else {
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
            s->p++, digits++;
    }
    if (!digits)
        return false;
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        size_t frac = 0;
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
            s->p++, frac++;
        if (!frac)
            return false;
        digits += frac;
    }
    /* an exponent or a long number: jansson's overflow rules decide */
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E'))
        return false;
    return digits <= 15 && s->p > q;
}

static bool ms_object(struct man_scan *s, bool top)
{
    s->p++; /* '{' */
    ms_ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return true;
    }
    for (;;) {
        const char *k, *v = NULL;
        size_t kn, vn = 0;
        ms_ws(s);
        if (!ms_string(s, &k, &kn))
            return false;
        ms_ws(s);
        if (s->p >= s->end || *s->p != ':')
            return false;
        s->p++;
        ms_ws(s);
        bool files = top && kn == 5 && memcmp(k, "files", 5) == 0;
        if (files) {
            /* a later "files" replaces an earlier one, as in jansson */
            s->n = 0;
            s->files_at = NULL;
            if (s->p < s->end && *s->p == '{')
                s->files_at = s->p;
        }
        bool was = s->in_files;
        s->in_files = files && s->files_at;
        bool member_of_files = was && !top;
        if (!ms_value(s, false, &v, &vn))
            return false;
        s->in_files = was;
        if (member_of_files && s->depth == 2) {
            if (s->n == s->cap) {
                s->cap = s->cap ? 2 * s->cap : 1024;
                s->ent = vat_xrealloc(s->ent, s->cap * sizeof *s->ent);
            }
            s->ent[s->n++] = (struct man_ent){k, v, kn, vn, hash_bytes(k, kn)};
        }
        ms_ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == '}') {
            s->p++;
            return true;
        }
        return false;
    }
}

/* One value; *sv and *sn get a string value's bytes (else stay NULL). */
static bool ms_value(struct man_scan *s, bool top, const char **sv, size_t *sn)
{
    if (s->p >= s->end)
        return false;
    switch (*s->p) {
    case '{':
    case '[': {
        if (++s->depth > 32)
            return false;
        bool ok;
        if (*s->p == '{') {
            ok = ms_object(s, top);
        } else {
            bool was = s->in_files;
            s->in_files = false;
            s->p++;
            ms_ws(s);
            ok = true;
            if (s->p < s->end && *s->p == ']') {
                s->p++;
            } else {
                for (;;) {
                    const char *v;
                    size_t vn;
                    ms_ws(s);
                    if (!ms_value(s, false, &v, &vn)) {
                        ok = false;
                        break;
                    }
                    ms_ws(s);
                    if (s->p < s->end && *s->p == ',') {
                        s->p++;
                        continue;
                    }
                    if (s->p < s->end && *s->p == ']') {
                        s->p++;
                        break;
                    }
                    ok = false;
                    break;
                }
            }
            s->in_files = was;
        }
        s->depth--;
        return ok;
    }
    case '"':
        return ms_string(s, sv, sn);
    case 't':
    case 'f':
    case 'n': {
        static const char *const lit[] = {"true", "false", "null"};
        for (int i = 0; i < 3; i++) {
            size_t l = strlen(lit[i]);
            if ((size_t)(s->end - s->p) >= l && memcmp(s->p, lit[i], l) == 0) {
                s->p += l;
                return true;
            }
        }
        return false;
    }
    default:
        return ms_number(s);
    }
}

/* Reads c->man into the index; false leaves it to jansson. */
static bool man_scan(vat_corpus *c)
{
    struct man_scan s = {c->man.data, c->man.data + c->man.n, 0, NULL, NULL, 0, 0, false};
    if (memchr(c->man.data, 0, c->man.n))
        return false;
    ms_ws(&s);
    bool ok = s.p < s.end && *s.p == '{';
    if (ok) {
        const char *v;
        size_t vn;
        ok = ms_value(&s, true, &v, &vn);
    }
    ms_ws(&s);
    if (!ok || s.p != s.end) {
        free(s.ent);
        return false;
    }
    if (!s.files_at) {
        free(s.ent);
        s.ent = NULL;
        s.n = 0;
        set_tampered(c, "out/manifest.json", "cannot be read as a manifest");
    }
    c->man_ent = s.ent;
    c->man_n = s.n;
    c->man_nslot = 16;
    while (c->man_nslot < 2 * s.n)
        c->man_nslot *= 2;
    c->man_slot = vat_xcalloc(c->man_nslot, sizeof *c->man_slot);
    for (size_t k = 0; k < s.n; k++) {
        const struct man_ent *m = &s.ent[k];
        size_t i = (size_t)m->hash & (c->man_nslot - 1);
        for (;; i = (i + 1) & (c->man_nslot - 1)) {
            size_t o = c->man_slot[i];
            if (!o) {
                c->man_slot[i] = k + 1;
                break;
            }
            const struct man_ent *x = &s.ent[o - 1];
            if (x->hash == m->hash && x->key_len == m->key_len &&
                memcmp(x->key, m->key, m->key_len) == 0) {
                c->man_slot[i] = k + 1; /* a repeated key: the last one holds, as in jansson */
                break;
            }
        }
    }
    return true;
}

static const struct man_ent *man_find(const vat_corpus *c, const char *key, size_t n)
{
    if (!c->man_nslot)
        return NULL;
    uint64_t h = hash_bytes(key, n);
    for (size_t i = (size_t)h & (c->man_nslot - 1);; i = (i + 1) & (c->man_nslot - 1)) {
        size_t o = c->man_slot[i];
        if (!o)
            return NULL;
        const struct man_ent *m = &c->man_ent[o - 1];
        if (m->hash == h && m->key_len == n && memcmp(m->key, key, n) == 0)
            return m;
    }
}

/* Marks the corpus tampered (the first reason stays). */
static void set_tampered(vat_corpus *c, const char *rel, const char *what)
{
    pthread_mutex_lock(&c->tamper_lock);
    if (!atomic_load(&c->tampered)) {
        snprintf(c->tamper_msg, sizeof c->tamper_msg, "'%s' %s", rel, what);
        atomic_store_explicit(&c->tampered, 1, memory_order_release);
    }
    pthread_mutex_unlock(&c->tamper_lock);
}

/* The digest out/manifest.json gives path rel (NUL-terminated into
 * out[65]), or NULL when it lists none (or not as a 64-character string,
 * which no file's sha256 then matches: "" is returned). */
static const char *manifest_get(const vat_corpus *c, const char *rel, char out[65])
{
    const char *v = NULL;
    size_t vn = 0;
    if (c->man_json) {
        const json_t *j = json_object_get(c->man_json, rel);
        if (!j)
            return NULL;
        v = json_string_value(j);
        vn = v ? json_string_length(j) : 0;
    } else {
        const struct man_ent *m = man_find(c, rel, strlen(rel));
        if (!m)
            return NULL;
        v = m->val;
        vn = m->val_len;
    }
    if (!v)
        return NULL; /* not a string: not listed */
    if (vn != 64 || memchr(v, 0, vn)) {
        out[0] = 0;
        return out;
    }
    memcpy(out, v, 64);
    out[64] = 0;
    return out;
}

/* Checks file k against the manifest, when there is one. */
static void manifest_check(vat_corpus *c, int k)
{
    if (!c->has_manifest)
        return;
    char buf[65];
    const char *want = manifest_get(c, tfile_rel[k], buf);
    const struct tfile *f = &c->file[k];
    if (!f->present) {
        if (want)
            set_tampered(c, tfile_rel[k], "is listed in out/manifest.json but missing");
        return;
    }
    if (!want) {
        set_tampered(c, tfile_rel[k], "is not listed in out/manifest.json");
        return;
    }
    char hex[65];
    vat_sha256_hex(f->data, f->n, hex);
    if (strcmp(hex, want) != 0)
        set_tampered(c, tfile_rel[k], "does not match the sha256 out/manifest.json records");
}

/* Calls fn(c, line, len) on every non-blank line of file k. */
static void each_line(vat_corpus *c, int k, void (*fn)(vat_corpus *, const char *, size_t))
{
    const struct tfile *f = &c->file[k];
    const char *p = f->data, *end = f->data + f->n;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le > p)
            fn(c, p, (size_t)(le - p));
        p = le + 1;
    }
}

/* The task id of a row: by its bytes, else by parsing the row (the id is
 * then copied into a string kept with the row's parse, freed at close). */
static bool row_task_id(const char *line, size_t len, const char **id, size_t *idlen,
                        json_t **parsed)
{
    *parsed = NULL;
    if (key_string(line, len, "task_id", id, idlen))
        return true;
    json_t *o = json_loadb(line, len, 0, NULL);
    const json_t *j = json_object_get(o, "task_id");
    if (!json_is_string(j)) {
        json_decref(o);
        return false;
    }
    *id = json_string_value(j);
    *idlen = json_string_length(j);
    *parsed = o;
    return true;
}

static void add_verifier_line(vat_corpus *c, const char *line, size_t len)
{
    const char *id;
    size_t idlen;
    json_t *parsed;
    if (!row_task_id(line, len, &id, &idlen, &parsed))
        return;
    if (memchr(id, 0, idlen) || find(c, id, idlen)) {
        /* a task id listed twice (a damaged corpus) keeps its first row */
        json_decref(parsed);
        return;
    }
    struct entry *e = &c->ent[c->n];
    memset(e, 0, sizeof *e);
    e->id = vat_xstrndup(id, idlen); /* NUL-terminated for the callers */
    e->id_len = idlen;
    json_decref(parsed);
    e->hash = hash_bytes(e->id, idlen);
    e->row = line;
    e->row_len = len;
    size_t i = (size_t)e->hash & (c->nslot - 1);
    while (c->slot[i])
        i = (i + 1) & (c->nslot - 1);
    c->slot[i] = ++c->n;
}

static void add_experience_line(vat_corpus *c, const char *line, size_t len)
{
    const char *id;
    size_t idlen;
    json_t *parsed;
    if (!row_task_id(line, len, &id, &idlen, &parsed))
        return;
    struct entry *e = find(c, id, idlen);
    json_decref(parsed);
    if (e && !e->exp_row) {
        e->exp_row = line;
        e->exp_len = len;
    }
}

static void add_rollout_line(vat_corpus *c, const char *line, size_t len)
{
    const char *id, *role;
    size_t idlen, rlen;
    json_t *parsed;
    if (!row_task_id(line, len, &id, &idlen, &parsed))
        return;
    struct entry *e = find(c, id, idlen);
    json_decref(parsed);
    if (!e || !key_string(line, len, "role", &role, &rlen))
        return;
    for (int r = 0; r < N_ROLES; r++)
        if (rlen == strlen(role_names[r]) && memcmp(role, role_names[r], rlen) == 0 &&
            !e->roll_row[r]) {
            e->roll_row[r] = line;
            e->roll_len[r] = len;
        }
}

/* Reads and indexes the experience or rollouts table on first need. */
static void ensure_table(vat_corpus *c, _Atomic int *ready, int k0,
                         void (*fn)(vat_corpus *, const char *, size_t))
{
    if (atomic_load_explicit(ready, memory_order_acquire))
        return;
    pthread_mutex_lock(&c->lock);
    if (!atomic_load_explicit(ready, memory_order_relaxed)) {
        for (int k = k0; k < k0 + 2; k++) {
            char msg[256];
            if (tfile_read(c->root, tfile_rel[k], c->has_manifest, &c->file[k], msg,
                           sizeof msg) != 0) {
                /* unreadable tables: the tasks needing them get no digest / trap */
                c->file[k].present = false;
                continue;
            }
            if (c->file[k].present && vat_is_lfs_pointer(c->file[k].data, c->file[k].n)) {
                set_tampered(c, tfile_rel[k], "is a " VAT_LFS_POINTER);
                continue;
            }
            manifest_check(c, k);
            each_line(c, k, fn);
        }
        atomic_store_explicit(ready, 1, memory_order_release);
    }
    pthread_mutex_unlock(&c->lock);
}

/* ---- the verdict memo and the cache ------------------------------------------------ */

/* In RL loops (GRPO: 8-64 samples per prompt) the same extracted answer
 * recurs for a task; an SQL check of it costs a query per fixture, so its
 * verdict is kept, keyed by the task and the exact answer bytes checked.
 * Only verdicts that are pure functions of (answer bytes, fixtures) are
 * kept (vat_sql_check_prepared_pure says which): never one decided by the
 * CPU-time or memory nets or an internal failure.  A verdict keeps its
 * work count (vat_result_work), which a run would count again.
 *
 * Bounds (docs/limits.md): at most VAT_MEMO_PER_TASK entries per task (the
 * task's least recent goes first), answers of at most VAT_MEMO_MAX_ANSWER
 * bytes (longer ones are checked every time), and the cache's budget in
 * all (see struct memo_shard).  An entry costs memo_cost bytes. */
#define VAT_MEMO_PER_TASK 64
#define VAT_MEMO_MAX_ANSWER 16384

static void state_release(struct task_state *st);

/* Reads a byte count: digits, then optionally k, m or g (KiB, MiB, GiB)
 * with an optional "iB" or "B".  0, or -1 (*out untouched) when s is not
 * one or is 0. */
static int parse_bytes(const char *s, size_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    const char *unit = strchr("kKmMgG", *end);
    if (*end && unit) {
        shift = 10 * (unsigned)(1 + (unit - "kKmMgG") / 2);
        end++;
    }
    if (shift && (end[0] == 'i' || end[0] == 'I') && (end[1] == 'B' || end[1] == 'b'))
        end += 2;
    else if (shift && (end[0] == 'B' || end[0] == 'b'))
        end++;
    if (*end || v == 0 || v > (SIZE_MAX >> shift))
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

/* Sets up the memo and the cache with a budget of `bytes` in all. */
static void cache_init(vat_corpus *c, size_t bytes)
{
    const char *env = getenv("VAT_VERDICT_MEMO");
    c->memo_on = !(env && (strcmp(env, "0") == 0 || strcmp(env, "off") == 0 ||
                           strcmp(env, "no") == 0 || strcmp(env, "false") == 0));
    c->cache_bytes = bytes;
    c->shard_cap = bytes / MEMO_SHARDS;
    c->memo_per_task = VAT_MEMO_PER_TASK;
    c->memo_max_answer = VAT_MEMO_MAX_ANSWER;
    c->memo_shard_bytes = c->shard_cap; /* the memo has no bound of its own */
    for (int k = 0; k < MEMO_SHARDS; k++) {
        pthread_mutex_init(&c->memo[k].lock, NULL);
        pthread_mutex_init(&c->memo[k].build_lock, NULL);
    }
}

static struct memo_shard *memo_shard_of(vat_corpus *c, const struct entry *e)
{
    return &c->memo[(size_t)(e - c->ent) % MEMO_SHARDS];
}

/* The entry, its answer and its place in the task's slot array (with
 * room for the array's slack). */
static size_t memo_cost(const struct memo_ent *m)
{
    return sizeof *m + m->len + 2 * sizeof(struct memo_slot);
}

static void memo_unlink(struct memo_shard *sh, struct memo_ent *m)
{
    struct entry *e = m->task;
    if (m->t_prev)
        m->t_prev->t_next = m->t_next;
    else
        e->memo_head = m->t_next;
    if (m->t_next)
        m->t_next->t_prev = m->t_prev;
    else
        e->memo_tail = m->t_prev;
    e->memo_n--;
    /* the last slot fills the hole */
    e->memo_slots[m->slot] = e->memo_slots[e->memo_n];
    e->memo_slots[m->slot].m->slot = m->slot;
    if (e->memo_n == 0) {
        /* a task's slots go with its last entry (its array is uncounted) */
        free(e->memo_slots);
        e->memo_slots = NULL;
        e->memo_cap = 0;
    }
    if (m->l_prev)
        m->l_prev->l_next = m->l_next;
    else
        sh->lru_head = m->l_next;
    if (m->l_next)
        m->l_next->l_prev = m->l_prev;
    else
        sh->lru_tail = m->l_prev;
    sh->bytes -= memo_cost(m);
    sh->entries--;
}

static void memo_push_front(struct memo_shard *sh, struct memo_ent *m)
{
    struct entry *e = m->task;
    m->t_prev = NULL;
    m->t_next = e->memo_head;
    if (e->memo_head)
        e->memo_head->t_prev = m;
    else
        e->memo_tail = m;
    e->memo_head = m;
    if (e->memo_n == e->memo_cap) {
        e->memo_cap = e->memo_cap ? 2 * e->memo_cap : 8;
        e->memo_slots = vat_xrealloc(e->memo_slots, e->memo_cap * sizeof *e->memo_slots);
    }
    m->slot = e->memo_n;
    e->memo_slots[e->memo_n++] = (struct memo_slot){m->hash, m};
    m->l_prev = NULL;
    m->l_next = sh->lru_head;
    if (sh->lru_head)
        sh->lru_head->l_prev = m;
    else
        sh->lru_tail = m;
    sh->lru_head = m;
    m->used = ++sh->tick;
    sh->bytes += memo_cost(m);
    sh->entries++;
}

/* Makes m the most recent in both its lists (its slot stays). */
static void memo_touch(struct memo_shard *sh, struct memo_ent *m)
{
    struct entry *e = m->task;
    if (m->t_prev) {
        m->t_prev->t_next = m->t_next;
        if (m->t_next)
            m->t_next->t_prev = m->t_prev;
        else
            e->memo_tail = m->t_prev;
        m->t_prev = NULL;
        m->t_next = e->memo_head;
        e->memo_head->t_prev = m;
        e->memo_head = m;
    }
    if (m->l_prev) {
        m->l_prev->l_next = m->l_next;
        if (m->l_next)
            m->l_next->l_prev = m->l_prev;
        else
            sh->lru_tail = m->l_prev;
        m->l_prev = NULL;
        m->l_next = sh->lru_head;
        sh->lru_head->l_prev = m;
        sh->lru_head = m;
    }
    m->used = ++sh->tick;
}

static void st_unlink(struct memo_shard *sh, struct task_state *st)
{
    if (st->prev)
        st->prev->next = st->next;
    else
        sh->st_head = st->next;
    if (st->next)
        st->next->prev = st->prev;
    else
        sh->st_tail = st->prev;
    st->prev = st->next = NULL;
}

static void st_push_front(struct memo_shard *sh, struct task_state *st)
{
    st->prev = NULL;
    st->next = sh->st_head;
    if (sh->st_head)
        sh->st_head->prev = st;
    else
        sh->st_tail = st;
    sh->st_head = st;
    st->used = ++sh->tick;
}

/* Lets go of a state the shard holds: off its list and its task, its
 * bytes uncounted; chained on *dropped (through next) for the caller to
 * release once the lock is let go. */
static void st_drop(struct memo_shard *sh, struct task_state *st, struct task_state **dropped)
{
    st_unlink(sh, st);
    st->held = false;
    st->task->st = NULL;
    sh->st_bytes -= atomic_load_explicit(&st->charged, memory_order_relaxed);
    sh->st_entries--;
    sh->evictions++;
    st->next = *dropped;
    *dropped = st;
}

/* Evicts the shard's least recently used entry, memo entry or state
 * (but never keep, the state the caller is about to publish).  Under the
 * shard's lock; false when there is nothing to evict. */
static bool shard_evict_one(struct memo_shard *sh, const struct task_state *keep,
                            struct task_state **dropped)
{
    struct memo_ent *m = sh->lru_tail;
    struct task_state *st = sh->st_tail;
    if (st == keep && st)
        st = st->prev;
    if (!m && !st)
        return false;
    if (m && (!st || m->used < st->used)) {
        memo_unlink(sh, m);
        free(m);
        sh->evictions++;
    } else {
        st_drop(sh, st, dropped);
    }
    return true;
}

/* Makes room for need more bytes in the shard, evicting least recently
 * used first; false (having evicted what it could) when they cannot fit. */
static bool shard_fit(vat_corpus *c, struct memo_shard *sh, size_t need,
                      const struct task_state *keep, struct task_state **dropped)
{
    if (need > c->shard_cap)
        return false;
    while (sh->bytes + sh->st_bytes + need > c->shard_cap)
        if (!shard_evict_one(sh, keep, dropped))
            return false;
    return true;
}

static void shard_note_peak(struct memo_shard *sh)
{
    if (sh->bytes + sh->st_bytes > sh->peak)
        sh->peak = sh->bytes + sh->st_bytes;
}

static void states_release(struct task_state *dropped)
{
    for (struct task_state *st = dropped, *next; st; st = next) {
        next = st->next;
        state_release(st);
    }
}

/* The task's entry for answer (a, n) or NULL; called under the lock. */
static struct memo_ent *memo_find(struct entry *e, uint64_t h, const char *a, size_t n)
{
    for (size_t i = 0; i < e->memo_n; i++) {
        struct memo_ent *m = e->memo_slots[i].m;
        if (e->memo_slots[i].hash == h && m->len == n && memcmp(m->ans, a, n) == 0)
            return m;
    }
    return NULL;
}

/* Copies the memoized verdict of (a, n) for task e into *v and *is_trap;
 * true on a hit. */
static bool memo_get(vat_corpus *c, struct entry *e, uint64_t h, const char *a, size_t n,
                     struct vat_verdict *v, bool *is_trap, long long *work)
{
    struct memo_shard *sh = memo_shard_of(c, e);
    pthread_mutex_lock(&sh->lock);
    struct memo_ent *m = memo_find(e, h, a, n);
    if (m) {
        *v = m->v;
        *is_trap = m->is_trap;
        *work = m->work;
        memo_touch(sh, m);
    }
    pthread_mutex_unlock(&sh->lock);
    atomic_fetch_add_explicit(m ? &c->memo_hits : &c->memo_misses, 1, memory_order_relaxed);
    return m != NULL;
}

static void memo_put(vat_corpus *c, struct entry *e, uint64_t h, const char *a, size_t n,
                     const struct vat_verdict *v, bool is_trap, long long work)
{
    if (n > c->memo_max_answer || !c->memo_per_task)
        return;
    struct memo_ent *m = vat_xmalloc(sizeof *m + n);
    m->task = e;
    m->hash = h;
    m->len = n;
    m->v = *v;
    m->is_trap = is_trap;
    m->work = work;
    if (n)
        memcpy(m->ans, a, n);
    struct memo_shard *sh = memo_shard_of(c, e);
    if (memo_cost(m) > c->memo_shard_bytes || memo_cost(m) > c->shard_cap) {
        free(m);
        return;
    }
    struct task_state *dropped = NULL;
    pthread_mutex_lock(&sh->lock);
    if (memo_find(e, h, a, n)) {
        /* another thread checked the same answer meanwhile */
        pthread_mutex_unlock(&sh->lock);
        free(m);
        return;
    }
    while (e->memo_n >= c->memo_per_task) {
        struct memo_ent *old = e->memo_tail;
        memo_unlink(sh, old);
        free(old);
    }
    while (sh->lru_tail && sh->bytes + memo_cost(m) > c->memo_shard_bytes) {
        struct memo_ent *old = sh->lru_tail;
        memo_unlink(sh, old);
        free(old);
    }
    if (shard_fit(c, sh, memo_cost(m), NULL, &dropped)) {
        memo_push_front(sh, m);
        shard_note_peak(sh);
        m = NULL;
    }
    pthread_mutex_unlock(&sh->lock);
    free(m);
    states_release(dropped);
}

/* Frees every memo entry (the states go with their tasks at close). */
static void memo_release(vat_corpus *c)
{
    for (int k = 0; k < MEMO_SHARDS; k++) {
        struct memo_shard *sh = &c->memo[k];
        for (struct memo_ent *m = sh->lru_head, *next; m; m = next) {
            next = m->l_next;
            free(m);
        }
        sh->lru_head = sh->lru_tail = NULL;
        sh->bytes = sh->entries = 0;
        pthread_mutex_destroy(&sh->lock);
        pthread_mutex_destroy(&sh->build_lock);
    }
    for (size_t i = 0; c->ent && i < c->n; i++) {
        free(c->ent[i].memo_slots);
        c->ent[i].memo_slots = NULL;
    }
}

void vat_corpus_memo_limits(vat_corpus *c, size_t per_task, size_t total_bytes,
                            size_t max_answer)
{
    if (!c)
        return;
    for (int k = 0; k < MEMO_SHARDS; k++)
        pthread_mutex_lock(&c->memo[k].lock);
    c->memo_per_task = per_task;
    c->memo_shard_bytes = total_bytes / MEMO_SHARDS;
    c->memo_max_answer = max_answer;
    /* drop what the new bounds no longer hold */
    for (size_t i = 0; i < c->n; i++) {
        struct entry *e = &c->ent[i];
        struct memo_shard *sh = memo_shard_of(c, e);
        while (e->memo_n > per_task) {
            struct memo_ent *old = e->memo_tail;
            memo_unlink(sh, old);
            free(old);
        }
    }
    for (int k = 0; k < MEMO_SHARDS; k++) {
        struct memo_shard *sh = &c->memo[k];
        while (sh->lru_tail && sh->bytes > c->memo_shard_bytes) {
            struct memo_ent *old = sh->lru_tail;
            memo_unlink(sh, old);
            free(old);
        }
        pthread_mutex_unlock(&sh->lock);
    }
}

void vat_corpus_memo_stats(vat_corpus *c, struct vat_memo_stats *s)
{
    memset(s, 0, sizeof *s);
    if (!c)
        return;
    s->enabled = c->memo_on;
    for (int k = 0; k < MEMO_SHARDS; k++) {
        pthread_mutex_lock(&c->memo[k].lock);
        s->entries += c->memo[k].entries;
        s->bytes += c->memo[k].bytes;
        pthread_mutex_unlock(&c->memo[k].lock);
    }
    size_t cap = c->memo_shard_bytes < c->shard_cap ? c->memo_shard_bytes : c->shard_cap;
    s->bytes_cap = cap * MEMO_SHARDS;
    s->per_task = c->memo_per_task;
    s->hits = atomic_load(&c->memo_hits);
    s->misses = atomic_load(&c->memo_misses);
}

void vat_corpus_cache_stats(vat_corpus *c, struct vat_cache_stats *s)
{
    memset(s, 0, sizeof *s);
    if (!c)
        return;
    s->budget = c->cache_bytes;
    for (int k = 0; k < MEMO_SHARDS; k++) {
        struct memo_shard *sh = &c->memo[k];
        pthread_mutex_lock(&sh->lock);
        s->bytes += sh->bytes + sh->st_bytes;
        s->memo_bytes += sh->bytes;
        s->memo_entries += sh->entries;
        s->states += sh->st_entries;
        s->peak += sh->peak;
        s->evictions += sh->evictions;
        pthread_mutex_unlock(&sh->lock);
    }
    s->state_builds = atomic_load(&c->state_builds);
    s->env_builds = atomic_load(&c->env_builds);
}

/* ---- opening and closing ------------------------------------------------------ */

static int fail(vat_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(vat_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int vat_corpus_open(vat_corpus **out, const char *root, vat_error *err)
{
    return vat_corpus_open_opts(out, root, NULL, err);
}

int vat_corpus_open_flags(vat_corpus **out, const char *root, unsigned flags, vat_error *err)
{
    vat_open_options o = VAT_OPEN_OPTIONS_INIT;
    o.flags = flags;
    return vat_corpus_open_opts(out, root, &o, err);
}

int vat_corpus_open_opts(vat_corpus **out, const char *root, const vat_open_options *opts,
                         vat_error *err)
{
    if (!out)
        return fail(err, "vat_corpus_open: %s", "no handle to fill");
    *out = NULL;
    if (!root || !*root)
        return fail(err, "vat_corpus_open: %s", "no corpus root given");
    /* a caller built against an older header passes a shorter struct: the
     * members it does not have keep their defaults */
    size_t budget = 0;
    if (opts && opts->size >= offsetof(vat_open_options, cache_bytes) + sizeof opts->cache_bytes)
        budget = opts->cache_bytes;
    else if (opts && opts->size < sizeof opts->size)
        return fail(err, "vat_corpus_open: %s", "options not set up (VAT_OPEN_OPTIONS_INIT)");
    unsigned flags = 0;
    if (opts && opts->size >= offsetof(vat_open_options, flags) + sizeof opts->flags)
        flags = opts->flags;
    if (flags & ~(unsigned)VAT_OPEN_REVEAL_HIDDEN)
        return fail(err, "vat_corpus_open: %s", "unknown flags");
    if (!budget) {
        const char *env = getenv("VAT_CACHE_BYTES");
        budget = VAT_CACHE_DEFAULT_BYTES;
        if (env && *env && parse_bytes(env, &budget) != 0)
            return fail(err, "vat: VAT_CACHE_BYTES '%.40s' is not a byte count (e.g. 268435456, 256M or 1G)",
                        env);
    }
    vat_corpus *c = vat_xcalloc(1, sizeof *c);
    c->root = vat_xstrdup(root);
    c->reveal = flags & VAT_OPEN_REVEAL_HIDDEN;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->tamper_lock, NULL);
    cache_init(c, budget);
    char msg[256];
    /* The manifest first: a table that is a symbolic link (a Hugging Face
     * cache snapshot) is read only when the manifest gives its digest,
     * which the bytes read must have (manifest_check).  The manifest may
     * be a link itself. */
    if (tfile_read(root, "out/manifest.json", true, &c->man, msg, sizeof msg) != 0) {
        vat_corpus_close(c);
        return fail(err, "vat: corpus '%s': %s", root, msg);
    }
    c->has_manifest = c->man.present;
    int present = 0;
    for (int k = T_VER_TRAIN; k <= T_VER_TEST; k++) {
        if (tfile_read(root, tfile_rel[k], c->has_manifest, &c->file[k], msg, sizeof msg) != 0) {
            vat_corpus_close(c);
            return fail(err, "vat: corpus '%s': %s", root, msg);
        }
        if (c->file[k].present && vat_is_lfs_pointer(c->file[k].data, c->file[k].n)) {
            vat_corpus_close(c);
            return fail(err, "vat: corpus '%s': '%s' is a " VAT_LFS_POINTER, root, tfile_rel[k]);
        }
        present += c->file[k].present;
    }
    if (!present) {
        vat_corpus_close(c);
        return fail(err, "vat: no corpus at '%s' (out/verifiers/*.jsonl missing; run 'vat build')",
                    root);
    }
    if (c->man.present && !man_scan(c)) {
        json_t *m = json_loadb(c->man.data, c->man.n, 0, NULL);
        json_t *files = json_object_get(m, "files");
        if (json_is_object(files)) {
            c->man_json = json_incref(files);
        } else {
            c->man_json = json_object(); /* lists nothing: every file mismatches */
            set_tampered(c, "out/manifest.json", "cannot be read as a manifest");
        }
        json_decref(m);
    }
    /* Lines bound the task count: size the table for them. */
    size_t lines = 0;
    for (int k = T_VER_TRAIN; k <= T_VER_TEST; k++)
        for (const char *p = c->file[k].data, *end = p + c->file[k].n;
             p && (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
            lines++;
    lines += 2;
    c->ent = vat_xcalloc(lines, sizeof *c->ent);
    c->nslot = 16;
    while (c->nslot < 2 * lines)
        c->nslot *= 2;
    c->slot = vat_xcalloc(c->nslot, sizeof *c->slot);
    for (int k = T_VER_TRAIN; k <= T_VER_TEST; k++) {
        manifest_check(c, k);
        each_line(c, k, add_verifier_line);
    }
    *out = c;
    return 0;
}

static void state_free(struct task_state *st)
{
    if (!st)
        return;
    json_decref(st->spec);
    vat_sql_prep_free(st->prep);
    json_decref(st->trap_spec);
    vat_value_prep_free(st->value);
    vat_value_prep_free(st->trap_value);
    vat_abstain_prep_free(st->abstain);
    vat_rx_prep_free(st->rx_prep);
    vat_rx_prep_free(st->trap_rx);
    vat_rx_cache_free(st->rx);
    struct vat_task_env *env = atomic_load_explicit(&st->env, memory_order_acquire);
    if (env)
        env->free(env);
    free(st);
}

void vat_corpus_close(vat_corpus *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        struct entry *e = &c->ent[i];
        /* no score runs now; an episode still open keeps its state (and
         * frees it when it closes: a state needs nothing of the handle) */
        state_release(e->st);
        json_decref(atomic_load(&e->row_json));
        json_decref(atomic_load(&e->exp_json));
        for (int r = 0; r < N_ROLES; r++)
            free(atomic_load(&e->roll_answer[r]));
        free((char *)e->id);
    }
    for (int k = 0; k < N_TFILES; k++)
        tfile_release(&c->file[k]);
    memo_release(c);
    free(c->ent);
    free(c->slot);
    json_decref(c->man_json);
    tfile_release(&c->man);
    free(c->man_ent);
    free(c->man_slot);
    if (c->ext_free)
        c->ext_free(atomic_load(&c->ext));
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->tamper_lock);
    free(c->root);
    free(c);
}

size_t vat_corpus_cache_budget(const vat_corpus *c)
{
    return c ? c->cache_bytes : 0;
}

size_t vat_corpus_size(const vat_corpus *c)
{
    return c ? c->n : 0;
}

int vat_corpus_has_task(const vat_corpus *c, const char *task_id)
{
    return task_id && find(c, task_id, strlen(task_id)) ? 1 : 0;
}

size_t vat_corpus_task_count(const vat_corpus *c)
{
    return c ? c->n : 0;
}

const char *vat_corpus_task_id(const vat_corpus *c, size_t i)
{
    return c && i < c->n ? c->ent[i].id : NULL;
}

static const char *nz(const char *s)
{
    return s ? s : "";
}

/* ---- a task's state, built on its first use ---------------------------------- */

/* The task's verifiers row parsed (a new reference), or NULL when it does
 * not parse as the row of that task. */
static json_t *row_parse(const struct entry *e)
{
    json_t *row = json_loadb(e->row, e->row_len, 0, NULL);
    const char *id = json_string_value(json_object_get(row, "task_id"));
    /* the index found the row by its bytes; the parse must agree */
    if (json_is_object(row) && id && strcmp(id, e->id) == 0)
        return row;
    json_decref(row);
    return NULL;
}

const json_t *vat_corpus_row(vat_corpus *c, const char *task_id)
{
    struct entry *e = task_id ? find(c, task_id, strlen(task_id)) : NULL;
    if (!e)
        return NULL;
    /* kept for the life of the handle (the tools hold it): scoring does
     * not keep rows, only what it builds from them (task_state) */
    json_t *row = atomic_load_explicit(&e->row_json, memory_order_acquire);
    if (row)
        return json_object_size(row) ? row : NULL;
    pthread_mutex_lock(&c->lock);
    row = atomic_load_explicit(&e->row_json, memory_order_relaxed);
    if (!row) {
        row = row_parse(e);
        if (!row)
            row = json_object(); /* no usable row: an empty one, parsed once */
        atomic_store_explicit(&e->row_json, row, memory_order_release);
    }
    pthread_mutex_unlock(&c->lock);
    return json_object_size(row) ? row : NULL;
}

/* The task's experience row parsed (a new reference), or NULL. */
static json_t *experience_parse(vat_corpus *c, const struct entry *e)
{
    ensure_table(c, &c->exp_ready, T_EXP_TRAIN, add_experience_line);
    if (!e->exp_row)
        return NULL;
    json_t *j = json_loadb(e->exp_row, e->exp_len, 0, NULL);
    if (!json_is_object(j) ||
        strcmp(nz(json_string_value(json_object_get(j, "task_id"))), e->id) != 0) {
        json_decref(j);
        return NULL;
    }
    return j;
}

static const json_t *experience_json(vat_corpus *c, struct entry *e)
{
    json_t *j = atomic_load_explicit(&e->exp_json, memory_order_acquire);
    if (j)
        return j;
    json_t *parsed = experience_parse(c, e);
    pthread_mutex_lock(&c->lock);
    j = atomic_load_explicit(&e->exp_json, memory_order_relaxed);
    if (!j) {
        /* no usable row: an empty one, parsed once */
        j = parsed ? parsed : json_object();
        parsed = NULL;
        atomic_store_explicit(&e->exp_json, j, memory_order_release);
    }
    pthread_mutex_unlock(&c->lock);
    json_decref(parsed);
    return j;
}

json_t *vat_corpus_experience_parse(vat_corpus *c, const char *task_id)
{
    struct entry *e = task_id ? find(c, task_id, strlen(task_id)) : NULL;
    return e ? experience_parse(c, e) : NULL;
}

const json_t *vat_corpus_experience_row(vat_corpus *c, const char *task_id)
{
    struct entry *e = task_id ? find(c, task_id, strlen(task_id)) : NULL;
    const json_t *j = e ? experience_json(c, e) : NULL;
    return j && json_object_size(j) ? j : NULL;
}

/* The answer of the task's rollout of that role, as a new string, or NULL. */
static char *rollout_dup(vat_corpus *c, const struct entry *e, int role)
{
    ensure_table(c, &c->roll_ready, T_ROLL_TRAIN, add_rollout_line);
    if (!e->roll_row[role])
        return NULL;
    json_t *j = json_loadb(e->roll_row[role], e->roll_len[role], 0, NULL);
    const json_t *ans = json_object_get(j, "answer");
    const char *id = json_string_value(json_object_get(j, "task_id"));
    char *a = id && strcmp(id, e->id) == 0 && json_is_string(ans)
                  ? vat_xstrndup(json_string_value(ans), json_string_length(ans))
                  : NULL;
    json_decref(j);
    return a;
}

static const char *rollout_answer(vat_corpus *c, struct entry *e, int role)
{
    char *a = atomic_load_explicit(&e->roll_answer[role], memory_order_acquire);
    if (a)
        return a;
    char *made = rollout_dup(c, e, role);
    if (!made)
        return NULL;
    pthread_mutex_lock(&c->lock);
    a = atomic_load_explicit(&e->roll_answer[role], memory_order_relaxed);
    if (!a) {
        a = made;
        made = NULL;
        atomic_store_explicit(&e->roll_answer[role], a, memory_order_release);
    }
    pthread_mutex_unlock(&c->lock);
    free(made);
    return a;
}

const char *vat_corpus_rollout_answer(vat_corpus *c, const char *task_id, const char *role)
{
    struct entry *e = task_id ? find(c, task_id, strlen(task_id)) : NULL;
    for (int r = 0; e && role && r < N_ROLES; r++)
        if (strcmp(role, role_names[r]) == 0)
            return rollout_answer(c, e, r);
    return NULL;
}

/* The sha256 the experience row records for fixture path rel, or NULL. */
static const char *fixture_sha(const json_t *exp, const char *rel)
{
    const json_t *f = json_object_get(exp, "fixture");
    if (rel && strcmp(nz(json_string_value(json_object_get(f, "path"))), rel) == 0)
        return json_string_value(json_object_get(f, "sha256"));
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(exp, "variants"), i, x) {
        if (rel && strcmp(nz(json_string_value(json_object_get(x, "path"))), rel) == 0)
            return json_string_value(json_object_get(x, "sha256"));
    }
    return NULL;
}

/* The prepared SQL check of a task into st: fixtures verified and held,
 * gold and trap rows computed (NULL with st->prep_v set when it cannot be
 * built). */
static void sql_prep_build(vat_corpus *c, struct entry *e, struct task_state *st,
                           const char *trap)
{
    /* The fixtures' digests: out/manifest.json lists every fixture file
     * with its sha256 (the experience tables, 60 MB on a corpus of 10,000
     * tasks, are verified against the same manifest), so they come from
     * there; the experience row gives those the manifest does not list
     * (or every one, when the corpus has no manifest). */
    const json_t *fx = json_object_get(st->spec, "fixtures");
    size_t n = json_array_size(fx);
    char(*man_sha)[65] = vat_xcalloc(n ? n : 1, sizeof *man_sha);
    const char **sha = vat_xcalloc(n ? n : 1, sizeof *sha);
    bool need_exp = false;
    for (size_t i = 0; i < n; i++) {
        const char *rel = json_string_value(json_array_get(fx, i));
        sha[i] = c->has_manifest && rel ? manifest_get(c, rel, man_sha[i]) : NULL;
        need_exp |= !sha[i];
    }
    json_t *exp = need_exp ? experience_parse(c, e) : NULL;
    for (size_t i = 0; i < n; i++)
        if (!sha[i])
            sha[i] = fixture_sha(exp, json_string_value(json_array_get(fx, i)));
    st->prep = vat_sql_prepare(st->spec, c->root, sha, trap, trap ? strlen(trap) : 0,
                               &st->prep_v);
    json_decref(exp);
    free(sha);
    free(man_sha);
}

/* What an answer must score 1.0 against to be the trap (value, abstain and
 * regex tasks): the spec with the trap's value, or the trap's extraction
 * on every case, as the expected answer. */
static void trap_build(struct task_state *st, const char *trap)
{
    if (!trap || !st->spec)
        return;
    size_t tlen = strlen(trap);
    if (st->kind == K_VALUE || st->kind == K_ABSTAIN) {
        json_t *tv = json_loadb(trap, tlen, JSON_DECODE_ANY, NULL);
        if (tv && st->kind == K_ABSTAIN && json_equal(tv, json_object_get(st->spec, "abstention"))) {
            st->trap_abstains = true;
        } else if (tv) {
            st->trap_spec = json_deep_copy(st->spec);
            json_object_set(st->trap_spec, "expected", tv);
            if (st->kind == K_ABSTAIN)
                json_object_set_new(st->trap_spec, "answerable", json_true());
            else
                st->trap_value = vat_value_prepare(st->trap_spec);
        }
        json_decref(tv);
    } else if (st->kind == K_REGEX) {
        json_t *ts = json_deep_copy(st->spec);
        size_t i;
        json_t *cs;
        json_array_foreach(json_object_get(ts, "cases"), i, cs) {
            struct vat_verdict v;
            const char *text = json_string_value(json_object_get(cs, "text"));
            json_t *got = vat_regex_extract(st->spec, trap, tlen, text ? text : "", &v);
            if (!got) {
                json_decref(ts);
                ts = NULL;
                break;
            }
            json_object_set_new(cs, "expected", got);
        }
        st->trap_spec = ts;
        if (ts)
            st->trap_rx = vat_rx_prepare(ts, st->rx);
    }
}

/* About the bytes jansson holds for j: each value's struct and the
 * allocator's header, an object's table and members, strings' bytes.  An
 * estimate (jansson does not say), on the high side. */
static size_t json_bytes(const json_t *j)
{
    size_t n = 0, i;
    const char *key;
    json_t *x;
    if (!j)
        return 0;
    switch (json_typeof(j)) {
    case JSON_OBJECT:
        n = 64 + 32 * json_object_size(j);
        json_object_foreach((json_t *)j, key, x) {
            n += 72 + strlen(key) + json_bytes(x);
        }
        return n;
    case JSON_ARRAY:
        n = 56 + 16 * json_array_size(j);
        json_array_foreach(j, i, x) {
            n += json_bytes(x);
        }
        return n;
    case JSON_STRING:
        return 64 + json_string_length(j);
    case JSON_INTEGER:
    case JSON_REAL:
        return 40;
    default:
        return 0; /* true, false and null are shared */
    }
}

/* The bytes st holds now: what was built with it (its spec and trap, and
 * the prepared checks made from them, estimated as the JSON they read
 * again) and what grows as it is used (compiled regexes, the SQL check's
 * fixtures and pooled sandboxes, measured; the episodes' environment, as
 * lib/env.c measures it). */
static size_t state_bytes(const struct task_state *st)
{
    struct vat_task_env *env = atomic_load_explicit(&st->env, memory_order_acquire);
    return st->fixed + vat_rx_cache_bytes(st->rx) + vat_sql_prep_bytes(st->prep) +
           (env ? env->bytes(env) : 0);
}

/* Builds the state of task e from its verifiers row (and its trap from the
 * rollouts table, its fixtures for SQL). */
static struct task_state *state_build(vat_corpus *c, struct entry *e)
{
    struct task_state *st = vat_xcalloc(1, sizeof *st);
    st->task = e;
    atomic_fetch_add_explicit(&c->state_builds, 1, memory_order_relaxed);
    json_t *row = atomic_load_explicit(&e->row_json, memory_order_acquire);
    json_t *parsed = row && json_object_size(row) ? NULL : row_parse(e);
    if (row && json_object_size(row))
        st->spec = vat_verifier_spec(row);
    else if (parsed)
        st->spec = vat_verifier_spec(parsed);
    json_decref(parsed);
    const char *k = st->spec ? json_string_value(json_object_get(st->spec, "checker")) : NULL;
    static const struct {
        const char *name;
        enum kind kind;
    } kinds[] = {{"value", K_VALUE}, {"regex", K_REGEX}, {"sql", K_SQL}, {"abstain", K_ABSTAIN}};
    for (size_t i = 0; k && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(k, kinds[i].name) == 0) {
            st->kind = kinds[i].kind;
            st->kind_name = kinds[i].name;
        }
    if (st->kind == K_VALUE)
        st->value = vat_value_prepare(st->spec);
    else if (st->kind == K_ABSTAIN)
        st->abstain = vat_abstain_prepare(st->spec);
    else if (st->kind == K_REGEX) {
        st->rx = vat_rx_cache_new();
        st->rx_prep = vat_rx_prepare(st->spec, st->rx);
    }
    char *trap = st->kind_name ? rollout_dup(c, e, ROLE_TRAP) : NULL;
    if (st->kind == K_SQL)
        sql_prep_build(c, e, st, trap);
    else
        trap_build(st, trap);
    st->fixed = sizeof *st + (trap ? strlen(trap) : 0) + 2 * json_bytes(st->spec) +
                2 * json_bytes(st->trap_spec);
    free(trap);
    atomic_store_explicit(&st->charged, state_bytes(st), memory_order_relaxed);
    return st;
}

static void state_release(struct task_state *st)
{
    if (st && atomic_fetch_sub_explicit(&st->refs, 1, memory_order_acq_rel) == 1)
        state_free(st);
}

/* Task e's state with a reference taken for the caller, made the shard's
 * most recent, or NULL when the cache does not hold it. */
static struct task_state *state_lookup(struct memo_shard *sh, struct entry *e)
{
    pthread_mutex_lock(&sh->lock);
    struct task_state *st = e->st;
    if (st) {
        atomic_fetch_add_explicit(&st->refs, 1, memory_order_relaxed);
        if (st->prev) {
            st_unlink(sh, st);
            st_push_front(sh, st);
        } else {
            st->used = ++sh->tick;
        }
    }
    pthread_mutex_unlock(&sh->lock);
    return st;
}

/* Task e's state with a reference taken for the caller (state_release):
 * the one the cache holds, or one built now and handed to the cache when
 * it fits in the budget (else it lives only as long as the caller's
 * reference).  States are built under the shard's build lock, so threads
 * scoring the same new task build it once. */
static struct task_state *state_acquire(vat_corpus *c, struct entry *e)
{
    struct memo_shard *sh = memo_shard_of(c, e);
    struct task_state *st = state_lookup(sh, e);
    if (st)
        return st;
    struct task_state *dropped = NULL;
    pthread_mutex_lock(&sh->build_lock);
    st = state_lookup(sh, e); /* built by another thread meanwhile */
    if (!st) {
        st = state_build(c, e);
        atomic_store_explicit(&st->refs, 1, memory_order_relaxed);
        size_t cost = atomic_load_explicit(&st->charged, memory_order_relaxed);
        pthread_mutex_lock(&sh->lock);
        if (shard_fit(c, sh, cost, NULL, &dropped)) {
            atomic_fetch_add_explicit(&st->refs, 1, memory_order_relaxed); /* the cache's */
            st->held = true;
            e->st = st;
            st_push_front(sh, st);
            sh->st_bytes += cost;
            sh->st_entries++;
            shard_note_peak(sh);
        }
        pthread_mutex_unlock(&sh->lock);
    }
    pthread_mutex_unlock(&sh->build_lock);
    states_release(dropped);
    return st;
}

/* Counts st's bytes again after a check (its prepared checks' caches may
 * have grown or shrunk), making room for growth least recently used first
 * and letting st itself go when it no longer fits.  A state is charged its
 * most bytes so far, unless it has shrunk to half of that: a pool's
 * statements come and go with every new answer, and counting each small
 * swing would take the shard's lock after every check. */
static void state_recharge(vat_corpus *c, struct entry *e, struct task_state *st)
{
    size_t now = state_bytes(st), was = atomic_load_explicit(&st->charged, memory_order_relaxed);
    if (now <= was && now >= was / 2)
        return;
    struct memo_shard *sh = memo_shard_of(c, e);
    struct task_state *dropped = NULL;
    pthread_mutex_lock(&sh->lock);
    if (st->held) {
        sh->st_bytes -= atomic_load_explicit(&st->charged, memory_order_relaxed);
        sh->st_bytes += now;
        atomic_store_explicit(&st->charged, now, memory_order_relaxed);
        if (!shard_fit(c, sh, 0, st, &dropped))
            st_drop(sh, st, &dropped);
        shard_note_peak(sh);
    } else {
        /* counted nowhere (and never held again): no lock until it grows */
        atomic_store_explicit(&st->charged, now, memory_order_relaxed);
    }
    pthread_mutex_unlock(&sh->lock);
    states_release(dropped);
}

static bool is_trap(vat_corpus *c, struct entry *e, struct task_state *st,
                    const struct vat_verdict *v, const char *ans, size_t len)
{
    if (st->trap_abstains)
        return strcmp(v->code, VAT_ABSTAINED) == 0;
    if (!st->trap_spec)
        return false;
    /* the trap spec's cases are the task's, so its compiles are the same */
    struct vat_verdict t = st->trap_value ? vat_check_value_prepared(st->trap_value, ans, len)
                         : st->trap_rx ? vat_check_regex_prepared(st->trap_rx, ans, len)
                                  : vat_check_spec(st->trap_spec, c->root, e->id, ans, len);
    return t.gate_passed && t.score == 1.0;
}

/* ---- scoring -------------------------------------------------------------------- */

void vat_scored_release(struct vat_scored *s)
{
    if (!s)
        return;
    free(s->extracted);
    s->extracted = NULL;
}

/* Where score_core copies the extracted answer: it asks for n + 1 bytes
 * once it knows n.  The internal call gives a string of its own, the
 * public one the tail of the result it allocates then (one allocation per
 * score). */
struct text_sink {
    char *(*get)(struct text_sink *k, size_t n);
    struct vat_scored *out;
    struct vat_result *r; /* vat_corpus_score's result, once allocated */
};

static char *text_copy(struct text_sink *k, const char *t, size_t n)
{
    char *d = k->get(k, n);
    if (n)
        memcpy(d, t, n);
    d[n] = 0;
    k->out->extracted = d;
    k->out->extracted_len = n;
    return d;
}

/* Scores completion with task e's state st into *k->out. */
static void score_state(vat_corpus *c, struct entry *e, struct task_state *st,
                        const char *completion, size_t len, vat_extract_mode mode,
                        struct text_sink *k)
{
    struct vat_scored *out;
    if (atomic_load_explicit(&c->tampered, memory_order_acquire)) {
        text_copy(k, "", 0);
        out = k->out;
        out->v = vat_verdict_make(false, 0, VAT_TAMPERED, "the corpus is tampered: %s",
                                  c->tamper_msg);
        return;
    }
    if (!st->kind_name) {
        text_copy(k, "", 0);
        out = k->out;
        out->v = vat_verdict_make(false, 0, VAT_INTERNAL,
                                  "task '%s' has no usable checker spec in its verifiers row",
                                  e->id);
        return;
    }
    struct vat_extraction x;
    if (vat_extract(st->kind_name, completion, len, (int)mode, &x) != 0) {
        text_copy(k, "", 0);
        out = k->out;
        out->v = vat_verdict_make(false, 0, VAT_COMPLETION_TOO_LARGE,
                                  "the completion is %zu bytes, over the %u-byte limit", len,
                                  (unsigned)VAT_MAX_COMPLETION_BYTES);
        return;
    }
    /* the checkers see a NUL-terminated copy: the caller's text need not be */
    char *ans = k->get(k, x.len);
    size_t alen = vat_extract_write(&x, ans);
    ans[alen] = 0;
    out = k->out;
    out->extracted = ans;
    out->extracted_len = alen;
    out->rule = x.rule;
    if (strcmp(x.rule, "none") == 0) {
        out->v = vat_verdict_make(false, 0, VAT_NO_ANSWER, "%s",
                                  vat_extract_looked_for(st->kind_name));
        return;
    }
    if (st->kind == K_SQL) {
        struct vat_sql_prep *p = st->prep;
        if (!p) {
            out->v = st->prep_v;
            return;
        }
        if (!c->memo_on || alen > c->memo_max_answer) {
            out->v = vat_sql_check_prepared_as(p, ans, alen, &out->is_trap, NULL, c->reveal);
            out->work = vat_sql_last_work();
            return;
        }
        uint64_t h = hash_bytes(ans, alen);
        if (memo_get(c, e, h, ans, alen, &out->v, &out->is_trap, &out->work))
            return;
        bool pure;
        out->v = vat_sql_check_prepared_as(p, ans, alen, &out->is_trap, &pure, c->reveal);
        out->work = vat_sql_last_work();
        if (pure)
            memo_put(c, e, h, ans, alen, &out->v, out->is_trap, out->work);
        return;
    }
    /* the same verifiers vat_check_spec dispatches to, with the task's
     * prepared state (ans is never NULL here) */
    if (st->value)
        out->v = vat_check_value_prepared(st->value, ans, alen);
    else if (st->abstain)
        out->v = vat_check_abstain_prepared(st->abstain, ans, alen);
    else if (st->rx_prep)
        out->v = vat_check_regex_prepared_as(st->rx_prep, ans, alen, c->reveal);
    else
        out->v = vat_check_spec_as(st->spec, c->root, e->id, ans, alen, c->reveal);
    if (out->v.score < 1.0 && strcmp(out->v.code, VAT_INTERNAL) != 0)
        out->is_trap = is_trap(c, e, st, &out->v, ans, alen);
}

/* Scores completion with st, a state the caller holds, into *k->out. */
static void score_held(vat_corpus *c, struct task_state *st, const char *completion, size_t len,
                       vat_extract_mode mode, struct text_sink *k)
{
    score_state(c, st->task, st, completion ? completion : "", len, mode, k);
    /* a check may have grown what the state holds (a pooled sandbox, a
     * compiled pattern): counted again, and room made */
    state_recharge(c, st->task, st);
}

/* Scores completion for task_id into *k->out, whose extracted text comes
 * from k. */
static int score_core(vat_corpus *c, const char *task_id, const char *completion, size_t len,
                      vat_extract_mode mode, struct text_sink *k, vat_error *err)
{
    if (!c || !task_id)
        return fail(err, "vat_corpus_score: %s", "no corpus or no task id");
    if (!completion && len)
        return fail(err, "vat_corpus_score: %s", "no completion text");
    if (mode != VAT_EXTRACT_RAW && mode != VAT_EXTRACT_AUTO)
        return fail(err, "vat_corpus_score: %s", "unknown extraction mode");
    struct entry *e = find(c, task_id, strlen(task_id));
    if (!e) {
        char shown[120];
        snprintf(shown, sizeof shown, "%.100s", task_id);
        return fail(err, "vat: no task '%s' in the corpus at '%s'", shown, c->root);
    }
    struct task_state *st = state_acquire(c, e);
    score_held(c, st, completion, len, mode, k);
    state_release(st);
    return 0;
}

static char *scored_text(struct text_sink *k, size_t n)
{
    (void)k;
    return vat_xmalloc(n + 1);
}

int vat_corpus_score_verdict(vat_corpus *c, const char *task_id, const char *completion,
                             size_t len, vat_extract_mode mode, struct vat_scored *out,
                             vat_error *err)
{
    if (!out)
        return fail(err, "vat_corpus_score: %s", "no result to fill");
    memset(out, 0, sizeof *out);
    out->rule = "raw";
    struct text_sink k = {scored_text, out, NULL};
    if (score_core(c, task_id, completion, len, mode, &k, err) != 0) {
        vat_scored_release(out);
        return -1;
    }
    return 0;
}

/* ---- the public result -------------------------------------------------------- */

/* One allocation: the verdict, then the extracted answer's bytes (s.extracted
 * points at text). */
struct vat_result {
    struct vat_scored s;
    char text[];
};

/* Allocates the result once the extracted answer's length is known and
 * moves the verdict built so far into it. */
static char *result_text(struct text_sink *k, size_t n)
{
    struct vat_result *r = vat_xmalloc(sizeof *r + n + 1);
    r->s = *k->out;
    k->out = &r->s;
    k->r = r;
    return r->text;
}

int vat_corpus_score(vat_corpus *c, const char *task_id, const char *completion, size_t len,
                     vat_extract_mode mode, vat_result **out, vat_error *err)
{
    if (!out)
        return fail(err, "vat_corpus_score: %s", "no result to fill");
    *out = NULL;
    struct vat_scored pre;
    memset(&pre, 0, sizeof pre);
    pre.rule = "raw";
    struct text_sink k = {result_text, &pre, NULL};
    if (score_core(c, task_id, completion, len, mode, &k, err) != 0) {
        free(k.r);
        return -1;
    }
    *out = k.r;
    return 0;
}

int vat_result_gate_passed(const vat_result *r)
{
    return r && r->s.v.gate_passed;
}

double vat_result_score(const vat_result *r)
{
    return r ? r->s.v.score : 0.0;
}

const char *vat_result_code(const vat_result *r)
{
    return r && r->s.v.code ? r->s.v.code : "";
}

const char *vat_result_reason(const vat_result *r)
{
    return r ? r->s.v.reason : "";
}

const char *vat_result_extracted(const vat_result *r, size_t *len)
{
    if (len)
        *len = r ? r->s.extracted_len : 0;
    return r && r->s.extracted ? r->s.extracted : "";
}

const char *vat_result_extract_rule(const vat_result *r)
{
    return r && r->s.rule ? r->s.rule : "raw";
}

int vat_result_is_trap(const vat_result *r)
{
    return r && r->s.is_trap;
}

long long vat_result_work(const vat_result *r)
{
    return r ? r->s.work : 0;
}

void vat_result_free(vat_result *r)
{
    free(r); /* its text is part of it */
}

/* ---- what lib/env.c needs of the handle ------------------------------------------ */

const char *vat_corpus_root(const vat_corpus *c)
{
    return c ? c->root : "";
}

int vat_corpus_manifest_digest(vat_corpus *c, const char *rel, char out[65])
{
    if (!c || !c->has_manifest)
        return -1;
    return manifest_get(c, rel, out) ? 1 : 0;
}

void vat_corpus_set_tampered(vat_corpus *c, const char *rel, const char *what)
{
    if (c)
        set_tampered(c, rel, what);
}

bool vat_corpus_tampered(vat_corpus *c, char *msg, size_t cap)
{
    if (!c || !atomic_load_explicit(&c->tampered, memory_order_acquire))
        return false;
    if (msg && cap) {
        pthread_mutex_lock(&c->tamper_lock);
        snprintf(msg, cap, "%s", c->tamper_msg);
        pthread_mutex_unlock(&c->tamper_lock);
    }
    return true;
}

void *vat_corpus_ext(vat_corpus *c, void *(*make)(vat_corpus *), void (*free_fn)(void *))
{
    void *x = atomic_load_explicit(&c->ext, memory_order_acquire);
    if (x)
        return x;
    /* made outside the lock: make reads tables through calls that take it */
    void *made = make(c);
    pthread_mutex_lock(&c->lock);
    x = atomic_load_explicit(&c->ext, memory_order_relaxed);
    if (!x) {
        c->ext_free = free_fn;
        atomic_store_explicit(&c->ext, made, memory_order_release);
        x = made;
        made = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (made)
        free_fn(made);
    return x;
}

/* A held task state, as lib/env.c sees it (the same object). */
static struct task_state *held_state(struct vat_task_ref *t)
{
    return (struct task_state *)(void *)t;
}

struct vat_task_ref *vat_corpus_task_acquire(vat_corpus *c, const char *task_id)
{
    struct entry *e = c && task_id ? find(c, task_id, strlen(task_id)) : NULL;
    return e ? (struct vat_task_ref *)(void *)state_acquire(c, e) : NULL;
}

void vat_corpus_task_release(struct vat_task_ref *t)
{
    state_release(held_state(t));
}

struct vat_task_env *vat_corpus_task_env(vat_corpus *c, struct vat_task_ref *t,
                                         struct vat_task_env *(*make)(vat_corpus *,
                                                                      const json_t *, void *),
                                         void *arg)
{
    struct task_state *st = held_state(t);
    struct vat_task_env *env = atomic_load_explicit(&st->env, memory_order_acquire);
    if (env)
        return env;
    /* made under the shard's build lock, as states are, so threads opening
     * episodes on the same task make it once */
    struct memo_shard *sh = memo_shard_of(c, st->task);
    pthread_mutex_lock(&sh->build_lock);
    env = atomic_load_explicit(&st->env, memory_order_acquire);
    if (!env) {
        env = make(c, st->spec, arg);
        atomic_fetch_add_explicit(&c->env_builds, 1, memory_order_relaxed);
        atomic_store_explicit(&st->env, env, memory_order_release);
    }
    pthread_mutex_unlock(&sh->build_lock);
    state_recharge(c, st->task, st); /* counted, and room made */
    return env;
}

void vat_corpus_task_recharge(vat_corpus *c, struct vat_task_ref *t)
{
    struct task_state *st = held_state(t);
    state_recharge(c, st->task, st);
}

void vat_corpus_task_score(vat_corpus *c, struct vat_task_ref *t, const char *completion,
                           size_t len, vat_extract_mode mode, struct vat_scored *out)
{
    memset(out, 0, sizeof *out);
    out->rule = "raw";
    struct text_sink k = {scored_text, out, NULL};
    score_held(c, held_state(t), completion, len, mode, &k);
}

const char *vat_version(void)
{
    return VAT_VERSION;
}

/* regex.c — the regex checker.  An untrusted answer is a pattern in Python
 * `re` syntax (as Python 3.11 reads a str pattern).  It is parsed the way
 * Python's re parser reads it and rewritten into a PCRE2 pattern that
 * means the same thing (verifiers/rxparse.c, the Python-re parser);
 * PCRE-only syntax is refused at the gate.  The
 * result is compiled once per call (or taken from a task's cache of
 * compiled patterns, see vat_rx_prepare) and run over every case with match,
 * depth and heap limits (the match limit derived from a budget over the
 * whole scan, see RX_DEFAULT_SCAN_BUDGET), extracting what Python's
 * [m.group(0) for m in re.finditer(p, s)] would.
 * Exports vat_check_regex, vat_rx_prepare / vat_check_regex_prepared (a
 * spec read once, with the compiled-pattern cache vat_rx_cache_*) and
 * vat_regex_extract.
 *
 * Why a full parse rather than a few textual substitutions: a rewrite
 * that does not know where an escape, a class or a verbose-mode comment
 * starts rewrites the wrong bytes.  The parser follows re/_parser.py
 * token for token (so Python's own errors come out with its wording), and
 * the emitted pattern spells every literal as an escape, so PCRE2 never
 * reads a Python literal as its own syntax (POSIX classes, \Q..\E, {,n},
 * verbs).  Verbose mode, comments and group names are resolved here;
 * PCRE2 sees numbered groups and no 'x' flag.
 *
 * Modes.  Held-out strings are ASCII, and so are nearly all patterns: the
 * pattern is then compiled without PCRE2_UTF, where PCRE2's \d \w \b mean
 * exactly what Python's do on ASCII text.  Only when the pattern holds a
 * code point >= 0x80 or a subject holds a non-ASCII byte is it compiled
 * with PCRE2_UTF | PCRE2_UCP, which approximates Python's Unicode classes
 * (\d = Nd, \w = letters, digits and _) without claiming to be exact.
 *
 * Refused although Python 3.11 accepts them: atomic groups and possessive
 * quantifiers (new in 3.11, so an answer using them is not portable),
 * \N{name}, group names outside ASCII, repeat minimums above 65535, the
 * deprecated 't' flag.  Known differences left to PCRE2 (found by
 * differential fuzzing against Python, all far from real answers):
 * lookbehinds whose body repeats something zero-width fail to compile; a
 * bounded repeat of a group that can match empty may split a match where
 * Python does not ((?:#?|2){0,2} on "2#": Python "", "2#", ""; here "",
 * "2", "#", ""). */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcre2.h>
#include <pthread.h>

#include "reason.h"
#include "rxparse.h"
#include "verifiers.h"

/* Subjects longer than this are refused: with it, a repeat maximum above
 * PCRE2's 65535 can be read as unbounded without changing any result. */
#define RX_MAX_SUBJECT 65535
/* Matches per subject: enough for any task, a bound for hostile patterns. */
#define RX_MAX_MATCHES 10000
/* JIT compiling costs about 100 us, three to five times a whole
 * interpreted check of a typical task (25 lines of 100 bytes); it pays
 * only when there is this much text to search.  The choice depends on
 * the spec alone, so a verdict never depends on the machine's load. */
#define RX_JIT_MIN_SUBJECT (16 * 1024)
#define RX_JIT_STACK_MIN (32 * 1024)
#define RX_JIT_STACK_MAX (512 * 1024)

#define RX_DEFAULT_MATCH_LIMIT 1000000
/* The whole-scan budget: match() calls of the PCRE2 interpreter over every
 * match attempt of every case of one check.  PCRE2's match limit counts
 * per start position, so a pattern costing the full limit at each of the
 * 2,500 positions of a case ran 2.5 billion steps (6 s) and still passed.
 * The scan can make at most 2 * (bytes + 1) attempts per case (each start
 * position once, and once more after an empty match there), so each
 * attempt gets the budget divided by that bound (never below
 * RX_MIN_ATTEMPT_LIMIT, never above the spec's match_limit): the whole
 * check then stays within the budget, counted by the interpreter, whatever
 * the machine.  The spec may set "scan_budget" to change it. */
#define RX_DEFAULT_SCAN_BUDGET 20000000
#define RX_MIN_ATTEMPT_LIMIT 200
#define RX_DEFAULT_DEPTH_LIMIT 10000
#define RX_DEFAULT_HEAP_KIB 20000
#define RX_DEFAULT_MAX_PATTERN 1024

/* Reason budget: pieces are clipped so that all of them fit in 256. */
#define RX_QUOTE_TEXT 60
#define RX_REASON_SPANS 8
#define RX_QUOTE_LIST 68

/* ---- limits from the spec ----------------------------------------------- */

struct rx_limits {
    uint32_t scan_budget;
    uint32_t match_limit;
    uint32_t depth_limit;
    uint32_t heap_kib;
    size_t max_pattern;
};

/* Reads an optional positive integer member; returns 0, or -1 with *v set. */
static int limit_get(const json_t *spec, const char *key, uint32_t def, uint32_t *out,
                     struct vat_verdict *v)
{
    const json_t *j = spec ? json_object_get(spec, key) : NULL;
    if (!j) {
        *out = def;
        return 0;
    }
    if (!json_is_integer(j) || json_integer_value(j) < 1 ||
        json_integer_value(j) > (json_int_t)UINT32_MAX) {
        *v = vat_verdict_make(false, 0, VAT_INTERNAL,
                              "regex spec member '%s' is not a positive integer", key);
        return -1;
    }
    *out = (uint32_t)json_integer_value(j);
    return 0;
}

static int limits_read(const json_t *spec, struct rx_limits *l, struct vat_verdict *v)
{
    uint32_t maxpat;
    if (spec && !json_is_object(spec)) {
        *v = vat_verdict_make(false, 0, VAT_INTERNAL, "regex spec is not an object");
        return -1;
    }
    const char *dialect = spec ? json_string_value(json_object_get(spec, "dialect")) : NULL;
    if (spec && json_object_get(spec, "dialect") && (!dialect || strcmp(dialect, "python-re"))) {
        *v = vat_verdict_make(false, 0, VAT_INTERNAL,
                              "regex spec dialect is not 'python-re'");
        return -1;
    }
    if (limit_get(spec, "scan_budget", RX_DEFAULT_SCAN_BUDGET, &l->scan_budget, v) ||
        limit_get(spec, "match_limit", RX_DEFAULT_MATCH_LIMIT, &l->match_limit, v) ||
        limit_get(spec, "depth_limit", RX_DEFAULT_DEPTH_LIMIT, &l->depth_limit, v) ||
        limit_get(spec, "heap_limit_kib", RX_DEFAULT_HEAP_KIB, &l->heap_kib, v) ||
        limit_get(spec, "max_pattern_bytes", RX_DEFAULT_MAX_PATTERN, &maxpat, v))
        return -1;
    l->max_pattern = maxpat;
    return 0;
}

static bool all_ascii(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80)
            return false;
    return true;
}

/* ---- compile and match -------------------------------------------------- */

struct rx_cached;

struct rx_prog {
    pcre2_general_context *gctx;
    pcre2_code *code;
    struct rx_cached *shared; /* code belongs to this cache entry */
    struct vat_rx_cache *cache;
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    pcre2_jit_stack *jstack;
    bool jit;
    bool utf;
    bool fast; /* code is the cache entry's JIT copy (see rx_cached) */
};

static void cache_release(struct vat_rx_cache *c, struct rx_cached *e);

static void prog_free(struct rx_prog *p)
{
    pcre2_match_data_free(p->md);
    pcre2_match_context_free(p->mctx);
    pcre2_jit_stack_free(p->jstack);
    if (p->shared)
        cache_release(p->cache, p->shared);
    else
        pcre2_code_free(p->code);
    pcre2_general_context_free(p->gctx);
    memset(p, 0, sizeof *p);
}

/* ---- the compiled-pattern cache ------------------------------------------ */

/* Entries per cache: enough for the few distinct answers a task sees
 * repeated (gold, trap, a model's favourite spellings); the oldest goes. */
#define RX_CACHE_SLOTS 16

/* One compiled pattern: the translation and compile (and JIT) of pat under
 * utf_in / jit_in, which are all that the compile depends on (the limits
 * live in the per-call match context).  Freed when evicted and unused.
 *
 * A pattern a task sees again runs JIT-compiled, exactly: the limits are
 * defined by the interpreter's counts, which the JIT does not keep, so the
 * JIT may run only where the interpreter is known to stay within every
 * limit.  A prepared check that scanned its cases with the interpreter and
 * met no limit (or other pcre2 error) records the cases it scanned
 * (clean_key, a fingerprint of the prepared spec's subjects and limits):
 * the interpreter is deterministic, so on those subjects under those
 * limits it would meet none again, and the JIT, which finds the same
 * matches (PCRE2 guarantees it), gives the same spans and so the same
 * verdict.  The next check of the pattern under that key compiles a JIT
 * copy (jcode; code itself is shared by checks running now and must not
 * change) and later ones run it.  A JIT run that reports a limit of its
 * own still goes to the interpreter (prog_scan). */
struct rx_cached {
    char *pat;
    size_t len;
    bool utf_in, jit_in; /* the key beside the text */
    bool utf, jit;       /* what the compile settled on */
    pcre2_code *code;
    unsigned refs;       /* checks using code now */
    bool evicted;
    unsigned long used;  /* tick of the last hit, for eviction */
    uint64_t clean_key;  /* 0: no interpreted scan met no limit yet */
    pcre2_code *jcode;   /* the JIT copy, once compiled */
    bool jit_failed;     /* pcre2_jit_compile refused it: never again */
    size_t bytes;        /* what it holds (code_bytes), counted in its cache */
};

/* JIT copies per cache (per task): each holds executable memory, so only
 * the first few repeated patterns of a task get one. */
#define RX_CACHE_JIT 4

struct vat_rx_cache {
    pthread_mutex_t lock;
    struct rx_cached *slot[RX_CACHE_SLOTS];
    unsigned long tick;
    unsigned n_jit; /* entries in slot[] holding a JIT copy */
    _Atomic size_t bytes; /* the entries in slot[]: vat_rx_cache_bytes */
};

/* What a compiled pattern holds: its code and, once compiled, its JIT
 * code, as PCRE2 reports them. */
static size_t code_bytes(const pcre2_code *code)
{
    size_t n = 0, jit = 0;
    if (!code)
        return 0;
    pcre2_pattern_info(code, PCRE2_INFO_SIZE, &n);
    pcre2_pattern_info(code, PCRE2_INFO_JITSIZE, &jit);
    return n + jit;
}

size_t vat_rx_cache_bytes(const struct vat_rx_cache *c)
{
    return c ? sizeof *c + atomic_load_explicit(&c->bytes, memory_order_relaxed) : 0;
}

struct vat_rx_cache *vat_rx_cache_new(void)
{
    struct vat_rx_cache *c = vat_xcalloc(1, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void cached_free(struct rx_cached *e)
{
    pcre2_code_free(e->jcode);
    pcre2_code_free(e->code);
    free(e->pat);
    free(e);
}

void vat_rx_cache_free(struct vat_rx_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < RX_CACHE_SLOTS; i++)
        if (c->slot[i])
            cached_free(c->slot[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* The entry for this key with a reference taken, or NULL.  Under c->lock. */
static struct rx_cached *cache_find(struct vat_rx_cache *c, const char *pat, size_t len,
                                    bool utf_in, bool jit_in)
{
    for (size_t i = 0; i < RX_CACHE_SLOTS; i++) {
        struct rx_cached *e = c->slot[i];
        if (e && e->len == len && e->utf_in == utf_in && e->jit_in == jit_in &&
            memcmp(e->pat, pat, len) == 0) {
            e->refs++;
            e->used = ++c->tick;
            return e;
        }
    }
    return NULL;
}

/* cache_find under the lock; *jcode is the entry's JIT copy when its
 * interpreted scan was clean under key (see rx_cached), else NULL, and
 * *want_jit says the caller should compile that copy now. */
static struct rx_cached *cache_lookup(struct vat_rx_cache *c, const char *pat, size_t len,
                                      bool utf_in, bool jit_in, uint64_t key,
                                      pcre2_code **jcode, bool *want_jit)
{
    pthread_mutex_lock(&c->lock);
    struct rx_cached *e = cache_find(c, pat, len, utf_in, jit_in);
    bool clean = e && key && e->clean_key == key && !e->jit;
    *jcode = clean ? e->jcode : NULL;
    *want_jit = clean && !e->jcode && !e->jit_failed && c->n_jit < RX_CACHE_JIT;
    pthread_mutex_unlock(&c->lock);
    return e;
}

/* Compiles the JIT copy of e's code (outside the lock: it takes about
 * 100 us) and publishes it; returns it, or NULL when it cannot be made. */
static pcre2_code *cache_jit(struct vat_rx_cache *c, struct rx_cached *e)
{
    pcre2_code *j = pcre2_code_copy(e->code);
    bool ok = j && pcre2_jit_compile(j, PCRE2_JIT_COMPLETE) == 0;
    pthread_mutex_lock(&c->lock);
    if (!ok) {
        e->jit_failed = true;
        pcre2_code_free(j);
        j = NULL;
    } else if (e->jcode || e->evicted || c->n_jit >= RX_CACHE_JIT) {
        /* another thread was first, or the entry or the room is gone */
        pcre2_code_free(j);
        j = e->jcode;
    } else {
        e->jcode = j;
        c->n_jit++;
        size_t jb = code_bytes(j);
        e->bytes += jb;
        atomic_fetch_add_explicit(&c->bytes, jb, memory_order_relaxed);
    }
    pthread_mutex_unlock(&c->lock);
    return j;
}

/* Records that the interpreter scanned e's pattern under key meeting no
 * limit (the first key to do so stays). */
static void cache_mark_clean(struct vat_rx_cache *c, struct rx_cached *e, uint64_t key)
{
    pthread_mutex_lock(&c->lock);
    if (!e->clean_key)
        e->clean_key = key;
    pthread_mutex_unlock(&c->lock);
}

/* Hands p's freshly compiled code to the cache (p then holds a reference);
 * when another thread compiled the same key meanwhile, p uses that one. */
static void cache_insert(struct vat_rx_cache *c, struct rx_prog *p, const char *pat, size_t len,
                         bool utf_in, bool jit_in)
{
    pthread_mutex_lock(&c->lock);
    struct rx_cached *e = cache_find(c, pat, len, utf_in, jit_in);
    if (e) {
        pcre2_code_free(p->code);
    } else {
        e = vat_xcalloc(1, sizeof *e);
        e->pat = vat_xmalloc(len);
        memcpy(e->pat, pat, len);
        e->len = len;
        e->utf_in = utf_in;
        e->jit_in = jit_in;
        e->utf = p->utf;
        e->jit = p->jit;
        e->code = p->code;
        e->refs = 1;
        e->used = ++c->tick;
        e->bytes = sizeof *e + len + code_bytes(e->code);
        atomic_fetch_add_explicit(&c->bytes, e->bytes, memory_order_relaxed);
        size_t at = 0;
        for (size_t i = 0; i < RX_CACHE_SLOTS; i++) {
            if (!c->slot[i]) {
                at = i;
                break;
            }
            if (c->slot[i]->used < c->slot[at]->used)
                at = i;
        }
        struct rx_cached *old = c->slot[at];
        c->slot[at] = e;
        if (old) {
            old->evicted = true;
            atomic_fetch_sub_explicit(&c->bytes, old->bytes, memory_order_relaxed);
            if (old->jcode)
                c->n_jit--;
            if (old->refs == 0)
                cached_free(old);
        }
    }
    p->code = e->code;
    p->utf = e->utf;
    p->jit = e->jit;
    p->shared = e;
    p->cache = c;
    pthread_mutex_unlock(&c->lock);
}

static void cache_release(struct vat_rx_cache *c, struct rx_cached *e)
{
    pthread_mutex_lock(&c->lock);
    if (--e->refs == 0 && e->evicted)
        cached_free(e);
    pthread_mutex_unlock(&c->lock);
}

/* PCRE2 allocates through these, so running out of memory ends the
 * process as everywhere else in vat instead of surfacing as NULL contexts
 * (the heap limit keeps matching itself far below that). */
static void *rx_alloc(PCRE2_SIZE n, void *data)
{
    (void)data;
    return vat_xmalloc(n);
}

static void rx_free(void *ptr, void *data)
{
    (void)data;
    free(ptr);
}

/* The per-attempt match limit that keeps a scan of at most attempts
 * match attempts within the whole-scan budget. */
static uint32_t attempt_limit(const struct rx_limits *lim, size_t attempts)
{
    uint64_t per = attempts ? lim->scan_budget / attempts : lim->scan_budget;
    if (per < RX_MIN_ATTEMPT_LIMIT)
        per = RX_MIN_ATTEMPT_LIMIT;
    return per < lim->match_limit ? (uint32_t)per : lim->match_limit;
}

/* Translates and compiles pat into p->code (p->gctx set), JIT-compiled
 * when jit_in.  Returns 0, or -1 with *v the gate verdict. */
static int prog_compile(struct rx_prog *p, const char *pat, size_t len, bool utf_subjects,
                        bool jit_in, struct vat_verdict *v)
{
    struct rx_tr t;
    bool utf = utf_subjects;
    int rc = vat_rx_translate(&t, pat, len, utf);
    if (rc && t.restart && !utf) {
        vat_rx_translation_release(&t);
        utf = true;
        rc = vat_rx_translate(&t, pat, len, utf);
    }
    if (rc) {
        *v = vat_verdict_make(false, 0, t.code ? t.code : VAT_INTERNAL, "%s",
                              t.code ? t.msg : "pattern translation failed");
        vat_rx_translation_release(&t);
        return -1;
    }

    int err;
    PCRE2_SIZE erroff;
    pcre2_compile_context *cctx = pcre2_compile_context_create(p->gctx);
    pcre2_set_max_pattern_length(cctx, RX_MAX_OUT);
    pcre2_set_newline(cctx, PCRE2_NEWLINE_LF);
    pcre2_set_parens_nest_limit(cctx, 2 * RX_MAX_NEST + 16);
    /* ALT_CIRCUMFLEX: Python's multiline ^ also matches after a final
     * newline, PCRE2's does not by default. */
    uint32_t opts = PCRE2_ALT_CIRCUMFLEX | PCRE2_NEVER_BACKSLASH_C;
    if (utf)
        opts |= PCRE2_UTF | PCRE2_UCP;
    p->utf = utf;
    const char *tp = t.out.data ? t.out.data : "";
    p->code = pcre2_compile((PCRE2_SPTR)tp, t.out.len, opts, &err, &erroff, cctx);
    pcre2_compile_context_free(cctx);
    vat_rx_translation_release(&t);
    if (!p->code) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(err, msg, sizeof msg);
        *v = vat_verdict_make(false, 0, VAT_REGEX_COMPILE,
                              "pattern does not compile: %s (offset %zu of the translated "
                              "pattern)",
                              (const char *)msg, (size_t)erroff);
        return -1;
    }
    if (jit_in && pcre2_jit_compile(p->code, PCRE2_JIT_COMPLETE) == 0)
        p->jit = true;
    return 0;
}

/* Gates the answer, translates and compiles it (or takes the compiled
 * pattern from cache, when given).  utf_subjects says some
 * subject is not ASCII; subject_bytes is the length of all of them, and
 * attempts the most match attempts the scan of them can make.
 * Returns 0, or -1 with *v the gate verdict. */
static int prog_build(struct rx_prog *p, const struct rx_limits *lim, const char *pat,
                      size_t len, bool utf_subjects, size_t subject_bytes, size_t attempts,
                      struct vat_rx_cache *cache, uint64_t key, struct vat_verdict *v)
{
    memset(p, 0, sizeof *p);
    if (!pat) {
        *v = vat_verdict_make(false, 0, VAT_PARSE, "no pattern given");
        return -1;
    }
    if (len == 0) {
        *v = vat_verdict_make(false, 0, VAT_PARSE, "empty pattern");
        return -1;
    }
    if (len > lim->max_pattern) {
        *v = vat_verdict_make(false, 0, VAT_TOO_LARGE, "pattern is %zu bytes; the limit is %zu",
                              len, lim->max_pattern);
        return -1;
    }
    if (memchr(pat, 0, len)) {
        *v = vat_verdict_make(false, 0, VAT_PARSE, "pattern contains a NUL byte");
        return -1;
    }
    size_t bad = vat_utf8_prefix(pat, len);
    if (bad < len) {
        *v = vat_verdict_make(false, 0, VAT_PARSE, "pattern is not valid UTF-8 at byte %zu", bad);
        return -1;
    }

    bool jit_in = subject_bytes >= RX_JIT_MIN_SUBJECT;
    p->gctx = pcre2_general_context_create(rx_alloc, rx_free, NULL);
    pcre2_code *jcode = NULL;
    bool want_jit = false;
    struct rx_cached *hit =
        cache ? cache_lookup(cache, pat, len, utf_subjects, jit_in, key, &jcode, &want_jit) : NULL;
    if (hit) {
        if (want_jit)
            jcode = cache_jit(cache, hit);
        p->code = jcode ? jcode : hit->code;
        p->utf = hit->utf;
        p->jit = hit->jit;
        p->fast = jcode != NULL;
        p->shared = hit;
        p->cache = cache;
    } else if (prog_compile(p, pat, len, utf_subjects, jit_in, v) < 0) {
        prog_free(p);
        return -1;
    } else if (cache) {
        cache_insert(cache, p, pat, len, utf_subjects, jit_in);
    }
    p->mctx = pcre2_match_context_create(p->gctx);
    pcre2_set_match_limit(p->mctx, attempt_limit(lim, attempts));
    pcre2_set_depth_limit(p->mctx, lim->depth_limit);
    pcre2_set_heap_limit(p->mctx, lim->heap_kib);
    if (p->jit) {
        /* Without its own stack the JIT uses 32 KiB of the machine stack
         * (enough for the short subjects a fast program scans: one that
         * is not falls back to the interpreter, see prog_scan). */
        p->jstack = pcre2_jit_stack_create(RX_JIT_STACK_MIN, RX_JIT_STACK_MAX, p->gctx);
        if (p->jstack)
            pcre2_jit_stack_assign(p->mctx, NULL, p->jstack);
    }
    p->md = pcre2_match_data_create_from_pattern(p->code, p->gctx);
    return 0;
}

/* Status of one subject's scan beyond the pcre2 error codes. */
#define RX_OVER_CAP 1

/* Python's re.finditer over s[0..n): spans of group 0 into spans[2*k],
 * spans[2*k+1], at most cap of them.  Returns 0 (*count set), RX_OVER_CAP
 * when a cap+1-th match exists, or a negative pcre2 error. */
static int prog_scan(struct rx_prog *p, const char *s, size_t n, size_t cap, size_t *spans,
                     size_t *count)
{
    size_t pos = 0;
    uint32_t opts = 0;
    *count = 0;
    for (;;) {
        int rc = pcre2_match(p->code, (PCRE2_SPTR)s, n, pos, opts, p->md, p->mctx);
        if ((p->jit && (rc == PCRE2_ERROR_JIT_STACKLIMIT || rc == PCRE2_ERROR_MATCHLIMIT ||
                        rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT)) ||
            (p->fast && rc < 0 && rc != PCRE2_ERROR_NOMATCH))
            /* The JIT counts its limits its own way (and has a fixed
             * stack): when it reports one, the interpreter, whose counts
             * the limits are defined by, decides (for a fast program,
             * whatever the JIT reports beside a match or none). */
            rc = pcre2_match(p->code, (PCRE2_SPTR)s, n, pos, opts | PCRE2_NO_JIT, p->md,
                             p->mctx);
        if (rc == PCRE2_ERROR_NOMATCH)
            return 0;
        if (rc < 0)
            return rc;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(p->md);
        if (ov[0] > ov[1] || ov[1] > n) /* cannot happen without \K */
            return PCRE2_ERROR_INTERNAL;
        if (*count == cap)
            return RX_OVER_CAP;
        spans[2 * *count] = ov[0];
        spans[2 * *count + 1] = ov[1];
        ++*count;
        /* Python 3.7+: after an empty match the next one may start at the
         * same place but must not be empty there; after a non-empty match
         * an empty one right at its end is fine. */
        opts = ov[0] == ov[1] ? PCRE2_NOTEMPTY_ATSTART : 0;
        /* The first call checked the subject's UTF-8; match ends lie on
         * character boundaries. */
        if (p->utf)
            opts |= PCRE2_NO_UTF_CHECK;
        pos = ov[1];
    }
}

/* Verdict for a scan that failed with rc on the case described by what. */
static struct vat_verdict scan_failure(int rc, const char *what, size_t cap)
{
    PCRE2_UCHAR msg[160];
    if (rc == RX_OVER_CAP)
        return vat_verdict_make(true, 0, VAT_REGEX_LIMIT, "%s: more than %zu matches", what, cap);
    pcre2_get_error_message(rc, msg, sizeof msg);
    switch (rc) {
    case PCRE2_ERROR_MATCHLIMIT:
    case PCRE2_ERROR_DEPTHLIMIT:
    case PCRE2_ERROR_HEAPLIMIT:
    case PCRE2_ERROR_JIT_STACKLIMIT:
    case PCRE2_ERROR_NOMEMORY:
        return vat_verdict_make(true, 0, VAT_REGEX_LIMIT, "%s: %s", what, (const char *)msg);
    default:
        if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21)
            return vat_verdict_make(false, 0, VAT_INTERNAL, "%s: text is not valid UTF-8", what);
        return vat_verdict_make(true, 0, VAT_REGEX_LIMIT, "%s: matching failed: %s", what,
                                (const char *)msg);
    }
}

/* ---- reasons ------------------------------------------------------------ */

/* A list of strings (json array, or spans of subject) in at most max bytes. */
static void quote_list(struct vat_reason *r, const json_t *arr, const char *subj,
                       const size_t *spans, size_t count, size_t max)
{
    size_t start = r->n;
    vat_reason_puts(r, "[");
    for (size_t i = 0; i < count; i++) {
        const char *s;
        size_t n;
        if (arr) {
            const json_t *e = json_array_get(arr, i);
            s = json_string_value(e);
            n = json_string_length(e);
        } else {
            s = subj + spans[2 * i];
            n = spans[2 * i + 1] - spans[2 * i];
        }
        size_t used = r->n - start;
        if (used + 8 > max) {
            vat_reason_puts(r, "...");
            break;
        }
        if (i)
            vat_reason_puts(r, ",");
        vat_reason_quote_ascii(r, s, n, max - used - 2 > 40 ? 40 : max - used - 2);
    }
    vat_reason_puts(r, "]");
}

/* The clipped view of a case's text: a window around offset at. */
static void quote_window(struct vat_reason *r, const char *s, size_t n, size_t at, size_t max)
{
    size_t keep = max - 6; /* the quote clips again if escapes widen it */
    if (n <= keep) {
        vat_reason_quote_ascii(r, s, n, max);
        return;
    }
    size_t from = at > keep / 3 ? at - keep / 3 : 0;
    if (from + keep > n)
        from = n - keep;
    if (from)
        vat_reason_puts(r, "...");
    vat_reason_quote_ascii(r, s + from, from + keep < n ? keep : n - from, max);
    if (from + keep < n)
        vat_reason_puts(r, "...");
}

/* ---- the checker -------------------------------------------------------- */

/* Validates the spec's cases; returns the array or NULL with *v set. */
static const json_t *cases_get(const json_t *spec, bool *utf, size_t *bytes,
                               struct vat_verdict *v)
{
    const json_t *cases = json_object_get(spec, "cases");
    size_t i;
    const json_t *c;
    *utf = false;
    *bytes = 0;
    if (!json_is_array(cases) || json_array_size(cases) == 0) {
        *v = vat_verdict_make(false, 0, VAT_INTERNAL, "regex spec has no cases");
        return NULL;
    }
    json_array_foreach(cases, i, c) {
        const json_t *text = json_object_get(c, "text");
        const json_t *exp = json_object_get(c, "expected");
        const json_t *ho = json_object_get(c, "heldout");
        size_t j;
        const json_t *e;
        if (!json_is_string(text) || !json_is_array(exp) || (ho && !json_is_boolean(ho))) {
            *v = vat_verdict_make(false, 0, VAT_INTERNAL,
                                  "regex spec case %zu lacks a text, an expected list or a "
                                  "boolean heldout",
                                  i);
            return NULL;
        }
        if (json_string_length(text) > RX_MAX_SUBJECT || json_array_size(exp) >= RX_MAX_MATCHES) {
            *v = vat_verdict_make(false, 0, VAT_INTERNAL,
                                  "regex spec case %zu is over the subject or match caps", i);
            return NULL;
        }
        json_array_foreach(exp, j, e) {
            if (!json_is_string(e)) {
                *v = vat_verdict_make(false, 0, VAT_INTERNAL,
                                      "regex spec case %zu expects a non-string", i);
                return NULL;
            }
        }
        if (!all_ascii(json_string_value(text), json_string_length(text)))
            *utf = true;
        *bytes += json_string_length(text);
    }
    return cases;
}

/* One case of a prepared spec: pointers into the spec's strings. */
struct rx_case {
    const char *text;
    size_t n;
    const json_t *exp; /* for reasons */
    const char **e;    /* the expected strings and their lengths */
    size_t *el;
    size_t ne;
    bool held;
};

/* A regex spec read once: limits and cases as C data, or the spec's
 * verdict when it is unusable. */
struct vat_rx_prep {
    bool bad;
    struct vat_verdict v;
    struct vat_verdict ok; /* the verdict of an answer that passes every case */
    uint64_t key;          /* fingerprint of the subjects and limits (rx_cached) */
    struct rx_limits lim;
    bool utf;
    size_t bytes, ncases, cap;
    struct rx_case *cases;
    struct vat_rx_cache *cache; /* borrowed; NULL compiles every time */
};

struct vat_rx_prep *vat_rx_prepare(const json_t *spec, struct vat_rx_cache *cache)
{
    struct vat_rx_prep *p = vat_xcalloc(1, sizeof *p);
    p->cache = cache;
    const json_t *cases;
    if (!spec || limits_read(spec, &p->lim, &p->v)) {
        if (!spec)
            p->v = vat_verdict_make(false, 0, VAT_INTERNAL, "no regex spec");
        p->bad = true;
        return p;
    }
    cases = cases_get(spec, &p->utf, &p->bytes, &p->v);
    if (!cases) {
        p->bad = true;
        return p;
    }
    p->ncases = json_array_size(cases);
    p->cases = vat_xcalloc(p->ncases, sizeof *p->cases);
    size_t i;
    const json_t *c;
    json_array_foreach(cases, i, c) {
        struct rx_case *k = &p->cases[i];
        const json_t *text = json_object_get(c, "text");
        k->text = json_string_value(text);
        k->n = json_string_length(text);
        k->exp = json_object_get(c, "expected");
        k->ne = json_array_size(k->exp);
        k->e = vat_xcalloc(k->ne ? k->ne : 1, sizeof *k->e);
        k->el = vat_xcalloc(k->ne ? k->ne : 1, sizeof *k->el);
        for (size_t j = 0; j < k->ne; j++) {
            const json_t *e = json_array_get(k->exp, j);
            k->e[j] = json_string_value(e);
            k->el[j] = json_string_length(e);
        }
        k->held = json_is_true(json_object_get(c, "heldout"));
        if (k->ne + 1 > p->cap)
            p->cap = k->ne + 1;
    }
    /* One more span than a case expects is enough to know it is wrong; a
     * few more make the reason say what the pattern does instead. */
    if (p->cap < RX_REASON_SPANS)
        p->cap = RX_REASON_SPANS;
    p->ok = vat_verdict_make(true, 1, VAT_OK, "extracted the expected list from all %zu cases",
                             p->ncases);
    /* What a scan depends on beside the pattern: the subjects, in order,
     * and the limits (FNV-1a; never 0). */
    uint64_t h = 1469598103934665603ULL;
    const uint32_t lims[] = {p->lim.scan_budget, p->lim.match_limit, p->lim.depth_limit,
                             p->lim.heap_kib, (uint32_t)p->utf};
    for (size_t q = 0; q <= p->ncases; q++) {
        const unsigned char *b = q < p->ncases ? (const unsigned char *)p->cases[q].text
                                               : (const unsigned char *)lims;
        size_t n = q < p->ncases ? p->cases[q].n : sizeof lims;
        for (size_t j = 0; j < n; j++)
            h = (h ^ b[j]) * 1099511628211ULL;
        h = (h ^ 0xff) * 1099511628211ULL; /* then the length: texts cannot run together */
        for (size_t j = 0; j < sizeof n; j++)
            h = (h ^ ((n >> (8 * j)) & 0xff)) * 1099511628211ULL;
    }
    p->key = h ? h : 1;
    return p;
}

void vat_rx_prep_free(struct vat_rx_prep *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->ncases; i++) {
        free(p->cases[i].e);
        free(p->cases[i].el);
    }
    free(p->cases);
    free(p);
}

/* Spans for up to RX_PREP_STACK_SPANS matches live on the stack. */
#define RX_PREP_STACK_SPANS 64

struct vat_verdict vat_check_regex_prepared(const struct vat_rx_prep *pr, const char *answer,
                                            size_t len)
{
    return vat_check_regex_prepared_as(pr, answer, len, false);
}

/* The reason of a held-out case the pattern gets wrong, kept hidden: the
 * counts and the first match that differs, never the case's text or a
 * match (its matches are pieces of the text). */
static void hidden_case_reason(struct vat_reason *r, const char *what, size_t ne, size_t count,
                               size_t j, bool over)
{
    vat_reason_printf(r, "%s: expected %zu match%s, got %zu%s", what, ne, ne == 1 ? "" : "es",
                         count, over ? " or more" : "");
    if (j < ne && j < count)
        vat_reason_printf(r, "; match %zu differs", j + 1);
    else if (count < ne)
        vat_reason_printf(r, "; the %zu found agree, match %zu is missing", count, count + 1);
    else
        vat_reason_printf(r, "; the %zu expected agree, match %zu is unexpected", ne, ne + 1);
}

struct vat_verdict vat_check_regex_prepared_as(const struct vat_rx_prep *pr, const char *answer,
                                               size_t len, bool reveal)
{
    struct vat_verdict v;
    struct rx_prog p;
    if (pr->bad)
        return pr->v;
    if (prog_build(&p, &pr->lim, answer, len, pr->utf, pr->bytes, 2 * (pr->bytes + pr->ncases),
                   pr->cache, pr->key, &v))
        return v;
    bool clean = true; /* no case met a limit or other pcre2 error */

    size_t cap = pr->cap;
    size_t stack_spans[2 * RX_PREP_STACK_SPANS];
    size_t *spans = cap <= RX_PREP_STACK_SPANS ? stack_spans
                                               : vat_xmalloc(2 * cap * sizeof *spans);
    v = pr->ok;
    for (size_t i = 0; i < pr->ncases; i++) {
        const struct rx_case *k = &pr->cases[i];
        const char *s = k->text;
        size_t n = k->n, ne = k->ne, count;
        char what[48];
        size_t want = ne + 1 > RX_REASON_SPANS ? ne + 1 : RX_REASON_SPANS;
        int rc = prog_scan(&p, s, n, want, spans, &count);
        /* what is written only for a reason: a passing case needs none */
        if (rc < 0) {
            snprintf(what, sizeof what, "case %zu (%s)", i, k->held ? "held-out" : "example");
            v = scan_failure(rc, what, want);
            clean = false;
            break;
        }
        size_t j = 0;
        while (j < ne && j < count) {
            size_t el = k->el[j];
            if (el != spans[2 * j + 1] - spans[2 * j] || memcmp(k->e[j], s + spans[2 * j], el) != 0)
                break;
            j++;
        }
        if (rc == 0 && j == ne && j == count)
            continue;
        snprintf(what, sizeof what, "case %zu (%s)", i, k->held ? "held-out" : "example");
        size_t at = j < count ? spans[2 * j] : j ? spans[2 * j - 1] : 0;
        struct vat_reason r = {{0}, 0};
        if (k->held && !reveal) {
            hidden_case_reason(&r, what, ne, count, j, rc == RX_OVER_CAP);
        } else {
            vat_reason_printf(&r, "%s ", what);
            quote_window(&r, s, n, at, RX_QUOTE_TEXT);
            vat_reason_puts(&r, ": expected ");
            quote_list(&r, k->exp, NULL, NULL, ne, RX_QUOTE_LIST);
            vat_reason_puts(&r, " got ");
            quote_list(&r, NULL, s, spans, count, RX_QUOTE_LIST);
            if (rc == RX_OVER_CAP)
                vat_reason_puts(&r, "+");
        }
        v = vat_reason_verdict(true, 0, VAT_WRONG_EXTRACTION, &r);
        break;
    }
    if (spans != stack_spans)
        free(spans);
    if (clean && p.shared && !p.jit && !p.fast && pr->key)
        cache_mark_clean(p.cache, p.shared, pr->key);
    prog_free(&p);
    return v;
}

struct vat_verdict vat_check_regex(const json_t *spec, const char *answer, size_t len)
{
    return vat_check_regex_as(spec, answer, len, false);
}

struct vat_verdict vat_check_regex_as(const json_t *spec, const char *answer, size_t len,
                                      bool reveal)
{
    struct vat_rx_prep *p = vat_rx_prepare(spec, NULL);
    struct vat_verdict v = vat_check_regex_prepared_as(p, answer, len, reveal);
    vat_rx_prep_free(p);
    return v;
}

json_t *vat_regex_extract(const json_t *spec, const char *pattern, size_t plen, const char *text,
                          struct vat_verdict *v)
{
    struct vat_verdict local;
    struct rx_limits lim;
    struct rx_prog p;
    if (!v)
        v = &local;
    if (limits_read(spec, &lim, v))
        return NULL;
    if (!text) {
        *v = vat_verdict_make(false, 0, VAT_INTERNAL, "no text to extract from");
        return NULL;
    }
    size_t n = strlen(text);
    if (n > RX_MAX_SUBJECT) {
        *v = vat_verdict_make(false, 0, VAT_TOO_LARGE, "text is %zu bytes; the limit is %d", n,
                              RX_MAX_SUBJECT);
        return NULL;
    }
    bool utf = !all_ascii(text, n);
    if (utf && vat_utf8_prefix(text, n) < n) {
        *v = vat_verdict_make(false, 0, VAT_INTERNAL, "text is not valid UTF-8");
        return NULL;
    }
    if (prog_build(&p, &lim, pattern, plen, utf, n, 2 * (n + 1), NULL, 0, v))
        return NULL;
    /* A text of n bytes holds at most 2n + 1 matches (n non-empty ones and
     * an empty one at each of n + 1 places), so size the spans by the
     * text rather than by the cap. */
    size_t cap = 2 * n + 1 < RX_MAX_MATCHES ? 2 * n + 1 : RX_MAX_MATCHES;
    size_t *spans = vat_xmalloc(2 * cap * sizeof *spans), count;
    int rc = prog_scan(&p, text, n, cap, spans, &count);
    json_t *out = NULL;
    if (rc != 0) {
        *v = scan_failure(rc, "text", cap);
    } else {
        out = json_array();
        for (size_t j = 0; j < count; j++)
            json_array_append_new(out, json_stringn(text + spans[2 * j],
                                                    spans[2 * j + 1] - spans[2 * j]));
        *v = vat_verdict_make(true, 1, VAT_OK, "%zu matches", count);
    }
    free(spans);
    prog_free(&p);
    return out;
}

/* mem.c — counted memory: the allocator vat gives SQLite, the
 * deterministic bound on what one query holds and what preparing requests
 * (include/libvat.h says what it changes for a host's own connections).
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

#include "libvat.h"
#include "sql_internal.h"

/* ---- counted memory: the deterministic bound on what one query holds -------- */

/* When the counting allocator could not be installed (a host process
 * started SQLite before loading vat), this process-wide net takes its
 * place; a query that hits it gets checker_limit, not a verdict. */
#define SQL_HARD_HEAP_NET ((sqlite3_int64)2 << 30)

struct mem_hdr {
    int32_t size;  /* what SQLite asked for */
    uint32_t cls;  /* the block's size class (MEM_CLASSES: a plain heap block) */
    union {
        uint64_t gen;          /* the counting run that holds it, or 0 */
        struct mem_hdr *next;  /* in a thread's cache of free blocks */
    };
};

/* SQLite allocates and frees some ten thousand blocks per task (parsing,
 * schemas, statements, page caches), more than the C library's per-thread
 * cache holds, so most of its calls reached the library's slow paths
 * (bins, consolidation).  Freed blocks are kept instead, per thread, in
 * size classes and handed out again: 16-byte steps up to 1 KiB, then four
 * steps per doubling up to 256 KiB (a page cache's 4.4 KB entry takes a
 * 5 KiB block, not an 8 KiB one), at most MEM_CACHE_BYTES per thread (the
 * rest goes back to the C library).  Only where the bytes come from
 * changes: the counts above are of the sizes SQLite asks for, as before.
 * Under AddressSanitizer a kept block's bytes are poisoned, so a use after
 * SQLite freed it is still caught. */
#define MEM_SMALL_STEP 16
#define MEM_SMALL_MAX 1024
#define MEM_N_SMALL (MEM_SMALL_MAX / MEM_SMALL_STEP)
#define MEM_LARGE_MAX ((size_t)256 << 10)
#define MEM_N_LARGE 32 /* 1.25 KiB .. 256 KiB: 8 doublings of 1 KiB, 4 steps each */
#define MEM_CLASSES (MEM_N_SMALL + MEM_N_LARGE)
/* A build may set it (0 keeps nothing) to compare with the C library alone. */
#ifndef MEM_CACHE_BYTES
#define MEM_CACHE_BYTES ((size_t)1 << 20)
#endif

#if defined(__SANITIZE_ADDRESS__)
#define MEM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEM_ASAN 1
#endif
#endif
#ifdef MEM_ASAN
#include <sanitizer/asan_interface.h>
#define MEM_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define MEM_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define MEM_POISON(p, n) ((void)(p), (void)(n))
#define MEM_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

struct mem_cache {
    struct mem_hdr *free[MEM_CLASSES];
    size_t bytes; /* held in free[] */
    bool armed;   /* the thread's exit hands them back (mem_cache_key) */
    bool closed;  /* the thread is ending: blocks go straight back */
};

static _Thread_local struct mem_cache mem_cache;
/* The allocator's own steps run on every one of SQLite's allocations
 * (thousands a task): kept inside its entry points, not called. */
#define MEM_INLINE static inline __attribute__((always_inline))
static pthread_key_t mem_cache_key;
static pthread_once_t mem_cache_once = PTHREAD_ONCE_INIT;
static bool mem_cache_keyed;

/* The bytes a block of class c holds, its header included. */
MEM_INLINE size_t mem_class_bytes(uint32_t c)
{
    if (c < MEM_N_SMALL)
        return (size_t)(c + 1) * MEM_SMALL_STEP;
    uint32_t doubling = (c - MEM_N_SMALL) / 4, step = (c - MEM_N_SMALL) % 4;
    return ((size_t)MEM_SMALL_MAX << doubling) +
           (step + 1) * ((size_t)MEM_SMALL_MAX / 4 << doubling);
}

/* The class of a block of total bytes, or MEM_CLASSES when too large. */
MEM_INLINE uint32_t mem_class_of(size_t total)
{
    if (total <= MEM_SMALL_MAX)
        return (uint32_t)((total + MEM_SMALL_STEP - 1) / MEM_SMALL_STEP) - 1;
    if (total > MEM_LARGE_MAX)
        return MEM_CLASSES;
    uint32_t doubling = 0;
    while (((size_t)2 * MEM_SMALL_MAX << doubling) < total)
        doubling++;
    size_t base = (size_t)MEM_SMALL_MAX << doubling, step = (size_t)MEM_SMALL_MAX / 4 << doubling;
    return MEM_N_SMALL + 4 * doubling + (uint32_t)((total - base + step - 1) / step) - 1;
}

static void mem_cache_drain(void)
{
    for (uint32_t c = 0; c < MEM_CLASSES; c++)
        while (mem_cache.free[c]) {
            struct mem_hdr *h = mem_cache.free[c];
            MEM_UNPOISON(h + 1, mem_class_bytes(c) - sizeof *h);
            mem_cache.free[c] = h->next;
            free(h);
        }
    mem_cache.bytes = 0;
}

/* Other keys' destructors may still free SQLite blocks after this one
 * ran; those go straight back. */
static void mem_cache_exit(void *arg)
{
    (void)arg;
    mem_cache.closed = true;
    mem_cache_drain();
}

static void mem_cache_key_make(void)
{
    mem_cache_keyed = pthread_key_create(&mem_cache_key, mem_cache_exit) == 0;
}

/* A block of class c holding total bytes (its header not yet filled): a
 * kept one when there is, else from the C library; NULL when out. */
MEM_INLINE struct mem_hdr *mem_block_get(uint32_t c, size_t total)
{
    if (c == MEM_CLASSES)
        return malloc(total);
    struct mem_hdr *h = mem_cache.free[c];
    if (h) {
        /* Reading a kept block's link is a cache miss more often than
         * not (a profile put most of this function's time there); the
         * next block's link is fetched now, so the next take of this
         * class finds it ready.  A prefetch never faults, NULL included. */
        mem_cache.free[c] = h->next;
        __builtin_prefetch(h->next);
        mem_cache.bytes -= mem_class_bytes(c);
        MEM_UNPOISON(h + 1, mem_class_bytes(c) - sizeof *h);
    } else {
        h = malloc(mem_class_bytes(c));
    }
    return h;
}

/* Has the thread's exit hand its kept blocks back (once a thread, so out
 * of the allocator's inlined path).  Whether it will. */
static __attribute__((noinline, cold)) bool mem_cache_arm(void)
{
    pthread_once(&mem_cache_once, mem_cache_key_make);
    if (!mem_cache_keyed || pthread_setspecific(mem_cache_key, &mem_cache) != 0)
        return false;
    mem_cache.armed = true;
    return true;
}

/* Keeps block h, or gives it back when the cache is full or the thread
 * cannot have it handed back at its exit. */
MEM_INLINE void mem_block_put(struct mem_hdr *h)
{
    uint32_t c = h->cls;
    if (c == MEM_CLASSES || mem_cache.closed ||
        mem_cache.bytes + mem_class_bytes(c) > MEM_CACHE_BYTES) {
        free(h);
        return;
    }
    if (!mem_cache.armed && !mem_cache_arm()) {
        free(h);
        return;
    }
    h->next = mem_cache.free[c];
    mem_cache.free[c] = h;
    mem_cache.bytes += mem_class_bytes(c);
    MEM_POISON(h + 1, mem_class_bytes(c) - sizeof *h);
}

_Thread_local struct mem_count mem_tls;
static _Atomic uint64_t mem_gen_next = 1;
static bool mem_counted;
pthread_once_t mem_net_once = PTHREAD_ONCE_INIT;

MEM_INLINE bool mem_take(sqlite3_int64 delta)
{
    if (!mem_tls.gen)
        return true;
    if (delta > 0 && (mem_tls.used + delta > mem_tls.cap ||
                      mem_tls.total + delta > mem_tls.total_cap)) {
        mem_tls.hit = true;
        return false;
    }
    return true;
}

static void *mem_malloc(int n)
{
    if (n < 0 || n > INT32_MAX - (int)sizeof(struct mem_hdr) || !mem_take(n))
        return NULL;
    size_t total = sizeof(struct mem_hdr) + (size_t)n;
    uint32_t c = mem_class_of(total);
    struct mem_hdr *h = mem_block_get(c, total);
    if (!h)
        return NULL;
    h->size = n;
    h->cls = c;
    h->gen = mem_tls.gen;
    if (mem_tls.gen) {
        mem_tls.used += n;
        mem_tls.total += n;
    }
    return h + 1;
}

static void mem_free(void *p)
{
    if (!p)
        return;
    struct mem_hdr *h = (struct mem_hdr *)p - 1;
    if (mem_tls.gen && h->gen == mem_tls.gen)
        mem_tls.used -= h->size;
    mem_block_put(h);
}

static void *mem_realloc(void *p, int n)
{
    if (n < 0 || n > INT32_MAX - (int)sizeof(struct mem_hdr))
        return NULL;
    struct mem_hdr *h = (struct mem_hdr *)p - 1;
    bool mine = mem_tls.gen && h->gen == mem_tls.gen;
    sqlite3_int64 delta = mine ? (sqlite3_int64)n - h->size : n;
    if (!mem_take(delta))
        return NULL;
    size_t total = sizeof(struct mem_hdr) + (size_t)n;
    uint32_t c = mem_class_of(total);
    struct mem_hdr *g;
    if (c == h->cls && c == MEM_CLASSES) {
        g = realloc(h, total);
        if (!g)
            return NULL;
    } else if (c == h->cls) {
        g = h;
    } else {
        g = mem_block_get(c, total);
        if (!g)
            return NULL;
        memcpy(g + 1, h + 1, (size_t)(n < h->size ? n : h->size));
        g->cls = c;
        g->gen = h->gen;
        mem_block_put(h);
    }
    if (mem_tls.gen) {
        mem_tls.used += delta;
        if (delta > 0)
            mem_tls.total += delta;
        g->gen = mem_tls.gen;
    }
    g->size = n;
    return g + 1;
}

static int mem_size(void *p)
{
    return p ? (int)((struct mem_hdr *)p - 1)->size : 0;
}

static int mem_roundup(int n)
{
    return n > 0x7ffffff0 ? n : (n + 7) & ~7;
}

static int mem_init(void *arg)
{
    (void)arg;
    return SQLITE_OK;
}

static void mem_shutdown(void *arg)
{
    (void)arg;
    mem_cache_drain();
}

static void mem_install_once(void)
{
    static const sqlite3_mem_methods methods = {
        mem_malloc, mem_free, mem_realloc, mem_size, mem_roundup, mem_init, mem_shutdown, NULL,
    };
    mem_counted = sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) == SQLITE_OK;
    /* SQLite's own statistics of its heap take a process-wide mutex on
     * every allocation; with the counting allocator nothing reads them
     * (the hard heap limit, which needs them, is the net only without
     * it). */
    if (mem_counted)
        sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

static pthread_once_t mem_install_ran = PTHREAD_ONCE_INIT;

/* Runs before main (and when a host loads vat), before anything starts
 * SQLite; sqlite3_config refuses once SQLite has started.  What this
 * changes for a host: include/libvat.h. */
__attribute__((constructor)) static void mem_install(void)
{
    pthread_once(&mem_install_ran, mem_install_once);
}

int vat_init(void)
{
    pthread_once(&mem_install_ran, mem_install_once);
    return mem_counted;
}

int vat_sqlite_counting(void)
{
    pthread_once(&mem_install_ran, mem_install_once);
    return mem_counted;
}

void mem_net_init(void)
{
    if (!mem_counted)
        sqlite3_hard_heap_limit64(SQL_HARD_HEAP_NET);
}

/* Starts counting this thread's SQLite allocations afresh. */
void mem_count_start(sqlite3_int64 total_cap)
{
    mem_tls.gen = atomic_fetch_add(&mem_gen_next, 1);
    mem_tls.used = 0;
    mem_tls.total = 0;
    mem_tls.cap = SQL_MAX_QUERY_HEAP;
    mem_tls.total_cap = total_cap;
    mem_tls.hit = false;
}

void mem_count_stop(void)
{
    mem_tls.gen = 0;
}

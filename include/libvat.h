/* libvat.h — the public API of libvat: score model completions against a
 * built vat corpus, in-process, from any number of threads.
 *
 * This is the only header a user of the library includes.  Every type here
 * is opaque or plain C: no jansson, SQLite or PCRE2 type crosses it.
 *
 *     vat_error err;
 *     vat_corpus *c;
 *     if (vat_corpus_open(&c, "/data/corpus", &err) != 0) { puts(err.message); ... }
 *     vat_result *r;
 *     if (vat_corpus_score(c, "grouped_sum-00007", text, strlen(text),
 *                          VAT_EXTRACT_AUTO, &r, &err) == 0) {
 *         printf("%g %s\n", vat_result_score(r), vat_result_code(r));
 *         vat_result_free(r);
 *     }
 *     vat_corpus_close(c);
 *
 * Repeats: an SQL task remembers the verdict of each extracted answer it
 * checked (in the handle's cache; docs/limits.md), so the same answer
 * scored again gets the identical result without running SQL.
 * VAT_VERDICT_MEMO=0 in the environment when vat_corpus_open runs turns
 * this off for that handle.
 *
 * Memory: what a handle caches lives under one byte budget
 * (vat_open_options.cache_bytes, 256 MiB by default), least recently used
 * first out.
 *
 * Threads: one vat_corpus may be used by many threads at once for
 * vat_corpus_score and the read-only calls; vat_corpus_close must not race
 * with them.  A vat_result belongs to the thread that got it.
 *
 * Errors travel as values: a call that can fail returns 0 on success and -1
 * on failure with err->message set (err may be NULL).  A completion that is
 * wrong, hostile or unparsable is NOT an error: it is a result with score 0
 * and a verdict code saying why. */
#ifndef LIBVAT_H
#define LIBVAT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The API version of this header; bumped when a call is added. */
#define VAT_API_VERSION 3

/* The vat version the library was built as ("0.2.0"). */
const char *vat_version(void);

/* ---- SQLite's allocator: what loading libvat changes in a host (API 3) ---
 * An SQL check is bounded in memory by an allocator libvat gives SQLite
 * (SQLITE_CONFIG_MALLOC), which counts, per thread, the bytes a sandboxed
 * query holds and the bytes preparing requests.  SQLite takes an allocator
 * only before it starts, and for the whole process, so libvat installs it
 * as it is loaded (a constructor: before main when linked, at dlopen when
 * loaded later), and vat_init() installs it explicitly.  For the host's
 * own SQLite connections, in the same process, this means:
 *  - every allocation of every connection goes through libvat's
 *    allocator; it counts only on a thread while a vat check runs, so a
 *    host's own queries are never capped, but each block carries a
 *    16-byte prefix, and up to 1 MiB of freed blocks per thread is kept
 *    for reuse (returned when the thread ends);
 *  - SQLite's memory statistics are off (SQLITE_CONFIG_MEMSTATUS 0):
 *    sqlite3_memory_used() and sqlite3_status(SQLITE_STATUS_MEMORY_USED)
 *    read 0, and a host's sqlite3_soft_heap_limit64() or
 *    sqlite3_hard_heap_limit64() has nothing to measure.
 * When the host started SQLite first (opened a connection or called
 * sqlite3_initialize before loading libvat, as Python's sqlite3 module
 * does once used), SQLite refuses the allocator: nothing of the above
 * applies, and libvat bounds its checks instead with a process-wide
 * sqlite3_hard_heap_limit64 of 2 GiB, set at the first SQL check, which
 * the host's connections then share; a check stopped by it scores 0 with
 * code "checker_limit" (docs/limits.md, "Process-wide nets"). */

/* Installs the counting allocator if SQLite has not started (the load
 * already did, unless the host started SQLite first): 1 when it is
 * SQLite's allocator, 0 when SQLite refused it.  Safe to call any number
 * of times, from any thread, before or after vat_corpus_open. */
int vat_init(void);
/* 1 when SQL checks are counted by libvat's allocator, 0 when SQLite
 * refused it and the process-wide heap limit bounds them instead. */
int vat_sqlite_counting(void);

typedef struct vat_error {
    char message[512];
} vat_error;

/* How the answer is taken from a completion (docs/extraction.md):
 * RAW  — the answer is the completion exactly as given;
 * AUTO — for chat models: drop <think> blocks and HTML comments, then the
 *        last <answer> tag, else the last fitting fenced block, \boxed{},
 *        "Answer:" line (markdown too), closing sentence ("The answer is
 *        X."), other fence, trailing SQL statement, bare JSON last line or
 *        the whole text (one line, JSON or SELECT/WITH); no answer found
 *        gives the verdict code "no_answer". */
typedef enum vat_extract_mode { VAT_EXTRACT_RAW = 0, VAT_EXTRACT_AUTO = 1 } vat_extract_mode;

typedef struct vat_corpus vat_corpus;
typedef struct vat_result vat_result;

/* Opens the corpus built below root (its out/ and fixtures/) with the
 * default options.  Reads the verifiers table once and indexes task ids;
 * what a task's scoring needs (its checker, fixtures, whose sha256 is
 * verified, gold rows, compiled patterns) is built on first use and kept
 * in the handle's cache (below). */
int vat_corpus_open(vat_corpus **out, const char *root, vat_error *err);
/* Reasons and held-out cases.  By default no verdict's reason quotes a
 * held-out case (a regex task's held-out strings, an SQL task's variant
 * fixtures): it names the case by number and says how the answer failed
 * (counts, the row, column or match that differs, a type, an order), so a
 * loop that feeds reasons back to a model cannot teach it the hidden
 * tests.  VAT_OPEN_REVEAL_HIDDEN quotes them in full (their texts, rows
 * and values), for a dataset author. */
#define VAT_OPEN_REVEAL_HIDDEN 1u
/* vat_corpus_open with the default options but flags (0 or
 * VAT_OPEN_REVEAL_HIDDEN). */
int vat_corpus_open_flags(vat_corpus **out, const char *root, unsigned flags, vat_error *err);

/* The default byte budget of a handle's cache. */
#define VAT_CACHE_DEFAULT_BYTES ((size_t)256 << 20)

/* Options of vat_corpus_open_opts.  Start from VAT_OPEN_OPTIONS_INIT, then
 * set the members you need:
 *
 *     vat_open_options o = VAT_OPEN_OPTIONS_INIT;
 *     o.cache_bytes = (size_t)64 << 20;
 *     vat_corpus_open_opts(&c, "/data/corpus", &o, &err);
 *
 * Members are only ever appended; `size` (your sizeof) tells the library
 * which ones a program built against an older header has, and the rest
 * keep their defaults. */
typedef struct vat_open_options {
    size_t size; /* sizeof(vat_open_options), as VAT_OPEN_OPTIONS_INIT sets it */
    /* The byte budget of everything the handle caches between scores: the
     * verdict memo, and per task its checker, SQL fixture images and
     * fixture sets, pooled sandboxes with their prepared statements,
     * compiled regexes, and its episodes' environment (the main fixture
     * loaded, its pooled sandboxes).  Least recently used goes first when
     * something new needs room; a task let go is built again on its next
     * score or episode and gives the same verdicts and observations.  0:
     * the environment variable VAT_CACHE_BYTES (a byte count, or with a
     * K, M or G suffix), else VAT_CACHE_DEFAULT_BYTES. */
    size_t cache_bytes;
    /* 0 or VAT_OPEN_REVEAL_HIDDEN (above). */
    unsigned flags;
} vat_open_options;
#define VAT_OPEN_OPTIONS_INIT {sizeof(vat_open_options), 0, 0}

/* vat_corpus_open with options (opts may be NULL: the defaults). */
int vat_corpus_open_opts(vat_corpus **out, const char *root, const vat_open_options *opts,
                         vat_error *err);
/* The byte budget of c's cache. */
size_t vat_corpus_cache_budget(const vat_corpus *c);
void vat_corpus_close(vat_corpus *c);
/* Number of tasks in the corpus. */
size_t vat_corpus_size(const vat_corpus *c);
/* 1 when the corpus has a task of that id, else 0. */
int vat_corpus_has_task(const vat_corpus *c, const char *task_id);

/* Scores completion (len bytes, need not be NUL-terminated) for task_id.
 * Returns -1 only when the call itself cannot run (unknown task id, bad
 * arguments); every completion gets a result. */
int vat_corpus_score(vat_corpus *c, const char *task_id, const char *completion, size_t len,
                     vat_extract_mode mode, vat_result **out, vat_error *err);

/* The result's fields; strings live as long as the result. */
int vat_result_gate_passed(const vat_result *r);        /* 1 or 0            */
double vat_result_score(const vat_result *r);           /* 0.0 .. 1.0        */
const char *vat_result_code(const vat_result *r);       /* "ok", "shape", …  */
const char *vat_result_reason(const vat_result *r);     /* one line          */
/* The answer text the checker saw (after extraction) and its length. */
const char *vat_result_extracted(const vat_result *r, size_t *len);
/* Which extraction rule fired: "raw", "answer_tag", "fence", "boxed",
 * "answer_line", "sentence", "sql_tail", "last_line", "whole" or "none". */
const char *vat_result_extract_rule(const vat_result *r);
/* 1 when the answer is the task's trap (the same value within tolerance, or
 * the same rows as the trap program on every fixture), else 0. */
int vat_result_is_trap(const vat_result *r);
/* The work the check spent, in the steps of its budget (an SQL task: the
 * VM steps its query ran on all fixtures together plus what the bounded
 * built-ins charged; the budget plus one when it ran past it; 0 for other
 * checkers).  The same answer to the same task gives the same count on
 * every call, thread and build (docs/limits.md).  API version 2. */
long long vat_result_work(const vat_result *r);
void vat_result_free(vat_result *r);

/* ---- tool-use episodes (API version 2) ---------------------------------
 * An agent explores a task's main fixture through tools, then answers:
 *
 *     vat_episode *ep;
 *     if (vat_episode_open(c, "grouped_sum-00007", &ep, &err) == 0) {
 *         puts(vat_episode_prompt(ep));             // the first observation
 *         const char *q = "{\"query\": \"SELECT count(*) FROM orders\"}";
 *         vat_episode_step(ep, "sql", q, strlen(q), &err);
 *         puts(vat_episode_observation(ep, NULL));
 *         const char *a = "{\"answer\": \"42\"}";
 *         vat_episode_step(ep, "submit", a, strlen(a), &err);
 *         if (vat_episode_done(ep)) printf("%g\n", vat_episode_reward(ep));
 *         vat_episode_close(ep);
 *     }
 *
 * The tools (their OpenAI function schemas: vat_episode_tools): data
 * tasks have describe(), sample(table, n), sql(query) and submit(answer);
 * regex tasks sample(n), try(pattern) and submit(answer).  sql runs one
 * read-only SELECT on the task's main fixture as its prompt loads it,
 * through the sql checker's sandbox and gate; try shows what a pattern
 * extracts from the example lines.  No tool reads a held-out variant or
 * case.  submit scores the answer with the task's checker, as
 * vat_corpus_score does with VAT_EXTRACT_RAW, and ends the episode.
 * Every call gets an observation (a bad call, a denied query and an
 * exhausted bound are observations too); the same calls give the same
 * observation bytes.  Bounds per episode (tool calls, sql calls, rows,
 * observation bytes): docs/limits.md; a bound that ends an episode gives
 * reward 0 and code "episode_limit".
 *
 * Threads: episodes on one corpus may run in many threads at once; one
 * episode belongs to one thread at a time.  Close every episode before
 * its corpus (vat_episode_close after vat_corpus_close is safe: it needs
 * nothing of the corpus, but no other call on the episode is).
 *
 * Memory: a task's environment (its main fixture loaded, a pool of
 * sandboxes) is kept with the task's state in the corpus's cache, under
 * its byte budget (vat_open_options.cache_bytes), least recently used
 * first out; an open episode keeps its own until it closes, and an
 * environment let go is built again, to the same observations, on the
 * task's next episode. */
typedef struct vat_episode vat_episode;

/* Opens an episode on task_id.  -1 with err set when the task is unknown,
 * the corpus has no env table (built before API version 2) or is
 * tampered, or the task's fixture cannot be loaded. */
int vat_episode_open(vat_corpus *c, const char *task_id, vat_episode **out, vat_error *err);
void vat_episode_close(vat_episode *ep);
/* The agent prompt: the question, the tools, the tables' schema and a
 * few rows, no more of the data (lives as long as the corpus). */
const char *vat_episode_prompt(const vat_episode *ep);
/* The tools as a JSON array of OpenAI function-tool schemas (static
 * text: vat_tools_json of the task's tool set). */
const char *vat_episode_tools(const vat_episode *ep);
/* One tool call: its name and its arguments as the JSON text of an object
 * (len bytes, need not be NUL-terminated; 0 is {}).  -1 only when the call
 * cannot run (no episode, no name). */
int vat_episode_step(vat_episode *ep, const char *tool, const char *arguments, size_t len,
                     vat_error *err);
/* The last call's observation (UTF-8 text; valid until the next step) and
 * its length; "" before the first. */
const char *vat_episode_observation(const vat_episode *ep, size_t *len);
/* 1 once submit (or a bound) has ended the episode, else 0. */
int vat_episode_done(const vat_episode *ep);
/* The submitted answer's score: 0.0 .. 1.0 (0 until done). */
double vat_episode_reward(const vat_episode *ep);
/* The verdict that ended the episode: code ("" while it runs; the
 * checker's code, or "episode_limit") and one-line reason; whether the
 * submitted answer is the task's trap. */
const char *vat_episode_code(const vat_episode *ep);
const char *vat_episode_reason(const vat_episode *ep);
int vat_episode_is_trap(const vat_episode *ep);
/* Tool calls taken so far. */
int vat_episode_calls(const vat_episode *ep);
/* The OpenAI function-tool schemas (JSON text, static) of a tool set:
 * "data" or "regex" (anything else gives "data"'s). */
const char *vat_tools_json(const char *tool_set);

#ifdef __cplusplus
}
#endif

#endif

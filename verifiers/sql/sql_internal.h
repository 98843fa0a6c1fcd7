/* sql_internal.h — what the files of the SQL checker (verifiers/sql/)
 * share: its limits, the spec, the sandbox and its result rows, and the
 * functions one file calls in another (the lexer is lex.h).  What the
 * sandbox rests on: verifiers/sql/README.md.
 *
 * The shared functions keep the names they had as one file's statics; the
 * macros below give each a vat_sqlx_ name to the linker, so libvat.a puts
 * no bare name like sandbox_query in a program's namespace. */
#ifndef VAT_SQL_INTERNAL_H
#define VAT_SQL_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "lex.h"
#include "reason.h"
#include "sqlfile.h"
#include "verifiers.h"

#define aux_call vat_sqlx_aux_call
#define aux_install vat_sqlx_aux_install
#define aux_names vat_sqlx_aux_names
#define budget_reset vat_sqlx_budget_reset
#define budget_verdict vat_sqlx_budget_verdict
#define fixture_load vat_sqlx_fixture_load
#define is_sqlite_image vat_sqlx_is_sqlite_image
#define hide_run_failure vat_sqlx_hide_run_failure
#define mem_count_start vat_sqlx_mem_count_start
#define mem_count_stop vat_sqlx_mem_count_stop
#define mem_net_init vat_sqlx_mem_net_init
#define mem_net_once vat_sqlx_mem_net_once
#define mem_tls vat_sqlx_mem_tls
#define memo_find_rows vat_sqlx_memo_find_rows
#define memo_keep_rows vat_sqlx_memo_keep_rows
#define memo_release vat_sqlx_memo_release
#define printf_bounded vat_sqlx_printf_bounded
#define query_gate vat_sqlx_query_gate
#define rollback_byte vat_sqlx_rollback_byte
#define rollback_mode vat_sqlx_rollback_mode
#define row_at vat_sqlx_row_at
#define rows_agree vat_sqlx_rows_agree
#define rows_agree_as vat_sqlx_rows_agree_as
#define rows_bytes vat_sqlx_rows_bytes
#define rows_copy vat_sqlx_rows_copy
#define rows_differ_code vat_sqlx_rows_differ_code
#define rows_held vat_sqlx_rows_held
#define rows_json vat_sqlx_rows_json
#define rows_release vat_sqlx_rows_release
#define sandbox_charge vat_sqlx_sandbox_charge
#define sandbox_close vat_sqlx_sandbox_close
#define sandbox_deserialize vat_sqlx_sandbox_deserialize
#define sandbox_destroy vat_sqlx_sandbox_destroy
#define sandbox_exclusive_sql vat_sqlx_sandbox_exclusive_sql
#define sandbox_exec_aside vat_sqlx_sandbox_exec_aside
#define sandbox_names vat_sqlx_sandbox_names
#define sandbox_names_free vat_sqlx_sandbox_names_free
#define sandbox_new vat_sqlx_sandbox_new
#define sandbox_open vat_sqlx_sandbox_open
#define sandbox_open_switch vat_sqlx_sandbox_open_switch
#define sandbox_pool_setup vat_sqlx_sandbox_pool_setup
#define sandbox_query vat_sqlx_sandbox_query
#define sandbox_rearm vat_sqlx_sandbox_rearm
#define sandbox_retire vat_sqlx_sandbox_retire
#define sandbox_reverse_rows vat_sqlx_sandbox_reverse_rows
#define sandbox_run vat_sqlx_sandbox_run
#define sandbox_step_aside vat_sqlx_sandbox_step_aside
#define sandbox_stmt_cache_reset vat_sqlx_sandbox_stmt_cache_reset
#define sandbox_trim vat_sqlx_sandbox_trim
#define sandbox_vfs_init vat_sqlx_sandbox_vfs_init
#define sandbox_vfs_once vat_sqlx_sandbox_vfs_once
#define sandbox_vfs_rc vat_sqlx_sandbox_vfs_rc
#define sb_cache_find vat_sqlx_sb_cache_find
#define sb_cache_take vat_sqlx_sb_cache_take
#define spec_unsafe_path vat_sqlx_spec_unsafe_path
#define sql_last_work vat_sqlx_sql_last_work
#define sql_sandbox_opens vat_sqlx_sql_sandbox_opens
#define sql_sandbox_reimages vat_sqlx_sql_sandbox_reimages
#define stmt_cache_put vat_sqlx_stmt_cache_put
#define stmt_cache_take vat_sqlx_stmt_cache_take
#define text_json vat_sqlx_text_json
#define switch_opening vat_sqlx_switch_opening

/* One budget per check: an answer's work on all of the task's fixtures
 * together, in steps (a VM step of its statement, or a unit a bounded
 * built-in charges; see sandbox_query).  SQLite checks it only between
 * opcodes, so what one step can cost is bounded instead, by the length
 * limit below: on the longest values a query can make, the dearest step
 * measured (tests/test_sql_bounds.c, every operator and built-in the
 * sandbox allows) costs about 0.4 us of CPU, so a whole budget stays
 * under half a second.  A spec may lower the budget, never raise it. */
#define SQL_DEFAULT_STEP_BUDGET 1000000
#define SQL_DEFAULT_MAX_ROWS 10000
#define SQL_DEFAULT_MAX_BYTES (8 * 1024 * 1024)
#define SQL_DEFAULT_REL_TOL 1e-9
#define SQL_DEFAULT_ABS_TOL 1e-6
#define SQL_MAX_STEP_BUDGET SQL_DEFAULT_STEP_BUDGET
/* The progress handler runs every this many VM steps; the step budget is
 * counted in these units. */
#define SQL_PROGRESS_OPS 100
/* The CPU-time net per statement (verifiers/sql/README.md), checked every
 * SQL_CPU_CHECK_EVERY progress calls (100,000 VM steps, well under a
 * millisecond) since reading the thread's CPU clock is a real syscall, a
 * measurable share of a short query when read every 1,000 steps.
 * A last resort only, far above what the counted budgets allow (they stop
 * every known attack in well under a second): a query it stops scores 0
 * with code checker_limit, which says the checker, not the answer, ran
 * out, and which admission and strength treat as fatal. */
#define SQL_CPU_MS 20000
#define SQL_CPU_CHECK_EVERY 1000
#define SQL_MAX_FIXTURE_BYTES ((size_t)64 << 20)
/* The longest string, blob or row a query may build (SQLITE_LIMIT_LENGTH),
 * and so the cost of one step: `+` on two 10,000-digit texts converts
 * each inside one opcode (a check once burnt 29 s that way within its
 * budget).  Fixtures' values are at most 42 bytes and their rows 110
 * (every template at its largest), so 1,000 leaves room for joined and
 * concatenated rows. */
#define SQL_MAX_VALUE_BYTES 1000
#define SQL_MAX_FUNCTION_CALLS 256
#define SQL_MAX_LIKE_PATTERN 100
/* SQLITE_TESTCTRL_OPTIMIZATIONS bits (sqliteInt.h) turned off in the
 * sandbox: QueryFlattener 0x1, Transitive 0x80, CountOfView 0x200,
 * PushDown 0x1000, PropagateConst 0x8000, FlttnUnionAll 0x800000. */
#define SQL_OFF_OPTIMIZATIONS 0x00809281
#define SANDBOX_VFS_NAME "vat-sql-sandbox"

struct sql_spec {
    const json_t *fixtures; /* NULL when the caller names the fixture */
    size_t n_fixtures;
    const json_t *tables;
    const json_t *load;     /* CSV fixtures: how they load (sqlload.c); else NULL */
    /* "fixture_sha256" (in memory, never in a table): the digest each
     * fixture must have, given by a reader that knows it (the manifest);
     * a fixture with a digest may be a symbolic link (fixture_load) */
    const json_t *fixture_sha;
    const char *reference;  /* NULL when not needed */
    size_t reference_len;
    bool ordered, allow_empty_variants;
    double rel_tol, abs_tol;
    long long step_budget;
    size_t max_rows, max_bytes;
};

/* What the gate learns from reading the text. */
struct query_facts {
    bool mentions_now; /* a 'now' literal or CURRENT_DATE/TIME/TIMESTAMP */
    bool has_limit;    /* the LIMIT keyword, outside strings and comments */
};

/* ---- a fixture set: one connection, its fixtures in turn -------------------- *
 * A prepared check runs the answer on every fixture of the task.  Their
 * databases share one schema (variants of the same tables), so instead of
 * preparing the text on one connection per fixture, a sandbox can open the
 * set (switch_set_make decides when it may) and prepare once: the file
 * the sandbox VFS hands SQLite serves the pages of fixture `cur`, and the
 * runner moves cur between runs.  SQLite notices the move as it notices a
 * file another process changed: each private copy carries its own change
 * counter (header bytes 24-27, and 92-95 so the header's page count stays
 * valid), the pager re-reads it when a read transaction starts (the
 * connection keeps normal locking) and drops its page cache when it
 * differs.  The schema cookie is the same in all, so a prepared statement
 * stays valid, compiled against a schema that is byte for byte the same in
 * every fixture, with no statistics tables (switch_set_make checks): the
 * plan is the one a fresh connection on that fixture would choose. */
struct switch_set {
    size_t n;
    unsigned char **img; /* private copies, change counters patched */
    size_t *len;
};

struct switch_state {
    const struct switch_set *set;
    size_t cur;
};

/* SQLite has no per-connection memory cap, and sqlite3_hard_heap_limit64 is
 * process-wide.  So vat gives SQLite its own allocator (installed before
 * SQLite starts, by the constructor below) that counts, per thread, the
 * bytes requested while a sandboxed query prepares or runs, and refuses
 * the request that would pass the cap: SQLite then fails the query with
 * SQLITE_NOMEM, which the runner reports as sql_budget.  The counts are the
 * sizes SQLite asks for, with a size prefix of our own (xSize never asks
 * the C library), so they are the same in the release and sanitizer
 * builds and on every machine: a function of the query, the fixture and
 * the SQLite version.  This is what bounds preparing (the query
 * flattener, alias and push-down copies of expressions can grow a short
 * query exponentially before a single VM step runs). */
#define SQL_MAX_QUERY_HEAP ((sqlite3_int64)32 << 20)
/* Bytes requested in all while preparing one query (allocations freed
 * again count too): the work of preparing, counted. */
#define SQL_MAX_PREPARE_ALLOC ((sqlite3_int64)128 << 20)
struct mem_count {
    uint64_t gen;                /* 0: not counting on this thread */
    sqlite3_int64 used, cap;     /* bytes held now, and their cap */
    sqlite3_int64 total, total_cap; /* bytes requested since the last reset */
    bool hit;
};

/* printf('%.*c', 2147483647, 'x') loops two billion times inside one VM
 * step (SQLite appends the character once per unit of precision, long
 * after the length limit stopped the output), and instr, replace, LIKE,
 * GLOB and json_patch (each key of one object looked up in the other)
 * cost up to the product of their arguments' lengths per call.  These
 * are replaced, in the sandbox, by wrappers that first check or charge the
 * call and then hand it to SQLite's own function, run on a second, empty
 * connection of the sandbox (so results are SQLite's, byte for byte):
 *  - printf/format refuse a width above the length limit, and a precision
 *    above it on every conversion but the string ones (where it only cuts),
 *    as "too big", which is the verdict SQLite's own function reaches for
 *    the same call when it ends;
 *  - instr, replace, like, glob and json_patch charge the step budget one
 *    step per SQL_CHARGE_BYTES of the product of their lengths. */
#define SQL_CHARGE_BYTES 64
#define SQL_AUX_MAX_ARGS 16

enum aux_fn {
    AUX_PRINTF,
    AUX_INSTR,
    AUX_REPLACE,
    AUX_LIKE,
    AUX_GLOB,
    AUX_JSON_PATCH,
    AUX_STRFTIME,
    AUX_DATE,
    AUX_N
};

struct aux_slot {
    struct sandbox *sb;
    enum aux_fn fn;
};

enum stop_why { STOP_NONE, STOP_STEPS, STOP_TIME };

struct sandbox_name {
    char *name;
    bool module; /* a virtual table module, usable as a table-valued function */
};

struct sandbox {
    sqlite3 *db;
    const json_t *tables;
    struct sandbox_name *names; /* tables, views and modules of the connection */
    size_t n_names;
    bool mentions_now;
    int function_calls;
    bool too_many_functions;
    char denied[160];   /* the first action of the query the authorizer refused */
    char denied_2nd[160]; /* one SQLite takes on the query's behalf (a module's
                           * schema update), reported only when alone */
    /* The check's work so far, in steps: the work of its earlier runs
     * (base), plus what the built-ins charged in this run (charged), plus
     * SQL_PROGRESS_OPS per progress call of this run.  The exact count of
     * a run that ends is its statement's own VM-step count plus charged
     * (sandbox_query). */
    long long steps, step_budget, base, charged;
    struct timespec cpu_deadline; /* of this thread's CPU clock */
    bool cpu_armed;               /* cpu_deadline is set (see budget_reset) */
    unsigned progress_calls;
    enum stop_why stop;
    struct stmt_cache *cache; /* pooled sandboxes only (prepared checks) */
    /* A plain sandbox opened during a draw on a resizeable copy, so the
     * admission's rows-reversed run happens inside it, in a transaction
     * rolled back after the query (sandbox_query_rows_reversed). */
    bool writable;
    /* Our own statements run (sandbox_step_aside): the authorizer lets
     * them be.  A flag, not the authorizer removed and put back: putting
     * it back expires every prepared statement of the connection, and
     * each would be prepared again at its next run. */
    bool aside;
    struct switch_state sw;   /* a fixture set's sandbox: which fixture it sees */
    size_t img_bytes;         /* its private copy of a fixture image (0 on a set) */
    size_t schema_bytes;      /* its connections' schemas, once measured (sandbox_bytes) */
    size_t pooled_bytes;      /* what its pool counts it as (sandbox_bytes) */
    /* The second connection the wrappers of the bounded built-ins run
     * SQLite's own functions on, opened on first use. */
    sqlite3 *aux;
    sqlite3_stmt *aux_stmt[AUX_N][SQL_AUX_MAX_ARGS + 1];
    struct aux_slot slots[AUX_N];
};

/* How a run sees the fixture.  Admission runs the gold query in all three
 * ways: rows that only an unspecified order puts in place (ties in ORDER
 * BY, group_concat without an order, a bare column of an aggregate) then
 * come out differently. */
enum run_mode {
    RUN_PLAIN,
    RUN_REVERSE_SCAN, /* reverse_unordered_selects: scans and indexes backwards */
    RUN_REVERSE_ROWS  /* the task's tables stored in reverse row order */
};

struct sql_val {
    int type; /* SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB, SQLITE_NULL */
    sqlite3_int64 i;
    double d;
    unsigned char *p;
    size_t n;
};

struct rows_block {
    struct rows_block *next;
    size_t used, cap;
    unsigned char data[];
};

struct sql_rows {
    size_t nrow, ncol, cap; /* cap counts values */
    struct sql_val *v;      /* row-major: row r is v[r*ncol .. r*ncol+ncol) */
    struct rows_block *blocks; /* newest first */
};

/* data is own, or, when own is NULL, borrowed from the draw's file memo
 * (fixture_load with borrow: for a use that ends before anything is
 * written). */
struct fixture_img {
    const unsigned char *data;
    size_t n;
    unsigned char *own;
};

/* During a task's draw (the build's file memo is on) the same query runs
 * on the same fixture several times: the gold query by the admission, the
 * runs on every fixture, the confirmation, the trap's arming and the
 * prepared check.  A sandbox keeps the rows of the last few queries that
 * ran to completion on it, by query text, scan order and row limits, and
 * hands a copy to the next run of the same query; the rows are a function
 * of those and the fixture's bytes, which the sandbox is keyed by. */
#define SB_ROWS_MEMO 8
struct rows_memo {
    char *q;
    size_t qlen;
    enum run_mode how; /* the order the rows were computed in */
    size_t max_rows, max_bytes;
    struct sql_rows rows;
    long long work; /* what the run that made the rows cost, in steps */
};

struct sb_cache_entry {
    unsigned char *img;
    size_t n;
    enum run_mode mode;
    long long step_budget;
    json_t *tables; /* own copy: the spec it came from may be gone */
    struct sandbox *sb;
    struct rows_memo memo[SB_ROWS_MEMO];
    size_t nmemo;
};

/* The statements a pooled sandbox keeps, by exact query text, most
 * recent first.  A statement is kept only after it ran to SQLITE_DONE
 * (every gate passed, every budget held) and is reset before it runs
 * again; the budgets are counted afresh on every run. */
#define STMT_CACHE_SIZE 8
struct stmt_cache {
    struct {
        char *q;
        size_t n;
        sqlite3_stmt *stmt;
        size_t bytes; /* the statement's SQLITE_STMTSTATUS_MEMUSED and q's */
    } e[STMT_CACHE_SIZE];
    size_t used;
    size_t bytes; /* of the statements kept (sandbox_bytes) */
};

/* ---- api.c ---- */
int spec_unsafe_path(struct vat_verdict *v, const char *rel);
bool stmt_cache_take(struct stmt_cache *c, const char *q, size_t n, sqlite3_stmt **out);
void stmt_cache_put(struct stmt_cache *c, const char *q, size_t n, sqlite3_stmt *stmt);
/* Runs q on a fresh sandbox over img.  Returns 0, or -1 with *v set. */
void sandbox_rearm(struct sandbox *sb, const struct query_facts *qf);
void sandbox_stmt_cache_reset(struct sandbox *sb);
void sandbox_destroy(struct sandbox *sb);
int sandbox_pool_setup(struct sandbox *sb, bool exclusive, struct vat_verdict *v);

/* ---- gate.c ---- */
bool query_gate(const char *q, size_t n, struct query_facts *qf, struct vat_verdict *v);

/* ---- vfs.c ---- */
extern _Thread_local struct switch_state *switch_opening;
extern pthread_once_t sandbox_vfs_once;
extern int sandbox_vfs_rc;
void sandbox_vfs_init(void);

/* ---- mem.c ---- */
extern pthread_once_t mem_net_once;
extern _Thread_local struct mem_count mem_tls;
void mem_net_init(void);
void mem_count_start(sqlite3_int64 total_cap);
void mem_count_stop(void);

/* ---- functions.c ---- */
extern const char *const aux_names[AUX_N];
bool printf_bounded(const unsigned char *f, sqlite3_value **argv, int argc, long long max);
void sandbox_trim(sqlite3_context *ctx, int argc, sqlite3_value **argv);
int aux_install(struct sandbox *sb);

/* ---- sandbox.c ---- */
extern _Thread_local unsigned long sql_sandbox_opens, sql_sandbox_reimages;
extern const char sandbox_exclusive_sql[];
extern _Thread_local long long sql_last_work;
/* Charges n VM steps to the query; false (budget spent) stops it. */
bool sandbox_charge(struct sandbox *sb, long long n);
void aux_call(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void sandbox_names_free(struct sandbox *sb);
void sandbox_close(struct sandbox *sb);
int sandbox_names(struct sandbox *sb);
int sandbox_reverse_rows(struct sandbox *sb);
unsigned char rollback_byte(unsigned char b);
void rollback_mode(unsigned char *img);
int sandbox_deserialize(struct sandbox *sb, const unsigned char *img, size_t n,
                        unsigned flags);
int sandbox_open(struct sandbox *sb, const unsigned char *img, size_t n,
                 enum run_mode mode, struct vat_verdict *v);
int sandbox_open_switch(struct sandbox *sb, const struct switch_set *set,
                        struct vat_verdict *v);
void rows_release(struct sql_rows *r);
size_t rows_held(const struct sql_rows *r);
unsigned char *rows_bytes(struct sql_rows *r, size_t n);
const struct sql_val *row_at(const struct sql_rows *r, size_t row);
void budget_reset(struct sandbox *sb, long long base);
struct vat_verdict budget_verdict(const struct sql_spec *s, const char *label);
int sandbox_query(struct sandbox *sb, const struct sql_spec *s, const char *label,
                  const char *q, size_t qlen, struct sql_rows *out,
                  struct vat_verdict *v, long long *work);
void sandbox_step_aside(struct sandbox *sb, bool aside);

/* ---- fixtures.c ---- */
bool is_sqlite_image(const void *p, size_t n);
int fixture_load(const char *root, const char *rel, const json_t *load, bool borrow,
                 const char *want, struct fixture_img *img, char raw_sha[65],
                 struct vat_verdict *v);
struct sandbox *sandbox_new(const struct sql_spec *s, const struct query_facts *qf,
                            const struct fixture_img *img, enum run_mode mode,
                            const struct switch_set *set, struct vat_verdict *v);
void rows_copy(struct sql_rows *dst, const struct sql_rows *src);
void memo_release(struct sb_cache_entry *x);
struct rows_memo *memo_find_rows(struct sb_cache_entry *x, const struct sql_spec *s,
                                 const char *q, size_t qlen, enum run_mode how);
void memo_keep_rows(struct sb_cache_entry *x, const struct sql_spec *s, const char *q,
                    size_t qlen, enum run_mode how, const struct sql_rows *rows,
                    long long work);
void sandbox_retire(struct sandbox *sb);
struct sb_cache_entry *sb_cache_find(const struct sql_spec *s,
                                     const struct fixture_img *img, enum run_mode mode);
struct sandbox *sb_cache_take(const struct sql_spec *s, const struct fixture_img *img,
                              enum run_mode mode);
int sandbox_exec_aside(struct sandbox *sb, const char *sql);
int sandbox_run(const struct sql_spec *s, const struct fixture_img *img,
                const char *label, const char *q, size_t qlen,
                const struct query_facts *qf, enum run_mode mode, struct sql_rows *out,
                struct vat_verdict *v, long long *work);

/* ---- compare.c ---- */
json_t *text_json(const unsigned char *p, size_t n);
const char *rows_differ_code(const struct sql_rows *got, const struct sql_rows *exp);
bool rows_agree(const struct sql_rows *got, const struct sql_rows *exp, bool ordered,
                double rel, double abs, const char *label, struct vat_verdict *v);
bool rows_agree_as(const struct sql_rows *got, const struct sql_rows *exp, bool ordered,
                   double rel, double abs, const char *label, bool hide,
                   struct vat_verdict *v);
void hide_run_failure(struct vat_verdict *v, const char *label, bool hide);
json_t *rows_json(const struct sql_rows *r);

#endif

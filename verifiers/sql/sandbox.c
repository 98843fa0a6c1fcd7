/* sandbox.c — one sandboxed connection: opened on a fixture image, its
 * limits, authorizer and progress handler, and a query run on it into
 * result rows within the step, row and byte budgets.
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

/* ---- one sandboxed connection ----------------------------------------------- */

struct stmt_cache;
/* The virtual table modules of a connection: SQLite's own, registered
 * alike on every connection this process opens (vat adds none), so they
 * are listed once, from the first sandbox, instead of once per sandbox. */
static struct sandbox_name *module_names;
static size_t n_module_names;
static _Atomic bool modules_listed;
static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;


bool sandbox_charge(struct sandbox *sb, long long n)
{
    sb->steps += n;
    sb->charged += n;
    if (sb->steps > sb->step_budget) {
        sb->stop = STOP_STEPS;
        return false;
    }
    return true;
}

static int aux_open(struct sandbox *sb)
{
    if (sqlite3_open_v2(":memory:", &sb->aux,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        SANDBOX_VFS_NAME) != SQLITE_OK)
        return -1;
    sqlite3_limit(sb->aux, SQLITE_LIMIT_LENGTH, SQL_MAX_VALUE_BYTES);
    sqlite3_limit(sb->aux, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, SQL_MAX_LIKE_PATTERN);
    sqlite3_limit(sb->aux, SQLITE_LIMIT_FUNCTION_ARG, SQL_AUX_MAX_ARGS);
    return 0;
}

/* Runs SQLite's own function of slot on the sandbox's second connection. */
static void aux_run(struct sandbox *sb, const struct aux_slot *slot, sqlite3_context *ctx,
                    int argc, sqlite3_value **argv);

void aux_call(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    struct aux_slot *slot = sqlite3_user_data(ctx);
    struct sandbox *sb = slot->sb;
    if (argc < 1 || argc > SQL_AUX_MAX_ARGS)
        return; /* printf() is NULL; the others have fixed arities */
    switch (slot->fn) {
    case AUX_PRINTF:
        if (!printf_bounded(sqlite3_value_text(argv[0]), argv, argc, SQL_MAX_VALUE_BYTES)) {
            sqlite3_result_error_toobig(ctx);
            return;
        }
        break;
    case AUX_INSTR:
    case AUX_REPLACE:
    case AUX_LIKE:
    case AUX_GLOB:
    case AUX_JSON_PATCH: {
        long long a = sqlite3_value_bytes(argv[0]);
        long long b = argc > 1 ? sqlite3_value_bytes(argv[1]) : 0;
        if (!sandbox_charge(sb, a * b / SQL_CHARGE_BYTES)) {
            sqlite3_result_error(ctx, "the step budget is spent", -1);
            return;
        }
        break;
    }
    default: /* date and strftime: linear in their arguments, as SQLite's */
        break;
    }
    aux_run(sb, slot, ctx, argc, argv);
}

static void aux_run(struct sandbox *sb, const struct aux_slot *slot, sqlite3_context *ctx,
                    int argc, sqlite3_value **argv)
{
    /* The second connection, opened on a query's first call of a
     * built-in, and its statements, kept between calls, are the sandbox's
     * own: what the calls on it allocate is not counted as the query's
     * (opening and preparing would make a first call count more than a
     * later one).  What they make is at most the length limit, and its
     * copy into the query's result is counted. */
    uint64_t gen = mem_tls.gen;
    mem_tls.gen = 0;
    if (!sb->aux && aux_open(sb) != 0) {
        mem_tls.gen = gen;
        sqlite3_result_error(ctx, "the sandbox cannot run the function", -1);
        return;
    }
    sqlite3_stmt **st = &sb->aux_stmt[slot->fn][argc];
    if (!*st) {
        char sql[160];
        int k = snprintf(sql, sizeof sql, "SELECT %s(", aux_names[slot->fn]);
        for (int i = 1; i <= argc; i++)
            k += snprintf(sql + k, sizeof sql - (size_t)k, "%s?%d", i > 1 ? "," : "", i);
        snprintf(sql + k, sizeof sql - (size_t)k, ")");
        if (sqlite3_prepare_v2(sb->aux, sql, -1, st, NULL) != SQLITE_OK) {
            mem_tls.gen = gen;
            sqlite3_result_error(ctx, sqlite3_errmsg(sb->aux), -1);
            return;
        }
    }
    for (int i = 0; i < argc; i++)
        sqlite3_bind_value(*st, i + 1, argv[i]);
    int rc = sqlite3_step(*st);
    mem_tls.gen = gen;
    if (rc == SQLITE_ROW)
        sqlite3_result_value(ctx, sqlite3_column_value(*st, 0));
    else if ((rc & 0xff) == SQLITE_TOOBIG)
        sqlite3_result_error_toobig(ctx);
    else if ((rc & 0xff) == SQLITE_NOMEM)
        sqlite3_result_error_nomem(ctx);
    else
        sqlite3_result_error(ctx, sqlite3_errmsg(sb->aux), -1);
    mem_tls.gen = 0;
    sqlite3_reset(*st);
    sqlite3_clear_bindings(*st);
    mem_tls.gen = gen;
}

static const char *const denied_functions[] = {
    "random", "randomblob", "changes", "total_changes", "last_insert_rowid",
    "load_extension", "current_date", "current_time", "current_timestamp",
    "fts3_tokenizer", "fts5", "fts5_source_id", "rtreenode", "rtreedepth", "rtreecheck",
    NULL,
};

/* Date and time functions read the clock when given 'now' (or nothing). */
static const char *const clock_functions[] = {
    "date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff", NULL,
};

static bool in_list(const char *const *list, const char *name)
{
    for (size_t i = 0; list[i]; i++)
        if (sqlite3_stricmp(list[i], name) == 0)
            return true;
    return false;
}

static bool table_allowed(const json_t *tables, const char *name)
{
    if (!name || sqlite3_strnicmp(name, "sqlite_", 7) == 0)
        return false;
    for (size_t i = 0; i < json_array_size(tables); i++)
        if (sqlite3_stricmp(json_string_value(json_array_get(tables, i)), name) == 0)
            return true;
    return false;
}

/* A FROM item whose columns are not read reaches the authorizer by the
 * name written in the query, so a CTE looks like a table there.  It is a
 * CTE when no table, view or module of the connection has that name. */
static bool is_cte_name(const struct sandbox *sb, const char *name)
{
    if (!name || sqlite3_strnicmp(name, "sqlite_", 7) == 0 ||
        sqlite3_strnicmp(name, "pragma_", 7) == 0)
        return false;
    for (size_t i = 0; i < sb->n_names; i++)
        if (sqlite3_stricmp(sb->names[i].name, name) == 0)
            return false;
    for (size_t i = 0; i < n_module_names; i++)
        if (sqlite3_stricmp(module_names[i].name, name) == 0)
            return false;
    return true;
}

static const char *action_name(int action)
{
    switch (action) {
    case SQLITE_CREATE_INDEX: return "create index";
    case SQLITE_CREATE_TABLE: return "create table";
    case SQLITE_CREATE_TEMP_INDEX: return "create temp index";
    case SQLITE_CREATE_TEMP_TABLE: return "create temp table";
    case SQLITE_CREATE_TEMP_TRIGGER: return "create temp trigger";
    case SQLITE_CREATE_TEMP_VIEW: return "create temp view";
    case SQLITE_CREATE_TRIGGER: return "create trigger";
    case SQLITE_CREATE_VIEW: return "create view";
    case SQLITE_DELETE: return "delete from";
    case SQLITE_DROP_INDEX: return "drop index";
    case SQLITE_DROP_TABLE: return "drop table";
    case SQLITE_DROP_TEMP_INDEX: return "drop temp index";
    case SQLITE_DROP_TEMP_TABLE: return "drop temp table";
    case SQLITE_DROP_TEMP_TRIGGER: return "drop temp trigger";
    case SQLITE_DROP_TEMP_VIEW: return "drop temp view";
    case SQLITE_DROP_TRIGGER: return "drop trigger";
    case SQLITE_DROP_VIEW: return "drop view";
    case SQLITE_INSERT: return "insert into";
    case SQLITE_PRAGMA: return "pragma";
    case SQLITE_TRANSACTION: return "transaction";
    case SQLITE_UPDATE: return "update of";
    case SQLITE_ATTACH: return "attach";
    case SQLITE_DETACH: return "detach";
    case SQLITE_ALTER_TABLE: return "alter table";
    case SQLITE_REINDEX: return "reindex";
    case SQLITE_ANALYZE: return "analyze";
    case SQLITE_CREATE_VTABLE: return "create virtual table";
    case SQLITE_DROP_VTABLE: return "drop virtual table";
    case SQLITE_SAVEPOINT: return "savepoint";
    default: return "statement";
    }
}

static int deny(struct sandbox *sb, const char *what, const char *name)
{
    bool implied = name && sqlite3_strnicmp(name, "sqlite_", 7) == 0 &&
                   strcmp(what, "reading table") != 0;
    char *slot = implied ? sb->denied_2nd : sb->denied;
    if (!slot[0])
        snprintf(slot, sizeof sb->denied, name ? "%s '%s'" : "%s", what, name);
    return SQLITE_DENY;
}

/* Connecting a table-valued function (json_each, pragma_table_info, …)
 * makes SQLite update its schema table, and that is the action denied
 * before the function itself is seen: name the function instead. */
static void implied_module(struct sandbox *sb, const char *q, size_t n)
{
    for (size_t pos = 0;;) {
        struct vat_sql_tok t = vat_sql_next_tok(q, n, &pos);
        if (t.kind == VAT_SQL_TOK_END)
            return;
        if (t.kind != VAT_SQL_TOK_WORD)
            continue;
        bool module = t.len > 7 && sqlite3_strnicmp(q + t.off, "pragma_", 7) == 0;
        for (size_t i = 0; i < n_module_names && !module; i++)
            module = strlen(module_names[i].name) == t.len &&
                     sqlite3_strnicmp(module_names[i].name, q + t.off, (int)t.len) == 0;
        if (module) {
            snprintf(sb->denied, sizeof sb->denied, "the table-valued function '%.*s'",
                     (int)(t.len < 64 ? t.len : 64), q + t.off);
            return;
        }
    }
}

static const char *denied_text(const struct sandbox *sb)
{
    return sb->denied[0] ? sb->denied : sb->denied_2nd[0] ? sb->denied_2nd : NULL;
}

/* The allow-list: SELECT, RECURSIVE, READ of the task's tables in the main
 * schema, and functions other than the nondeterministic ones. */
static int sandbox_authorize(void *arg, int action, const char *a3, const char *a4,
                             const char *dbname, const char *inner)
{
    struct sandbox *sb = arg;
    (void)inner;
    if (sb->aside)
        return SQLITE_OK;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;
    case SQLITE_READ:
        if (table_allowed(sb->tables, a3) && (!dbname || strcmp(dbname, "main") == 0))
            return SQLITE_OK;
        if (a4 && !a4[0] && !dbname && is_cte_name(sb, a3))
            return SQLITE_OK;
        return deny(sb, "reading table", a3 ? a3 : "?");
    case SQLITE_FUNCTION:
        if (!a4)
            return deny(sb, "an unnamed function", NULL);
        if (++sb->function_calls > SQL_MAX_FUNCTION_CALLS) {
            sb->too_many_functions = true;
            return SQLITE_DENY;
        }
        if (in_list(denied_functions, a4) || sqlite3_strnicmp(a4, "sqlite_", 7) == 0)
            return deny(sb, "the nondeterministic or unsafe function", a4);
        if (sb->mentions_now && in_list(clock_functions, a4))
            return deny(sb, "reading the clock ('now' or CURRENT_*) with", a4);
        return SQLITE_OK;
    default:
        return deny(sb, action_name(action), a3);
    }
}

static int sandbox_progress(void *arg)
{
    struct sandbox *sb = arg;
    sb->steps += SQL_PROGRESS_OPS;
    if (sb->steps > sb->step_budget) {
        sb->stop = STOP_STEPS;
        return 1;
    }
    if (++sb->progress_calls % SQL_CPU_CHECK_EVERY != 0)
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    if (!sb->cpu_armed) {
        /* the first reading starts the net: SQL_CPU_MS from here */
        sb->cpu_deadline = now;
        sb->cpu_deadline.tv_sec += SQL_CPU_MS / 1000;
        sb->cpu_deadline.tv_nsec += (long)(SQL_CPU_MS % 1000) * 1000000L;
        if (sb->cpu_deadline.tv_nsec >= 1000000000L) {
            sb->cpu_deadline.tv_sec++;
            sb->cpu_deadline.tv_nsec -= 1000000000L;
        }
        sb->cpu_armed = true;
        return 0;
    }
    if (now.tv_sec > sb->cpu_deadline.tv_sec ||
        (now.tv_sec == sb->cpu_deadline.tv_sec && now.tv_nsec >= sb->cpu_deadline.tv_nsec)) {
        sb->stop = STOP_TIME;
        return 1;
    }
    return 0;
}

static const struct {
    int id, value;
} sandbox_limits[] = {
    {SQLITE_LIMIT_LENGTH, SQL_MAX_VALUE_BYTES},
    {SQLITE_LIMIT_SQL_LENGTH, VAT_MAX_ANSWER_BYTES},
    {SQLITE_LIMIT_COLUMN, 100},
    {SQLITE_LIMIT_EXPR_DEPTH, 200},
    {SQLITE_LIMIT_COMPOUND_SELECT, 20},
    {SQLITE_LIMIT_VDBE_OP, 25000},
    {SQLITE_LIMIT_FUNCTION_ARG, 16},
    {SQLITE_LIMIT_ATTACHED, 0},
    {SQLITE_LIMIT_LIKE_PATTERN_LENGTH, SQL_MAX_LIKE_PATTERN},
    {SQLITE_LIMIT_VARIABLE_NUMBER, 0},
    {SQLITE_LIMIT_TRIGGER_DEPTH, 0},
    {SQLITE_LIMIT_WORKER_THREADS, 0},
};

static const struct {
    int op, value;
} sandbox_config[] = {
    {SQLITE_DBCONFIG_DEFENSIVE, 1},
    {SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0},
    {SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0},
    {SQLITE_DBCONFIG_ENABLE_TRIGGER, 0},
    {SQLITE_DBCONFIG_ENABLE_VIEW, 0},
    {SQLITE_DBCONFIG_DQS_DML, 0},
    {SQLITE_DBCONFIG_DQS_DDL, 0},
    {SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0},
    {SQLITE_DBCONFIG_WRITABLE_SCHEMA, 0},
};

void sandbox_names_free(struct sandbox *sb)
{
    for (size_t i = 0; i < sb->n_names; i++)
        free(sb->names[i].name);
    free(sb->names);
    sb->names = NULL;
    sb->n_names = 0;
}

void sandbox_close(struct sandbox *sb)
{
    for (size_t f = 0; f < AUX_N; f++)
        for (size_t k = 0; k <= SQL_AUX_MAX_ARGS; k++) {
            sqlite3_finalize(sb->aux_stmt[f][k]);
            sb->aux_stmt[f][k] = NULL;
        }
    if (sb->aux)
        sqlite3_close_v2(sb->aux);
    sb->aux = NULL;
    if (sb->db)
        sqlite3_close_v2(sb->db);
    sb->db = NULL;
    sandbox_names_free(sb);
}

/* Appends the first column of every row of sql to *names (each marked
 * module or not).  0, or -1 (what was read stays). */
static int read_names(sqlite3 *db, const char *sql, bool module, struct sandbox_name **names,
                      size_t *n)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    size_t cap = *n;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!name)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            *names = vat_xrealloc(*names, cap * sizeof **names);
        }
        (*names)[*n].name = vat_xstrdup(name);
        (*names)[(*n)++].module = module;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int list_modules(sqlite3 *db)
{
    if (modules_listed)
        return 0;
    pthread_mutex_lock(&modules_lock);
    int rc = 0;
    if (!modules_listed) {
        rc = read_names(db, "SELECT name FROM pragma_module_list", true, &module_names,
                        &n_module_names);
        if (rc == 0) {
            modules_listed = true;
        } else { /* a partial list is not kept: the next sandbox tries again */
            for (size_t i = 0; i < n_module_names; i++)
                free(module_names[i].name);
            free(module_names);
            module_names = NULL;
            n_module_names = 0;
        }
    }
    pthread_mutex_unlock(&modules_lock);
    return rc;
}

/* Collects the names is_cte_name() must not take for CTEs: the fixture's
 * tables and views (the modules are in module_names). */
int sandbox_names(struct sandbox *sb)
{
    if (list_modules(sb->db) != 0)
        return -1;
    return read_names(sb->db, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')",
                      false, &sb->names, &sb->n_names);
}

/* A row value copied out of a statement (text and blob bytes in a block
 * of the caller's, by offset). */
struct copied_val {
    int type;
    sqlite3_int64 i;
    double d;
    size_t off, n;
};

/* Rewrites each of the task's rowid tables with its rows in reverse order
 * (new rowids, same values): the rows are read out, the table emptied and
 * the rows put back last first, with no schema change (which would make
 * SQLite parse the whole schema again).  Tables without a rowid, or whose
 * rowid is their INTEGER PRIMARY KEY, keep their order: it is their key's.
 * Returns 0, or -1 when the copy is left in an unknown state. */
int sandbox_reverse_rows(struct sandbox *sb)
{
    for (size_t i = 0; i < json_array_size(sb->tables); i++) {
        const char *t = json_string_value(json_array_get(sb->tables, i));
        char *sel = sqlite3_mprintf("SELECT * FROM main.\"%w\" ORDER BY rowid DESC", t);
        sqlite3_stmt *st = NULL;
        int rc = sel ? sqlite3_prepare_v2(sb->db, sel, -1, &st, NULL) : SQLITE_NOMEM;
        sqlite3_free(sel);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(st);
            continue; /* no such table (the query will say so) or no rowid */
        }
        /* The rows are copied as typed values, their bytes into one block
         * bound in place (SQLITE_STATIC): no value is allocated, copied
         * again by a bind and freed one by one. */
        int ncol = sqlite3_column_count(st);
        size_t nval = 0, cap = 0;
        struct copied_val *val = NULL;
        struct vat_buf bytes = VAT_BUF_INIT;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            for (int c = 0; c < ncol; c++) {
                if (nval == cap) {
                    cap = cap ? 2 * cap : 256;
                    val = vat_xrealloc(val, cap * sizeof *val);
                }
                struct copied_val *x = &val[nval++];
                *x = (struct copied_val){.type = sqlite3_column_type(st, c)};
                switch (x->type) {
                case SQLITE_INTEGER: x->i = sqlite3_column_int64(st, c); break;
                case SQLITE_FLOAT: x->d = sqlite3_column_double(st, c); break;
                case SQLITE_TEXT:
                case SQLITE_BLOB: {
                    const void *p = x->type == SQLITE_TEXT
                                        ? (const void *)sqlite3_column_text(st, c)
                                        : sqlite3_column_blob(st, c);
                    x->n = (size_t)sqlite3_column_bytes(st, c);
                    x->off = bytes.len;
                    if (x->n)
                        vat_buf_putn(&bytes, p, x->n);
                    break;
                }
                default: break;
                }
            }
        sqlite3_finalize(st);
        bool copied = rc == SQLITE_DONE && ncol > 0;
        sqlite3_stmt *ins = NULL;
        if (copied) {
            struct vat_buf q = VAT_BUF_INIT;
            char *head = sqlite3_mprintf("INSERT INTO main.\"%w\" VALUES (", t);
            vat_buf_puts(&q, head ? head : "");
            sqlite3_free(head);
            for (int c = 0; c < ncol; c++)
                vat_buf_puts(&q, c ? ", ?" : "?");
            vat_buf_putc(&q, ')');
            char *del = sqlite3_mprintf("SAVEPOINT vat_reverse; DELETE FROM main.\"%w\"", t);
            copied = del && sqlite3_exec(sb->db, del, NULL, NULL, NULL) == SQLITE_OK;
            sqlite3_free(del);
            copied = copied && sqlite3_prepare_v2(sb->db, q.data, -1, &ins, NULL) == SQLITE_OK;
            vat_buf_release(&q);
            static const char empty[1] = "";
            for (size_t r = 0; copied && r < nval; r += (size_t)ncol) {
                for (int c = 0; c < ncol && copied; c++) {
                    const struct copied_val *x = &val[r + (size_t)c];
                    int brc;
                    switch (x->type) {
                    case SQLITE_INTEGER: brc = sqlite3_bind_int64(ins, c + 1, x->i); break;
                    case SQLITE_FLOAT: brc = sqlite3_bind_double(ins, c + 1, x->d); break;
                    case SQLITE_TEXT:
                        brc = sqlite3_bind_text64(ins, c + 1, x->n ? bytes.data + x->off : empty,
                                                  x->n, SQLITE_STATIC, SQLITE_UTF8);
                        break;
                    case SQLITE_BLOB:
                        /* a NULL pointer would bind NULL, not an empty blob */
                        brc = sqlite3_bind_blob64(ins, c + 1, x->n ? bytes.data + x->off : empty,
                                                  x->n, SQLITE_STATIC);
                        break;
                    default: brc = sqlite3_bind_null(ins, c + 1); break;
                    }
                    copied = brc == SQLITE_OK;
                }
                copied = copied && sqlite3_step(ins) == SQLITE_DONE &&
                         sqlite3_reset(ins) == SQLITE_OK;
            }
            sqlite3_finalize(ins);
            /* A table this cannot copy (generated columns, say) keeps its
             * order. */
            if (copied)
                copied = sqlite3_exec(sb->db, "RELEASE vat_reverse", NULL, NULL, NULL) ==
                         SQLITE_OK;
            else if (sqlite3_get_autocommit(sb->db) == 0 &&
                     sqlite3_exec(sb->db, "ROLLBACK TO vat_reverse; RELEASE vat_reverse", NULL,
                                  NULL, NULL) != SQLITE_OK)
                rc = -1;
        }
        free(val);
        vat_buf_release(&bytes);
        if (rc == -1)
            return -1;
    }
    return 0;
}

static int sandbox_fail(struct sandbox *sb, struct vat_verdict *v, const char *what)
{
    struct vat_reason r = {{0}, 0};
    vat_reason_esc_printf(&r, "cannot set up the sql sandbox: %s", what);
    if (sb->db) {
        vat_reason_esc_puts(&r, ": ");
        vat_reason_esc_puts(&r, sqlite3_errmsg(sb->db));
    }
    sandbox_close(sb);
    *v = vat_reason_verdict(false, 0, VAT_INTERNAL, &r);
    return -1;
}

/* Opens a fresh connection on its own copy of the fixture image, hardened
 * and with the authorizer installed, seeing the fixture as mode says.
 * Returns 0, or -1 with *v internal (and sb closed). */
static int sandbox_harden(struct sandbox *sb, enum run_mode mode, struct vat_verdict *v);

/* A sandbox cannot run a WAL-mode image in memory; header bytes 18 and 19
 * read 1 for 2 make it read in rollback mode (the pages are the same). */
unsigned char rollback_byte(unsigned char b)
{
    return b == 2 ? 1 : b;
}

void rollback_mode(unsigned char *img)
{
    img[18] = rollback_byte(img[18]);
    img[19] = rollback_byte(img[19]);
}

_Thread_local unsigned long sql_sandbox_opens, sql_sandbox_reimages;

/* Loads the schema (before the limits and the authorizer apply to it). */
static const char sandbox_schema_sql[] = "SELECT count(*) FROM sqlite_schema";
/* A sandbox on a fixture image is its copy's only user: it keeps its page
 * cache across statements instead of re-reading the image each time. */
const char sandbox_exclusive_sql[] = "PRAGMA locking_mode=EXCLUSIVE";

/* Puts a private copy of the n bytes at img under sb's main database, read
 * in rollback mode; flags adds SQLITE_DESERIALIZE_RESIZEABLE or _READONLY.
 * SQLITE_OK, SQLITE_NOMEM, or SQLite's failure. */
int sandbox_deserialize(struct sandbox *sb, const unsigned char *img, size_t n,
                        unsigned flags)
{
    unsigned char *copy = sqlite3_malloc64(n);
    if (!copy)
        return SQLITE_NOMEM;
    memcpy(copy, img, n);
    sb->img_bytes = n;
    rollback_mode(copy);
    return sqlite3_deserialize(sb->db, "main", copy, (sqlite3_int64)n, (sqlite3_int64)n,
                               SQLITE_DESERIALIZE_FREEONCLOSE | flags);
}

int sandbox_open(struct sandbox *sb, const unsigned char *img, size_t n,
                 enum run_mode mode, struct vat_verdict *v)
{
    pthread_once(&sandbox_vfs_once, sandbox_vfs_init);
    if (sandbox_vfs_rc != SQLITE_OK)
        return sandbox_fail(sb, v, "cannot register its vfs");
    sql_sandbox_opens++;
    if (sqlite3_open_v2(":memory:", &sb->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        SANDBOX_VFS_NAME) != SQLITE_OK)
        return sandbox_fail(sb, v, "cannot open a connection");
    /* Only the admission's reversed copy is written, by us, before the
     * authorizer is installed. */
    int rc = sandbox_deserialize(sb, img, n,
                                 mode == RUN_REVERSE_ROWS || sb->writable
                                     ? SQLITE_DESERIALIZE_RESIZEABLE
                                     : SQLITE_DESERIALIZE_READONLY);
    if (rc == SQLITE_NOMEM)
        return sandbox_fail(sb, v, "out of memory");
    if (rc != SQLITE_OK)
        return sandbox_fail(sb, v, "cannot load the fixture");
    return sandbox_harden(sb, mode, v);
}

/* Opens a sandbox on a fixture set (switch_set_make): one connection, read
 * only, that sees fixture sb->sw.cur of the set, and is as hardened as
 * sandbox_open's.  Returns 0, or -1 with *v internal (and sb closed). */
int sandbox_open_switch(struct sandbox *sb, const struct switch_set *set,
                        struct vat_verdict *v)
{
    pthread_once(&sandbox_vfs_once, sandbox_vfs_init);
    if (sandbox_vfs_rc != SQLITE_OK)
        return sandbox_fail(sb, v, "cannot register its vfs");
    sb->sw.set = set;
    sb->sw.cur = 0;
    switch_opening = &sb->sw;
    int rc = sqlite3_open_v2("vat-fixture-set", &sb->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                             SANDBOX_VFS_NAME);
    bool taken = switch_opening == NULL;
    switch_opening = NULL;
    if (rc != SQLITE_OK || !taken)
        return sandbox_fail(sb, v, "cannot open the fixture set");
    return sandbox_harden(sb, RUN_PLAIN, v);
}

/* Sets up a connection just opened on the fixture: options, limits, the
 * bounded built-ins, the authorizer and the progress handler (and, for
 * RUN_REVERSE_ROWS, the rows reversed first).  0, or -1 with *v internal
 * (and sb closed). */
static int sandbox_harden(struct sandbox *sb, enum run_mode mode, struct vat_verdict *v)
{
    for (size_t i = 0; i < sizeof sandbox_config / sizeof sandbox_config[0]; i++)
        if (sqlite3_db_config(sb->db, sandbox_config[i].op, sandbox_config[i].value, NULL) !=
            SQLITE_OK)
            return sandbox_fail(sb, v, "a connection option was refused");
    /* File temp storage sends spills to the VFS, which refuses them;
     * in-memory temp storage would let a sort grow without bound.  (A
     * backwards scan turns the second pragma on per query: sandbox_run.) */
    const char *setup = "PRAGMA temp_store=FILE; PRAGMA reverse_unordered_selects=OFF";
    if (sqlite3_exec(sb->db, setup, NULL, NULL, NULL) != SQLITE_OK)
        return sandbox_fail(sb, v, "a pragma failed");
    if (sqlite3_exec(sb->db, sandbox_schema_sql, NULL, NULL, NULL) !=
        SQLITE_OK)
        return sandbox_fail(sb, v, "the fixture is not a readable sqlite database");
    if (mode == RUN_REVERSE_ROWS && sandbox_reverse_rows(sb) != 0)
        return sandbox_fail(sb, v, "cannot reverse the fixture's rows");
    if (sandbox_names(sb) != 0)
        return sandbox_fail(sb, v, "cannot list the fixture's tables");
    for (size_t i = 0; i < sizeof sandbox_limits / sizeof sandbox_limits[0]; i++)
        sqlite3_limit(sb->db, sandbox_limits[i].id, sandbox_limits[i].value);
    static const struct {
        const char *name;
        intptr_t flags;
    } trims[] = {{"ltrim", 1}, {"rtrim", 2}, {"trim", 3}};
    for (size_t i = 0; i < 3; i++)
        if (sqlite3_create_function_v2(sb->db, trims[i].name, 2,
                                       SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                       (void *)trims[i].flags, sandbox_trim, NULL, NULL,
                                       NULL) != SQLITE_OK)
            return sandbox_fail(sb, v, "cannot install trim");
    if (aux_install(sb) != 0)
        return sandbox_fail(sb, v, "cannot install the bounded built-ins");
    /* The optimisations that copy an expression into every place that
     * reads it (flattening a subquery into its parent, pushing a WHERE term
     * down into one, propagating constants) are off: through nested
     * subqueries their copies multiply.  Results are the same; only the
     * plan differs. */
    sqlite3_test_control(SQLITE_TESTCTRL_OPTIMIZATIONS, sb->db, SQL_OFF_OPTIMIZATIONS);
    if (sqlite3_set_authorizer(sb->db, sandbox_authorize, sb) != SQLITE_OK)
        return sandbox_fail(sb, v, "cannot install the authorizer");
    sqlite3_progress_handler(sb->db, SQL_PROGRESS_OPS, sandbox_progress, sb);
    return 0;
}

/* ---- result rows -------------------------------------------------------------- */

/* Text and blob bytes of a result live in blocks that never move (a value
 * points into one), so taking a row allocates only when a block fills. */
#define SQL_ROWS_BLOCK 4096
void rows_release(struct sql_rows *r)
{
    for (struct rows_block *b = r->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* n bytes for a value of r, in its newest block or a new one. */
/* The bytes rows r holds: its values and their text blocks. */
size_t rows_held(const struct sql_rows *r)
{
    size_t n = r->cap * sizeof *r->v;
    for (const struct rows_block *b = r->blocks; b; b = b->next)
        n += sizeof *b + b->cap;
    return n;
}

unsigned char *rows_bytes(struct sql_rows *r, size_t n)
{
    struct rows_block *b = r->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > SQL_ROWS_BLOCK ? n : SQL_ROWS_BLOCK;
        b = vat_xmalloc(sizeof *b + cap);
        b->next = r->blocks;
        b->used = 0;
        b->cap = cap;
        r->blocks = b;
    }
    unsigned char *p = b->data + b->used;
    b->used += n;
    return p;
}

const struct sql_val *row_at(const struct sql_rows *r, size_t row)
{
    return r->v + row * r->ncol;
}

/* Appends the current row of stmt; returns the bytes it adds. */
static size_t rows_take(struct sql_rows *r, sqlite3_stmt *stmt)
{
    if ((r->nrow + 1) * r->ncol > r->cap) {
        r->cap = r->cap ? r->cap * 2 : r->ncol * 16;
        r->v = vat_xrealloc(r->v, r->cap * sizeof *r->v);
    }
    struct sql_val *row = r->v + r->nrow * r->ncol;
    size_t bytes = 0;
    for (size_t c = 0; c < r->ncol; c++) {
        struct sql_val *x = &row[c];
        memset(x, 0, sizeof *x);
        x->type = sqlite3_column_type(stmt, (int)c);
        switch (x->type) {
        case SQLITE_INTEGER:
            x->i = sqlite3_column_int64(stmt, (int)c);
            bytes += 8;
            break;
        case SQLITE_FLOAT:
            x->d = sqlite3_column_double(stmt, (int)c);
            bytes += 8;
            break;
        case SQLITE_TEXT:
        case SQLITE_BLOB: {
            const void *src = x->type == SQLITE_TEXT
                                  ? (const void *)sqlite3_column_text(stmt, (int)c)
                                  : sqlite3_column_blob(stmt, (int)c);
            x->n = (size_t)sqlite3_column_bytes(stmt, (int)c);
            x->p = rows_bytes(r, x->n + 1);
            if (x->n)
                memcpy(x->p, src, x->n);
            x->p[x->n] = 0;
            bytes += x->n;
            break;
        }
        default:
            x->type = SQLITE_NULL;
            bytes += 1;
        }
    }
    r->nrow++;
    return bytes;
}

/* Starts the step count and the CPU-time net afresh.  The net's clock is
 * first read at the first CPU check (SQL_CPU_CHECK_EVERY progress calls
 * in), not here: most statements end long before it, and reading the
 * thread's CPU clock is a syscall per statement otherwise.  The net so
 * starts at most 100,000 VM steps late, nothing beside SQL_CPU_MS. */
void budget_reset(struct sandbox *sb, long long base)
{
    sb->steps = base;
    sb->base = base;
    sb->charged = 0;
    sb->stop = STOP_NONE;
    sb->progress_calls = 0;
    sb->cpu_armed = false;
}

static _Thread_local unsigned long sql_runs, sql_compiles;
/* The work of this thread's last check of an answer (vat_sql_last_work). */
_Thread_local long long sql_last_work;

long long vat_sql_last_work(void)
{
    return sql_last_work;
}

unsigned long vat_sql_runs(void)
{
    return sql_runs;
}

unsigned long vat_sql_compiles(void)
{
    return sql_compiles;
}

unsigned long vat_sql_sandbox_opens(void)
{
    return sql_sandbox_opens;
}

unsigned long vat_sql_sandbox_reimages(void)
{
    return sql_sandbox_reimages;
}

/* The verdict of a check whose work passed its budget. */
struct vat_verdict budget_verdict(const struct sql_spec *s, const char *label)
{
    return vat_reason_verdictf(
        true, VAT_SQL_BUDGET,
        "fixture %s: the check ran past its budget of %lld steps (all fixtures "
        "together)",
        label, s->step_budget);
}

/* Runs one query on an open sandbox into *out, as part of a check whose
 * work so far is *work (steps: see struct sandbox); *work comes back with
 * this run's work added, exactly: the statement's VM steps and what the
 * built-ins charged, counted the same whether the statement was prepared
 * now or reused, however warm the connection.  A check whose work passes
 * s->step_budget, at a progress call or when the run ends, gets
 * sql_budget, and *work comes back as the budget plus one.  Gate failures
 * (parse, denied, more than one statement, not a query) come back with no
 * label; runtime failures (budget, error) name the fixture by label.
 * Returns 0, or -1 with *v set. */
/* Prepares q on sb and passes it through the gate SQLite's own parse
 * allows: one statement, no EXPLAIN, read only with columns, no
 * parameters.  0 with *stmt, or -1 with *v. */
static int query_prepare(struct sandbox *sb, const char *q, size_t qlen, sqlite3_stmt **stmt,
                         struct vat_verdict *v)
{
    const char *tail = NULL;
    struct vat_reason r = {{0}, 0};
    int rc;
    mem_count_start(SQL_MAX_PREPARE_ALLOC);
    rc = sqlite3_prepare_v3(sb->db, q, (int)qlen, 0, stmt, &tail);
    if (rc != SQLITE_OK) {
        mem_count_stop();
        if (mem_tls.hit) {
            *v = vat_reason_verdictf(
                true, VAT_SQL_BUDGET,
                "preparing the query needs more than the sandbox's %lld MiB of "
                "memory or %lld MiB of allocations",
                (long long)(SQL_MAX_QUERY_HEAP >> 20), (long long)(SQL_MAX_PREPARE_ALLOC >> 20));
        } else if ((rc & 0xff) == SQLITE_NOMEM) {
            *v = vat_reason_verdictf(
                true, VAT_CHECKER_LIMIT,
                "the checker ran out of memory preparing the query (process-wide "
                "SQLite heap net)");
        } else if (sb->too_many_functions) {
            *v = vat_reason_verdictf(true, VAT_SQL_BUDGET,
                                     "the query makes more than %d function calls",
                                     SQL_MAX_FUNCTION_CALLS);
        } else if (denied_text(sb)) {
            if (!sb->denied[0])
                implied_module(sb, q, qlen);
            vat_reason_esc_puts(&r, "the sandbox denies ");
            vat_reason_esc(&r, denied_text(sb), strlen(denied_text(sb)), 120);
            *v = vat_reason_verdict(false, 0, VAT_SQL_DENIED, &r);
        } else {
            vat_reason_esc_puts(&r, "sqlite cannot prepare the query: ");
            vat_reason_esc_puts(&r, sqlite3_errmsg(sb->db));
            *v = vat_reason_verdict(false, 0, VAT_PARSE, &r);
        }
        sqlite3_finalize(*stmt);
        return -1;
    }
    mem_count_stop();
    sql_compiles++;
    if (!*stmt) {
        *v = vat_reason_verdictf(false, VAT_PARSE, "the answer holds no SQL statement");
        return -1;
    }
    size_t pos = (size_t)(tail - q);
    struct vat_sql_tok t;
    do
        t = vat_sql_next_tok(q, qlen, &pos);
    while (t.kind == VAT_SQL_TOK_SEMI);
    if (t.kind != VAT_SQL_TOK_END) {
        vat_reason_esc_puts(&r, "the answer holds more than one statement: '");
        vat_reason_esc(&r, q + t.off, qlen - t.off, 40);
        vat_reason_esc_puts(&r, "' follows the first");
        *v = vat_reason_verdict(false, 0, VAT_SQL_MULTI, &r);
        sqlite3_finalize(*stmt);
        return -1;
    }
    if (sqlite3_stmt_isexplain(*stmt)) {
        *v = vat_reason_verdictf(false, VAT_SQL_DENIED, "the sandbox denies EXPLAIN");
        sqlite3_finalize(*stmt);
        return -1;
    }
    if (!sqlite3_stmt_readonly(*stmt) || sqlite3_column_count(*stmt) == 0) {
        *v = vat_reason_verdictf(false, VAT_SQL_NOT_SELECT,
                                 "the answer must be one SELECT statement");
        sqlite3_finalize(*stmt);
        return -1;
    }
    if (sqlite3_bind_parameter_count(*stmt) > 0) {
        *v = vat_reason_verdictf(false, VAT_SQL_DENIED, "the sandbox denies query parameters");
        sqlite3_finalize(*stmt);
        return -1;
    }
    return 0;
}

/* The verdict of a query that stopped with rc before its end, on
 * fixture label. */
static void query_failure(struct sandbox *sb, const char *label, int rc, struct vat_verdict *v)
{
    struct vat_reason r = {{0}, 0};
    if (mem_tls.hit) {
        *v = vat_reason_verdictf(
            true, VAT_SQL_BUDGET,
            "fixture %s: the query needs more than the sandbox's %lld MiB of memory", label,
            (long long)(SQL_MAX_QUERY_HEAP >> 20));
        return;
    }
    switch (rc & 0xff) {
    case SQLITE_INTERRUPT:
        /* Only the CPU net interrupts without stop == STOP_STEPS. */
        *v = vat_reason_verdictf(
            true, VAT_CHECKER_LIMIT,
            "fixture %s: the checker's last-resort net of %d ms of CPU time stopped "
            "the query",
            label, SQL_CPU_MS);
        break;
    case SQLITE_TOOBIG:
        *v = vat_reason_verdictf(
            true, VAT_SQL_BUDGET,
            "fixture %s: a value or row exceeds the sandbox's %d-byte length limit", label,
            SQL_MAX_VALUE_BYTES);
        break;
    case SQLITE_FULL:
        *v = vat_reason_verdictf(
            true, VAT_SQL_BUDGET,
            "fixture %s: the query needs more temporary storage than the sandbox "
            "allows",
            label);
        break;
    case SQLITE_NOMEM:
        /* Not the counted cap (mem_tls.hit is false): the process-wide net
         * or the machine itself. */
        *v = vat_reason_verdictf(true, VAT_CHECKER_LIMIT,
                                 "fixture %s: the checker ran out of memory running the query",
                                 label);
        break;
    case SQLITE_AUTH:
        vat_reason_esc_puts(&r, "the sandbox denies ");
        vat_reason_esc_puts(&r, denied_text(sb) ? denied_text(sb) : "an action of the query");
        *v = vat_reason_verdict(false, 0, VAT_SQL_DENIED, &r);
        break;
    default:
        vat_reason_esc_printf(&r, "fixture %s: the query fails: ", label);
        vat_reason_esc_puts(&r, sqlite3_errmsg(sb->db));
        *v = vat_reason_verdict(true, 0, VAT_SQL_ERROR, &r);
    }
}

int sandbox_query(struct sandbox *sb, const struct sql_spec *s, const char *label,
                  const char *q, size_t qlen, struct sql_rows *out,
                  struct vat_verdict *v, long long *work)
{
    sqlite3_stmt *stmt = NULL;
    memset(out, 0, sizeof *out);
    if (*work > s->step_budget) {
        *v = budget_verdict(s, label);
        return -1;
    }
    budget_reset(sb, *work); /* preparing can run VM code too (a module's setup) */
    int rc;
    /* A pooled sandbox keeps the statements of queries that ran to the
     * end: the same text runs the same program, already through the gate
     * below (prepared checks only; see stmt_cache). */
    if (sb->cache && stmt_cache_take(sb->cache, q, qlen, &stmt))
        goto run;
    if (query_prepare(sb, q, qlen, &stmt, v) != 0)
        return -1;
run:
    sql_runs++;
    out->ncol = (size_t)sqlite3_column_count(stmt);
    size_t bytes = 0;
    budget_reset(sb, *work);
    /* The statement's own count of VM steps, from zero: a reused one keeps
     * counting from its earlier runs, and SQLite times the progress calls
     * from that count, so the calls fall where a fresh statement's do. */
    sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_VM_STEP, 1);
    /* Running counts what the query holds. */
    mem_count_start(INT64_MAX);
    bool cut = false; /* stopped by the row or byte cap */
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (out->nrow >= s->max_rows) {
            *v = vat_reason_verdictf(true, VAT_SQL_BUDGET,
                                     "fixture %s: the query returns more than %zu rows", label,
                                     s->max_rows);
            cut = true;
            break;
        }
        bytes += rows_take(out, stmt);
        if (bytes > s->max_bytes) {
            *v = vat_reason_verdictf(true, VAT_SQL_BUDGET,
                                     "fixture %s: the query returns more than %zu bytes", label,
                                     s->max_bytes);
            cut = true;
            break;
        }
    }
    mem_count_stop();
    *work = sb->base + sb->charged + sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_VM_STEP, 0);
    if (sb->stop == STOP_STEPS || (*work > s->step_budget && sb->stop != STOP_TIME)) {
        *work = s->step_budget + 1;
        *v = budget_verdict(s, label);
        goto fail;
    }
    if (cut)
        goto fail;
    sql_compiles += (unsigned long)sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_REPREPARE, 1);
    if (rc == SQLITE_DONE) {
        if (sb->cache)
            stmt_cache_put(sb->cache, q, qlen, stmt);
        else
            sqlite3_finalize(stmt);
        return 0;
    }
    query_failure(sb, label, rc, v);
fail:
    sqlite3_finalize(stmt);
    rows_release(out);
    return -1;
}

/* Sets the connection's limits, authorizer and progress handler aside
 * (aside true: as they are before sandbox_harden installs them, so our own
 * statements run as on a connection just opened), or puts them back. */
void sandbox_step_aside(struct sandbox *sb, bool aside)
{
    for (size_t i = 0; i < sizeof sandbox_limits / sizeof sandbox_limits[0]; i++)
        if (sandbox_limits[i].id != SQLITE_LIMIT_WORKER_THREADS)
            sqlite3_limit(sb->db, sandbox_limits[i].id, aside ? INT_MAX : sandbox_limits[i].value);
    sqlite3_progress_handler(sb->db, aside ? 0 : SQL_PROGRESS_OPS, aside ? NULL : sandbox_progress,
                             aside ? NULL : sb);
    sb->aside = aside;
}

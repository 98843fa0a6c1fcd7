/* api.c — the SQL checker's spec and its public functions: vat_check_sql,
 * vat_sql_run, the gold admission checks and the prepared checks libvat
 * keeps per task (fixtures and gold rows cached).
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

/* ---- the spec --------------------------------------------------------------- */

static int spec_bad(struct vat_verdict *v, const char *what)
{
    *v = vat_reason_verdictf(false, VAT_INTERNAL, "sql spec: %s", what);
    return -1;
}

int spec_unsafe_path(struct vat_verdict *v, const char *rel)
{
    struct vat_reason r = {{0}, 0};
    vat_reason_esc_puts(&r, "unsafe fixture path '");
    vat_reason_esc(&r, rel, strlen(rel), 80);
    vat_reason_esc_puts(&r, "'");
    *v = vat_reason_verdict(false, 0, VAT_INTERNAL, &r);
    return -1;
}

static int spec_bool(const json_t *spec, const char *key, bool *out, struct vat_verdict *v)
{
    const json_t *j = json_object_get(spec, key);
    if (!j)
        return 0;
    if (!json_is_boolean(j))
        return spec_bad(v, key[0] == 'o' ? "'ordered' must be a boolean"
                                         : "'allow_empty_variants' must be a boolean");
    *out = json_is_true(j);
    return 0;
}

static int spec_tol(const json_t *spec, const char *key, double *out, struct vat_verdict *v)
{
    const json_t *j = json_object_get(spec, key);
    if (!j)
        return 0;
    double d = json_number_value(j);
    if (!json_is_number(j) || !isfinite(d) || d < 0)
        return spec_bad(v, key[0] == 'r' ? "'rel_tol' must be a number >= 0"
                                         : "'abs_tol' must be a number >= 0");
    *out = d;
    return 0;
}

static int spec_count(const json_t *spec, const char *key, long long max, long long *out,
                      struct vat_verdict *v)
{
    const json_t *j = json_object_get(spec, key);
    if (!j)
        return 0;
    if (!json_is_integer(j) || json_integer_value(j) < 1 || json_integer_value(j) > max) {
        *v = vat_reason_verdictf(false, VAT_INTERNAL,
                                 "sql spec: '%s' must be an integer from 1 to %lld", key, max);
        return -1;
    }
    *out = (long long)json_integer_value(j);
    return 0;
}

/* Reads the sql members of spec.  need_fixtures demands "fixtures" (and
 * refuses any unsafe path in it); need_reference demands "reference_sql".
 * Returns 0, or -1 with *v an internal verdict. */
static int spec_read(const json_t *spec, bool need_fixtures, bool need_reference,
                     struct sql_spec *s, struct vat_verdict *v)
{
    memset(s, 0, sizeof *s);
    s->rel_tol = SQL_DEFAULT_REL_TOL;
    s->abs_tol = SQL_DEFAULT_ABS_TOL;
    s->step_budget = SQL_DEFAULT_STEP_BUDGET;
    s->max_rows = SQL_DEFAULT_MAX_ROWS;
    s->max_bytes = SQL_DEFAULT_MAX_BYTES;
    if (!json_is_object(spec))
        return spec_bad(v, "not an object");
    const json_t *dialect = json_object_get(spec, "dialect");
    if (dialect && (!json_is_string(dialect) || strcmp(json_string_value(dialect), "sqlite") != 0))
        return spec_bad(v, "'dialect' must be \"sqlite\"");
    if (need_fixtures) {
        const json_t *fx = json_object_get(spec, "fixtures");
        if (!json_is_array(fx) || json_array_size(fx) == 0 ||
            json_array_size(fx) > VAT_SPEC_MAX_FIXTURES)
            return spec_bad(v, "'fixtures' must be an array of 1 to 8 paths");
        for (size_t i = 0; i < json_array_size(fx); i++) {
            const char *rel = json_string_value(json_array_get(fx, i));
            if (!rel)
                return spec_bad(v, "'fixtures' must hold strings");
            if (!vat_path_is_safe(rel))
                return spec_unsafe_path(v, rel);
        }
        s->fixtures = fx;
        s->n_fixtures = json_array_size(fx);
    }
    const json_t *sha = json_object_get(spec, "fixture_sha256");
    if (sha) {
        if (!json_is_array(sha))
            return spec_bad(v, "'fixture_sha256' must be an array");
        s->fixture_sha = sha;
    }
    const json_t *tables = json_object_get(spec, "tables");
    if (!json_is_array(tables))
        return spec_bad(v, "'tables' must be an array of table names");
    for (size_t i = 0; i < json_array_size(tables); i++)
        if (!json_is_string(json_array_get(tables, i)))
            return spec_bad(v, "'tables' must hold strings");
    s->tables = tables;
    const json_t *load = json_object_get(spec, "load");
    if (load) {
        char why[160];
        if (!vat_sql_load_valid(load, why, sizeof why))
            return spec_bad(v, why);
        s->load = load;
    }
    if (need_reference) {
        const json_t *ref = json_object_get(spec, "reference_sql");
        if (!json_is_string(ref))
            return spec_bad(v, "'reference_sql' must be a string");
        s->reference = json_string_value(ref);
        s->reference_len = json_string_length(ref);
    }
    long long rows = (long long)s->max_rows, bytes = (long long)s->max_bytes;
    if (spec_bool(spec, "ordered", &s->ordered, v) != 0 ||
        spec_bool(spec, "allow_empty_variants", &s->allow_empty_variants, v) != 0 ||
        spec_tol(spec, "rel_tol", &s->rel_tol, v) != 0 ||
        spec_tol(spec, "abs_tol", &s->abs_tol, v) != 0 ||
        spec_count(spec, "step_budget", SQL_MAX_STEP_BUDGET, &s->step_budget, v) != 0 ||
        spec_count(spec, "max_rows", 10000000, &rows, v) != 0 ||
        spec_count(spec, "max_bytes", (long long)1 << 31, &bytes, v) != 0)
        return -1;
    s->max_rows = (size_t)rows;
    s->max_bytes = (size_t)bytes;
    return 0;
}

/* ---- the public functions -------------------------------------------------------- */

static void fixture_label(char *buf, size_t cap, size_t i)
{
    /* the common ones without formatting: a check labels every fixture */
    static const char *const few[] = {"main",      "variant 1", "variant 2", "variant 3",
                                      "variant 4", "variant 5", "variant 6", "variant 7"};
    if (i < sizeof few / sizeof few[0] && cap > strlen(few[i]))
        memcpy(buf, few[i], strlen(few[i]) + 1);
    else if (i == 0)
        snprintf(buf, cap, "main");
    else
        snprintf(buf, cap, "variant %zu", i);
}

struct vat_verdict vat_check_sql(const json_t *spec, const char *root, const char *answer,
                                 size_t len)
{
    return vat_check_sql_as(spec, root, answer, len, false);
}

/* The digest s gives fixture rel ("fixture_sha256" at rel's index in
 * "fixtures"), or NULL. */
static const char *spec_fixture_sha(const struct sql_spec *s, const char *rel)
{
    for (size_t i = 0; s->fixture_sha && rel && i < json_array_size(s->fixtures); i++)
        if (strcmp(json_string_value(json_array_get(s->fixtures, i)), rel) == 0)
            return json_string_value(json_array_get(s->fixture_sha, i));
    return NULL;
}

/* Checks the answer on fixture i of s: 0 when its rows agree with the
 * reference's, else -1 with *v the verdict (an internal one when the
 * reference fails there). */
static int check_fixture(const struct sql_spec *s, const char *root, size_t i, const char *answer,
                         size_t len, const struct query_facts *qf, const struct query_facts *rf,
                         bool reveal, long long *work, long long *ref_work, struct vat_verdict *v)
{
    char label[32];
    fixture_label(label, sizeof label, i);
    struct fixture_img img;
    const char *rel = json_string_value(json_array_get(s->fixtures, i));
    if (fixture_load(root, rel, s->load, true, spec_fixture_sha(s, rel), &img, NULL, v) != 0)
        return -1;
    struct sql_rows exp, got;
    int rc = sandbox_run(s, &img, label, s->reference, s->reference_len, rf, RUN_PLAIN, &exp, v,
                         ref_work);
    if (rc != 0) {
        struct vat_reason r = {{0}, 0};
        vat_reason_esc_printf(&r, "the reference query fails on fixture %s (%s): ", label, v->code);
        vat_reason_esc_puts(&r, v->reason);
        free(img.own);
        *v = vat_reason_verdict(false, 0, VAT_INTERNAL, &r);
        return -1;
    }
    bool hide = !reveal && i > 0; /* the variants are held out */
    rc = sandbox_run(s, &img, label, answer, len, qf, RUN_PLAIN, &got, v, work);
    sql_last_work = *work;
    free(img.own);
    if (rc != 0) {
        rows_release(&exp);
        hide_run_failure(v, label, hide);
        return -1;
    }
    bool same = rows_agree_as(&got, &exp, s->ordered, s->rel_tol, s->abs_tol, label, hide, v);
    rows_release(&exp);
    rows_release(&got);
    return same ? 0 : -1;
}

/* The spec read and both queries gated, for a check; false with *v set. */
static bool check_begin(const json_t *spec, const char *answer, size_t len, struct sql_spec *s,
                        struct query_facts *qf, struct query_facts *rf, struct vat_verdict *v)
{
    if (spec_read(spec, true, true, s, v) != 0)
        return false;
    if (!answer) {
        *v = vat_reason_verdictf(false, VAT_PARSE, "no answer given");
        return false;
    }
    if (!query_gate(answer, len, qf, v))
        return false;
    if (!query_gate(s->reference, s->reference_len, rf, v)) {
        struct vat_reason r = {{0}, 0};
        vat_reason_esc_printf(&r, "the reference query fails the gate (%s): ", v->code);
        vat_reason_esc_puts(&r, v->reason);
        *v = vat_reason_verdict(false, 0, VAT_INTERNAL, &r);
        return false;
    }
    return true;
}

struct vat_verdict vat_check_sql_as(const json_t *spec, const char *root, const char *answer,
                                    size_t len, bool reveal)
{
    struct vat_verdict v;
    struct sql_spec s;
    struct query_facts qf, rf;
    sql_last_work = 0;
    if (!check_begin(spec, answer, len, &s, &qf, &rf, &v))
        return v;
    /* one budget for the answer on all fixtures, one for the reference */
    long long work = 0, ref_work = 0;
    for (size_t i = 0; i < s.n_fixtures; i++)
        if (check_fixture(&s, root, i, answer, len, &qf, &rf, reveal, &work, &ref_work, &v) != 0)
            return v;
    return vat_verdict_make(true, 1, VAT_OK, "rows match on all %zu fixtures", s.n_fixtures);
}

struct vat_verdict vat_check_sql_fixture_as(const json_t *spec, const char *root, size_t i,
                                            const char *answer, size_t len, bool reveal,
                                            long long *work)
{
    struct vat_verdict v;
    struct sql_spec s;
    struct query_facts qf, rf;
    long long ref_work = 0;
    if (!check_begin(spec, answer, len, &s, &qf, &rf, &v))
        return v;
    if (i >= s.n_fixtures)
        return vat_reason_verdictf(false, VAT_INTERNAL, "the spec has no fixture %zu", i);
    if (check_fixture(&s, root, i, answer, len, &qf, &rf, reveal, work, &ref_work, &v) != 0)
        return v;
    char label[32];
    fixture_label(label, sizeof label, i);
    return vat_verdict_make(true, 1, VAT_OK, "rows match on fixture %s", label);
}

json_t *vat_sql_run(const json_t *spec, const char *root, const char *fixture_rel,
                    const char *query, size_t len, struct vat_verdict *v)
{
    long long work = 0;
    return vat_sql_run_counted(spec, root, fixture_rel, query, len, &work, v);
}

json_t *vat_sql_run_counted(const json_t *spec, const char *root, const char *fixture_rel,
                            const char *query, size_t len, long long *work,
                            struct vat_verdict *v)
{
    struct vat_verdict local;
    if (!v)
        v = &local;
    struct sql_spec s;
    if (spec_read(spec, false, false, &s, v) != 0)
        return NULL;
    if (!query) {
        *v = vat_reason_verdictf(false, VAT_PARSE, "no query given");
        return NULL;
    }
    struct query_facts qf;
    if (!query_gate(query, len, &qf, v))
        return NULL;
    struct fixture_img img;
    if (fixture_load(root, fixture_rel, s.load, true, spec_fixture_sha(&s, fixture_rel), &img,
                     NULL, v) != 0)
        return NULL;
    struct sql_rows rows;
    int rc = sandbox_run(&s, &img, fixture_rel, query, len, &qf, RUN_PLAIN, &rows, v, work);
    free(img.own);
    if (rc != 0)
        return NULL;
    json_t *out = rows_json(&rows);
    rows_release(&rows);
    *v = vat_verdict_make(true, 1, VAT_OK, "%zu rows", json_array_size(out));
    return out;
}

bool vat_sql_budget_spent(const json_t *spec, long long work)
{
    struct sql_spec s;
    struct vat_verdict v;
    return spec_read(spec, false, false, &s, &v) == 0 && work > s.step_budget;
}

static char checker_version[64];
static pthread_once_t checker_version_once = PTHREAD_ONCE_INIT;

static void checker_version_init(void)
{
    snprintf(checker_version, sizeof checker_version, "vat-sql/3 sqlite/%s",
             sqlite3_libversion());
}

const char *vat_sql_checker_version(void)
{
    pthread_once(&checker_version_once, checker_version_init);
    return checker_version;
}

int vat_sql_gold_admissible(const json_t *spec, const char *root, struct vat_err *e)
{
    struct vat_verdict v;
    struct sql_spec s;
    if (spec_read(spec, true, true, &s, &v) != 0)
        return vat_err_set(e, "gold query not admissible: %s", v.reason);
    struct query_facts qf;
    if (!query_gate(s.reference, s.reference_len, &qf, &v))
        return vat_err_set(e, "gold query not admissible (%s): %s", v.code, v.reason);
    if (qf.has_limit)
        return vat_err_set(e, "gold query not admissible: it uses LIMIT, which can cut a tie");
    for (size_t i = 0; i < s.n_fixtures; i++) {
        char label[32];
        fixture_label(label, sizeof label, i);
        struct fixture_img img;
        if (fixture_load(root, json_string_value(json_array_get(s.fixtures, i)), s.load, true,
                         NULL, &img, NULL, &v) != 0)
            return vat_err_set(e, "gold query not admissible: %s", v.reason);
        struct sql_rows runs[3];
        static const enum run_mode modes[3] = {RUN_PLAIN, RUN_REVERSE_SCAN, RUN_REVERSE_ROWS};
        static const char *const mode_text[3] = {"", "with tables scanned backwards",
                                                 "with rows stored in reverse order"};
        /* Run backwards first: during a draw the three share the plain
         * sandbox, and turning the backwards scan off expires what was
         * compiled under it, so in this order the gold is compiled twice
         * (backwards, then plain, which the rows-reversed run and the
         * checks after it reuse) rather than three times.  A failure is
         * reported as the listed order finds it: the first mode that
         * fails, later ones not run. */
        static const int run_order[3] = {1, 0, 2};
        bool ran[3] = {false, false, false};
        int failed = 3;
        for (int o = 0; o < 3; o++) {
            int k = run_order[o];
            if (k > failed)
                continue;
            struct vat_verdict kv;
            long long work = 0; /* the checks themselves count the gold's work */
            if (sandbox_run(&s, &img, label, s.reference, s.reference_len, &qf, modes[k],
                            &runs[k], &kv, &work) == 0) {
                ran[k] = true;
            } else {
                failed = k;
                v = kv;
            }
        }
        free(img.own);
        if (failed < 3) {
            for (int k = 0; k < 3; k++)
                if (ran[k])
                    rows_release(&runs[k]);
            return vat_err_set(e, "gold query not admissible (%s): %s", v.code, v.reason);
        }
        int differs = 0;
        for (int k = 1; k < 3 && !differs; k++)
            if (!rows_agree(&runs[k], &runs[0], s.ordered, s.rel_tol, s.abs_tol, label, &v))
                differs = k;
        size_t nrow = runs[0].nrow;
        for (int k = 0; k < 3; k++)
            rows_release(&runs[k]);
        if (differs)
            return vat_err_set(e,
                               "gold query not admissible: it gives different rows on fixture "
                               "%s %s (%s)",
                               label, mode_text[differs], v.reason);
        if (nrow == 0 && (i == 0 || !s.allow_empty_variants))
            return vat_err_set(e, "gold query not admissible: it returns no rows on fixture %s",
                               label);
    }
    return 0;
}

/* ---- prepared checks: fixtures and gold rows cached (libvat) ------------------ */

/* A task's fixtures held in memory for the life of the prepared check, the
 * gold (and trap) rows on each computed once, and a pool of sandboxes per
 * fixture so a check runs only the candidate's query.  A pooled sandbox is
 * reused only after a query that ran to completion (a failed query closes
 * it), and every query starts from a fresh per-query state (sandbox_rearm),
 * so a reused connection is exactly as strict as a fresh one: the fixture
 * is deserialized read-only, the authorizer and limits stay installed, and
 * the statement must still be one read-only SELECT. */
static uint32_t be32_at(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Reads the SQLite varint at b (at most 9 bytes, n available) into *out;
 * its length, or 0 when it runs past n. */
static size_t varint_at(const unsigned char *b, size_t n, uint64_t *out)
{
    uint64_t x = 0;
    for (size_t i = 0; i < 9 && i < n; i++) {
        if (i == 8) {
            *out = x << 8 | b[i];
            return 9;
        }
        x = x << 7 | (b[i] & 0x7f);
        if (!(b[i] & 0x80)) {
            *out = x;
            return i + 1;
        }
    }
    return 0;
}

/* Whether the task's fixture images may be served as one set (see struct
 * switch_set): two or more SQLite images whose headers agree on everything
 * a compiled statement depends on (page size, format, reserved bytes,
 * schema cookie and format, encoding, versions of the user and the
 * application) and whose page 1, which holds the whole schema as a single
 * leaf of sqlite_schema with no row overflowing it, is the same bytes in
 * all; no statistics table (its rows would steer the planner); each
 * header's page count valid (92 = 24) and the image that many pages long.
 * VAT_SQL_FIXTURE_SET=0 turns sets off.  The set, or NULL. */
static struct switch_set *switch_set_make(const struct fixture_img *img, size_t n)
{
    const char *env = getenv("VAT_SQL_FIXTURE_SET");
    if (n < 2 || (env && strcmp(env, "0") == 0))
        return NULL;
    const unsigned char *a = img[0].data;
    if (img[0].n < 100)
        return NULL;
    size_t page = (size_t)a[16] << 8 | a[17];
    if (page == 1)
        page = 65536;
    if (page < 512 || (page & (page - 1)) || a[20] >= page - 480)
        return NULL;
    size_t usable = page - a[20];
    for (size_t i = 0; i < n; i++) {
        const unsigned char *b = img[i].data;
        if (img[i].n < page || img[i].n % page || memcmp(b + 24, b + 92, 4) != 0 ||
            (size_t)be32_at(b + 28) * page != img[i].n || memcmp(a + 16, b + 16, 2) != 0 ||
            memcmp(a + 20, b + 20, 4) != 0 || memcmp(a + 40, b + 40, 32) != 0 ||
            rollback_byte(a[18]) != rollback_byte(b[18]) ||
            rollback_byte(a[19]) != rollback_byte(b[19]) ||
            memcmp(a + 100, b + 100, page - 100) != 0)
            return NULL;
    }
    /* page 1 (the same in all): one leaf of sqlite_schema, no overflow, no
     * statistics table */
    if (a[100] != 13)
        return NULL;
    for (size_t k = 100; k + 11 <= page; k++)
        if (a[k] == 's' && memcmp(a + k, "sqlite_stat", 11) == 0)
            return NULL;
    size_t cells = (size_t)a[103] << 8 | a[104];
    for (size_t c = 0; c < cells; c++) {
        size_t at = 108 + 2 * c;
        if (at + 2 > page)
            return NULL;
        size_t off = (size_t)a[at] << 8 | a[at + 1];
        uint64_t payload;
        if (off >= page || !varint_at(a + off, page - off, &payload) || payload > usable - 35)
            return NULL;
    }
    struct switch_set *set = vat_xcalloc(1, sizeof *set);
    set->n = n;
    set->img = vat_xcalloc(n, sizeof *set->img);
    set->len = vat_xcalloc(n, sizeof *set->len);
    for (size_t i = 0; i < n; i++) {
        unsigned char *c = vat_xmalloc(img[i].n);
        memcpy(c, img[i].data, img[i].n);
        /* read in rollback mode, as sandbox_open does; a change counter of
         * its own (and the page count kept valid) */
        rollback_mode(c);
        uint32_t k = (uint32_t)i + 1;
        unsigned char ctr[4] = {(unsigned char)(k >> 24), (unsigned char)(k >> 16),
                                (unsigned char)(k >> 8), (unsigned char)k};
        memcpy(c + 24, ctr, 4);
        memcpy(c + 92, ctr, 4);
        set->img[i] = c;
        set->len[i] = img[i].n;
    }
    return set;
}

static void switch_set_free(struct switch_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++)
        free(set->img[i]);
    free(set->img);
    free(set->len);
    free(set);
}

struct sql_pool {
    pthread_mutex_t lock;
    struct sandbox **free_sb;
    size_t n_free, cap;
    _Atomic size_t bytes; /* the pooled sandboxes' sandbox_bytes */
};

struct vat_sql_prep {
    json_t *spec; /* own reference: s points into it */
    struct sql_spec s;
    size_t n;
    struct fixture_img *img;
    struct sql_rows *gold, *trap; /* trap NULL when no trap was given */
    struct sql_pool *pool;
    struct switch_set *sw;   /* the fixtures as one set, or NULL (switch_set_make) */
    struct sql_pool sw_pool; /* sandboxes open on sw */
    struct vat_verdict ok; /* an answer's verdict when its rows match on all */
    size_t fixed_bytes;    /* images, the set's copies, gold and trap rows */
    /* During a draw, per fixture: the plain rows the admission's runs left
     * in the fixture's cached sandbox (the reference's, the trap's), so a
     * check of the same query compares them instead of running it again.
     * Only the memo of each entry is used.  NULL outside a draw. */
    struct sb_cache_entry *seen;
};

bool stmt_cache_take(struct stmt_cache *c, const char *q, size_t n, sqlite3_stmt **out)
{
    for (size_t i = 0; i < c->used; i++)
        if (c->e[i].n == n && memcmp(c->e[i].q, q, n) == 0) {
            *out = c->e[i].stmt;
            free(c->e[i].q);
            c->bytes -= c->e[i].bytes;
            memmove(&c->e[i], &c->e[i + 1], (c->used - i - 1) * sizeof c->e[0]);
            c->used--;
            return true;
        }
    return false;
}

void stmt_cache_put(struct stmt_cache *c, const char *q, size_t n, sqlite3_stmt *stmt)
{
    sqlite3_reset(stmt);
    if (c->used == STMT_CACHE_SIZE) {
        c->used--;
        sqlite3_finalize(c->e[c->used].stmt);
        free(c->e[c->used].q);
        c->bytes -= c->e[c->used].bytes;
    }
    memmove(&c->e[1], &c->e[0], c->used * sizeof c->e[0]);
    c->e[0].q = vat_xstrndup(q, n);
    c->e[0].n = n;
    c->e[0].stmt = stmt;
    /* measured as it comes in, once, rather than every statement at every
     * count (sqlite3_db_status walks them all) */
    c->e[0].bytes = n + 1 + (size_t)sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_MEMUSED, 0);
    c->bytes += c->e[0].bytes;
    c->used++;
}

static void stmt_cache_free(struct stmt_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->used; i++) {
        sqlite3_finalize(c->e[i].stmt);
        free(c->e[i].q);
    }
    free(c);
}

/* Resets what one query may have left on a pooled sandbox. */
void sandbox_rearm(struct sandbox *sb, const struct query_facts *qf)
{
    sb->mentions_now = qf->mentions_now;
    sb->function_calls = 0;
    sb->too_many_functions = false;
    sb->denied[0] = 0;
    sb->denied_2nd[0] = 0;
    budget_reset(sb, 0);
}

/* Empties sb's statement cache (its statements were compiled against the
 * image it had). */
void sandbox_stmt_cache_reset(struct sandbox *sb)
{
    stmt_cache_free(sb->cache);
    sb->cache = vat_xcalloc(1, sizeof *sb->cache);
}

void sandbox_destroy(struct sandbox *sb)
{
    stmt_cache_free(sb->cache); /* its statements go before the connection */
    sb->cache = NULL;
    sandbox_close(sb);
    free(sb);
}

/* Makes a freshly opened sandbox poolable: a statement cache, and
 * exclusive locking (the pooled connection is the only user of its
 * private copy: it keeps its page cache across statements instead of
 * re-reading the image for every read transaction), set by us with the
 * authorizer lifted for that one pragma.  0, or -1 with *v set and sb
 * destroyed. */
int sandbox_pool_setup(struct sandbox *sb, bool exclusive, struct vat_verdict *v)
{
    sb->cache = vat_xcalloc(1, sizeof *sb->cache);
    /* A fixture set's sandbox keeps normal locking: the pager must read the
     * header at every read transaction to see the fixture move. */
    if (!exclusive)
        return 0;
    if (sandbox_exec_aside(sb, sandbox_exclusive_sql) != SQLITE_OK) {
        *v = vat_reason_verdictf(false, VAT_INTERNAL, "the sandbox cannot set its locking mode");
        sandbox_destroy(sb);
        return -1;
    }
    return 0;
}

/* Whether a failed query's verdict is a pure function of the query text
 * and the fixtures, so a memo may keep it (lib/corpus.c): not when a net of
 * the checker stopped it (the CPU-time net, the process-wide heap, the
 * counted memory cap), nor an internal failure.  The step budget is: its
 * count is the statement's own VM steps and the built-ins' charges. */
static bool failure_is_pure(const struct sandbox *sb, const struct vat_verdict *v)
{
    return sb->stop != STOP_TIME && !mem_tls.hit && strcmp(v->code, VAT_CHECKER_LIMIT) != 0 &&
           strcmp(v->code, VAT_INTERNAL) != 0;
}

/* Runs q on fixture i through the pool.  Returns 0, or -1 with *v set and
 * *pure (may be NULL) cleared when that verdict is not a pure function of
 * q and the fixture (failure_is_pure). */
static struct sandbox *pool_take(struct sql_pool *pl)
{
    struct sandbox *sb = NULL;
    pthread_mutex_lock(&pl->lock);
    if (pl->n_free) {
        sb = pl->free_sb[--pl->n_free];
        atomic_fetch_sub_explicit(&pl->bytes, sb->pooled_bytes, memory_order_relaxed);
    }
    pthread_mutex_unlock(&pl->lock);
    return sb;
}

/* What a pooled sandbox holds, for the byte budget of libvat's caches:
 * its connections' page caches, schemas and statements as SQLite counts
 * them (the kept statements as each was measured coming in), its copy of
 * the fixture image, and SANDBOX_BASE_BYTES per connection for what
 * SQLite does not count (the connection itself, the page cache's first
 * bulk allocation, the functions registered). */
#define SANDBOX_BASE_BYTES ((size_t)104 << 10)
static size_t db_status(sqlite3 *db, int op)
{
    int cur = 0, hi = 0;
    return db && sqlite3_db_status(db, op, &cur, &hi, 0) == SQLITE_OK && cur > 0 ? (size_t)cur : 0;
}

static size_t sandbox_bytes(struct sandbox *sb)
{
    /* a schema does not change once read; the aux connection, opened on
     * first use, has none of note */
    if (!sb->schema_bytes)
        sb->schema_bytes = db_status(sb->db, SQLITE_DBSTATUS_SCHEMA_USED) + 1;
    size_t n = sizeof *sb + sb->img_bytes + sb->schema_bytes + SANDBOX_BASE_BYTES +
               db_status(sb->db, SQLITE_DBSTATUS_CACHE_USED) + (sb->cache ? sb->cache->bytes : 0);
    if (sb->aux)
        n += SANDBOX_BASE_BYTES + db_status(sb->aux, SQLITE_DBSTATUS_CACHE_USED) +
             db_status(sb->aux, SQLITE_DBSTATUS_STMT_USED);
    return n;
}

static void pool_give(struct sql_pool *pl, struct sandbox *sb)
{
    sb->pooled_bytes = sandbox_bytes(sb);
    pthread_mutex_lock(&pl->lock);
    if (pl->n_free == pl->cap) {
        pl->cap = pl->cap ? 2 * pl->cap : 4;
        pl->free_sb = vat_xrealloc(pl->free_sb, pl->cap * sizeof *pl->free_sb);
    }
    pl->free_sb[pl->n_free++] = sb;
    atomic_fetch_add_explicit(&pl->bytes, sb->pooled_bytes, memory_order_relaxed);
    pthread_mutex_unlock(&pl->lock);
}

/* Retires every pooled sandbox; the pool stays usable (and empty). */
static void pool_empty(struct sql_pool *pl)
{
    pthread_mutex_lock(&pl->lock);
    for (size_t k = 0; k < pl->n_free; k++)
        sandbox_retire(pl->free_sb[k]);
    pl->n_free = 0;
    atomic_store_explicit(&pl->bytes, 0, memory_order_relaxed);
    pthread_mutex_unlock(&pl->lock);
}

static void pool_release(struct sql_pool *pl)
{
    pool_empty(pl);
    free(pl->free_sb);
    pthread_mutex_destroy(&pl->lock);
}

/* A sandbox open on the task's fixture set, from its pool or new.  NULL
 * with *v internal (and *pure cleared) when none can be opened. */
static struct sandbox *set_sandbox_take(struct vat_sql_prep *p, const struct query_facts *qf,
                                        struct vat_verdict *v, bool *pure)
{
    struct sandbox *sb = pool_take(&p->sw_pool);
    if (!sb)
        sb = sandbox_new(&p->s, qf, NULL, RUN_PLAIN, p->sw, v);
    if (!sb && pure)
        *pure = false;
    return sb;
}

/* Runs q on fixture i: on *held when given (a sandbox open on the fixture
 * set, moved to fixture i; destroyed, and *held cleared, when the query
 * fails), else through fixture i's pool.  Returns 0, or -1 with *v set and
 * *pure (may be NULL) cleared when that verdict is not a pure function of
 * q and the fixture (failure_is_pure). */
static int prep_run(struct vat_sql_prep *p, size_t i, struct sandbox **held, const char *label,
                    const char *q, size_t qlen, const struct query_facts *qf,
                    struct sql_rows *out, struct vat_verdict *v, bool *pure, long long *work)
{
    struct sql_pool *pl = &p->pool[i];
    struct sandbox *sb = held ? *held : pool_take(pl);
    if (held)
        sb->sw.cur = i;
    memset(out, 0, sizeof *out);
    /* The build has usually just run the reference on this very fixture
     * (vat_sql_gold_admissible, vat_sql_run): that sandbox, opened and
     * set up exactly as a pooled one, joins the pool instead of a new
     * one being opened. */
    if (!sb && (sb = sb_cache_take(&p->s, &p->img[i], RUN_PLAIN)) != NULL)
        sb->tables = p->s.tables;
    if (!sb && !(sb = sandbox_new(&p->s, qf, &p->img[i], RUN_PLAIN, NULL, v))) {
        if (pure)
            *pure = false;
        return -1;
    }
    sandbox_rearm(sb, qf);
    int rc = sandbox_query(sb, &p->s, label, q, qlen, out, v, work);
    if (rc != 0) {
        if (pure && !failure_is_pure(sb, v))
            *pure = false;
        sandbox_destroy(sb);
        if (held)
            *held = NULL;
        return rc;
    }
    if (!held)
        pool_give(pl, sb);
    return 0;
}

void vat_sql_prep_free(struct vat_sql_prep *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        if (p->seen)
            memo_release(&p->seen[i]);
        free(p->img[i].own);
        rows_release(&p->gold[i]);
        if (p->trap)
            rows_release(&p->trap[i]);
        pool_release(&p->pool[i]);
    }
    pool_release(&p->sw_pool);
    switch_set_free(p->sw);
    free(p->seen);
    free(p->img);
    free(p->gold);
    free(p->trap);
    free(p->pool);
    json_decref(p->spec);
    free(p);
}

/* Copies into seen the rows this thread's cached plain sandbox for img
 * (s's budget and tables) keeps, by query. */
static void seen_keep(struct sb_cache_entry *seen, const struct sql_spec *s,
                      const struct fixture_img *img)
{
    struct sb_cache_entry *e = sb_cache_find(s, img, RUN_PLAIN);
    for (size_t k = 0; e && k < e->nmemo; k++)
        if (e->memo[k].how == RUN_PLAIN)
            memo_keep_rows(seen, s, e->memo[k].q, e->memo[k].qlen, RUN_PLAIN, &e->memo[k].rows,
                           e->memo[k].work);
}

struct vat_sql_prep *vat_sql_prepare(const json_t *spec, const char *root,
                                     const char *const *sha256, const char *trap,
                                     size_t trap_len, struct vat_verdict *v)
{
    struct vat_sql_prep *p = vat_xcalloc(1, sizeof *p);
    p->spec = json_incref((json_t *)spec);
    if (spec_read(p->spec, true, true, &p->s, v) != 0)
        goto fail;
    struct query_facts rf, tf;
    if (!query_gate(p->s.reference, p->s.reference_len, &rf, v)) {
        struct vat_reason r = {{0}, 0};
        vat_reason_esc_printf(&r, "the reference query fails the gate (%s): ", v->code);
        vat_reason_esc_puts(&r, v->reason);
        *v = vat_reason_verdict(false, 0, VAT_INTERNAL, &r);
        goto fail;
    }
    /* A trap that fails the gate cannot be matched by any answer's rows. */
    bool with_trap = trap && query_gate(trap, trap_len, &tf, v);
    p->n = p->s.n_fixtures;
    p->img = vat_xcalloc(p->n, sizeof *p->img);
    p->gold = vat_xcalloc(p->n, sizeof *p->gold);
    p->trap = with_trap ? vat_xcalloc(p->n, sizeof *p->trap) : NULL;
    p->pool = vat_xcalloc(p->n, sizeof *p->pool);
    p->seen = vat_file_memo_on() ? vat_xcalloc(p->n, sizeof *p->seen) : NULL;
    for (size_t i = 0; i < p->n; i++)
        pthread_mutex_init(&p->pool[i].lock, NULL);
    pthread_mutex_init(&p->sw_pool.lock, NULL);
    /* the reference and the trap are checks too: one budget each */
    long long ref_work = 0, trap_work = 0;
    for (size_t i = 0; i < p->n; i++) {
        const char *rel = json_string_value(json_array_get(p->s.fixtures, i));
        char hex[65] = "";
        /* the prepared check outlives the draw's memo: its own copy */
        /* a fixture whose digest is given may be a symbolic link: its
         * bytes as read are checked against the digest below */
        int loaded = fixture_load(root, rel, p->s.load, false,
                                  sha256 ? sha256[i] : spec_fixture_sha(&p->s, rel), &p->img[i],
                                  hex, v);
        /* bytes that fail to load as a fixture and are not the ones the
         * tables record were changed: tampered, not internal */
        if (loaded != 0 && (!sha256 || !hex[0] || strcmp(v->code, VAT_TAMPERED) == 0 ||
                            (sha256[i] && strcmp(hex, sha256[i]) == 0)))
            goto fail;
        if (sha256) {
            if (!sha256[i] || strcmp(hex, sha256[i]) != 0) {
                struct vat_reason r = {{0}, 0};
                vat_reason_esc_puts(&r, "fixture '");
                vat_reason_esc(&r, rel, strlen(rel), 100);
                vat_reason_esc_puts(&r, sha256[i] ? "' does not match the sha256 the tables record"
                                          : "' has no sha256 recorded in the tables");
                *v = vat_reason_verdict(false, 0, VAT_TAMPERED, &r);
                goto fail;
            }
        }
        char label[32];
        fixture_label(label, sizeof label, i);
        /* In a draw the admission has just run the reference on this very
         * fixture, in a sandbox set up as a pooled one: its rows serve, and
         * those of every other query it ran there in plain order are kept
         * for the checks (taken before anything here moves that sandbox). */
        if (p->seen)
            seen_keep(&p->seen[i], &p->s, &p->img[i]);
        struct rows_memo *ref =
            p->seen ? memo_find_rows(&p->seen[i], &p->s, p->s.reference, p->s.reference_len,
                                     RUN_PLAIN)
                    : NULL;
        int rc = 0;
        if (ref) {
            ref_work += ref->work;
            rows_copy(&p->gold[i], &ref->rows);
            if (ref_work > p->s.step_budget) {
                *v = budget_verdict(&p->s, label);
                rc = -1;
            }
        } else {
            rc = prep_run(p, i, NULL, label, p->s.reference, p->s.reference_len, &rf,
                          &p->gold[i], v, NULL, &ref_work);
        }
        if (rc != 0) {
            struct vat_reason r = {{0}, 0};
            vat_reason_esc_printf(&r, "the reference query fails on fixture %s (%s): ", label,
                                  v->code);
            vat_reason_esc_puts(&r, v->reason);
            *v = vat_reason_verdict(false, 0, VAT_INTERNAL, &r);
            goto fail;
        }
        if (p->trap &&
            prep_run(p, i, NULL, label, trap, trap_len, &tf, &p->trap[i], v, NULL, &trap_work) !=
                0) {
            /* A trap that fails on a fixture matches no answer's rows. */
            for (size_t k = 0; k < i; k++)
                rows_release(&p->trap[k]);
            free(p->trap);
            p->trap = NULL;
        }
    }
    /* During a task's draw the per-fixture sandboxes come ready from the
     * admission (sb_cache_take) and most mutants stop at the first
     * fixture: opening a set would cost more than it saves there. */
    p->sw = vat_file_memo_on() ? NULL : switch_set_make(p->img, p->n);
    if (p->sw) {
        /* Checks run on the set alone from here: the sandboxes the
         * reference and the trap ran in, and the images they were opened
         * on, would only be held (the set keeps copies of its own). */
        for (size_t i = 0; i < p->n; i++) {
            pool_empty(&p->pool[i]);
            free(p->img[i].own);
            p->img[i].data = p->img[i].own = NULL;
        }
    }
    p->fixed_bytes = sizeof *p + p->n * (sizeof *p->img + 2 * sizeof *p->gold + sizeof *p->pool);
    for (size_t i = 0; i < p->n; i++)
        p->fixed_bytes += p->img[i].n * (p->sw ? 1 : p->img[i].own != NULL) +
                          rows_held(&p->gold[i]) + (p->trap ? rows_held(&p->trap[i]) : 0);
    p->ok = vat_verdict_make(true, 1, VAT_OK, "rows match on all %zu fixtures", p->n);
    return p;
fail:
    vat_sql_prep_free(p);
    return NULL;
}

bool vat_sql_prep_uses_fixture_set(const struct vat_sql_prep *p)
{
    return p && p->sw;
}

size_t vat_sql_prep_bytes(struct vat_sql_prep *p)
{
    if (!p)
        return 0;
    size_t n = p->fixed_bytes + atomic_load_explicit(&p->sw_pool.bytes, memory_order_relaxed);
    for (size_t i = 0; i < p->n; i++)
        n += atomic_load_explicit(&p->pool[i].bytes, memory_order_relaxed);
    return n;
}

struct vat_verdict vat_sql_check_prepared(struct vat_sql_prep *p, const char *answer,
                                          size_t len, bool *is_trap)
{
    return vat_sql_check_prepared_pure(p, answer, len, is_trap, NULL);
}

static struct vat_verdict check_prepared(struct vat_sql_prep *p, const char *answer, size_t len,
                                         bool *is_trap, bool *pure, bool reasons, bool reveal);

struct vat_verdict vat_sql_check_prepared_pure(struct vat_sql_prep *p, const char *answer,
                                               size_t len, bool *is_trap, bool *pure)
{
    return check_prepared(p, answer, len, is_trap, pure, true, false);
}

struct vat_verdict vat_sql_check_prepared_as(struct vat_sql_prep *p, const char *answer,
                                             size_t len, bool *is_trap, bool *pure, bool reveal)
{
    return check_prepared(p, answer, len, is_trap, pure, true, reveal);
}

struct vat_verdict vat_sql_check_prepared_score(struct vat_sql_prep *p, const char *answer,
                                                size_t len)
{
    return check_prepared(p, answer, len, NULL, NULL, false, false);
}

/* reasons false: rows that differ give a verdict with its code and no
 * reason (vat_sql_check_prepared_score).  reveal false: reasons about a
 * variant fixture say how the rows differ, never what they hold. */
static struct vat_verdict check_prepared(struct vat_sql_prep *p, const char *answer, size_t len,
                                         bool *is_trap, bool *pure, bool reasons, bool reveal)
{
    struct vat_verdict v;
    /* the scan past a difference only serves is_trap and pure */
    bool trap_same = p->trap != NULL && (is_trap || pure), failed = false;
    long long work = 0; /* one budget for the answer on all fixtures */
    sql_last_work = 0;
    if (is_trap)
        *is_trap = false;
    if (pure)
        *pure = true; /* the gate and the rows compared are pure; prep_run says otherwise */
    if (!answer)
        return vat_reason_verdictf(false, VAT_PARSE, "no answer given");
    struct query_facts qf;
    if (!query_gate(answer, len, &qf, &v))
        return v;
    /* The verdict is that of the first fixture where the rows differ, as
     * in vat_check_sql; the scan goes on past it only while the answer
     * still gives the trap's rows, to tell whether it is the trap. */
    struct sandbox *held = NULL;
    if (p->sw && !(held = set_sandbox_take(p, &qf, &v, pure)))
        return v;
    /* A score alone (the strength rule's mutants) takes the held-out
     * variants first: they are small, and most mutants differ on one, so
     * the main fixture, the largest, runs only for the rest.  A mutant is
     * killed or not whatever the order (the budget covers all fixtures,
     * and running out of it is a kill). */
    for (size_t k = 0; k < p->n && (!failed || trap_same); k++) {
        size_t i = !reasons && p->n > 1 ? (k + 1) % p->n : k;
        char label[32];
        fixture_label(label, sizeof label, i);
        struct sql_rows got;
        struct vat_verdict rv;
        struct rows_memo *m =
            p->seen ? memo_find_rows(&p->seen[i], &p->s, answer, len, RUN_PLAIN) : NULL;
        int rc = 0;
        if (m && work + m->work > p->s.step_budget) { /* as running it would count */
            work = p->s.step_budget + 1;
            rv = budget_verdict(&p->s, label);
            rc = -1;
        } else if (m) {
            work += m->work;
            rows_copy(&got, &m->rows);
        } else {
            rc = prep_run(p, i, p->sw ? &held : NULL, label, answer, len, &qf, &got, &rv, pure,
                          &work);
        }
        sql_last_work = work;
        if (rc != 0) {
            if (held)
                pool_give(&p->sw_pool, held);
            if (!failed) {
                v = rv;
                hide_run_failure(&v, label, !reveal && i > 0);
            }
            return v;
        }
        if (!failed && !rows_agree_as(&got, &p->gold[i], p->s.ordered, p->s.rel_tol,
                                      p->s.abs_tol, label, !reveal && i > 0,
                                      reasons ? &v : NULL)) {
            failed = true;
            if (!reasons)
                v = (struct vat_verdict){.gate_passed = true, .score = 0,
                                         .code = rows_differ_code(&got, &p->gold[i])};
        }
        if (trap_same)
            trap_same = rows_agree(&got, &p->trap[i], p->s.ordered, p->s.rel_tol,
                                   p->s.abs_tol, label, NULL);
        rows_release(&got);
    }
    if (held)
        pool_give(&p->sw_pool, held);
    if (is_trap)
        *is_trap = trap_same;
    if (failed)
        return v;
    return p->ok;
}

/* ---- one database image queried many times ---------------------------------------- *
 * libvat's tool-use episodes (lib/episode.c) run an agent's queries on a
 * task's main fixture as the prompt loads it: the image is held once per
 * task, its sandboxes pooled as a prepared check's are (statements kept
 * by text, every budget counted afresh), read only even during a draw. */
struct vat_sql_db {
    json_t *spec; /* own reference: s points into it */
    struct sql_spec s;
    struct fixture_img img;
    struct sql_pool pool;
};

struct vat_sql_db *vat_sql_db_new(const json_t *spec, unsigned char *img, size_t n,
                                  struct vat_verdict *v)
{
    struct vat_sql_db *d = vat_xcalloc(1, sizeof *d);
    d->img.data = d->img.own = img;
    d->img.n = n;
    pthread_mutex_init(&d->pool.lock, NULL);
    d->spec = json_incref((json_t *)spec);
    if (spec_read(d->spec, false, false, &d->s, v) != 0) {
        vat_sql_db_free(d);
        return NULL;
    }
    if (!is_sqlite_image(img, n)) {
        *v = vat_reason_verdictf(false, VAT_INTERNAL, "the image is not an sqlite database");
        vat_sql_db_free(d);
        return NULL;
    }
    return d;
}

void vat_sql_db_free(struct vat_sql_db *d)
{
    if (!d)
        return;
    pool_release(&d->pool);
    free(d->img.own);
    json_decref(d->spec);
    free(d);
}

size_t vat_sql_db_bytes(struct vat_sql_db *d)
{
    return d ? sizeof *d + d->img.n + atomic_load_explicit(&d->pool.bytes, memory_order_relaxed)
             : 0;
}

int vat_sql_db_query(struct vat_sql_db *d, const char *q, size_t len, size_t max_rows,
                     json_t **cols, json_t **rows, struct vat_verdict *v)
{
    *cols = *rows = NULL;
    if (!q) {
        *v = vat_reason_verdictf(false, VAT_PARSE, "no query given");
        return -1;
    }
    struct query_facts qf;
    if (!query_gate(q, len, &qf, v))
        return -1;
    struct sql_spec s = d->s;
    if (max_rows)
        s.max_rows = max_rows;
    struct sandbox *sb = pool_take(&d->pool);
    if (!sb) {
        pthread_once(&mem_net_once, mem_net_init);
        /* sandbox_new without its draw-time writable copy: always read only */
        sb = vat_xcalloc(1, sizeof *sb);
        sb->tables = d->s.tables;
        sb->step_budget = d->s.step_budget;
        sb->mentions_now = qf.mentions_now;
        if (sandbox_open(sb, d->img.data, d->img.n, RUN_PLAIN, v) != 0) {
            free(sb);
            return -1;
        }
        if (sandbox_pool_setup(sb, true, v) != 0)
            return -1;
    }
    sandbox_rearm(sb, &qf);
    struct sql_rows out;
    memset(&out, 0, sizeof out);
    long long work = 0; /* each query its own budget */
    if (sandbox_query(sb, &s, "main", q, len, &out, v, &work) != 0) {
        sandbox_destroy(sb);
        return -1;
    }
    /* the statement that just ran is the most recent of the sandbox's
     * cache (sandbox_query keeps it there): its column names */
    json_t *names = json_array();
    sqlite3_stmt *st = sb->cache && sb->cache->used ? sb->cache->e[0].stmt : NULL;
    for (size_t c = 0; c < out.ncol; c++) {
        const char *nm = st ? sqlite3_column_name(st, (int)c) : NULL;
        json_array_append_new(names, text_json((const unsigned char *)(nm ? nm : ""),
                                               nm ? strlen(nm) : 0));
    }
    pool_give(&d->pool, sb);
    *cols = names;
    *rows = rows_json(&out);
    rows_release(&out);
    *v = vat_verdict_make(true, 1, VAT_OK, "%zu rows", json_array_size(*rows));
    return 0;
}

/* audit.c — the leak audit of a built corpus (see audit.h).
 *
 * Everything is read as untrusted input: a bad line, a missing id, a row
 * out of order or an unsafe path becomes a finding and the audit goes on.
 * Cross-split and within-side checks collect keyed records and sort them,
 * so equal keys meet in runs; no hash-table order reaches the output, and
 * the cost is n log n in the rows, fixtures and data rows, plus one count
 * per (train, test) fixture pair that actually shares a data row.
 * Exports the vat_audit_* functions. */
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "xlsxio.h"

#include "csvio.h"
#include "jsonout.h"

static const char *const kind_names[VAT_AUDIT_N_KINDS] = {
    "task_id",           "fixture_digest",   "prompt",
    "gold_program",      "heldout_string",   "near_duplicate_fixture",
    "duplicate_task_id", "duplicate_row_id", "duplicate_fixture_digest",
    "duplicate_prompt",  "missing_table",    "unparsable",
    "missing_id",        "order",            "split_mismatch",
    "orphan",            "task_rows_missing", "unsafe_path",      "fixture_missing",
    "fixture_unreadable", "fixture_sha256",
};

/* Tables with one row per task: their row id is the task id itself. */
static const int per_task[VAT_N_TABLES] = {1, 0, 1, 0, 1, 1, 0, 1, 1, 1};
static const char *const row_id_key[VAT_N_TABLES] = {
    "task_id", "fixture_id", "task_id", "rollout_id", "task_id", "task_id", "item_id",
    "task_id", "task_id", "task_id",
};

/* A fixture larger than this is reported, not read. */
#define MAX_FIXTURE_BYTES ((size_t)256 << 20)
/* SQLite progress-handler calls (every 1000 VM steps) allowed per fixture. */
#define MAX_SQLITE_TICKS 100000

/* ---- hashing ------------------------------------------------------------ */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#define H64_INIT 0xcbf29ce484222325ULL

static void h64_feed(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        *h ^= b[i];
        *h *= 0x100000001b3ULL;
    }
}

/* Length-prefixed, so cells ("ab","c") and ("a","bc") hash apart. */
static void h64_feed_field(uint64_t *h, char tag, const void *p, size_t n)
{
    unsigned char len[9];
    len[0] = (unsigned char)tag;
    for (int k = 0; k < 8; k++)
        len[k + 1] = (unsigned char)((uint64_t)n >> (8 * k));
    h64_feed(h, len, sizeof len);
    h64_feed(h, p, n);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts and drops repeats; returns the new count. */
static size_t sort_unique_u64(uint64_t *v, size_t n)
{
    if (n < 2)
        return n;
    qsort(v, n, sizeof *v, cmp_u64);
    size_t m = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[m - 1])
            v[m++] = v[i];
    return m;
}

static bool has_u64(const uint64_t *v, size_t n, uint64_t x)
{
    return n && bsearch(&x, v, n, sizeof *v, cmp_u64) != NULL;
}

/* ---- normal forms ------------------------------------------------------- */

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static char *fold_space(const char *s, bool lower_case)
{
    struct vat_buf b = VAT_BUF_INIT;
    bool space = false;
    for (; *s; s++) {
        if (is_space((unsigned char)*s)) {
            space = true;
            continue;
        }
        if (space && b.len)
            vat_buf_putc(&b, ' ');
        space = false;
        vat_buf_putc(&b, lower_case ? lower(*s) : *s);
    }
    return vat_buf_detach(&b);
}

char *vat_audit_normalise_prompt(const char *s)
{
    return fold_space(s, true);
}

static bool sql_tight(char c)
{
    return c == '(' || c == ')' || c == ',';
}

static char *normalise_sql(const char *s)
{
    struct vat_buf b = VAT_BUF_INIT;
    bool space = false;
    size_t i = 0, n = strlen(s);
    while (i < n) {
        char c = s[i];
        if (c == '-' && i + 1 < n && s[i + 1] == '-') {
            while (i < n && s[i] != '\n')
                i++;
            space = true;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            const char *end = strstr(s + i + 2, "*/");
            i = end ? (size_t)(end - s) + 2 : n;
            space = true;
            continue;
        }
        if (is_space((unsigned char)c)) {
            space = true;
            i++;
            continue;
        }
        if (space && b.len && !sql_tight(c) && !sql_tight(b.data[b.len - 1]))
            vat_buf_putc(&b, ' ');
        space = false;
        if (c == '\'') {
            /* A literal is kept byte for byte; '' is an escaped quote. */
            size_t j = i + 1;
            for (; j < n; j++) {
                if (s[j] == '\'') {
                    if (j + 1 < n && s[j + 1] == '\'') {
                        j++;
                        continue;
                    }
                    break;
                }
            }
            size_t stop = j < n ? j + 1 : n;
            vat_buf_putn(&b, s + i, stop - i);
            i = stop;
            continue;
        }
        vat_buf_putc(&b, lower(c));
        i++;
    }
    while (b.len && (b.data[b.len - 1] == ';' || b.data[b.len - 1] == ' '))
        b.data[--b.len] = 0;
    return vat_buf_detach(&b);
}

char *vat_audit_normalise_program(const char *s, const char *kind)
{
    if (kind && strcmp(kind, "sql") == 0)
        return normalise_sql(s);
    return fold_space(s, false);
}

/* ---- keyed records ------------------------------------------------------ */

/* One occurrence of a key (a task id, a prompt digest, a program, ...). */
struct krec {
    char *key;
    char *task;
    char *aux;  /* a fixture path, or NULL */
    int side;
    int table;
    int flag;   /* cases: held out */
    size_t seq; /* reading order, the last tie-break */
};

struct kvec {
    struct krec *v;
    size_t n, cap;
};

static void kv_push(struct kvec *kv, const char *key, const char *task, const char *aux, int side,
                    int table, int flag)
{
    if (kv->n == kv->cap) {
        kv->cap = kv->cap ? 2 * kv->cap : 256;
        kv->v = vat_xrealloc(kv->v, kv->cap * sizeof *kv->v);
    }
    kv->v[kv->n] = (struct krec){
        .key = vat_xstrdup(key),
        .task = vat_xstrdup(task),
        .aux = aux ? vat_xstrdup(aux) : NULL,
        .side = side,
        .table = table,
        .flag = flag,
        .seq = kv->n,
    };
    kv->n++;
}

static void kv_release(struct kvec *kv)
{
    for (size_t i = 0; i < kv->n; i++) {
        free(kv->v[i].key);
        free(kv->v[i].task);
        free(kv->v[i].aux);
    }
    free(kv->v);
    memset(kv, 0, sizeof *kv);
}

static int cmp_str0(const char *a, const char *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int cmp_krec(const void *pa, const void *pb)
{
    const struct krec *a = pa, *b = pb;
    int c = strcmp(a->key, b->key);
    if (!c)
        c = a->side - b->side;
    if (!c)
        c = strcmp(a->task, b->task);
    if (!c)
        c = cmp_str0(a->aux, b->aux);
    if (!c)
        c = a->table - b->table;
    if (!c)
        c = a->seq < b->seq ? -1 : a->seq > b->seq;
    return c;
}

static void kv_sort(struct kvec *kv)
{
    if (kv->n > 1)
        qsort(kv->v, kv->n, sizeof *kv->v, cmp_krec);
}

/* ---- the audit state ---------------------------------------------------- */

struct fxrec {
    char *path, *task, *sha; /* sha: NULL when the table records none */
    int side, table;
    size_t seq;
};

/* One fixture file as read: its digest and its distinct data-row hashes. */
struct fxfile {
    char *path;
    int state; /* 0 read, -1 missing, -2 bytes read but rows not parsed */
    char sha[65];
    uint64_t *rows;
    size_t nrows;
};

/* One listed fixture on one side: what the near-duplicate pairs count. */
struct unit {
    size_t file;
    int side;
    const char *task;
};

struct doc {
    char *tmpl;
    int side;
    size_t seq;
    uint64_t *g; /* distinct 13-gram hashes of the normalised prompt */
    size_t n;
};

struct audit {
    const char *root;
    struct vat_audit_report *r;
    struct kvec ids, rowids, prompts, programs, cases, digests;
    struct fxrec *fx;
    size_t nfx, capfx;
    struct fxfile *files;
    size_t nfiles;
    struct unit *units;
    size_t nunits;
    struct doc *docs;
    size_t ndocs, capdocs;
    char **exp[VAT_N_SPLITS]; /* experience task ids per side, sorted */
    bool table_missing[VAT_N_TABLES][VAT_N_SPLITS]; /* already a missing_table finding */
    size_t nexp[VAT_N_SPLITS], capexp[VAT_N_SPLITS];
};

/* Untrusted text quoted in a detail, cut at a UTF-8 boundary. */
static char *clip(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return vat_xstrdup(s);
    size_t cut = max;
    while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
        cut--;
    return vat_xasprintf("%.*s...", (int)cut, s);
}

static void add_finding(struct audit *a, enum vat_audit_kind k, int table, int side,
                        const char *task, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void add_finding(struct audit *a, enum vat_audit_kind k, int table, int side,
                        const char *task, const char *fmt, ...)
{
    struct vat_audit_report *r = a->r;
    r->count[k]++;
    r->findings++;
    if ((size_t)r->count[k] > r->max_per_kind)
        return;
    if (r->nf == r->capf) {
        r->capf = r->capf ? 2 * r->capf : 64;
        r->f = vat_xrealloc(r->f, r->capf * sizeof *r->f);
    }
    struct vat_buf b = VAT_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    vat_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    /* Ids and details quote untrusted text: bound what one line can hold. */
    r->f[r->nf++] = (struct vat_audit_finding){
        .kind = k,
        .table = table >= 0 ? vat_xstrdup(vat_table_names[table]) : NULL,
        .split = side >= 0 ? vat_xstrdup(vat_split_names[side]) : NULL,
        .task_id = task ? clip(task, 256) : NULL,
        .detail = clip(b.data ? b.data : "", 1024),
    };
    vat_buf_release(&b);
}

/* Opens path for reading only if it is a regular file: a FIFO or device
 * planted in a corpus must not block or stream for ever.  NULL with why. */
static FILE *open_regular(const char *root, const char *rel, size_t *size, char *why, size_t cap)
{
    /* Beneath root: a symbolic link anywhere on the way is not followed. */
    int fd = vat_open_beneath(root, rel, O_RDONLY | O_NONBLOCK, NULL);
    struct stat sb;
    if (fd < 0) {
        snprintf(why, cap, "%s", errno == ELOOP ? "a symbolic link on the way (not followed)"
                                                : strerror(errno));
        return NULL;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(why, cap, "not a regular file");
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl != -1)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(why, cap, "%s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (size)
        *size = (size_t)sb.st_size;
    return f;
}

/* ---- reading the tables ------------------------------------------------- */

static void push_fixture(struct audit *a, const char *path, const char *task, const char *sha,
                         int side, int table)
{
    if (a->nfx == a->capfx) {
        a->capfx = a->capfx ? 2 * a->capfx : 256;
        a->fx = vat_xrealloc(a->fx, a->capfx * sizeof *a->fx);
    }
    a->fx[a->nfx] = (struct fxrec){
        .path = vat_xstrdup(path),
        .task = vat_xstrdup(task),
        .sha = sha ? vat_xstrdup(sha) : NULL,
        .side = side,
        .table = table,
        .seq = a->nfx,
    };
    a->nfx++;
}

/* A fixture path from a row: refused unopened when unsafe. */
static void fixture_path(struct audit *a, int table, int side, long line, const char *task,
                         const json_t *path, const json_t *sha)
{
    if (!path)
        return;
    const char *p = json_string_value(path);
    if (!p || !vat_path_is_safe(p)) {
        char *shown = p ? clip(p, 200) : vat_xstrdup("(not a string)");
        add_finding(a, VAT_AUDIT_UNSAFE_PATH, table, side, task,
                    "line %ld: fixture path '%s' is not a safe corpus-relative path", line, shown);
        free(shown);
        return;
    }
    push_fixture(a, p, task, json_string_value(sha), side, table);
}

static void fixture_obj(struct audit *a, int table, int side, long line, const char *task,
                        const json_t *o)
{
    if (json_is_object(o))
        fixture_path(a, table, side, line, task, json_object_get(o, "path"),
                     json_object_get(o, "sha256"));
}

/* The distinct word 13-gram hashes of a normalised prompt. */
static uint64_t *prompt_grams(const char *norm, size_t *out_n)
{
    size_t ntok = 0, cap = 64;
    uint64_t *tok = vat_xmalloc(cap * sizeof *tok);
    for (const char *p = norm; *p;) {
        const char *sp = strchr(p, ' ');
        size_t len = sp ? (size_t)(sp - p) : strlen(p);
        uint64_t h = H64_INIT;
        h64_feed(&h, p, len);
        if (ntok == cap) {
            cap *= 2;
            tok = vat_xrealloc(tok, cap * sizeof *tok);
        }
        tok[ntok++] = mix64(h);
        p += len;
        if (*p)
            p++;
    }
    size_t n = ntok >= VAT_AUDIT_NGRAM ? ntok - VAT_AUDIT_NGRAM + 1 : 0;
    uint64_t *g = vat_xmalloc((n ? n : 1) * sizeof *g);
    for (size_t i = 0; i < n; i++) {
        uint64_t h = 0;
        for (size_t k = 0; k < VAT_AUDIT_NGRAM; k++)
            h = mix64(h ^ tok[i + k]);
        g[i] = h;
    }
    free(tok);
    *out_n = sort_unique_u64(g, n);
    return g;
}

static void add_prompt(struct audit *a, int table, int side, const char *task, const char *prompt,
                       const char *tmpl)
{
    char *norm = vat_audit_normalise_prompt(prompt);
    char hex[65];
    vat_sha256_hex(norm, strlen(norm), hex);
    kv_push(&a->prompts, hex, task, NULL, side, table, 0);
    if (tmpl) {
        if (a->ndocs == a->capdocs) {
            a->capdocs = a->capdocs ? 2 * a->capdocs : 64;
            a->docs = vat_xrealloc(a->docs, a->capdocs * sizeof *a->docs);
        }
        struct doc *d = &a->docs[a->ndocs];
        d->tmpl = vat_xstrdup(tmpl);
        d->side = side;
        d->seq = a->ndocs;
        d->g = prompt_grams(norm, &d->n);
        a->ndocs++;
    }
    free(norm);
}

static void add_program(struct audit *a, int table, int side, const char *task, const char *kind,
                        const char *program)
{
    char *norm = vat_audit_normalise_program(program, kind);
    char *key = vat_xasprintf("%s:%s", kind, norm);
    kv_push(&a->programs, key, task, NULL, side, table, 0);
    free(key);
    free(norm);
}

static int cmp_strp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool experience_has(const struct audit *a, int side, const char *task)
{
    const char *key = task;
    return a->nexp[side] &&
           bsearch(&key, a->exp[side], a->nexp[side], sizeof(char *), cmp_strp) != NULL;
}

static void experience_row(struct audit *a, int side, long line, const char *task,
                           const json_t *row)
{
    struct vat_audit_report *r = a->r;
    r->tasks[side]++;
    if (a->nexp[side] == a->capexp[side]) {
        a->capexp[side] = a->capexp[side] ? 2 * a->capexp[side] : 256;
        a->exp[side] = vat_xrealloc(a->exp[side], a->capexp[side] * sizeof(char *));
    }
    a->exp[side][a->nexp[side]++] = vat_xstrdup(task);

    const char *tmpl = json_string_value(json_object_get(row, "template"));
    char *derived = NULL;
    if (!tmpl) {
        const char *dash = strrchr(task, '-');
        derived = vat_xstrndup(task, dash ? (size_t)(dash - task) : strlen(task));
        tmpl = derived;
    }
    const char *prompt = json_string_value(json_object_get(row, "prompt"));
    if (prompt)
        add_prompt(a, VAT_T_EXPERIENCE, side, task, prompt, tmpl);
    free(derived);

    const char *kind = json_string_value(json_object_get(row, "answer_kind"));
    const char *gold = json_string_value(json_object_get(row, "gold"));
    if (kind && gold && (strcmp(kind, "regex") == 0 || strcmp(kind, "sql") == 0))
        add_program(a, VAT_T_EXPERIENCE, side, task, kind, gold);

    fixture_obj(a, VAT_T_EXPERIENCE, side, line, task, json_object_get(row, "fixture"));
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(row, "variants"), i, v)
        fixture_obj(a, VAT_T_EXPERIENCE, side, line, task, v);
}

static void verifiers_row(struct audit *a, int side, long line, const char *task,
                          const json_t *row)
{
    json_t *spec = vat_verifier_spec(row);
    const char *ref = json_string_value(json_object_get(spec, "reference_sql"));
    if (ref)
        add_program(a, VAT_T_VERIFIERS, side, task, "sql", ref);
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(spec, "cases"), i, v) {
        const char *text = json_string_value(json_object_get(v, "text"));
        if (text)
            kv_push(&a->cases, text, task, NULL, side, VAT_T_VERIFIERS,
                    json_is_true(json_object_get(v, "heldout")));
    }
    json_array_foreach(json_object_get(spec, "fixtures"), i, v)
        fixture_path(a, VAT_T_VERIFIERS, side, line, task, v, NULL);
    json_decref(spec);
}

/* Checks one parsed row; prev is the file's previous task id. */
static void check_row(struct audit *a, int table, int side, long line, const json_t *row,
                      char **prev)
{
    const char *task = json_string_value(json_object_get(row, "task_id"));
    if (!task || !*task) {
        add_finding(a, VAT_AUDIT_MISSING_ID, table, side, NULL, "line %ld: the row has no task_id",
                    line);
        return;
    }
    const char *sp = json_string_value(json_object_get(row, "split"));
    if (!sp || strcmp(sp, vat_split_names[side]) != 0)
        add_finding(a, VAT_AUDIT_SPLIT_MISMATCH, table, side, task,
                    "line %ld: split %s%s%s in the %s file", line, sp ? "'" : "",
                    sp ? sp : "missing", sp ? "'" : "", vat_split_names[side]);
    if (*prev && strcmp(task, *prev) < 0)
        add_finding(a, VAT_AUDIT_ORDER, table, side, task, "line %ld: '%s' comes after '%s'", line,
                    task, *prev);
    if (!*prev || strcmp(task, *prev) != 0)
        kv_push(&a->ids, task, task, NULL, side, table, 0);
    free(*prev);
    *prev = vat_xstrdup(task);

    const char *rid = per_task[table] ? task
                                      : json_string_value(json_object_get(row, row_id_key[table]));
    if (!rid || !*rid) {
        add_finding(a, VAT_AUDIT_MISSING_ID, table, side, task, "line %ld: the row has no %s",
                    line, row_id_key[table]);
    } else {
        char *key = vat_xasprintf("%d\x1f%s", table, rid);
        kv_push(&a->rowids, key, task, rid, side, table, 0);
        free(key);
    }
    if (table != VAT_T_EXPERIENCE && !experience_has(a, side, task))
        add_finding(a, VAT_AUDIT_ORPHAN, table, side, task,
                    "line %ld: no experience row for '%s' in the %s split", line, task,
                    vat_split_names[side]);

    const char *prompt = NULL;
    switch (table) {
    case VAT_T_EXPERIENCE:
        experience_row(a, side, line, task, row);
        break;
    case VAT_T_FIXTURE_GENERATORS:
        fixture_path(a, table, side, line, task, json_object_get(row, "path"),
                     json_object_get(row, "sha256"));
        break;
    case VAT_T_SFT_EXAMPLES:
    case VAT_T_PREFERENCE_PAIRS:
    case VAT_T_GRPO:
    case VAT_T_SFT_REASONING:
        prompt = vat_row_prompt(row);
        if (prompt)
            add_prompt(a, table, side, task, prompt, NULL);
        break;
    case VAT_T_VERIFIERS:
        verifiers_row(a, side, line, task, row);
        break;
    default:
        break;
    }
}

static void read_table(struct audit *a, int table, int side)
{
    char rel[VAT_TABLE_REL_MAX];
    vat_table_rel(rel, table, side);
    char why[256];
    FILE *f = open_regular(a->root, rel, NULL, why, sizeof why);
    if (!f) {
        a->table_missing[table][side] = true;
        add_finding(a, VAT_AUDIT_MISSING_TABLE, table, side, NULL, "cannot open '%s': %s", rel,
                    why);
        return;
    }
    char *line = NULL, *prev = NULL;
    size_t cap = 0;
    ssize_t got;
    long lineno = 0;
    while ((got = getline(&line, &cap, f)) >= 0) {
        lineno++;
        size_t n = (size_t)got;
        if (n && line[n - 1] == '\n')
            n--;
        json_error_t je;
        json_t *row = n ? json_loadb(line, n, JSON_REJECT_DUPLICATES, &je) : NULL;
        if (!json_is_object(row)) {
            add_finding(a, VAT_AUDIT_UNPARSABLE, table, side, NULL, "line %ld: %s", lineno,
                        !n ? "empty line" : row ? "not a JSON object" : je.text);
            json_decref(row);
            continue;
        }
        check_row(a, table, side, lineno, row, &prev);
        json_decref(row);
    }
    if (ferror(f))
        add_finding(a, VAT_AUDIT_MISSING_TABLE, table, side, NULL, "cannot read '%s': %s", rel,
                    strerror(errno));
    free(prev);
    free(line);
    fclose(f);
}

/* ---- runs of equal keys ------------------------------------------------- */

/* Calls fn on every run [i, j) of records with equal keys (sorted). */
static void for_runs(struct audit *a, struct kvec *kv,
                     void (*fn)(struct audit *, const struct krec *, size_t))
{
    kv_sort(kv);
    for (size_t i = 0; i < kv->n;) {
        size_t j = i + 1;
        while (j < kv->n && strcmp(kv->v[j].key, kv->v[i].key) == 0)
            j++;
        fn(a, kv->v + i, j - i);
        i = j;
    }
}

/* The first train record of a run, or NULL; records are sorted by side. */
static const struct krec *first_train(const struct krec *v, size_t n)
{
    return n && v[0].side == VAT_SPLIT_TRAIN ? &v[0] : NULL;
}

static const struct krec *first_test(const struct krec *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].side == VAT_SPLIT_TEST)
            return &v[i];
    return NULL;
}

static void run_ids(struct audit *a, const struct krec *v, size_t n)
{
    /* Every table holds the same task ids per side: tables of two builds
     * side by side (an interrupted build, --only into a full root) show
     * as an experience task some table lacks, or as orphans. */
    unsigned seen[VAT_N_SPLITS] = {0};
    for (size_t i = 0; i < n; i++)
        seen[v[i].side] |= 1u << v[i].table;
    for (int s = 0; s < VAT_N_SPLITS; s++) {
        if (!(seen[s] & (1u << VAT_T_EXPERIENCE)))
            continue;
        struct vat_buf lacking = VAT_BUF_INIT;
        int first = -1;
        for (int t = 0; t < VAT_N_TABLES; t++) {
            if ((seen[s] & (1u << t)) || a->table_missing[t][s])
                continue;
            vat_buf_printf(&lacking, "%s'%s'", lacking.len ? ", " : "", vat_table_names[t]);
            if (first < 0)
                first = t;
        }
        /* One finding per task and side, naming every table that lacks it. */
        if (first >= 0)
            add_finding(a, VAT_AUDIT_TASK_ROWS_MISSING, first, s, v[0].key,
                        "task '%s' of the %s experience has no row in %s", v[0].key,
                        vat_split_names[s], lacking.data);
        vat_buf_release(&lacking);
    }

    const struct krec *tr = first_train(v, n), *te = first_test(v, n);
    if (tr && te)
        add_finding(a, VAT_AUDIT_TASK_ID, te->table, VAT_SPLIT_TEST, te->key,
                    "task '%s' is in the test split and in the train split (table '%s')", te->key,
                    vat_table_names[tr->table]);
}

static void run_rowids(struct audit *a, const struct krec *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (v[i].side != v[i - 1].side)
            continue;
        bool task_table = per_task[v[i].table];
        add_finding(a, task_table ? VAT_AUDIT_DUP_TASK_ID : VAT_AUDIT_DUP_ROW_ID, v[i].table,
                    v[i].side, v[i].task, "%s '%s' appears more than once in the %s file",
                    row_id_key[v[i].table], v[i].aux, vat_split_names[v[i].side]);
    }
}

/* For each distinct test task of a run that also has a train record:
 * one cross-split finding naming the first train task. */
static void cross_findings(struct audit *a, const struct krec *v, size_t n,
                           enum vat_audit_kind kind, const char *what)
{
    const struct krec *tr = first_train(v, n);
    if (!tr)
        return;
    for (size_t i = 0; i < n; i++) {
        if (v[i].side != VAT_SPLIT_TEST || (i && v[i - 1].side == VAT_SPLIT_TEST &&
                                            strcmp(v[i - 1].task, v[i].task) == 0))
            continue;
        add_finding(a, kind, v[i].table, VAT_SPLIT_TEST, v[i].task,
                    "%s of test task '%s' is also in train task '%s' (table '%s')", what,
                    v[i].task, tr->task, vat_table_names[tr->table]);
    }
}

static void run_prompts(struct audit *a, const struct krec *v, size_t n)
{
    cross_findings(a, v, n, VAT_AUDIT_PROMPT, "the normalised prompt");
    /* Within a side, one task repeating its prompt across tables is fine;
     * a second task with the same prompt is a duplicate. */
    size_t first = 0; /* the first record of the current side */
    for (size_t i = 1; i < n; i++) {
        if (v[i].side != v[i - 1].side) {
            first = i;
            continue;
        }
        if (strcmp(v[i].task, v[i - 1].task) != 0)
            add_finding(a, VAT_AUDIT_DUP_PROMPT, v[i].table, v[i].side, v[i].task,
                        "task '%s' has the same normalised prompt as '%s'", v[i].task,
                        v[first].task);
    }
}

static void run_programs(struct audit *a, const struct krec *v, size_t n)
{
    cross_findings(a, v, n, VAT_AUDIT_GOLD_PROGRAM, "the normalised gold program");
}

static void run_cases(struct audit *a, const struct krec *v, size_t n)
{
    bool heldout = false;
    for (size_t i = 0; i < n; i++)
        heldout |= v[i].flag != 0;
    if (!heldout)
        return;
    char *text = clip(v[0].key, 80);
    char *what = vat_xasprintf("the held-out string \"%s\"", text);
    cross_findings(a, v, n, VAT_AUDIT_HELDOUT_STRING, what);
    free(what);
    free(text);
}

static void run_digests(struct audit *a, const struct krec *v, size_t n)
{
    const struct krec *tr = first_train(v, n);
    size_t first = 0; /* the first record of the current side */
    for (size_t i = 0; i < n; i++) {
        bool same_side = i && v[i - 1].side == v[i].side;
        if (!same_side)
            first = i;
        if (same_side && strcmp(v[i - 1].aux, v[i].aux) == 0)
            continue; /* the same file listed again */
        if (v[i].side == VAT_SPLIT_TEST && tr)
            add_finding(a, VAT_AUDIT_FIXTURE_DIGEST, v[i].table, VAT_SPLIT_TEST, v[i].task,
                        "'%s' of test task '%s' has the sha256 of '%s' of train task '%s'",
                        v[i].aux, v[i].task, tr->aux, tr->task);
        if (same_side)
            add_finding(a, VAT_AUDIT_DUP_FIXTURE_DIGEST, v[i].table, v[i].side, v[i].task,
                        "'%s' has the same sha256 as '%s' in the %s split", v[i].aux,
                        v[first].aux, vat_split_names[v[i].side]);
    }
}

/* ---- fixture files ------------------------------------------------------ */

struct rowset {
    uint64_t *v;
    size_t n, cap;
};

static void rowset_push(struct rowset *rs, uint64_t h)
{
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? 2 * rs->cap : 64;
        rs->v = vat_xrealloc(rs->v, rs->cap * sizeof *rs->v);
    }
    rs->v[rs->n++] = h;
}

/* A workbook's rows: every row of every sheet holding two cells or more
 * (titles and notes are single cells), hashed cell by cell with the
 * cell's type, as read by our workbook reader. */
static int xlsx_rows(const unsigned char *img, size_t len, const char *rel, struct rowset *rs,
                     char *why, size_t cap)
{
    struct vat_xl_book b = VAT_XL_BOOK_INIT;
    struct vat_err e = {{0}};
    if (vat_xl_read_mem(&b, img, len, rel, &e) != 0) {
        snprintf(why, cap, "%s", e.msg);
        return -1;
    }
    char buf[64];
    for (size_t i = 0; i < b.nsheets; i++) {
        const struct vat_xl_sheet *s = &b.sheet[i];
        for (size_t k = 0; k < s->ncells;) {
            size_t end = k;
            uint64_t h = H64_INIT;
            while (end < s->ncells && s->cell[end].row == s->cell[k].row) {
                const struct vat_xl_cell *c = &s->cell[end];
                const char *txt = vat_xl_text(c, buf, sizeof buf);
                h64_feed_field(&h, c->type == VAT_XL_STRING ? 's' : 'n', txt, strlen(txt));
                end++;
            }
            if (end - k >= 2)
                rowset_push(rs, mix64(h));
            k = end;
        }
    }
    vat_xl_release(&b);
    return 0;
}

static int csv_rows(struct audit *a, const char *rel, struct rowset *rs, char *why, size_t cap)
{
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    if (vat_csv_read(&c, a->root, rel, &e) != 0) {
        snprintf(why, cap, "%s", e.msg);
        vat_csv_release(&c);
        return -1;
    }
    for (size_t r = 1; r < c.nrows; r++) {
        uint64_t h = H64_INIT;
        for (size_t k = 0; k < c.row[r].n; k++)
            h64_feed_field(&h, 's', c.row[r].cell[k], strlen(c.row[r].cell[k]));
        rowset_push(rs, mix64(h));
    }
    vat_csv_release(&c);
    return 0;
}

static int sqlite_budget(void *arg)
{
    long *ticks = arg;
    return ++*ticks > MAX_SQLITE_TICKS;
}

/* Hashes every row of every ordinary table of a database image.  The
 * image is read in memory, read-only, defensively, with a step budget:
 * it is untrusted and must neither touch the disk nor run for ever.
 * Table names are left out of the hash, so renaming a table does not
 * hide copied rows. */
static int sqlite_rows(unsigned char *img, size_t len, struct rowset *rs, char *why, size_t cap)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *list = NULL, *st = NULL;
    long ticks = 0;
    int rc = -1;
    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        goto out;
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
    sqlite3_progress_handler(db, 1000, sqlite_budget, &ticks);
    if (sqlite3_deserialize(db, "main", img, (sqlite3_int64)len, (sqlite3_int64)len,
                            SQLITE_DESERIALIZE_READONLY) != SQLITE_OK)
        goto out;
    if (sqlite3_prepare_v2(db,
                           "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                           "'sqlite\\_%' ESCAPE '\\' AND sql NOT LIKE 'CREATE VIRTUAL%' "
                           "ORDER BY name",
                           -1, &list, NULL) != SQLITE_OK)
        goto out;
    int lrc;
    while ((lrc = sqlite3_step(list)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(list, 0);
        struct vat_buf q = VAT_BUF_INIT;
        vat_buf_puts(&q, "SELECT * FROM \"");
        for (const char *p = name ? name : ""; *p; p++) {
            if (*p == '"')
                vat_buf_putc(&q, '"');
            vat_buf_putc(&q, *p);
        }
        vat_buf_putc(&q, '"');
        int prc = sqlite3_prepare_v2(db, q.data, -1, &st, NULL);
        vat_buf_release(&q);
        if (prc != SQLITE_OK)
            goto out;
        int src;
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
            uint64_t h = H64_INIT;
            int nc = sqlite3_column_count(st);
            for (int k = 0; k < nc; k++) {
                char num[40];
                switch (sqlite3_column_type(st, k)) {
                case SQLITE_INTEGER:
                    snprintf(num, sizeof num, "%lld", (long long)sqlite3_column_int64(st, k));
                    h64_feed_field(&h, 'i', num, strlen(num));
                    break;
                case SQLITE_FLOAT:
                    snprintf(num, sizeof num, "%.17g", sqlite3_column_double(st, k));
                    h64_feed_field(&h, 'r', num, strlen(num));
                    break;
                case SQLITE_TEXT:
                    h64_feed_field(&h, 't', sqlite3_column_text(st, k),
                                   (size_t)sqlite3_column_bytes(st, k));
                    break;
                case SQLITE_BLOB:
                    h64_feed_field(&h, 'b', sqlite3_column_blob(st, k),
                                   (size_t)sqlite3_column_bytes(st, k));
                    break;
                default:
                    h64_feed_field(&h, 'n', "", 0);
                    break;
                }
            }
            rowset_push(rs, mix64(h));
        }
        sqlite3_finalize(st);
        st = NULL;
        if (src != SQLITE_DONE)
            goto out;
    }
    if (lrc == SQLITE_DONE)
        rc = 0;
out:
    if (rc != 0)
        snprintf(why, cap, "%s", ticks > MAX_SQLITE_TICKS ? "step budget exhausted"
                                 : db                     ? sqlite3_errmsg(db)
                                                          : "out of memory");
    sqlite3_finalize(st);
    sqlite3_finalize(list);
    sqlite3_close(db);
    return rc;
}

/* Reads one fixture: its digest, then its data rows.  Sets ff->state and
 * why when something fails. */
static void read_fixture(struct audit *a, struct fxfile *ff, char *why, size_t cap)
{
    size_t len = 0;
    FILE *f = open_regular(a->root, ff->path, &len, why, cap);
    ff->state = -1;
    if (!f)
        return;
    if (len > MAX_FIXTURE_BYTES) {
        snprintf(why, cap, "larger than %zu bytes", MAX_FIXTURE_BYTES);
        fclose(f);
        return;
    }
    unsigned char *img = vat_xmalloc(len ? len : 1);
    size_t got = fread(img, 1, len, f);
    int err = ferror(f);
    fclose(f);
    if (err || got != len) {
        snprintf(why, cap, "cannot read it");
        free(img);
        return;
    }
    vat_sha256_hex(img, len, ff->sha);
    struct rowset rs = {NULL, 0, 0};
    int rc;
    if (len >= 16 && memcmp(img, "SQLite format 3", 16) == 0)
        rc = sqlite_rows(img, len, &rs, why, cap);
    else if (len >= 4 && memcmp(img, "PK\3\4", 4) == 0)
        rc = xlsx_rows(img, len, ff->path, &rs, why, cap);
    else
        rc = csv_rows(a, ff->path, &rs, why, cap);
    free(img);
    ff->state = rc == 0 ? 0 : -2;
    ff->nrows = sort_unique_u64(rs.v, rs.n);
    ff->rows = rs.v;
    if (rc != 0) {
        free(ff->rows);
        ff->rows = NULL;
        ff->nrows = 0;
    }
}

static int cmp_fxrec(const void *pa, const void *pb)
{
    const struct fxrec *a = pa, *b = pb;
    int c = strcmp(a->path, b->path);
    if (!c)
        c = a->side - b->side;
    if (!c)
        c = strcmp(a->task, b->task);
    if (!c)
        c = a->seq < b->seq ? -1 : a->seq > b->seq;
    return c;
}

/* Reads each listed fixture once; records digests and near-duplicate units. */
static void check_fixture_files(struct audit *a)
{
    if (a->nfx > 1)
        qsort(a->fx, a->nfx, sizeof *a->fx, cmp_fxrec);
    a->files = vat_xcalloc(a->nfx ? a->nfx : 1, sizeof *a->files);
    a->units = vat_xcalloc(a->nfx ? a->nfx : 1, sizeof *a->units);
    for (size_t i = 0; i < a->nfx;) {
        size_t j = i + 1;
        while (j < a->nfx && strcmp(a->fx[j].path, a->fx[i].path) == 0)
            j++;
        struct fxfile *ff = &a->files[a->nfiles];
        ff->path = a->fx[i].path;
        char why[512] = "";
        read_fixture(a, ff, why, sizeof why);
        if (ff->state == -2)
            add_finding(a, VAT_AUDIT_FIXTURE_UNREADABLE, a->fx[i].table, a->fx[i].side,
                        a->fx[i].task, "'%s': its rows cannot be read: %s", ff->path, why);
        for (size_t k = i; k < j; k++) {
            const struct fxrec *x = &a->fx[k];
            bool new_side = k == i || a->fx[k - 1].side != x->side;
            bool new_task = new_side || strcmp(a->fx[k - 1].task, x->task) != 0;
            if (new_side) {
                a->r->fixtures[x->side]++;
                if (ff->state == -1)
                    add_finding(a, VAT_AUDIT_FIXTURE_MISSING, x->table, x->side, x->task,
                                "'%s': %s", x->path, why);
                if (ff->state == 0)
                    a->units[a->nunits++] = (struct unit){a->nfiles, x->side, x->task};
            }
            if (ff->state != -1 && x->sha && strcmp(x->sha, ff->sha) != 0) {
                char *rec = clip(x->sha, 80);
                add_finding(a, VAT_AUDIT_FIXTURE_SHA256, x->table, x->side, x->task,
                            "'%s': the table records sha256 '%s', the file has %s", x->path, rec,
                            ff->sha);
                free(rec);
            }
            if (new_task) {
                /* The file's own digest when it could be read, else the
                 * first one a table records for it. */
                const char *sha = ff->state != -1 ? ff->sha : NULL;
                for (size_t m = k; !sha && m < j && a->fx[m].side == x->side; m++)
                    sha = a->fx[m].sha;
                if (sha)
                    kv_push(&a->digests, sha, x->task, x->path, x->side, x->table, 0);
            }
        }
        a->nfiles++;
        i = j;
    }
}

struct rowent {
    uint64_t h;
    uint32_t unit;
};

static int cmp_rowent(const void *pa, const void *pb)
{
    const struct rowent *a = pa, *b = pb;
    if (a->h != b->h)
        return a->h < b->h ? -1 : 1;
    return a->unit < b->unit ? -1 : a->unit > b->unit;
}

/* Counts data rows shared by each (train, test) pair of fixtures through
 * an index sorted by row hash, so only pairs that share a row cost time. */
static void check_near_duplicates(struct audit *a)
{
    struct vat_audit_report *r = a->r;
    size_t ne = 0;
    for (size_t u = 0; u < a->nunits; u++)
        ne += a->files[a->units[u].file].nrows;
    struct rowent *ent = vat_xmalloc((ne ? ne : 1) * sizeof *ent);
    size_t k = 0;
    for (size_t u = 0; u < a->nunits; u++) {
        const struct fxfile *ff = &a->files[a->units[u].file];
        for (size_t i = 0; i < ff->nrows; i++)
            ent[k++] = (struct rowent){ff->rows[i], (uint32_t)u};
    }
    if (ne > 1)
        qsort(ent, ne, sizeof *ent, cmp_rowent);
    struct rowset pairs = {NULL, 0, 0};
    for (size_t i = 0; i < ne;) {
        size_t j = i + 1;
        while (j < ne && ent[j].h == ent[i].h)
            j++;
        size_t ntrain = 0, ntest = 0;
        for (size_t m = i; m < j; m++) {
            if (a->units[ent[m].unit].side == VAT_SPLIT_TRAIN)
                ntrain++;
            else
                ntest++;
        }
        if (ntrain && ntest) {
            if (j - i > VAT_AUDIT_COMMON_ROW) {
                r->common_rows_skipped++;
            } else {
                for (size_t x = i; x < j; x++) {
                    if (a->units[ent[x].unit].side != VAT_SPLIT_TRAIN)
                        continue;
                    for (size_t y = i; y < j; y++)
                        if (a->units[ent[y].unit].side == VAT_SPLIT_TEST)
                            rowset_push(&pairs, (uint64_t)ent[x].unit << 32 | ent[y].unit);
                }
            }
        }
        i = j;
    }
    free(ent);
    if (pairs.n > 1)
        qsort(pairs.v, pairs.n, sizeof *pairs.v, cmp_u64);
    for (size_t i = 0; i < pairs.n;) {
        size_t j = i + 1;
        while (j < pairs.n && pairs.v[j] == pairs.v[i])
            j++;
        long shared = (long)(j - i);
        const struct unit *tr = &a->units[pairs.v[i] >> 32];
        const struct unit *te = &a->units[pairs.v[i] & 0xffffffffu];
        const struct fxfile *ftr = &a->files[tr->file], *fte = &a->files[te->file];
        double s_tr = (double)shared / (double)ftr->nrows;
        double s_te = (double)shared / (double)fte->nrows;
        /* "a" is the fixture more of whose rows are shared; the test one on a tie. */
        bool a_is_test = s_te >= s_tr;
        const struct unit *ua = a_is_test ? te : tr, *ub = a_is_test ? tr : te;
        const struct fxfile *fa = a_is_test ? fte : ftr, *fb = a_is_test ? ftr : fte;
        double share = a_is_test ? s_te : s_tr;
        if (share > r->max_overlap_share) {
            r->max_overlap_share = share;
            r->max_overlap_rows = shared;
            free(r->max_overlap_a);
            free(r->max_overlap_b);
            r->max_overlap_a = vat_xstrdup(fa->path);
            r->max_overlap_b = vat_xstrdup(fb->path);
        }
        if (2 * (size_t)shared > fa->nrows)
            add_finding(a, VAT_AUDIT_NEAR_DUPLICATE, VAT_T_FIXTURE_GENERATORS, ua->side, ua->task,
                        "'%s' (%s) shares %ld of its %zu distinct data rows with '%s' (%s, task "
                        "'%s')",
                        fa->path, vat_split_names[ua->side], shared, fa->nrows, fb->path,
                        vat_split_names[ub->side], ub->task);
        i = j;
    }
    free(pairs.v);
}

/* ---- prompt n-gram overlap ---------------------------------------------- */

static int cmp_doc(const void *pa, const void *pb)
{
    const struct doc *a = pa, *b = pb;
    int c = strcmp(a->tmpl, b->tmpl);
    if (!c)
        c = a->side - b->side;
    if (!c)
        c = a->seq < b->seq ? -1 : a->seq > b->seq;
    return c;
}

static void measure_ngram_overlap(struct audit *a)
{
    struct vat_audit_report *r = a->r;
    if (a->ndocs > 1)
        qsort(a->docs, a->ndocs, sizeof *a->docs, cmp_doc);
    size_t ntmpl = 0;
    for (size_t i = 0; i < a->ndocs; i++)
        if (i == 0 || strcmp(a->docs[i].tmpl, a->docs[i - 1].tmpl) != 0)
            ntmpl++;
    r->per_template = vat_xcalloc(ntmpl ? ntmpl : 1, sizeof *r->per_template);
    r->n_templates = ntmpl;
    size_t *tmpl_of = vat_xcalloc(a->ndocs ? a->ndocs : 1, sizeof *tmpl_of);

    /* Each template's fixed wording: 13-grams in more than half of its
     * prompts, train and test together.  They are removed from every
     * prompt of that template before sides are compared. */
    size_t t = 0;
    for (size_t i = 0; i < a->ndocs; t++) {
        size_t j = i + 1;
        while (j < a->ndocs && strcmp(a->docs[j].tmpl, a->docs[i].tmpl) == 0)
            j++;
        r->per_template[t].name = vat_xstrdup(a->docs[i].tmpl);
        size_t total = 0;
        for (size_t d = i; d < j; d++)
            total += a->docs[d].n;
        uint64_t *all = vat_xmalloc((total ? total : 1) * sizeof *all);
        size_t m = 0;
        for (size_t d = i; d < j; d++) {
            memcpy(all + m, a->docs[d].g, a->docs[d].n * sizeof *all);
            m += a->docs[d].n;
            tmpl_of[d] = t;
        }
        if (m > 1)
            qsort(all, m, sizeof *all, cmp_u64);
        size_t nfixed = 0;
        for (size_t x = 0; x < m;) {
            size_t y = x + 1;
            while (y < m && all[y] == all[x])
                y++;
            if (2 * (y - x) > j - i)
                all[nfixed++] = all[x];
            x = y;
        }
        for (size_t d = i; d < j; d++) {
            struct doc *dc = &a->docs[d];
            size_t keep = 0;
            for (size_t g = 0; g < dc->n; g++)
                if (!has_u64(all, nfixed, dc->g[g]))
                    dc->g[keep++] = dc->g[g];
            dc->n = keep;
        }
        free(all);
        i = j;
    }

    size_t total = 0;
    for (size_t d = 0; d < a->ndocs; d++)
        if (a->docs[d].side == VAT_SPLIT_TRAIN)
            total += a->docs[d].n;
    uint64_t *train = vat_xmalloc((total ? total : 1) * sizeof *train);
    size_t m = 0;
    for (size_t d = 0; d < a->ndocs; d++) {
        if (a->docs[d].side != VAT_SPLIT_TRAIN)
            continue;
        memcpy(train + m, a->docs[d].g, a->docs[d].n * sizeof *train);
        m += a->docs[d].n;
    }
    m = sort_unique_u64(train, m);
    for (size_t d = 0; d < a->ndocs; d++) {
        const struct doc *dc = &a->docs[d];
        if (dc->side != VAT_SPLIT_TEST)
            continue;
        struct vat_audit_template_overlap *pt = &r->per_template[tmpl_of[d]];
        r->ngram_test_prompts++;
        pt->test_prompts++;
        for (size_t g = 0; g < dc->n; g++) {
            if (has_u64(train, m, dc->g[g])) {
                r->ngram_overlap_tasks++;
                pt->overlap_tasks++;
                break;
            }
        }
    }
    r->ngram_overlap_share = r->ngram_test_prompts
                                 ? (double)r->ngram_overlap_tasks / (double)r->ngram_test_prompts
                                 : 0.0;
    free(train);
    free(tmpl_of);
}

/* ---- the audit ---------------------------------------------------------- */

void vat_audit_init(struct vat_audit_report *r, size_t max_per_kind)
{
    memset(r, 0, sizeof *r);
    r->max_per_kind = max_per_kind;
}

static void audit_release(struct audit *a)
{
    kv_release(&a->ids);
    kv_release(&a->rowids);
    kv_release(&a->prompts);
    kv_release(&a->programs);
    kv_release(&a->cases);
    kv_release(&a->digests);
    for (size_t i = 0; i < a->nfiles; i++)
        free(a->files[i].rows);
    free(a->files);
    free(a->units);
    for (size_t i = 0; i < a->nfx; i++) {
        free(a->fx[i].path);
        free(a->fx[i].task);
        free(a->fx[i].sha);
    }
    free(a->fx);
    for (size_t i = 0; i < a->ndocs; i++) {
        free(a->docs[i].tmpl);
        free(a->docs[i].g);
    }
    free(a->docs);
    for (int s = 0; s < VAT_N_SPLITS; s++) {
        for (size_t i = 0; i < a->nexp[s]; i++)
            free(a->exp[s][i]);
        free(a->exp[s]);
    }
}

int vat_audit_run(const char *root, struct vat_audit_report *r, struct vat_err *e)
{
    char *out = vat_path_join(root, "out");
    struct stat sb;
    int ok = stat(out, &sb) == 0 && S_ISDIR(sb.st_mode);
    free(out);
    if (!ok)
        return vat_err_set(e, "vat: no corpus at '%s' ('out' is missing; run 'vat build')", root);

    struct audit a;
    memset(&a, 0, sizeof a);
    a.root = root;
    a.r = r;
    /* Experience first: the other tables' rows are checked against it. */
    for (int s = 0; s < VAT_N_SPLITS; s++)
        read_table(&a, VAT_T_EXPERIENCE, s);
    for (int s = 0; s < VAT_N_SPLITS; s++)
        if (a.nexp[s] > 1)
            qsort(a.exp[s], a.nexp[s], sizeof(char *), cmp_strp);
    for (int t = 0; t < VAT_N_TABLES; t++)
        if (t != VAT_T_EXPERIENCE)
            for (int s = 0; s < VAT_N_SPLITS; s++)
                read_table(&a, t, s);

    for_runs(&a, &a.ids, run_ids);
    for_runs(&a, &a.rowids, run_rowids);
    for_runs(&a, &a.prompts, run_prompts);
    for_runs(&a, &a.programs, run_programs);
    for_runs(&a, &a.cases, run_cases);
    check_fixture_files(&a);
    for_runs(&a, &a.digests, run_digests);
    check_near_duplicates(&a);
    measure_ngram_overlap(&a);
    audit_release(&a);
    return 0;
}

void vat_audit_release(struct vat_audit_report *r)
{
    for (size_t i = 0; i < r->nf; i++) {
        free(r->f[i].table);
        free(r->f[i].split);
        free(r->f[i].task_id);
        free(r->f[i].detail);
    }
    free(r->f);
    for (size_t i = 0; i < r->n_templates; i++)
        free(r->per_template[i].name);
    free(r->per_template);
    free(r->max_overlap_a);
    free(r->max_overlap_b);
    memset(r, 0, sizeof *r);
}

const char *vat_audit_kind_name(enum vat_audit_kind k)
{
    return (unsigned)k < VAT_AUDIT_N_KINDS ? kind_names[k] : "unknown";
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

json_t *vat_audit_finding_json(const struct vat_audit_finding *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "finding", json_string(vat_audit_kind_name(f->kind)));
    json_object_set_new(o, "table", str_or_null(f->table));
    json_object_set_new(o, "split", str_or_null(f->split));
    json_object_set_new(o, "task_id", str_or_null(f->task_id));
    /* Details quote text from parsed JSON, clipped at UTF-8 boundaries;
     * the fallback only guards a bug from making the line disappear. */
    json_t *d = json_string(f->detail);
    json_object_set_new(o, "detail", d ? d : json_string("(detail is not valid UTF-8)"));
    return o;
}

static json_t *pair_json(long train, long test)
{
    json_t *o = json_object();
    json_object_set_new(o, "train", json_integer(train));
    json_object_set_new(o, "test", json_integer(test));
    return o;
}

json_t *vat_audit_summary_json(const struct vat_audit_report *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "summary", json_string("audit"));
    json_object_set_new(o, "clean", json_boolean(r->findings == 0));
    json_object_set_new(o, "findings", json_integer(r->findings));
    json_t *by = json_object(), *omitted = json_object();
    for (int k = 0; k < VAT_AUDIT_N_KINDS; k++) {
        json_object_set_new(by, kind_names[k], json_integer(r->count[k]));
        if ((size_t)r->count[k] > r->max_per_kind)
            json_object_set_new(omitted, kind_names[k],
                                json_integer(r->count[k] - (long)r->max_per_kind));
    }
    json_object_set_new(o, "by_kind", by);
    json_object_set_new(o, "omitted", omitted);
    json_object_set_new(o, "tasks", pair_json(r->tasks[0], r->tasks[1]));
    json_object_set_new(o, "fixtures", pair_json(r->fixtures[0], r->fixtures[1]));
    json_object_set_new(o, "ngram_n", json_integer(VAT_AUDIT_NGRAM));
    json_object_set_new(o, "ngram_test_prompts", json_integer(r->ngram_test_prompts));
    json_object_set_new(o, "ngram_overlap_tasks", json_integer(r->ngram_overlap_tasks));
    json_object_set_new(o, "ngram_overlap_share", json_real(r->ngram_overlap_share));
    json_t *per = json_object();
    for (size_t i = 0; i < r->n_templates; i++) {
        const struct vat_audit_template_overlap *p = &r->per_template[i];
        json_t *x = json_object();
        json_object_set_new(x, "test_prompts", json_integer(p->test_prompts));
        json_object_set_new(x, "overlap_tasks", json_integer(p->overlap_tasks));
        json_object_set_new(per, p->name, x); /* names came from parsed JSON */
    }
    json_object_set_new(o, "ngram_overlap_by_template", per);
    json_t *mo = json_object();
    json_object_set_new(mo, "share", json_real(r->max_overlap_share));
    json_object_set_new(mo, "shared_rows", json_integer(r->max_overlap_rows));
    json_object_set_new(mo, "fixture_a", str_or_null(r->max_overlap_a));
    json_object_set_new(mo, "fixture_b", str_or_null(r->max_overlap_b));
    json_object_set_new(o, "max_fixture_row_overlap", mo);
    json_object_set_new(o, "common_rows_skipped", json_integer(r->common_rows_skipped));
    return o;
}

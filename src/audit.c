/* audit.c — the leak audit of a built corpus (see audit.h).
 *
 * Everything is read as untrusted input: a bad line, a missing id, a row
 * out of order or an unsafe path becomes a finding and the audit goes on.
 *
 * Memory stays flat in the size of the corpus: every keyed record the
 * checks compare (a task id, a row id, a prompt digest, a program, a
 * string, a fixture listing, a digest, a data row, a prompt n-gram) goes
 * to an external sort (extsort.h), and each check reads its records back
 * in order as runs of equal keys, one run at a time, keeping no more than
 * a run's first record and the one before.  What grows with the corpus is
 * on disk, in unlinked temporary files.  No hash-table order reaches the
 * output; the cost is n log n in the rows, fixtures, data rows and
 * n-grams, plus one record per (train, test) fixture pair that actually
 * shares a data row.
 *
 * Every finding carries the place where a reading of the corpus meets it
 * (the table, side and line; or the check, the run and the record), and
 * per kind the first max_per_kind by place are kept and printed in that
 * order.  So a finding made late — an orphan row, known only when the
 * task ids are merged — is kept and printed as if found on its line.
 * Exports the vat_audit_* functions. */
#include "audit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extsort.h"
#include "fxrows.h"
#include "jsonout.h"
#include "prompt_stats.h"

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
    /* The result is never longer than s: written in place of a copy. */
    size_t n = strlen(s);
    char *out = vat_xmalloc(n + 1), *w = out;
    bool space = false;
    for (; *s; s++) {
        if (is_space((unsigned char)*s)) {
            space = true;
            continue;
        }
        if (space && w != out)
            *w++ = ' ';
        space = false;
        *w++ = lower_case ? lower(*s) : *s;
    }
    *w = 0;
    return out;
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


/* ---- places and kept findings -------------------------------------------- */

/* Where a finding is met: a reading of the tables (a: the file's place in
 * the reading << 40 | line, b: the step within the row), or a check (a:
 * its phase << 56 | the run, b: the record within the run), and c the
 * order it was made in. */
struct place {
    uint64_t a, b, c;
};

#define LINE_BITS 40
#define LINE_MAX_ ((UINT64_C(1) << LINE_BITS) - 1)
#define PHASE_SHIFT 56
/* Within a run of prompts, the duplicates within a side follow every
 * cross-split finding of the run. */
#define AFTER_CROSS (UINT64_C(1) << 62)
/* Within a row, the orphan check's place among the row's other checks. */
enum { STEP_ROW, STEP_ORPHAN, STEP_CONTENT };

enum phase {
    PH_READ,
    PH_IDS,
    PH_ROWIDS,
    PH_PROMPTS,
    PH_PROGRAMS,
    PH_CASES,
    PH_FIXTURES,
    PH_DIGESTS,
    PH_NEAR
};

static int place_cmp(const struct place *x, const struct place *y)
{
    if (x->a != y->a)
        return x->a < y->a ? -1 : 1;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    return (x->c > y->c) - (x->c < y->c);
}

struct kept {
    struct place at;
    struct vat_audit_finding f;
};

/* A kind's kept findings: a max-heap by place, at most max_per_kind. */
struct keptset {
    struct kept *v;
    size_t n, cap;
};

static void kept_down(struct keptset *ks, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < ks->n && place_cmp(&ks->v[l].at, &ks->v[m].at) > 0)
            m = l;
        if (l + 1 < ks->n && place_cmp(&ks->v[l + 1].at, &ks->v[m].at) > 0)
            m = l + 1;
        if (m == i)
            return;
        struct kept t = ks->v[i];
        ks->v[i] = ks->v[m];
        ks->v[m] = t;
        i = m;
    }
}

static void kept_up(struct keptset *ks, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (place_cmp(&ks->v[p].at, &ks->v[i].at) >= 0)
            return;
        struct kept t = ks->v[i];
        ks->v[i] = ks->v[p];
        ks->v[p] = t;
        i = p;
    }
}

static void finding_free(struct vat_audit_finding *f)
{
    free(f->table);
    free(f->split);
    free(f->task_id);
    free(f->detail);
}

/* ---- the audit state ---------------------------------------------------- */

enum sorter {
    S_IDS,      /* task ids: one record per row                       */
    S_ROWIDS,   /* each row's own id                                  */
    S_PROMPTS,  /* normalised prompt digests                          */
    S_PROGRAMS, /* normalised gold programs                           */
    S_CASES,    /* regex strings, marked held out or not              */
    S_FX,       /* fixture listings, by path                          */
    S_GRAMS,    /* prompt 13-grams                                    */
    S_DIGESTS,  /* fixture digests, by digest                         */
    S_ROWS,     /* data-row hashes of the fixtures read               */
    S_PAIRS,    /* (train, test) fixture pairs sharing a data row      */
    N_SORTERS
};

/* A keyed record decoded (pointers into its bytes). */
struct krec {
    const char *key, *task, *aux; /* aux: a fixture path, a row id, or NULL */
    int side, table, flag;        /* flag: held out; a fixture listing's digest is aux */
    uint64_t seq;                 /* ids: the row's place (a); others: the order added */
};

/* A record copied out of its sorter, so it outlives the next one. */
struct held {
    struct vat_buf b;
    struct krec k;
};

/* The distinct data rows of a template's docs are counted per template. */
struct tmpl {
    char *name;
    uint32_t docs, test_docs, overlap;
};

/* The fixtures whose data rows were read: one per (file, side), numbered
 * in the order met; their paths and tasks are looked up by number when a
 * pair is reported, so they live in two temporary files (the entries, and
 * each entry's offset by number). */
struct units {
    int dat, idx;
    uint64_t n, dat_end, idx_end;
    struct vat_buf dbuf, ibuf;
};

/* What the task-id check gathers over one run (one task id). */
struct ids_run {
    unsigned seen[VAT_N_SPLITS];
    int first_table[VAT_N_SPLITS]; /* the side's first record's table, -1 none */
};

/* A run of one string leaks only when the string is held out somewhere
 * in it, which may show after its test records: those are held (no more
 * than can still be kept; the rest are counted) until the run ends. */
struct cases_run {
    bool heldout;
    struct held *pend;
    size_t npend, cap;
    uint64_t *pend_pos;
    long over;
};

struct audit {
    const char *root;
    struct vat_audit_report *r;
    struct vat_err *e;
    int failed; /* a temporary file failed: e says why */
    struct vat_xsort s[N_SORTERS];
    struct keptset kept[VAT_AUDIT_N_KINDS];
    struct place at; /* where findings made now are met */
    uint64_t nmade, nadded;
    bool table_missing[VAT_N_TABLES][VAT_N_SPLITS]; /* already a missing_table finding */
    struct vat_buf rec;                             /* a record being built */
    struct tmpl *tm;
    size_t ntm, captm;
    uint32_t ndocs;
    uint64_t *overlapping; /* a bit per doc: shares a 13-gram with train */
    struct units units;
    struct ids_run ids;
    struct cases_run cases;
    const char *tmpdir;
    struct vat_prompt_stats *ps; /* the "prompts" figures, from experience rows */
    int experience_opened;
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

/* Counts a finding of kind k met at a->at; true when it is to be kept
 * (among the first max_per_kind by place so far). */
static bool count_finding(struct audit *a, enum vat_audit_kind k)
{
    struct vat_audit_report *r = a->r;
    r->count[k]++;
    r->findings++;
    const struct keptset *ks = &a->kept[k];
    if (!r->max_per_kind)
        return false;
    if (ks->n < r->max_per_kind)
        return true;
    struct place at = a->at;
    at.c = a->nmade;
    return place_cmp(&at, &ks->v[0].at) < 0;
}

static void keep_finding(struct audit *a, enum vat_audit_kind k, int table, int side,
                         const char *task, const char *detail)
{
    struct keptset *ks = &a->kept[k];
    struct kept kp = {
        .at = {a->at.a, a->at.b, a->nmade++},
        .f =
            {
                .kind = k,
                .table = table >= 0 ? vat_xstrdup(vat_table_names[table]) : NULL,
                .split = side >= 0 ? vat_xstrdup(vat_split_names[side]) : NULL,
                /* Ids and details quote untrusted text: bound what one line can hold. */
                .task_id = task ? clip(task, 256) : NULL,
                .detail = clip(detail, 1024),
            },
    };
    if (ks->n < a->r->max_per_kind) {
        if (ks->n == ks->cap) {
            ks->cap = ks->cap ? 2 * ks->cap : 16;
            ks->v = vat_xrealloc(ks->v, ks->cap * sizeof *ks->v);
        }
        ks->v[ks->n++] = kp;
        kept_up(ks, ks->n - 1);
    } else {
        finding_free(&ks->v[0].f);
        ks->v[0] = kp;
        kept_down(ks, 0);
    }
}

static void add_finding(struct audit *a, enum vat_audit_kind k, int table, int side,
                        const char *task, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void add_finding(struct audit *a, enum vat_audit_kind k, int table, int side,
                        const char *task, const char *fmt, ...)
{
    if (!count_finding(a, k)) {
        a->nmade++;
        return;
    }
    struct vat_buf b = VAT_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    vat_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    keep_finding(a, k, table, side, task, b.data ? b.data : "");
    vat_buf_release(&b);
}

/* Moves the kept findings into the report, in the order of their places. */
static int cmp_kept(const void *x, const void *y)
{
    return place_cmp(&((const struct kept *)x)->at, &((const struct kept *)y)->at);
}

static void report_findings(struct audit *a)
{
    struct vat_audit_report *r = a->r;
    size_t n = 0;
    for (int k = 0; k < VAT_AUDIT_N_KINDS; k++)
        n += a->kept[k].n;
    struct kept *all = vat_xcalloc(n ? n : 1, sizeof *all);
    size_t m = 0;
    for (int k = 0; k < VAT_AUDIT_N_KINDS; k++) {
        if (a->kept[k].n)
            memcpy(all + m, a->kept[k].v, a->kept[k].n * sizeof *all);
        m += a->kept[k].n;
        free(a->kept[k].v);
        memset(&a->kept[k], 0, sizeof a->kept[k]);
    }
    if (n > 1)
        qsort(all, n, sizeof *all, cmp_kept);
    r->f = vat_xcalloc(n ? n : 1, sizeof *r->f);
    r->nf = r->capf = n;
    for (size_t i = 0; i < n; i++)
        r->f[i] = all[i].f;
    free(all);
}

/* ---- records ------------------------------------------------------------- */

static void sort_add(struct audit *a, enum sorter s, const void *rec, size_t len)
{
    if (a->failed)
        return;
    if (vat_xsort_add(&a->s[s], rec, len, a->e) != 0)
        a->failed = 1;
}

static void put_str(struct vat_buf *b, const char *s)
{
    vat_buf_putn(b, s, strlen(s) + 1);
}

static void put_be(struct vat_buf *b, uint64_t v, int bytes)
{
    unsigned char x[8];
    vat_be_put(x, v, bytes);
    vat_buf_putn(b, (const char *)x, (size_t)bytes);
}

/* A keyed record: key, side, task, aux (or none), table, seq, flag, each
 * string ended by a NUL (no string holds one: they come from parsed JSON),
 * so records order as (key, side, task, aux with none first, table, seq). */
static void push_krec(struct audit *a, enum sorter s, const char *key, const char *task,
                      const char *aux, int side, int table, int flag, uint64_t seq)
{
    struct vat_buf *b = &a->rec;
    b->len = 0;
    put_str(b, key);
    vat_buf_putc(b, (char)side);
    put_str(b, task);
    vat_buf_putc(b, aux ? 1 : 0);
    if (aux)
        put_str(b, aux);
    vat_buf_putc(b, (char)table);
    put_be(b, seq, 8);
    vat_buf_putc(b, (char)flag);
    sort_add(a, s, b->data, b->len);
}

static void kv_push(struct audit *a, enum sorter s, const char *key, const char *task,
                    const char *aux, int side, int table, int flag)
{
    push_krec(a, s, key, task, aux, side, table, flag, a->nadded++);
}

static void decode_krec(const unsigned char *p, struct krec *k)
{
    const char *c = (const char *)p;
    k->key = c;
    c += strlen(c) + 1;
    k->side = (unsigned char)*c++;
    k->task = c;
    c += strlen(c) + 1;
    k->aux = NULL;
    if (*c++) {
        k->aux = c;
        c += strlen(c) + 1;
    }
    k->table = (unsigned char)*c++;
    k->seq = vat_be_get((const unsigned char *)c, 8);
    c += 8;
    k->flag = (unsigned char)*c;
}

static void hold(struct held *h, const unsigned char *rec, size_t len)
{
    h->b.len = 0;
    vat_buf_putn(&h->b, (const char *)rec, len);
    decode_krec((const unsigned char *)h->b.data, &h->k);
}

static void hold_copy(struct held *dst, const struct held *src)
{
    dst->b.len = 0;
    vat_buf_putn(&dst->b, src->b.data, src->b.len);
    decode_krec((const unsigned char *)dst->b.data, &dst->k);
}

/* ---- reading the tables ------------------------------------------------- */

static void push_fixture(struct audit *a, const char *path, const char *task, const char *sha,
                         int side, int table)
{
    /* by path, side, task, order: then the table and the digest a table records */
    struct vat_buf *b = &a->rec;
    b->len = 0;
    put_str(b, path);
    vat_buf_putc(b, (char)side);
    put_str(b, task);
    put_be(b, a->nadded++, 8);
    vat_buf_putc(b, (char)table);
    vat_buf_putc(b, sha ? 1 : 0);
    if (sha)
        put_str(b, sha);
    sort_add(a, S_FX, b->data, b->len);
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

static size_t tmpl_index(struct audit *a, const char *name)
{
    /* Few templates, met in runs: the last one first, then a scan. */
    if (a->ntm && strcmp(a->tm[a->ntm - 1].name, name) == 0)
        return a->ntm - 1;
    for (size_t i = 0; i < a->ntm; i++)
        if (strcmp(a->tm[i].name, name) == 0)
            return i;
    if (a->ntm == a->captm) {
        a->captm = a->captm ? 2 * a->captm : 32;
        a->tm = vat_xrealloc(a->tm, a->captm * sizeof *a->tm);
    }
    a->tm[a->ntm] = (struct tmpl){.name = vat_xstrdup(name)};
    return a->ntm++;
}

/* The distinct word 13-gram hashes of a normalised prompt. */
static uint64_t *prompt_grams(const char *norm, size_t *out_n)
{
    size_t ntok = 0, cap = 64;
    uint64_t *tok = vat_xmalloc(cap * sizeof *tok);
    for (const char *p = norm; *p;) {
        const char *sp = strchr(p, ' ');
        size_t len = sp ? (size_t)(sp - p) : strlen(p);
        uint64_t h = VAT_H64_INIT;
        vat_h64_feed(&h, p, len);
        if (ntok == cap) {
            cap *= 2;
            tok = vat_xrealloc(tok, cap * sizeof *tok);
        }
        tok[ntok++] = vat_mix64(h);
        p += len;
        if (*p)
            p++;
    }
    size_t n = ntok >= VAT_AUDIT_NGRAM ? ntok - VAT_AUDIT_NGRAM + 1 : 0;
    uint64_t *g = vat_xmalloc((n ? n : 1) * sizeof *g);
    for (size_t i = 0; i < n; i++) {
        uint64_t h = 0;
        for (size_t k = 0; k < VAT_AUDIT_NGRAM; k++)
            h = vat_mix64(h ^ tok[i + k]);
        g[i] = h;
    }
    free(tok);
    *out_n = vat_sort_unique_u64(g, n);
    return g;
}

/* One 13-gram of a doc: (gram, template, side, doc), so a gram's records
 * meet in one run, by template, train before test. */
#define GRAM_REC 17

static void add_prompt(struct audit *a, int table, int side, const char *task, const char *prompt,
                       const char *tmpl)
{
    char *norm = vat_audit_normalise_prompt(prompt);
    char hex[65];
    vat_sha256_hex(norm, strlen(norm), hex);
    kv_push(a, S_PROMPTS, hex, task, NULL, side, table, 0);
    if (tmpl) {
        size_t t = tmpl_index(a, tmpl);
        a->tm[t].docs++;
        if (side == VAT_SPLIT_TEST)
            a->tm[t].test_docs++;
        uint32_t doc = a->ndocs++;
        size_t n;
        uint64_t *g = prompt_grams(norm, &n);
        unsigned char rec[GRAM_REC];
        vat_be_put(rec + 8, t, 4);
        rec[12] = (unsigned char)side;
        vat_be_put(rec + 13, doc, 4);
        for (size_t i = 0; i < n; i++) {
            vat_be_put(rec, g[i], 8);
            sort_add(a, S_GRAMS, rec, sizeof rec);
        }
        free(g);
    }
    free(norm);
}

static void add_program(struct audit *a, int table, int side, const char *task, const char *kind,
                        const char *program)
{
    char *norm = vat_audit_normalise_program(program, kind);
    char *key = vat_xasprintf("%s:%s", kind, norm);
    kv_push(a, S_PROGRAMS, key, task, NULL, side, table, 0);
    free(key);
    free(norm);
}

static void experience_row(struct audit *a, int side, long line, const char *task,
                           const json_t *row)
{
    a->r->tasks[side]++;
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
            kv_push(a, S_CASES, text, task, NULL, side, VAT_T_VERIFIERS,
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
    /* Every row's task id, with the row's place: the merge of the ids
     * finds tasks on both sides, tables lacking a task, and (as a finding
     * of this row's place) a row whose task its side's experience lacks. */
    push_krec(a, S_IDS, task, task, NULL, side, table, 0, a->at.a);
    free(*prev);
    *prev = vat_xstrdup(task);

    const char *rid = per_task[table] ? task
                                      : json_string_value(json_object_get(row, row_id_key[table]));
    if (!rid || !*rid) {
        add_finding(a, VAT_AUDIT_MISSING_ID, table, side, task, "line %ld: the row has no %s",
                    line, row_id_key[table]);
    } else {
        char *key = vat_xasprintf("%d\x1f%s", table, rid);
        kv_push(a, S_ROWIDS, key, task, rid, side, table, 0);
        free(key);
    }
    a->at.b = STEP_CONTENT;

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

/* Reads one table file; nth is its place in the reading. */
static void read_table(struct audit *a, int table, int side, int nth)
{
    char rel[VAT_TABLE_REL_MAX];
    vat_table_rel(rel, table, side);
    char why[256];
    a->at = (struct place){(uint64_t)nth << LINE_BITS, STEP_ROW, 0};
    FILE *f = vat_fx_open(a->root, rel, NULL, why, sizeof why);
    if (!f) {
        a->table_missing[table][side] = true;
        add_finding(a, VAT_AUDIT_MISSING_TABLE, table, side, NULL, "cannot open '%s': %s", rel,
                    why);
        return;
    }
    if (table == VAT_T_EXPERIENCE)
        a->experience_opened++;
    char *line = NULL, *prev = NULL;
    size_t cap = 0;
    ssize_t got;
    long lineno = 0;
    while (!a->failed && (got = getline(&line, &cap, f)) >= 0) {
        lineno++;
        a->at = (struct place){(uint64_t)nth << LINE_BITS | ((uint64_t)lineno & LINE_MAX_),
                               STEP_ROW, 0};
        size_t n = (size_t)got;
        if (n && line[n - 1] == '\n')
            n--;
        json_error_t je;
        json_t *row = n ? json_loadb(line, n, JSON_REJECT_DUPLICATES, &je) : NULL;
        if (table == VAT_T_EXPERIENCE) {
            /* The prompt figures take every row they can read, repeated
             * keys and all; the findings say what is wrong with it. */
            json_t *loose = row || !n ? NULL : json_loadb(line, n, 0, NULL);
            vat_prompt_stats_add(a->ps, row ? row : loose);
            json_decref(loose);
        }
        if (!json_is_object(row)) {
            add_finding(a, VAT_AUDIT_UNPARSABLE, table, side, NULL, "line %ld: %s", lineno,
                        !n ? "empty line" : row ? "not a JSON object" : je.text);
            json_decref(row);
            continue;
        }
        check_row(a, table, side, lineno, row, &prev);
        json_decref(row);
    }
    a->at = (struct place){(uint64_t)nth << LINE_BITS | LINE_MAX_, STEP_ROW, 0};
    if (ferror(f))
        add_finding(a, VAT_AUDIT_MISSING_TABLE, table, side, NULL, "cannot read '%s': %s", rel,
                    strerror(errno));
    free(prev);
    free(line);
    fclose(f);
}

/* ---- runs of equal keys ------------------------------------------------- */

/* A check over the runs of one sorter: rec sees each record with the one
 * before it in the run (NULL for a run's first), end each run's last. */
struct run_scan {
    struct held cur, prev, first, side_first; /* first: the run's first record */
    size_t pos;                               /* the record's place in its run */
    uint64_t run;
};

typedef void (*run_rec_fn)(struct audit *a, struct run_scan *rs, const struct krec *x,
                           const struct krec *prev);
typedef void (*run_end_fn)(struct audit *a, struct run_scan *rs);

static void held_release(struct held *h)
{
    vat_buf_release(&h->b);
}

static void scan_runs(struct audit *a, enum sorter s, enum phase ph, run_rec_fn rec,
                      run_end_fn end)
{
    struct run_scan rs;
    memset(&rs, 0, sizeof rs);
    if (!a->failed && vat_xsort_finish(&a->s[s], a->e) != 0)
        a->failed = 1;
    const unsigned char *p;
    size_t len;
    bool any = false;
    int st = 0;
    while (!a->failed && (st = vat_xsort_next(&a->s[s], &p, &len, a->e)) == 1) {
        struct held t = rs.prev;
        rs.prev = rs.cur;
        rs.cur = t;
        hold(&rs.cur, p, len);
        bool same = any && strcmp(rs.cur.k.key, rs.prev.k.key) == 0;
        if (any && !same) {
            a->at = (struct place){(uint64_t)ph << PHASE_SHIFT | rs.run, rs.pos, 0};
            end(a, &rs);
            rs.run++;
            rs.pos = 0;
        }
        if (!same)
            hold_copy(&rs.first, &rs.cur);
        if (!same || rs.prev.k.side != rs.cur.k.side)
            hold_copy(&rs.side_first, &rs.cur);
        a->at = (struct place){(uint64_t)ph << PHASE_SHIFT | rs.run, rs.pos, 0};
        rec(a, &rs, &rs.cur.k, same ? &rs.prev.k : NULL);
        rs.pos++;
        any = true;
    }
    if (st < 0)
        a->failed = 1;
    if (any && !a->failed) {
        a->at = (struct place){(uint64_t)ph << PHASE_SHIFT | rs.run, rs.pos, 0};
        end(a, &rs);
    }
    held_release(&rs.cur);
    held_release(&rs.prev);
    held_release(&rs.first);
    held_release(&rs.side_first);
    vat_xsort_release(&a->s[s]);
}

static void no_end(struct audit *a, struct run_scan *rs)
{
    (void)a;
    (void)rs;
}


static void ids_rec(struct audit *a, struct run_scan *rs, const struct krec *x,
                    const struct krec *prev)
{
    (void)rs;
    if (!prev) {
        memset(&a->ids, 0, sizeof a->ids);
        a->ids.first_table[0] = a->ids.first_table[1] = -1;
    }
    int s = x->side;
    if (a->ids.first_table[s] < 0)
        a->ids.first_table[s] = x->table;
    a->ids.seen[s] |= 1u << x->table;
    /* Within a side the experience's records come first (table 0): a row
     * of another table met before any is a row of a task that side's
     * experience lacks, found at the row's own place. */
    if (x->table != VAT_T_EXPERIENCE && !(a->ids.seen[s] & (1u << VAT_T_EXPERIENCE))) {
        struct place keep = a->at;
        long line = (long)(x->seq & LINE_MAX_);
        a->at = (struct place){x->seq, STEP_ORPHAN, 0};
        add_finding(a, VAT_AUDIT_ORPHAN, x->table, s, x->task,
                    "line %ld: no experience row for '%s' in the %s split", line, x->task,
                    vat_split_names[s]);
        a->at = keep;
    }
}

static void ids_end(struct audit *a, struct run_scan *rs)
{
    const char *task = rs->first.k.key;
    /* Every table holds the same task ids per side: tables of two builds
     * side by side (an interrupted build, --only into a full root) show
     * as an experience task some table lacks, or as orphans. */
    for (int s = 0; s < VAT_N_SPLITS; s++) {
        if (!(a->ids.seen[s] & (1u << VAT_T_EXPERIENCE)))
            continue;
        struct vat_buf lacking = VAT_BUF_INIT;
        int first = -1;
        for (int t = 0; t < VAT_N_TABLES; t++) {
            if ((a->ids.seen[s] & (1u << t)) || a->table_missing[t][s])
                continue;
            vat_buf_printf(&lacking, "%s'%s'", lacking.len ? ", " : "", vat_table_names[t]);
            if (first < 0)
                first = t;
        }
        /* One finding per task and side, naming every table that lacks it. */
        if (first >= 0)
            add_finding(a, VAT_AUDIT_TASK_ROWS_MISSING, first, s, task,
                        "task '%s' of the %s experience has no row in %s", task,
                        vat_split_names[s], lacking.data);
        vat_buf_release(&lacking);
    }
    int tr = a->ids.first_table[VAT_SPLIT_TRAIN], te = a->ids.first_table[VAT_SPLIT_TEST];
    if (tr >= 0 && te >= 0)
        add_finding(a, VAT_AUDIT_TASK_ID, te, VAT_SPLIT_TEST, task,
                    "task '%s' is in the test split and in the train split (table '%s')", task,
                    vat_table_names[tr]);
}

static void rowids_rec(struct audit *a, struct run_scan *rs, const struct krec *x,
                       const struct krec *prev)
{
    (void)rs;
    if (!prev || prev->side != x->side)
        return;
    bool task_table = per_task[x->table];
    add_finding(a, task_table ? VAT_AUDIT_DUP_TASK_ID : VAT_AUDIT_DUP_ROW_ID, x->table, x->side,
                x->task, "%s '%s' appears more than once in the %s file", row_id_key[x->table],
                x->aux, vat_split_names[x->side]);
}

/* A record of a run on the test side that repeats a key of the run's
 * first record, on the train side: a leak across the split, once per
 * test task. */
static bool crosses(const struct run_scan *rs, const struct krec *x, const struct krec *prev)
{
    if (x->side != VAT_SPLIT_TEST || rs->first.k.side != VAT_SPLIT_TRAIN)
        return false;
    return !(prev && prev->side == VAT_SPLIT_TEST && strcmp(prev->task, x->task) == 0);
}

static void cross_finding(struct audit *a, const struct run_scan *rs, const struct krec *x,
                          enum vat_audit_kind kind, const char *what)
{
    const struct krec *tr = &rs->first.k;
    add_finding(a, kind, x->table, VAT_SPLIT_TEST, x->task,
                "%s of test task '%s' is also in train task '%s' (table '%s')", what, x->task,
                tr->task, vat_table_names[tr->table]);
}

static void prompts_rec(struct audit *a, struct run_scan *rs, const struct krec *x,
                        const struct krec *prev)
{
    if (crosses(rs, x, prev))
        cross_finding(a, rs, x, VAT_AUDIT_PROMPT, "the normalised prompt");
    /* Within a side, one task repeating its prompt across tables is fine;
     * a second task with the same prompt is a duplicate. */
    if (prev && prev->side == x->side && strcmp(x->task, prev->task) != 0) {
        a->at.b |= AFTER_CROSS;
        add_finding(a, VAT_AUDIT_DUP_PROMPT, x->table, x->side, x->task,
                    "task '%s' has the same normalised prompt as '%s'", x->task,
                    rs->side_first.k.task);
    }
}

static void programs_rec(struct audit *a, struct run_scan *rs, const struct krec *x,
                         const struct krec *prev)
{
    if (crosses(rs, x, prev))
        cross_finding(a, rs, x, VAT_AUDIT_GOLD_PROGRAM, "the normalised gold program");
}


static void cases_rec(struct audit *a, struct run_scan *rs, const struct krec *x,
                      const struct krec *prev)
{
    struct cases_run *c = &a->cases;
    if (!prev) {
        c->heldout = false;
        c->npend = 0;
        c->over = 0;
    }
    c->heldout |= x->flag != 0;
    if (!crosses(rs, x, prev))
        return;
    size_t room = a->r->max_per_kind > (size_t)a->r->count[VAT_AUDIT_HELDOUT_STRING]
                      ? a->r->max_per_kind - (size_t)a->r->count[VAT_AUDIT_HELDOUT_STRING]
                      : 0;
    if (c->npend >= room) {
        c->over++;
        return;
    }
    if (c->npend == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 8;
        c->pend = vat_xrealloc(c->pend, cap * sizeof *c->pend);
        c->pend_pos = vat_xrealloc(c->pend_pos, cap * sizeof *c->pend_pos);
        memset(c->pend + c->cap, 0, (cap - c->cap) * sizeof *c->pend);
        c->cap = cap;
    }
    hold_copy(&c->pend[c->npend], &rs->cur);
    c->pend_pos[c->npend++] = rs->pos;
}

static void cases_end(struct audit *a, struct run_scan *rs)
{
    struct cases_run *c = &a->cases;
    if (!c->heldout)
        return;
    char *text = clip(rs->first.k.key, 80);
    char *what = vat_xasprintf("the held-out string \"%s\"", text);
    for (size_t i = 0; i < c->npend; i++) {
        a->at.b = c->pend_pos[i];
        cross_finding(a, rs, &c->pend[i].k, VAT_AUDIT_HELDOUT_STRING, what);
    }
    a->r->count[VAT_AUDIT_HELDOUT_STRING] += c->over;
    a->r->findings += c->over;
    free(what);
    free(text);
}

static void digests_rec(struct audit *a, struct run_scan *rs, const struct krec *x,
                        const struct krec *prev)
{
    bool same_side = prev && prev->side == x->side;
    if (same_side && strcmp(prev->aux, x->aux) == 0)
        return; /* the same file listed again */
    const struct krec *tr = rs->first.k.side == VAT_SPLIT_TRAIN ? &rs->first.k : NULL;
    if (x->side == VAT_SPLIT_TEST && tr)
        add_finding(a, VAT_AUDIT_FIXTURE_DIGEST, x->table, VAT_SPLIT_TEST, x->task,
                    "'%s' of test task '%s' has the sha256 of '%s' of train task '%s'", x->aux,
                    x->task, tr->aux, tr->task);
    if (same_side)
        add_finding(a, VAT_AUDIT_DUP_FIXTURE_DIGEST, x->table, x->side, x->task,
                    "'%s' has the same sha256 as '%s' in the %s split", x->aux,
                    rs->side_first.k.aux, vat_split_names[x->side]);
}

/* ---- fixture files ------------------------------------------------------ */


/* Writes what buf holds at *end of fd and empties it.  0 or -1. */
static int spill_flush(struct audit *a, int fd, struct vat_buf *buf, uint64_t *end)
{
    if (buf->len && !a->failed) {
        if (vat_pwrite_all(fd, *end, buf->data, buf->len) != 0) {
            vat_err_set(a->e, "vat: cannot write a temporary file: %s", strerror(errno));
            a->failed = 1;
        }
        *end += buf->len;
    }
    buf->len = 0;
    return a->failed ? -1 : 0;
}

/* Records a unit (a fixture read, on one side); returns its number. */
static uint32_t unit_add(struct audit *a, int side, size_t nrows, const char *path,
                         const char *task)
{
    struct units *u = &a->units;
    if (u->dat < 0 && !a->failed) {
        if ((u->dat = vat_temp_fd(a->tmpdir, a->e)) < 0 ||
            (u->idx = vat_temp_fd(a->tmpdir, a->e)) < 0)
            a->failed = 1;
    }
    unsigned char off[8];
    vat_be_put(off, u->dat_end + u->dbuf.len, 8);
    vat_buf_putn(&u->ibuf, (const char *)off, 8);
    vat_buf_putc(&u->dbuf, (char)side);
    put_be(&u->dbuf, nrows, 8);
    put_str(&u->dbuf, path);
    put_str(&u->dbuf, task);
    if (u->dbuf.len > ((size_t)64 << 10) && !a->failed)
        spill_flush(a, u->dat, &u->dbuf, &u->dat_end);
    if (u->ibuf.len > ((size_t)64 << 10) && !a->failed)
        spill_flush(a, u->idx, &u->ibuf, &u->idx_end);
    return (uint32_t)u->n++;
}

/* A unit looked up: its side, rows, path and task (into out). */
struct unit {
    int side;
    size_t nrows;
    const char *path, *task;
    struct vat_buf b;
};

static int unit_get(struct audit *a, uint32_t n, struct unit *out)
{
    struct units *u = &a->units;
    if (a->failed || spill_flush(a, u->dat, &u->dbuf, &u->dat_end) != 0 ||
        spill_flush(a, u->idx, &u->ibuf, &u->idx_end) != 0)
        return -1;
    unsigned char ob[16];
    size_t k = (uint64_t)n + 1 < u->n ? 16 : 8;
    if (vat_pread_all(u->idx, (uint64_t)n * 8, ob, k) != 0)
        goto fail;
    uint64_t from = vat_be_get(ob, 8), to = k == 16 ? vat_be_get(ob + 8, 8) : u->dat_end;
    out->b.data = vat_xrealloc(out->b.data, (size_t)(to - from) + 1);
    out->b.cap = (size_t)(to - from) + 1;
    if (vat_pread_all(u->dat, from, out->b.data, (size_t)(to - from)) != 0)
        goto fail;
    out->b.data[to - from] = 0;
    const unsigned char *p = (const unsigned char *)out->b.data;
    out->side = p[0];
    out->nrows = (size_t)vat_be_get(p + 1, 8);
    out->path = (const char *)p + 9;
    out->task = out->path + strlen(out->path) + 1;
    return 0;
fail:
    vat_err_set(a->e, "vat: cannot read a temporary file: %s", strerror(errno));
    a->failed = 1;
    return -1;
}

/* A data row of a unit: (hash, unit, side, the unit's distinct rows), so
 * the units holding a row meet in one run, in the order they were met. */
#define ROW_REC 17

/* What the fixture check holds for the path of the run being read. */
struct fx_run {
    struct vat_fx_rows ff;
    char why[512];
    /* Tasks of the current side met while the file could not be read and
     * whose own row records no digest: they take the next digest a row of
     * the same side records. */
    struct held *pend;
    size_t npend, cap;
};

static void fx_pend_flush(struct audit *a, struct fx_run *f, const char *sha)
{
    for (size_t i = 0; i < f->npend && sha; i++) {
        const struct krec *p = &f->pend[i].k;
        kv_push(a, S_DIGESTS, sha, p->task, p->key, p->side, p->table, 0);
    }
    f->npend = 0;
}

/* A fixture listing decoded: the record of push_fixture. */
struct fxrec {
    const char *path, *task, *sha;
    int side, table;
};

static void decode_fx(const unsigned char *p, struct fxrec *x)
{
    const char *c = (const char *)p;
    x->path = c;
    c += strlen(c) + 1;
    x->side = (unsigned char)*c++;
    x->task = c;
    c += strlen(c) + 1;
    c += 8;
    x->table = (unsigned char)*c++;
    x->sha = *c++ ? c : NULL;
}

/* Reads each listed fixture once (the listings come by path); records
 * digests and the units whose data rows the near-duplicate check counts. */
static void check_fixture_files(struct audit *a)
{
    struct fx_run f;
    memset(&f, 0, sizeof f);
    struct vat_buf cur = VAT_BUF_INIT, prev = VAT_BUF_INIT;
    struct fxrec x, px;
    bool any = false;
    uint64_t run = 0, pos = 0;
    if (!a->failed && vat_xsort_finish(&a->s[S_FX], a->e) != 0)
        a->failed = 1;
    const unsigned char *p;
    size_t len;
    int st = 0;
    while (!a->failed && (st = vat_xsort_next(&a->s[S_FX], &p, &len, a->e)) == 1) {
        struct vat_buf t = prev;
        prev = cur;
        cur = t;
        px = x;
        cur.len = 0;
        vat_buf_putn(&cur, (const char *)p, len);
        decode_fx((const unsigned char *)cur.data, &x);
        bool new_path = !any || strcmp(x.path, px.path) != 0;
        bool new_side = new_path || px.side != x.side;
        bool new_task = new_side || strcmp(px.task, x.task) != 0;
        if (any && new_path) {
            run++;
            pos = 0;
        }
        any = true;
        a->at = (struct place){(uint64_t)PH_FIXTURES << PHASE_SHIFT | run, pos++, 0};
        if (new_path) {
            vat_fx_rows_release(&f.ff);
            f.why[0] = 0;
            vat_fx_rows_read(&f.ff, a->root, x.path, f.why, sizeof f.why);
            if (f.ff.state == -2)
                add_finding(a, VAT_AUDIT_FIXTURE_UNREADABLE, x.table, x.side, x.task,
                            "'%s': its rows cannot be read: %s", x.path, f.why);
        }
        if (new_side) {
            f.npend = 0;
            a->r->fixtures[x.side]++;
            if (f.ff.state == -1)
                add_finding(a, VAT_AUDIT_FIXTURE_MISSING, x.table, x.side, x.task, "'%s': %s",
                            x.path, f.why);
            if (f.ff.state == 0) {
                uint32_t u = unit_add(a, x.side, f.ff.nrows, x.path, x.task);
                unsigned char rec[ROW_REC];
                vat_be_put(rec + 8, u, 4);
                rec[12] = (unsigned char)x.side;
                vat_be_put(rec + 13, f.ff.nrows, 4);
                for (size_t i = 0; i < f.ff.nrows; i++) {
                    vat_be_put(rec, f.ff.rows[i], 8);
                    sort_add(a, S_ROWS, rec, sizeof rec);
                }
            }
        }
        if (f.ff.state != -1 && x.sha && strcmp(x.sha, f.ff.sha) != 0) {
            char *recorded = clip(x.sha, 80);
            add_finding(a, VAT_AUDIT_FIXTURE_SHA256, x.table, x.side, x.task,
                        "'%s': the table records sha256 '%s', the file has %s", x.path, recorded,
                        f.ff.sha);
            free(recorded);
        }
        /* The file's own digest when it could be read, else the first
         * one a table records for it from this listing on (same side). */
        if (f.ff.state != -1) {
            if (new_task)
                kv_push(a, S_DIGESTS, f.ff.sha, x.task, x.path, x.side, x.table, 0);
            continue;
        }
        if (new_task) {
            if (f.npend == f.cap) {
                size_t cap = f.cap ? 2 * f.cap : 8;
                f.pend = vat_xrealloc(f.pend, cap * sizeof *f.pend);
                memset(f.pend + f.cap, 0, (cap - f.cap) * sizeof *f.pend);
                f.cap = cap;
            }
            struct held *h = &f.pend[f.npend++];
            /* kept as a keyed record: key the path, the task, side, table */
            h->b.len = 0;
            put_str(&h->b, x.path);
            vat_buf_putc(&h->b, (char)x.side);
            put_str(&h->b, x.task);
            vat_buf_putc(&h->b, 0);
            vat_buf_putc(&h->b, (char)x.table);
            put_be(&h->b, 0, 8);
            vat_buf_putc(&h->b, 0);
            decode_krec((const unsigned char *)h->b.data, &h->k);
        }
        if (x.sha)
            fx_pend_flush(a, &f, x.sha);
    }
    if (st < 0)
        a->failed = 1;
    vat_fx_rows_release(&f.ff);
    for (size_t i = 0; i < f.cap; i++)
        held_release(&f.pend[i]);
    free(f.pend);
    vat_buf_release(&cur);
    vat_buf_release(&prev);
    vat_xsort_release(&a->s[S_FX]);
}

/* ---- near-duplicate fixtures --------------------------------------------- */

struct row_holder {
    uint32_t unit, nrows;
    int side;
};

/* Counts data rows shared by each (train, test) pair of units through
 * the rows sorted by hash, so only pairs that share a row cost anything:
 * a pair per shared row is sorted again, and each run of one pair is the
 * number of rows it shares. */
static void push_pairs(struct audit *a, const struct row_holder *h, size_t n,
                       const size_t nside[VAT_N_SPLITS])
{
    size_t nrun = nside[VAT_SPLIT_TRAIN] + nside[VAT_SPLIT_TEST];
    if (!nside[VAT_SPLIT_TRAIN] || !nside[VAT_SPLIT_TEST])
        return;
    if (nrun > VAT_AUDIT_COMMON_ROW) {
        a->r->common_rows_skipped++;
        return;
    }
    unsigned char rec[16];
    for (size_t x = 0; x < n; x++) {
        if (h[x].side != VAT_SPLIT_TRAIN)
            continue;
        for (size_t y = 0; y < n; y++) {
            if (h[y].side != VAT_SPLIT_TEST)
                continue;
            vat_be_put(rec, h[x].unit, 4);
            vat_be_put(rec + 4, h[y].unit, 4);
            vat_be_put(rec + 8, h[x].nrows, 4);
            vat_be_put(rec + 12, h[y].nrows, 4);
            sort_add(a, S_PAIRS, rec, sizeof rec);
        }
    }
}

static void pair_done(struct audit *a, const unsigned char *rec, long shared, uint64_t run)
{
    struct vat_audit_report *r = a->r;
    uint32_t tr = (uint32_t)vat_be_get(rec, 4), te = (uint32_t)vat_be_get(rec + 4, 4);
    size_t ntr = (size_t)vat_be_get(rec + 8, 4), nte = (size_t)vat_be_get(rec + 12, 4);
    double s_tr = (double)shared / (double)ntr;
    double s_te = (double)shared / (double)nte;
    /* "a" is the fixture more of whose rows are shared; the test one on a tie. */
    bool a_is_test = s_te >= s_tr;
    double share = a_is_test ? s_te : s_tr;
    size_t na = a_is_test ? nte : ntr;
    bool finding = 2 * (size_t)shared > na;
    if (share <= r->max_overlap_share && !finding)
        return;
    struct unit ua = {0}, ub = {0};
    if (unit_get(a, a_is_test ? te : tr, &ua) != 0 || unit_get(a, a_is_test ? tr : te, &ub) != 0)
        goto out;
    if (share > r->max_overlap_share) {
        r->max_overlap_share = share;
        r->max_overlap_rows = shared;
        free(r->max_overlap_a);
        free(r->max_overlap_b);
        r->max_overlap_a = vat_xstrdup(ua.path);
        r->max_overlap_b = vat_xstrdup(ub.path);
    }
    if (finding) {
        a->at = (struct place){(uint64_t)PH_NEAR << PHASE_SHIFT | run, 0, 0};
        add_finding(a, VAT_AUDIT_NEAR_DUPLICATE, VAT_T_FIXTURE_GENERATORS, ua.side, ua.task,
                    "'%s' (%s) shares %ld of its %zu distinct data rows with '%s' (%s, task "
                    "'%s')",
                    ua.path, vat_split_names[ua.side], shared, ua.nrows, ub.path,
                    vat_split_names[ub.side], ub.task);
    }
out:
    vat_buf_release(&ua.b);
    vat_buf_release(&ub.b);
}

static void check_near_duplicates(struct audit *a)
{
    if (!a->failed && vat_xsort_finish(&a->s[S_ROWS], a->e) != 0)
        a->failed = 1;
    /* At most VAT_AUDIT_COMMON_ROW + 1 holders of a row are kept: past
     * that the row is only counted as too common. */
    struct row_holder *h = vat_xcalloc(VAT_AUDIT_COMMON_ROW + 1, sizeof *h);
    size_t nh = 0, nside[VAT_N_SPLITS] = {0, 0}; /* holders of the row, per side */
    uint64_t hash = 0;
    const unsigned char *p;
    size_t len;
    int st = 0;
    while (!a->failed && (st = vat_xsort_next(&a->s[S_ROWS], &p, &len, a->e)) == 1) {
        uint64_t x = vat_be_get(p, 8);
        if (nh && x != hash) {
            push_pairs(a, h, nh, nside);
            nh = nside[0] = nside[1] = 0;
        }
        hash = x;
        nside[p[12] == VAT_SPLIT_TEST]++;
        if (nh <= VAT_AUDIT_COMMON_ROW)
            h[nh++] = (struct row_holder){(uint32_t)vat_be_get(p + 8, 4),
                                          (uint32_t)vat_be_get(p + 13, 4), p[12]};
    }
    if (st < 0)
        a->failed = 1;
    if (nh && !a->failed)
        push_pairs(a, h, nh, nside);
    free(h);
    vat_xsort_release(&a->s[S_ROWS]);

    if (!a->failed && vat_xsort_finish(&a->s[S_PAIRS], a->e) != 0)
        a->failed = 1;
    unsigned char last[16];
    long shared = 0;
    uint64_t run = 0;
    while (!a->failed && (st = vat_xsort_next(&a->s[S_PAIRS], &p, &len, a->e)) == 1) {
        if (shared && memcmp(p, last, 8) != 0) {
            pair_done(a, last, shared, run++);
            shared = 0;
        }
        memcpy(last, p, 16);
        shared++;
    }
    if (st < 0)
        a->failed = 1;
    if (shared && !a->failed)
        pair_done(a, last, shared, run);
    vat_xsort_release(&a->s[S_PAIRS]);
}

/* ---- prompt n-gram overlap ---------------------------------------------- */

static int cmp_tmpl_name(const void *x, const void *y)
{
    return strcmp(((const struct tmpl *)x)->name, ((const struct tmpl *)y)->name);
}

/* A test doc of the current gram's run, held until the run shows whether
 * some train doc of any template shares the gram. */
struct gram_doc {
    uint32_t doc, tmpl;
};

/* Each template's fixed wording — 13-grams in more than half of its
 * prompts, train and test together — is left out of that template's
 * prompts; a test prompt overlaps when one of its other 13-grams is in
 * some train prompt (of any template) outside that one's fixed wording.
 * The grams come sorted by (gram, template, side, doc): a gram's run
 * holds, per template, its count of docs, so whether it is fixed there
 * is known at the end of the template's part of the run. */
static void measure_ngram_overlap(struct audit *a)
{
    struct vat_audit_report *r = a->r;
    a->overlapping = vat_xcalloc((a->ndocs + 63) / 64 + 1, sizeof *a->overlapping);
    if (!a->failed && vat_xsort_finish(&a->s[S_GRAMS], a->e) != 0)
        a->failed = 1;
    struct gram_doc *cand = NULL, *part = NULL;
    size_t ncand = 0, capcand = 0, npart = 0, cappart = 0;
    uint64_t gram = 0;
    uint32_t tmpl = 0, count = 0;
    bool any = false, part_train = false, run_train = false;
    const unsigned char *p;
    size_t len;
    int st = 0;
    for (;;) {
        st = a->failed ? -1 : vat_xsort_next(&a->s[S_GRAMS], &p, &len, a->e);
        uint64_t g = st == 1 ? vat_be_get(p, 8) : 0;
        uint32_t t = st == 1 ? (uint32_t)vat_be_get(p + 8, 4) : 0;
        bool end_run = any && (st != 1 || g != gram);
        bool end_part = any && (end_run || t != tmpl);
        if (end_part) {
            /* the template's part of the run: kept unless fixed there */
            if (!(2 * (uint64_t)count > a->tm[tmpl].docs)) {
                run_train |= part_train;
                for (size_t i = 0; i < npart; i++) {
                    if (ncand == capcand) {
                        capcand = capcand ? 2 * capcand : 64;
                        cand = vat_xrealloc(cand, capcand * sizeof *cand);
                    }
                    cand[ncand++] = part[i];
                }
            }
            npart = 0;
            count = 0;
            part_train = false;
        }
        if (end_run) {
            for (size_t i = 0; run_train && i < ncand; i++) {
                uint32_t d = cand[i].doc;
                if (a->overlapping[d / 64] & (UINT64_C(1) << (d % 64)))
                    continue;
                a->overlapping[d / 64] |= UINT64_C(1) << (d % 64);
                a->tm[cand[i].tmpl].overlap++;
            }
            ncand = 0;
            run_train = false;
        }
        if (st != 1)
            break;
        any = true;
        gram = g;
        tmpl = t;
        count++;
        if (p[12] == VAT_SPLIT_TRAIN) {
            part_train = true;
        } else {
            if (npart == cappart) {
                cappart = cappart ? 2 * cappart : 64;
                part = vat_xrealloc(part, cappart * sizeof *part);
            }
            part[npart++] = (struct gram_doc){(uint32_t)vat_be_get(p + 13, 4), t};
        }
    }
    if (st < 0)
        a->failed = 1;
    free(cand);
    free(part);
    vat_xsort_release(&a->s[S_GRAMS]);

    /* The figures, per template by name. */
    struct tmpl *tm = vat_xcalloc(a->ntm ? a->ntm : 1, sizeof *tm);
    if (a->ntm)
        memcpy(tm, a->tm, a->ntm * sizeof *tm);
    if (a->ntm > 1)
        qsort(tm, a->ntm, sizeof *tm, cmp_tmpl_name);
    r->per_template = vat_xcalloc(a->ntm ? a->ntm : 1, sizeof *r->per_template);
    r->n_templates = a->ntm;
    for (size_t i = 0; i < a->ntm; i++) {
        r->per_template[i].name = vat_xstrdup(tm[i].name);
        r->per_template[i].test_prompts = tm[i].test_docs;
        r->per_template[i].overlap_tasks = tm[i].overlap;
        r->ngram_test_prompts += tm[i].test_docs;
        r->ngram_overlap_tasks += tm[i].overlap;
    }
    free(tm);
    r->ngram_overlap_share = r->ngram_test_prompts
                                 ? (double)r->ngram_overlap_tasks / (double)r->ngram_test_prompts
                                 : 0.0;
}

/* ---- the audit ---------------------------------------------------------- */

void vat_audit_report_add(struct vat_audit_report *r, enum vat_audit_kind k, int table,
                          int side, const char *task, const char *detail)
{
    r->count[k]++;
    r->findings++;
    if ((size_t)r->count[k] > r->max_per_kind)
        return;
    if (r->nf == r->capf) {
        r->capf = r->capf ? 2 * r->capf : 64;
        r->f = vat_xrealloc(r->f, r->capf * sizeof *r->f);
    }
    r->f[r->nf++] = (struct vat_audit_finding){
        .kind = k,
        .table = table >= 0 ? vat_xstrdup(vat_table_names[table]) : NULL,
        .split = side >= 0 ? vat_xstrdup(vat_split_names[side]) : NULL,
        .task_id = task ? clip(task, 256) : NULL,
        .detail = clip(detail, 1024),
    };
}

void vat_audit_init(struct vat_audit_report *r, size_t max_per_kind)
{
    memset(r, 0, sizeof *r);
    r->max_per_kind = max_per_kind;
}

static void audit_release(struct audit *a)
{
    for (int s = 0; s < N_SORTERS; s++)
        vat_xsort_release(&a->s[s]);
    for (int k = 0; k < VAT_AUDIT_N_KINDS; k++) {
        for (size_t i = 0; i < a->kept[k].n; i++)
            finding_free(&a->kept[k].v[i].f);
        free(a->kept[k].v);
    }
    for (size_t i = 0; i < a->ntm; i++)
        free(a->tm[i].name);
    free(a->tm);
    free(a->overlapping);
    vat_buf_release(&a->rec);
    if (a->units.dat >= 0)
        close(a->units.dat);
    if (a->units.idx >= 0)
        close(a->units.idx);
    vat_buf_release(&a->units.dbuf);
    vat_buf_release(&a->units.ibuf);
    for (size_t i = 0; i < a->cases.cap; i++)
        held_release(&a->cases.pend[i]);
    free(a->cases.pend);
    free(a->cases.pend_pos);
}

/* The share of the memory budget each sorter gets, in sixteenths (the
 * n-grams are by far the most records). */
static const unsigned budget_share[N_SORTERS] = {1, 1, 1, 1, 1, 1, 6, 1, 2, 1};

int vat_audit_run_with(const char *root, const struct vat_audit_opts *o,
                       struct vat_audit_report *r, struct vat_err *e)
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
    a.e = e;
    a.tmpdir = o ? o->tmpdir : NULL;
    a.units.dat = a.units.idx = -1;
    size_t budget = o && o->memory_budget ? o->memory_budget : VAT_AUDIT_MEMORY_BUDGET;
    for (int s = 0; s < N_SORTERS; s++)
        vat_xsort_init(&a.s[s], a.tmpdir, budget / 16 * budget_share[s]);
    a.ps = vat_prompt_stats_begin(a.tmpdir, budget / 16);

    /* Experience first: the reading's places follow the order before
     * streaming (experience train, test, then each table's train, test). */
    int nth = 0;
    for (int s = 0; s < VAT_N_SPLITS; s++)
        read_table(&a, VAT_T_EXPERIENCE, s, nth++);
    for (int t = 0; t < VAT_N_TABLES; t++)
        if (t != VAT_T_EXPERIENCE)
            for (int s = 0; s < VAT_N_SPLITS; s++)
                read_table(&a, t, s, nth++);

    scan_runs(&a, S_IDS, PH_IDS, ids_rec, ids_end);
    scan_runs(&a, S_ROWIDS, PH_ROWIDS, rowids_rec, no_end);
    scan_runs(&a, S_PROMPTS, PH_PROMPTS, prompts_rec, no_end);
    scan_runs(&a, S_PROGRAMS, PH_PROGRAMS, programs_rec, no_end);
    scan_runs(&a, S_CASES, PH_CASES, cases_rec, cases_end);
    check_fixture_files(&a);
    scan_runs(&a, S_DIGESTS, PH_DIGESTS, digests_rec, no_end);
    check_near_duplicates(&a);
    measure_ngram_overlap(&a);
    struct vat_err pe = {{0}};
    json_t *prompts = vat_prompt_stats_end(a.ps, &pe);
    if (!prompts && !a.failed) {
        *e = pe;
        a.failed = 1;
    }
    if (a.experience_opened)
        r->prompts = prompts;
    else
        json_decref(prompts);
    int rc = a.failed ? -1 : 0;
    if (!a.failed)
        report_findings(&a);
    audit_release(&a);
    return rc;
}

int vat_audit_run(const char *root, struct vat_audit_report *r, struct vat_err *e)
{
    return vat_audit_run_with(root, NULL, r, e);
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
    json_decref(r->prompts);
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
    if (r->prompts)
        json_object_set(o, "prompts", r->prompts);
    return o;
}

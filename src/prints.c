/* prints.c — the audit's fingerprints: made per task, sorted, checked
 * for leaks across the split, written and merged per shard (see
 * prints.h). */
#include "prints.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fxrows.h"
#include "jsonout.h"
#include "tables.h"
#include "template.h"

const char *const vat_print_kind_names[VAT_N_PRINT_KINDS] = {"prompts", "programs", "strings",
                                                             "digests", "rows"};

static const size_t rec_bytes[VAT_N_PRINT_KINDS] = {
    VAT_PRINT_KEY_BYTES, VAT_PRINT_KEY_BYTES, VAT_PRINT_KEY_BYTES, VAT_PRINT_KEY_BYTES,
    VAT_PRINT_ROW_BYTES};

/* Offsets of a record's fields. */
enum { K_SIDE = 16, K_TMPL = 17, K_INDEX = 19, K_AUX = 23 };
enum { R_SIDE = 8, R_TMPL = 9, R_INDEX = 11, R_FIX = 15, R_ROWS = 16 };

/* ---- one task's records ------------------------------------------------------ */

static void put_key(struct vat_buf *b, const unsigned char fp[16], int side, unsigned tmpl,
                    uint32_t index, int aux)
{
    unsigned char r[VAT_PRINT_KEY_BYTES];
    memcpy(r, fp, 16);
    r[K_SIDE] = (unsigned char)side;
    vat_be_put(r + K_TMPL, tmpl, 2);
    vat_be_put(r + K_INDEX, index, 4);
    r[K_AUX] = (unsigned char)aux;
    vat_buf_putn(b, (const char *)r, sizeof r);
}

static void fp_of(const char *s, unsigned char fp[16])
{
    unsigned char d[32];
    vat_sha256(s, strlen(s), d);
    memcpy(fp, d, 16);
}

static void put_program(struct vat_buf *b, const char *kind, const char *program, int side,
                        unsigned tmpl, uint32_t index, int table)
{
    char *norm = vat_audit_normalise_program(program, kind);
    char *key = vat_xasprintf("%s:%s", kind, norm);
    unsigned char fp[16];
    fp_of(key, fp);
    put_key(b, fp, side, tmpl, index, table);
    free(key);
    free(norm);
}

static int hex_nibble(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int vat_task_prints_make(struct vat_task_prints *tp, const struct vat_task *t, int side,
                         unsigned tmpl, struct vat_err *e)
{
    memset(tp, 0, sizeof *tp);
    uint32_t ix = t->index;
    unsigned char fp[16];

    /* the prompt, as experience, sft_examples and preference_pairs hold it */
    char *norm = vat_audit_normalise_prompt(t->prompt);
    fp_of(norm, fp);
    free(norm);
    static const int prompt_tables[] = {VAT_T_EXPERIENCE, VAT_T_SFT_EXAMPLES,
                                        VAT_T_PREFERENCE_PAIRS};
    for (size_t i = 0; i < sizeof prompt_tables / sizeof prompt_tables[0]; i++)
        put_key(&tp->rec[VAT_PRINT_PROMPTS], fp, side, tmpl, ix, prompt_tables[i]);

    /* gold programs: the answer of a regex or SQL task, the reference query */
    const char *kind = vat_task_answer_kind(t);
    if (strcmp(kind, "regex") == 0 || strcmp(kind, "sql") == 0) {
        char *gold = vat_answer_text(t, t->gold);
        put_program(&tp->rec[VAT_PRINT_PROGRAMS], kind, gold, side, tmpl, ix, VAT_T_EXPERIENCE);
        free(gold);
    }
    const char *ref = json_string_value(json_object_get(t->spec, "reference_sql"));
    if (ref)
        put_program(&tp->rec[VAT_PRINT_PROGRAMS], "sql", ref, side, tmpl, ix, VAT_T_VERIFIERS);

    /* the strings of a regex task, held out or shown */
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(t->spec, "cases"), i, c) {
        const char *text = json_string_value(json_object_get(c, "text"));
        if (!text)
            continue;
        fp_of(text, fp);
        put_key(&tp->rec[VAT_PRINT_STRINGS], fp, side, tmpl, ix,
                json_is_true(json_object_get(c, "heldout")));
    }

    /* each fixture: its digest and its distinct data rows */
    for (int f = 0; f < t->n_fixtures; f++) {
        const struct vat_fixture *fx = &t->fixture[f];
        for (int k = 0; k < 16; k++) {
            int hi = hex_nibble(fx->sha256[2 * k]), lo = hex_nibble(fx->sha256[2 * k + 1]);
            fp[k] = (unsigned char)((hi < 0 ? 0 : hi) << 4 | (lo < 0 ? 0 : lo));
        }
        put_key(&tp->rec[VAT_PRINT_DIGESTS], fp, side, tmpl, ix, f);
        /* the bytes as written (from the draw's memo, when on) */
        struct vat_fx_rows rows = {0};
        char why[512] = "", *img = NULL;
        size_t len = 0;
        struct vat_err re = {{0}};
        int st = vat_read_file_beneath(t->root, fx->path, VAT_FX_MAX_BYTES, &img, &len, &re);
        if (st == 0)
            st = vat_fx_rows_from(&rows, (unsigned char *)img, len, t->root, fx->path, why,
                                  sizeof why);
        else
            snprintf(why, sizeof why, "%s", re.msg);
        free(img);
        if (st != 0) {
            vat_fx_rows_release(&rows);
            vat_task_prints_release(tp);
            return vat_err_set(e, "%s: the rows of '%s' cannot be read as the audit reads them: %s",
                               t->id, fx->path, why);
        }
        unsigned char r[VAT_PRINT_ROW_BYTES];
        r[R_SIDE] = (unsigned char)side;
        vat_be_put(r + R_TMPL, tmpl, 2);
        vat_be_put(r + R_INDEX, ix, 4);
        r[R_FIX] = (unsigned char)f;
        vat_be_put(r + R_ROWS, rows.nrows, 4);
        for (size_t k = 0; k < rows.nrows; k++) {
            vat_be_put(r, rows.rows[k], 8);
            vat_buf_putn(&tp->rec[VAT_PRINT_ROWS], (const char *)r, sizeof r);
        }
        vat_fx_rows_release(&rows);
    }
    return 0;
}

void vat_task_prints_release(struct vat_task_prints *tp)
{
    for (int k = 0; k < VAT_N_PRINT_KINDS; k++)
        vat_buf_release(&tp->rec[k]);
}

/* ---- the build's records ------------------------------------------------------- */

void vat_prints_init(struct vat_prints *p, const char *tmpdir, size_t budget,
                     const char *const *tmpl, size_t ntmpl)
{
    memset(p, 0, sizeof *p);
    /* the rows are most of the records */
    for (int k = 0; k < VAT_N_PRINT_KINDS; k++)
        vat_xsort_init(&p->s[k], tmpdir, k == VAT_PRINT_ROWS ? budget / 2 : budget / 8);
    p->tmpl = vat_xcalloc(ntmpl ? ntmpl : 1, sizeof *p->tmpl);
    for (size_t i = 0; i < ntmpl; i++)
        p->tmpl[i] = vat_xstrdup(tmpl[i]);
    p->ntmpl = ntmpl;
}

int vat_prints_add(struct vat_prints *p, const struct vat_task_prints *tp, struct vat_err *e)
{
    for (int k = 0; k < VAT_N_PRINT_KINDS; k++) {
        const struct vat_buf *b = &tp->rec[k];
        for (size_t off = 0; off + rec_bytes[k] <= b->len; off += rec_bytes[k])
            if (vat_xsort_add(&p->s[k], b->data + off, rec_bytes[k], e) != 0)
                return -1;
    }
    return 0;
}

void vat_prints_release(struct vat_prints *p)
{
    for (int k = 0; k < VAT_N_PRINT_KINDS; k++)
        vat_xsort_release(&p->s[k]);
    for (size_t i = 0; i < p->ntmpl; i++)
        free(p->tmpl[i]);
    free(p->tmpl);
    memset(p, 0, sizeof *p);
}

/* ---- the checks over sorted records --------------------------------------------- */

/* A task or a fixture named from a record. */
static void task_name(char *out, size_t cap, char *const *tmpl, const unsigned char *tm_ix)
{
    snprintf(out, cap, "%s-%05u", tmpl[vat_be_get(tm_ix, 2)], (unsigned)vat_be_get(tm_ix + 2, 4));
}

static void fixture_name(char *out, size_t cap, char *const *tmpl, const unsigned char *tm_ix,
                         unsigned fixture)
{
    char task[128];
    task_name(task, sizeof task, tmpl, tm_ix);
    if (fixture == 0)
        snprintf(out, cap, "%s/main", task);
    else
        snprintf(out, cap, "%s/v%u", task, fixture);
}

/* The checks' state over one kind's records, in order. */
struct detect {
    enum vat_print_kind kind;
    struct vat_audit_report *r;
    char *const *tmpl;
    size_t ntmpl;
    bool any;
    unsigned char prev[VAT_PRINT_KEY_BYTES], first[VAT_PRINT_KEY_BYTES],
        side_first[VAT_PRINT_KEY_BYTES];
    /* strings: the run's test records that cross, held until the run
     * shows whether the string is held out anywhere */
    bool heldout;
    unsigned char *pend;
    size_t npend, cappend;
    long over;
    /* rows: the holders of the current row (at most VAT_AUDIT_COMMON_ROW + 1
     * kept), and how many it has, per side */
    unsigned char *holders;
    size_t nh, nrun, nside[VAT_N_SPLITS];
    struct vat_xsort pairs;
    const char *tmpdir;
    int failed;
    struct vat_err *e;
    long tasks[VAT_N_SPLITS], fixtures[VAT_N_SPLITS];
};

static void detect_add(struct detect *d, enum vat_audit_kind k, int table, int side,
                       const char *task, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void detect_add(struct detect *d, enum vat_audit_kind k, int table, int side,
                       const char *task, const char *fmt, ...)
{
    struct vat_buf b = VAT_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    vat_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    vat_audit_report_add(d->r, k, table, side, task, b.data ? b.data : "");
    vat_buf_release(&b);
}

static bool same_task(const unsigned char *a, const unsigned char *b)
{
    return memcmp(a + K_TMPL, b + K_TMPL, 6) == 0;
}

static void hex16(const unsigned char *fp, char out[33])
{
    vat_hex(fp, 16, out);
}

static void cross_key(struct detect *d, const unsigned char *x)
{
    char te[128], tr[128], fa[160], fb[160], hx[33];
    task_name(te, sizeof te, d->tmpl, x + K_TMPL);
    task_name(tr, sizeof tr, d->tmpl, d->first + K_TMPL);
    switch (d->kind) {
    case VAT_PRINT_PROMPTS:
        detect_add(d, VAT_AUDIT_PROMPT, x[K_AUX], VAT_SPLIT_TEST, te,
                   "the normalised prompt of test task '%s' is also in train task '%s' (table "
                   "'%s')",
                   te, tr, vat_table_names[d->first[K_AUX]]);
        break;
    case VAT_PRINT_PROGRAMS:
        detect_add(d, VAT_AUDIT_GOLD_PROGRAM, x[K_AUX], VAT_SPLIT_TEST, te,
                   "the normalised gold program of test task '%s' is also in train task '%s' "
                   "(table '%s')",
                   te, tr, vat_table_names[d->first[K_AUX]]);
        break;
    case VAT_PRINT_STRINGS:
        hex16(x, hx);
        detect_add(d, VAT_AUDIT_HELDOUT_STRING, VAT_T_VERIFIERS, VAT_SPLIT_TEST, te,
                   "a held-out string of test task '%s' (fingerprint %s) is also in train task "
                   "'%s' (table 'verifiers')",
                   te, hx, tr);
        break;
    case VAT_PRINT_DIGESTS:
        fixture_name(fa, sizeof fa, d->tmpl, x + K_TMPL, x[K_AUX]);
        fixture_name(fb, sizeof fb, d->tmpl, d->first + K_TMPL, d->first[K_AUX]);
        detect_add(d, VAT_AUDIT_FIXTURE_DIGEST, VAT_T_FIXTURE_GENERATORS, VAT_SPLIT_TEST, te,
                   "fixture '%s' of test task '%s' has the sha256 of fixture '%s' of train task "
                   "'%s'",
                   fa, te, fb, tr);
        break;
    default:
        break;
    }
}

static void end_key_run(struct detect *d)
{
    if (d->kind != VAT_PRINT_STRINGS || !d->heldout) {
        d->npend = 0;
        d->over = 0;
        return;
    }
    for (size_t i = 0; i < d->npend; i++)
        cross_key(d, d->pend + i * VAT_PRINT_KEY_BYTES);
    d->r->count[VAT_AUDIT_HELDOUT_STRING] += d->over;
    d->r->findings += d->over;
    d->npend = 0;
    d->over = 0;
}

/* One key record, in order. */
static void key_rec(struct detect *d, const unsigned char *x)
{
    bool same = d->any && memcmp(x, d->prev, 16) == 0;
    bool same_side = same && d->prev[K_SIDE] == x[K_SIDE];
    if (d->any && !same)
        end_key_run(d);
    if (!same) {
        memcpy(d->first, x, sizeof d->first);
        d->heldout = false;
    }
    if (!same_side)
        memcpy(d->side_first, x, sizeof d->side_first);
    int side = x[K_SIDE];
    if (d->kind == VAT_PRINT_PROMPTS && x[K_AUX] == VAT_T_EXPERIENCE)
        d->tasks[side]++;
    if (d->kind == VAT_PRINT_DIGESTS)
        d->fixtures[side]++;
    d->heldout |= d->kind == VAT_PRINT_STRINGS && x[K_AUX];

    /* across the split: once per test task of a run that starts on train */
    bool crosses = side == VAT_SPLIT_TEST && d->first[K_SIDE] == VAT_SPLIT_TRAIN &&
                   !(same_side && same_task(d->prev, x));
    if (crosses) {
        if (d->kind != VAT_PRINT_STRINGS) {
            cross_key(d, x);
        } else {
            long kept = d->r->count[VAT_AUDIT_HELDOUT_STRING];
            size_t room = d->r->max_per_kind > (size_t)kept ? d->r->max_per_kind - (size_t)kept : 0;
            if (d->npend >= room) {
                d->over++;
            } else {
                if (d->npend == d->cappend) {
                    d->cappend = d->cappend ? 2 * d->cappend : 16;
                    d->pend = vat_xrealloc(d->pend, d->cappend * VAT_PRINT_KEY_BYTES);
                }
                memcpy(d->pend + d->npend++ * VAT_PRINT_KEY_BYTES, x, VAT_PRINT_KEY_BYTES);
            }
        }
    }
    /* within a side: a second task with the same prompt, a second fixture
     * with the same bytes */
    if (same_side && d->kind == VAT_PRINT_PROMPTS && !same_task(d->prev, x)) {
        char a[128], b[128];
        task_name(a, sizeof a, d->tmpl, x + K_TMPL);
        task_name(b, sizeof b, d->tmpl, d->side_first + K_TMPL);
        detect_add(d, VAT_AUDIT_DUP_PROMPT, x[K_AUX], side, a,
                   "task '%s' has the same normalised prompt as '%s'", a, b);
    }
    if (same_side && d->kind == VAT_PRINT_DIGESTS) {
        char a[160], b[160], task[128];
        task_name(task, sizeof task, d->tmpl, x + K_TMPL);
        fixture_name(a, sizeof a, d->tmpl, x + K_TMPL, x[K_AUX]);
        fixture_name(b, sizeof b, d->tmpl, d->side_first + K_TMPL, d->side_first[K_AUX]);
        detect_add(d, VAT_AUDIT_DUP_FIXTURE_DIGEST, VAT_T_FIXTURE_GENERATORS, side, task,
                   "fixture '%s' has the same sha256 as fixture '%s' in the %s split", a, b,
                   vat_split_names[side]);
    }
    memcpy(d->prev, x, sizeof d->prev);
    d->any = true;
}

/* A pair record: train unit (template, index, fixture), test unit, and
 * each one's distinct rows. */
#define PAIR_BYTES 22

static void rows_run_end(struct detect *d)
{
    if (d->nside[VAT_SPLIT_TRAIN] && d->nside[VAT_SPLIT_TEST]) {
        if (d->nrun > VAT_AUDIT_COMMON_ROW) {
            d->r->common_rows_skipped++;
        } else {
            unsigned char pr[PAIR_BYTES];
            for (size_t x = 0; x < d->nh && !d->failed; x++) {
                const unsigned char *hx = d->holders + x * VAT_PRINT_ROW_BYTES;
                if (hx[R_SIDE] != VAT_SPLIT_TRAIN)
                    continue;
                for (size_t y = 0; y < d->nh && !d->failed; y++) {
                    const unsigned char *hy = d->holders + y * VAT_PRINT_ROW_BYTES;
                    if (hy[R_SIDE] != VAT_SPLIT_TEST)
                        continue;
                    memcpy(pr, hx + R_TMPL, 7);
                    memcpy(pr + 7, hy + R_TMPL, 7);
                    memcpy(pr + 14, hx + R_ROWS, 4);
                    memcpy(pr + 18, hy + R_ROWS, 4);
                    if (vat_xsort_add(&d->pairs, pr, sizeof pr, d->e) != 0)
                        d->failed = 1;
                }
            }
        }
    }
    d->nh = d->nrun = 0;
    d->nside[0] = d->nside[1] = 0;
}

static void row_rec(struct detect *d, const unsigned char *x)
{
    if (d->nrun && memcmp(x, d->prev, 8) != 0)
        rows_run_end(d);
    memcpy(d->prev, x, 8);
    if (d->nh <= VAT_AUDIT_COMMON_ROW)
        memcpy(d->holders + d->nh++ * VAT_PRINT_ROW_BYTES, x, VAT_PRINT_ROW_BYTES);
    d->nrun++;
    d->nside[x[R_SIDE] == VAT_SPLIT_TEST]++;
}

static void pair_done(struct detect *d, const unsigned char *p, long shared)
{
    struct vat_audit_report *r = d->r;
    size_t ntr = (size_t)vat_be_get(p + 14, 4), nte = (size_t)vat_be_get(p + 18, 4);
    double s_tr = (double)shared / (double)ntr, s_te = (double)shared / (double)nte;
    /* "a" is the fixture more of whose rows are shared; the test one on a tie. */
    bool a_is_test = s_te >= s_tr;
    const unsigned char *ua = a_is_test ? p + 7 : p, *ub = a_is_test ? p : p + 7;
    double share = a_is_test ? s_te : s_tr;
    size_t na = a_is_test ? nte : ntr;
    char fa[160], fb[160], ta[128], tb[128];
    fixture_name(fa, sizeof fa, d->tmpl, ua, ua[6]);
    fixture_name(fb, sizeof fb, d->tmpl, ub, ub[6]);
    if (share > r->max_overlap_share) {
        r->max_overlap_share = share;
        r->max_overlap_rows = shared;
        free(r->max_overlap_a);
        free(r->max_overlap_b);
        r->max_overlap_a = vat_xstrdup(fa);
        r->max_overlap_b = vat_xstrdup(fb);
    }
    if (2 * (size_t)shared > na) {
        task_name(ta, sizeof ta, d->tmpl, ua);
        task_name(tb, sizeof tb, d->tmpl, ub);
        int sa = a_is_test ? VAT_SPLIT_TEST : VAT_SPLIT_TRAIN;
        detect_add(d, VAT_AUDIT_NEAR_DUPLICATE, VAT_T_FIXTURE_GENERATORS, sa, ta,
                   "fixture '%s' (%s) shares %ld of its %zu distinct data rows with fixture "
                   "'%s' (%s, task '%s')",
                   fa, vat_split_names[sa], shared, na, fb, vat_split_names[!sa], tb);
    }
}

static void detect_begin(struct detect *d, enum vat_print_kind k, struct vat_audit_report *r,
                         char *const *tmpl, size_t ntmpl, const char *tmpdir, struct vat_err *e)
{
    memset(d, 0, sizeof *d);
    d->kind = k;
    d->r = r;
    d->tmpl = tmpl;
    d->ntmpl = ntmpl;
    d->tmpdir = tmpdir;
    d->e = e;
    vat_xsort_init(&d->pairs, tmpdir, (size_t)8 << 20);
    if (k == VAT_PRINT_ROWS)
        d->holders = vat_xmalloc((VAT_AUDIT_COMMON_ROW + 1) * VAT_PRINT_ROW_BYTES);
}

/* Ends a kind: its last run, and for the rows the pairs. */
static int detect_end(struct detect *d)
{
    if (d->kind != VAT_PRINT_ROWS) {
        if (d->any)
            end_key_run(d);
    } else {
        if (d->nrun)
            rows_run_end(d);
        if (!d->failed && vat_xsort_finish(&d->pairs, d->e) != 0)
            d->failed = 1;
        const unsigned char *p;
        size_t len;
        unsigned char last[PAIR_BYTES];
        long shared = 0;
        int st = 0;
        while (!d->failed && (st = vat_xsort_next(&d->pairs, &p, &len, d->e)) == 1) {
            if (shared && memcmp(p, last, 14) != 0) {
                pair_done(d, last, shared);
                shared = 0;
            }
            memcpy(last, p, sizeof last);
            shared++;
        }
        if (st < 0)
            d->failed = 1;
        if (shared && !d->failed)
            pair_done(d, last, shared);
    }
    d->r->tasks[0] += d->tasks[0];
    d->r->tasks[1] += d->tasks[1];
    d->r->fixtures[0] += d->fixtures[0];
    d->r->fixtures[1] += d->fixtures[1];
    free(d->pend);
    free(d->holders);
    vat_xsort_release(&d->pairs);
    return d->failed ? -1 : 0;
}

static void detect_rec(struct detect *d, const unsigned char *x)
{
    if (d->kind == VAT_PRINT_ROWS)
        row_rec(d, x);
    else
        key_rec(d, x);
}

/* ---- the files ------------------------------------------------------------------- */

static char *header_line(enum vat_print_kind k, uint64_t n, char *const *tmpl, size_t ntmpl)
{
    struct vat_buf b = VAT_BUF_INIT;
    struct vat_jw w;
    vat_jw_begin(&w, &b);
    vat_jw_int(&w, "vat_prints", 1);
    vat_jw_string(&w, "kind", vat_print_kind_names[k]);
    vat_jw_int(&w, "record_bytes", (long long)rec_bytes[k]);
    vat_jw_int(&w, "records", (long long)n);
    vat_jw_array(&w, "templates");
    for (size_t i = 0; i < ntmpl; i++)
        vat_jw_string(&w, NULL, tmpl[i]);
    vat_jw_end(&w);
    vat_jw_end(&w);
    vat_buf_putc(&b, '\n');
    return vat_buf_detach(&b);
}

int vat_prints_finish(struct vat_prints *p, const char *write_root, struct vat_audit_report *r,
                      struct vat_err *e)
{
    for (int k = 0; k < VAT_N_PRINT_KINDS; k++) {
        if (vat_xsort_finish(&p->s[k], e) != 0)
            return -1;
        FILE *f = NULL;
        char *rel = vat_xasprintf("%s/%s.bin", VAT_PRINTS_DIR, vat_print_kind_names[k]);
        char *dst = NULL, *tmp = NULL;
        int rc = 0;
        if (write_root) {
            if (vat_mkdirs_for(write_root, rel, e) != 0) {
                free(rel);
                return -1;
            }
            dst = vat_path_join(write_root, rel);
            tmp = vat_xasprintf("%s.tmp", dst);
            f = fopen(tmp, "wbx");
            if (!f)
                rc = vat_err_set(e, "vat: cannot create '%s': %s", tmp, strerror(errno));
            char *h = rc ? NULL : header_line(k, p->s[k].count, p->tmpl, p->ntmpl);
            if (h && fputs(h, f) == EOF)
                rc = vat_err_set(e, "vat: cannot write '%s': %s", tmp, strerror(errno));
            free(h);
        }
        struct detect d;
        detect_begin(&d, k, r, p->tmpl, p->ntmpl, p->s[k].dir, e);
        const unsigned char *x;
        size_t len;
        int st = 0;
        while (rc == 0 && !d.failed && (st = vat_xsort_next(&p->s[k], &x, &len, e)) == 1) {
            if (f && fwrite(x, 1, len, f) != len)
                rc = vat_err_set(e, "vat: cannot write '%s': %s", tmp, strerror(errno));
            detect_rec(&d, x);
        }
        if (st < 0)
            rc = -1;
        if (detect_end(&d) != 0 && rc == 0)
            rc = -1;
        if (f && fclose(f) != 0 && rc == 0)
            rc = vat_err_set(e, "vat: cannot write '%s': %s", tmp, strerror(errno));
        if (f && rc == 0 && rename(tmp, dst) != 0)
            rc = vat_err_set(e, "vat: cannot rename '%s': %s", tmp, strerror(errno));
        if (f && rc != 0)
            remove(tmp);
        free(tmp);
        free(dst);
        free(rel);
        vat_xsort_release(&p->s[k]);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* ---- the shard audit ------------------------------------------------------------- */

struct shard_file {
    const char *root;
    char *rel;
    FILE *f;
    char *buf; /* stdio buffer */
    uint64_t left, nth;
    unsigned char cur[VAT_PRINT_KEY_BYTES], prev[VAT_PRINT_KEY_BYTES];
    json_t *templates;
};

/* Opens a shard's file of kind k and checks its head; the first shard's
 * templates are the ones every other must name. */
static int shard_open(struct shard_file *sf, const char *root, enum vat_print_kind k,
                      const json_t *templates, const char *first_root, struct vat_err *e)
{
    memset(sf, 0, sizeof *sf);
    sf->root = root;
    sf->rel = vat_xasprintf("%s/%s.bin", VAT_PRINTS_DIR, vat_print_kind_names[k]);
    char why[256];
    size_t size = 0;
    sf->f = vat_fx_open(root, sf->rel, &size, why, sizeof why);
    if (!sf->f)
        return vat_err_set(e, "vat: cannot open '%s' in shard '%s': %s (a shard built by this "
                              "vat writes it)",
                           sf->rel, root, why);
    sf->buf = vat_xmalloc((size_t)64 << 10);
    setvbuf(sf->f, sf->buf, _IOFBF, (size_t)64 << 10);
    char head[1 << 16];
    if (!fgets(head, sizeof head, sf->f) || !strchr(head, '\n'))
        return vat_err_set(e, "vat: '%s' in shard '%s' has no header line", sf->rel, root);
    size_t hl = strlen(head);
    json_error_t je;
    json_t *h = json_loadb(head, hl, JSON_REJECT_DUPLICATES, &je);
    const char *kind = json_string_value(json_object_get(h, "kind"));
    json_int_t rb = json_integer_value(json_object_get(h, "record_bytes"));
    json_int_t n = json_integer_value(json_object_get(h, "records"));
    const json_t *tm = json_object_get(h, "templates");
    int rc = 0;
    if (!json_is_object(h) || json_integer_value(json_object_get(h, "vat_prints")) != 1 || !kind ||
        strcmp(kind, vat_print_kind_names[k]) != 0 || rb != (json_int_t)rec_bytes[k] || n < 0 ||
        !json_is_array(tm))
        rc = vat_err_set(e, "vat: '%s' in shard '%s' does not start with a vat_prints 1 header "
                            "of kind '%s'",
                         sf->rel, root, vat_print_kind_names[k]);
    else if ((uint64_t)size - hl != (uint64_t)n * rec_bytes[k])
        rc = vat_err_set(e, "vat: '%s' in shard '%s' holds %llu bytes of records, not %lld of %zu",
                         sf->rel, root, (unsigned long long)((uint64_t)size - hl), (long long)n,
                         rec_bytes[k]);
    else if (templates && !json_equal(templates, tm))
        rc = vat_err_set(e, "vat: '%s' in shard '%s' names other templates than the prints of "
                            "shard '%s'",
                         sf->rel, root, first_root);
    size_t i;
    const json_t *v;
    json_array_foreach(tm, i, v)
        if (!json_is_string(v) && rc == 0)
            rc = vat_err_set(e, "vat: '%s' in shard '%s' names a template that is not a string",
                             sf->rel, root);
    if (rc == 0 && json_array_size(tm) > 65536)
        rc = vat_err_set(e, "vat: '%s' in shard '%s' names too many templates", sf->rel, root);
    if (rc == 0)
        sf->templates = json_incref((json_t *)tm);
    sf->left = rc == 0 ? (uint64_t)n : 0;
    json_decref(h);
    return rc;
}

/* The next record of a shard file: 1, 0 at its end, -1 with e set. */
static int shard_next(struct shard_file *sf, enum vat_print_kind k, size_t ntmpl,
                      struct vat_err *e)
{
    if (!sf->left)
        return 0;
    size_t rb = rec_bytes[k];
    memcpy(sf->prev, sf->cur, rb);
    if (fread(sf->cur, 1, rb, sf->f) != rb)
        return vat_err_set(e, "vat: cannot read '%s' in shard '%s'", sf->rel, sf->root);
    sf->left--;
    sf->nth++;
    int side = k == VAT_PRINT_ROWS ? sf->cur[R_SIDE] : sf->cur[K_SIDE];
    uint64_t tm = vat_be_get(sf->cur + (k == VAT_PRINT_ROWS ? R_TMPL : K_TMPL), 2);
    if (side > 1 || tm >= ntmpl)
        return vat_err_set(e, "vat: record %llu of '%s' in shard '%s' names no side or template",
                           (unsigned long long)sf->nth, sf->rel, sf->root);
    if (sf->nth > 1 && memcmp(sf->prev, sf->cur, rb) > 0)
        return vat_err_set(e, "vat: '%s' in shard '%s' is not sorted (record %llu)", sf->rel,
                           sf->root, (unsigned long long)sf->nth);
    return 1;
}

static void shard_close(struct shard_file *sf)
{
    if (sf->f)
        fclose(sf->f);
    free(sf->buf);
    free(sf->rel);
    json_decref(sf->templates);
    memset(sf, 0, sizeof *sf);
}

static void heap_down(struct shard_file *sf, size_t *h, size_t n, size_t i, size_t rb)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && memcmp(sf[h[l]].cur, sf[h[m]].cur, rb) < 0)
            m = l;
        if (l + 1 < n && memcmp(sf[h[l + 1]].cur, sf[h[m]].cur, rb) < 0)
            m = l + 1;
        if (m == i)
            return;
        size_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

int vat_prints_audit(const char *const *roots, size_t n, struct vat_audit_report *r,
                     struct vat_err *e)
{
    struct shard_file *sf = vat_xcalloc(n ? n : 1, sizeof *sf);
    size_t *heap = vat_xcalloc(n ? n : 1, sizeof *heap);
    json_t *first = NULL; /* the templates of the first file read: every file names them */
    char **names = NULL;
    size_t ntmpl = 0;
    int rc = 0;
    for (int k = 0; k < VAT_N_PRINT_KINDS && rc == 0; k++) {
        size_t rb = rec_bytes[k];
        for (size_t i = 0; i < n && rc == 0; i++) {
            rc = shard_open(&sf[i], roots[i], (enum vat_print_kind)k, first, roots[0], e);
            if (rc == 0 && !first) {
                first = json_incref(sf[i].templates);
                ntmpl = json_array_size(first);
                names = vat_xcalloc(ntmpl ? ntmpl : 1, sizeof *names);
                for (size_t t = 0; t < ntmpl; t++)
                    names[t] = vat_xstrdup(json_string_value(json_array_get(first, t)));
            }
        }
        size_t nh = 0;
        for (size_t i = 0; i < n && rc == 0; i++) {
            int st = shard_next(&sf[i], (enum vat_print_kind)k, ntmpl, e);
            if (st < 0)
                rc = -1;
            else if (st > 0)
                heap[nh++] = i;
        }
        for (size_t i = nh / 2; rc == 0 && i-- > 0;)
            heap_down(sf, heap, nh, i, rb);
        struct detect d;
        detect_begin(&d, (enum vat_print_kind)k, r, names, ntmpl, NULL, e);
        while (rc == 0 && nh) {
            struct shard_file *top = &sf[heap[0]];
            detect_rec(&d, top->cur);
            int st = shard_next(top, (enum vat_print_kind)k, ntmpl, e);
            if (st < 0)
                rc = -1;
            else if (st == 0)
                heap[0] = heap[--nh];
            heap_down(sf, heap, nh, 0, rb);
        }
        if (detect_end(&d) != 0 && rc == 0)
            rc = -1;
        for (size_t i = 0; i < n; i++)
            shard_close(&sf[i]);
    }
    for (size_t i = 0; i < ntmpl; i++)
        free(names[i]);
    free(names);
    json_decref(first);
    free(sf);
    free(heap);
    return rc;
}

/* test_prints.c — the audit's fingerprints (src/prints.h).
 *
 * The build's check: the prints of real drawn tasks (regex, SQL, a CSV
 * and a workbook analytics task) find nothing when every task is itself,
 * and when one task's material is recorded again as a test task, every
 * cross-split kind finds it, naming both tasks.  The construction: the
 * same tasks of every template drawn on both sides share no string,
 * fixture or fixture row.
 *
 * The shard audit: two shards built by the vat binary ($VAT_BINARY)
 * audit clean from their prints alone; a held-out string, a prompt and a
 * fixture's rows planted from a train task of one shard into a test task
 * of the other are each found, naming both tasks; vat merge refuses them;
 * prints that are cut short, out of order or of other templates are
 * refused with one line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "audit.h"
#include "prints.h"
#include "tables.h"
#include "template.h"
#include "testutil.h"

static const char *bin(void)
{
    const char *b = getenv("VAT_BINARY");
    return b && *b ? b : "./vat";
}

static int run(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- the build's check, on drawn tasks ---------------------------------------- */

static const char *const drawn_names[] = {"regex_amounts", "sql_paid_revenue", "grouped_sum",
                                          "pivot"};
#define N_DRAWN (sizeof drawn_names / sizeof drawn_names[0])

/* Prints of the drawn tasks, each on its own side; with leak, task 0 of
 * every template is recorded again as a test task of index 99. */
static void check_drawn(bool leak, struct vat_audit_report *r)
{
    const char *names[N_DRAWN];
    for (size_t i = 0; i < N_DRAWN; i++)
        names[i] = drawn_names[i];
    char *tmp = vat_test_tmpdir("prints");
    struct vat_prints p;
    vat_prints_init(&p, tmp, (size_t)1 << 16, names, N_DRAWN);
    for (size_t i = 0; i < N_DRAWN; i++) {
        const struct vat_template *tm = vat_template_find(drawn_names[i]);
        assert_non_null(tm);
        struct vat_tt_drawn *d = vat_tt_drawn_new(tm, 20261130, 2);
        for (uint32_t k = 0; k < d->n; k++) {
            struct vat_task_prints tp;
            struct vat_err e = {{0}};
            assert_int_equal(vat_task_prints_make(&tp, &d->t[k], (int)k, (unsigned)i, &e), 0);
            assert_int_equal(vat_prints_add(&p, &tp, &e), 0);
            vat_task_prints_release(&tp);
            if (leak && k == 0) {
                struct vat_task copy = d->t[0];
                copy.index = 99;
                assert_int_equal(vat_task_prints_make(&tp, &copy, VAT_SPLIT_TEST, (unsigned)i, &e),
                                 0);
                assert_int_equal(vat_prints_add(&p, &tp, &e), 0);
                vat_task_prints_release(&tp);
            }
        }
        vat_tt_drawn_free(d);
    }
    struct vat_err e = {{0}};
    vat_audit_init(r, 100);
    assert_int_equal(vat_prints_finish(&p, NULL, r, &e), 0);
    vat_prints_release(&p);
    vat_test_rmtree(tmp);
    free(tmp);
}

static bool has_finding(const struct vat_audit_report *r, enum vat_audit_kind k,
                        const char *test_task, const char *train_task)
{
    for (size_t i = 0; i < r->nf; i++)
        if (r->f[i].kind == k && strcmp(r->f[i].task_id, test_task) == 0 &&
            strstr(r->f[i].detail, train_task))
            return true;
    return false;
}

static void test_build_check_clean(void **state)
{
    (void)state;
    struct vat_audit_report r;
    check_drawn(false, &r);
    for (size_t i = 0; i < r.nf; i++)
        print_message("  %s: %s\n", vat_audit_kind_name(r.f[i].kind), r.f[i].detail);
    assert_int_equal(r.findings, 0);
    assert_int_equal(r.tasks[VAT_SPLIT_TRAIN] + r.tasks[VAT_SPLIT_TEST], 2 * (long)N_DRAWN);
    assert_true(r.max_overlap_share < 0.5);
    vat_audit_release(&r);
}

static void test_build_check_finds_a_copied_task(void **state)
{
    (void)state;
    struct vat_audit_report r;
    check_drawn(true, &r);
    for (size_t i = 0; i < N_DRAWN; i++) {
        char tr[96], te[96];
        snprintf(tr, sizeof tr, "%s-00000", drawn_names[i]);
        snprintf(te, sizeof te, "%s-00099", drawn_names[i]);
        assert_true(has_finding(&r, VAT_AUDIT_PROMPT, te, tr));
        assert_true(has_finding(&r, VAT_AUDIT_FIXTURE_DIGEST, te, tr));
        assert_true(has_finding(&r, VAT_AUDIT_NEAR_DUPLICATE, te, tr));
    }
    assert_true(has_finding(&r, VAT_AUDIT_HELDOUT_STRING, "regex_amounts-00099",
                            "regex_amounts-00000"));
    assert_true(has_finding(&r, VAT_AUDIT_GOLD_PROGRAM, "regex_amounts-00099",
                            "regex_amounts-00000"));
    assert_true(has_finding(&r, VAT_AUDIT_GOLD_PROGRAM, "sql_paid_revenue-00099",
                            "sql_paid_revenue-00000"));
    assert_true(r.max_overlap_share == 1.0);
    /* a finding per held-out string of the test task, none for the shown ones */
    assert_true(r.count[VAT_AUDIT_HELDOUT_STRING] >= 20);
    vat_audit_release(&r);
}

/* A data row held by more than VAT_AUDIT_COMMON_ROW fixtures on both
 * sides is counted as too common, not paired, even when every holder the
 * check keeps is a train one (records come train first). */
static void test_common_row_counted(void **state)
{
    (void)state;
    const char *names[] = {"t"};
    char *tmp = vat_test_tmpdir("prints-common");
    struct vat_prints p;
    vat_prints_init(&p, tmp, (size_t)1 << 16, names, 1);
    for (uint32_t ix = 0; ix <= VAT_AUDIT_COMMON_ROW + 1; ix++) {
        struct vat_task_prints tp;
        struct vat_err e = {{0}};
        memset(&tp, 0, sizeof tp);
        int side = ix == VAT_AUDIT_COMMON_ROW + 1 ? VAT_SPLIT_TEST : VAT_SPLIT_TRAIN;
        for (uint64_t h = 0; h < 3; h++) { /* the common row, and two of its own */
            unsigned char r[VAT_PRINT_ROW_BYTES] = {0};
            vat_be_put(r, h == 0 ? 42 : (uint64_t)ix << 8 | h, 8);
            r[8] = (unsigned char)side;
            vat_be_put(r + 11, ix, 4);
            vat_be_put(r + 16, 3, 4);
            vat_buf_putn(&tp.rec[VAT_PRINT_ROWS], (const char *)r, sizeof r);
        }
        assert_int_equal(vat_prints_add(&p, &tp, &e), 0);
        vat_task_prints_release(&tp);
    }
    struct vat_audit_report r;
    struct vat_err e = {{0}};
    vat_audit_init(&r, 10);
    assert_int_equal(vat_prints_finish(&p, NULL, &r, &e), 0);
    assert_int_equal(r.common_rows_skipped, 1);
    assert_int_equal(r.findings, 0);
    assert_true(r.max_overlap_share == 0.0);
    vat_audit_release(&r);
    vat_prints_release(&p);
    vat_test_rmtree(tmp);
    free(tmp);
}

/* Tasks 0..2 of every template drawn twice, once on each side: the same
 * streams, so without the sides' halves (vat_side_owns) their fixtures
 * and regex strings would be the same bytes.  No string, fixture digest
 * or fixture's rows may cross (their prompts and golds can: the same
 * question, which a real corpus never puts on both sides). */
static void test_sides_never_share_material(void **state)
{
    (void)state;
    size_t ntm = 0;
    while (vat_registry[ntm])
        ntm++;
    const char **names = vat_xcalloc(ntm, sizeof *names);
    for (size_t i = 0; i < ntm; i++)
        names[i] = vat_registry[i]->name;
    char *tmp = vat_test_tmpdir("prints-sides");
    struct vat_prints p;
    vat_prints_init(&p, tmp, (size_t)4 << 20, names, ntm);
    for (size_t i = 0; i < ntm; i++) {
        struct vat_tt_env *v = vat_tt_env_new(vat_registry[i], 20261130);
        for (int side = 0; side < VAT_N_SPLITS; side++) {
            char *root = vat_xasprintf("%s/%s-%d", tmp, names[i], side);
            assert_int_equal(mkdir(root, 0755), 0);
            for (uint32_t ix = 0; ix < 3; ix++) {
                struct vat_task t;
                struct vat_replay r;
                struct vat_err e = {{0}};
                struct vat_draw_opts o = {.master_seed = v->seed, .cfg = v->cfg,
                                          .inline_max_bytes = 6000};
                vat_task_init(&t, vat_registry[i], ix, root);
                t.side = side;
                uint32_t a = 0;
                while (a < 20 && vat_task_draw(&t, a, &o, &r, &e) != 0)
                    a++;
                if (a == 20)
                    fail_msg("%s (side %d) not admitted: %s", t.id, side, e.msg);
                struct vat_task_prints tp;
                assert_int_equal(vat_task_prints_make(&tp, &t, side, (unsigned)i, &e), 0);
                assert_int_equal(vat_prints_add(&p, &tp, &e), 0);
                vat_task_prints_release(&tp);
                vat_task_clear(&t);
            }
            free(root);
        }
        vat_tt_env_free(v);
    }
    struct vat_audit_report r;
    struct vat_err e = {{0}};
    vat_audit_init(&r, 100);
    assert_int_equal(vat_prints_finish(&p, NULL, &r, &e), 0);
    static const enum vat_audit_kind never[] = {
        VAT_AUDIT_HELDOUT_STRING, VAT_AUDIT_FIXTURE_DIGEST, VAT_AUDIT_NEAR_DUPLICATE,
        VAT_AUDIT_DUP_FIXTURE_DIGEST};
    for (size_t k = 0; k < sizeof never / sizeof never[0]; k++) {
        if (r.count[never[k]] == 0)
            continue;
        for (size_t i = 0; i < r.nf; i++)
            if (r.f[i].kind == never[k])
                print_message("  %s: %s\n", vat_audit_kind_name(r.f[i].kind), r.f[i].detail);
        fail_msg("%ld '%s' findings", r.count[never[k]], vat_audit_kind_name(never[k]));
    }
    assert_true(r.max_overlap_share <= 0.5);
    assert_int_equal(r.tasks[VAT_SPLIT_TRAIN], 3 * (long)ntm);
    assert_int_equal(r.tasks[VAT_SPLIT_TEST], 3 * (long)ntm);
    vat_audit_release(&r);
    vat_prints_release(&p);
    free(names);
    vat_test_rmtree(tmp);
    free(tmp);
}

/* ---- the shard audit ------------------------------------------------------------ */

static const char shard_config[] =
    "[corpus]\nmaster_seed = 11\ntest_fraction = 0.34\n"
    "[templates.regex_iso_dates]\ncount = 6\n"
    "[templates.grouped_count]\ncount = 6\n"
    "[templates.sql_order_counts]\ncount = 4\n";

struct shards {
    char *dir, *cfg, *root[2];
};

static int setup(void **state)
{
    struct shards *s = vat_xcalloc(1, sizeof *s);
    s->dir = vat_test_tmpdir("prints-shards");
    s->cfg = vat_xasprintf("%s/seeds.toml", s->dir);
    FILE *f = fopen(s->cfg, "w");
    if (!f)
        return -1;
    fputs(shard_config, f);
    fclose(f);
    for (int k = 0; k < 2; k++) {
        s->root[k] = vat_xasprintf("%s/shard-%d", s->dir, k + 1);
        char *cmd = vat_xasprintf("'%s' build --config '%s' --root '%s' --shard %d/2 --quiet "
                                  "--only regex_iso_dates,grouped_count,sql_order_counts "
                                  ">/dev/null",
                                  bin(), s->cfg, s->root[k], k + 1);
        int rc = run(cmd);
        free(cmd);
        if (rc != 0)
            return -1;
    }
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    struct shards *s = *state;
    if (!s)
        return 0;
    vat_test_rmtree(s->dir);
    free(s->dir);
    free(s->cfg);
    for (int k = 0; k < 2; k++)
        free(s->root[k]);
    free(s);
    return 0;
}

/* A prints file read whole: its header line and its records. */
struct pfile {
    char *head;
    unsigned char *rec;
    size_t n, rb;
};

static char *pfile_path(const char *root, const char *kind)
{
    return vat_xasprintf("%s/%s/%s.bin", root, VAT_PRINTS_DIR, kind);
}

static void pfile_read(struct pfile *pf, const char *root, const char *kind)
{
    char *path = pfile_path(root, kind);
    size_t len = 0;
    char *data = vat_test_read_file(path, &len);
    assert_non_null(data);
    char *nl = memchr(data, '\n', len);
    assert_non_null(nl);
    pf->head = vat_xstrndup(data, (size_t)(nl - data) + 1);
    json_t *h = json_loads(pf->head, 0, NULL);
    assert_non_null(h);
    pf->rb = (size_t)json_integer_value(json_object_get(h, "record_bytes"));
    json_decref(h);
    size_t body = len - (size_t)(nl + 1 - data);
    pf->n = body / pf->rb;
    pf->rec = vat_xmalloc(body ? body : 1);
    memcpy(pf->rec, nl + 1, body);
    free(data);
    free(path);
}

static size_t g_rb;
static int cmp_rec(const void *a, const void *b)
{
    return memcmp(a, b, g_rb);
}

/* Writes pf back sorted, the header's count updated. */
static void pfile_write(struct pfile *pf, const char *root, const char *kind, bool sort)
{
    g_rb = pf->rb;
    if (sort)
        qsort(pf->rec, pf->n, pf->rb, cmp_rec);
    json_t *h = json_loads(pf->head, 0, NULL);
    json_object_set_new(h, "records", json_integer((json_int_t)pf->n));
    char *path = pfile_path(root, kind);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    char *hs = json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER);
    fprintf(f, "%s\n", hs);
    fwrite(pf->rec, pf->rb, pf->n, f);
    fclose(f);
    free(hs);
    json_decref(h);
    free(path);
}

static void pfile_free(struct pfile *pf)
{
    free(pf->head);
    free(pf->rec);
}

/* Copies each shard's prints into a scratch root of its own, so a test
 * can plant things without touching the shards (out[k] replaced). */
static void scratch_copy(struct shards *s, char *out[2])
{
    for (int k = 0; k < 2; k++) {
        out[k] = vat_xasprintf("%s/plant-%d", s->dir, k + 1);
        char *cmd = vat_xasprintf("rm -rf '%s' && mkdir -p '%s/out' && cp -r '%s/%s' '%s/out/'",
                                  out[k], out[k], s->root[k], VAT_PRINTS_DIR, out[k]);
        assert_int_equal(run(cmd), 0);
        free(cmd);
    }
}

static int audit_roots(char *const *roots, struct vat_audit_report *r, struct vat_err *e)
{
    vat_audit_init(r, 100);
    return vat_prints_audit((const char *const *)roots, 2, r, e);
}

static void test_shards_clean(void **state)
{
    struct shards *s = *state;
    struct vat_audit_report r;
    struct vat_err e = {{0}};
    assert_int_equal(audit_roots(s->root, &r, &e), 0);
    assert_int_equal(r.findings, 0);
    assert_int_equal(r.tasks[VAT_SPLIT_TRAIN] + r.tasks[VAT_SPLIT_TEST], 16);
    assert_true(r.tasks[VAT_SPLIT_TEST] > 0);
    vat_audit_release(&r);
    char *cmd = vat_xasprintf("'%s' audit --shards '%s' '%s' >/dev/null 2>&1", bin(), s->root[0],
                              s->root[1]);
    assert_int_equal(run(cmd), 0);
    free(cmd);
}

/* A record of kind whose side is want and which belongs to a regex task
 * (for strings: held out), from pf. */
static unsigned char *pick(struct pfile *pf, int side, bool heldout)
{
    for (size_t i = 0; i < pf->n; i++) {
        unsigned char *x = pf->rec + i * pf->rb;
        if (pf->rb == VAT_PRINT_KEY_BYTES ? x[16] == side && (!heldout || x[23])
                                          : x[8] == side)
            return x;
    }
    fail_msg("no record of side %d", side);
    return NULL;
}

static char *task_of(const unsigned char *x, const char *head, bool rows)
{
    json_t *h = json_loads(head, 0, NULL);
    const unsigned char *p = x + (rows ? 9 : 17);
    const char *tm = json_string_value(json_array_get(json_object_get(h, "templates"),
                                                      (size_t)(p[0] << 8 | p[1])));
    unsigned ix = (unsigned)p[2] << 24 | (unsigned)p[3] << 16 | (unsigned)p[4] << 8 | p[5];
    char *t = vat_xasprintf("%s-%05u", tm, ix);
    json_decref(h);
    return t;
}

/* Plants kind's record of a train task of shard 1 as a record of a test
 * task of shard 2 and expects finding `want` naming both. */
static void plant_key(struct shards *s, const char *kind, enum vat_audit_kind want, bool heldout)
{
    char *roots[2];
    scratch_copy(s, roots);
    struct pfile a, b;
    pfile_read(&a, roots[0], kind);
    pfile_read(&b, roots[1], kind);
    unsigned char *tr = pick(&a, VAT_SPLIT_TRAIN, heldout);
    unsigned char *te = pick(&b, VAT_SPLIT_TEST, false);
    char *trt = task_of(tr, a.head, false), *tet = task_of(te, b.head, false);
    b.rec = vat_xrealloc(b.rec, (b.n + 1) * b.rb);
    te = pick(&b, VAT_SPLIT_TEST, false);
    unsigned char *x = b.rec + b.n * b.rb;
    memcpy(x, tr, 16);            /* the train record's fingerprint */
    memcpy(x + 16, te + 16, 8);   /* on the test task */
    x[23] = heldout ? 1 : tr[23]; /* (strings: held out) */
    b.n++;
    pfile_write(&b, roots[1], kind, true);
    struct vat_audit_report r;
    struct vat_err e = {{0}};
    assert_int_equal(audit_roots(roots, &r, &e), 0);
    assert_int_equal(r.count[want], 1);
    assert_int_equal(r.findings, 1);
    assert_string_equal(r.f[0].task_id, tet);
    assert_non_null(strstr(r.f[0].detail, trt));
    vat_audit_release(&r);
    free(trt);
    free(tet);
    pfile_free(&a);
    pfile_free(&b);
    for (int k = 0; k < 2; k++)
        free(roots[k]);
}

static void test_planted_heldout_string(void **state)
{
    plant_key(*state, "strings", VAT_AUDIT_HELDOUT_STRING, true);
}

static void test_planted_prompt(void **state)
{
    plant_key(*state, "prompts", VAT_AUDIT_PROMPT, false);
}

/* The distinct rows of one train fixture of shard 1, planted as the rows
 * of a test fixture of shard 2 (with its own distinct-row count): a
 * near-duplicate across the shards. */
static void test_planted_fixture_rows(void **state)
{
    struct shards *s = *state;
    char *roots[2];
    scratch_copy(s, roots);
    struct pfile a, b;
    pfile_read(&a, roots[0], "rows");
    pfile_read(&b, roots[1], "rows");
    const unsigned char *tr = pick(&a, VAT_SPLIT_TRAIN, false);
    unsigned char unit[7];
    memcpy(unit, tr + 9, 7);
    const unsigned char *te = pick(&b, VAT_SPLIT_TEST, false);
    unsigned char teu[7];
    memcpy(teu, te + 9, 7);
    char *trt = task_of(tr, a.head, true), *tet = task_of(te, b.head, true);
    size_t nrows = (size_t)(tr[16] << 24 | tr[17] << 16 | tr[18] << 8 | tr[19]);
    b.rec = vat_xrealloc(b.rec, (b.n + nrows) * b.rb);
    /* the test fixture becomes the train one's rows plus its own */
    for (size_t i = 0; i < a.n; i++) {
        const unsigned char *x = a.rec + i * a.rb;
        if (memcmp(x + 9, unit, 7) != 0 || x[8] != VAT_SPLIT_TRAIN)
            continue;
        unsigned char *y = b.rec + b.n++ * b.rb;
        memcpy(y, x, 8);
        y[8] = VAT_SPLIT_TEST;
        memcpy(y + 9, teu, 7);
    }
    size_t own = 0;
    for (size_t i = 0; i < b.n; i++)
        own += memcmp(b.rec + i * b.rb + 9, teu, 7) == 0 && b.rec[i * b.rb + 8] == VAT_SPLIT_TEST;
    for (size_t i = 0; i < b.n; i++) {
        unsigned char *y = b.rec + i * b.rb;
        if (memcmp(y + 9, teu, 7) == 0 && y[8] == VAT_SPLIT_TEST) {
            y[16] = (unsigned char)(own >> 24);
            y[17] = (unsigned char)(own >> 16);
            y[18] = (unsigned char)(own >> 8);
            y[19] = (unsigned char)own;
        }
    }
    pfile_write(&b, roots[1], "rows", true);
    struct vat_audit_report r;
    struct vat_err e = {{0}};
    assert_int_equal(audit_roots(roots, &r, &e), 0);
    assert_int_equal(r.count[VAT_AUDIT_NEAR_DUPLICATE], 1);
    assert_non_null(strstr(r.f[0].detail, trt));
    assert_non_null(strstr(r.f[0].detail, tet));
    assert_true(r.max_overlap_share == 1.0); /* every row of the train fixture */
    vat_audit_release(&r);
    free(trt);
    free(tet);
    pfile_free(&a);
    pfile_free(&b);
    for (int k = 0; k < 2; k++)
        free(roots[k]);
}

/* The shard's manifest hashed again over a planted prints file, as a
 * builder with the leak would have written it: verification passes, so
 * only the leak audit stands between the shard and the merge. */
static void reseal(const char *root, const char *kind)
{
    char *cmd = vat_xasprintf(
        "/usr/bin/python3 -c 'import hashlib, json, sys\n"
        "root, rel = sys.argv[1], sys.argv[2]\n"
        "m = json.load(open(root + \"/out/manifest.json\"))\n"
        "assert rel in m[\"files\"], rel\n"
        "m[\"files\"][rel] = hashlib.sha256(open(root + \"/\" + rel, \"rb\").read()).hexdigest()\n"
        "open(root + \"/out/manifest.json\", \"w\").write(json.dumps(m, indent=1, sort_keys=True) + \"\\n\")\n"
        "' '%s' '%s/%s.bin'",
        root, VAT_PRINTS_DIR, kind);
    assert_int_equal(run(cmd), 0);
    free(cmd);
}

/* vat merge runs the same audit before joining, and refuses. */
static void test_merge_refuses_planted(void **state)
{
    struct shards *s = *state;
    char *copy[2];
    for (int k = 0; k < 2; k++) {
        copy[k] = vat_xasprintf("%s/leaky-%d", s->dir, k + 1);
        char *cmd = vat_xasprintf("rm -rf '%s' && cp -r '%s' '%s'", copy[k], s->root[k], copy[k]);
        assert_int_equal(run(cmd), 0);
        free(cmd);
    }
    struct pfile a, b;
    pfile_read(&a, copy[0], "strings");
    pfile_read(&b, copy[1], "strings");
    unsigned char *tr = pick(&a, VAT_SPLIT_TRAIN, true);
    b.rec = vat_xrealloc(b.rec, (b.n + 1) * b.rb);
    unsigned char *te = pick(&b, VAT_SPLIT_TEST, false);
    unsigned char *x = b.rec + b.n++ * b.rb;
    memcpy(x, tr, 16);
    memcpy(x + 16, te + 16, 8);
    x[23] = 1;
    pfile_write(&b, copy[1], "strings", true);
    char *to = vat_xasprintf("%s/merged", s->dir), *err = vat_xasprintf("%s/merge.err", s->dir);
    char *cmd = vat_xasprintf("'%s' merge --config '%s' --to '%s' '%s' '%s' >/dev/null 2>'%s'",
                              bin(), s->cfg, to, copy[0], copy[1], err);
    /* under the stale manifest the edit is caught as one */
    assert_int_equal(run(cmd), 2);
    char *msg = vat_test_read_file(err, NULL);
    assert_non_null(strstr(msg, "changed file"));
    free(msg);
    reseal(copy[1], "strings");
    assert_int_equal(run(cmd), 2);
    msg = vat_test_read_file(err, NULL);
    assert_non_null(strstr(msg, "leak across the split (heldout_string"));
    free(msg);
    free(cmd);
    cmd = vat_xasprintf("test ! -e '%s/out'", to);
    assert_int_equal(run(cmd), 0); /* nothing written */
    free(cmd);
    cmd = vat_xasprintf("'%s' audit --shards '%s' '%s' >/dev/null 2>&1", bin(), copy[0], copy[1]);
    assert_int_equal(run(cmd), 1);
    free(cmd);
    free(to);
    free(err);
    pfile_free(&a);
    pfile_free(&b);
    for (int k = 0; k < 2; k++)
        free(copy[k]);
}

static void expect_refused(char *const *roots, const char *want)
{
    struct vat_audit_report r;
    struct vat_err e = {{0}};
    assert_int_equal(audit_roots(roots, &r, &e), -1);
    if (!strstr(e.msg, want))
        fail_msg("'%s' lacks '%s'", e.msg, want);
    vat_audit_release(&r);
}

static void test_malformed_prints(void **state)
{
    struct shards *s = *state;
    char *roots[2] = {NULL, NULL};
    struct pfile b;

    scratch_copy(s, roots); /* cut short: a record missing */
    pfile_read(&b, roots[1], "digests");
    json_t *h = json_loads(b.head, 0, NULL);
    json_object_set_new(h, "records", json_integer((json_int_t)b.n + 1));
    free(b.head);
    char *hs = json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER);
    b.head = vat_xasprintf("%s\n", hs);
    free(hs);
    json_decref(h);
    char *path = pfile_path(roots[1], "digests");
    FILE *f = fopen(path, "wb");
    fputs(b.head, f);
    fwrite(b.rec, b.rb, b.n, f);
    fclose(f);
    free(path);
    expect_refused(roots, "bytes of records");
    pfile_free(&b);

    for (int k = 0; k < 2; k++)
        free(roots[k]);
    scratch_copy(s, roots); /* out of order */
    pfile_read(&b, roots[1], "prompts");
    assert_true(b.n >= 2);
    unsigned char t[VAT_PRINT_KEY_BYTES];
    memcpy(t, b.rec, b.rb);
    memcpy(b.rec, b.rec + (b.n - 1) * b.rb, b.rb);
    memcpy(b.rec + (b.n - 1) * b.rb, t, b.rb);
    pfile_write(&b, roots[1], "prompts", false);
    expect_refused(roots, "is not sorted");
    pfile_free(&b);

    for (int k = 0; k < 2; k++)
        free(roots[k]);
    scratch_copy(s, roots); /* another build's templates */
    pfile_read(&b, roots[1], "rows");
    char *other = vat_xstrdup(b.head);
    char *at = strstr(other, "grouped_count");
    assert_non_null(at);
    memcpy(at, "grouped_CounT", 13);
    free(b.head);
    b.head = other;
    pfile_write(&b, roots[1], "rows", false);
    expect_refused(roots, "names other templates");
    pfile_free(&b);

    for (int k = 0; k < 2; k++)
        free(roots[k]);
    scratch_copy(s, roots); /* missing */
    path = pfile_path(roots[0], "strings");
    assert_int_equal(remove(path), 0);
    free(path);
    expect_refused(roots, "cannot open 'out/prints/strings.bin'");
    for (int k = 0; k < 2; k++)
        free(roots[k]);
}

int main(void)
{
    const struct CMUnitTest drawn[] = {
        cmocka_unit_test(test_build_check_clean),
        cmocka_unit_test(test_build_check_finds_a_copied_task),
        cmocka_unit_test(test_sides_never_share_material),
        cmocka_unit_test(test_common_row_counted),
    };
    const struct CMUnitTest shards[] = {
        cmocka_unit_test(test_shards_clean),
        cmocka_unit_test(test_planted_heldout_string),
        cmocka_unit_test(test_planted_prompt),
        cmocka_unit_test(test_planted_fixture_rows),
        cmocka_unit_test(test_merge_refuses_planted),
        cmocka_unit_test(test_malformed_prints),
    };
    int rc = cmocka_run_group_tests(drawn, NULL, NULL);
    return rc | cmocka_run_group_tests(shards, setup, teardown);
}

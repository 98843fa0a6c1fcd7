/* test_top_n.c — the top_n template: 60 tasks admit (at most 5 redraws in
 * all) with gold 1, trap 0 (gate passed) and the malformed answer gated
 * out; the trap is armed in every task (its list names a customer gold
 * leaves out) and gold agrees with a ranking recomputed here; ties are
 * planted inside the top N and at the N-th place; same seed -> same bytes;
 * the prompt names the file, states N and the tie rule; hand-made fixtures
 * for ties at the boundary, three-way ties and broken files; confirm
 * catches a wrong gold and a writer bug; checker cases around the gold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "analytics.h"
#include "csvio.h"
#include "jsonout.h"
#include "template.h"
#include "testutil.h"
#include "values.h"

#define SEED 90417u
#define NTASKS 60
#define MAX_ATTEMPTS 40

extern const struct vat_template vat_tmpl_top_n;
static const struct vat_template *const T = &vat_tmpl_top_n;

struct env {
    char *dir;
    json_t *cfg;
};

static int setup(void **state)
{
    struct env *v = calloc(1, sizeof *v);
    v->dir = vat_test_tmpdir("topn");
    v->cfg = vat_template_default_params(T);
    *state = v;
    return 0;
}

static int teardown(void **state)
{
    struct env *v = *state;
    vat_test_rmtree(v->dir);
    free(v->dir);
    json_decref(v->cfg);
    free(v);
    return 0;
}

/* Draws task index into root, redrawing until admitted; returns the number
 * of redraws and fails the test if no attempt is admitted. */
static unsigned draw(struct vat_task *t, const struct env *v, const char *root, uint32_t index,
                     size_t inline_max, struct vat_replay *r)
{
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = inline_max};
    struct vat_err e = {{0}};
    vat_task_init(t, T, index, root);
    for (uint32_t a = 0; a < MAX_ATTEMPTS; a++) {
        if (vat_task_draw(t, a, &o, r, &e) == 0)
            return a;
        print_message("  %s attempt %u refused: %s\n", t->id, a, e.msg);
    }
    fail_msg("%s not admitted in %d attempts: %s", t->id, MAX_ATTEMPTS, e.msg);
    return MAX_ATTEMPTS;
}

static char *fixture_text(const struct vat_task *t, size_t *len)
{
    char *path = vat_path_join(t->root, t->fixture[0].path);
    char *s = vat_test_read_file(path, len);
    free(path);
    assert_non_null(s);
    return s;
}

static struct vat_verdict check(const struct vat_task *t, const char *answer)
{
    return T->check(t, answer, strlen(answer));
}

static long task_n(const struct vat_task *t)
{
    return (long)json_integer_value(json_object_get(t->params, "n"));
}

/* Per-customer totals and largest sales from the file, computed here
 * without the template's code. */
struct cust {
    char name[64];
    int64_t total, top;
};

static size_t read_customers(const struct vat_task *t, struct cust *out, size_t cap)
{
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t->root, t->fixture[0].path, &e), 0);
    assert_int_equal((long)c.nrows - 1, t->fixture[0].rows);
    size_t n = 0;
    for (size_t i = 1; i < c.nrows; i++) {
        const char *who = vat_csv_get(&c, i, 2);
        int64_t cents;
        assert_int_equal(vat_parse_cents(vat_csv_get(&c, i, 5), &cents), 0);
        size_t k = 0;
        while (k < n && strcmp(out[k].name, who) != 0)
            k++;
        if (k == n) {
            assert_true(n < cap);
            snprintf(out[n].name, sizeof out[n].name, "%s", who);
            out[n].total = out[n].top = 0;
            n++;
        }
        out[k].total += cents;
        if (cents > out[k].top)
            out[k].top = cents;
    }
    vat_csv_release(&c);
    return n;
}

static const struct cust *find_cust(const struct cust *cs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cs[i].name, name) == 0)
            return &cs[i];
    return NULL;
}

/* ---- admission over many tasks -------------------------------------------- */

static void test_sixty_tasks_admit(void **state)
{
    struct env *v = *state;
    unsigned redraws = 0;
    int boundary_ties = 0, inner_ties = 0, truncated = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        redraws += draw(&t, v, v->dir, i, 6000, &r);

        assert_true(r.v[VAT_ROLE_GOLD].gate_passed);
        assert_true(r.v[VAT_ROLE_GOLD].score == 1.0);
        assert_string_equal(r.v[VAT_ROLE_GOLD].code, "ok");
        assert_true(r.v[VAT_ROLE_TRAP].gate_passed);
        assert_true(r.v[VAT_ROLE_TRAP].score == 0.0);
        assert_false(r.v[VAT_ROLE_MALFORMED].gate_passed);
        assert_non_null(strstr(t.prompt, t.fixture[0].path));
        assert_true(t.difficulty >= 1 && t.difficulty <= 5);
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        truncated += strstr(t.prompt, "too long to show whole") != NULL;

        long n = task_n(&t);
        assert_true(n >= 3 && n <= 5);
        json_t *gold = json_loads(t.gold, 0, NULL), *trap = json_loads(t.trap, 0, NULL);
        assert_non_null(gold);
        assert_non_null(trap);
        assert_int_equal(json_array_size(gold), (size_t)n);
        assert_int_equal(json_array_size(trap), (size_t)n);

        /* Gold is the ranking by total, ties by name, recomputed here. */
        struct cust cs[64];
        size_t nc = read_customers(&t, cs, 64);
        assert_true(nc >= (size_t)n + 2);
        const struct cust *last = NULL;
        for (size_t k = 0; k < (size_t)n; k++) {
            const struct cust *c = find_cust(cs, nc, json_string_value(json_array_get(gold, k)));
            assert_non_null(c);
            if (last)
                assert_true(last->total > c->total ||
                            (last->total == c->total && strcmp(last->name, c->name) < 0));
            last = c;
        }
        int64_t nth = last->total, beyond = 0;
        for (size_t k = 0; k < nc; k++) {
            bool in = false;
            for (size_t g = 0; g < (size_t)n; g++)
                in = in || strcmp(json_string_value(json_array_get(gold, g)), cs[k].name) == 0;
            if (in)
                continue;
            /* Everyone left out ranks below the N-th customer. */
            assert_true(cs[k].total < nth ||
                        (cs[k].total == nth && strcmp(cs[k].name, last->name) > 0));
            if (cs[k].total == nth)
                beyond++;
        }
        boundary_ties += beyond > 0;
        for (size_t k = 1; k < (size_t)n; k++) {
            const struct cust *a = find_cust(cs, nc, json_string_value(json_array_get(gold, k - 1)));
            const struct cust *b = find_cust(cs, nc, json_string_value(json_array_get(gold, k)));
            if (a->total == b->total) {
                inner_ties++;
                break;
            }
        }

        /* Armed: the trap's first name has the largest single sale and is
         * not in gold at all. */
        assert_false(json_equal(gold, trap));
        const char *decoy = json_string_value(json_array_get(trap, 0));
        for (size_t g = 0; g < (size_t)n; g++)
            assert_string_not_equal(json_string_value(json_array_get(gold, g)), decoy);
        const struct cust *d = find_cust(cs, nc, decoy);
        for (size_t k = 0; k < nc; k++)
            if (&cs[k] != d)
                assert_true(cs[k].top < d->top);
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
    print_message("  %u redraws; %d/%d tasks tie at the N-th place, %d inside the top N, "
                  "%d truncate the inline data\n",
                  redraws, boundary_ties, NTASKS, inner_ties, truncated);
    assert_true(redraws <= 5);
    assert_true(boundary_ties >= 6);
    assert_true(inner_ties >= 3);
}

static void test_same_seed_same_bytes(void **state)
{
    struct env *v = *state;
    char *other = vat_test_tmpdir("topn-b");
    for (uint32_t i = 0; i < 5; i++) {
        struct vat_task a, b, c;
        struct vat_replay r;
        draw(&a, v, v->dir, i, 6000, &r);
        draw(&b, v, other, i, 6000, &r);
        size_t la, lb;
        char *fa = fixture_text(&a, &la), *fb = fixture_text(&b, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(fa, fb, la);
        assert_string_equal(a.fixture[0].sha256, b.fixture[0].sha256);
        assert_string_equal(a.prompt, b.prompt);
        assert_string_equal(a.gold, b.gold);
        assert_string_equal(a.trap, b.trap);
        char *pa = vat_json_dumps(a.params), *pb = vat_json_dumps(b.params);
        char *sa = vat_json_dumps(a.spec), *sb = vat_json_dumps(b.spec);
        assert_string_equal(pa, pb);
        assert_string_equal(sa, sb);
        free(pa), free(pb), free(sa), free(sb);
        draw(&c, v, other, i + 100, 6000, &r);
        assert_string_not_equal(a.fixture[0].sha256, c.fixture[0].sha256);
        vat_task_clear(&c);
        free(fa), free(fb);
        vat_task_clear(&a);
        vat_task_clear(&b);
    }
    vat_test_rmtree(other);
    free(other);
}

/* ---- the prompt ----------------------------------------------------------- */

static void test_prompt_states_the_question(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 3, 1 << 20, &r);
    char expect[160];
    snprintf(expect, sizeof expect, "which %ld customers have the largest total `amount`",
             task_n(&t));
    assert_non_null(strstr(t.prompt, expect));
    snprintf(expect, sizeof expect, "an array of exactly %ld strings", task_n(&t));
    assert_non_null(strstr(t.prompt, expect));
    assert_non_null(strstr(t.prompt, "`fixtures/top_n/top_n-00003.csv`"));
    assert_non_null(strstr(t.prompt, "ascending byte order"));
    assert_non_null(strstr(t.prompt, "The order matters"));
    assert_non_null(strstr(t.prompt, "Its full contents"));
    assert_non_null(strstr(t.prompt, "[\"<customer ranked 1>\""));
    size_t len;
    char *file = fixture_text(&t, &len);
    assert_non_null(strstr(t.prompt, file));
    /* The tie illustration uses names no fixture can hold. */
    assert_null(strstr(file, "Jo Ann"));
    assert_null(strstr(file, "Joan Day"));
    free(file);
    vat_task_clear(&t);

    draw(&t, v, v->dir, 4, 400, &r);
    assert_non_null(strstr(t.prompt, "too long to show whole"));
    assert_non_null(strstr(t.prompt, t.fixture[0].path));
    vat_task_clear(&t);
}

/* ---- hand-made fixtures ----------------------------------------------------- */

/* Draws task index, replaces its fixture with text and N with n, and
 * recomputes gold, confirm and trap from the file.  The generator's
 * planted totals no longer describe the file, so they are dropped. */
static int craft(struct vat_task *t, const struct env *v, uint32_t index, long n,
                 const char *text, struct vat_err *e)
{
    struct vat_replay r;
    draw(t, v, v->dir, index, 6000, &r);
    char *path = vat_path_join(t->root, t->fixture[0].path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(path);
    t->priv_free(t->priv);
    t->priv = NULL;
    free(t->gold);
    free(t->trap);
    t->gold = t->trap = NULL;
    json_object_del(t->spec, "expected");
    json_object_set_new(t->params, "n", json_integer(n));
    if (T->reference(t, e) != 0 || T->confirm(t, e) != 0 || T->trap_answer(t, e) != 0)
        return -1;
    return 0;
}

#define HDR "sale_id,sold_on,customer,product,channel,amount\n"

static void test_tie_at_the_nth_place(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    /* Ben Ode and Ada Moss both total 200.00: the name puts Ada in. */
    int rc = craft(&t, v, 10, 2,
                   HDR "S-000001,2023-01-02,Zoe Park,Desk Lamp,online,120.00\n"
                       "S-000002,2023-01-02,Ben Ode,Yoga Mat,store,150.00\n"
                       "S-000003,2023-01-03,Ada Moss,Yoga Mat,store,100.00\n"
                       "S-000004,2023-01-04,Zoe Park,Chef Knife,phone,180.00\n"
                       "S-000005,2023-01-05,Ada Moss,Desk Lamp,online,100.00\n"
                       "S-000006,2023-01-05,Ben Ode,Desk Lamp,online,50.00\n"
                       "S-000007,2023-01-06,Cy Nash,Blender Pro,online,190.00\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "[\"Zoe Park\",\"Ada Moss\"]");
    /* Largest single sale: Cy Nash 190, Zoe Park 180. */
    assert_string_equal(t.trap, "[\"Cy Nash\",\"Zoe Park\"]");
    assert_true(check(&t, t.gold).score == 1.0);
    struct vat_verdict b = check(&t, "[\"Zoe Park\",\"Ben Ode\"]");
    assert_true(b.gate_passed && b.score == 0.0);
    assert_string_equal(b.code, "wrong_items");
    vat_task_clear(&t);
}

static void test_ties_inside_and_three_way(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    /* Four customers at 90.00 compete for places 2 and 3 of N = 3: byte
     * order puts "Lee Ann" before "Leeann Cole" (space before letters),
     * then "Mo Diaz"; "lee bo" is lower case, so after all of them. */
    int rc = craft(&t, v, 11, 3,
                   HDR "S-000001,2023-02-01,Mo Diaz,Rain Jacket,online,90.00\n"
                       "S-000002,2023-02-01,Leeann Cole,Yoga Mat,store,45.00\n"
                       "S-000003,2023-02-02,Lee Ann,Yoga Mat,store,30.00\n"
                       "S-000004,2023-02-02,Leeann Cole,Yoga Mat,store,45.00\n"
                       "S-000005,2023-02-03,Lee Ann,Desk Lamp,online,60.00\n"
                       "S-000006,2023-02-03,Kai Berg,Chef Knife,phone,99.99\n"
                       "S-000007,2023-02-04,lee bo,Chef Knife,phone,90.00\n"
                       "S-000008,2023-02-04,Kai Berg,Mug,phone,0.01\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "[\"Kai Berg\",\"Lee Ann\",\"Leeann Cole\"]");
    assert_string_equal(t.trap, "[\"Kai Berg\",\"Mo Diaz\",\"lee bo\"]");
    struct vat_verdict w = check(&t, "[\"Kai Berg\",\"Leeann Cole\",\"Lee Ann\"]");
    assert_true(w.gate_passed && w.score == 0.0);
    assert_string_equal(w.code, "wrong_order");
    vat_task_clear(&t);
}

static void test_total_beats_single_sale(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    /* Ten sales of 100.01 outrank one of 999.99 by eleven cents. */
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, HDR "S-000001,2023-03-01,Big Spender,Standing Desk,online,999.99\n");
    for (int i = 0; i < 10; i++)
        vat_buf_printf(&b, "S-1%05d,2023-03-02,Regular Rita,Ceramic Mug,store,100.01\n", i);
    vat_buf_puts(&b, "S-200000,2023-03-03,Small Sam,Ceramic Mug,store,0.10\n");
    int rc = craft(&t, v, 12, 1, b.data, &e);
    vat_buf_release(&b);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "[\"Regular Rita\"]");
    assert_string_equal(t.trap, "[\"Big Spender\"]");
    vat_task_clear(&t);
}

static void test_broken_fixtures_are_refused(void **state)
{
    struct env *v = *state;
    static const char *const bad[] = {
        /* renamed column */
        "sale_id,sold_on,client,product,channel,amount\n"
        "S-000001,2023-01-02,Zoe Park,Desk Lamp,online,120.00\n"
        "S-000002,2023-01-02,Ben Ode,Desk Lamp,online,12.00\n"
        "S-000003,2023-01-02,Cy Nash,Desk Lamp,online,1.00\n",
        /* an amount with three decimals */
        HDR "S-000001,2023-01-02,Zoe Park,Desk Lamp,online,120.005\n"
            "S-000002,2023-01-02,Ben Ode,Desk Lamp,online,12.00\n"
            "S-000003,2023-01-02,Cy Nash,Desk Lamp,online,1.00\n",
        /* a blank customer */
        HDR "S-000001,2023-01-02,,Desk Lamp,online,120.00\n"
            "S-000002,2023-01-02,Ben Ode,Desk Lamp,online,12.00\n"
            "S-000003,2023-01-02,Cy Nash,Desk Lamp,online,1.00\n",
        /* only N customers: "the top N" would be everyone */
        HDR "S-000001,2023-01-02,Zoe Park,Desk Lamp,online,120.00\n"
            "S-000002,2023-01-02,Ben Ode,Desk Lamp,online,12.00\n",
        /* a short record */
        HDR "S-000001,2023-01-02,Zoe Park,Desk Lamp,online\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vat_task t;
        struct vat_err e = {{0}};
        assert_int_equal(craft(&t, v, 13, 2, bad[i], &e), -1);
        assert_non_null(strstr(e.msg, "top_n-00013"));
        vat_task_clear(&t);
    }
    /* N outside what the params allow */
    struct vat_task t;
    struct vat_err e = {{0}};
    assert_int_equal(craft(&t, v, 13, 0, HDR "S-1,2023-01-02,Zoe Park,Desk Lamp,online,1.00\n", &e),
                     -1);
    assert_non_null(strstr(e.msg, "'n'"));
    vat_task_clear(&t);
}

/* ---- confirm -------------------------------------------------------------- */

static void test_confirm_catches_a_wrong_gold(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 20, 6000, &r);
    struct vat_err e = {{0}};
    assert_int_equal(T->confirm(&t, &e), 0);
    json_t *gold = json_loads(t.gold, 0, NULL);

    /* The first two swapped. */
    json_t *swapped = json_deep_copy(gold);
    json_t *a0 = json_incref(json_array_get(swapped, 0));
    json_array_set(swapped, 0, json_array_get(swapped, 1));
    json_array_set_new(swapped, 1, a0);
    free(t.gold);
    t.gold = vat_json_dumps(swapped);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "sql over the loaded csv disagrees"));
    json_decref(swapped);

    /* One name short. */
    json_t *shorter = json_deep_copy(gold);
    json_array_remove(shorter, json_array_size(shorter) - 1);
    free(t.gold);
    t.gold = vat_json_dumps(shorter);
    assert_int_equal(T->confirm(&t, &e), -1);
    json_decref(shorter);
    json_decref(gold);
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 21, 6000, &r);
    /* Credit a customer outside gold with a huge sale, as a writer that
     * garbled an amount would: the file's own ranking changes, the
     * planted totals do not. */
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    json_t *gold = json_loads(t.gold, 0, NULL);
    size_t k = 1;
    for (;; k++) {
        bool in = false;
        for (size_t g = 0; g < json_array_size(gold); g++)
            in = in ||
                 strcmp(json_string_value(json_array_get(gold, g)), vat_csv_get(&c, k, 2)) == 0;
        if (!in)
            break;
    }
    free(c.row[k].cell[5]);
    c.row[k].cell[5] = vat_xstrdup("999999.99");
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    vat_csv_release(&c);
    json_decref(gold);
    free(t.gold);
    t.gold = NULL;
    assert_int_equal(T->reference(&t, &e), 0);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "planted"));
    vat_task_clear(&t);
}

/* ---- checker cases ---------------------------------------------------------- */

static void test_checker_cases(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 30, 3,
                   HDR "S-000001,2023-01-02,Zoe Park,Desk Lamp,online,300.00\n"
                       "S-000002,2023-01-02,Ben Ode,Yoga Mat,store,200.00\n"
                       "S-000003,2023-01-03,Ada Moss,Yoga Mat,store,100.00\n"
                       "S-000004,2023-01-04,Cy Nash,Chef Knife,phone,50.00\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "[\"Zoe Park\",\"Ben Ode\",\"Ada Moss\"]");

    static const char *const pass[] = {
        "[\"Zoe Park\",\"Ben Ode\",\"Ada Moss\"]",
        "  [ \"Zoe Park\" , \"Ben Ode\",\n \"Ada Moss\" ]\n",
        "[\"Zoe\\u0020Park\",\"Ben Ode\",\"Ada Moss\"]",
    };
    for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++) {
        struct vat_verdict vd = check(&t, pass[i]);
        if (!(vd.gate_passed && vd.score == 1.0))
            fail_msg("'%s' should pass: %s %s", pass[i], vd.code, vd.reason);
    }

    static const struct {
        const char *answer;
        const char *code;
    } scored0[] = {
        {"[\"Ben Ode\",\"Zoe Park\",\"Ada Moss\"]", "wrong_order"},
        {"[\"Ada Moss\",\"Ben Ode\",\"Zoe Park\"]", "wrong_order"},
        {"[\"Zoe Park\",\"Ben Ode\",\"Cy Nash\"]", "wrong_items"},
        {"[\"Zoe Park\",\"Ben Ode\"]", "wrong_length"},
        {"[\"Zoe Park\",\"Ben Ode\",\"Ada Moss\",\"Cy Nash\"]", "wrong_length"},
        {"[\"Zoe Park\",\"Ben Ode\",\"Ben Ode\"]", "duplicate"},
        {"[\"Zoe Park\",\"Zoe Park\",\"Ben Ode\",\"Ada Moss\"]", "duplicate"},
        {"[\"zoe park\",\"Ben Ode\",\"Ada Moss\"]", "wrong_items"},
        {"[\"Zoe Park \",\"Ben Ode\",\"Ada Moss\"]", "wrong_items"},
        {"[]", "wrong_length"},
    };
    for (size_t i = 0; i < sizeof scored0 / sizeof scored0[0]; i++) {
        struct vat_verdict vd = check(&t, scored0[i].answer);
        if (!vd.gate_passed || vd.score != 0.0 || strcmp(vd.code, scored0[i].code) != 0)
            fail_msg("'%s' should score 0 with %s, got gate %d score %g %s (%s)",
                     scored0[i].answer, scored0[i].code, vd.gate_passed, vd.score, vd.code,
                     vd.reason);
    }

    static const char *const gated[] = {
        "The answer is: [\"Zoe Park\",\"Ben Ode\",\"Ada Moss\"]",
        "\"Zoe Park, Ben Ode, Ada Moss\"",
        "{\"1\":\"Zoe Park\",\"2\":\"Ben Ode\",\"3\":\"Ada Moss\"}",
        "[\"Zoe Park\",\"Ben Ode\",3]",
        "[[\"Zoe Park\"],\"Ben Ode\",\"Ada Moss\"]",
        "[\"Zoe Park\",\"Ben Ode\",\"Ada Moss\"",
        "Zoe Park, Ben Ode, Ada Moss",
        "",
    };
    for (size_t i = 0; i < sizeof gated / sizeof gated[0]; i++) {
        struct vat_verdict vd = check(&t, gated[i]);
        if (vd.gate_passed || vd.score != 0.0)
            fail_msg("'%s' should fail the gate, got %s (%s)", gated[i], vd.code, vd.reason);
    }
    vat_task_clear(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixty_tasks_admit),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_prompt_states_the_question),
        cmocka_unit_test(test_tie_at_the_nth_place),
        cmocka_unit_test(test_ties_inside_and_three_way),
        cmocka_unit_test(test_total_beats_single_sale),
        cmocka_unit_test(test_broken_fixtures_are_refused),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
        cmocka_unit_test(test_confirm_catches_a_writer_bug),
        cmocka_unit_test(test_checker_cases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

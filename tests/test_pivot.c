/* test_pivot.c — the pivot template: 60 tasks admit (at most 5 redraws in
 * all) with gold 1, trap 0 (gate passed, a missing zero cell) and the
 * malformed answer gated out; the trap is armed in every task; gold is a
 * full month x carrier grid of the file; same seed -> same bytes; the
 * prompt inlines the file whole or truncated; hand-made fixtures for
 * empty cells and a calendar month absent from the file; broken files are
 * refused; confirm catches a wrong gold and a writer bug; checker cases
 * around the gold. */
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

#define SEED 51107u
#define NTASKS 60
#define MAX_REDRAWS 5

extern const struct vat_template vat_tmpl_pivot;
static const struct vat_template *const T = &vat_tmpl_pivot;

struct env {
    char *dir;
    json_t *cfg;
};

static int setup(void **state)
{
    struct env *v = calloc(1, sizeof *v);
    v->dir = vat_test_tmpdir("pivot");
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

/* Draws task index into root, redrawing as the pipeline would; adds the
 * redraws used to *redraws and fails when none of the attempts admits. */
static void draw_counting(struct vat_task *t, const struct env *v, const char *root,
                          uint32_t index, size_t inline_max, struct vat_replay *r, int *redraws)
{
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = inline_max};
    struct vat_err e = {{0}};
    vat_task_init(t, T, index, root);
    for (uint32_t a = 0; a <= MAX_REDRAWS; a++) {
        if (vat_task_draw(t, a, &o, r, &e) == 0)
            return;
        if (redraws)
            ++*redraws;
    }
    fail_msg("%s not admitted: %s", t->id, e.msg);
}

/* Draws attempt 0 of task index; asserts it is admitted. */
static void draw(struct vat_task *t, const struct env *v, const char *root, uint32_t index,
                 size_t inline_max, struct vat_replay *r)
{
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = inline_max};
    struct vat_err e = {{0}};
    vat_task_init(t, T, index, root);
    if (vat_task_draw(t, 0, &o, r, &e) != 0)
        fail_msg("%s not admitted: %s", t->id, e.msg);
}

static char *fixture_text(const struct vat_task *t, size_t *len)
{
    char *path = vat_path_join(t->root, t->fixture[0].path);
    char *s = vat_test_read_file(path, len);
    free(path);
    assert_non_null(s);
    return s;
}

/* Returns the text between "```csv\n" and the closing "```" of the prompt. */
static char *inline_block(const char *prompt)
{
    const char *a = strstr(prompt, "```csv\n");
    assert_non_null(a);
    a += 7;
    const char *z = strstr(a, "```");
    assert_non_null(z);
    return vat_xstrndup(a, (size_t)(z - a));
}

static size_t count_char(const char *s, char c)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

/* Asserts two JSON texts hold the same value (numbers exactly equal). */
static void assert_same_json(const char *got, const char *want)
{
    json_t *g = json_loads(got, JSON_DECODE_ANY, NULL), *w = json_loads(want, JSON_DECODE_ANY, NULL);
    assert_non_null(g);
    assert_non_null(w);
    struct vat_err e = {{0}};
    if (vat_an_agree("json", w, g, 0, 0, &e) != 0)
        fail_msg("'%s' is not '%s': %s", got, want, e.msg);
    json_decref(g);
    json_decref(w);
}

static struct vat_verdict check(const struct vat_task *t, const char *answer)
{
    return T->check(t, answer, strlen(answer));
}

/* "YYYY-MM" -> months since year 0. */
static int month_index(const char *s)
{
    return atoi(s) * 12 + atoi(s + 5) - 1;
}

/* ---- admission over many tasks -------------------------------------------- */

static void test_sixty_tasks_admit(void **state)
{
    struct env *v = *state;
    int redraws = 0, with_gap = 0, truncated = 0, many_zeros = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        draw_counting(&t, v, v->dir, i, 6000, &r, &redraws);

        assert_true(r.v[VAT_ROLE_GOLD].gate_passed);
        assert_true(r.v[VAT_ROLE_GOLD].score == 1.0);
        assert_string_equal(r.v[VAT_ROLE_GOLD].code, "ok");
        assert_true(r.v[VAT_ROLE_TRAP].gate_passed);
        assert_true(r.v[VAT_ROLE_TRAP].score == 0.0);
        assert_string_equal(r.v[VAT_ROLE_TRAP].code, "missing_key");
        assert_false(r.v[VAT_ROLE_MALFORMED].gate_passed);

        assert_non_null(strstr(t.prompt, t.fixture[0].path));
        assert_true(t.difficulty >= 1 && t.difficulty <= 5);
        assert_string_equal(t.fixture[0].format, "csv");
        assert_string_equal(t.fixture[0].role, "main");
        assert_int_equal(json_array_size(t.fixture[0].columns), 7);
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 1)), "month");
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 2)), "carrier");
        assert_string_equal(json_string_value(json_object_get(t.spec, "shape")),
                            "object_of_objects");
        assert_true(json_is_true(json_object_get(t.spec, "integer")));

        /* Gold is the full grid of the file's months and carriers, its
         * counts add up to the rows, and some cell is 0. */
        struct vat_csv c = VAT_CSV_INIT;
        struct vat_err e = {{0}};
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
        assert_int_equal((long)c.nrows - 1, t.fixture[0].rows);
        struct vat_an_tally months = VAT_AN_TALLY_INIT, carriers = VAT_AN_TALLY_INIT;
        for (size_t k = 1; k < c.nrows; k++) {
            vat_an_tally_add(&months, vat_csv_get(&c, k, 1), 0);
            vat_an_tally_add(&carriers, vat_csv_get(&c, k, 2), 0);
        }
        json_t *gold = json_loads(t.gold, 0, NULL);
        assert_non_null(gold);
        assert_int_equal(json_object_size(gold), months.n);
        long total = 0;
        int zeros = 0;
        const char *mk;
        json_t *row;
        json_object_foreach(gold, mk, row) {
            assert_non_null(vat_an_tally_find(&months, mk));
            assert_int_equal(json_object_size(row), carriers.n);
            const char *ck;
            json_t *n;
            json_object_foreach(row, ck, n) {
                assert_non_null(vat_an_tally_find(&carriers, ck));
                assert_true(json_is_integer(n));
                total += (long)json_integer_value(n);
                zeros += json_integer_value(n) == 0;
            }
        }
        assert_int_equal(total, t.fixture[0].rows);
        assert_true(zeros >= 1);
        many_zeros += zeros >= 3;
        vat_an_tally_sort(&months);
        if (month_index(months.e[months.n - 1].key) - month_index(months.e[0].key) + 1 >
            (int)months.n)
            with_gap++;
        vat_an_tally_release(&months);
        vat_an_tally_release(&carriers);
        json_decref(gold);
        vat_csv_release(&c);
        truncated += strstr(t.prompt, "too long to show whole") != NULL;
        vat_task_clear(&t);
    }
    assert_true(redraws <= MAX_REDRAWS);
    /* The generator exercises the stated rules, not just the easy case. */
    assert_true(with_gap >= 3);
    assert_true(many_zeros >= 3);
    print_message("  %d redraws; %d/%d tasks skip a calendar month, %d have 3+ zero cells, "
                  "%d a truncated inline section\n",
                  redraws, with_gap, NTASKS, many_zeros, truncated);
}

/* The trap differs from gold in every task, and exactly as the named
 * mistake says: the same cells minus some zero cells. */
static void test_trap_armed_in_every_task(void **state)
{
    struct env *v = *state;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        draw_counting(&t, v, v->dir, i, 6000, &r, NULL);
        json_t *gold = json_loads(t.gold, 0, NULL), *trap = json_loads(t.trap, 0, NULL);
        assert_non_null(gold);
        assert_non_null(trap);
        struct vat_err e = {{0}};
        assert_int_equal(vat_an_agree("trap", gold, trap, 1e-9, 1e-9, &e), -1);
        int dropped = 0;
        const char *mk;
        json_t *grow;
        json_object_foreach(gold, mk, grow) {
            json_t *trow = json_object_get(trap, mk);
            assert_non_null(trow);
            const char *ck;
            json_t *n;
            json_object_foreach(grow, ck, n) {
                json_t *m = json_object_get(trow, ck);
                if (json_integer_value(n) == 0) {
                    assert_null(m);
                    dropped++;
                } else {
                    assert_non_null(m);
                    assert_int_equal(json_integer_value(m), json_integer_value(n));
                }
            }
        }
        assert_true(dropped >= 1);
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
}

static void test_same_seed_same_bytes(void **state)
{
    struct env *v = *state;
    char *other = vat_test_tmpdir("pivot-b");
    for (uint32_t i = 0; i < 5; i++) {
        struct vat_task a, b;
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

        struct vat_task n;
        draw(&n, v, other, i + 100, 6000, &r);
        assert_string_not_equal(a.fixture[0].sha256, n.fixture[0].sha256);
        vat_task_clear(&n);

        free(fa), free(fb);
        vat_task_clear(&a);
        vat_task_clear(&b);
    }
    vat_test_rmtree(other);
    free(other);
}

/* ---- the prompt ----------------------------------------------------------- */

static void test_prompt_inlines_whole_file(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 3, 1 << 20, &r);
    size_t len;
    char *file = fixture_text(&t, &len);
    char *block = inline_block(t.prompt);
    assert_string_equal(block, file);
    assert_non_null(strstr(t.prompt, "`fixtures/pivot/pivot-00003.csv`"));
    assert_non_null(strstr(t.prompt, "Its full contents"));
    /* The rules a solver needs are stated. */
    assert_non_null(strstr(t.prompt, "with the count 0"));
    assert_non_null(strstr(t.prompt, "every carrier that appears"));
    assert_non_null(strstr(t.prompt, "does not appear in the file at all is not listed"));
    assert_non_null(strstr(t.prompt, "as a JSON integer"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 1e-9"));
    assert_non_null(strstr(t.prompt, "Answer with one JSON value"));
    /* The format example uses placeholders, never a real month or carrier. */
    json_t *gold = json_loads(t.gold, 0, NULL);
    const char *k;
    json_t *x;
    json_object_foreach(gold, k, x) {
        char quoted[80];
        snprintf(quoted, sizeof quoted, "{\"%s\"", k);
        assert_null(strstr(t.prompt, quoted));
        const char *ck;
        json_t *y;
        json_object_foreach(x, ck, y) {
            snprintf(quoted, sizeof quoted, "{\"%s\"", ck);
            assert_null(strstr(t.prompt, quoted));
        }
    }
    json_decref(gold);
    free(block);
    free(file);
    vat_task_clear(&t);
}

static void test_prompt_truncates_to_inline_max(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    const size_t max = 400;
    draw(&t, v, v->dir, 4, max, &r);
    size_t len;
    char *file = fixture_text(&t, &len);
    char *block = inline_block(t.prompt);
    size_t bl = strlen(block);
    assert_true(bl <= max);
    assert_true(bl < len);
    assert_memory_equal(block, file, bl);
    assert_true(strncmp(block, "shipment_id,month,carrier,origin,destination,parcels,weight_kg\n",
                        63) == 0);
    char expect[128];
    snprintf(expect, sizeof expect, "first %zu data rows only", count_char(block, '\n') - 1);
    assert_non_null(strstr(t.prompt, expect));
    snprintf(expect, sizeof expect, "answer must cover all %ld", t.fixture[0].rows);
    assert_non_null(strstr(t.prompt, expect));
    free(block);
    free(file);
    vat_task_clear(&t);
}

/* ---- hand-made fixtures ----------------------------------------------------- */

/* Draws task index, then replaces its fixture with text and recomputes
 * gold, confirm and trap from it (the planted grid is dropped: it no
 * longer describes the file). */
static int craft(struct vat_task *t, const struct env *v, uint32_t index, const char *text,
                 struct vat_err *e)
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
    if (T->reference(t, e) != 0 || T->confirm(t, e) != 0 || T->trap_answer(t, e) != 0)
        return -1;
    return 0;
}

#define HDR "shipment_id,month,carrier,origin,destination,parcels,weight_kg\n"

static void test_empty_cells_and_absent_month(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    /* 2024-02 has no shipment at all: not a row of the grid.  UPS ships
     * nothing in 2024-03 and Royal Mail only once. */
    int rc = craft(&t, v, 10,
                   HDR "SHP-0000001,2024-01,DHL,Accra,Lagos,1,2.5\n"
                       "SHP-0000002,2024-01,UPS,Accra,Paris,2,4.0\n"
                       "SHP-0000003,2024-01,DHL,Rome,Oslo,1,0.4\n"
                       "SHP-0000004,2024-03,DHL,Rome,Lima,3,9.9\n"
                       "SHP-0000005,2024-03,Royal Mail,Rome,Lima,1,1.0\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_same_json(t.gold, "{\"2024-01\":{\"DHL\":2,\"Royal Mail\":0,\"UPS\":1},"
                             "\"2024-03\":{\"DHL\":1,\"Royal Mail\":1,\"UPS\":0}}");
    assert_string_equal(t.gold, "{\"2024-01\":{\"DHL\":2,\"Royal Mail\":0,\"UPS\":1},"
                                "\"2024-03\":{\"DHL\":1,\"Royal Mail\":1,\"UPS\":0}}");
    assert_same_json(t.trap, "{\"2024-01\":{\"DHL\":2,\"UPS\":1},"
                             "\"2024-03\":{\"DHL\":1,\"Royal Mail\":1}}");
    struct vat_verdict g = check(&t, t.gold), tr = check(&t, t.trap);
    assert_true(g.gate_passed && g.score == 1.0);
    assert_true(tr.gate_passed && tr.score == 0.0);
    assert_string_equal(tr.code, "missing_key");
    /* Filling in the calendar month the file does not hold is not asked. */
    struct vat_verdict z = check(&t, "{\"2024-01\":{\"DHL\":2,\"Royal Mail\":0,\"UPS\":1},"
                                     "\"2024-02\":{\"DHL\":0,\"Royal Mail\":0,\"UPS\":0},"
                                     "\"2024-03\":{\"DHL\":1,\"Royal Mail\":1,\"UPS\":0}}");
    assert_true(z.gate_passed && z.score == 0.0);
    assert_string_equal(z.code, "extra_key");
    vat_task_clear(&t);
}

static void test_single_cell_per_month(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    /* Each month has one carrier only: the grid is mostly zeros and the
     * trap a diagonal. */
    int rc = craft(&t, v, 11,
                   HDR "SHP-0000001,2023-11,GLS,Accra,Lagos,1,2.5\n"
                       "SHP-0000002,2023-12,DPD,Accra,Paris,2,4.0\n"
                       "SHP-0000003,2023-12,DPD,Rome,Oslo,1,0.4\n"
                       "SHP-0000004,2024-01,TNT,Rome,Lima,3,9.9\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "{\"2023-11\":{\"DPD\":0,\"GLS\":1,\"TNT\":0},"
                                "\"2023-12\":{\"DPD\":2,\"GLS\":0,\"TNT\":0},"
                                "\"2024-01\":{\"DPD\":0,\"GLS\":0,\"TNT\":1}}");
    assert_string_equal(t.trap, "{\"2023-11\":{\"GLS\":1},\"2023-12\":{\"DPD\":2},"
                                "\"2024-01\":{\"TNT\":1}}");
    vat_task_clear(&t);
}

static void test_broken_fixtures_are_refused(void **state)
{
    struct env *v = *state;
    static const char *const bad[] = {
        /* renamed column */
        "shipment_id,period,carrier,origin,destination,parcels,weight_kg\n"
        "SHP-0000001,2024-01,DHL,Accra,Lagos,1,2.5\n",
        /* month 13 */
        HDR "SHP-0000001,2024-13,DHL,Accra,Lagos,1,2.5\n",
        /* a month written another way */
        HDR "SHP-0000001,Jan 2024,DHL,Accra,Lagos,1,2.5\n",
        /* a full date instead of a month */
        HDR "SHP-0000001,2024-01-05,DHL,Accra,Lagos,1,2.5\n",
        /* a blank carrier */
        HDR "SHP-0000001,2024-01,,Accra,Lagos,1,2.5\n",
        /* a short record */
        HDR "SHP-0000001,2024-01,DHL,Accra,Lagos,1\n",
        /* no shipment at all */
        HDR,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vat_task t;
        struct vat_err e = {{0}};
        assert_int_equal(craft(&t, v, 13, bad[i], &e), -1);
        assert_true(e.msg[0] != 0);
        assert_non_null(strstr(e.msg, "pivot-00013"));
        vat_task_clear(&t);
    }
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
    char *orig = vat_xstrdup(t.gold);

    /* One shipment more in one cell. */
    json_t *gold = json_loads(orig, 0, NULL);
    const char *mk = json_object_iter_key(json_object_iter(gold));
    json_t *row = json_object_get(gold, mk);
    const char *ck = json_object_iter_key(json_object_iter(row));
    json_t *n = json_object_get(row, ck);
    json_integer_set(n, json_integer_value(n) + 1);
    free(t.gold);
    t.gold = vat_json_dumps(gold);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "sql over the loaded csv disagrees"));
    json_decref(gold);

    /* A zero cell dropped: what the trap does. */
    free(t.gold);
    t.gold = vat_xstrdup(t.trap);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "unexpected"));
    free(orig);
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 21, 6000, &r);
    /* Rewrite the file with one shipment moved to another carrier of the
     * file, as a faulty writer would: reference and SQL both read the file
     * and agree, but the generator's planted grid does not. */
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    size_t k = 2;
    while (strcmp(vat_csv_get(&c, k, 2), vat_csv_get(&c, 1, 2)) == 0)
        k++;
    free(c.row[1].cell[2]);
    c.row[1].cell[2] = vat_xstrdup(vat_csv_get(&c, k, 2));
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    vat_csv_release(&c);
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
    int rc = craft(&t, v, 30,
                   HDR "SHP-0000001,2024-05,DHL,Accra,Lagos,1,2.5\n"
                       "SHP-0000002,2024-05,DHL,Accra,Paris,2,4.0\n"
                       "SHP-0000003,2024-05,Canada Post,Rome,Oslo,1,0.4\n"
                       "SHP-0000004,2024-06,DHL,Rome,Lima,3,9.9\n"
                       "SHP-0000005,2024-06,DHL,Rome,Lima,3,9.9\n"
                       "SHP-0000006,2024-06,DHL,Rome,Lima,3,9.9\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold,
                        "{\"2024-05\":{\"Canada Post\":1,\"DHL\":2},\"2024-06\":{\"Canada "
                        "Post\":0,\"DHL\":3}}");

    static const char *const pass[] = {
        "{\"2024-05\":{\"Canada Post\":1,\"DHL\":2},\"2024-06\":{\"Canada Post\":0,\"DHL\":3}}",
        "{\"2024-06\":{\"DHL\":3,\"Canada Post\":0},\"2024-05\":{\"DHL\":2,\"Canada Post\":1}}",
        "{\"2024-05\":{\"Canada Post\":1.0,\"DHL\":2.0},\"2024-06\":{\"Canada Post\":0.0,"
        "\"DHL\":3.0}}",
        "{\"2024-05\":{\"Canada Post\":\"1\",\"DHL\":\"2\"},\"2024-06\":{\"Canada Post\":\"0\","
        "\"DHL\":3}}",
        "{\"2024-05\":{\"Canada Post\":1,\"DHL\":2},\"2024-06\":{\"Canada Post\":-0,\"DHL\":3e0}}",
        "\n  {\"2024-05\": {\"Canada Post\": 1, \"DHL\": 2},\n   \"2024-06\": {\"Canada Post\": 0, "
        "\"DHL\": 3}}\n",
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
        /* the trap: the zero cell left out */
        {"{\"2024-05\":{\"Canada Post\":1,\"DHL\":2},\"2024-06\":{\"DHL\":3}}", "missing_key"},
        {"{\"2024-05\":{\"Canada Post\":1,\"DHL\":2}}", "missing_key"},
        {"{\"2024-05\":{\"Canada Post\":1,\"DHL\":2},\"2024-06\":{\"Canada Post\":0,\"DHL\":3},"
         "\"2024-07\":{\"Canada Post\":0,\"DHL\":0}}",
         "extra_key"},
        {"{\"2024-05\":{\"Canada Post\":1,\"DHL\":2,\"UPS\":0},\"2024-06\":{\"Canada Post\":0,"
         "\"DHL\":3}}",
         "extra_key"},
        {"{\"2024-05\":{\"Canada Post\":1,\"DHL\":2},\"2024-06\":{\"Canada Post\":0,\"DHL\":4}}",
         "wrong_value"},
        {"{\"2024-05\":{\"Canada Post\":1,\"DHL\":2},\"2024-06\":{\"Canada Post\":0,\"DHL\":2.9}}",
         "wrong_value"},
        /* carrier names keep the file's case */
        {"{\"2024-05\":{\"canada post\":1,\"DHL\":2},\"2024-06\":{\"canada post\":0,\"DHL\":3}}",
         "key_case"},
        {"{\"2024-05\":{\"Canada Post \":1,\"DHL\":2},\"2024-06\":{\"Canada Post\":0,\"DHL\":3}}",
         "key_case"},
        /* a month written another way */
        {"{\"2024-5\":{\"Canada Post\":1,\"DHL\":2},\"2024-06\":{\"Canada Post\":0,\"DHL\":3}}",
         "missing_key"},
    };
    for (size_t i = 0; i < sizeof scored0 / sizeof scored0[0]; i++) {
        struct vat_verdict vd = check(&t, scored0[i].answer);
        if (!vd.gate_passed || vd.score != 0.0 || strcmp(vd.code, scored0[i].code) != 0)
            fail_msg("'%s' should score 0 with %s, got gate %d score %g %s (%s)",
                     scored0[i].answer, scored0[i].code, vd.gate_passed, vd.score, vd.code,
                     vd.reason);
    }

    static const char *const gated[] = {
        "The answer is: {\"2024-05\":{\"Canada Post\":1,\"DHL\":2},\"2024-06\":{\"Canada "
        "Post\":0,\"DHL\":3}}",
        /* flat object: the month level is missing */
        "{\"Canada Post\":1,\"DHL\":5}",
        "{\"2024-05\":{\"Canada Post\":1,\"DHL\":2},\"2024-06\":3}",
        "{\"2024-05\":{\"Canada Post\":1,\"DHL\":2},\"2024-06\":{\"Canada Post\":null,\"DHL\":3}}",
        "{\"2024-05\":{\"Canada Post\":1,\"DHL\":\"two\"},\"2024-06\":{\"Canada Post\":0,"
        "\"DHL\":3}}",
        "[[\"2024-05\",\"DHL\",2]]",
        "{\"2024-05\":{\"DHL\":2,\"DHL\":2},\"2024-06\":{\"Canada Post\":0,\"DHL\":3}}",
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
        cmocka_unit_test(test_trap_armed_in_every_task),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_prompt_inlines_whole_file),
        cmocka_unit_test(test_prompt_truncates_to_inline_max),
        cmocka_unit_test(test_empty_cells_and_absent_month),
        cmocka_unit_test(test_single_cell_per_month),
        cmocka_unit_test(test_broken_fixtures_are_refused),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
        cmocka_unit_test(test_confirm_catches_a_writer_bug),
        cmocka_unit_test(test_checker_cases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

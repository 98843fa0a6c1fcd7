/* test_dup_header.c — the dup_header probe: 60 tasks admit on their first
 * draw (gold 1, trap gate passed and 0, malformed gated out) across the
 * three header shapes and their variants (merged and repeated group
 * cells, key names on either header line, padded and ragged title lines,
 * two and three same-named columns, object and number answers); same seed
 * -> same bytes; past the inline cap the draw is refused (a value prompt
 * shows every row), and the redraw shows every line above the data;
 * hand-made fixtures for each shape, where the header logic (reference)
 * and the planted positions (confirm) must agree and disagree when the
 * file moves a column; checker cases around the gold. */
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

#define SEED 31337u
#define NTASKS 60

extern const struct vat_template vat_tmpl_dup_header;
static const struct vat_template *const T = &vat_tmpl_dup_header;

/* The layout of the template's private state, which crafted fixtures
 * replace (kept in step with templates/dup_header.c). */
struct dh_priv {
    size_t data_start;
    int key_pos, asked_pos;
    struct vat_an_tally planted;
};

static int setup(void **state)
{
    *state = vat_tt_env_new(T, SEED);
    return 0;
}

static int teardown(void **state)
{
    vat_tt_env_free(*state);
    return 0;
}

static const char *param(const struct vat_task *t, const char *name)
{
    return json_string_value(json_object_get(t->params, name));
}

/* ---- admission over many tasks -------------------------------------------- */

static void test_sixty_tasks_admit_first_draw(void **state)
{
    struct vat_tt_env *v = *state;
    int shapes[3] = {0}, merged = 0, keys_on_top = 0, padded = 0, ragged = 0, three = 0,
        numbers = 0, objects = 0, counts = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, 1, &r);
        vat_tt_assert_replays(&r);
        assert_string_not_equal(t.gold, t.trap);
        assert_non_null(strstr(t.prompt, t.fixture[0].path));
        assert_non_null(strstr(t.prompt, "Its full contents"));
        assert_true(t.difficulty >= 1 && t.difficulty <= 5);

        /* Shapes take turns by index. */
        const char *shape = param(&t, "shape");
        static const char *const names[3] = {"grouped", "flat", "titled"};
        assert_string_equal(shape, names[i % 3]);
        shapes[i % 3]++;

        /* The recorded rows and columns describe the table below the header. */
        struct vat_csv c = VAT_CSV_INIT;
        struct vat_err e = {{0}};
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
        size_t width = c.row[c.nrows - 1].n;
        assert_int_equal(json_array_size(t.fixture[0].columns), width);
        const char *measure = param(&t, "measure");
        size_t same = 0;
        for (size_t j = 0; j < width; j++)
            same += strcmp(json_string_value(json_array_get(t.fixture[0].columns, j)), measure) == 0;
        assert_true(same >= 2);
        size_t above = c.nrows - (size_t)t.fixture[0].rows;
        if (i % 3 == 0) {
            assert_int_equal(above, 2);
            merged += strcmp(vat_csv_get(&c, 0, 3), "") == 0;
            keys_on_top += strcmp(vat_csv_get(&c, 0, 0), "") != 0;
            counts += json_is_true(json_object_get(t.spec, "integer"));
        } else if (i % 3 == 1) {
            assert_int_equal(above, 1);
        } else {
            assert_true(above >= 4);
            padded += c.row[0].n == width;
            ragged += c.row[0].n == 1;
        }
        three += same == 3;
        numbers += strcmp(json_string_value(json_object_get(t.spec, "shape")), "number") == 0;
        objects += strcmp(json_string_value(json_object_get(t.spec, "shape")), "object") == 0;
        vat_csv_release(&c);
        vat_task_clear(&t);
    }
    print_message("  merged %d, keys on top %d, padded %d, ragged %d, three %d, numbers %d, "
                  "objects %d, counts %d\n",
                  merged, keys_on_top, padded, ragged, three, numbers, objects, counts);
    assert_int_equal(shapes[0], 20);
    assert_true(merged >= 3 && merged <= 17);
    assert_true(keys_on_top >= 2);
    assert_true(padded >= 3 && ragged >= 3);
    assert_true(three >= 5);
    assert_true(numbers >= 5 && objects >= 5);
    assert_true(counts >= 3);
}

static void test_same_seed_same_bytes(void **state)
{
    struct vat_tt_env *v = *state;
    char *other = vat_test_tmpdir("duphdr-b");
    for (uint32_t i = 0; i < 6; i++) {
        struct vat_task a, b;
        struct vat_replay r;
        vat_tt_draw(v, &a, NULL, i, 6000, 1, &r);
        vat_tt_draw(v, &b, other, i, 6000, 1, &r);
        size_t la, lb;
        char *fa = vat_tt_fixture_text(&a, 0, &la), *fb = vat_tt_fixture_text(&b, 0, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(fa, fb, la);
        assert_string_equal(a.prompt, b.prompt);
        assert_string_equal(a.gold, b.gold);
        assert_string_equal(a.trap, b.trap);
        char *pa = vat_json_dumps(a.params), *pb = vat_json_dumps(b.params);
        assert_string_equal(pa, pb);
        free(pa), free(pb), free(fa), free(fb);
        vat_task_clear(&a);
        vat_task_clear(&b);
    }
    vat_test_rmtree(other);
    free(other);
}

/* Past the inline cap a value prompt could not show every row, and the
 * probe has no program form: the draw is refused.  The redraw admitted
 * shows its file whole, every line above the data included. */
static void test_prompt_past_the_cap_is_refused(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    struct vat_err e = {{0}};
    const size_t max = 1000;
    struct vat_draw_opts o = {.master_seed = v->seed, .cfg = v->cfg, .inline_max_bytes = max};
    vat_task_init(&t, T, 2, v->dir); /* titled */
    assert_int_not_equal(vat_task_draw(&t, 0, &o, &r, &e), 0);
    assert_non_null(strstr(e.msg, "the value prompt does not show every row"));
    size_t len;
    char *file = vat_tt_fixture_text(&t, 0, &len);
    assert_true(len > max);
    free(file);
    vat_task_clear(&t);

    uint32_t redraws = vat_tt_draw(v, &t, NULL, 2, max, 40, &r);
    assert_true(redraws >= 1);
    assert_true(t.self_contained);
    file = vat_tt_fixture_text(&t, 0, &len);
    char *block = vat_tt_inline_block(t.prompt, "csv");
    assert_true(len <= max);
    assert_string_equal(block, file);
    assert_non_null(strstr(t.prompt, "Its full contents"));
    /* Every line above the data, the header included, is shown. */
    struct vat_csv c = VAT_CSV_INIT;
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    assert_true(c.nrows - (size_t)t.fixture[0].rows >= 4);
    vat_csv_release(&c);
    free(block);
    free(file);
    vat_task_clear(&t);
}

/* ---- hand-made fixtures ----------------------------------------------------- */

/* A hand-made fixture for one shape: the file text and the question
 * (params, answer shape), the positions confirm will read, and either the
 * gold and trap the header logic must derive or, when gold is NULL, the
 * error that stops it (err: a piece of its message, or NULL for any). */
struct crafted {
    const char *what;
    uint32_t index; /* the task drawn first: its shape is the file's */
    const char *text, *params, *shape;
    bool integer;
    size_t data_start;
    int key_pos, asked_pos;
    const char *gold, *trap;
    const char *passes; /* another answer that must score 1, or NULL */
    const char *err;
};

/* Draws the case's task, swaps in the file text and the question, plants
 * the positions confirm will read, and recomputes gold, confirm and trap. */
static int craft(struct vat_task *t, const struct vat_tt_env *v, const struct crafted *k,
                 struct vat_err *e)
{
    struct vat_replay r;
    vat_tt_draw(v, t, NULL, k->index, 6000, 1, &r);
    char *path = vat_path_join(t->root, t->fixture[0].path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(k->text, f);
    fclose(f);
    free(path);
    struct dh_priv *pv = t->priv;
    vat_an_tally_release(&pv->planted);
    pv->data_start = k->data_start;
    pv->key_pos = k->key_pos;
    pv->asked_pos = k->asked_pos;
    json_decref(t->params);
    t->params = json_loads(k->params, 0, NULL);
    assert_non_null(t->params);
    json_object_set_new(t->spec, "shape", json_string(k->shape));
    json_object_set_new(t->spec, "integer", json_boolean(k->integer));
    json_object_del(t->spec, "expected");
    free(t->gold);
    free(t->trap);
    t->gold = t->trap = NULL;
    if (T->reference(t, e) != 0 || T->confirm(t, e) != 0 || T->trap_answer(t, e) != 0)
        return -1;
    return 0;
}

/* Crafts each case and asserts what it expects. */
static void run_crafted(const struct vat_tt_env *v, const struct crafted *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct crafted *k = &cases[i];
        struct vat_task t;
        struct vat_err e = {{0}};
        int rc = craft(&t, v, k, &e);
        if (!k->gold) {
            assert_int_equal(rc, -1);
            if (k->err && !strstr(e.msg, k->err))
                fail_msg("%s: error '%s' does not say '%s'", k->what, e.msg, k->err);
        } else {
            if (rc != 0)
                fail_msg("%s: %s", k->what, e.msg);
            assert_string_equal(t.gold, k->gold);
            assert_string_equal(t.trap, k->trap);
            if (k->passes) {
                struct vat_verdict g = vat_tt_check(&t, k->passes);
                assert_true(g.gate_passed && g.score == 1.0);
            }
        }
        vat_task_clear(&t);
    }
}

static void test_crafted_fixtures(void **state)
{
    static const struct crafted cases[] = {
        {.what = "grouped, merged group cells, keys on top",
         .index = 0,
         .text = "category,month,Budget,,Forecast,,Actual,\n"
                 ",,amount,count,amount,count,amount,count\n"
                 "Travel,2023-01,100.00,3,90.00,2,80.50,4\n"
                 "Meals,2023-01,10.00,1,11.00,1,12.25,2\n"
                 "Travel,2023-02,50.00,2,60.00,2,70.00,7\n",
         .params = "{\"shape\":\"grouped\",\"key\":\"category\",\"measure\":\"count\","
                   "\"group\":\"Actual\"}",
         .shape = "object", .integer = true, .data_start = 2, .key_pos = 0, .asked_pos = 7,
         .gold = "{\"Meals\":2,\"Travel\":11}",
         /* The trap is the first column named count: Budget's. */
         .trap = "{\"Meals\":1,\"Travel\":5}",
         .passes = "{\"Travel\": 11, \"Meals\": 2.0}"},
        {.what = "grouped, repeated group cells, one key",
         .index = 3,
         .text = ",,Online,Online,In store,In store\n"
                 "product,month,sales,units,sales,units\n"
                 "Yoga Mat,2023-01,100.00,3,90.10,2\n"
                 "Desk Lamp,2023-01,10.00,1,11.00,1\n"
                 "Yoga Mat,2023-02,50.00,2,60.05,2\n",
         .params = "{\"shape\":\"grouped\",\"key\":\"product\",\"measure\":\"sales\","
                   "\"group\":\"In store\",\"key_value\":\"Yoga Mat\"}",
         .shape = "number", .integer = false, .data_start = 2, .key_pos = 0, .asked_pos = 4,
         .gold = "150.15", .trap = "150.0"},
        {.what = "flat, by position",
         .index = 1,
         .text = "claim_id,category,submitted_on,amount,amount,amount\n"
                 "EXP-1,Rent,2023-01-01,100.00,20.00,120.00\n"
                 "EXP-2,\"Meals, team\",2023-01-02,10.00,1.00,11.00\n"
                 "EXP-3,Rent,2023-01-03,0.10,0.01,0.11\n",
         .params = "{\"shape\":\"flat\",\"key\":\"category\",\"measure\":\"amount\","
                   "\"occurrence\":2}",
         .shape = "object", .integer = false, .data_start = 1, .key_pos = 1, .asked_pos = 4,
         .gold = "{\"Meals, team\":1.0,\"Rent\":20.01}",
         .trap = "{\"Meals, team\":10.0,\"Rent\":100.1}"},
        /* A note line that holds the names as cells, but not the key, is
         * not the header; nor is the padded title. */
        {.what = "titled, header below notes",
         .index = 2,
         .text = "Acme Freight - Shipments by carrier,,,,\n"
                 "\"Note: the two weight columns are, in order: lb; kg.\",,,,\n"
                 "legend,,,weight,weight\n"
                 "shipment_id,carrier,shipped_on,weight,weight\n"
                 "SHP-1,DHL,2023-01-01,10.00,4.54\n"
                 "SHP-2,UPS,2023-01-01,1.00,0.45\n"
                 "SHP-3,DHL,2023-01-02,2.00,0.91\n",
         .params = "{\"shape\":\"titled\",\"key\":\"carrier\",\"measure\":\"weight\","
                   "\"occurrence\":2}",
         .shape = "object", .integer = false, .data_start = 4, .key_pos = 1, .asked_pos = 4,
         .gold = "{\"DHL\":5.45,\"UPS\":0.45}", .trap = "{\"DHL\":12.0,\"UPS\":1.0}"},
    };
    run_crafted(*state, cases, sizeof cases / sizeof cases[0]);
}

static void test_confirm_reads_by_position(void **state)
{
    static const struct crafted cases[] = {
        /* The planted position says column 5 (kg); the header logic finds
         * the second weight column elsewhere: the two derivations disagree. */
        {.what = "planted position elsewhere",
         .index = 1,
         .text = "shipment_id,carrier,weight,shipped_on,weight\n"
                 "SHP-1,DHL,10.00,2023-01-01,4.54\n"
                 "SHP-2,UPS,1.00,2023-01-01,0.45\n",
         .params = "{\"shape\":\"flat\",\"key\":\"carrier\",\"measure\":\"weight\","
                   "\"occurrence\":2}",
         .shape = "object", .data_start = 1, .key_pos = 1, .asked_pos = 2,
         .err = "planted column positions"},
        /* A ragged data row is an error, not a silent zero. */
        {.what = "ragged data row",
         .index = 1,
         .text = "shipment_id,carrier,shipped_on,weight,weight\n"
                 "SHP-1,DHL,2023-01-01,10.00\n",
         .params = "{\"shape\":\"flat\",\"key\":\"carrier\",\"measure\":\"weight\",\"occurrence\":2}",
         .shape = "object", .data_start = 1, .key_pos = 1, .asked_pos = 4,
         .err = "cells"},
        /* No second weight column at all. */
        {.what = "no second weight column",
         .index = 1,
         .text = "shipment_id,carrier,shipped_on,weight\n"
                 "SHP-1,DHL,2023-01-01,10.00\n",
         .params = "{\"shape\":\"flat\",\"key\":\"carrier\",\"measure\":\"weight\",\"occurrence\":2}",
         .shape = "object", .data_start = 1, .key_pos = 1, .asked_pos = 3},
    };
    run_crafted(*state, cases, sizeof cases / sizeof cases[0]);
}

/* Draws tasks from index 0 until one asks for an answer of the given shape. */
static void draw_shaped(const struct vat_tt_env *v, struct vat_task *t, const char *shape)
{
    struct vat_replay r;
    for (uint32_t i = 0;; i++) {
        vat_tt_draw(v, t, NULL, i, 6000, 1, &r);
        if (strcmp(json_string_value(json_object_get(t->spec, "shape")), shape) == 0)
            return;
        vat_task_clear(t);
    }
}

/* ---- checker cases ------------------------------------------------------------ */

static void test_checker_cases(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    /* An object task. */
    draw_shaped(v, &t, "object");
    json_t *gold = json_loads(t.gold, 0, NULL);
    /* Keys in another order pass; numbers as strings fail the gate (type). */
    json_t *rev = json_object();
    const char *k;
    json_t *x;
    size_t n = json_object_size(gold), at = 0;
    const char **keys = calloc(n, sizeof *keys);
    json_object_foreach(gold, k, x) keys[at++] = k;
    for (size_t j = n; j-- > 0;) {
        char buf[40];
        snprintf(buf, sizeof buf, "%.2f", json_number_value(json_object_get(gold, keys[j])));
        json_object_set_new(rev, keys[j], json_string(buf));
    }
    char *s = vat_json_dumps(rev);
    struct vat_verdict vd = vat_tt_check(&t, s);
    if (vd.gate_passed || strcmp(vd.code, VAT_TYPE) != 0)
        fail_msg("'%s' scored %g: %s", s, vd.score, vd.reason);
    free(s);
    json_object_foreach(rev, k, x) json_object_set_new(rev, k, json_real(atof(json_string_value(x))));
    s = vat_json_dumps(rev);
    vd = vat_tt_check(&t, s);
    if (!(vd.gate_passed && vd.score == 1.0))
        fail_msg("'%s' scored %g: %s", s, vd.score, vd.reason);
    free(s);
    /* A missing key passes the gate and scores 0. */
    json_object_del(rev, keys[0]);
    s = vat_json_dumps(rev);
    vd = vat_tt_check(&t, s);
    assert_true(vd.gate_passed && vd.score == 0.0);
    assert_string_equal(vd.code, "missing_key");
    free(s);
    /* A list is the wrong shape. */
    vd = vat_tt_check(&t, "[1, 2]");
    assert_false(vd.gate_passed);
    free(keys);
    json_decref(rev);
    json_decref(gold);
    vat_task_clear(&t);

    /* A number task: one cent off fails, within tolerance passes. */
    draw_shaped(v, &t, "number");
    double g = json_number_value(json_object_get(t.spec, "expected"));
    char buf[64];
    snprintf(buf, sizeof buf, "%.10f", g + 1e-8);
    vd = vat_tt_check(&t, buf);
    assert_true(vd.gate_passed && vd.score == 1.0);
    snprintf(buf, sizeof buf, "%.2f", g + 0.01);
    vd = vat_tt_check(&t, buf);
    assert_true(vd.gate_passed && vd.score == 0.0);
    vd = vat_tt_check(&t, "{\"answerable\": false}");
    assert_false(vd.gate_passed);
    vat_task_clear(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixty_tasks_admit_first_draw),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_prompt_past_the_cap_is_refused),
        cmocka_unit_test(test_crafted_fixtures),
        cmocka_unit_test(test_confirm_reads_by_position),
        cmocka_unit_test(test_checker_cases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

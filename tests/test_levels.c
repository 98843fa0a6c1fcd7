/* test_levels.c — difficulty levels: the deal of levels over tasks, and
 * every registered template built at every level 1..5 for a few tasks,
 * as the pipeline draws them: admitted (gold 1, every trap below 1, the
 * malformed answer gated out, confirm agreeing again), the level recorded
 * as the task's difficulty, the level's documented growth present (rows
 * or held-out lines at least the plan's floor; 2,000 rows at level 5 for
 * the templates that grow rows past the prompt), and no value prompt at
 * any level asking about rows it does not show. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "level.h"
#include "template.h"
#include "testutil.h"

#define TASKS_PER_LEVEL 2

/* The skeleton a new template starts from keeps every level too. */
extern const struct vat_template vat_tmpl_skeleton;
#define MAX_REDRAWS 40
#define INLINE 6000

/* cfg with "difficulty" set to the weights w (a new object). */
static json_t *cfg_with(const struct vat_template *tm, const long w[VAT_LEVELS])
{
    json_t *cfg = vat_template_default_params(tm);
    json_t *a = json_array();
    for (int l = 0; l < VAT_LEVELS; l++)
        json_array_append_new(a, json_integer(w[l]));
    json_object_set_new(cfg, "difficulty", a);
    return cfg;
}

/* Levels are dealt in blocks: every W consecutive tasks hold level l
 * exactly w[l] times, and nothing but (seed, template, index) decides. */
static void test_deal(void **state)
{
    (void)state;
    const struct vat_template *tm = vat_registry[0];
    static const long uniform[VAT_LEVELS] = {1, 1, 1, 1, 1};
    static const long skew[VAT_LEVELS] = {1, 2, 0, 0, 1};
    static const long five[VAT_LEVELS] = {0, 0, 0, 0, 7};
    json_t *cu = cfg_with(tm, uniform), *cs = cfg_with(tm, skew), *c5 = cfg_with(tm, five);
    for (uint32_t block = 0; block < 40; block++) {
        int seen[VAT_LEVELS + 1] = {0};
        for (uint32_t i = 0; i < 5; i++)
            seen[vat_level_draw(7, tm->name, block * 5 + i, cu)]++;
        for (int l = 1; l <= VAT_LEVELS; l++)
            assert_int_equal(seen[l], 1);
        memset(seen, 0, sizeof seen);
        for (uint32_t i = 0; i < 4; i++)
            seen[vat_level_draw(7, tm->name, block * 4 + i, cs)]++;
        assert_int_equal(seen[1], 1);
        assert_int_equal(seen[2], 2);
        assert_int_equal(seen[5], 1);
        assert_int_equal(vat_level_draw(7, tm->name, block, c5), 5);
    }
    /* the deal is a function of its key: the same again, another for
     * another template or seed somewhere in the first tasks */
    bool other_tmpl = false, other_seed = false;
    for (uint32_t i = 0; i < 50; i++) {
        int l = vat_level_draw(7, tm->name, i, cu);
        assert_int_equal(l, vat_level_draw(7, tm->name, i, cu));
        other_tmpl |= l != vat_level_draw(7, vat_registry[1]->name, i, cu);
        other_seed |= l != vat_level_draw(8, tm->name, i, cu);
    }
    assert_true(other_tmpl);
    assert_true(other_seed);
    /* no difficulty in cfg: level 1 */
    json_t *plain = vat_template_default_params(tm);
    assert_int_equal(vat_level_draw(7, tm->name, 3, plain), 1);
    json_decref(plain);
    json_decref(cu);
    json_decref(cs);
    json_decref(c5);
}

static long cfg_int(const json_t *cfg, const char *key)
{
    return (long)json_integer_value(json_object_get(cfg, key));
}

static bool grows_past_prompt(const struct vat_template *tm)
{
    return strcmp(tm->family, "regex") != 0 &&
           (tm->progform || strcmp(tm->answer_kind, "sql") == 0);
}

/* One template at one level: TASKS_PER_LEVEL tasks admitted, and the
 * level's growth present.  Returns the failures. */
static int one_level(const struct vat_template *tm, int level, const char *root)
{
    long w[VAT_LEVELS] = {0};
    w[level - 1] = 1;
    json_t *cfg = cfg_with(tm, w);
    struct vat_draw_opts o = {.master_seed = 20261205, .cfg = cfg, .inline_max_bytes = INLINE,
                              .strength_target = 0.9};
    int failures = 0;
    const struct vat_param *pmin = NULL, *pmax = NULL;
    bool rows = vat_level_size_pair(tm, &pmin, &pmax);
    long lo = 0, hi = 0;
    if (rows)
        vat_level_rows(tm, level, cfg_int(cfg, pmin->name), cfg_int(cfg, pmax->name),
                       INLINE / VAT_INLINE_ROW_BYTES, false, 500, &lo, &hi);
    for (uint32_t i = 0; i < TASKS_PER_LEVEL; i++) {
        struct vat_task t;
        struct vat_replay r;
        struct vat_err e = {{0}};
        vat_task_init(&t, tm, i, root);
        if (vat_tt_draw_with(&t, &o, MAX_REDRAWS, &r, &e) > MAX_REDRAWS) {
            fprintf(stderr, "  %s level %d never admitted: %s\n", t.id, level, e.msg);
            failures++;
            vat_task_clear(&t);
            continue;
        }
        vat_tt_assert_replays(&r);
        for (int k = 0; k < t.n_traps; k++) {
            assert_true(r.traps[k].gate_passed);
            assert_true(r.traps[k].score < 1.0);
        }
        assert_int_equal(vat_task_confirm(&t, &e), 0);
        assert_int_equal(t.level, level);
        assert_int_equal(t.difficulty, level);
        const char *kind = vat_task_answer_kind(&t);
        bool value = strcmp(kind, "value") == 0 || strcmp(kind, "abstain") == 0;
        if (value && !t.self_contained) {
            fprintf(stderr, "  %s level %d: a value prompt over rows it does not show\n", t.id,
                    level);
            failures++;
        }
        if (strcmp(tm->family, "regex") == 0) {
            size_t cases = json_array_size(json_object_get(t.spec, "cases"));
            if ((long)cases < lo) {
                fprintf(stderr, "  %s level %d: %zu held-out lines, want %ld or more\n", t.id,
                        level, cases, lo);
                failures++;
            }
        } else if (rows && grows_past_prompt(tm) && t.fixture[0].rows < lo) {
            /* (a probe's recorded rows count its header lines apart) */
            fprintf(stderr, "  %s level %d: %ld rows, want %ld or more\n", t.id, level,
                    t.fixture[0].rows, lo);
            failures++;
        }
        if (level == 5 && grows_past_prompt(tm) && t.fixture[0].rows < 2000) {
            fprintf(stderr, "  %s level 5: %ld rows, want 2000 or more\n", t.id,
                    t.fixture[0].rows);
            failures++;
        }
        if (level >= 4 && grows_past_prompt(tm) &&
            t.fixture[0].rows <= INLINE / VAT_INLINE_ROW_BYTES) {
            fprintf(stderr, "  %s level %d: %ld rows, no more than a prompt shows\n", t.id,
                    level, t.fixture[0].rows);
            failures++;
        }
        vat_task_clear(&t);
    }
    json_decref(cfg);
    return failures;
}

static void test_every_template_every_level(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t k = 0; k == 0 || vat_registry[k - 1]; k++) {
        const struct vat_template *tm = vat_registry[k] ? vat_registry[k] : &vat_tmpl_skeleton;
        char *root = vat_test_tmpdir(tm->name);
        for (int level = 1; level <= VAT_LEVELS; level++)
            failures += one_level(tm, level, root);
        vat_test_rmtree(root);
        free(root);
    }
    assert_int_equal(failures, 0);
}

/* The plan: level 1 is the params as written, the fewest rows never
 * shrink from a level to the next (the most only from level 3 on: level
 * 2 keeps to what a prompt shows), level 5 reaches 2,000 rows, probes
 * stay shown. */
static void test_plan(void **state)
{
    (void)state;
    for (size_t k = 0; vat_registry[k]; k++) {
        const struct vat_template *tm = vat_registry[k];
        json_t *cfg = vat_template_default_params(tm);
        const struct vat_param *pmin, *pmax;
        if (!vat_level_size_pair(tm, &pmin, &pmax)) {
            json_decref(cfg);
            continue;
        }
        long min = cfg_int(cfg, pmin->name), max = cfg_int(cfg, pmax->name);
        long plo = 0, phi = 0;
        for (int l = 1; l <= VAT_LEVELS; l++) {
            long lo, hi;
            vat_level_rows(tm, l, min, max, 85, false, 500, &lo, &hi);
            assert_true(lo <= hi);
            if (l == 1) {
                assert_int_equal(lo, min);
                assert_int_equal(hi, max);
            } else {
                assert_true(lo >= plo);
                if (l >= 3)
                    assert_true(hi >= phi);
            }
            if (l == 5 && grows_past_prompt(tm))
                assert_true(lo >= 2000);
            if (!grows_past_prompt(tm) && strcmp(tm->family, "regex") != 0)
                assert_true(hi <= (max > 85 ? max : 85));
            plo = lo;
            phi = hi;
            /* inline = "full": never past what the prompt shows */
            long flo, fhi;
            vat_level_rows(tm, l, min, max, 85, true, 500, &flo, &fhi);
            assert_true(flo <= fhi);
            if (l > 1 && strcmp(tm->family, "regex") != 0)
                assert_true(fhi <= (min > 85 ? min : 85));
        }
        json_decref(cfg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deal),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_every_template_every_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

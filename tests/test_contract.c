/* test_contract.c — the contract every registered template keeps, checked
 * in one loop (like git's t0012-help.sh over every command): for 50 task
 * indexes, the task admits within the redraw budget; gold scores 1; the
 * trap passes the gate and scores 0; the malformed answer fails the gate;
 * confirm agrees; and the same seed gives the same bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "jsonout.h"
#include "template.h"
#include "testutil.h"

#define SEEDS 50
#define MAX_REDRAWS 40

extern const struct vat_template vat_tmpl_skeleton;

/* Draws task `index` into root, redrawing as the pipeline would. */
static int draw(struct vat_task *t, const struct vat_template *tm, uint32_t index, const char *root,
                const json_t *cfg, struct vat_replay *r, int *redraws)
{
    struct vat_draw_opts o = {.master_seed = 20261130, .cfg = cfg, .inline_max_bytes = 6000};
    vat_task_init(t, tm, index, root);
    for (uint32_t a = 0; a <= MAX_REDRAWS; a++) {
        struct vat_err e = {{0}};
        if (vat_task_draw(t, a, &o, r, &e) == 0)
            return 0;
        (*redraws)++;
        if (a == MAX_REDRAWS)
            fprintf(stderr, "  %s never admitted: %s\n", t->id, e.msg);
    }
    return -1;
}

static char *task_bytes(const struct vat_task *t)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_printf(&b, "%s\n%s\n%s\n%s\n%s\n", t->id, t->prompt, t->gold, t->trap, t->malformed);
    char *spec = vat_json_dumps(t->spec), *params = vat_json_dumps(t->params);
    vat_buf_printf(&b, "%s\n%s\n", spec, params);
    free(spec);
    free(params);
    for (int i = 0; i < t->n_fixtures; i++) {
        char *path = vat_path_join(t->root, t->fixture[i].path);
        size_t n = 0;
        char *data = vat_test_read_file(path, &n);
        assert_non_null(data);
        vat_buf_printf(&b, "%s %s %zu\n", t->fixture[i].path, t->fixture[i].sha256, n);
        vat_buf_putn(&b, data, n);
        free(data);
        free(path);
    }
    return vat_buf_detach(&b);
}

static void check_template(const struct vat_template *tm)
{
    assert_int_equal(tm->version, VAT_TEMPLATE_V1);
    assert_non_null(tm->name);
    assert_non_null(tm->family);
    assert_non_null(tm->answer_kind);
    assert_non_null(tm->trap);
    assert_non_null(tm->generate);
    assert_non_null(tm->reference);
    assert_non_null(tm->confirm);
    assert_non_null(tm->trap_answer);
    assert_non_null(tm->check);

    char *a = vat_test_tmpdir("contract-a"), *b = vat_test_tmpdir("contract-b");
    json_t *cfg = vat_template_default_params(tm);
    int redraws = 0, failed = 0;
    for (uint32_t i = 0; i < SEEDS; i++) {
        struct vat_task t1, t2;
        struct vat_replay r1, r2;
        if (draw(&t1, tm, i, a, cfg, &r1, &redraws) != 0) {
            failed++;
            vat_task_clear(&t1);
            continue;
        }
        assert_true(r1.v[VAT_ROLE_GOLD].gate_passed);
        assert_true(r1.v[VAT_ROLE_GOLD].score == 1.0);
        assert_string_equal(r1.v[VAT_ROLE_GOLD].code, "ok");
        assert_true(r1.v[VAT_ROLE_TRAP].gate_passed);
        assert_true(r1.v[VAT_ROLE_TRAP].score == 0.0);
        assert_false(r1.v[VAT_ROLE_MALFORMED].gate_passed);
        assert_true(r1.v[VAT_ROLE_MALFORMED].score == 0.0);
        assert_string_not_equal(t1.gold, t1.trap);

        /* confirm is a separate derivation: run it again on its own. */
        struct vat_err e = {{0}};
        assert_int_equal(tm->confirm(&t1, &e), 0);

        /* Same seed, another root: the same bytes. */
        int r2d = 0;
        assert_int_equal(draw(&t2, tm, i, b, cfg, &r2, &r2d), 0);
        char *x = task_bytes(&t1), *y = task_bytes(&t2);
        /* Paths are relative, so the two roots must not show. */
        assert_string_equal(x, y);
        free(x);
        free(y);
        vat_task_clear(&t1);
        vat_task_clear(&t2);
    }
    fprintf(stderr, "  %-20s %d tasks, %d redraws, %d never admitted\n", tm->name, SEEDS, redraws,
            failed);
    assert_int_equal(failed, 0);
    /* First-draw admission is the norm, not the exception. */
    assert_true(redraws <= SEEDS / 2);
    json_decref(cfg);
    vat_test_rmtree(a);
    vat_test_rmtree(b);
    free(a);
    free(b);
}

static void test_every_registered_template(void **state)
{
    (void)state;
    size_t n = 0;
    for (size_t i = 0; vat_registry[i]; i++, n++)
        check_template(vat_registry[i]);
    assert_true(n >= 3);
}

static void test_skeleton_template(void **state)
{
    (void)state;
    check_template(&vat_tmpl_skeleton);
}

static void test_registry_names_unique_and_found(void **state)
{
    (void)state;
    for (size_t i = 0; vat_registry[i]; i++) {
        assert_ptr_equal(vat_template_find(vat_registry[i]->name), vat_registry[i]);
        for (size_t j = i + 1; vat_registry[j]; j++)
            assert_string_not_equal(vat_registry[i]->name, vat_registry[j]->name);
    }
    assert_null(vat_template_find("no_such_template"));
    assert_null(vat_template_find("skeleton"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_names_unique_and_found),
        cmocka_unit_test(test_skeleton_template),
        cmocka_unit_test(test_every_registered_template),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

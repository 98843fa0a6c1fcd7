/* test_contract.c — the contract every registered template keeps, checked
 * in one loop (like git's t0012-help.sh over every command): for 50 task
 * indexes, the task admits within the redraw budget; gold scores 1; the
 * trap passes the gate and scores 0; the malformed answer fails the gate;
 * confirm agrees; the worked completion (sft_reasoning) reasons, ends in
 * gold fenced by its kind and quotes no held-out case; and the same seed
 * gives the same bytes. */
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
#include "jsonout.h"
#include "rules.h"
#include "strength.h"
#include "tables.h"
#include "template.h"
#include "testutil.h"

#define SEEDS 50
#define MAX_REDRAWS 40

/* Draws task `index` into root, redrawing as the pipeline would. */
static int draw(struct vat_task *t, const struct vat_template *tm, uint32_t index, const char *root,
                const json_t *cfg, struct vat_replay *r, int *redraws)
{
    /* strength_target as seeds.toml's default: a regex or SQL task's
     * held-out cases must kill 90% of its gold's mutants */
    struct vat_draw_opts o = {.master_seed = 20261130, .cfg = cfg, .inline_max_bytes = 6000,
                              .strength_target = 0.9};
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
    vat_buf_printf(&b, "%s\n%s\n%s\n%s\n%s\n%s\n", t->id, t->prompt, t->gold, t->trap,
                   t->malformed, t->reasoned);
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

/* Fails naming the rule of docs/adding-a-template.md and its mend. */
#define RULE VAT_RULE

static void check_template(const struct vat_template *tm)
{
    static const char *const family[] = {"analytics", "regex", "sql", "probe"};
    static const char *const kind[] = {"value", "regex", "sql", "abstain"};
    RULE(tm->version == VAT_TEMPLATE_V1 && tm->name && tm->family && tm->answer_kind &&
             tm->trap && tm->summary && tm->generate && tm->reference && tm->confirm &&
             tm->trap_answer && tm->check && tm->params,
         tm, "the contract", "set every member of struct vat_template as skeleton.c does",
         "a member is unset (version %d)", tm->version);
    bool fam = false, kin = false;
    for (size_t i = 0; i < 4; i++) {
        fam = fam || strcmp(tm->family, family[i]) == 0;
        kin = kin || strcmp(tm->answer_kind, kind[i]) == 0;
    }
    RULE(fam && kin, tm, "the contract",
         "family is analytics, regex, sql or probe; answer_kind value, regex, sql or abstain",
         "family '%s', answer_kind '%s'", tm->family, tm->answer_kind);

    char *a = vat_test_tmpdir("contract-a"), *b = vat_test_tmpdir("contract-b");
    json_t *cfg = vat_template_default_params(tm);
    int redraws = 0, failed = 0;
    long strength_killed = 0, strength_total = 0;
    for (uint32_t i = 0; i < SEEDS; i++) {
        struct vat_task t1, t2;
        struct vat_replay r1, r2;
        if (draw(&t1, tm, i, a, cfg, &r1, &redraws) != 0) {
            failed++;
            vat_task_clear(&t1);
            continue;
        }
        const struct vat_verdict *g = &r1.v[VAT_ROLE_GOLD], *tr = &r1.v[VAT_ROLE_TRAP],
                                 *m = &r1.v[VAT_ROLE_MALFORMED];
        RULE(g->gate_passed && g->score == 1.0 && strcmp(g->code, "ok") == 0, tm,
             "gold scores 1", "make reference() and the spec agree with the checker",
             "%s: gold %s: %s %g", t1.id, t1.gold, g->code, g->score);
        RULE(tr->gate_passed && tr->score == 0.0 && strcmp(t1.gold, t1.trap) != 0, tm,
             "the trap passes the gate and scores 0",
             "trap_answer() must give an answer of the right shape that differs from gold",
             "%s: trap %s: %s %g", t1.id, t1.trap, tr->code, tr->score);
        RULE(!m->gate_passed && m->score == 0.0, tm, "the malformed answer fails the gate",
             "leave t->malformed unset, or set it to an answer of the wrong shape",
             "%s: malformed %s: %s", t1.id, t1.malformed, m->code);

        /* The worked completion: reasoning, then gold alone in a fence of
         * its kind; no held-out case (a regex held-out line, an SQL
         * variant database) quoted. */
        const char *k = vat_task_answer_kind(&t1);
        char *gold = vat_answer_text(&t1, t1.gold);
        char *fence = vat_xasprintf("\n```%s\n%s\n```\n",
                                    strcmp(k, "regex") == 0 ? "regex"
                                    : strcmp(k, "sql") == 0 ? "sql"
                                                            : "json",
                                    gold);
        size_t rl = t1.reasoned ? strlen(t1.reasoned) : 0, fl = strlen(fence);
        RULE(rl > fl && strcmp(t1.reasoned + rl - fl, fence) == 0 &&
                 strstr(t1.reasoned, "The mistake to avoid: ") != NULL,
             tm, "the worked completion", "src/reasoning.c builds it from the task's spec and params",
             "%s: %.300s", t1.id, t1.reasoned ? t1.reasoned : "(none)");
        size_t ci;
        json_t *c;
        json_array_foreach(json_object_get(t1.spec, "cases"), ci, c) {
            const char *text = json_string_value(json_object_get(c, "text"));
            /* a quote shows at least the line's first 60 bytes (or all of it) */
            if (json_is_true(json_object_get(c, "heldout")) && text && strlen(text) > 8) {
                char head[61];
                snprintf(head, sizeof head, "%s", text);
                RULE(strstr(t1.reasoned, head) == NULL, tm, "the worked completion",
                     "quote example lines only", "%s quotes held-out line '%s'", t1.id, text);
            }
        }
        for (int fi = 1; fi < t1.n_fixtures; fi++)
            RULE(strstr(t1.reasoned, t1.fixture[fi].path) == NULL, tm, "the worked completion",
                 "name the main fixture only", "%s names %s", t1.id, t1.fixture[fi].path);
        free(fence);
        free(gold);

        /* confirm is a separate derivation: run it again on its own. */
        struct vat_err e = {{0}};
        RULE(vat_task_confirm(&t1, &e) == 0, tm, "confirm agrees",
             "confirm() must reach the same gold from the same task every time", "%s: %.400s",
             t1.id, e.msg);

        /* strength, measured in full on the first tasks (admission above
         * stops once the target is sure) */
        if (i < 5 && (strcmp(tm->family, "regex") == 0 || strcmp(tm->family, "sql") == 0)) {
            struct vat_strength st = VAT_STRENGTH_INIT;
            RULE(vat_strength_task(&t1, &st) == 0, tm, "strength",
                 "make gold a pattern or query the mutator can read", "%s: %s", t1.id, st.error);
            double share = vat_strength_share(&st);
            RULE(share >= 0.9, tm, "strength",
                 "plant the corner each surviving mutant misses in the held-out lines or "
                 "variant fixtures (vat strength lists the survivors)",
                 "%s: the held-out cases kill %ld of %ld mutants of gold (%.0f%%), under 90%% "
                 "(first survivor: %s)",
                 t1.id, st.killed, st.killed + st.survivors, 100 * share,
                 st.surv.n ? st.surv.v[0].text : "none");
            strength_killed += st.killed;
            strength_total += st.killed + st.survivors;
            vat_strength_release(&st);
        }

        /* Same seed, another root: the same bytes. */
        int r2d = 0;
        assert_int_equal(draw(&t2, tm, i, b, cfg, &r2, &r2d), 0);
        char *x = task_bytes(&t1), *y = task_bytes(&t2);
        /* Paths are relative, so the two roots must not show. */
        RULE(strcmp(x, y) == 0, tm, "same seed, same bytes",
             "draw only from rng, keep paths relative, no clock, locale or global state",
             "task %u drawn into two roots differs", i);
        free(x);
        free(y);
        vat_task_clear(&t1);
        vat_task_clear(&t2);
    }
    fprintf(stderr, "  %-20s %d tasks, %d redraws, %d never admitted", tm->name, SEEDS, redraws,
            failed);
    if (strength_total)
        fprintf(stderr, "; strength %ld/%ld over 5 tasks", strength_killed, strength_total);
    fprintf(stderr, "\n");
    RULE(failed == 0, tm, "every task admits",
         "read the refusals printed above: the first names the broken step", "%d of %d tasks "
         "never admitted within %d redraws", failed, SEEDS, MAX_REDRAWS);
    /* First-draw admission is the norm, not the exception. */
    RULE(redraws <= SEEDS / 2, tm, "first-draw admission",
         "arm the trap and meet every admission rule by construction", "%d redraws over %d tasks",
         redraws, SEEDS);
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

/* The skeletons of every family: a copy passes because they do. */
static void test_skeleton_templates(void **state)
{
    (void)state;
    size_t n = 0;
    for (; vat_tt_skeletons[n]; n++)
        check_template(vat_tt_skeletons[n]);
    assert_int_equal(n, 3);
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
    for (size_t i = 0; vat_tt_skeletons[i]; i++)
        assert_null(vat_template_find(vat_tt_skeletons[i]->name));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_names_unique_and_found),
        cmocka_unit_test(test_skeleton_templates),
        cmocka_unit_test(test_every_registered_template),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

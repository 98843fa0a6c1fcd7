/* admit.c — drawing one task and deciding its admission (see admit.h). */
#include "admit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expert.h"
#include "extract.h"
#include "filememo.h"
#include "level.h"
#include "progform.h"
#include "reasoning.h"
#include "rng.h"
#include "strength.h"
#include "trapmod.h"
#include "verifiers.h"

/* One task's checks during admission.  A SQL task scored by the shared
 * checker (vat_check_task) is prepared once: its fixtures read into
 * memory, the reference rows on each computed once and a sandbox per
 * fixture kept open, so gold, trap, malformed and every mutant of the
 * strength rule run only their own query (vat_sql_check_prepared gives
 * vat_check_sql's verdicts).  Anything else goes through the template's
 * own check. */
struct task_checks {
    struct vat_sql_prep *prep;
};

static struct vat_verdict task_check(void *ctx, const struct vat_task *t, const char *answer,
                                     size_t len)
{
    struct task_checks *c = ctx;
    if (c->prep)
        return vat_sql_check_prepared(c->prep, answer, len, NULL);
    return t->tmpl->check(t, answer, len);
}

/* task_check for the strength rule, which counts mutants by gate and
 * score alone: a mutant's rows that differ get no reason written. */
static struct vat_verdict task_score(void *ctx, const struct vat_task *t, const char *answer,
                                     size_t len)
{
    struct task_checks *c = ctx;
    if (c->prep)
        return vat_sql_check_prepared_score(c->prep, answer, len);
    return t->tmpl->check(t, answer, len);
}

static void task_checks_open(struct task_checks *c, const struct vat_task *t)
{
    c->prep = NULL;
    const char *kind = json_string_value(json_object_get(t->spec, "checker"));
    if (t->tmpl->check != vat_check_task || !kind || strcmp(kind, "sql") != 0)
        return;
    /* A spec the prepared path cannot take (say its reference fails)
     * is left to the ordinary check, which reports it the usual way. */
    struct vat_verdict v;
    c->prep = vat_sql_prepare(t->spec, t->root, NULL, NULL, 0, &v);
}

json_t *vat_template_default_params(const struct vat_template *tmpl)
{
    json_t *o = json_object();
    json_object_set_new(o, "count", json_integer(tmpl->default_count));
    json_object_set_new(o, "prompt_style", json_string("explicit"));
    for (const struct vat_param *p = tmpl->params; p && p->name; p++) {
        switch (p->type) {
        case VAT_PARAM_INT: json_object_set_new(o, p->name, json_integer((json_int_t)p->def)); break;
        case VAT_PARAM_REAL: json_object_set_new(o, p->name, json_real(p->def)); break;
        case VAT_PARAM_BOOL: json_object_set_new(o, p->name, json_boolean(p->def != 0)); break;
        case VAT_PARAM_STR:
            json_object_set_new(o, p->name, json_string(p->def_str ? p->def_str : ""));
            break;
        }
    }
    return o;
}

char *vat_malformed_for(const struct vat_task *t)
{
    const char *kind = vat_task_answer_kind(t);
    const char *gold = t->gold ? t->gold : "";
    /* Realistic malformations: models wrap answers in prose or truncate
     * them; each must fail its checker's gate, not merely score 0. */
    if (strcmp(kind, "regex") == 0)
        return vat_xasprintf("(%s", gold);
    if (strcmp(kind, "sql") == 0)
        return vat_xasprintf("Here is the query: %s", gold);
    return vat_xasprintf("The answer is: %s", gold);
}

static int task_admit(struct vat_task *t, const struct vat_draw_opts *o, struct vat_replay *r,
                      struct task_checks *chk, struct vat_err *e);

int vat_task_confirm(const struct vat_task *t, struct vat_err *e)
{
    if (t->tmpl->progform && strcmp(vat_task_answer_kind(t), "sql") == 0)
        return vat_progform_confirm(t, t->tmpl->progform, e);
    return t->tmpl->confirm(t, e);
}

static int task_draw(struct vat_task *t, uint32_t attempt, const struct vat_draw_opts *o,
                     struct vat_replay *r, struct vat_err *e)
{
    const struct vat_template *tm = t->tmpl;
    struct vat_rng rng;

    vat_task_clear(t);
    t->attempt = attempt;
    t->master_seed = o->master_seed;
    t->cfg = o->cfg;
    t->inline_max_bytes = o->inline_max_bytes;
    vat_rng_stream(&rng, o->master_seed, tm->name, t->index, "task", attempt, t->stream_hex);
    memset(r, 0, sizeof *r);

    /* The prompt's style and wording come from a sub-stream of their own
     * (same task, purpose "prompt"), so they never move a fixture draw. */
    vat_rng_stream(&t->prompt_rng, o->master_seed, tm->name, t->index, "prompt", attempt, NULL);
    const char *style = json_string_value(json_object_get(o->cfg, "prompt_style"));
    if (style && strcmp(style, "mixed") == 0)
        style = vat_rng_chance(&t->prompt_rng, 0.5) ? "natural" : "explicit";
    t->prompt_style = style && strcmp(style, "natural") == 0 && tm->giveaways ? "natural"
                                                                               : "explicit";
    t->inline_full = o->inline_full;
    /* The level asked for comes from its own sub-stream, the same at
     * every attempt, and scales the size params generate reads. */
    vat_task_set_level(t, vat_level_draw(o->master_seed, tm->name, t->index, o->cfg));
    /* Cross-cutting trap modules by level, from a stream of their own. */
    vat_trapmod_arm(t);

    if (tm->generate(t, &rng, e) != 0)
        return -1;
    t->difficulty = t->level;
    if (!t->prompt || t->n_fixtures < 1 || !t->spec)
        return vat_err_set(e, "%s: generate left the prompt, fixture or spec unset", t->id);
    /* Modules act on CSV fixtures, or the SQLite ones of a template that
     * lists its tables: a workbook task arms none. */
    bool db = tm->modules && tm->modules->db_tables;
    if (strcmp(t->fixture[0].format, db ? "sqlite" : "csv") != 0)
        t->trapmods = 0;
    vat_trapmod_prompt(t);
    for (int i = 0; i < t->n_fixtures; i++) {
        if (!vat_path_is_safe(t->fixture[i].path))
            return vat_err_set(e, "%s: unsafe fixture path '%s'", t->id, t->fixture[i].path);
        if (vat_file_sha256(t->root, t->fixture[i].path, NULL, 0, t->fixture[i].sha256, e) != 0)
            return -1;
    }
    if (tm->reference(t, e) != 0)
        return -1;
    if (!t->gold)
        return vat_err_set(e, "%s: reference left gold unset", t->id);
    if (tm->confirm(t, e) != 0)
        return -1;
    if (tm->trap_answer(t, e) != 0)
        return -1;
    if (!t->trap)
        return vat_err_set(e, "%s: trap_answer left the trap unset", t->id);
    if (vat_trapmod_traps(t, e) != 0)
        return -1;
    if (tm->progform) {
        /* The value form is built and proven first: its gold is the
         * second derivation of the program form's. */
        t->answer_form = vat_progform_form(t, tm->progform);
        if (strcmp(t->answer_form, "sql") == 0) {
            if (vat_progform_apply(t, tm->progform, e) != 0)
                return -1;
            for (int i = 1; i < t->n_fixtures; i++)
                if (vat_file_sha256(t->root, t->fixture[i].path, NULL, 0, t->fixture[i].sha256,
                                    e) != 0)
                    return -1;
        }
    }
    /* A value question over rows its prompt does not show is redrawn (a
     * template with a program form asks it as a program instead:
     * vat_progform_form). */
    const char *kind = vat_task_answer_kind(t);
    if ((strcmp(kind, "value") == 0 || strcmp(kind, "abstain") == 0) &&
        !t->self_contained)
        return vat_err_set(e, "%s: the value prompt does not show every row the answer "
                              "depends on",
                           t->id);
    if (!t->malformed)
        t->malformed = vat_malformed_for(t);

    struct task_checks chk;
    task_checks_open(&chk, t);
    int rc = task_admit(t, o, r, &chk, e);
    /* an admitted task is also a tool-use environment, with an expert's
     * transcript when one reaches 1.0 (templates/expert.h), scored by the
     * check admission used */
    if (rc == 0)
        rc = vat_expert_run(t, task_check, &chk, e);
    vat_sql_prep_free(chk.prep);
    return rc;
}

/* The worked completion of the sft_reasoning table: admitted only when
 * `auto` extraction takes an answer out of it that scores 1.0 through the
 * task's own check, as a model's completion in that form would. */
static int reasoned_admit(struct vat_task *t, struct task_checks *chk, struct vat_err *e)
{
    free(t->reasoned);
    t->reasoned = vat_reasoned_completion(t);
    size_t len = strlen(t->reasoned);
    struct vat_extraction x;
    vat_extract(vat_task_answer_kind(t), t->reasoned, len, VAT_EXTRACT_AUTO, &x);
    char *answer = vat_xmalloc(x.len + 1);
    size_t n = vat_extract_write(&x, answer);
    answer[n] = 0;
    struct vat_verdict v = task_check(chk, t, answer, n);
    free(answer);
    if (!(v.gate_passed && v.score == 1.0))
        return vat_err_set(e, "%s: the worked completion scored %g under auto extraction "
                              "(rule %s; %s: %s)",
                           t->id, v.score, x.rule, v.code, v.reason);
    return 0;
}

static int task_admit(struct vat_task *t, const struct vat_draw_opts *o, struct vat_replay *r,
                      struct task_checks *chk, struct vat_err *e)
{
    const char *ans[VAT_N_ROLES] = {t->gold, t->trap, t->malformed};
    for (int k = 0; k < VAT_N_ROLES; k++)
        r->v[k] = task_check(chk, t, ans[k], strlen(ans[k]));

    /* A compound task proves each of its traps on its own: the answer of
     * that single mistake differs from gold, passes the gate and scores
     * below 1, or the task is redrawn.  It goes through the checker gold
     * and trap went through (in the program form a SQL answer, scored on
     * every fixture; vat_progform_apply put the SQL there). */
    for (int i = 0; i < t->n_traps; i++) {
        const struct vat_trap *tp = &t->traps[i];
        if (!tp->name || !tp->answer)
            return vat_err_set(e, "%s: trap %d left unset", t->id, i);
        if (strcmp(tp->answer, t->gold) == 0)
            return vat_err_set(e, "%s: trap '%s' not armed (its answer is gold)", t->id,
                               tp->name);
        r->traps[i] = task_check(chk, t, tp->answer, strlen(tp->answer));
        if (!r->traps[i].gate_passed)
            return vat_err_set(e, "%s: trap '%s' failed the gate (%s: %s)", t->id, tp->name,
                               r->traps[i].code, r->traps[i].reason);
        if (!(r->traps[i].score < 1.0))
            return vat_err_set(e, "%s: trap '%s' not armed (it scored %g)", t->id, tp->name,
                               r->traps[i].score);
    }

    const struct vat_verdict *g = &r->v[VAT_ROLE_GOLD], *tr = &r->v[VAT_ROLE_TRAP],
                             *m = &r->v[VAT_ROLE_MALFORMED];
    if (!(g->gate_passed && g->score == 1.0))
        return vat_err_set(e, "%s: gold scored %g (%s: %s)", t->id, g->score, g->code, g->reason);
    if (!tr->gate_passed)
        return vat_err_set(e, "%s: trap failed the gate (%s: %s)", t->id, tr->code, tr->reason);
    if (!(tr->score < 1.0))
        return vat_err_set(e, "%s: trap not armed (it scored %g)", t->id, tr->score);
    if (m->gate_passed)
        return vat_err_set(e, "%s: malformed answer passed the gate", t->id);
    if (reasoned_admit(t, chk, e) != 0)
        return -1;
    if (o->strength_target > 0 &&
        (strcmp(vat_task_answer_kind(t), "regex") == 0 ||
         strcmp(vat_task_answer_kind(t), "sql") == 0)) {
        /* A checker that cannot tell gold from its mutants is not proof of
         * anything: redraw the held-out material until it can. */
        struct vat_strength s = VAT_STRENGTH_INIT;
        /* Only whether the share reaches the target is asked: scoring
         * stops once it is sure to (a share short of it is counted whole,
         * for the message). */
        s.stop_at = o->strength_target;
        /* gold went through this very check above and scored 1 */
        int rc = vat_strength_task_with(t, task_score, chk, g, &s);
        double share = vat_strength_share(&s);
        if (rc != 0)
            vat_err_set(e, "%s: strength not measurable: %s", t->id, s.error);
        else if (share < o->strength_target)
            vat_err_set(e, "%s: cases kill %ld of %ld gold mutants (%.0f%% < %.0f%%)", t->id,
                        s.killed, s.killed + s.survivors, 100 * share, 100 * o->strength_target);
        vat_strength_release(&s);
        if (rc != 0 || share < o->strength_target)
            return -1;
    }
    return 0;
}

int vat_task_draw(struct vat_task *t, uint32_t attempt, const struct vat_draw_opts *o,
                  struct vat_replay *r, struct vat_err *e)
{
    unsigned long before = vat_checker_limit_hits();
    struct vat_err inner = {{0}};
    vat_file_memo_begin();
    int rc = task_draw(t, attempt, o, r, &inner);
    if (rc == 0 && o->admitted)
        o->admitted(t, o->admitted_arg);
    vat_file_memo_end();
    if (vat_checker_limit_hits() != before) {
        /* The checker, not the task, ran out: rejecting would hide it and
         * redrawing would make the corpus depend on the machine. */
        vat_err_set(e, "%s: a checker's last-resort net stopped it (checker_limit)%s%s", t->id,
                    inner.msg[0] ? ": " : "", inner.msg);
        return VAT_DRAW_FATAL;
    }
    if (rc != 0 && e)
        *e = inner;
    return rc;
}

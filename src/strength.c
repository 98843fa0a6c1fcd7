/* strength.c — checker strength: the mutants of a task's gold scored
 * through the task's own check, per task and per template over a built
 * corpus (read back from its verifiers and experience tables, as
 * `vat check` rebuilds a task).  See strength.h.
 * Exports vat_strength_task, vat_strength_add, vat_strength_share,
 * vat_strength_release, vat_strength_corpus, vat_strength_template_json
 * and vat_strength_report_release. */
#include "strength.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "tables.h"

/* ---- one task ------------------------------------------------------------- */

static struct vat_strength_kind *kind_slot(struct vat_strength *s, const char *kind)
{
    for (size_t i = 0; i < s->nkinds; i++)
        if (strcmp(s->kind[i].kind, kind) == 0)
            return &s->kind[i];
    if (s->nkinds == VAT_STRENGTH_MAX_KINDS)
        return NULL; /* more kinds than mutate.c has: counted in the totals only */
    struct vat_strength_kind *k = &s->kind[s->nkinds++];
    memset(k, 0, sizeof *k);
    k->kind = kind;
    return k;
}

static void push_survivor(struct vat_strength *s, const struct vat_mutant *m)
{
    struct vat_mutants *v = &s->surv;
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 8;
        v->v = vat_xrealloc(v->v, v->cap * sizeof *v->v);
    }
    v->v[v->n] = *m;
    v->v[v->n].text = vat_xstrdup(m->text);
    v->n++;
}

static int strength_fail(struct vat_strength *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int strength_fail(struct vat_strength *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->error, sizeof out->error, fmt, ap);
    va_end(ap);
    return -1;
}

static struct vat_verdict own_check(void *ctx, const struct vat_task *t, const char *answer,
                                    size_t len)
{
    (void)ctx;
    return t->tmpl->check(t, answer, len);
}

int vat_strength_task(const struct vat_task *t, struct vat_strength *out)
{
    return vat_strength_task_with(t, own_check, NULL, NULL, out);
}

int vat_strength_task_with(const struct vat_task *t, vat_task_check_fn check, void *ctx,
                           const struct vat_verdict *gold, struct vat_strength *out)
{
    const char *checker = t->spec ? json_string_value(json_object_get(t->spec, "checker")) : NULL;
    if (!t->gold)
        return strength_fail(out, "%s: no gold answer to mutate", t->id);
    struct vat_mutants m = VAT_MUTANTS_INIT;
    struct vat_err e = {{0}};
    int rc;
    if (checker && strcmp(checker, "regex") == 0)
        rc = vat_mutate_regex(t->gold, &m, &e);
    else if (checker && strcmp(checker, "sql") == 0)
        rc = vat_mutate_sql(t->gold, json_is_true(json_object_get(t->spec, "ordered")), &m, &e);
    else
        return strength_fail(out, "%s: checker '%s' has no mutants (regex and sql only)", t->id,
                             checker ? checker : "");
    if (rc != 0) {
        vat_mutants_release(&m);
        return strength_fail(out, "%s: cannot mutate gold: %s", t->id, e.msg);
    }
    /* A gold that does not score 1 makes every mutant look killed. */
    struct vat_verdict v = gold ? *gold : check(ctx, t, t->gold, strlen(t->gold));
    if (!v.gate_passed || v.score != 1.0) {
        vat_mutants_release(&m);
        return strength_fail(out, "%s: gold scores %g (%s: %s)", t->id, v.score, v.code,
                             v.reason);
    }
    /* Mutants not yet scored that could still count (not equivalent):
     * with all of them survivors the share is killed / (scored + left),
     * which the final share can only meet or pass. */
    long left = 0;
    for (size_t i = 0; i < m.n; i++)
        left += !m.v[i].equivalent;
    for (size_t i = 0; i < m.n; i++) {
        const struct vat_mutant *mu = &m.v[i];
        if (out->stop_at > 0 && !mu->equivalent && out->killed > 0 &&
            (double)out->killed / (double)(out->killed + out->survivors + left) >=
                out->stop_at) {
            out->stopped = true;
            break;
        }
        struct vat_strength_kind *k = kind_slot(out, mu->kind);
        struct vat_strength_kind dummy;
        if (!k)
            k = &dummy;
        out->mutants++;
        k->mutants++;
        if (mu->equivalent) {
            out->equivalent++;
            k->equivalent++;
            continue;
        }
        left--;
        v = check(ctx, t, mu->text, strlen(mu->text));
        if (strcmp(v.code, VAT_CHECKER_LIMIT) == 0) {
            /* Not a kill: the checker ran out, so the task is not measured. */
            vat_mutants_release(&m);
            return strength_fail(out, "%s: a checker's last-resort net stopped it on a mutant "
                                      "(checker_limit: %s)",
                                 t->id, v.reason);
        }
        if (!v.gate_passed) {
            out->invalid++;
            k->invalid++;
        } else if (v.score < 1.0) {
            out->killed++;
            k->killed++;
        } else {
            out->survivors++;
            k->survivors++;
            push_survivor(out, mu);
        }
    }
    vat_mutants_release(&m);
    return 0;
}

void vat_strength_add(struct vat_strength *a, const struct vat_strength *b)
{
    a->mutants += b->mutants;
    a->equivalent += b->equivalent;
    a->invalid += b->invalid;
    a->killed += b->killed;
    a->survivors += b->survivors;
    for (size_t i = 0; i < b->nkinds; i++) {
        struct vat_strength_kind *k = kind_slot(a, b->kind[i].kind);
        if (!k)
            continue;
        k->mutants += b->kind[i].mutants;
        k->equivalent += b->kind[i].equivalent;
        k->invalid += b->kind[i].invalid;
        k->killed += b->kind[i].killed;
        k->survivors += b->kind[i].survivors;
    }
    for (size_t i = 0; i < b->surv.n; i++)
        push_survivor(a, &b->surv.v[i]);
}

double vat_strength_share(const struct vat_strength *s)
{
    long scored = s->killed + s->survivors;
    return scored ? (double)s->killed / (double)scored : 1.0;
}

void vat_strength_release(struct vat_strength *s)
{
    vat_mutants_release(&s->surv);
}

/* ---- the corpus ------------------------------------------------------------- */

/* Reads out/<table>/{train,test}.jsonl below root into one array of rows.
 * NULL with e set when neither file exists or a line is not an object. */
static json_t *read_table(const char *root, const char *table, struct vat_err *e)
{
    static const char *const splits[] = {"train", "test"};
    json_t *rows = json_array();
    int opened = 0;
    for (size_t k = 0; k < 2; k++) {
        char *rel = vat_xasprintf("out/%s/%s.jsonl", table, splits[k]);
        char *path = vat_path_join(root, rel);
        FILE *f = vat_fopen_beneath(root, rel, NULL);
        free(rel);
        if (!f) {
            if (errno != ENOENT) {
                vat_err_set(e, "vat: cannot open '%s': %s", path, strerror(errno));
                free(path);
                json_decref(rows);
                return NULL;
            }
            free(path);
            continue;
        }
        opened++;
        char *line = NULL;
        size_t cap = 0;
        ssize_t got;
        long lineno = 0;
        while ((got = getline(&line, &cap, f)) > 0) {
            lineno++;
            json_error_t je;
            json_t *row = json_loadb(line, (size_t)got, 0, &je);
            if (!json_is_object(row)) {
                vat_err_set(e, "vat: '%s':%ld: not a JSON object: %s", path, lineno,
                            row ? "another JSON value" : je.text);
                json_decref(row);
                free(line);
                fclose(f);
                free(path);
                json_decref(rows);
                return NULL;
            }
            json_array_append_new(rows, row);
        }
        free(line);
        fclose(f);
        free(path);
    }
    if (!opened) {
        json_decref(rows);
        vat_err_set(e, "vat: no corpus at '%s' (out/%s/*.jsonl missing; run 'vat build')", root,
                    table);
        return NULL;
    }
    return rows;
}

static bool listed(const char *only, const char *name)
{
    if (!only)
        return true;
    size_t n = strlen(name);
    for (const char *p = only; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p += len + (comma ? 1 : 0);
    }
    return false;
}

static int cmp_row_id(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    return strcmp(json_string_value(json_object_get(x, "task_id")),
                  json_string_value(json_object_get(y, "task_id")));
}

/* Program answers are measured: the regex and sql families, and the
 * analytics tasks drawn in their program form (checker "sql"). */
static bool measured_row(const json_t *row)
{
    json_t *spec = vat_verifier_spec(row);
    const char *checker = json_string_value(json_object_get(spec, "checker"));
    bool yes = checker && (strcmp(checker, "regex") == 0 || strcmp(checker, "sql") == 0);
    json_decref(spec);
    return yes;
}

static void put_counts(json_t *o, long mutants, long equivalent, long invalid, long killed,
                       long survivors)
{
    json_object_set_new(o, "mutants", json_integer(mutants));
    json_object_set_new(o, "equivalent", json_integer(equivalent));
    json_object_set_new(o, "invalid", json_integer(invalid));
    json_object_set_new(o, "killed", json_integer(killed));
    json_object_set_new(o, "survivors", json_integer(survivors));
}

/* The share, cut (never rounded up) to four places, so a printed 0.9 is
 * never a share below 0.9. */
static double share_shown(double share)
{
    return floor(share * 10000.0 + 1e-9) / 10000.0;
}

static void put_task_line(FILE *f, const struct vat_task *t, const struct vat_strength *s,
                          int rc)
{
    json_t *o = json_object();
    json_object_set_new(o, "task_id", json_string(t->id));
    json_object_set_new(o, "template", json_string(t->tmpl->name));
    if (rc != 0) {
        json_object_set_new(o, "error", json_string(s->error));
    } else {
        put_counts(o, s->mutants, s->equivalent, s->invalid, s->killed, s->survivors);
        json_object_set_new(o, "share_killed", json_real(share_shown(vat_strength_share(s))));
        json_t *surv = json_array();
        for (size_t i = 0; i < s->surv.n; i++) {
            json_t *x = json_object();
            json_object_set_new(x, "kind", json_string(s->surv.v[i].kind));
            json_object_set_new(x, "mutant", json_string(s->surv.v[i].text));
            json_array_append_new(surv, x);
        }
        json_object_set_new(o, "survivors_list", surv);
    }
    char *text = vat_json_dumps(o);
    fprintf(f, "%s\n", text);
    free(text);
    json_decref(o);
}

/* Measures the rows of one template (sorted by task id) into p. */
static void measure_template(struct vat_strength_template *p, json_t *rows, const json_t *golds,
                             const char *root, FILE *task_lines)
{
    size_t n = json_array_size(rows);
    json_t **v = vat_xcalloc(n + 1, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(rows, i);
    qsort(v, n, sizeof *v, cmp_row_id);
    for (size_t i = 0; i < n; i++) {
        const char *id = json_string_value(json_object_get(v[i], "task_id"));
        struct vat_task t;
        vat_task_init(&t, p->tmpl, 0, root);
        snprintf(t.id, sizeof t.id, "%s", id);
        t.spec = vat_verifier_spec(v[i]);
        const char *gold = json_string_value(json_object_get(golds, id));
        if (!gold)
            gold = json_string_value(json_object_get(t.spec, "reference_sql"));
        t.gold = gold ? vat_xstrdup(gold) : NULL;
        struct vat_strength s = VAT_STRENGTH_INIT;
        int rc = vat_strength_task(&t, &s);
        p->tasks++;
        if (rc != 0) {
            p->failed++;
            if (!p->error[0])
                snprintf(p->error, sizeof p->error, "%s", s.error);
        } else {
            if (!p->example_task[0] && s.surv.n)
                snprintf(p->example_task, sizeof p->example_task, "%s", id);
            vat_strength_add(&p->s, &s);
        }
        if (task_lines)
            put_task_line(task_lines, &t, &s, rc);
        vat_strength_release(&s);
        vat_task_clear(&t);
    }
    free(v);
}

int vat_strength_corpus(const char *root, const char *only, FILE *task_lines,
                        struct vat_strength_report *r, struct vat_err *e)
{
    memset(r, 0, sizeof *r);
    json_t *ver = read_table(root, "verifiers", e);
    if (!ver)
        return -1;
    json_t *exp = read_table(root, "experience", e);
    if (!exp) {
        json_decref(ver);
        return -1;
    }
    /* task_id -> gold program, and the verifier rows per template */
    json_t *golds = json_object(), *per = json_object();
    size_t i;
    json_t *row;
    json_array_foreach(exp, i, row) {
        const char *id = json_string_value(json_object_get(row, "task_id"));
        const json_t *gold = json_object_get(row, "gold");
        if (id && json_is_string(gold))
            json_object_set(golds, id, (json_t *)gold);
    }
    int rc = 0;
    json_array_foreach(ver, i, row) {
        const char *id = json_string_value(json_object_get(row, "task_id"));
        const char *tname = json_string_value(json_object_get(row, "template"));
        const struct vat_template *tm = tname ? vat_template_find(tname) : NULL;
        if (!id || !tname) {
            rc = vat_err_set(e, "vat: a verifiers row of '%s' lacks task_id or template", root);
            break;
        }
        if (!tm) {
            rc = vat_err_set(e, "vat: task '%s' names unknown template '%s'", id, tname);
            break;
        }
        if (!measured_row(row) || !listed(only, tname))
            continue;
        json_t *list = json_object_get(per, tname);
        if (!list) {
            list = json_array();
            json_object_set_new(per, tname, list);
        }
        json_array_append(list, row);
    }
    if (rc == 0) {
        size_t nt = 0;
        while (vat_registry[nt])
            nt++;
        r->per = vat_xcalloc(nt + 1, sizeof *r->per);
        for (size_t k = 0; vat_registry[k]; k++) {
            json_t *list = json_object_get(per, vat_registry[k]->name);
            if (!list)
                continue;
            struct vat_strength_template *p = &r->per[r->n++];
            p->tmpl = vat_registry[k];
            measure_template(p, list, golds, root, task_lines);
        }
    }
    json_decref(golds);
    json_decref(per);
    json_decref(exp);
    json_decref(ver);
    return rc;
}

void vat_strength_report_release(struct vat_strength_report *r)
{
    for (size_t i = 0; i < r->n; i++)
        vat_strength_release(&r->per[i].s);
    free(r->per);
    r->per = NULL;
    r->n = 0;
}

json_t *vat_strength_template_json(const struct vat_strength_template *p, double target)
{
    const struct vat_strength *s = &p->s;
    double share = vat_strength_share(s);
    json_t *o = json_object();
    json_object_set_new(o, "template", json_string(p->tmpl->name));
    json_object_set_new(o, "family", json_string(p->tmpl->family));
    json_object_set_new(o, "tasks", json_integer(p->tasks));
    json_object_set_new(o, "failed_tasks", json_integer(p->failed));
    put_counts(o, s->mutants, s->equivalent, s->invalid, s->killed, s->survivors);
    json_object_set_new(o, "share_killed", json_real(share_shown(share)));
    json_object_set_new(o, "target", json_real(target));
    json_object_set_new(o, "passed", json_boolean(p->failed == 0 && share >= target));
    json_t *kinds = json_object();
    for (size_t k = 0; k < s->nkinds; k++) {
        const struct vat_strength_kind *x = &s->kind[k];
        json_t *c = json_object();
        put_counts(c, x->mutants, x->equivalent, x->invalid, x->killed, x->survivors);
        json_object_set_new(kinds, x->kind, c);
    }
    json_object_set_new(o, "kinds", kinds);
    if (s->surv.n) {
        const struct vat_mutant *m = &s->surv.v[0];
        json_t *ex = json_object();
        json_object_set_new(ex, "task_id", json_string(p->example_task));
        json_object_set_new(ex, "kind", json_string(m->kind));
        size_t len = strlen(m->text);
        /* a long query is cut after the change, so the change still shows */
        size_t keep = len <= 600 ? len : (m->offset + 200 < len ? m->offset + 200 : len);
        char *clip = vat_xasprintf("%.*s%s", (int)keep, m->text, keep < len ? "..." : "");
        json_object_set_new(ex, "mutant", json_string(clip));
        free(clip);
        json_object_set_new(o, "survivor_example", ex);
    } else {
        json_object_set_new(o, "survivor_example", json_null());
    }
    if (p->error[0])
        json_object_set_new(o, "error", json_string(p->error));
    return o;
}

/* progform.c — the program form of the analytics templates (see
 * progform.h). */
#include "progform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlgen.h"
#include "template.h"
#include "verifiers.h"

static const char *const pf_prefixes[32] = {
    "",      "eu_",   "us_",   "uk_",    "de_",   "fr_",     "apac_", "emea_",
    "latam_", "na_",  "q1_",   "q2_",    "q3_",   "q4_",     "h1_",   "h2_",
    "shop_", "web_",  "store_", "retail_", "b2b_", "b2c_",   "app_",  "pos_",
    "main_", "core_", "ops_",  "fin_",   "crm_",  "erp_",    "legacy_", "new_"};
static const char *const pf_suffixes[32] = {
    "",          "_2019",    "_2020",   "_2021",   "_2022",  "_2023",   "_2024",  "_2025",
    "_2026",     "_export",  "_raw",    "_snapshot", "_v2",  "_v3",     "_clean", "_latest",
    "_daily",    "_weekly",  "_monthly", "_extract", "_dump", "_copy",  "_backup", "_staging",
    "_final",    "_import",  "_archive", "_live",   "_tmp",   "_src",   "_tbl",   "_current"};

/* The names of task t: (table, out) from the permutation of the names
 * space (progform.h), the direction from the stream "form". */
static void names_of(const struct vat_task *t, const struct vat_progform *pf, struct vat_rng *r,
                     struct vat_pf_names *n)
{
    uint64_t q = vat_rng_permute(vat_rng_key(t->master_seed, t->tmpl->name, "pf-names"),
                                 VAT_PF_NAME_SPACE(pf), t->index);
    size_t out = (size_t)(q % pf->nouts);
    q /= pf->nouts;
    size_t base = (size_t)(q % pf->ntables);
    q /= pf->ntables;
    snprintf(n->table, sizeof n->table, "%s%s%s", pf_prefixes[q % 32], pf->tables[base],
             pf_suffixes[q / 32 % 32]);
    n->out = pf->outs[out];
    n->descending = vat_rng_chance(r, 0.5);
}

/* The stream "form": first the form (mixed only draws it, but the draw
 * is always taken so the names do not depend on the setting), then the
 * direction. */
static const char *form_draw(const struct vat_task *t, const struct vat_progform *pf,
                             struct vat_pf_names *n)
{
    struct vat_rng r;
    vat_rng_stream(&r, t->master_seed, t->tmpl->name, t->index, "form", t->attempt, NULL);
    bool sql = vat_rng_chance(&r, 0.5);
    if (n)
        names_of(t, pf, &r, n);
    if (t->n_fixtures < 1 || strcmp(t->fixture[0].format, "csv") != 0)
        return "value";
    const char *want = json_string_value(json_object_get(t->cfg, "answer_form"));
    if (want && strcmp(want, "value") == 0)
        return "value";
    if (want && strcmp(want, "sql") == 0)
        return "sql";
    return sql ? "sql" : "value";
}

const char *vat_progform_form(const struct vat_task *t, const struct vat_progform *pf)
{
    return pf ? form_draw(t, pf, NULL) : "value";
}

static const json_t *cell(const json_t *row, size_t i)
{
    return json_array_get(row, i);
}

json_t *vat_progform_rows_value(const json_t *rows, enum vat_an_result kind, struct vat_err *e)
{
    static const size_t want_cols[] = {1, 1, 2, 3};
    json_t *out = kind == VAT_AN_LIST ? json_array() : kind == VAT_AN_NUMBER ? NULL : json_object();
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row) {
        if (json_array_size(row) != want_cols[kind]) {
            vat_err_set(e, "row %zu has %zu columns, the answer's shape %zu", i + 1,
                        json_array_size(row), want_cols[kind]);
            goto fail;
        }
        const json_t *num = cell(row, want_cols[kind] - 1);
        const char *k1 = json_string_value(cell(row, 0)), *k2 = json_string_value(cell(row, 1));
        bool numeric = json_is_number(num);
        switch (kind) {
        case VAT_AN_NUMBER:
            if (i > 0 || !numeric) {
                vat_err_set(e, "row %zu: not a single number", i + 1);
                goto fail;
            }
            out = json_deep_copy(num);
            break;
        case VAT_AN_LIST:
            if (!k1) {
                vat_err_set(e, "row %zu: not a text item", i + 1);
                goto fail;
            }
            json_array_append_new(out, json_string(k1));
            break;
        case VAT_AN_OBJECT:
            if (!k1 || !numeric || json_object_get(out, k1)) {
                vat_err_set(e, "row %zu: a NULL or repeated key, or a non-numeric value", i + 1);
                goto fail;
            }
            json_object_set_new(out, k1, json_deep_copy(num));
            break;
        case VAT_AN_OBJECT_OF_OBJECTS: {
            if (!k1 || !k2 || !numeric) {
                vat_err_set(e, "row %zu: a NULL key or a non-numeric value", i + 1);
                goto fail;
            }
            json_t *inner = json_object_get(out, k1);
            if (!inner) {
                inner = json_object();
                json_object_set_new(out, k1, inner);
            }
            if (json_object_get(inner, k2)) {
                vat_err_set(e, "row %zu: key '%s'.'%s' repeats", i + 1, k1, k2);
                goto fail;
            }
            json_object_set_new(inner, k2, json_deep_copy(num));
            break;
        }
        }
    }
    if (!out)
        vat_err_set(e, "no row");
    return out;
fail:
    json_decref(out);
    return NULL;
}

static json_t *load_spec(const struct vat_progform *pf, const struct vat_pf_names *n)
{
    json_t *cols = json_array();
    for (size_t i = 0; i < pf->ncols; i++)
        json_array_append_new(cols, json_pack("[s,s]", pf->columns[i], pf->types[i]));
    return json_pack("{s:s, s:o}", "table", n->table, "columns", cols);
}

static void put_create(struct vat_buf *b, const struct vat_progform *pf,
                       const struct vat_pf_names *n)
{
    vat_buf_printf(b, "CREATE TABLE %s (\n", n->table);
    for (size_t i = 0; i < pf->ncols; i++)
        vat_buf_printf(b, "    %s %s%s\n", pf->columns[i], pf->types[i],
                       i + 1 < pf->ncols ? "," : "");
    vat_buf_puts(b, ");\n");
}

/* The prompt of the program form: the table, how the CSV loads, the
 * data, the question in the value form's words, the result's shape. */
static int build_prompt(struct vat_task *t, const struct vat_progform *pf,
                        const struct vat_pf_names *n, struct vat_err *e)
{
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_csv_read(&c, t->root, t->fixture[0].path, e) != 0)
        return -1;
    struct vat_buf b = VAT_BUF_INIT;
    char *q = pf->question(t), *shape = pf->shape(t, n);
    vat_buf_printf(&b, "The data below is loaded into a SQLite table `%s`:\n\n```sql\n", n->table);
    put_create(&b, pf, n);
    vat_buf_puts(&b, "```\n\n");
    vat_buf_puts(&b,
                 "How the CSV file loads: its header row gives the column names; every later "
                 "row becomes one table row, each cell inserted as text into the column of the "
                 "declared type, so SQLite's type affinity stores numbers as numbers ('12.50' in "
                 "a REAL column is 12.5); an empty cell is NULL.\n\n");
    vat_an_prompt_csv(&b, t, 0, &c);
    vat_csv_release(&c);
    /* The schema and the loading rules are all a query needs. */
    t->self_contained = true;
    vat_buf_printf(&b, "\nQuestion: %s\n\n", q);
    vat_buf_printf(&b,
                   "Task: write one SQLite SELECT statement over the table `%s` that answers the "
                   "question. %s ",
                   n->table, shape);
    vat_an_prompt_tolerance(&b, pf->rel_tol, pf->abs_tol);
    vat_buf_puts(&b, ".\n\n");
    vat_buf_puts(&b,
                 "The query is also run on other tables with the same columns and different rows "
                 "(loaded the same way), so it must compute the result from the data, not list "
                 "values.\n\nAnswer with one SQL SELECT statement (SQLite dialect) and nothing "
                 "else: no prose, no Markdown fence; a trailing semicolon is optional.\n");
    free(q);
    free(shape);
    free(t->prompt);
    t->prompt = vat_buf_detach(&b);
    return 0;
}

static int write_variants(struct vat_task *t, const struct vat_progform *pf, struct vat_err *e)
{
    if (pf->nvariants < 2 || pf->nvariants + t->n_fixtures > VAT_MAX_FIXTURES)
        return vat_err_set(e, "%s: %d variant fixtures do not fit", t->id, pf->nvariants);
    for (int k = 1; k <= pf->nvariants; k++) {
        char purpose[24], suffix[24];
        snprintf(purpose, sizeof purpose, "variant%d", k);
        snprintf(suffix, sizeof suffix, ".v%d.csv", k);
        struct vat_rng r;
        vat_rng_stream(&r, t->master_seed, t->tmpl->name, t->index, purpose, t->attempt, NULL);
        struct vat_csv c = VAT_CSV_INIT;
        int rc = pf->variant(t, &r, k, &c, e);
        if (rc == 0 && (c.nrows < 2 || c.row[0].n != pf->ncols))
            rc = vat_err_set(e, "%s: variant %d has no rows or another header", t->id, k);
        if (rc == 0 && vat_an_write_csv(t, &c, suffix, "variant", e) < 0)
            rc = -1;
        vat_csv_release(&c);
        if (rc != 0)
            return -1;
    }
    return 0;
}

int vat_progform_apply(struct vat_task *t, const struct vat_progform *pf, struct vat_err *e)
{
    if (t->n_fixtures != 1)
        return vat_err_set(e, "%s: the program form needs exactly one main fixture", t->id);
    json_t *value = json_loads(t->gold, JSON_DECODE_ANY, NULL);
    if (!value)
        return vat_err_set(e, "%s: the value gold is not JSON", t->id);
    if (write_variants(t, pf, e) != 0) {
        json_decref(value);
        return -1;
    }
    struct vat_pf_names names;
    form_draw(t, pf, &names);
    const char *tabs[1] = {names.table};
    json_t *spec = vat_sqlgen_spec(t, tabs, 1, pf->ordered, pf->rel_tol, pf->abs_tol);
    json_object_set_new(spec, "load", load_spec(pf, &names));
    char *gold = pf->gold_sql(t, &names), *trap = pf->trap_sql(t, &names);
    json_object_set_new(spec, "reference_sql", json_string(gold));
    /* The value form's answer: what the gold query's rows on the main
     * fixture must read as (vat_progform_confirm). */
    json_object_set(spec, "value_answer", value);
    json_decref(t->spec);
    t->spec = spec;

    int rc = -1;
    json_t *gr = NULL, *tr = NULL, *derived = NULL;
    struct vat_err ae;
    if (vat_sql_gold_admissible(spec, t->root, &ae) != 0) {
        vat_err_set(e, "%s: %s", t->id, ae.msg);
        goto out;
    }
    if (!(gr = vat_sqlgen_run_all(t, gold, e)) ||
        vat_sqlgen_variants_differ(t, gr, pf->ordered, pf->rel_tol, pf->abs_tol, e) != 0)
        goto out;
    /* The second derivation: the value answer, derived from the file by
     * the template's own reader, is what the gold query returns. */
    if (!(derived = vat_progform_rows_value(json_array_get(gr, 0), pf->kind, &ae))) {
        vat_err_set(e, "%s: the gold query's rows: %s", t->id, ae.msg);
        goto out;
    }
    if (vat_an_agree("gold query vs value answer", value, derived, pf->rel_tol, pf->abs_tol, &ae) !=
        0) {
        vat_err_set(e, "%s: %s", t->id, ae.msg);
        goto out;
    }
    /* The trap is armed on every fixture, so no variant lets it pass. */
    if (!(tr = vat_sqlgen_run_all(t, trap, e)))
        goto out;
    for (size_t i = 0; i < json_array_size(gr); i++)
        if (vat_sqlgen_rows_equal(json_array_get(gr, i), json_array_get(tr, i), pf->ordered,
                                  pf->rel_tol, pf->abs_tol, NULL, 0)) {
            vat_err_set(e, "%s: the trap query gives gold's rows on fixture %zu", t->id, i);
            goto out;
        }
    if (build_prompt(t, pf, &names, e) != 0)
        goto out;
    free(t->gold);
    free(t->trap);
    free(t->malformed);
    t->gold = gold;
    t->trap = trap;
    t->malformed = NULL;
    gold = trap = NULL;
    t->answer_form = "sql";
    rc = 0;
out:
    free(gold);
    free(trap);
    json_decref(value);
    json_decref(gr);
    json_decref(tr);
    json_decref(derived);
    return rc;
}

int vat_progform_confirm(const struct vat_task *t, const struct vat_progform *pf,
                         struct vat_err *e)
{
    const json_t *value = json_object_get(t->spec, "value_answer");
    if (!value || !t->gold || t->n_fixtures < 1)
        return vat_err_set(e, "%s: the program form lacks its value answer or gold", t->id);
    struct vat_verdict v;
    json_t *rows = vat_sql_run(t->spec, t->root, t->fixture[0].path, t->gold, strlen(t->gold), &v);
    if (!rows)
        return vat_err_set(e, "%s: the gold query on the main fixture: %s: %s", t->id, v.code,
                           v.reason);
    struct vat_err ae;
    json_t *derived = vat_progform_rows_value(rows, pf->kind, &ae);
    json_decref(rows);
    if (!derived)
        return vat_err_set(e, "%s: the gold query's rows: %s", t->id, ae.msg);
    int rc = vat_an_agree("gold query vs value answer", value, derived, pf->rel_tol, pf->abs_tol,
                          &ae);
    json_decref(derived);
    return rc == 0 ? 0 : vat_err_set(e, "%s: %s", t->id, ae.msg);
}

/* progform.c — the program form of the analytics templates (see
 * progform.h). */
#include "progform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "level.h"
#include "prompt.h"
#include "sqlgen.h"
#include "template.h"
#include "trapmod.h"
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
void vat_progform_compose(const struct vat_progform *pf, uint64_t q, struct vat_pf_names *n)
{
    q %= VAT_PF_NAME_SPACE(pf);
    size_t out = (size_t)(q % pf->nouts);
    q /= pf->nouts;
    size_t base = (size_t)(q % pf->ntables);
    q /= pf->ntables;
    snprintf(n->table, sizeof n->table, "%s%s%s", pf_prefixes[q % 32], pf->tables[base],
             pf_suffixes[q / 32 % 32]);
    n->out = pf->outs[out];
    n->descending = false;
}

static void names_of(const struct vat_task *t, const struct vat_progform *pf, struct vat_rng *r,
                     struct vat_pf_names *n)
{
    vat_progform_compose(pf,
                         vat_rng_permute(vat_rng_key(t->master_seed, t->tmpl->name, "pf-names"),
                                         VAT_PF_NAME_SPACE(pf), t->index),
                         n);
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
    if (t->n_fixtures < 1 || (strcmp(t->fixture[0].format, "csv") != 0 &&
                              !(pf->variant_db && strcmp(t->fixture[0].format, "sqlite") == 0)))
        return "value";
    const char *want = json_string_value(json_object_get(t->cfg, "answer_form"));
    if (want && strcmp(want, "value") == 0)
        return "value";
    if (want && strcmp(want, "sql") == 0)
        return "sql";
    return sql ? "sql" : "value";
}

void vat_progform_names(const struct vat_task *t, const struct vat_progform *pf,
                        struct vat_pf_names *n)
{
    form_draw(t, pf, n);
}

const char *vat_progform_form(const struct vat_task *t, const struct vat_progform *pf)
{
    const char *form = pf ? form_draw(t, pf, NULL) : "value";
    /* A single-turn value question may only ask about rows its prompt
     * shows: over a fixture it shows in part the question is asked as a
     * program, whatever answer_form says. */
    if (pf && strcmp(form, "value") == 0 && !t->self_contained &&
        t->n_fixtures >= 1 &&
        (strcmp(t->fixture[0].format, "csv") == 0 ||
         (pf->variant_db && strcmp(t->fixture[0].format, "sqlite") == 0)))
        return "sql";
    return form;
}

static const json_t *cell(const json_t *row, size_t i)
{
    return json_array_get(row, i);
}

json_t *vat_progform_rows_value(const json_t *rows, enum vat_an_result kind, struct vat_err *e)
{
    static const size_t want_cols[] = {1, 1, 2, 3, 2};
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
        case VAT_AN_OBJECT_OF_STRINGS:
            if (!k1 || !k2 || json_object_get(out, k1)) {
                vat_err_set(e, "row %zu: a NULL or repeated key, or a value that is not text",
                            i + 1);
                goto fail;
            }
            json_object_set_new(out, k1, json_string(k2));
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

/* The table's columns and types as the CSV holds them: the template's,
 * and after one of them a column the armed trap modules planted (the
 * look-alike after the amount), of its type. */
static json_t *load_spec(const struct vat_task *t, const struct vat_progform *pf,
                         const struct vat_pf_names *n)
{
    json_t *cols = json_array();
    for (size_t i = 0; i < pf->ncols; i++) {
        json_array_append_new(cols, json_pack("[s,s]", pf->columns[i], pf->types[i]));
        const char *extra = vat_trapmod_column_after(t, pf->columns[i]);
        if (extra)
            json_array_append_new(cols, json_pack("[s,s]", extra, pf->types[i]));
    }
    const char *last[2];
    size_t nlast = vat_trapmod_columns_last(t, last);
    for (size_t k = 0; k < nlast; k++)
        json_array_append_new(cols, json_pack("[s,s]", last[k], "TEXT"));
    return json_pack("{s:s, s:o}", "table", n->table, "columns", cols);
}

static void put_create(struct vat_buf *b, const struct vat_task *t,
                       const struct vat_progform *pf, const struct vat_pf_names *n)
{
    json_t *spec = load_spec(t, pf, n);
    const json_t *cols = json_object_get(spec, "columns");
    vat_buf_printf(b, "CREATE TABLE %s (\n", n->table);
    for (size_t i = 0; i < json_array_size(cols); i++) {
        const json_t *c = json_array_get(cols, i);
        vat_buf_printf(b, "    %s %s%s\n", json_string_value(json_array_get(c, 0)),
                       json_string_value(json_array_get(c, 1)),
                       i + 1 < json_array_size(cols) ? "," : "");
    }
    vat_buf_puts(b, ");\n");
    json_decref(spec);
}

/* The program form's own wording, both styles: the table, how the CSV
 * loads, the task, the held-out tables and the answer's form. */
/* What a program-form task is about, for the opening. */
static const char pf_topic[] = "[[a query I need|our reporting database|a report query]]";
static const char pf_intro_explicit[] =
    "[[The data below is loaded into a SQLite table `{table}`|The CSV file below is loaded "
    "into the SQLite table `{table}`|A SQLite table `{table}` holds the data below|The rows "
    "below are loaded into one SQLite table, `{table}`|The file below becomes the SQLite table "
    "`{table}`]][[:|, declared as follows:|, with this definition:]]";
static const char pf_intro_natural[] =
    "[[We load|I load|Our pipeline loads|The nightly job loads]] [[this CSV|the file "
    "below|this export]] into [[a|the]] SQLite table `{table}`[[:|, declared like this:|; "
    "here is its definition:]]";
static const char pf_load_explicit[] =
    "[[How the CSV file loads|Loading rules|How the file becomes the table|How the rows are "
    "loaded]]: [[its header row gives the column names|the header row names the "
    "columns|column names come from the header row]]; [[every later row becomes one table "
    "row|each following row is one table row|each row after it is one row of the table]], "
    "[[each cell inserted as text into the column of the declared type|every cell inserted as "
    "text into its column of the declared type|its cells inserted as text into columns of the "
    "declared types]], [[so SQLite's type affinity stores numbers as numbers ('12.50' in a REAL "
    "column is 12.5)|and SQLite's type affinity turns numeric text into numbers (a REAL column "
    "reads '12.50' as 12.5)|which through SQLite's type affinity makes numeric text a number "
    "('12.50' lands in a REAL column as 12.5)]]; [[an empty cell is NULL|an empty cell becomes NULL|empty cells are "
    "NULL]].";
static const char pf_load_natural[] =
    "[[Each|Every]] line [[after the header|below the header|under the header]] becomes one "
    "row, [[cells go in as text and |]][[SQLite stores numbers in the numeric columns as "
    "numbers|the numeric columns hold numbers|numbers land as numbers in the numeric "
    "columns]][[, and|;]] an empty cell [[is|becomes|turns into]] NULL.";
static const char pf_task_explicit[] =
    "[[Task: write|Write|Task: give|Give]] [[one|a single]] SQLite SELECT statement over [[the "
    "table `{table}`|`{table}`]] that answers the question.";
static const char pf_task_natural[] =
    "[[[[Could you write|Can you give me]] [[a|one]] SQLite [[query|SELECT]] over `{table}` "
    "[[for this|that answers it|that does this]]?|[[I need|Please write]] [[a|one]] SQLite "
    "[[query|SELECT]] over `{table}` [[for this|that answers it|that does this]].]]";
static const char pf_task_db_explicit[] =
    "[[Task: write|Write|Task: give|Give]] [[one|a single]] SQLite SELECT statement over these "
    "tables that answers the question.";
static const char pf_task_db_natural[] =
    "[[[[Could you write|Can you give me]] [[a|one]] SQLite [[query|SELECT]] over these tables "
    "[[for this|that answers it]]?|[[I need|Please write]] [[a|one]] SQLite [[query|SELECT]] "
    "over these tables [[for this|that answers it]].]]";
static const char pf_heldout_explicit[] =
    "[[The query is also run on|The same query also runs on|It is also run on|The query "
    "also goes against]] other {where} with the same {same} and [[different|other]] "
    "rows{loaded}, [[so it must compute the result from the data|so the result has to come "
    "from the data|so it must derive the result from the rows]], [[not list values|not list "
    "the values|never list values]].";
static const char pf_heldout_natural[] =
    "[[It will also run|We will run it too|The same query runs|We reuse it]] on other "
    "{where} with the same {same} and [[different|other|new]] rows, so it [[has to|must|should]] "
    "[[compute the result from the data|work the result out from the data]][[, not list "
    "values| rather than list values| instead of listing values]].";
static const char pf_answer_explicit[] =
    "[[Answer with one SQL SELECT statement (SQLite dialect) and nothing else: no prose, no "
    "Markdown fence|Reply with exactly one SQL SELECT statement (SQLite dialect), without "
    "prose or a Markdown fence|Give one SQL SELECT statement (SQLite dialect) as the whole "
    "answer: no explanation, no fence|Your answer is one SQL SELECT statement in the SQLite "
    "dialect, alone: no prose, no Markdown|Return one SQL SELECT statement (SQLite dialect) "
    "and nothing around it]]; [[a trailing semicolon|the final semicolon|a semicolon at the "
    "end]] is optional.";
static const char pf_answer_natural[] =
    "[[Reply with just the SQLite SELECT statement, no explanation or fence|Send me only the "
    "SELECT query (SQLite) as your answer, nothing around it|Answer with one SQLite SELECT and "
    "nothing else|Just the SQL in your reply, please: a single SQLite SELECT statement, no "
    "prose|In your answer I only need the SELECT statement (SQLite)]].";

/* The parts of the program form's prompt that follow the data: the
 * question, the task and the result's shape, the held-out tables and the
 * answer's form. */
static void put_ask(struct vat_buf *b, struct vat_task *t, const struct vat_progform *pf,
                    const struct vat_pf_names *n, bool db)
{
    bool nat = vat_prompt_natural(t);
    char *q = pf->question(t), *shape = pf->shape(t, n);
    const char *kv[] = {"table", n->table,
                        "where", db ? "databases" : "tables",
                        "same", db ? "tables and columns" : "columns",
                        "loaded", db ? "" : " (loaded the same way)",
                        NULL};
    vat_buf_puts(b, "\n");
    /* an explicit question may open with the label itself */
    if (!nat && strncmp(q, "Question: ", 10) != 0)
        vat_buf_puts(b, "Question: ");
    vat_buf_printf(b, "%s\n\n", q);
    vat_prompt_say(b, t, 'k',
                   db ? (nat ? pf_task_db_natural : pf_task_db_explicit)
                      : (nat ? pf_task_natural : pf_task_explicit),
                   kv);
    vat_buf_printf(b, " %s", shape);
    if (!nat) {
        vat_buf_putc(b, ' ');
        vat_prompt_tolerance(b, t, pf->rel_tol, pf->abs_tol);
    }
    vat_buf_puts(b, "\n\n");
    vat_prompt_say(b, t, 'h', nat ? pf_heldout_natural : pf_heldout_explicit, kv);
    vat_buf_puts(b, "\n\n");
    vat_prompt_say(b, t, 'a', nat ? pf_answer_natural : pf_answer_explicit, kv);
    vat_buf_puts(b, "\n");
    free(q);
    free(shape);
}

/* The prompt of the program form: the table, how the CSV loads, the
 * data, the question in the value form's words, the result's shape. */
static int build_prompt(struct vat_task *t, const struct vat_progform *pf,
                        const struct vat_pf_names *n, struct vat_err *e)
{
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_csv_read(&c, t->root, t->fixture[0].path, e) != 0)
        return -1;
    bool nat = vat_prompt_natural(t);
    struct vat_buf b = VAT_BUF_INIT;
    const char *kv[] = {"table", n->table, "topic", pf_topic, NULL};
    vat_prompt_open(&b, t, kv);
    vat_prompt_say(&b, t, 'd', nat ? pf_intro_natural : pf_intro_explicit, kv);
    vat_buf_puts(&b, "\n\n```sql\n");
    put_create(&b, t, pf, n);
    vat_buf_puts(&b, "```\n\n");
    vat_prompt_say(&b, t, 'g', nat ? pf_load_natural : pf_load_explicit, kv);
    vat_buf_puts(&b, "\n\n");
    vat_an_prompt_csv(&b, t, 0, &c);
    vat_csv_release(&c);
    /* The schema and the loading rules are all a query needs. */
    t->self_contained = true;
    put_ask(&b, t, pf, n, false);
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

/* ---- a SQLite main fixture (join_aggregate) ------------------------------ */

#define PF_MAX_DB_TABLES 8

/* The main database's tables in creation order, their program-form names
 * (db_table renamed to n->table, the others as they are) and the schema
 * with that name. */
struct pf_db {
    size_t n;
    char *from[PF_MAX_DB_TABLES];
    const char *to[PF_MAX_DB_TABLES];
    char *schema;
};

static void pf_db_release(struct pf_db *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->from[i]);
    free(d->schema);
    memset(d, 0, sizeof *d);
}

static bool pf_is_db(const struct vat_task *t, const struct vat_progform *pf)
{
    return pf->variant_db && t->n_fixtures >= 1 && strcmp(t->fixture[0].format, "sqlite") == 0;
}

/* Reads the tables and CREATE statements of the main database.  Only
 * plain tables (their automatic indexes aside) are supported: a CREATE
 * statement is rewritten by its leading "CREATE TABLE <name>". */
static int pf_db_read(const struct vat_task *t, const struct vat_progform *pf,
                      const struct vat_pf_names *n, struct pf_db *d, struct vat_err *e)
{
    const char *rel = t->fixture[0].path;
    sqlite3 *db = NULL;
    if (vat_sqlite_open_ro(t->root, rel, &db, e) != 0)
        return -1;
    sqlite3_stmt *st = NULL;
    struct vat_buf b = VAT_BUF_INIT;
    bool renamed = false;
    int rc = -1, step = SQLITE_ERROR;
    if (sqlite3_prepare_v2(db, "SELECT type, name, sql FROM sqlite_master ORDER BY rowid", -1, &st,
                           NULL) != SQLITE_OK) {
        vat_err_set(e, "%s: '%s': %s", t->id, rel, sqlite3_errmsg(db));
        goto out;
    }
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *sql = (const char *)sqlite3_column_text(st, 2);
        if (!sql)
            continue; /* an automatic index of a table's key */
        size_t nl = name ? strlen(name) : 0;
        if (!type || !name || strcmp(type, "table") != 0 || d->n == PF_MAX_DB_TABLES ||
            strncmp(sql, "CREATE TABLE ", 13) != 0 || strncmp(sql + 13, name, nl) != 0 ||
            (sql[13 + nl] != ' ' && sql[13 + nl] != '(')) {
            vat_err_set(e, "%s: '%s': the program form copies plain tables only, not '%s'",
                        t->id, rel, name ? name : "?");
            goto out;
        }
        bool ren = strcmp(name, pf->db_table) == 0;
        renamed |= ren;
        d->from[d->n] = vat_xstrdup(name);
        d->to[d->n] = ren ? n->table : d->from[d->n];
        vat_buf_printf(&b, "CREATE TABLE %s%s;\n", d->to[d->n], sql + 13 + nl);
        d->n++;
    }
    if (step != SQLITE_DONE) {
        vat_err_set(e, "%s: '%s': %s", t->id, rel, sqlite3_errmsg(db));
        goto out;
    }
    if (!renamed) {
        vat_err_set(e, "%s: '%s' has no table '%s'", t->id, rel, pf->db_table);
        goto out;
    }
    d->schema = vat_buf_detach(&b);
    rc = 0;
out:
    sqlite3_finalize(st);
    vat_sqlite_close_ro(db);
    vat_buf_release(&b);
    return rc;
}

/* Records a written database's rows (all tables) and "table.column"
 * names on f, as the SQL family's fixtures record them. */
static int pf_db_describe(const struct vat_task *t, struct vat_fixture *f, const struct pf_db *d,
                          struct vat_err *e)
{
    sqlite3 *db = NULL;
    if (vat_sqlite_open_ro(t->root, f->path, &db, e) != 0)
        return -1;
    json_decref(f->columns);
    f->columns = json_array();
    f->rows = 0;
    int rc = 0;
    for (size_t i = 0; i < d->n && rc == 0; i++) {
        char *q = sqlite3_mprintf("SELECT COUNT(*) FROM \"%w\"", d->to[i]);
        char *p = sqlite3_mprintf("PRAGMA table_info(\"%w\")", d->to[i]);
        sqlite3_stmt *st = NULL;
        if (!q || !p || sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK ||
            sqlite3_step(st) != SQLITE_ROW)
            rc = -1;
        else
            f->rows += (long)sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        st = NULL;
        if (rc == 0 && sqlite3_prepare_v2(db, p, -1, &st, NULL) != SQLITE_OK)
            rc = -1;
        while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
            const char *col = (const char *)sqlite3_column_text(st, 1);
            json_array_append_new(f->columns, json_sprintf("%s.%s", d->to[i], col ? col : ""));
        }
        sqlite3_finalize(st);
        sqlite3_free(q);
        sqlite3_free(p);
    }
    if (rc != 0)
        vat_err_set(e, "%s: '%s': %s", t->id, f->path, sqlite3_errmsg(db));
    vat_sqlite_close_ro(db);
    return rc;
}

/* The sha256 of a fixture rewritten after the pipeline took its digest
 * (read beneath the root as every fixture read is, no link followed; in a
 * draw the bytes and the digest stay in the file memo for the readers
 * after). */
static int pf_rehash(const struct vat_task *t, struct vat_fixture *f, struct vat_err *e)
{
    return vat_file_sha256(t->root, f->path, NULL, 0, f->sha256, e);
}

/* Rewrites the main database with the program form's table names: the
 * same schema and rows (copied value by value, storage order), written to
 * a temporary file and renamed into place. */
static int pf_db_rename_main(struct vat_task *t, const struct pf_db *d, struct vat_err *e)
{
    struct vat_fixture *f = &t->fixture[0];
    sqlite3 *src = NULL;
    if (vat_sqlite_open_ro(t->root, f->path, &src, e) != 0)
        return -1;
    struct vat_sqlw w;
    if (vat_sqlw_open(&w, t->root, f->path, d->schema, e) != 0) {
        vat_sqlite_close_ro(src);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < d->n && rc == 0; i++) {
        char *q = sqlite3_mprintf("SELECT * FROM \"%w\"", d->from[i]);
        sqlite3_stmt *sel = NULL, *ins = NULL;
        if (!q || sqlite3_prepare_v2(src, q, -1, &sel, NULL) != SQLITE_OK) {
            rc = vat_err_set(e, "%s: '%s': %s", t->id, f->path, sqlite3_errmsg(src));
        } else {
            int nc = sqlite3_column_count(sel);
            struct vat_buf b = VAT_BUF_INIT;
            vat_buf_printf(&b, "INSERT INTO %s VALUES (", d->to[i]);
            for (int c = 0; c < nc; c++)
                vat_buf_puts(&b, c ? ", ?" : "?");
            vat_buf_putc(&b, ')');
            if (sqlite3_prepare_v2(w.db, b.data, -1, &ins, NULL) != SQLITE_OK)
                rc = vat_err_set(e, "%s: '%s': %s", t->id, f->path, sqlite3_errmsg(w.db));
            vat_buf_release(&b);
            int step = SQLITE_DONE;
            while (rc == 0 && (step = sqlite3_step(sel)) == SQLITE_ROW) {
                for (int c = 0; c < nc; c++)
                    sqlite3_bind_value(ins, c + 1, sqlite3_column_value(sel, c));
                if (sqlite3_step(ins) != SQLITE_DONE || sqlite3_reset(ins) != SQLITE_OK)
                    rc = vat_err_set(e, "%s: '%s': %s", t->id, f->path, sqlite3_errmsg(w.db));
            }
            if (rc == 0 && step != SQLITE_DONE)
                rc = vat_err_set(e, "%s: '%s': %s", t->id, f->path, sqlite3_errmsg(src));
        }
        sqlite3_finalize(sel);
        sqlite3_finalize(ins);
        sqlite3_free(q);
    }
    vat_sqlite_close_ro(src);
    if (rc != 0) {
        vat_sqlw_abort(&w);
        return -1;
    }
    if (vat_sqlw_commit(&w, e) != 0 || pf_rehash(t, f, e) != 0)
        return -1;
    return pf_db_describe(t, f, d, e);
}

/* Variant k of a database: the main database's schema (program-form
 * names), rows from the template's variant_db, drawn from the stream
 * "variant<k>" of the task. */
static int pf_db_variants(struct vat_task *t, const struct vat_progform *pf,
                          const struct vat_pf_names *n, const struct pf_db *d, struct vat_err *e)
{
    if (pf->nvariants < 2 || pf->nvariants + t->n_fixtures > VAT_MAX_FIXTURES)
        return vat_err_set(e, "%s: %d variant fixtures do not fit", t->id, pf->nvariants);
    for (int k = 1; k <= pf->nvariants; k++) {
        char purpose[24], suffix[24];
        snprintf(purpose, sizeof purpose, "variant%d", k);
        snprintf(suffix, sizeof suffix, ".v%d.sqlite", k);
        struct vat_rng r;
        vat_rng_stream(&r, t->master_seed, t->tmpl->name, t->index, purpose, t->attempt, NULL);
        char *rel = vat_task_fixture_relpath(t, suffix);
        struct vat_sqlw w;
        int rc = vat_sqlw_open(&w, t->root, rel, d->schema, e);
        if (rc == 0 && pf->variant_db(t, &r, k, n, &w, e) != 0) {
            /* a failed insert poisons the writer and keeps its message,
             * which commit reports (as vat_sqlgen_write_set does) */
            if (!w.db)
                vat_sqlw_commit(&w, e);
            else
                vat_sqlw_abort(&w);
            rc = -1;
        } else if (rc == 0) {
            rc = vat_sqlw_commit(&w, e);
        }
        if (rc == 0)
            rc = pf_db_describe(t, vat_task_add_fixture(t, rel, "sqlite", "variant"), d, e);
        free(rel);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* The single mistakes of a compound template (t->traps[]) as SQL, each
 * armed on every fixture as the combined trap is (other rows than gold's,
 * gr), so no variant lets one pass.  Writes sql[i] for t->traps[i] (new
 * strings).  0, or -1 with e set; sql[] then holds what was written, for
 * the caller to free. */
static int traps_as_sql(const struct vat_task *t, const struct vat_progform *pf,
                        const struct vat_pf_names *n, const json_t *gr, char **sql,
                        struct vat_err *e)
{
    bool own = false;
    for (int i = 0; i < t->n_traps; i++)
        own |= t->traps[i].module == 0;
    if (own && !pf->traps_sql)
        return vat_err_set(e, "%s: %d named traps but no traps_sql: they would stay values",
                           t->id, t->n_traps);
    for (int i = 0; i < t->n_traps; i++) {
        const char *name = t->traps[i].name ? t->traps[i].name : "";
        if (t->traps[i].module) {
            /* a trap module's mistake: gold without that module's cleaning */
            char *raw = pf->gold_sql(t, n);
            sql[i] = vat_trapmod_wrap_sql(t, pf, n->table, raw, t->traps[i].module);
            free(raw);
        } else if (!(sql[i] = pf->traps_sql(t, n, name)))
            return vat_err_set(e, "%s: trap '%s' has no SQL", t->id, name);
        json_t *tr = vat_sqlgen_run_all(t, sql[i], e);
        if (!tr)
            return -1;
        for (size_t k = 0; k < json_array_size(gr); k++)
            if (vat_sqlgen_rows_equal(json_array_get(gr, k), json_array_get(tr, k), pf->ordered,
                                      pf->rel_tol, pf->abs_tol, NULL, 0)) {
                json_decref(tr);
                return vat_err_set(e, "%s: the query of trap '%s' gives gold's rows on fixture %zu",
                                   t->id, name, k);
            }
        json_decref(tr);
    }
    return 0;
}

/* The prompt of the program form over a database: its tables, what they
 * hold, the schema and rows, the question in the value form's words, the
 * result's shape. */
static int build_prompt_db(struct vat_task *t, const struct vat_progform *pf,
                           const struct vat_pf_names *n, const struct pf_db *d, struct vat_err *e)
{
    struct vat_buf data = VAT_BUF_INIT;
    bool cut = false;
    if (vat_sqlgen_render(t->root, t->fixture[0].path, d->to, d->n, vat_task_inline_cap(t), &data,
                          &cut, e) != 0) {
        vat_buf_release(&data);
        return -1;
    }
    struct vat_buf b = VAT_BUF_INIT;
    const char *okv[] = {"topic", pf_topic, NULL};
    vat_prompt_open(&b, t, okv);
    vat_buf_printf(&b, "The SQLite database `%s` holds %zu tables: ", t->fixture[0].path, d->n);
    for (size_t i = 0; i < d->n; i++)
        vat_buf_printf(&b, "%s`%s`", i == 0 ? "" : i + 1 < d->n ? ", " : " and ", d->to[i]);
    char *about = pf->db_about ? pf->db_about(t, n) : NULL;
    vat_buf_printf(&b, ".%s%s\n\nThe schema and %s (as SQL):\n\n```sql\n", about ? " " : "",
                   about ? about : "", cut ? "the leading rows of each table" : "all rows");
    vat_buf_putn(&b, data.data, data.len);
    vat_buf_puts(&b, "```\n");
    if (cut)
        vat_buf_printf(&b, "\nOnly the leading rows fit here; the query runs on every row of "
                           "the database `%s`.\n",
                       t->fixture[0].path);
    vat_buf_release(&data);
    /* a program needs the schema, not every row (docs/tables.md), as
     * for a CSV in the program form */
    t->self_contained = true;
    put_ask(&b, t, pf, n, true);
    free(about);
    free(t->prompt);
    t->prompt = vat_buf_detach(&b);
    return 0;
}

/* The database half of vat_progform_apply: the main database renamed,
 * then its variants. */
static int pf_db_apply(struct vat_task *t, const struct vat_progform *pf,
                       const struct vat_pf_names *n, struct pf_db *d, struct vat_err *e)
{
    if (pf_db_read(t, pf, n, d, e) != 0 || pf_db_rename_main(t, d, e) != 0)
        return -1;
    return pf_db_variants(t, pf, n, d, e);
}

int vat_progform_apply(struct vat_task *t, const struct vat_progform *pf, struct vat_err *e)
{
    if (t->n_fixtures != 1)
        return vat_err_set(e, "%s: the program form needs exactly one main fixture", t->id);
    json_t *value = json_loads(t->gold, JSON_DECODE_ANY, NULL);
    if (!value)
        return vat_err_set(e, "%s: the value gold is not JSON", t->id);
    struct vat_pf_names names;
    form_draw(t, pf, &names);
    struct pf_db db = {0};
    bool is_db = pf_is_db(t, pf);
    if (is_db ? pf_db_apply(t, pf, &names, &db, e) != 0 : write_variants(t, pf, e) != 0) {
        pf_db_release(&db);
        json_decref(value);
        return -1;
    }
    const char *tabs[1] = {names.table};
    json_t *spec = is_db ? vat_sqlgen_spec(t, db.to, db.n, pf->ordered, pf->rel_tol, pf->abs_tol)
                         : vat_sqlgen_spec(t, tabs, 1, pf->ordered, pf->rel_tol, pf->abs_tol);
    if (!is_db)
        json_object_set_new(spec, "load", load_spec(t, pf, &names));
    char *gold = vat_progform_gold_sql(t, pf, &names), *trap = pf->trap_sql(t, &names);
    if (t->trapmods) {
        /* the template's own mistake, with the modules cleaned as gold is */
        char *raw = trap;
        trap = vat_trapmod_wrap_sql(t, pf, names.table, raw, 0);
        free(raw);
    }
    json_object_set_new(spec, "reference_sql", json_string(gold));
    /* The value form's answer: what the gold query's rows on the main
     * fixture must read as (vat_progform_confirm). */
    json_object_set(spec, "value_answer", value);
    json_decref(t->spec);
    t->spec = spec;

    int rc = -1;
    json_t *gr = NULL, *tr = NULL, *derived = NULL;
    char *tsql[VAT_MAX_TRAPS] = {0};
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
    if (traps_as_sql(t, pf, &names, gr, tsql, e) != 0)
        goto out;
    /* The program form's prompt replaces the value form's, in the same
     * style; the record says what it drew. */
    t->phrasing[0] = 0;
    if ((is_db ? build_prompt_db(t, pf, &names, &db, e) : build_prompt(t, pf, &names, e)) != 0)
        goto out;
    vat_trapmod_prompt(t);
    for (int i = 0; i < t->n_traps; i++) {
        free(t->traps[i].answer);
        t->traps[i].answer = tsql[i];
        tsql[i] = NULL;
    }
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
    pf_db_release(&db);
    for (int i = 0; i < VAT_MAX_TRAPS; i++)
        free(tsql[i]);
    free(gold);
    free(trap);
    json_decref(value);
    json_decref(gr);
    json_decref(tr);
    json_decref(derived);
    return rc;
}

char *vat_progform_gold_sql(const struct vat_task *t, const struct vat_progform *pf,
                            const struct vat_pf_names *n)
{
    char *raw = pf->gold_sql(t, n);
    if (!t->trapmods)
        return raw;
    char *sql = vat_trapmod_wrap_sql(t, pf, n->table, raw, 0);
    free(raw);
    return sql;
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

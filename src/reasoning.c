/* reasoning.c — the worked completion of a task (see reasoning.h).
 *
 * The reasoning is assembled from what the task holds, never from a
 * template's prose: the params the prompt states, the main fixture's
 * size, the gold answer's groups and values, the trap's answer beside
 * gold, and for programs what the gold and the trap produce on the main
 * fixture or on an example line the prompt shows.  So it is specific to
 * the task, true by construction, and quotes nothing the prompt hides. */
#include "reasoning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "tables.h"
#include "template.h"
#include "verifiers.h"

/* At most this many bytes of a quoted value, a line or a row. */
#define QUOTE_MAX 72
/* At most this many keys listed. */
#define KEYS_MAX 8

/* Appends s (n bytes), cut at QUOTE_MAX with "...", backticks and line
 * breaks made harmless: a quote must never open or close a fence, nor
 * end the line it is on. */
static void put_quoted(struct vat_buf *b, const char *s, size_t n)
{
    size_t cut = n > QUOTE_MAX ? QUOTE_MAX : n;
    /* never cut inside a UTF-8 sequence */
    while (cut < n && cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
        cut--;
    for (size_t i = 0; i < cut; i++) {
        char c = s[i];
        if (c == '`')
            c = '\'';
        else if (c == '\n' || c == '\r' || c == '\t')
            c = ' ';
        vat_buf_putc(b, c);
    }
    if (cut < n)
        vat_buf_puts(b, "...");
}

/* Appends a JSON value as its canonical text, quoted as above. */
static void put_json(struct vat_buf *b, const json_t *v)
{
    char *s = vat_json_dumps(v);
    put_quoted(b, s, strlen(s));
    free(s);
}

/* Appends a scalar of params as prose: strings as they are, numbers in
 * their shortest form, booleans as yes/no, lists joined by ", ". */
static void put_param_value(struct vat_buf *b, const json_t *v)
{
    if (json_is_string(v) && json_string_length(v) == 0) {
        vat_buf_puts(b, "\"\" (none)");
    } else if (json_is_string(v)) {
        put_quoted(b, json_string_value(v), json_string_length(v));
    } else if (json_is_true(v) || json_is_false(v)) {
        vat_buf_puts(b, json_is_true(v) ? "yes" : "no");
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            if (i)
                vat_buf_puts(b, ", ");
            put_param_value(b, x);
        }
    } else {
        put_json(b, v);
    }
}

/* Params that describe how the task was dressed (the workbook's layout,
 * how many example and held-out lines), not what the question asks. */
static bool param_is_dressing(const char *key)
{
    return strcmp(key, "workbook") == 0 || strcmp(key, "examples") == 0 ||
           strcmp(key, "heldout_lines") == 0 ||
           /* a probe's answerability and kind are what the solver finds out */
           strcmp(key, "answerable") == 0 || strcmp(key, "kind") == 0;
}

/* "key = value" for every member of params (one level of nested objects
 * flattened as outer.inner), separated by "; ". */
static void put_params(struct vat_buf *b, const json_t *params, const char *prefix, int *n)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)params, k, v) {
        if (!prefix && param_is_dressing(k))
            continue;
        if (json_is_object(v)) {
            if (!prefix)
                put_params(b, v, k, n);
            continue;
        }
        vat_buf_puts(b, (*n)++ ? "; " : "");
        if (prefix)
            vat_buf_printf(b, "%s.", prefix);
        vat_buf_printf(b, "%s = ", k);
        put_param_value(b, v);
    }
}

/* The trap sentence as a clause: its full stop dropped, its first letter
 * lowered when it starts a plain word ("Summing ..." but not "COUNT(*)"). */
static void put_trap_clause(struct vat_buf *b, const char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '.' || s[n - 1] == ' '))
        n--;
    if (n >= 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'a' && s[1] <= 'z') {
        vat_buf_putc(b, (char)(s[0] - 'A' + 'a'));
        vat_buf_putn(b, s + 1, n - 1);
    } else {
        vat_buf_putn(b, s, n);
    }
}

static void put_key(struct vat_buf *b, const char *k);

/* The mistake a task is built to catch: its template's trap sentence, or
 * for a workbook task whose drawn trap is a layout's (docs/workbooks.md,
 * params.workbook.trap) that layout's mistake. */
static const char *task_trap(const struct vat_task *t)
{
    static const struct {
        const char *layout, *mistake;
    } layouts[] = {
        {"two_tables", "Reading the other table on the sheet instead of the one the question "
                       "names."},
        {"totals", "Counting the Total row under the table as a data row."},
        {"text_numbers", "Skipping the numbers stored as text cells."},
        {"group_header", "Reading the first column of a repeated sub-column name, not the one "
                         "under the group the question asks for."},
    };
    const char *layout =
        json_string_value(json_object_get(json_object_get(t->params, "workbook"), "trap"));
    for (size_t i = 0; layout && i < sizeof layouts / sizeof layouts[0]; i++)
        if (strcmp(layout, layouts[i].layout) == 0)
            return layouts[i].mistake;
    return t->tmpl->trap;
}

/* Up to KEYS_MAX keys of an object, ", "-separated, then how many. */
static void put_keys(struct vat_buf *b, const json_t *o)
{
    size_t n = json_object_size(o), i = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        if (i == KEYS_MAX) {
            vat_buf_puts(b, ", ...");
            break;
        }
        vat_buf_puts(b, i++ ? ", " : "");
        put_key(b, k);
    }
    vat_buf_printf(b, " (%zu in all)", n);
}

/* ", the first X and the last Y" of a list (as many as it has), each
 * item appended by put. */
static void put_first_last(struct vat_buf *b, const json_t *a,
                           void (*put)(struct vat_buf *, const json_t *))
{
    size_t n = json_array_size(a);
    if (n) {
        vat_buf_puts(b, ", the first ");
        put(b, json_array_get(a, 0));
    }
    if (n > 1) {
        vat_buf_puts(b, " and the last ");
        put(b, json_array_get(a, n - 1));
    }
}

/* The groups of a value answer and a value or two of it. */
static void put_value_facts(struct vat_buf *b, const json_t *gold)
{
    if (json_is_object(gold) && json_object_size(gold) > 0) {
        const char *k;
        json_t *v;
        bool nested = false;
        json_object_foreach((json_t *)gold, k, v) nested |= json_is_object(v);
        if (nested) {
            vat_buf_puts(b, "Rows of the answer: ");
            put_keys(b, gold);
            json_t *first = json_object_iter_value(json_object_iter((json_t *)gold));
            if (json_is_object(first)) {
                vat_buf_puts(b, "; columns: ");
                put_keys(b, first);
            }
            vat_buf_puts(b, ".\n");
        } else {
            vat_buf_puts(b, "One entry per group: ");
            put_keys(b, gold);
            vat_buf_puts(b, ".\n");
        }
        vat_buf_puts(b, "For instance ");
        size_t i = 0;
        json_object_foreach((json_t *)gold, k, v) {
            if (i == 2)
                break;
            vat_buf_puts(b, i++ ? " and " : "");
            put_key(b, k);
            vat_buf_puts(b, " comes to ");
            put_json(b, v);
        }
        vat_buf_puts(b, ".\n");
    } else if (json_is_array(gold)) {
        size_t n = json_array_size(gold);
        vat_buf_printf(b, "The list holds %zu item%s", n, n == 1 ? "" : "s");
        put_first_last(b, gold, put_json);
        vat_buf_puts(b, ".\n");
    }
}

/* Appends an object key as it reads ("" for the empty key). */
static void put_key(struct vat_buf *b, const char *k)
{
    if (*k)
        put_quoted(b, k, strlen(k));
    else
        vat_buf_puts(b, "\"\"");
}

/* Appends the key path of a nested value: "outer / inner". */
static void put_path(struct vat_buf *b, const char *outer, const char *k)
{
    if (outer) {
        put_key(b, outer);
        vat_buf_puts(b, " / ");
    }
    put_key(b, k);
}

/* Where the trap's value parts from gold's: "it gives <key> <trap> where
 * the answer has <gold>", or the key it leaves out or adds (outer: the key
 * of the enclosing object, or NULL). */
static void put_value_contrast_in(struct vat_buf *b, const json_t *gold, const json_t *trap,
                                  const char *outer)
{
    if (json_is_object(gold) && json_is_object(trap)) {
        const char *k;
        json_t *gv;
        json_object_foreach((json_t *)gold, k, gv) {
            const json_t *tv = json_object_get(trap, k);
            if (!tv) {
                vat_buf_puts(b, "it leaves out ");
                put_path(b, outer, k);
                return;
            }
            if (!json_equal(gv, (json_t *)tv)) {
                if (!outer && json_is_object(gv) && json_is_object(tv)) {
                    put_value_contrast_in(b, gv, tv, k);
                    return;
                }
                vat_buf_puts(b, "it gives ");
                put_path(b, outer, k);
                vat_buf_puts(b, " ");
                put_json(b, tv);
                vat_buf_puts(b, " where the answer has ");
                put_json(b, gv);
                return;
            }
        }
        json_object_foreach((json_t *)trap, k, gv) {
            if (!json_object_get(gold, k)) {
                vat_buf_puts(b, "it adds ");
                put_path(b, outer, k);
                vat_buf_puts(b, ", which the answer does not list");
                return;
            }
        }
    }
    if (json_is_array(gold) && json_is_array(trap)) {
        size_t gn = json_array_size(gold), tn = json_array_size(trap);
        for (size_t i = 0; i < gn && i < tn; i++)
            if (!json_equal(json_array_get(gold, i), json_array_get(trap, i))) {
                vat_buf_printf(b, "it has ");
                put_json(b, json_array_get(trap, i));
                vat_buf_printf(b, " at position %zu where the answer has ", i + 1);
                put_json(b, json_array_get(gold, i));
                return;
            }
        vat_buf_printf(b, "it lists %zu item%s where the answer lists %zu", tn, tn == 1 ? "" : "s",
                       gn);
        return;
    }
    vat_buf_puts(b, "it gives ");
    put_json(b, trap);
    vat_buf_puts(b, " where the answer is ");
    put_json(b, gold);
}

static void put_value_contrast(struct vat_buf *b, const json_t *gold, const json_t *trap)
{
    put_value_contrast_in(b, gold, trap, NULL);
}

/* One row of a query's result as "(a, b, c)". */
static void put_row(struct vat_buf *b, const json_t *row)
{
    char *s = vat_json_dumps(row);
    size_t n = strlen(s);
    vat_buf_putc(b, '(');
    if (n >= 2)
        put_quoted(b, s + 1, n - 2);
    vat_buf_putc(b, ')');
    free(s);
}

static void put_sql_facts(struct vat_buf *b, const struct vat_task *t)
{
    const json_t *spec = t->spec;
    const char *main_rel = t->fixture[0].path;
    const json_t *tables = json_object_get(spec, "tables");
    if (json_array_size(tables)) {
        vat_buf_puts(b, "The query reads ");
        put_param_value(b, tables);
        vat_buf_puts(b, json_is_true(json_object_get(spec, "ordered"))
                            ? "; the rows are compared in order"
                            : "; the rows are compared as a multiset");
        vat_buf_puts(b, ".\n");
    }
    struct vat_verdict v;
    json_t *gold = vat_sql_run(spec, t->root, main_rel, t->gold, strlen(t->gold), &v);
    json_t *trap = t->trap ? vat_sql_run(spec, t->root, main_rel, t->trap, strlen(t->trap), &v)
                           : NULL;
    if (gold) {
        size_t n = json_array_size(gold);
        vat_buf_printf(b, "On `%s` it returns %zu row%s", main_rel, n, n == 1 ? "" : "s");
        put_first_last(b, gold, put_row);
        vat_buf_puts(b, ".\n");
    }
    vat_buf_puts(b, "The mistake to avoid: ");
    put_trap_clause(b, task_trap(t));
    if (gold && trap) {
        size_t gn = json_array_size(gold), tn = json_array_size(trap), i = 0;
        while (i < gn && i < tn && json_equal(json_array_get(gold, i), json_array_get(trap, i)))
            i++;
        if (gn == tn && i == gn) {
            vat_buf_puts(b, ". On this database that query happens to return the same rows; "
                            "the other databases it is checked on tell them apart");
        } else if (gn != tn) {
            vat_buf_printf(b, ". That query returns %zu row%s here instead of %zu", tn,
                           tn == 1 ? "" : "s", gn);
        } else {
            vat_buf_printf(b, ". That query's row %zu here is ", i + 1);
            put_row(b, json_array_get(trap, i));
            vat_buf_puts(b, " instead of ");
            put_row(b, json_array_get(gold, i));
        }
    } else if (gold) {
        vat_buf_puts(b, ". That query does not even run here");
    }
    vat_buf_puts(b, ".\n");
    json_decref(gold);
    json_decref(trap);
}

static void put_regex_facts(struct vat_buf *b, const struct vat_task *t)
{
    const json_t *cases = json_object_get(t->spec, "cases");
    size_t i, shown = 0, empty_shown = 0;
    json_t *c;
    /* what the pattern must give on the example lines (never a held-out one) */
    json_array_foreach(cases, i, c) {
        if (json_is_true(json_object_get(c, "heldout")))
            continue;
        const json_t *exp = json_object_get(c, "expected");
        bool empty = json_array_size(exp) == 0;
        if ((empty && empty_shown) || (!empty && shown == 2))
            continue;
        const char *text = json_string_value(json_object_get(c, "text"));
        if (!text)
            continue;
        vat_buf_puts(b, shown + empty_shown ? "From \"" : "The example lines fix the shape: from \"");
        put_quoted(b, text, strlen(text));
        vat_buf_puts(b, "\" it must extract ");
        put_json(b, exp);
        vat_buf_puts(b, ".\n");
        if (empty)
            empty_shown++;
        else
            shown++;
    }
    vat_buf_puts(b, "The mistake to avoid: ");
    put_trap_clause(b, task_trap(t));
    /* where the trap pattern parts from the expected extraction on an example */
    json_array_foreach(cases, i, c) {
        if (json_is_true(json_object_get(c, "heldout")) || !t->trap)
            continue;
        const char *text = json_string_value(json_object_get(c, "text"));
        const json_t *exp = json_object_get(c, "expected");
        struct vat_verdict v;
        json_t *got = text ? vat_regex_extract(t->spec, t->trap, strlen(t->trap), text, &v) : NULL;
        bool differs = got && !json_equal(got, (json_t *)exp);
        if (differs) {
            vat_buf_puts(b, ". Such a pattern extracts ");
            put_json(b, got);
            vat_buf_puts(b, " from \"");
            put_quoted(b, text, strlen(text));
            vat_buf_puts(b, "\"");
        }
        json_decref(got);
        if (differs) {
            vat_buf_puts(b, ".\n");
            return;
        }
    }
    vat_buf_puts(b, ". On the example lines such a pattern happens to agree; the held-out lines "
                    "tell them apart.\n");
}

static void put_value_trap(struct vat_buf *b, const struct vat_task *t)
{
    vat_buf_puts(b, "The mistake to avoid: ");
    put_trap_clause(b, task_trap(t));
    json_t *gold = json_loads(t->gold, JSON_DECODE_ANY, NULL);
    json_t *trap = t->trap ? json_loads(t->trap, JSON_DECODE_ANY, NULL) : NULL;
    if (gold && trap && !json_equal(gold, trap)) {
        vat_buf_puts(b, "; ");
        put_value_contrast(b, gold, trap);
    }
    vat_buf_puts(b, ".\n");
    json_decref(gold);
    json_decref(trap);
}

char *vat_reasoned_completion(const struct vat_task *t)
{
    struct vat_buf b = VAT_BUF_INIT;
    const char *kind = vat_task_answer_kind(t);
    bool regex = strcmp(kind, "regex") == 0, sql = strcmp(kind, "sql") == 0;

    int n = 0;
    struct vat_buf p = VAT_BUF_INIT;
    if (t->params)
        put_params(&p, t->params, NULL, &n);
    if (n) {
        vat_buf_puts(&b, "What the question fixes: ");
        vat_buf_putn(&b, p.data, p.len);
        vat_buf_puts(&b, ".\n");
    }
    vat_buf_release(&p);

    const struct vat_fixture *f = &t->fixture[0];
    if (!regex)
        vat_buf_printf(&b, "The data: `%s` (%s), %ld data row%s%s.\n", f->path, f->format, f->rows,
                       f->rows == 1 ? "" : "s",
                       strcmp(f->format, "csv") == 0 ? "" : " across its tables");
    if (regex) {
        put_regex_facts(&b, t);
    } else if (sql) {
        put_sql_facts(&b, t);
    } else {
        json_t *gold = json_loads(t->gold, JSON_DECODE_ANY, NULL);
        if (strcmp(kind, "abstain") == 0) {
            const json_t *abst = json_object_get(t->spec, "abstention");
            bool abstains = gold && abst && json_equal(gold, (json_t *)abst);
            vat_buf_puts(&b, abstains ? "What the question asks about is not in the file, so "
                                        "it cannot be answered from it: the answer is the "
                                        "abstention the task defines.\n"
                                      : "Everything the question names is in the file, so it "
                                        "is answered with the value itself.\n");
            if (!abstains)
                put_value_facts(&b, gold);
        } else {
            put_value_facts(&b, gold);
        }
        json_decref(gold);
        put_value_trap(&b, t);
    }
    /* a compound template names each mistake it arms */
    for (int i = 0; i < t->n_traps; i++) {
        vat_buf_puts(&b, i ? "; " : "Each of these is avoided: ");
        vat_buf_puts(&b, t->traps[i].name);
        vat_buf_puts(&b, " (");
        put_trap_clause(&b, t->traps[i].text);
        vat_buf_puts(&b, ")");
        if (i == t->n_traps - 1)
            vat_buf_puts(&b, ".\n");
    }

    /* gold as the tables carry it (canonical JSON text for values) */
    char *gold = vat_answer_text(t, t->gold);
    vat_buf_printf(&b, "\n```%s\n%s\n```\n", regex ? "regex" : sql ? "sql" : "json", gold);
    free(gold);
    return vat_buf_detach(&b);
}

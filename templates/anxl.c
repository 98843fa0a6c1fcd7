/* anxl.c — the workbook format of the analytics templates (see anxl.h).
 * Exports the vat_axl_* functions.
 *
 * Every draw here comes from the task's "fixture_format" and
 * "fixture_layout" streams, never from the template's own stream, so a
 * CSV task draws exactly what it drew before workbooks existed and its
 * bytes do not move. */
#include "anxl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prompt.h"
#include "trace.h"
#include "values.h"

const char *const vat_axl_layout_names[VAT_AXL_N] = {
    "own", "title_notes", "two_tables", "group_header", "totals", "text_numbers", "blanks",
    "lookup_sheet"};

/* Share of numeric cells written as text under text_numbers. */
#define AXL_TEXT_SHARE 0.12

int vat_axl_begin(struct vat_task *t, const struct vat_axl_desc *d, struct vat_axl_state *st,
                  struct vat_err *e)
{
    memset(st, 0, sizeof *st);
    st->format = vat_xl_task_format(t, &st->lay);
    if (!st->format)
        return vat_err_set(e, "%s: fixture_format '%s' is none of csv, xlsx, mixed", t->id,
                           vat_task_str(t, "fixture_format"));
    if (strcmp(st->format, "xlsx") != 0)
        return 0;
    struct vat_rng *r = &st->lay;
    enum vat_axl_layout cand[VAT_AXL_N];
    size_t nc = 0;
    cand[nc++] = VAT_AXL_OWN;
    for (int l = 1; l < VAT_AXL_N; l++)
        if (d->traps & VAT_AXL_BIT(l))
            cand[nc++] = (enum vat_axl_layout)l;
    st->trap = cand[vat_rng_below(r, (uint32_t)nc)];
    if (st->trap != VAT_AXL_OWN)
        st->layouts |= VAT_AXL_BIT(st->trap);
    for (int l = 1; l < VAT_AXL_N; l++) {
        bool on = vat_rng_chance(r, 0.5);
        if ((d->decor & VAT_AXL_BIT(l)) && on)
            st->layouts |= VAT_AXL_BIT(l);
    }
    if (d->totals_col < 0)
        st->layouts &= ~VAT_AXL_BIT(VAT_AXL_TOTALS);
    if (!d->group)
        st->layouts &= ~VAT_AXL_BIT(VAT_AXL_GROUP_HEADER);
    uint32_t ti = vat_rng_below(r, (uint32_t)d->ntitles);
    uint32_t di = (ti + 1 + vat_rng_below(r, (uint32_t)d->ntitles - 1)) % (uint32_t)d->ntitles;
    st->decoy_above = vat_rng_chance(r, 0.5);
    if (st->layouts & (VAT_AXL_BIT(VAT_AXL_TITLE_NOTES) | VAT_AXL_BIT(VAT_AXL_TWO_TABLES)))
        st->title = d->titles[ti];
    if (st->layouts & VAT_AXL_BIT(VAT_AXL_TWO_TABLES)) {
        st->layouts |= VAT_AXL_BIT(VAT_AXL_TITLE_NOTES);
        st->decoy = d->titles[di];
    }
    return 0;
}

/* The other table: rows copied from random rows of c with every number
 * redrawn within its column's range, so it looks like the same report
 * for another period and answers differently. */
static void make_decoy(struct vat_rng *r, const struct vat_csv *c, const struct vat_axl_desc *d,
                       struct vat_csv *out)
{
    size_t nc = c->row[0].n, nr = c->nrows - 1;
    int64_t lo[64], hi[64];
    for (size_t k = 0; k < nc && k < 64; k++) {
        lo[k] = INT64_MAX;
        hi[k] = INT64_MIN;
        for (size_t i = 1; i < c->nrows && d->kind[k] != VAT_XLK_TEXT; i++) {
            const char *s = vat_csv_get(c, i, k);
            int64_t v;
            if (!*s)
                continue;
            if (d->kind[k] == VAT_XLK_INT)
                v = strtoll(s, NULL, 10);
            else if (vat_parse_cents(s, &v) != 0)
                continue;
            if (v < lo[k])
                lo[k] = v;
            if (v > hi[k])
                hi[k] = v;
        }
    }
    size_t n = nr / 2 < 3 ? 3 : nr / 2;
    vat_csv_add_row(out, (const char *const *)c->row[0].cell, nc);
    for (size_t i = 0; i < n; i++) {
        size_t src = 1 + vat_rng_below(r, (uint32_t)nr);
        vat_csv_row_begin(out);
        for (size_t k = 0; k < nc; k++) {
            const char *s = vat_csv_get(c, src, k);
            bool number = k < 64 && d->kind[k] != VAT_XLK_TEXT && *s && lo[k] <= hi[k];
            int64_t v = number ? vat_rng_range(r, lo[k], hi[k]) : 0;
            if (!number) {
                vat_csv_add(out, s);
            } else if (d->kind[k] == VAT_XLK_MONEY) {
                char m[32];
                vat_csv_add(out, vat_fmt_cents(v, m, sizeof m));
            } else {
                vat_csv_addf(out, "%lld", (long long)v);
            }
        }
    }
}

static json_t *layout_names(unsigned bits)
{
    json_t *a = json_array();
    for (int l = 1; l < VAT_AXL_N; l++)
        if (bits & VAT_AXL_BIT(l))
            json_array_append_new(a, json_string(vat_axl_layout_names[l]));
    return a;
}

int vat_axl_write(struct vat_task *t, struct vat_axl_state *st, const struct vat_csv *c,
                  const struct vat_axl_desc *d, struct vat_err *e)
{
    if (strcmp(st->format, "xlsx") != 0)
        return vat_an_write_csv(t, c, ".csv", "main", e);
    struct vat_rng *r = &st->lay;
    size_t nc = c->row[0].n, nr = c->nrows - 1;
    bool *as_text = NULL;
    if (st->layouts & VAT_AXL_BIT(VAT_AXL_TEXT_NUMBERS)) {
        as_text = vat_xcalloc(nr * nc + 1, sizeof *as_text);
        size_t cnt = 0;
        for (size_t i = 0; i < nr; i++)
            for (size_t k = 0; k < nc; k++) {
                bool pick = vat_rng_chance(r, AXL_TEXT_SHARE);
                if (pick && d->kind[k] != VAT_XLK_TEXT && *vat_csv_get(c, i + 1, k)) {
                    as_text[i * nc + k] = true;
                    cnt++;
                }
            }
        for (size_t tries = 0; cnt == 0 && tries < 1000; tries++) {
            size_t i = vat_rng_below(r, (uint32_t)nr);
            size_t k = vat_rng_below(r, (uint32_t)nc);
            if (d->kind[k] != VAT_XLK_TEXT && *vat_csv_get(c, i + 1, k)) {
                as_text[i * nc + k] = true;
                cnt++;
            }
        }
    }
    bool blanks = false;
    for (size_t i = 1; i < c->nrows && !blanks; i++)
        for (size_t k = 0; k < nc && !blanks; k++)
            blanks = !*vat_csv_get(c, i, k);
    if (blanks)
        st->layouts |= VAT_AXL_BIT(VAT_AXL_BLANKS);

    static const char *const note_pool[] = {
        "Exported from the back office; figures are as entered.",
        "Prepared for the monthly review.",
        "Do not edit: this sheet is regenerated every night.",
        "Questions about this report go to the data team.",
    };
    const char *notes[2];
    size_t nnotes = 0;
    if (st->layouts & VAT_AXL_BIT(VAT_AXL_TITLE_NOTES)) {
        nnotes = 1 + vat_rng_below(r, 2);
        size_t first = vat_rng_below(r, 4);
        for (size_t i = 0; i < nnotes; i++)
            notes[i] = note_pool[(first + i) % 4];
    }
    bool totals = (st->layouts & VAT_AXL_BIT(VAT_AXL_TOTALS)) != 0;
    bool group = (st->layouts & VAT_AXL_BIT(VAT_AXL_GROUP_HEADER)) != 0;
    struct vat_xl_table main_t = {.title = st->title, .notes = notes, .nnotes = nnotes, .data = c,
                                  .kind = d->kind, .group = group ? d->group : NULL,
                                  .as_text = as_text, .totals_col = totals ? d->totals_col : -1,
                                  .total_of = d->total_of};
    struct vat_csv decoy = VAT_CSV_INIT;
    struct vat_xl_table decoy_t = {0};
    if (st->decoy) {
        make_decoy(r, c, d, &decoy);
        decoy_t = (struct vat_xl_table){.title = st->decoy, .data = &decoy, .kind = d->kind,
                                        .group = group ? d->group : NULL,
                                        .totals_col = totals ? d->totals_col : -1,
                                        .total_of = d->total_of};
    }
    struct vat_xl_book book = VAT_XL_BOOK_INIT;
    struct vat_xl_sheet *s = vat_xl_add_sheet(&book, d->sheet);
    struct vat_xl_where w, dw;
    uint32_t next = 0;
    int rc = 0;
    if (st->decoy && st->decoy_above) {
        rc = vat_xl_place(s, 0, 0, &decoy_t, &dw, &next, e);
        next += 2;
    }
    if (rc == 0)
        rc = vat_xl_place(s, next, 0, &main_t, &w, &next, e);
    if (rc == 0 && st->decoy && !st->decoy_above)
        rc = vat_xl_place(s, next + 2, 0, &decoy_t, &dw, &next, e);
    free(as_text);
    vat_csv_release(&decoy);
    int fi = -1;
    if (rc == 0) {
        json_t *cols = json_array();
        for (size_t k = 0; k < nc; k++)
            json_array_append_new(cols, json_sprintf("%s.%s", d->sheet, c->row[0].cell[k]));
        fi = vat_xl_task_write(t, &book, ".xlsx", "main", (long)nr, cols, e);
    }
    if (fi >= 0) {
        char a1[16], a2[16], h1[16], h2[16];
        vat_xl_addr(w.first_row, w.col0, a1, sizeof a1);
        vat_xl_addr(w.first_row + (w.nrows ? w.nrows - 1 : 0), w.col0 + (uint32_t)nc - 1, a2,
                    sizeof a2);
        vat_xl_addr(w.header_row, w.col0, h1, sizeof h1);
        vat_xl_addr(w.header_row, w.col0 + (uint32_t)nc - 1, h2, sizeof h2);
        st->wb = json_pack("{s:s, s:s?, s:o, s:s, s:s?, s:s++, s:s++}", "sheet", d->sheet, "table",
                           st->title, "layouts", layout_names(st->layouts), "trap",
                           vat_axl_layout_names[st->trap], "decoy", st->decoy, "header", h1, ":",
                           h2, "range", a1, ":", a2);
    }
    vat_xl_release(&book);
    return fi;
}

void vat_axl_prompt(struct vat_buf *b, struct vat_task *t, const struct vat_axl_state *st,
                    int fi, const struct vat_csv *c, const struct vat_axl_desc *d)
{
    if (strcmp(st->format, "xlsx") != 0) {
        vat_an_prompt_csv(b, t, fi, c);
        return;
    }
    /* The explicit rules about the table, grammar realised first. */
    char *rest = vat_prompt_text(
        t, 'x',
        "[[Only that table's data rows are {what}|Only the data rows of that table are "
        "{what}]]: [[titles, notes, header rows|titles, notes and header rows]], [[any row that "
        "totals the table|a row totalling the table]] and [[any other table|other tables]] "
        "[[are not|do not count]]. [[A blank cell is a missing value, not zero|A blank cell is "
        "missing, not zero]]; [[a number stored as text is the same number|numbers stored as "
        "text are the same numbers]].\n\n",
        (const char *const[]){"what", d->what, NULL});
    const char *kv[] = {"what", d->what, "title", st->title ? st->title : "", "sheet", d->sheet,
                        "rest", rest, NULL};
    if (vat_prompt_natural(t))
        vat_prompt_say(b, t, 'x',
                       st->title ? "[[The data is in an Excel workbook|It's an Excel "
                                   "workbook, not a CSV]]: the {what} are the table titled "
                                   "`{title}` on sheet `{sheet}`. [[A number stored as text "
                                   "is the same number|Numbers stored as text count as "
                                   "numbers]].\n\n"
                                 : "[[The data is in an Excel workbook|It's an Excel "
                                   "workbook, not a CSV]]: the {what} are the table on sheet "
                                   "`{sheet}`. [[A number stored as text is the same "
                                   "number|Numbers stored as text count as numbers]].\n\n",
                       kv);
    else
        vat_prompt_say(b, t, 'x',
                       st->title ? "[[The data is an Excel workbook, not a CSV file|The file is an "
                                   "Excel workbook rather than a CSV|This data comes as an "
                                   "Excel workbook, not a CSV file]]: the {what} are the table "
                                   "titled `{title}` on sheet `{sheet}`. {rest}"
                                 : "[[The data is an Excel workbook, not a CSV file|The file is an "
                                   "Excel workbook rather than a CSV|This data comes as an "
                                   "Excel workbook, not a CSV file]]: the {what} are the table "
                                   "on sheet `{sheet}`. {rest}",
                       kv);
    free(rest);
    struct vat_xl_book book = VAT_XL_BOOK_INIT;
    struct vat_err e;
    t->self_contained = false;
    if (vat_xl_task_read(t, fi, &book, &e) == 0)
        t->self_contained = vat_xl_prompt(b, t, fi, &book);
    else
        vat_buf_printf(b, "(the workbook `%s` could not be shown: %s)\n", t->fixture[fi].path,
                       e.msg);
    vat_xl_release(&book);
}

void vat_axl_finish(struct vat_task *t, struct vat_axl_state *st)
{
    if (st->wb && t->params)
        json_object_set_new(t->params, "workbook", st->wb);
    else
        json_decref(st->wb);
    st->wb = NULL;
}

void vat_axl_release(struct vat_axl_state *st)
{
    json_decref(st->wb);
    st->wb = NULL;
}

static const json_t *wb_params(const struct vat_task *t)
{
    return t->params ? json_object_get(t->params, "workbook") : NULL;
}

enum vat_axl_layout vat_axl_trap(const struct vat_task *t)
{
    const char *s = json_string_value(json_object_get(wb_params(t), "trap"));
    for (int l = 0; s && l < VAT_AXL_N; l++)
        if (strcmp(s, vat_axl_layout_names[l]) == 0)
            return (enum vat_axl_layout)l;
    return VAT_AXL_OWN;
}

int vat_axl_read(const struct vat_task *t, int fi, const char *const *cols, size_t n,
                 const struct vat_axl_desc *d, bool trap, struct vat_csv *out, struct vat_err *e)
{
    if (fi < 0 || fi >= t->n_fixtures)
        return vat_err_set(e, "%s: no fixture %d", t->id, fi);
    if (strcmp(t->fixture[fi].format, "xlsx") != 0)
        return vat_an_read_csv(t, fi, cols, n, out, e);
    const json_t *wb = wb_params(t);
    const char *sheet = json_string_value(json_object_get(wb, "sheet"));
    if (!sheet)
        return vat_err_set(e, "%s: params lack the workbook's sheet", t->id);
    struct vat_xl_book book = VAT_XL_BOOK_INIT;
    if (vat_xl_task_read(t, fi, &book, e) != 0)
        return -1;
    const struct vat_xl_sheet *s = vat_xl_find_sheet(&book, sheet);
    int rc;
    if (!s) {
        rc = vat_err_set(e, "%s: '%s' has no sheet '%s'", t->id, t->fixture[fi].path, sheet);
    } else {
        struct vat_xl_find_opts o = {
            .title = json_string_value(json_object_get(wb, "table"))};
        enum vat_axl_layout tl = vat_axl_trap(t);
        if (trap && tl == VAT_AXL_TWO_TABLES)
            o.title = json_string_value(json_object_get(wb, "decoy"));
        o.keep_totals = trap && tl == VAT_AXL_TOTALS;
        o.drop_text_numbers = trap && tl == VAT_AXL_TEXT_NUMBERS;
        struct vat_xl_where w;
        rc = vat_xl_find(s, cols, d->kind, n, &o, out, &w, e);
        if (rc != 0) {
            struct vat_err e2 = *e;
            vat_err_set(e, "%s: '%s': %s", t->id, t->fixture[fi].path, e2.msg);
        } else if (out->nrows < 2) {
            vat_csv_release(out);
            rc = vat_err_set(e, "%s: '%s': the table has no data row", t->id, t->fixture[fi].path);
        }
    }
    vat_xl_release(&book);
    return rc;
}

int vat_axl_confirm_query(const struct vat_task *t, const struct vat_an_query *q,
                          const char *const *cols, size_t n, double rel_tol, double abs_tol,
                          struct vat_err *e)
{
    if (strcmp(t->fixture[q->fi].format, "xlsx") != 0)
        return vat_an_confirm_query(t, q, rel_tol, abs_tol, e);
    const json_t *wb = wb_params(t);
    const char *sheet = json_string_value(json_object_get(wb, "sheet"));
    const char *range = json_string_value(json_object_get(wb, "range"));
    const char *colon = range ? strchr(range, ':') : NULL;
    uint32_t r1, c1, r2, c2;
    if (!sheet || !colon || vat_xl_parse_addr(range, (size_t)(colon - range), &r1, &c1) != 0 ||
        vat_xl_parse_addr(colon + 1, strlen(colon + 1), &r2, &c2) != 0 || c2 - c1 + 1 != n ||
        r2 < r1)
        return vat_err_set(e, "%s: confirm: params lack a valid workbook sheet and range", t->id);
    struct vat_xl_book book = VAT_XL_BOOK_INIT;
    if (vat_xl_task_read(t, q->fi, &book, e) != 0)
        return -1;
    const struct vat_xl_sheet *s = vat_xl_find_sheet(&book, sheet);
    if (!s) {
        vat_xl_release(&book);
        return vat_err_set(e, "%s: confirm: no sheet '%s'", t->id, sheet);
    }
    vat_trace_note("xlsx cells by address", range);
    /* The cells by address, as plain text (numbers in their shortest
     * exact form): SQLite's column affinity does the typing. */
    struct vat_csv c = VAT_CSV_INIT;
    vat_csv_add_row(&c, cols, n);
    char buf[64];
    for (uint32_t r = r1; r <= r2; r++) {
        vat_csv_row_begin(&c);
        for (uint32_t k = c1; k <= c2; k++)
            vat_csv_add(&c, vat_xl_text(vat_xl_get(s, r, k), buf, sizeof buf));
    }
    vat_xl_release(&book);
    sqlite3 *db = NULL;
    json_t *v = NULL;
    struct vat_err qe = {{0}};
    if (sqlite3_open_v2(":memory:", &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) ==
            SQLITE_OK &&
        vat_csv_to_sqlite(&c, 0, db, q->table, q->types, q->blank_is_null, &qe) == 0)
        v = vat_an_sql_json(db, q->sql, q->kind, &qe);
    else if (!qe.msg[0])
        vat_err_set(&qe, "cannot open an in-memory database");
    sqlite3_close(db);
    vat_csv_release(&c);
    if (!v)
        return vat_err_set(e, "%s: confirm: %s", t->id, qe.msg);
    return vat_an_confirm_value(t, v, "sql over the workbook's cells by address", rel_tol, abs_tol,
                                e);
}

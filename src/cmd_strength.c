/* cmd_strength.c — `vat strength`: how strong the regex and SQL checkers
 * of a built corpus are.  For every task the mutants of its gold are
 * scored through its own check (src/strength.h); per template it prints
 * one JSON line (counts, share killed, per-kind counts, a survivor
 * example) and then a table for people.  Exits 1 when a template kills
 * less than the target share of its scored mutants or a task cannot be
 * measured.  Exports vat_cmd_strength. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsonout.h"
#include "strength.h"

static const char strength_about[] =
    "Scores mutants of every regex and sql gold answer of the corpus at DIR\n"
    "through the task's own checker and reports, per template, the share of\n"
    "scored mutants the held-out cases kill: one JSON line per template, then a\n"
    "table.";

/* Appends the part of a mutant around its change to b, whitespace runs
 * shown as one space, about width characters in all. */
static void put_window(struct vat_buf *b, const struct vat_mutant *m, size_t width)
{
    size_t len = strlen(m->text);
    size_t from = m->offset > width / 3 ? m->offset - width / 3 : 0;
    /* start at a word, not inside one */
    for (size_t k = 0; from > 0 && k < 16 && m->text[from - 1] != ' ' && m->text[from - 1] != '\n';
         k++)
        from--;
    size_t to = from + width < len ? from + width : len;
    if (from)
        vat_buf_puts(b, "...");
    bool space = false;
    for (size_t i = from; i < to; i++) {
        char c = m->text[i];
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
            space = true;
            continue;
        }
        if (space && b->len)
            vat_buf_putc(b, ' ');
        space = false;
        vat_buf_putc(b, c);
    }
    if (to < len)
        vat_buf_puts(b, "...");
}

static void print_table(const struct vat_strength_report *r, double target)
{
    printf("\nchecker strength: share of scored mutants killed (target %.0f%%)\n", target * 100);
    printf("%-20s %6s %8s %6s %8s %7s %9s %8s\n", "template", "tasks", "mutants", "equiv",
           "invalid", "killed", "survived", "killed%");
    for (size_t i = 0; i < r->n; i++) {
        const struct vat_strength_template *p = &r->per[i];
        const struct vat_strength *s = &p->s;
        double share = vat_strength_share(s);
        bool ok = p->failed == 0 && share >= target;
        printf("%-20s %6ld %8ld %6ld %8ld %7ld %9ld %7.1f%% %s\n", p->tmpl->name, p->tasks,
               s->mutants, s->equivalent, s->invalid, s->killed, s->survivors,
               (double)(long)(share * 1000.0) / 10.0, ok ? "ok" : "BELOW TARGET");
        if (p->failed)
            printf("    %ld task(s) not measured; first: %s\n", p->failed, p->error);
        if (!s->survivors)
            continue;
        printf("    survivors by kind:");
        for (size_t k = 0; k < s->nkinds; k++)
            if (s->kind[k].survivors)
                printf(" %s %ld", s->kind[k].kind, s->kind[k].survivors);
        printf("\n");
        struct vat_buf b = VAT_BUF_INIT;
        put_window(&b, &s->surv.v[0], 90);
        printf("    e.g. %s %s: %s\n", p->example_task, s->surv.v[0].kind, b.data);
        vat_buf_release(&b);
    }
}

int vat_cmd_strength(int argc, char **argv)
{
    const char *root = ".", *only = NULL, *target_s = NULL;
    double target = VAT_STRENGTH_TARGET;
    int tasks_flag = 0;
    const struct vat_option opts[] = {
        VAT_OPT_VALUE("root", 0, "DIR", "the corpus root (out/verifiers, out/experience, "
                                         "fixtures/)", &root),
        VAT_OPT_VALUE("target", 0, "X", "the share each template must reach, 0..1 (default 0.9)",
                      &target_s),
        VAT_OPT_VALUE("only", 0, "a,b", "measure these templates only", &only),
        VAT_OPT_FLAG("tasks", 0, "also print one JSON line per task, with its survivors",
                     &tasks_flag),
        VAT_OPT_END,
    };
    const struct vat_cli_command cmd = {
        "strength", "vat strength [--root DIR] [--target X] [--only a,b] [--tasks]",
        strength_about, opts,
        "0 every template reaches the target, 1 one does not (or a task cannot be\n"
        "            measured), 2 usage or input error"};
    int prc = vat_cli_parse(&cmd, argc, argv, NULL);
    if (prc != 0)
        return prc > 0 ? VAT_EXIT_OK : VAT_EXIT_USAGE;
    bool tasks = tasks_flag != 0;
    if (target_s) {
        char *end;
        target = strtod(target_s, &end);
        if (end == target_s || *end || !(target >= 0.0 && target <= 1.0))
            return vat_cli_usage_error("--target takes a number from 0 to 1");
    }
    if (only) {
        for (const char *p = only;;) { /* an empty name ('', 'a,') too */
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            char *name = vat_xstrndup(p, len);
            const struct vat_template *tm = vat_template_find(name);
            if (!tm || (strcmp(tm->family, "regex") != 0 && strcmp(tm->family, "sql") != 0 &&
                        !tm->progform)) {
                vat_cli_linef(stderr, "vat: '%s' is not a regex or sql template", name);
                free(name);
                return VAT_EXIT_USAGE;
            }
            free(name);
            if (!comma)
                break;
            p = comma + 1;
        }
    }

    struct vat_strength_report r;
    struct vat_err e = {{0}};
    if (vat_strength_corpus(root, only, tasks ? stdout : NULL, &r, &e) != 0) {
        vat_cli_line(stderr, e.msg);
        return VAT_EXIT_USAGE;
    }
    if (r.n == 0) {
        vat_strength_report_release(&r);
        vat_cli_linef(stderr, "vat: the corpus at '%s' holds no regex or sql task to measure",
                      root);
        return VAT_EXIT_USAGE;
    }
    int rc = VAT_EXIT_OK;
    for (size_t i = 0; i < r.n; i++) {
        json_t *o = vat_strength_template_json(&r.per[i], target);
        if (!json_is_true(json_object_get(o, "passed")))
            rc = VAT_EXIT_CORPUS;
        char *line = vat_json_dumps(o);
        printf("%s\n", line);
        free(line);
        json_decref(o);
    }
    print_table(&r, target);
    vat_strength_report_release(&r);
    return rc;
}

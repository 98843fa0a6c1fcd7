/* cmd_audit.c — `vat audit`: the leak audit of a corpus, as JSON lines on
 * stdout (one per finding, then a summary with the overlap figures) and
 * one human line on stderr.  Exports vat_cmd_audit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "cli.h"
#include "jsonout.h"
#include "prompt_stats.h"

static const char audit_about[] =
    "Audits the corpus below DIR for leaks across the split: a task id, fixture\n"
    "digest, normalised prompt, gold program or regex held-out string on both\n"
    "sides, or a fixture sharing more than half of its data rows with one fixture\n"
    "on the other side; for duplicates within a side; and for rows that are\n"
    "unparsable, out of order or unsafe.  One JSON line per finding, then a\n"
    "summary line that also reports, per template, the tasks of each prompt\n"
    "style, the distinct phrasings drawn and the share of distinct word 4-grams\n"
    "across its prompts (\"prompts\").";

static void print_json_line(json_t *o)
{
    char *s = vat_json_dumps(o);
    puts(s);
    free(s);
    json_decref(o);
}

int vat_cmd_audit(int argc, char **argv)
{
    const char *root = ".", *max_s = NULL;
    long max_per_kind = 100;
    const struct vat_option opts[] = {
        VAT_OPT_VALUE("root", 0, "DIR", "the corpus root (out/ and fixtures/ below it)", &root),
        VAT_OPT_VALUE("max-per-kind", 0, "N", "print at most N findings of each kind (default "
                                              "100; the summary counts them all)", &max_s),
        VAT_OPT_END,
    };
    const struct vat_cli_command cmd = {"audit", "vat audit [--root DIR] [--max-per-kind N]",
                                        audit_about, opts,
                                        "0 clean, 1 findings, 2 usage or input error"};
    int prc = vat_cli_parse(&cmd, argc, argv, NULL);
    if (prc != 0)
        return prc > 0 ? VAT_EXIT_OK : VAT_EXIT_USAGE;
    if (max_s && vat_cli_parse_long(max_s, 0, 1000000, &max_per_kind) != 0)
        return vat_cli_usage_error("--max-per-kind takes a whole number from 0 to 1000000");

    struct vat_audit_report r;
    struct vat_err e = {{0}};
    vat_audit_init(&r, (size_t)max_per_kind);
    if (vat_audit_run(root, &r, &e) != 0) {
        vat_cli_line(stderr, e.msg);
        vat_audit_release(&r);
        return VAT_EXIT_USAGE;
    }
    for (size_t i = 0; i < r.nf; i++)
        print_json_line(vat_audit_finding_json(&r.f[i]));
    json_t *summary = vat_audit_summary_json(&r);
    /* How varied the prompts are, per template (not a finding). */
    struct vat_err pe = {{0}};
    json_t *prompts = vat_prompt_stats(root, &pe);
    if (prompts)
        json_object_set_new(summary, "prompts", prompts);
    print_json_line(summary);
    fflush(stdout);
    if (r.findings)
        fprintf(stderr, "audit: %ld finding%s\n", r.findings, r.findings == 1 ? "" : "s");
    else
        fputs("audit: clean\n", stderr);
    int rc = r.findings ? VAT_EXIT_CORPUS : VAT_EXIT_OK;
    vat_audit_release(&r);
    return rc;
}

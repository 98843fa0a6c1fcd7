/* cmd_audit.c — `vat audit`: the leak audit of a corpus, as JSON lines on
 * stdout (one per finding, then a summary with the overlap figures) and
 * one human line on stderr.  Exports vat_cmd_audit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "cli.h"
#include "jsonout.h"
#include "prints.h"
#include "store.h"

static const char audit_about[] =
    "Audits the corpus below DIR for leaks across the split: a task id, fixture\n"
    "digest, normalised prompt, gold program or regex held-out string on both\n"
    "sides, or a fixture sharing more than half of its data rows with one fixture\n"
    "on the other side; for duplicates within a side; and for rows that are\n"
    "unparsable, out of order or unsafe.  One JSON line per finding, then a\n"
    "summary line that also reports, per template, the tasks of each prompt\n"
    "style, the distinct phrasings drawn and the share of distinct word 4-grams\n"
    "across its prompts (\"prompts\").  Memory stays flat in the corpus: what\n"
    "the audit compares is sorted in temporary files (--memory, --tmpdir).\n"
    "With --shards, the shards of one build (vat build --shard K/N) are audited\n"
    "against each other from their fingerprints (out/prints) alone: every\n"
    "prompt, gold program, regex string, fixture digest or fixture sharing over\n"
    "half its data rows that crosses the split between any two of them (or\n"
    "within one), and duplicate prompts and fixtures within a side.";

static void print_json_line(json_t *o)
{
    char *s = vat_json_dumps(o);
    puts(s);
    free(s);
    json_decref(o);
}

static void finish_lines(const struct vat_audit_report *r, json_t *summary)
{
    for (size_t i = 0; i < r->nf; i++)
        print_json_line(vat_audit_finding_json(&r->f[i]));
    print_json_line(summary);
    fflush(stdout);
    if (r->findings)
        fprintf(stderr, "audit: %ld finding%s\n", r->findings, r->findings == 1 ? "" : "s");
    else
        fputs("audit: clean\n", stderr);
}

/* `vat audit --shards`: each shard root under its shared lock, then the
 * merge of their fingerprints. */
static int audit_shards(const char **roots, int n, size_t max_per_kind)
{
    struct vat_store *st = calloc((size_t)n, sizeof *st);
    struct vat_err e = {{0}};
    int rc = VAT_EXIT_OK, opened = 0;
    for (int i = 0; i < n; i++, opened++) {
        if (vat_store_open_read(&st[i], roots[i], &e) != 0) {
            vat_cli_line(stderr, e.msg);
            rc = VAT_EXIT_USAGE;
            break;
        }
    }
    struct vat_audit_report r;
    vat_audit_init(&r, max_per_kind);
    if (rc == VAT_EXIT_OK && vat_prints_audit(roots, (size_t)n, &r, &e) != 0) {
        fprintf(stderr, "%s\n", e.msg);
        rc = VAT_EXIT_USAGE;
    }
    if (rc == VAT_EXIT_OK) {
        json_t *sum = vat_audit_summary_json(&r);
        static const char *const not_here[] = {"ngram_n", "ngram_test_prompts",
                                               "ngram_overlap_tasks", "ngram_overlap_share",
                                               "ngram_overlap_by_template", "prompts"};
        for (size_t k = 0; k < sizeof not_here / sizeof not_here[0]; k++)
            json_object_del(sum, not_here[k]);
        json_object_set_new(sum, "summary", json_string("shard_audit"));
        json_object_set_new(sum, "shards", json_integer(n));
        finish_lines(&r, sum);
        rc = r.findings ? VAT_EXIT_CORPUS : VAT_EXIT_OK;
    }
    vat_audit_release(&r);
    for (int i = 0; i < opened; i++)
        vat_store_close(&st[i]);
    free(st);
    return rc;
}

int vat_cmd_audit(int argc, char **argv)
{
    const char *root = ".", *max_s = NULL, *memory_s = NULL;
    long max_per_kind = 100, memory_mib = (long)(VAT_AUDIT_MEMORY_BUDGET >> 20);
    struct vat_audit_opts opts = {0};
    int shards = 0, npos = 0;
    const struct vat_option table[] = {
        VAT_OPT_VALUE("root", 0, "DIR", "the corpus root (out/ and fixtures/ below it)", &root),
        VAT_OPT_VALUE("max-per-kind", 0, "N", "print at most N findings of each kind (default "
                                              "100; the summary counts them all)", &max_s),
        VAT_OPT_VALUE("memory", 0, "MIB", "what the audit's sorts hold in memory at most "
                                          "(default 128); the rest waits in temporary files",
                      &memory_s),
        VAT_OPT_VALUE("tmpdir", 0, "DIR", "where those go (default: $TMPDIR, else /tmp)",
                      &opts.tmpdir),
        VAT_OPT_FLAG("shards", 0, "audit the shard roots given as arguments against each other",
                     &shards),
        VAT_OPT_END,
    };
    const struct vat_cli_command cmd = {
        "audit",
        "vat audit [--root DIR] [--max-per-kind N] [--memory MIB] [--tmpdir DIR]\n"
        "       vat audit [--max-per-kind N] --shards SHARD_ROOT...",
        audit_about, table, "0 clean, 1 findings, 2 usage or input error"};
    int prc = vat_cli_parse(&cmd, argc, argv, &npos);
    if (prc != 0)
        return prc > 0 ? VAT_EXIT_OK : VAT_EXIT_USAGE;
    if (max_s && vat_cli_parse_long(max_s, 0, 1000000, &max_per_kind) != 0)
        return vat_cli_usage_error("--max-per-kind takes a whole number from 0 to 1000000");
    if (memory_s && vat_cli_parse_long(memory_s, 1, 65536, &memory_mib) != 0)
        return vat_cli_usage_error("--memory takes a whole number of MiB from 1 to 65536");
    if (shards && !npos)
        return vat_cli_usage_error("--shards takes the shard roots to audit");
    if (!shards && npos)
        return vat_cli_usage_error("audit takes no arguments but the shard roots of --shards");
    if (shards)
        return audit_shards((const char **)argv + 1, npos, (size_t)max_per_kind);

    struct vat_audit_report r;
    struct vat_err e = {{0}};
    vat_audit_init(&r, (size_t)max_per_kind);
    opts.memory_budget = (size_t)memory_mib << 20;
    if (vat_audit_run_with(root, &opts, &r, &e) != 0) {
        vat_cli_line(stderr, e.msg);
        vat_audit_release(&r);
        return VAT_EXIT_USAGE;
    }
    finish_lines(&r, vat_audit_summary_json(&r));
    int rc = r.findings ? VAT_EXIT_CORPUS : VAT_EXIT_OK;
    vat_audit_release(&r);
    return rc;
}

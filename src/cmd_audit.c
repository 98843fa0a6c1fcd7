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

static const char audit_usage[] =
    "usage: vat audit [--root DIR] [--max-per-kind N] [--memory MIB] [--tmpdir DIR]\n"
    "       vat audit [--max-per-kind N] --shards SHARD_ROOT...\n"
    "\n"
    "Audits the corpus below DIR (default: .) for leaks across the split:\n"
    "a task id, fixture digest, normalised prompt, gold program or regex\n"
    "held-out string on both sides, or a fixture sharing more than half of\n"
    "its data rows with one fixture on the other side; for duplicates within\n"
    "a side; and for rows that are unparsable, out of order or unsafe.\n"
    "The summary line also reports, per template, the tasks of each prompt\n"
    "style, the distinct phrasings drawn and the share of distinct word\n"
    "4-grams across its prompts (\"prompts\").\n"
    "\n"
    "  --root DIR          the corpus root (out/ and fixtures/ below it)\n"
    "  --max-per-kind N    print at most N findings of each kind (default 100;\n"
    "                      the summary counts them all)\n"
    "  --memory MIB        what the audit's sorts hold in memory at most\n"
    "                      (default 128); the rest waits in temporary files\n"
    "  --tmpdir DIR        where those go (default: $TMPDIR, else /tmp)\n"
    "  --shards ROOT...    audit the shards of one build against each other from\n"
    "                      their fingerprints (out/prints, written by\n"
    "                      `vat build --shard K/N`) alone: every prompt, gold\n"
    "                      program, regex string, fixture digest or fixture\n"
    "                      sharing over half its data rows that crosses the\n"
    "                      split between any two of them (or within one), and\n"
    "                      duplicate prompts and fixtures within a side\n"
    "\n"
    "exit codes: 0 clean, 1 findings, 2 usage or input error\n";

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
            fprintf(stderr, "%s\n", e.msg);
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
    const char *root = ".";
    long max_per_kind = 100, memory_mib = (long)(VAT_AUDIT_MEMORY_BUDGET >> 20);
    struct vat_audit_opts opts = {0};
    const char **shards = NULL;
    int nshards = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(audit_usage, stdout);
            return VAT_EXIT_OK;
        }
        if (strcmp(a, "--root") == 0 && i + 1 < argc) {
            root = argv[++i];
        } else if (strcmp(a, "--max-per-kind") == 0 && i + 1 < argc) {
            if (vat_cli_parse_long(argv[++i], 0, 1000000, &max_per_kind) != 0)
                return vat_cli_usage_error("--max-per-kind takes a whole number from 0 to 1000000");
        } else if (strcmp(a, "--memory") == 0 && i + 1 < argc) {
            if (vat_cli_parse_long(argv[++i], 1, 65536, &memory_mib) != 0)
                return vat_cli_usage_error("--memory takes a whole number of MiB from 1 to 65536");
        } else if (strcmp(a, "--tmpdir") == 0 && i + 1 < argc) {
            opts.tmpdir = argv[++i];
        } else if (strcmp(a, "--shards") == 0) {
            shards = (const char **)argv + i + 1;
            while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
                i++;
                nshards++;
            }
            if (!nshards)
                return vat_cli_usage_error("--shards takes the shard roots to audit");
        } else {
            return vat_cli_usage_error_arg("audit", a);
        }
    }

    if (nshards)
        return audit_shards(shards, nshards, (size_t)max_per_kind);

    struct vat_audit_report r;
    struct vat_err e = {{0}};
    vat_audit_init(&r, (size_t)max_per_kind);
    opts.memory_budget = (size_t)memory_mib << 20;
    if (vat_audit_run_with(root, &opts, &r, &e) != 0) {
        fprintf(stderr, "%s\n", e.msg);
        vat_audit_release(&r);
        return VAT_EXIT_USAGE;
    }
    finish_lines(&r, vat_audit_summary_json(&r));
    int rc = r.findings ? VAT_EXIT_CORPUS : VAT_EXIT_OK;
    vat_audit_release(&r);
    return rc;
}

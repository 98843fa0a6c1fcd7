/* cmd_verify.c — `vat verify`: a corpus proves itself (src/verify.h),
 * each mismatch printed on one line.  Exports vat_cmd_verify. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "vat.h"
#include "verify.h"

static const char verify_about[] =
    "Proves the corpus below DIR by itself: re-hashes every file of out/ and\n"
    "fixtures/ (and any other file the manifest lists, as a pack's README.md)\n"
    "against out/manifest.json (a missing, extra or changed file is named; a file\n"
    "that is a symbolic link is followed only when the manifest lists it, and\n"
    "must have its digest), and re-checks every verifiers row against its\n"
    "rollouts with the task's own checker (gold scores 1, trap below 1, malformed\n"
    "fails the gate, the agent transcript's answer scores 1).  One line per\n"
    "mismatch on stdout, a summary on stderr.";

/* `vat verify` prints every mismatch.  File names and task ids come from
 * the tree and the rows: escaped, so none can end the line or forge
 * another. */
static void print_mismatch(void *arg, const char *line)
{
    (void)arg;
    vat_cli_linef(stdout, "verify: %s", line);
}

int vat_cmd_verify(int argc, char **argv)
{
    struct vat_verify v = {.root = ".", .report = print_mismatch, .warn = true};
    const struct vat_option opts[] = {
        VAT_OPT_VALUE("root", 0, "DIR", "the corpus root (default .)", &v.root),
        VAT_OPT_END,
    };
    const struct vat_cli_command cmd = {"verify", "vat verify [--root DIR]", verify_about, opts,
                                        "0 clean, 1 any mismatch, 2 usage error or no corpus"};
    int prc = vat_cli_parse(&cmd, argc, argv, NULL);
    if (prc != 0)
        return prc > 0 ? VAT_EXIT_OK : VAT_EXIT_USAGE;
    int rfd_ok = 0;
    {
        struct vat_err e = {{0}};
        int fd = vat_open_beneath(v.root, "out", O_RDONLY | O_DIRECTORY, &e);
        if (fd >= 0) {
            rfd_ok = 1;
            close(fd);
        }
    }
    if (!rfd_ok) {
        vat_cli_linef(stderr, "vat: no corpus at '%s' ('out' is missing; run 'vat build')",
                      v.root);
        return VAT_EXIT_USAGE;
    }
    vat_verify_run(&v);
    fflush(stdout);
    if (v.mismatches)
        fprintf(stderr, "verify: %ld mismatch%s (%ld files, %ld tasks re-checked)\n",
                v.mismatches, v.mismatches == 1 ? "" : "es", v.files, v.tasks);
    else
        fprintf(stderr, "verify: clean (%ld files match the manifest, %ld tasks re-checked)\n",
                v.files, v.tasks);
    return v.mismatches ? VAT_EXIT_CORPUS : VAT_EXIT_OK;
}

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

static const char verify_usage[] =
    "usage: vat verify [--root DIR]\n"
    "\n"
    "Proves the corpus below DIR (default: .): re-hashes every file of out/\n"
    "and fixtures/ against out/manifest.json (a missing, extra or changed\n"
    "file, or a symbolic link, is a mismatch naming the file), and re-checks\n"
    "every verifiers row against its rollouts with the task's own checker\n"
    "(gold scores 1, trap below 1, malformed fails the gate, the agent\n"
    "transcript's answer scores 1).  One line per\n"
    "mismatch on stdout, a summary on stderr.\n"
    "\n"
    "exit codes: 0 clean, 1 any mismatch, 2 usage error or no corpus\n";

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
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(verify_usage, stdout);
            return VAT_EXIT_OK;
        }
        if (strcmp(a, "--root") == 0 && i + 1 < argc)
            v.root = argv[++i];
        else
            return vat_cli_usage_error_arg("verify", a);
    }
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

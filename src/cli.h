/* cli.h — what the vat commands share: exit codes, argument parsing,
 * usage errors, and the commands that live in their own files.
 * Exports #include <stddef.h>
#include <stdio.h>

enum vat_exit, vat_cli_* and vat_cmd_*. */
#ifndef VAT_CLI_H
#define VAT_CLI_H
#ifdef VAT_LAYER_BUILDER
#error "cli.h is the command's (src/main.c, src/cmd_*.c): the builder must not include it"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "../include/libvat.h"
#include "lines.h"

enum vat_exit { VAT_EXIT_OK = 0, VAT_EXIT_CORPUS = 1, VAT_EXIT_USAGE = 2 };

/* Parses a whole decimal number in [lo, hi]; 0 or -1. */
int vat_cli_parse_long(const char *s, long lo, long hi, long *out);
/* vat_cli_line and vat_cli_linef: lines.h. */
/* Prints "vat: <msg>" and returns VAT_EXIT_USAGE. */
int vat_cli_usage_error(const char *msg);
/* Prints "vat <cmd>: unknown or incomplete option '<arg>'" and returns VAT_EXIT_USAGE. */
int vat_cli_usage_error_arg(const char *cmd, const char *arg);
/* Reads at most cap bytes of a file into a new buffer (NUL-terminated);
 * *truncated says whether the file was longer.  0 or -1 with msg. */
int vat_cli_read_file(const char *path, size_t cap, char **out, size_t *len, int *truncated,
                      char *msg, size_t msgcap);

int vat_cmd_audit(int argc, char **argv);
int vat_cmd_check(int argc, char **argv);
int vat_cmd_pack(int argc, char **argv);
int vat_cmd_score(int argc, char **argv);
int vat_cmd_strength(int argc, char **argv);
/* `vat check --explain`: what answer produces on each case (regex) or
 * fixture (SQL) of spec, one JSON line each, to out.  A held-out case (a
 * regex case marked heldout, an SQL fixture after the first) is shown by
 * its counts and verdict only unless reveal: its text, expected matches
 * and rows are what the check keeps hidden. */
void vat_check_explain(FILE *out, const json_t *spec, const char *root, const char *answer,
                       size_t len, long long work, bool reveal);
/* Parses "raw" / "auto" into *mode; 0 or -1. */
int vat_cli_extract_mode(const char *s, vat_extract_mode *mode);
int vat_cmd_verify(int argc, char **argv);
/* Scores every prediction line of in against the corpus at root (split
 * "all", "train" or "test"), writing verdict and summary lines to out.
 * Returns an exit code; msg holds the one-line error for exit 2, and for
 * exit 1 (verdicts that blame the checker or the corpus).  vat_score_run
 * scores answers raw. */
int vat_score_run_mode(const char *root, const char *split, vat_extract_mode mode, FILE *in,
                       const char *in_name, FILE *out, char *msg, size_t msgcap);
int vat_score_run(const char *root, const char *split, FILE *in, const char *in_name, FILE *out,
                  char *msg, size_t msgcap);
/* The same with every option of `vat score`: ks (n_ks of them, ascending,
 * distinct) are the k of --k, each summary line giving pass@k, tasks@k and
 * short@k for every one. */
#define VAT_SCORE_MAX_KS 32
struct vat_score_opts {
    const char *root, *split;
    vat_extract_mode mode;
    unsigned open_flags; /* vat_open_options.flags: VAT_OPEN_REVEAL_HIDDEN */
    long ks[VAT_SCORE_MAX_KS];
    size_t n_ks;
};
int vat_score_run_opts(const struct vat_score_opts *o, FILE *in, const char *in_name, FILE *out,
                       char *msg, size_t msgcap);
/* Reads --k's list ("1,4,16": positive integers up to 1,000,000, at most
 * VAT_SCORE_MAX_KS) into o->ks, ascending without repeats; 0 or -1. */
int vat_score_parse_ks(const char *s, struct vat_score_opts *o);

/* What `vat pack` placed: files below out/ and fixtures/ (fixtures of
 * them), how many as hard links and how many as copies, their bytes. */
struct vat_pack_stats {
    long files, fixtures, linked, copied;
    long long bytes;
};
/* Packs the build at root into dest, a new (or empty) folder: README.md,
 * .gitattributes, out/ and fixtures/ (src/cmd_pack.c).  0, or -1 with e
 * set and nothing left behind. */
struct vat_err;
int vat_pack(const char *root, const char *dest, struct vat_pack_stats *st, struct vat_err *e);

#endif

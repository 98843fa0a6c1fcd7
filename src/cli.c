/* cli.c — the command line's manners, shared by every command (see cli.h):
 * one option table per command, read as git reads its options (--opt
 * value and --opt=value, a short letter where one is given, -- ending the
 * options), usage generated from the table on --help (stdout, exit 0),
 * and the nearest name suggested for a mistyped command or option.
 * Exports vat_cli_parse, vat_cli_usage, vat_cli_nearest and
 * vat_cli_is_help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The Damerau-Levenshtein distance (optimal string alignment) of a and b:
 * insertions, deletions, substitutions and swaps of two neighbours, one
 * each ("biuld" is 1 from "build").  Names are short: 64 bytes at most
 * are compared. */
static int edit_distance(const char *a, const char *b)
{
    enum { N = 64 };
    size_t n = strlen(a), m = strlen(b);
    if (n >= N || m >= N)
        return N;
    int d[N + 1][N + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] != b[j - 1];
            int best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *vat_cli_nearest(const char *word, const char *const *names, size_t n)
{
    const char *best = NULL;
    int best_d = 0;
    size_t len = strlen(word);
    for (size_t i = 0; i < n; i++) {
        int d = edit_distance(word, names[i]);
        /* a prefix of one name only ("str" for "strength") is meant too */
        if (len >= 2 && strncmp(names[i], word, len) == 0)
            d = 1;
        if (!best || d < best_d) {
            best = names[i];
            best_d = d;
        }
    }
    /* near enough to be a slip, not another word: at most two edits, and
     * fewer than half the letters */
    if (!best || best_d > 2 || (size_t)best_d * 2 >= len + 1)
        return NULL;
    return best;
}

bool vat_cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

void vat_cli_usage(FILE *f, const struct vat_cli_command *c)
{
    fprintf(f, "usage: %s\n", c->synopsis);
    if (c->about)
        fprintf(f, "\n%s\n", c->about);
    if (c->opts && c->opts->name) {
        fputs("\noptions:\n", f);
        for (const struct vat_option *o = c->opts; o->name; o++) {
            char head[64];
            if (o->short_name)
                snprintf(head, sizeof head, "-%c, --%s%s%s", o->short_name, o->name,
                         o->arg ? " " : "", o->arg ? o->arg : "");
            else
                snprintf(head, sizeof head, "    --%s%s%s", o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
            if (strlen(head) > 24)
                fprintf(f, "  %s\n  %-24s %s\n", head, "", o->help);
            else
                fprintf(f, "  %-24s %s\n", head, o->help);
        }
        fprintf(f, "  %-24s %s\n", "-h, --help", "show this help and exit");
    }
    if (c->exits)
        fprintf(f, "\nexit codes: %s\n", c->exits);
}

/* Prints "vat CMD: unknown option 'ARG'", with the nearest option named. */
static int unknown_option(const struct vat_cli_command *c, const char *arg)
{
    const char *names[64];
    char spelled[64][48];
    size_t n = 0;
    for (const struct vat_option *o = c->opts; o && o->name && n < 64; o++) {
        snprintf(spelled[n], sizeof spelled[n], "--%s", o->name);
        names[n] = spelled[n];
        n++;
    }
    char word[64];
    snprintf(word, sizeof word, "%.*s", (int)strcspn(arg, "="), arg);
    const char *near = vat_cli_nearest(word, names, n);
    if (near)
        vat_cli_linef(stderr, "vat %s: unknown option '%s'; did you mean '%s'? (see 'vat %s --help')",
                      c->name, arg, near, c->name);
    else
        vat_cli_linef(stderr, "vat %s: unknown option '%s' (see 'vat %s --help')", c->name, arg,
                      c->name);
    return -1;
}

int vat_cli_parse(const struct vat_cli_command *c, int argc, char **argv, int *npos)
{
    int pos = 0;
    bool options_end = false;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (options_end || a[0] != '-' || strcmp(a, "-") == 0) {
            argv[1 + pos++] = a; /* positional, kept in order */
            continue;
        }
        if (strcmp(a, "--") == 0) {
            options_end = true;
            continue;
        }
        if (vat_cli_is_help(a)) {
            vat_cli_usage(stdout, c);
            return 1;
        }
        const struct vat_option *o = NULL;
        const char *value = NULL;
        if (a[1] == '-') {
            size_t len = strcspn(a + 2, "=");
            for (const struct vat_option *k = c->opts; k && k->name; k++)
                if (strlen(k->name) == len && strncmp(k->name, a + 2, len) == 0)
                    o = k;
            if (o && a[2 + len] == '=') {
                if (!o->arg) {
                    vat_cli_linef(stderr, "vat %s: option '--%s' takes no value (see 'vat %s "
                                          "--help')",
                                  c->name, o->name, c->name);
                    return -1;
                }
                value = a + 3 + len;
            }
        } else if (a[2] == 0) {
            for (const struct vat_option *k = c->opts; k && k->name; k++)
                if (k->short_name && k->short_name == a[1])
                    o = k;
        }
        if (!o)
            return unknown_option(c, a);
        if (!o->arg) {
            if (o->flag)
                *o->flag = 1;
            continue;
        }
        if (!value) {
            if (i + 1 >= argc) {
                vat_cli_linef(stderr, "vat %s: option '--%s' needs a value (%s)", c->name,
                              o->name, o->arg);
                return -1;
            }
            value = argv[++i];
        }
        if (o->value)
            *o->value = value;
    }
    if (npos)
        *npos = pos;
    else if (pos) {
        vat_cli_linef(stderr, "vat %s: unexpected argument '%s' (see 'vat %s --help')", c->name,
                      argv[1], c->name);
        return -1;
    }
    return 0;
}

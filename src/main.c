/* main.c — the vat command: one commands[] table, one function per
 * command, usage at the top of each.  Only main decides the exit code. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "build.h"
#include "card.h"
#include "cli.h"
#include "config.h"
#include "shard.h"
#include "store.h"
#include "template.h"

static const char build_synopsis[] =
    "vat build [--config FILE] [--root DIR] [--jobs N] [--only a,b] [--shard K/N] [--quiet]";
static const char build_about[] =
    "Regenerates the corpus from the seeds file: every task drawn, admitted or\n"
    "redrawn, its fixtures under DIR/fixtures/ and its rows in the tables under\n"
    "DIR/out/, with the dataset card and out/manifest.json.  The same seeds give\n"
    "the same bytes whatever --jobs is.  Progress goes to stderr, the summary to\n"
    "stdout.";

static int cmd_build(int argc, char **argv)
{
    const char *config = "seeds.toml", *root = ".", *only = NULL, *jobs_s = NULL, *shard_s = NULL;
    int quiet = 0;
    const struct vat_option opts[] = {
        VAT_OPT_VALUE("config", 0, "FILE", "the seeds file (default seeds.toml)", &config),
        VAT_OPT_VALUE("root", 0, "DIR", "the corpus root: out/ and fixtures/ go below it "
                                         "(default .)", &root),
        VAT_OPT_VALUE("jobs", 'j', "N", "worker threads, 1 to 256 (default: the cores, at "
                                         "most 64)", &jobs_s),
        VAT_OPT_VALUE("only", 0, "a,b", "build only these templates (into an empty root)", &only),
        VAT_OPT_VALUE("shard", 0, "K/N", "only the tasks whose index mod N is K-1, for vat merge",
                      &shard_s),
        VAT_OPT_FLAG("quiet", 'q', "no progress or timing lines on stderr", &quiet),
        VAT_OPT_END,
    };
    const struct vat_cli_command cmd = {"build", build_synopsis, build_about, opts,
                                        "0 done, 1 a template fell short of its count, 2 usage "
                                        "or input error"};
    int prc = vat_cli_parse(&cmd, argc, argv, NULL);
    if (prc != 0)
        return prc > 0 ? VAT_EXIT_OK : VAT_EXIT_USAGE;
    long jobs = 0;
    long shard = 0, shards = 0;
    if (shard_s) {
        const char *v = shard_s, *slash = strchr(v, '/');
        char k[32];
        if (!slash || (size_t)(slash - v) >= sizeof k)
            return vat_cli_usage_error("--shard takes K/N, 1 <= K <= N <= 100000");
        memcpy(k, v, (size_t)(slash - v));
        k[slash - v] = 0;
        if (vat_cli_parse_long(slash + 1, 1, 100000, &shards) != 0 ||
            vat_cli_parse_long(k, 1, shards, &shard) != 0)
            return vat_cli_usage_error("--shard takes K/N, 1 <= K <= N <= 100000");
    }
    if (jobs_s && vat_cli_parse_long(jobs_s, 1, 256, &jobs) != 0)
        return vat_cli_usage_error("--jobs takes a whole number from 1 to 256");
    if (jobs == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = n > 0 ? (n > 64 ? 64 : n) : 1;
    }
    struct vat_config c;
    struct vat_err e = {{0}};
    if (vat_config_load(&c, config, &e) != 0) {
        vat_cli_line(stderr, e.msg);
        return VAT_EXIT_USAGE;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct vat_build_opts o = {
        .root = root,
        .jobs = (int)jobs,
        .only = only,
        /* Progress always goes to stderr (a live line on a terminal, a
         * line every few seconds otherwise; VAT_PROGRESS_EVERY sets the
         * seconds); the summary table and shortfall lines go to stdout. */
        .progress = quiet ? NULL : stderr,
        .progress_tty = isatty(fileno(stderr)),
        .progress_every = getenv("VAT_PROGRESS_EVERY") ? atof(getenv("VAT_PROGRESS_EVERY")) : 0,
        .summary = stdout,
        .card = 1,
        .shard = (int)shard,
        .shards = (int)shards,
    };
    /* Zeroed: vat_build can fail before it fills st (an unknown --only
     * name, an unusable root), and st.per is freed below either way. */
    struct vat_build_stats st = {0};
    /* vat_build writes the card and the manifest itself, into the stage,
     * before the swap that makes the new corpus current. */
    int rc = vat_build(&c, &o, &st, &e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    vat_config_release(&c);
    free(st.per);
    if (rc < 0) {
        vat_cli_line(stderr, e.msg);
        return rc == -2 ? VAT_EXIT_CORPUS : VAT_EXIT_USAGE;
    }
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    /* Timing goes to stderr so that stdout stays byte-identical per run. */
    if (!quiet)
        vat_cli_linef(stderr, "vat: built %ld of %ld tasks into '%s' in %.2f s with %ld jobs",
                      st.admitted, st.tasks, root, secs, jobs);
    return rc == 0 ? VAT_EXIT_OK : VAT_EXIT_CORPUS;
}

static const char merge_synopsis[] = "vat merge [--config FILE] --to DIR SHARD_ROOT...";
static const char merge_about[] =
    "Joins the N shard roots of one seeds file (built with vat build --shard K/N,\n"
    "in any order, on any machines) into the corpus a direct build writes, byte\n"
    "for byte.  Each shard is proven first (vat verify); shards of another seeds\n"
    "file, vat version or N, and a missing or repeated shard, are refused.";

static int cmd_merge(int argc, char **argv)
{
    const char *config = "seeds.toml", *to = NULL;
    const struct vat_option opts[] = {
        VAT_OPT_VALUE("config", 0, "FILE", "the seeds file the shards were built from (default "
                                           "seeds.toml)", &config),
        VAT_OPT_VALUE("to", 0, "DIR", "the corpus root to write", &to),
        VAT_OPT_END,
    };
    const struct vat_cli_command cmd = {"merge", merge_synopsis, merge_about, opts,
                                        "0 done, 1 a shard fell short, 2 usage or input error"};
    int nroots = 0;
    int prc = vat_cli_parse(&cmd, argc, argv, &nroots);
    if (prc != 0)
        return prc > 0 ? VAT_EXIT_OK : VAT_EXIT_USAGE;
    if (!to || !*to || nroots == 0)
        return vat_cli_usage_error("merge takes --to DIR and one or more shard roots");
    char **roots = calloc((size_t)nroots + 1, sizeof *roots);
    for (int i = 0; i < nroots; i++)
        roots[i] = argv[1 + i];
    struct vat_config c;
    struct vat_err e = {{0}};
    if (vat_config_load(&c, config, &e) != 0) {
        vat_cli_line(stderr, e.msg);
        free(roots);
        return VAT_EXIT_USAGE;
    }
    int rc = vat_merge(&c, to, roots, nroots, stdout, &e);
    vat_config_release(&c);
    free(roots);
    if (rc < 0) {
        vat_cli_line(stderr, e.msg);
        return VAT_EXIT_USAGE;
    }
    return rc == 0 ? VAT_EXIT_OK : VAT_EXIT_CORPUS;
}

static int cmd_list(int argc, char **argv)
{
    int params = 0;
    const struct vat_option opts[] = {
        VAT_OPT_FLAG("params", 0, "also each template's seeds.toml params with their defaults",
                     &params),
        VAT_OPT_END,
    };
    const struct vat_cli_command cmd = {
        "list", "vat list [--params]",
        "Lists the templates: name, family, answer kind and the trap each is built to catch.",
        opts, "0 done, 2 usage error"};
    int prc = vat_cli_parse(&cmd, argc, argv, NULL);
    if (prc != 0)
        return prc > 0 ? VAT_EXIT_OK : VAT_EXIT_USAGE;
    printf("%-20s %-10s %-8s %s\n", "name", "family", "answer", "trap");
    for (size_t i = 0; vat_registry[i]; i++) {
        const struct vat_template *t = vat_registry[i];
        printf("%-20s %-10s %-8s %s\n", t->name, t->family, t->answer_kind, t->trap);
        if (!params)
            continue;
        printf("    %-18s %-6s default %-10d tasks to draw\n", "count", "int", t->default_count);
        printf("    %-18s %-6s default %-10d level 1-5, a range \"2-4\" or weights {1 = 1, 5 = 2} "
               "(docs/difficulty.md)\n",
               "difficulty", "level", 1);
        for (const struct vat_param *p = t->params; p && p->name; p++) {
            static const char *const types[] = {"int", "real", "bool", "string"};
            if (p->type == VAT_PARAM_STR)
                printf("    %-18s %-6s default %-10s %s\n", p->name, types[p->type],
                       p->def_str ? p->def_str : "", p->doc ? p->doc : "");
            else
                printf("    %-18s %-6s default %-10g %s\n", p->name, types[p->type], p->def,
                       p->doc ? p->doc : "");
        }
    }
    return VAT_EXIT_OK;
}

/* Every command, git's way: one table, one function each (usage and
 * option table at the top of each). */
static const struct vat_command {
    const char *name;
    int (*run)(int argc, char **argv);
    int reads_corpus; /* recover the root, then hold its lock shared while running */
    const char *summary;
} commands[] = {
    {"build", cmd_build, 0, "regenerate the corpus from seeds.toml"}, /* locks itself */
    {"merge", cmd_merge, 0, "join the shards of one config into one corpus"}, /* locks itself */
    {"list", cmd_list, 0, "the templates: name, family, answer kind, trap"},
    {"check", vat_cmd_check, 1, "score one answer with its task's checker"},
    {"score", vat_cmd_score, 1, "score a file of predictions; summary per template"},
    {"audit", vat_cmd_audit, 1, "prove the split leak-free"},
    {"verify", vat_cmd_verify, 1, "re-hash every file and re-check every verifier"},
    {"strength", vat_cmd_strength, 1, "share of gold mutants the checkers kill"},
    {"pack", vat_cmd_pack, 1, "one uploadable dataset folder: card, tables, fixtures"},
    {NULL, NULL, 0, NULL},
};

static void usage(FILE *f)
{
    fputs("usage: vat [-V | --version] [-h | --help] <command> [options]\n\ncommands:\n", f);
    for (const struct vat_command *c = commands; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fputs("\n'vat <command> --help' shows a command's options; 'man vat' the whole manual.\n"
          "exit codes: 0 done, 1 a corpus problem (a template fell short, a mismatch,\n"
          "            a verdict blaming the checker or the corpus), 2 usage or input error\n",
          f);
}

/* The --root a command was given (its last one, as --root DIR or
 * --root=DIR), or ".". */
static const char *root_arg(int argc, char **argv)
{
    const char *root = ".";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--root") == 0 && i + 1 < argc)
            root = argv[++i];
        else if (strncmp(argv[i], "--root=", 7) == 0)
            root = argv[i] + 7;
    }
    return root;
}

static bool asks_help(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (vat_cli_is_help(argv[i]))
            return true;
    return false;
}

/* Every command that reads a corpus first completes or rolls back a swap
 * a killed build left behind, and holds the root's lock shared while it
 * runs, so it sees the whole old corpus or the whole new one (store.h). */
static int run_command(const struct vat_command *c, int argc, char **argv)
{
    if (asks_help(argc, argv))
        return c->run(argc, argv);
    /* An empty root would resolve against the working directory by accident. */
    if (!*root_arg(argc, argv))
        return vat_cli_usage_error("--root must name a folder, not ''");
    if (!c->reads_corpus)
        return c->run(argc, argv);
    struct vat_store s;
    struct vat_err e = {{0}};
    if (vat_store_open_read(&s, root_arg(argc, argv), &e) != 0) {
        vat_cli_line(stderr, e.msg);
        return VAT_EXIT_USAGE;
    }
    int rc = c->run(argc, argv);
    vat_store_close(&s);
    return rc;
}

static const struct vat_command *find_command(const char *name)
{
    for (const struct vat_command *c = commands; c->name; c++)
        if (strcmp(name, c->name) == 0)
            return c;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return VAT_EXIT_USAGE;
    }
    const char *a = argv[1];
    if (vat_cli_is_help(a) || (strcmp(a, "help") == 0 && argc == 2)) {
        usage(stdout);
        return VAT_EXIT_OK;
    }
    if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
        printf("vat %s\n", VAT_VERSION);
        return VAT_EXIT_OK;
    }
    if (strcmp(a, "help") == 0) { /* vat help build: vat build --help */
        const struct vat_command *c = find_command(argv[2]);
        if (c) {
            char *help_argv[] = {argv[2], (char *)"--help", NULL};
            return c->run(2, help_argv);
        }
        a = argv[2];
    } else {
        const struct vat_command *c = find_command(a);
        if (c)
            return run_command(c, argc - 1, argv + 1);
    }
    const char *names[16];
    size_t n = 0;
    for (const struct vat_command *c = commands; c->name && n < 16; c++)
        names[n++] = c->name;
    const char *near = vat_cli_nearest(a, names, n);
    if (near)
        vat_cli_linef(stderr, "vat: '%s' is not a vat command; did you mean '%s'? (see 'vat "
                              "--help')",
                      a, near);
    else if (a[0] == '-')
        vat_cli_linef(stderr, "vat: unknown option '%s' (see 'vat --help')", a);
    else
        vat_cli_linef(stderr, "vat: '%s' is not a vat command (see 'vat --help')", a);
    return VAT_EXIT_USAGE;
}

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

static const char usage_text[] =
    "usage: vat <command> [options]\n"
    "\n"
    "commands:\n"
    "  build  [--config FILE] [--root DIR] [--jobs N] [--only a,b] [--shard K/N] [--quiet]\n"
    "                             regenerate the corpus from seeds.toml (--shard: only\n"
    "                             the tasks whose index mod N is K-1, for vat merge)\n"
    "  merge  [--config FILE] --to DIR SHARD_ROOT...\n"
    "                             join the N shards of one config into the corpus a\n"
    "                             direct build writes, byte for byte\n"
    "  audit  [--root DIR] [--max-per-kind N] [--memory MIB] [--tmpdir DIR]\n"
    "                             leak audit across the split (exit 1 on findings)\n"
    "  audit  [--max-per-kind N] --shards SHARD_ROOT...\n"
    "                             the same across shards, from their fingerprints\n"
    "  list   [--params]          templates: name, family, answer kind, trap\n"
    "  check  [--root DIR] --task ID (--answer TEXT | --answer-file F|-)\n"
    "         [--extract raw|auto] [--explain]\n"
    "                             score one answer with the task's checker\n"
    "  score  [--root DIR] [--split all|train|test] [--extract raw|auto] PREDICTIONS.jsonl\n"
    "                             one verdict line per prediction, then summary lines\n"
    "  pack   --root DIR --to DEST\n"
    "                             one uploadable dataset folder: card, tables, fixtures\n"
    "  strength [--root DIR] [--target X] [--only a,b] [--tasks]\n"
    "                             checker strength: share of gold mutants the cases kill\n"
    "  verify [--root DIR]        re-hash every file against out/manifest.json and re-check\n"
    "                             every verifier on its rollouts (exit 1 on any mismatch)\n"
    "\n"
    "exit codes: 0 done, 1 a corpus problem (a template fell short),\n"
    "            2 usage or input error\n";

static int cmd_build(int argc, char **argv)
{
    const char *config = "seeds.toml", *root = ".", *only = NULL;
    long jobs = 0;
    long shard = 0, shards = 0;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(a, "--shard") == 0 && i + 1 < argc) {
            const char *v = argv[++i], *slash = strchr(v, '/');
            char k[32];
            if (!slash || (size_t)(slash - v) >= sizeof k)
                return vat_cli_usage_error("--shard takes K/N, 1 <= K <= N <= 100000");
            memcpy(k, v, (size_t)(slash - v));
            k[slash - v] = 0;
            if (vat_cli_parse_long(slash + 1, 1, 100000, &shards) != 0 ||
                vat_cli_parse_long(k, 1, shards, &shard) != 0)
                return vat_cli_usage_error("--shard takes K/N, 1 <= K <= N <= 100000");
        } else if (strcmp(a, "--config") == 0 && i + 1 < argc)
            config = argv[++i];
        else if (strcmp(a, "--root") == 0 && i + 1 < argc)
            root = argv[++i];
        else if (strcmp(a, "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(a, "--jobs") == 0 && i + 1 < argc) {
            if (vat_cli_parse_long(argv[++i], 1, 256, &jobs) != 0)
                return vat_cli_usage_error("--jobs takes a whole number from 1 to 256");
        } else
            return vat_cli_usage_error_arg("build", a);
    }
    if (jobs == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = n > 0 ? (n > 64 ? 64 : n) : 1;
    }
    struct vat_config c;
    struct vat_err e = {{0}};
    if (vat_config_load(&c, config, &e) != 0) {
        fprintf(stderr, "%s\n", e.msg);
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
        fprintf(stderr, "%s\n", e.msg);
        return rc == -2 ? VAT_EXIT_CORPUS : VAT_EXIT_USAGE;
    }
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    /* Timing goes to stderr so that stdout stays byte-identical per run. */
    if (!quiet)
        fprintf(stderr, "vat: built %ld of %ld tasks into '%s' in %.2f s with %ld jobs\n",
                st.admitted, st.tasks, root, secs, jobs);
    return rc == 0 ? VAT_EXIT_OK : VAT_EXIT_CORPUS;
}

static int cmd_merge(int argc, char **argv)
{
    const char *config = "seeds.toml", *to = NULL;
    char **roots = calloc((size_t)argc, sizeof *roots);
    int nroots = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--config") == 0 && i + 1 < argc)
            config = argv[++i];
        else if (strcmp(a, "--to") == 0 && i + 1 < argc)
            to = argv[++i];
        else if (a[0] == '-' && a[1]) {
            free(roots);
            return vat_cli_usage_error_arg("merge", a);
        } else
            roots[nroots++] = argv[i];
    }
    if (!to || !*to || nroots == 0) {
        free(roots);
        return vat_cli_usage_error("merge takes --to DIR and one or more shard roots");
    }
    struct vat_config c;
    struct vat_err e = {{0}};
    if (vat_config_load(&c, config, &e) != 0) {
        fprintf(stderr, "%s\n", e.msg);
        free(roots);
        return VAT_EXIT_USAGE;
    }
    int rc = vat_merge(&c, to, roots, nroots, stdout, &e);
    vat_config_release(&c);
    free(roots);
    if (rc < 0) {
        fprintf(stderr, "%s\n", e.msg);
        return VAT_EXIT_USAGE;
    }
    return rc == 0 ? VAT_EXIT_OK : VAT_EXIT_CORPUS;
}

static int cmd_list(int argc, char **argv)
{
    int params = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--params") == 0)
            params = 1;
        else
            return vat_cli_usage_error_arg("list", argv[i]);
    }
    printf("%-20s %-10s %-8s %s\n", "name", "family", "answer", "trap");
    for (size_t i = 0; vat_registry[i]; i++) {
        const struct vat_template *t = vat_registry[i];
        printf("%-20s %-10s %-8s %s\n", t->name, t->family, t->answer_kind, t->trap);
        if (!params)
            continue;
        printf("    %-18s %-6s default %-10d tasks to draw\n", "count", "int", t->default_count);
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

static const struct vat_command {
    const char *name;
    int (*run)(int argc, char **argv);
    int reads_corpus; /* recover the root, then hold its lock shared while running */
} commands[] = {
    {"audit", vat_cmd_audit, 1},
    {"build", cmd_build, 0}, /* vat_build recovers and locks itself */
    {"merge", cmd_merge, 0}, /* vat_merge locks the shards and the target itself */
    {"check", vat_cmd_check, 1},
    {"list", cmd_list, 0},
    {"pack", vat_cmd_pack, 1},
    {"score", vat_cmd_score, 1},
    {"strength", vat_cmd_strength, 1},
    {"verify", vat_cmd_verify, 1},
    {NULL, NULL, 0},
};

/* The --root a command was given (its last one), or ".". */
static const char *root_arg(int argc, char **argv)
{
    const char *root = ".";
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--root") == 0)
            root = argv[++i];
    return root;
}

/* Every command that reads a corpus first completes or rolls back a swap
 * a killed build left behind, and holds the root's lock shared while it
 * runs, so it sees the whole old corpus or the whole new one (store.h). */
static int run_command(const struct vat_command *c, int argc, char **argv)
{
    /* An empty root would resolve against the working directory by accident. */
    if (!*root_arg(argc, argv))
        return vat_cli_usage_error("--root must name a folder, not ''");
    if (!c->reads_corpus)
        return c->run(argc, argv);
    struct vat_store s;
    struct vat_err e = {{0}};
    if (vat_store_open_read(&s, root_arg(argc, argv), &e) != 0) {
        fprintf(stderr, "%s\n", e.msg);
        return VAT_EXIT_USAGE;
    }
    int rc = c->run(argc, argv);
    vat_store_close(&s);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return VAT_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(usage_text, stdout);
        return VAT_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("vat %s\n", VAT_VERSION);
        return VAT_EXIT_OK;
    }
    for (const struct vat_command *c = commands; c->name; c++)
        if (strcmp(argv[1], c->name) == 0)
            return run_command(c, argc - 1, argv + 1);
    fprintf(stderr, "vat: unknown command '%s' (see 'vat --help')\n", argv[1]);
    return VAT_EXIT_USAGE;
}

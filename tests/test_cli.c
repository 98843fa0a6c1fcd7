/* test_cli.c — the vat command end to end, through the built binary
 * ($VAT_BINARY, set by ctest): a small corpus built twice with different
 * --jobs is byte-identical; every rollout is as admission requires; `vat
 * check` scores gold 1 and the trap 0 from the tables alone; a tampered
 * fixture path is refused without being opened; bad arguments and a bad
 * seeds.toml exit 2 with a one-line message; `vat verify` prints file
 * names escaped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "jsonout.h"
#include "template.h"
#include "testutil.h"
#include "vat.h"

static const char *bin(void)
{
    const char *b = getenv("VAT_BINARY");
    return b && *b ? b : "./vat";
}

/* Runs a shell command; returns its exit status and its stdout (and
 * stderr when merge) in a new string. */
static int run(const char *cmd, char **out)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    struct vat_buf b = VAT_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
        vat_buf_putn(&b, chunk, n);
    int st = pclose(p);
    if (out)
        *out = vat_buf_detach(&b);
    else
        vat_buf_release(&b);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *write_file(const char *dir, const char *name, const char *body)
{
    char *path = vat_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(body, f);
    fclose(f);
    return path;
}

static const char small_config[] =
    "[corpus]\nmaster_seed = 7\ntest_fraction = 0.25\n"
    "[templates.grouped_sum]\ncount = 4\n"
    "[templates.regex_iso_dates]\ncount = 4\n"
    "[templates.sql_paid_revenue]\ncount = 4\n";

/* One template per family keeps the end-to-end run short under ASan. */
#define ONLY "grouped_sum,regex_iso_dates,sql_paid_revenue"
static const char *const only_names[] = {"grouped_sum", "regex_iso_dates", "sql_paid_revenue"};

struct corpus {
    char *dir, *a, *b, *config;
};

static int setup(void **state)
{
    struct corpus *c = calloc(1, sizeof *c);
    c->dir = vat_test_tmpdir("cli");
    c->a = vat_xasprintf("%s/a", c->dir);
    c->b = vat_xasprintf("%s/b", c->dir);
    c->config = write_file(c->dir, "seeds.toml", small_config);
    char *cmd = vat_xasprintf("mkdir -p '%s' '%s' && '%s' build --config '%s' --root '%s' --jobs 1 "
                              "--only " ONLY " >/dev/null && '%s' build --config '%s' --root '%s' "
                              "--jobs 3 --only " ONLY " >/dev/null",
                              c->a, c->b, bin(), c->config, c->a, bin(), c->config, c->b);
    int rc = run(cmd, NULL);
    free(cmd);
    *state = c;
    return rc;
}

static int teardown(void **state)
{
    struct corpus *c = *state;
    vat_test_rmtree(c->dir);
    free(c->dir);
    free(c->a);
    free(c->b);
    free(c->config);
    free(c);
    return 0;
}

static void test_two_builds_identical(void **state)
{
    struct corpus *c = *state;
    char *cmd = vat_xasprintf("diff -r '%s' '%s'", c->a, c->b);
    assert_int_equal(run(cmd, NULL), 0);
    free(cmd);
}

static json_t *read_jsonl(const char *root, const char *table)
{
    json_t *rows = json_array();
    for (int s = 0; s < 2; s++) {
        char *path = vat_xasprintf("%s/out/%s/%s.jsonl", root, table, s ? "test" : "train");
        size_t n = 0;
        char *data = vat_test_read_file(path, &n);
        assert_non_null(data);
        for (char *line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
            json_t *row = json_loads(line, JSON_DECODE_ANY, NULL);
            assert_non_null(row);
            json_array_append_new(rows, row);
        }
        free(data);
        free(path);
    }
    return rows;
}

static void test_tables_and_rollouts(void **state)
{
    struct corpus *c = *state;
    static const char *const tables[] = {"experience", "fixture_generators", "sft_examples",
                                         "rollouts", "preference_pairs", "verifiers",
                                         "rubric_items", "env"};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        json_t *rows = read_jsonl(c->a, tables[i]);
        assert_true(json_array_size(rows) >= 12);
        json_decref(rows);
    }
    json_t *ro = read_jsonl(c->a, "rollouts");
    json_t *exp = read_jsonl(c->a, "experience");
    /* gold, trap, malformed, and the agent transcript's answer */
    assert_int_equal(json_array_size(ro), 4 * json_array_size(exp));
    json_decref(exp);
    size_t i;
    json_t *r;
    json_array_foreach(ro, i, r) {
        const char *role = json_string_value(json_object_get(r, "role"));
        double score = json_number_value(json_object_get(r, "score"));
        int gate = json_is_true(json_object_get(r, "gate_passed"));
        if (strcmp(role, "gold") == 0)
            assert_true(gate && score == 1.0);
        else if (strcmp(role, "trap") == 0)
            assert_true(gate && score < 1.0);
        else if (strcmp(role, "agent") == 0)
            assert_true(gate && score == 1.0);
        else
            assert_true(!gate && score == 0.0);
    }
    json_decref(ro);

    /* Every template is on both sides, and rows are sorted by task_id. */
    json_t *ex = read_jsonl(c->a, "experience");
    for (size_t t = 0; t < sizeof only_names / sizeof only_names[0]; t++) {
        int train = 0, test = 0;
        json_array_foreach(ex, i, r) {
            if (strcmp(json_string_value(json_object_get(r, "template")), only_names[t]))
                continue;
            if (strcmp(json_string_value(json_object_get(r, "split")), "test") == 0)
                test++;
            else
                train++;
        }
        assert_int_equal(test, 1); /* 4 tasks at 0.25 */
        assert_int_equal(train, 3);
    }
    json_decref(ex);
}

static void test_check_scores_from_tables(void **state)
{
    struct corpus *c = *state;
    json_t *ro = read_jsonl(c->a, "rollouts");
    size_t i;
    json_t *r;
    json_array_foreach(ro, i, r) {
        const char *id = json_string_value(json_object_get(r, "task_id"));
        const char *ans = json_string_value(json_object_get(r, "answer"));
        char *af = write_file(c->dir, "answer.txt", ans);
        /* raw: the answers as the rollouts scored them (admission is raw) */
        char *cmd = vat_xasprintf("'%s' check --root '%s' --task '%s' --answer-file '%s' "
                                  "--extract=raw",
                                  bin(), c->a, id, af);
        char *out = NULL;
        assert_int_equal(run(cmd, &out), 0);
        json_t *v = json_loads(out, 0, NULL);
        assert_non_null(v);
        assert_string_equal(json_string_value(json_object_get(v, "task_id")), id);
        assert_true(json_equal(json_object_get(v, "score"), json_object_get(r, "score")));
        assert_string_equal(json_string_value(json_object_get(v, "code")),
                            json_string_value(json_object_get(r, "code")));
        json_decref(v);
        free(out);
        free(cmd);
        free(af);
    }
    json_decref(ro);
}

static void test_tampered_fixture_path_refused(void **state)
{
    struct corpus *c = *state;
    /* Rewrite one sql verifier row so its fixture leaves the root (the
     * spec is JSON text inside the row's spec_json, quotes escaped). */
    char *cmd = vat_xasprintf(
        "cp -r '%s' '%s/t' && cd '%s/t' && "
        "sed -i 's#\\\\\"fixtures\\\\\":\\[\\\\\"fixtures/#"
        "\\\\\"fixtures\\\\\":[\\\\\"../../../etc/#' out/verifiers/*.jsonl && "
        "rm out/manifest.json", /* else the changed table is tampered before the path is read */
        c->a, c->dir, c->dir);
    assert_int_equal(run(cmd, NULL), 0);
    free(cmd);
    cmd = vat_xasprintf("'%s' check --root '%s/t' --task sql_paid_revenue-00000 --answer 'SELECT 1'",
                        bin(), c->dir);
    char *out = NULL;
    /* exit 1: the verdict blames the corpus, not the answer */
    assert_int_equal(run(cmd, &out), 1);
    json_t *v = json_loads(out, 0, NULL);
    assert_non_null(v);
    assert_true(json_number_value(json_object_get(v, "score")) == 0.0);
    assert_string_equal(json_string_value(json_object_get(v, "code")), "internal");
    assert_non_null(strstr(json_string_value(json_object_get(v, "reason")), "unsafe"));
    json_decref(v);
    free(out);
    free(cmd);
}

static void test_usage_errors_exit_2(void **state)
{
    struct corpus *c = *state;
    static const char *const args[] = {
        "",                       "frobnicate",
        "build --jobs 0",         "build --jobs x",
        "build --bogus",          "check",
        "check --task nope-00000 --answer 1",
        "check --task grouped_sum-00000",
        "build --config /nonexistent/seeds.toml",
        "build --only no_such_template",
    };
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        char *cmd = vat_xasprintf("cd '%s' && '%s' %s 2>&1 >/dev/null", c->a, bin(), args[i]);
        char *out = NULL;
        int rc = run(cmd, &out);
        if (rc != 2)
            fprintf(stderr, "'vat %s' exited %d: %s\n", args[i], rc, out);
        assert_int_equal(rc, 2);
        /* One line, prefixed with the program name. */
        assert_true(strncmp(out, "vat", 3) == 0 || strncmp(out, "usage", 5) == 0);
        free(out);
        free(cmd);
    }
}

/* A build that fails before it fills its stats (an
 * unknown --only name, an empty --root) once freed an uninitialised
 * pointer and died by SIGSEGV with its message lost.  It must exit 2 with
 * one line that says why. */
static void test_build_early_failure_exits_2(void **state)
{
    struct corpus *c = *state;
    char *dir = vat_xasprintf("%s/early", c->dir);
    char *cmd = vat_xasprintf("mkdir -p '%s'", dir);
    run(cmd, NULL);
    free(cmd);
    static const char *const args[] = {"--only nope", "--root ''", "--only nope --root ''",
                                       "--only ,", "--only ''", "--only grouped_sum,"};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        cmd = vat_xasprintf("cd '%s' && '%s' build --config '%s' --root . %s 2>&1 >/dev/null", dir,
                            bin(), c->config, args[i]);
        char *out = NULL;
        int rc = run(cmd, &out);
        if (rc != 2)
            fprintf(stderr, "'vat build %s' exited %d: %s\n", args[i], rc, out);
        assert_int_equal(rc, 2);
        assert_true(strncmp(out, "vat", 3) == 0);
        /* Exactly one line. */
        char *nl = strchr(out, '\n');
        assert_non_null(nl);
        assert_int_equal(nl[1], 0);
        free(out);
        free(cmd);
    }
    free(dir);
}

static void test_bad_config_names_path_and_line(void **state)
{
    struct corpus *c = *state;
    char *dir = vat_xasprintf("%s/badcfg", c->dir);
    char *cmd = vat_xasprintf("mkdir -p '%s'", dir);
    run(cmd, NULL);
    free(cmd);
    char *cfg = write_file(dir, "seeds.toml", "[corpus]\nmaster_seed = 1\n\n[templates.grouped_sum]\nrowz = 3\n");
    cmd = vat_xasprintf("cd '%s' && '%s' build --root . 2>&1 >/dev/null", dir, bin());
    char *out = NULL;
    assert_int_equal(run(cmd, &out), 2);
    assert_non_null(strstr(out, "seeds.toml:5:"));
    assert_null(strchr(out, '\n') ? strchr(strchr(out, '\n') + 1, '\n') : NULL);
    free(out);
    free(cmd);
    free(cfg);
    free(dir);
}

/* Off a terminal the build reports a progress line every few seconds on
 * stderr (VAT_PROGRESS_EVERY shortens the interval so that a short build
 * shows some), the summary stays on stdout, and --quiet silences stderr. */
static void test_progress_off_terminal(void **state)
{
    struct corpus *c = *state;
    char *root = vat_xasprintf("%s/progress", c->dir);
    char *err = vat_xasprintf("%s/progress.err", c->dir);
    char *cmd = vat_xasprintf("VAT_PROGRESS_EVERY=0.000001 '%s' build --config '%s' --root '%s' "
                              "--jobs 2 --only grouped_sum 2>'%s'",
                              bin(), c->config, root, err);
    char *out = NULL;
    assert_int_equal(run(cmd, &out), 0);
    assert_non_null(strstr(out, "grouped_sum"));
    assert_null(strstr(out, "tasks/s"));
    size_t n = 0;
    char *text = vat_test_read_file(err, &n);
    assert_non_null(text);
    int lines = 0;
    for (char *p = text; (p = strstr(p, "/4 tasks (")) != NULL; p++)
        lines++;
    if (lines < 1)
        fail_msg("no progress line on stderr: '%s'", text);
    assert_null(strchr(text, '\r')); /* no live line off a terminal */
    assert_non_null(strstr(text, "tasks/s, ETA "));
    free(text);
    free(out);
    free(cmd);

    cmd = vat_xasprintf("VAT_PROGRESS_EVERY=0.000001 '%s' build --config '%s' --root '%s' "
                        "--jobs 2 --only grouped_sum --quiet 2>'%s'",
                        bin(), c->config, root, err);
    assert_int_equal(run(cmd, &out), 0);
    assert_non_null(strstr(out, "grouped_sum")); /* the summary still comes */
    text = vat_test_read_file(err, &n);
    assert_non_null(text);
    assert_int_equal(n, 0);
    free(text);
    free(out);
    free(cmd);
    free(err);
    free(root);
}

/* A file name under fixtures/ holding a newline cannot forge a line of
 * `vat verify`: every name is printed with its control bytes escaped. */
static void test_verify_escapes_file_names(void **state)
{
    struct corpus *c = *state;
    char *dir = vat_xasprintf("%s/escaped", c->dir);
    char *cmd = vat_xasprintf("cp -r '%s' '%s'", c->a, dir);
    assert_int_equal(run(cmd, NULL), 0);
    free(cmd);
    char *path = vat_xasprintf("%s/fixtures/x\nverify: clean (573 files match the manifest)\r",
                               dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    cmd = vat_xasprintf("'%s' verify --root '%s' 2>&1", bin(), dir);
    char *out = NULL;
    assert_int_equal(run(cmd, &out), 1);
    size_t lines = 0;
    for (const char *p = out; *p; p++)
        lines += *p == '\n';
    if (lines != 2 || !strstr(out, "\\x0averify: clean") || !strstr(out, "\\x0d") ||
        strstr(out, "\nverify: clean"))
        fail_msg("verify printed: %s", out);
    free(out);
    free(cmd);
    free(path);
    free(dir);
}

static void test_list_shows_registry(void **state)
{
    (void)state;
    char *cmd = vat_xasprintf("'%s' list", bin());
    char *out = NULL;
    assert_int_equal(run(cmd, &out), 0);
    for (size_t i = 0; vat_registry[i]; i++)
        assert_non_null(strstr(out, vat_registry[i]->name));
    free(out);
    free(cmd);
}

/* Every command: --help prints its usage to stdout and exits 0, and
 * every option it lists is in the man page (docs/vat.1). */
static void test_help_on_every_command(void **state)
{
    (void)state;
    static const char *const cmds[] = {"build", "merge", "list",     "check", "score",
                                       "audit", "verify", "strength", "pack"};
    char *man_path = vat_xasprintf("%s/docs/vat.1", getenv("VAT_SOURCE_DIR"));
    char *man = vat_test_read_file(man_path, NULL);
    assert_non_null(man);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        for (int k = 0; k < 2; k++) {
            char *cmd = vat_xasprintf(k ? "'%s' help %s 2>/dev/null" : "'%s' %s --help 2>/dev/null",
                                      bin(), cmds[i]);
            char *out = NULL;
            assert_int_equal(run(cmd, &out), 0);
            char *want = vat_xasprintf("usage: vat %s", cmds[i]);
            assert_true(strncmp(out, want, strlen(want)) == 0);
            /* each "--name" of the option table, as the man page spells it */
            for (const char *p = strstr(out, "\noptions:\n"); p && (p = strstr(p, "--")); p += 2) {
                size_t n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");
                struct vat_buf b = VAT_BUF_INIT;
                vat_buf_puts(&b, "\\-\\-");
                for (size_t j = 0; j < n; j++)
                    vat_buf_puts(&b, p[2 + j] == '-' ? "\\-" : (char[]){p[2 + j], 0});
                if (n && !strstr(man, b.data))
                    fail_msg("vat %s --help lists '--%.*s', which docs/vat.1 does not", cmds[i],
                             (int)n, p + 2);
                vat_buf_release(&b);
            }
            free(want);
            free(out);
            free(cmd);
        }
    }
    free(man);
    free(man_path);
}

/* git's manners: --opt=value, -V, the nearest command or option named,
 * one default extraction (auto) for check and score. */
static void test_cli_manners(void **state)
{
    struct corpus *c = *state;
    char *out = NULL, *cmd;
    cmd = vat_xasprintf("'%s' -V && '%s' --version", bin(), bin());
    assert_int_equal(run(cmd, &out), 0);
    char *want = vat_xasprintf("vat %s\nvat %s\n", VAT_VERSION, VAT_VERSION);
    assert_string_equal(out, want);
    free(want);
    free(out);
    free(cmd);
    static const struct {
        const char *args, *says;
    } slips[] = {
        {"biuld", "did you mean 'build'?"},
        {"verfiy --root x", "did you mean 'verify'?"},
        {"build --rot x", "did you mean '--root'?"},
        {"check --tsak x", "did you mean '--task'?"},
        {"score --extarct=raw", "did you mean '--extract'?"},
        {"list --params=1", "takes no value"},
        {"build --jobs", "needs a value"},
    };
    for (size_t i = 0; i < sizeof slips / sizeof slips[0]; i++) {
        cmd = vat_xasprintf("'%s' %s 2>&1 >/dev/null", bin(), slips[i].args);
        assert_int_equal(run(cmd, &out), 2);
        if (!strstr(out, slips[i].says))
            fail_msg("'vat %s' said: %s", slips[i].args, out);
        free(out);
        free(cmd);
    }
    /* --root=DIR and --root DIR are the same */
    char *a = NULL, *b = NULL;
    cmd = vat_xasprintf("'%s' verify --root='%s' 2>&1", bin(), c->a);
    assert_int_equal(run(cmd, &a), 0);
    free(cmd);
    cmd = vat_xasprintf("'%s' verify --root '%s' 2>&1", bin(), c->a);
    assert_int_equal(run(cmd, &b), 0);
    assert_string_equal(a, b);
    free(a);
    free(b);
    free(cmd);
    /* check: a completion (reasoning, then a fence) scores as its answer by
     * default; raw scores the text as given */
    json_t *exp = read_jsonl(c->a, "experience");
    json_t *row = json_array_get(exp, 0);
    const char *id = json_string_value(json_object_get(row, "task_id"));
    const char *kind = json_string_value(json_object_get(row, "answer_kind"));
    const char *tag = strcmp(kind, "regex") == 0 ? "regex" : strcmp(kind, "sql") == 0 ? "sql" : "json";
    char *completion = vat_xasprintf("Working.\n\n```%s\n%s\n```\n", tag,
                                     json_string_value(json_object_get(row, "gold")));
    char *af = write_file(c->dir, "completion.txt", completion);
    for (int raw = 0; raw < 2; raw++) {
        cmd = vat_xasprintf("'%s' check --root '%s' --task '%s' --answer-file '%s'%s", bin(), c->a,
                            id, af, raw ? " --extract raw" : "");
        assert_int_equal(run(cmd, &out), 0);
        json_t *v = json_loads(out, 0, NULL);
        assert_non_null(v);
        assert_true(json_number_value(json_object_get(v, "score")) == (raw ? 0.0 : 1.0));
        json_decref(v);
        free(out);
        free(cmd);
    }
    free(af);
    free(completion);
    json_decref(exp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_on_every_command),
        cmocka_unit_test(test_cli_manners),
        cmocka_unit_test(test_two_builds_identical),
        cmocka_unit_test(test_tables_and_rollouts),
        cmocka_unit_test(test_check_scores_from_tables),
        cmocka_unit_test(test_tampered_fixture_path_refused),
        cmocka_unit_test(test_usage_errors_exit_2),
        cmocka_unit_test(test_build_early_failure_exits_2),
        cmocka_unit_test(test_bad_config_names_path_and_line),
        cmocka_unit_test(test_progress_off_terminal),
        cmocka_unit_test(test_verify_escapes_file_names),
        cmocka_unit_test(test_list_shows_registry),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

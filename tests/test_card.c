/* test_card.c — the dataset card (src/card.h) after a real build: its YAML
 * names every table as configs with a train and a test file each
 * (files that exist), experience the only default; its per-template and
 * per-table counts are those of the tables; its template facts are the
 * registry's; it carries the SHA-256 of the seeds file; two builds of the
 * same seeds with different --jobs and roots give the same bytes; the
 * held_out_templates mode is described; a missing seeds file is an error.
 * Its dataset_info features are the tables' columns (tables.h) with the
 * split counts; `vat pack` (cli.h) gives the packed card (data_files under
 * out/, the same body) and a folder of hard links or copies, refusing a
 * non-empty destination and leaving nothing behind on failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "build.h"
#include "card.h"
#include "cli.h"
#include "config.h"
#include "libversions.h"
#include "tables.h"
#include "template.h"
#include "testutil.h"
#include "vat.h"
#include "verify.h"

static const char only[] = "grouped_sum,regex_iso_dates,sql_paid_revenue";

static const char config_text[] =
    "[corpus]\nmaster_seed = 9\ntest_fraction = 0.25\nsplit_salt = \"card-salt\"\n"
    "[templates.grouped_sum]\ncount = 5\n"
    "[templates.regex_iso_dates]\ncount = 4\n"
    "[templates.sql_paid_revenue]\ncount = 4\n";

static const char held_text[] =
    "[corpus]\nmaster_seed = 9\nsplit = \"held_out_templates\"\n"
    "held_out_templates = [\"regex_iso_dates\"]\n"
    "[templates.grouped_sum]\ncount = 3\n"
    "[templates.regex_iso_dates]\ncount = 2\n"
    "[templates.sql_paid_revenue]\ncount = 2\n";

struct fx {
    char *dir, *config, *root_a, *root_b;
    char *card_a, *card_b;
};

static char *write_file(const char *dir, const char *name, const char *body)
{
    char *path = vat_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(body, f);
    fclose(f);
    return path;
}

/* Builds config into root in-process with jobs threads and writes the
 * card as the build does; returns the card text. */
static char *build_with_card(const char *config, const char *root, int jobs)
{
    struct vat_config c;
    struct vat_err e = {{0}};
    if (vat_config_load(&c, config, &e) != 0)
        fail_msg("%s", e.msg);
    struct vat_build_opts o = {.root = root, .jobs = jobs, .only = only};
    struct vat_build_stats st;
    assert_int_equal(mkdir(root, 0755), 0);
    if (vat_build(&c, &o, &st, &e) != 0)
        fail_msg("%s", e.msg);
    if (vat_card_write(&c, &o, &st, &e) != 0)
        fail_msg("%s", e.msg);
    free(st.per);
    vat_config_release(&c);
    char *path = vat_xasprintf("%s/out/README.md", root);
    char *text = vat_test_read_file(path, NULL);
    assert_non_null(text);
    free(path);
    return text;
}

static int setup(void **state)
{
    struct fx *f = vat_xcalloc(1, sizeof *f);
    f->dir = vat_test_tmpdir("card");
    f->config = write_file(f->dir, "seeds.toml", config_text);
    f->root_a = vat_xasprintf("%s/a", f->dir);
    f->root_b = vat_xasprintf("%s/b", f->dir);
    f->card_a = build_with_card(f->config, f->root_a, 2);
    f->card_b = build_with_card(f->config, f->root_b, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    if (!f)
        return 0;
    vat_test_rmtree(f->dir);
    free(f->dir);
    free(f->config);
    free(f->root_a);
    free(f->root_b);
    free(f->card_a);
    free(f->card_b);
    free(f);
    return 0;
}

/* The YAML front matter: the text between the first two "---" lines. */
static char *front_matter(const char *card)
{
    assert_true(strncmp(card, "---\n", 4) == 0);
    const char *end = strstr(card + 4, "\n---\n");
    assert_non_null(end);
    return vat_xstrndup(card + 4, (size_t)(end - card - 4) + 1);
}

static void test_configs(void **state)
{
    struct fx *f = *state;
    char *fm = front_matter(f->card_a);
    assert_non_null(strstr(fm, "license: apache-2.0\n"));
    const char *p = strstr(fm, "configs:\n");
    assert_non_null(p);
    int n = 0, defaults = 0;
    char *copy = vat_xstrdup(p + strlen("configs:\n"));
    char *cur = NULL, *save = NULL;
    int have[2] = {0, 0};
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (strcmp(l, "dataset_info:") == 0)
            break; /* the configs end where the features begin */
        if (strncmp(l, "- config_name: ", 15) == 0) {
            if (cur)
                assert_true(have[0] && have[1]);
            assert_true(n < VAT_N_TABLES);
            cur = l + 15;
            assert_string_equal(cur, vat_table_names[n]); /* every table, in table order */
            n++;
            have[0] = have[1] = 0;
        } else if (strncmp(l, "  - split: ", 11) == 0) {
            assert_non_null(cur);
            const char *split = l + 11;
            int s = strcmp(split, "train") == 0 ? 0 : strcmp(split, "test") == 0 ? 1 : -1;
            assert_true(s >= 0);
            char *next = strtok_r(NULL, "\n", &save);
            assert_non_null(next);
            char *want = vat_xasprintf("    path: %s/%s.jsonl", cur, split);
            assert_string_equal(next, want);
            free(want);
            /* The data file is there, relative to out/. */
            char *file = vat_xasprintf("%s/out/%s/%s.jsonl", f->root_a, cur, split);
            char *data = vat_test_read_file(file, NULL);
            assert_non_null(data);
            free(data);
            free(file);
            have[s] = 1;
        } else if (strcmp(l, "  default: true") == 0) {
            assert_non_null(cur);
            assert_string_equal(cur, "experience");
            defaults++;
        } else if (strcmp(l, "  data_files:") != 0) {
            fail_msg("unexpected line in configs: '%s'", l);
        }
    }
    assert_true(have[0] && have[1]);
    assert_int_equal(n, VAT_N_TABLES);
    assert_int_equal(defaults, 1);
    free(copy);
    free(fm);
}

static long show_mismatchs(const char *root, const char *table, const char *split)
{
    char *path = vat_xasprintf("%s/out/%s/%s.jsonl", root, table, split);
    char *data = vat_test_read_file(path, NULL);
    assert_non_null(data);
    long n = 0;
    for (char *p = data; *p; p++)
        n += *p == '\n';
    free(data);
    free(path);
    return n;
}

static void test_counts_match_tables(void **state)
{
    struct fx *f = *state;
    /* Per template, from the experience rows. */
    long count[3][2] = {{0}}, self_contained[3] = {0};
    static const char *const names[3] = {"grouped_sum", "regex_iso_dates", "sql_paid_revenue"};
    for (int s = 0; s < 2; s++) {
        char *path = vat_xasprintf("%s/out/experience/%s.jsonl", f->root_a, s ? "test" : "train");
        char *data = vat_test_read_file(path, NULL);
        assert_non_null(data);
        for (char *l = strtok(data, "\n"); l; l = strtok(NULL, "\n")) {
            json_t *row = json_loads(l, 0, NULL);
            assert_non_null(row);
            const char *tm = json_string_value(json_object_get(row, "template"));
            for (int t = 0; t < 3; t++) {
                count[t][s] += strcmp(tm, names[t]) == 0;
                self_contained[t] +=
                    strcmp(tm, names[t]) == 0 && json_is_true(json_object_get(row, "self_contained"));
            }
            json_decref(row);
        }
        free(data);
        free(path);
    }
    for (int t = 0; t < 3; t++) {
        const struct vat_template *tm = vat_template_find(names[t]);
        assert_non_null(tm);
        assert_true(count[t][0] > 0 && count[t][1] > 0);
        char *line = vat_xasprintf("| `%s` | %s | %s | %ld | %ld | %ld |\n", names[t], tm->family,
                                   tm->answer_kind, count[t][0], count[t][1], self_contained[t]);
        if (!strstr(f->card_a, line))
            fail_msg("card lacks '%s'", line);
        free(line);
        char *tasks = vat_xasprintf("- tasks: train %ld, test %ld (requested %ld, admitted %ld)\n",
                                    count[t][0], count[t][1], count[t][0] + count[t][1],
                                    count[t][0] + count[t][1]);
        if (!strstr(f->card_a, tasks))
            fail_msg("card lacks '%s'", tasks);
        free(tasks);
    }
    /* Per table, from the line counts. */
    for (int t = 0; t < VAT_N_TABLES; t++) {
        char *prefix = vat_xasprintf("| `%s`", vat_table_names[t]);
        const char *row = strstr(f->card_a, prefix);
        assert_non_null(row);
        const char *eol = strchr(row, '\n');
        char *want = vat_xasprintf(" | %ld | %ld |",
                                   show_mismatchs(f->root_a, vat_table_names[t], "train"),
                                   show_mismatchs(f->root_a, vat_table_names[t], "test"));
        size_t wl = strlen(want);
        assert_true((size_t)(eol - row) > wl);
        assert_memory_equal(eol - wl, want, wl);
        free(want);
        free(prefix);
    }
    /* One trap pair per task. */
    char *sig = vat_xasprintf("- `trap` (%ld pairs)",
                              show_mismatchs(f->root_a, "preference_pairs", "train") +
                                  show_mismatchs(f->root_a, "preference_pairs", "test"));
    assert_non_null(strstr(f->card_a, sig));
    free(sig);
}

static void test_registry_facts(void **state)
{
    struct fx *f = *state;
    for (size_t i = 0; vat_registry[i]; i++) {
        const struct vat_template *t = vat_registry[i];
        char *head = vat_xasprintf("### `%s`\n", t->name);
        char *needle = vat_xasprintf(",%s,", t->name), *list = vat_xasprintf(",%s,", only);
        int built = strstr(list, needle) != NULL;
        free(needle);
        free(list);
        if (!built) {
            assert_null(strstr(f->card_a, head));
            free(head);
            continue;
        }
        const char *sec = strstr(f->card_a, head);
        assert_non_null(sec);
        const char *end = strstr(sec + 1, "\n### ");
        size_t len = end ? (size_t)(end - sec) : strlen(sec);
        char *s = vat_xstrndup(sec, len);
        char *fam = vat_xasprintf("- family: %s; answer kind: %s\n", t->family, t->answer_kind);
        char *q = vat_xasprintf("- question: %s\n", t->summary);
        char *trap = vat_xasprintf("- trap: %s\n", t->trap);
        assert_non_null(strstr(s, fam));
        assert_non_null(strstr(s, q));
        assert_non_null(strstr(s, trap));
        /* the difficulty distribution sums to the section's tasks,
         * and the prompt styles too */
        long train = -1, test = -1, n[5] = {0}, ex = -1, na = -1;
        const char *tk = strstr(s, "- tasks: train ");
        assert_non_null(tk);
        assert_int_equal(sscanf(tk, "- tasks: train %ld, test %ld", &train, &test), 2);
        const char *df = strstr(s, "- difficulty: 1: ");
        assert_non_null(df);
        assert_int_equal(sscanf(df, "- difficulty: 1: %ld, 2: %ld, 3: %ld, 4: %ld, 5: %ld", &n[0],
                                &n[1], &n[2], &n[3], &n[4]),
                         5);
        assert_int_equal(n[0] + n[1] + n[2] + n[3] + n[4], train + test);
        const char *ps = strstr(s, "- prompt styles: explicit ");
        assert_non_null(ps);
        assert_int_equal(sscanf(ps, "- prompt styles: explicit %ld, natural %ld", &ex, &na), 2);
        assert_int_equal(ex + na, train + test);
        free(fam);
        free(q);
        free(trap);
        free(s);
        free(head);
    }
    char *ver = vat_xasprintf("- vat version: %s\n", VAT_VERSION);
    assert_non_null(strstr(f->card_a, ver));
    free(ver);
    assert_non_null(strstr(f->card_a, "- master seed: 9\n"));
    assert_non_null(strstr(f->card_a, "salt `card-salt`"));
    assert_non_null(strstr(f->card_a, "vat build --config seeds.toml --root DIR --only "
                                      "grouped_sum,regex_iso_dates,sql_paid_revenue\n"));
    assert_non_null(strstr(f->card_a, "## License\n\nApache-2.0."));
    /* the versions of the libraries that can shape the bytes */
    struct vat_library l[VAT_N_LIBRARIES];
    vat_library_list(l);
    struct vat_buf want = VAT_BUF_INIT;
    vat_buf_puts(&want, "- built with the libraries:");
    for (int i = 0; i < VAT_N_LIBRARIES; i++)
        vat_buf_printf(&want, "%s %s %s", i ? "," : "", l[i].name, l[i].version);
    vat_buf_putc(&want, '\n');
    char *libs = vat_buf_detach(&want);
    assert_non_null(strstr(f->card_a, libs));
    free(libs);
}

static void test_seeds_sha256(void **state)
{
    struct fx *f = *state;
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;
    EVP_Digest(config_text, strlen(config_text), d, &dl, EVP_sha256(), NULL);
    char hex[65];
    for (unsigned int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    char *line = vat_xasprintf("- seeds file SHA-256: `%s`\n", hex);
    assert_non_null(strstr(f->card_a, line));
    free(line);
}

static void test_two_builds_identical(void **state)
{
    struct fx *f = *state;
    assert_string_equal(f->card_a, f->card_b);
    /* Nothing of this machine: not the root, not the temp directory. */
    assert_null(strstr(f->card_a, f->dir));
    assert_null(strstr(f->card_a, "/tmp"));
}

static void test_held_out_mode(void **state)
{
    struct fx *f = *state;
    char *cfg = write_file(f->dir, "held.toml", held_text);
    char *root = vat_xasprintf("%s/held", f->dir);
    char *card = build_with_card(cfg, root, 2);
    assert_non_null(strstr(card, "Split mode `held_out_templates`: the templates "
                                 "`regex_iso_dates` are wholly in `test`"));
    assert_non_null(strstr(card, "- split: `held_out_templates` (`regex_iso_dates`)\n"));
    /* The held-out template is all test, the others all train. */
    assert_non_null(strstr(card, "| `regex_iso_dates` | regex | regex | 0 | 2 | 2 |\n"));
    assert_non_null(strstr(card, "| `grouped_sum` | analytics | value | 3 | 0 | "));
    assert_non_null(strstr(card, "    path: experience/test.jsonl\n"));
    free(card);
    free(root);
    free(cfg);
}

/* The features of dataset_info are the tables' columns, in order, with
 * one split count per table and split. */
static void test_dataset_info(void **state)
{
    struct fx *f = *state;
    char *fm = front_matter(f->card_a);
    const char *p = strstr(fm, "\ndataset_info:\n");
    assert_non_null(p);
    for (int t = 0; t < VAT_N_TABLES; t++) {
        char *head = vat_xasprintf("\n- config_name: %s\n  features:\n", vat_table_names[t]);
        p = strstr(p, head);
        if (!p)
            fail_msg("no dataset_info for '%s'", vat_table_names[t]);
        p += strlen(head);
        free(head);
        for (const struct vat_column *c = vat_table_columns[t]; c->name; c++) {
            char *name = vat_xasprintf("  - name: %s\n", c->name);
            assert_memory_equal(p, name, strlen(name));
            p += strlen(name);
            free(name);
            const char *want = c->kind == 's' ? "    struct:\n"
                               : c->kind == 'l' ? "    list:\n"
                                                : NULL;
            char *w = want ? vat_xstrdup(want)
                           : vat_xasprintf("    %s: %s\n", c->kind == 'q' ? "sequence" : "dtype",
                                           c->dtype);
            assert_memory_equal(p, w, strlen(w));
            free(w);
            /* skip the members of a struct or list */
            p = strchr(p, '\n') + 1;
            while (strncmp(p, "    ", 4) == 0)
                p = strchr(p, '\n') + 1;
        }
        char *splits = vat_xasprintf("  splits:\n  - name: train\n    num_examples: %ld\n"
                                     "  - name: test\n    num_examples: %ld\n",
                                     show_mismatchs(f->root_a, vat_table_names[t], "train"),
                                     show_mismatchs(f->root_a, vat_table_names[t], "test"));
        assert_memory_equal(p, splits, strlen(splits));
        free(splits);
    }
    assert_non_null(strstr(f->card_a, "- tables format: 2\n"));
    free(fm);
}

/* The packed card: data_files under out/, the body of the build's card. */
static void test_packed_card(void **state)
{
    struct fx *f = *state;
    struct vat_err e = {{0}};
    char *card = vat_card_packed(f->root_a, &e);
    assert_non_null(card);
    char *fm = front_matter(card);
    assert_non_null(strstr(fm, "    path: out/experience/train.jsonl\n"));
    assert_null(strstr(fm, "    path: experience/"));
    assert_non_null(strstr(fm, "\ndataset_info:\n"));
    const char *body_a = strstr(f->card_a + 4, "\n---\n"), *body_p = strstr(card + 4, "\n---\n");
    assert_string_equal(body_a, body_p);
    free(fm);
    free(card);
    char *none = vat_xasprintf("%s/none", f->dir);
    assert_null(vat_card_packed(none, &e));
    assert_non_null(strstr(e.msg, "vat build"));
    free(none);
}

static bool exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

static void show_mismatch(void *arg, const char *line)
{
    (void)arg;
    fprintf(stderr, "verify: %s\n", line);
}

static void test_pack(void **state)
{
    struct fx *f = *state;
    struct vat_err e = {{0}};
    struct vat_pack_stats st;
    char *dest = vat_xasprintf("%s/packed", f->dir);
    assert_int_equal(vat_pack(f->root_a, dest, &st, &e), 0);
    assert_true(st.fixtures > 0);
    /* the table files (out/manifest.json is the pack's own, written anew) */
    assert_int_equal(st.files, st.fixtures + 2 * VAT_N_TABLES);
    assert_int_equal(st.linked + st.copied, st.files);
    /* Every fixture_generators path is there, a hard link of the build's file. */
    long seen = 0;
    for (int s = 0; s < 2; s++) {
        char *path = vat_xasprintf("%s/out/fixture_generators/%s.jsonl", dest,
                                   s ? "test" : "train");
        char *data = vat_test_read_file(path, NULL);
        assert_non_null(data);
        for (char *l = strtok(data, "\n"); l; l = strtok(NULL, "\n")) {
            json_t *row = json_loads(l, 0, NULL);
            const char *rel = json_string_value(json_object_get(row, "path"));
            char *a = vat_path_join(f->root_a, rel), *b = vat_path_join(dest, rel);
            struct stat sa, sb;
            assert_int_equal(stat(a, &sa), 0);
            assert_int_equal(stat(b, &sb), 0);
            if (st.copied == 0)
                assert_true(sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev);
            assert_true(sa.st_size == sb.st_size);
            seen++;
            free(a);
            free(b);
            json_decref(row);
        }
        free(data);
        free(path);
    }
    assert_int_equal(seen, st.fixtures);
    char *readme = vat_xasprintf("%s/README.md", dest), *ga = vat_xasprintf("%s/.gitattributes", dest);
    char *card = vat_test_read_file(readme, NULL), *attrs = vat_test_read_file(ga, NULL);
    char *want = vat_card_packed(f->root_a, &e);
    assert_non_null(card);
    assert_string_equal(card, want);
    assert_non_null(strstr(attrs, "*.sqlite filter=lfs diff=lfs merge=lfs -text\n"));
    assert_non_null(strstr(attrs, "*.xlsx filter=lfs diff=lfs merge=lfs -text\n"));
    free(want);
    /* The pack's own manifest lists its layout: it verifies as it is. */
    long files = 0, tasks = 0;
    assert_int_equal(vat_verify_corpus(dest, show_mismatch, NULL, &files, &tasks), 0);
    assert_int_equal(files, st.files + 2); /* and README.md, .gitattributes */
    assert_true(tasks > 0);

    /* Never into an existing, non-empty folder: refused, nothing touched. */
    assert_int_equal(vat_pack(f->root_a, dest, &st, &e), -1);
    assert_non_null(strstr(e.msg, "not empty"));
    char *again = vat_test_read_file(readme, NULL);
    assert_string_equal(again, card);
    free(again);

    /* An empty folder is fine; a leftover staging folder is refused. */
    char *empty = vat_xasprintf("%s/empty", f->dir);
    assert_int_equal(mkdir(empty, 0755), 0);
    assert_int_equal(vat_pack(f->root_a, empty, &st, &e), 0);
    /* "DEST/" is DEST; "." is no new folder. */
    char *slash = vat_xasprintf("%s/slash//", f->dir), *slash_readme = vat_xasprintf(
                                                            "%s/slash/README.md", f->dir);
    assert_int_equal(vat_pack(f->root_a, slash, &st, &e), 0);
    assert_true(exists(slash_readme));
    assert_int_equal(vat_pack(f->root_a, ".", &st, &e), -1);
    free(slash);
    free(slash_readme);
    char *blocked = vat_xasprintf("%s/blocked", f->dir), *stage = vat_xasprintf("%s.tmp", blocked);
    assert_int_equal(mkdir(stage, 0755), 0);
    assert_int_equal(vat_pack(f->root_a, blocked, &st, &e), -1);
    assert_false(exists(blocked));
    assert_int_equal(rmdir(stage), 0);

    /* Never into the corpus it packs (out/ would then hold files its
     * manifest does not list), nor anywhere below its root, however
     * named: refused, nothing written there. */
    char *in_out = vat_xasprintf("%s/out/packed", f->root_a);
    char *in_root = vat_xasprintf("%s/packed", f->root_a);
    char *dotted = vat_xasprintf("%s/out/../fixtures/p", f->root_a);
    const char *inside[] = {in_out, in_root, dotted, f->root_a};
    for (size_t i = 0; i < sizeof inside / sizeof inside[0]; i++) {
        assert_int_equal(vat_pack(f->root_a, inside[i], &st, &e), -1);
        assert_non_null(strstr(e.msg, "inside the corpus root"));
    }
    assert_false(exists(in_out));
    assert_false(exists(in_root));
    free(in_out);
    free(in_root);
    free(dotted);

    /* A fixture a row names is missing: an error, and nothing left behind. */
    char *broken = vat_xasprintf("%s/broken", f->dir);
    char *cmd = vat_xasprintf("cp -r '%s' '%s' && rm -f '%s'/fixtures/grouped_sum/*/*.csv",
                              f->root_a, broken, broken);
    assert_int_equal(system(cmd), 0);
    char *out = vat_xasprintf("%s/out-broken", f->dir), *out_stage = vat_xasprintf("%s.tmp", out);
    assert_int_equal(vat_pack(broken, out, &st, &e), -1);
    assert_non_null(strstr(e.msg, "missing"));
    assert_false(exists(out));
    assert_false(exists(out_stage));

    free(cmd);
    free(broken);
    free(out);
    free(out_stage);
    free(blocked);
    free(stage);
    free(empty);
    free(card);
    free(attrs);
    free(readme);
    free(ga);
    free(dest);
}

static void test_missing_seeds_file(void **state)
{
    struct fx *f = *state;
    struct vat_config c;
    struct vat_err e = {{0}};
    assert_int_equal(vat_config_parse(&c, config_text, strlen(config_text), "gone/seeds.toml", &e),
                     0);
    struct vat_build_opts o = {.root = f->root_a, .jobs = 1, .only = only};
    char *text = vat_card_render(&c, &o, NULL, &e);
    assert_null(text);
    assert_non_null(strstr(e.msg, "'gone/seeds.toml'"));
    vat_config_release(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configs),
        cmocka_unit_test(test_counts_match_tables),
        cmocka_unit_test(test_registry_facts),
        cmocka_unit_test(test_seeds_sha256),
        cmocka_unit_test(test_two_builds_identical),
        cmocka_unit_test(test_held_out_mode),
        cmocka_unit_test(test_missing_seeds_file),
        cmocka_unit_test(test_dataset_info),
        cmocka_unit_test(test_packed_card),
        cmocka_unit_test(test_pack),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* test_mutant_list.c — the mutant list of the default corpus, pinned.
 * The strength rule admits a regex or SQL task by the mutants of its gold
 * (src/strength.c); a change to the mutation code that is not meant to
 * move them must leave every task's list byte for byte as it was.  The
 * default corpus (the repository's seeds.toml, built by the vat binary
 * under test) is built; every regex- or SQL-checked task's gold, in task
 * order, is mutated, and the list (task, kind, offset, equivalence, text)
 * is hashed.  tests/data/mutant_list.sha256 holds two digests: the golds
 * mutated and the list made of them.  When the golds differ (a template's
 * draw changed on purpose) the list cannot be compared and the test says
 * so; when only the list differs the mutation code moved it.  The list is
 * written to mutant_list.txt in the working directory either way, so two
 * versions can be diffed.  With --root DIR the program prints the list of
 * the corpus at DIR instead. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jsonout.h"
#include "mutate.h"
#include "tables.h"
#include "testutil.h"
#include "vat.h"

/* Appends the rows of out/<table>/{train,test}.jsonl below root to rows. */
static void read_rows(const char *root, const char *table, json_t *rows)
{
    static const char *const splits[] = {"train", "test"};
    for (int k = 0; k < 2; k++) {
        char *path = vat_xasprintf("%s/out/%s/%s.jsonl", root, table, splits[k]);
        FILE *f = fopen(path, "r");
        free(path);
        if (!f)
            continue;
        char *line = NULL;
        size_t cap = 0;
        ssize_t got;
        while ((got = getline(&line, &cap, f)) > 0) {
            json_t *row = json_loadb(line, (size_t)got, 0, NULL);
            if (row)
                json_array_append_new(rows, row);
        }
        free(line);
        fclose(f);
    }
}

static int by_task_id(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    return strcmp(json_string_value(json_object_get(x, "task_id")),
                  json_string_value(json_object_get(y, "task_id")));
}

/* The golds (one line each: task, checker, ordered, gold as JSON) and the
 * mutant list of the corpus at root, in task order. */
static void mutant_list(const char *root, struct vat_buf *golds, struct vat_buf *list)
{
    json_t *ver = json_array(), *exp = json_array();
    read_rows(root, "verifiers", ver);
    read_rows(root, "experience", exp);
    json_t *gold_of = json_object();
    size_t i;
    json_t *row;
    json_array_foreach(exp, i, row) {
        const char *id = json_string_value(json_object_get(row, "task_id"));
        json_t *g = json_object_get(row, "gold");
        if (id && json_is_string(g))
            json_object_set(gold_of, id, g);
    }
    size_t n = json_array_size(ver);
    json_t **v = vat_xcalloc(n + 1, sizeof *v);
    for (i = 0; i < n; i++)
        v[i] = json_array_get(ver, i);
    qsort(v, n, sizeof *v, by_task_id);
    for (i = 0; i < n; i++) {
        const char *id = json_string_value(json_object_get(v[i], "task_id"));
        json_t *spec = vat_verifier_spec(v[i]);
        const char *checker = json_string_value(json_object_get(spec, "checker"));
        bool regex = checker && strcmp(checker, "regex") == 0;
        bool sql = checker && strcmp(checker, "sql") == 0;
        if (!regex && !sql) {
            json_decref(spec);
            continue;
        }
        const char *gold = json_string_value(json_object_get(gold_of, id));
        if (!gold)
            gold = json_string_value(json_object_get(spec, "reference_sql"));
        assert_non_null(gold);
        bool ordered = json_is_true(json_object_get(spec, "ordered"));
        json_t *gj = json_string(gold);
        char *gtext = json_dumps(gj, JSON_ENCODE_ANY);
        vat_buf_printf(golds, "%s\t%s\t%d\t%s\n", id, checker, ordered, gtext);
        free(gtext);
        json_decref(gj);
        struct vat_mutants m = VAT_MUTANTS_INIT;
        struct vat_err e = {{0}};
        int rc = regex ? vat_mutate_regex(gold, &m, &e) : vat_mutate_sql(gold, ordered, &m, &e);
        if (rc != 0)
            vat_buf_printf(list, "%s\terror\t%s\n", id, e.msg);
        for (size_t k = 0; k < m.n; k++) {
            json_t *tj = json_string(m.v[k].text);
            char *text = json_dumps(tj, JSON_ENCODE_ANY);
            vat_buf_printf(list, "%s\t%s\t%zu\t%d\t%s\n", id, m.v[k].kind, m.v[k].offset,
                           m.v[k].equivalent, text);
            free(text);
            json_decref(tj);
        }
        vat_mutants_release(&m);
        json_decref(spec);
    }
    free(v);
    json_decref(gold_of);
    json_decref(exp);
    json_decref(ver);
}

static void test_default_corpus_mutants_pinned(void **state)
{
    (void)state;
    const char *src = getenv("VAT_SOURCE_DIR"), *bin = getenv("VAT_BINARY");
    assert_non_null(src);
    assert_non_null(bin);
    char *root = vat_test_tmpdir("mutants");
    char *cmd = vat_xasprintf("'%s' build --config '%s/seeds.toml' --root '%s' >/dev/null 2>&1",
                              bin, src, root);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    struct vat_buf golds = VAT_BUF_INIT, list = VAT_BUF_INIT;
    mutant_list(root, &golds, &list);
    vat_test_rmtree(root);
    free(root);
    char gd[65], ld[65];
    vat_sha256_hex(golds.data ? golds.data : "", golds.len, gd);
    vat_sha256_hex(list.data ? list.data : "", list.len, ld);
    FILE *out = fopen("mutant_list.txt", "w");
    if (out) {
        fwrite(list.data, 1, list.len, out);
        fclose(out);
    }
    size_t lines = 0;
    for (size_t k = 0; k < list.len; k++)
        lines += list.data[k] == '\n';
    printf("golds %s\nmutants %s (%zu mutants)\n", gd, ld, lines);
    char *path = vat_xasprintf("%s/tests/data/mutant_list.sha256", src);
    char *pinned = vat_test_read_file(path, NULL);
    free(path);
    assert_non_null(pinned);
    char want_g[65] = "", want_l[65] = "";
    assert_int_equal(sscanf(pinned, "golds %64s mutants %64s", want_g, want_l), 2);
    free(pinned);
    if (strcmp(gd, want_g) != 0)
        fail_msg("the default corpus's golds changed (digest %s, pinned %s): the mutant list "
                 "cannot be compared; when the draw changed on purpose, pin both digests printed "
                 "above in tests/data/mutant_list.sha256",
                 gd, want_g);
    if (strcmp(ld, want_l) != 0)
        fail_msg("the mutants of the same golds changed (digest %s, pinned %s; the list is in "
                 "mutant_list.txt)",
                 ld, want_l);
    vat_buf_release(&golds);
    vat_buf_release(&list);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--root") == 0) {
        struct vat_buf golds = VAT_BUF_INIT, list = VAT_BUF_INIT;
        mutant_list(argv[2], &golds, &list);
        fwrite(list.data, 1, list.len, stdout);
        vat_buf_release(&golds);
        vat_buf_release(&list);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_corpus_mutants_pinned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

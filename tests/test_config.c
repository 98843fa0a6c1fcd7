/* test_config.c — seeds.toml loading and validation: the repository's
 * seeds.toml loads against the real registry; defaults fill every gap;
 * c->templates follows registry order with count first and params in
 * declaration order; unknown keys (with suggestions), wrong types, out of
 * range values, unknown templates and the held-out split rules are
 * PATH:LINE errors; every param type is checked through a test registry;
 * and the real registry's declared params are themselves consistent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "rng.h"
#include "template.h"
#include "testutil.h"
#include "toml.h"
#include "vat.h"

static int parse(struct vat_config *c, const char *text, struct vat_err *e)
{
    return vat_config_parse(c, text, strlen(text), "s.toml", e);
}

static char *seeds_path(void)
{
    const char *dir = getenv("VAT_SOURCE_DIR");
    if (dir && *dir)
        return vat_xasprintf("%s/seeds.toml", dir);
    /* tests/test_config.c -> the repository root */
    const char *slash = strrchr(__FILE__, '/');
    if (!slash)
        return vat_xstrdup("../seeds.toml");
    return vat_xasprintf("%.*s/../seeds.toml", (int)(slash - __FILE__), __FILE__);
}

static size_t registry_size(void)
{
    size_t n = 0;
    while (vat_registry[n])
        n++;
    return n;
}

/* c->templates holds every registered template in registry order, each
 * with "count", then "prompt_style" (one of the three styles), then
 * "difficulty" (five weights, one above 0 at least), then its params in
 * declaration order, typed by declaration. */
static void assert_resolved_shape(const struct vat_config *c,
                                  const struct vat_template *const *reg)
{
    const char *name;
    json_t *obj;
    size_t i = 0;
    json_object_foreach(c->templates, name, obj) {
        assert_non_null(reg[i]);
        assert_string_equal(name, reg[i]->name);
        void *it = json_object_iter(obj);
        assert_non_null(it);
        assert_string_equal(json_object_iter_key(it), "count");
        assert_true(json_is_integer(json_object_iter_value(it)));
        it = json_object_iter_next(obj, it);
        assert_non_null(it);
        assert_string_equal(json_object_iter_key(it), "prompt_style");
        const char *st = json_string_value(json_object_iter_value(it));
        assert_non_null(st);
        assert_true(strcmp(st, "explicit") == 0 || strcmp(st, "natural") == 0 ||
                    strcmp(st, "mixed") == 0);
        it = json_object_iter_next(obj, it);
        assert_non_null(it);
        assert_string_equal(json_object_iter_key(it), "difficulty");
        const json_t *w = json_object_iter_value(it);
        assert_int_equal(json_array_size(w), VAT_LEVELS);
        json_int_t wsum = 0;
        for (size_t l = 0; l < VAT_LEVELS; l++) {
            assert_true(json_is_integer(json_array_get(w, l)));
            wsum += json_integer_value(json_array_get(w, l));
        }
        assert_true(wsum > 0);
        for (const struct vat_param *p = reg[i]->params; p && p->name; p++) {
            it = json_object_iter_next(obj, it);
            assert_non_null(it);
            assert_string_equal(json_object_iter_key(it), p->name);
            json_t *v = json_object_iter_value(it);
            switch (p->type) {
            case VAT_PARAM_INT: assert_true(json_is_integer(v)); break;
            case VAT_PARAM_REAL: assert_true(json_is_real(v)); break;
            case VAT_PARAM_BOOL: assert_true(json_is_boolean(v)); break;
            case VAT_PARAM_STR: assert_true(json_is_string(v)); break;
            }
        }
        assert_null(json_object_iter_next(obj, it));
        i++;
    }
    assert_null(reg[i]);
}

/* ---- the repository's seeds.toml ------------------------------------------ */

static void test_repo_seeds_toml_loads(void **state)
{
    (void)state;
    char *path = seeds_path();
    struct vat_config c;
    struct vat_err e = {{0}};
    if (vat_config_load(&c, path, &e) < 0)
        fail_msg("%s", e.msg);
    assert_string_equal(c.path, path);
    assert_int_equal(c.master_seed, 20261130);
    assert_true(c.test_fraction == 0.2);
    assert_string_equal(c.split, "random");
    assert_string_equal(c.split_salt, "vat-split-v1");
    assert_int_equal(json_array_size(c.held_out), 0);
    assert_int_equal(c.inline_max_bytes, 6000);
    assert_int_equal(c.max_redraws, 40);
    assert_resolved_shape(&c, vat_registry);

    /* counts: the file's value where it gives one, else the default */
    size_t len;
    char *text = vat_test_read_file(path, &len);
    assert_non_null(text);
    json_t *raw = vat_toml_parse(text, len, path, NULL, &e);
    assert_non_null(raw);
    json_t *given = json_object_get(raw, "templates");
    for (size_t i = 0; vat_registry[i]; i++) {
        const struct vat_template *t = vat_registry[i];
        json_t *cnt = json_object_get(json_object_get(given, t->name), "count");
        long want = cnt ? (long)json_integer_value(cnt) : t->default_count;
        json_t *got = json_object_get(json_object_get(c.templates, t->name), "count");
        assert_int_equal(json_integer_value(got), want);
    }
    /* the three first templates are in the default corpus */
    const char *const named[] = {"grouped_sum", "regex_iso_dates", "sql_paid_revenue"};
    for (size_t i = 0; i < 3; i++) {
        assert_non_null(json_object_get(given, named[i]));
        json_t *got = json_object_get(json_object_get(c.templates, named[i]), "count");
        assert_int_equal(json_integer_value(got), 12);
    }
    json_decref(raw);
    free(text);
    vat_config_release(&c);
    free(path);
}

/* The default corpus spreads every level over every template; the
 * documented hard evaluation file asks for levels 4 and 5 alone. */
static void test_repo_difficulty(void **state)
{
    (void)state;
    char *path = seeds_path();
    char *hard = vat_xasprintf("%.*s/examples/hard-eval.toml", (int)(strlen(path) - 11), path);
    struct vat_config c;
    struct vat_err e = {{0}};
    if (vat_config_load(&c, path, &e) < 0)
        fail_msg("%s", e.msg);
    for (size_t i = 0; vat_registry[i]; i++) {
        const json_t *w = json_object_get(json_object_get(c.templates, vat_registry[i]->name),
                                          "difficulty");
        for (size_t l = 0; l < VAT_LEVELS; l++)
            assert_true(json_integer_value(json_array_get(w, l)) > 0);
    }
    vat_config_release(&c);
    if (vat_config_load(&c, hard, &e) < 0)
        fail_msg("%s", e.msg);
    for (size_t i = 0; vat_registry[i]; i++) {
        const json_t *cfg = json_object_get(c.templates, vat_registry[i]->name);
        assert_true(json_integer_value(json_object_get(cfg, "count")) > 0);
        const json_t *w = json_object_get(cfg, "difficulty");
        for (size_t l = 0; l < VAT_LEVELS; l++)
            assert_int_equal(json_integer_value(json_array_get(w, l)) > 0, l >= 3);
    }
    vat_config_release(&c);
    free(hard);
    free(path);
}

static void test_defaults_filled(void **state)
{
    (void)state;
    struct vat_config c;
    struct vat_err e = {{0}};
    assert_int_equal(parse(&c, "# nothing set\n", &e), 0);
    assert_string_equal(c.path, "s.toml");
    assert_int_equal(c.master_seed, 1);
    assert_true(c.test_fraction == 0.2);
    assert_string_equal(c.split, "random");
    assert_string_equal(c.split_salt, "vat-split-v1");
    assert_true(json_is_array(c.held_out));
    assert_int_equal(json_array_size(c.held_out), 0);
    assert_int_equal(c.inline_max_bytes, 6000);
    assert_int_equal(c.max_redraws, 40);
    assert_resolved_shape(&c, vat_registry);
    for (size_t i = 0; vat_registry[i]; i++) {
        const struct vat_template *t = vat_registry[i];
        json_t *obj = json_object_get(c.templates, t->name);
        assert_int_equal(json_integer_value(json_object_get(obj, "count")), t->default_count);
        for (const struct vat_param *p = t->params; p && p->name; p++) {
            json_t *v = json_object_get(obj, p->name);
            switch (p->type) {
            case VAT_PARAM_INT: assert_true((double)json_integer_value(v) == p->def); break;
            case VAT_PARAM_REAL: assert_true(json_real_value(v) == p->def); break;
            case VAT_PARAM_BOOL: assert_int_equal(json_is_true(v), p->def != 0); break;
            case VAT_PARAM_STR:
                assert_string_equal(json_string_value(v), p->def_str ? p->def_str : "");
                break;
            }
        }
    }
    vat_config_release(&c);

    /* a [corpus] table that sets one key leaves the others at default */
    assert_int_equal(parse(&c, "[corpus]\nmax_redraws = 0\n", &e), 0);
    assert_int_equal(c.max_redraws, 0);
    assert_int_equal(c.master_seed, 1);
    assert_int_equal(c.inline_max_bytes, 6000);
    vat_config_release(&c);
}

static void test_values_taken(void **state)
{
    (void)state;
    struct vat_config c;
    struct vat_err e = {{0}};
    const char *text = "[corpus]\n"
                       "master_seed = 9_223_372_036_854_775_807\n"
                       "test_fraction = 0.5\n"
                       "split = 'held_out_templates'\n"
                       "held_out_templates = [\"sql_paid_revenue\"]\n"
                       "split_salt = \"\"\n"
                       "inline_max_bytes = 1048576\n"
                       "max_redraws = 1000\n"
                       "[templates]\n"
                       "grouped_sum.count = 0\n"
                       "regex_iso_dates.count = 100000\n";
    if (parse(&c, text, &e) < 0)
        fail_msg("%s", e.msg);
    assert_true(c.master_seed == 9223372036854775807ull);
    assert_true(c.test_fraction == 0.5);
    assert_string_equal(c.split, "held_out_templates");
    assert_int_equal(json_array_size(c.held_out), 1);
    assert_string_equal(json_string_value(json_array_get(c.held_out, 0)), "sql_paid_revenue");
    assert_string_equal(c.split_salt, "");
    assert_int_equal(c.inline_max_bytes, 1048576);
    assert_int_equal(c.max_redraws, 1000);
    json_t *gs = json_object_get(c.templates, "grouped_sum");
    json_t *rx = json_object_get(c.templates, "regex_iso_dates");
    assert_int_equal(json_integer_value(json_object_get(gs, "count")), 0);
    assert_int_equal(json_integer_value(json_object_get(rx, "count")), 100000);
    assert_resolved_shape(&c, vat_registry);
    vat_config_release(&c);
}

/* ---- errors against the real registry -------------------------------------- */

struct bad_case {
    const char *name;
    const char *text;
    const char *want;
};

static const struct bad_case BAD[] = {
    {"unknown corpus key with suggestion", "[corpus]\nmaster_seed = 1\nmaster_sed = 3\n",
     "s.toml:3: unknown key 'corpus.master_sed'; did you mean 'master_seed'?"},
    {"unknown corpus key without suggestion", "[corpus]\nseed = 3\n",
     "s.toml:2: unknown key 'corpus.seed'"},
    {"unknown template key with suggestion", "[templates.grouped_sum]\ncoutn = 3\n",
     "s.toml:2: unknown key 'templates.grouped_sum.coutn'; did you mean 'count'?"},
    {"sub-table inside a template", "[templates.grouped_sum.extra]\nx = 1\n",
     "s.toml:1: unknown key 'templates.grouped_sum.extra'"},
    {"unknown template with suggestion", "[corpus]\n\n[templates.grouped_sums]\ncount = 1\n",
     "s.toml:3: unknown template 'grouped_sums'; did you mean 'grouped_sum'?"},
    {"unknown template", "[templates.no_such_template]\n",
     "s.toml:1: unknown template 'no_such_template'"},
    {"unknown quoted template", "[templates.\"grouped sum\"]\n",
     "s.toml:1: unknown template 'grouped sum'; did you mean 'grouped_sum'?"},
    {"unknown table with suggestion", "[corpse]\nmaster_seed = 1\n",
     "s.toml:1: unknown table 'corpse'; did you mean 'corpus'?"},
    {"unknown root key", "colour = 1\n", "s.toml:1: unknown key 'colour'"},
    {"corpus not a table", "corpus = 1\n", "s.toml:1: 'corpus' must be a table"},
    {"templates not a table", "templates = [\"grouped_sum\"]\n",
     "s.toml:1: 'templates' must be a table"},
    {"template not a table", "templates.grouped_sum = 3\n",
     "s.toml:1: 'templates.grouped_sum' must be a table"},
    {"test_fraction as string", "[corpus]\ntest_fraction = \"0.2\"\n",
     "s.toml:2: 'corpus.test_fraction' must be a number"},
    {"test_fraction of one", "[corpus]\ntest_fraction = 1\n",
     "s.toml:2: 'corpus.test_fraction' must be between 0 and 1"},
    {"test_fraction of zero", "[corpus]\ntest_fraction = 0.0\n",
     "s.toml:2: 'corpus.test_fraction' must be between 0 and 1"},
    {"negative test_fraction", "[corpus]\n\ntest_fraction = -0.5\n",
     "s.toml:3: 'corpus.test_fraction' must be between 0 and 1"},
    {"master_seed as float", "[corpus]\nmaster_seed = 1.5\n",
     "s.toml:2: 'corpus.master_seed' must be an integer"},
    {"master_seed as string", "[corpus]\nmaster_seed = \"1\"\n",
     "s.toml:2: 'corpus.master_seed' must be an integer"},
    {"negative master_seed", "[corpus]\nmaster_seed = -1\n",
     "s.toml:2: 'corpus.master_seed' must not be negative"},
    {"unknown split", "[corpus]\nsplit = \"holdout\"\n",
     "s.toml:2: 'corpus.split' must be 'random' or 'held_out_templates'"},
    {"split as boolean", "[corpus]\nsplit = true\n",
     "s.toml:2: 'corpus.split' must be 'random' or 'held_out_templates'"},
    {"split_salt as integer", "[corpus]\nsplit_salt = 3\n",
     "s.toml:2: 'corpus.split_salt' must be a string"},
    {"inline_max_bytes too large", "[corpus]\ninline_max_bytes = 1048577\n",
     "s.toml:2: 'corpus.inline_max_bytes' must be between 0 and 1048576"},
    {"negative inline_max_bytes", "[corpus]\ninline_max_bytes = -1\n",
     "s.toml:2: 'corpus.inline_max_bytes' must be between 0 and 1048576"},
    {"max_redraws too large", "[corpus]\nmax_redraws = 1001\n",
     "s.toml:2: 'corpus.max_redraws' must be between 0 and 1000"},
    {"max_redraws as float", "[corpus]\nmax_redraws = 40.0\n",
     "s.toml:2: 'corpus.max_redraws' must be an integer"},
    {"count too large", "[templates.grouped_sum]\ncount = 100001\n",
     "s.toml:2: 'templates.grouped_sum.count' must be between 0 and 100000"},
    {"negative count", "[templates.regex_iso_dates]\ncount = -1\n",
     "s.toml:2: 'templates.regex_iso_dates.count' must be between 0 and 100000"},
    {"count as string", "[templates.sql_paid_revenue]\ncount = \"12\"\n",
     "s.toml:2: 'templates.sql_paid_revenue.count' must be an integer"},
    {"held out split without a list", "[corpus]\nsplit = \"held_out_templates\"\n",
     "s.toml:2: 'corpus.held_out_templates' must name at least one template when split is "
     "'held_out_templates'"},
    {"held out split with an empty list",
     "[corpus]\nheld_out_templates = []\nsplit = \"held_out_templates\"\n",
     "s.toml:3: 'corpus.held_out_templates' must name at least one template when split is "
     "'held_out_templates'"},
    {"held out list with the random split", "[corpus]\nheld_out_templates = [\"grouped_sum\"]\n",
     "s.toml:2: 'corpus.held_out_templates' must be empty when split is 'random'"},
    {"held out list with explicit random split",
     "[corpus]\nsplit = \"random\"\nheld_out_templates = [\"grouped_sum\"]\n",
     "s.toml:3: 'corpus.held_out_templates' must be empty when split is 'random'"},
    {"unknown held out template",
     "[corpus]\nsplit = \"held_out_templates\"\nheld_out_templates = [\"grouped_sun\"]\n",
     "s.toml:3: unknown template 'grouped_sun' in 'corpus.held_out_templates'; "
     "did you mean 'grouped_sum'?"},
    {"held out template twice",
     "[corpus]\nsplit = \"held_out_templates\"\n"
     "held_out_templates = [\n  \"grouped_sum\",\n  \"grouped_sum\",\n]\n",
     "s.toml:3: template 'grouped_sum' is listed twice in 'corpus.held_out_templates'"},
    {"held out list as string", "[corpus]\nheld_out_templates = \"grouped_sum\"\n",
     "s.toml:2: 'corpus.held_out_templates' must be an array of template names"},
    {"held out list of integers", "[corpus]\nheld_out_templates = [1]\n",
     "s.toml:2: 'corpus.held_out_templates' must be an array of template names"},
    {"syntax error passes through", "[corpus]\nmaster_seed = 01\n",
     "s.toml:2: leading zeros are not allowed"},
    {"duplicate table passes through", "[corpus]\n[templates.grouped_sum]\n[corpus]\n",
     "s.toml:3: table 'corpus' defined twice"},
};

static void run_bad_case(void **state)
{
    const struct bad_case *bc = *state;
    struct vat_config c;
    struct vat_err e = {{0}};
    if (vat_config_parse(&c, bc->text, strlen(bc->text), "s.toml", &e) == 0) {
        vat_config_release(&c);
        fail_msg("'%s' was accepted but should fail with: %s", bc->name, bc->want);
    }
    if (strcmp(e.msg, bc->want) != 0)
        fail_msg("'%s'\n got: %s\nwant: %s", bc->name, e.msg, bc->want);
    /* a failed parse leaves nothing to release */
    assert_null(c.path);
    assert_null(c.templates);
    assert_null(c.held_out);
}

static void test_held_out_rules(void **state)
{
    (void)state;
    struct vat_config c;
    struct vat_err e = {{0}};
    /* a proper held-out split */
    assert_int_equal(parse(&c,
                           "[corpus]\nsplit = \"held_out_templates\"\n"
                           "held_out_templates = [\"regex_iso_dates\", \"grouped_sum\"]\n",
                           &e),
                     0);
    assert_string_equal(c.split, "held_out_templates");
    assert_int_equal(json_array_size(c.held_out), 2);
    assert_string_equal(json_string_value(json_array_get(c.held_out, 0)), "regex_iso_dates");
    assert_string_equal(json_string_value(json_array_get(c.held_out, 1)), "grouped_sum");
    vat_config_release(&c);

    /* holding out every registered template leaves nothing to train on */
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, "[corpus]\nsplit = \"held_out_templates\"\nheld_out_templates = [");
    for (size_t i = 0; vat_registry[i]; i++)
        vat_buf_printf(&b, "\"%s\", ", vat_registry[i]->name);
    vat_buf_puts(&b, "]\n");
    assert_int_equal(vat_config_parse(&c, b.data, b.len, "s.toml", &e), -1);
    assert_string_equal(e.msg, "s.toml:3: 'corpus.held_out_templates' holds out every template, "
                               "which leaves the train split empty");
    vat_buf_release(&b);
}

static void test_registry_order(void **state)
{
    (void)state;
    struct vat_config c;
    struct vat_err e = {{0}};
    /* tables given in reverse registry order still resolve in registry order */
    struct vat_buf b = VAT_BUF_INIT;
    size_t n = registry_size();
    for (size_t i = n; i-- > 0;)
        vat_buf_printf(&b, "[templates.%s]\ncount = %zu\n", vat_registry[i]->name, i + 1);
    assert_int_equal(vat_config_parse(&c, b.data, b.len, "s.toml", &e), 0);
    assert_resolved_shape(&c, vat_registry);
    for (size_t i = 0; i < n; i++) {
        json_t *obj = json_object_get(c.templates, vat_registry[i]->name);
        assert_int_equal(json_integer_value(json_object_get(obj, "count")), i + 1);
    }
    assert_int_equal(json_object_size(c.templates), n);
    vat_config_release(&c);
    vat_buf_release(&b);
}

/* ---- every param type, through a test registry -------------------------- */

static const struct vat_param ALPHA_PARAMS[] = {
    {.name = "rows", .type = VAT_PARAM_INT, .def = 50, .min = 20, .max = 200, .doc = "rows"},
    {.name = "ratio", .type = VAT_PARAM_REAL, .def = 0.25, .min = 0, .max = 1, .doc = "ratio"},
    {.name = "dirty", .type = VAT_PARAM_BOOL, .def = 1, .doc = "dirty labels"},
    {.name = "currency", .type = VAT_PARAM_STR, .def_str = "USD", .doc = "currency code"},
    {.name = "offset", .type = VAT_PARAM_REAL, .def = -1.5, .min = -2.5, .max = 1e6, .doc = "x"},
    {.name = "len_min", .type = VAT_PARAM_INT, .def = 4, .min = 1, .max = 64, .doc = "x"},
    {.name = "len_max", .type = VAT_PARAM_INT, .def = 8, .min = 1, .max = 64, .doc = "x"},
    {.name = NULL},
};

static const struct vat_template ALPHA = {
    .version = VAT_TEMPLATE_V1,
    .name = "alpha",
    .family = "analytics",
    .answer_kind = "value",
    .params = ALPHA_PARAMS,
    .default_count = 3,
};

static const struct vat_template BETA = {
    .version = VAT_TEMPLATE_V1,
    .name = "beta",
    .family = "regex",
    .answer_kind = "regex",
    .params = NULL,
    .default_count = 7,
};

static const struct vat_template *const TEST_REG[] = {&ALPHA, &BETA, NULL};

static int parse_test_reg(struct vat_config *c, const char *text, struct vat_err *e)
{
    return vat_config_parse_registry(c, text, strlen(text), "p.toml", TEST_REG, e);
}

static void assert_json_is(const json_t *got, const char *want_json)
{
    json_error_t je;
    json_t *want = json_loads(want_json, 0, &je);
    assert_non_null(want);
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_PRESERVE_ORDER);
        fail_msg("got %s\nwant %s", g, want_json);
    }
    json_decref(want);
}

static void test_params_defaults_and_values(void **state)
{
    (void)state;
    struct vat_config c;
    struct vat_err e = {{0}};
    assert_int_equal(parse_test_reg(&c, "", &e), 0);
    assert_resolved_shape(&c, TEST_REG);
    assert_json_is(c.templates,
                   "{\"alpha\": {\"count\": 3, \"prompt_style\": \"explicit\", \"difficulty\": [1, 0, 0, 0, 0], \"rows\": 50, \"ratio\": 0.25, \"dirty\": true,"
                   " \"currency\": \"USD\", \"offset\": -1.5, \"len_min\": 4, \"len_max\": 8},"
                   " \"beta\": {\"count\": 7, \"prompt_style\": \"explicit\", \"difficulty\": [1, 0, 0, 0, 0]}}");
    vat_config_release(&c);

    /* the given values, at the edges of their ranges; a real may be
     * written as an integer and still comes out a real */
    assert_int_equal(parse_test_reg(&c,
                                    "[templates.beta]\ncount = 2\n"
                                    "[templates.alpha]\n"
                                    "currency = 'EUR'\nrows = 200\nratio = 1\ndirty = false\n"
                                    "offset = -2.5\nlen_min = 8\n",
                                    &e),
                     0);
    assert_resolved_shape(&c, TEST_REG);
    assert_json_is(c.templates,
                   "{\"alpha\": {\"count\": 3, \"prompt_style\": \"explicit\", \"difficulty\": [1, 0, 0, 0, 0], \"rows\": 200, \"ratio\": 1.0, \"dirty\": false,"
                   " \"currency\": \"EUR\", \"offset\": -2.5, \"len_min\": 8, \"len_max\": 8},"
                   " \"beta\": {\"count\": 2, \"prompt_style\": \"explicit\", \"difficulty\": [1, 0, 0, 0, 0]}}");
    vat_config_release(&c);

    /* prompt_style: corpus-wide, overridden per template; inline full */
    assert_int_equal(parse_test_reg(&c,
                                    "[corpus]\nprompt_style = 'mixed'\ninline = 'full'\n"
                                    "[templates.beta]\nprompt_style = 'natural'\n",
                                    &e),
                     0);
    assert_resolved_shape(&c, TEST_REG);
    assert_string_equal(c.prompt_style, "mixed");
    assert_true(c.inline_full);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(c.templates, "alpha"), "prompt_style")),
                        "mixed");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(c.templates, "beta"), "prompt_style")),
                        "natural");
    vat_config_release(&c);
    assert_int_equal(parse_test_reg(&c, "", &e), 0);
    assert_false(c.inline_full);
    vat_config_release(&c);

    /* difficulty: a level, a range (string or pair) or weights; corpus-wide,
     * overridden per template */
    static const struct {
        const char *text;
        const char *alpha, *beta;
    } levels[] = {
        {"[corpus]\ndifficulty = 3\n", "[0, 0, 1, 0, 0]", "[0, 0, 1, 0, 0]"},
        {"[corpus]\ndifficulty = '2-4'\n", "[0, 1, 1, 1, 0]", "[0, 1, 1, 1, 0]"},
        {"[corpus]\ndifficulty = [4, 5]\n[templates.beta]\ndifficulty = 1\n",
         "[0, 0, 0, 1, 1]", "[1, 0, 0, 0, 0]"},
        {"[templates.alpha]\ndifficulty = {1 = 1, 2 = 2, 5 = 1}\n", "[1, 2, 0, 0, 1]",
         "[1, 0, 0, 0, 0]"},
        {"[templates.alpha.difficulty]\n5 = 3\n3 = 0\n", "[0, 0, 0, 0, 3]", "[1, 0, 0, 0, 0]"},
        {"[corpus]\ndifficulty = '5-5'\n", "[0, 0, 0, 0, 1]", "[0, 0, 0, 0, 1]"},
    };
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        if (parse_test_reg(&c, levels[i].text, &e) != 0)
            fail_msg("'%s' refused: %s", levels[i].text, e.msg);
        assert_resolved_shape(&c, TEST_REG);
        assert_json_is(json_object_get(json_object_get(c.templates, "alpha"), "difficulty"),
                       levels[i].alpha);
        assert_json_is(json_object_get(json_object_get(c.templates, "beta"), "difficulty"),
                       levels[i].beta);
        vat_config_release(&c);
    }
}

static const struct bad_case PARAM_BAD[] = {
    {"unknown prompt style", "[corpus]\nprompt_style = 'chatty'\n",
     "p.toml:2: 'corpus.prompt_style' must be 'explicit', 'natural' or 'mixed'"},
    {"unknown template prompt style", "[templates.alpha]\nprompt_style = 1\n",
     "p.toml:2: 'templates.alpha.prompt_style' must be 'explicit', 'natural' or 'mixed'"},
    {"difficulty level too high", "[corpus]\ndifficulty = 6\n",
     "p.toml:2: 'corpus.difficulty' must be a level 1 to 5, a range such as \"2-4\" or [2, 4], "
     "or weights such as {1 = 1, 5 = 2}"},
    {"difficulty level zero", "[templates.alpha]\ndifficulty = 0\n",
     "p.toml:2: 'templates.alpha.difficulty' must be a level 1 to 5, a range such as \"2-4\" or "
     "[2, 4], or weights such as {1 = 1, 5 = 2}"},
    {"difficulty as a real", "[corpus]\ndifficulty = 2.5\n",
     "p.toml:2: 'corpus.difficulty' must be a level 1 to 5, a range such as \"2-4\" or [2, 4], "
     "or weights such as {1 = 1, 5 = 2}"},
    {"difficulty word", "[corpus]\ndifficulty = 'hard'\n",
     "p.toml:2: 'corpus.difficulty' must be a level 1 to 5, a range such as \"2-4\" or [2, 4], "
     "or weights such as {1 = 1, 5 = 2}"},
    {"difficulty range past 5", "[corpus]\ndifficulty = '3-6'\n",
     "p.toml:2: 'corpus.difficulty' must be a level 1 to 5, a range such as \"2-4\" or [2, 4], "
     "or weights such as {1 = 1, 5 = 2}"},
    {"difficulty range with text after", "[corpus]\ndifficulty = '2-4x'\n",
     "p.toml:2: 'corpus.difficulty' must be a level 1 to 5, a range such as \"2-4\" or [2, 4], "
     "or weights such as {1 = 1, 5 = 2}"},
    {"difficulty range backwards", "[corpus]\ndifficulty = '4-2'\n",
     "p.toml:2: 'corpus.difficulty' runs from level 4 down to 2; write the lower level first"},
    {"difficulty pair backwards", "[templates.alpha]\ndifficulty = [5, 1]\n",
     "p.toml:2: 'templates.alpha.difficulty' runs from level 5 down to 1; write the lower level "
     "first"},
    {"difficulty triple", "[corpus]\ndifficulty = [1, 2, 3]\n",
     "p.toml:2: 'corpus.difficulty' must be a level 1 to 5, a range such as \"2-4\" or [2, 4], "
     "or weights such as {1 = 1, 5 = 2}"},
    {"difficulty weight key", "[corpus]\ndifficulty = {6 = 1}\n",
     "p.toml:2: 'corpus.difficulty' has a key '6' that is not a level 1 to 5"},
    {"difficulty negative weight", "[corpus]\ndifficulty = {1 = -1, 2 = 1}\n",
     "p.toml:2: 'corpus.difficulty' gives level 1 a weight that is not an integer from 0 to "
     "1000000"},
    {"difficulty weights all zero", "[templates.alpha]\ndifficulty = {1 = 0, 4 = 0}\n",
     "p.toml:2: 'templates.alpha.difficulty' must give at least one level a weight above 0"},
    {"difficulty misspelt", "[templates.alpha]\ndificulty = 2\n",
     "p.toml:2: unknown key 'templates.alpha.dificulty'; did you mean 'difficulty'?"},
    {"unknown inline mode", "[corpus]\ninline = 'all'\n",
     "p.toml:2: 'corpus.inline' must be 'sample' or 'full'"},
    {"int param above range", "[templates.alpha]\nrows = 201\n",
     "p.toml:2: 'templates.alpha.rows' must be between 20 and 200"},
    {"int param below range", "[templates.alpha]\nrows = 19\n",
     "p.toml:2: 'templates.alpha.rows' must be between 20 and 200"},
    {"int param as float", "[templates.alpha]\nrows = 50.0\n",
     "p.toml:2: 'templates.alpha.rows' must be an integer"},
    {"real param above range", "[templates.alpha]\nratio = 1.5\n",
     "p.toml:2: 'templates.alpha.ratio' must be between 0 and 1"},
    {"real param below fractional range", "[templates.alpha]\noffset = -2.6\n",
     "p.toml:2: 'templates.alpha.offset' must be between -2.5 and 1000000"},
    {"real param as string", "[templates.alpha]\nratio = \"0.5\"\n",
     "p.toml:2: 'templates.alpha.ratio' must be a number"},
    {"bool param as integer", "[templates.alpha]\ndirty = 1\n",
     "p.toml:2: 'templates.alpha.dirty' must be true or false"},
    {"str param as integer", "[templates.alpha]\ncurrency = 3\n",
     "p.toml:2: 'templates.alpha.currency' must be a string"},
    {"str param as array", "[templates.alpha]\ncurrency = ['USD']\n",
     "p.toml:2: 'templates.alpha.currency' must be a string"},
    {"misspelt param", "[templates.alpha]\nrows = 30\nrowz = 30\n",
     "p.toml:3: unknown key 'templates.alpha.rowz'; did you mean 'rows'?"},
    {"transposed param", "[templates.alpha]\nratoi = 0.5\n",
     "p.toml:2: unknown key 'templates.alpha.ratoi'; did you mean 'ratio'?"},
    {"param of another template", "[templates.beta]\nrows = 30\n",
     "p.toml:2: unknown key 'templates.beta.rows'"},
    {"min above default max", "[templates.alpha]\nlen_min = 9\n",
     "p.toml:2: 'templates.alpha.len_min' (9) must not be greater than 'templates.alpha.len_max' "
     "(8)"},
    {"max below default min", "[templates.alpha]\nrows = 30\nlen_max = 3\n",
     "p.toml:3: 'templates.alpha.len_min' (4) must not be greater than 'templates.alpha.len_max' "
     "(3)"},
    {"min above given max", "[templates.alpha]\nlen_max = 10\nlen_min = 11\n",
     "p.toml:3: 'templates.alpha.len_min' (11) must not be greater than 'templates.alpha.len_max' "
     "(10)"},
    {"test registry template names", "[templates.alpah]\n",
     "p.toml:1: unknown template 'alpah'; did you mean 'alpha'?"},
    {"every test template held out",
     "[corpus]\nsplit = 'held_out_templates'\nheld_out_templates = ['beta', 'alpha']\n",
     "p.toml:3: 'corpus.held_out_templates' holds out every template, which leaves the "
     "train split empty"},
};

static void run_param_bad_case(void **state)
{
    const struct bad_case *bc = *state;
    struct vat_config c;
    struct vat_err e = {{0}};
    if (parse_test_reg(&c, bc->text, &e) == 0) {
        vat_config_release(&c);
        fail_msg("'%s' was accepted but should fail with: %s", bc->name, bc->want);
    }
    if (strcmp(e.msg, bc->want) != 0)
        fail_msg("'%s'\n got: %s\nwant: %s", bc->name, e.msg, bc->want);
}

/* ---- files ------------------------------------------------------------- */

static void test_load_errors(void **state)
{
    (void)state;
    struct vat_config c;
    struct vat_err e = {{0}};
    assert_int_equal(vat_config_load(&c, "/nonexistent/seeds.toml", &e), -1);
    assert_string_equal(e.msg,
                        "vat: cannot open '/nonexistent/seeds.toml': No such file or directory");

    char *dir = vat_test_tmpdir("config");
    assert_int_equal(vat_config_load(&c, dir, &e), -1);
    char *want = vat_xasprintf("vat: cannot read '%s': Is a directory", dir);
    assert_string_equal(e.msg, want);
    free(want);

    /* exactly 1 MiB of comment is fine; one byte more is refused */
    char *big = vat_path_join(dir, "big.toml");
    FILE *f = fopen(big, "wb");
    assert_non_null(f);
    fputc('#', f);
    for (long i = 1; i < 1024L * 1024L - 1; i++)
        fputc('x', f);
    fputc('\n', f);
    fclose(f);
    assert_int_equal(vat_config_load(&c, big, &e), 0);
    vat_config_release(&c);
    f = fopen(big, "ab");
    fputc('\n', f);
    fclose(f);
    assert_int_equal(vat_config_load(&c, big, &e), -1);
    want = vat_xasprintf("vat: '%s' is larger than 1 MiB", big);
    assert_string_equal(e.msg, want);
    free(want);

    /* a relative path is reported exactly as given */
    char *bad = vat_path_join(dir, "bad.toml");
    f = fopen(bad, "wb");
    fputs("[corpus]\r\nmax_redraws = 5000\r\n", f);
    fclose(f);
    assert_int_equal(vat_config_load(&c, bad, &e), -1);
    want = vat_xasprintf("%s:2: 'corpus.max_redraws' must be between 0 and 1000", bad);
    assert_string_equal(e.msg, want);
    free(want);

    free(bad);
    free(big);
    vat_test_rmtree(dir);
    free(dir);
}

/* Mutated configurations never crash the validator: each one either
 * loads with every template resolved or fails with "PATH:LINE: reason". */
static void test_fuzz_config(void **state)
{
    (void)state;
    static const char base[] =
        "[corpus]\nmaster_seed = 7\ntest_fraction = 0.25\nsplit = \"random\"\n"
        "held_out_templates = []\nsplit_salt = \"s\"\ninline_max_bytes = 10\n"
        "max_redraws = 3\n[templates.grouped_sum]\ncount = 2\n"
        "[templates.regex_iso_dates]\ncount = 1\n";
    static const char *const inserts[] = {
        "count", "= 1", "= -1", "= 1.5", "= \"x\"", "= true", "= []", "= [\"grouped_sum\"]",
        "[corpus]", "[templates]", "[templates.x]", ".", "\n", "held_out_templates",
        "\"held_out_templates\"", "split", "rows", "[templates.grouped_sum.count]",
    };
    static const char *const lines[] = {
        "count = 3\n", "count = 0\n", "rows = 30\n", "split = \"held_out_templates\"\n",
        "held_out_templates = [\"grouped_sum\"]\n", "[templates.sql_paid_revenue]\n",
        "test_fraction = 0.5\n", "test_fraction = 1\n", "master_seed = -4\n",
        "max_redraws = 0\n", "# a comment\n", "\n", "split_salt = 'x'\n",
        "templates.regex_iso_dates.count = 4\n",
    };
    struct vat_rng rng;
    long ok = 0, runs = 0;
    vat_rng_seed(&rng, 20261130, 7);
    for (int round = 0; round < 2000; round++, runs++) {
        struct vat_buf b = VAT_BUF_INIT;
        vat_buf_puts(&b, base);
        int edits = (int)vat_rng_range(&rng, 1, 3);
        for (int k = 0; k < edits; k++) {
            size_t at = vat_rng_below(&rng, (uint32_t)b.len + 1);
            struct vat_buf nb = VAT_BUF_INIT;
            uint32_t op = vat_rng_below(&rng, 4);
            if (op < 2) {
                /* a whole line, at a line start */
                while (at > 0 && b.data[at - 1] != '\n')
                    at--;
            }
            vat_buf_putn(&nb, b.data, at);
            if (op < 3) {
                vat_buf_puts(&nb, op < 2 ? VAT_PICK(&rng, lines) : VAT_PICK(&rng, inserts));
                vat_buf_putn(&nb, b.data + at, b.len - at);
            } else {
                size_t cut = vat_rng_below(&rng, 12);
                if (at + cut > b.len)
                    cut = b.len - at;
                vat_buf_putn(&nb, b.data + at + cut, b.len - at - cut);
            }
            vat_buf_release(&b);
            b = nb;
        }
        struct vat_config c;
        struct vat_err e = {{0}};
        if (vat_config_parse(&c, b.data ? b.data : "", b.len, "f.toml", &e) == 0) {
            ok++;
            assert_resolved_shape(&c, vat_registry);
            assert_true(c.test_fraction > 0 && c.test_fraction < 1);
            vat_config_release(&c);
        } else {
            long line = 0;
            int used = 0;
            if (sscanf(e.msg, "f.toml:%ld: %n", &line, &used) != 1 || used == 0 || line < 1)
                fail_msg("malformed error message: %s", e.msg);
        }
        vat_buf_release(&b);
    }
    print_message("config fuzz: %ld inputs, %ld loaded\n", runs, ok);
    assert_true(ok > 50 && runs - ok > 50);
}

/* ---- inline = "full" caps the declared row counts -------------------------- */

/* Row counts are found by their declaration, not their name: "events_*"
 * is capped, a plain "rows_min" is not, nor a REAL. */
static const struct vat_param SIZED_PARAMS[] = {
    {.name = "events_min", .type = VAT_PARAM_INT, .def = 40, .min = 10, .max = 5000,
     .doc = "x", .role = VAT_PARAM_ROWS},
    {.name = "events_max", .type = VAT_PARAM_INT, .def = 900, .min = 10, .max = 5000,
     .doc = "x", .role = VAT_PARAM_ROWS},
    {.name = "rows_min", .type = VAT_PARAM_INT, .def = 900, .min = 10, .max = 5000, .doc = "x"},
    {.name = NULL},
};

static const struct vat_template SIZED = {
    .version = VAT_TEMPLATE_V1,
    .name = "sized",
    .family = "analytics",
    .answer_kind = "value",
    .params = SIZED_PARAMS,
    .default_count = 1,
};

static void test_inline_full_caps_declared_rows(void **state)
{
    (void)state;
    static const struct vat_template *const reg[] = {&SIZED, NULL};
    struct vat_config c;
    struct vat_err e = {{0}};
    /* 7,000 bytes hold 100 rows of VAT_INLINE_ROW_BYTES (70) */
    static const char full[] = "[corpus]\ninline = 'full'\ninline_max_bytes = 7000\n";
    assert_int_equal(vat_config_parse_registry(&c, full, strlen(full), "p.toml", reg, &e), 0);
    json_t *sized = json_object_get(c.templates, "sized");
    assert_int_equal(json_integer_value(json_object_get(sized, "events_min")), 40);
    assert_int_equal(json_integer_value(json_object_get(sized, "events_max")), 100);
    assert_int_equal(json_integer_value(json_object_get(sized, "rows_min")), 900);
    vat_config_release(&c);
    static const char sample[] = "[corpus]\ninline_max_bytes = 7000\n";
    assert_int_equal(vat_config_parse_registry(&c, sample, strlen(sample), "p.toml", reg, &e), 0);
    sized = json_object_get(c.templates, "sized");
    assert_int_equal(json_integer_value(json_object_get(sized, "events_max")), 900);
    vat_config_release(&c);
}

/* ---- the real registry's declarations -------------------------------------- */

static void test_registry_params_consistent(void **state)
{
    (void)state;
    assert_true(registry_size() > 0);
    for (size_t i = 0; vat_registry[i]; i++) {
        const struct vat_template *t = vat_registry[i];
        assert_true(t->default_count >= 0 && t->default_count <= 100000);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(vat_registry[j]->name, t->name);
        for (const struct vat_param *p = t->params; p && p->name; p++) {
            if (strcmp(p->name, "count") == 0)
                fail_msg("'%s' declares a param called 'count'", t->name);
            for (const struct vat_param *q = t->params; q != p; q++)
                if (strcmp(q->name, p->name) == 0)
                    fail_msg("'%s' declares '%s' twice", t->name, p->name);
            if ((p->type == VAT_PARAM_INT || p->type == VAT_PARAM_REAL) &&
                !(p->min <= p->def && p->def <= p->max))
                fail_msg("default of '%s.%s' is outside its range", t->name, p->name);
            size_t n = strlen(p->name);
            if (n > 4 && strcmp(p->name + n - 4, "_min") == 0) {
                for (const struct vat_param *q = t->params; q->name; q++)
                    if (strlen(q->name) == n && strncmp(q->name, p->name, n - 4) == 0 &&
                        strcmp(q->name + n - 4, "_max") == 0 && p->def > q->def)
                        fail_msg("defaults of '%s.%s' and its _max are out of order", t->name,
                                 p->name);
            }
            if (p->type == VAT_PARAM_STR && !p->def_str)
                fail_msg("'%s.%s' has no default string", t->name, p->name);
            if (p->role == VAT_PARAM_ROWS && p->type != VAT_PARAM_INT)
                fail_msg("'%s.%s' is declared a row count but is not an INT", t->name, p->name);
        }
        /* a template that shows its data sizes it by declared row counts,
         * which inline = "full" caps (regex held-out lines are not shown) */
        bool rows = false;
        for (const struct vat_param *p = t->params; p && p->name; p++)
            rows = rows || p->role == VAT_PARAM_ROWS;
        if (!rows && strcmp(t->family, "regex") != 0)
            fail_msg("'%s' declares no row count (.role = VAT_PARAM_ROWS), so inline = \"full\" "
                     "cannot size its fixtures to show them whole",
                     t->name);
    }
}

int main(void)
{
    static const struct CMUnitTest fixed[] = {
        cmocka_unit_test(test_repo_seeds_toml_loads),
        cmocka_unit_test(test_repo_difficulty),
        cmocka_unit_test(test_defaults_filled),
        cmocka_unit_test(test_values_taken),
        cmocka_unit_test(test_held_out_rules),
        cmocka_unit_test(test_registry_order),
        cmocka_unit_test(test_params_defaults_and_values),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_registry_params_consistent),
        cmocka_unit_test(test_inline_full_caps_declared_rows),
        cmocka_unit_test(test_fuzz_config),
    };
    size_t nfixed = sizeof fixed / sizeof fixed[0];
    size_t nbad = sizeof BAD / sizeof BAD[0];
    size_t npbad = sizeof PARAM_BAD / sizeof PARAM_BAD[0];
    struct CMUnitTest *tests = calloc(nfixed + nbad + npbad, sizeof *tests);
    memcpy(tests, fixed, sizeof fixed);
    /* one named test per rejected configuration, so a failure names it */
    for (size_t i = 0; i < nbad; i++) {
        tests[nfixed + i].name = BAD[i].name;
        tests[nfixed + i].test_func = run_bad_case;
        tests[nfixed + i].initial_state = (void *)&BAD[i];
    }
    for (size_t i = 0; i < npbad; i++) {
        tests[nfixed + nbad + i].name = PARAM_BAD[i].name;
        tests[nfixed + nbad + i].test_func = run_param_bad_case;
        tests[nfixed + nbad + i].initial_state = (void *)&PARAM_BAD[i];
    }
    int rc = _cmocka_run_group_tests("config", tests, nfixed + nbad + npbad, NULL, NULL);
    free(tests);
    return rc;
}

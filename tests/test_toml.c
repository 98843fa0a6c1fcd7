/* test_toml.c — the seeds.toml reader: every supported construct parsed
 * to the expected JSON and line map, one case per rejected construct with
 * its exact "PATH:LINE: reason", and a deterministic fuzz run (random and
 * mutated inputs, every truncation of a good file) under the sanitizers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rng.h"
#include "toml.h"
#include "vat.h"

/* ---- helpers ----------------------------------------------------------- */

static json_t *parse_str(const char *text, json_t **lines, struct vat_err *e)
{
    return vat_toml_parse(text, strlen(text), "t.toml", lines, e);
}

static json_t *expect_json(const char *json_text)
{
    json_error_t je;
    json_t *v = json_loads(json_text, JSON_DECODE_ANY, &je);
    if (!v)
        fail_msg("bad expected json: %s", je.text);
    return v;
}

static void assert_line(json_t *lines, const char *path, long want)
{
    json_t *v = json_object_get(lines, path);
    if (!json_is_integer(v))
        fail_msg("no line recorded for '%s'", path);
    if (json_integer_value(v) != want)
        fail_msg("line of '%s' is %lld, want %ld", path, (long long)json_integer_value(v), want);
}

static void assert_tree(json_t *got, const char *want_json)
{
    json_t *want = expect_json(want_json);
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_SORT_KEYS | JSON_ENCODE_ANY);
        char *w = json_dumps(want, JSON_SORT_KEYS | JSON_ENCODE_ANY);
        fail_msg("tree differs\n got: %s\nwant: %s", g, w);
    }
    json_decref(want);
}

/* ---- good input -------------------------------------------------------- */

static const char GOOD[] =
    "# the corpus\n"
    "title = \"vat\"   # trailing comment\n"
    "bare_key-1 = 1\n"
    "1234 = 'digits are a bare key'\n"
    "\"quoted key\" = true\n"
    "'literal key' = false\n"
    "site.\"google.com\" = 7\n"
    "dotted . spaced = 8\n"
    "\n"
    "[corpus]\n"
    "master_seed = 20261130\n"
    "neg = -17\n"
    "pos = +42\n"
    "zero = 0\n"
    "minus_zero = -0\n"
    "big = 9_223_372_036_854_775_807\n"
    "small = -9223372036854775808\n"
    "frac = 0.2\n"
    "exp = 5e+22\n"
    "exp0 = 1e06\n"
    "tiny = -6.626e-34\n"
    "under = 1_000.5\n"
    "fz = -0.0\n"
    "zexp = 0e-400\n"
    "sub = 5e-324\n"
    "cap = 1E2\n"
    "\n"
    "[strings]\n"
    "esc = \"q\\\" b\\\\ n\\n t\\t r\\r f\\f b\\b\"\n"
    "uni = \"caf\\u00e9 \\U0001F600\"\n"
    "raw = 'C:\\path\\no\\escape'\n"
    "utf8 = \"na\xc3\xafve\"\n"
    "tab = \"a\tb\"\n"
    "empty = \"\"\n"
    "empty_lit = ''\n"
    "\n"
    "[arrays]\n"
    "ints = [1, 2, 3]\n"
    "strs = [ \"a\", 'b' ]\n"
    "empty = []\n"
    "bools = [true, false]\n"
    "reals = [1.5, -2.0]\n"
    "multi = [\n"
    "  \"grouped_sum\",   # first\n"
    "\n"
    "  \"sql_paid_revenue\", # trailing comma next\n"
    "]\n"
    "\n"
    "[ templates . grouped_sum ]\n"
    "count = 12\n"
    "difficulty = { 1 = 1, 2 = 2,5=1 }\n"
    "none = {}\n"
    "\n"
    "[implicit.child]\n"
    "x = 1\n"
    "[implicit]\n"
    "y = 2\n"
    "\n"
    "[fruit]\n"
    "apple.color = \"red\"\n"
    "apple.taste.sweet = true\n"
    "[fruit.apple.texture]\n"
    "smooth = true\n"
    "[empty_table]\n"
    "['quoted table'.\"x y\"]\n"
    "k = 1";

static const char GOOD_JSON[] =
    "{\"title\": \"vat\", \"bare_key-1\": 1, \"1234\": \"digits are a bare key\","
    " \"quoted key\": true, \"literal key\": false, \"site\": {\"google.com\": 7},"
    " \"dotted\": {\"spaced\": 8},"
    " \"corpus\": {\"master_seed\": 20261130, \"neg\": -17, \"pos\": 42, \"zero\": 0,"
    "   \"minus_zero\": 0, \"big\": 9223372036854775807, \"small\": -9223372036854775808,"
    "   \"frac\": 0.2, \"exp\": 5e22, \"exp0\": 1000000.0, \"tiny\": -6.626e-34,"
    "   \"under\": 1000.5, \"fz\": -0.0, \"zexp\": 0.0, \"sub\": 5e-324, \"cap\": 100.0},"
    " \"strings\": {\"esc\": \"q\\\" b\\\\ n\\n t\\t r\\r f\\f b\\b\","
    "   \"uni\": \"caf\\u00e9 \\ud83d\\ude00\", \"raw\": \"C:\\\\path\\\\no\\\\escape\","
    "   \"utf8\": \"na\\u00efve\", \"tab\": \"a\\tb\", \"empty\": \"\", \"empty_lit\": \"\"},"
    " \"arrays\": {\"ints\": [1, 2, 3], \"strs\": [\"a\", \"b\"], \"empty\": [],"
    "   \"bools\": [true, false], \"reals\": [1.5, -2.0],"
    "   \"multi\": [\"grouped_sum\", \"sql_paid_revenue\"]},"
    " \"templates\": {\"grouped_sum\": {\"count\": 12,"
    "   \"difficulty\": {\"1\": 1, \"2\": 2, \"5\": 1}, \"none\": {}}},"
    " \"implicit\": {\"child\": {\"x\": 1}, \"y\": 2},"
    " \"fruit\": {\"apple\": {\"color\": \"red\", \"taste\": {\"sweet\": true},"
    "   \"texture\": {\"smooth\": true}}},"
    " \"empty_table\": {},"
    " \"quoted table\": {\"x y\": {\"k\": 1}}}";

static void test_good_file(void **state)
{
    (void)state;
    struct vat_err e = {{0}};
    json_t *lines = NULL;
    json_t *root = parse_str(GOOD, &lines, &e);
    if (!root)
        fail_msg("parse failed: %s", e.msg);
    assert_tree(root, GOOD_JSON);

    /* types survive: integers stay integers, floats stay reals */
    json_t *corpus = json_object_get(root, "corpus");
    assert_true(json_is_integer(json_object_get(corpus, "zero")));
    assert_true(json_is_real(json_object_get(corpus, "exp0")));
    assert_true(json_is_real(json_object_get(corpus, "fz")));

    assert_line(lines, "title", 2);
    assert_line(lines, "bare_key-1", 3);
    assert_line(lines, "1234", 4);
    assert_line(lines, "\"quoted key\"", 5);
    assert_line(lines, "\"literal key\"", 6);
    assert_line(lines, "site", 7);
    assert_line(lines, "site.\"google.com\"", 7);
    assert_line(lines, "dotted.spaced", 8);
    assert_line(lines, "corpus", 10);
    assert_line(lines, "corpus.master_seed", 11);
    assert_line(lines, "corpus.cap", 26);
    assert_line(lines, "strings.esc", 29);
    assert_line(lines, "arrays.multi", 43);
    assert_line(lines, "templates", 49);
    assert_line(lines, "templates.grouped_sum", 49);
    assert_line(lines, "templates.grouped_sum.count", 50);
    assert_line(lines, "templates.grouped_sum.difficulty", 51);
    /* an implied table takes the line of its own header once it has one */
    assert_line(lines, "implicit.child", 54);
    assert_line(lines, "implicit", 56);
    assert_line(lines, "implicit.y", 57);
    assert_line(lines, "fruit.apple", 60);
    assert_line(lines, "fruit.apple.taste.sweet", 61);
    assert_line(lines, "fruit.apple.texture", 62);
    assert_line(lines, "empty_table", 64);
    assert_line(lines, "\"quoted table\".\"x y\"", 65);
    assert_line(lines, "\"quoted table\".\"x y\".k", 66);

    json_decref(root);
    json_decref(lines);
}

/* CRLF line ends, a BOM and a missing final newline change nothing. */
static void test_crlf_bom_no_final_newline(void **state)
{
    (void)state;
    static const char crlf[] = "\xEF\xBB\xBF# c\r\n[corpus]\r\nmaster_seed = 3\r\n"
                               "xs = [\r\n  1,\r\n  2\r\n]\r\nsplit = \"random\"";
    struct vat_err e = {{0}};
    json_t *lines = NULL;
    json_t *root = parse_str(crlf, &lines, &e);
    if (!root)
        fail_msg("parse failed: %s", e.msg);
    assert_tree(root, "{\"corpus\": {\"master_seed\": 3, \"xs\": [1, 2], \"split\": \"random\"}}");
    assert_line(lines, "corpus", 2);
    assert_line(lines, "corpus.xs", 4);
    assert_line(lines, "corpus.split", 8);
    json_decref(root);
    json_decref(lines);
}

static void test_empty_and_comments_only(void **state)
{
    (void)state;
    struct vat_err e = {{0}};
    json_t *lines = NULL;
    json_t *root = vat_toml_parse("", 0, "t.toml", &lines, &e);
    assert_non_null(root);
    assert_int_equal(json_object_size(root), 0);
    assert_int_equal(json_object_size(lines), 0);
    json_decref(root);
    json_decref(lines);

    root = parse_str("  # only a comment\n\t\n# another", NULL, &e);
    assert_non_null(root);
    assert_int_equal(json_object_size(root), 0);
    json_decref(root);
}

/* Dotted keys may add to a table they made themselves, in any order. */
static void test_dotted_keys_share_tables(void **state)
{
    (void)state;
    struct vat_err e = {{0}};
    json_t *root = parse_str("a.b.c = 1\na.b.d = 2\na.e = 3\n", NULL, &e);
    if (!root)
        fail_msg("parse failed: %s", e.msg);
    assert_tree(root, "{\"a\": {\"b\": {\"c\": 1, \"d\": 2}, \"e\": 3}}");
    json_decref(root);
}

static void test_path_append(void **state)
{
    (void)state;
    char *s = vat_toml_path_append("templates", "grouped_sum");
    assert_string_equal(s, "templates.grouped_sum");
    free(s);
    s = vat_toml_path_append(NULL, "a b");
    assert_string_equal(s, "\"a b\"");
    free(s);
    s = vat_toml_path_append("", "q\"\\\n\x01");
    assert_string_equal(s, "\"q\\\"\\\\\\n\\u0001\"");
    free(s);
    s = vat_toml_path_append("x", "");
    assert_string_equal(s, "x.\"\"");
    free(s);
}

/* The path given is used verbatim in messages. */
static void test_error_uses_path_as_given(void **state)
{
    (void)state;
    struct vat_err e = {{0}};
    json_t *lines = (json_t *)&e; /* must be reset to NULL on failure */
    assert_null(vat_toml_parse("a = 1\na = 2\n", 12, "../conf/My Seeds.toml", &lines, &e));
    assert_null(lines);
    assert_string_equal(e.msg, "../conf/My Seeds.toml:2: duplicate key 'a'");
}

/* ---- rejected input: one case per reason -------------------------------- */

struct bad_case {
    const char *name;
    const char *text;
    size_t len; /* 0: strlen(text) */
    const char *want;
};

static const struct bad_case BAD[] = {
    {"duplicate key", "a = 1\nb = 2\na = 3\n", 0, "t.toml:3: duplicate key 'a'"},
    {"duplicate key in table", "[templates.grouped_sum]\ncount = 1\ncount = 2\n", 0,
     "t.toml:3: duplicate key 'count'"},
    {"duplicate dotted key", "a.b = 1\na.b = 2\n", 0, "t.toml:2: duplicate key 'a.b'"},
    {"key duplicates a table", "[a.b]\n[a]\nb = 1\n", 0, "t.toml:3: duplicate key 'b'"},
    {"table defined twice", "[templates.grouped_sum]\ncount = 1\n\n[templates.grouped_sum]\n", 0,
     "t.toml:4: table 'templates.grouped_sum' defined twice"},
    {"implied table defined twice", "[a.b]\n[a]\n[a]\n", 0, "t.toml:3: table 'a' defined twice"},
    {"header over dotted table", "[a]\nb.c = 1\n[a.b]\n", 0,
     "t.toml:3: table 'a.b' already defined by dotted keys"},
    {"header over root dotted table", "x.y = 1\n[x]\n", 0,
     "t.toml:2: table 'x' already defined by dotted keys"},
    {"dotted keys extend a header table", "[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n", 0,
     "t.toml:4: table 'a.b' was made by a table header; dotted keys cannot extend it"},
    {"dotted key redefines a scalar", "[corpus]\nsplit = \"random\"\nsplit.kind = 1\n", 0,
     "t.toml:3: key 'corpus.split' is already a value, not a table"},
    {"header over a scalar", "a = 1\n[a]\n", 0, "t.toml:2: key 'a' is already a value, not a table"},
    {"header through an array", "a = [1]\n[a.b]\n", 0,
     "t.toml:2: key 'a' is already a value, not a table"},
    {"missing equals", "[corpus]\nmaster_seed 1\n", 0, "t.toml:2: expected '=' after key"},
    {"missing key", "= 1\n", 0, "t.toml:1: expected a key, found '='"},
    {"bad key character", "@x = 1\n", 0, "t.toml:1: expected a key, found '@'"},
    {"empty dotted part", "a. = 1\n", 0, "t.toml:1: expected a key, found '='"},
    {"empty table name", "[]\n", 0, "t.toml:1: expected a table name, found ']'"},
    {"unclosed table name", "[corpus\nx = 1\n", 0, "t.toml:1: expected ']' after table name"},
    {"arrays of tables", "[[templates]]\n", 0, "t.toml:1: arrays of tables are not supported"},
    {"text after header", "[corpus] x = 1\n", 0, "t.toml:1: unexpected text after table header"},
    {"unterminated string", "a = \"abc\nb = 1\n", 0, "t.toml:1: unterminated string"},
    {"unterminated string at eof", "a = 1\nb = \"abc", 0, "t.toml:2: unterminated string"},
    {"unterminated literal", "a = 'abc\n", 0, "t.toml:1: unterminated string"},
    {"unterminated quoted key", "\"abc = 1\n", 0, "t.toml:1: unterminated string"},
    {"multi-line basic string", "a = \"\"\"x\"\"\"\n", 0,
     "t.toml:1: multi-line strings are not supported"},
    {"multi-line literal string", "a = '''x'''\n", 0,
     "t.toml:1: multi-line strings are not supported"},
    {"invalid escape", "a = \"x\\qy\"\n", 0, "t.toml:1: invalid escape '\\q'"},
    {"escape of a space", "a = \"x\\ y\"\n", 0,
     "t.toml:1: invalid escape: backslash followed by ' '"},
    {"short unicode escape", "a = \"\\u12\"\n", 0, "t.toml:1: invalid unicode escape '\\u12'"},
    {"surrogate escape", "a = \"\\uD800\"\n", 0, "t.toml:1: invalid unicode escape '\\uD800'"},
    {"escape beyond unicode", "a = \"\\U00110000\"\n", 0,
     "t.toml:1: invalid unicode escape '\\U00110000'"},
    {"nul escape", "a = \"x\\u0000\"\n", 0, "t.toml:1: nul character in string"},
    {"control character in string", "a = \"x\x01y\"\n", 0,
     "t.toml:1: control character 0x01 in string"},
    {"delete character in literal", "a = 'x\x7fy'\n", 0,
     "t.toml:1: control character 0x7f in string"},
    {"control character in comment", "a = 1\n# bell \x07\n", 0,
     "t.toml:2: control character 0x07 in comment"},
    {"nested inline table", "a = { b = { c = 1 } }\n", 0,
     "t.toml:1: nested inline tables are not supported"},
    {"dotted key in inline table", "a = { b.c = 1 }\n", 0,
     "t.toml:1: dotted keys in inline tables are not supported"},
    {"duplicate key in inline table", "a = { b = 1, b = 2 }\n", 0,
     "t.toml:1: duplicate key 'b' in inline table"},
    {"trailing comma in inline table", "a = { b = 1, }\n", 0,
     "t.toml:1: expected a key in inline table, found '}'"},
    {"unclosed inline table", "a = { b = 1\n", 0,
     "t.toml:1: expected ',' or '}' in inline table, found end of line"},
    {"integer out of range", "a = 9223372036854775808\n", 0, "t.toml:1: integer out of range"},
    {"negative integer out of range", "a = -9_223_372_036_854_775_809\n", 0,
     "t.toml:1: integer out of range"},
    {"float out of range", "a = 1e400\n", 0, "t.toml:1: float out of range"},
    {"float underflow to zero", "a = -1e-400\n", 0, "t.toml:1: float out of range"},
    {"nan", "a = nan\n", 0, "t.toml:1: nan and inf are not allowed"},
    {"negative inf", "a = -inf\n", 0, "t.toml:1: nan and inf are not allowed"},
    {"leading zero", "a = 012\n", 0, "t.toml:1: leading zeros are not allowed"},
    {"leading zero float", "a = -00.5\n", 0, "t.toml:1: leading zeros are not allowed"},
    {"double underscore", "a = 1__000\n", 0, "t.toml:1: misplaced underscore in number"},
    {"trailing underscore", "a = 1_\n", 0, "t.toml:1: misplaced underscore in number"},
    {"hex integer", "a = 0x1F\n", 0, "t.toml:1: hex, octal and binary integers are not supported"},
    {"binary integer", "a = -0b101\n", 0,
     "t.toml:1: hex, octal and binary integers are not supported"},
    {"date", "a = 1979-05-27\n", 0, "t.toml:1: dates and times are not supported"},
    {"time", "a = 07:32:00\n", 0, "t.toml:1: dates and times are not supported"},
    {"datetime", "a = 1979-05-27T07:32:00Z\n", 0, "t.toml:1: dates and times are not supported"},
    {"bare point", "a = 1.\n", 0, "t.toml:1: invalid number '1.'"},
    {"leading point", "a = .5\n", 0, "t.toml:1: invalid number '.5'"},
    {"dangling exponent", "a = 1e\n", 0, "t.toml:1: invalid number '1e'"},
    {"two points", "a = 1.2.3\n", 0, "t.toml:1: invalid number '1.2.3'"},
    {"unknown word", "a = yes\n", 0, "t.toml:1: invalid value 'yes'"},
    {"capitalised boolean", "a = True\n", 0, "t.toml:1: invalid value 'True'"},
    {"missing value", "a =\n", 0, "t.toml:1: expected a value, found end of line"},
    {"missing value at eof", "a = ", 0, "t.toml:1: expected a value, found end of file"},
    {"text after value", "a = 1 2\n", 0, "t.toml:1: unexpected text after value"},
    {"text after string", "a = \"x\"y\n", 0, "t.toml:1: unexpected text after value"},
    {"comma after value", "a = 1,\n", 0, "t.toml:1: unexpected text after value"},
    {"mixed types in array", "a = [1, 2.0]\n", 0, "t.toml:1: mixed types in array"},
    {"mixed types on a later line", "a = [\n  \"x\",\n  \"y\",\n  3,\n]\n", 0,
     "t.toml:4: mixed types in array"},
    {"nested arrays", "a = [[1], [2]]\n", 0, "t.toml:1: nested arrays are not supported"},
    {"inline table in array", "a = [{x = 1}]\n", 0,
     "t.toml:1: inline tables inside arrays are not supported"},
    {"unterminated array", "a = [1,\n  2\n", 0, "t.toml:1: unterminated array"},
    {"missing comma in array", "a = [1 2]\n", 0, "t.toml:1: expected ',' or ']' in array, found '2'"},
    {"empty array element", "a = [1,,2]\n", 0, "t.toml:1: expected a value, found ','"},
    {"nul byte", "a = 1\nb = 2\0\n", 13, "t.toml:2: nul byte in input"},
    {"invalid utf-8", "a = 1\n\n# caf\xe9\n", 0, "t.toml:3: invalid utf-8"},
    {"overlong utf-8", "a = \"\xc0\xaf\"\n", 0, "t.toml:1: invalid utf-8"},
    {"utf-8 surrogate", "a = \"\xed\xa0\x80\"\n", 0, "t.toml:1: invalid utf-8"},
    {"bare carriage return", "a = 1\rb = 2\n", 0, "t.toml:1: bare carriage return"},
    {"line count after crlf", "a = 1\r\nb = 2\r\na = 3\r\n", 0, "t.toml:3: duplicate key 'a'"},
    {"line count after bom", "\xEF\xBB\xBFx = 1\nx = 1\n", 0, "t.toml:2: duplicate key 'x'"},
    {"second bom", "\xEF\xBB\xBF\xEF\xBB\xBFx = 1\n", 0, "t.toml:1: expected a key, found '\xEF\xBB\xBF'"},
    {"line after multi-line array", "a = [\n1,\n2,\n]\nb = 1 x\n", 0,
     "t.toml:5: unexpected text after value"},
};

static void run_bad_case(void **state)
{
    const struct bad_case *c = *state;
    struct vat_err e = {{0}};
    json_t *lines = NULL;
    size_t len = c->len ? c->len : strlen(c->text);
    json_t *root = vat_toml_parse(c->text, len, "t.toml", &lines, &e);
    if (root)
        fail_msg("'%s' parsed but should fail with: %s", c->name, c->want);
    assert_null(lines);
    if (strcmp(e.msg, c->want) != 0)
        fail_msg("'%s'\n got: %s\nwant: %s", c->name, e.msg, c->want);
}

static void test_key_too_long(void **state)
{
    (void)state;
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, "ok = 1\n");
    for (int i = 0; i < 600; i++)
        vat_buf_puts(&b, "ab.");
    vat_buf_puts(&b, "c = 1\n");
    struct vat_err e = {{0}};
    assert_null(vat_toml_parse(b.data, b.len, "t.toml", NULL, &e));
    assert_string_equal(e.msg, "t.toml:2: key longer than 1024 bytes");

    /* the cap counts the table path too */
    b.len = 0;
    vat_buf_puts(&b, "[");
    for (int i = 0; i < 200; i++)
        vat_buf_puts(&b, "abc.");
    vat_buf_puts(&b, "d]\n");
    for (int i = 0; i < 300; i++)
        vat_buf_puts(&b, "x");
    vat_buf_puts(&b, " = 1\n");
    assert_null(vat_toml_parse(b.data, b.len, "t.toml", NULL, &e));
    assert_string_equal(e.msg, "t.toml:2: key longer than 1024 bytes");
    vat_buf_release(&b);
}

/* ---- fuzz -------------------------------------------------------------- */

/* Writes v back out as TOML in our subset (every table by its header), so
 * a successful parse can be checked by parsing the output again. */
static void emit_scalar(struct vat_buf *b, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING: {
        char *q = vat_toml_path_append(NULL, json_string_value(v));
        if (q[0] == '"')
            vat_buf_puts(b, q);
        else
            vat_buf_printf(b, "\"%s\"", q); /* a bare-looking string */
        free(q);
        break;
    }
    case JSON_INTEGER: vat_buf_printf(b, "%lld", (long long)json_integer_value(v)); break;
    case JSON_REAL: {
        char num[40];
        snprintf(num, sizeof num, "%.17g", json_real_value(v));
        vat_buf_puts(b, num);
        if (!strpbrk(num, ".e"))
            vat_buf_puts(b, ".0");
        break;
    }
    case JSON_TRUE: vat_buf_puts(b, "true"); break;
    case JSON_FALSE: vat_buf_puts(b, "false"); break;
    default: fail_msg("unexpected json type %d", (int)json_typeof(v));
    }
}

static void emit_table(struct vat_buf *b, const json_t *obj, const char *path)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        if (json_is_object(v))
            continue;
        char *k = vat_toml_path_append(NULL, key);
        vat_buf_printf(b, "%s = ", k);
        free(k);
        if (json_is_array(v)) {
            size_t i;
            json_t *item;
            vat_buf_putc(b, '[');
            json_array_foreach(v, i, item) {
                emit_scalar(b, item);
                vat_buf_puts(b, ", ");
            }
            vat_buf_putc(b, ']');
        } else {
            emit_scalar(b, v);
        }
        vat_buf_putc(b, '\n');
    }
    json_object_foreach((json_t *)obj, key, v) {
        if (!json_is_object(v))
            continue;
        char *sub = vat_toml_path_append(path, key);
        vat_buf_printf(b, "[%s]\n", sub);
        emit_table(b, v, sub);
        free(sub);
    }
}

static long count_lines(const char *s, size_t n)
{
    long lines = 1;
    for (size_t i = 0; i < n; i++)
        lines += s[i] == '\n';
    return lines;
}

/* Whatever the input, the reader either succeeds with a tree that
 * round-trips, or fails with "fuzz.toml:LINE: reason" and LINE in range. */
static void check_one(const char *s, size_t n, long *ok_count)
{
    struct vat_err e = {{0}};
    json_t *lines = NULL;
    json_t *root = vat_toml_parse(s, n, "fuzz.toml", &lines, &e);
    if (!root) {
        assert_null(lines);
        long line = 0;
        int used = 0;
        if (sscanf(e.msg, "fuzz.toml:%ld: %n", &line, &used) != 1 || used == 0)
            fail_msg("malformed error message: %s", e.msg);
        assert_true(line >= 1 && line <= count_lines(s, n));
        assert_true(e.msg[used] >= 'a' && e.msg[used] <= 'z');
        return;
    }
    (*ok_count)++;
    const char *key;
    json_t *v;
    json_object_foreach(lines, key, v) {
        assert_true(json_is_integer(v));
        assert_true(json_integer_value(v) >= 1 && json_integer_value(v) <= count_lines(s, n));
    }
    struct vat_buf out = VAT_BUF_INIT;
    emit_table(&out, root, "");
    json_t *again = vat_toml_parse(out.data ? out.data : "", out.len, "again.toml", NULL, &e);
    if (!again)
        fail_msg("re-emitted text does not parse: %s\n%s", e.msg, out.data);
    if (!json_equal(root, again))
        fail_msg("round trip changed the tree:\n%s", out.data);
    json_decref(again);
    vat_buf_release(&out);
    json_decref(root);
    json_decref(lines);
}

static const char *const FRAGMENTS[] = {
    "[", "]", "[[", "]]", "=", " = ", ".", ",", "\"", "'", "\"\"\"", "\\", "\\u", "\\U0001F600",
    "#", "\n", "\r\n", "\r", "\t", " ", "{", "}", "a", "b.c", "count", "templates", "corpus",
    "0", "-0", "1_0", "1e5", "1.5", "+inf", "nan", "true", "false", "0x10", "1979-05-27",
    "9223372036854775807", "9223372036854775808", "\xEF\xBB\xBF", "\xc3\xa9", "\xff", "\0",
    "[a]\n", "[a.b]\n", "x = [1, 2]\n", "y = 'lit'\n", "z = \"s\\n\"\n", "q.r = 1\n",
};

static void test_fuzz(void **state)
{
    (void)state;
    struct vat_rng rng;
    long ok_count = 0, runs = 0;
    size_t good_len = strlen(GOOD);

    /* every truncation of the good file */
    for (size_t n = 0; n <= good_len; n++, runs++)
        check_one(GOOD, n, &ok_count);

    /* random byte strings, biased towards TOML's own characters */
    vat_rng_seed(&rng, 20261130, 1);
    static const char alphabet[] = "[]=.,\"'\\#\n\r\t {}ab_-019eE+:xu";
    char buf[256];
    for (int round = 0; round < 3000; round++, runs++) {
        size_t n = vat_rng_below(&rng, sizeof buf);
        for (size_t i = 0; i < n; i++)
            buf[i] = vat_rng_chance(&rng, 0.8)
                         ? alphabet[vat_rng_below(&rng, sizeof alphabet - 1)]
                         : (char)vat_rng_below(&rng, 256);
        check_one(buf, n, &ok_count);
    }

    /* fragments strung together */
    vat_rng_seed(&rng, 20261130, 2);
    for (int round = 0; round < 3000; round++, runs++) {
        struct vat_buf b = VAT_BUF_INIT;
        int parts = (int)vat_rng_range(&rng, 1, 24);
        for (int i = 0; i < parts; i++) {
            const char *f = VAT_PICK(&rng, FRAGMENTS);
            /* the "\0" fragment is the one that is a NUL byte */
            if (f[0] == 0)
                vat_buf_putn(&b, "", 1);
            else
                vat_buf_puts(&b, f);
        }
        check_one(b.data ? b.data : "", b.len, &ok_count);
        vat_buf_release(&b);
    }

    /* mutations of the good file: flips, deletions, duplications, inserts */
    vat_rng_seed(&rng, 20261130, 3);
    for (int round = 0; round < 3000; round++, runs++) {
        struct vat_buf b = VAT_BUF_INIT;
        vat_buf_putn(&b, GOOD, good_len);
        int edits = (int)vat_rng_range(&rng, 1, 4);
        for (int k = 0; k < edits; k++) {
            size_t at = vat_rng_below(&rng, (uint32_t)b.len);
            size_t span = vat_rng_below(&rng, 16);
            if (at + span > b.len)
                span = b.len - at;
            switch (vat_rng_below(&rng, 4)) {
            case 0:
                b.data[at] = (char)vat_rng_below(&rng, 256);
                break;
            case 1:
                memmove(b.data + at, b.data + at + span, b.len - at - span);
                b.len -= span;
                b.data[b.len] = 0;
                break;
            case 2: {
                char *copy = vat_xstrndup(b.data + at, span);
                struct vat_buf nb = VAT_BUF_INIT;
                vat_buf_putn(&nb, b.data, at + span);
                vat_buf_putn(&nb, copy, span);
                vat_buf_putn(&nb, b.data + at + span, b.len - at - span);
                free(copy);
                vat_buf_release(&b);
                b = nb;
                break;
            }
            default: {
                const char *f = VAT_PICK(&rng, FRAGMENTS);
                struct vat_buf nb = VAT_BUF_INIT;
                vat_buf_putn(&nb, b.data, at);
                vat_buf_putn(&nb, f, f[0] ? strlen(f) : 1);
                vat_buf_putn(&nb, b.data + at, b.len - at);
                vat_buf_release(&b);
                b = nb;
            }
            }
            if (b.len == 0)
                break;
        }
        check_one(b.data ? b.data : "", b.len, &ok_count);
        vat_buf_release(&b);
    }

    print_message("fuzz: %ld inputs, %ld parsed\n", runs, ok_count);
    /* the run must have exercised both outcomes */
    assert_true(ok_count > 50);
    assert_true(runs - ok_count > 1000);
}

int main(void)
{
    static const struct CMUnitTest fixed[] = {
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_crlf_bom_no_final_newline),
        cmocka_unit_test(test_empty_and_comments_only),
        cmocka_unit_test(test_dotted_keys_share_tables),
        cmocka_unit_test(test_path_append),
        cmocka_unit_test(test_error_uses_path_as_given),
        cmocka_unit_test(test_key_too_long),
        cmocka_unit_test(test_fuzz),
    };
    size_t nfixed = sizeof fixed / sizeof fixed[0];
    size_t nbad = sizeof BAD / sizeof BAD[0];
    struct CMUnitTest *tests = calloc(nfixed + nbad, sizeof *tests);
    memcpy(tests, fixed, sizeof fixed);
    /* one named test per rejected construct, so a failure names it */
    for (size_t i = 0; i < nbad; i++) {
        tests[nfixed + i].name = BAD[i].name;
        tests[nfixed + i].test_func = run_bad_case;
        tests[nfixed + i].initial_state = (void *)&BAD[i];
    }
    int rc = _cmocka_run_group_tests("toml", tests, nfixed + nbad, NULL, NULL);
    free(tests);
    return rc;
}

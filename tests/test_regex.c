/* test_regex.c — the regex checker: extraction that agrees with Python's
 * re.finditer (every expected list below was produced by Python 3.11),
 * the Python-to-PCRE2 translations, refusal of PCRE-only syntax and of
 * patterns Python rejects, limits on hostile patterns, and the verdicts
 * vat_check_regex gives right, wrong and harmlessly different patterns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "measure.h"
#include "verifiers.h"

/* ---- helpers ------------------------------------------------------------ */

/* Extracts with default limits; fails the test if extraction fails. */
static json_t *extract(const char *pattern, const char *text)
{
    struct vat_verdict v;
    json_t *got = vat_regex_extract(NULL, pattern, strlen(pattern), text, &v);
    if (!got)
        fail_msg("pattern '%s' on '%s' gave %s: %s", pattern, text, v.code, v.reason);
    return got;
}

/* Asserts that pattern extracts exactly the JSON list expected from text. */
static void expect_extract(const char *pattern, const char *text, const char *expected)
{
    json_error_t err;
    json_t *want = json_loads(expected, 0, &err);
    assert_non_null(want);
    json_t *got = extract(pattern, text);
    if (!json_equal(want, got)) {
        char *g = json_dumps(got, JSON_COMPACT);
        fail_msg("pattern '%s' on '%s': expected %s, got %s", pattern, text, expected, g);
    }
    json_decref(want);
    json_decref(got);
}

/* A spec from a JSON text, with the members every regex spec has. */
static json_t *spec_from(const char *cases_json)
{
    json_error_t err;
    json_t *cases = json_loads(cases_json, 0, &err);
    if (!cases)
        fail_msg("bad test cases JSON: %s", err.text);
    json_t *spec = json_object();
    json_object_set_new(spec, "checker", json_string("regex"));
    json_object_set_new(spec, "dialect", json_string("python-re"));
    json_object_set_new(spec, "cases", cases);
    json_object_set_new(spec, "match_limit", json_integer(1000000));
    json_object_set_new(spec, "depth_limit", json_integer(10000));
    json_object_set_new(spec, "heap_limit_kib", json_integer(20000));
    json_object_set_new(spec, "max_pattern_bytes", json_integer(1024));
    return spec;
}

static struct vat_verdict check(const json_t *spec, const char *pattern)
{
    return vat_check_regex(spec, pattern, strlen(pattern));
}

/* A one-case spec for gate tests, where the cases do not matter. */
static json_t *trivial_spec(void)
{
    return spec_from("[{\"text\": \"a1 b22\", \"expected\": [\"1\", \"22\"], \"heldout\": true}]");
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- extraction agrees with Python -------------------------------------- */

struct py_case {
    const char *pattern, *text, *expected;
};

/* Each line: pattern, subject, [m.group(0) for m in re.finditer(p, s)]
 * as Python 3.11.7 printed it. */
static const struct py_case py_cases[] = {
    /* empty matches: after an empty match the next may not be empty at
     * the same place; after a non-empty one an empty match may follow */
    {"\\d*", "a12b", "[\"\", \"12\", \"\", \"\"]"},
    {"a*", "baaa", "[\"\", \"aaa\", \"\"]"},
    {"x*", "axxb", "[\"\", \"xx\", \"\", \"\"]"},
    {"\\b", "ab cd", "[\"\", \"\", \"\", \"\"]"},
    {"(?:|a)*", "aaa", "[\"\", \"a\", \"\", \"a\", \"\", \"a\", \"\"]"},
    {"$", "a\n", "[\"\", \"\"]"},
    {"(?m)^", "a\nb\n", "[\"\", \"\", \"\"]"},
    {"(?m)$", "a\nb\n", "[\"\", \"\", \"\"]"},
    {"\\B", "", "[]"},
    /* anchors and flags */
    {"a$", "a\n", "[\"a\"]"},
    {"a\\Z", "xa", "[\"a\"]"},
    {"(?m)^\\w+$", "ab\ncd\n", "[\"ab\", \"cd\"]"},
    {"(?s).+", "a\nb", "[\"a\\nb\"]"},
    {".+", "a\nb", "[\"a\", \"b\"]"},
    {"(?i)ord-\\d{6}\\b", "ORD-123456 ord-1234567 Ord-654321", "[\"ORD-123456\", \"Ord-654321\"]"},
    {"(?i:A)b", "ab Ab aB", "[\"ab\", \"Ab\"]"},
    {"(?x) \\d+ # digits\n - \\d+", "12-34 5 - 6", "[\"12-34\"]"},
    /* classes and escapes */
    {"\\w+", "it's ok_1", "[\"it\", \"s\", \"ok_1\"]"},
    {"[^\\W\\d]+", "ab1_c 2d", "[\"ab\", \"_c\", \"d\"]"},
    {"[]a]+", "a]b", "[\"a]\"]"},
    {"[a-c-]+", "a-b-d", "[\"a-b-\"]"},
    {"[\\d-]+", "12-3 x", "[\"12-3\"]"},
    {"\\#\\ ", "# a", "[\"# \"]"},
    {"\\x41\\101\\u0041", "AAA", "[\"AAA\"]"},
    {"a{2}{", "aa{", "[\"aa{\"]"},
    {"x{1,2", "x{1,2", "[\"x{1,2\"]"},
    /* Python's \s is str.isspace(): \x1c-\x1f count, unless (?a) */
    {"\\s", "a\x1c" "b c\td", "[\"\\u001c\", \" \", \"\\t\"]"},
    {"(?a)\\s", "a\x1c" "b c\td", "[\" \", \"\\t\"]"},
    {"[^\\S]", "a\x1f" "b c", "[\"\\u001f\", \" \"]"},
    /* groups, references, lookaround, conditionals */
    {"(a|ab)(c|bcd)(d*)", "abcd", "[\"abcd\"]"},
    {"(\\w)\\1", "aabbcd", "[\"aa\", \"bb\"]"},
    {"(?P<q>['\"]).*?(?P=q)", "say \"hi\" and 'yo' ", "[\"\\\"hi\\\"\", \"'yo'\"]"},
    {"(<)?\\w+(?(1)>)", "<a> b <c", "[\"<a>\", \"b\", \"c\"]"},
    {"(?<=\\$)\\d+(?:\\.\\d\\d)?", "pay $12.50 or $7", "[\"12.50\", \"7\"]"},
    {"\\d+(?=%)", "50% of 20", "[\"50\"]"},
    {"\\Bb", "ab b", "[\"b\"]"},
    {"(?<!\\d)\\d{4}-\\d{2}-\\d{2}(?!\\d)", "2024-01-02 12024-01-02 2024-01-023 1999-12-31",
     "[\"2024-01-02\", \"1999-12-31\"]"},
    {"\\$\\d{1,3}(?:,\\d{3})*(?:\\.\\d{2})?", "total $1,234.56 or $7 or $12,34",
     "[\"$1,234.56\", \"$7\", \"$12\"]"},
    /* PCRE2 10.42 finds nothing here unless X{0} is rewritten */
    {"(?:a|\\A){0}x", "zx", "[\"x\"]"},
    /* non-ASCII: compiled in UTF mode, Unicode classes like Python's */
    {"\xc3\xa9+", "caf\xc3\xa9 \xc3\xa9\xc3\xa9x", "[\"\xc3\xa9\", \"\xc3\xa9\xc3\xa9\"]"},
    {"\\w+", "caf\xc3\xa9 au lait", "[\"caf\xc3\xa9\", \"au\", \"lait\"]"},
    {"(?a)\\w+", "caf\xc3\xa9", "[\"caf\"]"},
    {"\\d+", "x\xd9\xa1\xd9\xa2\xd9\xa3 45", "[\"\xd9\xa1\xd9\xa2\xd9\xa3\", \"45\"]"},
    {"(?a)\\d+", "x\xd9\xa1\xd9\xa2\xd9\xa3 45", "[\"45\"]"},
    {"\\s", "a\xe2\x80\x83" "b\xc2\xa0" "c", "[\"\xe2\x80\x83\", \"\xc2\xa0\"]"},
    {"(?i)\xc3\xa9", "\xc3\x89 \xc3\xa9", "[\"\xc3\x89\", \"\xc3\xa9\"]"},
    {".", "\xc3\xa9\xe2\x82\xac", "[\"\xc3\xa9\", \"\xe2\x82\xac\"]"},
};

static void test_extraction_matches_python(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof py_cases / sizeof py_cases[0]; i++)
        expect_extract(py_cases[i].pattern, py_cases[i].text, py_cases[i].expected);
}

/* ---- Python spellings PCRE2 reads differently --------------------------- */

static void test_backslash_z_is_absolute_end(void **state)
{
    (void)state;
    /* PCRE2's \Z would match before the final newline */
    expect_extract("a\\Z", "a\n", "[]");
    expect_extract("a\\Z", "a", "[\"a\"]");
    expect_extract("a$", "a\n", "[\"a\"]");
}

static void test_brace_with_empty_minimum(void **state)
{
    (void)state;
    /* PCRE2 10.42 reads {,3} as literal text */
    expect_extract("a{,3}", "aaaaa", "[\"aaa\", \"aa\", \"\"]");
    expect_extract("a{,}", "aa", "[\"aa\", \"\"]");
    expect_extract("a{,3}", "a{,3}", "[\"a\", \"\", \"\", \"\", \"\", \"\"]");
}

static void test_backslash_v_is_vertical_tab(void **state)
{
    (void)state;
    /* PCRE2's \v is any vertical space, newline included */
    expect_extract("\\v", "a\x0b" "b\nc", "[\"\\u000b\"]");
    expect_extract("[\\v]+", "\x0b\x0b\n", "[\"\\u000b\\u000b\"]");
}

static void test_verbose_comments_are_not_syntax(void **state)
{
    (void)state;
    /* a comment may mention PCRE-only syntax; it is not part of the pattern */
    expect_extract("(?x) \\d+  # not \\K, not [[:alpha:]], not (*SKIP)\n", "a 12 b 3",
                   "[\"12\", \"3\"]");
    expect_extract("\\d+(?#a comment with \\K)", "a 12", "[\"12\"]");
}

/* ---- the gate ----------------------------------------------------------- */

static const char *const pcre_only[] = {
    "(*UTF)a", "a(*SKIP)b", "\\Ka", "\\R", "\\h", "\\H", "\\V", "\\Qa\\E", "(?R)", "(?1)",
    "(a)(?-1)", "(?&n)", "(?P<n>a)(?P>n)", "\\g1", "\\g{1}", "\\x{41}", "[[:alpha:]]",
    "[[:digit:]x]", "\\p{L}", "\\P{L}", "\\X", "\\C", "\\N", "\\N{EM DASH}", "a*+", "a++",
    "a?+", "a{2}+", "(?>a)", "(?|a)", "(?C1)", "\\e", "\\cA", "\\o{101}", "\\G", "\\k<n>",
    "(?<n>a)", "(?'n'a)", "(?U)a", "(?^)a", "\\z", "[\\h]", "(?n)a", "(?J)a",
};

static void test_pcre_only_syntax_is_unsupported(void **state)
{
    (void)state;
    json_t *spec = trivial_spec();
    for (size_t i = 0; i < sizeof pcre_only / sizeof pcre_only[0]; i++) {
        struct vat_verdict v = check(spec, pcre_only[i]);
        if (v.gate_passed || strcmp(v.code, VAT_REGEX_UNSUPPORTED) != 0 || v.score != 0)
            fail_msg("'%s' gave %s (%s)", pcre_only[i], v.code, v.reason);
        assert_true(strlen(v.reason) > 10);
    }
    /* the reason names the construct */
    struct vat_verdict v = check(spec, "\\d+\\K\\w");
    assert_non_null(strstr(v.reason, "\\K"));
    v = check(spec, "(?<year>\\d{4})");
    assert_non_null(strstr(v.reason, "(?P<name>"));
    json_decref(spec);
}

/* Patterns Python 3.11 refuses, each with re.error. */
static const char *const py_errors[] = {
    "(", ")", "[a", "a**", "*a", "a|*", "\\q", "x{2,1}", "(?P<1a>x)", "\\1(a)", "(a\\1)",
    "a(?i)b", "(?L)a", "(?-i)a", "a\\", "(?P=nope)", "a{4294967295}", "(?P<n>a)(?P<n>b)",
    "[z-a]", "[\\d-z]", "\\b*", "^*", "(?(2)a)(b)c(?(3)d)", "(?", "(?P", "[\\A]",
};

static void test_python_errors_fail_the_gate(void **state)
{
    (void)state;
    json_t *spec = trivial_spec();
    for (size_t i = 0; i < sizeof py_errors / sizeof py_errors[0]; i++) {
        struct vat_verdict v = check(spec, py_errors[i]);
        if (v.gate_passed || strcmp(v.code, VAT_REGEX_COMPILE) != 0 || v.score != 0)
            fail_msg("'%s' gave %s (%s)", py_errors[i], v.code, v.reason);
    }
    /* Python's own wording */
    struct vat_verdict v = check(spec, "a**");
    assert_non_null(strstr(v.reason, "multiple repeat"));
    v = check(spec, "\\q");
    assert_non_null(strstr(v.reason, "bad escape \\q"));
    /* a lookbehind Python finds variable-width reaches PCRE2, whose
     * message is passed on */
    v = check(spec, "(?<=a|bc)x");
    assert_false(v.gate_passed);
    assert_string_equal(v.code, VAT_REGEX_COMPILE);
    assert_non_null(strstr(v.reason, "lookbehind"));
    json_decref(spec);
}

static void test_gate_caps_and_shape(void **state)
{
    (void)state;
    json_t *spec = trivial_spec();
    struct vat_verdict v = vat_check_regex(spec, "", 0);
    assert_false(v.gate_passed);
    assert_string_equal(v.code, VAT_PARSE);

    v = vat_check_regex(spec, NULL, 0);
    assert_false(v.gate_passed);
    assert_string_equal(v.code, VAT_PARSE);

    v = vat_check_regex(spec, "\\d\0+", 4);
    assert_false(v.gate_passed);
    assert_string_equal(v.code, VAT_PARSE);

    v = check(spec, "\\d\xff+");
    assert_false(v.gate_passed);
    assert_string_equal(v.code, VAT_PARSE);

    char big[1100];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    v = check(spec, big);
    assert_false(v.gate_passed);
    assert_string_equal(v.code, VAT_TOO_LARGE);
    /* the cap comes from the spec */
    json_object_set_new(spec, "max_pattern_bytes", json_integer(4));
    v = check(spec, "\\d+\\d");
    assert_string_equal(v.code, VAT_TOO_LARGE);
    v = check(spec, "\\d+");
    assert_true(v.gate_passed);

    /* nesting is bounded before anything recurses deeply */
    json_object_set_new(spec, "max_pattern_bytes", json_integer(4096));
    char deep[1300];
    memset(deep, '(', 600);
    deep[600] = 'a';
    memset(deep + 601, ')', 600);
    deep[1201] = 0;
    v = check(spec, deep);
    assert_false(v.gate_passed);
    assert_string_equal(v.code, VAT_TOO_LARGE);
    json_decref(spec);
}

static void test_bad_specs_are_internal(void **state)
{
    (void)state;
    struct vat_verdict v = vat_check_regex(NULL, "a", 1);
    assert_string_equal(v.code, VAT_INTERNAL);

    json_t *spec = spec_from("[]");
    v = check(spec, "a");
    assert_false(v.gate_passed);
    assert_string_equal(v.code, VAT_INTERNAL);
    json_decref(spec);

    spec = spec_from("[{\"text\": \"a\", \"expected\": [1]}]");
    v = check(spec, "a");
    assert_string_equal(v.code, VAT_INTERNAL);
    json_decref(spec);

    spec = trivial_spec();
    json_object_set_new(spec, "match_limit", json_integer(0));
    v = check(spec, "a");
    assert_string_equal(v.code, VAT_INTERNAL);
    json_object_set_new(spec, "match_limit", json_integer(1000));
    json_object_set_new(spec, "dialect", json_string("pcre"));
    v = check(spec, "a");
    assert_string_equal(v.code, VAT_INTERNAL);
    json_decref(spec);
}

/* ---- limits ------------------------------------------------------------- */

static void test_catastrophic_backtracking_is_bounded(void **state)
{
    (void)state;
    char *text = malloc(5002);
    memset(text, 'a', 5000);
    text[5000] = 'b';
    text[5001] = 0;
    json_t *cases = json_array();
    json_t *c = json_object();
    json_object_set_new(c, "text", json_string(text));
    json_object_set_new(c, "expected", json_array());
    json_object_set_new(c, "heldout", json_true());
    json_array_append_new(cases, c);
    json_t *spec = spec_from("[]");
    json_object_set_new(spec, "cases", cases);

    double t0 = now_seconds();
    struct vat_verdict v = check(spec, "(a+)+$");
    double took = now_seconds() - t0;
    /* it compiled, so the gate passed; the held-out string defeats it */
    assert_true(v.gate_passed);
    assert_true(v.score == 0);
    assert_string_equal(v.code, VAT_REGEX_LIMIT);
    assert_non_null(strstr(v.reason, "case 0 (held-out)"));
    assert_true(took < 2.0);

    struct vat_verdict ve;
    t0 = now_seconds();
    assert_null(vat_regex_extract(spec, "(a|aa)+$", 8, text, &ve));
    assert_string_equal(ve.code, VAT_REGEX_LIMIT);
    assert_true(now_seconds() - t0 < 2.0);
    json_decref(spec);
    free(text);
}

static void test_match_count_and_subject_caps(void **state)
{
    (void)state;
    size_t n = 20000;
    char *text = malloc(70000);
    memset(text, 'a', n);
    text[n] = 0;
    struct vat_verdict v;
    /* 20000 one-letter matches: over the per-subject cap */
    assert_null(vat_regex_extract(NULL, "a", 1, text, &v));
    assert_string_equal(v.code, VAT_REGEX_LIMIT);
    /* the same text with few matches is fine */
    json_t *got = vat_regex_extract(NULL, "a+", 2, text, &v);
    assert_non_null(got);
    assert_int_equal(json_array_size(got), 1);
    assert_int_equal(json_string_length(json_array_get(got, 0)), n);
    json_decref(got);
    /* subjects are capped */
    memset(text, 'a', 69999);
    text[69999] = 0;
    assert_null(vat_regex_extract(NULL, "a+", 2, text, &v));
    assert_string_equal(v.code, VAT_TOO_LARGE);
    free(text);
}

static void test_long_subjects_use_the_jit_path_correctly(void **state)
{
    (void)state;
    /* over 16 KiB of text: the JIT-compiled path */
    struct vat_buf b = VAT_BUF_INIT;
    json_t *expected = json_array();
    for (int i = 0; i < 2500; i++) {
        vat_buf_printf(&b, "id=%d; ", i * 37);
        char num[16];
        snprintf(num, sizeof num, "%d", i * 37);
        json_array_append_new(expected, json_string(num));
    }
    assert_true(b.len > 16 * 1024);
    json_t *got = extract("(?<==)\\d+", b.data);
    assert_true(json_equal(got, expected));
    json_decref(got);

    json_t *spec = spec_from("[]");
    json_t *c = json_object();
    json_object_set_new(c, "text", json_string(b.data));
    json_object_set_new(c, "expected", expected);
    json_object_set_new(c, "heldout", json_true());
    json_array_append_new(json_object_get(spec, "cases"), c);
    struct vat_verdict v = check(spec, "(?<==)\\d+");
    assert_true(v.score == 1);
    v = check(spec, "\\d+(?=;)");
    assert_true(v.score == 1);
    v = check(spec, "\\d{2,}");
    assert_true(v.score == 0);
    assert_string_equal(v.code, VAT_WRONG_EXTRACTION);
    json_decref(spec);
    vat_buf_release(&b);
}

/* ---- verdicts ----------------------------------------------------------- */

/* ISO dates: valid month and day, not inside longer digit runs. */
static const char *const dates_cases =
    "[{\"text\": \"deploy 2024-03-07 ok\", \"expected\": [\"2024-03-07\"], \"heldout\": false},"
    " {\"text\": \"v1.2.3 at 2023-12-31T10:00\", \"expected\": [\"2023-12-31\"], "
    "\"heldout\": false},"
    " {\"text\": \"bad 2024-13-01 and 2024-02-00 but 2022-01-15\", \"expected\": "
    "[\"2022-01-15\"], \"heldout\": true},"
    " {\"text\": \"glued 12024-01-02 and 2024-01-023\", \"expected\": [], \"heldout\": true},"
    " {\"text\": \"two: 2021-06-30,2021-07-01\", \"expected\": [\"2021-06-30\", "
    "\"2021-07-01\"], \"heldout\": true}]";

static void test_gold_and_harmless_variants_score_one(void **state)
{
    (void)state;
    json_t *spec = spec_from(dates_cases);
    static const char *const good[] = {
        "(?<!\\d)\\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\\d|3[01])(?!\\d)",
        "(?<![0-9])[0-9]{4}-(0[1-9]|1[012])-(0[1-9]|[12][0-9]|3[01])(?![0-9])",
        "(?<!\\d)(?P<y>\\d{4})-(?P<m>0[1-9]|1[0-2])-(?P<d>0[1-9]|[12]\\d|3[01])(?!\\d)",
        "(?x) (?<!\\d) \\d{4} - (?:0[1-9]|1[0-2])  # month\n - (?:0[1-9]|[12]\\d|3[01]) (?!\\d)",
        "(?<!\\d)\\d\\d\\d\\d-(?:0[1-9]|1[0-2])-(?:[0][1-9]|[1-2][0-9]|3[0-1])(?![0-9])",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        struct vat_verdict v = check(spec, good[i]);
        if (!v.gate_passed || v.score != 1 || strcmp(v.code, VAT_OK) != 0)
            fail_msg("'%s' gave %s (%s)", good[i], v.code, v.reason);
    }
    json_decref(spec);
}

static void test_wrong_pattern_names_the_first_differing_case(void **state)
{
    (void)state;
    json_t *spec = spec_from(dates_cases);
    /* the trap: any four-two-two digits */
    struct vat_verdict v = check(spec, "\\d{4}-\\d{2}-\\d{2}");
    assert_true(v.gate_passed);
    assert_true(v.score == 0);
    assert_string_equal(v.code, VAT_WRONG_EXTRACTION);
    /* a held-out case is named, counted, never quoted */
    assert_string_equal(v.reason, "case 2 (held-out): expected 1 match, got 3; match 1 differs");
    /* revealed, for a dataset author: the text and both lists */
    v = vat_check_regex_as(spec, "\\d{4}-\\d{2}-\\d{2}", strlen("\\d{4}-\\d{2}-\\d{2}"), true);
    assert_non_null(strstr(v.reason, "case 2 (held-out)"));
    assert_non_null(strstr(v.reason, "expected [\"2022-01-15\"]"));
    assert_non_null(strstr(v.reason, "got [\"2024-13-01\",\"2024-02-00\",\"2022-01-15\"]"));

    /* missing the word-boundary guard fails on the glued case */
    v = check(spec, "\\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\\d|3[01])");
    assert_string_equal(v.code, VAT_WRONG_EXTRACTION);
    assert_string_equal(v.reason,
                        "case 3 (held-out): expected 0 matches, got 2; the 0 expected agree, "
                        "match 1 is unexpected");
    v = vat_check_regex_as(spec, "\\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\\d|3[01])",
                           strlen("\\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\\d|3[01])"), true);
    assert_non_null(strstr(v.reason, "case 3 (held-out)"));
    assert_non_null(strstr(v.reason, "expected []"));

    /* fewer matches than expected, those found agreeing */
    v = check(spec, "2024-03-07|2023-12-31|2022-01-15|2021-06-30");
    assert_string_equal(v.reason, "case 4 (held-out): expected 2 matches, got 1; the 1 found "
                                  "agree, match 2 is missing");

    /* an example case is named as one */
    v = check(spec, "\\d{4}-03-07");
    assert_non_null(strstr(v.reason, "case 1 (example)"));
    json_decref(spec);
}

static void test_reason_is_clipped(void **state)
{
    (void)state;
    struct vat_buf b = VAT_BUF_INIT;
    json_t *expected = json_array();
    for (int i = 0; i < 60; i++) {
        vat_buf_printf(&b, "word%d \"quoted\" \\ ", i);
        json_array_append_new(expected, json_string("quoted"));
    }
    json_t *spec = spec_from("[]");
    json_t *c = json_object();
    json_object_set_new(c, "text", json_string(b.data));
    json_object_set_new(c, "expected", expected);
    json_array_append_new(json_object_get(spec, "cases"), c);
    struct vat_verdict v = check(spec, "word\\d+");
    assert_string_equal(v.code, VAT_WRONG_EXTRACTION);
    assert_true(strlen(v.reason) < sizeof v.reason);
    /* all three parts survive the clipping */
    assert_non_null(strstr(v.reason, "case 0 (example)"));
    assert_non_null(strstr(v.reason, "expected [\"quoted\""));
    assert_non_null(strstr(v.reason, "got [\"word0\""));
    assert_non_null(strstr(v.reason, "..."));
    json_decref(spec);
    vat_buf_release(&b);
}

static void test_extract_reports_failures_as_verdicts(void **state)
{
    (void)state;
    struct vat_verdict v;
    assert_null(vat_regex_extract(NULL, "(", 1, "abc", &v));
    assert_false(v.gate_passed);
    assert_string_equal(v.code, VAT_REGEX_COMPILE);
    assert_null(vat_regex_extract(NULL, "\\K", 2, "abc", &v));
    assert_string_equal(v.code, VAT_REGEX_UNSUPPORTED);
    assert_null(vat_regex_extract(NULL, "a", 1, NULL, &v));
    assert_string_equal(v.code, VAT_INTERNAL);
    assert_null(vat_regex_extract(NULL, "a", 1, "caf\xc3", &v));
    assert_string_equal(v.code, VAT_INTERNAL);
    json_t *got = vat_regex_extract(NULL, "b", 1, "abcb", &v);
    assert_non_null(got);
    assert_true(v.gate_passed);
    assert_int_equal(json_array_size(got), 2);
    json_decref(got);
}


/* ---- hostile patterns: a budget over the whole scan ---------------------- */

struct scan_arg {
    const json_t *spec;
    const char *pattern;
};

static struct vat_verdict scan_run(const void *p)
{
    const struct scan_arg *a = p;
    return vat_check_regex(a->spec, a->pattern, strlen(a->pattern));
}

/* A spec of ncases cases of 25 lines of ~100 bytes each (no 'q', no 'r'),
 * each expecting what the pattern empties_pattern extracts: an empty
 * string at every position. */
static json_t *empties_spec(int ncases)
{
    json_t *spec = spec_from("[]");
    for (int k = 0; k < ncases; k++) {
        struct vat_buf b = VAT_BUF_INIT;
        for (int line = 0; line < 25; line++)
            vat_buf_printf(&b, "line %02d of case %d: the quick brown fox jumps over a lazy "
                               "dog, twice and once %06d\n",
                           line, k, line * 7919 + k);
        json_t *exp = json_array();
        for (size_t i = 0; i <= b.len; i++)
            json_array_append_new(exp, json_string(""));
        json_t *c = json_object();
        json_object_set_new(c, "text", json_string(b.data));
        json_object_set_new(c, "expected", exp);
        json_object_set_new(c, "heldout", json_boolean(k > 0));
        json_array_append_new(json_object_get(spec, "cases"), c);
        vat_buf_release(&b);
    }
    return spec;
}

static void expect_scan_bounded(const json_t *spec, const char *pattern, const char *code)
{
    struct scan_arg a = {spec, pattern};
    struct measured m = measure_verdict(scan_run, &a, 60);
    if (getenv("VAT_TEST_TIMES"))
        fprintf(stderr, "%-16s %.3f s cpu %.3f s wall %4ld MiB  %.60s\n", m.code, m.cpu, m.wall,
                m.rss_mib, pattern);
    if (m.status != 0 || strcmp(m.code, code) != 0)
        fail_msg("pattern %.80s: got %s (status %d), expected %s", pattern, m.code, m.status,
                 code);
    if (m.cpu >= 2.0 || m.rss_mib >= 256)
        fail_msg("pattern %.80s: %.2f s of CPU, %ld MiB peak RSS", pattern, m.cpu, m.rss_mib);
}

/* Class 3: a pattern that costs the whole per-position match limit at
 * every position used to pass after seconds; the budget over the whole
 * scan stops it, counted by the interpreter, in the release and sanitizer
 * builds alike.  The cheap spelling of the same extraction still passes. */
static void test_whole_scan_budget(void **state)
{
    (void)state;
    json_t *spec = empties_spec(3);
    expect_scan_bounded(spec, "|(?:.{0,25}.{0,25}.{0,25}.{0,25})(?=q)(?=r)", VAT_REGEX_LIMIT);
    expect_scan_bounded(spec, "|(?:.{0,30}.{0,30}.{0,30}.{0,30}.{0,30})(?=q)(?=r)",
                        VAT_REGEX_LIMIT);
    expect_scan_bounded(spec, "|(?:[a-z ]*[a-z ]*[a-z ]*[a-z ]*)(?=q)(?=r)", VAT_REGEX_LIMIT);
    expect_scan_bounded(spec, "|(?:(?:.|\\s)*(?:.|\\s)*)(?=q)$", VAT_REGEX_LIMIT);
    expect_scan_bounded(spec, "", VAT_PARSE);
    expect_scan_bounded(spec, "(?:)", VAT_OK);
    expect_scan_bounded(spec, "|(?=q)(?=r)x", VAT_OK);
    json_decref(spec);

    /* Over 16 KiB of text: the JIT runs first, and when it reports a
     * limit the interpreter decides, with the same verdict. */
    spec = empties_spec(8);
    expect_scan_bounded(spec, "|(?:.{0,25}.{0,25}.{0,25}.{0,25})(?=q)(?=r)", VAT_REGEX_LIMIT);
    expect_scan_bounded(spec, "|(?=q)(?=r)x", VAT_OK);
    json_decref(spec);

    /* The spec's scan_budget is read (and checked like the other limits). */
    spec = empties_spec(1);
    json_object_set_new(spec, "scan_budget", json_integer(0));
    struct vat_verdict v = check(spec, "(?:)");
    assert_string_equal(v.code, VAT_INTERNAL);
    json_decref(spec);
}


/* A pattern a task sees again runs JIT-compiled once an interpreted check
 * of it met no limit on the same subjects (regex.c, rx_cached): every
 * repeat gives the verdict the one-off interpreted check gives, and a
 * pattern clean on one task's subjects is not trusted on other subjects
 * sharing the cache, where the interpreter meets its limit. */
static void test_repeated_patterns_keep_their_verdicts(void **state)
{
    (void)state;
    json_t *spec = spec_from(
        "[{\"text\": \"pay $12.50 or $7, 2024-01-02 and 12024-01-02\", \"expected\": "
        "[\"2024-01-02\"], \"heldout\": false},"
        " {\"text\": \"aaab and 1999-12-31\", \"expected\": [\"1999-12-31\"], \"heldout\": true},"
        " {\"text\": \"none here\", \"expected\": [], \"heldout\": true}]");
    static const char *const patterns[] = {
        "(?<!\\d)\\d{4}-\\d{2}-\\d{2}(?!\\d)", /* the gold */
        "\\d{4}-\\d{2}-\\d{2}",                /* finds one too many */
        "(a+)+$",                              /* no match, cheap here */
        "[0-9]{4}-[0-9]{2}-[0-9]{2}(?!\\d)",   /* wrong on case 0 */
        "(",                                   /* does not compile */
        "\\d*",                                /* empty matches */
    };
    struct vat_rx_cache *cache = vat_rx_cache_new();
    struct vat_rx_prep *prep = vat_rx_prepare(spec, cache);
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        struct vat_verdict once = check(spec, patterns[i]);
        for (int rep = 0; rep < 4; rep++) {
            struct vat_verdict v = vat_check_regex_prepared(prep, patterns[i], strlen(patterns[i]));
            assert_string_equal(v.code, once.code);
            assert_true(v.score == once.score);
            assert_true(v.gate_passed == once.gate_passed);
            assert_string_equal(v.reason, once.reason);
        }
    }

    /* Clean on the short subjects above, over the limit on these. */
    char *text = malloc(5002);
    memset(text, 'a', 5000);
    text[5000] = 'b';
    text[5001] = 0;
    json_t *big = spec_from("[]");
    json_t *c = json_object();
    json_object_set_new(c, "text", json_string(text));
    json_object_set_new(c, "expected", json_array());
    json_object_set_new(c, "heldout", json_true());
    json_array_append_new(json_object_get(big, "cases"), c);
    struct vat_rx_prep *bprep = vat_rx_prepare(big, cache);
    for (int rep = 0; rep < 3; rep++) {
        struct vat_verdict v = vat_check_regex_prepared(bprep, "(a+)+$", 6);
        assert_string_equal(v.code, VAT_REGEX_LIMIT);
    }
    vat_rx_prep_free(bprep);
    vat_rx_prep_free(prep);
    vat_rx_cache_free(cache);
    json_decref(big);
    json_decref(spec);
    free(text);
}

/* Found by fuzz/fuzz_regex.c: a group name or other quoted piece of the
 * pattern with a control byte put it into the reason verbatim (a newline
 * broke one-line reports).  Reasons hold no control bytes. */
static void test_reason_has_no_control_bytes(void **state)
{
    (void)state;
    json_t *spec = trivial_spec();
    static const char *const pats[] = {"(?(?:\x10[1)", "(?P<a\nb>x)", "(?P<\x1b[31m>x)",
                                       "(?P=\x7f)", "x{\n}\x01("};
    for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
        struct vat_verdict v = check(spec, pats[i]);
        assert_false(v.gate_passed);
        for (const char *c = v.reason; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                fail_msg("pattern %zu: reason '%s' holds byte 0x%02x", i, v.reason,
                         (unsigned char)*c);
    }
    json_decref(spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extraction_matches_python),
        cmocka_unit_test(test_backslash_z_is_absolute_end),
        cmocka_unit_test(test_brace_with_empty_minimum),
        cmocka_unit_test(test_backslash_v_is_vertical_tab),
        cmocka_unit_test(test_verbose_comments_are_not_syntax),
        cmocka_unit_test(test_pcre_only_syntax_is_unsupported),
        cmocka_unit_test(test_python_errors_fail_the_gate),
        cmocka_unit_test(test_gate_caps_and_shape),
        cmocka_unit_test(test_bad_specs_are_internal),
        cmocka_unit_test(test_catastrophic_backtracking_is_bounded),
        cmocka_unit_test(test_whole_scan_budget),
        cmocka_unit_test(test_repeated_patterns_keep_their_verdicts),
        cmocka_unit_test(test_reason_has_no_control_bytes),
        cmocka_unit_test(test_match_count_and_subject_caps),
        cmocka_unit_test(test_long_subjects_use_the_jit_path_correctly),
        cmocka_unit_test(test_gold_and_harmless_variants_score_one),
        cmocka_unit_test(test_wrong_pattern_names_the_first_differing_case),
        cmocka_unit_test(test_reason_is_clipped),
        cmocka_unit_test(test_extract_reports_failures_as_verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

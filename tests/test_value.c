/* test_value.c — the value checker: vat_close at the tolerance edges
 * (relative, absolute, negative, zero); every shape error; numbers given as
 * strings with valid and invalid thousands commas; NaN, Infinity and
 * 1e400; the length cap (1 MB, exactly at the cap), the depth cap
 * (100k-deep bomb, brackets inside strings); NUL bytes; duplicate keys;
 * missing, extra and case-folded keys; ordered and unordered lists, with
 * duplicates under unique, short and long (sorted path); objects of
 * objects with key paths in reasons; reasons bounded, escaped and valid
 * UTF-8; bad specs; and the golden cases in tests/data/value_cases.txt. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "verifiers.h"

static json_t *spec_of(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    if (!j)
        fail_msg("bad spec in test: %s: %s", text, err.text);
    return j;
}

static struct vat_verdict check_n(const char *spec, const char *answer, size_t len)
{
    json_t *s = spec_of(spec);
    struct vat_verdict v = vat_check_value(s, answer, len);
    json_decref(s);
    return v;
}

static struct vat_verdict check(const char *spec, const char *answer)
{
    return check_n(spec, answer, strlen(answer));
}

/* Every reason is one short line of valid UTF-8 without control bytes. */
static void assert_reason_sane(const struct vat_verdict *v)
{
    size_t n = strnlen(v->reason, sizeof v->reason);
    assert_true(n > 0 && n < sizeof v->reason);
    for (size_t i = 0; i < n; i++)
        assert_false((unsigned char)v->reason[i] < 0x20 || v->reason[i] == 0x7f);
    json_t *s = json_string(v->reason); /* NULL for invalid UTF-8 */
    assert_non_null(s);
    json_decref(s);
}

static void expect_code(const char *spec, const char *answer, size_t len, const char *code)
{
    struct vat_verdict v = check_n(spec, answer, len);
    assert_reason_sane(&v);
    if (strcmp(v.code, code) != 0)
        fail_msg("answer %.60s: got %s (%s), expected %s", answer, v.code, v.reason, code);
    bool ok = strcmp(code, VAT_OK) == 0;
    bool gated = strcmp(code, VAT_SHAPE) == 0 || strcmp(code, VAT_TYPE) == 0 ||
                 strcmp(code, VAT_PARSE) == 0 || strcmp(code, VAT_TOO_LARGE) == 0 || strcmp(code, VAT_NOT_FINITE) == 0 ||
                 strcmp(code, VAT_INTERNAL) == 0;
    assert_int_equal(v.gate_passed, !gated);
    assert_true(v.score == (ok ? 1.0 : 0.0));
}

#define EXPECT(spec, answer, code) expect_code(spec, answer, strlen(answer), code)

static void assert_reason_has(const struct vat_verdict *v, const char *needle)
{
    if (!strstr(v->reason, needle))
        fail_msg("reason '%s' lacks '%s'", v->reason, needle);
}

#define NUM12 "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":12}"
#define REGIONS                                                                                \
    "{\"checker\":\"value\",\"shape\":\"object\",\"expected\":{\"north\":1200.5,\"south\":80}}"
#define TOPN                                                                                   \
    "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"string\",\"ordered\":true,"         \
    "\"unique\":true,\"expected\":[\"acme\",\"globex\",\"initech\"]}"
#define IDS                                                                                    \
    "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"string\",\"ordered\":false,"        \
    "\"expected\":[\"A-1\",\"A-2\",\"B-7\"]}"
#define PIVOT                                                                                  \
    "{\"checker\":\"value\",\"shape\":\"object_of_objects\",\"expected\":"                     \
    "{\"2026-03\":{\"dhl\":4,\"ups\":0},\"2026-04\":{\"dhl\":1,\"ups\":2}}}"

/* ---- vat_close ----------------------------------------------------------- */

static void test_close_relative_edges(void **state)
{
    (void)state;
    /* rel 1e-9 of 1e6 is 1e-3 */
    assert_true(vat_close(1e6, 1e6 + 0.0009, 1e-9, 0));
    assert_false(vat_close(1e6, 1e6 + 0.0011, 1e-9, 0));
    /* the larger magnitude sets the scale, whichever side it is on */
    assert_true(vat_close(1e6 + 0.0009, 1e6, 1e-9, 0));
    /* negative numbers: the scale is the magnitude */
    assert_true(vat_close(-5.0, -5.0000000049, 1e-9, 0));
    assert_false(vat_close(-5.0, -5.0000000051, 1e-9, 0));
    assert_false(vat_close(-1.0, 1.0, 0.5, 0));
    assert_true(vat_close(-1.0, 1.0, 2.0, 0));
}

static void test_close_absolute_edges(void **state)
{
    (void)state;
    /* near zero the relative term vanishes and abs_tol decides */
    assert_true(vat_close(0.0, 1e-9, 1e-9, 1e-9));
    assert_false(vat_close(0.0, 1.1e-9, 1e-9, 1e-9));
    assert_true(vat_close(-4e-10, 4e-10, 1e-9, 1e-9));
    assert_false(vat_close(-6e-10, 6e-10, 1e-9, 1e-9));
    assert_true(vat_close(0.0, -0.0, 0, 0));
    assert_true(vat_close(0.0, 0.0, 0, 0));
    assert_false(vat_close(0.0, 1e-300, 0, 0));
    /* abs_tol wins where it is the larger bound */
    assert_true(vat_close(100.0, 100.4, 1e-9, 0.5));
    assert_false(vat_close(100.0, 100.6, 1e-9, 0.5));
}

static void test_close_rejects_non_finite(void **state)
{
    (void)state;
    assert_false(vat_close(NAN, NAN, 1, 1));
    assert_false(vat_close(INFINITY, INFINITY, 1, 1));
    assert_false(vat_close(-INFINITY, 1, 1, 1e308));
    assert_false(vat_close(1, NAN, 1, 1e308));
    /* the difference of two huge numbers overflows: not close */
    assert_false(vat_close(1.7e308, -1.7e308, 0.5, 0));
}

/* ---- numbers ------------------------------------------------------------- */

static void test_number_tolerance_through_checker(void **state)
{
    (void)state;
    const char *rel = "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":-250,"
                      "\"rel_tol\":1e-6,\"abs_tol\":0}";
    EXPECT(rel, "-250.000249", VAT_OK);
    EXPECT(rel, "-249.999751", VAT_OK);
    EXPECT(rel, "-250.000251", VAT_WRONG_VALUE);
    EXPECT(rel, "250", VAT_WRONG_VALUE);
    const char *zero = "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":0}";
    EXPECT(zero, "0", VAT_OK);
    EXPECT(zero, "-0.0", VAT_OK);
    EXPECT(zero, "9e-10", VAT_OK);
    EXPECT(zero, "-9e-10", VAT_OK);
    EXPECT(zero, "1.1e-9", VAT_WRONG_VALUE);
    /* defaults apply when the spec gives no tolerance */
    EXPECT(NUM12, "12.000000001", VAT_OK);
    EXPECT(NUM12, "12.0000001", VAT_WRONG_VALUE);
}

static void test_wrong_value_reason(void **state)
{
    (void)state;
    struct vat_verdict v = check(NUM12, "12.5");
    assert_string_equal(v.code, VAT_WRONG_VALUE);
    assert_true(v.gate_passed);
    assert_reason_has(&v, "got 12.5, expected 12");
    const char *integral = "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":12,"
                           "\"integer\":true}";
    v = check(integral, "12.5");
    assert_string_equal(v.code, VAT_WRONG_VALUE);
    assert_reason_has(&v, "not an integer");
    EXPECT(integral, "12.0", VAT_OK);
    EXPECT(integral, "\"12\"", VAT_TYPE);
    v = check(REGIONS, "{\"north\":1200.25,\"south\":80}");
    assert_string_equal(v.code, VAT_WRONG_VALUE);
    assert_reason_has(&v, "'north': got 1200.25, expected 1200.5");
    v = check(NUM12, "12");
    assert_string_equal(v.code, VAT_OK);
    assert_string_equal(v.reason, "matches");
}

/* The prompt asks for a JSON number: a string never is one, however it
 * spells a number (extraction, not the checker, reads prose numbers). */
static void test_numbers_as_strings(void **state)
{
    (void)state;
    const char *money = "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":1234567.5}";
    static const char *const strings[] = {
        "\"1234567.5\"", "\"1,234,567.5\"", "\"1,234,567.50\"", "\"+1,234,567.5\"",
        "\"1.2345675e6\"", "\"001234567.5\"", "\"1,23\"",  "\"$1234567.5\"",
        "\"nan\"",       "\"\"",              "\"-\"",              "\"١٢\"",
    };
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
        EXPECT(money, strings[i], VAT_TYPE);
    EXPECT(money, "1234567.5", VAT_OK);
    EXPECT(money, "1.2345675e6", VAT_OK);
    struct vat_verdict v = check(money, "\"1234567.5\"");
    assert_false(v.gate_passed);
    assert_reason_has(&v, "expected a number, got the string '1234567.5'");
    /* at every position, named by its path */
    v = check(REGIONS, "{\"north\":\"1,200.5\",\"south\":80}");
    assert_string_equal(v.code, VAT_TYPE);
    assert_reason_has(&v, "expected a number at 'north', got the string '1,200.5'");
    v = check(PIVOT, "{\"2026-03\":{\"dhl\":\"4\"}}");
    assert_string_equal(v.code, VAT_TYPE);
    assert_reason_has(&v, "at '2026-03/dhl'");
    const char *nums = "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"number\","
                       "\"ordered\":true,\"expected\":[3,1.5]}";
    v = check(nums, "[3,\"1.5\"]");
    assert_string_equal(v.code, VAT_TYPE);
    assert_reason_has(&v, "expected a number at item 2, got the string '1.5'");
    v = check(nums, "[3,false]");
    assert_reason_has(&v, "expected a number at item 2, got false");
    /* and a number where a string is asked */
    v = check(TOPN, "[\"acme\",7]");
    assert_string_equal(v.code, VAT_TYPE);
    assert_reason_has(&v, "expected a string at item 2, got a number");
    /* 3 and 3.0 are the same number */
    EXPECT(nums, "[3.0,1.50]", VAT_OK);
    EXPECT(NUM12, "12.0", VAT_OK);
    EXPECT(NUM12, "1.2e1", VAT_OK);
}

static void test_non_finite(void **state)
{
    (void)state;
    EXPECT(NUM12, "NaN", VAT_PARSE);
    EXPECT(NUM12, "nan", VAT_PARSE);
    EXPECT(NUM12, "Infinity", VAT_PARSE);
    EXPECT(NUM12, "-Infinity", VAT_PARSE);
    EXPECT(NUM12, "1e400", VAT_NOT_FINITE);
    EXPECT(NUM12, "-1e400", VAT_NOT_FINITE);
    EXPECT(NUM12, "\"1e400\"", VAT_TYPE);
    EXPECT(REGIONS, "{\"north\":1e400,\"south\":80}", VAT_NOT_FINITE);
    EXPECT(REGIONS, "{\"north\":\"9e999\",\"south\":80}", VAT_TYPE);
    /* underflow is a finite zero, and a long integer is a finite number */
    const char *zero = "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":0}";
    EXPECT(zero, "1e-400", VAT_OK);
    const char *big = "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":1.2345678901234568e23}";
    EXPECT(big, "123456789012345678901234", VAT_OK);
    EXPECT(big, "-123456789012345678901234", VAT_WRONG_VALUE);
}

/* ---- shapes -------------------------------------------------------------- */

static void test_shape_errors(void **state)
{
    (void)state;
    /* a position asking for a number or a string: type */
    static const char *const not_number[] = {"[12]", "{\"a\":12}", "true", "false", "null",
                                             "\"twelve\""};
    for (size_t i = 0; i < sizeof not_number / sizeof *not_number; i++)
        EXPECT(NUM12, not_number[i], VAT_TYPE);
    static const char *const bad_cell[] = {"{\"north\":[1200.5],\"south\":80}",
                                           "{\"north\":{\"v\":1200.5},\"south\":80}",
                                           "{\"north\":true,\"south\":80}"};
    for (size_t i = 0; i < sizeof bad_cell / sizeof *bad_cell; i++)
        EXPECT(REGIONS, bad_cell[i], VAT_TYPE);
    static const char *const bad_item[] = {"[\"acme\",[\"globex\"]]", "[\"acme\",null]",
                                           "[\"acme\",1]"};
    for (size_t i = 0; i < sizeof bad_item / sizeof *bad_item; i++)
        EXPECT(TOPN, bad_item[i], VAT_TYPE);
    EXPECT(PIVOT, "{\"2026-03\":{\"dhl\":\"four\"}}", VAT_TYPE);
    /* a position asking for an object or an array: shape */
    static const char *const not_object[] = {"[1200.5,80]", "1280.5", "\"north\"", "null"};
    for (size_t i = 0; i < sizeof not_object / sizeof *not_object; i++)
        EXPECT(REGIONS, not_object[i], VAT_SHAPE);
    static const char *const not_list[] = {"{\"a\":\"acme\"}", "\"acme\"", "3"};
    for (size_t i = 0; i < sizeof not_list / sizeof *not_list; i++)
        EXPECT(TOPN, not_list[i], VAT_SHAPE);
    static const char *const not_pivot[] = {"[]", "4", "{\"2026-03\":4}", "{\"2026-03\":[4,0]}"};
    for (size_t i = 0; i < sizeof not_pivot / sizeof *not_pivot; i++)
        EXPECT(PIVOT, not_pivot[i], VAT_SHAPE);
}

static void test_shape_reasons(void **state)
{
    (void)state;
    struct vat_verdict v = check(REGIONS, "[1200.5,80]");
    assert_false(v.gate_passed);
    assert_reason_has(&v, "expected an object of key -> number, got an array");
    v = check(REGIONS, "{\"north\":\"n/a\",\"south\":80}");
    assert_reason_has(&v, "expected a number at 'north', got the string 'n/a'");
    v = check(TOPN, "[\"acme\",7]");
    assert_reason_has(&v, "expected a string at item 2, got a number");
    v = check(PIVOT, "{\"2026-03\":{\"dhl\":\"x\"}}");
    assert_reason_has(&v, "'2026-03/dhl'");
    v = check(PIVOT, "{\"2026-03\":7}");
    assert_reason_has(&v, "but '2026-03' is a number");
    v = check(NUM12, "{\"n\":12}");
    assert_reason_has(&v, "expected a number, got an object");
}

/* ---- caps and parsing ---------------------------------------------------- */

static void test_depth_bomb(void **state)
{
    (void)state;
    const size_t depth = 100000;
    char *bomb = malloc(2 * depth + 1);
    memset(bomb, '[', depth);
    memset(bomb + depth, ']', depth);
    bomb[2 * depth] = '\0';
    /* 200 kB is over the length cap as well; the depth cap must fire on
     * its own for a bomb that fits */
    expect_code(TOPN, bomb, 2 * depth, VAT_TOO_LARGE);
    size_t d = 20000;
    memset(bomb, '[', d);
    memset(bomb + d, ']', d);
    expect_code(TOPN, bomb, 2 * d, VAT_TOO_LARGE);
    struct vat_verdict v = check_n(TOPN, bomb, 2 * d);
    assert_reason_has(&v, "deeper than 32");
    /* an unclosed bomb too */
    memset(bomb, '{', d);
    expect_code(REGIONS, bomb, d, VAT_TOO_LARGE);
    free(bomb);

    /* exactly at the cap is fine, one more level is not */
    char ok[2 * VAT_MAX_JSON_DEPTH + 8], over[2 * VAT_MAX_JSON_DEPTH + 8];
    memset(ok, '[', VAT_MAX_JSON_DEPTH);
    memset(ok + VAT_MAX_JSON_DEPTH, ']', VAT_MAX_JSON_DEPTH);
    ok[2 * VAT_MAX_JSON_DEPTH] = '\0';
    EXPECT(TOPN, ok, VAT_TYPE);
    memset(over, '[', VAT_MAX_JSON_DEPTH + 1);
    memset(over + VAT_MAX_JSON_DEPTH + 1, ']', VAT_MAX_JSON_DEPTH + 1);
    over[2 * VAT_MAX_JSON_DEPTH + 2] = '\0';
    EXPECT(TOPN, over, VAT_TOO_LARGE);

    /* brackets inside strings, escaped quotes included, are not nesting */
    char strs[400];
    strcpy(strs, "[\"acme\",\"globex\",\"initech\\\"");
    for (int i = 0; i < 100; i++)
        strcat(strs, "[{");
    strcat(strs, "\"]");
    EXPECT(TOPN, strs, VAT_WRONG_ITEMS);
}

static void test_length_cap(void **state)
{
    (void)state;
    size_t big = 1024 * 1024;
    char *a = malloc(big + 1);
    memset(a, ' ', big);
    memcpy(a + big - 2, "12", 2);
    a[big] = '\0';
    expect_code(NUM12, a, big, VAT_TOO_LARGE);
    struct vat_verdict v = check_n(NUM12, a, big);
    assert_reason_has(&v, "1048576 bytes");
    /* whitespace padding up to exactly the cap is still an answer */
    const char *at_cap = a + big - VAT_MAX_ANSWER_BYTES;
    expect_code(NUM12, at_cap, VAT_MAX_ANSWER_BYTES, VAT_OK);
    expect_code(NUM12, at_cap - 1, VAT_MAX_ANSWER_BYTES + 1, VAT_TOO_LARGE);
    free(a);
}

static void test_parse_errors(void **state)
{
    (void)state;
    expect_code(NUM12, "", 0, VAT_PARSE);
    expect_code(NUM12, " \n\t ", 4, VAT_PARSE);
    struct vat_verdict v = vat_check_value(NULL, NULL, 0);
    assert_string_equal(v.code, VAT_INTERNAL);
    json_t *s = spec_of(NUM12);
    v = vat_check_value(s, NULL, 0);
    json_decref(s);
    assert_string_equal(v.code, VAT_PARSE);
    assert_false(v.gate_passed);
    EXPECT(NUM12, "12 12", VAT_PARSE);
    EXPECT(NUM12, "The answer is 12.", VAT_PARSE);
    EXPECT(NUM12, "```json\n12\n```", VAT_PARSE);
    EXPECT(NUM12, "12,", VAT_PARSE);
    EXPECT(NUM12, "'12'", VAT_PARSE);
    EXPECT(NUM12, "0x0C", VAT_PARSE);
    EXPECT(NUM12, "+12", VAT_PARSE);
    EXPECT(REGIONS, "{north: 1200.5, south: 80}", VAT_PARSE);
    EXPECT(REGIONS, "{\"north\":1200.5,\"south\":80,}", VAT_PARSE);
    v = check(NUM12, "twelve");
    assert_reason_has(&v, "not valid JSON");
    assert_reason_has(&v, "line 1");
    assert_reason_has(&v, "expected a number");
    /* a NUL byte ends jansson's input early: it must not hide the rest */
    expect_code(NUM12, "12\0garbage", 10, VAT_PARSE);
    expect_code(NUM12, "12\0", 3, VAT_PARSE);
    EXPECT(TOPN, "[\"acme\\u0000\",\"globex\",\"initech\"]", VAT_PARSE);
    /* bytes that are not UTF-8 */
    EXPECT(TOPN, "[\"acme\xff\",\"globex\",\"initech\"]", VAT_PARSE);
    EXPECT(TOPN, "[\"acme\xc0\x80\",\"globex\",\"initech\"]", VAT_PARSE);
}

static void test_duplicate_keys(void **state)
{
    (void)state;
    EXPECT(REGIONS, "{\"north\":1200.5,\"south\":80,\"north\":1200.5}", VAT_PARSE);
    EXPECT(REGIONS, "{\"north\":1,\"south\":80,\"north\":1200.5}", VAT_PARSE);
    EXPECT(PIVOT, "{\"2026-03\":{\"dhl\":4,\"dhl\":4,\"ups\":0},\"2026-04\":{\"dhl\":1,\"ups\":2}}",
           VAT_PARSE);
    struct vat_verdict v = check(REGIONS, "{\"north\":1,\"north\":2}");
    assert_reason_has(&v, "duplicate");
}

/* ---- objects ------------------------------------------------------------- */

static void test_object_keys(void **state)
{
    (void)state;
    EXPECT(REGIONS, "{\"south\":80,\"north\":1200.5}", VAT_OK);
    EXPECT(REGIONS, "{\"north\":1200.5}", VAT_MISSING_KEY);
    EXPECT(REGIONS, "{}", VAT_MISSING_KEY);
    EXPECT(REGIONS, "{\"north\":1200.5,\"south\":80,\"east\":0}", VAT_EXTRA_KEY);
    EXPECT(REGIONS, "{\"NORTH\":1200.5,\"south\":80}", VAT_KEY_CASE);
    EXPECT(REGIONS, "{\"north \":1200.5,\"south\":80}", VAT_KEY_CASE);
    EXPECT(REGIONS, "{\"\\tNorth\\n\":1200.5,\"south\":80}", VAT_KEY_CASE);
    /* a missing key with an unrelated surplus key is missing, not case */
    EXPECT(REGIONS, "{\"nord\":1200.5,\"south\":80}", VAT_MISSING_KEY);
    /* key problems outrank value problems */
    EXPECT(REGIONS, "{\"north\":1,\"south\":80,\"east\":0}", VAT_EXTRA_KEY);
    EXPECT(REGIONS, "{\"north\":1}", VAT_MISSING_KEY);

    struct vat_verdict v = check(REGIONS, "{\"North\":1200.5,\"south\":80}");
    assert_reason_has(&v, "key 'North' should be 'north'");
    v = check(REGIONS, "{\"north\":1200.5}");
    assert_reason_has(&v, "'south' is missing");
    v = check(REGIONS, "{\"north\":1200.5,\"south\":80,\"east\":0}");
    assert_reason_has(&v, "unexpected key 'east'");
}

static void test_object_of_objects(void **state)
{
    (void)state;
    EXPECT(PIVOT, "{\"2026-04\":{\"ups\":2,\"dhl\":1},\"2026-03\":{\"ups\":0,\"dhl\":4}}", VAT_OK);
    struct vat_verdict v = check(PIVOT, "{\"2026-03\":{\"ups\":0},\"2026-04\":{\"dhl\":1,\"ups\":2}}");
    assert_string_equal(v.code, VAT_MISSING_KEY);
    assert_reason_has(&v, "'2026-03/dhl' is missing");
    v = check(PIVOT, "{\"2026-03\":{\"dhl\":4,\"ups\":0},\"2026-04\":{\"dhl\":1,\"ups\":3}}");
    assert_string_equal(v.code, VAT_WRONG_VALUE);
    assert_reason_has(&v, "'2026-04/ups': got 3, expected 2");
    v = check(PIVOT, "{\"2026-03\":{\"dhl\":4,\"ups\":0},\"2026-04\":{\"Dhl\":1,\"ups\":2}}");
    assert_string_equal(v.code, VAT_KEY_CASE);
    assert_reason_has(&v, "'2026-04/Dhl' should be '2026-04/dhl'");
    v = check(PIVOT, "{\"2026-03\":{\"dhl\":4,\"ups\":0},\"2026-04\":{\"dhl\":1,\"ups\":2},"
                     "\"2026-05\":{\"dhl\":0}}");
    assert_string_equal(v.code, VAT_EXTRA_KEY);
    assert_reason_has(&v, "'2026-05'");
    /* a wrong value in the first month and a dropped cell in the second:
     * the dropped cell is what the trap looks like, and wins */
    v = check(PIVOT, "{\"2026-03\":{\"dhl\":9,\"ups\":0},\"2026-04\":{\"dhl\":1}}");
    assert_string_equal(v.code, VAT_MISSING_KEY);
}

/* Each order's current status: an object of strings, values compared byte
 * for byte after the keys agree. */
#define STATUSES                                                                               \
    "{\"checker\":\"value\",\"shape\":\"object_of_strings\",\"expected\":"                   \
    "{\"ORD-1\":\"shipped\",\"ORD-2\":\"pending\",\"ORD-3\":\"\"}}"

static void test_object_of_strings(void **state)
{
    (void)state;
    EXPECT(STATUSES, "{\"ORD-3\":\"\",\"ORD-1\":\"shipped\",\"ORD-2\":\"pending\"}", VAT_OK);
    EXPECT(STATUSES, "{\"ORD-1\":\"shipped\",\"ORD-2\":\"pending\",\"ORD-3\":\"\\u0000\"}",
           VAT_PARSE); /* jansson refuses a NUL inside a string */
    /* the gate: every value a string, the whole an object */
    struct vat_verdict v = check(STATUSES, "{\"ORD-1\":\"shipped\",\"ORD-2\":2,\"ORD-3\":\"\"}");
    assert_string_equal(v.code, VAT_TYPE);
    assert_false(v.gate_passed);
    assert_reason_has(&v, "expected a string at 'ORD-2', got a number");
    v = check(STATUSES, "{\"ORD-1\":\"shipped\",\"ORD-2\":null,\"ORD-3\":\"\"}");
    assert_string_equal(v.code, VAT_TYPE);
    v = check(STATUSES, "{\"ORD-1\":[\"shipped\"],\"ORD-2\":\"pending\",\"ORD-3\":\"\"}");
    assert_string_equal(v.code, VAT_TYPE);
    v = check(STATUSES, "[\"shipped\",\"pending\",\"\"]");
    assert_string_equal(v.code, VAT_SHAPE);
    assert_reason_has(&v, "expected an object of key -> string, got an array");
    /* keys first, as for an object of numbers */
    v = check(STATUSES, "{\"ORD-1\":\"shipped\",\"ORD-2\":\"x\"}");
    assert_string_equal(v.code, VAT_MISSING_KEY);
    assert_reason_has(&v, "'ORD-3' is missing");
    v = check(STATUSES, "{\"ord-1\":\"shipped\",\"ORD-2\":\"pending\",\"ORD-3\":\"\"}");
    assert_string_equal(v.code, VAT_KEY_CASE);
    v = check(STATUSES,
              "{\"ORD-1\":\"shipped\",\"ORD-2\":\"pending\",\"ORD-3\":\"\",\"ORD-4\":\"new\"}");
    assert_string_equal(v.code, VAT_EXTRA_KEY);
    /* values: byte for byte, the near miss named as such */
    v = check(STATUSES, "{\"ORD-1\":\"delivered\",\"ORD-2\":\"pending\",\"ORD-3\":\"\"}");
    assert_string_equal(v.code, VAT_WRONG_VALUE);
    assert_true(v.gate_passed);
    assert_reason_has(&v, "'ORD-1': got 'delivered', expected 'shipped'");
    assert_null(strstr(v.reason, "letter case"));
    v = check(STATUSES, "{\"ORD-1\":\" Shipped\",\"ORD-2\":\"pending\",\"ORD-3\":\"\"}");
    assert_string_equal(v.code, VAT_WRONG_VALUE);
    assert_reason_has(&v, "got ' Shipped', expected 'shipped' (they differ only in letter case "
                          "or surrounding spaces)");
    /* a hostile value is quoted within bounds */
    struct vat_buf a = VAT_BUF_INIT;
    vat_buf_puts(&a, "{\"ORD-1\":\"");
    for (int i = 0; i < 3000; i++)
        vat_buf_puts(&a, "\\u0001'\\n");
    vat_buf_puts(&a, "\",\"ORD-2\":\"pending\",\"ORD-3\":\"\"}");
    v = check_n(STATUSES, a.data, a.len);
    assert_string_equal(v.code, VAT_WRONG_VALUE);
    assert_reason_sane(&v);
    assert_true(strlen(v.reason) < 160);
    vat_buf_release(&a);
    /* a spec whose expected value is not an object of strings is refused */
    v = check("{\"checker\":\"value\",\"shape\":\"object_of_strings\",\"expected\":{\"a\":1}}",
              "{\"a\":\"1\"}");
    assert_string_equal(v.code, VAT_INTERNAL);
    assert_reason_has(&v, "not an object of key -> string");
}

/* ---- lists --------------------------------------------------------------- */

static void test_lists_ordered(void **state)
{
    (void)state;
    EXPECT(TOPN, "[\"acme\",\"globex\",\"initech\"]", VAT_OK);
    struct vat_verdict v = check(TOPN, "[\"acme\",\"initech\",\"globex\"]");
    assert_string_equal(v.code, VAT_WRONG_ORDER);
    assert_reason_has(&v, "item 2 is 'initech', expected 'globex'");
    v = check(TOPN, "[\"acme\",\"globex\",\"hooli\"]");
    assert_string_equal(v.code, VAT_WRONG_ITEMS);
    assert_reason_has(&v, "item 3 is 'hooli', expected 'initech'");
    v = check(TOPN, "[\"acme\",\"globex\"]");
    assert_string_equal(v.code, VAT_WRONG_LENGTH);
    assert_reason_has(&v, "got 2 items, expected 3");
    /* duplicate fires before the length rule */
    v = check(TOPN, "[\"acme\",\"globex\",\"globex\",\"initech\"]");
    assert_string_equal(v.code, VAT_DUPLICATE);
    assert_reason_has(&v, "'globex' appears more than once");
    EXPECT(TOPN, "[\"acme\",\"acme\",\"initech\"]", VAT_DUPLICATE);
    /* without unique, a repeat is just a wrong item */
    const char *nonuniq = "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"string\","
                          "\"ordered\":true,\"expected\":[\"a\",\"b\",\"c\"]}";
    EXPECT(nonuniq, "[\"a\",\"a\",\"c\"]", VAT_WRONG_ITEMS);
    EXPECT(nonuniq, "[\"a\",\"b\",\"c\",\"c\"]", VAT_WRONG_LENGTH);
    /* strings compare byte-exact */
    EXPECT(TOPN, "[\"acme\",\"globex\",\"Initech\"]", VAT_WRONG_ITEMS);
    EXPECT(TOPN, "[\"acme\",\"globex\",\"initech \"]", VAT_WRONG_ITEMS);
    EXPECT(TOPN, "[\"acme\",\"globex\",\"init\"]", VAT_WRONG_ITEMS);
}

static void test_lists_unordered(void **state)
{
    (void)state;
    EXPECT(IDS, "[\"B-7\",\"A-2\",\"A-1\"]", VAT_OK);
    struct vat_verdict v = check(IDS, "[\"B-8\",\"A-2\",\"A-1\"]");
    assert_string_equal(v.code, VAT_WRONG_ITEMS);
    assert_reason_has(&v, "'B-7' is missing and 'B-8' is not expected");
    EXPECT(IDS, "[\"A-1\",\"A-2\",\"A-2\"]", VAT_WRONG_ITEMS);
    EXPECT(IDS, "[\"A-1\",\"A-2\",\"B-7\",\"B-7\"]", VAT_WRONG_LENGTH);
    EXPECT(IDS, "[]", VAT_WRONG_LENGTH);
    /* number items compare with tolerance, in any order */
    const char *nums = "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"number\","
                       "\"ordered\":false,\"unique\":true,\"expected\":[1.5,-2,1e6]}";
    EXPECT(nums, "[1000000.0009,-2,1.5]", VAT_OK);
    EXPECT(nums, "[1000000.0009,\"-2\",1.5]", VAT_TYPE);
    EXPECT(nums, "[1000000.0011,-2,1.5]", VAT_WRONG_ITEMS);
    EXPECT(nums, "[1.5,1.5,-2]", VAT_DUPLICATE);
    EXPECT(nums, "[1.5,-2]", VAT_WRONG_LENGTH);
    /* an empty expected list */
    const char *none = "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"string\","
                       "\"expected\":[]}";
    EXPECT(none, "[]", VAT_OK);
    EXPECT(none, "[\"x\"]", VAT_WRONG_LENGTH);
}

/* Lists past the stack size take the sorted, allocated path. */
static void test_lists_long(void **state)
{
    (void)state;
    enum { N = 500 };
    json_t *spec = json_pack("{s:s, s:s, s:s, s:b, s:b}", "checker", "value", "shape", "list",
                             "items", "string", "ordered", 0, "unique", 1);
    json_t *exp = json_array();
    struct vat_buf ans = VAT_BUF_INIT;
    vat_buf_putc(&ans, '[');
    for (int i = 0; i < N; i++) {
        char id[16];
        snprintf(id, sizeof id, "ID-%04d", i);
        json_array_append_new(exp, json_string(id));
        /* the answer lists them backwards */
        vat_buf_printf(&ans, "%s\"ID-%04d\"", i ? "," : "", N - 1 - i);
    }
    vat_buf_putc(&ans, ']');
    json_object_set_new(spec, "expected", exp);
    struct vat_verdict v = vat_check_value(spec, ans.data, ans.len);
    assert_string_equal(v.code, VAT_OK);

    /* change one id */
    char *p = strstr(ans.data, "\"ID-0250\"");
    assert_non_null(p);
    memcpy(p, "\"ID-9250\"", 9);
    v = vat_check_value(spec, ans.data, ans.len);
    assert_string_equal(v.code, VAT_WRONG_ITEMS);
    assert_reason_has(&v, "'ID-0250' is missing and 'ID-9250' is not expected");
    /* repeat one id */
    memcpy(p, "\"ID-0251\"", 9);
    v = vat_check_value(spec, ans.data, ans.len);
    assert_string_equal(v.code, VAT_DUPLICATE);
    assert_reason_has(&v, "'ID-0251'");
    /* ordered: the reversed list has the right items in the wrong order */
    memcpy(p, "\"ID-0250\"", 9);
    json_object_set_new(spec, "ordered", json_true());
    v = vat_check_value(spec, ans.data, ans.len);
    assert_string_equal(v.code, VAT_WRONG_ORDER);
    assert_reason_has(&v, "item 1 is 'ID-0499', expected 'ID-0000'");
    /* a long answer against a short gold list */
    json_object_set_new(spec, "expected", json_pack("[s]", "ID-0000"));
    v = vat_check_value(spec, ans.data, ans.len);
    assert_string_equal(v.code, VAT_WRONG_LENGTH);
    vat_buf_release(&ans);
    json_decref(spec);
}

/* ---- reasons never echo unbounded or raw attacker text -------------------- */

static void test_reason_safety(void **state)
{
    (void)state;
    struct vat_buf a = VAT_BUF_INIT;
    vat_buf_puts(&a, "{\"north\":1200.5,\"south\":80,\"");
    for (int i = 0; i < 2000; i++)
        vat_buf_puts(&a, "\\u0001\\n\\\\'x");
    vat_buf_puts(&a, "\":1}");
    struct vat_verdict v = check_n(REGIONS, a.data, a.len);
    assert_string_equal(v.code, VAT_EXTRA_KEY);
    assert_reason_sane(&v);
    assert_true(strlen(v.reason) < 120);
    assert_reason_has(&v, "\\x01\\n\\\\\\'x");
    assert_reason_has(&v, "...'");
    vat_buf_release(&a);

    /* non-ASCII keys survive whole, and truncation keeps UTF-8 intact */
    vat_buf_puts(&a, "{\"north\":1200.5,\"south\":80,\"");
    for (int i = 0; i < 300; i++)
        vat_buf_puts(&a, "é€");
    vat_buf_puts(&a, "\":1}");
    v = check_n(REGIONS, a.data, a.len);
    assert_string_equal(v.code, VAT_EXTRA_KEY);
    assert_reason_sane(&v);
    vat_buf_release(&a);

    v = check(REGIONS, "{\"north\":1200.5,\"south\":80,\"café\":1}");
    assert_reason_has(&v, "'café'");

    /* jansson's own error text quotes the input: it is escaped too */
    static const char *const raw[] = {"\"\x01\"", "\"\xff\xfe\"", "[\"a\x7f\x1b[2J\"",
                                      "\xe2\x82", "{\"\x01\":1}"};
    for (size_t i = 0; i < sizeof raw / sizeof *raw; i++) {
        v = check(REGIONS, raw[i]);
        assert_false(v.gate_passed);
        assert_reason_sane(&v);
    }
    /* a long string that is not a number */
    vat_buf_puts(&a, "\"");
    for (int i = 0; i < 5000; i++)
        vat_buf_puts(&a, "A\\t");
    vat_buf_puts(&a, "\"");
    v = check_n(NUM12, a.data, a.len);
    assert_string_equal(v.code, VAT_TYPE);
    assert_reason_sane(&v);
    vat_buf_release(&a);
}

/* ---- the spec itself ----------------------------------------------------- */

static void test_bad_specs(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"checker\":\"value\",\"expected\":12}",
        "{\"checker\":\"value\",\"shape\":\"numbers\",\"expected\":12}",
        "{\"checker\":\"value\",\"shape\":7,\"expected\":12}",
        "{\"checker\":\"value\",\"shape\":\"number\"}",
        "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":\"twelve\"}",
        "{\"checker\":\"value\",\"shape\":\"list\",\"expected\":[\"a\"]}",
        "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"id\",\"expected\":[\"a\"]}",
        "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"number\",\"expected\":[\"a\"]}",
        "{\"checker\":\"value\",\"shape\":\"object\",\"expected\":[1]}",
        "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":12,\"rel_tol\":-1}",
        "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":12,\"abs_tol\":\"0.1\"}",
        ("{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"string\",\"ordered\":1,"
         "\"expected\":[]}"),
        "[1]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct vat_verdict v = check(bad[i], "12");
        if (strcmp(v.code, VAT_INTERNAL) != 0)
            fail_msg("spec %s: got %s (%s)", bad[i], v.code, v.reason);
        assert_false(v.gate_passed);
        assert_true(v.score == 0.0);
    }
}

/* ---- golden cases -------------------------------------------------------- */

static bool same_verdict(const struct vat_verdict *a, const struct vat_verdict *b)
{
    return a->gate_passed == b->gate_passed && a->score == b->score &&
           strcmp(a->code, b->code) == 0 && strcmp(a->reason, b->reason) == 0;
}

static char *cases_path(void)
{
    const char *src = getenv("VAT_SOURCE_DIR");
    struct vat_buf b = VAT_BUF_INIT;
    if (src && *src) {
        vat_buf_printf(&b, "%s/tests/data/value_cases.txt", src);
    } else {
        const char *slash = strrchr(__FILE__, '/');
        if (slash)
            vat_buf_putn(&b, __FILE__, (size_t)(slash - __FILE__));
        else
            vat_buf_puts(&b, ".");
        vat_buf_puts(&b, "/data/value_cases.txt");
    }
    return vat_buf_detach(&b);
}

static void test_golden_cases(void **state)
{
    (void)state;
    char *path = cases_path();
    char *text = vat_test_read_file(path, NULL);
    if (!text) {
        print_error("cannot read '%s'\n", path);
        free(path);
        fail();
    }
    json_t *spec = NULL;
    int cases = 0, failures = 0, lineno = 0, ok = 0, gate_fail = 0;
    char *next = text;
    while (*next) {
        char *line = next, *nl = strchr(next, '\n');
        if (nl) {
            *nl = '\0';
            next = nl + 1;
        } else {
            next += strlen(next);
        }
        lineno++;
        size_t n = strlen(line);
        if (n && line[n - 1] == '\r')
            line[--n] = '\0';
        if (n == 0 || line[0] == '#')
            continue;
        if (strncmp(line, "spec ", 5) == 0) {
            json_decref(spec);
            json_error_t err;
            spec = json_loads(line + 5, 0, &err);
            if (!spec)
                fail_msg("%s:%d: bad spec: %s", path, lineno, err.text);
            continue;
        }
        char *tab = strrchr(line, '\t');
        if (!tab || !spec)
            fail_msg("%s:%d: neither a spec nor answer<TAB>code", path, lineno);
        *tab = '\0';
        const char *code = tab + 1;
        struct vat_verdict v = vat_check_value(spec, line, strlen(line));
        /* the prepared path (fast accept, then the full path) agrees */
        struct vat_value_prep *prep = vat_value_prepare(spec);
        struct vat_verdict pv = vat_check_value_prepared(prep, line, strlen(line));
        vat_value_prep_free(prep);
        if (!same_verdict(&v, &pv)) {
            print_error("%s:%d: answer %s: prepared %s (%s), full %s (%s)\n", path, lineno, line,
                        pv.code, pv.reason, v.code, v.reason);
            failures++;
        }
        cases++;
        bool want_ok = strcmp(code, VAT_OK) == 0;
        bool want_gated = strcmp(code, VAT_SHAPE) == 0 || strcmp(code, VAT_TYPE) == 0 ||
                          strcmp(code, VAT_PARSE) == 0 ||
                          strcmp(code, VAT_TOO_LARGE) == 0 || strcmp(code, VAT_NOT_FINITE) == 0;
        ok += want_ok;
        gate_fail += want_gated;
        if (strcmp(v.code, code) != 0 || v.gate_passed != !want_gated ||
            v.score != (want_ok ? 1.0 : 0.0)) {
            print_error("%s:%d: answer %s: got %s gate=%d score=%g (%s), expected %s\n", path,
                        lineno, line, v.code, v.gate_passed, v.score, v.reason, code);
            failures++;
        }
        assert_reason_sane(&v);
    }
    json_decref(spec);
    free(text);
    free(path);
    assert_int_equal(failures, 0);
    /* the file must keep exercising all three outcomes */
    assert_true(cases >= 40);
    assert_true(ok >= 10 && gate_fail >= 10 && cases - ok - gate_fail >= 10);
}

/* ---- the prepared path against the full path, on random answers ---------- */

static uint64_t rnd_state = 0x9e3779b97f4a7c15u;

static uint32_t rnd(uint32_t n)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (uint32_t)(rnd_state % n);
}

/* A variant of the gold text g: small edits that keep it valid JSON or
 * break it, as a model's answers might. */
static void mutate(struct vat_buf *b, const char *g)
{
    static const char *const junk[] = {" ", "\t", "\n", "\"", "\\u0041", "\\n", "0", "1e3",
                                       "-", ".", ",", ":", "{", "}", "[", "]", "x", "00",
                                       "1e999", "\xc3\xa9", "\xff", "\"a\"", "0.1", "E+1"};
    size_t edits = rnd(3);
    vat_buf_puts(b, g);
    for (size_t k = 0; k < edits; k++) {
        size_t at = rnd((uint32_t)b->len + 1);
        char *cur = vat_buf_detach(b);
        size_t len = strlen(cur);
        switch (rnd(4)) {
        case 0: /* insert junk */
            vat_buf_putn(b, cur, at);
            vat_buf_puts(b, junk[rnd(sizeof junk / sizeof junk[0])]);
            vat_buf_puts(b, cur + at);
            break;
        case 1: /* delete a byte */
            vat_buf_putn(b, cur, at);
            if (at < len)
                vat_buf_puts(b, cur + at + 1);
            break;
        case 2: /* change a digit or a letter's case */
            for (size_t i = at; i < len; i++) {
                if (cur[i] >= '0' && cur[i] <= '9') {
                    cur[i] = (char)('0' + rnd(10));
                    break;
                }
                if (cur[i] >= 'a' && cur[i] <= 'z') {
                    cur[i] = (char)(cur[i] - 'a' + 'A');
                    break;
                }
            }
            vat_buf_puts(b, cur);
            break;
        default: { /* a tiny change after a decimal point, within tolerance or not */
            static const char *const tails[] = {"0000000001", "00000001", "0001", "9999999999"};
            const char *dot = strchr(cur + at, '.');
            size_t cut = dot ? (size_t)(dot - cur) + 1 : len;
            vat_buf_putn(b, cur, cut);
            if (dot)
                vat_buf_puts(b, tails[rnd(4)]);
            vat_buf_puts(b, cur + cut);
            break;
        }
        }
        free(cur);
    }
}

static void test_prepared_matches_full(void **state)
{
    (void)state;
    static const char *const specs[] = {
        "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":12.5}",
        "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":\"7\",\"integer\":true}",
        "{\"checker\":\"value\",\"shape\":\"object\",\"expected\":{\"a\":1,\"Bb\":2.25,\"c d\":-3}}",
        "{\"checker\":\"value\",\"shape\":\"object\",\"expected\":{}}",
        "{\"checker\":\"value\",\"shape\":\"object_of_objects\",\"expected\":"
        "{\"x\":{\"p\":1,\"q\":0},\"y\":{\"p\":2,\"q\":3e-7},\"z\":{}}}",
        "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"number\",\"ordered\":true,"
        "\"expected\":[3,1,2,1e-12]}",
        "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"number\",\"unique\":true,"
        "\"expected\":[3,1,2]}",
        "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"string\",\"ordered\":true,"
        "\"expected\":[\"AC-1\",\"b\",\"c d\"]}",
        "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"string\",\"expected\":[\"x\",\"y\",\"x\"]}",
        "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"string\",\"expected\":[]}",
        "{\"checker\":\"value\",\"shape\":\"object_of_strings\",\"expected\":"
        "{\"ORD-1\":\"shipped\",\"o 2\":\"\",\"K\":\"Pending\",\"u\":\"caf\\u00e9\"}}",
    };
    int compared = 0, oks = 0;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        json_t *spec = json_loads(specs[i], 0, NULL);
        assert_non_null(spec);
        struct vat_value_prep *prep = vat_value_prepare(spec);
        char *gold = json_dumps(json_object_get(spec, "expected"), JSON_ENCODE_ANY | JSON_COMPACT);
        char *spaced = json_dumps(json_object_get(spec, "expected"), JSON_ENCODE_ANY | JSON_INDENT(2));
        for (int k = 0; k < 3000; k++) {
            struct vat_buf b = VAT_BUF_INIT;
            mutate(&b, k % 2 ? gold : spaced);
            char *ans = vat_buf_detach(&b);
            size_t len = strlen(ans);
            struct vat_verdict full = vat_check_value(spec, ans, len);
            struct vat_verdict fast = vat_check_value_prepared(prep, ans, len);
            if (!same_verdict(&full, &fast))
                fail_msg("spec %zu, answer '%s': prepared %s (%s), full %s (%s)", i, ans,
                         fast.code, fast.reason, full.code, full.reason);
            compared++;
            oks += strcmp(full.code, VAT_OK) == 0;
            free(ans);
        }
        free(gold);
        free(spaced);
        vat_value_prep_free(prep);
        json_decref(spec);
    }
    /* both outcomes are exercised */
    assert_true(oks > compared / 10 && oks < compared * 9 / 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_close_relative_edges),
        cmocka_unit_test(test_close_absolute_edges),
        cmocka_unit_test(test_close_rejects_non_finite),
        cmocka_unit_test(test_number_tolerance_through_checker),
        cmocka_unit_test(test_wrong_value_reason),
        cmocka_unit_test(test_numbers_as_strings),
        cmocka_unit_test(test_non_finite),
        cmocka_unit_test(test_shape_errors),
        cmocka_unit_test(test_shape_reasons),
        cmocka_unit_test(test_depth_bomb),
        cmocka_unit_test(test_length_cap),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_object_keys),
        cmocka_unit_test(test_object_of_objects),
        cmocka_unit_test(test_object_of_strings),
        cmocka_unit_test(test_lists_ordered),
        cmocka_unit_test(test_lists_unordered),
        cmocka_unit_test(test_lists_long),
        cmocka_unit_test(test_reason_safety),
        cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_golden_cases),
        cmocka_unit_test(test_prepared_matches_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

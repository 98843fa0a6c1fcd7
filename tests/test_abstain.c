/* test_abstain.c — the abstain checker: the abstention scores 1 on an
 * unanswerable task and 0 ("abstained") on an answerable one; equality is
 * JSON equality (key order and whitespace free, 0 equals 0.0, nothing
 * extra); a computed value scores 0 ("not_abstained") on an unanswerable
 * task and is judged as a value on an answerable one; gate failures keep
 * their code and name the abstention; caps apply; bad specs are internal. */
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

#define UNANSWERABLE                                                                           \
    "{\"checker\":\"abstain\",\"answerable\":false,\"abstention\":{\"answerable\":false},"     \
    "\"shape\":\"number\"}"
#define ANSWERABLE                                                                             \
    "{\"checker\":\"abstain\",\"answerable\":true,\"abstention\":{\"answerable\":false},"      \
    "\"shape\":\"object\",\"expected\":{\"north\":10,\"south\":2.5}}"
#define NO_SHAPE                                                                               \
    "{\"checker\":\"abstain\",\"answerable\":false,\"abstention\":{\"answerable\":false}}"

static struct vat_verdict check_n(const char *spec, const char *answer, size_t len)
{
    json_error_t err;
    json_t *s = json_loads(spec, 0, &err);
    if (!s)
        fail_msg("bad spec in test: %s: %s", spec, err.text);
    struct vat_verdict v = vat_check_abstain(s, answer, len);
    /* the prepared form (the corpus handle's) gives the same verdict */
    struct vat_abstain_prep *p = vat_abstain_prepare(s);
    struct vat_verdict pv = vat_check_abstain_prepared(p, answer, len);
    vat_abstain_prep_free(p);
    if (pv.gate_passed != v.gate_passed || pv.score != v.score || strcmp(pv.code, v.code) != 0 ||
        strcmp(pv.reason, v.reason) != 0)
        fail_msg("answer '%.60s': prepared %s (%s), full %s (%s)", answer, pv.code, pv.reason,
                 v.code, v.reason);
    json_decref(s);
    return v;
}

static struct vat_verdict check(const char *spec, const char *answer)
{
    return check_n(spec, answer, strlen(answer));
}

static void expect(const char *spec, const char *answer, bool gate, double score, const char *code)
{
    struct vat_verdict v = check(spec, answer);
    if (strcmp(v.code, code) != 0 || v.gate_passed != gate || v.score != score)
        fail_msg("answer %.60s: got %s gate=%d score=%g (%s), expected %s gate=%d score=%g",
                 answer, v.code, v.gate_passed, v.score, v.reason, code, gate, score);
    size_t n = strlen(v.reason);
    assert_true(n > 0 && n < sizeof v.reason);
    json_t *s = json_string(v.reason);
    assert_non_null(s);
    json_decref(s);
}

static void assert_reason_has(const struct vat_verdict *v, const char *needle)
{
    if (!strstr(v->reason, needle))
        fail_msg("reason '%s' lacks '%s'", v->reason, needle);
}

static void test_abstain_on_unanswerable(void **state)
{
    (void)state;
    expect(UNANSWERABLE, "{\"answerable\":false}", true, 1, VAT_OK);
    expect(UNANSWERABLE, "  {\n  \"answerable\" : false\n}\n", true, 1, VAT_OK);
    expect(UNANSWERABLE, "\t\r\n{\"answerable\":false} \r", true, 1, VAT_OK);
    expect(ANSWERABLE, " {\"answerable\":false}\n", true, 0, VAT_ABSTAINED);
    expect(UNANSWERABLE, "\f{\"answerable\":false}", false, 0, VAT_PARSE);
    expect(NO_SHAPE, "{\"answerable\":false}", true, 1, VAT_OK);
    /* answerable: the value checker's fast path, and an abstention of the
     * answer's own shape, which must still read as abstaining */
    expect(ANSWERABLE, " {\"south\": 2.5, \"north\": 10.0}\n", true, 1, VAT_OK);
    expect(ANSWERABLE, "{\"north\":10,\"south\":2.6}", true, 0, VAT_WRONG_VALUE);
    const char *num_abst = "{\"checker\":\"abstain\",\"answerable\":true,\"abstention\":-1,"
                           "\"shape\":\"number\",\"expected\":-1}";
    expect(num_abst, "-1", true, 0, VAT_ABSTAINED);
    expect(num_abst, " -1.0 ", true, 0, VAT_ABSTAINED);
}

static void test_abstain_on_answerable(void **state)
{
    (void)state;
    expect(ANSWERABLE, "{\"answerable\":false}", true, 0, VAT_ABSTAINED);
    struct vat_verdict v = check(ANSWERABLE, "{\"answerable\":false}");
    assert_reason_has(&v, "answerable");
}

static void test_answer_on_unanswerable(void **state)
{
    (void)state;
    expect(UNANSWERABLE, "42", true, 0, VAT_NOT_ABSTAINED);
    /* a number asked: a string is not one, abstaining or not */
    expect(UNANSWERABLE, "\"42\"", false, 0, VAT_TYPE);
    expect(UNANSWERABLE, "0", true, 0, VAT_NOT_ABSTAINED);
    struct vat_verdict v = check(UNANSWERABLE, "42");
    assert_reason_has(&v, "{\"answerable\":false}");
    /* without a shape, any JSON value that is not the abstention answers */
    expect(NO_SHAPE, "[1,2]", true, 0, VAT_NOT_ABSTAINED);
    expect(NO_SHAPE, "null", true, 0, VAT_NOT_ABSTAINED);
    expect(NO_SHAPE, "{\"answerable\":true}", true, 0, VAT_NOT_ABSTAINED);
    expect(NO_SHAPE, "NaN", false, 0, VAT_PARSE);
}

static void test_answer_on_answerable(void **state)
{
    (void)state;
    expect(ANSWERABLE, "{\"north\":10,\"south\":2.5}", true, 1, VAT_OK);
    expect(ANSWERABLE, "{\"south\":2.50,\"north\":10.0}", true, 1, VAT_OK);
    expect(ANSWERABLE, "{\"south\":\"2.50\",\"north\":10.0}", false, 0, VAT_TYPE);
    expect(ANSWERABLE, "{\"north\":11,\"south\":2.5}", true, 0, VAT_WRONG_VALUE);
    expect(ANSWERABLE, "{\"north\":10}", true, 0, VAT_MISSING_KEY);
    expect(ANSWERABLE, "{\"North\":10,\"south\":2.5}", true, 0, VAT_KEY_CASE);
    expect(ANSWERABLE, "{\"north\":10,\"south\":2.5,\"answerable\":false}", false, 0, VAT_TYPE);
}

/* Only the exact abstention value abstains; near misses are answers. */
static void test_abstention_equality(void **state)
{
    (void)state;
    static const char *const near[] = {
        "{\"answerable\":\"false\"}", "{\"answerable\":0}", "{\"answerable\":null}",
        "{\"Answerable\":false}",     "false",              "[{\"answerable\":false}]",
        "\"unanswerable\"",           "{}",
    };
    for (size_t i = 0; i < sizeof near / sizeof *near; i++)
        expect(UNANSWERABLE, near[i], false, 0, VAT_TYPE);
    expect(UNANSWERABLE, "{\"answerable\":false,\"reason\":\"no such column\"}", false, 0,
           VAT_TYPE);
    expect(UNANSWERABLE, "{\"answerable\":false,\"answerable\":false}", false, 0, VAT_PARSE);

    /* key order and number spelling are free: JSON equality */
    const char *rich = "{\"checker\":\"abstain\",\"answerable\":false,\"shape\":\"number\","
                       "\"abstention\":{\"answerable\":false,\"code\":0,\"tags\":[\"n/a\",1]}}";
    expect(rich, "{\"tags\":[\"n/a\",1.0],\"code\":0.0,\"answerable\":false}", true, 1, VAT_OK);
    expect(rich, "{\"tags\":[\"n/a\",1],\"code\":-0,\"answerable\":false}", true, 1, VAT_OK);
    expect(rich, "{\"tags\":[1,\"n/a\"],\"code\":0,\"answerable\":false}", false, 0, VAT_TYPE);
    expect(rich, "{\"tags\":[\"n/a\",1],\"code\":0.0000001,\"answerable\":false}", false, 0,
           VAT_TYPE);
    expect(rich, "{\"tags\":[\"n/a\",1],\"answerable\":false}", false, 0, VAT_TYPE);

    /* a string abstention value */
    const char *word = "{\"checker\":\"abstain\",\"answerable\":false,\"shape\":\"number\","
                       "\"abstention\":\"UNANSWERABLE\"}";
    expect(word, "\"UNANSWERABLE\"", true, 1, VAT_OK);
    expect(word, "\"unanswerable\"", false, 0, VAT_TYPE);
    expect(word, "UNANSWERABLE", false, 0, VAT_PARSE);
    expect(word, "7", true, 0, VAT_NOT_ABSTAINED);
}

static void test_gate_failures_name_abstention(void **state)
{
    (void)state;
    struct vat_verdict v = check(ANSWERABLE, "[10,2.5]");
    assert_string_equal(v.code, VAT_SHAPE);
    assert_false(v.gate_passed);
    assert_reason_has(&v, "expected an object of key -> number");
    assert_reason_has(&v, "or abstain with {\"answerable\":false}");
    v = check(UNANSWERABLE, "I cannot answer this");
    assert_string_equal(v.code, VAT_PARSE);
    assert_reason_has(&v, "or abstain with {\"answerable\":false}");
    v = check(UNANSWERABLE, "1e400");
    assert_string_equal(v.code, VAT_NOT_FINITE);
    assert_reason_has(&v, "or abstain with");
    /* a long gate reason still leaves room for the note */
    struct vat_buf a = VAT_BUF_INIT;
    vat_buf_puts(&a, "{\"north\":10,\"");
    for (int i = 0; i < 200; i++)
        vat_buf_puts(&a, "\\u0007é");
    vat_buf_puts(&a, "\":\"not a number at all\"}");
    v = check_n(ANSWERABLE, a.data, a.len);
    vat_buf_release(&a);
    assert_string_equal(v.code, VAT_TYPE);
    assert_reason_has(&v, "or abstain with {\"answerable\":false}");
    json_t *s = json_string(v.reason);
    assert_non_null(s);
    json_decref(s);
    /* an abstention too long to quote is described instead */
    const char *longabst =
        "{\"checker\":\"abstain\",\"answerable\":false,\"shape\":\"number\",\"abstention\":"
        "{\"answerable\":false,\"explanation\":\"the fixture does not hold the column the "
        "question needs\"}}";
    v = check(longabst, "[]");
    assert_reason_has(&v, "or abstain with the abstention value");
}

static void test_caps(void **state)
{
    (void)state;
    size_t big = 1024 * 1024;
    char *a = malloc(big);
    memset(a, ' ', big);
    memcpy(a, "{\"answerable\":false}", 20);
    struct vat_verdict v = check_n(UNANSWERABLE, a, big);
    assert_string_equal(v.code, VAT_TOO_LARGE);
    assert_false(v.gate_passed);
    size_t d = 20000;
    memset(a, '[', d);
    v = check_n(UNANSWERABLE, a, d);
    assert_string_equal(v.code, VAT_TOO_LARGE);
    free(a);
    v = check_n(UNANSWERABLE, "{\"answerable\":false}\0x", 22);
    assert_string_equal(v.code, VAT_PARSE);
    v = check_n(UNANSWERABLE, "", 0);
    assert_string_equal(v.code, VAT_PARSE);
    json_t *spec = json_loads(UNANSWERABLE, 0, NULL);
    v = vat_check_abstain(spec, NULL, 0);
    json_decref(spec);
    assert_string_equal(v.code, VAT_PARSE);
}

static void test_bad_specs(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"checker\":\"abstain\",\"abstention\":{\"answerable\":false},\"shape\":\"number\"}",
        "{\"checker\":\"abstain\",\"answerable\":\"no\",\"abstention\":{\"answerable\":false},"
        "\"shape\":\"number\"}",
        "{\"checker\":\"abstain\",\"answerable\":false,\"shape\":\"number\"}",
        /* an answerable task needs something to score against */
        "{\"checker\":\"abstain\",\"answerable\":true,\"abstention\":{\"answerable\":false},"
        "\"shape\":\"number\"}",
        "{\"checker\":\"abstain\",\"answerable\":true,\"abstention\":{\"answerable\":false},"
        "\"expected\":12}",
        "{\"checker\":\"abstain\",\"answerable\":false,\"abstention\":{\"answerable\":false},"
        "\"shape\":\"sum\"}",
        "[]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct vat_verdict v = check(bad[i], "{\"answerable\":false}");
        if (strcmp(v.code, VAT_INTERNAL) != 0)
            fail_msg("spec %s: got %s (%s)", bad[i], v.code, v.reason);
        assert_false(v.gate_passed);
        assert_true(v.score == 0.0);
    }
    struct vat_verdict v = vat_check_abstain(NULL, "{}", 2);
    assert_string_equal(v.code, VAT_INTERNAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_abstain_on_unanswerable),
        cmocka_unit_test(test_abstain_on_answerable),
        cmocka_unit_test(test_answer_on_unanswerable),
        cmocka_unit_test(test_answer_on_answerable),
        cmocka_unit_test(test_abstention_equality),
        cmocka_unit_test(test_gate_failures_name_abstention),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_bad_specs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

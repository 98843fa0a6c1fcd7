/* test_extract.c — answer extraction (verifiers/extract.c): the golden
 * cases of tests/data/extract_cases.txt (every rule, every answer kind,
 * every decoding: think blocks, HTML comments, answer tags, fences of both
 * kinds, \boxed{}, answer lines plain and in markdown, closing sentences,
 * code spans, Python string literals, prose numbers, the trailing SQL
 * statement, a bare last line, the whole text, no answer, CRLF and the
 * adversarial shapes); a 1 MB think block before the answer; the 4 MiB
 * limit on both sides; completions that are not NUL-terminated; and 4 MiB
 * adversarial inputs that a rescanning extractor would take hours on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "extract.h"
#include "testutil.h"
#include "vat.h"

/* Runs vat_extract on a private copy of text, allocated to exactly len
 * bytes and not NUL-terminated, so that ASan catches any read past the end. */
struct run {
    char *buf;
    int rc;
    struct vat_extraction x;
};

static struct run run_extract(const char *kind, const char *text, size_t len, int mode)
{
    struct run r;
    r.buf = malloc(len ? len : 1);
    assert_non_null(r.buf);
    if (len)
        memcpy(r.buf, text, len);
    r.rc = vat_extract(kind, r.buf, len, mode, &r.x);
    return r;
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static const char *const rules[] = {"raw",      "answer_tag", "fence",    "boxed",
                                    "answer_line", "sentence", "sql_tail", "last_line",
                                    "whole",    "none"};
#define N_RULES (sizeof rules / sizeof rules[0])

/* What holds for every extraction: the answer is a slice of the completion,
 * auto answers taken as they are written are trimmed, decoding never
 * lengthens them, and the rule is one of the names. */
static void assert_sane(const char *buf, size_t len, int mode, const struct vat_extraction *x)
{
    assert_non_null(x->text);
    assert_non_null(x->rule);
    if (len > 0) {
        assert_true(x->text >= buf && x->text <= buf + len);
        assert_true(x->len <= (size_t)(buf + len - x->text));
    } else {
        assert_int_equal(x->len, 0);
    }
    bool known = false;
    for (size_t i = 0; i < N_RULES; i++)
        known = known || strcmp(x->rule, rules[i]) == 0;
    assert_true(known);
    if (mode == VAT_EXTRACT_RAW) {
        assert_string_equal(x->rule, "raw");
        assert_int_equal(x->decode, VAT_DECODE_NONE);
    } else {
        assert_string_not_equal(x->rule, "raw");
        if (x->len && x->decode == VAT_DECODE_NONE) {
            assert_false(is_ws(x->text[0]));
            assert_false(is_ws(x->text[x->len - 1]));
        }
        if (strcmp(x->rule, "none") == 0)
            assert_int_equal(x->len, 0);
    }
    char *out = malloc(x->len ? x->len : 1);
    assert_non_null(out);
    assert_true(vat_extract_write(x, out) <= x->len);
    free(out);
}

/* ---- golden cases -------------------------------------------------------- */

static char *cases_path(void)
{
    const char *src = getenv("VAT_SOURCE_DIR");
    struct vat_buf b = VAT_BUF_INIT;
    if (src && *src) {
        vat_buf_printf(&b, "%s/tests/data/extract_cases.txt", src);
    } else {
        const char *slash = strrchr(__FILE__, '/');
        if (slash)
            vat_buf_putn(&b, __FILE__, (size_t)(slash - __FILE__));
        else
            vat_buf_puts(&b, ".");
        vat_buf_puts(&b, "/data/extract_cases.txt");
    }
    return vat_buf_detach(&b);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes the file's escapes (\n \r \t \\ \xHH) into b; false on a bad one. */
static bool unescape(const char *s, struct vat_buf *b)
{
    for (; *s; s++) {
        if (*s != '\\') {
            vat_buf_putc(b, *s);
            continue;
        }
        s++;
        switch (*s) {
        case 'n': vat_buf_putc(b, '\n'); break;
        case 'r': vat_buf_putc(b, '\r'); break;
        case 't': vat_buf_putc(b, '\t'); break;
        case '\\': vat_buf_putc(b, '\\'); break;
        case 'x': {
            int hi = hexval(s[1]), lo = hi < 0 ? -1 : hexval(s[2]);
            if (lo < 0)
                return false;
            vat_buf_putc(b, (char)(hi * 16 + lo));
            s += 2;
            break;
        }
        default: return false;
        }
    }
    return true;
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
    int cases = 0, failures = 0, lineno = 0;
    int by_rule[N_RULES] = {0}, by_kind[4] = {0}, by_decode[4] = {0};
    static const char *const kinds[] = {"value", "regex", "sql", "abstain"};
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
        if (line[0] == '\0' || line[0] == '#')
            continue;
        char *f[5];
        int nf = 0;
        for (char *p = line; nf < 5; nf++) {
            f[nf] = p;
            char *tab = strchr(p, '\t');
            if (!tab) {
                nf++;
                break;
            }
            *tab = '\0';
            p = tab + 1;
        }
        if (nf != 5 || strchr(f[4], '\t'))
            fail_msg("%s:%d: not five TAB-separated fields", path, lineno);
        int mode = VAT_EXTRACT_AUTO;
        if (strcmp(f[1], "raw") == 0)
            mode = VAT_EXTRACT_RAW;
        else if (strcmp(f[1], "auto") == 0)
            mode = VAT_EXTRACT_AUTO;
        else
            fail_msg("%s:%d: mode '%s' is neither raw nor auto", path, lineno, f[1]);
        struct vat_buf comp = VAT_BUF_INIT, want = VAT_BUF_INIT;
        if (!unescape(f[2], &comp) || !unescape(f[4], &want))
            fail_msg("%s:%d: bad escape", path, lineno);
        struct run r = run_extract(f[0], comp.data ? comp.data : "", comp.len, mode);
        cases++;
        assert_int_equal(r.rc, 0);
        assert_sane(r.buf, comp.len, mode, &r.x);
        char *got = malloc(r.x.len + 1);
        assert_non_null(got);
        size_t glen = vat_extract_write(&r.x, got);
        if (strcmp(r.x.rule, f[3]) != 0 || glen != want.len ||
            (want.len && memcmp(got, want.data, want.len) != 0)) {
            print_error("%s:%d: got %s [%.*s], expected %s [%s]\n", path, lineno, r.x.rule,
                        (int)glen, got, f[3], want.data ? want.data : "");
            failures++;
        }
        for (size_t i = 0; i < N_RULES; i++)
            by_rule[i] += strcmp(f[3], rules[i]) == 0;
        for (int i = 0; i < 4; i++)
            by_kind[i] += strcmp(f[0], kinds[i]) == 0;
        if (r.x.decode < 4)
            by_decode[r.x.decode]++;
        free(got);
        free(r.buf);
        vat_buf_release(&comp);
        vat_buf_release(&want);
    }
    free(text);
    free(path);
    assert_int_equal(failures, 0);
    /* the file keeps covering every rule, every answer kind and every
     * decoding */
    assert_true(cases >= 200);
    for (size_t i = 0; i < N_RULES; i++)
        if (by_rule[i] < 3)
            fail_msg("%s: rule '%s' has %d cases", path, rules[i], by_rule[i]);
    for (int i = 0; i < 4; i++)
        assert_true(by_kind[i] > 0);
    for (int i = 0; i < 4; i++)
        assert_true(by_decode[i] > 0);
}

/* ---- size ------------------------------------------------------------------ */

/* A think block of about 1 MB, full of the things auto looks for (fences,
 * answer tags, answer lines), then the real answer. */
static void test_think_block_1mb(void **state)
{
    (void)state;
    static const char para[] = "Let me try:\n```json\n{\"draft\": 1}\n```\n<answer>0</answer>\n"
                               "Answer: 0\nHmm, <b>not</b> right; a < b.\n";
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, "<think>");
    while (b.len < (1u << 20))
        vat_buf_puts(&b, para);
    vat_buf_puts(&b, "</think>\n\nThe total:\n```json\n1234.5\n```\n");
    struct run r = run_extract("value", b.data, b.len, VAT_EXTRACT_AUTO);
    assert_int_equal(r.rc, 0);
    assert_sane(r.buf, b.len, VAT_EXTRACT_AUTO, &r.x);
    assert_string_equal(r.x.rule, "fence");
    assert_int_equal(r.x.len, 6);
    assert_memory_equal(r.x.text, "1234.5", 6);
    /* the answer points into the completion, just before its closing fence */
    assert_ptr_equal(r.x.text, r.buf + b.len - strlen("1234.5\n```\n"));
    free(r.buf);

    /* the same block never closed: everything is thought, nothing answers */
    size_t open_len = b.len - strlen("</think>\n\nThe total:\n```json\n1234.5\n```\n");
    r = run_extract("value", b.data, open_len, VAT_EXTRACT_AUTO);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.x.rule, "none");
    assert_int_equal(r.x.len, 0);
    free(r.buf);
    vat_buf_release(&b);
}

static void test_size_limit(void **state)
{
    (void)state;
    assert_string_equal(VAT_COMPLETION_TOO_LARGE, "completion_too_large");
    size_t max = VAT_MAX_COMPLETION_BYTES;
    assert_int_equal(max, 4u * 1024 * 1024);
    char *big = malloc(max + 1);
    assert_non_null(big);
    memset(big, ' ', max + 1);
    memcpy(big + max - 12, "Answer: 7   ", 12);
    struct vat_extraction x;
    /* exactly at the limit: read */
    assert_int_equal(vat_extract("value", big, max, VAT_EXTRACT_AUTO, &x), 0);
    assert_string_equal(x.rule, "answer_line");
    assert_int_equal(x.len, 1);
    assert_int_equal(x.text[0], '7');
    assert_int_equal(vat_extract("value", big, max, VAT_EXTRACT_RAW, &x), 0);
    assert_ptr_equal(x.text, big);
    assert_int_equal(x.len, max);
    /* one byte more: refused in both modes, with an empty answer */
    big[max] = '8';
    assert_int_equal(vat_extract("value", big, max + 1, VAT_EXTRACT_AUTO, &x), -1);
    assert_int_equal(x.len, 0);
    assert_string_equal(x.rule, "none");
    assert_int_equal(vat_extract("sql", big, max + 1, VAT_EXTRACT_RAW, &x), -1);
    assert_int_equal(x.len, 0);
    assert_string_equal(x.rule, "raw");
    assert_int_equal(vat_extract("regex", big, SIZE_MAX, VAT_EXTRACT_AUTO, &x), -1);
    free(big);
}

/* ---- edges of the call ------------------------------------------------------ */

/* The length bounds the completion: what lies after it is never read. */
static void test_length_not_nul(void **state)
{
    (void)state;
    const char text[] = "<answer>1</answer>\n<answer>2</answer>";
    size_t cut = strlen("<answer>1</answer>\n<answer>2");
    struct run r = run_extract("value", text, cut, VAT_EXTRACT_AUTO);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.x.rule, "answer_tag");
    assert_int_equal(r.x.len, 1);
    assert_int_equal(r.x.text[0], '1');
    free(r.buf);

    /* a NUL byte is an ordinary byte */
    const char nul[] = "```json\n4\0\n```\nAnswer: 5";
    r = run_extract("value", nul, sizeof nul - 1, VAT_EXTRACT_AUTO);
    assert_string_equal(r.x.rule, "fence");
    assert_int_equal(r.x.len, 2);
    assert_memory_equal(r.x.text, "4\0", 2);
    free(r.buf);
}

static void test_null_and_modes(void **state)
{
    (void)state;
    struct vat_extraction x;
    assert_int_equal(vat_extract("value", NULL, 0, VAT_EXTRACT_AUTO, &x), 0);
    assert_int_equal(x.len, 0);
    assert_non_null(x.text);
    assert_string_equal(x.rule, "none");
    assert_int_equal(vat_extract("value", NULL, 0, VAT_EXTRACT_RAW, &x), 0);
    assert_int_equal(x.len, 0);
    assert_string_equal(x.rule, "raw");
    /* NULL kind: only untagged and text fences fit */
    const char *t = "```text\n1\n```\n```json\n2\n```";
    assert_int_equal(vat_extract(NULL, t, strlen(t), VAT_EXTRACT_AUTO, &x), 0);
    assert_int_equal(x.len, 1);
    assert_int_equal(x.text[0], '1');
    /* a mode that is not RAW is AUTO */
    assert_int_equal(vat_extract("value", t, strlen(t), 7, &x), 0);
    assert_string_equal(x.rule, "fence");
    assert_int_equal(x.text[0], '2');
    /* raw gives back the very same bytes */
    assert_int_equal(vat_extract("value", t, strlen(t), VAT_EXTRACT_RAW, &x), 0);
    assert_ptr_equal(x.text, t);
    assert_int_equal(x.len, strlen(t));
}

/* ---- linear time ---------------------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 4 MiB of one unit repeated: each shape that would make a naive extractor
 * rescan (many openers without closers, many fence lines of varied length,
 * many answer lines, many stray '<').  Quadratic work on 4 MiB is ~10^13
 * steps; linear work takes milliseconds even under the sanitizers, so a
 * bound of seconds separates the two with no flakiness. */
static void test_adversarial_linear(void **state)
{
    (void)state;
    static const char *const units[] = {
        "<",         "<think>",   "</think>",  "<answer>",    "</answer>", "<answer></think>",
        "```\n",     "````\n```\n", "```json\n~~~\n", "Answer: 1\n", "\n",      "<thin",
        "`",         "<think>```\n", "Final answer",     " ```x\n",  "<ans<answer",
        "\\boxed{",  "\\boxed{}}",  "{",          "**Answer:** ", "the answer is ",
        "the the is ", "SELECT (\n", "'",         "/*",        "r'\\",     "<!--",
        "-->",       "<!-- x -->", "re.compile(r'", "`` `", "$1,",        "[",
        "{\"a\":[",    "## Answer\n", "\n\n",
    };
    size_t max = VAT_MAX_COMPLETION_BYTES;
    char *buf = malloc(max);
    assert_non_null(buf);
    for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
        size_t ul = strlen(units[u]);
        for (size_t i = 0; i < max; i++)
            buf[i] = units[u][i % ul];
        static const char *const kinds[] = {"value", "regex", "sql"};
        for (int k = 0; k < 3; k++) {
            struct vat_extraction x;
            double t0 = now();
            assert_int_equal(vat_extract(kinds[k], buf, max, VAT_EXTRACT_AUTO, &x), 0);
            double dt = now() - t0;
            assert_sane(buf, max, VAT_EXTRACT_AUTO, &x);
            if (dt > 5.0)
                fail_msg("unit '%s' (%s): %.2f s for 4 MiB", units[u], kinds[k], dt);
        }
    }
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_cases),     cmocka_unit_test(test_think_block_1mb),
        cmocka_unit_test(test_size_limit),       cmocka_unit_test(test_length_not_nul),
        cmocka_unit_test(test_null_and_modes),   cmocka_unit_test(test_adversarial_linear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

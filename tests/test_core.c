/* test_core.c — the core helpers: safe corpus paths, deterministic JSON
 * text (shortest round-trip reals), atomic writes, and the split rule. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "admit.h"
#include "config.h"
#include "filememo.h"
#include "jsonout.h"
#include "manifest.h"
#include "rng.h"
#include "strength.h"
#include "template.h"
#include "split.h"
#include "testutil.h"
#include "vat.h"

static void test_path_safety(void **state)
{
    (void)state;
    assert_true(vat_path_is_safe("fixtures/grouped_sum/grouped_sum-00001.csv"));
    assert_true(vat_path_is_safe("a"));
    assert_true(vat_path_is_safe("out/x/..y"));
    assert_false(vat_path_is_safe(NULL));
    assert_false(vat_path_is_safe(""));
    assert_false(vat_path_is_safe("/etc/passwd"));
    assert_false(vat_path_is_safe(".."));
    assert_false(vat_path_is_safe("../x"));
    assert_false(vat_path_is_safe("fixtures/../../x"));
    assert_false(vat_path_is_safe("fixtures/.."));
    assert_false(vat_path_is_safe("./x"));
    assert_false(vat_path_is_safe("a//b"));
    assert_false(vat_path_is_safe("a/"));
    assert_false(vat_path_is_safe("a\\..\\b"));
    assert_false(vat_path_is_safe("a\nb"));
}

static void expect_real(double x, const char *want)
{
    char out[32];
    assert_string_equal(vat_fmt_real(x, out), want);
    if (isfinite(x))
        assert_true(strtod(out, NULL) == x);
}

static void test_shortest_reals(void **state)
{
    (void)state;
    expect_real(0.1, "0.1");
    expect_real(0.1 + 0.2, "0.30000000000000004");
    expect_real(1234.5, "1234.5");
    expect_real(12, "12.0");
    expect_real(-0.05, "-0.05");
    expect_real(1e-7, "1e-07");
    expect_real(1e21, "1e+21");
    expect_real(123456789.01, "123456789.01");
    expect_real(0, "0.0");
    expect_real(NAN, "null");
    expect_real(INFINITY, "null");
    /* Money sums from integer cents print exactly as decimals. */
    for (long c = -100000; c <= 100000; c += 7) {
        char out[32], want[32];
        vat_fmt_real((double)c / 100.0, out);
        snprintf(want, sizeof want, "%.2f", (double)c / 100.0);
        assert_true(strtod(out, NULL) == strtod(want, NULL));
    }
}

/* The fast path for up to two digits prints exactly what the slow path,
 * all snprintf and strtod, prints. */
static void test_reals_as_before(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 20261202, 7);
    char got[32], want[32];
    for (int i = 0; i < 400000; i++) {
        double x;
        uint32_t kind = vat_rng_below(&r, 6);
        int64_t k = (int64_t)vat_rng_u32(&r) << 8;
        k |= vat_rng_below(&r, 256);
        switch (kind) {
        case 0: x = (double)(k % 100000000) / 100.0; break;     /* money */
        case 1: x = (double)(k % 1000000) / 10.0; break;        /* one digit */
        case 2: x = (double)k / 1000.0; break;                  /* three digits */
        case 3: x = (double)(k % 1000) / 7.0; break;            /* a mean */
        case 4: x = ldexp((double)k, (int)vat_rng_below(&r, 90) - 60); break; /* any scale */
        default: x = (double)k * 10000.0 + 0.5; break;          /* near the cutoff */
        }
        if (vat_rng_below(&r, 2))
            x = -x;
        if (x == 0)
            continue;
        vat_fmt_real_by_printf(x, want);
        vat_fmt_real(x, got);
        if (strcmp(got, want) != 0)
            fail_msg("%.17g: got %s, want %s", x, got, want);
    }
    static const double edges[] = {0.005, 0.015, 0.995, 1e12 - 0.01, 999999999999.99, 1e-4,
                                   0.00015, 0.045, 2.675, 1.005, 0.5, 0.05, 9.995, 99.995};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        for (int sign = -1; sign <= 1; sign += 2) {
            vat_fmt_real_by_printf(sign * edges[i], want);
            vat_fmt_real(sign * edges[i], got);
            assert_string_equal(got, want);
        }
}

/* From one digit up (as rendered SQL shows reals: "10.0"), the fixed-point
 * search gives what snprintf and strtod alone give, zero and the values
 * with no short text included. */
static void test_fixed_from_one_digit(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 20261202, 11);
    for (int i = 0; i < 200000; i++) {
        double x;
        uint32_t kind = vat_rng_below(&r, 4);
        int64_t k = (int64_t)vat_rng_u32(&r);
        switch (kind) {
        case 0: x = (double)(k % 100000000) / 100.0; break;
        case 1: x = (double)(k % 100000) / 10.0; break;
        case 2: x = (double)(k % 1000) / 7.0; break;
        default: x = ldexp((double)k, (int)vat_rng_below(&r, 80) - 60); break;
        }
        if (vat_rng_below(&r, 2))
            x = -x;
        if (i < 2)
            x = i ? -0.0 : 0.0;
        char got[64], want[64];
        bool found = false;
        for (int prec = 1; prec <= 20 && !found; prec++) {
            snprintf(want, sizeof want, "%.*f", prec, x);
            found = strtod(want, NULL) == x;
        }
        assert_int_equal(vat_fmt_fixed(x, 1, 20, got, sizeof got), found);
        if (strcmp(got, want) != 0)
            fail_msg("%.17g: got %s, want %s", x, got, want);
    }
}

/* Appends the JSON escape of byte c as the writer must print it. */
static void expect_escaped(struct vat_buf *b, unsigned char c)
{
    static const char *const named[] = {['"'] = "\\\"", ['\\'] = "\\\\", ['\n'] = "\\n",
                                         ['\r'] = "\\r", ['\t'] = "\\t", ['\b'] = "\\b",
                                         ['\f'] = "\\f"};
    if (c < sizeof named / sizeof named[0] && named[c])
        vat_buf_puts(b, named[c]);
    else if (c < 0x20 || c == 0x7f)
        vat_buf_printf(b, "\\u%04x", c);
    else
        vat_buf_putc(b, (char)c);
}

/* Strings escaped eight bytes at a time: every byte from 1 to 0x7f, at
 * every offset of strings up to 24 bytes long, among plain letters and
 * among non-ASCII text, comes out as the byte-by-byte rule says. */
static void test_json_escapes_every_offset(void **state)
{
    (void)state;
    for (int filler = 0; filler < 2; filler++)
        for (size_t len = 1; len <= 24; len++)
            for (size_t pos = 0; pos < len; pos++)
                for (unsigned c = 1; c < 0x80; c++) {
                    char text[32];
                    struct vat_buf want = VAT_BUF_INIT;
                    vat_buf_putc(&want, '"');
                    for (size_t i = 0; i < len;) {
                        if (i == pos) {
                            text[i++] = (char)c;
                            expect_escaped(&want, (unsigned char)c);
                        } else if (filler && i + 1 < len && i + 1 != pos) {
                            text[i++] = (char)0xc3; /* e acute, two bytes */
                            text[i++] = (char)0xa9;
                            vat_buf_puts(&want, "\xc3\xa9");
                        } else {
                            text[i++] = 'q';
                            vat_buf_putc(&want, 'q');
                        }
                    }
                    vat_buf_putc(&want, '"');
                    json_t *str = json_stringn(text, len);
                    assert_non_null(str);
                    char *got = vat_json_dumps(str);
                    if (strcmp(got, want.data) != 0)
                        fail_msg("byte 0x%02x at %zu of %zu: got %s, want %s", c, pos, len, got,
                                 want.data);
                    free(got);
                    json_decref(str);
                    vat_buf_release(&want);
                }
}

static void test_json_text_is_fixed(void **state)
{
    (void)state;
    json_t *o = json_object();
    json_object_set_new(o, "z", json_integer(1));
    json_object_set_new(o, "a", json_real(0.5));
    json_object_set_new(o, "s", json_string("q\"\\\n\x01é"));
    json_object_set_new(o, "l", json_pack("[bbn]", 1, 0));
    char *s = vat_json_dumps(o);
    assert_string_equal(s, "{\"z\":1,\"a\":0.5,\"s\":\"q\\\"\\\\\\n\\u0001é\",\"l\":[true,false,null]}");
    json_t *back = json_loads(s, 0, NULL);
    assert_true(json_equal(back, o));
    json_decref(back);
    free(s);
    json_decref(o);
}

static void test_json_members(void **state)
{
    (void)state;
    static const char *const keys[] = {"template", "difficulty", "ok", "tags"};
    json_t *m[4];
    /* the prompt holds a look-alike member, quotes and braces */
    const char *row = "{\"prompt\":\"say \\\"template\\\":\\\"no\\\" {[\",\"nested\":{\"template\":"
                      "\"inner\",\"a\":[1,{\"b\":\"}\"}]},\"template\":\"grouped_sum\", "
                      "\"difficulty\" : 3,\"ok\":true,\"tags\":[\"x\",\"y\"]}\n";
    assert_int_equal(vat_json_members(row, strlen(row), keys, 4, m), 0);
    assert_string_equal(json_string_value(m[0]), "grouped_sum");
    assert_int_equal(json_integer_value(m[1]), 3);
    assert_true(json_is_true(m[2]));
    assert_int_equal(json_array_size(m[3]), 2);
    for (int k = 0; k < 4; k++)
        json_decref(m[k]);
    /* absent members are NULL; the same answers as a whole parse */
    const char *some = "{\"difficulty\":null,\"x\":-1.5e3}";
    assert_int_equal(vat_json_members(some, strlen(some), keys, 4, m), 0);
    assert_null(m[0]);
    assert_true(json_is_null(m[1]));
    assert_null(m[2]);
    json_decref(m[1]);
    assert_int_equal(vat_json_members("{}", 2, keys, 4, m), 0);
    assert_null(m[0]);
    /* long strings, stepped over a word at a time: an escaped quote or
     * backslash at every offset of a word, and a string ending at each */
    for (int k = 0; k < 24; k++) {
        struct vat_buf b = VAT_BUF_INIT;
        vat_buf_puts(&b, "{\"prompt\":\"");
        for (int j = 0; j < k; j++)
            vat_buf_putc(&b, 'a' + j % 26);
        vat_buf_puts(&b, k % 2 ? "\\\"template\\\":\\\"no\\\"" : "\\\\");
        for (int j = 0; j < 40 - k; j++)
            vat_buf_putc(&b, 'z');
        vat_buf_puts(&b, "\",\"template\":\"t\",\"ok\":\"");
        for (int j = 0; j < k; j++)
            vat_buf_putc(&b, 'q');
        vat_buf_puts(&b, "\"}");
        assert_int_equal(vat_json_members(b.data, b.len, keys, 4, m), 0);
        assert_string_equal(json_string_value(m[0]), "t");
        assert_int_equal(json_string_length(m[2]), (size_t)k);
        for (int i = 0; i < 4; i++)
            json_decref(m[i]);
        /* cut short inside the last string: unterminated */
        assert_int_equal(vat_json_members(b.data, b.len - 2, keys, 4, m), -1);
        vat_buf_release(&b);
    }
    /* not one object: refused, nothing returned */
    static const char *const bad[] = {"", "[]", "{\"template\":\"a\"", "{\"template\":\"a\"}x",
                                      "{\"template\":\"unterminated}", "{\"template\" \"a\"}",
                                      "{\"template\":}", "{\"ok\":tru,\"template\":\"a\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (vat_json_members(bad[i], strlen(bad[i]), keys, 4, m) != -1)
            fail_msg("'%s' was read", bad[i]);
        for (int k = 0; k < 4; k++)
            assert_null(m[k]);
    }
}

/* vat_fmt_int writes what snprintf's "%0*lld" writes: every width up to
 * 22, signs, the extremes and a spread of magnitudes. */
static void test_fmt_int(void **state)
{
    (void)state;
    long long v[2000];
    size_t n = 0;
    static const long long fixed[] = {0, 1, -1, 9, 10, -10, 999999, 1000000, -123456,
                                      INT64_MAX, INT64_MIN, INT64_MIN + 1};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        v[n++] = fixed[i];
    uint64_t x = 0x9E3779B97F4A7C15u;
    while (n < sizeof v / sizeof v[0]) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v[n] = (long long)(x >> (n % 63));
        n++;
    }
    for (size_t i = 0; i < n; i++)
        for (int w = 0; w <= 22; w++) {
            long long y = i % 2 || v[i] == INT64_MIN ? v[i] : -v[i];
            char want[48], got[48];
            snprintf(want, sizeof want, "%0*lld", w, y);
            assert_string_equal(vat_fmt_int(y, w, got), want);
        }
}

/* The row writer gives the text vat_json_dump_buf gives for the jansson
 * object the same calls build, members jansson would not make left out
 * alike: NULL and non-UTF-8 strings (a stray continuation byte, an
 * overlong, a surrogate, past U+10FFFF, a cut sequence), non-finite
 * reals, NULL values. */
static void test_row_writer(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "plain", "", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "quote \" back \\ nl \n tab \t",
        "ctl \x01\x1f\x7f", "stray \x80", "overlong \xc0\xaf", "surrogate \xed\xa0\x80",
        "past \xf4\x90\x80\x80", "cut \xe2\x82", NULL,
    };
    static const double reals[] = {0.5, -0.0, 1e300, 12.0, NAN, INFINITY};
    static const long long ints[] = {0, -1, 42, INT64_MAX, INT64_MIN};
    /* a long string twice (the escaped-text cache), then a different one */
    char long_a[1200], long_b[1200];
    for (size_t i = 0; i < sizeof long_a - 1; i++) {
        long_a[i] = i % 97 == 0 ? '"' : (char)('a' + i % 26);
        long_b[i] = i % 89 == 0 ? '\n' : (char)('A' + i % 26);
    }
    long_a[sizeof long_a - 1] = long_b[sizeof long_b - 1] = 0;

    json_t *o = json_object();
    struct vat_buf got = VAT_BUF_INIT;
    struct vat_jw w;
    vat_jw_begin(&w, &got);
    char key[32];
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        snprintf(key, sizeof key, "s%zu", i);
        json_object_set_new(o, key, texts[i] ? json_string(texts[i]) : NULL);
        vat_jw_string(&w, key, texts[i]);
        snprintf(key, sizeof key, "f%zu", i);
        json_object_set_new(o, key, json_sprintf("<%s>", texts[i] ? texts[i] : "-"));
        vat_jw_stringf(&w, key, "<%s>", texts[i] ? texts[i] : "-");
    }
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        snprintf(key, sizeof key, "r%zu", i);
        json_object_set_new(o, key, json_real(reals[i]));
        vat_jw_real(&w, key, reals[i]);
    }
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        snprintf(key, sizeof key, "i%zu", i);
        json_object_set_new(o, key, json_integer(ints[i]));
        vat_jw_int(&w, key, ints[i]);
    }
    json_object_set_new(o, "t", json_true());
    vat_jw_bool(&w, "t", true);
    json_object_set_new(o, "long1", json_string(long_a));
    vat_jw_string(&w, "long1", long_a);
    json_object_set_new(o, "long2", json_string(long_a));
    vat_jw_string(&w, "long2", long_a);
    json_object_set_new(o, "long3", json_string(long_b));
    vat_jw_string(&w, "long3", long_b);
    /* nesting: an array of objects, an array of strings, an empty array,
     * a value and a value's text */
    json_t *arr = json_array(), *m = json_object();
    json_object_set_new(m, "role", json_string("user"));
    json_object_set_new(m, "content", json_string("stray \x80"));
    json_array_append_new(arr, m);
    json_array_append_new(arr, json_string("x"));
    json_array_append_new(arr, json_string("cut \xe2\x82"));
    json_array_append_new(arr, json_array());
    json_object_set_new(o, "list", arr);
    vat_jw_array(&w, "list");
    vat_jw_object(&w, NULL);
    vat_jw_string(&w, "role", "user");
    vat_jw_string(&w, "content", "stray \x80");
    vat_jw_end(&w);
    vat_jw_string(&w, NULL, "x");
    vat_jw_string(&w, NULL, "cut \xe2\x82");
    vat_jw_array(&w, NULL);
    vat_jw_end(&w);
    vat_jw_end(&w);
    json_t *v = json_pack("{s:[i,f,s],s:{}}", "a", 1, 2.5, "b\"", "c");
    json_object_set(o, "value", v);
    vat_jw_value(&w, "value", v);
    vat_jw_value(&w, "none", NULL);
    char *vt = vat_json_dumps(v);
    json_object_set_new(o, "text", json_string(vt));
    free(vt);
    vat_jw_text(&w, "text", v);
    vat_jw_end(&w);
    char *want = vat_json_dumps(o);
    assert_int_equal(got.len, strlen(want));
    assert_memory_equal(got.data, want, got.len);
    free(want);
    vat_buf_release(&got);
    json_decref(v);
    json_decref(o);
}

static void test_atomic_write(void **state)
{
    (void)state;
    char *root = vat_test_tmpdir("core");
    struct vat_err e = {{0}};
    assert_int_equal(vat_write_file_atomic(root, "out/a/b.jsonl", "hello\n", 6, &e), 0);
    char *p = vat_path_join(root, "out/a/b.jsonl");
    size_t n;
    char *data = vat_test_read_file(p, &n);
    assert_string_equal(data, "hello\n");
    free(data);
    char *tmp = vat_xasprintf("%s.tmp", p);
    assert_null(vat_test_read_file(tmp, NULL));
    free(tmp);
    free(p);
    vat_test_rmtree(root);
    free(root);
}

/* vat_dirs_keep_across: a folder kept beneath the named root outlives the
 * bracket that opened it (a worker's stage folders, from task to task);
 * others, and all of them after across(NULL), are closed at the bracket's
 * end.  Seen by moving a folder away between brackets: a kept handle
 * still reaches the moved folder, a new walk makes the folder anew. */
static bool exists_in(const char *root, const char *rel)
{
    char *p = vat_path_join(root, rel);
    bool there = access(p, F_OK) == 0;
    free(p);
    return there;
}

static void write_in_bracket(const char *root, const char *rel)
{
    struct vat_err e = {{0}};
    vat_dirs_keep_begin();
    assert_int_equal(vat_write_file_atomic(root, rel, "x\n", 2, &e), 0);
    vat_dirs_keep_end();
}

static void move_away(const char *root, const char *from, const char *to)
{
    char *a = vat_path_join(root, from), *b = vat_path_join(root, to);
    assert_int_equal(rename(a, b), 0);
    free(a);
    free(b);
}

static void test_dirs_keep_across(void **state)
{
    (void)state;
    char *root = vat_test_tmpdir("across"), *other = vat_test_tmpdir("across2");
    vat_dirs_keep_across(root);
    write_in_bracket(root, "fixtures/t/a.csv");
    write_in_bracket(other, "fixtures/t/a.csv");
    move_away(root, "fixtures/t", "fixtures/m");
    move_away(other, "fixtures/t", "fixtures/m");
    write_in_bracket(root, "fixtures/t/b.csv");
    write_in_bracket(other, "fixtures/t/b.csv");
    assert_true(exists_in(root, "fixtures/m/b.csv")); /* kept across */
    assert_false(exists_in(root, "fixtures/t/b.csv"));
    assert_true(exists_in(other, "fixtures/t/b.csv")); /* not kept: walked anew */
    assert_false(exists_in(other, "fixtures/m/b.csv"));
    vat_dirs_keep_across(NULL);
    write_in_bracket(root, "fixtures/t/c.csv");
    assert_true(exists_in(root, "fixtures/t/c.csv"));
    assert_false(exists_in(root, "fixtures/m/c.csv"));
    vat_test_rmtree(root);
    vat_test_rmtree(other);
    free(root);
    free(other);
}

/* The digests a build notes as it writes (vat_written_*) serve a file
 * only while it is the very file written: same path, inode, size and
 * times; and the manifest takes them instead of reading the file back. */
static bool found(const char *root, const char *rel, char sha[65])
{
    char *p = vat_path_join(root, rel);
    struct stat st;
    int rc = lstat(p, &st);
    free(p);
    assert_int_equal(rc, 0);
    struct vat_file_id id;
    vat_file_id_of(&st, &id);
    return vat_written_find(root, rel, &id, sha);
}

static void put_behind(const char *root, const char *rel, const char *text)
{
    /* another writer: a new file renamed over the path (a new inode) */
    char *p = vat_path_join(root, rel);
    char *t = vat_xasprintf("%s.other", p);
    FILE *f = fopen(t, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rename(t, p), 0);
    free(t);
    free(p);
}

static void test_written_notes(void **state)
{
    (void)state;
    char *root = vat_test_tmpdir("written");
    struct vat_err e = {{0}};
    char sha[65], want[65];
    /* not noting: nothing is found */
    assert_int_equal(vat_write_file_atomic(root, "fixtures/t/a.csv", "one\n", 4, &e), 0);
    assert_false(found(root, "fixtures/t/a.csv", sha));

    vat_written_begin(root);
    assert_true(vat_written_on(root));
    unsigned long hits = vat_written_hits();
    /* over an existing file (a temporary renamed) and a new one (O_EXCL, in a draw) */
    assert_int_equal(vat_write_file_atomic(root, "fixtures/t/a.csv", "two\n", 4, &e), 0);
    vat_file_memo_begin();
    assert_int_equal(vat_write_file_atomic(root, "fixtures/t/b.csv", "bee\n", 4, &e), 0);
    /* the memo keeps the digest for vat_file_sha256 */
    size_t mn = 0;
    assert_non_null(vat_file_memo_get(root, "fixtures/t/b.csv", "sha256", &mn));
    assert_int_equal(mn, 64);
    vat_file_memo_end();
    assert_true(found(root, "fixtures/t/a.csv", sha));
    vat_sha256_hex("two\n", 4, want);
    assert_string_equal(sha, want);
    assert_true(found(root, "fixtures/t/b.csv", sha));
    vat_sha256_hex("bee\n", 4, want);
    assert_string_equal(sha, want);
    assert_int_equal(vat_written_hits(), hits + 2);
    /* another spelling of the root is another root */
    char *slash = vat_xasprintf("%s/", root);
    assert_false(vat_written_on(slash));
    assert_false(found(slash, "fixtures/t/a.csv", sha));
    /* the same inode under another path (a hard link) is not served */
    char *pa = vat_path_join(root, "fixtures/t/a.csv"), *pc = vat_path_join(root, "fixtures/t/c.csv");
    assert_int_equal(link(pa, pc), 0);
    assert_false(found(root, "fixtures/t/c.csv", sha));
    /* replaced behind vat's back with as many bytes: a new inode, not served */
    put_behind(root, "fixtures/t/a.csv", "TWO\n");
    assert_false(found(root, "fixtures/t/a.csv", sha));
    /* a noted file rewritten in place with more bytes: not served */
    char *pb = vat_path_join(root, "fixtures/t/b.csv");
    FILE *f = fopen(pb, "w");
    fputs("longer\n", f);
    fclose(f);
    assert_false(found(root, "fixtures/t/b.csv", sha));
    assert_int_equal(vat_write_file_atomic(root, "fixtures/t/b.csv", "bee\n", 4, &e), 0);
    free(pb);
    /* written by vat again: served, with the new digest */
    assert_int_equal(vat_write_file_atomic(root, "fixtures/t/a.csv", "three\n", 6, &e), 0);
    assert_true(found(root, "fixtures/t/a.csv", sha));
    vat_sha256_hex("three\n", 6, want);
    assert_string_equal(sha, want);

    /* The manifest takes the notes and reads the rest: b.csv noted, c.csv
     * (the hard link) and out/x.jsonl (replaced behind vat) read. */
    assert_int_equal(vat_write_file_atomic(root, "out/x.jsonl", "{}\n", 3, &e), 0);
    put_behind(root, "out/x.jsonl", "[]\n");
    hits = vat_written_hits();
    assert_int_equal(vat_manifest_write(root, &e), 0);
    assert_int_equal(vat_written_hits(), hits + 2); /* a.csv and b.csv */
    json_t *m = vat_manifest_load(root, &e);
    assert_non_null(m);
    struct vat_tree_entry *t;
    size_t n;
    assert_int_equal(vat_tree_list(root, &t, &n, &e), 0);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(vat_sha256_beneath(root, t[i].rel, sha, &e), 0);
        assert_string_equal(vat_manifest_sha(m, t[i].rel), sha);
    }
    vat_tree_free(t, n);
    json_decref(m);

    /* The rule itself, on one identity: every part of it counts, and the
     * path too (an inode number freed and reused by another file). */
    struct vat_file_id id = {.dev = 7, .ino = 42, .size = 10, .mtim_s = 1000, .ctim_s = 1000};
    unsigned char d[32] = {0xab};
    vat_written_note(root, "fixtures/t/id.csv", &id, d);
    assert_true(vat_written_find(root, "fixtures/t/id.csv", &id, sha));
    assert_string_equal(sha, "ab00000000000000000000000000000000000000000000000000000000000000");
    assert_false(vat_written_find(root, "fixtures/t/other.csv", &id, sha));
    struct vat_file_id x = id;
    x.ino = 43;
    assert_false(vat_written_find(root, "fixtures/t/id.csv", &x, sha));
    x = id;
    x.dev = 8;
    assert_false(vat_written_find(root, "fixtures/t/id.csv", &x, sha));
    x = id;
    x.size = 11;
    assert_false(vat_written_find(root, "fixtures/t/id.csv", &x, sha));
    x = id;
    x.mtim_ns = 1;
    assert_false(vat_written_find(root, "fixtures/t/id.csv", &x, sha));
    x = id;
    x.ctim_s = 1001;
    assert_false(vat_written_find(root, "fixtures/t/id.csv", &x, sha));
    /* many notes, added after lookups sorted the array, are all found */
    for (int i = 0; i < 3000; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "fixtures/g/%d.csv", i);
        x = id;
        x.ino = (uint64_t)(1000 + i);
        d[1] = (unsigned char)i;
        vat_written_note(root, rel, &x, d);
    }
    for (int i = 0; i < 3000; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "fixtures/g/%d.csv", i);
        x = id;
        x.ino = (uint64_t)(1000 + i);
        assert_true(vat_written_find(root, rel, &x, sha));
        char hx[3];
        snprintf(hx, sizeof hx, "%02x", i & 0xff);
        assert_memory_equal(sha + 2, hx, 2);
    }
    assert_true(vat_written_find(root, "fixtures/t/id.csv", &id, sha));

    vat_written_end();
    assert_false(vat_written_on(root));
    assert_false(found(root, "fixtures/t/b.csv", sha));
    free(pa);
    free(pc);
    free(slash);
    vat_test_rmtree(root);
    free(root);
}

/* Reads of a file during a task's draw come from the memo, and a write
 * of the same path is seen; outside the memo a read is of the disk. */
static void read_is(const char *root, const char *rel, const char *want)
{
    char *data = NULL;
    size_t n = 0;
    struct vat_err e = {{0}};
    assert_int_equal(vat_read_file_beneath(root, rel, 100, &data, &n, &e), 0);
    assert_int_equal(n, strlen(want));
    assert_string_equal(data, want);
    free(data);
}

static void test_file_memo(void **state)
{
    (void)state;
    char *root = vat_test_tmpdir("memo");
    struct vat_err e = {{0}};
    assert_int_equal(vat_write_file_atomic(root, "fixtures/t/a.csv", "one\n", 4, &e), 0);
    char *p = vat_path_join(root, "fixtures/t/a.csv");
    size_t n;
    vat_file_memo_begin();
    read_is(root, "fixtures/t/a.csv", "one\n");
    /* changed behind the memo's back: the draw keeps what it first read */
    FILE *f = fopen(p, "w");
    fputs("two\n", f);
    fclose(f);
    read_is(root, "fixtures/t/a.csv", "one\n");
    assert_non_null(vat_file_memo_get(root, "fixtures/t/a.csv", NULL, &n));
    /* derived entries go with their file */
    vat_file_memo_put(root, "fixtures/t/a.csv", "image", "IMG", 3);
    assert_non_null(vat_file_memo_get(root, "fixtures/t/a.csv", "image", &n));
    assert_int_equal(n, 3);
    /* a write through vat replaces it: the next read is of the new file */
    assert_int_equal(vat_write_file_atomic(root, "fixtures/t/a.csv", "three\n", 6, &e), 0);
    assert_null(vat_file_memo_get(root, "fixtures/t/a.csv", NULL, &n));
    assert_null(vat_file_memo_get(root, "fixtures/t/a.csv", "image", &n));
    read_is(root, "fixtures/t/a.csv", "three\n");
    /* a file over the cap is refused from the memo as from the disk */
    char *big = NULL;
    size_t bn = 0;
    assert_int_equal(vat_read_file_beneath(root, "fixtures/t/a.csv", 2, &big, &bn, &e), -1);
    assert_null(big);
    vat_file_memo_end();
    f = fopen(p, "w");
    fputs("four\n", f);
    fclose(f);
    read_is(root, "fixtures/t/a.csv", "four\n");
    assert_null(vat_file_memo_get(root, "fixtures/t/a.csv", NULL, &n));
    free(p);
    vat_test_rmtree(root);
    free(root);
}

/* During a draw (the memo on; the root is a build's stage) a new file is
 * created as itself: a directory squatting on its temporary name does not
 * stop it.  A file already there is replaced through the temporary, which
 * that directory then blocks; a symbolic link is refused, its target
 * untouched; a write that fails leaves no file behind. */
static void test_write_in_draw(void **state)
{
    (void)state;
    char *root = vat_test_tmpdir("draww");
    struct vat_err e = {{0}};
    assert_int_equal(vat_mkdirs_for(root, "f/t/a.csv.tmp/x", &e), 0);
    vat_file_memo_begin();
    assert_int_equal(vat_write_file_atomic(root, "f/t/a.csv", "one\n", 4, &e), 0);
    read_is(root, "f/t/a.csv", "one\n");
    assert_int_equal(vat_write_file_atomic(root, "f/t/a.csv", "two\n", 4, &e), -1);
    assert_non_null(strstr(e.msg, "a.csv.tmp"));
    vat_file_memo_end();
    read_is(root, "f/t/a.csv", "one\n");

    char *target = vat_path_join(root, "target");
    char *link = vat_path_join(root, "f/t/l.csv");
    FILE *f = fopen(target, "w");
    fputs("keep\n", f);
    fclose(f);
    assert_int_equal(symlink(target, link), 0);
    vat_file_memo_begin();
    assert_int_equal(vat_write_file_atomic(root, "f/t/l.csv", "evil\n", 5, &e), -1);
    assert_non_null(strstr(e.msg, "symbolic link"));
    vat_file_memo_end();
    read_is(root, "target", "keep\n");

    /* a file size limit makes the write fail part way */
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 4096;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    static char big[8192];
    memset(big, 'x', sizeof big);
    vat_file_memo_begin();
    int rc = vat_write_file_atomic(root, "f/t/big.csv", big, sizeof big, &e);
    vat_file_memo_end();
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, prev);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(e.msg, "cannot write 'f/t/big.csv'"));
    char *bigp = vat_path_join(root, "f/t/big.csv");
    struct stat st;
    assert_int_equal(lstat(bigp, &st), -1);
    free(bigp);
    free(target);
    free(link);
    vat_test_rmtree(root);
    free(root);
}

/* SHA-256 one-shot and incremental, against FIPS 180-2's published
 * vectors: one block, two blocks, and a million 'a's fed in uneven
 * pieces; every thread uses the same fetched method. */
static void *sha256_vectors(void *arg)
{
    (void)arg;
    static const char *const msg[2] = {
        "abc", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"};
    static const char *const hex[3] = {
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"};
    for (int i = 0; i < 2; i++) {
        char out[65];
        vat_sha256_hex(msg[i], strlen(msg[i]), out);
        if (strcmp(out, hex[i]) != 0)
            return (void *)1;
        unsigned char d[32];
        struct vat_sha256 *h = vat_sha256_begin();
        for (const char *p = msg[i]; *p; p++)
            vat_sha256_add(h, p, 1);
        vat_sha256_end(h, d);
        vat_hex(d, 32, out);
        if (strcmp(out, hex[i]) != 0)
            return (void *)1;
    }
    char a[1000];
    memset(a, 'a', sizeof a);
    struct vat_sha256 *h = vat_sha256_begin();
    size_t fed = 0;
    for (size_t k = 1; fed < 1000000; k = k % 997 + 1) {
        size_t take = 1000000 - fed < k ? 1000000 - fed : k;
        vat_sha256_add(h, a, take);
        fed += take;
    }
    unsigned char d[32];
    char out[65];
    vat_sha256_end(h, d);
    vat_hex(d, 32, out);
    return strcmp(out, hex[2]) == 0 ? NULL : (void *)1;
}

/* The folder rule (vat_task_fixture_relpath) at every task index up to
 * 999,999: no folder below fixtures/ holds more than 10,000 entries, the
 * most a dataset hub takes in one folder.  A task writes at most
 * VAT_MAX_FIXTURES files, all in one folder; the folders of a template
 * are its buckets; fixtures/ holds one folder per template. */
static void test_fixture_folders_stay_small(void **state)
{
    (void)state;
    enum { LIMIT = 10000, LAST = 999999 };
    size_t templates = 0;
    for (size_t i = 0; vat_registry[i]; i++)
        templates++;
    assert_true(templates <= LIMIT);
    struct vat_task t;
    vat_task_init(&t, vat_registry[0], 0, "unused");
    char *folder = NULL;
    long in_folder = 0, most = 0, buckets = 0;
    for (uint32_t i = 0; i <= LAST; i++) {
        t.index = i;
        snprintf(t.id, sizeof t.id, "%s-%05u", t.tmpl->name, (unsigned)i);
        char *rel = vat_task_fixture_relpath(&t, ".v7.sqlite");
        char *slash = strrchr(rel, '/');
        assert_non_null(slash);
        *slash = 0;
        /* the folder depends on the index alone and never comes back */
        if (!folder || strcmp(folder, rel) != 0) {
            assert_true(!folder || strcmp(folder, rel) < 0);
            free(folder);
            folder = vat_xstrdup(rel);
            in_folder = 0;
            buckets++;
        }
        in_folder += VAT_MAX_FIXTURES;
        if (in_folder > most)
            most = in_folder;
        free(rel);
    }
    assert_true(most <= LIMIT);
    assert_true(buckets <= LIMIT);
    /* the last task's folder is fixtures/<template>/999 */
    char want[128];
    snprintf(want, sizeof want, "fixtures/%s/999", vat_registry[0]->name);
    assert_string_equal(folder, want);
    print_message("fixture folders up to index %d: at most %ld entries in a folder, %ld folders "
                  "per template, %zu templates\n",
                  LAST, most, buckets, templates);
    free(folder);
    vat_task_clear(&t);
}

static void test_sha256_vectors(void **state)
{
    (void)state;
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, sha256_vectors, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *bad = (void *)1;
        assert_int_equal(pthread_join(th[i], &bad), 0);
        assert_null(bad);
    }
    assert_null(sha256_vectors(NULL));
}

/* A fixture's digest: of the file as read, kept in the draw's memo so a
 * second reader gets it without hashing, gone with the file's bytes when
 * vat rewrites it, and read from the disk each time outside a draw. */
static void test_file_sha256(void **state)
{
    (void)state;
    char *root = vat_test_tmpdir("sha");
    struct vat_err e = {{0}};
    /* sha256("abc") and sha256("abcd"), the published values */
    static const char abc[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    static const char abcd[] = "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589";
    assert_int_equal(vat_write_file_atomic(root, "fixtures/t/a.csv", "abc", 3, &e), 0);
    char out[65];
    assert_int_equal(vat_file_sha256(root, "fixtures/t/a.csv", NULL, 0, out, &e), 0);
    assert_string_equal(out, abc);
    /* the bytes given are hashed as they are */
    assert_int_equal(vat_file_sha256(root, "fixtures/t/a.csv", "abcd", 4, out, &e), 0);
    assert_string_equal(out, abcd);

    vat_file_memo_begin();
    assert_int_equal(vat_file_sha256(root, "fixtures/t/a.csv", NULL, 0, out, &e), 0);
    assert_string_equal(out, abc);
    size_t n;
    const char *kept = vat_file_memo_get(root, "fixtures/t/a.csv", "sha256", &n);
    assert_non_null(kept);
    assert_int_equal(n, 64);
    /* a later reader within the draw is handed the kept digest, not a new
     * hash of what it passes */
    assert_int_equal(vat_file_sha256(root, "fixtures/t/a.csv", "abcd", 4, out, &e), 0);
    assert_string_equal(out, abc);
    /* rewritten through vat: the digest goes with the bytes */
    assert_int_equal(vat_write_file_atomic(root, "fixtures/t/a.csv", "abcd", 4, &e), 0);
    assert_null(vat_file_memo_get(root, "fixtures/t/a.csv", "sha256", &n));
    assert_int_equal(vat_file_sha256(root, "fixtures/t/a.csv", NULL, 0, out, &e), 0);
    assert_string_equal(out, abcd);
    /* a missing file is an error, with nothing kept */
    assert_int_equal(vat_file_sha256(root, "fixtures/t/none.csv", NULL, 0, out, &e), -1);
    assert_null(vat_file_memo_get(root, "fixtures/t/none.csv", "sha256", &n));
    vat_file_memo_end();

    /* outside a draw each call reads the disk as it is */
    assert_int_equal(vat_write_file_atomic(root, "fixtures/t/a.csv", "abc", 3, &e), 0);
    assert_int_equal(vat_file_sha256(root, "fixtures/t/a.csv", NULL, 0, out, &e), 0);
    assert_string_equal(out, abc);
    vat_test_rmtree(root);
    free(root);
}

static void test_split_is_stable_and_proportional(void **state)
{
    (void)state;
    static const char *const names[] = {"grouped_sum", "regex_iso_dates", "sql_paid_revenue"};
    for (size_t k = 0; k < 3; k++) {
        for (double f = 0.1; f < 0.95; f += 0.15) {
            long test = 0;
            for (uint32_t i = 0; i < 1000; i++) {
                test += vat_split_is_test("salt", f, names[k], i);
                /* Any prefix holds floor or ceil of n*f test tasks. */
                double want = (double)(i + 1) * f;
                assert_true((double)test >= floor(want) - 1e-9 && (double)test <= ceil(want) + 1e-9);
            }
        }
    }
    /* The side depends on nothing but (salt, fraction, template, index). */
    for (uint32_t i = 0; i < 100; i++)
        assert_int_equal(vat_split_is_test("s", 0.2, "grouped_sum", i),
                         vat_split_is_test("s", 0.2, "grouped_sum", i));
}

static void test_strength_target_config(void **state)
{
    (void)state;
    struct vat_config c;
    struct vat_err e = {{0}};
    static const char ok[] = "[corpus]\nmaster_seed = 1\n";
    assert_int_equal(vat_config_parse(&c, ok, strlen(ok), "s.toml", &e), 0);
    assert_true(c.strength_target == 0.9);
    vat_config_release(&c);
    static const char bad[] = "[corpus]\nstrength_target = 1.5\n";
    assert_int_equal(vat_config_parse(&c, bad, strlen(bad), "s.toml", &e), -1);
    assert_string_equal(e.msg, "s.toml:2: 'corpus.strength_target' must be between 0 and 1");
}

/* Admission refuses a program task whose cases cannot tell gold from
 * enough of its mutants, and says why; weak cases measure as weak. */
static void test_strength_gates_admission(void **state)
{
    (void)state;
    const struct vat_template *tm = vat_template_find("regex_order_ids");
    assert_non_null(tm);
    char *root = vat_test_tmpdir("strength");
    json_t *cfg = vat_template_default_params(tm);
    struct vat_draw_opts o = {.master_seed = 5, .cfg = cfg, .inline_max_bytes = 6000,
                              .strength_target = 0.9};
    struct vat_task t;
    struct vat_replay r;
    struct vat_err e = {{0}};
    vat_task_init(&t, tm, 0, root);
    assert_int_equal(vat_task_draw(&t, 0, &o, &r, &e), 0);

    /* A target no task can reach: the same draw is refused, with the measure. */
    o.strength_target = 1.01;
    assert_int_equal(vat_task_draw(&t, 0, &o, &r, &e), -1);
    assert_non_null(strstr(e.msg, "gold mutants"));

    /* Cases that show nothing (one line without any id) kill almost nothing. */
    o.strength_target = 0.9;
    assert_int_equal(vat_task_draw(&t, 0, &o, &r, &e), 0);
    json_t *cases = json_pack("[{s:s, s:[], s:b}]", "text", "nothing to see here", "expected",
                              "heldout", 1);
    json_object_set_new(t.spec, "cases", cases);
    struct vat_strength s = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task(&t, &s), 0);
    assert_true(s.killed + s.survivors > 0);
    assert_true(vat_strength_share(&s) < 0.5);
    vat_strength_release(&s);

    vat_task_clear(&t);
    json_decref(cfg);
    vat_test_rmtree(root);
    free(root);
}


/* A checker_limit verdict (a last-resort net of the
 * checker, not the answer) anywhere in a draw is fatal, never a silent
 * rejection, and a mutant it stops is not counted as killed. */
static const struct vat_template *limit_real;
static int limit_on; /* 1: the trap's check hits the net; 2: every non-gold check does */

static struct vat_verdict limit_check(const struct vat_task *t, const char *answer, size_t len)
{
    bool gold = t->gold && strcmp(answer, t->gold) == 0;
    bool trap = t->trap && strcmp(answer, t->trap) == 0;
    if ((limit_on == 1 && trap) || (limit_on == 2 && !gold))
        return vat_verdict_make(true, 0, VAT_CHECKER_LIMIT, "net hit (test)");
    return limit_real->check(t, answer, len);
}

static void test_checker_limit_is_fatal(void **state)
{
    (void)state;
    limit_real = vat_template_find("regex_order_ids");
    assert_non_null(limit_real);
    struct vat_template tm = *limit_real;
    tm.check = limit_check;
    char *root = vat_test_tmpdir("climit");
    json_t *cfg = vat_template_default_params(&tm);
    struct vat_draw_opts o = {.master_seed = 5, .cfg = cfg, .inline_max_bytes = 6000,
                              .strength_target = 0.9};
    struct vat_task t;
    struct vat_replay r;
    struct vat_err e = {{0}};
    vat_task_init(&t, &tm, 3, root);
    limit_on = 0;
    assert_int_equal(vat_task_draw(&t, 0, &o, &r, &e), 0);
    limit_on = 1;
    assert_int_equal(vat_task_draw(&t, 0, &o, &r, &e), VAT_DRAW_FATAL);
    assert_non_null(strstr(e.msg, t.id));
    assert_non_null(strstr(e.msg, "checker_limit"));
    /* Strength: the mutants the net stops make the task unmeasured. */
    limit_on = 0;
    assert_int_equal(vat_task_draw(&t, 0, &o, &r, &e), 0);
    limit_on = 2;
    struct vat_strength s = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task(&t, &s), -1);
    assert_non_null(strstr(s.error, "checker_limit"));
    vat_strength_release(&s);
    limit_on = 0;
    vat_task_clear(&t);
    json_decref(cfg);
    vat_test_rmtree(root);
    free(root);
}

/* The two sides cut every string in halves: each string is owned by
 * exactly one side, about half by each, pinned so that a change of the
 * hash (which would move every drawn line and row id) shows here. */
static void test_side_halves(void **state)
{
    (void)state;
    const char *pinned[] = {"", "a", "PAY-0420728",
                            "thabo: still waiting on a reply about my refund since 03:58:54"};
    const int owner[] = {VAT_SPLIT_TRAIN, VAT_SPLIT_TEST, VAT_SPLIT_TEST, VAT_SPLIT_TEST};
    for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; i++) {
        size_t n = strlen(pinned[i]);
        assert_true(vat_side_owns(owner[i], pinned[i], n));
        assert_false(vat_side_owns(!owner[i], pinned[i], n));
    }
    long test = 0;
    char b[32];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(b, sizeof b, "x%d", i);
        bool t = vat_side_owns(VAT_SPLIT_TEST, b, (size_t)n);
        assert_true(t != vat_side_owns(VAT_SPLIT_TRAIN, b, (size_t)n));
        test += t;
    }
    assert_true(test > 49000 && test < 51000);
    /* ids: the first owned one from the given one on, as "%0*ld" writes it */
    assert_int_equal(vat_side_next_id(VAT_SPLIT_TEST, "PAY-", 7, 420728), 420728);
    assert_int_equal(vat_side_next_id(VAT_SPLIT_TRAIN, "PAY-", 7, 420728), 420729);
    for (int side = 0; side < VAT_N_SPLITS; side++) {
        long id = 5;
        for (int k = 0; k < 200; k++) {
            long next = vat_side_next_id(side, "S-", 3, id);
            assert_true(next >= id);
            int n = snprintf(b, sizeof b, "S-%03ld", next);
            assert_true(vat_side_owns(side, b, (size_t)n));
            for (long skipped = id; skipped < next; skipped++) {
                n = snprintf(b, sizeof b, "S-%03ld", skipped);
                assert_false(vat_side_owns(side, b, (size_t)n));
            }
            id = next + 1;
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_safety),
        cmocka_unit_test(test_fixture_folders_stay_small),
        cmocka_unit_test(test_side_halves),
        cmocka_unit_test(test_shortest_reals),
        cmocka_unit_test(test_reals_as_before),
        cmocka_unit_test(test_fixed_from_one_digit),
        cmocka_unit_test(test_json_text_is_fixed),
        cmocka_unit_test(test_json_escapes_every_offset),
        cmocka_unit_test(test_json_members),
        cmocka_unit_test(test_row_writer),
        cmocka_unit_test(test_fmt_int),
        cmocka_unit_test(test_atomic_write),
        cmocka_unit_test(test_write_in_draw),
        cmocka_unit_test(test_file_memo),
        cmocka_unit_test(test_written_notes),
        cmocka_unit_test(test_dirs_keep_across),
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_file_sha256),
        cmocka_unit_test(test_split_is_stable_and_proportional),
        cmocka_unit_test(test_strength_target_config),
        cmocka_unit_test(test_strength_gates_admission),
        cmocka_unit_test(test_checker_limit_is_fatal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

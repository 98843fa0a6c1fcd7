/* test_values.c — word lists, realistic generators (people, companies,
 * customers, k distinct values, sorted days, dirty labels), label
 * normalisation, civil dates, timestamps and months, and money in cents
 * (generators/values.c). */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "values.h"

/* ---- word lists ---------------------------------------------------------- */

static const struct {
    const char *name;
    size_t min;
} lists[] = {
    {"first_name", 60}, {"last_name", 60},    {"region", 8},        {"product", 30}, {"team", 12},
    {"carrier", 8},     {"country", 25},      {"city", 30},         {"status", 7},   {"account", 8},
    {"category", 10},   {"company_head", 20}, {"company_tail", 16},
};
#define NLISTS (sizeof lists / sizeof lists[0])

static int in_list(const char *const *w, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(w[i], s) == 0)
            return 1;
    return 0;
}

static void test_word_lists_sizes_and_hygiene(void **state)
{
    (void)state;
    for (size_t k = 0; k < NLISTS; k++) {
        size_t n = 0;
        const char *const *w = vat_words(lists[k].name, &n);
        assert_non_null(w);
        if (n < lists[k].min)
            fail_msg("list '%s' has %zu words, wants %zu", lists[k].name, n, lists[k].min);
        for (size_t i = 0; i < n; i++) {
            size_t len = strlen(w[i]);
            assert_true(len > 0);
            /* Bare CSV cells: no comma, quote, edge blank or non-ASCII. */
            assert_null(strpbrk(w[i], ",\"\r\n\t"));
            assert_true(w[i][0] != ' ' && w[i][len - 1] != ' ');
            for (size_t j = 0; j < len; j++)
                assert_true((unsigned char)w[i][j] >= 0x20 && (unsigned char)w[i][j] < 0x7f);
            for (size_t j = i + 1; j < n; j++)
                if (strcmp(w[i], w[j]) == 0)
                    fail_msg("list '%s' repeats '%s'", lists[k].name, w[i]);
        }
    }
    size_t n = 99;
    assert_null(vat_words("no_such_list", &n));
    assert_int_equal(n, 0);
    size_t ns = 0;
    const char *const *st = vat_words("status", &ns);
    assert_true(in_list(st, ns, "paid"));
    assert_true(in_list(st, ns, "refunded"));
    assert_true(in_list(st, ns, "cancelled"));
}

static void test_distinct_picks(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 7, 7);
    for (size_t k = 0; k < NLISTS; k++) {
        size_t m = 0;
        const char *const *w = vat_words(lists[k].name, &m);
        const char *out[128];
        for (int round = 0; round < 50; round++) {
            size_t want = 1 + vat_rng_below(&r, (uint32_t)m);
            size_t got = vat_gen_distinct(&r, lists[k].name, out, want);
            assert_int_equal(got, want);
            for (size_t i = 0; i < got; i++) {
                assert_true(in_list(w, m, out[i]));
                for (size_t j = i + 1; j < got; j++)
                    assert_string_not_equal(out[i], out[j]);
            }
        }
        /* Asking for more than the list holds gives the whole list. */
        size_t got = vat_gen_distinct(&r, lists[k].name, out, m + 5);
        assert_int_equal(got, m);
        for (size_t i = 0; i < m; i++)
            assert_true(in_list(out, got, w[i]));
    }
    const char *out[4];
    assert_int_equal(vat_gen_distinct(&r, "nope", out, 4), 0);
}

static void test_distinct_is_uniform(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 8, 9);
    size_t m = 0;
    const char *const *w = vat_words("region", &m);
    long count[64] = {0};
    const int rounds = 20000;
    for (int k = 0; k < rounds; k++) {
        const char *out[3];
        vat_gen_distinct(&r, "region", out, 3);
        for (int i = 0; i < 3; i++)
            for (size_t j = 0; j < m; j++)
                count[j] += out[i] == w[j];
    }
    double expect = rounds * 3.0 / (double)m;
    for (size_t j = 0; j < m; j++)
        assert_true(count[j] > expect * 0.9 && count[j] < expect * 1.1);
}

static void test_person_and_company(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 1, 2);
    size_t nf, nl, nh, nt;
    const char *const *fw = vat_words("first_name", &nf);
    const char *const *lw = vat_words("last_name", &nl);
    const char *const *hw = vat_words("company_head", &nh);
    const char *const *tw = vat_words("company_tail", &nt);
    for (int i = 0; i < 200; i++) {
        char buf[128], first[64];
        vat_gen_person(&r, buf, sizeof buf);
        const char *sp = strchr(buf, ' ');
        assert_non_null(sp);
        snprintf(first, sizeof first, "%.*s", (int)(sp - buf), buf);
        assert_true(in_list(fw, nf, first));
        assert_true(in_list(lw, nl, sp + 1));

        vat_gen_company(&r, buf, sizeof buf);
        /* Heads may hold a space ("Blue Harbor"); tails never do. */
        const char *last = strrchr(buf, ' ');
        assert_non_null(last);
        assert_true(in_list(tw, nt, last + 1));
        snprintf(first, sizeof first, "%.*s", (int)(last - buf), buf);
        assert_true(in_list(hw, nh, first));
    }
    /* Same stream, same names; a tiny buffer is truncated, not overrun. */
    struct vat_rng a, b;
    vat_rng_seed(&a, 3, 3);
    vat_rng_seed(&b, 3, 3);
    char x[64], y[64], tiny[4];
    assert_string_equal(vat_gen_person(&a, x, sizeof x), vat_gen_person(&b, y, sizeof y));
    vat_gen_company(&a, tiny, sizeof tiny);
    assert_int_equal(strlen(tiny), 3);
}

static void test_customer_mix(void **state)
{
    (void)state;
    static const struct vat_customer_mix mix = {.last_first = 1, .company = 1, .person = 2};
    size_t nf, nl, nt;
    const char *const *fw = vat_words("first_name", &nf);
    const char *const *lw = vat_words("last_name", &nl);
    const char *const *tw = vat_words("company_tail", &nt);
    struct vat_rng r;
    vat_rng_seed(&r, 12, 34);
    int kind[3] = {0};
    for (int i = 0; i < 4000; i++) {
        char buf[96], a[64];
        vat_gen_customer(&r, &mix, buf, sizeof buf);
        const char *comma = strstr(buf, ", ");
        const char *sp = strrchr(buf, ' ');
        assert_non_null(sp);
        if (comma) {
            /* "Last, First" */
            snprintf(a, sizeof a, "%.*s", (int)(comma - buf), buf);
            assert_true(in_list(lw, nl, a));
            assert_true(in_list(fw, nf, comma + 2));
            kind[0]++;
        } else if (in_list(tw, nt, sp + 1)) {
            kind[1]++;
        } else {
            snprintf(a, sizeof a, "%.*s", (int)(sp - buf), buf);
            assert_true(in_list(fw, nf, a));
            assert_true(in_list(lw, nl, sp + 1));
            kind[2]++;
        }
    }
    /* Weights 1 : 1 : 2 of 4000. */
    assert_true(kind[0] > 850 && kind[0] < 1150);
    assert_true(kind[1] > 850 && kind[1] < 1150);
    assert_true(kind[2] > 1800 && kind[2] < 2200);

    /* The draws are one below(sum), then the chosen generator's own: the
     * sequence the templates drew before the helper existed. */
    struct vat_rng a, b;
    vat_rng_seed(&a, 5, 6);
    vat_rng_seed(&b, 5, 6);
    for (int i = 0; i < 500; i++) {
        char x[96], y[96];
        vat_gen_customer(&a, &mix, x, sizeof x);
        uint32_t k = vat_rng_below(&b, 4);
        if (k == 0) {
            const char *f = fw[vat_rng_below(&b, (uint32_t)nf)];
            snprintf(y, sizeof y, "%s, %s", lw[vat_rng_below(&b, (uint32_t)nl)], f);
        } else if (k == 1) {
            vat_gen_company(&b, y, sizeof y);
        } else {
            vat_gen_person(&b, y, sizeof y);
        }
        assert_string_equal(x, y);
    }
    /* A tiny buffer is cut, not overrun; no weight at all gives a person. */
    static const struct vat_customer_mix none = {0};
    char tiny[5];
    vat_gen_customer(&a, &mix, tiny, sizeof tiny);
    assert_true(strlen(tiny) <= 4);
    char who[96];
    vat_gen_customer(&a, &none, who, sizeof who);
    assert_non_null(strchr(who, ' '));
    assert_null(strchr(who, ','));
}

/* A vat_gen_fn with few values: "v0".."v<arg - 1>". */
static char *few(struct vat_rng *r, const void *arg, char *out, size_t cap)
{
    snprintf(out, cap, "v%u", vat_rng_below(r, *(const uint32_t *)arg));
    return out;
}

static void test_unique_values(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 77, 78);
    uint32_t nvals = 6;
    char got[6][8];
    /* Every value of a six-value generator, once each. */
    assert_int_equal(vat_gen_unique(&r, few, &nvals, got[0], 6, sizeof got[0]), 6);
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++)
            assert_string_not_equal(got[i], got[j]);
    /* A seventh distinct value does not exist: it gives up, having filled
     * what it could. */
    char more[7][8];
    assert_int_equal(vat_gen_unique(&r, few, &nvals, more[0], 7, sizeof more[0]), 6);

    /* Same draws as the loop the templates wrote: draw, redraw repeats. */
    static const struct vat_customer_mix mix = {.company = 1, .person = 4};
    struct vat_rng a, b;
    vat_rng_seed(&a, 3, 9);
    vat_rng_seed(&b, 3, 9);
    char x[40][64], y[40][64];
    assert_int_equal(vat_gen_unique(&a, vat_gen_customer, &mix, x[0], 40, sizeof x[0]), 40);
    for (int i = 0; i < 40; i++) {
        bool dup;
        do {
            vat_gen_customer(&b, &mix, y[i], sizeof y[i]);
            dup = false;
            for (int j = 0; j < i; j++)
                dup = dup || strcmp(y[i], y[j]) == 0;
        } while (dup);
        assert_string_equal(x[i], y[i]);
    }
    assert_int_equal(vat_rng_u32(&a), vat_rng_u32(&b));
}

static void test_days_sorted(void **state)
{
    (void)state;
    struct vat_rng a, b;
    vat_rng_seed(&a, 8, 8);
    vat_rng_seed(&b, 8, 8);
    int32_t first = vat_date_from_civil(2023, 1, 1), last = first + 9;
    int32_t *days = vat_gen_days_sorted(&a, 200, first, last);
    int hit[10] = {0};
    long sum = 0, want = 0;
    for (int i = 0; i < 200; i++) {
        assert_true(days[i] >= first && days[i] <= last);
        if (i > 0)
            assert_true(days[i - 1] <= days[i]);
        hit[days[i] - first]++;
        sum += days[i];
        /* one vat_rng_range draw per day, the same values before sorting */
        want += (long)vat_rng_range(&b, first, last);
    }
    assert_int_equal(sum, want);
    for (int d = 0; d < 10; d++)
        assert_true(hit[d] > 0);
    assert_int_equal(vat_rng_u32(&a), vat_rng_u32(&b));
    free(days);
    days = vat_gen_days_sorted(&a, 0, first, last);
    assert_non_null(days);
    free(days);
}

/* ---- hand-typed labels ------------------------------------------------------ */

static void test_dirty_labels(void **state)
{
    (void)state;
    static const char *const want[VAT_DIRTY_N] = {
        "Field Ops ", "field ops", "FIELD OPS", " Field Ops", "  Field Ops ", "field ops  ",
        " FIELD OPS",
    };
    for (int k = 0; k < VAT_DIRTY_N; k++) {
        char out[32], key[32];
        assert_ptr_equal(vat_gen_dirty_label("Field Ops", (enum vat_dirty)k, out, sizeof out),
                         out);
        assert_string_equal(out, want[k]);
        /* Every spelling differs from the clean label and normalises back. */
        assert_string_not_equal(out, "Field Ops");
        assert_string_equal(vat_norm_label(out, key, sizeof key), "field ops");
    }
    char out[8];
    vat_gen_dirty_label("Billing", VAT_DIRTY_N, out, sizeof out);
    assert_string_equal(out, "Billing");
    vat_gen_dirty_label("Infrastructure", VAT_DIRTY_BOTH, out, sizeof out);
    assert_string_equal(out, "  Infra");
    vat_gen_dirty_label("Billing", VAT_DIRTY_UPPER, out, 1);
    assert_string_equal(out, "");
}

/* Variants of any string, lower-case ones included: each differs from the
 * input (or says it cannot), and all but INNER normalise back. */
static void test_variants(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        enum vat_variant kind;
        const char *out;
        int differs;
    } cases[] = {
        {"maria.lopez@example.com", VAT_VARIANT_UPPER, "MARIA.LOPEZ@EXAMPLE.COM", 1},
        {"maria.lopez@example.com", VAT_VARIANT_CAPITAL, "Maria.lopez@example.com", 1},
        {"maria.lopez@example.com", VAT_VARIANT_LOWER, "maria.lopez@example.com", 0},
        {"maria.lopez@example.com", VAT_VARIANT_LEAD, " maria.lopez@example.com", 1},
        {"maria.lopez@example.com", VAT_VARIANT_TRAIL, "maria.lopez@example.com ", 1},
        {"maria.lopez@example.com", VAT_VARIANT_BOTH, "  maria.lopez@example.com ", 1},
        {"maria.lopez@example.com", VAT_VARIANT_INNER, "maria.lopez@example.com", 0},
        {"Field Ops", VAT_VARIANT_LOWER, "field ops", 1},
        {"Field Ops", VAT_VARIANT_INNER, "Field  Ops", 1},
        {"a b c", VAT_VARIANT_INNER, "a  b c", 1},
        {"123", VAT_VARIANT_UPPER, "123", 0},
        {"123", VAT_VARIANT_CAPITAL, "123", 0},
        {"x", VAT_VARIANT_N, "x", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64], key[64], want[64];
        int d = vat_variant(cases[i].in, cases[i].kind, out, sizeof out);
        assert_string_equal(out, cases[i].out);
        assert_int_equal(d, cases[i].differs);
        if (cases[i].kind != VAT_VARIANT_INNER && cases[i].kind != VAT_VARIANT_N)
            assert_string_equal(vat_norm_label(out, key, sizeof key),
                                vat_norm_label(cases[i].in, want, sizeof want));
    }
    char small[5];
    vat_variant("abcdef", VAT_VARIANT_BOTH, small, sizeof small);
    assert_string_equal(small, "  ab");
}

/* Addresses are lower-case ASCII, one '@', a known domain, and the same
 * stream gives the same address. */
static void test_email(void **state)
{
    (void)state;
    struct vat_rng a, b;
    vat_rng_seed(&a, 9, 9);
    vat_rng_seed(&b, 9, 9);
    for (int i = 0; i < 200; i++) {
        char x[64], y[64];
        vat_gen_email(&a, x, sizeof x);
        vat_gen_email(&b, y, sizeof y);
        assert_string_equal(x, y);
        const char *at = strchr(x, '@');
        assert_non_null(at);
        assert_null(strchr(at + 1, '@'));
        assert_true(at > x);
        assert_non_null(strstr(at, ".example.") ? at : strstr(at, "@example."));
        for (const char *p = x; *p; p++)
            assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' ||
                        *p == '_' || *p == '@' || *p == '-');
    }
}

static void test_months(void **state)
{
    (void)state;
    static const struct {
        int y, m, k, ry, rm;
    } add[] = {
        {2024, 1, 0, 2024, 1},  {2024, 12, 1, 2025, 1},  {2024, 1, -1, 2023, 12},
        {2024, 3, -14, 2023, 1}, {2024, 11, 26, 2027, 1}, {0, 1, -1, -1, 12},
    };
    for (size_t i = 0; i < sizeof add / sizeof add[0]; i++) {
        int ry, rm;
        vat_month_add(add[i].y, add[i].m, add[i].k, &ry, &rm);
        assert_int_equal(ry, add[i].ry);
        assert_int_equal(rm, add[i].rm);
    }
    assert_int_equal(vat_month_days(2024, 2), 29);
    assert_int_equal(vat_month_days(2023, 2), 28);
    assert_int_equal(vat_month_days(1900, 2), 28);
    assert_int_equal(vat_month_days(2000, 2), 29);
    assert_int_equal(vat_month_days(2024, 12), 31);
    assert_int_equal(vat_month_days(2024, 4), 30);
    assert_int_equal(vat_month_first_day(2024, 3), vat_date_from_civil(2024, 3, 1));
    assert_string_equal(vat_month_name(1), "January");
    assert_string_equal(vat_month_name(12), "December");
    assert_null(vat_month_name(0));
    assert_null(vat_month_name(13));
    char ym[8];
    assert_string_equal(vat_fmt_month(2024, 3, ym), "2024-03");
    int y, m;
    assert_int_equal(vat_parse_month(vat_fmt_month(1999, 12, ym), &y, &m), 0);
    assert_int_equal(y, 1999);
    assert_int_equal(m, 12);
}

static void test_norm_label(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"Billing", "billing"},        {"  Field Ops ", "field ops"}, {"FIELD  OPS", "field  ops"},
        {"", ""},                      {"   ", ""},                   {"\tData\t", "\tdata\t"},
        {"Caf\xc3\xa9 ", "caf\xc3\xa9"}, {"A-B_C 9", "a-b_c 9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[32];
        assert_string_equal(vat_norm_label(cases[i].in, out, sizeof out), cases[i].out);
    }
    char small[4];
    assert_string_equal(vat_norm_label("  ABCDEF  ", small, sizeof small), "abc");
}

static void test_gen_id(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 4, 4);
    int digit_seen[10] = {0};
    for (int i = 0; i < 500; i++) {
        char id[32];
        assert_ptr_equal(vat_gen_id(&r, "INV-", 6, id, sizeof id), id);
        assert_int_equal(strlen(id), 10);
        assert_memory_equal(id, "INV-", 4);
        assert_int_equal(strspn(id + 4, "0123456789"), 6);
        for (int j = 4; j < 10; j++)
            digit_seen[id[j] - '0']++;
    }
    for (int d = 0; d < 10; d++)
        assert_true(digit_seen[d] > 200);

    char id[8];
    vat_gen_id(&r, "ORDER-", 9, id, sizeof id); /* 6 + 9 + 1 > 8: cut */
    assert_int_equal(strlen(id), 7);
    assert_memory_equal(id, "ORDER-", 6);
    char plain[8];
    vat_gen_id(&r, "", 4, plain, sizeof plain);
    assert_int_equal(strlen(plain), 4);
    assert_int_equal(strspn(plain, "0123456789"), 4);
}

/* ---- dates ---------------------------------------------------------------- */

static void test_known_dates(void **state)
{
    (void)state;
    /* Day numbers from Python's datetime.date(...) - date(1970, 1, 1). */
    static const struct {
        int y, m, d;
        int32_t days;
        const char *text;
    } known[] = {
        {1970, 1, 1, 0, "1970-01-01"},       {1969, 12, 31, -1, "1969-12-31"},
        {1900, 1, 1, -25567, "1900-01-01"},  {2000, 2, 29, 11016, "2000-02-29"},
        {2000, 3, 1, 11017, "2000-03-01"},   {2024, 2, 29, 19782, "2024-02-29"},
        {2100, 12, 31, 47846, "2100-12-31"}, {1600, 2, 29, -135081, "1600-02-29"},
        {1, 1, 1, -719162, "0001-01-01"},    {9999, 12, 31, 2932896, "9999-12-31"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        assert_int_equal(vat_date_from_civil(known[i].y, known[i].m, known[i].d), known[i].days);
        int y, m, d;
        vat_date_to_civil(known[i].days, &y, &m, &d);
        assert_int_equal(y, known[i].y);
        assert_int_equal(m, known[i].m);
        assert_int_equal(d, known[i].d);
        char buf[11];
        assert_string_equal(vat_fmt_date(known[i].days, buf), known[i].text);
        int32_t back = 12345;
        assert_int_equal(vat_parse_date(known[i].text, &back), 0);
        assert_int_equal(back, known[i].days);
    }
}

static void test_every_day_1900_to_2100(void **state)
{
    (void)state;
    /* Walk the calendar by hand and demand consecutive day numbers. */
    static const int mlen[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int32_t expect = vat_date_from_civil(1900, 1, 1);
    long checked = 0;
    for (int y = 1900; y <= 2100; y++) {
        int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        for (int m = 1; m <= 12; m++) {
            int len = mlen[m - 1] + (m == 2 && leap);
            for (int d = 1; d <= len; d++) {
                assert_true(vat_date_valid(y, m, d));
                int32_t days = vat_date_from_civil(y, m, d);
                assert_int_equal(days, expect);
                int yy, mm, dd;
                vat_date_to_civil(days, &yy, &mm, &dd);
                assert_true(yy == y && mm == m && dd == d);
                char buf[11], want[40];
                snprintf(want, sizeof want, "%04d-%02d-%02d", y, m, d);
                assert_string_equal(vat_fmt_date(days, buf), want);
                int32_t parsed;
                assert_int_equal(vat_parse_date(want, &parsed), 0);
                assert_int_equal(parsed, days);
                expect++;
                checked++;
            }
            assert_false(vat_date_valid(y, m, len + 1));
        }
    }
    assert_int_equal(checked, 73414); /* 201 years, 49 of them leap */
}

static void test_date_validity(void **state)
{
    (void)state;
    assert_true(vat_date_valid(2000, 2, 29));
    assert_false(vat_date_valid(1900, 2, 29));
    assert_false(vat_date_valid(2100, 2, 29));
    assert_true(vat_date_valid(2024, 2, 29));
    assert_false(vat_date_valid(2023, 2, 29));
    assert_false(vat_date_valid(2024, 4, 31));
    assert_true(vat_date_valid(2024, 12, 31));
    assert_false(vat_date_valid(2024, 0, 1));
    assert_false(vat_date_valid(2024, 13, 1));
    assert_false(vat_date_valid(2024, 1, 0));
    assert_false(vat_date_valid(2024, 1, 32));
    assert_false(vat_date_valid(2024, -1, 10));
}

static void test_parse_date_strict(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "2024-2-29",
        "2024-02-30",
        "1900-02-29",
        "2024-02-29 ",
        " 2024-02-29",
        "20240229",
        "2024/02/29",
        "+024-02-29",
        "2024-02-2x",
        "2024-00-10",
        "2024-13-01",
        "2024-01-00",
        "24-02-29",
        "2024-02-029",
        "2024-02-29T00:00:00",
        "2O24-02-29",
        "-024-02-29",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int32_t days = 777;
        if (vat_parse_date(bad[i], &days) != -1)
            fail_msg("accepted '%s'", bad[i]);
        assert_int_equal(days, 777);
    }
    assert_int_equal(vat_parse_date(NULL, NULL), -1);
    assert_int_equal(vat_parse_date("2000-02-29", NULL), 0);
}

static void test_timestamps(void **state)
{
    (void)state;
    static const struct {
        int64_t secs;
        const char *text;
    } known[] = {
        {0, "1970-01-01 00:00:00"},           {-1, "1969-12-31 23:59:59"},
        {-86400, "1969-12-31 00:00:00"},      {-86401, "1969-12-30 23:59:59"},
        {86399, "1970-01-01 23:59:59"},       {951782400, "2000-02-29 00:00:00"},
        {1700000000, "2023-11-14 22:13:20"},  {-2208988800, "1900-01-01 00:00:00"},
        {-4970890491, "1812-06-24 13:05:09"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        char buf[20];
        assert_string_equal(vat_fmt_timestamp(known[i].secs, buf), known[i].text);
    }
    /* Far outside four-digit years: saturates, never overruns or traps. */
    char buf[20];
    assert_string_equal(vat_fmt_timestamp(INT64_MIN, buf), "0000-01-01 00:00:00");
    assert_string_equal(vat_fmt_timestamp(INT64_MAX, buf), "9999-12-31 23:59:59");
    char d[11];
    assert_string_equal(vat_fmt_date(INT32_MIN, d), "0000-01-01");
    assert_string_equal(vat_fmt_date(INT32_MAX, d), "9999-12-31");
}

static void test_parse_timestamp(void **state)
{
    (void)state;
    /* Exactly what vat_fmt_timestamp writes, before and after 1970. */
    static const int64_t secs[] = {0,          -1,         86399,       951782400,
                                   1700000000, -2208988800, 253402300799};
    for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) {
        char buf[20];
        int64_t back = 7;
        assert_int_equal(vat_parse_timestamp(vat_fmt_timestamp(secs[i], buf), &back), 0);
        assert_true(back == secs[i]);
    }
    assert_int_equal(vat_parse_timestamp("2024-02-29 23:59:59", NULL), 0);
    static const char *const bad[] = {
        "",
        "2024-02-29",
        "2024-02-29 24:00:00",
        "2024-02-29 23:60:00",
        "2024-02-29 23:59:60",
        "2023-02-29 12:00:00",
        "2024-02-29T12:00:00",
        "2024-02-29 12:00",
        "2024-02-29 12:00:00 ",
        " 2024-02-29 12:00:00",
        "2024-02-29 1:00:00 ",
        "2024-02-29 12-00-00",
        "2024-02-29 12:0a:00",
        "2024-2-29 12:00:00 ",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t back = 7;
        if (vat_parse_timestamp(bad[i], &back) != -1)
            fail_msg("accepted '%s'", bad[i]);
        assert_true(back == 7);
    }
    assert_int_equal(vat_parse_timestamp(NULL, NULL), -1);
}

static void test_parse_month(void **state)
{
    (void)state;
    int y = 0, m = 0;
    assert_int_equal(vat_parse_month("2024-01", &y, &m), 0);
    assert_true(y == 2024 && m == 1);
    assert_int_equal(vat_parse_month("0999-12", &y, &m), 0);
    assert_true(y == 999 && m == 12);
    assert_int_equal(vat_parse_month("2024-07", NULL, NULL), 0);
    static const char *const bad[] = {"",         "2024-00", "2024-13", "2024-1",  "24-01",
                                      "2024/01",  "2024-01-01", "2024-1a", "2024-01 ", " 2024-01",
                                      "+024-01",  "202401"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        y = m = 77;
        if (vat_parse_month(bad[i], &y, &m) != -1)
            fail_msg("accepted '%s'", bad[i]);
        assert_true(y == 77 && m == 77);
    }
    assert_int_equal(vat_parse_month(NULL, NULL, NULL), -1);
}

/* ---- money ------------------------------------------------------------------ */

static void test_fmt_cents(void **state)
{
    (void)state;
    static const struct {
        int64_t cents;
        const char *text;
    } known[] = {
        {0, "0.00"},
        {5, "0.05"},
        {-5, "-0.05"},
        {-100, "-1.00"},
        {1200, "12.00"},
        {123405, "1234.05"},
        {-123405, "-1234.05"},
        {99, "0.99"},
        {-99, "-0.99"},
        {INT64_MAX, "92233720368547758.07"},
        {INT64_MIN, "-92233720368547758.08"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        char buf[32];
        assert_string_equal(vat_fmt_cents(known[i].cents, buf, sizeof buf), known[i].text);
    }
    char small[5];
    vat_fmt_cents(-123405, small, sizeof small);
    assert_string_equal(small, "-123");
    /* as snprintf writes it, at every cap, over a spread of magnitudes */
    uint64_t x = 88172645463325252u;
    for (int i = 0; i < 2000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t c = (int64_t)(x >> (i % 64));
        if (i % 3 == 0)
            c = -c;
        uint64_t mag = c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c;
        for (size_t cap = 1; cap <= 24; cap++) {
            char want[32], got[32];
            snprintf(want, cap, "%s%" PRIu64 ".%02u", c < 0 ? "-" : "", mag / 100,
                     (unsigned)(mag % 100));
            memset(got, 'x', sizeof got);
            vat_fmt_cents(c, got, cap);
            assert_string_equal(got, want);
        }
    }
}

static void test_parse_cents(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t cents;
    } good[] = {
        {"12", 1200},
        {"12.5", 1250},
        {"12.50", 1250},
        {"-0.05", -5},
        {"0", 0},
        {"-0", 0},
        {"0.01", 1},
        {"007.10", 710},
        {"92233720368547758.07", INT64_MAX},
        {"-92233720368547758.08", INT64_MIN},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int64_t c = 42;
        if (vat_parse_cents(good[i].text, &c) != 0)
            fail_msg("rejected '%s'", good[i].text);
        assert_int_equal(c, good[i].cents);
    }
    static const char *const bad[] = {
        "12.505",
        "1,200",
        " 12",
        "12 ",
        "",
        "-",
        ".5",
        "12.",
        "+12",
        "1e3",
        "--1",
        "12.-5",
        "0x10",
        "12.5.0",
        "1 200",
        "NaN",
        "inf",
        "-.5",
        "12,50",
        "92233720368547758.08",
        "-92233720368547758.09",
        "99999999999999999999",
        "184467440737095516160",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t c = 42;
        if (vat_parse_cents(bad[i], &c) != -1)
            fail_msg("accepted '%s'", bad[i]);
        assert_int_equal(c, 42);
    }
    assert_int_equal(vat_parse_cents(NULL, NULL), -1);
}

static void test_cents_round_trip_and_range(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 10, 20);
    int lo_hit = 0, hi_hit = 0;
    for (int i = 0; i < 20000; i++) {
        int64_t c = vat_gen_cents(&r, -250, 250);
        assert_true(c >= -250 && c <= 250);
        lo_hit += c == -250;
        hi_hit += c == 250;
        int64_t wide = (int64_t)vat_rng_u32(&r) << 31;
        wide ^= vat_rng_u32(&r);
        if (vat_rng_chance(&r, 0.5))
            wide = -wide;
        int64_t values[2] = {c, wide};
        for (int k = 0; k < 2; k++) {
            char buf[32];
            int64_t back;
            assert_int_equal(vat_parse_cents(vat_fmt_cents(values[k], buf, sizeof buf), &back), 0);
            assert_int_equal(back, values[k]);
        }
    }
    assert_true(lo_hit > 0 && hi_hit > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_word_lists_sizes_and_hygiene),
        cmocka_unit_test(test_distinct_picks),
        cmocka_unit_test(test_distinct_is_uniform),
        cmocka_unit_test(test_person_and_company),
        cmocka_unit_test(test_customer_mix),
        cmocka_unit_test(test_unique_values),
        cmocka_unit_test(test_days_sorted),
        cmocka_unit_test(test_dirty_labels),
        cmocka_unit_test(test_norm_label),
        cmocka_unit_test(test_gen_id),
        cmocka_unit_test(test_known_dates),
        cmocka_unit_test(test_every_day_1900_to_2100),
        cmocka_unit_test(test_date_validity),
        cmocka_unit_test(test_parse_date_strict),
        cmocka_unit_test(test_timestamps),
        cmocka_unit_test(test_parse_timestamp),
        cmocka_unit_test(test_parse_month),
        cmocka_unit_test(test_variants),
        cmocka_unit_test(test_email),
        cmocka_unit_test(test_months),
        cmocka_unit_test(test_fmt_cents),
        cmocka_unit_test(test_parse_cents),
        cmocka_unit_test(test_cents_round_trip_and_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

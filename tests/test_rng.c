/* test_rng.c — PCG32 against the published reference output, unbiased
 * bounded draws, inclusive ranges, shuffles, weighted picks, and the
 * per-task stream derivation (generators/rng.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "rng.h"

/* The expected text below is the output of O'Neill's pcg32 demo, seeded
 * pcg32_srandom_r(&rng, 42u, 54u): pcg-c-basic/pcg32-demo.c prints it and
 * pcg-c/test-high/expected/check-pcg32.out (github.com/imneme/pcg-c)
 * records it.  Each round prints six raw outputs, then 65 coin tosses
 * (boundedrand 2), 33 dice rolls (boundedrand 6) and a 52-card deal
 * (boundedrand i for i = 52 .. 2), all from the same generator, so the
 * rounds also pin vat_rng_below to pcg32_boundedrand_r. */
struct demo_round {
    const char *bits32, *coins, *rolls, *cards;
};

static const struct demo_round demo[5] = {
    {"0xa15c02b7 0x7b47f409 0xba1d3330 0x83d2f293 0xbfa4784b 0xcbed606e",
     "HHTTTHTHHHTHTTTHHHHHTTTHHHTHTHTHTTHTTTHHHHHHTTTTHHTTTTTHTTTTTTTHT",
     "3 4 1 1 2 2 3 2 4 3 2 4 3 3 5 2 3 1 3 1 5 1 4 1 5 6 4 6 6 2 6 3 3",
     "Qd Ks 6d 3s 3d 4c 3h Td Kc 5c Jh Kd Jd As 4s 4h Ad Th Ac Jc 7s Qs "
     "2s 7h Kh 2d 6c Ah 4d Qh 9h 6s 5s 2c 9c Ts 8d 9s 3c 8c Js 5d 2h 6h "
     "7d 8s 9d 5h 8h Qc 7c Tc"},
    {"0x74ab93ad 0x1c1da000 0x494ff896 0x34462f2f 0xd308a3e5 0x0fa83bab",
     "HHHHHHHHHHTHHHTHTHTHTHTTTTHHTTTHHTHHTHTTHHTTTHHHHHHTHTTHTHTTTTTTT",
     "5 1 1 3 3 2 4 5 3 2 2 6 4 3 2 4 2 4 3 2 3 6 3 2 3 4 2 4 1 1 5 4 4",
     "7d 2s 7h Td 8s 3c 3d Js 2d Tc 4h Qs 5c 9c Th 2c Jc Qd 9d Qc 7s 3s "
     "5s 6h 4d Jh 4c Ac 4s 5h 5d Kc 8h 8d Jd 9s Ad 6s 6c Kd 2h 3h Kh Ts "
     "Qh 9h 6d As 7c Ks Ah 8c"},
    {"0x39af5f9f 0x04196b18 0xc3c3eb28 0xc076c60c 0xc693e135 0xf8f63932",
     "HTTHHTTTTTHTTHHHTHTTHHTTHTHHTHTHTTTTHHTTTHHTHHTTHTTHHHTHHHTHTTTHT",
     "5 1 5 3 2 2 4 5 3 3 1 3 4 6 3 2 3 4 2 2 3 1 5 2 4 6 6 4 2 4 3 3 6",
     "Kd Jh Kc Qh 4d Qc 4h 9d 3c Kh Qs 8h 5c Jd 7d 8d 3h 7c 8s 3s 2h Ks "
     "9c 9h 2c 8c Ad 7s 4s 2s 5h 6s 4c Ah 7h 5s Ac 3d 5d Qd As Tc 6h 9s "
     "2d 6c 6d Td Jc Ts Th Js"},
    {"0x55ce6851 0x97a7726d 0x17e10815 0x58007d43 0x962fb148 0xb9bb55bd",
     "HHTHHTTTTHTHHHHHTTHHHTTTHHTHTHTHTHHTTHTHHHHHHTHHTHHTHHTTTTHHTHHTT",
     "6 6 3 2 3 4 2 6 4 2 6 3 2 3 5 5 3 4 4 6 6 2 6 5 4 4 6 1 6 1 3 6 5",
     "Qd 8h 5d 8s 8d Ts 7h Th Qs Js 7s Kc 6h 5s 4d Ac Jd 7d 7c Td 2c 6s "
     "5h 6d 3s Kd 9s Jh Kh As Ah 9h 3c Qh 9c 2d Tc 9d 2s 3d Ks 4h Qc Ad "
     "Jc 8c 2h 3h 4s 4c 5c 6c"},
    {"0xfcef7cd6 0x1b488b5a 0xd0daf7ea 0x1d9a70f7 0x241a37cf 0x9a3857b7",
     "HHHHTHHTTHTTHHHTTTHHTHTHTTTTHTTHTHTTTHHHTHTHTTHTTHTHHTHTHHHTHTHTT",
     "5 4 1 2 6 1 3 1 5 6 3 6 2 1 4 4 5 2 1 5 6 5 6 4 4 4 5 2 6 4 3 5 6",
     "4d 9s Qc 9h As Qs 7s 4c Kd 6h 6s 2c 8c 5d 7h 5h Jc 3s 7c Jh Js Ks "
     "Tc Jd Kc Th 3h Ts Qh Ad Td 3c Ah 2d 3d 5c Ac 8s 5s 9c 2h 6c 6d Kh "
     "Qd 8d 7d 2s 8h 4h 9d 4s"},
};

/* Replays one round of the demo with vat_rng_*, formatted as the demo
 * formats it (without its labels and line wrapping). */
static void play_round(struct vat_rng *r, char *bits, char *coins, char *rolls, char *cards)
{
    char *p = bits;
    for (int i = 0; i < 6; i++)
        p += sprintf(p, "%s0x%08x", i ? " " : "", vat_rng_u32(r));
    for (int i = 0; i < 65; i++)
        coins[i] = vat_rng_below(r, 2) ? 'H' : 'T';
    coins[65] = 0;
    p = rolls;
    for (int i = 0; i < 33; i++)
        p += sprintf(p, "%s%d", i ? " " : "", (int)vat_rng_below(r, 6) + 1);
    char deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (char)i;
    for (int i = 52; i > 1; i--) {
        int chosen = (int)vat_rng_below(r, (uint32_t)i);
        char card = deck[chosen];
        deck[chosen] = deck[i - 1];
        deck[i - 1] = card;
    }
    static const char number[] = "A23456789TJQK", suit[] = "hcds";
    p = cards;
    for (int i = 0; i < 52; i++)
        p += sprintf(p, "%s%c%c", i ? " " : "", number[deck[i] / 4], suit[deck[i] % 4]);
}

static void test_pcg32_demo_reference(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 42u, 54u);
    for (int round = 0; round < 5; round++) {
        char bits[128], coins[66], rolls[128], cards[256];
        play_round(&r, bits, coins, rolls, cards);
        assert_string_equal(bits, demo[round].bits32);
        assert_string_equal(coins, demo[round].coins);
        assert_string_equal(rolls, demo[round].rolls);
        assert_string_equal(cards, demo[round].cards);
    }
}

static void test_seed_is_pcg32_srandom(void **state)
{
    (void)state;
    /* pcg32_srandom_r: state 0, inc = seq<<1|1, step, add initstate, step. */
    struct vat_rng r;
    vat_rng_seed(&r, 42u, 54u);
    assert_int_equal(r.inc, (54u << 1) | 1u);
    uint64_t s = 0;
    s = s * 6364136223846793005ULL + r.inc;
    s += 42u;
    s = s * 6364136223846793005ULL + r.inc;
    assert_int_equal(r.state, s);
}

/* Mirrors pcg32_boundedrand_r on a copy of the generator and checks that
 * vat_rng_below draws exactly the same raw outputs and rejects exactly the
 * ones below 2^32 mod bound. */
static void check_below_mirrors_rejection(uint32_t bound, int draws)
{
    struct vat_rng r, mirror;
    vat_rng_seed(&r, 0x853c49e6748fea9bULL, 0xda3e39cb94b95bdbULL);
    mirror = r;
    uint32_t threshold = (uint32_t)(0x100000000ULL % bound);
    long rejected = 0;
    for (int i = 0; i < draws; i++) {
        uint32_t got = vat_rng_below(&r, bound);
        uint32_t x;
        while ((x = vat_rng_u32(&mirror)) < threshold)
            rejected++;
        assert_int_equal(got, x % bound);
        assert_true(got < bound);
        assert_int_equal(r.state, mirror.state);
    }
    if (bound == 0x80000001u) {
        /* 2^32 mod (2^31+1) = 2^31-1: almost half of all outputs are
         * rejected, so a missing rejection step could not go unnoticed. */
        assert_int_equal(threshold, 0x7fffffffu);
        assert_true(rejected > draws / 2 && rejected < draws * 2);
    }
}

static void test_below_rejection_threshold(void **state)
{
    (void)state;
    check_below_mirrors_rejection(0x80000001u, 20000);
    check_below_mirrors_rejection(3, 20000);
    check_below_mirrors_rejection(6, 20000);
    check_below_mirrors_rejection(1000000007u, 20000);
    check_below_mirrors_rejection(UINT32_MAX, 2000);
    check_below_mirrors_rejection(1, 100);
}

static void test_below_zero_and_one(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 1, 2);
    struct vat_rng before = r;
    assert_int_equal(vat_rng_below(&r, 0), 0);
    assert_int_equal(r.state, before.state); /* bound 0 draws nothing */
    for (int i = 0; i < 100; i++)
        assert_int_equal(vat_rng_below(&r, 1), 0);
}

static void test_below_uniform_chi_square(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 20240601u, 7u);
    long count[3] = {0, 0, 0};
    const long n = 300000;
    for (long i = 0; i < n; i++)
        count[vat_rng_below(&r, 3)]++;
    double chi = 0;
    for (int i = 0; i < 3; i++) {
        double d = (double)count[i] - n / 3.0;
        chi += d * d / (n / 3.0);
    }
    /* Two degrees of freedom: 13.8 is the 0.1% critical value. */
    assert_true(chi < 13.8);

    /* Upper half of a large bound as often as the lower half. */
    long high = 0;
    for (long i = 0; i < 100000; i++)
        high += vat_rng_below(&r, 0x80000001u) > 0x40000000u;
    assert_true(high > 49000 && high < 51000);
}

static void test_range_inclusive(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 99, 1);
    int seen[7] = {0};
    for (int i = 0; i < 5000; i++) {
        int64_t v = vat_rng_range(&r, -3, 3);
        assert_true(v >= -3 && v <= 3);
        seen[v + 3]++;
    }
    for (int i = 0; i < 7; i++)
        assert_true(seen[i] > 500);

    assert_int_equal(vat_rng_range(&r, 5, 5), 5);
    assert_int_equal(vat_rng_range(&r, 7, 2), 7);

    int lo = 0, hi = 0;
    for (int i = 0; i < 200; i++) {
        int64_t v = vat_rng_range(&r, INT64_MAX - 1, INT64_MAX);
        assert_true(v >= INT64_MAX - 1);
        lo += v == INT64_MAX - 1;
        hi += v == INT64_MAX;
    }
    assert_true(lo > 0 && hi > 0);

    /* Spans above 2^32 take the 64-bit path. */
    int upper = 0;
    for (int i = 0; i < 200; i++) {
        int64_t v = vat_rng_range(&r, 0, (int64_t)1 << 40);
        assert_true(v >= 0 && v <= (int64_t)1 << 40);
        upper += v > (int64_t)1 << 39;
    }
    assert_true(upper > 50 && upper < 150);
}

static void test_range_full_int64(void **state)
{
    (void)state;
    /* hi - lo + 1 wraps to 0 here: the full range must still be uniform
     * (reach both signs), not collapse to lo. */
    struct vat_rng r;
    vat_rng_seed(&r, 99, 2);
    int neg = 0, distinct = 0;
    int64_t prev = 0;
    for (int i = 0; i < 200; i++) {
        int64_t v = vat_rng_range(&r, INT64_MIN, INT64_MAX);
        neg += v < 0;
        distinct += i > 0 && v != prev;
        prev = v;
    }
    assert_true(distinct > 190);
    assert_true(neg > 50 && neg < 150);
}

static void test_unit_and_chance(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 5, 5);
    double sum = 0;
    for (int i = 0; i < 100000; i++) {
        double u = vat_rng_unit(&r);
        assert_true(u >= 0.0 && u < 1.0);
        sum += u;
    }
    assert_true(sum / 100000 > 0.49 && sum / 100000 < 0.51);
    int yes = 0;
    for (int i = 0; i < 1000; i++) {
        assert_false(vat_rng_chance(&r, 0.0));
        assert_true(vat_rng_chance(&r, 1.0));
        yes += vat_rng_chance(&r, 0.25);
    }
    assert_true(yes > 200 && yes < 300);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void test_shuffle_is_permutation(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 11, 13);
    int a[100];
    for (int i = 0; i < 100; i++)
        a[i] = i;
    vat_rng_shuffle(&r, a, 100, sizeof a[0]);
    int moved = 0;
    for (int i = 0; i < 100; i++)
        moved += a[i] != i;
    assert_true(moved > 80);
    qsort(a, 100, sizeof a[0], cmp_int);
    for (int i = 0; i < 100; i++)
        assert_int_equal(a[i], i);

    /* All six orders of three elements, equally often. */
    long seen[6] = {0};
    const long n = 60000;
    for (long k = 0; k < n; k++) {
        int b[3] = {0, 1, 2};
        vat_rng_shuffle(&r, b, 3, sizeof b[0]);
        seen[b[0] * 2 + (b[1] > b[2])]++;
    }
    double chi = 0;
    for (int i = 0; i < 6; i++) {
        double d = (double)seen[i] - n / 6.0;
        chi += d * d / (n / 6.0);
    }
    assert_true(chi < 20.5); /* 5 degrees of freedom, 0.1% */

    /* Elements wider than a word keep their bytes together. */
    struct wide {
        char s[24];
    } w[5] = {{"alpha"}, {"bravo"}, {"charlie"}, {"delta"}, {"echo"}};
    vat_rng_shuffle(&r, w, 5, sizeof w[0]);
    int found = 0;
    static const char *const names[] = {"alpha", "bravo", "charlie", "delta", "echo"};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            found += strcmp(w[i].s, names[j]) == 0;
    assert_int_equal(found, 5);
}

static void test_pick(void **state)
{
    (void)state;
    static const char *const list[] = {"north", "south", "east"};
    struct vat_rng r;
    vat_rng_seed(&r, 3, 4);
    int seen[3] = {0};
    for (int i = 0; i < 300; i++) {
        const char *p = VAT_PICK(&r, list);
        int k = p == list[0] ? 0 : p == list[1] ? 1 : p == list[2] ? 2 : -1;
        assert_true(k >= 0);
        seen[k]++;
    }
    assert_true(seen[0] > 50 && seen[1] > 50 && seen[2] > 50);
}

/* The walk the templates wrote before vat_rng_weighted existed: one
 * below(sum) draw, then subtract weights until the draw fits. */
static uint32_t weighted_by_hand(struct vat_rng *r, const uint32_t *w, size_t n)
{
    uint32_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += w[i];
    uint32_t x = vat_rng_below(r, sum);
    uint32_t g = 0;
    while (x >= w[g])
        x -= w[g++];
    return g;
}

static void test_weighted_keeps_the_draw_sequence(void **state)
{
    (void)state;
    /* Zero weights anywhere, including first and last. */
    static const uint32_t w[] = {0, 3, 1, 0, 5, 2, 0};
    const size_t n = sizeof w / sizeof w[0];
    struct vat_rng a, b;
    vat_rng_seed(&a, 21, 22);
    vat_rng_seed(&b, 21, 22);
    for (int i = 0; i < 5000; i++) {
        uint32_t x = vat_rng_weighted(&a, w, n), y = weighted_by_hand(&b, w, n);
        assert_int_equal(x, y);
        assert_true(w[x] > 0);
    }
    /* Same number of draws: the streams are still in step. */
    assert_int_equal(vat_rng_u32(&a), vat_rng_u32(&b));
}

static void test_weighted_proportions(void **state)
{
    (void)state;
    static const uint32_t w[] = {1, 0, 2, 7};
    struct vat_rng r;
    vat_rng_seed(&r, 31, 32);
    long seen[4] = {0};
    const long n = 100000;
    for (long k = 0; k < n; k++)
        seen[vat_rng_weighted(&r, w, 4)]++;
    assert_int_equal(seen[1], 0);
    double chi = 0;
    const double share[4] = {0.1, 0, 0.2, 0.7};
    for (int i = 0; i < 4; i++) {
        if (share[i] == 0)
            continue;
        double d = (double)seen[i] - n * share[i];
        chi += d * d / (n * share[i]);
    }
    assert_true(chi < 13.8); /* 2 degrees of freedom, 0.1% */
}

static void test_weighted_degenerate(void **state)
{
    (void)state;
    struct vat_rng r, copy;
    vat_rng_seed(&r, 41, 42);
    copy = r;
    static const uint32_t zeros[] = {0, 0, 0};
    /* Nothing to pick: returns n and leaves the stream untouched. */
    assert_int_equal(vat_rng_weighted(&r, zeros, 3), 3);
    assert_int_equal(vat_rng_weighted(&r, zeros, 0), 0);
    assert_true(r.state == copy.state && r.inc == copy.inc);
    /* One positive weight is always picked, still with one draw. */
    static const uint32_t one[] = {0, 0, 9};
    assert_int_equal(vat_rng_weighted(&r, one, 3), 2);
    vat_rng_below(&copy, 9);
    assert_true(r.state == copy.state);
    /* A sum past 32 bits: still a valid index, both halves reachable. */
    static const uint32_t big[] = {UINT32_MAX, UINT32_MAX, 1};
    int hit[3] = {0};
    for (int i = 0; i < 2000; i++)
        hit[vat_rng_weighted(&r, big, 3)]++;
    assert_true(hit[0] > 800 && hit[1] > 800);
    assert_true(hit[2] < 5);
}

/* The derivation exactly as rng.h documents it, computed here with its own
 * message layout so that the two can only agree if both follow the text. */
static void documented_stream(uint64_t master, const char *name, uint32_t index,
                              const char *purpose, uint32_t attempt, uint64_t *st, uint64_t *seq)
{
    unsigned char msg[512];
    size_t n = 0;
    memcpy(msg, "vat-stream-v1", 14);
    n = 14;
    for (int i = 0; i < 8; i++)
        msg[n++] = (unsigned char)(master >> (8 * i));
    memcpy(msg + n, name, strlen(name) + 1);
    n += strlen(name) + 1;
    for (int i = 0; i < 4; i++)
        msg[n++] = (unsigned char)(index >> (8 * i));
    memcpy(msg + n, purpose, strlen(purpose) + 1);
    n += strlen(purpose) + 1;
    for (int i = 0; i < 4; i++)
        msg[n++] = (unsigned char)(attempt >> (8 * i));
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;
    assert_int_equal(EVP_Digest(msg, n, d, &dl, EVP_sha256(), NULL), 1);
    *st = *seq = 0;
    for (int i = 7; i >= 0; i--) {
        *st = (*st << 8) | d[i];
        *seq = (*seq << 8) | d[8 + i];
    }
}

static void test_stream_matches_documented_derivation(void **state)
{
    (void)state;
    static const struct {
        uint64_t master;
        const char *name;
        uint32_t index;
        const char *purpose;
        uint32_t attempt;
    } cases[] = {
        {0, "grouped_sum", 0, "fixture", 0},
        {20240601u, "grouped_sum", 7, "fixture", 0},
        {UINT64_MAX, "sql_paid_revenue", 4294967295u, "variant", 12},
        {1, "", 1, "", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct vat_rng got, want;
        uint64_t st, seq;
        documented_stream(cases[i].master, cases[i].name, cases[i].index, cases[i].purpose,
                          cases[i].attempt, &st, &seq);
        vat_rng_seed(&want, st, seq);
        vat_rng_stream(&got, cases[i].master, cases[i].name, cases[i].index, cases[i].purpose,
                       cases[i].attempt, NULL);
        assert_int_equal(got.state, want.state);
        assert_int_equal(got.inc, want.inc);
    }
}

static void test_stream_golden(void **state)
{
    (void)state;
    /* Pinned once from an independent Python implementation of the
     * documented derivation (hashlib.sha256 + a pcg32 port); any change
     * to the derivation changes every task in every corpus. */
    struct vat_rng r;
    char hex[33];
    vat_rng_stream(&r, 20240601u, "grouped_sum", 7, "fixture", 0, hex);
    assert_string_equal(hex, "b7584aa3adb10a239eed1deed4f3aab2");
    assert_int_equal(vat_rng_u32(&r), 0x807c0ca4u);
    assert_int_equal(vat_rng_u32(&r), 0xf1b14345u);
    assert_int_equal(vat_rng_u32(&r), 0x21130975u);
}

static void test_stream_identity(void **state)
{
    (void)state;
    struct vat_rng base, again, other;
    char hb[33], ha[33], ho[33];
    vat_rng_stream(&base, 42, "grouped_sum", 3, "fixture", 0, hb);
    vat_rng_stream(&again, 42, "grouped_sum", 3, "fixture", 0, ha);
    assert_string_equal(hb, ha);
    assert_int_equal(base.state, again.state);
    assert_int_equal(base.inc, again.inc);
    assert_int_equal(strlen(hb), 32);
    assert_int_equal(strspn(hb, "0123456789abcdef"), 32);

    /* Each input on its own changes the stream. */
    struct vat_rng *o = &other;
    vat_rng_stream(o, 43, "grouped_sum", 3, "fixture", 0, ho);
    assert_string_not_equal(hb, ho);
    vat_rng_stream(o, 42, "grouped_sun", 3, "fixture", 0, ho);
    assert_string_not_equal(hb, ho);
    vat_rng_stream(o, 42, "grouped_sum", 4, "fixture", 0, ho);
    assert_string_not_equal(hb, ho);
    vat_rng_stream(o, 42, "grouped_sum", 3 + 256, "fixture", 0, ho);
    assert_string_not_equal(hb, ho);
    vat_rng_stream(o, 42, "grouped_sum", 3, "variant", 0, ho);
    assert_string_not_equal(hb, ho);
    vat_rng_stream(o, 42, "grouped_sum", 3, "fixture", 1, ho);
    assert_string_not_equal(hb, ho);
    /* The NUL separators keep name and purpose apart. */
    struct vat_rng x, y;
    vat_rng_stream(&x, 1, "ab", 0, "c", 0, NULL);
    vat_rng_stream(&y, 1, "a", 0, "bc", 0, NULL);
    assert_true(x.state != y.state || x.inc != y.inc);

    /* Same stream, same draws. */
    for (int i = 0; i < 100; i++)
        assert_int_equal(vat_rng_u32(&base), vat_rng_u32(&again));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pcg32_demo_reference),
        cmocka_unit_test(test_seed_is_pcg32_srandom),
        cmocka_unit_test(test_below_rejection_threshold),
        cmocka_unit_test(test_below_zero_and_one),
        cmocka_unit_test(test_below_uniform_chi_square),
        cmocka_unit_test(test_range_inclusive),
        cmocka_unit_test(test_range_full_int64),
        cmocka_unit_test(test_unit_and_chance),
        cmocka_unit_test(test_shuffle_is_permutation),
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_weighted_keeps_the_draw_sequence),
        cmocka_unit_test(test_weighted_proportions),
        cmocka_unit_test(test_weighted_degenerate),
        cmocka_unit_test(test_stream_matches_documented_derivation),
        cmocka_unit_test(test_stream_golden),
        cmocka_unit_test(test_stream_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

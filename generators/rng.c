/* rng.c — PCG32 and stream derivation (see rng.h). */
#include "rng.h"

#include <string.h>

#include "vat.h"

void vat_rng_seed(struct vat_rng *r, uint64_t initstate, uint64_t initseq)
{
    r->state = 0;
    r->inc = (initseq << 1u) | 1u;
    vat_rng_u32(r);
    r->state += initstate;
    vat_rng_u32(r);
}

uint32_t vat_rng_u32(struct vat_rng *r)
{
    uint64_t old = r->state;
    r->state = old * 6364136223846793005ULL + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

uint32_t vat_rng_below(struct vat_rng *r, uint32_t bound)
{
    if (bound == 0)
        return 0;
    /* pcg32_boundedrand_r: reject the low 2^32 mod bound outputs so every
     * residue is equally likely. */
    uint32_t threshold = (uint32_t)(-bound) % bound;
    for (;;) {
        uint32_t x = vat_rng_u32(r);
        if (x >= threshold)
            return x % bound;
    }
}

int64_t vat_rng_range(struct vat_rng *r, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1u;
    if (span != 0 && span <= UINT32_MAX)
        return lo + (int64_t)vat_rng_below(r, (uint32_t)span);
    /* Wide ranges: rejection sampling on 64 bits. */
    uint64_t limit = span == 0 ? 0 : UINT64_MAX - (UINT64_MAX % span);
    for (;;) {
        /* the high half first, in its own statement (docs/determinism.md) */
        uint64_t hi32 = vat_rng_u32(r);
        uint64_t x = (hi32 << 32) | vat_rng_u32(r);
        if (span == 0)
            return (int64_t)x;
        if (x < limit)
            return lo + (int64_t)(x % span);
    }
}

double vat_rng_unit(struct vat_rng *r)
{
    uint64_t hi = vat_rng_u32(r) >> 5; /* 27 bits */
    uint64_t lo = vat_rng_u32(r) >> 6; /* 26 bits */
    return (double)((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}

bool vat_rng_chance(struct vat_rng *r, double p)
{
    return vat_rng_unit(r) < p;
}

void vat_rng_shuffle(struct vat_rng *r, void *base, size_t n, size_t size)
{
    unsigned char *a = base;
    unsigned char tmp[256];
    if (n < 2 || size > sizeof tmp)
        return;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = vat_rng_below(r, (uint32_t)(i + 1));
        if (j != i) {
            memcpy(tmp, a + i * size, size);
            memcpy(a + i * size, a + j * size, size);
            memcpy(a + j * size, tmp, size);
        }
    }
}

const char *vat_rng_pick(struct vat_rng *r, const char *const *list, size_t n)
{
    return list[vat_rng_below(r, (uint32_t)n)];
}

uint32_t vat_rng_weighted(struct vat_rng *r, const uint32_t *weights, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += weights[i];
    if (sum == 0)
        return (uint32_t)n;
    /* The templates' draw sequences were fixed with one below(sum) call;
     * keep that draw whenever the sum fits its 32-bit bound. */
    uint64_t w = sum <= UINT32_MAX ? vat_rng_below(r, (uint32_t)sum)
                                   : (uint64_t)vat_rng_range(r, 0, (int64_t)(sum - 1));
    size_t g = 0;
    while (w >= weights[g])
        w -= weights[g++];
    return (uint32_t)g;
}

static void put_le(unsigned char *p, uint64_t v, int nbytes)
{
    for (int i = 0; i < nbytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void vat_rng_stream(struct vat_rng *r, uint64_t master_seed, const char *name,
                    uint32_t index, const char *purpose, uint32_t attempt, char hex[33])
{
    static const char tag[] = "vat-stream-v1";
    size_t nl = strlen(name), pl = strlen(purpose);
    unsigned char msg[512];
    size_t n = 0;
    if (nl > 200)
        nl = 200;
    if (pl > 200)
        pl = 200;
    memcpy(msg + n, tag, sizeof tag); /* includes the NUL separator */
    n += sizeof tag;
    put_le(msg + n, master_seed, 8);
    n += 8;
    memcpy(msg + n, name, nl);
    n += nl;
    msg[n++] = 0;
    put_le(msg + n, index, 4);
    n += 4;
    memcpy(msg + n, purpose, pl);
    n += pl;
    msg[n++] = 0;
    put_le(msg + n, attempt, 4);
    n += 4;

    unsigned char d[32];
    vat_sha256(msg, n, d);
    uint64_t st = get_le64(d), seq = get_le64(d + 8);
    vat_rng_seed(r, st, seq);
    if (hex) {
        static const char digits[] = "0123456789abcdef";
        for (int i = 0; i < 16; i++) {
            hex[2 * i] = digits[d[i] >> 4];
            hex[2 * i + 1] = digits[d[i] & 15];
        }
        hex[32] = 0;
    }
}

/* splitmix64's finaliser: a good mixer of 64 bits. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t vat_rng_permute(uint64_t key, uint64_t n, uint64_t i)
{
    if (n <= 1)
        return 0;
    i %= n;
    unsigned bits = 2;
    while (bits < 64 && (1ULL << bits) < n)
        bits += 2;
    unsigned half = bits / 2;
    uint64_t mask = (1ULL << half) - 1;
    uint64_t x = i;
    /* Cycle walking: the network permutes [0, 2^bits); stepping again
     * from a value >= n until one falls below n keeps it a bijection of
     * [0, n), and 2^bits < 4n bounds the expected steps below 4. */
    do {
        uint64_t l = x >> half, r = x & mask;
        for (uint64_t round = 0; round < 4; round++) {
            uint64_t f = mix64(key ^ mix64((round << 56) ^ r)) & mask;
            uint64_t nl = r;
            r = l ^ f;
            l = nl;
        }
        x = (l << half) | r;
    } while (x >= n);
    return x;
}

uint64_t vat_rng_key(uint64_t master_seed, const char *name, const char *purpose)
{
    struct vat_rng r;
    vat_rng_stream(&r, master_seed, name, 0, purpose, 0, NULL);
    uint64_t hi = vat_rng_u32(&r);
    uint64_t lo = vat_rng_u32(&r);
    return (hi << 32) | lo;
}

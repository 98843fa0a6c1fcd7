/* rng.h — PCG32 (O'Neill's pcg32: 64-bit state, XSH-RR output), the only
 * source of randomness in vat, and the per-task stream derivation.
 * Exports struct vat_rng and the vat_rng_* functions. */
#ifndef VAT_RNG_H
#define VAT_RNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vat_rng {
    uint64_t state;
    uint64_t inc;
};

/* Seeds exactly as pcg32_srandom_r(initstate, initseq). */
void vat_rng_seed(struct vat_rng *r, uint64_t initstate, uint64_t initseq);
/* Returns the next 32-bit output (pcg32_random_r). */
uint32_t vat_rng_u32(struct vat_rng *r);
/* Returns a uniform integer in [0, bound) without modulo bias; 0 if bound is 0. */
uint32_t vat_rng_below(struct vat_rng *r, uint32_t bound);
/* Returns a uniform integer in [lo, hi] (inclusive); lo if hi <= lo. */
int64_t vat_rng_range(struct vat_rng *r, int64_t lo, int64_t hi);
/* Returns a uniform double in [0, 1) with 53 random bits. */
double vat_rng_unit(struct vat_rng *r);
/* Returns true with probability p. */
bool vat_rng_chance(struct vat_rng *r, double p);
/* Fisher-Yates shuffle of n elements of the given size. */
void vat_rng_shuffle(struct vat_rng *r, void *base, size_t n, size_t size);
/* Returns one of list[0..n-1]. */
const char *vat_rng_pick(struct vat_rng *r, const char *const *list, size_t n);
#define VAT_PICK(r, arr) vat_rng_pick((r), (arr), sizeof(arr) / sizeof((arr)[0]))

/* Derives the stream for one purpose of one task:
 *   d = SHA-256("vat-stream-v1" 0x00 master_seed(8 bytes LE) name 0x00
 *               index(4 bytes LE) purpose 0x00 attempt(4 bytes LE))
 *   initstate = d[0..7] LE, initseq = d[8..15] LE
 * so a task's draws depend on (master_seed, template name, task index,
 * purpose, attempt) alone.  Writes the 32 hex digits of (initstate,
 * initseq) to hex when hex is not NULL. */
void vat_rng_stream(struct vat_rng *r, uint64_t master_seed, const char *name,
                    uint32_t index, const char *purpose, uint32_t attempt, char hex[33]);

/* Returns an index in [0, n) drawn with probability weights[i] / sum:
 * one vat_rng_below(r, sum) draw, then the first index whose running
 * weight exceeds it, so a zero weight is never picked.  Draws nothing and
 * returns n when n is 0 or every weight is 0.  (A sum above UINT32_MAX
 * takes one vat_rng_range draw instead.) */
uint32_t vat_rng_weighted(struct vat_rng *r, const uint32_t *weights, size_t n);

/* A bijection of [0, n) chosen by key: returns the i-th element of a
 * seeded permutation of 0..n-1 (i < n; i >= n is taken modulo n).  A
 * balanced Feistel network of 4 rounds over the smallest even number of
 * bits covering n, walked in a cycle until the value falls below n
 * (format-preserving), so nothing of size n is built: the question of
 * task i is perm(i), distinct for distinct i < n by construction. */
uint64_t vat_rng_permute(uint64_t key, uint64_t n, uint64_t i);
/* A 64-bit key derived from (master_seed, name, purpose) alone. */
uint64_t vat_rng_key(uint64_t master_seed, const char *name, const char *purpose);

#endif

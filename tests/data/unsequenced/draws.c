/* draws.c — deliberate cases for .ci/unsequenced-draws, read by
 * tests/unsequenced_draws.py (never compiled into vat).  Every line
 * marked "unsequenced" must be reported, with nothing else. */
#include <stdint.h>

#include "rng.h"

struct point {
    int64_t x, y;
};

static int64_t add(int64_t a, int64_t b)
{
    return a + b;
}

/* Draws through a helper, so its callers draw too (transitively). */
static int64_t hour(struct vat_rng *r)
{
    return vat_rng_range(r, 0, 23);
}

static int64_t minute_of(struct vat_rng *r)
{
    return hour(r) * 60;
}

int64_t vat_unsequenced_cases(struct vat_rng *r)
{
    int64_t a = add(vat_rng_range(r, 0, 9), vat_rng_range(r, 0, 9)); /* unsequenced */
    int64_t b = vat_rng_range(r, 0, 9) - vat_rng_range(r, 0, 9);    /* unsequenced */
    struct point p = {hour(r), minute_of(r)};                      /* unsequenced */
    int64_t c = add(hour(r), 1) + minute_of(r);                    /* unsequenced */
    /* sequenced: && and ?: order their operands; one draw per statement */
    int64_t d = vat_rng_chance(r, 0.5) && vat_rng_chance(r, 0.5);
    int64_t e = vat_rng_chance(r, 0.5) ? vat_rng_range(r, 0, 9) : vat_rng_range(r, 10, 19);
    int64_t f = vat_rng_range(r, 0, 9);
    int64_t g = vat_rng_range(r, 0, 9);
    return a + b + p.x + p.y + c + d + e + add(f, g);
}

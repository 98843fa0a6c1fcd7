/* split.c — deterministic train/test assignment (see split.h). */
#include "split.h"

#include <math.h>
#include <string.h>

#include "vat.h"

static double template_offset(const char *salt, const char *tmpl)
{
    struct vat_sha256 *h = vat_sha256_begin();
    unsigned char d[32];
    vat_sha256_add(h, salt, strlen(salt) + 1); /* the NUL separates */
    vat_sha256_add(h, tmpl, strlen(tmpl));
    vat_sha256_end(h, d);
    uint64_t v = 0;
    for (int i = 0; i < 7; i++) /* 56 bits: exact in a double */
        v = (v << 8) | d[i];
    return (double)v / 72057594037927936.0;
}

bool vat_split_is_test(const char *salt, double fraction, const char *tmpl, uint32_t index)
{
    double o = template_offset(salt, tmpl);
    return floor(((double)index + 1.0) * fraction + o) > floor((double)index * fraction + o);
}

const char *vat_split_side(const struct vat_config *c, const char *tmpl, uint32_t index)
{
    if (c->split && strcmp(c->split, "held_out_templates") == 0) {
        size_t i;
        json_t *v;
        json_array_foreach(c->held_out, i, v) {
            if (json_is_string(v) && strcmp(json_string_value(v), tmpl) == 0)
                return "test";
        }
        return "train";
    }
    return vat_split_is_test(c->split_salt ? c->split_salt : "", c->test_fraction, tmpl, index)
               ? "test"
               : "train";
}

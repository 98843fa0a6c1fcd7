/* fuzz_common.h — what every harness checks of a verdict: a code, a score
 * of 0 or 1 (the checkers give nothing between), a reason that is one line
 * of valid UTF-8 that jansson accepts, and never checker_limit (a net of
 * the checker, which no input of these sizes should reach).  A broken
 * invariant aborts, which libFuzzer reports as a finding. */
#ifndef VAT_FUZZ_COMMON_H
#define VAT_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "vat.h"

static inline void fuzz_assert_verdict(const struct vat_verdict *v)
{
    size_t n = strnlen(v->reason, sizeof v->reason);
    json_t *s = json_string(v->reason);
    bool ok = v->code && n < sizeof v->reason && s && (v->score == 0.0 || v->score == 1.0) &&
              !(v->score == 1.0 && !v->gate_passed) && strcmp(v->code, VAT_CHECKER_LIMIT) != 0 &&
              (v->score == 1.0) == (strcmp(v->code, VAT_OK) == 0);
    json_decref(s);
    for (size_t i = 0; ok && i < n; i++)
        ok = (unsigned char)v->reason[i] >= 0x20 && v->reason[i] != 0x7f;
    if (!ok) {
        fprintf(stderr, "bad verdict: code=%s gate=%d score=%g reason=%.200s\n",
                v->code ? v->code : "(null)", v->gate_passed, v->score, v->reason);
        abort();
    }
}

#endif

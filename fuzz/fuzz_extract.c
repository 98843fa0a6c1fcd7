/* fuzz_extract.c — libFuzzer harness of answer extraction
 * (verifiers/extract.c).  Input: one byte choosing the answer kind and the
 * mode, then the completion.  The answer must be a slice of the
 * completion (raw: the whole of it), its rule one of the documented
 * names, its decoding no longer than the slice, and "none" an empty
 * answer; a second extraction must give the same. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extract.h"

static const char *const kinds[] = {"value", "regex", "sql", "abstain", "other"};
static const char *const rules[] = {"raw",         "answer_tag", "fence",    "boxed",
                                    "answer_line", "sentence",   "sql_tail", "last_line",
                                    "whole",       "none"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *kind = kinds[(data[0] >> 1) % 5];
    int mode = data[0] & 1 ? VAT_EXTRACT_RAW : VAT_EXTRACT_AUTO;
    const char *text = (const char *)data + 1;
    size_t n = size - 1;
    struct vat_extraction x, y;
    if (vat_extract(kind, text, n, mode, &x) != 0 || vat_extract(kind, text, n, mode, &y) != 0)
        abort();
    bool known = false;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        known = known || strcmp(x.rule, rules[i]) == 0;
    bool ok = known && x.text == y.text && x.len == y.len && x.decode == y.decode &&
              strcmp(x.rule, y.rule) == 0 && x.text >= text && x.text + x.len <= text + n &&
              (mode != VAT_EXTRACT_RAW || (x.text == text && x.len == n)) &&
              (strcmp(x.rule, "none") != 0 || x.len == 0);
    char *out = malloc(x.len + 1);
    size_t m = vat_extract_write(&x, out);
    ok = ok && m <= x.len;
    free(out);
    if (!ok) {
        fprintf(stderr, "bad extraction: kind=%s mode=%d rule=%s len=%zu\n", kind, mode, x.rule,
                x.len);
        abort();
    }
    return 0;
}

/* fuzz_regex.c — libFuzzer harness of the regex checker.  Input: the
 * pattern, a NUL or newline, then a text.  The pattern is checked against
 * a fixed two-case spec (ISO dates, as regex_iso_dates asks) and a spec
 * whose one case is the fuzzed text, and extracted over the text.  Every
 * verdict must be well formed (fuzz_common.h); the prepared check
 * (vat_rx_prepare) repeated gives the one-off check's verdict each time;
 * an extraction either succeeds with matches that are substrings of the
 * text, or fails with a verdict. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "verifiers.h"

static json_t *dates_spec;

static const char dates_json[] =
    "{\"checker\":\"regex\",\"dialect\":\"python-re\",\"match_limit\":1000000,"
    "\"depth_limit\":10000,\"heap_limit_kib\":20000,\"max_pattern_bytes\":1024,\"cases\":["
    "{\"text\":\"deploy 2024-03-07 ok\",\"expected\":[\"2024-03-07\"],\"heldout\":false},"
    "{\"text\":\"bad 2024-13-01 and 2024-02-00 but 2022-01-15, caf\\u00e9 2021-06-30\","
    "\"expected\":[\"2022-01-15\",\"2021-06-30\"],\"heldout\":true}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dates_spec)
        dates_spec = json_loads(dates_json, 0, NULL);
    const char *s = (const char *)data;
    size_t plen = 0;
    while (plen < size && s[plen] != '\n' && s[plen] != 0)
        plen++;
    struct vat_verdict v = vat_check_regex(dates_spec, s, plen);
    fuzz_assert_verdict(&v);

    /* The rest as a text (jansson refuses text that is not UTF-8; then
     * only the pattern is exercised). */
    const char *text = plen < size ? s + plen + 1 : "";
    size_t tlen = plen < size ? size - plen - 1 : 0;
    json_t *t = json_stringn(text, tlen);
    if (!t)
        return 0;
    json_t *spec = json_deep_copy(dates_spec);
    json_t *c = json_pack("{s:O, s:[], s:b}", "text", t, "expected", "heldout", 1);
    json_array_append_new(json_object_get(spec, "cases"), c);
    v = vat_check_regex(spec, s, plen);
    fuzz_assert_verdict(&v);
    /* The library's prepared check gives the same verdict every time,
     * when the pattern is first interpreted, then JIT-compiled once the
     * interpreter met no limit (regex.c, rx_cached). */
    struct vat_rx_cache *cache = vat_rx_cache_new();
    struct vat_rx_prep *prep = vat_rx_prepare(spec, cache);
    for (int rep = 0; rep < 3; rep++) {
        struct vat_verdict pv = vat_check_regex_prepared(prep, s, plen);
        if (strcmp(pv.code, v.code) != 0 || pv.score != v.score ||
            pv.gate_passed != v.gate_passed || strcmp(pv.reason, v.reason) != 0)
            abort();
    }
    vat_rx_prep_free(prep);
    vat_rx_cache_free(cache);
    json_t *got = vat_regex_extract(spec, s, plen, json_string_value(t), &v);
    fuzz_assert_verdict(&v);
    if (got) {
        size_t i;
        json_t *m;
        json_array_foreach(got, i, m) {
            if (json_string_length(m) > json_string_length(t))
                abort();
        }
        json_decref(got);
    }
    json_decref(spec);
    json_decref(t);
    return 0;
}

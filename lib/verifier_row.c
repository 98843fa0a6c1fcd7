/* verifier_row.c — the checker spec of a verifiers row (verifier_row.h).
 * Exports vat_verifier_spec. */
#include "verifier_row.h"

json_t *vat_verifier_spec(const json_t *row)
{
    const char *text = json_string_value(json_object_get(row, "spec_json"));
    json_t *spec = text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
    if (!json_is_object(spec)) {
        json_decref(spec);
        return NULL;
    }
    const json_t *ex = json_object_get(row, "expected");
    if (json_is_string(ex)) {
        json_t *v = json_loads(json_string_value(ex), JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
                               NULL);
        if (!v) {
            json_decref(spec);
            return NULL;
        }
        json_object_set_new(spec, "expected", v);
    } else if (ex && !json_is_null(ex)) {
        json_decref(spec);
        return NULL;
    }
    return spec;
}

/* jsonout.c — deterministic JSON text (see jsonout.h). */
#include "jsonout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *vat_fmt_real(double x, char out[32])
{
    if (!isfinite(x)) {
        strcpy(out, "null");
        return out;
    }
    if (x == 0) {
        strcpy(out, signbit(x) ? "-0.0" : "0.0");
        return out;
    }
    double ax = fabs(x);
    int done = 0;
    if (ax >= 1e-4 && ax < 1e16) { /* as Python's repr */
        /* Plain decimals for the magnitudes money and means live in:
         * the fewest fraction digits that read back to the same double. */
        for (int d = 0; d <= 24 && !done; d++) {
            snprintf(out, 32, "%.*f", d, x);
            done = strtod(out, NULL) == x;
        }
    }
    if (!done) {
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(out, 32, "%.*g", prec, x);
            if (strtod(out, NULL) == x)
                break;
        }
    }
    /* Keep reals recognisably real: "12" -> "12.0" unless an exponent is
     * present (then the text already is a JSON real). */
    if (!strpbrk(out, ".eEn"))
        strcat(out, ".0");
    return out;
}

static void dump_string(struct vat_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    vat_buf_putc(b, '"');
    size_t run = 0; /* start of the pending run of bytes copied as they are */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
            continue;
        vat_buf_putn(b, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"': vat_buf_putn(b, "\\\"", 2); break;
        case '\\': vat_buf_putn(b, "\\\\", 2); break;
        case '\n': vat_buf_putn(b, "\\n", 2); break;
        case '\r': vat_buf_putn(b, "\\r", 2); break;
        case '\t': vat_buf_putn(b, "\\t", 2); break;
        case '\b': vat_buf_putn(b, "\\b", 2); break;
        case '\f': vat_buf_putn(b, "\\f", 2); break;
        default: {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            vat_buf_putn(b, u, 6);
        }
        }
    }
    vat_buf_putn(b, s + run, n - run);
    vat_buf_putc(b, '"');
}

void vat_json_dump_buf(struct vat_buf *b, const json_t *v)
{
    char num[32];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        vat_buf_putc(b, '{');
        const char *k;
        json_t *x;
        int first = 1;
        /* jansson 2.14 keeps insertion order, which is our fixed key order. */
        json_object_foreach((json_t *)v, k, x) {
            if (!first)
                vat_buf_putc(b, ',');
            first = 0;
            dump_string(b, k, strlen(k));
            vat_buf_putc(b, ':');
            vat_json_dump_buf(b, x);
        }
        vat_buf_putc(b, '}');
        break;
    }
    case JSON_ARRAY: {
        vat_buf_putc(b, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                vat_buf_putc(b, ',');
            vat_json_dump_buf(b, json_array_get(v, i));
        }
        vat_buf_putc(b, ']');
        break;
    }
    case JSON_STRING:
        dump_string(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        vat_buf_printf(b, "%lld", (long long)json_integer_value(v));
        break;
    case JSON_REAL:
        vat_buf_puts(b, vat_fmt_real(json_real_value(v), num));
        break;
    case JSON_TRUE: vat_buf_puts(b, "true"); break;
    case JSON_FALSE: vat_buf_puts(b, "false"); break;
    case JSON_NULL: vat_buf_puts(b, "null"); break;
    }
}

char *vat_json_dumps(const json_t *v)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_json_dump_buf(&b, v);
    return vat_buf_detach(&b);
}

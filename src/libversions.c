/* libversions.c — the library versions a corpus was built with (see
 * libversions.h). */
#include "libversions.h"

#include <stdio.h>
#include <string.h>

#include <csv.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <sqlite3.h>
#include <xlsxwriter.h>
#include <zlib.h>

#include "vat.h"

#define STR2(x) #x
#define STR(x) STR2(x)

void vat_library_list(struct vat_library out[VAT_N_LIBRARIES])
{
    memset(out, 0, VAT_N_LIBRARIES * sizeof *out);
    out[0].name = "jansson";
    snprintf(out[0].version, sizeof out[0].version, "%s", jansson_version_str());
    out[1].name = "libcsv";
    snprintf(out[1].version, sizeof out[1].version, "%s",
             STR(CSV_MAJOR) "." STR(CSV_MINOR) "." STR(CSV_RELEASE));
    out[2].name = "libxlsxwriter";
    snprintf(out[2].version, sizeof out[2].version, "%s", lxw_version());
    out[3].name = "pcre2";
    /* "10.42 2022-12-11": the number is the version, the date is noise */
    char pv[64] = "";
    if (pcre2_config(PCRE2_CONFIG_VERSION, pv) < 0)
        snprintf(pv, sizeof pv, "%d.%d", PCRE2_MAJOR, PCRE2_MINOR);
    pv[strcspn(pv, " ")] = 0;
    snprintf(out[3].version, sizeof out[3].version, "%.31s", pv);
    out[4].name = "sqlite";
    snprintf(out[4].version, sizeof out[4].version, "%s", sqlite3_libversion());
    /* libxlsxwriter deflates the workbook's parts through zlib, whose
     * version decides the compressed bytes of every .xlsx fixture. */
    out[5].name = "zlib";
    snprintf(out[5].version, sizeof out[5].version, "%s", zlibVersion());
}

json_t *vat_library_versions(void)
{
    struct vat_library l[VAT_N_LIBRARIES];
    vat_library_list(l);
    json_t *o = json_object();
    for (int i = 0; i < VAT_N_LIBRARIES; i++)
        json_object_set_new(o, l[i].name, json_string(l[i].version));
    return o;
}

/* A recorded version comes from a file anyone may have edited: at most 40
 * printable ASCII characters of it reach the one-line warning. */
static void put_recorded(struct vat_buf *b, const char *s)
{
    for (size_t i = 0; s[i] && i < 40; i++)
        vat_buf_putc(b, s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?');
}

char *vat_library_versions_diff(const json_t *recorded)
{
    struct vat_library l[VAT_N_LIBRARIES];
    vat_library_list(l);
    struct vat_buf b = VAT_BUF_INIT;
    for (int i = 0; i < VAT_N_LIBRARIES; i++) {
        const char *was = json_is_object(recorded)
                              ? json_string_value(json_object_get(recorded, l[i].name))
                              : NULL;
        if (was && strcmp(was, l[i].version) == 0)
            continue;
        if (b.len)
            vat_buf_puts(&b, "; ");
        if (was) {
            vat_buf_printf(&b, "%s: built with ", l[i].name);
            put_recorded(&b, was);
            vat_buf_printf(&b, ", running %s", l[i].version);
        } else
            vat_buf_printf(&b, "%s: not recorded, running %s", l[i].name, l[i].version);
    }
    if (!b.len) {
        vat_buf_release(&b);
        return NULL;
    }
    return vat_buf_detach(&b);
}

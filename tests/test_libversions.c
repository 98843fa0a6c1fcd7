/* test_libversions.c — the library versions a corpus records
 * (src/libversions.h): each asked of the library itself, in a fixed
 * order, and the comparison `vat verify` warns with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <csv.h>
#include <jansson.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <sqlite3.h>
#include <xlsxwriter.h>
#include <zlib.h>

#include "libversions.h"
#include "vat.h"

static void test_versions_are_the_libraries(void **state)
{
    (void)state;
    json_t *v = vat_library_versions();
    assert_true(json_is_object(v));
    assert_int_equal(json_object_size(v), VAT_N_LIBRARIES);
    assert_string_equal(json_string_value(json_object_get(v, "sqlite")), sqlite3_libversion());
    assert_string_equal(json_string_value(json_object_get(v, "jansson")), jansson_version_str());
    char csv[32];
    snprintf(csv, sizeof csv, "%d.%d.%d", CSV_MAJOR, CSV_MINOR, CSV_RELEASE);
    assert_string_equal(json_string_value(json_object_get(v, "libcsv")), csv);
    char pcre[32];
    snprintf(pcre, sizeof pcre, "%d.%d", PCRE2_MAJOR, PCRE2_MINOR);
    assert_string_equal(json_string_value(json_object_get(v, "pcre2")), pcre);
    assert_string_equal(json_string_value(json_object_get(v, "libxlsxwriter")), LXW_VERSION);
    assert_string_equal(json_string_value(json_object_get(v, "zlib")), ZLIB_VERSION);

    /* the list is in name order, the object's keys in the same order */
    struct vat_library l[VAT_N_LIBRARIES];
    vat_library_list(l);
    const char *key;
    json_t *val;
    int i = 0;
    json_object_foreach(v, key, val) {
        assert_string_equal(key, l[i].name);
        assert_string_equal(json_string_value(val), l[i].version);
        if (i > 0)
            assert_true(strcmp(l[i - 1].name, l[i].name) < 0);
        i++;
    }
    assert_int_equal(i, VAT_N_LIBRARIES);
    json_decref(v);
}

static void test_diff_names_each_difference(void **state)
{
    (void)state;
    json_t *v = vat_library_versions();
    assert_null(vat_library_versions_diff(v)); /* the same build: no warning */

    json_object_set_new(v, "sqlite", json_string("3.46.0"));
    char *d = vat_library_versions_diff(v);
    assert_non_null(d);
    char *want = vat_xasprintf("sqlite: built with 3.46.0, running %s", sqlite3_libversion());
    assert_string_equal(d, want);
    free(want);
    free(d);

    /* a missing entry and a hostile one: named, on one printable line */
    json_object_del(v, "pcre2");
    json_object_set_new(v, "jansson", json_string("2.14\nrm -rf /\x1b[0m"));
    d = vat_library_versions_diff(v);
    assert_non_null(d);
    assert_non_null(strstr(d, "jansson: built with 2.14?rm -rf /?[0m, running "));
    assert_non_null(strstr(d, "pcre2: not recorded, running "));
    assert_non_null(strstr(d, "sqlite: built with 3.46.0"));
    assert_null(strstr(d, "libcsv"));
    assert_null(strchr(d, '\n'));
    free(d);
    json_decref(v);

    /* no record at all: every library is named */
    d = vat_library_versions_diff(NULL);
    assert_non_null(d);
    for (const char *n = "jansson\0libcsv\0pcre2\0sqlite\0"; *n; n += strlen(n) + 1) {
        char *s = vat_xasprintf("%s: not recorded", n);
        assert_non_null(strstr(d, s));
        free(s);
    }
    free(d);
    json_t *notobj = json_string("3.40.1");
    d = vat_library_versions_diff(notobj);
    assert_non_null(strstr(d, "sqlite: not recorded"));
    free(d);
    json_decref(notobj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions_are_the_libraries),
        cmocka_unit_test(test_diff_names_each_difference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

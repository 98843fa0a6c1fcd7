/* libversions.h — the versions of the libraries whose behaviour can shape
 * the corpus bytes: SQLite (fixture pages, query results behind gold),
 * PCRE2 (regex gold and held-out verdicts), jansson (parsing the JSON the
 * build reads back), libcsv (parsing CSV fixtures behind gold), and
 * libxlsxwriter and zlib (the bytes of workbook fixtures).  The
 * compiler, optimisation level, --jobs and the machine do not shape the
 * bytes; these libraries can, so the corpus records them
 * (docs/determinism.md).  Exports struct vat_library, VAT_N_LIBRARIES,
 * vat_library_list, vat_library_versions and vat_library_versions_diff. */
#ifndef VAT_LIBVERSIONS_H
#define VAT_LIBVERSIONS_H

#include <jansson.h>

#define VAT_N_LIBRARIES 6

struct vat_library {
    const char *name; /* "jansson", "libcsv", "libxlsxwriter", "pcre2", "sqlite", "zlib" */
    char version[32]; /* e.g. "3.40.1" */
};

/* Fills out[] with the libraries in name order.  Versions are those of
 * the libraries running (SQLite, PCRE2, jansson ask the library itself);
 * libcsv has no run-time query, so its version is the header's vat was
 * compiled against (Debian's soname pins the ABI). */
void vat_library_list(struct vat_library out[VAT_N_LIBRARIES]);

/* A new JSON object {"jansson": "2.14", "libcsv": "3.0.3", "pcre2":
 * "10.42", "sqlite": "3.40.1"} (keys in that order), for the manifest's
 * "libraries" member and anything else that records a build. */
json_t *vat_library_versions(void);

/* Compares versions recorded by a build (an object as returned by
 * vat_library_versions, e.g. read from a manifest) with the running ones.
 * Returns NULL when every library matches, else a new one-line string
 * naming each difference, e.g. "sqlite: built with 3.40.1, running
 * 3.46.0; pcre2: not recorded", for `vat verify` to print as a warning (a
 * rebuild under other versions could give other bytes).  A recorded
 * value that is not an object reports every library as not recorded. */
char *vat_library_versions_diff(const json_t *recorded);

#endif

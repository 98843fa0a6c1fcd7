/* test_extsort.c — the external merge sort (src/extsort.h): whatever the
 * budget (everything in memory, a few runs, more runs than one merge
 * reads so merges run in passes), records come back in memcmp order,
 * prefixes first, repeats kept, a record larger than the budget and
 * empty records included; nothing is left in the temporary folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "extsort.h"
#include "rng.h"
#include "testutil.h"

struct rec {
    unsigned char *p;
    size_t n;
};

static int cmp_rec(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = n ? memcmp(x->p, y->p, n) : 0;
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

static size_t files_in(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Sorts n random records (a small alphabet, so prefixes and repeats are
 * common) with the given budget and compares with qsort. */
static void sort_and_compare(const char *dir, size_t n, size_t budget, size_t big)
{
    struct vat_rng r;
    vat_rng_seed(&r, 42, 54);
    struct rec *v = vat_xcalloc(n + 2, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        size_t len = vat_rng_below(&r, 24);
        v[i].p = vat_xmalloc(len ? len : 1);
        for (size_t k = 0; k < len; k++)
            v[i].p[k] = (unsigned char)vat_rng_below(&r, 3);
        v[i].n = len;
    }
    size_t m = n;
    if (big) { /* one record far over the budget, and an empty one */
        v[m].p = vat_xmalloc(big);
        memset(v[m].p, 1, big);
        v[m++].n = big;
        v[m].p = vat_xmalloc(1);
        v[m++].n = 0;
    }
    struct vat_xsort s;
    struct vat_err e = {{0}};
    vat_xsort_init(&s, dir, budget);
    for (size_t i = 0; i < m; i++)
        assert_int_equal(vat_xsort_add(&s, v[i].p, v[i].n, &e), 0);
    if (n > 500000)
        assert_true(s.nruns > VAT_XSORT_FANIN); /* more runs than one merge reads */
    assert_int_equal(vat_xsort_finish(&s, &e), 0);
    if (n > 500000)
        assert_true(s.nruns <= VAT_XSORT_FANIN); /* merged in passes down to one merge */
    assert_int_equal(files_in(dir), 0);           /* unlinked as soon as made */
    qsort(v, m, sizeof *v, cmp_rec);
    const unsigned char *p;
    size_t len;
    for (size_t i = 0; i < m; i++) {
        assert_int_equal(vat_xsort_next(&s, &p, &len, &e), 1);
        assert_int_equal(len, v[i].n);
        if (len)
            assert_memory_equal(p, v[i].p, len);
    }
    assert_int_equal(vat_xsort_next(&s, &p, &len, &e), 0);
    vat_xsort_release(&s);
    for (size_t i = 0; i < m; i++)
        free(v[i].p);
    free(v);
}

static void test_in_memory(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("extsort");
    sort_and_compare(dir, 5000, (size_t)64 << 20, 0);
    vat_test_rmtree(dir);
    free(dir);
}

static void test_spilled_runs(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("extsort");
    sort_and_compare(dir, 60000, VAT_XSORT_MIN_BUDGET, 200000);
    vat_test_rmtree(dir);
    free(dir);
}

static void test_merge_passes(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("extsort");
    /* about 30 MB of records and their places at 64 KiB a run: well over
     * one merge's runs */
    sort_and_compare(dir, 700000, VAT_XSORT_MIN_BUDGET, 1000);
    vat_test_rmtree(dir);
    free(dir);
}

static void test_empty(void **state)
{
    (void)state;
    struct vat_xsort s;
    struct vat_err e = {{0}};
    vat_xsort_init(&s, NULL, 0);
    assert_int_equal(vat_xsort_finish(&s, &e), 0);
    const unsigned char *p;
    size_t len;
    assert_int_equal(vat_xsort_next(&s, &p, &len, &e), 0);
    vat_xsort_release(&s);
}

static void test_missing_dir(void **state)
{
    (void)state;
    struct vat_xsort s;
    struct vat_err e = {{0}};
    vat_xsort_init(&s, "/nonexistent/vat-test", 0);
    unsigned char rec[4096] = {0};
    int rc = 0;
    for (int i = 0; i < 64 && rc == 0; i++)
        rc = vat_xsort_add(&s, rec, sizeof rec, &e);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(e.msg, "cannot create a temporary file in '/nonexistent/vat-test'"));
    vat_xsort_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_memory),   cmocka_unit_test(test_spilled_runs),
        cmocka_unit_test(test_merge_passes), cmocka_unit_test(test_empty),
        cmocka_unit_test(test_missing_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

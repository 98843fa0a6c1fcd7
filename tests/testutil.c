/* testutil.c — see testutil.h. */
#define _XOPEN_SOURCE 700
#include "testutil.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *vat_test_tmpdir(const char *tag)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    size_t n = strlen(base) + strlen(tag) + 32;
    char *p = malloc(n);
    snprintf(p, n, "%s/vat-%s-XXXXXX", base, tag);
    if (!mkdtemp(p)) {
        perror("mkdtemp");
        abort();
    }
    return p;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void vat_test_rmtree(const char *dir)
{
    if (!dir || strstr(dir, "/vat-") == NULL)
        return;
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *vat_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    fclose(f);
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

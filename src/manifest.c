/* manifest.c — out/manifest.json and the walk of a corpus's trees (see
 * manifest.h).  Directories are read from descriptors opened beneath the
 * root with O_NOFOLLOW, so a symbolic link anywhere in out/ or fixtures/
 * is listed as what it is and never followed. */
#include "manifest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libversions.h"
#include "vat.h"

struct tree_vec {
    struct vat_tree_entry *v;
    size_t n, cap;
};

static void tree_push(struct tree_vec *t, char *rel, enum vat_tree_kind kind,
                      const struct stat *st)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->v = vat_xrealloc(t->v, t->cap * sizeof *t->v);
    }
    t->v[t->n] = (struct vat_tree_entry){rel, kind, {0}};
    vat_file_id_of(st, &t->v[t->n++].id);
}

/* Walks the directory dfd (owned, closed here) whose path is rel. */
static int walk(int dfd, const char *rel, struct tree_vec *t, int depth, struct vat_err *e)
{
    if (depth > 32) {
        close(dfd);
        return vat_err_set(e, "vat: '%s' nests deeper than 32 directories", rel);
    }
    DIR *d = fdopendir(dfd);
    if (!d) {
        int err = errno;
        close(dfd);
        return vat_err_set(e, "vat: cannot read directory '%s': %s", rel, strerror(err));
    }
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *child = vat_xasprintf("%s/%s", rel, de->d_name);
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = vat_err_set(e, "vat: cannot stat '%s': %s", child, strerror(errno));
            free(child);
        } else if (S_ISDIR(st.st_mode)) {
            int cfd = openat(dirfd(d), de->d_name,
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0)
                rc = vat_err_set(e, "vat: cannot open directory '%s': %s", child,
                                 strerror(errno));
            else
                rc = walk(cfd, child, t, depth + 1, e);
            free(child);
        } else if (strcmp(child, VAT_MANIFEST_REL) == 0 && S_ISREG(st.st_mode)) {
            free(child);
        } else {
            tree_push(t, child,
                      S_ISREG(st.st_mode)   ? VAT_TREE_FILE
                      : S_ISLNK(st.st_mode) ? VAT_TREE_SYMLINK
                                            : VAT_TREE_OTHER,
                      &st);
        }
    }
    closedir(d);
    return rc;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct vat_tree_entry *)a)->rel, ((const struct vat_tree_entry *)b)->rel);
}

int vat_tree_list(const char *root, struct vat_tree_entry **out, size_t *n, struct vat_err *e)
{
    *out = NULL;
    *n = 0;
    int rfd = vat_root_open(root, e);
    if (rfd < 0)
        return -1;
    struct tree_vec t = {NULL, 0, 0};
    static const char *const trees[] = {"fixtures", "out"};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof trees / sizeof trees[0]; i++) {
        struct stat st;
        if (fstatat(rfd, trees[i], &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno != ENOENT)
                rc = vat_err_set(e, "vat: cannot stat '%s': %s", trees[i], strerror(errno));
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            tree_push(&t, vat_xstrdup(trees[i]),
                      S_ISLNK(st.st_mode) ? VAT_TREE_SYMLINK
                      : S_ISREG(st.st_mode) ? VAT_TREE_FILE
                                            : VAT_TREE_OTHER,
                      &st);
            continue;
        }
        int dfd = openat(rfd, trees[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
            rc = vat_err_set(e, "vat: cannot open directory '%s': %s", trees[i], strerror(errno));
        else
            rc = walk(dfd, trees[i], &t, 0, e);
    }
    close(rfd);
    if (rc != 0) {
        vat_tree_free(t.v, t.n);
        return -1;
    }
    if (t.n > 1)
        qsort(t.v, t.n, sizeof *t.v, cmp_entry);
    *out = t.v;
    *n = t.n;
    return 0;
}

void vat_tree_free(struct vat_tree_entry *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].rel);
    free(v);
}

int vat_sha256_beneath(const char *root, const char *rel, char out[65], struct vat_err *e)
{
    /* O_NONBLOCK kept: read only once fstat says it is regular. */
    int fd = vat_open_beneath(root, rel, O_RDONLY | O_NONBLOCK, e);
    return fd < 0 ? -1 : vat_sha256_fd(fd, rel, out, e);
}

int vat_manifest_write(const char *root, struct vat_err *e)
{
    struct vat_tree_entry *v;
    size_t n;
    if (vat_tree_list(root, &v, &n, e) != 0)
        return -1;
    json_t *files = json_object();
    int rc = 0;
    vat_dirs_keep_begin();
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char sha[65];
        if (v[i].kind != VAT_TREE_FILE)
            rc = vat_err_set(e, "vat: '%s' is %s; a corpus holds regular files only", v[i].rel,
                             v[i].kind == VAT_TREE_SYMLINK ? "a symbolic link"
                                                           : "not a regular file");
        /* A file this build wrote and nothing has changed since: the
         * digest of the bytes it wrote (src/filememo.h, vat_written_*). */
        else if (!vat_written_find(root, v[i].rel, &v[i].id, sha) &&
                 vat_sha256_beneath(root, v[i].rel, sha, e) != 0)
            rc = -1;
        else
            json_object_set_new(files, v[i].rel, json_string(sha)); /* sorted: v is */
    }
    vat_dirs_keep_end();
    vat_tree_free(v, n);
    if (rc != 0) {
        json_decref(files);
        return -1;
    }
    /* The libraries whose versions can shape the bytes (docs/determinism.md). */
    json_t *libs = vat_library_versions();
    char *text = vat_manifest_text(VAT_VERSION, libs, files);
    json_decref(libs);
    json_decref(files);
    rc = vat_write_file_atomic(root, VAT_MANIFEST_REL, text, strlen(text), e);
    free(text);
    return rc;
}

char *vat_manifest_text(const char *vat_version, const json_t *libraries, const json_t *files)
{
    json_t *m = json_object();
    json_object_set_new(m, "manifest_version", json_integer(VAT_MANIFEST_VERSION));
    json_object_set_new(m, "vat_version", json_string(vat_version));
    json_object_set_new(m, "libraries", libraries ? json_deep_copy(libraries) : json_object());
    json_object_set_new(m, "files", json_deep_copy(files));
    /* Strings and one integer only: jansson's own printer is exact here,
     * and one file per line keeps a diff of two manifests readable. */
    char *text = json_dumps(m, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(m);
    if (!text) { /* jansson fails here only when out of memory */
        fputs("vat: out of memory\n", stderr);
        abort();
    }
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, text);
    vat_buf_putc(&b, '\n');
    free(text);
    return vat_buf_detach(&b);
}

json_t *vat_manifest_load(const char *root, struct vat_err *e)
{
    char *data = NULL;
    size_t len = 0;
    /* It may be a symbolic link to a regular file (a Hugging Face cache
     * snapshot): the other files are trusted by the digests it lists. */
    if (vat_read_file_linked(root, VAT_MANIFEST_REL, (size_t)256 << 20, NULL, true, &data, &len,
                             e) != 0)
        return NULL;
    json_error_t je;
    json_t *m = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
    free(data);
    if (!m) {
        vat_err_set(e, "vat: cannot parse '%s': line %d: %s", VAT_MANIFEST_REL, je.line, je.text);
        return NULL;
    }
    const json_t *files = json_object_get(m, "files");
    if (!json_is_object(m) || json_integer_value(json_object_get(m, "manifest_version")) !=
                                  VAT_MANIFEST_VERSION ||
        !json_is_object(files)) {
        json_decref(m);
        vat_err_set(e, "vat: '%s' is not a version %d manifest", VAT_MANIFEST_REL,
                    VAT_MANIFEST_VERSION);
        return NULL;
    }
    const char *k;
    const json_t *x;
    json_object_foreach((json_t *)files, k, x) {
        const char *s = json_string_value(x);
        if (!vat_path_is_safe(k) || !s || strlen(s) != 64 || strspn(s, "0123456789abcdef") != 64) {
            json_decref(m);
            vat_err_set(e, "vat: '%s' has a malformed entry '%.100s'", VAT_MANIFEST_REL, k);
            return NULL;
        }
    }
    return m;
}

const char *vat_manifest_sha(const json_t *manifest, const char *rel)
{
    return json_string_value(json_object_get(json_object_get(manifest, "files"), rel));
}

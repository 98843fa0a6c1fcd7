/* cmd_pack.c — `vat pack --root DIR --to DEST`: one folder, one dataset.
 *
 * A build keeps its own layout (DIR/out/ with the tables and the card,
 * DIR/fixtures/), where the card sits one folder below the paths its rows
 * name.  pack writes DEST as one uploadable dataset: DEST/README.md (the
 * card, its data_files under out/), DEST/out/<table>/<split>.jsonl,
 * DEST/fixtures/... (every fixture a row names), DEST/.gitattributes
 * (every binary kind vat writes, and any file over 10 MB, through Git
 * LFS) and DEST/out/manifest.json, the manifest of the packed layout
 * (those files, README.md and .gitattributes included), so every path of
 * every row resolves from DEST and `vat verify --root DEST` proves it.
 *
 * Files are hard links where the file system allows and copies otherwise.
 * vat never writes into an existing file (it writes a temporary file and
 * renames it), so a later build cannot change a packed file through its
 * link.  Nothing existing is ever written: DEST is assembled in a new
 * sibling folder DEST.tmp, every file created with O_EXCL, and renamed
 * into place at the end (DEST may exist only as an empty folder); on any
 * failure what was created is removed.  Exports vat_pack, vat_cmd_pack. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "card.h"
#include "cli.h"
#include "manifest.h"
#include "tables.h"

/* Every binary kind vat writes (SQLite databases, Excel workbooks) goes
 * through Git LFS, as dataset hubs require of binary files; so does any
 * file over VAT_PACK_LFS_BYTES, which hubs refuse outside LFS. */
static const char gitattributes[] =
    "# Binary fixtures (SQLite databases, Excel workbooks) and files over 10 MB go through\n"
    "# Git LFS, as dataset hubs require.\n"
    "*.sqlite filter=lfs diff=lfs merge=lfs -text\n"
    "*.sqlite3 filter=lfs diff=lfs merge=lfs -text\n"
    "*.db filter=lfs diff=lfs merge=lfs -text\n"
    "*.xlsx filter=lfs diff=lfs merge=lfs -text\n";
#define VAT_PACK_LFS_BYTES 10000000LL

/* What pack created below the staging folder, to undo on failure. */
struct created {
    char **path; /* absolute-or-relative paths as opened, in creation order */
    size_t n, cap;
};

static void created_add(struct created *c, const char *path)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->path = vat_xrealloc(c->path, c->cap * sizeof *c->path);
    }
    c->path[c->n++] = vat_xstrdup(path);
}

/* Removes everything created, newest first (files before their folders). */
static void created_undo(struct created *c)
{
    for (size_t i = c->n; i-- > 0;)
        if (unlink(c->path[i]) != 0)
            rmdir(c->path[i]);
}

static void created_release(struct created *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->path[i]);
    free(c->path);
    memset(c, 0, sizeof *c);
}

/* Creates the folders of rel below base that do not exist yet. */
static int make_parents(const char *base, const char *rel, struct created *cr, struct vat_err *e)
{
    char *p = vat_path_join(base, rel);
    size_t skip = strlen(base) + 1;
    for (char *s = p + skip; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, 0777) == 0)
            created_add(cr, p);
        else if (errno != EEXIST) {
            vat_err_set(e, "vat pack: cannot create '%s': %s", p, strerror(errno));
            free(p);
            return -1;
        }
        *s = '/';
    }
    free(p);
    return 0;
}

/* Writes len bytes to a new file (never an existing one). */
static int write_new(const char *path, const char *data, size_t len, struct created *cr,
                     struct vat_err *e)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return vat_err_set(e, "vat pack: cannot create '%s': %s", path, strerror(errno));
    created_add(cr, path);
    int err = vat_write_all_close(fd, data, len);
    if (err != 0)
        return vat_err_set(e, "vat pack: cannot write '%s': %s", path,
                           err > 0 ? strerror(err) : "short write");
    return 0;
}

/* Copies the regular file from into a new file to. */
static int copy_new(const char *from, const char *to, struct created *cr, struct vat_err *e)
{
    int in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0)
        return vat_err_set(e, "vat pack: cannot open '%s': %s", from, strerror(errno));
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0) {
        close(in);
        return vat_err_set(e, "vat pack: cannot create '%s': %s", to, strerror(errno));
    }
    created_add(cr, to);
    char buf[65536];
    int rc = 0;
    for (;;) {
        ssize_t r = read(in, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = vat_err_set(e, "vat pack: cannot read '%s': %s", from, strerror(errno));
            break;
        }
        if (r == 0)
            break;
        for (ssize_t off = 0; off < r && rc == 0;) {
            ssize_t w = write(out, buf + off, (size_t)(r - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                rc = vat_err_set(e, "vat pack: cannot write '%s': %s", to, strerror(errno));
            else
                off += w;
        }
        if (rc)
            break;
    }
    close(in);
    if (close(out) != 0 && rc == 0)
        rc = vat_err_set(e, "vat pack: cannot write '%s': %s", to, strerror(errno));
    return rc;
}

/* Places root/rel at stage/rel: a hard link, else a copy; *size gets its
 * size. */
static int place(const char *root, const char *stage, const char *rel, struct vat_pack_stats *st,
                 struct created *cr, long long *size, struct vat_err *e)
{
    if (!vat_path_is_safe(rel))
        return vat_err_set(e, "vat pack: a row names the unsafe path '%s'", rel);
    char *from = vat_path_join(root, rel), *to = vat_path_join(stage, rel);
    int rc = 0;
    struct stat sb;
    if (lstat(from, &sb) != 0)
        rc = vat_err_set(e, "vat pack: '%s' named by the tables is missing below '%s': %s", rel,
                         root, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        rc = vat_err_set(e, "vat pack: '%s' below '%s' is not a regular file", rel, root);
    else if (make_parents(stage, rel, cr, e) != 0)
        rc = -1;
    else if (link(from, to) == 0) {
        created_add(cr, to);
        st->linked++;
        st->bytes += (long long)sb.st_size;
    } else if (errno == EXDEV || errno == EPERM || errno == EMLINK || errno == ENOTSUP ||
               errno == EACCES) {
        rc = copy_new(from, to, cr, e);
        if (rc == 0) {
            st->copied++;
            st->bytes += (long long)sb.st_size;
        }
    } else {
        rc = vat_err_set(e, "vat pack: cannot link '%s' to '%s': %s", from, to, strerror(errno));
    }
    if (rc == 0)
        *size = (long long)sb.st_size;
    free(from);
    free(to);
    return rc;
}

/* Adds rel to the set (a JSON object used as a sorted-on-output set). */
static void add_path(json_t *set, const json_t *v)
{
    if (json_is_string(v))
        json_object_set_new(set, json_string_value(v), json_true());
}

/* Every fixture path any row names: fixture_generators paths, experience
 * fixture and variants, verifiers spec fixtures. */
static int row_paths(const char *root, json_t *set, struct vat_err *e)
{
    static const int tables[] = {VAT_T_FIXTURE_GENERATORS, VAT_T_EXPERIENCE, VAT_T_VERIFIERS};
    for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++) {
        int t = tables[k];
        for (int s = 0; s < VAT_N_SPLITS; s++) {
            char rel[VAT_TABLE_REL_MAX];
            vat_table_rel(rel, t, s);
            char *path = vat_path_join(root, rel);
            FILE *f = fopen(path, "rb");
            free(path);
            if (!f)
                return vat_err_set(e, "vat pack: cannot open '%s' below '%s': %s (run 'vat build')",
                                   rel, root, strerror(errno));
            char *line = NULL;
            size_t cap = 0;
            ssize_t got;
            long lineno = 0;
            int rc = 0;
            while (rc == 0 && (got = getline(&line, &cap, f)) > 0) {
                lineno++;
                json_t *row = json_loadb(line, (size_t)got, JSON_REJECT_DUPLICATES, NULL);
                if (!json_is_object(row)) {
                    rc = vat_err_set(e, "vat pack: %s line %ld is not a JSON object", rel, lineno);
                } else if (t == VAT_T_FIXTURE_GENERATORS) {
                    add_path(set, json_object_get(row, "path"));
                } else if (t == VAT_T_EXPERIENCE) {
                    add_path(set, json_object_get(json_object_get(row, "fixture"), "path"));
                    size_t i;
                    json_t *v;
                    json_array_foreach(json_object_get(row, "variants"), i, v)
                        add_path(set, json_object_get(v, "path"));
                } else {
                    json_t *spec = vat_verifier_spec(row);
                    size_t i;
                    json_t *v;
                    json_array_foreach(json_object_get(spec, "fixtures"), i, v)
                        add_path(set, v);
                    json_decref(spec);
                }
                json_decref(row);
            }
            free(line);
            fclose(f);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int pack(const char *root, const char *dest, struct vat_pack_stats *st, struct vat_err *e);

/* Whether dest (which may not exist yet) is root or lies below it, symbolic
 * links resolved: a dataset packed there would become files of the corpus
 * it was packed from (below out/, every one a mismatch for `vat verify`). */
static bool dest_inside_root(const char *root, const char *dest)
{
    char r[PATH_MAX], d[PATH_MAX];
    if (!realpath(root, r))
        return false;
    if (!realpath(dest, d)) {
        /* not there yet: its folder resolved, its own name appended */
        const char *slash = strrchr(dest, '/');
        char *parent = slash ? vat_xstrndup(dest, slash == dest ? 1 : (size_t)(slash - dest))
                             : vat_xstrdup(".");
        bool ok = realpath(parent, d) != NULL;
        free(parent);
        if (!ok)
            return false;
        size_t n = strlen(d);
        int k = snprintf(d + n, sizeof d - n, "%s%s", n && d[n - 1] == '/' ? "" : "/",
                         slash ? slash + 1 : dest);
        if (k < 0 || (size_t)k >= sizeof d - n)
            return false;
    }
    size_t rn = strlen(r);
    return strncmp(d, r, rn) == 0 && (d[rn] == 0 || d[rn] == '/' || (rn == 1 && r[0] == '/'));
}

int vat_pack(const char *root, const char *dest, struct vat_pack_stats *st, struct vat_err *e)
{
    memset(st, 0, sizeof *st);
    /* "DEST/" names DEST: the staging folder must be its sibling, not its child. */
    char *d = vat_xstrdup(dest ? dest : "");
    size_t n = strlen(d);
    while (n > 1 && d[n - 1] == '/')
        d[--n] = 0;
    int rc = 0;
    if (n == 0 || strcmp(d, "/") == 0 || strcmp(d, ".") == 0 || strcmp(d, "..") == 0 ||
        (n >= 2 && strcmp(d + n - 2, "/.") == 0) || (n >= 3 && strcmp(d + n - 3, "/..") == 0))
        rc = vat_err_set(e, "vat pack: '%s' cannot be a new dataset folder; name a new one",
                         dest ? dest : "");
    else if (dest_inside_root(root, d))
        rc = vat_err_set(e, "vat pack: '%s' is inside the corpus root '%s'; pack into a folder "
                            "outside it",
                         dest, root);
    else
        rc = pack(root, d, st, e);
    free(d);
    return rc;
}

static int pack(const char *root, const char *dest, struct vat_pack_stats *st, struct vat_err *e)
{
    struct stat sb;
    if (stat(dest, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode))
            return vat_err_set(e, "vat pack: '%s' exists and is not a folder", dest);
        if (rmdir(dest) != 0) /* only an empty folder may be replaced */
            return vat_err_set(e, "vat pack: '%s' exists and is not empty; pack into a new folder",
                               dest);
        if (mkdir(dest, 0777) != 0) /* put it back until the rename */
            return vat_err_set(e, "vat pack: cannot recreate '%s': %s", dest, strerror(errno));
    }
    char *card = vat_card_packed(root, e);
    if (!card)
        return -1;
    json_t *set = json_object();
    if (row_paths(root, set, e) != 0) {
        json_decref(set);
        free(card);
        return -1;
    }

    /* The files, in a fixed order: the tables, the fixtures.  The build's
     * manifest stays behind: the pack gets one of its own layout. */
    size_t n = 0, cap = json_object_size(set) + 2 * VAT_N_TABLES;
    char **rel = vat_xcalloc(cap, sizeof *rel);
    for (int t = 0; t < VAT_N_TABLES; t++)
        for (int s = 0; s < VAT_N_SPLITS; s++)
            rel[n++] = vat_xasprintf("out/%s/%s.jsonl", vat_table_names[t], vat_split_names[s]);
    size_t nfix_start = n;
    const char *k;
    json_t *x;
    json_object_foreach(set, k, x)
        rel[n++] = vat_xstrdup(k);
    qsort(rel + nfix_start, n - nfix_start, sizeof *rel, cmp_str);
    json_decref(set);

    char *stage = vat_xasprintf("%s.tmp", dest);
    struct created cr = {0};
    int rc = 0;
    /* The build's digests, for the pack's manifest: a file changed since
     * the build keeps the digest the build recorded, so `vat verify` on
     * the pack names it rather than the pack vouching for it. */
    struct vat_err ignore = {{0}};
    json_t *built = vat_manifest_load(root, &ignore);
    json_t *sums = json_object();
    struct vat_buf attrs = VAT_BUF_INIT;
    vat_buf_puts(&attrs, gitattributes);
    if (mkdir(stage, 0777) != 0) {
        rc = vat_err_set(e, "vat pack: cannot create '%s': %s%s", stage, strerror(errno),
                         errno == EEXIST ? " (left by an interrupted pack? remove it)" : "");
    } else {
        created_add(&cr, stage);
        bool big = false;
        for (size_t i = 0; i < n && rc == 0; i++) {
            long long size = 0;
            if (i >= nfix_start && strncmp(rel[i], "fixtures/", 9) != 0)
                rc = vat_err_set(e, "vat pack: a row names '%s', outside fixtures/", rel[i]);
            else
                rc = place(root, stage, rel[i], st, &cr, &size, e);
            if (rc == 0 && i >= nfix_start)
                st->fixtures++;
            const char *sha = built ? vat_manifest_sha(built, rel[i]) : NULL;
            char hex[65];
            if (rc == 0 && !sha && vat_sha256_beneath(stage, rel[i], hex, e) == 0)
                sha = hex;
            if (rc == 0 && !sha)
                rc = -1;
            if (rc == 0)
                json_object_set_new(sums, rel[i], json_string(sha));
            if (rc == 0 && size > VAT_PACK_LFS_BYTES) {
                if (!big)
                    vat_buf_puts(&attrs, "# Files over 10 MB.\n");
                big = true;
                vat_buf_printf(&attrs, "%s filter=lfs diff=lfs merge=lfs -text\n", rel[i]);
            }
        }
        char *readme = vat_path_join(stage, "README.md");
        char *ga = vat_path_join(stage, ".gitattributes");
        char *man = vat_path_join(stage, VAT_MANIFEST_REL);
        if (rc == 0)
            rc = write_new(readme, card, strlen(card), &cr, e);
        if (rc == 0)
            rc = write_new(ga, attrs.data, attrs.len, &cr, e);
        if (rc == 0) {
            char hex[65];
            vat_sha256_hex(card, strlen(card), hex);
            json_object_set_new(sums, "README.md", json_string(hex));
            vat_sha256_hex(attrs.data, attrs.len, hex);
            json_object_set_new(sums, ".gitattributes", json_string(hex));
            /* the manifest of the packed layout, keys in byte order */
            const char **keys = vat_xcalloc(json_object_size(sums) + 1, sizeof *keys);
            size_t nk = 0;
            const char *key;
            json_t *sum;
            json_object_foreach(sums, key, sum)
                keys[nk++] = key;
            qsort(keys, nk, sizeof *keys, cmp_str);
            json_t *files = json_object();
            for (size_t i = 0; i < nk; i++)
                json_object_set(files, keys[i], json_object_get(sums, keys[i]));
            free(keys);
            const json_t *version = built ? json_object_get(built, "vat_version") : NULL;
            char *text = vat_manifest_text(json_is_string(version) ? json_string_value(version)
                                                                   : VAT_VERSION,
                                           built ? json_object_get(built, "libraries") : NULL,
                                           files);
            json_decref(files);
            rc = write_new(man, text, strlen(text), &cr, e);
            free(text);
        }
        free(man);
        free(readme);
        free(ga);
        if (rc == 0 && rename(stage, dest) != 0)
            rc = vat_err_set(e, "vat pack: cannot rename '%s' to '%s': %s", stage, dest,
                             strerror(errno));
        if (rc != 0)
            created_undo(&cr);
    }
    st->files = (long)n;
    json_decref(built);
    json_decref(sums);
    vat_buf_release(&attrs);
    created_release(&cr);
    free(stage);
    for (size_t i = 0; i < n; i++)
        free(rel[i]);
    free(rel);
    free(card);
    return rc;
}

int vat_cmd_pack(int argc, char **argv)
{
    const char *root = ".", *dest = NULL;
    const struct vat_option opts[] = {
        VAT_OPT_VALUE("root", 0, "DIR", "the corpus root to pack (default .)", &root),
        VAT_OPT_VALUE("to", 0, "DEST", "the dataset folder to make: new, or empty", &dest),
        VAT_OPT_END,
    };
    const struct vat_cli_command cmd = {
        "pack", "vat pack [--root DIR] --to DEST",
        "Makes DEST one uploadable dataset (Hugging Face layout): the card as\n"
        "DEST/README.md, the tables under DEST/out/, every fixture a row names under\n"
        "DEST/fixtures/ (hard links where possible), a .gitattributes sending binary\n"
        "files and files over 10 MB through Git LFS, and DEST/out/manifest.json of\n"
        "that layout, so 'vat verify --root DEST' proves it.  Nothing existing is\n"
        "written.",
        opts, "0 packed, 2 usage or input error (nothing left behind)"};
    int prc = vat_cli_parse(&cmd, argc, argv, NULL);
    if (prc != 0)
        return prc > 0 ? VAT_EXIT_OK : VAT_EXIT_USAGE;
    if (!dest || !*dest)
        return vat_cli_usage_error("pack needs --to DEST (a new or empty folder)");
    struct vat_pack_stats st;
    struct vat_err e = {{0}};
    if (vat_pack(root, dest, &st, &e) != 0) {
        vat_cli_line(stderr, e.msg);
        return VAT_EXIT_USAGE;
    }
    vat_cli_linef(stdout,
                  "vat: packed '%s' into '%s': %ld files (%ld fixtures), %ld hard links, %ld "
                  "copies, %lld bytes, plus README.md, .gitattributes and out/manifest.json",
                  root, dest, st.files, st.fixtures, st.linked, st.copied, st.bytes);
    return VAT_EXIT_OK;
}

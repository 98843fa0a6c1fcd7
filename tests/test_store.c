/* test_store.c — hostile conditions around a build: crash-safe builds,
 * the lock, containment and the memory bound, through the core helpers
 * and the built binary ($VAT_BINARY, set by ctest).
 *
 *   containment  a write or read through a symbolic link below the root is
 *                refused; a hard link to a file outside is replaced, never
 *                written through; a planted symlinked fixture is refused
 *                by `vat check --explain` (its digest is not the one the
 *                manifest lists) and nothing of it shows, and a planted
 *                fixtures/<template>
 *                or out/<table> link stops `vat build` with one line,
 *                nothing outside touched and the link kept;
 *   lock         a second build while one holds the build lock fails with
 *                one line; a reader's shared lock keeps the swap waiting;
 *                --only into a root holding other templates' tasks fails
 *                with one line and leaves the corpus as it was;
 *   swap         a build killed between its two tree exchanges leaves a
 *                journal that the next reading command rolls forward: the
 *                corpus is then wholly the new one, verify and audit clean;
 *   audit        tables of two builds side by side (an experience task the
 *                verifiers table lacks) are a finding, and verify names the
 *                changed table file;
 *   verify       a loosened verifiers row (the trap now scores 1) is a
 *                mismatch beside the changed file;
 *   memory       all 17 templates at count 100000 are refused up front
 *                (exit 2, one line, nothing created); the default corpus and
 *                3,000 per template are under the bound. */
#define _GNU_SOURCE /* flock */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "build.h"
#include "config.h"
#include "filememo.h"
#include "manifest.h"
#include "store.h"
#include "template.h"
#include "testutil.h"
#include "vat.h"

static const char *bin(void)
{
    const char *b = getenv("VAT_BINARY");
    return b && *b ? b : "./vat";
}

/* Runs a shell command; its exit status, and stdout+stderr in *out. */
static int run(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int run(char **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    struct vat_buf cmd = VAT_BUF_INIT;
    vat_buf_vprintf(&cmd, fmt, ap);
    va_end(ap);
    vat_buf_puts(&cmd, " 2>&1");
    FILE *p = popen(cmd.data, "r");
    assert_non_null(p);
    struct vat_buf b = VAT_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
        vat_buf_putn(&b, chunk, n);
    int st = pclose(p);
    vat_buf_release(&cmd);
    if (out)
        *out = vat_buf_detach(&b);
    else
        vat_buf_release(&b);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

#define ONLY "grouped_sum,sql_order_counts"
static const char config_a[] = "[corpus]\nmaster_seed = 21\ntest_fraction = 0.25\n"
                               "[templates.grouped_sum]\ncount = 4\n"
                               "[templates.sql_order_counts]\ncount = 2\n";
static const char config_b[] = "[corpus]\nmaster_seed = 22\ntest_fraction = 0.25\n"
                               "[templates.grouped_sum]\ncount = 3\n"
                               "[templates.sql_order_counts]\ncount = 2\n";

struct env {
    char *dir, *a, *b;
};

static int setup(void **state)
{
    struct env *v = calloc(1, sizeof *v);
    v->dir = vat_test_tmpdir("store");
    v->a = vat_xasprintf("%s/a.toml", v->dir);
    v->b = vat_xasprintf("%s/b.toml", v->dir);
    write_text(v->a, config_a);
    write_text(v->b, config_b);
    *state = v;
    return 0;
}

static int teardown(void **state)
{
    struct env *v = *state;
    vat_test_rmtree(v->dir);
    free(v->dir);
    free(v->a);
    free(v->b);
    free(v);
    return 0;
}

/* Builds config into dir/name; returns the root path. */
static char *build(struct env *v, const char *config, const char *name)
{
    char *root = vat_xasprintf("%s/%s", v->dir, name);
    char *out = NULL;
    int rc = run(&out, "'%s' build --config '%s' --root '%s' --jobs 2 --only " ONLY, bin(), config,
                 root);
    if (rc != 0)
        fprintf(stderr, "%s", out);
    assert_int_equal(rc, 0);
    free(out);
    return root;
}

static char *read_rel(const char *root, const char *rel)
{
    char *p = vat_xasprintf("%s/%s", root, rel);
    char *s = vat_test_read_file(p, NULL);
    free(p);
    return s;
}

/* ---- containment: the core helpers ---------------------------------------- */

static void test_helpers_follow_no_symlink(void **state)
{
    struct env *v = *state;
    char *root = vat_xasprintf("%s/helpers", v->dir);
    char *outside = vat_xasprintf("%s/outside", v->dir);
    assert_int_equal(mkdir(root, 0777), 0);
    assert_int_equal(mkdir(outside, 0777), 0);
    char *p = vat_xasprintf("%s/secret.txt", outside);
    write_text(p, "secret\n");
    free(p);
    p = vat_xasprintf("%s/link", root);
    assert_int_equal(symlink(outside, p), 0);
    free(p);

    struct vat_err e = {{0}};
    /* A write through a symlinked folder is refused and creates nothing. */
    assert_int_equal(vat_write_file_atomic(root, "link/new.txt", "x", 1, &e), -1);
    assert_non_null(strstr(e.msg, "symbolic link"));
    p = vat_xasprintf("%s/new.txt", outside);
    assert_int_not_equal(access(p, F_OK), 0);
    free(p);
    /* So is a read, with ELOOP. */
    char *data = NULL;
    size_t len = 0;
    errno = 0;
    assert_int_equal(vat_read_file_beneath(root, "link/secret.txt", 1 << 20, &data, &len, &e), -1);
    assert_null(data);
    assert_int_equal(vat_open_beneath(root, "link/secret.txt", O_RDONLY, NULL), -1);
    assert_int_equal(errno, ELOOP);

    /* A symlinked file is reported, neither replaced nor written through. */
    p = vat_xasprintf("%s/d", root);
    assert_int_equal(mkdir(p, 0777), 0);
    free(p);
    char *target = vat_xasprintf("%s/secret.txt", outside);
    p = vat_xasprintf("%s/d/s.txt", root);
    assert_int_equal(symlink(target, p), 0);
    assert_int_equal(vat_write_file_atomic(root, "d/s.txt", "new\n", 4, &e), -1);
    assert_non_null(strstr(e.msg, "symbolic link"));
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    free(p);
    char *s = vat_test_read_file(target, NULL);
    assert_string_equal(s, "secret\n");
    free(s);

    /* A hard link to a file outside is replaced by a new file. */
    p = vat_xasprintf("%s/d/h.txt", root);
    assert_int_equal(link(target, p), 0);
    assert_int_equal(vat_write_file_atomic(root, "d/h.txt", "new\n", 4, &e), 0);
    s = vat_test_read_file(target, NULL);
    assert_string_equal(s, "secret\n");
    free(s);
    s = vat_test_read_file(p, NULL);
    assert_string_equal(s, "new\n");
    free(s);
    free(p);
    /* An ordinary read beneath the root works. */
    assert_int_equal(vat_read_file_beneath(root, "d/h.txt", 1 << 20, &data, &len, &e), 0);
    assert_int_equal(len, 4);
    free(data);
    free(target);
    free(outside);
    free(root);
}

/* Kept folders (vat_dirs_keep_begin/_end, as a task's draw and the
 * manifest use them): accesses start from the folder the first walk
 * opened, never from a path walked again, so a folder swapped for a link
 * mid-bracket is not followed (the kept folder, moved, gets the write);
 * roots never share a kept folder; more folders than are kept all work;
 * and after the bracket every access walks again and sees the link. */
static void test_kept_folders(void **state)
{
    struct env *v = *state;
    char *root = vat_xasprintf("%s/kept", v->dir);
    char *root2 = vat_xasprintf("%s/kept2", v->dir);
    char *outside = vat_xasprintf("%s/kept-outside", v->dir);
    assert_int_equal(mkdir(root, 0777), 0);
    assert_int_equal(mkdir(root2, 0777), 0);
    assert_int_equal(mkdir(outside, 0777), 0);
    struct vat_err e = {{0}};
    vat_dirs_keep_begin();
    assert_int_equal(vat_write_file_atomic(root, "a/b/x.txt", "x\n", 2, &e), 0);
    assert_int_equal(vat_write_file_atomic(root2, "a/b/x.txt", "2\n", 2, &e), 0);
    char *s = read_rel(root, "a/b/x.txt");
    assert_string_equal(s, "x\n");
    free(s);
    s = read_rel(root2, "a/b/x.txt");
    assert_string_equal(s, "2\n");
    free(s);
    /* a/b is moved aside and a link to the outside put in its place. */
    char *from = vat_xasprintf("%s/a/b", root);
    char *to = vat_xasprintf("%s/a/moved", root);
    assert_int_equal(rename(from, to), 0);
    assert_int_equal(symlink(outside, from), 0);
    assert_int_equal(vat_write_file_atomic(root, "a/b/y.txt", "y\n", 2, &e), 0);
    char *p = vat_xasprintf("%s/y.txt", outside);
    assert_int_not_equal(access(p, F_OK), 0);
    free(p);
    s = read_rel(root, "a/moved/y.txt");
    assert_string_equal(s, "y\n");
    free(s);
    /* Six folders in turn, more than are kept. */
    for (int round = 0; round < 2; round++)
        for (int k = 0; k < 6; k++) {
            char rel[32], text[8];
            snprintf(rel, sizeof rel, "f%d/g/%d.txt", k, round);
            snprintf(text, sizeof text, "%d%d", k, round);
            assert_int_equal(vat_write_file_atomic(root, rel, text, strlen(text), &e), 0);
            char *data = NULL;
            size_t len = 0;
            assert_int_equal(vat_read_file_beneath(root, rel, 64, &data, &len, &e), 0);
            assert_string_equal(data, text);
            free(data);
        }
    vat_dirs_keep_end();
    /* Out of the bracket the walk starts again, and meets the link. */
    assert_int_equal(vat_write_file_atomic(root, "a/b/z.txt", "z\n", 2, &e), -1);
    assert_non_null(strstr(e.msg, "symbolic link"));
    p = vat_xasprintf("%s/z.txt", outside);
    assert_int_not_equal(access(p, F_OK), 0);
    free(p);
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(vat_read_file_beneath(root, "a/b/y.txt", 64, &data, &len, &e), -1);
    assert_null(data);
    free(from);
    free(to);
    free(outside);
    free(root2);
    free(root);
}

/* ---- class 7: planted symbolic links --------------------------------------- */

static void test_symlinked_fixture_refused(void **state)
{
    struct env *v = *state;
    char *root = build(v, v->a, "c7-check");
    /* An outside database holding a secret, linked in place of a fixture. */
    char *secret = vat_xasprintf("%s/secret.sqlite", v->dir);
    assert_int_equal(run(NULL, "python3 -c \"import sqlite3; c = sqlite3.connect('%s'); "
                               "c.execute('create table orders(id, note)'); c.execute(\\\"insert "
                               "into orders values (1, 'TOPSECRET')\\\"); c.commit()\"",
                         secret),
                     0);
    char *fx = vat_xasprintf("%s/fixtures/sql_order_counts/000/sql_order_counts-00000.sqlite", root);
    assert_int_equal(unlink(fx), 0);
    assert_int_equal(symlink(secret, fx), 0);
    char *out = NULL;
    assert_int_equal(run(&out, "'%s' check --root '%s' --task sql_order_counts-00000 --answer "
                               "'SELECT * FROM orders' --explain",
                         bin(), root),
                     1); /* exit 1: the verdict blames the corpus, not the answer */
    /* the link is followed only to be hashed: its bytes are not the
     * fixture's, so the task is tampered and nothing of it shows */
    assert_null(strstr(out, "TOPSECRET"));
    assert_non_null(strstr(out, "\"code\":\"tampered\""));
    assert_non_null(strstr(out, "symbolic link"));
    free(out);
    /* verify names it. */
    assert_int_equal(run(&out, "'%s' verify --root '%s'", bin(), root), 1);
    assert_non_null(strstr(out, "sql_order_counts-00000.sqlite' (a symbolic link to a file of "
                                "sha256"));
    free(out);
    free(fx);
    free(secret);
    free(root);
}

static void test_symlinked_tree_stops_build(void **state)
{
    struct env *v = *state;
    static const char *const planted[] = {"fixtures/grouped_sum", "out/verifiers"};
    for (size_t i = 0; i < 2; i++) {
        char *name = vat_xasprintf("c7-build-%zu", i);
        char *root = build(v, v->a, name);
        char *manifest = read_rel(root, "out/manifest.json");
        /* Move the folder outside and link it back in. */
        char *outside = vat_xasprintf("%s/outside-%zu", v->dir, i);
        char *inside = vat_xasprintf("%s/%s", root, planted[i]);
        assert_int_equal(rename(inside, outside), 0);
        assert_int_equal(symlink(outside, inside), 0);
        char *before = NULL, *after = NULL, *out = NULL;
        assert_int_equal(run(&before, "cd '%s' && ls -lR . | sha256sum", outside), 0);
        int rc = run(&out, "'%s' build --config '%s' --root '%s' --jobs 2 --only " ONLY, bin(),
                     v->b, root);
        assert_int_equal(rc, 2);
        assert_int_equal(count_lines(out), 1);
        assert_non_null(strstr(out, "symbolic link"));
        assert_int_equal(run(&after, "cd '%s' && ls -lR . | sha256sum", outside), 0);
        assert_string_equal(before, after);
        struct stat st;
        assert_int_equal(lstat(inside, &st), 0);
        assert_true(S_ISLNK(st.st_mode)); /* kept, for the user to see */
        char *now = read_rel(root, "out/manifest.json");
        assert_string_equal(now, manifest); /* the old corpus stays */
        free(now);
        free(before);
        free(after);
        free(out);
        free(manifest);
        free(outside);
        free(inside);
        free(root);
        free(name);
    }
}

/* ---- class 6: the lock and --only ------------------------------------------------ */

static void test_second_build_fails_on_lock(void **state)
{
    struct env *v = *state;
    char *root = build(v, v->a, "c6-lock");
    char *lock = vat_xasprintf("%s/" VAT_STORE_BUILD_LOCK, root);
    int fd = open(lock, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0); /* as a running build holds it */
    char *out = NULL;
    assert_int_equal(run(&out, "'%s' build --config '%s' --root '%s' --jobs 2 --only " ONLY, bin(),
                         v->b, root),
                     2);
    assert_int_equal(count_lines(out), 1);
    assert_non_null(strstr(out, "another vat build is running"));
    free(out);
    close(fd);
    /* Readers still read while a build holds the build lock. */
    assert_int_equal(run(NULL, "'%s' verify --root '%s'", bin(), root), 0);
    free(lock);
    free(root);
}

static void test_only_refuses_full_root(void **state)
{
    struct env *v = *state;
    char *root = build(v, v->a, "c6-only");
    char *manifest = read_rel(root, "out/manifest.json");
    char *out = NULL;
    assert_int_equal(run(&out, "'%s' build --config '%s' --root '%s' --only grouped_sum", bin(),
                         v->a, root),
                     2);
    assert_int_equal(count_lines(out), 1);
    assert_non_null(strstr(out, "--only builds into an empty root"));
    free(out);
    char *now = read_rel(root, "out/manifest.json");
    assert_string_equal(now, manifest);
    free(now);
    free(manifest);
    /* The same templates again are fine. */
    assert_int_equal(run(NULL, "'%s' build --config '%s' --root '%s' --only " ONLY, bin(), v->b,
                         root),
                     0);
    free(root);
}

/* A reader holding .vat-lock shared keeps the swap waiting: while it
 * reads, the live corpus stays the old one whole. */
static void test_swap_waits_for_readers(void **state)
{
    struct env *v = *state;
    char *root = build(v, v->a, "c6-readers");
    char *old = read_rel(root, "out/manifest.json");
    char *lock = vat_xasprintf("%s/" VAT_STORE_LOCK, root);
    /* O_CLOEXEC: the shell that starts the build must not inherit (and so
     * share) our lock. */
    int fd = open(lock, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_SH), 0);
    char *rcfile = vat_xasprintf("%s/readers.rc", v->dir);
    assert_int_equal(run(NULL, "('%s' build --config '%s' --root '%s' --jobs 2 --only " ONLY
                               " >/dev/null 2>&1; echo $? > '%s') </dev/null >/dev/null 2>&1 &",
                         bin(), v->b, root, rcfile),
                     0);
    /* The build stages everything, manifest last, then waits for us. */
    char *staged = vat_xasprintf("%s/" VAT_STORE_STAGE "/out/manifest.json", root);
    for (int i = 0; i < 1200 && access(staged, F_OK) != 0; i++)
        usleep(50000);
    assert_int_equal(access(staged, F_OK), 0);
    usleep(300000);
    char *now = read_rel(root, "out/manifest.json");
    assert_string_equal(now, old);
    free(now);
    char *j = vat_xasprintf("%s/" VAT_STORE_JOURNAL, root);
    assert_int_not_equal(access(j, F_OK), 0);
    close(fd); /* the reader is done: the swap proceeds */
    char *rc = NULL;
    for (int i = 0; i < 1200 && !(rc = vat_test_read_file(rcfile, NULL), rc && *rc); i++) {
        free(rc);
        rc = NULL;
        usleep(50000);
    }
    assert_non_null(rc);
    assert_string_equal(rc, "0\n");
    now = read_rel(root, "out/manifest.json");
    assert_string_not_equal(now, old);
    free(now);
    free(rc);
    free(j);
    free(staged);
    free(rcfile);
    free(lock);
    free(old);
    free(root);
}

/* ---- class 5: a killed swap, and tables of two builds ---------------------------- */

static void test_killed_swap_rolls_forward(void **state)
{
    struct env *v = *state;
    char *ref = build(v, v->b, "c5-ref");
    char *want = read_rel(ref, "out/manifest.json");
    char *root = build(v, v->a, "c5-root");
    /* Killed between the fixtures exchange and the out exchange. */
    assert_int_equal(run(NULL, "VAT_TEST_ABORT_AT=swap1 '%s' build --config '%s' --root '%s' "
                               "--jobs 2 --only " ONLY,
                         bin(), v->b, root),
                     128 + 9);
    char *j = vat_xasprintf("%s/" VAT_STORE_JOURNAL, root);
    assert_int_equal(access(j, F_OK), 0); /* the mix is on disk, journalled */
    char *out = NULL;
    assert_int_equal(run(&out, "'%s' audit --root '%s'", bin(), root), 0);
    free(out);
    assert_int_not_equal(access(j, F_OK), 0);
    char *stage = vat_xasprintf("%s/" VAT_STORE_STAGE, root);
    assert_int_not_equal(access(stage, F_OK), 0);
    char *now = read_rel(root, "out/manifest.json");
    assert_string_equal(now, want);
    free(now);
    assert_int_equal(run(NULL, "'%s' verify --root '%s'", bin(), root), 0);
    /* Killed before the journal: the old corpus stays, the stage goes. */
    assert_int_equal(run(NULL, "VAT_TEST_ABORT_AT=staged '%s' build --config '%s' --root '%s' "
                               "--jobs 2 --only " ONLY,
                         bin(), v->a, root),
                     128 + 9);
    assert_int_equal(access(stage, F_OK), 0);
    assert_int_equal(run(NULL, "'%s' check --root '%s' --task grouped_sum-00000 --answer 1", bin(),
                         root),
                     0);
    assert_int_not_equal(access(stage, F_OK), 0);
    now = read_rel(root, "out/manifest.json");
    assert_string_equal(now, want);
    free(now);
    free(stage);
    free(j);
    free(want);
    free(ref);
    free(root);
}

static void test_audit_and_verify_see_mixed_tables(void **state)
{
    struct env *v = *state;
    char *big = build(v, v->a, "c5-big");     /* grouped_sum 4 tasks */
    char *small = build(v, v->b, "c5-small"); /* grouped_sum 3 tasks */
    /* The big build's experience beside the small build's other tables. */
    for (int s = 0; s < 2; s++) {
        const char *split = s ? "test" : "train";
        assert_int_equal(run(NULL, "cp '%s/out/experience/%s.jsonl' '%s/out/experience/%s.jsonl'",
                             big, split, small, split),
                         0);
    }
    char *out = NULL;
    assert_int_equal(run(&out, "'%s' audit --root '%s'", bin(), small), 1);
    assert_non_null(strstr(out, "\"finding\":\"task_rows_missing\""));
    free(out);
    assert_int_equal(run(&out, "'%s' verify --root '%s'", bin(), small), 1);
    assert_non_null(strstr(out, "changed file 'out/experience/"));
    free(out);
    free(big);
    free(small);
}

/* A verifiers row loosened to accept anything (rel_tol 1e308): the trap
 * now scores 1, which verify reports beside the changed table file. */
static void test_verify_rechecks_verifiers(void **state)
{
    struct env *v = *state;
    char *root = build(v, v->a, "verify-recheck");
    char *out = NULL;
    assert_int_equal(run(&out, "'%s' verify --root '%s'", bin(), root), 0);
    assert_non_null(strstr(out, "verify: clean"));
    free(out);
    for (int s = 0; s < 2; s++)
        assert_int_equal(run(NULL, "sed -i 's/\\(\"template\":\"grouped_sum\".*"
                                   "rel_tol\\\\\"\\):1e-09/\\1:1e308/' "
                                   "'%s/out/verifiers/%s.jsonl'",
                             root, s ? "test" : "train"),
                         0);
    assert_int_equal(run(&out, "'%s' verify --root '%s'", bin(), root), 1);
    assert_non_null(strstr(out, "changed file 'out/verifiers/"));
    assert_non_null(strstr(out, "the trap answer scores 1"));
    free(out);
    assert_int_equal(run(&out, "'%s' verify --root '%s' --bogus", bin(), root), 2);
    free(out);
    free(root);
}

/* The manifest records the libraries; verify warns, naming the library,
 * when the running one differs (its bytes may then differ), and stays clean otherwise. */
static void test_verify_warns_on_library_versions(void **state)
{
    struct env *v = *state;
    char *root = build(v, v->a, "verify-libs");
    char *out = NULL;
    assert_int_equal(run(&out, "'%s' verify --root '%s'", bin(), root), 0);
    assert_null(strstr(out, "warning"));
    free(out);
    assert_int_equal(run(NULL, "grep -q '\"libraries\"' '%s/out/manifest.json' && "
                               "sed -i 's/\"sqlite\": \"[^\"]*\"/\"sqlite\": \"3.0.0\"/' "
                               "'%s/out/manifest.json'",
                         root, root),
                     0);
    assert_int_equal(run(&out, "'%s' verify --root '%s'", bin(), root), 0);
    assert_non_null(strstr(out, "warning: libraries differ"));
    assert_non_null(strstr(out, "sqlite: built with 3.0.0"));
    free(out);
    free(root);
}

/* ---- class 10: the memory bound ----------------------------------------------------- */

static char *all_counts(long count)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, "[corpus]\nmaster_seed = 1\n");
    for (size_t i = 0; vat_registry[i]; i++)
        vat_buf_printf(&b, "[templates.%s]\ncount = %ld\n", vat_registry[i]->name, count);
    return vat_buf_detach(&b);
}

static void test_memory_bound(void **state)
{
    struct env *v = *state;
    struct vat_config c;
    struct vat_err e = {{0}};
    long tasks = 0;
    char *text = all_counts(100000);
    assert_int_equal(vat_config_parse(&c, text, strlen(text), "big.toml", &e), 0);
    assert_true(vat_build_memory_estimate(&c, NULL, 1, &tasks) > VAT_BUILD_MEMORY_BOUND);
    assert_true(tasks >= 1700000);
    /* Refused up front: nothing is created. */
    char *root = vat_xasprintf("%s/c10", v->dir);
    struct vat_build_opts o = {.root = root, .jobs = 1};
    struct vat_build_stats st;
    assert_int_equal(vat_build(&c, &o, &st, &e), -1);
    assert_non_null(strstr(e.msg, "GiB"));
    assert_int_not_equal(access(root, F_OK), 0);
    vat_config_release(&c);
    free(text);

    text = all_counts(3000);
    assert_int_equal(vat_config_parse(&c, text, strlen(text), "3k.toml", &e), 0);
    assert_true(vat_build_memory_estimate(&c, NULL, 1, NULL) < VAT_BUILD_MEMORY_BOUND);
    vat_config_release(&c);
    free(text);

    const char *src = getenv("VAT_SOURCE_DIR");
    char *seeds = vat_xasprintf("%s/seeds.toml", src ? src : "..");
    assert_int_equal(vat_config_load(&c, seeds, &e), 0);
    /* The window of slots dominates a small corpus: a few MB. */
    assert_true(vat_build_memory_estimate(&c, NULL, 1, NULL) < VAT_BUILD_MEMORY_BOUND / 20);
    vat_config_release(&c);
    free(seeds);

    /* Streaming: a 100,000-task default mix is accepted, far under it. */
    seeds = vat_xasprintf("%s/bench/seeds-100k.toml", src ? src : "..");
    assert_int_equal(vat_config_load(&c, seeds, &e), 0);
    assert_true(vat_build_memory_estimate(&c, NULL, 2, &tasks) < VAT_BUILD_MEMORY_BOUND / 4);
    assert_int_equal(tasks, 100000);
    vat_config_release(&c);
    free(seeds);

    /* The command: exit 2, one line. */
    char *cfg = vat_xasprintf("%s/big.toml", v->dir);
    text = all_counts(100000);
    write_text(cfg, text);
    char *out = NULL;
    assert_int_equal(run(&out, "'%s' build --config '%s' --root '%s'", bin(), cfg, root), 2);
    assert_int_equal(count_lines(out), 1);
    assert_non_null(strstr(out, "in memory"));
    assert_int_not_equal(access(root, F_OK), 0);
    free(out);
    free(text);
    free(cfg);
    free(root);
}

/* ---- the manifest ------------------------------------------------------------------- */

static void test_manifest_lists_every_file(void **state)
{
    struct env *v = *state;
    char *root = build(v, v->a, "manifest");
    struct vat_err e = {{0}};
    json_t *m = vat_manifest_load(root, &e);
    assert_non_null(m);
    struct vat_tree_entry *t;
    size_t n;
    assert_int_equal(vat_tree_list(root, &t, &n, &e), 0);
    assert_int_equal(json_object_size(json_object_get(m, "files")), n);
    assert_true(n > 14);
    for (size_t i = 0; i < n; i++) {
        char sha[65];
        assert_int_equal(vat_sha256_beneath(root, t[i].rel, sha, &e), 0);
        assert_string_equal(vat_manifest_sha(m, t[i].rel), sha);
    }
    assert_null(vat_manifest_sha(m, VAT_MANIFEST_REL));
    assert_non_null(vat_manifest_sha(m, "out/verifiers/train.jsonl"));
    vat_tree_free(t, n);
    json_decref(m);
    /* A second build of the same seeds writes the same manifest. */
    char *again = build(v, v->a, "manifest2");
    char *m1 = read_rel(root, "out/manifest.json"), *m2 = read_rel(again, "out/manifest.json");
    assert_string_equal(m1, m2);
    free(m1);
    free(m2);
    free(again);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_helpers_follow_no_symlink),
        cmocka_unit_test(test_kept_folders),
        cmocka_unit_test(test_symlinked_fixture_refused),
        cmocka_unit_test(test_symlinked_tree_stops_build),
        cmocka_unit_test(test_second_build_fails_on_lock),
        cmocka_unit_test(test_only_refuses_full_root),
        cmocka_unit_test(test_swap_waits_for_readers),
        cmocka_unit_test(test_killed_swap_rolls_forward),
        cmocka_unit_test(test_audit_and_verify_see_mixed_tables),
        cmocka_unit_test(test_verify_rechecks_verifiers),
        cmocka_unit_test(test_verify_warns_on_library_versions),
        cmocka_unit_test(test_memory_bound),
        cmocka_unit_test(test_manifest_lists_every_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* store.c — staging, swap, journal, locks and recovery (see store.h).
 *
 * Why the inode in the journal: RENAME_EXCHANGE leaves both names in
 * place, so after a crash only identity tells whether a tree was already
 * exchanged.  A directory keeps its inode across renames, so "the live
 * tree has the staged tree's inode" means done, "the stage still has it"
 * means still to do. */
#define _GNU_SOURCE /* renameat2 flags, syscall, flock */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "manifest.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* The trees a corpus consists of, in swap order: readers look at out/
 * first, so the fixtures its new rows name are in place before it. */
static const char *const trees[] = {"fixtures", "out"};
#define N_TREES 2

void vat_store_test_hook(const char *step)
{
    const char *at = getenv("VAT_TEST_ABORT_AT");
    if (at && strcmp(at, step) == 0)
        kill(getpid(), SIGKILL);
}

static int exchange(int dfd, const char *a, int dfd2, const char *b)
{
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, dfd, a, dfd2, b, RENAME_EXCHANGE);
#else
    (void)dfd;
    (void)a;
    (void)dfd2;
    (void)b;
    errno = ENOSYS;
    return -1;
#endif
}

/* Removes name below dfd and everything in it, following no symbolic link
 * (a link is unlinked itself).  Only ever called on vat's own stage. */
static int rm_tree(int dfd, const char *name, int depth)
{
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return unlinkat(dfd, name, 0);
    if (depth > 64)
        return -1;
    int cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (cfd < 0)
        return -1;
    DIR *d = fdopendir(cfd);
    if (!d) {
        close(cfd);
        return -1;
    }
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (rm_tree(dirfd(d), de->d_name, depth + 1) != 0)
            rc = -1;
    }
    closedir(d);
    if (unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        rc = -1;
    return rc;
}

/* ---- the journal ---------------------------------------------------------------- */

struct journal {
    uint64_t dev[N_TREES], ino[N_TREES];
};

static int journal_read(int rootfd, struct journal *j, int *exists, struct vat_err *e)
{
    *exists = 0;
    int fd = openat(rootfd, VAT_STORE_JOURNAL, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        return vat_err_set(e, "vat: cannot open '%s': %s", VAT_STORE_JOURNAL, strerror(errno));
    }
    char buf[512];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 0)
        return vat_err_set(e, "vat: cannot read '%s': %s", VAT_STORE_JOURNAL, strerror(errno));
    buf[n] = 0;
    *exists = 1;
    char t0[16], t1[16];
    int v = 0;
    if (sscanf(buf, "vat-swap %d\n%15s %" SCNu64 " %" SCNu64 "\n%15s %" SCNu64 " %" SCNu64, &v,
               t0, &j->dev[0], &j->ino[0], t1, &j->dev[1], &j->ino[1]) != 7 ||
        v != 1 || strcmp(t0, trees[0]) != 0 || strcmp(t1, trees[1]) != 0)
        return vat_err_set(e, "vat: the swap journal '%s' is malformed; remove it and rebuild",
                           VAT_STORE_JOURNAL);
    return 0;
}

/* Written whole to a temporary name and renamed: the journal either
 * exists complete or not at all. */
static int journal_write(int rootfd, const struct journal *j, struct vat_err *e)
{
    char text[256];
    int n = snprintf(text, sizeof text, "vat-swap 1\n%s %" PRIu64 " %" PRIu64 "\n%s %" PRIu64
                                        " %" PRIu64 "\n",
                     trees[0], j->dev[0], j->ino[0], trees[1], j->dev[1], j->ino[1]);
    const char *tmp = VAT_STORE_JOURNAL ".tmp";
    unlinkat(rootfd, tmp, 0);
    int fd = openat(rootfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        return vat_err_set(e, "vat: cannot write '%s': %s", tmp, strerror(errno));
    int ok = write(fd, text, (size_t)n) == n;
    /* The journal decides roll-forward after a crash, so it must reach
     * the disk before the first exchange does. */
    ok = ok && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    vat_store_test_hook("journal-tmp");
    if (!ok || renameat(rootfd, tmp, rootfd, VAT_STORE_JOURNAL) != 0) {
        int err = errno;
        unlinkat(rootfd, tmp, 0);
        return vat_err_set(e, "vat: cannot write '%s': %s", VAT_STORE_JOURNAL, strerror(err));
    }
    return 0;
}

/* Makes staged tree i current: exchange with the live tree, or a rename
 * when there is none.  A file system without RENAME_EXCHANGE gets two
 * renames (the journal and the exclusive lock cover the gap). */
static int swap_tree(int rootfd, int stagefd, int i, struct vat_err *e)
{
    struct stat st;
    int live = fstatat(rootfd, trees[i], &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (live && !S_ISDIR(st.st_mode))
        return vat_err_set(e, "vat: '%s' is not a directory; refusing to replace it", trees[i]);
    if (live && exchange(stagefd, trees[i], rootfd, trees[i]) == 0)
        return 0;
    if (live && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
        return vat_err_set(e, "vat: cannot exchange '%s' with its new version: %s", trees[i],
                           strerror(errno));
    if (live) {
        char old[32];
        snprintf(old, sizeof old, "%s.old", trees[i]);
        rm_tree(stagefd, old, 0);
        if (renameat(rootfd, trees[i], stagefd, old) != 0)
            return vat_err_set(e, "vat: cannot move '%s' aside: %s", trees[i], strerror(errno));
    }
    if (renameat(stagefd, trees[i], rootfd, trees[i]) != 0)
        return vat_err_set(e, "vat: cannot move the new '%s' into place: %s", trees[i],
                           strerror(errno));
    return 0;
}

/* Rolls a journalled swap forward.  Called with .vat-lock held exclusive. */
static int roll_forward(int rootfd, const struct journal *j, struct vat_err *e)
{
    int stagefd = openat(rootfd, VAT_STORE_STAGE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    for (int i = 0; i < N_TREES; i++) {
        struct stat st;
        if (fstatat(rootfd, trees[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            (uint64_t)st.st_dev == j->dev[i] && (uint64_t)st.st_ino == j->ino[i])
            continue; /* already current */
        if (stagefd < 0 || fstatat(stagefd, trees[i], &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            (uint64_t)st.st_dev != j->dev[i] || (uint64_t)st.st_ino != j->ino[i]) {
            if (stagefd >= 0)
                close(stagefd);
            return vat_err_set(e, "vat: cannot finish the interrupted swap: the new '%s' is "
                                  "neither live nor staged; rebuild the corpus",
                               trees[i]);
        }
        if (swap_tree(rootfd, stagefd, i, e) != 0) {
            close(stagefd);
            return -1;
        }
    }
    if (stagefd >= 0)
        close(stagefd);
    if (unlinkat(rootfd, VAT_STORE_JOURNAL, 0) != 0)
        return vat_err_set(e, "vat: cannot remove '%s': %s", VAT_STORE_JOURNAL, strerror(errno));
    return 0;
}

/* Anything left to recover below rootfd?  A stage counts only when no
 * build holds the build lock (checked by the caller). */
static int pending(int rootfd, int *journal, int *stage)
{
    struct stat st;
    *journal = fstatat(rootfd, VAT_STORE_JOURNAL, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
               fstatat(rootfd, VAT_STORE_JOURNAL ".tmp", &st, AT_SYMLINK_NOFOLLOW) == 0;
    *stage = fstatat(rootfd, VAT_STORE_STAGE, &st, AT_SYMLINK_NOFOLLOW) == 0;
    return *journal || *stage;
}

/* Is a build running?  Tries the build lock without waiting. */
static int build_running(int rootfd)
{
    int fd = openat(rootfd, VAT_STORE_BUILD_LOCK, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int busy = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd); /* releases the lock if we took it */
    return busy;
}

static int open_lock(int rootfd, const char *name, int create)
{
    int fd = openat(rootfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT && create)
        fd = openat(rootfd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    return fd;
}

/* The recovery proper: with .vat-lock exclusive, roll a journal forward,
 * then (unless a build is running, or we are that build) drop the stage. */
static int recover_fd(int rootfd, int own_build, struct vat_err *e)
{
    int has_j, has_s;
    if (!pending(rootfd, &has_j, &has_s))
        return 0;
    if (!own_build && !has_j && build_running(rootfd))
        return 0; /* a live build's stage: not ours to touch */
    int lk = open_lock(rootfd, VAT_STORE_LOCK, 1);
    if (lk < 0)
        return vat_err_set(e, "vat: an interrupted build left work to finish in the root, and "
                              "'%s' cannot be opened: %s",
                           VAT_STORE_LOCK, strerror(errno));
    if (flock(lk, LOCK_EX) != 0) {
        close(lk);
        return vat_err_set(e, "vat: cannot lock '%s': %s", VAT_STORE_LOCK, strerror(errno));
    }
    struct journal j;
    int exists = 0, rc = 0;
    if (journal_read(rootfd, &j, &exists, e) != 0)
        rc = -1;
    else if (exists && roll_forward(rootfd, &j, e) != 0)
        rc = -1;
    if (rc == 0) {
        unlinkat(rootfd, VAT_STORE_JOURNAL ".tmp", 0);
        /* Re-check: a build may have started since pending() looked.  A
         * stale stage that cannot be removed (a read-only root) harms no
         * reader: the live trees are whole; only a build needs it gone. */
        if ((own_build || !build_running(rootfd)) && rm_tree(rootfd, VAT_STORE_STAGE, 0) != 0 &&
            own_build)
            rc = vat_err_set(e, "vat: cannot remove the stale stage '%s': %s", VAT_STORE_STAGE,
                             strerror(errno));
    }
    close(lk);
    return rc;
}

int vat_store_recover(const char *root, struct vat_err *e)
{
    int rfd = vat_root_open(root, e);
    if (rfd < 0)
        return -1;
    int rc = recover_fd(rfd, 0, e);
    close(rfd);
    return rc;
}

int vat_store_open_read(struct vat_store *s, const char *root, struct vat_err *e)
{
    *s = (struct vat_store)VAT_STORE_INIT;
    s->rootfd = open(root && *root ? root : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->rootfd < 0)
        return 0; /* the command names the missing corpus itself */
    int tried_stage = 0;
    for (int tries = 0; tries < 8; tries++) {
        s->lockfd = open_lock(s->rootfd, VAT_STORE_LOCK, 0);
        if (s->lockfd >= 0 && flock(s->lockfd, LOCK_SH) != 0) {
            close(s->lockfd);
            s->lockfd = -1;
        }
        int has_j, has_s;
        /* Only a journal makes the live trees a mix; a stage alone is a
         * running build's, or litter that one attempt tries to remove. */
        if (!pending(s->rootfd, &has_j, &has_s) ||
            (!has_j && (tried_stage || build_running(s->rootfd))))
            return 0;
        tried_stage = 1;
        if (s->lockfd >= 0) {
            close(s->lockfd);
            s->lockfd = -1;
        }
        if (recover_fd(s->rootfd, 0, e) != 0) {
            vat_store_close(s);
            return -1;
        }
    }
    vat_store_close(s);
    return vat_err_set(e, "vat: the corpus root keeps changing; try again");
}

void vat_store_close(struct vat_store *s)
{
    if (s->lockfd >= 0)
        close(s->lockfd);
    if (s->buildfd >= 0)
        close(s->buildfd);
    if (s->rootfd >= 0)
        close(s->rootfd);
    free(s->stage);
    *s = (struct vat_store)VAT_STORE_INIT;
}

/* Refuses a live tree holding anything but directories and regular files:
 * the swap would move it and the cleanup unlink it, and a planted link is
 * the user's to see, not vat's to delete. */
static int check_live_trees(const char *root, struct vat_err *e)
{
    struct vat_tree_entry *v;
    size_t n;
    if (vat_tree_list(root, &v, &n, e) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (v[i].kind != VAT_TREE_FILE)
            rc = vat_err_set(e, "vat: '%s' in '%s' is %s; refusing to build over it (remove it)",
                             v[i].rel, root,
                             v[i].kind == VAT_TREE_SYMLINK ? "a symbolic link"
                                                           : "not a regular file");
    vat_tree_free(v, n);
    return rc;
}

int vat_store_begin_build(struct vat_store *s, const char *root, struct vat_err *e)
{
    *s = (struct vat_store)VAT_STORE_INIT;
    const char *r = root && *root ? root : ".";
    if (mkdir(r, 0777) != 0 && errno != EEXIST)
        return vat_err_set(e, "vat: cannot create '%s': %s", r, strerror(errno));
    s->rootfd = vat_root_open(r, e);
    if (s->rootfd < 0)
        return -1;
    s->buildfd = openat(s->rootfd, VAT_STORE_BUILD_LOCK,
                        O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (s->buildfd < 0) {
        vat_err_set(e, "vat: cannot write to '%s': %s", r, strerror(errno));
        goto fail;
    }
    /* Fail, not wait: a second build of the same root is a mistake the
     * user should hear about now, not after the first one's minutes. */
    /* A reader probing whether a build runs (build_running) holds the
     * lock for an instant: a few short retries tell that from a build. */
    int locked = 0;
    for (int i = 0; i < 20 && !(locked = flock(s->buildfd, LOCK_EX | LOCK_NB) == 0); i++) {
        struct timespec ms10 = {0, 10 * 1000 * 1000};
        nanosleep(&ms10, NULL);
    }
    if (!locked) {
        vat_err_set(e, "vat: another vat build is running in '%s' (it holds %s)", r,
                    VAT_STORE_BUILD_LOCK);
        goto fail;
    }
    int lk = open_lock(s->rootfd, VAT_STORE_LOCK, 1);
    if (lk < 0) {
        vat_err_set(e, "vat: cannot create '%s' in '%s': %s", VAT_STORE_LOCK, r, strerror(errno));
        goto fail;
    }
    close(lk);
    if (recover_fd(s->rootfd, 1, e) != 0 || check_live_trees(r, e) != 0)
        goto fail;
    if (mkdirat(s->rootfd, VAT_STORE_STAGE, 0777) != 0) {
        vat_err_set(e, "vat: cannot create '%s' in '%s': %s", VAT_STORE_STAGE, r,
                    strerror(errno));
        goto fail;
    }
    s->stage = vat_path_join(r, VAT_STORE_STAGE);
    return 0;
fail:
    vat_store_close(s);
    return -1;
}

int vat_store_commit(struct vat_store *s, struct vat_err *e)
{
    int stagefd = openat(s->rootfd, VAT_STORE_STAGE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (stagefd < 0)
        return vat_err_set(e, "vat: cannot open '%s': %s", s->stage, strerror(errno));
    struct journal j;
    for (int i = 0; i < N_TREES; i++) {
        if (mkdirat(stagefd, trees[i], 0777) != 0 && errno != EEXIST) {
            close(stagefd);
            return vat_err_set(e, "vat: cannot create '%s/%s': %s", s->stage, trees[i],
                               strerror(errno));
        }
    }
    if (vat_manifest_write(s->stage, e) != 0) {
        close(stagefd);
        return -1;
    }
    for (int i = 0; i < N_TREES; i++) {
        struct stat st;
        if (fstatat(stagefd, trees[i], &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
            close(stagefd);
            return vat_err_set(e, "vat: the staged '%s' vanished", trees[i]);
        }
        j.dev[i] = (uint64_t)st.st_dev;
        j.ino[i] = (uint64_t)st.st_ino;
    }
    vat_store_test_hook("staged");
    /* Readers hold .vat-lock shared for their whole command: waiting for
     * it exclusive means none of them sees the trees change under it. */
    int lk = open_lock(s->rootfd, VAT_STORE_LOCK, 1);
    if (lk < 0 || flock(lk, LOCK_EX) != 0) {
        if (lk >= 0)
            close(lk);
        close(stagefd);
        return vat_err_set(e, "vat: cannot lock '%s': %s", VAT_STORE_LOCK, strerror(errno));
    }
    int rc = journal_write(s->rootfd, &j, e);
    vat_store_test_hook("journal");
    for (int i = 0; rc == 0 && i < N_TREES; i++) {
        rc = swap_tree(s->rootfd, stagefd, i, e);
        vat_store_test_hook(i == 0 ? "swap1" : "swap2");
    }
    if (rc == 0 && unlinkat(s->rootfd, VAT_STORE_JOURNAL, 0) != 0)
        rc = vat_err_set(e, "vat: cannot remove '%s': %s", VAT_STORE_JOURNAL, strerror(errno));
    vat_store_test_hook("swapped");
    close(lk);
    close(stagefd);
    if (rc != 0)
        return -1; /* the journal stays: the next command rolls forward */
    /* The old trees now sit in the stage. */
    int stage2 = openat(s->rootfd, VAT_STORE_STAGE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (stage2 >= 0) {
        rm_tree(stage2, trees[0], 0);
        vat_store_test_hook("cleanup");
        close(stage2);
    }
    if (rm_tree(s->rootfd, VAT_STORE_STAGE, 0) != 0)
        return vat_err_set(e, "vat: cannot remove the old corpus in '%s': %s", s->stage,
                           strerror(errno));
    return 0;
}

void vat_store_abort(struct vat_store *s)
{
    /* No journal: the stage goes (roll back).  A journal (a commit that
     * failed mid-swap): roll forward, exactly as the next command would. */
    if (s->rootfd >= 0 && s->stage)
        recover_fd(s->rootfd, 1, NULL);
    vat_store_close(s);
}

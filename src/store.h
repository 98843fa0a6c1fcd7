/* store.h — a corpus root on disk: crash-safe builds, the lock, and
 * recovery of an interrupted swap.  docs/corpus-store.md tells the story;
 * in short, below a root DIR:
 *
 *   DIR/out/, DIR/fixtures/   the live corpus (readers only ever see these)
 *   DIR/.vat-stage/           a build writes both new trees here
 *   DIR/.vat-swap             the journal: present only while the staged
 *                             trees are being made current
 *   DIR/.vat-lock             flock: readers hold it shared for a whole
 *                             command, the swap holds it exclusive
 *   DIR/.vat-build.lock       flock: held exclusive by the one running build;
 *                             a second build fails at once with one line
 *
 * A build stages out/ (with out/manifest.json) and fixtures/, writes the
 * journal (the inode of each staged tree), exchanges each staged tree with
 * the live one (renameat2 RENAME_EXCHANGE; plain rename when there is no
 * live tree yet), removes the journal and then the old trees.  Whoever
 * next opens the root completes a swap whose journal exists (roll
 * forward) or drops a stage without one (roll back), so a build killed at
 * any instant leaves readers the complete old corpus or the complete new
 * one, and no temporary file behind.  Exports struct vat_store and
 * vat_store_*. */
#ifndef VAT_STORE_H
#define VAT_STORE_H

#include "vat.h"

#define VAT_STORE_STAGE ".vat-stage"
#define VAT_STORE_JOURNAL ".vat-swap"
#define VAT_STORE_LOCK ".vat-lock"
#define VAT_STORE_BUILD_LOCK ".vat-build.lock"

struct vat_store {
    int rootfd;  /* the root directory, or -1                      */
    int lockfd;  /* .vat-lock, held shared by a reader, or -1      */
    int buildfd; /* .vat-build.lock, held by a build, or -1        */
    char *stage; /* root/.vat-stage while a build stages, or NULL  */
};
#define VAT_STORE_INIT {-1, -1, -1, NULL}

/* Completes or rolls back an interrupted swap below root (a no-op when
 * there is none; a build in progress is left alone).  0, or -1 with e set
 * (e.g. a pending swap on a root vat cannot write). */
int vat_store_recover(const char *root, struct vat_err *e);

/* For every command that reads a corpus: recovers (as above), then holds
 * .vat-lock shared until vat_store_close, so no swap happens while the
 * command reads.  A root that does not exist (or holds no lock file yet)
 * is not an error here: the command reports the missing corpus itself.
 * 0, or -1 with e set. */
int vat_store_open_read(struct vat_store *s, const char *root, struct vat_err *e);
void vat_store_close(struct vat_store *s);

/* For `vat build`: creates root if needed, takes .vat-build.lock (a second
 * build fails at once: "vat: another vat build is running in ..."),
 * recovers, refuses live trees holding a symbolic link or special file,
 * and creates an empty stage; s->stage is the root to build into.  0 or
 * -1 with e set. */
int vat_store_begin_build(struct vat_store *s, const char *root, struct vat_err *e);
/* Writes the stage's manifest, then swaps the staged trees in (waiting
 * for readers' shared locks) and removes the old ones.  0 or -1. */
int vat_store_commit(struct vat_store *s, struct vat_err *e);
/* Drops the stage (a failed build) and releases the build lock. */
void vat_store_abort(struct vat_store *s);

/* Test hook: when the environment variable VAT_TEST_ABORT_AT names step
 * ("staged", "journal-tmp", "journal", "swap1", "swap2", "swapped",
 * "cleanup"), the process kills itself with SIGKILL there. */
void vat_store_test_hook(const char *step);

#endif

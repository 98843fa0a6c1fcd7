/* filememo.h — what a build hangs under file access (core/vat.h, struct
 * vat_file_hooks): a task's folder handles, its file memo and the digests
 * of the files a build wrote (src/filememo.c).  The first begin of any of
 * them installs the hooks.  Exports vat_dirs_keep_*, vat_file_memo_begin,
 * vat_file_memo_end, struct vat_file_id, vat_file_id_of and vat_written_*. */
#ifndef VAT_FILEMEMO_H
#define VAT_FILEMEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "vat.h"

/* Between begin and end, on this thread, the folder each walk beneath a
 * root ends in is kept open (a few, most recent), and vat_open_beneath,
 * vat_read_file_beneath, vat_write_file_atomic and vat_mkdirs_for start
 * from it instead of walking from the root again; end closes them.  The
 * file memo's begin and end call these; a loop over many files of a few
 * folders (the manifest's digests) may too.  Containment is unchanged: a
 * kept folder was reached with no symbolic link followed. */
void vat_dirs_keep_begin(void);
void vat_dirs_keep_end(void);
/* Folders kept beneath root (as spelled) outlive the brackets on this
 * thread until vat_dirs_keep_across(NULL), which closes every kept folder:
 * a build's worker keeps its stage's folders for all its tasks (the stage
 * is the build's own, locked against other builds).  They serve only
 * within a bracket, as before. */
void vat_dirs_keep_across(const char *root);

/* ---- a task's file memo --------------------------------------------------- *
 * While a task is drawn its fixtures are read many times (digest,
 * reference, confirmation, prompt, admission), each a walk beneath the
 * root, an open and a read.  Between vat_file_memo_begin and
 * vat_file_memo_end, on one thread, vat_read_file_beneath keeps the bytes
 * of each file as first read from disk and hands later readers of the same
 * root and rel a copy of them; vat_write_file_atomic forgets every entry of
 * the path it writes (so the next read is of the new file, from disk), and
 * end forgets everything.  The build brackets each task attempt with them;
 * nothing else turns the memo on, so the checkers a user calls read the
 * disk as it is.  At most 256 MiB are kept; beyond that reads go to disk. */
void vat_file_memo_begin(void);
void vat_file_memo_end(void);

/* ---- the digests of the files a build wrote ---------------------------- *
 * Between vat_written_begin(root) and vat_written_end (the build, from its
 * stage's making to its manifest), every file vat writes beneath that root
 * (vat_write_file_atomic, the streamed tables) is noted with the SHA-256
 * of the bytes written and the identity the file has once written (its
 * path beneath root, device, inode, size, modification and change times).
 * The manifest takes a file's digest from the note when the file it lists
 * has that identity, field for field, instead of reading the file back; a
 * file rewritten since, by vat or not (a new inode, size or time), or
 * never noted, is read and hashed as before.  The path is part of the
 * identity, so an inode number freed and reused by another file never
 * serves.  Not seen: a file changed in place, keeping its size, within
 * the clock tick of vat's write; nothing in a build does that (every
 * writer makes a new file), and vat verify reads every file.  Any thread. */
struct stat;
/* What the notes tell a file by, taken from its stat (48 bytes, not the
 * 144 of a struct stat: the manifest's walk keeps one per file). */
struct vat_file_id {
    uint64_t dev, ino;
    int64_t size;
    int64_t mtim_s, mtim_ns, ctim_s, ctim_ns;
};
void vat_file_id_of(const struct stat *st, struct vat_file_id *id);
void vat_written_begin(const char *root);
void vat_written_end(void);
/* Whether writes beneath root (spelled as given to begin) are noted. */
bool vat_written_on(const char *root);
/* Notes the digest of the bytes just written to root/rel, whose identity
 * is now *id (ignored when not on for root). */
void vat_written_note(const char *root, const char *rel, const struct vat_file_id *id,
                      const unsigned char sha[32]);
/* The noted digest of root/rel when the file still has identity *id:
 * true with out (64 hex digits and a NUL) filled; false otherwise. */
bool vat_written_find(const char *root, const char *rel, const struct vat_file_id *id,
                      char out[65]);
/* How many lookups found a note since the process started (for tests). */
unsigned long vat_written_hits(void);

#endif

/* manifest.h — out/manifest.json: the SHA-256 of every file of a corpus
 * (every file below out/ but the manifest itself, and below fixtures/),
 * derived from content only (no time, no random id, keys sorted), so two
 * builds of the same seeds stay byte-identical:
 *
 *   {"manifest_version": 1, "vat_version": "0.2.0",
 *    "files": {"fixtures/grouped_sum/000/grouped_sum-00000.csv": "<sha256 hex>", ...}}
 *
 * Every file is reached beneath the root with no symbolic link followed
 * (vat_openat_beneath).  Exports vat_tree_*, vat_sha256_beneath and
 * vat_manifest_*. */
#ifndef VAT_MANIFEST_H
#define VAT_MANIFEST_H

#include <stddef.h>

#include <jansson.h>

#include "filememo.h"
#include "vat.h"

#define VAT_MANIFEST_REL "out/manifest.json"
#define VAT_MANIFEST_VERSION 1

enum vat_tree_kind { VAT_TREE_FILE, VAT_TREE_SYMLINK, VAT_TREE_OTHER };

#include <sys/stat.h>

struct vat_tree_entry {
    char *rel;               /* relative to the root: "out/experience/train.jsonl" */
    enum vat_tree_kind kind; /* a symbolic link or special file is listed, never opened */
    struct vat_file_id id;   /* as listed (lstat: a link's own) */
};

/* Lists every entry below root/out and root/fixtures that is not a
 * directory, sorted by rel (strcmp), the manifest itself left out.  A tree
 * that does not exist lists nothing; a tree that is a symbolic link is
 * listed as one.  0, or -1 with e set on an I/O error. */
int vat_tree_list(const char *root, struct vat_tree_entry **out, size_t *n, struct vat_err *e);
void vat_tree_free(struct vat_tree_entry *v, size_t n);

/* The SHA-256 (lower-case hex) of the regular file root/rel, opened
 * beneath root.  0, or -1 with e set. */
int vat_sha256_beneath(const char *root, const char *rel, char out[65], struct vat_err *e);

/* Writes root/out/manifest.json over the files vat_tree_list finds; a
 * symbolic link or special file in the trees is an error.  0 or -1. */
int vat_manifest_write(const char *root, struct vat_err *e);

/* The text of a manifest: manifest_version, vat_version, libraries (NULL:
 * none recorded) and files (path -> sha256 hex, its keys already in byte
 * order), one member a line.  A new string. */
char *vat_manifest_text(const char *vat_version, const json_t *libraries, const json_t *files);

/* Reads and checks root/out/manifest.json (beneath root).  Returns the
 * manifest object (the caller decrefs), or NULL with e set when it is
 * missing or malformed. */
json_t *vat_manifest_load(const char *root, struct vat_err *e);
/* The recorded sha256 of rel in a loaded manifest, or NULL when unlisted. */
const char *vat_manifest_sha(const json_t *manifest, const char *rel);

#endif

/* extract.h — takes the answer out of a model completion before a checker
 * sees it (docs/extraction.md).  Exports VAT_MAX_COMPLETION_BYTES, struct
 * vat_extraction and vat_extract.
 *
 * Two modes, the enum vat_extract_mode of include/libvat.h:
 *   raw  — the answer is the completion exactly as given (strict evaluation);
 *   auto — for chat models: drop <think> blocks; then the content of the last
 *          <answer>…</answer> pair; else the last fenced code block whose info
 *          string fits the answer kind, else the last fenced block; else the
 *          text after the last line-leading "Answer:" / "Final answer:";
 *          else the whole (visible) text; trimmed of surrounding whitespace.
 *
 * The extraction never copies and never allocates: the answer is one
 * contiguous slice of the completion.  One forward pass per rule, so the time
 * is linear in the completion's length whatever its content. */
#ifndef VAT_EXTRACT_H
#define VAT_EXTRACT_H

#include <stddef.h>

#include "../include/libvat.h" /* vat_extract_mode: one definition of the modes */

/* Completions larger than this are refused with the verdict code
 * "completion_too_large" (VAT_COMPLETION_TOO_LARGE in vat.h). */
#define VAT_MAX_COMPLETION_BYTES (4u << 20) /* 4 MiB */

struct vat_extraction {
    const char *text; /* points INTO the completion (no copy) */
    size_t len;
    const char *rule; /* "raw" | "answer_tag" | "fence" | "answer_line" | "whole" */
};

/* answer_kind: "value" | "regex" | "sql" | "abstain" (it only decides which
 * fence info strings fit; any other kind, or NULL, fits an untagged or
 * "text" fence only).  mode: VAT_EXTRACT_RAW or VAT_EXTRACT_AUTO (any other
 * value is taken as AUTO).  completion need not be NUL-terminated; NULL is
 * taken as the empty completion.  Returns 0 with *out set, or -1 when len is
 * larger than VAT_MAX_COMPLETION_BYTES (then *out is an empty answer with the
 * mode's fallback rule, "raw" or "whole"). */
int vat_extract(const char *answer_kind, const char *completion, size_t len, int mode,
                struct vat_extraction *out);

#endif

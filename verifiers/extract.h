/* extract.h — takes the answer out of a model completion before a checker
 * sees it (docs/extraction.md).  Exports VAT_MAX_COMPLETION_BYTES, struct
 * vat_extraction, vat_extract, vat_extract_write and vat_extract_looked_for.
 *
 * Two modes, the enum vat_extract_mode of include/libvat.h:
 *   raw  — the answer is the completion exactly as given (strict evaluation);
 *   auto — for chat models: drop <think> blocks and HTML comments; then, in
 *          order, the last <answer>…</answer> pair; the last fenced code
 *          block whose info string fits the answer kind; the last \boxed{};
 *          the last answer line ("Answer:", "**Answer:**", "## Answer", …);
 *          a closing sentence that commits to an answer ("The answer is
 *          X."); the last fenced block of any kind; the trailing SQL
 *          statement (SQL answers); a bare last line that is JSON (value
 *          answers); the whole text when it is one line, one JSON value or
 *          starts with SELECT/WITH; else no answer (rule "none").
 *
 * The extraction never allocates: the answer comes from one contiguous
 * slice of the completion, written out by vat_extract_write, which may
 * decode it (a Python string literal, a number written in prose) into
 * at most as many bytes.  One forward pass per rule, so the time is
 * linear in the completion's length whatever its content. */
#ifndef VAT_EXTRACT_H
#define VAT_EXTRACT_H

#include <stddef.h>

#include "../include/libvat.h" /* vat_extract_mode: one definition of the modes */

/* Completions larger than this are refused with the verdict code
 * "completion_too_large" (VAT_COMPLETION_TOO_LARGE in vat.h). */
#define VAT_MAX_COMPLETION_BYTES (4u << 20) /* 4 MiB */

/* How the slice becomes the answer (vat_extract_write). */
enum vat_extract_decode {
    VAT_DECODE_NONE = 0, /* the slice as it is */
    VAT_DECODE_PY_RAW,   /* the body of a Python raw string literal: as it is */
    VAT_DECODE_PY,       /* the body of a Python string literal: escapes decoded */
    VAT_DECODE_NUMBER,   /* a prose number: currency sign and thousands separators dropped */
};

struct vat_extraction {
    const char *text; /* points INTO the completion (no copy) */
    size_t len;
    /* "raw" | "answer_tag" | "fence" | "boxed" | "answer_line" | "sentence"
     * | "sql_tail" | "last_line" | "whole" | "none" (no answer found) */
    const char *rule;
    enum vat_extract_decode decode;
};

/* answer_kind: "value" | "regex" | "sql" | "abstain" (it decides which
 * fence info strings fit and which rules apply; any other kind, or NULL,
 * fits an untagged or "text" fence only and gets the rules every kind
 * has).  mode: VAT_EXTRACT_RAW or VAT_EXTRACT_AUTO (any other value is
 * taken as AUTO).  completion need not be NUL-terminated; NULL is taken as
 * the empty completion.  Returns 0 with *out set, or -1 when len is
 * larger than VAT_MAX_COMPLETION_BYTES (then *out is an empty answer with
 * the rule "raw" or "none"). */
int vat_extract(const char *answer_kind, const char *completion, size_t len, int mode,
                struct vat_extraction *out);

/* Writes the answer x stands for into dst (room for x->len bytes: no
 * decoding lengthens it) and returns its length.  Not NUL-terminated. */
size_t vat_extract_write(const struct vat_extraction *x, char *dst);

/* What auto looks for in a completion of that answer kind, as the reason
 * of a no_answer verdict (one line, static). */
const char *vat_extract_looked_for(const char *answer_kind);

#endif

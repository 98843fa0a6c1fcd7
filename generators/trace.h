/* trace.h — which readers and queries a derivation used.  Shared readers
 * note what they read (a CSV's rows, a CSV loaded into SQLite, a table's
 * rows, an SQL text) while a trace is open on the calling thread; nothing
 * is recorded otherwise, so the pipeline pays one thread-local load per
 * read.  tests/test_rules.c opens a trace around reference() and around
 * confirm() to see that confirm answers the question another way.
 * Exports struct vat_trace, vat_trace_open, vat_trace_close,
 * vat_trace_note, vat_trace_has and vat_trace_release. */
#ifndef VAT_TRACE_H
#define VAT_TRACE_H

#include <stdbool.h>
#include <stddef.h>

struct vat_trace {
    char **item; /* "<kind>: <what>", in the order noted, repeats kept once */
    size_t n, cap;
};
#define VAT_TRACE_INIT {NULL, 0, 0}

/* Starts recording this thread's notes into t (replacing an open trace). */
void vat_trace_open(struct vat_trace *t);
/* Stops recording on this thread. */
void vat_trace_close(void);
/* Records "<kind>: <what>" into the open trace; a no-op when none is open. */
void vat_trace_note(const char *kind, const char *what);
/* True when t holds item. */
bool vat_trace_has(const struct vat_trace *t, const char *item);
void vat_trace_release(struct vat_trace *t);

#endif

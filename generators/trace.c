/* trace.c — the per-thread derivation trace of trace.h.
 * Exports vat_trace_open, vat_trace_close, vat_trace_note, vat_trace_has
 * and vat_trace_release. */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vat.h"

/* Tasks are drawn on several threads: each records only its own reads. */
static _Thread_local struct vat_trace *open_trace;

void vat_trace_open(struct vat_trace *t)
{
    open_trace = t;
}

void vat_trace_close(void)
{
    open_trace = NULL;
}

bool vat_trace_has(const struct vat_trace *t, const char *item)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->item[i], item) == 0)
            return true;
    return false;
}

void vat_trace_note(const char *kind, const char *what)
{
    struct vat_trace *t = open_trace;
    if (!t)
        return;
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_printf(&b, "%s: %s", kind, what ? what : "");
    char *item = vat_buf_detach(&b);
    if (vat_trace_has(t, item)) {
        free(item);
        return;
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 8;
        t->item = vat_xrealloc(t->item, t->cap * sizeof *t->item);
    }
    t->item[t->n++] = item;
}

void vat_trace_release(struct vat_trace *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->item[i]);
    free(t->item);
    t->item = NULL;
    t->n = t->cap = 0;
}

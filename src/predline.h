/* predline.h — reads one untrusted line of a predictions file for `vat
 * score`: {"task_id": "...", "answer": ..., "sample": N}.  The line is
 * scanned by its own JSON grammar walk rather than decoded whole, so
 * numbers of any size ("1e400", 30-digit integers) are taken as the text
 * they are (the checker judges them), and a line whose answer cannot be
 * read still yields its task id.  Exports vat_pred_read and
 * vat_pred_release. */
#ifndef VAT_PREDLINE_H
#define VAT_PREDLINE_H
#ifdef VAT_LAYER_BUILDER
#error "predline.h is the command's (src/main.c, src/cmd_*.c): the builder must not include it"
#endif

#include <stdbool.h>
#include <stddef.h>

#define VAT_PRED_MAX_DEPTH 1000 /* nesting of the answer value */

struct vat_pred {
    char *task_id;       /* decoded; NULL when the line has no readable one */
    char *answer;        /* a string answer decoded, else the value's JSON text */
    size_t answer_len;   /* bytes (a string answer may hold NUL bytes) */
    long sample;         /* the "sample" member, or -1 when absent */
    const char *code;    /* NULL when task_id and answer were read; else "parse" */
    char reason[200];
};

/* Reads one line (len bytes, no line end).  Returns 0 when both the task
 * id and the answer were read; else -1 with p->code and p->reason set, and
 * p->task_id still set when the id could be read (the answer could not:
 * the line counts against its task).  Release p in both cases. */
int vat_pred_read(const char *line, size_t len, struct vat_pred *p);
void vat_pred_release(struct vat_pred *p);

#endif

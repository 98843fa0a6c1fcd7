/* verify.h — a corpus proves itself: every file against out/manifest.json,
 * every verifiers row against its rollouts (src/verify.c).  Exports
 * struct vat_verify, vat_verify_run and vat_verify_corpus. */
#ifndef VAT_VERIFY_H
#define VAT_VERIFY_H

#include <stdbool.h>

#include <jansson.h>

struct vat_verify {
    const char *root;
    json_t *manifest; /* out/manifest.json, NULL when it cannot be read */
    long mismatches, files, tasks;
    void (*report)(void *arg, const char *line); /* each mismatch, one line */
    void *arg;
    bool warn; /* print the warnings (other library versions) */
};

/* Checks the corpus at v->root, each mismatch handed to v->report;
 * counts into v->mismatches, v->files and v->tasks. */
void vat_verify_run(struct vat_verify *v);
/* What `vat verify` checks of the corpus at root (every file against
 * out/manifest.json, every verifiers row against its rollouts with the
 * task's own checker), each mismatch handed to report as one line (not
 * escaped: the printer escapes).  The number of mismatches; *files and
 * *tasks (may be NULL) get the counts checked. */
long vat_verify_corpus(const char *root, void (*report)(void *arg, const char *line), void *arg,
                       long *files, long *tasks);

#endif

/* corpus.h — libvat's corpus handle as vat's own command-line tools see
 * it: the public calls of include/libvat.h plus the internal ones `vat
 * check`, `vat score` and `vat-bench` need (the task rows, the verdict as
 * a struct).  Not installed: the shared library exports only libvat.h.
 * Exports vat_corpus_task_count, vat_corpus_task_id, vat_corpus_row,
 * vat_corpus_experience_row, vat_corpus_rollout_answer,
 * vat_corpus_score_verdict, vat_corpus_memo_stats, vat_corpus_memo_limits,
 * vat_corpus_cache_stats, and what lib/env.c needs (vat_corpus_ext, the
 * vat_corpus_task_* calls). */
#ifndef VAT_CORPUS_H
#define VAT_CORPUS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "../include/libvat.h"
#include "vat.h"

/* The verdict of one scored completion, as the library computes it. */
struct vat_scored {
    struct vat_verdict v;
    bool is_trap;
    const char *rule;       /* the extraction rule that fired (static) */
    char *extracted;        /* the answer the checker saw (NUL-terminated copy) */
    size_t extracted_len;
    long long work;         /* vat_result_work */
};

/* Tasks in verifiers-table order (train then test), duplicates dropped. */
size_t vat_corpus_task_count(const vat_corpus *c);
const char *vat_corpus_task_id(const vat_corpus *c, size_t i);
/* The parsed verifiers row of a task (borrowed; lives as long as c), or
 * NULL when the task is unknown or its row cannot be parsed. */
const json_t *vat_corpus_row(vat_corpus *c, const char *task_id);
/* The parsed experience row of a task (borrowed), or NULL. */
const json_t *vat_corpus_experience_row(vat_corpus *c, const char *task_id);
/* The same, parsed for the caller alone (a new reference; the handle
 * keeps nothing of it), or NULL. */
json_t *vat_corpus_experience_parse(vat_corpus *c, const char *task_id);
/* The answer text of the task's rollout of that role ("gold", "trap",
 * "malformed"), borrowed, or NULL. */
const char *vat_corpus_rollout_answer(vat_corpus *c, const char *task_id, const char *role);

/* Scores like vat_corpus_score, into *out (release with
 * vat_scored_release).  Returns -1 with err set only for an unknown task. */
int vat_corpus_score_verdict(vat_corpus *c, const char *task_id, const char *completion,
                             size_t len, vat_extract_mode mode, struct vat_scored *out,
                             vat_error *err);
void vat_scored_release(struct vat_scored *s);

/* The verdict memo of SQL tasks (lib/corpus.c, docs/limits.md): its
 * figures so far. */
struct vat_memo_stats {
    bool enabled;         /* VAT_VERDICT_MEMO was not 0 at open */
    size_t entries, bytes; /* held now */
    size_t bytes_cap, per_task;
    unsigned long long hits, misses;
};
void vat_corpus_memo_stats(vat_corpus *c, struct vat_memo_stats *s);
/* Sets the memo's bounds (tests: eviction on a small budget): at most
 * per_task entries per task, total_bytes in all, answers of at most
 * max_answer bytes.  Entries over the new bounds are dropped.  Not to be
 * called while other threads score on c. */
void vat_corpus_memo_limits(vat_corpus *c, size_t per_task, size_t total_bytes,
                            size_t max_answer);

/* The cache of everything a handle keeps between scores (lib/corpus.c,
 * "the cache"): its figures so far. */
struct vat_cache_stats {
    size_t budget;        /* the byte budget (vat_open_options.cache_bytes) */
    size_t bytes;         /* counted now: memo entries and task states */
    size_t peak;          /* the sum of the shards' highest counts: at least
                           * the highest count the whole cache reached */
    size_t memo_bytes, memo_entries, states;
    unsigned long long evictions, state_builds;
    unsigned long long env_builds; /* tool-use environments made */
};
void vat_corpus_cache_stats(vat_corpus *c, struct vat_cache_stats *s);

/* What the tool-use episodes (lib/env.c) need of the handle: its root;
 * the digest out/manifest.json records for rel (1 with out filled, 0
 * when it lists none, -1 when the corpus has no manifest); marking it
 * tampered (every score then says so; the first reason stays); whether it
 * is (the reason into msg); and one pointer of state made on first need by
 * make (called without the handle's lock; a racing second one is freed)
 * and freed by free_fn at close. */
const char *vat_corpus_root(const vat_corpus *c);
int vat_corpus_manifest_digest(vat_corpus *c, const char *rel, char out[65]);
void vat_corpus_set_tampered(vat_corpus *c, const char *rel, const char *what);
bool vat_corpus_tampered(vat_corpus *c, char *msg, size_t cap);
void *vat_corpus_ext(vat_corpus *c, void *(*make)(vat_corpus *), void (*free_fn)(void *));

/* A task's state as the tool-use episodes hold it (lib/env.c): the one
 * the cache keeps, with a reference for the caller, so an eviction never
 * frees it under a running episode.  NULL for an unknown task. */
struct vat_task_ref;
struct vat_task_ref *vat_corpus_task_acquire(vat_corpus *c, const char *task_id);
void vat_corpus_task_release(struct vat_task_ref *t);
/* What lib/env.c keeps of a task with its state, under the cache's
 * budget: its first member, the bytes it holds now (called from any
 * thread, at any time) and how to free it (with the state). */
struct vat_task_env {
    size_t (*bytes)(const struct vat_task_env *x);
    void (*free)(struct vat_task_env *x);
};
/* The environment of t's task: the one its state holds, or made now by
 * make(c, checker, arg), checker the task's checker spec (borrowed; NULL
 * when its verifiers row cannot be read), once per state (never NULL),
 * and counted with the state. */
struct vat_task_env *vat_corpus_task_env(vat_corpus *c, struct vat_task_ref *t,
                                         struct vat_task_env *(*make)(vat_corpus *,
                                                                      const json_t *, void *),
                                         void *arg);
/* Counts t's bytes again (after a call that may have grown them), making
 * room least recently used first. */
void vat_corpus_task_recharge(vat_corpus *c, struct vat_task_ref *t);
/* Scores like vat_corpus_score_verdict, with t's state. */
void vat_corpus_task_score(vat_corpus *c, struct vat_task_ref *t, const char *completion,
                           size_t len, vat_extract_mode mode, struct vat_scored *out);

#endif

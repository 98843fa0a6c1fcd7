/* testutil.h — helpers shared by the cmocka tests: scratch directories
 * and file reads, and the template-test harness (vat_tt_*).  Exports
 * vat_test_tmpdir, vat_test_rmtree, vat_test_read_file and vat_tt_*. */
#ifndef VAT_TESTUTIL_H
#define VAT_TESTUTIL_H

#include <stddef.h>

/* Creates a fresh directory under $TMPDIR (or /tmp); returns a new string. */
char *vat_test_tmpdir(const char *tag);
/* Removes a directory tree (only below /tmp or $TMPDIR). */
void vat_test_rmtree(const char *dir);
/* Reads a whole file into a new NUL-terminated buffer; NULL if unreadable. */
char *vat_test_read_file(const char *path, size_t *len);

/* ---- the template-test harness --------------------------------------------
 * What every tests/test_<template>.c needs: a scratch root and the
 * template's default params per group, drawing a task as the pipeline
 * does, reading its fixture back, the prompt's inline data block and
 * scoring an answer through the template's own check. */
#include "admit.h"

struct vat_tt_env {
    const struct vat_template *tmpl;
    char *dir;    /* scratch corpus root */
    json_t *cfg;  /* the template's default params */
    uint64_t seed;
};

/* Allocates an env for tmpl with seed; pair with vat_tt_env_free. */
struct vat_tt_env *vat_tt_env_new(const struct vat_template *tmpl, uint64_t seed);
void vat_tt_env_free(struct vat_tt_env *v);
/* Draws task `index` below root (v->dir when NULL) as the pipeline does,
 * redrawing up to max_attempts times; fails the test if none admits.
 * Returns the number of redraws it took. */
uint32_t vat_tt_draw(const struct vat_tt_env *v, struct vat_task *t, const char *root,
                     uint32_t index, size_t inline_max, uint32_t max_attempts,
                     struct vat_replay *r);
/* Draws t (vat_task_init done) with o, redrawing up to max_redraws
 * times: the attempt that admitted, or max_redraws + 1 with *e holding
 * the last refusal. */
uint32_t vat_tt_draw_with(struct vat_task *t, const struct vat_draw_opts *o, uint32_t max_redraws,
                          struct vat_replay *r, struct vat_err *e);
/* tmpl's default params with every task at `level` (new reference). */
json_t *vat_tt_level_cfg(const struct vat_template *tmpl, int level);
/* Puts every task v draws from now on at `level`. */
void vat_tt_env_set_level(struct vat_tt_env *v, int level);
/* The bytes of fixture fi of t in a new buffer (fails the test if unreadable). */
char *vat_tt_fixture_text(const struct vat_task *t, int fi, size_t *len);
/* The text of the first ```<lang> block of a prompt, in a new string. */
char *vat_tt_inline_block(const char *prompt, const char *lang);
/* Scores answer through t's template check. */
struct vat_verdict vat_tt_check(const struct vat_task *t, const char *answer);
/* Tasks 0..n-1 of one template drawn once for a whole cmocka group, each
 * admitted on its first draw (group_setup / group_teardown state). */
struct vat_tt_drawn {
    struct vat_tt_env *env;
    struct vat_task *t;
    uint32_t n;
};
struct vat_tt_drawn *vat_tt_drawn_new(const struct vat_template *tmpl, uint64_t seed, uint32_t n);
void vat_tt_drawn_free(struct vat_tt_drawn *d);
/* The string member key of t's params (fails the test when absent). */
const char *vat_tt_param_str(const struct vat_task *t, const char *key);

/* Asserts that b is a byte-for-byte repeat of a: prompt, gold, trap,
 * params, and every fixture's path, digest and bytes. */
void vat_tt_assert_same_task(const struct vat_task *a, const struct vat_task *b);
/* Asserts that attempt 1 of task `index`, drawn below root, writes a main
 * fixture other than first's: a redraw is a fresh draw, not a repeat. */
void vat_tt_assert_redraw_differs(const struct vat_tt_env *v, const char *root, uint32_t index,
                                  const struct vat_task *first);
/* Asserts that t's prompt states the answer's shape, whatever its wording:
 * it says JSON and names the spec's shape (a number, an object, a list or array);
 * an SQL task asks for a SELECT, a regex task for a pattern.
 * Replaces tests that demanded one literal phrase (phrasings
 * vary). */
void vat_tt_assert_states_shape(const struct vat_task *t);
/* Asserts the three admission replays: gold ok/1, trap gated/0, malformed not gated. */
void vat_tt_assert_replays(const struct vat_replay *r);

/* ---- regex decoy kinds held back for the higher levels -------------------
 * A regex template's decoy kinds that only tasks at VAT_RX_HELD_BACK_LEVEL
 * and above plant (templates/regexgen.h), as its test describes them. */
#define VAT_TT_MAX_DECOYS 8
struct vat_tt_held_back {
    const struct vat_template *tmpl;
    uint64_t seed;
    unsigned kinds;  /* bits of the held-back kinds (the template's enum kind)  */
    int n_mistakes;  /* the mistakes only these decoys are planted against       */
    /* Mistake k (0..n_mistakes-1) for task t as a new pattern, or NULL where
     * it does not apply to t's question. */
    char *(*mistake)(const struct vat_task *t, int k);
    unsigned pass_below; /* bit k: no lower-level decoy catches mistake k   */
    /* Writes up to VAT_TT_MAX_DECOYS hand-made decoys of the held-back kinds
     * in t's question into text[i], with mistake[i] the mistake that takes
     * text[i] whole (-1: none); returns how many. */
    int (*decoys)(const struct vat_task *t, char text[][64], int *mistake);
    uint32_t tasks; /* tasks drawn per level */
};
/* cmocka tests whose state is a struct vat_tt_held_back (register them
 * with cmocka_unit_test_prestate).  At level 4: each task's held-out
 * lines hold every held-back kind and its examples none; gold scores 1
 * and takes none of the hand-made decoys, each of which its mistake takes
 * whole; every mistake that applies scores below 1 on the held-out lines
 * alone.  At levels 1 and 2: no line holds a held-back kind, and every
 * mistake of pass_below that applies scores 1. */
void vat_tt_held_back_at_level_4(void **state);
void vat_tt_held_back_below_level_3(void **state);

/* The copy-me templates, one per family (templates/skeleton.c,
 * skeleton_regex.c, skeleton_sql.c): compiled and held to every test a
 * registered template is, but not registered.  Ended by NULL. */
extern const struct vat_template *const vat_tt_skeletons[];
/* Template i of every registered template (registry order) followed by
 * the skeletons; NULL past the last. */
const struct vat_template *vat_tt_each(size_t i);

#endif

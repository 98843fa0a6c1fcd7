/* split.h — which side (train / test) a task lands on.  A task's side is
 * a function of (template, index, salt, fraction, mode) alone, so it never
 * moves when counts grow and any shard can compute it.
 * Exports vat_split_side. */
#ifndef VAT_SPLIT_H
#define VAT_SPLIT_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

/* Returns "train" or "test".
 *   random: the template's tasks are evenly spaced: index i is test iff
 *     floor((i+1)*f + o) > floor(i*f + o), with the offset o in [0,1) taken
 *     from SHA-256(salt 0x00 template); any prefix of n tasks then holds
 *     floor or ceil of n*f test tasks, i.e. within one task of the fraction.
 *   held_out_templates: a listed template is wholly test and every other
 *     template wholly train, so test measures templates never trained on. */
const char *vat_split_side(const struct vat_config *c, const char *tmpl, uint32_t index);
/* The same rule with explicit inputs (for tests and tools). */
bool vat_split_is_test(const char *salt, double fraction, const char *tmpl, uint32_t index);

#endif

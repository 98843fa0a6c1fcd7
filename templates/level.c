/* level.c — difficulty levels: the draw and the size plan (see level.h). */
#include "level.h"

#include <stdio.h>
#include <string.h>

#include "rng.h"
#include "template.h"
#include "trapmod.h"

/* Rows past any prompt's inline share, and the level-5 floor the corpus
 * promises ("at least 2,000 rows"). */
#define LEVEL4_LO 600
#define LEVEL4_HI 1200
#define LEVEL5_LO 2000
#define LEVEL5_HI 2400

int vat_level_draw(uint64_t master_seed, const char *name, uint32_t index, const json_t *cfg)
{
    const json_t *w = json_object_get(cfg, "difficulty");
    uint64_t weights[VAT_LEVELS] = {0}, total = 0;
    for (size_t l = 0; l < VAT_LEVELS; l++) {
        json_int_t v = json_integer_value(json_array_get(w, l));
        weights[l] = v > 0 ? (uint64_t)v : 0;
        total += weights[l];
    }
    if (total == 0)
        return 1;
    /* Tasks come in blocks of `total` consecutive indexes; within a block
     * a permutation keyed by (seed, template, "difficulty", block) deals
     * each level exactly its weight, so a template of 5 tasks or more
     * under "1-5" has every level, and nothing but this key moves. */
    uint64_t block = index / total;
    uint64_t key = vat_rng_key(master_seed, name, "difficulty") ^ (block * 0x9E3779B97F4A7C15ull);
    uint64_t p = vat_rng_permute(key, total, index % total);
    for (int l = 0; l < VAT_LEVELS; l++) {
        if (p < weights[l])
            return l + 1;
        p -= weights[l];
    }
    return 1;
}

static bool is_family(const struct vat_template *tm, const char *f)
{
    return tm && tm->family && strcmp(tm->family, f) == 0;
}

void vat_level_rows(const struct vat_template *tm, int level, long min, long max, long cap_rows,
                    bool full, long decl_max, long *lo, long *hi)
{
    *lo = min;
    *hi = max;
    if (level <= 1)
        return;
    if (is_family(tm, "regex")) {
        long m = 1L << (level - 1);
        *lo = min * m < decl_max ? min * m : decl_max;
        *hi = max * m < decl_max ? max * m : decl_max;
        return;
    }
    switch (level) {
    case 2:
        /* the upper half of level 1 and no more than a prompt shows, so
         * a value question still sees every row */
        *lo = (min + max) / 2;
        *hi = max;
        if (*hi > cap_rows && cap_rows >= min) {
            *hi = cap_rows;
            *lo = (min + cap_rows) / 2;
        }
        break;
    case 3:
        *lo = max;
        *hi = 3 * max;
        break;
    case 4:
        *lo = 3 * max > LEVEL4_LO ? 3 * max : LEVEL4_LO;
        *hi = *lo > LEVEL4_HI ? *lo : LEVEL4_HI;
        break;
    default:
        *lo = LEVEL5_LO;
        *hi = LEVEL5_HI;
        break;
    }
    /* A value answer with no program form is only fair over rows its
     * prompt shows; inline = "full" promises every fixture shown whole. */
    bool shown_only = full || (!tm->progform && (strcmp(tm->answer_kind, "value") == 0 ||
                                                 strcmp(tm->answer_kind, "abstain") == 0));
    if (shown_only) {
        long cap = full ? cap_rows : (max > cap_rows ? max : cap_rows);
        if (cap < min)
            cap = min;
        if (*hi > cap)
            *hi = cap;
        if (*lo > *hi)
            *lo = *hi;
    }
}

bool vat_level_size_pair(const struct vat_template *tm, const struct vat_param **pmin,
                         const struct vat_param **pmax)
{
    static const enum vat_param_role roles[] = {VAT_PARAM_ROWS, VAT_PARAM_HELDOUT};
    for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++) {
        const struct vat_param *found[2] = {NULL, NULL};
        int n = 0;
        for (const struct vat_param *p = tm ? tm->params : NULL; p && p->name; p++)
            if (p->role == roles[r] && p->type == VAT_PARAM_INT && n < 2)
                found[n++] = p;
        if (n == 2) {
            *pmin = found[0];
            *pmax = found[1];
            return true;
        }
    }
    return false;
}

static long cap_rows_of(long inline_max_bytes)
{
    return inline_max_bytes / VAT_INLINE_ROW_BYTES;
}

/* The level's rows range for tm under cfg; false when tm has no rows. */
static bool level_range(const struct vat_template *tm, const json_t *cfg, int level,
                        long inline_max_bytes, bool full, long *lo, long *hi)
{
    const struct vat_param *pmin, *pmax;
    if (!vat_level_size_pair(tm, &pmin, &pmax))
        return false;
    const json_t *vmin = json_object_get(cfg, pmin->name);
    const json_t *vmax = json_object_get(cfg, pmax->name);
    if (!json_is_integer(vmin) || !json_is_integer(vmax))
        return false;
    vat_level_rows(tm, level, (long)json_integer_value(vmin), (long)json_integer_value(vmax),
                   cap_rows_of(inline_max_bytes), full, (long)pmax->max, lo, hi);
    return true;
}

void vat_task_set_level(struct vat_task *t, int level)
{
    if (t->level_cfg) {
        t->cfg = t->base_cfg;
        json_decref(t->level_cfg);
        t->level_cfg = NULL;
    }
    t->level = level < 1 ? 1 : level > VAT_LEVELS ? VAT_LEVELS : level;
    long lo, hi;
    if (t->level == 1 || !t->cfg ||
        !level_range(t->tmpl, t->cfg, t->level, (long)t->inline_max_bytes, t->inline_full, &lo,
                     &hi))
        return;
    t->base_cfg = t->cfg;
    t->level_cfg = json_deep_copy(t->cfg);
    const struct vat_param *pmin, *pmax;
    vat_level_size_pair(t->tmpl, &pmin, &pmax); /* level_range found the pair */
    json_object_set_new(t->level_cfg, pmin->name, json_integer(lo));
    json_object_set_new(t->level_cfg, pmax->name, json_integer(hi));
    t->cfg = t->level_cfg;
}

bool vat_level_past_prompt(const struct vat_task *t)
{
    const struct vat_param *pmin, *pmax;
    if (vat_task_level(t) <= 1 || t->inline_full || !t->cfg ||
        !vat_level_size_pair(t->tmpl, &pmin, &pmax) || pmin->role != VAT_PARAM_ROWS)
        return false;
    json_int_t lo = json_integer_value(json_object_get(t->cfg, pmin->name));
    return lo > cap_rows_of((long)t->inline_max_bytes);
}

int vat_task_level(const struct vat_task *t)
{
    return t->level < 1 ? 1 : t->level > VAT_LEVELS ? VAT_LEVELS : t->level;
}

void vat_level_doc(struct vat_buf *b, const struct vat_template *tm, const json_t *cfg,
                   long inline_max_bytes, bool full)
{
    const char *what = is_family(tm, "regex") ? "held-out lines" : "rows";
    for (int l = 1; l <= VAT_LEVELS; l++) {
        long lo, hi;
        if (!level_range(tm, cfg, l, inline_max_bytes, full, &lo, &hi)) {
            vat_buf_puts(b, "the same task shape at every level");
            return;
        }
        vat_buf_printf(b, "%s%d: %ld-%ld %s", l > 1 ? "; " : "", l, lo, hi, what);
    }
    if (tm->progform && !full)
        vat_buf_puts(b, "; a value question whose rows the prompt cannot all show is asked "
                        "as a program");
    if (tm->notation_hardness)
        vat_buf_puts(b, "; the notation from a harder class at each level (level 1 the easiest "
                        "40% of them, levels 2-5 a quarter of the rest each)");
    unsigned acc = vat_trapmod_accepted(tm);
    if (!acc)
        return;
    vat_buf_printf(b, "; trap modules on %s fixtures, level 3 one of ",
                   tm->modules->db_tables ? "SQLite" : "CSV");
    const char *sep = "";
    for (unsigned m = 1; m <= VAT_TM_LAST; m <<= 1)
        if (acc & m) {
            vat_buf_printf(b, "%s%s", sep, vat_trapmod_name(m));
            sep = ", ";
        }
    vat_buf_puts(b, " in turn, levels 4-5 all of them");
}

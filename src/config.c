/* config.c — seeds.toml: reads the file, checks every table and key
 * against the template registry with PATH:LINE messages (nothing unknown
 * is ever ignored), and resolves each registered template's count and
 * params with the defaults filled in.
 * Exports vat_config_load, vat_config_parse, vat_config_parse_registry
 * and vat_config_release. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"
#include "toml.h"

#define MAX_FILE_BYTES (1024L * 1024L)
#define MAX_COUNT 100000
#define MAX_INLINE_BYTES 1048576
#define MAX_REDRAWS 1000

static const char *const SPLIT_RANDOM = "random";
static const char *const SPLIT_HELD_OUT = "held_out_templates";

static const char *const ROOT_KEYS[] = {"corpus", "templates"};
static const char *const CORPUS_KEYS[] = {
    "master_seed", "test_fraction", "split", "held_out_templates",
    "split_salt", "inline_max_bytes", "max_redraws", "strength_target",
    "prompt_style", "inline", "difficulty",
};

/* Prompt styles: "mixed" draws explicit or natural per task. */
static bool style_ok(const char *s)
{
    return s && (strcmp(s, "explicit") == 0 || strcmp(s, "natural") == 0 ||
                 strcmp(s, "mixed") == 0);
}

struct ctx {
    const char *path;
    json_t *lines;
    const struct vat_template *const *reg;
    struct vat_err *e;
    const char *prompt_style; /* the corpus-wide style, once [corpus] is read */
    bool inline_full;         /* [corpus] inline = "full"                    */
    long inline_max_bytes;
    long difficulty[VAT_LEVELS]; /* [corpus] difficulty as weights per level */
};

/* Reports at the line where key_path was defined, else at fallback. */
static int cerr(const struct ctx *x, const char *key_path, long fallback, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int cerr(const struct ctx *x, const char *key_path, long fallback, const char *fmt, ...)
{
    char msg[400];
    json_t *l = key_path ? json_object_get(x->lines, key_path) : NULL;
    long line = json_is_integer(l) ? (long)json_integer_value(l) : fallback;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return vat_err_set(x->e, "%s:%ld: %s", x->path, line < 1 ? 1 : line, msg);
}

static long line_of(const struct ctx *x, const char *key_path, long fallback)
{
    json_t *l = json_object_get(x->lines, key_path);
    return json_is_integer(l) ? (long)json_integer_value(l) : fallback;
}

/* The shortest decimal that reads back as x, without a forced ".0";
 * whole numbers are written out ("1000000", not "1e+06"). */
static const char *fmt_num(double x, char out[32])
{
    if (x == floor(x) && fabs(x) < 1e15) {
        snprintf(out, 32, "%.0f", x);
        return out;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, 32, "%.*g", prec, x);
        if (strtod(out, NULL) == x)
            break;
    }
    return out;
}

/* Levenshtein distance, or 3 (too far to suggest) when cheaper to tell. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t row[64], prev[64];
    if ((la > lb ? la - lb : lb - la) > 2 || lb >= 64)
        return 3;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = row[j - 1] + 1;
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, row, (lb + 1) * sizeof *row);
    }
    return prev[lb];
}

/* Writes "; did you mean 'X'?" for the nearest candidate within distance
 * 2 (the first one on a tie), or "" when none is that near. */
static const char *suggest(const char *word, const char *const *cands, size_t n, char out[128])
{
    size_t best = 3;
    const char *pick = NULL;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(word, cands[i]);
        if (d < best) {
            best = d;
            pick = cands[i];
        }
    }
    if (pick)
        snprintf(out, 128, "; did you mean '%s'?", pick);
    else
        out[0] = 0;
    return out;
}

static const struct vat_template *find_template(const struct ctx *x, const char *name)
{
    for (size_t i = 0; x->reg[i]; i++)
        if (strcmp(x->reg[i]->name, name) == 0)
            return x->reg[i];
    return NULL;
}

static int unknown_template(const struct ctx *x, const char *where, long fallback,
                            const char *name, const char *in)
{
    size_t n = 0;
    while (x->reg[n])
        n++;
    const char **names = vat_xcalloc(n + 1, sizeof *names);
    for (size_t i = 0; i < n; i++)
        names[i] = x->reg[i]->name;
    char hint[128];
    suggest(name, names, n, hint);
    free(names);
    return cerr(x, where, fallback, "unknown template '%s'%s%s", name, in, hint);
}

/* ---- typed values ------------------------------------------------------ */

static int get_int(const struct ctx *x, const char *key_path, const json_t *v, long long lo,
                   long long hi, long long *out)
{
    if (!json_is_integer(v))
        return cerr(x, key_path, 1, "'%s' must be an integer", key_path);
    long long n = json_integer_value(v);
    if (n < lo || n > hi)
        return cerr(x, key_path, 1, "'%s' must be between %lld and %lld", key_path, lo, hi);
    *out = n;
    return 0;
}

static int get_number(const struct ctx *x, const char *key_path, const json_t *v, double *out)
{
    if (!json_is_number(v))
        return cerr(x, key_path, 1, "'%s' must be a number", key_path);
    *out = json_number_value(v);
    return 0;
}

/* ---- difficulty ---------------------------------------------------------- */

#define DIFFICULTY_FORMS "a level 1 to 5, a range such as \"2-4\" or [2, 4], or weights such as {1 = 1, 5 = 2}"
#define MAX_LEVEL_WEIGHT 1000000

/* A difficulty value as weights per level w[0..4] (levels 1..5): a level
 * (that level alone), a range "a-b" or [a, b] (each level of it alike),
 * or an inline table {level = weight} (weights are integers >= 0, at
 * least one of them above 0). */
static int get_difficulty(const struct ctx *x, const char *kp, const json_t *v, long fallback,
                          long w[VAT_LEVELS])
{
    long lo = 0, hi = 0;
    memset(w, 0, VAT_LEVELS * sizeof *w);
    if (json_is_integer(v)) {
        lo = hi = (long)json_integer_value(v);
        if (json_integer_value(v) < 1 || json_integer_value(v) > VAT_LEVELS)
            return cerr(x, kp, fallback, "'%s' must be %s", kp, DIFFICULTY_FORMS);
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        int used = 0;
        if (sscanf(s, "%1ld-%1ld%n", &lo, &hi, &used) != 2 || s[used] != 0 || lo < 1 ||
            hi > VAT_LEVELS)
            return cerr(x, kp, fallback, "'%s' must be %s", kp, DIFFICULTY_FORMS);
    } else if (json_is_array(v)) {
        const json_t *a = json_array_get(v, 0), *b = json_array_get(v, 1);
        if (json_array_size(v) != 2 || !json_is_integer(a) || !json_is_integer(b) ||
            json_integer_value(a) < 1 || json_integer_value(b) > VAT_LEVELS ||
            json_integer_value(a) > VAT_LEVELS || json_integer_value(b) < 1)
            return cerr(x, kp, fallback, "'%s' must be %s", kp, DIFFICULTY_FORMS);
        lo = (long)json_integer_value(a);
        hi = (long)json_integer_value(b);
    } else if (json_is_object(v)) {
        const char *key;
        const json_t *wv;
        long total = 0;
        json_object_foreach((json_t *)v, key, wv) {
            if (strlen(key) != 1 || key[0] < '1' || key[0] > '0' + VAT_LEVELS)
                return cerr(x, kp, fallback, "'%s' has a key '%s' that is not a level 1 to 5",
                            kp, key);
            if (!json_is_integer(wv) || json_integer_value(wv) < 0 ||
                json_integer_value(wv) > MAX_LEVEL_WEIGHT)
                return cerr(x, kp, fallback,
                            "'%s' gives level %s a weight that is not an integer from 0 to %d",
                            kp, key, MAX_LEVEL_WEIGHT);
            w[key[0] - '1'] = (long)json_integer_value(wv);
            total += w[key[0] - '1'];
        }
        if (total == 0)
            return cerr(x, kp, fallback, "'%s' must give at least one level a weight above 0",
                        kp);
        return 0;
    } else {
        return cerr(x, kp, fallback, "'%s' must be %s", kp, DIFFICULTY_FORMS);
    }
    if (lo > hi)
        return cerr(x, kp, fallback, "'%s' runs from level %ld down to %ld; write the lower level first",
                    kp, lo, hi);
    for (long l = lo; l <= hi; l++)
        w[l - 1] = 1;
    return 0;
}

/* Weights as the resolved params hold them: an array of five integers. */
static json_t *difficulty_json(const long w[VAT_LEVELS])
{
    json_t *a = json_array();
    for (int l = 0; l < VAT_LEVELS; l++)
        json_array_append_new(a, json_integer(w[l]));
    return a;
}

/* ---- [corpus] ------------------------------------------------------------ */

static int check_held_out(const struct ctx *x, struct vat_config *c, const json_t *v)
{
    const char *kp = "corpus.held_out_templates";
    size_t i;
    json_t *item;
    if (!json_is_array(v))
        return cerr(x, kp, 1, "'%s' must be an array of template names", kp);
    json_array_foreach(v, i, item) {
        if (!json_is_string(item))
            return cerr(x, kp, 1, "'%s' must be an array of template names", kp);
        const char *name = json_string_value(item);
        if (!find_template(x, name))
            return unknown_template(x, kp, 1, name, " in 'corpus.held_out_templates'");
        for (size_t j = 0; j < i; j++)
            if (strcmp(json_string_value(json_array_get(v, j)), name) == 0)
                return cerr(x, kp, 1, "template '%s' is listed twice in '%s'", name, kp);
    }
    json_decref(c->held_out);
    c->held_out = json_deep_copy(v);
    return 0;
}

static int check_corpus(const struct ctx *x, struct vat_config *c, json_t *corpus)
{
    const char *key;
    json_t *v;
    long table_line = line_of(x, "corpus", 1);
    json_object_foreach(corpus, key, v) {
        char *kp = vat_toml_path_append("corpus", key);
        long long n = 0;
        double d = 0;
        int rc = 0;
        if (strcmp(key, "master_seed") == 0) {
            if (json_is_integer(v) && json_integer_value(v) < 0)
                rc = cerr(x, kp, table_line, "'%s' must not be negative", kp);
            else if ((rc = get_int(x, kp, v, 0, LLONG_MAX, &n)) == 0)
                c->master_seed = (uint64_t)n;
        } else if (strcmp(key, "test_fraction") == 0) {
            if ((rc = get_number(x, kp, v, &d)) == 0) {
                if (!(d > 0 && d < 1))
                    rc = cerr(x, kp, table_line, "'%s' must be between 0 and 1", kp);
                else
                    c->test_fraction = d;
            }
        } else if (strcmp(key, "split") == 0) {
            const char *s = json_string_value(v);
            if (!s || (strcmp(s, SPLIT_RANDOM) != 0 && strcmp(s, SPLIT_HELD_OUT) != 0)) {
                rc = cerr(x, kp, table_line, "'%s' must be '%s' or '%s'", kp, SPLIT_RANDOM,
                          SPLIT_HELD_OUT);
            } else {
                free(c->split);
                c->split = vat_xstrdup(s);
            }
        } else if (strcmp(key, "held_out_templates") == 0) {
            rc = check_held_out(x, c, v);
        } else if (strcmp(key, "split_salt") == 0) {
            if (!json_is_string(v)) {
                rc = cerr(x, kp, table_line, "'%s' must be a string", kp);
            } else {
                free(c->split_salt);
                c->split_salt = vat_xstrdup(json_string_value(v));
            }
        } else if (strcmp(key, "inline_max_bytes") == 0) {
            if ((rc = get_int(x, kp, v, 0, MAX_INLINE_BYTES, &n)) == 0)
                c->inline_max_bytes = (long)n;
        } else if (strcmp(key, "max_redraws") == 0) {
            if ((rc = get_int(x, kp, v, 0, MAX_REDRAWS, &n)) == 0)
                c->max_redraws = (long)n;
        } else if (strcmp(key, "prompt_style") == 0) {
            const char *st = json_string_value(v);
            if (!style_ok(st)) {
                rc = cerr(x, kp, table_line, "'%s' must be 'explicit', 'natural' or 'mixed'", kp);
            } else {
                free(c->prompt_style);
                c->prompt_style = vat_xstrdup(st);
            }
        } else if (strcmp(key, "inline") == 0) {
            const char *st = json_string_value(v);
            if (!st || (strcmp(st, "sample") != 0 && strcmp(st, "full") != 0))
                rc = cerr(x, kp, table_line, "'%s' must be 'sample' or 'full'", kp);
            else
                c->inline_full = strcmp(st, "full") == 0;
        } else if (strcmp(key, "difficulty") == 0) {
            rc = get_difficulty(x, kp, v, table_line, c->difficulty);
        } else if (strcmp(key, "strength_target") == 0) {
            if ((rc = get_number(x, kp, v, &d)) == 0) {
                if (!(d >= 0 && d <= 1))
                    rc = cerr(x, kp, table_line, "'%s' must be between 0 and 1", kp);
                else
                    c->strength_target = d;
            }
        } else {
            char hint[128];
            suggest(key, CORPUS_KEYS, sizeof CORPUS_KEYS / sizeof CORPUS_KEYS[0], hint);
            rc = cerr(x, kp, table_line, "unknown key '%s'%s", kp, hint);
        }
        free(kp);
        if (rc < 0)
            return -1;
    }

    /* The split and the held-out list only make sense together. */
    size_t held = json_array_size(c->held_out);
    size_t registered = 0;
    while (x->reg[registered])
        registered++;
    if (strcmp(c->split, SPLIT_HELD_OUT) == 0 && held == 0)
        return cerr(x, "corpus.split", table_line,
                    "'corpus.held_out_templates' must name at least one template when "
                    "split is '%s'", SPLIT_HELD_OUT);
    if (strcmp(c->split, SPLIT_RANDOM) == 0 && held > 0)
        return cerr(x, "corpus.held_out_templates", table_line,
                    "'corpus.held_out_templates' must be empty when split is '%s'",
                    SPLIT_RANDOM);
    if (held > 0 && held == registered)
        return cerr(x, "corpus.held_out_templates", table_line,
                    "'corpus.held_out_templates' holds out every template, which leaves "
                    "the train split empty");
    return 0;
}

/* ---- [templates.<name>] ---------------------------------------------------- */

static int check_param(const struct ctx *x, const char *kp, const struct vat_param *p,
                       const json_t *v, long fallback)
{
    char lo[32], hi[32];
    switch (p->type) {
    case VAT_PARAM_INT:
        if (!json_is_integer(v))
            return cerr(x, kp, fallback, "'%s' must be an integer", kp);
        if ((double)json_integer_value(v) < p->min || (double)json_integer_value(v) > p->max)
            return cerr(x, kp, fallback, "'%s' must be between %s and %s", kp,
                        fmt_num(p->min, lo), fmt_num(p->max, hi));
        return 0;
    case VAT_PARAM_REAL:
        if (!json_is_number(v))
            return cerr(x, kp, fallback, "'%s' must be a number", kp);
        if (json_number_value(v) < p->min || json_number_value(v) > p->max)
            return cerr(x, kp, fallback, "'%s' must be between %s and %s", kp,
                        fmt_num(p->min, lo), fmt_num(p->max, hi));
        return 0;
    case VAT_PARAM_BOOL:
        if (!json_is_boolean(v))
            return cerr(x, kp, fallback, "'%s' must be true or false", kp);
        return 0;
    case VAT_PARAM_STR:
        if (!json_is_string(v))
            return cerr(x, kp, fallback, "'%s' must be a string", kp);
        return 0;
    }
    return cerr(x, kp, fallback, "'%s' has a parameter type vat does not know", kp);
}

static const struct vat_param *find_param(const struct vat_template *t, const char *name)
{
    for (const struct vat_param *p = t->params; p && p->name; p++)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

static int unknown_param(const struct ctx *x, const struct vat_template *t, const char *kp,
                         const char *key, long fallback)
{
    size_t n = 3;
    for (const struct vat_param *p = t->params; p && p->name; p++)
        n++;
    const char **names = vat_xcalloc(n, sizeof *names);
    names[0] = "count";
    names[1] = "prompt_style";
    names[2] = "difficulty";
    n = 3;
    for (const struct vat_param *p = t->params; p && p->name; p++)
        names[n++] = p->name;
    char hint[128];
    suggest(key, names, n, hint);
    free(names);
    return cerr(x, kp, fallback, "unknown key '%s'%s", kp, hint);
}

/* The value a param resolves to: the one given, else its default. */
static double param_number(const struct vat_param *p, const json_t *tbl)
{
    const json_t *v = json_object_get(tbl, p->name);
    return v ? json_number_value(v) : p->def;
}

/* Params declared as a pair NAME_min / NAME_max bound one range, so the
 * pair must stay ordered once seeds.toml has set either side. */
static int check_min_max(const struct ctx *x, const struct vat_template *t, const char *tp,
                         const json_t *tbl, long fallback)
{
    for (const struct vat_param *lo = t->params; lo && lo->name; lo++) {
        size_t n = strlen(lo->name);
        if (n < 4 || strcmp(lo->name + n - 4, "_min") != 0 ||
            (lo->type != VAT_PARAM_INT && lo->type != VAT_PARAM_REAL))
            continue;
        for (const struct vat_param *hi = t->params; hi->name; hi++) {
            if (hi->type != lo->type || strlen(hi->name) != n ||
                strncmp(hi->name, lo->name, n - 4) != 0 || strcmp(hi->name + n - 4, "_max") != 0)
                continue;
            double a = param_number(lo, tbl), b = param_number(hi, tbl);
            if (a <= b)
                continue;
            char *lp = vat_toml_path_append(tp, lo->name);
            char *hp = vat_toml_path_append(tp, hi->name);
            char an[32], bn[32];
            /* point at the side the file set (the lower bound if both) */
            int rc = cerr(x, json_object_get(tbl, lo->name) ? lp : hp, fallback,
                          "'%s' (%s) must not be greater than '%s' (%s)", lp, fmt_num(a, an),
                          hp, fmt_num(b, bn));
            free(lp);
            free(hp);
            return rc;
        }
    }
    return 0;
}

static int check_template(const struct ctx *x, const struct vat_template *t, const char *tp,
                          json_t *tbl)
{
    const char *key;
    json_t *v;
    long table_line = line_of(x, tp, 1);
    json_object_foreach(tbl, key, v) {
        char *kp = vat_toml_path_append(tp, key);
        const struct vat_param *p = NULL;
        long long n;
        int rc;
        if (strcmp(key, "count") == 0)
            rc = get_int(x, kp, v, 0, MAX_COUNT, &n);
        else if (strcmp(key, "prompt_style") == 0)
            rc = style_ok(json_string_value(v))
                     ? 0
                     : cerr(x, kp, table_line, "'%s' must be 'explicit', 'natural' or 'mixed'",
                            kp);
        else if (strcmp(key, "difficulty") == 0) {
            long w[VAT_LEVELS];
            rc = get_difficulty(x, kp, v, table_line, w);
        }
        else if ((p = find_param(t, key)) != NULL)
            rc = check_param(x, kp, p, v, table_line);
        else
            rc = unknown_param(x, t, kp, key, table_line);
        free(kp);
        if (rc < 0)
            return -1;
    }
    return check_min_max(x, t, tp, tbl, table_line);
}

static int check_templates(const struct ctx *x, json_t *templates)
{
    const char *name;
    json_t *v;
    long table_line = line_of(x, "templates", 1);
    json_object_foreach(templates, name, v) {
        char *tp = vat_toml_path_append("templates", name);
        const struct vat_template *t = find_template(x, name);
        int rc;
        if (!t)
            rc = unknown_template(x, tp, table_line, name, "");
        else if (!json_is_object(v))
            rc = cerr(x, tp, table_line, "'%s' must be a table", tp);
        else
            rc = check_template(x, t, tp, v);
        free(tp);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* ---- resolution ---------------------------------------------------------- */

static json_t *param_value(const struct vat_param *p, const json_t *given)
{
    switch (p->type) {
    case VAT_PARAM_INT:
        return json_integer(given ? json_integer_value(given) : (json_int_t)llround(p->def));
    case VAT_PARAM_REAL:
        return json_real(given ? json_number_value(given) : p->def);
    case VAT_PARAM_BOOL:
        return json_boolean(given ? json_is_true(given) : p->def != 0);
    case VAT_PARAM_STR:
        return json_string(given ? json_string_value(given) : p->def_str ? p->def_str : "");
    }
    return json_null();
}

/* Every registered template, in registry order: "count" first, then each
 * declared param in declaration order. */
static json_t *resolve_templates(const struct ctx *x, json_t *templates)
{
    json_t *out = json_object();
    for (size_t i = 0; x->reg[i]; i++) {
        const struct vat_template *t = x->reg[i];
        json_t *given = json_object_get(templates, t->name);
        json_t *count = json_object_get(given, "count");
        json_t *obj = json_object();
        json_object_set_new(obj, "count",
                            json_integer(count ? json_integer_value(count) : t->default_count));
        /* The style this template's tasks are drawn in: its own override,
         * else the corpus-wide setting. */
        json_t *style = json_object_get(given, "prompt_style");
        json_object_set_new(obj, "prompt_style",
                            json_string(style ? json_string_value(style) : x->prompt_style));
        /* The levels its tasks are asked at: its own, else the corpus's
         * (checked already, so the parse cannot fail). */
        json_t *dv = json_object_get(given, "difficulty");
        long w[VAT_LEVELS];
        memcpy(w, x->difficulty, sizeof w);
        if (dv)
            get_difficulty(x, "difficulty", dv, 1, w);
        json_object_set_new(obj, "difficulty", difficulty_json(w));
        for (const struct vat_param *p = t->params; p && p->name; p++) {
            json_t *v = param_value(p, json_object_get(given, p->name));
            /* inline = "full": the params a template declares as sizing
             * the data its prompt shows are capped so every fixture can be
             * shown whole (regex held-out lines are never shown, so their
             * counts are not declared and stay). */
            if (x->inline_full && p->type == VAT_PARAM_INT && p->role == VAT_PARAM_ROWS) {
                json_int_t cap = (json_int_t)(x->inline_max_bytes / VAT_INLINE_ROW_BYTES);
                if (cap < (json_int_t)p->min)
                    cap = (json_int_t)p->min;
                if (json_integer_value(v) > cap)
                    json_integer_set(v, cap);
            }
            json_object_set_new(obj, p->name, v);
        }
        json_object_set_new(out, t->name, obj);
    }
    return out;
}

/* ---- entry points -------------------------------------------------------- */

void vat_config_release(struct vat_config *c)
{
    free(c->path);
    free(c->split);
    free(c->split_salt);
    free(c->prompt_style);
    json_decref(c->held_out);
    json_decref(c->templates);
    memset(c, 0, sizeof *c);
}

int vat_config_parse_registry(struct vat_config *c, const char *text, size_t len,
                              const char *path, const struct vat_template *const *registry,
                              struct vat_err *e)
{
    struct ctx x = {.path = path, .reg = registry, .e = e};
    memset(c, 0, sizeof *c);
    json_t *root = vat_toml_parse(text, len, path, &x.lines, e);
    if (!root)
        return -1;

    c->path = vat_xstrdup(path);
    c->master_seed = 1;
    c->test_fraction = 0.2;
    c->split = vat_xstrdup(SPLIT_RANDOM);
    c->split_salt = vat_xstrdup("vat-split-v1");
    c->held_out = json_array();
    c->inline_max_bytes = 6000;
    c->max_redraws = 40;
    c->strength_target = 0.9;
    c->prompt_style = vat_xstrdup("explicit");
    c->inline_full = false;
    /* Unset, every task is asked at level 1: today's shapes. */
    c->difficulty[0] = 1;

    const char *key;
    json_t *v;
    json_t *corpus = NULL, *templates = NULL;
    int rc = 0;
    json_object_foreach(root, key, v) {
        char *kp = vat_toml_path_append(NULL, key);
        if (strcmp(key, "corpus") == 0 || strcmp(key, "templates") == 0) {
            if (!json_is_object(v))
                rc = cerr(&x, kp, 1, "'%s' must be a table", kp);
            else if (strcmp(key, "corpus") == 0)
                rc = check_corpus(&x, c, corpus = v);
            else
                rc = check_templates(&x, templates = v);
        } else {
            char hint[128];
            suggest(key, ROOT_KEYS, sizeof ROOT_KEYS / sizeof ROOT_KEYS[0], hint);
            rc = cerr(&x, kp, 1, "unknown %s '%s'%s", json_is_object(v) ? "table" : "key", kp,
                      hint);
        }
        free(kp);
        if (rc < 0)
            break;
    }
    /* With no [corpus] table the held-out rules still apply to defaults. */
    if (rc == 0 && !corpus) {
        json_t *empty = json_object();
        rc = check_corpus(&x, c, empty);
        json_decref(empty);
    }
    x.prompt_style = c->prompt_style;
    x.inline_full = c->inline_full;
    x.inline_max_bytes = c->inline_max_bytes;
    memcpy(x.difficulty, c->difficulty, sizeof x.difficulty);
    if (rc == 0)
        c->templates = resolve_templates(&x, templates);
    json_decref(root);
    json_decref(x.lines);
    if (rc < 0) {
        vat_config_release(c);
        return -1;
    }
    return 0;
}

int vat_config_parse(struct vat_config *c, const char *text, size_t len, const char *path,
                     struct vat_err *e)
{
    return vat_config_parse_registry(c, text, len, path, vat_registry, e);
}

int vat_config_load(struct vat_config *c, const char *path, struct vat_err *e)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f)
        return vat_err_set(e, "vat: cannot open '%s': %s", path, strerror(errno));
    /* One byte past the cap tells "exactly 1 MiB" from "more". */
    char *buf = vat_xmalloc((size_t)MAX_FILE_BYTES + 1);
    size_t n = fread(buf, 1, (size_t)MAX_FILE_BYTES + 1, f);
    int read_errno = ferror(f) ? errno : 0;
    fclose(f);
    int rc;
    if (read_errno)
        rc = vat_err_set(e, "vat: cannot read '%s': %s", path, strerror(read_errno));
    else if (n > (size_t)MAX_FILE_BYTES)
        rc = vat_err_set(e, "vat: '%s' is larger than 1 MiB", path);
    else
        rc = vat_config_parse(c, buf, n, path, e);
    free(buf);
    return rc;
}

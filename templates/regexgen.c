/* regexgen.c — shared machinery for the regex templates: planted lines,
 * slot plans, frames with filler tokens, the line fixtures, the regex
 * checker spec, the shared prompt sections and the task driver that
 * generate, reference, confirm and trap_answer share (see regexgen.h). */
#include "regexgen.h"

#include "prompt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csvio.h"
#include "jsonout.h"
#include "level.h"
#include "values.h"
#include "verifiers.h"

/* ---- lines ------------------------------------------------------------- */

void vat_rx_set_release(struct vat_rx_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->line[i].text);
        json_decref(s->line[i].expected);
    }
    free(s->line);
    s->line = NULL;
    s->n = s->cap = 0;
}

unsigned vat_rx_set_kinds(const struct vat_rx_set *s)
{
    unsigned k = 0;
    for (size_t i = 0; i < s->n; i++)
        k |= s->line[i].kinds;
    return k;
}

static struct vat_rx_line *set_push(struct vat_rx_set *s)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->line = vat_xrealloc(s->line, s->cap * sizeof *s->line);
    }
    struct vat_rx_line *l = &s->line[s->n++];
    memset(l, 0, sizeof *l);
    return l;
}

void vat_rx_begin(struct vat_rx_builder *b)
{
    b->text = (struct vat_buf)VAT_BUF_INIT;
    b->expected = json_array();
    b->kinds = 0;
}

void vat_rx_put(struct vat_rx_builder *b, const char *s)
{
    vat_buf_puts(&b->text, s);
}

void vat_rx_putf(struct vat_rx_builder *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vat_buf_vprintf(&b->text, fmt, ap);
    va_end(ap);
}

static unsigned kind_bit(int kind)
{
    return kind >= 0 && kind < 32 ? 1u << kind : 0;
}

void vat_rx_target(struct vat_rx_builder *b, const char *s, int kind)
{
    vat_buf_puts(&b->text, s);
    json_array_append_new(b->expected, json_string(s));
    b->kinds |= kind_bit(kind);
}

void vat_rx_decoy(struct vat_rx_builder *b, const char *s, int kind)
{
    vat_buf_puts(&b->text, s);
    b->kinds |= kind_bit(kind);
}

void vat_rx_finish(struct vat_rx_builder *b, struct vat_rx_set *s)
{
    struct vat_rx_line *l = set_push(s);
    l->text = vat_buf_detach(&b->text);
    l->expected = b->expected;
    l->kinds = b->kinds;
    vat_rx_begin(b);
}

void vat_rx_builder_release(struct vat_rx_builder *b)
{
    vat_buf_release(&b->text);
    json_decref(b->expected);
    b->expected = NULL;
    b->kinds = 0;
}

/* ---- slot plans -------------------------------------------------------- */

int *vat_rx_plan(struct vat_rng *r, size_t n, const int *required, size_t nreq,
                 const unsigned *weights, size_t nkinds)
{
    int *plan = vat_xcalloc(n ? n : 1, sizeof *plan);
    unsigned total = 0;
    for (size_t k = 0; k < nkinds; k++)
        total += weights[k];
    for (size_t i = 0; i < n; i++) {
        if (i < nreq) {
            plan[i] = required[i];
            continue;
        }
        unsigned x = vat_rng_below(r, total ? total : 1);
        size_t k = 0;
        while (k + 1 < nkinds && x >= weights[k]) {
            x -= weights[k];
            k++;
        }
        plan[i] = (int)k;
    }
    vat_rng_shuffle(r, plan, n, sizeof *plan);
    return plan;
}

/* ---- frames and filler tokens ------------------------------------------ */

static const char *const levels[] = {"INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"};
static const char *const services[] = {
    "billing-api", "auth",   "scheduler", "exporter", "payments", "search",
    "mailer",      "ingest", "gateway",   "reports",  "webhooks", "inventory",
};
static const char *const hosts[] = {"db", "web", "cache", "worker", "queue", "edge"};
static const char *const id_prefixes[] = {"REQ", "JOB", "TX", "SES"};

/* A lower-case ASCII first name from the shared word list; the held-out
 * strings must stay ASCII, so names with other letters are skipped. */
static void put_user(struct vat_rx_builder *b, struct vat_rng *r)
{
    size_t n = 0;
    const char *const *names = vat_words("first_name", &n);
    for (int tries = 0; names && n && tries < 16; tries++) {
        const char *w = names[vat_rng_below(r, (uint32_t)n)];
        char buf[64];
        size_t i = 0;
        bool ok = *w != 0;
        for (; w[i] && ok; i++) {
            unsigned char c = (unsigned char)w[i];
            if (i + 1 >= sizeof buf || !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
                ok = false;
            else
                buf[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        }
        if (ok) {
            buf[i] = 0;
            vat_rx_put(b, buf);
            return;
        }
    }
    vat_rx_put(b, "admin");
}

static int put_filler(struct vat_rx_builder *b, struct vat_rng *r, const char *name, size_t len)
{
#define IS(s) (len == sizeof(s) - 1 && memcmp(name, s, len) == 0)
    char buf[64];
    if (IS("level")) {
        vat_rx_put(b, VAT_PICK(r, levels));
    } else if (IS("svc")) {
        vat_rx_put(b, VAT_PICK(r, services));
    } else if (IS("user")) {
        put_user(b, r);
    } else if (IS("host")) {
        /* One draw per statement (docs/determinism.md), last field first:
         * the order the corpus was drawn in, so its bytes stay. */
        int num = (int)vat_rng_range(r, 1, 24);
        const char *host = VAT_PICK(r, hosts);
        vat_rx_putf(b, "%s-%d", host, num);
    } else if (IS("time")) {
        int ss = (int)vat_rng_range(r, 0, 59);
        int mm = (int)vat_rng_range(r, 0, 59);
        int hh = (int)vat_rng_range(r, 0, 23);
        vat_rx_putf(b, "%02d:%02d:%02d", hh, mm, ss);
    } else if (IS("ip")) {
        int d = (int)vat_rng_range(r, 1, 254);
        int c = (int)vat_rng_range(r, 0, 255);
        int bb = (int)vat_rng_range(r, 0, 255);
        vat_rx_putf(b, "10.%d.%d.%d", bb, c, d);
    } else if (IS("ver")) {
        int patch = (int)vat_rng_range(r, 0, 15);
        int minor = (int)vat_rng_range(r, 0, 19);
        int major = (int)vat_rng_range(r, 0, 12);
        vat_rx_putf(b, "%d.%d.%d", major, minor, patch);
    } else if (IS("id")) {
        vat_rx_put(b, vat_gen_id(r, VAT_PICK(r, id_prefixes), 6, buf, sizeof buf));
    } else if (IS("ms")) {
        vat_rx_putf(b, "%dms", (int)vat_rng_range(r, 3, 980));
    } else if (IS("n")) {
        vat_rx_putf(b, "%d", (int)vat_rng_range(r, 1, 999));
    } else if (IS("pct")) {
        vat_rx_putf(b, "%d%%", (int)vat_rng_range(r, 1, 99));
    } else {
        return -1;
    }
    return 0;
#undef IS
}

int vat_rx_expand(struct vat_rx_builder *b, struct vat_rng *r, const char *frame,
                  vat_rx_slot_fn slot, void *ctx, struct vat_err *e)
{
    int slots = 0;
    const char *p = frame;
    while (*p) {
        const char *open = strchr(p, '{');
        if (!open) {
            vat_rx_put(b, p);
            break;
        }
        vat_buf_putn(&b->text, p, (size_t)(open - p));
        const char *close = strchr(open, '}');
        if (!close)
            return vat_err_set(e, "regexgen: unclosed placeholder in frame '%s'", frame);
        const char *name = open + 1;
        size_t len = (size_t)(close - name);
        if (len == 4 && memcmp(name, "slot", 4) == 0) {
            slot(b, r, ctx);
            slots++;
        } else if (put_filler(b, r, name, len) != 0) {
            return vat_err_set(e, "regexgen: unknown placeholder '{%.*s}' in frame '%s'", (int)len,
                               name, frame);
        }
        p = close + 1;
    }
    return slots;
}

int vat_rx_frame_slots(const char *frame)
{
    int n = 0;
    for (const char *p = frame; (p = strstr(p, "{slot}")) != NULL; p += 6)
        n++;
    return n;
}

/* ---- line fixtures ----------------------------------------------------- */

static int digits_of(size_t n)
{
    int d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

static void lines_to_csv(const struct vat_rx_set *s, const char *prefix, size_t upto,
                         struct vat_csv *c)
{
    vat_csv_row_begin(c);
    vat_csv_add(c, "line_id");
    vat_csv_add(c, "text");
    int w = digits_of(s->n);
    for (size_t i = 0; i < upto && i < s->n; i++) {
        vat_csv_row_begin(c);
        vat_csv_addf(c, "%s%0*zu", prefix, w, i + 1);
        vat_csv_add(c, s->line[i].text);
    }
}

char *vat_rx_lines_csv(const struct vat_rx_set *s, const char *prefix)
{
    struct vat_csv c = VAT_CSV_INIT;
    lines_to_csv(s, prefix, s->n, &c);
    char *out = vat_csv_to_string(&c);
    vat_csv_release(&c);
    return out;
}

int vat_rx_write_lines(const struct vat_rx_set *s, const char *prefix, const char *root,
                       const char *rel, struct vat_err *e)
{
    struct vat_csv c = VAT_CSV_INIT;
    lines_to_csv(s, prefix, s->n, &c);
    int rc = vat_csv_write(&c, root, rel, e);
    vat_csv_release(&c);
    return rc;
}

int vat_rx_read_lines(struct vat_rx_set *s, const char *root, const char *rel,
                      struct vat_err *e)
{
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_csv_read(&c, root, rel, e) != 0)
        return -1;
    int rc = 0;
    if (c.nrows < 1 || c.row[0].n != 2 || strcmp(vat_csv_get(&c, 0, 0), "line_id") != 0 ||
        strcmp(vat_csv_get(&c, 0, 1), "text") != 0) {
        rc = vat_err_set(e, "regexgen: '%s' does not start with the header 'line_id,text'", rel);
        goto out;
    }
    for (size_t i = 1; i < c.nrows; i++) {
        if (c.row[i].n != 2) {
            rc = vat_err_set(e, "regexgen: '%s' record %zu has %zu fields, not 2", rel, i,
                             c.row[i].n);
            goto out;
        }
        set_push(s)->text = vat_xstrdup(vat_csv_get(&c, i, 1));
    }
out:
    vat_csv_release(&c);
    return rc;
}

struct vat_fixture *vat_rx_add_fixture(struct vat_task *t, const char *rel, const char *role,
                                       size_t n)
{
    struct vat_fixture *f = vat_task_add_fixture(t, rel, "csv", role);
    f->rows = (long)n;
    json_array_append_new(f->columns, json_string("line_id"));
    json_array_append_new(f->columns, json_string("text"));
    return f;
}

/* ---- checker spec ------------------------------------------------------ */

json_t *vat_rx_spec_new(void)
{
    json_t *s = json_object();
    json_object_set_new(s, "checker", json_string("regex"));
    json_object_set_new(s, "dialect", json_string("python-re"));
    json_object_set_new(s, "match_limit", json_integer(VAT_RX_MATCH_LIMIT));
    json_object_set_new(s, "depth_limit", json_integer(VAT_RX_DEPTH_LIMIT));
    json_object_set_new(s, "heap_limit_kib", json_integer(VAT_RX_HEAP_LIMIT_KIB));
    json_object_set_new(s, "max_pattern_bytes", json_integer(VAT_RX_MAX_PATTERN_BYTES));
    return s;
}

static int add_cases(json_t *cases, const json_t *spec, const char *pattern,
                     const struct vat_rx_set *s, bool heldout, struct vat_err *e)
{
    size_t plen = strlen(pattern);
    for (size_t i = 0; i < s->n; i++) {
        struct vat_verdict v;
        json_t *got = vat_regex_extract(spec, pattern, plen, s->line[i].text, &v);
        if (!got)
            return vat_err_set(e, "regexgen: pattern '%s' failed on %s line %zu (%s: %s)", pattern,
                               heldout ? "held-out" : "example", i + 1, v.code, v.reason);
        json_t *c = json_object();
        json_object_set_new(c, "text", json_string(s->line[i].text));
        json_object_set_new(c, "expected", got);
        json_object_set_new(c, "heldout", json_boolean(heldout));
        json_array_append_new(cases, c);
    }
    return 0;
}

int vat_rx_spec_cases(json_t *spec, const char *pattern, const struct vat_rx_set *ex,
                      const struct vat_rx_set *ho, struct vat_err *e)
{
    json_t *cases = json_array();
    if (add_cases(cases, spec, pattern, ex, false, e) != 0 ||
        add_cases(cases, spec, pattern, ho, true, e) != 0) {
        json_decref(cases);
        return -1;
    }
    json_object_set_new(spec, "cases", cases);
    return 0;
}

static int agree_set(const json_t *cases, size_t base, const struct vat_rx_set *s, bool heldout,
                     struct vat_err *e)
{
    const char *what = heldout ? "held-out" : "example";
    for (size_t i = 0; i < s->n; i++) {
        const json_t *c = json_array_get(cases, base + i);
        const char *text = json_string_value(json_object_get(c, "text"));
        const json_t *got = json_object_get(c, "expected");
        if (!text || !json_is_array(got) || json_is_true(json_object_get(c, "heldout")) != heldout)
            return vat_err_set(e, "regexgen: case %zu is not a well-formed %s case", base + i,
                               what);
        if (strcmp(text, s->line[i].text) != 0)
            return vat_err_set(e, "regexgen: %s line %zu reads back as '%s', planted '%s'", what,
                               i + 1, text, s->line[i].text);
        if (!json_equal(got, s->line[i].expected)) {
            char *g = vat_json_dumps(got), *p = vat_json_dumps(s->line[i].expected);
            vat_err_set(e, "regexgen: %s line %zu '%s': gold extracts %s, planted %s", what, i + 1,
                        text, g, p);
            free(g);
            free(p);
            return -1;
        }
    }
    return 0;
}

int vat_rx_cases_agree(const json_t *spec, const struct vat_rx_set *ex,
                       const struct vat_rx_set *ho, struct vat_err *e)
{
    const json_t *cases = json_object_get(spec, "cases");
    if (!json_is_array(cases))
        return vat_err_set(e, "regexgen: the spec has no cases");
    if (json_array_size(cases) != ex->n + ho->n)
        return vat_err_set(e, "regexgen: the spec has %zu cases, %zu lines were planted",
                           json_array_size(cases), ex->n + ho->n);
    if (agree_set(cases, 0, ex, false, e) != 0 || agree_set(cases, ex->n, ho, true, e) != 0)
        return -1;
    return 0;
}

json_t *vat_rx_spec_heldout(const json_t *spec)
{
    json_t *s = json_deep_copy(spec);
    json_t *cases = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(spec, "cases"), i, c)
        if (json_is_true(json_object_get(c, "heldout")))
            json_array_append(cases, c);
    json_object_set_new(s, "cases", cases);
    return s;
}

int vat_rx_count_misses(const json_t *spec, const char *pattern, const struct vat_rx_set *set,
                        struct vat_err *e)
{
    int misses = 0;
    size_t plen = strlen(pattern);
    for (size_t i = 0; i < set->n; i++) {
        struct vat_verdict v;
        json_t *got = vat_regex_extract(spec, pattern, plen, set->line[i].text, &v);
        if (!got)
            return vat_err_set(e, "regexgen: pattern '%s' failed (%s: %s)", pattern, v.code,
                               v.reason);
        if (!json_equal(got, set->line[i].expected))
            misses++;
        json_decref(got);
    }
    return misses;
}

/* ---- prompt sections --------------------------------------------------- */

static void rx_examples(struct vat_buf *b, const struct vat_rx_set *ex, const char *rel,
                        size_t inline_max, const char *lead);

void vat_rx_prompt_examples(struct vat_buf *b, const struct vat_rx_set *ex, const char *rel,
                            size_t inline_max)
{
    rx_examples(b, ex, rel, inline_max,
                "What your pattern must extract from each example line (a JSON list, in order "
                "of appearance):");
}

/* The examples section with its expected lists introduced by lead. */
static void rx_examples(struct vat_buf *b, const struct vat_rx_set *ex, const char *rel,
                        size_t inline_max, const char *lead)
{
    /* Inline the longest prefix of the file that fits the budget, so the
     * prompt shows exactly the bytes a solver would read from the file. */
    size_t shown = ex->n;
    char *csv = NULL;
    for (;;) {
        struct vat_csv c = VAT_CSV_INIT;
        lines_to_csv(ex, VAT_RX_EXAMPLE_PREFIX, shown, &c);
        csv = vat_csv_to_string(&c);
        vat_csv_release(&c);
        if (strlen(csv) <= inline_max || shown == 0)
            break;
        free(csv);
        shown--;
    }
    vat_buf_printf(b, "The example lines are in the file %s (CSV, columns line_id, text)", rel);
    if (shown == 0) {
        vat_buf_printf(b, "; its %zu lines are too long to show here.\n\n", ex->n);
        free(csv);
        return;
    }
    if (shown == ex->n)
        vat_buf_puts(b, ":\n\n");
    else
        vat_buf_printf(b, "; the first %zu of its %zu lines are:\n\n", shown, ex->n);
    vat_buf_printf(b, "```csv\n%s```\n\n", csv);
    free(csv);
    vat_buf_printf(b, "%s\n\n", lead);
    int w = digits_of(ex->n);
    for (size_t i = 0; i < shown; i++) {
        char *list = vat_json_dumps(ex->line[i].expected);
        vat_buf_printf(b, "- %s%0*zu: %s\n", VAT_RX_EXAMPLE_PREFIX, w, i + 1, list);
        free(list);
    }
    vat_buf_puts(b, "\n");
}

/* The explicit answer sentence's opening, in four wordings. */
const char *const vat_rx_answer_leads[4] = {
    "Answer with one Python `re` pattern as a plain string",
    "Reply with exactly one Python `re` pattern, as a plain string",
    "Give your answer as one Python `re` pattern in plain text",
    "Your answer is one Python `re` pattern, written as a plain string",
};

static const char *const rx_q_explicit[] = {
    "Write a regular expression that extracts every {one} {tail}. A piece of text counts only "
    "when all of these hold:",
    "Which regular expression finds exactly the {many} {tail}? It must match a piece of text "
    "only when all of these hold:",
    "Give a regex whose matches are precisely the {many} {tail} in these lines; a piece of "
    "text is one of them only when every rule below holds:",
    "One regular expression should pull out each {one} {tail} and nothing else. A piece of "
    "text counts only if:",
    "[[Find|Write]] a pattern that matches the {many} {tail} and nothing else; [[a piece of "
    "text matches|text is a match]] only when [[all of these hold|every rule below holds]]:",
    "The task: a regular expression for the {many} {tail}. [[Something|A piece of text]] is "
    "one of them only when [[each|every]] rule below holds:",
};

/* What a regex task is about, for the opening. */
static const char rx_topic[] = "[[a regular expression|some text extraction|a pattern for our "
                               "parser]]";

void vat_rx_prompt_question(struct vat_buf *b, struct vat_task *t, const char *const *data,
                            size_t n_data, const char *noun, const char *nouns,
                            const char *tail)
{
    const char *okv[] = {"topic", rx_topic, NULL};
    vat_prompt_open(b, t, okv);
    vat_prompt_put(b, t, 'd', data, n_data, NULL);
    vat_buf_puts(b, "\n\n");
    const char *kv[] = {"one", noun, "many", nouns, "tail", tail, NULL};
    VAT_PROMPT_PUT(b, t, 'q', rx_q_explicit, kv);
    vat_buf_putc(b, '\n');
}

void vat_rx_prompt_ask(struct vat_buf *b, struct vat_task *t, const char *const *data,
                       size_t n_data, const char *const *question, size_t n_question,
                       const char *const *kv)
{
    const char *okv[] = {"topic", rx_topic, NULL};
    vat_prompt_open(b, t, okv);
    vat_prompt_put(b, t, 'd', data, n_data, kv);
    vat_buf_puts(b, "\n\n");
    vat_prompt_put(b, t, 'q', question, n_question, kv);
    vat_buf_puts(b, "\n\n");
}

void vat_rx_prompt_answer_lead(struct vat_buf *b, size_t n_heldout, const char *line_kind,
                               const char *lead)
{
    vat_buf_printf(b,
                   "Your pattern is also run on %zu held-out %s of the same kind that are not "
                   "shown here; it must extract exactly the expected list from every line, "
                   "examples and held-out alike.\n\n",
                   n_heldout, line_kind);
    vat_buf_printf(b,
                   "%s: no surrounding slashes or quotes, no flags, no explanation. Each line is "
                   "scored as `[m.group(0) for m in re.finditer(pattern, line)]`, so only the "
                   "whole match counts; any groups inside the pattern do not matter. The shape "
                   "of an answer, for a different task: (?<![A-Za-z])[a-z]+_id(?=:)\n",
                   lead);
}

void vat_rx_prompt_answer(struct vat_buf *b, size_t n_heldout, const char *line_kind)
{
    vat_rx_prompt_answer_lead(b, n_heldout, line_kind, vat_rx_answer_leads[0]);
}

/* ---- the regex task driver ------------------------------------------------- */

const struct vat_param vat_rx_task_params[] = {
    {"examples_min", VAT_PARAM_INT, 3, NULL, 3, 8, "fewest example lines shown in the prompt",
     VAT_PARAM_PLAIN},
    {"examples_max", VAT_PARAM_INT, 5, NULL, 3, 8, "most example lines shown in the prompt",
     VAT_PARAM_PLAIN},
    /* held-out lines are never shown: not row counts of the prompt */
    {"rows_min", VAT_PARAM_INT, 24, NULL, 20, 500, "fewest held-out lines", VAT_PARAM_HELDOUT},
    {"rows_max", VAT_PARAM_INT, 32, NULL, 20, 500, "most held-out lines", VAT_PARAM_HELDOUT},
    {0},
};

static unsigned choose_by_level(const struct vat_task *t, unsigned n_formats,
                                unsigned (*hardness)(unsigned f));

unsigned vat_rx_choose_format(const struct vat_task *t, struct vat_rng *r, unsigned n_formats)
{
    (void)r; /* no draw: the question must not depend on the attempt */
    if (t->tmpl->notation_hardness)
        return choose_by_level(t, n_formats, t->tmpl->notation_hardness);
    return (unsigned)vat_task_question(t, n_formats);
}

/* The notations of a template sorted by hardness, and where each level's
 * class starts: computed once per (hardness, n) and kept for the
 * process, as a build draws thousands of tasks from it. */
struct rx_classes {
    unsigned (*hardness)(unsigned f);
    unsigned n;
    unsigned *order;
    unsigned cut[VAT_LEVELS + 1];
};
static struct rx_classes **rx_sets;
static size_t rx_nsets;
static pthread_mutex_t rx_sets_lock = PTHREAD_MUTEX_INITIALIZER;

struct rx_ranked {
    unsigned h;
    uint64_t tie;
    unsigned f;
};

static int cmp_ranked(const void *a, const void *b)
{
    const struct rx_ranked *x = a, *y = b;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    if (x->tie != y->tie)
        return x->tie < y->tie ? -1 : 1;
    return (x->f > y->f) - (x->f < y->f);
}

/* Level 1 takes the easiest 40% of the notations, levels 2 to 5 a
 * quarter each of the rest, harder at each level.  Ties in hardness are
 * ordered by a fixed hash of the index, so a class holds every kind of
 * notation its hardness allows, not the first of the index's digits. */
static const struct rx_classes *rx_classes_of(unsigned (*hardness)(unsigned), unsigned n)
{
    pthread_mutex_lock(&rx_sets_lock);
    struct rx_classes *c = NULL;
    for (size_t k = 0; k < rx_nsets && !c; k++)
        if (rx_sets[k]->hardness == hardness && rx_sets[k]->n == n)
            c = rx_sets[k];
    if (!c) {
        c = vat_xcalloc(1, sizeof *c);
        struct rx_ranked *r = vat_xmalloc((size_t)n * sizeof *r);
        for (unsigned f = 0; f < n; f++)
            r[f] = (struct rx_ranked){hardness(f), vat_rng_permute(0x5eed1e7e1u, n, f), f};
        qsort(r, n, sizeof *r, cmp_ranked);
        c->order = vat_xmalloc((size_t)n * sizeof *c->order);
        for (unsigned f = 0; f < n; f++)
            c->order[f] = r[f].f;
        free(r);
        c->cut[1] = (unsigned)(((uint64_t)n * 2 + 4) / 5);
        for (int l = 2; l <= VAT_LEVELS; l++)
            c->cut[l] = c->cut[1] + (unsigned)((uint64_t)(n - c->cut[1]) * (unsigned)(l - 1) /
                                               (VAT_LEVELS - 1));
        c->n = n;
        c->hardness = hardness;
        rx_sets = vat_xrealloc(rx_sets, (rx_nsets + 1) * sizeof *rx_sets);
        rx_sets[rx_nsets++] = c;
    }
    pthread_mutex_unlock(&rx_sets_lock);
    return c;
}

static unsigned choose_by_level(const struct vat_task *t, unsigned n_formats,
                                unsigned (*hardness)(unsigned f))
{
    const struct rx_classes *c = rx_classes_of(hardness, n_formats);
    int level = vat_task_level(t);
    unsigned lo = c->cut[level - 1], size = c->cut[level] - lo;
    char purpose[24];
    snprintf(purpose, sizeof purpose, "questions-level-%d", level);
    uint64_t key = vat_rng_key(t->master_seed, t->tmpl->name, purpose);
    return c->order[lo + (unsigned)vat_rng_permute(key, size, t->index)];
}

unsigned vat_rx_level_class(unsigned n_formats, unsigned (*hardness)(unsigned f), int level,
                            unsigned *first)
{
    const struct rx_classes *c = rx_classes_of(hardness, n_formats);
    if (level < 1 || level > VAT_LEVELS)
        return 0;
    if (first)
        *first = c->cut[level - 1];
    return c->cut[level] - c->cut[level - 1];
}

unsigned vat_rx_level_member(unsigned n_formats, unsigned (*hardness)(unsigned f), unsigned k)
{
    const struct rx_classes *c = rx_classes_of(hardness, n_formats);
    return k < n_formats ? c->order[k] : 0;
}

/* Walks the slot plan while frames are expanded: vat_rx_expand calls
 * walk_slot for each "{slot}", which hands the next planned kind, and how
 * often the set already holds it, to the template's plant function. */
struct plan_walk {
    const struct vat_rx_layout *l;
    const int *plan;
    size_t next;
    unsigned seen[VAT_RX_MAX_KINDS];
    const void *ctx;
};

static void walk_slot(struct vat_rx_builder *b, struct vat_rng *r, void *vw)
{
    struct plan_walk *w = vw;
    struct vat_rx_slot s = {w->plan[w->next++], 0};
    s.seen = w->seen[s.kind]++;
    w->l->plant(b, r, &s, w->ctx);
}

/* A line whose text its side does not own is drawn again from the same
 * frame and slot kinds (half of all draws land on each side); past this
 * many the frame cannot reach the side and the draw fails. */
#define SIDE_TRIES 64

/* vat_rx_build_lines, each line drawn until side owns its text (side < 0:
 * any text). */
static int build_lines(struct vat_rx_set *s, struct vat_rng *r, size_t n,
                       const struct vat_rx_layout *l, const int *required, size_t nreq,
                       const void *ctx, int side, struct vat_err *e)
{
    if (n == 0 || n * VAT_RX_MAX_SLOTS < nreq)
        return vat_err_set(e, "regexgen: %zu lines cannot hold %zu required plants", n, nreq);
    if (l->n_kinds == 0 || l->n_kinds > VAT_RX_MAX_KINDS)
        return vat_err_set(e, "regexgen: %zu plant kinds, not 1 to %d", l->n_kinds,
                           VAT_RX_MAX_KINDS);
    for (size_t i = 0; i < nreq; i++)
        if (required[i] < 0 || (size_t)required[i] >= l->n_kinds)
            return vat_err_set(e, "regexgen: required kind %d out of range", required[i]);
    /* Widening can ask for a frame of any slot count, so every list must
     * hold one. */
    uint32_t wsum = 0;
    for (int k = 0; k <= VAT_RX_MAX_SLOTS; k++) {
        if (!l->n_frames[k])
            return vat_err_set(e, "regexgen: the layout has no frame with %d slots", k);
        wsum += l->slot_weights[k];
    }
    if (wsum == 0)
        return vat_err_set(e, "regexgen: the layout's slot weights are all zero");

    int *slots = vat_xcalloc(n, sizeof *slots);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        slots[i] = (int)vat_rng_weighted(r, l->slot_weights, VAT_RX_MAX_SLOTS + 1);
        total += (size_t)slots[i];
    }
    /* Too few slots for the required plants: widen lines, starting at a
     * random one, until they fit (n * 3 >= nreq was checked above). */
    size_t at = vat_rng_below(r, (uint32_t)n);
    while (total < nreq) {
        if (slots[at] < VAT_RX_MAX_SLOTS) {
            slots[at]++;
            total++;
        }
        at = (at + 1) % n;
    }
    const char **frame = vat_xcalloc(n, sizeof *frame);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        frame[i] = vat_rng_pick(r, l->frames[slots[i]], l->n_frames[slots[i]]);
        if (!frame[i] || vat_rx_frame_slots(frame[i]) != slots[i])
            rc = vat_err_set(e, "regexgen: a frame listed with %d slots holds another number",
                             slots[i]);
    }

    int *plan = rc == 0 ? vat_rx_plan(r, total, required, nreq, l->weights, l->n_kinds) : NULL;
    struct plan_walk w = {l, plan, 0, {0}, ctx};
    struct vat_rx_builder b;
    vat_rx_begin(&b);
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct plan_walk line_start = w; /* a redraw plants the same kinds, seen as before */
        for (int tries = 1;; tries++) {
            if (vat_rx_expand(&b, r, frame[i], walk_slot, &w, e) < 0) {
                rc = -1;
                break;
            }
            if (side < 0 || vat_side_owns(side, b.text.data ? b.text.data : "", b.text.len)) {
                vat_rx_finish(&b, s);
                break;
            }
            if (tries == SIDE_TRIES) {
                rc = vat_err_set(e, "regexgen: %d draws of frame '%s' all fell on the other "
                                    "side of the split",
                                 SIDE_TRIES, frame[i]);
                break;
            }
            vat_rx_builder_release(&b);
            vat_rx_begin(&b);
            w = line_start;
        }
    }
    vat_rx_builder_release(&b);
    free(plan);
    free(frame);
    free(slots);
    return rc;
}

int vat_rx_build_lines(struct vat_rx_set *s, struct vat_rng *r, size_t n,
                       const struct vat_rx_layout *l, const int *required, size_t nreq,
                       const void *ctx, struct vat_err *e)
{
    return build_lines(s, r, n, l, required, nreq, ctx, -1, e);
}

bool vat_rx_lines_distinct(const struct vat_rx_set *ex, const struct vat_rx_set *ho)
{
    size_t n = ex->n + ho->n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            const char *a = i < ex->n ? ex->line[i].text : ho->line[i - ex->n].text;
            const char *b = j < ex->n ? ex->line[j].text : ho->line[j - ex->n].text;
            if (strcmp(a, b) == 0)
                return false;
        }
    return true;
}

void vat_rx_require(struct vat_rx_part *p, int kind)
{
    if (p->n_required < VAT_RX_MAX_REQUIRED)
        p->required[p->n_required] = kind;
    p->n_required++;
}

int vat_rx_task_begin(const struct vat_task *t, struct vat_rng *rng, struct vat_rx_draw *d,
                      struct vat_err *e)
{
    long exmin = vat_task_int(t, "examples_min"), exmax = vat_task_int(t, "examples_max");
    long homin = vat_task_int(t, "rows_min"), homax = vat_task_int(t, "rows_max");
    if (exmin < 3 || exmax < exmin || homin < 20 || homax < homin)
        return vat_err_set(e, "%s: need 3 <= examples_min <= examples_max and "
                              "20 <= rows_min <= rows_max",
                           t->tmpl->name);
    memset(d, 0, sizeof *d);
    d->ex.n = (size_t)vat_rng_range(rng, exmin, exmax);
    vat_rng_stream(&d->ho_rng, t->master_seed, t->tmpl->name, t->index, "heldout", t->attempt,
                   NULL);
    d->ho.n = (size_t)vat_rng_range(&d->ho_rng, homin, homax);
    return 0;
}

/* The planted truth of a regex task (t->priv): the lines and their
 * expected lists, as the generator built them. */
struct truth {
    struct vat_rx_set ex, ho;
};

static void truth_free(void *p)
{
    struct truth *q = p;
    vat_rx_set_release(&q->ex);
    vat_rx_set_release(&q->ho);
    free(q);
}

int vat_rx_task_plant(struct vat_task *t, struct vat_rng *rng, struct vat_rx_draw *d,
                      const struct vat_rx_layout *l, const void *ctx, struct vat_err *e)
{
    if (d->ex.n_required > VAT_RX_MAX_REQUIRED || d->ho.n_required > VAT_RX_MAX_REQUIRED)
        return vat_err_set(e, "%s: more than %d required plants", t->tmpl->name,
                           VAT_RX_MAX_REQUIRED);
    if (d->ex.n * VAT_RX_MAX_SLOTS < d->ex.n_required ||
        d->ho.n * VAT_RX_MAX_SLOTS < d->ho.n_required)
        return vat_err_set(e, "%s: too few lines for the required plants", t->tmpl->name);
    struct truth *p = vat_xcalloc(1, sizeof *p);
    t->priv = p;
    t->priv_free = truth_free;
    /* Every line, shown or held out, in the task's side's half of all
     * strings: no line of a test task can be a line of a train task. */
    if (build_lines(&p->ex, rng, d->ex.n, l, d->ex.required, d->ex.n_required, ctx, t->side, e) !=
            0 ||
        build_lines(&p->ho, &d->ho_rng, d->ho.n, l, d->ho.required, d->ho.n_required, ctx,
                    t->side, e) != 0)
        return -1;
    unsigned need = 0;
    for (size_t i = 0; i < d->ho.n_required; i++)
        need |= 1u << d->ho.required[i];
    if ((vat_rx_set_kinds(&p->ho) & need) != need)
        return vat_err_set(e, "%s: the held-out lines lack a required decoy kind", t->id);
    if (!vat_rx_lines_distinct(&p->ex, &p->ho))
        return vat_err_set(e, "%s: a line repeats another line", t->id);

    char *rel = vat_task_fixture_relpath(t, ".csv");
    char *hrel = vat_task_fixture_relpath(t, ".heldout.csv");
    int rc = -1;
    if (vat_rx_write_lines(&p->ex, VAT_RX_EXAMPLE_PREFIX, t->root, rel, e) == 0 &&
        vat_rx_write_lines(&p->ho, VAT_RX_HELDOUT_PREFIX, t->root, hrel, e) == 0) {
        vat_rx_add_fixture(t, rel, "main", p->ex.n);
        vat_rx_add_fixture(t, hrel, "variant", p->ho.n);
        rc = 0;
    }
    free(rel);
    free(hrel);
    return rc;
}

/* The lead of the expected lists, and the held-out notice and answer
 * format, in both styles ({n} held-out lines, {kind} "log lines"). */
static const char rx_lists_explicit[] =
    "[[What your pattern must extract from each example line|The expected extraction of each "
    "example line|What each example line must yield]] ([[a JSON list, in order of "
    "appearance|a JSON list of the matches in order|as a JSON list, in the order they "
    "appear]]):";
static const char rx_lists_natural[] =
    "[[What I'd expect to get from each line|What should come out of each example|The "
    "matches I expect per line]] ([[a JSON list, in order|as a JSON list, left to right|in "
    "order, as a JSON list]]):";
static const char rx_held_explicit[] =
    "[[Your pattern is also run on|The pattern is also run on|Your pattern also goes "
    "through|The pattern is also tried on]] {n} held-out {kind} [[of the same kind|like "
    "these]] [[that are not shown here|not shown here|kept out of this prompt]]; it must "
    "[[extract exactly the expected list from every line|give exactly the expected list on "
    "every line|yield exactly the expected list for each line]], [[examples and held-out "
    "alike|shown or not|examples included]].";
static const char rx_answer_explicit[] =
    "[[Answer with one Python `re` pattern as a plain string|Reply with exactly one Python "
    "`re` pattern, as a plain string|Give your answer as one Python `re` pattern in plain "
    "text|Your answer is one Python `re` pattern, written as a plain string|Return a single "
    "Python `re` pattern in plain text]]: [[no "
    "surrounding slashes or quotes, no flags, no explanation|without slashes, quotes, flags or "
    "explanation]]. [[Each line is scored as|A line's result is|Every line is read as]] "
    "`[m.group(0) for m in re.finditer(pattern, line)]`, so [[only the whole match "
    "counts|only whole matches count|what counts is the whole match]]; [[any groups inside the "
    "pattern do not matter|groups inside the pattern play no part|capturing groups make no "
    "difference]]. [[The shape of an answer, for a different task|For a different task, an "
    "answer looks like this|An answer to another task, for its shape]]: "
    "(?<![A-Za-z])[a-z]+_id(?=:)";
static const char rx_answer_natural[] =
    "[[The pattern will also be run on other {kind} like these|We will run it on more {kind} "
    "of the same sort|It has to work on the rest of our {kind} too|Other {kind} of this kind "
    "will go through it as well|We'll use it on many more {kind}]]. [[Reply with just the "
    "Python `re` pattern|Send only the Python `re` pattern|Please answer with the bare Python "
    "`re` pattern|The answer is one Python `re` pattern|In your reply I only need the Python "
    "`re` pattern]], [[written plainly|as plain text|as a plain string]] ([[no slashes, quotes "
    "or flags|no delimiters, quotes or flags|without slashes, quotes or flags]]); [[each whole "
    "match of re.finditer(pattern, line) is one extracted item|every whole match of "
    "re.finditer(pattern, line) is taken as one item|the matches re.finditer(pattern, line) "
    "finds, whole, are what gets extracted]].";

void vat_rx_task_prompt(struct vat_task *t, struct vat_buf *b, const char *line_kind)
{
    const struct truth *p = t->priv;
    if (!t->params)
        t->params = json_object();
    json_object_set_new(t->params, "examples", json_integer((json_int_t)p->ex.n));
    json_object_set_new(t->params, "heldout_lines", json_integer((json_int_t)p->ho.n));
    bool nat = vat_prompt_natural(t);
    char n[24];
    snprintf(n, sizeof n, "%zu", p->ho.n);
    const char *kv[] = {"n", n, "kind", line_kind, NULL};
    char *lists = vat_prompt_text(t, 'e', nat ? rx_lists_natural : rx_lists_explicit, kv);
    rx_examples(b, &p->ex, t->fixture[0].path, vat_task_inline_cap(t), lists);
    free(lists);
    if (nat) {
        /* Natural style: no checker internals beyond what an
         * answer's form needs. */
        vat_prompt_say(b, t, 'a', rx_answer_natural, kv);
        vat_buf_putc(b, '\n');
    } else {
        vat_prompt_say(b, t, 'h', rx_held_explicit, kv);
        vat_buf_puts(b, "\n\n");
        vat_prompt_say(b, t, 'a', rx_answer_explicit, kv);
        vat_buf_putc(b, '\n');
    }
    t->prompt = vat_buf_detach(b);
    /* The prompt describes the strings to match; held-out lines are hidden
     * by design, so the description is what a solver works from. */
    t->self_contained = true;
    t->spec = vat_rx_spec_new();
}

int vat_rx_task_reference(struct vat_task *t, vat_rx_pattern_fn pattern, struct vat_err *e)
{
    if (t->n_fixtures != 2)
        return vat_err_set(e, "%s: expected the example and held-out fixtures", t->id);
    char *gold = pattern(t->params, false, e);
    if (!gold)
        return -1;
    struct vat_rx_set ex = VAT_RX_SET_INIT, ho = VAT_RX_SET_INIT;
    int rc = -1;
    if (vat_rx_read_lines(&ex, t->root, t->fixture[0].path, e) == 0 &&
        vat_rx_read_lines(&ho, t->root, t->fixture[1].path, e) == 0 &&
        vat_rx_spec_cases(t->spec, gold, &ex, &ho, e) == 0) {
        t->gold = gold;
        gold = NULL;
        rc = 0;
    }
    free(gold);
    vat_rx_set_release(&ex);
    vat_rx_set_release(&ho);
    return rc;
}

unsigned vat_rx_task_kinds(const struct vat_task *t, bool heldout)
{
    const struct truth *p = t->priv;
    return p ? vat_rx_set_kinds(heldout ? &p->ho : &p->ex) : 0;
}

int vat_rx_task_confirm(const struct vat_task *t, struct vat_err *e)
{
    const struct truth *p = t->priv;
    if (!p)
        return vat_err_set(e, "%s: no planted truth to confirm against", t->id);
    struct vat_err sub;
    if (vat_rx_cases_agree(t->spec, &p->ex, &p->ho, &sub) != 0)
        return vat_err_set(e, "%s: %s", t->id, sub.msg);
    return 0;
}

int vat_rx_task_trap(struct vat_task *t, vat_rx_pattern_fn pattern, struct vat_err *e)
{
    char *trap = pattern(t->params, true, e);
    if (!trap)
        return -1;
    const struct truth *p = t->priv;
    int misses = p ? vat_rx_count_misses(t->spec, trap, &p->ho, e) : 0;
    if (misses <= 0) {
        free(trap);
        return misses < 0 ? -1 : vat_err_set(e, "%s: the trap is not armed on held-out lines",
                                             t->id);
    }
    t->trap = trap;
    return 0;
}

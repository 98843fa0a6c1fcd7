/* test_regexgen.c — the shared regex machinery (templates/regexgen.c)
 * and what every regex template owes through it.  The pieces: line
 * fixtures, slot plans, frames, prompt inlining, the notation walk, lines
 * built from a layout, the repeated-line refusal and the task driver on a
 * toy template.  Then, over every regex template of the registry (one row
 * of expectations each): 60 tasks admitted with well-formed fixtures,
 * cases and prompts and a spread of notations; the first N tasks walking
 * every notation once; same seed, same bytes; a held-out stream of its
 * own; the trap failing on held-out lines alone; confirm and reference
 * catching tampering; the share of gold mutants the cases kill; and parity
 * with Python's re.  What is particular to one template (its rules on
 * hand-made lines, harmless spellings, near misses) is in its own test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "csvio.h"
#include "jsonout.h"
#include "level.h"
#include "regexgen.h"
#include "template.h"
#include "testutil.h"
#include "verifiers.h"

extern const struct vat_template vat_tmpl_regex_iso_dates, vat_tmpl_regex_amounts,
    vat_tmpl_regex_order_ids;

#define N_TASKS 60
#define INLINE_MAX 6000

/* What each regex template shows through the shared machinery. */
static const struct family {
    const struct vat_template *tmpl;
    uint64_t seed;
    unsigned n_formats; /* notations: the first n_formats tasks walk them all */
    const char *stated; /* the param the prompt states verbatim              */
    struct {
        const char *keys; /* params, comma-separated                        */
        size_t least;     /* distinct combinations among the 60 tasks       */
    } spread[4];
    struct {
        const char *key, *value, *msg;
    } bad_param;          /* reference refuses params[key] = value, saying msg */
    const char *bogus;    /* an extraction no held-out line expects            */
    size_t mutants_least; /* mutants per gold (0: kill share not measured)     */
} families[] = {
    {&vat_tmpl_regex_iso_dates, 20240611u, 1056, "format",
     {{"separator", 3}, {"order", 4}, {"year_min,year_max", 8}},
     {"order", "XYZ", "unknown order 'XYZ'"}, "2024-01-01", 0},
    {&vat_tmpl_regex_amounts, 20240613u, 984, "format",
     {{"marker", 6}, {"thousands_separator,decimal_separator", 6}, {"cents,grouping", 4}},
     {"decimal_separator", ";", "separators"}, "$1.00", 20},
    {&vat_tmpl_regex_order_ids, 20240612u, 13824, "shape",
     {{"prefix", 6}, {"separator", 5}, {"digits", 5}, {"case", 2}},
     {"prefix", "ZZZ", "ZZZ"}, "ORD-000000", 6},
};
#define N_FAMILIES (sizeof families / sizeof families[0])

/* The 60 first draws of each template, shared by the tests that only read
 * them. */
struct drawn {
    const struct family *f;
    struct vat_tt_env *env;
    struct vat_task t[N_TASKS];
    struct vat_replay r[N_TASKS];
};

static int setup(void **state)
{
    struct drawn *d = calloc(N_FAMILIES, sizeof *d);
    for (size_t k = 0; k < N_FAMILIES; k++) {
        d[k].f = &families[k];
        d[k].env = vat_tt_env_new(families[k].tmpl, families[k].seed);
        for (uint32_t i = 0; i < N_TASKS; i++)
            vat_tt_draw(d[k].env, &d[k].t[i], NULL, i, INLINE_MAX, 1, &d[k].r[i]);
    }
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    struct drawn *d = *state;
    for (size_t k = 0; k < N_FAMILIES; k++) {
        for (int i = 0; i < N_TASKS; i++)
            vat_task_clear(&d[k].t[i]);
        vat_tt_env_free(d[k].env);
    }
    free(d);
    return 0;
}

/* The draw options of env v, for redraws the harness does not make. */
static struct vat_draw_opts opts_of(const struct vat_tt_env *v)
{
    struct vat_draw_opts o = {
        .master_seed = v->seed, .cfg = v->cfg, .inline_max_bytes = INLINE_MAX};
    return o;
}

static const char *case_text(const json_t *spec, size_t i)
{
    const json_t *c = json_array_get(json_object_get(spec, "cases"), i);
    return json_string_value(json_object_get(c, "text"));
}

/* ---- the pieces ------------------------------------------------------------ */

static void fill(struct vat_rx_builder *b, struct vat_rng *r, void *ctx)
{
    (void)r;
    int *k = ctx;
    if ((*k)++ % 2 == 0)
        vat_rx_target(b, "T1", 3);
    else
        vat_rx_decoy(b, "D1", 5);
}

static void test_lines_roundtrip(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("rxgen");
    struct vat_rx_set s = VAT_RX_SET_INIT, back = VAT_RX_SET_INIT;
    struct vat_rx_builder b;
    struct vat_rng r;
    struct vat_err e = {{0}};
    vat_rng_seed(&r, 42, 54);
    vat_rx_begin(&b);
    int k = 0;
    assert_int_equal(vat_rx_expand(&b, &r, "a, \"quoted\" {slot} and {slot}; {time}", fill, &k,
                                   &e),
                     2);
    vat_rx_finish(&b, &s);
    assert_int_equal(vat_rx_expand(&b, &r, "{level} {svc} {user} {host} {ip} {ver} {id} {ms} "
                                           "{n} {pct}",
                                   fill, &k, &e),
                     0);
    vat_rx_finish(&b, &s);
    assert_int_equal(vat_rx_expand(&b, &r, "bad {nope}", fill, &k, &e), -1);
    assert_non_null(strstr(e.msg, "{nope}"));
    vat_rx_builder_release(&b);

    assert_int_equal(s.n, 2);
    assert_int_equal(json_array_size(s.line[0].expected), 1);
    assert_string_equal(json_string_value(json_array_get(s.line[0].expected, 0)), "T1");
    assert_int_equal(s.line[0].kinds, (1u << 3) | (1u << 5));
    assert_int_equal(vat_rx_set_kinds(&s), (1u << 3) | (1u << 5));
    assert_int_equal(json_array_size(s.line[1].expected), 0);
    assert_int_equal(vat_rx_frame_slots("{slot}x{slot}{time}"), 2);

    assert_int_equal(vat_rx_write_lines(&s, "h", dir, "fx/lines.csv", &e), 0);
    char *path = vat_path_join(dir, "fx/lines.csv");
    char *bytes = vat_test_read_file(path, NULL);
    char *csv = vat_rx_lines_csv(&s, "h");
    assert_string_equal(bytes, csv);
    assert_true(strncmp(bytes, "line_id,text\nh1,\"a, \"\"quoted\"\" T1 and D1; ", 42) == 0);
    assert_int_equal(vat_rx_read_lines(&back, dir, "fx/lines.csv", &e), 0);
    assert_int_equal(back.n, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(back.line[i].text, s.line[i].text);
        assert_null(back.line[i].expected);
    }

    /* a file whose header is not line_id,text is refused */
    FILE *f = fopen(path, "w");
    fputs("id,text\n1,x\n", f);
    fclose(f);
    struct vat_rx_set bad = VAT_RX_SET_INIT;
    assert_int_equal(vat_rx_read_lines(&bad, dir, "fx/lines.csv", &e), -1);
    assert_non_null(strstr(e.msg, "line_id,text"));
    vat_rx_set_release(&bad);

    free(csv);
    free(bytes);
    free(path);
    vat_rx_set_release(&s);
    vat_rx_set_release(&back);
    vat_test_rmtree(dir);
    free(dir);
}

static void test_plan_keeps_required(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 7, 9);
    const int req[] = {4, 4, 2, 1};
    const unsigned w[] = {1, 0, 0, 0, 0}; /* free slots are all kind 0 */
    for (int round = 0; round < 20; round++) {
        int *plan = vat_rx_plan(&r, 10, req, 4, w, 5);
        int count[5] = {0};
        for (int i = 0; i < 10; i++)
            count[plan[i]]++;
        assert_int_equal(count[4], 2);
        assert_int_equal(count[2], 1);
        assert_int_equal(count[1], 1);
        assert_int_equal(count[0], 6);
        assert_int_equal(count[3], 0);
        free(plan);
    }
    /* fewer slots than required kinds: the first ones that fit */
    int *plan = vat_rx_plan(&r, 2, req, 4, w, 5);
    assert_int_equal(plan[0] + plan[1], 8);
    free(plan);
}

static void test_prompt_inlines_what_fits(void **state)
{
    (void)state;
    struct vat_rx_set s = VAT_RX_SET_INIT;
    struct vat_rx_builder b;
    vat_rx_begin(&b);
    for (int i = 0; i < 3; i++) {
        vat_rx_putf(&b, "line number %d holds ", i);
        vat_rx_target(&b, "2024-01-0", 0);
        vat_rx_finish(&b, &s);
    }
    vat_rx_builder_release(&b);
    /* all of it; room for the header and one line only; not even the header */
    static const struct {
        size_t budget;
        const char *has[3], *lacks[2];
    } rows[] = {
        {6000, {"fixtures/x/x.csv", "e3,line number 2 holds", "- e3: [\"2024-01-0\"]"}, {"first"}},
        {50, {"the first 1 of its 3 lines", "e1,line number 0"}, {"e2,", "- e2:"}},
        {5, {"its 3 lines are too long to show here"}, {"```"}},
    };
    struct vat_buf out = VAT_BUF_INIT;
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        vat_rx_prompt_examples(&out, &s, "fixtures/x/x.csv", rows[k].budget);
        for (int j = 0; j < 3 && rows[k].has[j]; j++)
            if (!strstr(out.data, rows[k].has[j]))
                fail_msg("budget %zu: no '%s' in\n%s", rows[k].budget, rows[k].has[j], out.data);
        for (int j = 0; j < 2 && rows[k].lacks[j]; j++)
            if (strstr(out.data, rows[k].lacks[j]))
                fail_msg("budget %zu: '%s' in\n%s", rows[k].budget, rows[k].lacks[j], out.data);
        vat_buf_release(&out);
    }

    vat_rx_prompt_answer(&out, 27, "log lines");
    assert_non_null(strstr(out.data, "27 held-out log lines"));
    assert_non_null(strstr(out.data, "[m.group(0) for m in re.finditer(pattern, line)]"));
    vat_buf_release(&out);
    vat_rx_set_release(&s);
}

/* A toy regex template: targets "T<n>", decoys "XT<n>" (kind 1) and
 * "T<n>x" (kind 2); gold \bT\d+\b, trap T\d+. */
enum { TOY_TARGET, TOY_GLUED_BEFORE, TOY_GLUED_AFTER, TOY_KINDS };

/* Where a toy records each slot it plants: kind * 1000 + seen. */
struct toy_log {
    unsigned slot[256];
    size_t n;
};

struct toy {
    bool constant;       /* plant "T1" whatever the kind: lines repeat    */
    bool wrong_kinds;    /* record every plant as a target: kinds go missing */
    struct toy_log *log; /* NULL: not recorded                             */
};

static void toy_plant(struct vat_rx_builder *b, struct vat_rng *r, const struct vat_rx_slot *slot,
                      const void *ctx)
{
    const struct toy *c = ctx;
    if (c->log && c->log->n < 256)
        c->log->slot[c->log->n++] = (unsigned)slot->kind * 1000u + slot->seen;
    char s[32];
    unsigned n = c->constant ? 1 : vat_rng_below(r, 100000);
    if (c->wrong_kinds || slot->kind == TOY_TARGET) {
        snprintf(s, sizeof s, "T%u", n);
        vat_rx_target(b, s, c->wrong_kinds ? TOY_TARGET : slot->kind);
    } else {
        snprintf(s, sizeof s, slot->kind == TOY_GLUED_BEFORE ? "XT%u" : "T%ux", n);
        vat_rx_decoy(b, s, slot->kind);
    }
}

static const char *const toy0[] = {"{time} quiet"};
static const char *const toy1[] = {"{time} saw {slot}", "{n}: {slot} ok"};
static const char *const toy2[] = {"{time} {slot} then {slot}"};
static const char *const toy3[] = {"{slot}, {slot}, {slot} at {time}"};
static const char *const fixed[] = {"x {slot}"};
static const unsigned toy_weights[TOY_KINDS] = {2, 1, 1};

static const struct vat_rx_layout toy_layout = {
    VAT_RX_FRAMES(toy0, toy1, toy2, toy3),
    .slot_weights = {1, 1, 1, 1},
    .weights = toy_weights,
    .n_kinds = TOY_KINDS,
    .plant = toy_plant,
};

static void test_build_lines_from_layout(void **state)
{
    (void)state;
    struct vat_rng r;
    struct vat_err e = {{0}};
    vat_rng_seed(&r, 3, 4);
    struct toy_log log = {{0}, 0};
    struct toy c = {false, false, &log};
    const int req[] = {TOY_GLUED_AFTER, TOY_GLUED_AFTER, TOY_GLUED_BEFORE};

    /* every line holds three slots: 5 lines, 15 plants, the required ones
     * among them, and `seen` counting each kind from 0 in planting order */
    struct vat_rx_layout l = toy_layout;
    l.slot_weights[0] = l.slot_weights[1] = l.slot_weights[2] = 0;
    struct vat_rx_set s = VAT_RX_SET_INIT;
    assert_int_equal(vat_rx_build_lines(&s, &r, 5, &l, req, 3, &c, &e), 0);
    assert_int_equal(s.n, 5);
    assert_int_equal(log.n, 15);
    unsigned next[TOY_KINDS] = {0};
    for (size_t i = 0; i < log.n; i++) {
        unsigned kind = log.slot[i] / 1000;
        assert_int_equal(log.slot[i] % 1000, next[kind]++);
    }
    assert_true(next[TOY_GLUED_AFTER] >= 2 && next[TOY_GLUED_BEFORE] >= 1);
    for (size_t i = 0; i < s.n; i++)
        assert_non_null(strstr(s.line[i].text, ", "));
    vat_rx_set_release(&s);

    /* no line draws a slot: lines are widened until the required fit */
    l = toy_layout;
    l.slot_weights[1] = l.slot_weights[2] = l.slot_weights[3] = 0;
    log.n = 0;
    assert_int_equal(vat_rx_build_lines(&s, &r, 4, &l, req, 3, &c, &e), 0);
    assert_int_equal(log.n, 3);
    assert_int_equal(vat_rx_set_kinds(&s), (1u << TOY_GLUED_AFTER) | (1u << TOY_GLUED_BEFORE));
    vat_rx_set_release(&s);

    /* refused: too few lines, a kind out of range, a frame in the wrong list */
    assert_int_equal(vat_rx_build_lines(&s, &r, 1, &toy_layout, (const int[]){0, 0, 0, 0}, 4, &c,
                                        &e),
                     -1);
    assert_non_null(strstr(e.msg, "cannot hold 4 required"));
    assert_int_equal(vat_rx_build_lines(&s, &r, 3, &toy_layout, (const int[]){TOY_KINDS}, 1, &c,
                                        &e),
                     -1);
    assert_non_null(strstr(e.msg, "out of range"));
    l = toy_layout;
    l.frames[1] = toy2;
    l.n_frames[1] = 1;
    l.slot_weights[0] = l.slot_weights[2] = l.slot_weights[3] = 0;
    assert_int_equal(vat_rx_build_lines(&s, &r, 3, &l, NULL, 0, &c, &e), -1);
    assert_non_null(strstr(e.msg, "another number"));
    l = toy_layout;
    l.n_frames[2] = 0;
    assert_int_equal(vat_rx_build_lines(&s, &r, 3, &l, NULL, 0, &c, &e), -1);
    assert_non_null(strstr(e.msg, "no frame with 2 slots"));
    vat_rx_set_release(&s);
}

/* Appends lines of neutral text to s. */
static void add_lines(struct vat_rx_set *s, const char *const *text, size_t n)
{
    struct vat_rx_builder b;
    vat_rx_begin(&b);
    for (size_t i = 0; i < n; i++) {
        vat_rx_put(&b, text[i]);
        vat_rx_finish(&b, s);
    }
    vat_rx_builder_release(&b);
}

static void test_lines_distinct(void **state)
{
    (void)state;
    struct vat_rx_set ex = VAT_RX_SET_INIT, ho = VAT_RX_SET_INIT;
    add_lines(&ex, (const char *const[]){"a 1", "b 2"}, 2);
    add_lines(&ho, (const char *const[]){"c 3", "d 4", "e 5"}, 3);
    assert_true(vat_rx_lines_distinct(&ex, &ho));
    /* a repeat within the examples, across the sets, within the held-out */
    char **slot[] = {&ex.line[1].text, &ho.line[0].text, &ho.line[2].text};
    const char *was[] = {"b 2", "c 3", "e 5"}, *now[] = {"a 1", "b 2", "d 4"};
    for (size_t k = 0; k < 3; k++) {
        free(*slot[k]);
        *slot[k] = vat_xstrdup(now[k]);
        assert_false(vat_rx_lines_distinct(&ex, &ho));
        free(*slot[k]);
        *slot[k] = vat_xstrdup(was[k]);
        assert_true(vat_rx_lines_distinct(&ex, &ho));
    }
    vat_rx_set_release(&ex);
    vat_rx_set_release(&ho);
}

/* Tasks 0..n-1 take n distinct notations (a permutation keyed by the
 * seed); a redraw keeps the notation and draws nothing. */
/* The notation of the first draw of task index with master seed seed. */
static unsigned first_format(uint64_t seed, uint32_t index, unsigned n)
{
    /* a template that scores no notation: one permutation of them all */
    static struct vat_template plain;
    plain = vat_tmpl_regex_amounts;
    plain.notation_hardness = NULL;
    struct vat_task t;
    vat_task_init(&t, &plain, index, "/nonexistent");
    t.master_seed = seed;
    return vat_rx_choose_format(&t, NULL, n);
}

static void test_choose_format_walks_every_notation(void **state)
{
    (void)state;
    static const unsigned sizes[] = {7, 192, 20736};
    for (size_t k = 0; k < 3; k++) {
        unsigned n = sizes[k];
        char *hit = calloc(n, 1);
        bool reseeded = false, moved = false;
        for (uint32_t i = 0; i < n; i++) {
            unsigned f = first_format(77, i, n);
            assert_true(f < n);
            assert_false(hit[f]); /* injective in the index */
            hit[f] = 1;
            reseeded |= first_format(78, i, n) != f;
            moved |= f != i;
        }
        free(hit);
        assert_true(reseeded && moved);
    }
    /* a redraw keeps the question and takes no draw from r */
    struct vat_task t;
    vat_task_init(&t, &vat_tmpl_regex_amounts, 3, "/nonexistent");
    t.master_seed = 77;
    unsigned f0 = vat_rx_choose_format(&t, NULL, 192);
    t.attempt = 2;
    struct vat_rng a, b;
    vat_rng_seed(&a, 1, 2);
    vat_rng_seed(&b, 1, 2);
    assert_int_equal(vat_rx_choose_format(&t, &a, 192), f0);
    assert_int_equal(vat_rng_u32(&a), vat_rng_u32(&b));
}

/* Levels take their notations from disjoint classes by hardness: level
 * 1 the easiest 40%, levels 2-5 a quarter of the rest each, harder at
 * each; within a level the first `size` task indexes take every notation
 * of its class once, and the class does not depend on the seed. */
static unsigned toy_hardness(unsigned f)
{
    return (f * 2654435761u >> 7) % 9;
}

static void test_levelled_classes(void **state)
{
    (void)state;
    enum { N = 2000 };
    static const unsigned want[VAT_LEVELS + 1] = {0, 800, 300, 300, 300, 300};
    unsigned *pos = calloc(N, sizeof *pos);
    for (unsigned k = 0; k < N; k++)
        pos[vat_rx_level_member(N, toy_hardness, k)] = k;
    char *hit = calloc(N, 1);
    struct vat_template toy = vat_tmpl_regex_amounts;
    toy.notation_hardness = toy_hardness;
    unsigned next = 0, prev_max = 0;
    double prev_mean = -1;
    for (int level = 1; level <= VAT_LEVELS; level++) {
        unsigned first, size = vat_rx_level_class(N, toy_hardness, level, &first);
        assert_int_equal(size, want[level]);
        assert_int_equal(first, next);
        next += size;
        unsigned lo = ~0u, hi = 0;
        double sum = 0;
        for (uint32_t i = 0; i < size; i++) {
            struct vat_task t;
            vat_task_init(&t, &toy, i, "/nonexistent");
            t.master_seed = 77 + (uint64_t)level;
            vat_task_set_level(&t, level);
            unsigned f = vat_rx_choose_format(&t, NULL, N);
            assert_true(f < N);
            assert_true(pos[f] >= first && pos[f] < first + size);
            assert_false(hit[f]); /* injective within a level, disjoint across */
            hit[f] = 1;
            unsigned h = toy_hardness(f);
            lo = h < lo ? h : lo;
            hi = h > hi ? h : hi;
            sum += h;
            vat_task_clear(&t);
        }
        assert_true(level == 1 || lo >= prev_max);
        assert_true(sum / size > prev_mean);
        prev_mean = sum / size;
        prev_max = hi;
    }
    assert_int_equal(next, N);
    for (unsigned f = 0; f < N; f++)
        assert_true(hit[f]);
    free(hit);
    free(pos);
}

/* The toy template's gold and trap; "bad" in params names no question,
 * "unarmed" makes the trap the gold. */
static char *toy_pattern(const json_t *params, bool naive, struct vat_err *e)
{
    if (json_object_get(params, "bad"))
        vat_err_set(e, "toy: params name no question");
    else if (naive && !json_object_get(params, "unarmed"))
        return vat_xstrdup("T\\d+");
    return json_object_get(params, "bad") ? NULL : vat_xstrdup("\\bT\\d+\\b");
}

static const struct vat_template toy_tmpl = {.version = VAT_TEMPLATE_V1, .name = "rx_toy"};

/* Sets up t as the pipeline would for a toy task below root. */
static void toy_task(struct vat_task *t, json_t *cfg, const char *root, uint32_t attempt)
{
    vat_task_init(t, &toy_tmpl, 1, root);
    t->master_seed = 5;
    t->attempt = attempt;
    t->cfg = cfg;
    t->inline_max_bytes = INLINE_MAX;
}

/* Every line a task plants, shown or held out, lies in its side's half
 * of all strings: a train task and a test task cannot share one. */
static void test_lines_on_their_side(void **state)
{
    (void)state;
    char *root = vat_test_tmpdir("rxside");
    json_t *cfg = json_pack("{s:i, s:i, s:i, s:i}", "examples_min", 5, "examples_max", 5,
                            "rows_min", 60, "rows_max", 60);
    for (int side = 0; side < VAT_N_SPLITS; side++) {
        struct vat_task t;
        struct vat_rng r;
        struct vat_rx_draw d;
        struct vat_err e = {{0}};
        struct toy c = {false, false, NULL};
        vat_rng_seed(&r, 11, 12);
        toy_task(&t, cfg, root, 0);
        t.side = side;
        assert_int_equal(vat_rx_task_begin(&t, &r, &d, &e), 0);
        assert_int_equal(vat_rx_task_plant(&t, &r, &d, &toy_layout, &c, &e), 0);
        struct vat_rx_set sets[2] = {VAT_RX_SET_INIT, VAT_RX_SET_INIT};
        assert_int_equal(vat_rx_read_lines(&sets[0], root, t.fixture[0].path, &e), 0);
        assert_int_equal(vat_rx_read_lines(&sets[1], root, t.fixture[1].path, &e), 0);
        assert_int_equal(sets[0].n + sets[1].n, 65);
        for (int k = 0; k < 2; k++) {
            for (size_t i = 0; i < sets[k].n; i++) {
                const char *x = sets[k].line[i].text;
                assert_true(vat_side_owns(side, x, strlen(x)));
                assert_false(vat_side_owns(!side, x, strlen(x)));
            }
            vat_rx_set_release(&sets[k]);
        }
        vat_task_clear(&t);
    }
    json_decref(cfg);
    vat_test_rmtree(root);
    free(root);
}

static void test_task_driver_on_a_toy(void **state)
{
    (void)state;
    char *root = vat_test_tmpdir("rxtoy");
    json_t *cfg = json_pack("{s:i, s:i, s:i, s:i}", "examples_min", 3, "examples_max", 3,
                            "rows_min", 20, "rows_max", 22);
    struct vat_task t;
    struct vat_rng r;
    struct vat_rx_draw d;
    struct vat_err e = {{0}};
    struct toy c = {false, false, NULL};
    vat_rng_seed(&r, 11, 12);

    toy_task(&t, cfg, root, 0);
    assert_int_equal(vat_rx_task_begin(&t, &r, &d, &e), 0);
    assert_int_equal(d.ex.n, 3);
    assert_true(d.ho.n >= 20 && d.ho.n <= 22);
    vat_rx_require(&d.ex, TOY_GLUED_BEFORE);
    for (int k = 0; k < TOY_KINDS; k++)
        vat_rx_require(&d.ho, k);
    assert_int_equal(vat_rx_task_plant(&t, &r, &d, &toy_layout, &c, &e), 0);
    assert_int_equal(t.n_fixtures, 2);
    assert_string_equal(t.fixture[0].path, "fixtures/rx_toy/000/rx_toy-00001.csv");
    assert_string_equal(t.fixture[1].path, "fixtures/rx_toy/000/rx_toy-00001.heldout.csv");
    assert_int_equal(t.fixture[1].rows, (long)d.ho.n);
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, "Extract the T numbers.\n\n");
    vat_rx_task_prompt(&t, &b, "toy lines");
    assert_true(strncmp(t.prompt, "Extract the T numbers.\n\n", 24) == 0);
    assert_non_null(strstr(t.prompt, t.fixture[0].path));
    assert_non_null(strstr(t.prompt, "held-out toy lines"));
    assert_int_equal(json_integer_value(json_object_get(t.params, "examples")), 3);
    assert_int_equal(json_integer_value(json_object_get(t.params, "heldout_lines")),
                     (json_int_t)d.ho.n);
    assert_string_equal(json_string_value(json_object_get(t.spec, "checker")), "regex");

    json_object_set_new(t.params, "bad", json_true());
    assert_int_equal(vat_rx_task_reference(&t, toy_pattern, &e), -1);
    assert_non_null(strstr(e.msg, "no question"));
    json_object_del(t.params, "bad");
    assert_int_equal(vat_rx_task_reference(&t, toy_pattern, &e), 0);
    assert_string_equal(t.gold, "\\bT\\d+\\b");
    assert_int_equal(json_array_size(json_object_get(t.spec, "cases")), 3 + d.ho.n);
    assert_int_equal(vat_rx_task_confirm(&t, &e), 0);
    json_object_set_new(t.params, "unarmed", json_true());
    assert_int_equal(vat_rx_task_trap(&t, toy_pattern, &e), -1);
    assert_non_null(strstr(e.msg, "not armed on held-out lines"));
    assert_null(t.trap);
    json_object_del(t.params, "unarmed");
    assert_int_equal(vat_rx_task_trap(&t, toy_pattern, &e), 0);
    assert_string_equal(t.trap, "T\\d+");
    vat_task_clear(&t);

    /* refused: lines that repeat, a required kind that never shows, too
     * many required plants, line counts out of order */
    struct toy constant = {true, false, NULL}, wrong = {false, true, NULL};
    const struct toy *bad[] = {&constant, &wrong};
    /* (a constant line repeats, or never lands on the task's side) */
    const char *why[] = {"repeats another line|other side of the split",
                         "lack a required decoy kind"};
    struct vat_rx_layout one_fixed = toy_layout;
    one_fixed.frames[1] = fixed;
    one_fixed.n_frames[1] = 1;
    one_fixed.slot_weights[0] = one_fixed.slot_weights[2] = one_fixed.slot_weights[3] = 0;
    const struct vat_rx_layout *layouts[] = {&one_fixed, &toy_layout};
    for (int k = 0; k < 2; k++) {
        toy_task(&t, cfg, root, 0);
        assert_int_equal(vat_rx_task_begin(&t, &r, &d, &e), 0);
        vat_rx_require(&d.ho, TOY_GLUED_AFTER);
        assert_int_equal(vat_rx_task_plant(&t, &r, &d, layouts[k], bad[k], &e), -1);
        char *alt = vat_xstrdup(why[k]), *bar = strchr(alt, '|');
        if (bar)
            *bar++ = 0;
        assert_true(strstr(e.msg, alt) || (bar && strstr(e.msg, bar)));
        free(alt);
        vat_task_clear(&t);
    }
    toy_task(&t, cfg, root, 0);
    assert_int_equal(vat_rx_task_begin(&t, &r, &d, &e), 0);
    for (int k = 0; k <= VAT_RX_MAX_REQUIRED; k++)
        vat_rx_require(&d.ho, TOY_TARGET);
    assert_int_equal(vat_rx_task_plant(&t, &r, &d, &toy_layout, &c, &e), -1);
    assert_non_null(strstr(e.msg, "more than"));
    assert_int_equal(t.n_fixtures, 0);
    json_object_set_new(cfg, "examples_max", json_integer(2));
    assert_int_equal(vat_rx_task_begin(&t, &r, &d, &e), -1);
    assert_non_null(strstr(e.msg, "rx_toy: need 3 <= examples_min <= examples_max"));
    vat_task_clear(&t);
    json_decref(cfg);
    vat_test_rmtree(root);
    free(root);
}

static void test_every_regex_template_has_a_row(void **state)
{
    (void)state;
    size_t regex = 0;
    for (const struct vat_template *const *p = vat_registry; *p; p++) {
        if (strcmp((*p)->family, "regex") != 0)
            continue;
        regex++;
        bool found = false;
        for (size_t k = 0; k < N_FAMILIES; k++)
            found |= families[k].tmpl == *p;
        if (!found)
            fail_msg("regex template '%s' has no row in test_regexgen.c", (*p)->name);
        assert_ptr_equal((*p)->params, vat_rx_task_params);
        assert_ptr_equal((*p)->confirm, vat_rx_task_confirm);
    }
    assert_int_equal(regex, N_FAMILIES);
}

/* ---- admission of 60 tasks per template --------------------------------------- */

/* The fixtures, cases and prompt of an admitted regex task. */
static void assert_well_formed(const struct vat_task *t, const char *stated)
{
    assert_int_equal(t->n_fixtures, 2);
    assert_string_equal(t->fixture[0].role, "main");
    assert_string_equal(t->fixture[1].role, "variant");
    assert_string_equal(t->fixture[0].format, "csv");
    assert_non_null(strstr(t->fixture[1].path, ".heldout.csv"));
    assert_int_equal(json_array_size(t->fixture[0].columns), 2);
    assert_true(t->fixture[0].rows >= 3 && t->fixture[0].rows <= 5);
    assert_true(t->fixture[1].rows >= 24 && t->fixture[1].rows <= 32);
    const json_t *params = t->params;
    assert_int_equal(json_integer_value(json_object_get(params, "examples")), t->fixture[0].rows);
    assert_int_equal(json_integer_value(json_object_get(params, "heldout_lines")),
                     t->fixture[1].rows);

    /* cases: examples first, then >= 20 held-out lines the prompt never shows */
    const json_t *cases = json_object_get(t->spec, "cases");
    size_t nho = 0, i;
    json_t *c;
    assert_int_equal(json_array_size(cases), (size_t)(t->fixture[0].rows + t->fixture[1].rows));
    json_array_foreach(cases, i, c) {
        bool ho = json_is_true(json_object_get(c, "heldout"));
        assert_true(ho == (i >= (size_t)t->fixture[0].rows));
        nho += ho;
        const char *text = json_string_value(json_object_get(c, "text"));
        for (const char *p = text; *p; p++)
            assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
        if (ho)
            assert_null(strstr(t->prompt, text));
        else if (!strchr(text, '"')) /* CSV doubles quotes in the inlined file */
            assert_non_null(strstr(t->prompt, text));
    }
    assert_true(nho >= 20);

    /* the prompt names the example file, never the held-out one */
    assert_non_null(strstr(t->prompt, t->fixture[0].path));
    assert_null(strstr(t->prompt, ".heldout.csv"));
    assert_non_null(strstr(t->prompt, json_string_value(json_object_get(t->params, stated))));
    assert_non_null(strstr(t->prompt, "re.finditer(pattern, line)"));
    assert_true(t->difficulty >= 1 && t->difficulty <= 5);
}

/* The values of the comma-separated params keys of t, joined. */
static char *spread_key(const struct vat_task *t, const char *keys)
{
    struct vat_buf b = VAT_BUF_INIT;
    for (const char *k = keys; *k;) {
        size_t n = strcspn(k, ",");
        char *name = vat_xstrndup(k, n);
        const json_t *v = json_object_get(t->params, name);
        assert_non_null(v);
        char *s = vat_json_dumps(v);
        vat_buf_printf(&b, "%s|", s);
        free(s);
        free(name);
        k += n + (k[n] == ',');
    }
    return vat_buf_detach(&b);
}

static void test_sixty_tasks_admit(void **state)
{
    struct drawn *d = *state;
    for (size_t k = 0; k < N_FAMILIES; k++) {
        const struct family *f = d[k].f;
        json_t *golds = json_object(), *spread[4];
        for (int s = 0; s < 4; s++)
            spread[s] = json_object();
        for (int i = 0; i < N_TASKS; i++) {
            const struct vat_task *t = &d[k].t[i];
            vat_tt_assert_replays(&d[k].r[i]);
            assert_string_equal(d[k].r[i].v[VAT_ROLE_TRAP].code, VAT_WRONG_EXTRACTION);
            assert_well_formed(t, f->stated);
            /* the gold inside a redundant group is the same pattern */
            char *wrapped = vat_xasprintf("(?:%s)", t->gold);
            struct vat_verdict v = vat_tt_check(t, wrapped);
            assert_true(v.gate_passed && v.score == 1.0);
            free(wrapped);
            const json_t *twin = json_object_get(golds, t->gold);
            if (twin)
                fail_msg("%s and %s share the gold '%s'", json_string_value(twin), t->id, t->gold);
            json_object_set_new(golds, t->gold, json_string(t->id));
            for (int s = 0; s < 4 && f->spread[s].keys; s++) {
                char *key = spread_key(t, f->spread[s].keys);
                json_object_set_new(spread[s], key, json_true());
                free(key);
            }
        }
        /* every notation part is drawn */
        for (int s = 0; s < 4; s++) {
            if (f->spread[s].keys && json_object_size(spread[s]) < f->spread[s].least)
                fail_msg("%s: %zu values of %s among %d tasks, want %zu", f->tmpl->name,
                         json_object_size(spread[s]), f->spread[s].keys, N_TASKS,
                         f->spread[s].least);
            json_decref(spread[s]);
        }
        json_decref(golds);
    }
}

/* The gold of the first draw of task index, fast: generate, then
 * reference over one line per fixture.  Gold is built from the params
 * alone (the notation of a first draw does not depend on the lines), so
 * the lines only cost extractions here; no replays either. */
static char *first_gold(const struct vat_tt_env *v, uint32_t index)
{
    struct vat_task t;
    struct vat_rng r;
    struct vat_err e = {{0}};
    vat_task_init(&t, v->tmpl, index, v->dir);
    t.master_seed = v->seed;
    t.cfg = v->cfg;
    t.inline_max_bytes = INLINE_MAX;
    /* The notation is the same at every attempt; a draw whose lines the
     * template refuses (a repeat among these few) is drawn again. */
    int rc = -1;
    for (uint32_t a = 0; rc != 0 && a < 10; a++) {
        vat_task_clear(&t);
        t.attempt = a;
        vat_rng_stream(&r, v->seed, v->tmpl->name, index, "task", a, NULL);
        rc = v->tmpl->generate(&t, &r, &e);
    }
    if (rc != 0)
        fail_msg("%s: %s", t.id, e.msg);
    struct vat_rx_set one = VAT_RX_SET_INIT;
    add_lines(&one, (const char *const[]){"no notation here"}, 1);
    for (int fi = 0; fi < 2; fi++)
        assert_int_equal(vat_rx_write_lines(&one, "x", t.root, t.fixture[fi].path, &e), 0);
    vat_rx_set_release(&one);
    if (v->tmpl->reference(&t, &e) != 0)
        fail_msg("%s: %s", t.id, e.msg);
    char *gold = vat_xstrdup(t.gold);
    vat_task_clear(&t);
    return gold;
}

/* The first n_formats tasks walk every notation once: no gold repeats
 * (walked up to WALK_MAX tasks: the permutation's injectivity is tested
 * on its own above, this proves the decoding of notations into golds);
 * and the fast golds are those of the full draws. */
#define WALK_MAX 1500u
static void test_format_space(void **state)
{
    struct drawn *d = *state;
    for (size_t k = 0; k < N_FAMILIES; k++) {
        const struct family *f = d[k].f;
        struct vat_tt_env *v = vat_tt_env_new(f->tmpl, f->seed);
        json_object_set_new(v->cfg, "examples_max", json_integer(3));
        json_object_set_new(v->cfg, "rows_max", json_integer(20));
        json_object_set_new(v->cfg, "rows_min", json_integer(20));
        json_t *seen = json_object();
        unsigned walk = f->n_formats < WALK_MAX ? f->n_formats : WALK_MAX;
        for (uint32_t i = 0; i < walk; i++) {
            char *gold = first_gold(v, i);
            if (json_object_get(seen, gold))
                fail_msg("%s-%05u repeats the gold '%s'", f->tmpl->name, i, gold);
            if (i < N_TASKS)
                assert_string_equal(gold, d[k].t[i].gold);
            json_object_set_new(seen, gold, json_true());
            free(gold);
        }
        assert_int_equal(json_object_size(seen), walk);
        json_decref(seen);
        vat_tt_env_free(v);
    }
}

/* ---- determinism ---------------------------------------------------------------- */

static void test_same_seed_same_bytes(void **state)
{
    struct drawn *d = *state;
    for (size_t k = 0; k < N_FAMILIES; k++) {
        struct vat_tt_env *other = vat_tt_env_new(d[k].f->tmpl, d[k].f->seed + 1);
        char *root2 = vat_test_tmpdir("rxsame");
        for (uint32_t i = 0; i < 4; i++) {
            const struct vat_task *a = &d[k].t[i * 9];
            struct vat_task b, c;
            struct vat_replay r;
            vat_tt_draw(d[k].env, &b, root2, i * 9, INLINE_MAX, 1, &r);
            vat_tt_draw(other, &c, NULL, i * 9, INLINE_MAX, 1, &r);
            assert_string_equal(a->prompt, b.prompt);
            assert_string_equal(a->gold, b.gold);
            assert_string_equal(a->trap, b.trap);
            char *sa = vat_json_dumps(a->spec), *sb = vat_json_dumps(b.spec);
            assert_string_equal(sa, sb);
            free(sa);
            free(sb);
            for (int fi = 0; fi < 2; fi++) {
                char *fa = vat_tt_fixture_text(a, fi, NULL);
                char *fb = vat_tt_fixture_text(&b, fi, NULL);
                char *fc = vat_tt_fixture_text(&c, fi, NULL);
                assert_string_equal(fa, fb);
                assert_string_equal(a->fixture[fi].sha256, b.fixture[fi].sha256);
                assert_string_not_equal(fa, fc);
                free(fa);
                free(fb);
                free(fc);
            }
            vat_task_clear(&b);
            vat_task_clear(&c);
        }
        vat_test_rmtree(root2);
        free(root2);
        vat_tt_env_free(other);
    }
}

/* The held-out lines come from their own stream: no line repeats another,
 * more or fewer examples leave the held-out lines as they were, and a
 * redraw (attempt 1) changes them. */
static void test_heldout_stream_is_separate(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_FAMILIES; k++) {
        struct vat_tt_env *v = vat_tt_env_new(families[k].tmpl, families[k].seed);
        struct vat_task t;
        struct vat_replay r;
        struct vat_err e = {{0}};
        vat_tt_draw(v, &t, NULL, 3 + (uint32_t)k, INLINE_MAX, 1, &r);
        size_t n = json_array_size(json_object_get(t.spec, "cases"));
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                assert_string_not_equal(case_text(t.spec, i), case_text(t.spec, j));
        char *ho0 = vat_tt_fixture_text(&t, 1, NULL);
        for (int nex = 3; nex <= 5; nex += 2) {
            json_object_set_new(v->cfg, "examples_min", json_integer(nex));
            json_object_set_new(v->cfg, "examples_max", json_integer(nex));
            struct vat_draw_opts o = opts_of(v);
            assert_int_equal(vat_task_draw(&t, 0, &o, &r, &e), 0);
            assert_int_equal(t.fixture[0].rows, nex);
            char *ho = vat_tt_fixture_text(&t, 1, NULL);
            assert_string_equal(ho, ho0);
            free(ho);
        }
        struct vat_draw_opts o = opts_of(v);
        assert_int_equal(vat_task_draw(&t, 1, &o, &r, &e), 0);
        char *ho1 = vat_tt_fixture_text(&t, 1, NULL);
        assert_string_not_equal(ho0, ho1);
        free(ho0);
        free(ho1);
        vat_task_clear(&t);
        vat_tt_env_free(v);
    }
}

/* ---- the checker on the templates' tasks ---------------------------------------- */

/* Returns true if reason names a held-out case of t->spec that pattern
 * extracts differently ("case N (held-out) \"...window...\": ..."), and
 * the quoted window is a piece of that case's text. */
static bool reason_names_heldout_miss(const struct vat_task *t, const char *pattern,
                                      const char *reason)
{
    size_t idx;
    int used = 0;
    if (sscanf(reason, "case %zu (held-out) %n", &idx, &used) != 1 || used == 0)
        return false;
    const json_t *c = json_array_get(json_object_get(t->spec, "cases"), idx);
    if (!c || !json_is_true(json_object_get(c, "heldout")))
        return false;
    const char *text = json_string_value(json_object_get(c, "text"));
    struct vat_verdict v;
    json_t *got = vat_regex_extract(t->spec, pattern, strlen(pattern), text, &v);
    assert_non_null(got);
    bool differs = !json_equal(got, json_object_get(c, "expected"));
    json_decref(got);

    const char *q = reason + used;
    if (strncmp(q, "...", 3) == 0)
        q += 3;
    if (*q++ != '"')
        return false;
    char window[128];
    size_t k = 0;
    for (; *q && *q != '"' && k + 1 < sizeof window; q++) {
        if (*q == '\\' && q[1])
            q++;
        window[k++] = *q;
    }
    window[k] = 0;
    if (k >= 3 && strcmp(window + k - 3, "...") == 0)
        window[k - 3] = 0;
    return differs && window[0] && strstr(text, window) != NULL;
}

static void test_trap_fails_on_heldout(void **state)
{
    struct drawn *d = *state;
    for (size_t k = 0; k < N_FAMILIES; k++)
        for (int i = 0; i < 12; i++) {
            struct vat_task *t = &d[k].t[i * 5];
            json_t *full = t->spec, *ho = vat_rx_spec_heldout(full);
            t->spec = ho;
            struct vat_verdict v = vat_tt_check(t, t->trap);
            assert_true(v.gate_passed);
            assert_true(v.score == 0.0);
            assert_string_equal(v.code, VAT_WRONG_EXTRACTION);
            /* by default the reason names the held-out line, never quotes it */
            size_t idx;
            int used = 0;
            if (sscanf(v.reason, "case %zu (held-out): expected %n", &idx, &used) != 1 || !used ||
                strchr(v.reason, '"'))
                fail_msg("%s: reason does not name a hidden held-out line: %s", t->id, v.reason);
            v = vat_check_regex_as(t->spec, t->trap, strlen(t->trap), true);
            if (!reason_names_heldout_miss(t, t->trap, v.reason))
                fail_msg("%s: reason does not name a held-out line: %s", t->id, v.reason);
            /* gold still passes the hidden lines alone */
            v = vat_tt_check(t, t->gold);
            assert_true(v.score == 1.0);
            t->spec = full;
            json_decref(ho);
        }
}

/* A wrong expected list in the spec, a held-out line changed on disk and
 * params that name no question are all caught. */
static void test_confirm_catches_tampering(void **state)
{
    struct drawn *d = *state;
    for (size_t k = 0; k < N_FAMILIES; k++) {
        const struct family *f = d[k].f;
        char *root = vat_test_tmpdir("rxtamper");
        struct vat_task t;
        struct vat_replay r;
        struct vat_err e = {{0}};
        vat_tt_draw(d[k].env, &t, root, 11, INLINE_MAX, 1, &r);
        assert_int_equal(f->tmpl->confirm(&t, &e), 0);

        json_t *c = json_array_get(json_object_get(t.spec, "cases"), (size_t)t.fixture[0].rows + 2);
        json_array_append_new(json_object_get(c, "expected"), json_string(f->bogus));
        assert_int_equal(f->tmpl->confirm(&t, &e), -1);
        assert_non_null(strstr(e.msg, "held-out line"));

        /* reference reads the changed file back, confirm sees the planted
         * line differ */
        struct vat_csv csv = VAT_CSV_INIT;
        assert_int_equal(vat_csv_read(&csv, t.root, t.fixture[1].path, &e), 0);
        char *changed = vat_xasprintf("%s ok", vat_csv_get(&csv, 3, 1));
        assert_true(vat_csv_set(&csv, 3, 1, changed));
        free(changed);
        assert_int_equal(vat_csv_write(&csv, t.root, t.fixture[1].path, &e), 0);
        vat_csv_release(&csv);
        free(t.gold);
        t.gold = NULL;
        assert_int_equal(f->tmpl->reference(&t, &e), 0);
        assert_int_equal(f->tmpl->confirm(&t, &e), -1);
        assert_non_null(strstr(e.msg, "reads back"));

        json_object_set_new(t.params, f->bad_param.key, json_string(f->bad_param.value));
        assert_int_equal(f->tmpl->reference(&t, &e), -1);
        if (!strstr(e.msg, f->bad_param.msg))
            fail_msg("%s: reference said '%s', want '%s'", t.id, e.msg, f->bad_param.msg);
        assert_int_equal(f->tmpl->trap_answer(&t, &e), -1);
        vat_task_clear(&t);
        vat_test_rmtree(root);
        free(root);
    }
}

/* ---- mutants -------------------------------------------------------------------- */

/* Gold mutants of the kinds the strength report scores: a lookaround or
 * \b dropped, a quantifier widened, a class replaced with \d, \w or ".".
 * Written here for the patterns the templates emit (no nested classes, no
 * escapes inside classes). */
static void add_mutant(json_t *out, const char *pat, size_t at, size_t len, const char *with)
{
    char *m = vat_xasprintf("%.*s%s%s", (int)at, pat, with, pat + at + len);
    if (strcmp(m, pat) != 0)
        json_array_append_new(out, json_string(m));
    free(m);
}

static json_t *mutants_of(const char *pat)
{
    json_t *out = json_array();
    size_t n = strlen(pat);
    for (size_t i = 0; i < n;) {
        const char *p = pat + i;
        if (strncmp(p, "(?<!", 4) == 0 || strncmp(p, "(?<=", 4) == 0 ||
            strncmp(p, "(?!", 3) == 0 || strncmp(p, "(?=", 3) == 0) {
            int depth = 0;
            size_t j = i;
            for (; j < n; j++) {
                if (pat[j] == '\\') {
                    j++;
                    continue;
                }
                if (pat[j] == '[')
                    while (j < n && pat[j] != ']')
                        j++;
                if (pat[j] == '(')
                    depth++;
                if (pat[j] == ')' && --depth == 0)
                    break;
            }
            add_mutant(out, pat, i, j + 1 - i, "");
            i += strncmp(p, "(?<", 3) == 0 ? 4 : 3;
            continue;
        }
        if (strncmp(p, "(?:", 3) == 0) {
            i += 3;
            continue;
        }
        if (p[0] == '\\' && p[1] == 'b') {
            add_mutant(out, pat, i, 2, "");
            i += 2;
            continue;
        }
        size_t atom = 0;
        if (p[0] == '\\' && (p[1] == 'd' || p[1] == 'w'))
            atom = 2;
        else if (p[0] == '[')
            atom = (size_t)(strchr(p, ']') - p) + 1;
        if (atom) {
            static const char *const cls[] = {"\\d", "\\w", "."};
            for (int k = 0; k < 3; k++)
                if (strlen(cls[k]) != atom || strncmp(p, cls[k], atom) != 0)
                    add_mutant(out, pat, i, atom, cls[k]);
            i += atom;
            continue;
        }
        if (p[0] == '{') {
            int a, b, used = 0;
            size_t len = (size_t)(strchr(p, '}') - p) + 1;
            char w1[32], w2[8];
            if (sscanf(p, "{%d,%d}%n", &a, &b, &used) == 2 && used > 0) {
                snprintf(w1, sizeof w1, "{%d,%d}", a, b + 1);
                snprintf(w2, sizeof w2, "%s", a == 0 ? "*" : "+");
            } else {
                sscanf(p, "{%d}", &a);
                snprintf(w1, sizeof w1, "{%d,%d}", a > 0 ? a - 1 : 0, a + 1);
                snprintf(w2, sizeof w2, "+");
            }
            add_mutant(out, pat, i, len, w1);
            add_mutant(out, pat, i, len, w2);
            i += len;
            continue;
        }
        if (p[0] == '?' || p[0] == '+') {
            add_mutant(out, pat, i, 1, "*");
            i++;
            continue;
        }
        i += p[0] == '\\' ? 2 : 1;
    }
    return out;
}

/* Returns true if the mutant scores 1 through the task's check (a
 * survivor: it extracts exactly the expected list from every case); false
 * if some case tells it apart.  *bad is set when the mutant fails the gate
 * (it does not compile: it then neither survives nor counts). */
static bool survives(const struct vat_task *t, const char *m, bool *bad)
{
    struct vat_verdict v = vat_tt_check(t, m);
    *bad = !v.gate_passed;
    return v.gate_passed && v.score == 1.0;
}

static void test_mutants_killed(void **state)
{
    struct drawn *d = *state;
    for (size_t k = 0; k < N_FAMILIES; k++) {
        if (!d[k].f->mutants_least)
            continue;
        size_t total = 0, killed = 0;
        char example[256] = "";
        for (int i = 0; i < N_TASKS; i++) {
            const struct vat_task *t = &d[k].t[i];
            json_t *ms = mutants_of(t->gold);
            assert_true(json_array_size(ms) >= d[k].f->mutants_least);
            size_t j;
            json_t *m;
            json_array_foreach(ms, j, m) {
                bool bad;
                bool s = survives(t, json_string_value(m), &bad);
                if (bad)
                    continue;
                total++;
                if (!s)
                    killed++;
                else if (!example[0])
                    snprintf(example, sizeof example, "%s: %s", t->id, json_string_value(m));
            }
            json_decref(ms);
        }
        print_message("%s: %zu of %zu gold mutants killed%s%s\n", d[k].f->tmpl->name, killed,
                      total, example[0] ? "; a survivor: " : "", example);
        assert_true(total > 0);
        if (killed * 100 < total * 98)
            fail_msg("%s: only %zu of %zu mutants killed (e.g. %s)", d[k].f->tmpl->name, killed,
                     total, example);
    }
}

/* ---- parity with Python's re ---------------------------------------------------- */

static void test_python_agrees(void **state)
{
    struct drawn *d = *state;
    if (system("python3 -c 'import re, json' >/dev/null 2>&1") != 0)
        skip();
    char *dir = vat_test_tmpdir("rxpy");
    char *in = vat_xasprintf("%s/in.json", dir);
    /* one job per (task, gold or trap): the pattern and every case text */
    json_t *jobs = json_array();
    for (size_t k = 0; k < N_FAMILIES; k++)
        for (int i = 0; i < 10; i++) {
            const struct vat_task *t = &d[k].t[i * 6 + 2];
            json_t *lines = json_array();
            size_t j;
            json_t *c;
            json_array_foreach(json_object_get(t->spec, "cases"), j, c)
                json_array_append(lines, json_object_get(c, "text"));
            for (int role = 0; role < 2; role++)
                json_array_append_new(jobs, json_pack("{s:s, s:O}", "p", role ? t->trap : t->gold,
                                                      "lines", lines));
            json_decref(lines);
        }
    assert_int_equal(json_dump_file(jobs, in, 0), 0);
    char *cmd = vat_xasprintf("python3 -c 'import json, re, sys; print(json.dumps([[[m.group(0) "
                              "for m in re.finditer(j[\"p\"], s)] for s in j[\"lines\"]] "
                              "for j in json.load(open(sys.argv[1]))]))' '%s'",
                              in);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    struct vat_buf b = VAT_BUF_INIT;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, p)) > 0)
        vat_buf_putn(&b, chunk, got);
    assert_int_equal(pclose(p), 0);
    json_error_t err;
    json_t *out = json_loads(b.data ? b.data : "", 0, &err);
    assert_non_null(out);
    assert_int_equal(json_array_size(out), json_array_size(jobs));

    size_t job = 0;
    for (size_t k = 0; k < N_FAMILIES; k++)
        for (int i = 0; i < 10; i++) {
            const struct vat_task *t = &d[k].t[i * 6 + 2];
            for (int role = 0; role < 2; role++, job++) {
                const char *pat = role ? t->trap : t->gold;
                const json_t *py = json_array_get(out, job);
                size_t j;
                json_t *c;
                json_array_foreach(json_object_get(t->spec, "cases"), j, c) {
                    const char *text = json_string_value(json_object_get(c, "text"));
                    struct vat_verdict v;
                    json_t *ours = vat_regex_extract(t->spec, pat, strlen(pat), text, &v);
                    assert_non_null(ours);
                    if (!json_equal(ours, json_array_get(py, j)))
                        fail_msg("'%s' on '%s': python and vat disagree", pat, text);
                    /* and for gold, python agrees with the planted expectation */
                    if (role == 0 &&
                        !json_equal(json_object_get(c, "expected"), json_array_get(py, j)))
                        fail_msg("gold '%s' on '%s': python differs from expected", pat, text);
                    json_decref(ours);
                }
            }
        }
    json_decref(out);
    json_decref(jobs);
    vat_buf_release(&b);
    free(cmd);
    free(in);
    vat_test_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest pieces[] = {
        cmocka_unit_test(test_lines_roundtrip),
        cmocka_unit_test(test_plan_keeps_required),
        cmocka_unit_test(test_prompt_inlines_what_fits),
        cmocka_unit_test(test_build_lines_from_layout),
        cmocka_unit_test(test_lines_distinct),
        cmocka_unit_test(test_choose_format_walks_every_notation),
        cmocka_unit_test(test_levelled_classes),
        cmocka_unit_test(test_task_driver_on_a_toy),
        cmocka_unit_test(test_lines_on_their_side),
        cmocka_unit_test(test_every_regex_template_has_a_row),
    };
    const struct CMUnitTest templates[] = {
        cmocka_unit_test(test_sixty_tasks_admit),
        cmocka_unit_test(test_format_space),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_heldout_stream_is_separate),
        cmocka_unit_test(test_trap_fails_on_heldout),
        cmocka_unit_test(test_confirm_catches_tampering),
        cmocka_unit_test(test_mutants_killed),
        cmocka_unit_test(test_python_agrees),
    };
    return cmocka_run_group_tests(pieces, NULL, NULL) +
           cmocka_run_group_tests(templates, setup, teardown);
}

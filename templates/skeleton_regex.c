/* skeleton_regex.c — the copy-me template of the regex family.  It is
 * compiled and held to the contract, the rules and the phrasing tests
 * (tests/test_contract.c, tests/test_rules.c, tests/test_prompt.c,
 * tests/test_wording.c) and to the strength target, but not registered,
 * so it never enters a corpus.
 *
 * To write a new regex template (docs/adding-a-template.md):
 *   1. cp templates/skeleton_regex.c templates/<name>.c
 *      sed -i 's/skeleton_regex/<name>/g' templates/<name>.c
 *      echo 'VAT_TEMPLATE(<name>)' >> templates/registry.def
 *   2. Run `make test` unchanged: the copy passes, because the skeleton does.
 *   3. Evolve it under test: the notation space, the gold and trap
 *      patterns, the plant kinds (targets and decoys) and the frames they
 *      sit in, the prompt; keep `make test` green at every step.
 *   4. Give it a count in seeds.toml ([templates.<name>] count = N) and
 *      its question space a row in docs/scale.md.
 * The family's machinery (lines, plants, fixtures, the checker spec, the
 * examples and answer sections, reference, confirm and the trap's proof)
 * is templates/regexgen.h: this file holds only its question.
 *
 * The skeleton's question: extract the ticket numbers of one drawn
 * notation, a prefix, a hyphen and exactly N digits ("INC-0042"), that
 * stand as tokens of their own.  Its trap: the notation without word
 * boundaries, which also takes numbers glued to letters or digits
 * (XINC-0042, INC-00421, INC-0042b), armed by planted decoys in every
 * line set; the other decoys (too few digits, digits masked by letters,
 * a changed prefix letter, another separator, the prefix in lower case)
 * make every part of the gold pattern matter on the held-out lines, so
 * its mutants die (strength).  Exports vat_tmpl_skeleton_regex. */
#include <stdio.h>
#include <string.h>

#include "prompt.h"
#include "regexgen.h"
#include "template.h"

/* ---- the question space ---------------------------------------------------- */

/* Upper-case prefixes, none a prefix of the {id} filler (REQ, JOB, TX,
 * SES), so a filler never looks like a ticket. */
static const char *const prefixes[] = {"INC", "TCK", "BUG", "CHG", "PRB", "SR",
                                       "HD",  "ISS", "CS",  "OPS", "SUP", "DEV"};
#define N_PREFIXES ((unsigned)VAT_N_OF(prefixes))
#define DIGITS_MIN 3
#define N_DIGITS 6
/* Each notation is one gold pattern: tasks 0..N_FORMATS-1 have distinct
 * golds by construction (vat_rx_choose_format). */
#define N_FORMATS (N_PREFIXES * N_DIGITS)

struct fmt {
    const char *prefix;
    int digits;
};

static struct fmt fmt_from_index(unsigned f)
{
    struct fmt x = {prefixes[f % N_PREFIXES], DIGITS_MIN + (int)(f / N_PREFIXES % N_DIGITS)};
    return x;
}

/* "INC-NNNN", as the prompt and the params state it. */
static void fmt_shape(const struct fmt *x, char out[32])
{
    int k = snprintf(out, 24, "%s-", x->prefix);
    for (int i = 0; i < x->digits; i++)
        out[k++] = 'N';
    out[k] = 0;
}

/* Gold (or, naive, the trap) for the question the params state: gold
 * derives from what the prompt says, never from generator state.  A new
 * string, or NULL with e set. */
static char *build_pattern(const json_t *params, bool naive, struct vat_err *e)
{
    const char *prefix = json_string_value(json_object_get(params, "prefix"));
    json_int_t digits = json_integer_value(json_object_get(params, "digits"));
    bool known = false;
    for (unsigned i = 0; prefix && i < N_PREFIXES; i++)
        known = known || strcmp(prefix, prefixes[i]) == 0;
    if (!known || digits < DIGITS_MIN || digits >= DIGITS_MIN + N_DIGITS) {
        vat_err_set(e, "skeleton_regex: params name no question (prefix '%s', %lld digits)",
                    prefix ? prefix : "", (long long)digits);
        return NULL;
    }
    const char *b = naive ? "" : "\\b";
    return vat_xasprintf("%s%s-\\d{%d}%s", b, prefix, (int)digits, b);
}

/* ---- planting ---------------------------------------------------------------- */

/* What one slot of a line holds: K_TARGET and K_PUNCT are targets, every
 * other kind a decoy the gold pattern must skip. */
enum kind {
    K_TARGET,       /* a valid number: INC-0042                          */
    K_PUNCT,        /* one wrapped in punctuation: (INC-0042).           */
    K_GLUED_BEFORE, /* a letter, digit or underscore before: XINC-0042   */
    K_GLUED_AFTER,  /* a letter or underscore after: INC-0042b           */
    K_LONG,         /* one digit more: INC-00421                         */
    K_SHORT,        /* one digit fewer: INC-004                          */
    K_MASKED,       /* digits masked by letters: INC-00XX                */
    K_NEAR_PREFIX,  /* one prefix letter changed: INX-0042               */
    K_OTHER_SEP,    /* another separator or none: INC_0042, INC 0042     */
    K_LOWER,        /* the prefix in lower case: inc-0042                */
    N_KINDS
};

static const unsigned kind_weights[N_KINDS] = {
    [K_TARGET] = 30,     [K_PUNCT] = 10,    [K_GLUED_BEFORE] = 8, [K_GLUED_AFTER] = 8,
    [K_LONG] = 7,        [K_SHORT] = 7,     [K_MASKED] = 6,       [K_NEAR_PREFIX] = 6,
    [K_OTHER_SEP] = 6,   [K_LOWER] = 5,
};

static void plant(struct vat_rx_builder *b, struct vat_rng *r, const struct vat_rx_slot *slot,
                  const void *ctx)
{
    const struct fmt *x = ctx;
    char pre[8], dig[16], id[48], out[64];
    snprintf(pre, sizeof pre, "%s", x->prefix);
    int nd = x->digits + (slot->kind == K_LONG) - (slot->kind == K_SHORT);
    for (int i = 0; i < nd; i++)
        dig[i] = (char)('0' + vat_rng_below(r, 10));
    dig[nd] = 0;
    char sep = '-';
    switch ((enum kind)slot->kind) {
    case K_MASKED:
        dig[nd - 1] = dig[nd - 2] = 'X';
        break;
    case K_NEAR_PREFIX: {
        /* the n-th near prefix changes letter n of the prefix */
        size_t at = slot->seen % strlen(pre);
        char was = pre[at], now;
        do
            now = (char)('A' + vat_rng_below(r, 26));
        while (now == was);
        pre[at] = now;
        break;
    }
    case K_OTHER_SEP: {
        static const char others[] = {'_', ' ', '.', '/', 0};
        sep = others[vat_rng_below(r, sizeof others)];
        break;
    }
    case K_LOWER:
        for (char *p = pre; *p; p++)
            *p = (char)(*p - 'A' + 'a');
        break;
    default: break;
    }
    if (sep)
        snprintf(id, sizeof id, "%s%c%s", pre, sep, dig);
    else
        snprintf(id, sizeof id, "%s%s", pre, dig);

    switch ((enum kind)slot->kind) {
    case K_TARGET: vat_rx_target(b, id, slot->kind); return;
    case K_PUNCT: {
        static const char *const wraps[][2] = {{"(", ")"}, {"[", "]"}, {"\"", "\","}, {"#", ":"}};
        size_t w = vat_rng_below(r, VAT_N_OF(wraps));
        vat_rx_put(b, wraps[w][0]);
        vat_rx_target(b, id, slot->kind);
        vat_rx_put(b, wraps[w][1]);
        return;
    }
    case K_GLUED_BEFORE: {
        static const char *const glue[] = {"X", "RE", "7", "old_", "sub"};
        snprintf(out, sizeof out, "%s%s", VAT_PICK(r, glue), id);
        vat_rx_decoy(b, out, slot->kind);
        return;
    }
    case K_GLUED_AFTER: {
        static const char *const glue[] = {"b", "X", "_2", "_old", "a"};
        snprintf(out, sizeof out, "%s%s", id, VAT_PICK(r, glue));
        vat_rx_decoy(b, out, slot->kind);
        return;
    }
    default: vat_rx_decoy(b, id, slot->kind); return;
    }
}

/* Help-desk frames by number of slots.  Every slot is bordered by a space,
 * punctuation or a line edge, never a letter, digit or underscore, so a
 * plant touches its neighbours only where it is glued on purpose. */
static const char *const frames0[] = {
    "{user}: the printer on floor 3 is jammed again ({time})",
    "{level} [{svc}] queue drained in {ms}",
    "{user}: thanks, all working now",
};
static const char *const frames1[] = {
    "{user}: any news on {slot}?",
    "{time} {level} {svc}: {slot} reassigned to {user}",
    "closing {slot} after no reply since {time}",
    "{user}: see {slot} for the log files",
    "[{svc}] {slot} escalated to tier 2",
};
static const char *const frames2[] = {
    "{user}: {slot} looks like a duplicate of {slot}",
    "merge {slot} into {slot} ({user}, {time})",
    "{slot} blocks {slot}; waiting on {svc}",
};
static const char *const frames3[] = {
    "{user}: {slot}, {slot} and {slot} all point at {host}",
    "bulk close: {slot};{slot};{slot} by {user}",
};

/* Of 20 lines, 2 hold no slot, 9 one, 6 two and 3 three. */
static const struct vat_rx_layout layout = {
    VAT_RX_FRAMES(frames0, frames1, frames2, frames3),
    .slot_weights = {2, 9, 6, 3},
    .weights = kind_weights,
    .n_kinds = N_KINDS,
    .plant = plant,
};

/* ---- the prompt ---------------------------------------------------------------- */

/* The data sentence of each style (slot 'd'), the natural questions (slot
 * 'q'); the explicit question comes from vat_rx_prompt_question. */
static const char *const d_explicit[] = {
    "[[The lines below are|Below are|You are given|These lines are]] [[help-desk notes and "
    "messages|messages and notes from a help desk|help-desk messages]][[:|; they mention| "
    "with]] [[ticket numbers|ticket references]], [[request ids|other codes]], "
    "[[times|timestamps]] and names.",
};
static const char *const d_natural[] = {
    "[[These are lines from our help-desk queue|Here are some messages from the help desk|"
    "Below: notes and messages from our support queue|I copied these lines from the ticket "
    "system]][[; they mention|, with|: they quote]] ticket numbers [[among|next to|along "
    "with]] [[request ids|other references]] and names.",
};
static const char *const q_natural[] = {
    "Our ticket numbers look like {shape} (each N a digit). Could you write a regex that "
    "pulls every ticket number out of lines like these?",
    "I need a regular expression that picks out our ticket numbers, written {shape} (N a "
    "digit).",
    "Can you give me a regex to extract the ticket numbers? They have the form {shape}, "
    "N being a digit.",
    "Please write a regex that finds every ticket number in such lines; one is {shape} with "
    "each N a digit.",
    "[[For the ticket linker|For our dashboard|For the weekly report]] I need a regex for "
    "ticket numbers, written {shape} (N a digit).",
};
/* Phrases the explicit rules use to name the trap: never in a natural prompt. */
static const char *const giveaways[] = {
    "stands on its own", "not extracted at all", "right before", "right after",
    "word boundar", "underscore", NULL,
};
/* The decoys, which a natural prompt never describes. */
static const char *const defects[] = {"masked", "too many digits", "glued", "typo", NULL};
static const char *const answer_columns[] = {NULL};
static const char *const states_shape[] = {"{}", NULL};
static const struct vat_convention conventions[] = {
    {"shape", states_shape},
    {NULL, NULL},
};

/* The question and its rules, in the task's style. */
static void prompt_rules(struct vat_buf *b, struct vat_task *t, const struct fmt *x)
{
    char shape[32], d[12], d0[12], d1[12];
    fmt_shape(x, shape);
    if (vat_prompt_natural(t)) {
        const char *kv[] = {"shape", shape, NULL};
        VAT_RX_PROMPT_ASK(b, t, d_natural, q_natural, kv);
        return;
    }
    char tail[64];
    snprintf(tail, sizeof tail, "written %s (each N a digit)", shape);
    VAT_RX_PROMPT_QUESTION(b, t, d_explicit, "ticket number", "ticket numbers", tail);
    snprintf(d, sizeof d, "%d", x->digits);
    snprintf(d0, sizeof d0, "%d", x->digits - 1);
    snprintf(d1, sizeof d1, "%d", x->digits + 1);
    const char *kv[] = {"p", x->prefix, "d", d, "d0", d0, "d1", d1, NULL};
    vat_prompt_say(b, t, 'r',
                   "- [[it starts with|it begins with|first comes]] the prefix \"{p}\" in "
                   "capitals, then a hyphen ([[another separator or none does not count|no "
                   "other separator counts]]);\n"
                   "- [[then come|next come|after that come]] exactly {d} digits ([[{d0} or {d1} "
                   "digits do not count, nor do digits masked by letters|not {d0} or {d1}, and "
                   "no digit masked by a letter]]);\n"
                   "- [[it stands on its own|it is a token of its own]]: the characters right "
                   "before the prefix and right after the last digit, [[where there is one|if "
                   "any]], are not a letter, a digit or an underscore.\n"
                   "[[A number that breaks any of these rules|Any number breaking a rule "
                   "above]] is not extracted at all, not even in part.\n\n",
                   kv);
}

/* ---- the template callbacks ------------------------------------------------------ */

static int generate(struct vat_task *t, struct vat_rng *rng, struct vat_err *e)
{
    struct fmt x = fmt_from_index(vat_rx_choose_format(t, rng, N_FORMATS));
    struct vat_rx_draw d;
    if (vat_rx_task_begin(t, rng, &d, e) != 0)
        return -1;
    /* Required plants: the examples show the rule the trap breaks and the
     * digit count; the held-out lines hold every kind, and one near prefix
     * per prefix letter, so each part of gold is needed there alone. */
    vat_rx_require(&d.ex, K_TARGET);
    vat_rx_require(&d.ex, K_TARGET);
    vat_rx_require(&d.ex, K_GLUED_BEFORE);
    vat_rx_require(&d.ex, K_LONG);
    vat_rx_require(&d.ex, K_SHORT);
    for (int k = 0; k < 3; k++)
        vat_rx_require(&d.ho, K_TARGET);
    for (int k = K_PUNCT; k < N_KINDS; k++)
        if (k != K_NEAR_PREFIX)
            vat_rx_require(&d.ho, k);
    for (size_t k = 0; k < strlen(x.prefix); k++)
        vat_rx_require(&d.ho, K_NEAR_PREFIX);
    if (vat_rx_task_plant(t, rng, &d, &layout, &x, e) != 0)
        return -1;

    char shape[32];
    fmt_shape(&x, shape);
    t->params = json_object();
    json_object_set_new(t->params, "shape", json_string(shape));
    json_object_set_new(t->params, "prefix", json_string(x.prefix));
    json_object_set_new(t->params, "digits", json_integer(x.digits));

    struct vat_buf b = VAT_BUF_INIT;
    prompt_rules(&b, t, &x);
    vat_rx_task_prompt(t, &b, "messages");
    return 0;
}

static int reference(struct vat_task *t, struct vat_err *e)
{
    return vat_rx_task_reference(t, build_pattern, e);
}

static int trap_answer(struct vat_task *t, struct vat_err *e)
{
    return vat_rx_task_trap(t, build_pattern, e);
}

const struct vat_template vat_tmpl_skeleton_regex = {
    .version = VAT_TEMPLATE_V1,
    .name = "skeleton_regex",
    .family = "regex",
    .answer_kind = "regex",
    .trap = "The notation without word boundaries, such as INC-\\d{4}, which also takes "
            "numbers glued to letters or digits (XINC-0042, INC-00421, INC-0042b).",
    .summary = "Extract the standalone ticket numbers of one drawn notation (prefix, hyphen, "
               "N digits) from help-desk messages.",
    .params = vat_rx_task_params,
    .default_count = 0, /* no task unless seeds.toml gives [templates.<name>] count */
    .generate = generate,
    .reference = reference,
    .confirm = vat_rx_task_confirm,
    .trap_answer = trap_answer,
    .check = vat_check_task,
    .giveaways = giveaways,
    .conventions = conventions,
    .defects = defects,
    .answer_columns = answer_columns,
};

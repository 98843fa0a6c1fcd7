/* abstain.c — the abstain checker for probe tasks: the answer either is
 * the abstention value the prompt defines (right only when the task is
 * unanswerable) or a value judged as the value checker judges it (right
 * only when the task is answerable).  Exports vat_check_abstain and its
 * prepared form (vat_abstain_prepare, vat_check_abstain_prepared). */
#include <stdlib.h>
#include <string.h>

#include "value_internal.h"
#include "verifiers.h"

/* Room kept for the abstention note after a gate reason. */
#define NOTE_ROOM 72

/* JSON equality with numbers compared by value: answers are parsed with
 * integers as reals, while the spec may hold integers. */
static bool json_same(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return vat_close(json_number_value(a), json_number_value(b), 0, 0);
    if (json_typeof(a) != json_typeof(b))
        return false;
    switch (json_typeof(a)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *av;
        if (json_object_size(a) != json_object_size(b))
            return false;
        json_object_foreach((json_t *)a, k, av) {
            const json_t *bv = json_object_get(b, k);
            if (!bv || !json_same(av, bv))
                return false;
        }
        return true;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(a);
        if (n != json_array_size(b))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!json_same(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    default:
        return true; /* true, false, null: the type says it all */
    }
}

/* Appends the abstention's compact JSON text, or a description when it
 * is too long to quote. */
static void put_abstention(struct vat_reason *r, const json_t *abst)
{
    char buf[64];
    size_t n = json_dumpb(abst, buf, sizeof buf, JSON_COMPACT | JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
    if (n == 0 || n > sizeof buf)
        vat_reason_puts(r, "the abstention value");
    else
        vat_reason_text(r, buf, n, sizeof buf, false);
}

/* A gate failure keeps its code, and says abstaining was also allowed. */
static struct vat_verdict with_abstention_note(struct vat_verdict v, const json_t *abst)
{
    struct vat_reason r = {.n = 0};
    r.s[0] = '\0';
    vat_reason_puts(&r, v.reason);
    vat_reason_cut(&r, sizeof r.s - 1 - NOTE_ROOM);
    vat_reason_puts(&r, "; or abstain with ");
    put_abstention(&r, abst);
    return vat_verdict_make(v.gate_passed, v.score, v.code, "%s", r.s);
}

struct vat_verdict vat_check_abstain(const json_t *spec, const char *answer, size_t len)
{
    const json_t *answerable = json_object_get(spec, "answerable");
    const json_t *abst = json_object_get(spec, "abstention");
    struct vat_value_spec vs;
    struct vat_verdict v;
    if (!json_is_boolean(answerable))
        return vat_verdict_make(false, 0, VAT_INTERNAL,
                                "the checker spec lacks a boolean 'answerable'");
    if (!abst)
        return vat_verdict_make(false, 0, VAT_INTERNAL, "the checker spec lacks 'abstention'");
    bool can = json_is_true(answerable);
    /* an unanswerable task has nothing to score, and may leave the shape
     * out, in which case any JSON value that is not the abstention counts
     * as an answer */
    if (vat_value_spec_read(spec, can, !can, &vs, &v) < 0)
        return v;
    json_t *a = vat_value_parse(&vs, answer, len, &v);
    if (!a)
        return with_abstention_note(v, abst);
    if (json_same(a, abst)) {
        v = can ? vat_verdict_make(true, 0, VAT_ABSTAINED, "abstained, but the task is answerable")
                : vat_verdict_make(true, 1, VAT_OK, "abstained on an unanswerable task");
    } else if (!vat_value_gate(&vs, a, &v)) {
        v = with_abstention_note(v, abst);
    } else if (!can) {
        struct vat_reason r = {.n = 0};
        r.s[0] = '\0';
        vat_reason_puts(&r, "answered, but the task is unanswerable; expected ");
        put_abstention(&r, abst);
        v = vat_verdict_make(true, 0, VAT_NOT_ABSTAINED, "%s", r.s);
    } else {
        v = vat_value_score(&vs, a);
    }
    json_decref(a);
    return v;
}

/* The abstention's text and the full check's verdict on it: the same
 * bytes parse to the same value, and whitespace around a JSON text does
 * not change it, so the verdict is the full check's for such answers. */
struct vat_abstain_prep {
    const json_t *spec;
    char *text; /* NULL: no shortcut */
    size_t len;
    struct vat_verdict v;
    /* answerable tasks whose abstention is not of the answer's shape: an
     * answer the value checker's fast path accepts has that shape, so it
     * is not the abstention, and the full check scores it as the value
     * checker does (ok).  NULL: no such shortcut. */
    struct vat_value_prep *value;
};

struct vat_abstain_prep *vat_abstain_prepare(const json_t *spec)
{
    struct vat_abstain_prep *p = vat_xcalloc(1, sizeof *p);
    p->spec = spec;
    const json_t *abst = json_object_get(spec, "abstention");
    char *t = abst ? json_dumps(abst, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    if (t && strlen(t) <= VAT_MAX_ANSWER_BYTES) {
        p->text = t;
        p->len = strlen(t);
        p->v = vat_check_abstain(spec, t, p->len);
    } else {
        free(t);
    }
    if (json_is_true(json_object_get(spec, "answerable")) && abst) {
        p->value = vat_value_prepare(spec);
        if (vat_value_prep_gates(p->value, abst)) {
            vat_value_prep_free(p->value);
            p->value = NULL;
        }
    }
    return p;
}

void vat_abstain_prep_free(struct vat_abstain_prep *p)
{
    if (!p)
        return;
    free(p->text);
    vat_value_prep_free(p->value);
    free(p);
}

static bool json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

struct vat_verdict vat_check_abstain_prepared(const struct vat_abstain_prep *p, const char *answer,
                                              size_t len)
{
    if (p->text && answer && len <= VAT_MAX_ANSWER_BYTES) {
        const char *s = answer, *e = answer + len;
        while (s < e && json_space(*s))
            s++;
        while (e > s && json_space(e[-1]))
            e--;
        if ((size_t)(e - s) == p->len && memcmp(s, p->text, p->len) == 0)
            return p->v;
    }
    if (p->value && vat_value_prep_accepts(p->value, answer, len))
        return vat_verdict_make(true, 1, VAT_OK, "matches");
    return vat_check_abstain(p->spec, answer, len);
}

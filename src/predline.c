/* predline.c — the predictions-line reader of `vat score` (see
 * predline.h).  A recursive walk of the JSON grammar over the line records
 * where the top-level members' values lie; only the task id, a string
 * answer and the sample number are decoded (by jansson, on their own
 * bytes: UTF-8 checked, \u0000 refused). */
#include "predline.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "vat.h"

struct scan {
    const char *s;
    size_t n, i;
    const char *why; /* the first grammar error */
};

static void skip_ws(struct scan *sc)
{
    while (sc->i < sc->n && strchr(" \t\r\n", sc->s[sc->i]) && sc->s[sc->i])
        sc->i++;
}

static int bad(struct scan *sc, const char *why)
{
    if (!sc->why)
        sc->why = why;
    return -1;
}

static int scan_string(struct scan *sc)
{
    sc->i++; /* the opening quote */
    while (sc->i < sc->n) {
        unsigned char c = (unsigned char)sc->s[sc->i++];
        if (c == '"')
            return 0;
        if (c < 0x20)
            return bad(sc, "a control byte inside a string");
        if (c == '\\') {
            if (sc->i >= sc->n)
                break;
            char e = sc->s[sc->i++];
            if (e == 'u') {
                for (int k = 0; k < 4; k++, sc->i++)
                    if (sc->i >= sc->n || !strchr("0123456789abcdefABCDEF", sc->s[sc->i]) ||
                        !sc->s[sc->i])
                        return bad(sc, "a bad \\u escape");
            } else if (!e || !strchr("\"\\/bfnrt", e)) {
                return bad(sc, "a bad escape");
            }
        }
    }
    return bad(sc, "an unterminated string");
}

static bool digit(const struct scan *sc)
{
    return sc->i < sc->n && sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9';
}

static int scan_number(struct scan *sc)
{
    if (sc->s[sc->i] == '-')
        sc->i++;
    if (!digit(sc))
        return bad(sc, "a bad number");
    if (sc->s[sc->i] == '0')
        sc->i++;
    else
        while (digit(sc))
            sc->i++;
    if (sc->i < sc->n && sc->s[sc->i] == '.') {
        sc->i++;
        if (!digit(sc))
            return bad(sc, "a bad number");
        while (digit(sc))
            sc->i++;
    }
    if (sc->i < sc->n && (sc->s[sc->i] == 'e' || sc->s[sc->i] == 'E')) {
        sc->i++;
        if (sc->i < sc->n && (sc->s[sc->i] == '+' || sc->s[sc->i] == '-'))
            sc->i++;
        if (!digit(sc))
            return bad(sc, "a bad number");
        while (digit(sc))
            sc->i++;
    }
    return 0;
}

static int scan_value(struct scan *sc, int depth);

/* Scans an object or array whose opening byte is at sc->i. */
static int scan_compound(struct scan *sc, int depth)
{
    char close = sc->s[sc->i] == '{' ? '}' : ']';
    if (depth >= VAT_PRED_MAX_DEPTH)
        return bad(sc, "nesting deeper than the reader allows");
    sc->i++;
    skip_ws(sc);
    if (sc->i < sc->n && sc->s[sc->i] == close) {
        sc->i++;
        return 0;
    }
    for (;;) {
        if (close == '}') {
            if (sc->i >= sc->n || sc->s[sc->i] != '"')
                return bad(sc, "an object key that is not a string");
            if (scan_string(sc) != 0)
                return -1;
            skip_ws(sc);
            if (sc->i >= sc->n || sc->s[sc->i] != ':')
                return bad(sc, "a missing ':'");
            sc->i++;
        }
        if (scan_value(sc, depth + 1) != 0)
            return -1;
        skip_ws(sc);
        if (sc->i < sc->n && sc->s[sc->i] == ',') {
            sc->i++;
            skip_ws(sc);
            continue;
        }
        if (sc->i < sc->n && sc->s[sc->i] == close) {
            sc->i++;
            return 0;
        }
        return bad(sc, close == '}' ? "an unterminated object" : "an unterminated array");
    }
}

static int scan_value(struct scan *sc, int depth)
{
    skip_ws(sc);
    if (sc->i >= sc->n)
        return bad(sc, "a missing value");
    char c = sc->s[sc->i];
    if (c == '"')
        return scan_string(sc);
    if (c == '{' || c == '[')
        return scan_compound(sc, depth);
    if (c == '-' || (c >= '0' && c <= '9'))
        return scan_number(sc);
    static const char *const lits[] = {"true", "false", "null"};
    for (size_t k = 0; k < 3; k++) {
        size_t l = strlen(lits[k]);
        if (sc->n - sc->i >= l && memcmp(sc->s + sc->i, lits[k], l) == 0) {
            sc->i += l;
            return 0;
        }
    }
    return bad(sc, "an invalid token");
}

/* Decodes a JSON string's bytes [a, b) (quotes included); NULL when it is
 * not valid UTF-8 or holds \u0000 (then *nul says which). */
static json_t *decode_string(const char *a, size_t len)
{
    return json_loadb(a, len, JSON_DECODE_ANY, NULL);
}

static int fail(struct vat_pred *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct vat_pred *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->reason, sizeof p->reason, fmt, ap);
    va_end(ap);
    p->code = VAT_PARSE;
    return -1;
}

int vat_pred_read(const char *line, size_t len, struct vat_pred *p)
{
    memset(p, 0, sizeof *p);
    p->sample = -1;
    struct scan sc = {line, len, 0, NULL};
    skip_ws(&sc);
    if (sc.i >= len || line[sc.i] != '{') {
        if (scan_value(&sc, 0) == 0)
            return fail(p, "the line is not a JSON object");
        return fail(p, "the line is not JSON: %s", sc.why);
    }
    /* the members, walked here so their values' places are known */
    const char *id_at = NULL, *ans_at = NULL, *sample_at = NULL;
    size_t id_len = 0, ans_len = 0, sample_len = 0;
    int n_id = 0, n_ans = 0, n_sample = 0;
    bool in_answer = false, ok = false;
    sc.i++;
    skip_ws(&sc);
    if (sc.i < len && line[sc.i] == '}') {
        sc.i++;
        ok = true;
    }
    while (!ok) {
        if (sc.i >= len || line[sc.i] != '"') {
            bad(&sc, "an object key that is not a string");
            break;
        }
        size_t k0 = sc.i;
        if (scan_string(&sc) != 0)
            break;
        size_t k1 = sc.i;
        skip_ws(&sc);
        if (sc.i >= len || line[sc.i] != ':') {
            bad(&sc, "a missing ':'");
            break;
        }
        sc.i++;
        skip_ws(&sc);
        json_t *key = decode_string(line + k0, k1 - k0);
        const char *ks = json_string_value(key);
        int which = !ks ? 0
                    : strcmp(ks, "task_id") == 0 ? 1
                    : strcmp(ks, "answer") == 0  ? 2
                    : strcmp(ks, "sample") == 0  ? 3
                                                 : 0;
        json_decref(key);
        size_t v0 = sc.i;
        in_answer = which == 2;
        if (scan_value(&sc, 1) != 0)
            break;
        in_answer = false;
        if (which == 1) {
            id_at = line + v0, id_len = sc.i - v0, n_id++;
        } else if (which == 2) {
            ans_at = line + v0, ans_len = sc.i - v0, n_ans++;
        } else if (which == 3) {
            sample_at = line + v0, sample_len = sc.i - v0, n_sample++;
        }
        skip_ws(&sc);
        if (sc.i < len && line[sc.i] == ',') {
            sc.i++;
            skip_ws(&sc);
            continue;
        }
        if (sc.i < len && line[sc.i] == '}') {
            sc.i++;
            skip_ws(&sc);
            if (sc.i < len)
                bad(&sc, "bytes after the object");
            else
                ok = true;
            break;
        }
        bad(&sc, "an unterminated object");
        break;
    }
    /* The task id: a string member given once, valid UTF-8, no NUL.  It
     * counts when the line is whole or broke only inside the answer. */
    if ((ok || in_answer) && n_id == 1 && id_at[0] == '"') {
        json_t *j = decode_string(id_at, id_len);
        const char *s = json_string_value(j);
        if (s && !memchr(s, 0, json_string_length(j)))
            p->task_id = vat_xstrndup(s, json_string_length(j));
        json_decref(j);
    }
    if (!ok && !in_answer)
        return fail(p, "the line is not JSON: %s", sc.why ? sc.why : "a syntax error");
    if (!p->task_id)
        return fail(p, "the line lacks a string 'task_id'");
    if (!ok)
        return fail(p, "the answer cannot be read: %s", sc.why ? sc.why : "a syntax error");
    if (n_ans != 1)
        return fail(p, n_ans ? "the line gives 'answer' twice" : "the line lacks 'answer'");
    if (n_sample > 1)
        return fail(p, "the line gives 'sample' twice");
    if (n_sample) {
        char buf[24];
        char *end;
        if (sample_len >= sizeof buf || sample_at[0] == '-' || sample_at[0] == '"')
            return fail(p, "'sample' must be an integer from 0 to 1000000");
        memcpy(buf, sample_at, sample_len);
        buf[sample_len] = 0;
        errno = 0;
        long v = strtol(buf, &end, 10);
        if (errno || *end || v < 0 || v > 1000000)
            return fail(p, "'sample' must be an integer from 0 to 1000000");
        p->sample = v;
    }
    if (ans_at[0] == '"') {
        json_t *j = decode_string(ans_at, ans_len);
        if (!json_is_string(j)) {
            json_decref(j);
            return fail(p, "the answer is not a valid string (bad UTF-8 or \\u0000)");
        }
        p->answer_len = json_string_length(j);
        /* A NUL inside the string must reach the checker, not end it. */
        p->answer = vat_xmalloc(p->answer_len + 1);
        memcpy(p->answer, json_string_value(j), p->answer_len);
        p->answer[p->answer_len] = 0;
        json_decref(j);
    } else {
        /* any other JSON value stands for its own JSON text */
        p->answer = vat_xstrndup(ans_at, ans_len);
        p->answer_len = ans_len;
    }
    return 0;
}

void vat_pred_release(struct vat_pred *p)
{
    free(p->task_id);
    free(p->answer);
    p->task_id = p->answer = NULL;
}

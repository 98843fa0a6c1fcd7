/* functions.c — the built-ins whose one call the length limit does not
 * bound (charged to the step budget or replaced), trim with a character
 * set linear in its input, and the date()/strftime() fast path on the
 * dates fixtures hold.
 * Part of the SQL checker: what it rests on is verifiers/sql/README.md. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include "sql_internal.h"

/* ---- built-ins whose one call is not bounded by the length limit ------------ */

const char *const aux_names[AUX_N] = {"printf", "instr",      "replace",  "like",
                                             "glob",   "json_patch", "strftime", "date"};

struct sandbox;
/* The width or precision a printf conversion reads from its digits, as
 * SQLite reads them: 32-bit unsigned arithmetic that wraps, then the top
 * bit dropped. */
static long long printf_digits(const unsigned char **z)
{
    uint32_t v = 0;
    while (**z >= '0' && **z <= '9') {
        v = v * 10u + (uint32_t)(**z - '0');
        ++*z;
    }
    return (long long)(v & 0x7fffffffu);
}

/* The width or precision SQLite's printf reads for a '*': the argument as
 * a 64-bit integer cast to int, negated when negative (INT_MIN reads as
 * nothing); a missing argument reads as 0. */
static long long printf_star(sqlite3_value **argv, int argc, int *next)
{
    if (*next >= argc)
        return 0;
    uint32_t low = (uint32_t)(sqlite3_value_int64(argv[(*next)++]) & 0xffffffff);
    int64_t v = low >= 0x80000000u ? (int64_t)low - 0x100000000LL : (int64_t)low;
    if (v == INT32_MIN)
        return 0;
    return v < 0 ? -v : v;
}

/* Whether every width and precision of the format stays within max, read
 * as SQLite 3.40's printf reads them (flags, width or '*', '.' and
 * precision or '*', length modifiers, the conversion). */
bool printf_bounded(const unsigned char *f, sqlite3_value **argv, int argc, long long max)
{
    int next = 1; /* argv[0] is the format */
    while (f && *f) {
        if (*f++ != '%')
            continue;
        while (*f && strchr("-+ #!0,", *f))
            f++;
        long long width = 0, precision = -1;
        if (*f == '*') {
            width = printf_star(argv, argc, &next);
            f++;
        } else {
            width = printf_digits(&f);
        }
        if (*f == '.') {
            f++;
            if (*f == '*') {
                precision = printf_star(argv, argc, &next);
                f++;
            } else {
                precision = printf_digits(&f);
            }
        }
        while (*f == 'l')
            f++;
        unsigned char conv = *f;
        if (!conv)
            break;
        f++;
        bool string_conv = conv && strchr("sqQwz", conv);
        if (width > max || (!string_conv && precision > max))
            return false;
        if (conv != '%' && conv != 'n')
            next++;
    }
    return true;
}

/* ---- trim with a character set, linear in its input ------------------------- */

/* SQLite's trim(X,Y) tries every character of Y at every position of X,
 * which is quadratic in the length limit.  This is the same function
 * (same splitting of Y, same first-match order, same result) with Y's
 * characters deduplicated and sorted for lookup.  A character longer than
 * four bytes cannot come from valid UTF-8; sets holding one fall back to
 * SQLite's loop under a cost cap. */
struct trim_char {
    unsigned char b[4];
    unsigned len;
    size_t idx;
};

static int trim_char_cmp(const void *pa, const void *pb)
{
    const struct trim_char *a = pa, *b = pb;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    int c = memcmp(a->b, b->b, a->len);
    if (c)
        return c;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The lowest set index of a character equal to s[0..len), or SIZE_MAX. */
static size_t trim_find(const struct trim_char *set, size_t n, const unsigned char *s,
                        unsigned len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = set[mid].len != len ? (set[mid].len < len ? -1 : 1)
                                    : memcmp(set[mid].b, s, len);
        if (c < 0)
            lo = mid + 1;
        else if (c > 0)
            hi = mid;
        else
            return set[mid].idx;
    }
    return SIZE_MAX;
}

/* The set, sorted, with the lowest index of each one-byte character at
 * hand and which lengths it holds: a character of the input is then one
 * table lookup, plus a search per other length the set has. */
struct trim_set {
    const struct trim_char *set;
    size_t m;
    size_t one[256];
    bool has[5];
};

/* How many bytes the first matching character of the set covers at the
 * front (back=false) or back of in[0..n), or 0 when none matches. */
static unsigned trim_match(const struct trim_set *ts, const unsigned char *in, size_t n,
                           bool back)
{
    size_t best = ts->one[back ? in[n - 1] : in[0]];
    unsigned best_len = best == SIZE_MAX ? 0 : 1;
    for (unsigned k = 2; k <= 4 && k <= n; k++) {
        if (!ts->has[k])
            continue;
        size_t idx = trim_find(ts->set, ts->m, back ? in + n - k : in, k);
        if (idx < best) {
            best = idx;
            best_len = k;
        }
    }
    return best_len;
}

void sandbox_trim(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    int flags = (int)(intptr_t)sqlite3_user_data(ctx); /* 1 left, 2 right, 3 both */
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
        return;
    const unsigned char *in = sqlite3_value_text(argv[0]);
    if (!in)
        return;
    size_t n = (size_t)sqlite3_value_bytes(argv[0]);
    const unsigned char *cs = sqlite3_value_text(argv[1]);
    if (!cs)
        return;
    size_t nchar = 0;
    bool long_char = false;
    for (const unsigned char *z = cs; *z; nchar++) { /* SQLITE_SKIP_UTF8 */
        const unsigned char *start = z;
        if (*(z++) >= 0xc0)
            while ((*z & 0xc0) == 0x80)
                z++;
        if (z - start > 4)
            long_char = true;
    }
    if (nchar > 0 && long_char) {
        if ((double)n * (double)nchar > 2e6) {
            sqlite3_result_error_toobig(ctx);
            return;
        }
        const unsigned char **ch = vat_xcalloc(nchar, sizeof *ch);
        size_t *len = vat_xcalloc(nchar, sizeof *len);
        const unsigned char *z = cs;
        for (size_t i = 0; i < nchar; i++) {
            ch[i] = z;
            if (*(z++) >= 0xc0)
                while ((*z & 0xc0) == 0x80)
                    z++;
            len[i] = (size_t)(z - ch[i]);
        }
        for (int side = 1; side <= 2; side++) {
            while ((flags & side) && n > 0) {
                size_t i;
                for (i = 0; i < nchar; i++)
                    if (len[i] <= n &&
                        memcmp(side == 1 ? in : in + n - len[i], ch[i], len[i]) == 0)
                        break;
                if (i >= nchar)
                    break;
                if (side == 1)
                    in += len[i];
                n -= len[i];
            }
        }
        free(ch);
        free(len);
    } else if (nchar > 0) {
        struct trim_char *set = vat_xcalloc(nchar, sizeof *set);
        const unsigned char *z = cs;
        for (size_t i = 0; i < nchar; i++) {
            const unsigned char *start = z;
            if (*(z++) >= 0xc0)
                while ((*z & 0xc0) == 0x80)
                    z++;
            set[i].len = (unsigned)(z - start);
            memcpy(set[i].b, start, set[i].len);
            set[i].idx = i;
        }
        qsort(set, nchar, sizeof *set, trim_char_cmp);
        size_t m = 0; /* keep the first (lowest index) of equal characters */
        for (size_t i = 0; i < nchar; i++)
            if (m == 0 || set[m - 1].len != set[i].len ||
                memcmp(set[m - 1].b, set[i].b, set[i].len) != 0)
                set[m++] = set[i];
        struct trim_set tset, *ts = &tset;
        ts->set = set;
        ts->m = m;
        memset(ts->has, 0, sizeof ts->has);
        for (size_t c = 0; c < 256; c++)
            ts->one[c] = SIZE_MAX;
        for (size_t i = 0; i < m; i++) {
            ts->has[set[i].len] = true;
            if (set[i].len == 1)
                ts->one[set[i].b[0]] = set[i].idx;
        }
        unsigned k;
        if (flags & 1)
            while (n > 0 && (k = trim_match(ts, in, n, false)) > 0) {
                in += k;
                n -= k;
            }
        if (flags & 2)
            while (n > 0 && (k = trim_match(ts, in, n, true)) > 0)
                n -= k;
        free(set);
    }
    sqlite3_result_text(ctx, (const char *)in, (int)n, SQLITE_TRANSIENT);
}

/* ---- date() and strftime() on the dates fixtures hold ---------------------------- *
 * SQLite's strftime and date parse their time value into a Julian day and
 * format it back, about 1,600 instructions a call; the gold queries and
 * their mutants call them on every row (a tenth of a SQL task's build).
 * The sandbox answers the one case fixtures hold, a text value that is
 * exactly 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS' naming a real day (year
 * 1000 to 9999, the month's own days, leap years Gregorian) and time
 * (hours 00 to 23, minutes and seconds 00 to 59), by copying its fields
 * (the real-day rule is stricter than SQLite 3.40 needs, which writes
 * '2023-02-31' back as given, so the case holds whichever way a SQLite
 * treats an impossible day):
 * date(T), and strftime(F, T) when F holds only literal characters and
 * %Y %m %d %H %M %S %% (at most 64 bytes).  On such a value SQLite's
 * parse and format give back those very fields, so the result is SQLite's
 * byte for byte; every other call (other arguments, formats or values: a
 * day SQLite would roll over, a 'T', a fraction, a modifier, 'now') is
 * SQLite's own function run on the sandbox's second connection, as the
 * bounded built-ins are (aux_call).  test_dates_match_sqlite compares
 * both with SQLite's on every day of 14 years and the days around them,
 * with times and formats in and out of the case. */
static int two(const char *s)
{
    return (s[0] - '0') * 10 + (s[1] - '0');
}

/* The 8 bytes at s as a little-endian word (one load where the machine
 * is little-endian). */
static uint64_t le64(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    return (uint64_t)u[0] | (uint64_t)u[1] << 8 | (uint64_t)u[2] << 16 | (uint64_t)u[3] << 24 |
           (uint64_t)u[4] << 32 | (uint64_t)u[5] << 40 | (uint64_t)u[6] << 48 |
           (uint64_t)u[7] << 56;
}

/* Whether the 8 bytes at s have a shape, eight bytes at once: pat holds
 * '0' where a digit goes and the character itself elsewhere, add 0x76
 * where a digit goes and 0x7f elsewhere.  A byte xor its pattern is 0-9
 * exactly for a digit and 0 exactly for the character; adding add sets
 * its high bit past that (no carry: a byte with its own high bit set
 * fails first). */
static bool shape8(const char *s, uint64_t pat, uint64_t add)
{
    uint64_t w = le64(s) ^ pat;
    return (((w + add) | w) & 0x8080808080808080u) == 0;
}

static bool digit(char c)
{
    return (unsigned char)(c - '0') <= 9;
}

/* The text of v when it is a plain date (10 bytes) or date and time (19)
 * naming a real day and time, its length in *n; NULL when not.  Called
 * per row by date() and strftime(): the shape is checked a word at a
 * time. */
static const char *plain_datetime(sqlite3_value *v, int *n)
{
    if (sqlite3_value_type(v) != SQLITE_TEXT)
        return NULL;
    const char *s = (const char *)sqlite3_value_text(v);
    int len = sqlite3_value_bytes(v);
    /* "YYYY-MM-" and " HH:MM:S" as pattern and addend, byte 0 lowest */
    if (!s || (len != 10 && len != 19) ||
        !shape8(s, 0x2D30302D30303030u, 0x7F76767F76767676u) || !digit(s[8]) || !digit(s[9]))
        return NULL;
    if (len == 19 && (!shape8(s + 10, 0x303A30303A303020u, 0x767F76767F76767Fu) ||
                      !digit(s[18])))
        return NULL;
    int m = two(s + 5), d = two(s + 8);
    if (s[0] == '0' || m < 1 || m > 12 || d < 1) /* the year from 1000 */
        return NULL;
    if (d > 28) {
        static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        int y = two(s) * 100 + two(s + 2);
        bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        if (d > mdays[m - 1] + (m == 2 && leap))
            return NULL;
    }
    if (len == 19 && (two(s + 11) > 23 || two(s + 14) > 59 || two(s + 17) > 59))
        return NULL;
    *n = len;
    return s;
}

/* A strftime format read once per statement, kept as the call's auxiliary
 * data while the format is the same constant: the output with its literal
 * characters in place, and for each conversion where its digits go in the
 * output and where they come from in the value (the value's own bytes:
 * 'YYYY-MM-DD HH:MM:SS' holds each field where strftime would write it
 * from the parsed time; the year, at 0, is the one four digits wide).
 * fast is false for a format outside the case. */
#define FMT_MAX 64
struct fmt_plan {
    bool fast;
    uint8_t n, nconv;
    uint8_t at[FMT_MAX / 2], from[FMT_MAX / 2];
    char out[2 * FMT_MAX];
};

/* Reads the format value fmt into *p: fast only for text of at most
 * FMT_MAX bytes holding literal characters and %Y %m %d %H %M %S %%. */
static void fmt_plan_make(sqlite3_value *fmt, struct fmt_plan *p)
{
    static const char conv[] = "YmdHMS";
    static const uint8_t from[6] = {0, 5, 8, 11, 14, 17};
    p->fast = false;
    p->n = p->nconv = 0;
    const char *f = sqlite3_value_type(fmt) == SQLITE_TEXT && sqlite3_value_bytes(fmt) <= FMT_MAX
                        ? (const char *)sqlite3_value_text(fmt)
                        : NULL;
    if (!f)
        return;
    for (; *f; f++) {
        if (*f != '%') {
            p->out[p->n++] = *f;
            continue;
        }
        const char *c = *++f ? strchr(conv, *f) : NULL;
        if (*f == '%') {
            p->out[p->n++] = '%';
        } else if (c) {
            size_t i = (size_t)(c - conv);
            p->at[p->nconv] = p->n;
            p->from[p->nconv++] = from[i];
            p->n += i == 0 ? 4 : 2;
        } else {
            return; /* another conversion, or a lone '%' at the end */
        }
    }
    p->fast = true;
}

static void date_call(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    int n;
    const char *s = argc == 1 ? plain_datetime(argv[0], &n) : NULL;
    if (s)
        sqlite3_result_text(ctx, s, 10, SQLITE_TRANSIENT); /* its %Y-%m-%d */
    else
        aux_call(ctx, argc, argv);
}

static void strftime_call(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    if (argc != 2) {
        aux_call(ctx, argc, argv);
        return;
    }
    struct fmt_plan *kept = sqlite3_get_auxdata(ctx, 0), made;
    const struct fmt_plan *p = kept;
    if (!p) {
        fmt_plan_make(argv[0], &made);
        p = &made;
    }
    int n = 0;
    const char *s = p->fast ? plain_datetime(argv[1], &n) : NULL;
    if (s) {
        char out[2 * FMT_MAX];
        memcpy(out, p->out, p->n);
        for (uint8_t i = 0; i < p->nconv; i++) {
            if (p->from[i] >= 10 && n == 10)
                memcpy(out + p->at[i], "00", 2); /* a date alone is at midnight */
            else
                memcpy(out + p->at[i], s + p->from[i], p->from[i] ? 2 : 4);
        }
        sqlite3_result_text(ctx, out, p->n, SQLITE_TRANSIENT);
    } else {
        aux_call(ctx, argc, argv);
    }
    /* Kept for the next row (SQLite keeps it only while the format is a
     * constant; it may free it at once, so it is handed over last). */
    if (!kept) {
        struct fmt_plan *keep = sqlite3_malloc(sizeof *keep);
        if (keep) {
            *keep = made;
            sqlite3_set_auxdata(ctx, 0, keep, sqlite3_free);
        }
    }
}

/* Installs the wrappers of the bounded built-ins on sb's connection. */
int aux_install(struct sandbox *sb)
{
    static const struct {
        const char *name;
        int nargs;
        enum aux_fn fn;
        void (*call)(sqlite3_context *, int, sqlite3_value **);
    } fns[] = {{"printf", -1, AUX_PRINTF, aux_call},
               {"format", -1, AUX_PRINTF, aux_call},
               {"instr", 2, AUX_INSTR, aux_call},
               {"replace", 3, AUX_REPLACE, aux_call},
               {"like", 2, AUX_LIKE, aux_call},
               {"like", 3, AUX_LIKE, aux_call},
               {"glob", 2, AUX_GLOB, aux_call},
               {"json_patch", 2, AUX_JSON_PATCH, aux_call},
               {"strftime", -1, AUX_STRFTIME, strftime_call},
               {"date", -1, AUX_DATE, date_call}};
    for (size_t i = 0; i < AUX_N; i++) {
        sb->slots[i].sb = sb;
        sb->slots[i].fn = (enum aux_fn)i;
    }
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (sqlite3_create_function_v2(sb->db, fns[i].name, fns[i].nargs,
                                       SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                       &sb->slots[fns[i].fn], fns[i].call, NULL, NULL,
                                       NULL) != SQLITE_OK)
            return -1;
    return 0;
}

/* prompt_stats.c — how varied a corpus's prompts are (see prompt_stats.h). */
#include "prompt_stats.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extsort.h"
#include "tables.h"

/* Paragraphs that only name a data file and its size, or say how much
 * of it is shown, never wording. */
static const char *const data_leads[] = {
    "The data is the CSV file", "The data is the Excel workbook", "The workbook is the file",
    "Sheet `", "The example lines are in the file", "Only the leading rows fit here", NULL,
};

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Whether the line p[0..len) is data: a SQL statement of a schema or its
 * rows, or an example's expected list. */
static bool data_line(const char *p, size_t len, bool *in_create)
{
    char *line = vat_xstrndup(p, len);
    bool data = true;
    if (*in_create)
        *in_create = !starts_with(line, ");");
    else if (starts_with(line, "CREATE TABLE"))
        *in_create = !strstr(line, ");");
    else if (!starts_with(line, "INSERT INTO") && !starts_with(line, "  (") &&
             !starts_with(line, "-- ") &&
             !(line[0] == '-' && line[1] == ' ' && line[2] == 'e' &&
               isdigit((unsigned char)line[3])))
        data = false; /* "- e1: [...]" is an example's expected list */
    free(line);
    return data;
}

/* Appends p[0..len) without the fixture paths it names ("`fixtures/...`"
 * and bare "fixtures/..." up to the next space): a path is data. */
static void put_without_paths(struct vat_buf *b, const char *p, size_t len)
{
    const char *end = p + len;
    while (p < end) {
        const char *f = NULL;
        for (const char *q = p; q + 9 <= end; q++)
            if (strncmp(q, "fixtures/", 9) == 0 && (q == p || q[-1] == '`' || q[-1] == ' ')) {
                f = q;
                break;
            }
        if (!f) {
            vat_buf_putn(b, p, (size_t)(end - p));
            return;
        }
        bool quoted = f > p && f[-1] == '`';
        vat_buf_putn(b, p, (size_t)(f - p - quoted));
        while (f < end && *f != '`' && *f != ' ')
            f++;
        if (quoted && f < end && *f == '`')
            f++;
        /* no double space, nor a space before punctuation, where the path was */
        if (f < end && *f == ' ' && b->len && b->data[b->len - 1] == ' ')
            f++;
        else if ((f == end || strchr(".,;:)", *f)) && b->len && b->data[b->len - 1] == ' ')
            b->data[--b->len] = 0;
        p = f;
    }
}

char *vat_prompt_wording(const char *prompt)
{
    /* fenced blocks out */
    struct vat_buf nf = VAT_BUF_INIT;
    vat_buf_puts(&nf, "");
    for (const char *p = prompt;;) {
        const char *open = strstr(p, "```");
        if (!open) {
            vat_buf_puts(&nf, p);
            break;
        }
        vat_buf_putn(&nf, p, (size_t)(open - p));
        const char *close = strstr(open + 3, "```");
        if (!close)
            break;
        p = close + 3;
    }
    /* then data paragraphs and data lines */
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, "");
    bool in_create = false, skip_par = false, par_start = true;
    for (const char *p = nf.data; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len == 0) {
            skip_par = false;
            par_start = true;
        } else {
            if (par_start)
                for (size_t i = 0; data_leads[i]; i++)
                    skip_par |= starts_with(p, data_leads[i]);
            par_start = false;
            if (!skip_par && !data_line(p, len, &in_create))
                put_without_paths(&b, p, len);
        }
        vat_buf_putc(&b, '\n');
        p += len + (nl ? 1 : 0);
    }
    vat_buf_release(&nf);
    return vat_buf_detach(&b);
}

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)tolower((unsigned char)s[i]);
        h *= 0x100000001b3ULL;
    }
    return h;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static bool word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '`';
}

/* Appends the word 4-gram hashes of a prompt's wording to *g. */
static void word4_grams(const char *text, uint64_t **g, size_t *ng, size_t *cap)
{
    char *w = vat_prompt_wording(text);
    uint64_t last[4] = {0};
    size_t nw = 0;
    for (const char *p = w; *p;) {
        if (!word_char(*p)) {
            p++;
            continue;
        }
        const char *s = p;
        while (*p && word_char(*p))
            p++;
        memmove(last, last + 1, 3 * sizeof last[0]);
        last[3] = fnv(0xcbf29ce484222325ULL, s, (size_t)(p - s));
        if (++nw >= 4) {
            uint64_t h = 0x9e3779b97f4a7c15ULL;
            for (int k = 0; k < 4; k++)
                h = (h ^ last[k]) * 0x100000001b3ULL + (uint64_t)k;
            if (*ng == *cap) {
                *cap = *cap ? 2 * *cap : 1024;
                *g = vat_xrealloc(*g, *cap * sizeof **g);
            }
            (*g)[(*ng)++] = h;
        }
    }
    free(w);
}

double vat_prompt_word4_share(const char *const *texts, size_t n)
{
    uint64_t *grams = NULL;
    size_t ng = 0, cap = 0;
    for (size_t i = 0; i < n; i++)
        word4_grams(texts[i], &grams, &ng, &cap);
    if (ng == 0) {
        free(grams);
        return 1.0;
    }
    qsort(grams, ng, sizeof *grams, cmp_u64);
    size_t distinct = 1;
    for (size_t i = 1; i < ng; i++)
        distinct += grams[i] != grams[i - 1];
    free(grams);
    return (double)distinct / (double)ng;
}

struct tstat {
    char *name;
    long tasks, style[2];
    json_t *phr[2]; /* distinct phrasing strings, as object keys */
    uint64_t grams, distinct;
};

/* The grams wait in an external sort, as (template, gram), so memory
 * stays flat in the number of prompts; the rest is per template. */
struct vat_prompt_stats {
    struct vat_xsort grams;
    struct tstat *ts;
    size_t nt, cap;
    uint64_t *g;
    size_t gcap;
    int failed;
    struct vat_err e;
};

struct vat_prompt_stats *vat_prompt_stats_begin(const char *tmpdir, size_t budget)
{
    struct vat_prompt_stats *ps = vat_xcalloc(1, sizeof *ps);
    vat_xsort_init(&ps->grams, tmpdir, budget);
    return ps;
}

void vat_prompt_stats_add(struct vat_prompt_stats *ps, const json_t *row)
{
    const char *tm = json_string_value(json_object_get(row, "template"));
    const char *prompt = json_string_value(json_object_get(row, "prompt"));
    if (!tm || !prompt || ps->failed)
        return;
    const char *style = json_string_value(json_object_get(row, "prompt_style"));
    const char *phr = json_string_value(json_object_get(row, "phrasing"));
    int s = style && strcmp(style, "natural") == 0;
    size_t i = ps->nt;
    if (ps->nt && strcmp(ps->ts[ps->nt - 1].name, tm) == 0)
        i = ps->nt - 1;
    for (size_t k = 0; i == ps->nt && k < ps->nt; k++)
        if (strcmp(ps->ts[k].name, tm) == 0)
            i = k;
    if (i == ps->nt) {
        if (ps->nt == ps->cap) {
            ps->cap = ps->cap ? 2 * ps->cap : 32;
            ps->ts = vat_xrealloc(ps->ts, ps->cap * sizeof *ps->ts);
        }
        memset(&ps->ts[ps->nt], 0, sizeof ps->ts[ps->nt]);
        ps->ts[ps->nt].name = vat_xstrdup(tm);
        ps->ts[ps->nt].phr[0] = json_object();
        ps->ts[ps->nt].phr[1] = json_object();
        ps->nt++;
    }
    struct tstat *t = &ps->ts[i];
    t->tasks++;
    t->style[s]++;
    json_object_set_new(t->phr[s], phr ? phr : "", json_true());
    size_t ng = 0;
    word4_grams(prompt, &ps->g, &ng, &ps->gcap);
    t->grams += ng;
    unsigned char rec[12];
    vat_be_put(rec, i, 4);
    for (size_t k = 0; k < ng && !ps->failed; k++) {
        vat_be_put(rec + 4, ps->g[k], 8);
        if (vat_xsort_add(&ps->grams, rec, sizeof rec, &ps->e) != 0)
            ps->failed = 1;
    }
}

static int cmp_tstat(const void *a, const void *b)
{
    return strcmp(((const struct tstat *)a)->name, ((const struct tstat *)b)->name);
}

json_t *vat_prompt_stats_end(struct vat_prompt_stats *ps, struct vat_err *e)
{
    json_t *out = NULL;
    const unsigned char *p, *last = NULL;
    unsigned char prev[12];
    size_t len;
    int st = 0;
    if (!ps->failed && vat_xsort_finish(&ps->grams, &ps->e) != 0)
        ps->failed = 1;
    while (!ps->failed && (st = vat_xsort_next(&ps->grams, &p, &len, &ps->e)) == 1) {
        if (!last || memcmp(p, prev, sizeof prev) != 0)
            ps->ts[vat_be_get(p, 4)].distinct++;
        memcpy(prev, p, sizeof prev);
        last = prev;
    }
    if (st < 0)
        ps->failed = 1;
    if (ps->failed) {
        *e = ps->e;
    } else {
        if (ps->nt)
            qsort(ps->ts, ps->nt, sizeof *ps->ts, cmp_tstat);
        out = json_object();
        for (size_t i = 0; i < ps->nt; i++) {
            const struct tstat *t = &ps->ts[i];
            json_t *o = json_object();
            json_object_set_new(o, "tasks", json_integer(t->tasks));
            json_object_set_new(o, "explicit", json_integer(t->style[0]));
            json_object_set_new(o, "natural", json_integer(t->style[1]));
            json_t *ph = json_object();
            json_object_set_new(ph, "explicit", json_integer((json_int_t)json_object_size(t->phr[0])));
            json_object_set_new(ph, "natural", json_integer((json_int_t)json_object_size(t->phr[1])));
            json_object_set_new(o, "phrasings", ph);
            json_object_set_new(o, "word4_distinct_share",
                                json_real(t->grams ? (double)t->distinct / (double)t->grams : 1.0));
            json_object_set_new(out, t->name, o);
        }
    }
    for (size_t i = 0; i < ps->nt; i++) {
        free(ps->ts[i].name);
        json_decref(ps->ts[i].phr[0]);
        json_decref(ps->ts[i].phr[1]);
    }
    free(ps->ts);
    free(ps->g);
    vat_xsort_release(&ps->grams);
    free(ps);
    return out;
}

json_t *vat_prompt_stats(const char *root, struct vat_err *e)
{
    struct vat_prompt_stats *ps = vat_prompt_stats_begin(NULL, (size_t)32 << 20);
    int opened = 0;
    for (int s = 0; s < VAT_N_SPLITS; s++) {
        char rel[VAT_TABLE_REL_MAX];
        vat_table_rel(rel, VAT_T_EXPERIENCE, s);
        char *path = vat_path_join(root, rel);
        FILE *fp = fopen(path, "rb");
        free(path);
        if (!fp)
            continue;
        opened++;
        char *line = NULL;
        size_t cap = 0;
        ssize_t got;
        while ((got = getline(&line, &cap, fp)) > 0) {
            json_t *row = json_loadb(line, (size_t)got, 0, NULL);
            vat_prompt_stats_add(ps, row);
            json_decref(row);
        }
        free(line);
        fclose(fp);
    }
    json_t *out = vat_prompt_stats_end(ps, e);
    if (out && !opened) {
        json_decref(out);
        vat_err_set(e, "vat: cannot open '%s/out/experience/*.jsonl'", root);
        return NULL;
    }
    return out;
}

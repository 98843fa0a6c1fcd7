/* card.c — the dataset card out/README.md (see card.h).
 *
 * Counts are read back from the tables as written rather than recomputed
 * from the split rule, so the card describes exactly the files it lists
 * (a task that failed admission is absent from both).  Exports
 * vat_card_render and vat_card_write. */
#include "card.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "level.h"
#include "libversions.h"
#include "tables.h"
#include "template.h"
#include "vat.h"
#include "verifiers.h"

/* What one row of each table is, for the card's table of configs. */
static const char *const table_rows[VAT_N_TABLES] = {
    "task: prompt, gold answer, self_contained, main fixture and variants, params_json, trap, "
    "seed",
    "fixture file: path, generator, seed, params_json, sha256, rows, columns",
    "task: TRL conversational prompt-completion (prompt and completion as message lists), "
    "self_contained",
    "admission replay: the gold, trap and malformed answers with their verdicts",
    "task: TRL conversational preference (prompt, chosen = gold, rejected = trap), "
    "rejected_reason, signal, pair_kind, self_contained",
    "task: the complete checker (expected, spec_json), enough to rebuild the check alone",
    "criterion: gate, score and trap items with weights",
    "task as a tool-use environment: agent prompt, tools (OpenAI function schemas), env_json, "
    "and the expert transcript as a TRL conversational completion with tool calls",
    "task: TRL conversational prompt-only (a system and a user message), task_id for the "
    "reward function, template, answer_kind, difficulty, self_contained",
    "task: TRL conversational prompt-completion: the grpo prompt, and a worked completion "
    "(brief reasoning, then the answer in a fence) proven to score 1.0 under `auto` "
    "extraction",
};

/* Prompt lengths, per table whose rows hold a prompt: each row's prompt in
 * characters and, at VAT_CHARS_PER_TOKEN, in estimated tokens, and the
 * estimated tokens of its prompt and longest completion together. */
#define VAT_CHARS_PER_TOKEN 3
/* Tokens a chat template adds around each message (role markers). */
#define VAT_TOKENS_PER_MESSAGE 8
struct lengths {
    long *chars, *tokens, *total; /* one per row */
    size_t n, cap;
};

struct tmpl_count {
    const struct vat_template *t;
    long requested, admitted, rejected;
    long split[VAT_N_SPLITS];
    long difficulty[6];  /* tasks per difficulty 1..5 ([0]: out of range) */
    long style[2];       /* explicit, natural */
    long self_contained;
};

struct facts {
    long rows[VAT_N_TABLES][VAT_N_SPLITS];
    long tasks[VAT_N_SPLITS];
    long signal_trap, signal_sharp, signal_weak;
    long pair_kind[4][2]; /* per family (pair_families), [program, value] */
    long self_contained[VAT_N_SPLITS]; /* experience rows whose prompt suffices */
    struct tmpl_count *tc;
    size_t ntc;
    char seeds_sha[65];
    struct lengths len[VAT_N_TABLES];
};

/* Characters (code points) of UTF-8 text. */
static long text_chars(const char *s)
{
    long n = 0;
    for (; s && *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* The characters of a prompt or completion member: a string, or a list of
 * messages (their contents summed; *msgs counts them). */
static long member_chars(const json_t *m, long *msgs)
{
    if (json_is_string(m)) {
        ++*msgs;
        return text_chars(json_string_value(m));
    }
    long n = 0;
    size_t i;
    const json_t *x;
    json_array_foreach(m, i, x) {
        ++*msgs;
        n += text_chars(json_string_value(json_object_get(x, "content")));
    }
    return n;
}

static long est_tokens(long chars, long msgs)
{
    return (chars + VAT_CHARS_PER_TOKEN - 1) / VAT_CHARS_PER_TOKEN + VAT_TOKENS_PER_MESSAGE * msgs;
}

/* Counts one row's prompt (and its longest completion, of the members
 * after the first in m) into the table's lengths. */
static void lengths_add(struct lengths *l, json_t *const *m, size_t nm)
{
    if (!m[0])
        return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->chars = vat_xrealloc(l->chars, l->cap * sizeof *l->chars);
        l->tokens = vat_xrealloc(l->tokens, l->cap * sizeof *l->tokens);
        l->total = vat_xrealloc(l->total, l->cap * sizeof *l->total);
    }
    long msgs = 0, chars = member_chars(m[0], &msgs);
    long tokens = est_tokens(chars, msgs), longest = 0;
    for (size_t k = 1; k < nm; k++) {
        long cm = 0, cc = m[k] ? member_chars(m[k], &cm) : 0;
        if (m[k] && est_tokens(cc, cm) > longest)
            longest = est_tokens(cc, cm);
    }
    l->chars[l->n] = chars;
    l->tokens[l->n] = tokens;
    l->total[l->n] = tokens + longest;
    l->n++;
}

static void lengths_release(struct lengths *l)
{
    free(l->chars);
    free(l->tokens);
    free(l->total);
    memset(l, 0, sizeof *l);
}

static bool only_has(const char *only, const char *name)
{
    if (!only)
        return true;
    size_t n = strlen(name);
    for (const char *p = only; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        if (!comma)
            break;
        p = comma + 1;
    }
    return false;
}

int vat_seeds_sha256(const char *path, char out[65], struct vat_err *e)
{
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f)
        return vat_err_set(e, "vat: cannot open '%s': %s", path ? path : "", strerror(errno));
    struct vat_sha256 *h = vat_sha256_begin();
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        vat_sha256_add(h, buf, n);
    int err = ferror(f);
    fclose(f);
    unsigned char d[32];
    vat_sha256_end(h, d);
    if (err)
        return vat_err_set(e, "vat: cannot read '%s'", path);
    vat_hex(d, 32, out);
    return 0;
}

static struct tmpl_count *find_count(struct facts *f, const char *name)
{
    for (size_t i = 0; i < f->ntc; i++)
        if (strcmp(f->tc[i].t->name, name) == 0)
            return &f->tc[i];
    return NULL;
}

static const char *const pair_families[4] = {"analytics", "regex", "sql", "probe"};

/* The family of a pair's task, from the template its id names. */
static int pair_family(const char *task_id)
{
    const char *dash = task_id ? strrchr(task_id, '-') : NULL;
    if (!dash)
        return -1;
    char name[96];
    snprintf(name, sizeof name, "%.*s", (int)(dash - task_id), task_id);
    const struct vat_template *tm = vat_template_find(name);
    for (int k = 0; tm && k < 4; k++)
        if (strcmp(tm->family, pair_families[k]) == 0)
            return k;
    return -1;
}

#define CARD_IOBUF (1 << 20)

/* Counts the rows of every table file, and per template and per signal
 * where the card reports them (read_tables), reading through iobuf. */
static int read_tables_with(struct facts *f, const char *root, char *iobuf,
                            struct vat_err *e)
{
    for (int t = 0; t < VAT_N_TABLES; t++) {
        for (int s = 0; s < VAT_N_SPLITS; s++) {
            char rel[VAT_TABLE_REL_MAX];
            vat_table_rel(rel, t, s);
            FILE *fp = vat_fopen_beneath(root, rel, NULL);
            if (!fp)
                return vat_err_set(e, "vat: cannot open '%s': %s", rel, strerror(errno));
            /* The tables run to tens of megabytes: read in large pieces,
             * not stdio's 4 KiB (glibc takes a size only with a buffer). */
            setvbuf(fp, iobuf, _IOFBF, CARD_IOBUF);
            char *line = NULL;
            size_t cap = 0;
            ssize_t got;
            while ((got = getline(&line, &cap, fp)) > 0) {
                f->rows[t][s]++;
                /* Only the members counted are parsed: the answers and
                 * specs beside them are stepped over. */
                size_t len = (size_t)got;
                while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
                    len--;
                if (t == VAT_T_SFT_EXAMPLES || t == VAT_T_SFT_REASONING || t == VAT_T_GRPO) {
                    static const char *const keys[] = {"prompt", "completion"};
                    json_t *m[2];
                    vat_json_members(line, len, keys, 2, m);
                    lengths_add(&f->len[t], m, t == VAT_T_GRPO ? 1 : 2);
                    json_decref(m[0]);
                    json_decref(m[1]);
                    continue;
                }
                if (t != VAT_T_EXPERIENCE && t != VAT_T_PREFERENCE_PAIRS)
                    continue;
                if (t == VAT_T_EXPERIENCE) {
                    static const char *const keys[] = {"template", "self_contained",
                                                       "difficulty", "prompt_style",
                                                       "prompt", "gold"};
                    json_t *m[6];
                    vat_json_members(line, len, keys, 6, m);
                    lengths_add(&f->len[t], m + 4, 2);
                    const char *name = json_string_value(m[0]);
                    struct tmpl_count *tc = name ? find_count(f, name) : NULL;
                    bool sc = json_is_true(m[1]);
                    if (tc) {
                        tc->split[s]++;
                        tc->self_contained += sc;
                        json_int_t d = json_integer_value(m[2]);
                        tc->difficulty[d >= 1 && d <= 5 ? d : 0]++;
                        const char *st = json_string_value(m[3]);
                        tc->style[st && strcmp(st, "natural") == 0]++;
                    }
                    f->tasks[s]++;
                    f->self_contained[s] += sc;
                    for (int k = 0; k < 6; k++)
                        json_decref(m[k]);
                } else {
                    static const char *const keys[] = {"signal", "pair_kind", "task_id",
                                                       "prompt", "chosen", "rejected"};
                    json_t *m[6];
                    vat_json_members(line, len, keys, 6, m);
                    lengths_add(&f->len[t], m + 3, 3);
                    const char *sig = json_string_value(m[0]);
                    if (sig && strcmp(sig, "trap") == 0)
                        f->signal_trap++;
                    else if (sig && strcmp(sig, "sharp") == 0)
                        f->signal_sharp++;
                    else if (sig && strcmp(sig, "weak") == 0)
                        f->signal_weak++;
                    const char *kind = json_string_value(m[1]);
                    int fam = pair_family(json_string_value(m[2]));
                    if (fam >= 0 && kind)
                        f->pair_kind[fam][strcmp(kind, "program") == 0 ? 0 : 1]++;
                    for (int k = 0; k < 6; k++)
                        json_decref(m[k]);
                }
            }
            int err = ferror(fp);
            free(line);
            fclose(fp);
            if (err)
                return vat_err_set(e, "vat: cannot read '%s'", rel);
        }
    }
    return 0;
}

static int read_tables(struct facts *f, const char *root, struct vat_err *e)
{
    char *iobuf = vat_xmalloc(CARD_IOBUF);
    int rc = read_tables_with(f, root, iobuf, e);
    free(iobuf);
    return rc;
}

static const char *size_category(long n)
{
    if (n < 1000)
        return "n<1K";
    if (n < 10000)
        return "1K<n<10K";
    if (n < 100000)
        return "10K<n<100K";
    if (n < 1000000)
        return "100K<n<1M";
    return "1M<n<10M";
}

/* One feature list of dataset_info, as the datasets library writes it:
 * `dtype` for a value, `struct` / `list` with members, `sequence` for a
 * list of values.  Nullable columns carry their value dtype (Arrow
 * columns are nullable). */
static void put_features(struct vat_buf *b, const struct vat_column *cols, int indent)
{
    for (const struct vat_column *c = cols; c->name; c++) {
        vat_buf_printf(b, "%*s- name: %s\n", indent, "", c->name);
        switch (c->kind) {
        case 's':
        case 'l':
            vat_buf_printf(b, "%*s  %s:\n", indent, "", c->kind == 's' ? "struct" : "list");
            put_features(b, c->members, indent + 2);
            break;
        case 'q':
            vat_buf_printf(b, "%*s  sequence: %s\n", indent, "", c->dtype);
            break;
        default:
            vat_buf_printf(b, "%*s  dtype: %s\n", indent, "", c->dtype);
        }
    }
}

/* The YAML front matter; data_files paths are prefix + <table>/<split>.jsonl
 * (prefix "" beside the tables in out/, "out/" in a packed folder). */
static void put_front_matter(struct vat_buf *b, const struct facts *f, const char *prefix)
{
    vat_buf_puts(b, "---\n"
                    "license: apache-2.0\n"
                    "pretty_name: \"vat: verified analytics tasks\"\n"
                    "language:\n- en\n"
                    "task_categories:\n- table-question-answering\n- text-generation\n"
                    "tags:\n- rlvr\n- verifiable-rewards\n- synthetic\n- data-analysis\n"
                    "- regex\n- sql\n- preference\n");
    vat_buf_printf(b, "size_categories:\n- %s\n",
                   size_category(f->tasks[VAT_SPLIT_TRAIN] + f->tasks[VAT_SPLIT_TEST]));
    vat_buf_puts(b, "configs:\n");
    for (int t = 0; t < VAT_N_TABLES; t++) {
        vat_buf_printf(b, "- config_name: %s\n  data_files:\n", vat_table_names[t]);
        for (int s = 0; s < VAT_N_SPLITS; s++)
            vat_buf_printf(b, "  - split: %s\n    path: %s%s/%s.jsonl\n", vat_split_names[s],
                           prefix, vat_table_names[t], vat_split_names[s]);
        if (t == VAT_T_EXPERIENCE)
            vat_buf_puts(b, "  default: true\n");
    }
    vat_buf_puts(b, "dataset_info:\n");
    for (int t = 0; t < VAT_N_TABLES; t++) {
        vat_buf_printf(b, "- config_name: %s\n  features:\n", vat_table_names[t]);
        put_features(b, vat_table_columns[t], 2);
        vat_buf_puts(b, "  splits:\n");
        for (int s = 0; s < VAT_N_SPLITS; s++)
            vat_buf_printf(b, "  - name: %s\n    num_examples: %ld\n", vat_split_names[s],
                           f->rows[t][s]);
    }
    vat_buf_puts(b, "---\n\n");
}

/* Template text on one line, as declared. */
static void put_oneline(struct vat_buf *b, const char *s)
{
    for (; s && *s; s++)
        vat_buf_putc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
}

static bool kind_built(const struct facts *f, const char *kind)
{
    for (size_t i = 0; i < f->ntc; i++)
        if (strcmp(f->tc[i].t->answer_kind, kind) == 0)
            return true;
    return false;
}

static void put_checkers(struct vat_buf *b, const struct facts *f)
{
    vat_buf_puts(b, "## Checkers\n\n"
                    "Every row of `verifiers` holds the complete checker of its task "
                    "(`checker`, `checker_version` and every parameter and limit), so a "
                    "prediction is scored from that row alone (`vat check`). "
                    "A checker never trusts the answer: a wrong-shaped answer fails the "
                    "gate (`gate_passed` false, score 0, a reason naming the expected "
                    "shape); only gated answers are scored, 1 or 0. Every verdict carries a "
                    "stable `code` (`ok`, `shape`, `type`, `wrong_value`, `missing_key`, "
                    "`wrong_extraction`, `sql_denied`, `extra_rows`, ...) beside its reason. "
                    "A reason about a held-out case names it and says how the answer failed "
                    "without quoting it (`vat check --reveal-hidden` quotes it).\n\n");
    if (kind_built(f, "value"))
        vat_buf_printf(b,
                       "- **value** (`%s`): the answer is one JSON value of at most %d bytes "
                       "and depth %d, duplicate keys rejected. The gate checks its type (a "
                       "number, a list, an object of numbers, an object of objects) and the "
                       "JSON type at every position (a number written as a string fails it, "
                       "code `type`); which keys or items it holds is scored. Numbers agree when "
                       "`|a-b| <= max(rel_tol*max(|a|,|b|), abs_tol)` with the task's "
                       "tolerances, never by `==`; NaN and Infinity fail the gate.\n",
                       vat_checker_version("value"), VAT_MAX_ANSWER_BYTES, VAT_MAX_JSON_DEPTH);
    if (kind_built(f, "regex"))
        vat_buf_printf(b,
                       "- **regex** (`%s`): the answer is a Python `re` pattern, run with "
                       "PCRE2 under a match limit, a depth limit, a heap limit and a pattern "
                       "length cap (recorded per row); Python spellings PCRE2 reads "
                       "differently are translated and PCRE-only syntax is refused at the "
                       "gate. The extraction is `[m.group(0) for m in re.finditer(p, s)]` "
                       "and must equal the expected list on every example and every "
                       "held-out string (the held-out strings are never shown in the prompt).\n",
                       vat_checker_version("regex"));
    if (kind_built(f, "sql"))
        vat_buf_printf(b,
                       "- **sql** (`%s`): the answer is one SQLite SELECT (WITH allowed), run "
                       "on a read-only in-memory copy of each fixture under an authorizer "
                       "allow-list, one step budget for all its fixtures together, and row, "
                       "value-length and memory caps. Checking is "
                       "OJ-style: the rows must match the reference query's (as a list or a "
                       "multiset, as the row says) on the task's fixture and on every held-out "
                       "variant fixture, so a query fitted to one fixture fails.\n",
                       vat_checker_version("sql"));
    if (kind_built(f, "abstain"))
        vat_buf_printf(b,
                       "- **abstain** (`%s`): for probes a fixture may not be able to answer; "
                       "the answer must be the abstention value the prompt defines where the "
                       "question is unanswerable, and the value itself where it is.\n",
                       vat_checker_version("abstain"));
    vat_buf_puts(b, "\n");
}

/* The templates: a table of counts, then each one's question, trap,
 * counts, prompt styles and difficulties. */
static void put_templates(struct vat_buf *b, const struct vat_config *c, const struct facts *f)
{
    vat_buf_puts(b, "\n## Templates\n\n"
                    "Each template is one mechanism with one deliberate trap; every admitted "
                    "fixture arms the trap (the trap answer differs from gold), and gold is "
                    "confirmed by a second, independent derivation.\n\n");
    /* the levels asked for, corpus-wide: what an evaluation split is made of */
    long levels[6] = {0};
    for (size_t i = 0; i < f->ntc; i++)
        for (int d = 0; d <= 5; d++)
            levels[d] += f->tc[i].difficulty[d];
    vat_buf_puts(b, "Tasks per difficulty level (the level seeds.toml asked for, "
                    "docs/difficulty.md):");
    for (int d = 1; d <= 5; d++)
        vat_buf_printf(b, "%s %d: %ld", d > 1 ? "," : "", d, levels[d]);
    vat_buf_puts(b, ".\n\n"
                    "| template | family | answer | train | test | self-contained |\n"
                    "|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < f->ntc; i++) {
        const struct tmpl_count *tc = &f->tc[i];
        vat_buf_printf(b, "| `%s` | %s | %s | %ld | %ld | %ld |\n", tc->t->name, tc->t->family,
                       tc->t->answer_kind, tc->split[VAT_SPLIT_TRAIN], tc->split[VAT_SPLIT_TEST],
                       tc->self_contained);
    }
    vat_buf_puts(b, "\n");
    for (size_t i = 0; i < f->ntc; i++) {
        const struct tmpl_count *tc = &f->tc[i];
        vat_buf_printf(b, "### `%s`\n\n- family: %s; answer kind: %s\n- question: ", tc->t->name,
                       tc->t->family, tc->t->answer_kind);
        put_oneline(b, tc->t->summary);
        vat_buf_puts(b, "\n- trap: ");
        put_oneline(b, tc->t->trap);
        vat_buf_printf(b, "\n- tasks: train %ld, test %ld", tc->split[VAT_SPLIT_TRAIN],
                       tc->split[VAT_SPLIT_TEST]);
        if (tc->requested >= 0)
            vat_buf_printf(b, " (requested %ld, admitted %ld)", tc->requested, tc->admitted);
        /* the prompt styles and how hard the tasks are: what a trainer filters on */
        vat_buf_printf(b, "\n- prompt styles: explicit %ld, natural %ld", tc->style[0],
                       tc->style[1]);
        vat_buf_puts(b, "\n- difficulty:");
        for (int d = 1; d <= 5; d++)
            vat_buf_printf(b, "%s %d: %ld", d > 1 ? "," : "", d, tc->difficulty[d]);
        vat_buf_puts(b, "\n- what grows by level: ");
        vat_level_doc(b, tc->t, json_object_get(c->templates, tc->t->name), c->inline_max_bytes,
                      c->inline_full);
        vat_buf_puts(b, "\n\n");
    }
}

/* Where the corpus came from and how to make it again, byte for byte. */
static void put_provenance(struct vat_buf *b, const struct vat_config *c,
                           const struct vat_build_opts *o, const struct facts *f, bool held_out)
{
    char frac[32];
    vat_buf_printf(b,
                   "## Provenance\n\n"
                   "- vat version: %s\n"
                   "- tables format: %d\n"
                   "- seeds file SHA-256: `%s`\n"
                   "- master seed: %llu\n",
                   VAT_VERSION, VAT_TABLES_FORMAT, f->seeds_sha,
                   (unsigned long long)c->master_seed);
    if (held_out) {
        vat_buf_puts(b, "- split: `held_out_templates` (");
        size_t i;
        json_t *v;
        json_array_foreach(c->held_out, i, v)
            vat_buf_printf(b, "%s`%s`", i ? ", " : "",
                           json_string_value(v) ? json_string_value(v) : "");
        vat_buf_puts(b, ")\n");
    } else {
        vat_buf_printf(b, "- split: `random`, test fraction %s, salt `%s`\n",
                       vat_fmt_real(c->test_fraction, frac), c->split_salt ? c->split_salt : "");
    }
    vat_buf_printf(b, "- templates built: %s\n", o->only ? o->only : "all registered templates");
    /* The libraries whose behaviour can shape the bytes. */
    struct vat_library libs[VAT_N_LIBRARIES];
    vat_library_list(libs);
    vat_buf_puts(b, "- built with the libraries:");
    for (int i = 0; i < VAT_N_LIBRARIES; i++)
        vat_buf_printf(b, "%s %s %s", i ? "," : "", libs[i].name, libs[i].version);
    vat_buf_puts(b, "\n");
    vat_buf_printf(b,
                   "\nTo regenerate, take vat %s, save the seeds file whose SHA-256 is given "
                   "above as `seeds.toml`, and run:\n\n"
                   "```\nvat build --config seeds.toml --root DIR%s%s\n"
                   "vat audit --root DIR\n```\n\n"
                   "The tables, the fixtures and this card come out byte-identical whatever "
                   "`--jobs` is and whichever compiler and optimisation level built vat; "
                   "other versions of the libraries listed above may change them. In a vat "
                   "checkout, `make corpus` does the same for the repository's "
                   "`seeds.toml`.\n",
                   VAT_VERSION, o->only ? " --only " : "", o->only ? o->only : "");
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The value at permille q of n sorted values: the smallest that at least
 * q/1000 of them do not exceed (the median is q = 500). */
static long quantile(const long *v, size_t n, size_t q)
{
    if (!n)
        return 0;
    size_t k = (n * q + 999) / 1000;
    return v[k ? k - 1 : 0];
}

/* n rounded up to a whole multiple of 256 (at least 256). */
static long round256(long n)
{
    return n <= 256 ? 256 : (n + 255) / 256 * 256;
}

/* How long the prompts of each config are, and the TRL settings that
 * truncate none of them. */
static void put_lengths(struct vat_buf *b, const struct facts *f)
{
    vat_buf_printf(b,
                   "## Prompt lengths\n\n"
                   "How long the prompts of each config are (train and test together), in "
                   "characters of the messages' text and in tokens estimated at %d characters "
                   "a token plus %d a message for the chat template's markers (tables of "
                   "digits and punctuation tokenize densely, so the estimate errs long for "
                   "common tokenizers; measure with the model's own before cutting close). "
                   "\"With completion\" adds each row's longest completion: gold "
                   "(`experience`, `sft_examples`), the worked completion (`sft_reasoning`), the "
                   "longer of chosen and rejected (`preference_pairs`). The recommended TRL "
                   "settings truncate no row, rounded up to a multiple of 256; `grpo`'s "
                   "`max_completion_length` leaves twice the longest worked completion for "
                   "the model's own reasoning.\n\n"
                   "| config | rows | prompt characters: median / p95 / max | prompt tokens "
                   "(est.): median / p95 / max | with completion, tokens (est.): max | "
                   "recommended |\n|---|---|---|---|---|---|\n",
                   VAT_CHARS_PER_TOKEN, VAT_TOKENS_PER_MESSAGE);
    static const int order[] = {VAT_T_GRPO, VAT_T_SFT_REASONING, VAT_T_SFT_EXAMPLES,
                                VAT_T_PREFERENCE_PAIRS, VAT_T_EXPERIENCE};
    long reasoned_max = 0;
    const struct lengths *r = &f->len[VAT_T_SFT_REASONING];
    for (size_t i = 0; i < r->n; i++)
        if (r->total[i] - r->tokens[i] > reasoned_max)
            reasoned_max = r->total[i] - r->tokens[i];
    long over_prompt = 0, over_total = 0;
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        int t = order[k];
        const struct lengths *l = &f->len[t];
        size_t n = l->n;
        long *c = vat_xmalloc((n ? n : 1) * sizeof *c), *tk = vat_xmalloc((n ? n : 1) * sizeof *tk),
             *tot = vat_xmalloc((n ? n : 1) * sizeof *tot);
        if (n) {
            memcpy(c, l->chars, n * sizeof *c);
            memcpy(tk, l->tokens, n * sizeof *tk);
            memcpy(tot, l->total, n * sizeof *tot);
        }
        qsort(c, n, sizeof *c, cmp_long);
        qsort(tk, n, sizeof *tk, cmp_long);
        qsort(tot, n, sizeof *tot, cmp_long);
        long pmax = n ? tk[n - 1] : 0, tmax = n ? tot[n - 1] : 0;
        vat_buf_printf(b, "| `%s` | %zu | %ld / %ld / %ld | %ld / %ld / %ld | %s%ld | ",
                       vat_table_names[t], n, quantile(c, n, 500), quantile(c, n, 950),
                       n ? c[n - 1] : 0, quantile(tk, n, 500), quantile(tk, n, 950), pmax,
                       t == VAT_T_GRPO ? "prompt only: " : "", tmax);
        if (t == VAT_T_GRPO) {
            vat_buf_printf(b, "GRPOConfig `max_prompt_length=%ld`, `max_completion_length=%ld`",
                           round256(pmax), round256(2 * reasoned_max));
            for (size_t i = 0; i < n; i++)
                over_prompt += l->tokens[i] > 512;
        } else if (t == VAT_T_PREFERENCE_PAIRS) {
            vat_buf_printf(b, "DPOConfig `max_prompt_length=%ld`, `max_length=%ld`",
                           round256(pmax), round256(tmax));
        } else if (t == VAT_T_EXPERIENCE) {
            vat_buf_printf(b, "`max_prompt_length=%ld` (a plain-string prompt: no chat template "
                              "is applied; use `grpo`)",
                           round256(pmax));
        } else {
            vat_buf_printf(b, "SFTConfig `max_length=%ld`", round256(tmax));
            if (t == VAT_T_SFT_REASONING)
                for (size_t i = 0; i < n; i++)
                    over_total += l->total[i] > 1024;
        }
        vat_buf_puts(b, " |\n");
        free(c);
        free(tk);
        free(tot);
    }
    vat_buf_printf(b,
                   "\nAt TRL's defaults %ld of %zu `grpo` prompts would be truncated "
                   "(`max_prompt_length` 512 tokens) and %ld of %zu `sft_reasoning` rows "
                   "(`max_length` 1024).\n",
                   over_prompt, f->len[VAT_T_GRPO].n, over_total, f->len[VAT_T_SFT_REASONING].n);
}

static void put_body(struct vat_buf *b, const struct vat_config *c, const struct vat_build_opts *o,
                     const struct facts *f)
{
    char frac[32];
    long ntrain = f->tasks[VAT_SPLIT_TRAIN], ntest = f->tasks[VAT_SPLIT_TEST];
    bool held_out = c->split && strcmp(c->split, "held_out_templates") == 0;

    vat_buf_printf(b,
                   "# vat: verified analytics tasks\n\n"
                   "Small analytics, regex and SQL tasks with checkers, for reinforcement "
                   "learning with verifiable rewards, supervised fine-tuning, preference "
                   "tuning and evaluation. Before a task was admitted, its gold answer "
                   "scored 1.0 through the task's own checker, its trap answer (the "
                   "plausible mistake the task is built to catch) passed the gate and "
                   "scored below 1.0, and a malformed answer failed the gate.\n\n"
                   "This build holds %ld tasks (train %ld, test %ld) from %zu templates, "
                   "generated by vat %s; its tables are in format %d.\n\n",
                   ntrain + ntest, ntrain, ntest, f->ntc, VAT_VERSION, VAT_TABLES_FORMAT);

    vat_buf_puts(b, "## Tables\n\n"
                    "One config per table, each with a `train` and a `test` split: "
                    "`out/<table>/train.jsonl` and `out/<table>/test.jsonl`, one JSON object "
                    "per line, keys in a fixed order, rows sorted by `task_id`. Every row of "
                    "a table has the same keys and every key one JSON type (the features in "
                    "this card's metadata); answers that are JSON values are canonical JSON "
                    "text, programs "
                    "their text, and free-shaped values JSON text in `*_json` columns. Paths "
                    "inside the rows are relative to the dataset root, the folder holding "
                    "`out/` and `fixtures/`: the folder above `out/` in a build, the folder "
                    "of this card in one made by `vat pack --root DIR --to DEST` (one "
                    "uploadable dataset: this card, the tables and the fixtures).\n\n"
                    "| config | one row per | train rows | test rows |\n"
                    "|---|---|---|---|\n");
    for (int t = 0; t < VAT_N_TABLES; t++)
        vat_buf_printf(b, "| `%s`%s | %s | %ld | %ld |\n", vat_table_names[t],
                       t == VAT_T_EXPERIENCE ? " (default)" : "", table_rows[t],
                       f->rows[t][VAT_SPLIT_TRAIN], f->rows[t][VAT_SPLIT_TEST]);

    vat_buf_puts(b, "\n`sft_examples` is in TRL's conversational prompt-completion form and "
                    "`preference_pairs` in its conversational preference form (`prompt`, "
                    "`chosen`, `rejected` as message lists), so they train as they are:\n\n"
                    "```python\n"
                    "ds = load_dataset(REPO, \"sft_examples\", split=\"train\")"
                    ".select_columns([\"prompt\", \"completion\"])\n"
                    "SFTTrainer(model=MODEL, train_dataset=ds).train()\n"
                    "ds = load_dataset(REPO, \"preference_pairs\", split=\"train\")"
                    ".select_columns([\"prompt\", \"chosen\", \"rejected\"])\n"
                    "DPOTrainer(model=MODEL, train_dataset=ds).train()\n"
                    "```\n\n"
                    "A value answer (`gold`, `expected`) is canonical JSON text: "
                    "`json.loads` reads it back. A checker's spec is JSON text in "
                    "`verifiers.spec_json` (with `expected` beside it), a task's params in "
                    "`params_json`.\n\n"
                    "`grpo` is in TRL's conversational prompt-only form: a system message "
                    "asks for brief reasoning and then the answer alone in a fenced block "
                    "of its kind (json, regex or sql), and the user message is the task's "
                    "prompt, so a trainer applies the model's chat template. Its `task_id` "
                    "column is what vat's reward function reads. `sft_reasoning` has the same "
                    "prompts, each with a worked completion in that form (what the question "
                    "fixes, the groups or rows, a value or two, the mistake the task is built "
                    "to catch, then the answer), admitted only when `auto` extraction of it "
                    "scores 1.0; it teaches the form `grpo` rewards:\n\n"
                    "```python\n"
                    "import vat.rewards  # pip install ./python from a vat checkout\n"
                    "ds = load_dataset(REPO, \"grpo\", split=\"train\")\n"
                    "GRPOTrainer(model=MODEL, train_dataset=ds, "
                    "reward_funcs=[vat.rewards.trl(LOCAL_COPY)], args=GRPOConfig(...)).train()\n"
                    "```\n\n"
                    "`LOCAL_COPY` is this dataset on disk "
                    "(`huggingface_hub.snapshot_download(REPO, repo_type=\"dataset\")`): the "
                    "reward function reads its checkers and fixtures.\n\n");
    put_lengths(b, f);

    put_templates(b, c, f);
    long sc = f->self_contained[VAT_SPLIT_TRAIN] + f->self_contained[VAT_SPLIT_TEST];
    vat_buf_printf(b,
                   "## Self-contained prompts\n\n"
                   "`self_contained` (on `experience`, `sft_examples` and `preference_pairs`) "
                   "is true when the prompt alone holds everything needed to answer without "
                   "opening a file: for value answers every fixture row the answer depends on "
                   "is shown; for regex and SQL answers the description of the strings or of "
                   "the schema suffices (their held-out cases and variant databases are "
                   "hidden by design). %ld of %ld tasks are self-contained (train %ld of %ld, "
                   "test %ld of %ld); the other %ld prompts show part of a fixture too large "
                   "to inline and name its file.\n\n",
                   sc, ntrain + ntest, f->self_contained[VAT_SPLIT_TRAIN], ntrain,
                   f->self_contained[VAT_SPLIT_TEST], ntest, ntrain + ntest - sc);

    vat_buf_printf(b,
                   "## Preference signals\n\n"
                   "Each `preference_pairs` row says how its rejected side was made:\n\n"
                   "- `trap` (%ld pairs): the rejected answer is the task's armed trap, the "
                   "named plausible mistake; the checker scores it below 1.0.\n"
                   "- `sharp` (%ld pairs): reserved for minimal pairs that differ in one "
                   "decisive detail; not emitted by this version.\n"
                   "- `weak` (%ld pairs): reserved for perturbation-based rejections; not "
                   "emitted by this version.\n\n",
                   f->signal_trap, f->signal_sharp, f->signal_weak);
    vat_buf_puts(b, "Each pair also says what its two sides are (`pair_kind`): `program` when "
                    "both are programs (a regex, an SQL query, or an analytics question answered "
                    "in its program form) whose outputs differ on the task's test fixtures, "
                    "`value` when both are bare JSON values.\n\n"
                    "| family | program pairs | value pairs |\n|---|---|---|\n");
    for (int k = 0; k < 4; k++)
        vat_buf_printf(b, "| %s | %ld | %ld |\n", pair_families[k], f->pair_kind[k][0],
                       f->pair_kind[k][1]);
    vat_buf_puts(b, "\n");

    put_checkers(b, f);

    vat_buf_puts(b, "## Splits\n\n");
    if (held_out) {
        vat_buf_puts(b, "Split mode `held_out_templates`: the templates");
        size_t i;
        json_t *v;
        json_array_foreach(c->held_out, i, v)
            vat_buf_printf(b, "%s `%s`", i ? "," : "",
                           json_string_value(v) ? json_string_value(v) : "");
        vat_buf_puts(b, " are wholly in `test` and every other template is wholly in `train`, "
                        "so the test split measures templates never trained on.");
    } else {
        vat_buf_printf(b,
                       "Split mode `random`: each template's tasks are spread evenly over its "
                       "indices, a share of %s of them in `test` (within one task of it for "
                       "every count), offset per template by the salt `%s`.",
                       vat_fmt_real(c->test_fraction, frac), c->split_salt ? c->split_salt : "");
    }
    vat_buf_puts(b, " A task's side depends only on its template, its index and the split "
                    "settings, so growing a count never moves an existing task; its fixture, "
                    "variant fixtures, held-out strings and the rows of every table follow "
                    "it. `vat audit` checks that no task id, fixture digest, normalised "
                    "prompt, gold program or held-out string is on both sides, that no "
                    "fixture shares more than half of its data rows with a fixture on the "
                    "other side, and that nothing repeats within a side.\n\n");

    vat_buf_puts(b, "## License\n\n"
                    "Apache-2.0. The corpus is synthetic: every name, id, amount, date and "
                    "log line was drawn by the generators from the seeds below; nothing "
                    "comes from real people or systems.\n\n");

    put_provenance(b, c, o, f, held_out);
}

char *vat_card_render(const struct vat_config *c, const struct vat_build_opts *o,
                      const struct vat_build_stats *st, struct vat_err *e)
{
    struct facts f;
    memset(&f, 0, sizeof f);
    size_t n = 0;
    for (size_t i = 0; vat_registry[i]; i++)
        n++;
    f.tc = vat_xcalloc(n ? n : 1, sizeof *f.tc);
    if (st) {
        for (size_t i = 0; i < st->n; i++) {
            const struct vat_template *t = vat_template_find(st->per[i].name);
            if (!t)
                continue;
            f.tc[f.ntc++] = (struct tmpl_count){.t = t,
                                                .requested = st->per[i].requested,
                                                .admitted = st->per[i].admitted,
                                                .rejected = st->per[i].rejected};
        }
    } else {
        for (size_t i = 0; vat_registry[i]; i++)
            if (only_has(o->only, vat_registry[i]->name))
                f.tc[f.ntc++] = (struct tmpl_count){.t = vat_registry[i], .requested = -1};
    }
    if (vat_seeds_sha256(c->path, f.seeds_sha, e) != 0 || read_tables(&f, o->root, e) != 0) {
        free(f.tc);
        for (int t = 0; t < VAT_N_TABLES; t++)
            lengths_release(&f.len[t]);
        return NULL;
    }
    struct vat_buf b = VAT_BUF_INIT;
    put_front_matter(&b, &f, "");
    put_body(&b, c, o, &f);
    free(f.tc);
    for (int t = 0; t < VAT_N_TABLES; t++)
        lengths_release(&f.len[t]);
    return vat_buf_detach(&b);
}

int vat_card_write(const struct vat_config *c, const struct vat_build_opts *o,
                   const struct vat_build_stats *st, struct vat_err *e)
{
    char *text = vat_card_render(c, o, st, e);
    if (!text)
        return -1;
    int rc = vat_write_file_atomic(o->root, "out/README.md", text, strlen(text), e);
    free(text);
    return rc;
}

char *vat_card_packed(const char *root, struct vat_err *e)
{
    char *path = vat_path_join(root, "out/README.md");
    FILE *fp = fopen(path, "rb");
    free(path);
    if (!fp) {
        vat_err_set(e, "vat: cannot open 'out/README.md' below '%s': %s (run 'vat build')", root,
                    strerror(errno));
        return NULL;
    }
    struct vat_buf card = VAT_BUF_INIT;
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
        vat_buf_putn(&card, buf, n);
    int err = ferror(fp);
    fclose(fp);
    /* The body follows the front matter: "---\n" ... "\n---\n\n". */
    const char *body = NULL;
    if (!err && card.data && strncmp(card.data, "---\n", 4) == 0) {
        body = strstr(card.data + 3, "\n---\n");
        if (body)
            body += 5;
    }
    if (!body) {
        vat_buf_release(&card);
        vat_err_set(e, "vat: '%s/out/README.md' is not a vat dataset card (no front matter)", root);
        return NULL;
    }
    struct facts f;
    memset(&f, 0, sizeof f);
    int rc = read_tables(&f, root, e);
    for (int t = 0; t < VAT_N_TABLES; t++)
        lengths_release(&f.len[t]);
    if (rc != 0) {
        vat_buf_release(&card);
        return NULL;
    }
    struct vat_buf b = VAT_BUF_INIT;
    put_front_matter(&b, &f, "out/");
    while (*body == '\n')
        body++;
    vat_buf_puts(&b, body);
    vat_buf_release(&card);
    return vat_buf_detach(&b);
}

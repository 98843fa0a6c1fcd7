/* shard.c — shard records and the merge of shards (see shard.h).
 *
 * Why a merge equals a direct build: every task's bytes depend only on
 * (seeds, version, template, index) (docs/determinism.md), a task's split
 * side too, and no task looks at another (gold programs are distinct by
 * construction); a direct build writes each table's rows sorted by
 * task_id, a task's own rows in a fixed order.  So the merge copies the
 * fixtures, sorts the union of the shards' rows by (task_id, position in
 * its shard's file) and writes the card and the manifest exactly as a
 * build does, from the summed per-template counts. */
#include "shard.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "card.h"
#include "manifest.h"
#include "prints.h"
#include "store.h"
#include "tables.h"
#include "template.h"
#include "verify.h"

int vat_shard_write(const struct vat_config *c, const struct vat_build_opts *o,
                    const struct vat_build_stats *st, struct vat_err *e)
{
    char sha[65];
    if (vat_seeds_sha256(c->path, sha, e) != 0)
        return -1;
    json_t *j = json_object();
    json_object_set_new(j, "shard_format", json_integer(VAT_SHARD_FORMAT));
    json_object_set_new(j, "vat_version", json_string(VAT_VERSION));
    json_object_set_new(j, "config_sha256", json_string(sha));
    json_object_set_new(j, "master_seed", json_integer((json_int_t)c->master_seed));
    json_object_set_new(j, "only", o->only ? json_string(o->only) : json_null());
    json_object_set_new(j, "shard", json_integer(o->shard));
    json_object_set_new(j, "of", json_integer(o->shards));
    json_t *ts = json_array();
    for (size_t i = 0; i < st->n; i++) {
        json_t *t = json_object();
        json_object_set_new(t, "name", json_string(st->per[i].name));
        json_object_set_new(t, "requested", json_integer(st->per[i].requested));
        json_object_set_new(t, "admitted", json_integer(st->per[i].admitted));
        json_object_set_new(t, "redrawn", json_integer(st->per[i].redrawn));
        json_object_set_new(t, "rejected", json_integer(st->per[i].rejected));
        json_array_append_new(ts, t);
    }
    json_object_set_new(j, "templates", ts);
    char *text = json_dumps(j, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(j);
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, text);
    vat_buf_putc(&b, '\n');
    free(text);
    int rc = vat_write_file_atomic(o->root, VAT_SHARD_FILE, b.data, b.len, e);
    vat_buf_release(&b);
    return rc;
}

/* ---- merge ------------------------------------------------------------------ */

struct shard_in {
    const char *root;
    struct vat_store store;
    json_t *record; /* out/shard.json */
    json_t *manifest;
};

static bool same_string(const json_t *a, const json_t *b)
{
    if (json_is_null(a) && json_is_null(b))
        return true;
    return json_is_string(a) && json_is_string(b) &&
           strcmp(json_string_value(a), json_string_value(b)) == 0;
}

/* The first mismatch `vat verify` finds in a shard. */
struct first_mismatch {
    char line[400];
    bool seen;
};

static void keep_first(void *arg, const char *line)
{
    struct first_mismatch *m = arg;
    if (!m->seen)
        snprintf(m->line, sizeof m->line, "%s", line);
    m->seen = true;
}

/* Reads and checks every shard's record against the config and the first
 * shard, then proves each shard as `vat verify` does (its files against
 * its own manifest, its rows against its checkers): a file edited after
 * the shard was built is refused here rather than laundered into the
 * merged corpus under a fresh manifest.  0 or -1 with one line in e. */
static int check_shards(const struct vat_config *c, struct shard_in *in, int n, struct vat_err *e)
{
    char sha[65];
    if (vat_seeds_sha256(c->path, sha, e) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        if (vat_store_open_read(&in[i].store, in[i].root, e) != 0)
            return -1;
        char *data = NULL;
        size_t len = 0;
        struct vat_err ignore;
        if (vat_read_file_beneath(in[i].root, VAT_SHARD_FILE, 1 << 20, &data, &len, &ignore) != 0)
            return vat_err_set(e, "vat: '%s' holds no shard (no %s; build it with --shard K/N)",
                               in[i].root, VAT_SHARD_FILE);
        in[i].record = json_loadb(data, len, 0, NULL);
        free(data);
        const json_t *r = in[i].record;
        if (!json_is_object(r) || !json_is_integer(json_object_get(r, "shard")) ||
            !json_is_integer(json_object_get(r, "of")) ||
            !json_is_array(json_object_get(r, "templates")))
            return vat_err_set(e, "vat: '%s/%s' is not a shard record", in[i].root,
                               VAT_SHARD_FILE);
        const char *ver = json_string_value(json_object_get(r, "vat_version"));
        if (!ver || strcmp(ver, VAT_VERSION) != 0)
            return vat_err_set(e, "vat: shard '%s' was built by vat %s, this is vat %s",
                               in[i].root, ver ? ver : "?", VAT_VERSION);
        const char *csha = json_string_value(json_object_get(r, "config_sha256"));
        if (!csha || strcmp(csha, sha) != 0)
            return vat_err_set(e, "vat: shard '%s' was built from another config than '%s' "
                                  "(seeds file SHA-256 differs)",
                               in[i].root, c->path);
        json_int_t k = json_integer_value(json_object_get(r, "shard"));
        json_int_t of = json_integer_value(json_object_get(r, "of"));
        json_int_t of0 = json_integer_value(json_object_get(in[0].record, "of"));
        if (of != of0)
            return vat_err_set(e, "vat: shard '%s' is one of %lld shards, '%s' one of %lld",
                               in[i].root, (long long)of, in[0].root, (long long)of0);
        if (!same_string(json_object_get(r, "only"), json_object_get(in[0].record, "only")))
            return vat_err_set(e, "vat: shards '%s' and '%s' were built with different --only",
                               in[0].root, in[i].root);
        for (int j = 0; j < i; j++)
            if (json_integer_value(json_object_get(in[j].record, "shard")) == k)
                return vat_err_set(e, "vat: shard %lld of %lld is given twice ('%s' and '%s')",
                                   (long long)k, (long long)of, in[j].root, in[i].root);
        if (k < 1 || k > of)
            return vat_err_set(e, "vat: '%s' names shard %lld of %lld", in[i].root, (long long)k,
                               (long long)of);
        in[i].manifest = vat_manifest_load(in[i].root, e);
        if (!in[i].manifest)
            return -1;
    }
    json_int_t of = json_integer_value(json_object_get(in[0].record, "of"));
    if (n != of) {
        for (json_int_t k = 1; k <= of; k++) {
            bool have = false;
            for (int i = 0; i < n; i++)
                have |= json_integer_value(json_object_get(in[i].record, "shard")) == k;
            if (!have)
                return vat_err_set(e, "vat: shard %lld of %lld is missing", (long long)k,
                                   (long long)of);
        }
    }
    for (int i = 0; i < n; i++) {
        struct first_mismatch m = {{0}, false};
        long bad = vat_verify_corpus(in[i].root, keep_first, &m, NULL, NULL);
        if (bad)
            return vat_err_set(e, "vat: shard '%s' does not verify (%ld mismatch%s; first: %s)",
                               in[i].root, bad, bad == 1 ? "" : "es", m.line);
    }
    return 0;
}

/* One row of a table on its way to the merged file. */
struct row {
    char *task_id;
    const char *text; /* into its shard's file, up to and with its '\n' */
    size_t len;
    size_t seq; /* position in the whole input, to keep a task's rows in order */
};

static int cmp_row(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    int c = strcmp(x->task_id, y->task_id);
    return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static int merge_table(struct shard_in *in, int n, const char *rel, const char *stage,
                       struct vat_err *e)
{
    char **data = vat_xcalloc((size_t)n, sizeof *data);
    struct row *rows = NULL;
    size_t nrows = 0, cap = 0;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        size_t len = 0;
        if (vat_read_file_beneath(in[i].root, rel, (size_t)1 << 36, &data[i], &len, e) != 0) {
            rc = -1;
            break;
        }
        for (char *line = data[i]; rc == 0 && line < data[i] + len;) {
            char *nl = memchr(line, '\n', (size_t)(data[i] + len - line));
            size_t l = nl ? (size_t)(nl - line) : (size_t)(data[i] + len - line);
            json_t *row = json_loadb(line, l, 0, NULL);
            const char *id = json_string_value(json_object_get(row, "task_id"));
            if (!id) {
                rc = vat_err_set(e, "vat: a row of '%s/%s' has no task_id", in[i].root, rel);
            } else {
                if (nrows == cap) {
                    cap = cap ? 2 * cap : 1024;
                    rows = vat_xrealloc(rows, cap * sizeof *rows);
                }
                rows[nrows] = (struct row){vat_xstrdup(id), line, l, nrows};
                nrows++;
            }
            json_decref(row);
            line += l + 1;
        }
    }
    if (rc == 0) {
        qsort(rows, nrows, sizeof *rows, cmp_row);
        struct vat_buf b = VAT_BUF_INIT;
        for (size_t i = 0; i < nrows; i++) {
            if (i && strcmp(rows[i - 1].task_id, rows[i].task_id) == 0 &&
                rows[i - 1].text + rows[i - 1].len + 1 != rows[i].text)
                /* a task's rows come from one shard, one run of lines */
                rc = vat_err_set(e, "vat: task '%s' appears in more than one shard",
                                 rows[i].task_id);
            vat_buf_putn(&b, rows[i].text, rows[i].len);
            vat_buf_putc(&b, '\n');
        }
        if (rc == 0 && vat_write_file_atomic(stage, rel, b.data ? b.data : "", b.len, e) != 0)
            rc = -1;
        vat_buf_release(&b);
    }
    for (size_t i = 0; i < nrows; i++)
        free(rows[i].task_id);
    free(rows);
    for (int i = 0; i < n; i++)
        free(data[i]);
    free(data);
    return rc;
}

/* Copies every fixture the shards' manifests list into the stage; a path
 * two shards both hold is refused. */
static int copy_fixtures(struct shard_in *in, int n, const char *stage, struct vat_err *e)
{
    json_t *seen = json_object();
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const char *path;
        json_t *v;
        json_object_foreach(json_object_get(in[i].manifest, "files"), path, v)
        {
            if (strncmp(path, "fixtures/", 9) != 0)
                continue;
            if (json_object_get(seen, path)) {
                rc = vat_err_set(e, "vat: fixture '%s' is in more than one shard", path);
                break;
            }
            json_object_set_new(seen, path, json_true());
            char *data = NULL;
            size_t len = 0;
            if (vat_read_file_beneath(in[i].root, path, (size_t)1 << 36, &data, &len, e) != 0 ||
                vat_write_file_atomic(stage, path, data, len, e) != 0)
                rc = -1;
            free(data);
            if (rc)
                break;
        }
    }
    json_decref(seen);
    return rc;
}

/* The shards' fingerprints merged (prints.h): shards between which (or
 * within one of which) something crosses the split are not joined. */
static int refuse_leaks(char *const *roots, int n, struct vat_err *e)
{
    struct vat_audit_report r;
    vat_audit_init(&r, 1);
    int rc = vat_prints_audit((const char *const *)roots, (size_t)n, &r, e);
    if (rc == 0 && r.findings)
        rc = vat_err_set(e, "vat: the shards leak across the split (%s: %s; %ld finding%s, "
                            "listed by 'vat audit --shards'); nothing merged",
                         vat_audit_kind_name(r.f[0].kind), r.f[0].detail, r.findings,
                         r.findings == 1 ? "" : "s");
    vat_audit_release(&r);
    return rc;
}

int vat_merge(const struct vat_config *c, const char *to, char *const *roots, int nroots,
              FILE *summary, struct vat_err *e)
{
    if (nroots < 1)
        return vat_err_set(e, "vat: merge needs at least one shard root");
    struct shard_in *in = vat_xcalloc((size_t)nroots, sizeof *in);
    for (int i = 0; i < nroots; i++) {
        in[i].root = roots[i];
        in[i].store = (struct vat_store)VAT_STORE_INIT;
    }
    /* Merging into a shard root would wait forever for its own shared
     * lock at the swap (and overwrite an input). */
    struct stat ts, rs;
    for (int i = 0; stat(to, &ts) == 0 && i < nroots; i++)
        if (stat(roots[i], &rs) == 0 && rs.st_dev == ts.st_dev && rs.st_ino == ts.st_ino) {
            free(in);
            return vat_err_set(e, "vat: --to '%s' is one of the shards; merge into a new root",
                               to);
        }
    int rc = check_shards(c, in, nroots, e);
    if (rc == 0)
        rc = refuse_leaks(roots, nroots, e);
    struct vat_store out = VAT_STORE_INIT;
    bool staged = false;
    struct vat_build_stats st = {0};
    const char *only = rc == 0 ? json_string_value(json_object_get(in[0].record, "only")) : NULL;
    if (rc == 0 && vat_store_begin_build(&out, to, e) != 0)
        rc = -1;
    staged = rc == 0;
    if (rc == 0)
        rc = copy_fixtures(in, nroots, out.stage, e);
    for (int t = 0; rc == 0 && t < VAT_N_TABLES; t++)
        for (int s = 0; rc == 0 && s < VAT_N_SPLITS; s++) {
            char rel[VAT_TABLE_REL_MAX];
            vat_table_rel(rel, t, s);
            rc = merge_table(in, nroots, rel, out.stage, e);
        }
    if (rc == 0) {
        /* The per-template counts, summed, in the order the shards list
         * them (registry order, as the build made them). */
        const json_t *t0 = json_object_get(in[0].record, "templates");
        st.n = json_array_size(t0);
        st.per = vat_xcalloc(st.n ? st.n : 1, sizeof *st.per);
        for (size_t k = 0; rc == 0 && k < st.n; k++) {
            const char *name = json_string_value(json_object_get(json_array_get(t0, k), "name"));
            const struct vat_template *tm = name ? vat_template_find(name) : NULL;
            if (!tm) {
                rc = vat_err_set(e, "vat: shard '%s' names an unknown template", in[0].root);
                break;
            }
            st.per[k].name = tm->name;
            for (int i = 0; i < nroots; i++) {
                const json_t *x = json_array_get(json_object_get(in[i].record, "templates"), k);
                const char *nm = json_string_value(json_object_get(x, "name"));
                if (!nm || strcmp(nm, tm->name) != 0) {
                    rc = vat_err_set(e, "vat: shards '%s' and '%s' list different templates",
                                     in[0].root, in[i].root);
                    break;
                }
                st.per[k].requested += (long)json_integer_value(json_object_get(x, "requested"));
                st.per[k].admitted += (long)json_integer_value(json_object_get(x, "admitted"));
                st.per[k].redrawn += (long)json_integer_value(json_object_get(x, "redrawn"));
                st.per[k].rejected += (long)json_integer_value(json_object_get(x, "rejected"));
            }
            st.tasks += st.per[k].requested;
            st.admitted += st.per[k].admitted;
            st.rejected += st.per[k].rejected;
        }
    }
    if (rc == 0) {
        struct vat_build_opts o = {.root = out.stage, .only = only, .card = 1};
        if (vat_card_write(c, &o, &st, e) != 0 || vat_store_commit(&out, e) != 0)
            rc = -1;
    }
    if (rc == 0 && summary) {
        fprintf(summary, "%-22s %9s %9s %8s %8s\n", "template", "requested", "admitted",
                "redrawn", "rejected");
        for (size_t k = 0; k < st.n; k++)
            fprintf(summary, "%-22s %9ld %9ld %8ld %8ld\n", st.per[k].name, st.per[k].requested,
                    st.per[k].admitted, st.per[k].redrawn, st.per[k].rejected);
    }
    if (rc != 0 && staged)
        vat_store_abort(&out);
    else if (staged)
        vat_store_close(&out);
    if (rc == 0 && st.rejected)
        rc = 1;
    free(st.per);
    for (int i = 0; i < nroots; i++) {
        json_decref(in[i].record);
        json_decref(in[i].manifest);
        vat_store_close(&in[i].store);
    }
    free(in);
    return rc;
}

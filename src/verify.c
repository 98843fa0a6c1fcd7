/* verify.c — a corpus proves itself.  Every file of out/ and fixtures/
 * is re-hashed against out/manifest.json (missing, extra and changed
 * files, each named), and every verifiers row is re-checked against its
 * rollouts with the task's own checker: the gold answer scores 1.0, the
 * trap below 1.0, and the malformed answer fails the gate.  `vat verify`
 * prints what this finds; `vat merge` proves each shard the same way
 * before it joins them.  Exports vat_verify_run and vat_verify_corpus. */
#include "verify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admit.h"
#include "libversions.h"
#include "manifest.h"
#include "tables.h"
#include "template.h"

static void mismatch(struct vat_verify *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mismatch(struct vat_verify *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    v->report(v->arg, b.data);
    vat_buf_release(&b);
    v->mismatches++;
}

/* Why the regular file rel does not have its listed digest: a Git LFS
 * pointer in its place, or nothing particular (""). */
static const char *changed_why(const char *root, const char *rel)
{
    char *data = NULL;
    size_t len = 0;
    struct vat_err ignore;
    const char *why = NULL;
    if (vat_read_file_beneath(root, rel, 1024, &data, &len, &ignore) == 0)
        why = vat_lfs_pointer(data, len);
    free(data);
    return why;
}

static void verify_files(struct vat_verify *v)
{
    struct vat_err e = {{0}};
    json_t *m = v->manifest ? json_incref(v->manifest) : vat_manifest_load(v->root, &e);
    if (!m) {
        mismatch(v, "%s", e.msg + (strncmp(e.msg, "vat: ", 5) == 0 ? 5 : 0));
        return;
    }
    /* Other library versions do not make the corpus wrong, but a rebuild
     * under them could give other bytes: a warning, not a mismatch. */
    char *diff = v->warn ? vat_library_versions_diff(json_object_get(m, "libraries")) : NULL;
    if (diff) {
        printf("warning: libraries differ from the build's (%s): a rebuild here could give "
               "other bytes\n",
               diff);
        free(diff);
    }
    struct vat_tree_entry *t;
    size_t n;
    if (vat_tree_list(v->root, &t, &n, &e) != 0) {
        mismatch(v, "%s", e.msg + 5);
        json_decref(m);
        return;
    }
    json_t *seen = json_object();
    for (size_t i = 0; i < n; i++) {
        const char *rel = t[i].rel;
        /* the manifest may be a link (a Hugging Face snapshot): it was read
         * through it, and lists no digest of itself */
        if (t[i].kind == VAT_TREE_SYMLINK && strcmp(rel, VAT_MANIFEST_REL) == 0)
            continue;
        const char *want = vat_manifest_sha(m, rel);
        json_object_set_new(seen, rel, json_true());
        v->files++;
        /* A file that is a symbolic link (a Hugging Face cache snapshot)
         * is followed when the manifest lists it, and trusted by content. */
        if (t[i].kind == VAT_TREE_OTHER || (t[i].kind == VAT_TREE_SYMLINK && !want)) {
            mismatch(v, "'%s' is %s (not followed)", rel,
                     t[i].kind == VAT_TREE_SYMLINK ? "a symbolic link the manifest does not list"
                                                   : "not a regular file");
            continue;
        }
        if (!want) {
            mismatch(v, "extra file '%s' (not in the manifest)", rel);
            continue;
        }
        char sha[65];
        bool linked = false;
        const char *why;
        if (vat_sha256_beneath_linked(v->root, rel, sha, &linked, &e) != 0)
            mismatch(v, "cannot hash '%s': %s", rel, e.msg + (strncmp(e.msg, "vat: ", 5) == 0 ? 5 : 0));
        else if (strcmp(sha, want) == 0)
            continue;
        else if ((why = changed_why(v->root, rel)) != NULL)
            mismatch(v, "changed file '%s' (a %s)", rel, why);
        else
            mismatch(v, "changed file '%s' (%ssha256 %.12s…, the manifest says %.12s…)", rel,
                     linked ? "a symbolic link to a file of " : "", sha, want);
    }
    const char *k;
    json_t *x;
    json_object_foreach(json_object_get(m, "files"), k, x) {
        if (json_object_get(seen, k))
            continue;
        /* A packed dataset's manifest also lists its card and
         * .gitattributes, beside out/ and fixtures/. */
        char sha[65];
        bool beside = strncmp(k, "out/", 4) != 0 && strncmp(k, "fixtures/", 9) != 0;
        bool linked;
        if (!beside || vat_sha256_beneath_linked(v->root, k, sha, &linked, &e) != 0) {
            mismatch(v, "missing file '%s' (listed in the manifest)", k);
            continue;
        }
        v->files++;
        if (strcmp(sha, json_string_value(x)) != 0)
            mismatch(v, "changed file '%s' (sha256 %.12s…, the manifest says %.12s…)", k, sha,
                     json_string_value(x));
    }
    json_decref(seen);
    vat_tree_free(t, n);
    json_decref(m);
}

/* Calls fn on every JSON object line of out/<table>/<split>.jsonl; a file
 * that cannot be read or a line that is not an object is a mismatch. */
static void each_row(struct vat_verify *v, const char *table, int split,
                     void (*fn)(struct vat_verify *, json_t *, void *), void *arg)
{
    char rel[128];
    snprintf(rel, sizeof rel, "out/%s/%s.jsonl", table, vat_split_names[split]);
    struct vat_err e = {{0}};
    char *data = NULL;
    size_t len = 0;
    /* A table that is a symbolic link is read when the manifest lists its
     * digest, which the bytes read must have. */
    const char *want = v->manifest ? vat_manifest_sha(v->manifest, rel) : NULL;
    if (vat_read_file_linked(v->root, rel, (size_t)1 << 34, want, false, &data, &len, &e) != 0) {
        mismatch(v, "cannot read '%s': %s", rel, e.msg);
        return;
    }
    long lineno = 0;
    for (char *line = data, *end = data + len; line < end;) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) + 1 : (size_t)(end - line);
        lineno++;
        json_t *row = json_loadb(line, n, 0, NULL);
        if (!json_is_object(row))
            mismatch(v, "'%s' line %ld is not a JSON object", rel, lineno);
        else
            fn(v, row, arg);
        json_decref(row);
        line += n;
    }
    free(data);
}

/* rollouts: "<task_id>/<role>" -> answer text */
static void add_rollout(struct vat_verify *v, json_t *row, void *arg)
{
    (void)v;
    const char *id = json_string_value(json_object_get(row, "task_id"));
    const char *role = json_string_value(json_object_get(row, "role"));
    json_t *ans = json_object_get(row, "answer");
    if (!id || !role || !json_is_string(ans))
        return;
    char *key = vat_xasprintf("%s/%s", id, role);
    json_object_set((json_t *)arg, key, ans);
    free(key);
}

static void check_verifier(struct vat_verify *v, json_t *row, void *arg)
{
    const json_t *rollouts = arg;
    const char *id = json_string_value(json_object_get(row, "task_id"));
    const char *tname = json_string_value(json_object_get(row, "template"));
    if (!id) {
        mismatch(v, "a verifiers row has no task_id");
        return;
    }
    v->tasks++;
    const struct vat_template *tm = tname ? vat_template_find(tname) : NULL;
    if (!tm) {
        mismatch(v, "task '%s' names unknown template '%s'", id, tname ? tname : "");
        return;
    }
    struct vat_task t;
    vat_task_init(&t, tm, 0, v->root);
    snprintf(t.id, sizeof t.id, "%s", id);
    t.spec = vat_verifier_spec(row);
    if (!t.spec) {
        mismatch(v, "task '%s': its verifiers row holds no checker spec", id);
        vat_task_clear(&t);
        return;
    }
    /* The fixtures' digests, so that the check reads a fixture that is a
     * symbolic link (a Hugging Face snapshot) only when its bytes have the
     * digest the manifest lists. */
    const json_t *fx = json_object_get(t.spec, "fixtures");
    if (v->manifest && json_array_size(fx)) {
        json_t *sums = json_array();
        size_t i;
        json_t *f;
        json_array_foreach(fx, i, f) {
            const char *sha = vat_manifest_sha(v->manifest, json_string_value(f) ? json_string_value(f) : "");
            json_array_append_new(sums, sha ? json_string(sha) : json_null());
        }
        json_object_set_new(t.spec, "fixture_sha256", sums);
    }
    for (int r = 0; r < VAT_N_ROLES; r++) {
        char *key = vat_xasprintf("%s/%s", id, vat_role_names[r]);
        const char *ans = json_string_value(json_object_get(rollouts, key));
        free(key);
        if (!ans) {
            mismatch(v, "task '%s': no %s rollout", id, vat_role_names[r]);
            continue;
        }
        struct vat_verdict vd = tm->check(&t, ans, strlen(ans));
        bool ok = r == VAT_ROLE_GOLD   ? vd.gate_passed && vd.score == 1.0
                  : r == VAT_ROLE_TRAP ? vd.score < 1.0
                                       : !vd.gate_passed;
        if (!ok)
            mismatch(v, "task '%s': the %s answer %s (score %g, %s: %s)", id, vat_role_names[r],
                     r == VAT_ROLE_GOLD   ? "does not score 1"
                     : r == VAT_ROLE_TRAP ? "scores 1"
                                          : "passes the gate",
                     vd.score, vd.code, vd.reason);
    }
    /* the expert transcript's answer, where the task kept one */
    char *key = vat_xasprintf("%s/agent", id);
    const char *agent = json_string_value(json_object_get(rollouts, key));
    free(key);
    if (agent) {
        struct vat_verdict vd = tm->check(&t, agent, strlen(agent));
        if (!(vd.gate_passed && vd.score == 1.0))
            mismatch(v, "task '%s': the agent answer does not score 1 (score %g, %s: %s)", id,
                     vd.score, vd.code, vd.reason);
    }
    vat_task_clear(&t);
}

void vat_verify_run(struct vat_verify *v)
{
    struct vat_err ignore;
    v->manifest = vat_manifest_load(v->root, &ignore);
    verify_files(v);
    for (int s = 0; s < VAT_N_SPLITS; s++) {
        json_t *rollouts = json_object();
        each_row(v, vat_table_names[VAT_T_ROLLOUTS], s, add_rollout, rollouts);
        each_row(v, vat_table_names[VAT_T_VERIFIERS], s, check_verifier, rollouts);
        json_decref(rollouts);
    }
    json_decref(v->manifest);
    v->manifest = NULL;
}

long vat_verify_corpus(const char *root, void (*report)(void *arg, const char *line), void *arg,
                       long *files, long *tasks)
{
    struct vat_verify v = {.root = root, .report = report, .arg = arg};
    vat_verify_run(&v);
    if (files)
        *files = v.files;
    if (tasks)
        *tasks = v.tasks;
    return v.mismatches;
}


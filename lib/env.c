/* env.c — libvat's tool-use episodes on a built corpus (the vat_episode_*
 * calls of include/libvat.h), over the environments of lib/episode.c.
 *
 * The env table (out/env/{train,test}.jsonl, one row per task: the agent
 * prompt, the tool schemas, the env spec) is read whole on the first
 * episode and indexed by task id from each row's leading "task_id"
 * member; its files must match out/manifest.json as the other tables do.
 * A task's environment (its main fixture loaded, checked against the
 * digest the tables record for it) is built on the task's first episode
 * and kept with the task's state in the handle's cache (lib/corpus.c "the
 * cache"), under its byte budget: counted when built and after every
 * step (a query can pool a sandbox or keep a statement), let go least
 * recently used first with the rest of the state, and built again, to
 * the same bytes, on the task's next episode.  An episode holds a
 * reference to the state, so an eviction never frees an environment
 * under it; environments are shared by every episode on the task from
 * any thread.  An episode itself belongs to one thread at a time; submit
 * scores with the state the episode holds, as vat_corpus_score would
 * (raw: the argument is the answer). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "episode.h"
#include "verifier_row.h"

static const char *const env_rel[2] = {"out/env/train.jsonl", "out/env/test.jsonl"};

struct env_state {
    struct vat_task_env base; /* first: lib/corpus.c holds it as one */
    char *prompt;
    size_t prompt_len;
    struct vat_env_task *et;
    char error[400]; /* why the environment cannot be built ("" when it is) */
    bool tampered;
    /* vat_env_task_bytes when the state was last counted: a step counts
     * the state again only when it has grown past it (or halved) */
    _Atomic size_t counted;
};

struct env_entry {
    char *id;
    size_t id_len;
    uint64_t hash;
    const char *row;
    size_t row_len;
};

struct env_index {
    char *data[2];
    size_t n[2];
    bool present;
    char error[300]; /* why there is no usable env table ("" when there is) */
    struct env_entry *ent;
    size_t nent;
    size_t *slot, nslot;
};

static uint64_t hash_id(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static struct env_entry *index_find(struct env_index *x, const char *id, size_t n)
{
    if (!x->nslot)
        return NULL;
    uint64_t h = hash_id(id, n);
    for (size_t i = (size_t)h & (x->nslot - 1);; i = (i + 1) & (x->nslot - 1)) {
        size_t k = x->slot[i];
        if (!k)
            return NULL;
        struct env_entry *e = &x->ent[k - 1];
        if (e->hash == h && e->id_len == n && memcmp(e->id, id, n) == 0)
            return e;
    }
}

static void state_free(struct vat_task_env *base)
{
    struct env_state *st = (struct env_state *)base;
    free(st->prompt);
    vat_env_task_free(st->et);
    free(st);
}

static size_t state_bytes(const struct vat_task_env *base)
{
    const struct env_state *st = (const struct env_state *)base;
    return sizeof *st + (st->prompt ? st->prompt_len + 1 : 0) + vat_env_task_bytes(st->et);
}

static void index_free(void *arg)
{
    struct env_index *x = arg;
    if (!x)
        return;
    for (size_t i = 0; i < x->nent; i++)
        free(x->ent[i].id);
    free(x->ent);
    free(x->slot);
    free(x->data[0]);
    free(x->data[1]);
    free(x);
}

/* The task id of a row from its leading member (the env table writes
 * task_id first, unescaped); false when the row does not start so. */
static bool row_id(const char *row, size_t n, const char **id, size_t *len)
{
    static const char lead[] = "{\"task_id\":\"";
    size_t l = sizeof lead - 1;
    if (n < l || memcmp(row, lead, l) != 0)
        return false;
    const char *p = row + l, *end = row + n, *q = p;
    while (q < end && *q != '"' && *q != '\\')
        q++;
    if (q >= end || *q != '"' || q == p)
        return false;
    *id = p;
    *len = (size_t)(q - p);
    return true;
}

static void *index_make(vat_corpus *c)
{
    struct env_index *x = vat_xcalloc(1, sizeof *x);
    const char *root = vat_corpus_root(c);
    size_t lines = 0;
    for (int k = 0; k < 2; k++) {
        struct vat_err e = {{0}};
        char want[65];
        int listed = vat_corpus_manifest_digest(c, env_rel[k], want);
        if (vat_read_file_beneath(root, env_rel[k], (size_t)1 << 32, &x->data[k], &x->n[k],
                                  &e) != 0) {
            x->data[k] = NULL;
            x->n[k] = 0;
            if (listed == 1)
                vat_corpus_set_tampered(c, env_rel[k],
                                        "is listed in out/manifest.json but missing");
            continue;
        }
        x->present = true;
        if (listed == 0) {
            vat_corpus_set_tampered(c, env_rel[k], "is not listed in out/manifest.json");
        } else if (listed == 1) {
            char hex[65];
            vat_sha256_hex(x->data[k], x->n[k], hex);
            if (strcmp(hex, want) != 0)
                vat_corpus_set_tampered(c, env_rel[k],
                                        "does not match the sha256 out/manifest.json records");
        }
        for (const char *p = x->data[k], *end = p + x->n[k];
             (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
            lines++;
        lines++;
    }
    if (!x->present) {
        snprintf(x->error, sizeof x->error,
                 "the corpus at '%.200s' has no env table (out/env/*.jsonl); rebuild it with "
                 "this vat",
                 root);
        return x;
    }
    x->ent = vat_xcalloc(lines, sizeof *x->ent);
    x->nslot = 16;
    while (x->nslot < 2 * lines)
        x->nslot *= 2;
    x->slot = vat_xcalloc(x->nslot, sizeof *x->slot);
    for (int k = 0; k < 2; k++) {
        const char *p = x->data[k], *end = p + x->n[k];
        while (p && p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *le = nl ? nl : end;
            const char *id;
            size_t idlen;
            if (le > p && row_id(p, (size_t)(le - p), &id, &idlen) && !index_find(x, id, idlen)) {
                struct env_entry *e = &x->ent[x->nent];
                e->id = vat_xstrndup(id, idlen);
                e->id_len = idlen;
                e->hash = hash_id(id, idlen);
                e->row = p;
                e->row_len = (size_t)(le - p);
                size_t i = (size_t)e->hash & (x->nslot - 1);
                while (x->slot[i])
                    i = (i + 1) & (x->nslot - 1);
                x->slot[i] = ++x->nent;
            }
            p = le + 1;
        }
    }
    return x;
}

/* The digest the tables record for the main fixture rel: the manifest's,
 * else the experience row's; NULL when neither does. */
static const char *main_sha(vat_corpus *c, const json_t *exp, const char *rel, char out[65])
{
    if (vat_corpus_manifest_digest(c, rel, out) == 1)
        return out;
    const json_t *f = json_object_get(exp, "fixture");
    const char *s = json_string_value(json_object_get(f, "sha256"));
    if (!s || strlen(s) != 64)
        return NULL;
    memcpy(out, s, 65);
    return out;
}

/* The environment of task e into st; checker is the task's checker spec
 * (or NULL).  The rows it reads are parsed for it alone: the handle keeps
 * nothing of them. */
static void state_build(vat_corpus *c, const json_t *checker, struct env_entry *e,
                        struct env_state *st)
{
    json_t *row = json_loadb(e->row, e->row_len, JSON_REJECT_DUPLICATES, NULL);
    const json_t *prompt = json_array_get(json_object_get(row, "prompt"), 0);
    const char *ptext = json_string_value(json_object_get(prompt, "content"));
    const char *spec_text = json_string_value(json_object_get(row, "env_json"));
    json_t *spec = spec_text ? json_loads(spec_text, JSON_REJECT_DUPLICATES, NULL) : NULL;
    json_t *exp = vat_corpus_experience_parse(c, e->id);
    const char *rel = json_string_value(json_object_get(spec, "fixture"));
    const char *main_rel = json_string_value(json_object_get(json_object_get(exp, "fixture"),
                                                             "path"));
    char shabuf[65];
    const char *sha = rel ? main_sha(c, exp, rel, shabuf) : NULL;
    if (!json_is_object(row) || !ptext || !json_is_object(spec)) {
        snprintf(st->error, sizeof st->error, "task '%.100s': its env row cannot be read",
                 e->id);
    } else if (!exp || !checker) {
        snprintf(st->error, sizeof st->error,
                 "task '%.100s': its experience or verifiers row cannot be read", e->id);
    } else if (!rel || !main_rel || strcmp(rel, main_rel) != 0) {
        /* an episode reads the main fixture and nothing else: never a variant */
        snprintf(st->error, sizeof st->error,
                 "task '%.100s': its env reads '%.100s', not the task's main fixture", e->id,
                 rel ? rel : "");
        st->tampered = true;
    } else if (!sha) {
        snprintf(st->error, sizeof st->error,
                 "task '%.100s': no sha256 is recorded for its main fixture", e->id);
        st->tampered = true;
    } else {
        struct vat_verdict v;
        st->et = vat_env_task_new(spec, checker, vat_corpus_root(c), sha, &v);
        if (!st->et) {
            snprintf(st->error, sizeof st->error, "task '%.100s': %s", e->id, v.reason);
            st->tampered = strcmp(v.code, VAT_TAMPERED) == 0;
        } else {
            st->prompt = vat_xstrdup(ptext);
            st->prompt_len = strlen(ptext);
        }
    }
    json_decref(exp);
    json_decref(spec);
    json_decref(row);
}

/* A task's environment, made for lib/corpus.c to keep with the task's
 * state (vat_corpus_task_env). */
static struct vat_task_env *state_make(vat_corpus *c, const json_t *checker, void *arg)
{
    struct env_state *st = vat_xcalloc(1, sizeof *st);
    st->base.bytes = state_bytes;
    st->base.free = state_free;
    state_build(c, checker, arg, st);
    atomic_init(&st->counted, vat_env_task_bytes(st->et));
    return &st->base;
}

/* ---- the public calls ----------------------------------------------------------- */

struct vat_episode {
    vat_corpus *c;
    struct vat_task_ref *task; /* the task's state, holding st */
    struct env_state *st;
    struct vat_ep *ep;
};

static int fail(vat_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(vat_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void corpus_scorer(void *ctx, const char *answer, size_t len, struct vat_verdict *v,
                          bool *is_trap)
{
    struct vat_episode *e = ctx;
    struct vat_scored s;
    vat_corpus_task_score(e->c, e->task, answer, len, VAT_EXTRACT_RAW, &s);
    *v = s.v;
    *is_trap = s.is_trap;
    vat_scored_release(&s);
}

int vat_episode_open(vat_corpus *c, const char *task_id, vat_episode **out, vat_error *err)
{
    if (!out)
        return fail(err, "vat_episode_open: %s", "no episode to fill");
    *out = NULL;
    if (!c || !task_id)
        return fail(err, "vat_episode_open: %s", "no corpus or no task id");
    if (!vat_corpus_has_task(c, task_id))
        return fail(err, "vat: no task '%.100s' in the corpus at '%.200s'", task_id,
                    vat_corpus_root(c));
    struct env_index *x = vat_corpus_ext(c, index_make, index_free);
    if (x->error[0])
        return fail(err, "vat: %s", x->error);
    struct env_entry *e = index_find(x, task_id, strlen(task_id));
    if (!e)
        return fail(err, "vat: task '%.100s' has no row in the env table", task_id);
    struct vat_task_ref *task = vat_corpus_task_acquire(c, task_id);
    struct env_state *st = (struct env_state *)vat_corpus_task_env(c, task, state_make, e);
    if (st->tampered)
        vat_corpus_set_tampered(c, "out/env", "names a fixture the tables do not record");
    char why[256];
    if (vat_corpus_tampered(c, why, sizeof why)) {
        vat_corpus_task_release(task);
        return fail(err, "vat: the corpus is tampered: %s", why);
    }
    if (st->error[0]) {
        fail(err, "vat: %s", st->error);
        vat_corpus_task_release(task);
        return -1;
    }
    struct vat_episode *ep = vat_xcalloc(1, sizeof *ep);
    ep->c = c;
    ep->task = task;
    ep->st = st;
    ep->ep = vat_ep_new(st->et, corpus_scorer, ep);
    *out = ep;
    return 0;
}

void vat_episode_close(vat_episode *ep)
{
    if (!ep)
        return;
    vat_ep_free(ep->ep);
    vat_corpus_task_release(ep->task);
    free(ep);
}

const char *vat_episode_prompt(const vat_episode *ep)
{
    return ep ? ep->st->prompt : "";
}

const char *vat_episode_tools(const vat_episode *ep)
{
    /* the library's own schemas of the task's tool set: what its episodes
     * take (the env table's tools column holds the same text) */
    return ep ? vat_env_tools_json(vat_env_task_tools(ep->st->et)) : "[]";
}

int vat_episode_step(vat_episode *ep, const char *tool, const char *arguments, size_t len,
                     vat_error *err)
{
    if (!ep || !tool)
        return fail(err, "vat_episode_step: %s", "no episode or no tool name");
    if (!arguments && len)
        return fail(err, "vat_episode_step: %s", "no argument text");
    vat_ep_call(ep->ep, tool, strlen(tool), arguments, len, NULL);
    /* a query may have pooled a sandbox or kept a statement: counted
     * again, and room made (submit's check counts itself; describe, try
     * and a regex task's sample keep nothing) */
    if (strcmp(tool, "sql") == 0 || strcmp(tool, "sample") == 0) {
        size_t now = vat_env_task_bytes(ep->st->et), was = atomic_load(&ep->st->counted);
        if (now > was || now < was / 2) {
            atomic_store(&ep->st->counted, now);
            vat_corpus_task_recharge(ep->c, ep->task);
        }
    }
    return 0;
}

const char *vat_episode_observation(const vat_episode *ep, size_t *len)
{
    size_t n = 0;
    const char *o = "";
    if (ep && vat_ep_calls(ep->ep) > 0)
        o = vat_ep_call_last(ep->ep, &n);
    if (len)
        *len = n;
    return o;
}

int vat_episode_done(const vat_episode *ep)
{
    return ep && vat_ep_done(ep->ep);
}

double vat_episode_reward(const vat_episode *ep)
{
    return ep ? vat_ep_reward(ep->ep) : 0.0;
}

const char *vat_episode_code(const vat_episode *ep)
{
    return ep ? vat_ep_verdict(ep->ep)->code : "";
}

const char *vat_episode_reason(const vat_episode *ep)
{
    return ep ? vat_ep_verdict(ep->ep)->reason : "";
}

int vat_episode_is_trap(const vat_episode *ep)
{
    return ep && vat_ep_is_trap(ep->ep);
}

int vat_episode_calls(const vat_episode *ep)
{
    return ep ? vat_ep_calls(ep->ep) : 0;
}

const char *vat_tools_json(const char *tool_set)
{
    return vat_env_tools_json(tool_set);
}

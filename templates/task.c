/* task.c — the task record's helpers: identity, clearing for a redraw,
 * fixture records and the template's resolved params.  See task.h.
 * Exports vat_task_init, vat_task_clear, vat_task_add_fixture,
 * vat_fixture_bucket, vat_task_fixture_relpath, vat_task_int, vat_task_real, vat_task_bool,
 * vat_task_str and vat_task_inline_cap. */
#include "task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"

void vat_task_init(struct vat_task *t, const struct vat_template *tmpl, uint32_t index,
                   const char *root)
{
    memset(t, 0, sizeof *t);
    t->tmpl = tmpl;
    t->index = index;
    t->root = root;
    snprintf(t->id, sizeof t->id, "%s-%05u", tmpl ? tmpl->name : "task", (unsigned)index);
}

void vat_task_clear(struct vat_task *t)
{
    free(t->prompt);
    json_decref(t->params);
    json_decref(t->spec);
    for (int i = 0; i < t->n_fixtures; i++) {
        free(t->fixture[i].path);
        json_decref(t->fixture[i].columns);
    }
    if (t->priv && t->priv_free)
        t->priv_free(t->priv);
    free(t->gold);
    free(t->trap);
    free(t->malformed);
    free(t->reasoned);
    t->reasoned = NULL;
    for (int i = 0; i < t->n_traps; i++)
        free(t->traps[i].answer);
    memset(t->traps, 0, sizeof t->traps);
    t->n_traps = 0;
    t->phrasing[0] = 0;
    t->prompt = NULL;
    t->params = NULL;
    t->spec = NULL;
    memset(t->fixture, 0, sizeof t->fixture);
    t->n_fixtures = 0;
    t->priv = NULL;
    t->priv_free = NULL;
    t->gold = t->trap = t->malformed = NULL;
    t->answer_form = NULL;
    t->trapmods = t->trapmods_off = 0;
    json_decref(t->env);
    t->env = NULL;
    t->difficulty = 0;
    t->self_contained = false;
    if (t->level_cfg) {
        t->cfg = t->base_cfg;
        json_decref(t->level_cfg);
        t->level_cfg = NULL;
    }
}

struct vat_fixture *vat_task_add_fixture(struct vat_task *t, const char *relpath,
                                         const char *format, const char *role)
{
    if (t->n_fixtures >= VAT_MAX_FIXTURES) {
        fprintf(stderr, "vat: task '%s' has more than %d fixtures\n", t->id, VAT_MAX_FIXTURES);
        abort();
    }
    struct vat_fixture *f = &t->fixture[t->n_fixtures++];
    memset(f, 0, sizeof *f);
    f->path = vat_xstrdup(relpath);
    f->format = format;
    f->role = role;
    f->columns = json_array();
    return f;
}

void vat_fixture_bucket(uint32_t index, char out[16])
{
    snprintf(out, 16, "%03u", (unsigned)(index / VAT_FIXTURE_BUCKET));
}

char *vat_task_fixture_relpath(const struct vat_task *t, const char *suffix)
{
    char bucket[16];
    vat_fixture_bucket(t->index, bucket);
    return vat_xasprintf("fixtures/%s/%s/%s%s", t->tmpl ? t->tmpl->name : "task", bucket, t->id,
                         suffix);
}

static const json_t *task_param(const struct vat_task *t, const char *name)
{
    const json_t *v = t->cfg ? json_object_get(t->cfg, name) : NULL;
    if (!v) {
        fprintf(stderr, "vat: template '%s' reads undeclared param '%s'\n",
                t->tmpl ? t->tmpl->name : "?", name);
        abort();
    }
    return v;
}

long vat_task_int(const struct vat_task *t, const char *name)
{
    return (long)json_integer_value(task_param(t, name));
}

double vat_task_real(const struct vat_task *t, const char *name)
{
    return json_number_value(task_param(t, name));
}

bool vat_task_bool(const struct vat_task *t, const char *name)
{
    return json_is_true(task_param(t, name));
}

const char *vat_task_str(const struct vat_task *t, const char *name)
{
    const char *s = json_string_value(task_param(t, name));
    return s ? s : "";
}

size_t vat_task_inline_cap(const struct vat_task *t)
{
    return t->inline_full ? SIZE_MAX / 4 : t->inline_max_bytes;
}

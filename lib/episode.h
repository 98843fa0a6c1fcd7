/* episode.h — tool-use episodes on a task (include/libvat.h is the public
 * face; this is what the library and the builder share).
 *
 * A task's environment (struct vat_env_task) is its main fixture loaded
 * as the task's env spec says (the env table's env_json, written by the
 * builder: templates/expert.c), read once and shared by every episode on
 * the task: the tables an agent queries, their description, and for regex
 * tasks the example lines.  An episode (struct vat_ep) takes tool calls
 * one at a time and answers each with an observation, within the bounds
 * below; `submit` ends it with the verdict of the task's checker, which
 * the caller provides (the corpus's scoring at run time, the template's
 * check at build time).  The same calls give the same observation bytes.
 *
 * Env spec (JSON object):
 *   "tools":   "data" | "regex"
 *   "fixture": the main fixture's path beneath the root (the only file read)
 *   "format":  "csv" | "sqlite" | "xlsx"
 *   "tables":  data tools: for sqlite, the names of the tables the agent
 *              may read (the fixture is queried as it is); for csv and
 *              xlsx, how each table is loaded, in order:
 *                {"name", "columns": [[name, type], ...], "skip": k}
 *                    csv: the records after the first k (the header and
 *                    any lines above it), one row each;
 *                {"name", "columns", "sheet", "range": "A3:F73"}
 *                    xlsx: the cells of range on sheet, one row per row;
 *                {"name", "notes": k} (csv) or {"name", "sheet", "notes": k}
 *                    (xlsx): the first k records or rows as
 *                    (line INTEGER, text TEXT), the text the record's
 *                    non-empty fields or cells joined by a space;
 *              a cell is bound as text into its column's declared type
 *              (TEXT, INTEGER, REAL or NUMERIC), an empty one is NULL, as
 *              the sql checker's CSV loader does (verifiers/sqlload.c).
 *   regex tasks: the fixture is the example lines' CSV (line_id, text).
 * Exports struct vat_env_task, struct vat_ep and their calls. */
#ifndef VAT_EPISODE_H
#define VAT_EPISODE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "vat.h"

/* The bounds of one episode (docs/limits.md gives each with its verdict). */
#define VAT_EP_MAX_CALLS 32         /* tool calls, submit included        */
#define VAT_EP_MAX_SQL 16           /* sql and sample calls (data tools)  */
#define VAT_EP_QUERY_ROWS 1000      /* rows one query may return          */
#define VAT_EP_MAX_ROWS 5000        /* rows all its queries return        */
#define VAT_EP_SHOW_ROWS 50         /* rows an observation shows          */
#define VAT_EP_SAMPLE_MAX 20        /* n of sample()                      */
#define VAT_EP_CELL_BYTES 200       /* text of one cell shown             */
#define VAT_EP_OBS_BYTES 8192       /* one observation                    */
#define VAT_EP_TOTAL_BYTES 65536    /* all observations of the episode    */
#define VAT_EP_ARG_BYTES 65536      /* one call's name and arguments      */
/* The verdict code of an episode a bound ended (score 0). */
#define VAT_EPISODE_LIMIT "episode_limit"

struct vat_env_task;

/* Loads the environment of a task: spec as above, checker (the task's
 * checker spec; for regex tasks its limits are those `try` runs under,
 * its cases are never read), root the corpus root, sha256 the digest the
 * tables record for the main fixture (NULL: not checked).  NULL with
 * *err set (VAT_TAMPERED when the digest differs, VAT_INTERNAL else). */
struct vat_env_task *vat_env_task_new(const json_t *spec, const json_t *checker,
                                      const char *root, const char *sha256,
                                      struct vat_verdict *err);
void vat_env_task_free(struct vat_env_task *et);
/* "data" or "regex". */
const char *vat_env_task_tools(const struct vat_env_task *et);
/* The tables and their rows as describe() shows them (data tools). */
const char *vat_env_task_describe(const struct vat_env_task *et);
/* The table names, in order (data tools); NULL past the last. */
const char *vat_env_task_table(const struct vat_env_task *et, size_t i);
/* The bytes et holds now (its share of a corpus handle's cache budget):
 * the loaded image, its pooled sandboxes with their page caches and
 * statements (growing as queries pool more), the description, the
 * example lines.  Safe beside running episodes. */
size_t vat_env_task_bytes(const struct vat_env_task *et);

/* How submit's answer is scored: fills *v and *is_trap. */
typedef void (*vat_ep_scorer)(void *ctx, const char *answer, size_t len, struct vat_verdict *v,
                              bool *is_trap);

struct vat_ep;
/* A new episode on et (which must outlive it), scoring with scorer. */
struct vat_ep *vat_ep_new(const struct vat_env_task *et, vat_ep_scorer scorer, void *ctx);
void vat_ep_free(struct vat_ep *ep);
/* One tool call: name (nlen bytes) and its arguments as the JSON text of
 * an object (alen bytes; empty is {}).  Every call gets an observation,
 * errors included; returns the observation (borrowed until the next call)
 * and its length. */
const char *vat_ep_call(struct vat_ep *ep, const char *name, size_t nlen, const char *args,
                        size_t alen, size_t *olen);
/* The last call's observation again (borrowed) and its length. */
const char *vat_ep_call_last(const struct vat_ep *ep, size_t *olen);
bool vat_ep_done(const struct vat_ep *ep);
/* The submitted answer's score (0 until then, and when a bound ended it). */
double vat_ep_reward(const struct vat_ep *ep);
/* The verdict that ended the episode (code "" while it runs). */
const struct vat_verdict *vat_ep_verdict(const struct vat_ep *ep);
bool vat_ep_is_trap(const struct vat_ep *ep);
/* Calls taken so far. */
int vat_ep_calls(const struct vat_ep *ep);

/* The OpenAI function-tool schemas of a tool set ("data" or "regex") as
 * JSON text (static). */
const char *vat_env_tools_json(const char *tools);

#endif

/* bench_check.c — checker throughput, the cost a user pays when vat's
 * checkers serve as reward functions: for every task of a built corpus,
 * the gold and the trap answers are scored through the task's own check
 * (rebuilt from the verifiers table, as `vat check` does), repeatedly,
 * and checks per second are reported per template.
 *
 * usage: vat-bench --root DIR [--seconds S]   (default 1 s per template) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonout.h"
#include "tables.h"
#include "template.h"
#include "vat.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads every row of out/<table>/{train,test}.jsonl into one array. */
static json_t *read_rows(const char *root, const char *table)
{
    json_t *rows = json_array();
    for (int s = 0; s < 2; s++) {
        char *rel = vat_xasprintf("out/%s/%s.jsonl", table, s ? "test" : "train");
        char *path = vat_path_join(root, rel);
        FILE *f = fopen(path, "rb");
        free(rel);
        free(path);
        if (!f)
            continue;
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while ((n = getline(&line, &cap, f)) > 0) {
            json_t *r = json_loadb(line, (size_t)n, 0, NULL);
            if (r)
                json_array_append_new(rows, r);
        }
        free(line);
        fclose(f);
    }
    return rows;
}

int main(int argc, char **argv)
{
    const char *root = NULL;
    double seconds = 1.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--root") == 0 && i + 1 < argc)
            root = argv[++i];
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: vat-bench --root DIR [--seconds S]\n");
            return 2;
        }
    }
    if (!root || seconds <= 0) {
        fprintf(stderr, "usage: vat-bench --root DIR [--seconds S]\n");
        return 2;
    }
    json_t *ver = read_rows(root, "verifiers"), *ro = read_rows(root, "rollouts");
    if (json_array_size(ver) == 0) {
        fprintf(stderr, "vat-bench: no corpus at '%s' (run 'vat build --root %s')\n", root, root);
        return 2;
    }
    printf("%-20s %-8s %6s %12s %12s\n", "template", "checker", "tasks", "checks/s", "us/check");
    for (size_t k = 0; vat_registry[k]; k++) {
        const struct vat_template *tm = vat_registry[k];
        /* The template's tasks with their gold and trap answers. */
        size_t n = 0, cap = 0;
        struct item {
            struct vat_task t;
            const char *answer[2];
        } *items = NULL;
        size_t i;
        json_t *row;
        json_array_foreach(ver, i, row) {
            if (strcmp(json_string_value(json_object_get(row, "template")), tm->name) != 0)
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 16;
                items = vat_xrealloc(items, cap * sizeof *items);
            }
            struct item *it = &items[n++];
            vat_task_init(&it->t, tm, 0, root);
            snprintf(it->t.id, sizeof it->t.id, "%s",
                     json_string_value(json_object_get(row, "task_id")));
            it->t.spec = vat_verifier_spec(row);
            it->answer[0] = it->answer[1] = NULL;
            size_t j;
            json_t *r;
            json_array_foreach(ro, j, r) {
                if (strcmp(json_string_value(json_object_get(r, "task_id")), it->t.id) != 0)
                    continue;
                const char *role = json_string_value(json_object_get(r, "role"));
                const char *ans = json_string_value(json_object_get(r, "answer"));
                if (strcmp(role, "gold") == 0)
                    it->answer[0] = ans;
                else if (strcmp(role, "trap") == 0)
                    it->answer[1] = ans;
            }
        }
        if (n == 0)
            continue;
        long checks = 0;
        double t0 = now(), t1 = t0;
        while (t1 - t0 < seconds) {
            for (size_t x = 0; x < n; x++)
                for (int a = 0; a < 2; a++)
                    if (items[x].answer[a]) {
                        struct vat_verdict v = tm->check(&items[x].t, items[x].answer[a],
                                                         strlen(items[x].answer[a]));
                        (void)v;
                        checks++;
                    }
            t1 = now();
        }
        double rate = (double)checks / (t1 - t0);
        printf("%-20s %-8s %6zu %12.0f %12.1f\n", tm->name,
               json_string_value(json_object_get(items[0].t.spec, "checker")), n, rate,
               1e6 / rate);
        for (size_t x = 0; x < n; x++)
            vat_task_clear(&items[x].t);
        free(items);
    }
    json_decref(ver);
    json_decref(ro);
    return 0;
}

/* fuzz_predictions.c — libFuzzer harness of the predictions-line reader of
 * `vat score` (src/predline.c).  Never crashes; a line it reads has a task
 * id (valid UTF-8, no NUL) and an answer; a line it refuses says why in
 * one line.  Differential: a line jansson decodes as an object with one
 * string task_id and an answer must be read, with the same task id, and a
 * string answer must come back byte for byte. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "predline.h"

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_predictions: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *line = (const char *)data;
    struct vat_pred p;
    int rc = vat_pred_read(line, size, &p);
    if (rc == 0) {
        check(p.task_id && p.answer && !p.code, "a read line lacks its id or answer");
    } else {
        check(p.code != NULL, "a refused line has no code");
        size_t n = strnlen(p.reason, sizeof p.reason);
        check(n > 0 && n < sizeof p.reason && !memchr(p.reason, '\n', n),
              "a refused line's reason is not one line");
    }
    if (p.task_id) {
        json_t *s = json_string(p.task_id);
        check(s != NULL, "the task id is not valid UTF-8");
        json_decref(s);
    }
    json_t *o = json_loadb(line, size, JSON_REJECT_DUPLICATES, NULL);
    const json_t *id = json_object_get(o, "task_id"), *ans = json_object_get(o, "answer");
    const json_t *sample = json_object_get(o, "sample");
    if (json_is_object(o) && json_is_string(id) && !memchr(json_string_value(id), 0,
                                                           json_string_length(id)) &&
        ans && !sample && !memchr(line, '\n', size) &&
        /* jansson takes a NUL byte for the end of its input and so reads
         * '{"answer":{"a":1\0}}' as an object; a NUL outside a string is
         * not JSON, and vat refuses the line (counted against its task). */
        !memchr(line, 0, size)) {
        check(rc == 0, "a line jansson reads is refused");
        check(strcmp(p.task_id, json_string_value(id)) == 0, "the task id differs");
        if (json_is_string(ans))
            check(p.answer_len == json_string_length(ans) &&
                      memcmp(p.answer, json_string_value(ans), p.answer_len) == 0,
                  "the string answer differs");
    }
    json_decref(o);
    vat_pred_release(&p);
    return 0;
}

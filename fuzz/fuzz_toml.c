/* fuzz_toml.c — libFuzzer harness of the seeds.toml reader: the TOML
 * parser (src/toml.c) and the config built on it (src/config.c).  Either
 * parses or fails with a one-line "PATH:LINE: reason" message; never
 * crashes. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "toml.h"

static void assert_one_line(const struct vat_err *e)
{
    size_t n = strnlen(e->msg, sizeof e->msg);
    if (n == 0 || n >= sizeof e->msg || memchr(e->msg, '\n', n) ||
        strncmp(e->msg, "fuzz.toml", 9) != 0) {
        fprintf(stderr, "bad error message: %.300s\n", e->msg);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vat_err e = {{0}};
    json_t *lines = NULL;
    json_t *doc = vat_toml_parse((const char *)data, size, "fuzz.toml", &lines, &e);
    if (doc) {
        if (!json_is_object(doc) || !json_is_object(lines))
            abort();
        char *dump = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
        free(dump);
    } else {
        assert_one_line(&e);
    }
    json_decref(doc);
    json_decref(lines);

    struct vat_config c;
    memset(&e, 0, sizeof e);
    if (vat_config_parse(&c, (const char *)data, size, "fuzz.toml", &e) == 0)
        vat_config_release(&c);
    else if (!e.msg[0] || strchr(e.msg, '\n'))
        abort();
    return 0;
}

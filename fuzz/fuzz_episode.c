/* fuzz_episode.c — libFuzzer harness of tool-use episodes (lib/episode.c).
 * At start-up it writes, in a temporary root, a CSV fixture with a notes
 * line, an SQLite fixture, a workbook and regex example lines, and loads
 * each as an environment.  Input: the first byte picks the environment;
 * the rest is tool calls, one per line, "<name>\t<arguments JSON>".  Each
 * call's observation must be valid UTF-8 within its bound, the episode's
 * observations within theirs, the reward 0 or 1 and 0 until done; the
 * same calls on a second episode give the same bytes; a call after the
 * end says the episode is over; no fixture's bytes ever change. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "episode.h"
#include "fuzz_common.h"
#include "verifiers.h"
#include "xlsxio.h"

enum { E_CSV, E_SQLITE, E_XLSX, E_REGEX, N_ENVS };

static char root[64];
static struct vat_env_task *envs[N_ENVS];
static json_t *value_spec;
static char fixture_sha[N_ENVS][65];
static const char *const rel[N_ENVS] = {"fixtures/orders.csv", "fixtures/shop.sqlite",
                                        "fixtures/orders.xlsx", "fixtures/lines.csv"};

static void write_file(const char *r, const char *text)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", root, r);
    FILE *f = fopen(path, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        abort();
}

static void digest(int k, char out[65])
{
    char *data;
    size_t n;
    if (vat_read_file_beneath(root, rel[k], (size_t)1 << 26, &data, &n, NULL) != 0)
        abort();
    vat_sha256_hex(data, n, out);
    free(data);
}

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/vat-fuzz-episode-XXXXXX");
    if (!mkdtemp(root))
        abort();
    char path[160];
    snprintf(path, sizeof path, "%s/fixtures", root);
    if (mkdir(path, 0777) != 0)
        abort();
    write_file(rel[E_CSV], "Orders export,,,\n"
                           "order_id,region,status,amount\n"
                           "A-1,North,paid,12.50\nA-2,South,open,\n"
                           "\"A-3\",\"Nor|th\",paid,-3\nA-4,East,paid,1e3\n");
    write_file(rel[E_REGEX], "line_id,text\ne1,deploy 2024-03-07 ok\ne2,\"x, 2024-13-01\"\n");
    snprintf(path, sizeof path, "%s/%s", root, rel[E_SQLITE]);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db,
                     "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);"
                     "CREATE TABLE orders (id INTEGER, customer_id INTEGER, amount REAL);"
                     "INSERT INTO customers VALUES (1, 'Acme'), (2, NULL);"
                     "INSERT INTO orders VALUES (10, 1, 5.5), (11, 2, NULL), (12, 9, 1);",
                     NULL, NULL, NULL) != SQLITE_OK)
        abort();
    sqlite3_close(db);
    struct vat_xl_book book = VAT_XL_BOOK_INIT;
    struct vat_xl_sheet *s = vat_xl_add_sheet(&book, "Orders");
    vat_xl_set_str(s, 0, 0, "Orders", VAT_XL_TITLE);
    vat_xl_set_str(s, 1, 0, "order_id", VAT_XL_BOLD);
    vat_xl_set_str(s, 1, 1, "amount", VAT_XL_BOLD);
    vat_xl_set_str(s, 2, 0, "A-1", VAT_XL_PLAIN);
    vat_xl_set_num(s, 2, 1, 4.25, VAT_XL_PLAIN);
    vat_xl_set_str(s, 3, 0, "A-2", VAT_XL_PLAIN);
    vat_xl_set_str(s, 3, 1, "7", VAT_XL_PLAIN);
    struct vat_err e = {{0}};
    if (vat_xl_write(&book, root, rel[E_XLSX], &e) != 0)
        abort();
    vat_xl_release(&book);
    static const char *const specs[N_ENVS] = {
        "{\"tools\":\"data\",\"fixture\":\"fixtures/orders.csv\",\"format\":\"csv\",\"tables\":["
        "{\"name\":\"orders\",\"columns\":[[\"order_id\",\"TEXT\"],[\"region\",\"TEXT\"],"
        "[\"status\",\"TEXT\"],[\"amount\",\"REAL\"]],\"skip\":2},"
        "{\"name\":\"orders_notes\",\"notes\":1}]}",
        "{\"tools\":\"data\",\"fixture\":\"fixtures/shop.sqlite\",\"format\":\"sqlite\","
        "\"tables\":[\"customers\",\"orders\"]}",
        "{\"tools\":\"data\",\"fixture\":\"fixtures/orders.xlsx\",\"format\":\"xlsx\",\"tables\":["
        "{\"name\":\"orders\",\"columns\":[[\"order_id\",\"TEXT\"],[\"amount\",\"REAL\"]],"
        "\"sheet\":\"Orders\",\"range\":\"A3:B4\"},"
        "{\"name\":\"notes\",\"sheet\":\"Orders\",\"notes\":1}]}",
        "{\"tools\":\"regex\",\"fixture\":\"fixtures/lines.csv\",\"format\":\"csv\"}",
    };
    json_t *checker = json_loads(
        "{\"checker\":\"regex\",\"dialect\":\"python-re\",\"match_limit\":1000000,"
        "\"depth_limit\":10000,\"heap_limit_kib\":20000,\"max_pattern_bytes\":1024,"
        "\"cases\":[]}",
        0, NULL);
    for (int k = 0; k < N_ENVS; k++) {
        json_t *spec = json_loads(specs[k], 0, NULL);
        struct vat_verdict v;
        envs[k] = vat_env_task_new(spec, checker, root, NULL, &v);
        if (!envs[k]) {
            fprintf(stderr, "env %d: %s\n", k, v.reason);
            abort();
        }
        json_decref(spec);
        digest(k, fixture_sha[k]);
    }
    json_decref(checker);
    value_spec = json_loads("{\"checker\":\"value\",\"shape\":\"number\",\"rel_tol\":1e-9,"
                            "\"abs_tol\":1e-6,\"expected\":9}",
                            0, NULL);
}

static void scorer(void *ctx, const char *answer, size_t len, struct vat_verdict *v,
                   bool *is_trap)
{
    (void)ctx;
    *v = vat_check_value(value_spec, answer, len);
    *is_trap = false;
}

/* Runs the calls of data[0..n) on a new episode of env k; returns the
 * observations joined (new string). */
static char *run(int k, const char *data, size_t n)
{
    struct vat_ep *ep = vat_ep_new(envs[k], scorer, NULL);
    struct vat_buf all = VAT_BUF_INIT;
    vat_buf_putn(&all, "", 0);
    size_t total = 0;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(data + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - data) : n;
        const char *tab = memchr(data + i, '\t', end - i);
        size_t nlen = tab ? (size_t)(tab - data) - i : end - i;
        const char *args = tab ? tab + 1 : "";
        size_t alen = tab ? end - (size_t)(tab - data) - 1 : 0;
        bool was_done = vat_ep_done(ep);
        size_t olen;
        const char *obs = vat_ep_call(ep, data + i, nlen, args, alen, &olen);
        json_t *s = json_stringn(obs, olen);
        if (!s || olen > VAT_EP_OBS_BYTES || strlen(obs) != olen)
            abort(); /* not valid UTF-8, over its bound, or holding a NUL */
        json_decref(s);
        if (was_done && strcmp(obs, "error: the episode is over") != 0)
            abort();
        total += was_done ? 0 : olen;
        if (total > VAT_EP_TOTAL_BYTES + VAT_EP_OBS_BYTES)
            abort();
        double r = vat_ep_reward(ep);
        if ((r != 0.0 && r != 1.0) || (!vat_ep_done(ep) && r != 0.0))
            abort();
        if (vat_ep_done(ep))
            fuzz_assert_verdict(vat_ep_verdict(ep));
        vat_buf_putn(&all, obs, olen);
        vat_buf_putc(&all, '\n');
        i = end + 1;
    }
    vat_ep_free(ep);
    return vat_buf_detach(&all);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!value_spec)
        setup();
    if (size < 1)
        return 0;
    int k = data[0] % N_ENVS;
    char *a = run(k, (const char *)data + 1, size - 1);
    char *b = run(k, (const char *)data + 1, size - 1);
    if (strcmp(a, b) != 0)
        abort(); /* the same calls, other bytes */
    free(a);
    free(b);
    char sha[65];
    digest(k, sha);
    if (strcmp(sha, fixture_sha[k]) != 0)
        abort();
    return 0;
}

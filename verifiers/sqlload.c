/* sqlload.c — the CSV loader of the sql checker: how a CSV fixture becomes
 * the SQLite database an answer's query runs on, for the program form of
 * the analytics templates.  The prompt states the same rules, and
 * tests/python_compat.py repeats them with Python's csv and sqlite3:
 *   - the spec's "load" is {"table": T, "columns": [[name, type], ...]},
 *     type one of TEXT, INTEGER, REAL, NUMERIC;
 *   - the file is RFC 4180 CSV (comma, double quotes doubled inside a
 *     quoted field, records ended by LF or CRLF, UTF-8); its first record
 *     must be exactly the column names, in order;
 *   - the table is created as CREATE TABLE "T" ("name" type, ...) and every
 *     later record inserted with each cell bound as text, so SQLite's
 *     column affinity converts numbers ('12.50' in a REAL column is 12.5);
 *     an empty cell is NULL;
 *   - a record with another cell count, or a malformed field, refuses the
 *     file (the checker's verdict is internal: the fixture, not the answer,
 *     is wrong).
 * The database is built in memory and serialised; the checker then runs
 * every query on a read-only copy of that image, exactly as for a SQLite
 * fixture.  Exports vat_sql_load_valid and vat_sql_csv_image. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "verifiers.h"

#define LOAD_MAX_COLUMNS 64

static bool ident_ok(const char *s)
{
    if (!s || !*s || strlen(s) > 64)
        return false;
    for (const char *p = s; *p; p++) {
        bool alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_';
        if (!alpha && !(p > s && *p >= '0' && *p <= '9'))
            return false;
    }
    return true;
}

static bool type_ok(const char *t)
{
    static const char *const ok[] = {"TEXT", "INTEGER", "REAL", "NUMERIC"};
    for (size_t i = 0; t && i < sizeof ok / sizeof *ok; i++)
        if (strcmp(t, ok[i]) == 0)
            return true;
    return false;
}

bool vat_sql_load_valid(const json_t *load, char *why, size_t cap)
{
    const json_t *cols = json_object_get(load, "columns");
    if (!json_is_object(load) || !ident_ok(json_string_value(json_object_get(load, "table")))) {
        snprintf(why, cap, "'load' must name its table with a plain identifier");
        return false;
    }
    if (!json_is_array(cols) || json_array_size(cols) == 0 ||
        json_array_size(cols) > LOAD_MAX_COLUMNS) {
        snprintf(why, cap, "'load.columns' must be an array of 1 to %d columns", LOAD_MAX_COLUMNS);
        return false;
    }
    for (size_t i = 0; i < json_array_size(cols); i++) {
        const json_t *c = json_array_get(cols, i);
        if (!json_is_array(c) || json_array_size(c) != 2 ||
            !ident_ok(json_string_value(json_array_get(c, 0))) ||
            !type_ok(json_string_value(json_array_get(c, 1)))) {
            snprintf(why, cap, "'load.columns' item %zu must be [name, TEXT|INTEGER|REAL|NUMERIC]",
                     i);
            return false;
        }
    }
    return true;
}

/* One field of the CSV text, unquoted into buf.  *pos moves past the
 * field's terminator; *eor is set at the end of a record.  0, or -1 on a
 * malformed field. */
static int next_field(const unsigned char *s, size_t n, size_t *pos, char **buf, size_t *cap,
                      bool *eor)
{
    size_t i = *pos, len = 0;
    bool quoted = i < n && s[i] == '"';
#define PUT(ch)                                                                                    \
    do {                                                                                           \
        if (len + 2 > *cap) {                                                                      \
            *cap = *cap ? 2 * *cap : 64;                                                           \
            *buf = vat_xrealloc(*buf, *cap);                                                       \
        }                                                                                          \
        (*buf)[len++] = (char)(ch);                                                                \
    } while (0)
    if (quoted) {
        i++;
        for (;;) {
            if (i >= n)
                return -1; /* an unterminated quoted field */
            if (s[i] == '"') {
                if (i + 1 < n && s[i + 1] == '"') {
                    PUT('"');
                    i += 2;
                    continue;
                }
                i++;
                break;
            }
            PUT(s[i]);
            i++;
        }
    } else {
        while (i < n && s[i] != ',' && s[i] != '\n' && s[i] != '\r') {
            if (s[i] == '"' || s[i] == 0)
                return -1; /* a quote inside an unquoted field */
            PUT(s[i]);
            i++;
        }
    }
#undef PUT
    if (!*buf) {
        *cap = 64;
        *buf = vat_xmalloc(*cap);
    }
    (*buf)[len] = 0;
    if (i >= n) {
        *eor = true;
    } else if (s[i] == ',') {
        *eor = false;
        i++;
    } else if (s[i] == '\n') {
        *eor = true;
        i++;
    } else if (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') {
        *eor = true;
        i += 2;
    } else {
        return -1;
    }
    *pos = i;
    return 0;
}

static void put_ident(char *out, size_t cap, size_t *len, const char *id)
{
    *len += (size_t)snprintf(out + *len, *len < cap ? cap - *len : 0, "\"%s\"", id);
}

int vat_sql_csv_image(const unsigned char *csv, size_t n, const json_t *load, unsigned char **img,
                      size_t *img_n, char *why, size_t cap)
{
    *img = NULL;
    *img_n = 0;
    if (!vat_sql_load_valid(load, why, cap))
        return -1;
    if (memchr(csv, 0, n)) {
        snprintf(why, cap, "holds a NUL byte");
        return -1;
    }
    const char *table = json_string_value(json_object_get(load, "table"));
    const json_t *cols = json_object_get(load, "columns");
    size_t nc = json_array_size(cols);
    char create[LOAD_MAX_COLUMNS * 96 + 128], insert[LOAD_MAX_COLUMNS * 4 + 128];
    size_t cl = 0, il = 0;
    cl += (size_t)snprintf(create, sizeof create, "CREATE TABLE ");
    put_ident(create, sizeof create, &cl, table);
    cl += (size_t)snprintf(create + cl, sizeof create - cl, " (");
    il += (size_t)snprintf(insert, sizeof insert, "INSERT INTO ");
    put_ident(insert, sizeof insert, &il, table);
    il += (size_t)snprintf(insert + il, sizeof insert - il, " VALUES (");
    for (size_t i = 0; i < nc; i++) {
        const json_t *c = json_array_get(cols, i);
        if (i) {
            cl += (size_t)snprintf(create + cl, sizeof create - cl, ", ");
            il += (size_t)snprintf(insert + il, sizeof insert - il, ", ");
        }
        put_ident(create, sizeof create, &cl, json_string_value(json_array_get(c, 0)));
        cl += (size_t)snprintf(create + cl, sizeof create - cl, " %s",
                               json_string_value(json_array_get(c, 1)));
        il += (size_t)snprintf(insert + il, sizeof insert - il, "?");
    }
    snprintf(create + cl, sizeof create - cl, ")");
    snprintf(insert + il, sizeof insert - il, ")");

    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    char *field = NULL;
    size_t fcap = 0, pos = 0, record = 0;
    int rc = -1;
    if (sqlite3_open_v2(":memory:", &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        sqlite3_exec(db, create, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, insert, -1, &st, NULL) != SQLITE_OK) {
        snprintf(why, cap, "cannot be loaded: %s", db ? sqlite3_errmsg(db) : "out of memory");
        goto out;
    }
    /* A final line end does not start a record. */
    while (pos < n) {
        size_t k = 0;
        bool eor = false;
        record++;
        while (!eor) {
            if (next_field(csv, n, &pos, &field, &fcap, &eor) != 0) {
                snprintf(why, cap, "record %zu: malformed CSV field", record);
                goto out;
            }
            if (k >= nc) {
                snprintf(why, cap, "record %zu has more than %zu cells", record, nc);
                goto out;
            }
            if (record == 1) {
                const char *want = json_string_value(json_array_get(json_array_get(cols, k), 0));
                if (strcmp(field, want) != 0) {
                    snprintf(why, cap, "header cell %zu is not '%s'", k + 1, want);
                    goto out;
                }
            } else if (*field ? sqlite3_bind_text(st, (int)k + 1, field, -1, SQLITE_TRANSIENT)
                              : sqlite3_bind_null(st, (int)k + 1)) {
                snprintf(why, cap, "cannot be loaded: %s", sqlite3_errmsg(db));
                goto out;
            }
            k++;
        }
        if (k != nc) {
            snprintf(why, cap, "record %zu has %zu cells, the header %zu", record, k, nc);
            goto out;
        }
        if (record > 1) {
            if (sqlite3_step(st) != SQLITE_DONE) {
                snprintf(why, cap, "record %zu cannot be loaded: %s", record, sqlite3_errmsg(db));
                goto out;
            }
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
        }
    }
    if (record == 0) {
        snprintf(why, cap, "has no header row");
        goto out;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(why, cap, "cannot be loaded: %s", sqlite3_errmsg(db));
        goto out;
    }
    sqlite3_int64 sz = 0;
    unsigned char *ser = sqlite3_serialize(db, "main", &sz, 0);
    if (!ser || sz < 512) {
        sqlite3_free(ser);
        snprintf(why, cap, "cannot be serialised");
        goto out;
    }
    *img = vat_xmalloc((size_t)sz);
    memcpy(*img, ser, (size_t)sz);
    *img_n = (size_t)sz;
    sqlite3_free(ser);
    rc = 0;
out:
    free(field);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

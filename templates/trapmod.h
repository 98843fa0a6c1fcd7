/* trapmod.h — cross-cutting trap modules: mistakes any analytics template
 * can arm on top of its own trap, at the CSV layer every one of them goes
 * through (or, for a SQLite fixture, in the tables the template lists).
 *
 * A template declares the modules it accepts (struct vat_trapmods, the
 * `modules` member of struct vat_template) with the columns involved; the
 * pipeline arms them by level (vat_trapmod_arm: none below level 3, one at
 * level 3, in turn by task index, every accepted one from level 4), with
 * no draw from the template's streams, so no template draw moves and
 * unarmed tasks are byte-identical to a build without modules.  A module
 *   - plants its rows where a fixture is written (vat_an_write_csv: main
 *     and program-form variants alike, each from the stream
 *     "trapmods<suffix>" of the task), rewriting the table in place so
 *     the prompt shows what the file holds;
 *   - is cleaned where a reference reads (vat_an_read_csv), in C, and
 *     where a second derivation loads the CSV into SQLite
 *     (vat_an_csv_sqlite), in SQL, so the two stay independent;
 *   - is cleaned in the program form by a CTE that shadows the table,
 *     prefixed to the gold query (vat_trapmod_wrap_sql);
 *   - states its convention in the prompt (vat_trapmod_prompt);
 *   - has its own trap, the reference recomputed with that module's
 *     cleaning alone switched off (vat_trapmod_traps; in the program form
 *     gold's SQL without that module's cleaning), proven by admission
 *     like a compound template's named traps and replayed as
 *     `trap:<name>`.
 * The modules:
 *   exact_duplicates  rows repeated exactly (an export sent twice) count
 *                     once; the trap counts every copy
 *   status_spelling   the status column's values in other case or with
 *                     surrounding spaces ("PAID", " paid") are that
 *                     status; the trap compares them as written
 *   text_numbers      amounts with a currency sign or thousands
 *                     separators ("$1,234.50") are those numbers, or
 *                     (amount_words) ratings 1-5 spelled out ("four");
 *                     the trap skips them as non-numbers
 *   test_records      rows whose id starts with "TEST-" (copies of real
 *                     rows an integration test wrote into the export)
 *                     are left out; the trap keeps them
 *   totals_line       the export's closing line, id "TOTAL", holding the
 *                     column's sum, is not a record; the trap counts it
 *   day_first_dates   dates written day first ("14/03/2024 09:15:00",
 *                     months "03/2024") are those dates; the trap skips
 *                     them as no date
 *   placeholder_keys  a placeholder in a key column (a guest checkout's
 *                     "guest@checkout.invalid") names no one: its rows
 *                     are left out; the trap counts it as one more key
 *   lookalike_column  a column planted next to the amount holding a
 *                     plausible wrong figure for it (the list price
 *                     before discounts, the amount with tax); the trap
 *                     reads it instead of the amount
 *   late_rows         a last column `loaded_at` says when each row reached
 *                     the export; copies of rows loaded after the
 *                     report's cut-off (the export run again) are left
 *                     out; the trap keeps them
 *   sign_convention   a column `entry_type` says whether a row is a charge
 *                     or a refund, every amount written positive; the
 *                     planted partial refunds count negative; the trap
 *                     adds them as written
 *   cutoff_boundary   (with late_rows' column) the rows loaded at the
 *                     report's cut-off itself belong to it; the trap
 *                     compares strictly and drops them
 *   distractor_table  (a SQLite fixture) a table the template writes that
 *                     looks like what the question reads but is not (a
 *                     stale snapshot of the customers' countries); the
 *                     trap reads it in place of the table it imitates
 * Exports struct vat_trapmods, the VAT_TM_* bits and vat_trapmod_*. */
#ifndef VAT_TRAPMOD_H
#define VAT_TRAPMOD_H

#include <stdbool.h>

#include <sqlite3.h>

#include "csvio.h"
#include "task.h"
#include "vat.h"

struct vat_progform;

/* One table of a SQLite fixture the modules act on, and its columns. */
struct vat_trapmod_table {
    const char *name;
    const char *const *columns;
    size_t ncols;
    /* the table the program form renames (its db_table): the CTE shadows
     * the composed name */
    bool renamed;
};

/* The modules a template accepts, and the columns they act on.  The
 * status column's values must be lower case without surrounding spaces
 * (its cleaning trims and lowers), and the template must filter on it;
 * the amount column holds decimals the template reads; duplicates only
 * where no two rows of a fixture are ever identical (a key column). */
struct vat_trapmods {
    bool duplicates;
    const char *status; /* NULL: not accepted */
    const char *amount; /* NULL: not accepted */
    /* text_numbers writes the amount column's whole numbers 1 to 5 as
     * words ("four") instead of with a currency sign */
    bool amount_words;
    /* The status value the question keeps ("paid"), or NULL: with a
     * status column, every module plants in rows holding it, so each
     * module's mistake changes the answer on every fixture. */
    const char *status_value;
    const char *id; /* the record id column (test_records), or NULL */
    /* totals_line (with id): accepted when set; the line's `label` cell
     * (a key the reader requires, or NULL) reads TOTAL too, its `total`
     * cell (or NULL) holds that column's sum, every other cell is blank. */
    bool totals;
    const char *label;
    const char *total;
    /* day_first_dates: the ISO date column the question reads
     * ("YYYY-MM-DD", with a time or not, or with date_month "YYYY-MM") */
    const char *date;
    bool date_month;
    /* the date column holds dates without a time ("YYYY-MM-DD" whole) */
    bool date_only;
    /* test_records: a key column the question counts distinct values of,
     * or NULL; each test copy's cell there is the source's prefixed
     * "test+" (a test account), so keeping test entries adds keys. */
    const char *test_key;
    /* placeholder_keys: the key column and its placeholder value, both
     * set to accept it; the plant rewrites the key of two rows the
     * template marks. */
    const char *placeholder_col;
    const char *placeholder;
    /* lookalike_column (with amount): the planted column's name, and what
     * it holds, as the prompt says it ("the list price before
     * discounts"); each row's figure is the amount's raised by 5-25%. */
    const char *lookalike;
    const char *lookalike_is;
    /* late_rows and cutoff_boundary: accepted when set, without totals_line (whose blank
     * loaded_at would read as NULL in SQL); its copies come from the
     * rows the template marks for test_records, and the template must
     * not refuse a repeated id (an amendment repeats its source's). */
    bool late;
    /* sign_convention (with amount): accepted when set; its refunds are
     * partial copies of the rows the template marks for test_records,
     * so the template must not refuse a repeated id nor a negative
     * amount once the sign is applied, and must not hold the planted
     * totals as truth while it is armed (the refunds move them). */
    bool sign;
    /* distractor_table (with db_tables): the table the template writes
     * when it is armed (`distractor`), the table it imitates
     * (`distractor_for`), a SELECT over it giving distractor_for's
     * columns in order, as the mistake reads it (`distractor_as`), and
     * what it is, as the prompt says it ("a snapshot of the CRM taken on
     * `synced_on`, not kept up to date"). */
    const char *distractor;
    const char *distractor_for;
    const char *distractor_as;
    const char *distractor_is;
    /* The modules (VAT_TM_* bits) whose cells are rewritten in every row
     * the template marks rather than two: a count of distinct keys loses
     * a key only when all its rows do. */
    unsigned mark_all;
    /* The modules that rewrite the marked rows only, none drawn at random
     * among the rest (a mistake that compares dates as written must not
     * meet two rewritten rows of one customer). */
    unsigned marked_only;
    /* A SQLite fixture's tables (NULL for a CSV template): each module
     * plants and cleans in the table holding its column; the template
     * plants the tables it writes itself, and cleans the file through
     * vat_trapmod_clean_db. */
    const struct vat_trapmod_table *db_tables;
    size_t ndb_tables;
    /* Marks in is[1 .. c->nrows-1] the data rows of c (header on row 0,
     * as planted so far: amounts may already read "$1,234.50") where
     * module m's plant moves the answer: inside the asked window, over
     * the threshold, the customer just outside the top N.  NULL: every
     * row, or the status_value rows.  Copies are drawn from these rows,
     * and cells rewritten in two of them at least, so each module's
     * mistake moves the answer by construction. */
    void (*targets)(const struct vat_task *t, const struct vat_csv *c, unsigned m, bool *is);
};

enum {
    VAT_TM_DUPLICATES = 1u,
    VAT_TM_STATUS = 2u,
    VAT_TM_TEXTNUM = 4u,
    VAT_TM_TEST = 8u,
    VAT_TM_TOTALS = 16u,
    VAT_TM_DATES = 32u,
    VAT_TM_PLACEHOLDER = 64u,
    VAT_TM_LOOKALIKE = 128u,
    VAT_TM_LATE = 256u,
    VAT_TM_SIGN = 512u,
    VAT_TM_DISTRACTOR = 1024u,
    VAT_TM_BOUNDARY = 2048u,
    VAT_TM_LAST = VAT_TM_BOUNDARY,
    VAT_TM_ALL = 4095u,
};
#define VAT_TM_N 12

/* The module of bit m: its stable name ("exact_duplicates", ...) and the
 * one-sentence mistake its trap makes (static). */
const char *vat_trapmod_name(unsigned m);
const char *vat_trapmod_mistake(unsigned m);
/* A plain decimal ("-12.50"), or one written with a currency sign and
 * thousands separators ("$1,234.50"), as a number in *x. */
bool vat_trapmod_number(const char *s, double *x);
/* The date v starts with, written ISO ("2024-03-14 09:15") or day first
 * as day_first_dates plants it ("14/03/2024 09:15"), as "YYYY-MM-DD" in
 * day; false when v starts with neither. */
bool vat_trapmod_day(const char *v, char day[11]);
/* The bits of the modules template tm accepts. */
unsigned vat_trapmod_accepted(const struct vat_template *tm);

/* Sets t->trapmods for the task's level (t->level set): 0 below level 3
 * or for a template that accepts none, one accepted module at level 3,
 * every accepted one from level 4.  Level 3 takes the accepted modules
 * in turn by task index, from a start keyed by (seed, template). */
void vat_trapmod_arm(struct vat_task *t);

/* Plants the armed modules' rows in c (header on row 0), about to be
 * written as the fixture of suffix `suffix`.  Nothing when none is armed. */
void vat_trapmod_plant(const struct vat_task *t, struct vat_csv *c, const char *suffix);

/* The columns a reader does not expect, before it checks the header of c
 * (as read from a fixture): the look-alike column dropped, its figures
 * first copied over the amount's when its cleaning is off (its
 * mistake); the rows loaded late dropped with their column; the refunds'
 * amounts negated with the sign column dropped (as written when its
 * cleaning is off). */
void vat_trapmod_columns(const struct vat_task *t, struct vat_csv *c);

/* The column the armed modules plant right after column `col` of a CSV
 * fixture (the look-alike after the amount), or NULL: the program form
 * declares it, and a loader gives it col's type. */
const char *vat_trapmod_column_after(const struct vat_task *t, const char *col);
/* The SQL types of the columns of h (the header of a CSV fixture of t as
 * read) in typed (cap entries): the template's types in order, a column
 * the armed modules planted after one of them (the look-alike) of that
 * one's type, those planted last TEXT.  False, typed unset, when h holds
 * no planted column (types apply as they are), types is NULL (every
 * column TEXT) or h holds more than cap. */
bool vat_trapmod_header_types(const struct vat_task *t, const struct vat_csv_row *h,
                              const char *const *types, const char **typed, size_t cap);
/* The columns the armed modules plant after the last one, in order
 * (sign_convention's `entry_type`, late_rows' `loaded_at`, both text),
 * into out; returns how many (0 to 2). */
size_t vat_trapmod_columns_last(const struct vat_task *t, const char *out[2]);

/* Cleans c (header on row 0, as read from a fixture) for the armed
 * modules whose cleaning t->trapmods_off leaves on; an armed
 * text_numbers switched off drops the rows whose amount is not a plain
 * number (its mistake). */
void vat_trapmod_clean(const struct vat_task *t, struct vat_csv *c);

/* The same cleaning in SQL, on table `table` of db (a CSV just loaded).
 * 0, or -1 with e set. */
int vat_trapmod_clean_sqlite(const struct vat_task *t, sqlite3 *db, const char *table,
                             struct vat_err *e);

/* The same cleaning on every table of d->db_tables in db (a copy of a
 * SQLite fixture), each module in the table holding its column; an armed
 * distractor_table switched off refills the table it imitates from it
 * (its mistake). */
int vat_trapmod_clean_db(const struct vat_task *t, sqlite3 *db, struct vat_err *e);

/* sql (a query over the program form's table `table`, whose CSV columns
 * pf lists, or over the template's db_tables with the renamed one called
 * `table`) with the armed modules' cleaning, but those in `off`,
 * prefixed as a CTE shadowing each table it cleans (new string; a copy
 * of sql when nothing is left to clean). */
char *vat_trapmod_wrap_sql(const struct vat_task *t, const struct vat_progform *pf,
                           const char *table, const char *sql, unsigned off);

/* Appends the armed modules' conventions to t->prompt, in its style,
 * phrasings drawn from t->prompt_rng.  Nothing when none is armed. */
void vat_trapmod_prompt(struct vat_task *t);

/* Adds one named trap per armed module to t->traps[]: the reference
 * recomputed with that module's cleaning off (gold and the spec's
 * expected kept).  0, or -1 with e set. */
int vat_trapmod_traps(struct vat_task *t, struct vat_err *e);

#endif

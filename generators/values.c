/* values.c — realistic value generators and exact date and money
 * formatting (see values.h).  Exports vat_gen_person, vat_gen_company,
 * vat_gen_customer, vat_gen_id, vat_gen_distinct, vat_gen_unique,
 * vat_gen_days_sorted, vat_gen_dirty_label, vat_norm_label, vat_words, the
 * vat_date_* functions, vat_fmt_date, vat_fmt_timestamp, vat_parse_date,
 * vat_parse_timestamp, vat_parse_month, vat_gen_cents, vat_fmt_cents and
 * vat_parse_cents. *
 * Every word is plain ASCII with no comma, quote or edge space, and no list
 * repeats a word: fixtures stay readable as bare CSV, and vat_gen_distinct's
 * distinct indices always mean distinct strings (tests/test_values.c holds
 * the lists to this). */
#include "values.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vat.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const first_names[] = {
    "Maria",  "James", "Aisha",  "Wei",    "Priya",  "Olga",   "Mateo",     "Yuki",     "Kwame",
    "Fatima", "Liam",  "Sofia",  "Arjun",  "Amara",  "Lucas",  "Ingrid",    "Omar",     "Hana",
    "Diego",  "Elena", "Kofi",   "Mei",    "Rahul",  "Zara",   "Noah",      "Leila",    "Hiroshi",
    "Ana",    "Emeka", "Freya",  "Tariq",  "Isabel", "Dmitri", "Nia",       "Santiago", "Astrid",
    "Jamal",  "Lucia", "Kenji",  "Amelia", "Ravi",   "Chloe",  "Ahmed",     "Grace",    "Mohammed",
    "Sakura", "Thabo", "Camila", "Jonas",  "Anika",  "Pedro",  "Linh",      "Mustafa",  "Eva",
    "Tomasz", "Nadia", "Samuel", "Ines",   "Daniel", "Keiko",  "Oluwaseun", "Marta",    "Andrei",
    "Zainab", "Felix", "Rosa",   "Hamid",  "Julia",  "Minh",   "Chiara",
};

static const char *const last_names[] = {
    "Lopez",   "Smith",     "Okafor",    "Chen",      "Patel",    "Ivanova",  "Garcia", "Tanaka",
    "Mensah",  "Haddad",    "Murphy",    "Rossi",     "Sharma",   "Nwosu",    "Silva",  "Larsen",
    "Rahman",  "Kim",       "Hernandez", "Popescu",   "Asante",   "Wang",     "Gupta",  "Khan",
    "Johnson", "Nakamura",  "Santos",    "Adeyemi",   "Nielsen",  "Aziz",     "Moreno", "Petrov",
    "Banda",   "Fernandez", "Lindqvist", "Williams",  "Romano",   "Sato",     "Singh",  "Dubois",
    "Hassan",  "Nguyen",    "Kowalski",  "Mbeki",     "Schmidt",  "Costa",    "Yilmaz", "Brown",
    "Novak",   "Ito",       "Kaur",      "Muller",    "Castillo", "Oyelaran", "Jensen", "Ahmadi",
    "Reyes",   "Bianchi",   "Park",      "Walker",    "Torres",   "Horvat",   "Osei",   "Fischer",
    "Ali",     "Lee",       "Mendes",    "Andersson", "Kariuki",  "Zhang",
};

/* A company name is a head and a tail: 30 x 24 = 720 names. */
static const char *const company_heads[] = {
    "Northwind",   "Blue Harbor", "Summit",       "Redwood",    "Silver Lake",   "Ironbridge",
    "Cedar Point", "Brightwater", "Granite Peak", "Evergreen",  "Harborview",    "Oakridge",
    "Stonegate",   "Sunrise",     "Westfield",    "Pinecrest",  "Copper Valley", "Riverbend",
    "Bluebird",    "Lakeshore",   "Highland",     "Maple Leaf", "Golden Gate",   "Clearwater",
    "Foxglove",    "Starling",    "Keystone",     "Meridian",   "Northstar",     "Tidewater",
};

static const char *const company_tails[] = {
    "Logistics", "Foods",  "Analytics", "Partners",   "Supply",   "Energy",  "Health",   "Systems",
    "Textiles",  "Motors", "Pharma",    "Outfitters", "Robotics", "Capital", "Media",    "Labs",
    "Freight",   "Bakery", "Hardware",  "Consulting", "Dynamics", "Trading", "Software", "Farms",
};

static const char *const regions[] = {
    "North",     "South",     "East",    "West",    "Central",  "Northeast", "Northwest",
    "Southeast", "Southwest", "Midwest", "Pacific", "Mountain", "Atlantic",  "Gulf Coast",
};

static const char *const products[] = {
    "Trail Runner 2",   "Espresso Grinder",  "Noise-Cancelling Headphones",
    "Standing Desk",    "Ergonomic Chair",   "Cast Iron Skillet",
    "Smart Thermostat", "Yoga Mat",          "Mechanical Keyboard",
    "Wireless Mouse",   "4K Monitor",        "Insulated Water Bottle",
    "Hiking Backpack",  "Rain Jacket",       "Electric Kettle",
    "Air Purifier",     "Robot Vacuum",      "Bluetooth Speaker",
    "Fitness Tracker",  "Desk Lamp",         "Chef Knife",
    "French Press",     "Blender Pro",       "Camping Tent",
    "Sleeping Bag",     "USB-C Hub",         "Laptop Sleeve",
    "Running Socks",    "Portable Charger",  "Coffee Beans 1kg",
    "Ceramic Mug",      "Webcam HD",         "Graphics Tablet",
    "Trail Runner 3",   "Induction Cooktop", "Road Bike Helmet",
};

static const char *const teams[] = {
    "Billing",   "Platform", "Mobile",         "Payments",    "Search",   "Growth",
    "Data",      "Security", "Infrastructure", "Support",     "Identity", "Checkout",
    "Analytics", "Design",   "Frontend",       "Reliability",
};

static const char *const carriers[] = {
    "DHL",        "UPS",         "FedEx", "USPS",   "Maersk",      "DPD",       "GLS",
    "Royal Mail", "Canada Post", "TNT",   "Aramex", "Hapag-Lloyd", "Purolator", "Yamato",
};

static const char *const countries[] = {
    "Argentina",     "Australia", "Austria",  "Belgium",     "Brazil",      "Canada",
    "Chile",         "China",     "Colombia", "Denmark",     "Egypt",       "Finland",
    "France",        "Germany",   "Ghana",    "India",       "Indonesia",   "Ireland",
    "Italy",         "Japan",     "Kenya",    "Mexico",      "Netherlands", "New Zealand",
    "Nigeria",       "Norway",    "Peru",     "Poland",      "Portugal",    "South Africa",
    "South Korea",   "Spain",     "Sweden",   "Switzerland", "Turkey",      "United Kingdom",
    "United States", "Vietnam",
};

static const char *const cities[] = {
    "Lagos",        "Nairobi",   "Accra",       "Cairo",     "Cape Town", "London",    "Paris",
    "Berlin",       "Madrid",    "Lisbon",      "Rome",      "Warsaw",    "Stockholm", "Oslo",
    "Dublin",       "Amsterdam", "Toronto",     "Vancouver", "Chicago",   "Austin",    "Seattle",
    "Denver",       "Boston",    "Mexico City", "Bogota",    "Lima",      "Santiago",  "Sao Paulo",
    "Buenos Aires", "Mumbai",    "Bangalore",   "Singapore", "Jakarta",   "Tokyo",     "Osaka",
    "Seoul",        "Sydney",    "Melbourne",   "Auckland",  "Hanoi",
};

/* Order and invoice states, lower case as systems usually store them. */
static const char *const statuses[] = {
    "paid",  "pending", "refunded",  "cancelled", "void",       "overdue",
    "draft", "shipped", "delivered", "failed",    "processing", "disputed",
};

static const char *const accounts[] = {
    "Operating",        "Payroll",   "Reserve",   "Petty Cash",        "Accounts Receivable",
    "Accounts Payable", "Escrow",    "Savings",   "Treasury",          "Deferred Revenue",
    "Prepaid Expenses", "Inventory", "Sales Tax", "Customer Deposits",
};

static const char *const categories[] = {
    "Travel",        "Meals",       "Software",  "Office Supplies", "Hardware", "Marketing",
    "Training",      "Rent",        "Utilities", "Insurance",       "Legal",    "Shipping",
    "Subscriptions", "Maintenance", "Telecom",   "Consulting",
};

struct word_list {
    const char *name;
    const char *const *words;
    size_t n;
};

static const struct word_list word_lists[] = {
    {"first_name", first_names, COUNT(first_names)},
    {"last_name", last_names, COUNT(last_names)},
    {"company_head", company_heads, COUNT(company_heads)},
    {"company_tail", company_tails, COUNT(company_tails)},
    {"region", regions, COUNT(regions)},
    {"product", products, COUNT(products)},
    {"team", teams, COUNT(teams)},
    {"carrier", carriers, COUNT(carriers)},
    {"country", countries, COUNT(countries)},
    {"city", cities, COUNT(cities)},
    {"status", statuses, COUNT(statuses)},
    {"account", accounts, COUNT(accounts)},
    {"category", categories, COUNT(categories)},
};

const char *const *vat_words(const char *list, size_t *n)
{
    for (size_t i = 0; list && i < COUNT(word_lists); i++) {
        if (strcmp(word_lists[i].name, list) == 0) {
            if (n)
                *n = word_lists[i].n;
            return word_lists[i].words;
        }
    }
    if (n)
        *n = 0;
    return NULL;
}

/* Joins two words with a space.  The draws happen in the callers, one
 * statement each, because the order of evaluation of function arguments
 * is unspecified and the stream must not depend on the compiler. */
static char *join_pair(char *out, size_t cap, const char *a, const char *b)
{
    if (cap == 0)
        return out;
    snprintf(out, cap, "%s %s", a, b);
    return out;
}

char *vat_gen_person(struct vat_rng *r, char *out, size_t cap)
{
    const char *first = VAT_PICK(r, first_names);
    const char *last = VAT_PICK(r, last_names);
    return join_pair(out, cap, first, last);
}

char *vat_gen_company(struct vat_rng *r, char *out, size_t cap)
{
    const char *head = VAT_PICK(r, company_heads);
    const char *tail = VAT_PICK(r, company_tails);
    return join_pair(out, cap, head, tail);
}

char *vat_gen_customer(struct vat_rng *r, const void *mix, char *out, size_t cap)
{
    const struct vat_customer_mix *m = mix;
    uint32_t k = vat_rng_below(r, m->last_first + m->company + m->person);
    if (k < m->last_first) {
        const char *first = VAT_PICK(r, first_names);
        const char *last = VAT_PICK(r, last_names);
        if (cap)
            snprintf(out, cap, "%s, %s", last, first);
        return out;
    }
    if (k < m->last_first + m->company)
        return vat_gen_company(r, out, cap);
    return vat_gen_person(r, out, cap);
}

size_t vat_gen_unique(struct vat_rng *r, vat_gen_fn *gen, const void *arg, char *out, size_t k,
                      size_t cap)
{
    for (size_t i = 0; i < k; i++) {
        char *slot = out + i * cap;
        bool dup = true;
        for (int tries = 0; dup && tries < 1000; tries++) {
            gen(r, arg, slot, cap);
            dup = false;
            for (size_t j = 0; j < i && !dup; j++)
                dup = strcmp(slot, out + j * cap) == 0;
        }
        if (dup)
            return i;
    }
    return k;
}

char *vat_gen_id(struct vat_rng *r, const char *prefix, int digits, char *out, size_t cap)
{
    if (cap == 0)
        return out;
    size_t pl = prefix ? strlen(prefix) : 0;
    if (pl > cap - 1)
        pl = cap - 1;
    memcpy(out, prefix ? prefix : "", pl);
    size_t room = cap - 1 - pl;
    size_t nd = digits > 0 ? (size_t)digits : 0;
    if (nd > room)
        nd = room;
    /* One draw per digit, so any width is uniform and leading zeros occur
     * as often as they would in a real zero-padded sequence. */
    for (size_t i = 0; i < nd; i++)
        out[pl + i] = (char)('0' + vat_rng_below(r, 10));
    out[pl + nd] = 0;
    return out;
}

size_t vat_gen_distinct(struct vat_rng *r, const char *list, const char **out, size_t n)
{
    size_t m = 0;
    const char *const *words = vat_words(list, &m);
    if (!words)
        return 0;
    if (n > m)
        n = m;
    size_t *idx = vat_xmalloc(m * sizeof *idx);
    for (size_t i = 0; i < m; i++)
        idx[i] = i;
    /* Partial Fisher-Yates: the first n slots become a uniform n-subset in
     * uniform order, with exactly n draws. */
    for (size_t i = 0; i < n; i++) {
        size_t j = i + vat_rng_below(r, (uint32_t)(m - i));
        size_t tmp = idx[i];
        idx[i] = idx[j];
        idx[j] = tmp;
        out[i] = words[idx[i]];
    }
    free(idx);
    return n;
}

/* ---- hand-typed labels -------------------------------------------------- */

static char ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static char ascii_upper(char c)
{
    return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* The label's spellings as vat_variant steps: a case, then edge spaces. */
char *vat_gen_dirty_label(const char *label, enum vat_dirty kind, char *out, size_t cap)
{
    static const struct {
        enum vat_variant step[3];
        int n;
    } how[VAT_DIRTY_N] = {
        [VAT_DIRTY_TRAIL] = {{VAT_VARIANT_TRAIL}, 1},
        [VAT_DIRTY_LOWER] = {{VAT_VARIANT_LOWER}, 1},
        [VAT_DIRTY_UPPER] = {{VAT_VARIANT_UPPER}, 1},
        [VAT_DIRTY_LEAD] = {{VAT_VARIANT_LEAD}, 1},
        [VAT_DIRTY_BOTH] = {{VAT_VARIANT_BOTH}, 1},
        [VAT_DIRTY_LOWER_TRAIL] = {{VAT_VARIANT_LOWER, VAT_VARIANT_TRAIL, VAT_VARIANT_TRAIL}, 3},
        [VAT_DIRTY_UPPER_LEAD] = {{VAT_VARIANT_UPPER, VAT_VARIANT_LEAD}, 2},
    };
    if (cap == 0)
        return out;
    snprintf(out, cap, "%s", label);
    if ((unsigned)kind >= VAT_DIRTY_N)
        return out;
    for (int i = 0; i < how[kind].n; i++) {
        char *in = vat_xstrdup(out);
        vat_variant(in, how[kind].step[i], out, cap);
        free(in);
    }
    return out;
}

char *vat_norm_label(const char *s, char *out, size_t cap)
{
    if (cap == 0)
        return out;
    size_t n = strlen(s);
    while (n && *s == ' ')
        s++, n--;
    while (n && s[n - 1] == ' ')
        n--;
    if (n >= cap)
        n = cap - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = ascii_lower(s[i]);
    out[n] = 0;
    return out;
}

/* ---- dates -------------------------------------------------------------
 * Howard Hinnant's days_from_civil / civil_from_days ("chrono-Compatible
 * Low-Level Date Algorithms"): exact for the proleptic Gregorian calendar,
 * using 400-year eras so that floor division is only needed once. */

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;                                   /* [0, 399]     */
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* [0, 365]     */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           /* [0, 146096]  */
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;                                      /* [0, 146096] */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399]    */
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365]    */
    int64_t mp = (5 * doy + 2) / 153;                                    /* [0, 11]     */
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

int32_t vat_date_from_civil(int y, int m, int d)
{
    int64_t days = days_from_civil(y, m, d);
    if (days > INT32_MAX)
        return INT32_MAX;
    if (days < INT32_MIN)
        return INT32_MIN;
    return (int32_t)days;
}

void vat_date_to_civil(int32_t days, int *y, int *m, int *d)
{
    int64_t yy;
    civil_from_days(days, &yy, m, d);
    *y = (int)yy; /* |days| < 2^31 keeps the year within +-5.9 million */
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
    static const int len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : len[m - 1];
}

int vat_date_valid(int y, int m, int d)
{
    return m >= 1 && m <= 12 && d >= 1 && d <= days_in_month(y, m);
}

/* The four-digit year of "YYYY-MM-DD" holds 0000..9999; days outside that
 * range print as its nearest end rather than overflowing the 11 bytes. */
#define DAYS_0000_01_01 (-719528)
#define DAYS_9999_12_31 2932896

static void put_digits(char *p, int64_t v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        p[i] = (char)('0' + v % 10);
        v /= 10;
    }
}

char *vat_fmt_date(int32_t days, char out[11])
{
    int64_t z = days;
    if (z < DAYS_0000_01_01)
        z = DAYS_0000_01_01;
    if (z > DAYS_9999_12_31)
        z = DAYS_9999_12_31;
    int64_t y;
    int m, d;
    civil_from_days(z, &y, &m, &d);
    put_digits(out, y, 4);
    out[4] = '-';
    put_digits(out + 5, m, 2);
    out[7] = '-';
    put_digits(out + 8, d, 2);
    out[10] = 0;
    return out;
}

char *vat_fmt_timestamp(int64_t secs, char out[20])
{
    /* Floor division: -1 s is 1969-12-31 23:59:59, not 1970-01-01. */
    int64_t days = secs / 86400;
    int64_t rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days -= 1;
    }
    if (days < DAYS_0000_01_01) {
        days = DAYS_0000_01_01;
        rem = 0;
    } else if (days > DAYS_9999_12_31) {
        days = DAYS_9999_12_31;
        rem = 86399;
    }
    vat_fmt_date((int32_t)days, out);
    out[10] = ' ';
    put_digits(out + 11, rem / 3600, 2);
    out[13] = ':';
    put_digits(out + 14, rem / 60 % 60, 2);
    out[16] = ':';
    put_digits(out + 17, rem % 60, 2);
    out[19] = 0;
    return out;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Reads exactly n digits at s; -1 if any is not a digit. */
static int read_digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int vat_parse_date(const char *s, int32_t *days)
{
    if (!s || strlen(s) != 10 || s[4] != '-' || s[7] != '-')
        return -1;
    int y = read_digits(s, 4), m = read_digits(s + 5, 2), d = read_digits(s + 8, 2);
    if (y < 0 || m < 0 || d < 0 || !vat_date_valid(y, m, d))
        return -1;
    if (days)
        *days = vat_date_from_civil(y, m, d);
    return 0;
}

static int cmp_day(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int32_t *vat_gen_days_sorted(struct vat_rng *r, size_t n, int32_t first, int32_t last)
{
    int32_t *days = vat_xcalloc(n ? n : 1, sizeof *days);
    for (size_t i = 0; i < n; i++)
        days[i] = (int32_t)vat_rng_range(r, first, last);
    /* Equal days are equal values, so qsort's tie order cannot show. */
    qsort(days, n, sizeof *days, cmp_day);
    return days;
}

int vat_parse_timestamp(const char *s, int64_t *secs)
{
    if (!s || strlen(s) != 19 || s[10] != ' ' || s[13] != ':' || s[16] != ':')
        return -1;
    int hh = read_digits(s + 11, 2), mm = read_digits(s + 14, 2), ss = read_digits(s + 17, 2);
    if (hh < 0 || mm < 0 || ss < 0 || hh > 23 || mm > 59 || ss > 59)
        return -1;
    char date[11];
    memcpy(date, s, 10);
    date[10] = 0;
    int32_t days;
    if (vat_parse_date(date, &days) != 0)
        return -1;
    if (secs)
        *secs = (int64_t)days * 86400 + hh * 3600 + mm * 60 + ss;
    return 0;
}

int vat_parse_month(const char *s, int *year, int *month)
{
    if (!s || strlen(s) != 7 || s[4] != '-')
        return -1;
    int y = read_digits(s, 4), m = read_digits(s + 5, 2);
    if (y < 0 || m < 1 || m > 12)
        return -1;
    if (year)
        *year = y;
    if (month)
        *month = m;
    return 0;
}

/* ---- money in integer cents -------------------------------------------- */

int64_t vat_gen_cents(struct vat_rng *r, int64_t lo, int64_t hi)
{
    return vat_rng_range(r, lo, hi);
}

char *vat_fmt_cents(int64_t cents, char *out, size_t cap)
{
    if (cap == 0)
        return out;
    /* The magnitude in unsigned arithmetic: -INT64_MIN does not fit int64
     * (its whole part, mag / 100, fits a long long).  Cut to cap as
     * snprintf would ("%s%" PRIu64 ".%02u"): every CSV amount goes through
     * here, so no printf. */
    uint64_t mag = cents < 0 ? (uint64_t)0 - (uint64_t)cents : (uint64_t)cents;
    char t[32];
    char *p = t;
    if (cents < 0)
        *p++ = '-';
    vat_fmt_int((long long)(mag / 100), 0, p);
    p += strlen(p);
    *p++ = '.';
    *p++ = (char)('0' + mag / 10 % 10);
    *p++ = (char)('0' + mag % 10);
    size_t n = (size_t)(p - t);
    if (n > cap - 1)
        n = cap - 1;
    memcpy(out, t, n);
    out[n] = 0;
    return out;
}

int vat_parse_cents(const char *s, int64_t *cents)
{
    if (!s)
        return -1;
    int neg = 0;
    if (*s == '-') {
        neg = 1;
        s++;
    }
    if (!is_digit(*s))
        return -1;
    /* The largest magnitude is 2^63 cents, reachable only when negative. */
    const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    uint64_t whole = 0;
    for (; is_digit(*s); s++) {
        unsigned dig = (unsigned)(*s - '0');
        if (whole > (UINT64_MAX - dig) / 10)
            return -1;
        whole = whole * 10 + dig;
    }
    unsigned frac = 0;
    if (*s == '.') {
        s++;
        if (!is_digit(s[0]))
            return -1;
        frac = (unsigned)(s[0] - '0') * 10;
        s++;
        if (is_digit(s[0])) {
            frac += (unsigned)(s[0] - '0');
            s++;
        }
    }
    if (*s)
        return -1;
    if (whole > (limit - frac) / 100)
        return -1;
    uint64_t mag = whole * 100 + frac;
    if (cents) {
        if (!neg)
            *cents = (int64_t)mag;
        else if (mag > (uint64_t)INT64_MAX)
            *cents = INT64_MIN;
        else
            *cents = -(int64_t)mag;
    }
    return 0;
}

/* ---- appended: dirty variants, e-mail addresses, months ----------------- */

int vat_variant(const char *s, enum vat_variant kind, char *out, size_t cap)
{
    if (cap == 0)
        return 0;
    size_t n = 0, len = strlen(s);
    const char *pre = "", *post = "";
    /* where INNER doubles a space: the first ' ' with text on both sides */
    size_t inner = 0;
    if (kind == VAT_VARIANT_INNER)
        for (size_t i = 1; i + 1 < len && !inner; i++)
            if (s[i] == ' ' && s[i - 1] != ' ' && s[i + 1] != ' ')
                inner = i;
    if (kind == VAT_VARIANT_LEAD || kind == VAT_VARIANT_BOTH)
        pre = kind == VAT_VARIANT_BOTH ? "  " : " ";
    if (kind == VAT_VARIANT_TRAIL || kind == VAT_VARIANT_BOTH)
        post = " ";
    for (const char *p = pre; *p && n + 1 < cap; p++)
        out[n++] = *p;
    for (size_t i = 0; i < len && n + 1 < cap; i++) {
        char c = s[i];
        if (kind == VAT_VARIANT_UPPER || (kind == VAT_VARIANT_CAPITAL && i == 0))
            c = ascii_upper(c);
        else if (kind == VAT_VARIANT_LOWER)
            c = ascii_lower(c);
        out[n++] = c;
        if (inner && i == inner && n + 1 < cap)
            out[n++] = ' ';
    }
    for (const char *p = post; *p && n + 1 < cap; p++)
        out[n++] = *p;
    out[n] = 0;
    return n != len || memcmp(out, s, len) != 0;
}

static const char *const email_domains[] = {
    "example.com", "example.org", "example.net", "mail.example.com", "post.example.org",
};

char *vat_gen_email(struct vat_rng *r, char *out, size_t cap)
{
    const char *first = first_names[vat_rng_below(r, COUNT(first_names))];
    const char *last = last_names[vat_rng_below(r, COUNT(last_names))];
    uint32_t style = vat_rng_below(r, 4);
    const char *domain = email_domains[vat_rng_below(r, COUNT(email_domains))];
    char local[64];
    switch (style) {
    case 0: snprintf(local, sizeof local, "%s.%s", first, last); break;
    case 1: snprintf(local, sizeof local, "%c%s", first[0], last); break;
    case 2: snprintf(local, sizeof local, "%s_%s", first, last); break;
    default: snprintf(local, sizeof local, "%s%s", first, last); break;
    }
    snprintf(out, cap, "%s@%s", local, domain);
    for (char *p = out; *p; p++)
        *p = ascii_lower(*p);
    return out;
}

void vat_month_add(int y, int m, int k, int *ry, int *rm)
{
    /* months since year 0, floored so that negative k works */
    long t = (long)y * 12 + (m - 1) + k;
    long q = t >= 0 ? t / 12 : -((-t + 11) / 12);
    *ry = (int)q;
    *rm = (int)(t - q * 12) + 1;
}

int32_t vat_month_first_day(int y, int m)
{
    return vat_date_from_civil(y, m, 1);
}

int vat_month_days(int y, int m)
{
    int ny, nm;
    vat_month_add(y, m, 1, &ny, &nm);
    return (int)(vat_month_first_day(ny, nm) - vat_month_first_day(y, m));
}

const char *vat_month_name(int m)
{
    static const char *const names[12] = {"January", "February", "March",     "April",
                                          "May",     "June",     "July",      "August",
                                          "September", "October", "November", "December"};
    return m >= 1 && m <= 12 ? names[m - 1] : NULL;
}

char *vat_fmt_month(int y, int m, char out[8])
{
    snprintf(out, 8, "%04u-%02u", (unsigned)y % 10000u, (unsigned)m % 100u);
    return out;
}

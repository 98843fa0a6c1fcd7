#!/usr/bin/python3
"""Regenerates the seed corpora fuzz/corpus/<name>/ from the tests: the
value and extraction cases files, the patterns and queries the cmocka
tests use, and the seeds.toml files they parse (plus the hostile-input attacks).  Standard library
only; file names are content hashes, so a rerun only adds."""
import hashlib
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def save(name, items):
    d = os.path.join(ROOT, 'fuzz', 'corpus', name)
    os.makedirs(d, exist_ok=True)
    seen = set()
    for it in items:
        b = it if isinstance(it, bytes) else it.encode()
        h = hashlib.sha1(b).hexdigest()[:16]
        if h in seen:
            continue
        seen.add(h)
        with open(os.path.join(d, h), 'wb') as f:
            f.write(b)
    print(name, len(seen))


def c_literals(path, pattern):
    out = set()
    src = open(path, encoding='utf-8').read()
    for m in re.finditer(pattern, src):
        lit = next(g for g in m.groups() if g is not None)
        try:
            out.add(bytes(lit, 'utf-8').decode('unicode_escape').encode('latin-1').decode('utf-8'))
        except (UnicodeDecodeError, UnicodeEncodeError):
            pass
    return out


# The spec order of fuzz/fuzz_value.c.
VALUE_SPECS = [
    '{"checker":"value","shape":"number","expected":12}',
    '{"checker":"value","shape":"number","expected":1234.5}',
    '{"checker":"value","shape":"number","expected":1000000,"integer":true}',
    '{"checker":"value","shape":"number","expected":100,"rel_tol":1e-6,"abs_tol":0}',
    '{"checker":"value","shape":"number","expected":0,"rel_tol":0,"abs_tol":0.01}',
    '{"checker":"value","shape":"object","expected":{"north":1200.5,"south":80,"west":0}}',
    '{"checker":"value","shape":"list","items":"string","ordered":true,"unique":true,"expected":["acme","globex","initech"]}',
    '{"checker":"value","shape":"list","items":"string","ordered":false,"expected":["A-1","A-2","B-7"]}',
    '{"checker":"value","shape":"list","items":"number","ordered":true,"expected":[3,1.5,2]}',
    '{"checker":"value","shape":"list","items":"number","ordered":false,"unique":true,"expected":[10,20,30]}',
    '{"checker":"value","shape":"object_of_objects","integer":true,"expected":{"2026-03":{"dhl":4,"ups":0},"2026-04":{"dhl":1,"ups":2}}}',
    '{"checker":"value","shape":"object_of_strings","expected":{"ORD-1":"shipped","ORD-2":"pending","ORD-3":"cancelled"}}',
]


def value_seeds():
    items, cur = [], 0
    for line in open(os.path.join(ROOT, 'tests/data/value_cases.txt'), encoding='utf-8'):
        line = line.rstrip('\n')
        if not line or line.startswith('#'):
            continue
        if line.startswith('spec '):
            cur = VALUE_SPECS.index(line[5:]) if line[5:] in VALUE_SPECS else 0
            continue
        if '\t' in line:
            items.append(bytes([cur]) + line[:line.rfind('\t')].encode())
    return items


def abstain_seeds():
    answers = ['{"answerable": false}', '{"answerable":false}', '{"north":10,"south":2.5}',
               '{"north": 10.0, "south": 2.5, "east": 1}', '"UNANSWERABLE"', '["a","b"]',
               '["b","a"]', 'null', '12', '{"answerable": true}', '[[[[[[[[1]]]]]]]]',
               '{"answerable": false, "x": 1}', '"\\ud800"', 'The answer is: 12']
    return [bytes([k]) + a.encode() for a in answers for k in range(4)]


def regex_seeds():
    pats = set()
    for f in os.listdir(os.path.join(ROOT, 'tests')):
        if f.startswith('test_regex'):
            pats |= c_literals(os.path.join(ROOT, 'tests', f),
                               r'check\(\w+, "((?:[^"\\]|\\.)*)"\)|extract\("((?:[^"\\]|\\.)*)"')
    pats |= {r'\d{4}-\d{2}-\d{2}', r'(?<!\d)\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?!\d)',
             r'(?i)caf[ée]', r'(?x) \d+ # digits', r'(?P<y>\d{4})-(?P=y)',
             r'|(?:.{0,25}.{0,25}.{0,25}.{0,25})(?=q)(?=r)', r'(a+)+$', r'[\w.-]+@[\w-]+\.\w+',
             r'\bAC-\d{4}\b', r'\$\d{1,3}(?:,\d{3})*(?:\.\d{2})?', r'(?m)^\w+$', r'(?s).*?',
             r'[^\W\d_]+', r'\N{DASH}', r'(?>a)', r'a*+', r'\Z', r'(?<=a|bc)x', r'[[:alpha:]]',
             r'\Qa\E', r'(*LIMIT_MATCH=1)a', r'\C', r'(?(1)a|b)', r'(a)(?(1)b|c)'}
    texts = ['deploy 2024-03-07 ok\nv1.2.3 at 2023-12-31T10:00', 'aaaaaaaaaaaaaaaaaaaaaaaaab',
             'café CAFE cafe', 'id=12; id=34;', 'AC-0012 AC-0107', '$1,234.56 and $7', '']
    return [p + '\n' + texts[i % len(texts)] for i, p in enumerate(sorted(pats))]


def sql_seeds():
    qs = set()
    for f in os.listdir(os.path.join(ROOT, 'tests')):
        if f.startswith('test_sql'):
            qs |= c_literals(os.path.join(ROOT, 'tests', f),
                             r'"((?:SELECT|WITH|VALUES|EXPLAIN|DELETE|UPDATE|INSERT|PRAGMA|ATTACH|'
                             r'VACUUM|CREATE|BEGIN)(?:[^"\\]|\\.)*)"')
    qs |= {"SELECT customer_id, SUM(amount) FROM invoices WHERE status = 'paid' GROUP BY customer_id",
           "SELECT c.name, SUM(i.amount) FROM invoices i JOIN customers c USING (customer_id) "
           "GROUP BY c.name ORDER BY 2 DESC",
           "SELECT printf('%.*c', 2147483647, 'x')", "SELECT format('%5.2f|%-4d', 3.14159, 7)",
           "SELECT (SELECT (SELECT 1 AS a WHERE a+a+a) AS a WHERE a+a+a)",
           "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 100) "
           "SELECT sum(n), 1 FROM r",
           "SELECT json_group_array(amount), json_object('a', 1) FROM invoices",
           "SELECT customer_id, SUM(amount) OVER (PARTITION BY customer_id ORDER BY issued_on) "
           "FROM invoices",
           "SELECT 'a' LIKE 'A%' ESCAPE '!', 'abc' GLOB 'a*', instr('banana','an'), "
           "replace('aa','a','b')",
           "SELECT trim(' x ', ' '), ltrim('xxy','x'), rtrim('yxx','x')"}
    return sorted(qs)


def toml_seeds():
    return [open(os.path.join(ROOT, 'seeds.toml'), encoding='utf-8').read(),
            "[corpus]\nmaster_seed = 7\ntest_fraction = 0.25\n[templates.grouped_sum]\ncount = 4\n"
            "[templates.regex_iso_dates]\ncount = 4\n[templates.sql_paid_revenue]\ncount = 4\n",
            "[corpus]\nmaster_seed = 1\n\n[templates.grouped_sum]\nrowz = 3\n",
            "[corpus]\nstrength_target = 1.5\n",
            'a = "x\\u00e9\\n"\nb = \'lit\'\nc = [1, 2,\n 3,]\nd.e = 1_000\nf = -1.5e3\n'
            'g = true\n["q k".x]\nh = []\n',
            "x = 1\nx = 2\n", "[a]\n[a]\n", "t = 1979-05-27\n", 's = """multi"""\n',
            "i = {a = 1}\n", "[[arr]]\n", "h = 0xff\n", "n = nan\n"]


# The kind order of fuzz/fuzz_extract.c (its first byte: kind << 1 | raw).
EXTRACT_KINDS = ['value', 'regex', 'sql', 'abstain']


def extract_seeds():
    items = []
    for line in open(os.path.join(ROOT, 'tests/data/extract_cases.txt'), encoding='utf-8'):
        line = line.rstrip('\n')
        if not line or line.startswith('#'):
            continue
        kind, mode, comp = line.split('\t')[:3]
        k = EXTRACT_KINDS.index(kind) if kind in EXTRACT_KINDS else 4
        text = bytes(comp, 'utf-8').decode('unicode_escape').encode('latin-1')
        items.append(bytes([k << 1 | (mode == 'raw')]) + text)
    return items


if __name__ == '__main__':
    save('value', value_seeds())
    save('abstain', abstain_seeds())
    save('regex', regex_seeds())
    save('sql', sql_seeds())
    save('toml', toml_seeds())
    save('extract', extract_seeds())

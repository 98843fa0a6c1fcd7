#!/usr/bin/python3
"""pycheck.py -- vat's checks written as a user would write them in plain
Python (standard library: json, math, re, sqlite3, csv), the yardstick
`make bench` holds the library's checkers to.

It reads a built corpus as it is (out/experience, out/verifiers with each
row's spec_json and expected, out/rollouts for the answers), and scores
answers per checker the obvious way:

  value    json.loads, then the spec's shape compared member by member
           (math.isclose with the spec's tolerances; lists in order or
           sorted, duplicates refused when the spec says unique)
  abstain  the abstention object compared, else the value check
  regex    re.compile (re's own cache), [m.group(0) for m in finditer]
           on every case, held-out ones included
  sql      a SELECT gate (one statement starting SELECT or WITH), then
           sqlite3 on in-memory copies of the task's fixtures (SQLite files
           backed up, CSV files loaded as the spec's load member says),
           each fixture's reference rows computed once, rows compared in
           order or sorted, numbers within the tolerances.  No sandbox, no
           step budget: the setting most favourable to Python.

Before it times anything it scores every task's gold (must be 1), every
trap answer (must be below 1) and the malformed answer (must be 0), and
reports on standard error how many agreed, so the figures come from checks
that do the real work.

usage: pycheck.py CORPUS_ROOT [SECONDS]
         times each template's gold answers, checker by checker, for about
         SECONDS of CPU (default 1) and prints `template checker checks/s`
       pycheck.py --serve CORPUS_ROOT
         prints `ready`, then for each line `TEMPLATE SECONDS` read from
         standard input times that template's SQL checks on distinct
         answer texts (the gold plus a trailing `-- n` comment that never
         repeats, so sqlite3's statement cache cannot serve it) for SECONDS
         of CPU and prints `CHECKS CPU_SECONDS` (`0 0` for a template
         without SQL tasks); vat-bench takes turns with it.
Timing is CPU time of this process (time.process_time), as on vat's side."""
import csv
import json
import math
import os
import re
import sqlite3
import sys
import time


def read_rows(root, table):
    """Every row of one table, train then test."""
    rows = []
    for split in ("train", "test"):
        path = os.path.join(root, "out", table, split + ".jsonl")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                rows.extend(json.loads(line) for line in f if line.strip())
    return rows


# ---- value and abstain ---------------------------------------------------------------

def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def numbers_close(got, want, spec):
    if not is_number(got) or not math.isfinite(got):
        return False
    if spec.get("integer") and got != int(got):
        return False
    return math.isclose(got, want, rel_tol=spec.get("rel_tol", 1e-9),
                        abs_tol=spec.get("abs_tol", 1e-9))


def items_equal(got, want, spec):
    if isinstance(want, str):
        return got == want
    return numbers_close(got, want, spec)


def list_equal(got, want, spec):
    if not isinstance(got, list) or len(got) != len(want):
        return False
    if spec.get("unique") and len(set(map(json.dumps, got))) != len(got):
        return False
    if not spec.get("ordered", False):
        key = lambda x: (not isinstance(x, str), x if isinstance(x, str) else float(x))
        try:
            got, want = sorted(got, key=key), sorted(want, key=key)
        except (TypeError, ValueError):
            return False
    return all(items_equal(g, w, spec) for g, w in zip(got, want))


def object_equal(got, want, spec, inner):
    if not isinstance(got, dict) or got.keys() != want.keys():
        return False
    return all(inner(got[k], want[k]) for k in want)


def value_equal(got, want, spec):
    shape = spec.get("shape", "number")
    if shape == "number":
        return numbers_close(got, want, spec)
    if shape == "list":
        return list_equal(got, want, spec)
    if shape == "object":
        return object_equal(got, want, spec, lambda g, w: items_equal(g, w, spec))
    if shape == "object_of_objects":
        return object_equal(got, want, spec, lambda g, w: object_equal(
            g, w, spec, lambda gg, ww: items_equal(gg, ww, spec)))
    if shape == "object_of_strings":
        return object_equal(got, want, spec, lambda g, w: isinstance(g, str) and g == w)
    return got == want


def value_checker(spec):
    want = spec["expected"]

    def check(answer):
        try:
            got = json.loads(answer)
        except ValueError:
            return 0.0
        return 1.0 if value_equal(got, want, spec) else 0.0
    return check


def abstain_checker(spec):
    abstention = spec.get("abstention", {"answerable": False})
    answerable = spec.get("answerable", False)
    value = value_checker(spec) if answerable else None

    def check(answer):
        try:
            got = json.loads(answer)
        except ValueError:
            return 0.0
        if got == abstention:
            return 0.0 if answerable else 1.0
        return value(answer) if answerable else 0.0
    return check


# ---- regex -----------------------------------------------------------------------------

def regex_checker(spec):
    cases = spec.get("cases", [])
    limit = spec.get("max_pattern_bytes", 1024)

    def check(answer):
        if len(answer.encode()) > limit:
            return 0.0
        try:
            pattern = re.compile(answer)
        except (re.error, OverflowError, RecursionError):
            return 0.0
        for case in cases:
            if [m.group(0) for m in pattern.finditer(case["text"])] != case["expected"]:
                return 0.0
        return 1.0
    return check


# ---- sql -------------------------------------------------------------------------------

class Fixtures:
    """In-memory copies of fixture files, one connection per (file, load)."""

    def __init__(self, root):
        self.root = root
        self.conns = {}

    def get(self, rel, load):
        key = (rel, json.dumps(load, sort_keys=True) if load else None)
        if key not in self.conns:
            self.conns[key] = self.csv(rel, load) if load else self.sqlite(rel)
        return self.conns[key]

    def sqlite(self, rel):
        path = os.path.join(self.root, rel)
        src = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db = sqlite3.connect(":memory:")
        src.backup(db)
        src.close()
        return db

    def csv(self, rel, load):
        db = sqlite3.connect(":memory:")
        table = load["table"]
        cols = load["columns"]
        ident = lambda s: '"' + s.replace('"', '""') + '"'
        db.execute(f"CREATE TABLE {ident(table)} (" +
                   ", ".join(f"{ident(n)} {t}" for n, t in cols) + ")")
        with open(os.path.join(self.root, rel), newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            next(reader, None)
            marks = ", ".join("?" for _ in cols)
            db.executemany(f"INSERT INTO {ident(table)} VALUES ({marks})",
                           ([cell if cell != "" else None for cell in row] for row in reader))
        db.commit()
        return db


def cells_equal(a, b, spec):
    if is_number(a) and is_number(b):
        return math.isclose(a, b, rel_tol=spec.get("rel_tol", 1e-9),
                            abs_tol=spec.get("abs_tol", 1e-6))
    return a == b


def sort_key(row):
    return [(0, 0, "") if v is None else (1, v, "") if is_number(v) else (2, 0, str(v))
            for v in row]


def rows_equal(got, want, spec):
    if len(got) != len(want):
        return False
    if not spec.get("ordered", False):
        got, want = sorted(got, key=sort_key), sorted(want, key=sort_key)
    for g, w in zip(got, want):
        if len(g) != len(w) or not all(cells_equal(x, y, spec) for x, y in zip(g, w)):
            return False
    return True


SELECT_START = re.compile(r"\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*(select|with)\b",
                          re.IGNORECASE | re.DOTALL)


def sql_checker(spec, fixtures):
    conns = [fixtures.get(rel, spec.get("load")) for rel in spec["fixtures"]]
    reference = [db.execute(spec["reference_sql"]).fetchall() for db in conns]
    max_rows = spec.get("max_rows", 10000)

    def check(answer):
        if not SELECT_START.match(answer):
            return 0.0
        try:
            for db, want in zip(conns, reference):
                got = db.execute(answer).fetchmany(max_rows + 1)
                if not rows_equal(got, want, spec):
                    return 0.0
        except (sqlite3.Error, sqlite3.Warning, ValueError, OverflowError):
            return 0.0
        return 1.0
    return check


# ---- the corpus ------------------------------------------------------------------------

def load_tasks(root):
    """[(template, checker, check, gold, traps, malformed)] in task-id order."""
    specs = {}
    for row in read_rows(root, "verifiers"):
        spec = json.loads(row["spec_json"])
        if row.get("expected") is not None:
            spec["expected"] = json.loads(row["expected"])
        specs[row["task_id"]] = spec
    answers = {}
    for row in read_rows(root, "rollouts"):
        answers.setdefault(row["task_id"], {})[row["role"]] = row["answer"]
    fixtures = Fixtures(root)
    makers = {"value": value_checker, "abstain": abstain_checker, "regex": regex_checker,
              "sql": lambda s: sql_checker(s, fixtures)}
    tasks = []
    for row in sorted(read_rows(root, "experience"), key=lambda r: r["task_id"]):
        spec = specs[row["task_id"]]
        kind = spec["checker"]
        roles = answers.get(row["task_id"], {})
        traps = [a for role, a in sorted(roles.items()) if role.startswith("trap")]
        tasks.append((row["template"], kind, makers[kind](spec), row["gold"], traps,
                      roles.get("malformed")))
    return tasks


def self_check(tasks):
    """Every gold 1, every trap below 1, every malformed answer 0."""
    bad = []
    n_traps = 0
    for template, kind, check, gold, traps, malformed in tasks:
        if check(gold) != 1.0:
            bad.append(f"{template} ({kind}): gold scores below 1")
        for trap in traps:
            n_traps += 1
            if check(trap) >= 1.0:
                bad.append(f"{template} ({kind}): a trap scores 1")
        if malformed is not None and check(malformed) != 0.0:
            bad.append(f"{template} ({kind}): the malformed answer scores 1")
    print(f"pycheck: {len(tasks)} tasks: gold 1, {n_traps} traps below 1, malformed 0 "
          f"({len(bad)} disagreements with vat's rollouts)", file=sys.stderr)
    for line in bad[:10]:
        print(f"pycheck: {line}", file=sys.stderr)
    return not bad


def groups(tasks):
    """{(template, checker): [(check, gold)]}"""
    out = {}
    for template, kind, check, gold, _, _ in tasks:
        out.setdefault((template, kind), []).append((check, gold))
    return out


def timed(jobs, seconds, distinct, serial=[0]):
    """Scores the golds round and round for about `seconds` of CPU;
    distinct: each text made new with a trailing comment.  (checks, cpu)"""
    n, t0 = 0, time.process_time()
    while True:
        for check, gold in jobs:
            if distinct:
                serial[0] += 1
                gold = f"{gold}\n-- {serial[0]}"
            if check(gold) != 1.0:
                sys.exit("pycheck: a gold answer stopped scoring 1")
            n += 1
        spent = time.process_time() - t0
        if spent >= seconds:
            return n, spent


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--serve":
        by = groups(load_tasks(args[1]))
        print("ready", flush=True)
        for line in sys.stdin:
            parts = line.split()
            if len(parts) != 2:
                break
            jobs = by.get((parts[0], "sql"))
            n, cpu = timed(jobs, float(parts[1]), True) if jobs else (0, 0.0)
            print(f"{n} {cpu:.6f}", flush=True)
        return 0
    if len(args) not in (1, 2) or args[0].startswith("-"):
        print("usage: pycheck.py CORPUS_ROOT [SECONDS] | pycheck.py --serve CORPUS_ROOT",
              file=sys.stderr)
        return 2
    seconds = float(args[1]) if len(args) == 2 else 1.0
    tasks = load_tasks(args[0])
    if not self_check(tasks):
        return 1
    for (template, kind), jobs in sorted(groups(tasks).items()):
        n, cpu = timed(jobs, seconds, False)
        print(f"{template:24s} {kind:8s} {n / cpu:12.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

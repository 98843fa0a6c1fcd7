#!/usr/bin/env python3
"""python_compat.py -- vat's regex and SQL checkers agree with Python.

For every regex task of a built corpus, the gold pattern run with Python's
re.finditer on every case text (held-out ones included) must extract
exactly the list the PCRE2-based checker expects.  For every SQL task, the
gold query run with Python's sqlite3 on every fixture (opened read-only
through a mode=ro URI) must return the rows vat's checker gets, as printed
by `vat check --explain --reveal-hidden` (numbers within 1e-9 relative or 1e-6 absolute,
in order when the task is ordered, else as a multiset).  An analytics task
in its program form names CSV fixtures and a "load" member: each CSV (the
main one and every variant) is loaded here with Python's csv and sqlite3
exactly as the prompt describes (header row = the declared columns,
every cell inserted as text into its declared type, an empty cell NULL),
and the gold query must give vat's rows on that database too.

Usage:
  python_compat.py --vat BUILD/vat ROOT            check the corpus at ROOT
  python_compat.py --vat BUILD/vat --config FILE   build FILE into a
                                                   temporary root first
  ... --strength                                   also require `vat strength`
                                                   to pass on that corpus

Standard library only.  Prints one line per failure and closes with
'N passed, M failed'; exits 1 when anything failed, 2 on a usage error or
a corpus that cannot be read or built.
"""
import argparse
import csv
import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

REL_TOL = 1e-9
ABS_TOL = 1e-6


def read_table(root, table):
    """All rows of out/<table>/{train,test}.jsonl below root."""
    rows = []
    found = False
    for split in ("train", "test"):
        path = os.path.join(root, "out", table, split + ".jsonl")
        if not os.path.exists(path):
            continue
        found = True
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    rows.append(json.loads(line))
    if not found:
        raise FileNotFoundError(f"no corpus at '{root}' (out/{table}/*.jsonl missing)")
    return rows


def check_regex(task_id, spec, gold):
    """Returns a list of failure messages (empty when Python agrees)."""
    try:
        pattern = re.compile(gold)
    except re.error as err:
        return [f"{task_id}: Python cannot compile the gold pattern: {err}"]
    failures = []
    for i, case in enumerate(spec.get("cases", [])):
        got = [m.group(0) for m in pattern.finditer(case["text"])]
        if got != case["expected"]:
            kind = "held-out" if case.get("heldout") else "example"
            failures.append(f"{task_id}: case {i} ({kind}) {case['text']!r}: Python extracts "
                            f"{got!r}, vat expects {case['expected']!r}")
    return failures


def py_value(v):
    """A value from Python's sqlite3 in the form vat's JSON rows use."""
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, float) and math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same_value(a, b):
    if is_number(a) and is_number(b):
        return abs(a - b) <= max(REL_TOL * max(abs(a), abs(b)), ABS_TOL)
    return type(a) is type(b) and a == b


def same_row(a, b):
    return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))


def sort_key(row):
    """A total order for a multiset comparison: nulls, numbers, text."""
    key = []
    for v in row:
        if v is None:
            key.append((0, 0, ""))
        elif is_number(v):
            key.append((1, v, ""))
        else:
            key.append((2, 0, str(v)))
    return key


def rows_agree(want, got, ordered):
    if len(want) != len(got):
        return False
    if not ordered:
        want = sorted(want, key=sort_key)
        got = sorted(got, key=sort_key)
    return all(same_row(a, b) for a, b in zip(want, got))


def vat_rows(vat, root, task_id, query, scratch):
    """{fixture: rows} as vat's sandbox returns them for query."""
    path = os.path.join(scratch, "answer.sql")
    with open(path, "w", encoding="utf-8") as f:
        f.write(query)
    # every fixture's rows, the held-out variants' too: a dataset author's view
    out = subprocess.run([vat, "check", "--root", root, "--task", task_id, "--answer-file", path,
                          "--explain", "--reveal-hidden"], capture_output=True, text=True,
                         check=False)
    if out.returncode != 0:
        raise RuntimeError(f"vat check failed ({out.returncode}): {out.stderr.strip()}")
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    verdict, per_fixture = lines[0], lines[1:]
    if verdict.get("score") != 1.0:
        raise RuntimeError(f"vat scores the gold {verdict.get('score')}: {verdict.get('reason')}")
    return {x["fixture"]: x["rows"] for x in per_fixture}


def load_csv(path, load):
    """An in-memory database holding the CSV at path, loaded as the
    program form's prompt says (verifiers/sqlload.c does the same)."""
    names = [c[0] for c in load["columns"]]
    with open(path, newline="", encoding="utf-8") as f:
        records = list(csv.reader(f, strict=True))
    if not records or records[0] != names:
        raise sqlite3.Error(f"header {records[:1]!r} is not {names!r}")
    con = sqlite3.connect(":memory:")
    cols = ", ".join(f'"{n}" {t}' for n, t in load["columns"])
    con.execute(f'CREATE TABLE "{load["table"]}" ({cols})')
    marks = ", ".join("?" for _ in names)
    for i, rec in enumerate(records[1:], 2):
        if len(rec) != len(names):
            raise sqlite3.Error(f"record {i} has {len(rec)} cells")
        con.execute(f'INSERT INTO "{load["table"]}" VALUES ({marks})',
                    [None if cell == "" else cell for cell in rec])
    con.commit()
    return con


def python_rows(root, rel, query, load=None):
    path = os.path.abspath(os.path.join(root, rel))
    if load is not None:
        con = load_csv(path, load)
        try:
            return [[py_value(v) for v in row] for row in con.execute(query).fetchall()]
        finally:
            con.close()
    uri = "file:" + path.replace("?", "%3f").replace("#", "%23") + "?mode=ro"
    con = sqlite3.connect(uri, uri=True)
    try:
        return [[py_value(v) for v in row] for row in con.execute(query).fetchall()]
    finally:
        con.close()


def check_sql(vat, root, task_id, spec, gold, scratch):
    query = spec.get("reference_sql") or gold
    if gold and gold != query:
        return [f"{task_id}: the experience gold differs from the spec's reference_sql"]
    try:
        theirs = vat_rows(vat, root, task_id, query, scratch)
    except (RuntimeError, ValueError, IndexError) as err:
        return [f"{task_id}: {err}"]
    failures = []
    ordered = bool(spec.get("ordered"))
    for rel in spec.get("fixtures", []):
        want = theirs.get(rel)
        if not isinstance(want, list):
            failures.append(f"{task_id}: vat has no rows for '{rel}': {want!r}")
            continue
        try:
            mine = python_rows(root, rel, query, spec.get("load"))
        except (sqlite3.Error, csv.Error, OSError) as err:
            failures.append(f"{task_id}: Python's sqlite3 fails on '{rel}': {err}")
            continue
        if not rows_agree(want, mine, ordered):
            failures.append(f"{task_id}: rows differ on '{rel}': Python {mine[:4]!r}..., "
                            f"vat {want[:4]!r}...")
    return failures


def verifier_spec(row):
    """The checker spec of a verifiers row (docs/tables.md): its spec_json
    with the expected value put back from the row's `expected` column."""
    spec = json.loads(row["spec_json"])
    if row.get("expected") is not None:
        spec["expected"] = json.loads(row["expected"])
    return spec


def run(vat, root):
    verifiers = read_table(root, "verifiers")
    golds = {row["task_id"]: row.get("gold") for row in read_table(root, "experience")}
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="vat-pycompat-") as scratch:
        for row in sorted(verifiers, key=lambda r: r["task_id"]):
            task_id, checker = row["task_id"], row.get("checker")
            spec = verifier_spec(row)
            if checker in ("regex", "sql") and not (spec.get("cases") or spec.get("fixtures")):
                print(f"FAIL {task_id}: the {checker} spec holds no cases or fixtures")
                failed += 1
                continue
            if checker == "regex":
                failures = check_regex(task_id, spec, golds.get(task_id))
            elif checker == "sql":
                failures = check_sql(vat, root, task_id, spec, golds.get(task_id), scratch)
            else:
                continue
            for msg in failures:
                print("FAIL " + msg)
            if failures:
                failed += 1
            else:
                passed += 1
    return passed, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", help="corpus root (out/ and fixtures/ below it)")
    ap.add_argument("--vat", default=os.environ.get("VAT_BINARY"), help="the vat binary")
    ap.add_argument("--config", help="build this seeds.toml into a temporary root first")
    ap.add_argument("--strength", action="store_true",
                    help="also run `vat strength` on the corpus and fail when it does")
    args = ap.parse_args()
    if not args.vat or (args.root is None) == (args.config is None):
        ap.print_usage(sys.stderr)
        print("python_compat.py: give --vat and exactly one of ROOT or --config", file=sys.stderr)
        return 2
    built = None
    try:
        root = args.root
        if args.config:
            built = root = tempfile.mkdtemp(prefix="vat-pycompat-corpus-")
            out = subprocess.run([args.vat, "build", "--config", args.config, "--root", root],
                                 capture_output=True, text=True, check=False)
            if out.returncode not in (0, 1):
                print(f"python_compat.py: vat build failed: {out.stderr.strip()}", file=sys.stderr)
                return 2
            if out.returncode == 1:
                print("python_compat.py: warning: some template fell short of its count",
                      file=sys.stderr)
        try:
            passed, failed = run(args.vat, root)
        except (OSError, ValueError, KeyError) as err:
            print(f"python_compat.py: {err}", file=sys.stderr)
            return 2
        strength_rc = 0
        if args.strength:
            out = subprocess.run([args.vat, "strength", "--root", root], capture_output=True,
                                 text=True, check=False)
            table = out.stdout.split("\n\n", 1)
            print(table[1] if len(table) > 1 else out.stdout, end="")
            if out.returncode != 0:
                print(f"FAIL vat strength exits {out.returncode} {out.stderr.strip()}")
                strength_rc = 1
    finally:
        if built:
            shutil.rmtree(built, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    if passed + failed == 0:
        print("python_compat.py: the corpus holds no regex or sql task", file=sys.stderr)
        return 1
    return 1 if failed or strength_rc else 0


if __name__ == "__main__":
    sys.exit(main())

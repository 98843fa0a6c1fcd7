#!/usr/bin/python3
"""Every workbook task of a built corpus, re-derived through openpyxl.

Builds two corpora with the vat binary: the repository's seeds.toml (whose
default mixes CSV and workbook fixtures) and one where every template with
the workbook format writes workbooks only.  For each task whose fixture is
an .xlsx it then finds the question's table with openpyxl (its own table
search: the title, then the header row, then data rows up to a blank or a
totals row), answers the question in Python and compares with the task's
gold; where the task's trap comes from its layout, it derives the trap the
same way (the other table, the totals row counted, text numbers skipped)
and compares with the trap rollout.  It also checks that the default
corpus holds workbooks of all five templates and the workbook corpus
every layout in them too, that every workbook prompt shows its workbook
whole, and that a second build of the default corpus is byte-identical.

Standard library and python3-openpyxl only."""
import argparse
import filecmp
import json
import math
import os
import subprocess
import sys
import tempfile
from decimal import Decimal

import openpyxl

TEMPLATES = ["grouped_sum", "grouped_mean", "pivot", "join_aggregate", "dup_header"]
LAYOUTS = ["title_notes", "two_tables", "group_header", "totals", "text_numbers", "blanks",
           "lookup_sheet"]
TOTAL = "Total"


def rows_of(path, table):
    out = []
    d = os.path.join(path, "out", table)
    for name in sorted(os.listdir(d)):
        if name.endswith(".jsonl"):
            with open(os.path.join(d, name)) as f:
                out.extend(json.loads(line) for line in f if line.strip())
    for r in out:
        # The tables carry params as JSON text (params_json) and gold as text.
        if "params_json" in r and "params" not in r:
            r["params"] = json.loads(r["params_json"])
        if isinstance(r.get("gold"), str):
            try:
                r["gold"] = json.loads(r["gold"])
            except ValueError:
                pass
    return out


def values(ws):
    return [list(r) for r in ws.iter_rows(values_only=True)]


def find_table(grid, cols, title=None):
    """The data rows of the table with header `cols` (below `title`)."""
    start = 0
    if title is not None:
        hits = [i for i, r in enumerate(grid) if title in r]
        if not hits:
            raise ValueError("no title %r" % title)
        start = hits[0] + 1
    for i in range(start, len(grid)):
        row = grid[i]
        for c in range(0, len(row) - len(cols) + 1):
            if list(row[c:c + len(cols)]) == list(cols):
                data = []
                for r in grid[i + 1:]:
                    cells = list(r[c:c + len(cols)]) + [None] * len(cols)
                    cells = cells[:len(cols)]
                    if all(v is None or v == "" for v in cells):
                        break
                    if TOTAL in cells:
                        data.append(("total", cells))
                        break
                    data.append(("row", cells))
                return data
    raise ValueError("no header %r" % (cols,))


def cents(v):
    if isinstance(v, str):
        return int((Decimal(v) * 100).to_integral_value())
    return int(round(v * 100))


def is_text_number(v):
    if not isinstance(v, str):
        return False
    try:
        float(v)
        return True
    except ValueError:
        return False


def table(grid, cols, wb, misread):
    """Rows as dicts, as gold reads them, or as the layout's trap does."""
    title = wb.get("table")
    trap = wb.get("trap") if misread else "own"
    if trap == "two_tables":
        title = wb["decoy"]
    out = []
    for kind, cells in find_table(grid, cols, title):
        if kind == "total" and trap != "totals":
            break
        if trap == "text_numbers":
            cells = [None if is_text_number(v) else v for v in cells]
        out.append(dict(zip(cols, cells)))
    return out


# ---- the questions, answered from openpyxl's cells ---------------------------

def grouped_sum(book, task, misread):
    wb = task["params"]["workbook"]
    cols = ["order_id", "customer", "region", "status", "amount", "ordered_on"]
    rows = table(values(book[wb["sheet"]]), cols, wb, misread)
    out = {}
    for r in rows:
        if r["status"] != "paid" or r["amount"] is None:
            continue
        out[r["region"]] = out.get(r["region"], 0) + cents(r["amount"])
    return {k: v / 100 for k, v in out.items()}


def grouped_mean(book, task, misread):
    wb = task["params"]["workbook"]
    cols = ["review_id", "product", "reviewer", "reviewed_on", "rating", "verified_purchase"]
    rows = table(values(book[wb["sheet"]]), cols, wb, misread)
    acc = {}
    for r in rows:
        if r["rating"] is None or r["rating"] == "":
            continue
        s = acc.setdefault(r["product"], [0, 0])
        s[0] += int(r["rating"])
        s[1] += 1
    return {k: s / n for k, (s, n) in acc.items() if n}


def pivot(book, task, misread):
    wb = task["params"]["workbook"]
    cols = ["shipment_id", "month", "carrier", "origin", "destination", "parcels", "weight_kg"]
    rows = table(values(book[wb["sheet"]]), cols, wb, misread)
    norm = [(("" if r["month"] is None else r["month"]),
             ("" if r["carrier"] is None else r["carrier"])) for r in rows]
    months = sorted({m for m, _ in norm})
    carriers = sorted({c for _, c in norm})
    return {m: {c: sum(1 for x in norm if x == (m, c)) for c in carriers} for m in months}


def join_aggregate(book, task, misread):
    wb = task["params"]["workbook"]
    orders = table(values(book[wb["sheet"]]),
                   ["order_id", "customer_id", "amount", "ordered_on"], wb, False)
    hist = table(values(book[wb["lookup_sheet"]]),
                 ["customer_id", "country", "valid_from"], {"table": None}, False)
    latest = {}
    for h in hist:
        cur = latest.get(h["customer_id"])
        if cur is None or h["valid_from"] > cur["valid_from"]:
            latest[h["customer_id"]] = h
    out = {}
    for o in orders:
        if misread:  # the fan-out: every history row of the customer
            matches = [h for h in hist if h["customer_id"] == o["customer_id"]]
        else:
            matches = [latest[o["customer_id"]]]
        for h in matches:
            out[h["country"]] = out.get(h["country"], 0) + cents(o["amount"])
    return {k: v / 100 for k, v in out.items()}


def dup_header(book, task, misread):
    p = task["params"]
    ws = book[p["workbook"]["sheet"]]
    grid = values(ws)
    key, measure = p["key"], p["measure"]
    if p["shape"] == "grouped":
        # The names row is the first below the top holding the measure;
        # the group of a column is the label over it, spread across its
        # merged range (or repeated, when the report repeats it).
        nr = next(i for i in range(1, len(grid)) if measure in grid[i])
        names, above = grid[nr], list(grid[nr - 1])
        for rng in ws.merged_cells.ranges:
            if rng.min_row - 1 == nr - 1:
                for c in range(rng.min_col - 1, rng.max_col):
                    above[c] = grid[nr - 1][rng.min_col - 1]
        kcol = next(c for c in range(len(names))
                    if names[c] == key or (names[c] is None and above[c] == key))
        cols = [c for c in range(len(names)) if names[c] == measure]
        if not misread:
            cols = [c for c in cols if above[c] == p["group"]]
            assert len(cols) == 1, (names, above, p)
    else:
        occ = 1 if misread else p["occurrence"]
        nr = next(i for i, r in enumerate(grid)
                  if key in r and sum(1 for v in r if v == measure) >= occ)
        names = grid[nr]
        kcol = names.index(key)
        cols = [c for c in range(len(names)) if names[c] == measure][occ - 1:]
    col = cols[0]
    one = p.get("key_value")
    out = {}
    for r in grid[nr + 1:]:
        if one is not None and r[kcol] != one:
            continue
        out[r[kcol]] = out.get(r[kcol], 0) + cents(r[col])
    integer = isinstance(task["gold"], int) or (isinstance(task["gold"], dict) and all(
        isinstance(v, int) for v in task["gold"].values()))
    conv = (lambda c: c // 100) if integer else (lambda c: c / 100)
    if one is not None:
        return conv(out[one])
    return {k: conv(v) for k, v in out.items()}


DERIVE = {"grouped_sum": grouped_sum, "grouped_mean": grouped_mean, "pivot": pivot,
          "join_aggregate": join_aggregate, "dup_header": dup_header}


def close(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)
    return a == b


def check_corpus(root, problems, seen):
    tasks = rows_of(root, "experience")
    traps = {r["task_id"]: r["answer"] for r in rows_of(root, "rollouts") if r["role"] == "trap"}
    n = 0
    for t in tasks:
        if t["fixture"]["format"] != "xlsx":
            continue
        n += 1
        name = t["template"]
        # a workbook has no program form: its value prompt shows every row
        if not t["self_contained"]:
            problems.append("%s: the prompt shows the workbook in part" % t["task_id"])
        if name not in DERIVE:
            problems.append("%s: a workbook task of a template this test does not know" % t["task_id"])
            continue
        book = openpyxl.load_workbook(os.path.join(root, t["fixture"]["path"]))
        gold = t["gold"]
        if isinstance(gold, str):
            gold = json.loads(gold)
        try:
            got = DERIVE[name](book, t, False)
        except (ValueError, KeyError, IndexError, TypeError, AssertionError) as ex:
            problems.append("%s: openpyxl derivation failed: %r" % (t["task_id"], ex))
            continue
        if not close(got, gold):
            problems.append("%s: gold %s, openpyxl says %s" % (t["task_id"], gold, got))
        wb = t["params"]["workbook"]
        seen.setdefault("templates", set()).add(name)
        for lay in wb["layouts"]:
            seen.setdefault("layouts", set()).add(lay)
        trap_layout = wb.get("trap", "own")
        seen.setdefault("traps", set()).add(trap_layout)
        if trap_layout != "own" or name in ("join_aggregate", "dup_header"):
            # join_aggregate and dup_header keep their own traps (the
            # fan-out, the first same-named column), derived here too.
            trap = DERIVE[name](book, t, True)
            if t["task_id"] not in traps:
                problems.append("%s: no trap rollout" % t["task_id"])
            elif not close(trap, json.loads(traps[t["task_id"]])):
                problems.append("%s: trap (%s) %s, openpyxl says %s"
                                % (t["task_id"], trap_layout, traps[t["task_id"]], trap))
            if close(trap, gold):
                problems.append("%s: the %s trap equals gold" % (t["task_id"], trap_layout))
    return n


def build(vat, config, root, jobs):
    subprocess.run([vat, "build", "--config", config, "--root", root, "--jobs", str(jobs)],
                   check=True, stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vat", required=True)
    ap.add_argument("--config", required=True, help="the repository's seeds.toml")
    args = ap.parse_args()
    problems = []
    with tempfile.TemporaryDirectory(prefix="vat-wb-") as d:
        default1, default2, books = (os.path.join(d, x) for x in ("d1", "d2", "wb"))
        build(args.vat, args.config, default1, 2)
        build(args.vat, args.config, default2, 1)
        cmp = filecmp.dircmp(default1, default2)

        def differs(c):
            out = list(c.diff_files) + list(c.left_only) + list(c.right_only)
            for sub in c.subdirs.values():
                out += differs(sub)
            # dircmp compares shallowly; compare the bytes of the common files
            for f in c.same_files:
                if not filecmp.cmp(os.path.join(c.left, f), os.path.join(c.right, f),
                                   shallow=False):
                    out.append(f)
            return out
        bad = differs(cmp)
        if bad:
            problems.append("two builds of the default corpus differ: %s" % bad[:5])
        seen = {}
        n_default = check_corpus(default1, problems, seen)
        # The default corpus mixes workbooks into all five templates.  Its
        # few workbooks need not hold every layout (one past the inline cap
        # is redrawn, maybe as a CSV): the workbook corpus below must.
        if len(seen.get("templates", set())) < 5:
            problems.append("the default corpus has workbook tasks of only %s"
                            % sorted(seen.get("templates", set())))
        cfg = os.path.join(d, "workbooks.toml")
        with open(cfg, "w") as f:
            f.write("[corpus]\nmaster_seed = 4242\n")
            for t in TEMPLATES:
                f.write('[templates.%s]\ncount = 24\nfixture_format = "xlsx"\n' % t)
        subprocess.run([args.vat, "build", "--config", cfg, "--root", books, "--only",
                        ",".join(TEMPLATES)], check=True, stdout=subprocess.DEVNULL)
        seen = {}
        n_books = check_corpus(books, problems, seen)
        missing = [x for x in LAYOUTS if x not in seen.get("layouts", set())]
        if missing:
            problems.append("layouts never drawn: %s" % missing)
        if len(seen.get("templates", set())) < 5:
            problems.append("workbook tasks of only %s" % sorted(seen.get("templates", set())))
        for p in problems:
            print("python_workbooks: " + p)
        print("python_workbooks: %d workbook tasks in the default corpus, %d in the workbook "
              "corpus, templates %s, trap layouts %s, %d problems"
              % (n_default, n_books, sorted(seen.get("templates", set())),
                 sorted(seen.get("traps", set())), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

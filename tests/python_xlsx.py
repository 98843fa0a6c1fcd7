#!/usr/bin/python3
"""Workbooks vat writes mean what vat thinks they mean: openpyxl (an
independent reader) must see exactly the cells, types and merged ranges
that vat's own reader reports.  `test_xlsxio --emit DIR` writes each
workbook with a JSON of vat's reading beside it; this compares the two.
Standard library and python3-openpyxl only."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import openpyxl


def compare(xlsx, want):
    wb = openpyxl.load_workbook(xlsx)
    problems = []
    names = [s["name"] for s in want]
    if wb.sheetnames != names:
        return ["sheets %r, vat read %r" % (wb.sheetnames, names)]
    for sheet in want:
        ws = wb[sheet["name"]]
        seen = {}
        for row in ws.iter_rows():
            for c in row:
                if c.value is not None:
                    seen[c.coordinate] = c.value
        cells = sheet["cells"]
        for addr in sorted(set(seen) | set(cells)):
            if addr not in cells:
                problems.append("%s!%s: openpyxl sees %r, vat nothing" % (ws.title, addr, seen[addr]))
                continue
            if addr not in seen:
                problems.append("%s!%s: vat sees %r, openpyxl nothing" % (ws.title, addr, cells[addr]))
                continue
            kind, value = cells[addr]
            got = seen[addr]
            ok = {
                "s": lambda: isinstance(got, str) and got == value,
                "b": lambda: isinstance(got, bool) and got == value,
                "n": lambda: isinstance(got, (int, float)) and not isinstance(got, bool)
                and float(got) == value,
            }[kind]()
            if not ok:
                problems.append("%s!%s: vat %s %r, openpyxl %r" % (ws.title, addr, kind, value, got))
        merges = sorted(str(r) for r in ws.merged_cells.ranges)
        if merges != sorted(sheet["merges"]):
            problems.append("%s: merges %r, vat %r" % (ws.title, merges, sheet["merges"]))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emitter", required=True, help="the test_xlsxio binary")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="vat-xlsx-") as d:
        subprocess.run([args.emitter, "--emit", d], check=True)
        books = sorted(f[:-5] for f in os.listdir(d) if f.endswith(".xlsx"))
        if len(books) < 2:
            print("python_xlsx: the emitter wrote %d workbooks" % len(books))
            return 1
        failed = 0
        ncells = 0
        for b in books:
            with open(os.path.join(d, b + ".json")) as f:
                want = json.load(f)
            ncells += sum(len(s["cells"]) for s in want)
            for p in compare(os.path.join(d, b + ".xlsx"), want):
                print("python_xlsx: %s: %s" % (b, p))
                failed += 1
        print("python_xlsx: %d workbooks, %d cells, %d disagreements" % (len(books), ncells, failed))
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

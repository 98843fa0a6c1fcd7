#!/usr/bin/python3
"""pyenv.py -- the tool-step bench: the SQL tool calls of a corpus's expert
transcripts (out/env, the sql calls of each row's completion) through
vat.Env in-process, beside a plain Python loop making the same calls with
sqlite3 (the yardstick `make bench` prints the ratio to).

vat.Env side: per transcript, reset(task_id) then step() for each of its
sql calls, as an RL loop drives it (the episode opened, the tool call's
arguments sent as JSON, the observation read back), timed in CPU seconds.

Python side, written as a user would: each task's tables loaded once into
an in-memory sqlite3 database as the transcript's env_json says (csv
module, sqlite3's backup for SQLite files, openpyxl for workbooks; not
timed), then per call json.loads of the arguments, cursor.execute,
fetchmany, and the same text table vat's sql tool shows (names, ' | ',
15 significant digits for reals, the row count).  No sandbox, no gate,
no budgets: the setting most favourable to Python.  Before timing, every
call's text is compared with vat's observation, so both sides do the
same work.

usage: pyenv.py CORPUS_ROOT [SECONDS]   (default 2 CPU seconds per side)
Prints one line per side and the ratio.  Timing is time.process_time."""
import csv
import io
import json
import os
import sqlite3
import sys
import time

SHOW_ROWS = 50
QUERY_ROWS = 1000
CELL_BYTES = 200


def read_rows(root, table):
    rows = []
    for split in ("train", "test"):
        path = os.path.join(root, "out", table, split + ".jsonl")
        with open(path, encoding="utf-8") as f:
            rows.extend(json.loads(line) for line in f if line.strip())
    return rows


def xl_text(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, float)):
        s = "%.15g" % v
        if float(s) != float(v):
            s = "%.17g" % v
        return s
    return str(v)


def load_task(root, spec):
    """An in-memory sqlite3 database holding the task's tables."""
    path = os.path.join(root, spec["fixture"])
    db = sqlite3.connect(":memory:")
    if spec["format"] == "sqlite":
        src = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
        src.backup(db)
        src.close()
        return db
    if spec["format"] == "csv":
        with open(path, encoding="utf-8", newline="") as f:
            records = list(csv.reader(f))
        book = None
    else:
        import openpyxl

        book = openpyxl.load_workbook(path, read_only=False, data_only=True)
    for t in spec["tables"]:
        if "notes" in t:
            cols = [("line", "INTEGER"), ("text", "TEXT")]
            if book is None:
                rows = [[i + 1, " ".join(f for f in r if f)]
                        for i, r in enumerate(records[: t["notes"]])]
            else:
                ws = book[t["sheet"]]
                rows = []
                for i, r in enumerate(ws.iter_rows(min_row=1, max_row=t["notes"], values_only=True)):
                    rows.append([i + 1, " ".join(xl_text(v) for v in r if xl_text(v))])
        else:
            cols = [tuple(c) for c in t["columns"]]
            if book is None:
                rows = [[c if c != "" else None for c in r] for r in records[t["skip"]:]]
            else:
                ws = book[t["sheet"]]
                a, b = t["range"].split(":")
                rows = [[xl_text(v) or None for v in r] for r in ws[a:b]]
                rows = [[xl_text(c.value) or None for c in r] for r in ws[a:b]]
        create = "CREATE TABLE \"%s\" (%s)" % (
            t["name"], ", ".join('"%s" %s' % (n, ty) for n, ty in cols))
        db.execute(create)
        db.executemany("INSERT INTO \"%s\" VALUES (%s)" % (t["name"], ", ".join("?" * len(cols))),
                       [[None if v is None else str(v) for v in r] for r in rows])
    db.commit()
    return db


def esc(s):
    out = []
    for ch in s[:CELL_BYTES]:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "|":
            out.append("\\|")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append("\\x%02x" % ord(ch))
        else:
            out.append(ch)
    return "".join(out) + ("..." if len(s) > CELL_BYTES else "")


def cell(v):
    if v is None:
        return "NULL"
    if isinstance(v, float):
        s = "%.15g" % v
        return s if any(c in s for c in ".eEn") else s + ".0"
    if isinstance(v, int):
        return str(v)
    return esc(v if isinstance(v, str) else v.hex())


def render(cur, rows):
    lines = [" | ".join(esc(d[0]) for d in cur.description)]
    shown = rows[:SHOW_ROWS]
    for r in shown:
        lines.append(" | ".join(cell(v) for v in r))
    n = len(rows)
    if len(shown) == n:
        lines.append("(%d row%s)" % (n, "" if n == 1 else "s"))
    else:
        lines.append("(the first %d of %d rows shown)" % (len(shown), n))
    return "\n".join(lines)


def py_step(db, args_text):
    q = json.loads(args_text)["query"]
    try:
        cur = db.execute(q)
        rows = cur.fetchmany(QUERY_ROWS + 1)
    except sqlite3.Error as e:
        return "error: %s" % e
    if len(rows) > QUERY_ROWS:
        return "error: more than %d rows" % QUERY_ROWS
    return render(cur, rows)


def episodes(root):
    """[(task_id, env spec, [sql call argument texts])], in table order."""
    out = []
    for r in read_rows(root, "env"):
        calls = [c["function"]["arguments"] for m in r["completion"] for c in m["tool_calls"]
                 if c["function"]["name"] == "sql"]
        if calls:
            out.append((r["task_id"], json.loads(r["env_json"]), calls))
    return out


def time_vat(env, eps, seconds):
    steps = 0
    t0 = time.process_time()
    while True:
        for tid, _, calls in eps:
            env.reset(tid)
            for a in calls:
                env.step({"name": "sql", "arguments": a})
            steps += len(calls)
        t = time.process_time() - t0
        if t >= seconds:
            return steps, t


def time_python(dbs, eps, seconds):
    steps = 0
    t0 = time.process_time()
    while True:
        for tid, _, calls in eps:
            db = dbs[tid]
            for a in calls:
                py_step(db, a)
            steps += len(calls)
        t = time.process_time() - t0
        if t >= seconds:
            return steps, t


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    seconds = float(argv[2]) if len(argv) > 2 else 2.0
    import vat

    eps = episodes(root)
    dbs = {tid: load_task(root, spec) for tid, spec, _ in eps}
    env = vat.Env(root)
    same = 0
    for tid, _, calls in eps:
        env.reset(tid)
        for a in calls:
            obs, _, _ = env.step({"name": "sql", "arguments": a})
            if obs == py_step(dbs[tid], a):
                same += 1
            else:
                print("pyenv: %s: vat and sqlite3 differ on %s" % (tid, a[:80]), file=sys.stderr)
    ncalls = sum(len(c) for _, _, c in eps)
    print("pyenv: %d of %d sql calls of %d transcripts give the same text on both sides"
          % (same, ncalls, len(eps)), file=sys.stderr)
    vs, vt = time_vat(env, eps, seconds)
    ps, pt = time_python(dbs, eps, seconds)
    env.close()
    vr, pr = vs / vt, ps / pt
    print("env  vat.Env       %9.0f sql tool steps/s  (%d steps in %.2f CPU s, reset included)"
          % (vr, vs, vt))
    print("env  python+sqlite3 %8.0f sql tool steps/s  (%d steps in %.2f CPU s)" % (pr, ps, pt))
    print("env  ratio vat.Env / python: %.2fx" % (vr / pr))
    return 0 if same == ncalls else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

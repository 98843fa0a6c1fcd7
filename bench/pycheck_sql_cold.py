#!/usr/bin/env python3
"""The SQL checks of the plain-Python peer (../shared/bench/pycheck.py),
run on distinct answer texts: the same code path (sqlite3 on in-memory
copies of the task's fixtures, loaded once, gold rows computed once, no
sandbox), but every check gets the gold with a trailing comment whose
number never repeats, as vat-bench's `cold` rows do, so sqlite3's
statement cache cannot serve it and each check prepares its text.

usage: pycheck_sql_cold.py CORPUS_ROOT [SECONDS]
         prints `template sql checks/s` for each SQL template
       pycheck_sql_cold.py --serve CORPUS_ROOT
         prints `ready`, then for each line `TEMPLATE SECONDS` read from
         standard input times that template's checks for SECONDS of CPU
         and prints `CHECKS CPU_SECONDS` (0 0 for a template it has not):
         vat-bench takes turns with it, so both sides meet the machine in
         the same state
(CORPUS_ROOT is the view vat-bench writes for pycheck.py; standard
library only.)"""
import json, os, sqlite3, sys, time


def load(root, table):
    rows = {}
    d = os.path.join(root, "out", table)
    for f in sorted(os.listdir(d)):
        if f.endswith(".jsonl"):
            for line in open(os.path.join(d, f)):
                r = json.loads(line)
                rows[r["task_id"]] = r
    return rows


def jobs_by_template(root):
    by = {}
    for e in load(root, "experience").values():
        if e["answer_kind"] == "sql":
            by.setdefault(e["template"], []).append(e)
    conns = {}

    def conn(rel):
        if rel not in conns:
            src = sqlite3.connect(f"file:{os.path.join(root, rel)}?mode=ro", uri=True)
            dst = sqlite3.connect(":memory:")
            src.backup(dst)
            src.close()
            conns[rel] = dst
        return conns[rel]

    serial = [0]
    out = {}
    for tmpl, es in sorted(by.items()):
        jobs = []
        for e in es:
            ans = e["gold"]
            fx = [e["fixture"]["path"] if isinstance(e["fixture"], dict) else e["fixture"]]
            fx += [v["path"] if isinstance(v, dict) else v for v in e.get("variants", [])]
            golds = [conn(p).execute(ans).fetchall() for p in fx]

            def job(ans=ans, fx=fx, golds=golds):
                serial[0] += 1
                text = f"{ans}\n-- {serial[0]}"
                return all(conn(p).execute(text).fetchall() == g for p, g in zip(fx, golds))

            jobs.append(job)
        out[tmpl] = jobs
    return out


def timed(tmpl, jobs, secs):
    """Runs the jobs round and round for secs of CPU: (checks, cpu seconds)."""
    clock = time.process_time
    n, t0 = 0, clock()
    while clock() - t0 < secs:
        for j in jobs:
            if not j():
                sys.exit(f"pycheck_sql_cold: {tmpl}: a commented gold gave other rows")
            n += 1
    return n, clock() - t0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--serve":
        by = jobs_by_template(sys.argv[2])
        print("ready", flush=True)
        for line in sys.stdin:
            parts = line.split()
            if len(parts) != 2:
                break
            tmpl, secs = parts[0], float(parts[1])
            n, cpu = timed(tmpl, by[tmpl], secs) if tmpl in by else (0, 0.0)
            print(f"{n} {cpu:.6f}", flush=True)
        return
    root = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    for tmpl, jobs in jobs_by_template(root).items():
        n, cpu = timed(tmpl, jobs, secs)
        print(f"{tmpl:20s} sql {n / cpu:12.0f}")


main()

#!/usr/bin/python3
"""pypeer.py -- the work of a two-template vat build, scripted as a user
would script it in plain Python (standard library: csv, sqlite3, json,
hashlib, random), the yardstick `make bench-build` times vat's build
against (bench/vs_python.sh).

For each of N tasks of two templates it does what vat's admission does:

  grouped_sum       an orders CSV (20-120 rows, 3-6 regions, paid and up
                    to three other statuses); the question: paid amount per
                    region as a JSON object.  Gold read back from the file
                    with csv, confirmed a second way through sqlite3; the
                    trap (every status summed) must differ from gold.
  sql_paid_revenue  an invoices database, main plus two variants (24-90
                    invoices, amounts in cents, some unpriced); the
                    question: one SELECT giving paid revenue per month.
                    Gold's rows on each file confirmed by a Python sum over
                    the rows; the trap (no status filter) must give other
                    rows on every file.

A draw whose trap is not armed is drawn again.  Each task's gold, trap
and a malformed answer are scored by the task's checker (value: json and
math.isclose; SQL: a read-only connection with an authorizer, a step
budget and a row cap, rows compared on every file) and must score 1, 0
and fail the gate.  Then the seven tables are written as JSONL, split
train/test by a hash of the task id, and a manifest of every file's
SHA-256.

usage: pypeer.py ROOT N
Writes ROOT/fixtures/ and ROOT/out/; prints one summary line."""
import csv
import datetime
import hashlib
import io
import json
import math
import os
import random
import sqlite3
import sys

MASTER_SEED = 20261130
TABLES = ("experience", "fixture_generators", "sft_examples", "rollouts",
          "preference_pairs", "verifiers", "rubric_items")
MALFORMED = "Sure! Here is my answer:"


def rng_for(template, index, attempt):
    digest = hashlib.sha256(f"{MASTER_SEED}:{template}:{index}:{attempt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# ---- the value checker -------------------------------------------------------------------

def check_object(answer, expected, rel_tol=1e-9, abs_tol=1e-6):
    """(gate_passed, score, reason) for a JSON object of numbers."""
    try:
        got = json.loads(answer)
    except ValueError:
        return False, 0.0, "not JSON"
    if not isinstance(got, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in got.values()):
        return False, 0.0, "not an object of numbers"
    if got.keys() != expected.keys():
        return True, 0.0, "other keys"
    for k, want in expected.items():
        if not math.isclose(got[k], want, rel_tol=rel_tol, abs_tol=abs_tol):
            return True, 0.0, f"wrong value for {k!r}"
    return True, 1.0, "matches"


# ---- grouped_sum -------------------------------------------------------------------------

REGIONS = ["North", "South", "East", "West", "Central", "Northeast", "Northwest", "Southeast"]
OTHER_STATUSES = ["pending", "refunded", "cancelled", "failed"]
FIRST = ["Maria", "Omar", "Yuki", "Nadia", "Elena", "Kwame", "Julia", "Hamid", "Leila", "Noah"]
LAST = ["Nielsen", "Mensah", "Kim", "Rossi", "Sato", "Haddad", "Patel", "Asante", "Horvat"]


def draw_orders(r):
    regions = r.sample(REGIONS, r.randint(3, 6))
    statuses = ["paid"] + r.sample(OTHER_STATUSES, r.randint(1, 3))
    day = r.randrange(18000, 19500)
    rows = []
    for k in range(r.randint(20, 120)):
        day += r.randrange(0, 3)
        status = "paid" if r.random() < 0.6 else r.choice(statuses[1:])
        cents = r.randrange(100, 250000)
        rows.append([f"ORD-{300000 + 2 * k + r.randrange(2)}",
                     f"{r.choice(FIRST)} {r.choice(LAST)}",
                     r.choice(regions), status, f"{cents // 100}.{cents % 100:02d}",
                     str(datetime.date.fromordinal(719163 + day))])
    return rows


def grouped_sum(root, index):
    for attempt in range(50):
        r = rng_for("grouped_sum", index, attempt)
        rel = f"fixtures/grouped_sum/grouped_sum-{index:05d}.csv"
        path = os.path.join(root, rel)
        rows = draw_orders(r)
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["order_id", "customer", "region", "status", "amount", "ordered_on"])
            w.writerows(rows)
        # gold and trap from the file as written
        gold, trap = {}, {}
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                amount = float(row["amount"])
                trap[row["region"]] = trap.get(row["region"], 0.0) + amount
                if row["status"] == "paid":
                    gold[row["region"]] = gold.get(row["region"], 0.0) + amount
        gold = {k: round(v, 2) for k, v in sorted(gold.items())}
        trap = {k: round(v, 2) for k, v in sorted(trap.items())}
        # confirmed a second way: the same file through SQLite
        db = sqlite3.connect(":memory:")
        db.execute("CREATE TABLE orders (order_id TEXT, customer TEXT, region TEXT, "
                   "status TEXT, amount REAL, ordered_on TEXT)")
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            next(reader)
            db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)", reader)
        confirm = dict(db.execute("SELECT region, ROUND(SUM(amount), 2) FROM orders "
                                  "WHERE status = 'paid' GROUP BY region"))
        db.close()
        if confirm.keys() != gold.keys() or any(
                not math.isclose(confirm[k], gold[k], abs_tol=1e-6) for k in gold):
            raise SystemExit(f"pypeer: grouped_sum {index}: gold and its confirmation differ")
        if trap == gold:
            continue  # the trap is not armed: draw again
        with open(path, encoding="utf-8") as f:
            data = f.read()
        prompt = (f"The CSV file `{rel}` lists orders:\n\n```csv\n{data}```\n\n"
                  "What is the total amount of the paid orders (status = 'paid') in each "
                  "region? Leave out regions without paid orders. Answer with one JSON "
                  "object mapping each region to its total, rounded to cents.")
        spec = {"checker": "value", "shape": "object", "rel_tol": 1e-9, "abs_tol": 1e-6}
        return {"prompt": prompt, "gold": json.dumps(gold, separators=(",", ":")),
                "trap": json.dumps(trap, separators=(",", ":")), "spec": spec,
                "expected": gold, "files": [rel], "attempt": attempt,
                "check": lambda a, gold=gold: check_object(a, gold)}
    raise SystemExit(f"pypeer: grouped_sum {index}: no armed draw in 50 attempts")


# ---- sql_paid_revenue --------------------------------------------------------------------

SCHEMA = ("CREATE TABLE invoices (\n    invoice_id TEXT PRIMARY KEY,\n"
          "    customer_id TEXT NOT NULL,\n    status TEXT NOT NULL,\n"
          "    amount_cents INTEGER,  -- NULL until priced\n"
          "    issued_at TEXT NOT NULL  -- YYYY-MM-DD HH:MM:SS\n)")
GOLD_SQL = ("SELECT strftime('%Y-%m', issued_at) AS month,\n"
            "       COALESCE(SUM(amount_cents), 0) AS revenue_cents\n"
            "FROM invoices\nWHERE status = 'paid'\nGROUP BY month\nORDER BY month")
TRAP_SQL = ("SELECT strftime('%Y-%m', issued_at) AS month,\n"
            "       COALESCE(SUM(amount_cents), 0) AS revenue_cents\n"
            "FROM invoices\nGROUP BY month\nORDER BY month")
INVOICE_STATUSES = ["paid", "paid", "paid", "open", "void", "disputed"]


def draw_invoices(r, lo, hi):
    t = r.randrange(1_500_000_000, 1_700_000_000)
    rows = []
    for k in range(r.randint(lo, hi)):
        t += r.randrange(3600, 20 * 86400)
        stamp = datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M:%S")
        amount = None if r.random() < 0.05 else r.randrange(500, 2_000_000)
        rows.append((f"INV-{10000 + k}", f"C-{r.randrange(1, 60):04d}",
                     r.choice(INVOICE_STATUSES), amount, stamp))
    return rows


def write_db(path, rows):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute(SCHEMA)
    db.executemany("INSERT INTO invoices VALUES (?, ?, ?, ?, ?)", rows)
    db.commit()
    db.close()


def deny_writes(action, *_):
    allowed = (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION)
    return sqlite3.SQLITE_OK if action in allowed else sqlite3.SQLITE_DENY


def run_untrusted(path, query, max_rows=10000, budget=200):
    """An answer's rows on one file: read-only, reads only, a step budget
    (the progress handler every 1,000 steps, `budget` times), a row cap."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        db.set_authorizer(deny_writes)
        steps = [0]

        def over_budget():
            steps[0] += 1
            return steps[0] > budget
        db.set_progress_handler(over_budget, 1000)
        rows = db.execute(query).fetchmany(max_rows + 1)
        if len(rows) > max_rows:
            raise sqlite3.DatabaseError("too many rows")
        return rows
    finally:
        db.close()


def check_sql(answer, paths, references):
    """(gate_passed, score, reason) of a SELECT on every file."""
    head = answer.lstrip().split(None, 1)
    if not head or head[0].upper() not in ("SELECT", "WITH"):
        return False, 0.0, "not a SELECT statement"
    for path, want in zip(paths, references):
        try:
            got = run_untrusted(path, answer)
        except (sqlite3.Error, sqlite3.Warning) as e:
            return True, 0.0, f"error: {e}"
        if got != want:
            return True, 0.0, f"wrong rows on {os.path.basename(path)}"
    return True, 1.0, f"rows match on all {len(paths)} files"


def sql_paid_revenue(root, index):
    for attempt in range(50):
        r = rng_for("sql_paid_revenue", index, attempt)
        base = f"fixtures/sql_paid_revenue/sql_paid_revenue-{index:05d}"
        rels = [base + ".sqlite", base + ".v1.sqlite", base + ".v2.sqlite"]
        paths = [os.path.join(root, rel) for rel in rels]
        drawn = [draw_invoices(r, 24, 90), draw_invoices(r, 10, 40), draw_invoices(r, 10, 40)]
        for path, rows in zip(paths, drawn):
            write_db(path, rows)
        # gold's rows from each file, confirmed by summing the rows in Python
        references = [run_untrusted(p, GOLD_SQL) for p in paths]
        for path, want in zip(paths, references):
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            sums = {}
            for status, cents, issued in db.execute(
                    "SELECT status, amount_cents, issued_at FROM invoices"):
                if status == "paid":
                    sums[issued[:7]] = sums.get(issued[:7], 0) + (cents or 0)
            db.close()
            if sorted(sums.items()) != want:
                raise SystemExit(f"pypeer: sql_paid_revenue {index}: gold and its "
                                 "confirmation differ")
        if any(run_untrusted(p, TRAP_SQL) == want for p, want in zip(paths, references)):
            continue  # the trap is not armed on every file: draw again
        with sqlite3.connect(f"file:{paths[0]}?mode=ro", uri=True) as db:
            values = ",\n".join("  (" + ", ".join("NULL" if v is None else repr(v) for v in row)
                                + ")" for row in db.execute("SELECT * FROM invoices"))
        prompt = (f"The SQLite database `{rels[0]}` holds one table of invoices:\n\n```sql\n"
                  f"{SCHEMA};\nINSERT INTO invoices VALUES\n{values};\n```\n\n"
                  "Write one SQLite SELECT statement giving, for each calendar month of "
                  "issue (YYYY-MM, column `month`), the total of the paid invoices' amounts "
                  "in cents (column `revenue_cents`, 0 when none is priced), months in "
                  "ascending order.  It is also run on other databases of the same schema.")
        spec = {"checker": "sql", "dialect": "sqlite", "fixtures": rels, "tables": ["invoices"],
                "ordered": True, "reference_sql": GOLD_SQL}
        return {"prompt": prompt, "gold": GOLD_SQL, "trap": TRAP_SQL, "spec": spec,
                "expected": None, "files": rels, "attempt": attempt,
                "check": lambda a, paths=paths, refs=references: check_sql(a, paths, refs)}
    raise SystemExit(f"pypeer: sql_paid_revenue {index}: no armed draw in 50 attempts")


# ---- the tables --------------------------------------------------------------------------

def rows_for(root, template, index, task):
    task_id = f"{template}-{index:05d}"
    split = "test" if hashlib.sha256(task_id.encode()).digest()[0] < 52 else "train"
    verdicts = {role: task["check"](answer) for role, answer in
                (("gold", task["gold"]), ("trap", task["trap"]), ("malformed", MALFORMED))}
    gold, trap, bad = verdicts["gold"], verdicts["trap"], verdicts["malformed"]
    if not (gold[0] and gold[1] == 1.0 and trap[0] and trap[1] < 1.0 and not bad[0]):
        raise SystemExit(f"pypeer: {task_id}: admission failed ({verdicts})")
    digests = [sha256_file(os.path.join(root, rel)) for rel in task["files"]]
    seed = {"master": MASTER_SEED, "template": template, "index": index,
            "attempt": task["attempt"]}
    user = [{"role": "user", "content": task["prompt"]}]
    out = {t: [] for t in TABLES}
    out["experience"].append({
        "task_id": task_id, "template": template, "split": split, "prompt": task["prompt"],
        "gold": task["gold"], "seed": seed,
        "fixture": {"path": task["files"][0], "sha256": digests[0]},
        "variants": [{"path": p, "sha256": d} for p, d in zip(task["files"][1:], digests[1:])]})
    for k, (rel, digest) in enumerate(zip(task["files"], digests)):
        out["fixture_generators"].append({
            "fixture_id": f"{task_id}/{'main' if k == 0 else f'v{k}'}", "task_id": task_id,
            "split": split, "path": rel, "sha256": digest, "seed": seed})
    out["sft_examples"].append({"task_id": task_id, "split": split, "prompt": user,
                                "completion": [{"role": "assistant", "content": task["gold"]}]})
    for role, answer in (("gold", task["gold"]), ("trap", task["trap"]), ("malformed", MALFORMED)):
        passed, score, reason = verdicts[role]
        out["rollouts"].append({"rollout_id": f"{task_id}/{role}", "task_id": task_id,
                                "split": split, "role": role, "answer": answer,
                                "gate_passed": passed, "score": score, "reason": reason})
    out["preference_pairs"].append({
        "pair_id": f"{task_id}/trap", "task_id": task_id, "split": split, "prompt": user,
        "chosen": [{"role": "assistant", "content": task["gold"]}],
        "rejected": [{"role": "assistant", "content": task["trap"]}],
        "rejected_reason": trap[2]})
    out["verifiers"].append({
        "task_id": task_id, "split": split, "template": template,
        "checker": task["spec"]["checker"],
        "expected": None if task["expected"] is None else json.dumps(task["expected"]),
        "spec_json": json.dumps(task["spec"])})
    for item, weight in (("gate", 0.2), ("score", 0.6), ("trap", 0.2)):
        out["rubric_items"].append({"item_id": f"{task_id}/{item}", "task_id": task_id,
                                    "split": split, "item": item, "weight": weight})
    return split, out


def main():
    if len(sys.argv) != 3 or not sys.argv[2].isdigit():
        print("usage: pypeer.py ROOT N", file=sys.stderr)
        return 2
    root, n = sys.argv[1], int(sys.argv[2])
    for template in ("grouped_sum", "sql_paid_revenue"):
        os.makedirs(os.path.join(root, "fixtures", template), exist_ok=True)
    lines = {(t, s): io.StringIO() for t in TABLES for s in ("train", "test")}
    redraws = 0
    for template, draw in (("grouped_sum", grouped_sum), ("sql_paid_revenue", sql_paid_revenue)):
        for index in range(n):
            task = draw(root, index)
            redraws += task["attempt"]
            split, out = rows_for(root, template, index, task)
            for table, rows in out.items():
                for row in rows:
                    lines[(table, split)].write(json.dumps(row, ensure_ascii=False) + "\n")
    for (table, split), buf in lines.items():
        os.makedirs(os.path.join(root, "out", table), exist_ok=True)
        with open(os.path.join(root, "out", table, split + ".jsonl"), "w",
                  encoding="utf-8") as f:
            f.write(buf.getvalue())
    manifest = {}
    for d, _, names in os.walk(root):
        for name in names:
            path = os.path.join(d, name)
            manifest[os.path.relpath(path, root)] = sha256_file(path)
    with open(os.path.join(root, "out", "manifest.json"), "w", encoding="utf-8") as f:
        json.dump({"files": dict(sorted(manifest.items()))}, f, indent=1)
    print(f"pypeer: {2 * n} tasks admitted ({redraws} redraws), {len(manifest)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())

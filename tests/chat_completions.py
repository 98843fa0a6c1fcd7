#!/usr/bin/env python3
"""chat_completions.py -- does `vat score --extract auto` score chat
completions as a careful human grader would?

tests/data/chat_completions.jsonl holds 200 completions written for tasks
of the default corpus, in 86 formats (fences, answer tags, markdown answer
lines and headings, \\boxed{}, closing sentences, bare last lines, think
blocks, HTML comments, Python code, money in prose, SQL after prose, ...),
right and wrong, each with the verdict a careful human grader gives it:

  the grader credits a completion when it commits to one final answer
  that is right and has the JSON type the prompt asks for (a number is a
  number, not a quoted string or a word; a list is a JSON array, not a
  markdown list; a regex is a working Python pattern; a query is one
  SELECT computed from the data).  How it is presented -- markdown, LaTeX,
  a fence of any tag, a think block, prose around it, a currency sign or
  thousands separators in a sentence -- is not held against it; hedging
  between two answers, abstaining in words where the prompt names the
  abstention value, and code that only computes the answer are.

A completion names its task and refers to the task's answers through
placeholders, so the file stays true when the corpus's values change:
{{gold}} (the gold answer as the corpus writes it), {{gold_compact}},
{{gold_pretty}} (JSON spellings), {{gold_money}} ($1,234.50),
{{gold_commas}} (1,234.50), {{gold_str}} (a number as a JSON string),
{{gold_strvals}} (an object's numbers as strings), {{gold_round0}},
{{gold_table}}, {{gold_bullets}}, {{gold_pydict}}, {{gold_pyraw}}
(r"..."), {{gold_pystr}} (a Python string with escaped backslashes),
{{gold_slashes}} (/.../), {{gold_oneline}} (SQL on one line), {{off}} (a
wrong value of the gold's shape) and {{trap}} (the task's trap answer).

Builds the default corpus with the vat binary given (or scores an existing
root), scores every completion with `vat score --extract auto`, and prints
the share of verdicts that agree with the grader (score 1.0 for a
completion the grader credits, below 1.0 for one it does not), per format
and in total, and the disagreements.  Exits 1 when the share is under
--min-share.  Standard library only.

    tests/chat_completions.py --vat build/vat [--min-share 0.9] [--show]
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def read_table(root, table):
    rows = []
    for split in ("train", "test"):
        path = os.path.join(root, "out", table, split + ".jsonl")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                rows.extend(json.loads(line) for line in f if line.strip())
    return rows


def money(x):
    return ("-" if x < 0 else "") + "$" + f"{abs(x):,.2f}"


def commas(x):
    return f"{x:,.2f}" if isinstance(x, float) else f"{x:,}"


def off(v):
    """A wrong answer of the same shape as v."""
    if isinstance(v, bool) or v is None:
        return 0
    if isinstance(v, int):
        return v + 1
    if isinstance(v, float):
        return round(v * 1.07 + 1, 2)
    if isinstance(v, list):
        return list(reversed(v)) if len(v) > 1 and v != list(reversed(v)) else v + ["X-0"]
    if isinstance(v, dict):
        w = dict(v)
        k = next(iter(w))
        w[k] = off(w[k])
        return w
    return v


def fills(kind, gold_text, gold, trap):
    f = {"gold": gold_text, "trap": trap}
    if kind in ("value", "abstain"):
        f["gold_compact"] = json.dumps(gold, ensure_ascii=False, separators=(",", ":"))
        f["gold_pretty"] = json.dumps(gold, ensure_ascii=False, indent=2)
        f["off"] = json.dumps(off(gold), ensure_ascii=False)
        if isinstance(gold, (int, float)) and not isinstance(gold, bool):
            f["gold_money"] = money(gold)
            f["gold_commas"] = commas(gold)
            f["gold_str"] = json.dumps(str(gold))
            f["gold_round0"] = str(round(gold) + (1 if round(gold) == gold else 0))
        if isinstance(gold, dict):
            f["gold_strvals"] = json.dumps({k: str(x) for k, x in gold.items()}, ensure_ascii=False)
            f["gold_table"] = "\n".join(f"| {k} | {x} |" for k, x in gold.items())
            f["gold_pydict"] = repr(gold)
        if isinstance(gold, list):
            f["gold_bullets"] = "\n".join(f"- {x}" for x in gold)
    elif kind == "regex":
        p = gold_text
        f["gold_pyraw"] = ('r"' + p + '"') if '"' not in p else ("r'" + p + "'")
        f["gold_pystr"] = repr(p)
        f["gold_slashes"] = "/" + p + "/"
    elif kind == "sql":
        f["gold_oneline"] = " ".join(gold_text.split())
    return f


def fill(text, f, where):
    def sub(m):
        if m.group(1) not in f:
            raise SystemExit(f"{where}: no value for placeholder {{{{{m.group(1)}}}}}")
        return f[m.group(1)]
    return re.sub(r"\{\{(\w+)\}\}", sub, text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vat", required=True, help="the vat binary")
    ap.add_argument("--config", default=os.path.join(HERE, "..", "seeds.toml"))
    ap.add_argument("--root", help="an existing corpus root (default: build one)")
    ap.add_argument("--data", default=os.path.join(HERE, "data", "chat_completions.jsonl"))
    ap.add_argument("--min-share", type=float, default=0.0)
    ap.add_argument("--show", action="store_true", help="print every disagreement")
    a = ap.parse_args()

    with open(a.data, encoding="utf-8") as fh:
        items = [json.loads(line) for line in fh if line.strip()]
    tmp = None
    root = a.root
    if not root:
        tmp = tempfile.mkdtemp(prefix="vat-chat-")
        root = tmp
        # The completions were written for the default corpus's tasks at
        # level 1 (their kinds and golds); the same seeds at level 1 draw
        # them whatever levels the file spreads (docs/difficulty.md).
        with open(a.config, encoding="utf-8") as fh:
            text = re.sub(r"(?m)^difficulty\s*=.*$", "", fh.read())
        config = os.path.join(tmp, "seeds.toml")
        with open(config, "w", encoding="utf-8") as fh:
            fh.write(text.replace("[corpus]\n", "[corpus]\ndifficulty = 1\n", 1))
        built = subprocess.run([a.vat, "build", "--config", config, "--root", root],
                               capture_output=True, text=True)
        if built.returncode != 0:
            raise SystemExit(f"vat build failed: {built.stderr}")
    try:
        experience = {r["task_id"]: r for r in read_table(root, "experience")}
        traps = {r["task_id"]: r["answer"] for r in read_table(root, "rollouts") if r["role"] == "trap"}
        lines = []
        for k, it in enumerate(items):
            e = experience.get(it["task_id"])
            if e is None:
                raise SystemExit(f"completion {it['id']}: no task {it['task_id']} in the corpus")
            gold_text = e["gold"]  # the JSON text of a value answer, a pattern, a query
            gold = json.loads(gold_text) if e["answer_kind"] in ("value", "abstain") else gold_text
            f = fills(e["answer_kind"], gold_text, gold, traps[it["task_id"]])
            text = fill(it["completion"], f, f"completion {it['id']}")
            lines.append(json.dumps({"task_id": it["task_id"], "answer": text, "sample": k}))
        preds = os.path.join(tmp or tempfile.gettempdir(), "chat_completions.preds.jsonl")
        with open(preds, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        out = subprocess.run([a.vat, "score", "--root", root, "--extract", "auto", preds],
                             capture_output=True, text=True)
        if out.returncode not in (0, 1):
            raise SystemExit(f"vat score failed ({out.returncode}): {out.stderr}")
        verdicts = [json.loads(line) for line in out.stdout.splitlines()
                    if line.strip() and "summary" not in json.loads(line)]
        if len(verdicts) != len(items):
            raise SystemExit(f"{len(verdicts)} verdicts for {len(items)} completions")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

    agree = 0
    by_format = collections.defaultdict(lambda: [0, 0])
    wrong = []
    for it, v in zip(items, verdicts):
        ok = (v["score"] == 1.0) == it["human"]
        agree += ok
        by_format[it["format"]][0] += ok
        by_format[it["format"]][1] += 1
        if not ok:
            wrong.append((it, v))
    share = agree / len(items)
    credited = sum(it["human"] for it in items)
    print(f"{len(items)} completions in {len(by_format)} formats ({credited} right, "
          f"{len(items) - credited} wrong by the grader): {agree} scored as the grader would, "
          f"share {share:.3f}")
    if a.show:
        for it, v in wrong:
            print(f"  #{it['id']} {it['task_id']} {it['format']}: grader "
                  f"{'right' if it['human'] else 'wrong'}, vat {v['score']} {v['code']}: "
                  f"{v['reason'][:120]}")
    if share < a.min_share:
        print(f"share {share:.3f} is under {a.min_share}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

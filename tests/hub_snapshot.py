#!/usr/bin/env python3
"""hub_snapshot.py -- a corpus as huggingface_hub.snapshot_download() lays it out.

Builds a small corpus (one template of each answer kind), packs it (the
folder a user uploads), and lays the pack out as the Hub's cache does:
every file a relative symbolic link from snapshots/<commit>/ into the
blobs/ folder beside it, the folders real.  Then, on the snapshot:

  - `vat check` scores every task's gold 1.0 and its trap below 1.0, with
    the default extraction (`auto`) and with --extract raw;
  - `vat score` (a predictions file, and the same on standard input) scores
    every gold 1.0 and exits 0;
  - `vat verify` passes (links followed, trusted by the manifest's digests);
  - vat.Corpus (the Python package) scores every gold 1.0 and every trap
    below 1.0; vat.rewards.trl gives the rewards a trainer would get;
  - nothing is written: the blobs keep their bytes, no file appears.

And what is refused, as before: a blob whose bytes changed (the task, or
every task for a table, scores `tampered`), a Git LFS pointer in place of a
fixture (named as such), a dangling link, a folder that is a link, a link
the manifest does not list (no manifest).

Environment: PYTHONPATH=<source>/python, VAT_LIBRARY=<build>/libvat.so,
VAT_BINARY=<build>/vat, VAT_SOURCE_DIR=<source>.  Standard library only.
Exits 77 when VAT_LIBRARY names no file.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
TEMPLATES = "grouped_sum,regex_iso_dates,sql_paid_revenue,unanswerable"
CONFIG = """[corpus]
master_seed = 7
test_fraction = 0.25
[templates.grouped_sum]
count = 4
[templates.regex_iso_dates]
count = 4
[templates.sql_paid_revenue]
count = 4
[templates.unanswerable]
count = 4
"""

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def vat(*args, stdin=None):
    r = subprocess.run([os.environ["VAT_BINARY"], *args], capture_output=True, text=True,
                       input=stdin)
    return r.returncode, r.stdout, r.stderr


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def snapshot(pack, cache):
    """Lays pack out as the Hub's cache: blobs/<sha256> and
    snapshots/<commit>/<path> -> ../../blobs/<sha256> (relative links)."""
    repo = os.path.join(cache, "datasets--local--vat")
    blobs = os.path.join(repo, "blobs")
    snap = os.path.join(repo, "snapshots", "0123456789abcdef0123456789abcdef01234567")
    os.makedirs(blobs)
    for dirpath, _, files in os.walk(pack):
        for name in files:
            src = os.path.join(dirpath, name)
            rel = os.path.relpath(src, pack)
            digest = sha256_file(src)
            blob = os.path.join(blobs, digest)
            if not os.path.exists(blob):
                shutil.copyfile(src, blob)
            dst = os.path.join(snap, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            os.symlink(os.path.relpath(blob, os.path.dirname(dst)), dst)
    return snap, blobs


def rows(root, table):
    out = []
    for split in ("train", "test"):
        with open(os.path.join(root, "out", table, split + ".jsonl"), encoding="utf-8") as f:
            out += [json.loads(line) for line in f if line.strip()]
    return out


def tree_state(top):
    """Every path below top with its kind and, for regular files, digest."""
    state = {}
    for dirpath, dirs, files in os.walk(top):
        for name in dirs + files:
            p = os.path.join(dirpath, name)
            if os.path.islink(p):
                state[p] = ("link", os.readlink(p))
            elif os.path.isfile(p):
                state[p] = ("file", sha256_file(p))
            else:
                state[p] = ("dir", None)
    return state


def fence(kind, answer):
    tag = {"value": "json", "abstain": "json", "regex": "regex", "sql": "sql"}[kind]
    return f"Let me work through it.\n\n```{tag}\n{answer}\n```\n"


def check_cli(snap, tasks, tmp):
    for t in tasks:
        for extract, answer in (("auto", fence(t["kind"], t["gold"])), ("raw", t["gold"])):
            args = ["check", "--root", snap, "--task", t["id"], "--answer", answer]
            if extract == "raw":
                args += ["--extract=raw"]
            rc, out, err = vat(*args)
            v = json.loads(out) if rc in (0, 1) and out.strip() else {}
            if rc != 0 or v.get("score") != 1.0:
                fail(f"vat check ({extract}) {t['id']} gold on the snapshot: rc {rc} {out} {err}")
        rc, out, err = vat("check", "--root", snap, "--task", t["id"], "--answer", t["trap"],
                           "--extract", "raw")
        if rc != 0 or json.loads(out)["score"] >= 1.0:
            fail(f"vat check {t['id']} trap on the snapshot: rc {rc} {out} {err}")
    preds = "".join(json.dumps({"task_id": t["id"], "answer": fence(t["kind"], t["gold"])}) + "\n"
                    for t in tasks)
    path = os.path.join(tmp, "preds.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.write(preds)
    for how, args, stdin in (("file", [path], None), ("stdin", [], preds)):
        rc, out, err = vat("score", "--root", snap, *args, stdin=stdin)
        lines = [json.loads(x) for x in out.splitlines()]
        verdicts = [x for x in lines if "summary" not in x]
        total = [x for x in lines if x.get("summary") == "total"]
        if rc != 0 or len(verdicts) != len(tasks) or any(x["score"] != 1.0 for x in verdicts) \
                or not total:
            fail(f"vat score ({how}) on the snapshot: rc {rc} {err} {out[:400]}")
    rc, out, err = vat("verify", "--root", snap)
    if rc != 0:
        fail(f"vat verify on the snapshot: rc {rc} {out} {err}")
    return err.strip()


def check_python(snap, tasks):
    import vat as vatpy
    import vat.rewards
    with vatpy.Corpus(snap) as corpus:
        for t in tasks:
            g = corpus.score(t["id"], fence(t["kind"], t["gold"]))
            if g.score != 1.0:
                fail(f"vat.Corpus on the snapshot: {t['id']} gold {g}")
            tr = corpus.score(t["id"], t["trap"], extract="raw")
            if tr.score >= 1.0 or not tr.is_trap:
                fail(f"vat.Corpus on the snapshot: {t['id']} trap {tr}")
    reward = vat.rewards.trl(snap)
    got = reward(prompts=[""] * len(tasks),
                 completions=[[{"role": "assistant", "content": fence(t["kind"], t["gold"])}]
                              for t in tasks],
                 task_id=[t["id"] for t in tasks])
    if got != [1.0] * len(tasks):
        fail(f"vat.rewards.trl on the snapshot: {got}")
    reward.corpus.close()


def copy_snapshot(cache, to):
    shutil.copytree(cache, to, symlinks=True)
    repo = os.path.join(to, "datasets--local--vat")
    snap = os.path.join(repo, "snapshots", os.listdir(os.path.join(repo, "snapshots"))[0])
    return snap, os.path.join(repo, "blobs")


def check_refusals(cache, tmp, tasks, exp):
    sql = next(t for t in tasks if t["kind"] == "sql")
    fixture = exp[sql["id"]]["fixture"]["path"]

    # a fixture blob whose bytes changed: that task scores tampered
    snap, blobs = copy_snapshot(cache, os.path.join(tmp, "c1"))
    blob = os.path.realpath(os.path.join(snap, fixture))
    with open(blob, "ab") as f:
        f.write(b"\0")
    rc, out, err = vat("check", "--root", snap, "--task", sql["id"], "--answer", sql["gold"])
    if rc != 1 or json.loads(out)["code"] != "tampered" or "symbolic link" not in out:
        fail(f"a changed fixture blob: rc {rc} {out} {err}")
    rc, out, err = vat("verify", "--root", snap)
    if rc != 1 or f"changed file '{fixture}'" not in out:
        fail(f"verify of a changed fixture blob: rc {rc} {out} {err}")

    # a Git LFS pointer in place of the fixture: named as such
    snap, blobs = copy_snapshot(cache, os.path.join(tmp, "c2"))
    link = os.path.join(snap, fixture)
    os.unlink(link)
    with open(link, "w", encoding="ascii") as f:
        f.write("version https://git-lfs.github.com/spec/v1\n"
                "oid sha256:" + "ab" * 32 + "\nsize 12288\n")
    rc, out, err = vat("check", "--root", snap, "--task", sql["id"], "--answer", sql["gold"])
    if rc != 1 or "Git LFS pointer, not the file: run git lfs pull" not in out:
        fail(f"an LFS pointer fixture: rc {rc} {out} {err}")
    rc, out, err = vat("verify", "--root", snap)
    if rc != 1 or "Git LFS pointer, not the file: run git lfs pull" not in out:
        fail(f"verify of an LFS pointer fixture: rc {rc} {out} {err}")

    # a table blob whose bytes changed: every score is tampered
    snap, blobs = copy_snapshot(cache, os.path.join(tmp, "c3"))
    table = os.path.realpath(os.path.join(snap, "out", "verifiers", "train.jsonl"))
    with open(table, "a", encoding="utf-8") as f:
        f.write("\n")
    t0 = tasks[0]
    rc, out, err = vat("check", "--root", snap, "--task", t0["id"], "--answer", t0["gold"])
    if rc != 1 or json.loads(out)["code"] != "tampered":
        fail(f"a changed table blob: rc {rc} {out} {err}")

    # a dangling link
    snap, blobs = copy_snapshot(cache, os.path.join(tmp, "c4"))
    os.unlink(os.path.realpath(os.path.join(snap, fixture)))
    rc, out, err = vat("check", "--root", snap, "--task", sql["id"], "--answer", sql["gold"])
    if rc != 1 or "symbolic link to nothing" not in out:
        fail(f"a dangling fixture link: rc {rc} {out} {err}")

    # a folder that is a link: refused, never followed
    snap, blobs = copy_snapshot(cache, os.path.join(tmp, "c5"))
    folder = os.path.join(snap, os.path.dirname(fixture))
    moved = os.path.join(tmp, "c5-folder")
    shutil.move(folder, moved)
    os.symlink(moved, folder)
    rc, out, err = vat("check", "--root", snap, "--task", sql["id"], "--answer", sql["gold"])
    if rc != 1 or json.loads(out)["score"] != 0.0 or "symbolic link" not in out:
        fail(f"a fixture folder that is a link: rc {rc} {out} {err}")

    # no manifest to trust the links by: refused as before
    snap, blobs = copy_snapshot(cache, os.path.join(tmp, "c6"))
    os.unlink(os.path.join(snap, "out", "manifest.json"))
    rc, out, err = vat("check", "--root", snap, "--task", t0["id"], "--answer", t0["gold"])
    if rc != 2 or "symbolic link" not in err:
        fail(f"linked tables without a manifest: rc {rc} {out} {err}")


def main():
    lib = os.environ.get("VAT_LIBRARY", "")
    if not os.path.isfile(lib):
        print(f"hub_snapshot: no shared libvat at '{lib}'; skipped")
        return SKIP
    with tempfile.TemporaryDirectory(prefix="vat-hub-") as tmp:
        root, pack, cache = (os.path.join(tmp, n) for n in ("corpus", "pack", "cache"))
        cfg = os.path.join(tmp, "seeds.toml")
        with open(cfg, "w", encoding="utf-8") as f:
            f.write(CONFIG)
        for args in (["build", "--config", cfg, "--root", root, "--only", TEMPLATES, "--quiet"],
                     ["pack", "--root", root, "--to", pack]):
            rc, out, err = vat(*args)
            if rc != 0:
                print(f"hub_snapshot: vat {args[0]} failed ({rc}): {err.strip()}")
                return 2
        snap, blobs = snapshot(pack, cache)
        exp = {r["task_id"]: r for r in rows(pack, "experience")}
        ro = {(r["task_id"], r["role"]): r["answer"] for r in rows(pack, "rollouts")}
        tasks = [{"id": tid, "kind": e["answer_kind"], "gold": e["gold"],
                  "trap": ro[(tid, "trap")]} for tid, e in sorted(exp.items())]
        links = sum(1 for dp, _, fs in os.walk(snap) for n in fs
                    if os.path.islink(os.path.join(dp, n)))
        before = tree_state(cache)
        verified = check_cli(snap, tasks, tmp)
        check_python(snap, tasks)
        if tree_state(cache) != before:
            fail("scoring the snapshot changed, added or removed a file below the cache")
        check_refusals(cache, tmp, tasks, exp)
        print(f"hub_snapshot: {len(tasks)} tasks, {links} files as links into blobs/; CLI check, "
              f"score (file and stdin), Python Corpus and TRL rewards score every gold 1.0; "
              f"{verified}; 6 refusals as expected; {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""python_vat.py -- the Python package python/vat over libvat.so.

Builds the default corpus into a temporary root (vat build --root TMP),
then scores GRPO-style groups: 8 prompts (two tasks of each answer kind:
value, regex, sql, abstain) x 8 sampled completions each -- the gold answer
wrapped in a think block and a fence (and as an answer tag, and after a
"Final answer:" line), the trap wrapped the same ways, the malformed answer
wrapped, and a generation cut off inside its think block.  The answers come
from the corpus's own rollouts table (gold, trap, malformed), so nothing is
hard-coded.

The reward functions are called exactly as the trainers call them:
  TRL   GRPOTrainer._calculate_rewards: reward_func(prompts=prompts,
        completions=completions, completion_ids=completion_ids_list,
        **reward_kwargs), reward_kwargs holding every dataset column but
        prompt/completion as a list aligned with the completions (each row
        repeated num_generations times), plus trainer_state, log_extra and
        log_metric; completions are strings, or [{"role": "assistant",
        "content": ...}] lists for conversational datasets.
  verl  NaiveRewardManager: compute_score(data_source=..., solution_str=...,
        ground_truth=..., extra_info=...), one call per response, through
        get_custom_reward_fn's partial that merges
        custom_reward_function.reward_kwargs; extra_info gets num_turns and
        rollout_reward_scores added; the module is loaded from its file path
        (importlib spec_from_file_location) or as pkg://vat.rewards.

Environment: PYTHONPATH=<source>/python, VAT_LIBRARY=<build>/libvat.so,
VAT_BINARY=<build>/vat, VAT_SOURCE_DIR=<source>.  Standard library only.
Exits 77 (ctest's skip code here) when VAT_LIBRARY names no file: the shared
library is not built in this tree yet.
"""
import dataclasses
import functools
import importlib
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import types
import unittest

SKIP = 77
N_GENERATIONS = 8
FENCE_TAG = {"value": "json", "abstain": "json", "regex": "regex", "sql": "sql"}

ROOT = None
TASKS = []  # [{"task_id", "kind", "prompt", "gold", "trap", "malformed"}], 8 of them


def read_table(root, table):
    rows = []
    for split in ("train", "test"):
        path = os.path.join(root, "out", table, split + ".jsonl")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                rows.extend(json.loads(line) for line in f if line.strip())
    return rows


def setUpModule():
    global ROOT
    vat_bin = os.environ["VAT_BINARY"]
    src = os.environ["VAT_SOURCE_DIR"]
    ROOT = tempfile.mkdtemp(prefix="vat-python-")
    built = subprocess.run(
        [vat_bin, "build", "--config", os.path.join(src, "seeds.toml"), "--root", ROOT],
        capture_output=True, text=True,
    )
    if built.returncode != 0:
        raise RuntimeError(f"vat build failed ({built.returncode}): {built.stderr}")
    experience = {r["task_id"]: r for r in read_table(ROOT, "experience")}
    answers = {}
    for r in read_table(ROOT, "rollouts"):
        answers.setdefault(r["task_id"], {})[r["role"]] = r["answer"]
    picked = {k: [] for k in FENCE_TAG}
    for tid in sorted(experience):
        e = experience[tid]
        kind = e["answer_kind"]
        chosen = picked[kind]
        if len(chosen) == 2:
            continue
        if kind == "abstain" and chosen:
            # one answerable and one unanswerable probe
            if isinstance(json.loads(chosen[0]["gold"]), dict) == isinstance(json.loads(e["gold"]), dict):
                continue
        a = answers[tid]
        chosen.append({
            "task_id": tid, "kind": kind, "prompt": e["prompt"],
            "gold": a["gold"], "trap": a["trap"], "malformed": a["malformed"],
        })
    for kind, chosen in picked.items():
        assert len(chosen) == 2, f"the default corpus has fewer than two {kind} tasks"
        TASKS.extend(chosen)


def tearDownModule():
    if ROOT:
        shutil.rmtree(ROOT, ignore_errors=True)


def samples(task):
    """8 sampled completions of one prompt and the reward each must get."""
    tag = FENCE_TAG[task["kind"]]
    gold, trap, bad = task["gold"], task["trap"], task["malformed"]
    musing = (
        "Let me read the data first.\nA first try:\n```" + tag + "\n" + trap + "\n```\n"
        "<answer>" + trap + "</answer>\nAnswer: " + trap + "\nNo, that falls into the trap."
    )
    return [
        ("<think>\n" + musing + "\n</think>\n\n```" + tag + "\n" + gold + "\n```\n", 1.0),
        ("<think>" + musing + "</think>\nHere it is:\n\n```" + tag + "\n" + gold + "\n```", 1.0),
        ("<think>\n" + musing + "\n</think>\n<answer>\n" + gold + "\n</answer>", 1.0),
        (musing + "\n</think>\n\nFinal answer: " + gold, 1.0),
        ("<think>\n" + musing + "\n</think>\n\n```" + tag + "\n" + trap + "\n```\n", 0.0),
        ("<think>Quick one.</think>\n<answer>" + trap + "</answer>", 0.0),
        ("<think>\n" + musing + "\n</think>\n\n```" + tag + "\n" + bad + "\n```\n", 0.0),
        ("<think>\n" + musing + "\nI am still not sure whether", 0.0),
    ]


def group():
    """The GRPO batch: each dataset row repeated N_GENERATIONS times, as
    TRL's RepeatSampler lays it out, with its 8 completions."""
    rows, completions, expected = [], [], []
    for t in TASKS:
        for text, reward in samples(t):
            rows.append({"prompt": t["prompt"], "task_id": t["task_id"], "answer_kind": t["kind"]})
            completions.append(text)
            expected.append(reward)
    assert len(rows) == len(TASKS) * N_GENERATIONS == 64
    return rows, completions, expected


def trl_call(reward_func, inputs, prompts, completions):
    """GRPOTrainer._calculate_rewards, the custom-function branch."""
    keys = [key for key in inputs[0] if key not in ["prompt", "completion", "completion_ids"]]
    reward_kwargs = {key: [example[key] for example in inputs] for key in keys}
    reward_kwargs["trainer_state"] = types.SimpleNamespace(global_step=3, epoch=0.1)
    reward_kwargs["log_extra"] = lambda *a, **k: None
    reward_kwargs["log_metric"] = lambda *a, **k: None
    completion_ids_list = [list(str(c).encode("utf-8"))[:16] for c in completions]
    output_reward_func = reward_func(
        prompts=prompts, completions=completions, completion_ids=completion_ids_list, **reward_kwargs
    )
    # TRL turns None into NaN and the list into a float32 tensor of len(prompts)
    output_reward_func = [r if r is not None else math.nan for r in output_reward_func]
    assert len(output_reward_func) == len(prompts)
    return output_reward_func


def verl_load(module_path, object_name):
    """verl.utils.import_utils.load_extern_object."""
    if module_path.startswith("pkg://"):
        module = importlib.import_module(module_path[len("pkg://"):].replace("/", "."))
    else:
        spec_name = f"custom_module_{hash(os.path.abspath(module_path))}"
        spec = importlib.util.spec_from_file_location(spec_name, module_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return getattr(module, object_name)


def verl_reward_fn(module_path, reward_kwargs):
    """verl.trainer.ppo.reward.get_custom_reward_fn."""
    raw_fn = verl_load(module_path, "verl_compute_score")

    def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):
        merged_kwargs = {**kwargs, **extra_kwargs}
        return raw_fn(*args, **merged_kwargs)

    return functools.partial(_call_with_kwargs, raw_fn, dict(reward_kwargs))


def verl_manager(compute_score, items, extra_out=None):
    """NaiveRewardManager.__call__ (verl v0.7.0): one compute_score per
    response; a dict's "score" is the reward and every key of it goes to
    reward_extra_info, one list per key."""
    scores = []
    for item in items:
        extra_info = item.get("extra_info", {})
        extra_info["num_turns"] = None
        extra_info["rollout_reward_scores"] = {}
        score = compute_score(
            data_source=item["data_source"],
            solution_str=item["response_str"],
            ground_truth=item["reward_model"]["ground_truth"],
            extra_info=extra_info,
        )
        if isinstance(score, dict):
            for key, value in score.items():
                if extra_out is not None:
                    extra_out.setdefault(key, []).append(value)
            score = score["score"]
        scores.append(score)
    return scores


def corpus_copy(tag):
    """A copy of the built corpus to damage."""
    dst = tempfile.mkdtemp(prefix="vat-python-" + tag + "-")
    for sub in ("out", "fixtures"):
        shutil.copytree(os.path.join(ROOT, sub), os.path.join(dst, sub))
    return dst


def sql_task_fixture(root, task_id):
    """The main fixture path of an SQL task, from its verifiers row."""
    for r in read_table(root, "verifiers"):
        if r["task_id"] == task_id:
            return os.path.join(root, json.loads(r["spec_json"])["fixtures"][0])
    raise KeyError(task_id)


LFS_POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 12345\n"
)


class TestCorpus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import vat

        cls.vat = vat
        cls.corpus = vat.Corpus(ROOT)

    @classmethod
    def tearDownClass(cls):
        cls.corpus.close()

    def test_version_and_size(self):
        out = subprocess.run([os.environ["VAT_BINARY"], "--version"], capture_output=True, text=True)
        self.assertEqual(out.stdout.split()[-1], self.vat.version())
        tasks = read_table(ROOT, "experience")
        self.assertEqual(len(self.corpus), len(tasks))
        self.assertIn(TASKS[0]["task_id"], self.corpus)
        self.assertNotIn("no_such_template-00000", self.corpus)

    def test_gold_trap_malformed_verdicts(self):
        for t in TASKS:
            tag = FENCE_TAG[t["kind"]]
            with self.subTest(task=t["task_id"]):
                g = self.corpus.score(t["task_id"], "<think>hm</think>\n```" + tag + "\n" + t["gold"] + "\n```")
                self.assertEqual((g.score, g.gate_passed, g.code, g.is_trap), (1.0, True, "ok", False))
                self.assertEqual((g.extracted, g.extract_rule), (t["gold"].strip(), "fence"))
                self.assertEqual(g.task_id, t["task_id"])
                tr = self.corpus.score(t["task_id"], "<think>hm</think>\n<answer>" + t["trap"] + "</answer>")
                self.assertEqual((tr.score, tr.gate_passed, tr.is_trap), (0.0, True, True))
                self.assertEqual((tr.extracted, tr.extract_rule), (t["trap"].strip(), "answer_tag"))
                self.assertNotEqual(tr.code, "ok")
                m = self.corpus.score(t["task_id"], "```" + tag + "\n" + t["malformed"] + "\n```")
                self.assertEqual((m.score, m.gate_passed, m.is_trap), (0.0, False, False))
                self.assertTrue(m.reason)

    def test_raw_mode(self):
        t = TASKS[0]
        self.assertEqual(self.corpus.score(t["task_id"], t["gold"], extract="raw").score, 1.0)
        wrapped = self.corpus.score(t["task_id"], "```json\n" + t["gold"] + "\n```", extract="raw")
        self.assertEqual((wrapped.score, wrapped.extract_rule), (0.0, "raw"))
        self.assertEqual(wrapped.extracted, "```json\n" + t["gold"] + "\n```")
        with self.assertRaises(ValueError):
            self.corpus.score(t["task_id"], t["gold"], extract="strict")

    def test_reasons_hide_held_out_cases(self):
        """A reason names a held-out case without quoting it; reveal_hidden
        quotes it."""
        import re
        import sqlite3

        specs = {r["task_id"]: r for r in read_table(ROOT, "verifiers")}
        experience = {r["task_id"]: r for r in read_table(ROOT, "experience")}
        regex_id = next(t["task_id"] for t in TASKS if t["kind"] == "regex")
        cases = json.loads(specs[regex_id]["spec_json"])["cases"]
        shown = sorted({m for c in cases if not c["heldout"] for m in c["expected"]}, key=len, reverse=True)
        # the example matches spelled out: right on the examples, wrong on a held-out line
        pattern = "|".join(re.escape(m) for m in shown)
        held = [c["text"] for c in cases if c["heldout"]]
        sql_id = next(tid for tid in sorted(experience) if experience[tid]["answer_kind"] == "sql"
                      and experience[tid]["fixture"]["path"].endswith(".sqlite"))
        db = sqlite3.connect(os.path.join(ROOT, experience[sql_id]["fixture"]["path"]))
        rows = db.execute(experience[sql_id]["gold"]).fetchall()
        db.close()

        def lit(v):
            return "NULL" if v is None else repr(v) if not isinstance(v, str) else "'" + v.replace("'", "''") + "'"

        # the main fixture's rows spelled out: right there, wrong on a variant
        hard = "SELECT * FROM (VALUES " + ", ".join("(" + ", ".join(map(lit, r)) + ")" for r in rows) + ")"
        with self.vat.Corpus(ROOT, reveal_hidden=True) as revealing:
            self.assertTrue(revealing.reveal_hidden)
            for tid, answer in ((regex_id, pattern), (sql_id, hard)):
                with self.subTest(task=tid):
                    hidden = self.corpus.score(tid, answer, extract="raw")
                    shown_v = revealing.score(tid, answer, extract="raw")
                    self.assertEqual((hidden.score, hidden.code), (shown_v.score, shown_v.code))
                    self.assertEqual(hidden.score, 0.0)
                    self.assertRegex(hidden.reason, r"held[- ]out")
                    self.assertNotEqual(hidden.reason, shown_v.reason)
                    if tid == regex_id:
                        self.assertNotIn('"', hidden.reason)
                        self.assertIn('"', shown_v.reason)
                        self.assertFalse(any(h[:12] in hidden.reason for h in held))
                    else:
                        self.assertNotIn("[", hidden.reason)
                        self.assertIn("expected [", shown_v.reason)

    def test_verdict_is_frozen(self):
        v = self.corpus.score(TASKS[0]["task_id"], TASKS[0]["gold"])
        self.assertIsInstance(v, self.vat.Verdict)
        with self.assertRaises(dataclasses.FrozenInstanceError):
            v.score = 1.0
        self.assertEqual(
            [f.name for f in dataclasses.fields(v)],
            ["task_id", "gate_passed", "score", "code", "reason", "extracted", "extract_rule", "is_trap",
             "work"],
        )

    def test_inputs_of_every_type(self):
        t = TASKS[0]
        self.assertEqual(self.corpus.score(t["task_id"], t["gold"].encode()).score, 1.0)
        self.assertEqual(self.corpus.score(t["task_id"], bytearray(t["gold"].encode())).score, 1.0)
        odd = self.corpus.score(t["task_id"], "Ergebnis: \u00fcber \ud800 \x00 " + t["gold"])
        self.assertEqual(odd.score, 0.0)
        with self.assertRaises(TypeError):
            self.corpus.score(t["task_id"], 42)
        with self.assertRaises(self.vat.UnknownTaskError) as cm:
            self.corpus.score("no_such_template-00000", t["gold"])
        self.assertIsInstance(cm.exception, KeyError)
        with self.assertRaises(self.vat.UnknownTaskError):
            self.corpus.score(t["task_id"] + "\ud800", t["gold"])

    def test_ids_the_library_would_read_otherwise(self):
        # A C string ends at its first NUL, and a lone surrogate has no
        # UTF-8: such an id names no task, whatever its prefix names.
        t = TASKS[0]
        for odd in (t["task_id"] + "\x00garbage", t["task_id"] + "\x00", "\x00" + t["task_id"],
                    t["task_id"] + "\udc80", (t["task_id"] + "\x00x").encode()):
            with self.subTest(task=repr(odd)):
                self.assertNotIn(odd, self.corpus)
                with self.assertRaises(self.vat.UnknownTaskError) as cm:
                    self.corpus.score(odd, t["gold"])
                self.assertNotIn("\x00", str(cm.exception))
                self.assertIn("no task", str(cm.exception))
        self.assertIn(t["task_id"].encode(), self.corpus)
        self.assertEqual(self.corpus.score(t["task_id"].encode(), t["gold"]).score, 1.0)

    def test_completion_too_large(self):
        t = TASKS[0]
        at_limit = self.corpus.score(t["task_id"], " " * ((4 << 20) - len(t["gold"])) + t["gold"])
        self.assertEqual(at_limit.score, 1.0)
        big = self.corpus.score(t["task_id"], " " * ((4 << 20) + 1 - len(t["gold"])) + t["gold"])
        self.assertEqual((big.score, big.gate_passed, big.code), (0.0, False, "completion_too_large"))

    def test_score_many_threads_keep_order(self):
        rows, completions, expected = group()
        ids = [r["task_id"] for r in rows] * 10
        completions = completions * 10
        one = [self.corpus.score(i, c) for i, c in zip(ids, completions)]
        for workers in (1, 3, 8):
            many = self.corpus.score_many(ids, completions, workers=workers)
            self.assertEqual(many, one)
        self.assertEqual([v.score for v in one], expected * 10)
        self.assertEqual(self.corpus.rewards(ids, completions, workers=4), expected * 10)
        with self.assertRaises(ValueError):
            self.corpus.score_many(ids, completions[:-1])
        with self.assertRaises(TypeError):
            self.corpus.score_many("grouped_sum-00000", ["1"] * 17)

    def test_threads_share_one_corpus(self):
        """Plain threads on one handle, each its own slice: the same verdicts."""
        rows, completions, expected = group()
        ids = [r["task_id"] for r in rows]
        results, errors = {}, []

        def work(k):
            try:
                results[k] = [self.corpus.score(i, c).score for i, c in zip(ids, completions)]
            except Exception as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(errors, [])
        for k in range(6):
            self.assertEqual(results[k], expected)

    def test_close_waits_for_calls_in_flight(self):
        """close() from one thread while four others score on the handle:
        every batch finished before the close is right, every call after it
        raises VatError, and nothing touches the freed handle (ASan build)."""
        c = self.vat.Corpus(ROOT)
        _, completions, expected = group()
        ids = [t["task_id"] for t in TASKS for _ in range(N_GENERATIONS)]
        done, errors, started = [], [], threading.Barrier(5)

        def work():
            started.wait()
            try:
                while True:
                    done.append(c.rewards(ids, completions))
            except self.vat.VatError as e:
                errors.append(str(e))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for th in threads:
            th.start()
        started.wait()
        while len(done) < 8:
            time.sleep(0.001)
        c.close()
        for th in threads:
            th.join()
        self.assertEqual(errors, ["the corpus is closed"] * 4)
        self.assertTrue(all(d == expected for d in done))

    def test_cache_bytes(self):
        """The budget: the default, a given one, VAT_CACHE_BYTES; a handle
        keeping next to nothing gives the verdicts of one keeping all."""
        self.assertEqual(self.corpus.cache_bytes, 256 << 20)
        rows, completions, expected = group()
        ids = [r["task_id"] for r in rows]
        with self.vat.Corpus(ROOT, cache_bytes=1) as tiny:
            self.assertEqual(tiny.cache_bytes, 1)
            for _ in range(2):
                self.assertEqual(tiny.score_many(ids, completions, workers=3),
                                 self.corpus.score_many(ids, completions, workers=1))
        for bad in (0, -5, 1.5, "1M", True):
            with self.assertRaises(ValueError):
                self.vat.Corpus(ROOT, cache_bytes=bad)
        old = os.environ.get("VAT_CACHE_BYTES")
        try:
            os.environ["VAT_CACHE_BYTES"] = "16M"
            with self.vat.Corpus(ROOT) as c:
                self.assertEqual(c.cache_bytes, 16 << 20)
            with self.vat.Corpus(ROOT, cache_bytes=4096) as c:
                self.assertEqual(c.cache_bytes, 4096)  # the argument wins
            os.environ["VAT_CACHE_BYTES"] = "lots"
            with self.assertRaises(self.vat.VatError) as cm:
                self.vat.Corpus(ROOT)
            self.assertIn("VAT_CACHE_BYTES", str(cm.exception))
        finally:
            if old is None:
                os.environ.pop("VAT_CACHE_BYTES", None)
            else:
                os.environ["VAT_CACHE_BYTES"] = old

    def test_pass_at_k(self):
        from math import comb

        pak = self.vat.pass_at_k
        for n in range(1, 13):
            for c in range(n + 1):
                for k in range(1, n + 1):
                    want = 1 - comb(n - c, k) / comb(n, k)
                    self.assertAlmostEqual(pak(n, c, k), want, places=12, msg=(n, c, k))
        self.assertEqual(pak(200, 0, 50), 0.0)
        self.assertAlmostEqual(pak(1000, 1, 1), 0.001)
        for args in ((4, 5, 1), (4, -1, 1), (4, 2, 0), (4, 2, 5)):
            with self.assertRaises(ValueError, msg=args):
                pak(*args)
        with self.assertRaises(TypeError):
            pak(4.0, 2, 1)

    def test_score_many_pass_at_k(self):
        """8 tasks, 8 samples each, 4 right: pass@1 = 0.5, pass@4 = 69/70,
        pass@16 left out for every task."""
        rows, completions, expected = group()
        ids = [r["task_id"] for r in rows]
        report = self.corpus.score_many(ids, completions, workers=2, k=[16, 1, 4])
        self.assertEqual(report.verdicts, self.corpus.score_many(ids, completions))
        self.assertEqual(report.k, [1, 4, 16])
        self.assertEqual(report.checker_errors, 0)
        total = report.pass_at_k["total"]
        self.assertAlmostEqual(total[1], 0.5)
        self.assertAlmostEqual(total[4], 1 - 1 / 70)
        self.assertIsNone(total[16])
        self.assertEqual(report.tasks["total"], {1: 8, 4: 8, 16: 0})
        self.assertEqual(report.short["total"], {1: 0, 4: 0, 16: 8})
        templates = {t["task_id"].rsplit("-", 1)[0] for t in TASKS}
        self.assertEqual(set(report.pass_at_k), templates | {"total"})
        for name in templates:
            self.assertAlmostEqual(report.pass_at_k[name][1], 0.5)
        # uneven samples: a task with 2 samples counts for k=1, is short for k=4
        two = [TASKS[0]["task_id"]] * 2
        r2 = self.corpus.score_many(ids + two, completions + [TASKS[0]["gold"]] * 2, k=4)
        self.assertEqual(r2.tasks["total"][4], 8)
        self.assertEqual(r2.short["total"][4], 0)  # the two joined its task's eight
        with self.assertRaises(ValueError):
            self.corpus.score_many(ids, completions, k=0)
        with self.assertRaises(ValueError):
            self.corpus.score_many(ids, completions, k=[])

    def test_close(self):
        c = self.vat.Corpus(ROOT)
        with c:
            self.assertEqual(c.score(TASKS[0]["task_id"], TASKS[0]["gold"]).score, 1.0)
        with self.assertRaises(self.vat.VatError):
            c.score(TASKS[0]["task_id"], TASKS[0]["gold"])
        c.close()  # twice is fine
        with self.assertRaises(self.vat.VatError):
            self.vat.Corpus(os.path.join(ROOT, "no-such-dir"))


class TestTRL(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import vat.rewards

        # staticmethod: a plain function stored on a class would bind as a method
        cls.reward_func = staticmethod(vat.rewards.trl(ROOT))

    def test_standard_format(self):
        inputs, completions, expected = group()
        prompts = [x["prompt"] for x in inputs]
        rewards = trl_call(self.reward_func, inputs, prompts, completions)
        self.assertEqual(rewards, expected)
        self.assertTrue(all(isinstance(r, float) for r in rewards))
        # TRL names the reward in its logs by __name__
        self.assertEqual(self.reward_func.__name__, "vat_reward")

    def test_conversational_format(self):
        rows, texts, expected = group()
        inputs = [dict(r, prompt=[{"role": "user", "content": r["prompt"]}]) for r in rows]
        prompts = [x["prompt"] for x in inputs]
        completions = [[{"role": "assistant", "content": c}] for c in texts]
        self.assertEqual(trl_call(self.reward_func, inputs, prompts, completions), expected)
        # a tool round: the last assistant message is the answer
        multi = [
            [{"role": "assistant", "content": "calling a tool"},
             {"role": "tool", "content": "```json\n0\n```"},
             {"role": "assistant", "content": c}]
            for c in texts
        ]
        self.assertEqual(trl_call(self.reward_func, inputs, prompts, multi), expected)
        # content given as parts
        parts = [[{"role": "assistant", "content": [{"type": "text", "text": c}]}] for c in texts]
        self.assertEqual(trl_call(self.reward_func, inputs, prompts, parts), expected)
        none = [[{"role": "user", "content": c}] for c in texts]
        self.assertEqual(trl_call(self.reward_func, inputs, prompts, none), [0.0] * 64)

    def test_raw_extract(self):
        import vat.rewards

        raw = vat.rewards.trl(ROOT, extract="raw")
        inputs = [{"prompt": t["prompt"], "task_id": t["task_id"]} for t in TASKS]
        prompts = [x["prompt"] for x in inputs]
        self.assertEqual(trl_call(raw, inputs, prompts, [t["gold"] for t in TASKS]), [1.0] * 8)
        wrapped = ["<think>x</think>" + t["gold"] for t in TASKS]
        self.assertEqual(trl_call(raw, inputs, prompts, wrapped), [0.0] * 8)

    def test_counts_logs_and_metrics(self):
        import vat.rewards

        f = vat.rewards.trl(ROOT)
        inputs, completions, expected = group()
        prompts = [x["prompt"] for x in inputs]
        metrics = []
        keys = [key for key in inputs[0] if key not in ["prompt", "completion", "completion_ids"]]
        kwargs = {key: [example[key] for example in inputs] for key in keys}
        with self.assertLogs("vat.rewards", level="INFO") as logs:
            got = f(prompts=prompts, completions=completions,
                    log_metric=lambda name, value: metrics.append((name, value)), **kwargs)
            self.assertEqual(got, expected)
            again = f(prompts=prompts, completions=completions, **kwargs)
            self.assertEqual(again, expected)
        counts = f.counts()
        self.assertEqual(sum(counts.values()), 128)
        self.assertEqual(counts["ok"], 64)
        # the first of each code, once
        self.assertEqual(len(logs.records), len(counts))
        self.assertTrue(all("first verdict of code" in r.getMessage() for r in logs.records))
        names = dict(metrics)
        self.assertEqual(set(names), {"vat/gate_passed", "vat/is_trap", "vat/checker_limit"})
        self.assertEqual(names["vat/checker_limit"], 0.0)
        self.assertGreater(names["vat/is_trap"], 0.0)
        with self.assertRaises(ValueError):
            vat.rewards.trl(ROOT, on_error="ignore")

    def test_checker_limit_is_no_reward(self):
        """A checker_limit verdict: None for TRL (a sample the reward does not
        apply to), 0.0 with on_error="zero"."""
        import vat.rewards

        inputs, completions, expected = group()
        prompts = [x["prompt"] for x in inputs]
        limited = TASKS[0]["task_id"]
        for on_error, want in (("raise", None), ("zero", 0.0)):
            f = vat.rewards.trl(ROOT, on_error=on_error)
            real = f.corpus._brief

            def brief(h, task_id, completion, mode, real=real):
                b = real(h, task_id, completion, mode)
                if task_id == limited:  # as a query stopped by the CPU-time net scores
                    return (0.0, "checker_limit", False, False, b[4], "the query ran out of CPU time")
                return b

            f.corpus._brief = brief
            with self.assertLogs("vat.rewards", level="WARNING") as logs:
                got = trl_call(f, inputs, prompts, completions)
            self.assertIn("checker_limit", logs.output[0])
            want_all = [want if i < N_GENERATIONS else e for i, e in enumerate(expected)]
            self.assertEqual([None if math.isnan(x) else x for x in got], want_all)
            self.assertEqual(f.counts()["checker_limit"], N_GENERATIONS)

    def test_corpus_faults_are_loud(self):
        """A changed fixture (tampered) or a Git LFS pointer in place of one
        raises CorpusFaultError naming the task and the reason; on_error="zero"
        scores 0; `vat check` says the same."""
        import vat
        import vat.rewards

        sql = next(t for t in TASKS if t["kind"] == "sql")
        inputs = [{"prompt": sql["prompt"], "task_id": sql["task_id"]}] * 2
        prompts = [x["prompt"] for x in inputs]
        golds = [sql["gold"]] * 2
        for damage, reason in (
            (lambda p: open(p, "ab").write(b"\0"), "does not match the sha256"),
            (lambda p: open(p, "w").write(LFS_POINTER), "Git LFS pointer, not the file: run git lfs pull"),
        ):
            root = corpus_copy("fault")
            try:
                damage(sql_task_fixture(root, sql["task_id"]))
                f = vat.rewards.trl(root)
                with self.assertRaises(vat.CorpusFaultError) as cm:
                    trl_call(f, inputs, prompts, golds)
                e = cm.exception
                self.assertEqual((e.task_id, e.code), (sql["task_id"], "tampered"))
                self.assertIn(reason, e.reason)
                self.assertIn(sql["task_id"], str(e))
                self.assertEqual(f.counts(), {"tampered": 2})
                zero = vat.rewards.trl(root, on_error="zero")
                self.assertEqual(trl_call(zero, inputs, prompts, golds), [0.0, 0.0])
                out = subprocess.run(
                    [os.environ["VAT_BINARY"], "check", "--root", root, "--task", sql["task_id"],
                     "--answer", sql["gold"]], capture_output=True, text=True)
                self.assertEqual(out.returncode, 1, out.stderr)
                line = json.loads(out.stdout)
                self.assertEqual(line["code"], "tampered")
                self.assertIn(reason, line["reason"])
                # verl raises the same way
                with self.assertRaises(vat.CorpusFaultError):
                    vat.rewards.verl_compute_score(
                        "vat", sql["gold"], "", {"task_id": sql["task_id"], "root": root})
            finally:
                shutil.rmtree(root, ignore_errors=True)

    def test_configuration_errors(self):
        import vat
        import vat.rewards

        inputs, completions, _ = group()
        prompts = [x["prompt"] for x in inputs]
        no_column = [{"prompt": r["prompt"], "answer_kind": r["answer_kind"]} for r in inputs]
        with self.assertRaises(ValueError):
            trl_call(self.reward_func, no_column, prompts, completions)
        bad = [dict(r, task_id="no_such_template-00000") for r in inputs]
        with self.assertRaises(vat.UnknownTaskError):
            trl_call(self.reward_func, bad, prompts, completions)
        with self.assertRaises(vat.VatError):
            vat.rewards.trl(os.path.join(ROOT, "missing"))


class TestVerl(unittest.TestCase):
    def items(self, with_root):
        _, completions, expected = group()
        items, k = [], 0
        for t in TASKS:
            for _ in range(N_GENERATIONS):
                extra = {"index": k, "split": "train", "task_id": t["task_id"]}
                if with_root:
                    extra["root"] = ROOT
                items.append({
                    "data_source": "vat/" + t["task_id"].rsplit("-", 1)[0],
                    "reward_model": {"style": "rule", "ground_truth": t["gold"]},
                    "extra_info": extra,
                    "response_str": completions[k],
                })
                k += 1
        return items, expected

    def test_file_path_root_in_extra_info(self):
        path = os.path.join(os.environ["VAT_SOURCE_DIR"], "python", "vat", "rewards.py")
        items, expected = self.items(with_root=True)
        extra = {}
        self.assertEqual(verl_manager(verl_reward_fn(path, {}), items, extra), expected)
        # the dict verl logs: the same keys on every response
        self.assertEqual(set(extra), {"score", "code", "gate_passed", "is_trap", "extract_rule"})
        self.assertTrue(all(len(v) == len(items) for v in extra.values()))
        self.assertEqual([c == "ok" for c in extra["code"]], [e == 1.0 for e in expected])
        traps = [t for t, s in zip(extra["is_trap"], extra["score"]) if t]
        self.assertEqual(len(traps), 2 * len(TASKS))  # two trap samples a prompt
        self.assertTrue(all(isinstance(g, bool) for g in extra["gate_passed"]))
        self.assertIn("fence", extra["extract_rule"])

    def test_root_resolved_once(self):
        """realpath once per root and process, not once per call; two
        spellings of one root share one handle."""
        import unittest.mock

        import vat.rewards

        t = TASKS[0]
        spelled = ROOT + "/./"
        calls = []
        real = os.path.realpath
        with unittest.mock.patch("os.path.realpath", side_effect=lambda p: calls.append(p) or real(p)):
            for _ in range(50):
                d = vat.rewards.verl_compute_score("vat", t["gold"], "", {"task_id": t["task_id"], "root": spelled})
                self.assertEqual((d["score"], d["code"]), (1.0, "ok"))
        self.assertLessEqual(len(calls), 1)
        self.assertIs(vat.rewards._corpus(spelled), vat.rewards._corpus(ROOT))
        self.assertGreaterEqual(vat.rewards.verdict_counts().get("ok", 0), 50)

    def test_pkg_path_root_in_reward_kwargs(self):
        items, expected = self.items(with_root=False)
        fn = verl_reward_fn("pkg://vat.rewards", {"root": ROOT})
        self.assertEqual(verl_manager(fn, items), expected)
        raw = verl_reward_fn("pkg://vat.rewards", {"root": ROOT, "extract": "raw"})
        t = TASKS[0]
        self.assertEqual(
            verl_manager(raw, [{"data_source": "vat", "reward_model": {"ground_truth": ""},
                                "extra_info": {"task_id": t["task_id"]}, "response_str": t["gold"]},
                               {"data_source": "vat", "reward_model": {"ground_truth": ""},
                                "extra_info": {"task_id": t["task_id"]},
                                "response_str": "Answer: " + t["gold"]}]),
            [1.0, 0.0],
        )

    def test_missing_task_or_root(self):
        import vat.rewards

        with self.assertRaises(ValueError):
            vat.rewards.verl_compute_score("vat", "1", "1", {"root": ROOT})
        env = os.environ.pop("VAT_ROOT", None)
        try:
            with self.assertRaises(ValueError):
                vat.rewards.verl_compute_score("vat", "1", "1", {"task_id": TASKS[0]["task_id"]})
        finally:
            if env is not None:
                os.environ["VAT_ROOT"] = env


class TestDeclarations(unittest.TestCase):
    def test_every_call_of_the_header_is_declared(self):
        """Each function of include/libvat.h has its argtypes and restype,
        with as many arguments as the header's prototype."""
        import re

        import vat._lib as L

        path = os.path.join(os.environ["VAT_SOURCE_DIR"], "include", "libvat.h")
        with open(path, encoding="utf-8") as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        protos = re.findall(r"^[a-z][^;#{}]*?\b(vat_\w+)\(([^)]*)\);", text, flags=re.M | re.S)
        self.assertGreaterEqual(len(protos), 14)
        self.assertEqual(sorted(n for n, _ in protos), sorted(L.PROTOTYPES))
        lib = L.load()
        for name, params in protos:
            argc = 0 if params.strip() in ("", "void") else params.count(",") + 1
            argtypes, restype = L.PROTOTYPES[name]
            self.assertEqual(len(argtypes), argc, name)
            self.assertEqual(getattr(lib, name).argtypes, argtypes, name)
            self.assertIs(getattr(lib, name).restype, restype, name)


class TestLibrarySearch(unittest.TestCase):
    def run_py(self, code, **env):
        e = dict(os.environ)
        e.update(env)
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e)

    def test_explicit_library_that_is_missing(self):
        out = self.run_py(
            "import vat\ntry:\n    vat.version()\nexcept vat.VatError as e:\n    print('error:', e)",
            VAT_LIBRARY="/nonexistent/libvat.so",
        )
        self.assertIn("error: cannot load libvat", out.stdout)
        self.assertIn("/nonexistent/libvat.so", out.stdout)

    def found(self, pkg_parent, lib_dest, extra=None):
        """Copies the package below pkg_parent and libvat to lib_dest, then
        asks a fresh interpreter (no VAT_LIBRARY) which file it loaded."""
        pkg = os.path.join(os.environ["VAT_SOURCE_DIR"], "python", "vat")
        shutil.copytree(pkg, os.path.join(pkg_parent, "vat"), ignore=shutil.ignore_patterns("__pycache__"))
        os.makedirs(os.path.dirname(lib_dest), exist_ok=True)
        shutil.copy(os.environ["VAT_LIBRARY"], lib_dest)
        for path in extra or []:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w").close()
        e = {k: v for k, v in os.environ.items() if k not in ("VAT_LIBRARY", "LD_LIBRARY_PATH")}
        e["PYTHONPATH"] = pkg_parent
        out = subprocess.run(
            [sys.executable, "-c", "import vat, vat._lib as l; vat.version(); print(l._lib._name)"],
            capture_output=True, text=True, env=e, cwd="/",
        )
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout.strip()

    def test_next_to_the_package(self):
        with tempfile.TemporaryDirectory() as d:
            lib = os.path.join(d, "vat", "libvat.so")
            self.assertEqual(self.found(d, lib), lib)

    def test_source_tree_build(self):
        with tempfile.TemporaryDirectory() as d:
            lib = os.path.join(d, "build", "libvat.so")
            header = os.path.join(d, "include", "libvat.h")
            self.assertEqual(self.found(os.path.join(d, "python"), lib, [header]), lib)

    def test_installed_prefix(self):
        # as `make install` lays it out: PREFIX/share/vat/python/vat, PREFIX/lib
        with tempfile.TemporaryDirectory() as d:
            lib = os.path.join(d, "lib", "libvat.so.0")
            self.assertEqual(self.found(os.path.join(d, "share", "vat", "python"), lib), lib)
        # a site directory of the same prefix
        with tempfile.TemporaryDirectory() as d:
            lib = os.path.join(d, "lib", "libvat.so.0")
            site = os.path.join(d, "lib", "python3", "dist-packages")
            self.assertEqual(self.found(site, lib), lib)


if __name__ == "__main__":
    lib = os.environ.get("VAT_LIBRARY", "")
    if not lib or not os.path.isfile(lib):
        print(f"python_vat: skipped: libvat.so is not built here (VAT_LIBRARY={lib!r})")
        sys.exit(SKIP)
    unittest.main(verbosity=2)

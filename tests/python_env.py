#!/usr/bin/env python3
"""python_env.py -- tool-use episodes through the Python package: vat.Env,
the verl tools (vat.verl_tools) and the TRL environments (vat.agents),
driven as each documents it, over a freshly built default corpus.

  - a scripted agent replays every task's expert transcript (the env
    table's completion) through vat.Env, reading only observations: every
    observation is the recorded one, a value answer is the one the last
    query's rows give (column count: 1 x 1 a number, 1 a list, 2 an
    object, 3 an object of objects), a program answer is the program its
    last try or sql ran; every task scores 1.0;
  - an agent that submits the trap scores below 1.0 on every task (all
    of the default corpus's traps are armed) and is told it was the trap;
  - the verl tools, as verl v0.7.0's ToolAgentLoop calls them (create with
    create_kwargs from the row's tools_kwargs, execute with agent_data,
    release, one instance per call) and as a rollout holding one instance
    per trajectory calls them (create once per tool, execute, calc_reward,
    release), score 1.0 on every task through compute_score; the tool
    configs in python/vat/examples load their classes as verl's registry
    does;
  - the TRL environments, as GRPOTrainer's environment_factory uses them
    (a probe instance's public methods are the tools, reset(**row), tools
    called by __name__, the reward function given the environments), score
    1.0 with the transcripts and with the answer left in the last message;
  - sft_example, error values, and 4 threads sharing one Corpus.

Environment: PYTHONPATH=<source>/python, VAT_LIBRARY=<build>/libvat.so,
VAT_BINARY=<build>/vat, VAT_SOURCE_DIR=<source>.  Standard library (and
python3-yaml for the configs, when present).  Exits 77 when VAT_LIBRARY
names no file."""
import asyncio
import importlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import tomllib
import unittest

SKIP = 77
ROOT = None
TASKS = 0      # the default corpus's tasks: the counts seeds.toml gives
ENV = {}       # task_id -> env row
ROLLOUTS = {}  # (task_id, role) -> rollout row


def read_table(root, table):
    rows = []
    for split in ("train", "test"):
        with open(os.path.join(root, "out", table, split + ".jsonl"), encoding="utf-8") as f:
            rows.extend(json.loads(line) for line in f if line.strip())
    return rows


def setUpModule():
    global ROOT, TASKS
    ROOT = tempfile.mkdtemp(prefix="vat-env-")
    seeds = os.path.join(os.environ["VAT_SOURCE_DIR"], "seeds.toml")
    with open(seeds, "rb") as f:
        TASKS = sum(t["count"] for t in tomllib.load(f)["templates"].values())
    built = subprocess.run(
        [os.environ["VAT_BINARY"], "build", "--config", seeds, "--root", ROOT],
        capture_output=True, text=True)
    if built.returncode != 0:
        raise RuntimeError(f"vat build failed ({built.returncode}): {built.stderr}")
    ENV.update({r["task_id"]: r for r in read_table(ROOT, "env")})
    ROLLOUTS.update({(r["task_id"], r["role"]): r for r in read_table(ROOT, "rollouts")})


def tearDownModule():
    if ROOT:
        shutil.rmtree(ROOT, ignore_errors=True)


def calls_of(row):
    """The transcript's tool calls: [(name, arguments dict)]."""
    return [(m["tool_calls"][0]["function"]["name"],
             json.loads(m["tool_calls"][0]["function"]["arguments"]))
            for m in row["completion"] if m["tool_calls"]]


def observations_of(row):
    return [m["content"] for m in row["completion"] if m["role"] == "tool"]


# ---- the scripted agent's reading of a text table ----------------------------

def unescape(cell):
    out, i = [], 0
    while i < len(cell):
        c = cell[i]
        if c == "\\" and i + 1 < len(cell):
            n = cell[i + 1]
            if n == "x":
                out.append(chr(int(cell[i + 2:i + 4], 16)))
                i += 4
                continue
            out.append({"n": "\n", "r": "\r", "t": "\t"}.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def read_rows(obs):
    """A whole result's cells (None for NULL), or None when obs is not one."""
    lines = obs.split("\n")
    m = re.fullmatch(r"\((\d+) rows?\)", lines[-1])
    if obs.startswith("error") or not m or int(m.group(1)) != len(lines) - 2:
        return None
    return [[None if c == "NULL" else unescape(c) for c in ln.split(" | ")] for ln in lines[1:-1]]


def number(text):
    return int(text) if re.fullmatch(r"-?\d+", text) else float(text)


def value_from(rows):
    """The value answer the rows give, by their column count."""
    ncol = len(rows[0]) if rows else 1
    if ncol == 1 and len(rows) == 1 and rows[0][0] is not None and re.fullmatch(
            r"-?[\d.e+-]+", rows[0][0]):
        return number(rows[0][0])
    if ncol == 1:
        return [r[0] for r in rows]
    if ncol == 2:
        return {r[0]: number(r[1]) for r in rows}
    out = {}
    for r in rows:
        out.setdefault(r[0], {})[r[1]] = number(r[2])
    return out


def rows_across_pages(observations, calls):
    """The rows of the last query the transcript ran, its pages joined."""
    rows = []
    for (name, args), obs in zip(calls, observations):
        if name != "sql":
            continue
        page = " OFFSET " in args["query"]
        lines = obs.split("\n")
        m = re.fullmatch(r"\(the first (\d+) of (\d+) rows shown\)", lines[-1])
        whole = read_rows(obs)
        got = whole if whole is not None else (
            [[None if c == "NULL" else unescape(c) for c in ln.split(" | ")]
             for ln in lines[1:-1]] if m else None)
        if got is None:
            continue
        rows = rows + got if page else got
    return rows


class ScriptedAgent(unittest.TestCase):
    """Every transcript replayed, reading observations only."""

    def test_every_transcript_scores_one(self):
        import vat

        self.assertEqual(len(ENV), TASKS)
        env = vat.Env(ROOT)
        kinds = {}
        for tid, row in sorted(ENV.items()):
            calls, recorded = calls_of(row), observations_of(row)
            self.assertTrue(calls and calls[-1][0] == "submit", tid)
            prompt = env.reset(tid)
            self.assertEqual(prompt, row["prompt"][0]["content"])
            self.assertEqual([t["function"]["name"] for t in env.tools],
                             [t["function"]["name"] for t in json.loads(row["tools"])])
            seen = []
            for (name, args), want in zip(calls[:-1], recorded):
                obs, reward, done = env.step({"name": name, "arguments": args})
                self.assertEqual(obs, want, f"{tid}: {name} {args}")
                self.assertFalse(done)
                self.assertEqual(reward, 0.0)
                seen.append(obs)
            # the answer, from what the calls returned
            kind = row["answer_kind"]
            if kind in ("regex", "sql"):
                tried = [a for n, a in calls[:-1] if n in ("try", "sql")]
                answer = tried[-1]["pattern" if kind == "regex" else "query"]
            else:
                rows = rows_across_pages(seen, calls[:-1])
                abstention = json.dumps({"answerable": False}, separators=(",", ":"))
                submitted = calls[-1][1]["answer"]
                if submitted == abstention:
                    answer = abstention  # the probe said the file cannot tell
                    self.assertIn('{"answerable": false}', prompt)
                else:
                    self.assertEqual(json.loads(submitted), value_from(rows), tid)
                    answer = submitted
            self.assertEqual(answer, calls[-1][1]["answer"], tid)
            obs, reward, done = env.step({"name": "submit", "arguments": {"answer": answer}})
            self.assertTrue(done, tid)
            self.assertEqual(reward, 1.0, f"{tid}: {env.verdict}")
            self.assertEqual(obs, recorded[-1])
            self.assertEqual(answer, ROLLOUTS[(tid, "agent")]["answer"])
            kinds[kind] = kinds.get(kind, 0) + 1
        env.close()
        self.assertEqual(set(kinds), {"value", "regex", "sql", "abstain"})

    def test_trap_scores_below_one(self):
        import vat

        with vat.Env(ROOT) as env:
            armed = 0
            for tid in sorted(ENV):
                trap = ROLLOUTS[(tid, "trap")]
                self.assertTrue(trap["gate_passed"] and trap["score"] < 1.0)
                env.reset(tid)
                obs, reward, done = env.step({"name": "submit",
                                              "arguments": {"answer": trap["answer"]}})
                self.assertTrue(done)
                self.assertLess(reward, 1.0, tid)
                self.assertTrue(env.verdict.is_trap, tid)
                armed += 1
            self.assertEqual(armed, TASKS)


# ---- verl ------------------------------------------------------------------------

class AgentData:
    """verl v0.7.0's AgentData as the tools see it."""

    def __init__(self, request_id):
        self.request_id = request_id
        self.extra_fields = {}


class Verl(unittest.TestCase):
    def tools(self):
        import vat.verl_tools as vt

        return {c.tool_name: c({"type": "native", "root": ROOT})
                for c in (vt.VatDescribeTool, vt.VatSampleTool, vt.VatSqlTool, vt.VatSubmitTool)}

    def test_tool_agent_loop(self):
        """create/execute/release per call, the episode in agent_data."""
        import vat.verl_tools as vt

        data = self.tools()
        regex = {c.tool_name: c({"type": "native", "root": ROOT, "tool_set": "regex"})
                 for c in (vt.VatSampleTool, vt.VatTryTool, vt.VatSubmitTool)}
        rows = {r["extra_info"]["task_id"]: r for s in ("train", "test")
                for ts in ("data", "regex") for r in vt.dataset_rows(ROOT, s, ts)}
        self.assertEqual(len(rows), TASKS)

        async def trajectory(row, tools):
            agent_data = AgentData(row["extra_info"]["task_id"])
            tool_rewards = []
            for name, args in calls_of(ENV[row["extra_info"]["task_id"]]):
                kw = row["extra_info"]["tools_kwargs"].get(name, {})
                tool = tools[name]
                instance_id, _ = await tool.create(create_kwargs=kw.get("create_kwargs", {}))
                resp, reward, _ = await tool.execute(instance_id, args, agent_data=agent_data)
                await tool.release(instance_id)
                if reward is not None:
                    tool_rewards.append(reward)
                self.assertIsInstance(resp.text, str)
            final = ENV[row["extra_info"]["task_id"]]["completion"][-1]["content"]
            return vt.compute_score(row["data_source"], final, "",
                                    {**row["extra_info"], "tool_rewards": tool_rewards,
                                     "turn_scores": []})

        async def run_all():
            scores = {}
            for tid, row in rows.items():
                tools = regex if ENV[tid]["tool_set"] == "regex" else data
                scores[tid] = await trajectory(row, tools)
            return scores

        scores = asyncio.run(run_all())
        bad = {k: v for k, v in scores.items() if v["score"] != 1.0}
        self.assertEqual(bad, {})
        self.assertEqual(vt._VatTool._instances, {})  # every instance released

    def test_instance_per_trajectory(self):
        """create once per tool with one instance id, calc_reward, release."""
        import vat.verl_tools as vt

        tools = self.tools()

        async def run(tid):
            ids = {}
            for name, tool in tools.items():
                ids[name], _ = await tool.create(instance_id="req-" + tid, task_id=tid, root=ROOT)
            for name, args in calls_of(ENV[tid]):
                await tools[name].execute(ids[name], args)
            r = await tools["submit"].calc_reward(ids["submit"])
            for name, tool in tools.items():
                await tool.release(ids[name])
            return r

        for tid in [t for t in sorted(ENV) if ENV[t]["tool_set"] == "data"][:40]:
            self.assertEqual(asyncio.run(run(tid)), 1.0, tid)
        self.assertEqual(vt._VatTool._instances, {})

    def test_no_submit_scores_final_text(self):
        import vat.verl_tools as vt

        tid = next(t for t in sorted(ENV) if ENV[t]["answer_kind"] == "value")
        final = ENV[tid]["completion"][-1]["content"]
        info = {"task_id": tid, "root": ROOT, "tool_rewards": []}
        got = vt.compute_score("vat", f"The totals:\n```json\n{final}\n```", "", info)
        self.assertEqual(got["score"], 1.0)
        self.assertEqual(got["code"], "ok")
        got = vt.compute_score("vat", final, "", {**info, "tool_rewards": [0.0]})
        self.assertEqual(got, {"score": 0.0, "code": "submitted", "gate_passed": False,
                               "is_trap": False, "extract_rule": "submit"})

    def test_configs_load_as_verl_does(self):
        try:
            import yaml
        except ImportError:
            self.skipTest("python3-yaml is not installed")
        import vat.verl_tools as vt

        folder = os.path.join(os.path.dirname(vt.__file__), "examples")
        for name, want in (("verl_tools_data.yaml", ["describe", "sample", "sql", "submit"]),
                           ("verl_tools_regex.yaml", ["sample", "try", "submit"])):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                cfg = yaml.safe_load(f)
            got = []
            for t in cfg["tools"]:
                module, cls = t["class_name"].rsplit(".", 1)
                tool = getattr(importlib.import_module(module), cls)(t["config"],
                                                                     t.get("tool_schema"))
                schema = tool.get_openai_tool_schema()
                got.append(tool.name)
                self.assertEqual(schema.function.name, tool.name)
            self.assertEqual(got, want)
        with open(os.path.join(folder, "verl_multiturn.yaml"), encoding="utf-8") as f:
            mt = yaml.safe_load(f)
        self.assertEqual(mt["custom_reward_function"]["name"], "compute_score")
        regex_sample = vt.VatSampleTool({"type": "native", "tool_set": "regex"})
        self.assertEqual(list(regex_sample.get_openai_tool_schema()["function"]["parameters"][
            "properties"]), ["n"])


# ---- TRL -------------------------------------------------------------------------

class Trl(unittest.TestCase):
    def env_tools(self, instance):
        """What GRPOTrainer takes as an environment's tools."""
        return {m.__name__: m for n, m in inspect.getmembers(instance, predicate=inspect.ismethod)
                if n not in ("reset", "get_reward") and not n.startswith("_")}

    def test_environment_factory(self):
        import vat.agents

        factories = vat.agents.trl_environments(ROOT)
        names = {k: sorted(self.env_tools(f())) for k, f in factories.items()}
        self.assertEqual(names, {"data": ["describe", "sample", "sql", "submit"],
                                 "regex": ["sample", "submit", "try"]})
        for k, f in factories.items():
            for name, m in self.env_tools(f()).items():
                doc = inspect.getdoc(m)
                self.assertTrue(doc and "Returns:" in doc, f"{k}.{name}")
                params = [p for p in inspect.signature(m).parameters]
                if params:
                    self.assertIn("Args:", doc)
                    for p in params:
                        self.assertIn(p + ":", doc)
        envs, completions, rows = [], [], []
        for i, (tid, row) in enumerate(sorted(ENV.items())):
            env = factories[row["tool_set"]]()
            self.assertIsNone(env.reset(prompt=row["prompt"], task_id=tid,
                                        environment=row["tool_set"]))
            tools = self.env_tools(env)
            calls = calls_of(row)
            # every other rollout leaves its answer in its last message
            # instead of calling submit
            upto = calls if i % 2 == 0 else calls[:-1]
            for name, args in upto:
                tools[name](**args)
            envs.append(env)
            completions.append([{"role": "assistant", "content": row["completion"][-1]["content"]}])
            rows.append(row)
        rewards = vat.agents.trl_reward()(prompts=[r["prompt"] for r in rows],
                                          completions=completions, environments=envs,
                                          task_id=[r["task_id"] for r in rows])
        self.assertEqual(rewards, [1.0] * len(rows))

    def test_trap_reward(self):
        import vat.agents

        factories = vat.agents.trl_environments(ROOT)
        envs, completions = [], []
        for tid, row in sorted(ENV.items())[:30]:
            env = factories[row["tool_set"]]()
            env.reset(task_id=tid)
            envs.append(env)
            completions.append([{"role": "assistant",
                                 "content": ROLLOUTS[(tid, "trap")]["answer"]}])
        rewards = vat.agents.trl_reward()(completions=completions, environments=envs)
        self.assertTrue(all(r < 1.0 for r in rewards))

    def test_sft_example(self):
        import vat.agents

        for row in ENV.values():
            ex = vat.agents.sft_example(row)
            self.assertEqual([t["function"]["name"] for t in ex["tools"]],
                             [t["function"]["name"] for t in json.loads(row["tools"])])
            for m in ex["completion"]:
                for c in m.get("tool_calls", []):
                    self.assertIsInstance(c["function"]["arguments"], dict)
            self.assertEqual(ex["completion"][-1]["role"], "assistant")


# ---- the Env itself --------------------------------------------------------------

class EnvApi(unittest.TestCase):
    def test_errors_and_call_forms(self):
        import vat

        env = vat.Env(ROOT)
        with self.assertRaises(vat.VatError):
            env.step({"name": "describe", "arguments": {}})
        with self.assertRaises(vat.UnknownTaskError):
            env.reset("nope-00001")
        with self.assertRaises(TypeError):
            env.reset(7)
        tid = next(t for t in sorted(ENV) if ENV[t]["tool_set"] == "data")
        env.reset(tid)
        a = env.step({"name": "describe", "arguments": {}})
        b = env.step({"type": "function", "function": {"name": "describe", "arguments": "{}"}})
        c = env.step({"name": "describe"})
        self.assertEqual(a, b)
        self.assertEqual(a, c)
        obs, _, done = env.step({"name": "sql", "arguments": "not json"})
        self.assertTrue(obs.startswith("error:") and not done)
        with self.assertRaises(TypeError):
            env.step("describe")
        self.assertEqual(env.calls, 4)
        self.assertIsNone(env.verdict)
        self.assertEqual([t["function"]["name"] for t in vat.tool_schemas("regex")],
                         ["sample", "try", "submit"])
        env.close()

    def test_threads_share_a_corpus(self):
        import vat

        corpus = vat.Corpus(ROOT)
        tids = sorted(ENV)
        errors = []

        def run(offset):
            env = vat.Env(corpus)
            try:
                for tid in tids[offset::4]:
                    env.reset(tid)
                    for (name, args), want in zip(calls_of(ENV[tid]), observations_of(ENV[tid])):
                        obs, _, _ = env.step({"name": name, "arguments": args})
                        if obs != want:
                            errors.append((tid, name))
                    if env.reward != 1.0:
                        errors.append((tid, "reward"))
            finally:
                env.close()

        threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        corpus.close()
        self.assertEqual(errors, [])


if __name__ == "__main__":
    if not os.path.isfile(os.environ.get("VAT_LIBRARY", "")):
        print("python_env: VAT_LIBRARY names no file; skipped")
        sys.exit(SKIP)
    unittest.main()

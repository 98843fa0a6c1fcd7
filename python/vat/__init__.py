"""vat -- score model completions with vat's checkers, in-process.

A thin ctypes layer over libvat (include/libvat.h), standard library only::

    import vat
    with vat.Corpus("/data/corpus") as corpus:
        v = corpus.score("grouped_sum-00007", completion)   # extract="auto"
        print(v.score, v.code, v.extract_rule, v.extracted)
        verdicts = corpus.score_many(task_ids, completions, workers=8)
        report = corpus.score_many(task_ids, completions, k=[1, 4, 16])
        report.pass_at_k["total"][4]                         # unbiased pass@4

    reward_funcs = [vat.rewards.trl("/data/corpus")]        # TRL GRPOTrainer
    vat.pass_at_k(n=16, c=3, k=4)

    env = vat.Env("/data/corpus")                           # tool-use episodes
    prompt = env.reset("grouped_sum-00007")
    obs, reward, done = env.step({"name": "sql", "arguments": {"query": "SELECT 1"}})

Trainer adapters for episodes: vat.agents (TRL environment_factory and a
reward function), vat.verl_tools (verl BaseTool classes).

libvat.so is found through VAT_LIBRARY, next to the package, or where it is
installed (vat/_lib.py gives the order).  Extraction: docs/extraction.md.
"""
from . import rewards
from ._lib import CorpusFaultError, UnknownTaskError, VatError
from .corpus import Corpus, ScoreReport, Verdict, pass_at_k, version
from .env import Env, EpisodeVerdict, tool_schemas

__all__ = [
    "Corpus", "Verdict", "ScoreReport", "VatError", "UnknownTaskError", "CorpusFaultError",
    "pass_at_k", "version", "rewards", "Env", "EpisodeVerdict", "tool_schemas",
]

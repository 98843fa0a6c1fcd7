"""rewards.py -- vat's checkers as reward functions for RL trainers.

TRL (GRPOTrainer, RLOOTrainer)::

    import vat.rewards
    trainer = GRPOTrainer(..., reward_funcs=[vat.rewards.trl("/data/corpus")])

The dataset needs a ``task_id`` column (the experience table has one);
TRL passes every extra column to reward functions as a list aligned with
the completions.

verl (``custom_reward_function``)::

    custom_reward_function.path=pkg://vat.rewards   (or the file .../vat/rewards.py)
    custom_reward_function.name=verl_compute_score

with ``extra_info = {"task_id": ..., "root": "/data/corpus"}`` in each row of
the parquet files (or the root given once as
``custom_reward_function.reward_kwargs.root=/data/corpus``).

Faults of the corpus are loud, the model's own limits are not (on_error,
default "raise"): a verdict of code ``internal`` or ``tampered`` (a fixture
missing, changed or left as a Git LFS pointer; a checker spec that cannot
be read) raises CorpusFaultError with the task id and the reason, so
training stops instead of going on against a broken corpus; a verdict of
code ``checker_limit`` (the answer ran into one of the checker's last-resort
nets) is no reward at all: None for TRL, which leaves that sample out of
that reward function; verl has no such value, so there it scores 0.0 with
the code in the returned dict.  on_error="zero" gives every such verdict
0.0, as earlier versions did.  Either way the verdicts are counted per code
(``reward_func.counts()``, ``verdict_counts()`` for verl) and the first of
each code is logged through the ``logging`` logger "vat.rewards" (faults at
ERROR, checker_limit at WARNING, the model's codes at INFO).
"""
import collections
import logging
import os
import threading

if __package__:
    from ._lib import CorpusFaultError
    from .corpus import Corpus, _mode
else:  # loaded by file path (verl's custom_reward_function.path=.../vat/rewards.py)
    try:
        from vat._lib import CorpusFaultError
        from vat.corpus import Corpus, _mode
    except ImportError:  # the package is not on sys.path: it is the directory above
        import sys

        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from vat._lib import CorpusFaultError
        from vat.corpus import Corpus, _mode

__all__ = ["trl", "verl_compute_score", "verdict_counts", "completion_text", "CorpusFaultError"]

log = logging.getLogger("vat.rewards")

# Verdict codes that blame the corpus (raised under on_error="raise") and the
# one that says the answer ran into a net of the checker (no reward).
CORPUS_FAULTS = frozenset(("internal", "tampered"))
CHECKER_LIMIT = "checker_limit"
ON_ERROR = ("raise", "zero")


def _on_error(on_error):
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be 'raise' or 'zero', not {on_error!r}")
    return on_error


class _Tally:
    """Verdicts counted per code; the first of each code logged."""

    def __init__(self, where):
        self.where = where
        self.lock = threading.Lock()
        self.counts = collections.Counter()

    def add(self, task_id, code, reason):
        with self.lock:
            self.counts[code] += 1
            first = self.counts[code] == 1
        if first:
            level = (logging.ERROR if code in CORPUS_FAULTS
                     else logging.WARNING if code == CHECKER_LIMIT else logging.INFO)
            log.log(level, "%s: first verdict of code '%s' (task '%s')%s", self.where, code,
                    task_id, f": {reason}" if reason else "")

    def snapshot(self):
        with self.lock:
            return dict(self.counts)


def completion_text(completion):
    """The text of one completion as a trainer hands it over.

    A plain string is itself.  A conversational completion (a list of
    {"role", "content"} messages, as TRL gives for conversational datasets)
    is the content of its last assistant message; content given as a list
    of parts keeps the text parts.  No assistant message is the empty
    answer (it scores 0 with a gate failure, like any empty answer)."""
    if isinstance(completion, (str, bytes)):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if completion is None:
        return ""
    for message in reversed(list(completion)):
        if isinstance(message, dict) and message.get("role") == "assistant":
            content = message.get("content")
            if content is None:
                return ""
            if isinstance(content, str):
                return content
            return "".join(
                part.get("text", "") if isinstance(part, dict) else str(part) for part in content
            )
    return ""


def trl(root, extract="auto", workers=1, on_error="raise", cache_bytes=None):
    """A TRL reward function scoring completions with the corpus at root.

    Returns ``f(prompts, completions, **kwargs) -> list[float | None]`` with
    TRL's reward signature: kwargs must hold ``task_id``, a list of task ids
    aligned with completions (TRL repeats each dataset column once per
    generation).  Other kwargs are ignored, but for ``log_metric`` (TRL
    passes it): each batch logs the shares ``vat/gate_passed``,
    ``vat/is_trap`` and ``vat/checker_limit``.  The corpus is opened here,
    once (cache_bytes: vat.Corpus), so a wrong root fails before training
    starts; an unknown task id raises (a dataset that does not belong to the
    corpus is a configuration error, not a reward of 0).  on_error: see the
    module's docstring.  The function's ``counts()`` gives the verdicts so
    far per code; ``corpus`` is the open vat.Corpus."""
    _on_error(on_error)
    if extract not in ("auto", "raw"):
        raise ValueError(f"extract must be 'auto' or 'raw', not {extract!r}")
    corpus = Corpus(root, cache_bytes=cache_bytes)
    tally = _Tally("vat reward")
    loud = on_error == "raise"

    def vat_reward(prompts=None, completions=None, **kwargs):
        if completions is None:
            raise TypeError("vat_reward needs completions")
        task_ids = kwargs.get("task_id")
        if task_ids is None:
            raise ValueError("vat reward: the dataset needs a 'task_id' column")
        if isinstance(task_ids, str):
            task_ids = [task_ids] * len(completions)
        texts = [completion_text(c) for c in completions]
        briefs = corpus._many(corpus._brief, task_ids, texts, workers, extract)
        rewards, fault = [], None
        gates = traps = limits = 0
        for tid, (score, code, gate, trap, _, reason) in zip(task_ids, briefs):
            tally.add(tid, code, reason)
            gates += gate
            traps += trap
            limits += code == CHECKER_LIMIT
            if loud and code == CHECKER_LIMIT:
                rewards.append(None)  # TRL: not applicable to this sample
                continue
            if loud and code in CORPUS_FAULTS and fault is None:
                fault = CorpusFaultError(tid, code, reason)
            rewards.append(score)
        if fault is not None:
            raise fault
        log_metric = kwargs.get("log_metric")
        if callable(log_metric) and briefs:
            n = len(briefs)
            log_metric("vat/gate_passed", gates / n)
            log_metric("vat/is_trap", traps / n)
            log_metric("vat/checker_limit", limits / n)
        return rewards

    vat_reward.corpus = corpus  # for inspection and closing
    vat_reward.counts = tally.snapshot
    return vat_reward


# verl: one Corpus per corpus root and process, found by the root as given
# (a realpath per call costs more than the check), the same directory
# reached by two spellings sharing one handle.
_corpora = {}
_corpora_real = {}
_corpora_lock = threading.Lock()
_verl_tally = _Tally("vat verl_compute_score")


def _corpus(root):
    c = _corpora.get(root)
    if c is None:
        with _corpora_lock:
            c = _corpora.get(root)
            if c is None:
                key = os.path.realpath(os.fspath(root))
                c = _corpora_real.get(key)
                if c is None:
                    c = _corpora_real[key] = Corpus(key)
                _corpora[root] = c
    return c


def verdict_counts():
    """The verdicts verl_compute_score has given in this process, per code."""
    return _verl_tally.snapshot()


def verl_compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's compute_score: the verdict on solution_str for one task.

    Returns the dict verl's reward managers take (NaiveRewardManager of
    verl v0.7.0: "score" is the reward, every key is gathered into
    reward_extra_info, one list per key, and numeric ones are averaged in
    validation metrics): {"score": float, "code": str, "gate_passed": bool,
    "is_trap": bool, "extract_rule": str}.

    The task id is ``extra_info["task_id"]``; the corpus root is
    ``extra_info["root"]``, else the ``root`` keyword (verl passes
    custom_reward_function.reward_kwargs as keywords), else the environment
    variable VAT_ROOT.  ``extract`` ("auto" by default) and ``on_error``
    ("raise" by default; see the module's docstring: a checker_limit scores
    0.0 here, verl having no "not applicable") are read the same way.
    data_source and ground_truth are not used: the gold answer and its
    checker live in the corpus.  Corpus handles are opened once per root
    and process and kept."""
    info = extra_info if isinstance(extra_info, dict) else {}
    task_id = info.get("task_id")
    if not task_id:
        raise ValueError("vat verl_compute_score: extra_info needs 'task_id'")
    root = info.get("root") or kwargs.get("root") or os.environ.get("VAT_ROOT")
    if not root:
        raise ValueError(
            "vat verl_compute_score: no corpus root (extra_info['root'], reward_kwargs root, or VAT_ROOT)"
        )
    extract = info.get("extract") or kwargs.get("extract") or "auto"
    on_error = _on_error(info.get("on_error") or kwargs.get("on_error") or "raise")
    corpus = _corpus(root)
    mode = _mode(extract)
    h = corpus._acquire()
    try:
        score, code, gate, trap, rule, reason = corpus._brief(h, task_id, solution_str, mode)
    finally:
        corpus._release()
    _verl_tally.add(task_id, code, reason)
    if code in CORPUS_FAULTS and on_error == "raise":
        raise CorpusFaultError(task_id, code, reason)
    return {"score": score, "code": code, "gate_passed": gate, "is_trap": trap, "extract_rule": rule}

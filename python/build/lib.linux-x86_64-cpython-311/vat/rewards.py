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
"""
import os
import threading

if __package__:
    from .corpus import Corpus
else:  # loaded by file path (verl's custom_reward_function.path=.../vat/rewards.py)
    try:
        from vat.corpus import Corpus
    except ImportError:  # the package is not on sys.path: it is the directory above
        import sys

        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from vat.corpus import Corpus

__all__ = ["trl", "verl_compute_score", "completion_text"]


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


def trl(root, extract="auto", workers=1):
    """A TRL reward function scoring completions with the corpus at root.

    Returns ``f(prompts, completions, **kwargs) -> list[float]`` with TRL's
    reward signature: kwargs must hold ``task_id``, a list of task ids
    aligned with completions (TRL repeats each dataset column once per
    generation).  Other kwargs (completion_ids, trainer_state, log_extra,
    other columns) are ignored.  The corpus is opened here, once, so a wrong
    root fails before training starts; an unknown task id raises (a dataset
    that does not belong to the corpus is a configuration error, not a
    reward of 0)."""
    corpus = Corpus(root)
    if extract not in ("auto", "raw"):
        raise ValueError(f"extract must be 'auto' or 'raw', not {extract!r}")

    def vat_reward(prompts=None, completions=None, **kwargs):
        if completions is None:
            raise TypeError("vat_reward needs completions")
        task_ids = kwargs.get("task_id")
        if task_ids is None:
            raise ValueError("vat reward: the dataset needs a 'task_id' column")
        if isinstance(task_ids, str):
            task_ids = [task_ids] * len(completions)
        texts = [completion_text(c) for c in completions]
        return corpus.rewards(task_ids, texts, workers=workers, extract=extract)

    vat_reward.corpus = corpus  # for inspection and closing
    return vat_reward


_corpora = {}
_corpora_lock = threading.Lock()


def _corpus(root):
    key = os.path.realpath(os.fspath(root))
    c = _corpora.get(key)
    if c is None:
        with _corpora_lock:
            c = _corpora.get(key)
            if c is None:
                c = _corpora[key] = Corpus(key)
    return c


def verl_compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's compute_score: the score of solution_str for one task.

    The task id is ``extra_info["task_id"]``; the corpus root is
    ``extra_info["root"]``, else the ``root`` keyword (verl passes
    custom_reward_function.reward_kwargs as keywords), else the environment
    variable VAT_ROOT.  ``extract`` ("auto" by default) is read the same
    way.  data_source and ground_truth are not used: the gold answer and its
    checker live in the corpus.  Corpus handles are opened once per root and
    process and kept."""
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
    corpus = _corpus(root)
    return corpus.rewards([task_id], [solution_str], workers=1, extract=extract)[0]

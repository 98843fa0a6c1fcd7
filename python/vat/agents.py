"""agents.py -- vat's episodes for TRL, and the env table's rows for SFT.

GRPO with tools (TRL's GRPOTrainer ``environment_factory``: one
environment per rollout, its public methods the tools, ``reset`` given the
dataset row's columns)::

    import vat.agents
    ds = load_dataset("DEST", "env", split="train")            # the env table
    ds = ds.rename_column("tool_set", "environment")
    trainer = GRPOTrainer(
        model=...,
        train_dataset=ds.select_columns(["prompt", "task_id", "environment"]),
        environment_factory=vat.agents.trl_environments("/data/corpus"),
        reward_funcs=[vat.agents.trl_reward()],
    )

``trl_environments`` gives {"data": factory, "regex": factory}: each task
sees only its own tools (describe, sample, sql, submit; or sample, try,
submit), plain Python methods with type hints and Google-style docstrings
as TRL builds tool schemas from.  ``trl_reward`` returns each rollout's
episode reward when it submitted, else scores the completion's last
assistant message as an answer (extract "auto", as vat.rewards.trl).
For a run on data tasks alone, pass ``environment_factory=
vat.agents.trl_environment("/data/corpus")`` and no environment column.

SFT on the expert transcripts: the env table's ``prompt``, ``completion``
(assistant tool calls, tool observations, the final answer) and ``tools``
(JSON text, which SFTTrainer reads as it is) columns are TRL's
conversational prompt-completion form with tools.  ``sft_example(row)``
gives a row with each tool call's arguments as a dict, for chat templates
that want them so.
"""
import json
import os

from .env import Env
from .rewards import _corpus, completion_text

__all__ = ["trl_environment", "trl_environments", "trl_reward", "sft_example"]


class _Episode:
    """What both tool sets share: reset from the row, submit, the episode's state."""

    root = None

    def __init__(self):
        self._env = Env(_corpus(self.root))
        self.observations = []

    def reset(self, task_id=None, **kwargs):
        """Starts the row's episode; the prompt column already holds the
        agent prompt, so nothing is appended to it."""
        if not task_id:
            raise ValueError("vat: the dataset needs a 'task_id' column")
        self._env.reset(task_id)
        self.observations = []
        return None

    def _call(self, name, arguments):
        obs, _, _ = self._env.step({"name": name, "arguments": arguments})
        self.observations.append(obs)
        return obs

    @property
    def done(self):
        return self._env.done

    @property
    def reward(self):
        return self._env.reward

    @property
    def verdict(self):
        return self._env.verdict

    def submit(self, answer: str) -> str:
        """
        Submits the final answer, written exactly as the task asks for it. The episode ends and the answer is scored.

        Args:
            answer: The answer text.

        Returns:
            The score.
        """
        return self._call("submit", {"answer": answer})

    def _submit_text(self, text):
        """Submits text unless the episode already ended; its reward."""
        if not self._env.done:
            self._env.step({"name": "submit", "arguments": {"answer": text}})
        return self._env.reward


class VatDataEnv(_Episode):
    """A data task's episode: describe, sample, sql, submit."""

    def describe(self) -> str:
        """
        Lists the tables of the data: each table's columns with their declared types, and its row count.

        Returns:
            The tables as text.
        """
        return self._call("describe", {})

    def sample(self, table: str, n: int = 5) -> str:
        """
        Shows the first n rows of a table as a text table.

        Args:
            table: The table's name, as describe lists it.
            n: How many rows, 1 to 20.

        Returns:
            The rows as a text table.
        """
        return self._call("sample", {"table": table, "n": n})

    def sql(self, query: str) -> str:
        """
        Runs one read-only SQLite SELECT statement over the tables and shows its result as a text table (at most 50 rows).

        Args:
            query: One SQLite SELECT statement.

        Returns:
            The result as a text table, or an error.
        """
        return self._call("sql", {"query": query})



class VatRegexEnv(_Episode):
    """A regex task's episode: sample, try, submit."""

    def sample(self, n: int = 5) -> str:
        """
        Shows the first n example lines, one per line as '<line_id>: <text>'.

        Args:
            n: How many lines, 1 to 20.

        Returns:
            The example lines.
        """
        return self._call("sample", {"n": n})


def _try(self, pattern: str) -> str:
    """
    Shows what a pattern extracts from each example line: the full matches of re.finditer(pattern, line), as a JSON list per line.

    Args:
        pattern: A Python re pattern.

    Returns:
        The matches per example line, or an error.
    """
    return self._call("try", {"pattern": pattern})


# The tool is called `try`, a Python keyword: set as an attribute, named so.
_try.__name__ = _try.__qualname__ = "try"
setattr(VatRegexEnv, "try", _try)


def _bound(cls, root):
    return type(cls.__name__, (cls,), {"root": os.fspath(root)})


def trl_environment(root):
    """The environment class (TRL's environment_factory) of data tasks."""
    return _bound(VatDataEnv, root)


def trl_environments(root):
    """{"data": ..., "regex": ...}: environment_factory for a dataset whose
    "environment" column is the env table's tool_set."""
    return {"data": _bound(VatDataEnv, root), "regex": _bound(VatRegexEnv, root)}


def trl_reward():
    """A TRL reward function over the rollouts' environments.

    ``f(prompts, completions, environments, **kwargs) -> list[float]``:
    the episode's reward when it submitted, else the last assistant
    message of the completion submitted as the answer."""

    def vat_episode_reward(prompts=None, completions=None, environments=None, **kwargs):
        if environments is None:
            raise ValueError("vat episode reward: the trainer passed no environments "
                             "(use environment_factory)")
        if completions is None:
            completions = [None] * len(environments)
        out = []
        for env, completion in zip(environments, completions):
            if env.done:
                out.append(float(env.reward))
            else:
                out.append(float(env._submit_text(completion_text(completion))))
        return out

    return vat_episode_reward


def sft_example(row):
    """An env table row as TRL's SFT wants it when a chat template needs
    tool-call arguments as dicts: prompt, completion (arguments parsed,
    empty members of other roles dropped) and tools (a list)."""
    completion = []
    for m in row["completion"]:
        msg = {"role": m["role"], "content": m["content"]}
        if m["tool_calls"]:
            msg["tool_calls"] = [
                {"id": c["id"], "type": c["type"],
                 "function": {"name": c["function"]["name"],
                              "arguments": json.loads(c["function"]["arguments"])}}
                for c in m["tool_calls"]
            ]
        if m["role"] == "tool":
            msg["tool_call_id"] = m["tool_call_id"]
            msg["name"] = m["name"]
        completion.append(msg)
    return {"prompt": row["prompt"], "completion": completion, "tools": json.loads(row["tools"])}

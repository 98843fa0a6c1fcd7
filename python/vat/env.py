"""env.py -- vat.Env: a task as a tool-use environment (libvat's episodes).

An agent explores a task's main fixture through tools, then submits its
answer, which the task's checker scores::

    import vat
    env = vat.Env("/data/corpus")
    prompt = env.reset("grouped_sum-00007")      # the first observation
    env.tools                                     # OpenAI function-tool schemas
    obs, reward, done = env.step({"name": "describe", "arguments": {}})
    obs, reward, done = env.step({"name": "sql",
                                  "arguments": {"query": "SELECT count(*) FROM orders"}})
    obs, reward, done = env.step({"name": "submit", "arguments": {"answer": "42"}})
    env.verdict                                   # code, reason, score, is_trap

A tool call is ``{"name": ..., "arguments": {...}}`` as in OpenAI function
calling (the arguments may also be their JSON text, and the call may be
wrapped as ``{"type": "function", "function": {...}}``).  Data tasks have
describe, sample, sql and submit; regex tasks sample, try and submit.
Every call gets an observation: a bad call, a denied query or a spent
bound is an observation, not an exception; the same calls give the same
observations.  ``reward`` is 0.0 until the episode is done, then the
submitted answer's score (0.0 when a bound ended it).

One Env runs one episode at a time and belongs to one thread; many Envs
(one per thread or rollout) may share a Corpus, whose handle keeps every
task's loaded fixture for all of them.
"""
import ctypes
import json
import os
from dataclasses import dataclass

from . import _lib
from ._lib import UnknownTaskError, VatError
from .corpus import Corpus, _task_bytes, _text

__all__ = ["Env", "EpisodeVerdict", "tool_schemas"]


@dataclass(frozen=True, slots=True)
class EpisodeVerdict:
    """How an episode ended: the submitted answer's verdict, or the bound
    that ended it (code "episode_limit", score 0)."""

    task_id: str
    score: float
    code: str
    reason: str
    is_trap: bool


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _call_parts(call):
    """(name bytes, arguments bytes) of a tool call in either OpenAI form."""
    if not isinstance(call, dict):
        raise TypeError(f"a tool call is a dict with 'name' and 'arguments', not {type(call).__name__}")
    fn = call.get("function")
    if isinstance(fn, dict) and "name" not in call:
        call = fn
    name = call.get("name")
    if not isinstance(name, str):
        raise TypeError("a tool call needs a 'name' string")
    args = call.get("arguments")
    if args is None:
        text = b""
    elif isinstance(args, str):
        text = args.encode("utf-8", "replace")
    elif isinstance(args, (bytes, bytearray)):
        text = bytes(args)
    else:
        text = _dumps(args).encode("utf-8", "replace")
    return name.encode("utf-8", "replace"), text


def tool_schemas(tool_set="data"):
    """The OpenAI function-tool schemas of a tool set ("data" or "regex")."""
    if tool_set not in ("data", "regex"):
        raise ValueError(f"tool_set is 'data' or 'regex', not {tool_set!r}")
    return json.loads(_lib.load().vat_tools_json(tool_set.encode()).decode())


class Env:
    """Tool-use episodes on the tasks of a built corpus.

    ``Env(root)`` opens the corpus at root (and closes it with the Env);
    ``Env(corpus)`` shares an open vat.Corpus (close the Envs first)."""

    def __init__(self, corpus):
        if isinstance(corpus, Corpus):
            self.corpus, self._owns = corpus, False
        else:
            self.corpus, self._owns = Corpus(os.fspath(corpus)), True
        lib = self.corpus._lib
        self._lib = lib
        self._ep = None
        self.task_id = None
        self._tools_ptr = None
        self._tools = None
        # the hot path's C functions, looked up once
        self._c_step = lib.vat_episode_step
        self._c_obs = lib.vat_episode_observation
        self._c_done = lib.vat_episode_done
        self._c_reward = lib.vat_episode_reward
        self._n = ctypes.c_size_t()
        self._n_ref = ctypes.byref(self._n)

    # ---- an episode's life --------------------------------------------------

    def reset(self, task_id):
        """Starts an episode on task_id (ending any open one) and returns its
        first observation: the agent prompt.  Raises UnknownTaskError for a
        task the corpus does not have, VatError when the corpus cannot host
        episodes (no env table, tampered)."""
        self._end()
        tid = _task_bytes(task_id)
        h = self.corpus._acquire()
        try:
            ep = ctypes.c_void_p()
            err = _lib._Error()
            if self._lib.vat_episode_open(h, tid, ctypes.byref(ep), ctypes.byref(err)) != 0:
                msg = _text(err.message) or "vat_episode_open failed"
                if not self._lib.vat_corpus_has_task(h, tid):
                    raise UnknownTaskError(msg)
                raise VatError(msg)
            self._ep = ep
            self.task_id = task_id if isinstance(task_id, str) else _text(task_id)
            tools = self._lib.vat_episode_tools(ep)  # an address: the set's static text
            if tools != self._tools_ptr:
                self._tools_ptr, self._tools = tools, None
            return _text(self._lib.vat_episode_prompt(ep))
        finally:
            self.corpus._release()

    def step(self, tool_call):
        """Runs one tool call; returns (observation, reward, done)."""
        ep = self._ep
        if ep is None:
            raise VatError("no episode: call reset(task_id) first")
        name, args = _call_parts(tool_call)
        self.corpus._acquire()
        try:
            if self._c_step(ep, name, args, len(args), None) != 0:
                raise VatError("vat_episode_step failed")
            ptr = self._c_obs(ep, self._n_ref)
            obs = ctypes.string_at(ptr, self._n.value).decode("utf-8", "replace")
            if self._c_done(ep):
                return obs, self._c_reward(ep), True
            return obs, 0.0, False
        finally:
            self.corpus._release()

    @property
    def tools(self):
        """The episode's tools as OpenAI function-tool schemas (a list of dicts)."""
        if self._ep is None:
            raise VatError("no episode: call reset(task_id) first")
        if self._tools is None:
            self._tools = json.loads(ctypes.string_at(self._tools_ptr).decode())
        return self._tools

    @property
    def done(self):
        return self._ep is not None and bool(self._c_done(self._ep))

    @property
    def reward(self):
        return self._c_reward(self._ep) if self._ep is not None else 0.0

    @property
    def calls(self):
        """Tool calls taken in this episode."""
        return int(self._lib.vat_episode_calls(self._ep)) if self._ep is not None else 0

    @property
    def verdict(self):
        """The EpisodeVerdict once done, else None."""
        ep = self._ep
        if ep is None or not self._c_done(ep):
            return None
        lib = self._lib
        return EpisodeVerdict(
            self.task_id,
            lib.vat_episode_reward(ep),
            (lib.vat_episode_code(ep) or b"").decode(),
            _text(lib.vat_episode_reason(ep)),
            lib.vat_episode_is_trap(ep) == 1,
        )

    def _end(self):
        if self._ep is not None:
            # frees only the episode's own memory: safe after the corpus closed
            self._lib.vat_episode_close(self._ep)
            self._ep = None

    def close(self):
        """Ends the open episode, and closes the corpus when the Env opened it."""
        self._end()
        if getattr(self, "_owns", False):
            self.corpus.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

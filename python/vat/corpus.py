"""corpus.py -- vat.Corpus: score completions against a built corpus.

One Corpus wraps one ``vat_corpus`` handle of libvat.  Scoring is safe from
many threads at once (libvat's contract), and the C call releases the GIL,
so ``score_many`` spreads a batch over a thread pool.  ``close`` waits for
the calls in flight and then frees the handle; a call after ``close``
raises VatError instead of touching freed memory.
"""
import ctypes
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from . import _lib
from ._lib import UnknownTaskError, VatError

_MODES = {"raw": 0, "auto": 1}  # enum vat_extract_mode of include/libvat.h
# Verdict codes that blame the checker or the corpus, not the model.
CHECKER_ERRORS = frozenset(("internal", "tampered", "checker_limit"))


@dataclass(frozen=True, slots=True)
class Verdict:
    """The verdict on one completion.

    gate_passed -- the answer had the required shape
    score       -- 0.0 .. 1.0 (the reward)
    code        -- the stable verdict code ("ok", "shape", "wrong_value", ...)
    reason      -- one human-readable line
    extracted   -- the answer the checker saw, after extraction
    extract_rule -- which rule produced it: "raw", "answer_tag", "fence",
                   "boxed", "answer_line", "sentence", "sql_tail",
                   "last_line", "whole" or "none" (docs/extraction.md)
    is_trap     -- the answer is the task's trap (the plausible mistake)
    work        -- the work an SQL check spent, in the steps of its budget
                   (0 for other checkers); the same for the same answer
    """

    task_id: str
    gate_passed: bool
    score: float
    code: str
    reason: str
    extracted: str
    extract_rule: str
    is_trap: bool
    work: int = 0


def _mode(extract):
    try:
        return _MODES[extract]
    except (KeyError, TypeError):
        raise ValueError(f"extract must be 'auto' or 'raw', not {extract!r}") from None


def _bytes(completion):
    if isinstance(completion, str):
        # never raises: a lone surrogate becomes '?' and scores as text
        return completion.encode("utf-8", "replace")
    if isinstance(completion, (bytes, bytearray, memoryview)):
        return bytes(completion)
    raise TypeError(f"a completion is str or bytes, not {type(completion).__name__}")


def _task_bytes(task_id):
    """The id as libvat reads it, or None when libvat would read another id
    (a NUL byte cuts a C string; a lone surrogate has no UTF-8): no task has
    such an id."""
    if isinstance(task_id, str):
        if "\0" in task_id:
            return None
        try:
            return task_id.encode("utf-8")
        except UnicodeEncodeError:
            return None
    if isinstance(task_id, bytes):
        return None if b"\0" in task_id else task_id
    raise TypeError(f"a task id is str, not {type(task_id).__name__}")


def _shown(task_id):
    """A task id for a message: control characters and what UTF-8 cannot
    hold escaped, and cut to 100 characters."""
    if isinstance(task_id, bytes):
        task_id = task_id.decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in task_id[:100])


def _text(ptr):
    return ptr.decode("utf-8", "replace") if ptr is not None else ""


class Corpus:
    """A corpus built by ``vat build --root ROOT``, opened for scoring.

    >>> with vat.Corpus("/data/corpus") as corpus:
    ...     v = corpus.score("grouped_sum-00007", completion)
    ...     v.score, v.code, v.extract_rule

    A reason never quotes a held-out case (a regex task's held-out strings,
    an SQL task's variant fixtures): it names the case by number and says
    how the answer failed, so feeding reasons back to a model cannot teach
    it the hidden tests.  ``reveal_hidden=True`` quotes them in full, for a
    dataset author.

    cache_bytes is the byte budget of everything the handle keeps between
    scores (each task's checker, SQL fixtures and pooled sandboxes,
    compiled regexes, its vat.Env episodes' environment, the verdict memo),
    least recently used first out: None takes the environment variable
    VAT_CACHE_BYTES, else 256 MiB (include/libvat.h).  A task let go is
    built again when next scored or reset, with the same verdicts and
    observations.
    """

    def __init__(self, root, cache_bytes=None, reveal_hidden=False):
        self._lib = _lib.load()
        self.root = os.fspath(root)
        self.reveal_hidden = bool(reveal_hidden)
        if cache_bytes is not None and (
            isinstance(cache_bytes, bool) or not isinstance(cache_bytes, int) or cache_bytes <= 0
        ):
            raise ValueError(f"cache_bytes must be a positive number of bytes, not {cache_bytes!r}")
        flags = _lib.OPEN_REVEAL_HIDDEN if self.reveal_hidden else 0
        opts = _lib._OpenOptions(ctypes.sizeof(_lib._OpenOptions), cache_bytes or 0, flags)
        handle = ctypes.c_void_p()
        err = _lib._Error()
        if self._lib.vat_corpus_open_opts(
            ctypes.byref(handle), os.fsencode(self.root), ctypes.byref(opts), ctypes.byref(err)
        ) != 0:
            raise VatError(_text(err.message) or f"cannot open corpus {self.root}")
        self._handle = handle
        # Calls in flight, one list item each, so that close() can wait for
        # them (libvat: close must not race with score).  list.append and
        # list.pop are atomic, so the hot path takes no lock: a call appends
        # and then checks _closed; close sets _closed and then waits for the
        # list to empty, so one of the two always sees the other.
        self._calls = []
        self._closed = False
        self._close_lock = threading.Lock()
        lib = self._lib
        # The hot path's C functions, looked up once.
        self._c_score = lib.vat_corpus_score
        self._c_free = lib.vat_result_free
        self._c_value = lib.vat_result_score
        self._c_fields = (
            lib.vat_result_gate_passed, lib.vat_result_code, lib.vat_result_reason,
            lib.vat_result_extracted, lib.vat_result_extract_rule, lib.vat_result_is_trap,
            lib.vat_result_work,
        )

    # ---- the handle's life ----------------------------------------------

    def close(self):
        """Frees the corpus once the calls in flight have returned."""
        lock = getattr(self, "_close_lock", None)
        if lock is None:
            return
        with lock:
            if self._closed:
                return
            self._closed = True
            while self._calls:
                time.sleep(0.0005)
            self._lib.vat_corpus_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _acquire(self):
        self._calls.append(None)
        if self._closed:
            self._calls.pop()
            raise VatError("the corpus is closed")
        return self._handle

    def _release(self):
        self._calls.pop()

    # ---- queries ------------------------------------------------------------

    @property
    def cache_bytes(self):
        """The byte budget of the handle's cache."""
        h = self._acquire()
        try:
            return int(self._lib.vat_corpus_cache_budget(h))
        finally:
            self._release()

    def __len__(self):
        h = self._acquire()
        try:
            return int(self._lib.vat_corpus_size(h))
        finally:
            self._release()

    def __contains__(self, task_id):
        tid = _task_bytes(task_id)
        h = self._acquire()
        try:
            return tid is not None and bool(self._lib.vat_corpus_has_task(h, tid))
        finally:
            self._release()

    def _result(self, h, task_id, completion, mode):
        """Scores one completion; returns a vat_result pointer (caller frees)."""
        tid = _task_bytes(task_id)
        if tid is None:
            raise UnknownTaskError(f"vat: no task '{_shown(task_id)}' in the corpus at '{self.root}'")
        text = completion.encode("utf-8", "replace") if type(completion) is str else _bytes(completion)
        res = ctypes.c_void_p()
        # err is NULL on the way in (a 512-byte buffer per call costs more
        # than the check); a failed call is asked again for its message.
        if self._c_score(h, tid, text, len(text), mode, ctypes.byref(res), None) != 0:
            err = _lib._Error()
            self._c_score(h, tid, text, len(text), mode, ctypes.byref(res), ctypes.byref(err))
            msg = _text(err.message) or "vat_corpus_score failed"
            if not self._lib.vat_corpus_has_task(h, tid):
                raise UnknownTaskError(msg)
            raise VatError(msg)
        return res

    def _verdict(self, h, task_id, completion, mode):
        res = self._result(h, task_id, completion, mode)
        gate, code, reason, extracted, rule, trap, work = self._c_fields
        try:
            n = ctypes.c_size_t()
            ptr = extracted(res, ctypes.byref(n))
            return Verdict(
                task_id if type(task_id) is str else _text(task_id),
                gate(res) == 1,
                self._c_value(res),
                (code(res) or b"").decode(),  # codes and rules are ASCII names
                _text(reason(res)),
                ctypes.string_at(ptr, n.value).decode("utf-8", "replace") if ptr else "",
                (rule(res) or b"").decode(),
                trap(res) == 1,
                work(res),
            )
        finally:
            self._c_free(res)

    def _reward(self, h, task_id, completion, mode):
        """The score alone: three C calls instead of nine (the RL hot path)."""
        res = self._result(h, task_id, completion, mode)
        try:
            return self._c_value(res)
        finally:
            self._c_free(res)

    def _brief(self, h, task_id, completion, mode):
        """(score, code, gate_passed, is_trap, extract_rule, reason): what the
        reward functions report; the reason only for a verdict that blames
        the checker or the corpus (CHECKER_ERRORS), else None."""
        res = self._result(h, task_id, completion, mode)
        gate, code, reason, _, rule, trap, _ = self._c_fields
        try:
            c = (code(res) or b"").decode()
            return (
                self._c_value(res), c, gate(res) == 1, trap(res) == 1,
                (rule(res) or b"").decode(),
                _text(reason(res)) if c in CHECKER_ERRORS else None,
            )
        finally:
            self._c_free(res)

    def score(self, task_id, completion, extract="auto"):
        """The Verdict on one completion (str or bytes) for task_id.

        extract is "auto" (take the answer out of a chat completion) or "raw"
        (the completion is the answer); see docs/extraction.md.  Raises
        UnknownTaskError for a task id the corpus does not have; a wrong,
        hostile or unparsable completion is never an exception: it gets a
        verdict with score 0 and a code saying why."""
        mode = _MODES.get(extract) if type(extract) is str else None
        if mode is None:
            mode = _mode(extract)
        h = self._acquire()
        try:
            return self._verdict(h, task_id, completion, mode)
        finally:
            self._release()

    def _many(self, one, task_ids, completions, workers, extract):
        if isinstance(task_ids, (str, bytes)):
            raise TypeError("task_ids is a list of task ids, one per completion")
        task_ids, completions = list(task_ids), list(completions)
        if len(task_ids) != len(completions):
            raise ValueError(f"{len(task_ids)} task ids for {len(completions)} completions")
        mode = _mode(extract)
        n = len(completions)
        if workers is None:
            workers = os.cpu_count() or 1
        workers = max(1, min(int(workers), n))
        h = self._acquire()
        try:
            if workers == 1:
                return [one(h, t, c, mode) for t, c in zip(task_ids, completions)]

            # One contiguous chunk per thread: a task per completion would
            # cost more in the pool than the check itself.
            def chunk(k):
                lo, hi = k * n // workers, (k + 1) * n // workers
                return [one(h, task_ids[i], completions[i], mode) for i in range(lo, hi)]

            with ThreadPoolExecutor(max_workers=workers) as pool:
                parts = list(pool.map(chunk, range(workers)))
            return [v for part in parts for v in part]
        finally:
            self._release()

    def score_many(self, task_ids, completions, workers=None, extract="auto", k=None):
        """Verdicts for completions[i] on task_ids[i], in order, scored by
        `workers` threads (default: the machine's core count).

        With k (an int or a list of ints), several completions per task are
        samples of it, and a ScoreReport comes back instead: the verdicts,
        and the unbiased pass@k for each k per template and in total
        (vat.pass_at_k averaged over the tasks with at least k samples;
        tasks with fewer are left out of that k and counted in short)."""
        if k is None:
            return self._many(self._verdict, task_ids, completions, workers, extract)
        ks = _ks(k)
        verdicts = self._many(self._verdict, task_ids, completions, workers, extract)
        return ScoreReport.of(verdicts, ks)

    def rewards(self, task_ids, completions, workers=1, extract="auto"):
        """The scores alone (floats), in order: what an RL loop needs."""
        return self._many(self._reward, task_ids, completions, workers, extract)


def _ks(k):
    ks = [k] if isinstance(k, int) else list(k)
    if not ks or any(isinstance(x, bool) or not isinstance(x, int) or x < 1 for x in ks):
        raise ValueError(f"k must be a positive int or a list of them, not {k!r}")
    return sorted(set(ks))


def template_of(task_id):
    """The template a task id names ("grouped_sum-00007" -> "grouped_sum")."""
    return task_id.rsplit("-", 1)[0]


@dataclass(frozen=True)
class ScoreReport:
    """What score_many(..., k=...) returns.

    verdicts  -- the Verdict of every completion, in order
    k         -- the k asked for, ascending
    pass_at_k -- {"total": {k: value}, template: {k: value}, ...}: the mean
                 over tasks of vat.pass_at_k(n, c, k), n a task's samples and
                 c those scoring 1.0; None where no task has k samples
    tasks     -- the same keys: {k: tasks counted for that k}
    short     -- the same keys: {k: tasks left out, having fewer than k samples}
    checker_errors -- verdicts left out of every figure (internal, tampered,
                 checker_limit: the checker or the corpus failed, not the model)
    """

    verdicts: list
    k: list
    pass_at_k: dict
    tasks: dict
    short: dict
    checker_errors: int

    @classmethod
    def of(cls, verdicts, ks):
        per_task = {}
        errors = 0
        for v in verdicts:
            if v.code in CHECKER_ERRORS:
                errors += 1
                continue
            n_c = per_task.setdefault(v.task_id, [0, 0])
            n_c[0] += 1
            n_c[1] += v.gate_passed and v.score == 1.0
        groups = {"total": list(per_task.values())}
        for tid, n_c in per_task.items():
            groups.setdefault(template_of(tid), []).append(n_c)
        pass_at, tasks, short = {}, {}, {}
        for name in ["total"] + sorted(g for g in groups if g != "total"):
            pass_at[name], tasks[name], short[name] = {}, {}, {}
            for k in ks:
                counted = [(n, c) for n, c in groups[name] if n >= k]
                tasks[name][k] = len(counted)
                short[name][k] = len(groups[name]) - len(counted)
                pass_at[name][k] = (
                    sum(pass_at_k(n, c, k) for n, c in counted) / len(counted) if counted else None
                )
        return cls(verdicts, ks, pass_at, tasks, short, errors)


def pass_at_k(n, c, k):
    """The unbiased estimate of pass@k for one task: the chance that at
    least one of k samples drawn without replacement from n, c of them
    correct, is correct: 1 - C(n-c, k) / C(n, k) (Chen et al. 2021),
    computed as a product so large n stays exact enough."""
    for name, x in (("n", n), ("c", c), ("k", k)):
        if isinstance(x, bool) or not isinstance(x, int):
            raise TypeError(f"pass_at_k: {name} must be an int, not {type(x).__name__}")
    if not 0 <= c <= n:
        raise ValueError(f"pass_at_k: c must be between 0 and n ({n}), not {c}")
    if not 1 <= k <= n:
        raise ValueError(f"pass_at_k: k must be between 1 and n ({n}), not {k}")
    if n - c < k:
        return 1.0
    fail = 1.0
    for i in range(n - c + 1, n + 1):
        fail *= 1.0 - k / i
    return 1.0 - fail


def version():
    """The vat version libvat was built as ("0.2.0")."""
    return _text(_lib.load().vat_version())

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
    """

    def __init__(self, root, reveal_hidden=False):
        self._lib = _lib.load()
        self.root = os.fspath(root)
        self.reveal_hidden = bool(reveal_hidden)
        handle = ctypes.c_void_p()
        err = _lib._Error()
        flags = _lib.OPEN_REVEAL_HIDDEN if self.reveal_hidden else 0
        if self._lib.vat_corpus_open_flags(ctypes.byref(handle), os.fsencode(self.root), flags,
                                           ctypes.byref(err)) != 0:
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

    def score_many(self, task_ids, completions, workers=None, extract="auto"):
        """Verdicts for completions[i] on task_ids[i], in order, scored by
        `workers` threads (default: the machine's core count)."""
        return self._many(self._verdict, task_ids, completions, workers, extract)

    def rewards(self, task_ids, completions, workers=1, extract="auto"):
        """The scores alone (floats), in order: what an RL loop needs."""
        return self._many(self._reward, task_ids, completions, workers, extract)


def version():
    """The vat version libvat was built as ("0.2.0")."""
    return _text(_lib.load().vat_version())

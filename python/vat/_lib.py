"""_lib.py -- finds libvat.so and declares every call of include/libvat.h.

Search order (the first that exists is loaded; see README.md):

1. the file named by the environment variable ``VAT_LIBRARY`` (when it is
   set, nothing else is tried: an explicit choice that fails is an error);
2. next to the package: ``libvat.so*`` in the ``vat/`` package directory
   (where the wheel, ``pip install ./python``, puts it), then in the
   directory that holds it;
3. in a source tree (``python/vat`` beside ``include/libvat.h``), the
   default build directory ``build/`` (what ``make build`` writes);
4. the installed location: ``lib/``, ``lib64/`` and ``lib/<multiarch>/``
   under each directory above the package, nearest first (so
   ``PREFIX/share/vat/python/vat``, where ``make install`` puts the package,
   finds ``PREFIX/lib``, as does ``PREFIX/lib/python3/dist-packages/vat``), then
   whatever the dynamic loader finds by name (``LD_LIBRARY_PATH``, the
   ldconfig cache).

The library is loaded once, on first use, so ``import vat`` works (and
``help(vat)`` reads) without it.
"""
import ctypes
import ctypes.util
import glob
import os
import sysconfig
import threading

# The API version of include/libvat.h this package was written against.
API_VERSION = 2


class VatError(Exception):
    """A call of libvat that could not run (the library, a corpus, a task id)."""


class UnknownTaskError(VatError, KeyError):
    """The corpus has no task of that id."""

    def __str__(self):  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class CorpusFaultError(VatError):
    """A verdict that blames the corpus, not the model (code "internal" or
    "tampered": a fixture missing, changed or a Git LFS pointer, a checker
    spec that cannot be read).  Raised by the reward functions so that
    training does not go on against a broken corpus."""

    def __init__(self, task_id, code, reason):
        super().__init__(f"vat: task '{task_id}': {code}: {reason}")
        self.task_id, self.code, self.reason = task_id, code, reason


class _Error(ctypes.Structure):
    # typedef struct vat_error { char message[512]; } vat_error;
    _fields_ = [("message", ctypes.c_char * 512)]


class _OpenOptions(ctypes.Structure):
    # typedef struct vat_open_options { size_t size; size_t cache_bytes; unsigned flags; }
    # (members are only ever appended; size is sizeof(_OpenOptions), so a newer
    # library reads no member this package does not know)
    _fields_ = [("size", ctypes.c_size_t), ("cache_bytes", ctypes.c_size_t),
                ("flags", ctypes.c_uint)]


_lock = threading.Lock()
_lib = None


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    above = os.path.dirname(here)
    dirs = [here, above]  # next to the package
    # a source tree (python/vat beside include/libvat.h): its default build/
    src = os.path.dirname(above)
    if os.path.isfile(os.path.join(src, "include", "libvat.h")):
        dirs.append(os.path.join(src, "build"))
    # installed: lib/, lib64/, lib/<multiarch>/ under each directory above the
    # package, nearest first (PREFIX/lib/python3/dist-packages/vat -> PREFIX/lib)
    multiarch = sysconfig.get_config_var("MULTIARCH")
    d = above
    for _ in range(6):
        for sub in ["lib", "lib64"] + ([os.path.join("lib", multiarch)] if multiarch else []):
            dirs.append(os.path.join(d, sub))
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for d in dirs:
        exact = os.path.join(d, "libvat.so")
        if os.path.isfile(exact):
            yield exact
        # versioned names, newest first (libvat.so.1 before libvat.so.0)
        for p in sorted(glob.glob(os.path.join(d, "libvat.so.*")), reverse=True):
            if os.path.isfile(p):
                yield p
    # the dynamic loader's own search (LD_LIBRARY_PATH, the ldconfig cache)
    found = ctypes.util.find_library("vat")
    if found:
        yield found
    yield "libvat.so"
    yield "libvat.so.0"


c_void_p, c_char_p, c_int, c_size_t = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t
err_p = ctypes.POINTER(_Error)

# #define VAT_OPEN_REVEAL_HIDDEN 1u (include/libvat.h)
OPEN_REVEAL_HIDDEN = 1

# Every call of include/libvat.h: name -> (argtypes, restype).
PROTOTYPES = {
    # const char *vat_version(void);
    "vat_version": ([], c_char_p),
    # int vat_init(void);
    "vat_init": ([], c_int),
    # int vat_sqlite_counting(void);
    "vat_sqlite_counting": ([], c_int),
    # int vat_corpus_open(vat_corpus **out, const char *root, vat_error *err);
    "vat_corpus_open": ([ctypes.POINTER(c_void_p), c_char_p, err_p], c_int),
    # int vat_corpus_open_flags(vat_corpus **out, const char *root, unsigned flags,
    #                           vat_error *err);
    "vat_corpus_open_flags": ([ctypes.POINTER(c_void_p), c_char_p, ctypes.c_uint, err_p], c_int),
    # int vat_corpus_open_opts(vat_corpus **out, const char *root,
    #                          const vat_open_options *opts, vat_error *err);
    "vat_corpus_open_opts": (
        [ctypes.POINTER(c_void_p), c_char_p, ctypes.POINTER(_OpenOptions), err_p], c_int,
    ),
    # size_t vat_corpus_cache_budget(const vat_corpus *c);
    "vat_corpus_cache_budget": ([c_void_p], c_size_t),
    # void vat_corpus_close(vat_corpus *c);
    "vat_corpus_close": ([c_void_p], None),
    # size_t vat_corpus_size(const vat_corpus *c);
    "vat_corpus_size": ([c_void_p], c_size_t),
    # int vat_corpus_has_task(const vat_corpus *c, const char *task_id);
    "vat_corpus_has_task": ([c_void_p, c_char_p], c_int),
    # int vat_corpus_score(vat_corpus *c, const char *task_id, const char *completion,
    #                      size_t len, vat_extract_mode mode, vat_result **out, vat_error *err);
    "vat_corpus_score": (
        [c_void_p, c_char_p, c_char_p, c_size_t, c_int, ctypes.POINTER(c_void_p), err_p],
        c_int,
    ),
    # int vat_result_gate_passed(const vat_result *r);
    "vat_result_gate_passed": ([c_void_p], c_int),
    # double vat_result_score(const vat_result *r);
    "vat_result_score": ([c_void_p], ctypes.c_double),
    # const char *vat_result_code(const vat_result *r);
    "vat_result_code": ([c_void_p], c_char_p),
    # const char *vat_result_reason(const vat_result *r);
    "vat_result_reason": ([c_void_p], c_char_p),
    # const char *vat_result_extracted(const vat_result *r, size_t *len);
    # (c_void_p, not c_char_p: the text may hold NUL bytes, read with string_at)
    "vat_result_extracted": ([c_void_p, ctypes.POINTER(c_size_t)], c_void_p),
    # const char *vat_result_extract_rule(const vat_result *r);
    "vat_result_extract_rule": ([c_void_p], c_char_p),
    # int vat_result_is_trap(const vat_result *r);
    "vat_result_is_trap": ([c_void_p], c_int),
    # long long vat_result_work(const vat_result *r);
    "vat_result_work": ([c_void_p], ctypes.c_longlong),
    # void vat_result_free(vat_result *r);
    "vat_result_free": ([c_void_p], None),
    # int vat_episode_open(vat_corpus *c, const char *task_id, vat_episode **out, vat_error *err);
    "vat_episode_open": ([c_void_p, c_char_p, ctypes.POINTER(c_void_p), err_p], c_int),
    # void vat_episode_close(vat_episode *ep);
    "vat_episode_close": ([c_void_p], None),
    # const char *vat_episode_prompt(const vat_episode *ep);
    "vat_episode_prompt": ([c_void_p], c_char_p),
    # const char *vat_episode_tools(const vat_episode *ep);
    # (c_void_p: static text, read once per tool set by its address)
    "vat_episode_tools": ([c_void_p], c_void_p),
    # int vat_episode_step(vat_episode *ep, const char *tool, const char *arguments, size_t len,
    #                      vat_error *err);
    "vat_episode_step": ([c_void_p, c_char_p, c_char_p, c_size_t, err_p], c_int),
    # const char *vat_episode_observation(const vat_episode *ep, size_t *len);
    "vat_episode_observation": ([c_void_p, ctypes.POINTER(c_size_t)], c_void_p),
    # int vat_episode_done(const vat_episode *ep);
    "vat_episode_done": ([c_void_p], c_int),
    # double vat_episode_reward(const vat_episode *ep);
    "vat_episode_reward": ([c_void_p], ctypes.c_double),
    # const char *vat_episode_code(const vat_episode *ep);
    "vat_episode_code": ([c_void_p], c_char_p),
    # const char *vat_episode_reason(const vat_episode *ep);
    "vat_episode_reason": ([c_void_p], c_char_p),
    # int vat_episode_is_trap(const vat_episode *ep);
    "vat_episode_is_trap": ([c_void_p], c_int),
    # int vat_episode_calls(const vat_episode *ep);
    "vat_episode_calls": ([c_void_p], c_int),
    # const char *vat_tools_json(const char *tool_set);
    "vat_tools_json": ([c_char_p], c_char_p),
}


def _declare(lib):
    for name, (argtypes, restype) in PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = restype
    return lib


def load():
    """The loaded library (ctypes.CDLL: its calls release the GIL)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        explicit = os.environ.get("VAT_LIBRARY")
        tried = []
        for path in [explicit] if explicit else _candidates():
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"{path}: {e}")
                continue
            try:
                _lib = _declare(lib)
            except AttributeError as e:
                tried.append(f"{path}: not libvat ({e})")
                continue
            return _lib
        raise VatError(
            "cannot load libvat: tried " + "; ".join(tried)
            + ". Set VAT_LIBRARY to the path of libvat.so (README.md)."
        )

"""vat -- score model completions with vat's checkers, in-process.

A thin ctypes layer over libvat (include/libvat.h), standard library only::

    import vat
    with vat.Corpus("/data/corpus") as corpus:
        v = corpus.score("grouped_sum-00007", completion)   # extract="auto"
        print(v.score, v.code, v.extract_rule, v.extracted)
        verdicts = corpus.score_many(task_ids, completions, workers=8)

    reward_funcs = [vat.rewards.trl("/data/corpus")]        # TRL GRPOTrainer

libvat.so is found through VAT_LIBRARY, next to the package, or where it is
installed (vat/_lib.py gives the order).  Extraction: docs/extraction.md.
"""
from . import rewards
from ._lib import UnknownTaskError, VatError
from .corpus import Corpus, Verdict, version

__all__ = ["Corpus", "Verdict", "VatError", "UnknownTaskError", "version", "rewards"]

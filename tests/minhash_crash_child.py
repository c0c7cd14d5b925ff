"""Child process of the MinHash crash harness (``tests/test_minhash_crash.py``); also its schedule.

Run as ``python minhash_crash_child.py BACKEND META PROGRESS``: it opens ``StateTracker(META)`` and
an attached ``MinHashDeduplicator`` (its index lives in ``META.minhash``), resumes after the
committed batch and then processes batches forever, until the parent SIGKILLs it. Batch ``k`` is
a pure function of ``k`` (:func:`batch_documents`): short documents drawn from a pool of bases,
most of them lightly edited copies, so near-duplicates occur inside and across batches. After
each commit the child appends ``"k epoch"`` to PROGRESS and fsyncs it: every line there is
certainly committed; the commit after the last line may or may not have landed.

Imported by the parent for the schedule only; nothing runs on import.
"""

from __future__ import annotations

import os
import random
import sys
import time

__all__ = ["batch_documents", "committed_batch", "is_rolled_back"]

BASES = 400  # distinct base documents
ROLLBACK_MODULUS = 5  # batch k with k % 5 == 3 is staged, then rolled back
MAX_RUNTIME_S = 60.0  # a child the parent forgot to kill stops by itself (and fails the test)
_WORDS = [f"{w}{i}" for i in range(60) for w in ("alpha", "beta", "gamma", "delta", "émile")]


def base_document(i: int) -> list[str]:
    rng = random.Random(i * 7919 + 17)
    return [rng.choice(_WORDS) for _ in range(rng.randint(25, 45))]


def batch_documents(k: int) -> list[str | bytes]:
    """Batch ``k``: 8-24 documents; a third unedited bases, the rest one- or two-word edits."""
    rng = random.Random(k * 1_000_003 + 0x5EED)
    out: list[str | bytes] = []
    for _ in range(rng.randint(8, 24)):
        words = base_document(rng.randrange(BASES))
        for _ in range(rng.choice([0, 0, 1, 2])):
            words[rng.randrange(len(words))] = rng.choice(_WORDS)
        text = " ".join(words)
        out.append(text.encode("utf-8") if rng.random() < 0.25 else text)
    return out


def is_rolled_back(k: int) -> bool:
    return k % ROLLBACK_MODULUS == 3


def committed_batch(epoch: int) -> int:
    """The batch id committed at ``epoch`` (1-based): the epoch-th batch not rolled back."""
    full, rest = divmod(epoch - 1, ROLLBACK_MODULUS - 1)
    residues = [r for r in range(ROLLBACK_MODULUS) if not is_rolled_back(r)]
    return full * ROLLBACK_MODULUS + residues[rest]


def _run(backend: str, meta: str, progress: str) -> int:
    import luminamoon.data as lmd

    if backend != lmd.BACKEND:
        print(f"child: wanted backend {backend!r}, got {lmd.BACKEND!r}", file=sys.stderr)
        return 2
    sys.stdout.write("ready\n")
    sys.stdout.flush()

    tracker = lmd.StateTracker(meta)
    dedup = lmd.MinHashDeduplicator(tracker)
    epoch = tracker.epoch
    k = tracker.committed_batch_id + 1 if epoch > 0 else 0
    deadline = time.monotonic() + MAX_RUNTIME_S
    with open(progress, "a", encoding="ascii") as out:
        while time.monotonic() < deadline:
            docs = batch_documents(k)
            if k % 4 == 1:
                for doc in docs:  # the per-document path stages exactly like filter_batch
                    dedup.is_unique(doc)
            else:
                dedup.filter_batch(docs)
            tracker.update(k, lmd.StreamCoordinate(byte_offset=k))
            if is_rolled_back(k):
                (dedup if k % 2 else tracker).rollback()
            else:
                if k % 3 == 0:
                    dedup.commit()
                    epoch += 1
                else:
                    epoch = tracker.commit()
                if epoch != tracker.epoch:
                    print(f"child: epoch {epoch} != {tracker.epoch}", file=sys.stderr)
                    return 2
                out.write(f"{k} {epoch}\n")
                out.flush()
                os.fsync(out.fileno())
            k += 1
    print("child: ran out of time without being killed", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(_run(*sys.argv[1:4]))

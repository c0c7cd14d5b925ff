"""Child process of the crash harness (``tests/test_crash_safety.py``); also its schedule.

Run as ``python crash_child.py BACKEND META PROGRESS``: it opens ``StateTracker(META)`` plus an
attached ``StreamDeduplicator``, resumes from the committed state and then processes batches
forever (until the parent SIGKILLs it). Batch ``k`` is a pure function of ``k``
(:func:`batch_documents`), so the parent can recompute exactly what every commit contained.
After each commit the child appends ``"k epoch"`` to PROGRESS and fsyncs it: every line there is
certainly committed; the commit after the last line may or may not have landed.

Imported by the parent for the schedule only; nothing runs on import.
"""

from __future__ import annotations

import os
import random
import sys
import time

__all__ = [
    "HOT_DOCUMENTS",
    "VOCABULARY",
    "batch_documents",
    "committed_batch",
    "coordinate_fields",
    "document",
    "is_rolled_back",
]

VOCABULARY = 100_000  # distinct documents overall
HOT_DOCUMENTS = 23  # a small hot set: many duplicates inside and across batches
ROLLBACK_MODULUS = 5  # batch k with k % 5 == 3 is staged, then rolled back
MAX_RUNTIME_S = 60.0  # a child the parent forgot to kill stops by itself (and fails the test)

_SAMPLES = ("plain ascii", "héllo wörld", "日本語のテキスト", "emoji 🙂🚀", "tab\tand\nnewline", "")


def document(i: int) -> str:
    """Document ``i`` of the vocabulary (non-ASCII and near-empty ones included)."""
    sample = _SAMPLES[i % len(_SAMPLES)]
    if i % 1000 == 0:
        return sample  # a few documents are exactly the samples, "" among them
    return f"{sample} #{i}"


def batch_documents(k: int) -> list[str | bytes]:
    """Batch ``k``: 50-200 documents, a mix of ``str`` and the same text as UTF-8 ``bytes``."""
    rng = random.Random(k * 1_000_003 + 0x5EED)
    out: list[str | bytes] = []
    for _ in range(rng.randint(50, 200)):
        i = rng.randrange(HOT_DOCUMENTS) if rng.random() < 0.4 else rng.randrange(VOCABULARY)
        text = document(i)
        out.append(text.encode("utf-8") if rng.random() < 0.25 else text)
    return out


def is_rolled_back(k: int) -> bool:
    """Whether batch ``k`` is rolled back instead of committed (deterministic in ``k``)."""
    return k % ROLLBACK_MODULUS == 3


def committed_batch(epoch: int) -> int:
    """The batch id committed at ``epoch`` (1-based): the epoch-th batch not rolled back."""
    # Per ROLLBACK_MODULUS batches, exactly one is rolled back (residue 3).
    full, rest = divmod(epoch - 1, ROLLBACK_MODULUS - 1)
    residues = [r for r in range(ROLLBACK_MODULUS) if not is_rolled_back(r)]
    return full * ROLLBACK_MODULUS + residues[rest]


def coordinate_fields(k: int, rows_through_k: int) -> dict[str, int]:
    """The coordinate committed with batch ``k``; ``rows_through_k`` = documents in 0..k."""
    return {"shard_id": k % 7, "byte_offset": k * 1000, "global_row_idx": rows_through_k}


def _run(backend: str, meta: str, progress: str) -> int:
    import luminamoon.data as lmd

    if backend != lmd.BACKEND:
        print(f"crash_child: wanted backend {backend!r}, got {lmd.BACKEND!r}", file=sys.stderr)
        return 2
    # Tell the parent the interpreter is up; the kill delay of most runs starts here, so that
    # kills land while opening the state as well as in the commit loop.
    sys.stdout.write("ready\n")
    sys.stdout.flush()

    tracker = lmd.StateTracker(meta)
    dedup = lmd.StreamDeduplicator(tracker)
    epoch = tracker.epoch
    k = tracker.committed_batch_id + 1 if epoch > 0 else 0
    rows = tracker.coordinate.global_row_idx
    deadline = time.monotonic() + MAX_RUNTIME_S
    with open(progress, "a", encoding="ascii") as out:
        while time.monotonic() < deadline:
            docs = batch_documents(k)
            rows += len(docs)
            if k % 4 == 1:
                for doc in docs:  # the per-document path stages exactly like filter_batch
                    dedup.is_unique(doc)
            else:
                dedup.filter_batch(docs)
            tracker.update(k, lmd.StreamCoordinate(**coordinate_fields(k, rows)))
            if is_rolled_back(k):
                (dedup if k % 2 else tracker).rollback()
            else:
                if k % 3 == 0:
                    dedup.commit()
                    epoch += 1
                else:
                    epoch = tracker.commit()
                if epoch != tracker.epoch:
                    print(f"crash_child: epoch {epoch} != {tracker.epoch}", file=sys.stderr)
                    return 2
                out.write(f"{k} {epoch}\n")
                out.flush()
                os.fsync(out.fileno())
            k += 1
    print("crash_child: ran out of time without being killed", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(_run(*sys.argv[1:4]))

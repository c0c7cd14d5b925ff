"""Threaded driver of the native commit path, run under ThreadSanitizer by scripts/test.sh.

Not a pytest file: scripts/test.sh builds the native module with LUMINAMOON_SANITIZE_THREAD=ON,
preloads the TSan runtime into this interpreter and runs it; a data race in the module makes
TSan exit with its error code. It drives what issue 13 found through the Python API: four
threads staging (StreamDeduplicator and MinHashDeduplicator filter_batch, is_unique, contains,
has_pending) while one thread updates, commits and rolls back, then checks that RAM, the slot and
the files agree and that a reopen sees every committed document; then two threads' filter_batch
and clean_batch encoding strs that are not ASCII on the worker pool.

    python tests/tsan_driver.py DIRECTORY   # the module is imported as luminamoon.data._native
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from luminamoon.data import _native as native

WORKERS = 4
BATCHES = 30
BATCH = 20


def document(worker: int, batch: int, i: int) -> str:
    return " ".join(f"w{worker}_{batch}_{i}_{k}" for k in range(12))


def main(directory: Path) -> int:
    # The instrumented module from DIRECTORY, not an installed one.
    if not Path(native.__file__).resolve().is_relative_to(directory.resolve()):
        print(f"tsan_driver: imported {native.__file__}, not the one in {directory}")
        return 1
    meta = directory / "tsan.meta"
    total = WORKERS * BATCHES * BATCH
    with native.StateTracker(meta, durable=False) as tracker:
        dedup = native.StreamDeduplicator(tracker, threads=2)
        index = native.MinHashDeduplicator(tracker, num_perm=16, threads=2)
        stop = threading.Event()
        failures: list[BaseException] = []

        def committer() -> None:
            batch = 0
            try:
                while not stop.is_set():
                    batch += 1
                    tracker.update(batch, native.StreamCoordinate(global_row_idx=batch))
                    tracker.commit()
            except BaseException as exc:
                failures.append(exc)

        def worker(w: int) -> None:
            try:
                for b in range(BATCHES):
                    docs = [document(w, b, i) for i in range(BATCH)]
                    dedup.filter_batch(docs)
                    index.filter_batch(docs)
                    dedup.contains(docs[0])
                    index.is_unique(docs[0])
                    _ = tracker.has_pending
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(WORKERS)]
        c = threading.Thread(target=committer)
        c.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        c.join()
        if failures:
            print(f"tsan_driver: a thread raised {failures[0]!r}", file=sys.stderr)
            return 1
        tracker.commit()
        state = (dedup.committed_count, tracker.dedup_count, os.path.getsize(f"{meta}.dedup") // 8)
        kept = index.committed_count

    if state != (total, total, total):
        print(
            f"tsan_driver: committed/dedup_count/WAL = {state}, expected {total}", file=sys.stderr
        )
        return 1
    with native.StateTracker(meta, durable=False) as reopened:
        again = native.MinHashDeduplicator(reopened, num_perm=16)
        if again.committed_count != kept:
            print(f"tsan_driver: index reopened with {again.committed_count} != {kept}")
            return 1
    if not encode_on_the_pool():
        return 1
    print(f"tsan_driver: {total} documents, {kept} indexed, no race reported")
    return 0


def encode_on_the_pool() -> bool:
    """Two threads' filter_batch and clean_batch (threads=2) on batches of strs that are not
    ASCII, large enough (~4 MB) for their encoding (and hashing) to be spread over the pool's
    workers."""
    docs = [f"{i} caf\u00e9 \u20ac {'x' * 20} " * 300 for i in range(500)]
    expected = native.StreamDeduplicator(threads=1).filter_batch(docs)
    cleaned = native.TextCleaner(threads=1).clean_batch(docs)
    results: list[list[bool]] = []

    def run() -> None:
        for _ in range(2):
            results.append(native.StreamDeduplicator(threads=2).filter_batch(docs))
            # (the other stages encode into arena blocks per worker)
            if native.TextCleaner(threads=2).clean_batch(docs) != cleaned:
                results.append([])

    callers = [threading.Thread(target=run) for _ in range(2)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    if len(results) != 4 or any(r != expected for r in results):
        print("tsan_driver: filter_batch on the pool disagreed with threads=1", file=sys.stderr)
        return False
    return True


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))

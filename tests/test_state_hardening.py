"""State-layer hardening (issue 13): concurrency during commit, copies, path and file-type checks,
one wording for corruption on both backends, argument errors that name the parameter.

Tests that compare the backends import both modules; the others use the public API, so the
suite's two runs cover each backend. Crash and corruption scenarios of the same issue live in
the crash harnesses (tests/test_crash_safety.py, tests/test_minhash_crash.py).
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import pickle
import random
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import luminamoon.data as lmd
from luminamoon.data.errors import CorruptCheckpointError, LuminaMoonError

F = importlib.import_module("luminamoon.data.fallbacks")
try:
    N: ModuleType | None = importlib.import_module("luminamoon.data._native")
except ImportError:
    N = None
needs_native = pytest.mark.skipif(N is None, reason="luminamoon.data._native is not built")


def both(fn: Callable[[ModuleType], Any]) -> tuple[Any, Any]:
    """``fn`` on each backend: ("ok", value) or (exception class name, message)."""

    def run(mod: ModuleType) -> Any:
        try:
            return ("ok", fn(mod))
        except Exception as exc:  # the class and the message are what is compared
            return (type(exc).__name__, str(exc))

    assert N is not None
    return run(N), run(F)


def words(rng: random.Random, n: int) -> str:
    return " ".join(f"w{rng.randrange(1_000_000)}" for _ in range(n))


# -- items 2 and 3: filter_batch on other threads while commit() runs ------------------------


def _hammer(
    commit_and_update: Callable[[int], None],
    stage: Callable[[list[str]], None],
    docs: list[list[str]],
) -> None:
    """Stage ``docs[t]`` on thread t in small batches while one thread commits in a loop."""
    stop = threading.Event()
    errors: list[BaseException] = []

    def committer() -> None:
        batch = 0
        try:
            while not stop.is_set():
                batch += 1
                commit_and_update(batch)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    def worker(mine: list[str]) -> None:
        try:
            for i in range(0, len(mine), 50):
                stage(mine[i : i + 50])
        except BaseException as exc:
            errors.append(exc)

    c = threading.Thread(target=committer)
    c.start()
    workers = [threading.Thread(target=worker, args=(d,)) for d in docs]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    c.join()
    assert not errors, errors


def test_exact_commit_promotes_exactly_what_it_wrote(tmp_meta: Path) -> None:
    rng = random.Random(13)
    docs = [[f"doc {t} {i} {rng.random()}" for i in range(1500)] for t in range(4)]
    total = sum(len(d) for d in docs)
    with lmd.StateTracker(tmp_meta, durable=False) as tracker:
        dedup = lmd.StreamDeduplicator(tracker)

        def commit(batch: int) -> None:
            tracker.update(batch, lmd.StreamCoordinate(global_row_idx=batch))
            tracker.commit()

        _hammer(commit, dedup.filter_batch, docs)
        tracker.commit()
        # RAM, the slot and the WAL agree: nothing was promoted without being on disk.
        assert dedup.committed_count == tracker.dedup_count == total
        assert dedup.staged_count == 0
        assert Path(str(tmp_meta) + ".dedup").stat().st_size == 8 * total
        del dedup
    with lmd.StateTracker(tmp_meta, durable=False) as tracker:
        dedup = lmd.StreamDeduplicator(tracker)
        assert dedup.committed_count == total
        assert not any(dedup.filter_batch([d for mine in docs for d in mine]))
        del dedup


def test_minhash_commit_during_filter_batch_keeps_the_companion_sound(tmp_meta: Path) -> None:
    rng = random.Random(31)
    docs = [[words(rng, 30) for _ in range(120)] for _ in range(3)]
    with lmd.StateTracker(tmp_meta, durable=False) as tracker:
        index = lmd.MinHashDeduplicator(tracker, num_perm=32)
        _hammer(lambda _batch: tracker.commit(), index.filter_batch, docs)
        tracker.commit()
        kept = index.committed_count
        assert index.staged_count == 0
        del index
    with lmd.StateTracker(tmp_meta, durable=False) as tracker:
        index = lmd.MinHashDeduplicator(tracker, num_perm=32)  # raised CorruptCheckpointError
        assert index.committed_count == kept
        assert not any(index.filter_batch([d for mine in docs for d in mine]))
        del index


@needs_native
def test_concurrent_commits_give_the_same_files_on_both_backends(tmp_path: Path) -> None:
    """Parity under concurrency: thread interleavings differ, so compare what is order-free -
    the committed hash set of the WAL and the committed rows of the companion."""
    import struct

    rng = random.Random(7)
    docs = [[words(rng, 25) for _ in range(80)] for _ in range(3)]
    results = []
    for mod in (N, F):
        assert mod is not None
        meta = tmp_path / f"{mod.__name__.rsplit('.', 1)[-1]}.meta"
        with mod.StateTracker(meta, durable=False) as tracker:
            dedup = mod.StreamDeduplicator(tracker)
            index = mod.MinHashDeduplicator(tracker, num_perm=16)

            def stage(batch: list[str], dedup: Any = dedup, index: Any = index) -> None:
                dedup.filter_batch(batch)
                index.filter_batch(batch)

            _hammer(lambda _b, tracker=tracker: tracker.commit(), stage, docs)
            tracker.commit()
            del dedup, index
        wal = Path(str(meta) + ".dedup").read_bytes()
        hashes = sorted(struct.unpack(f"<{len(wal) // 8}Q", wal))
        with mod.StateTracker(meta, read_only=True) as reader:
            epoch = reader.epoch
        companion = str(meta) + ".minhash"
        with open(companion, "rb") as f:
            records = F.epoch_log.decode_epoch_log(f.read(), epoch, companion)[3]
        rows = sorted(row for r in records for row in F.minhash.decode_record(r, companion)[1])
        results.append((hashes, rows))
    assert results[0] == results[1]
    assert len(results[0][1]) == sum(len(d) for d in docs)


# -- item 4: copies and pickles are refused on both backends, class by class ------------------


def _stateful_objects(mod: ModuleType, tmp: Path) -> dict[str, Any]:
    shard = tmp / "s.jsonl"
    shard.write_text('{"text": "a"}\n')
    tracker = mod.StateTracker(tmp / f"{mod.__name__}.meta", durable=False)
    return {
        "StateTracker": tracker,
        "StreamDeduplicator (attached)": mod.StreamDeduplicator(tracker),
        "MinHashDeduplicator (attached)": mod.MinHashDeduplicator(tracker),
        "StreamDeduplicator": mod.StreamDeduplicator(),
        "MinHashDeduplicator": mod.MinHashDeduplicator(),
        "ShardReader": mod.ShardReader(str(shard)),
        "TextCleaner": mod.TextCleaner(),
        "PIIMasker": mod.PIIMasker(),
        "QualityFilter": mod.QualityFilter(),
    }


@needs_native
@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_stateful_objects_refuse_copies_on_both_backends(tmp_path: Path, how: str) -> None:
    op: Callable[[Any], Any] = {
        "copy": copy.copy,
        "deepcopy": copy.deepcopy,
        "pickle": pickle.dumps,
    }[how]
    assert N is not None
    native = _stateful_objects(N, tmp_path)
    fallback = _stateful_objects(F, tmp_path)
    for name in native:
        outcomes = []
        for obj in (native[name], fallback[name]):
            with pytest.raises(TypeError) as info:
                op(obj)
            # CPython words the native refusal itself: 3.12+ names the type with its module
            # ('luminamoon.data._native.StateTracker'), 3.11 and older do not.
            outcomes.append(str(info.value).replace("luminamoon.data._native.", ""))
        assert outcomes[0] == outcomes[1] == f"cannot pickle '{name.split()[0]}' object", name
    fallback["StateTracker"].close()
    native["StateTracker"].close()


def test_a_refused_copy_leaves_the_tracker_working(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta, durable=False) as tracker:
        dedup = lmd.StreamDeduplicator(tracker)
        for op in (copy.copy, copy.deepcopy, pickle.dumps):
            for obj in (tracker, dedup):
                with pytest.raises(TypeError):
                    op(obj)
        dedup.is_unique("x")
        assert tracker.commit() == 1
        del dedup


# -- items 6 and 7: FIFOs, devices and NUL bytes in paths ------------------------------------


def test_fifo_shard_is_an_issue_not_a_hang(tmp_path: Path, subprocess_env: dict[str, str]) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    good = tmp_path / "good.jsonl"
    good.write_text('{"text": "ok"}\n')
    code = (
        "import sys, luminamoon.data as lmd\n"
        "r = lmd.ShardReader(sys.argv[1:])\n"
        "texts = [t for b in r for t in b.texts]\n"
        "print(texts, [(e.kind, e.shard_id, e.message) for e in r.errors])\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(fifo), str(good)],
        env=subprocess_env,
        capture_output=True,
        text=True,
        timeout=60,  # the bug: open(2) of a FIFO without a writer blocked forever
        check=True,
    )
    assert "['ok']" in run.stdout
    assert "('unreadable_shard', 0, 'cannot read shard: not a regular file')" in run.stdout


def test_fifo_as_wal_and_device_as_meta_are_named(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta, durable=False) as tracker:
        dedup = lmd.StreamDeduplicator(tracker)
        dedup.is_unique("x")
        tracker.commit()
        del dedup
    wal = Path(str(tmp_meta) + ".dedup")
    wal.unlink()
    os.mkfifo(wal)
    for read_only in (True, False):
        with pytest.raises(
            CorruptCheckpointError, match=r"WAL \(\.dedup\) is a FIFO, not a regular"
        ):
            lmd.StateTracker(tmp_meta, read_only=read_only, durable=False)
    zero = tmp_meta.parent / "zero.meta"
    zero.symlink_to("/dev/zero")
    for read_only in (True, False):
        with pytest.raises(CorruptCheckpointError, match=r"is a character device, not a regular"):
            lmd.StateTracker(zero, read_only=read_only, durable=False)


@needs_native
@pytest.mark.parametrize(
    "make",
    [
        lambda m, d: m.StateTracker(str(d / "x\0y.meta")),
        lambda m, d: m.StateTracker(os.fsencode(d / "x\0y.meta")),
        lambda m, d: m.StateTracker(str(d / "x\0y.meta"), read_only=True),
        lambda m, d: m.ShardReader(str(d / "a\0b.jsonl")),
        lambda m, d: m.ShardReader([str(d / "ok.jsonl"), str(d / "a\0b.jsonl")]),
    ],
)
def test_nul_in_any_path_is_refused_on_both_backends(tmp_path: Path, make: Any) -> None:
    native, fallback = both(lambda m: make(m, tmp_path))
    assert native == fallback == ("ValueError", "embedded null byte")
    assert sorted(os.listdir(tmp_path)) == []  # nothing created or locked under the cut name


# -- minor items: one wording on both backends ------------------------------------------------


def _corruptions(tmp: Path) -> dict[str, Path]:
    """Damaged checkpoints, built once by the fallback (byte-identical to the native files)."""
    out = {}
    for name in ("both-slots", "size", "short-wal", "missing-wal", "wiped", "fifo-wal"):
        meta = tmp / name / "c.meta"
        meta.parent.mkdir()
        with F.StateTracker(meta, durable=False) as tracker:
            dedup = F.StreamDeduplicator(tracker)
            for k in range(3):
                dedup.filter_batch([f"d{k}", f"e{k}"])
                tracker.commit()
            del dedup
        wal = Path(str(meta) + ".dedup")
        if name == "both-slots":
            meta.write_bytes(b"\x01" * 128)
        elif name == "size":
            meta.write_bytes(meta.read_bytes() + b"\0")
        elif name == "short-wal":
            wal.write_bytes(wal.read_bytes()[:20])
        elif name == "missing-wal":
            wal.unlink()
        elif name == "wiped":
            meta.write_bytes(b"")
        elif name == "fifo-wal":
            wal.unlink()
            os.mkfifo(wal)
        out[name] = meta
    return out


@needs_native
@pytest.mark.parametrize("read_only", [False, True])
def test_corruption_messages_are_worded_alike(tmp_path: Path, read_only: bool) -> None:
    for name, meta in _corruptions(tmp_path).items():
        native, fallback = both(lambda m, meta=meta: m.StateTracker(meta, read_only=read_only))
        assert native[0] == "CorruptCheckpointError", (name, native)
        assert native == fallback, name


@needs_native
def test_argument_errors_name_the_parameter_on_both_backends(tmp_path: Path) -> None:
    meta = tmp_path / "t.meta"
    with N.StateTracker(meta, durable=False) as nt:  # type: ignore[union-attr]
        nt.update(5, N.StreamCoordinate())  # type: ignore[union-attr]
        nt.commit()
    cases: list[Callable[[ModuleType], Any]] = [
        lambda m: m.StateTracker(meta, durable="no"),
        lambda m: m.StateTracker(meta, read_only=1),
        lambda m: m.StateTracker(None),
        lambda m: m.StreamDeduplicator(5),
        lambda m: m.MinHashDeduplicator("tracker"),
        lambda m: m.ShardReader(str(meta), text_field=None),
        lambda m: m.ShardReader(str(meta), strict="yes"),
        lambda m: m.ShardReader(str(meta), start=3),
        lambda m: m.ShardReader([str(meta), 7]),
        lambda m: m.ShardReader(str(meta), batch_size=-1),
        lambda m: m.ShardReader(str(meta), batch_size=0),
        lambda m: m.ShardReader(str(meta), max_record_bytes=-1),
        lambda m: m.MinHashDeduplicator(bands=100),
        lambda m: m.MinHashDeduplicator(rows=100),
    ]
    for i, case in enumerate(cases):
        native, fallback = both(case)
        assert native == fallback, (i, native, fallback)
        assert native[0] in ("TypeError", "ValueError"), (i, native)
        assert "incompatible function arguments" not in native[1]

    def update(m: ModuleType, batch_id: Any, coordinate: Any) -> None:
        with m.StateTracker(meta, durable=False) as t:
            t.update(batch_id, coordinate)

    for args in ((1, None), (None, "coordinate"), (4, "StreamCoordinate")):
        native, fallback = both(
            lambda m, args=args: update(
                m, args[0], m.StreamCoordinate() if args[1] == "StreamCoordinate" else args[1]
            )
        )
        assert native == fallback, (args, native, fallback)
    assert both(lambda m: m.ShardReader(str(meta), batch_size=-1))[0] == (
        "ValueError",
        "batch_size must be an int in [1, 4294967295], got -1",
    )
    assert both(lambda m: m.MinHashDeduplicator(bands=100))[0] == (
        "ValueError",
        "MinHashDeduplicator: bands * rows must be at most num_perm (64), got bands=100, "
        "rows=0 (rows derived as num_perm // bands)",
    )


def test_update_refuses_a_batch_id_below_the_committed_one(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta, durable=False) as tracker:
        tracker.update(7, lmd.StreamCoordinate(global_row_idx=70))
        tracker.commit()
        tracker.update(7, lmd.StreamCoordinate(global_row_idx=71))  # the same batch again: fine
        with pytest.raises(ValueError, match="batch_id 6 is lower than the committed batch id 7"):
            tracker.update(6, lmd.StreamCoordinate())
        tracker.commit()
        assert (tracker.epoch, tracker.committed_batch_id) == (2, 7)
        assert tracker.coordinate.global_row_idx == 71


# -- item 1 with a MinHash companion: every file is named -------------------------------------


def test_wiped_meta_names_every_companion(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta, durable=False) as tracker:
        dedup = lmd.StreamDeduplicator(tracker)
        index = lmd.MinHashDeduplicator(tracker, num_perm=16)
        for k in range(3):
            batch = [f"alpha beta gamma delta {k} {j}" for j in range(10)]
            dedup.filter_batch(batch)
            index.filter_batch(batch)
            tracker.commit()
        del dedup, index
    sizes = {p.name: p.stat().st_size for p in tmp_meta.parent.iterdir()}
    tmp_meta.write_bytes(bytes(128))
    with pytest.raises(CorruptCheckpointError) as info:
        lmd.StateTracker(tmp_meta, durable=False)
    message = str(info.value)
    # The registry got its one header from commit 1 (the index joined); the index's own
    # companion carries every epoch.
    assert f"the companion {tmp_meta}.minhash records epoch 3" in message
    assert f"{tmp_meta}.dedup holds 240 bytes (30 hashes)" in message
    sizes_after = {p.name: p.stat().st_size for p in tmp_meta.parent.iterdir()}
    assert sizes_after == {**sizes, tmp_meta.name: 128}


def test_committing_without_a_registered_companion_is_refused(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta, durable=False) as tracker:
        index = lmd.MinHashDeduplicator(tracker, num_perm=16)
        index.is_unique("one two three four five six")
        tracker.commit()
        del index
        with pytest.raises(LuminaMoonError, match=r"minhash companion .* must keep doing so"):
            tracker.commit()
        assert tracker.epoch == 1
        index = lmd.MinHashDeduplicator(tracker, num_perm=16)
        assert tracker.commit() == 2
        del index


# -- minor item: skipping an over-long record holds the limit plus one block, not twice ---------

_RSS_CHILD = """
import json, resource, sys, luminamoon.data as lmd
path, small, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
for _ in lmd.ShardReader(small):
    pass
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
reader = lmd.ShardReader(path, max_record_bytes=limit)
texts = [t for batch in reader for t in batch.texts]
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps([texts, [e.kind for e in reader.errors], (after - before) * 1024]))
"""


def test_skipping_an_over_long_record_holds_limit_plus_one_block(
    tmp_path: Path, subprocess_env: dict[str, str]
) -> None:
    limit, block = 16 << 20, 4 << 20  # block: the reader's read-ahead (shard_reader.cc)
    big = tmp_path / "big.jsonl"
    with big.open("w") as f:
        f.write('{"text": "' + "a" * (3 * limit) + '"}\n{"text": "ok"}\n')
    small = tmp_path / "small.jsonl"
    small.write_text('{"text": "x"}\n')
    run = subprocess.run(
        [sys.executable, "-c", _RSS_CHILD, str(big), str(small), str(limit)],
        env=subprocess_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    texts, kinds, grown = json.loads(run.stdout)
    assert texts == ["ok"]
    assert kinds == ["record_too_long"]
    # Before: ~2.8x the limit natively (a zero-filled std::vector grown by copies).
    assert grown < limit + block + (8 << 20), f"peak RSS grew by {grown / 2**20:.1f} MiB"

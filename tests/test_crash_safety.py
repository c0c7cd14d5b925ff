"""Crash safety of the SPEC 3.2/3.3 checkpoint on both backends.

Two halves:

* a kill harness: ``crash_child.py`` commits a deterministic stream of batches until it is
  SIGKILLed at a random moment (during start-up, while opening the state, inside a commit); the
  parent then proves the state opens, sits at the last reported commit or the one after it, and
  holds exactly the hashes an in-process replay of the same schedule commits - then the next
  child resumes from there. ``LUMINAMOON_CRASH_KILLS`` sets the kills per chain (default 40;
  three chains: native, fallback, and one that alternates the backend of every child run; the
  loop itself is ``crash_harness.py``, shared with the other crash tests);
* simulated torn writes built by hand, no processes: torn and bit-flipped slots, cut and
  over-long WALs, a crash between the WAL append and the slot write, and one between the slot
  write and the RAM promotion.
"""

from __future__ import annotations

import random
import struct
import sys
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import crash_harness as harness  # the shared SIGKILL harness, next to this file
from luminamoon.data.errors import CorruptCheckpointError

HERE = Path(__file__).resolve().parent
CHILD = HERE / "crash_child.py"

schedule = harness.load_script(CHILD, "luminamoon_crash_child")

try:
    from xxhash import xxh3_64_intdigest as _reference_xxh3
except ImportError:  # pragma: no cover - xxhash is a test dependency
    from luminamoon.data.fallbacks.xxh3 import xxh3_64_pure as _reference_xxh3


def ref_hash(doc: str | bytes) -> int:
    """XXH3-64 computed independently of both backends (the ``xxhash`` package)."""
    return int(_reference_xxh3(doc.encode("utf-8") if isinstance(doc, str) else doc))


NATIVE = harness.NATIVE
needs_native = harness.needs_native
BACKENDS = [pytest.param("native", marks=needs_native), "fallback"]
backend_module = harness.backend_module


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> ModuleType:
    """The backend module itself (``_native`` or ``fallbacks``), whatever ``BACKEND`` is."""
    return backend_module(request.param)


def wal_path(meta: Path) -> Path:
    return Path(str(meta) + ".dedup")


def pack_hashes(hashes: Sequence[int]) -> bytes:
    return struct.pack(f"<{len(hashes)}Q", *hashes)


def unpack_hashes(raw: bytes) -> list[int]:
    assert len(raw) % 8 == 0
    return list(struct.unpack(f"<{len(raw) // 8}Q", raw))


def state_of(tracker: Any) -> tuple[int, int, bytes, int]:
    """``read()`` with the coordinate as bytes, so states of both backends compare equal."""
    epoch, batch_id, coordinate, count = tracker.read()
    return (epoch, batch_id, coordinate.to_bytes(), count)


# =============================================================================================
# The kill harness
# =============================================================================================


@dataclass
class Replay:
    """The child's schedule replayed in-process with a plain set: what epoch ``e`` commits."""

    hashes: list[int] = field(default_factory=list)  # the WAL, in commit order
    seen: set[int] = field(default_factory=set)
    count_at: list[int] = field(default_factory=lambda: [0])  # dedup_count after epoch e
    rows_at: list[int] = field(default_factory=lambda: [0])  # global_row_idx after epoch e
    next_batch: int = 0
    rows: int = 0

    def extend_to(self, epoch: int) -> None:
        while len(self.count_at) <= epoch:
            k = schedule.committed_batch(len(self.count_at))
            for j in range(self.next_batch, k + 1):  # rolled-back batches only count rows
                self.rows += len(schedule.batch_documents(j))
            self.next_batch = k + 1
            for doc in schedule.batch_documents(k):
                h = ref_hash(doc)
                if h not in self.seen:
                    self.seen.add(h)
                    self.hashes.append(h)
            self.count_at.append(len(self.hashes))
            self.rows_at.append(self.rows)

    def expected_state(self, mod: ModuleType, epoch: int) -> tuple[int, int, bytes, int]:
        self.extend_to(epoch)
        if epoch == 0:
            return (0, 0, mod.StreamCoordinate().to_bytes(), 0)
        k = schedule.committed_batch(epoch)
        coordinate = mod.StreamCoordinate(**schedule.coordinate_fields(k, self.rows_at[epoch]))
        return (epoch, k, coordinate.to_bytes(), self.count_at[epoch])

    def committed(self, epoch: int) -> list[int]:
        self.extend_to(epoch)
        return self.hashes[: self.count_at[epoch]]


read_progress = harness.read_progress


def kill_child(
    backend: str, meta: Path, progress: Path, stderr_path: Path, rng: random.Random
) -> harness.Kill:
    """Start a child, SIGKILL it 0-150 ms after it is ready (30%: after the spawn)."""
    return harness.spawn_and_kill(
        [sys.executable, str(CHILD), backend, str(meta), str(progress)],
        backend=backend,
        stderr_path=stderr_path,
        rng=rng,
        max_delay=0.150,
    )


def verify_after_kill(
    writer_backend: ModuleType,
    readers: Sequence[ModuleType],
    *,
    meta: Path,
    progress: Path,
    replay: Replay,
    previous_epoch: int,
) -> int:
    """Check everything the harness promises about a killed run; returns the committed epoch."""
    reports = read_progress(progress)
    for (k, epoch), (_, before) in zip(reports[1:], reports, strict=False):
        assert epoch > before, f"progress epochs not increasing: {reports}"
        assert k == schedule.committed_batch(epoch), (k, epoch)
    if reports:
        assert reports[0][0] == schedule.committed_batch(reports[0][1])
    reported = reports[-1][1] if reports else 0
    reported = max(reported, previous_epoch)

    wal_before = wal_path(meta).read_bytes() if wal_path(meta).exists() else b""
    meta_before = meta.read_bytes() if meta.exists() else None
    epoch = -1
    for mod in readers:
        # Never CorruptCheckpointError: any exception here fails the test.
        with mod.StateTracker(meta, read_only=True) as reader:
            state = state_of(reader)
            if epoch < 0:
                epoch = state[0]
                assert epoch in (reported, reported + 1), (
                    f"epoch {epoch} after the kill, but the children reported {reported} "
                    "(only that or the one commit after it may be on disk)"
                )
            assert state == replay.expected_state(mod, epoch)
            assert reader.active_slot == (None if epoch == 0 else "AB"[(epoch + 1) % 2])
            assert not reader.has_pending
    # Readers never write.
    assert (meta.read_bytes() if meta.exists() else None) == meta_before
    assert (wal_path(meta).read_bytes() if wal_path(meta).exists() else b"") == wal_before

    expected = replay.committed(epoch)
    assert len(wal_before) >= 8 * len(expected)
    assert unpack_hashes(wal_before[: 8 * len(expected)]) == expected

    mod = writer_backend
    with mod.StateTracker(meta) as writer:
        assert state_of(writer) == replay.expected_state(mod, epoch)
        # The writer cut off whatever an unfinished commit appended.
        assert wal_path(meta).read_bytes() == pack_hashes(expected)
        dedup = mod.StreamDeduplicator(writer)
        assert dedup.committed_count == len(expected) == len(set(expected))
        assert dedup.staged_count == 0
        assert not writer.has_pending
        # The next batch the child would process: committed hashes are remembered, nothing else.
        committed = set(expected)
        for doc in schedule.batch_documents(schedule.committed_batch(epoch + 1)):
            assert dedup.contains(doc) == (ref_hash(doc) in committed)
        del dedup
    return epoch


def crash_kills() -> int:
    return harness.kill_count("LUMINAMOON_CRASH_KILLS", 40)


@pytest.mark.parametrize("chain", harness.CHAINS)
def test_sigkill_at_random_moments(chain: str, tmp_path: Path) -> None:
    """N children SIGKILLed at random moments; every kill leaves exactly a committed prefix."""
    kills = crash_kills()
    rng = random.Random(f"crash-{chain}")
    readers = [backend_module(name) for name in harness.BACKEND_NAMES]
    meta = tmp_path / "stream.meta"
    progress = tmp_path / "progress.txt"
    replay = Replay()
    landed_unreported = 0

    def kill(backend: str, i: int) -> harness.Kill:
        return kill_child(backend, meta, progress, tmp_path / f"stderr-{i}.txt", rng)

    def verify(checker: str, epoch: int) -> int:
        nonlocal landed_unreported
        new_epoch = verify_after_kill(
            backend_module(checker),
            readers,
            meta=meta,
            progress=progress,
            replay=replay,
            previous_epoch=epoch,
        )
        reports = read_progress(progress)
        if new_epoch > (reports[-1][1] if reports else 0):
            landed_unreported += 1
        return new_epoch

    stats = harness.kill_chain(chain, kills, rng, kill=kill, verify=verify)
    print(
        f"\n[crash harness] {chain}: {kills} kills ({stats.startup_kills} timed from spawn) in "
        f"{stats.seconds:.1f} s, final epoch {stats.final_epoch}, {stats.advanced} runs "
        f"committed something, {landed_unreported} commits landed unreported"
    )
    if kills >= 20:
        assert stats.final_epoch > 0, (
            "no child ever committed: the kill delays are too short to test much"
        )


# =============================================================================================
# Simulated torn writes (no processes)
# =============================================================================================

SLOT = 64


@dataclass
class Built:
    """A checkpoint after ``len(states) - 1`` commits, with a snapshot after each commit."""

    meta: Path
    states: list[tuple[int, int, bytes, int]]  # states[e] = read() after epoch e
    metas: list[bytes]  # .meta bytes after epoch e
    wals: list[list[int]]  # committed hashes after epoch e
    batches: list[list[str | bytes]]  # batches[e - 1] = documents of epoch e


def torn_batches(commits: int) -> list[list[str | bytes]]:
    """Small batches with duplicates inside and across, str and bytes mixed."""
    rng = random.Random(commits)
    vocabulary: list[str | bytes] = ["", "same", "héllo", "日本", "🙂"]
    vocabulary += [f"doc {i}" for i in range(25)]
    out = []
    for _ in range(commits):
        docs = [rng.choice(vocabulary) for _ in range(rng.randint(2, 9))]
        out.append([d.encode() if isinstance(d, str) and rng.random() < 0.3 else d for d in docs])
    return out


def build(mod: ModuleType, directory: Path, commits: int) -> Built:
    directory.mkdir(parents=True, exist_ok=True)
    meta = directory / "torn.meta"
    batches = torn_batches(commits)
    built = Built(meta, [], [], [], batches)
    seen: list[int] = []
    with mod.StateTracker(meta) as tracker:
        dedup = mod.StreamDeduplicator(tracker)
        built.states.append(state_of(tracker))
        built.metas.append(meta.read_bytes())
        built.wals.append([])
        for e, docs in enumerate(batches, start=1):
            dedup.filter_batch(docs)
            tracker.update(100 + e, mod.StreamCoordinate(shard_id=e, byte_offset=e * 11))
            assert tracker.commit() == e
            for doc in docs:
                if ref_hash(doc) not in seen:
                    seen.append(ref_hash(doc))
            built.states.append(state_of(tracker))
            built.metas.append(meta.read_bytes())
            built.wals.append(list(seen))
            assert wal_path(meta).read_bytes() == pack_hashes(seen)
        del dedup
    return built


def slot_offset(epoch: int) -> int:
    """Where the commit of ``epoch`` wrote: slot A (odd epochs) or slot B (even)."""
    return 0 if epoch % 2 == 1 else SLOT


def write_slot(meta: Path, offset: int, raw: bytes) -> None:
    data = bytearray(meta.read_bytes())
    data[offset : offset + SLOT] = raw
    meta.write_bytes(bytes(data))


def expect_opens_to(mod: ModuleType, built: Built, epoch: int) -> None:
    """Reader and writer both see commit ``epoch``; the writer cuts the WAL back to it."""
    meta = built.meta
    wal_before = wal_path(meta).read_bytes()
    with mod.StateTracker(meta, read_only=True) as reader:
        assert state_of(reader) == built.states[epoch]
    assert wal_path(meta).read_bytes() == wal_before
    with mod.StateTracker(meta, durable=False) as writer:
        assert state_of(writer) == built.states[epoch]
        assert wal_path(meta).read_bytes() == pack_hashes(built.wals[epoch])
        dedup = mod.StreamDeduplicator(writer)
        assert dedup.committed_count == len(built.wals[epoch])
        committed = set(built.wals[epoch])
        for docs in built.batches:
            for doc in docs:
                assert dedup.contains(doc) == (ref_hash(doc) in committed)
        del dedup


def expect_corrupt(mod: ModuleType, meta: Path) -> None:
    """Both modes raise CorruptCheckpointError naming the file, and neither repairs anything."""
    before = (meta.read_bytes(), wal_path(meta).read_bytes() if wal_path(meta).exists() else None)
    for read_only in (True, False):
        with pytest.raises(CorruptCheckpointError) as info:
            mod.StateTracker(meta, read_only=read_only, durable=False)
        assert str(meta) in str(info.value)
        after = (
            meta.read_bytes(),
            wal_path(meta).read_bytes() if wal_path(meta).exists() else None,
        )
        assert after == before


def torn_variants(new: bytes, old: bytes, seed: int) -> Iterator[tuple[str, bytes]]:
    garbage = random.Random(seed).randbytes(SLOT)
    for split in range(4, SLOT, 4):
        for filler_name, filler in (("old", old), ("garbage", garbage)):
            yield f"new[:{split}]+{filler_name}", new[:split] + filler[split:]
            yield f"{filler_name}[:{split}]+new", filler[:split] + new[split:]


@pytest.mark.parametrize("epoch", [1, 2, 5, 6])
def test_torn_slot_write_opens_previous_commit(
    backend: ModuleType, tmp_path: Path, epoch: int
) -> None:
    """(a) The latest commit's slot is half new, half old or garbage: previous commit."""
    built = build(backend, tmp_path, epoch)
    offset = slot_offset(epoch)
    new = built.metas[epoch][offset : offset + SLOT]
    old = built.metas[epoch - 1][offset : offset + SLOT]
    # The WAL as the torn commit left it: its hashes appended (step 1 finished).
    wal = wal_path(built.meta).read_bytes()
    for _name, torn in torn_variants(new, old, seed=epoch):
        built.meta.write_bytes(built.metas[epoch])
        wal_path(built.meta).write_bytes(wal)
        write_slot(built.meta, offset, torn)
        expect_opens_to(backend, built, epoch if torn == new else epoch - 1)


def test_every_single_byte_flip(backend: ModuleType, tmp_path: Path) -> None:
    """(b) A flipped byte in the active slot falls back to the other slot; corrupt only when the
    other slot is invalid too; a flip in the inactive slot changes nothing."""
    built = build(backend, tmp_path / "four", 4)
    pristine_meta = built.meta.read_bytes()
    pristine_wal = wal_path(built.meta).read_bytes()
    one = build(backend, tmp_path / "one", 1)
    one_meta = one.meta.read_bytes()
    one_wal = wal_path(one.meta).read_bytes()
    active, inactive = slot_offset(4), slot_offset(3)

    def reset() -> None:
        built.meta.write_bytes(pristine_meta)
        wal_path(built.meta).write_bytes(pristine_wal)
        one.meta.write_bytes(one_meta)
        wal_path(one.meta).write_bytes(one_wal)

    for i in range(SLOT):
        # Active slot broken: the previous commit, with the WAL cut back to it.
        reset()
        flip(built.meta, active + i)
        expect_opens_to(backend, built, 3)
        # Inactive slot broken: the latest commit is untouched.
        reset()
        flip(built.meta, inactive + i)
        expect_opens_to(backend, built, 4)
        # Both broken: refuse to restart from zero.
        reset()
        flip(built.meta, active + i)
        flip(built.meta, inactive + (i * 7) % SLOT)
        expect_corrupt(backend, built.meta)
        # The very first commit broken, the other slot never written: no commit completed.
        reset()
        flip(one.meta, slot_offset(1) + i)
        expect_opens_to(backend, one, 0)


def flip(meta: Path, offset: int) -> None:
    data = bytearray(meta.read_bytes())
    data[offset] ^= 0xFF
    meta.write_bytes(bytes(data))


def test_wal_cut_mid_hash_is_truncated(backend: ModuleType, tmp_path: Path) -> None:
    """(c) A WAL with a partial hash past ``dedup_count * 8``: cut back, opens fine."""
    built = build(backend, tmp_path, 5)
    count = built.states[5][3]
    assert count > 0
    committed = pack_hashes(built.wals[5])
    extra = pack_hashes([ref_hash("never committed"), ref_hash("nor this")])
    for cut in range(1, 16):
        if cut % 8 == 0:
            continue
        wal_path(built.meta).write_bytes(committed + extra[:cut])
        expect_opens_to(backend, built, 5)


def test_wal_shorter_than_committed_is_corrupt(backend: ModuleType, tmp_path: Path) -> None:
    """(c) A WAL cut below ``dedup_count * 8`` (or missing) lost committed hashes."""
    built = build(backend, tmp_path, 5)
    committed = pack_hashes(built.wals[5])
    for length in sorted({0, 1, 7, 8, len(committed) - 8, len(committed) - 7, len(committed) - 1}):
        wal_path(built.meta).write_bytes(committed[:length])
        expect_corrupt(backend, built.meta)
    wal_path(built.meta).unlink()
    expect_corrupt(backend, built.meta)


def test_uncommitted_wal_tail_is_forgotten(backend: ModuleType, tmp_path: Path) -> None:
    """(d) Whole hashes past ``dedup_count``: not committed, cut off by the writer."""
    built = build(backend, tmp_path, 4)
    ghosts = [f"uncommitted {i}" for i in range(10)]
    wal_path(built.meta).write_bytes(
        pack_hashes(built.wals[4]) + pack_hashes([ref_hash(g) for g in ghosts])
    )
    expect_opens_to(backend, built, 4)
    assert wal_path(built.meta).stat().st_size == built.states[4][3] * 8
    with backend.StateTracker(built.meta, durable=False) as tracker:
        dedup = backend.StreamDeduplicator(tracker)
        assert not any(dedup.contains(g) for g in ghosts)
        assert dedup.filter_batch(ghosts) == [True] * len(ghosts)
        del dedup


def test_crash_between_wal_append_and_slot_write(backend: ModuleType, tmp_path: Path) -> None:
    """(e) Step 1 done, step 2 never happened: the previous commit; the next commit's WAL is
    byte-identical to a run that never crashed."""
    crashed = build(backend, tmp_path / "crashed", 3)
    clean = build(backend, tmp_path / "clean", 3)
    batch: list[str | bytes] = ["fresh 1", "doc 3", "fresh 2", b"fresh 1", "", "fresh 3"]
    staged = []
    for doc in batch:
        h = ref_hash(doc)
        if h not in crashed.wals[3] and h not in staged:
            staged.append(h)
    assert staged
    # What commit() step 1 leaves behind (a shorter prefix of it too).
    for appended in (staged, staged[:1]):
        wal_path(crashed.meta).write_bytes(pack_hashes(crashed.wals[3] + appended))
        expect_opens_to(backend, crashed, 3)
    wal_path(crashed.meta).write_bytes(pack_hashes(crashed.wals[3] + staged))
    for built in (crashed, clean):
        with backend.StateTracker(built.meta) as tracker:
            dedup = backend.StreamDeduplicator(tracker)
            assert dedup.filter_batch(batch) == [
                ref_hash(d) in staged and batch.index(d) == first_index(batch, d) for d in batch
            ]
            tracker.update(104, backend.StreamCoordinate(shard_id=4))
            assert tracker.commit() == 4
            del dedup
    assert crashed.meta.read_bytes() == clean.meta.read_bytes()
    assert wal_path(crashed.meta).read_bytes() == wal_path(clean.meta).read_bytes()
    assert wal_path(clean.meta).read_bytes() == pack_hashes(clean.wals[3] + staged)


def first_index(batch: Sequence[str | bytes], doc: str | bytes) -> int:
    h = ref_hash(doc)
    return next(i for i, d in enumerate(batch) if ref_hash(d) == h)


def golden_slot(epoch: int, batch_id: int, coordinate: bytes, count: int) -> bytes:
    body = struct.pack("<4sIQQ32sI", b"LMDL", 1, epoch, batch_id, coordinate, count)
    return body + struct.pack("<I", zlib.crc32(body))


def test_crash_between_slot_write_and_ram(backend: ModuleType, tmp_path: Path) -> None:
    """Steps 1 and 2 done by hand (WAL + golden slot), RAM never promoted: the new commit."""
    built = build(backend, tmp_path, 3)
    new_hashes = [ref_hash(f"landed {i}") for i in range(4)]
    coordinate = backend.StreamCoordinate(shard_id=9, global_row_idx=99).to_bytes()
    count = len(built.wals[3]) + len(new_hashes)
    wal_path(built.meta).write_bytes(pack_hashes(built.wals[3] + new_hashes))
    write_slot(built.meta, slot_offset(4), golden_slot(4, 777, coordinate, count))
    built.states.append((4, 777, coordinate, count))
    built.wals.append(built.wals[3] + new_hashes)
    built.batches.append([f"landed {i}" for i in range(4)])
    expect_opens_to(backend, built, 4)

"""Crash safety of the MinHash index's companion file (``<meta>.minhash``) on both backends.

The shared SIGKILL harness (``crash_harness.py``), for the MinHash stage: ``minhash_crash_child.py``
commits a deterministic stream of near-duplicate-rich batches until it is SIGKILLed at a random
moment (start-up, opening the index, inside a commit). After every kill the parent opens the
checkpoint and proves that

* the tracker sits at the last reported commit or the one after it;
* the index holds exactly the rows an in-process replay of the committed batches holds (the
  replay runs on the pure-Python reference), byte for byte in the companion file;
* the index answers every probe (``query`` with and without verification) exactly as the
  replay does: no document committed as seen is forgotten, nothing uncommitted is remembered;

then the next child resumes from there. ``LUMINAMOON_MINHASH_CRASH_KILLS`` sets the kills per
chain (default 12; three chains: native, fallback, and one alternating the backend per run).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

import crash_harness as harness  # the shared SIGKILL harness, next to this file
from luminamoon.data.fallbacks import epoch_log as fallback_epoch_log
from luminamoon.data.fallbacks import minhash as fallback_minhash

HERE = Path(__file__).resolve().parent
CHILD = HERE / "minhash_crash_child.py"

schedule = harness.load_script(CHILD, "luminamoon_minhash_crash_child")
needs_native = harness.needs_native
backend_module = harness.backend_module
read_progress = harness.read_progress


class Replay:
    """The committed batches fed, in order, to a detached reference deduplicator."""

    def __init__(self) -> None:
        self.dedup = fallback_minhash.MinHashDeduplicator()
        self.epoch = 0

    def advance(self, epoch: int) -> None:
        assert epoch >= self.epoch, "replays only move forward"
        while self.epoch < epoch:
            self.epoch += 1
            self.dedup.filter_batch(schedule.batch_documents(schedule.committed_batch(self.epoch)))
            self.dedup.commit()

    def rows(self) -> list[bytes]:
        index = self.dedup._index
        return [fallback_minhash.pack_row(row, index.bits) for row in index.values]


def companion_rows(meta: Path, epoch: int) -> list[bytes]:
    """The rows the companion file commits at ``epoch`` (decoded by the fallback's readers)."""
    path = Path(str(meta) + ".minhash")
    data = path.read_bytes() if path.exists() else b""
    _slot, _epoch, _length, records = fallback_epoch_log.decode_epoch_log(data, epoch, str(path))
    rows: list[bytes] = []
    for payload in records:
        fields, record_rows = fallback_minhash.decode_record(payload, str(path))
        assert fields["first_doc"] == len(rows)
        rows.extend(record_rows)
    return rows


def kill_child(
    backend: str, meta: Path, progress: Path, err: Path, rng: random.Random
) -> harness.Kill:
    """Start a child and SIGKILL it 0-200 ms after it is ready (or after spawn, 30%)."""
    return harness.spawn_and_kill(
        [sys.executable, str(CHILD), backend, str(meta), str(progress)],
        backend=backend,
        stderr_path=err,
        rng=rng,
        max_delay=0.200,
    )


def probes(epoch: int) -> list[str | bytes]:
    """Documents of the committed batches around ``epoch`` and of the next ones."""
    out: list[str | bytes] = []
    for e in range(max(1, epoch - 2), epoch + 3):
        out += schedule.batch_documents(schedule.committed_batch(e))[:6]
    return out


def verify_after_kill(
    mod: ModuleType, meta: Path, progress: Path, replay: Replay, last: int
) -> int:
    reports = read_progress(progress)
    for (k, epoch), (_, before) in zip(reports[1:], reports, strict=False):
        assert epoch > before
        assert k == schedule.committed_batch(epoch)
    reported = max(reports[-1][1] if reports else 0, last)

    with mod.StateTracker(meta) as tracker:
        epoch = tracker.epoch
        assert epoch in (reported, reported + 1), (epoch, reported)
        if epoch:
            assert tracker.committed_batch_id == schedule.committed_batch(epoch)
        replay.advance(epoch)
        # Byte-exact index content, before and after a writer opened it.
        expected_rows = replay.rows()
        assert companion_rows(meta, epoch) == expected_rows
        dedup = mod.MinHashDeduplicator(tracker)
        assert dedup.committed_count == len(expected_rows)
        assert dedup.staged_count == 0
        assert not tracker.has_pending
        assert companion_rows(meta, epoch) == expected_rows
        for doc in probes(epoch):
            assert dedup.query(doc, verify=False) == replay.dedup.query(doc, verify=False)
            assert dedup.query(doc) == replay.dedup.query(doc)
        del dedup
    return epoch


def crash_kills() -> int:
    return harness.kill_count("LUMINAMOON_MINHASH_CRASH_KILLS", 12)


@pytest.mark.parametrize("chain", harness.CHAINS)
def test_sigkill_at_random_moments(chain: str, tmp_path: Path) -> None:
    kills = crash_kills()
    rng = random.Random(f"minhash-crash-{chain}")
    meta = tmp_path / "stream.meta"
    progress = tmp_path / "progress.txt"
    replay = Replay()

    def kill(backend: str, i: int) -> harness.Kill:
        return kill_child(backend, meta, progress, tmp_path / f"stderr-{i}.txt", rng)

    def verify(checker: str, epoch: int) -> int:
        return verify_after_kill(backend_module(checker), meta, progress, replay, epoch)

    stats = harness.kill_chain(chain, kills, rng, kill=kill, verify=verify)
    print(
        f"\n[minhash crash harness] {chain}: {kills} kills in {stats.seconds:.1f} s, "
        f"final epoch {stats.final_epoch}, {stats.advanced} runs committed something, "
        f"{len(replay.dedup)} documents indexed"
    )
    if kills >= 10:
        assert stats.final_epoch > 0, (
            "no child ever committed: the kill delays are too short to test much"
        )


@pytest.mark.parametrize("name", [pytest.param("native", marks=needs_native), "fallback"])
def test_crash_between_companion_append_and_slot(name: str, tmp_path: Path) -> None:
    """Records and header of epoch e on disk, the slot of e never written: reopens at e - 1, and
    the next commit produces the same files as a run that never crashed."""
    mod = backend_module(name)
    crashed = tmp_path / "crashed" / "run.meta"
    clean = tmp_path / "clean" / "run.meta"
    batches = [schedule.batch_documents(k) for k in range(4)]
    for meta in (crashed, clean):
        meta.parent.mkdir()
        with mod.StateTracker(meta) as tracker:
            dedup = mod.MinHashDeduplicator(tracker)
            for docs in batches[:2]:
                dedup.filter_batch(docs)
                dedup.commit()
            del dedup
    meta_before = crashed.read_bytes()
    with mod.StateTracker(crashed) as tracker:
        dedup = mod.MinHashDeduplicator(tracker)
        dedup.filter_batch(batches[2])
        dedup.commit()
        del dedup
    crashed.write_bytes(meta_before)  # the slot write of epoch 3 never happened
    for meta in (crashed, clean):
        with mod.StateTracker(meta) as tracker:
            assert tracker.epoch == 2
            dedup = mod.MinHashDeduplicator(tracker)
            reference = Replay()
            reference.advance(0)
            for docs in batches[:2]:
                reference.dedup.filter_batch(docs)
            reference.dedup.commit()
            assert dedup.committed_count == len(reference.dedup)
            for doc in batches[2]:
                assert dedup.query(doc) == reference.dedup.query(doc)
            dedup.filter_batch(batches[3])
            dedup.commit()
            del dedup
    assert crashed.read_bytes() == clean.read_bytes()
    crashed_rows = companion_rows(crashed, 3)
    assert crashed_rows == companion_rows(clean, 3)
    assert len(crashed_rows) > 0

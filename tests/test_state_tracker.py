"""StateTracker: the 128-byte ping-pong checkpoint (SPEC 3.2) and its open/recovery rules."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import luminamoon.data as lmd

SC = lmd.StreamCoordinate
GoldenSlot = Callable[..., bytes]
FRESH = (0, 0, SC(), 0)


def _flip(path: Path, offset: int, mask: int = 0x01) -> None:
    raw = bytearray(path.read_bytes())
    raw[offset] ^= mask
    path.write_bytes(bytes(raw))


def _two_commits(path: Path) -> None:
    """Slot A = epoch 1 (batch 10), slot B = epoch 2 (batch 20)."""
    with lmd.StateTracker(path) as t:
        t.update(10, SC(1, 100))
        t.commit()
        t.update(20, SC(2, 200))
        t.commit()


# -- fresh state and the write pattern -------------------------------------------------------


def test_fresh_file_is_created(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        assert t.path == str(tmp_meta)
        assert t.read() == FRESH
        assert (t.epoch, t.committed_batch_id, t.coordinate, t.dedup_count) == FRESH
        assert t.active_slot is None
        assert not t.has_pending
    assert tmp_meta.read_bytes() == bytes(128)
    assert Path(str(tmp_meta) + ".dedup").read_bytes() == b""


def test_accepts_str_bytes_and_pathlike(tmp_meta: Path) -> None:
    for form in (str(tmp_meta), tmp_meta, os.fsencode(tmp_meta)):
        with lmd.StateTracker(form) as t:  # type: ignore[arg-type]
            assert t.path == str(tmp_meta)
    with pytest.raises(TypeError):
        lmd.StateTracker(5)  # type: ignore[arg-type]


def test_commits_alternate_slots(tmp_meta: Path, golden_slot: GoldenSlot) -> None:
    c1, c2, c3 = SC(1, 2, 3, 4, 5, 6), SC(7, 8, 9, 10, 11, 12), SC(0, 2**64 - 1)
    with lmd.StateTracker(tmp_meta) as t:
        t.update(100, c1)
        assert t.has_pending
        assert t.read() == FRESH  # update is RAM-only staging
        assert tmp_meta.read_bytes() == bytes(128)
        assert t.commit() == 1
        assert not t.has_pending
        slot_a1 = golden_slot(1, 100, (1, 2, 3, 4, 5, 6), 0)
        assert tmp_meta.read_bytes() == slot_a1 + bytes(64)
        assert t.active_slot == "A"
        assert t.read() == (1, 100, c1, 0)

        t.update(200, c2)
        assert t.commit() == 2
        slot_b2 = golden_slot(2, 200, (7, 8, 9, 10, 11, 12), 0)
        assert tmp_meta.read_bytes() == slot_a1 + slot_b2
        assert t.active_slot == "B"

        t.update(2**64 - 1, c3)
        assert t.commit() == 3
        slot_a3 = golden_slot(3, 2**64 - 1, (0, 2**64 - 1, 0, 0, 0, 0), 0)
        assert tmp_meta.read_bytes() == slot_a3 + slot_b2
        assert t.active_slot == "A"
        assert t.read() == (3, 2**64 - 1, c3, 0)


def test_commit_without_update_keeps_position(tmp_meta: Path, golden_slot: GoldenSlot) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        assert t.commit() == 1  # allowed with nothing staged
        assert tmp_meta.read_bytes() == golden_slot(1, 0, (0,) * 6, 0) + bytes(64)
        t.update(5, SC(3))
        t.commit()
        assert t.commit() == 3
        assert t.read() == (3, 5, SC(3), 0)
        assert tmp_meta.read_bytes()[:64] == golden_slot(3, 5, (3, 0, 0, 0, 0, 0), 0)


def test_rollback_drops_staged_update(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        t.update(1, SC(1))
        t.commit()
        t.update(2, SC(2))
        t.rollback()
        assert not t.has_pending
        assert t.commit() == 2
        assert t.read() == (2, 1, SC(1), 0)


def test_reopen_recovers_latest_and_epoch_is_monotone(tmp_meta: Path) -> None:
    for expected_epoch in range(1, 6):
        with lmd.StateTracker(tmp_meta) as t:
            assert t.epoch == expected_epoch - 1
            t.update(expected_epoch * 10, SC(expected_epoch, expected_epoch * 1000))
            assert t.commit() == expected_epoch
        with lmd.StateTracker(tmp_meta, read_only=True) as r:
            assert r.read() == (
                expected_epoch,
                expected_epoch * 10,
                SC(expected_epoch, expected_epoch * 1000),
                0,
            )
            assert r.active_slot == ("A" if expected_epoch % 2 else "B")


def test_durable_false_writes_the_same_bytes(tmp_path: Path) -> None:
    files = []
    for durable in (True, False):
        path = tmp_path / f"d{durable}.meta"
        with lmd.StateTracker(path, durable=durable) as t:
            t.update(3, SC(4, 5))
            t.commit()
            t.commit()
        files.append(path.read_bytes())
    assert files[0] == files[1]


def test_update_validation(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        for bad in (-1, 2**64, True, 1.0, "1"):
            with pytest.raises(ValueError, match="batch_id"):
                t.update(bad, SC())  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            t.update(1, SC().to_bytes())  # type: ignore[arg-type]
        assert not t.has_pending


# -- recovery --------------------------------------------------------------------------------


def test_torn_latest_slot_falls_back_to_previous(tmp_meta: Path) -> None:
    _two_commits(tmp_meta)
    _flip(tmp_meta, 64 + 20)  # inside slot B's coordinate
    with lmd.StateTracker(tmp_meta) as t:
        assert t.read() == (1, 10, SC(1, 100), 0)
        assert t.active_slot == "A"
        assert t.commit() == 2  # rewrites slot B, slot A untouched
        assert t.active_slot == "B"
    with lmd.StateTracker(tmp_meta, read_only=True) as r:
        assert r.read() == (2, 10, SC(1, 100), 0)


def test_torn_older_slot_is_ignored(tmp_meta: Path) -> None:
    _two_commits(tmp_meta)
    _flip(tmp_meta, 9)  # slot A's epoch
    with lmd.StateTracker(tmp_meta, read_only=True) as r:
        assert r.read() == (2, 20, SC(2, 200), 0)
        assert r.active_slot == "B"


def test_only_commit_torn_is_fresh(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        t.update(1, SC(1))
        t.commit()
    _flip(tmp_meta, 30)
    for read_only in (True, False):
        with lmd.StateTracker(tmp_meta, read_only=read_only) as t:
            assert t.read() == FRESH
            assert t.active_slot is None
    with lmd.StateTracker(tmp_meta) as t:
        assert t.commit() == 1  # overwrites the torn slot A


@pytest.mark.parametrize("slot", ["A", "B"])
@pytest.mark.parametrize("other", ["valid", "never_written"])
def test_every_flipped_bit_position_in_a_slot(tmp_meta: Path, slot: str, other: str) -> None:
    """A single flipped byte anywhere in a slot invalidates it (magic, version or CRC)."""
    _two_commits(tmp_meta)
    good = bytearray(tmp_meta.read_bytes())
    base = 0 if slot == "A" else 64
    if other == "never_written":
        other_base = 64 - base
        good[other_base : other_base + 64] = bytes(64)
        # The participant registry's header (written by commit 2) proves that a commit landed:
        # with it, a .meta with no valid slot is corruption (tests/test_state_consistency.py).
        # Without it this is what a torn first commit leaves.
        Path(str(tmp_meta) + ".participants").unlink()
    expected = {
        ("A", "valid"): (2, 20, SC(2, 200), 0),
        ("B", "valid"): (1, 10, SC(1, 100), 0),
    }.get((slot, other), FRESH)
    for offset in range(64):
        for mask in (0x01, 0x80):
            raw = bytearray(good)
            raw[base + offset] ^= mask
            tmp_meta.write_bytes(bytes(raw))
            with lmd.StateTracker(tmp_meta, read_only=True) as r:
                assert r.read() == expected, (offset, mask)


def test_all_zero_file_is_fresh(tmp_meta: Path) -> None:
    tmp_meta.write_bytes(bytes(128))
    with lmd.StateTracker(tmp_meta) as t:
        assert t.read() == FRESH
        assert t.active_slot is None


def _corrupt_both(path: Path, how_a: str, how_b: str) -> None:
    raw = bytearray(path.read_bytes())
    for base, how in ((0, how_a), (64, how_b)):
        if how == "magic":
            raw[base : base + 4] = b"XXXX"
        elif how == "version":
            raw[base + 4] = 2
        else:  # crc
            raw[base + 17] ^= 0x10
    path.write_bytes(bytes(raw))


REASONS = {"magic": "bad magic", "version": "unsupported version 2", "crc": "CRC mismatch"}


@pytest.mark.parametrize("how_a", sorted(REASONS))
@pytest.mark.parametrize("how_b", sorted(REASONS))
@pytest.mark.parametrize("read_only", [False, True])
def test_both_slots_corrupt_raises(tmp_meta: Path, how_a: str, how_b: str, read_only: bool) -> None:
    _two_commits(tmp_meta)
    _corrupt_both(tmp_meta, how_a, how_b)
    before = tmp_meta.read_bytes()
    with pytest.raises(lmd.CorruptCheckpointError) as info:
        lmd.StateTracker(tmp_meta, read_only=read_only)
    message = str(info.value)
    assert str(tmp_meta) in message
    assert "slot A" in message
    assert "slot B" in message
    a_at, b_at = message.index("slot A"), message.index("slot B")
    assert REASONS[how_a] in message[a_at:b_at]
    assert REASONS[how_b] in message[b_at:]
    assert tmp_meta.read_bytes() == before  # never "repaired" behind the user's back
    # and the lock was released: a later writer is refused for corruption, not for the lock
    with pytest.raises(lmd.CorruptCheckpointError):
        lmd.StateTracker(tmp_meta)


def test_crc_mismatch_reason_shows_both_values(tmp_meta: Path) -> None:
    _two_commits(tmp_meta)
    _corrupt_both(tmp_meta, "crc", "crc")
    with pytest.raises(lmd.CorruptCheckpointError, match=r"stored 0x[0-9a-f]{8}, computed 0x"):
        lmd.StateTracker(tmp_meta, read_only=True)


def test_short_all_zero_files_are_fresh(tmp_path: Path) -> None:
    for size in range(128):
        path = tmp_path / f"z{size}.meta"
        path.write_bytes(bytes(size))
        with lmd.StateTracker(path, read_only=True) as r:
            assert r.read() == FRESH
        assert path.stat().st_size == size  # a reader never writes
        with lmd.StateTracker(path, durable=False) as t:
            assert t.read() == FRESH
        assert path.read_bytes() == bytes(128)  # re-initialised by the writer


def test_short_file_with_nonzero_byte_is_corrupt(tmp_path: Path) -> None:
    for size in range(1, 128):
        path = tmp_path / f"nz{size}.meta"
        path.write_bytes(bytes(size - 1) + b"\x01")
        for read_only in (True, False):
            with pytest.raises(lmd.CorruptCheckpointError, match="expected 128 bytes") as info:
                lmd.StateTracker(path, read_only=read_only)
            assert str(path) in str(info.value)
        assert path.read_bytes() == bytes(size - 1) + b"\x01"


@pytest.mark.parametrize("size", [129, 256, 4096])
@pytest.mark.parametrize("read_only", [False, True])
def test_long_file_is_corrupt(tmp_meta: Path, size: int, read_only: bool) -> None:
    tmp_meta.write_bytes(bytes(size))
    with pytest.raises(lmd.CorruptCheckpointError, match="expected 128 bytes"):
        lmd.StateTracker(tmp_meta, read_only=read_only)


# -- locking ---------------------------------------------------------------------------------


def test_second_writer_same_process_is_locked(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta):
        with pytest.raises(lmd.CheckpointLockedError) as info:
            lmd.StateTracker(tmp_meta)
        assert str(tmp_meta) in str(info.value)
    with lmd.StateTracker(tmp_meta) as t:  # released by close
        assert t.epoch == 0


LOCK_PROBE = """
import sys
import luminamoon.data as lmd
try:
    t = lmd.StateTracker(sys.argv[1])
except lmd.CheckpointLockedError as exc:
    print(lmd.BACKEND, "LOCKED", exc)
    sys.exit(3)
print(lmd.BACKEND, "OPENED", t.epoch)
"""


def test_second_writer_other_process_is_locked(
    tmp_meta: Path, subprocess_env: dict[str, str]
) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        t.commit()
        proc = subprocess.run(
            [sys.executable, "-c", LOCK_PROBE, str(tmp_meta)],
            env=subprocess_env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert proc.stdout.startswith(lmd.BACKEND + " LOCKED")
        assert str(tmp_meta) in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-c", LOCK_PROBE, str(tmp_meta)],
        env=subprocess_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split() == [lmd.BACKEND, "OPENED", "1"]


def test_lock_dies_with_the_process(tmp_meta: Path, subprocess_env: dict[str, str]) -> None:
    code = (
        "import os, sys, luminamoon.data as lmd\n"
        "t = lmd.StateTracker(sys.argv[1]); t.commit()\n"
        "os._exit(0)  # crash: no close, no finalizers\n"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(tmp_meta)], env=subprocess_env, check=True, timeout=60
    )
    with lmd.StateTracker(tmp_meta) as t:
        assert t.epoch == 1


# -- read-only -------------------------------------------------------------------------------


def test_reader_alongside_writer(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as w:
        w.update(7, SC(1, 2))
        w.commit()
        with lmd.StateTracker(tmp_meta, read_only=True) as r:
            assert r.read() == (1, 7, SC(1, 2), 0)
            assert r.active_slot == "A"
            assert not r.has_pending
            with pytest.raises(lmd.LuminaMoonError):
                r.update(8, SC())
            with pytest.raises(lmd.LuminaMoonError):
                r.commit()
        # a reader holds no lock: a second writer is still refused only because of `w`
        with pytest.raises(lmd.CheckpointLockedError):
            lmd.StateTracker(tmp_meta)
    before = tmp_meta.read_bytes()
    with lmd.StateTracker(tmp_meta, read_only=True) as r, lmd.StateTracker(tmp_meta) as w:
        assert w.epoch == r.epoch == 1
    assert tmp_meta.read_bytes() == before


def test_reader_never_creates(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta, read_only=True) as r:
        assert r.read() == FRESH
        assert r.active_slot is None
    assert not tmp_meta.exists()
    assert not Path(str(tmp_meta) + ".dedup").exists()


def test_missing_directory_is_oserror(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "dir" / "run.meta"
    with pytest.raises(FileNotFoundError) as info:
        lmd.StateTracker(path)
    assert info.value.errno is not None
    assert info.value.filename is not None


# -- lifetime --------------------------------------------------------------------------------


def test_use_after_close(tmp_meta: Path) -> None:
    t = lmd.StateTracker(tmp_meta)
    t.close()
    t.close()  # idempotent
    for use in (
        lambda: t.epoch,
        lambda: t.committed_batch_id,
        lambda: t.coordinate,
        lambda: t.dedup_count,
        lambda: t.active_slot,
        lambda: t.has_pending,
        t.read,
        t.commit,
        t.rollback,
        lambda: t.update(1, SC()),
        lambda: lmd.StreamDeduplicator(t),
    ):
        with pytest.raises(lmd.LuminaMoonError, match="closed"):
            use()
    with lmd.StateTracker(tmp_meta):  # lock released
        pass


def test_context_manager_closes_on_error(tmp_meta: Path) -> None:
    t = lmd.StateTracker(tmp_meta)

    def fail_inside() -> None:
        with t:
            t.update(1, SC(1))
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        fail_inside()
    with pytest.raises(lmd.LuminaMoonError):
        t.commit()
    with lmd.StateTracker(tmp_meta) as t2:
        assert t2.read() == FRESH  # the staged update died with the tracker


# -- options ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typo", "expected"),
    [
        ("read_onyl", "read_only"),
        ("readonly", "read_only"),
        ("read_onl", "read_only"),
        ("durabel", "durable"),
        ("durable_", "durable"),
        ("duarble", "durable"),
    ],
)
def test_option_typos(tmp_meta: Path, typo: str, expected: str) -> None:
    with pytest.raises(lmd.ConfigError, match=f"did you mean '{expected}'"):
        lmd.StateTracker(tmp_meta, **{typo: True})


def test_unknown_option_without_suggestion(tmp_meta: Path) -> None:
    with pytest.raises(lmd.ConfigError) as info:
        lmd.StateTracker(tmp_meta, compression="zstd")
    assert "did you mean" not in str(info.value)
    assert "compression" in str(info.value)


def test_errors_hierarchy() -> None:
    assert issubclass(lmd.CorruptCheckpointError, lmd.LuminaMoonError)
    assert issubclass(lmd.CheckpointLockedError, lmd.LuminaMoonError)
    assert issubclass(lmd.ConfigError, lmd.LuminaMoonError)
    assert issubclass(lmd.ConfigError, ValueError)


def test_files_have_ordinary_permissions(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta):
        pass
    umask = os.umask(0)
    os.umask(umask)
    assert tmp_meta.stat().st_mode & 0o777 == 0o666 & ~umask

"""EpochLog (companion files of commit participants) and the tracker's participant hooks.

The byte layout is pinned by a golden file shared with tests/cpp/checkpoint/epoch_log_test.cc,
so the pure-Python and the native EpochLog write the same bytes.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

from luminamoon.data.errors import CorruptCheckpointError
from luminamoon.data.fallbacks.epoch_log import EpochLog, decode_epoch_log
from luminamoon.data.fallbacks.tracker import StateTracker

# prepare_commit(1, [b"alpha", b"", b"beta"]); prepare_commit(3, [b"gamma"]) -- also asserted
# byte for byte by the C++ test EpochLogTest.GoldenBytes.
GOLDEN_HEX = (
    "4c4d454c010000000100000000000000610000000000000000000000774ae6bb"
    "4c4d454c0100000003000000000000006e00000000000000000000008aa3bc03"
    "050000006a39e0d0616c7068610000000000000000040000006304918f626574"
    "610500000071d043c467616d6d61"
)


def _record(payload: bytes) -> bytes:
    return struct.pack("<II", len(payload), zlib.crc32(payload)) + payload


def _header(epoch: int, length: int) -> bytes:
    body = b"LMEL" + struct.pack("<IQQI", 1, epoch, length, 0)
    return body + struct.pack("<I", zlib.crc32(body))


def test_golden_bytes(tmp_path: Path) -> None:
    path = str(tmp_path / "log")
    log = EpochLog(path, 0, read_only=False, durable=False)
    log.prepare_commit(1, [b"alpha", b"", b"beta"])
    log.finish_commit()
    log.prepare_commit(3, [b"gamma"])
    log.finish_commit()
    log.close()
    data = Path(path).read_bytes()
    records = _record(b"alpha") + _record(b"") + _record(b"beta")
    expected = (
        _header(1, 64 + len(records))
        + _header(3, 64 + len(records) + 13)
        + records
        + _record(b"gamma")
    )
    assert data == expected
    assert data.hex() == GOLDEN_HEX


def test_uncommitted_epoch_is_cut(tmp_path: Path) -> None:
    path = str(tmp_path / "log")
    log = EpochLog(path, 0, read_only=False, durable=True)
    log.prepare_commit(1, [b"kept"])
    log.finish_commit()
    length = log.committed_length
    log.prepare_commit(2, [b"lost"])  # the tracker's slot for epoch 2 never landed
    log.close()
    reader = EpochLog(path, 1, read_only=True, durable=True)
    assert reader.take_committed_records() == [b"kept"]
    writer = EpochLog(path, 1, read_only=False, durable=True)
    assert writer.take_committed_records() == [b"kept"]
    assert Path(path).stat().st_size == length
    # The header written for the uncommitted epoch 2 is gone, so it can never count later.
    assert Path(path).read_bytes()[32:64] == bytes(32)
    writer.prepare_commit(2, [b"retry"])
    writer.finish_commit()
    writer.close()
    assert EpochLog(path, 2, read_only=True, durable=True).take_committed_records() == [
        b"kept",
        b"retry",
    ]


def test_damage_inside_committed_region_is_corrupt() -> None:
    records = _record(b"payload-one")
    good = _header(1, 64 + len(records)) + bytes(32) + records
    assert decode_epoch_log(good, 1, "x")[3] == [b"payload-one"]
    flipped = bytearray(good)
    flipped[64 + 10] ^= 1
    with pytest.raises(CorruptCheckpointError, match="fails its CRC"):
        decode_epoch_log(bytes(flipped), 1, "x")
    with pytest.raises(CorruptCheckpointError, match="holds"):
        decode_epoch_log(good[:70], 1, "x")
    with pytest.raises(CorruptCheckpointError, match="both header slots"):
        decode_epoch_log(b"\xff" * 64, 1, "x")
    # A header of an epoch above the active one does not count: nothing committed.
    assert decode_epoch_log(good, 0, "x") == (-1, 0, 64, [])


class _LogParticipant:
    def __init__(self, tracker: StateTracker, path: str) -> None:
        self.log = EpochLog(path, tracker.epoch, read_only=False, durable=True)
        self.committed = self.log.take_committed_records()
        self.staged: list[bytes] = []
        self.closed = False
        tracker._attach_participant(self)

    def _has_staged(self) -> bool:
        return bool(self.staged)

    def _prepare_commit(self, epoch: int, durable: bool) -> None:
        self.log.prepare_commit(epoch, self.staged)

    def _finish_commit(self) -> None:
        self.log.finish_commit()
        self.committed += self.staged
        self.staged = []

    def _drop_staged(self) -> None:
        self.staged = []

    def _tracker_closed(self) -> None:
        self.closed = True


def test_participant_commits_with_the_tracker(tmp_path: Path) -> None:
    meta = tmp_path / "run.meta"
    log_path = str(tmp_path / "index.log")
    tracker = StateTracker(meta)
    p = _LogParticipant(tracker, log_path)
    p.staged.append(b"a")
    assert tracker.has_pending
    tracker.commit()
    p.staged.append(b"b")
    tracker.rollback()
    assert not tracker.has_pending
    p.staged.append(b"c")
    tracker.commit()
    assert p.committed == [b"a", b"c"]
    tracker.close()
    assert p.closed
    p.log.close()
    again = StateTracker(meta)
    q = _LogParticipant(again, log_path)
    assert q.committed == [b"a", b"c"]
    again.close()

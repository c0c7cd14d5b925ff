"""EpochLog: the crash-safe companion file of later stages, byte-identical to the native one.

Layout and rules: docs/checkpoint.md ("Companion files") and
include/luminamoon/data/checkpoint/epoch_log.h. Two 32-byte header slots, then records
``length u32 | crc32 u32 | payload``. A commit appends records at the committed end, syncs, then
writes the header slot that does not hold the current header, syncs. Opening for active epoch E
uses the valid header with the largest epoch <= E; bytes past its committed length are cut.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Sequence

from ..errors import CorruptCheckpointError, LuminaMoonError
from ._files import _fsync, _fsync_dir, _pread_exact, _pwrite_all, open_regular
from ._nocopy import NoCopy

__all__ = [
    "HEADER_SIZE",
    "EpochLog",
    "decode_epoch_log",
    "encode_header_slot",
    "newest_header_epoch",
]

MAGIC = b"LMEL"
VERSION = 1
HEADER_SIZE = 64
SLOT_SIZE = 32
_SLOT_BODY = struct.Struct("<4sIQQI")  # magic, version, epoch, committed_length, reserved
_U32 = struct.Struct("<I")
_RECORD_HEADER = struct.Struct("<II")  # length, crc32 of the payload


def encode_header_slot(epoch: int, committed_length: int) -> bytes:
    body = _SLOT_BODY.pack(MAGIC, VERSION, epoch, committed_length, 0)
    return body + _U32.pack(zlib.crc32(body))


def _decode_header_slot(raw: bytes) -> tuple[int, int] | str | None:
    """(epoch, committed_length), None when never written, or "invalid"."""
    if raw == bytes(SLOT_SIZE):
        return None
    magic, version, epoch, length, _reserved = _SLOT_BODY.unpack_from(raw)
    (crc,) = _U32.unpack_from(raw, _SLOT_BODY.size)
    if magic != MAGIC or version != VERSION or crc != zlib.crc32(raw[: _SLOT_BODY.size]):
        return "invalid"
    if length < HEADER_SIZE:
        return "invalid"
    return (epoch, length)


def _corrupt(path: str, what: str) -> CorruptCheckpointError:
    return CorruptCheckpointError(
        f"corrupt companion file {path}: {what}; committed state is damaged, restore it from a "
        "backup"
    )


def newest_header_epoch(data: bytes) -> int:
    """The largest epoch of a valid header slot, whatever the active epoch; 0 when none."""
    if len(data) < HEADER_SIZE:
        return 0
    newest = 0
    for i in (0, 1):
        state = _decode_header_slot(data[i * SLOT_SIZE : (i + 1) * SLOT_SIZE])
        if isinstance(state, tuple):
            newest = max(newest, state[0])
    return newest


def decode_epoch_log(
    data: bytes, active_epoch: int, path: str
) -> tuple[int, int, int, list[bytes]]:
    """``(header_slot, epoch, committed_length, records)``; header_slot -1 = nothing committed."""
    if not data:
        return (-1, 0, HEADER_SIZE, [])
    if len(data) < HEADER_SIZE:
        if data == bytes(len(data)):
            return (-1, 0, HEADER_SIZE, [])
        raise _corrupt(path, f"shorter than its 64-byte header ({len(data)} bytes)")
    states = [_decode_header_slot(data[i * SLOT_SIZE : (i + 1) * SLOT_SIZE]) for i in (0, 1)]
    slot, epoch, length = -1, 0, HEADER_SIZE
    for i, state in enumerate(states):
        if isinstance(state, tuple) and state[0] > active_epoch + 1:
            # A commit tags the epoch its slot is about to carry: at most one past the active.
            raise _corrupt(
                path,
                f"header slot {i} records epoch {state[0]} but the checkpoint's active epoch is "
                f"{active_epoch}, so the checkpoint lost commits it had made (wiped, or restored "
                "from an older backup)",
            )
        if not isinstance(state, tuple) or state[0] > active_epoch:
            continue
        if slot < 0 or state[0] > epoch:
            slot, (epoch, length) = i, state
    if slot < 0 and states[0] == "invalid" and states[1] == "invalid":
        raise _corrupt(path, "both header slots are invalid")
    if len(data) < length:
        raise _corrupt(path, f"holds {len(data)} bytes but commits {length}")
    records: list[bytes] = []
    pos = HEADER_SIZE
    while pos < length:
        if length - pos < _RECORD_HEADER.size:
            raise _corrupt(path, "truncated record header")
        size, crc = _RECORD_HEADER.unpack_from(data, pos)
        start = pos
        pos += _RECORD_HEADER.size
        if length - pos < size:
            raise _corrupt(path, "record runs past the committed length")
        payload = data[pos : pos + size]
        if zlib.crc32(payload) != crc:
            raise _corrupt(path, f"record at byte {start} fails its CRC")
        records.append(payload)
        pos += size
    return (slot, epoch, length, records)


class EpochLog(NoCopy):
    """Companion file of a commit participant; see the module docstring.

    ``history`` is what the tracker's participant registry says (epoch_log.h CompanionHistory):
    "unknown" trusts the file's headers; "joined" (it joined every commit since its first)
    requires the file and a governing header of exactly ``active_epoch``; "never" treats the
    content as the leftover of an aborted first join (a writer resets it)."""

    def __init__(
        self,
        path: str,
        active_epoch: int,
        *,
        read_only: bool,
        durable: bool,
        history: str = "unknown",
    ) -> None:
        self.path = path
        self._read_only = read_only
        self._durable = durable
        self._fd = -1
        self._pending: tuple[int, int, int] | None = None  # (slot, epoch, length)
        self._records: list[bytes] = []
        joined = history == "joined"
        try:
            self._fd = open_regular(path, os.O_RDONLY if read_only else os.O_RDWR, "companion file")
            created = False
        except FileNotFoundError:
            if joined:
                raise _corrupt(
                    path,
                    f"it is missing, but the checkpoint (active epoch {active_epoch}) has "
                    "committed with it every epoch since it first joined",
                ) from None
            if read_only:
                self._slot, self._epoch, self._length = -1, 0, HEADER_SIZE
                return
            self._fd = open_regular(path, os.O_RDWR | os.O_CREAT, "companion file")
            created = True
        size = os.fstat(self._fd).st_size
        data = _pread_exact(self._fd, size, 0, path) if size else b""
        self._slot, self._epoch, self._length, self._records = decode_epoch_log(
            data, active_epoch, path
        )
        if joined and (self._slot < 0 or self._epoch != active_epoch):
            if not data:
                holds = "it is empty (0 bytes)"
            elif self._slot < 0:
                holds = f"it holds {len(data)} bytes but no valid header"
            else:
                holds = f"its newest valid header is epoch {self._epoch}"
            raise _corrupt(
                path,
                f"{holds}, but the checkpoint is at epoch {active_epoch} and has committed with "
                "it every epoch since it first joined",
            )
        reset = history == "never"
        if reset:  # leftovers of an aborted first join: not committed
            self._slot, self._epoch, self._length, self._records = -1, 0, HEADER_SIZE, []
        if read_only:
            return
        # A header of an uncommitted epoch (above the active one) must not survive: a later
        # commit of the tracker without this log attached would otherwise make it count (every
        # header when the log never joined a commit).
        if size >= HEADER_SIZE:
            for i in (0, 1):
                raw = data[i * SLOT_SIZE : (i + 1) * SLOT_SIZE]
                state = _decode_header_slot(raw)
                if (reset and state is not None) or (
                    isinstance(state, tuple) and state[0] > active_epoch
                ):
                    _pwrite_all(self._fd, bytes(SLOT_SIZE), i * SLOT_SIZE, path)
        if size < HEADER_SIZE:
            _pwrite_all(self._fd, bytes(HEADER_SIZE), 0, path)
        elif size > self._length:
            os.ftruncate(self._fd, self._length)  # uncommitted appends
        if durable:
            _fsync(self._fd, path)
            if created:
                _fsync_dir(os.path.dirname(os.path.abspath(path)))

    @property
    def has_committed_header(self) -> bool:
        return self._slot >= 0

    @property
    def committed_length(self) -> int:
        return self._length

    def take_committed_records(self) -> list[bytes]:
        records, self._records = self._records, []
        return records

    def prepare_commit(self, epoch: int, payloads: Sequence[bytes]) -> None:
        if self._read_only:
            raise LuminaMoonError(f"EpochLog {self.path} was opened read-only")
        if self._slot >= 0 and epoch <= self._epoch:
            raise ValueError(
                f"EpochLog {self.path}: commit epoch {epoch} is not after the committed epoch "
                f"{self._epoch}"
            )
        buffer = b"".join(_RECORD_HEADER.pack(len(p), zlib.crc32(p)) + bytes(p) for p in payloads)
        if buffer:
            _pwrite_all(self._fd, buffer, self._length, self.path)
            if self._durable:
                _fsync(self._fd, self.path)
        slot = 1 if self._slot == 0 else 0
        length = self._length + len(buffer)
        _pwrite_all(self._fd, encode_header_slot(epoch, length), slot * SLOT_SIZE, self.path)
        if self._durable:
            _fsync(self._fd, self.path)
        self._pending = (slot, epoch, length)

    def finish_commit(self) -> None:
        if self._pending is not None:
            self._slot, self._epoch, self._length = self._pending
            self._pending = None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()

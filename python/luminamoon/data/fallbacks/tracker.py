"""StateTracker: the 128-byte ping-pong ``.meta`` checkpoint and its ``.dedup`` WAL (SPEC 3.2, 3.3).

Pure-Python backend; it writes byte-identical files to the native one. Crash-safety rests on
three orderings, each step durable (fsynced) before the next:

1. staged dedup hashes are appended to the WAL *before* the slot that counts them is written,
   so a valid slot never counts hashes that are not on disk;
2. a commit only ever writes the slot of the *other* parity, so the last good slot survives a
   torn write;
3. RAM is promoted last, so a failed commit leaves the in-memory state at the previous commit.

WAL appends are positional (``pwrite`` at ``dedup_count * 8``), never ``O_APPEND``: bytes left
past the committed length by a failed commit are simply overwritten by the next one, and are cut
off by the truncation every writer does on open.
"""

from __future__ import annotations

import array
import contextlib
import errno
import fcntl
import os
import struct
import sys
import weakref
import zlib
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import CheckpointLockedError, CorruptCheckpointError, LuminaMoonError
from .coordinate import COORDINATE_SIZE, StreamCoordinate
from .suggest import reject_unknown_options

if TYPE_CHECKING:
    from types import TracebackType

    from .dedup import StreamDeduplicator


class CommitParticipant(Protocol):
    """Companion state of a later stage committed with the tracker (see commit_participant.h).

    ``commit()`` calls ``_prepare_commit(epoch, durable)`` on every participant after the WAL
    append and before the slot write (make the staged state durable, tagged with ``epoch``), and
    ``_finish_commit()`` after the slot is durable (RAM only)."""

    def _has_staged(self) -> bool: ...
    def _prepare_commit(self, epoch: int, durable: bool) -> None: ...
    def _finish_commit(self) -> None: ...
    def _drop_staged(self) -> None: ...
    def _tracker_closed(self) -> None: ...


__all__ = ["META_SIZE", "SLOT_SIZE", "WAL_SUFFIX", "CommitParticipant", "StateTracker"]

MAGIC = b"LMDL"
VERSION = 1
SLOT_SIZE = 64
META_SIZE = 2 * SLOT_SIZE
WAL_SUFFIX = ".dedup"
HASH_SIZE = 8

# magic, version, epoch, committed_batch_id, coordinate, dedup_count; then the CRC-32 of these
# 60 bytes.
_SLOT_BODY = struct.Struct(f"<4sIQQ{COORDINATE_SIZE}sI")
_CRC = struct.Struct("<I")
assert _SLOT_BODY.size + _CRC.size == SLOT_SIZE

_U32_MAX = 2**32 - 1
_U64_MAX = 2**64 - 1
_ZERO_SLOT = bytes(SLOT_SIZE)
_OPTIONS = ("read_only", "durable")


class _Slot:
    """One decoded, valid slot."""

    __slots__ = ("batch_id", "coordinate", "dedup_count", "epoch")

    def __init__(
        self, epoch: int, batch_id: int, coordinate: StreamCoordinate, dedup_count: int
    ) -> None:
        self.epoch = epoch
        self.batch_id = batch_id
        self.coordinate = coordinate
        self.dedup_count = dedup_count


def encode_slot(epoch: int, batch_id: int, coordinate: StreamCoordinate, dedup_count: int) -> bytes:
    """The 64 bytes of one slot, CRC included."""
    body = _SLOT_BODY.pack(MAGIC, VERSION, epoch, batch_id, coordinate.to_bytes(), dedup_count)
    return body + _CRC.pack(zlib.crc32(body) & 0xFFFFFFFF)


def decode_slot(raw: bytes) -> _Slot | str | None:
    """A valid slot, ``None`` for never written (all zero), or the reason it is invalid."""
    if raw == _ZERO_SLOT:
        return None
    body = raw[: _SLOT_BODY.size]
    magic, version, epoch, batch_id, coord, dedup_count = _SLOT_BODY.unpack(body)
    if magic != MAGIC:
        return "bad magic"
    if version != VERSION:
        return f"unsupported version {version}"
    (stored,) = _CRC.unpack(raw[_SLOT_BODY.size :])
    computed = zlib.crc32(body) & 0xFFFFFFFF
    if stored != computed:
        return f"CRC mismatch (stored 0x{stored:08x}, computed 0x{computed:08x})"
    return _Slot(epoch, batch_id, StreamCoordinate.from_bytes(coord), dedup_count)


def _pwrite_all(fd: int, data: bytes, offset: int, filename: str) -> None:
    view = memoryview(data)
    try:
        while view:
            written = os.pwrite(fd, view, offset)
            view = view[written:]
            offset += written
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, filename) from exc


def _pread_exact(fd: int, size: int, offset: int, filename: str) -> bytes:
    chunks: list[bytes] = []
    try:
        while size > 0:
            chunk = os.pread(fd, size, offset)
            if not chunk:
                raise CorruptCheckpointError(f"{filename}: file shrank while it was being read")
            chunks.append(chunk)
            size -= len(chunk)
            offset += len(chunk)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, filename) from exc
    return b"".join(chunks)


def _fsync(fd: int, filename: str) -> None:
    """fdatasync, like the native tracker: data and file size are all the formats need."""
    try:
        os.fdatasync(fd)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, filename) from exc


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _fsync(fd, directory)
    finally:
        os.close(fd)


def _hashes_to_bytes(hashes: list[int]) -> bytes:
    packed = array.array("Q", hashes)
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.tobytes()


def _bytes_to_hashes(raw: bytes) -> array.array[int]:
    hashes = array.array("Q")
    hashes.frombytes(raw)
    if sys.byteorder != "little":
        hashes.byteswap()
    return hashes


class StateTracker:
    """Crash-safe commit point of a stream: epoch, batch id, coordinate and dedup WAL length."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        durable: bool = True,
        **options: Any,
    ) -> None:
        # Set first so that close()/__del__ are safe whatever fails below.
        self._meta_fd = -1
        self._wal_fd = -1
        self._closed = True
        reject_unknown_options("StateTracker", options, _OPTIONS)
        if not isinstance(read_only, bool):
            raise TypeError(
                f"StateTracker: read_only must be a bool, got {type(read_only).__name__}"
            )
        if not isinstance(durable, bool):
            raise TypeError(f"StateTracker: durable must be a bool, got {type(durable).__name__}")
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(
                f"StateTracker: path must be a str or os.PathLike, got {type(path).__name__}"
            )
        self._path: str = os.fsdecode(path)
        self._wal_path = self._path + WAL_SUFFIX
        self._read_only = read_only
        self._durable = durable
        # Weak, like the native tracker's raw pointer: a deduplicator that is garbage-collected
        # detaches itself (its staged hashes go with it); the deduplicator holds the tracker.
        self._dedup_ref: weakref.ref[StreamDeduplicator] | None = None
        # Weak for the same reason; a collected participant simply drops out.
        self._participant_refs: list[weakref.ref[CommitParticipant]] = []
        self._staged: tuple[int, StreamCoordinate] | None = None

        self._epoch = 0
        self._batch_id = 0
        self._coordinate = StreamCoordinate()
        self._dedup_count = 0
        self._active: str | None = None

        if read_only:
            self._open_reader()
        else:
            try:
                self._open_writer()
            except BaseException:
                self._release()
                raise
        self._closed = False

    # -- opening ----------------------------------------------------------------------------

    def _open_reader(self) -> None:
        try:
            fd = os.open(self._path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return  # read-only never creates: a missing checkpoint is the fresh state
        try:
            self._load_meta(fd)
        finally:
            os.close(fd)
        try:
            wal_size = os.stat(self._wal_path).st_size
        except FileNotFoundError:
            wal_size = -1
        self._check_wal_size(wal_size)

    def _open_writer(self) -> None:
        sync_dir = False
        flags = os.O_RDWR | os.O_CLOEXEC
        try:
            self._meta_fd = os.open(self._path, flags | os.O_CREAT | os.O_EXCL, 0o666)
            sync_dir = True
        except FileExistsError:
            self._meta_fd = os.open(self._path, flags)
        try:
            fcntl.flock(self._meta_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise CheckpointLockedError(
                    f"{self._path}: checkpoint is locked by another StateTracker (in this or "
                    "another process); close it first, or open with read_only=True to only read"
                ) from None
            raise OSError(exc.errno, exc.strerror, self._path) from exc

        if self._load_meta(self._meta_fd):
            # Missing, or creation was interrupted before the 128 zero bytes were down.
            _pwrite_all(self._meta_fd, bytes(META_SIZE), 0, self._path)
            if self._durable:
                _fsync(self._meta_fd, self._path)
            sync_dir = True

        needed = self._dedup_count * HASH_SIZE
        if self._dedup_count == 0:
            try:
                self._wal_fd = os.open(self._wal_path, flags | os.O_CREAT | os.O_EXCL, 0o666)
                sync_dir = True
            except FileExistsError:
                self._wal_fd = os.open(self._wal_path, flags)
        else:
            try:
                self._wal_fd = os.open(self._wal_path, flags)
            except FileNotFoundError:
                self._check_wal_size(-1)  # raises: committed hashes are missing
                raise
        wal_size = os.fstat(self._wal_fd).st_size
        self._check_wal_size(wal_size)
        if wal_size > needed:
            # Appends of a commit that never completed: discard them.
            try:
                os.ftruncate(self._wal_fd, needed)
            except OSError as exc:
                raise OSError(exc.errno, exc.strerror, self._wal_path) from exc
            if self._durable:
                _fsync(self._wal_fd, self._wal_path)
        if sync_dir and self._durable:
            _fsync_dir(os.path.dirname(os.path.abspath(self._path)))

    def _load_meta(self, fd: int) -> bool:
        """Decode the checkpoint into RAM; True when the file must be (re)initialised."""
        size = os.fstat(fd).st_size
        if size > META_SIZE:
            raise CorruptCheckpointError(
                f"{self._path}: corrupt checkpoint: expected {META_SIZE} bytes, found {size}"
            )
        raw = _pread_exact(fd, size, 0, self._path) if size else b""
        if size < META_SIZE:
            if raw.count(0) == size:
                return True
            raise CorruptCheckpointError(
                f"{self._path}: corrupt checkpoint: expected {META_SIZE} bytes, found {size} "
                "(not all zero)"
            )
        slot_a = decode_slot(raw[:SLOT_SIZE])
        slot_b = decode_slot(raw[SLOT_SIZE:])
        if isinstance(slot_a, str) and isinstance(slot_b, str):
            raise CorruptCheckpointError(
                f"{self._path}: corrupt checkpoint, both slots are invalid (slot A: {slot_a}; "
                f"slot B: {slot_b}); refusing to restart from zero: restore the file from a "
                f"backup, or delete it and {self._wal_path} to start over"
            )
        valid_a = slot_a if isinstance(slot_a, _Slot) else None
        valid_b = slot_b if isinstance(slot_b, _Slot) else None
        if valid_a is not None and (valid_b is None or valid_a.epoch >= valid_b.epoch):
            self._set_committed(valid_a, "A")
        elif valid_b is not None:
            self._set_committed(valid_b, "B")
        # else: never written, or one torn and the other never written: no commit completed.
        return False

    def _check_wal_size(self, wal_size: int) -> None:
        """``wal_size`` -1 means missing."""
        needed = self._dedup_count * HASH_SIZE
        if self._dedup_count > 0 and wal_size < needed:
            found = "it is missing" if wal_size < 0 else f"it has {wal_size}"
            raise CorruptCheckpointError(
                f"{self._wal_path}: corrupt dedup WAL: {self._path} commits "
                f"{self._dedup_count} hashes ({needed} bytes) but {found}; committed hashes "
                "are lost, restore both files from a backup"
            )

    def _set_committed(self, slot: _Slot, name: str) -> None:
        self._epoch = slot.epoch
        self._batch_id = slot.batch_id
        self._coordinate = slot.coordinate
        self._dedup_count = slot.dedup_count
        self._active = name

    # -- lifetime ---------------------------------------------------------------------------

    def _release(self) -> None:
        for name in ("_wal_fd", "_meta_fd"):
            fd = getattr(self, name, -1)
            if fd >= 0:
                setattr(self, name, -1)
                os.close(fd)  # closing the .meta fd drops the flock

    def close(self) -> None:
        """Release the lock and file descriptors; idempotent. Staged changes are dropped."""
        participants = self._participants() if not self._closed else []
        self._participant_refs = []
        self._closed = True
        self._staged = None
        self._release()
        for p in participants:
            p._tracker_closed()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # e.g. interpreter shutdown
            self._release()

    def __enter__(self) -> StateTracker:
        self._check_open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise LuminaMoonError(f"{self._path}: StateTracker is closed")

    def _check_writable(self, what: str) -> None:
        self._check_open()
        if self._read_only:
            raise LuminaMoonError(
                f"{self._path}: StateTracker was opened read_only=True and cannot {what}"
            )

    def __repr__(self) -> str:
        if self._closed:
            return f"StateTracker({self._path!r}, closed)"
        return f"StateTracker({self._path!r}, epoch={self._epoch}, active_slot={self._active!r})"

    # -- committed state --------------------------------------------------------------------

    @property
    def path(self) -> str:
        return self._path

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def epoch(self) -> int:
        self._check_open()
        return self._epoch

    @property
    def committed_batch_id(self) -> int:
        self._check_open()
        return self._batch_id

    @property
    def coordinate(self) -> StreamCoordinate:
        self._check_open()
        return self._coordinate

    @property
    def dedup_count(self) -> int:
        self._check_open()
        return self._dedup_count

    @property
    def active_slot(self) -> str | None:
        self._check_open()
        return self._active

    def read(self) -> tuple[int, int, StreamCoordinate, int]:
        """``(epoch, committed_batch_id, coordinate, dedup_count)`` of the active slot."""
        self._check_open()
        return (self._epoch, self._batch_id, self._coordinate, self._dedup_count)

    @property
    def has_pending(self) -> bool:
        self._check_open()
        return (
            self._staged is not None
            or (self._dedup is not None and self._dedup._staged_count_raw() > 0)
            or any(p._has_staged() for p in self._participants())
        )

    # -- staging and committing -------------------------------------------------------------

    def update(self, batch_id: int, coordinate: StreamCoordinate) -> None:
        """Stage the batch id and coordinate of the next commit (RAM only)."""
        self._check_writable("update")
        # Like StreamCoordinate fields: anything but an in-range int (bool excluded) is a
        # ValueError naming the range.
        if not (
            isinstance(batch_id, int)
            and not isinstance(batch_id, bool)
            and 0 <= batch_id <= _U64_MAX
        ):
            raise ValueError(
                f"StateTracker.update: batch_id must be an int in [0, {_U64_MAX}] (u64), "
                f"got {batch_id!r}"
            )
        if not isinstance(coordinate, StreamCoordinate):
            raise TypeError(
                "StateTracker.update: coordinate must be a StreamCoordinate, got "
                f"{type(coordinate).__name__}"
            )
        self._staged = (batch_id, coordinate)

    def commit(self) -> int:
        """Make the staged state durable (SPEC 3.3 protocol); returns the new epoch."""
        self._check_writable("commit")
        hashes = self._dedup._staged_in_order() if self._dedup is not None else []
        new_epoch = self._epoch + 1
        new_count = self._dedup_count + len(hashes)
        if new_epoch > _U64_MAX:
            raise LuminaMoonError(f"{self._path}: epoch would overflow u64")
        if new_count > _U32_MAX:
            raise LuminaMoonError(
                f"{self._path}: dedup_count would exceed {_U32_MAX} (u32); start a new checkpoint"
            )
        batch_id, coordinate = self._staged or (self._batch_id, self._coordinate)

        # 1. WAL first: the slot written next must never count hashes that are not on disk.
        if hashes:
            _pwrite_all(
                self._wal_fd,
                _hashes_to_bytes(hashes),
                self._dedup_count * HASH_SIZE,
                self._wal_path,
            )
            if self._durable:
                _fsync(self._wal_fd, self._wal_path)
        # 1b. Companion state of later stages, tagged with the epoch the slot will carry.
        participants = self._participants()
        for p in participants:
            p._prepare_commit(new_epoch, self._durable)
        # 2. The slot of the new epoch's parity; the other slot keeps the previous commit.
        slot_name = "A" if new_epoch % 2 == 1 else "B"
        offset = 0 if slot_name == "A" else SLOT_SIZE
        raw = encode_slot(new_epoch, batch_id, coordinate, new_count)
        _pwrite_all(self._meta_fd, raw, offset, self._path)
        if self._durable:
            _fsync(self._meta_fd, self._path)
        # 3. RAM last.
        self._epoch = new_epoch
        self._batch_id = batch_id
        self._coordinate = coordinate
        self._dedup_count = new_count
        self._active = slot_name
        self._staged = None
        if self._dedup is not None:
            self._dedup._promote_staged()
        for p in participants:
            p._finish_commit()
        return new_epoch

    def rollback(self) -> None:
        """Drop the staged update and the attached deduplicator's staged hashes."""
        self._check_writable("rollback")
        self._staged = None
        if self._dedup is not None:
            self._dedup._drop_staged()
        for p in self._participants():
            p._drop_staged()

    # -- commit participants (companion state of later stages) ------------------------------

    def _participants(self) -> list[CommitParticipant]:
        live = [p for ref in self._participant_refs if (p := ref()) is not None]
        if len(live) != len(self._participant_refs):
            self._participant_refs = [weakref.ref(p) for p in live]
        return live

    def _attach_participant(self, participant: CommitParticipant) -> None:
        self._check_writable("attach")
        if all(p is not participant for p in self._participants()):
            self._participant_refs.append(weakref.ref(participant))

    def _detach_participant(self, participant: CommitParticipant) -> None:
        self._participant_refs = [
            weakref.ref(p) for p in self._participants() if p is not participant
        ]

    # -- deduplicator attachment (called by StreamDeduplicator) -----------------------------

    @property
    def _dedup(self) -> StreamDeduplicator | None:
        return self._dedup_ref() if self._dedup_ref is not None else None

    def _attach(self, dedup: StreamDeduplicator) -> array.array[int]:
        """Register ``dedup`` as this tracker's one deduplicator; returns the committed hashes."""
        self._check_open()
        if self._read_only:
            raise LuminaMoonError(
                f"{self._path}: cannot attach a StreamDeduplicator to a read_only StateTracker"
            )
        if self._dedup is not None:
            raise LuminaMoonError(
                f"{self._path}: this StateTracker already has a StreamDeduplicator attached; "
                "use that one (tracker has at most one)"
            )
        needed = self._dedup_count * HASH_SIZE
        raw = _pread_exact(self._wal_fd, needed, 0, self._wal_path) if needed else b""
        self._dedup_ref = weakref.ref(dedup)
        return _bytes_to_hashes(raw)

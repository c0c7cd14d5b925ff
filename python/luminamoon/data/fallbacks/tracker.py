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
import threading
import weakref
import zlib
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import CheckpointLockedError, CorruptCheckpointError, LuminaMoonError
from ._files import _fsync, _fsync_dir, _pread_exact, _pwrite_all, open_regular
from ._nocopy import NoCopy
from .coordinate import COORDINATE_SIZE, StreamCoordinate
from .epoch_log import EpochLog, decode_epoch_log, newest_header_epoch
from .suggest import reject_unknown_options

if TYPE_CHECKING:
    from collections.abc import Sequence
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
    def _companion_kind(self) -> str: ...


__all__ = [
    "META_SIZE",
    "REGISTRY_SUFFIX",
    "SLOT_SIZE",
    "WAL_SUFFIX",
    "CommitParticipant",
    "StateTracker",
    "open_regular",
]

MAGIC = b"LMDL"
VERSION = 1
SLOT_SIZE = 64
META_SIZE = 2 * SLOT_SIZE
WAL_SUFFIX = ".dedup"
REGISTRY_SUFFIX = ".participants"
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


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _wal_short_message(meta: str, wal: str, have: int, count: int) -> str:
    return (
        f"corrupt checkpoint {meta}: its WAL {wal} holds {_plural(have, 'byte', 'bytes')} but "
        f"the active slot commits {_plural(count, 'hash', 'hashes')} ({count * 8} bytes); "
        "committed dedup state is missing, restore both files from a backup"
    )


def _newest_header_of(path: str) -> int | None:
    """Newest valid EpochLog header epoch of ``path`` (0: none valid), None when missing."""
    try:
        fd = open_regular(path, os.O_RDONLY, "companion file")
    except FileNotFoundError:
        return None
    try:
        size = os.fstat(fd).st_size
        return newest_header_epoch(_pread_exact(fd, size, 0, path) if size else b"")
    finally:
        os.close(fd)


def _companion_kind(participant: CommitParticipant) -> str:
    kind = getattr(participant, "_companion_kind", None)
    return kind() if kind is not None else ""


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


class StateTracker(NoCopy):
    """Crash-safe commit point of a stream: epoch, batch id, coordinate and dedup WAL length.

    Thread-safe like the native tracker: every method takes the tracker's lock, ``commit()``
    holds it throughout, and participants take their own lock after it."""

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
        self._registry: EpochLog | None = None
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
        if "\0" in self._path:
            raise ValueError("embedded null byte")
        self._wal_path = self._path + WAL_SUFFIX
        self._registry_path = self._path + REGISTRY_SUFFIX
        self._read_only = read_only
        self._durable = durable
        self._lock = threading.RLock()
        # Weak, like the native tracker's raw pointers: a participant that is garbage-collected
        # drops out (its staged state goes with it); participants hold the tracker. The exact
        # deduplicator, when attached, is first: its prepare step is the WAL append.
        self._dedup_ref: weakref.ref[StreamDeduplicator] | None = None
        self._participant_refs: list[weakref.ref[CommitParticipant]] = []
        self._registered: list[str] = []  # companion kinds in the registry
        self._registry_present = False
        self._pending_dedup_count = 0
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
            fd = open_regular(self._path, os.O_RDONLY, "checkpoint (.meta)")
        except FileNotFoundError:
            return  # read-only never creates: a missing checkpoint is the fresh state
        try:
            meta_size = os.fstat(fd).st_size
            self._load_meta(fd)
        finally:
            os.close(fd)
        wal_size = self._wal_size_readonly()
        if self._active is None:
            self._check_fresh_state(meta_size, max(wal_size, 0))
        self._check_wal_size(wal_size)
        self._open_registry()

    def _wal_size_readonly(self) -> int:
        try:
            fd = open_regular(self._wal_path, os.O_RDONLY, "WAL (.dedup)")
        except FileNotFoundError:
            return -1
        try:
            return os.fstat(fd).st_size
        finally:
            os.close(fd)

    def _open_writer(self) -> None:
        sync_dir = False
        flags = os.O_RDWR
        try:
            self._meta_fd = open_regular(
                self._path, flags | os.O_CREAT | os.O_EXCL, "checkpoint (.meta)"
            )
            sync_dir = True
        except FileExistsError:
            self._meta_fd = open_regular(self._path, flags, "checkpoint (.meta)")
        try:
            fcntl.flock(self._meta_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise CheckpointLockedError(
                    f"checkpoint {self._path} is locked by another writer (a StateTracker in "
                    "this or another process); close it first, or open this one with "
                    "read_only=True"
                ) from None
            raise OSError(exc.errno, exc.strerror, self._path) from exc

        meta_size = os.fstat(self._meta_fd).st_size
        needs_init = self._load_meta(self._meta_fd)
        # Every cross-file check runs before anything is written or truncated.
        try:
            self._wal_fd = open_regular(self._wal_path, flags, "WAL (.dedup)")
        except FileNotFoundError:
            self._wal_fd = -1
        wal_size = os.fstat(self._wal_fd).st_size if self._wal_fd >= 0 else -1
        if self._active is None:
            self._check_fresh_state(meta_size, max(wal_size, 0))
        self._open_registry()
        if needs_init:
            # Missing, or creation was interrupted before the 128 zero bytes were down.
            _pwrite_all(self._meta_fd, bytes(META_SIZE), 0, self._path)
            if self._durable:
                _fsync(self._meta_fd, self._path)
            sync_dir = True

        needed = self._dedup_count * HASH_SIZE
        self._check_wal_size(wal_size)
        if self._wal_fd < 0:
            self._wal_fd = open_regular(self._wal_path, flags | os.O_CREAT, "WAL (.dedup)")
            sync_dir = True
        elif wal_size > needed:
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
                f"corrupt checkpoint {self._path}: expected {META_SIZE} bytes, found {size}; "
                "restore it from a backup or delete it to restart from zero"
            )
        raw = _pread_exact(fd, size, 0, self._path) if size else b""
        if size < META_SIZE:
            if raw.count(0) == size:
                return True
            raise CorruptCheckpointError(
                f"corrupt checkpoint {self._path}: expected {META_SIZE} bytes, found {size}; "
                "restore it from a backup or delete it to restart from zero"
            )
        slot_a = decode_slot(raw[:SLOT_SIZE])
        slot_b = decode_slot(raw[SLOT_SIZE:])
        if isinstance(slot_a, str) and isinstance(slot_b, str):
            raise CorruptCheckpointError(
                f"corrupt checkpoint {self._path}: both slots are invalid (slot A: {slot_a}; "
                f"slot B: {slot_b}); restore it from a backup or delete it to restart from zero"
            )
        valid_a = slot_a if isinstance(slot_a, _Slot) else None
        valid_b = slot_b if isinstance(slot_b, _Slot) else None
        if valid_a is not None and (valid_b is None or valid_a.epoch >= valid_b.epoch):
            self._set_committed(valid_a, "A")
        elif valid_b is not None:
            self._set_committed(valid_b, "B")
        # else: never written, or one torn and the other never written: no commit completed.
        return False

    def _check_fresh_state(self, meta_size: int, wal_size: int) -> None:
        """No commit ever completed, says the .meta; raise when another file proves one did.

        A first commit that crashed can leave hashes in the WAL (beside a 128-byte .meta) and
        companion headers of epoch 1; anything more means the .meta was wiped or replaced, and
        truncating the WAL or resetting companions now would destroy the only copy of that
        state. Same rules and wording as the native tracker."""
        evidence: list[str] = []
        if wal_size > 0 and meta_size < META_SIZE:
            evidence.append(
                f"its WAL {self._wal_path} holds {_plural(wal_size, 'byte', 'bytes')} "
                f"({_plural(wal_size // HASH_SIZE, 'hash', 'hashes')}), written only by a "
                "commit after the .meta was created"
            )
        kinds: list[str] = []
        newest = _newest_header_of(self._registry_path)
        if newest is not None and newest >= 1:
            if newest >= 2:
                evidence.append(
                    f"the participant registry {self._registry_path} records epoch {newest}, "
                    f"so epoch {newest - 1} was committed"
                )
            with contextlib.suppress(CorruptCheckpointError, OSError):
                with open(self._registry_path, "rb") as f:
                    data = f.read()
                records = decode_epoch_log(data, newest, self._registry_path)[3]
                kinds = [r.decode("utf-8", "surrogateescape") for r in records]
        for kind in kinds:
            companion = self._companion_path(kind)
            epoch = _newest_header_of(companion)
            if epoch is not None and epoch >= 2:
                evidence.append(f"the companion {companion} records epoch {epoch}")
        if not evidence:
            return
        if wal_size > 0 and meta_size == META_SIZE:
            evidence.append(
                f"its WAL {self._wal_path} holds {_plural(wal_size, 'byte', 'bytes')} "
                f"({_plural(wal_size // HASH_SIZE, 'hash', 'hashes')})"
            )
        raise CorruptCheckpointError(
            f"corrupt checkpoint {self._path}: it holds no committed slot ({meta_size} bytes) "
            f"but {'; '.join(evidence)}. A commit completed, so the .meta was wiped or "
            f"replaced; nothing was truncated. Restore {self._path} from a backup, or delete it "
            "and its companion files to restart from zero"
        )

    def _open_registry(self) -> None:
        """Which companion kinds have joined a commit (``<meta>.participants``)."""
        if not os.path.exists(self._registry_path):
            return  # nothing registered; a writer creates it when a commit needs it
        self._registry_present = True
        log = EpochLog(
            self._registry_path, self._epoch, read_only=self._read_only, durable=self._durable
        )
        self._registered = [
            r.decode("utf-8", "surrogateescape") for r in log.take_committed_records()
        ]
        if self._read_only:
            log.close()
        else:
            self._registry = log

    def _check_wal_size(self, wal_size: int) -> None:
        """``wal_size`` -1 means missing."""
        if self._dedup_count > 0 and wal_size < self._dedup_count * HASH_SIZE:
            raise CorruptCheckpointError(
                _wal_short_message(self._path, self._wal_path, max(wal_size, 0), self._dedup_count)
            )

    def _set_committed(self, slot: _Slot, name: str) -> None:
        self._epoch = slot.epoch
        self._batch_id = slot.batch_id
        self._coordinate = slot.coordinate
        self._dedup_count = slot.dedup_count
        self._active = name

    def _companion_path(self, kind: str) -> str:
        return f"{self._path}.{kind}"

    # -- lifetime ---------------------------------------------------------------------------

    def _release(self) -> None:
        registry, self._registry = getattr(self, "_registry", None), None
        if registry is not None:
            registry.close()
        for name in ("_wal_fd", "_meta_fd"):
            fd = getattr(self, name, -1)
            if fd >= 0:
                setattr(self, name, -1)
                os.close(fd)  # closing the .meta fd drops the flock

    def close(self) -> None:
        """Release the lock and file descriptors; idempotent. Staged changes are dropped."""
        with self._lock:
            participants = self._participants() if not self._closed else []
            self._participant_refs = []
            self._dedup_ref = None
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
        with self._lock:
            self._check_open()
            return (self._epoch, self._batch_id, self._coordinate, self._dedup_count)

    @property
    def has_pending(self) -> bool:
        with self._lock:
            self._check_open()
            return self._staged is not None or any(p._has_staged() for p in self._participants())

    # -- staging and committing -------------------------------------------------------------

    def update(self, batch_id: int, coordinate: StreamCoordinate) -> None:
        """Stage the batch id and coordinate of the next commit (RAM only)."""
        # Like StreamCoordinate fields: anything but an in-range int (bool excluded) is a
        # ValueError naming the range.
        if not (
            isinstance(batch_id, int)
            and not isinstance(batch_id, bool)
            and 0 <= batch_id <= _U64_MAX
        ):
            raise ValueError(
                f"StateTracker.update: batch_id must be an int in [0, {_U64_MAX}], got {batch_id!r}"
            )
        if not isinstance(coordinate, StreamCoordinate):
            raise TypeError(
                "StateTracker.update: coordinate must be a StreamCoordinate, got "
                f"{type(coordinate).__name__}"
            )
        with self._lock:
            self._check_writable("update")
            if batch_id < self._batch_id:
                raise ValueError(
                    f"StateTracker.update: batch_id {batch_id} is lower than the committed batch "
                    f"id {self._batch_id} of {self._path}; batch ids never go back (start a new "
                    "checkpoint to restart a stream)"
                )
            self._staged = (batch_id, coordinate)

    def _append_wal(self, hashes: Sequence[int]) -> None:
        """The deduplicator's prepare step (tracker lock held): WAL append + fsync."""
        new_count = self._pending_dedup_count + len(hashes)
        if new_count > _U32_MAX:
            raise LuminaMoonError(
                f"StateTracker.commit: {self._path} would hold {new_count} committed hashes; the "
                f"checkpoint format (dedup_count u32) allows at most {_U32_MAX}"
            )
        if not hashes:
            return
        # Positional, never O_APPEND: a failed earlier attempt is simply overwritten; durable
        # before the slot written next can count it.
        _pwrite_all(
            self._wal_fd,
            _hashes_to_bytes(list(hashes)),
            self._pending_dedup_count * HASH_SIZE,
            self._wal_path,
        )
        if self._durable:
            _fsync(self._wal_fd, self._wal_path)
        self._pending_dedup_count = new_count

    def commit(self) -> int:
        """Make the staged state durable (SPEC 3.3 protocol); returns the new epoch."""
        with self._lock:
            self._check_writable("commit")
            participants = self._participants()
            kinds = [_companion_kind(p) for p in participants]
            for kind in self._registered:
                if kind not in kinds:
                    raise LuminaMoonError(
                        f"StateTracker.commit: checkpoint {self._path} has committed with its "
                        f"{kind} companion ({self._companion_path(kind)}) and must keep doing so; "
                        "attach that stage (e.g. a MinHashDeduplicator for 'minhash') before "
                        "committing, so its state stays in step with the stream"
                    )
            new_epoch = self._epoch + 1
            if new_epoch > _U64_MAX:
                raise LuminaMoonError(f"{self._path}: epoch would overflow u64")
            batch_id, coordinate = self._staged or (self._batch_id, self._coordinate)

            # Registry: companion kinds joining for the first time, and the proof that commit 1
            # landed (its first header, written by commit 2).
            joining: list[str] = []
            for kind in kinds:
                if kind and kind not in self._registered and kind not in joining:
                    joining.append(kind)
            has_header = self._registry is not None and self._registry.has_committed_header
            write_registry = bool(joining) or (new_epoch >= 2 and not has_header)
            if write_registry:
                if self._registry is None:
                    self._registry = EpochLog(
                        self._registry_path, self._epoch, read_only=False, durable=self._durable
                    )
                    self._registry_present = True
                self._registry.prepare_commit(
                    new_epoch, [k.encode("utf-8", "surrogateescape") for k in joining]
                )

            # 1. Every participant makes its staged state durable: the deduplicator (first)
            #    appends to the WAL, the others write their companions tagged new_epoch.
            self._pending_dedup_count = self._dedup_count
            for p in participants:
                p._prepare_commit(new_epoch, self._durable)
            new_count = self._pending_dedup_count
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
            if write_registry and self._registry is not None:
                self._registry.finish_commit()
                self._registered.extend(joining)
            for p in participants:
                p._finish_commit()
            return new_epoch

    def rollback(self) -> None:
        """Drop the staged update and every participant's staged state."""
        with self._lock:
            self._check_writable("rollback")
            self._staged = None
            for p in self._participants():
                p._drop_staged()

    # -- commit participants (the deduplicator first, then companions of later stages) -------

    def _participants(self) -> list[CommitParticipant]:
        live = [p for ref in self._participant_refs if (p := ref()) is not None]
        if len(live) != len(self._participant_refs):
            self._participant_refs = [weakref.ref(p) for p in live]
        return live

    def _attach_participant(self, participant: CommitParticipant) -> None:
        with self._lock:
            self._check_writable("attach")
            if all(p is not participant for p in self._participants()):
                self._participant_refs.append(weakref.ref(participant))

    def _detach_participant(self, participant: CommitParticipant) -> None:
        with self._lock:
            self._participant_refs = [
                weakref.ref(p) for p in self._participants() if p is not participant
            ]

    def _companion_history(self, kind: str) -> str:
        """ "joined" (registered: joined every commit since), "never" (the registry exists
        without it) or "unknown" (no registry); see epoch_log.h CompanionHistory."""
        with self._lock:
            if kind in self._registered:
                return "joined"
            return "never" if self._registry_present else "unknown"

    # -- deduplicator attachment (called by StreamDeduplicator) -----------------------------

    @property
    def _dedup(self) -> StreamDeduplicator | None:
        return self._dedup_ref() if self._dedup_ref is not None else None

    def _attach(self, dedup: StreamDeduplicator) -> array.array[int]:
        """Register ``dedup`` as this tracker's one deduplicator; returns the committed hashes."""
        with self._lock:
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
            # First in commit order: its prepare step is the WAL append.
            self._participant_refs.insert(0, weakref.ref(dedup))
            return _bytes_to_hashes(raw)

"""POSIX helpers of the durable fallback formats (.meta, .dedup, companion EpochLogs).

Every failure names the file; opens never block and refuse anything but a regular file, worded
like the native ``internal::PosixFile`` / ``require_regular_file``.
"""

from __future__ import annotations

import os
import stat

from ..errors import CorruptCheckpointError

__all__ = ["_fsync", "_fsync_dir", "_pread_exact", "_pwrite_all", "open_regular"]


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


_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _non_regular_kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return ""
    for test, kind in _FILE_KINDS:
        if test(mode):
            return kind
    return "not a regular file"


def open_regular(path: str, flags: int, what: str, mode: int = 0o666) -> int:
    """``os.open`` for a checkpoint file: never blocks (a FIFO without a writer would block an
    ``O_RDONLY`` open forever) and raises CorruptCheckpointError for anything but a regular file,
    worded like the native ``require_regular_file``. ``FileNotFoundError`` passes through."""
    fd = os.open(path, flags | os.O_CLOEXEC | os.O_NONBLOCK, mode)
    try:
        kind = _non_regular_kind(os.fstat(fd).st_mode)
        if kind:
            raise CorruptCheckpointError(_not_regular_message(path, what, kind))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _not_regular_message(path: str, what: str, kind: str) -> str:
    return (
        f"corrupt checkpoint file {path}: the {what} is {kind}, not a regular file; a "
        "checkpoint's files (.meta, .dedup, companions) must be regular files"
    )

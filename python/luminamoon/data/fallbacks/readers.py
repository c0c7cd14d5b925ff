"""Readers of .jsonl / .txt shards and JSON dotted-path extraction, pure-Python backend.

Same API, batches, coordinates, issues and stats as the native module; docs/readers.md is the
contract. ``json`` is the parser, made as strict as simdjson (the native parser): duplicate keys
keep the first value, NaN/Infinity, numbers out of range, lone surrogate escapes and nesting
deeper than 256 are malformed. ``gzip`` streams are decoded with ``zlib`` and ``.zst`` with the
system libzstd through ``ctypes`` (the ``zstandard`` package where it cannot be loaded; see
``libzstd``), both fed the same 4 KiB pieces of the compressed file as the native decoders so a
damaged stream loses exactly the same bytes.
"""

from __future__ import annotations

import errno
import glob
import json
import math
import os
import re
import stat
import struct
import zlib
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any, Final, TypeAlias

from .._optional import require
from ..errors import MalformedInputError
from ._nocopy import NoCopy
from .access_index import (
    KIND_GZIP,
    KIND_ZSTD,
    MIN_SPACING,
    Z_BLOCK,
    Z_BUF_ERROR,
    Z_NO_FLUSH,
    Z_OK,
    Z_STREAM_END,
    AccessPoint,
    IndexHeader,
    Inflater,
    decode_index,
    encode_access_point,
    encode_index_header,
    index_file_name,
    load_zlib,
)
from .coordinate import StreamCoordinate
from .http_input import FileInput, HttpInput, InputError, is_url, name_for_format, open_http_input
from .libzstd import FrameDecoder, SystemFrames, ZstandardFrames, load_zstd
from .suggest import did_you_mean, reject_unknown_options

__all__ = ["DocumentBatch", "ReadIssue", "ShardReader", "extract_field"]

FieldValue: TypeAlias = "str | int | float | bool | None"
PathArg: TypeAlias = "str | os.PathLike[str]"

MAX_JSON_DEPTH: Final = 256
MAX_ISSUES_KEPT: Final = 1000
_FEED_BYTES: Final = 4096  # compressed bytes per decoder step (the unit of loss on damage)
_BLOCK_BYTES: Final = 4 << 20
_U32_MAX: Final = 2**32 - 1
_MAX_KEYS_LISTED: Final = 10
_OPTIONS: Final = (
    "text_field",
    "fields",
    "format",
    "txt_mode",
    "batch_size",
    "start",
    "strict",
    "max_record_bytes",
    "threads",
    "index_dir",
    "index_spacing",
    "http_retries",
    "http_backoff",
    "http_timeout",
)
_FORMATS: Final = ("auto", "jsonl", "txt")
_TXT_MODES: Final = ("line", "paragraph", "file")
_ISSUE_KINDS: Final = (
    "unmatched_glob",
    "unreadable_shard",
    "decompression_error",
    "record_too_long",
    "malformed_json",
    "missing_field",
    "non_string_field",
    "missing_extra_field",
    "non_scalar_extra_field",
)
_STAT_OF_KIND: Final = {
    "unmatched_glob": "unmatched_globs",
    "unreadable_shard": "unreadable_shards",
    "decompression_error": "decompression_errors",
    "record_too_long": "record_too_long",
    "malformed_json": "malformed_json",
    "missing_field": "missing_field",
    "non_string_field": "non_string_field",
    "missing_extra_field": "missing_extra_field",
    "non_scalar_extra_field": "non_scalar_extra_field",
}
_BLANK_BYTES: Final = b" \t\r"
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
# Every escape of a record, left to right (so an escaped backslash is consumed as a pair).
_ESCAPE = re.compile(rb"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)
# Tokens of a valid JSON record: strings, brackets, and runs of anything else (numbers, literals).
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]|[^\s\[\]{}",:]+', re.DOTALL)
_DIGITS = re.compile(r"[0-9]+")

# -- JSON -----------------------------------------------------------------------------------


class _MalformedError(Exception):
    """A record that is not one valid JSON value (message ready for the user)."""


class _FieldPath:
    """A dotted path split into segments; all-digit segments also index arrays."""

    __slots__ = ("dotted", "indexes", "segments")

    def __init__(self, dotted: str) -> None:
        segments = dotted.split(".")
        if any(not s for s in segments):
            raise ValueError(
                f"invalid field path '{dotted}': empty segment (write dotted keys like "
                "'meta.body' or 'messages.0.content')"
            )
        self.dotted = dotted
        self.segments = segments
        self.indexes: list[int | None] = []
        for s in segments:
            index = int(s) if _DIGITS.fullmatch(s) and len(s) <= 20 else None
            self.indexes.append(index if index is not None and index < 2**64 else None)

    def prefix(self, i: int) -> str:
        return ".".join(self.segments[:i])


def _first_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        obj.setdefault(key, value)  # duplicate keys: the first occurrence wins, as in simdjson
    return obj


def _parse_int(token: str) -> int:
    value = int(token)  # ValueError past 4300 digits: malformed either way
    if not -(2**63) <= value < 2**64:
        raise ValueError("integer out of range (JSON integers must fit int64 or uint64)")
    return value


def _parse_float(token: str) -> float:
    value = float(token)
    if math.isinf(value):
        raise ValueError("number out of range")
    return value


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


_DECODER = json.JSONDecoder(
    object_pairs_hook=_first_wins,
    parse_int=_parse_int,
    parse_float=_parse_float,
    parse_constant=_reject_constant,
)


def _check_surrogate_escapes(record: bytes) -> None:
    """Raise _MalformedError unless every \\uD800-\\uDBFF escape is directly followed by a
    \\uDC00-\\uDFFF one and every low one follows a high one (json.loads accepts lone ones;
    simdjson does not). Scanning the raw escapes also covers strings that duplicate keys hide."""
    pending_end = -1  # end of a high-surrogate escape still waiting for its low half
    for match in _ESCAPE.finditer(record):
        hex_digits = match.group(1)
        unit = int(hex_digits, 16) if hex_digits is not None else -1
        if 0xDC00 <= unit <= 0xDFFF:
            if match.start() != pending_end:
                raise _MalformedError(
                    f"malformed JSON at byte {match.start()}: lone surrogate escape"
                )
            pending_end = -1
            continue
        if pending_end >= 0:
            raise _MalformedError(
                f"malformed JSON at byte {pending_end - 6}: lone surrogate escape"
            )
        if 0xD800 <= unit <= 0xDBFF:
            pending_end = match.end()
    if pending_end >= 0:
        raise _MalformedError(f"malformed JSON at byte {pending_end - 6}: lone surrogate escape")


def _check_depth(record: bytes) -> None:
    """Raise _MalformedError when a value sits deeper than MAX_JSON_DEPTH (the root is depth 1).

    Runs on the raw bytes of a record json.loads accepted, so values that duplicate keys hide
    count too: an empty container at nesting k is at depth k, anything inside it at k + 1.
    """
    depth = 0
    deepest = 1
    for match in _TOKEN.finditer(record):
        first = match.group()[0]
        if first in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif first in b"]}":
            depth -= 1
        else:  # a scalar or a key: one level below its container
            deepest = max(deepest, depth + 1)
        if deepest > MAX_JSON_DEPTH:
            raise _MalformedError(f"malformed JSON: nested deeper than {MAX_JSON_DEPTH} levels")


def _loads(record: bytes) -> Any:
    """Parse one record as strictly as the native backend; raise _MalformedError otherwise."""
    try:
        text = record.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _MalformedError(f"malformed JSON: invalid UTF-8 at byte {exc.start}") from None
    if not text.strip(" \t\r\n"):
        raise _MalformedError("malformed JSON: no value (the record is empty)")
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        at = len(text[: exc.pos].encode("utf-8"))
        raise _MalformedError(f"malformed JSON at byte {at}: {exc.msg}") from None
    except RecursionError:
        raise _MalformedError(
            f"malformed JSON: nested deeper than {MAX_JSON_DEPTH} levels"
        ) from None
    except ValueError as exc:  # from the number and constant hooks
        raise _MalformedError(f"malformed JSON: {exc}") from None
    if _SURROGATE_ESCAPE.search(record) is not None:
        _check_surrogate_escapes(record)
    if record.count(b"[") + record.count(b"{") >= MAX_JSON_DEPTH:
        _check_depth(record)  # fewer containers than the limit cannot nest that deep
    return value


def _type_phrase(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def _where(path: _FieldPath, i: int) -> str:
    return "the record" if i == 0 else f"'{path.prefix(i)}'"


def _missing_key_message(path: _FieldPath, i: int, obj: dict[str, Any]) -> str:
    not_found = f"field '{path.dotted}' not found; "
    keys = list(obj)
    if not keys:
        return f"{not_found}{_where(path, i)} is an empty object"
    name = path.segments[i]
    # The distance is at least the length difference: far-off keys can never be suggested.
    limit = max(2, len(name) // 3)
    close = [k for k in keys if abs(len(k) - len(name)) <= limit]
    best = did_you_mean(name, close)
    if best is not None:
        prefix = path.prefix(i) + "." if i > 0 else ""
        return f"{not_found}did you mean '{prefix}{best}'?"
    listed = ", ".join(f"'{k}'" for k in keys[:_MAX_KEYS_LISTED])
    more = f" and {len(keys) - _MAX_KEYS_LISTED} more" if len(keys) > _MAX_KEYS_LISTED else ""
    return f"{not_found}{_where(path, i)} has keys {listed}{more}"


def _follow(root: Any, path: _FieldPath) -> tuple[bool, Any]:
    """(True, value) or (False, message) for the value at ``path``."""
    not_found = f"field '{path.dotted}' not found; "
    current = root
    for i, segment in enumerate(path.segments):
        if isinstance(current, dict):
            if segment not in current:
                return False, _missing_key_message(path, i, current)
            current = current[segment]
        elif isinstance(current, list):
            index = path.indexes[i]
            if index is None:
                return False, f"{not_found}{_where(path, i)} is an array (index it with a number)"
            if index >= len(current):
                n = len(current)
                return False, f"{not_found}{_where(path, i)} has {n} element{'' if n == 1 else 's'}"
            current = current[index]
        else:
            return False, f"{not_found}{_where(path, i)} is {_type_phrase(current)}, not an object"
    return True, current


def _find_string(root: Any, path: _FieldPath) -> tuple[str, str | None, str]:
    """(status, value, message) with status "found", "missing" or "wrong_type"."""
    found, value = _follow(root, path)
    if not found:
        return "missing", None, value
    if not isinstance(value, str):
        return "wrong_type", None, f"field '{path.dotted}' is {_type_phrase(value)}, not a string"
    return "found", value, ""


def _find_scalar(root: Any, path: _FieldPath) -> tuple[str, Any, str]:
    found, value = _follow(root, path)
    if not found:
        return "missing", None, value
    if isinstance(value, (dict, list)):
        return (
            "wrong_type",
            None,
            f"field '{path.dotted}' is {_type_phrase(value)}, not a string, number, boolean or "
            "null",
        )
    return "found", value, ""


def _record_bytes(record: object) -> bytes:
    if isinstance(record, str):
        try:
            return record.encode("utf-8")
        except UnicodeEncodeError:
            raise MalformedInputError(
                "malformed JSON: the record str contains a lone surrogate, which is not valid UTF-8"
            ) from None
    if isinstance(record, bytes):
        return record
    try:
        view = memoryview(record)  # type: ignore[arg-type]  # any buffer, like the native module
    except TypeError:
        raise TypeError(
            f"record: expected str or bytes-like, got {type(record).__name__}"
        ) from None
    with view:
        if not view.c_contiguous:
            raise TypeError("record: expected a contiguous bytes-like object")
        return view.tobytes()


def extract_field(record: str | bytes | bytearray | memoryview, path: str) -> str:
    """Parse one JSON record and return the string at the dotted ``path``, fully unescaped.

    Malformed JSON, a missing path (with a "did you mean" suggestion among the keys present
    where the lookup failed) or a non-string value raise ``MalformedInputError``.
    """
    if not isinstance(path, str):
        raise TypeError(f"path: expected str, got {type(path).__name__}")
    field = _FieldPath(path)
    data = _record_bytes(record)
    try:
        root = _loads(data)
    except _MalformedError as exc:
        raise MalformedInputError(str(exc)) from None
    status, value, message = _find_string(root, field)
    if status != "found":
        raise MalformedInputError(message)
    assert value is not None
    return value


# -- public value types ---------------------------------------------------------------------


class ReadIssue:
    """One bad record or shard: where it is, what kind of problem, and why."""

    __slots__ = ("byte_offset", "field", "kind", "line", "message", "path", "shard_id")

    shard_id: int | None
    path: str
    line: int
    byte_offset: int
    field: str | None
    kind: str
    message: str

    def __init__(  # noqa: PLR0917 - a record of seven fields
        self,
        shard_id: int | None,
        path: str,
        line: int,
        byte_offset: int,
        field: str | None,
        kind: str,
        message: str,
    ) -> None:
        for name, value in (
            ("shard_id", shard_id),
            ("path", path),
            ("line", line),
            ("byte_offset", byte_offset),
            ("field", field),
            ("kind", kind),
            ("message", message),
        ):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("ReadIssue is read-only")

    def _values(self) -> tuple[Any, ...]:
        return (
            self.shard_id,
            self.path,
            self.line,
            self.byte_offset,
            self.field,
            self.kind,
            self.message,
        )

    def __str__(self) -> str:
        return f"{self.path}:{self.line} (byte {self.byte_offset}): {self.message}"

    def __repr__(self) -> str:
        return (
            f"ReadIssue(shard_id={self.shard_id!r}, path={self.path!r}, line={self.line!r}, "
            f"byte_offset={self.byte_offset!r}, field={self.field!r}, kind={self.kind!r}, "
            f"message={self.message!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReadIssue):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(str(self))


class DocumentBatch:
    """Documents read by a ShardReader, with the coordinate after each."""

    __slots__ = ("_coordinates", "_end", "_fields", "_texts")

    def __init__(
        self,
        texts: list[str],
        fields: dict[str, list[FieldValue]],
        coordinates: list[StreamCoordinate],
        end: StreamCoordinate,
    ) -> None:
        self._texts = texts
        self._fields = fields
        self._coordinates = coordinates
        self._end = end

    @property
    def texts(self) -> list[str]:
        return self._texts

    @property
    def fields(self) -> dict[str, list[FieldValue]]:
        return self._fields

    @property
    def coordinates(self) -> list[StreamCoordinate]:
        return self._coordinates

    @property
    def end(self) -> StreamCoordinate:
        return self._end

    def __len__(self) -> int:
        return len(self._texts)

    def __repr__(self) -> str:
        return f"DocumentBatch(documents={len(self._texts)}, end={self._end!r})"


# -- byte sources ---------------------------------------------------------------------------


class _Source:
    """The uncompressed bytes of one shard. ``read`` returns b"" at the end (see ``error``)."""

    error: str = ""
    decompression_failed: bool = False

    def read(self, size: int) -> bytes:
        raise NotImplementedError

    def skip(self, count: int) -> tuple[int, int | None]:
        """Move past ``count`` bytes: (bytes passed, newlines in them or None if not counted)."""
        done = lines = 0
        while done < count:
            piece = self.read(min(1 << 16, count - done))
            if not piece:
                break
            lines += piece.count(b"\n")
            done += len(piece)
        return done, lines

    def close(self) -> None:
        raise NotImplementedError


class _PlainSource(_Source):
    def __init__(self, source: Any) -> None:
        self._input = source
        self._position = 0

    def read(self, size: int) -> bytes:
        if self.error:
            return b""
        try:
            data: bytes = self._input.pread(min(size, 1 << 20), self._position)
        except InputError as exc:
            self.error = f"read error after {self._position} bytes: {exc}"
            return b""
        self._position += len(data)
        return data

    def skip(self, count: int) -> tuple[int, int | None]:
        self._position = min(count, self._input.size)
        return self._position, None

    def close(self) -> None:
        self._input.close()


class _IndexFile:
    """The access-point index of one compressed shard: what the file holds, and the appends.
    Any I/O error disables it (it is a cache)."""

    def __init__(self, path: str, header: IndexHeader) -> None:
        self.path = path
        self.header = header
        self.usable = True
        self.indexed_end = 0
        self._loaded = False
        self._matches = False
        self._valid_bytes = 0
        self._fd = -1

    def load(self, target: int) -> AccessPoint | None:
        self._loaded = True
        try:
            fd = _open_nonblocking(self.path)
        except FileNotFoundError:
            return None
        except OSError:
            self.usable = False
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                self.usable = False  # never write to a FIFO or a device named like an index
                return None
            os.set_blocking(fd, True)
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
        except OSError:
            self.usable = False
            return None
        finally:
            os.close(fd)
        index, _ = decode_index(b"".join(chunks))
        if index is None or index.header != self.header:
            return None  # stale or foreign: rewritten at the first append
        self._valid_bytes = index.valid_bytes
        self._matches = True
        best = None
        for point in index.points:
            self.indexed_end = point.uncompressed_offset
            if point.uncompressed_offset <= target:
                best = point
        return best

    def append(self, point: AccessPoint) -> None:
        if not self.usable:
            return
        if not self._loaded:
            self.load(0)
        if not self.usable or point.uncompressed_offset <= self.indexed_end:
            return
        try:
            if self._fd < 0:
                self._fd = os.open(
                    self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK, 0o644
                )
                if not stat.S_ISREG(os.fstat(self._fd).st_mode):
                    raise OSError("not a regular file")
                os.set_blocking(self._fd, True)
                if not self._matches:
                    header = encode_index_header(self.header)
                    os.ftruncate(self._fd, 0)
                    os.pwrite(self._fd, header, 0)
                    self._valid_bytes = len(header)
                    self._matches = True
                else:
                    os.ftruncate(self._fd, self._valid_bytes)  # drop a torn tail
            record = encode_access_point(point)
            os.pwrite(self._fd, record, self._valid_bytes)
            self._valid_bytes += len(record)
            self.indexed_end = point.uncompressed_offset
        except OSError:
            self.usable = False
            self.close()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class _CompressedSource(_Source):
    """Feeds the decoder 4 KiB of compressed input per step; a failed step yields nothing.
    Feeds end on multiples of 4 KiB of the file, also after a resume from an access point."""

    def __init__(self, source: Any) -> None:
        self._input = source
        self._file_position = 0
        self._ready = b""
        self._ready_position = 0
        self._finished = False
        self._index: _IndexFile | None = None
        self._uoff = 0  # stream offset of the start of _ready
        self._newlines = 0  # newlines before _uoff (counted while indexing)
        self._chain = 0  # the last point: the next one is one spacing further
        self._pending: list[tuple[int, AccessPoint]] = []

    def enable_index(self, index: _IndexFile) -> None:
        self._index = index

    def _decode(self, data: bytes, offset: int) -> tuple[bytes, str | None]:
        raise NotImplementedError

    def _finish(self) -> str | None:
        raise NotImplementedError

    def _restart(self, point: AccessPoint, prime: int) -> bool:
        raise NotImplementedError

    def _fail(self, message: str) -> None:
        self.error = message
        self.decompression_failed = True

    def _indexing(self) -> bool:
        return self._index is not None and self._index.usable

    def _point_due(self, used: int) -> bool:
        index = self._index
        return (
            index is not None
            and index.usable
            and self._uoff + used >= self._chain + index.header.spacing
        )

    def _offer_point(self, out: list[bytes], used: int, point: AccessPoint) -> None:
        assert self._index is not None
        self._chain = self._uoff + used
        if self._chain <= self._index.indexed_end:
            return
        point.uncompressed_offset = self._chain
        point.newlines = self._newlines + sum(piece.count(b"\n") for piece in out)
        self._pending.append((used, point))

    def skip(self, count: int) -> tuple[int, int | None]:
        index = self._index
        if index is not None and count > 0 and self._uoff == 0 and not self._finished:
            point = index.load(count)
            if point is not None:
                prime, ok = 0, True
                try:
                    if point.bits:
                        byte = self._input.pread(1, point.compressed_offset - 1)
                        ok = len(byte) == 1
                        prime = byte[0] if ok else 0
                except InputError:
                    ok = False
                if ok and self._restart(point, prime):
                    base = point.uncompressed_offset
                    self._uoff = self._chain = base
                    self._newlines = point.newlines
                    aligned = point.compressed_offset // _FEED_BYTES * _FEED_BYTES
                    self._file_position = aligned
                    self._skip_first = point.compressed_offset - aligned
                    done, lines = super().skip(count - base)
                    return base + done, point.newlines + (lines or 0)
        return super().skip(count)

    _skip_first = 0

    def read(self, size: int) -> bytes:
        while self._ready_position == len(self._ready):
            if self._finished:
                return b""
            self._ready, self._ready_position = b"", 0
            self._produce()
        piece = self._ready[self._ready_position : self._ready_position + size]
        self._ready_position += len(piece)
        return piece

    def _produce(self) -> None:
        offset = self._file_position
        try:
            want = _FEED_BYTES - offset % _FEED_BYTES
            chunk = self._input.pread(want, offset)
        except InputError as exc:
            self.error = f"read error after {self._file_position} compressed bytes: {exc}"
            self._finished = True
            return
        self._file_position += len(chunk)
        if self._skip_first:
            chunk = chunk[self._skip_first :]
            offset += self._skip_first
            self._skip_first = 0
        if not chunk:
            message = self._finish()
            if message is not None:
                self._fail(message)
            self._finished = True
            return
        out, message = self._decode(chunk, offset)
        self._ready = out
        if self._index is not None:
            for used, point in self._pending:
                if used <= len(out):
                    self._index.append(point)
            self._pending.clear()
            self._newlines += out.count(b"\n")
        self._uoff += len(out)
        if message is not None:
            self._fail(message)
            self._finished = True

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
        self._input.close()


class _GzipSource(_CompressedSource):
    """gzip members one after another; zero padding between members is skipped."""

    def __init__(self, source: Any) -> None:
        super().__init__(source)
        self._member: Any = None
        self._members = 0

    def _decode(self, data: bytes, offset: int) -> tuple[bytes, str | None]:
        out: list[bytes] = []
        while data:
            if self._member is None:
                if self._members:
                    data = data.lstrip(b"\x00")
                    if not data:
                        break
                self._member = zlib.decompressobj(wbits=31)
            try:
                out.append(self._member.decompress(data))
            except zlib.error as exc:
                reason = str(exc).split(": ", 1)[-1]
                return b"".join(out), f"corrupt gzip stream: {reason}"
            if not self._member.eof:
                break
            data = self._member.unused_data
            self._member = None
            self._members += 1
        return b"".join(out), None

    def _finish(self) -> str | None:
        if self._member is None:
            return None
        return "truncated gzip stream: the file ends inside a compressed member"

    def _restart(self, point: AccessPoint, prime: int) -> bool:
        return False  # the indexed reader is _IndexedGzipSource


class _IndexedGzipSource(_CompressedSource):
    """gzip through the system zlib (ctypes), stopping at every deflate block boundary so that one
    per spacing becomes an access point; the same steps and checks as native's GzipSource."""

    def __init__(self, source: Any, lib: Any) -> None:
        super().__init__(source)
        self._z = Inflater(lib)
        self._in_member = False
        self._raw = False  # resumed inside this member: raw deflate, trailer checked here
        self._members = 0
        self._member_size = 0
        self._crc = 0
        self._trailer = b""
        self._trailer_needed = 0

    def _end_member(self) -> None:
        self._in_member = self._raw = False
        self._members += 1

    def _decode(self, data: bytes, offset: int) -> tuple[bytes, str | None]:
        out: list[bytes] = []
        pos = 0
        size = len(data)
        z = self._z
        end_mark: int | None = None  # this feed's step that ended the raw member
        while pos < size:
            if self._trailer_needed:
                take = min(size - pos, self._trailer_needed)
                self._trailer += data[pos : pos + take]
                pos += take
                self._trailer_needed -= take
                if self._trailer_needed:
                    break
                crc, isize = struct.unpack("<II", self._trailer)
                if crc != self._crc or isize != self._member_size & 0xFFFFFFFF:
                    # zlib checks the trailer in the step that reached it: a failure drops that
                    # step's output, also the end of the member decoded in the same feed.
                    kept = out if end_mark is None else out[:end_mark]
                    check = "data" if crc != self._crc else "length"
                    return b"".join(kept), f"corrupt gzip stream: incorrect {check} check"
                self._end_member()
                continue
            if not self._in_member:
                if self._members:
                    while pos < size and data[pos] == 0:
                        pos += 1
                    if pos == size:
                        break
                z.reset(15 + 16)
                self._in_member = True
                self._raw = False
                self._member_size = 0
            # One step: this member over the rest of the feed.
            step: list[bytes] = []
            step_start = pos
            z.set_input(data[pos:])
            flush = Z_BLOCK if self._indexing() else Z_NO_FLUSH
            used = sum(len(piece) for piece in out)
            while True:
                rc, produced, room_left = z.inflate(flush)
                if produced:
                    if self._raw:
                        self._crc = zlib.crc32(produced, self._crc)
                    step.append(produced)
                    used += len(produced)
                    self._member_size += len(produced)
                if rc == Z_STREAM_END:
                    break
                if rc not in {Z_OK, Z_BUF_ERROR}:
                    break
                data_type = z.data_type
                if (
                    flush == Z_BLOCK
                    and data_type & 128
                    and not data_type & 64
                    and self._point_due(used)
                ):
                    point = AccessPoint(
                        offset + step_start + (size - step_start - z.avail_in),
                        bits=data_type & 7,
                        member_size=self._member_size,
                        member_crc=self._crc if self._raw else z.adler,
                        window=z.dictionary(),
                    )
                    self._offer_point(out + step, used, point)
                if z.avail_in == 0 and room_left:
                    break  # needs the next feed
            if rc not in {Z_OK, Z_BUF_ERROR, Z_STREAM_END}:
                reason = z.message or f"zlib error {rc}"
                return b"".join(out), f"corrupt gzip stream: {reason}"
            step_mark = len(out)
            out.extend(step)
            pos = size - z.avail_in
            if rc == Z_STREAM_END:
                if self._raw:
                    self._trailer, self._trailer_needed = b"", 8
                    end_mark = step_mark
                else:
                    self._end_member()
        return b"".join(out), None

    def _finish(self) -> str | None:
        if not self._in_member:
            return None
        return "truncated gzip stream: the file ends inside a compressed member"

    def _restart(self, point: AccessPoint, prime: int) -> bool:
        z = self._z
        z.reset(-15)
        if point.bits and not z.prime(point.bits, prime >> (8 - point.bits)):
            return False
        if point.window and not z.set_dictionary(point.window):
            return False
        self._in_member = self._raw = True
        self._members = 1
        self._member_size = point.member_size
        self._crc = point.member_crc
        self._trailer, self._trailer_needed = b"", 0
        return True

    def close(self) -> None:
        self._z.close()
        super().close()


class _ZstdSource(_CompressedSource):
    """zstd frames one after another."""

    def __init__(self, source: Any, frames: FrameDecoder) -> None:
        super().__init__(source)
        self._frames = frames
        self._in_frame = False

    def _decode(self, data: bytes, offset: int) -> tuple[bytes, str | None]:
        out: list[bytes] = []
        total = len(data)
        while data:
            if not self._in_frame:
                self._frames.begin()
                self._in_frame = True
                used = sum(len(piece) for piece in out)
                if self._point_due(used):
                    point = AccessPoint(offset + total - len(data))
                    self._offer_point(out, used, point)
            # One step: this frame over the rest of the feed.
            produced, consumed, frame_done, reason = self._frames.step(data)
            if reason is not None:
                return b"".join(out), f"corrupt zstd stream: {reason}"
            out.append(produced)
            if not frame_done:
                break
            data = data[consumed:]
            self._in_frame = False
        return b"".join(out), None

    def _finish(self) -> str | None:
        if not self._in_frame:
            return None
        return "truncated zstd stream: the file ends inside a frame"

    def _restart(self, point: AccessPoint, prime: int) -> bool:
        self._in_frame = False
        return True

    def close(self) -> None:
        self._frames.close()
        super().close()


def _zstd_frames() -> FrameDecoder:
    """The system libzstd through ctypes (the release the native module is built with), else the
    optional ``zstandard`` package; ImportError when neither is there."""
    lib = load_zstd()
    if lib is not None:
        return SystemFrames(lib)
    zstandard = require(
        "zstandard", "reading .zst shards with the pure-Python backend without a system libzstd"
    )
    return ZstandardFrames(zstandard)


def _open_nonblocking(path: str) -> int:
    """``os.open`` that cannot hang on a FIFO without a writer; blocking mode is restored by the
    caller once the file type is known (checked on the descriptor: no stat-then-open race)."""
    return os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)


def _open_file_input(path: str) -> tuple[FileInput | None, str]:
    try:
        fd = _open_nonblocking(path)
    except IsADirectoryError:
        return None, "it is a directory"
    except OSError as exc:
        return None, str(exc.strerror or exc)
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        return None, str(exc.strerror)
    if stat.S_ISDIR(info.st_mode):
        os.close(fd)
        return None, "it is a directory"
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)  # FIFOs and devices could block or never end: never a hang
        return None, "not a regular file"
    os.set_blocking(fd, True)
    return FileInput(fd, info.st_size, info.st_mtime_ns), ""


def _describe_validators(text: bytes) -> str:
    return ", ".join(text.decode("latin-1").split("\n")[1:]).rstrip(", ")


def _check_remote_validators(directory: str, url: str, current: bytes, start: int) -> str | None:
    """A URL's validators kept beside the checkpoint: written when the shard is read from its
    start, compared when it is resumed; the error message when the remote file changed."""
    name = index_file_name(os.fsencode(url), KIND_GZIP)[:16] + ".http"
    path = os.path.join(directory, name)
    stored: bytes | None = None
    try:
        fd = _open_nonblocking(path)
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.set_blocking(fd, True)
                stored = os.pread(fd, 1 << 16, 0)
        finally:
            os.close(fd)
    except OSError:
        stored = None
    if start > 0 and stored is not None and stored != current:
        return (
            f"the remote shard changed since it was first read (then: "
            f"{_describe_validators(stored)}; now: {_describe_validators(current)}); resuming "
            "would mix two versions of the file: restore it, or restart this shard from offset 0"
        )
    if start == 0 or stored is None:
        try:
            with open(path, "wb") as out:
                out.write(current)
        except OSError:
            pass  # a cache like the index: reading goes on without it
    return None


def _open_source(
    path: str,
    compression: str,
    index: tuple[str, int] | None = None,
    http: tuple[int, float, float] = (4, 0.5, 30.0),
    start: int = 0,
) -> tuple[_Source | None, str]:
    source_input: FileInput | HttpInput | None
    if is_url(path):
        source_input, error = open_http_input(path, *http)
        if source_input is not None and index is not None:
            message = _check_remote_validators(index[0], path, source_input.validators(), start)
            if message is not None:
                source_input.close()
                return None, message
    else:
        source_input, error = _open_file_input(path)
    if source_input is None:
        return None, error
    size, mtime_ns = source_input.identity()
    source: _CompressedSource
    if compression == "gzip":
        lib = load_zlib() if index is not None else None
        source = (
            _IndexedGzipSource(source_input, lib) if lib is not None else _GzipSource(source_input)
        )
        kind = KIND_GZIP
    elif compression == "zstd":
        try:
            frames = _zstd_frames()
        except ImportError:
            source_input.close()
            raise
        source = _ZstdSource(source_input, frames)
        kind = KIND_ZSTD
    else:
        return _PlainSource(source_input), ""
    if index is not None and not (kind == KIND_GZIP and isinstance(source, _GzipSource)):
        directory, spacing = index
        encoded = os.fsencode(path)
        header = IndexHeader(kind, spacing, size, mtime_ns, encoded)
        index_path = os.path.join(directory, index_file_name(encoded, kind))
        source.enable_index(_IndexFile(index_path, header))
    return source, ""


def _count_newlines_in_file(path: str, count: int) -> int | None:
    if is_url(path):
        return None  # not fetched again just for a line number
    try:
        fd = _open_nonblocking(path)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        os.set_blocking(fd, True)
        with open(fd, "rb") as f:
            lines = done = 0
            while done < count:
                piece = f.read(min(1 << 20, count - done))
                if not piece:
                    break
                lines += piece.count(b"\n")
                done += len(piece)
            return lines
    except OSError:
        return None


# -- record splitting -----------------------------------------------------------------------


def _is_blank(line: bytes | bytearray) -> bool:
    return not line.strip(_BLANK_BYTES) if line else True


class _Event:
    __slots__ = (
        "blank_lines",
        "data",
        "end",
        "kind",
        "length",
        "line",
        "message",
        "offset",
        "shard_end",
    )

    def __init__(self, kind: str) -> None:
        self.kind = kind  # "record", "too_long", "source_error", "end"
        self.offset = 0
        self.end = 0
        self.shard_end = False
        self.line = 0
        self.blank_lines = 0
        self.length = 0
        self.data = b""
        self.message = ""


class _Scanner:
    """The native RecordScanner state machine, step for step (see record_scanner.cc)."""

    def __init__(self, source: _Source, mode: str, max_bytes: int, start: int) -> None:
        self.source = source
        self.mode = mode  # "line" | "paragraph" | "file"
        self.max = max_bytes
        self.buf = bytearray()
        self.cur = 0
        self.base = start
        self.start = start
        self.eof = False
        self.done = False
        self.line = 0
        self.blank = 0
        self.para_open = False
        self.para_start = self.para_line = self.para_content_end = 0
        self.skipping = False
        self.skip_start = self.skip_line = self.skip_content_end = 0
        self.skip_line_blank = True
        self.skip_line_start = 0
        self.held: _Event | None = None

    def _stream(self, index: int) -> int:
        return self.base + index

    def _emit(self, events: list[_Event], kind: str) -> _Event:
        e = _Event(kind)
        e.blank_lines = self.blank
        self.blank = 0
        events.append(e)
        return e

    def _refill(self) -> None:
        if self.eof:
            return
        keep = self.cur
        if self.mode == "file":
            keep = len(self.buf) if self.skipping else 0
        elif not self.skipping and self.mode == "paragraph" and self.para_open:
            keep = self.para_start - self.base
        if keep:
            del self.buf[:keep]
            self.base += keep
            self.cur -= keep
        added = 0
        while added < _BLOCK_BYTES:
            piece = self.source.read(_BLOCK_BYTES - added)
            if not piece:
                self.eof = True
                break
            self.buf += piece
            added += len(piece)

    def next_block(self) -> list[_Event]:
        events: list[_Event] = []
        if self.done:
            return events
        self._refill()
        if self.held is not None:
            held, self.held = self.held, None
            held.shard_end = self.cur == len(self.buf) and self.eof and not self.source.error
            events.append(held)
        if self.mode == "file":
            if not self.skipping and self._stream(len(self.buf)) - self.start > self.max:
                self.skipping = True
            if self.skipping:
                self.cur = len(self.buf)
        else:
            self._scan_lines(events)
        if self.eof:
            self._finish(events)
        return events

    def _on_line(self, begin: int, nl: int, events: list[_Event]) -> None:
        buf = self.buf
        length = nl - begin
        if self.mode == "line":
            at_end = nl + 1 == len(buf) and self.eof and not self.source.error
            if length > self.max:
                e = self._emit(events, "too_long")
                e.offset, e.line, e.length = self._stream(begin), self.line, length
                e.end, e.shard_end = self._stream(nl + 1), at_end
            elif _is_blank(buf[begin:nl]):
                self.blank += 1
            else:
                e = self._emit(events, "record")
                e.offset, e.line = self._stream(begin), self.line
                e.end, e.shard_end = self._stream(nl + 1), at_end
                e.data = bytes(buf[begin:nl])
        elif length <= self.max and _is_blank(buf[begin:nl]):
            if self.para_open:
                e = self._emit(events, "record")
                e.offset, e.line, e.end = self.para_start, self.para_line, self._stream(begin)
                first = self.para_start - self.base
                e.data = bytes(buf[first : first + self.para_content_end - self.para_start])
                self.para_open = False
            self.blank += 1
        else:
            if not self.para_open:
                self.para_open = True
                self.para_start, self.para_line = self._stream(begin), self.line
            self.para_content_end = self._stream(nl)
            if self.para_content_end - self.para_start > self.max:
                self.skipping = True
                self.skip_start, self.skip_line = self.para_start, self.para_line
                self.skip_content_end = self.para_content_end
                self.skip_line_start, self.skip_line_blank = self._stream(nl + 1), True
                self.para_open = False
        self.cur = nl + 1
        self.line += 1

    def _scan_lines(self, events: list[_Event]) -> None:
        buf = self.buf
        end = len(buf)
        while self.cur < end:
            found = buf.find(b"\n", self.cur)
            nl = found if found >= 0 else end
            if self.skipping and self.mode == "line":
                if found < 0:
                    self.cur = end
                    return
                self.cur = nl + 1
                self.line += 1
                self.skipping = False
                e = _Event("too_long")
                e.offset, e.line = self.skip_start, self.skip_line
                e.length = self._stream(nl) - self.skip_start
                e.end = self._stream(self.cur)
                e.blank_lines, self.blank = self.blank, 0
                if self.cur == end and not self.eof:
                    self.held = e
                    return
                e.shard_end = self.cur == end and not self.source.error
                events.append(e)
                continue
            if self.skipping:  # paragraph
                if self.skip_line_blank:
                    self.skip_line_blank = self._stream(
                        nl
                    ) - self.skip_line_start <= self.max and _is_blank(buf[self.cur : nl])
                if found < 0:
                    if not self.skip_line_blank:
                        self.skip_content_end = self._stream(end)
                    self.cur = end
                    return
                if self.skip_line_blank:
                    e = self._emit(events, "too_long")
                    e.offset, e.line = self.skip_start, self.skip_line
                    e.length = self.skip_content_end - self.skip_start
                    e.end = self.skip_line_start
                    self.skipping = False
                    self.blank += 1
                else:
                    self.skip_content_end = self._stream(nl)
                self.cur = nl + 1
                self.line += 1
                self.skip_line_start, self.skip_line_blank = self._stream(self.cur), True
                continue
            if found < 0:
                if self.eof:
                    return
                partial = end - self.cur
                if self.mode == "line":
                    if partial > self.max:
                        self.skipping = True
                        self.skip_start, self.skip_line = self._stream(self.cur), self.line
                        self.cur = end
                    return
                content = partial > self.max or not _is_blank(buf[self.cur : end])
                if self.para_open:
                    too_long = content and self._stream(end) - self.para_start > self.max
                else:
                    too_long = partial > self.max
                if too_long:
                    self.skipping = True
                    if self.para_open:
                        self.skip_start, self.skip_line = self.para_start, self.para_line
                    else:
                        self.skip_start, self.skip_line = self._stream(self.cur), self.line
                    self.skip_content_end = self._stream(end)
                    self.skip_line_start, self.skip_line_blank = self._stream(self.cur), False
                    self.para_open = False
                    self.cur = end
                return
            if self.mode == "line" and nl + 1 == end and not self.eof:
                return
            self._on_line(self.cur, nl, events)

    def _finish(self, events: list[_Event]) -> None:
        self.done = True
        buf = self.buf
        end = len(buf)
        if self.source.error:
            e = self._emit(events, "source_error")
            e.message = self.source.error
            e.offset, e.line = self._stream(self.cur), self.line
            if self.mode == "file":
                e.offset, e.line = self.start, 0
            elif self.skipping:
                e.offset, e.line = self.skip_start, self.skip_line
            elif self.para_open:
                e.offset, e.line = self.para_start, self.para_line
            self._emit(events, "end").end = self._stream(end)
            return
        eof = self._stream(end)
        if self.mode == "file":
            length = eof - self.start
            if self.skipping:
                e = self._emit(events, "too_long")
                e.offset, e.length, e.end, e.shard_end = self.start, length, eof, True
            elif length > 0:
                e = self._emit(events, "record")
                e.offset, e.end, e.shard_end, e.data = self.start, eof, True, bytes(buf)
        elif self.mode == "line":
            if self.skipping:
                e = self._emit(events, "too_long")
                e.offset, e.line = self.skip_start, self.skip_line
                e.length, e.end, e.shard_end = eof - self.skip_start, eof, True
            elif self.cur < end:
                length = end - self.cur
                if length > self.max:
                    e = self._emit(events, "too_long")
                    e.offset, e.line = self._stream(self.cur), self.line
                    e.length, e.end, e.shard_end = length, eof, True
                elif _is_blank(buf[self.cur : end]):
                    self.blank += 1
                else:
                    e = self._emit(events, "record")
                    e.offset, e.line = self._stream(self.cur), self.line
                    e.end, e.shard_end, e.data = eof, True, bytes(buf[self.cur : end])
                self.cur = end
        elif self.skipping:
            blank_tail = self.skip_line_start < eof and self.skip_line_blank
            e = self._emit(events, "too_long")
            e.offset, e.line = self.skip_start, self.skip_line
            e.length = self.skip_content_end - self.skip_start
            e.end = self.skip_line_start if blank_tail else eof
            e.shard_end = not blank_tail
            if blank_tail:
                self.blank += 1
        else:
            if self.cur < end:
                length = end - self.cur
                if length <= self.max and _is_blank(buf[self.cur : end]):
                    if self.para_open:
                        e = self._emit(events, "record")
                        e.offset, e.line = self.para_start, self.para_line
                        e.end = self._stream(self.cur)
                        first = self.para_start - self.base
                        e.data = bytes(buf[first : first + self.para_content_end - self.para_start])
                        self.para_open = False
                    self.blank += 1
                else:
                    if not self.para_open:
                        self.para_open = True
                        self.para_start, self.para_line = self._stream(self.cur), self.line
                    self.para_content_end = eof
                self.cur = end
            if self.para_open:
                self.para_open = False
                length = self.para_content_end - self.para_start
                e = self._emit(events, "too_long" if length > self.max else "record")
                e.offset, e.line, e.end, e.shard_end = self.para_start, self.para_line, eof, True
                if length > self.max:
                    e.length = length
                else:
                    first = self.para_start - self.base
                    e.data = bytes(buf[first : first + length])
        self._emit(events, "end").end = eof


# -- the reader -----------------------------------------------------------------------------


def _check_uint(name: str, value: object, maximum: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= maximum:
        return value
    raise ValueError(f"{name} must be an int in [0, {maximum}], got {value!r}")


def _seconds(name: str, value: object) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise TypeError(f"ShardReader: {name} must be a number of seconds, got {type(value).__name__}")


def _path_of(path: object) -> str:
    """One path argument, checked like the native module: type named, a NUL byte refused (a
    C path would silently end there)."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(
            f"ShardReader: paths must be a str or os.PathLike, got {type(path).__name__}"
        )
    decoded = os.fsdecode(path)
    if "\0" in decoded:
        raise ValueError("embedded null byte")
    return decoded


def _check_positive(name: str, value: object) -> int:
    """batch_size / max_record_bytes: 0 is as invalid as -1, so the range says [1, ...]."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= _U32_MAX:
        return value
    raise ValueError(f"{name} must be an int in [1, {_U32_MAX}], got {value!r}")


def _patterns(paths: object) -> list[str]:
    if isinstance(paths, (str, bytes, os.PathLike)):
        return [_path_of(paths)]
    if not isinstance(paths, Sequence):
        raise TypeError(
            "ShardReader: paths must be a str, an os.PathLike or a sequence of them, got "
            f"{type(paths).__name__}"
        )
    return [_path_of(p) for p in paths]


def _field_list(fields: object) -> list[str]:
    if isinstance(fields, str) or not isinstance(fields, Sequence):
        raise TypeError(
            f"ShardReader: fields must be a sequence of str such as ('id', 'url'), got "
            f"{type(fields).__name__}"
        )
    out: list[str] = []
    for f in fields:
        if not isinstance(f, str):
            raise TypeError(f"ShardReader: fields must hold str, got {type(f).__name__}")
        out.append(f)
    return out


def _has_magic(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _expand(pattern: str) -> list[str]:
    if not _has_magic(pattern) or is_url(pattern):  # a URL's '?' starts a query
        return [pattern]
    return sorted(glob.glob(pattern))


def _compression(path: str) -> str:
    name = os.fsencode(name_for_format(path)).lower()  # ASCII only, like the native backend
    if name.endswith(b".gz"):
        return "gzip"
    if name.endswith((b".zst", b".zstd")):
        return "zstd"
    return "none"


def _format(path: str, requested: str) -> str | None:
    if requested != "auto":
        return requested
    name = os.fsencode(name_for_format(path)).lower()
    for suffix in (b".gz", b".zst", b".zstd"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    if name.endswith((b".jsonl", b".json", b".ndjson")):
        return "jsonl"
    if name.endswith(b".txt"):
        return "txt"
    return None


class _Item:
    """One step of the stream: a record (document and/or issues), a shard issue, a shard end."""

    __slots__ = (
        "blank_lines",
        "document",
        "empty_shard",
        "end",
        "fields",
        "issues",
        "kind",
        "line",
        "line_known",
        "next_shard",
        "offset",
        "positioned",
        "shard",
        "shard_start",
        "text",
        "valid_utf8",
    )

    def __init__(self, kind: str, shard: int) -> None:
        self.kind = kind  # "record" | "stream_issue" | "shard_end"
        self.shard = shard
        self.offset = self.end = self.line = self.blank_lines = self.shard_start = 0
        self.next_shard = False
        self.positioned = True
        self.line_known = True
        self.empty_shard = False
        self.document = False
        self.text = ""
        self.valid_utf8 = True
        self.fields: list[FieldValue] = []
        self.issues: list[tuple[str, str | None, str]] = []


class ShardReader(NoCopy):
    """Batches of documents from .jsonl / .txt shards (plain, .gz, .zst)."""

    def __init__(
        self,
        paths: PathArg | Sequence[PathArg],
        *,
        text_field: str = "text",
        fields: Sequence[str] = (),
        format: str = "auto",
        txt_mode: str = "line",
        batch_size: int = 1024,
        start: StreamCoordinate | None = None,
        strict: bool = False,
        max_record_bytes: int = 256 * 2**20,
        threads: int = 0,
        index_dir: PathArg | None = None,
        index_spacing: int = 4 << 20,
        http_retries: int = 4,
        http_backoff: float = 0.5,
        http_timeout: float = 30.0,
        **options: object,
    ) -> None:
        reject_unknown_options("ShardReader", options, _OPTIONS)
        if not isinstance(text_field, str):
            raise TypeError(
                f"ShardReader: text_field must be a str, got {type(text_field).__name__}"
            )
        field_names = _field_list(fields)
        if not isinstance(format, str) or not isinstance(txt_mode, str):
            raise TypeError("ShardReader: format and txt_mode must be str")
        reject_unknown_options("ShardReader", [format], _FORMATS, kind="format")
        reject_unknown_options("ShardReader", [txt_mode], _TXT_MODES, kind="txt_mode")
        batch = _check_positive("batch_size", batch_size)
        if start is not None and not isinstance(start, StreamCoordinate):
            raise TypeError(
                f"ShardReader: start must be a StreamCoordinate or None, got {type(start).__name__}"
            )
        if not isinstance(strict, bool):
            raise TypeError(f"ShardReader: strict must be a bool, got {type(strict).__name__}")
        limit = _check_positive("max_record_bytes", max_record_bytes)
        _check_uint("threads", threads, _U32_MAX)  # the fallback parses on the calling thread
        spacing = _check_uint("index_spacing", index_spacing, 2**62)
        if spacing < MIN_SPACING:
            raise ValueError(f"ShardReader: index_spacing must be >= 65536 (64 KiB), got {spacing}")
        retries = _check_uint("http_retries", http_retries, 100)
        backoff = _seconds("http_backoff", http_backoff)
        timeout = _seconds("http_timeout", http_timeout)
        if not 0 <= backoff <= 3600:
            raise ValueError("ShardReader: http_backoff must be in [0, 3600] seconds")
        if not 0 < timeout <= 86400:
            raise ValueError("ShardReader: http_timeout must be in (0, 86400] seconds")
        self._http = (retries, backoff, timeout)
        self._index: tuple[str, int] | None = None
        if index_dir is not None:
            directory = _path_of(index_dir)
            if not directory:
                raise ValueError("ShardReader: index_dir is empty")
        patterns = _patterns(paths)
        for i, name in enumerate(field_names):
            if name in field_names[:i]:
                raise ValueError(f"ShardReader: fields lists '{name}' twice")
        self._text_field = text_field
        self._text_path = _FieldPath(text_field)
        self._field_names = field_names
        self._field_paths = [_FieldPath(f) for f in field_names]
        self._format = format
        self._txt_mode = txt_mode
        self._batch_size = batch
        self._strict = strict
        self._max = limit

        self._shards: list[str] = []
        unmatched: list[str] = []
        for pattern in patterns:
            matches = _expand(pattern)
            if not matches:
                unmatched.append(pattern)
            self._shards.extend(matches)

        self._issues: list[ReadIssue] = []
        self._stats: dict[str, int] = dict.fromkeys(
            (
                "records",
                "documents",
                "blank_lines",
                "bytes_read",
                "shards_opened",
                "empty_shards",
                "unmatched_globs",
                "unreadable_shards",
                "decompression_errors",
                "record_too_long",
                "malformed_json",
                "missing_field",
                "non_string_field",
                "missing_extra_field",
                "non_scalar_extra_field",
                "invalid_utf8_texts",
                "issues",
                "issues_not_kept",
            ),
            0,
        )
        self._finished = False
        self._global_row = 0
        self._consumed_shard = -1
        self._consumed = 0  # stream offset reached in _consumed_shard
        self._last_record = StreamCoordinate()
        self._next_shard = 0
        self._resume_shard = 0
        self._first_offset = 0
        self._resume_line_base: int | None = None
        self._resume_line_base_computed = False
        self._source: _Source | None = None
        self._scanner: _Scanner | None = None
        self._open_shard = 0
        self._open_start = 0
        self._open_json = False
        self._open_line_known = True
        self._open_line_base = 0
        self._queue: list[_Item] = []
        self._queue_pos = 0
        if start is not None:
            n = len(self._shards)
            if start.shard_id > n or (start.shard_id == n and start.byte_offset != 0):
                raise ValueError(f"ShardReader: start {start!r} is outside the {n} shards")
            self._next_shard = self._resume_shard = start.shard_id
            self._first_offset = start.byte_offset
            self._global_row = start.global_row_idx
        if index_dir is not None:
            # The native backend's errors: OSError(errno, strerror, index_dir).
            if os.path.exists(directory) and not os.path.isdir(directory):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), directory)
            try:
                os.makedirs(directory, exist_ok=True)
            except OSError as exc:
                code = exc.errno or errno.EIO
                raise OSError(code, os.strerror(code), directory) from None
            self._index = (directory, spacing)
        for pattern in unmatched:
            self._record_issue(
                ReadIssue(
                    None, pattern, 0, 0, None, "unmatched_glob", "the pattern matched no files"
                )
            )

    # -- public ------------------------------------------------------------------------------

    @property
    def shards(self) -> list[str]:
        return list(self._shards)

    @property
    def errors(self) -> list[ReadIssue]:
        return list(self._issues)

    def stats(self) -> dict[str, int]:
        return dict(self._stats)

    def __iter__(self) -> Iterator[DocumentBatch]:
        return self

    def __next__(self) -> DocumentBatch:
        texts: list[str] = []
        columns: dict[str, list[FieldValue]] = {name: [] for name in self._field_names}
        coordinates: list[StreamCoordinate] = []
        if self._finished:
            raise StopIteration
        while len(texts) < self._batch_size:
            if self._queue_pos == len(self._queue):
                self._queue, self._queue_pos = [], 0
                if not self._produce():
                    self._finished = True
                    break
                continue
            item = self._queue[self._queue_pos]
            self._queue_pos += 1
            self._consume(item, texts, columns, coordinates)
        if not texts:
            self._finished = True
            raise StopIteration
        return DocumentBatch(texts, columns, coordinates, self._last_record)

    def close(self) -> None:
        """Close the open shard and end the stream; idempotent."""
        self._finished = True
        self._scanner = None
        if self._source is not None:
            self._source.close()
            self._source = None
        self._queue, self._queue_pos = [], 0

    def __enter__(self) -> ShardReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ShardReader({len(self._shards)} shards)"

    # -- internals ---------------------------------------------------------------------------

    def _record_issue(self, issue: ReadIssue) -> None:
        self._stats["issues"] += 1
        self._stats[_STAT_OF_KIND[issue.kind]] += 1
        if len(self._issues) < MAX_ISSUES_KEPT:
            self._issues.append(issue)
        else:
            self._stats["issues_not_kept"] += 1
        if self._strict:
            self._finished = True
            shard = "no shard" if issue.shard_id is None else f"shard {issue.shard_id}"
            raise MalformedInputError(
                f"{issue} [{shard}, {issue.kind}; strict=False counts and skips such input instead]"
            )

    def _absolute_line(self, item: _Item) -> int:
        if item.line_known:
            return item.line + 1
        if not self._resume_line_base_computed:
            self._resume_line_base_computed = True
            self._resume_line_base = _count_newlines_in_file(
                self._shards[item.shard], self._first_offset
            )
        if self._resume_line_base is None:
            return 0
        return self._resume_line_base + item.line + 1

    def _open_next_shard(self) -> None:
        shard = self._next_shard
        path = self._shards[shard]
        start = self._first_offset if shard == self._resume_shard else 0

        def shard_issue(message: str) -> None:
            item = _Item("stream_issue", shard)
            item.positioned = False
            item.issues.append(("unreadable_shard", None, message))
            self._queue.append(item)
            self._next_shard += 1

        # Opened first, so that a missing path or a directory is reported as such.
        source, error = _open_source(path, _compression(path), self._index, self._http, start)
        if source is None:
            shard_issue(f"cannot read shard: {error}")
            return
        shard_format = _format(path, self._format)
        if shard_format is None:
            source.close()
            shard_issue(
                "cannot tell the format from the file name; pass format='jsonl' or "
                "format='txt' (format='auto' knows .jsonl, .json, .ndjson and .txt, each "
                "optionally + .gz or .zst)"
            )
            return
        self._source = source
        self._open_shard = shard
        self._open_start = start
        self._open_json = shard_format == "jsonl"
        self._open_line_known = True
        self._open_line_base = 0
        if start > 0:
            self._open_start, newlines = source.skip(start)
            if newlines is not None:
                self._open_line_base = newlines  # compressed: counted while decoding
            else:
                self._open_line_known = False
        mode = "line" if self._open_json else self._txt_mode
        self._scanner = _Scanner(source, mode, self._max, self._open_start)

    def _process(self, data: bytes, item: _Item) -> None:
        if not self._open_json:
            item.document = True
            item.fields = [None] * len(self._field_names)  # a text record has no fields
            try:
                item.text = data.decode("utf-8")
            except UnicodeDecodeError:
                item.text = data.decode("utf-8", "replace")  # CPython's U+FFFD rule, as native
                item.valid_utf8 = False
            return
        try:
            root = _loads(data)
        except _MalformedError as exc:
            item.issues.append(("malformed_json", None, str(exc)))
            return
        status, text, message = _find_string(root, self._text_path)
        if status != "found":
            kind = "missing_field" if status == "missing" else "non_string_field"
            item.issues.append((kind, self._text_field, message))
            return
        assert text is not None
        item.document = True
        item.text = text
        for name, path in zip(self._field_names, self._field_paths, strict=True):
            status, value, message = _find_scalar(root, path)
            if status != "found":
                kind = "missing_extra_field" if status == "missing" else "non_scalar_extra_field"
                item.issues.append((kind, name, message))
                value = None
            item.fields.append(value)

    def _scan_block(self) -> None:
        assert self._scanner is not None
        assert self._source is not None
        for e in self._scanner.next_block():
            kind = "record" if e.kind in ("record", "too_long") else "stream_issue"
            if e.kind == "end":
                kind = "shard_end"
            item = _Item(kind, self._open_shard)
            item.shard_start = self._open_start
            item.offset, item.end, item.next_shard = e.offset, e.end, e.shard_end
            item.line = e.line + self._open_line_base
            item.line_known, item.blank_lines = self._open_line_known, e.blank_lines
            if e.kind == "record":
                self._process(e.data, item)
            elif e.kind == "too_long":
                item.issues.append(
                    (
                        "record_too_long",
                        None,
                        f"record of {e.length} bytes is longer than max_record_bytes={self._max}; "
                        "skipped",
                    )
                )
            elif e.kind == "source_error":
                kind = (
                    "decompression_error"
                    if self._source.decompression_failed
                    else "unreadable_shard"
                )
                item.issues.append(
                    (kind, None, f"{e.message}; the records decoded before it were delivered")
                )
            else:
                item.empty_shard = self._open_start == 0 and e.end == 0 and not self._source.error
            self._queue.append(item)
        if self._scanner.done:
            self._scanner = None
            self._source.close()
            self._source = None
            self._next_shard += 1

    def _produce(self) -> bool:
        while True:
            if self._scanner is None:
                if self._next_shard >= len(self._shards):
                    return False
                self._open_next_shard()
                if self._scanner is None:
                    return True
            before = len(self._queue)
            self._scan_block()
            if len(self._queue) > before:
                return True

    def _consume(
        self,
        item: _Item,
        texts: list[str],
        columns: dict[str, list[FieldValue]],
        coordinates: list[StreamCoordinate],
    ) -> None:
        stats = self._stats
        stats["blank_lines"] += item.blank_lines
        if item.kind != "stream_issue":
            if self._consumed_shard != item.shard:
                self._consumed_shard, self._consumed = item.shard, item.shard_start
            if item.end > self._consumed:
                stats["bytes_read"] += item.end - self._consumed
                self._consumed = item.end
        if item.kind == "shard_end":
            stats["shards_opened"] += 1
            if item.empty_shard:
                stats["empty_shards"] += 1
            return
        if item.kind == "record":
            stats["records"] += 1
            self._global_row += 1
            if item.next_shard:
                c = StreamCoordinate(item.shard + 1, 0, global_row_idx=self._global_row)
            else:
                c = StreamCoordinate(item.shard, item.end, global_row_idx=self._global_row)
            self._last_record = c
            if item.document:
                texts.append(item.text)
                if not item.valid_utf8:
                    stats["invalid_utf8_texts"] += 1
                for name, value in zip(self._field_names, item.fields, strict=True):
                    columns[name].append(value)
                coordinates.append(c)
                stats["documents"] += 1
        for kind, field, message in item.issues:
            line = byte = 0
            if item.positioned:
                byte, line = item.offset, self._absolute_line(item)
            self._record_issue(
                ReadIssue(item.shard, self._shards[item.shard], line, byte, field, kind, message)
            )

"""Access-point index of a compressed shard, pure-Python backend (native: src/readers/).

docs/readers.md ("Access-point index") is the contract: an ``LMIX`` file beside the checkpoint
that records where a .gz decoder can restart (a deflate block boundary: its compressed offset, the
bits of the byte before it and the 32 KiB window) and where the frames of a .zst start. Both
backends write byte-identical files. It is a cache: a missing, stale or damaged index only makes a
resume slower, never different.

Restarting inside a deflate stream needs ``inflatePrime`` and ``inflateGetDictionary``, which
Python's ``zlib`` module does not expose, so the indexed gzip decoder calls the same system zlib
through ``ctypes`` (:class:`Inflater`). Where that library cannot be loaded, indexing is off and a
resume decodes from the start: the same records, O(offset).
"""

from __future__ import annotations

import ctypes
import struct
import zlib
from dataclasses import dataclass, field
from typing import Final

from .system_library import SystemLibrary
from .xxh3 import xxh3_64_digest

__all__ = [
    "AccessPoint",
    "DecodedIndex",
    "IndexHeader",
    "Inflater",
    "decode_index",
    "encode_access_point",
    "encode_index_header",
    "index_file_name",
    "load_zlib",
]

MAGIC: Final = b"LMIX"
VERSION: Final = 1
KIND_GZIP: Final = 1
KIND_ZSTD: Final = 2
HEADER_FIXED: Final = 40
POINT_FIXED: Final = 41
MAX_PATH: Final = 4096
WINDOW: Final = 32768
MIN_SPACING: Final = 64 * 1024
_HEADER = struct.Struct("<4sIIQQqI")
_POINT = struct.Struct("<QQQQIBI")


@dataclass
class IndexHeader:
    kind: int
    spacing: int
    size: int
    mtime_ns: int
    path: bytes


@dataclass
class AccessPoint:
    compressed_offset: int
    uncompressed_offset: int = 0
    newlines: int = 0
    member_size: int = 0
    member_crc: int = 0
    bits: int = 0
    window: bytes = b""


@dataclass
class DecodedIndex:
    header: IndexHeader
    points: list[AccessPoint] = field(default_factory=list)
    valid_bytes: int = 0


def encode_index_header(header: IndexHeader) -> bytes:
    body = _HEADER.pack(
        MAGIC,
        VERSION,
        header.kind,
        header.spacing,
        header.size,
        header.mtime_ns,
        len(header.path),
    )
    body += header.path
    return body + struct.pack("<I", zlib.crc32(body))


def encode_access_point(point: AccessPoint) -> bytes:
    body = (
        _POINT.pack(
            point.compressed_offset,
            point.uncompressed_offset,
            point.newlines,
            point.member_size,
            point.member_crc,
            point.bits,
            len(point.window),
        )
        + point.window
    )
    return body + struct.pack("<I", zlib.crc32(body))


def decode_index(data: bytes) -> tuple[DecodedIndex | None, str]:
    """(the index, "") or (None, why); records after the first invalid one are left out."""
    n = len(data)
    if n < HEADER_FIXED + 4:
        return None, "shorter than the header"
    magic, version, kind, spacing, size, mtime_ns, path_len = _HEADER.unpack_from(data)
    if magic != MAGIC:
        return None, "bad magic (not an LMIX index)"
    if version != VERSION:
        return None, "unsupported version"
    if kind not in {KIND_GZIP, KIND_ZSTD}:
        return None, "unknown kind"
    if path_len > MAX_PATH:
        return None, "path longer than 4096 bytes"
    header_end = HEADER_FIXED + path_len
    if n < header_end + 4:
        return None, "shorter than the header"
    if struct.unpack_from("<I", data, header_end)[0] != zlib.crc32(data[:header_end]):
        return None, "header CRC mismatch"
    if spacing < MIN_SPACING:
        return None, "spacing below 64 KiB"
    index = DecodedIndex(
        IndexHeader(kind, spacing, size, mtime_ns, bytes(data[HEADER_FIXED:header_end]))
    )
    gzip = kind == KIND_GZIP
    pos = index.valid_bytes = header_end + 4
    while n - pos >= POINT_FIXED + 4:
        coff, uoff, newlines, member_size, member_crc, bits, window_len = _POINT.unpack_from(
            data, pos
        )
        if window_len > WINDOW or n - pos < POINT_FIXED + window_len + 4:
            break
        body_end = pos + POINT_FIXED + window_len
        if struct.unpack_from("<I", data, body_end)[0] != zlib.crc32(data[pos:body_end]):
            break
        if bits > 7 or newlines > uoff or coff > size:
            break
        if gzip:
            if member_size > uoff or window_len != min(WINDOW, member_size):
                break
            if bits > 0 and coff == 0:
                break
        elif bits or window_len or member_size or member_crc:
            break
        if index.points:
            last = index.points[-1]
            if uoff <= last.uncompressed_offset or coff < last.compressed_offset:
                break
        window = bytes(data[pos + POINT_FIXED : body_end])
        index.points.append(
            AccessPoint(coff, uoff, newlines, member_size, member_crc, bits, window)
        )
        pos = index.valid_bytes = body_end + 4
    return index, ""


def index_file_name(shard_path: bytes, kind: int) -> str:
    suffix = ".gzidx" if kind == KIND_GZIP else ".zstidx"
    return f"{xxh3_64_digest(shard_path):016x}{suffix}"


# -- zlib through ctypes -------------------------------------------------------------------

Z_OK: Final = 0
Z_STREAM_END: Final = 1
Z_BUF_ERROR: Final = -5
Z_NO_FLUSH: Final = 0
Z_BLOCK: Final = 5


class _ZStream(ctypes.Structure):
    _fields_ = (
        ("next_in", ctypes.c_void_p),
        ("avail_in", ctypes.c_uint),
        ("total_in", ctypes.c_ulong),
        ("next_out", ctypes.c_void_p),
        ("avail_out", ctypes.c_uint),
        ("total_out", ctypes.c_ulong),
        ("msg", ctypes.c_char_p),
        ("state", ctypes.c_void_p),
        ("zalloc", ctypes.c_void_p),
        ("zfree", ctypes.c_void_p),
        ("opaque", ctypes.c_void_p),
        ("data_type", ctypes.c_int),
        ("adler", ctypes.c_ulong),
        ("reserved", ctypes.c_ulong),
    )


def _declare_zlib(lib: ctypes.CDLL) -> None:
    lib.zlibVersion.restype = ctypes.c_char_p
    pointer = ctypes.POINTER(_ZStream)
    lib.inflateInit2_.argtypes = (pointer, ctypes.c_int, ctypes.c_char_p, ctypes.c_int)
    lib.inflate.argtypes = (pointer, ctypes.c_int)
    lib.inflateEnd.argtypes = (pointer,)
    lib.inflateReset2.argtypes = (pointer, ctypes.c_int)
    lib.inflatePrime.argtypes = (pointer, ctypes.c_int, ctypes.c_int)
    lib.inflateSetDictionary.argtypes = (pointer, ctypes.c_char_p, ctypes.c_uint)
    lib.inflateGetDictionary.argtypes = (pointer, ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint))


_ZLIB = SystemLibrary("libz.so.1", "z", _declare_zlib, package="Debian package zlib1g")


def load_zlib() -> ctypes.CDLL | None:
    """The system zlib (the one Python's ``zlib`` wraps on Linux), or None if not loadable."""
    return _ZLIB.load()


class Inflater:
    """One zlib inflate stream over the system zlib (what native's GzipSource does in C++)."""

    OUT_BYTES: Final = 256 * 1024

    def __init__(self, lib: ctypes.CDLL) -> None:
        self._lib = lib
        self._stream = _ZStream()
        self._ref = ctypes.byref(self._stream)
        version = lib.zlibVersion()
        if lib.inflateInit2_(self._ref, 15 + 16, version, ctypes.sizeof(_ZStream)) != Z_OK:
            raise MemoryError("inflateInit2 failed")
        self._out = ctypes.create_string_buffer(self.OUT_BYTES)
        self._out_address = ctypes.addressof(self._out)
        self._input: ctypes.Array[ctypes.c_char] | None = None
        self._window = ctypes.create_string_buffer(WINDOW)
        self._open = True

    def close(self) -> None:
        if self._open:
            self._open = False
            self._lib.inflateEnd(self._ref)

    def __del__(self) -> None:
        self.close()

    def reset(self, wbits: int) -> None:
        self._lib.inflateReset2(self._ref, wbits)

    def prime(self, bits: int, value: int) -> bool:
        return bool(self._lib.inflatePrime(self._ref, bits, value) == Z_OK)

    def set_dictionary(self, window: bytes) -> bool:
        return bool(self._lib.inflateSetDictionary(self._ref, window, len(window)) == Z_OK)

    def dictionary(self) -> bytes:
        length = ctypes.c_uint(0)
        self._lib.inflateGetDictionary(self._ref, self._window, ctypes.byref(length))
        return self._window.raw[: length.value]

    def set_input(self, data: bytes) -> None:
        self._input = ctypes.create_string_buffer(data, len(data))
        self._stream.next_in = ctypes.addressof(self._input)
        self._stream.avail_in = len(data)

    @property
    def avail_in(self) -> int:
        return int(self._stream.avail_in)

    @property
    def data_type(self) -> int:
        return int(self._stream.data_type)

    @property
    def adler(self) -> int:
        return int(self._stream.adler) & 0xFFFFFFFF

    @property
    def message(self) -> str | None:
        msg = self._stream.msg
        return None if msg is None else msg.decode("utf-8", "replace")

    def inflate(self, flush: int) -> tuple[int, bytes, bool]:
        """One inflate call: (return code, output, output buffer not filled)."""
        self._stream.next_out = self._out_address
        self._stream.avail_out = self.OUT_BYTES
        rc = int(self._lib.inflate(self._ref, flush))
        produced = self.OUT_BYTES - int(self._stream.avail_out)
        return rc, ctypes.string_at(self._out_address, produced), self._stream.avail_out != 0

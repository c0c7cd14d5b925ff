"""zstd frame decoding for the pure-Python backend's .zst reader (native: src/readers/).

A valid frame decodes to the same bytes with any libzstd, but a corrupt frame without a content
checksum decodes to garbage that differs from one libzstd release to the next, and neither
reports an error. So the fallback decodes with the system ``libzstd.so.1`` through ``ctypes``
(:class:`SystemFrames`), the same library release the native module is built with, with the same
calls (``ZSTD_decompressStream`` over each 4 KiB feed into ``ZSTD_DStreamOutSize()`` pieces):
both backends then deliver the same records for a damaged stream too. Where that library cannot
be loaded, the ``zstandard`` package decodes (:class:`ZstandardFrames`): valid streams read the
same, the garbage of a damaged stream may differ (its bundled libzstd is another release).
"""

from __future__ import annotations

import ctypes
from typing import Any, Final, Protocol

from .system_library import LibraryUnfit, SystemLibrary

__all__ = [
    "FrameDecoder",
    "SystemFrames",
    "ZstandardFrames",
    "load_zstd",
    "zstd_version",
]

ZSTD_RESET_SESSION_ONLY: Final = 1
MIN_VERSION: Final = 10400  # 1.4.0: ZSTD_DCtx_reset is in the stable API


class FrameDecoder(Protocol):
    """Decodes one zstd frame after another, one step per call."""

    def begin(self) -> None:
        """Starts a new frame."""

    def step(self, data: bytes) -> tuple[bytes, int, bool, str | None]:
        """Decodes the current frame over ``data``: (output, bytes of ``data`` used, the frame
        ended, None) or (b"", 0, False, the library's reason) when the frame is corrupt."""
        ...

    def close(self) -> None:
        """Frees the decoder."""


class _InBuffer(ctypes.Structure):
    _fields_ = (("src", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t))


class _OutBuffer(ctypes.Structure):
    _fields_ = (("dst", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t))


def _declare_zstd(lib: ctypes.CDLL) -> None:
    lib.ZSTD_versionNumber.argtypes = ()
    lib.ZSTD_versionNumber.restype = ctypes.c_uint
    if lib.ZSTD_versionNumber() < MIN_VERSION:
        raise LibraryUnfit(f"release {zstd_version(lib)} is older than 1.4.0")
    lib.ZSTD_createDStream.argtypes = ()
    lib.ZSTD_createDStream.restype = ctypes.c_void_p
    lib.ZSTD_freeDStream.argtypes = (ctypes.c_void_p,)
    lib.ZSTD_freeDStream.restype = ctypes.c_size_t
    lib.ZSTD_DCtx_reset.argtypes = (ctypes.c_void_p, ctypes.c_int)
    lib.ZSTD_DCtx_reset.restype = ctypes.c_size_t
    lib.ZSTD_DStreamOutSize.argtypes = ()
    lib.ZSTD_DStreamOutSize.restype = ctypes.c_size_t
    lib.ZSTD_decompressStream.argtypes = (
        ctypes.c_void_p,
        ctypes.POINTER(_OutBuffer),
        ctypes.POINTER(_InBuffer),
    )
    lib.ZSTD_decompressStream.restype = ctypes.c_size_t
    lib.ZSTD_isError.argtypes = (ctypes.c_size_t,)
    lib.ZSTD_isError.restype = ctypes.c_uint
    lib.ZSTD_getErrorName.argtypes = (ctypes.c_size_t,)
    lib.ZSTD_getErrorName.restype = ctypes.c_char_p


_ZSTD = SystemLibrary("libzstd.so.1", "zstd", _declare_zstd, package="Debian package libzstd1")


def load_zstd() -> ctypes.CDLL | None:
    """The system libzstd (1.4.0 or later), or None if it cannot be loaded."""
    return _ZSTD.load()


def zstd_version(lib: ctypes.CDLL) -> str:
    """The loaded library's release, e.g. ``1.5.4`` (what native's build_info reports)."""
    number = int(lib.ZSTD_versionNumber())
    return f"{number // 10000}.{number // 100 % 100}.{number % 100}"


class SystemFrames:
    """Frames decoded by the system libzstd, as native's ZstdSource does in C++."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self._lib = lib
        self._stream: int | None = lib.ZSTD_createDStream()
        if not self._stream:
            raise MemoryError("ZSTD_createDStream failed")
        self._room = int(lib.ZSTD_DStreamOutSize())
        self._out = ctypes.create_string_buffer(self._room)
        self._out_address = ctypes.addressof(self._out)

    def begin(self) -> None:
        self._lib.ZSTD_DCtx_reset(self._stream, ZSTD_RESET_SESSION_ONLY)

    def step(self, data: bytes) -> tuple[bytes, int, bool, str | None]:
        lib = self._lib
        source = ctypes.create_string_buffer(data, len(data))
        feed = _InBuffer(ctypes.addressof(source), len(data), 0)
        pieces: list[bytes] = []
        while True:
            out = _OutBuffer(self._out_address, self._room, 0)
            rc = lib.ZSTD_decompressStream(self._stream, ctypes.byref(out), ctypes.byref(feed))
            if lib.ZSTD_isError(rc):
                return b"", 0, False, lib.ZSTD_getErrorName(rc).decode("utf-8", "replace")
            if out.pos:
                pieces.append(ctypes.string_at(self._out_address, out.pos))
            if rc == 0:
                return b"".join(pieces), int(feed.pos), True, None
            if feed.pos == feed.size and out.pos < out.size:
                return b"".join(pieces), int(feed.pos), False, None  # needs the next feed

    def close(self) -> None:
        if self._stream:
            self._lib.ZSTD_freeDStream(self._stream)
            self._stream = None

    def __del__(self) -> None:
        self.close()


class ZstandardFrames:
    """Frames decoded by the ``zstandard`` package (its bundled libzstd), one
    ``decompressobj().decompress()`` call per step."""

    def __init__(self, zstandard: Any) -> None:
        self._zstd = zstandard
        self._frame: Any = None

    def begin(self) -> None:
        self._frame = self._zstd.ZstdDecompressor().decompressobj()

    def step(self, data: bytes) -> tuple[bytes, int, bool, str | None]:
        try:
            out = bytes(self._frame.decompress(data))
        except self._zstd.ZstdError as exc:
            return b"", 0, False, str(exc).removeprefix("zstd decompressor error: ")
        if not self._frame.eof:
            return out, len(data), False, None
        return out, len(data) - len(self._frame.unused_data), True, None

    def close(self) -> None:
        self._frame = None

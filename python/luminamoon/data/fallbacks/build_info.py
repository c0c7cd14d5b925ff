"""What the pure-Python backend runs on, mirroring ``_native.build_info``.

The native module reports its compiler and the C/C++ libraries it links. The fallback links
none; it reports the interpreter and the libraries it actually uses for the same jobs: zlib for
``.gz`` shards, the system libzstd through ctypes (or, without one, ``zstandard``) for ``.zst``
shards, ``xxhash`` (or the built-in pure-Python XXH3-64) for hashing and ``unicodedata`` for the
cleaner's NFC step.
"""

from __future__ import annotations

import importlib
import platform
import unicodedata
import zlib

from .libzstd import load_zstd, zstd_version

__all__ = ["build_info"]


def _module_version(name: str, attribute: str) -> str | None:
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    value = getattr(module, attribute, None)
    if isinstance(value, tuple):  # zstandard.ZSTD_VERSION is (1, 5, 7)
        return ".".join(str(part) for part in value)
    return None if value is None else str(value)


def _zstd() -> str:
    lib = load_zstd()
    if lib is not None:  # the release first, as native reports it
        return f"{zstd_version(lib)} (system libzstd, ctypes)"
    bundled = _module_version("zstandard", "ZSTD_VERSION")
    if bundled is not None:
        package = _module_version("zstandard", "__version__")
        return f"{bundled} (zstandard {package}: no system libzstd)"
    return "missing: .zst shards need a system libzstd or the 'zstandard' package"


def build_info() -> dict[str, str]:
    """The interpreter and the library behind each job of the fallback, as name -> version."""
    xxhash_version = _module_version("xxhash", "VERSION")
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "xxhash": (
            f"python-xxhash {xxhash_version}"
            if xxhash_version is not None
            else "built-in pure-Python XXH3-64"
        ),
        "zstd": _zstd(),
        "zlib": zlib.ZLIB_RUNTIME_VERSION,
        "unicodedata": unicodedata.unidata_version,
    }

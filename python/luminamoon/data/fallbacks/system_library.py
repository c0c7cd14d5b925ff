"""A system shared library loaded through ``ctypes``, once per process, for the fallback backend.

The pure-Python backend calls the very libraries the native module links where Python has no
equal (zlib's ``inflatePrime``, libzstd's error behaviour, CLD2's model). Each is found the same
way: its Debian soname first, then whatever ``ctypes.util.find_library`` names, and the first
candidate that loads and passes the caller's ``declare`` (argument and return types, a version
check) is kept. A library that cannot be loaded is either optional (:meth:`SystemLibrary.load`
returns None and the caller takes a slower path) or required (:meth:`SystemLibrary.require`
raises ImportError naming the library, its package and why each candidate failed).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Callable

__all__ = ["LibraryUnfit", "SystemLibrary"]


class LibraryUnfit(Exception):  # noqa: N818 - a reason a candidate is skipped, not a user error
    """Raised by a ``declare`` callback: this candidate loads but cannot be used (too old...)."""


class SystemLibrary:
    """One system shared library, e.g. ``SystemLibrary("libzstd.so.1", "zstd", declare)``.

    ``declare(lib)`` sets the ctypes signatures of the functions used; a missing symbol
    (AttributeError) or :class:`LibraryUnfit` skips that candidate. ``package`` names where the
    library comes from, for the error of :meth:`require`.
    """

    def __init__(
        self,
        soname: str,
        link_name: str,
        declare: Callable[[ctypes.CDLL], None],
        *,
        package: str,
    ) -> None:
        self.soname = soname
        self.link_name = link_name
        self.package = package
        self._declare = declare
        self._lock = threading.Lock()
        self._loaded = False
        self._library: ctypes.CDLL | None = None
        self._failures: list[str] = []

    def load(self) -> ctypes.CDLL | None:
        """The library, or None when no candidate loads (tried once per process)."""
        with self._lock:
            if not self._loaded:
                self._loaded = True
                self._library = self._first_usable()
            return self._library

    def require(self, user: str) -> ctypes.CDLL:
        """The library, or ImportError saying that ``user`` needs it and why it did not load."""
        lib = self.load()
        if lib is None:
            raise ImportError(
                f"{user} needs the shared library {self.soname} ({self.package}, installed by "
                f"scripts/install.sh): " + "; ".join(self._failures)
            )
        return lib

    def _candidates(self) -> list[str]:
        found = ctypes.util.find_library(self.link_name)
        return [self.soname] + ([found] if found and found != self.soname else [])

    def _first_usable(self) -> ctypes.CDLL | None:
        for name in self._candidates():
            try:
                lib = ctypes.CDLL(name)
                self._declare(lib)
            except OSError as exc:  # its message names the file
                self._failures.append(str(exc))
                continue
            except (AttributeError, LibraryUnfit) as exc:
                self._failures.append(f"{name}: {exc}")
                continue
            return lib
        return None

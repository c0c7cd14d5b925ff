"""fallbacks/system_library.py: how the fallback finds the system libraries it calls via ctypes."""

from __future__ import annotations

import ctypes

import pytest

from luminamoon.data.fallbacks.system_library import LibraryUnfit, SystemLibrary


def test_a_missing_library_is_none_and_required_it_says_which_and_where_from() -> None:
    lib = SystemLibrary("libmissing-lm.so.3", "missing-lm", lambda _: None, package="pkg lm-x")
    assert lib.load() is None
    assert lib.load() is None  # tried once, the answer kept
    with pytest.raises(ImportError, match=r"Widget needs the shared library libmissing-lm\.so\.3"):
        lib.require("Widget")
    with pytest.raises(ImportError, match=r"pkg lm-x, installed by scripts/install\.sh"):
        lib.require("Widget")


def test_declare_sets_signatures_once_and_can_refuse_a_candidate() -> None:
    calls: list[ctypes.CDLL] = []

    def declare(lib: ctypes.CDLL) -> None:
        calls.append(lib)
        lib.zlibVersion.restype = ctypes.c_char_p

    zlib = SystemLibrary("libz.so.1", "z", declare, package="zlib1g")
    loaded = zlib.require("test")
    assert zlib.load() is loaded
    assert len(calls) == 1
    assert loaded.zlibVersion().startswith(b"1.")

    def too_old(lib: ctypes.CDLL) -> None:
        raise LibraryUnfit("release 0.1 is older than 9.9")

    old = SystemLibrary("libz.so.1", "z", too_old, package="zlib1g")
    assert old.load() is None
    with pytest.raises(ImportError, match=r"libz\.so\.1: release 0\.1 is older than 9\.9"):
        old.require("test")


def test_a_missing_symbol_skips_the_candidate() -> None:
    def needs_symbol(lib: ctypes.CDLL) -> None:
        lib.no_such_function_in_zlib.restype = ctypes.c_int

    lib = SystemLibrary("libz.so.1", "z", needs_symbol, package="zlib1g")
    with pytest.raises(ImportError, match="no_such_function_in_zlib"):
        lib.require("test")

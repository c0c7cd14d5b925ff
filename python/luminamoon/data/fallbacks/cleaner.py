"""TextCleaner: UTF-8 repair, newline/control/whitespace normalisation, optional NFC (SPEC 4).

Pure-Python backend and the reference the native module is tested against. Each step is the
whole-text rewrite that docs/cleaner.md specifies, written here literally with ``re``; the
native module fuses the same steps into one pass and must give the same text and the same
counters.
"""

from __future__ import annotations

import functools
import re
import unicodedata
import warnings
from collections.abc import Sequence
from typing import Any, TypeAlias

from ..errors import ConfigError, MalformedInputError
from ._arrow import is_arrow_object, iter_arrow_values
from ._nocopy import NoCopy
from .suggest import did_you_mean, reject_unknown_options

__all__ = ["HORIZONTAL_WHITESPACE", "WHITESPACE_MODES", "TextCleaner", "nfc"]

TextLike: TypeAlias = str | bytes | bytearray | memoryview

HORIZONTAL_WHITESPACE = (
    "\t \u00a0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B)) + "\u202f\u205f\u3000"
)
"""TAB, SPACE and the other Unicode space separators (Zs): what collapsing and stripping treat
as horizontal whitespace. Nothing else is (not U+200B, U+2028/U+2029, U+FEFF, VT, FF, NEL)."""

_H = "\\t \\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000"  # HORIZONTAL_WHITESPACE as a class
_H_NOT_SPACE = "\\t\\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000"

# Step 2: CR LF and lone CR -> LF (one replacement per CR).
_CR = re.compile("\r\n?")
# Step 3: C0 except TAB and LF, DEL, C1. With step 2 off, CR is a C0 control like any other.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Step 4, collapse: matches only the runs it changes: 2+ characters, or one that is not U+0020.
_RUNS_TO_COLLAPSE = re.compile(f"[{_H}]{{2,}}|[{_H_NOT_SPACE}]")
# Step 4, preserve_indent: each horizontal whitespace character other than TAB and SPACE.
_UNICODE_SPACES = re.compile(f"[{_H_NOT_SPACE[2:]}]")
# Step 7 outside collapse mode: the leading blank lines (up to and including the last LF of the
# leading whitespace), so the first line keeps its indentation.
_LEADING_BLANK_LINES = re.compile(f"[{_H}\n]*\n")
# Step 5: a whole run before LF or the end. The lookbehind makes a match start only where a run
# starts; without it every position of a long run would rescan the rest (quadratic time).
_TRAILING = re.compile(f"(?<![{_H}])[{_H}]+(?=\n|\\Z)")
# Step 6.
_NEWLINE_RUNS = re.compile("\n{3,}")
# Step 7 strips these characters from both ends.
_STRIP_CHARS = HORIZONTAL_WHITESPACE + "\n"

WHITESPACE_MODES = ("preserve_indent", "collapse", "keep")
"""Step 4: preserve_indent (default) keeps indentation and inner runs and turns each exotic space
into one U+0020; collapse turns each run into one U+0020; keep changes nothing."""

_FLAGS = (
    "repair_utf8",
    "normalize_newlines",
    "remove_controls",
    "strip_trailing_spaces",
    "limit_newlines",
    "strip",
    "nfc",
)
_OPTIONS = (
    "repair_utf8",
    "normalize_newlines",
    "remove_controls",
    "whitespace",
    "strip_trailing_spaces",
    "limit_newlines",
    "strip",
    "nfc",
    "threads",
    "collapse_whitespace",
)
_U32_MAX = 2**32 - 1
_STATS = (
    "documents",
    "documents_changed",
    "bytes_in",
    "bytes_out",
    "invalid_sequences_replaced",
    "invalid_bytes_replaced",
    "newlines_normalized",
    "controls_removed",
    "whitespace_runs_collapsed",
    "unicode_spaces_replaced",
    "trailing_spaces_removed",
    "newline_runs_limited",
    "whitespace_stripped",
    "nfc_changed_documents",
)
_REPLACEMENT = "\ufffd"
_REPLACEMENT_UTF8 = _REPLACEMENT.encode()


def _as_bytes(text: object, where: str) -> bytes:
    """The bytes a document is cleaned from: a ``str`` is UTF-8 encoded with ``surrogatepass``,
    so a lone surrogate becomes the 3-byte sequence ED xx xx that the repair then replaces."""
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    if isinstance(text, bytes):
        return text
    try:
        view = memoryview(text)  # type: ignore[arg-type]  # any buffer, like the native module
    except TypeError:
        raise TypeError(f"{where}: expected str or bytes-like, got {type(text).__name__}") from None
    with view:
        if not view.c_contiguous:
            raise TypeError(f"{where}: expected a contiguous bytes-like object")
        return view.tobytes()


class TextCleaner(NoCopy):
    """Cleans documents by the steps of docs/cleaner.md; counts what each step changed."""

    def __init__(
        self,
        *,
        repair_utf8: bool = True,
        normalize_newlines: bool = True,
        remove_controls: bool = True,
        whitespace: str | None = None,
        strip_trailing_spaces: bool = True,
        limit_newlines: bool = True,
        strip: bool = True,
        nfc: bool = False,
        threads: int = 0,
        collapse_whitespace: bool | None = None,
        **options: Any,
    ) -> None:
        reject_unknown_options("TextCleaner", options, _OPTIONS)
        flags = {
            "repair_utf8": repair_utf8,
            "normalize_newlines": normalize_newlines,
            "remove_controls": remove_controls,
            "strip_trailing_spaces": strip_trailing_spaces,
            "limit_newlines": limit_newlines,
            "strip": strip,
            "nfc": nfc,
        }
        for name, value in flags.items():
            if not isinstance(value, bool):
                raise TypeError(f"TextCleaner: {name} must be a bool, got {value!r}")
        mode = _whitespace_mode(whitespace, collapse_whitespace)
        if not (
            isinstance(threads, int) and not isinstance(threads, bool) and 0 <= threads <= _U32_MAX
        ):
            raise ValueError(
                f"TextCleaner: threads must be an int in [0, {_U32_MAX}] (0 = all cores), "
                f"got {threads!r}"
            )
        self._repair_utf8 = repair_utf8
        self._normalize_newlines = normalize_newlines
        self._remove_controls = remove_controls
        self._whitespace = mode
        self._strip_trailing_spaces = strip_trailing_spaces
        self._limit_newlines = limit_newlines
        self._strip = strip
        self._nfc = nfc
        # The fallback cleans on the calling thread; ``threads`` only exists for API parity.
        self._threads = threads
        self._stats = dict.fromkeys(_STATS, 0)

    @property
    def options(self) -> dict[str, bool | int | str]:
        """The effective options, every one of them (defaults included)."""
        return {
            "repair_utf8": self._repair_utf8,
            "normalize_newlines": self._normalize_newlines,
            "remove_controls": self._remove_controls,
            "strip_trailing_spaces": self._strip_trailing_spaces,
            "limit_newlines": self._limit_newlines,
            "strip": self._strip,
            "nfc": self._nfc,
            "whitespace": self._whitespace,
            "threads": self._threads,
        }

    def stats(self) -> dict[str, int]:
        """Counters since construction or the last ``reset_stats()`` (docs/cleaner.md)."""
        return dict(self._stats)

    def reset_stats(self) -> None:
        self._stats = dict.fromkeys(_STATS, 0)

    def clean(self, text: TextLike) -> str:
        """``text`` cleaned; ``bytes`` may be invalid UTF-8 (repaired unless repair_utf8=False)."""
        counts = dict.fromkeys(_STATS, 0)
        out = self._clean_bytes(_as_bytes(text, "text"), "text", counts)
        self._merge(counts)
        return out

    def clean_batch(self, texts: Sequence[TextLike] | Any) -> list[str]:
        """Every document of a list/tuple or an Arrow string/binary array or stream, cleaned.

        A batch that raises (a null, a wrong type, invalid UTF-8 with repair_utf8=False) counts
        nothing in ``stats()``.
        """
        if isinstance(texts, (list, tuple)):
            raw = [_as_bytes(text, f"texts[{i}]") for i, text in enumerate(texts)]
        elif is_arrow_object(texts):
            raw = iter_arrow_values(texts)
        else:
            raise TypeError(
                "clean_batch: texts must be a list or tuple of str/bytes-like, or an Arrow "
                "array or stream (__arrow_c_array__ / __arrow_c_stream__), got "
                f"{type(texts).__name__}"
            )
        counts = dict.fromkeys(_STATS, 0)
        out = [self._clean_bytes(data, f"texts[{i}]", counts) for i, data in enumerate(raw)]
        self._merge(counts)
        return out

    def _merge(self, counts: dict[str, int]) -> None:
        for name, value in counts.items():
            self._stats[name] += value

    def _clean_bytes(self, data: bytes, where: str, counts: dict[str, int]) -> str:
        text = self._decode(data, where, counts)
        if self._normalize_newlines:
            text, n = _CR.subn("\n", text)
            counts["newlines_normalized"] += n
        if self._remove_controls:
            text, n = _CONTROLS.subn("", text)
            counts["controls_removed"] += n
        if self._whitespace == "collapse":
            text, n = _RUNS_TO_COLLAPSE.subn(" ", text)
            counts["whitespace_runs_collapsed"] += n
        elif self._whitespace == "preserve_indent":
            text, n = _UNICODE_SPACES.subn(" ", text)
            counts["unicode_spaces_replaced"] += n
        if self._strip_trailing_spaces:
            before = len(text)
            text = _TRAILING.sub("", text)
            counts["trailing_spaces_removed"] += before - len(text)
        if self._limit_newlines:
            text, n = _NEWLINE_RUNS.subn("\n\n", text)
            counts["newline_runs_limited"] += n
        if self._strip:
            before = len(text)
            if self._whitespace == "collapse":
                text = text.strip(_STRIP_CHARS)
            else:
                text = text.rstrip(_STRIP_CHARS)
                blank = _LEADING_BLANK_LINES.match(text)
                if blank is not None:
                    text = text[blank.end() :]
            counts["whitespace_stripped"] += before - len(text)
        if self._nfc:
            normalized = nfc(text)
            if normalized != text:
                text = normalized
                counts["nfc_changed_documents"] += 1
        out = text.encode("utf-8")
        counts["documents"] += 1
        counts["bytes_in"] += len(data)
        counts["bytes_out"] += len(out)
        counts["documents_changed"] += out != data
        return text

    def _decode(self, data: bytes, where: str, counts: dict[str, int]) -> str:
        if not self._repair_utf8:
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise MalformedInputError(
                    f"TextCleaner: {where} is not valid UTF-8: {exc.reason} at byte offset "
                    f"{exc.start} (byte 0x{data[exc.start]:02x}); pass repair_utf8=True to "
                    "replace each invalid sequence with U+FFFD"
                ) from None
        text = data.decode("utf-8", "replace")
        # Every valid EF BF BD in the input decodes to a U+FFFD of its own (EF is never a
        # continuation byte), so the difference is exactly the number of replacements.
        inserted = text.count(_REPLACEMENT) - data.count(_REPLACEMENT_UTF8)
        counts["invalid_sequences_replaced"] += inserted
        if inserted:
            # Valid stretches are copied byte for byte and each U+FFFD is 3 bytes, so the
            # bytes replaced are whatever else the input had.
            counts["invalid_bytes_replaced"] += len(data) - (len(text.encode()) - 3 * inserted)
        return text

    def __repr__(self) -> str:
        changed = [
            f"{name}={value!r}" for name, value in self.options.items() if value != _DEFAULTS[name]
        ]
        return f"TextCleaner({', '.join(changed)})"


_DEFAULTS: dict[str, bool | int | str] = {
    **dict.fromkeys(_FLAGS, True),
    "nfc": False,
    "whitespace": "preserve_indent",
    "threads": 0,
}


def _whitespace_mode(whitespace: object, collapse_whitespace: object) -> str:
    """Step 4 from ``whitespace`` (None = the default) and the deprecated ``collapse_whitespace``
    alias (True = collapse, False = keep); the native binding applies the same rules."""
    if whitespace is not None and not isinstance(whitespace, str):
        raise TypeError(f"TextCleaner: whitespace must be a str, got {whitespace!r}")
    if collapse_whitespace is None:
        if whitespace is None:
            return "preserve_indent"
        if whitespace in WHITESPACE_MODES:
            return whitespace
        best = did_you_mean(whitespace, WHITESPACE_MODES)
        if best is not None:
            raise ConfigError(
                f"TextCleaner: unknown whitespace mode '{whitespace}'; did you mean '{best}'?"
            )
        raise ConfigError(
            f"TextCleaner: unknown whitespace mode '{whitespace}'; valid modes: "
            + ", ".join(WHITESPACE_MODES)
        )
    if not isinstance(collapse_whitespace, bool):
        raise TypeError(
            f"TextCleaner: collapse_whitespace must be a bool, got {collapse_whitespace!r}"
        )
    if whitespace is not None:
        raise ConfigError(
            "TextCleaner: pass either whitespace or the deprecated collapse_whitespace, not both"
        )
    warnings.warn(
        "TextCleaner: collapse_whitespace is deprecated; use whitespace='collapse' "
        "(for True) or whitespace='keep' (for False)",
        DeprecationWarning,
        stacklevel=3,
    )
    return "collapse" if collapse_whitespace else "keep"


# -- NFC in near-linear time -----------------------------------------------------------------
# CPython's unicodedata orders combining marks with an insertion sort, so NFC (and is_normalized,
# which falls back to a full normalisation on "maybe") is quadratic in the length of a run of
# non-starters: 'a' + '\u0301\u0316' * 100_000 took seconds. Text without a long run takes the
# plain call; a text with one is decomposed code point by code point (each decomposition is
# short and already ordered), every run of non-starters is ordered with a stable O(n log n) sort
# on the combining class (canonical ordering, as the native stable_sort does), and only then
# handed to unicodedata, whose insertion sort is linear on ordered input and whose composition
# is linear. NFD(c) per code point followed by canonical ordering is NFD of the text, so the
# result is exactly unicodedata.normalize("NFC", text).

_LONG_RUN = 32  # non-starters in a row from which the ordered path is taken
_PLANES_WITH_MARKS = 0x20000


@functools.lru_cache(maxsize=1)
def _non_starter_class() -> str:
    """A regex character class of every code point with a non-zero canonical combining class."""
    ranges: list[str] = []
    start = -1
    # Every code point with a non-zero combining class lies in planes 0 and 1 (the last one is
    # U+1E94A); scanning the other planes would only cost start-up time.
    for cp in range(_PLANES_WITH_MARKS + 1):
        marked = cp < _PLANES_WITH_MARKS and unicodedata.combining(chr(cp)) != 0
        if marked and start < 0:
            start = cp
        elif not marked and start >= 0:
            ranges.append(f"\\U{start:08x}-\\U{cp - 1:08x}")
            start = -1
    return "[" + "".join(ranges) + "]"


@functools.lru_cache(maxsize=1)
def _runs() -> tuple[re.Pattern[str], re.Pattern[str]]:
    marks = _non_starter_class()
    return re.compile(marks + "{" + str(_LONG_RUN) + ",}"), re.compile(marks + "{2,}")


@functools.lru_cache(maxsize=4096)
def _nfd_char(c: str) -> str:
    return unicodedata.normalize("NFD", c)


def _order(run: re.Match[str]) -> str:
    return "".join(sorted(run.group(), key=unicodedata.combining))


def nfc(text: str) -> str:
    """``unicodedata.normalize("NFC", text)``, without its quadratic cost on long mark runs."""
    if text.isascii():
        return text
    long_run, any_run = _runs()
    if long_run.search(text) is None:
        return unicodedata.normalize("NFC", text)
    decomposed = "".join(map(_nfd_char, text))
    return unicodedata.normalize("NFC", any_run.sub(_order, decomposed))

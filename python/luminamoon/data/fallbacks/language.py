"""LanguageFilter, fallback backend: the same CLD2 library, called through ctypes.

Language identification is CLD2's (Debian ``libcld2``, model compiled into the shared library).
A pure-Python copy of CLD2 (hundreds of kilobytes of generated tables and its scoring code) is
not something we would write or maintain, and a PyPI binding ships its own copy of the sources
(another version, other answers). So this backend loads the *same* ``libcld2.so.0`` the native
module links, and calls the *same* function, ``CLD2::DetectLanguageSummary`` (plain text, no
hints): its arguments are plain C types (pointers, ``int``, ``bool`` and the ``Language`` enum,
an ``int``), so ctypes calls it by its Itanium C++ ABI symbol name. Everything around the call
(UTF-8 repair, the 1 GiB cap, the score, the rules, the counters) is written here again, the way
``src/language/language_filter.cc`` does it. docs/language.md says what this depends on.
"""

from __future__ import annotations

import ctypes
import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ._arrow import is_arrow_object, iter_arrow_values
from ._nocopy import NoCopy
from .suggest import did_you_mean
from .system_library import SystemLibrary

__all__ = [
    "LanguageDetection",
    "LanguageFilter",
    "LanguageRejection",
    "LanguageResult",
    "cld2_library",
]

# CLD2's Language enum of the Debian build (0.0.0-git20150806): NUM_LANGUAGES and the code of
# UNKNOWN_LANGUAGE. The parity tests compare known_languages() with the native module's.
_NUM_LANGUAGES = 614
_UNKNOWN_LANGUAGE = 26
# CLD2 takes an int length: longer documents are measured on their first 1 GiB, cut back to a
# character boundary (as the native stage does).
_MAX_BYTES = 1 << 30
_U32_MAX = 2**32 - 1
# CLD2's script scanner reads past a character that ends at the end of its input; CLD2 gets the
# text followed by zero bytes, as in the core (docs/language.md).
_CLD2_PADDING = b"\0" * 16
_SURROGATE = re.compile("[\ud800-\udfff]")

# Itanium C++ ABI names of the three functions used (namespace CLD2).
_SYM_DETECT = "_ZN4CLD221DetectLanguageSummaryEPKcibPNS_8LanguageEPiS4_Pb"
_SYM_CODE = "_ZN4CLD212LanguageCodeENS_8LanguageE"
_SYM_VERSION = "_ZN4CLD221DetectLanguageVersionEv"


def _declare_cld2(lib: ctypes.CDLL) -> None:
    detect = getattr(lib, _SYM_DETECT)
    detect.restype = ctypes.c_int
    detect.argtypes = [
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_bool,
        ctypes.POINTER(ctypes.c_int),
        ctypes.POINTER(ctypes.c_int),
        ctypes.POINTER(ctypes.c_int),
        ctypes.POINTER(ctypes.c_bool),
    ]
    code = getattr(lib, _SYM_CODE)
    code.restype = ctypes.c_char_p
    code.argtypes = [ctypes.c_int]
    version = getattr(lib, _SYM_VERSION)
    version.restype = ctypes.c_char_p
    version.argtypes = []


_CLD2 = SystemLibrary("libcld2.so.0", "cld2", _declare_cld2, package="Debian package libcld2-0")


class _Cld2:
    def __init__(self) -> None:
        lib = _CLD2.require("LanguageFilter")
        detect = getattr(lib, _SYM_DETECT)
        code = getattr(lib, _SYM_CODE)
        version = getattr(lib, _SYM_VERSION)
        self.detect = detect
        self.version = (version() or b"").decode("utf-8")
        self.code_of = [(code(i) or b"").decode("utf-8") for i in range(_NUM_LANGUAGES)]
        codes: list[str] = []
        for c in self.code_of:
            if c and c not in codes:
                codes.append(c)
        self.codes = tuple(codes)


_lock = threading.Lock()
_library: _Cld2 | None = None


def cld2_library() -> _Cld2:
    """The loaded library (loaded on first use; ImportError when it is not installed)."""
    global _library  # noqa: PLW0603 - one library per process
    with _lock:
        if _library is None:
            _library = _Cld2()
        return _library


@dataclass(frozen=True)
class LanguageDetection:
    """CLD2's answer for one document: its language code ('un' = unknown), the share of its
    letters in that language (0..1) and CLD2's reliability flag."""

    language: str
    score: float
    reliable: bool


@dataclass(frozen=True, eq=False)
class LanguageRejection:
    """Why LanguageFilter dropped a document: rule 'language' (not a wanted language; threshold
    NaN) or 'min_language_score' (score < threshold)."""

    rule: str
    language: str
    score: float
    threshold: float

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LanguageRejection):
            return NotImplemented
        return (
            self.rule == other.rule
            and self.language == other.language
            and self.score == other.score
            and (
                self.threshold == other.threshold
                or (math.isnan(self.threshold) and math.isnan(other.threshold))
            )
        )

    __hash__ = None  # type: ignore[assignment]  # like the native class (eq without hash)


@dataclass(frozen=True)
class LanguageResult:
    """What LanguageFilter.filter_batch returns: keep mask, the rejection of every dropped
    document, every document's language and score, and counters per rule."""

    keep: list[bool]
    reasons: list[LanguageRejection | None]
    languages: list[str]
    scores: list[float]
    counters: dict[str, int]

    def __len__(self) -> int:
        return len(self.keep)

    def __repr__(self) -> str:
        c = self.counters
        return f"LanguageResult(total={c['total']}, kept={c['kept']}, rejected={c['rejected']})"


def _as_utf8(obj: object, where: str) -> bytes:
    """A document as valid UTF-8 bytes: invalid sequences (and a str's lone surrogates, through
    their 'surrogatepass' bytes) become U+FFFD, CPython's "replace" rule, as in the core."""
    if isinstance(obj, str):
        if _SURROGATE.search(obj) is None:
            return obj.encode("utf-8")
        raw = obj.encode("utf-8", "surrogatepass")
    elif isinstance(obj, bytes):
        raw = obj
    else:
        try:
            view = memoryview(obj)  # type: ignore[arg-type]  # any buffer, like the native module
        except TypeError:
            raise TypeError(
                f"{where}: expected str or bytes-like, got {type(obj).__name__}"
            ) from None
        with view:
            raw = view.tobytes()
    try:
        raw.decode("utf-8")
        return raw
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace").encode("utf-8")


def _detect_utf8(data: bytes) -> LanguageDetection:
    lib = cld2_library()
    size = len(data)
    if size > _MAX_BYTES:
        size = _MAX_BYTES
        while size > 0 and (data[size] & 0xC0) == 0x80:
            size -= 1
        data = data[:size]
    language3 = (ctypes.c_int * 3)(_UNKNOWN_LANGUAGE, _UNKNOWN_LANGUAGE, _UNKNOWN_LANGUAGE)
    percent3 = (ctypes.c_int * 3)(0, 0, 0)
    text_bytes = ctypes.c_int(0)
    reliable = ctypes.c_bool(False)
    top = lib.detect(
        data + _CLD2_PADDING,
        size,
        True,
        language3,
        percent3,
        ctypes.byref(text_bytes),
        ctypes.byref(reliable),
    )
    # CLD2 answers ENGLISH for empty or indeterminate text while its top three stay unknown:
    # such a guess is reported as "un" with score 0, as in the core.
    language, score = _UNKNOWN_LANGUAGE, 0.0
    if top != _UNKNOWN_LANGUAGE:
        for k in range(3):
            if language3[k] == top:
                language, score = top, percent3[k] / 100.0
                break
    return LanguageDetection(lib.code_of[language], score, bool(reliable.value))


def _check_score(what: str, value: float) -> None:
    if not (0.0 <= value <= 1.0):
        raise ValueError(f"LanguageFilter: {what} must be in [0, 1], got {value:.6f}")


def _check_code(what: str, code: str) -> None:
    known = cld2_library().codes
    if code in known:
        return
    message = (
        f"LanguageFilter: unknown language code '{code}' in {what} (CLD2 codes, e.g. 'en', "
        "'de', 'zh', 'zh-Hant')"
    )
    best = did_you_mean(code, list(known))
    if best is not None:
        message += f"; did you mean '{best}'?"
    raise ConfigError(message)


def _to_score(value: object, param: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"LanguageFilter: {param} must be a float, got {type(value).__name__}")
    return float(value)


def _to_str(value: object, param: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"LanguageFilter: {param} must be a str, got {type(value).__name__}")
    return value


class LanguageFilter(NoCopy):
    """Language identification (CLD2, model compiled in) and a keep rule: the document's
    language is one of `languages` (None = any) and its score >= min_score (or its min_scores
    entry)."""

    def __init__(
        self,
        languages: Sequence[str] | None = None,
        min_score: float = 0.0,
        *,
        min_scores: Mapping[str, float] | None = None,
        threads: int = 0,
    ) -> None:
        codes: list[str] = []
        if languages is not None:
            if isinstance(languages, str) or not isinstance(languages, Sequence):
                raise TypeError(
                    "LanguageFilter: languages must be a sequence of str or None, got "
                    f"{type(languages).__name__}"
                )
            codes = [_to_str(c, "languages") for c in languages]
        score = _to_score(min_score, "min_score")
        per_language: list[tuple[str, float]] = []
        if min_scores is not None:
            if not isinstance(min_scores, dict):
                raise TypeError(
                    "LanguageFilter: min_scores must be a dict or None, got "
                    f"{type(min_scores).__name__}"
                )
            per_language = [
                (_to_str(k, "min_scores"), _to_score(v, "min_scores"))
                for k, v in min_scores.items()
            ]
        if (
            isinstance(threads, bool)
            or not isinstance(threads, int)
            or not (0 <= threads <= _U32_MAX)
        ):
            raise ValueError(f"threads must be an int in [0, {_U32_MAX}], got {threads!r}")
        _check_score("min_score", score)
        for code in codes:
            _check_code("languages", code)
        for i, (code, value) in enumerate(per_language):
            _check_code("min_scores", code)
            _check_score(f"min_scores['{code}']", value)
            if any(code == other for other, _ in per_language[:i]):
                raise ValueError(f"LanguageFilter: min_scores gives '{code}' twice")
        self._languages = tuple(codes)
        self._min_score = score
        self._min_scores = dict(per_language)
        self._threads = threads

    # -- introspection ----------------------------------------------------------------------

    @property
    def languages(self) -> tuple[str, ...] | None:
        return self._languages or None

    @property
    def min_score(self) -> float:
        return self._min_score

    @property
    def min_scores(self) -> dict[str, float]:
        return dict(self._min_scores)

    @property
    def threads(self) -> int:
        return self._threads

    @staticmethod
    def known_languages() -> tuple[str, ...]:
        """Every language code CLD2 can answer, in its enum order (duplicates once)."""
        return cld2_library().codes

    @staticmethod
    def model_version() -> str:
        """CLD2's version string (code version - data build date)."""
        return cld2_library().version

    # -- evaluation -------------------------------------------------------------------------

    def detect(self, text: object) -> LanguageDetection:
        """CLD2's language, score and reliability for the text."""
        return _detect_utf8(_as_utf8(text, "text"))

    def metrics(self, text: object) -> dict[str, str | float]:
        """{'language': code, 'language_score': score} of the text."""
        d = self.detect(text)
        return {"language": d.language, "language_score": d.score}

    def _judge(self, d: LanguageDetection) -> LanguageRejection | None:
        if self._languages and d.language not in self._languages:
            return LanguageRejection("language", d.language, d.score, math.nan)
        threshold = self._min_scores.get(d.language, self._min_score)
        if d.score < threshold:
            return LanguageRejection("min_language_score", d.language, d.score, threshold)
        return None

    def check(self, text: object) -> LanguageRejection | None:
        """Why the text would be dropped, or None when it is kept."""
        return self._judge(self.detect(text))

    def filter_batch(self, texts: Sequence[object] | Any) -> LanguageResult:
        """Keep mask, rejections, languages and scores, counters per rule."""
        if isinstance(texts, (list, tuple)):
            docs = [_as_utf8(t, f"texts[{i}]") for i, t in enumerate(texts)]
        elif is_arrow_object(texts):
            docs = [_as_utf8(v, "texts") for v in iter_arrow_values(texts)]
        else:
            raise TypeError(
                "filter_batch: texts must be a list or tuple of str/bytes-like, or an Arrow "
                "array or stream (__arrow_c_array__ / __arrow_c_stream__), got "
                f"{type(texts).__name__}"
            )
        return self._filter_utf8(docs)

    def _filter_utf8(self, docs: Sequence[bytes]) -> LanguageResult:
        keep: list[bool] = []
        reasons: list[LanguageRejection | None] = []
        languages: list[str] = []
        scores: list[float] = []
        counters = {"total": len(docs), "kept": 0, "rejected": 0, "language": 0}
        counters["min_language_score"] = 0
        for data in docs:
            d = _detect_utf8(data)
            r = self._judge(d)
            keep.append(r is None)
            reasons.append(r)
            languages.append(d.language)
            scores.append(d.score)
            if r is None:
                counters["kept"] += 1
            else:
                counters["rejected"] += 1
                counters[r.rule] += 1
        return LanguageResult(keep, reasons, languages, scores, counters)

    def __repr__(self) -> str:
        langs = "None" if not self._languages else repr(self._languages)
        return f"LanguageFilter(languages={langs}, min_score={self._min_score!r})"

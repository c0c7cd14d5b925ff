"""QualityFilter: entropy, repetition and symbol metrics; Gopher, C4 and FineWeb rules (SPEC 4).

Pure-Python backend and the reference the native module (``src/quality/``) is tested against:
the same metrics to the last bit (every metric is an integer ratio, or the entropy summed in
code point order), the same decisions and reasons. docs/quality.md defines every metric, rule
and default; the datatrove-derived ones are written here in datatrove's own words (``re.split``,
``str.splitlines``, ``str.count``) so that this file reads against datatrove 0.10.1 line by line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..errors import ConfigError
from . import _quality_tables as tables
from ._arrow import is_arrow_object, iter_arrow_values
from ._nocopy import NoCopy
from .language import LanguageFilter
from .suggest import did_you_mean
from .words import count_sentences as _count_sentences
from .words import flags_of, tokenize

__all__ = ["METRIC_NAMES", "QualityFilter", "QualityResult", "Rejection"]

TextLike: TypeAlias = str | bytes | bytearray | memoryview
Setting: TypeAlias = float | int | bool | list[str] | dict[str, float] | None

# -- the presets ------------------------------------------------------------------------------
# (name, kind, default, metric, comparison). kind: "ratio" (a float threshold), "count" (an int
# threshold), "flag" (a bool rule switch) or "param" (an int parameter, not a rule). A rule
# rejects when ``metric <comparison> threshold``; None (False for flags) switches it off.
_Spec = tuple[str, str, Setting, str, str]

_PRESETS: dict[str, tuple[_Spec, ...]] = {
    "default": (
        ("min_words", "count", 10, "words", "<"),
        ("min_char_entropy", "ratio", 3.5, "char_entropy", "<"),
        ("max_char_entropy", "ratio", 5.5, "adjusted_char_entropy", ">"),
        ("max_ngram_repetition", "ratio", 0.4, "ngram_repetition", ">"),
        ("max_symbol_ratio", "ratio", 0.3, "symbol_ratio", ">"),
        ("max_capitalized_word_ratio", "ratio", 0.5, "capitalized_word_share", ">"),
        ("ngram_n", "param", 2, "", ""),
        ("ngram_window", "param", 1000, "", ""),
    ),
    "gopher_quality": (
        ("gopher_min_words", "count", 50, "gopher_words", "<"),
        ("gopher_max_words", "count", 100_000, "gopher_words", ">"),
        ("gopher_min_mean_word_length", "ratio", 3.0, "gopher_mean_word_length", "<"),
        ("gopher_max_mean_word_length", "ratio", 10.0, "gopher_mean_word_length", ">"),
        ("gopher_max_hash_ratio", "ratio", 0.1, "gopher_hash_ratio", ">"),
        ("gopher_max_ellipsis_ratio", "ratio", 0.1, "gopher_ellipsis_ratio", ">"),
        ("gopher_max_bullet_lines_ratio", "ratio", 0.9, "gopher_bullet_lines_ratio", ">"),
        ("gopher_max_ellipsis_lines_ratio", "ratio", 0.3, "gopher_ellipsis_lines_ratio", ">"),
        ("gopher_min_alpha_words_ratio", "ratio", 0.8, "gopher_alpha_words_ratio", "<"),
        ("gopher_min_stop_words", "count", 2, "gopher_stop_words", "<"),
    ),
    "gopher_repetition": (
        ("gopher_min_chars", "count", 1, "chars", "<"),
        ("gopher_max_dup_para_ratio", "ratio", 0.3, "gopher_dup_para_ratio", ">"),
        ("gopher_max_dup_para_char_ratio", "ratio", 0.2, "gopher_dup_para_char_ratio", ">"),
        ("gopher_max_dup_line_ratio", "ratio", 0.3, "gopher_dup_line_ratio", ">"),
        ("gopher_max_dup_line_char_ratio", "ratio", 0.2, "gopher_dup_line_char_ratio", ">"),
        *(
            (
                f"gopher_max_top_{n}gram_char_ratio",
                "ratio",
                t,
                f"gopher_top_{n}gram_char_ratio",
                ">",
            )
            for n, t in ((2, 0.20), (3, 0.18), (4, 0.16))
        ),
        *(
            (
                f"gopher_max_dup_{n}gram_char_ratio",
                "ratio",
                t,
                f"gopher_dup_{n}gram_char_ratio",
                ">",
            )
            for n, t in ((5, 0.15), (6, 0.14), (7, 0.13), (8, 0.12), (9, 0.11), (10, 0.10))
        ),
    ),
    "c4": (
        ("c4_lorem_ipsum", "flag", True, "c4_lorem_ipsum_lines", ">"),
        ("c4_curly_bracket", "flag", True, "c4_curly_bracket_lines", ">"),
        ("c4_min_sentences", "count", 5, "c4_sentences", "<"),
        ("c4_max_word_length", "param", 1000, "", ""),
        ("c4_min_words_per_line", "param", 3, "", ""),
        ("c4_terminal_punct", "flag", True, "", ""),
        ("c4_remove_citations", "flag", True, "", ""),
        ("c4_javascript", "flag", True, "", ""),
        ("c4_policy", "flag", True, "", ""),
    ),
    "fineweb": (
        ("fineweb_min_lines", "count", 1, "fineweb_lines", "<"),
        ("fineweb_min_line_punct_ratio", "ratio", 0.12, "fineweb_line_punct_ratio", "<"),
        ("fineweb_max_short_line_ratio", "ratio", 0.67, "fineweb_short_line_ratio", ">"),
        ("fineweb_max_dup_line_char_ratio", "ratio", 0.01, "fineweb_dup_line_char_ratio", ">"),
        ("fineweb_max_newline_word_ratio", "ratio", 0.3, "fineweb_newline_word_ratio", ">"),
        ("fineweb_short_line_length", "param", 30, "", ""),
        ("fineweb_line_punct_exclude_zero", "flag", False, "", ""),
    ),
    # FineWeb's language rule (English, score >= 0.65) with CLD2's share of letters as the score;
    # evaluated by LanguageFilter's code (docs/quality.md, "language").
    "language": (
        ("languages", "languages", ["en"], "language", "!"),
        ("min_language_score", "language_score", 0.65, "language_score", "<"),
    ),
}
_PRESETS["c4_lines"] = _PRESETS["c4"]  # the same rules; it also rewrites the text (see docs)
_PRESET_NAMES = (
    "default",
    "gopher_quality",
    "gopher_repetition",
    "c4",
    "c4_lines",
    "fineweb",
    "language",
)
_SPECS: dict[str, _Spec] = {spec[0]: spec for name in _PRESET_NAMES for spec in _PRESETS[name]}
_OWNER: dict[str, str] = {}
for _preset in _PRESET_NAMES:
    for _spec in _PRESETS[_preset]:
        _OWNER.setdefault(_spec[0], "c4" if _preset == "c4_lines" else _preset)
# Parameters that accept None ("no limit"), like datatrove's -1.
_NULLABLE_PARAMS = ("c4_max_word_length", "c4_min_words_per_line")
_INT_LIMIT = 2**53  # every int threshold is exact as a double, so both backends compare alike

METRIC_NAMES: tuple[str, ...] = (
    "chars",
    "words",
    "char_entropy",
    "adjusted_char_entropy",
    "ngram_repetition",
    "symbol_ratio",
    "capitalized_word_ratio",
    "capitalized_word_share",
    "gopher_words",
    "gopher_mean_word_length",
    "gopher_hash_ratio",
    "gopher_ellipsis_ratio",
    "gopher_bullet_lines_ratio",
    "gopher_ellipsis_lines_ratio",
    "gopher_alpha_words_ratio",
    "gopher_stop_words",
    "gopher_dup_para_ratio",
    "gopher_dup_para_char_ratio",
    "gopher_dup_line_ratio",
    "gopher_dup_line_char_ratio",
    *(f"gopher_top_{n}gram_char_ratio" for n in (2, 3, 4)),
    *(f"gopher_dup_{n}gram_char_ratio" for n in range(5, 11)),
    "c4_lines",
    "c4_kept_lines",
    "c4_sentences",
    "c4_lorem_ipsum_lines",
    "c4_curly_bracket_lines",
    "c4_lines_too_long_word",
    "c4_lines_no_terminal_punct",
    "c4_lines_too_few_words",
    "c4_lines_javascript",
    "c4_lines_policy",
    "fineweb_lines",
    "fineweb_line_punct_ratio",
    "fineweb_short_line_ratio",
    "fineweb_dup_line_char_ratio",
    "fineweb_newline_word_ratio",
)

_STOP_WORDS = frozenset(("the", "be", "to", "of", "and", "that", "have", "with"))
_C4_END = (".", "?", "!", '"', "'")
_C4_CITATION = re.compile(r"\[\d*]|\[edit]|\[citation needed]")
_C4_POLICY = (
    "terms of use",
    "privacy policy",
    "cookie policy",
    "uses cookies",
    "use of cookies",
    "use cookies",
)
_PARAGRAPH_BREAK = re.compile(r"\n{2,}")
_LINE_BREAKS = re.compile("\n+")
_SURROGATE = re.compile("[\ud800-\udfff]")
_U32_MAX = 2**32 - 1


@dataclass(frozen=True)
class Rejection:
    """Why a document was rejected: the first rule it failed.

    ``value <comparison> threshold`` holds (``comparison`` is ``"<"`` for a minimum, ``">"``
    for a maximum); ``metric`` names the entry of ``metrics()`` the rule checks.
    """

    rule: str
    metric: str
    value: float
    threshold: float
    comparison: str

    def __repr__(self) -> str:
        return (
            f"Rejection(rule={self.rule!r}, metric={self.metric!r}, value={self.value!r}, "
            f"threshold={self.threshold!r}, comparison={self.comparison!r})"
        )


class QualityResult:
    """What ``filter_batch`` returns: a keep mask, a reason per rejected document, counters.

    ``texts`` is None unless the ``c4_lines`` preset is on; then it holds each kept document's
    text after C4 line removal (None for rejected documents).
    """

    __slots__ = ("counters", "keep", "reasons", "texts")

    def __init__(
        self,
        keep: list[bool],
        reasons: list[Rejection | None],
        counters: dict[str, int],
        texts: list[str | None] | None,
    ) -> None:
        self.keep = keep
        self.reasons = reasons
        self.counters = counters
        self.texts = texts

    def __len__(self) -> int:
        return len(self.keep)

    def __repr__(self) -> str:
        return (
            f"QualityResult(total={self.counters['total']}, kept={self.counters['kept']}, "
            f"rejected={self.counters['rejected']})"
        )


# -- input ------------------------------------------------------------------------------------


def _as_text(obj: object, where: str) -> str:
    """A document as code points: str as is (lone surrogates -> U+FFFD, as their
    'surrogatepass' bytes decode), bytes-like decoded with U+FFFD for invalid UTF-8."""
    if isinstance(obj, str):
        if _SURROGATE.search(obj) is None:
            return obj
        return obj.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    try:
        view = memoryview(obj)  # type: ignore[arg-type]  # any buffer, like the native module
    except TypeError:
        raise TypeError(f"{where}: expected str or bytes-like, got {type(obj).__name__}") from None
    with view:
        if not view.c_contiguous:
            raise TypeError(f"{where}: expected a contiguous bytes-like object")
        return view.tobytes().decode("utf-8", "replace")


def _batch_texts(texts: object) -> list[str]:
    if isinstance(texts, (list, tuple)):
        return [_as_text(text, f"texts[{i}]") for i, text in enumerate(texts)]
    if is_arrow_object(texts):
        return [value.decode("utf-8", "replace") for value in iter_arrow_values(texts)]
    raise TypeError(
        "filter_batch: texts must be a list or tuple of str/bytes-like, or an Arrow array or "
        f"stream (__arrow_c_array__ / __arrow_c_stream__), got {type(texts).__name__}"
    )


# -- metrics ----------------------------------------------------------------------------------


def _ratio(numerator: int, denominator: int) -> float:
    """numerator / denominator, 0.0 when the denominator is 0 (docs/quality.md, "Bad input")."""
    return numerator / denominator if denominator else 0.0


def char_entropy(text: str) -> float:
    """Shannon entropy in bits per code point: log2(N) - sum(c * log2(c)) / N, summed in code
    point order; 0.0 for empty text and clamped at 0.0 (rounding can make it -0.0000...1)."""
    n = len(text)
    if n == 0:
        return 0.0
    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    total = 0.0
    for ch in sorted(counts):
        c = float(counts[ch])
        total += c * math.log2(c)
    return max(0.0, math.log2(float(n)) - total / n)


def _large_alphabet(cp: int) -> bool:
    """Han, Kana and Hangul: scripts of thousands of symbols (6-9 bits per character)."""
    return (
        0x1100 <= cp <= 0x11FF
        or 0x3040 <= cp <= 0x30FF
        or 0x3130 <= cp <= 0x318F
        or 0x31F0 <= cp <= 0x31FF
        or 0x3400 <= cp <= 0x4DBF
        or 0x4E00 <= cp <= 0x9FFF
        or 0xAC00 <= cp <= 0xD7AF
        or 0xF900 <= cp <= 0xFAFF
        or 0xFF66 <= cp <= 0xFF9F
        or 0x20000 <= cp <= 0x2FA1F
    )


def adjusted_char_entropy(text: str, entropy: float) -> float:
    """char_entropy minus what the text's scripts allow above the Latin threshold: 4.5 bits
    times the share of large-alphabet code points, plus up to 1 bit for a second alphabet
    (4 times the share of non-ASCII code points, capped at 1); at least 0."""
    n = len(text)
    if n == 0:
        return entropy
    non_ascii = large = 0
    for ch in text:
        cp = ord(ch)
        if cp >= 128:
            non_ascii += 1
            if _large_alphabet(cp):
                large += 1
    allowance = 4.5 * (large / n) + min(1.0, 4.0 * (non_ascii / n))
    return max(0.0, entropy - allowance)


def _has_letter(token: str) -> bool:
    return any(flags_of(ch) & tables.ALPHA for ch in token)


def ngram_repetition(words: Sequence[str], n: int, window: int) -> float:
    """Share of word n-grams that repeat an earlier n-gram of the same window.

    The words are cut into consecutive windows of ``window`` words (0: one window), n-grams
    never straddle two windows; the ratio is sum(G - distinct) / sum(G) over the windows, G
    being a window's n-gram count (its words - n + 1). 0.0 when there is no n-gram at all.
    """
    step = window if window > 0 else max(1, len(words))
    grams = 0
    repeats = 0
    for start in range(0, len(words), step):
        block = words[start : start + step]
        count = len(block) - n + 1
        if count <= 0:
            continue
        grams += count
        repeats += count - len({tuple(block[i : i + n]) for i in range(count)})
    return _ratio(repeats, grams)


def symbol_ratio(text: str) -> float:
    """Share of the non-whitespace code points that are not letters or marks (L*, M*):
    digits, punctuation, symbols, controls."""
    visible = 0
    symbols = 0
    for ch in text:
        f = flags_of(ch)
        if f & tables.SPACE:
            continue
        visible += 1
        if not f & (tables.ALPHA | tables.MARK):
            symbols += 1
    return _ratio(symbols, visible)


def capitalized_word_ratio(words: Sequence[str]) -> float:
    """Among the words that start with a cased letter (Lu, Lt, Ll), the share that start with
    an upper- or titlecase one (Lu, Lt)."""
    cased = 0
    capitalized = 0
    for word in words:
        f = flags_of(word[0])
        if f & tables.UPPER:
            cased += 1
            capitalized += 1
        elif f & tables.LOWER:
            cased += 1
    return _ratio(capitalized, cased)


def capitalized_word_share(words: Sequence[str]) -> float:
    """The words that start with an upper- or titlecase letter, among all the words (cased or
    not): the script-aware form the default preset's rule uses."""
    return _ratio(sum(1 for w in words if flags_of(w[0]) & tables.UPPER), len(words))


def _find_duplicates(items: list[str]) -> tuple[int, int]:
    """datatrove's find_duplicates: (repeated elements, their characters)."""
    seen: set[str] = set()
    elements = 0
    chars = 0
    for item in items:
        if item in seen:
            elements += 1
            chars += len(item)
        else:
            seen.add(item)
    return elements, chars


def _top_ngram_chars(words: list[str], n: int) -> int:
    """len(top n-gram joined by ' ') * its count; ties go to the n-gram seen first."""
    counts: dict[tuple[str, ...], int] = {}
    for i in range(len(words) - n + 1):
        gram = tuple(words[i : i + n])
        counts[gram] = counts.get(gram, 0) + 1
    if not counts:
        return 0
    best_gram, best = next(iter(counts.items()))
    for gram, count in counts.items():
        if count > best:
            best_gram, best = gram, count
    return (sum(len(w) for w in best_gram) + n - 1) * best


def _dup_ngram_chars(words: list[str], n: int) -> int:
    """datatrove's find_all_duplicate: n-grams joined with no separator, skip n after a repeat."""
    unique: set[str] = set()
    repeated = 0
    i = 0
    while i < len(words) - n + 1:
        gram = "".join(words[i : i + n])
        if gram in unique:
            repeated += len(gram)
            i += n
        else:
            unique.add(gram)
            i += 1
    return repeated


class _Doc:
    """One document and everything derived from it, computed on first use."""

    __slots__ = ("_tokens", "_words", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._tokens: list[str] | None = None
        self._words: list[str] | None = None

    @property
    def tokens(self) -> list[str]:
        """spaCy-compatible tokens (datatrove's split_into_words)."""
        if self._tokens is None:
            self._tokens = tokenize(self.text)
        return self._tokens

    @property
    def words(self) -> list[str]:
        """Tokens with a letter: the words of the core metrics."""
        if self._words is None:
            self._words = [t for t in self.tokens if _has_letter(t)]
        return self._words


def _int_setting(s: dict[str, Setting], name: str) -> int:
    value = s[name]
    assert isinstance(value, int)  # parameters are validated ints
    return value


def _core_metrics(doc: _Doc, s: dict[str, Setting]) -> dict[str, float]:
    entropy = char_entropy(doc.text)
    return {
        "chars": float(len(doc.text)),
        "words": float(len(doc.words)),
        "char_entropy": entropy,
        "adjusted_char_entropy": adjusted_char_entropy(doc.text, entropy),
        "ngram_repetition": ngram_repetition(
            doc.words, _int_setting(s, "ngram_n"), _int_setting(s, "ngram_window")
        ),
        "symbol_ratio": symbol_ratio(doc.text),
        "capitalized_word_ratio": capitalized_word_ratio(doc.words),
        "capitalized_word_share": capitalized_word_share(doc.words),
    }


def _gopher_quality_metrics(doc: _Doc) -> dict[str, float]:
    text = doc.text
    words = doc.tokens
    n_words = len(words)
    non_symbol = [w for w in words if any(not flags_of(ch) & tables.DT_PUNCT for ch in w)]
    lines = text.splitlines()
    return {
        "gopher_words": float(len(non_symbol)),
        "gopher_mean_word_length": _ratio(sum(len(w) for w in non_symbol), len(non_symbol)),
        "gopher_hash_ratio": _ratio(text.count("#"), n_words),
        "gopher_ellipsis_ratio": _ratio(text.count("...") + text.count("\u2026"), n_words),
        "gopher_bullet_lines_ratio": _ratio(
            sum(s.lstrip().startswith(("\u2022", "-")) for s in lines), len(lines)
        ),
        "gopher_ellipsis_lines_ratio": _ratio(
            sum(s.rstrip().endswith(("...", "\u2026")) for s in lines), len(lines)
        ),
        "gopher_alpha_words_ratio": _ratio(
            sum(any(flags_of(ch) & tables.ALPHA for ch in w) for w in words), n_words
        ),
        "gopher_stop_words": float(len(_STOP_WORDS.intersection(words))),
    }


def _gopher_repetition_metrics(doc: _Doc) -> dict[str, float]:
    text = doc.text
    n = len(text)
    paragraphs = _PARAGRAPH_BREAK.split(text.strip())
    para_dups, para_chars = _find_duplicates(paragraphs)
    lines = _LINE_BREAKS.split(text)
    line_dups, line_chars = _find_duplicates(lines)
    out = {
        "gopher_dup_para_ratio": _ratio(para_dups, len(paragraphs)),
        "gopher_dup_para_char_ratio": _ratio(para_chars, n),
        "gopher_dup_line_ratio": _ratio(line_dups, len(lines)),
        "gopher_dup_line_char_ratio": _ratio(line_chars, n),
    }
    words = doc.tokens
    for k in (2, 3, 4):
        out[f"gopher_top_{k}gram_char_ratio"] = _ratio(_top_ngram_chars(words, k), n)
    for k in range(5, 11):
        out[f"gopher_dup_{k}gram_char_ratio"] = _ratio(_dup_ngram_chars(words, k), n)
    return out


def _c4_lower_contains(line: str, needles: Sequence[str]) -> bool:
    lowered = line.lower()
    return any(needle in lowered for needle in needles)


@dataclass
class _C4Pass:
    """One pass of datatrove's C4QualityFilter over the lines, without its early exits."""

    lines: int = 0
    kept: list[str] | None = None
    sentences: int = 0
    lorem_ipsum: int = 0
    curly_bracket: int = 0
    too_long_word: int = 0
    no_terminal_punct: int = 0
    too_few_words: int = 0
    javascript: int = 0
    policy: int = 0
    first_drop: str = ""  # "c4_lorem_ipsum" or "c4_curly_bracket": the event datatrove stops at


def _c4_pass(text: str, s: dict[str, Setting], sentence_cap: float) -> _C4Pass:
    """Sentences are counted while below ``sentence_cap`` (0: never; inf: every kept line).

    Past the c4_min_sentences threshold that rule cannot fail, so the count stops there and is
    then a lower bound (as the native pass).
    """
    out = _C4Pass(kept=[])
    kept: list[str] = []
    max_word_length = s["c4_max_word_length"]
    min_words = s["c4_min_words_per_line"]
    assert max_word_length is None or isinstance(max_word_length, int)
    assert min_words is None or isinstance(min_words, int)
    for raw in text.splitlines():
        out.lines += 1
        line = raw.strip()
        words = line.split()
        if max_word_length is not None and any(len(w) > max_word_length for w in words):
            out.too_long_word += 1
            continue
        if s["c4_remove_citations"]:
            line = _C4_CITATION.sub("", line)
        if s["c4_terminal_punct"] and (not line.endswith(_C4_END) or line.endswith("...")):
            out.no_terminal_punct += 1
            continue
        if min_words is not None and len(words) < min_words:
            out.too_few_words += 1
            continue
        if s["c4_lorem_ipsum"] and _c4_lower_contains(line, ("lorem ipsum",)):
            out.lorem_ipsum += 1
            out.first_drop = out.first_drop or "c4_lorem_ipsum"
            continue
        if s["c4_javascript"] and _c4_lower_contains(line, ("javascript",)):
            out.javascript += 1
            continue
        if s["c4_curly_bracket"] and "{" in line:
            out.curly_bracket += 1
            out.first_drop = out.first_drop or "c4_curly_bracket"
            continue
        if s["c4_policy"] and _c4_lower_contains(line, _C4_POLICY):
            out.policy += 1
            continue
        if out.sentences < sentence_cap:
            out.sentences += _count_sentences(line)
        kept.append(line)
    out.kept = kept
    return out


def _c4_metrics(p: _C4Pass) -> dict[str, float]:
    return {
        "c4_lines": float(p.lines),
        "c4_kept_lines": float(len(p.kept or ())),
        "c4_sentences": float(p.sentences),
        "c4_lorem_ipsum_lines": float(p.lorem_ipsum),
        "c4_curly_bracket_lines": float(p.curly_bracket),
        "c4_lines_too_long_word": float(p.too_long_word),
        "c4_lines_no_terminal_punct": float(p.no_terminal_punct),
        "c4_lines_too_few_words": float(p.too_few_words),
        "c4_lines_javascript": float(p.javascript),
        "c4_lines_policy": float(p.policy),
    }


def _fineweb_metrics(doc: _Doc, short_line_length: int) -> dict[str, float]:
    text = doc.text
    lines = [line for line in text.split("\n") if line.strip() != ""]
    n = len(lines)
    return {
        "fineweb_lines": float(n),
        "fineweb_line_punct_ratio": _ratio(
            sum(1 for line in lines if flags_of(line[-1]) & tables.DT_TERMINAL), n
        ),
        "fineweb_short_line_ratio": _ratio(
            sum(1 for line in lines if len(line) <= short_line_length), n
        ),
        "fineweb_dup_line_char_ratio": _ratio(
            _find_duplicates(lines)[1], len(text) - text.count("\n")
        ),
        "fineweb_newline_word_ratio": _ratio(text.count("\n"), len(doc.tokens)),
    }


# -- configuration ----------------------------------------------------------------------------


def _check_setting(name: str, value: object) -> Setting:
    _, kind, _, _, _ = _SPECS[name]
    where = f"QualityFilter: {name}"
    if kind == "languages":
        if value is None:
            return None
        if not isinstance(value, (list, tuple)) or not all(isinstance(c, str) for c in value):
            raise ValueError(f"{where} must be a list of language codes or None, got {value!r}")
        return list(value)  # codes are checked by the LanguageFilter built from them
    if kind == "language_score":
        if value is None:
            return None
        if isinstance(value, dict):
            if not all(
                isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool)
                for k, v in value.items()
            ):
                raise ValueError(_score_message(where, value))
            return {k: float(v) for k, v in value.items()}
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(_score_message(where, value))
        return float(value)
    if kind == "flag":
        if not isinstance(value, bool):
            raise ValueError(f"{where} must be True or False, got {value!r}")
        return value
    if value is None:
        if kind == "param" and name not in _NULLABLE_PARAMS:
            raise ValueError(f"{where} cannot be None (it is a parameter, not a rule)")
        return None
    if kind == "ratio":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{where} must be a number or None, got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{where} must be finite, got {value!r}")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where} must be an int or None, got {value!r}")
    low = 1 if name == "ngram_n" else 0 if kind == "param" else -_INT_LIMIT
    if not low <= value <= _INT_LIMIT:
        raise ValueError(f"{where} must be in [{low}, 2**53], got {value!r}")
    return value


def _score_message(where: str, value: object) -> str:
    return (
        f"{where} must be a number, a mapping of language code to score (key 'default' for the "
        f"others) or None, got {value!r}"
    )


def _language_filter(settings: dict[str, Setting], threads: int) -> Any:
    """The language preset's rules as a LanguageFilter (unknown codes: ConfigError)."""
    codes = settings["languages"]
    score = settings["min_language_score"]
    default = 0.0
    per_language: dict[str, float] = {}
    if isinstance(score, dict):
        for code, value in score.items():
            if code == "default":
                default = value
            else:
                per_language[code] = value
    elif isinstance(score, (int, float)):
        default = float(score)
    return LanguageFilter(
        codes if isinstance(codes, list) else None,
        default,
        min_scores=per_language,
        threads=threads,
    )


def _unknown(kind: str, name: str, known: Sequence[str]) -> ConfigError:
    best = did_you_mean(name, known)
    if best is not None:
        return ConfigError(f"QualityFilter: unknown {kind} '{name}'; did you mean '{best}'?")
    return ConfigError(f"QualityFilter: unknown {kind} '{name}'; valid {kind}s: {', '.join(known)}")


class QualityFilter(NoCopy):
    """Document quality metrics and rule sets (presets), with a reason for every rejection."""

    def __init__(
        self,
        presets: str | Sequence[str] = ("default",),
        *,
        threads: int = 0,
        **thresholds: Any,
    ) -> None:
        names = (presets,) if isinstance(presets, str) else tuple(presets)
        active: list[str] = []
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"QualityFilter: presets must be str, got {type(name).__name__}")
            if name not in _PRESETS:
                raise _unknown("preset", name, _PRESET_NAMES)
            if name not in active:
                active.append(name)
        if not active:
            raise ValueError("QualityFilter: at least one preset is needed")
        if not (
            isinstance(threads, int) and not isinstance(threads, bool) and 0 <= threads <= _U32_MAX
        ):
            raise ValueError(
                f"QualityFilter: threads must be an int >= 0 (0 = all cores), got {threads!r}"
            )
        self._threads = threads
        self._presets = tuple(active)
        owners = {"c4" if p == "c4_lines" else p for p in active}
        settings: dict[str, Setting] = {
            spec[0]: spec[2] for p in _PRESET_NAMES for spec in _PRESETS[p]
        }
        for name, value in thresholds.items():
            if name not in _SPECS:
                raise _unknown("threshold", name, list(_SPECS))
            if _OWNER[name] not in owners:
                raise ConfigError(
                    f"QualityFilter: threshold '{name}' belongs to preset '{_OWNER[name]}', "
                    f"which is not selected; add it: presets=({', '.join(map(repr, active))}, "
                    f"'{_OWNER[name]}')"
                )
            settings[name] = _check_setting(name, value)
        self._settings = settings
        self._language: Any = None
        if "language" in active:
            self._language = _language_filter(settings, threads)

    # -- introspection ----------------------------------------------------------------------

    @property
    def presets(self) -> tuple[str, ...]:
        return self._presets

    @property
    def thresholds(self) -> dict[str, Setting]:
        """Every setting of the selected presets (defaults and overrides), in rule order."""
        out: dict[str, Setting] = {}
        for preset in self._presets:
            for spec in _PRESETS[preset]:
                out[spec[0]] = self._settings[spec[0]]
        return out

    @property
    def rules(self) -> tuple[str, ...]:
        """The rules that are on, in the order they are checked."""
        out: list[str] = []
        for preset in self._presets:
            for name, _, _, metric, _ in _PRESETS[preset]:
                on = self._settings[name] not in (None, False, [])
                if metric and on and name not in out:
                    out.append(name)
        return tuple(out)

    @staticmethod
    def preset_defaults() -> dict[str, dict[str, Setting]]:
        """Every preset with its settings and their published defaults."""
        return {p: {spec[0]: spec[2] for spec in _PRESETS[p]} for p in _PRESET_NAMES}

    @staticmethod
    def tokenize(text: TextLike) -> list[str]:
        """The word tokens every word-based metric uses (spaCy English, as datatrove)."""
        return tokenize(_as_text(text, "tokenize"))

    @staticmethod
    def metric_names() -> tuple[str, ...]:
        """The keys of ``metrics()``, in order."""
        return METRIC_NAMES

    # -- evaluation -------------------------------------------------------------------------

    def metrics(self, text: TextLike) -> dict[str, float | str]:
        """Every metric of ``text`` (all presets, whichever are selected), by name; with the
        'language' preset also 'language' (CLD2 code) and 'language_score'."""
        doc = _Doc(_as_text(text, "metrics"))
        s = self._settings
        out: dict[str, float | str] = {}
        out.update(_core_metrics(doc, s))
        out.update(_gopher_quality_metrics(doc))
        out.update(_gopher_repetition_metrics(doc))
        out.update(_c4_metrics(_c4_pass(doc.text, s, sentence_cap=math.inf)))
        out.update(_fineweb_metrics(doc, _int_setting(s, "fineweb_short_line_length")))
        if self._language is not None:
            d = self._language.detect(doc.text.encode("utf-8"))
            out["language"] = d.language
            out["language_score"] = d.score
        return out

    def _check_language(self, text: str) -> Rejection | None:
        """The language preset's rules (LanguageFilter's judgement, as a Rejection)."""
        if (
            self._settings["languages"] in (None, [])
            and self._settings["min_language_score"] is None
        ):
            return None
        d = self._language.detect(text.encode("utf-8"))
        r = self._language._judge(d)
        if r is None:
            return None
        if r.rule == "language":
            return Rejection("languages", "language", d.score, 0.0, "!")
        return Rejection("min_language_score", "language_score", d.score, r.threshold, "<")

    def _check(
        self, preset: str, values: dict[str, float], rule_filter: str = ""
    ) -> Rejection | None:
        s = self._settings
        for name, kind, _, metric, comparison in _PRESETS[preset]:
            if not metric or (rule_filter and name != rule_filter):
                continue
            setting = s[name]
            if setting is None or setting is False:
                continue
            assert isinstance(setting, (int, float))  # the language preset is not checked here
            threshold: float = setting
            value = values[metric]
            if kind == "flag":
                threshold = 0
            failed = value < threshold if comparison == "<" else value > threshold
            if (
                failed
                and name == "fineweb_min_line_punct_ratio"
                and value == 0
                and s["fineweb_line_punct_exclude_zero"]
            ):
                failed = False
            if failed:
                return Rejection(name, metric, float(value), float(threshold), comparison)
        return None

    def _evaluate(self, text: str) -> tuple[Rejection | None, str | None]:
        """(first failing rule or None, the text after c4_lines when that preset is on)."""
        doc = _Doc(text)
        s = self._settings
        for preset in self._presets:
            if preset == "default":
                values = _core_metrics(doc, s)
            elif preset == "gopher_quality":
                values = _gopher_quality_metrics(doc)
            elif preset == "gopher_repetition":
                values = {"chars": float(len(doc.text)), **_gopher_repetition_metrics(doc)}
            elif preset == "fineweb":
                values = _fineweb_metrics(doc, _int_setting(s, "fineweb_short_line_length"))
            elif preset == "language":
                rejection = self._check_language(doc.text)
                if rejection is not None:
                    return rejection, None
                continue
            else:  # c4, c4_lines
                min_sentences = s["c4_min_sentences"]
                assert min_sentences is None or isinstance(min_sentences, (int, float))
                cap = 0.0 if min_sentences is None else float(min_sentences)
                p = _c4_pass(doc.text, s, sentence_cap=cap)
                values = _c4_metrics(p)
                rejection = None
                if p.first_drop:
                    rejection = self._check(preset, values, p.first_drop)
                if rejection is None:
                    rejection = self._check(preset, values, "c4_min_sentences")
                if rejection is not None:
                    return rejection, None
                if preset == "c4_lines":
                    doc = _Doc("\n".join(p.kept or ()).strip())
                continue
            rejection = self._check(preset, values)
            if rejection is not None:
                return rejection, None
        return None, doc.text

    def check(self, text: TextLike) -> Rejection | None:
        """The first rule ``text`` fails, or None when it passes every selected preset."""
        return self._evaluate(_as_text(text, "check"))[0]

    def is_high_quality(self, text: TextLike) -> bool:
        """Whether ``text`` passes every rule of the selected presets."""
        return self._evaluate(_as_text(text, "is_high_quality"))[0] is None

    def clean_lines(self, text: TextLike) -> str:
        """``text`` after C4 line removal (the c4 settings of this filter), kept or not."""
        p = _c4_pass(_as_text(text, "clean_lines"), self._settings, sentence_cap=0.0)
        return "\n".join(p.kept or ()).strip()

    def filter_batch(self, texts: Sequence[TextLike] | Any) -> QualityResult:
        """Keep mask, first failing rule per rejected document, and counters per rule."""
        docs = _batch_texts(texts)
        rules = self.rules
        counters = {"total": len(docs), "kept": 0, "rejected": 0, **dict.fromkeys(rules, 0)}
        keep: list[bool] = []
        reasons: list[Rejection | None] = []
        with_texts = "c4_lines" in self._presets
        out_texts: list[str | None] = []
        for text in docs:
            rejection, kept_text = self._evaluate(text)
            keep.append(rejection is None)
            reasons.append(rejection)
            if rejection is None:
                counters["kept"] += 1
            else:
                counters["rejected"] += 1
                counters[rejection.rule] += 1
            out_texts.append(kept_text)
        return QualityResult(keep, reasons, counters, out_texts if with_texts else None)

    def __repr__(self) -> str:
        return f"QualityFilter(presets={self._presets!r})"

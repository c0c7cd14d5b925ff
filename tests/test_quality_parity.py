"""QualityFilter, native vs fallback: every metric within 1e-9 (in practice equal to the bit),
identical tokens, decisions, reasons, kept texts and errors, on generated documents."""

from __future__ import annotations

import importlib
import math
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

N = pytest.importorskip("luminamoon.data._native", reason="luminamoon.data._native is not built")
F: ModuleType = importlib.import_module("luminamoon.data.fallbacks")

PRESETS = ("default", "gopher_quality", "gopher_repetition", "c4", "c4_lines", "fineweb")

# Pieces that exercise the tokenizer's rules, the line rules and Unicode classes.
PIECES = (
    *"abcXYZ019.,;:!?'\"()[]{}<>-_/\\@#$%&*+=~^`|",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    "\u00a0",
    "\u3000",
    "\u2028",
    "\x0b",
    "\x85",
    "\u2026",
    "\u2019",
    "\u201c",
    "\u00ab",
    "\u2014",
    "\u2022",
    "\u00b0",
    "\u20ac",
    "\u00a9",
    "\u00e9",
    "\u0416",
    "\u4e2d",
    "\u0661",
    "\U0001f600",
    "\ufffd",
    "\x00",
    "\u0307",
    "\u212a",
    "the",
    "and",
    "The",
    "word",
    "don't",
    "it's",
    "U.S.",
    "e.g.",
    "Mr.",
    ":)",
    "):",
    "10am",
    "5km",
    "$5",
    "US$",
    "and/or",
    "well-known",
    "...",
    "--",
    "http://",
    "www.",
    ".com",
    "user@mail.org",
    "192.168.1.1",
    "8.8.8.8:80/x",
    "[1]",
    "[edit]",
    "lorem ipsum",
    "JavaScript",
    "cookie policy",
    "#tag",
    "- ",
    "\u2022 ",
    "Hello, world.",
    "Is it? Yes!",
    "a b c d e",
    # Longer than the tokenizer's 16-byte word scan, and controls it must look at byte by byte.
    "Supercalifragilistic0123456789",
    "\x1b",
    "\x7f",
)
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=60).map("".join)
binary = st.binary(max_size=200)

SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def close(a: dict[str, float], b: dict[str, float]) -> bool:
    return list(a) == list(b) and all(
        a[k] == b[k] or math.isclose(a[k], b[k], rel_tol=0, abs_tol=1e-9) for k in a
    )


def as_tuple(r: Any) -> tuple[Any, ...] | None:
    return None if r is None else (r.rule, r.metric, r.value, r.threshold, r.comparison)


@SETTINGS
@given(
    text=texts,
    ngram_n=st.integers(1, 4),
    window=st.integers(0, 6),
    short=st.integers(0, 40),
)
def test_metrics_match(text: str, ngram_n: int, window: int, short: int) -> None:
    kw = {"ngram_n": ngram_n, "ngram_window": window}
    n = N.QualityFilter(("default", "fineweb"), fineweb_short_line_length=short, **kw)
    f = F.QualityFilter(("default", "fineweb"), fineweb_short_line_length=short, **kw)
    assert close(n.metrics(text), f.metrics(text))
    assert N.QualityFilter.tokenize(text) == F.QualityFilter.tokenize(text)


@SETTINGS
@given(text=texts, presets=st.lists(st.sampled_from(PRESETS), min_size=1, max_size=3))
def test_decisions_match(text: str, presets: list[str]) -> None:
    # Loose thresholds, so that documents reach the later rules too.
    n = N.QualityFilter(presets)
    f = F.QualityFilter(presets)
    assert as_tuple(n.check(text)) == as_tuple(f.check(text))
    assert n.clean_lines(text) == f.clean_lines(text)


@SETTINGS
@given(
    data=binary,
    c4=st.fixed_dictionaries(
        {
            "c4_max_word_length": st.none() | st.integers(0, 8),
            "c4_min_words_per_line": st.none() | st.integers(0, 4),
            "c4_terminal_punct": st.booleans(),
            "c4_remove_citations": st.booleans(),
            "c4_min_sentences": st.none() | st.integers(0, 3),
        }
    ),
)
def test_bytes_and_c4_options_match(data: bytes, c4: dict[str, Any]) -> None:
    n = N.QualityFilter(("c4_lines", "gopher_repetition"), **c4)
    f = F.QualityFilter(("c4_lines", "gopher_repetition"), **c4)
    assert close(n.metrics(data), f.metrics(data))
    assert as_tuple(n.check(data)) == as_tuple(f.check(data))
    assert n.clean_lines(data) == f.clean_lines(data)


@settings(max_examples=100, deadline=None)
@given(batch=st.lists(texts, max_size=12))
def test_batches_match(batch: list[str]) -> None:
    presets = ("default", "c4_lines", "gopher_quality", "fineweb")
    rn = N.QualityFilter(presets, threads=2).filter_batch(batch)
    rf = F.QualityFilter(presets).filter_batch(batch)
    assert rn.keep == rf.keep
    assert [as_tuple(r) for r in rn.reasons] == [as_tuple(r) for r in rf.reasons]
    assert rn.counters == rf.counters
    assert rn.texts == rf.texts


def test_introspection_matches() -> None:
    assert N.QualityFilter.preset_defaults() == F.QualityFilter.preset_defaults()
    assert N.QualityFilter.metric_names() == F.QualityFilter.metric_names()
    for presets in (("default",), PRESETS):
        n, f = N.QualityFilter(presets), F.QualityFilter(presets)
        assert n.presets == f.presets
        assert n.rules == f.rules
        assert n.thresholds == f.thresholds
        for name, value in n.thresholds.items():
            assert type(value) is type(f.thresholds[name]), name


@pytest.mark.parametrize(
    "kwargs",
    [
        {"presets": "nope"},
        {"presets": ()},
        {"presets": (1,)},
        {"presets": 5},
        {"max_symbol_ratoi": 0.1},
        {"gopher_min_words": 3},
        {"max_symbol_ratio": "x"},
        {"max_symbol_ratio": float("inf")},
        {"min_words": 1.5},
        {"min_words": True},
        {"ngram_n": 0},
        {"ngram_window": None},
        {"threads": -1},
        {"threads": 1.0},
        {"presets": "c4", "c4_javascript": None},
        {"presets": "c4", "c4_max_word_length": -1},
        {"presets": "fineweb", "fineweb_short_line_length": 2**60},
    ],
)
def test_errors_match(kwargs: dict[str, Any]) -> None:
    def outcome(mod: ModuleType) -> type[BaseException] | None:
        try:
            mod.QualityFilter(**kwargs)
        except Exception as exc:  # the class is the contract; messages may differ
            return type(exc)
        return None

    native, fallback = outcome(N), outcome(F)
    assert native is not None
    assert native is fallback

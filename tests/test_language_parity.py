"""LanguageFilter, native vs fallback: the same CLD2 answers, rejections and counters on
generated multi-script text, arbitrary bytes and real translated manual pages."""

from __future__ import annotations

import gzip
import importlib
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

N = pytest.importorskip("luminamoon.data._native", reason="luminamoon.data._native is not built")
F: ModuleType = importlib.import_module("luminamoon.data.fallbacks")

WORDS = (
    "the", "and", "meeting", "budget", "der", "und", "nicht", "Woche", "le", "est", "pour",
    "année", "и", "не", "неделе", "бюджет", "の", "です", "予算", "会議", "的", "预算", "會議",
    "του", "και", "של", "את", "في", "من", "का", "है", "ของ", "และ", "1999", "x86_64", "!!",
    "\u00a0", "\n", "\t", "\ufffd", "\U0001f600", "\x00", "<b>", "&amp;",
)  # fmt: skip


def same_rejection(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    same_threshold = a.threshold == b.threshold or (
        math.isnan(a.threshold) and math.isnan(b.threshold)
    )
    return (a.rule, a.language, a.score) == (b.rule, b.language, b.score) and same_threshold


def assert_same(docs: list[Any], **options: Any) -> None:
    n = N.LanguageFilter(**options)
    f = F.LanguageFilter(**options)
    rn, rf = n.filter_batch(docs), f.filter_batch(docs)
    assert rn.languages == rf.languages
    assert rn.scores == rf.scores
    assert rn.keep == rf.keep
    assert rn.counters == rf.counters
    for a, b in zip(rn.reasons, rf.reasons, strict=True):
        assert same_rejection(a, b)
    for doc in docs[:5]:
        dn, df = n.detect(doc), f.detect(doc)
        assert (dn.language, dn.score, dn.reliable) == (df.language, df.score, df.reliable)


def test_known_languages_and_version_are_the_same_library() -> None:
    assert N.LanguageFilter.known_languages() == F.LanguageFilter.known_languages()
    assert N.LanguageFilter.model_version() == F.LanguageFilter.model_version()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(WORDS), max_size=60).map(" ".join), max_size=6))
def test_generated_multiscript_text(docs: list[str]) -> None:
    assert_same(docs, languages=["en", "de", "ja", "ru"], min_score=0.4, min_scores={"ja": 0.2})


@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=4))
def test_arbitrary_bytes(docs: list[bytes]) -> None:
    assert_same(docs, min_score=0.3)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=200), max_size=4))
def test_arbitrary_str_with_surrogates(docs: list[str]) -> None:
    assert_same(docs)


MAN = Path("/usr/share/man")


@pytest.mark.skipif(not MAN.is_dir(), reason="no manual pages here")
def test_real_translated_manual_pages() -> None:
    docs: list[str] = []
    for folder in sorted(MAN.iterdir()):
        if folder.name.startswith("man") or not folder.is_dir():
            continue
        for page in sorted(folder.glob("man*/*.gz"))[:6]:
            raw = gzip.decompress(page.read_bytes()).decode("utf-8", "replace")
            docs.append(raw)
    assert len(docs) > 50
    assert_same(docs, languages=["de", "fr", "ja", "zh", "ru"], min_score=0.6)


def test_pipeline_stage_parity() -> None:
    import luminamoon.data as lmd

    class FallbackPipeline(lmd.FusedPipeline):
        _backend = F

    class NativePipeline(lmd.FusedPipeline):
        _backend = N

    docs = ["Guten Tag, wie geht es Ihnen heute?", "Good morning, how are you today?", "", "x"]
    docs += ["これは日本語の文章です。", "Это русский текст для проверки.", "\xff bad"]
    options: dict[str, Any] = {"language": {"languages": ["en", "ja"]}, "near_dedup": False}
    rn = NativePipeline(**options).process(docs)
    rf = FallbackPipeline(**options).process(docs)
    assert rn.dropped_by.tolist() == rf.dropped_by.tolist()
    assert list(rn.texts) == list(rf.texts)
    assert rn.counters == rf.counters
    assert [r and (r.stage, r.rule, r.value, r.threshold) for r in rn.reasons] == [
        r and (r.stage, r.rule, r.value, r.threshold) for r in rf.reasons
    ]

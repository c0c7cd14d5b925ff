"""QualityFilter's "language" preset: the metrics `language` / `language_score` and the rules
`languages` / `min_language_score` (per-language minimums), computed by LanguageFilter's code,
through the public API (the suite runs once per backend), plus native-vs-fallback parity and the
pipeline's TOML round trip."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import luminamoon.data as lmd

QF = lmd.QualityFilter

EN = (
    "The committee will meet again next week to discuss the budget for the new school year, "
    "and every parent is welcome to attend the meeting in the town hall."
)
DE = (
    "Der Ausschuss trifft sich nächste Woche wieder, um den Haushalt für das neue Schuljahr "
    "zu besprechen, und alle Eltern sind herzlich eingeladen."
)
RU = (
    "Комитет снова соберётся на следующей неделе, чтобы обсудить бюджет на новый учебный год, "
    "и все родители приглашены на встречу."
)
# Mostly German with an English sentence: German, but with a lower share of letters.
MIXED = DE + " " + EN[:90]


def test_preset_defaults_are_fineweb_english() -> None:
    defaults = QF.preset_defaults()["language"]
    assert defaults == {"languages": ["en"], "min_language_score": 0.65}
    f = QF("language")
    assert f.rules == ("languages", "min_language_score")
    assert f.thresholds == {"languages": ["en"], "min_language_score": 0.65}
    assert f.check(EN) is None
    r = f.check(DE)
    assert r is not None
    assert (r.rule, r.metric, r.threshold, r.comparison) == ("languages", "language", 0.0, "!")
    assert r.value == lmd.LanguageFilter().detect(DE).score


def test_metrics_are_languagefilters_and_only_with_the_preset() -> None:
    names = list(QF.metric_names())
    assert "language" not in names
    assert "language_score" not in names
    plain = QF().metrics(DE)
    assert list(plain) == names  # no CLD2 for the other presets
    m = QF(("default", "language")).metrics(DE)
    assert list(m) == [*names, "language", "language_score"]
    assert m == {**plain, **lmd.LanguageFilter().metrics(DE)}
    assert m["language"] == "de"
    # empty or letterless text: 'un' with score 0, as LanguageFilter reports it
    e = QF("language").metrics("")
    assert (e["language"], e["language_score"]) == ("un", 0.0)
    assert QF("language").check("1234 !!!") == lmd.QualityFilter("language").check("")


def test_per_language_minimums_and_default_key() -> None:
    lf = lmd.LanguageFilter()
    mixed = lf.detect(MIXED)
    assert mixed.language == "de"
    assert 0.5 < mixed.score < 0.95
    per = {"de": mixed.score + 0.01, "default": 0.5}
    f = QF("language", languages=["en", "de"], min_language_score=per)
    assert f.check(EN) is None
    assert f.check(DE) is None
    r = f.check(MIXED)
    assert r is not None
    assert (r.rule, r.metric, r.value, r.threshold, r.comparison) == (
        "min_language_score",
        "language_score",
        mixed.score,
        mixed.score + 0.01,
        "<",
    )
    # "default" covers the languages without an entry
    g = QF("language", languages=None, min_language_score={"default": 0.99, "de": 0.0})
    assert g.rules == ("min_language_score",)
    assert g.check(MIXED) is None
    bilingual = lf.detect(EN + " " + RU)
    assert bilingual.language == "ru"
    assert bilingual.score < 0.99
    assert g.check(EN + " " + RU) is not None
    # both rules off: keeps everything, CLD2 still reports the metrics
    off = QF("language", languages=None, min_language_score=None)
    assert off.rules == ()
    assert off.check("") is None
    assert off.metrics(RU)["language"] == "ru"


def test_batch_counters_and_composition_with_other_presets() -> None:
    docs = [EN, DE, RU, "", MIXED, EN.encode("utf-8") + b"\xff"]
    f = QF(("language", "default"), languages=["en", "ru"], min_language_score={"ru": 0.9})
    r = f.filter_batch(docs)
    expected = [f.check(d) for d in docs]
    assert r.reasons == expected
    assert r.keep == [e is None for e in expected]
    assert r.counters["languages"] == sum(e is not None and e.rule == "languages" for e in expected)
    assert list(r.counters) == ["total", "kept", "rejected", "languages", "min_language_score",
                                *QF().rules]  # fmt: skip
    assert r.keep[:3] == [True, False, True]
    # "default" first: a short text fails min_words before CLD2 is asked
    rej = QF(("default", "language")).check("Der Hund.")
    assert rej is not None
    assert rej.rule == "min_words"
    # c4_lines hands its kept text to the language preset
    c4 = QF(("c4_lines", "language"), c4_min_sentences=None)
    assert c4.filter_batch([EN]).keep == [True]


def test_bad_settings() -> None:
    with pytest.raises(lmd.ConfigError, match="did you mean 'en'"):
        QF("language", languages=["eng"])
    with pytest.raises(lmd.ConfigError, match="did you mean 'de'"):
        QF("language", min_language_score={"dee": 0.5})
    with pytest.raises(lmd.ConfigError, match="did you mean 'min_language_score'"):
        QF("language", min_languag_score=0.5)
    with pytest.raises(lmd.ConfigError, match="did you mean 'language'"):
        QF("languag")
    with pytest.raises(lmd.ConfigError, match="belongs to preset 'language'"):
        QF("default", languages=["en"])
    with pytest.raises(ValueError, match="must be in \\[0, 1\\]"):
        QF("language", min_language_score=1.5)
    with pytest.raises(ValueError, match="must be in \\[0, 1\\]"):
        QF("language", min_language_score={"en": -0.1})
    with pytest.raises(ValueError, match="list of language codes or None, got 'en'"):
        QF("language", languages="en")
    with pytest.raises(ValueError, match="mapping of language code to score"):
        QF("language", min_language_score={"en": True})
    with pytest.raises(ValueError, match="mapping of language code to score"):
        QF("language", min_language_score="high")


def test_pipeline_toml_round_trip(tmp_path: Path) -> None:
    p = lmd.FusedPipeline(
        cleaner=False,
        quality={
            "presets": ["language"],
            "languages": ["en", "de"],
            "min_language_score": {"en": 0.65, "default": 0.5},
        },
        exact_dedup=False,
        near_dedup=False,
        pii=False,
    )
    path = tmp_path / "p.toml"
    p.save_config(path)
    text = path.read_text()
    assert "min_language_score" in text
    q = lmd.FusedPipeline.from_config(path)
    assert q.quality.thresholds == p.quality.thresholds
    assert q.quality.thresholds["min_language_score"] == {"en": 0.65, "default": 0.5}
    r = q.process([EN, DE, RU])
    assert list(r.dropped_by) == [0, 0, 3]  # 3: the quality stage
    # a rule switched off (None) travels as "off"
    off = lmd.FusedPipeline(
        cleaner=False,
        quality={"presets": ["language"], "languages": None, "min_language_score": 0.9},
        exact_dedup=False,
        near_dedup=False,
        pii=False,
    )
    off.save_config(path)
    again = lmd.FusedPipeline.from_config(path).quality
    assert again.thresholds == {"languages": None, "min_language_score": 0.9}
    assert again.rules == ("min_language_score",)


# -- parity -------------------------------------------------------------------------------------

WORDS = (
    "the", "and", "meeting", "budget", "der", "und", "nicht", "Woche", "le", "est", "pour",
    "и", "не", "неделе", "の", "です", "予算", "的", "预算", "1999", "!!", "\n", "\ufffd",
    "\U0001f600", "\x00", "\ud800",
)  # fmt: skip


def as_tuple(r: Any) -> tuple[Any, ...] | None:
    return None if r is None else (r.rule, r.metric, r.value, r.threshold, r.comparison)


def _parity_pair(**options: Any) -> tuple[Any, Any]:
    native = pytest.importorskip("luminamoon.data._native", reason="native module not built")
    fallback: ModuleType = importlib.import_module("luminamoon.data.fallbacks")
    return native.QualityFilter(**options), fallback.QualityFilter(**options)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.lists(st.sampled_from(WORDS), max_size=50).map(" ".join),
            st.binary(max_size=80),
        ),
        max_size=5,
    )
)
def test_parity_native_fallback(docs: list[Any]) -> None:
    for options in (
        {"presets": ("language",)},
        {
            "presets": ("c4_lines", "language", "default"),
            "languages": ["en", "de", "ru", "ja"],
            "min_language_score": {"ja": 0.3, "default": 0.5},
            "c4_min_sentences": None,
        },
    ):
        n, f = _parity_pair(**options)
        rn, rf = n.filter_batch(docs), f.filter_batch(docs)
        assert (rn.keep, rn.counters, rn.texts) == (rf.keep, rf.counters, rf.texts)
        assert [as_tuple(r) for r in rn.reasons] == [as_tuple(r) for r in rf.reasons]
        for doc in docs[:3]:
            assert n.metrics(doc)["language"] == f.metrics(doc)["language"]
            assert n.metrics(doc)["language_score"] == f.metrics(doc)["language_score"]
            assert as_tuple(n.check(doc)) == as_tuple(f.check(doc))
        assert n.thresholds == f.thresholds


def test_parity_errors() -> None:
    native = pytest.importorskip("luminamoon.data._native", reason="native module not built")
    fallback: ModuleType = importlib.import_module("luminamoon.data.fallbacks")
    for bad in (
        {"languages": ["eng"]},
        {"min_language_score": {"xx-bad": 0.1}},
        {"min_language_score": 2},
        {"languages": [1]},
        {"min_language_score": [0.5]},
    ):
        messages = []
        for module in (native, fallback):
            with pytest.raises((lmd.ConfigError, ValueError)) as info:
                module.QualityFilter("language", **bad)
            messages.append((type(info.value).__name__, str(info.value)))
        assert messages[0] == messages[1], bad

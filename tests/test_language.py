"""LanguageFilter (CLD2): detection, rules, counters, errors and the pipeline stage, through the
public API (the suite runs once per backend)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

import luminamoon.data as lmd

EN = (
    "The committee will meet again next week to discuss the budget for the new school year, "
    "and every parent is welcome to attend the meeting in the town hall."
)
DE = (
    "Der Ausschuss trifft sich nächste Woche wieder, um den Haushalt für das neue Schuljahr "
    "zu besprechen, und alle Eltern sind herzlich eingeladen."
)
JA = (
    "委員会は来週、新しい学年の予算について話し合うために再び集まります。"
    "保護者の皆様の参加をお待ちしています。"
)
RU = (
    "Комитет снова соберётся на следующей неделе, чтобы обсудить бюджет на новый учебный год, "
    "и все родители приглашены на встречу."
)
ZH = "委员会将于下周再次开会\uff0c讨论新学年的预算\uff0c欢迎所有家长参加在市政厅举行的会议。"


def test_clear_text_in_five_languages() -> None:
    f = lmd.LanguageFilter()
    got = {lang: f.detect(text) for lang, text in (("en", EN), ("de", DE), ("ja", JA), ("ru", RU))}
    for lang, d in got.items():
        assert d.language == lang
        assert d.score >= 0.9
        assert d.reliable
    assert f.detect(ZH).language in {"zh", "zh-Hant"}
    assert f.metrics(EN) == {"language": "en", "language_score": got["en"].score}


def test_unknown_for_empty_and_letterless_text() -> None:
    f = lmd.LanguageFilter()
    assert f.detect("").language == "un"
    assert f.detect("").score == 0.0
    assert f.detect("12345 67890 !!! ???").score == 0.0


def test_bytes_lone_surrogates_and_invalid_utf8_are_repaired_like_replace() -> None:
    f = lmd.LanguageFilter()
    bad = DE.encode()[:20] + b"\xff\xed\xa0\x80" + DE.encode()[20:]
    assert f.detect(bad) == f.detect(bad.decode("utf-8", "replace"))
    assert f.detect(DE.encode()) == f.detect(DE)
    assert f.detect(bytearray(DE.encode())) == f.detect(memoryview(DE.encode()))
    with_surrogate = DE[:20] + "\ud800" + DE[20:]
    assert f.detect(with_surrogate) == f.detect(DE[:20] + "\ufffd" * 3 + DE[20:])


def test_the_bytes_after_a_document_do_not_change_the_answer() -> None:
    # CLD2 reads past a character that ends its input (docs/language.md "Robustness"): in an
    # Arrow buffer or a slice of a larger buffer, those bytes are the next document's. Both
    # backends hand CLD2 a zero-padded copy, so the answer is that of the document alone.
    pa = pytest.importorskip("pyarrow")
    f = lmd.LanguageFilter(threads=1)
    texts = ["abcd\u03b1", DE + "ä", JA, EN + " €", "😀", "a"]
    alone = [f.detect(t) for t in texts]
    for follower in (b"\x00", b"x", b"\xce", b"\xb1", b"\xe3\x81", b" the"):
        for text, expected in zip(texts, alone, strict=True):
            raw = text.encode() + follower
            assert f.detect(memoryview(raw)[: len(text.encode())]) == expected, (text, follower)
        # Arrow: documents back to back in one data buffer, each followed by the next.
        batch = pa.array([t + follower.decode("utf-8", "replace") for t in texts] + texts)
        got = f.filter_batch(batch.slice(len(texts)))
        assert got.languages == [d.language for d in alone]
        assert got.scores == [d.score for d in alone]


def test_rules_languages_and_scores() -> None:
    f = lmd.LanguageFilter(["en", "ja"], 0.5)
    assert f.languages == ("en", "ja")
    assert f.check(EN) is None
    assert f.check(JA) is None
    r = f.check(DE)
    assert r is not None
    assert (r.rule, r.language) == ("language", "de")
    assert math.isnan(r.threshold)
    mixed = EN + " " + DE
    score = f.detect(mixed).score
    assert 0 < score < 1
    strict = lmd.LanguageFilter(min_score=0.5, min_scores={"en": 1.0, "de": 1.0})
    r = strict.check(mixed)
    assert r is not None
    assert r.rule == "min_language_score"
    assert r.threshold == 1.0
    assert r.score == score
    assert strict.min_scores == {"en": 1.0, "de": 1.0}
    assert lmd.LanguageFilter(min_score=score).check(mixed) is None


def test_filter_batch_counters_and_arrow_input() -> None:
    pa = pytest.importorskip("pyarrow")
    f = lmd.LanguageFilter(["en"], 0.9, threads=2)
    docs = [EN, DE, "", JA] * 50
    result = f.filter_batch(docs)
    assert len(result) == 200
    assert result.counters == {
        "total": 200,
        "kept": 50,
        "rejected": 150,
        "language": 150,
        "min_language_score": 0,
    }
    assert result.languages[:4] == ["en", "de", "un", "ja"]
    assert result.keep[:4] == [True, False, False, False]
    arrow = f.filter_batch(pa.array(docs))
    assert arrow.keep == result.keep
    assert arrow.scores == result.scores
    assert repr(result) == "LanguageResult(total=200, kept=50, rejected=150)"


def test_option_errors_name_the_option() -> None:
    with pytest.raises(lmd.ConfigError, match=r"unknown language code 'eng'.*did you mean"):
        lmd.LanguageFilter(["eng"])
    with pytest.raises(lmd.ConfigError, match=r"in min_scores"):
        lmd.LanguageFilter(min_scores={"germ": 0.5})
    with pytest.raises(ValueError, match=r"min_score must be in \[0, 1\], got 1.500000"):
        lmd.LanguageFilter(min_score=1.5)
    with pytest.raises(ValueError, match=r"min_score must be in \[0, 1\], got nan"):
        lmd.LanguageFilter(min_score=math.nan)
    with pytest.raises(TypeError, match=r"LanguageFilter: min_score must be a float, got str"):
        lmd.LanguageFilter(min_score="0.5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"languages must be a sequence of str or None, got str"):
        lmd.LanguageFilter("en")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"languages must be a str, got int"):
        lmd.LanguageFilter([1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"expected str or bytes-like, got int"):
        lmd.LanguageFilter().detect(3)


def test_known_languages_and_version() -> None:
    codes = lmd.LanguageFilter.known_languages()
    assert {"en", "de", "ja", "zh", "zh-Hant", "ru", "un"} <= set(codes)
    assert len(codes) == len(set(codes))
    assert lmd.LanguageFilter.model_version()


def test_pipeline_stage_runs_after_the_cleaner_and_round_trips_its_config(
    tmp_path: Path,
) -> None:
    p = lmd.FusedPipeline(
        language={"languages": ["en", "de"], "min_score": 0.5, "min_scores": {"de": 0.9}},
        quality=False,
        near_dedup=False,
        pii=False,
    )
    assert p.stages == ("cleaner", "language", "exact_dedup")
    r = p.process([EN, DE, JA, "   ", EN])
    assert r.dropped_by.tolist() == [0, 0, 2, 1, 4]
    reason = r.reasons[2]
    assert reason is not None
    assert (reason.stage, reason.rule, reason.threshold) == ("language", "language", None)
    assert r.counters["language"] == {
        "total": 4,
        "kept": 3,
        "rejected": 1,
        "language": 1,
        "min_language_score": 0,
    }
    path = tmp_path / "p.toml"
    p.save_config(path)
    q = lmd.FusedPipeline.from_config(path)
    assert q.to_config() == p.to_config()
    assert q.language.min_scores == {"de": 0.9}
    assert lmd.FusedPipeline(language="en").language.languages == ("en",)
    with pytest.raises(lmd.ConfigError, match=r"language: unknown option 'min_scor'.*'min_score'"):
        lmd.FusedPipeline.from_config({"language": {"min_scor": 0.5}})
    with pytest.raises(lmd.ConfigError, match=r"unknown key 'langauge'.*'language'"):
        lmd.FusedPipeline.from_config({"langauge": True})


MAN = Path("/usr/share/man")


@pytest.mark.skipif(not (MAN / "de").is_dir(), reason="no translated manual pages here")
def test_translated_manual_pages_are_recognised() -> None:
    """Real text: the first translated pages of four languages (roff requests dropped)."""
    f = lmd.LanguageFilter()
    for folder, want in (("de", "de"), ("fr", "fr"), ("ru", "ru"), ("ja", "ja")):
        texts = []
        for page in sorted((MAN / folder).glob("man1/*.gz"))[:12]:
            raw = gzip.decompress(page.read_bytes()).decode("utf-8", "replace")
            text = "\n".join(x for x in raw.splitlines() if not x.startswith((".", "'")))
            if len(text) > 500:  # not a .so link
                texts.append(text)
        got = f.filter_batch(texts).languages
        # Some pages are only partly translated (chage(1) in German is mostly English, and CLD2
        # says so): most pages, not all, are in the folder's language.
        assert len(texts) >= 5
        assert sum(lang == want for lang in got) >= 0.75 * len(got), (folder, got)


def test_main_job_languages_option(tmp_path: Path) -> None:
    """`luminamoon-data run --languages en`: the language stage drops the other languages and
    the report counts them under drops.language."""
    from luminamoon.data import cli

    shard = tmp_path / "in.jsonl"
    other = (
        "Volunteers repaired the old bridge over the river last summer, and the village "
        "celebrated with music, food and a small market on the square."
    )
    docs = [{"id": i, "text": t} for i, t in enumerate((EN, DE, JA, other))]
    shard.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["run", str(shard), "-o", str(out), "--format", "jsonl", "--languages", "en"]
    assert cli.main([*argv, "--fields", "id", "--progress", "none", "--json"]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["documents"]["out"] == 2
    assert report["drops"]["language"]["language"]["count"] == 2
    assert report["stages"]["language"]["total"] == 4

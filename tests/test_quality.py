"""QualityFilter: presets, every rule, results, bad input and option errors (docs/quality.md).

Runs on whichever backend is live (``LUMINAMOON_FORCE_FALLBACK=1`` for the fallback).
"""

from __future__ import annotations

import importlib
import math
import random
import sys
from pathlib import Path
from typing import Any

import pytest

import luminamoon.data as lmd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import quality_corpus

pa: Any
try:
    pa = importlib.import_module("pyarrow")
except ImportError:
    pa = None
needs_arrow = pytest.mark.skipif(pa is None, reason="pyarrow is not installed")

QF = lmd.QualityFilter
NATIVE = lmd.BACKEND == "native"

SENTENCES = (
    "The old bridge over the river was rebuilt in the spring of that year.",
    "Residents of the valley gathered to watch the first train cross it.",
    "According to the council, the work cost far more than anyone had planned.",
    "Still, most people agreed that the town looked better with it restored.",
    "Children ran along the bank while their parents talked about the harvest.",
    "By evening the lamps were lit and the market square had filled with music.",
)


def prose(n: int = 6, sep: str = " ") -> str:
    return sep.join(SENTENCES[i % len(SENTENCES)] for i in range(n))


def rule(f: Any, text: str | bytes) -> str | None:
    rejection = f.check(text)
    return None if rejection is None else rejection.rule


def only(preset: str, keep: str, **extra: Any) -> Any:
    """A filter with every rule of ``preset`` off except ``keep``."""
    defaults = QF.preset_defaults()[preset]
    off: dict[str, Any] = {}
    for name, value in defaults.items():
        if name == keep or name in extra:
            continue
        if isinstance(value, bool):
            off[name] = False if name in ("c4_lorem_ipsum", "c4_curly_bracket") else value
        elif name.startswith(("min_", "max_", "gopher_", "fineweb_min", "fineweb_max", "c4_min_s")):
            off[name] = None
    return QF((preset,), **off, **extra)


# -- configuration ----------------------------------------------------------------------------


def test_defaults_and_introspection() -> None:
    f = QF()
    assert f.presets == ("default",)
    assert f.thresholds == QF.preset_defaults()["default"]
    assert f.rules[0] == "min_words"
    assert set(QF.preset_defaults()) == {
        "default",
        "gopher_quality",
        "gopher_repetition",
        "c4",
        "c4_lines",
        "fineweb",
        "language",
    }
    assert QF.preset_defaults()["gopher_quality"]["gopher_min_words"] == 50
    assert QF.preset_defaults()["fineweb"]["fineweb_min_line_punct_ratio"] == 0.12
    assert QF.preset_defaults()["gopher_repetition"]["gopher_max_dup_10gram_char_ratio"] == 0.1
    assert list(f.metrics("x")) == list(QF.metric_names())
    assert "QualityFilter(presets=('default',))" in repr(f)


def test_presets_compose_and_override() -> None:
    f = QF(["gopher_quality", "fineweb", "gopher_quality"], gopher_min_words=5, threads=1)
    assert f.presets == ("gopher_quality", "fineweb")
    assert f.thresholds["gopher_min_words"] == 5
    assert f.rules[-1] == "fineweb_max_newline_word_ratio"
    g = QF("c4", c4_min_sentences=None, c4_javascript=False)
    assert "c4_min_sentences" not in g.rules
    assert g.thresholds["c4_javascript"] is False
    assert QF("default", max_char_entropy=None).rules.count("max_char_entropy") == 0


@pytest.mark.parametrize(
    ("kwargs", "suggestion"),
    [
        ({"presets": "gopher_qualty"}, "gopher_quality"),
        ({"presets": ("default", "finweb")}, "fineweb"),
        ({"max_symbol_ratoi": 0.2}, "max_symbol_ratio"),
        ({"min_word": 3}, "min_words"),
        ({"presets": "fineweb", "fineweb_short_line_lenght": 20}, "fineweb_short_line_length"),
    ],
)
def test_typos_suggest(kwargs: dict[str, Any], suggestion: str) -> None:
    with pytest.raises(lmd.ConfigError, match=f"did you mean '{suggestion}'"):
        QF(**kwargs)


def test_configuration_errors() -> None:
    with pytest.raises(lmd.ConfigError, match="valid presets"):
        QF("zzzzzzzzzz")
    with pytest.raises(lmd.ConfigError, match="not selected"):
        QF("default", gopher_min_words=3)
    with pytest.raises(ValueError, match="at least one preset"):
        QF(())
    with pytest.raises(TypeError):
        QF((1,))  # type: ignore[arg-type]
    for bad in (
        {"max_symbol_ratio": "0.2"},
        {"max_symbol_ratio": float("nan")},
        {"max_symbol_ratio": True},
        {"min_words": 2.5},
        {"ngram_n": 0},
        {"ngram_n": None},
        {"threads": -1},
    ):
        with pytest.raises(ValueError):  # noqa: PT011 - the class is the contract
            QF(**bad)
    with pytest.raises(ValueError):  # noqa: PT011
        QF("c4", c4_policy=1)


# -- the default preset ------------------------------------------------------------------------


def test_default_preset_rules() -> None:
    f = QF()
    assert f.is_high_quality(prose())
    assert rule(f, "Too short to judge.") == "min_words"
    assert rule(f, "ab ab ab ab ab ab ab ab ab ab ab ab") == "min_char_entropy"
    blob = quality_corpus.junk("base64_blob", random.Random(1))
    assert rule(f, blob) == "max_char_entropy"
    assert rule(f, prose(24)) == "max_ngram_repetition"  # the same six sentences four times
    table = "\n".join(f"row{i} | {i * 3.25:.2f} | {i * 17 % 997} | {i % 7}.5%" for i in range(30))
    assert rule(f, table) == "max_symbol_ratio"
    menu = "Home | About Us | Services | Blog | Contact | Login\nNews | Sports | Weather | Shop\n"
    assert rule(f, menu) == "max_capitalized_word_ratio"


def test_core_metrics_formulas() -> None:
    f = QF()
    assert f.metrics("aabb")["char_entropy"] == 1.0
    assert f.metrics("abcd")["char_entropy"] == 2.0
    assert f.metrics("")["char_entropy"] == 0.0
    m = f.metrics("a b a b a b")
    assert m["ngram_repetition"] == 3 / 5  # bigrams ab ba ab ba ab: 3 of 5 repeat an earlier one
    assert QF(ngram_n=3).metrics("a b a b a b")["ngram_repetition"] == 2 / 4
    assert QF(ngram_window=2).metrics("a b a b a b")["ngram_repetition"] == 0.0
    assert f.metrics("ab 12 !?")["symbol_ratio"] == 4 / 6  # digits count as symbols
    assert f.metrics("Hello World again")["capitalized_word_ratio"] == 2 / 3
    assert f.metrics("Don't stop.")["words"] == 3  # Do, n't, stop


# -- Gopher -----------------------------------------------------------------------------------


def test_gopher_quality_rules() -> None:
    f = QF("gopher_quality")
    assert f.is_high_quality(prose(8))
    short = f.check("The cat sat on the mat.")
    assert short is not None
    assert (short.rule, short.metric, short.value, short.threshold, short.comparison) == (
        "gopher_min_words",
        "gopher_words",
        6.0,
        50.0,
        "<",
    )
    assert rule(QF("gopher_quality", gopher_max_words=20), prose(8)) == "gopher_max_words"
    assert rule(only("gopher_quality", "gopher_min_mean_word_length"), "a b c d") == (
        "gopher_min_mean_word_length"
    )
    assert rule(only("gopher_quality", "gopher_max_mean_word_length"), "x" * 40) == (
        "gopher_max_mean_word_length"
    )
    assert rule(f, prose(8) + " #tag" * 30) == "gopher_max_hash_ratio"
    assert rule(f, prose(8) + " wait..." * 30) == "gopher_max_ellipsis_ratio"
    assert rule(f, "\n".join("- " + s for s in SENTENCES * 2)) == "gopher_max_bullet_lines_ratio"
    assert rule(f, "\n".join(s + " and then\u2026" for s in SENTENCES * 2)) == (
        "gopher_max_ellipsis_lines_ratio"
    )
    assert rule(f, prose(8) + " 2023 1999 4096 8080" * 10) == "gopher_min_alpha_words_ratio"
    assert rule(f, "Lorem ipsum dolor sit amet " * 15) == "gopher_min_stop_words"


def test_gopher_repetition_rules() -> None:
    f = QF("gopher_repetition")
    assert f.is_high_quality(prose(6))
    assert rule(f, "") == "gopher_min_chars"
    assert f.is_high_quality("   ")  # as in datatrove: not empty, and nothing repeats
    paragraphs = "\n\n".join([SENTENCES[0]] * 3 + [prose(6)])
    assert rule(f, paragraphs) == "gopher_max_dup_para_ratio"
    lines = "\n".join(["same line here"] * 10 + [prose(6)])
    assert rule(f, lines) == "gopher_max_dup_para_char_ratio" or rule(f, lines) == (
        "gopher_max_dup_line_ratio"
    )
    m = f.metrics("a b a b a b")
    assert m["gopher_top_2gram_char_ratio"] == 9 / 11  # "a b" x3, 3 chars each, 11 chars
    twice = prose(6, sep="\n") + "\n" + prose(6, sep="\n")
    assert rule(only("gopher_repetition", "gopher_max_dup_line_char_ratio"), twice) == (
        "gopher_max_dup_line_char_ratio"
    )
    name = "gopher_max_top_2gram_char_ratio"
    assert rule(only("gopher_repetition", name), "hello world " * 30 + prose(2)) == name
    for n in (3, 4):
        name = f"gopher_max_top_{n}gram_char_ratio"
        assert rule(only("gopher_repetition", name), "the big red dog " * 20 + prose(6)) == name
    for n in range(5, 11):
        name = f"gopher_max_dup_{n}gram_char_ratio"
        assert rule(only("gopher_repetition", name), prose(6) + " " + prose(6)) == name
    # n-grams are joined with no separator: two word splits of one string are the same n-gram
    assert f.metrics("ab c d e f x a bc d e f")["gopher_dup_5gram_char_ratio"] == 6 / 23


# -- C4 ---------------------------------------------------------------------------------------


def test_c4_document_rules() -> None:
    f = QF("c4")
    assert f.is_high_quality(prose(6))
    assert rule(f, prose(6) + "\nSome code { here } now.") == "c4_curly_bracket"
    assert rule(f, "Lorem ipsum dolor sit amet.\n" + prose(6)) == "c4_lorem_ipsum"
    # the first such line decides, as datatrove stops there
    assert rule(f, "A line { with a brace.\nLorem ipsum dolor sit.\n" + prose(6)) == (
        "c4_curly_bracket"
    )
    assert rule(f, prose(2)) == "c4_min_sentences"
    assert QF("c4", c4_min_sentences=2).is_high_quality(prose(2))
    m = f.metrics("This line ends with a citation at its end. [12]")
    assert m["c4_lines_no_terminal_punct"] == 1  # the space left behind, as in datatrove


def test_c4_min_sentences_counts_only_up_to_its_threshold() -> None:
    # The pass stops counting sentences once the threshold is reached: decisions and the value of
    # a rejection equal the full count (metrics() counts every kept line) at every threshold.
    lines = [prose(k, sep=" ") for k in (1, 3, 2, 4)] + ["No end here", prose(1), "Dr. Smith went."]
    texts = ["\n".join(lines[:n]) for n in range(len(lines) + 1)]
    for threshold in (0, 1, 2, 5, 9, 11, 12, 13, 30):
        f = QF("c4", c4_min_sentences=threshold)
        for text in texts:
            total = f.metrics(text)["c4_sentences"]
            rejection = f.check(text)
            if total < threshold:
                assert rejection is not None, (threshold, text)
                assert rejection.rule == "c4_min_sentences"
                assert rejection.value == total
            else:
                assert rejection is None, (threshold, text)


def test_c4_line_removal() -> None:
    text = "\n".join(
        [
            "Menu",
            prose(6),
            "Please enable JavaScript in your browser.",
            "Short one.",
            "Read our privacy policy for all the details of it.",
            "A word longer than a thousand characters: " + "y" * 1001 + ".",
        ]
    )
    f = QF("c4_lines")
    kept = f.clean_lines(text)
    assert kept == prose(6)
    result = f.filter_batch([text, prose(2)])
    assert result.texts == [kept, None]
    assert result.keep == [True, False]
    m = f.metrics(text)
    assert (m["c4_lines"], m["c4_kept_lines"]) == (6, 1)
    assert m["c4_lines_javascript"] == m["c4_lines_policy"] == m["c4_lines_too_long_word"] == 1
    # later presets see the text after line removal; with c4 they see the original
    menu = prose(6) + "\n" + "\n".join(f"Menu item {i}" for i in range(20))
    assert rule(QF(("c4", "fineweb")), menu) == "fineweb_min_line_punct_ratio"
    assert QF(("c4_lines", "fineweb")).is_high_quality(menu)
    assert QF("c4").filter_batch([text]).texts is None


# -- FineWeb ----------------------------------------------------------------------------------


def test_fineweb_rules() -> None:
    f = QF("fineweb")
    assert f.is_high_quality(prose(6, sep="\n"))
    assert rule(f, "") == "fineweb_min_lines"
    assert rule(f, " \n\t\n") == "fineweb_min_lines"
    assert rule(f, "no punctuation here at all\nnor here at all\n") == (
        "fineweb_min_line_punct_ratio"
    )
    zero_ok = QF("fineweb", fineweb_line_punct_exclude_zero=True)
    assert rule(zero_ok, "no punctuation here at all\nnor here at all\n") != (
        "fineweb_min_line_punct_ratio"
    )
    assert rule(f, "Short.\nLines.\nOnly.\n" + SENTENCES[0]) == "fineweb_max_short_line_ratio"
    assert rule(f, prose(3, sep="\n") + "\n" + SENTENCES[0]) == "fineweb_max_dup_line_char_ratio"
    listy = "\n".join(f"Item {i}." for i in range(24))
    assert rule(only("fineweb", "fineweb_max_newline_word_ratio"), listy) == (
        "fineweb_max_newline_word_ratio"
    )


# -- batches and results ----------------------------------------------------------------------


def test_filter_batch_results() -> None:
    f = QF(("default", "gopher_quality"))
    texts = [prose(8), "Too short.", prose(8).encode(), bytearray(b"ab ab ab ab ab ab ab ab ab ab")]
    result = f.filter_batch(texts)
    assert len(result) == 4
    assert result.keep == [True, False, True, False]
    assert result.reasons[0] is None
    assert result.reasons[1] == f.check("Too short.")
    assert result.reasons[3] is not None
    assert result.reasons[3].rule == "min_char_entropy"
    assert result.counters["total"] == 4
    assert result.counters["kept"] == 2
    assert result.counters["rejected"] == 2
    assert result.counters["min_words"] == 1
    assert set(result.counters) == {"total", "kept", "rejected", *f.rules}
    assert result.texts is None
    assert "kept=2" in repr(result)
    assert hash(result.reasons[1]) == hash(f.check("Too short."))


def test_threads_do_not_change_results() -> None:
    texts = [t for _, t in quality_corpus.varied_corpus(120, seed=3)]
    presets = ("default", "gopher_repetition", "c4_lines", "fineweb")
    one = QF(presets, threads=1).filter_batch(texts)
    many = QF(presets, threads=3).filter_batch(texts)
    assert one.keep == many.keep
    assert one.reasons == many.reasons
    assert one.texts == many.texts
    assert one.counters == many.counters


@needs_arrow
def test_arrow_input() -> None:
    texts = [prose(8), "Too short.", "", "é" * 20]
    f = QF(("default", "c4_lines"))
    expected = f.filter_batch(texts)
    for array in (pa.array(texts), pa.array(texts, pa.large_string()), pa.chunked_array([texts])):
        got = f.filter_batch(array)
        assert got.keep == expected.keep
        assert got.reasons == expected.reasons
        assert got.texts == expected.texts
    with pytest.raises(ValueError, match="null"):
        f.filter_batch(pa.array(["a", None]))
    with pytest.raises(TypeError):
        f.filter_batch(pa.array([1, 2]))


def test_batch_type_errors() -> None:
    f = QF()
    with pytest.raises(TypeError):
        f.filter_batch("not a list")
    with pytest.raises(TypeError):
        f.filter_batch([1])
    with pytest.raises(TypeError):
        f.is_high_quality(3)  # type: ignore[arg-type]


# -- bad input --------------------------------------------------------------------------------

ALL = ("default", "gopher_quality", "gopher_repetition", "c4", "fineweb")


def _finite(metrics: dict[str, float]) -> None:
    for name, value in metrics.items():
        assert math.isfinite(value), name
        assert value >= 0, name


def test_empty_and_whitespace() -> None:
    f = QF(ALL)
    for text in ("", " ", "\n\n\t \u3000\n"):
        _finite(f.metrics(text))
        assert not f.is_high_quality(text)
        assert rule(f, text) == "min_words"
    m = f.metrics("")
    assert m["chars"] == m["words"] == m["char_entropy"] == m["gopher_mean_word_length"] == 0


def test_text_without_words() -> None:
    f = QF(ALL)
    for text in ("!!! ??? ... ---", "12345 678 90", "\u2026\u2026 #### ****"):
        _finite(f.metrics(text))
        assert rule(f, text) == "min_words"
    assert QF("gopher_quality").metrics("!!! ???")["gopher_words"] == 0


def test_invalid_utf8_bytes_and_nul() -> None:
    f = QF(ALL)
    bad = b"abc \xff\xfe caf\xc3\xa9 \xed\xa0\x80 \xe2\x82"
    decoded = bad.decode("utf-8", "replace")
    assert f.metrics(bad) == f.metrics(decoded)
    assert QF.tokenize(bad) == QF.tokenize(decoded)
    assert f.metrics("\ud800 lone") == f.metrics("\ufffd\ufffd\ufffd lone")
    m = f.metrics("a\x00b\x00c")
    _finite(m)
    assert m["chars"] == 5
    assert m["symbol_ratio"] == 2 / 5
    assert f.metrics(memoryview(bad)) == f.metrics(bad)


def test_filter_batch_repairs_bytes_and_lone_surrogates() -> None:
    # filter_batch does not check a str's own UTF-8 again (it is valid), but still repairs bytes,
    # buffers and a str with a lone surrogate (passed on as surrogatepass bytes), wherever they
    # sit in the batch.
    bad = b"abc \xff\xfe caf\xc3\xa9 \xed\xa0\x80 \xe2\x82 words " * 30
    lone = "\ud800 lone word here, and more " * 30
    batch = ["caf\u00e9 plain words " * 30, bad, lone, "ascii only text " * 30, memoryview(bad)]
    repaired = [
        batch[0],
        bad.decode("utf-8", "replace"),
        lone.replace("\ud800", "\ufffd\ufffd\ufffd"),
        batch[3],
        bad.decode("utf-8", "replace"),
    ]
    for presets in (ALL, "gopher_repetition"):
        f = QF(presets)
        got = f.filter_batch(batch)
        assert list(got.keep) == list(f.filter_batch(repaired).keep)
        assert list(got.reasons) == [f.check(t) for t in repaired]


def test_one_huge_word() -> None:
    # 50 MB on the native backend; the pure-Python fallback takes ~1 s per MB, so 2 MB there.
    size = (50 if NATIVE else 2) << 20
    word = "a" * size
    f = QF(ALL)
    m = f.metrics(word)
    _finite(m)
    assert m["chars"] == size
    assert m["words"] == 1
    assert rule(f, word) == "min_words"
    assert QF("c4").metrics(word)["c4_lines_too_long_word"] == 1
    assert QF.tokenize("(" * 1000 + "x" + ")" * 1000) == ["("] * 1000 + ["x"] + [")"] * 1000
    # 50,000 exceptions merged back by the special-case matcher: linear, not 50,000 list splices
    assert QF.tokenize("f(x): " * 50_000)[:4] == ["f(x", "):", "f(x", "):"]


# -- calibration (docs/quality.md, "Calibration") ---------------------------------------------


def test_default_preset_calibration() -> None:
    corpus = quality_corpus.calibration_corpus(n_prose=400, n_junk_each=40, seed=23)
    f = QF()
    result = f.filter_batch([text for _, text in corpus])
    by_label: dict[str, list[bool]] = {}
    for (label, _), keep in zip(corpus, result.keep, strict=True):
        by_label.setdefault(label, []).append(keep)
    prose_keep = [k for kind in quality_corpus.PROSE_KINDS for k in by_label[kind]]
    assert sum(prose_keep) / len(prose_keep) >= 0.98
    for kind in quality_corpus.JUNK_KINDS:
        kept = by_label[kind]
        assert 1 - sum(kept) / len(kept) >= 0.95, kind

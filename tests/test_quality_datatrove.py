"""QualityFilter vs datatrove 0.10.1 (and spaCy, its English word tokenizer) on generated
documents: agreement per rule and per filter, at the levels docs/quality.md documents.

Skipped unless datatrove and spaCy are installed (``pip install -r requirements-bench.txt``).
bench/quality_agreement.py runs the same comparison on 3,000 documents and prints the table.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

import luminamoon.data as lmd

pytest.importorskip("datatrove", reason="datatrove is not installed (requirements-bench.txt)")
spacy = pytest.importorskip("spacy", reason="spaCy is not installed (requirements-bench.txt)")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import quality_agreement  # noqa: E402
import quality_corpus  # noqa: E402

# The pure-Python backend is ~50x slower: it checks fewer documents in the same time budget.
DOCS = 700 if lmd.BACKEND == "native" else 150


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return [text for _, text in quality_corpus.varied_corpus(DOCS, seed=11)]


@pytest.fixture(scope="module")
def report(texts: list[str]) -> dict[str, object]:
    return quality_agreement.run(texts, sys.modules["luminamoon.data"])


def test_tokens_identical(report: dict[str, object]) -> None:
    assert report["tokens_identical"] == 1.0


def test_every_rule_agrees(texts: list[str], report: dict[str, object]) -> None:
    rules = report["rules"]
    assert isinstance(rules, dict)
    assert len(rules) == 32
    for name, row in rules.items():
        if name == "gopher_min_mean_word_length":
            continue
        assert row["agreement"] == 1.0, (name, row)
    # The one documented difference: with gopher_min_words off, a document without a single
    # non-symbol word has mean word length 0.0 here (rejected) but NaN in datatrove (kept).
    row = rules["gopher_min_mean_word_length"]
    gopher = lmd.QualityFilter("gopher_quality")
    wordless = sum(gopher.metrics(text)["gopher_words"] == 0 for text in texts)
    assert row["rejected_only_by_datatrove"] == 0
    assert row["rejected_only_by_ours"] == wordless


def test_every_filter_agrees(report: dict[str, object]) -> None:
    filters = report["filters"]
    assert isinstance(filters, dict)
    for name, row in filters.items():
        assert row["agreement"] == 1.0, (name, row)
        assert row["same_first_reason"] == 1.0, (name, row)
    assert report["c4_lines_text_identical"] == 1.0


def test_tokenizer_and_sentences_match_spacy() -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    pieces = (
        *"abcXYZ019.,;:!?'\"()[]{}<>-_/\\@#$%&*+=~^`|",
        " ",
        "  ",
        "\t",
        "\n",
        "\u00a0",
        "\u2026",
        "\u2019",
        "\u00e9",
        "\u4e2d",
        "\U0001f600",
        "don't",
        "it's",
        "U.S.",
        "e.g.",
        ":)",
        "):",
        "10am",
        "5km",
        "$5",
        "and/or",
        "...",
        "--",
        "http://",
        "www.",
        ".com",
        "user@mail.org",
        "192.168.1.1",
        "Mr.",
        "\u00b0C.",
    )
    rng = random.Random(5)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        with nlp.memory_zone():
            doc = nlp(text)
            tokens = [t.text for t in doc if t.text.strip()]
        assert lmd.QualityFilter.tokenize(text) == tokens, text
        # The sentence count is what C4 uses: check it through a one-line C4 document.
        c4 = lmd.QualityFilter(
            "c4",
            c4_terminal_punct=False,
            c4_min_words_per_line=None,
            c4_max_word_length=None,
            c4_remove_citations=False,
            c4_lorem_ipsum=False,
            c4_javascript=False,
            c4_curly_bracket=False,
            c4_policy=False,
        )
        line = text.replace("\n", " ").replace("\u2028", " ").strip()
        if line and "\r" not in line and "\x0b" not in line:
            assert c4.metrics(line)["c4_sentences"] == sentences_of(nlp, line), line


def sentences_of(nlp: object, line: str) -> int:
    with nlp.memory_zone():  # type: ignore[attr-defined]
        doc = nlp(line)  # type: ignore[operator]
        return len([s for s in doc.sents if s.text.strip()])

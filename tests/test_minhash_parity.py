"""MinHashDeduplicator, native vs fallback: identical signatures, shapes, decisions, clusters,
exceptions and byte-identical companion files (hypothesis-driven), plus index files written by
one backend and read by the other."""

from __future__ import annotations

import importlib
import itertools
import os
import random
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

N = pytest.importorskip("luminamoon.data._native", reason="luminamoon.data._native is not built")
F = importlib.import_module("luminamoon.data.fallbacks")

# Small words from a small vocabulary, so random documents share shingles and near-duplicates
# occur; mixed with arbitrary Unicode and raw bytes for the tokenizer.
VOCABULARY = ["alpha", "beta", "Gamma", "délta", "ЭПСИЛОН", "ζήτα", "42", "x", "İi", "straße"]
word_docs = st.lists(st.sampled_from(VOCABULARY), max_size=40).map(" ".join)
separators = st.sampled_from([" ", ", ", "\n", "—", "\u00a0", "\ufffd", "!?", "\t"])
unicode_docs = st.text(
    alphabet=st.characters(exclude_categories=("Cs",), max_codepoint=0x1FFFF), max_size=60
)
byte_docs = st.binary(max_size=60)
documents = st.one_of(word_docs, unicode_docs, byte_docs)

configs = st.fixed_dictionaries(
    {
        "num_perm": st.sampled_from([1, 2, 7, 16, 33, 64]),
        "shingle": st.sampled_from(["word", "char"]),
        "ngram": st.integers(1, 6),
        "seed": st.one_of(st.just(1), st.integers(0, 2**64 - 1)),
        "threshold": st.sampled_from([0.3, 0.5, 0.8, 1.0]),
        "store_signatures": st.booleans(),
    }
)


def both(fn: Callable[[ModuleType], Any]) -> Any:
    results = []
    for mod in (N, F):
        try:
            results.append(("ok", fn(mod)))
        except Exception as exc:  # the class is the contract; messages may differ
            results.append(("raise", type(exc).__name__))
    assert results[0] == results[1], f"native {results[0]!r} != fallback {results[1]!r}"
    return results[0][1]


@settings(max_examples=300, deadline=None)
@given(config=configs, docs=st.lists(documents, max_size=6))
def test_signatures_and_shapes(config: dict[str, Any], docs: list[Any]) -> None:
    def run(mod: ModuleType) -> Any:
        d = mod.MinHashDeduplicator(**config)
        shape = (d.bands, d.rows, d.value_bits, d.min_matches)
        sigs = [d.signature(doc) for doc in docs]
        assert d.signatures(docs).tolist() == (sigs or [])
        pairs = [(d.similarity(a, b), d.jaccard(a, b)) for a, b in itertools.pairwise(docs)]
        return shape, sigs, pairs

    both(run)


# Long documents for the word tokenizer's two paths (64-byte pure-ASCII blocks, and code point
# by code point wherever a block holds a byte >= 0x80): ASCII words of every length, so tokens
# cross block boundaries and outlast whole blocks, with sparse multibyte words, non-word
# characters and invalid bytes that switch paths mid-token.
ascii_words = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    min_size=1,
    max_size=90,
).map(str.encode)
mixed_segments = st.one_of(
    ascii_words,
    ascii_words,
    ascii_words,
    st.sampled_from([b" ", b"  ", b"\n\n", b", ", b".\t", b" -- "]),
    st.sampled_from([w.encode() for w in VOCABULARY] + ["—".encode(), "\u00a0".encode()]),
    st.sampled_from([b"\xff", b"\xe2\x82", b"\xc3", b"\xed\xa0\x80"]),
)
long_docs = st.lists(mixed_segments, min_size=1, max_size=120).map(b"".join)


@settings(max_examples=120, deadline=None)
@given(
    ngram=st.integers(1, 6),
    docs=st.lists(long_docs, min_size=1, max_size=3),
)
def test_word_tokenizer_on_long_mixed_documents(ngram: int, docs: list[bytes]) -> None:
    def run(mod: ModuleType) -> Any:
        d = mod.MinHashDeduplicator(num_perm=16, ngram=ngram, shingle="word", seed=5)
        return [d.signature(doc) for doc in docs], d.signatures(docs).tolist()

    both(run)


@settings(max_examples=150, deadline=None)
@given(
    config=configs,
    steps=st.lists(
        st.tuples(
            st.sampled_from(["batch", "one", "commit", "rollback", "query"]),
            st.lists(word_docs, max_size=8),
        ),
        max_size=8,
    ),
)
def test_streaming_decisions_and_clusters(config: dict[str, Any], steps: list[Any]) -> None:
    def run(mod: ModuleType) -> Any:
        d = mod.MinHashDeduplicator(**config)
        out: list[Any] = []
        for op, docs in steps:
            if op == "batch":
                out.append(d.filter_batch(docs))
            elif op == "one":
                out.append([d.is_unique(doc) for doc in docs])
            elif op == "commit":
                d.commit()
            elif op == "rollback":
                d.rollback()
            else:
                out.append([(d.query(x), d.query(x, verify=False)) for x in docs])
            out.append((d.staged_count, d.committed_count, len(d)))
        out.append(d.cluster([doc for _, docs in steps for doc in docs]))
        return out

    both(run)


@settings(max_examples=60, deadline=None)
@given(
    kwargs=st.dictionaries(
        st.sampled_from(
            ["num_perm", "threshold", "bands", "rows", "ngram", "seed", "shingle", "threds"]
        ),
        st.one_of(
            st.integers(-2, 600),
            st.floats(allow_nan=True),
            st.none(),
            st.booleans(),
            st.sampled_from(["word", "char", "chars", ""]),
        ),
        max_size=3,
    )
)
def test_option_errors(kwargs: dict[str, Any]) -> None:
    def run(mod: ModuleType) -> Any:
        d = mod.MinHashDeduplicator(**kwargs)
        return (d.num_perm, d.bands, d.rows, d.value_bits, d.min_matches, d.shingle, d.ngram)

    both(run)


def test_bad_inputs_raise_alike() -> None:
    for bad in ([1], ["a", None], "text", None, [b"ok", object()], ["\ud800"]):
        both(lambda mod, b=bad: mod.MinHashDeduplicator().filter_batch(b))
        both(lambda mod, b=bad: mod.MinHashDeduplicator().cluster(b))
    for bad in (None, 5, "\udfff", ["list"]):
        both(lambda mod, b=bad: mod.MinHashDeduplicator().is_unique(b))


# ---------------------------------------------------------------------------------------------
# Companion files
# ---------------------------------------------------------------------------------------------


def _run_attached(mod: ModuleType, meta: Path, config: dict[str, Any], batches: list[Any]) -> Any:
    answers = []
    with mod.StateTracker(meta, durable=False) as tracker:
        d = mod.MinHashDeduplicator(tracker, **config)
        for i, docs in enumerate(batches):
            answers.append(d.filter_batch(docs))
            if i % 3 == 2:
                tracker.rollback()
            else:
                d.commit()
        del d
    return answers


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=configs.map(lambda c: {k: v for k, v in c.items() if k != "threshold"}),
    batches=st.lists(st.lists(word_docs, max_size=6), max_size=6),
)
def test_companion_files_are_byte_identical(config: dict[str, Any], batches: list[Any]) -> None:
    root = Path(tempfile.mkdtemp(prefix="lm_minhash_parity_"))
    try:
        metas = {name: root / name / "run.meta" for name in ("native", "fallback")}
        answers = {}
        for name, mod in (("native", N), ("fallback", F)):
            metas[name].parent.mkdir()
            answers[name] = _run_attached(mod, metas[name], config, batches)
        assert answers["native"] == answers["fallback"]
        for suffix in ("", ".dedup", ".minhash"):
            native = Path(str(metas["native"]) + suffix)
            fallback = Path(str(metas["fallback"]) + suffix)
            assert native.read_bytes() == fallback.read_bytes(), suffix
    finally:
        shutil.rmtree(root)


@pytest.mark.parametrize(("writer", "reader"), [(N, F), (F, N)])
def test_index_written_by_one_backend_reads_in_the_other(
    writer: ModuleType, reader: ModuleType, tmp_path: Path
) -> None:
    rng = random.Random(4)
    corpus = [" ".join(rng.choice(VOCABULARY) + str(rng.randrange(50)) for _ in range(30))]
    for _ in range(150):
        doc = corpus[rng.randrange(len(corpus))].split()
        doc[rng.randrange(len(doc))] = "edit" + str(rng.randrange(9))
        corpus.append(" ".join(doc) if rng.random() < 0.5 else " ".join(reversed(doc)))
    meta = tmp_path / "run.meta"
    _run_attached(writer, meta, {}, [corpus[i : i + 40] for i in range(0, len(corpus), 40)])
    probes = [*corpus[::7], "completely different text " * 3]
    answers = []
    for mod in (writer, reader):
        with mod.StateTracker(meta, durable=False) as tracker:
            d = mod.MinHashDeduplicator(tracker)
            answers.append(
                (d.committed_count, [(d.query(p), d.query(p, verify=False)) for p in probes])
            )
            del d
    assert answers[0] == answers[1]
    assert answers[0][0] > 0
    assert os.path.getsize(str(meta) + ".minhash") > 64

"""How the native module reads a ``str`` that is not ASCII: its UTF-8 is encoded by the engine
(common/utf8_encode.h) into memory of the call, not by CPython's encoder, and the str is left as
it was (the abi3 build asks CPython, which keeps the UTF-8 on the str). Every reading must equal
``s.encode()`` (and ``'surrogatepass'`` where a stage reads lone surrogates), on both backends.

And how it makes a ``str`` of UTF-8 (common/utf8_decode.h: the shape, then the characters
written into the new str): every str must equal ``bytes.decode()``'s, in CPython's canonical
(narrowest) form, which ``==`` and ``hash`` rely on."""

from __future__ import annotations

import ctypes
import json
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import luminamoon.data as lmd
from luminamoon.data import fallbacks

native = pytest.importorskip("luminamoon.data._native")
ABI3 = native.__file__.endswith(".abi3.so")

# Each of CPython's three storage widths (Latin-1, UCS-2, UCS-4), with ASCII runs long enough to
# fill the encoder's 16-unit blocks and the boundary code points of every UTF-8 length.
EDGES = "\x7f\x80\xe9\xff\u0100\u07ff\u0800\u20ac\ud7ff\ue000\uffff\U00010000\U0001f600\U0010ffff"
texts = st.text(
    alphabet=st.sampled_from("abc ,.\n")
    | st.sampled_from(EDGES)
    | st.characters(blacklist_categories=("Cs",)),
    max_size=300,
) | st.builds(
    lambda runs, wide: wide.join(runs),
    st.lists(st.text(alphabet="abcdefgh ", min_size=0, max_size=40), min_size=1, max_size=8),
    st.sampled_from(EDGES),
)


def utf8_cached(s: str) -> str:
    """``s`` with its UTF-8 kept on it, as after a C extension's PyUnicode_AsUTF8 call."""
    as_utf8 = ctypes.pythonapi.PyUnicode_AsUTF8
    as_utf8.restype = ctypes.c_char_p
    as_utf8.argtypes = [ctypes.py_object]
    assert as_utf8(s) == s.encode()
    return s


@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_a_str_reads_as_its_utf8(text: str) -> None:
    expected = lmd.xxh3_64(text.encode())
    assert lmd.xxh3_64(text) == expected == fallbacks.xxh3_64(text)
    fresh = text[:0] + text  # (the same object for a non-empty str: CPython shares it)
    assert lmd.StreamDeduplicator().filter_batch([fresh, text.encode()]) == [True, False]


@settings(max_examples=100, deadline=None)
@given(batch=st.lists(texts, max_size=40))
def test_batches_read_like_their_bytes(batch: list[str]) -> None:
    encoded = [t.encode() for t in batch]
    assert lmd.StreamDeduplicator().filter_batch(batch) == lmd.StreamDeduplicator().filter_batch(
        encoded
    )
    for threads in (1, 2):
        mh = lmd.MinHashDeduplicator(num_perm=16, threads=threads)
        assert np.array_equal(mh.signatures(batch), mh.signatures(encoded))
        assert mh.cluster(batch) == mh.cluster(encoded)
        keep = lmd.MinHashDeduplicator(num_perm=16, threads=threads).filter_batch(encoded)
        assert mh.filter_batch(batch) == keep


def test_every_width_and_a_cached_str() -> None:
    docs = [
        "caf\xe9 " * 40,  # Latin-1
        "\u0416\u0443\u0440\u043d\u0430\u043b " * 40 + "ascii tail",  # UCS-2, dense
        "mostly ascii text with one \u20ac sign " * 20,  # UCS-2, sparse
        "emoji \U0001f600 and ascii " * 30,  # UCS-4
    ]
    docs.append(utf8_cached("kept utf-8: na\xefve " * 10 + "\u2603"))
    for d in docs:
        assert lmd.xxh3_64(d) == lmd.xxh3_64(d.encode())
        assert lmd.StreamDeduplicator().filter_batch([d, d.encode()]) == [True, False]


@pytest.mark.skipif(
    ABI3, reason="the abi3 build asks PyUnicode_AsUTF8AndSize, which keeps the UTF-8 on the str"
)
def test_the_str_is_left_as_it_was() -> None:
    docs = ["na\xefve " * 500, "\u20ac " * 500, "\U0001f600 " * 500, "x" * 100 + "\u0100"]
    before = [sys.getsizeof(d) for d in docs]
    lmd.StreamDeduplicator().filter_batch(docs)
    lmd.MinHashDeduplicator(num_perm=16, threads=1).signatures(docs)
    lmd.QualityFilter("gopher_repetition", threads=1).filter_batch(docs)
    lmd.PIIMasker().mask_batch(docs)
    lmd.xxh3_64(docs[0])
    assert lmd.StringTensor.from_pylist(docs).to_pylist() == docs
    # CPython counts a str's kept UTF-8 in its size.
    assert [sys.getsizeof(d) for d in docs] == before
    utf8_cached(docs[0])
    assert sys.getsizeof(docs[0]) > before[0]


def test_large_batches_and_documents() -> None:
    # Over the 1 MiB arena block (one document of its own) and over the 16 cached blocks.
    big = "\u00e9t\u00e9 " * 400_000  # 2.4 MB of UTF-8
    many = [f"doc {i}: \u00fcber " * 2000 for i in range(300)]  # ~3.6 MB
    batch = [big, *many, big + "!", *many]
    keep = lmd.StreamDeduplicator().filter_batch(batch)
    assert keep == [True] * 302 + [False] * 300
    assert [lmd.xxh3_64(d) for d in batch[:3]] == [lmd.xxh3_64(d.encode()) for d in batch[:3]]


def test_threads_read_the_same() -> None:
    docs = [f"{i} gr\u00fc\u00dfe \u20ac {i * 7}" * 50 for i in range(200)]
    expected = [lmd.xxh3_64(d.encode()) for d in docs]

    def work() -> None:
        for _ in range(20):
            assert lmd.StreamDeduplicator(threads=1).filter_batch(docs) == [True] * len(docs)
            assert [lmd.xxh3_64(d) for d in docs] == expected

    with ThreadPoolExecutor(4) as pool:
        for future in [pool.submit(work) for _ in range(4)]:
            future.result()  # (raises what the thread raised)


@pytest.mark.parametrize(
    "text", ["lone \ud800 in UCS-2 \u20ac", "\U0001f600 lone \udc80", "\ud800"]
)
def test_lone_surrogates(text: str) -> None:
    with pytest.raises(ValueError, match=r"texts\[1\]: str cannot be encoded as UTF-8"):
        lmd.StreamDeduplicator().filter_batch(["ok", text])
    with pytest.raises(ValueError, match="lone surrogate"):
        fallbacks.StreamDeduplicator().filter_batch(["ok", text])
    # Stages that read 'surrogatepass' bytes (the cleaner repairs them) agree with the fallback.
    assert lmd.TextCleaner().clean_batch([text]) == fallbacks.TextCleaner().clean_batch([text])


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_a_batch_is_encoded_on_the_pool(threads: int) -> None:
    # filter_batch encodes and hashes the strs that are not ASCII on its workers, with the GIL
    # released: the same answers on any thread count, and on the fallback.
    docs = [f"{i % 300} gr\u00fc\u00dfe \u20ac \U0001f600" * 60 for i in range(1200)]
    docs += ["ascii " * 500 + str(i % 50) for i in range(300)]
    expected = fallbacks.StreamDeduplicator().filter_batch(docs)
    assert expected.count(True) == 350
    assert lmd.StreamDeduplicator(threads=threads).filter_batch(docs) == expected


@pytest.mark.parametrize("threads", [1, 2])
def test_the_first_error_of_a_batch_is_raised_and_nothing_is_staged(threads: int) -> None:
    long = "caf\u00e9 \u20ac " * 1500
    batch = [long + str(i) for i in range(1000)]
    batch[700] = "lone \ud800 " + long
    batch[900] = "\udc80" + long
    d = lmd.StreamDeduplicator(threads=threads)
    with pytest.raises(ValueError, match=r"^texts\[700\]: str cannot be encoded as UTF-8"):
        d.filter_batch(batch)
    assert d.staged_count == 0
    assert len(d) == 0
    # In the order a reader meets them: a lone surrogate before an item of the wrong type...
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        d.filter_batch(["ok \u20ac", "\ud800 \u20ac", "fine", 3])
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        fallbacks.StreamDeduplicator().filter_batch(["ok \u20ac", "\ud800 \u20ac", "fine", 3])
    # ...and the wrong type before a later lone surrogate.
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        d.filter_batch(["ok \u20ac", 3, "\ud800 \u20ac"])
    assert d.staged_count == 0
    assert d.filter_batch(batch[:2]) == [True, True]


@pytest.mark.parametrize("threads", [1, 2])
def test_minhash_encodes_each_str_where_it_hashes_it(threads: int) -> None:
    # MinHash reads a str that is not ASCII from its characters, encoding it on the worker that
    # hashes it: the answers of its UTF-8, over several chunks of a batch (512 permutations: 2,048
    # documents a chunk), and a lone surrogate in the third chunk unstages exactly that batch.
    def text(j: int) -> str:  # a third of them pure ASCII
        t = f"d{j} caf\u00e9 \u20ac w{j * 7} \U0001f600 " * 6
        return t.encode().decode("ascii", "replace") if j % 3 == 0 else t

    docs = [text(i - 1 if i % 5 == 4 else i) for i in range(5000)]  # every fifth a repeat

    def prepared() -> lmd.MinHashDeduplicator:
        d = lmd.MinHashDeduplicator(num_perm=512, threads=threads)
        assert d.filter_batch(["first committed \u00e9", "second"]) == [True, True]
        d.commit()
        assert d.filter_batch(["staged before \u20ac"]) == [True]
        return d

    expected = prepared().filter_batch([d.encode() for d in docs])
    assert expected.count(False) == 1000
    d = prepared()
    assert d.filter_batch(docs) == expected
    assert d.staged_count == 1 + 4000
    with_surrogate = [*docs[:4500], "lone \ud800 " + docs[4500], *docs[4501:]]
    d = prepared()
    with pytest.raises(ValueError, match=r"^texts\[4500\]: str cannot be encoded as UTF-8"):
        d.filter_batch(with_surrogate)
    assert (d.committed_count, d.staged_count) == (2, 1)
    assert d.filter_batch(["staged before \u20ac"]) == [False]
    assert d.filter_batch(docs) == expected
    with pytest.raises(ValueError, match=r"^texts\[4500\]: str cannot be encoded as UTF-8"):
        d.cluster(with_surrogate)
    with pytest.raises(ValueError, match=r"^texts\[4500\]: str cannot be encoded as UTF-8"):
        d.signatures(with_surrogate)


@pytest.mark.parametrize("backend", [lmd, fallbacks], ids=["native", "fallback"])
def test_minhash_lone_surrogate_stages_nothing_on_both_backends(backend: object) -> None:
    docs = [f"doc {i} gr\u00fc\u00dfe \u20ac \U0001f600 w{i % 40}" * 8 for i in range(120)]
    bad = [*docs[:70], "lone \ud800 " + docs[70], *docs[71:]]
    d = backend.MinHashDeduplicator(num_perm=32, threads=2)  # type: ignore[attr-defined]
    assert d.filter_batch(["committed \u00e9 text here"]) == [True]
    d.commit()
    assert d.filter_batch(["staged \u20ac text here"]) == [True]
    for call in (d.filter_batch, d.signatures, d.cluster):
        with pytest.raises(ValueError, match=r"^texts\[70\]: str cannot be encoded as UTF-8"):
            call(bad)
        assert (d.committed_count, d.staged_count) == (1, 1)
    fresh = backend.MinHashDeduplicator(num_perm=32, threads=2)  # type: ignore[attr-defined]
    fresh.filter_batch(["committed \u00e9 text here", "staged \u20ac text here"])
    assert d.filter_batch(docs) == fresh.filter_batch(docs)
    assert d.filter_batch(docs) == [False] * len(docs)


def test_stages_encode_a_batch_on_the_pool() -> None:
    # With threads other than 1 the strs that are not ASCII are encoded on the worker pool at the
    # end of add_batch (each worker into its own arena): every stage answers as with threads=1,
    # and the first lone surrogate of a batch is still the error, before a later wrong type.
    docs = [
        f"{i} gr\u00fc\u00dfe \u20ac \u4e2d\u6587 \U0001f600 w{i % 97} " * 40 for i in range(600)
    ]
    docs += ["plain ascii text " * 80 + str(i) for i in range(100)]
    with_surrogates = [*docs[:300], "lone \ud800 " * 200, *docs[300:]]
    for threads in (1, 2):
        mh = lmd.MinHashDeduplicator(num_perm=16, threads=threads)
        signatures = mh.signatures(docs)
        cleaned = lmd.TextCleaner(threads=threads).clean_batch(with_surrogates)
        quality = lmd.QualityFilter("gopher_repetition", threads=threads).filter_batch(docs).keep
        masked = lmd.PIIMasker(threads=threads).mask_batch(docs).texts
        # The whole pipeline over strs (the cleaner repairs the lone surrogates), and without a
        # cleaner (the strs' UTF-8 is known valid, the surrogates' is checked and repaired).
        piped = lmd.FusedPipeline(threads=threads, pii=True).process(with_surrogates)
        raw = lmd.FusedPipeline(threads=threads, cleaner=False, quality=False, near_dedup=False)
        unchecked = raw.process(with_surrogates)
        outputs = (
            piped.texts.to_pylist(),
            piped.keep.tolist(),
            unchecked.texts.to_pylist(),
            unchecked.keep.tolist(),
        )
        if threads == 1:
            expected = (signatures, cleaned, quality, masked, outputs)
            continue
        assert np.array_equal(signatures, expected[0])
        assert cleaned == expected[1] == fallbacks.TextCleaner().clean_batch(with_surrogates)
        assert quality == expected[2]
        assert masked == expected[3]
        assert outputs == expected[4]
        repaired = with_surrogates[300].encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        assert outputs[2][300] == repaired
        d = lmd.MinHashDeduplicator(num_perm=16, threads=threads)
        with pytest.raises(ValueError, match=r"^texts\[300\]: str cannot be encoded"):
            d.filter_batch(with_surrogates)
        with pytest.raises(ValueError, match=r"texts\[300\]"):
            d.signatures([*with_surrogates[:301], 5])
        with pytest.raises(TypeError, match=r"texts\[3\]"):
            d.signatures([*docs[:3], 5, *with_surrogates])
        assert d.staged_count == 0


def same_str(made: str, expected: str) -> None:
    """``made`` is ``expected``'s characters in CPython's canonical form (the narrowest kind:
    ``==`` between equal texts of two kinds is False) and a plain str."""
    assert type(made) is str
    assert made == expected
    assert hash(made) == hash(expected)
    # (a new str of the same text: `expected` may hold its UTF-8, which CPython counts in its size,
    # after a reading by PyUnicode_AsUTF8AndSize, as the abi3 build reads it)
    assert sys.getsizeof(made) == sys.getsizeof(expected.encode().decode())


@settings(max_examples=300, deadline=None)
@given(batch=st.lists(texts, max_size=20))
def test_strs_made_from_utf8_are_canonical(batch: list[str]) -> None:
    tensor = lmd.StringTensor.from_pylist(batch)
    for made, expected in zip(tensor.to_pylist(), batch, strict=True):
        same_str(made, expected)
    for i, expected in enumerate(batch):
        same_str(tensor[i], expected)


# UCS-2 text dense with characters that are not ASCII (Cyrillic, CJK, punctuation, the edges of
# the 2- and 3-byte forms) among runs of ASCII, at every share: the engine's vector UCS-2 kernels
# (x86-64 with AVX2) decode it, from any offset of their 16- and 32-byte blocks.
ucs2_dense = st.builds(
    "".join,
    st.lists(
        st.text(alphabet="abc xyz.", max_size=40)
        | st.text(
            alphabet=st.sampled_from(
                "\u0416\u044b\u0430\u4e2d\u6587\u3002\u2014\u201c\u201d\u0100\u07ff\u0800\uffff"
            )
            | st.characters(min_codepoint=0x80, max_codepoint=0xFFFF, blacklist_categories=("Cs",)),
            min_size=1,
            max_size=80,
        ),
        max_size=30,
    ),
)


@settings(max_examples=300, deadline=None)
@given(batch=st.lists(ucs2_dense, max_size=10))
def test_dense_ucs2_strs_made_from_utf8(batch: list[str]) -> None:
    tensor = lmd.StringTensor.from_pylist([t.encode() for t in batch])
    for made, expected in zip(tensor.to_pylist(), batch, strict=True):
        same_str(made, expected)


def test_strs_of_every_width_from_each_stage(tmp_path) -> None:  # type: ignore[no-untyped-def]
    prose = "The quick brown fox jumps over the lazy dog. " * 40
    docs = [
        prose,
        prose + "caf\xe9 \xff",  # Latin-1, the accents after a long ASCII run
        "\xe9" + prose,  # Latin-1 from the first character
        prose[:200] + "\u0100" + prose,  # UCS-2 by one character
        prose + "\u20ac\u2014 \u4e2d\u6587" * 3,  # UCS-2
        "\u041c\u043e\u0441\u043a\u0432\u0430 " * 400,  # dense Cyrillic (vector blocks)
        "\u4e2d\u6587\u3002" * 300 + "end",  # dense CJK (vector blocks)
        prose + "\U0001f600" + "\xe9" * 3,  # UCS-4
        "",
    ]
    for made, expected in zip(lmd.StringTensor.from_pylist(docs).to_pylist(), docs, strict=True):
        same_str(made, expected)
    encoded = [d.encode() for d in docs]
    cleaned = fallbacks.TextCleaner().clean_batch(encoded)
    for made, expected in zip(lmd.TextCleaner().clean_batch(encoded), cleaned, strict=True):
        same_str(made, expected)
    shard = tmp_path / "docs.jsonl"
    shard.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    read = [t for batch in lmd.ShardReader(str(shard), threads=1) for t in batch.texts]
    for made, expected in zip(read, docs, strict=True):
        same_str(made, expected)
    # A text record that is not UTF-8 is read with U+FFFD, as the fallback reads it.
    lines = tmp_path / "lines.txt"
    lines.write_bytes(prose.encode() + b"\xff\xe2\x82 tail \xc3\xa9\n")
    read = [t for batch in lmd.ShardReader(str(lines), threads=1) for t in batch.texts]
    same_str(read[0], (prose.encode() + b"\xff\xe2\x82 tail \xc3\xa9").decode("utf-8", "replace"))
    masked = lmd.PIIMasker().mask_batch([d.encode() for d in docs]).texts
    for made, expected in zip(masked, docs, strict=True):
        same_str(made, expected)


class Text(str):
    """A str subclass: CPython keeps its characters outside the object (not compact)."""


def test_str_subclasses() -> None:
    docs = [Text("plain ascii " * 20), Text("na\xefve caf\xe9 " * 20), Text("\u4e2d\u6587 " * 30)]
    for d in docs:
        assert lmd.xxh3_64(d) == lmd.xxh3_64(str(d).encode())
    assert (
        lmd.StreamDeduplicator().filter_batch([*docs, *(str(d) for d in docs)])
        == [True] * 3 + [False] * 3
    )

"""MinHashDeduplicator through the public API (runs on the live backend: native, or the fallback
with LUMINAMOON_FORCE_FALLBACK=1): signatures pinned by golden values and by an independent
reference, the streaming and offline APIs, options, bad input (SPEC 5, issue section 6),
persistence next to a StateTracker, and every SIMD kernel against the same golden values."""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import luminamoon.data as lmd
from luminamoon.data import ConfigError, CorruptCheckpointError, LuminaMoonError

try:
    from xxhash import xxh3_64_intdigest as _xxh3
except ImportError:  # pragma: no cover - xxhash is a test dependency
    from luminamoon.data.fallbacks.xxh3 import xxh3_64_pure as _xxh3

M64 = (1 << 64) - 1
NATIVE = lmd.BACKEND == "native"

# Pinned: also asserted by tests/cpp/minhash/minhash_signature_test.cc.
GOLDEN = {
    ("word", 5, "The quick brown fox jumps over the lazy dog."): [
        402882063,
        580773768,
        402428786,
        53197566,
        548217054,
        392974488,
        536505173,
        772047726,
    ],
    ("char", 3, "Hello, World!"): [
        315290559,
        521958292,
        955888252,
        397391775,
        35471941,
        824756023,
        462249446,
        145815397,
    ],
}


def words(first: int, count: int) -> str:
    return " ".join(f"w{i}" for i in range(first, first + count))


def base(i: int) -> str:
    return words(i * 1000, 200)


def near(i: int) -> str:
    """base(i) with one word replaced: 5-shingle Jaccard ~0.95."""
    return words(i * 1000, 100) + " changed " + words(i * 1000 + 101, 99)


# ---------------------------------------------------------------------------------------------
# An independent reference for ASCII text (the rules of docs/minhash.md, written from scratch)
# ---------------------------------------------------------------------------------------------


def ref_signature(text: str, num_perm: int = 64, ngram: int = 5, seed: int = 1) -> list[int]:
    tokens = re.findall(r"[0-9a-z]+", text.lower())  # ASCII: word characters are [0-9A-Za-z]
    if not tokens:
        shingles = []
    elif len(tokens) < ngram:
        shingles = [" ".join(tokens)]
    else:
        shingles = [" ".join(tokens[i : i + ngram]) for i in range(len(tokens) - ngram + 1)]
    hashes = {int(_xxh3(s.encode())) for s in shingles}
    out = []
    state = seed
    for _ in range(num_perm):
        a, state = _splitmix(state)
        b, state = _splitmix(state)
        a |= 1
        out.append(min(((a * x + b) & M64) >> 32 for x in hashes) if hashes else 0xFFFFFFFF)
    return out


def _splitmix(state: int) -> tuple[int, int]:
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31), state


# ---------------------------------------------------------------------------------------------
# Signatures
# ---------------------------------------------------------------------------------------------


def test_defaults() -> None:
    d = lmd.MinHashDeduplicator()
    assert (d.num_perm, d.threshold, d.shingle, d.ngram, d.seed) == (64, 0.8, "word", 5, 1)
    assert (d.bands, d.rows, d.value_bits, d.min_matches) == (7, 9, 4, 52)
    assert d.store_signatures is False
    assert d.tracker is None
    assert (d.staged_count, d.committed_count, len(d)) == (0, 0, 0)
    assert "MinHashDeduplicator(num_perm=64, bands=7, rows=9" in repr(d)


@pytest.mark.parametrize(("kind", "ngram", "text"), list(GOLDEN))
def test_golden_signatures(kind: str, ngram: int, text: str) -> None:
    d = lmd.MinHashDeduplicator(num_perm=8, shingle=kind, ngram=ngram)
    assert d.signature(text) == GOLDEN[(kind, ngram, text)]


def test_matches_an_independent_reference() -> None:
    texts = [
        "The quick brown fox jumps over the lazy dog.",
        "Short text",
        "one",
        "",
        "MiXeD CaSe, punctuation!!! and   spaces\ttabs\nnewlines 123 456",
        " ".join(f"token{i % 37}" for i in range(700)),  # > one 512-hash chunk
    ]
    for num_perm, ngram, seed in ((64, 5, 1), (17, 3, 99), (130, 1, 2**64 - 1)):
        d = lmd.MinHashDeduplicator(num_perm=num_perm, ngram=ngram, seed=seed)
        for text in texts:
            assert d.signature(text) == ref_signature(text, num_perm, ngram, seed), text


def test_batch_signatures() -> None:
    np = pytest.importorskip("numpy")
    d = lmd.MinHashDeduplicator(num_perm=8, threads=2)
    texts = [text for (kind, _, text) in GOLDEN if kind == "word"] + ["", b"bytes too"]
    matrix = d.signatures(texts)
    assert matrix.dtype == np.uint32
    assert matrix.shape == (len(texts), 8)
    assert [row.tolist() for row in matrix] == [d.signature(t) for t in texts]
    assert d.signatures([]).shape == (0, 8)
    assert len(d) == 0  # stages nothing


def test_inputs_of_every_kind_hash_alike() -> None:
    d = lmd.MinHashDeduplicator()
    text = "héllo wörld, ünïcode text with enough words to shingle"
    raw = text.encode()
    expected = d.signature(text)
    for value in (raw, bytearray(raw), memoryview(raw)):
        assert d.signature(value) == expected


def test_unicode_lowercase_and_separators() -> None:
    d = lmd.MinHashDeduplicator(ngram=2)
    # U+0130 lowercases to "i", U+01C5 (title case) to U+01C6; punctuation and symbols separate.
    assert d.signature("İSTANBUL ǅ") == d.signature("istanbul—ǆ")
    assert d.signature("Straße café") == d.signature("STRAßE  CAFÉ")
    assert d.signature("e\u0301t\u00e9") != d.signature("e t\u00e9")  # a mark stays in its word


def test_similarity_and_jaccard() -> None:
    d = lmd.MinHashDeduplicator(num_perm=128, ngram=1)
    assert d.jaccard("a b c d", "c d e f") == pytest.approx(2 / 6)
    assert d.similarity("a b c d", "a b c d") == 1.0
    assert 0.0 <= d.similarity("a b c d", "c d e f") <= 1.0
    assert d.jaccard("", "...") == 1.0
    assert d.jaccard("", "a") == 0.0
    assert d.similarity("", "") == 1.0


# ---------------------------------------------------------------------------------------------
# Streaming dedup, queries, clusters
# ---------------------------------------------------------------------------------------------


def test_is_unique_first_occurrence_wins() -> None:
    d = lmd.MinHashDeduplicator()
    assert d.is_unique(base(1))
    assert not d.is_unique(near(1))
    assert not d.is_unique(base(1))
    assert d.is_unique(base(2))
    assert (d.staged_count, d.committed_count, len(d)) == (2, 0, 2)
    d.commit()
    assert (d.staged_count, d.committed_count) == (0, 2)
    assert d.is_unique(base(3))
    d.rollback()
    assert (d.staged_count, d.committed_count) == (0, 2)
    assert d.is_unique(near(3))


def test_filter_batch_within_and_across_batches() -> None:
    d = lmd.MinHashDeduplicator()
    assert d.filter_batch([base(1), near(1), base(2)]) == [True, False, True]
    assert d.filter_batch((near(2), base(3), near(3), base(3).encode())) == [
        False,
        True,
        False,
        False,
    ]
    assert d.staged_count == 3


def test_filter_batch_arrow_input() -> None:
    pa = pytest.importorskip("pyarrow")
    texts = [base(1), near(1), base(2), near(2), base(3)]
    expected = lmd.MinHashDeduplicator().filter_batch(texts)
    for array in (pa.array(texts), pa.array(texts, pa.large_string()), pa.chunked_array([texts])):
        assert lmd.MinHashDeduplicator().filter_batch(array) == expected
    with pytest.raises(ValueError, match="null"):
        lmd.MinHashDeduplicator().filter_batch(pa.array(["a", None]))
    with pytest.raises(TypeError):
        lmd.MinHashDeduplicator().filter_batch(pa.array([1, 2]))


def test_threads_do_not_change_answers() -> None:
    texts = [base(i % 40) if i % 3 else near(i % 40) for i in range(300)]
    masks = [lmd.MinHashDeduplicator(threads=t).filter_batch(texts) for t in (1, 2, 7)]
    assert masks[0] == masks[1] == masks[2]
    clusters = [lmd.MinHashDeduplicator(threads=t).cluster(texts) for t in (1, 2, 7)]
    assert clusters[0] == clusters[1] == clusters[2]


def test_query() -> None:
    d = lmd.MinHashDeduplicator()
    d.filter_batch([base(1), base(2), base(3)])
    assert d.query(near(2)) == [1]
    assert d.query(near(2), verify=False) == [1]
    assert d.query(base(9)) == []
    assert len(d) == 3  # stages nothing


def test_cluster() -> None:
    d = lmd.MinHashDeduplicator()
    texts = [base(1), base(2), near(1), near(2), base(3), base(1), ""]
    ids = d.cluster(texts)
    assert ids == [0, 1, 0, 1, 4, 0, 6]
    assert [t for i, t in enumerate(texts) if ids[i] == i] == [base(1), base(2), base(3), ""]
    assert len(d) == 0
    assert d.cluster([]) == []


def test_store_signatures_verifies_with_full_values() -> None:
    d = lmd.MinHashDeduplicator(store_signatures=True)
    assert (d.value_bits, d.min_matches) == (32, 52)
    assert d.filter_batch([base(1), near(1), base(2)]) == [True, False, True]


def test_explicit_bands_and_rows() -> None:
    assert (lmd.MinHashDeduplicator(bands=8, rows=8).bands, 8) == (8, 8)
    d = lmd.MinHashDeduplicator(bands=16)
    assert (d.bands, d.rows, d.value_bits) == (16, 4, 8)
    d = lmd.MinHashDeduplicator(rows=2)
    assert (d.bands, d.rows, d.value_bits) == (32, 2, 16)
    d = lmd.MinHashDeduplicator(rows=1)
    assert (d.bands, d.rows, d.value_bits) == (64, 1, 32)
    shapes = {t: lmd.MinHashDeduplicator(threshold=t) for t in (0.5, 0.9)}
    assert (shapes[0.5].bands, shapes[0.5].rows) == (16, 4)
    assert (shapes[0.9].bands, shapes[0.9].rows) == (4, 16)
    assert (lmd.MinHashDeduplicator(num_perm=128).bands, 11) == (11, 11)


def test_memory_bytes_grows() -> None:
    d = lmd.MinHashDeduplicator()
    empty = d.memory_bytes()
    d.filter_batch([f"doc {i} " + words(i, 30) for i in range(2000)])
    assert d.memory_bytes() > empty


# ---------------------------------------------------------------------------------------------
# Options and bad values
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "suggestion"),
    [("num_perms", "num_perm"), ("treshold", "threshold"), ("band", "bands"), ("ngrams", "ngram")],
)
def test_unknown_option_suggests(option: str, suggestion: str) -> None:
    with pytest.raises(ConfigError, match=f"did you mean '{suggestion}'"):
        lmd.MinHashDeduplicator(**{option: 1})


def test_unknown_shingle_suggests() -> None:
    with pytest.raises(ConfigError, match="did you mean 'word'"):
        lmd.MinHashDeduplicator(shingle="words")
    with pytest.raises(ConfigError, match="valid shingles: word, char"):
        lmd.MinHashDeduplicator(shingle="sentence")
    with pytest.raises(TypeError):
        lmd.MinHashDeduplicator(shingle=5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_perm": 0},
        {"num_perm": 513},
        {"num_perm": True},
        {"num_perm": "64"},
        {"threshold": 0},
        {"threshold": 1.5},
        {"threshold": -0.1},
        {"threshold": float("nan")},
        {"threshold": "0.8"},
        {"threshold": True},
        {"bands": 0},
        {"rows": 0},
        {"bands": 10, "rows": 10},
        {"bands": 65},
        {"ngram": 0},
        {"ngram": 257},
        {"seed": -1},
        {"seed": 2**64},
        {"threads": -1},
    ],
)
def test_bad_values_raise_value_error(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="MinHashDeduplicator: "):
        lmd.MinHashDeduplicator(**kwargs)  # type: ignore[arg-type]


def test_bad_types() -> None:
    with pytest.raises(TypeError):
        lmd.MinHashDeduplicator(store_signatures=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        lmd.MinHashDeduplicator(tracker="run.meta")  # type: ignore[arg-type]
    d = lmd.MinHashDeduplicator()
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        d.filter_batch(["a", 3])
    with pytest.raises(TypeError):
        d.filter_batch("not a list")
    with pytest.raises(TypeError):
        d.is_unique(None)  # type: ignore[arg-type]
    assert len(d) == 0  # nothing staged by a failing batch


# ---------------------------------------------------------------------------------------------
# Bad input (issue section 6)
# ---------------------------------------------------------------------------------------------


def test_empty_documents_are_one_cluster() -> None:
    d = lmd.MinHashDeduplicator()
    assert d.signature("") == [0xFFFFFFFF] * 64
    assert d.signature(" ... !!! ") == [0xFFFFFFFF] * 64
    assert d.filter_batch(["", base(1), " ", "...", b""]) == [True, True, False, False, False]


def test_documents_shorter_than_one_shingle() -> None:
    d = lmd.MinHashDeduplicator()
    # Fewer than 5 tokens: the whole normalised text is the one shingle.
    assert d.signature("Hello, World!") == d.signature("hello world")
    assert d.jaccard("hello world", "HELLO world!") == 1.0
    assert d.jaccard("hello world", "hello there") == 0.0
    assert d.filter_batch(["Hello world", "hello, WORLD", "hello there"]) == [True, False, True]
    c = lmd.MinHashDeduplicator(shingle="char", ngram=9)
    assert c.signature("ab") != [0xFFFFFFFF] * 64
    assert c.signature("ab") == c.signature("AB!")
    assert c.signature("a b") == c.signature("A.B")


def test_invalid_utf8_bytes_separate_words() -> None:
    d = lmd.MinHashDeduplicator(ngram=2)
    assert d.signature(b"abc\xff\xfedef") == d.signature("abc def")
    assert d.signature(b"abc\xe2\x82def") == d.signature("abc def")  # truncated sequence
    assert d.signature(b"abc\xed\xa0\x80def") == d.signature("abc def")  # encoded surrogate
    assert d.signature(b"abc\xc0\xafdef") == d.signature("abc def")  # overlong
    assert d.signature("abc\ufffddef") == d.signature("abc def")
    assert d.is_unique(b"\xff" * 1000)
    with pytest.raises(ValueError, match="surrogate"):
        d.signature("lone \ud800 surrogate")


def test_large_document() -> None:
    # 50 MB on the native backend; the pure-Python fallback gets 1 MB (~20 s per 50 MB there).
    size = 50_000_000 if NATIVE else 1_000_000
    big = " ".join(f"w{i}" for i in range(size // 8 + 1))[:size]
    d = lmd.MinHashDeduplicator()
    sig = d.signature(big)
    assert len(sig) == 64
    assert d.is_unique(big)
    assert not d.is_unique(big + " one more sentence at the end")
    repetitive = "lorem ipsum dolor sit amet " * (size // 27)
    assert d.signature(repetitive) == d.signature("lorem ipsum dolor sit amet " * 3)


# ---------------------------------------------------------------------------------------------
# Persistence with a StateTracker
# ---------------------------------------------------------------------------------------------


def companion(meta: Path) -> Path:
    return Path(str(meta) + ".minhash")


def test_commit_persists_and_reopens(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as tracker:
        d = lmd.MinHashDeduplicator(tracker)
        assert d.tracker is tracker
        assert d.filter_batch([base(1), near(1), base(2)]) == [True, False, True]
        assert tracker.has_pending
        d.commit()
        assert tracker.epoch == 1
        assert d.is_unique(base(3))
        tracker.rollback()
        assert d.staged_count == 0
        assert d.is_unique(base(4))
        tracker.commit()
        assert d.committed_count == 3
        del d
    with lmd.StateTracker(tmp_meta) as tracker:
        d = lmd.MinHashDeduplicator(tracker)
        assert (d.committed_count, d.staged_count) == (3, 0)
        assert d.query(near(4)) == [2]
        assert d.is_unique(base(3))
        del d


def golden_companion(rows: list[bytes], epoch: int) -> bytes:
    """An EpochLog with one MinHash record of the given 4-bit rows (64 perms), by hand."""
    header = struct.pack("<4sHBBHHIQQII", b"LMMH", 1, 0, 4, 64, 5, 0, 1, 0, len(rows), 0)
    payload = header + b"".join(rows)
    record = struct.pack("<II", len(payload), zlib.crc32(payload)) + payload
    body = b"LMEL" + struct.pack("<IQQI", 1, epoch, 64 + len(record), 0)
    return body + struct.pack("<I", zlib.crc32(body)) + bytes(32) + record


def test_companion_file_bytes(tmp_meta: Path) -> None:
    texts = [base(1), base(2)]
    with lmd.StateTracker(tmp_meta) as tracker:
        d = lmd.MinHashDeduplicator(tracker)
        d.filter_batch(texts)
        d.commit()
        del d
    rows = []
    for text in texts:
        sig = ref_signature(text)
        rows.append(bytes((sig[2 * i] & 0xF) | (sig[2 * i + 1] & 0xF) << 4 for i in range(32)))
    assert companion(tmp_meta).read_bytes() == golden_companion(rows, 1)


def test_uncommitted_companion_records_are_cut(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as tracker:
        d = lmd.MinHashDeduplicator(tracker)
        d.filter_batch([base(1)])
        d.commit()
        del d
    meta_after_1 = tmp_meta.read_bytes()
    companion_after_1 = companion(tmp_meta).read_bytes()
    with lmd.StateTracker(tmp_meta) as tracker:
        d = lmd.MinHashDeduplicator(tracker)
        d.filter_batch([base(2)])
        d.commit()
        del d
    # The companion append and header of epoch 2 landed, the slot did not: back to epoch 1.
    tmp_meta.write_bytes(meta_after_1)
    with lmd.StateTracker(tmp_meta) as tracker:
        d = lmd.MinHashDeduplicator(tracker)
        assert d.committed_count == 1
        assert d.is_unique(near(2))
        assert companion(tmp_meta).stat().st_size == len(companion_after_1)
        d.commit()
        del d
    with lmd.StateTracker(tmp_meta) as tracker:
        d = lmd.MinHashDeduplicator(tracker)
        assert d.committed_count == 2
        assert d.query(base(2)) == [1]
        del d


def test_attachment_rules(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as tracker:
        d = lmd.MinHashDeduplicator(tracker)
        d.is_unique(base(1))
        with pytest.raises(LuminaMoonError, match="already has a MinHashDeduplicator"):
            lmd.MinHashDeduplicator(tracker)
        d.commit()
        del d
        again = lmd.MinHashDeduplicator(tracker)  # the first one was collected: allowed
        assert again.committed_count == 1
        tracker.close()
        assert again.tracker is None
        with pytest.raises(LuminaMoonError, match="closed"):
            again.commit()
        with pytest.raises(LuminaMoonError, match="closed"):
            again.rollback()
        assert not again.is_unique(near(1))  # RAM still answers
    with (
        lmd.StateTracker(tmp_meta, read_only=True) as reader,
        pytest.raises(LuminaMoonError, match="read_only"),
    ):
        lmd.MinHashDeduplicator(reader)


def test_config_mismatch_and_corruption(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as tracker:
        d = lmd.MinHashDeduplicator(tracker)
        d.filter_batch([base(1), base(2)])
        d.commit()
        del d
    for kwargs in ({"num_perm": 32}, {"seed": 2}, {"shingle": "char"}, {"ngram": 3}):
        with lmd.StateTracker(tmp_meta) as tracker, pytest.raises(ConfigError, match="built with"):
            lmd.MinHashDeduplicator(tracker, **kwargs)  # type: ignore[arg-type]
    with lmd.StateTracker(tmp_meta) as tracker, pytest.raises(ConfigError):
        lmd.MinHashDeduplicator(tracker, store_signatures=True)
    # Another threshold with the same value_bits reads the same rows.
    with lmd.StateTracker(tmp_meta) as tracker:
        assert lmd.MinHashDeduplicator(tracker, threshold=0.85).committed_count == 2
    data = bytearray(companion(tmp_meta).read_bytes())
    data[-1] ^= 0x01  # inside the committed record: its CRC fails
    companion(tmp_meta).write_bytes(bytes(data))
    with lmd.StateTracker(tmp_meta) as tracker, pytest.raises(CorruptCheckpointError):
        lmd.MinHashDeduplicator(tracker)


# ---------------------------------------------------------------------------------------------
# SIMD kernels (LUMINAMOON_SIMD is read once per process: one child per instruction set)
# ---------------------------------------------------------------------------------------------

_SIMD_CHILD = """
import json, luminamoon.data as lmd
texts = [t for (_, _, t) in {keys!r}] + [" ".join(f"t{{i % 53}}" for i in range(3000))]
out = []
for num_perm in (1, 7, 64, 65, 200):
    d = lmd.MinHashDeduplicator(num_perm=num_perm)
    out.append([d.signature(t) for t in texts])
print(json.dumps([lmd.simd_isa(), out]))
"""


@pytest.mark.skipif(not NATIVE, reason="the fallback has no SIMD kernels")
def test_every_isa_gives_the_same_signatures(subprocess_env: dict[str, str]) -> None:
    import json

    code = _SIMD_CHILD.format(keys=list(GOLDEN))
    results = {}
    for isa in lmd.supported_isas():
        env = dict(subprocess_env, LUMINAMOON_SIMD=isa)
        run = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        reported, sigs = json.loads(run.stdout)
        assert reported == isa
        results[isa] = sigs
    assert all(sigs == results["scalar"] for sigs in results.values())


def test_unicode_tables_are_generated() -> None:
    """The committed tokenizer tables are what scripts/gen_minhash_unicode.py generates."""
    import unicodedata

    if unicodedata.unidata_version != "14.0.0":
        pytest.skip(f"Unicode {unicodedata.unidata_version} here; the tables are 14.0.0")
    script = Path(__file__).resolve().parents[1] / "scripts" / "gen_minhash_unicode.py"
    run = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr

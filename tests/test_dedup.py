"""StreamDeduplicator and xxh3_64: exact dedup, staging, the WAL (SPEC 3.3) and Arrow input."""

from __future__ import annotations

import gc
import importlib
import struct
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import luminamoon.data as lmd

pa: Any
try:
    pa = importlib.import_module("pyarrow")
except ImportError:  # Arrow input is optional; everything else still runs
    pa = None
needs_arrow = pytest.mark.skipif(pa is None, reason="pyarrow is not installed")
GoldenSlot = Callable[..., bytes]

SC = lmd.StreamCoordinate
h = lmd.xxh3_64


def _wal(meta: Path) -> Path:
    return Path(str(meta) + ".dedup")


def _pack(hashes: list[int]) -> bytes:
    return struct.pack(f"<{len(hashes)}Q", *hashes)


# -- xxh3_64 ---------------------------------------------------------------------------------


def test_xxh3_golden_values() -> None:
    assert h(b"") == 0x2D06800538D394C2
    assert h("") == 0x2D06800538D394C2
    assert h("héllo") == h("héllo".encode())


def test_xxh3_accepts_bytes_like() -> None:
    data = b"the quick brown fox" * 20  # > 240 bytes: the long-input path
    assert h(data) == h(bytearray(data)) == h(memoryview(data)) == h(data.decode())
    assert 0 <= h(data) < 2**64


def test_xxh3_matches_reference_package() -> None:
    xxhash = pytest.importorskip("xxhash")
    for n in (0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1024, 5000):
        data = bytes(range(256)) * (n // 256 + 1)
        assert h(data[:n]) == xxhash.xxh3_64_intdigest(data[:n]), n


def test_xxh3_bad_input() -> None:
    with pytest.raises(ValueError, match="UTF-8"):
        h("lone \ud800 surrogate")
    for bad in (1, None, 1.5, ["a"]):
        with pytest.raises(TypeError):
            h(bad)  # type: ignore[arg-type]


# -- detached semantics ----------------------------------------------------------------------


def test_is_unique_and_contains() -> None:
    d = lmd.StreamDeduplicator()
    assert d.tracker is None
    assert not d.contains("a")
    assert d.staged_count == 0  # contains stages nothing
    assert d.is_unique("a")
    assert not d.is_unique("a")
    assert not d.is_unique(b"a")  # str and its UTF-8 bytes are the same document
    assert d.contains(bytearray(b"a"))
    assert d.is_unique(memoryview(b"b"))
    assert (d.staged_count, d.committed_count, len(d)) == (2, 0, 2)


def test_filter_batch_first_occurrence_wins() -> None:
    d = lmd.StreamDeduplicator()
    assert d.filter_batch([]) == []
    assert d.filter_batch(["a", "b", "a", b"b", "c"]) == [True, True, False, False, True]
    assert d.filter_batch(("c", "d", "d", "a")) == [False, True, False, False]
    assert d.staged_count == 4


def test_commit_and_rollback_detached() -> None:
    d = lmd.StreamDeduplicator()
    d.filter_batch(["a", "b"])
    d.commit()
    assert (d.staged_count, d.committed_count) == (0, 2)
    d.filter_batch(["c", "a"])
    assert (d.staged_count, d.committed_count, len(d)) == (1, 2, 3)
    d.rollback()
    assert (d.staged_count, d.committed_count) == (0, 2)
    assert d.contains("a")
    assert not d.contains("c")
    assert d.is_unique("c")  # forgotten by the rollback, so new again


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.text(max_size=3), max_size=8), max_size=6), st.data())
def test_matches_reference_model(batches: list[list[str]], data: st.DataObject) -> None:
    d = lmd.StreamDeduplicator()
    committed: set[str] = set()
    staged: list[str] = []
    for batch in batches:
        expected = []
        for text in batch:
            new = text not in committed and text not in staged
            expected.append(new)
            if new:
                staged.append(text)
        assert d.filter_batch(batch) == expected
        action = data.draw(st.sampled_from(["commit", "rollback", "none"]))
        if action == "commit":
            d.commit()
            committed.update(staged)
            staged = []
        elif action == "rollback":
            d.rollback()
            staged = []
        assert (d.staged_count, d.committed_count) == (len(staged), len(committed))


@pytest.mark.parametrize("threads", [0, 1, 2, 7])
def test_threads_do_not_change_results(threads: int) -> None:
    texts = [f"doc {i % 37}" for i in range(500)]
    d = lmd.StreamDeduplicator(threads=threads)
    assert d.filter_batch(texts) == [i < 37 for i in range(500)]


def test_bad_threads() -> None:
    for bad in (-1, True, 1.5, "2"):
        with pytest.raises(ValueError, match="threads"):
            lmd.StreamDeduplicator(threads=bad)  # type: ignore[arg-type]
    with pytest.raises(lmd.ConfigError, match="did you mean 'threads'"):
        lmd.StreamDeduplicator(thread=2)
    with pytest.raises(lmd.ConfigError, match="did you mean 'threads'"):
        lmd.StreamDeduplicator(theads=2)


# -- bad input: errors name the index and stage nothing --------------------------------------


def test_wrong_element_type_names_index() -> None:
    d = lmd.StreamDeduplicator()
    d.is_unique("keep")
    for bad in (["a", "b", 3], ["a", "b", None], ["a", "b", 1.5]):
        with pytest.raises(TypeError, match=r"\b2\b"):
            d.filter_batch(bad)
    assert d.staged_count == 1
    assert not d.contains("a")


def test_lone_surrogate_in_batch_stages_nothing() -> None:
    d = lmd.StreamDeduplicator()
    with pytest.raises(ValueError, match=r"\b1\b"):
        d.filter_batch(["a", "\udc80"])
    assert d.staged_count == 0


@pytest.mark.parametrize("bad", [{"a"}, "abc", b"abc", 5, None, iter(["a"])])
def test_not_a_batch(bad: object) -> None:
    d = lmd.StreamDeduplicator()
    with pytest.raises(TypeError):
        d.filter_batch(bad)  # type: ignore[arg-type]
    assert d.staged_count == 0


def test_is_unique_bad_type() -> None:
    d = lmd.StreamDeduplicator()
    with pytest.raises(TypeError):
        d.is_unique(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        d.contains(None)  # type: ignore[arg-type]
    assert len(d) == 0


# -- Arrow input -----------------------------------------------------------------------------

TEXTS = ["a", "héllo", "a", "", "long enough to leave the inline view prefix", "", "héllo", "z"]
MASK = [True, True, False, True, True, False, False, True]
ARROW_TYPES = ["string", "large_string", "string_view", "binary", "large_binary", "binary_view"]


def _arrow(type_name: str, values: Sequence[str | None]) -> object:
    arrow_type = getattr(pa, type_name)()
    if "binary" in type_name:
        return pa.array([None if v is None else v.encode() for v in values], type=arrow_type)
    return pa.array(values, type=arrow_type)


def test_list_mask() -> None:
    assert lmd.StreamDeduplicator().filter_batch(TEXTS) == MASK


@needs_arrow
@pytest.mark.parametrize("type_name", ARROW_TYPES)
def test_arrow_array_same_as_list(type_name: str) -> None:
    d = lmd.StreamDeduplicator()
    assert d.filter_batch(_arrow(type_name, TEXTS)) == MASK
    reference = lmd.StreamDeduplicator()
    reference.filter_batch(TEXTS)
    assert d.staged_count == reference.staged_count
    assert all(d.contains(t) for t in TEXTS)


@needs_arrow
@pytest.mark.parametrize("type_name", ARROW_TYPES)
def test_arrow_chunked_array(type_name: str) -> None:
    arrow_type = getattr(pa, type_name)()
    chunks = [_arrow(type_name, TEXTS[:3]), _arrow(type_name, []), _arrow(type_name, TEXTS[3:])]
    chunked = pa.chunked_array(chunks, type=arrow_type)
    assert lmd.StreamDeduplicator().filter_batch(chunked) == MASK


@needs_arrow
def test_arrow_sliced_array() -> None:
    array = pa.array(["x", *TEXTS, "y"]).slice(1, len(TEXTS))
    assert lmd.StreamDeduplicator().filter_batch(array) == MASK


class _CapsuleArray:
    """Exports only the Arrow PyCapsule array protocol (like a foreign library would)."""

    def __init__(self, array: object) -> None:
        self._array = array

    def __arrow_c_array__(self, requested_schema: object = None) -> object:
        return self._array.__arrow_c_array__(requested_schema)  # type: ignore[attr-defined]


class _CapsuleStream:
    """Exports only the Arrow PyCapsule stream protocol."""

    def __init__(self, stream: object) -> None:
        self._stream = stream

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self._stream.__arrow_c_stream__(requested_schema)  # type: ignore[attr-defined]


@needs_arrow
def test_arrow_capsule_protocols() -> None:
    assert lmd.StreamDeduplicator().filter_batch(_CapsuleArray(pa.array(TEXTS))) == MASK
    chunked = pa.chunked_array([pa.array(TEXTS[:5]), pa.array(TEXTS[5:])])
    assert lmd.StreamDeduplicator().filter_batch(_CapsuleStream(chunked)) == MASK


@needs_arrow
@pytest.mark.parametrize("type_name", ARROW_TYPES)
def test_arrow_null_names_index(type_name: str) -> None:
    d = lmd.StreamDeduplicator()
    with pytest.raises(ValueError, match=r"\b3\b"):
        d.filter_batch(_arrow(type_name, ["a", "b", "c", None, "d"]))
    chunked = pa.chunked_array(
        [_arrow(type_name, ["a", "b"]), _arrow(type_name, ["c", "d", None])],
        type=getattr(pa, type_name)(),
    )
    with pytest.raises(ValueError, match=r"\b4\b"):
        d.filter_batch(chunked)
    assert d.staged_count == 0


@needs_arrow
@pytest.mark.parametrize(
    "array_factory",
    [
        lambda: pa.array([1, 2, 3]),
        lambda: pa.array([1.5]),
        lambda: pa.array([["a"]]),
        lambda: pa.array(["a", "b"]).dictionary_encode(),
    ],
)
def test_arrow_unsupported_type(array_factory: Callable[[], object]) -> None:
    d = lmd.StreamDeduplicator()
    with pytest.raises(TypeError, match="utf8") as info:
        d.filter_batch(array_factory())
    message = str(info.value)
    assert all(name in message for name in ("large_utf8", "binary", "binary_view"))
    assert d.staged_count == 0


# -- attached to a StateTracker: the WAL -----------------------------------------------------


def test_commit_writes_wal_in_staging_order(tmp_meta: Path, golden_slot: GoldenSlot) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        d = lmd.StreamDeduplicator(t)
        assert d.tracker is t
        assert not t.has_pending
        assert d.filter_batch(["x", "y", "x", "z"]) == [True, True, False, True]
        assert t.has_pending
        assert _wal(tmp_meta).read_bytes() == b""  # RAM only until commit
        t.update(1, SC(0, 10))
        assert t.commit() == 1
        first = [h("x"), h("y"), h("z")]
        assert _wal(tmp_meta).read_bytes() == _pack(first)
        assert t.dedup_count == 3
        assert (d.staged_count, d.committed_count) == (0, 3)
        assert tmp_meta.read_bytes()[:64] == golden_slot(1, 1, (0, 10, 0, 0, 0, 0), 3)

        assert d.is_unique("w")
        assert d.is_unique(b"v")
        assert not d.is_unique("x")
        d.commit()  # delegates to the tracker: a whole durable commit
        assert t.epoch == 2
        assert t.read() == (2, 1, SC(0, 10), 5)
        assert _wal(tmp_meta).read_bytes() == _pack([*first, h("w"), h("v")])
        assert tmp_meta.read_bytes()[64:] == golden_slot(2, 1, (0, 10, 0, 0, 0, 0), 5)


def test_rollback_attached_drops_staged_only(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        d = lmd.StreamDeduplicator(t)
        d.filter_batch(["a", "b"])
        t.update(1, SC(1))
        t.commit()
        d.filter_batch(["c", "a"])
        t.update(2, SC(2))
        d.rollback()  # drops the staged hashes and the staged update
        assert not t.has_pending
        assert (d.staged_count, d.committed_count) == (0, 2)
        t.commit()
        assert t.read() == (2, 1, SC(1), 2)
        d.filter_batch(["c"])
        t.rollback()  # the tracker's rollback drops the deduplicator's staging too
        assert d.staged_count == 0
        assert _wal(tmp_meta).read_bytes() == _pack([h("a"), h("b")])


def test_reopen_loads_committed_hashes(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        d = lmd.StreamDeduplicator(t)
        d.filter_batch([f"doc {i}" for i in range(100)])
        t.commit()
        d.filter_batch(["uncommitted"])
    with lmd.StateTracker(tmp_meta) as t:
        assert t.dedup_count == 100
        d = lmd.StreamDeduplicator(t)
        assert (d.committed_count, d.staged_count) == (100, 0)
        assert d.contains("doc 42")
        assert not d.contains("uncommitted")
        assert d.filter_batch(["doc 0", "uncommitted", "doc 99"]) == [False, True, False]


def test_wal_trailing_bytes_are_truncated_by_writer(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        d = lmd.StreamDeduplicator(t)
        d.filter_batch(["a", "b"])
        t.commit()
    committed = _wal(tmp_meta).read_bytes()
    for junk in (b"\x01", _pack([h("c")]), _pack([h("c")]) + b"\x02\x03"):
        _wal(tmp_meta).write_bytes(committed + junk)  # a commit that died after step 1
        with lmd.StateTracker(tmp_meta, read_only=True) as r:
            assert r.dedup_count == 2
        assert _wal(tmp_meta).read_bytes() == committed + junk  # readers never truncate
        with lmd.StateTracker(tmp_meta) as t:
            assert _wal(tmp_meta).read_bytes() == committed
            d = lmd.StreamDeduplicator(t)
            assert d.committed_count == 2
            assert not d.contains("c")


def test_torn_slot_discards_its_hashes(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        d = lmd.StreamDeduplicator(t)
        d.filter_batch(["a", "b"])
        t.commit()  # slot A, dedup_count 2
    raw = bytearray(tmp_meta.read_bytes())
    raw[56] ^= 0xFF  # slot A's dedup_count: CRC no longer matches
    tmp_meta.write_bytes(bytes(raw))
    with lmd.StateTracker(tmp_meta) as t:
        assert t.read() == (0, 0, SC(), 0)
        assert _wal(tmp_meta).read_bytes() == b""
        assert lmd.StreamDeduplicator(t).committed_count == 0


@pytest.mark.parametrize("read_only", [False, True])
def test_short_or_missing_wal_is_corrupt(tmp_meta: Path, read_only: bool) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        d = lmd.StreamDeduplicator(t)
        d.filter_batch(["a", "b", "c"])
        t.commit()
    full = _wal(tmp_meta).read_bytes()
    for short in (full[:-1], full[:16], b""):
        _wal(tmp_meta).write_bytes(short)
        with pytest.raises(lmd.CorruptCheckpointError, match=r"\.dedup"):
            lmd.StateTracker(tmp_meta, read_only=read_only)
        assert _wal(tmp_meta).read_bytes() == short
    _wal(tmp_meta).unlink()
    with pytest.raises(lmd.CorruptCheckpointError):
        lmd.StateTracker(tmp_meta, read_only=read_only)
    assert not _wal(tmp_meta).exists()


def test_missing_wal_with_no_hashes_is_created(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        t.commit()
    _wal(tmp_meta).unlink()
    with lmd.StateTracker(tmp_meta) as t:
        assert t.epoch == 1
    assert _wal(tmp_meta).read_bytes() == b""


def test_collected_deduplicator_detaches(tmp_meta: Path) -> None:
    """The tracker refers to its deduplicator weakly: once collected it is detached, its staged
    hashes are gone, and another deduplicator may attach. (A strong reference would be a cycle
    that keeps the tracker, and its lock, alive.)"""
    with lmd.StateTracker(tmp_meta) as t:
        lmd.StreamDeduplicator(t).filter_batch(["a", "b"])
        gc.collect()
        assert not t.has_pending
        d = lmd.StreamDeduplicator(t)  # attaching again is allowed
        assert d.filter_batch(["a", "b"]) == [True, True]
        t.commit()
        assert t.dedup_count == 2
    assert _wal(tmp_meta).read_bytes() == _pack([h("a"), h("b")])


def test_one_deduplicator_per_tracker(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        d = lmd.StreamDeduplicator(t)
        with pytest.raises(lmd.LuminaMoonError):
            lmd.StreamDeduplicator(t)
        assert d.tracker is t


def test_cannot_attach_to_read_only(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta, read_only=True) as r, pytest.raises(lmd.LuminaMoonError):
        lmd.StreamDeduplicator(r)


def test_tracker_must_be_a_tracker() -> None:
    with pytest.raises(TypeError):
        lmd.StreamDeduplicator("run.meta")  # type: ignore[arg-type]


@needs_arrow
def test_arrow_batch_through_the_wal(tmp_meta: Path) -> None:
    with lmd.StateTracker(tmp_meta) as t:
        d = lmd.StreamDeduplicator(t)
        assert d.filter_batch(pa.array(TEXTS, type=pa.string_view())) == MASK
        t.commit()
    kept = [text for text, keep in zip(TEXTS, MASK, strict=True) if keep]
    assert _wal(tmp_meta).read_bytes() == _pack([h(text) for text in kept])

"""StringTensor (SPEC 4, stage 5): construction, both layouts, operations, zero-copy exports to
Arrow/Polars/DuckDB/NumPy/PyTorch, and lifetime safety. Runs on the live backend (the suite runs
again with LUMINAMOON_FORCE_FALLBACK=1).

Zero-copy is proved by buffer addresses: ``t.views`` / ``t.data_buffers`` /
``t.offsets_and_payload()`` are NumPy arrays over the tensor's own memory, so an export whose
buffer has the same address shares that memory.
"""

from __future__ import annotations

import gc
import pickle
import struct
from typing import Any

import pytest

import luminamoon.data as lmd
from luminamoon.data import ConfigError

np = pytest.importorskip("numpy")
pa = pytest.importorskip("pyarrow")

ST = lmd.StringTensor
SAMPLE = ["", "a", "twelve bytes", "thirteen byte", "héllo wörld, a longer one", "日本語テキスト"]


def addr(array: Any) -> int:
    """Address of a NumPy array's first byte."""
    return int(array.__array_interface__["data"][0])


def golden_views(strings: list[str]) -> bytes:
    """Arrow utf8_view bytes of ``strings`` over one payload, straight from the format rules."""
    out, pos = b"", 0
    for s in strings:
        b = s.encode()
        if len(b) <= 12:
            out += struct.pack("<I", len(b)) + b.ljust(12, b"\0")
        else:
            out += struct.pack("<I4sII", len(b), b[:4], 0, pos)
        pos += len(b)
    return out


# -- construction -----------------------------------------------------------------------------


def test_from_list_of_str_and_bytes() -> None:
    t = ST(SAMPLE)
    assert len(t) == len(SAMPLE)
    assert t.to_pylist() == SAMPLE
    assert ST([s.encode() for s in SAMPLE]) == t
    assert ST(tuple(SAMPLE)) == t
    assert ST(s for s in SAMPLE) == t
    assert ST.from_pylist([bytearray(b"ab"), memoryview(b"cd"), "ef"]).to_pylist() == [
        "ab",
        "cd",
        "ef",
    ]
    assert ST(t) == t
    assert len(ST()) == 0
    assert ST() == ST([])


def test_invalid_utf8_bytes_name_the_index() -> None:
    with pytest.raises(ValueError, match=r"element 2 is not valid UTF-8.*0xff at offset 3"):
        ST([b"ok", b"fine", b"bad\xffbyte"])
    with pytest.raises(ValueError, match="element 1"):
        ST([b"abc", b"\xc3", b"\xa9"])  # one sequence split across two strings
    with pytest.raises(ValueError, match="element 0"):
        ST([b"\xed\xa0\x80"])  # an encoded surrogate


def test_bad_items() -> None:
    with pytest.raises(ValueError, match=r"items\[1\].*surrogate"):
        ST(["ok", "\ud800"])
    with pytest.raises(TypeError, match=r"items\[1\]"):
        ST(["ok", 3])
    with pytest.raises(TypeError, match="single string"):
        ST("abc")
    with pytest.raises(TypeError, match="single string"):
        ST(b"abc")
    with pytest.raises(TypeError):
        ST(42)


def test_from_numpy() -> None:
    assert ST(np.array(["a", "bé", "", "日本"])).to_pylist() == ["a", "bé", "", "日本"]
    assert ST.from_numpy(np.array(["a\x00b", "c"])).to_pylist() == ["a\x00b", "c"]
    assert ST(np.array([b"a", b"bc", b""])).to_pylist() == ["a", "bc", ""]
    assert ST(np.array(["x", "yz"], dtype=object)).to_pylist() == ["x", "yz"]
    if hasattr(np, "dtypes") and hasattr(np.dtypes, "StringDType"):
        arr = np.array(["long string number one", "é"], dtype=np.dtypes.StringDType())
        assert ST(arr).to_pylist() == ["long string number one", "é"]
    assert ST(np.array(["a", "b", "c"])[::2]).to_pylist() == ["a", "c"]
    assert ST(np.array(["ab", "c"], dtype=">U2")).to_pylist() == ["ab", "c"]
    with pytest.raises(ValueError, match="1-D"):
        ST(np.array([["a"]]))
    with pytest.raises(TypeError, match="dtype"):
        ST.from_numpy(np.array([1, 2]))
    with pytest.raises(ValueError, match="element 1"):
        ST(np.array([b"ok", b"\xff"]))
    with pytest.raises(ValueError, match="element 0"):
        ST(np.array(["\ud800"]))


def test_from_buffers_zero_copy_and_validation() -> None:
    payload = np.frombuffer(b"abcthirteen bytes", dtype=np.uint8)
    for dtype in (np.int32, np.uint32, np.int64, np.uint64):
        offsets = np.array([0, 3, 3, 17], dtype=dtype)
        t = ST.from_buffers(offsets, payload)
        assert t.to_pylist() == ["abc", "", "thirteen bytes"]
        assert t.is_contiguous
        assert addr(t.data_buffers[0]) == addr(payload)  # views point into the caller's bytes
    t = ST.from_buffers(np.array([0, 3, 17], dtype=np.uint32), b"abcthirteen bytes")
    kept_offsets, kept_payload = t.offsets_and_payload()
    assert kept_offsets.dtype == np.uint32
    assert bytes(kept_payload) == b"abcthirteen bytes"
    # offsets may start above 0 (an Arrow slice); strings are payload[o[i]:o[i+1]]
    assert ST.from_buffers(np.array([1, 2], dtype=np.int64), b"xy").to_pylist() == ["y"]

    def bad(offsets: list[int], data: bytes, dtype: Any = np.int64) -> None:
        ST.from_buffers(np.array(offsets, dtype=dtype), data)

    with pytest.raises(ValueError, match="must not decrease"):
        bad([0, 3, 2], b"abc")
    with pytest.raises(ValueError, match="past the end"):
        bad([0, 4], b"abc")
    with pytest.raises(ValueError, match="past the end"):
        bad([0, -1], b"abc")
    with pytest.raises(ValueError, match="n \\+ 1"):
        bad([], b"")
    with pytest.raises(ValueError, match="element 0"):
        bad([0, 2], b"\xff\xfe")
    with pytest.raises(TypeError, match="offsets must be"):
        bad([0, 1], b"a", np.int16)
    with pytest.raises(TypeError, match="offsets must be"):
        bad([0, 1], b"a", np.float64)
    with pytest.raises(TypeError, match="payload must be"):
        ST.from_buffers(np.array([0, 1]), np.array([1.0]))


# -- Arrow input ------------------------------------------------------------------------------


@pytest.mark.parametrize("arrow_type", ["string", "large_string", "string_view"])
def test_from_arrow_types(arrow_type: str) -> None:
    arr = pa.array(SAMPLE, type=getattr(pa, arrow_type)())
    t = ST(arr)
    assert t.to_pylist() == SAMPLE
    assert ST.from_arrow(arr) == t
    assert ST(arr.slice(2, 3)).to_pylist() == SAMPLE[2:5]
    binary = arr.cast(
        {"string": pa.binary(), "large_string": pa.large_binary()}.get(arrow_type, pa.binary_view())
    )
    assert ST(binary) == t


def test_from_arrow_utf8_is_zero_copy() -> None:
    arr = pa.array(SAMPLE)
    t = ST(arr)
    assert t.is_contiguous
    assert addr(t.data_buffers[0]) == arr.buffers()[2].address
    offsets, payload = t.offsets_and_payload()
    assert addr(offsets) == arr.buffers()[1].address
    assert addr(payload) == arr.buffers()[2].address
    # and back out: the exported utf8 array is the producer's memory
    out = t.to_arrow("utf8")
    assert out.buffers()[1].address == arr.buffers()[1].address
    assert out.buffers()[2].address == arr.buffers()[2].address


def test_from_arrow_utf8_view_is_zero_copy() -> None:
    arr = pa.array(SAMPLE, type=pa.string_view())
    t = ST(arr)
    assert addr(t.views) == arr.buffers()[1].address
    assert [addr(b) for b in t.data_buffers] == [b.address for b in arr.buffers()[2:]]
    out = pa.array(t)
    assert out.buffers()[1].address == arr.buffers()[1].address
    sliced = ST(arr.slice(1, 3))
    assert addr(sliced.views) == arr.buffers()[1].address + 16


def test_from_chunked_arrays_and_streams() -> None:
    chunked = pa.chunked_array(
        [pa.array(SAMPLE[:3]), pa.array([], pa.string()), pa.array(SAMPLE[3:])]
    )
    assert ST(chunked).to_pylist() == SAMPLE
    single = pa.chunked_array([pa.array(SAMPLE)])
    assert ST(single).is_contiguous  # one chunk: its layout is kept
    assert len(ST(pa.chunked_array([], pa.string()))) == 0

    class OnlyStream:
        def __arrow_c_stream__(self, requested_schema: object = None) -> object:
            return chunked.__arrow_c_stream__(requested_schema)

    class OnlyArray:
        def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
            return pa.array(SAMPLE).__arrow_c_array__(requested_schema)  # type: ignore[no-any-return]

    assert ST(OnlyStream()).to_pylist() == SAMPLE
    assert ST(OnlyArray()).to_pylist() == SAMPLE


def test_from_arrow_rejects_nulls_and_other_types() -> None:
    with pytest.raises(ValueError, match="element 1 is null"):
        ST(pa.array(["a", None, "c"]))
    chunked = pa.chunked_array([pa.array(["a", "b"]), pa.array(["c", None])])
    with pytest.raises(ValueError, match="element 3 is null"):
        ST(chunked)
    with pytest.raises(TypeError, match="unsupported Arrow type"):
        ST(pa.array([1, 2]))
    with pytest.raises(ValueError, match="element 1 is not valid UTF-8"):
        ST(pa.array([b"ok", b"\xff"], type=pa.binary()))
    with pytest.raises(TypeError, match="__arrow_c_array__"):
        ST.from_arrow([1, 2])


def test_from_polars_series() -> None:
    pl = pytest.importorskip("polars")
    s = pl.Series(SAMPLE)
    assert ST(s).to_pylist() == SAMPLE


# -- layout -------------------------------------------------------------------------------------


def test_views_are_arrow_utf8_view_bytes() -> None:
    strings = ["abcdefghijkl", "abcdefghijklm", "", "é" * 7, "x"]
    t = ST(strings)
    views = t.views
    assert views.shape == (5, 16)
    assert views.dtype == np.uint8
    assert not views.flags.writeable
    assert views.tobytes() == golden_views(strings)
    assert struct.unpack_from("<I", views[0].tobytes())[0] == 12  # inline at 12 bytes
    assert struct.unpack_from("<I4sII", views[1].tobytes()) == (13, b"abcd", 0, 12)
    assert len(t.data_buffers) == 1
    assert t.data_buffers[0].tobytes() == "".join(strings).encode()


def test_offsets_and_payload() -> None:
    t = ST(SAMPLE)
    offsets, payload = t.offsets_and_payload()
    assert offsets.dtype == np.uint32
    assert offsets.tolist() == [0, *np.cumsum([len(s.encode()) for s in SAMPLE]).tolist()]
    assert payload.tobytes() == "".join(SAMPLE).encode()
    assert not offsets.flags.writeable
    assert not payload.flags.writeable
    # kept layout: the payload is the data buffer itself
    assert addr(payload) == addr(t.data_buffers[0])
    again = t.offsets_and_payload()
    assert addr(again[0]) == addr(offsets)


def test_nbytes() -> None:
    t = ST(["a", "a string longer than twelve"])
    assert t.nbytes == 2 * 16 + 28 + 3 * 4  # views + payload + kept u32 offsets
    assert t.take([1]).nbytes == 16 + 28  # gathered views; the buffer is shared in full
    assert ST().nbytes == 4


# -- operations --------------------------------------------------------------------------------


def test_indexing_and_iteration() -> None:
    t = ST(SAMPLE)
    assert [t[i] for i in range(len(t))] == SAMPLE
    assert t[-1] == SAMPLE[-1]
    assert t[np.int64(2)] == SAMPLE[2]
    assert list(t) == SAMPLE
    with pytest.raises(IndexError):
        t[len(SAMPLE)]
    with pytest.raises(IndexError):
        t[-len(SAMPLE) - 1]
    with pytest.raises(TypeError, match="integers or slices"):
        t["a"]


def test_slices_are_views() -> None:
    t = ST(SAMPLE)
    s = t[2:5]
    assert s.to_pylist() == SAMPLE[2:5]
    assert addr(s.views) == addr(t.views) + 2 * 16
    assert addr(s.data_buffers[0]) == addr(t.data_buffers[0])
    assert s.is_contiguous
    offsets, payload = s.offsets_and_payload()
    assert offsets[0] == 0
    assert addr(payload) == addr(t.data_buffers[0]) + len("a")  # payload shared, offsets rebased
    assert t[::-1].to_pylist() == SAMPLE[::-1]
    assert t[1::2].to_pylist() == SAMPLE[1::2]
    assert not t[::2].is_contiguous
    assert t[10:20].to_pylist() == []
    assert t[-2:].to_pylist() == SAMPLE[-2:]


def test_take_and_filter() -> None:
    t = ST(SAMPLE)
    assert t.take([4, 4, 0]).to_pylist() == [SAMPLE[4], SAMPLE[4], SAMPLE[0]]
    assert t.take(np.array([1, 3], dtype=np.int32)).to_pylist() == [SAMPLE[1], SAMPLE[3]]
    assert t.take(np.array([5], dtype=np.uint64)).to_pylist() == [SAMPLE[5]]
    assert t.take([]).to_pylist() == []
    taken = t.take([4])
    assert addr(taken.data_buffers[0]) == addr(t.data_buffers[0])  # bytes shared
    with pytest.raises(IndexError, match=r"indices\[1\] = 6"):
        t.take([0, 6])
    with pytest.raises(IndexError):
        t.take([-1])
    with pytest.raises(IndexError):
        t.take(np.array([-1]))
    with pytest.raises(TypeError, match="int"):
        t.take([True])
    with pytest.raises(TypeError, match="filter"):
        t.take(np.array([True]))

    mask = [True, False, False, True, True, False]
    assert t.filter(mask).to_pylist() == [SAMPLE[0], SAMPLE[3], SAMPLE[4]]
    assert t.filter(np.array(mask)).to_pylist() == [SAMPLE[0], SAMPLE[3], SAMPLE[4]]
    with pytest.raises(ValueError, match="mask has 2 entries"):
        t.filter([True, False])
    with pytest.raises(TypeError, match="bool"):
        t.filter([1, 0, 0, 0, 0, 0])
    with pytest.raises(TypeError, match="take"):
        t.filter(np.array([1, 0, 0, 0, 0, 0]))


def test_concat() -> None:
    a, b = ST(SAMPLE[:3]), ST(SAMPLE[3:])
    c = ST.concat([a, ST(), b])
    assert c.to_pylist() == SAMPLE
    assert len(c.data_buffers) == 2
    assert addr(c.data_buffers[1]) == addr(b.data_buffers[0])
    assert not c.is_contiguous
    one = ST.concat([ST(), a])
    assert one.is_contiguous  # a single non-empty part is returned as it is
    assert addr(one.views) == addr(a.views)
    assert len(ST.concat([])) == 0
    with pytest.raises(TypeError, match="StringTensor"):
        ST.concat([a, ["x"]])


def test_equality_repr_hash() -> None:
    t = ST(SAMPLE)
    assert t == ST(SAMPLE)
    assert t == t.take(list(range(len(SAMPLE))))
    assert t == t.compact()
    assert t != ST(SAMPLE[:-1])
    changed = [*SAMPLE[:-1], SAMPLE[-1][:-1] + "!"]
    assert t != ST(changed)
    assert (t == SAMPLE) is False
    assert repr(ST(["a", "b"])) == "StringTensor(['a', 'b'], len=2)"
    assert repr(ST([str(i) for i in range(7)])).endswith("'4', ...], len=7)")
    with pytest.raises(TypeError):
        hash(t)


def test_pickle_round_trip() -> None:
    t = ST(SAMPLE).take([5, 1, 3])
    back = pickle.loads(pickle.dumps(t))
    assert type(back) is type(t)
    assert back == t
    assert back.is_contiguous  # rebuilt from offsets + payload


def test_compact_copies_into_one_payload() -> None:
    t = ST(SAMPLE)
    c = t[3:5].compact()
    assert c.to_pylist() == SAMPLE[3:5]
    assert c.is_contiguous
    assert addr(c.data_buffers[0]) != addr(t.data_buffers[0])
    assert c.data_buffers[0].tobytes() == "".join(SAMPLE[3:5]).encode()


# -- exports ---------------------------------------------------------------------------------


def test_arrow_export_utf8_view_is_zero_copy() -> None:
    t = ST(SAMPLE)
    arr = pa.array(t)
    assert arr.type == pa.string_view()
    assert arr.to_pylist() == SAMPLE
    assert arr.buffers()[1].address == addr(t.views)
    assert arr.buffers()[2].address == addr(t.data_buffers[0])
    arr.validate(full=True)
    assert t.to_arrow().equals(arr)


def test_arrow_export_utf8_and_large_utf8() -> None:
    t = ST(SAMPLE)
    offsets, payload = t.offsets_and_payload()
    utf8 = t.to_arrow("utf8")
    assert utf8.type == pa.string()
    assert utf8.buffers()[1].address == addr(offsets)  # kept layout: no copy at all
    assert utf8.buffers()[2].address == addr(payload)
    large = t.to_arrow("large_utf8")
    assert large.type == pa.large_string()
    assert large.buffers()[2].address == addr(payload)  # offsets widened, payload shared
    for arr in (utf8, large, t.to_arrow(pa.large_string()), pa.array(t, type=pa.string())):
        arr.validate(full=True)
        assert arr.to_pylist() == SAMPLE
    gathered = t.take([5, 0, 2])
    assert gathered.to_arrow("utf8").to_pylist() == [SAMPLE[5], SAMPLE[0], SAMPLE[2]]
    assert t[2:4].to_arrow("utf8").to_pylist() == SAMPLE[2:4]
    assert pa.array(t, type=pa.binary()).to_pylist() == [s.encode() for s in SAMPLE]
    with pytest.raises(ConfigError, match="did you mean 'utf8'"):
        t.to_arrow("utf9")
    with pytest.raises(TypeError):
        t.to_arrow(pa.int32())


def test_arrow_stream_export() -> None:
    t = ST(SAMPLE)
    chunked = pa.chunked_array(t)
    assert chunked.num_chunks == 1
    assert chunked.to_pylist() == SAMPLE
    assert chunked.chunk(0).buffers()[1].address == addr(t.views)
    large = pa.chunked_array(t, type=pa.large_string())  # requested through the stream
    assert large.type == pa.large_string()
    assert large.to_pylist() == SAMPLE


def test_polars_export_is_zero_copy() -> None:
    pl = pytest.importorskip("polars")
    t = ST(SAMPLE)
    s = t.to_polars("text")
    assert s.name == "text"
    assert s.dtype == pl.String
    assert s.to_list() == SAMPLE
    back = s.to_arrow(compat_level=pl.CompatLevel.newest())
    assert back.buffers()[1].address == addr(t.views)
    assert back.buffers()[2].address == addr(t.data_buffers[0])
    assert pl.Series(t).to_list() == SAMPLE


def test_duckdb_queries_the_tensor() -> None:
    duckdb = pytest.importorskip("duckdb")
    t = ST(SAMPLE)
    con = duckdb.connect()
    con.register("strings", t)  # read through __arrow_c_stream__ (utf8_view)
    rows = con.sql("SELECT value FROM strings").fetchall()
    assert [r[0] for r in rows] == SAMPLE
    long_ones = con.sql("SELECT count(*) FROM strings WHERE strlen(value) > 12").fetchall()
    assert long_ones == [(sum(len(s.encode()) > 12 for s in SAMPLE),)]
    assert [r[0] for r in con.from_arrow(t).fetchall()] == SAMPLE
    # a Python variable is found by name too (DuckDB's replacement scan)
    assert duckdb.sql("SELECT count(*) FROM t").fetchall() == [(len(SAMPLE),)]


def test_to_numpy() -> None:
    out = ST(SAMPLE).to_numpy()
    assert out.tolist() == SAMPLE
    assert out.shape == (len(SAMPLE),)


def test_torch_round_trip_on_cpu() -> None:
    torch = pytest.importorskip("torch")
    t = ST(SAMPLE)
    offsets, payload = t.to_torch()
    assert offsets.dtype == torch.uint32
    assert payload.dtype == torch.uint8
    assert offsets.device.type == "cpu"
    np_offsets, np_payload = t.offsets_and_payload()
    assert offsets.data_ptr() == addr(np_offsets)  # DLPack: the same memory
    assert payload.data_ptr() == addr(np_payload)
    assert offsets.to(torch.int64).tolist() == np_offsets.tolist()
    back = ST.from_torch(offsets, payload)
    assert back == t
    assert addr(back.data_buffers[0]) == payload.data_ptr()  # and back without a copy
    assert ST.from_torch(offsets.to(torch.int64), payload) == t
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        ST.from_torch(np_offsets, payload)


# -- lifetime ---------------------------------------------------------------------------------


def _collect() -> None:
    gc.collect()


class _Capsule:
    """Hands an already exported stream capsule to a consumer."""

    def __init__(self, capsule: object) -> None:
        self.capsule = capsule

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self.capsule


def test_exports_outlive_the_tensor() -> None:
    strings = [f"string number {i} " * (i % 4) for i in range(200)]
    t = ST(strings)
    views_arr = pa.array(t)
    utf8_arr = t.to_arrow("utf8")
    large_arr = t.to_arrow("large_utf8")
    stream = t.__arrow_c_stream__()
    offsets, payload = t.offsets_and_payload()
    views_np, buffers_np = t.views, t.data_buffers
    part = t[50:60]
    del t
    _collect()
    assert views_arr.to_pylist() == strings
    assert utf8_arr.to_pylist() == strings
    assert large_arr.to_pylist() == strings
    assert pa.chunked_array(_Capsule(stream)).to_pylist() == strings
    assert ST.from_buffers(offsets, payload).to_pylist() == strings
    assert views_np.shape == (200, 16)
    assert buffers_np[0].tobytes() == "".join(strings).encode()
    assert part.to_pylist() == strings[50:60]


def test_gathered_views_outlive_the_source() -> None:
    strings = [f"a long enough string {i}" for i in range(100)]
    t = ST(strings)
    taken = t.take([99, 0, 50])
    kept = t.filter([i % 2 == 0 for i in range(100)])
    joined = ST.concat([t[:10], t[90:]])
    del t
    _collect()
    assert taken.to_pylist() == [strings[99], strings[0], strings[50]]
    assert kept.to_pylist() == strings[::2]
    assert joined.to_pylist() == strings[:10] + strings[90:]


def test_imports_outlive_the_producer() -> None:
    strings = [f"producer string {i}" * (1 + i % 3) for i in range(100)]
    for arrow_type in (pa.string(), pa.large_string(), pa.string_view()):
        arr = pa.array(strings, type=arrow_type)
        t = ST(arr)
        del arr
        _collect()
        assert t.to_pylist() == strings
    data = np.frombuffer("".join(strings).encode(), dtype=np.uint8).copy()
    offsets = np.array([0, *np.cumsum([len(s) for s in strings])], dtype=np.int64)
    t = ST.from_buffers(offsets, data)
    del data, offsets
    _collect()
    assert t.to_pylist() == strings


def test_polars_and_torch_exports_outlive_the_tensor() -> None:
    pl = pytest.importorskip("polars")
    torch = pytest.importorskip("torch")
    strings = [f"polars and torch {i} " * (i % 3) for i in range(100)]
    t = ST(strings)
    series = t.to_polars()
    offsets, payload = t.to_torch()
    del t
    _collect()
    assert series.to_list() == strings
    assert isinstance(series, pl.Series)
    assert bytes(payload.numpy()) == "".join(strings).encode()
    assert offsets.to(torch.int64)[-1].item() == len("".join(strings).encode())
    again = ST.from_torch(offsets, payload)
    del offsets, payload
    _collect()
    assert again.to_pylist() == strings

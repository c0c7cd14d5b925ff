"""StringTensor, native vs fallback: identical view bytes, data buffers, offsets, payloads,
Arrow exports, answers and errors (driven by hypothesis). The fallback is the oracle; both are
also checked against plain Python list operations.

Runs the two backend modules side by side, whatever LUMINAMOON_FORCE_FALLBACK says.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

N = pytest.importorskip("luminamoon.data._native", reason="luminamoon.data._native is not built")
F = importlib.import_module("luminamoon.data.fallbacks")
np = pytest.importorskip("numpy")
pa = pytest.importorskip("pyarrow")

MODS = {"native": N, "fallback": F}
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text around the 12/13-byte boundary, multilingual, empty; no surrogates (not encodable).
_chars = st.characters(blacklist_categories=("Cs",))
_boundary = st.sampled_from(["abcdefghijkl", "abcdefghijklm", "éééééé", "日本語テ", "", "😀😀😀"])
TEXT = st.one_of(st.text(_chars, max_size=30), _boundary, st.text("ab", min_size=11, max_size=14))
STRINGS = st.lists(TEXT, max_size=40)


def layout(t: Any) -> tuple[Any, ...]:
    """Everything observable about a tensor's memory layout, as comparable values."""
    offsets, payload = t.offsets_and_payload()
    return (
        len(t),
        t.views.tobytes(),
        [b.tobytes() for b in t.data_buffers],
        t.is_contiguous,
        t.nbytes,
        str(offsets.dtype),
        offsets.tolist(),
        payload.tobytes(),
        t.to_pylist(),
    )


def both(fn: Any) -> tuple[Any, Any]:
    return fn(N), fn(F)


def outcome(fn: Any, mod: Any) -> tuple[str, Any]:
    try:
        return ("ok", layout(fn(mod)))
    except Exception as exc:  # the class and the message are the contract here
        return ("raise", (type(exc), str(exc)))


def same_outcome(fn: Any) -> tuple[str, Any]:
    native, fallback = outcome(fn, N), outcome(fn, F)
    assert native == fallback
    return native


@SETTINGS
@given(STRINGS)
def test_construction_from_str_and_bytes(strings: list[str]) -> None:
    native, fallback = both(lambda m: m.StringTensor(strings))
    assert layout(native) == layout(fallback)
    assert native.to_pylist() == strings
    encoded = [s.encode() for s in strings]
    assert layout(N.StringTensor(encoded)) == layout(native)
    assert layout(F.StringTensor(encoded)) == layout(native)


@SETTINGS
@given(st.lists(st.binary(max_size=16), max_size=12))
def test_invalid_utf8_same_error(items: list[bytes]) -> None:
    kind, _ = same_outcome(lambda m: m.StringTensor(items))
    valid = True
    for item in items:
        try:
            item.decode("utf-8")
        except UnicodeDecodeError:
            valid = False
    assert (kind == "ok") == valid


@SETTINGS
@given(STRINGS, st.data())
def test_slices_take_filter_concat(strings: list[str], data: st.DataObject) -> None:
    n = len(strings)
    tn, tf = N.StringTensor(strings), F.StringTensor(strings)
    start = data.draw(st.integers(-n - 2, n + 2))
    stop = data.draw(st.integers(-n - 2, n + 2))
    step = data.draw(st.sampled_from([1, 1, 2, -1, 3]))
    key = slice(start, stop, step)
    assert layout(tn[key]) == layout(tf[key])
    assert tn[key].to_pylist() == strings[key]

    indices = data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=20)) if n else []
    assert layout(tn.take(indices)) == layout(tf.take(indices))
    assert tn.take(indices).to_pylist() == [strings[i] for i in indices]

    mask = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    assert layout(tn.filter(mask)) == layout(tf.filter(mask))
    assert tn.filter(mask).to_pylist() == [s for s, k in zip(strings, mask, strict=True) if k]

    cut = data.draw(st.integers(0, n))
    parts_n = [tn[:cut], N.StringTensor(), tn[cut:].take(list(range(n - cut)))]
    parts_f = [tf[:cut], F.StringTensor(), tf[cut:].take(list(range(n - cut)))]
    joined_n, joined_f = N.StringTensor.concat(parts_n), F.StringTensor.concat(parts_f)
    assert layout(joined_n) == layout(joined_f)
    assert joined_n.to_pylist() == strings
    assert layout(joined_n.compact()) == layout(joined_f.compact())


@SETTINGS
@given(STRINGS, STRINGS)
def test_equality(a: list[str], b: list[str]) -> None:
    expected = a == b
    assert (N.StringTensor(a) == N.StringTensor(b)) is expected
    assert (F.StringTensor(a) == F.StringTensor(b)) is expected
    assert (N.StringTensor(a) != N.StringTensor(b)) is not expected
    assert (N.StringTensor(a).take(list(range(len(a)))) == N.StringTensor(b)) is expected


@SETTINGS
@given(
    st.lists(st.integers(0, 40), min_size=1, max_size=8),
    st.binary(max_size=40),
    st.sampled_from(["int32", "uint32", "int64", "uint64"]),
)
def test_from_buffers_validates_alike(offsets: list[int], payload: bytes, dtype: str) -> None:
    kind, _ = same_outcome(
        lambda m: m.StringTensor.from_buffers(np.array(offsets, dtype=dtype), payload)
    )
    if kind == "ok":
        t = N.StringTensor.from_buffers(np.array(offsets, dtype=dtype), payload)
        assert [s.encode() for s in t.to_pylist()] == [
            payload[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)
        ]


ARROW_TYPES = ["string", "large_string", "string_view", "binary", "large_binary", "binary_view"]


@SETTINGS
@given(STRINGS, st.sampled_from(ARROW_TYPES), st.data())
def test_arrow_import_and_export(strings: list[str], type_name: str, data: st.DataObject) -> None:
    arr = pa.array(strings, type=getattr(pa, type_name)())
    offset = data.draw(st.integers(0, len(strings)))
    length = data.draw(st.integers(0, len(strings) - offset))
    arr = arr.slice(offset, length)
    tn, tf = N.StringTensor(arr), F.StringTensor(arr)
    assert layout(tn) == layout(tf)
    assert tn.to_pylist() == strings[offset : offset + length]
    for requested in (None, "utf8", "large_utf8"):
        en, ef = tn.to_arrow(requested), tf.to_arrow(requested)
        assert en.type == ef.type
        assert en.offset == ef.offset
        assert [b.to_pybytes() if b is not None else None for b in en.buffers()] == [
            b.to_pybytes() if b is not None else None for b in ef.buffers()
        ]
        en.validate(full=True)


@SETTINGS
@given(st.lists(STRINGS, max_size=4))
def test_chunked_arrow_import(chunks: list[list[str]]) -> None:
    chunked = pa.chunked_array([pa.array(c, type=pa.string()) for c in chunks], type=pa.string())
    tn, tf = N.StringTensor(chunked), F.StringTensor(chunked)
    assert layout(tn) == layout(tf)
    assert tn.to_pylist() == [s for c in chunks for s in c]


@SETTINGS
@given(st.lists(st.text(_chars, max_size=8), max_size=10), st.booleans())
def test_numpy_input(strings: list[str], as_bytes: bool) -> None:
    if as_bytes:
        items: Any = [s.encode() for s in strings]
        # NumPy 'S' strips trailing NULs, as it does on item access
        expected = [s.rstrip("\0") for s in strings]
    else:
        items = strings
        expected = [s.rstrip("\0") for s in strings]
    arr = np.array(items) if items else np.array([], dtype="S1" if as_bytes else "U1")
    tn, tf = N.StringTensor(arr), F.StringTensor(arr)
    assert layout(tn) == layout(tf)
    assert tn.to_pylist() == expected


def test_errors_have_the_same_class_and_message() -> None:
    cases = [
        lambda m: m.StringTensor(["a", "\ud800"]),
        lambda m: m.StringTensor(["a", 3]),
        lambda m: m.StringTensor("abc"),
        lambda m: m.StringTensor(["a", "b"]).take([2]),
        lambda m: m.StringTensor(["a", "b"]).filter([True]),
        lambda m: m.StringTensor(pa.array(["a", None])),
        lambda m: m.StringTensor(pa.array([1])),
        lambda m: m.StringTensor.from_buffers(np.array([0, 2, 1], dtype=np.int64), b"ab"),
        lambda m: m.StringTensor.from_buffers(np.array([0, 9], dtype=np.int64), b"ab"),
        lambda m: m.StringTensor(np.array(["\ud800"])),
    ]
    for case in cases:
        kind, _ = same_outcome(case)
        assert kind == "raise"

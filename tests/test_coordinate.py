"""StreamCoordinate: the 32-byte SPEC 3.1 value."""

from __future__ import annotations

import copy
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

import luminamoon.data as lmd

SC = lmd.StreamCoordinate
FIELDS = (
    "shard_id",
    "byte_offset",
    "row_group_idx",
    "page_idx",
    "row_offset_in_page",
    "global_row_idx",
)
BITS = {name: (64 if name in ("byte_offset", "global_row_idx") else 32) for name in FIELDS}
U32 = st.integers(0, 2**32 - 1)
U64 = st.integers(0, 2**64 - 1)
coordinates = st.tuples(U32, U64, U32, U32, U32, U64)


def test_defaults_are_zero() -> None:
    c = SC()
    assert all(getattr(c, name) == 0 for name in FIELDS)
    assert c.to_bytes() == bytes(32)


def test_positional_order_and_keywords() -> None:
    c = SC(1, 2, 3, 4, 5, 6)
    assert [getattr(c, name) for name in FIELDS] == [1, 2, 3, 4, 5, 6]
    assert SC(**dict(zip(FIELDS, (1, 2, 3, 4, 5, 6), strict=True))) == c
    assert SC(7, global_row_idx=9) == SC(7, 0, 0, 0, 0, 9)


def test_bytes_layout_matches_struct() -> None:
    values = (0xDEADBEEF, 0x0123456789ABCDEF, 7, 0, 0xFFFFFFFF, 2**64 - 1)
    raw = SC(*values).to_bytes()
    assert isinstance(raw, bytes)
    assert raw == struct.pack("<IQIIIQ", *values)
    assert len(raw) == 32


@given(coordinates)
def test_round_trip(values: tuple[int, int, int, int, int, int]) -> None:
    c = SC(*values)
    raw = c.to_bytes()
    assert raw == struct.pack("<IQIIIQ", *values)
    for form in (raw, bytearray(raw), memoryview(raw)):
        back = SC.from_bytes(form)
        assert back == c
        assert hash(back) == hash(c)


def test_extreme_values_accepted() -> None:
    c = SC(2**32 - 1, 2**64 - 1, 2**32 - 1, 2**32 - 1, 2**32 - 1, 2**64 - 1)
    assert SC.from_bytes(c.to_bytes()) == c
    assert c.to_bytes() == b"\xff" * 32


@pytest.mark.parametrize("length", [n for n in range(65) if n != 32])
def test_from_bytes_wrong_length(length: int) -> None:
    with pytest.raises(ValueError, match="expected 32 bytes"):
        SC.from_bytes(bytes(length))
    with pytest.raises(ValueError, match="expected 32 bytes"):
        SC.from_bytes(bytearray(length))


@pytest.mark.parametrize("data", ["x" * 32, 32, None, [0] * 32, 1.5])
def test_from_bytes_wrong_type(data: object) -> None:
    with pytest.raises(ValueError, match="expected 32 bytes"):
        SC.from_bytes(data)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", FIELDS)
@pytest.mark.parametrize("kind", ["negative", "too_big", "bool", "float", "str", "none"])
def test_field_range_errors(name: str, kind: str) -> None:
    maximum = 2 ** BITS[name] - 1
    bad = {
        "negative": -1,
        "too_big": maximum + 1,
        "bool": True,
        "float": 1.0,
        "str": "1",
        "none": None,
    }[kind]
    with pytest.raises(ValueError, match=name) as info:
        SC(**{name: bad})
    assert str(maximum) in str(info.value)  # the message names the range
    with pytest.raises(ValueError, match=name):
        SC().replace(**{name: bad})
    assert getattr(SC(**{name: maximum}), name) == maximum


@pytest.mark.parametrize("name", FIELDS)
def test_immutable(name: str) -> None:
    c = SC(1, 2, 3, 4, 5, 6)
    with pytest.raises(AttributeError):
        setattr(c, name, 0)
    with pytest.raises(AttributeError):
        delattr(c, name)
    assert c == SC(1, 2, 3, 4, 5, 6)


def test_no_new_attributes() -> None:
    c = SC()
    with pytest.raises(AttributeError):
        c.color = "red"  # type: ignore[attr-defined]


def test_equality_and_hash() -> None:
    a, b = SC(1, 2, 3, 4, 5, 6), SC(1, 2, 3, 4, 5, 6)
    assert a == b
    assert (a != b) is False  # __ne__ itself, not just the inverse of ==
    assert hash(a) == hash(b) == hash(a.to_bytes())
    for name in FIELDS:
        other = a.replace(**{name: getattr(a, name) + 1})
        assert a != other
        assert (a == other) is False
    assert len({a, b, SC()}) == 2
    assert a != a.to_bytes()
    assert a != (1, 2, 3, 4, 5, 6)
    assert a.__eq__(42) is NotImplemented


def test_repr() -> None:
    assert repr(SC()) == (
        "StreamCoordinate(shard_id=0, byte_offset=0, row_group_idx=0, page_idx=0, "
        "row_offset_in_page=0, global_row_idx=0)"
    )
    assert repr(SC(1, 2**64 - 1, 3, 4, 5, 6)) == (
        "StreamCoordinate(shard_id=1, byte_offset=18446744073709551615, row_group_idx=3, "
        "page_idx=4, row_offset_in_page=5, global_row_idx=6)"
    )


def test_replace() -> None:
    c = SC(1, 2, 3, 4, 5, 6)
    d = c.replace(byte_offset=99, global_row_idx=7)
    assert d == SC(1, 99, 3, 4, 5, 7)
    assert c == SC(1, 2, 3, 4, 5, 6)
    assert c.replace() == c


def test_replace_typo_suggests() -> None:
    with pytest.raises(lmd.ConfigError, match="did you mean 'byte_offset'"):
        SC().replace(byte_ofset=1)
    with pytest.raises(ValueError, match="did you mean 'shard_id'"):  # ConfigError is a ValueError
        SC().replace(shardid=1)


def test_copy_returns_equal_value() -> None:
    c = SC(1, 2, 3, 4, 5, 6)
    assert copy.copy(c) == c
    assert copy.deepcopy(c) == c

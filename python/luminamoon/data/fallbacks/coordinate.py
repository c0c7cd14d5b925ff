"""StreamCoordinate: the 32-byte position of a stream (SPEC 3.1), pure-Python backend.

Layout, little-endian and unpadded: shard_id u32, byte_offset u64, row_group_idx u32,
page_idx u32, row_offset_in_page u32, global_row_idx u64. The value is immutable so that it can
be hashed, shared between threads and handed out by a tracker without copying.
"""

from __future__ import annotations

import struct
from typing import Any, NoReturn

from .suggest import reject_unknown_options

__all__ = ["COORDINATE_SIZE", "StreamCoordinate"]

_LAYOUT = struct.Struct("<IQIIIQ")
COORDINATE_SIZE = _LAYOUT.size  # 32
assert COORDINATE_SIZE == 32

_U32_MAX = 2**32 - 1
_U64_MAX = 2**64 - 1

# (name, bits) in wire order; the order is also the positional-argument order.
_FIELDS: tuple[tuple[str, int], ...] = (
    ("shard_id", 32),
    ("byte_offset", 64),
    ("row_group_idx", 32),
    ("page_idx", 32),
    ("row_offset_in_page", 32),
    ("global_row_idx", 64),
)
_FIELD_NAMES: tuple[str, ...] = tuple(name for name, _ in _FIELDS)


def _check_field(name: str, bits: int, value: object) -> int:
    maximum = _U32_MAX if bits == 32 else _U64_MAX
    # bool is an int subclass but a coordinate field is never a truth value.
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= maximum:
        return int(value)
    shown = repr(value) if isinstance(value, (int, float)) else type(value).__name__
    raise ValueError(
        f"StreamCoordinate: {name} must be an int in [0, {maximum}] (u{bits}), got {shown}"
    )


class StreamCoordinate:
    """Where a stream stands: shard, byte offset or Parquet position, and rows scanned."""

    __slots__ = (
        "byte_offset",
        "global_row_idx",
        "page_idx",
        "row_group_idx",
        "row_offset_in_page",
        "shard_id",
    )

    shard_id: int
    byte_offset: int
    row_group_idx: int
    page_idx: int
    row_offset_in_page: int
    global_row_idx: int

    def __init__(  # noqa: PLR0917 - the documented signature is positional-or-keyword
        self,
        shard_id: int = 0,
        byte_offset: int = 0,
        row_group_idx: int = 0,
        page_idx: int = 0,
        row_offset_in_page: int = 0,
        global_row_idx: int = 0,
    ) -> None:
        values = (
            shard_id,
            byte_offset,
            row_group_idx,
            page_idx,
            row_offset_in_page,
            global_row_idx,
        )
        for (name, bits), value in zip(_FIELDS, values, strict=True):
            object.__setattr__(self, name, _check_field(name, bits, value))

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"StreamCoordinate is immutable; use replace({name}=...) for a copy")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("StreamCoordinate is immutable")

    def _values(self) -> tuple[int, int, int, int, int, int]:
        return (
            self.shard_id,
            self.byte_offset,
            self.row_group_idx,
            self.page_idx,
            self.row_offset_in_page,
            self.global_row_idx,
        )

    def to_bytes(self) -> bytes:
        """The 32-byte SPEC 3.1 encoding."""
        return _LAYOUT.pack(*self._values())

    @staticmethod
    def from_bytes(data: bytes | bytearray | memoryview) -> StreamCoordinate:
        """Decode the SPEC 3.1 encoding from any bytes-like object of exactly 32 bytes."""
        obj: object = data  # typed bytes-like, but checked at run time
        if isinstance(obj, str):
            raise ValueError(
                f"StreamCoordinate.from_bytes: expected {COORDINATE_SIZE} bytes, got str"
            )
        try:
            view = memoryview(data)
        except TypeError:
            raise ValueError(
                f"StreamCoordinate.from_bytes: expected {COORDINATE_SIZE} bytes (a bytes-like "
                f"object), got {type(data).__name__}"
            ) from None
        with view:
            if not view.c_contiguous:
                raise ValueError(
                    f"StreamCoordinate.from_bytes: expected {COORDINATE_SIZE} bytes in a "
                    "contiguous bytes-like object"
                )
            if view.nbytes != COORDINATE_SIZE:
                raise ValueError(
                    f"StreamCoordinate.from_bytes: expected {COORDINATE_SIZE} bytes, "
                    f"got {view.nbytes}"
                )
            raw = view.tobytes()
        return StreamCoordinate(*_LAYOUT.unpack(raw))

    def replace(self, **fields: Any) -> StreamCoordinate:
        """A copy with the named fields changed (validated like the constructor)."""
        reject_unknown_options("StreamCoordinate.replace", fields, _FIELD_NAMES, kind="field")
        values = dict(zip(_FIELD_NAMES, self._values(), strict=True))
        values.update(fields)
        return StreamCoordinate(**values)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StreamCoordinate):
            return NotImplemented
        return self._values() == other._values()

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, StreamCoordinate):
            return NotImplemented
        return self._values() != other._values()

    def __hash__(self) -> int:
        return hash(self.to_bytes())

    def __repr__(self) -> str:
        inner = ", ".join(
            f"{name}={value}" for name, value in zip(_FIELD_NAMES, self._values(), strict=True)
        )
        return f"StreamCoordinate({inner})"

    def __reduce__(self) -> tuple[type[StreamCoordinate], tuple[int, ...]]:
        # The default slot-state protocol would go through the blocked __setattr__; rebuild via
        # the constructor instead so copy/deepcopy/pickle (DataLoader workers) work.
        return (StreamCoordinate, self._values())

"""
LuminaMoon Data Engine native core (C++20). Use it through luminamoon.data.
"""

from collections.abc import Iterable, Sequence
import os
from typing import Any

def xxh3_64(data: str | bytes | bytearray | memoryview) -> int:
    """
    XXH3-64 (seed 0) of the UTF-8 bytes of a str, or of a bytes-like object.
    """

def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """
    The candidate closest to `name` by Damerau-Levenshtein distance, or None when none is close (distance > max(2, len(name) // 3)).
    """

class StreamCoordinate:
    """
    The 32-byte position of a stream (SPEC 3.1): immutable, little-endian on the wire.
    """

    def __init__(
        self,
        shard_id: int = 0,
        byte_offset: int = 0,
        row_group_idx: int = 0,
        page_idx: int = 0,
        row_offset_in_page: int = 0,
        global_row_idx: int = 0,
    ) -> None: ...
    @property
    def shard_id(self) -> int: ...
    @property
    def byte_offset(self) -> int: ...
    @property
    def row_group_idx(self) -> int: ...
    @property
    def page_idx(self) -> int: ...
    @property
    def row_offset_in_page(self) -> int: ...
    @property
    def global_row_idx(self) -> int: ...
    def to_bytes(self) -> bytes:
        """The 32-byte little-endian encoding."""

    @staticmethod
    def from_bytes(data: bytes | bytearray | memoryview, /) -> StreamCoordinate:
        """Decode 32 bytes; any other length or type raises ValueError."""

    def replace(self, **fields: int) -> StreamCoordinate:
        """A copy with the given fields changed."""

    def __eq__(self, other: object, /) -> bool: ...
    def __ne__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __repr__(self) -> str: ...
    def __getstate__(self) -> bytes: ...
    def __setstate__(self, state: bytes, /) -> None: ...

class StateTracker:
    """
    The 128-byte ping-pong .meta checkpoint (SPEC 3.2) and its .dedup WAL (SPEC 3.3).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        durable: bool = True,
        **options: object,
    ) -> None: ...
    @property
    def path(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    @property
    def epoch(self) -> int: ...
    @property
    def committed_batch_id(self) -> int: ...
    @property
    def coordinate(self) -> StreamCoordinate: ...
    @property
    def dedup_count(self) -> int: ...
    @property
    def active_slot(self) -> str | None: ...
    @property
    def has_pending(self) -> bool: ...
    def read(self) -> tuple[int, int, StreamCoordinate, int]:
        """
        (epoch, committed_batch_id, coordinate, dedup_count) of the active slot.
        """

    def update(self, batch_id: int, coordinate: StreamCoordinate) -> None:
        """Stage the position after `batch_id` in RAM; commit() makes it durable."""

    def commit(self) -> int:
        """
        WAL append + fsync, next slot + fsync, then RAM (SPEC 3.3). Returns the new epoch.
        """

    def rollback(self) -> None:
        """Drop everything staged since the last commit."""

    def close(self) -> None: ...
    def __enter__(self) -> StateTracker: ...
    def __exit__(self, exc_type: object, exc: object, tb: object, /) -> None: ...
    def __repr__(self) -> str: ...

class StreamDeduplicator:
    """
    Exact dedup by XXH3-64 in SwissTable sets, staged until commit (SPEC 3.3).
    """

    def __init__(
        self, tracker: StateTracker | None = None, *, threads: int = 0, **options: object
    ) -> None: ...
    def is_unique(self, text: str | bytes | bytearray | memoryview) -> bool:
        """True (and staged) when the document was not seen before."""

    def contains(self, text: str | bytes | bytearray | memoryview) -> bool:
        """Whether the document is committed or staged; stages nothing."""

    def filter_batch(
        self, texts: Sequence[str | bytes | bytearray | memoryview] | Any
    ) -> list[bool]:
        """
        Keep mask: first occurrence wins, also within the batch; kept documents are staged.
        """

    def commit(self) -> None:
        """
        Attached: the tracker's commit (WAL, slot, RAM). Detached: staged -> committed.
        """

    def rollback(self) -> None:
        """Attached: the tracker's rollback. Detached: drop staged hashes."""

    @property
    def staged_count(self) -> int: ...
    @property
    def committed_count(self) -> int: ...
    @property
    def tracker(self) -> StateTracker | None: ...
    def memory_bytes(self) -> int:
        """Bytes held by the hash sets and the staging log (capacity, not size)."""

    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...

"""Shared fixtures. Every test uses the public API (``import luminamoon.data as lmd``) so the
same suite runs on the native backend and, with ``LUMINAMOON_FORCE_FALLBACK=1``, the fallback."""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import luminamoon.data as lmd

# Golden encoders written straight from SPEC 3.1-3.3, independent of either backend.
COORD = struct.Struct("<IQIIIQ")
SLOT_BODY = struct.Struct("<4sIQQ32sI")

GoldenSlot = Callable[[int, int, Sequence[int], int], bytes]


def golden_slot_bytes(
    epoch: int, batch_id: int, coordinate: Sequence[int], dedup_count: int
) -> bytes:
    body = SLOT_BODY.pack(b"LMDL", 1, epoch, batch_id, COORD.pack(*coordinate), dedup_count)
    return body + struct.pack("<I", zlib.crc32(body))


@pytest.fixture
def tmp_meta(tmp_path: Path) -> Path:
    """Path of a not-yet-existing ``.meta`` checkpoint in a fresh directory."""
    return tmp_path / "run.meta"


@pytest.fixture
def golden_slot() -> GoldenSlot:
    """``golden_slot(epoch, batch_id, coordinate_fields, dedup_count) -> 64 bytes``."""
    return golden_slot_bytes


@pytest.fixture
def subprocess_env() -> dict[str, str]:
    """Environment for a child ``python -c`` that imports the very same ``luminamoon.data``."""
    env = os.environ.copy()
    root = str(Path(lmd.__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env

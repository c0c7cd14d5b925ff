"""Pure-Python backend: the same API, answers and files as the native module (``_native``).

Used when the native module is not built for this interpreter, or when
``LUMINAMOON_FORCE_FALLBACK=1``; it is also the reference the native module is tested against.
"""

from __future__ import annotations

from .coordinate import StreamCoordinate
from .dedup import StreamDeduplicator, xxh3_64
from .suggest import did_you_mean
from .tracker import StateTracker

__all__ = ["StateTracker", "StreamCoordinate", "StreamDeduplicator", "did_you_mean", "xxh3_64"]

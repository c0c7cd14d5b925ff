"""LuminaMoon Data Engine: clean, deduplicated, PII-free training data with exact resume.

The public API. Every class here has a native (C++) and a pure-Python implementation with the
same signature, the same answers and byte-identical files; ``BACKEND`` says which one is live.
"""

from __future__ import annotations

from ._ffi import BACKEND, impl
from .errors import CheckpointLockedError, ConfigError, CorruptCheckpointError, LuminaMoonError

StreamCoordinate = impl.StreamCoordinate
StateTracker = impl.StateTracker
StreamDeduplicator = impl.StreamDeduplicator
xxh3_64 = impl.xxh3_64
did_you_mean = impl.did_you_mean

__version__ = "0.1.0"

__all__ = [
    "BACKEND",
    "CheckpointLockedError",
    "ConfigError",
    "CorruptCheckpointError",
    "LuminaMoonError",
    "StateTracker",
    "StreamCoordinate",
    "StreamDeduplicator",
    "__version__",
    "did_you_mean",
    "xxh3_64",
]

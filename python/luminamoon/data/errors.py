"""Exception hierarchy shared by both backends.

The native module raises these very classes (its exception translator imports this module), so
``except CorruptCheckpointError`` works the same whichever backend is live.
"""

from __future__ import annotations

__all__ = [
    "CheckpointLockedError",
    "ConfigError",
    "CorruptCheckpointError",
    "LuminaMoonError",
    "MalformedInputError",
    "RunError",
    "RunInterruptedError",
]


class LuminaMoonError(Exception):
    """Base class of every error the engine raises on purpose."""


class CorruptCheckpointError(LuminaMoonError):
    """A ``.meta`` checkpoint or its ``.dedup`` WAL cannot be trusted.

    Raised instead of silently restarting from zero: a training run must never lose its
    position without a human deciding so.
    """


class CheckpointLockedError(LuminaMoonError):
    """Another writer holds the lock on the same ``.meta`` file."""


class ConfigError(LuminaMoonError, ValueError):
    """An unknown option, preset or field name; the message suggests the closest known one."""


class MalformedInputError(LuminaMoonError, ValueError):
    """A malformed input record or shard, raised in strict mode.

    The message says what is wrong and where: shard index and path, line number and byte
    offset, and the field path when one is involved. Outside strict mode such records are
    counted and reported instead.
    """


class RunError(LuminaMoonError):
    """``luminamoon-data run`` cannot start or go on: bad input, an unusable output directory,
    a stored run with another configuration. The message says what, where and what to do."""


class RunInterruptedError(LuminaMoonError):
    """Ctrl-C or SIGTERM stopped ``luminamoon-data run`` at its last commit; the same command
    resumes it."""

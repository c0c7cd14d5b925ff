"""Copying or pickling a stateful fallback object raises TypeError, like the native classes.

A copy would share file descriptors, locks, staged state or a half-read stream with the
original (a copied StateTracker closed the original's descriptors when it was collected), so
every class whose native twin refuses ``copy``/``pickle`` refuses it here too, with the same
message (tests/test_no_copy.py checks both backends class by class).
"""

from __future__ import annotations

from typing import NoReturn, SupportsIndex

__all__ = ["NoCopy", "refuse_copy"]


def refuse_copy(obj: object) -> TypeError:
    """The TypeError of ``copy.copy``/``copy.deepcopy``/``pickle`` on a stateful object.

    Like the native classes: a copy would share file descriptors, locks and staged state, so
    every stateful class of both backends refuses to be copied or pickled."""
    return TypeError(f"cannot pickle '{type(obj).__name__}' object")


class NoCopy:
    """Mixin: copying or pickling raises TypeError (see ``refuse_copy``)."""

    __slots__ = ()

    def __copy__(self) -> NoReturn:
        raise refuse_copy(self)

    def __deepcopy__(self, memo: object) -> NoReturn:
        raise refuse_copy(self)

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        raise refuse_copy(self)

    def __reduce__(self) -> NoReturn:
        raise refuse_copy(self)

    def __getstate__(self) -> NoReturn:
        raise refuse_copy(self)

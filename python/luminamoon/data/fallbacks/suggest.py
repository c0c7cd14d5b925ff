""" "Did you mean ...?" suggestions for unknown option, field and format names (SPEC 5).

Distances are Damerau-Levenshtein in its optimal-string-alignment form (an adjacent
transposition costs 1, no substring is edited twice), which is what the native module computes
too, so both backends suggest the same name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import ConfigError

__all__ = ["damerau_levenshtein", "did_you_mean", "reject_unknown_options"]


def damerau_levenshtein(a: str, b: str) -> int:
    """Optimal-string-alignment distance between ``a`` and ``b`` (code point by code point)."""
    if a == b:
        return 0
    if not a:
        return len(b)
    if not b:
        return len(a)
    # Three rolling rows: the transposition rule looks two rows back.
    before_prev: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        ca = a[i - 1]
        for j in range(1, len(b) + 1):
            cb = b[j - 1]
            cost = 0 if ca == cb else 1
            best = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, before_prev[j - 2] + 1)
            cur[j] = best
        before_prev, prev = prev, cur
    return prev[len(b)]


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``name``, or ``None`` when nothing is close enough.

    Ties go to the earlier candidate. "Close enough" is a distance of at most
    ``max(2, len(name) // 3)``: two slips in a short name, proportionally more in a long one.
    """
    limit = max(2, len(name) // 3)
    best: str | None = None
    best_distance = limit + 1
    for candidate in candidates:
        distance = damerau_levenshtein(name, candidate)
        if distance < best_distance:
            best, best_distance = candidate, distance
    return best


def reject_unknown_options(
    owner: str, given: Iterable[str], known: Sequence[str], *, kind: str = "option"
) -> None:
    """Raise ``ConfigError`` for the first name in ``given`` that is not in ``known``.

    ``owner`` prefixes the message (``"StateTracker"``), ``kind`` names what the names are
    (``"option"``, ``"field"``). The message ends with the suggestion when there is one, else it
    lists every valid name so the user never has to go and look them up.
    """
    known_set = set(known)
    for name in given:
        if name in known_set:
            continue
        best = did_you_mean(name, known)
        if best is not None:
            raise ConfigError(f"{owner}: unknown {kind} '{name}'; did you mean '{best}'?")
        valid = ", ".join(known) if known else "(none)"
        raise ConfigError(f"{owner}: unknown {kind} '{name}'; valid {kind}s: {valid}")

"""Timing, memory and peer helpers shared by the bench/*.py scripts.

Every script times its jobs the same way: the garbage collector collected and then off around a
timed call (its pauses would land on whichever job happened to allocate last), wall time and this
process's CPU time read around the call (CPU time does not count the time the process waits for
a core on a shared machine), and, when several jobs are compared, one run of each per round
(interleaved) so that a load change on a noisy machine hits all of them alike. The median of the
rounds is the figure reported.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

__all__ = [
    "Samples",
    "gc_paused",
    "peer_xxh3_dedup",
    "rss_bytes",
    "time_interleaved",
    "timed",
]

T = TypeVar("T")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Collect, then keep the garbage collector off for the block."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@dataclass
class Samples:
    """The wall and CPU seconds of every run of one job."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    @property
    def median_wall(self) -> float:
        return statistics.median(self.wall)

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpu)


def time_interleaved(
    jobs: Mapping[str, Callable[[], T]],
    rounds: int | Mapping[str, int],
    check: Callable[[str, T], None] | None = None,
    after_round: Callable[[int, int], None] | None = None,
) -> dict[str, Samples]:
    """Wall and CPU seconds of each job, one run of each per round, the collector paused.

    ``rounds`` is the number of rounds, or the number of runs of each job (a job with fewer
    runs sits out the last rounds). Each result goes to ``check(label, result)`` (untimed) and
    is then freed (untimed). ``after_round(round, rounds)`` is called after each round.
    """
    runs = rounds if isinstance(rounds, Mapping) else dict.fromkeys(jobs, rounds)
    total = max(runs.values(), default=0)
    samples = {label: Samples() for label in jobs}
    for round_ in range(total):
        for label, job in jobs.items():
            if round_ >= runs[label]:
                continue
            with gc_paused():
                start, start_cpu = time.perf_counter(), time.process_time()
                result = job()
                samples[label].wall.append(time.perf_counter() - start)
                samples[label].cpu.append(time.process_time() - start_cpu)
            if check is not None:
                check(label, result)
            del result
        if after_round is not None:
            after_round(round_, total)
    return samples


def timed(fn: Callable[[], T], repeats: int) -> tuple[float, T]:
    """Median wall seconds of ``repeats`` runs of ``fn`` (collector paused), and its last result."""
    last: list[T] = []

    def keep(_: str, result: T) -> None:
        last[:] = [result]

    samples = time_interleaved({"job": fn}, repeats, keep)["job"]
    return samples.median_wall, last[0]


def rss_bytes() -> int:
    """This process's resident set size (VmRSS)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def peer_xxh3_dedup(texts: list[str]) -> list[bool]:
    """Exact dedup as a Python user writes it: XXH3-64 of the UTF-8 bytes in a set, first
    occurrence wins (the peer of StreamDeduplicator)."""
    import xxhash  # only the dedup benchmarks need it

    seen: set[int] = set()
    keep: list[bool] = []
    digest = xxhash.xxh3_64_intdigest
    add = seen.add
    append = keep.append
    for s in texts:
        h = digest(s.encode())
        if h in seen:
            append(False)
        else:
            add(h)
            append(True)
    return keep

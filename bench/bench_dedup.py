#!/usr/bin/env python3
"""Exact-dedup benchmark: luminamoon.data beside plain-Python peers, in one process.

Sections (see docs/benchmarks.md for the method and the figures measured):

1. ``StreamDeduplicator.filter_batch`` throughput on a short (~100 B) and a long (~2 KB) corpus,
   each given as ``list[str]`` and as pyarrow ``utf8`` / ``large_utf8`` / ``utf8_view`` arrays.
   Ours: a fresh deduplicator per repetition, one ``filter_batch`` call on the whole input,
   default threads and ``threads=1``. Peer: the same job in Python (``xxhash`` + a ``set``, first
   occurrence wins); for Arrow input the peer pays ``to_pylist()`` first. Every keep mask is
   checked against the generator's ground truth, so ours and the peer provably agree.
2. Memory per committed hash at 10M hashes: ``memory_bytes()`` and the RSS delta, against the
   RSS delta of a Python ``set`` of 10M ints.
3. Commit latency of ``StateTracker.update`` + ``commit`` with 1,000 staged hashes, durable and
   not, both backends, against a minimal append + fsync + pwrite + fsync protocol in Python.

Run: ``.venv/bin/python bench/bench_dedup.py`` (``--quick`` for a smoke run, ``--json PATH`` to
save the results). Medians over repeats; the garbage collector is off inside timed regions.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import xxhash

import luminamoon.data as lmd
import results_json
from _common import peer_xxh3_dedup, rss_bytes, time_interleaved
from luminamoon.data import fallbacks

REPO_ROOT = Path(__file__).resolve().parents[1]
ALPHABET = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz      ", dtype=np.uint8)
TEXT_LEN = 1 << 20  # the random text every document is sliced from
DUP_FRACTION = 0.2
MB = 1e6
PEER = "peer xxhash+set"
FALLBACK = "fallback (pure Python)"
STARTED = time.perf_counter()

# A timed callable returns the keep mask plus anything whose teardown must stay untimed.
Job = Callable[[], tuple[list[bool], object]]


class Dedup(Protocol):
    def filter_batch(self, texts: Any) -> list[bool]: ...


# -- corpus --------------------------------------------------------------------------------------


@dataclass
class Corpus:
    name: str
    texts: list[str]
    expected: list[bool]  # ground truth: False exactly for the generated duplicates
    nbytes: int

    @property
    def unique(self) -> int:
        return sum(self.expected)


def make_corpus(name: str, docs: int, mean_len: int, seed: int) -> Corpus:
    """ASCII documents of mean_len +-25% bytes; ~DUP_FRACTION of them copy an earlier one.

    A unique document is ``"%08d " % index`` + a slice of a seeded random text (so no two are
    equal); a duplicate is an equal string in its own object, as a real reader would produce.
    """
    rng = np.random.default_rng(seed)
    text = ALPHABET[rng.integers(0, len(ALPHABET), size=TEXT_LEN)].tobytes().decode("ascii")
    lengths = rng.integers(mean_len * 3 // 4, mean_len * 5 // 4 + 1, size=docs).tolist()
    offsets = rng.integers(0, TEXT_LEN - 2 * mean_len, size=docs).tolist()
    is_dup = rng.random(docs) < DUP_FRACTION
    is_dup[0] = False
    sources = (rng.random(docs) * np.arange(docs)).astype(np.int64).tolist()
    texts: list[str] = []
    append = texts.append
    for i, (dup, offset, length, source) in enumerate(
        zip(is_dup.tolist(), offsets, lengths, sources, strict=True)
    ):
        if dup:
            original = texts[source]
            append(original[:-1] + original[-1])  # equal bytes, a distinct object
        else:
            append(f"{i:08d} " + text[offset : offset + length - 9])
    nbytes = sum(map(len, texts))  # ASCII: characters == UTF-8 bytes
    return Corpus(name, texts, (~is_dup).tolist(), nbytes)


def arrow_forms(texts: list[str]) -> Iterator[tuple[str, Any]]:
    """Yields (label, array) for utf8, large_utf8 and utf8_view (when pyarrow has it).

    The last two are casts of the ``utf8`` array that share its character buffer; one cast is
    alive at a time. Building the arrays is not timed: the input arrives as Arrow.
    """
    base = pa.array(texts, type=pa.string())
    yield "pa.utf8", base
    targets = [("pa.large_utf8", pa.large_string())]
    if hasattr(pa, "string_view"):  # pyarrow >= 16
        targets.append(("pa.utf8_view", pa.string_view()))
    for label, arrow_type in targets:
        converted = base.cast(arrow_type)
        yield label, converted
        del converted


# -- timing --------------------------------------------------------------------------------------


def time_round_robin(
    jobs: list[tuple[str, Job]], repeats: int, expected: list[bool], what: str
) -> dict[str, list[float]]:
    """Seconds per repetition of every job, interleaved (one run of each per round) so that a
    load change on a noisy machine hits all of them alike. Every keep mask must equal
    ``expected``: ours, the fallback and the peer are checked against the same ground truth."""

    def check(label: str, result: tuple[list[bool], object]) -> None:
        if result[0] != expected:
            raise AssertionError(f"{what} {label}: keep mask differs from the ground truth")

    times = time_interleaved(dict(jobs), repeats, check)
    return {label: samples.wall for label, samples in times.items()}


def ours_job(texts: Any, threads: int) -> Job:
    def job() -> tuple[list[bool], object]:
        return lmd.StreamDeduplicator(threads=threads).filter_batch(texts), None

    return job


def fallback_job(texts: list[str]) -> Job:
    def job() -> tuple[list[bool], object]:
        dedup: Dedup = fallbacks.StreamDeduplicator()
        return dedup.filter_batch(texts), None

    return job


def peer_list_job(texts: list[str]) -> Job:
    def job() -> tuple[list[bool], object]:
        return peer_xxh3_dedup(texts), None

    return job


def peer_arrow_job(array: Any) -> Job:
    def job() -> tuple[list[bool], object]:
        texts = array.to_pylist()  # conversion timed; freeing the list is not
        return peer_xxh3_dedup(texts), texts

    return job


@dataclass
class ThroughputRow:
    corpus: str
    input: str
    impl: str
    repeats: int
    median_s: float
    min_s: float
    docs_per_s: float
    mb_per_s: float
    ratio_vs_peer: float | None  # ours docs/s / peer docs/s on the same input (None: the peer)


def throughput(
    corpus: Corpus, repeats: int, threads_default: int, with_fallback: bool
) -> list[ThroughputRow]:
    rows: list[ThroughputRow] = []
    n = len(corpus.texts)

    def record(input_label: str, impl: str, times: list[float], peer: float | None) -> None:
        median = statistics.median(times)
        rows.append(
            ThroughputRow(
                corpus=corpus.name,
                input=input_label,
                impl=impl,
                repeats=len(times),
                median_s=median,
                min_s=min(times),
                docs_per_s=n / median,
                mb_per_s=corpus.nbytes / median / MB,
                ratio_vs_peer=None if peer is None else peer / median,
            )
        )
        progress(f"  {corpus.name:5} {input_label:13} {impl:22} {n / median / 1e6:7.2f} M docs/s")

    def run_input(
        input_label: str, texts: Any, peer_job: Job, extra: list[tuple[str, Job]]
    ) -> None:
        jobs = [
            (PEER, peer_job),
            (f"ours threads=0 (={threads_default})", ours_job(texts, 0)),
            ("ours threads=1", ours_job(texts, 1)),
            *extra,
        ]
        times = time_round_robin(jobs, repeats, corpus.expected, f"{corpus.name}/{input_label}")
        peer = statistics.median(times[PEER])
        for label, _ in jobs:
            record(input_label, label, times[label], None if label == PEER else peer)

    fallback = [(FALLBACK, fallback_job(corpus.texts))] if with_fallback else []
    run_input("list[str]", corpus.texts, peer_list_job(corpus.texts), fallback)
    for label, array in arrow_forms(corpus.texts):
        run_input(label, array, peer_arrow_job(array), [])
    return rows


# -- memory --------------------------------------------------------------------------------------


@dataclass
class MemoryResult:
    hashes: int
    ours_memory_bytes: int
    ours_rss_delta: int
    peer_rss_delta: int
    peer_set_sizeof: int

    @property
    def ours_bytes_per_hash(self) -> float:
        return self.ours_memory_bytes / self.hashes

    @property
    def ours_rss_per_hash(self) -> float:
        return self.ours_rss_delta / self.hashes

    @property
    def peer_rss_per_hash(self) -> float:
        return self.peer_rss_delta / self.hashes


def binary_chunk(start: int, count: int) -> Any:
    """``count`` distinct 8-byte binary documents (the little-endian u64 start..start+count)."""
    values = np.arange(start, start + count, dtype="<u8")
    offsets = np.arange(0, 8 * (count + 1), 8, dtype="<i4")
    return pa.Array.from_buffers(
        pa.binary(), count, [None, pa.py_buffer(offsets), pa.py_buffer(values)]
    )


def memory(hashes: int, chunk: int, seed: int) -> MemoryResult:
    """Ours first, then the peer, both before any corpus exists (a clean heap)."""
    gc.collect()
    before = rss_bytes()
    dedup = lmd.StreamDeduplicator()
    for start in range(0, hashes, chunk):
        count = min(chunk, hashes - start)
        keep = dedup.filter_batch(binary_chunk(start, count))
        if not all(keep):
            raise AssertionError("memory: a distinct document was reported as a duplicate")
        dedup.commit()  # detached: staged -> committed in RAM
        del keep
    if dedup.committed_count != hashes:
        raise AssertionError(f"memory: committed {dedup.committed_count} != {hashes}")
    gc.collect()
    ours_rss = rss_bytes() - before
    ours_mem = dedup.memory_bytes()
    del dedup

    gc.collect()
    before = rss_bytes()
    values = np.random.default_rng(seed).integers(0, 2**64, size=hashes, dtype=np.uint64)
    ints = values.tolist()  # 10M Python ints of the size a 64-bit hash needs
    del values
    peer: set[int] = set(ints)
    del ints
    gc.collect()
    peer_rss = rss_bytes() - before
    sizeof = sys.getsizeof(peer)
    if len(peer) < hashes * 0.999:
        raise AssertionError("memory: too many random collisions")
    del peer
    gc.collect()
    return MemoryResult(hashes, ours_mem, ours_rss, peer_rss, sizeof)


# -- commit latency ------------------------------------------------------------------------------


@dataclass
class LatencyRow:
    impl: str
    durable: str
    commits: int
    median_ms: float
    p99_ms: float
    max_ms: float


def latency_row(impl: str, durable: str, samples_ns: list[int]) -> LatencyRow:
    ordered = sorted(samples_ns)
    p99 = ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]  # nearest rank
    row = LatencyRow(
        impl=impl,
        durable=durable,
        commits=len(ordered),
        median_ms=statistics.median(ordered) / 1e6,
        p99_ms=p99 / 1e6,
        max_ms=ordered[-1] / 1e6,
    )
    progress(f"  {impl:22} {durable:22} median {row.median_ms:8.3f} ms  p99 {row.p99_ms:8.3f} ms")
    return row


def commit_batches(commits: int, batch: int) -> list[list[str]]:
    return [[f"commit-{k:06d}-document-{j:06d}" for j in range(batch)] for k in range(commits)]


class TrackerCase:
    """A StateTracker with an attached deduplicator; one step = stage a batch (untimed), then
    ``update`` + ``commit`` (timed)."""

    def __init__(
        self, module: Any, directory: Path, durable: bool, batches: list[list[str]]
    ) -> None:
        self.module = module
        self.batches = batches
        self.tracker = module.StateTracker(str(directory / "state.meta"), durable=durable)
        self.dedup = module.StreamDeduplicator(self.tracker)
        self.rows = 0

    def step(self, k: int) -> int:
        batch = self.batches[k]
        if not all(self.dedup.filter_batch(batch)):
            raise AssertionError("commit: a new document was reported as a duplicate")
        self.rows += len(batch)
        coordinate = self.module.StreamCoordinate(global_row_idx=self.rows)
        start = time.perf_counter_ns()
        self.tracker.update(k + 1, coordinate)
        self.tracker.commit()
        return time.perf_counter_ns() - start

    def check(self) -> None:
        if self.tracker.dedup_count != self.rows or self.tracker.epoch != len(self.batches):
            raise AssertionError("commit: the tracker did not count every commit")

    def close(self) -> None:
        self.tracker.close()


class PeerCase:
    """The minimal equivalent protocol in plain Python: append the 8-byte hashes to a log, sync,
    pwrite a 64-byte slot (alternating between two), sync."""

    def __init__(self, directory: Path, wal_bytes: int, sync: Callable[[int], None] | None) -> None:
        self.payload = bytes(range(256)) * (wal_bytes // 256) + bytes(wal_bytes % 256)
        self.slot = bytes(range(64))
        self.sync = sync
        flags = os.O_CLOEXEC | os.O_CREAT
        self.wal = os.open(directory / "peer.wal", flags | os.O_WRONLY | os.O_APPEND, 0o644)
        self.meta = os.open(directory / "peer.meta", flags | os.O_RDWR, 0o644)
        os.pwrite(self.meta, bytes(128), 0)
        os.fsync(self.meta)

    def step(self, k: int) -> int:
        start = time.perf_counter_ns()
        if os.write(self.wal, self.payload) != len(self.payload):
            raise OSError("peer: short write")
        if self.sync is not None:
            self.sync(self.wal)
        os.pwrite(self.meta, self.slot, 64 * (k % 2))
        if self.sync is not None:
            self.sync(self.meta)
        return time.perf_counter_ns() - start

    def close(self) -> None:
        os.close(self.wal)
        os.close(self.meta)


def commit_latency(root: Path, commits: int, batch: int) -> list[LatencyRow]:
    """All cases run interleaved (commit k of every case, then commit k + 1), so a change in
    the disk's behaviour during the run hits them alike."""
    batches = commit_batches(commits, batch)
    cases: list[tuple[str, str, TrackerCase | PeerCase]] = []

    def directory(prefix: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=prefix, dir=root))

    try:
        for impl, module in (("ours (native)", lmd), (FALLBACK, fallbacks)):
            for durable in (True, False):
                case = TrackerCase(module, directory("tracker-"), durable, batches)
                cases.append((impl, f"durable={durable}", case))
        peer_syncs: list[tuple[str, Callable[[int], None] | None]] = [
            ("os.fsync", os.fsync),
            ("os.fdatasync", os.fdatasync),
            ("no sync", None),
        ]
        for label, sync in peer_syncs:
            cases.append(
                ("peer append+pwrite", label, PeerCase(directory("peer-"), batch * 8, sync))
            )
        samples: list[list[int]] = [[] for _ in cases]
        for k in range(commits):
            for i, (_, _, stepper) in enumerate(cases):
                samples[i].append(stepper.step(k))
        for _, _, stepper in cases:
            if isinstance(stepper, TrackerCase):
                stepper.check()
    finally:
        for _, _, stepper in cases:
            stepper.close()
    return [latency_row(impl, mode, s) for (impl, mode, _), s in zip(cases, samples, strict=True)]


# -- machine and output --------------------------------------------------------------------------


def describe(corpus: Corpus, config: dict[str, Any]) -> None:
    n = len(corpus.texts)
    config[f"{corpus.name}_corpus"] = {"docs": n, "unique": corpus.unique, "bytes": corpus.nbytes}
    progress(
        f"  {corpus.name} corpus: {n:,} docs, {corpus.unique:,} unique "
        f"({100 * (n - corpus.unique) / n:.1f}% duplicates), {corpus.nbytes / MB:,.1f} MB"
    )


def progress(message: str) -> None:
    print(f"[{time.perf_counter() - STARTED:6.1f} s] {message}", file=sys.stderr, flush=True)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def mem_total_gib() -> float:
    with open("/proc/meminfo", encoding="ascii") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    return float("nan")


def filesystem_of(path: Path) -> str:
    """``device (fstype) on mountpoint`` for the mount holding ``path``."""
    real = os.path.realpath(path)
    best = ("?", "?", "")
    with open("/proc/self/mounts", encoding="utf-8") as mounts:
        for line in mounts:
            device, mountpoint, fstype = line.split()[:3]
            inside = real == mountpoint or real.startswith(mountpoint.rstrip("/") + "/")
            if inside and len(mountpoint) >= len(best[2]):
                best = (device, fstype, mountpoint)
    return f"{best[0]} ({best[1]}) on {best[2]}"


def machine_info() -> dict[str, Any]:
    return {
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "mem_total_gib": round(mem_total_gib(), 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "backend": lmd.BACKEND,
        "luminamoon": lmd.__version__,
        "pyarrow": pa.__version__,
        "xxhash": xxhash.VERSION,
        "numpy": np.__version__,
        "loadavg_start": os.getloadavg(),
    }


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    right = [i > 0 and all(_numeric(r[i]) for r in rows) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        parts = [
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        ]
        return "| " + " | ".join(parts) + " |"

    rule = (
        "|"
        + "|".join(
            ("-" * (w + 1) + ":") if r else "-" * (w + 2)
            for w, r in zip(widths, right, strict=True)
        )
        + "|"
    )
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def _numeric(cell: str) -> bool:
    return cell == "-" or cell[:1].isdigit()


def duplicates_note(config: dict[str, Any]) -> str:
    parts = []
    for name in ("short", "long"):
        corpus = config.get(f"{name}_corpus")
        if corpus:
            share = 100 * (corpus["docs"] - corpus["unique"]) / corpus["docs"]
            mean = corpus["bytes"] / corpus["docs"]
            parts.append(f"{name}: mean {mean:,.0f} B, {share:.1f}% duplicates")
    return "; ".join(parts)


def report(
    info: dict[str, Any],
    config: dict[str, Any],
    rows: list[ThroughputRow],
    mem: MemoryResult,
    latency: list[LatencyRow],
) -> str:
    out: list[str] = []
    out.append("Machine")
    out.append(
        table(
            ["item", "value"],
            [
                ["CPU", str(info["cpu"])],
                ["cores (os.cpu_count / usable)", f"{info['cpu_count']} / {info['cpus_usable']}"],
                ["memory", f"{info['mem_total_gib']} GiB"],
                ["Python", f"{info['python']} ({info['platform']})"],
                ["backend", str(info["backend"])],
                [
                    "pyarrow / xxhash / numpy",
                    f"{info['pyarrow']} / {info['xxhash']} / {info['numpy']}",
                ],
                [
                    "load average start / end",
                    f"{info['loadavg_start'][0]:.2f} / {info['loadavg_end'][0]:.2f}",
                ],
                [
                    "total wall time / peak RSS",
                    f"{info['wall_s']:.0f} s / {info['peak_rss_gib']} GiB",
                ],
            ],
        )
    )
    out.append("")
    out.append(
        f"1. filter_batch throughput: {config['docs']:,} docs per corpus "
        f"({duplicates_note(config)}); "
        f"median of {config['repeats']} (short) / {config['long_repeats']} (long) repeats; "
        "ratio = ours docs/s / peer docs/s on the same input"
    )
    out.append(
        table(
            ["corpus", "input", "implementation", "docs/s (median)", "MB/s", "ours/peer"],
            [
                [
                    r.corpus,
                    r.input,
                    r.impl,
                    f"{r.docs_per_s / 1e6:.2f} M",
                    f"{r.mb_per_s:,.0f}",
                    "-" if r.ratio_vs_peer is None else f"{r.ratio_vs_peer:.2f}x",
                ]
                for r in rows
            ],
        )
    )
    out.append("")
    out.append(f"2. Memory per committed hash at {mem.hashes:,} hashes")
    out.append(
        table(
            ["implementation", "measure", "bytes/hash"],
            [
                ["ours", "memory_bytes() / hashes", f"{mem.ours_bytes_per_hash:.1f}"],
                ["ours", "RSS delta / hashes", f"{mem.ours_rss_per_hash:.1f}"],
                ["peer set[int]", "RSS delta / hashes", f"{mem.peer_rss_per_hash:.1f}"],
                [
                    "peer set[int]",
                    "sys.getsizeof(set) / hashes",
                    f"{mem.peer_set_sizeof / mem.hashes:.1f}",
                ],
                [
                    "ours / peer",
                    "RSS delta",
                    f"{mem.ours_rss_per_hash / mem.peer_rss_per_hash:.2f}x",
                ],
            ],
        )
    )
    out.append("")
    out.append(
        f"3. Commit latency: {config['commit_batch']:,} new hashes staged then update + commit, "
        f"{config['commits']} commits; files in {config['tmpdir']} [{config['filesystem']}]"
    )
    baseline = {r.durable: r.median_ms for r in latency if r.impl.startswith("peer")}
    peer_for = {"durable=True": "os.fsync", "durable=False": "no sync"}

    def versus(r: LatencyRow) -> str:
        peer = baseline.get(peer_for.get(r.durable, ""))
        return "-" if peer is None or peer == 0 else f"{r.median_ms / peer:.2f}x"

    out.append(
        table(
            ["implementation", "mode", "median ms", "p99 ms", "max ms", "median / peer"],
            [
                [
                    r.impl,
                    r.durable,
                    f"{r.median_ms:.3f}",
                    f"{r.p99_ms:.3f}",
                    f"{r.max_ms:.3f}",
                    versus(r),
                ]
                for r in latency
            ],
        )
    )
    out.append(
        "median / peer: durable=True against the peer with os.fsync, durable=False against the "
        "peer with no sync"
    )
    return "\n".join(out)


# -- main ----------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--docs", type=int, default=None, help="documents per corpus (1_000_000)")
    parser.add_argument("--repeats", type=int, default=None, help="repeats, short corpus (5)")
    parser.add_argument(
        "--long-repeats", type=int, default=None, help="repeats, long corpus (default: --repeats)"
    )
    parser.add_argument("--mem-hashes", type=int, default=None, help="hashes for 2. (10_000_000)")
    parser.add_argument("--commits", type=int, default=None, help="commits for 3. (200)")
    parser.add_argument("--commit-batch", type=int, default=1000, help="hashes per commit (1000)")
    parser.add_argument(
        "--tmpdir",
        type=Path,
        default=None,
        help="where 3. writes its files (default: the repository's build/, else the system temp)",
    )
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--quick", action="store_true", help="tiny smoke run (seconds)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="save results")
    args = parser.parse_args(argv)
    defaults = {"docs": 1_000_000, "repeats": 5, "mem_hashes": 10_000_000, "commits": 200}
    if args.quick:
        defaults = {"docs": 20_000, "repeats": 1, "mem_hashes": 200_000, "commits": 20}
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.long_repeats is None:
        args.long_repeats = args.repeats
    for name in ("docs", "repeats", "long_repeats", "mem_hashes", "commits", "commit_batch"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if lmd.BACKEND != "native":
        progress(f"warning: luminamoon.data.BACKEND is {lmd.BACKEND!r}; 'ours' is not native")
    started = time.perf_counter()
    info = machine_info()
    threads_default = os.cpu_count() or 1
    build = REPO_ROOT / "build"
    tmp_parent = args.tmpdir or (build if build.is_dir() else Path(tempfile.gettempdir()))
    tmp_root = Path(tempfile.mkdtemp(prefix="bench-dedup-", dir=tmp_parent))
    config: dict[str, Any] = {
        "docs": args.docs,
        "repeats": args.repeats,
        "long_repeats": args.long_repeats,
        "mem_hashes": args.mem_hashes,
        "commits": args.commits,
        "commit_batch": args.commit_batch,
        "seed": args.seed,
        "tmpdir": str(tmp_root),
        "filesystem": filesystem_of(tmp_root),
        "threads_default": threads_default,
    }
    try:
        progress(f"2. memory: {args.mem_hashes:,} hashes (first, on a clean heap)")
        mem = memory(args.mem_hashes, 1_000_000, args.seed)

        progress("1. filter_batch throughput")
        short = make_corpus("short", args.docs, 100, args.seed)
        describe(short, config)
        rows = throughput(short, args.repeats, threads_default, with_fallback=True)
        del short
        gc.collect()
        long = make_corpus("long", args.docs, 2000, args.seed + 1)
        describe(long, config)
        rows += throughput(long, args.long_repeats, threads_default, with_fallback=False)
        del long
        gc.collect()

        progress(f"3. commit latency in {tmp_root} [{config['filesystem']}]")
        latency = commit_latency(tmp_root, args.commits, args.commit_batch)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)

    info["loadavg_end"] = os.getloadavg()
    info["wall_s"] = time.perf_counter() - started
    info["peak_rss_gib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 1)
    print(report(info, config, rows, mem, latency))
    result = {
        "machine": info,
        "config": config,
        "throughput": [asdict(r) for r in rows],
        "memory": {
            **asdict(mem),
            "ours_bytes_per_hash": mem.ours_bytes_per_hash,
            "ours_rss_per_hash": mem.ours_rss_per_hash,
            "peer_rss_per_hash": mem.peer_rss_per_hash,
        },
        "commit_latency": [asdict(r) for r in latency],
    }
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    results_json.record("dedup", result, config=vars(args), quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())

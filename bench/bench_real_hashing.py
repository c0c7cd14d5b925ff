#!/usr/bin/env python3
"""MinHash signatures, MinHash 2-thread scaling and exact dedup on real text, each beside its peer.

The rows of issue 15 that this measures (docs/benchmarks.md, "Hashing on real text"):

* MinHash (64 permutations, word 5-grams) on long documents (~7.6 KB) and on short ones (~1 KB):
  ours ``MinHashDeduplicator(threads=1).signatures(texts)`` against rensa 0.5.0
  ``RMinHash.digest_matrix_from_token_sets`` fed pre-built shingles (shingling untimed), and
  from text (the Python shingling timed, as a user of rensa has to do it);
* ``filter_batch`` on short documents with threads=2 against threads=1 (ours alone), by wall
  time and by per-thread accounting (each thread's time on a CPU, from its CPU-time clock, and
  its time waiting for one, from ``/proc/self/task/*/schedstat``), which shows how the work
  splits even when the machine's other load makes the wall time meaningless; and beside it the
  host's control: in the same rounds, the threads=1 call while a second process makes it on the
  other vCPU (two processes share nothing, so what the second costs the first is the host's),
  and the threads=2 ratio over the rounds where the host ran both vCPUs at full speed and over
  the others;
* MinHash ``filter_batch`` of the long documents that are not ASCII, fresh str objects each
  round (their characters are encoded on the workers that hash them): ours threads=1 against
  rensa from text, threads=2 against threads=1 (wall), and the peak memory one call of 40 times
  those documents adds (a child process's peak RSS);
* exact dedup of the long documents given as ``list[str]``: ours
  ``StreamDeduplicator(threads=1).filter_batch`` against xxhash's ``xxh3_64_intdigest`` of
  ``s.encode()`` and a Python ``set`` (first occurrence wins); three rows: the same str objects
  every round, fresh str objects every round (what a pipeline sees: neither side finds UTF-8
  kept on a str by an earlier call; about half of these documents are not ASCII), and the
  ASCII documents alone; and, ours alone, the fresh-object batch with threads=2 against
  threads=1 by wall time (the encoding of the strs that are not ASCII runs on the pool).

Text: the real-text corpus of ``bench/real_corpus.py`` (package changelogs and documentation
from /usr/share/doc, manual pages in eleven languages, CPython docstrings, licences, package
metadata), built first with ``python bench/real_corpus.py --out DIR``. Long documents are the
corpus documents of 6-8 KB (the corpus cuts files at blank lines into pieces of at most 8 KB);
short ones are cut from the same text at blank lines into pieces of at most 1.2 KB.

Method: every timed job runs once per round, the jobs of one comparison interleaved in the same
round (so a load change on this shared machine hits both alike), the garbage collector off in
the timed region; the figures are medians over the rounds and the ratio is of the medians.
Every job runs on one thread (rensa's ``digest_matrix_from_token_sets`` is single-threaded: its
CPU time is below its wall time) and is timed by the process's CPU time, except the threads=2
rows, which compare wall times.

Run: ``.venv/bin/python bench/bench_real_hashing.py --corpus DIR [--rounds 9]``. Needs
``pip install -r requirements-bench.txt`` (rensa, xxhash).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import luminamoon.data as lmd
from _common import peer_xxh3_dedup, time_interleaved
from real_corpus import pack_blocks

NUM_PERM = 64
NGRAM = 5
WORD = re.compile(r"\w+")


def load(corpus: Path) -> list[str]:
    texts: list[str] = []
    for shard in sorted(corpus.glob("real-*.jsonl")):
        with shard.open(encoding="utf-8") as fh:
            texts.extend(json.loads(line)["text"] for line in fh)
    if not texts:
        sys.exit(f"no real-*.jsonl under {corpus}: run bench/real_corpus.py --out {corpus} first")
    return texts


def cut(text: str, max_bytes: int) -> list[str]:
    return [
        p for p in pack_blocks(text.split("\n\n"), max_bytes) if len(p.encode()) >= max_bytes // 3
    ]


def shingles(text: str) -> list[str]:
    # What a rensa user writes: lowercase word tokens, space-joined 5-grams.
    tokens = WORD.findall(text.lower())
    if len(tokens) < NGRAM:
        return [" ".join(tokens)] if tokens else []
    return [" ".join(tokens[i : i + NGRAM]) for i in range(len(tokens) - NGRAM + 1)]


def interleaved(
    jobs: dict[str, Callable[[], Any]], rounds: int, wall: bool = False
) -> dict[str, float]:
    """Median seconds of each job over `rounds` interleaved rounds. CPU time of the process by
    default: every job of a one-thread comparison runs on one thread, and CPU time does not count
    the time this process waits for a core on a shared machine (wall time does, and with several
    engineers building on two cores it swings by 2x)."""
    times = time_interleaved(jobs, rounds)
    return {name: t.median_wall if wall else t.median_cpu for name, t in times.items()}


def thread_cpu_ns(tid: str) -> int:
    """A thread's time on a CPU, exact to the call: its CPU-time clock (Linux encodes a thread's
    clock id as (~tid << 3) | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED). schedstat's own first field
    is brought up to date only at scheduler events, so a running thread's reads lag: on the Zen 4
    box of session 25 it moved in 4 ms steps."""
    return time.clock_gettime_ns((~int(tid) << 3) | 6)


def schedstat() -> dict[str, tuple[int, int]]:
    """Per thread of this process: nanoseconds on a CPU (thread_cpu_ns) and waiting in a run
    queue (Linux /proc/self/task/<tid>/schedstat)."""
    out: dict[str, tuple[int, int]] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as fh:
                _, waiting, _ = fh.read().split()
            on_cpu = thread_cpu_ns(tid)
        except OSError:  # the thread ended
            continue
        out[tid] = (on_cpu, int(waiting))
    return out


def last_cpu(tid: str) -> int:
    """The CPU a thread of this process last ran on (field 39 of /proc/self/task/<tid>/stat), or
    -1 when the thread has ended."""
    try:
        with open(f"/proc/self/task/{tid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[36])
    except OSError:
        return -1


def steal_ns() -> int:
    """The machine's steal time, all CPUs (/proc/stat, in USER_HZ ticks, as nanoseconds): time a
    vCPU wanted to run while the host ran something else, where the hypervisor reports it."""
    with open("/proc/stat") as fh:
        fields = fh.readline().split()
    return int(fields[8]) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def thread_accounting(job: Callable[[int], Callable[[], Any]], rounds: int) -> dict[str, Any]:
    """threads=1 against threads=2 by where each thread's time went, which a shared machine does
    not blur the way it blurs wall time: each thread's time on a CPU (the work), and the time
    the call's threads spent runnable but waiting for a CPU (the machine's load). With
    threads=2 the busiest thread's CPU time bounds the wall time on two idle cores from below;
    threads=1's CPU time over it is the speed-up the split allows. Per threads=2 call also: how
    much of its wall time both threads were on a CPU (their CPU time over twice the wall time),
    whether they ended on two different vCPUs, and the machine's steal time over all rounds:
    together they tell a split that leaves a thread idle, two threads sharing one vCPU, a vCPU
    taken away by the host, and two vCPUs that each run slower while both are busy apart."""
    samples: dict[int, list[tuple[float, float, float, float]]] = {1: [], 2: []}
    walls: dict[int, list[float]] = {1: [], 2: []}  # these rounds' own wall times
    overlap: list[float] = []  # threads=2: CPU time of the busy threads over 2 x wall
    two_vcpus = 0  # threads=2 calls whose busy threads ended on different vCPUs
    main = str(threading.get_native_id())
    steal_before = steal_ns()
    for _ in range(rounds):
        for threads in (1, 2):
            run = job(threads)
            gc.collect()
            gc.disable()
            try:
                before = schedstat()
                start = time.perf_counter()
                run()
                wall = time.perf_counter() - start
                after = schedstat()
            finally:
                gc.enable()
            on_cpu = {k: (after[k][0] - before[k][0]) / 1e9 for k in after if k in before}
            waiting = {k: (after[k][1] - before[k][1]) / 1e9 for k in after if k in before}
            busy = [k for k, v in on_cpu.items() if v > 1e-4]
            # The caller's own time blocked (neither on a CPU nor runnable): waiting for the
            # pool's other thread or for the in-order probe.
            blocked = wall - on_cpu.get(main, 0.0) - waiting.get(main, 0.0)
            walls[threads].append(wall)
            samples[threads].append(
                (
                    sum(on_cpu[k] for k in busy),
                    max(on_cpu[k] for k in busy),
                    sum(waiting[k] for k in busy),
                    max(blocked, 0.0),
                )
            )
            if threads == 2:
                overlap.append(sum(on_cpu[k] for k in busy) / (2 * wall))
                cpus = {last_cpu(k) for k in busy}
                two_vcpus += 1 if len(busy) >= 2 and len(cpus) >= 2 else 0
    steal = (steal_ns() - steal_before) / 1e9
    med = {t: [statistics.median(s[i] for s in samples[t]) for i in range(4)] for t in samples}
    line = {
        "operation": "MinHash filter_batch short docs, threads=2: thread accounting",
        "threads1_cpu_s": med[1][0],
        "threads2_cpu_s": med[2][0],
        "threads2_busiest_thread_cpu_s": med[2][1],
        "threads1_runqueue_wait_s": med[1][2],
        "threads2_runqueue_wait_s": med[2][2],
        "threads2_caller_blocked_s": med[2][3],
        "split_bound": med[1][0] / med[2][1],
        # The same work's CPU time on two threads over one: about 1 when the host runs both vCPUs
        # at full speed; 1.14-1.32 in the runs of session 29 where threads=2 fell under 1.7x.
        "threads2_cpu_over_threads1": med[2][0] / med[1][0],
        "threads2_both_busy": statistics.median(overlap),
        # The wall ratio of these rounds (the same job as the row's rounds, run after them): when
        # it differs from the row's, the host's state changed between the two sets of rounds.
        "wall_ratio_these_rounds": statistics.median(walls[1]) / statistics.median(walls[2]),
        "threads2_rounds_on_two_vcpus": two_vcpus,
        "rounds": rounds,
        "steal_s": steal,
        "load_average": os.getloadavg()[0],
    }
    print(
        f"threads=1: {med[1][0] * 1e3:.1f} ms on a CPU, {med[1][2] * 1e3:.1f} ms waiting for one; "
        f"threads=2: {med[2][0] * 1e3:.1f} ms on CPUs in all, busiest thread "
        f"{med[2][1] * 1e3:.1f} ms, caller blocked {med[2][3] * 1e3:.1f} ms, "
        f"{med[2][2] * 1e3:.1f} ms waiting for a CPU; split allows "
        f"{line['split_bound']:.2f}x on two idle cores (load average "
        f"{line['load_average']:.1f}); the same work cost "
        f"{line['threads2_cpu_over_threads1']:.2f}x the CPU on two threads (about 1.00 when the "
        "host runs both vCPUs at full speed); with threads=2 both threads were on a CPU "
        f"{line['threads2_both_busy']:.0%} of the wall time (median), on two different vCPUs in "
        f"{two_vcpus} of {rounds} calls; steal time {steal * 1e3:.0f} ms; threads=2 vs 1 by wall "
        f"time in these rounds {line['wall_ratio_these_rounds']:.2f}x",
        flush=True,
    )
    return line


# The control's second process: the threads=1 call of thread_accounting on the same documents (a
# JSON file). Once it has said it is ready, it makes one call for each line of its stdin and
# answers each with a line.
SECOND_PROCESS = """
import gc, json, sys
import luminamoon.data as lmd
docs = json.load(open(sys.argv[1], encoding="utf-8"))
lmd.MinHashDeduplicator(threads=1).filter_batch(docs)  # warm
gc.disable()
print("ready", flush=True)
for _ in sys.stdin:
    lmd.MinHashDeduplicator(threads=1).filter_batch(docs)
    print("done", flush=True)
"""

# Two processes that cost at most this much more CPU than one alone: the host ran both vCPUs at
# full speed in that round.
FULL_SPEED = 1.05


def host_control(
    job: Callable[[int], Callable[[], Any]], docs: list[str], rounds: int
) -> dict[str, Any]:
    """What the host does to two busy vCPUs, measured beside the threads=2 row in the same rounds.
    Each round: the threads=1 call alone, the threads=2 call, and the threads=1 call again while
    a second process makes the same call on the other vCPU. Two processes share no memory and no
    lock, so the CPU time the second one costs the first is the machine's (on a VM: a host that
    runs the two vCPUs on one core's two hyperthreads, or on cores another tenant keeps busy).
    The threads=2 ratio is then given over the rounds where two processes ran at full speed and
    over the others, which tells the host's share of a low reading from the code's. `job` is
    thread_accounting's (the row's call on `docs`); the second process makes the threads=1 call
    on its own copy of `docs`."""
    t1: list[tuple[float, float]] = []  # (wall, CPU) seconds
    t2: list[tuple[float, float]] = []
    pair: list[float] = []  # CPU seconds of the call beside the second process's

    def call(threads: int) -> tuple[float, float]:
        run = job(threads)
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        return time.perf_counter() - start, time.process_time() - start_cpu

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "docs.json"
        path.write_text(json.dumps(docs), encoding="utf-8")
        second = subprocess.Popen(
            [sys.executable, "-c", SECOND_PROCESS, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert second.stdin is not None
            assert second.stdout is not None
            if second.stdout.readline().strip() != "ready":
                raise RuntimeError("the control's second process did not start")
            gc.collect()
            gc.disable()
            for _ in range(rounds):
                t1.append(call(1))
                t2.append(call(2))
                second.stdin.write("go\n")
                second.stdin.flush()
                pair.append(call(1)[1])
                second.stdout.readline()
            second.stdin.close()
            second.wait(timeout=30)
        finally:
            gc.enable()
            if second.poll() is None:
                second.kill()
                second.wait()
    host = [b / a[1] for a, b in zip(t1, pair, strict=True)]
    full = [i for i, h in enumerate(host) if h <= FULL_SPEED]
    slowed = [i for i, h in enumerate(host) if h > FULL_SPEED]

    def wall_ratio(rounds_: list[int]) -> float | None:
        if not rounds_:
            return None
        return statistics.median(t1[i][0] for i in rounds_) / statistics.median(
            t2[i][0] for i in rounds_
        )

    line = {
        "operation": "MinHash filter_batch short docs, threads=2: the host's control",
        "rounds": rounds,
        "two_processes_cpu_over_one": statistics.median(host),
        "full_speed_rounds": len(full),
        "wall_ratio_all_rounds": wall_ratio(list(range(rounds))),
        "wall_ratio_full_speed_rounds": wall_ratio(full),
        "wall_ratio_slowed_rounds": wall_ratio(slowed),
    }

    def fmt(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}x"

    print(
        f"host control: beside a second process making the same threads=1 call, the call cost "
        f"{line['two_processes_cpu_over_one']:.2f}x its CPU time alone (median of {rounds} "
        f"rounds); threads=2 vs 1 by wall time over all these rounds "
        f"{fmt(line['wall_ratio_all_rounds'])}, over the {len(full)} where two processes ran at "
        f"full speed (at most {FULL_SPEED:.2f}x) {fmt(line['wall_ratio_full_speed_rounds'])}, "
        f"over the {len(slowed)} where the host slowed them "
        f"{fmt(line['wall_ratio_slowed_rounds'])}",
        flush=True,
    )
    return line


def row(what: str, ours: float, peer: float, n: int, peer_name: str) -> dict[str, Any]:
    line = {
        "operation": what,
        "docs": n,
        "ours_docs_per_s": n / ours,
        "peer": peer_name,
        "peer_docs_per_s": n / peer,
        "ratio": peer / ours,
    }
    print(
        f"| {what} | {n / ours:,.0f} | {peer_name}: {n / peer:,.0f} | {peer / ours:.2f}x |",
        flush=True,
    )
    return line


def fresh_object_rows(
    rows: list[dict[str, Any]],
    label: str,
    docs: list[str],
    *,
    ours: Callable[[int, list[str]], Any],
    peer: Callable[[list[str]], Any],
    peer_name: str,
    rounds: int,
) -> None:
    """Two rows for ``docs`` as fresh str objects each round (what a pipeline sees: neither side
    finds UTF-8 kept on a str by an earlier call; each job gets its own copy, made untimed): ours
    threads=1 against the peer by CPU time, and ours threads=2 against threads=1 by wall time (a
    second thread's CPU time is not saved time)."""
    jobs: list[tuple[str, Callable[[list[str]], Any], Callable[[], float]]] = [
        ("ours", lambda d: ours(1, d), time.process_time),
        ("peer", peer, time.process_time),
        ("t1 wall", lambda d: ours(1, d), time.perf_counter),
        ("t2 wall", lambda d: ours(2, d), time.perf_counter),
    ]
    times: dict[str, list[float]] = {name: [] for name, _, _ in jobs}
    for _ in range(rounds):
        for name, job, now in jobs:
            fresh = [t[:-1] + t[-1] for t in docs]
            gc.disable()
            start = now()
            job(fresh)
            times[name].append(now() - start)
            gc.enable()
    for what, ours_key, peer_key, against in (
        ("fresh objects", "ours", "peer", peer_name),
        ("fresh objects, threads=2 (wall clock)", "t2 wall", "t1 wall", "ours threads=1"),
    ):
        rows.append(
            row(
                f"{label}, {what}",
                statistics.median(times[ours_key]),
                statistics.median(times[peer_key]),
                len(docs),
                against,
            )
        )


def nonascii_rows(rows: list[dict[str, Any]], docs: list[str], rounds: int, rensa: Any) -> None:
    """MinHash ``filter_batch`` of the long documents that are not ASCII, as fresh str objects
    each round: ours threads=1 against rensa from text (CPU time), threads=2 against threads=1
    (wall), and the memory one call takes beyond its input, read in a child process (its peak
    RSS)."""
    mean = sum(len(t.encode()) for t in docs) / len(docs)
    fresh_object_rows(
        rows,
        f"MinHash filter_batch, non-ASCII long docs (~{mean / 1000:.1f} KB)",
        docs,
        ours=lambda threads, d: lmd.MinHashDeduplicator(threads=threads).filter_batch(d),
        peer=lambda d: rensa.RMinHash.digest_matrix_from_token_sets(
            [shingles(t) for t in d], NUM_PERM, 42
        ),
        peer_name="rensa from text",
        rounds=rounds,
    )
    # Memory: one call over the documents 40 times over (each copy a new str), in a child process
    # whose peak RSS before the call is its input's.
    # (VmHWM, not ru_maxrss: after fork and exec, ru_maxrss still counts the parent's pages.)
    child = (
        "import json, re, sys\n"
        "import luminamoon.data as lmd\n"
        "def peak():\n"
        "    status = open('/proc/self/status').read()\n"
        "    return int(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1)) * 1024\n"
        "texts = json.load(sys.stdin)\n"
        "docs = [t + ' ' + str(i) for i in range(40) for t in texts]\n"
        "before = peak()\n"
        "lmd.MinHashDeduplicator(threads=2).filter_batch(docs)\n"
        "print(len(docs), sum(len(t.encode()) for t in docs), peak() - before)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", child],
        input=json.dumps(docs),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"the memory probe failed: {out.stderr.strip()}")
    n, utf8_bytes, grown = (int(x) for x in out.stdout.split())
    print(
        f"memory: one filter_batch of {n:,} non-ASCII docs ({utf8_bytes / 1e6:.0f} MB as UTF-8) "
        f"raised the peak RSS by {grown / 1e6:.1f} MB",
        flush=True,
    )
    rows.append(
        {
            "operation": "MinHash filter_batch, non-ASCII long docs: peak RSS of one call",
            "docs": n,
            "utf8_bytes": utf8_bytes,
            "peak_rss_growth_bytes": grown,
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", default=str(Path(__file__).parent / "out" / "real"))
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--long-docs", type=int, default=2000)
    parser.add_argument("--short-docs", type=int, default=20000)
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument(
        "--only", choices=["long", "short", "threads", "nonascii", "dedup"], action="append"
    )
    args = parser.parse_args()
    assert lmd.BACKEND == "native", "run the benchmark on the native backend"
    import rensa

    texts = load(Path(args.corpus))
    long_docs = [t for t in texts if 6000 <= len(t.encode()) <= 8192][: args.long_docs]
    short_docs = [p for t in texts for p in cut(t, 1200)][: args.short_docs]
    mean_long = sum(len(t.encode()) for t in long_docs) / len(long_docs)
    mean_short = sum(len(t.encode()) for t in short_docs) / len(short_docs)
    print(
        f"real text from {args.corpus}: {len(long_docs):,} long docs (mean {mean_long:,.0f} B), "
        f"{len(short_docs):,} short docs (mean {mean_short:,.0f} B); {args.rounds} rounds, "
        "medians of interleaved runs",
        flush=True,
    )
    print("| operation | ours docs/s | peer docs/s | ours / peer |\n|---|---:|---:|---:|")
    only = set(args.only or ["long", "short", "threads", "nonascii", "dedup"])
    rows = []

    def ours_sig(docs: list[str]) -> Callable[[], Any]:
        d = lmd.MinHashDeduplicator(num_perm=NUM_PERM, threads=1)
        return lambda: d.signatures(docs)

    def rensa_pre(sets: list[list[str]]) -> Callable[[], Any]:
        return lambda: rensa.RMinHash.digest_matrix_from_token_sets(sets, NUM_PERM, 42)

    def rensa_text(docs: list[str]) -> Callable[[], Any]:
        return lambda: rensa.RMinHash.digest_matrix_from_token_sets(
            [shingles(t) for t in docs], NUM_PERM, 42
        )

    for name, docs in (("long", long_docs), ("short", short_docs)):
        if name not in only:
            continue
        sets = [shingles(t) for t in docs]
        med = interleaved(
            {"ours": ours_sig(docs), "pre": rensa_pre(sets), "text": rensa_text(docs)},
            args.rounds,
        )
        mean = mean_long if name == "long" else mean_short
        label = f"MinHash 64 perms, {name} docs (~{mean / 1000:.1f} KB)"
        rows.append(row(label, med["ours"], med["pre"], len(docs), "rensa pre-built shingles"))
        rows.append(row(label, med["ours"], med["text"], len(docs), "rensa from text"))
        del sets

    if "threads" in only:

        def ours_filter(threads: int) -> Callable[[], Any]:
            return lambda: lmd.MinHashDeduplicator(threads=threads).filter_batch(short_docs)

        # Wall time here: the point is two threads against one.
        med = interleaved({"t1": ours_filter(1), "t2": ours_filter(2)}, args.rounds, wall=True)
        rows.append(
            row(
                "MinHash filter_batch short docs, threads=2",
                med["t2"],
                med["t1"],
                len(short_docs),
                "ours threads=1",
            )
        )
        rows.append(thread_accounting(ours_filter, args.rounds))
        rows.append(host_control(ours_filter, short_docs, 3 * args.rounds))

    if "nonascii" in only:
        nonascii_rows(rows, [t for t in long_docs if not t.isascii()], args.rounds, rensa)

    if "dedup" in only:
        # Every long document twice (the second an equal string in its own object), shuffled.
        import random

        docs = long_docs + [t[:-1] + t[-1] for t in long_docs]
        random.Random(5).shuffle(docs)
        docs = docs * 10  # the repeats are all duplicates

        def peer() -> list[bool]:
            return peer_xxh3_dedup(docs)

        def ours() -> list[bool]:
            return lmd.StreamDeduplicator(threads=1).filter_batch(docs)

        assert ours() == peer()
        med = interleaved({"ours": ours, "peer": peer}, args.rounds)
        rows.append(
            row(
                "exact dedup list[str], long docs, same objects each round",
                med["ours"],
                med["peer"],
                len(docs),
                "xxh3 + Python set",
            )
        )
        # What a pipeline sees: str objects new to both sides (as parsed from JSONL), so neither
        # finds UTF-8 kept on a str by an earlier call.
        unique = long_docs + [t[:-1] + t[-1] for t in long_docs]
        random.Random(5).shuffle(unique)
        fresh_object_rows(
            rows,
            "exact dedup list[str], long docs",
            unique,
            ours=lambda threads, d: lmd.StreamDeduplicator(threads=threads).filter_batch(d),
            peer=peer_xxh3_dedup,
            peer_name="xxh3 + Python set",
            rounds=args.rounds,
        )
        ascii_docs = [t for t in docs if t.isascii()]
        med = interleaved(
            {
                "ours": lambda: lmd.StreamDeduplicator(threads=1).filter_batch(ascii_docs),
                "peer": lambda: peer_xxh3_dedup(ascii_docs),
            },
            args.rounds,
        )
        rows.append(
            row(
                "exact dedup list[str], long ASCII docs",
                med["ours"],
                med["peer"],
                len(ascii_docs),
                "xxh3 + Python set",
            )
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()

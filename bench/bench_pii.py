#!/usr/bin/env python3
"""PII masking benchmark: luminamoon.data.PIIMasker beside datatrove and a plain ``re`` pipeline.

Two seeded corpora of ~2 KB documents (multilingual prose with numbers, dates, times, versions,
code and config lines): *clean* has no PII at all (checked: every implementation that masks the
four categories finds nothing in it), *pii* is the same text with PII inserted at a realistic
density (2 items per document on average, ~1 per KB: 45% e-mails, 25% IPv4, 10% IPv6, 10% API
keys, 10% card numbers). Throughput is MB/s of UTF-8 input, single core unless said otherwise,
median over repeats; the garbage collector is off inside timed regions; jobs run round-robin so
load changes on the machine hit them alike.

Figures: MB/s by wall clock and MB/s per CPU-second of the process (the per-core figure, robust to
a loaded machine; for ``threads=0`` it is the total over all workers, i.e. also per core).

Implementations:
  * ours, native: ``mask_batch`` with ``threads=1`` on ``list[str]`` and on a pyarrow
    ``large_string`` array, ``threads=0`` (all cores) on ``list[str]``, and ``mask()`` called
    once per document from a Python loop;
  * ours, fallback: the pure-Python backend (same rules, Python ``re`` + validators);
  * re pipeline: what one writes by hand with ``re.sub``: one regex per category (e-mail, IPv4,
    IPv6, card, key prefixes/PEM), ``ipaddress`` for public IPs, Luhn for cards;
  * datatrove ``PIIFormatter`` (0.10.1): e-mails and IPv4 only, public IPs only.

Real text (``--real``): instead of the seeded corpora, two corpora of text written by people in
which every document has PII (bench/pii_real_text.py, ``pii_dense_corpora``): *mail*, the e-mail
messages of CPython's test suite, and *changelogs*, Debian changelogs cut into documents of at most
8 KB (nearly every entry ends with its maintainer's address). Ours (``mask_batch``, ``threads=1``)
and datatrove's ``PIIFormatter`` run interleaved, one thread each, medians over ``--repeats``;
``--write-real DIR`` also writes them as JSONL shards for bench/cpp/pii_masker_benchmark.

Run: ``.venv/bin/python bench/bench_pii.py`` (``--quick`` for a smoke run, ``--json PATH`` to save
the figures; ``--real`` for the real-text corpora). Figures and method: docs/benchmarks.md,
section "PII masking".
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import platform
import random
import re
import statistics
import string
import sys
import time
from collections.abc import Callable
from typing import Any

import luminamoon.data as lmd
import pii_real_text
import results_json
from _common import gc_paused, time_interleaved
from luminamoon.data import fallbacks

pa: Any
try:
    import pyarrow as pa
except ImportError:  # pragma: no cover - Arrow rows are skipped
    pa = None

PIIFormatter: Any
try:
    from datatrove.pipeline.formatters import PIIFormatter
except ImportError:  # pragma: no cover - the datatrove rows are skipped
    PIIFormatter = None

MB = 1e6

# -- corpora -------------------------------------------------------------------------------------

WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there been one all we their has would when if so "
    "no will can more out said about what up its into them than some could only time other new "
    "very data model training results system value report server update release table figure "
    "section page user file version between during after before under while where number"
).split()
FOREIGN = (
    "der die und nicht über für être très où aussi también según информация данные 数据 模型 "
    "训练 結果 データ 분석 결과 البيانات معلومات सूचना"
).split()
CODE_LINES = [
    "for (int i = 0; i < n; ++i) { sum += a[i]; }",
    "if x == 3.14: return {'key': value, 'items': [1, 2, 3]}",
    "std::vector<int> v = {1, 2, 3}; v.push_back(42);",
    "SELECT id, name FROM users WHERE created_at > '2024-01-01' LIMIT 100;",
    "timeout: 30s\nretries: 5\nlog_level: info",
    'version = "1.2.3"  # bumped on 2023-11-05',
    "arr[1:10:2] = b[::2]",
]


def sentence(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(6, 18)):
        r = rng.random()
        if r < 0.04:
            out.append(str(rng.randint(1, 2030)))
        elif r < 0.05:
            out.append(f"{rng.randint(1, 28)}.{rng.randint(1, 12)}.{rng.randint(1990, 2030)}")
        elif r < 0.055:
            out.append(f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}")
        elif r < 0.06:
            out.append(f"v{rng.randint(0, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}")
        elif r < 0.065:
            out.append(f"${rng.randint(1, 999)}.{rng.randint(0, 99):02d}")
        elif r < 0.12:
            out.append(rng.choice(FOREIGN))
        else:
            out.append(rng.choice(WORDS))
    text = " ".join(out)
    return text[0].upper() + text[1:] + rng.choice([".", ".", ".", "?", "!", ":", ";"])


def clean_document(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    total = 0
    while total < size:
        piece = rng.choice(CODE_LINES) if rng.random() < 0.05 else sentence(rng)
        parts.append(piece)
        total += len(piece) + 1
    return " ".join(parts)


def random_pii(rng: random.Random) -> str:
    r = rng.random()
    alnum = string.ascii_letters + string.digits
    if r < 0.45:
        user = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 10)))
        return f"{user}.{rng.randint(1, 99)}@{rng.choice(['gmail.com', 'example.org', 'web.de'])}"
    if r < 0.70:
        while True:
            ip = ipaddress.IPv4Address(rng.getrandbits(32))
            if ip.is_global and int(str(ip).split(".")[0]) < 224:
                return str(ip)
    if r < 0.80:
        groups = ":".join(f"{rng.getrandbits(16):x}" for _ in range(3))
        return f"2a0{rng.randint(0, 9)}:{groups}::{rng.getrandbits(16):x}"
    if r < 0.90:
        return rng.choice(
            [
                "ghp_" + "".join(rng.choice(alnum) for _ in range(36)),
                "AKIA" + "".join(rng.choice(string.ascii_uppercase) for _ in range(16)),
                "sk-" + "".join(rng.choice(alnum) for _ in range(45)) + "aZ9",
            ]
        )
    body = "4" + "".join(rng.choice(string.digits) for _ in range(14))
    total = 0
    for k, ch in enumerate(reversed(body)):
        d = int(ch) * (2 if k % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return body + str((10 - total % 10) % 10)


def make_corpora(docs: int, doc_size: int, seed: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    clean = [clean_document(rng, doc_size) for _ in range(docs)]
    with_pii = []
    for doc in clean:
        words = doc.split(" ")
        for _ in range(rng.choice([0, 1, 2, 2, 3, 4])):
            words.insert(rng.randrange(len(words)), random_pii(rng))
        with_pii.append(" ".join(words))
    return clean, with_pii


# -- the hand-written re pipeline ----------------------------------------------------------------


class RePipeline:
    """One regex per category applied with re.sub, validated like a careful user would."""

    KEY = re.compile(
        r"(?<![\w-])(?:AKIA[0-9A-Z]{16}|AIza[\w-]{35}|gh[pousr]_[A-Za-z0-9]{36,}"
        r"|github_pat_\w{22,}|xox[abprs]-[\w-]{10,}|sk-[\w-]{20,}|[sr]k_live_[A-Za-z0-9]{20,}"
        r"|eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+)(?![\w-])"
        r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[^-]*-----END [A-Z ]*PRIVATE KEY-----"
    )
    EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,63}")
    IPV6 = re.compile(r"(?<![\w:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])")
    IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
    CARD = re.compile(r"(?<![\w.])\d(?:[ -]?\d){12,18}(?![\w]|\.\d)")

    @staticmethod
    def _public_ip(m: re.Match[str]) -> str:
        try:
            return "<IP_ADDRESS>" if ipaddress.ip_address(m.group()).is_global else m.group()
        except ValueError:
            return m.group()

    @staticmethod
    def _card(m: re.Match[str]) -> str:
        digits = [int(c) for c in m.group() if c.isdigit()]
        total = 0
        for k, digit in enumerate(reversed(digits)):
            total += (digit * 2 - 9 if digit > 4 else digit * 2) if k % 2 == 1 else digit
        return "<CREDIT_CARD>" if total % 10 == 0 else m.group()

    def mask(self, text: str) -> str:
        text = self.KEY.sub("<API_KEY>", text)
        text = self.EMAIL.sub("<EMAIL>", text)
        text = self.IPV6.sub(self._public_ip, text)
        text = self.IPV4.sub(self._public_ip, text)
        return self.CARD.sub(self._card, text)


# -- timing ----------------------------------------------------------------------------------------

Job = Callable[[], object]


def time_jobs(
    jobs: dict[str, tuple[Job, int]], log: Callable[[str], None]
) -> dict[str, tuple[float, float]]:
    """Median (wall seconds, CPU seconds of this process) per job; each job runs `repeats`
    times, interleaved with the others. CPU time is what "per core" means on a shared machine:
    it does not count the time this process waited for a core."""
    samples = time_interleaved(
        {name: job for name, (job, _) in jobs.items()},
        {name: repeats for name, (_, repeats) in jobs.items()},
        after_round=lambda round_, rounds: log(f"round {round_ + 1}/{rounds} done"),
    )
    return {name: (s.median_wall, s.median_cpu) for name, s in samples.items()}


def make_jobs(
    corpus: list[str],
    *,
    native1: Any,
    native_all: Any,
    fallback: Any,
    pipeline: RePipeline,
    datatrove: Any,
    args: argparse.Namespace,
) -> dict[str, tuple[Job, int]]:
    """Every implementation's job over `corpus`, with its number of repeats."""
    fast, slow = args.repeats, args.slow_repeats
    jobs: dict[str, tuple[Job, int]] = {
        "ours mask_batch list[str] threads=1": (lambda: native1.mask_batch(corpus), fast),
        "ours mask_batch list[str] threads=0": (lambda: native_all.mask_batch(corpus), fast),
        "ours mask() per document": (lambda: [native1.mask(t) for t in corpus], fast),
        "ours fallback (Python re, same rules)": (lambda: fallback.mask_batch(corpus), slow),
        "re pipeline (hand-written)": (lambda: [pipeline.mask(t) for t in corpus], slow),
    }
    if pa is not None:
        arrow = pa.array(corpus, type=pa.large_string())
        jobs["ours mask_batch pa.large_string threads=1"] = (
            lambda: native1.mask_batch(arrow),
            fast,
        )
    if datatrove is not None:
        jobs["datatrove PIIFormatter (email+IPv4)"] = (
            lambda: [datatrove.format(t) for t in corpus],
            slow,
        )
    return jobs


def timed_per_pass(job: Job, passes: int) -> tuple[float, float]:
    """(wall, CPU) seconds of one pass of `job`, run `passes` times in a row (tiny corpora are
    timed over several passes), the garbage collector off."""
    with gc_paused():
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(passes):
            job()
        wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    return wall / passes, cpu / passes


def bench_real(args: argparse.Namespace, log: Callable[[str], None]) -> dict[str, Any]:
    """Ours (threads=1) beside datatrove's PIIFormatter on the PII-dense real corpora,
    interleaved, one thread each; medians of the per-pass times."""
    ours = lmd.PIIMasker(threads=1)
    corpora = pii_real_text.pii_dense_corpora(ours, changelog_docs=args.real_changelogs)
    if args.write_real:
        out_dir = args.write_real
        os.makedirs(out_dir, exist_ok=True)
        for name, corpus in corpora.items():
            with open(os.path.join(out_dir, f"{name}.jsonl"), "w", encoding="utf-8") as f:
                for i, text in enumerate(corpus):
                    f.write(json.dumps({"id": f"{name}:{i}", "text": text}) + "\n")
        log(f"wrote {', '.join(corpora)} to {out_dir}")
    datatrove = PIIFormatter() if PIIFormatter is not None else None
    results: dict[str, Any] = {}
    for name, corpus in corpora.items():
        nbytes = sum(len(t.encode()) for t in corpus)
        jobs: dict[str, Job] = {"ours": lambda c=corpus: ours.mask_batch(c)}
        if datatrove is not None:
            jobs["datatrove"] = lambda c=corpus: [datatrove.format(t) for t in c]
        # Enough passes that one timing of ours is >= ~50 ms (the mail corpus is small).
        wall_one = max(timed_per_pass(jobs["ours"], 1)[0], 1e-6)
        passes = {"ours": max(1, int(0.05 / wall_one)), "datatrove": 1}
        walls: dict[str, list[float]] = {k: [] for k in jobs}
        cpus: dict[str, list[float]] = {k: [] for k in jobs}
        for _ in range(args.repeats):
            for label, job in jobs.items():
                wall, cpu = timed_per_pass(job, passes[label])
                walls[label].append(wall)
                cpus[label].append(cpu)
        row: dict[str, Any] = {
            "docs": len(corpus),
            "bytes": nbytes,
            "counts": ours.mask_batch(corpus).counts,
        }
        for label in jobs:
            row[f"{label}_mb_per_s"] = nbytes / statistics.median(walls[label]) / MB
            row[f"{label}_mb_per_cpu_s"] = nbytes / statistics.median(cpus[label]) / MB
        if datatrove is not None:
            row["ratio"] = statistics.median(walls["datatrove"]) / statistics.median(walls["ours"])
            row["ratio_cpu"] = statistics.median(cpus["datatrove"]) / statistics.median(
                cpus["ours"]
            )
        results[name] = row
        log(f"real {name}: {len(corpus)} docs, {nbytes / MB:.2f} MB, ratio {row.get('ratio')}")
    print(
        "\n| real corpus (every doc has PII) | docs | MB | datatrove PIIFormatter MB/s | ours MB/s "
        "(threads=1) | ours ÷ datatrove (wall / CPU) | masked |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, row in results.items():
        peer = f"{row['datatrove_mb_per_s']:,.2f}" if "ratio" in row else "n/a"
        ratio = f"**{row['ratio']:,.0f}x** / {row['ratio_cpu']:,.0f}x" if "ratio" in row else "n/a"
        print(
            f"| {name} | {row['docs']:,} | {row['bytes'] / MB:.2f} | {peer} | "
            f"{row['ours_mb_per_s']:,.1f} | {ratio} | {row['counts']} |"
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=8000)
    parser.add_argument("--doc-size", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5, help="repeats of the fast jobs")
    parser.add_argument("--slow-repeats", type=int, default=3, help="repeats of Python jobs")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--quick", action="store_true", help="smoke run: 300 docs, 1 repeat")
    parser.add_argument(
        "--real", action="store_true", help="the PII-dense real-text corpora (mail, changelogs)"
    )
    parser.add_argument("--real-changelogs", type=int, default=2000, help="changelog documents")
    parser.add_argument("--write-real", help="also write the real corpora as JSONL to this dir")
    args = parser.parse_args()
    if args.quick:
        args.docs, args.repeats, args.slow_repeats = 300, 1, 1

    def log(message: str) -> None:
        print(f"[bench_pii] {message}", file=sys.stderr, flush=True)

    if args.real:
        if args.quick:
            args.real_changelogs = 200
        real = bench_real(args, log)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump({"real": real}, f, indent=2)
        results_json.record("pii_real", real, config=vars(args), quick=args.quick)
        return

    clean, with_pii = make_corpora(args.docs, args.doc_size, args.seed)
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "backend": lmd.BACKEND,
            "simd": lmd.simd_isa() if hasattr(lmd, "simd_isa") else None,
            "cpus": os.cpu_count(),
        },
        "corpora": {},
    }
    pipeline = RePipeline()
    datatrove = PIIFormatter() if PIIFormatter is not None else None

    for name, corpus in (("clean", clean), ("pii", with_pii)):
        nbytes = sum(len(t.encode()) for t in corpus)
        native1 = lmd.PIIMasker(threads=1)
        native_all = lmd.PIIMasker(threads=0)
        fallback = fallbacks.PIIMasker()
        counts = native1.mask_batch(corpus).counts
        assert fallback.mask_batch(corpus[:300]).texts == native1.mask_batch(corpus[:300]).texts
        jobs = make_jobs(
            corpus,
            native1=native1,
            native_all=native_all,
            fallback=fallback,
            pipeline=pipeline,
            datatrove=datatrove,
            args=args,
        )
        log(f"corpus {name}: {len(corpus)} docs, {nbytes / MB:.1f} MB, found {counts}")
        medians = time_jobs(jobs, log)
        rows = {
            job: {
                "seconds": wall,
                "cpu_seconds": cpu,
                "mb_per_s": nbytes / wall / MB,
                "mb_per_cpu_s": nbytes / cpu / MB,
            }
            for job, (wall, cpu) in medians.items()
        }
        results["corpora"][name] = {
            "docs": len(corpus),
            "bytes": nbytes,
            "counts": counts,
            "rows": rows,
        }

    base = "ours mask_batch list[str] threads=1"
    print("\n| corpus | implementation | MB/s wall | MB/s per CPU-second | ours ÷ this (CPU) |")
    print("|---|---|---:|---:|---:|")
    for name, corpus_result in results["corpora"].items():
        rows = corpus_result["rows"]
        for job, row in rows.items():
            ratio = rows[base]["mb_per_cpu_s"] / row["mb_per_cpu_s"]
            print(
                f"| {name} | {job} | {row['mb_per_s']:,.1f} | {row['mb_per_cpu_s']:,.1f} "
                f"| {ratio:,.2f}x |"
            )
    for name, corpus_result in results["corpora"].items():
        print(
            f"\n{name}: {corpus_result['docs']} docs, {corpus_result['bytes'] / MB:.1f} MB, "
            f"masked {corpus_result['counts']}"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    results_json.record("pii", results, config=vars(args), quick=args.quick)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""QualityFilter benchmark: our presets beside datatrove 0.10.1's filters, in one process.

For each pair (``gopher_quality`` / ``GopherQualityFilter``, ``gopher_repetition`` /
``GopherRepetitionFilter``, ``c4`` / ``C4QualityFilter``, ``fineweb`` /
``FineWebQualityFilter``) on the same documents: docs/s and MB/s of one core (ours with
``threads=1``, datatrove's ``filter()`` per document), the ratio, and ours on every core
(``threads=0``) and from an Arrow array. Every run's keep decisions are compared with
datatrove's (they must agree; docs/quality.md explains the one documented exception, which these
corpora do not contain). Also the ``default`` preset and the pure-Python fallback, for reference.

Two corpora from bench/quality_corpus.py: ``varied`` (prose, perturbed prose, junk, code,
lists; what the agreement test uses) and ``prose`` (the calibration prose). ``--real DIR`` adds
``real``: the first ``--docs`` documents of bench/real_corpus.py's JSONL shards in DIR (manual
pages in eleven languages, Debian changelogs and READMEs, CPython docstrings, package metadata,
licences: text written by people, read from the machine).

Needs ``pip install -r requirements-bench.txt``. Run: ``python bench/bench_quality.py``
(``--quick`` for a smoke run, ``--json PATH`` to save every figure). Medians over repeats,
every job once per round (round-robin), the garbage collector off inside timed regions.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import luminamoon.data as lmd
import quality_corpus
import results_json
from _common import Samples, time_interleaved
from luminamoon.data import fallbacks

PAIRS = (
    ("gopher_quality", "GopherQualityFilter"),
    ("gopher_repetition", "GopherRepetitionFilter"),
    ("c4", "C4QualityFilter"),
    ("fineweb", "FineWebQualityFilter"),
)
STARTED = time.perf_counter()


def log(message: str) -> None:
    print(f"[{time.perf_counter() - STARTED:6.1f}s] {message}", file=sys.stderr, flush=True)


def median_seconds(samples: Samples, cpu_time: bool) -> float:
    """Wall clock by default; with ``cpu_time`` the process's CPU time (on a shared machine the
    one-thread rows then do not depend on what else runs; the all-cores row becomes total work)."""
    return samples.median_cpu if cpu_time else samples.median_wall


def datatrove_job(filt: Any, texts: list[str]) -> Callable[[], list[bool]]:
    from datatrove.data import Document

    def job() -> list[bool]:
        docs = [Document(text=t, id=str(i)) for i, t in enumerate(texts)]  # (cheap, timed)
        out = []
        for doc in docs:
            result = filt.filter(doc)
            out.append(bool(result[0] if isinstance(result, tuple) else result))
        return out

    return job


def ours_job(qf: Any, texts: Any) -> Callable[[], list[bool]]:
    def job() -> list[bool]:
        return list(qf.filter_batch(texts).keep)

    return job


def bench_corpus(
    name: str,
    texts: list[str],
    repeats: int,
    fallback_docs: int,
    *,
    only: list[str] | None = None,
    cpu_time: bool = False,
) -> dict[str, Any]:
    import datatrove.pipeline.filters as dt
    import pyarrow as pa

    nbytes = sum(len(t.encode()) for t in texts)
    array = pa.array(texts, type=pa.large_string())
    log(f"corpus {name}: {len(texts)} documents, {nbytes / 1e6:.2f} MB")
    rows = []
    for preset, cls_name in PAIRS:
        if only and preset not in only:
            continue
        theirs = getattr(dt, cls_name)()
        jobs: dict[str, Callable[[], list[bool]]] = {
            "datatrove": datatrove_job(theirs, texts),
            "ours_t1": ours_job(lmd.QualityFilter(preset, threads=1), texts),
            "ours_all": ours_job(lmd.QualityFilter(preset, threads=0), texts),
            "ours_t1_arrow": ours_job(lmd.QualityFilter(preset, threads=1), array),
        }
        keeps: dict[str, list[bool]] = {}
        times = time_interleaved(jobs, repeats, keeps.__setitem__)
        agree = sum(
            a == b for a, b in zip(keeps["ours_t1"], keeps["datatrove"], strict=True)
        ) / len(texts)
        for label in ("ours_all", "ours_t1_arrow"):
            if keeps[label] != keeps["ours_t1"]:
                raise AssertionError(f"{preset} {label}: decisions differ from threads=1")
        median = {k: median_seconds(v, cpu_time) for k, v in times.items()}
        fb_texts = texts[:fallback_docs]
        fb = fallbacks.QualityFilter(preset)
        fb_seconds = median_seconds(
            time_interleaved({"fallback": ours_job(fb, fb_texts)}, max(1, repeats // 2))[
                "fallback"
            ],
            cpu_time,
        )
        fb_bytes = sum(len(t.encode()) for t in fb_texts)
        row = {
            "preset": preset,
            "peer": cls_name,
            "docs": len(texts),
            "mb": nbytes / 1e6,
            "decisions_agree": agree,
            "kept": sum(keeps["ours_t1"]),
            **{f"{k}_seconds": v for k, v in median.items()},
            **{f"{k}_docs_per_s": len(texts) / v for k, v in median.items()},
            **{f"{k}_mb_per_s": nbytes / 1e6 / v for k, v in median.items()},
            "ratio_t1": median["datatrove"] / median["ours_t1"],
            "ratio_all": median["datatrove"] / median["ours_all"],
            "fallback_mb_per_s": fb_bytes / 1e6 / fb_seconds,
            "fallback_docs_per_s": len(fb_texts) / fb_seconds,
        }
        rows.append(row)
        log(
            f"  {preset:18s} datatrove {row['datatrove_mb_per_s']:.3f} MB/s, ours "
            f"{row['ours_t1_mb_per_s']:.1f} MB/s per core ({row['ratio_t1']:.0f}x), "
            f"agreement {agree:.2%}"
        )
    qf = lmd.QualityFilter("default", threads=1)
    seconds = median_seconds(
        time_interleaved({"default": ours_job(qf, texts)}, repeats)["default"], cpu_time
    )
    default_row = {
        "preset": "default",
        "ours_t1_docs_per_s": len(texts) / seconds,
        "ours_t1_mb_per_s": nbytes / 1e6 / seconds,
    }
    return {
        "corpus": name,
        "docs": len(texts),
        "mb": nbytes / 1e6,
        "rows": rows,
        "default": default_row,
    }


def print_tables(results: list[dict[str, Any]]) -> None:
    for result in results:
        print(
            f"\n### corpus `{result['corpus']}`: {result['docs']} documents, "
            f"{result['mb']:.2f} MB\n"
        )
        print(
            "| preset vs datatrove | datatrove docs/s (MB/s) | ours 1 core docs/s (MB/s) | "
            "ours/datatrove | ours all cores docs/s (MB/s) | ours 1 core, Arrow (MB/s) | "
            "decisions agree |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        for r in result["rows"]:
            print(
                f"| `{r['preset']}` vs `{r['peer']}` | {r['datatrove_docs_per_s']:,.0f} "
                f"({r['datatrove_mb_per_s']:.2f}) | {r['ours_t1_docs_per_s']:,.0f} "
                f"({r['ours_t1_mb_per_s']:.1f}) | **{r['ratio_t1']:.0f}x** | "
                f"{r['ours_all_docs_per_s']:,.0f} ({r['ours_all_mb_per_s']:.1f}) | "
                f"{r['ours_t1_arrow_mb_per_s']:.1f} | {r['decisions_agree']:.2%} |"
            )
        d = result["default"]
        print(
            f"\n`default` preset, 1 core: {d['ours_t1_docs_per_s']:,.0f} docs/s "
            f"({d['ours_t1_mb_per_s']:.1f} MB/s). Fallback (pure Python), 1 core: "
            + ", ".join(f"{r['preset']} {r['fallback_mb_per_s']:.2f} MB/s" for r in result["rows"])
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2000, help="documents per corpus")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fallback-docs", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="200 documents, 1 repeat")
    parser.add_argument(
        "--real", type=Path, help="also the real-text corpus: bench/real_corpus.py's output dir"
    )
    parser.add_argument("--only-real", action="store_true", help="skip the seeded corpora")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--only",
        action="append",
        choices=[p for p, _ in PAIRS],
        help="bench only this preset against its peer (repeatable; default: all four)",
    )
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time by process CPU time (one-thread rows on a shared machine); the all-cores "
        "column is then total CPU work, not speed",
    )
    args = parser.parse_args()
    if args.quick:
        args.docs, args.repeats, args.fallback_docs = 200, 1, 50
    if lmd.BACKEND != "native":
        log("warning: the native backend is not live; 'ours' is the pure-Python fallback")
    warnings.filterwarnings("ignore")
    from datatrove.data import Document
    from datatrove.pipeline.filters import GopherQualityFilter

    GopherQualityFilter().filter(Document(text="Load spaCy before timing.", id="0"))
    corpora = {
        "varied": [t for _, t in quality_corpus.varied_corpus(args.docs, seed=11)],
        "prose": [
            t
            for label, t in quality_corpus.calibration_corpus(args.docs, 0, seed=7)
            if label in quality_corpus.PROSE_KINDS
        ],
    }
    if args.only_real:
        corpora = {}
    if args.real is not None:
        real: list[str] = []
        for shard in sorted(args.real.glob("real-*.jsonl")):
            with shard.open(encoding="utf-8") as fh:
                real += [json.loads(line)["text"] for line in fh]
        if not real:
            raise SystemExit(f"no real-*.jsonl shards in {args.real}: run bench/real_corpus.py")
        corpora["real"] = real[: args.docs]
    results = [
        bench_corpus(
            name, texts, args.repeats, args.fallback_docs, only=args.only, cpu_time=args.cpu_time
        )
        for name, texts in corpora.items()
    ]
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, backend {lmd.BACKEND}, "
        f"clock {'CPU time' if args.cpu_time else 'wall'}, "
        f"total {time.perf_counter() - STARTED:.0f} s"
    )
    print_tables(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    results_json.record("quality", results, config=vars(args), quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())

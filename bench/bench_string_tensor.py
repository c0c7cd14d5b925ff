#!/usr/bin/env python3
"""StringTensor benchmark (issue #7, section 6): luminamoon.data beside its peers, in one process.

Sections (see docs/benchmarks.md for the method and the figures measured):

1. Build: ``StringTensor(list[str])`` against ``pyarrow.array(list)`` (utf8, and utf8_view
   where pyarrow has it), on a short (~10 B) and a long (~100 B) corpus.
2. Export to Polars: ``t.to_polars()`` (zero-copy utf8_view) against ``polars.Series(list)``,
   and against ``polars.from_arrow(pyarrow array)`` for reference.
3. Round trip to torch (CPU): ``t.to_torch()`` then ``StringTensor.from_torch(...)`` (which
   validates offsets and UTF-8), against the same trip through pyarrow (its offsets and data
   buffers to torch by DLPack, back with ``Array.from_buffers`` + ``validate(full=True)``).
4. Memory per string: ``nbytes`` and the RSS delta of a tensor, against the RSS delta of the
   Python ``list[str]`` (and ``sys.getsizeof`` of its objects).

Every result is checked (same strings back) outside the timed region. Medians over repeats;
the jobs of one section run round-robin so load changes hit them alike; gc is off while timing.

Run: ``.venv/bin/python bench/bench_string_tensor.py`` (``--quick`` for a smoke run, ``--json
PATH`` to save the figures).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import torch

import luminamoon.data as lmd
import results_json
from _common import rss_bytes, time_interleaved

ST = lmd.StringTensor
WORDS = (
    "the of and to in is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there one all we can their has been if more when will "
    "would who so no Grüße naïve café 日本語 テキスト Ελληνικά 😀"
).split()


def make_corpus(docs: int, mean_words: int, seed: int) -> list[str]:
    """Seeded sentences of mean_words +-50% words (ASCII with ~10% non-ASCII words)."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(max(1, mean_words // 2), mean_words * 3 // 2 + 1, size=docs)
    picks = rng.integers(0, len(WORDS), size=int(counts.sum())).tolist()
    out: list[str] = []
    pos = 0
    for c in counts.tolist():
        out.append(" ".join(WORDS[i] for i in picks[pos : pos + c]))
        pos += c
    return out


def time_round_robin(
    jobs: dict[str, Callable[[], Any]], check: Callable[[str, Any], None], repeats: int
) -> dict[str, float]:
    """Median seconds per job; each result is checked (untimed) and freed (untimed)."""
    times = time_interleaved(jobs, repeats, check)
    return {label: samples.median_wall for label, samples in times.items()}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- sections ---------------------------------------------------------------------------------


def bench_build(texts: list[str], repeats: int) -> dict[str, float]:
    jobs: dict[str, Callable[[], Any]] = {
        "ours StringTensor(list)": lambda: ST(texts),
        "pyarrow.array(list) utf8": lambda: pa.array(texts, type=pa.string()),
    }
    if hasattr(pa, "string_view"):
        jobs["pyarrow.array(list) utf8_view"] = lambda: pa.array(texts, type=pa.string_view())

    def check(label: str, result: Any) -> None:
        assert len(result) == len(texts), label

    return time_round_robin(jobs, check, repeats)


def bench_polars(texts: list[str], repeats: int) -> dict[str, float]:
    t = ST(texts)
    arrow = pa.array(texts)
    jobs: dict[str, Callable[[], Any]] = {
        "ours t.to_polars()": t.to_polars,
        "polars.Series(list)": lambda: pl.Series(texts),
        "polars.from_arrow(pa utf8)": lambda: pl.from_arrow(arrow),
    }
    expected_head = texts[:100]

    def check(label: str, result: Any) -> None:
        assert len(result) == len(texts), label
        assert result.head(100).to_list() == expected_head, label

    return time_round_robin(jobs, check, repeats)


def bench_torch(texts: list[str], repeats: int) -> dict[str, float]:
    t = ST(texts)
    arrow = pa.array(texts)
    n = len(texts)

    def ours() -> Any:
        offsets, payload = t.to_torch()
        return ST.from_torch(offsets, payload)

    def ours_export() -> Any:
        return t.to_torch()

    def peer() -> Any:
        _, offsets_buf, data_buf = arrow.buffers()
        offsets = torch.from_dlpack(np.frombuffer(offsets_buf, dtype=np.int32, count=n + 1))
        payload = torch.from_dlpack(np.frombuffer(data_buf, dtype=np.uint8))
        back = pa.Array.from_buffers(
            pa.string(), n, [None, pa.py_buffer(offsets.numpy()), pa.py_buffer(payload.numpy())]
        )
        back.validate(full=True)  # what from_torch checks: offsets and UTF-8
        return back

    jobs: dict[str, Callable[[], Any]] = {
        "ours to_torch + from_torch": ours,
        "ours to_torch only": ours_export,
        "pyarrow buffers -> torch -> from_buffers + validate": peer,
    }
    expected_last = texts[-1]

    def check(label: str, result: Any) -> None:
        if isinstance(result, tuple):
            assert result[1].dtype == torch.uint8, label
            return
        assert len(result) == n, label
        assert str(result[n - 1]) == expected_last, label

    return time_round_robin(jobs, check, repeats)


def bench_memory(texts: list[str]) -> dict[str, float]:
    """Bytes per string: ours (nbytes and RSS delta) against a list of str (RSS delta).

    Reading a non-ASCII str's UTF-8 from C (PyUnicode_AsUTF8AndSize, as pyarrow does too) makes
    CPython cache a UTF-8 copy inside that str object. That growth belongs to the list, not to the
    tensor: ``sys.getsizeof`` counts it, so it is measured and subtracted from our RSS delta.
    """
    n = len(texts)
    payload = sum(len(s.encode()) for s in texts)
    gc.collect()
    before = rss_bytes()
    copies = [s.encode().decode() for s in texts]  # fresh str objects, as a reader makes them
    list_rss = rss_bytes() - before
    list_sizeof = sys.getsizeof(copies) + sum(sys.getsizeof(s) for s in copies)
    gc.collect()
    before = rss_bytes()
    t = ST(copies)
    tensor_rss = rss_bytes() - before
    utf8_caches = sys.getsizeof(copies) + sum(sys.getsizeof(s) for s in copies) - list_sizeof
    nbytes = t.nbytes
    del t, copies
    gc.collect()
    return {
        "payload bytes / string": payload / n,
        "ours nbytes / string": nbytes / n,
        "ours RSS delta / string": (tensor_rss - utf8_caches) / n,
        "(CPython UTF-8 caches / string)": utf8_caches / n,
        "list[str] RSS delta / string": list_rss / n,
        "list[str] getsizeof / string": list_sizeof / n,
    }


# -- main -------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000, help="strings per corpus")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="20K strings, 1 repeat")
    parser.add_argument("--json", help="also write every figure to this JSON file")
    args = parser.parse_args()
    if args.quick:
        args.docs, args.repeats = 20_000, 1
    if lmd.BACKEND != "native":
        log(f"warning: backend is {lmd.BACKEND!r}; these figures are not the native engine's")

    started = time.perf_counter()
    corpora = {"short": 2, "long": 16}  # mean words per string: ~10 B and ~90 B
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "backend": lmd.BACKEND,
            "pyarrow": pa.__version__,
            "polars": pl.__version__,
            "torch": torch.__version__,
            "numpy": np.__version__,
            "docs": args.docs,
            "repeats": args.repeats,
        }
    }
    for name, words in corpora.items():
        texts = make_corpus(args.docs, words, args.seed)
        mean_bytes = sum(len(s.encode()) for s in texts) / len(texts)
        log(f"corpus {name}: {len(texts):,} strings, mean {mean_bytes:.1f} B")
        section: dict[str, Any] = {"mean_bytes": mean_bytes}
        section["memory"] = bench_memory(texts)  # first, on a clean heap
        log(f"  memory done ({time.perf_counter() - started:.0f} s)")
        section["build"] = bench_build(texts, args.repeats)
        log(f"  build done ({time.perf_counter() - started:.0f} s)")
        section["polars"] = bench_polars(texts, args.repeats)
        log(f"  polars done ({time.perf_counter() - started:.0f} s)")
        section["torch"] = bench_torch(texts, args.repeats)
        log(f"  torch done ({time.perf_counter() - started:.0f} s)")
        results[name] = section
        del texts
    results["total_seconds"] = time.perf_counter() - started

    n = args.docs
    for name in corpora:
        section = results[name]
        print(f"\n## corpus {name} ({n:,} strings, mean {section['mean_bytes']:.1f} B)")
        for what in ("build", "polars", "torch"):
            figures = section[what]
            reference = max(figures.values())
            print(f"\n{what}: median ms, M strings/s, time vs the slowest")
            for label, seconds in figures.items():
                print(
                    f"  {label:55s} {seconds * 1e3:9.2f} ms  {n / seconds / 1e6:8.2f} M/s  "
                    f"{seconds / reference:6.3f}x"
                )
        print("\nmemory, bytes per string:")
        for label, value in section["memory"].items():
            print(f"  {label:35s} {value:8.1f}")
    print(f"\ntotal {results['total_seconds']:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    results_json.record("string_tensor", results, config=vars(args), quick=args.quick)


if __name__ == "__main__":
    main()

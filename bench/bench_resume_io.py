#!/usr/bin/env python3
"""Resume time of compressed shards, with and without the access-point index (docs/readers.md).

One shard per format, ``--size-mb`` of uncompressed JSONL (real text: the documents of
``bench/real_corpus.py`` — Debian docs, manual pages, CPython docstrings, licences, package
metadata — repeated with fresh ids until the size is reached):

* ``.jsonl`` plain (the O(1) reference: a seek);
* ``.jsonl.gz``, one gzip member at level 6 (what ``gzip`` writes);
* ``.jsonl.zst`` with one frame per ``--frame-mb`` of input (``zstd`` writes a single frame; see
  docs/readers.md for writing multi-frame shards) and a single-frame ``.zst`` for contrast.

For each, the time to the first batch of ``ShardReader(start=c, batch_size=1)`` at 1%, 50% and
99% of the shard: without an index (the prefix is decompressed and discarded), and with the index
built by one earlier full read (``index_dir=``, ``index_spacing=--spacing-mb``). Also the full
read with and without index building (its overhead). Medians of ``--repeat`` runs; native backend
unless ``LUMINAMOON_FORCE_FALLBACK=1``.

Run: ``.venv/bin/python bench/bench_resume_io.py --size-mb 1024`` (the figures in
docs/benchmarks.md); ``--size-mb 64 --repeat 1`` for a smoke run; ``--json PATH`` saves them;
full runs (≥ 1 GiB) are appended to ``bench/results/resume_io.json``.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zstandard

import luminamoon.data as lmd
import results_json  # bench/ is on sys.path when the script runs

POSITIONS = (0.01, 0.50, 0.99)


def real_documents(workdir: Path, corpus_mb: float) -> list[str]:
    out = workdir / "real"
    if not (out / "manifest.json").exists():
        script = Path(__file__).with_name("real_corpus.py")
        subprocess.run(
            [sys.executable, str(script), "--out", str(out), "--max-mb", str(corpus_mb)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    texts = []
    for shard in sorted(out.glob("real-*.jsonl")):
        with shard.open(encoding="utf-8") as f:
            texts += [json.loads(line)["text"] for line in f]
    return texts


def write_shards(workdir: Path, texts: list[str], size: int, frame: int) -> dict[str, Any]:
    """Writes the shards; returns their paths and the (offset, rows) of each position."""
    plain = workdir / "shard.jsonl"
    targets = [int(p * size) for p in POSITIONS]
    marks: list[tuple[int, int]] = []
    written = rows = 0
    with plain.open("wb") as f:
        while written < size:
            for text in texts:
                line = json.dumps({"id": rows, "text": text}).encode() + b"\n"
                f.write(line)
                written += len(line)
                rows += 1
                while len(marks) < len(targets) and written >= targets[len(marks)]:
                    marks.append((written, rows))
                if written >= size:
                    break
    data = plain.read_bytes()
    paths = {"jsonl": plain}
    paths["gz"] = workdir / "shard.jsonl.gz"
    with gzip.open(paths["gz"], "wb", compresslevel=6) as g:
        g.write(data)
    paths["zst_frames"] = workdir / "frames.jsonl.zst"
    compressor = zstandard.ZstdCompressor(level=3)
    with paths["zst_frames"].open("wb") as z:
        for at in range(0, len(data), frame):
            z.write(compressor.compress(data[at : at + frame]))
    paths["zst_single"] = workdir / "single.jsonl.zst"
    paths["zst_single"].write_bytes(compressor.compress(data))
    return {"paths": paths, "marks": marks, "bytes": len(data), "rows": rows}


def timed(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.disable()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        gc.enable()
    return statistics.median(times)


def full_read(path: Path, index: Path | None, spacing: int) -> None:
    for _ in lmd.ShardReader([str(path)], index_dir=index, index_spacing=spacing):
        pass


def first_batch(path: Path, start: lmd.StreamCoordinate, index: Path | None, spacing: int) -> None:
    reader = lmd.ShardReader(
        [str(path)], start=start, batch_size=1, index_dir=index, index_spacing=spacing
    )
    batch = next(iter(reader))
    assert len(batch) == 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=1024)
    parser.add_argument("--spacing-mb", type=float, default=4)
    parser.add_argument("--frame-mb", type=float, default=4)
    parser.add_argument("--corpus-mb", type=float, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    spacing = int(args.spacing_mb * 2**20)
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        workdir = Path(tmp)
        texts = real_documents(workdir, args.corpus_mb)
        shards = write_shards(workdir, texts, int(args.size_mb * 2**20), int(args.frame_mb * 2**20))
        results: dict[str, Any] = {
            "backend": lmd.BACKEND,
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "uncompressed_bytes": shards["bytes"],
            "rows": shards["rows"],
            "spacing_bytes": spacing,
            "formats": {},
        }
        print(
            f"backend {lmd.BACKEND}; {shards['bytes'] / 2**20:.0f} MiB uncompressed, "
            f"{shards['rows']} records, index spacing {args.spacing_mb} MiB"
        )
        for name, path in shards["paths"].items():
            index = workdir / f"index-{name}"
            row: dict[str, Any] = {"file_bytes": path.stat().st_size}
            if name != "jsonl":
                row["full_read_s"] = timed(lambda p=path: full_read(p, None, spacing), 1)
                row["full_read_indexing_s"] = timed(
                    lambda p=path, i=index: full_read(p, i, spacing), 1
                )
                files = list(index.iterdir()) if index.exists() else []
                row["index_bytes"] = sum(f.stat().st_size for f in files)
            for fraction, (offset, rows) in zip(POSITIONS, shards["marks"], strict=True):
                start = lmd.StreamCoordinate(shard_id=0, byte_offset=offset, global_row_idx=rows)
                key = f"{round(fraction * 100)}%"
                row[f"resume_{key}_s"] = timed(
                    lambda p=path, s=start: first_batch(p, s, None, spacing), args.repeat
                )
                if name != "jsonl":
                    row[f"resume_{key}_indexed_s"] = timed(
                        lambda p=path, s=start, i=index: first_batch(p, s, i, spacing), args.repeat
                    )
            results["formats"][name] = row
            print(name, json.dumps(row))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    # Runs below 1 GiB are smoke runs: not recorded unless LUMINAMOON_BENCH_RECORD_QUICK=1.
    results_json.record("resume_io", results, config=vars(args), quick=args.size_mb < 1024)


if __name__ == "__main__":
    main()

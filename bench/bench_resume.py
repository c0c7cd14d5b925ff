#!/usr/bin/env python3
"""Resume time of ResumablePipeline at 1%, 50% and 99% of a shard, per format, beside the peers;
and throughput into a dummy training loop with and without prefetch.

Resume: one shard of ``--mb`` MB per format (``.jsonl``, ``.txt``, ``.parquet``, ``.jsonl.gz``,
``.jsonl.zst``) of generated records (``{"id", "text"}``, 0.3-2 KB of words; the content does
not matter here, the position does). The ``.gz`` / ``.zst`` shards get their access-point index
once, untimed, as the job before the crash built it while reading (``index_dir``; the ``.zst``
shard is written in 4 MiB frames, as docs/readers.md advises). For each position a checkpoint is
committed at the
coordinate of the record there (``StateTracker.update`` + ``commit``, not timed); the timed part
is what a restarted job pays: ``ResumablePipeline(...)`` on that checkpoint plus its first
batch (``batch_size=256``, no curation stages, ``prefetch=0``). Peers, same records:

* Hugging Face ``datasets`` streaming: ``load_dataset("json"|"parquet"|"text", streaming=True)``,
  iterated to the position once (not timed) for its ``state_dict()``; timed: a fresh dataset,
  ``load_state_dict(state)`` and its first example;
* a torch ``DataLoader`` over a plain ``IterableDataset`` of the JSONL lines (``json.loads``),
  ``batch_size=256``, resumed the usual way: skip ``n`` batches, then take one.

Throughput: a real-text corpus (``bench/real_corpus.py``: /usr/share/doc, man pages, CPython
docstrings, licences, package metadata; built once into bench/out/) streamed through the default
``FusedPipeline`` into a loop that sleeps ``--step-ms`` per batch (the GPU step; by default the
time the pipeline itself takes per batch, measured first), committing every batch,
``prefetch=0`` (produce, then train) against ``prefetch=2`` (produce while training), runs
interleaved: documents per second of wall time.

Median of ``--repeat`` runs after one warm-up; the OS page cache is warm (a restarted job on the
same machine).
Run: ``.venv/bin/python bench/bench_resume.py`` (defaults: 64 MB per format); the figures in
docs/benchmarks.md; for the issue's >= 1 GB: ``--mb 1024`` (needs ~6 GB of free disk and, for
the peers at 99%, tens of minutes). ``--quick`` for a smoke run; ``--json`` records the figures.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import luminamoon.data as lmd
import results_json

REPO = Path(__file__).resolve().parents[1]
WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there been one all we their its if so had no can more"
).split()
POSITIONS = (0.01, 0.50, 0.99)
BATCH = 256


def make_records(megabytes: float, seed: int = 3) -> Iterator[dict[str, object]]:
    rng = random.Random(seed)
    target = int(megabytes * 1_000_000)
    total = i = 0
    while total < target:
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(60, 400)))
        total += len(text) + 24
        yield {"id": i, "text": text}
        i += 1


def write_shards(directory: Path, megabytes: float) -> tuple[dict[str, Path], list[int]]:
    """One shard per format; returns the paths and the byte offset after every JSONL record."""
    directory.mkdir(parents=True, exist_ok=True)
    jsonl = directory / "data.jsonl"
    txt = directory / "data.txt"
    offsets: list[int] = []
    texts: list[str] = []
    with jsonl.open("wb") as j, txt.open("wb") as t:
        position = 0
        for record in make_records(megabytes):
            line = (json.dumps(record) + "\n").encode()
            j.write(line)
            position += len(line)
            offsets.append(position)
            t.write(str(record["text"]).encode() + b"\n")
            texts.append(str(record["text"]))
    raw = jsonl.read_bytes()
    paths = {"jsonl": jsonl, "txt": txt}
    paths["gz"] = directory / "data.jsonl.gz"
    paths["gz"].write_bytes(gzip.compress(raw, compresslevel=6, mtime=0))
    import zstandard

    paths["zst"] = directory / "data.jsonl.zst"
    # 4 MiB frames (what `split --bytes=4M --filter='zstd -c'` writes): zstd restarts only at a
    # frame, so a single-frame shard could not resume in bounded time.
    compressor = zstandard.ZstdCompressor(level=3)
    frame = 4 << 20
    with paths["zst"].open("wb") as out:
        for start in range(0, len(raw), frame):
            out.write(compressor.compress(raw[start : start + frame]))
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths["parquet"] = directory / "data.parquet"
    pq.write_table(
        pa.table({"id": list(range(len(texts))), "text": texts}),
        paths["parquet"],
        row_group_size=16_384,
        compression="zstd",
    )
    return paths, offsets


def coordinate_at(fmt: str, path: Path, row: int, offsets: list[int]) -> Any:
    """The coordinate of the stream just before record ``row`` (0-based) of the shard."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        meta = pq.ParquetFile(path).metadata
        rg, left = 0, row
        while left >= meta.row_group(rg).num_rows:
            left -= meta.row_group(rg).num_rows
            rg += 1
        return lmd.StreamCoordinate(row_group_idx=rg, row_offset_in_page=left, global_row_idx=row)
    if fmt == "txt":
        # A text line per record; its offsets follow the texts' lengths.
        with path.open("rb") as f:
            offset = 0
            for _ in range(row):
                offset += len(f.readline())
        return lmd.StreamCoordinate(byte_offset=offset, global_row_idx=row)
    offset = offsets[row - 1] if row else 0
    return lmd.StreamCoordinate(byte_offset=offset, global_row_idx=row)


def timed(fn: Callable[[], object]) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    finally:
        gc.enable()


_INDEXED: set[str] = set()


def ensure_index(path: Path, index_dir: Path) -> None:
    """The access-point index a job builds while it reads (docs/readers.md): one untimed pass
    over the shard, as the run before the crash made it."""
    if str(path) in _INDEXED:
        return
    reader = lmd.ShardReader([str(path)], index_dir=str(index_dir), batch_size=4096)
    for _ in reader:
        pass
    reader.close()
    _INDEXED.add(str(path))


def ours(fmt: str, path: Path, coordinate: Any, work: Path) -> float:
    meta = work / f"{fmt}.meta"
    for leftover in work.glob(f"{fmt}.meta*"):
        if leftover.is_file():
            leftover.unlink()
    index_dir = work / "index"
    if fmt in ("gz", "zst"):
        ensure_index(path, index_dir)
    tracker = lmd.StateTracker(meta, durable=False)
    tracker.update(0, coordinate)
    tracker.commit()
    tracker.close()
    fields = [] if fmt == "txt" else ["id"]
    expected = coordinate.global_row_idx

    def resume() -> None:
        with lmd.ResumablePipeline(
            [str(path)],
            None,
            checkpoint=meta,
            batch_size=BATCH,
            prefetch=0,
            fields=fields,
            index_dir=index_dir,
        ) as pipe:
            batch = next(iter(pipe))
            if fields:
                assert batch.ids is not None
                assert batch.ids[0] == expected, (batch.ids[0], expected)

    return timed(resume)


def hf(fmt: str, path: Path, row: int) -> float:
    import datasets

    datasets.disable_progress_bars()
    builder = {"jsonl": "json", "gz": "json", "zst": "json", "parquet": "parquet", "txt": "text"}

    def load() -> Any:
        return datasets.load_dataset(
            builder[fmt], data_files=str(path), streaming=True, split="train"
        )

    ds = load()
    it = iter(ds)
    for _ in range(row):
        next(it)
    state = ds.state_dict()
    expected = row

    def resume() -> None:
        fresh = load()
        fresh.load_state_dict(state)
        example = next(iter(fresh))
        if "id" in example:
            assert example["id"] == expected, (example["id"], expected)

    return timed(resume)


def torch_skip(path: Path, row: int) -> float:
    import torch.utils.data as tud

    class Lines(tud.IterableDataset):  # type: ignore[type-arg]
        def __iter__(self) -> Iterator[dict[str, object]]:
            with path.open("rb") as f:
                for line in f:
                    yield json.loads(line)

    skip = row // BATCH

    def resume() -> None:
        loader = tud.DataLoader(Lines(), batch_size=BATCH, num_workers=0)
        it = iter(loader)
        for _ in range(skip):
            next(it)
        batch = next(it)
        assert int(batch["id"][0]) == skip * BATCH

    return timed(resume)


def bench_resume(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    paths, offsets = write_shards(work / "shards", args.mb)
    rows = len(offsets)
    print(f"\n{rows:,} records, {args.mb} MB of JSONL per shard")
    sizes = {fmt: path.stat().st_size for fmt, path in paths.items()}
    print("file sizes (MB): " + ", ".join(f"{k} {v / 1e6:.1f}" for k, v in sizes.items()))
    out: dict[str, Any] = {"records": rows, "file_bytes": sizes, "resume_s": {}}
    formats = ["jsonl", "txt", "parquet", "gz", "zst"]
    header = f"{'format':<8} {'who':<22}" + "".join(f"{f'{p:.0%}':>10}" for p in POSITIONS)
    print(header)
    for fmt in formats:
        contenders: list[tuple[str, Callable[[int], float]]] = [
            (
                "ResumablePipeline",
                lambda row, fmt=fmt: ours(
                    fmt, paths[fmt], coordinate_at(fmt, paths[fmt], row, offsets), work
                ),
            )
        ]
        if not args.no_peers:
            contenders.append(
                ("HF datasets streaming", lambda row, fmt=fmt: hf(fmt, paths[fmt], row))
            )
            if fmt == "jsonl":
                contenders.append(
                    ("torch DataLoader skip", lambda row: torch_skip(paths["jsonl"], row))
                )
        for who, run in contenders:
            figures = []
            for p in POSITIONS:
                row = min(rows - BATCH, int(rows * p))
                run(row)  # warm-up: imports, first opens (not counted)
                times = [run(row) for _ in range(args.repeat)]
                figures.append(statistics.median(times))
            out["resume_s"].setdefault(fmt, {})[who] = dict(
                zip([f"{p:.0%}" for p in POSITIONS], figures, strict=True)
            )
            print(f"{fmt:<8} {who:<22}" + "".join(f"{t * 1000:>8.1f}ms" for t in figures))
    return out


def real_corpus(megabytes: int) -> list[str]:
    """bench/real_corpus.py's shards, built once into bench/out/ (man pages take minutes)."""
    out = REPO / "bench" / "out" / f"real-{megabytes}mb"
    if not list(out.glob("real-*.jsonl")):
        subprocess.run(
            [
                sys.executable,
                str(REPO / "bench" / "real_corpus.py"),
                "--out",
                str(out),
                "--max-mb",
                str(megabytes),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return sorted(str(p) for p in out.glob("real-*.jsonl"))


def _loop(shards: list[str], meta: Path, prefetch: int, step: float) -> tuple[float, int]:
    """Documents per second of wall time through the default FusedPipeline into a loop that
    sleeps ``step`` per batch and commits every batch; and the number of batches."""
    with lmd.ResumablePipeline(
        shards,
        lmd.FusedPipeline(),
        checkpoint=meta,
        batch_size=512,
        prefetch=prefetch,
        durable=False,
    ) as pipe:
        start = time.perf_counter()
        docs = batches = 0
        for batch in pipe:
            docs += batch.records
            batches += 1
            if step:
                time.sleep(step)  # the training step
            pipe.commit(batch.batch_id)
        return docs / (time.perf_counter() - start), batches


def bench_throughput(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    shards = real_corpus(args.real_mb)
    # The step is set to the time the pipeline takes per batch (measured first), the case where
    # overlapping the two can double the throughput.
    produce_rate, batches = _loop(shards, work / "tp-warm" / "t.meta", 0, 0.0)
    step = args.step_ms / 1000 if args.step_ms else 512 / produce_rate
    out: dict[str, Any] = {"step_ms": step * 1000, "docs_per_s": {}}
    print(
        f"\ntraining loop over the real corpus ({args.real_mb} MB, {batches} batches of 512), "
        f"default FusedPipeline; pipeline alone {produce_rate:,.0f} docs/s; "
        f"step {step * 1000:.0f} ms"
    )
    rates: dict[int, list[float]] = {0: [], 2: []}
    for r in range(args.repeat):
        for prefetch in (0, 2):  # interleaved: load changes hit both alike
            rate, _ = _loop(shards, work / f"tp{prefetch}-{r}" / "t.meta", prefetch, step)
            rates[prefetch].append(rate)
    for prefetch, values in rates.items():
        out["docs_per_s"][f"prefetch={prefetch}"] = statistics.median(values)
        print(f"prefetch={prefetch}: {statistics.median(values):,.0f} docs/s")
    out["docs_per_s"]["pipeline alone"] = produce_rate
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=64, help="JSONL megabytes per shard")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--real-mb", type=int, default=16)
    parser.add_argument(
        "--step-ms", type=float, default=0.0, help="training step (default: the pipeline's time)"
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 4 MB, 1 repeat")
    parser.add_argument("--json", action="store_true", help="record in bench/results/resume.json")
    parser.add_argument("--work", type=Path, default=None, help="scratch directory")
    args = parser.parse_args()
    if args.quick:
        args.mb, args.repeat, args.real_mb = 4, 1, 4
    print(f"backend {lmd.BACKEND}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    work = args.work or Path(tempfile.mkdtemp(prefix="lm-bench-resume-"))
    try:
        figures = {"resume": bench_resume(args, work), "throughput": bench_throughput(args, work)}
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        results_json.record(
            "resume", figures, config={"mb": args.mb, "repeat": args.repeat}, quick=args.quick
        )


if __name__ == "__main__":
    main()

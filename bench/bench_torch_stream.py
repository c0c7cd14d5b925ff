#!/usr/bin/env python3
"""ResumablePipeline into a dummy training loop through a torch DataLoader (issue #11, section 4).

Throughput (documents/s and MB/s of text) of a loop that, per batch, turns the texts into a
tensor the way a byte-level model's input step would (offsets + payload; a vectorised max over
the payload bytes stands for the forward pass, so the loader is what is measured), with 0 and 2
DataLoader workers:

* ``ours``: ``ResumablePipeline(..., pipeline=None).as_torch_dataset(output="dlpack")`` under
  torchdata's ``StatefulDataLoader`` (batches come as offsets + payload tensors: no per-string
  Python object crosses the worker boundary), and the same with the default curation pipeline
  (cleaner + quality + exact/near dedup + PII) for the price of curating on the fly;
* ``peer``: a plain ``torch.utils.data.DataLoader`` over an ``IterableDataset`` that reads the
  same JSONL shards line by line with ``json.loads`` (workers split the shards), batches the
  texts as a Python list, and the loop encodes them to bytes and builds the same two tensors.

Every variant's loop checks it saw every document of the corpus (the ``pipeline=None`` ones) and
the same bytes. The corpus is bench/real_corpus.py's (man pages, /usr/share/doc, stdlib
docstrings, licences, package metadata), built once under ``--corpus``. Medians of ``--repeat``
runs, variants round-robin so load changes hit them alike.

The stream is the corpus read ``--copies`` times (symbolic links, one shard each), so that the
loader's start-up (forking workers) is amortised; the curated variant drops the copies as exact
duplicates, so it delivers fewer documents (``documents_out``).

Run: ``.venv/bin/python bench/bench_torch_stream.py [--max-mb 16] [--copies 8] [--repeat 3]``
(``--quick``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info
from torchdata.stateful_dataloader import StatefulDataLoader

import luminamoon.data as lmd
import results_json

HERE = Path(__file__).resolve().parent
BATCH = 256


class JsonlLines(IterableDataset[list[str]]):
    """The peer: JSONL shards read with json.loads, split over the workers by shard."""

    def __init__(self, paths: list[str], batch_size: int) -> None:
        self.paths = paths
        self.batch_size = batch_size

    def __iter__(self) -> Iterator[list[str]]:
        info = get_worker_info()
        mine = self.paths if info is None else self.paths[info.id :: info.num_workers]
        out: list[str] = []
        for path in mine:
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    out.append(json.loads(line)["text"])
                    if len(out) == self.batch_size:
                        yield out
                        out = []
        if out:
            yield out


def train_step_tensors(offsets: torch.Tensor, payload: torch.Tensor) -> int:
    """The dummy forward pass: reads every payload byte once (a vectorised max) and the count."""
    top = int(payload.max()) if payload.numel() else 0
    return top + int(offsets.shape[0]) - 1


def run_ours(paths: list[str], workers: int, pipeline: Any) -> tuple[int, int, int]:
    with lmd.ResumablePipeline(
        paths, pipeline, checkpoint=None, batch_size=BATCH, prefetch=2
    ) as pipe:
        ds = pipe.as_torch_dataset(output="dlpack")
        loader = StatefulDataLoader(ds, batch_size=None, num_workers=workers)
        docs = size = check = 0
        for batch in loader:
            check += train_step_tensors(batch.offsets, batch.payload)
            docs += len(batch)
            size += int(batch.payload.shape[0])
    return docs, size, check


def run_peer(paths: list[str], workers: int) -> tuple[int, int, int]:
    loader = DataLoader(
        JsonlLines(paths, BATCH), batch_size=None, num_workers=workers, collate_fn=lambda b: b
    )
    docs = size = check = 0
    for texts in loader:
        encoded = [t.encode("utf-8") for t in texts]
        lengths = torch.tensor([0] + [len(b) for b in encoded], dtype=torch.int64)
        offsets = lengths.cumsum(0).to(torch.int32)
        payload = torch.frombuffer(bytearray(b"".join(encoded)), dtype=torch.uint8)
        check += train_step_tensors(offsets, payload)
        docs += len(texts)
        size += int(payload.shape[0])
    return docs, size, check


def corpus(directory: Path, max_mb: int) -> tuple[list[str], dict[str, Any]]:
    manifest = directory / "manifest.json"
    if not manifest.exists():
        subprocess.run(
            [
                sys.executable,
                str(HERE / "real_corpus.py"),
                "--out",
                str(directory),
                "--max-mb",
                str(max_mb),
            ],
            check=True,
        )
    paths = sorted(str(p) for p in directory.glob("real-*.jsonl"))
    return paths, json.loads(manifest.read_text(encoding="utf-8"))


def repeated(paths: list[str], copies: int, directory: Path) -> list[str]:
    """``copies`` symbolic links to every shard (a larger stream without more disk)."""
    directory.mkdir(parents=True, exist_ok=True)
    out: list[str] = []
    for k in range(copies):
        for path in paths:
            link = directory / f"copy{k:02d}-{Path(path).name}"
            if not link.exists():
                link.symlink_to(Path(path).resolve())
            out.append(str(link))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default=str(HERE / "out" / "real"))
    parser.add_argument("--max-mb", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--copies", type=int, default=8, help="read every shard this many times")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args()
    # One intra-op thread for the loop: the box has 2 cores, and the workers are separate processes.
    torch.set_num_threads(1)
    if args.quick:
        args.repeat = 1
    paths, manifest = corpus(Path(args.corpus), args.max_mb)
    if args.quick:
        paths, args.copies = paths[:2], 1
    paths = repeated(paths, args.copies, Path(args.corpus).parent / "torch_stream")
    documents = manifest.get("documents")
    print(f"corpus: {len(paths)} shards, {documents} documents x {args.copies}", flush=True)
    curated = lmd.FusedPipeline()
    variants: dict[str, Callable[[], tuple[int, int, int]]] = {}
    for workers in (0, 2):
        variants[f"ours_w{workers}"] = lambda w=workers: run_ours(paths, w, None)
        variants[f"ours_curated_w{workers}"] = lambda w=workers: run_ours(paths, w, curated)
        variants[f"peer_w{workers}"] = lambda w=workers: run_peer(paths, w)
    times: dict[str, list[float]] = {name: [] for name in variants}
    seen: dict[str, tuple[int, int, int]] = {}
    for _ in range(args.repeat):
        for name, fn in variants.items():
            start = time.perf_counter()
            seen[name] = fn()
            times[name].append(time.perf_counter() - start)
    reference = seen["peer_w0"]
    for name, got in seen.items():
        if "curated" not in name:
            assert got[:2] == reference[:2], (name, got, reference)  # same documents and bytes
    figures: dict[str, Any] = {"documents": reference[0], "bytes": reference[1]}
    print(f"{'variant':<20} {'median s':>9} {'docs/s':>10} {'MB/s':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        docs, size, _ = seen[name]
        figures[name] = {
            "seconds": median,
            "docs_per_s": docs / median,
            "mb_per_s": size / median / 1e6,
            "documents_out": docs,
        }
        print(f"{name:<20} {median:>9.3f} {docs / median:>10.0f} {size / median / 1e6:>8.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1), encoding="utf-8")
    config = {**vars(args), "corpus": os.path.relpath(args.corpus, HERE.parent)}
    results_json.record("torch_stream", figures, config=config, quick=args.quick)


if __name__ == "__main__":
    main()

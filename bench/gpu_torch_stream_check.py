#!/usr/bin/env python3
"""The prepared GPU check of the torch path (issue #11, section 3): one short script for a
session that has a CUDA device.

1. Round trip: batches of ``as_torch_dataset(output="dlpack")`` through a DataLoader with
   ``pin_memory=True`` (0 and 2 workers), moved with ``batch.to("cuda", non_blocking=True)``;
   the strings decoded from the device tensors equal the CPU ones, for every batch.
2. Figures: host-to-device GB/s of the payload + offsets, pinned (the DataLoader's pin thread)
   against pageable (the same batches without ``pin_memory``), medians over the batches.

Without CUDA it says so and exits 0 (nothing to measure). Run with the GPU tests:

    .venv/bin/python -m pytest -q tests/test_gpu_vs_cpu_strings.py tests/test_torch_stream.py \\
        -k "cuda or pinned" && .venv/bin/python bench/gpu_torch_stream_check.py
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import torch
from torch.utils.data import DataLoader

import luminamoon.data as lmd

WORDS = "river stone lantern orbit velvet copper Grüße 日本語 テキスト Ελληνικά 😀 meadow".split()


def documents(count: int) -> list[dict[str, object]]:
    return [
        {"id": i, "text": " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(40 + i % 200))}
        for i in range(count)
    ]


def run(docs: list[dict[str, object]], workers: int, pin: bool, batch: int) -> dict[str, Any]:
    with lmd.ResumablePipeline(
        docs, None, checkpoint=None, batch_size=batch, fields=["id"]
    ) as pipe:
        loader = DataLoader(
            pipe.as_torch_dataset(output="dlpack"),
            batch_size=None,
            num_workers=workers,
            pin_memory=pin,
        )
        rates: list[float] = []
        total = 0
        for item in loader:
            assert item.is_pinned() == pin
            size = item.payload.numel() + item.offsets.numel() * 4
            torch.cuda.synchronize()
            start = time.perf_counter()
            on_gpu = item.to("cuda", non_blocking=True)
            torch.cuda.synchronize()
            rates.append(size / (time.perf_counter() - start) / 1e9)
            assert on_gpu.payload.device.type == "cuda"
            assert on_gpu.strings() == item.strings()  # decoded from the device tensors
            total += len(item)
    assert total == len(docs)
    return {"batches": len(rates), "h2d_gb_per_s_median": statistics.median(rates)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=2_000)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device here: nothing to check (the CPU parts run in tests/)")
        return
    print(f"device: {torch.cuda.get_device_name(0)}; backend {lmd.BACKEND}")
    docs = documents(args.docs)
    for workers in (0, 2):
        for pin in (True, False):
            figures = run(docs, workers, pin, args.batch)
            print(f"workers={workers} pinned={pin}: {figures}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The Ray engine (``luminamoon-data run --engine ray``) on one machine: how it scales, what one
huge band bucket costs, and how its near dedup compares with datatrove's MinHash pipeline.

Three parts, all on a local Ray (``ray.init(num_cpus=--cpus)``), input = the real-text corpus of
``bench/real_corpus.py`` (kernel/Debian docs, manual pages, CPython docstrings, licences, package
metadata), cut into 8 JSONL shards:

* ``sweep``: documents x shuffle partitions. Per cell: wall time of the whole Ray run and of its
  stages (A: read + clean + quality + hashes + signatures on the actor pool; exact; near; write),
  the bytes the two shuffles move (XXH3 keys and band keys with positions), the local run's wall
  time on the same input, and a check that both kept the same documents.
* ``huge-bucket``: the corpus plus ``--boilerplate`` near-identical pages (one template, a counter
  differs: they share every LSH band). Exact dedup does not collapse them; the near-dedup
  resolution checks each page against the kept members of its buckets, so the checks grow with
  the pages, not with their pairs (reported: checks, largest bucket, all-pairs count).
* ``datatrove``: near dedup only (no cleaning, quality, exact dedup or PII on either side) on the
  same shards: ours on Ray with datatrove's MinhashConfig shape (word 5-grams, 14 bands x 8 rows =
  112 permutations, threshold 0.75 for the verification datatrove does not do) against datatrove's
  four MinHash stages (signature, buckets, cluster, filter) with LocalPipelineExecutor (``--cpus``
  workers). Wall times and the agreement of the removed sets (by document id).

Run: ``python bench/bench_ray.py [--quick] [--cpus 2]``. Appends to bench/results/ray.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import luminamoon.data as lmd
import results_json
from luminamoon.data import ray as lray
from luminamoon.data.run import run as local_run

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "ray"
DT_NEAR = {"num_perm": 112, "bands": 14, "rows": 8, "ngram": 5, "threshold": 0.75}
NEAR_ONLY = {"cleaner": False, "quality": False, "exact_dedup": False, "pii": False}


def log(message: str) -> None:
    print(f"[bench_ray] {message}", file=sys.stderr, flush=True)


def real_documents(max_mb: int) -> list[dict[str, Any]]:
    folder = OUT / f"real-{max_mb}mb"
    if not (folder / "manifest.json").exists():
        subprocess.run(
            [
                sys.executable,
                str(HERE / "real_corpus.py"),
                "--out",
                str(folder),
                "--max-mb",
                str(max_mb),
            ],
            check=True,
        )
    docs = []
    for path in sorted(folder.glob("real-*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            docs.extend(json.loads(line) for line in fh if line.strip())
    return docs


def write_shards(docs: list[dict[str, Any]], folder: Path, shards: int = 8) -> list[str]:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    per = (len(docs) + shards - 1) // shards
    paths = []
    for s in range(shards):
        path = folder / f"part-{s:03d}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for record in docs[s * per : (s + 1) * per]:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        paths.append(str(path))
    return paths


def kept_ids(outdir: Path) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = sorted(outdir.glob("*.parquet"))
    if not files:
        return []
    return pa.concat_tables([pq.read_table(f, columns=["id"]) for f in files])["id"].to_pylist()


def ray_once(config: Any, paths: list[str], out: Path, partitions: int, actors: int) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    report = lray.run(config, paths, out, fields=["id"], actors=actors, partitions=partitions)
    seconds = time.perf_counter() - started
    stats = json.loads((out / ".luminamoon" / "ray_stats.json").read_bytes())
    return {"seconds": seconds, "report": report, "stats": stats}


def local_once(config: Any, paths: list[str], out: Path) -> tuple[float, dict]:
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    report = local_run(paths, out, config=config, fields=["id"], progress="none")
    return time.perf_counter() - started, report


def sweep(docs: list[dict[str, Any]], args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for n in args.documents:
        paths = write_shards(docs[:n], OUT / f"sweep-{n}")
        nbytes = sum(os.path.getsize(p) for p in paths)
        local_seconds, _ = local_once(None, paths, OUT / "local")
        local_ids = kept_ids(OUT / "local")
        for partitions in args.partitions:
            runs = [
                ray_once(None, paths, OUT / "ray", partitions, args.cpus)
                for _ in range(args.repeat)
            ]
            same = kept_ids(OUT / "ray") == local_ids
            stats = runs[-1]["stats"]
            row = {
                "documents": min(n, len(docs)),
                "input_bytes": nbytes,
                "partitions": partitions,
                "ray_seconds": statistics.median(r["seconds"] for r in runs),
                "stage_seconds": {
                    k: round(statistics.median(r["stats"][k] for r in runs), 3)
                    for k in ("stage_a_seconds", "exact_seconds", "near_seconds", "write_seconds")
                },
                "shuffle_bytes": stats["shuffle_bytes"],
                "near": stats["near"],
                "local_seconds": local_seconds,
                "same_as_local": same,
                "kept": len(local_ids),
            }
            log(json.dumps(row))
            rows.append(row)
    return rows


def huge_bucket(docs: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    body = " ".join(f"boilerplate{i % 97} term{i}" for i in range(120))
    pages = [
        {"id": f"bp-{i}", "url": "u", "text": f"Welcome. {body} Page {i} of the archive."}
        for i in range(args.boilerplate)
    ]
    base = docs[: args.documents[0]]
    mixed = base + pages
    paths = write_shards(mixed, OUT / "huge")
    result = ray_once(None, paths, OUT / "ray-huge", args.partitions[0], args.cpus)
    local_seconds, _ = local_once(None, paths, OUT / "local-huge")
    same = kept_ids(OUT / "ray-huge") == kept_ids(OUT / "local-huge")
    near = result["stats"]["near"]
    out = {
        "documents": len(mixed),
        "boilerplate_pages": args.boilerplate,
        "ray_seconds": result["seconds"],
        "near_seconds": result["stats"]["near_seconds"],
        "near": near,
        "all_pairs_in_largest_bucket": near["largest_bucket"] * (near["largest_bucket"] - 1) // 2,
        "near_duplicates": result["report"]["duplicates"]["near"],
        "local_seconds": local_seconds,
        "same_as_local": same,
    }
    log(json.dumps(out))
    return out


def datatrove_near(paths: list[str], work: Path, workers: int) -> tuple[float, set[str]]:
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import (
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    try:  # the same xxhash-4 shim as bench_pipeline.py (datatrove 0.10.1 hashes str)
        from bench_pipeline import _patch_datatrove_xxhash

        _patch_datatrove_xxhash()
    except Exception:  # pragma: no cover - older xxhash needs none
        pass
    shutil.rmtree(work, ignore_errors=True)
    inp = str(Path(paths[0]).parent)
    config = MinhashConfig()

    def reader() -> Any:
        return JsonlReader(inp, glob_pattern="*.jsonl", compression=None)

    def execute(pipeline: list[Any], name: str, tasks: int) -> None:
        LocalPipelineExecutor(
            pipeline=pipeline,
            tasks=tasks,
            workers=min(workers, tasks),
            logging_dir=str(work / f"logs-{name}"),
            skip_completed=False,
        ).run()

    started = time.perf_counter()
    execute([reader(), MinhashDedupSignature(str(work / "sigs"), config=config)], "1", 1)
    execute(
        [MinhashDedupBuckets(str(work / "sigs"), str(work / "buckets"), config=config)],
        "2",
        config.num_buckets,
    )
    execute(
        [MinhashDedupCluster(str(work / "buckets"), str(work / "remove"), config=config)], "3", 1
    )
    execute(
        [
            reader(),
            MinhashDedupFilter(
                str(work / "remove"),
                exclusion_writer=JsonlWriter(str(work / "removed"), compression=None),
            ),
            JsonlWriter(str(work / "kept"), compression=None),
        ],
        "4",
        1,
    )
    seconds = time.perf_counter() - started
    removed = set()
    for path in (work / "removed").rglob("*.jsonl"):
        with path.open(encoding="utf-8") as fh:
            removed.update(json.loads(line)["id"] for line in fh)
    return seconds, removed


def versus_datatrove(docs: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    n = args.documents[-1]
    paths = write_shards(docs[:n], OUT / "dt-input")
    all_ids = [d["id"] for d in docs[:n]]
    config = {**NEAR_ONLY, "near_dedup": DT_NEAR}
    ours = ray_once(config, paths, OUT / "ray-dt", args.partitions[0], args.cpus)
    ours_removed = set(all_ids) - set(kept_ids(OUT / "ray-dt"))
    dt_seconds, dt_removed = datatrove_near(paths, OUT / "datatrove", args.cpus)
    both = ours_removed & dt_removed
    union = ours_removed | dt_removed
    out = {
        "documents": len(all_ids),
        "ours_seconds": ours["seconds"],
        "datatrove_seconds": dt_seconds,
        "ours_removed": len(ours_removed),
        "datatrove_removed": len(dt_removed),
        "both_removed": len(both),
        "removed_jaccard": len(both) / len(union) if union else 1.0,
        "only_ours": len(ours_removed - dt_removed),
        "only_datatrove": len(dt_removed - ours_removed),
    }
    log(json.dumps(out))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, not recorded")
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--max-mb", type=int, default=24)
    parser.add_argument("--documents", type=int, nargs="+", default=None)
    parser.add_argument("--partitions", type=int, nargs="+", default=None)
    parser.add_argument("--boilerplate", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--parts", default="sweep,huge-bucket,datatrove")
    args = parser.parse_args()
    if args.documents is None:
        args.documents = [1000, 4000] if args.quick else [2000, 8000, 32000]
    if args.partitions is None:
        args.partitions = [2, 8] if args.quick else [2, 8, 32]
    if args.boilerplate is None:
        args.boilerplate = 2000 if args.quick else 20000
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    import ray

    docs = real_documents(args.max_mb)
    log(f"{len(docs)} real documents; backend {lmd.BACKEND}")
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    figures: dict[str, Any] = {"corpus_documents": len(docs)}
    try:
        parts = args.parts.split(",")
        if "sweep" in parts:
            figures["sweep"] = sweep(docs, args)
        if "huge-bucket" in parts:
            figures["huge_bucket"] = huge_bucket(docs, args)
        if "datatrove" in parts:
            figures["datatrove"] = versus_datatrove(docs, args)
    finally:
        ray.shutdown()
    print(json.dumps(figures, indent=2))
    config = {k: v for k, v in vars(args).items() if k != "quick"}
    results_json.record("ray", figures, config=config, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())

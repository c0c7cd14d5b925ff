#!/usr/bin/env python3
"""End to end: our FusedPipeline beside datatrove 0.10.1's LocalPipelineExecutor, and beside
today's stage-by-stage Python glue, on the same JSONL shards (issue 10, section 5).

Rows, each on every corpus:

* ``quality+pii``: datatrove ``JsonlReader -> GopherQualityFilter -> C4QualityFilter ->
  FineWebQualityFilter -> PIIFormatter -> JsonlWriter`` (one task, one worker, in this process)
  vs ours ``ShardReader -> FusedPipeline(quality=gopher_quality+c4_lines+fineweb, pii) -> JSONL``
  with ``threads=1`` and ``threads=2``, and the same through ``luminamoon-data run --format
  jsonl`` (the CLI's main job, called in this process, fresh OUTDIR each run). ``c4_lines`` is
  the like-for-like preset: datatrove's C4 filter removes lines before the next filter sees the
  text. PII on both sides is e-mail and
  public IP only (datatrove's PIIFormatter has no API-key or card rules), both with the tags
  ``<EMAIL>`` / ``<IP_ADDRESS>``, so outputs can be compared byte for byte.
* ``quality+pii+dedup``: the same plus exact and near dedup. datatrove: its multi-stage recipe
  (filters -> JsonlWriter; ExactDedupSignature -> ExactFindDedups -> ExactDedupFilter;
  MinhashDedupSignature -> MinhashDedupBuckets -> MinhashDedupCluster -> MinhashDedupFilter ->
  PIIFormatter -> JsonlWriter), every stage one task at a time, all timed. Ours: the same
  FusedPipeline with ``exact_dedup`` and ``near_dedup`` on, word 5-grams, 14 bands x 8 rows like
  datatrove's ``MinhashConfig`` default (we verify candidates against ``threshold``; datatrove
  drops every LSH bucket match).
* ``fused-vs-glue``: the README "stage by stage" loop (ShardReader -> TextCleaner.clean_batch ->
  QualityFilter.filter_batch -> list comprehensions -> MinHashDeduplicator.filter_batch ->
  PIIMasker.mask_batch -> StringTensor) vs ``FusedPipeline`` with the same stages, both in
  memory, ``threads=1``; their outputs must be identical.

Agreement: which documents each side keeps (by id), and how many kept texts are byte-identical.
Timing: wall-clock and process CPU time (all threads of this process; datatrove's
LocalPipelineExecutor with ``workers=1`` runs its tasks in this process), medians over
``--repeats`` rounds, every job once per round (round-robin), the garbage
collector off inside timed regions, an untimed warm-up run of each of our jobs first, and
datatrove's word tokenizer (spaCy) loaded before its first timed run. Corpora: the real-text
corpus of bench/real_corpus.py (built if missing) and the demo corpus
(luminamoon.data.demo_corpus). Outputs go to bench/out/ (gitignored).

Needs ``pip install -r requirements-bench.txt``. Run: ``python bench/bench_pipeline.py``
(``--quick`` for a smoke run, ``--json PATH`` to save every figure, ``--rows`` to pick rows).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import luminamoon.data as lmd
from _common import gc_paused
from luminamoon.data.demo_corpus import write_demo_corpus

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
STARTED = time.perf_counter()
QUALITY_PRESETS = ["gopher_quality", "c4_lines", "fineweb"]
PII_TAGS = {"EMAIL": "<EMAIL>", "IP_ADDRESS": "<IP_ADDRESS>"}
OUR_PII = {"api_key": False, "credit_card": False, "tags": PII_TAGS}
# datatrove's MinhashConfig default: word 5-grams, 14 buckets of 8 hashes.
OUR_NEAR = {"num_perm": 112, "bands": 14, "rows": 8, "ngram": 5, "threshold": 0.75}
ROWS = ("quality+pii", "quality+pii+dedup", "fused-vs-glue")


def log(message: str) -> None:
    print(f"[{time.perf_counter() - STARTED:7.1f}s] {message}", file=sys.stderr, flush=True)


def dumps(record: dict[str, object]) -> bytes:
    try:
        import orjson

        return orjson.dumps(record)
    except ModuleNotFoundError:
        return json.dumps(record, ensure_ascii=False).encode()


# -- corpora ------------------------------------------------------------------------------------


def corpus_paths(name: str, args: argparse.Namespace) -> list[str]:
    if name == "real":
        folder = OUT / "real"
        if not (folder / "manifest.json").exists():
            import real_corpus

            log("building the real-text corpus (bench/real_corpus.py)...")
            real_corpus.build(
                argparse.Namespace(
                    out=str(folder),
                    max_mb=args.real_mb,
                    max_doc_bytes=8192,
                    shards=8,
                    man_english=400,
                    man_translated=150,
                    seed=0,
                )
            )
        return sorted(str(p) for p in folder.glob("real-*.jsonl"))
    folder = OUT / "demo"
    shutil.rmtree(folder, ignore_errors=True)
    return write_demo_corpus(folder, documents=args.demo_docs, shards=4, seed=0)


def utf8_clean_copy(paths: list[str], folder: Path) -> list[str]:
    """The shards without their lines that are not valid UTF-8. datatrove's JsonlReader reads a
    shard as text and gives up the rest of the shard at the first invalid byte (a warning
    "may be corrupted"); ours skips that one record. For like-for-like rows both sides read
    this copy."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    out = []
    for path in paths:
        lines = Path(path).read_bytes().splitlines(keepends=True)
        kept = []
        for line in lines:
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                continue
            kept.append(line)
        target = folder / Path(path).name
        target.write_bytes(b"".join(kept))
        out.append(str(target))
    return out


def datatrove_reader_documents(folder: Path) -> int:
    """How many documents datatrove's JsonlReader yields from ``folder`` (untimed)."""
    reader = _dt_reader(folder)
    return sum(1 for _ in reader.run(None, 0, 1))


def corpus_size(paths: list[str]) -> tuple[int, int, int]:
    """(records, documents, text bytes) as the reader sees them."""
    reader = lmd.ShardReader(paths)
    docs = 0
    nbytes = 0
    for batch in reader:
        docs += len(batch)
        nbytes += sum(len(t.encode()) for t in batch.texts)
    return reader.stats()["records"], docs, nbytes


# -- datatrove ----------------------------------------------------------------------------------


def _patch_datatrove_xxhash() -> None:
    """datatrove 0.10.1 hashes ``str`` shingles with ``xxhash.xxh64_intdigest(str)``, which
    xxhash 4 (pinned in requirements-dev.txt) rejects ("Strings must be encoded before
    hashing"); xxhash 3 encoded them as UTF-8 itself. Same hash values, same cost."""
    import xxhash
    from datatrove.utils.hashes import xxhash as dt_xxhash

    def xxhash32(data: str | bytes) -> int:
        return xxhash.xxh32_intdigest(data.encode() if isinstance(data, str) else data)

    def xxhash64(data: str | bytes) -> int:
        return xxhash.xxh64_intdigest(data.encode() if isinstance(data, str) else data)

    dt_xxhash.xxhash32 = xxhash32
    dt_xxhash.xxhash64 = xxhash64


def _dt_run(pipeline: list[Any], logs: Path, tasks: int = 1) -> None:
    from datatrove.executor import LocalPipelineExecutor

    LocalPipelineExecutor(
        pipeline=pipeline,
        tasks=tasks,
        workers=1,
        logging_dir=str(logs),
        skip_completed=False,
    ).run()


def _dt_reader(folder: Path) -> Any:
    from datatrove.pipeline.readers import JsonlReader

    return JsonlReader(str(folder), glob_pattern="*.jsonl", compression=None)


def _dt_filters() -> list[Any]:
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
    )

    return [GopherQualityFilter(), C4QualityFilter(), FineWebQualityFilter()]


def _dt_pii() -> Any:
    from datatrove.pipeline.formatters import PIIFormatter

    return PIIFormatter(email_replacement="<EMAIL>", ip_replacement="<IP_ADDRESS>")


def datatrove_quality_pii(inp: Path, work: Path) -> Path:
    from datatrove.pipeline.writers import JsonlWriter

    out = work / "output"
    _dt_run(
        [_dt_reader(inp), *_dt_filters(), _dt_pii(), JsonlWriter(str(out), compression=None)],
        work / "logs",
    )
    return out


def datatrove_with_dedup(inp: Path, work: Path) -> Path:
    from datatrove.pipeline.dedup import (
        ExactDedupConfig,
        ExactDedupFilter,
        ExactDedupSignature,
        ExactFindDedups,
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.writers import JsonlWriter

    filtered, exact_out, out = work / "filtered", work / "exact", work / "output"
    _dt_run(
        [_dt_reader(inp), *_dt_filters(), JsonlWriter(str(filtered), compression=None)],
        work / "logs-1",
    )
    exact_config = ExactDedupConfig(content_getter=lambda doc: doc.text)
    _dt_run(
        [
            _dt_reader(filtered),
            ExactDedupSignature(str(work / "exact-sigs"), exact_config, finder_workers=1),
        ],
        work / "logs-2",
    )
    _dt_run(
        [ExactFindDedups(str(work / "exact-sigs"), str(work / "exact-dups"), exact_config)],
        work / "logs-3",
    )
    _dt_run(
        [
            _dt_reader(filtered),
            ExactDedupFilter(str(work / "exact-dups"), exact_config),
            JsonlWriter(str(exact_out), compression=None),
        ],
        work / "logs-4",
    )
    config = MinhashConfig()
    _dt_run(
        [_dt_reader(exact_out), MinhashDedupSignature(str(work / "mh-sigs"), config=config)],
        work / "logs-5",
    )
    _dt_run(
        [MinhashDedupBuckets(str(work / "mh-sigs"), str(work / "mh-buckets"), config=config)],
        work / "logs-6",
        tasks=config.num_buckets,
    )
    _dt_run(
        [MinhashDedupCluster(str(work / "mh-buckets"), str(work / "mh-remove"), config=config)],
        work / "logs-7",
    )
    _dt_run(
        [
            _dt_reader(exact_out),
            MinhashDedupFilter(str(work / "mh-remove")),
            _dt_pii(),
            JsonlWriter(str(out), compression=None),
        ],
        work / "logs-8",
    )
    return out


def read_output(folder: Path) -> dict[str, str]:
    """id -> text of every JSONL record under ``folder``."""
    out: dict[str, str] = {}
    for path in sorted(folder.rglob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                record = json.loads(line)
                out[str(record["id"])] = record["text"]
    return out


# -- ours ---------------------------------------------------------------------------------------


def ours_to_jsonl(paths: list[str], out: Path, threads: int, stages: dict[str, Any]) -> Path:
    """ShardReader -> FusedPipeline -> JSONL (``{"id", "text"}`` per kept document)."""
    pipeline = lmd.FusedPipeline(threads=threads, **stages)
    reader = lmd.ShardReader(paths, fields=["id"], threads=threads)
    out.mkdir(parents=True, exist_ok=True)
    target = out / "00000.jsonl"
    with target.open("wb") as fh:
        for batch in reader:
            result = pipeline.process(batch)
            ids = result.fields["id"]
            fh.write(
                b"".join(
                    dumps({"id": i, "text": t}) + b"\n"
                    for i, t in zip(ids, result.texts, strict=True)
                )
            )
    return out


def cli_config(stages: dict[str, Any], threads: int) -> str:
    """``stages`` as a ``luminamoon-data run --config`` TOML file."""
    pipeline = lmd.FusedPipeline(threads=threads, **stages)
    return str(pipeline.to_toml())


def ours_cli(paths: list[str], out: Path, threads: int, config: Path) -> Path:
    """``luminamoon-data run ... --format jsonl`` in this process (a fresh OUTDIR: no resume)."""
    from luminamoon.data.cli import main as cli_main

    shutil.rmtree(out, ignore_errors=True)
    argv = [*paths, "-o", str(out), "--format", "jsonl", "--config", str(config)]
    argv += ["--threads", str(threads), "--fields", "id", "--progress", "none"]
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        code = cli_main(["run", *argv])
    if code != 0:
        raise RuntimeError(f"luminamoon-data run exited with {code}")
    return out


def stages_quality_pii() -> dict[str, Any]:
    return {
        "cleaner": False,
        "quality": {"presets": QUALITY_PRESETS},
        "exact_dedup": False,
        "near_dedup": False,
        "pii": OUR_PII,
    }


def stages_with_dedup() -> dict[str, Any]:
    return {**stages_quality_pii(), "exact_dedup": True, "near_dedup": OUR_NEAR}


# The README "stage by stage" example and its fused equivalent, in memory.
GLUE_QUALITY = ("gopher_quality", "fineweb")


def glue(paths: list[str]) -> list[str]:
    reader = lmd.ShardReader(paths, fields=["id"], threads=1)
    cleaner = lmd.TextCleaner(threads=1)
    quality = lmd.QualityFilter(GLUE_QUALITY, threads=1)
    near = lmd.MinHashDeduplicator(threshold=0.8, threads=1)
    pii = lmd.PIIMasker(threads=1)
    out: list[str] = []
    for batch in reader:
        texts = cleaner.clean_batch(batch.texts)
        keep = quality.filter_batch(texts).keep
        texts = [t for t, k in zip(texts, keep, strict=True) if k]
        texts = [t for t, k in zip(texts, near.filter_batch(texts), strict=True) if k]
        clean = lmd.StringTensor(pii.mask_batch(texts).texts)
        out.extend(clean)  # (untimed in spirit: a trainer would consume `clean` here)
    return out


def glue_breakdown(paths: list[str]) -> dict[str, float]:
    """Seconds per step of one glue run (indicative: one run, timers around each call)."""
    reader = lmd.ShardReader(paths, fields=["id"], threads=1)
    cleaner = lmd.TextCleaner(threads=1)
    quality = lmd.QualityFilter(GLUE_QUALITY, threads=1)
    near = lmd.MinHashDeduplicator(threshold=0.8, threads=1)
    pii = lmd.PIIMasker(threads=1)
    spent: dict[str, float] = dict.fromkeys(
        ("read", "batch.texts", "clean", "quality", "select", "minhash", "pii", "tensor"), 0.0
    )
    clock = time.perf_counter
    with gc_paused():
        iterator = iter(reader)
        while True:
            t0 = clock()
            batch = next(iterator, None)
            t1 = clock()
            spent["read"] += t1 - t0
            if batch is None:
                break
            texts = batch.texts
            t2 = clock()
            cleaned = cleaner.clean_batch(texts)
            t3 = clock()
            keep = quality.filter_batch(cleaned).keep
            t4 = clock()
            kept = [t for t, k in zip(cleaned, keep, strict=True) if k]
            t5 = clock()
            mask = near.filter_batch(kept)
            t6 = clock()
            kept = [t for t, k in zip(kept, mask, strict=True) if k]
            t7 = clock()
            masked = pii.mask_batch(kept).texts
            t8 = clock()
            lmd.StringTensor(list(masked))
            t9 = clock()
            spent["batch.texts"] += t2 - t1
            spent["clean"] += t3 - t2
            spent["quality"] += t4 - t3
            spent["select"] += (t5 - t4) + (t7 - t6)
            spent["minhash"] += t6 - t5
            spent["pii"] += t8 - t7
            spent["tensor"] += t9 - t8
    return spent


def fused_pipeline(threads: int) -> Any:
    """The glue's stages (cleaner, quality, near dedup, PII) as one FusedPipeline."""
    return lmd.FusedPipeline(
        cleaner=True,
        quality=list(GLUE_QUALITY),
        exact_dedup=False,
        near_dedup={"threshold": 0.8},
        pii=True,
        threads=threads,
    )


def fused(paths: list[str], threads: int = 1) -> list[str]:
    reader = lmd.ShardReader(paths, fields=["id"], threads=threads)
    pipeline = fused_pipeline(threads)
    out: list[str] = []
    for batch in reader:
        out.extend(pipeline.process(batch).texts)
    return out


def python_copies(paths: list[str]) -> dict[str, Any]:
    """Python-heap bytes each step allocates and keeps (tracemalloc), and how many of its
    output texts are new ``str`` objects: the glue's copies that live in Python objects. Native
    buffers (std::string, arenas, StringTensor payloads) are not traced; docs/benchmarks.md
    counts those from the code."""
    import tracemalloc

    batches = list(lmd.ShardReader(paths, fields=["id"], threads=1))
    text_bytes = sum(len(t.encode()) for b in batches for t in b.texts)
    cleaner = lmd.TextCleaner(threads=1)
    quality = lmd.QualityFilter(GLUE_QUALITY, threads=1)
    near = lmd.MinHashDeduplicator(threshold=0.8, threads=1)
    pii = lmd.PIIMasker(threads=1)
    steps: dict[str, list[int]] = {}
    keep_alive: list[Any] = []

    def step(name: str, fn: Callable[[], Any], new: Callable[[Any], int]) -> Any:
        before = tracemalloc.get_traced_memory()[0]
        out = fn()
        after = tracemalloc.get_traced_memory()[0]
        keep_alive.append(out)
        entry = steps.setdefault(name, [0, 0])
        entry[0] += after - before
        entry[1] += new(out)
        return out

    gc.collect()
    tracemalloc.start()
    for batch in lmd.ShardReader(paths, fields=["id"], threads=1):
        texts = step("batch.texts (reader -> list[str])", lambda b=batch: b.texts, len)
        cleaned = step(
            "TextCleaner.clean_batch",
            lambda t=texts: cleaner.clean_batch(t),
            lambda out, t=texts: sum(a is not b for a, b in zip(out, t, strict=True)),
        )
        keep = step(
            "QualityFilter.filter_batch", lambda c=cleaned: quality.filter_batch(c).keep, len
        )
        kept = [t for t, k in zip(cleaned, keep, strict=True) if k]
        mask = step("MinHashDeduplicator.filter_batch", lambda k=kept: near.filter_batch(k), len)
        kept = [t for t, k in zip(kept, mask, strict=True) if k]
        masked = step(
            "PIIMasker.mask_batch",
            lambda k=kept: pii.mask_batch(k).texts,
            lambda out, k=kept: sum(a is not b for a, b in zip(out, k, strict=True)),
        )
        step("StringTensor(list)", lambda m=masked: lmd.StringTensor(list(m)), len)
    glue_steps = {k: {"bytes": v[0], "new_objects_or_items": v[1]} for k, v in steps.items()}
    steps.clear()
    keep_alive.clear()
    gc.collect()
    pipeline = fused_pipeline(threads=1)
    for batch in lmd.ShardReader(paths, fields=["id"], threads=1):
        step("FusedPipeline.process", lambda b=batch: pipeline.process(b), len)
    fused_steps = {k: {"bytes": v[0], "kept": v[1]} for k, v in steps.items()}
    tracemalloc.stop()
    keep_alive.clear()
    return {
        "documents": sum(len(b) for b in batches),
        "text_bytes": text_bytes,
        "glue": glue_steps,
        "fused": fused_steps,
    }


# -- driver -------------------------------------------------------------------------------------


def agreement(theirs: dict[str, str], ours: dict[str, str], all_ids: list[str]) -> dict[str, int]:
    both = set(theirs) & set(ours)
    return {
        "documents": len(all_ids),
        "both_keep": len(both),
        "both_drop": sum(1 for i in all_ids if i not in theirs and i not in ours),
        "only_datatrove_keeps": len(set(theirs) - set(ours)),
        "only_ours_keeps": len(set(ours) - set(theirs)),
        "same_text": sum(1 for i in both if theirs[i] == ours[i]),
    }


def reader_ids(paths: list[str]) -> list[str]:
    ids: list[str] = []
    for batch in lmd.ShardReader(paths, fields=["id"]):
        ids.extend(str(i) for i in batch.fields["id"])
    return ids


def time_jobs(
    jobs: dict[str, Callable[[], Any]], repeats: int, warmup: bool
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, Any]]:
    times: dict[str, list[float]] = {k: [] for k in jobs}
    cpu: dict[str, list[float]] = {k: [] for k in jobs}
    results: dict[str, Any] = {}
    if warmup:
        for label, job in jobs.items():
            if label == "datatrove":
                # Its word tokenizer (spaCy) is loaded once per process and cached: load it here
                # instead of spending a whole untimed datatrove run.
                from datatrove.utils.word_tokenizers import load_word_tokenizer

                load_word_tokenizer("en").word_tokenize("Warm up the tokenizer, please.")
            else:
                job()
    for r in range(repeats):
        for label, job in jobs.items():
            with gc_paused():
                start, start_cpu = time.perf_counter(), time.process_time()
                results[label] = job()
                seconds = time.perf_counter() - start
                cpu_seconds = time.process_time() - start_cpu
            times[label].append(seconds)
            cpu[label].append(cpu_seconds)
            log(f"  round {r + 1}/{repeats} {label}: {seconds:.2f} s (CPU {cpu_seconds:.2f} s)")
    return times, cpu, results


def bench_row(
    row: str, corpus: str, paths: list[str], size: tuple[int, int, int], args: argparse.Namespace
) -> dict[str, Any]:
    records, docs, nbytes = size
    inp = Path(paths[0]).parent
    notes: dict[str, Any] = {}
    if row != "fused-vs-glue" and corpus == "demo" and not args.skip_datatrove:
        notes["datatrove_reader_documents_on_original"] = datatrove_reader_documents(inp)
        notes["our_reader_documents_on_original"] = docs
        paths = utf8_clean_copy(paths, OUT / "demo-utf8")
        inp = Path(paths[0]).parent
        records, docs, nbytes = size = corpus_size(paths)
        notes["input"] = "demo shards without their invalid-UTF-8 lines (both sides)"
    work = OUT / "runs" / f"{corpus}-{row}"
    shutil.rmtree(work, ignore_errors=True)
    jobs: dict[str, Callable[[], Any]] = {}
    if row in ("quality+pii", "quality+pii+dedup"):
        dt_fn = datatrove_quality_pii if row == "quality+pii" else datatrove_with_dedup
        stages = stages_quality_pii() if row == "quality+pii" else stages_with_dedup()
        counter = iter(range(1_000_000))

        def dt_job() -> Path:
            d = work / f"datatrove-{next(counter)}"
            return dt_fn(inp, d)

        if not args.skip_datatrove:
            jobs["datatrove"] = dt_job
        for t in args.threads:
            jobs[f"ours_t{t}"] = lambda t=t: ours_to_jsonl(paths, work / f"ours-t{t}", t, stages)
        if args.cli:
            work.mkdir(parents=True, exist_ok=True)
            for t in args.threads:
                config = work / f"pipeline-t{t}.toml"
                config.write_text(cli_config(stages, t))
                jobs[f"cli_t{t}"] = lambda t=t, c=config: ours_cli(paths, work / f"cli-t{t}", t, c)
    else:
        jobs["glue_t1"] = lambda: glue(paths)
        jobs["fused_t1"] = lambda: fused(paths, 1)
        if 2 in args.threads:
            jobs["fused_t2"] = lambda: fused(paths, 2)
    log(f"{corpus} / {row}: {docs} documents, {nbytes / 1e6:.2f} MB")
    times, cpu, results = time_jobs(jobs, args.repeats, warmup=not args.quick)
    figures: dict[str, Any] = {}
    for label, secs in times.items():
        median = statistics.median(secs)
        figures[label] = {
            "seconds": secs,
            "cpu_seconds": cpu[label],
            "median_s": median,
            "median_cpu_s": statistics.median(cpu[label]),
            "docs_per_s": docs / median,
            "mb_per_s": nbytes / 1e6 / median,
        }
    entry: dict[str, Any] = {
        "row": row,
        "corpus": corpus,
        "records": records,
        "documents": docs,
        "bytes": nbytes,
        "figures": figures,
        **notes,
    }
    if row == "fused-vs-glue":
        entry["identical_output"] = results["glue_t1"] == results["fused_t1"]
        entry["kept"] = {"glue": len(results["glue_t1"]), "fused": len(results["fused_t1"])}
        entry["fused_over_glue"] = figures["glue_t1"]["median_s"] / figures["fused_t1"]["median_s"]
        entry["fused_over_glue_cpu"] = (
            figures["glue_t1"]["median_cpu_s"] / figures["fused_t1"]["median_cpu_s"]
        )
        entry["glue_breakdown_s"] = glue_breakdown(paths)
    else:
        ids = reader_ids(paths)
        ours = read_output(results[f"ours_t{args.threads[0]}"])
        for t in args.threads[1:]:
            if read_output(results[f"ours_t{t}"]) != ours:
                entry[f"ours_t{t}_differs_from_t{args.threads[0]}"] = True
        for t in args.threads if args.cli else ():
            entry[f"cli_t{t}_same_output_as_ours_t{args.threads[0]}"] = (
                read_output(results[f"cli_t{t}"]) == ours
            )
        entry["ours_kept"] = len(ours)
        if "datatrove" in results:
            theirs = read_output(results["datatrove"])
            entry["datatrove_kept"] = len(theirs)
            entry["agreement"] = agreement(theirs, ours, ids)
            dt_s = figures["datatrove"]["median_s"]
            dt_cpu = figures["datatrove"]["median_cpu_s"]
            for label in figures:
                if label.startswith(("ours_t", "cli_t")):
                    entry[f"{label}_over_datatrove"] = dt_s / figures[label]["median_s"]
                    entry[f"{label}_over_datatrove_cpu"] = dt_cpu / figures[label]["median_cpu_s"]
        if 1 in args.threads and 2 in args.threads:
            entry["t2_over_t1"] = figures["ours_t1"]["median_s"] / figures["ours_t2"]["median_s"]
    log(json.dumps({k: v for k, v in entry.items() if k != "figures"}))
    return entry


def print_tables(entries: list[dict[str, Any]]) -> None:
    print("\n| corpus | row | job | docs/s | MB/s | median s | median CPU s | ratio |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for e in entries:
        for label, f in e["figures"].items():
            ratio = ""
            if label.startswith(("ours_t", "cli_t")) and f"{label}_over_datatrove" in e:
                ratio = (
                    f"{e[f'{label}_over_datatrove']:.1f}x datatrove "
                    f"(CPU time: {e[f'{label}_over_datatrove_cpu']:.1f}x)"
                )
            if label == "ours_t2" and "t2_over_t1" in e:
                ratio += f"; {e['t2_over_t1']:.2f}x t1"
            if label == "fused_t1":
                ratio = (
                    f"{e['fused_over_glue']:.2f}x glue (CPU time: {e['fused_over_glue_cpu']:.2f}x)"
                )
            print(
                f"| {e['corpus']} | {e['row']} | {label} | {f['docs_per_s']:,.0f} | "
                f"{f['mb_per_s']:.2f} | {f['median_s']:.3f} | {f['median_cpu_s']:.3f} | {ratio} |"
            )
    for e in entries:
        if "agreement" in e:
            print(f"agreement {e['corpus']} / {e['row']}: {e['agreement']}")
        if "identical_output" in e:
            print(f"fused == glue on {e['corpus']}: {e['identical_output']} ({e['kept']})")
            steps = ", ".join(f"{k} {v:.3f}" for k, v in e["glue_breakdown_s"].items())
            print(f"glue seconds per step on {e['corpus']} (one run): {steps}")
        if "datatrove_reader_documents_on_original" in e:
            print(
                f"{e['corpus']} / {e['row']}: on the original shards datatrove's reader yields "
                f"{e['datatrove_reader_documents_on_original']} documents, ours "
                f"{e['our_reader_documents_on_original']}; both sides read: {e['input']}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", nargs="+", default=["real", "demo"])
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=ROWS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--demo-docs", type=int, default=4000)
    parser.add_argument("--real-mb", type=float, default=8.0)
    parser.add_argument("--skip-datatrove", action="store_true")
    parser.add_argument(
        "--no-cli", dest="cli", action="store_false", help="skip the `luminamoon-data run` jobs"
    )
    parser.add_argument("--quick", action="store_true", help="200 demo documents, 1 round")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--copies", action="store_true", help="also measure the Python-heap copies per step"
    )
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.demo_docs, args.corpora = 1, 200, ["demo"]
    os.environ.setdefault("LOGURU_LEVEL", "WARNING")
    try:
        from datatrove.utils.logging import logger

        logger.remove()
        logger.add(sys.stderr, level="WARNING")
        _patch_datatrove_xxhash()
    except ModuleNotFoundError:
        if not args.skip_datatrove:
            raise
    log(f"backend {lmd.BACKEND}, python {platform.python_version()}, load {os.getloadavg()}")
    entries = []
    for corpus in args.corpora:
        paths = corpus_paths(corpus, args)
        size = corpus_size(paths)
        for row in args.rows:
            entries.append(bench_row(row, corpus, paths, size, args))
    print_tables(entries)
    copies = None
    if args.copies:
        copies = python_copies(corpus_paths("demo", args))
        print("\nPython-heap allocations kept per step (tracemalloc), demo corpus:")
        print(json.dumps(copies, indent=2))
    if args.json:
        meta = {
            "backend": lmd.BACKEND,
            "python": platform.python_version(),
            "load_after": os.getloadavg(),
            "total_s": time.perf_counter() - STARTED,
        }
        real_manifest = OUT / "real" / "manifest.json"
        if real_manifest.exists():
            meta["real_corpus"] = json.loads(real_manifest.read_text())
        report = {"meta": meta, "entries": entries, "python_copies": copies}
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()

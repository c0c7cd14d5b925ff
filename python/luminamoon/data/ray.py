"""``luminamoon-data run --engine ray``: the same pipeline on a Ray cluster, the same result.

``run(config, inputs, output, ...)`` takes the pipeline config and options of the local
``luminamoon.data.run.run`` and produces the same kept documents, in the same global order, with
the same text and the same per-stage counters (docs/ray.md). Stages:

A. **per shard, on an actor pool** (``map_batches`` with ``ActorPoolStrategy``; one
   ``FusedPipeline`` per actor, built once): read the shard, run clean + quality over Arrow
   batches, write the kept documents to a per-shard Arrow IPC file under
   ``OUTDIR/.luminamoon/ray/stage/``, and return small Arrow rows per document: its global
   position (shard index, record index), the XXH3-64 of its text and its MinHash signature.
B. **exact dedup**: the rows are hash-partitioned by XXH3-64 (``groupby(...).map_groups``); in
   each group every position but the smallest is a duplicate ("first occurrence wins").
C. **near dedup**: every surviving document gives one band key per LSH band (band index + the
   stored values of the band's rows); the keys are hash-partitioned and buckets with two or more
   members come back to the driver, which decides in global position order: a document is
   dropped when an earlier *kept* document of one of its buckets is a verified near-duplicate
   (the ``MinHashDeduplicator`` estimator: ``min_matches`` equal stored values). This is the
   streaming rule of the local run; each document is checked only against the kept documents of
   its buckets, so a bucket of a million near-identical boilerplate pages costs a million checks
   against one representative, not 5·10^11 pairs.
D. **per shard, tasks**: drop the duplicates, run PII masking, write the shard's output file
   (temporary name + rename, named by the shard, so a retried task replaces its own file) into a
   staging folder; when every shard is written the files move into ``OUTDIR`` and
   ``report.json`` is written last. A failed run leaves neither data files nor a report in
   ``OUTDIR``.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._ffi import BACKEND, impl
from ._optional import install_hint
from .errors import ConfigError, RunError
from .pipeline import STAGES, FusedPipeline
from .run import (
    RunSettings,
    _json_bytes,
    _rows_of,
    _write_atomic,
    build_pipeline_config,
    check_output_options,
)
from .run_inputs import InputStream, expand_inputs, preflight_text_field, shard_size
from .run_report import (
    REPORT_NAME,
    STATE_DIR,
    add_counts,
    build_report,
    new_totals,
    rule_counts,
)
from .serialization import EXTENSIONS, ShardedWriter, to_arrow_table

# pyarrow is a core dependency without type stubs: typed as Any like elsewhere in the package.
pa: Any = importlib.import_module("pyarrow")
pc: Any = importlib.import_module("pyarrow.compute")

__all__ = ["RAY_STATE", "require_ray", "run"]

RAY_STATE = "ray"  # OUTDIR/.luminamoon/ray: the stage files and the staged output
PIPELINE_CONFIG_NAME = "pipeline.toml"
EXAMPLES_PER_RULE = 3
EXAMPLES_PER_ISSUE = 5
_SHARD_BITS = 40  # position = shard << 40 | record: 2^23 shards of 2^40 records
_RECORD = "__record"
_WATCH_SECONDS = 0.25  # how often the driver looks for lost nodes while the stages run


def require_ray() -> Any:
    """The ``ray`` module, or a ``RunError`` saying how to install it."""
    try:
        ray = importlib.import_module("ray")
        importlib.import_module("ray.data")
    except ImportError as exc:
        raise RunError(
            f"--engine ray needs Ray Data, which is not installed ({exc}): {install_hint('ray')}"
        ) from None
    return ray


def _position(shard: int, record: Any) -> Any:
    return (shard << _SHARD_BITS) | record


# =============================================================================================
# Stage A: read + clean + quality, per shard, on an actor pool
# =============================================================================================


def _stage_path(state: str, shard: int) -> str:
    return os.path.join(state, "stage", f"{shard:05d}.arrow")


def _write_ipc_atomic(table: Any, path: str) -> None:
    temp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.partial")
    with pa.OSFile(temp, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    with open(temp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(temp, path)


def _fault(spec: Mapping[str, Any] | None, stage: str, shard: int) -> None:
    """Test hook: the first attempt of ``stage`` on a shard of ``spec[stage]`` kills its own
    process (a worker lost mid-task); a marker file in ``spec['dir']`` lets the retry through.
    A shard of ``spec['hold']`` (stage A) writes ``held-<shard>`` holding the Ray node id it runs
    on, then waits for a ``release`` file (a test removes that node meanwhile)."""
    if spec and stage == "stage" and shard in spec.get("hold", ()):
        held = os.path.join(spec["dir"], f"held-{shard}")
        if not os.path.exists(held):
            node = importlib.import_module("ray").get_runtime_context().get_node_id()
            with open(held + ".partial", "w") as f:
                f.write(node)
            os.replace(held + ".partial", held)
        while not os.path.exists(os.path.join(spec["dir"], "release")):
            time.sleep(0.05)
    if not spec or shard not in spec.get(stage, ()):
        return
    marker = os.path.join(spec["dir"], f"killed-{stage}-{shard}")
    if not os.path.exists(marker):
        with open(marker, "w") as f:
            f.write(str(os.getpid()))
        os._exit(1)


class _ShardStage:
    """One per actor: the clean + quality pipeline and the signature builder, built once."""

    def __init__(
        self,
        *,
        shards: list[str],
        state: str,
        text_field: str,
        fields: list[str],
        batch_size: int,
        threads: int,
        pipeline: dict[str, Any],
        backend: str,
        fault: dict[str, Any] | None,
    ) -> None:
        if backend != BACKEND:
            raise RunError(
                f"the Ray worker runs the {BACKEND} backend but the driver the {backend} one; "
                "start the cluster with the same LUMINAMOON_FORCE_FALLBACK setting"
            )
        self.shards = shards
        self.state = state
        self.text_field = text_field
        self.fields = fields
        self.batch_size = batch_size
        self.threads = threads
        self.fault = fault
        self.exact = pipeline.get("exact_dedup") not in (None, False)
        near = pipeline.get("near_dedup")
        self.near = impl.MinHashDeduplicator(threads=threads, **near) if near else None
        first = {**pipeline, "exact_dedup": False, "near_dedup": False, "pii": False}
        self.pipeline = FusedPipeline.from_config(first, threads=threads)

    def __call__(self, batch: Any) -> Any:
        tables = [self._shard(int(s)) for s in batch.column("shard").to_pylist()]
        return pa.concat_tables(tables)

    def _shard(self, shard: int) -> Any:
        _fault(self.fault, "stage", shard)
        path = self.shards[shard]
        try:
            return self._read(shard, path)
        except Exception as exc:  # reported by the driver, naming the shard
            return _meta_table(
                [], [], [], None, _info(shard, {"error": f"{type(exc).__name__}: {exc}"})
            )

    def _read(self, shard: int, path: str) -> Any:
        stream = InputStream(
            [path],
            text_field=self.text_field,
            fields=self.fields,
            batch_size=self.batch_size,
            threads=self.threads,
            start=impl.StreamCoordinate(),
        )
        counters: dict[str, dict[str, int]] = {}
        drops: dict[str, dict[str, dict[str, Any]]] = {}
        issues: dict[str, dict[str, Any]] = {}
        kept_tables = []
        records: list[Any] = []
        hashes: list[Any] = []
        signatures: list[Any] = []
        id_field = ("id" if "id" in self.fields else self.fields[0]) if self.fields else None
        for batch in stream:
            for issue in batch.issues:
                entry = issues.setdefault(issue["kind"], {"count": 0, "examples": []})
                entry["count"] += 1
                if len(entry["examples"]) < EXAMPLES_PER_ISSUE:
                    entry["examples"].append(issue["where"])
            if batch.documents is None:
                continue
            result = (
                self.pipeline.process(batch.documents)
                if batch.fields is None
                else self.pipeline.process(batch.documents, fields=batch.fields)
            )
            for stage, values in result.counters.items():
                add_counts(counters.setdefault(stage, {}), values)
            if batch.records is not None:
                batch_records = np.asarray(batch.records, dtype=np.int64)
            else:
                batch_records = np.fromiter(
                    (c.global_row_idx - 1 for c in batch.documents.coordinates),  # type: ignore[attr-defined]
                    dtype=np.int64,
                )
            self._drops(drops, batch, result, batch_records, id_field)
            if not len(result):
                continue
            kept_records = batch_records[np.asarray(result.indices, dtype=np.int64)]
            table = to_arrow_table(result)
            kept_tables.append(table.append_column(_RECORD, pa.array(kept_records)))
            records.append(kept_records)
            texts = table.column("text").combine_chunks()
            if self.exact:
                hashes.append(_xxh3_column(texts))
            if self.near is not None:
                signatures.append(self.near.signatures(texts))
        reader = stream.reader_stats()
        os.makedirs(os.path.dirname(_stage_path(self.state, shard)), exist_ok=True)
        if kept_tables:
            table = (
                kept_tables[0]
                if len(kept_tables) == 1
                else pa.concat_tables(kept_tables, promote_options="default")
            )
            _write_ipc_atomic(table, _stage_path(self.state, shard))
        info = {
            "counters": counters,
            "drops": drops,
            "issues": issues,
            "reader": reader,
            "records": int(reader.get("records", 0)),
        }
        return _meta_table(
            records,
            hashes,
            signatures,
            self.near.num_perm if self.near is not None else None,
            _info(shard, info),
            shard=shard,
        )

    def _drops(
        self,
        drops: dict[str, dict[str, dict[str, Any]]],
        batch: Any,
        result: Any,
        batch_records: Any,
        id_field: str | None,
    ) -> None:
        counts = rule_counts(result.counters)
        wanted = set()
        for (stage, rule), count in counts.items():
            entry = drops.setdefault(stage, {}).setdefault(rule, {"count": 0, "examples": []})
            entry["count"] += count
            if len(entry["examples"]) < EXAMPLES_PER_RULE:
                wanted.add((stage, rule))
        if not wanted:
            return
        reasons = result.reasons
        for index in [int(i) for i in (result.dropped_by != 0).nonzero()[0]]:
            reason = reasons[index]
            key = (reason.stage, reason.rule)
            if key not in wanted:
                continue
            entry = drops[reason.stage][reason.rule]
            example: dict[str, Any] = {}
            if id_field is not None:
                values = (
                    batch.fields[id_field]
                    if batch.fields is not None
                    else batch.documents.fields[id_field]
                )
                example[id_field] = values[index]
            example["record"] = int(batch_records[index])  # shard-local; made global later
            entry["examples"].append(example)
            if len(entry["examples"]) >= EXAMPLES_PER_RULE:
                wanted.discard(key)
                if not wanted:
                    return


def _xxh3_column(texts: Any) -> Any:
    """XXH3-64 of each string of an Arrow string array (over its UTF-8 bytes, no decoding)."""
    if not pa.types.is_string(texts.type):
        texts = texts.cast(pa.string())
    buffers = texts.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int32)[
        texts.offset : texts.offset + len(texts) + 1
    ]
    data = memoryview(buffers[2]) if buffers[2] is not None else memoryview(b"")
    hash_of = impl.xxh3_64
    bounds = offsets.tolist()
    return np.fromiter(
        (hash_of(data[bounds[i] : bounds[i + 1]]) for i in range(len(texts))),
        dtype=np.uint64,
        count=len(texts),
    )


def _info(shard: int, info: Mapping[str, Any]) -> dict[str, Any]:
    return {"shard": shard, **info}


def _meta_table(
    records: list[Any],
    hashes: list[Any],
    signatures: list[Any],
    num_perm: int | None,
    info: Mapping[str, Any],
    *,
    shard: int = 0,
) -> Any:
    """Rows of positions, hashes and signatures, then one row holding the shard's summary."""
    rec = np.concatenate(records) if records else np.zeros(0, dtype=np.int64)
    n = len(rec)
    pos = _position(shard, rec.astype(np.int64))
    h = np.concatenate(hashes) if hashes else np.zeros(n, dtype=np.uint64)
    if signatures and num_perm:
        sig = np.ascontiguousarray(np.concatenate(signatures).astype("<u4"))
        width = num_perm * 4
    else:
        sig = np.zeros((n, 1), dtype="<u4")
        width = 4
    sig_column = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(width), n, [None, pa.py_buffer(sig.tobytes())]
    )
    docs = pa.table(
        {
            "pos": pa.array(pos, pa.int64()),
            "hash": pa.array(h, pa.uint64()),
            "sig": sig_column,
            "info": pa.nulls(n, pa.string()),
        }
    )
    summary = pa.table(
        {
            "pos": pa.array([-1], pa.int64()),
            "hash": pa.array([0], pa.uint64()),
            "sig": pa.array([b"\0" * width], pa.binary(width)),
            "info": pa.array([json.dumps(info)], pa.string()),
        }
    )
    return pa.concat_tables([docs, summary])


# =============================================================================================
# Stage B and C: the shuffles
# =============================================================================================


def _exact_group(group: Any) -> Any:
    """One XXH3-64 group: every position but the smallest is a duplicate."""
    pos = group.column("pos").to_numpy()
    if len(pos) < 2:
        return pa.table({"pos": pa.array([], pa.int64())})
    keep = pos.min()
    return pa.table({"pos": pa.array(pos[pos != keep], pa.int64())})


def _band_rows(batch: Any, *, bands: int, rows: int, mask: int, num_perm: int) -> Any:
    """Per document, one row per band: key = band index (2 bytes) + the band's stored values."""
    n = batch.num_rows
    sig_col = batch.column("sig").combine_chunks()
    raw = np.frombuffer(sig_col.buffers()[1], dtype="<u4")
    start = sig_col.offset * num_perm
    sig = raw[start : start + n * num_perm].reshape(n, num_perm) & np.uint32(mask)
    width = 4 + rows * 4  # band index as a u32, then the values
    keys = np.empty((bands, n, 1 + rows), dtype="<u4")
    for b in range(bands):
        keys[b, :, 0] = b
        keys[b, :, 1:] = sig[:, b * rows : (b + 1) * rows]
    key_column = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(width), bands * n, [None, pa.py_buffer(keys.tobytes())]
    )
    pos = np.tile(batch.column("pos").to_numpy(), bands)
    return pa.table({"key": key_column, "pos": pa.array(pos, pa.int64())})


def _bucket_group(group: Any) -> Any:
    """One band bucket: its members when there are two or more (else nothing to decide)."""
    if group.num_rows < 2:
        return group.slice(0, 0)
    return group


def _resolve_near(
    candidates: Any, stored: Mapping[int, Any], min_matches: int
) -> tuple[list[int], dict[str, int]]:
    """The streaming rule over the buckets, in global position order (see the module doc)."""
    if candidates.num_rows == 0:
        return [], {"candidates": 0, "buckets": 0, "checks": 0, "largest_bucket": 0}
    encoded = pc.dictionary_encode(candidates.column("key")).combine_chunks()
    bucket = encoded.indices.to_numpy()
    pos = candidates.column("pos").to_numpy()
    order = np.lexsort((bucket, pos))
    pos, bucket = pos[order], bucket[order]
    docs, starts = np.unique(pos, return_index=True)
    ends = [*starts[1:].tolist(), len(pos)]
    rows = np.stack([stored[int(p)] for p in docs]) if len(docs) else None
    kept: dict[int, list[int]] = {}
    dropped: list[int] = []
    checks = 0
    for i, p in enumerate(docs.tolist()):
        my_buckets = bucket[starts[i] : ends[i]].tolist()
        row = rows[i]  # type: ignore[index]
        seen: set[int] = set()
        duplicate = False
        for b in my_buckets:
            members = [k for k in kept.get(b, ()) if k not in seen]
            if not members:
                continue
            seen.update(members)
            checks += len(members)
            equal = (rows[members] == row).sum(axis=1)  # type: ignore[index]
            if int(equal.max()) >= min_matches:
                duplicate = True
                break
        if duplicate:
            dropped.append(p)
        else:
            for b in my_buckets:
                kept.setdefault(b, []).append(i)
    sizes = np.bincount(bucket)
    return dropped, {
        "candidates": len(docs),
        "buckets": int((sizes > 0).sum()),
        "checks": checks,
        "largest_bucket": int(sizes.max()),
    }


# =============================================================================================
# Stage D: drop, PII, write
# =============================================================================================


def _write_shard(
    batch: Any,
    *,
    state: str,
    fmt: str,
    row_group_size: int,
    threads: int,
    pii: Any,
    dropped: Any,
    backend: str,
    fault: dict[str, Any] | None,
) -> Any:
    ray = importlib.import_module("ray")
    if backend != BACKEND:
        raise RunError(
            f"the Ray worker runs the {BACKEND} backend but the driver the {backend} one"
        )
    if isinstance(dropped, ray.ObjectRef):
        dropped = ray.get(dropped)
    out = []
    for shard in batch.column("shard").to_pylist():
        path = _stage_path(state, shard)
        table = _read_ipc(path)
        gone = dropped.get(shard)
        if gone is not None and len(gone):
            mask = ~np.isin(table.column(_RECORD).to_numpy(), gone)
            table = table.filter(pa.array(mask))
        table = table.drop_columns([_RECORD])
        pipeline = FusedPipeline.from_config(
            {
                "cleaner": False,
                "quality": False,
                "exact_dedup": False,
                "near_dedup": False,
                "pii": pii,
            },
            threads=threads,
        )
        directory = os.path.join(state, "out")
        os.makedirs(directory, exist_ok=True)
        options = {"row_group_size": row_group_size} if fmt in ("parquet", "ipc") else {}
        writer = ShardedWriter(
            directory,
            format=fmt,
            template="{shard:05d}.{ext}",
            start_shard=shard,
            **options,
        )
        counters: dict[str, dict[str, int]] = {}
        try:
            for start in range(0, table.num_rows, row_group_size):
                part = table.slice(start, row_group_size)
                result = pipeline.process(part.column("text").combine_chunks())
                for stage, values in result.counters.items():
                    add_counts(counters.setdefault(stage, {}), values)
                columns: dict[str, Any] = {"text": result.texts}
                for name in part.column_names[1:]:
                    columns[name] = part.column(name)
                writer.write(_table_like(part, columns))
                if start == 0:  # the test hook dies with a half-written temporary file
                    _fault(fault, "write", shard)
            written = writer.finish()
        except BaseException:
            writer.abort()
            raise
        out.append(
            json.dumps(
                {
                    "shard": shard,
                    "counters": counters,
                    "file": None if written is None else os.path.basename(written),
                }
            )
        )
    return pa.table({"info": pa.array(out, pa.string())})


def _table_like(part: Any, columns: Mapping[str, Any]) -> Any:
    """The stage file's columns with the masked text (the schema metadata as the local run's)."""
    text = pa.array(columns["text"], type=pa.string())
    table = part.set_column(0, "text", text)
    return to_arrow_table(table)


def _read_ipc(path: str) -> Any:
    with pa.memory_map(path) as source:
        return pa.ipc.open_file(source).read_all()


# =============================================================================================
# The driver
# =============================================================================================


def _connect(ray: Any, address: str | None) -> bool:
    """Joins the cluster at ``address`` (or starts a local one); True when started here.

    A ``host:port`` address is probed first (5 s), so an address that does not answer is an
    error at once, also in a process already connected to a Ray (whose connection is used)."""
    if address not in (None, "", "auto", "local") and not str(address).startswith("ray://"):
        host, _, port = str(address).rpartition(":")
        try:
            with socket.create_connection((host or "127.0.0.1", int(port)), timeout=5):
                pass
        except (OSError, ValueError) as exc:
            raise RunError(
                f"the Ray cluster at '{address}' does not answer ({exc}); check the address "
                "(`ray status` on the head node prints it) or use --address auto on a node of "
                "the cluster"
            ) from None
    if ray.is_initialized():
        return False
    try:
        ray.init(
            address=None if address in (None, "", "local") else address,
            include_dashboard=False,
            log_to_driver=False,
        )
    except (ConnectionError, RuntimeError, TimeoutError, ValueError) as exc:
        raise RunError(f"cannot connect to the Ray cluster at '{address}': {exc}") from None
    return True


def _collect(ray: Any, ds: Any) -> Any:
    refs = ds.to_arrow_refs()
    tables = [t for t in ray.get(refs) if t.num_rows]
    if not tables:
        return None
    return pa.concat_tables(tables, promote_options="default")


def _check_outdir(outdir: Path, ext: str) -> None:
    try:
        outdir.mkdir(parents=True, exist_ok=True)
        (outdir / STATE_DIR).mkdir(exist_ok=True)
        probe = outdir / STATE_DIR / ".write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise RunError(
            f"cannot write to the output directory '{outdir}': {exc.strerror or exc}"
        ) from None
    leftovers = sorted(
        p.name
        for p in outdir.iterdir()
        if p.name == REPORT_NAME or (p.name.endswith(f".{ext}") and p.name[:5].isdigit())
    )
    if leftovers:
        raise RunError(
            f"'{outdir}' already holds output ({', '.join(leftovers[:3])}); the Ray engine "
            "writes into an empty or new output directory"
        )


def _shard_error(shards: Sequence[str], shard: int, message: str) -> RunError:
    return RunError(
        f"input shard '{shards[shard]}' (shard {shard}) could not be read on a Ray worker: "
        f"{message.rstrip('.')}. Nothing was written to the output directory"
    )


def run(
    config: str | os.PathLike[str] | Mapping[str, Any] | None,
    inputs: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    *,
    text_field: str = "text",
    fields: Sequence[str] = (),
    format: str = "parquet",
    preset: Sequence[str] | None = None,
    pii: bool = True,
    languages: Sequence[str] | None = None,
    threads: int = 1,
    row_group_size: int = 16_384,
    batch_size: int = 1024,
    address: str | None = None,
    actors: int | None = None,
    partitions: int | None = None,
    _fault: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Runs the pipeline on Ray; returns the report (also in ``OUTDIR/report.json``).

    ``config``, ``text_field``, ``fields``, ``format``, ``preset``, ``pii``, ``languages``,
    ``row_group_size`` and ``batch_size`` mean what they mean for the local run. ``address``:
    the Ray cluster (``"auto"``, ``"host:port"``, ``"ray://..."``); ``None`` joins the Ray of
    this process if one is initialised, else starts a local one. ``actors``: the size of the
    actor pool (default: the cluster's CPUs); ``partitions``: the partitions of each shuffle
    (default: 2 x actors); ``threads``: worker threads per actor (results never depend on it).
    """
    ray = require_ray()
    fields = check_output_options(format, fields)
    shards = expand_inputs(inputs)
    settings = RunSettings(
        inputs=[os.fsdecode(i) for i in inputs],
        shards=shards,
        shard_bytes=[shard_size(s) for s in shards],
        text_field=text_field,
        fields=fields,
        format=format,
        max_rows_per_file=1,
        max_bytes_per_file=1,
        row_group_size=row_group_size,
        batch_size=batch_size,
    )
    pipeline = FusedPipeline.from_config(
        build_pipeline_config(config, preset=preset, pii=pii, languages=languages)
    )
    effective = pipeline.to_config()
    effective.pop("threads", None)
    outdir = Path(output).absolute()
    ext = EXTENSIONS[format]
    _check_outdir(outdir, ext)
    preflight_text_field(shards, text_field)
    state = outdir / STATE_DIR / RAY_STATE
    started_here = _connect(ray, address)
    timings: dict[str, Any] = {}
    try:
        shutil.rmtree(state, ignore_errors=True)
        (state / "stage").mkdir(parents=True)
        report = _watched(
            ray,
            settings=settings,
            config=effective,
            outdir=outdir,
            state_path=state,
            threads=threads,
            actors=actors,
            partitions=partitions,
            fault=_fault,
            timings=timings,
        )
        _write_atomic(outdir / PIPELINE_CONFIG_NAME, pipeline.to_toml().encode("utf-8"))
        _write_atomic(outdir / REPORT_NAME, _json_bytes(report))
        _write_atomic(outdir / STATE_DIR / "ray_stats.json", _json_bytes(timings))
    except BaseException as exc:
        _clean_partial(outdir, ext)
        if isinstance(exc, (RunError, ConfigError, KeyboardInterrupt)):
            raise
        ray_error = getattr(ray, "exceptions", None)
        if ray_error is not None and isinstance(exc, ray_error.RayError):
            lines = [line for line in str(exc).splitlines() if line.strip()]
            raise RunError(
                f"the Ray run failed ({type(exc).__name__}: {lines[-1] if lines else ''}); nothing "
                "was written to the output directory. A node lost for good needs the cluster "
                "back (or a smaller one): run the same command again"
            ) from None
        raise
    finally:
        shutil.rmtree(state, ignore_errors=True)
        if started_here:
            ray.shutdown()
    return report


def _clean_partial(outdir: Path, ext: str) -> None:
    for entry in outdir.iterdir():
        name = entry.name
        if name == REPORT_NAME or (name.endswith(f".{ext}") and name[:5].isdigit()):
            entry.unlink()


class _Guard:
    """Shared by the driver's watcher and the stages' thread: once ``abandoned`` is set, the
    stages' thread moves nothing into OUTDIR; once ``moving`` is set, the run is not abandoned."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.abandoned = False
        self.moving = False
        self.stage = "A (read, clean, quality)"


def _alive_nodes(ray: Any) -> dict[str, dict[str, Any]]:
    return {n["NodeID"]: n for n in ray.nodes() if n.get("Alive")}


def _watched(ray: Any, **stages: Any) -> dict[str, Any]:
    """``_drive`` in a thread, while this thread watches the cluster's nodes.

    A node lost for good while other nodes have CPUs left costs only time: Ray restarts the lost
    actors and retries the lost tasks there, and the output is the same. When the surviving
    nodes have no CPU left, Ray would wait forever for the work to be placed: the run ends at
    once with an error naming the lost node(s), the stage and the shards not yet read."""
    guard = _Guard()
    shards = stages["settings"].shards
    state = str(stages["state_path"])
    started = _alive_nodes(ray)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["report"] = _drive(ray, guard=guard, **stages)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="luminamoon-ray-stages", daemon=True)
    thread.start()
    try:
        _watch(ray, thread, guard=guard, started=started, shards=shards, state=state)
    except BaseException:
        with guard.lock:
            if not guard.moving:
                guard.abandoned = True
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["report"]  # type: ignore[no-any-return]


def _watch(
    ray: Any,
    thread: threading.Thread,
    *,
    guard: _Guard,
    started: Mapping[str, Mapping[str, Any]],
    shards: Sequence[str],
    state: str,
) -> None:
    while True:
        thread.join(_WATCH_SECONDS)
        if not thread.is_alive():
            break
        alive = _alive_nodes(ray)
        lost = [started[n] for n in started if n not in alive]
        if not lost or sum(n["Resources"].get("CPU", 0) for n in alive.values()) >= 1:
            continue
        with guard.lock:
            if guard.moving:  # every shard is written; only renames are left
                continue
            guard.abandoned = True
        names = ", ".join(f"{n['NodeID'][:12]} ({n['NodeManagerAddress']})" for n in lost)
        unread = [s for i, s in enumerate(shards) if not os.path.exists(_stage_path(state, i))]
        pending = (
            f"; shards not yet read: {', '.join(repr(s) for s in unread[:5])}"
            f"{' and more' if len(unread) > 5 else ''}"
            if unread and guard.stage.startswith("A")
            else ""
        )
        raise RunError(
            f"Ray node {names} was lost for good during stage {guard.stage} and the surviving "
            f"nodes have no CPU to run its work{pending}. Nothing was written to the output "
            "directory; bring the node back (or add one) and run the same command again"
        )


def _drive(ray: Any, **stages: Any) -> dict[str, Any]:
    """The stages under this run's Ray Data settings; the caller's settings are put back."""
    rd = importlib.import_module("ray.data")
    ctx = rd.DataContext.get_current()
    saved = (ctx.enable_progress_bars, ctx.print_on_execution_start, ctx.shuffle_strategy)
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    # Sort-based shuffles (range partitions of the key, which is a uniform hash or hash-derived
    # band key, so the ranges split as evenly as hash partitions would): Ray Data's hash shuffle
    # starts aggregator actors, ~11 s per shuffle on a small cluster.
    ctx.shuffle_strategy = rd.context.ShuffleStrategy.SORT_SHUFFLE_PULL_BASED
    try:
        return _stages(ray, **stages)
    finally:
        ctx.enable_progress_bars, ctx.print_on_execution_start, ctx.shuffle_strategy = saved


def _stages(
    ray: Any,
    *,
    settings: Any,
    config: dict[str, Any],
    outdir: Path,
    state_path: Path,
    threads: int,
    actors: int | None,
    partitions: int | None,
    fault: dict[str, Any] | None,
    timings: dict[str, Any],
    guard: _Guard,
) -> dict[str, Any]:
    rd = importlib.import_module("ray.data")
    shards = settings.shards
    state = str(state_path)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    pool = actors or min(cpus, len(shards))
    parts = partitions or max(1, 2 * pool)
    clock = time.monotonic()

    # -- A: per shard ------------------------------------------------------------------------
    items = rd.from_items(
        [{"shard": i} for i in range(len(shards))], override_num_blocks=len(shards)
    )
    meta_ds = items.map_batches(
        _ShardStage,
        batch_size=1,
        batch_format="pyarrow",
        compute=rd.ActorPoolStrategy(min_size=1, max_size=pool),
        fn_constructor_kwargs={
            "shards": shards,
            "state": state,
            "text_field": settings.text_field,
            "fields": settings.fields,
            "batch_size": settings.batch_size,
            "threads": threads,
            "pipeline": config,
            "backend": BACKEND,
            "fault": fault,
        },
    ).materialize()
    summaries = meta_ds.map_batches(_summary_rows, batch_format="pyarrow")
    infos = sorted(
        (json.loads(v) for v in _collect(ray, summaries).column("info").to_pylist()),
        key=lambda i: i["shard"],
    )
    for info in infos:
        if "error" in info:
            raise _shard_error(shards, info["shard"], info["error"])
    docs = meta_ds.map_batches(_document_rows, batch_format="pyarrow")
    timings["stage_a_seconds"] = time.monotonic() - clock

    totals = new_totals()
    offsets = np.cumsum([0] + [i["records"] for i in infos]).tolist()
    for info in infos:
        for stage, values in info["counters"].items():
            if stage != "output":  # the output is counted where it is written (stage D)
                add_counts(totals["stages"].setdefault(stage, {}), values)
        add_counts(totals["reader"], info["reader"])
        for kind, entry in info["issues"].items():
            target = totals["issues"].setdefault(kind, {"count": 0, "examples": []})
            target["count"] += entry["count"]
            room = EXAMPLES_PER_ISSUE - len(target["examples"])
            target["examples"].extend(entry["examples"][: max(room, 0)])
        for stage, rules in info["drops"].items():
            for rule, entry in rules.items():
                target = (
                    totals["drops"]
                    .setdefault(stage, {})
                    .setdefault(rule, {"count": 0, "examples": []})
                )
                target["count"] += entry["count"]
                for example in entry["examples"]:
                    if len(target["examples"]) < EXAMPLES_PER_RULE:
                        example["record"] += offsets[info["shard"]]
                        example["shard"] = shards[info["shard"]]
                        target["examples"].append(example)
    quality_kept = sum(i["counters"].get("output", {}).get("documents", 0) for i in infos)

    guard.stage = "B (exact dedup)"
    # -- B: exact dedup ----------------------------------------------------------------------
    clock = time.monotonic()
    exact_dropped = np.zeros(0, dtype=np.int64)
    shuffle_bytes = 0
    if config.get("exact_dedup") not in (None, False):
        keyed = docs.select_columns(["hash", "pos"])
        shuffle_bytes += 16 * quality_kept
        dup = _collect(
            ray,
            keyed.groupby("hash", num_partitions=parts).map_groups(
                _exact_group, batch_format="pyarrow"
            ),
        )
        if dup is not None:
            exact_dropped = np.sort(dup.column("pos").to_numpy())
        totals["stages"]["exact_dedup"] = {
            "total": quality_kept,
            "duplicates": len(exact_dropped),
        }
    timings["exact_seconds"] = time.monotonic() - clock

    guard.stage = "C (near dedup)"
    # -- C: near dedup -----------------------------------------------------------------------
    clock = time.monotonic()
    near_dropped = np.zeros(0, dtype=np.int64)
    near_stats: dict[str, int] = {}
    near_cfg = config.get("near_dedup")
    if near_cfg:
        near = impl.MinHashDeduplicator(**near_cfg)
        survivors = docs
        if len(exact_dropped):
            gone_ref = ray.put(exact_dropped)
            survivors = docs.map_batches(
                _without, fn_kwargs={"gone": gone_ref}, batch_format="pyarrow"
            )
        mask = (1 << near.value_bits) - 1
        banded = survivors.map_batches(
            _band_rows,
            fn_kwargs={
                "bands": near.bands,
                "rows": near.rows,
                "mask": mask,
                "num_perm": near.num_perm,
            },
            batch_format="pyarrow",
        )
        near_total = quality_kept - len(exact_dropped)
        shuffle_bytes += near_total * near.bands * (4 + 4 * near.rows + 8)
        candidates = _collect(
            ray,
            banded.groupby("key", num_partitions=parts).map_groups(
                _bucket_group, batch_format="pyarrow"
            ),
        )
        stored: dict[int, Any] = {}
        if candidates is not None and candidates.num_rows:
            wanted_ref = ray.put(np.unique(candidates.column("pos").to_numpy()))
            rows = _collect(
                ray,
                survivors.map_batches(
                    _only, fn_kwargs={"wanted": wanted_ref}, batch_format="pyarrow"
                ),
            )
            sig = np.frombuffer(
                rows.column("sig").combine_chunks().buffers()[1], dtype="<u4"
            ).reshape(-1, near.num_perm)[: rows.num_rows] & np.uint32(mask)
            for p, row in zip(rows.column("pos").to_numpy().tolist(), sig, strict=True):
                stored[p] = row
        else:
            candidates = pa.table(
                {"key": pa.array([], pa.binary()), "pos": pa.array([], pa.int64())}
            )
        dropped_list, near_stats = _resolve_near(candidates, stored, near.min_matches)
        near_dropped = np.sort(np.asarray(dropped_list, dtype=np.int64))
        totals["stages"]["near_dedup"] = {"total": near_total, "duplicates": len(near_dropped)}
    timings["near_seconds"] = time.monotonic() - clock
    timings["near"] = near_stats
    timings["shuffle_bytes"] = shuffle_bytes

    # examples of dedup drops: the first three in global order, read back from the stage files
    for stage, rule, dropped in (
        ("exact_dedup", "duplicate", exact_dropped),
        ("near_dedup", "near_duplicate", near_dropped),
    ):
        if len(dropped):
            totals["drops"].setdefault(stage, {})[rule] = {
                "count": len(dropped),
                "examples": _dedup_examples(state, settings, dropped[:EXAMPLES_PER_RULE], offsets),
            }

    guard.stage = "D (PII, write)"
    # -- D: drop, PII, write -----------------------------------------------------------------
    clock = time.monotonic()
    gone_by_shard: dict[int, Any] = {}
    every = np.sort(np.concatenate([exact_dropped, near_dropped]))
    shard_of = every >> _SHARD_BITS
    for shard in np.unique(shard_of).tolist():
        gone_by_shard[shard] = every[shard_of == shard] & ((1 << _SHARD_BITS) - 1)
    with_docs = [i for i in range(len(shards)) if os.path.exists(_stage_path(state, i))]
    written: list[dict[str, Any]] = []
    if with_docs:
        writes = rd.from_items(
            [{"shard": i} for i in with_docs], override_num_blocks=len(with_docs)
        ).map_batches(
            _write_shard,
            batch_size=1,
            batch_format="pyarrow",
            fn_kwargs={
                "state": state,
                "fmt": settings.format,
                "row_group_size": settings.row_group_size,
                "threads": threads,
                "pii": config.get("pii", False),
                "dropped": ray.put(gone_by_shard),
                "backend": BACKEND,
                "fault": fault,
            },
            max_retries=3,
        )
        result = _collect(ray, writes)
        written = sorted(
            (json.loads(v) for v in result.column("info").to_pylist()), key=lambda i: i["shard"]
        )
    for info in written:
        for stage, values in info["counters"].items():
            if stage != "input":
                add_counts(totals["stages"].setdefault(stage, {}), values)
    if "output" not in totals["stages"] or not written:
        totals["stages"]["output"] = {"documents": 0, "bytes": 0}
    _order_stages(totals)
    staged = state_path / "out"
    with guard.lock:  # the files move only while the run is not abandoned (see _watched)
        if guard.abandoned:
            raise RunError("the run was abandoned")
        guard.moving = True
    for info in written:
        if info["file"] is None:
            continue
        source = staged / info["file"]
        target = outdir / info["file"]
        os.replace(source, target)
        totals["files"].append(
            {
                "name": info["file"],
                "rows": _rows(target, settings.format),
                "bytes": target.stat().st_size,
            }
        )
    timings["write_seconds"] = time.monotonic() - clock
    return build_report(settings, totals)


def _order_stages(totals: dict[str, Any]) -> None:
    stages = totals["stages"]
    totals["stages"] = {k: stages[k] for k in ("input", *STAGES, "output") if k in stages}


def _rows(path: Path, fmt: str) -> int:
    return _rows_of(str(path), fmt)


def _summary_rows(batch: Any) -> Any:
    return batch.filter(pc.less(batch.column("pos"), 0)).select(["info"])


def _document_rows(batch: Any) -> Any:
    return batch.filter(pc.greater_equal(batch.column("pos"), 0)).select(["pos", "hash", "sig"])


def _without(batch: Any, *, gone: Any) -> Any:
    ray = importlib.import_module("ray")
    if isinstance(gone, ray.ObjectRef):
        gone = ray.get(gone)
    keep = ~np.isin(batch.column("pos").to_numpy(), gone)
    return batch.filter(pa.array(keep))


def _only(batch: Any, *, wanted: Any) -> Any:
    ray = importlib.import_module("ray")
    if isinstance(wanted, ray.ObjectRef):
        wanted = ray.get(wanted)
    keep = np.isin(batch.column("pos").to_numpy(), wanted)
    return batch.filter(pa.array(keep)).select(["pos", "sig"])


def _dedup_examples(
    state: str, settings: Any, positions: Any, offsets: Sequence[int]
) -> list[dict[str, Any]]:
    fields = settings.fields
    id_field = ("id" if "id" in fields else fields[0]) if fields else None
    out = []
    for p in positions.tolist():
        shard, record = p >> _SHARD_BITS, p & ((1 << _SHARD_BITS) - 1)
        example: dict[str, Any] = {}
        if id_field is not None:
            table = _read_ipc(_stage_path(state, shard))
            records = table.column(_RECORD).to_numpy()
            index = int((records == record).nonzero()[0][0])
            example[id_field] = table.column(id_field)[index].as_py()
        example["record"] = offsets[shard] + record
        example["shard"] = settings.shards[shard]
        out.append(example)
    return out

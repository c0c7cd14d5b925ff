"""The main job (``luminamoon-data run``): shards in, curated shards out, crash-safe and resumable.

Reads local shards (``.jsonl``/``.json``/``.ndjson``/``.txt``, plain, ``.gz`` or ``.zst``, through
``ShardReader``; ``.parquet`` row group by row group with pyarrow), runs a ``FusedPipeline``,
writes rotated output files with :class:`~luminamoon.data.serialization.ShardedWriter` and a
``report.json``. docs/cli.md describes the layout of the output directory.

Commit protocol (why the final directory is byte-identical after any crash). The checkpoint
``OUTDIR/.luminamoon/run.meta`` (a ``StateTracker``; the pipeline's dedup state is attached to it)
commits once per completed output file, in this order:

1. the file is written under a temporary name, fsynced and renamed into place;
2. the run's cumulative counters after that file are written to ``.luminamoon/commit-E.json``
   (E = the epoch this commit will have), fsynced and renamed into place;
3. ``tracker.update(files_done, coordinate after the file's last batch)`` and ``commit()``.

A restart opens the checkpoint at epoch E, trusts only ``commit-E.json``, deletes output files
numbered ``files_done`` or above, temporary files and other commit records, and resumes the
readers at the committed coordinate. Files hold whole batches and rotate only on batch
boundaries, so the files written again are the same bytes. Timings are the only thing that
differs between runs; they live in ``.luminamoon/timings.json``, outside the compared files.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ._ffi import impl
from .errors import CheckpointLockedError, ConfigError, RunError, RunInterruptedError
from .pipeline import FusedPipeline, load_config_file
from .run_inputs import Batch, InputStream, expand_inputs, preflight_text_field, shard_size
from .run_report import (
    REPORT_NAME,
    RUN_CONFIG_NAME,
    STATE_DIR,
    TIMINGS_NAME,
    Progress,
    add_counts,
    build_report,
    format_report,
    load_report,
    new_totals,
    rule_counts,
)
from .serialization import EXTENSIONS, FORMATS, ShardedWriter, to_arrow_table

__all__ = ["RunError", "RunInterruptedError", "format_report", "load_report", "run"]

META_NAME = "run.meta"
PIPELINE_CONFIG_NAME = "pipeline.toml"
TEMPLATE = "{shard:05d}.{ext}"
EXAMPLES_PER_RULE = 3
EXAMPLES_PER_ISSUE = 5


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomic(path: Path, data: bytes) -> None:
    temp = path.with_name(f".{path.name}.partial")
    with open(temp, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temp, path)
    _fsync_dir(path.parent)


def _json_bytes(value: object) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=False, ensure_ascii=False) + "\n").encode()


def _toml_loads(text: str) -> dict[str, Any]:
    try:
        tomllib = importlib.import_module("tomllib")
    except ModuleNotFoundError:  # Python 3.10
        tomllib = importlib.import_module("tomli")
    loaded: dict[str, Any] = tomllib.loads(text)
    return loaded


def _toml_dumps(value: Mapping[str, Any]) -> str:
    text: str = importlib.import_module("tomli_w").dumps(dict(value))
    return text


def _flatten(prefix: str, value: object, out: dict[str, object]) -> None:
    if isinstance(value, Mapping):
        if not value:
            out[prefix] = {}
        for key, item in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), item, out)
    else:
        out[prefix] = value


def _shorten(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _config_diff(stored: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    a: dict[str, object] = {}
    b: dict[str, object] = {}
    _flatten("", stored, a)
    _flatten("", now, b)
    out = []
    for key in sorted(set(a) | set(b)):
        if a.get(key, "<absent>") != b.get(key, "<absent>"):
            before = _shorten(json.dumps(a[key])) if key in a else "absent"
            after = _shorten(json.dumps(b[key])) if key in b else "absent"
            out.append(f"{key} ({before} in the stored run, {after} now)")
    return out


@dataclass
class RunSettings:
    """Everything that decides the output bytes (stored in OUTDIR/.luminamoon/run.toml)."""

    inputs: list[str]
    shards: list[str]
    shard_bytes: list[int]  # sizes when the run started: a shard changed since is detected
    text_field: str
    fields: list[str]
    format: str
    max_rows_per_file: int
    max_bytes_per_file: int
    row_group_size: int
    batch_size: int

    def as_config(self) -> dict[str, Any]:
        return {
            "inputs": self.inputs,
            "shards": self.shards,
            "shard_bytes": self.shard_bytes,
            "text_field": self.text_field,
            "fields": self.fields,
            "format": self.format,
            "max_rows_per_file": self.max_rows_per_file,
            "max_bytes_per_file": self.max_bytes_per_file,
            "row_group_size": self.row_group_size,
            "batch_size": self.batch_size,
        }


def check_output_options(format: str, fields: Sequence[str]) -> list[str]:
    """The output format and the extra fields, checked (shared by the local and the Ray engine):
    an unknown format (with a did-you-mean), a field listed twice or named ``text`` is a
    ``ConfigError``; returns the fields without empty names."""
    if format not in FORMATS:
        hint = impl.did_you_mean(format, FORMATS)
        suffix = f"; did you mean '{hint}'?" if hint else f"; choose one of {', '.join(FORMATS)}"
        raise ConfigError(f"unknown output format '{format}'{suffix}")
    if isinstance(fields, str):
        raise TypeError("fields must be a sequence of field names, not a str")
    fields = [f for f in fields if f]
    if len(set(fields)) != len(fields):
        raise ConfigError(f"a field is listed twice in --fields: {', '.join(fields)}")
    if "text" in fields:
        raise ConfigError("--fields cannot contain 'text': the output's text column has that name")
    return fields


def build_pipeline_config(
    config: str | os.PathLike[str] | Mapping[str, Any] | None,
    *,
    preset: Sequence[str] | None = None,
    pii: bool = True,
    languages: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The pipeline config of a run: the file (or mapping), then --preset, --no-pii and
    --languages (which switches the language stage on, keeping the file's other options)."""
    if config is None:
        data: dict[str, Any] = {}
    elif isinstance(config, Mapping):
        data = dict(config)
    else:
        data = load_config_file(config)
    if preset:
        quality = data.get("quality")
        table = dict(quality) if isinstance(quality, Mapping) else {}
        table["presets"] = list(preset)
        data["quality"] = table
    if not pii:
        data["pii"] = False
    if languages:
        language = data.get("language")
        table = dict(language) if isinstance(language, Mapping) else {}
        table["languages"] = list(languages)
        data["language"] = table
    return data


def _positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be an int >= 1, got {value!r}")
    return value


class _Job:
    def __init__(
        self,
        settings: RunSettings,
        outdir: Path,
        pipeline_config: dict[str, Any],
        threads: int,
        progress: Progress,
    ) -> None:
        self.settings = settings
        self.outdir = outdir
        self.state = outdir / STATE_DIR
        self.pipeline_config = pipeline_config
        self.threads = threads
        self.progress = progress
        self.ext = EXTENSIONS[settings.format]

    # -- set-up ----------------------------------------------------------------------------

    def prepare(self) -> None:
        try:
            self.state.mkdir(parents=True, exist_ok=True)
            probe = self.state / ".write-test"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise RunError(
                f"cannot write to the output directory '{self.outdir}': {exc.strerror or exc}"
            ) from None

    def open(self) -> None:
        try:
            self.tracker: Any = impl.StateTracker(self.state / META_NAME)
        except CheckpointLockedError:
            raise RunError(
                f"another run is writing to '{self.outdir}' (its checkpoint is locked); wait for "
                "it or use another output directory"
            ) from None
        try:
            self.pipeline = FusedPipeline.from_config(
                self.pipeline_config, tracker=self.tracker, threads=self.threads
            )
        except BaseException:
            self.tracker.close()
            self.tracker = None
            raise

    def check_config(self) -> bool:
        """Stores the config of a new run, or checks a stored one; True when resuming."""
        run_path = self.state / RUN_CONFIG_NAME
        pipeline_path = self.outdir / PIPELINE_CONFIG_NAME
        pipeline_toml = self.pipeline.to_toml()
        now = {
            "run": _toml_loads(_toml_dumps(self.settings.as_config())),
            "pipeline": _without_threads(_toml_loads(pipeline_toml)),
        }
        if run_path.exists():
            try:
                stored = {
                    "run": _toml_loads(run_path.read_text(encoding="utf-8")),
                    "pipeline": _without_threads(
                        _toml_loads(pipeline_path.read_text(encoding="utf-8"))
                    ),
                }
            except (OSError, ValueError) as exc:
                raise RunError(
                    f"'{self.outdir}' holds a run whose stored configuration cannot be read "
                    f"({exc}); use another output directory"
                ) from None
            diff = _config_diff(stored, now)
            if diff:
                raise RunError(
                    f"'{self.outdir}' holds a run with a different configuration: "
                    + "; ".join(diff)
                    + f". Rerun with the stored options ({pipeline_path} is the pipeline "
                    "config) or use another output directory"
                )
            return True
        if self.tracker.epoch != 0:
            raise RunError(
                f"'{self.outdir}' holds a checkpoint but no {STATE_DIR}/{RUN_CONFIG_NAME}; it "
                "was not written by this command. Use another output directory"
            )
        leftovers = [p.name for p in self._output_files()]
        if leftovers:
            raise RunError(
                f"'{self.outdir}' already holds output files ({', '.join(leftovers[:3])}) that "
                "no run of this command recorded; use an empty or new output directory"
            )
        _write_atomic(pipeline_path, pipeline_toml.encode("utf-8"))
        _write_atomic(run_path, _toml_dumps(self.settings.as_config()).encode("utf-8"))
        return False

    def _output_files(self) -> list[Path]:
        out = []
        suffix = f".{self.ext}"
        for entry in sorted(self.outdir.iterdir()):
            name = entry.name
            stem = name[: -len(suffix)] if name.endswith(suffix) else ""
            if len(stem) >= 5 and stem.isdigit():
                out.append(entry)
        return out

    def restore(self) -> None:
        """Back to the last commit: counters from its record, later files deleted."""
        epoch = self.tracker.epoch
        self.epoch = epoch
        if epoch == 0:
            self.totals = new_totals()
            self.files_done = 0
            self.start = impl.StreamCoordinate()
        else:
            record = self.state / f"commit-{epoch}.json"
            try:
                saved = json.loads(record.read_bytes())
            except (OSError, ValueError) as exc:
                raise RunError(
                    f"the checkpoint of '{self.outdir}' is at commit {epoch} but its record "
                    f"{record} cannot be read ({exc}); the directory was modified by hand"
                ) from None
            self.totals = saved["totals"]
            self.files_done = int(saved["files"])
            if self.tracker.committed_batch_id != self.files_done:
                raise RunError(
                    f"{record} says {self.files_done} files but the checkpoint says "
                    f"{self.tracker.committed_batch_id}; the directory was modified by hand"
                )
            self.start = self.tracker.read()[2]
        for entry in self._output_files():
            if int(entry.name.split(".")[0]) >= self.files_done:
                entry.unlink()
        for entry in self.outdir.iterdir():
            if entry.name.startswith(".") and entry.name.endswith(".partial"):
                entry.unlink()
        for entry in self.state.iterdir():
            stale_record = entry.name.startswith("commit-") and entry.name != f"commit-{epoch}.json"
            if stale_record or entry.name.endswith(".partial"):
                entry.unlink()
        _fsync_dir(self.outdir)

    # -- the loop --------------------------------------------------------------------------

    def run(self, stop: list[bool]) -> dict[str, Any]:
        settings = self.settings
        writer = ShardedWriter(
            self.outdir,
            format=settings.format,
            template=TEMPLATE,
            max_rows=settings.max_rows_per_file,
            max_bytes=settings.max_bytes_per_file,
            start_shard=self.files_done,
            **(
                {"row_group_size": settings.row_group_size}
                if settings.format in ("parquet", "ipc")
                else {}
            ),
        )
        stream = InputStream(
            settings.shards,
            text_field=settings.text_field,
            fields=settings.fields,
            batch_size=settings.batch_size,
            threads=self.threads,
            start=self.start,
        )
        self.stream = stream
        self.reader_base = dict(self.totals["reader"])
        flush_rows = min(settings.row_group_size, settings.max_rows_per_file)
        pending: list[Any] = []
        pending_rows = 0
        end = self.start
        committed_end = self.start.to_bytes()
        try:
            for batch in stream:
                if stop[0]:
                    raise KeyboardInterrupt
                end = batch.end
                if batch.documents is None:
                    for issue in batch.issues:
                        self._issue(issue["kind"], issue["where"])
                    continue
                result = self._process(batch)
                if len(result):
                    pending.append(result)
                    pending_rows += len(result)
                if pending_rows >= flush_rows:
                    path = self._write(writer, pending)
                    pending, pending_rows = [], 0
                    if path is not None:
                        self._commit(writer, path, end)
                        committed_end = end.to_bytes()
                if stop[0]:
                    raise KeyboardInterrupt
            path = self._write(writer, pending) if pending else None
            if path is None:
                path = writer.finish()
            if path is not None or end.to_bytes() != committed_end:
                self._commit(writer, path, end)
        except BaseException:
            writer.abort()
            raise
        return self.totals

    def _process(self, batch: Batch) -> Any:
        result: Any = (
            self.pipeline.process(batch.documents)
            if batch.fields is None
            else self.pipeline.process(batch.documents, fields=batch.fields)
        )
        counters = result.counters
        for stage, values in counters.items():
            add_counts(self.totals["stages"].setdefault(stage, {}), values)
        self._drops(batch, result, counters)
        for issue in batch.issues:
            self._issue(issue["kind"], issue["where"])
        inp = counters["input"]
        self.progress.update(
            inp["documents"],
            counters["output"]["documents"],
            inp["bytes"],
            batch.end,
            self.settings.shards,
        )
        return result

    def _issue(self, kind: str, where: str) -> None:
        entry = self.totals["issues"].setdefault(kind, {"count": 0, "examples": []})
        entry["count"] += 1
        if len(entry["examples"]) < EXAMPLES_PER_ISSUE:
            entry["examples"].append(where)

    def _drops(self, batch: Batch, result: Any, counters: Mapping[str, Any]) -> None:
        counts = rule_counts(counters)
        drops = self.totals["drops"]
        wanted = set()
        for (stage, rule), count in counts.items():
            entry = drops.setdefault(stage, {}).setdefault(rule, {"count": 0, "examples": []})
            entry["count"] += count
            if len(entry["examples"]) < EXAMPLES_PER_RULE:
                wanted.add((stage, rule))
        if not wanted:
            return
        reasons = result.reasons
        id_field = self._id_field()
        for index in [int(i) for i in (result.dropped_by != 0).nonzero()[0]]:
            reason = reasons[index]
            key = (reason.stage, reason.rule)
            if key not in wanted:
                continue
            entry = drops[reason.stage][reason.rule]
            entry["examples"].append(self._example(batch, index, id_field))
            if len(entry["examples"]) >= EXAMPLES_PER_RULE:
                wanted.discard(key)
                if not wanted:
                    return

    def _id_field(self) -> str | None:
        fields = self.settings.fields
        if not fields:
            return None
        return "id" if "id" in fields else fields[0]

    def _example(self, batch: Batch, index: int, id_field: str | None) -> dict[str, Any]:
        example: dict[str, Any] = {}
        if id_field is not None:
            values = (
                batch.fields[id_field]
                if batch.fields is not None
                else batch.documents.fields[id_field]  # type: ignore[attr-defined]
            )
            example[id_field] = values[index]
        if batch.records is not None:
            example["record"] = batch.records[index]
            example["shard"] = batch.shard
        else:
            coordinate = batch.documents.coordinates[index]  # type: ignore[attr-defined]
            example["record"] = coordinate.global_row_idx - 1
            # The coordinate after a shard's last document already points at the next shard.
            local = coordinate.shard_id - (1 if coordinate.byte_offset == 0 else 0)
            example["shard"] = self.settings.shards[local + self.stream.reader_offset]
        return example

    def _write(self, writer: ShardedWriter, pending: list[Any]) -> str | None:
        pa = importlib.import_module("pyarrow")
        tables = [to_arrow_table(result) for result in pending]
        table = (
            tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="default")
        )
        try:
            return writer.write(table)
        except TypeError as exc:
            raise RunError(
                f"cannot write the output: {exc}. An extra field holds values of different "
                "types in different records"
            ) from None

    def _commit(self, writer: ShardedWriter, path: str | None, end: Any) -> None:
        if path is not None:
            self.files_done += 1
            self.totals["files"].append(
                {
                    "name": os.path.basename(path),
                    "rows": _rows_of(path, self.settings.format),
                    "bytes": os.path.getsize(path),
                }
            )
        self.totals["reader"] = dict(self.reader_base)
        add_counts(self.totals["reader"], self.stream.reader_stats())
        epoch = self.epoch + 1
        _write_atomic(
            self.state / f"commit-{epoch}.json",
            _json_bytes({"files": self.files_done, "totals": self.totals}),
        )
        self.tracker.update(self.files_done, end)
        landed = self.tracker.commit()
        if landed != epoch:  # pragma: no cover - a broken tracker
            raise RunError(f"checkpoint commit landed at epoch {landed}, expected {epoch}")
        self.epoch = epoch
        previous = self.state / f"commit-{epoch - 1}.json"
        if previous.exists():
            previous.unlink()
        if path is not None:
            self.progress.log(
                f"committed {os.path.basename(path)} ({self.totals['files'][-1]['rows']:,} rows)"
            )

    def close(self) -> None:
        tracker = getattr(self, "tracker", None)
        if tracker is not None:
            # The deduplicators hold the tracker: drop them before closing it.
            self.__dict__.pop("pipeline", None)
            self.tracker = None
            tracker.close()


def _rows_of(path: str, format: str) -> int:
    if format == "parquet":
        return int(importlib.import_module("pyarrow.parquet").ParquetFile(path).metadata.num_rows)
    if format == "ipc":
        pa = importlib.import_module("pyarrow")
        with pa.memory_map(path) as source:
            reader = pa.ipc.open_file(source)
            return sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def _without_threads(config: dict[str, Any]) -> dict[str, Any]:
    # Results never depend on the thread count, so a run may resume with another one.
    return {k: v for k, v in config.items() if k != "threads"}


def run(
    inputs: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    *,
    config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    text_field: str = "text",
    fields: Sequence[str] = (),
    format: str = "parquet",
    preset: Sequence[str] | None = None,
    pii: bool = True,
    languages: Sequence[str] | None = None,
    threads: int = 0,
    max_rows_per_file: int = 100_000,
    max_bytes_per_file: int = 512 * 2**20,
    row_group_size: int = 16_384,
    batch_size: int = 1024,
    progress: str = "auto",
    progress_stream: IO[str] | None = None,
) -> dict[str, Any]:
    """Runs (or resumes) the main job; returns the report (also in ``OUTDIR/report.json``).

    Raises ``RunError`` for bad input or an unusable output directory, ``ConfigError`` for a bad
    pipeline config, and ``RunInterruptedError`` on Ctrl-C/SIGTERM (after stopping at the last
    commit).
    """
    fields = check_output_options(format, fields)
    shards = expand_inputs(inputs)
    settings = RunSettings(
        inputs=[os.fsdecode(i) for i in inputs],
        shards=shards,
        shard_bytes=[shard_size(s) for s in shards],
        text_field=text_field,
        fields=fields,
        format=format,
        max_rows_per_file=_positive("max_rows_per_file", max_rows_per_file),
        max_bytes_per_file=_positive("max_bytes_per_file", max_bytes_per_file),
        row_group_size=_positive("row_group_size", row_group_size),
        batch_size=_positive("batch_size", batch_size),
    )
    pipeline_config = build_pipeline_config(config, preset=preset, pii=pii, languages=languages)
    stream = progress_stream if progress_stream is not None else sys.stderr
    mode = progress
    if mode == "auto":
        mode = "bar" if stream.isatty() else "log"
    if mode not in ("bar", "log", "none"):
        raise ConfigError(f"unknown progress mode '{progress}' (auto, bar, log, none)")
    outdir = Path(output)
    tracker_progress = Progress(stream, shards, mode)
    job = _Job(settings, outdir, pipeline_config, threads, tracker_progress)
    started_wall = time.time()
    started = time.monotonic()
    stop = [False]

    def on_signal(signum: int, frame: object) -> None:
        stop[0] = True
        raise KeyboardInterrupt

    previous_handler = None
    if sys.platform != "win32":
        try:
            previous_handler = signal.signal(signal.SIGTERM, on_signal)
        except ValueError:  # not the main thread
            previous_handler = None
    try:
        job.prepare()
        job.open()
        resumed = job.check_config()
        job.restore()
        if resumed and job.epoch > 0:
            job.progress.log(f"resuming after commit {job.epoch} ({job.files_done} files done)")
        if not resumed or job.epoch == 0:
            preflight_text_field(shards, text_field)
        totals = job.run(stop)
        _check_found_documents(settings, totals)
        report = build_report(settings, totals)
        _write_atomic(outdir / REPORT_NAME, _json_bytes(report))
    except KeyboardInterrupt:
        job.progress.close()
        raise RunInterruptedError(
            f"interrupted; '{outdir}' holds the last commit ({getattr(job, 'files_done', 0)} "
            "files). Run the same command again to resume"
        ) from None
    except OSError as exc:
        job.progress.close()
        where = f" ({exc.filename})" if exc.filename else ""
        raise RunError(
            f"I/O error{where}: {exc.strerror or exc}. The last commit "
            f"({getattr(job, 'files_done', 0)} files) is intact; fix the cause (e.g. free disk "
            "space) and run the same command again to resume"
        ) from None
    finally:
        job.close()
        if previous_handler is not None:
            signal.signal(signal.SIGTERM, previous_handler)
    job.progress.close()
    _record_timings(
        outdir,
        started_wall,
        time.monotonic() - started,
        tracker_progress.docs,
        tracker_progress.bytes,
    )
    return report


def _check_found_documents(settings: RunSettings, totals: Mapping[str, Any]) -> None:
    reader = totals["reader"]
    missing = totals["issues"].get("missing_field")
    if reader.get("documents", 0) == 0 and missing:
        raise RunError(
            f"the text field '{settings.text_field}' is missing from every record that parsed "
            f"({missing['count']:,} records); first: {missing['examples'][0]}. Pass "
            "--text-field with the dotted path of the text"
        )


def _record_timings(outdir: Path, started: float, seconds: float, docs: int, nbytes: int) -> None:
    """Timings of every session of this run; the one file that differs between two runs."""
    path = outdir / STATE_DIR / TIMINGS_NAME
    try:
        previous = json.loads(path.read_bytes()) if path.exists() else None
    except ValueError:
        previous = None
    sessions = (previous or {}).get("sessions", 0) + 1
    timings = {
        "sessions": sessions,
        "last_session_started": started,
        "seconds": seconds,
        "documents": docs,
        "bytes": nbytes,
    }
    with contextlib.suppress(OSError):  # timings are informational; the run is complete
        _write_atomic(path, _json_bytes(timings))

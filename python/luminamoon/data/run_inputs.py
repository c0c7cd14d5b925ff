"""Inputs of ``luminamoon-data run``: shard lists, the text-field check, one stream of batches.

Text shards (``.jsonl``/``.json``/``.ndjson``/``.txt``, plain, ``.gz`` or ``.zst``) are read by
``ShardReader``; ``.parquet`` shards row group by row group with pyarrow. Coordinates are global
over the whole shard list: ``shard_id`` indexes it, ``byte_offset`` is the text reader's, and for
Parquet ``row_group_idx`` / ``row_offset_in_page`` say where the next row is.
"""

from __future__ import annotations

import glob
import gzip
import importlib
import json
import os
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from ._ffi import impl
from .errors import LuminaMoonError, RunError

__all__ = [
    "Batch",
    "InputStream",
    "expand_inputs",
    "is_compressed",
    "is_parquet",
    "preflight_text_field",
    "shard_size",
]

_TEXT_SUFFIXES = (".jsonl", ".json", ".ndjson", ".txt")
_COMPRESSED_SUFFIXES = (".gz", ".zst", ".zstd")
_GLOB_CHARS = "*?["


def optional_module(name: str) -> Any:
    """pyarrow and its submodules, imported on first use (an optional dependency)."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RunError(
            "luminamoon-data run needs pyarrow: pip install 'luminamoon-data[arrow]'"
        ) from exc


def is_parquet(path: str) -> bool:
    return path.lower().endswith(".parquet")


def _is_text_shard(path: str) -> bool:
    lower = path.lower()
    for suffix in _COMPRESSED_SUFFIXES:
        if lower.endswith(suffix):
            lower = lower[: -len(suffix)]
            break
    return lower.endswith(_TEXT_SUFFIXES)


def _is_jsonl_shard(path: str) -> bool:
    lower = path.lower()
    for suffix in _COMPRESSED_SUFFIXES:
        if lower.endswith(suffix):
            lower = lower[: -len(suffix)]
            break
    return lower.endswith((".jsonl", ".json", ".ndjson"))


def is_url(path: str) -> bool:
    """An ``http://`` or ``https://`` shard (ASCII case-insensitive scheme)."""
    return path[:8].lower().startswith(("http://", "https://"))


def shard_size(path: str) -> int:
    """A shard's size when a run starts (a changed shard is detected on resume); -1 for a URL,
    whose changes the reader detects by its ETag / Last-Modified (docs/readers.md)."""
    return -1 if is_url(path) else os.path.getsize(path)


def _url_name(url: str) -> str:
    """The part of a URL its shard type comes from: the path, without query and fragment."""
    return urllib.parse.urlsplit(url).path


def is_compressed(path: str) -> bool:
    return path.lower().endswith(_COMPRESSED_SUFFIXES)


def _suggest_path(pattern: str) -> str:
    """Why ``pattern`` matched nothing, with the closest existing name."""
    directory, name = os.path.split(pattern)
    directory = directory or "."
    if any(c in directory for c in _GLOB_CHARS):
        return ""
    if not os.path.isdir(directory):
        parent, base = os.path.split(directory.rstrip("/"))
        parent = parent or "."
        hint = ""
        if os.path.isdir(parent):
            close = impl.did_you_mean(base, sorted(os.listdir(parent)))
            if close:
                hint = f"; did you mean '{os.path.join(parent, close)}'?"
        return f" (directory '{directory}' does not exist{hint})"
    entries = sorted(e for e in os.listdir(directory) if not e.startswith("."))
    candidates = entries
    if any(c in name for c in _GLOB_CHARS) and "*" in name:
        # A glob: offer the same pattern with an extension that exists ('*.jsnl' -> '*.jsonl').
        head = name[: name.rindex("*") + 1]
        endings = sorted({e[e.index(".") :] for e in entries if "." in e})
        candidates = [head + ending for ending in endings]
    close = impl.did_you_mean(name, candidates)
    if close:
        return f"; did you mean '{os.path.join(directory, close)}'?"
    if not entries:
        return f" (directory '{directory}' is empty)"
    shown = ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
    return f" ('{directory}' holds {shown})"


def expand_inputs(inputs: Sequence[str | os.PathLike[str]]) -> list[str]:
    """The shard list: each input a file or a glob (Python ``glob`` semantics, matches sorted).

    A glob matching nothing, a missing file or a file of an unknown type is a ``RunError``
    naming it, with the closest existing name.
    """
    if not inputs:
        raise RunError("no input given: pass shard files or globs (e.g. 'data/*.jsonl.zst')")
    shards: list[str] = []
    for entry in inputs:
        pattern = os.fsdecode(entry)
        if is_url(pattern):
            # Read with HTTP/1.1 Range requests by ShardReader (docs/readers.md); never globbed.
            name = _url_name(pattern)
            if is_parquet(name):
                raise RunError(
                    f"input '{pattern}': .parquet over http(s) is not supported; download it "
                    "first, or serve the shards as .jsonl / .txt (plain, .gz or .zst)"
                )
            if not _is_text_shard(name):
                raise RunError(
                    f"input '{pattern}': unknown shard type; supported over http(s): .jsonl, "
                    ".json, .ndjson, .txt (plain, .gz or .zst)"
                )
            shards.append(pattern)
            continue
        if any(c in pattern for c in _GLOB_CHARS):
            matches = sorted(p for p in glob.glob(pattern) if os.path.isfile(p))
            if not matches:
                raise RunError(f"input '{pattern}' matches no file" + _suggest_path(pattern))
        else:
            if not os.path.exists(pattern):
                raise RunError(f"input '{pattern}' does not exist" + _suggest_path(pattern))
            if not os.path.isfile(pattern):
                raise RunError(f"input '{pattern}' is not a regular file")
            matches = [pattern]
        for path in matches:
            if not (is_parquet(path) or _is_text_shard(path)):
                raise RunError(
                    f"input '{path}': unknown shard type; supported: .jsonl, .json, .ndjson, "
                    ".txt (plain, .gz or .zst) and .parquet"
                )
        shards.extend(matches)
    return shards


def _open_text(path: str) -> IO[bytes] | None:
    lower = path.lower()
    if lower.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if lower.endswith((".zst", ".zstd")):
        try:
            zstandard = importlib.import_module("zstandard")
        except ImportError:
            return None
        raw = open(path, "rb")  # noqa: SIM115 - closed with the stream (closefd)
        stream: IO[bytes] = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return stream
    return open(path, "rb")


def preflight_text_field(shards: Sequence[str], text_field: str, records: int = 64) -> None:
    """A ``RunError`` when the text field is missing from every record sampled.

    Samples the first ``records`` records of each of the first 8 JSONL shards; without this the
    reader would scan every shard and silently yield nothing.
    """
    seen = 0
    first_issue = ""
    for path in [s for s in shards if _is_jsonl_shard(s)][:8]:
        try:
            stream = _open_text(path)
        except OSError:
            continue
        if stream is None:
            continue
        with stream:
            line_no = 0
            for raw in stream:
                line_no += 1
                if not raw.strip():
                    continue
                if line_no > 4 * records:
                    break
                try:
                    json.loads(raw)
                except ValueError:
                    continue  # malformed records are the reader's to report
                seen += 1
                try:
                    impl.extract_field(raw.rstrip(b"\r\n"), text_field)
                except LuminaMoonError as exc:
                    if "not found" not in str(exc) and "not a string" not in str(exc):
                        return
                    if not first_issue:
                        first_issue = f"{path}:{line_no}: {exc}"
                else:
                    return
                if seen >= records:
                    break
    if seen and first_issue:
        raise RunError(
            f"the text field '{text_field}' is missing from every record sampled ({seen} "
            f"records of the first shards); first: {first_issue}. Pass --text-field with the "
            "dotted path of the text (e.g. --text-field meta.body)"
        )


# =============================================================================================
# Sources: one stream of batches over every shard, with global coordinates
# =============================================================================================


@dataclass
class Batch:
    """One input batch: what FusedPipeline.process takes, and where the stream stands after it."""

    documents: object  # a DocumentBatch, an Arrow string array (Parquet), None: segment end
    fields: dict[str, list[object]] | None  # Parquet only (a DocumentBatch carries its own)
    end: Any  # StreamCoordinate after the batch, shard_id global
    first_record: int  # global index (0-based) of the batch's first record
    records: list[int] | None  # global record index of each document (Parquet); None: JSONL
    shard: str  # path of the shard the batch ended in
    issues: list[dict[str, Any]] = field(default_factory=list)  # Parquet: null texts
    # Parquet: the coordinate after each document (a DocumentBatch carries its own)
    coordinates: list[Any] | None = None


class InputStream:
    """Batches over every shard from ``start``: ShardReader for text shards, pyarrow for Parquet."""

    def __init__(
        self,
        shards: Sequence[str],
        *,
        text_field: str,
        fields: Sequence[str],
        batch_size: int,
        threads: int,
        start: Any,
        strict: bool = False,
        txt_mode: str = "line",
        backend: Any = None,
        reader_options: dict[str, Any] | None = None,
    ) -> None:
        self.backend = impl if backend is None else backend  # the module of the reader
        self.reader_options = dict(reader_options or {})  # more ShardReader keywords
        self.shards = list(shards)
        self.strict = strict
        self.txt_mode = txt_mode
        self.document_coordinates = False  # Parquet: build Batch.coordinates
        self.text_field = text_field
        self.fields = list(fields)
        self.batch_size = batch_size
        self.threads = threads
        self.start = start
        self.reader: Any = None  # the ShardReader in use
        self.reader_offset = 0  # its shard 0 in the global list
        self.finished_reader_stats: dict[str, int] = {}
        self._reader_errors_seen = 0
        self.parquet_stats: dict[str, int] = {}

    # Segments: maximal runs of text shards (one ShardReader each) and single Parquet shards.
    def _segments(self) -> list[tuple[int, int, bool]]:
        out: list[tuple[int, int, bool]] = []
        i = 0
        while i < len(self.shards):
            if is_parquet(self.shards[i]):
                out.append((i, i + 1, True))
                i += 1
                continue
            j = i
            while j < len(self.shards) and not is_parquet(self.shards[j]):
                j += 1
            out.append((i, j, False))
            i = j
        return out

    def _coordinate(self, **fields: int) -> Any:
        return self.backend.StreamCoordinate(**fields)

    def reader_stats(self) -> dict[str, int]:
        """Reader stats of everything consumed so far in this session."""
        out = dict(self.finished_reader_stats)
        if self.reader is not None:
            for key, value in self.reader.stats().items():
                out[key] = out.get(key, 0) + value
        for key, value in self.parquet_stats.items():
            out[key] = out.get(key, 0) + value
        return out

    def new_reader_issues(self) -> list[Any]:
        if self.reader is None:
            return []
        errors = self.reader.errors
        new = errors[self._reader_errors_seen :]
        self._reader_errors_seen = len(errors)
        return list(new)

    def __iter__(self) -> Iterator[Batch]:
        start = self.start
        rows = start.global_row_idx
        for first, last, parquet in self._segments():
            if start.shard_id >= last:
                continue
            local = start.shard_id - first if start.shard_id >= first else 0
            offset = start.byte_offset if start.shard_id >= first else 0
            rg = start.row_group_idx if start.shard_id >= first else 0
            in_rg = start.row_offset_in_page if start.shard_id >= first else 0
            if parquet:
                yield from self._parquet(first, rg, in_rg, rows)
            else:
                yield from self._text(first, last, local, offset, rows)
            rows = self._rows
            start = self._coordinate(shard_id=last, global_row_idx=rows)

    def _text(self, first: int, last: int, local: int, offset: int, rows: int) -> Iterator[Batch]:
        paths = [
            glob.escape(p) if any(c in p for c in _GLOB_CHARS) else p
            for p in self.shards[first:last]
        ]
        reader = self.backend.ShardReader(
            paths,
            text_field=self.text_field,
            fields=tuple(self.fields),
            batch_size=self.batch_size,
            threads=self.threads,
            start=self._coordinate(shard_id=local, byte_offset=offset, global_row_idx=rows),
            strict=self.strict,
            txt_mode=self.txt_mode,
            **self.reader_options,
        )
        self.reader = reader
        self.reader_offset = first
        self._reader_errors_seen = 0
        self._rows = rows
        previous = rows
        try:
            for batch in reader:
                end = batch.end
                self._rows = end.global_row_idx
                shard = min(end.shard_id, last - first - 1)
                yield Batch(
                    documents=batch,
                    fields=None,
                    end=self._coordinate(
                        shard_id=end.shard_id + first,
                        byte_offset=end.byte_offset,
                        global_row_idx=end.global_row_idx,
                    ),
                    first_record=previous,
                    records=None,
                    shard=self.shards[first + shard],
                    issues=self._new_reader_issues(),
                )
                previous = end.global_row_idx
            # The end of the segment: records after its last document (or a segment without
            # documents) still advance the stream and may carry issues.
            self._rows = rows + reader.stats()["records"]
            yield Batch(
                documents=None,
                fields=None,
                end=self._coordinate(shard_id=last, global_row_idx=self._rows),
                first_record=previous,
                records=None,
                shard=self.shards[last - 1],
                issues=self._new_reader_issues(),
            )
        finally:
            for key, value in reader.stats().items():
                self.finished_reader_stats[key] = self.finished_reader_stats.get(key, 0) + value
            self.reader = None
            reader.close()

    def _new_reader_issues(self) -> list[dict[str, Any]]:
        return [{"kind": issue.kind, "where": str(issue)} for issue in self.new_reader_issues()]

    def _parquet(self, shard: int, start_rg: int, start_row: int, rows: int) -> Iterator[Batch]:
        pa = optional_module("pyarrow")
        pq = optional_module("pyarrow.parquet")
        path = self.shards[shard]
        try:
            parquet = pq.ParquetFile(path)
        except (OSError, pa.ArrowInvalid) as exc:
            raise RunError(f"cannot read Parquet shard '{path}': {exc}") from None
        top_text = _split_path(self.text_field)[0]
        columns = [top_text]
        for name in self.fields:
            top = _split_path(name)[0]
            if top not in columns:
                columns.append(top)
        names = parquet.schema_arrow.names
        for name in columns:
            if name not in names:
                hint = impl.did_you_mean(name, names)
                suffix = f"; did you mean '{hint}'?" if hint else f"; columns: {', '.join(names)}"
                what = "text field" if name == top_text else "field"
                raise RunError(f"{path}: the Parquet shard has no column '{name}' ({what}){suffix}")
        self._rows = rows
        # Per-document coordinates are for the streaming front (ResumablePipeline); the CLI job
        # does not need them. The last row of a group points at the next group (or shard).
        skip_coordinates = not self.document_coordinates
        stats = self.parquet_stats
        stats.setdefault("shards_opened", 0)
        num_groups = parquet.metadata.num_row_groups
        for rg in range(start_rg, num_groups):
            table = parquet.read_row_group(rg, columns=columns)
            skip = start_row if rg == start_rg else 0
            group_rows = table.num_rows
            for lo in range(skip, group_rows, self.batch_size):
                hi = min(lo + self.batch_size, group_rows)
                part = table.slice(lo, hi - lo)
                texts = _column_at(part, self.text_field)
                if not (
                    pa.types.is_string(texts.type)
                    or pa.types.is_large_string(texts.type)
                    or pa.types.is_string_view(texts.type)
                ):
                    raise RunError(
                        f"{path}: the text column '{self.text_field}' holds {texts.type}, not "
                        "strings"
                    )
                first_record = self._rows
                issues: list[dict[str, Any]] = []
                valid = texts.is_valid()
                records = list(range(first_record, first_record + (hi - lo)))
                fields = {name: _column_at(part, name).to_pylist() for name in self.fields}
                if texts.null_count:
                    keep = valid.to_pylist()
                    for i, ok in enumerate(keep):
                        if not ok:
                            issues.append(
                                {
                                    "kind": "null_text",
                                    "where": f"{path}#row {_row_in_file(parquet, rg, lo + i)}",
                                }
                            )
                    texts = texts.filter(valid)
                    records = [r for r, ok in zip(records, keep, strict=True) if ok]
                    fields = {
                        k: [v for v, ok in zip(vs, keep, strict=True) if ok]
                        for k, vs in fields.items()
                    }
                stats["records"] = stats.get("records", 0) + (hi - lo)
                stats["documents"] = stats.get("documents", 0) + len(texts)
                stats["null_text"] = stats.get("null_text", 0) + len(issues)
                self._rows = first_record + (hi - lo)
                if hi < group_rows:
                    end = self._coordinate(
                        shard_id=shard,
                        row_group_idx=rg,
                        row_offset_in_page=hi,
                        global_row_idx=self._rows,
                    )
                elif rg + 1 < num_groups:
                    end = self._coordinate(
                        shard_id=shard, row_group_idx=rg + 1, global_row_idx=self._rows
                    )
                else:
                    end = self._coordinate(shard_id=shard + 1, global_row_idx=self._rows)
                coordinates: list[Any] = []
                if not skip_coordinates:
                    coordinates = [
                        end
                        if lo + r - first_record + 1 == group_rows
                        else self._coordinate(
                            shard_id=shard,
                            row_group_idx=rg,
                            row_offset_in_page=lo + r - first_record + 1,
                            global_row_idx=r + 1,
                        )
                        for r in records
                    ]
                yield Batch(
                    documents=texts,
                    fields=fields,
                    end=end,
                    first_record=first_record,
                    records=records,
                    shard=path,
                    issues=issues,
                    coordinates=None if skip_coordinates else coordinates,
                )
        stats["shards_opened"] += 1


def _row_in_file(parquet: Any, rg: int, row: int) -> int:
    return sum(int(parquet.metadata.row_group(i).num_rows) for i in range(rg)) + row


def _split_path(dotted: str) -> tuple[str, list[str]]:
    parts = dotted.split(".")
    return parts[0], parts[1:]


def _column_at(table: Any, dotted: str) -> Any:
    pc = optional_module("pyarrow.compute")
    top, rest = _split_path(dotted)
    column = table.column(top).combine_chunks()
    for name in rest:
        try:
            column = pc.struct_field(column, name)
        except (KeyError, TypeError, ValueError) as exc:
            raise RunError(
                f"field '{dotted}': cannot take '{name}' of {column.type}: {exc}"
            ) from None
    return column

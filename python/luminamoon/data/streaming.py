"""ResumablePipeline: curated batches into a training loop, prefetched, committed per step.

Shared by both backends (like pipeline.py, with a ``_backend``): it reads shards with that
backend's ``ShardReader`` (text shards) and pyarrow (Parquet) through ``run_inputs.InputStream``,
or any Python iterable; runs a ``FusedPipeline`` attached to the checkpoint's ``StateTracker``;
and yields ``StreamBatch`` objects with consecutive ``batch_id``. Prefetch: a Python thread
(``_Producer``) and, on the native backend, a native one for text shards (``ShardPrefetcher``,
reader and pipeline engine without the GIL). ``commit(batch_id)`` persists the
position after that batch and exactly the dedup state of the batches up to it (SPEC 3.3), even
when later batches were already prefetched and processed. docs/streaming.md is the contract.

Why the commit is exact under prefetch: the producer runs the pipeline ahead of the consumer, so
the deduplicators hold staged entries of batches nobody has consumed yet. For every batch the
producer records how many entries it added (the difference of committed + staged, a sum that a
concurrent commit leaves unchanged, so no lock is needed between the threads); ``commit(k)``
limits the tracker's next commit to the entries of batches ``<= k``
(``limit_next_commit``), and the rest stay staged. After a crash the prefetched batches are
produced again from the committed coordinate against exactly the committed dedup state, so they
come out identical.
"""

from __future__ import annotations

import contextlib
import copy
import glob
import json
import os
import queue
import random
import threading
import weakref
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ._ffi import impl
from .errors import ConfigError, LuminaMoonError, MalformedInputError
from .pipeline import FusedPipeline
from .run_inputs import InputStream, expand_inputs, is_parquet

__all__ = ["ResumablePipeline", "StreamBatch"]

_STATE_VERSION = 1
_POLL_S = 0.05  # how often a blocked producer or consumer looks at the stop flag


@dataclass(frozen=True)
class StreamBatch:
    """One batch of the stream: the kept documents after the pipeline, and where it stands.

    ``coordinates[i]`` is the coordinate just after document ``i`` in its shard;
    ``end`` is the coordinate the stream resumes from once this batch is committed.
    """

    batch_id: int
    texts: Any  # StringTensor of the kept documents
    fields: dict[str, list[object]]
    coordinates: list[Any]  # StreamCoordinate per kept document
    end: Any  # StreamCoordinate
    records: int  # input documents of the batch (before the pipeline dropped any)
    result: Any = None  # the PipelineResult (reasons, counters); None without a pipeline

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def ids(self) -> list[object] | None:
        """``fields['id']`` when that field was asked for, else None."""
        return self.fields.get("id")


# =============================================================================================
# Sources
# =============================================================================================


@dataclass
class _Shard:
    name: str  # a path, or a description of an iterable
    kind: str  # "text", "parquet" or "iterable"
    iterable: Any = None


def _is_path(value: object) -> bool:
    return isinstance(value, (str, bytes, os.PathLike))


def _shards_of(sources: object) -> list[_Shard]:
    """The expanded shard list: paths and globs (sorted matches), iterables one shard each."""
    items: list[object]
    if _is_path(sources):
        items = [sources]
    elif isinstance(sources, (list, tuple)) and not any(
        isinstance(item, (Mapping, bytes)) for item in sources
    ):
        items = list(sources)  # paths and globs (and iterables, one shard each)
    elif isinstance(sources, Iterable):
        items = [sources]
    else:
        raise TypeError(
            "ResumablePipeline: sources must be a path, a glob, a list of them, or an iterable "
            f"of documents, got {type(sources).__name__}"
        )
    if not items:
        raise ConfigError("ResumablePipeline: no source given")
    shards: list[_Shard] = []
    for item in items:
        if _is_path(item):
            for path in expand_inputs([os.fsdecode(item)]):  # type: ignore[arg-type]
                shards.append(_Shard(path, "parquet" if is_parquet(path) else "text"))
        elif isinstance(item, Iterable) and not isinstance(item, (str, bytes, Mapping)):
            shards.append(_Shard(f"<{type(item).__name__}>", "iterable", item))
        else:
            raise TypeError(
                f"ResumablePipeline: a source must be a path, a glob or an iterable, got "
                f"{type(item).__name__}"
            )
    return shards


def _dotted(record: Mapping[str, Any], path: str) -> Any:
    value: Any = record
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, (list, tuple)) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


_MISSING = object()


@dataclass
class _Raw:
    """One batch before the pipeline, with global coordinates."""

    documents: Any  # DocumentBatch, Arrow string array or list[str]
    fields: dict[str, list[object]] | None  # None: the DocumentBatch carries them
    coordinates: list[Any] | None  # None: the DocumentBatch carries them (local shard ids)
    end: Any
    records: int
    remap: Any = None  # (global shard id, next shard's start) for DocumentBatch coordinates
    # Processed already on the native prefetch thread: (PipelineResult | None, entries staged
    # in the exact and the near deduplicator)
    ready: tuple[Any, int, int] | None = None
    # An iterable shard with its own state_dict(): (shard, records consumed, its state) at end
    source_state: tuple[int, int, Any] | None = None


@dataclass
class _Doc:
    text: str
    fields: tuple[object, ...]
    coordinate: Any


# =============================================================================================
# The producer: reads, shuffles and runs the pipeline; a thread when prefetching
# =============================================================================================


@dataclass
class _Produced:
    batch_id: int
    batch: StreamBatch
    staged: tuple[int, int]  # entries the batch staged in the exact / near deduplicator
    source_state: tuple[int, int, Any] | None = None  # _Raw.source_state


@dataclass
class _Failure:
    error: BaseException


_END = object()


@dataclass
class _Plan:
    """Everything the producer needs; it never holds the ResumablePipeline itself (so that the
    pipeline can be garbage collected while a producer thread runs)."""

    backend: Any
    shards: list[_Shard]
    order: list[tuple[int, Any]]  # (shard index, start coordinate) in reading order
    text_field: str
    fields: list[str]
    batch_size: int
    shuffle: int | None
    shuffle_buffer: int
    txt_mode: str
    strict: bool
    threads: int
    pipeline: Any  # FusedPipeline or None
    state_lock: threading.Lock
    native_depth: int = 0  # > 0: text shards are read and processed on a native thread
    reader_options: dict[str, Any] = field(default_factory=dict)  # more ShardReader keywords
    # The committed (shard, records, state) of an iterable shard resumed by its own
    # load_state_dict() (the companion file <checkpoint>.source_state; docs/streaming.md)
    source_state: tuple[int, int, Any] | None = None
    stats: dict[str, int] = field(default_factory=dict)
    issues: list[str] = field(default_factory=list)


def _coordinate(backend: Any, **values: int) -> Any:
    return backend.StreamCoordinate(**values)


def _with_rows(backend: Any, c: Any, rows: int) -> Any:
    return backend.StreamCoordinate(
        shard_id=c.shard_id,
        byte_offset=c.byte_offset,
        row_group_idx=c.row_group_idx,
        page_idx=c.page_idx,
        row_offset_in_page=c.row_offset_in_page,
        global_row_idx=rows,
    )


def _next_start(plan: _Plan, position: int, rows: int) -> Any:
    """Where the stream stands once the shard at ``position`` of the order is done."""
    if position + 1 < len(plan.order):
        return _with_rows(plan.backend, plan.order[position + 1][1], rows)
    return _coordinate(plan.backend, shard_id=len(plan.shards), global_row_idx=rows)


def _find_position(plan: _Plan, start: Any) -> int:
    if start.shard_id >= len(plan.shards):
        return len(plan.order)
    for position, (index, _) in enumerate(plan.order):
        if index == start.shard_id:
            return position
    raise ConfigError(
        f"ResumablePipeline: the stream position is in shard {start.shard_id}, which this "
        "pipeline does not read (shards=...); resume with the same shard assignment"
    )


def _count_issue(plan: _Plan, kind: str, where: str) -> None:
    plan.stats[kind] = plan.stats.get(kind, 0) + 1
    if len(plan.issues) < 1000:
        plan.issues.append(f"{where}: {kind}")
    if plan.strict:
        raise MalformedInputError(f"{where}: {kind} [strict=False counts and skips such input]")


def _raw_batches(plan: _Plan, start: Any) -> Generator[_Raw, None, None]:
    """Batches before the pipeline, from ``start``: natural per-shard batches."""
    backend = plan.backend
    position = _find_position(plan, start)
    rows = start.global_row_idx
    first = True
    while position < len(plan.order):
        index, shard_start = plan.order[position]
        here = start if first else _with_rows(backend, shard_start, rows)
        first = False
        shard = plan.shards[index]
        done = _next_start(plan, position, 0)
        if shard.kind == "iterable":
            iterator = _iterable_batches(plan, index, shard, here, done)
        else:
            iterator = _file_batches(plan, index, shard, here, done)
        try:
            for raw in iterator:
                rows = raw.end.global_row_idx
                yield raw
        finally:
            iterator.close()  # now, not at garbage collection: it holds files and threads
        position += 1


def _file_batches(
    plan: _Plan, index: int, shard: _Shard, here: Any, done: Any
) -> Generator[_Raw, None, None]:
    backend = plan.backend
    if plan.native_depth and shard.kind == "text":
        yield from _native_text_batches(plan, index, shard, here, done)
        return
    stream = InputStream(
        [shard.name],
        text_field=plan.text_field,
        fields=plan.fields,
        batch_size=plan.batch_size,
        threads=plan.threads,
        start=_coordinate(
            backend,
            shard_id=0,
            byte_offset=here.byte_offset,
            row_group_idx=here.row_group_idx,
            row_offset_in_page=here.row_offset_in_page,
            global_row_idx=here.global_row_idx,
        ),
        strict=plan.strict,
        txt_mode=plan.txt_mode,
        backend=backend,
        reader_options=plan.reader_options,
    )
    stream.document_coordinates = True
    iterator = iter(stream)
    try:
        for batch in iterator:
            for issue in batch.issues:
                plan.stats[issue["kind"]] = plan.stats.get(issue["kind"], 0) + 1
                if len(plan.issues) < 1000:
                    plan.issues.append(issue["where"])
            end_local = batch.end
            if end_local.shard_id >= 1:
                end = _with_rows(backend, done, end_local.global_row_idx)
            else:
                end = _coordinate(
                    backend,
                    shard_id=index,
                    byte_offset=end_local.byte_offset,
                    row_group_idx=end_local.row_group_idx,
                    row_offset_in_page=end_local.row_offset_in_page,
                    global_row_idx=end_local.global_row_idx,
                )
            if batch.documents is None:
                continue  # the end of the shard: nothing to deliver
            if batch.fields is None:  # a DocumentBatch (text shard)
                yield _Raw(
                    batch.documents,
                    None,
                    None,
                    end,
                    len(batch.documents),  # type: ignore[arg-type]
                    remap=(index, done),
                )
            else:
                coordinates = [_global(backend, c, index, done) for c in (batch.coordinates or [])]
                records = batch.records or []
                yield _Raw(batch.documents, batch.fields, coordinates, end, len(records))
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()


def _record_issues(plan: _Plan, issues: Sequence[Any]) -> None:
    for issue in issues:
        plan.stats[issue.kind] = plan.stats.get(issue.kind, 0) + 1
        if len(plan.issues) < 1000:
            plan.issues.append(str(issue))


def _native_text_batches(
    plan: _Plan, index: int, shard: _Shard, here: Any, done: Any
) -> Iterator[_Raw]:
    """A text shard read and processed on the native prefetch thread (``ShardPrefetcher``): the
    same batches as :func:`InputStream`, with the pipeline already run (no GIL held)."""
    backend = plan.backend
    path = glob.escape(shard.name) if any(c in shard.name for c in "*?[") else shard.name
    reader = backend.ShardReader(
        [path],
        text_field=plan.text_field,
        fields=tuple(plan.fields),
        batch_size=plan.batch_size,
        threads=plan.threads,
        start=_coordinate(
            backend, shard_id=0, byte_offset=here.byte_offset, global_row_idx=here.global_row_idx
        ),
        strict=plan.strict,
        txt_mode=plan.txt_mode,
        **plan.reader_options,
    )
    # With a shuffle the pipeline runs over the shuffled batches, not over what the reader cut.
    engine = None if plan.pipeline is None or plan.shuffle is not None else plan.pipeline._engine
    prefetcher = backend.ShardPrefetcher(reader, engine, plan.native_depth)
    seen = 0
    try:
        for batch, result, exact, near, issues in prefetcher:
            seen += len(issues)
            _record_issues(plan, issues)
            end_local = batch.end
            end = (
                _with_rows(backend, done, end_local.global_row_idx)
                if end_local.shard_id >= 1
                else _coordinate(
                    backend,
                    shard_id=index,
                    byte_offset=end_local.byte_offset,
                    global_row_idx=end_local.global_row_idx,
                )
            )
            yield _Raw(
                batch, None, None, end, len(batch), remap=(index, done), ready=(result, exact, near)
            )
        _record_issues(plan, reader.errors[seen:])  # after the last document
    finally:
        prefetcher.close()
        reader.close()


def _global(backend: Any, c: Any, index: int, done: Any) -> Any:
    if c.shard_id >= 1:
        return _with_rows(backend, done, c.global_row_idx)
    return _coordinate(
        backend,
        shard_id=index,
        byte_offset=c.byte_offset,
        row_group_idx=c.row_group_idx,
        row_offset_in_page=c.row_offset_in_page,
        global_row_idx=c.global_row_idx,
    )


def _iterable_batches(
    plan: _Plan, index: int, shard: _Shard, here: Any, done: Any
) -> Generator[_Raw, None, None]:
    """An iterable shard: its coordinate's ``byte_offset`` counts its records (the record index
    to resume at); ``global_row_idx`` counts the stream's. Resume skips ``byte_offset`` records
    (a ``skip(n)`` method, as Hugging Face ``IterableDataset`` has, is used when present)."""
    backend = plan.backend
    source = shard.iterable
    local = here.byte_offset
    rows = here.global_row_idx
    # The source's own resumable state (a Hugging Face IterableDataset has one); not with a
    # shuffle, whose resume point is a block start, not a batch end.
    stateful = (
        plan.shuffle is None
        and not isinstance(source, Iterator)
        and callable(getattr(source, "state_dict", None))
        and callable(getattr(source, "load_state_dict", None))
    )
    saved = plan.source_state
    if local and stateful and saved is not None and saved[:2] == (index, local):
        source.load_state_dict(copy.deepcopy(saved[2]))
        iterator = iter(source)
    elif local and callable(getattr(source, "skip", None)) and not isinstance(source, Iterator):
        iterator = iter(source.skip(local))
    else:
        iterator = iter(source)
        if isinstance(source, Iterator) and local:
            raise ConfigError(
                f"ResumablePipeline: shard {index} is a one-shot iterator; it cannot be read "
                f"again from record {local}. Pass a re-iterable object (a list, a dataset, a "
                "class with __iter__) so that resume and rollback can start it again"
            )
        for _ in range(local):
            if next(iterator, _MISSING) is _MISSING:
                break
    texts: list[str] = []
    fields: dict[str, list[object]] = {name: [] for name in plan.fields}
    coordinates: list[Any] = []
    records = 0
    item = next(iterator, _MISSING)
    try:
        while item is not _MISSING:
            local += 1
            rows += 1
            records += 1
            text: object
            if isinstance(item, Mapping):
                text = _dotted(item, plan.text_field)
                values = [_dotted(item, name) for name in plan.fields]
            else:
                text = item
                values = [_MISSING for _ in plan.fields]
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            if not isinstance(text, str):
                kind = "missing_field" if text is _MISSING else "non_string_field"
                _count_issue(plan, kind, f"{shard.name} record {local - 1} (shard {index})")
            else:
                texts.append(text)
                for name, value in zip(plan.fields, values, strict=True):
                    fields[name].append(None if value is _MISSING else value)
                coordinates.append(
                    _coordinate(backend, shard_id=index, byte_offset=local, global_row_idx=rows)
                )
            # The source's state after this batch's last record, before the look-ahead below.
            state = source.state_dict() if stateful and len(texts) == plan.batch_size else None
            # One item ahead: the batch that takes the last record ends at the next shard.
            item = next(iterator, _MISSING)
            if len(texts) == plan.batch_size or (item is _MISSING and (texts or records)):
                if item is _MISSING:
                    end = _with_rows(backend, done, rows)
                    if coordinates and coordinates[-1].byte_offset == local:
                        coordinates[-1] = end
                else:
                    end = _coordinate(
                        backend, shard_id=index, byte_offset=local, global_row_idx=rows
                    )
                raw = _Raw(texts, fields, coordinates, end, records)
                if state is not None and item is not _MISSING:
                    raw.source_state = (index, local, copy.deepcopy(state))
                yield raw
                texts, coordinates, records = [], [], 0
                fields = {name: [] for name in plan.fields}
    finally:
        close = getattr(iterator, "close", None)
        if close is not None and iterator is not source:
            close()


def _documents(plan: _Plan, raw: _Raw) -> Iterator[_Doc]:
    """The documents of a raw batch, one by one (the shuffle path)."""
    backend = plan.backend
    if raw.coordinates is None:  # a DocumentBatch
        index, done = raw.remap
        batch = raw.documents
        texts = batch.texts
        field_values = [batch.fields[name] for name in plan.fields]
        coordinates = [_global(backend, c, index, done) for c in batch.coordinates]
    else:
        texts = raw.documents if isinstance(raw.documents, list) else raw.documents.to_pylist()
        field_values = [raw.fields[name] for name in plan.fields] if raw.fields else []
        coordinates = raw.coordinates
    for i, text in enumerate(texts):
        yield _Doc(text, tuple(values[i] for values in field_values), coordinates[i])


def _shuffled(plan: _Plan, start: Any, skip: int, first_block: int) -> Generator[_Raw, None, None]:
    docs = _doc_stream(plan, start)
    try:
        yield from _shuffle_blocks(plan, start, skip, first_block, docs)
    finally:
        docs.close()  # now, not at garbage collection: it holds files and threads


def _shuffle_blocks(
    plan: _Plan,
    start: Any,
    skip: int,
    first_block: int,
    docs: Iterator[tuple[_Doc, Any]],
) -> Iterator[_Raw]:
    """Blocks of ``shuffle_buffer`` documents, each permuted by a generator seeded with
    (seed, block number); batches of ``batch_size`` cut from the permuted stream.

    A batch's ``end`` is the coordinate where the block holding the stream's next document
    starts; with the committed batch id it says exactly where to resume (docs/streaming.md).
    """
    assert plan.shuffle is not None
    size = plan.shuffle_buffer
    block_start = start
    block_number = first_block
    pending: list[_Doc] = []
    position = start
    exhausted = False
    out: list[_Doc] = []
    while True:
        if not pending:
            if exhausted:
                break
            block: list[_Doc] = []
            block_start = position
            for doc, after in docs:
                block.append(doc)
                position = after
                if len(block) == size:
                    break
            else:
                exhausted = True
                # The rest of the stream (malformed records after the last document) too.
                position = _stream_end(plan, position)
            if not block:
                break
            random.Random(f"{plan.shuffle}:{block_number}").shuffle(block)
            block_number += 1
            pending = block[skip:]
            skip = 0
            pending.reverse()  # pop() from the end delivers the permuted order
            if not pending:
                continue
        out.append(pending.pop())
        if len(out) == plan.batch_size:
            # The next document comes from this block (its start) or, when the block is used
            # up, from the next one, which starts where reading stopped.
            end = block_start if pending else position
            yield _batch_of(plan, out, end)
            out = []
    if out:
        yield _batch_of(plan, out, position)


def _stream_end(plan: _Plan, position: Any) -> Any:
    return (
        _coordinate(plan.backend, shard_id=len(plan.shards), global_row_idx=position.global_row_idx)
        if position.shard_id >= len(plan.shards)
        else position
    )


def _doc_stream(plan: _Plan, start: Any) -> Generator[tuple[_Doc, Any], None, None]:
    """(document, reader position after it) in reading order; the position after a batch's
    last document is the batch's end (which also covers trailing malformed records)."""
    raws = _raw_batches(plan, start)
    try:
        for raw in raws:
            docs = list(_documents(plan, raw))
            for i, doc in enumerate(docs):
                yield doc, (raw.end if i == len(docs) - 1 else doc.coordinate)
    finally:
        raws.close()


def _batch_of(plan: _Plan, docs: list[_Doc], end: Any) -> _Raw:
    fields = {name: [d.fields[i] for d in docs] for i, name in enumerate(plan.fields)}
    return _Raw([d.text for d in docs], fields, [d.coordinate for d in docs], end, len(docs))


def _entries(pipeline: Any) -> tuple[int, int]:
    """Committed + staged entries of each deduplicator: a commit moves entries between the two
    and leaves the sum alone, so differences of it count what a batch staged."""
    if pipeline is None:
        return (0, 0)
    exact = pipeline.exact_dedup
    near = pipeline.near_dedup
    return (0 if exact is None else len(exact), 0 if near is None else len(near))


def _finish(plan: _Plan, raw: _Raw, batch_id: int) -> _Produced:
    """Runs the pipeline over one raw batch (under the state lock: see the module docstring)."""
    backend = plan.backend
    pipeline = plan.pipeline
    if raw.ready is not None and raw.ready[0] is not None:
        result, exact, near = raw.ready
        index, done = raw.remap
        coordinates = [_global(backend, c, index, done) for c in result.coordinates]
        out = StreamBatch(
            batch_id, result.texts, dict(result.fields), coordinates, raw.end, raw.records, result
        )
        return _Produced(batch_id, out, (exact, near))
    if pipeline is None:
        if raw.coordinates is None:
            index, done = raw.remap
            batch = raw.documents
            texts = backend.StringTensor.from_pylist(batch.texts)
            fields = {name: list(batch.fields[name]) for name in plan.fields}
            coordinates = [_global(backend, c, index, done) for c in batch.coordinates]
        else:
            docs = raw.documents
            texts = (
                backend.StringTensor.from_pylist(docs)
                if isinstance(docs, list)
                else backend.StringTensor.from_arrow(docs)
            )
            fields = {name: list((raw.fields or {})[name]) for name in plan.fields}
            coordinates = list(raw.coordinates)
        out = StreamBatch(batch_id, texts, fields, coordinates, raw.end, raw.records)
        return _Produced(batch_id, out, (0, 0))
    with plan.state_lock:
        before = _entries(pipeline)
        if raw.coordinates is None:
            result = pipeline.process(raw.documents)
        else:
            result = pipeline.process(
                raw.documents, fields=raw.fields or None, coordinates=raw.coordinates
            )
        after = _entries(pipeline)
    if raw.coordinates is None:
        index, done = raw.remap
        coordinates = [_global(backend, c, index, done) for c in result.coordinates]
    else:
        coordinates = list(result.coordinates)
    fields = dict(result.fields)
    out = StreamBatch(batch_id, result.texts, fields, coordinates, raw.end, raw.records, result)
    return _Produced(batch_id, out, (after[0] - before[0], after[1] - before[1]))


def _produce(plan: _Plan, start: Any, first_batch: int) -> Generator[_Produced, None, None]:
    if plan.shuffle is None:
        raws: Generator[_Raw, None, None] = _raw_batches(plan, start)
    else:
        emitted = first_batch * plan.batch_size
        raws = _shuffled(plan, start, emitted % plan.shuffle_buffer, emitted // plan.shuffle_buffer)
    batch_id = first_batch
    try:
        for raw in raws:
            produced = _finish(plan, raw, batch_id)
            produced.source_state = raw.source_state
            yield produced
            batch_id += 1
    finally:
        raws.close()


class _Producer:
    """Runs :func:`_produce` on a thread, ``depth`` batches ahead, into a bounded queue."""

    def __init__(self, plan: _Plan, start: Any, first_batch: int, depth: int) -> None:
        self._queue: queue.Queue[object] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=_Producer._run,
            args=(plan, start, first_batch, self._queue, self._stop),
            name="luminamoon-prefetch",
            daemon=True,
        )
        self._thread.start()

    @staticmethod
    def _run(
        plan: _Plan, start: Any, first_batch: int, out: queue.Queue[object], stop: threading.Event
    ) -> None:
        def put(item: object) -> bool:
            while not stop.is_set():
                try:
                    out.put(item, timeout=_POLL_S)
                    return True
                except queue.Full:
                    continue
            return False

        produced = _produce(plan, start, first_batch)
        try:
            for item in produced:
                if not put(item):
                    return
            put(_END)
        except BaseException as exc:  # handed to the consumer, raised there
            put(_Failure(exc))
        finally:
            produced.close()

    def get(self) -> object:
        while True:
            try:
                return self._queue.get(timeout=_POLL_S)
            except queue.Empty:
                if not self._thread.is_alive() and self._queue.empty():
                    return _Failure(LuminaMoonError("the prefetch thread ended unexpectedly"))

    def stop(self) -> None:
        """Stops the thread and waits for it: it closes its readers before it ends."""
        self._stop.set()
        if self._thread is threading.current_thread():
            return
        while self._thread.is_alive():
            try:  # unblock a put() waiting on a full queue
                while True:
                    self._queue.get_nowait()
            except queue.Empty:
                pass
            self._thread.join(timeout=_POLL_S)


class _Inline:
    """``prefetch=0``: the batches are produced on the consumer's thread when asked for."""

    def __init__(self, plan: _Plan, start: Any, first_batch: int) -> None:
        self._produced = _produce(plan, start, first_batch)

    def get(self) -> object:
        try:
            return next(self._produced)
        except StopIteration:
            return _END
        except BaseException as exc:
            return _Failure(exc)

    def stop(self) -> None:
        self._produced.close()


# =============================================================================================
# The public class
# =============================================================================================


def _index_dir_of(index_dir: object, checkpoint: str | os.PathLike[str] | None) -> str | None:
    """The ShardReader ``index_dir``: a given path; ``None`` = ``<checkpoint>.index`` beside the
    checkpoint (no index without a checkpoint); ``False`` = no index."""
    if index_dir is False:
        return None
    if index_dir is None or index_dir is True:
        if checkpoint is None:
            return None
        return os.fsdecode(os.fspath(checkpoint)) + ".index"
    if not isinstance(index_dir, (str, os.PathLike)):
        raise TypeError(
            "ResumablePipeline: index_dir must be a path, None (beside the checkpoint) or False, "
            f"got {type(index_dir).__name__}"
        )
    return os.fsdecode(os.fspath(index_dir))


def _positive(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"ResumablePipeline: {name} must be an int >= {minimum}, got {value!r}")
    return value


class ResumablePipeline:
    """Streams curated batches from shards or iterables; ``commit(batch_id)`` after each
    optimizer step makes the position and the dedup state durable; a restart with the same
    arguments continues exactly after the last commit.

    ``shards`` restricts the stream to some shards, or shard tails, of the expanded list: a
    sequence of shard indices or ``(index, StreamCoordinate)`` pairs, read in that order.
    """

    # The backend whose components this class builds (the live one; parity tests subclass it).
    _backend: ClassVar[Any] = impl
    _pipeline_class: ClassVar[type[FusedPipeline]] = FusedPipeline

    def __init__(
        self,
        sources: object,
        pipeline: FusedPipeline | Mapping[str, object] | None = None,
        *,
        checkpoint: str | os.PathLike[str] | None,
        batch_size: int = 1024,
        prefetch: int = 2,
        text_field: str = "text",
        fields: Sequence[str] = (),
        shuffle: int | None = None,
        shuffle_buffer: int = 8192,
        shards: Sequence[int | tuple[int, Any]] | None = None,
        txt_mode: str = "line",
        strict: bool = False,
        threads: int = 0,
        durable: bool = True,
        index_dir: str | os.PathLike[str] | bool | None = None,
        index_spacing: int = 4 * 2**20,
    ) -> None:
        # Set first: close() and __del__ must work whatever fails below.
        self._closed = True
        self._producer: _Producer | _Inline | None = None
        self._tracker: Any = None
        self._pipeline: Any = None
        backend = self._backend
        self._batch_size = _positive("batch_size", batch_size)
        self._prefetch = _positive("prefetch", prefetch, 0)
        self._shuffle_buffer = _positive("shuffle_buffer", shuffle_buffer)
        if shuffle is not None and (isinstance(shuffle, bool) or not isinstance(shuffle, int)):
            raise ConfigError(
                f"ResumablePipeline: shuffle must be None or an int seed, got {shuffle!r}"
            )
        if isinstance(fields, str):
            raise TypeError("ResumablePipeline: fields must be a sequence of names, not a str")
        if not isinstance(text_field, str) or not text_field:
            raise ConfigError("ResumablePipeline: text_field must be a non-empty str")
        # Where ShardReader keeps the access points of compressed shards and the validators of
        # http(s) shards (docs/readers.md): by default beside the checkpoint, so a resume seeks
        # near its coordinate instead of decompressing the prefix; False: none.
        self._index_dir = _index_dir_of(index_dir, checkpoint)
        self._shards = _shards_of(sources)
        self._order = self._assignment(shards, shuffle)
        self._fields = list(fields)
        self._shuffle = shuffle
        self._checkpoint = None if checkpoint is None else os.fsdecode(os.fspath(checkpoint))
        self._durable = durable
        if checkpoint is not None:
            path = os.fspath(checkpoint)
            parent = os.path.dirname(path)
            if parent:
                os.makedirs(parent, exist_ok=True)
            self._tracker = backend.StateTracker(path, durable=durable)
        try:
            self._pipeline = self._build_pipeline(pipeline, threads)
            self._plan = _Plan(
                backend=backend,
                shards=self._shards,
                order=self._order,
                text_field=text_field,
                fields=self._fields,
                batch_size=self._batch_size,
                shuffle=shuffle,
                shuffle_buffer=self._shuffle_buffer,
                txt_mode=txt_mode,
                strict=strict,
                threads=threads,
                pipeline=self._pipeline,
                state_lock=threading.Lock(),
                # The native backend reads text shards (and runs the pipeline over them) on a
                # native thread one batch ahead of the Python prefetch queue.
                native_depth=1 if self._prefetch and hasattr(backend, "ShardPrefetcher") else 0,
                reader_options={}
                if self._index_dir is None
                else {"index_dir": self._index_dir, "index_spacing": index_spacing},
            )
            self._load_committed()
        except BaseException:
            self._release()
            raise
        self._closed = False
        self._finalizer = weakref.finalize(self, _stop_producer, [None])
        # The recipe a torch DataLoader worker rebuilds the stream from (as_torch_dataset).
        self._checkpoint_path = None if checkpoint is None else os.fspath(checkpoint)
        self._torch_options: dict[str, Any] = {
            "batch_size": batch_size,
            "prefetch": prefetch,
            "text_field": text_field,
            "fields": list(fields),
            "shuffle": shuffle,
            "shuffle_buffer": shuffle_buffer,
            "txt_mode": txt_mode,
            "strict": strict,
            "threads": threads,
            "index_dir": index_dir,
            "index_spacing": index_spacing,
        }

    # -- construction helpers ------------------------------------------------------------------

    def _assignment(
        self, shards: Sequence[int | tuple[int, Any]] | None, shuffle: int | None
    ) -> list[tuple[int, Any]]:
        backend = self._backend
        count = len(self._shards)
        order: list[tuple[int, Any]] = []
        if shards is None:
            order = [(i, backend.StreamCoordinate(shard_id=i)) for i in range(count)]
        else:
            seen: set[int] = set()
            for entry in shards:
                if isinstance(entry, tuple):
                    index, start = entry
                else:
                    index, start = entry, None
                if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
                    raise ConfigError(
                        f"ResumablePipeline: shards: {index!r} is not a shard index "
                        f"(0..{count - 1})"
                    )
                if index in seen:
                    raise ConfigError(f"ResumablePipeline: shards: shard {index} is listed twice")
                seen.add(index)
                if start is None:
                    start = backend.StreamCoordinate(shard_id=index)
                elif not isinstance(start, backend.StreamCoordinate):
                    start = backend.StreamCoordinate.from_bytes(start.to_bytes())
                if start.shard_id != index:
                    raise ConfigError(
                        f"ResumablePipeline: shards: the start coordinate of shard {index} names "
                        f"shard {start.shard_id}"
                    )
                order.append((index, _with_rows(backend, start, 0)))
        if shuffle is not None:
            random.Random(f"{shuffle}:shards").shuffle(order)
        return order

    def _build_pipeline(self, pipeline: object, threads: int) -> Any:
        if pipeline is None:
            return None
        cls = self._pipeline_class
        if isinstance(pipeline, FusedPipeline):
            if pipeline.tracker is not None:
                raise ConfigError(
                    "ResumablePipeline: pass a FusedPipeline without a tracker; it is rebuilt "
                    "with the same options and attached to the checkpoint"
                )
            config = pipeline.to_config()
        elif isinstance(pipeline, Mapping):
            config = dict(pipeline)
        else:
            raise TypeError(
                "ResumablePipeline: pipeline must be a FusedPipeline, a config mapping or None, "
                f"got {type(pipeline).__name__}"
            )
        return cls.from_config(config, tracker=self._tracker, threads=threads or None)

    def _load_committed(self) -> None:
        backend = self._backend
        if self._tracker is not None and self._tracker.epoch > 0:
            epoch, batch_id, coordinate, _ = self._tracker.read()
            self._epoch = epoch
            self._committed_id = batch_id
            self._committed_end = coordinate
            self._plan.source_state = self._read_source_state(epoch)
        else:
            self._epoch = 0
            self._committed_id = -1
            first = self._order[0][1] if self._order else None
            self._committed_end = (
                _with_rows(backend, first, 0)
                if first is not None
                else backend.StreamCoordinate(shard_id=len(self._shards))
            )
        # uncommitted, in order: (batch id, end, staged entries, source state)
        self._yielded: list[tuple[int, Any, tuple[int, int], Any]] = []
        self._exhausted = False

    # -- the companion of an iterable shard's own state ---------------------------------------
    #
    # <checkpoint>.source_state (JSON) holds the state_dict() of an iterable source (a Hugging
    # Face IterableDataset) at the end of the committed batch, tagged with the epoch of that
    # commit, and the entry of the commit before. It is written (atomically: a temporary file,
    # fsync, rename) before the slot: a crash in between leaves the new entry of an epoch that
    # never became active, and the previous entry still matches the active slot. An entry is
    # used only when its epoch, shard and record count match the committed coordinate; otherwise
    # the source is resumed by skipping records, which gives the same stream, only slower.

    def _source_state_path(self) -> str | None:
        if self._tracker is None or self._checkpoint is None:
            return None
        return self._checkpoint + ".source_state"

    def _read_source_state(self, epoch: int) -> tuple[int, int, Any] | None:
        path = self._source_state_path()
        if path is None or not os.path.exists(path):
            return None
        try:
            with open(path, encoding="utf-8") as f:
                entries = json.load(f)["entries"]
        except (OSError, ValueError, KeyError, TypeError):
            return None  # unreadable: resume by skipping records (same stream)
        for entry in entries:
            if isinstance(entry, dict) and entry.get("epoch") == epoch:
                return (int(entry["shard"]), int(entry["records"]), entry["state"])
        return None

    def _write_source_state(self, epoch: int, state: tuple[int, int, Any]) -> None:
        path = self._source_state_path()
        if path is None:
            return
        entries = [{"epoch": epoch, "shard": state[0], "records": state[1], "state": state[2]}]
        previous = self._plan.source_state
        if previous is not None:
            entries.append(
                {
                    "epoch": self._epoch,
                    "shard": previous[0],
                    "records": previous[1],
                    "state": previous[2],
                }
            )
        try:
            data = json.dumps({"version": 1, "entries": entries})
        except (TypeError, ValueError):
            return  # not JSON: this source resumes by skipping records
        temp = path + ".partial"
        with open(temp, "w", encoding="utf-8") as f:
            f.write(data)
            f.flush()
            if self._durable:
                os.fsync(f.fileno())
        os.replace(temp, path)
        if self._durable:
            fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    # -- iteration -----------------------------------------------------------------------------

    def __iter__(self) -> ResumablePipeline:
        return self

    def __next__(self) -> StreamBatch:
        self._check_open()
        if self._exhausted:
            raise StopIteration
        if self._producer is None:
            self._start_producer()
        assert self._producer is not None
        item = self._producer.get()
        if item is _END:
            self._exhausted = True
            self._stop_producer()
            raise StopIteration
        if isinstance(item, _Failure):
            self._exhausted = True
            self._stop_producer()
            raise item.error
        assert isinstance(item, _Produced)
        self._yielded.append((item.batch_id, item.batch.end, item.staged, item.source_state))
        return item.batch

    def _start_producer(self) -> None:
        first = self._committed_id + 1  # (the producer starts only with nothing yielded)
        start = self._committed_end
        if self._prefetch == 0:
            self._producer = _Inline(self._plan, start, first)
        else:
            self._producer = _Producer(self._plan, start, first, self._prefetch)
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _stop_producer, [self._producer])

    def _stop_producer(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            producer.stop()

    # -- commit protocol -----------------------------------------------------------------------

    def commit(self, batch_id: int) -> int:
        """Makes everything up to and including batch ``batch_id`` consumed, durably: the
        position after it and the dedup state its documents (and earlier ones) staged. Returns
        the checkpoint epoch (0 without a checkpoint)."""
        self._check_open()
        if isinstance(batch_id, bool) or not isinstance(batch_id, int):
            raise TypeError(f"commit: batch_id must be an int, got {type(batch_id).__name__}")
        if batch_id <= self._committed_id:
            raise LuminaMoonError(
                f"commit({batch_id}): batch {batch_id} is already committed (last commit: batch "
                f"{self._committed_id}); commit each batch id once, in increasing order"
            )
        position = next((i for i, y in enumerate(self._yielded) if y[0] == batch_id), None)
        if position is None:
            last = self._yielded[-1][0] if self._yielded else None
            yielded = (
                "no batch was yielded since" if last is None else f"the last yielded is {last}"
            )
            raise LuminaMoonError(
                f"commit({batch_id}): batch {batch_id} was never yielded ({yielded}; last commit: "
                f"batch {self._committed_id}); commit only ids of batches the loop received"
            )
        covered = self._yielded[: position + 1]
        end = covered[-1][1]
        exact = sum(y[2][0] for y in covered)
        near = sum(y[2][1] for y in covered)
        source_state = covered[-1][3]
        if self._tracker is not None:
            if source_state is not None:
                self._write_source_state(self._tracker.epoch + 1, source_state)
            with self._plan.state_lock:
                if self._pipeline is not None:
                    if self._pipeline.exact_dedup is not None:
                        self._pipeline.exact_dedup.limit_next_commit(exact)
                    if self._pipeline.near_dedup is not None:
                        self._pipeline.near_dedup.limit_next_commit(near)
                self._tracker.update(batch_id, end)
                self._epoch = self._tracker.commit()
        elif self._pipeline is not None:
            # No checkpoint: the dedup state moves from staged to committed in RAM only.
            with self._plan.state_lock:
                for dedup, count in (
                    (self._pipeline.exact_dedup, exact),
                    (self._pipeline.near_dedup, near),
                ):
                    if dedup is not None:
                        _promote_prefix(dedup, count)
            self._epoch += 1
        else:
            self._epoch += 1
        del self._yielded[: position + 1]
        self._committed_id = batch_id
        self._committed_end = end
        self._plan.source_state = source_state
        return int(self._epoch)

    def rollback(self) -> None:
        """Forgets every batch yielded since the last commit: the next batch is the one after
        the last commit again, with the same id and content."""
        self._check_open()
        self._stop_producer()
        if self._tracker is not None:
            self._tracker.rollback()
        elif self._pipeline is not None:
            self._pipeline.rollback()
        self._yielded = []
        self._exhausted = False

    # -- state (the committed one, never the prefetched one) ------------------------------------

    @property
    def committed_batch_id(self) -> int:
        """The last committed batch id; -1 before the first commit."""
        return int(self._committed_id)

    @property
    def committed_coordinate(self) -> Any:
        """Where the stream resumes: the coordinate after the last committed batch."""
        return self._committed_end

    @property
    def epoch(self) -> int:
        return int(self._epoch)

    @property
    def shards(self) -> list[str]:
        """The expanded shard list (paths; ``<type>`` for an iterable shard)."""
        return [s.name for s in self._shards]

    @property
    def assignment(self) -> list[tuple[int, Any]]:
        """The shards (index, start coordinate) this pipeline reads, in reading order."""
        return list(self._order)

    def progress(self) -> dict[int, dict[str, Any]]:
        """Committed progress per assigned shard: ``{index: {"coordinate": c, "done": bool}}``,
        ``c`` being where that shard resumes. With a shuffle the shard in progress is at the
        start of the shuffle block in progress (docs/streaming.md)."""
        position = _find_position(self._plan, self._committed_end)
        out: dict[int, dict[str, Any]] = {}
        for i, (index, start) in enumerate(self._order):
            if i < position:
                out[index] = {"coordinate": None, "done": True}
            elif i == position:
                out[index] = {"coordinate": self._committed_end, "done": False}
            else:
                out[index] = {"coordinate": start, "done": False}
        return out

    def remaining(self) -> list[tuple[int, Any]]:
        """The committed shard tails not yet read: ``(index, coordinate)`` in reading order —
        what an elastic resume redistributes."""
        return [(index, p["coordinate"]) for index, p in self.progress().items() if not p["done"]]

    def state_dict(self) -> dict[str, Any]:
        """The committed state as plain Python values (coordinates as 32-byte ``bytes``)."""
        return {
            "version": _STATE_VERSION,
            "epoch": int(self._epoch),
            "batch_id": self._committed_id,
            "coordinate": self._committed_end.to_bytes(),
            "shards": [s.name for s in self._shards],
            "assignment": [(index, start.to_bytes()) for index, start in self._order],
            "shuffle": self._shuffle,
            "shuffle_buffer": self._shuffle_buffer,
            "batch_size": self._batch_size,
            # an iterable shard's own state at the committed position (JSON-like), or None
            "source_state": copy.deepcopy(self._plan.source_state),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continues from ``state`` (a ``state_dict()``): the next batch is the one after it.

        With a checkpoint, ``state`` must be the checkpoint's committed state (same epoch): the
        dedup state on disk belongs to that commit and cannot be moved elsewhere.
        """
        self._check_open()
        backend = self._backend
        if state.get("version") != _STATE_VERSION:
            raise ConfigError(
                f"load_state_dict: unsupported state version {state.get('version')!r}"
            )
        for key, mine in (
            ("shards", [s.name for s in self._shards]),
            ("batch_size", self._batch_size),
            ("shuffle", self._shuffle),
            ("shuffle_buffer", self._shuffle_buffer),
        ):
            if state.get(key) != mine:
                raise ConfigError(
                    f"load_state_dict: the state has {key}={state.get(key)!r}, this pipeline "
                    f"{mine!r}; build the pipeline with the options the state was saved with"
                )
        if self._tracker is not None and int(state["epoch"]) != self._tracker.epoch:
            raise ConfigError(
                f"load_state_dict: the state is of commit {state['epoch']}, the checkpoint is at "
                f"commit {self._tracker.epoch}; a state must match the checkpoint it was "
                "committed to (its dedup state belongs to that commit)"
            )
        self._stop_producer()
        if self._tracker is not None:
            self._tracker.rollback()
        elif self._pipeline is not None:
            self._pipeline.rollback()
        self._order = [
            (int(i), backend.StreamCoordinate.from_bytes(bytes(c))) for i, c in state["assignment"]
        ]
        self._plan.order = self._order
        saved = state.get("source_state")
        self._plan.source_state = None if saved is None else tuple(saved)
        self._epoch = int(state["epoch"])
        self._committed_id = int(state["batch_id"])
        self._committed_end = backend.StreamCoordinate.from_bytes(bytes(state["coordinate"]))
        self._yielded = []
        self._exhausted = False

    # -- PyTorch -------------------------------------------------------------------------------

    def as_torch_dataset(
        self,
        *,
        rank: int | None = None,
        world_size: int | None = None,
        output: Any = "string_tensor",
        pin_memory: bool = False,
        checkpoint: str | os.PathLike[str] | None = None,
        resume: Any = None,
        durable: bool = True,
        worker_checkpoints: bool = False,
    ) -> Any:
        """This stream as a ``torch.utils.data.IterableDataset`` (a
        ``luminamoon.data.torch_stream.StreamDataset``) sharded by rank x DataLoader worker,
        each with its own state; docs/streaming.md, section "PyTorch". ``output``:
        ``"string_tensor"``, ``"dlpack"`` (offsets + payload tensors) or a callable taking a
        ``TorchStreamBatch`` (collate / tokenize). ``checkpoint``: the file
        ``StreamDataset.commit`` writes (default: this pipeline's checkpoint + ``".torch"``).
        ``resume``: the committed state of an earlier run (same or changed layout).
        ``worker_checkpoints``: each worker keeps its dedup state in its own checkpoint file
        (named after ``checkpoint``), so a resume restores it too."""
        self._check_open()
        from ._optional import require  # noqa: PLC0415 - torch is optional

        require("torch", "ResumablePipeline.as_torch_dataset")
        from .torch_stream import make_dataset  # noqa: PLC0415 - imports torch

        sources = [s.iterable if s.kind == "iterable" else s.name for s in self._shards]
        return make_dataset(
            self,
            sources,
            dict(self._torch_options),
            self._checkpoint_path,
            rank=rank,
            world_size=world_size,
            output=output,
            pin_memory=pin_memory,
            checkpoint=checkpoint,
            resume=resume,
            durable=durable,
            worker_checkpoints=worker_checkpoints,
        )

    # -- introspection -----------------------------------------------------------------------

    @property
    def pipeline(self) -> Any:
        """The FusedPipeline in use (attached to the checkpoint), or None."""
        return self._pipeline

    @property
    def tracker(self) -> Any:
        return self._tracker

    def stats(self) -> dict[str, int]:
        """Input issues counted so far in this session (malformed records, null texts, ...)."""
        return dict(self._plan.stats)

    @property
    def errors(self) -> list[str]:
        """The first 1000 input issues of this session, each naming the shard and offset."""
        return list(self._plan.issues)

    # -- lifetime ------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise LuminaMoonError("ResumablePipeline is closed")

    def _release(self) -> None:
        self._stop_producer()
        tracker, self._tracker = self._tracker, None
        self._pipeline = None
        if getattr(self, "_plan", None) is not None:
            self._plan.pipeline = None
        if tracker is not None:
            tracker.close()

    def close(self) -> None:
        """Stops the prefetch thread (waiting for it), closes the readers and the checkpoint.
        Uncommitted batches are not committed. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._release()
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None:
            finalizer.detach()

    def __enter__(self) -> ResumablePipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"committed batch {self._committed_id}"
        return f"ResumablePipeline({len(self._shards)} shards, {state})"


def _stop_producer(holder: list[Any]) -> None:
    producer = holder[0]
    if producer is not None:
        producer.stop()


def _promote_prefix(dedup: Any, count: int) -> None:
    """Detached deduplicator: staged -> committed for the first ``count`` staged entries."""
    dedup.limit_next_commit(count)
    dedup.commit()

"""ResumablePipeline as a PyTorch ``IterableDataset``: rank x worker sharding, per-worker state,
StatefulDataLoader snapshots and elastic resume. docs/streaming.md ("PyTorch") is the contract.

``ResumablePipeline.as_torch_dataset()`` builds a :class:`StreamDataset`. It carries the recipe of
the stream (sources, pipeline config, options), never the pipeline object itself, so it pickles
into DataLoader workers. Each reader - a *slot*, ``rank * workers + worker`` of
``world_size * workers`` - builds its own ``ResumablePipeline`` over its share of the shard tails
(tail ``j`` of the list goes to slot ``j % slots``) and keeps its own state.

State and commit. A worker hands a batch to the loader and, at that moment, commits it inside its
own pipeline (in memory: the worker's pipeline has no checkpoint file). ``state_dict()`` in the
worker therefore describes the position just after the last batch it handed over - never the
batches its prefetch thread produced beyond it. The *committed* state of the training run is the
set of worker states that belong to the batches the training loop has finished: torchdata's
``StatefulDataLoader`` keeps exactly that (a worker's snapshot becomes visible in
``loader.state_dict()`` only when the batch it was taken with is yielded to the loop), and every
:class:`TorchStreamBatch` carries its worker's state as ``batch.state`` for a plain DataLoader.
``StreamDataset.commit(state)`` writes such a state atomically to the dataset's checkpoint file.

Elastic resume: a worker state lists its shard tails and the committed coordinate, so the
remaining tails of all workers can be merged (:func:`remaining_tails`) and dealt out to a new
number of workers or ranks; the resumed run reads exactly the documents no committed batch held.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch
import torch.utils.data

from ._ffi import impl
from .errors import ConfigError
from .streaming import ResumablePipeline

__all__ = [
    "StreamDataset",
    "TorchStreamBatch",
    "load_committed",
    "remaining_tails",
    "worker_states",
]

STATE_VERSION = 1
OUTPUTS = ("string_tensor", "dlpack")
MAX_SLOTS = 4096  # world_size * num_workers with worker_checkpoints=True
_ACK_BITS = 40  # an acknowledgement packs (slots << 40) | (batch_id + 1)


@dataclass
class TorchStreamBatch:
    """One batch as the DataLoader delivers it (``DataLoader(..., batch_size=None)``).

    ``texts`` is a StringTensor (``output="string_tensor"``) or None; with ``output="dlpack"``
    the texts are ``offsets`` (uint32, ``len + 1``) and ``payload`` (uint8) torch tensors instead,
    moved without a copy through DLPack. ``slot`` is the reader (``rank * workers + worker``) and
    ``batch_id`` its own batch counter; ``state`` is that reader's state just after this batch
    (what a plain DataLoader loop keeps per slot once the optimizer step is done).
    """

    slot: int
    batch_id: int
    texts: Any
    offsets: Any
    payload: Any
    fields: dict[str, list[object]]
    records: int
    state: dict[str, Any] = field(repr=False)

    def __len__(self) -> int:
        if self.texts is not None:
            return len(self.texts)
        return int(self.offsets.shape[0]) - 1

    @property
    def ids(self) -> list[object] | None:
        """``fields['id']`` when that field was asked for, else None."""
        return self.fields.get("id")

    def strings(self) -> list[str]:
        """The texts as Python strings, whatever the output format (decoded on the CPU)."""
        if self.texts is not None:
            return list(self.texts.to_pylist())
        return list(impl.StringTensor.from_torch(self.offsets, self.payload).to_pylist())

    def pin_memory(self, device: Any = None) -> TorchStreamBatch:
        """The batch with its tensors in page-locked memory (``DataLoader(pin_memory=True)``
        calls this in the main process), so that ``.to("cuda", non_blocking=True)`` overlaps."""
        if self.offsets is None:
            return self

        def pin(tensor: Any) -> Any:
            return tensor.pin_memory() if device is None else tensor.pin_memory(device)

        return replace(self, offsets=pin(self.offsets), payload=pin(self.payload))

    def is_pinned(self) -> bool:
        return self.offsets is not None and bool(
            self.offsets.is_pinned() and self.payload.is_pinned()
        )

    def to(self, device: Any, non_blocking: bool = False) -> TorchStreamBatch:
        """The (offsets, payload) tensors on ``device``. The uint32 offsets travel as int32 bits
        (PyTorch copies few unsigned types to a GPU) and are viewed back as uint32 there."""
        if self.offsets is None:
            raise ConfigError(
                "TorchStreamBatch.to: only output='dlpack' batches hold tensors; a StringTensor "
                "moves with texts.to_torch(device)"
            )
        bits = torch.int32 if self.offsets.element_size() == 4 else torch.int64
        offsets = self.offsets.view(bits).to(device, non_blocking=non_blocking)
        return replace(
            self,
            offsets=offsets.view(self.offsets.dtype),
            payload=self.payload.to(device, non_blocking=non_blocking),
        )


# =============================================================================================
# Worker states: what each slot reports, and how the remaining tails are merged
# =============================================================================================


def _coordinate(data: bytes) -> Any:
    return impl.StreamCoordinate.from_bytes(bytes(data))


def _tails_of_state(state: Mapping[str, Any], shard_count: int) -> list[tuple[int, bytes]]:
    """The shard tails a worker state has not committed yet, in its reading order."""
    inner = state.get("pipeline")
    if inner is None:  # the worker never started: all its tails are left
        return [(int(i), bytes(c)) for i, c in state["tails"]]
    if inner.get("shuffle") is not None:
        raise ConfigError(
            "elastic resume: a shuffled stream commits the start of the shuffle block in "
            "progress, not a per-document position, so its tails cannot be dealt out to other "
            "workers exactly; resume with the same world size and num_workers, or without shuffle"
        )
    committed = _coordinate(inner["coordinate"])
    assignment = [(int(i), bytes(c)) for i, c in inner["assignment"]]
    if committed.shard_id >= shard_count:
        return []
    position = next(
        (p for p, (index, _) in enumerate(assignment) if index == committed.shard_id), None
    )
    if position is None:
        raise ConfigError(
            f"elastic resume: slot {state.get('slot')} committed a position in shard "
            f"{committed.shard_id}, which it was not assigned"
        )
    here = impl.StreamCoordinate(
        shard_id=committed.shard_id,
        byte_offset=committed.byte_offset,
        row_group_idx=committed.row_group_idx,
        page_idx=committed.page_idx,
        row_offset_in_page=committed.row_offset_in_page,
        global_row_idx=0,
    )
    return [(committed.shard_id, here.to_bytes()), *assignment[position + 1 :]]


def worker_states(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The worker states inside ``state``: a ``StreamDataset.commit`` state, a
    ``StatefulDataLoader.state_dict()``, a ``{slot: batch.state}`` mapping or a list of states."""
    found: list[dict[str, Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            if value.get("luminamoon_stream") == STATE_VERSION:
                found.append(dict(value))
                return
            for item in value.values():
                walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)

    walk(state)
    by_slot: dict[tuple[int, int], dict[str, Any]] = {}
    for item in found:
        by_slot[(int(item["slots"]), int(item["slot"]))] = item
    return [by_slot[k] for k in sorted(by_slot)]


def _check_no_replay(state: Any) -> None:
    """A StatefulDataLoader state taken between two snapshots holds worker states from before
    the last steps (torchdata replays them on a same-layout resume); they cannot be dealt out."""
    if isinstance(state, Mapping):
        steps = state.get("_steps_since_snapshot")
        if steps:
            raise ConfigError(
                f"resume from worker states: this loader state was taken {steps} steps since its "
                "last snapshot, so its worker states are older than the committed steps. For the "
                "same layout pass it to StatefulDataLoader.load_state_dict (which replays those "
                "steps); for a changed one commit at snapshot steps (a commit interval that is a "
                "multiple of snapshot_every_n_steps)"
            )
        for value in state.values():
            _check_no_replay(value)
    elif isinstance(state, (list, tuple)):
        for value in state:
            _check_no_replay(value)


def remaining_tails(states: Any, shard_count: int | None = None) -> list[tuple[int, bytes]]:
    """Every shard tail no committed batch has read, merged from the worker states of a run
    (all of its slots), sorted by shard index: what an elastic resume deals out again."""
    _check_no_replay(states)
    found = worker_states(states)
    if not found:
        raise ConfigError("elastic resume: no luminamoon worker state found in the given state")
    slots = {int(s["slots"]) for s in found}
    if len(slots) != 1:
        raise ConfigError(f"elastic resume: worker states of different layouts ({sorted(slots)})")
    expected = slots.pop()
    present = sorted(int(s["slot"]) for s in found)
    if present != list(range(expected)):
        missing = sorted(set(range(expected)) - set(present))
        raise ConfigError(
            f"elastic resume: the states of slots {missing} of {expected} are missing; pass the "
            "states of every rank and worker of the run (each rank's loader state, gathered)"
        )
    count = int(found[0]["shard_count"]) if shard_count is None else shard_count
    tails: list[tuple[int, bytes]] = []
    for state in found:
        tails.extend(_tails_of_state(state, count))
    tails.sort(key=lambda t: t[0])
    seen = [i for i, _ in tails]
    if len(seen) != len(set(seen)):
        raise ConfigError("elastic resume: two worker states hold the same shard")
    return tails


# =============================================================================================
# The committed-state file (one atomic file per run; every worker's state inside)
# =============================================================================================


def _encode(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"__bytes__": value.hex()}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v) for v in value]}
    if isinstance(value, Mapping):
        keys = list(value)
        if all(isinstance(k, str) for k in keys):
            return {k: _encode(v) for k, v in value.items()}
        return {"__items__": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return {"__tensor__": value.item(), "dtype": str(value.dtype).removeprefix("torch.")}
    raise TypeError(f"StreamDataset.commit: cannot store a {type(value).__name__} in the state")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if "__bytes__" in value:
            return bytes.fromhex(value["__bytes__"])
        if "__tuple__" in value:
            return tuple(_decode(v) for v in value["__tuple__"])
        if "__items__" in value:
            return {_decode(k): _decode(v) for k, v in value["__items__"]}
        if "__tensor__" in value:
            return torch.tensor(value["__tensor__"], dtype=getattr(torch, value["dtype"]))
        return {k: _decode(v) for k, v in value.items()}
    return value


def _write_atomic(path: str, data: bytes, durable: bool) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            if durable:
                os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    if durable:
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def load_committed(path: str | os.PathLike[str]) -> Any:
    """The state last written by ``StreamDataset.commit`` to ``path``; None when there is none."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    try:
        document = json.loads(data)
    except ValueError as exc:
        raise ConfigError(f"{os.fspath(path)}: not a committed stream state ({exc})") from exc
    if not isinstance(document, dict) or document.get("format") != "luminamoon-torch-stream":
        raise ConfigError(f"{os.fspath(path)}: not a committed stream state (format field)")
    return _decode(document["state"])


# =============================================================================================
# The dataset
# =============================================================================================


@dataclass(frozen=True)
class _Recipe:
    """How to rebuild the stream in a worker: plain, picklable values."""

    sources: list[object]
    pipeline: dict[str, Any] | None
    options: dict[str, Any]
    order: list[tuple[int, bytes]]  # the parent's shard assignment, in reading order
    shard_count: int
    shards_digest: str  # of the shard names: a state resumes only over the same shard list


class StreamDataset(torch.utils.data.IterableDataset[Any]):
    """An ``IterableDataset`` of curated batches; use it with ``batch_size=None`` (the dataset
    batches). Built by ``ResumablePipeline.as_torch_dataset()``; docs/streaming.md, "PyTorch"."""

    def __init__(
        self,
        recipe: _Recipe,
        *,
        rank: int | None = None,
        world_size: int | None = None,
        output: str | Callable[[TorchStreamBatch], Any] = "string_tensor",
        pin_memory: bool = False,
        checkpoint: str | os.PathLike[str] | None = None,
        resume: Any = None,
        durable: bool = True,
        worker_checkpoints: bool = False,
    ) -> None:
        super().__init__()
        if not callable(output) and output not in OUTPUTS:
            raise ConfigError(
                f"as_torch_dataset: output must be one of {OUTPUTS} or a callable taking a "
                f"TorchStreamBatch, got {output!r}"
            )
        self._recipe = recipe
        self._rank_arg = rank
        self._world_arg = world_size
        self._output = output
        self._pin = pin_memory
        self._checkpoint = None if checkpoint is None else os.fspath(checkpoint)
        self._durable = durable
        # worker_checkpoints: each slot's pipeline keeps its dedup state in its own checkpoint
        # file, committed up to what the training loop committed (acknowledged through shared
        # memory by commit()), and a resume replays the few batches between the two.
        self._acks: Any = None
        if worker_checkpoints:
            if self._checkpoint is None:
                raise ConfigError(
                    "as_torch_dataset: worker_checkpoints=True needs a checkpoint path (the "
                    "per-worker files are named after it)"
                )
            self._acks = multiprocessing.RawArray("q", MAX_SLOTS)
        # What this copy resumes from: the merged tails of an elastic resume (pool), or the
        # exact per-slot states of an unchanged layout (by slot), decided when the slot is known.
        self._resume_states: list[dict[str, Any]] = []
        if resume is not None:
            _check_no_replay(resume)
            self._resume_states = worker_states(resume)
            if not self._resume_states:
                raise ConfigError("as_torch_dataset: resume holds no luminamoon worker state")
            for state in self._resume_states:
                if state.get("shards_digest") != recipe.shards_digest:
                    raise ConfigError(
                        f"as_torch_dataset: the resume state of slot {state.get('slot')} was "
                        "saved for another shard list; resume with the sources it was saved with"
                    )
        self._loaded: dict[str, Any] | None = None  # set by load_state_dict (torchdata)
        self._pipe: Any = None
        self._handed: dict[str, Any] | None = None  # the state after the last batch handed over

    # -- layout ------------------------------------------------------------------------------

    def _layout(self) -> tuple[int, int]:
        """(slot, slots) of this process and worker."""
        rank, world = self._rank_world()
        info = torch.utils.data.get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        return rank * workers + worker, world * workers

    def _rank_world(self) -> tuple[int, int]:
        rank, world = self._rank_arg, self._world_arg
        dist = torch.distributed
        if (rank is None or world is None) and dist.is_available() and dist.is_initialized():
            rank = dist.get_rank() if rank is None else rank
            world = dist.get_world_size() if world is None else world
        rank = 0 if rank is None else rank
        world = 1 if world is None else world
        if not 0 <= rank < world:
            raise ConfigError(f"as_torch_dataset: rank {rank} is not in 0..{world - 1}")
        return rank, world

    @property
    def slot(self) -> tuple[int, int]:
        """(slot, slots) of the calling process/worker: ``rank * workers + worker``."""
        return self._layout()

    def _start_state(self, slot: int, slots: int) -> dict[str, Any]:
        """The state this slot starts from: loaded, resumed or fresh."""
        if self._loaded is not None:
            return self._loaded
        states = self._resume_states
        if states and {int(s["slots"]) for s in states} == {slots} and len(states) == slots:
            for state in states:
                if int(state["slot"]) == slot:
                    return state
        if states:  # elastic: deal out the remaining tails of the old layout
            tails = remaining_tails(states, self._recipe.shard_count)
        else:
            tails = list(self._recipe.order)
        return self._fresh_state(slot, slots, tails[slot::slots])

    def _fresh_state(self, slot: int, slots: int, tails: list[tuple[int, bytes]]) -> dict[str, Any]:
        return {
            "luminamoon_stream": STATE_VERSION,
            "slot": slot,
            "slots": slots,
            "shard_count": self._recipe.shard_count,
            "shards_digest": self._recipe.shards_digest,
            "tails": [(int(i), bytes(c)) for i, c in tails],
            "pipeline": None,
        }

    def start_states(self, num_workers: int) -> dict[int, dict[str, Any]]:
        """The state every slot of this rank starts from with ``num_workers`` DataLoader workers
        (0: the main process): the initial committed state of a plain DataLoader loop, which then
        keeps ``states[batch.slot] = batch.state`` after each optimizer step."""
        rank, world = self._rank_world()
        workers = max(1, num_workers)
        slots = world * workers
        return {
            rank * workers + w: dict(self._start_state(rank * workers + w, slots))
            for w in range(workers)
        }

    # -- torchdata Stateful protocol (called in the worker that owns the state) ---------------

    def state_dict(self) -> dict[str, Any]:
        """This worker's state just after the last batch it handed to the loader (never a
        prefetched one). Before any batch: the state it would start from."""
        if self._handed is not None:
            return dict(self._handed)
        slot, slots = self._layout()
        return dict(self._start_state(slot, slots))

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue from a worker state of the same layout (``StatefulDataLoader`` hands each
        worker its own). A different layout is an elastic resume: pass the old states to
        ``as_torch_dataset(resume=...)`` instead."""
        if state.get("luminamoon_stream") != STATE_VERSION:
            raise ConfigError(
                f"StreamDataset.load_state_dict: not a luminamoon worker state (version "
                f"{state.get('luminamoon_stream')!r})"
            )
        slot, slots = self._layout()
        if (int(state["slot"]), int(state["slots"])) != (slot, slots):
            raise ConfigError(
                f"StreamDataset.load_state_dict: the state is of slot {state['slot']} of "
                f"{state['slots']}, this worker is slot {slot} of {slots}; for a changed "
                "num_workers or world size, pass the old states to as_torch_dataset(resume=...)"
            )
        self._close_pipe()
        self._loaded = dict(state)
        self._handed = None

    # -- iteration -----------------------------------------------------------------------------

    def _close_pipe(self) -> None:
        pipe, self._pipe = self._pipe, None
        if pipe is not None:
            pipe.close()

    def worker_checkpoint(self, state: Mapping[str, Any]) -> str:
        """The checkpoint file of the slot whose state is ``state`` (``worker_checkpoints=True``):
        ``<checkpoint>.slot<S>-of-<N>.<tails digest>.meta``; the digest of the slot's starting
        tails gives every layout (and every elastic redistribution) its own files."""
        tails = "".join(f"{int(i)}:{bytes(c).hex()};" for i, c in state["tails"])
        digest = hashlib.sha256(tails.encode()).hexdigest()[:12]
        return f"{self._checkpoint}.slot{state['slot']}-of-{state['slots']}.{digest}.meta"

    def _open(self, start: dict[str, Any]) -> Any:
        recipe = self._recipe
        backend = impl
        tails = [(i, backend.StreamCoordinate.from_bytes(c)) for i, c in start["tails"]]
        own = None
        if self._acks is not None:
            own = self.worker_checkpoint(start)
        pipe = ResumablePipeline(
            recipe.sources,
            recipe.pipeline,
            checkpoint=own,
            shards=tails,
            durable=self._durable,
            **recipe.options,
        )
        try:
            if own is None:
                if start["pipeline"] is not None:
                    pipe.load_state_dict(start["pipeline"])
            else:
                self._catch_up(pipe, start, own)
        except BaseException:
            pipe.close()
            raise
        return pipe

    @staticmethod
    def _catch_up(pipe: Any, start: dict[str, Any], own: str) -> None:
        """The slot's file holds a commit at or before the state's batch: replay the batches in
        between (deterministic from that commit, dedup state included) and commit them."""
        target = -1 if start["pipeline"] is None else int(start["pipeline"]["batch_id"])
        if pipe.committed_batch_id > target:
            raise ConfigError(
                f"{own}: this worker checkpoint is at batch {pipe.committed_batch_id}, after the "
                f"state being resumed (batch {target}); resume from the last state commit() "
                "wrote, or start with a new checkpoint path"
            )
        if pipe.committed_batch_id < target:
            for batch in pipe:
                if batch.batch_id == target:
                    pipe.commit(target)
                    break
        if start["pipeline"] is not None and (
            pipe.committed_batch_id != target
            or pipe.committed_coordinate.to_bytes() != bytes(start["pipeline"]["coordinate"])
        ):
            raise ConfigError(
                f"{own}: replaying to batch {target} did not reach the state's position; the "
                "sources changed since the state was saved"
            )

    def _acknowledged(self, pipe: Any, slot: int, slots: int, handed: int) -> None:
        """Commits the slot's own checkpoint up to the batch the training loop committed."""
        value = int(self._acks[slot]) if slot < MAX_SLOTS else 0
        if value >> _ACK_BITS != slots:
            return
        target = (value & ((1 << _ACK_BITS) - 1)) - 1
        if pipe.committed_batch_id < target <= handed:
            pipe.commit(target)

    def __iter__(self) -> Iterator[Any]:
        slot, slots = self._layout()
        start = self._start_state(slot, slots)
        self._close_pipe()
        self._loaded = None
        self._handed = dict(start)
        if not start["tails"]:
            return
        if self._acks is not None and slot >= MAX_SLOTS:
            raise ConfigError(f"worker_checkpoints=True supports {MAX_SLOTS} slots, not {slots}")
        pipe = self._pipe = self._open(start)
        in_main = torch.utils.data.get_worker_info() is None
        try:
            for batch in pipe:
                if self._acks is None:
                    # Handed over: the worker's position moves past it (in memory); whether the
                    # training loop finished it is what the loader's / the loop's state records.
                    pipe.commit(batch.batch_id)
                    inner = pipe.state_dict()
                else:
                    # The slot's file commits only what the loop acknowledged (commit()).
                    self._acknowledged(pipe, slot, slots, batch.batch_id)
                    inner = {
                        **pipe.state_dict(),
                        "batch_id": batch.batch_id,
                        "coordinate": batch.end.to_bytes(),
                    }
                state = {**start, "pipeline": inner}
                self._handed = state
                yield self._deliver(slot, batch, state, in_main)
        finally:
            if self._pipe is pipe:
                self._close_pipe()

    def _deliver(self, slot: int, batch: Any, state: dict[str, Any], in_main: bool) -> Any:
        out = TorchStreamBatch(
            slot=slot,
            batch_id=batch.batch_id,
            texts=batch.texts,
            offsets=None,
            payload=None,
            fields=batch.fields,
            records=batch.records,
            state=state,
        )
        if self._output != "string_tensor":
            # DLPack views of the StringTensor's buffers: no copy. A callable gets both forms.
            offsets, payload = batch.texts.to_torch("cpu")
            texts = batch.texts if callable(self._output) else None
            out = replace(out, texts=texts, offsets=offsets, payload=payload)
            if self._pin and in_main:
                out = out.pin_memory()
        if callable(self._output):
            return self._output(out)
        return out

    # -- the committed state file --------------------------------------------------------------

    @property
    def checkpoint(self) -> str | None:
        """The file ``commit`` writes (``<pipeline checkpoint>.torch`` by default)."""
        return self._checkpoint

    def commit(self, state: Any) -> None:
        """Writes ``state`` - ``loader.state_dict()`` of a ``StatefulDataLoader`` after the
        optimizer step, or ``{slot: batch.state}`` of a plain loop - atomically to
        ``checkpoint``: after a crash, ``load_committed(checkpoint)`` returns it."""
        if self._checkpoint is None:
            raise ConfigError(
                "StreamDataset.commit: no checkpoint file; pass as_torch_dataset(checkpoint=...)"
            )
        if isinstance(state, Mapping) and not worker_states(state) and state:
            raise ConfigError("StreamDataset.commit: the state holds no luminamoon worker state")
        document = {"format": "luminamoon-torch-stream", "state": _encode(state)}
        _write_atomic(self._checkpoint, json.dumps(document).encode(), self._durable)
        if self._acks is not None:  # after the write: a worker file never runs ahead of it
            for worker in worker_states(state):
                inner = worker.get("pipeline")
                slot = int(worker["slot"])
                if inner is not None and slot < MAX_SLOTS:
                    value = (int(worker["slots"]) << _ACK_BITS) | (int(inner["batch_id"]) + 1)
                    self._acks[slot] = max(int(self._acks[slot]), value)

    def committed(self) -> Any:
        """The last committed state in ``checkpoint`` (None when nothing was committed)."""
        return None if self._checkpoint is None else load_committed(self._checkpoint)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_pipe"] = None  # a running pipeline stays in the process that opened it
        return state

    def __del__(self) -> None:
        pipe = getattr(self, "_pipe", None)
        if pipe is not None:
            pipe.close()


def make_dataset(
    pipeline: Any,
    sources: Sequence[object],
    options: dict[str, Any],
    base_checkpoint: str | None,
    **kwargs: Any,
) -> StreamDataset:
    """``ResumablePipeline.as_torch_dataset``'s body (kept here so streaming.py never imports
    torch)."""
    config = None if pipeline.pipeline is None else pipeline.pipeline.to_config()
    recipe = _Recipe(
        sources=list(sources),
        pipeline=config,
        options=options,
        order=[(int(i), c.to_bytes()) for i, c in pipeline.assignment],
        shard_count=len(pipeline.shards),
        shards_digest=hashlib.sha256("\n".join(pipeline.shards).encode()).hexdigest()[:16],
    )
    if kwargs.get("checkpoint") is None and base_checkpoint is not None:
        kwargs["checkpoint"] = base_checkpoint + ".torch"

    return StreamDataset(recipe, **kwargs)

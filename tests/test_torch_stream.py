"""ResumablePipeline.as_torch_dataset(): rank x worker sharding, the three batch outputs, pinned
memory, torchdata's StatefulDataLoader (num_workers 0 and 2, snapshot_every_n_steps 1 and 5,
through a first, second and third resume) and elastic resume to a different num_workers / world
size (none lost, none repeated). docs/streaming.md, section "PyTorch"."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
stateful = pytest.importorskip("torchdata.stateful_dataloader")

from torch.utils.data import DataLoader  # noqa: E402

import luminamoon.data as lmd  # noqa: E402
import stream_corpus as sc  # noqa: E402
from luminamoon.data import torch_stream as ts  # noqa: E402

StatefulDataLoader = stateful.StatefulDataLoader
DOCS = 150
SHARDS = 6
BATCH = 4
# No dedup stage: a DataLoader worker's dedup state lives in its memory (docs/streaming.md), and
# these tests follow documents across changed layouts. The cleaner and PII stages still run.
PIPE = {"quality": False, "exact_dedup": None, "near_dedup": None, "pii": True}


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return sc.write_corpus(tmp_path_factory.mktemp("corpus"), "jsonl", DOCS, shards=SHARDS)


def stream(paths: list[str], **kw: Any) -> Any:
    options: dict[str, Any] = {"checkpoint": None, "batch_size": BATCH, "fields": ["id"]}
    options.update(kw)
    pipeline = options.pop("pipeline", lmd.FusedPipeline(**PIPE))
    return lmd.ResumablePipeline(paths, pipeline, **options)


def key(batch: Any) -> tuple[int, int, tuple[object, ...]]:
    return (batch.slot, batch.batch_id, tuple(batch.ids))


def shard_of(doc_id: int) -> int:
    return doc_id // -(-DOCS // SHARDS)


@pytest.mark.parametrize("workers", [0, 2])
def test_rank_x_worker_sharding_covers_every_document_once(paths: list[str], workers: int) -> None:
    seen: dict[int, list[int]] = {}
    for rank in range(2):
        with stream(paths) as pipe:
            ds = pipe.as_torch_dataset(rank=rank, world_size=2)
            assert isinstance(ds, torch.utils.data.IterableDataset)
            for batch in DataLoader(ds, batch_size=None, num_workers=workers):
                assert isinstance(batch.texts, lmd.StringTensor)
                assert len(batch) == len(batch.ids)
                seen.setdefault(batch.slot, []).extend(batch.ids)
    slots = 2 * max(1, workers)
    assert sorted(seen) == list(range(slots))
    every = sorted(i for ids in seen.values() for i in ids)
    assert every == list(range(DOCS))
    for slot, ids in seen.items():  # shard j is read by slot j % slots
        assert {shard_of(i) % slots for i in ids} == {slot}
    with stream(paths) as pipe:
        ds = pipe.as_torch_dataset(rank=2, world_size=2)
        with pytest.raises(lmd.ConfigError, match="rank 2"):
            next(iter(ds))


def test_rank_and_world_size_come_from_torch_distributed(
    paths: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = torch.distributed
    monkeypatch.setattr(dist, "is_available", lambda: True)
    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_rank", lambda: 2)
    monkeypatch.setattr(dist, "get_world_size", lambda: 3)
    with stream(paths) as pipe:
        ds = pipe.as_torch_dataset()
        assert ds.slot == (2, 3)
        ids = [i for b in DataLoader(ds, batch_size=None) for i in b.ids]
        assert {shard_of(i) for i in ids} == {2, 5}
        assert pipe.as_torch_dataset(rank=0, world_size=1).slot == (0, 1)  # explicit wins
        assert set(pipe.as_torch_dataset().start_states(2)) == {4, 5}  # 3 ranks x 2 workers


def test_outputs_string_tensor_dlpack_and_collate(paths: list[str]) -> None:
    with stream(paths) as pipe:
        plain = list(DataLoader(pipe.as_torch_dataset(), batch_size=None))
        packed = list(DataLoader(pipe.as_torch_dataset(output="dlpack"), batch_size=None))
        lengths = list(
            DataLoader(
                pipe.as_torch_dataset(
                    output=lambda b: {
                        "ids": torch.tensor(b.ids),
                        "chars": b.offsets.to(torch.int64).diff(),
                    },
                    pin_memory=False,
                ),
                batch_size=None,
            )
        )
        with pytest.raises(lmd.ConfigError, match="output must be one of"):
            pipe.as_torch_dataset(output="arrow")
    assert len(plain) == len(packed) == len(lengths)
    for a, b, c in zip(plain, packed, lengths, strict=True):
        assert b.texts is None
        assert b.offsets.dtype == torch.uint32
        assert b.payload.dtype == torch.uint8
        assert b.strings() == a.strings() == list(a.texts)
        assert b.ids == a.ids
        assert c["ids"].tolist() == a.ids
        assert c["chars"].tolist() == [len(s.encode()) for s in a.strings()]
    with pytest.raises(lmd.ConfigError, match="dlpack"):
        plain[0].to("cpu")
    moved = packed[0].to("cpu", non_blocking=True)
    assert moved.strings() == plain[0].strings()


def _pinning_works() -> bool:
    try:
        return bool(torch.zeros(1).pin_memory().is_pinned())
    except RuntimeError:
        return False


@pytest.mark.skipif(not _pinning_works(), reason="this torch build cannot pin memory here")
def test_pinned_batches(paths: list[str]) -> None:
    with stream(paths) as pipe:
        ds = pipe.as_torch_dataset(output="dlpack", pin_memory=True)
        batch = next(iter(DataLoader(ds, batch_size=None)))  # num_workers=0: pinned in place
        assert batch.is_pinned()
        worker = pipe.as_torch_dataset(output="dlpack")
        loader = DataLoader(worker, batch_size=None, num_workers=1, pin_memory=True)
        assert next(iter(loader)).is_pinned()  # pinned by the loader through batch.pin_memory()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_cuda_round_trip_of_a_pinned_batch(paths: list[str]) -> None:
    with stream(paths) as pipe:
        ds = pipe.as_torch_dataset(output="dlpack", pin_memory=True)
        batch = next(iter(DataLoader(ds, batch_size=None)))
    assert batch.is_pinned()
    on_gpu = batch.to("cuda", non_blocking=True)
    torch.cuda.synchronize()
    assert on_gpu.offsets.device.type == "cuda"
    assert on_gpu.strings() == batch.strings()


# -- StatefulDataLoader --------------------------------------------------------------------------


def _loader(ds: Any, workers: int, every: int) -> Any:
    return StatefulDataLoader(
        ds, batch_size=None, num_workers=workers, snapshot_every_n_steps=every
    )


@pytest.mark.parametrize(("workers", "every"), [(0, 1), (0, 5), (2, 1), (2, 5)])
def test_stateful_dataloader_through_three_resumes(
    paths: list[str], tmp_path: Path, workers: int, every: int
) -> None:
    three_resumes(paths, tmp_path, workers, every, key)


def text_key(batch: Any) -> tuple[int, int, tuple[object, ...]]:
    return (batch.slot, batch.batch_id, tuple(batch.strings()))


@pytest.mark.parametrize("workers", [0, 2])
def test_stateful_dataloader_resumes_every_source_format(tmp_path: Path, workers: int) -> None:
    """The same three resumes over shards of every kind at once: .txt, .parquet, .jsonl.gz,
    .jsonl.zst (each resumes by its own coordinate fields) and a Python iterable; text shards
    carry no id, so batches are compared by their texts."""
    sources: list[Any] = []
    for fmt in ("txt", "parquet", "gz", "zst"):
        sources += sc.write_corpus(tmp_path / fmt, fmt, 36, shards=2)
    sources.append(sc.documents(30))
    three_resumes(sources, tmp_path, workers, 5, text_key, fields=[])


def three_resumes(
    paths: list[Any],
    tmp_path: Path,
    workers: int,
    every: int,
    key_of: Callable[[Any], tuple[int, int, tuple[object, ...]]],
    **options: Any,
) -> None:
    """Commits after steps 7, 16 and 23, a "crash" 3 steps after each, a resume from the
    committed loader state: the committed steps equal the uninterrupted run's."""

    def make(**more: Any) -> Any:
        return stream(paths, **options, **more)

    with make() as pipe:
        reference = [key_of(b) for b in _loader(pipe.as_torch_dataset(), workers, every)]
    assert len(reference) > 30
    committed: list[Any] = []
    saved = None
    states = []
    # Commit after steps 7, 16 and 23 (not multiples of 5: torchdata replays the steps since its
    # last snapshot), train 3 steps past each commit without committing, then "crash".
    for cut in (7, 16, 23, None):
        with make(prefetch=3) as pipe:
            ds = pipe.as_torch_dataset(checkpoint=tmp_path / "run.torch", durable=False)
            loader = _loader(ds, workers, every)
            if saved is not None:
                loader.load_state_dict(ds.committed()["loader"])
            step = len(committed)
            batches = iter(loader)
            for batch in batches:
                committed.append(key_of(batch))
                step += 1
                if step == cut:
                    ds.commit({"loader": loader.state_dict(), "step": step})
                    states.append(ds.committed())
                    for _ in range(3):  # consumed after the commit: must come again
                        committed.append(key_of(next(batches)))
                    break
            del batches, loader  # the "crash": workers and prefetched batches are gone
            saved = ds.committed()
            if cut is not None:
                assert saved["step"] == cut
                committed = committed[:cut]
    assert committed == reference
    # Every resume moved on: the states of the three commits differ (no state frozen at the
    # first resume), and each names the step it was taken at.
    assert [s["step"] for s in states] == [7, 16, 23]
    assert len({repr(s["loader"]) for s in states}) == 3


def test_state_is_the_batch_handed_over_not_the_prefetched_ones(paths: list[str]) -> None:
    with stream(paths, prefetch=4) as pipe:
        ds = pipe.as_torch_dataset()
        batches = iter(DataLoader(ds, batch_size=None))
        for _ in range(3):
            batch = next(batches)
        inner = ds._pipe
        for _ in range(50):  # let the stream's prefetch thread run ahead
            queue = getattr(inner._producer, "_queue", None)
            if queue is not None and queue.full():
                break
            threading.Event().wait(0.01)
        state = ds.state_dict()
        assert state["pipeline"]["batch_id"] == batch.batch_id == 2
        assert state == batch.state
        assert inner.state_dict()["batch_id"] == 2


DEDUP = {"quality": False, "near_dedup": {"threshold": 0.7}, "pii": True}  # exact + near dedup


@pytest.mark.parametrize(("workers", "every"), [(0, 5), (2, 1), (2, 5)])
def test_worker_checkpoints_restore_the_dedup_state(
    paths: list[str], tmp_path: Path, workers: int, every: int
) -> None:
    """With worker_checkpoints=True each slot's dedup state survives the resume: the stream of
    a deduplicating pipeline equals the uninterrupted one through three resumes (without the
    files, documents that repeat ones consumed before a resume would pass again)."""
    with stream(paths, pipeline=lmd.FusedPipeline(**DEDUP)) as pipe:
        reference = [key(b) for b in _loader(pipe.as_torch_dataset(), workers, every)]
    assert sum(len(k[2]) for k in reference) < DOCS  # duplicates were dropped
    committed: list[Any] = []
    base = tmp_path / "run.torch"
    for cut in (5, 11, 20, None):
        with stream(paths, pipeline=lmd.FusedPipeline(**DEDUP), prefetch=3) as pipe:
            ds = pipe.as_torch_dataset(checkpoint=base, durable=False, worker_checkpoints=True)
            loader = _loader(ds, workers, every)
            saved = ds.committed()
            if saved is not None:
                loader.load_state_dict(saved["loader"])
            batches = iter(loader)
            for batch in batches:
                committed.append(key(batch))
                if len(committed) == cut:
                    ds.commit({"loader": loader.state_dict(), "step": cut})
                    for _ in range(3):  # consumed after the commit, then the "crash"
                        committed.append(key(next(batches)))
                    break
            del batches, loader
            if cut is not None:
                committed = committed[:cut]
    assert committed == reference
    slot_files = sorted(p.name for p in tmp_path.glob("run.torch.slot*.meta"))
    assert len(slot_files) == max(1, workers)


def test_worker_checkpoints_refuse_a_state_older_than_the_files(
    paths: list[str], tmp_path: Path
) -> None:
    base = tmp_path / "run.torch"
    with stream(paths, pipeline=lmd.FusedPipeline(**DEDUP)) as pipe:
        ds = pipe.as_torch_dataset(checkpoint=base, durable=False, worker_checkpoints=True)
        batches = iter(DataLoader(ds, batch_size=None))
        first = next(batches)
        for _ in range(3):
            batch = next(batches)
        ds.commit({0: batch.state})
        next(batches)  # the slot's own file is committed up to the acknowledged batch 3
        del batches
        old = pipe.as_torch_dataset(
            checkpoint=base, durable=False, worker_checkpoints=True, resume={0: first.state}
        )
        with pytest.raises(lmd.ConfigError, match="after the state being resumed"):
            next(iter(DataLoader(old, batch_size=None)))
        with pytest.raises(lmd.ConfigError, match="needs a checkpoint path"):
            pipe.as_torch_dataset(worker_checkpoints=True)


def test_load_state_dict_refuses_another_layout(paths: list[str]) -> None:
    with stream(paths) as pipe:
        ds = pipe.as_torch_dataset(rank=0, world_size=2)
        state = ds.state_dict()
        assert state["slots"] == 2
        other = pipe.as_torch_dataset()
        with pytest.raises(lmd.ConfigError, match=r"as_torch_dataset\(resume=\.\.\.\)"):
            other.load_state_dict(state)
        with pytest.raises(lmd.ConfigError, match="not a luminamoon worker state"):
            other.load_state_dict({"x": 1})


# -- elastic resume ------------------------------------------------------------------------------


def _run_plain(ds: Any, workers: int, world: int, stop: int | None) -> tuple[list[Any], Any]:
    """A plain DataLoader loop over every rank of ``world`` (ranks one after the other): the
    consumed (slot, ids) and the {slot: state} committed after ``stop`` steps per rank."""
    consumed: list[Any] = []
    states: dict[int, Any] = {}
    for rank in range(world):
        rank_ds = ds(rank)
        states.update(rank_ds.start_states(workers))
        for step, batch in enumerate(DataLoader(rank_ds, batch_size=None, num_workers=workers)):
            if stop is not None and step == stop:
                break
            consumed.append((batch.slot, batch.ids))
            states[batch.slot] = batch.state  # committed after the optimizer step
    return consumed, states


@pytest.mark.parametrize("every", [1, 5])
def test_elastic_resume_changed_workers_and_world_size(paths: list[str], every: int) -> None:
    ids: list[int] = []
    with stream(paths) as pipe:
        # Run 1: StatefulDataLoader, 1 rank x 2 workers, committed after 10 steps (a snapshot
        # step for both snapshot intervals).
        loader = _loader(pipe.as_torch_dataset(), 2, every)
        for step, batch in enumerate(loader):
            ids += batch.ids
            if step == 9:
                state = loader.state_dict()
                assert state["_steps_since_snapshot"] == 0
                break
        del loader
        tails = ts.remaining_tails(state)
        assert [i for i, _ in tails] == sorted({i for i, _ in tails})
        # Run 2: 2 ranks x 3 workers (6 slots) from the loader state; stop after 2 steps per rank.
        consumed, states = _run_plain(
            lambda r: pipe.as_torch_dataset(rank=r, world_size=2, resume=state), 3, 2, stop=2
        )
        assert {slot for slot, _ in consumed} <= set(range(6))
        ids += [i for _, batch_ids in consumed for i in batch_ids]
        # Run 3: 1 rank, no worker process (1 slot), from the plain loop's states, to the end.
        rest, _ = _run_plain(lambda r: pipe.as_torch_dataset(resume=states), 0, 1, stop=None)
        ids += [i for _, batch_ids in rest for i in batch_ids]
    assert sorted(ids) == list(range(DOCS))  # none lost, none repeated


def test_elastic_resume_refuses_incomplete_or_shuffled_states(paths: list[str]) -> None:
    with stream(paths) as pipe:
        ds = pipe.as_torch_dataset(rank=0, world_size=2)
        one = ds.start_states(1)
        with pytest.raises(lmd.ConfigError, match=r"slots \[1\] of 2 are missing"):
            ts.remaining_tails(one)
    with stream(paths, shuffle=3, shuffle_buffer=10) as pipe:
        ds = pipe.as_torch_dataset()
        batch = next(iter(DataLoader(ds, batch_size=None)))
        with pytest.raises(lmd.ConfigError, match="shuffle"):
            ts.remaining_tails({0: batch.state})
    state = {"_snapshot": {"_worker_snapshots": {"worker_0": {"dataset_state": batch.state}}}}
    state["_steps_since_snapshot"] = 2
    with pytest.raises(lmd.ConfigError, match="steps since"):
        ts.remaining_tails(state)
    with stream(paths[:-1]) as pipe, pytest.raises(lmd.ConfigError, match="another shard list"):
        pipe.as_torch_dataset(resume=one)


def test_commit_file_round_trip_and_errors(paths: list[str], tmp_path: Path) -> None:
    with stream(paths, checkpoint=tmp_path / "run" / "train.meta") as pipe:
        assert pipe.as_torch_dataset().checkpoint == str(tmp_path / "run" / "train.meta.torch")
    with stream(paths) as pipe:
        ds = pipe.as_torch_dataset()
        assert ds.checkpoint is None
        with pytest.raises(lmd.ConfigError, match="no checkpoint file"):
            ds.commit({})
        ds = pipe.as_torch_dataset(checkpoint=tmp_path / "c.json", durable=False)
        assert ds.committed() is None
        batch = next(iter(DataLoader(ds, batch_size=None)))
        ds.commit({"step": 1, "states": {batch.slot: batch.state}, "t": (1, b"\x00")})
        back = ds.committed()
        assert back == {"step": 1, "states": {batch.slot: batch.state}, "t": (1, b"\x00")}
        with pytest.raises(lmd.ConfigError, match="holds no luminamoon worker state"):
            ds.commit({"step": 2})
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(lmd.ConfigError, match=r"bad\.json: not a committed stream state"):
        ts.load_committed(tmp_path / "bad.json")


def test_without_torch_the_extra_is_named(
    paths: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with stream(paths) as pipe:
        monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
        with pytest.raises(ImportError, match=r"pip install 'luminamoon-data\[torch\]'"):
            pipe.as_torch_dataset()

"""ResumablePipeline: batches, commit protocol, exact resume under prefetch, shuffle, shard tails,
clean shutdown (threads, file descriptors), bad input, and native/fallback parity."""

from __future__ import annotations

import gc
import gzip
import importlib
import json
import os
import random
import threading
from pathlib import Path
from typing import Any

import pytest

import luminamoon.data as lmd
import stream_corpus as sc
from luminamoon.data.pipeline import FusedPipeline
from luminamoon.data.streaming import ResumablePipeline

F = importlib.import_module("luminamoon.data.fallbacks")
PIPE = {"quality": False, "near_dedup": {"threshold": 0.7}, "pii": True}
DOCS = 120


def consume(
    pipe: Any, stop: int | None = None, commit_every: int = 1, only: int | None = None
) -> list[tuple[Any, ...]]:
    """(batch_id, ids, texts, end, records) of each batch; commits every ``commit_every``
    batches (or only batch ``only``)."""
    out = []
    for batch in pipe:
        out.append(
            (batch.batch_id, batch.ids, list(batch.texts), batch.end.to_bytes(), batch.records)
        )
        if (
            (batch.batch_id == only)
            if only is not None
            else (batch.batch_id + 1) % commit_every == 0
        ):
            pipe.commit(batch.batch_id)
        if stop is not None and batch.batch_id >= stop:
            break
    return out


def make(sources: object, tmp: Path, fmt: str, *, name: str = "ck", **kw: Any) -> ResumablePipeline:
    options: dict[str, Any] = {
        "checkpoint": tmp / name / "train.meta",
        "batch_size": 7,
        "fields": sc.fields_for(fmt),
        "durable": False,
    }
    options.update(kw)
    pipeline = options.pop("pipeline", FusedPipeline(**PIPE))
    return lmd.ResumablePipeline(sources, pipeline, **options)


@pytest.mark.parametrize("fmt", sc.FORMATS)
def test_resume_after_every_commit_point_equals_the_uninterrupted_run(
    tmp_path: Path, fmt: str
) -> None:
    sources = sc.sources_for(tmp_path / "data", fmt, DOCS)
    with make(sources, tmp_path, fmt, name="full", prefetch=2) as pipe:
        full = consume(pipe)
    assert [b[0] for b in full] == list(range(len(full)))
    if fmt != "txt":
        seen = [i for b in full for i in b[1]]
        assert len(seen) == len(set(seen))
        assert len(seen) < DOCS
    # Stop after batch k (committed), drop everything prefetched, resume: the same stream.
    for k in (0, len(full) // 2, len(full) - 2):
        ck = f"cut{k}"
        with make(sources, tmp_path, fmt, name=ck, prefetch=3) as pipe:
            first = consume(pipe, stop=k + 2, only=k)
            # batches k+1, k+2 were yielded (and more prefetched) but never committed
        committed = [b for b in first if b[0] <= k]
        with make(sources, tmp_path, fmt, name=ck, prefetch=1) as pipe:
            assert pipe.committed_batch_id == k
            rest = consume(pipe)
        assert committed + rest == full, (fmt, k)


def test_prefetched_dedup_state_is_not_committed(tmp_path: Path) -> None:
    """commit(k) while k+1.. are already processed: their hashes stay staged, so after a
    restart they are kept again (a commit of every staged hash would drop them as duplicates)."""
    docs = [{"id": i, "text": f"unique text {i}"} for i in range(40)]
    docs += [{"id": 100 + i, "text": f"unique text {i + 20}"} for i in range(10)]
    with make(docs, tmp_path, "iterable", name="a", prefetch=4, batch_size=5) as pipe:
        full = consume(pipe)
    with make(docs, tmp_path, "iterable", name="b", prefetch=4, batch_size=5) as pipe:
        it = iter(pipe)
        first = next(it)
        # let the producer run ahead: it processes batches 1..4 and stages their hashes
        for _ in range(200):
            if pipe._producer is not None and pipe._producer._queue.full():  # type: ignore[union-attr]
                break
            threading.Event().wait(0.01)
        pipe.commit(first.batch_id)
        exact = pipe.pipeline.exact_dedup
        assert exact.committed_count == 5
        assert exact.staged_count > 0
    with make(docs, tmp_path, "iterable", name="b", prefetch=0, batch_size=5) as pipe:
        rest = consume(pipe)
    assert full[:1] + rest == full


def test_commit_errors(tmp_path: Path) -> None:
    sources = sc.sources_for(tmp_path / "d", "jsonl", 60)
    with make(sources, tmp_path, "jsonl", prefetch=2) as pipe:
        it = iter(pipe)
        b0, b1 = next(it), next(it)
        with pytest.raises(lmd.LuminaMoonError, match="never yielded"):
            pipe.commit(5)  # prefetched perhaps, not yielded
        with pytest.raises(lmd.LuminaMoonError, match="never yielded"):
            pipe.commit(99)
        assert pipe.commit(b1.batch_id) == 1  # covers batch 0 as well
        with pytest.raises(lmd.LuminaMoonError, match="already committed"):
            pipe.commit(b1.batch_id)
        with pytest.raises(lmd.LuminaMoonError, match="already committed"):
            pipe.commit(b0.batch_id)
        with pytest.raises(TypeError):
            pipe.commit("1")  # type: ignore[arg-type]
        assert pipe.committed_batch_id == 1
    with pytest.raises(lmd.LuminaMoonError, match="closed"):
        pipe.commit(2)


def test_rollback_replays_the_same_batches(tmp_path: Path) -> None:
    sources = sc.sources_for(tmp_path / "d", "parquet", 80)
    with make(sources, tmp_path, "parquet", prefetch=2) as pipe:
        it = iter(pipe)
        next(it)
        pipe.commit(0)
        a = [next(it) for _ in range(3)]
        pipe.rollback()
        b = [next(it) for _ in range(3)]
        assert [x.batch_id for x in b] == [1, 2, 3]
        assert [list(x.texts) for x in a] == [list(x.texts) for x in b]
        assert [x.ids for x in a] == [x.ids for x in b]
        pipe.commit(3)


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "iterable"])
def test_shuffle_is_a_permutation_reproduced_on_resume(tmp_path: Path, fmt: str) -> None:
    sources = sc.sources_for(tmp_path / "d", fmt, DOCS)
    kw = {"shuffle": 1234, "shuffle_buffer": 16, "pipeline": None}
    with make(sources, tmp_path, fmt, name="plain", pipeline=None) as pipe:
        plain = [i for b in consume(pipe) for i in b[1]]
    with make(sources, tmp_path, fmt, name="full", **kw) as pipe:
        full = consume(pipe)
    ids = [i for b in full for i in b[1]]
    assert sorted(ids) == sorted(plain)
    assert ids != plain
    assert all(b[4] == 7 for b in full[:-1])  # every batch but the last is full
    for k in (0, 3, len(full) - 2):  # inside a block, at block ends, near the end
        with make(sources, tmp_path, fmt, name=f"s{k}", **kw) as pipe:
            first = consume(pipe, stop=k + 1, only=k)
        with make(sources, tmp_path, fmt, name=f"s{k}", **kw) as pipe:
            rest = consume(pipe)
        assert first[: k + 1] + rest == full, k
    with make(sources, tmp_path, fmt, name="other", **{**kw, "shuffle": 99}) as pipe:
        assert [i for b in consume(pipe) for i in b[1]] != ids


def test_shard_tails_progress_and_state_dict(tmp_path: Path) -> None:
    paths = sc.write_corpus(tmp_path / "d", "jsonl", 60, shards=3)
    with make(paths, tmp_path, "jsonl", name="a", pipeline=None, prefetch=2) as pipe:
        it = iter(pipe)
        for _ in range(4):
            batch = next(it)
        pipe.commit(1)  # batches 2 and 3 yielded, not committed
        state = pipe.state_dict()
        assert state["batch_id"] == 1
        progress = pipe.progress()
        assert progress[0]["done"] is False
        assert progress[0]["coordinate"].global_row_idx == 14
        assert progress[1] == {"coordinate": pipe.assignment[1][1], "done": False}
        tails = pipe.remaining()
        assert [t[0] for t in tails] == [0, 1, 2]
        assert tails[0][1].byte_offset > 0
        assert batch.batch_id == 3
    # A reader of the committed tails reads exactly what is left.
    with make(paths, tmp_path, "jsonl", name="b", pipeline=None, shards=tails) as pipe:
        left = [i for b in consume(pipe) for i in b[1]]
    assert left == list(range(14, 60))
    # Subsets: shards 2 and 0 only, in that order.
    with make(paths, tmp_path, "jsonl", name="c", pipeline=None, shards=[2, 0]) as pipe:
        assert [i for b in consume(pipe) for i in b[1]] == list(range(40, 60)) + list(range(20))
    with pytest.raises(lmd.ConfigError, match="listed twice"):
        make(paths, tmp_path, "jsonl", name="d", shards=[1, 1])
    # state_dict is the committed state; load_state_dict continues from it.
    with make(paths, tmp_path, "jsonl", name="e", pipeline=None, checkpoint=None) as pipe:
        pipe.load_state_dict(state)
        assert next(iter(pipe)).batch_id == 2
        assert pipe.state_dict()["batch_id"] == 1


def _train_until_interrupted(pipe: Any) -> None:
    with pipe:
        for batch in pipe:
            if batch.batch_id == 3:
                raise KeyboardInterrupt


def _fds() -> dict[str, str]:
    """Open file descriptors and what they point at (listing the directory opens one more, the
    same one each time)."""
    fds = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return fds


def _threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "luminamoon-prefetch")


def _native_threads() -> int:
    """Threads named "lm-prefetch": BatchPrefetcher names its thread so on Linux (worker threads
    a stage starts from it inherit the name; the warm-up below starts those for good)."""
    count = 0
    for task in os.listdir("/proc/self/task"):
        try:
            count += Path(f"/proc/self/task/{task}/comm").read_text().strip() == "lm-prefetch"
        except OSError:
            continue
    return count


@pytest.mark.parametrize("how", ["close", "exhaust", "gc", "interrupt", "error"])
def test_no_thread_or_fd_leaks(tmp_path: Path, how: str) -> None:
    paths = sc.write_corpus(tmp_path / "d", "gz", 200, shards=2)
    paths += sc.write_corpus(tmp_path / "p", "parquet", 50, shards=1)
    if how == "error":
        good = Path(paths[0]).read_bytes()
        Path(paths[0]).write_bytes(good[: len(good) // 2])  # truncated mid-stream
    # Warm up: worker pools of the stages start on first use and stay; they are not leaks.
    with make(paths, tmp_path, "gz", name="warm", prefetch=3, batch_size=5) as warm:
        consume(warm)
    gc.collect()
    fds, threads, native = _fds(), _threads(), _native_threads()
    pipe = make(paths, tmp_path, "gz", prefetch=3, batch_size=5, strict=(how == "error"))
    try:
        it = iter(pipe)
        next(it)
        pipe.commit(0)
        if how == "exhaust":
            for _ in it:
                pass
        elif how == "interrupt":
            with pytest.raises(KeyboardInterrupt):
                _train_until_interrupted(pipe)
        elif how == "error":
            with pytest.raises(lmd.MalformedInputError, match=r"part-000\.jsonl\.gz"):
                consume(pipe)
        else:
            next(it)
        assert _threads() <= threads + 1
        if how in ("close", "gc") and lmd.BACKEND == "native":
            assert _native_threads() == native + 1  # the native prefetch thread runs
    finally:
        if how == "gc":
            del it, pipe
            gc.collect()
        else:
            pipe.close()
    # Threads join, and descriptors close, a moment after close() returns; a leak stays.
    for _ in range(100):
        if _threads() == threads and _native_threads() == native and _fds().keys() <= fds.keys():
            break
        threading.Event().wait(0.02)
    assert _threads() == threads
    assert _native_threads() == native
    opened = {fd: target for fd, target in _fds().items() if fds.get(fd) != target}
    assert not opened, f"descriptors left open: {opened}"


def test_bad_input_is_counted_and_the_last_commit_survives(tmp_path: Path) -> None:
    paths = sc.write_corpus(tmp_path / "d", "gz", 90, shards=3)
    good = Path(paths[1]).read_bytes()
    Path(paths[1]).write_bytes(good[: len(good) * 2 // 3])  # truncated .gz
    bad = Path(tmp_path / "d" / "part-003.jsonl")
    bad.write_text('{"id": 900, "text": "fine"}\n{"id": 901, "text": \n{"id": 902, "text": "ok"}\n')
    paths.append(str(bad))
    with make(paths, tmp_path, "gz", pipeline=None) as pipe:
        ids = [i for b in consume(pipe) for i in b[1]]
        stats = pipe.stats()
        assert stats["decompression_error"] == 1
        assert stats["malformed_json"] == 1
        assert any("part-001.jsonl.gz" in e for e in pipe.errors)
    assert 900 in ids
    assert 902 in ids
    assert 901 not in ids
    with make(paths, tmp_path, "gz", name="strict", pipeline=None, strict=True) as pipe:
        with pytest.raises(lmd.MalformedInputError, match=r"part-001\.jsonl\.gz.*byte"):
            consume(pipe)
        committed = pipe.committed_batch_id
        coordinate = pipe.committed_coordinate.to_bytes()
    assert committed >= 0
    tracker = lmd.StateTracker(tmp_path / "strict" / "train.meta", read_only=True)
    assert tracker.committed_batch_id == committed
    assert tracker.read()[2].to_bytes() == coordinate
    tracker.close()


def test_sources_and_options_are_checked(tmp_path: Path) -> None:
    with pytest.raises(lmd.LuminaMoonError, match="does not exist"):
        lmd.ResumablePipeline(str(tmp_path / "nope.jsonl"), checkpoint=None)
    with pytest.raises(lmd.ConfigError, match="batch_size"):
        lmd.ResumablePipeline([{"text": "a"}], checkpoint=None, batch_size=0)
    tracker = lmd.StateTracker(tmp_path / "t.meta")
    attached = FusedPipeline(tracker=tracker)
    with pytest.raises(lmd.ConfigError, match="without a tracker"):
        lmd.ResumablePipeline([{"text": "a"}], attached, checkpoint=None)
    del attached
    tracker.close()
    gen = ({"text": f"t{i}"} for i in range(30))
    with make(gen, tmp_path, "iterable", name="g", pipeline=None, batch_size=4) as pipe:
        next(iter(pipe))
        pipe.commit(0)
        pipe.rollback()
        with pytest.raises(lmd.ConfigError, match="one-shot iterator"):
            next(iter(pipe))
    # Missing text and non-string values in an iterable are counted, not fatal.
    items = [{"text": "a"}, {"txt": "b"}, {"text": 3}, "plain str", b"bytes"]
    with lmd.ResumablePipeline(items, checkpoint=None, prefetch=0) as pipe:
        texts = [t for b in pipe for t in b.texts]
        assert texts == ["a", "plain str", "bytes"]
        assert pipe.stats() == {"missing_field": 1, "non_string_field": 1}


# -- parity ------------------------------------------------------------------------------------


class _FallbackPipeline(FusedPipeline):
    _backend = F


class _FallbackStream(ResumablePipeline):
    _backend = F
    _pipeline_class = _FallbackPipeline


@pytest.mark.skipif(lmd.BACKEND != "native", reason="parity needs the native backend")
@pytest.mark.parametrize(
    ("fmt", "shuffle"),
    [("jsonl", None), ("jsonl", 7), ("parquet", 7), ("zst", None), ("iterable", 7)],
)
def test_native_and_fallback_give_the_same_batches(
    tmp_path: Path, fmt: str, shuffle: int | None
) -> None:
    sources = sc.sources_for(tmp_path / "d", fmt, DOCS)
    out = []
    for cls, name in ((ResumablePipeline, "n"), (_FallbackStream, "f")):
        with cls(
            sources,
            FusedPipeline(**PIPE),
            checkpoint=tmp_path / name / "t.meta",
            batch_size=9,
            fields=sc.fields_for(fmt),
            shuffle=shuffle,
            shuffle_buffer=20,
            durable=False,
        ) as pipe:
            out.append(consume(pipe, commit_every=3))
    assert out[0] == out[1]
    meta = [(tmp_path / n / "t.meta").read_bytes() for n in "nf"]
    dedup = [(tmp_path / n / "t.meta.dedup").read_bytes() for n in "nf"]
    assert meta[0] == meta[1]
    assert dedup[0] == dedup[1]


def test_gz_truncated_helper_is_really_truncated(tmp_path: Path) -> None:
    paths = sc.write_corpus(tmp_path / "d", "gz", 30, shards=1)
    data = Path(paths[0]).read_bytes()
    with pytest.raises(EOFError):
        gzip.decompress(data[: len(data) // 2])


def test_the_resume_example_of_the_docs_runs(tmp_path: Path) -> None:
    doc = Path(__file__).resolve().parents[1] / "docs" / "streaming.md"
    if not doc.exists():
        pytest.skip("docs/ is not next to tests/ (installed package test)")
    text = doc.read_text(encoding="utf-8")
    block = text.split("Resume after a crash", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    exec(block.replace("/tmp/lm-stream-demo", str(tmp_path)), {})


@pytest.mark.parametrize("shuffle", [None, 3])
def test_a_hugging_face_iterable_dataset_resumes_exactly(
    tmp_path: Path, shuffle: int | None
) -> None:
    """Without a shuffle through its own state_dict()/load_state_dict() (saved beside the
    checkpoint), with one by skipping records; the same stream either way."""
    datasets = pytest.importorskip("datasets")
    records = sc.documents(90)
    dataset = datasets.Dataset.from_list(records).to_iterable_dataset(num_shards=3)
    kw = {"batch_size": 8, "shuffle": shuffle, "shuffle_buffer": 20}
    with make(dataset, tmp_path, "iterable", name="full", **kw) as pipe:
        full = consume(pipe)
    with make(dataset, tmp_path, "iterable", name="cut", **kw) as pipe:
        first = consume(pipe, stop=5, only=4)
    companion = tmp_path / "cut" / "train.meta.source_state"
    assert companion.exists() == (shuffle is None)

    def no_skip(n: int) -> None:
        raise AssertionError("resumed by skipping although the dataset has a state_dict")

    if shuffle is None:
        dataset.skip = no_skip  # type: ignore[method-assign]
    with make(dataset, tmp_path, "iterable", name="cut", **kw) as pipe:
        rest = consume(pipe)
    assert first[:5] + rest == full


def test_compressed_shards_keep_their_access_points_beside_the_checkpoint(tmp_path: Path) -> None:
    """By default the ShardReader index lives in ``<checkpoint>.index``; ``index_dir=False``
    keeps none; either way a resume yields the same stream."""
    rng = random.Random(7)  # text that compresses poorly: many deflate blocks per shard
    paths = []
    for s in range(2):
        lines = (
            json.dumps({"id": i, "text": " ".join(f"{rng.getrandbits(40):x}" for _ in range(40))})
            for i in range(s * 1500, (s + 1) * 1500)
        )
        path = tmp_path / f"part{s}.jsonl.gz"
        path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
        paths.append(str(path))
    opts: dict[str, Any] = {"pipeline": None, "batch_size": 500, "index_spacing": 65536}
    with make(paths, tmp_path, "gz", name="full", **opts) as pipe:
        full = consume(pipe)
    index = tmp_path / "full" / "train.meta.index"
    assert sorted(p.suffix for p in index.iterdir()) == [".gzidx", ".gzidx"]  # one per shard
    cut = len(full) - 2  # deep in the second shard: the resume starts at an access point
    with make(paths, tmp_path, "gz", name="cut", **opts) as pipe:
        first = consume(pipe, stop=cut, only=cut)
    with make(paths, tmp_path, "gz", name="cut", **opts) as pipe:
        rest = consume(pipe)
    assert [b for b in first if b[0] <= cut] + rest == full
    with make(paths, tmp_path, "gz", name="none", index_dir=False, **opts) as pipe:
        assert consume(pipe) == full
    assert not (tmp_path / "none" / "train.meta.index").exists()
    with make(paths, tmp_path, "gz", name="own", index_dir=tmp_path / "idx", **opts) as pipe:
        assert consume(pipe) == full
    assert len(list((tmp_path / "idx").iterdir())) == 2
    with pytest.raises(TypeError, match="index_dir"):
        make(paths, tmp_path, "gz", name="bad", index_dir=3)


def test_http_shard_resume_asks_only_for_bytes_after_the_commit(tmp_path: Path) -> None:
    """An http(s) source read with Range requests: the resumed stream equals the uninterrupted
    one, and after a commit at ~90% the server is asked only for bytes from there on."""
    from http_range_server import RangeServer

    records = sc.documents(400)
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    server = RangeServer()
    try:
        server.put("train.jsonl", data)
        url = server.url("train.jsonl")
        with make(url, tmp_path, "jsonl", name="full", pipeline=None, batch_size=20) as pipe:
            full = consume(pipe)
        assert [i for b in full for i in b[1]] == list(range(400))
        cut = 17  # of 20 batches
        with make(url, tmp_path, "jsonl", name="cut", pipeline=None, batch_size=20) as pipe:
            consume(pipe, stop=cut, only=cut)
            offset = pipe.committed_coordinate.byte_offset
        assert offset > 0.85 * len(data)
        server.clear_log()
        with make(url, tmp_path, "jsonl", name="cut", pipeline=None, batch_size=20) as pipe:
            rest = consume(pipe)
        assert rest == full[cut + 1 :]
        starts = [int(r.split("=")[1].split("-")[0]) for r in server.ranges("train.jsonl") if r]
        assert starts, server.ranges("train.jsonl")
        # The first request of a reader learns the size and validators (byte 0 only); every
        # other starts at the committed offset or later.
        ranges = server.ranges("train.jsonl")
        assert ranges[0] == "bytes=0-0"
        assert starts[1:]
        assert min(starts[1:]) >= offset, (offset, ranges)
        # The remote file changed since the commit: an error naming it, not a silent restart.
        with make(url, tmp_path, "jsonl", name="changed", pipeline=None, batch_size=20) as pipe:
            consume(pipe, stop=cut, only=cut)
        server.put("train.jsonl", data.replace(b"river", b"rivers"))
        with make(url, tmp_path, "jsonl", name="changed", pipeline=None, batch_size=20) as pipe:
            assert consume(pipe) == []  # nothing of the new version is mixed in
            assert len(pipe.errors) == 1
            assert url in pipe.errors[0]
            assert "changed since it was first read" in pipe.errors[0]
        with (
            make(
                url, tmp_path, "jsonl", name="changed", pipeline=None, batch_size=20, strict=True
            ) as pipe,
            pytest.raises(lmd.LuminaMoonError, match="remote shard changed"),
        ):
            consume(pipe)
    finally:
        server.close()


def test_remaining_tails_split_between_new_readers_lose_and_repeat_nothing(
    tmp_path: Path,
) -> None:
    """What an elastic resume does: the committed tails of one reader, redistributed."""
    paths = sc.write_corpus(tmp_path / "d", "parquet", 90, shards=3)
    paths += sc.write_corpus(tmp_path / "j", "jsonl", 60, shards=2)
    consumed: list[object] = []
    with make(paths, tmp_path, "parquet", name="one", pipeline=None, prefetch=2) as pipe:
        for batch in pipe:
            consumed += batch.ids or []
            pipe.commit(batch.batch_id)
            if batch.batch_id == 4:
                next(iter(pipe))  # yielded (and more prefetched), never committed
                break
        tails = pipe.remaining()
    assert tails[0][1].row_offset_in_page or tails[0][1].row_group_idx  # inside a shard
    for worker in range(2):
        mine = tails[worker::2]
        with make(paths, tmp_path, "parquet", name=f"w{worker}", pipeline=None, shards=mine) as w:
            consumed += [i for b in consume(w) for i in b[1]]
    ids = sorted(int(i) for i in consumed)  # type: ignore[call-overload]
    assert ids == sorted(list(range(90)) + list(range(60)))

"""http(s):// shards through HTTP/1.1 Range requests, both backends, against a server the test
starts on 127.0.0.1 (tests/http_range_server.py) that logs the Range headers it receives: a resume
at 90% asks only for bytes from there (plain, and .gz through the access-point index); 5xx and
connection resets are retried with backoff; a 404 is an unreadable_shard naming the URL; a file
replaced while read, or between a checkpoint and its resume, is a clear error."""

from __future__ import annotations

import gzip
import importlib
import random
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import luminamoon.data as lmd
from http_range_server import RangeServer

F = importlib.import_module("luminamoon.data.fallbacks")
AI = importlib.import_module("luminamoon.data.fallbacks.access_index")
WORDS = "resume stream shard window deflate block offset coordinate the of and a to in".split()
FAST = {"http_backoff": 0.001, "http_timeout": 10.0}


def _backends() -> dict[str, ModuleType]:
    if lmd.BACKEND != "native":
        return {"fallback": F}
    return {"native": importlib.import_module("luminamoon.data._native"), "fallback": F}


BACKENDS = _backends()


def corpus(lines: int, seed: int) -> bytes:
    rng = random.Random(seed)
    out = []
    for i in range(lines):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 30)))
        out.append(f'{{"text": "{i} {words}"}}\n')
    return "".join(out).encode()


@pytest.fixture
def server() -> Iterator[RangeServer]:
    s = RangeServer()
    yield s
    s.close()


def read(mod: Any, shard: str, start: Any = None, **options: Any) -> tuple[Any, ...]:
    coordinate = None if start is None else mod.StreamCoordinate.from_bytes(start.to_bytes())
    reader = mod.ShardReader([shard], start=coordinate, batch_size=500, **{**FAST, **options})
    texts: list[str] = []
    coords: list[bytes] = []
    for batch in reader:
        texts += batch.texts
        coords += [c.to_bytes() for c in batch.coordinates]
    issues = [(e.kind, e.path, e.line, e.byte_offset, e.message) for e in reader.errors]
    return texts, coords, issues


def coordinate_after(mod: Any, shard: str, document: int) -> Any:
    reader = mod.ShardReader([shard], batch_size=document, **FAST)
    return next(iter(reader)).coordinates[-1]


def range_starts(ranges: list[str | None]) -> list[int]:
    assert all(r is not None and r.startswith("bytes=") for r in ranges), ranges
    return [int(r.split("=")[1].split("-")[0]) for r in ranges if r]


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_plain_shard_resume_at_90_percent_asks_only_for_bytes_from_there(
    server: RangeServer, tmp_path: Path, name: str
) -> None:
    mod = BACKENDS[name]
    data = corpus(6000, 1)
    server.put("a.jsonl", data)
    (tmp_path / "a.jsonl").write_bytes(data)
    url = server.url("a.jsonl")
    assert read(mod, url)[:2] == read(mod, str(tmp_path / "a.jsonl"))[:2]
    start = coordinate_after(mod, url, 5400)
    assert start.byte_offset > 0.85 * len(data)
    server.clear_log()
    texts, _, issues = read(mod, url, start)
    assert issues == []
    assert texts == read(mod, str(tmp_path / "a.jsonl"), start)[0]
    starts = range_starts(server.ranges("a.jsonl"))
    # The first request learns the size and validators (byte 0 only); every other starts at the
    # resume offset or later.
    assert server.ranges("a.jsonl")[0] == "bytes=0-0"
    assert starts[1:]
    assert min(starts[1:]) >= start.byte_offset


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_gzip_shard_resume_through_the_index_asks_only_for_bytes_from_there(
    server: RangeServer, tmp_path: Path, name: str
) -> None:
    mod = BACKENDS[name]
    blob = gzip.compress(corpus(12000, 2), 6)
    server.put("b.jsonl.gz", blob)
    url = server.url("b.jsonl.gz")
    index = tmp_path / "index"
    full = read(mod, url, index_dir=index, index_spacing=64 * 1024)
    assert len(full[0]) == 12000
    assert full[2] == []
    start = coordinate_after(mod, url, 10800)
    (index_name,) = [p for p in index.iterdir() if p.suffix == ".gzidx"]
    decoded, _ = AI.decode_index(index_name.read_bytes())
    point = [p for p in decoded.points if p.uncompressed_offset <= start.byte_offset][-1]
    server.clear_log()
    resumed = read(mod, url, start, index_dir=index, index_spacing=64 * 1024)
    assert resumed[0] == full[0][10800:]
    starts = range_starts(server.ranges("b.jsonl.gz"))
    assert server.ranges("b.jsonl.gz")[0] == "bytes=0-0"
    # From the access point on (the byte before it carries its first bits; feeds are aligned on
    # 4 KiB of the file), which lies in the last 20% of the compressed file.
    assert min(starts[1:]) >= (point.compressed_offset - 1) // 4096 * 4096
    assert point.compressed_offset > 0.8 * len(blob)
    # Without the index the whole prefix is fetched.
    server.clear_log()
    assert read(mod, url, start)[0] == resumed[0]
    assert 0 in range_starts(server.ranges("b.jsonl.gz"))[1:]


@pytest.mark.skipif(len(BACKENDS) < 2, reason="needs both backends")
def test_both_backends_send_the_same_requests(server: RangeServer, tmp_path: Path) -> None:
    blob = gzip.compress(corpus(9000, 3), 6)
    server.put("c.jsonl.gz", blob)
    url = server.url("c.jsonl.gz")
    seen = {}
    for name, mod in BACKENDS.items():
        index = tmp_path / name
        read(mod, url, index_dir=index, index_spacing=64 * 1024)
        start = coordinate_after(mod, url, 8000)
        server.clear_log()
        result = read(mod, url, start, index_dir=index, index_spacing=64 * 1024)
        seen[name] = (result, server.ranges("c.jsonl.gz"))
    assert seen["native"] == seen["fallback"]


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_retries_with_backoff_then_errors(server: RangeServer, name: str) -> None:
    mod = BACKENDS[name]
    data = corpus(500, 4)
    server.put("d.jsonl", data)
    url = server.url("d.jsonl")
    expected = read(mod, url)
    server.clear_log()
    server.faults[:] = ["500", "reset", "503"]
    assert read(mod, url, http_retries=3) == expected
    assert server.ranges("d.jsonl")[:4] == ["bytes=0-0"] * 4  # three failures, then the answer
    server.faults[:] = ["503", "503", "503"]
    texts, _, issues = read(mod, url, http_retries=2)
    assert texts == []
    assert issues == [
        ("unreadable_shard", url, 0, 0, "cannot read shard: HTTP 503 after 3 attempts")
    ]
    server.faults[:] = ["reset", "reset"]
    _, _, issues = read(mod, url, http_retries=1)
    assert issues[0][4] == "cannot read shard: connection error after 2 attempts"
    server.faults[:] = ["stall", "stall"]
    _, _, issues = read(mod, url, http_retries=1, http_timeout=0.3)
    assert issues[0][4] == "cannot read shard: timeout after 2 attempts"
    server.faults[:] = ["stall"]
    assert read(mod, url, http_retries=1, http_timeout=0.3) == expected


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_404_is_an_unreadable_shard_naming_the_url(server: RangeServer, name: str) -> None:
    mod = BACKENDS[name]
    server.put("e.jsonl", b'{"text": "kept"}\n')
    missing = server.url("missing.jsonl")
    reader = mod.ShardReader([missing, server.url("e.jsonl")], **FAST)
    texts = [t for batch in reader for t in batch.texts]
    assert texts == ["kept"]
    (issue,) = reader.errors
    assert (issue.kind, issue.path, issue.shard_id) == ("unreadable_shard", missing, 0)
    assert issue.message == "cannot read shard: HTTP 404"
    assert missing in str(issue)
    with pytest.raises(lmd.MalformedInputError, match="HTTP 404"):
        list(mod.ShardReader([missing], strict=True, **FAST))


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_a_file_replaced_while_read_is_an_error(server: RangeServer, name: str) -> None:
    mod = BACKENDS[name]
    data = corpus(60000, 5)  # > 4 MiB: read in two requests
    assert len(data) > 4 << 20
    server.put("f.jsonl", data)
    url = server.url("f.jsonl")
    reader = mod.ShardReader([url], batch_size=100, **FAST)
    it = iter(reader)
    next(it)
    server.put("f.jsonl", data.replace(b"resume", b"RESUME"))  # new ETag
    texts = [t for batch in it for t in batch.texts]
    assert all("RESUME" not in t for t in texts)
    (issue,) = reader.errors
    assert issue.kind == "unreadable_shard"
    assert "the remote shard changed while it was read" in issue.message
    assert issue.message.startswith("read error after 4194304 bytes: ")


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_a_file_replaced_between_checkpoint_and_resume_is_an_error(
    server: RangeServer, tmp_path: Path, name: str
) -> None:
    mod = BACKENDS[name]
    data = corpus(2000, 6)
    server.put("g.jsonl", data)
    url = server.url("g.jsonl")
    index = tmp_path / "index"
    read(mod, url, index_dir=index)
    start = coordinate_after(mod, url, 1000)
    assert read(mod, url, start, index_dir=index)[2] == []  # unchanged: fine
    server.put("g.jsonl", data)  # same bytes, new ETag: the server says it is another file
    texts, _, issues = read(mod, url, start, index_dir=index)
    assert texts == []
    ((kind, path, line, offset, message),) = issues
    assert (kind, path, line, offset) == ("unreadable_shard", url, 0, 0)
    assert message.startswith("cannot read shard: the remote shard changed since it was first read")
    assert '"v1-' in message
    assert '"v2-' in message
    # Read from its start, the shard's new version is recorded and can be resumed.
    read(mod, url, index_dir=index)
    assert read(mod, url, start, index_dir=index)[2] == []

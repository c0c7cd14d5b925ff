"""Bounded resume of compressed shards: the access-point index (LMIX, docs/readers.md).

Both backends: resuming through the index yields exactly what a resume from the start yields
(documents, coordinates, issues), the index files are byte-identical between backends and usable
by either, and a resume at 90% never reads the compressed prefix (proven by overwriting it).
"""

from __future__ import annotations

import gzip
import importlib
import os
import random
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import luminamoon.data as lmd

F = importlib.import_module("luminamoon.data.fallbacks")
AI = importlib.import_module("luminamoon.data.fallbacks.access_index")
GOLDEN = Path(__file__).parent / "golden" / "access_index_v1.hex"
SPACING = 64 * 1024
WORDS = "resume stream shard window deflate block offset coordinate the of and a to in".split()


def _native() -> ModuleType | None:
    try:
        return importlib.import_module("luminamoon.data._native")
    except ImportError:
        return None


BACKENDS: dict[str, ModuleType] = {"live": lmd}
if (N := _native()) is not None and lmd.BACKEND == "native":
    BACKENDS = {"native": N, "fallback": F}


def corpus(lines: int, seed: int) -> bytes:
    rng = random.Random(seed)
    out = []
    for i in range(lines):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 30)))
        out.append(f'{{"text": "{i} {words}"}}\n')
    return "".join(out).encode()


def read(
    mod: Any, path: Path, start: Any = None, index: Path | None = None
) -> tuple[list[str], list[Any], list[tuple[Any, ...]]]:
    coordinate = None if start is None else mod.StreamCoordinate.from_bytes(start.to_bytes())
    reader = mod.ShardReader(
        [str(path)], start=coordinate, index_dir=index, index_spacing=SPACING, batch_size=97
    )
    texts: list[str] = []
    coords: list[Any] = []
    for batch in reader:
        texts += batch.texts
        coords += [c.to_bytes() for c in batch.coordinates]
    issues = [(e.kind, e.shard_id, e.line, e.byte_offset, e.message) for e in reader.errors]
    return texts, coords, issues


def coordinate_after(mod: Any, path: Path, document: int) -> Any:
    reader = mod.ShardReader([str(path)], batch_size=document)
    return next(iter(reader)).coordinates[-1]


def index_file(directory: Path) -> Path:
    (name,) = os.listdir(directory)
    return directory / name


def clobber_prefix(path: Path, end: int) -> None:
    """Overwrites [0, end) with garbage, keeping size and mtime (the index still matches)."""
    info = path.stat()
    data = bytearray(path.read_bytes())
    data[:end] = bytes((0xA5 ^ (i * 31)) & 0xFF for i in range(end))
    path.write_bytes(bytes(data))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def point_before(index: Path, offset: int) -> Any:
    decoded, why = AI.decode_index(index.read_bytes())
    assert decoded is not None, why
    return [p for p in decoded.points if p.uncompressed_offset <= offset][-1]


def test_golden_vector() -> None:
    header = AI.IndexHeader(
        AI.KIND_GZIP, 65536, 123456789, 1700000000123456789, b"data/part-0.jsonl.gz"
    )
    point = AI.AccessPoint(40000, 70000, 321, 5, 0xDEADBEEF, 3, b"hello")
    data = AI.encode_index_header(header) + AI.encode_access_point(point)
    assert data.hex() + "\n" == GOLDEN.read_text()
    decoded, _ = AI.decode_index(data)
    assert decoded is not None
    assert decoded.header == header
    assert decoded.points == [point]
    assert decoded.valid_bytes == len(data)
    # Torn tail and a flipped bit: the valid prefix only; a bad header: not an index.
    assert AI.decode_index(data[:-1])[0].points == []
    assert AI.decode_index(b"XMIX" + data[4:]) == (None, "bad magic (not an LMIX index)")


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_gzip_resume_through_the_index(tmp_path: Path, name: str) -> None:
    mod = BACKENDS[name]
    data = corpus(12000, 1)
    shard = tmp_path / "a.jsonl.gz"
    shard.write_bytes(gzip.compress(data, 6))
    index = tmp_path / "index"
    full = read(mod, shard, index=index)
    assert len(full[0]) == 12000
    assert full[2] == []
    decoded, _ = AI.decode_index(index_file(index).read_bytes())
    assert len(decoded.points) >= 5
    for p in decoded.points:
        assert p.newlines == data[: p.uncompressed_offset].count(b"\n")
    for at in (120, 6000, 10800):  # 1%, 50%, 90%
        start = coordinate_after(mod, shard, at)
        plain = read(mod, shard, start)
        assert read(mod, shard, start, index) == plain
        assert plain[0] == full[0][at:]
    start = coordinate_after(mod, shard, 10800)
    expected = read(mod, shard, start)
    clobber_prefix(shard, point_before(index_file(index), start.byte_offset).compressed_offset - 1)
    assert read(mod, shard, start, index) == expected
    assert read(mod, shard, start)[2][0][0] == "decompression_error"


@pytest.mark.skipif(len(BACKENDS) < 2, reason="needs both backends")
def test_index_files_are_byte_identical_and_shared(tmp_path: Path) -> None:
    data = corpus(6000, 2)
    shard = tmp_path / "m.jsonl.gz"
    # Two members and zero padding between them.
    shard.write_bytes(gzip.compress(data[:200000], 6) + b"\0\0" + gzip.compress(data[200000:], 9))
    files = {}
    for name, mod in BACKENDS.items():
        directory = tmp_path / name
        read(mod, shard, index=directory)
        files[name] = index_file(directory).read_bytes()
    assert files["native"] == files["fallback"]
    start = coordinate_after(F, shard, 5000)
    expected = read(F, shard, start)
    clobber_prefix(
        shard,
        point_before(index_file(tmp_path / "native"), start.byte_offset).compressed_offset - 1,
    )
    # Each backend resumes through the other's index.
    assert read(BACKENDS["fallback"], shard, start, tmp_path / "native") == expected
    assert read(BACKENDS["native"], shard, start, tmp_path / "fallback") == expected


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_damaged_member_trailer_resumed_through_the_index(tmp_path: Path, name: str) -> None:
    mod = BACKENDS[name]
    first = gzip.compress(corpus(3000, 7), 6)
    blob = bytearray(first + gzip.compress(corpus(3000, 8), 6))
    shard = tmp_path / "d.jsonl.gz"
    shard.write_bytes(bytes(blob))
    index = tmp_path / "index"
    read(mod, shard, index=index)
    start = coordinate_after(mod, shard, 2000)
    info = shard.stat()
    for at, name_of_check in ((len(first) - 8, "data"), (len(first) - 3, "length")):
        damaged = bytearray(blob)
        damaged[at] ^= 1
        shard.write_bytes(bytes(damaged))
        os.utime(shard, ns=(info.st_atime_ns, info.st_mtime_ns))  # the index still matches
        plain = read(mod, shard, start)
        assert [i[0] for i in plain[2]] == ["decompression_error"]
        assert f"incorrect {name_of_check} check" in plain[2][0][4]
        # The member resumed as raw deflate checks its trailer against the CRC and size carried
        # by the access point, and drops what a read from the start drops.
        assert read(mod, shard, start, index) == plain


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_zstd_frame_index(tmp_path: Path, name: str) -> None:
    zstandard = pytest.importorskip("zstandard")
    mod = BACKENDS[name]
    data = corpus(8000, 3)
    frames = b"".join(
        zstandard.ZstdCompressor(level=3).compress(data[i : i + 100 * 1024])
        for i in range(0, len(data), 100 * 1024)
    )
    shard = tmp_path / "z.jsonl.zst"
    shard.write_bytes(frames)
    index = tmp_path / "index"
    full = read(mod, shard, index=index)
    decoded, _ = AI.decode_index(index_file(index).read_bytes())
    assert [p.uncompressed_offset % (100 * 1024) for p in decoded.points] == [0] * len(
        decoded.points
    )
    start = coordinate_after(mod, shard, 7200)
    expected = read(mod, shard, start)
    assert expected[0] == full[0][7200:]
    clobber_prefix(shard, point_before(index_file(index), start.byte_offset).compressed_offset)
    assert read(mod, shard, start, index) == expected
    # One frame: no point can exist (zstd cannot restart inside a frame); no index file.
    single = tmp_path / "s.jsonl.zst"
    single.write_bytes(zstandard.ZstdCompressor(level=3).compress(data))
    read(mod, single, index=tmp_path / "index1")
    assert os.listdir(tmp_path / "index1") == []


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_truncated_stale_and_damaged_indexes(tmp_path: Path, name: str) -> None:
    mod = BACKENDS[name]
    shard = tmp_path / "t.jsonl.gz"
    blob = gzip.compress(corpus(8000, 4), 6)
    shard.write_bytes(blob)
    index = tmp_path / "index"
    read(mod, shard, index=index)
    start = coordinate_after(mod, shard, 6000)
    # Truncated mid-stream: the index is stale (size changed) and rebuilt; the damage is a
    # decompression_error naming the shard and the offset of the dropped record, as without index.
    shard.write_bytes(blob[: len(blob) * 9 // 10])
    plain = read(mod, shard, start)
    assert [i[0] for i in plain[2]] == ["decompression_error"]
    assert "truncated gzip stream" in plain[2][0][4]
    assert read(mod, shard, index=index)[2] == read(mod, shard)[2]
    assert read(mod, shard, start, index) == plain
    # A damaged index file is ignored (and rewritten), never trusted.
    target = index_file(index)
    damaged = bytearray(target.read_bytes())
    damaged[200] ^= 0xFF
    target.write_bytes(bytes(damaged))
    assert read(mod, shard, start, index) == plain
    target.write_bytes(b"garbage")
    assert read(mod, shard, start, index) == plain


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_index_options(tmp_path: Path, name: str) -> None:
    mod = BACKENDS[name]
    with pytest.raises(ValueError, match="index_spacing must be >= 65536"):
        mod.ShardReader([str(tmp_path / "x.jsonl.gz")], index_dir=tmp_path, index_spacing=1000)
    (tmp_path / "file").write_bytes(b"x")
    with pytest.raises(NotADirectoryError, match="Not a directory"):
        mod.ShardReader([str(tmp_path / "x.jsonl.gz")], index_dir=tmp_path / "file")
    with pytest.raises(lmd.ConfigError, match="index_dir"):
        mod.ShardReader([str(tmp_path / "x.jsonl.gz")], index_dri=tmp_path)


def test_fallback_decoder_on_the_fuzz_corpus() -> None:
    """The fallback decoder keeps the fuzz target's property on its corpus: what decodes
    re-encodes to exactly the bytes it came from."""
    corpus_dir = Path(__file__).parent.parent / "fuzz" / "corpus" / "access_index_fuzzer"
    files = sorted(corpus_dir.iterdir())
    assert len(files) >= 10
    decoded_any = False
    for path in files:
        data = path.read_bytes()
        index, why = AI.decode_index(data)
        if index is None:
            assert why
            continue
        decoded_any = True
        again = AI.encode_index_header(index.header) + b"".join(
            AI.encode_access_point(p) for p in index.points
        )
        assert again == data[: index.valid_bytes], path.name
        assert len(again) == index.valid_bytes
    assert decoded_any


def test_fallback_without_a_loadable_zlib_reads_the_same_without_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readers = importlib.import_module("luminamoon.data.fallbacks.readers")
    shard = tmp_path / "n.jsonl.gz"
    shard.write_bytes(gzip.compress(corpus(3000, 9), 6))
    start = coordinate_after(F, shard, 2500)
    expected = read(F, shard, start)
    monkeypatch.setattr(readers, "load_zlib", lambda: None)
    index = tmp_path / "index"
    assert read(F, shard, index=index)[2] == []
    assert read(F, shard, start, index) == expected
    assert os.listdir(index) == []  # no ctypes zlib: no gzip index, same records


def test_fallback_without_a_loadable_libzstd_reads_the_same_with_zstandard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    zstandard = pytest.importorskip("zstandard")
    readers = importlib.import_module("luminamoon.data.fallbacks.readers")
    data = corpus(4000, 11)
    shard = tmp_path / "f.jsonl.zst"
    shard.write_bytes(
        b"".join(
            zstandard.ZstdCompressor(level=3, write_checksum=True).compress(data[i : i + 70 * 1024])
            for i in range(0, len(data), 70 * 1024)
        )
    )
    cut = tmp_path / "c.jsonl.zst"
    cut.write_bytes(shard.read_bytes()[: shard.stat().st_size * 2 // 3])
    start = coordinate_after(F, shard, 3000)

    def everything(tag: str) -> list[Any]:
        index = tmp_path / f"index-{tag}"
        out = [read(F, shard, index=index), read(F, shard, start, index), read(F, cut)]
        return [*out, index_file(index).read_bytes()]

    system = everything("system")
    assert system[2][2][0][0] == "decompression_error"
    monkeypatch.setattr(readers, "load_zstd", lambda: None)
    assert everything("zstandard") == system  # valid frames and truncation: same with any libzstd
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(ImportError, match=r"\.zst shards .* without a system libzstd"):
        read(F, shard)

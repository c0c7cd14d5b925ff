"""Readers: extract_field and ShardReader on the public API (docs/readers.md).

Runs on whichever backend is live (``LUMINAMOON_FORCE_FALLBACK=1`` for the fallback); the
native-vs-fallback comparison is tests/test_readers_parity.py.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import luminamoon.data as lmd

zstandard = pytest.importorskip("zstandard")

SC = lmd.StreamCoordinate
ex = lmd.extract_field
Malformed = lmd.MalformedInputError


# -- helpers ----------------------------------------------------------------------------------


def jsonl(records: Sequence[object]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def compress(data: bytes, suffix: str) -> bytes:
    suffix = suffix.lower()
    if suffix.endswith(".gz"):
        return gzip.compress(data)
    if suffix.endswith((".zst", ".zstd")):
        return bytes(zstandard.ZstdCompressor().compress(data))
    return data


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(compress(data, path.name))
    return path


def read_all(reader: Any) -> tuple[list[str], list[Any], dict[str, list[Any]], list[Any]]:
    texts: list[str] = []
    coords: list[Any] = []
    fields: dict[str, list[Any]] = {}
    ends: list[Any] = []
    for batch in reader:
        assert len(batch) == len(batch.texts) == len(batch.coordinates) > 0
        texts += batch.texts
        coords += batch.coordinates
        for name, values in batch.fields.items():
            assert len(values) == len(batch)
            fields.setdefault(name, []).extend(values)
        ends.append(batch.end)
    return texts, coords, fields, ends


def issues(reader: Any) -> list[tuple[Any, ...]]:
    return [(e.kind, e.shard_id, e.line, e.byte_offset, e.field) for e in reader.errors]


def c(shard: int, offset: int, row: int) -> Any:
    return SC(shard, offset, global_row_idx=row)


# -- extract_field ----------------------------------------------------------------------------


def test_extract_simple_and_nested() -> None:
    assert ex('{"text": "hi"}', "text") == "hi"
    assert ex(b'{"meta": {"body": "b"}}', "meta.body") == "b"
    assert ex('{"messages": [{"content": "a"}, {"content": "b"}]}', "messages.1.content") == "b"
    assert ex('{"a": {"0": "digit key"}}', "a.0") == "digit key"
    assert ex('{"a": [["x", "y"]]}', "a.0.1") == "y"
    assert ex(bytearray(b'{"t": ""}'), "t") == ""
    assert ex(memoryview(b' \t{"t": "ws"} \r\n'), "t") == "ws"


def test_extract_unescapes_everything() -> None:
    record = r'{"t": "q\" b\\ s\/ \b\f\n\r\t \u00e9 \u4e2d \ud83d\ude00 \u0000 end"}'
    assert ex(record, "t") == 'q" b\\ s/ \b\f\n\r\t é 中 😀 \x00 end'
    assert ex('{"t": "\\uD83D\\uDE00"}', "t") == "😀"  # upper-case hex
    assert ex('{"t": "raw é 中 😀"}', "t") == "raw é 中 😀"


def test_extract_duplicate_keys_first_wins() -> None:
    assert ex('{"t": "first", "t": "second"}', "t") == "first"
    assert ex('{"m": {"b": "1"}, "m": {"b": "2"}}', "m.b") == "1"


def test_extract_missing_field_suggests() -> None:
    with pytest.raises(
        Malformed, match=r"field 'meta\.bdy' not found; did you mean 'meta\.body'\?"
    ):
        ex('{"meta": {"body": "x"}}', "meta.bdy")
    with pytest.raises(Malformed, match=r"field 'txet' not found; did you mean 'text'\?"):
        ex('{"text": "x", "id": 1}', "txet")
    with pytest.raises(Malformed, match=r"the record has keys 'a', 'b'$"):
        ex('{"a": 1, "b": 2, "a": 3}', "zzzzzz")
    with pytest.raises(Malformed, match=r"'meta' is an empty object"):
        ex('{"meta": {}}', "meta.body")
    with pytest.raises(Malformed, match=r"'m' has 2 elements"):
        ex('{"m": [1, 2]}', "m.5")
    with pytest.raises(Malformed, match=r"'m' has 1 element$"):
        ex('{"m": ["a"]}', "m.1")
    with pytest.raises(Malformed, match=r"'m' is an array \(index it with a number\)"):
        ex('{"m": [1]}', "m.x")
    with pytest.raises(Malformed, match=r"'a' is a string, not an object"):
        ex('{"a": "s"}', "a.b")
    with pytest.raises(Malformed, match=r"the record is an array \(index it with a number\)"):
        ex('["text"]', "text")
    with pytest.raises(Malformed, match=r"the record is a number, not an object"):
        ex("3", "text")
    many = {f"key{i:02d}": i for i in range(12)}
    with pytest.raises(Malformed, match=r"'key09' and 2 more$"):
        ex(json.dumps(many), "zzzzzzzzzzzzzz")


def test_extract_non_string_names_the_type() -> None:
    for value, phrase in [
        ("1", "a number"),
        ("-2.5e3", "a number"),
        ("true", "a boolean"),
        ("null", "null"),
        ("{}", "an object"),
        ("[]", "an array"),
    ]:
        with pytest.raises(Malformed, match=rf"field 't' is {phrase}, not a string"):
            ex('{"t": ' + value + "}", "t")


@pytest.mark.parametrize(
    "record",
    [
        b"",
        b"   ",
        b'{"t": "x"',
        b'{"t": "x"} extra',
        b'{"t": "x",}',
        b"{'t': 'x'}",
        b'{"t": NaN}',
        b'{"t": "x", "n": Infinity}',
        b'{"t": "x", "n": 1e400}',
        b'{"t": "x", "n": 18446744073709551616}',
        b'{"t": "x", "n": -9223372036854775809}',
        b'{"t": "x", "n": 01}',
        b'{"t": "\\ud800"}',
        b'{"t": "\\udc00"}',
        b'{"t": "\\ud800\\u0041"}',
        b'{"t": "x", "k\\ud800": 1}',
        b'{"t": "\\x"}',
        b'{"t": "a\x00b"}',
        b'{"t": "tab\tinside"}',
        b'{"t": "\xff"}',
        b'{"t": "\xed\xa0\x80"}',
        b'\xef\xbb\xbf{"t": "bom"}',
        b'{"t": "x"}\x00',
    ],
)
def test_extract_malformed(record: bytes) -> None:
    with pytest.raises(Malformed, match="malformed JSON"):
        ex(record, "t")


def test_extract_str_with_lone_surrogate_is_malformed() -> None:
    with pytest.raises(Malformed, match="lone surrogate"):
        ex('{"t": "\ud800"}', "t")


def test_extract_numbers_at_the_limits_are_fine() -> None:
    for n in ("18446744073709551615", "-9223372036854775808", "1e-400", "-0", "1E2"):
        assert ex('{"t": "ok", "n": ' + n + "}", "t") == "ok"


def test_extract_depth_limit() -> None:
    # Every value may sit at depth <= 256 (the root is depth 1).
    # 255 arrays + 1 object = 256 containers: the string sits at depth 257 -> malformed.
    too_deep = "[" * 255 + '{"t": "deep"}' + "]" * 255
    with pytest.raises(Malformed, match="deeper than 256"):
        ex(too_deep, "0." * 255 + "t")
    fine = "[" * 254 + '{"t": "deep"}' + "]" * 254
    assert ex(fine, "0." * 254 + "t") == "deep"
    assert ex('{"t": "x", "d": ' + "[" * 255 + "]" * 255 + "}", "t") == "x"
    with pytest.raises(Malformed):
        ex('{"t": "x", "d": ' + "[" * 256 + "]" * 256 + "}", "t")
    with pytest.raises(Malformed):
        ex("[" * 5000 + "]" * 5000, "0")


def test_extract_bad_arguments() -> None:
    for bad in ("", "a..b", ".a", "a."):
        with pytest.raises(ValueError, match="invalid field path"):
            ex('{"a": "x"}', bad)
    with pytest.raises(TypeError):
        ex(42, "a")  # type: ignore[arg-type]


# -- formats, globs, fields -------------------------------------------------------------------

RECORDS = [{"text": f"doc {i}", "id": i} for i in range(5)]


@pytest.mark.parametrize(
    "name",
    ["a.jsonl", "a.json", "a.ndjson", "a.jsonl.gz", "a.jsonl.zst", "A.JSONL.GZ", "a.ndjson.zstd"],
)
def test_jsonl_formats(tmp_path: Path, name: str) -> None:
    path = write(tmp_path / name, jsonl(RECORDS))
    reader = lmd.ShardReader(path, fields=["id"])
    texts, coords, fields, _ = read_all(reader)
    assert texts == [r["text"] for r in RECORDS]
    assert fields == {"id": list(range(5))}
    assert coords[-1] == c(1, 0, 5)
    assert reader.errors == []
    stats = reader.stats()
    assert stats["records"] == stats["documents"] == 5
    assert stats["bytes_read"] == len(jsonl(RECORDS))
    assert stats["shards_opened"] == 1


@pytest.mark.parametrize("name", ["a.txt", "a.txt.gz", "a.txt.zst"])
def test_txt_formats(tmp_path: Path, name: str) -> None:
    path = write(tmp_path / name, b"one\ntwo\r\n\n  \nthree")
    texts, coords, _, _ = read_all(lmd.ShardReader(path))
    assert texts == ["one", "two\r", "three"]
    assert coords == [c(0, 4, 1), c(0, 9, 2), c(1, 0, 3)]


def test_explicit_format_overrides_extension(tmp_path: Path) -> None:
    path = write(tmp_path / "data.log", jsonl(RECORDS[:2]))
    assert read_all(lmd.ShardReader(path, format="jsonl"))[0] == ["doc 0", "doc 1"]
    lines = read_all(lmd.ShardReader(path, format="txt"))[0]
    assert lines == [json.dumps(r) for r in RECORDS[:2]]
    gz = write(tmp_path / "data.bin.gz", b"x\ny\n")
    assert read_all(lmd.ShardReader(gz, format="txt"))[0] == ["x", "y"]


def test_unknown_extension_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path / "data.csv", b"a,b\n")
    reader = lmd.ShardReader(path)
    assert read_all(reader)[0] == []
    assert issues(reader) == [("unreadable_shard", 0, 0, 0, None)]
    assert "format='jsonl'" in reader.errors[0].message


def test_globs_sorted_per_pattern_in_order(tmp_path: Path) -> None:
    for name in ("b.jsonl", "a.jsonl", "c.txt", "z.jsonl"):
        write(tmp_path / name, jsonl([{"text": name}]))
    reader = lmd.ShardReader(
        [str(tmp_path / "z.jsonl"), tmp_path / "*.jsonl", str(tmp_path / "*.t?t")]
    )
    assert reader.shards == [
        str(tmp_path / n) for n in ("z.jsonl", "a.jsonl", "b.jsonl", "z.jsonl", "c.txt")
    ]
    texts = read_all(reader)[0]
    assert texts[:4] == ["z.jsonl", "a.jsonl", "b.jsonl", "z.jsonl"]
    assert texts[4] == json.dumps({"text": "c.txt"})


def test_unmatched_glob_is_reported(tmp_path: Path) -> None:
    write(tmp_path / "a.jsonl", jsonl(RECORDS[:1]))
    pattern = str(tmp_path / "nothing*.jsonl")
    reader = lmd.ShardReader([pattern, tmp_path / "a.jsonl"])
    assert reader.shards == [str(tmp_path / "a.jsonl")]
    assert read_all(reader)[0] == ["doc 0"]
    (issue,) = reader.errors
    assert (issue.kind, issue.shard_id, issue.path, issue.line) == (
        "unmatched_glob",
        None,
        pattern,
        0,
    )
    assert reader.stats()["unmatched_globs"] == 1
    with pytest.raises(Malformed, match="matched no files"):
        lmd.ShardReader(pattern, strict=True)


def test_extra_fields(tmp_path: Path) -> None:
    records = [
        {"text": "a", "id": 1, "meta": {"url": "u1", "score": 0.5, "ok": True}, "tags": ["x"]},
        {"text": "b", "id": 2**64 - 1, "meta": {"url": None, "score": -1e-300, "ok": False}},
        {"text": "c", "id": -(2**63), "meta": {"score": 3}, "tags": {"k": 1}},
    ]
    path = write(tmp_path / "f.jsonl", jsonl(records))
    fields = ["id", "meta.url", "meta.score", "meta.ok", "tags.0", "text"]
    reader = lmd.ShardReader(path, fields=fields)
    texts, _, got, _ = read_all(reader)
    assert texts == ["a", "b", "c"]
    assert list(got) == fields
    assert got["id"] == [1, 2**64 - 1, -(2**63)]
    assert got["meta.url"] == ["u1", None, None]
    assert got["meta.score"] == [0.5, -1e-300, 3]
    assert [type(v) for v in got["meta.score"]] == [float, float, int]
    assert got["meta.ok"] == [True, False, None]
    assert got["tags.0"] == ["x", None, None]
    assert got["text"] == texts
    assert issues(reader) == [
        ("missing_extra_field", 0, 2, len(jsonl(records[:1])), "tags.0"),
        ("missing_extra_field", 0, 3, len(jsonl(records[:2])), "meta.url"),
        ("missing_extra_field", 0, 3, len(jsonl(records[:2])), "meta.ok"),
        ("missing_extra_field", 0, 3, len(jsonl(records[:2])), "tags.0"),
    ]
    reader = lmd.ShardReader(path, fields=["meta", "tags"])
    read_all(reader)
    kinds = [(e.kind, e.field) for e in reader.errors]
    assert kinds[0] == ("non_scalar_extra_field", "meta")
    assert "is an object, not a string, number, boolean or null" in reader.errors[0].message
    assert reader.stats()["non_scalar_extra_field"] == 5
    assert reader.stats()["missing_extra_field"] == 1


def test_extra_fields_in_text_shards_are_none(tmp_path: Path) -> None:
    path = write(tmp_path / "t.txt", b"x\n")
    reader = lmd.ShardReader(path, fields=["id"])
    assert read_all(reader)[2] == {"id": [None]}
    assert reader.errors == []


# -- text modes -------------------------------------------------------------------------------


def test_paragraph_mode(tmp_path: Path) -> None:
    data = b"\n\na1\na2\r\n \t\r\nb1\n\n\n  c1  \nc2"
    path = write(tmp_path / "p.txt", data)
    reader = lmd.ShardReader(path, txt_mode="paragraph")
    texts, coords, _, _ = read_all(reader)
    assert texts == ["a1\na2\r", "b1", "  c1  \nc2"]
    assert coords == [c(0, data.index(b" \t"), 1), c(0, data.index(b"b1") + 3, 2), c(1, 0, 3)]
    assert reader.stats()["blank_lines"] == 5


def test_paragraph_ending_with_blank_lines(tmp_path: Path) -> None:
    data = b"p1\n\np2\n  \n"
    path = write(tmp_path / "p.txt", data)
    texts, coords, _, _ = read_all(lmd.ShardReader(path, txt_mode="paragraph"))
    assert texts == ["p1", "p2"]
    assert coords == [c(0, 3, 1), c(0, 7, 2)]


def test_file_mode(tmp_path: Path) -> None:
    a = write(tmp_path / "a.txt", b"line 1\n\nline 3\n")
    b = write(tmp_path / "b.txt.gz", b"whole\r\nfile")
    empty = write(tmp_path / "e.txt", b"")
    reader = lmd.ShardReader([a, empty, b], txt_mode="file")
    texts, coords, _, _ = read_all(reader)
    assert texts == ["line 1\n\nline 3\n", "whole\r\nfile"]
    assert coords == [c(1, 0, 1), c(3, 0, 2)]
    assert reader.stats()["empty_shards"] == 1


def test_txt_keeps_nul_and_replaces_invalid_utf8(tmp_path: Path) -> None:
    path = write(tmp_path / "n.txt", b"a\x00b\nbad \xff\xfe end\n\xe2\x82\n")
    reader = lmd.ShardReader(path)
    texts = read_all(reader)[0]
    assert texts == ["a\x00b", "bad \ufffd\ufffd end", "\ufffd"]
    assert reader.stats()["invalid_utf8_texts"] == 2


def test_crlf_and_final_line_without_newline(tmp_path: Path) -> None:
    data = b'{"text": "a"}\r\n{"text": "b"}'
    path = write(tmp_path / "c.jsonl", data)
    texts, coords, _, _ = read_all(lmd.ShardReader(path))
    assert texts == ["a", "b"]
    assert coords == [c(0, 15, 1), c(1, 0, 2)]


# -- coordinates and resume -------------------------------------------------------------------


BAD = b'{"text": "ok 1"}\n\n{"broken\n{"txt": "x"}\n   \n{"text": 5}\n{"text": "ok 2"}\n'


def make_corpus(tmp_path: Path, suffix: str) -> list[Path]:
    """Three shards with blank lines, bad records and an empty shard in between."""
    first = [{"text": f"s0 r{i}", "id": i} for i in range(7)]
    third = [{"text": f"s3 r{i}" + "é" * i} for i in range(6)]
    return [
        write(tmp_path / f"s0{suffix}", jsonl(first)),
        write(tmp_path / f"s1{suffix}", BAD),
        write(tmp_path / f"s2{suffix}", b""),
        write(tmp_path / f"s3{suffix}", jsonl(third).rstrip(b"\n")),
    ]


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".jsonl.zst"])
def test_coordinates_are_exact(tmp_path: Path, suffix: str) -> None:
    shards = make_corpus(tmp_path, suffix)
    reader = lmd.ShardReader(shards, batch_size=4)
    texts, coords, _, ends = read_all(reader)
    assert texts == [f"s0 r{i}" for i in range(7)] + ["ok 1", "ok 2"] + [
        f"s3 r{i}" + "é" * i for i in range(6)
    ]
    first_len = [len(json.dumps({"text": f"s0 r{i}", "id": i})) + 1 for i in range(7)]
    offsets = [sum(first_len[: i + 1]) for i in range(7)]
    assert coords[:6] == [c(0, offsets[i], i + 1) for i in range(6)]
    assert coords[6] == c(1, 0, 7)  # the last record of a shard points at the next shard
    assert coords[7] == c(1, BAD.index(b"\n") + 1, 8)
    assert coords[8] == c(2, 0, 12)  # malformed, missing and non-string records count as rows
    assert coords[-1] == c(4, 0, 18)
    assert ends == [coords[3], coords[7], coords[11], coords[14]]
    stats = reader.stats()
    assert stats["records"] == 18
    assert stats["documents"] == 15
    assert stats["blank_lines"] == 2
    assert stats["empty_shards"] == 1
    assert stats["malformed_json"] == stats["missing_field"] == stats["non_string_field"] == 1
    third = jsonl([{"text": f"s3 r{i}" + "é" * i} for i in range(6)]).rstrip(b"\n")
    assert stats["bytes_read"] == sum(first_len) + len(BAD) + len(third)
    assert issues(reader) == [
        ("malformed_json", 1, 3, BAD.index(b'{"broken'), None),
        ("missing_field", 1, 4, BAD.index(b'{"txt'), "text"),
        ("non_string_field", 1, 6, BAD.index(b'{"text": 5'), "text"),
    ]
    assert "did you mean 'txt'?" in reader.errors[1].message


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".jsonl.zst"])
def test_resume_from_every_coordinate(tmp_path: Path, suffix: str) -> None:
    shards = make_corpus(tmp_path, suffix)
    texts, coords, _, _ = read_all(lmd.ShardReader(shards, batch_size=3))
    starts = [SC(), *coords]
    for k, start in enumerate(starts):
        reader = lmd.ShardReader(shards, start=start, batch_size=2)
        rest_texts, rest_coords, _, _ = read_all(reader)
        assert rest_texts == texts[k:], (k, start)
        assert rest_coords == coords[k:], (k, start)


@pytest.mark.parametrize("suffix", [".txt", ".txt.gz", ".txt.zst"])
@pytest.mark.parametrize("mode", ["line", "paragraph", "file"])
def test_resume_text_modes(tmp_path: Path, suffix: str, mode: str) -> None:
    shards = [
        write(tmp_path / f"a{suffix}", b"p1 l1\np1 l2\n\n\np2\r\n \np3 l1\np3 l2"),
        write(tmp_path / f"b{suffix}", b"\nq1\n\nq2\n"),
    ]
    texts, coords, _, _ = read_all(lmd.ShardReader(shards, txt_mode=mode))
    assert texts
    for k, start in enumerate([SC(), *coords]):
        rest = read_all(lmd.ShardReader(shards, txt_mode=mode, start=start))
        assert rest[0] == texts[k:]
        assert rest[1] == coords[k:]


def test_resume_line_numbers_and_bytes(tmp_path: Path) -> None:
    data = b'{"text": "a"}\n\n{"text": "b"}\n{"bad"\n{"text": "c"}\n'
    for name in ("r.jsonl", "r.jsonl.gz"):
        path = write(tmp_path / name, data)
        start = SC(0, 15, global_row_idx=1)
        reader = lmd.ShardReader(path, start=start)
        texts, coords, _, _ = read_all(reader)
        assert texts == ["b", "c"]
        assert coords == [c(0, 29, 2), c(1, 0, 4)]
        assert issues(reader) == [("malformed_json", 0, 4, 29, None)]
        assert reader.stats()["bytes_read"] == len(data) - 15
        assert reader.stats()["records"] == 3


def test_start_out_of_range(tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", jsonl(RECORDS))
    assert read_all(lmd.ShardReader(path, start=SC(1, 0, global_row_idx=5)))[0] == []
    with pytest.raises(ValueError, match="outside"):
        lmd.ShardReader(path, start=SC(2, 0))
    with pytest.raises(ValueError, match="outside"):
        lmd.ShardReader(path, start=SC(1, 3))
    # An offset past the end of a shard: nothing more in it.
    assert read_all(lmd.ShardReader(path, start=SC(0, 10**9)))[0] == []


def test_batches_and_end(tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", jsonl(RECORDS) + b'{"bad"\n')
    batches = list(lmd.ShardReader(path, batch_size=2))
    assert [len(b) for b in batches] == [2, 2, 1]
    assert batches[0].end == batches[0].coordinates[-1]
    # The last batch's end covers the malformed record scanned after its last document.
    assert batches[2].coordinates[-1] == c(0, len(jsonl(RECORDS)), 5)
    assert batches[2].end == c(1, 0, 6)
    assert "DocumentBatch(documents=2" in repr(batches[0])


# -- bad input --------------------------------------------------------------------------------


def test_malformed_missing_nonstring_reported_and_strict(tmp_path: Path) -> None:
    data = b'{"text": "a"}\n{"text": "b",}\n{"body": "c"}\n{"text": ["d"]}\n{"text": "e"}\n'
    path = write(tmp_path / "bad.jsonl", data)
    reader = lmd.ShardReader(path)
    assert read_all(reader)[0] == ["a", "e"]
    assert issues(reader) == [
        ("malformed_json", 0, 2, 14, None),
        ("missing_field", 0, 3, 29, "text"),
        ("non_string_field", 0, 4, 43, "text"),
    ]
    assert str(reader.errors[1]) == (
        f"{path}:3 (byte 29): field 'text' not found; the record has keys 'body'"
    )
    assert "is an array, not a string" in reader.errors[2].message
    strict = lmd.ShardReader(path, strict=True)
    with pytest.raises(Malformed, match=r"bad\.jsonl:2 \(byte 14\): malformed JSON.*shard 0"):
        read_all(strict)
    assert list(strict) == []  # finished after raising
    assert len(strict.errors) == 1


def test_missing_field_suggestion_in_reader(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", b'{"meta": {"body": "x"}}\n')
    reader = lmd.ShardReader(path, text_field="meta.bdy")
    read_all(reader)
    assert reader.errors[0].message == "field 'meta.bdy' not found; did you mean 'meta.body'?"
    assert reader.errors[0].field == "meta.bdy"
    with pytest.raises(Malformed, match=r"s\.jsonl:1 \(byte 0\): .*did you mean 'meta\.body'"):
        read_all(lmd.ShardReader(path, text_field="meta.bdy", strict=True))


@pytest.mark.parametrize("suffix", [".jsonl.gz", ".jsonl.zst"])
def test_truncated_compressed_stream(tmp_path: Path, suffix: str) -> None:
    # Enough varied data for several zstd blocks (128 KiB each) and deflate blocks.
    records = [{"text": f"record {i} " + "x" * (i % 97)} for i in range(40000)]
    data = jsonl(records)
    full = compress(data, suffix)
    path = tmp_path / f"t{suffix}"
    path.write_bytes(full[: len(full) * 2 // 3])
    after = write(tmp_path / "after.jsonl", jsonl([{"text": "next shard"}]))
    reader = lmd.ShardReader([path, after])
    texts, coords, _, _ = read_all(reader)
    assert texts[-1] == "next shard"
    delivered = texts[:-1]
    assert 0 < len(delivered) < len(records)
    assert delivered == [r["text"] for r in records[: len(delivered)]]
    assert coords[len(delivered) - 1] == c(0, len(jsonl(records[: len(delivered)])), len(delivered))
    ((kind, shard, line, byte, _),) = issues(reader)
    assert (kind, shard) == ("decompression_error", 0)
    assert byte == len(jsonl(records[: len(delivered)]))
    assert line == len(delivered) + 1
    assert "truncated" in reader.errors[0].message
    assert reader.stats()["decompression_errors"] == 1
    with pytest.raises(Malformed, match="truncated"):
        read_all(lmd.ShardReader(path, strict=True))


@pytest.mark.parametrize("suffix", [".jsonl.gz", ".jsonl.zst"])
def test_corrupt_compressed_stream(tmp_path: Path, suffix: str) -> None:
    data = jsonl([{"text": f"r{i}" * 30} for i in range(3000)])
    blob = bytearray(compress(data, suffix))
    blob[len(blob) // 2 : len(blob) // 2 + 64] = b"\xa5" * 64
    path = tmp_path / f"c{suffix}"
    path.write_bytes(bytes(blob))
    reader = lmd.ShardReader(path)
    texts = read_all(reader)[0]
    originals = [f"r{i}" * 30 for i in range(3000)]
    first_issue = reader.errors[0]
    good = [t for t, _ in zip(texts, range(first_issue.line - 1), strict=False)]
    assert good == originals[: len(good)]
    assert len(good) > 100
    # Garbage decoded before the damage is detected is reported record by record.
    kinds = [e.kind for e in reader.errors]
    assert kinds[-1] == "decompression_error"
    assert set(kinds[:-1]) <= {"malformed_json", "missing_field", "non_string_field"}
    garbage = write(tmp_path / "g.jsonl.gz", b"")
    garbage.write_bytes(b"this is not gzip at all\n")
    reader = lmd.ShardReader(garbage)
    assert read_all(reader)[0] == []
    assert issues(reader) == [("decompression_error", 0, 1, 0, None)]


def test_concatenated_members_and_frames(tmp_path: Path) -> None:
    a, b = jsonl([{"text": "a"}]), jsonl([{"text": "b"}])
    gz = tmp_path / "m.jsonl.gz"
    gz.write_bytes(gzip.compress(a) + b"\x00" * 10 + gzip.compress(b))
    zst = tmp_path / "m.jsonl.zst"
    cz = zstandard.ZstdCompressor()
    zst.write_bytes(cz.compress(a) + cz.compress(b))
    for path in (gz, zst):
        reader = lmd.ShardReader(path)
        assert read_all(reader)[0] == ["a", "b"]
        assert reader.errors == []


def test_nul_bytes(tmp_path: Path) -> None:
    data = b'{"text": "esc\\u0000aped"}\n{"text": "raw\x00byte"}\n\x00\n'
    reader = lmd.ShardReader(write(tmp_path / "n.jsonl", data))
    assert read_all(reader)[0] == ["esc\x00aped"]
    assert [e.kind for e in reader.errors] == ["malformed_json", "malformed_json"]


def test_hundred_megabyte_line(tmp_path: Path) -> None:
    big = b'{"text": "' + b"a" * (100 * 2**20) + b'"}\n'
    path = tmp_path / "big.jsonl"
    with path.open("wb") as f:
        f.write(b'{"text": "before"}\n')
        f.write(big)
        f.write(b'{"text": "after"}\n')
    reader = lmd.ShardReader(path)  # the default limit (256 MiB) admits it
    texts = read_all(reader)[0]
    assert [len(t) for t in texts] == [6, 100 * 2**20, 5]
    del texts
    small = lmd.ShardReader(path, max_record_bytes=1 << 20)
    texts, coords, _, _ = read_all(small)
    assert texts == ["before", "after"]
    assert coords == [c(0, 19, 1), c(1, 0, 3)]
    assert issues(small) == [("record_too_long", 0, 2, 19, None)]
    assert f"record of {len(big) - 1} bytes" in small.errors[0].message
    txt = tmp_path / "big.txt"
    txt.write_bytes(b"x" * (100 * 2**20) + b"\nshort")
    reader = lmd.ShardReader(txt, max_record_bytes=1000, txt_mode="paragraph")
    assert read_all(reader)[0] == []
    assert [e.kind for e in reader.errors] == ["record_too_long"]


def test_too_long_records_in_every_mode(tmp_path: Path) -> None:
    path = write(tmp_path / "l.txt", b"ok\n" + b"y" * 50 + b"\nok2\n\n" + b"z" * 50)
    line = lmd.ShardReader(path, max_record_bytes=10)
    assert read_all(line)[0] == ["ok", "ok2"]
    assert issues(line) == [("record_too_long", 0, 2, 3, None), ("record_too_long", 0, 5, 59, None)]
    para = lmd.ShardReader(path, max_record_bytes=10, txt_mode="paragraph")
    assert read_all(para)[0] == []
    assert issues(para) == [("record_too_long", 0, 1, 0, None), ("record_too_long", 0, 5, 59, None)]
    assert "record of 57 bytes" in para.errors[0].message
    whole = lmd.ShardReader(path, max_record_bytes=10, txt_mode="file")
    assert read_all(whole)[0] == []
    assert issues(whole) == [("record_too_long", 0, 1, 0, None)]


def test_empty_file_directory_missing_path(tmp_path: Path) -> None:
    empty = write(tmp_path / "empty.jsonl", b"")
    folder = tmp_path / "dir.jsonl"
    folder.mkdir()
    missing = tmp_path / "missing.jsonl"
    good = write(tmp_path / "good.jsonl", jsonl([{"text": "ok"}]))
    reader = lmd.ShardReader([empty, folder, missing, good])
    assert reader.shards == [str(p) for p in (empty, folder, missing, good)]
    texts, coords, _, _ = read_all(reader)
    assert texts == ["ok"]
    assert coords == [c(4, 0, 1)]
    assert issues(reader) == [
        ("unreadable_shard", 1, 0, 0, None),
        ("unreadable_shard", 2, 0, 0, None),
    ]
    assert "directory" in reader.errors[0].message
    assert "No such file" in reader.errors[1].message
    assert str(reader.errors[1]) == f"{missing}:0 (byte 0): {reader.errors[1].message}"
    stats = reader.stats()
    assert stats["empty_shards"] == 1
    assert stats["unreadable_shards"] == 2
    assert stats["shards_opened"] == 2
    for bad in (folder, missing):
        with pytest.raises(Malformed, match="cannot read shard"):
            read_all(lmd.ShardReader([empty, bad], strict=True))
    assert read_all(lmd.ShardReader(empty, strict=True))[0] == []
    # Whatever its name: a directory is reported as a directory, not as an unknown format.
    plain_folder = tmp_path / "folder"
    plain_folder.mkdir()
    reader = lmd.ShardReader(plain_folder)
    read_all(reader)
    assert reader.errors[0].message == "cannot read shard: it is a directory"


def test_issue_cap(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.jsonl", b"{\n" * 1500 + b'{"text": "ok"}\n')
    reader = lmd.ShardReader(path)
    assert read_all(reader)[0] == ["ok"]
    assert len(reader.errors) == 1000
    assert reader.errors[-1].line == 1000
    stats = reader.stats()
    assert stats["issues"] == 1500
    assert stats["issues_not_kept"] == 500
    assert stats["malformed_json"] == 1500


# -- options ----------------------------------------------------------------------------------


def test_option_validation(tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", jsonl(RECORDS))
    with pytest.raises(lmd.ConfigError, match="did you mean 'batch_size'"):
        lmd.ShardReader(path, batchsize=3)  # type: ignore[call-arg]
    with pytest.raises(lmd.ConfigError, match="unknown format 'jsnl'; did you mean 'jsonl'"):
        lmd.ShardReader(path, format="jsnl")
    with pytest.raises(lmd.ConfigError, match="unknown txt_mode 'paragraf'; did you mean"):
        lmd.ShardReader(path, txt_mode="paragraf")
    for name, bad in [("batch_size", 0), ("batch_size", -1), ("max_record_bytes", 0)]:
        with pytest.raises(ValueError, match=name):
            lmd.ShardReader(path, **{name: bad})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="invalid field path"):
        lmd.ShardReader(path, text_field="a..b")
    with pytest.raises(ValueError, match="twice"):
        lmd.ShardReader(path, fields=["id", "id"])
    with pytest.raises(TypeError):
        lmd.ShardReader(path, fields="id")
    with pytest.raises(TypeError):
        lmd.ShardReader(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        lmd.ShardReader(path, start=(0, 0))  # type: ignore[arg-type]


def test_threads_do_not_change_results(tmp_path: Path) -> None:
    records = [{"text": f"doc {i} " + "w" * (i % 300), "n": i} for i in range(20000)]
    data = jsonl(records)
    lines = data.split(b"\n")
    lines[123] = b'{"oops'
    path = write(tmp_path / "big.jsonl", b"\n".join(lines))
    runs = []
    for threads in (1, 2, 3, 0):
        reader = lmd.ShardReader(path, fields=["n"], threads=threads, batch_size=777)
        runs.append((read_all(reader), issues(reader), reader.stats()))
    assert all(run == runs[0] for run in runs)


def test_context_manager_and_close(tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", jsonl(RECORDS))
    with lmd.ShardReader(path, batch_size=2) as reader:
        assert len(next(iter(reader))) == 2
    assert list(reader) == []
    reader.close()
    assert repr(reader) == "ShardReader(1 shards)"


def test_pathlike_and_bytes_paths(tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", jsonl(RECORDS[:1]))
    for arg in (path, str(path), os.fsencode(path), [path], (str(path),)):
        assert read_all(lmd.ShardReader(arg))[0] == ["doc 0"]  # type: ignore[arg-type]

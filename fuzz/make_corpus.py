"""Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/), from the format rules.

Run from the repository root: python fuzz/make_corpus.py. The corpora are committed so that ctest
replays them without libFuzzer; libFuzzer runs grow them further.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent / "corpus"


def coordinate(*fields: int) -> bytes:
    return struct.pack("<IQIIIQ", *fields)


def slot(epoch: int, batch: int, coord: bytes, dedup_count: int, *, version: int = 1) -> bytes:
    body = (
        b"LMDL"
        + struct.pack("<IQQ", version, epoch, batch)
        + coord
        + struct.pack("<I", dedup_count)
    )
    return body + struct.pack("<I", zlib.crc32(body))


def main() -> None:
    coords = {
        "zero": coordinate(0, 0, 0, 0, 0, 0),
        "max": coordinate(2**32 - 1, 2**64 - 1, 2**32 - 1, 2**32 - 1, 2**32 - 1, 2**64 - 1),
        "typical": coordinate(3, 1 << 20, 0, 0, 0, 12345),
        "short": b"\x01" * 31,
        "long": b"\x01" * 33,
        "empty": b"",
    }
    c = coords["typical"]
    s1 = slot(1, 7, c, 2)
    s2 = slot(2, 8, c, 3)
    metas = {
        "fresh": bytes(128),
        "one_commit": s1 + bytes(64),
        "two_commits": s1 + s2,
        "torn_b": s1 + s2[:30] + bytes(34),
        "bad_magic": b"XXXX" + s1[4:] + s2,
        "bad_version": slot(1, 7, c, 2, version=9) + bytes(64),
        "both_bad": b"\xff" * 128,
        "short_zero": bytes(40),
        "oversized": s1 + s2 + b"\x00",
    }
    wal3 = struct.pack("<3Q", 1, 2, 3)
    for name, data in coords.items():
        write("coordinate_fuzzer", name, data)
    for name, data in metas.items():
        write("slot_fuzzer", name, data)
        meta_len = min(len(data), 255)
        for wal_name, wal in {
            "wal_exact": wal3,
            "wal_short": wal3[:5],
            "wal_long": wal3 + b"\x09" * 11,
        }.items():
            write("wal_fuzzer", f"{name}_{wal_name}", bytes([meta_len]) + data[:meta_len] + wal)


def epoch_log_corpus() -> None:
    """Seeds for epoch_log_fuzzer: 8-byte active epoch, then an EpochLog file."""

    def header(epoch: int, length: int) -> bytes:
        body = b"LMEL" + struct.pack("<IQQI", 1, epoch, length, 0)
        return body + struct.pack("<I", zlib.crc32(body))

    def record(payload: bytes) -> bytes:
        return struct.pack("<II", len(payload), zlib.crc32(payload)) + payload

    recs = record(b"alpha") + record(b"") + record(b"beta")
    full = 64 + len(recs)
    logs = {
        "empty": b"",
        "fresh": bytes(64),
        "one": header(1, full) + bytes(32) + recs,
        "two_headers": header(3, full) + header(2, 64 + 13) + recs,
        "uncommitted_tail": header(1, 64 + 13) + bytes(32) + recs,
        "torn_record": header(1, full) + bytes(32) + recs[:-2] + b"xx",
        "short_file": header(1, full + 40) + bytes(32) + recs,
    }
    for name, data in logs.items():
        for epoch in (0, 1, 2, 5):
            write("epoch_log_fuzzer", f"{name}_e{epoch}", struct.pack("<Q", epoch) + data)


def write(target: str, name: str, data: bytes) -> None:
    folder = ROOT / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


if __name__ == "__main__":
    main()
    epoch_log_corpus()

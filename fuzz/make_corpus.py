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


def minhash_log_corpus() -> None:
    """Seeds for minhash_log_fuzzer: 8-byte active epoch, then a `<meta>.minhash` EpochLog whose
    records hold MinHash index rows (layout in docs/minhash.md)."""

    def header(epoch: int, length: int) -> bytes:
        body = b"LMEL" + struct.pack("<IQQI", 1, epoch, length, 0)
        return body + struct.pack("<I", zlib.crc32(body))

    def record(payload: bytes) -> bytes:
        return struct.pack("<II", len(payload), zlib.crc32(payload)) + payload

    def rows_record(num_perm: int, bits: int, first: int, rows: list[bytes], **bad: int) -> bytes:
        fields = {"magic": 0, "version": 1, "shingle": 0, "reserved": 0, "ngram": 5}
        fields.update(bad)
        head = struct.pack(
            "<4sHBBHHIQQII",
            b"LMMH" if not fields["magic"] else b"XXXX",
            fields["version"],
            fields["shingle"],
            bits,
            num_perm,
            fields["ngram"],
            fields["reserved"],
            1,
            first,
            len(rows),
            0,
        )
        return head + b"".join(rows)

    def log(*payloads: bytes, epoch: int = 1) -> bytes:
        recs = b"".join(record(p) for p in payloads)
        return header(epoch, 64 + len(recs)) + bytes(32) + recs

    nibbles = [bytes([0x21, 0x43, 0x65, 0x87]), bytes([0x21, 0x43, 0x00, 0x00])]
    seeds = {
        "empty": b"",
        "fresh": bytes(64),
        "nibbles": log(rows_record(8, 4, 0, nibbles)),
        "two_records": log(rows_record(8, 4, 0, nibbles), rows_record(8, 4, 2, nibbles[:1])),
        "odd_perm": log(rows_record(3, 4, 0, [b"\x21\x03"])),
        "odd_perm_padding": log(rows_record(3, 4, 0, [b"\x21\x13"])),
        "bytes8": log(rows_record(4, 8, 0, [b"\x01\x02\x03\x04"] * 3)),
        "bytes16": log(rows_record(2, 16, 0, [b"\x01\x02\x03\x04"])),
        "full32": log(rows_record(2, 32, 0, [bytes(range(8)), bytes(8)])),
        "bad_magic": log(rows_record(8, 4, 0, nibbles, magic=1)),
        "bad_version": log(rows_record(8, 4, 0, nibbles, version=2)),
        "bad_shingle": log(rows_record(8, 4, 0, nibbles, shingle=7)),
        "bad_ngram": log(rows_record(8, 4, 0, nibbles, ngram=0)),
        "reserved": log(rows_record(8, 4, 0, nibbles, reserved=1)),
        "short_rows": log(rows_record(8, 4, 0, nibbles)[:-1]),
        "short_header": log(b"LMMH\x01\x00"),
        "uncommitted": header(1, 64) + bytes(32) + record(rows_record(8, 4, 0, nibbles)),
    }
    for name, data in seeds.items():
        for epoch in (0, 1, 3):
            write("minhash_log_fuzzer", f"{name}_e{epoch}", struct.pack("<Q", epoch) + data)


def string_tensor_corpus() -> None:
    """Seeds for string_tensor_fuzzer: mode byte, string count, then buffers (see the target)."""
    strings = [b"", b"a", b"twelve bytes", b"thirteen byte", "h\u00e9llo w\u00f6rld".encode()]
    offsets = [0]
    for s in strings:
        offsets.append(offsets[-1] + len(s))
    payload = b"".join(strings)
    n = len(strings)

    def views(items: list[bytes], base: int = 0) -> bytes:
        out, pos = b"", base
        for s in items:
            if len(s) <= 12:
                out += struct.pack("<I12s", len(s), s)
            else:
                out += struct.pack("<I4sII", len(s), s[:4], 0, pos)
            pos += len(s)
        return out

    seeds = {
        "offsets32": bytes([0, n]) + struct.pack(f"<{n + 1}I", *offsets) + payload,
        "offsets64": bytes([1, n]) + struct.pack(f"<{n + 1}Q", *offsets) + payload,
        "offsets32_decreasing": bytes([0, 2]) + struct.pack("<3I", 0, 5, 2) + b"hello",
        "offsets32_past_end": bytes([0, 1]) + struct.pack("<2I", 0, 99) + b"abc",
        "offsets32_split_sequence": bytes([0, 2]) + struct.pack("<3I", 0, 1, 2) + b"\xc3\xa9",
        "offsets32_invalid_utf8": bytes([0, 1]) + struct.pack("<2I", 0, 2) + b"\xff\xfe",
        "views": bytes([2, n]) + views(strings) + bytes([len(payload)]) + payload + b"tail",
        "views_bad_index": bytes([2, 1])
        + struct.pack("<I4sII", 13, b"thir", 7, 0)
        + bytes([13])
        + b"thirteen byte",
        "views_dirty_padding": bytes([2, 1]) + struct.pack("<I12s", 1, b"a\x01") + b"\x00",
        "arrow_utf8": bytes([3, n]) + struct.pack(f"<{n + 1}i", *offsets) + payload,
        "arrow_utf8_negative": bytes([3, 2]) + struct.pack("<3i", 0, -4, 3) + b"abc",
        "empty": b"",
        "zero_strings": bytes([0, 0]) + struct.pack("<I", 0),
    }
    for name, data in seeds.items():
        write("string_tensor_fuzzer", name, data)


def pii_corpus() -> None:
    """Seeds for pii_fuzzer: an options byte (bits 0-3 categories, bit 4 private IPs), then text."""
    texts = {
        "mixed": "mail john.doe@example.com ip 8.8.8.8 fe80::1 card 4111 1111 1111 1111 "
        "key AKIAIOSFODNN7EXAMPLE ghp_" + "aB3d" * 9 + " jwt eyJhbGciOiJIUzI1NiJ9."
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6y",
        "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj3\n-----END RSA PRIVATE KEY-----",
        "aws_secret": 'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
        "ipv6_forms": "2001:4860:4860::8888 [::1]:80 ::ffff:8.8.4.4 64:ff9b::1.1.1.1 A::B a[1::2]",
        "negatives": "v1.2.3.4 1.2.3.4.5 icon@2x.png 978-3-16-148410-0 12:30:45 sk-learn-x",
        "non_ascii": "联系zhang@example.cn获取 Jürgen 8.8.8.8é",
        "long_digits": "1" * 300 + " 4111 " * 20,
        # Local parts and domains ending on both sides of the 32-byte windows around the '@'.
        "email_windows": "x" * 40
        + " "
        + "l" * 30
        + "@"
        + "d" * 27
        + ".org "
        + "l" * 31
        + "@a.b-c.de jo..x@a.org 'q'@b.de e=f@c-.de k@"
        + "e" * 29
        + ".io",
        "empty": "",
    }
    for name, text in texts.items():
        for options in (0x0F, 0x1F, 0x05):
            write("pii_fuzzer", f"{name}_{options:02x}", bytes([options]) + text.encode())
    write("pii_fuzzer", "invalid_utf8", b"\x1f\xe2\x82a@b.co\xac\xff 8.8.8.8\xc3")


def jsonl_corpus() -> None:
    """Seeds for jsonl_fuzzer: a dotted path, a newline, then one JSON record (see the target)."""
    seeds = {
        "plain": b'text\n{"text": "hello", "id": 1}',
        "nested": b'meta.body\n{"meta": {"body": "b", "bdy": 2}}',
        "array": b'messages.1.content\n{"messages": [{"content": "a"}, {"content": "b"}]}',
        "digit_key": b'a.0\n{"a": {"0": "x"}}',
        "escapes": b'text\n{"text": "q\\" \\\\ \\/ \\b\\f\\n\\r\\t \\u00e9 \\ud83d\\ude00"}',
        "lone_surrogate": b'text\n{"text": "\\ud800 x"}',
        "lone_low": b'text\n{"text": "\\udc00"}',
        "duplicate_keys": b'text\n{"text": "a", "text": "b"}',
        "missing": b'txet\n{"text": "x"}',
        "non_string": b'text\n{"text": [1, 2.5, true, null, {"a": -0}]}',
        "numbers": b'n\n{"n": 18446744073709551615, "m": -9223372036854775808, "f": 1e308}',
        "bad_numbers": b'text\n{"text": "x", "n": 1e999, "m": 18446744073709551616}',
        "invalid_utf8": b'text\n{"text": "\xff\xfe"}',
        "raw_nul": b'text\n{"text": "a\x00b"}',
        "truncated": b'text\n{"text": "abc',
        "deep": b"0\n" + b"[" * 300 + b"]" * 300,
        "bom": b'text\n\xef\xbb\xbf{"text": "x"}',
        "bad_path": b'a..b\n{"a": "x"}',
        "no_newline": b'{"text": "whole input"}',
        "empty": b"",
    }
    for name, data in seeds.items():
        write("jsonl_fuzzer", name, data)


def cleaner_corpus() -> None:
    """Seeds for cleaner_fuzzer: an options byte (bits 0-6: normalize_newlines, remove_controls,
    whitespace=collapse (clear: both preserve_indent and keep are checked),
    strip_trailing_spaces, limit_newlines, strip, nfc; bit 7: repair off), then the document."""
    texts = {
        "prose": b"  The quick brown fox.\r\n\r\n\r\n\tJumps  over\x00 the dog. \n\n",
        "unicode_spaces": "a\u00a0\u1680b\u2000\u200a\u202fc\u205f\u3000d\u200b\u2028e".encode(),
        "controls": bytes(range(0x20)) + b"\x7f\xc2\x80\xc2\x85\xc2\x9f\xc2\xa0x",
        "table_3_8": b"a\xf1\x80\x80\xe1\x80\xc2b\x80c\x80\xbfd",
        "invalid_forms": b"\xc0\xaf\xe0\x80\xaf\xed\xa0\x80\xf4\x90\x80\x80"
        + b"\xf8\x88\x80\x80\x80\xe2\x82",
        "truncated_end": b"text \xf0\x9f\x98",
        "nfc": "e\u0301 \u212b a\u0301\u0316 \u1100\u1161\u11a8 \u0958 \u2000x".encode(),
        "combining_run": b"a" + "\u0301\u0316".encode() * 200,
        "newline_runs": b"a\n \n\t\n\r\r\n\n\n\nb\n",
        "long_plain": b"lorem ipsum dolor sit amet, " * 100 + "\u4e2d\u6587 ".encode() * 50,
        "whitespace_only": b" \t\r\n\xc2\xa0\n",
        "python_code": b"\n\n    def f(x):  \n\tif x:\r\n        return  1\t# c\n\n\n\n"
        b"    return 0\n",
        "makefile": "all:\n\tcc  -o a a.c \n\t\t./a\u00a0\u3000x\n\n".encode(),
        "empty": b"",
    }
    for name, text in texts.items():
        for options in (0x3F, 0x7F, 0x00, 0x24, 0x09, 0xBF):
            write("cleaner_fuzzer", f"{name}_{options:02x}", bytes([options]) + text)


def quality_corpus() -> None:
    """Seeds for quality_fuzzer: a document, as raw bytes."""
    seeds = {
        "prose": b"The old bridge was rebuilt. Residents watched the first train cross it.\n" * 8,
        "tokenizer": "Don't e-mail foo@bar.com... U.S. costs $5.00 (approx.) well-known and/or "
        "x--y 'q' #tag https://example.com/a-b?x=1, 10am 5km :) (: 22\u00b0C. \u2026".encode(),
        "lines": b"- a\n- b\n\n\nsame\nsame\nLorem ipsum dolor.\n{ x }\nUses cookies.\n[1] x.",
        "invalid": b"abc \xff\xfe \xed\xa0\x80 \xe2\x82 \xc0\xaf end",
        "nul_controls": bytes(range(0x20)) + b"\x7f\xc2\x85 x",
        "unicode": "\u4e2d\u6587 \u0416\u0438\u0442\u044c \U0001f600 \u00e9\u0301\u3000"
        "\u2028x\u212a".encode(),
        "repeats": b"a b c d e f g h i j k " * 40 + b"ab c d e f x a bc d e f",
        "affixes": b"(" * 300 + b"x" + b")" * 300 + b" " + b"." * 500,
        "empty": b"",
        "whitespace": b" \t\n\r\n\xc2\xa0\n",
    }
    for name, data in seeds.items():
        write("quality_fuzzer", name, data)


def shingles_corpus() -> None:
    """Seeds for shingles_fuzzer: the n-gram byte, then a document that crosses the tokenizer's
    64-byte blocks with multibyte, invalid and length-changing characters."""
    seeds = {
        "prose": b"\x04" + b"The old bridge was rebuilt; Residents watched it.\n" * 6,
        "mixed": b"\x04" + "Caf\u00e9 \u2014 na\u00efve \u2019quoted\u2019 text, ".encode() * 5,
        "lengths": b"\x00" + "\u0130stanbul \u212a \u1e9e \U00010400 x".encode() * 4,
        "invalid": b"\x02" + b"abc \xff\xfe \xed\xa0\x80 \xe2\x82 \xc0\xaf \xe0\x82\xaa end " * 4,
        "cyrillic": b"\x05"
        + "\u041c\u043e\u0441\u043a\u0432\u0430 \u0416\u0438\u0442\u044c ".encode() * 6,
        "boundary": b"\x01" + b"q" * 63 + "\u00e9".encode() + b"R" * 62 + b"\xe2\x80",
        "long_token": b"\x03" + b"s" * 200 + b" t",
        "empty": b"\x04",
    }
    for name, data in seeds.items():
        write("shingles_fuzzer", name, data)


def utf8_encode_corpus() -> None:
    """Seeds for utf8_encode_fuzzer: the width byte (0: Latin-1, 1: UCS-2, 2: UTF-32), then code
    units in little-endian order: mostly ASCII runs across the 16-unit blocks with 2- and 3-byte
    characters, surrogates and values above U+10FFFF among them."""

    def units(width: int, text: list[int]) -> bytes:
        fmt = {1: "B", 2: "H", 4: "I"}[width]
        return bytes([{1: 0, 2: 1, 4: 2}[width]]) + struct.pack(f"<{len(text)}{fmt}", *text)

    prose = [ord(c) for c in "The quick brown fox jumps over the lazy dog. " * 3]
    seeds = {
        "latin1": units(1, [*prose, 0xE9, 0xFF, 0x80, *prose]),
        "ucs2_accents": units(2, [*prose[:20], 0xE9, *prose[:30], 0x20AC, 0x2014, *prose]),
        "ucs2_cyrillic": units(2, [0x41C, 0x43E, 0x441, 0x43A, 0x432, 0x430, 0x20] * 12),
        "ucs2_cjk": units(2, [0x4E2D, 0x6587, 0x3002, 0x20] * 20),
        "ucs2_surrogate": units(2, [*prose[:17], 0xD800, *prose[:20], 0xDC80, 0xDFFF]),
        "utf32": units(4, [*prose[:30], 0x1F600, 0x10FFFF, 0x110000, 0xFFFFFFFF, 0xD83D, *prose]),
        "odd_length": b"\x01" + b"a\x00b\x00c",
        "empty": b"\x02",
    }
    for name, data in seeds.items():
        write("utf8_encode_fuzzer", name, data)


def utf8_decode_corpus() -> None:
    """Seeds for utf8_decode_fuzzer: UTF-8 of each width (ASCII runs across the 16- and 32-byte
    blocks with 2-, 3- and 4-byte characters among them, a character across a block's end), and
    bytes that are not UTF-8 (stray continuations, truncated and overlong sequences, surrogates)."""
    prose = "The quick brown fox jumps over the lazy dog. " * 3
    seeds = {
        "ascii": prose.encode(),
        "latin1": (prose[:15] + "\u00e9" + prose + "\u00ff\u0080").encode(),
        "ucs2_accents": (prose[:20] + "\u00e9" + prose[:30] + "\u20ac\u2014" + prose).encode(),
        "ucs2_cyrillic": ("\u041c\u043e\u0441\u043a\u0432\u0430 " * 12).encode(),
        "ucs2_cjk": ("\u4e2d\u6587\u3002 " * 20).encode(),
        "utf32": (prose[:30] + "\U0001f600\U0010ffff" + prose).encode(),
        "block_end": ("a" * 15 + "\u00e9" + "b" * 14 + "\u20ac" + "c" * 40).encode(),
        # French-like: an accent every few characters (the Latin-1 kernel's dense path), one
        # across each block end
        "latin1_dense": (
            "d\u00e9j\u00e0 vu, \u00e7a c\u00f4te tr\u00e8s cher: \u00e9t\u00e9 " * 6
        ).encode(),
        "latin1_block_ends": (
            "x" * 15 + "\u00c0" + "y" * 14 + "\u00ff" + "z" * 14 + "\u00e9"
        ).encode()
        * 3,
        # 2- and 3-byte characters across the ends of the UCS-2 kernels' 16- and 32-byte blocks
        # (their lead as a block's last or second-last byte), dense enough for the vector blocks
        "ucs2_block_ends": (
            "x" * 14 + "\u4e2d" + "y" * 13 + "\u0416\u20ac" + "z" * 12 + "\u4e2d" + "w" * 15
        ).encode()
        * 4,
        "stray_continuation": prose[:20].encode() + b"\x80\xbf" + prose.encode(),
        "truncated": prose.encode() + b"\xe2\x82",
        "overlong_and_surrogate": b"ab\xc0\xaf cd \xed\xa0\x80 ef \xf4\x90\x80\x80" * 4,
        "empty": b"",
    }
    for name, data in seeds.items():
        write("utf8_decode_fuzzer", name, data)


def access_index_corpus() -> None:
    """LMIX access-point indexes (docs/readers.md): valid gzip and zstd files, and each way a
    header or a record can be wrong."""

    def header(
        kind: int, path: bytes = b"shard.jsonl.gz", *, version: int = 1, spacing: int = 1 << 16
    ) -> bytes:
        body = (
            b"LMIX" + struct.pack("<IIQQqI", version, kind, spacing, 10**6, 1234, len(path)) + path
        )
        return body + struct.pack("<I", zlib.crc32(body))

    def point(  # noqa: PLR0917 - one argument per field of the record
        coff: int,
        uoff: int,
        newlines: int = 0,
        size: int = 0,
        crc: int = 0,
        bits: int = 0,
        window: bytes = b"",
        *,
        window_len: int | None = None,
    ) -> bytes:
        length = len(window) if window_len is None else window_len
        body = struct.pack("<QQQQIBI", coff, uoff, newlines, size, crc, bits, length) + window
        return body + struct.pack("<I", zlib.crc32(body))

    gz = header(1)
    p1 = point(5000, 70000, 900, 70000, 0x1234, 5, b"w" * 32768)
    p2 = point(9000, 140000, 1800, 140000, 0x5678, 0, b"v" * 32768)
    cases = {
        "gzip_two_points": gz + p1 + p2,
        "gzip_header_only": gz,
        "gzip_torn_tail": gz + p1 + p2[:100],
        "gzip_bad_record_crc": gz + p1[:-1] + bytes([p1[-1] ^ 1]),
        "gzip_out_of_order": gz + p2 + p1,
        "gzip_short_window": gz + point(5000, 70000, 900, 70000, 1, 0, b"w" * 10),
        "gzip_window_too_long": gz + point(5000, 70000, 0, 70000, 1, 0, window_len=40000),
        "gzip_bits_at_zero": gz + point(0, 70000, 0, 0, 0, 3),
        "zstd_points": header(2, b"s.jsonl.zst") + point(100, 70000, 10) + point(300, 140000, 20),
        "zstd_with_window": header(2) + point(100, 70000, 0, 5, 0, 0, b"abcde"),
        "bad_magic": b"XMIX" + gz[4:],
        "version_2": header(1, version=2),
        "small_spacing": header(1, spacing=100),
        "long_path": header(1, b"p" * 5000),
        "bad_header_crc": gz[:-1] + bytes([gz[-1] ^ 0x80]),
        "empty": b"",
    }
    for name, data in cases.items():
        write("access_index_fuzzer", name, data)


def language_corpus() -> None:
    """Seeds for language_fuzzer: a document, as raw bytes (its first byte also picks where
    the batch check splits it)."""
    seeds = {
        "english": b"The quick brown fox jumps over the lazy dog while the cat sleeps on the mat.",
        "german": "Der schnelle braune Fuchs springt \u00fcber den faulen Hund.".encode(),
        "japanese": "\u65e5\u672c\u8a9e\u306e\u6587\u7ae0\u3067\u3059\u3002".encode() * 8,
        "mixed": "Hello world. \u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440. "
        "\u4f60\u597d\u4e16\u754c\u3002".encode(),
        "invalid": b"abc \xff\xfe \xed\xa0\x80 \xe2\x82 \xc0\xaf \xf4\x90\x80\x80 end",
        "truncated": "\u00e9t\u00e9 fran\u00e7ais".encode()[:-1],
        "controls": bytes(range(0x20)) + b"\x7f\xc2\x85\xef\xbf\xbe\xef\xb7\x90 x",
        "html": b"<html><script>x</script>&amp; &#x4e2d; &lt;p&gt; text</html>",
        "empty": b"",
        "digits": b"1234567890 " * 30,
    }
    for name, data in seeds.items():
        write("language_fuzzer", name, data)


def write(target: str, name: str, data: bytes) -> None:
    folder = ROOT / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


if __name__ == "__main__":
    main()
    epoch_log_corpus()
    minhash_log_corpus()
    string_tensor_corpus()
    pii_corpus()
    jsonl_corpus()
    cleaner_corpus()
    quality_corpus()
    access_index_corpus()
    shingles_corpus()
    language_corpus()
    utf8_encode_corpus()
    utf8_decode_corpus()

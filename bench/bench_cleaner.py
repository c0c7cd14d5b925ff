#!/usr/bin/env python3
"""Text cleaning benchmark: luminamoon.data.TextCleaner (default steps) beside a hand-written
``re`` pipeline doing the same steps.

Three seeded corpora of 200..4000-byte documents: *ascii* (English-like prose: single spaces,
a paragraph break now and then), *multilingual* (Latin with accents, Cyrillic, Greek, CJK,
Arabic, Devanagari, Hangul), *messy* (the ascii prose with CR LF, tabs, runs of spaces, NBSP,
trailing spaces, NUL bytes and invalid UTF-8 sprinkled in). Throughput is MB/s of input bytes,
median over repeats, garbage collector off in timed regions, jobs round-robin.

Implementations:
  * native ``clean_batch`` with ``threads=1`` on ``list[str]``, ``list[bytes]`` and a pyarrow
    ``large_binary`` array; ``threads=0`` (all cores) on ``list[bytes]``; ``clean()`` per
    document from a Python loop; with ``nfc=True`` on ``list[bytes]``;
  * the pure-Python fallback (``list[bytes]``);
  * re pipeline: ``decode("utf-8", "replace")`` then one ``re.sub`` per step and ``strip``.

Run: ``.venv/bin/python bench/bench_cleaner.py`` (``--quick`` for a smoke run, ``--json PATH``).
The C++ per-ISA figures without Python: ``bench/cpp/text_cleaner_benchmark.cc``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Callable
from typing import Any

import results_json
from _common import time_interleaved
from luminamoon.data import _ffi, fallbacks

pa: Any
try:
    import pyarrow as pa
except ImportError:  # pragma: no cover - the Arrow row is skipped
    pa = None

MB = 1e6
WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there one all we their data training model pipeline "
    "information development government international technology particularly"
).split()
WORLD = [
    "Привет", "мир", "данные", "中文", "文本", "日本語", "テキスト", "Ελληνικά", "العربية",
    "हिन्दी", "한국어", "naïve", "café", "über", "straße", "Zürich", "São", "Paulo",
]  # fmt: skip


def prose(rng: random.Random, words: list[str], size: int) -> str:
    out: list[str] = []
    n = 0
    while n < size:
        w = rng.choice(words)
        r = rng.random()
        sep = ". " if r < 0.06 else ", " if r < 0.12 else "\n\n" if r < 0.13 else " "
        out += (w, sep)
        n += len(w) + len(sep)
    return "".join(out)


def messy(rng: random.Random, size: int) -> bytes:
    noise = [b"\r\n", b"\t", b"   ", b"\xc2\xa0", b" \n", b"\x00", b"\xff", b"\r\n" * 3, b"\x0c"]
    out = bytearray()
    for token in prose(rng, WORDS, size).split(" "):
        out += token.encode()
        out += rng.choice(noise) if rng.random() < 0.05 else b" "
    return bytes(out)


def corpora(n_docs: int) -> dict[str, list[bytes]]:
    rng = random.Random(20240601)
    sizes = [rng.randint(200, 4000) for _ in range(n_docs)]
    return {
        "ascii": [prose(rng, WORDS, s).encode() for s in sizes],
        "multilingual": [prose(rng, WORDS + WORLD * 3, s).encode() for s in sizes],
        "messy": [messy(rng, s) for s in sizes],
    }


H = r"[\t \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]"
RE_STEPS = [
    (re.compile(r"\r\n?"), "\n"),
    (re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"), ""),
    (re.compile(f"{H}+"), " "),
    (re.compile(f"(?<!{H}){H}+(?=\n|\\Z)"), ""),
    (re.compile(r"\n{3,}"), "\n\n"),
]
STRIP = "\t \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000\n"


def re_pipeline(docs: list[bytes]) -> list[str]:
    out = []
    for d in docs:
        s = d.decode("utf-8", "replace")
        for pattern, repl in RE_STEPS:
            s = pattern.sub(repl, s)
        out.append(s.strip(STRIP))
    return out


def jobs(docs: list[bytes]) -> dict[str, Callable[[], object]]:
    native: Any = _ffi.impl if _ffi.BACKEND == "native" else None
    as_str = [d.decode("utf-8", "replace") for d in docs]
    result: dict[str, Callable[[], object]] = {}
    if native is not None:
        one = native.TextCleaner(threads=1)
        every = native.TextCleaner(threads=0)
        nfc = native.TextCleaner(threads=1, nfc=True)
        result["native batch list[str] 1 thread"] = lambda: one.clean_batch(as_str)
        result["native batch list[bytes] 1 thread"] = lambda: one.clean_batch(docs)
        if pa is not None:
            array = pa.array(docs, type=pa.large_binary())
            result["native batch Arrow large_binary 1 thread"] = lambda: one.clean_batch(array)
        result["native batch list[bytes] all cores"] = lambda: every.clean_batch(docs)
        result["native clean() per document"] = lambda: [one.clean(d) for d in docs]
        result["native batch list[bytes] nfc=True"] = lambda: nfc.clean_batch(docs)
    fallback = fallbacks.TextCleaner()
    result["fallback batch list[bytes]"] = lambda: fallback.clean_batch(docs)
    result["re pipeline"] = lambda: re_pipeline(docs)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small corpora, one repeat")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    n_docs, repeats = (300, 1) if args.quick else (5000, 5)
    figures: dict[str, dict[str, float]] = {}
    for corpus, docs in corpora(n_docs).items():
        total = sum(map(len, docs))
        table = jobs(docs)
        for fn in table.values():
            fn()  # warm up (the NFC table, Arrow casts)
        timings = time_interleaved(table, repeats)
        print(f"\n{corpus}: {len(docs)} documents, {total / MB:.1f} MB")
        figures[corpus] = {}
        for name, samples in timings.items():
            rate = total / samples.median_wall / MB
            figures[corpus][name] = rate
            print(f"  {name:44} {rate:9.1f} MB/s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=2)
    results_json.record("cleaner", figures, config=vars(args), quick=args.quick)


if __name__ == "__main__":
    main()

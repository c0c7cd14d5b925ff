#!/usr/bin/env python3
"""SHA-256 over every MinHash signature of the real-text corpus and of adversarial documents: the
proof that a change to the MinHash stage changed no result (issue 15).

Run it with the old build and the new one (e.g. the old package first on PYTHONPATH), on each ISA
(``LUMINAMOON_SIMD=scalar|avx2|avx512``) and on the fallback (``LUMINAMOON_FORCE_FALLBACK=1``):
every run must print the same digest.

Documents: the corpus's documents whole and cut into ~1.2 KB pieces as
``bench_real_hashing.py`` cuts them, then seeded adversarial ones built to cross the tokenizer's
64-byte blocks in every way (multibyte word and separator characters, lowercase mappings that
change length, invalid and cut sequences, long tokens, separator runs), each hashed as ``str``
where it is valid UTF-8 and as ``bytes``. Configurations: word 5-grams (the benchmarks'),
word 1- and 3-grams, and character 5-grams, 64 permutations (the fused AVX-512 loop) and 100 (the
chunked one).

Run: ``PYTHONPATH=python .venv/bin/python bench/minhash_digest.py --corpus bench/out/real``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import random
from pathlib import Path

import luminamoon.data as lmd
from bench_real_hashing import cut, load

PIECES = [
    b"word",
    b"Mixed",
    b"UPPER",
    b"x",
    b"42",
    b" ",
    b"  ",
    b"\n\n",
    b",",
    b". ",
    "été".encode(),
    "ÄRGER".encode(),
    "Москва".encode(),
    "İstanbul".encode(),
    "\u212a".encode(),  # KELVIN SIGN: lowercases to 1 byte
    "\u1e9e".encode(),  # CAPITAL SHARP S: lowercases to 2 bytes
    "\U00010400".encode(),  # DESERET CAPITAL LONG I
    "日本語".encode(),
    "\u2014".encode(),
    "\u2019s".encode(),
    "😀".encode(),
    b"\xff",
    b"\x80",
    b"\xc3",
    b"\xe2\x80",
    b"\xe0\x82\xaa",
    b"\xed\xa0\x80",
    b"q" * 63,
    b"R" * 64,
    b"s" * 130,
    b" " * 70,
]


def adversarial(count: int, seed: int = 15) -> list[bytes]:
    rng = random.Random(seed)
    return [b"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 300))) for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", default=str(Path(__file__).parent / "out" / "real"))
    parser.add_argument("--adversarial", type=int, default=3000)
    args = parser.parse_args()
    texts = load(Path(args.corpus))
    docs: list[str | bytes] = list(texts) + [p for t in texts for p in cut(t, 1200)]
    for raw in adversarial(args.adversarial):
        docs.append(raw)
        with contextlib.suppress(UnicodeDecodeError):
            docs.append(raw.decode("utf-8"))
    digest = hashlib.sha256()
    for shingle, ngram, num_perm in (
        ("word", 5, 64),
        ("word", 5, 100),
        ("word", 1, 64),
        ("word", 3, 64),
        ("char", 5, 64),
    ):
        d = lmd.MinHashDeduplicator(num_perm=num_perm, ngram=ngram, shingle=shingle, threads=1)
        digest.update(d.signatures(docs).tobytes())
    print(f"{lmd.BACKEND} {len(docs)} documents: {digest.hexdigest()}")


if __name__ == "__main__":
    main()

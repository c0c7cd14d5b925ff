"""Regenerate ``xxh3_64.json``: XXH3-64 golden vectors over xxHash's sanity buffer.

The hashes come from the ``xxhash`` package (the reference C implementation), so the file pins
the pure-Python fallback to it. Run: ``python tests/golden/gen_xxh3_vectors.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import xxhash

PRIME32 = 2654435761
PRIME64 = 11400714785074694797
SANITY_BUFFER_SIZE = 4096

# Every length-path boundary of XXH3-64: 0 | 1-3 | 4-8 | 9-16 | 17-128 | 129-240 | >240
# (stripes, 1024-byte blocks, the last partial block).
LENGTHS = (
    0, 1, 2, 3, 4, 5, 8, 9, 12, 16, 17, 32, 64, 65, 96, 127, 128, 129, 130, 200, 239, 240,
    241, 255, 256, 511, 512, 1023, 1024, 1025, 2047, 2048, 2049, 2240, 3000, 4096,
)  # fmt: skip
SEEDS = (0, PRIME64)

OUTPUT = Path(__file__).with_name("xxh3_64.json")


def sanity_buffer(size: int = SANITY_BUFFER_SIZE) -> bytes:
    """xxHash's sanity-test buffer: byte i is the top byte of a u64 generator that starts at
    PRIME32 and is multiplied by PRIME64 (mod 2**64) after each byte."""
    out = bytearray(size)
    gen = PRIME32
    for i in range(size):
        out[i] = gen >> 56
        gen = (gen * PRIME64) & 0xFFFF_FFFF_FFFF_FFFF
    return bytes(out)


def vectors() -> list[dict[str, int | str]]:
    buf = sanity_buffer()
    return [
        {"len": n, "seed": seed, "hash": f"0x{xxhash.xxh3_64_intdigest(buf[:n], seed=seed):016X}"}
        for n in LENGTHS
        for seed in SEEDS
    ]


def main() -> None:
    rows = [json.dumps(row) for row in vectors()]
    OUTPUT.write_text("[\n  " + ",\n  ".join(rows) + "\n]\n", encoding="utf-8")
    print(f"wrote {len(rows)} vectors to {OUTPUT}")


if __name__ == "__main__":
    main()

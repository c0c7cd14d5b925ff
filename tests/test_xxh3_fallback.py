"""The pure-Python XXH3-64 of the fallback backend against xxHash's sanity vectors, the golden
file of ``tests/golden/gen_xxh3_vectors.py`` and, property-based, the ``xxhash`` package."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from luminamoon.data.fallbacks.xxh3 import XXHASH_PACKAGE, xxh3_64_digest, xxh3_64_pure

PRIME32 = 2654435761
PRIME64 = 11400714785074694797
M64 = (1 << 64) - 1
GOLDEN = Path(__file__).parent / "golden" / "xxh3_64.json"


def sanity_buffer(size: int) -> bytes:
    """xxHash's sanity-test buffer (same generator as tests/golden/gen_xxh3_vectors.py)."""
    out = bytearray(size)
    gen = PRIME32
    for i in range(size):
        out[i] = gen >> 56
        gen = (gen * PRIME64) & M64
    return bytes(out)


SANITY = sanity_buffer(4096)

# From the issue: (length of the sanity-buffer prefix, seed, XXH3-64).
SANITY_VECTORS = [
    (0, 0, 0x2D06800538D394C2),
    (1, 0, 0xC44BDFF4074EECDB),
    (6, 0, 0x27B56A84CD2D7325),
    (12, PRIME64, 0xE7303E1B2336DE0E),
    (2048, 0, 0xDD59E2C3A5F038E0),
]


@pytest.mark.parametrize(("length", "seed", "expected"), SANITY_VECTORS)
def test_sanity_vectors_pure(length: int, seed: int, expected: int) -> None:
    assert xxh3_64_pure(SANITY[:length], seed) == expected


@pytest.mark.parametrize(("length", "seed", "expected"), SANITY_VECTORS)
def test_sanity_vectors_reference(length: int, seed: int, expected: int) -> None:
    xxhash = pytest.importorskip("xxhash")
    assert xxhash.xxh3_64_intdigest(SANITY[:length], seed=seed) == expected


def test_golden_file() -> None:
    vectors = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert len(vectors) >= 72
    lengths = {v["len"] for v in vectors}
    # Every path boundary is covered.
    assert {0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1024, 1025, 4096} <= lengths
    mismatches = [
        v for v in vectors if f"0x{xxh3_64_pure(SANITY[: v['len']], v['seed']):016X}" != v["hash"]
    ]
    assert mismatches == []


def test_every_length_near_boundaries() -> None:
    xxhash = pytest.importorskip("xxhash")
    rng = random.Random(0x5EED)
    data = rng.randbytes(3100)
    lengths = [*range(300), *range(1000, 1100), *range(2040, 2060), 3071, 3072, 3073, 3100]
    for seed in (0, 1, PRIME64, M64):
        for n in lengths:
            expected = xxhash.xxh3_64_intdigest(data[:n], seed=seed)
            assert xxh3_64_pure(data[:n], seed) == expected, (n, seed)


@pytest.mark.parametrize("seed", [-1, -PRIME64, 1 << 64, (1 << 70) + 5])
def test_seed_wraps_mod_2_64(seed: int) -> None:
    for n in (0, 5, 15, 100, 200, 1500):
        assert xxh3_64_pure(SANITY[:n], seed) == xxh3_64_pure(SANITY[:n], seed & M64)


large_inputs = st.builds(
    lambda n, s: random.Random(s).randbytes(n),
    st.integers(min_value=2001, max_value=20_000),
    st.integers(min_value=0, max_value=2**32),
)
seeds = st.one_of(
    st.sampled_from([0, 1, PRIME32, PRIME64, M64]), st.integers(min_value=0, max_value=M64)
)


@settings(max_examples=300, deadline=None)
@given(data=st.one_of(st.binary(max_size=2000), large_inputs), seed=seeds)
def test_matches_xxhash_package(data: bytes, seed: int) -> None:
    xxhash = pytest.importorskip("xxhash")
    assert xxh3_64_pure(data, seed) == xxhash.xxh3_64_intdigest(data, seed=seed)


@pytest.mark.parametrize("length", [0, 3, 8, 16, 100, 240, 241, 1024, 4096])
def test_digest_equals_pure(length: int) -> None:
    data = SANITY[:length]
    assert xxh3_64_digest(data) == xxh3_64_pure(data) == xxh3_64_pure(data, 0)


def test_xxhash_package_flag() -> None:
    assert XXHASH_PACKAGE is (importlib.util.find_spec("xxhash") is not None)

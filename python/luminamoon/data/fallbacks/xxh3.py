"""XXH3-64 (xxHash v0.8) for the fallback backend: a pure-Python implementation and a digest
helper that prefers the ``xxhash`` package when it is installed."""

from __future__ import annotations

import struct
from functools import lru_cache
from operator import mul
from typing import Final, NamedTuple

__all__ = ["XXHASH_PACKAGE", "xxh3_64_digest", "xxh3_64_pure"]

_M64: Final = 0xFFFF_FFFF_FFFF_FFFF
_M32: Final = 0xFFFF_FFFF

_PRIME32_1: Final = 0x9E3779B1
_PRIME32_2: Final = 0x85EBCA77
_PRIME32_3: Final = 0xC2B2AE3D
_PRIME64_1: Final = 0x9E3779B185EBCA87
_PRIME64_2: Final = 0xC2B2AE3D27D4EB4F
_PRIME64_3: Final = 0x165667B19E3779F9
_PRIME64_4: Final = 0x85EBCA77C2B2AE63
_PRIME64_5: Final = 0x27D4EB2F165667C5
_PRIME_MX1: Final = 0x165667919E3779F9
_PRIME_MX2: Final = 0x9FB21C651E98DF25

# The 192-byte default secret (XXH3_kSecret).
_DEFAULT_SECRET: Final = bytes.fromhex(
    "b8fe6c3923a44bbe7c01812cf721ad1c"
    "ded46de9839097db7240a4a4b7b3671f"
    "cb79e64eccc0e578825ad07dccff7221"
    "b8084674f743248ee03590e6813a264c"
    "3c2852bb91c300cb88d0658b1b532ea3"
    "71644897a20df94e3819ef46a9deacd8"
    "a8fa763fe39c343ff9dcbbc7c70b4f1d"
    "8a51e04bcdb45931c89f7ec9d9787364"
    "eac5ac8334d3ebc3c581a0fffa1363eb"
    "170ddd51b7f0da49d316552629d4689e"
    "2b16be587d47a1fc8ff8b8d17ad031ce"
    "45cb3a8f95160428afd7fbcabb4b407e"
)

_STRIPE_LEN: Final = 64
_STRIPES_PER_BLOCK: Final = (len(_DEFAULT_SECRET) - _STRIPE_LEN) // 8  # 16
_BLOCK_LEN: Final = _STRIPE_LEN * _STRIPES_PER_BLOCK  # 1024
_LASTACC_START: Final = 7
_MERGEACCS_START: Final = 11
_MIDSIZE_STARTOFFSET: Final = 3
_MIDSIZE_LASTOFFSET: Final = 17
_SECRET_SIZE_MIN: Final = 136
_INIT_ACC: Final = (
    _PRIME32_3,
    _PRIME64_1,
    _PRIME64_2,
    _PRIME64_3,
    _PRIME64_4,
    _PRIME32_2,
    _PRIME64_5,
    _PRIME32_1,
)

_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
# Codecs for runs of 0..16 stripes: as 64-bit words, and as the low / high 32-bit halves of
# every word.
_RUN_U64: Final = tuple(struct.Struct(f"<{8 * k}Q") for k in range(_STRIPES_PER_BLOCK + 1))
_RUN_LO: Final = tuple(struct.Struct("<" + "I4x" * (8 * k)) for k in range(_STRIPES_PER_BLOCK + 1))
_RUN_HI: Final = tuple(struct.Struct("<" + "4xI" * (8 * k)) for k in range(_STRIPES_PER_BLOCK + 1))
# 16-byte rounds of the 17..240-byte paths: k rounds as 2*k words.
_MID_U64: Final = tuple(struct.Struct(f"<{2 * k}Q") for k in range(9))


def _read64(buf: bytes, offset: int) -> int:
    value: int = _U64.unpack_from(buf, offset)[0]
    return value


def _read32(buf: bytes, offset: int) -> int:
    value: int = _U32.unpack_from(buf, offset)[0]
    return value


# Secret-derived constants of the 0..16-byte paths (seed is mixed in per call).
_K_LEN0: Final = _read64(_DEFAULT_SECRET, 56) ^ _read64(_DEFAULT_SECRET, 64)
_K_LEN1TO3: Final = _read32(_DEFAULT_SECRET, 0) ^ _read32(_DEFAULT_SECRET, 4)
_K_LEN4TO8: Final = _read64(_DEFAULT_SECRET, 8) ^ _read64(_DEFAULT_SECRET, 16)
_K_LEN9TO16_LO: Final = _read64(_DEFAULT_SECRET, 24) ^ _read64(_DEFAULT_SECRET, 32)
_K_LEN9TO16_HI: Final = _read64(_DEFAULT_SECRET, 40) ^ _read64(_DEFAULT_SECRET, 48)


def _xxh64_avalanche(h: int) -> int:
    h ^= h >> 33
    h = (h * _PRIME64_2) & _M64
    h ^= h >> 29
    h = (h * _PRIME64_3) & _M64
    return h ^ (h >> 32)


def _xxh3_avalanche(h: int) -> int:
    h ^= h >> 37
    h = (h * _PRIME_MX1) & _M64
    return h ^ (h >> 32)


def _hash_short(data: bytes, n: int, seed: int) -> int:
    """Lengths 0..16 (default secret, ``seed`` already reduced mod 2**64)."""
    if n > 8:
        lo = _read64(data, 0) ^ ((_K_LEN9TO16_LO + seed) & _M64)
        hi = _read64(data, n - 8) ^ ((_K_LEN9TO16_HI - seed) & _M64)
        product = lo * hi
        acc = (
            n
            + int.from_bytes(lo.to_bytes(8, "little"), "big")  # byte-swapped lo
            + hi
            + ((product & _M64) ^ (product >> 64))
        )
        return _xxh3_avalanche(acc & _M64)
    if n >= 4:
        seed ^= int.from_bytes((seed & _M32).to_bytes(4, "little"), "big") << 32
        keyed = (_read32(data, n - 4) | (_read32(data, 0) << 32)) ^ ((_K_LEN4TO8 - seed) & _M64)
        # rrmxmx
        h = keyed ^ ((keyed << 49 | keyed >> 15) & _M64) ^ ((keyed << 24 | keyed >> 40) & _M64)
        h = (h * _PRIME_MX2) & _M64
        h ^= (h >> 35) + n
        h = (h * _PRIME_MX2) & _M64
        return h ^ (h >> 28)
    if n:
        combined = (data[0] << 16) | (data[n >> 1] << 24) | data[n - 1] | (n << 8)
        return _xxh64_avalanche(combined ^ ((_K_LEN1TO3 + seed) & _M64))
    return _xxh64_avalanche(seed ^ _K_LEN0)


class _MidKeys(NamedTuple):
    """Seeded secret words of the 17..240-byte paths (``secret + seed``, ``secret - seed``).

    17..128 bytes: pair j (j < nb, nb = 1..4) XORs the j-th 16 bytes from the front with the
    secret at 32*j and the j-th 16 bytes from the back with the secret at 32*j + 16;
    ``front[nb]`` / ``back[nb]`` hold those words in input memory order, so the back ones run
    from pair nb-1 down to pair 0. 129..240 bytes: ``long`` holds 8 pairs at 16*i, 7 pairs at
    16*i + 3 and the last-16-bytes pair at 136 - 17, flattened.
    """

    front: tuple[tuple[int, ...], ...]
    back: tuple[tuple[int, ...], ...]
    long: tuple[int, ...]


@lru_cache(maxsize=256)
def _mid_keys(seed: int) -> _MidKeys:
    def pair(off: int) -> tuple[int, int]:
        return (
            (_read64(_DEFAULT_SECRET, off) + seed) & _M64,
            (_read64(_DEFAULT_SECRET, off + 8) - seed) & _M64,
        )

    front = tuple(tuple(w for j in range(nb) for w in pair(32 * j)) for nb in range(5))
    back = tuple(
        tuple(w for j in reversed(range(nb)) for w in pair(32 * j + 16)) for nb in range(5)
    )
    offsets = [16 * i for i in range(8)]
    offsets += [16 * i + _MIDSIZE_STARTOFFSET for i in range(7)]
    offsets.append(_SECRET_SIZE_MIN - _MIDSIZE_LASTOFFSET)
    return _MidKeys(front, back, tuple(w for off in offsets for w in pair(off)))


def _hash_17to128(data: bytes, n: int, keys: _MidKeys) -> int:
    nb = ((n - 1) >> 5) + 1  # 16-byte pairs taken from each end: 1..4
    decode = _MID_U64[nb]
    front = decode.unpack_from(data, 0)
    back = decode.unpack_from(data, n - 16 * nb)
    kf = keys.front[nb]
    kb = keys.back[nb]
    acc = n * _PRIME64_1
    for i in range(0, 2 * nb, 2):
        p = (front[i] ^ kf[i]) * (front[i + 1] ^ kf[i + 1])
        q = (back[i] ^ kb[i]) * (back[i + 1] ^ kb[i + 1])
        acc += ((p & _M64) ^ (p >> 64)) + ((q & _M64) ^ (q >> 64))
    return _xxh3_avalanche(acc & _M64)


def _hash_129to240(data: bytes, n: int, keys: _MidKeys) -> int:
    k = keys.long
    words = _MID_U64[8].unpack_from(data)
    acc = n * _PRIME64_1
    for i in range(0, 16, 2):
        p = (words[i] ^ k[i]) * (words[i + 1] ^ k[i + 1])
        acc += (p & _M64) ^ (p >> 64)
    acc = _xxh3_avalanche(acc & _M64)
    extra = (n >> 4) - 8  # further whole 16-byte rounds: 0..7
    words = _MID_U64[extra].unpack_from(data, 128)
    for i in range(0, 2 * extra, 2):
        p = (words[i] ^ k[16 + i]) * (words[i + 1] ^ k[17 + i])
        acc += (p & _M64) ^ (p >> 64)
    lo, hi = _MID_U64[1].unpack_from(data, n - 16)
    p = (lo ^ k[30]) * (hi ^ k[31])
    acc += (p & _M64) ^ (p >> 64)
    return _xxh3_avalanche(acc & _M64)


class _LongKeys(NamedTuple):
    """Key material of the >240-byte path, precomputed from one 192-byte secret.

    Stripe s of a block is XORed with ``secret[8*s : 8*s+64]``; laid end to end, those keys
    form a 1024-byte stream, kept as little-endian integers so a whole run of stripes is keyed
    with one big-int XOR.
    """

    block: int  # the 16 stripe keys of a full block
    # tail[k]: the first k stripe keys followed by the last-stripe key (secret[121:185]),
    # keying the final partial block of k stripes plus the last, overlapping, stripe.
    tail: tuple[int, ...]
    scramble: tuple[int, ...]
    merge: tuple[int, ...]


def _long_keys_from(secret: bytes) -> _LongKeys:
    stream = b"".join(secret[8 * s : 8 * s + _STRIPE_LEN] for s in range(_STRIPES_PER_BLOCK))
    last_off = len(secret) - _STRIPE_LEN - _LASTACC_START
    last = secret[last_off : last_off + _STRIPE_LEN]
    return _LongKeys(
        block=int.from_bytes(stream, "little"),
        tail=tuple(
            int.from_bytes(stream[: _STRIPE_LEN * k] + last, "little")
            for k in range(_STRIPES_PER_BLOCK)
        ),
        scramble=_RUN_U64[1].unpack_from(secret, len(secret) - _STRIPE_LEN),
        merge=_RUN_U64[1].unpack_from(secret, _MERGEACCS_START),
    )


@lru_cache(maxsize=64)
def _long_keys(seed: int) -> _LongKeys:
    """Key material of the seeded custom secret: each 16-byte pair (lo, hi) of the default
    secret becomes (lo + seed, hi - seed)."""
    words = _RUN_U64[3].unpack(_DEFAULT_SECRET)  # 24 words
    custom = [(w + seed) & _M64 if i % 2 == 0 else (w - seed) & _M64 for i, w in enumerate(words)]
    return _long_keys_from(_RUN_U64[3].pack(*custom))


_DEFAULT_LONG_KEYS: Final = _long_keys_from(_DEFAULT_SECRET)
_DEFAULT_MID_KEYS: Final = _mid_keys(0)

# Selects the even 64-bit lanes of 16 stripes (bytes 0-7 of every 16).
_EVEN_LANES: Final = int.from_bytes((b"\xff" * 8 + b"\x00" * 8) * 64, "little")
_FOLD_MASKS: Final = tuple((1 << bits) - 1 for bits in (4096, 2048, 1024, 512))
_EVEN_SLOTS = struct.Struct("<Q8xQ8xQ8xQ8x")


def _fold_stripes(x: int) -> int:
    """Sum the 512-bit stripes of ``x`` (up to 16): halve it, add the halves, repeat."""
    m4096, m2048, m1024, m512 = _FOLD_MASKS
    x = (x >> 4096) + (x & m4096)
    x = (x >> 2048) + (x & m2048)
    x = (x >> 1024) + (x & m1024)
    return (x >> 512) + (x & m512)


def _accumulate(chunk: bytes, key: int, stripes: int) -> tuple[int, ...]:
    """What ``stripes`` consecutive stripes add to the 8 lanes (unreduced), in lane order.

    Per stripe, lane i gains (x_i & 0xFFFFFFFF) * (x_i >> 32) with x_i = data_i ^ key_i, and
    lane i^1 gains data_i. The XOR runs on the whole run as one big int; the 32x32 products
    go through ``map``; then, with the products and the data as big ints, the even lanes (and
    the odd ones shifted down one lane) sit in 128-bit slots, so all stripes are summed lane
    by lane by folding 512-bit halves without carries crossing lanes.
    """
    data = int.from_bytes(chunk, "little")
    mixed = (data ^ key).to_bytes(stripes * _STRIPE_LEN, "little")
    products = int.from_bytes(
        _RUN_U64[stripes].pack(
            *map(mul, _RUN_LO[stripes].unpack(mixed), _RUN_HI[stripes].unpack(mixed))
        ),
        "little",
    )
    even = _EVEN_LANES
    # Lane 2j: its products plus data lane 2j+1; lane 2j+1: its products plus data lane 2j.
    to_even = _fold_stripes((products & even) + ((data >> 64) & even))
    to_odd = _fold_stripes(((products >> 64) & even) + (data & even))
    e0, e2, e4, e6 = _EVEN_SLOTS.unpack(to_even.to_bytes(64, "little"))
    o1, o3, o5, o7 = _EVEN_SLOTS.unpack(to_odd.to_bytes(64, "little"))
    return e0, o1, e2, o3, e4, o5, e6, o7


def _hash_long(data: bytes, n: int, keys: _LongKeys) -> int:
    acc = list(_INIT_ACC)
    block_key = keys.block
    scramble = keys.scramble
    off = 0
    for _ in range((n - 1) // _BLOCK_LEN):
        delta = _accumulate(data[off : off + _BLOCK_LEN], block_key, _STRIPES_PER_BLOCK)
        off += _BLOCK_LEN
        for i in range(8):
            a = (acc[i] + delta[i]) & _M64
            acc[i] = ((a ^ (a >> 47) ^ scramble[i]) * _PRIME32_1) & _M64
    # The final partial block and the last (overlapping) stripe, keyed together.
    stripes = (n - 1 - off) // _STRIPE_LEN
    chunk = bytes(data[off : off + stripes * _STRIPE_LEN]) + bytes(data[n - _STRIPE_LEN :])
    delta = _accumulate(chunk, keys.tail[stripes], stripes + 1)
    a0, a1, a2, a3, a4, a5, a6, a7 = ((a + d) & _M64 for a, d in zip(acc, delta, strict=True))

    m = keys.merge
    result = n * _PRIME64_1
    for lo, hi in (
        (a0 ^ m[0], a1 ^ m[1]),
        (a2 ^ m[2], a3 ^ m[3]),
        (a4 ^ m[4], a5 ^ m[5]),
        (a6 ^ m[6], a7 ^ m[7]),
    ):
        product = lo * hi
        result += (product & _M64) ^ (product >> 64)
    return _xxh3_avalanche(result & _M64)


def xxh3_64_pure(data: bytes, seed: int = 0) -> int:
    """XXH3-64 of ``data`` with ``seed`` (reduced mod 2**64, as the ``xxhash`` package does),
    as an unsigned 64-bit int; bit-identical to ``xxhash.xxh3_64_intdigest``."""
    n = len(data)
    seed &= _M64
    if n <= 16:
        return _hash_short(data, n, seed)
    if n <= 240:
        keys = _mid_keys(seed) if seed else _DEFAULT_MID_KEYS
        if n <= 128:
            return _hash_17to128(data, n, keys)
        return _hash_129to240(data, n, keys)
    return _hash_long(data, n, _long_keys(seed) if seed else _DEFAULT_LONG_KEYS)


try:
    # The package ships its own type stubs; without it, mypy would not find the module.
    from xxhash import (  # type: ignore[import-not-found, unused-ignore]
        xxh3_64_intdigest as _xxh3_64_intdigest,
    )
except ImportError:  # pragma: no cover - depends on the environment
    XXHASH_PACKAGE: bool = False

    def xxh3_64_digest(data: bytes) -> int:
        """XXH3-64 of ``data`` with seed 0 (pure Python: the ``xxhash`` package is missing)."""
        return xxh3_64_pure(data)

else:
    XXHASH_PACKAGE = True

    def xxh3_64_digest(data: bytes) -> int:
        """XXH3-64 of ``data`` with seed 0 (through the ``xxhash`` package)."""
        digest: int = _xxh3_64_intdigest(data)
        return digest

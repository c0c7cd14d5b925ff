"""MinHashDeduplicator: MinHash LSH near-duplicate detection (SPEC 4), pure-Python backend.

Same rules, numbers and companion files as the native module (docs/minhash.md):

* tokens are the maximal runs of word characters (Unicode general category L*, M*, N*) of the
  text, each lowercased by its simple lowercase mapping; both come from the generated tables in
  ``_minhash_unicode.py``, never from this interpreter's ``unicodedata``, so every Python version
  splits alike. Bytes are decoded with ``errors="replace"``; U+FFFD is a separator;
* a shingle is ``ngram`` tokens joined by one space (``shingle="word"``) or ``ngram`` code points
  of the tokens joined by one space (``"char"``); a shorter non-empty text is one shingle;
* signature value i is ``min(((a_i * xxh3_64(shingle) + b_i) mod 2**64) >> 32)``, with
  ``(a_i | 1, b_i)`` drawn from splitmix64 seeded with ``seed``; ``0xFFFFFFFF`` when there is no
  shingle;
* the index keeps the low ``value_bits`` of every value; a document is a candidate when all
  values of some band agree, a duplicate when at least ``min_matches`` values agree.

numpy, when importable, computes the signature minima (exact uint64 arithmetic, same integers).
"""

from __future__ import annotations

import math
import re
import struct
import sys
import threading
import weakref
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, TypeAlias

from ..errors import ConfigError, CorruptCheckpointError, LuminaMoonError
from ._arrow import is_arrow_object, iter_arrow_values
from ._minhash_unicode import LOWER_PAIRS, WORD_RANGES
from ._nocopy import NoCopy
from .epoch_log import EpochLog
from .suggest import did_you_mean, reject_unknown_options
from .tracker import StateTracker
from .xxh3 import xxh3_64_digest

try:  # optional: a faster path to the very same integers
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the environment
    _np = None  # type: ignore[assignment]

__all__ = [
    "COMPANION_SUFFIX",
    "DEFAULT_SEED",
    "MAX_NGRAM",
    "MAX_NUM_PERM",
    "MinHashDeduplicator",
    "decode_record",
    "encode_record",
    "lsh_min_matches",
    "lsh_value_bits",
    "normalize",
    "optimal_lsh_shape",
    "pack_row",
    "shingles",
    "splitmix64",
]

TextLike: TypeAlias = str | bytes | bytearray | memoryview

MAX_NUM_PERM = 512
MAX_NGRAM = 256
DEFAULT_SEED = 1
COMPANION_KIND = "minhash"  # in the tracker's participant registry
COMPANION_SUFFIX = "." + COMPANION_KIND
FALSE_POSITIVE_WEIGHT = 0.3
FALSE_NEGATIVE_WEIGHT = 0.7
SHAPE_INTEGRATION_STEPS = 64
RECORD_MAX_ROWS = 1 << 20
MAX_DOCUMENTS = 0xFFFF_FFFF

_M64 = (1 << 64) - 1
_EMPTY = 0xFFFF_FFFF
_U64_MAX = _M64
_U32_MAX = 0xFFFF_FFFF
_OPTIONS = (
    "tracker",
    "num_perm",
    "threshold",
    "bands",
    "rows",
    "shingle",
    "ngram",
    "seed",
    "store_signatures",
    "threads",
)
_SHINGLES = ("word", "char")
_RECORD_MAGIC = b"LMMH"
_RECORD_VERSION = 1
# magic, version, shingle, value_bits, num_perm, ngram, reserved, seed, first_doc, count, reserved
_RECORD_HEADER = struct.Struct("<4sHBBHHIQQII")
RECORD_HEADER_SIZE = _RECORD_HEADER.size  # 40

# ---------------------------------------------------------------------------------------------
# Tokenisation and shingles
# ---------------------------------------------------------------------------------------------


def _char_class() -> str:
    parts = []
    for i in range(0, len(WORD_RANGES), 2):
        start, end = WORD_RANGES[i], WORD_RANGES[i + 1] - 1
        parts.append(re.escape(chr(start)) if start == end else f"{chr(start)}-{chr(end)}")
    return "".join(parts)


_WORD_RE = re.compile("[" + _char_class() + "]+")
_LOWER = {LOWER_PAIRS[i]: LOWER_PAIRS[i + 1] for i in range(0, len(LOWER_PAIRS), 2)}


def _as_text(value: object, where: str) -> str:
    """A ``str`` as is (lone surrogates rejected, as the native module does); bytes-like
    objects decoded as UTF-8 with U+FFFD for invalid bytes (a separator)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"{where}: str cannot be encoded as UTF-8 ({exc.reason} at position "
                f"{exc.start}); lone surrogates are not text"
            ) from None
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    try:
        view = memoryview(value)  # type: ignore[arg-type]  # any buffer, like the native module
    except TypeError:
        raise TypeError(
            f"{where}: expected str or bytes-like, got {type(value).__name__}"
        ) from None
    with view:
        if not view.c_contiguous:
            raise TypeError(f"{where}: expected a contiguous bytes-like object")
        return view.tobytes().decode("utf-8", "replace")


def _batch_texts(texts: object, method: str) -> list[str]:
    if isinstance(texts, (list, tuple)):
        return [_as_text(t, f"texts[{i}]") for i, t in enumerate(texts)]
    if is_arrow_object(texts):
        return [raw.decode("utf-8", "replace") for raw in iter_arrow_values(texts)]
    raise TypeError(
        f"{method}: texts must be a list or tuple of str/bytes-like, or an Arrow array or "
        f"stream (__arrow_c_array__ / __arrow_c_stream__), got {type(texts).__name__}"
    )


def normalize(text: str) -> str:
    """The tokens of ``text``, lowercased, joined by one space."""
    return " ".join(_WORD_RE.findall(text.translate(_LOWER)))


def shingles(text: str, kind: str = "word", ngram: int = 5) -> list[str]:
    """Every shingle of ``text`` in document order (repeats kept)."""
    if kind == "word":
        tokens = _WORD_RE.findall(text.translate(_LOWER))
        if not tokens:
            return []
        if len(tokens) < ngram:
            return [" ".join(tokens)]
        return [" ".join(tokens[i : i + ngram]) for i in range(len(tokens) - ngram + 1)]
    norm = normalize(text)
    if not norm:
        return []
    if len(norm) < ngram:
        return [norm]
    return [norm[i : i + ngram] for i in range(len(norm) - ngram + 1)]


def _shingle_hashes(text: str, kind: str, ngram: int) -> list[int]:
    return [xxh3_64_digest(s.encode("utf-8")) for s in shingles(text, kind, ngram)]


# ---------------------------------------------------------------------------------------------
# The permutation family and signatures
# ---------------------------------------------------------------------------------------------


def splitmix64(state: int) -> tuple[int, int]:
    """``(new_state, output)`` of one splitmix64 step."""
    state = (state + 0x9E3779B97F4A7C15) & _M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return state, z ^ (z >> 31)


@lru_cache(maxsize=64)
def _permutations(num_perm: int, seed: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    a: list[int] = []
    b: list[int] = []
    state = seed
    for _ in range(num_perm):
        state, x = splitmix64(state)
        a.append(x | 1)
        state, y = splitmix64(state)
        b.append(y)
    return tuple(a), tuple(b)


def _signature_of_hashes(hashes: list[int], num_perm: int, seed: int) -> list[int]:
    if not hashes:
        return [_EMPTY] * num_perm
    a, b = _permutations(num_perm, seed)
    unique = list(set(hashes))  # repeats cannot change a minimum
    if _np is not None and len(unique) * num_perm >= 256:
        va = _np.array(a, dtype=_np.uint64)
        vb = _np.array(b, dtype=_np.uint64)
        x = _np.array(unique, dtype=_np.uint64)
        best = _np.full(num_perm, _M64, dtype=_np.uint64)
        step = max(1, 262_144 // num_perm)
        for i in range(0, len(x), step):
            # uint64 arrays wrap modulo 2**64: exactly the native arithmetic.
            values = _np.multiply.outer(x[i : i + step], va) + vb
            best = _np.minimum(best, values.min(axis=0))
        return [int(v) for v in (best >> _np.uint64(32))]
    return [min((ai * x + bi) & _M64 for x in unique) >> 32 for ai, bi in zip(a, b, strict=True)]


# ---------------------------------------------------------------------------------------------
# LSH shape (same IEEE double operations as src/minhash/lsh_shape.cc)
# ---------------------------------------------------------------------------------------------


def _power(x: float, k: int) -> float:
    result = 1.0
    while k:
        if k & 1:
            result *= x
        x *= x
        k >>= 1
    return result


def _simpson_fp(rows: int, bands: int, lo: float, hi: float) -> float:
    n = SHAPE_INTEGRATION_STEPS
    h = (hi - lo) / n

    def f(s: float) -> float:
        return 1.0 - _power(1.0 - _power(s, rows), bands)

    total = f(lo) + f(hi)
    for i in range(1, n):
        total += (4.0 if i % 2 == 1 else 2.0) * f(lo + i * h)
    return total * h / 3.0


def _simpson_fn(rows: int, bands: int, lo: float, hi: float) -> float:
    n = SHAPE_INTEGRATION_STEPS
    h = (hi - lo) / n

    def f(s: float) -> float:
        return _power(1.0 - _power(s, rows), bands)

    total = f(lo) + f(hi)
    for i in range(1, n):
        total += (4.0 if i % 2 == 1 else 2.0) * f(lo + i * h)
    return total * h / 3.0


@lru_cache(maxsize=256)
def optimal_lsh_shape(threshold: float, num_perm: int) -> tuple[int, int]:
    """``(bands, rows)`` minimising the weighted false-positive/false-negative integrals."""
    best = (1, num_perm)
    best_error = 0.0
    have = False
    for bands in range(1, num_perm + 1):
        for rows in range(1, num_perm // bands + 1):
            fp = _simpson_fp(rows, bands, 0.0, threshold)
            fn = _simpson_fn(rows, bands, threshold, 1.0)
            error = FALSE_POSITIVE_WEIGHT * fp + FALSE_NEGATIVE_WEIGHT * fn
            if not have or error < best_error:
                best, best_error, have = (bands, rows), error, True
    return best


def lsh_value_bits(rows: int, store_signatures: bool) -> int:
    """Bits of each value the index keeps: 32, or the smallest of 4/8/16 with bits*rows >= 32."""
    if store_signatures:
        return 32
    for bits in (4, 8, 16):
        if bits * rows >= 32:
            return bits
    return 32


def lsh_min_matches(threshold: float, num_perm: int, bits: int) -> int:
    """Equal values needed to verify a candidate: ceil(num_perm * (t * (1 - C) + C))."""
    chance = 0.0 if bits >= 32 else 1.0 / float(1 << bits)
    needed = math.ceil(float(num_perm) * (threshold * (1.0 - chance) + chance))
    return max(0, min(num_perm, needed))


# ---------------------------------------------------------------------------------------------
# Rows and companion records
# ---------------------------------------------------------------------------------------------


def row_bytes(num_perm: int, bits: int) -> int:
    return (num_perm * bits + 7) // 8


def pack_row(values: Sequence[int], bits: int) -> bytes:
    """The stored form of a row of ``bits``-bit values (layout in docs/minhash.md)."""
    if bits == 4:
        out = bytearray((len(values) + 1) // 2)
        for i, v in enumerate(values):
            out[i >> 1] |= (v & 0xF) << (4 * (i & 1))
        return bytes(out)
    if bits == 8:
        return bytes(v & 0xFF for v in values)
    if bits == 16:
        return struct.pack(f"<{len(values)}H", *(v & 0xFFFF for v in values))
    return struct.pack(f"<{len(values)}I", *values)


def _unpack_row(raw: bytes, num_perm: int, bits: int) -> tuple[int, ...]:
    if bits == 4:
        return tuple((raw[i >> 1] >> (4 * (i & 1))) & 0xF for i in range(num_perm))
    if bits == 8:
        return tuple(raw)
    if bits == 16:
        return struct.unpack(f"<{num_perm}H", raw)
    return struct.unpack(f"<{num_perm}I", raw)


def _corrupt(path: str, what: str) -> CorruptCheckpointError:
    return CorruptCheckpointError(
        f"corrupt MinHash index record in {path}: {what}; committed state is damaged, restore it "
        "from a backup"
    )


def encode_record(
    *,
    shingle: str,
    value_bits: int,
    num_perm: int,
    ngram: int,
    seed: int,
    first_doc: int,
    rows: Sequence[bytes],
) -> bytes:
    """One companion record: the 40-byte header, then the packed rows."""
    header = _RECORD_HEADER.pack(
        _RECORD_MAGIC,
        _RECORD_VERSION,
        _SHINGLES.index(shingle),
        value_bits,
        num_perm,
        ngram,
        0,
        seed,
        first_doc,
        len(rows),
        0,
    )
    return header + b"".join(rows)


def decode_record(payload: bytes, path: str) -> tuple[dict[str, Any], list[bytes]]:
    """``(header fields, rows)``; ``CorruptCheckpointError`` unless well formed."""
    if len(payload) < RECORD_HEADER_SIZE:
        raise _corrupt(
            path,
            f"record of {len(payload)} bytes is shorter than its {RECORD_HEADER_SIZE}-byte header",
        )
    (magic, version, shingle, bits, num_perm, ngram, reserved1, seed, first, count, reserved2) = (
        _RECORD_HEADER.unpack_from(payload)
    )
    if magic != _RECORD_MAGIC:
        raise _corrupt(path, "bad magic")
    if version != _RECORD_VERSION:
        raise _corrupt(path, f"unsupported version {version}")
    if shingle > 1:
        raise _corrupt(path, f"unknown shingle kind {shingle}")
    if bits not in (4, 8, 16, 32):
        raise _corrupt(path, f"value_bits {bits}")
    if not 1 <= num_perm <= MAX_NUM_PERM:
        raise _corrupt(path, f"num_perm {num_perm}")
    if not 1 <= ngram <= MAX_NGRAM:
        raise _corrupt(path, f"ngram {ngram}")
    if reserved1 or reserved2:
        raise _corrupt(path, "reserved field not zero")
    size = row_bytes(num_perm, bits)
    body = len(payload) - RECORD_HEADER_SIZE
    if body % size or body // size != count:
        raise _corrupt(path, f"{body} row bytes for {count} rows of {size} bytes")
    rows = [
        payload[RECORD_HEADER_SIZE + i * size : RECORD_HEADER_SIZE + (i + 1) * size]
        for i in range(count)
    ]
    if bits == 4 and num_perm % 2 and any(row[-1] & 0xF0 for row in rows):
        raise _corrupt(path, "row padding bits not zero")
    fields = {
        "shingle": _SHINGLES[shingle],
        "value_bits": bits,
        "num_perm": num_perm,
        "ngram": ngram,
        "seed": seed,
        "first_doc": first,
        "count": count,
    }
    return fields, rows


# ---------------------------------------------------------------------------------------------
# The index
# ---------------------------------------------------------------------------------------------


class _Index:
    """Rows of ``bits``-bit values plus one dict per band; committed rows first."""

    def __init__(self, num_perm: int, bands: int, rows: int, bits: int, min_matches: int) -> None:
        self.num_perm = num_perm
        self.bands = bands
        self.rows = rows
        self.bits = bits
        self.mask = (1 << bits) - 1
        self.min_matches = min_matches
        self.values: list[tuple[int, ...]] = []
        self.committed = 0
        self.tables: list[dict[tuple[int, ...], list[int]]] = [{} for _ in range(bands)]

    def row_of(self, signature: Sequence[int]) -> tuple[int, ...]:
        mask = self.mask
        return tuple(v & mask for v in signature)

    def _keys(self, row: tuple[int, ...]) -> list[tuple[int, ...]]:
        r = self.rows
        return [row[j * r : (j + 1) * r] for j in range(self.bands)]

    def _verified(self, doc: int, row: tuple[int, ...]) -> bool:
        other = self.values[doc]
        equal = sum(1 for x, y in zip(other, row, strict=True) if x == y)
        return equal >= self.min_matches

    def candidates(self, row: tuple[int, ...], verify: bool) -> list[int]:
        found: set[int] = set()
        for table, key in zip(self.tables, self._keys(row), strict=True):
            found.update(table.get(key, ()))
        ids = sorted(found)
        if verify:
            ids = [doc for doc in ids if self._verified(doc, row)]
        return ids

    def has_duplicate(self, row: tuple[int, ...]) -> bool:
        for table, key in zip(self.tables, self._keys(row), strict=True):
            for doc in table.get(key, ()):
                if self._verified(doc, row):
                    return True
        return False

    def add(self, row: tuple[int, ...]) -> int:
        doc = len(self.values)
        if doc >= MAX_DOCUMENTS:
            raise LuminaMoonError(
                f"MinHashDeduplicator: the index holds {doc} documents, the most one index can "
                "hold (document ids are u32)"
            )
        self.values.append(row)
        for table, key in zip(self.tables, self._keys(row), strict=True):
            table.setdefault(key, []).append(doc)
        return doc

    @property
    def staged(self) -> int:
        return len(self.values) - self.committed

    def promote(self, count: int) -> None:
        self.committed += min(count, self.staged)

    def drop_staged(self) -> None:
        for doc in range(len(self.values) - 1, self.committed - 1, -1):
            for table, key in zip(self.tables, self._keys(self.values[doc]), strict=True):
                ids = table[key]
                ids.pop()  # ids grow in insertion order: the staged ones are last
                if not ids:
                    del table[key]
        del self.values[self.committed :]

    def memory_bytes(self) -> int:
        total = sys.getsizeof(self.values) + sum(sys.getsizeof(v) for v in self.values)
        for table in self.tables:
            total += sys.getsizeof(table)
            total += sum(sys.getsizeof(k) + sys.getsizeof(v) for k, v in table.items())
        return total


# Trackers with a MinHashDeduplicator attached (one index per checkpoint).
_ATTACHED: weakref.WeakKeyDictionary[StateTracker, weakref.ref[MinHashDeduplicator]] = (
    weakref.WeakKeyDictionary()
)


def _derived_note(bands: int | None, rows: int | None) -> str:
    """Which of bands/rows was derived (num_perm // the other), worded like the native module."""
    if bands is None:
        return " (bands derived as num_perm // rows)"
    if rows is None:
        return " (rows derived as num_perm // bands)"
    return ""


def _int_in(value: object, what: str, lo: int, hi: int) -> int:
    if not (isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi):
        raise ValueError(
            f"MinHashDeduplicator: {what} must be an int in [{lo}, {hi}], got {value!r}"
        )
    return value


class MinHashDeduplicator(NoCopy):
    """Near-duplicate dedup with MinHash LSH; staged until commit, persisted with a tracker.

    Thread-safe: every method that touches the index takes the deduplicator's lock (an attached
    commit takes the tracker's lock first); a commit writes and promotes exactly the documents
    staged when its prepare step ran."""

    def __init__(
        self,
        tracker: StateTracker | None = None,
        *,
        num_perm: int = 64,
        threshold: float = 0.8,
        bands: int | None = None,
        rows: int | None = None,
        shingle: str = "word",
        ngram: int = 5,
        seed: int = DEFAULT_SEED,
        store_signatures: bool = False,
        threads: int = 0,
        **options: Any,
    ) -> None:
        self._tracker: StateTracker | None = None
        self._log: EpochLog | None = None
        self._lock = threading.RLock()
        reject_unknown_options("MinHashDeduplicator", options, _OPTIONS)
        self._num_perm = _int_in(num_perm, "num_perm", 1, MAX_NUM_PERM)
        if not (
            isinstance(threshold, (int, float))
            and not isinstance(threshold, bool)
            and 0.0 < threshold <= 1.0
        ):
            raise ValueError(
                f"MinHashDeduplicator: threshold must be a number in (0, 1], got {threshold!r}"
            )
        self._threshold = float(threshold)
        given_bands = None if bands is None else _int_in(bands, "bands", 1, MAX_NUM_PERM)
        given_rows = None if rows is None else _int_in(rows, "rows", 1, MAX_NUM_PERM)
        if not isinstance(shingle, str):
            raise TypeError(
                f"MinHashDeduplicator: shingle must be 'word' or 'char', got "
                f"{type(shingle).__name__}"
            )
        if shingle not in _SHINGLES:
            best = did_you_mean(shingle, _SHINGLES)
            hint = f"did you mean '{best}'?" if best else "valid shingles: word, char"
            raise ConfigError(f"MinHashDeduplicator: unknown shingle '{shingle}'; {hint}")
        self._shingle = shingle
        self._ngram = _int_in(ngram, "ngram", 1, MAX_NGRAM)
        self._seed = _int_in(seed, "seed", 0, _U64_MAX)
        if not isinstance(store_signatures, bool):
            raise TypeError(
                "MinHashDeduplicator: store_signatures must be a bool, got "
                f"{type(store_signatures).__name__}"
            )
        self._store = store_signatures
        self._threads = _int_in(threads, "threads", 0, _U32_MAX)  # API parity: one thread here
        if tracker is not None and not isinstance(tracker, StateTracker):
            raise TypeError(
                "MinHashDeduplicator: tracker must be a StateTracker or None, got "
                f"{type(tracker).__name__}"
            )

        p = self._num_perm
        if given_bands is None and given_rows is None:
            self._bands, self._rows = optimal_lsh_shape(self._threshold, p)
        else:
            b = given_bands if given_bands is not None else p // (given_rows or 1)
            r = given_rows if given_rows is not None else p // (given_bands or 1)
            if b == 0 or r == 0 or b * r > p:
                raise ValueError(
                    f"MinHashDeduplicator: bands * rows must be at most num_perm ({p}), got "
                    f"bands={b}, rows={r}{_derived_note(given_bands, given_rows)}"
                )
            self._bands, self._rows = b, r
        self._bits = lsh_value_bits(self._rows, store_signatures)
        self._min_matches = lsh_min_matches(self._threshold, p, self._bits)
        self._index = _Index(p, self._bands, self._rows, self._bits, self._min_matches)
        self._prepared = 0
        self._commit_limit: int | None = None  # limit_next_commit; None = every staged row
        self._orphaned = False
        self._companion = ""

        if tracker is not None:
            if tracker._read_only:
                raise LuminaMoonError(
                    f"MinHashDeduplicator: checkpoint {tracker.path} was opened read_only=True; "
                    "the index can only attach to a writer"
                )
            tracker._check_open()
            existing = _ATTACHED.get(tracker)
            if existing is not None and existing() is not None:
                raise LuminaMoonError(
                    f"checkpoint {tracker.path} already has a MinHashDeduplicator attached; one "
                    "tracker persists one index (use that deduplicator, or detach it by deleting "
                    "it first)"
                )
            self._companion = tracker.path + COMPANION_SUFFIX
            self._load(tracker)
            tracker._attach_participant(self)
            _ATTACHED[tracker] = weakref.ref(self)
            self._tracker = tracker

    # -- persistence --------------------------------------------------------------------------

    def _describe(self, shingle: str, num_perm: int, ngram: int, seed: int, bits: int) -> str:
        return (
            f"num_perm={num_perm}, shingle='{shingle}', ngram={ngram}, seed={seed}, "
            f"value_bits={bits}"
        )

    def _load(self, tracker: StateTracker) -> None:
        path = self._companion
        self._log = EpochLog(
            path,
            tracker.epoch,
            read_only=False,
            durable=tracker._durable,
            history=tracker._companion_history(COMPANION_KIND),
        )
        mine = (self._shingle, self._num_perm, self._ngram, self._seed, self._bits)
        index = self._index
        for payload in self._log.take_committed_records():
            fields, rows = decode_record(payload, path)
            theirs = (
                fields["shingle"],
                fields["num_perm"],
                fields["ngram"],
                fields["seed"],
                fields["value_bits"],
            )
            if theirs != mine:
                raise ConfigError(
                    f"MinHashDeduplicator: {path} holds an index built with "
                    f"{self._describe(*theirs)}; this deduplicator has {self._describe(*mine)} "
                    "(value_bits follows rows and store_signatures); open it with the settings it "
                    "was built with, or delete the file to start a new index"
                )
            if fields["first_doc"] != len(index.values):
                raise CorruptCheckpointError(
                    f"corrupt MinHash index {path}: a record starts at document "
                    f"{fields['first_doc']} but {len(index.values)} documents precede it; restore "
                    "it from a backup"
                )
            for raw in rows:
                index.add(_unpack_row(raw, self._num_perm, self._bits))
            index.committed = len(index.values)

    def _records(self, count: int) -> list[bytes]:
        """Records of the first ``count`` staged rows."""
        index = self._index
        out = []
        first = index.committed
        staged = index.values[first : first + count]
        for start in range(0, len(staged), RECORD_MAX_ROWS):
            chunk = staged[start : start + RECORD_MAX_ROWS]
            out.append(
                encode_record(
                    shingle=self._shingle,
                    value_bits=self._bits,
                    num_perm=self._num_perm,
                    ngram=self._ngram,
                    seed=self._seed,
                    first_doc=first + start,
                    rows=[pack_row(row, self._bits) for row in chunk],
                )
            )
        return out

    # -- the tracker's side of the commit protocol (CommitParticipant) ------------------------

    def _has_staged(self) -> bool:
        with self._lock:
            return self._index.staged > 0

    def _companion_kind(self) -> str:
        return COMPANION_KIND

    def _prepare_commit(self, epoch: int, durable: bool) -> None:
        with self._lock:
            if self._log is None:
                return
            # Exactly the rows staged now: filter_batch on other threads waits for the lock, and
            # anything it stages after this commit stays staged for the next one.
            staged = self._index.staged
            if self._commit_limit is not None:
                staged = min(staged, self._commit_limit)
            self._log.prepare_commit(epoch, self._records(staged))
            self._prepared = staged

    def _finish_commit(self) -> None:
        with self._lock:
            if self._log is not None:
                self._log.finish_commit()
            self._index.promote(self._prepared)
            self._prepared = 0
            self._commit_limit = None

    def limit_next_commit(self, count: int) -> None:
        """The next commit of the attached tracker writes and promotes only the first ``count``
        staged rows; the rest stay staged. Cleared by that commit and by a rollback."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise TypeError(f"limit_next_commit: count must be an int >= 0, got {count!r}")
        with self._lock:
            self._commit_limit = count

    def _drop_staged(self) -> None:
        with self._lock:
            self._index.drop_staged()
            self._prepared = 0
            self._commit_limit = None

    def _tracker_closed(self) -> None:
        with self._lock:
            self._orphaned = True
            if self._log is not None:
                self._log.close()
                self._log = None

    def __del__(self) -> None:
        log = getattr(self, "_log", None)
        if log is not None:
            log.close()

    # -- signatures ---------------------------------------------------------------------------

    def _signature(self, text: str) -> list[int]:
        hashes = _shingle_hashes(text, self._shingle, self._ngram)
        return _signature_of_hashes(hashes, self._num_perm, self._seed)

    def signature(self, text: TextLike) -> list[int]:
        """The ``num_perm`` MinHash values (u32) of ``text``."""
        return self._signature(_as_text(text, "text"))

    def signatures(self, texts: Sequence[TextLike] | Any) -> Any:
        """Signatures of a batch as a ``(len(texts), num_perm)`` uint32 NumPy array."""
        if _np is None:
            raise ImportError("MinHashDeduplicator.signatures needs numpy: pip install numpy")
        sigs = [self._signature(t) for t in _batch_texts(texts, "signatures")]
        return _np.array(sigs, dtype=_np.uint32).reshape(len(sigs), self._num_perm)

    def similarity(self, a: TextLike, b: TextLike) -> float:
        """Estimated Jaccard similarity: the fraction of equal signature values."""
        sa = self._signature(_as_text(a, "a"))
        sb = self._signature(_as_text(b, "b"))
        return sum(1 for x, y in zip(sa, sb, strict=True) if x == y) / self._num_perm

    def jaccard(self, a: TextLike, b: TextLike) -> float:
        """Exact Jaccard similarity of the two shingle sets (1.0 when both are empty)."""
        x = set(_shingle_hashes(_as_text(a, "a"), self._shingle, self._ngram))
        y = set(_shingle_hashes(_as_text(b, "b"), self._shingle, self._ngram))
        if not x and not y:
            return 1.0
        return len(x & y) / len(x | y)

    # -- dedup --------------------------------------------------------------------------------

    def is_unique(self, text: TextLike) -> bool:
        """True (and staged) when no indexed document is a verified near-duplicate of text."""
        row = self._index.row_of(self._signature(_as_text(text, "text")))
        with self._lock:
            if self._index.has_duplicate(row):
                return False
            self._index.add(row)
            return True

    def filter_batch(self, texts: Sequence[TextLike] | Any) -> list[bool]:
        """Keep mask; the first of each group of near-duplicates wins; kept ones are staged.

        Every text is converted and hashed before anything is staged, so an error (a null, an
        element of the wrong type) leaves the deduplicator as it was.
        """
        rows = [self._index.row_of(self._signature(t)) for t in _batch_texts(texts, "filter_batch")]
        keep = []
        with self._lock:
            for row in rows:
                fresh = not self._index.has_duplicate(row)
                if fresh:
                    self._index.add(row)
                keep.append(fresh)
        return keep

    def query(self, text: TextLike, *, verify: bool = True) -> list[int]:
        """Ids of indexed documents that are verified near-duplicates of ``text`` (or, with
        ``verify=False``, every LSH candidate), ascending; stages nothing."""
        row = self._index.row_of(self._signature(_as_text(text, "text")))
        with self._lock:
            return self._index.candidates(row, verify)

    def cluster(self, texts: Sequence[TextLike] | Any) -> list[int]:
        """Offline: every document's cluster id, the index of its cluster's first document.

        Clusters are the connected components of the verified candidate pairs (LSH on full
        signatures, verified with full values). Keep ``texts[i]`` where ``result[i] == i``.
        """
        signatures = [self._signature(t) for t in _batch_texts(texts, "cluster")]
        p = self._num_perm
        index = _Index(p, self._bands, self._rows, 32, lsh_min_matches(self._threshold, p, 32))
        parent = list(range(len(signatures)))

        def root(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for i, sig in enumerate(signatures):
            row = tuple(sig)
            for j in index.candidates(row, True):
                ra, rb = root(j), root(i)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
            index.add(row)
        return [root(i) for i in range(len(signatures))]

    # -- two stages ---------------------------------------------------------------------------

    def _check_orphaned(self, what: str) -> None:
        if self._orphaned:
            raise LuminaMoonError(
                f"MinHashDeduplicator.{what}: the StateTracker it was attached to is closed, so "
                "nothing can be committed durably any more; open a new tracker and deduplicator"
            )

    def commit(self) -> None:
        """Attached: ``tracker.commit()`` (durable). Detached: staged -> committed in RAM."""
        self._check_orphaned("commit")
        if self._tracker is not None:
            self._tracker.commit()
        else:
            with self._lock:
                staged = self._index.staged
                if self._commit_limit is not None:
                    staged = min(staged, self._commit_limit)
                self._commit_limit = None
                self._index.promote(staged)

    def rollback(self) -> None:
        """Attached: ``tracker.rollback()``. Detached: drop the staged documents."""
        self._check_orphaned("rollback")
        if self._tracker is not None:
            self._tracker.rollback()
        else:
            with self._lock:
                self._index.drop_staged()

    # -- properties ---------------------------------------------------------------------------

    @property
    def tracker(self) -> StateTracker | None:
        """The attached tracker; None when detached or once that tracker is closed."""
        if self._tracker is not None and (self._orphaned or self._tracker.closed):
            return None
        return self._tracker

    @property
    def staged_count(self) -> int:
        return self._index.staged

    @property
    def committed_count(self) -> int:
        return self._index.committed

    def __len__(self) -> int:
        return len(self._index.values)

    @property
    def num_perm(self) -> int:
        return self._num_perm

    @property
    def threshold(self) -> float:
        return self._threshold

    @property
    def bands(self) -> int:
        return self._bands

    @property
    def rows(self) -> int:
        return self._rows

    @property
    def shingle(self) -> str:
        return self._shingle

    @property
    def ngram(self) -> int:
        return self._ngram

    @property
    def seed(self) -> int:
        return self._seed

    @property
    def store_signatures(self) -> bool:
        return self._store

    @property
    def value_bits(self) -> int:
        return self._bits

    @property
    def min_matches(self) -> int:
        return self._min_matches

    def memory_bytes(self) -> int:
        """Bytes held by the index (``sys.getsizeof`` of its containers; not comparable)."""
        return self._index.memory_bytes()

    def __repr__(self) -> str:
        attached = ", attached" if self.tracker is not None else ""
        return (
            f"MinHashDeduplicator(num_perm={self._num_perm}, bands={self._bands}, "
            f"rows={self._rows}, committed={self._index.committed}, "
            f"staged={self._index.staged}{attached})"
        )

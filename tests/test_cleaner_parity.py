"""TextCleaner parity: native == fallback == the literal rewrites of docs/cleaner.md, with the
same counters, for every option combination and on every ISA this machine supports.

Inputs are text over an alphabet dense in whatever a step touches (whitespace, controls, CR,
the special sequences of the kernels, combining marks, non-ASCII) and random byte strings rich in
invalid UTF-8. The native module is run directly in this process (live ISA) and, for ISA
coverage, in one child process per ``LUMINAMOON_SIMD`` value on a fixed generated corpus.
"""

from __future__ import annotations

import importlib
import itertools
import pickle
import random
import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

N = pytest.importorskip("luminamoon.data._native", reason="luminamoon.data._native is not built")
F = importlib.import_module("luminamoon.data.fallbacks")
FC = importlib.import_module("luminamoon.data.fallbacks.cleaner")

FLAGS = (
    "repair_utf8",
    "normalize_newlines",
    "remove_controls",
    "strip_trailing_spaces",
    "limit_newlines",
    "strip",
    "nfc",
)
WHITESPACE = ("preserve_indent", "collapse", "keep")
Options = dict[str, Any]
ALL_COMBINATIONS: list[Options] = [
    {**dict(zip(FLAGS, bits, strict=True)), "whitespace": mode}
    for mode in WHITESPACE
    for bits in itertools.product((True, False), repeat=7)
]

# Everything a step treats specially, plus ordinary and combining characters around it.
ALPHABET = [
    "a", "Zz", "word", ".", " ", "  ", "\t", "\n", "\n\n\n", "\r", "\r\n", "\x00", "\x01", "\x0b",
    "\x0c", "\x1f", "\x7f", "\x80", "\x85", "\x9f", "\xa0", "\u1680", "\u2000", "\u2001",
    "\u2005", "\u200a", "\u200b", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff",
    "\ufffd", "\xe9", "e\u0301", "\u0301", "\u0316", "\u0344", "\u212b", "\u0958", "\u4e2d",
    "\uac00", "\u1100\u1161\u11a8", "\U0001f600", "\u00c5\u0328",
]  # fmt: skip
INVALID = [
    b"\xff", b"\xfe", b"\x80", b"\xbf", b"\xc0", b"\xc1\xbf", b"\xc2", b"\xe0\x80", b"\xe0\xa0",
    b"\xe2\x82", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf0", b"\xf0\x8f\xbf\xbf", b"\xf0\x9f\x98",
    b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80",
]  # fmt: skip


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


pieces = st.one_of(
    st.sampled_from(ALPHABET).map(_encode),
    st.sampled_from(INVALID),
    st.text(max_size=3).map(_encode),
    st.binary(max_size=4),
)
documents = st.one_of(
    st.lists(pieces, max_size=60).map(b"".join),
    st.binary(max_size=120),
    st.lists(st.sampled_from(ALPHABET), max_size=60).map("".join).map(_encode),
)
options = st.fixed_dictionaries(
    {**{flag: st.booleans() for flag in FLAGS}, "whitespace": st.sampled_from(WHITESPACE)}
)


def nfc_comparable(data: bytes) -> bool:
    """Whether NFC must agree across backends: every character assigned in this Python's
    unicodedata (utf8proc is Unicode 15.0; characters new in a later or earlier version may
    normalise differently; see docs/cleaner.md)."""
    return all(unicodedata.category(c) != "Cn" for c in data.decode("utf-8", "replace"))


def comparable(data: bytes, opts: Options) -> Options:
    opts = dict(opts)
    if opts["nfc"] and not nfc_comparable(data):
        opts["nfc"] = False
    if not opts["repair_utf8"]:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            opts["repair_utf8"] = True
    return opts


def run(mod: ModuleType, data: bytes, opts: Options) -> tuple[str, dict[str, int]]:
    cleaner = mod.TextCleaner(**opts)
    return cleaner.clean(data), cleaner.stats()


# -- the documented rewrites, literally (docs/cleaner.md, "The steps, in order") -------------

H = r"[\t \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]"
H_EXOTIC = r"[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]"


def reference(data: bytes, opts: Options) -> str:
    s = data.decode("utf-8", "replace" if opts["repair_utf8"] else "strict")
    if opts["normalize_newlines"]:
        s = re.sub(r"\r\n?", "\n", s)
    if opts["remove_controls"]:
        s = re.sub(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", "", s)
    if opts["whitespace"] == "collapse":
        s = re.sub(rf"{H}+", " ", s)
    elif opts["whitespace"] == "preserve_indent":
        s = re.sub(H_EXOTIC, " ", s)
    if opts["strip_trailing_spaces"]:
        s = re.sub(rf"{H}+(?=\n|\Z)", "", s)
    if opts["limit_newlines"]:
        s = re.sub(r"\n{3,}", "\n\n", s)
    if opts["strip"] and opts["whitespace"] == "collapse":
        s = s.strip(FC.HORIZONTAL_WHITESPACE + "\n")
    elif opts["strip"]:  # trailing whitespace, and the leading blank lines only
        s = s.rstrip(FC.HORIZONTAL_WHITESPACE + "\n")
        s = re.sub(rf"\A(?:{H}*\n)+", "", s)
    if opts["nfc"]:
        s = unicodedata.normalize("NFC", s)
    return s


# -- properties ------------------------------------------------------------------------------


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, options)
def test_native_equals_fallback_equals_reference(data: bytes, opts: Options) -> None:
    opts = comparable(data, opts)
    native = run(N, data, opts)
    fallback = run(F, data, opts)
    assert native == fallback
    assert native[0] == reference(data, opts)


@settings(max_examples=300, deadline=None)
@given(documents)
def test_repair_alone_is_cpythons_decode(data: bytes) -> None:
    opts = {**dict.fromkeys(FLAGS, False), "repair_utf8": True, "whitespace": "keep"}
    expected = data.decode("utf-8", "replace")
    inserted = expected.count("\ufffd") - data.count(b"\xef\xbf\xbd")
    for mod in (N, F):
        text, stats = run(mod, data, opts)
        assert text == expected
        assert stats["invalid_sequences_replaced"] == inserted
        assert stats["documents_changed"] == (inserted > 0)


@settings(max_examples=300, deadline=None)
@given(documents, options)
def test_idempotent_on_both_backends(data: bytes, opts: Options) -> None:
    opts = comparable(data, opts)
    for mod in (N, F):
        cleaner = mod.TextCleaner(**opts)
        once = cleaner.clean(data)
        assert cleaner.clean(once) == once


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=8).map(_encode) | documents, max_size=20), options)
def test_strict_mode_raises_alike(batch: list[bytes], opts: Options) -> None:
    opts = {**opts, "repair_utf8": False, "nfc": False}
    outcomes = []
    for mod in (N, F):
        cleaner = mod.TextCleaner(**opts)
        try:
            outcomes.append(("ok", cleaner.clean_batch(batch), cleaner.stats()))
        except ValueError as exc:
            outcomes.append(("raise", str(exc), cleaner.stats()))
    assert outcomes[0] == outcomes[1]


# Characters assigned in this Python's Unicode database, dense in combining marks, Hangul jamo,
# composition exclusions and singletons, so NFC reorders and composes a lot.
NFC_BLOCKS = [
    (0x41, 0x7A), (0xC0, 0x24F), (0x300, 0x36F), (0x370, 0x3FF), (0x591, 0x5C7),
    (0x900, 0x97F), (0x9BC, 0x9D7), (0x1100, 0x11FF), (0x1DC0, 0x1DFF), (0x1E00, 0x1FFF),
    (0x2000, 0x200A), (0x20D0, 0x20F0), (0x2126, 0x212B), (0x3099, 0x309A), (0xAC00, 0xAC40),
    (0xF900, 0xF92F), (0x1D15E, 0x1D164), (0x1F600, 0x1F64F),
]  # fmt: skip
NFC_CHARS = [
    chr(c)
    for lo, hi in NFC_BLOCKS
    for c in range(lo, hi + 1)
    if unicodedata.category(chr(c)) != "Cn"
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*NFC_CHARS, " ", "\n", "\t"]), max_size=40).map("".join))
def test_nfc_parity(text: str) -> None:
    opts = {**dict.fromkeys(FLAGS, True), "nfc": True, "whitespace": "preserve_indent"}
    native = run(N, _encode(text), opts)
    assert native == run(F, _encode(text), opts)
    assert native[0] == reference(_encode(text), opts)


def test_every_option_combination_on_a_fixed_corpus() -> None:
    rng = random.Random(5)
    corpus = [_generated_document(rng) for _ in range(16)]
    for opts in ALL_COMBINATIONS:
        for data in corpus:
            o = comparable(data, opts)
            assert run(N, data, o) == run(F, data, o), (data, o)


# -- every ISA -------------------------------------------------------------------------------


def _generated_document(rng: random.Random) -> bytes:
    """Short, long (past the 32 KiB validation window) and plain-heavy documents."""
    kind = rng.randrange(4)
    if kind == 0:
        return rng.randbytes(rng.randrange(300))
    out = bytearray()
    size = rng.choice((20, 200, 5000)) if kind < 3 else 40000
    while len(out) < size:
        r = rng.random()
        if r < 0.6:
            out += _encode(rng.choice(["lorem", "ipsum", "\u4e2d\u6587", "\xe9t\xe9", "x"]))
            out += b" " if rng.random() < 0.8 else b"\n"
        elif r < 0.9:
            out += _encode(rng.choice(ALPHABET))
        else:
            out += rng.choice(INVALID)
    return bytes(out)


CHILD = """
import pickle, sys
from luminamoon.data import _native as N
corpus = pickle.loads(open(sys.argv[1], "rb").read())
results = []
for data, opts in corpus:
    c = N.TextCleaner(**opts)
    results.append((c.clean(data), c.stats()))
by_options = {}
for data, opts in corpus:
    by_options.setdefault(tuple(opts.items()), []).append(data)
batches = []
for key, docs in by_options.items():
    c = N.TextCleaner(**dict(key), threads=3)
    batches.append((key, c.clean_batch(docs), c.stats()))
open(sys.argv[2], "wb").write(pickle.dumps((N.simd_isa(), results, batches)))
"""


@pytest.mark.parametrize("isa", ["scalar", "avx2", "avx512", "neon"])
def test_every_isa_matches_the_fallback(
    isa: str, tmp_path: Path, subprocess_env: dict[str, str]
) -> None:
    if isa not in N.supported_isas():
        pytest.skip(f"{isa} is not supported on this machine")
    rng = random.Random(11)
    corpus: list[tuple[bytes, Options]] = []
    for i in range(768):
        data = _generated_document(rng)
        corpus.append((data, comparable(data, ALL_COMBINATIONS[i % len(ALL_COMBINATIONS)])))
    (tmp_path / "in.pkl").write_bytes(pickle.dumps(corpus))
    env = {**subprocess_env, "LUMINAMOON_SIMD": isa}
    subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "in.pkl"), str(tmp_path / "out.pkl")],
        env=env,
        check=True,
        timeout=600,
    )
    live_isa, results, batches = pickle.loads((tmp_path / "out.pkl").read_bytes())
    assert live_isa == isa
    for (data, opts), got in zip(corpus, results, strict=True):
        assert got == run(F, data, opts), (data, opts)
    for key, outputs, stats in batches:
        batch_options: dict[str, Any] = dict(key)
        docs = [data for data, o in corpus if o == batch_options]
        fallback = F.TextCleaner(**batch_options)
        assert outputs == fallback.clean_batch(docs)
        assert stats == fallback.stats()

"""PIIMasker, native vs fallback: identical spans, masked text and counts (docs/pii.md).

Hypothesis builds texts out of fragments chosen to collide: valid PII of every category, near
misses one character away from valid, separators that join or split candidates, non-ASCII text
and invalid UTF-8. A seeded corpus of a few thousand documents goes through ``mask_batch`` on both
backends, and once more per SIMD instruction set in a child process.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import random
import subprocess
import sys
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

N = pytest.importorskip("luminamoon.data._native", reason="luminamoon.data._native is not built")
F: ModuleType = importlib.import_module("luminamoon.data.fallbacks")

OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"mask_private_ips": True},
    {"email": False, "credit_card": False},
    {"ip_address": False, "api_key": False, "mask_private_ips": True},
    {"tags": {"EMAIL": "", "API_KEY": "🔑", "IP_ADDRESS": "<ip>"}},
]

FRAGMENTS = [
    # e-mails and near misses
    "john.doe@example.com",
    "a@b.co",
    "x@y",
    "a..b@c.de",
    "@",
    "icon@2x.png",
    "x@y.PNG",
    "a@b.Json",
    "a@b.jsx",
    "a@b.pngs",
    "user@localhost",
    ".x@y.org",
    "mail.",
    "example.com",
    "co.uk",
    # IPv4 / IPv6
    "8.8.8.8",
    "192.168.1.1",
    "256.1.1.1",
    "01.2.3.4",
    "1.2.3.4.5",
    "10.0.0.1",
    "255.255.255.255",
    "2001:4860:4860::8888",
    "fe80::1",
    "::1",
    "::",
    ":::",
    "::ffff:8.8.4.4",
    "64:ff9b::1.1.1.1",
    "2606:4700::1111",
    "1::2",
    "A::B",
    "dead:beef",
    "12:30:45",
    "2001:db8::1",
    ":",
    ".",
    # cards
    "4111111111111111",
    "4111 1111 1111 1111",
    "5555-5555-5555-4444",
    "378282246310005",
    "3782 822463 10005",
    "4111111111111112",
    "1234567812345670",
    "6011 1111 1111 1117",
    "4111",
    "1111",
    "0",
    "12",
    "123",
    "2223003122003222",
    "4222222222222",
    # keys and near misses
    "AKIAIOSFODNN7EXAMPLE",
    "AKIA",
    "ASIA",
    "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "AIza",
    "ghp_",
    "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5",
    "github_pat_",
    "xoxb-",
    "xoxb-12345-abcde",
    "sk-",
    "sk-proj-Ab3dEfGhIjKlMnOpQrStUvWx_yz",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "rk_live_",
    "eyJhbGciOiJIUzI1NiJ9",
    "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
    "eyJ",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "-----BEGIN ",
    "PRIVATE KEY",
    "-----",
    "\nMIIE\n",
    "aws_secret_access_key",
    "secret_key",
    "SecretAccessKey",
    "SECRET-KEY",
    "secret_keys",
    " =>\t",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    " = ",
    ": ",
    "=>",
    ":=",
    '"',
    "'",
    # IPv4 context rules and RFC 5322 local parts (docs/pii.md)
    "version ",
    "Standards-Version: ",
    "release notes to ",
    "section ",
    "\u00a7 ",
    "pkg (",
    ") unstable; urgency=low",
    "\n12.3.2.2. ",
    "\n7.5.1.3 T\n.....\n",
    "shadow-",
    "\n      Git ",
    "2014-03-26 (",
    ">= ",
    "<<",
    "Update from ",
    "~rc1",
    "+dfsg",
    "-0.cvs",
    "1.1.1.1-1.0.0.1",
    "8.8.8.8",
    "45.33.32.156",
    "G5/1Bo$x",
    "\nMessage-ID: <",
    " id <",
    "References: ",
    "email='",
    "?to=x&cc=",
    "o'neil",
    "SRS0=ab=",
    "{|}~*#!^`",
    "mpath-",
    "35333333000002328",
    "4111111111111111",
    # glue and context
    " ",
    "  ",
    "-",
    "_",
    "\t",
    "\n",
    "/",
    "+",
    "=",
    "x",
    "A",
    "z",
    "é",
    "中文",
    "\u00a0",
    "😀",
    "Ü",
    "ß",
    "ñ",
    "Привет",
    "مرحبا",
]

text_strategy = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.text(alphabet="0123456789.:@-_ abcdefABCDEFxyzJ=\"'/+é中", max_size=12),
    ),
    max_size=30,
).map("".join)


def run(mod: ModuleType, options: dict[str, Any], text: str | bytes) -> Any:
    masker = mod.PIIMasker(**options)
    spans = [
        (s.category, s.start, s.end, s.byte_start, s.byte_end, s.text) for s in masker.find(text)
    ]
    masked = masker.mask(text)
    return spans, masked, masker.counts


def same(options: dict[str, Any], text: str | bytes) -> None:
    native, fallback = run(N, options, text), run(F, options, text)
    assert native == fallback, f"options={options!r} text={text!r}"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=text_strategy, which=st.integers(0, len(OPTION_SETS) - 1))
def test_random_text(text: str, which: int) -> None:
    same(OPTION_SETS[which], text)


@settings(max_examples=200, deadline=None)
@given(
    text=text_strategy,
    cut=st.integers(0, 200),
    junk=st.binary(min_size=1, max_size=4).filter(lambda b: b[0] >= 0x80),
)
def test_random_bytes_with_invalid_utf8(text: str, cut: int, junk: bytes) -> None:
    data = text.encode()
    same({}, data[:cut] + junk + data[cut:])
    same({"mask_private_ips": True}, junk + data + junk[:1])


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12))
def test_adjacent_candidates_without_separators(pieces: list[str]) -> None:
    same({"mask_private_ips": True}, "".join(pieces))


ADVERSARIAL = [
    "",
    "1" * 5000,
    "4111" * 300,
    "4111 " * 300,
    "1." * 2000,
    "a@" * 2000,
    "a" * 3000 + "@example.com",
    "x@" + "a." * 2000 + "com",
    ":" * 3000,
    "a:" * 2000,
    "::" + "1:" * 100,
    "eyJ" * 1000,
    "eyJ" + "a" * 20000 + ".eyJ" + "b" * 20 + "." + "c" * 30,
    "-----BEGIN RSA PRIVATE KEY-----" * 100,
    "-----BEGIN RSA PRIVATE KEY-----\n" + "A" * 70000 + "\n-----END RSA PRIVATE KEY-----",
    ("secret_key = " + "A" * 40 + " ") * 100,
    "secret_key:" + " " * 16 + "A" * 40,
    "secret_key:" + " " * 17 + "A" * 40,
    "sk-" * 1000,
    "ghp_" + "a" * 300,
    "4111 1111 1111 1111 " * 100,
    "8.8.8.8" * 100,
    "é8.8.8.8é" * 50,
    "2001:4860:4860::8888" * 20,
    "a@b.co.a@b.co",
    "a@b.c1@d.com",
    "AKIAIOSFODNN7EXAMPLE@example.com",
    "-" * 5000,
    "=" * 3000,
    "\x00" * 100 + "8.8.8.8",
]


@pytest.mark.parametrize("index", range(len(ADVERSARIAL)))
@pytest.mark.parametrize("which", range(len(OPTION_SETS)))
def test_adversarial(index: int, which: int) -> None:
    same(OPTION_SETS[which], ADVERSARIAL[index])


def seeded_corpus(seed: int = 20240601, docs: int = 2500) -> list[str]:
    """Documents of 0-60 fragments joined by random glue, including PII at both ends."""
    rng = random.Random(seed)
    glue = [" ", "", "\n", ", ", "-", ".", ":", "é", "中", "_", "@", "/"]
    corpus = []
    for _ in range(docs):
        parts = []
        for _ in range(rng.randint(0, 60)):
            parts.append(rng.choice(FRAGMENTS))
            parts.append(rng.choice(glue))
        corpus.append("".join(parts))
    return corpus


def batch_digest(mod: ModuleType, corpus: list[str]) -> str:
    h = hashlib.sha256()
    for options in OPTION_SETS:
        masker = mod.PIIMasker(**options)
        result = masker.mask_batch(corpus)
        h.update(json.dumps([result.texts, result.counts], ensure_ascii=False).encode())
        for text in corpus[:400]:
            for s in masker.find(text):
                h.update(repr((s.category, s.start, s.end, s.byte_start, s.byte_end)).encode())
    return h.hexdigest()


@pytest.mark.parametrize("pad", [0, 185, 186, 187, 250])
def test_message_id_line_window_and_key_context(pad: int) -> None:
    # The edges of the verifier shortcuts (issue 15): the message-id header's line start is
    # looked for within 200 bytes of the local part; the AWS key context is checked first.
    key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    for text in (
        "x\nMessage-ID: <" + "x" * pad + " id@example.com>",
        "x\n" + "y" * pad + "\nReferences: <a@b.org>",
        "secret_key" + " " * (pad % 20) + ":= '" + key + "'",
        "aws_secret_access_key" + "\t" * (pad % 18) + "=>" + key,
    ):
        for options in OPTION_SETS:
            same(options, text)


def test_seeded_corpus_through_mask_batch() -> None:
    corpus = seeded_corpus()
    for options in OPTION_SETS:
        n = N.PIIMasker(threads=2, **options).mask_batch(corpus)
        f = F.PIIMasker(**options).mask_batch(corpus)
        assert n.counts == f.counts
        assert n.texts == f.texts
    assert batch_digest(N, corpus[:600]) == batch_digest(F, corpus[:600])


CHILD = """
import json, sys
sys.path[:0] = json.loads(sys.argv[1])
from luminamoon.data import _native
from test_pii_parity import batch_digest, seeded_corpus
print(batch_digest(_native, seeded_corpus()[:600]))
"""


@pytest.mark.parametrize("isa", ["scalar", "avx2", "avx512", "neon"])
def test_every_simd_kernel_gives_the_fallback_answers(isa: str) -> None:
    if isa not in N.supported_isas():
        pytest.skip(f"{isa} is not supported on this machine")
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, LUMINAMOON_SIMD=isa)
    env.pop("LUMINAMOON_FORCE_FALLBACK", None)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps([here, *sys.path])],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert out.stdout.strip() == batch_digest(F, seeded_corpus()[:600])

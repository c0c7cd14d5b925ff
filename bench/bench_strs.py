#!/usr/bin/env python3
"""Python ``str`` to UTF-8 and back, by the engine and by CPython, per kind of ``str``.

Every stage reads the text of a ``str`` as UTF-8, and the readers, the cleaner, the PIIMasker and
``StringTensor`` make a ``str`` of each result. CPython keeps a ``str`` in the narrowest of four
forms (PEP 393): ASCII, Latin-1 (a character from U+0080 to U+00FF), UCS-2 (one up to U+FFFF) or
UTF-32 (one above: a single emoji makes a whole document 4 bytes a character). The engine has its
own kernels for both directions (docs/architecture.md, "Between str and UTF-8"); this prints,
for each form, what they do beside CPython's, in one process:

* to UTF-8: ``StringTensor.from_pylist(strs)`` (each ``str``'s UTF-8 copied into one buffer)
  against ``[s.encode() for s in strs]``;
* from UTF-8: ``StringTensor.to_pylist()`` (a ``str`` made of each element) against
  ``[b.decode() for b in raw]``.

Text: the real-text corpus of ``bench/real_corpus.py`` (its documents split by their form), and
two made from its English documents, as web text has them: an accented letter every ~25
characters (Latin-1, as French or German prose) and an emoji every ~300 characters (UTF-32).
Figures are GB/s of UTF-8, best of the rounds (each round runs both sides, interleaved), so
that a busy moment of the shared machine does not count; the ratio is ours over CPython's.

Run: ``.venv/bin/python bench/bench_strs.py [--corpus DIR] [--rounds 41]``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import luminamoon.data as lmd
from _common import gc_paused
from bench_real_hashing import load

ACCENTS = "éèàçùâêîôûëïüÉÀäöüßñ"
EMOJI = ["\U0001f600", "\U0001f44d", "\U0001f680", "\U0001f525", "\u2764\ufe0f"]


def form(text: str) -> str:
    top = max(map(ord, text), default=0)
    return (
        "ASCII"
        if top < 0x80
        else "Latin-1"
        if top < 0x100
        else "UCS-2"
        if top < 0x10000
        else "UTF-32"
    )


def dense(text: str) -> bool:
    utf8 = len(text.encode())
    return (utf8 - len(text)) * 8 >= utf8  # continuation bytes: UTF-8 bytes less characters


def corpora(texts: list[str]) -> dict[str, list[str]]:
    by_form: dict[str, list[str]] = {}
    for t in texts:
        if t:
            by_form.setdefault(form(t), []).append(t)
    english = [t for t in by_form.get("ASCII", []) if len(t) > 3000][:200]
    rng = random.Random(7)
    accented = [
        "".join(rng.choice(ACCENTS) if c.isalpha() and rng.random() < 0.04 else c for c in t)
        for t in english
    ]
    with_emoji = [
        "".join(t[k : k + 300] + rng.choice(EMOJI) for k in range(0, len(t), 300)) for t in english
    ]
    # UCS-2 documents of two kinds: dense (Cyrillic, Greek, CJK manual pages: a continuation byte
    # in every 8 bytes or more, where the bindings gave CPython the decoding before session 29's
    # vector kernels) and mostly ASCII (English with curly quotes or dashes).
    ucs2 = by_form.pop("UCS-2", [])
    by_form["UCS-2, dense"] = [t for t in ucs2 if dense(t)]
    by_form["UCS-2, mostly ASCII"] = [t for t in ucs2 if not dense(t)]
    out = {f"real, {name}": docs for name, docs in sorted(by_form.items()) if docs}
    out["English, an accent every ~25 characters (Latin-1)"] = [
        t for t in accented if form(t) == "Latin-1"
    ]
    out["English, an emoji every ~300 characters (UTF-32)"] = with_emoji
    return out


def best_seconds(jobs: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    best = dict.fromkeys(jobs, float("inf"))
    for _ in range(rounds):
        for label, job in jobs.items():
            with gc_paused():
                start = time.perf_counter()
                job()
                best[label] = min(best[label], time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", default=str(Path(__file__).parent / "out" / "real"))
    parser.add_argument("--rounds", type=int, default=41)
    args = parser.parse_args()
    assert lmd.BACKEND == "native", "run the benchmark on the native backend"
    rows = []
    for name, strs in corpora(load(Path(args.corpus))).items():
        raw = [s.encode() for s in strs]
        tensor = lmd.StringTensor.from_pylist(raw)
        assert tensor.to_pylist() == strs
        assert lmd.StringTensor.from_pylist(strs).to_pylist() == strs
        nbytes = sum(map(len, raw))
        best = best_seconds(
            {
                "encode ours": lambda strs=strs: lmd.StringTensor.from_pylist(strs),
                "encode CPython": lambda strs=strs: [s.encode() for s in strs],
                "decode ours": tensor.to_pylist,
                "decode CPython": lambda raw=raw: [b.decode() for b in raw],
            },
            args.rounds,
        )
        rate = {label: nbytes / seconds / 1e9 for label, seconds in best.items()}
        rows.append((name, len(strs), nbytes, rate))
    print(f"best of {args.rounds} rounds, GB/s of UTF-8 (ours / CPython)")
    print(
        "| text | documents | MB | to UTF-8: ours | CPython | ratio "
        "| from UTF-8: ours | CPython | ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, count, nbytes, r in rows:
        print(
            f"| {name} | {count:,} | {nbytes / 1e6:.2f} | {r['encode ours']:.1f} | "
            f"{r['encode CPython']:.1f} | {r['encode ours'] / r['encode CPython']:.2f}x | "
            f"{r['decode ours']:.1f} | {r['decode CPython']:.1f} | "
            f"{r['decode ours'] / r['decode CPython']:.2f}x |"
        )


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""JSONL text-field extraction benchmark: ShardReader beside the usual Python ways of doing it.

Generated JSONL corpora (web-like documents of 0.5-5 KB with an id, a url, nested metadata and
escapes; half written with ``ensure_ascii``), read end to end, the ``text`` field of every record
extracted into Python ``str`` objects. Two corpora: ``ascii`` (English-like, one document in ten
with a non-ASCII word) and ``mixed`` (non-ASCII words in every document, CJK included). Building
``str`` objects from non-ASCII UTF-8 is CPython's decoder's work in every contender but orjson,
which writes its strings itself; the ``mixed`` corpus shows that cost. Contenders:

* ``ShardReader`` native, ``threads=1`` (per core) and ``threads=0`` (all cores);
* ``ShardReader`` fallback (pure Python: ``json`` with the strictness hooks);
* ``orjson.loads`` + a Python loop over the lines (the common hand-written reader);
* ``json.loads`` + the same loop;
* ``pyarrow.json.read_json`` with one thread and with its default thread pool (columnar: it
  stops at an Arrow table; turning the column into ``str`` objects is timed separately).

MB/s is file bytes over wall time, median of the repeats; the garbage collector is off inside
timed regions. Every competitor's texts are checked against ShardReader's.

Run: ``.venv/bin/python bench/bench_readers.py`` (``--mb 20 --repeat 1`` for a smoke run,
``--json PATH`` to save the results).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import luminamoon.data as lmd
import results_json
from _common import timed
from luminamoon.data import fallbacks

WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there been one all we their its if so had no can more"
).split()
NON_ASCII = "über café naïve 東京 данные ✓".split()


def make_corpus(path: Path, megabytes: int, mixed: bool, seed: int = 1) -> int:
    rng = random.Random(seed)
    target = megabytes * 1_000_000
    total = i = 0
    with path.open("w", encoding="utf-8") as f:
        while total < target:
            words = [rng.choice(WORDS) for _ in range(rng.randrange(80, 800))]
            if mixed or i % 10 == 0:
                for _ in range(1 + len(words) // 20):
                    words[rng.randrange(len(words))] = rng.choice(NON_ASCII)
            text = " ".join(words)
            if i % 3 == 0:
                text += '\n\nQuote: "' + " ".join(words[:12]) + '"\tend\\'
            record = {
                "id": i,
                "url": f"https://example.com/{i}",
                "text": text,
                "meta": {"lang": "en", "score": rng.random(), "tags": ["a", "b"]},
            }
            line = json.dumps(record, ensure_ascii=i % 2 == 0) + "\n"
            f.write(line)
            total += len(line.encode())
            i += 1
    return total


def reader_texts(module: Any, path: Path, threads: int) -> Callable[[], list[str]]:
    def run() -> list[str]:
        texts: list[str] = []
        for batch in module.ShardReader(path, threads=threads, batch_size=4096):
            texts += batch.texts
        return texts

    return run


def loop_texts(loads: Callable[[bytes], Any], path: Path) -> Callable[[], list[str]]:
    def run() -> list[str]:
        with path.open("rb") as f:
            return [loads(line)["text"] for line in f]

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=100, help="corpus size in MB (default 100)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", choices=["ascii", "mixed", "both"], default="both")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    report: dict[str, Any] = {"machine": platform.platform(), "cores": os.cpu_count()}
    for corpus in ("ascii", "mixed") if args.corpus == "both" else (args.corpus,):
        report[corpus] = run_corpus(corpus, args.mb, args.repeat)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    results_json.record("readers", report, config=vars(args))


def run_corpus(corpus: str, megabytes: int, repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.jsonl"
        size = make_corpus(path, megabytes, mixed=corpus == "mixed")
        runs: list[tuple[str, Callable[[], list[str]], int]] = [
            ("ShardReader native threads=1", reader_texts(lmd, path, 1), repeat),
            ("ShardReader native threads=0", reader_texts(lmd, path, 0), repeat),
            ("ShardReader fallback", reader_texts(fallbacks, path, 0), 1),
            ("json.loads + loop", loop_texts(json.loads, path), 1),
        ]
        try:
            import orjson

            runs.insert(3, ("orjson.loads + loop", loop_texts(orjson.loads, path), repeat))
        except ImportError:
            print("(orjson not installed: skipped)")
        try:
            import pyarrow.json as pj

            def arrow(threads: bool, to_python: bool) -> Callable[[], list[str]]:
                def run() -> list[str]:
                    table = pj.read_json(path, read_options=pj.ReadOptions(use_threads=threads))
                    column = table.column("text")
                    return column.to_pylist() if to_python else [""] * len(column)

                return run

            runs += [
                ("pyarrow.json.read_json 1 thread", arrow(False, False), repeat),
                ("pyarrow.json.read_json threads", arrow(True, False), repeat),
                ("pyarrow 1 thread + to_pylist", arrow(False, True), repeat),
            ]
        except ImportError:
            print("(pyarrow not installed: skipped)")

        print(f"{corpus} corpus: {size / 1e6:.1f} MB, {os.cpu_count()} cores")
        results: dict[str, float] = {}
        reference: list[str] | None = None
        for name, fn, times in runs:
            seconds, texts = timed(fn, times)
            if reference is None:
                reference = texts
            elif texts and texts[0]:
                assert texts == reference, f"{name} disagrees with ShardReader"
            results[name] = size / seconds / 1e6
            print(f"{name:36s} {results[name]:9.1f} MB/s")
        return {"corpus_mb": size / 1e6, "mb_per_s": results}


if __name__ == "__main__":
    main()

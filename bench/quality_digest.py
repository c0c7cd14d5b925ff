#!/usr/bin/env python3
"""SHA-256 of every QualityFilter output on a corpus, to show that a change altered no result.

For each configuration (one or more presets, ``threads=1``) and each document: every metric of
``metrics()`` (floats as ``float.hex``, to the last bit), then ``filter_batch``'s keep flags,
reasons (rule, metric, value, threshold, comparison) and counters. One digest per corpus and
configuration, and one over all of them. Run it with the old build and the new one (the old
one's installed package copied aside and put first on ``PYTHONPATH``) and compare the lines.

Corpora: ``real`` (bench/real_corpus.py's JSONL shards in ``--real DIR``, every document) and the
seeded ``varied`` and ``prose`` corpora of bench/quality_corpus.py (bench/bench_quality.py's
seeds). Example::

    python bench/quality_digest.py --real bench/out/real --presets gopher_repetition
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import luminamoon.data as lmd
import quality_corpus


def digest(presets: list[str], texts: list[str]) -> str:
    qf = lmd.QualityFilter(presets, threads=1)
    h = hashlib.sha256()
    for text in texts:
        for name, value in sorted(qf.metrics(text).items()):
            shown = value.hex() if isinstance(value, float) else str(value)
            h.update(f"{name}={shown};".encode())
        h.update(b"\n")
    result = qf.filter_batch(texts)
    h.update(bytes(result.keep))
    for reason in result.reasons:
        if reason is None:
            h.update(b"-\n")
        else:
            h.update(
                f"{reason.rule}|{reason.metric}|{reason.value.hex()}|"
                f"{reason.threshold.hex()}|{reason.comparison}\n".encode()
            )
    h.update(json.dumps(result.counters, sort_keys=True).encode())
    return h.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", type=Path, help="bench/real_corpus.py's output directory")
    parser.add_argument("--docs", type=int, default=2000, help="documents per seeded corpus")
    parser.add_argument(
        "--presets",
        action="append",
        help="a configuration, presets joined by '+' (repeatable); default: gopher_repetition "
        "and gopher_repetition+gopher_quality",
    )
    args = parser.parse_args()
    configs = [
        c.split("+")
        for c in (args.presets or ["gopher_repetition", "gopher_repetition+gopher_quality"])
    ]
    corpora: dict[str, list[str]] = {
        "varied": [t for _, t in quality_corpus.varied_corpus(args.docs, seed=11)],
        "prose": [
            t
            for label, t in quality_corpus.calibration_corpus(args.docs, 0, seed=7)
            if label in quality_corpus.PROSE_KINDS
        ],
    }
    if args.real is not None:
        real: list[str] = []
        for shard in sorted(args.real.glob("real-*.jsonl")):
            with shard.open(encoding="utf-8") as fh:
                real += [json.loads(line)["text"] for line in fh]
        corpora["real"] = real
    total = hashlib.sha256()
    print(f"backend {lmd.BACKEND}, module {Path(lmd.__file__).parent}")
    for name, texts in corpora.items():
        for presets in configs:
            d = digest(presets, texts)
            total.update(d.encode())
            print(f"{name:7s} {len(texts):5d} docs  {'+'.join(presets):40s} {d}")
    print(f"all {total.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Calibration of the QualityFilter presets on the labelled corpus of bench/quality_corpus.py.

Prints, for every kind of document, the share each preset (and two compositions) keeps, as the
markdown table in docs/quality.md ("Calibration"): prose must be kept, junk rejected. Also the
distribution (percentiles) of every core metric per kind, which is how the defaults of the
``default`` preset were chosen. Run: ``python bench/quality_calibration.py [--prose 2000]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import luminamoon.data as lmd
import quality_corpus

COLUMNS: tuple[tuple[str, ...], ...] = (
    ("default",),
    ("gopher_quality",),
    ("gopher_repetition",),
    ("c4",),
    ("fineweb",),
    ("default", "gopher_quality", "gopher_repetition"),
)
CORE = ("words", "char_entropy", "ngram_repetition", "symbol_ratio", "capitalized_word_ratio")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prose", type=int, default=2000)
    parser.add_argument("--junk", type=int, default=200, help="documents of every junk kind")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    corpus = quality_corpus.calibration_corpus(args.prose, args.junk, args.seed)
    texts = [text for _, text in corpus]
    kinds = list(dict.fromkeys(label for label, _ in corpus))
    kept: dict[tuple[str, ...], dict[str, list[bool]]] = {}
    for presets in COLUMNS:
        result = lmd.QualityFilter(presets).filter_batch(texts)
        by_kind: dict[str, list[bool]] = defaultdict(list)
        for (label, _), keep in zip(corpus, result.keep, strict=True):
            by_kind[label].append(keep)
        kept[presets] = by_kind
    print(f"{len(corpus)} documents (seed {args.seed}), backend {lmd.BACKEND}\n")
    header = " | ".join(" + ".join(p) for p in COLUMNS)
    print(f"| kind | docs | {header} |")
    print("|---|---:|" + "---:|" * len(COLUMNS))
    for kind in kinds:
        n = len(kept[COLUMNS[0]][kind])
        cells = " | ".join(f"{sum(kept[p][kind]) / n:.1%}" for p in COLUMNS)
        print(f"| {kind} | {n} | {cells} |")
    prose_kinds = list(quality_corpus.PROSE_KINDS)
    for presets in COLUMNS:
        prose = [k for kind in prose_kinds for k in kept[presets][kind]]
        print(f"prose kept by {' + '.join(presets)}: {sum(prose) / len(prose):.2%}")

    print("\nCore metrics per kind (p1 / p50 / p99):\n")
    qf = lmd.QualityFilter()
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for label, text in corpus:
        m = qf.metrics(text)
        for name in CORE:
            values[label][name].append(m[name])
    print("| kind | " + " | ".join(CORE) + " |")
    print("|---|" + "---|" * len(CORE))
    for kind in kinds:
        cells = []
        for name in CORE:
            q = statistics.quantiles(values[kind][name], n=100, method="inclusive")
            cells.append(f"{q[0]:.3g} / {statistics.median(values[kind][name]):.3g} / {q[98]:.3g}")
        print(f"| {kind} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""QualityFilter vs datatrove 0.10.1: agreement per rule on the same documents.

For every Gopher, C4 and FineWeb rule, datatrove's filter is built with only that rule switched
on (the other thresholds None or neutral) and so is ours; the two keep decisions are compared
document by document. Then each filter with all its published defaults: keep decision, first
reason, and (C4) the text after line removal. Also: how often our word tokens equal
datatrove's ``split_into_words`` exactly.

Needs ``pip install -r requirements-bench.txt`` (datatrove, spaCy). Run:
``python bench/quality_agreement.py [--docs 3000] [--backend native|fallback] [--json PATH]``.
tests/test_quality_datatrove.py runs the same comparison on fewer documents and asserts the
levels documented in docs/quality.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import quality_corpus

GOPHER_QUALITY_RULES = {  # ours -> (datatrove keyword, its published default, datatrove reason)
    "gopher_min_words": ("min_doc_words", 50, "gopher_short_doc"),
    "gopher_max_words": ("max_doc_words", 100000, "gopher_long_doc"),
    "gopher_min_mean_word_length": ("min_avg_word_length", 3, "gopher_below_avg_threshold"),
    "gopher_max_mean_word_length": ("max_avg_word_length", 10, "gopher_above_avg_threshold"),
    "gopher_max_hash_ratio": ("max_symbol_word_ratio", 0.1, "gopher_too_many_hashes"),
    "gopher_max_ellipsis_ratio": ("max_symbol_word_ratio", 0.1, "gopher_too_many_ellipsis"),
    "gopher_max_bullet_lines_ratio": ("max_bullet_lines_ratio", 0.9, "gopher_too_many_bullets"),
    "gopher_max_ellipsis_lines_ratio": (
        "max_ellipsis_lines_ratio",
        0.3,
        "gopher_too_many_end_ellipsis",
    ),
    "gopher_min_alpha_words_ratio": (
        "max_non_alpha_words_ratio",
        0.8,
        "gopher_below_alpha_threshold",
    ),
    "gopher_min_stop_words": ("min_stop_words", 2, "gopher_enough_stop_words"),
}
GOPHER_REPETITION_REASONS = {
    "empty": "gopher_min_chars",
    "dup_para_frac": "gopher_max_dup_para_ratio",
    "dup_para_char_frac": "gopher_max_dup_para_char_ratio",
    "dup_line_frac": "gopher_max_dup_line_ratio",
    "dup_line_char_frac": "gopher_max_dup_line_char_ratio",
    **{f"top_{n}_gram": f"gopher_max_top_{n}gram_char_ratio" for n in (2, 3, 4)},
    **{f"duplicated_{n}_n_grams": f"gopher_max_dup_{n}gram_char_ratio" for n in range(5, 11)},
}
C4_REASONS = {
    "lorem_ipsum": "c4_lorem_ipsum",
    "curly_bracket": "c4_curly_bracket",
    "too_few_sentences": "c4_min_sentences",
}
FINEWEB_REASONS = {
    "empty": "fineweb_min_lines",
    "line_punct_ratio": "fineweb_min_line_punct_ratio",
    "short_line_ratio": "fineweb_max_short_line_ratio",
    "char_dup_ratio": "fineweb_max_dup_line_char_ratio",
    "list_ratio": "fineweb_max_newline_word_ratio",
}
ALL_OFF = {  # every threshold of a preset switched off, so one can be switched back on
    "gopher_quality": dict.fromkeys(GOPHER_QUALITY_RULES),
    "gopher_repetition": {
        "gopher_min_chars": None,
        **dict.fromkeys(GOPHER_REPETITION_REASONS.values()),
    },
    "c4": {"c4_lorem_ipsum": False, "c4_curly_bracket": False, "c4_min_sentences": None},
    "fineweb": dict.fromkeys(FINEWEB_REASONS.values()),
}


@dataclass
class Tally:
    """Keep-decision agreement of one rule (or one whole filter)."""

    same: int = 0
    total: int = 0
    both_reject: int = 0
    only_ours: list[int] = field(default_factory=list)  # doc indices we reject, datatrove keeps
    only_theirs: list[int] = field(default_factory=list)
    datatrove_errors: int = 0

    def add(self, index: int, ours_keep: bool, theirs_keep: bool) -> None:
        self.total += 1
        if ours_keep == theirs_keep:
            self.same += 1
            self.both_reject += not ours_keep
        elif ours_keep:
            self.only_theirs.append(index)
        else:
            self.only_ours.append(index)

    @property
    def agreement(self) -> float:
        return self.same / self.total if self.total else 1.0

    def row(self) -> dict[str, Any]:
        return {
            "agreement": self.agreement,
            "documents": self.total,
            "rejected_by_both": self.both_reject,
            "rejected_only_by_ours": len(self.only_ours),
            "rejected_only_by_datatrove": len(self.only_theirs),
            "datatrove_errors": self.datatrove_errors,
        }


def _verdict(result: object) -> tuple[bool, str | None]:
    if isinstance(result, tuple):
        return bool(result[0]), result[1]
    return bool(result), None


def run(
    texts: list[str], impl: ModuleType, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Compare ``impl.QualityFilter`` with datatrove on ``texts``; returns the report dict."""
    warnings.filterwarnings("ignore")  # numpy's mean of an empty list, with rules switched off
    from datatrove.data import Document
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
    )
    from datatrove.utils.text import split_into_words

    qf = impl.QualityFilter
    defaults = qf.preset_defaults()
    tallies: dict[str, Tally] = {}

    def tally(name: str) -> Tally:
        return tallies.setdefault(name, Tally())

    def theirs(filt: Any, text: str) -> tuple[bool, str | None] | None:
        try:
            return _verdict(filt.filter(Document(text=text, id="0")))
        except (ZeroDivisionError, ValueError, IndexError):
            return None

    # Ours: one filter per rule (all others off) and one per preset with every default.
    ours_single: dict[str, Any] = {}
    for preset, off in ALL_OFF.items():
        for rule in off:
            settings = dict(off)
            settings[rule] = defaults[preset][rule]
            # datatrove's "empty" checks cannot be switched off: keep ours on too.
            for always_on in ("gopher_min_chars", "fineweb_min_lines"):
                if always_on in settings:
                    settings[always_on] = defaults[preset][always_on]
            ours_single[rule] = qf((preset,), **settings)
    ours_full = {p: qf((p,)) for p in ("gopher_quality", "gopher_repetition", "c4", "fineweb")}
    ours_lines = qf(("c4_lines",))

    # Theirs, likewise.
    gq_off = {kw: None for kw, _, _ in GOPHER_QUALITY_RULES.values()}
    theirs_single: dict[str, Any] = {}
    for rule, (kw, default, _) in GOPHER_QUALITY_RULES.items():
        theirs_single[rule] = GopherQualityFilter(**{**gq_off, kw: default})
    rep_off: dict[str, Any] = {
        "dup_line_frac": None,
        "dup_para_frac": None,
        "dup_line_char_frac": None,
        "dup_para_char_frac": None,
        "top_n_grams": (),
        "dup_n_grams": (),
    }
    theirs_single["gopher_min_chars"] = GopherRepetitionFilter(**rep_off)
    for kw, value in (
        ("dup_para_frac", 0.3),
        ("dup_para_char_frac", 0.2),
        ("dup_line_frac", 0.3),
        ("dup_line_char_frac", 0.2),
    ):
        theirs_single[GOPHER_REPETITION_REASONS[kw]] = GopherRepetitionFilter(
            **{**rep_off, kw: value}
        )
    for n, t in ((2, 0.2), (3, 0.18), (4, 0.16)):
        theirs_single[f"gopher_max_top_{n}gram_char_ratio"] = GopherRepetitionFilter(
            **{**rep_off, "top_n_grams": ((n, t),)}
        )
    for n, t in ((5, 0.15), (6, 0.14), (7, 0.13), (8, 0.12), (9, 0.11), (10, 0.10)):
        theirs_single[f"gopher_max_dup_{n}gram_char_ratio"] = GopherRepetitionFilter(
            **{**rep_off, "dup_n_grams": ((n, t),)}
        )
    c4_off = {"filter_lorem_ipsum": False, "filter_curly_bracket": False, "min_num_sentences": -1}
    theirs_single["c4_lorem_ipsum"] = C4QualityFilter(**{**c4_off, "filter_lorem_ipsum": True})
    theirs_single["c4_curly_bracket"] = C4QualityFilter(**{**c4_off, "filter_curly_bracket": True})
    theirs_single["c4_min_sentences"] = C4QualityFilter(**{**c4_off, "min_num_sentences": 5})
    fw_off = {
        "line_punct_thr": 0.0,
        "short_line_thr": 1.0,
        "char_duplicates_ratio": 1.0,
        "new_line_ratio": float("inf"),
    }
    theirs_single["fineweb_min_lines"] = FineWebQualityFilter(**fw_off)
    for rule, kw, value in (
        ("fineweb_min_line_punct_ratio", "line_punct_thr", 0.12),
        ("fineweb_max_short_line_ratio", "short_line_thr", 0.67),
        ("fineweb_max_dup_line_char_ratio", "char_duplicates_ratio", 0.01),
        ("fineweb_max_newline_word_ratio", "new_line_ratio", 0.3),
    ):
        theirs_single[rule] = FineWebQualityFilter(**{**fw_off, kw: value})
    theirs_full = {
        "gopher_quality": GopherQualityFilter(),
        "gopher_repetition": GopherRepetitionFilter(),
        "c4": C4QualityFilter(),
        "fineweb": FineWebQualityFilter(),
    }
    reason_maps = {
        "gopher_quality": {v[2]: k for k, v in GOPHER_QUALITY_RULES.items()},
        "gopher_repetition": GOPHER_REPETITION_REASONS,
        "c4": C4_REASONS,
        "fineweb": FINEWEB_REASONS,
    }

    tokens_same = 0
    reasons_same = {p: Tally() for p in theirs_full}
    c4_text = Tally()
    started = time.perf_counter()
    for i, text in enumerate(texts):
        if progress is not None and i % 500 == 0:
            progress(f"{i}/{len(texts)} documents, {time.perf_counter() - started:.0f} s")
        if list(qf.tokenize(text)) == split_into_words(text):
            tokens_same += 1
        for rule, filt in theirs_single.items():
            verdict = theirs(filt, text)
            if rule == "gopher_max_ellipsis_ratio":
                # datatrove checks '#' and ellipses against one threshold, '#' first: its
                # ellipsis verdict is only known where the '#' check passed.
                hash_verdict = theirs(theirs_single["gopher_max_hash_ratio"], text)
                if hash_verdict is not None and not hash_verdict[0]:
                    continue
            if rule == "gopher_max_hash_ratio" and verdict is not None and not verdict[0]:
                verdict = (verdict[1] != "gopher_too_many_hashes", verdict[1])
            if verdict is None:
                tally(rule).datatrove_errors += 1
                continue
            tally(rule).add(i, ours_single[rule].is_high_quality(text), verdict[0])
        for preset, filt in theirs_full.items():
            verdict = theirs(filt, text)
            if verdict is None:
                tally(preset).datatrove_errors += 1
                continue
            rejection = ours_full[preset].check(text)
            tally(preset).add(i, rejection is None, verdict[0])
            their_rule = None if verdict[0] else reason_maps[preset].get(verdict[1] or "", "?")
            our_rule = None if rejection is None else rejection.rule
            reasons_same[preset].add(i, our_rule == their_rule, True)
            if preset == "c4" and verdict[0] and rejection is None:
                doc = Document(text=text, id="0")
                filt.filter(doc)
                cleaned = ours_lines.filter_batch([text]).texts[0]
                c4_text.add(i, cleaned == doc.text, True)
    return {
        "documents": len(texts),
        "backend": impl.__name__,
        "tokens_identical": tokens_same / len(texts) if texts else 1.0,
        "rules": {name: t.row() for name, t in tallies.items() if name not in theirs_full},
        "filters": {
            name: {**tallies[name].row(), "same_first_reason": reasons_same[name].agreement}
            for name in theirs_full
        },
        "c4_lines_text_identical": c4_text.agreement,
        "disagreements": {
            name: {"only_ours": t.only_ours[:20], "only_datatrove": t.only_theirs[:20]}
            for name, t in tallies.items()
            if t.only_ours or t.only_theirs
        },
        "seconds": time.perf_counter() - started,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--backend", choices=("native", "fallback"), default="native")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.backend == "native":
        from luminamoon.data import _native as impl
    else:
        from luminamoon.data import fallbacks as impl
    texts = [text for _, text in quality_corpus.varied_corpus(args.docs, args.seed)]
    report = run(texts, impl, progress=lambda s: print(s, file=sys.stderr))
    print(
        f"{report['documents']} documents, backend {report['backend']}, {report['seconds']:.0f} s"
    )
    print(
        f"word tokens identical to datatrove's split_into_words: {report['tokens_identical']:.2%}"
    )
    print(
        "\n| rule | agreement | rejected by both | only ours | only datatrove | datatrove error |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, row in report["rules"].items():
        print(
            f"| `{name}` | {row['agreement']:.2%} | {row['rejected_by_both']} | "
            f"{row['rejected_only_by_ours']} | {row['rejected_only_by_datatrove']} | "
            f"{row['datatrove_errors']} |"
        )
    print("\n| filter (all defaults) | keep agreement | same first reason | rejected by both |")
    print("|---|---:|---:|---:|")
    for name, row in report["filters"].items():
        print(
            f"| {name} | {row['agreement']:.2%} | {row['same_first_reason']:.2%} | "
            f"{row['rejected_by_both']} |"
        )
    print(
        f"\nC4 text after line removal identical (kept by both): "
        f"{report['c4_lines_text_identical']:.2%}"
    )
    if report["disagreements"]:
        print("\ndisagreements (first document indices):", report["disagreements"])
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

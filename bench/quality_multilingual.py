#!/usr/bin/env python3
"""The ``default`` QualityFilter preset on real prose in many languages: the translated manual
pages installed under ``/usr/share/man/<lang>/`` (shadow, dpkg, man-db, ... translations).

Each page is turned into plain text by dropping roff requests (lines starting with ``.`` or
``'``) and escapes (``\\fB``, ``\\(em``, ``\\-``, ...); a document is one page. Prints, per
language, how many pages ``default`` keeps and which rule drops the others. ``--json PATH``
writes the table. Nothing is downloaded.

Run: ``.venv/bin/python bench/quality_multilingual.py``.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import re
from pathlib import Path
from typing import Any

import luminamoon.data as lmd

MAN = Path("/usr/share/man")
_ESCAPES = re.compile(
    r"\\f(?:\[[^\]]*\]|\(..|.)"  # fonts
    r"|\\\(..|\\\[[^\]]*\]"  # special characters
    r"|\\\*(?:\(..|\[[^\]]*\]|.)"  # strings
    r"|\\s[-+]?\d|\\[&%:|^!/,)~0]|\\e"  # sizes, spacing
)


def roff_to_text(source: str) -> str:
    lines = []
    for line in source.splitlines():
        if line.startswith((".", "'")):
            if line.startswith((".SH", ".SS")):  # keep section titles as text lines
                lines.append(line.split(None, 1)[1].strip('"') if " " in line else "")
            elif line.startswith((".PP", ".P", ".LP", ".TP", ".IP", ".sp", ".br")):
                lines.append("")
            continue
        lines.append(_ESCAPES.sub("", line).replace("\\-", "-").replace("\\\\", "\\"))
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def pages() -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    if not MAN.is_dir():
        return out
    for lang_dir in sorted(MAN.iterdir()):
        if not lang_dir.is_dir() or lang_dir.name.startswith("man"):
            continue
        for page in sorted(lang_dir.glob("man*/*.gz")):
            text = page_text(page)
            if text:
                out[lang_dir.name].append((page.name, text))
    return out


def page_text(page: Path) -> str:
    """The plain text of one gzipped manual page; "" for a link (a symlink or a ``.so`` page)
    or a page that does not decode."""
    if page.is_symlink():
        return ""
    try:
        raw = gzip.decompress(page.read_bytes()).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError):
        return ""
    if raw.startswith(".so "):  # a link to another page
        return ""
    return roff_to_text(raw)


def evaluate(docs: dict[str, list[tuple[str, str]]], **options: Any) -> dict[str, Any]:
    f = lmd.QualityFilter(**options)
    table: dict[str, Any] = {}
    for lang, items in docs.items():
        result = f.filter_batch([t for _, t in items])
        reasons = collections.Counter(r.rule for r in result.reasons if r is not None)
        table[lang] = {
            "pages": len(items),
            "kept": sum(result.keep),
            "kept_share": round(sum(result.keep) / len(items), 4),
            "dropped_by": dict(reasons.most_common()),
        }
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    docs = pages()
    results = {"default": evaluate(docs)}
    for lang, row in sorted(results["default"].items()):
        print(
            f"{lang:6} pages={row['pages']:4} kept={row['kept_share']:.3f} "
            f"dropped_by={row['dropped_by']}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

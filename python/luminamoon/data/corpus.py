"""The corpus of ``luminamoon-data demo``: the labelled demo corpus (``demo_corpus.py``) written
in the three input formats the main job reads.

Deterministic for a seed. The documents are the demo corpus's well-formed records (prose, code,
many languages, PII, junk, exact and near duplicates); ``write_corpus`` spreads them over a plain
``.jsonl`` (plus a malformed line and a record without a text field), a ``.jsonl.gz`` and, when
pyarrow is installed, a ``.parquet`` shard.
"""

from __future__ import annotations

import gzip
import importlib
import json
from pathlib import Path
from typing import Any

from .demo_corpus import demo_documents

__all__ = ["corpus_records", "write_corpus"]


def corpus_records(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """The first ``count`` well-formed records ``{"id", "url", "text"}`` of the labelled demo
    corpus (``demo_corpus.py``: prose, code, many languages, PII, junk, exact and near
    duplicates, in the shares it documents)."""
    # Malformed records are 2% of the demo corpus; ask for enough to keep ``count`` of the rest.
    docs = demo_documents(count + count // 20 + 10, seed=seed)
    records = [{"id": d.id, "url": d.url, "text": d.text} for d in docs if d.kind != "malformed"]
    return records[:count]


def write_corpus(directory: str | Path, documents: int = 3000, seed: int = 7) -> list[str]:
    """Writes the corpus as three shards into ``directory``; returns their paths.

    About a third of ``documents`` each in ``part-0.jsonl`` (with one malformed line and one
    record without ``text``), ``part-1.jsonl.gz`` and ``part-2.parquet`` (``.jsonl`` when
    pyarrow is missing).
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    third = max(1, documents // 3)
    records = corpus_records(3 * third, seed)
    parts = [records[:third], records[third : 2 * third], records[2 * third :]]
    lines = [json.dumps(r, ensure_ascii=False) for r in parts[0]]
    lines.insert(min(5, len(lines)), '{"id": "broken", "text": "an unterminated string')
    lines.insert(min(9, len(lines)), '{"id": "no-text", "body": "the text field is elsewhere"}')
    first = directory / "part-0.jsonl"
    first.write_text("\n".join(lines) + "\n", encoding="utf-8")
    second = directory / "part-1.jsonl.gz"
    with gzip.open(second, "wt", encoding="utf-8") as out:
        for r in parts[1]:
            out.write(json.dumps(r, ensure_ascii=False) + "\n")
    try:
        pa = importlib.import_module("pyarrow")
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:
        third_path = directory / "part-2.jsonl"
        third_path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in parts[2]), encoding="utf-8"
        )
    else:
        third_path = directory / "part-2.parquet"
        table = pa.table({key: [r[key] for r in parts[2]] for key in ("id", "url", "text")})
        pq.write_table(table, third_path, row_group_size=max(1, len(parts[2]) // 4))
    return [str(first), str(second), str(third_path)]

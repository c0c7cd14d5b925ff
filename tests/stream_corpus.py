"""Small corpora for the ResumablePipeline tests, the crash harness and bench_resume.

Every format holds the same kind of records: ``{"id": <int>, "text": ...}`` with exact and near
duplicates sprinkled in (so a resume that loses or double-commits dedup state changes the
stream). ``write_corpus(directory, fmt, docs, shards)`` writes ``shards`` files of one format and
returns their paths; ``documents(docs)`` is the Python iterable source of the same records.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

FORMATS = ("jsonl", "txt", "parquet", "gz", "zst", "iterable")

_WORDS = (
    "river stone lantern orbit velvet copper meadow signal harbor quartz ember willow canyon "
    "prism falcon tundra cobalt saffron glacier beacon"
).split()


def text_of(i: int) -> str:
    """Document ``i``; every 7th repeats an earlier one exactly, every 11th nearly."""
    if i % 7 == 3 and i > 7:
        i -= 7  # an exact duplicate of an earlier document
    words = [_WORDS[(i * 7 + k * 3) % len(_WORDS)] for k in range(12)]
    if i % 11 == 5 and i > 11:
        words = [_WORDS[((i - 11) * 7 + k * 3) % len(_WORDS)] for k in range(12)]
        words[-1] = "variant"  # a near duplicate of an earlier document
    return f"record {i % 997} " + " ".join(words) + f" tail {i // 997}"


def documents(docs: int, first: int = 0) -> list[dict[str, object]]:
    return [{"id": i, "text": text_of(i)} for i in range(first, first + docs)]


def write_corpus(directory: Path, fmt: str, docs: int, shards: int = 3) -> list[str]:
    """``shards`` files holding ``docs`` records in total (ids 0..docs-1 in order)."""
    directory.mkdir(parents=True, exist_ok=True)
    per = -(-docs // shards)
    paths: list[str] = []
    for s in range(shards):
        records = documents(max(0, min(per, docs - s * per)), s * per)
        if fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            path = directory / f"part-{s:03d}.parquet"
            table = pa.table(
                {"id": [r["id"] for r in records], "text": [r["text"] for r in records]}
            )
            pq.write_table(table, path, row_group_size=max(1, per // 3))
        elif fmt == "txt":
            path = directory / f"part-{s:03d}.txt"
            path.write_text("".join(f"{r['text']}\n" for r in records), encoding="utf-8")
        else:
            body = "".join(json.dumps(r) + "\n" for r in records).encode()
            if fmt == "gz":
                path = directory / f"part-{s:03d}.jsonl.gz"
                path.write_bytes(gzip.compress(body, mtime=0))
            elif fmt == "zst":
                import zstandard

                path = directory / f"part-{s:03d}.jsonl.zst"
                path.write_bytes(zstandard.ZstdCompressor().compress(body))
            else:
                path = directory / f"part-{s:03d}.jsonl"
                path.write_bytes(body)
        paths.append(str(path))
    return paths


def sources_for(directory: Path, fmt: str, docs: int, shards: int = 3) -> object:
    """What to pass as ``sources``: the shard paths, or a re-iterable list of records."""
    if fmt == "iterable":
        return documents(docs)
    return write_corpus(directory, fmt, docs, shards)


def fields_for(fmt: str) -> list[str]:
    """Extra fields to ask for: text shards have no ``id``."""
    return [] if fmt == "txt" else ["id"]

"""A small deterministic corpus for the ``luminamoon-data run`` tests.

Prose-like documents with exact duplicates, near-duplicates (one word changed), PII (e-mails, IP
addresses), junk that the quality presets drop, malformed JSON lines and records without the text
field, spread over a plain ``.jsonl``, a ``.jsonl.gz`` and a ``.parquet`` shard.
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path
from typing import Any

WORDS = (
    "the river carried small boats past the old mill while farmers walked to market and "
    "children played near the stone bridge where a baker sold warm bread every morning before "
    "the bells of the church rang across quiet fields and distant hills covered in snow"
).split()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 18))]
    return " ".join(words).capitalize() + "."


def document(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(6, 14)))


def records(seed: int, count: int) -> list[dict[str, Any]]:
    """``count`` records: ``{"id", "text", "url"}``; about 15% duplicates, 8% near-duplicates,
    10% junk, 10% with PII."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    previous: list[str] = []
    for i in range(count):
        roll = rng.random()
        if previous and roll < 0.15:
            text = rng.choice(previous)
        elif previous and roll < 0.23:
            words = rng.choice(previous).split()
            words[rng.randrange(len(words))] = "lantern"
            text = " ".join(words)
        elif roll < 0.33:
            text = rng.choice(
                ["$$$ BUY NOW $$$ " * 5, "click here", "a b c d e f", "0 1 2 3 " * 20]
            )
        else:
            text = document(rng)
            if rng.random() < 0.12:
                text += f" Write to person{i}@example.org or ping 93.184.216.{i % 250} anytime."
            previous.append(text)
        out.append({"id": f"s{seed}-{i}", "text": text, "url": f"https://example.net/{seed}/{i}"})
    return out


def write_corpus(directory: Path, per_shard: int = 120) -> list[str]:
    """Writes three shards into ``directory``; returns the input arguments for ``run``."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) for r in records(1, per_shard)]
    lines.insert(7, '{"id": "broken", "text": ')  # malformed JSON
    lines.insert(20, '{"id": "no-text", "body": "the text lives elsewhere"}')  # missing field
    (directory / "a.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with gzip.open(directory / "b.jsonl.gz", "wt", encoding="utf-8") as out:
        for r in records(2, per_shard):
            out.write(json.dumps(r) + "\n")
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = records(3, per_shard)
    rows[5]["text"] = None  # a null text: counted, skipped
    table = pa.table(
        {
            "id": [r["id"] for r in rows],
            "text": [r["text"] for r in rows],
            "url": [r["url"] for r in rows],
        }
    )
    pq.write_table(table, directory / "c.parquet", row_group_size=max(1, per_shard // 3))
    return [str(directory / "*.jsonl"), str(directory / "b.jsonl.gz"), str(directory / "c.parquet")]


def cli_command(inputs: list[str], out: Path) -> list[str]:
    """The `luminamoon-data run` command line the CLI tests run (small files and batches, so a
    run commits many times)."""
    return [
        sys.executable,
        "-m",
        "luminamoon.data.cli",
        "run",
        *inputs,
        "-o",
        str(out),
        "--fields",
        "id,url",
        "--max-rows-per-file",
        "40",
        "--batch-size",
        "24",
        "--row-group-size",
        "20",
        "--progress",
        "log",
    ]

"""A varied synthetic web-like corpus that exercises every stage of ``luminamoon-data run``.

Deterministic for a seed. Documents are prose-like articles, forum posts and notes drawn from
topic vocabularies; mixed in are what a crawl really holds: exact duplicates (syndicated copies),
near-duplicates (the same page with a changed date or word, a footer appended), personal data
(e-mail addresses, public IPs, API-key-shaped tokens, Luhn-valid card numbers), junk (spam, link
lists, navigation boilerplate, symbol runs, one-liners), broken HTML-ish whitespace, malformed
JSON lines and records without a text field. Written as a plain ``.jsonl``, a ``.jsonl.gz`` and,
when pyarrow is installed, a ``.parquet`` shard.
"""

from __future__ import annotations

import gzip
import importlib
import json
import random
from pathlib import Path
from typing import Any

__all__ = ["corpus_records", "write_corpus"]

_TOPICS = {
    "cooking": "recipe oven flour butter garlic simmer onion pepper sauce roast bake dough salt "
    "lemon basil tomato kitchen skillet minutes tender golden crispy season stir".split(),
    "travel": "train station harbour village museum mountain trail ferry hostel market bridge "
    "coast island valley journey ticket guide castle river sunset cathedral square".split(),
    "science": "experiment molecule energy particle theory measurement sample laboratory climate "
    "ocean cell protein signal telescope galaxy orbit data model result evidence".split(),
    "software": "compiler function memory thread library release version database query cache "
    "server request latency benchmark module interface error patch branch build".split(),
    "gardening": "soil seed compost tomato roses pruning spring frost watering mulch bed shade "
    "leaves roots harvest greenhouse beans weeds orchard blossom".split(),
}
_COMMON = (
    "the a of and to in is was for on with as it by at from that this which we they our their "
    "after before during while every most some many few new old first last small large early "
    "late good best quiet busy simple careful"
).split()
_VERBS = "found made took showed used built tried kept moved opened started finished".split()
_SPAM = [
    "BUY NOW!!! Best prices $$$ click here click here click here",
    "Home | About | Contact | Privacy | Terms | Sitemap | Login | Register",
    "!!!!!!!!!! ########## $$$$$$$$$$ @@@@@@@@@@",
    "lorem ipsum",
    "http://spam.example/a http://spam.example/b http://spam.example/c http://spam.example/d",
]


def _sentence(rng: random.Random, words: list[str]) -> str:
    n = rng.randint(7, 19)
    out = []
    for i in range(n):
        pool = words if rng.random() < 0.45 else (_VERBS if i % 5 == 2 else _COMMON)
        out.append(rng.choice(pool))
    text = " ".join(out)
    return text[0].upper() + text[1:] + rng.choice([".", ".", ".", "!", "?"])


def _article(rng: random.Random) -> str:
    topic = rng.choice(sorted(_TOPICS))
    words = _TOPICS[topic]
    paragraphs = []
    for _ in range(rng.randint(2, 6)):
        paragraphs.append(" ".join(_sentence(rng, words) for _ in range(rng.randint(3, 7))))
    return "\n\n".join(paragraphs)


def _luhn_card(rng: random.Random) -> str:
    digits = [4] + [rng.randrange(10) for _ in range(14)]  # a Visa-shaped number
    total = 0
    for i, digit in enumerate(reversed(digits)):
        doubled = digit * 2 if i % 2 == 0 else digit
        total += doubled - 9 if doubled > 9 else doubled
    digits.append((10 - total % 10) % 10)
    s = "".join(map(str, digits))
    return f"{s[:4]} {s[4:8]} {s[8:12]} {s[12:]}"


def _pii(rng: random.Random, i: int) -> str:
    kind = rng.randrange(4)
    if kind == 0:
        return f"Questions? Write to editor{i}@example.org."
    if kind == 1:
        return f"The mirror is at 93.184.{rng.randrange(256)}.{rng.randrange(1, 255)}."
    if kind == 2:
        key = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
        return f"Config used aws_access_key_id AKIA{key} by mistake."
    return f"Paid with card {_luhn_card(rng)} yesterday."


def corpus_records(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """``count`` records ``{"id", "url", "text"}`` (a few malformed ones are strings)."""
    rng = random.Random(seed)
    originals: list[str] = []
    out: list[dict[str, Any]] = []
    for i in range(count):
        roll = rng.random()
        if originals and roll < 0.12:
            text = rng.choice(originals)  # a syndicated copy
        elif originals and roll < 0.20:
            words = rng.choice(originals).split(" ")
            for _ in range(rng.randint(1, 2)):
                words[rng.randrange(len(words))] = rng.choice(_COMMON)
            text = " ".join(words)  # the same page, a word or two changed
        elif roll < 0.30:
            text = rng.choice(_SPAM) * rng.randint(1, 3)
        else:
            text = _article(rng)
            if rng.random() < 0.15:
                text += " " + _pii(rng, i)
            if rng.random() < 0.1:
                text = "   " + text.replace(". ", ".  \t ") + "\r\n\r\n"  # messy whitespace
            originals.append(text)
        out.append(
            {"id": f"doc-{seed}-{i}", "url": f"https://example.net/{seed}/{i}", "text": text}
        )
    return out


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

"""FusedPipeline, native vs fallback side by side: the same texts (byte for byte), keep masks,
reasons, fields, coordinates and counters, batch after batch, for generated corpora that mix
prose, duplicates, near-duplicates, PII, junk and invalid UTF-8."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from luminamoon.data.pipeline import FusedPipeline

N = pytest.importorskip("luminamoon.data._native", reason="luminamoon.data._native is not built")
F = importlib.import_module("luminamoon.data.fallbacks")


class NativePipeline(FusedPipeline):
    _backend = N


class FallbackPipeline(FusedPipeline):
    _backend = F


WORDS = (
    "the of and to in is that it was for on are as with his they at be this from have or by "
    "one had not but what all were when we there can an your which their said if do will each "
    "river house number people walk edge dog morning light water stone bridge market"
).split()

PII = [
    "mail jane.roe@example.com now",
    "server 8.8.4.4 answered",
    "key AKIAIOSFODNN7EXAMPLE here",
    "card 4111 1111 1111 1111 ok",
    "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
]
JUNK = ["buy cheap buy cheap buy cheap " * 20, "| 1 | 2 | 3 |\n" * 30, "QUJDREVGR0g=" * 40, ""]


@st.composite
def documents(draw: st.DrawFn) -> list[str | bytes]:
    rng = draw(st.randoms(use_true_random=False))
    docs: list[str | bytes] = []
    for _ in range(draw(st.integers(1, 40))):
        kind = rng.random()
        if kind < 0.15 and docs:
            docs.append(rng.choice(docs))  # exact duplicate
        elif kind < 0.3 and docs:
            base = rng.choice(docs)
            text = base.decode("utf-8", "replace") if isinstance(base, bytes) else base
            words = text.split(" ")
            if words:
                words[rng.randrange(len(words))] = rng.choice(WORDS)
            docs.append(" ".join(words))  # near duplicate
        elif kind < 0.4:
            docs.append(rng.choice(JUNK))
        else:
            n = rng.randint(5, 160)
            text = " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."
            if rng.random() < 0.3:
                text += " " + rng.choice(PII)
            if rng.random() < 0.2:
                text = text.replace(" ", rng.choice(["  ", "\t", "\r\n", "\u00a0"]), 3)
            if rng.random() < 0.1:
                docs.append(text.encode() + b"\xff\xc3(" + b" end")
                continue
            if rng.random() < 0.05:
                text += "\ud800"
            docs.append(text)
    return docs


CONFIGS: list[dict[str, Any]] = [
    {},
    {"quality": ["gopher_quality", "c4_lines", "fineweb"]},
    {"cleaner": False, "quality": False},
    {"quality": "gopher_repetition", "near_dedup": {"threshold": 0.5, "num_perm": 32}},
    {"cleaner": {"nfc": True}, "pii": {"mask_private_ips": True}, "exact_dedup": False},
]


def run(cls: type[FusedPipeline], config: dict[str, Any], batches: list[list[str | bytes]]) -> Any:
    p = cls(threads=2, **config)
    out = []
    for i, batch in enumerate(batches):
        r = p.process(batch, fields={"i": [f"{i}:{k}" for k in range(len(batch))]})
        out.append(
            (
                [t.encode("utf-8") for t in r.texts],
                r.keep.tolist(),
                r.indices.tolist(),
                r.dropped_by.tolist(),
                [None if x is None else (x.stage, x.rule, x.value, x.threshold) for x in r.reasons],
                r.fields,
                r.counters,
                len(r),
                r.total,
            )
        )
    return out, p.stats(), p.to_config()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=st.lists(documents(), min_size=1, max_size=3), config=st.sampled_from(CONFIGS))
def test_native_equals_fallback(batches: list[list[str | bytes]], config: dict[str, Any]) -> None:
    assert run(NativePipeline, config, batches) == run(FallbackPipeline, config, batches)


def test_reader_batches_agree(tmp_path: Path) -> None:
    shard = tmp_path / "docs.jsonl"
    lines = [
        json.dumps({"text": t, "id": i, "meta": {"ok": i % 2 == 0}})
        for i, t in enumerate(["The people walk the dog to the river and back home. " * 8] * 3)
    ]
    lines.append("{not json")
    lines.append(json.dumps({"text": "Mail jane.roe@example.com please " * 20, "id": 9}))
    shard.write_text("\n".join(lines) + "\n")
    results = []
    for mod, cls in ((N, NativePipeline), (F, FallbackPipeline)):
        reader = mod.ShardReader(str(shard), fields=["id", "meta.ok"], batch_size=2)
        p = cls(quality=False)
        rows = []
        for batch in reader:
            r = p.process(batch)
            rows.append(
                (
                    list(r.texts),
                    r.fields,
                    [c.to_bytes() for c in r.coordinates or []],
                    r.end.to_bytes() if r.end else None,
                    r.counters,
                )
            )
        results.append(rows)
    assert results[0] == results[1]


def test_arrow_export_agrees(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    shard = tmp_path / "docs.jsonl"
    values = [1, -2, 2**63 + 1, 1.5, 2.0, 1e16, 1e-7, 123456789.125, True, False, None, "s", ""]
    lines = []
    for i, a in enumerate(values):
        for j, b in enumerate(values[::3]):
            text = f"Document {i} {j}: the people walk the dog to the river and back home."
            lines.append(json.dumps({"text": text, "a": a, "b": b, "ab": [a, b][i % 2]}))
    shard.write_text("\n".join(lines) + "\n")
    tables = []
    for mod, cls in ((N, NativePipeline), (F, FallbackPipeline)):
        p = cls(quality=False, near_dedup=False, exact_dedup=False)
        batches = [
            pa.table(p.process(b))
            for b in mod.ShardReader(str(shard), fields=["a", "b", "ab"], batch_size=7)
        ]
        tables.append(batches)
    assert len(tables[0]) == len(tables[1])
    for a, b in zip(tables[0], tables[1], strict=True):
        assert a.schema == b.schema
        assert a.equals(b)

"""``luminamoon-data demo``: the main job on its own corpus, SIGKILLed, resumed, compared."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import luminamoon.data as lmd
from luminamoon.data.corpus import corpus_records, write_corpus
from luminamoon.data.demo import run_demo

pytest.importorskip("pyarrow")


def test_corpus_is_deterministic_and_varied(tmp_path: Path) -> None:
    assert corpus_records(300, seed=3) == corpus_records(300, seed=3)
    assert corpus_records(300, seed=3) != corpus_records(300, seed=4)
    paths = write_corpus(tmp_path, documents=300)
    assert [Path(p).name for p in paths] == ["part-0.jsonl", "part-1.jsonl.gz", "part-2.parquet"]
    lines = Path(paths[0]).read_text().splitlines()
    assert len(lines) == 102  # 100 records + a malformed line + a record without text
    with gzip.open(paths[1], "rt") as f:
        assert len([json.loads(line) for line in f]) == 100
    texts = [r["text"] for r in corpus_records(600)]
    assert len(set(texts)) < len(texts)  # exact duplicates
    masker = lmd.PIIMasker()
    found = {category for t in texts for category in masker.mask_batch([t]).counts}
    assert {"EMAIL", "IP_ADDRESS", "API_KEY", "CREDIT_CARD"} <= found


@pytest.mark.skipif(
    not hasattr(lmd._ffi.impl, "PipelineEngine"),
    reason=f"the {lmd.BACKEND} FusedPipeline engine is not built",
)
def test_demo_resumes_exactly(tmp_path: Path) -> None:
    report = run_demo(tmp_path / "demo", documents=600, batch_size=40)
    assert report.identical, report.differing
    assert report.killed_after >= 1
    assert report.files >= 4
    text = report.render()
    assert "IDENTICAL" in text
    assert "drops by stage and rule" in text

"""PIIMasker quality on the project's labelled corpus (tests/data/pii/pii_corpus.py): span-exact
precision >= 0.99 and recall >= 0.98 per category, on both backends. Run with ``-s`` to see the
table (docs/pii.md quotes it)."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

CORPUS_FILE = Path(__file__).parent / "data" / "pii" / "pii_corpus.py"


def load_corpus_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pii_corpus", CORPUS_FILE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pii_corpus"] = module
    spec.loader.exec_module(module)
    return module


pc = load_corpus_module()
CORPUS = pc.build_corpus()


def backends() -> list[tuple[str, ModuleType]]:
    mods = [("fallback", importlib.import_module("luminamoon.data.fallbacks"))]
    with contextlib.suppress(ImportError):
        mods.insert(0, ("native", importlib.import_module("luminamoon.data._native")))
    return mods


def test_corpus_shape() -> None:
    kinds: dict[str, int] = {}
    for example in CORPUS:
        kinds[example.kind] = kinds.get(example.kind, 0) + 1
    for category in pc.CATEGORIES:
        assert kinds[f"positive:{category}"] >= 300
        assert kinds[f"negative:{category}"] >= 300
    for example in CORPUS:  # labels point at real text
        for _, start, end in example.gold:
            assert 0 <= start < end <= len(example.text)


@pytest.mark.parametrize(("name", "mod"), backends(), ids=lambda v: v if isinstance(v, str) else "")
def test_precision_and_recall(name: str, mod: ModuleType) -> None:
    report = pc.evaluate(mod.PIIMasker(), CORPUS)
    print(f"\n{name}: category      precision  recall    tp  fp  fn")
    for category, r in report.items():
        print(
            f"{name}: {category:12s} {r['precision']:9.4f} {r['recall']:7.4f} "
            f"{r['tp']:5d} {r['fp']:3d} {r['fn']:3d}"
        )
    for category, r in report.items():
        assert r["precision"] >= 0.99, (category, pc.mistakes(mod.PIIMasker(), CORPUS))
        assert r["recall"] >= 0.98, (category, pc.mistakes(mod.PIIMasker(), CORPUS))


def test_backends_agree_on_the_corpus() -> None:
    mods = backends()
    if len(mods) < 2:
        pytest.skip("luminamoon.data._native is not built")
    texts = [e.text for e in CORPUS]
    results = [m.PIIMasker().mask_batch(texts) for _, m in mods]
    assert results[0].texts == results[1].texts
    assert results[0].counts == results[1].counts

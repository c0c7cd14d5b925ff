"""bench/results_json.py: the JSON results every benchmark script appends to."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import luminamoon.data as lmd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import results_json


@pytest.fixture
def results_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LUMINAMOON_BENCH_RESULTS", str(tmp_path))
    monkeypatch.delenv("LUMINAMOON_BENCH_RECORD_QUICK", raising=False)
    return tmp_path


def test_recorded_config_names_no_folder_of_the_machine(results_dir: Path) -> None:
    config = {
        "docs": 10,
        "json": "out.json",
        "write_real": str(results_dir / "corpora"),
        "real": str(results_dir / "real"),
        "corpus": "bench/out/real",
        "seed": None,
    }
    path = results_json.record("paths", {"x": 1.0}, config=config)
    assert path is not None
    run = json.loads(path.read_text(encoding="utf-8"))["runs"][0]
    # Output destinations are left out; an absolute input path keeps its last component; a
    # relative one (inside the repository) is kept whole.
    assert run["config"] == {"docs": 10, "real": "real", "corpus": "bench/out/real", "seed": None}
    assert str(results_dir) not in path.read_text(encoding="utf-8")


def test_record_appends_runs_with_machine_and_commit(results_dir: Path) -> None:
    first = {"ascii": {"ours": 100.0, "peer": 10.0}, "rows": [{"name": "a", "mb_per_s": 5}]}
    second = {"ascii": {"ours": 150.0, "peer": 10.0}, "rows": [{"name": "a", "mb_per_s": 4}]}
    path = results_json.record("demo", first, config={"docs": 10, "json": "x.json"})
    assert path == results_dir / "demo.json"
    results_json.record("demo", second, config={"docs": 10})
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["format"] == 1
    assert document["benchmark"] == "demo"
    assert [run["figures"] for run in document["runs"]] == [first, second]
    run = document["runs"][0]
    assert run["config"] == {"docs": 10}  # the --json path is not a figure's condition
    assert run["machine"]["backend"] == lmd.BACKEND
    assert run["machine"]["cpus"] >= 1
    assert run["machine"]["build"] == lmd.build_info()
    assert set(run["commit"]) == {"sha", "dirty"}
    assert run["date"].endswith("+00:00")


def test_quick_runs_are_not_recorded_unless_asked(
    results_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert results_json.record("smoke", {"x": 1}, quick=True) is None
    assert not (results_dir / "smoke.json").exists()
    monkeypatch.setenv("LUMINAMOON_BENCH_RECORD_QUICK", "1")
    assert results_json.record("smoke", {"x": 1}, quick=True) == results_dir / "smoke.json"


def test_compare_pairs_numeric_figures_by_path() -> None:
    old = {"a": {"ours": 100.0, "zero": 0}, "rows": [{"name": "peer", "s": 2.0}], "flag": True}
    new = {"a": {"ours": 150.0, "zero": 1}, "rows": [{"name": "peer", "s": 1.0}], "extra": 3}
    rows = results_json.compare(old, new)
    assert rows == [
        ("a.ours", 100.0, 150.0, 1.5),
        ("a.zero", 0.0, 1.0, None),
        ("rows[peer].s", 2.0, 1.0, 0.5),
    ]


def test_cli_list_and_compare(results_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results_json.record("cli", {"mb_per_s": 10.0})
    results_json.record("cli", {"mb_per_s": 12.5})
    capsys.readouterr()
    assert results_json.main(["list", "cli"]) == 0
    assert capsys.readouterr().out.count("\n") == 2
    assert results_json.main(["compare", "cli"]) == 0
    out = capsys.readouterr().out
    assert "1.250x" in out
    assert "mb_per_s" in out

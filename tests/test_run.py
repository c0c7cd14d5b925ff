"""``luminamoon-data run`` and ``stats``: output, report, resume, configs and bad input.

Runs on the live backend (the suite runs once per backend). The crash half (SIGKILL at random
moments) is ``test_run_crash.py``; here interruptions are injected in-process at chosen points.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

import crash_harness as harness
import luminamoon.data as lmd
from luminamoon.data import cli
from luminamoon.data import run as run_module
from luminamoon.data.errors import ConfigError, RunError, RunInterruptedError
from luminamoon.data.run import run
from luminamoon.data.serialization import ShardedWriter
from run_corpus import cli_command, write_corpus

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

pytestmark = pytest.mark.skipif(
    not hasattr(lmd._ffi.impl, "PipelineEngine"),
    reason=f"the {lmd.BACKEND} FusedPipeline engine is not built",
)

OPTIONS: dict[str, Any] = {
    "fields": ["id", "url"],
    "max_rows_per_file": 40,
    "batch_size": 24,
    "row_group_size": 20,
    "progress": "none",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return write_corpus(tmp_path_factory.mktemp("corpus"), per_shard=90)


@pytest.fixture(scope="module")
def reference(corpus: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reference") / "out"
    run(corpus, out, **OPTIONS)
    return out


def tree(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != "timings.json"
    }


def expected_documents(corpus: list[str]) -> tuple[list[str], list[str]]:
    """The kept texts and ids, computed stage by stage with a FusedPipeline in memory."""
    pipeline = lmd.FusedPipeline()
    texts: list[str] = []
    ids: list[str] = []
    text_shards = [p for p in run_module.expand_inputs(corpus) if not p.endswith(".parquet")]
    for batch in lmd.ShardReader(text_shards, fields=["id"], batch_size=24):
        result = pipeline.process(batch)
        texts += result.texts.to_pylist()
        ids += result.fields["id"]
    table = pq.read_table(corpus[2]).filter(pa.compute.is_valid(pq.read_table(corpus[2])["text"]))
    for lo in range(0, table.num_rows, 24):
        part = table.slice(lo, 24)
        result = pipeline.process(
            part["text"].combine_chunks(), fields={"id": part["id"].to_pylist()}
        )
        texts += result.texts.to_pylist()
        ids += result.fields["id"]
    return texts, ids


def test_output_and_report(corpus: list[str], reference: Path) -> None:
    names = sorted(p.name for p in reference.iterdir())
    files = [n for n in names if n.endswith(".parquet")]
    assert names == sorted([".luminamoon", "pipeline.toml", "report.json", *files])
    assert files == [f"{i:05d}.parquet" for i in range(len(files))]
    table = pa.concat_tables([pq.read_table(reference / f) for f in files])
    assert table.column_names == ["text", "id", "url"]
    texts, ids = expected_documents(corpus)
    assert table.column("text").to_pylist() == texts
    assert table.column("id").to_pylist() == ids
    assert pq.read_schema(reference / files[0]).field("text").type == pa.string()

    report = json.loads((reference / "report.json").read_bytes())
    assert report["documents"]["out"] == len(texts) == table.num_rows
    assert report["documents"]["in"] == 3 * 90 - 1  # one null text in the Parquet shard
    assert report["documents"]["in"] - report["documents"]["out"] == sum(
        rule["count"] for rules in report["drops"].values() for rule in rules.values()
    )
    assert report["duplicates"]["exact"] > 0
    assert report["duplicates"]["near"] > 0
    assert report["pii"]["EMAIL"] > 0
    assert report["pii"]["IP_ADDRESS"] > 0
    duplicate = report["drops"]["exact_dedup"]["duplicate"]
    assert 1 <= len(duplicate["examples"]) <= 3
    assert set(duplicate["examples"][0]) == {"id", "record", "shard"}
    assert report["malformed"]["malformed_json"]["examples"][0].startswith(
        f"{corpus[0][:-7]}a.jsonl:8 "
    )
    assert report["malformed"]["missing_field"]["count"] == 1
    assert report["malformed"]["null_text"] == {"count": 1, "examples": [f"{corpus[2]}#row 5"]}
    assert [f["name"] for f in report["output"]["files"]] == files
    assert sum(f["rows"] for f in report["output"]["files"]) == table.num_rows
    # Each file ends with the first batch that took it to 40 rows: whole batches, >= 40 rows.
    assert all(f["rows"] >= 40 for f in report["output"]["files"][:-1])
    # The stored config rebuilds the same pipeline.
    stored = lmd.FusedPipeline.from_config(reference / "pipeline.toml")
    assert stored.to_config() == lmd.FusedPipeline().to_config()


def test_rerun_of_a_finished_run_changes_nothing(corpus: list[str], reference: Path) -> None:
    before = tree(reference)
    report = run(corpus, reference, **OPTIONS)
    assert tree(reference) == before
    assert report == json.loads(before["report.json"])


@pytest.mark.parametrize("fail_at", [1, 3, 6])
def test_interrupted_runs_resume_to_identical_output(
    corpus: list[str],
    reference: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fail_at: int,
) -> None:
    """Ctrl-C (KeyboardInterrupt) and a full disk (ENOSPC) at the n-th write; rerun; compare."""
    out = tmp_path / "out"
    real_write = ShardedWriter.write
    calls = [0]

    def failing_write(self: ShardedWriter, data: object) -> str | None:
        calls[0] += 1
        if calls[0] == fail_at:
            raise KeyboardInterrupt
        if calls[0] == fail_at + 2:
            raise OSError(28, "No space left on device", str(self.path_of(self.next_shard)))
        return real_write(self, data)

    monkeypatch.setattr(ShardedWriter, "write", failing_write)
    with pytest.raises(RunInterruptedError, match="Run the same command again to resume"):
        run(corpus, out, **OPTIONS)
    assert not (out / "report.json").exists()
    assert not [p for p in out.iterdir() if p.name.endswith(".partial")]
    with pytest.raises(RunError, match=r"No space left on device\. The last commit .* is intact"):
        run(corpus, out, **OPTIONS)
    monkeypatch.setattr(ShardedWriter, "write", real_write)
    run(corpus, out, **OPTIONS)
    assert tree(out) == tree(reference)


def test_formats(corpus: list[str], tmp_path: Path) -> None:
    outputs = {}
    for format in ("ipc", "jsonl"):
        out = tmp_path / format
        run(corpus, out, **{**OPTIONS, "format": format})
        ext = {"ipc": "arrow", "jsonl": "jsonl"}[format]
        files = sorted(out.glob(f"*.{ext}"))
        assert files
        if format == "ipc":
            assert files[0].read_bytes()[:6] == b"ARROW1"
            texts = [
                t for f in files for t in pa.ipc.open_file(f).read_all().column("text").to_pylist()
            ]
        else:
            texts = [json.loads(line)["text"] for f in files for line in f.read_text().splitlines()]
        outputs[format] = texts
    assert outputs["ipc"] == outputs["jsonl"]
    assert outputs["ipc"] == expected_documents(corpus)[0]


def test_config_preset_and_mismatch(corpus: list[str], tmp_path: Path) -> None:
    config = tmp_path / "pipeline.toml"
    config.write_text('[quality]\npresets = ["c4"]\n\n[near_dedup]\nthreshold = 0.9\n')
    out = tmp_path / "out"
    report = run(corpus, out, config=config, pii=False, **OPTIONS)
    assert report["pii"] is None
    stored = run_module._toml_loads((out / "pipeline.toml").read_text())
    assert stored["quality"]["presets"] == ["c4"]
    assert stored["pii"] is False
    with pytest.raises(RunError) as error:
        run(corpus, out, config=config, preset=["fineweb"], **{**OPTIONS, "format": "jsonl"})
    message = str(error.value)
    assert "holds a run with a different configuration" in message
    assert 'quality.presets (["c4"] in the stored run, ["fineweb"] now)' in message
    assert 'run.format ("parquet" in the stored run, "jsonl" now)' in message
    assert "pii" in message
    # Another thread count is not a different configuration.
    run(corpus, out, config=config, pii=False, threads=1, **OPTIONS)


def test_changed_shard_is_refused(corpus: list[str], tmp_path: Path) -> None:
    shard = tmp_path / "one.jsonl"
    shard.write_text(Path(corpus[0].replace("*.jsonl", "a.jsonl")).read_text())
    out = tmp_path / "out"
    run([str(shard)], out, **OPTIONS)
    with shard.open("a") as f:
        f.write('{"text": "appended later"}\n')
    with pytest.raises(
        RunError, match=r"run\.shard_bytes \(\[\d+\] in the stored run, \[\d+\] now\)"
    ):
        run([str(shard)], out, **OPTIONS)


def test_bad_inputs(corpus: list[str], tmp_path: Path) -> None:
    directory = Path(corpus[2]).parent
    with pytest.raises(
        RunError, match=r"input '.*/\*\.jsnl' matches no file; did you mean '.*/\*\.jsonl'\?"
    ):
        run([str(directory / "*.jsnl")], tmp_path / "o1", progress="none")
    with pytest.raises(RunError, match=r"input '.*/zz\*' matches no file \('.*' holds a\.jsonl, "):
        run([str(directory / "zz*")], tmp_path / "o1", progress="none")
    with pytest.raises(
        RunError, match=r"input '.*/b\.jsonl\.zg' does not exist; did you mean '.*/b\.jsonl\.gz'"
    ):
        run([str(directory / "b.jsonl.zg")], tmp_path / "o2", progress="none")
    with pytest.raises(RunError, match=r"directory '.*/nowhere' does not exist"):
        run([str(directory / "nowhere" / "*.jsonl")], tmp_path / "o3", progress="none")
    with pytest.raises(RunError, match="matches no file"):
        run([str(directory / "*.jsonl"), str(directory / "none-*.jsonl")], tmp_path / "o3")
    with pytest.raises(
        RunError,
        match=r"text field 'txt' is missing from every record sampled .*a\.jsonl:1: field 'txt' "
        r"not found; did you mean 'text'\?",
    ):
        run([corpus[0]], tmp_path / "o4", text_field="txt", progress="none")
    with pytest.raises(
        RunError,
        match=r"c\.parquet: the Parquet shard has no column 'txt' \(text field\); did you mean "
        r"'text'",
    ):
        run([corpus[2]], tmp_path / "o5", text_field="txt", progress="none")
    with pytest.raises(ConfigError, match="unknown output format 'parqet'; did you mean 'parquet'"):
        run([corpus[0]], tmp_path / "o6", format="parqet")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RunError, match="cannot write to the output directory"):
        run([corpus[0]], blocker / "out", progress="none")
    csv = tmp_path / "x.csv"
    csv.write_text("a,b\n")
    with pytest.raises(RunError, match="unknown shard type"):
        run([str(csv)], tmp_path / "o7")


def test_text_field_missing_from_every_record_after_sampling(tmp_path: Path) -> None:
    shard = tmp_path / "late.jsonl"
    shard.write_text("not json\n" * 300 + '{"body": "x"}\n' * 2)
    with pytest.raises(
        RunError,
        match=r"missing from every record that parsed \(2 records\); first: .*late\.jsonl:301",
    ):
        run([str(shard)], tmp_path / "out", progress="none")


def test_foreign_output_directory(corpus: list[str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "00000.parquet").write_bytes(b"not ours")
    with pytest.raises(RunError, match="already holds output files"):
        run(corpus, out, progress="none")


def test_progress_lines(corpus: list[str], tmp_path: Path) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    run(
        corpus[:1],
        tmp_path / "tty",
        progress="auto",
        progress_stream=terminal,
        **{k: v for k, v in OPTIONS.items() if k != "progress"},
    )
    text = terminal.getvalue()
    assert "\r\x1b[2K" in text
    assert "docs/s" in text
    assert "MB/s" in text
    assert "kept" in text
    assert "ETA" in text  # a plain .jsonl: the input size is known
    log = io.StringIO()
    run(
        corpus[1:2],
        tmp_path / "log",
        progress="auto",
        progress_stream=log,
        **{k: v for k, v in OPTIONS.items() if k != "progress"},
    )
    lines = log.getvalue().splitlines()
    assert all(line.startswith("luminamoon-data run: ") for line in lines)
    assert any("committed 00000.parquet" in line for line in lines)
    assert "\r" not in log.getvalue()
    assert "ETA" not in log.getvalue()  # .gz: the uncompressed size is unknown


def test_cli_run_and_stats(
    corpus: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = cli.main(
        [
            "run",
            *corpus,
            "-o",
            str(out),
            "--fields",
            "id",
            "--progress",
            "none",
            "--preset",
            "gopher_quality,fineweb",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "documents  in 269" in printed
    assert "throughput" in printed
    assert cli.main(["stats", str(out)]) == 0
    again = capsys.readouterr().out
    assert again.splitlines()[:3] == printed.splitlines()[:3]
    assert cli.main(["stats", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads((out / "report.json").read_bytes())
    assert cli.main(["stats", str(tmp_path)]) == 1
    assert "no finished run" in capsys.readouterr().err
    assert cli.main(["run", "/nonexistent/*.jsonl", "-o", str(tmp_path / "x")]) == 1
    assert "matches no file" in capsys.readouterr().err
    assert cli.main(["runn"]) == 2
    assert "did you mean 'run'" in capsys.readouterr().err


def test_cli_ctrl_c_stops_at_the_last_commit(corpus: list[str], tmp_path: Path) -> None:
    """SIGINT to the real CLI: exit code 130, a resumable directory, then identical output."""
    out = tmp_path / "out"
    argv = cli_command(corpus, out)
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=harness.child_env(lmd.BACKEND),
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if "committed 00000.parquet" in line:
            proc.send_signal(signal.SIGINT)
            break
    rest = proc.stderr.read()
    code = proc.wait(timeout=120)
    if code == 0:
        pytest.skip("the run finished before the signal arrived")
    assert code == 130, rest
    assert "Run the same command again to resume" in rest
    assert not (out / "report.json").exists()
    assert (
        subprocess.run(
            argv, env=harness.child_env(lmd.BACKEND), capture_output=True, check=False
        ).returncode
        == 0
    )
    reference = tmp_path / "reference"
    run(corpus, reference, **OPTIONS)
    assert tree(out) == tree(reference)
    assert os.path.exists(out / ".luminamoon" / "timings.json")

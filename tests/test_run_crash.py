"""SIGKILL ``luminamoon-data run`` at random moments; rerunning the same command must end with an
output directory byte-identical to an uninterrupted run's.

Per backend: one uninterrupted reference run (timed), then a chain of runs of the same command
into a second directory, each SIGKILLed after a random delay within the reference's duration
(from interpreter start-up to the last commit). After every kill the directory must hold only
complete files under final names, each equal to the reference's file of that name (a file renamed
but not yet committed included), and no report. A last run completes the job; then every file of
the two directories is compared byte for byte, except ``.luminamoon/timings.json`` (the wall-clock
timings, the only thing that differs by design). Half the kills are timed from the spawn (start-up
included), half from the k-th "committed" progress line of the child (so they land inside the
job whatever the start-up costs). ``LUMINAMOON_RUN_CRASH_KILLS`` sets the kills per backend
(default 8).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import crash_harness as harness
import luminamoon.data as lmd
from run_corpus import cli_command, write_corpus

pytest.importorskip("pyarrow")

TIMINGS = Path(".luminamoon") / "timings.json"


def _has_pipeline(name: str) -> bool:
    try:
        return hasattr(harness.backend_module(name), "PipelineEngine")
    except ImportError:
        return False


# Each backend's chain runs in the suite pass of that backend (CI runs the suite once per
# backend): the children are separate processes, so running both chains in both passes would only
# repeat the same work.
BACKENDS = [
    pytest.param(
        "native",
        marks=pytest.mark.skipif(
            not (harness.NATIVE and _has_pipeline("native")) or lmd.BACKEND != "native",
            reason="runs in the native pass of the suite, with the native FusedPipeline built",
        ),
    ),
    pytest.param(
        "fallback",
        marks=pytest.mark.skipif(
            lmd.BACKEND != "fallback" and harness.NATIVE,
            reason="runs in the fallback pass of the suite (LUMINAMOON_FORCE_FALLBACK=1)",
        ),
    ),
]


def tree(directory: Path) -> dict[str, bytes]:
    """Every file below ``directory`` (relative path -> bytes), timings excluded."""
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.relative_to(directory) != TIMINGS
    }


def run_to_end(argv: list[str], backend: str, log: Path) -> float:
    started = time.monotonic()
    with log.open("wb") as err:
        done = subprocess.run(
            argv,
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=harness.child_env(backend),
            timeout=300,
        )
    assert done.returncode == 0, log.read_text(errors="replace")
    return time.monotonic() - started


def check_after_kill(out: Path, reference: dict[str, bytes]) -> int:
    """Invariants of a killed run's directory; returns the number of complete output files."""
    if not out.exists():
        return 0
    files = 0
    for path in sorted(out.iterdir()):
        name = path.name
        if path.is_dir():
            assert name == ".luminamoon", name
            continue
        if name.startswith(".") and name.endswith(".partial"):
            continue  # an unfinished file under its temporary name
        assert name in reference, f"unexpected file {name} after a kill"
        if name == "report.json":
            assert path.read_bytes() == reference[name]
            continue
        if name == "pipeline.toml":
            assert path.read_bytes() == reference[name]
            continue
        assert path.read_bytes() == reference[name], f"{name} differs from the reference"
        files += 1
    return files


@pytest.mark.parametrize("backend", BACKENDS)
def test_kill_and_rerun_is_byte_identical(backend: str, tmp_path: Path) -> None:
    inputs = write_corpus(tmp_path / "in", per_shard=90)
    ref_dir = tmp_path / "reference"
    seconds = run_to_end(cli_command(inputs, ref_dir), backend, tmp_path / "reference.log")
    reference = tree(ref_dir)
    outputs = [name for name in reference if name.endswith(".parquet")]
    assert len(outputs) >= 4, "the corpus should give several output files"

    out = tmp_path / "crashed"
    argv = cli_command(inputs, out)
    rng = random.Random(f"run-crash-{backend}")
    kills = harness.kill_count("LUMINAMOON_RUN_CRASH_KILLS", 8)
    finished_early = 0
    most_files = 0
    resumed_runs = 0
    for i in range(kills):
        before = check_after_kill(out, reference)
        resumed_runs += before > 0
        remaining = len(outputs) - before
        if remaining < 2 or rng.random() < 0.5:
            # Anywhere from interpreter start-up to the end of the run.
            kill = harness.spawn_and_kill(
                argv,
                backend=backend,
                stderr_path=tmp_path / f"stderr-{i}.txt",
                rng=rng,
                max_delay=seconds,
                ready_line=False,
                may_finish=True,
            )
        else:
            # Up to 40 ms after the k-th file committed: inside the next file, its rename, the
            # record write or the checkpoint commit.
            kill = harness.spawn_and_kill(
                argv,
                backend=backend,
                stderr_path=tmp_path / f"stderr-{i}.txt",
                rng=rng,
                max_delay=0.040,
                may_finish=True,
                after_stderr=(b"committed ", rng.randint(1, remaining - 1)),
            )
        if not kill.killed:
            assert kill.returncode == 0, (tmp_path / f"stderr-{i}.txt").read_text()
            # It got to the end: check it, then start a new chain from an empty directory.
            assert tree(out) == reference
            shutil.rmtree(out)
            finished_early += 1
            continue
        most_files = max(most_files, check_after_kill(out, reference))
    run_to_end(argv, backend, tmp_path / "final.log")
    crashed = tree(out)
    assert sorted(crashed) == sorted(reference)
    for name, data in reference.items():
        assert crashed[name] == data, f"{name} differs after {kills} kills"
    print(
        f"\n[run crash] {backend}: reference {seconds:.1f} s, {kills} kills, "
        f"{resumed_runs} runs resumed a partial output, {finished_early} finished before their "
        f"kill, up to {most_files} of {len(outputs)} output files present after a kill"
    )
    if kills >= 4:
        assert resumed_runs > 0, "no kill landed after a commit: the delays test nothing"


@pytest.mark.skipif(
    not (harness.NATIVE and _has_pipeline("native")) or lmd.BACKEND != "native",
    reason="runs in the native pass of the suite, with the native FusedPipeline built",
)
def test_backends_write_the_same_directory(tmp_path: Path) -> None:
    """native and fallback runs of one command: every file equal, except the reader's wording of
    malformed-JSON reasons in the report and commit record (simdjson vs json, docs/readers.md)."""
    inputs = write_corpus(tmp_path / "in", per_shard=60)
    trees = []
    for backend in ("native", "fallback"):
        out = tmp_path / backend
        run_to_end(cli_command(inputs, out), backend, tmp_path / f"{backend}.log")
        trees.append(tree(out))
    native, fallback = trees
    assert sorted(native) == sorted(fallback)
    for name in native:
        if name.endswith(".json"):
            assert _same_wording(json.loads(native[name])) == _same_wording(
                json.loads(fallback[name])
            ), name
        else:
            assert native[name] == fallback[name], name


def _same_wording(value: object) -> object:
    """``value`` with every malformed-JSON reason cut after its location."""
    if isinstance(value, dict):
        return {k: _same_wording(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_same_wording(v) for v in value]
    if isinstance(value, str) and "malformed JSON" in value:
        return value[: value.index("malformed JSON")]
    return value

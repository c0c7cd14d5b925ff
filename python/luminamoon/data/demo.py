"""``luminamoon-data demo``: the main job on a corpus it makes, killed mid-run and resumed exactly.

``run_demo`` writes a varied synthetic corpus (``corpus.py``: duplicates, near-duplicates, PII,
junk, malformed lines; JSONL, gzip and Parquet shards), then runs ``luminamoon-data run`` on it in
a child process and SIGKILLs the child right after its first committed output file. The same
command is run again: it resumes from the last commit and finishes. Finally an uninterrupted run
writes a reference directory, and the two directories are compared file by file, byte for byte
(all but the timings file).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ._ffi import BACKEND
from .corpus import write_corpus
from .run import format_report, load_report, run
from .run_report import STATE_DIR, TIMINGS_NAME

__all__ = ["DemoReport", "run_demo"]


@dataclass
class DemoReport:
    workdir: Path
    documents: int
    files: int
    killed_after: int  # committed files on disk when the first child was killed
    resumed_seconds: float
    report_text: str
    identical: bool
    differing: list[str]

    def render(self) -> str:
        verdict = (
            "IDENTICAL: the killed-and-resumed output equals the uninterrupted run's, byte for byte"
            if self.identical
            else "DIFFERENT: " + ", ".join(self.differing)
        )
        return "\n".join(
            [
                f"luminamoon-data demo ({BACKEND} backend): {self.documents:,} documents in "
                f"{self.workdir / 'corpus'}",
                f"  run 1: SIGKILLed after {self.killed_after} committed file(s)",
                f"  run 2: the same command resumed and finished in {self.resumed_seconds:.1f} s",
                "",
                self.report_text,
                "",
                f"  {self.files} output files in {self.workdir / 'out'}; reference run in "
                f"{self.workdir / 'reference'}",
                f"  {verdict}",
            ]
        )


def _tree(directory: Path) -> dict[str, bytes]:
    timings = Path(STATE_DIR) / TIMINGS_NAME
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.relative_to(directory) != timings
    }


def _say(message: str) -> None:
    print(f"[demo] {message}", file=sys.stderr, flush=True)


def run_demo(workdir: Path, documents: int = 30_000, batch_size: int = 1_000) -> DemoReport:
    """Make a corpus, run the job, SIGKILL it after its first file, resume, compare."""
    workdir = Path(workdir)
    if workdir.exists():
        shutil.rmtree(workdir)
    _say(f"writing a {documents:,}-document corpus")
    inputs = write_corpus(workdir / "corpus", documents)
    out = workdir / "out"
    options = ["--fields", "id,url", "--batch-size", str(batch_size)]
    options += ["--max-rows-per-file", str(max(1, documents // 8))]
    argv = [sys.executable, "-m", "luminamoon.data.cli", "run", *inputs, "-o", str(out), *options]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")) if p
    )

    _say("run 1: luminamoon-data run ... (to be SIGKILLed after its first committed file)")
    child = subprocess.Popen(
        [*argv, "--progress", "log"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    )
    assert child.stderr is not None
    for line in child.stderr:
        if b"committed " in line:
            child.send_signal(signal.SIGKILL)
            break
    child.wait()
    child.stderr.close()
    killed_after = sum(1 for p in out.glob("*.parquet")) if out.exists() else 0
    _say(f"run 1 killed (exit {child.returncode}); {killed_after} file(s) on disk")

    _say("run 2: the same command again")
    started = time.monotonic()
    done = subprocess.run(
        [*argv, "--progress", "none"], env=env, capture_output=True, text=True, check=False
    )
    resumed = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"the resumed run failed ({done.returncode}):\n{done.stderr}")

    _say("reference: an uninterrupted run")
    reference = workdir / "reference"
    run(
        inputs,
        reference,
        fields=["id", "url"],
        batch_size=batch_size,
        max_rows_per_file=max(1, documents // 8),
        progress="none",
    )
    ours, theirs = _tree(out), _tree(reference)
    differing = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
    report, timings = load_report(out)
    return DemoReport(
        workdir=workdir,
        documents=documents,
        files=len(report["output"]["files"]),
        killed_after=killed_after,
        resumed_seconds=resumed,
        report_text=format_report(report, timings),
        identical=not differing,
        differing=differing,
    )

"""SIGKILL a training loop that streams from ResumablePipeline; the stream must go on exactly.

Per source format (jsonl with a seeded shuffle, txt, parquet, gz, zst, and a Python iterable with
a shuffle): one uninterrupted reference run in this process, then a chain of child processes
(``stream_crash_child.py``) that prefetch 3 batches, commit every 4 steps and are SIGKILLed at
random moments: during start-up and the resume itself (odd runs, mostly: timed from the spawn),
and otherwise within 40 ms after the 1st or 2nd commit of the run - during training and
prefetch, in the window between the optimizer step and ``commit`` (the child sleeps there), or
inside the commit. After every kill:

* every batch the child received equals the reference batch of that id (ids, or a hash of the
  texts for .txt), and its first batch is the one after the committed one;
* the checkpoint's committed batch never goes back and covers every commit the child logged,
  and no commit lands for a batch the child never received.

A final child runs to the end; then the committed batches of all runs, concatenated, equal the
reference run batch for batch — through the 1st, 2nd, 3rd, ... resume (the test checks that at
least three runs resumed from a commit). ``LUMINAMOON_STREAM_CRASH_KILLS`` sets the kills per
format (default 3), ``LUMINAMOON_STREAM_CRASH_SEED`` varies the kill schedule.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import crash_harness as harness
import luminamoon.data as lmd
import stream_corpus as sc
import stream_crash_child as child

CHILD = Path(__file__).with_name("stream_crash_child.py")
EVERY = 4


def _log(path: Path) -> list[tuple[str, int, str]]:
    if not path.exists():
        return []
    lines = path.read_text(encoding="ascii").split("\n")[:-1]  # drop a torn tail
    out = []
    for line in lines:
        kind, rest = line[0], line[2:]
        number, _, what = rest.partition(" ")
        out.append((kind, int(number), what))
    return out


def _committed(meta: Path) -> int:
    if not meta.exists():
        return -1
    tracker = lmd.StateTracker(meta, read_only=True)
    try:
        return tracker.committed_batch_id if tracker.epoch > 0 else -1
    finally:
        tracker.close()


@pytest.mark.parametrize("fmt", sc.FORMATS)
def test_sigkill_anywhere_then_resume_gives_the_uninterrupted_stream(
    tmp_path: Path, fmt: str
) -> None:
    data = tmp_path / "data"
    if fmt != "iterable":
        sc.write_corpus(data, fmt, child.DOCS, child.SHARDS)
    with child.make_pipeline(lmd, fmt, data, tmp_path / "ref" / "t.meta") as pipe:
        reference = [child.describe(batch) for batch in pipe]
    assert len(reference) > 6 * EVERY

    meta = tmp_path / "ck" / "t.meta"
    rng = random.Random(f"{fmt}-{lmd.BACKEND}-{os.environ.get('LUMINAMOON_STREAM_CRASH_SEED', '')}")
    kills = harness.kill_count("LUMINAMOON_STREAM_CRASH_KILLS", 3)
    committed = -1
    consumed: list[tuple[int, str]] = []  # committed batches of every run, in order
    resumed_from_commit = 0
    argv_base = [sys.executable, str(CHILD), lmd.BACKEND, fmt, str(data), str(meta)]
    runs = 0
    finished = False
    while not finished:
        log = tmp_path / f"run{runs}.log"
        argv = [*argv_base, str(log), str(EVERY)]
        last_run = runs >= kills
        resumed_from_commit += committed >= 0
        if last_run:
            done = subprocess.run(
                argv,
                check=False,
                capture_output=True,
                env=harness.child_env(lmd.BACKEND),
                timeout=120,
            )
            assert done.returncode == 0, done.stderr.decode(errors="replace")
        elif runs % 2 == 1 and rng.random() < 0.6:
            # During start-up or the resume itself (opening the checkpoint, seeking, the first
            # prefetch), or a little later.
            harness.spawn_and_kill(
                argv,
                backend=lmd.BACKEND,
                stderr_path=tmp_path / f"run{runs}.err",
                rng=rng,
                max_delay=0.3,
                min_delay=0.02,
                ready_line=False,
                may_finish=True,
            )
        else:
            # After the n-th commit of this run, at a random point of the following steps:
            # training, prefetching, between the optimizer step and the commit, inside it.
            harness.spawn_and_kill(
                argv,
                backend=lmd.BACKEND,
                stderr_path=tmp_path / f"run{runs}.err",
                rng=rng,
                max_delay=0.04,
                after_stderr=(b"committed", rng.randint(1, 2)),
                may_finish=True,
            )
        entries = _log(log)
        yielded = [(n, what) for kind, n, what in entries if kind == "Y"]
        logged_commits = [n for kind, n, _ in entries if kind == "C"]
        finished = any(kind == "D" for kind, _, _ in entries)
        # Every batch received is the reference batch of its id, starting after the commit.
        assert [n for n, _ in yielded] == list(
            range(committed + 1, committed + 1 + len(yielded))
        ), (fmt, runs)
        for n, what in yielded:
            assert what == reference[n], (fmt, runs, n)
        now = _committed(meta)
        assert now >= committed, "a commit was lost"
        assert now >= max(logged_commits, default=-1), "a logged commit is not in the checkpoint"
        consumed += [(n, what) for n, what in yielded if n <= now]
        # A commit that landed for a batch the log did not reach would be a phantom commit.
        assert now <= max((n for n, _ in yielded), default=committed), "phantom commit"
        committed = now
        runs += 1
    assert consumed == list(enumerate(reference))
    assert committed == len(reference) - 1
    assert resumed_from_commit >= min(3, kills), (fmt, resumed_from_commit)

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
import sys
from pathlib import Path

import pytest

import crash_harness as harness
import luminamoon.data as lmd
import stream_corpus as sc
import stream_crash_child as child

CHILD = Path(__file__).with_name("stream_crash_child.py")
EVERY = 4


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
    argv_base = [sys.executable, str(CHILD), lmd.BACKEND, fmt, str(data), str(meta)]
    resumed_from_commit = harness.resume_chain(
        reference=reference,
        first=0,
        run_argv=lambda log: [*argv_base, str(log), str(EVERY)],
        committed_in=lambda: _committed(meta),
        backend=lmd.BACKEND,
        rng=rng,
        kills=kills,
        startup=harness.StartupKill(min_delay=0.02, max_delay=0.3),
        workdir=tmp_path,
        label=fmt,
        # A loaded box can make a start-up kill land before any commit; the kills go on (each
        # run checked in full) until three runs resumed from a commit.
        extra_kills=8,
    )
    assert resumed_from_commit >= min(3, kills), (fmt, resumed_from_commit)

"""Child of the torch crash test (``tests/test_torch_stream_crash.py``): a training loop over
``ResumablePipeline.as_torch_dataset()`` and torchdata's ``StatefulDataLoader``.

Run as ``python torch_crash_child.py BACKEND DATA STATE LOG WORKERS``: it resumes from the state
last committed to STATE (``loader.load_state_dict``), then per step "trains" (a short sleep),
appends ``Y <step> <slot> <batch_id> <ids>`` to LOG and, every ``EVERY`` steps, sleeps again (the
window between the optimizer step and the commit), commits ``{"loader": loader.state_dict(),
"step": step}`` with ``StreamDataset.commit`` (which lets every worker commit its own dedup
checkpoint up to there: ``worker_checkpoints=True``), appends ``C <step>`` and writes
``committed`` to stderr (what the parent times kills from). At the end it commits and writes
``D <step>``.

Imported by the parent for :func:`make_dataset` and :func:`loader`; nothing runs on import.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

DOCS = 160
SHARDS = 5
BATCH = 4
EVERY = 3  # commit interval (steps)
SNAPSHOT = 2  # snapshot_every_n_steps: commits between snapshots make torchdata replay steps
STEP_S = 0.004
MAX_RUNTIME_S = 60.0


def make_dataset(lmd: Any, data: Path, state: Path) -> tuple[Any, Any]:
    """(pipeline, dataset) every child and the parent's uninterrupted reference read."""
    sources = sorted(str(p) for p in data.iterdir())
    # Exact + near dedup: each worker keeps their state in its own checkpoint file
    # (worker_checkpoints=True), so a resume must restore it exactly or the stream changes.
    pipeline = lmd.FusedPipeline(quality=False, near_dedup={"threshold": 0.7}, pii=True)
    pipe = lmd.ResumablePipeline(
        sources, pipeline, checkpoint=None, batch_size=BATCH, prefetch=2, fields=["id"]
    )
    # SIGKILL, not power loss: the page cache survives a process crash (docs/checkpoint.md).
    return pipe, pipe.as_torch_dataset(checkpoint=state, durable=False, worker_checkpoints=True)


def _die_with_parent(_: int) -> None:
    """A worker of a SIGKILLed loop ends with it (Linux), instead of polling for 5 s."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def loader(ds: Any, workers: int) -> Any:
    from torchdata.stateful_dataloader import StatefulDataLoader

    return StatefulDataLoader(
        ds,
        batch_size=None,
        num_workers=workers,
        snapshot_every_n_steps=SNAPSHOT,
        worker_init_fn=_die_with_parent if sys.platform == "linux" else None,
    )


def describe(batch: Any) -> str:
    return f"{batch.slot} {batch.batch_id} " + ",".join(str(i) for i in batch.ids)


def _run(argv: list[str]) -> int:
    import luminamoon.data as lmd

    backend, data, state, log, workers = argv
    if backend != lmd.BACKEND:
        print(f"torch_crash_child: wanted {backend}, got {lmd.BACKEND}", file=sys.stderr)
        return 2
    deadline = time.monotonic() + MAX_RUNTIME_S
    pipe, ds = make_dataset(lmd, Path(data), Path(state))
    batches = loader(ds, int(workers))
    saved = ds.committed()
    step = 0
    if saved is not None:
        batches.load_state_dict(saved["loader"])
        step = saved["step"]
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    with pipe, open(log, "a", encoding="ascii") as out:
        for batch in batches:
            time.sleep(STEP_S)  # forward, backward, optimizer step
            step += 1
            out.write(f"Y {step} {describe(batch)}\n")
            out.flush()
            if step % EVERY == 0:
                time.sleep(STEP_S)  # after the optimizer step, before the commit
                ds.commit({"loader": batches.state_dict(), "step": step})
                out.write(f"C {step}\n")
                out.flush()  # the page cache survives the SIGKILL
                sys.stderr.write("committed\n")
                sys.stderr.flush()
            if time.monotonic() > deadline:
                print("torch_crash_child: ran out of time", file=sys.stderr)
                return 3
        ds.commit({"loader": batches.state_dict(), "step": step})
        out.write(f"C {step}\nD {step}\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_run(sys.argv[1:6]))

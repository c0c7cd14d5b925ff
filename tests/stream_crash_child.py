"""Child of the ResumablePipeline crash test (``tests/test_stream_crash.py``): a training loop.

Run as ``python stream_crash_child.py BACKEND FMT DATA CHECKPOINT LOG EVERY``: it builds the
stream of :func:`make_pipeline` (prefetching), resumes from the committed state and, per batch,
"trains" (a short sleep), appends ``Y <batch_id> <ids>`` to LOG, and every ``EVERY`` steps
sleeps again (the window between the optimizer step and the commit), commits, appends
``C <batch_id>`` (flushed: a SIGKILL keeps it) and writes ``committed`` to stderr (what the parent
times kills from). It commits the last batch and ends with ``D``.

Imported by the parent for :func:`make_pipeline`; nothing runs on import.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import stream_corpus as sc

DOCS = 240
SHARDS = 3
BATCH = 6
STEP_S = 0.01
MAX_RUNTIME_S = 60.0


def make_pipeline(lmd: Any, fmt: str, data: Path, checkpoint: Path, **kw: Any) -> Any:
    """The stream every child (and the parent's uninterrupted reference) reads."""
    if fmt == "iterable":
        sources: object = sc.documents(DOCS)
    else:
        sources = sorted(str(p) for p in data.iterdir())
    options: dict[str, Any] = {
        "checkpoint": checkpoint,
        "batch_size": BATCH,
        "prefetch": 3,
        "fields": ["id"] if fmt != "txt" else [],
        "shuffle": 5 if fmt in ("jsonl", "iterable") else None,
        "shuffle_buffer": 25,
        # SIGKILL, not power loss: the page cache survives a process crash (docs/checkpoint.md)
        "durable": False,
    }
    options.update(kw)
    pipeline = lmd.FusedPipeline(quality=False, near_dedup={"threshold": 0.7}, pii=True)
    return lmd.ResumablePipeline(sources, pipeline, **options)


def describe(batch: Any) -> str:
    """What identifies a batch's content in the log: ids, or the texts' hash for .txt."""
    if batch.ids is not None:
        return ",".join(str(i) for i in batch.ids)
    import zlib

    return format(zlib.crc32("\x00".join(batch.texts).encode()), "08x") + f"/{len(batch)}"


def _run(argv: list[str]) -> int:
    import luminamoon.data as lmd

    backend, fmt, data, checkpoint, log, every = argv

    if backend != lmd.BACKEND:
        print(f"stream_crash_child: wanted {backend}, got {lmd.BACKEND}", file=sys.stderr)
        return 2
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    k = int(every)
    deadline = time.monotonic() + MAX_RUNTIME_S
    with (
        make_pipeline(lmd, fmt, Path(data), Path(checkpoint)) as pipe,
        open(log, "a", encoding="ascii") as out,
    ):
        last_yielded = -1
        for batch in pipe:
            last_yielded = batch.batch_id
            time.sleep(STEP_S)  # forward, backward, optimizer step
            out.write(f"Y {batch.batch_id} {describe(batch)}\n")
            out.flush()
            if (batch.batch_id + 1) % k == 0:
                time.sleep(STEP_S)  # after the optimizer step, before the commit
                pipe.commit(batch.batch_id)
                out.write(f"C {batch.batch_id}\n")
                out.flush()  # the page cache survives the SIGKILL
                sys.stderr.write("committed\n")
                sys.stderr.flush()
            if time.monotonic() > deadline:
                print("stream_crash_child: ran out of time", file=sys.stderr)
                return 3
        if last_yielded > pipe.committed_batch_id:
            pipe.commit(last_yielded)
            out.write(f"C {last_yielded}\n")
        out.write(f"D {pipe.committed_batch_id}\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_run(sys.argv[1:7]))

"""The main job until the full pipeline lands: crash, resume, and prove the resume was exact.

``run_demo`` writes a synthetic JSONL corpus with exact duplicates, then streams it in batches
through a ``StreamDeduplicator`` attached to a ``StateTracker``, committing after every batch.
A child process does the streaming and is SIGKILLed part-way; a second child resumes from the
committed ``StreamCoordinate`` (a byte offset: O(1) seek, no replay) and finishes. The kept
documents are then compared byte for byte with an uninterrupted run.

The streaming loop is written with the public API only, as a user would write it.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ._ffi import BACKEND, impl

__all__ = ["DemoReport", "make_corpus", "run_demo", "stream_corpus"]

_WORDS = (
    "data engine token shard resume exact commit batch stream clean filter dedup model train "
    "checkpoint crash recover offset hash fast native python arrow quality corpus document"
).split()


def make_corpus(path: Path, documents: int, duplicate_rate: float = 0.3, seed: int = 7) -> None:
    """Write ``documents`` JSONL records; ``duplicate_rate`` of them repeat an earlier text."""
    rng = random.Random(seed)
    texts: list[str] = []
    with path.open("w", encoding="utf-8") as out:
        for i in range(documents):
            if texts and rng.random() < duplicate_rate:
                text = rng.choice(texts)
            else:
                words = rng.choices(_WORDS, k=rng.randint(8, 60))
                text = " ".join(words) + f" #{i}"
                texts.append(text)
            out.write(json.dumps({"id": i, "text": text}, ensure_ascii=False) + "\n")


def stream_corpus(corpus: Path, meta: Path, out_dir: Path, batch_size: int, delay: float) -> None:
    """Stream ``corpus`` from the committed position, dedup, write each batch, commit.

    Each batch's kept documents are written to ``out_dir/batch_<id>.jsonl`` (atomically) before
    the commit that records it, so after a crash the batches past the checkpoint are simply
    produced again, identically.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    with impl.StateTracker(meta) as tracker:
        dedup = impl.StreamDeduplicator(tracker)
        coordinate = tracker.coordinate
        batch_id = tracker.committed_batch_id
        with corpus.open("rb") as f:
            f.seek(coordinate.byte_offset)  # O(1) resume: no replay of what was committed
            offset = coordinate.byte_offset
            rows = coordinate.global_row_idx
            while True:
                lines = []
                for _ in range(batch_size):
                    line = f.readline()
                    if not line:
                        break
                    lines.append(line)
                if not lines:
                    break
                offset += sum(len(line) for line in lines)
                rows += len(lines)
                docs = [json.loads(line)["text"] for line in lines]
                keep = dedup.filter_batch(docs)
                batch_id += 1
                kept = "".join(
                    json.dumps({"text": d}, ensure_ascii=False) + "\n"
                    for d, k in zip(docs, keep, strict=True)
                    if k
                )
                tmp = out_dir / f".batch_{batch_id:08d}.tmp"
                tmp.write_text(kept, encoding="utf-8")
                tmp.replace(out_dir / f"batch_{batch_id:08d}.jsonl")
                tracker.update(
                    batch_id, impl.StreamCoordinate(byte_offset=offset, global_row_idx=rows)
                )
                tracker.commit()
                if delay:
                    time.sleep(delay)


@dataclass
class DemoReport:
    backend: str
    documents: int
    kept: int
    dropped: int
    batches: int
    killed_at_batch: int
    resumed_from_byte: int
    resume_seconds: float
    identical: bool
    digest: str

    def render(self) -> str:
        verdict = "IDENTICAL" if self.identical else "DIFFERENT (bug!)"
        return "\n".join(
            [
                "LuminaMoon demo: crash-safe streaming dedup",
                f"  backend                 {self.backend}",
                f"  documents read          {self.documents:,}",
                f"  kept / dropped as dups  {self.kept:,} / {self.dropped:,}",
                f"  batches committed       {self.batches:,}",
                f"  killed (SIGKILL) after  batch {self.killed_at_batch:,}",
                f"  resumed from byte       {self.resumed_from_byte:,} "
                f"(reopen took {self.resume_seconds * 1e3:.1f} ms)",
                f"  output vs uninterrupted {verdict} (sha256 {self.digest[:16]})",
            ]
        )


def _concat(out_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(out_dir.glob("batch_*.jsonl")))


def _child(corpus: Path, meta: Path, out_dir: Path, batch_size: int, delay: float) -> list[str]:
    return [
        sys.executable,
        "-c",
        "import sys; from pathlib import Path; from luminamoon.data.demo import stream_corpus; "
        "stream_corpus(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), "
        "int(sys.argv[4]), float(sys.argv[5]))",
        str(corpus),
        str(meta),
        str(out_dir),
        str(batch_size),
        str(delay),
    ]


def _progress(message: str, *, stage: bool = False) -> None:
    """A live status line on a terminal; in logs only the stage changes, one line each."""
    if sys.stderr.isatty():
        print(f"\r{message:<78}", end="\n" if stage else "", file=sys.stderr, flush=True)
    elif stage:
        print(message, file=sys.stderr, flush=True)


def run_demo(workdir: Path, documents: int = 200_000, batch_size: int = 1_000) -> DemoReport:
    """Run the whole demonstration in ``workdir`` (recreated) and return its report."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    corpus = workdir / "corpus.jsonl"
    _progress(f"writing corpus: {documents:,} documents", stage=True)
    make_corpus(corpus, documents)
    total_batches = (documents + batch_size - 1) // batch_size

    # Run 1: stream with a small delay per batch so the kill lands mid-run.
    meta = workdir / "state" / "train.meta"
    meta.parent.mkdir()
    out_dir = workdir / "out"
    child = subprocess.Popen(_child(corpus, meta, out_dir, batch_size, 0.01))
    kill_after = max(1, total_batches // 3)
    while child.poll() is None:
        done = len(list(out_dir.glob("batch_*.jsonl"))) if out_dir.exists() else 0
        _progress(f"streaming (run 1): batch {done:,}/{total_batches:,}")
        if done >= kill_after:
            os.kill(child.pid, signal.SIGKILL)
            _progress(f"streaming (run 1): SIGKILL after batch {done:,}", stage=True)
            break
        time.sleep(0.01)
    child.wait()

    # Resume: open the checkpoint (measured), then finish in a fresh process.
    start = time.perf_counter()
    with impl.StateTracker(meta, read_only=True) as reader:
        killed_at = reader.committed_batch_id
        resumed_from = reader.coordinate.byte_offset
    resume_seconds = time.perf_counter() - start
    _progress(f"resuming from batch {killed_at:,} (byte {resumed_from:,})", stage=True)
    subprocess.run(_child(corpus, meta, out_dir, batch_size, 0.0), check=True)

    # Reference: one uninterrupted run, in-process.
    _progress("reference run (uninterrupted)", stage=True)
    ref_meta = workdir / "reference" / "train.meta"
    ref_meta.parent.mkdir()
    ref_out = workdir / "reference" / "out"
    stream_corpus(corpus, ref_meta, ref_out, batch_size, 0.0)

    resumed = _concat(out_dir)
    reference = _concat(ref_out)
    with impl.StateTracker(meta, read_only=True) as final:
        batches = final.committed_batch_id
        kept = final.dedup_count
    return DemoReport(
        backend=BACKEND,
        documents=documents,
        kept=kept,
        dropped=documents - kept,
        batches=batches,
        killed_at_batch=killed_at,
        resumed_from_byte=resumed_from,
        resume_seconds=resume_seconds,
        identical=resumed == reference,
        digest=hashlib.sha256(resumed).hexdigest(),
    )

#!/usr/bin/env python3
"""MinHash near-dedup benchmark: luminamoon.data beside datasketch and rensa, in one process.

Sections (docs/benchmarks.md, "MinHash near-dedup", has the method and the figures):

1. Signatures/s on a corpus of ~1 KB English-like documents: ours (``signatures()`` on a list,
   one thread and all cores; ``signature()`` per document), rensa (``RMinHash`` digest matrix, from
   text with the shingling in Python timed, and from pre-built shingles), datasketch (``MinHash``
   with ``update_batch``, shingling timed) and our pure-Python fallback.
2. End-to-end dedup docs/s (text in, keep mask out): ours ``filter_batch`` (list and Arrow), rensa
   (digest matrix + ``RMinHashLSH.insert_matrix_and_query_duplicate_flags``), datasketch
   (``MinHash`` + ``MinHashLSH`` query-then-insert).
3. Agreement of the keep masks between ours and each peer, and against the generator's ground
   truth (which documents are injected near-duplicates).
4. Memory of our index: bytes per document at 1M and 10M documents (``memory_bytes()`` and the
   process RSS delta).

Every implementation gets the same documents, num_perm=64 and threshold 0.8; the peers get the
same word 5-shingles ours computes (ASCII corpus: lowercase ``[0-9a-z]+`` tokens). datasketch is
slow, so it runs on the first ``--peer-docs`` documents and its docs/s is measured there.

Run: ``.venv/bin/python bench/bench_minhash.py`` (``--quick`` for a smoke run, ``--json PATH`` to
save the figures). Needs ``pip install datasketch==2.0.0 rensa==0.5.0`` for the peers (skipped
with a note when missing). Medians over repeats; the garbage collector is off inside timed
regions.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import re
import resource
import sys
import time
from typing import Any

import luminamoon.data as lmd
import results_json
from _common import rss_bytes, timed
from luminamoon.data import fallbacks

NUM_PERM = 64
THRESHOLD = 0.8
NGRAM = 5
WORD = re.compile(r"[0-9a-z]+")
STARTED = time.perf_counter()

try:
    import datasketch
except ImportError:  # pragma: no cover - optional peer
    datasketch = None
try:
    import rensa
except ImportError:  # pragma: no cover - optional peer
    rensa = None


def log(message: str) -> None:
    print(f"[{time.perf_counter() - STARTED:7.1f}s] {message}", file=sys.stderr, flush=True)


# -- corpus ---------------------------------------------------------------------------------------


def make_corpus(docs: int, seed: int) -> tuple[list[str], list[bool]]:
    """~1 KB documents of Zipf-distributed words in paragraphs; 20% are light edits (a few
    substituted words, a boilerplate sentence, or two paragraphs swapped) of an earlier one.
    Returns the texts and, per text, whether it is an injected near-duplicate."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(30000)]
    cum = []
    total = 0.0
    for rank in range(len(vocab)):
        total += 1.0 / (rank + 1) ** 0.9
        cum.append(total)
    texts: list[str] = []
    copies: list[bool] = []
    paragraphs: list[list[list[str]]] = []
    for _ in range(docs):
        if paragraphs and rng.random() < 0.2:
            paras = [list(p) for p in paragraphs[rng.randrange(len(paragraphs))]]
            kind = rng.randrange(3)
            if kind == 0:
                for _ in range(rng.randint(1, 3)):
                    p = paras[rng.randrange(len(paras))]
                    p[rng.randrange(len(p))] = rng.choice(vocab)
            elif kind == 1:
                paras.append("read more about this topic on our website".split())
            elif len(paras) > 1:
                i = rng.randrange(len(paras) - 1)
                paras[i], paras[i + 1] = paras[i + 1], paras[i]
            copies.append(True)
        else:
            paras = [
                rng.choices(vocab, cum_weights=cum, k=rng.randint(30, 50))
                for _ in range(rng.randint(3, 5))
            ]
            paragraphs.append(paras)
            copies.append(False)
        texts.append("\n\n".join(" ".join(p).capitalize() + "." for p in paras))
    return texts, copies


def shingles(text: str) -> list[str]:
    tokens = WORD.findall(text.lower())
    if len(tokens) < NGRAM:
        return [" ".join(tokens)] if tokens else []
    return [" ".join(tokens[i : i + NGRAM]) for i in range(len(tokens) - NGRAM + 1)]


# -- timing ---------------------------------------------------------------------------------------


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


# -- implementations ------------------------------------------------------------------------------


def ours_signatures(texts: list[str], threads: int) -> Any:
    return lmd.MinHashDeduplicator(threads=threads).signatures(texts)


def ours_signature_loop(texts: list[str]) -> list[list[int]]:
    d = lmd.MinHashDeduplicator(threads=1)
    return [d.signature(t) for t in texts]


def ours_filter(texts: Any, threads: int) -> list[bool]:
    return lmd.MinHashDeduplicator(threads=threads).filter_batch(texts)


def fallback_filter(texts: list[str]) -> list[bool]:
    return fallbacks.MinHashDeduplicator().filter_batch(texts)


def rensa_matrix(token_sets: list[list[str]]) -> Any:
    return rensa.RMinHash.digest_matrix_from_token_sets(token_sets, NUM_PERM, 42)


def rensa_signatures_from_text(texts: list[str]) -> Any:
    return rensa_matrix([shingles(t) for t in texts])


def rensa_filter(token_sets: list[list[str]]) -> list[bool]:
    # RMinHashDeduplicator verifies LSH candidates against the threshold and keeps the first
    # occurrence: the same semantics as ours. (RMinHashLSH.insert_matrix_and_query_duplicate_flags
    # is faster but flags every row with any candidate, later rows included: 18% of the originals
    # here, so it is not a dedup keep mask.)
    dedup = rensa.RMinHashDeduplicator(THRESHOLD, NUM_PERM, True)
    return list(dedup.add_pairs([(str(i), s) for i, s in enumerate(token_sets)]))


def rensa_filter_from_text(texts: list[str]) -> list[bool]:
    return rensa_filter([shingles(t) for t in texts])


def datasketch_signatures(texts: list[str]) -> list[Any]:
    out = []
    for t in texts:
        m = datasketch.MinHash(num_perm=NUM_PERM, seed=1)
        m.update_batch([s.encode() for s in shingles(t)])
        out.append(m)
    return out


def datasketch_filter(texts: list[str]) -> list[bool]:
    lsh = datasketch.MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
    keep = []
    for i, t in enumerate(texts):
        m = datasketch.MinHash(num_perm=NUM_PERM, seed=1)
        m.update_batch([s.encode() for s in shingles(t)])
        if lsh.query(m):
            keep.append(False)
        else:
            lsh.insert(i, m)
            keep.append(True)
    return keep


# -- sections -------------------------------------------------------------------------------------


def quality(keep: list[bool], copies: list[bool]) -> dict[str, float]:
    dropped_copies = sum(1 for k, c in zip(keep, copies, strict=True) if c and not k)
    dropped_originals = sum(1 for k, c in zip(keep, copies, strict=True) if not c and not k)
    n_copies = max(1, sum(copies))
    n_originals = max(1, len(copies) - sum(copies))
    return {
        "recall_injected": dropped_copies / n_copies,
        "originals_dropped": dropped_originals / n_originals,
    }


def agreement(a: list[bool], b: list[bool]) -> float:
    n = min(len(a), len(b))
    return sum(1 for x, y in zip(a[:n], b[:n], strict=True) if x == y) / n


def section_throughput(args: argparse.Namespace, texts: list[str], copies: list[bool]) -> dict:
    n = len(texts)
    sub = texts[: args.peer_docs]
    out: dict[str, Any] = {"docs": n, "peer_docs": len(sub), "signatures": {}, "dedup": {}}
    mb = sum(len(t) for t in texts) / 1e6
    out["mb"] = mb
    r = args.repeats
    sig = out["signatures"]
    ded = out["dedup"]
    masks: dict[str, list[bool]] = {}

    log("ours: signatures")
    for threads in (1, 0):
        seconds, _ = timed(lambda th=threads: ours_signatures(texts, th), r)
        sig[f"ours threads={threads or os.cpu_count()}"] = rate(n, seconds)
    seconds, _ = timed(lambda: ours_signature_loop(sub), r)
    sig["ours signature() per document"] = rate(len(sub), seconds)
    log("ours: filter_batch")
    for threads in (1, 0):
        seconds, keep = timed(lambda th=threads: ours_filter(texts, th), r)
        ded[f"ours threads={threads or os.cpu_count()}"] = rate(n, seconds)
        masks["ours"] = keep
    try:
        import pyarrow as pa

        arrow = pa.array(texts, pa.large_string())
        seconds, keep = timed(lambda: ours_filter(arrow, 0), r)
        ded[f"ours threads={os.cpu_count()} (pa.large_string)"] = rate(n, seconds)
        assert keep == masks["ours"]
    except ImportError:
        log("pyarrow missing: no Arrow run")
    log("fallback")
    seconds, keep = timed(lambda: fallback_filter(sub), 1)
    ded["ours, pure-Python fallback"] = rate(len(sub), seconds)
    assert keep == masks["ours"][: len(sub)]

    if rensa is not None:
        log("rensa")
        token_sets = [shingles(t) for t in texts]
        seconds, _ = timed(lambda: rensa_matrix(token_sets), r)
        sig["rensa, shingles prepared (untimed)"] = rate(n, seconds)
        seconds, _ = timed(lambda: rensa_signatures_from_text(texts), r)
        sig["rensa, from text (Python shingling timed)"] = rate(n, seconds)
        seconds, _ = timed(lambda: [shingles(t) for t in texts], r)
        sig["Python shingling alone (what peers need first)"] = rate(n, seconds)
        seconds, keep = timed(lambda: rensa_filter_from_text(texts), r)
        ded["rensa, from text (Python shingling timed)"] = rate(n, seconds)
        masks["rensa"] = keep
        seconds, keep = timed(lambda: rensa_filter(token_sets), r)
        ded["rensa, shingles prepared (untimed)"] = rate(n, seconds)
        del token_sets
    else:
        log("rensa not installed: skipped")
    if datasketch is not None:
        log("datasketch")
        seconds, _ = timed(lambda: datasketch_signatures(sub), 1)
        sig["datasketch, from text"] = rate(len(sub), seconds)
        seconds, keep = timed(lambda: datasketch_filter(sub), 1)
        ded["datasketch, from text"] = rate(len(sub), seconds)
        masks["datasketch"] = keep
    else:
        log("datasketch not installed: skipped")

    out["quality"] = {
        name: quality(mask, copies[: len(mask)]) for name, mask in sorted(masks.items())
    }
    out["agreement"] = {
        f"ours vs {peer}": agreement(masks["ours"], masks[peer])
        for peer in ("rensa", "datasketch")
        if peer in masks
    }
    return out


_ISA_CHILD = """
import sys, time, statistics
sys.path.insert(0, {bench!r})
import bench_minhash as b
import luminamoon.data as lmd
texts, _ = b.make_corpus({docs}, {seed})
d = lmd.MinHashDeduplicator(threads=1)
times = []
for _ in range({repeats}):
    start = time.perf_counter()
    d.signatures(texts)
    times.append(time.perf_counter() - start)
print(lmd.simd_isa(), len(texts) / statistics.median(times))
"""


def section_isas(args: argparse.Namespace) -> dict[str, float]:
    """Signatures/s (one thread) with each instruction set forced (LUMINAMOON_SIMD)."""
    import subprocess

    out = {}
    code = _ISA_CHILD.format(
        bench=os.path.dirname(os.path.abspath(__file__)),
        docs=min(args.docs, 20_000),
        seed=args.seed,
        repeats=args.repeats,
    )
    for isa in lmd.supported_isas():
        env = dict(os.environ, LUMINAMOON_SIMD=isa)
        run = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        name, value = run.stdout.split()
        out[name] = float(value)
        log(f"signatures with {name}: {float(value):,.0f} docs/s")
    return out


_MEMORY_CHILD = """
import argparse, json, sys
sys.path.insert(0, {bench!r})
import bench_minhash as b
print(json.dumps(b.section_memory_here(argparse.Namespace(mem_docs={docs}, seed={seed}))))
"""


def section_memory(args: argparse.Namespace) -> dict:
    """Runs in a fresh interpreter, so the RSS delta is the index's and not freed corpora's."""
    import subprocess

    code = _MEMORY_CHILD.format(
        bench=os.path.dirname(os.path.abspath(__file__)), docs=args.mem_docs, seed=args.seed
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    sys.stderr.write(run.stderr)
    result: dict = json.loads(run.stdout)
    return result


def section_memory_here(args: argparse.Namespace) -> dict:
    out = {}
    rng = random.Random(args.seed + 1)
    words = [f"w{i}" for i in range(50000)]
    d = lmd.MinHashDeduplicator()
    gc.collect()
    before = rss_bytes()
    done = 0
    chunk = 200_000
    targets = sorted({min(args.mem_docs, 1_000_000), args.mem_docs})
    for target in targets:
        while done < target:
            n = min(chunk, target - done)
            texts = [f"doc {done + i} " + " ".join(rng.choices(words, k=12)) for i in range(n)]
            keep = d.filter_batch(texts)
            d.commit()
            done += n
            del texts, keep
        gc.collect()
        indexed = len(d)
        out[f"{target:,} documents"] = {
            "indexed": indexed,
            "memory_bytes_per_doc": d.memory_bytes() / indexed,
            "rss_delta_per_doc": (rss_bytes() - before) / indexed,
            "memory_bytes_total": d.memory_bytes(),
        }
        log(f"memory at {target:,}: {out[f'{target:,} documents']}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--docs", type=int, default=50_000)
    parser.add_argument("--peer-docs", type=int, default=3_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mem-docs", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="smoke run: tiny sizes")
    parser.add_argument("--json", help="also write every figure to this file")
    args = parser.parse_args()
    if args.quick:
        args.docs, args.peer_docs, args.repeats, args.mem_docs = 2_000, 300, 1, 50_000
    assert lmd.BACKEND == "native", "run the benchmark on the native backend"
    log(f"corpus: {args.docs:,} documents")
    texts, copies = make_corpus(args.docs, args.seed)
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "simd": lmd.simd_isa(),
            "load_average": os.getloadavg(),
            "datasketch": getattr(datasketch, "__version__", None),
            "rensa": _version("rensa"),
        }
    }
    results["throughput"] = section_throughput(args, texts, copies)
    del texts, copies
    results["isas"] = section_isas(args)
    results["memory"] = section_memory(args)
    results["machine"]["load_average_end"] = os.getloadavg()
    results["machine"]["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report(results)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    results_json.record("minhash", results, config=vars(args), quick=args.quick)


def _version(name: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return None


def report(results: dict[str, Any]) -> None:
    t = results["throughput"]
    print(f"\nmachine: {results['machine']}")
    print(f"\ncorpus: {t['docs']:,} documents, {t['mb']:.1f} MB; peers on {t['peer_docs']:,}\n")
    ours_sig = t["signatures"].get("ours threads=1", 0.0)
    print("| signatures | docs/s | ours (1 thread) / this |\n|---|---:|---:|")
    for name, value in t["signatures"].items():
        print(f"| {name} | {value:,.0f} | {ours_sig / value:.1f}x |")
    ours_ded = t["dedup"].get("ours threads=1", 0.0)
    print("\n| end-to-end dedup | docs/s | ours (1 thread) / this |\n|---|---:|---:|")
    for name, value in t["dedup"].items():
        print(f"| {name} | {value:,.0f} | {ours_ded / value:.1f}x |")
    print("\n| keep mask | injected near-duplicates dropped | originals dropped |\n|---|---:|---:|")
    for name, q in t["quality"].items():
        print(f"| {name} | {q['recall_injected']:.4f} | {q['originals_dropped']:.4f} |")
    for name, value in t["agreement"].items():
        print(f"agreement {name}: {value:.4f}")
    print("\n| kernel (forced by LUMINAMOON_SIMD) | signatures/s, 1 thread |\n|---|---:|")
    for name, value in results["isas"].items():
        print(f"| {name} | {value:,.0f} |")
    print("\n| index size | bytes/doc (memory_bytes) | bytes/doc (RSS delta) |\n|---|---:|---:|")
    for name, m in results["memory"].items():
        print(f"| {name} | {m['memory_bytes_per_doc']:.1f} | {m['rss_delta_per_doc']:.1f} |")


if __name__ == "__main__":
    main()

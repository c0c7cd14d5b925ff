"""Machine-readable benchmark results: every bench script appends its figures here.

``record(name, figures, ...)`` appends one run to ``bench/results/<name>.json``: when and on what
it ran (the git commit, dirty or not; CPU model, cores, load average, Python, backend, SIMD ISA,
the native build's library versions) and the script's own figures, unchanged. The file keeps
every recorded run, oldest first, so a later change is compared against the committed ones::

    .venv/bin/python bench/results_json.py list dedup
    .venv/bin/python bench/results_json.py compare dedup            # last run vs the one before
    .venv/bin/python bench/results_json.py compare dedup -2 -1      # any two runs, by index

``compare`` prints every numeric figure present in both runs with its ratio (new / old).
``--quick`` smoke runs are not recorded (their figures mean nothing) unless
``LUMINAMOON_BENCH_RECORD_QUICK=1``; ``LUMINAMOON_BENCH_RESULTS=DIR`` writes elsewhere.
docs/benchmarks.md keeps the human-readable tables.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DIR = REPO / "bench" / "results"
FORMAT_VERSION = 1


def results_dir() -> Path:
    return Path(os.environ.get("LUMINAMOON_BENCH_RESULTS") or DEFAULT_DIR)


def commit() -> dict[str, Any]:
    """The checked-out commit and whether the tree had uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return {"sha": None, "dirty": None}
    return {"sha": head, "dirty": bool(status.strip())}


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """What the figures depend on besides the code."""
    import luminamoon.data as lmd

    try:
        isa: str | None = lmd.simd_isa()
    except lmd.LuminaMoonError:
        isa = None
    return {
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "luminamoon_data": lmd.__version__,
        "backend": lmd.BACKEND,
        "simd_isa": isa,
        "build": lmd.build_info(),
    }


# Options that only say where a run writes its output: not part of what was measured.
OUTPUT_OPTIONS = frozenset({"json", "write_real"})


def recorded_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The options of a run as recorded: output destinations left out, and an absolute path
    (a corpus given on the command line) kept as its last component, so that the committed
    results name no folder of the machine that ran them."""
    recorded: dict[str, Any] = {}
    for key, value in config.items():
        if key in OUTPUT_OPTIONS:
            continue
        text = str(value) if isinstance(value, (str, os.PathLike)) else None
        recorded[key] = Path(text).name if text is not None and Path(text).is_absolute() else value
    return recorded


def record(
    name: str,
    figures: Any,
    *,
    config: Mapping[str, Any] | None = None,
    quick: bool = False,
) -> Path | None:
    """Append one run of benchmark ``name`` to ``<results dir>/<name>.json``; returns the path,
    or None for a quick run that is not recorded."""
    if quick and os.environ.get("LUMINAMOON_BENCH_RECORD_QUICK", "") in ("", "0"):
        print(f"[results] quick run: not recorded in {results_dir() / (name + '.json')}")
        return None
    path = results_dir() / f"{name}.json"
    document: dict[str, Any] = {"format": FORMAT_VERSION, "benchmark": name, "runs": []}
    if path.exists():
        document = json.loads(path.read_text(encoding="utf-8"))
    document["runs"].append(
        {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "commit": commit(),
            "machine": machine(),
            "quick": quick,
            "config": recorded_config(config or {}),
            "figures": figures,
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(document, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)
    print(f"[results] run {len(document['runs'])} recorded in {path}")
    return path


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, float]]:
    """Every numeric leaf as (dotted path, value); list items are keyed by their 'name'/'job'
    field when they have one, else by index."""
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield prefix, float(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from flatten(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            label = str(index)
            if isinstance(item, Mapping):
                label = str(item.get("name") or item.get("job") or item.get("corpus") or index)
            yield from flatten(item, f"{prefix}[{label}]")


def compare(old: Any, new: Any) -> list[tuple[str, float, float, float | None]]:
    """(figure, old, new, new/old) for every numeric figure present in both runs."""
    before = dict(flatten(old))
    rows = []
    for key, value in flatten(new):
        if key in before:
            base = before[key]
            rows.append((key, base, value, value / base if base else None))
    return rows


def _load(name: str) -> list[dict[str, Any]]:
    path = results_dir() / f"{name}.json"
    if not path.exists():
        sys.exit(f"no results for '{name}' in {results_dir()}")
    runs: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["runs"]
    return runs


def _describe(index: int, run: Mapping[str, Any]) -> str:
    sha = (run["commit"].get("sha") or "?")[:10] + ("+dirty" if run["commit"].get("dirty") else "")
    m = run["machine"]
    return f"[{index}] {run['date']} {sha} {m['cpu']} x{m['cpus']} {m['backend']}/{m['simd_isa']}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="List or compare recorded benchmark runs.")
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="the recorded runs of a benchmark")
    listing.add_argument("name")
    diff = sub.add_parser("compare", help="figure by figure: new / old")
    diff.add_argument("name")
    diff.add_argument("old", nargs="?", type=int, default=-2, help="run index (default -2)")
    diff.add_argument("new", nargs="?", type=int, default=-1, help="run index (default -1)")
    args = parser.parse_args(argv)
    runs = _load(args.name)
    if args.command == "list":
        for index, run in enumerate(runs):
            print(_describe(index, run))
        return 0
    if len(runs) < 2 and args.old == -2:
        sys.exit(f"'{args.name}' has {len(runs)} recorded run(s); nothing to compare")
    old, new = runs[args.old], runs[args.new]
    print(f"old {_describe(args.old % len(runs), old)}\nnew {_describe(args.new % len(runs), new)}")
    for key, before, after, ratio in compare(old["figures"], new["figures"]):
        shown = f"{ratio:8.3f}x" if ratio is not None else "       -"
        print(f"{shown}  {before:>14.6g} -> {after:<14.6g} {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What ``luminamoon-data run`` counts and says: crash-safe totals, progress lines, the report.

The totals are plain JSON-able dicts, written with every commit (``.luminamoon/commit-E.json``)
so a resumed run continues them exactly; ``report.json`` is built from them alone and holds no
timings, so an interrupted and an uninterrupted run write the same bytes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from .errors import RunError
from .pipeline import STAGES
from .run_inputs import is_compressed, is_parquet, optional_module

__all__ = ["Progress", "build_report", "format_report", "load_report", "new_totals", "rule_counts"]

STATE_DIR = ".luminamoon"
RUN_CONFIG_NAME = "run.toml"
REPORT_NAME = "report.json"
TIMINGS_NAME = "timings.json"
REPORT_VERSION = 1
PII_CATEGORIES = ("EMAIL", "IP_ADDRESS", "API_KEY", "CREDIT_CARD")


def new_totals() -> dict[str, Any]:
    return {
        "stages": {},  # stage -> counter -> value (pipeline counters, cumulative)
        "drops": {},  # stage -> rule -> {"count", "examples"}
        "reader": {},  # reader stats, cumulative
        "issues": {},  # kind -> {"count", "examples"}
        "files": [],  # {"name", "rows", "bytes"}
    }


def add_counts(into: dict[str, int], values: Mapping[str, int]) -> None:
    for key, value in values.items():
        into[key] = into.get(key, 0) + int(value)


def rule_counts(counters: Mapping[str, Mapping[str, int]]) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    cleaner = counters.get("cleaner")
    if cleaner and cleaner.get("dropped_empty"):
        out[("cleaner", "empty")] = cleaner["dropped_empty"]
    for stage in ("language", "quality"):
        stage_counters = counters.get(stage)
        if stage_counters:
            for rule, value in stage_counters.items():
                if rule not in ("total", "kept", "rejected") and value:
                    out[(stage, rule)] = value
    for stage, rule in (("exact_dedup", "duplicate"), ("near_dedup", "near_duplicate")):
        stage_counters = counters.get(stage)
        if stage_counters and stage_counters.get("duplicates"):
            out[(stage, rule)] = stage_counters["duplicates"]
    return out


def _human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"  # pragma: no cover


def _duration(seconds: float) -> str:
    if seconds < 60:  # a short (or resumed) run: "1.3 s", not "0m01s"
        return f"{max(0.0, seconds):.1f} s"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


class Progress:
    """docs/s, MB/s, kept %, ETA: one rewritten line on a terminal, plain log lines otherwise."""

    def __init__(self, stream: IO[str] | None, shards: Sequence[str], mode: str) -> None:
        self.stream = stream
        self.mode = mode  # "bar", "log" or "none"
        self.started = time.monotonic()
        self.last = 0.0
        self.docs = 0
        self.kept = 0
        self.bytes = 0
        self.sizes: list[int] = []
        self.total = 0
        self.eta_known = not any(is_compressed(s) for s in shards)
        for s in shards:
            try:
                size = os.path.getsize(s)
            except OSError:
                size = 0
            self.sizes.append(size)
        self.total = sum(self.sizes)
        self.prefix = [0]
        for size in self.sizes:
            self.prefix.append(self.prefix[-1] + size)
        self._parquet_rows: dict[int, tuple[int, list[int]]] = {}

    def fraction(self, coordinate: Any, shards: Sequence[str]) -> float | None:
        if not self.eta_known or not self.total:
            return None
        s = coordinate.shard_id
        if s >= len(self.sizes):
            return 1.0
        done = self.prefix[s]
        if is_parquet(shards[s]):
            if s not in self._parquet_rows:
                try:
                    meta = optional_module("pyarrow.parquet").ParquetFile(shards[s]).metadata
                    groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
                except Exception:
                    groups = []
                self._parquet_rows[s] = (sum(groups), groups)
            total_rows, groups = self._parquet_rows[s]
            if total_rows:
                before = sum(groups[: coordinate.row_group_idx]) + coordinate.row_offset_in_page
                done += int(self.sizes[s] * before / total_rows)
        else:
            done += min(int(coordinate.byte_offset), self.sizes[s])
        return float(done / self.total)

    def update(
        self,
        docs: int,
        kept: int,
        nbytes: int,
        coordinate: Any,
        shards: Sequence[str],
        *,
        force: bool = False,
    ) -> None:
        self.docs += docs
        self.kept += kept
        self.bytes += nbytes
        if self.stream is None or self.mode == "none":
            return
        now = time.monotonic()
        interval = 0.25 if self.mode == "bar" else 30.0
        if not force and now - self.last < interval:
            return
        self.last = now
        elapsed = max(now - self.started, 1e-9)
        line = (
            f"{self.docs:,} docs  {self.docs / elapsed:,.0f} docs/s  "
            f"{self.bytes / elapsed / 1e6:,.1f} MB/s  kept {self.kept / max(self.docs, 1):.1%}"
        )
        fraction = self.fraction(coordinate, shards)
        if fraction is not None and fraction > 0:
            remaining = elapsed * (1 - fraction) / fraction if fraction < 1 else 0.0
            line += f"  {fraction:.1%}  ETA {_duration(remaining)}"
        if self.mode == "bar":
            self.stream.write("\r\x1b[2K" + line)
        else:
            self.stream.write(f"luminamoon-data run: {line}\n")
        self.stream.flush()

    def log(self, message: str) -> None:
        if self.stream is None or self.mode == "none":
            return
        if self.mode == "bar":
            self.stream.write("\r\x1b[2K")
        self.stream.write(f"luminamoon-data run: {message}\n")
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None and self.mode == "bar":
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


def build_report(settings: Any, totals: Mapping[str, Any]) -> dict[str, Any]:
    """report.json: deterministic (no timings), so a resumed run writes the same bytes."""
    stages = totals["stages"]
    docs_in = stages.get("input", {}).get("documents", 0)
    docs_out = stages.get("output", {}).get("documents", 0)
    pii = stages.get("pii")
    report: dict[str, Any] = {
        "report_version": REPORT_VERSION,
        "inputs": settings.inputs,
        "shards": len(settings.shards),
        "text_field": settings.text_field,
        "documents": {
            "in": docs_in,
            "out": docs_out,
            "kept_percent": round(100.0 * docs_out / docs_in, 3) if docs_in else 0.0,
        },
        "bytes": {
            "in": stages.get("input", {}).get("bytes", 0),
            "out": stages.get("output", {}).get("bytes", 0),
        },
        "drops": {
            stage: dict(sorted(rules.items(), key=lambda kv: (-kv[1]["count"], kv[0])))
            for stage, rules in sorted(totals["drops"].items(), key=lambda kv: STAGES.index(kv[0]))
        },
        "duplicates": {
            "exact": stages.get("exact_dedup", {}).get("duplicates", 0),
            "near": stages.get("near_dedup", {}).get("duplicates", 0),
        },
        "pii": None
        if pii is None
        else {
            "documents_changed": pii.get("documents_changed", 0),
            **{c: pii.get(c, 0) for c in PII_CATEGORIES},
        },
        "malformed": dict(sorted(totals["issues"].items())),
        "reader": dict(sorted(totals["reader"].items())),
        "stages": {k: stages[k] for k in ("input", *STAGES, "output") if k in stages},
        "output": {
            "format": settings.format,
            "files": totals["files"],
        },
    }
    return report


def format_report(report: Mapping[str, Any], timings: Mapping[str, Any] | None = None) -> str:
    """The report as text for a terminal."""
    docs = report["documents"]
    nbytes = report["bytes"]
    lines = [
        f"documents  in {docs['in']:,}  out {docs['out']:,}  (kept {docs['kept_percent']:.2f}%)",
        f"bytes      in {_human_bytes(nbytes['in'])}  out {_human_bytes(nbytes['out'])}",
    ]
    dups = report["duplicates"]
    lines.append(f"duplicates exact {dups['exact']:,}  near {dups['near']:,}")
    if report["drops"]:
        lines.append("drops by stage and rule (examples):")
        for stage, rules in report["drops"].items():
            for rule, entry in rules.items():
                examples = ", ".join(_example_text(e) for e in entry["examples"])
                lines.append(f"  {stage:<12} {rule:<32} {entry['count']:>10,}  {examples}")
    if report["pii"] is not None:
        pii = report["pii"]
        cats = "  ".join(f"{c} {pii[c]:,}" for c in PII_CATEGORIES)
        lines.append(f"pii        {cats}  (documents changed {pii['documents_changed']:,})")
    if report["malformed"]:
        lines.append("input issues (first occurrences):")
        for kind, entry in report["malformed"].items():
            lines.append(f"  {kind:<24} {entry['count']:>10,}")
            lines.extend(f"      {where}" for where in entry["examples"])
    files = report["output"]["files"]
    total_bytes = sum(f["bytes"] for f in files)
    lines.append(
        f"output     {len(files)} {report['output']['format']} file(s), {_human_bytes(total_bytes)}"
    )
    if timings:
        seconds = timings.get("seconds", 0.0)
        if seconds:
            lines.append(
                f"throughput {timings['documents'] / seconds:,.0f} docs/s, "
                f"{timings['bytes'] / seconds / 1e6:,.1f} MB/s over {_duration(seconds)}"
                + (f" ({timings['sessions']} sessions)" if timings.get("sessions", 1) > 1 else "")
            )
    return "\n".join(lines)


def _example_text(example: Mapping[str, Any]) -> str:
    parts = [f"{k}={v}" for k, v in example.items() if k not in ("record", "shard")]
    where = f"[{os.path.basename(str(example.get('shard')))}, input record {example.get('record')}]"
    return " ".join([*parts, where])


def load_report(outdir: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A finished run's report and timings (``luminamoon-data stats``)."""
    path = Path(outdir) / REPORT_NAME
    try:
        report = json.loads(path.read_bytes())
    except FileNotFoundError:
        hint = ""
        if (Path(outdir) / STATE_DIR / RUN_CONFIG_NAME).exists():
            hint = "; the run has not finished: rerun its command to complete it"
        raise RunError(f"no finished run in '{outdir}' ({REPORT_NAME} missing){hint}") from None
    except ValueError as exc:
        raise RunError(f"{path} is not valid JSON: {exc}") from None
    timings = None
    timings_path = Path(outdir) / STATE_DIR / TIMINGS_NAME
    if timings_path.exists():
        try:
            timings = json.loads(timings_path.read_bytes())
        except ValueError:
            timings = None
    return report, timings

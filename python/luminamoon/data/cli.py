"""The ``luminamoon-data`` command line: ``run``, ``stats``, ``demo``, ``inspect`` and ``info``."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__, _ffi
from ._ffi import BACKEND, impl
from ._optional import core_status, extras_status
from .demo import run_demo
from .errors import LuminaMoonError, RunInterruptedError
from .fallbacks.build_info import build_info as fallbacks_build_info
from .ray import require_ray
from .ray import run as ray_run
from .run import format_report, load_report, run

_COMMANDS = ("run", "stats", "demo", "inspect", "info")

# Exit codes (docs/cli.md).
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def _inspect(meta: Path) -> dict[str, object]:
    with impl.StateTracker(meta, read_only=True) as tracker:
        epoch, batch_id, coordinate, dedup_count = tracker.read()
        return {
            "path": tracker.path,
            "epoch": epoch,
            "active_slot": tracker.active_slot,
            "committed_batch_id": batch_id,
            "coordinate": {
                "shard_id": coordinate.shard_id,
                "byte_offset": coordinate.byte_offset,
                "row_group_idx": coordinate.row_group_idx,
                "page_idx": coordinate.page_idx,
                "row_offset_in_page": coordinate.row_offset_in_page,
                "global_row_idx": coordinate.global_row_idx,
            },
            "dedup_count": dedup_count,
        }


def _split_list(values: Sequence[str] | str | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _run(args: argparse.Namespace) -> int:
    if args.engine == "ray":
        return _run_ray(args)
    if args.address is not None:
        print("luminamoon-data: --address needs --engine ray", file=sys.stderr)
        return EXIT_USAGE
    report = run(
        args.inputs,
        args.output,
        config=args.config,
        text_field=args.text_field,
        fields=_split_list(args.fields),
        format=args.format,
        preset=_split_list(args.preset) or None,
        pii=not args.no_pii,
        languages=_split_list(args.languages) or None,
        threads=args.threads,
        max_rows_per_file=args.max_rows_per_file,
        max_bytes_per_file=args.max_bytes_per_file,
        row_group_size=args.row_group_size,
        batch_size=args.batch_size,
        progress=args.progress,
    )
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _, timings = load_report(args.output)
        print(format_report(report, timings))
    return EXIT_OK


def _run_ray(args: argparse.Namespace) -> int:
    require_ray()
    # Ray's driver prints messages from the cluster ("(raylet) A worker died ...") to
    # sys.stdout from a background thread, whatever log_to_driver says. With --json, stdout
    # carries the report alone (it is piped to jq and friends), so for the whole run those
    # messages go to stderr instead, where the user still sees them.
    quiet_stdout = contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext()
    with quiet_stdout:
        report = _ray_report(args)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(format_report(report))
    return EXIT_OK


def _ray_report(args: argparse.Namespace) -> dict[str, Any]:
    return ray_run(
        args.config,
        args.inputs,
        args.output,
        text_field=args.text_field,
        fields=_split_list(args.fields),
        format=args.format,
        preset=_split_list(args.preset) or None,
        pii=not args.no_pii,
        languages=_split_list(args.languages) or None,
        threads=args.threads or 1,
        row_group_size=args.row_group_size,
        batch_size=args.batch_size,
        address=args.address,
    )


def _native_module() -> Any:
    """The native module even when the fallback is forced; None when it does not import."""
    try:
        return importlib.import_module("luminamoon.data._native")
    except ImportError:
        return None


def _info() -> dict[str, Any]:
    """Everything a bug report needs about this installation, as plain data."""
    native = _native_module()
    if native is not None:
        native_state: dict[str, Any] = {
            "module": native.__file__,
            "simd_isa": None,
            "supported_isas": native.supported_isas(),
            "build": native.build_info(),
        }
        try:
            native_state["simd_isa"] = native.simd_isa()
        except LuminaMoonError as exc:  # LUMINAMOON_SIMD names an ISA this CPU lacks
            native_state["simd_isa"] = f"error: {exc}"
    else:
        error = _ffi.NATIVE_IMPORT_ERROR
        native_state = {"module": None, "import_error": str(error) if error else "not built"}
    forced = os.environ.get("LUMINAMOON_FORCE_FALLBACK", "")
    return {
        "luminamoon-data": __version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": f"{platform.system()} {platform.machine()} {' '.join(platform.libc_ver())}",
        "backend": BACKEND,
        "force_fallback": forced not in ("", "0"),
        "simd_env": os.environ.get("LUMINAMOON_SIMD") or None,
        "native": native_state,
        "fallback": fallbacks_build_info(),
        "core": core_status(),
        "extras": extras_status(),
    }


def _render_info(info: dict[str, Any]) -> str:
    def versions(items: dict[str, Any]) -> str:
        return ", ".join(f"{name} {value or 'missing'}" for name, value in items.items())

    native = info["native"]
    lines = [
        f"luminamoon-data {info['luminamoon-data']}",
        f"python      {info['python']}",
        f"platform    {info['platform']}",
        f"backend     {info['backend']}"
        + (" (LUMINAMOON_FORCE_FALLBACK is set)" if info["force_fallback"] else ""),
    ]
    if native["module"] is None:
        lines.append(f"native      unavailable: {native['import_error']}")
    else:
        simd = native["simd_isa"]
        if info["simd_env"]:
            simd += f" (LUMINAMOON_SIMD={info['simd_env']})"
        lines += [
            f"native      {native['module']}",
            f"simd        {simd}; supported: {', '.join(native['supported_isas'])}",
            f"compiler    {native['build']['compiler']}, C++ {native['build']['cxx_standard']}",
            "native libs "
            + ", ".join(
                f"{name} {version}"
                for name, version in native["build"].items()
                if name not in ("compiler", "cxx_standard")
            ),
        ]
    lines.append(f"fallback    {versions(info['fallback'])}")
    lines.append(f"core deps   {versions(info['core'])}")
    for extra, dists in info["extras"].items():
        present = all(version is not None for version in dists.values())
        mark = "present" if present else "partial" if any(dists.values()) else "absent"
        lines.append(f"extra [{extra}] {mark}: {versions(dists)}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="luminamoon-data",
        description="LuminaMoon Data Engine: clean, deduplicated training data with exact resume.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser(
        "run",
        help="curate shards into clean, deduplicated output files (crash-safe, resumable)",
        description="Read INPUT shards (.jsonl/.json/.ndjson/.txt, plain/.gz/.zst, and .parquet; "
        "files or globs), run the FusedPipeline and write rotated output files plus "
        "OUTDIR/report.json. Interrupted (Ctrl-C, SIGKILL, power cut)? Run the same command "
        "again: it continues from the last committed file.",
    )
    run.add_argument("inputs", nargs="+", metavar="INPUT", help="shard files or globs")
    run.add_argument("-o", "--output", required=True, type=Path, metavar="OUTDIR")
    run.add_argument("--text-field", default="text", help="dotted path of the text (default: text)")
    run.add_argument(
        "--fields", default="", help="extra fields carried to the output, comma-separated (id,url)"
    )
    run.add_argument("--format", default="parquet", help="parquet, ipc or jsonl (default: parquet)")
    run.add_argument("--config", type=Path, help="pipeline config (TOML, see docs/pipeline.md)")
    run.add_argument(
        "--preset",
        action="append",
        help="quality preset(s), replacing the config's (repeat or comma-separate)",
    )
    run.add_argument("--no-pii", action="store_true", help="switch the PII masking stage off")
    run.add_argument(
        "--languages",
        action="append",
        help="keep only these CLD2 language codes, e.g. en,de (switches the language stage on)",
    )
    run.add_argument("--threads", type=int, default=0, help="0 = every core (default)")
    run.add_argument(
        "--max-rows-per-file", type=int, default=100_000, help="(default: %(default)s)"
    )
    run.add_argument(
        "--max-bytes-per-file", type=int, default=512 * 2**20, help="(default: %(default)s)"
    )
    run.add_argument("--row-group-size", type=int, default=16_384, help="(default: %(default)s)")
    run.add_argument("--batch-size", type=int, default=1024, help="(default: %(default)s)")
    run.add_argument(
        "--progress",
        default="auto",
        choices=("auto", "bar", "log", "none"),
        help="auto: a live line on a terminal, log lines otherwise",
    )
    run.add_argument("--json", action="store_true", help="print the report as JSON")
    run.add_argument(
        "--engine",
        default="local",
        choices=("local", "ray"),
        help="local (default; crash-safe, resumable) or ray (Ray Data cluster, same result; "
        "needs pip install 'luminamoon-data[ray]'; docs/ray.md)",
    )
    run.add_argument(
        "--address",
        default=None,
        help="with --engine ray: the cluster (auto, host:port or ray://...); default: start a "
        "local Ray",
    )
    stats = sub.add_parser("stats", help="print a finished run's report again")
    stats.add_argument("outdir", type=Path, metavar="OUTDIR")
    stats.add_argument("--json", action="store_true", help="print the report as JSON")
    demo = sub.add_parser(
        "demo",
        help="run the main job on a corpus it makes, SIGKILL it mid-run, resume, verify exactness",
    )
    demo.add_argument(
        "--workdir", type=Path, default=Path("demo-run"), help="(default: %(default)s)"
    )
    demo.add_argument("--documents", type=int, default=30_000, help="(default: %(default)s)")
    demo.add_argument("--batch-size", type=int, default=1_000, help="(default: %(default)s)")
    inspect = sub.add_parser("inspect", help="print a .meta checkpoint's committed state as JSON")
    inspect.add_argument("meta", type=Path)
    info = sub.add_parser(
        "info",
        help="versions, backend, SIMD ISA, linked native libraries and extras (for bug reports)",
    )
    info.add_argument("--json", action="store_true", help="print it as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and not args_list[0].startswith("-") and args_list[0] not in _COMMANDS:
        hint = impl.did_you_mean(args_list[0], _COMMANDS)
        suffix = f"; did you mean '{hint}'?" if hint else f"; commands: {', '.join(_COMMANDS)}"
        print(f"luminamoon-data: unknown command '{args_list[0]}'{suffix}", file=sys.stderr)
        return 2
    args = _parser().parse_args(args_list)
    if args.command is None:
        _parser().print_help(sys.stderr)
        return EXIT_USAGE
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "stats":
            stored, timings = load_report(args.outdir)
            print(json.dumps(stored, indent=2) if args.json else format_report(stored, timings))
            return EXIT_OK
        if args.command == "demo":
            report = run_demo(args.workdir, args.documents, args.batch_size)
            print(report.render())
            return 0 if report.identical else 1
        if args.command == "inspect":
            print(json.dumps(_inspect(args.meta), indent=2))
            return 0
        info = _info()
        print(json.dumps(info, indent=2) if args.json else _render_info(info))
        return 0
    except RunInterruptedError as exc:
        print(f"luminamoon-data: {exc}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (LuminaMoonError, OSError) as exc:
        print(f"luminamoon-data: {exc}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())

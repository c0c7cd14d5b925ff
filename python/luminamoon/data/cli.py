"""The ``luminamoon-data`` command line: ``demo``, ``inspect`` and ``info``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from ._ffi import BACKEND, impl
from .demo import run_demo
from .errors import LuminaMoonError

_COMMANDS = ("demo", "inspect", "info")


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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="luminamoon-data",
        description="LuminaMoon Data Engine: clean, deduplicated training data with exact resume.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo", help="stream a synthetic corpus, SIGKILL mid-run, resume, verify exactness"
    )
    demo.add_argument(
        "--workdir", type=Path, default=Path("demo-run"), help="(default: %(default)s)"
    )
    demo.add_argument("--documents", type=int, default=200_000, help="(default: %(default)s)")
    demo.add_argument("--batch-size", type=int, default=1_000, help="(default: %(default)s)")
    inspect = sub.add_parser("inspect", help="print a .meta checkpoint's committed state as JSON")
    inspect.add_argument("meta", type=Path)
    sub.add_parser("info", help="version and live backend")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and not args_list[0].startswith("-") and args_list[0] not in _COMMANDS:
        hint = impl.did_you_mean(args_list[0], _COMMANDS)
        suffix = f"; did you mean '{hint}'?" if hint else f"; commands: {', '.join(_COMMANDS)}"
        print(f"luminamoon-data: unknown command '{args_list[0]}'{suffix}", file=sys.stderr)
        return 2
    args = _parser().parse_args(args_list)
    try:
        if args.command == "demo":
            report = run_demo(args.workdir, args.documents, args.batch_size)
            print(report.render())
            return 0 if report.identical else 1
        if args.command == "inspect":
            print(json.dumps(_inspect(args.meta), indent=2))
            return 0
        print(f"luminamoon-data {__version__} (backend: {BACKEND})")
        return 0
    except LuminaMoonError as exc:
        print(f"luminamoon-data: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

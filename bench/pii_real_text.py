#!/usr/bin/env python3
"""PIIMasker on real text found on the machine (nothing is downloaded): how many IPv4 matches
the rules make on text without addresses, and how many real addresses they keep finding.

Corpora:
  * changelogs: every ``/usr/share/doc/*/changelog*.gz`` (Debian and upstream changelogs);
  * manuals: every GNU Info manual ``/usr/share/info/*.info*.gz`` (coreutils, find, grep, ...);
  * mail headers: the ``Received:`` header lines (with their continuation lines) of the e-mail
    messages shipped with the interpreter's own test suite (``test/test_email/data``,
    ``test/test_mailbox``-style data) and of any ``/usr/share/doc`` file that has them. Every
    dotted quad in brackets or parentheses of such a line is an address (that is what the
    header syntax puts there); recall is the share of those the masker finds.

Changelogs and manuals contain almost no IPv4 addresses, so every IPv4 match there is counted and
a sample of them is printed for reading (``--show N``): the figures in docs/pii.md come from
reading those samples, not from the rules. ``--json PATH`` writes the counts.

Run: ``.venv/bin/python bench/pii_real_text.py`` (native backend if built, ``--backend fallback``
for the pure-Python one; the parity tests hold them equal).
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import json
import random
import re
import sysconfig
import time
from pathlib import Path
from typing import Any

QUAD = rb"(?<![0-9.])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?![0-9.]?[0-9])"
_BRACKETED = re.compile(rb"[\[(]" + QUAD + rb"[\])]")
_QUAD = re.compile(QUAD)


def changelog_texts() -> list[tuple[str, bytes]]:
    out = []
    for p in sorted(Path("/usr/share/doc").glob("*/changelog*.gz")):
        try:
            out.append((str(p), gzip.decompress(p.read_bytes())))
        except (OSError, EOFError):
            continue
    return out


def manual_texts() -> list[tuple[str, bytes]]:
    out = []
    for p in sorted(Path("/usr/share/info").glob("*.info*.gz")):
        try:
            out.append((str(p), gzip.decompress(p.read_bytes())))
        except (OSError, EOFError):
            continue
    return out


def mail_header_lines() -> list[tuple[str, bytes]]:
    """Every ``Received:`` header, continuation lines joined, from mail files on the machine."""
    roots = [Path(sysconfig.get_paths()["stdlib"]) / "test", Path("/usr/share/doc")]
    out = []
    for root in roots:
        if not root.is_dir():
            continue
        for p in sorted(root.rglob("*")):
            if not p.is_file() or p.suffix in (".py", ".pyc", ".gz") or p.stat().st_size > 2**20:
                continue
            try:
                data = p.read_bytes()
            except OSError:
                continue
            if b"Received:" not in data:
                continue
            for m in re.finditer(rb"^Received:[^\n]*(?:\r?\n[ \t][^\n]*)*", data, re.MULTILINE):
                out.append((str(p), m.group()))
    return out


def load_masker(backend: str) -> Any:
    if backend == "native":
        return importlib.import_module("luminamoon.data._native").PIIMasker
    return importlib.import_module("luminamoon.data.fallbacks").PIIMasker


def ipv4_matches(masker: Any, text: bytes) -> list[tuple[int, int]]:
    return [
        (s.byte_start, s.byte_end)
        for s in masker.find(text)
        if s.category == "IP_ADDRESS" and b":" not in text[s.byte_start : s.byte_end]
    ]


def context(text: bytes, a: int, b: int, width: int = 40) -> str:
    left = text[max(0, a - width) : a].decode("utf-8", "replace").replace("\n", "⏎")
    right = text[b : b + width].decode("utf-8", "replace").replace("\n", "⏎")
    return f"{left}[[{text[a:b].decode()}]]{right}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("native", "fallback"), default="native")
    parser.add_argument("--show", type=int, default=0, help="print N sampled matches per corpus")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    masker = load_masker(args.backend)(email=False, api_key=False, credit_card=False)
    masker_all = load_masker(args.backend)(
        email=False, api_key=False, credit_card=False, mask_private_ips=True
    )
    results: dict[str, Any] = {"backend": args.backend}
    rng = random.Random(args.seed)
    for name, docs in (("changelogs", changelog_texts()), ("manuals", manual_texts())):
        total = sum(len(d) for _, d in docs)
        start = time.perf_counter()
        found = [(path, d, ipv4_matches(masker, d)) for path, d in docs]
        seconds = time.perf_counter() - start
        flat = [(path, d, a, b) for path, d, ms in found for a, b in ms]
        results[name] = {
            "files": len(docs),
            "mb": round(total / 1e6, 2),
            "ipv4_matches": len(flat),
            "matches_per_mb": round(len(flat) / (total / 1e6), 3),
            "seconds": round(seconds, 2),
        }
        print(f"{name:11} files={len(docs):5} MB={total / 1e6:7.1f} ipv4 matches={len(flat):6}")
        for path, d, a, b in rng.sample(flat, min(args.show, len(flat))):
            print(f"   {Path(path).parent.name[:24]:24} {context(d, a, b)}")
    headers = mail_header_lines()
    truth = found_count = 0
    missed = []
    for _path, line in headers:
        spans = ipv4_matches(masker_all, line)
        for m in _BRACKETED.finditer(line):
            a, b = m.start() + 1, m.end() - 1
            truth += 1
            if (a, b) in spans:
                found_count += 1
            else:
                missed.append(context(line, a, b))
    results["mail_headers"] = {
        "received_headers": len(headers),
        "bracketed_addresses": truth,
        "found": found_count,
        "recall": round(found_count / truth, 4) if truth else None,
        "missed": missed[:20],
    }
    print(
        f"mail headers: {len(headers)} Received: headers, {truth} bracketed addresses, "
        f"found {found_count} (recall {found_count / max(truth, 1):.4f})"
    )
    for m in missed[:10]:
        print("   missed", m)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

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

Labelled set: ``tests/data/pii/real_labelled.jsonl`` holds 112 lines of the same real text
(changelogs, Info manuals, CPython's test e-mails; the source is on each line), labelled by
reading them, not by running the rules: every e-mail mailbox and every IP address (private ones
too) is a span; message/content ids, ``@`` in code and file names, versions, OIDs, section
numbers and dates are not. ``score_labelled`` gives span-exact precision/recall per category
(``mask_private_ips=True``, since the labels do not depend on the address range).

Run: ``.venv/bin/python bench/pii_real_text.py`` (native backend if built, ``--backend fallback``
for the pure-Python one; the parity tests hold them equal). ``--old-fallback DIR`` scores a
``python/`` tree of an older commit (``git archive <commit> python | tar -x -C DIR``) beside.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import json
import random
import re
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

from real_corpus import pack_blocks

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


def mail_messages() -> list[tuple[str, str]]:
    """The e-mail messages of CPython's own test suite (``test/test_email/data/msg_*.txt``): real
    headers and bodies (addresses, ``Received:`` chains, message ids), one document each."""
    root = Path(sysconfig.get_paths()["stdlib"]) / "test" / "test_email" / "data"
    out = []
    for p in sorted(root.glob("msg_*.txt")):
        try:
            out.append((str(p), p.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def split_blocks(text: str, max_bytes: int) -> list[str]:
    """Cuts ``text`` at blank lines into pieces of at most ``max_bytes`` UTF-8 bytes (a longer
    paragraph is its own piece), as bench/real_corpus.py does."""
    return [p for p in pack_blocks(text.strip().split("\n\n"), max_bytes) if p.strip()]


def pii_dense_corpora(
    masker: Any, changelog_docs: int = 2000, max_doc_bytes: int = 8192, seed: int = 5
) -> dict[str, list[str]]:
    """Real text in which every document has PII (what ``masker.find`` reports): ``mail``, the
    CPython test e-mails; ``changelogs``, Debian changelogs cut at blank lines into documents of
    at most ``max_doc_bytes`` (maintainer trailer lines carry an address in nearly every entry),
    a seeded sample of ``changelog_docs`` of them across all packages."""
    mail = [text for _, text in mail_messages() if masker.find(text)]
    pieces: list[str] = []
    for _, data in changelog_texts():
        try:
            pieces += split_blocks(data.decode("utf-8"), max_doc_bytes)
        except UnicodeDecodeError:
            continue
    dense = [p for p in pieces if masker.find(p)]
    rng = random.Random(seed)
    changelogs = rng.sample(dense, min(changelog_docs, len(dense)))
    return {"mail": mail, "changelogs": changelogs}


LABELLED = Path(__file__).resolve().parents[1] / "tests" / "data" / "pii" / "real_labelled.jsonl"
CATEGORIES = ("EMAIL", "IP_ADDRESS", "API_KEY", "CREDIT_CARD")


def load_labelled() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]


def score_labelled(masker_class: Any, rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Span-exact (category, matched text) precision/recall per category; a label's text occurs
    once in its line, and a prediction counts once per occurrence."""
    masker = masker_class(mask_private_ips=True)
    tally = {c: {"tp": 0, "fp": 0, "fn": 0} for c in CATEGORIES}
    errors: list[str] = []
    for row in rows:
        gold = [tuple(x) for x in row["spans"]]
        pred = [(s.category, s.text) for s in masker.find(row["text"])]
        for item in pred:
            if item in gold:
                gold.remove(item)
                tally[item[0]]["tp"] += 1
            else:
                tally[item[0]]["fp"] += 1
                errors.append(f"FP {item} in {row['text'][:90]!r}")
        for item in gold:
            tally[item[0]]["fn"] += 1
            errors.append(f"FN {item} in {row['text'][:90]!r}")
    out: dict[str, dict[str, Any]] = {}
    for c, t in tally.items():
        predicted, actual = t["tp"] + t["fp"], t["tp"] + t["fn"]
        out[c] = {
            **t,
            "precision": round(t["tp"] / predicted, 4) if predicted else None,
            "recall": round(t["tp"] / actual, 4) if actual else None,
        }
    out["errors"] = {"list": errors}
    return out


def print_scores(name: str, scores: dict[str, dict[str, Any]]) -> None:
    for c in CATEGORIES:
        s = scores[c]
        print(
            f"  {name:22} {c:12} precision {s['precision']!s:7} recall {s['recall']!s:7} "
            f"tp={s['tp']} fp={s['fp']} fn={s['fn']}"
        )


def load_masker(backend: str) -> Any:
    if backend == "native":
        return importlib.import_module("luminamoon.data._native").PIIMasker
    return importlib.import_module("luminamoon.data.fallbacks").PIIMasker


def score_datatrove(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """datatrove's PIIFormatter (e-mails and public IPs, its defaults except that private IPs
    count too), scored on the same labels: its replacements are located by diffing."""
    from datatrove.pipeline.formatters import PIIFormatter

    formatter = PIIFormatter(only_remove_public_ips=False)
    email_re = formatter.emails_replacer if hasattr(formatter, "emails_replacer") else None
    ip_re = formatter.ip_replacer if hasattr(formatter, "ip_replacer") else None
    replacers = [("EMAIL", email_re), ("IP_ADDRESS", ip_re)]

    class _Found:
        def __init__(self, category: str, text: str) -> None:
            self.category, self.text = category, text

    class _Adapter:
        def __init__(self, **_: Any) -> None:
            pass

        def find(self, text: str) -> list[_Found]:
            out = []
            for category, rep in replacers:
                if rep is None:
                    continue
                for m in rep.regex.finditer(text):
                    if rep.validator is None or rep.validator(m.group(0)):
                        out.append(_Found(category, m.group(0)))
            return out

    return score_labelled(_Adapter, rows)


def datatrove_ipv4_count(text: bytes) -> int:
    """IPv4 matches of datatrove's PIIFormatter with its defaults (public addresses only)."""
    from datatrove.pipeline.formatters import PIIFormatter

    rep = PIIFormatter().ip_replacer
    return sum(
        1
        for m in rep.regex.finditer(text.decode("utf-8", "replace"))
        if ":" not in m.group(0) and (rep.validator is None or rep.validator(m.group(0)))
    )


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
    parser.add_argument("--old-fallback", type=Path, default=None)
    args = parser.parse_args()
    rows = load_labelled()
    print(f"labelled real set: {len(rows)} lines, {sum(len(r['spans']) for r in rows)} spans")
    scores = {"ours": score_labelled(load_masker(args.backend), rows)}
    if args.old_fallback is not None:
        sys.path.insert(0, str(args.old_fallback / "python"))
        for name in [m for m in sys.modules if m.startswith("luminamoon")]:
            del sys.modules[name]
        old = importlib.import_module("luminamoon.data.fallbacks").PIIMasker
        scores["before (old rules)"] = score_labelled(old, rows)
        sys.path.pop(0)
        for name in [m for m in sys.modules if m.startswith("luminamoon")]:
            del sys.modules[name]
    try:
        scores["datatrove PIIFormatter"] = score_datatrove(rows)
    except ImportError as exc:
        print(f"  datatrove not scored: {exc}")
    for name, sc in scores.items():
        print_scores(name, sc)
    for e in scores["ours"]["errors"]["list"]:
        print("   ", e)
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
        try:
            peer: int | None = sum(datatrove_ipv4_count(d) for _, d in docs)
        except ImportError:
            peer = None
        results[name] = {
            "datatrove_ipv4_matches": peer,
            "files": len(docs),
            "mb": round(total / 1e6, 2),
            "ipv4_matches": len(flat),
            "matches_per_mb": round(len(flat) / (total / 1e6), 3),
            "seconds": round(seconds, 2),
        }
        print(
            f"{name:11} files={len(docs):5} MB={total / 1e6:7.1f} ipv4 matches={len(flat):6} "
            f"(datatrove PIIFormatter: {peer})"
        )
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
    results["labelled_real_set"] = {
        k: {c: v for c, v in sc.items() if c != "errors"} for k, sc in scores.items()
    }
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

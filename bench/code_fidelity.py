#!/usr/bin/env python3
"""Proof on real code that the default TextCleaner (``whitespace="preserve_indent"``) keeps it
intact, and how much the old ``whitespace="collapse"`` rule destroys.

Two corpora found on the machine (nothing is downloaded):
  * every ``.py`` file of the running interpreter's standard library (``sysconfig`` ``stdlib``,
    ``site-packages``/``dist-packages`` excluded): the cleaned text must parse to the same
    ``ast.dump`` as the original. The only differences allowed are the documented line-end rules
    acting inside string literals (trailing blanks before a line end removed, 3+ line ends -> 2,
    CR LF -> LF), so a file whose string constants differ is checked again with those rules
    applied to every string constant of both trees; a file that still differs is a failure.
  * every C/C++ header under ``/usr/include`` (``*.h``, ``*.hh``, ``*.hpp``, ``*.hxx`` and the
    extension-less headers of ``c++/``): the cleaned text must give the same token stream as the
    original under a small C tokenizer (comments dropped, line continuations joined, string and
    character literals kept whole, a line break is a token because directives are line based).

Files that are not valid UTF-8 are counted and skipped (the cleaner would repair them, which is
a documented change). Files the interpreter cannot parse in the first place (test data with
deliberate syntax errors) are counted and skipped. Both backends are run on every file and must
give the same bytes.

Run: ``.venv/bin/python bench/code_fidelity.py`` (``--limit N`` samples N files per corpus,
``--json PATH`` writes the figures). tests/test_cleaner_code_fidelity.py runs a sample.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import sysconfig
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from luminamoon.data import fallbacks

try:
    from luminamoon.data import _native as native
except ImportError:  # the fallback alone still proves the rule
    native = None

_H = "\t \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000"
_TRAILING = re.compile(f"[{_H}]+(?=\n|\\Z)")
_NEWLINE_RUNS = re.compile("\n{3,}")
_CR = re.compile("\r\n?")


def line_end_rules(text: str) -> str:
    """The documented line-end rules (docs/cleaner.md steps 2, 5, 6), applied to a literal."""
    return _NEWLINE_RUNS.sub("\n\n", _TRAILING.sub("", _CR.sub("\n", text)))


# -- Python --------------------------------------------------------------------------------------


def python_files(limit: int | None = None) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(
        p
        for p in root.rglob("*.py")
        if "site-packages" not in p.parts and "dist-packages" not in p.parts
    )
    return _sample(files, limit)


class _NormaliseStrings(ast.NodeTransformer):
    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        if isinstance(node.value, str):
            node.value = line_end_rules(node.value)
        elif isinstance(node.value, bytes):
            node.value = line_end_rules(node.value.decode("latin-1")).encode("latin-1")
        return node


def python_verdict(original: str, cleaned: str) -> str:
    """``same``, ``same_modulo_literal_line_ends`` or ``DIFFERENT`` (or ``unparsable``)."""
    try:
        tree = ast.parse(original)
    except (SyntaxError, ValueError):
        return "unparsable"
    try:
        clean_tree = ast.parse(cleaned)
    except (SyntaxError, ValueError):
        return "DIFFERENT"
    if ast.dump(tree) == ast.dump(clean_tree):
        return "same"
    norm = _NormaliseStrings()
    if ast.dump(norm.visit(tree)) == ast.dump(norm.visit(clean_tree)):
        return "same_modulo_literal_line_ends"
    return "DIFFERENT"


# -- C / C++ -------------------------------------------------------------------------------------


def header_files(limit: int | None = None) -> list[Path]:
    root = Path("/usr/include")
    if not root.is_dir():
        return []
    files = []
    for p in root.rglob("*"):
        if not p.is_file() or p.is_symlink():
            continue
        if p.suffix in (".h", ".hh", ".hpp", ".hxx") or (
            not p.suffix and "c++" in p.relative_to(root).parts
        ):
            files.append(p)
    return _sample(sorted(files), limit)


_C_TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>(?:u8|[uUL])?R"(?P<delim>[^()\\ \t\n]{0,16})\(.*?\)(?P=delim)"
      |(?:u8|[uUL])?"(?:\\.|[^"\\\n])*"|(?:u8|[uUL])?'(?:\\.|[^'\\\n])*')
  | (?P<newline>\n)
  | (?P<space>[^\S\n]+)
  | (?P<word>\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.'])*|[A-Za-z_$][A-Za-z0-9_$]*)
  | (?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)
# Exotic Unicode spaces are whitespace to this tokenizer, as they are to the cleaner.
_C_CONTINUATION = re.compile(r"\\[ \t]*\n")


def c_tokens(text: str) -> list[str]:
    """The token stream: comments dropped, whitespace dropped, runs of line breaks as one."""
    text = _C_CONTINUATION.sub("", _CR.sub("\n", text))
    tokens: list[str] = []
    for m in _C_TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("comment", "space") or kind == "delim":
            if kind == "comment" and m.group().startswith("/*") and "\n" in m.group():
                _push_newline(tokens)
            continue
        if kind == "newline":
            _push_newline(tokens)
        elif m.group("string") is not None:
            tokens.append(m.group("string"))
        elif m.group().isspace():
            continue
        else:
            tokens.append(m.group())
    while tokens and tokens[-1] == "\n":
        tokens.pop()
    while tokens and tokens[0] == "\n":
        tokens.pop(0)
    return tokens


def _push_newline(tokens: list[str]) -> None:
    if tokens and tokens[-1] != "\n":
        tokens.append("\n")


def c_verdict(original: str, cleaned: str) -> str:
    a, b = c_tokens(original), c_tokens(cleaned)
    if a == b:
        return "same"
    if len(a) == len(b) and all(
        x == y or line_end_rules(x) == line_end_rules(y) for x, y in zip(a, b, strict=True)
    ):
        return "same_modulo_literal_line_ends"
    return "DIFFERENT"


# -- driver --------------------------------------------------------------------------------------


def _sample(files: list[Path], limit: int | None) -> list[Path]:
    if limit is None or limit >= len(files):
        return files
    step = len(files) / limit
    return [files[int(i * step)] for i in range(limit)]


# A line that starts with a tab or 2+ spaces and has something else on it.
_INDENTED = re.compile(r"^(?:\t| {2,})[ \t]*\S", re.MULTILINE)


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def check_corpus(
    files: list[Path], verdict: Callable[[str, str], str], whitespace: str
) -> dict[str, Any]:
    """Clean every file with both backends; the verdict of the cleaned text against the
    original. Returns counts, bytes, seconds in the native cleaner and the failing paths."""
    cleaners = [fallbacks.TextCleaner(whitespace=whitespace)]
    if native is not None:
        cleaners.insert(0, native.TextCleaner(whitespace=whitespace))
    counts: Counter[str] = Counter()
    failures: list[str] = []
    total_bytes = 0
    seconds = 0.0
    indented_before = indented_after = 0
    for path in files:
        text = _read(path)
        if text is None:
            counts["not_utf8"] += 1
            continue
        total_bytes += len(text.encode())
        start = time.perf_counter()
        cleaned = cleaners[0].clean(text)
        seconds += time.perf_counter() - start
        for other in cleaners[1:]:
            if other.clean(text) != cleaned:
                counts["BACKENDS_DIFFER"] += 1
                failures.append(f"{path} (backends differ)")
        indented_before += len(_INDENTED.findall(text))
        indented_after += len(_INDENTED.findall(cleaned))
        v = verdict(text, cleaned)
        counts[v] += 1
        if v == "DIFFERENT":
            failures.append(str(path))
    return {
        "files": len(files),
        "bytes": total_bytes,
        "verdicts": dict(sorted(counts.items())),
        "indented_lines_before": indented_before,
        "indented_lines_after": indented_after,
        "clean_seconds": round(seconds, 3),
        "failures": failures[:50],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="files per corpus (sampled)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--modes", default="preserve_indent,collapse")
    args = parser.parse_args()
    corpora = {
        "cpython_stdlib_py": (python_files(args.limit), python_verdict),
        "usr_include_headers": (header_files(args.limit), c_verdict),
    }
    results: dict[str, Any] = {
        "python": sys.version.split()[0],
        "stdlib": sysconfig.get_paths()["stdlib"],
        "backends": "native+fallback" if native is not None else "fallback",
    }
    ok = True
    for name, (files, verdict) in corpora.items():
        for mode in args.modes.split(","):
            r = check_corpus(files, verdict, mode)
            results[f"{name}/{mode}"] = r
            print(
                f"{name:22} {mode:16} files={r['files']:6} MB={r['bytes'] / 1e6:7.1f} "
                f"verdicts={r['verdicts']} indented lines {r['indented_lines_before']} -> "
                f"{r['indented_lines_after']}",
                flush=True,
            )
            if mode == "preserve_indent" and (
                r["verdicts"].get("DIFFERENT", 0) or r["verdicts"].get("BACKENDS_DIFFER", 0)
            ):
                ok = False
                for failure in r["failures"][:10]:
                    print("   FAIL", failure)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

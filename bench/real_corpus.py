#!/usr/bin/env python3
"""A real-text JSONL corpus from what a Debian machine with CPython has on disk.

Five sources, all text written by people (nothing generated):

* ``doc``: /usr/share/doc — package changelogs (``changelog*``, ``NEWS*``, decompressed from
  .gz), READMEs and other ``.txt``/``.md``/``.rst`` files, and the Debian ``copyright`` files
  (many packages share one licence text: natural exact and near-duplicates);
* ``man``: manual pages rendered to text by ``man`` (``MANWIDTH=80``, ``col -bx``): English
  sections 1, 5, 7, 8 and the translated pages of ten languages (de, es, fr, it, ja, pl, pt_BR,
  ru, uk, zh_CN);
* ``pydoc``: the docstrings of the CPython standard library (module, class and function
  docstrings read with ``ast``, no import) and the ``pydoc_data.topics`` help texts;
* ``licenses``: /usr/share/common-licenses;
* ``pkg``: the ``METADATA`` files of the installed Python distributions (headers with the
  authors' e-mail addresses, then the project README).

Long files are cut into documents of at most ``--max-doc-bytes`` at blank lines (a changelog
becomes several documents). Documents are shuffled with a fixed seed; each source gets at most
its share of ``--max-mb`` (``SOURCE_SHARES``), the rest of the budget is filled from all; they are
written as ``real-NNNNN.jsonl`` shards of ``{"id", "url", "text"}``. A non-UTF-8 file is
skipped. What is read depends on the packages installed, so the corpus is described (sources,
documents, bytes) in ``manifest.json`` next to the shards, and the benchmark prints it.

Run: ``python bench/real_corpus.py [--out bench/out/real] [--max-mb 16]``.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import os
import random
import subprocess
import sys
import sysconfig
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

DOC_ROOT = Path("/usr/share/doc")
MAN_ROOT = Path("/usr/share/man")
LICENSES = Path("/usr/share/common-licenses")
MAN_LANGUAGES = ("de", "es", "fr", "it", "ja", "pl", "pt_BR", "ru", "uk", "zh_CN")
DOC_SUFFIXES = (".txt", ".md", ".rst")
SOURCE_SHARES = {"man": 0.25, "pydoc": 0.20, "pkg": 0.08, "licenses": 0.02, "doc": 0.45}


def read_text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
        return None


def pack_blocks(blocks: Iterable[str], max_bytes: int) -> list[str]:
    """Joins consecutive ``blocks`` with blank lines into pieces of at most ``max_bytes`` UTF-8
    bytes (2 counted per block for its separator; a longer block is its own piece)."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for block in blocks:
        n = len(block.encode()) + 2
        if current and size + n > max_bytes:
            pieces.append("\n\n".join(current))
            current, size = [], 0
        current.append(block)
        size += n
    if current:
        pieces.append("\n\n".join(current))
    return pieces


def split_document(text: str, max_bytes: int) -> list[str]:
    """Cuts ``text`` at blank lines into pieces of at most ``max_bytes`` UTF-8 bytes (a single
    longer paragraph is its own piece)."""
    text = text.strip()
    if len(text.encode()) <= max_bytes:
        return [text] if text else []
    pieces = (p.strip() for p in pack_blocks(text.split("\n\n"), max_bytes))
    return [p for p in pieces if p]


def doc_files() -> Iterator[Path]:
    for path in sorted(DOC_ROOT.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        name = path.name.removesuffix(".gz").lower()
        if (
            name.startswith(("changelog", "news", "readme"))
            or name == "copyright"
            or name.endswith(DOC_SUFFIXES)
        ):
            yield path


def render_man(path: Path) -> str | None:
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MAN_KEEP_FORMATTING="")
    try:
        page = subprocess.run(
            ["man", "-E", "UTF-8", "-l", str(path)],
            capture_output=True,
            env=env,
            timeout=60,
            check=False,
        ).stdout
        text = subprocess.run(
            ["col", "-bx"], input=page, capture_output=True, env=env, timeout=60, check=False
        ).stdout
        return text.decode("utf-8")
    except (OSError, subprocess.TimeoutExpired, UnicodeDecodeError):
        return None


def man_files(english: int, translated: int) -> list[Path]:
    chosen: list[Path] = []
    for section in ("man1", "man5", "man7", "man8"):
        pages = sorted((MAN_ROOT / section).glob("*.gz"))
        step = max(1, len(pages) * 4 // max(1, english))
        chosen += pages[::step][: english // 4]
    per_language = max(1, translated // len(MAN_LANGUAGES))
    for language in MAN_LANGUAGES:
        pages = sorted((MAN_ROOT / language).glob("man*/*.gz"))
        step = max(1, len(pages) // per_language)
        chosen += pages[::step][:per_language]
    return chosen


def stdlib_docstrings() -> Iterator[tuple[str, str]]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.rglob("*.py")):
        rel = path.relative_to(stdlib)
        if rel.parts[0] in ("test", "idlelib", "site-packages", "lib2to3") or "tests" in rel.parts:
            continue
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        parts: list[str] = []
        doc = ast.get_docstring(tree)
        if doc:
            parts.append(doc)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                doc = ast.get_docstring(node)
                if doc and len(doc) > 80:
                    parts.append(f"{node.name}\n\n{doc}")
        if parts:
            yield str(path), "\n\n".join(parts)
    from pydoc_data import topics

    for key in sorted(topics.topics):
        yield f"pydoc_data.topics/{key}", topics.topics[key]


def package_metadata() -> Iterator[Path]:
    seen: set[str] = set()
    for entry in sys.path:
        root = Path(entry)
        if not root.is_dir():
            continue
        for meta in sorted(root.glob("*.dist-info/METADATA")):
            name = meta.parent.name.split("-")[0].lower()
            if name not in seen:
                seen.add(name)
                yield meta


def collect(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """(source, path, text) of every document."""
    docs: list[tuple[str, str, str]] = []
    skipped: Counter[str] = Counter()

    def add(source: str, path: str, text: str | None) -> None:
        if text is None:
            skipped[source] += 1
            return
        docs.extend((source, path, piece) for piece in split_document(text, args.max_doc_bytes))

    for path in doc_files():
        add("doc", str(path), read_text(path))
    for path in sorted(LICENSES.iterdir()) if LICENSES.is_dir() else ():
        add("licenses", str(path), read_text(path))
    for path, text in stdlib_docstrings():
        add("pydoc", path, text)
    for meta in package_metadata():
        add("pkg", str(meta), read_text(meta))
    pages = man_files(args.man_english, args.man_translated)
    print(f"rendering {len(pages)} manual pages...", file=sys.stderr, flush=True)
    with ThreadPoolExecutor(max_workers=2) as pool:
        for path, text in zip(pages, pool.map(render_man, pages), strict=True):
            add("man", str(path), text)
    if skipped:
        print(f"skipped (unreadable or not UTF-8): {dict(skipped)}", file=sys.stderr)
    return docs


def build(args: argparse.Namespace) -> dict[str, object]:
    docs = collect(args)
    random.Random(args.seed).shuffle(docs)
    budget = int(args.max_mb * 1e6)
    chosen: list[tuple[str, str, str]] = []
    total = 0
    taken: set[int] = set()
    # Each source gets at most its share of the bytes first (changelogs alone would fill the
    # corpus), then what is left of the budget is filled from every source in shuffled order.
    for source, share in SOURCE_SHARES.items():
        used = 0
        for i, doc in enumerate(docs):
            n = len(doc[2].encode())
            if doc[0] == source and used + n <= share * budget and total + n <= budget:
                chosen.append(doc)
                taken.add(i)
                used += n
                total += n
    for i, doc in enumerate(docs):
        n = len(doc[2].encode())
        if i not in taken and total + n <= budget:
            chosen.append(doc)
            total += n
    random.Random(args.seed + 1).shuffle(chosen)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("real-*.jsonl"):
        old.unlink()
    shards = args.shards
    for k in range(shards):
        part = chosen[k * len(chosen) // shards : (k + 1) * len(chosen) // shards]
        with (out / f"real-{k:05d}.jsonl").open("w", encoding="utf-8") as fh:
            for i, (source, path, text) in enumerate(part):
                record = {"id": f"{source}:{k}:{i}", "url": f"file://{path}", "text": text}
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    by_source: dict[str, dict[str, int]] = {}
    for source, _, text in chosen:
        entry = by_source.setdefault(source, {"documents": 0, "bytes": 0})
        entry["documents"] += 1
        entry["bytes"] += len(text.encode())
    manifest = {
        "documents": len(chosen),
        "bytes": total,
        "available_documents": len(docs),
        "shards": shards,
        "max_doc_bytes": args.max_doc_bytes,
        "seed": args.seed,
        "sources": by_source,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "out" / "real"))
    parser.add_argument("--max-mb", type=float, default=8.0)
    parser.add_argument("--max-doc-bytes", type=int, default=8192)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--man-english", type=int, default=400)
    parser.add_argument("--man-translated", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    manifest = build(parser.parse_args())
    print(json.dumps(manifest, indent=2))


if __name__ == "__main__":
    main()

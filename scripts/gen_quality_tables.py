#!/usr/bin/env python3
"""Generate the character and tokenizer tables of the QualityFilter (native and fallback).

Writes two files from one source of truth, so both backends classify every code point and split
every word the same way:

* ``src/quality/generated_tables.cc`` (C++), and
* ``python/luminamoon/data/fallbacks/_quality_tables.py`` (pure Python).

What they hold (docs/quality.md explains how each table is used):

* per code point, a set of flag bits: Python's ``str.isspace``/``str.isalpha``/``\\w``/``\\d``,
  Unicode general categories L/M/N and P, datatrove 0.10.1's ``PUNCTUATION_SET`` and
  ``TERMINAL_PUNCTUATION``, spaCy 3.8's English tokenizer character classes (alpha, lower,
  upper, quotes, icons, the single-character prefixes and suffixes, the characters a suffix
  ``.`` may follow) and the sentencizer's punctuation;
* spaCy's English tokenizer exceptions (``"don't" -> "do" "n't"``, ``"Mr."``, ...), and its
  unit and currency suffixes.

Needs the interpreter whose ``unicodedata`` defines the Unicode version (CPython 3.11: Unicode
14.0.0), ``spacy==3.8.*`` and ``datatrove==0.10.1`` (``pip install -r requirements-bench.txt``).
The outputs are committed; run this only to move to another Unicode or spaCy version, then run
the test suite (tests/test_quality_datatrove.py compares the tables with spaCy again).

Usage: ``python scripts/gen_quality_tables.py [--check]`` (``--check``: fail if the committed
files differ from what would be generated).
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from pathlib import Path

import spacy
from datatrove.utils.text import PUNCTUATION_SET, TERMINAL_PUNCTUATION
from spacy.lang import char_classes as cc
from spacy.pipeline.sentencizer import Sentencizer
from spacy.tokenizer import Tokenizer

ROOT = Path(__file__).resolve().parents[1]
CC_OUT = ROOT / "src" / "quality" / "generated_tables.cc"
PY_OUT = ROOT / "python" / "luminamoon" / "data" / "fallbacks" / "_quality_tables.py"

# Bit order is part of both generated files; keep it in sync with src/quality/internal/tables.h.
FLAGS = [
    ("SPACE", "Python str.isspace()"),
    ("ALPHA", "Python str.isalpha() (general category L*)"),
    ("UNI_PUNCT", "general category P* (spaCy's is_punct, per character)"),
    ("MARK", "general category M* (a combining mark)"),
    ("UPPER", "general category Lu or Lt (an upper- or titlecase letter)"),
    ("LOWER", "general category Ll (a lowercase letter)"),
    ("DT_PUNCT", "datatrove PUNCTUATION_SET"),
    ("DT_TERMINAL", "datatrove TERMINAL_PUNCTUATION (FineWeb stop characters)"),
    ("SP_ALPHA", "spaCy ALPHA character class"),
    ("SP_LOWER", "spaCy ALPHA_LOWER character class"),
    ("SP_UPPER", "spaCy ALPHA_UPPER character class"),
    ("SP_QUOTE", "spaCy CONCAT_QUOTES character class"),
    ("SP_ICON", "spaCy ICONS character class (symbols, emoji)"),
    ("SP_PREFIX", "a one-character spaCy English tokenizer prefix"),
    ("SP_SUFFIX", "a one-character unconditional spaCy English tokenizer suffix"),
    ("SP_DOT_AFTER", "a character after which spaCy splits a final '.' as a suffix"),
    ("SENT_PUNCT", "spaCy Sentencizer default punct_chars"),
    ("RE_WORD", "Python re \\w (str.isalnum() or '_')"),
    ("RE_DIGIT", "Python re \\d (Unicode decimal digit)"),
]
BIT = {name: 1 << i for i, (name, _) in enumerate(FLAGS)}


def char_class(body: str) -> re.Pattern[str]:
    return re.compile(f"[{body}]")


def compute_flags() -> list[int]:
    nlp = spacy.blank("en")
    tok = nlp.tokenizer
    alpha = char_class(cc.ALPHA)
    lower = char_class(cc.ALPHA_LOWER)
    upper = char_class(cc.ALPHA_UPPER)
    quote = char_class(cc.CONCAT_QUOTES)
    icon = char_class(cc.ICONS)
    # The look-behind of spaCy's suffix rule r"(?<=[0-9{al}{e}{p}(?:{q})])\." (PUNCT and the
    # quotes are pasted into the class, so '|', '(', '?', ':' and ')' are members too).
    dot_after = char_class(
        "0-9{al}{e}{p}(?:{q})".format(
            al=cc.ALPHA_LOWER, e=r"%²\-\+", q=cc.CONCAT_QUOTES, p=cc.PUNCT
        )
    )
    sent_punct = set(Sentencizer.default_punct_chars)
    re_word = re.compile(r"\w")
    re_digit = re.compile(r"\d")
    flags = [0] * 0x110000
    for cp in range(0x110000):
        ch = chr(cp)
        cat = unicodedata.category(ch)
        f = 0
        if ch.isspace():
            f |= BIT["SPACE"]
        if ch.isalpha():
            f |= BIT["ALPHA"]
        if cat[0] == "P":
            f |= BIT["UNI_PUNCT"]
        if cat[0] == "M":
            f |= BIT["MARK"]
        if cat in ("Lu", "Lt"):
            f |= BIT["UPPER"]
        if cat == "Ll":
            f |= BIT["LOWER"]
        if ch in PUNCTUATION_SET:
            f |= BIT["DT_PUNCT"]
        if ch in TERMINAL_PUNCTUATION:
            f |= BIT["DT_TERMINAL"]
        if 0xD800 <= cp <= 0xDFFF:
            flags[cp] = f  # surrogates never reach the tokenizer (decoding replaces them)
            continue
        if alpha.match(ch):
            f |= BIT["SP_ALPHA"]
        if lower.match(ch):
            f |= BIT["SP_LOWER"]
        if upper.match(ch):
            f |= BIT["SP_UPPER"]
        if quote.match(ch):
            f |= BIT["SP_QUOTE"]
        if icon.match(ch):
            f |= BIT["SP_ICON"]
        m = tok.prefix_search(ch + "a")
        if m is not None and m.end() == 1:
            f |= BIT["SP_PREFIX"]
        m = tok.suffix_search(" " + ch)
        if m is not None and m.start() == 1:
            f |= BIT["SP_SUFFIX"]
        if dot_after.match(ch):
            f |= BIT["SP_DOT_AFTER"]
        if ch in sent_punct:
            f |= BIT["SENT_PUNCT"]
        if re_word.match(ch):
            f |= BIT["RE_WORD"]
        if re_digit.match(ch):
            f |= BIT["RE_DIGIT"]
        flags[cp] = f
    return flags


def ranges_of(flags: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for cp, f in enumerate(flags):
        if not out or out[-1][1] != f:
            out.append((cp, f))
    return out


def special_cases() -> list[tuple[str, list[str]]]:
    rules = spacy.blank("en").tokenizer.rules
    out = []
    for key, pieces in rules.items():
        if any(ch.isspace() for ch in key):
            continue  # whitespace never reaches the tokenizer's word loop
        orths = [p[65] if 65 in p else p["ORTH"] for p in pieces]  # 65 == spacy.attrs.ORTH
        assert "".join(orths) == key, key
        out.append((key, orths))
    out.sort()
    return out


def matcher_patterns() -> list[tuple[str, list[str]]]:
    """spaCy's special-case matcher: exceptions whose text the affix rules would split.

    spaCy re-merges such token sequences after tokenizing (Tokenizer._apply_special_cases);
    the pattern of an exception is its tokenization without exceptions.
    """
    nlp = spacy.blank("en")
    tok = nlp.tokenizer
    bare = Tokenizer(
        nlp.vocab,
        rules={},
        prefix_search=tok.prefix_search,
        suffix_search=tok.suffix_search,
        infix_finditer=tok.infix_finditer,
        token_match=tok.token_match,
        url_match=tok.url_match,
    )
    out = []
    for key in tok.rules:
        if any(ch.isspace() for ch in key):
            continue
        if tok.find_prefix(key) or tok.find_infix(key) or tok.find_suffix(key):
            pieces = [t.text for t in bare(key)]
            assert "".join(pieces) == key, key
            out.append((key, pieces))
    out.sort()
    return out


def unescape(items: list[str]) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", s) for s in items if s]


def py_string(s: str) -> str:
    """A double-quoted, ASCII-only Python literal (non-ASCII as \\x / \\u / \\U escapes)."""
    out = []
    for ch in s:
        cp = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= cp < 0x7F:
            out.append(ch)
        elif cp <= 0xFF:
            out.append(f"\\x{cp:02x}")
        elif cp <= 0xFFFF:
            out.append(f"\\u{cp:04x}")
        else:
            out.append(f"\\U{cp:08x}")
    return '"' + "".join(out) + '"'


def py_tuple(items: list[str]) -> str:
    return "(" + ", ".join(py_string(i) for i in items) + ("," if len(items) == 1 else "") + ")"


def py_entry(key: str, pieces: list[str]) -> list[str]:
    """A dict entry, split over lines when it would pass 100 columns."""
    line = f"    {py_string(key)}: {py_tuple(pieces)},"
    if len(line) <= 100:
        return [line]
    return [f"    {py_string(key)}: (", *(f"        {py_string(p)}," for p in pieces), "    ),"]


def cxx_string(s: str) -> str:
    body = "".join(
        ch
        if 0x20 <= ord(ch) < 0x7F and ch not in '\\"?'
        else "".join(f"\\x{b:02x}" for b in ch.encode())
        for ch in s
    )
    # Split after hex escapes so a following hex digit is not swallowed by the escape.
    return '"' + re.sub(r"(\\x[0-9a-f]{2})(?=[0-9a-fA-F])", r'\1" "', body) + '"'


def generate() -> tuple[str, str]:
    flags = compute_flags()
    ranges = ranges_of(flags)
    specials = special_cases()
    patterns = matcher_patterns()
    units = unescape(cc.UNITS.split("|"))
    currency = unescape(cc.CURRENCY.split("|"))
    header = (
        f"Generated by scripts/gen_quality_tables.py from Unicode {unicodedata.unidata_version} "
        f"(CPython {sys.version_info.major}.{sys.version_info.minor}),\nspaCy "
        f"{spacy.__version__} and datatrove 0.10.1. Do not edit.\n"
    )
    max_pieces = max(len(p) for _, p in specials)
    max_pattern = max(len(p) for _, p in patterns)
    max_key = max(len(k.encode()) for k, _ in specials)

    cxx = [
        "// Generated by scripts/gen_quality_tables.py; do not edit. Sources: Unicode "
        f"{unicodedata.unidata_version} (CPython",
        f"// {sys.version_info.major}.{sys.version_info.minor}), spaCy {spacy.__version__}, "
        "datatrove 0.10.1. See src/quality/internal/tables.h.",
        "// clang-format off",
        '#include "quality/internal/tables.h"',
        "",
    ]
    cxx.append("namespace luminamoon::data::quality_internal {")
    cxx.append("")
    cxx.append(f"const CodePointRange kCodePointRanges[{len(ranges)}] = {{")
    for start, f in ranges:
        cxx.append(f"    {{0x{start:x}, 0x{f:x}}},")
    cxx.append("};")
    cxx.append(f"const std::size_t kCodePointRangeCount = {len(ranges)};")
    cxx.append("")
    cxx.append(f"const SpecialCase kSpecialCases[{len(specials)}] = {{")
    for key, pieces in specials:
        lens = ", ".join(str(len(p.encode())) for p in pieces)
        cxx.append(f"    {{{cxx_string(key)}, {len(pieces)}, {{{lens}}}}},")
    cxx.append("};")
    cxx.append(f"const std::size_t kSpecialCaseCount = {len(specials)};")
    cxx.append("")
    cxx.append(f"const SpecialCase kMatcherPatterns[{len(patterns)}] = {{")
    for key, pieces in patterns:
        lens = ", ".join(str(len(p.encode())) for p in pieces)
        cxx.append(f"    {{{cxx_string(key)}, {len(pieces)}, {{{lens}}}}},")
    cxx.append("};")
    cxx.append(f"const std::size_t kMatcherPatternCount = {len(patterns)};")
    cxx.append("")
    cxx.append(f"const char* const kUnitSuffixes[{len(units)}] = {{")
    cxx.extend(f"    {cxx_string(u)}," for u in units)
    cxx.append("};")
    cxx.append(f"const std::size_t kUnitSuffixCount = {len(units)};")
    cxx.append(f"const char* const kCurrencySuffixes[{len(currency)}] = {{")
    cxx.extend(f"    {cxx_string(c)}," for c in currency)
    cxx.append("};")
    cxx.append(f"const std::size_t kCurrencySuffixCount = {len(currency)};")
    cxx.append("")
    cxx.append(f"static_assert(kMaxSpecialPieces >= {max(max_pieces, max_pattern)});")
    cxx.append(f"static_assert(kMaxSpecialKeyBytes >= {max_key});")
    names = " ".join(name for name, _ in FLAGS)
    cxx.append(f"// Flag bits, lowest first: {names}.")
    cxx.append("")
    cxx.append("}  // namespace luminamoon::data::quality_internal")
    cxx.append("// clang-format on")
    cxx.append("")

    py = [f'"""{header}"""', "", "from __future__ import annotations", "", "# fmt: off"]
    py.append(f'UNICODE_VERSION = "{unicodedata.unidata_version}"')
    py.append(f'SPACY_VERSION = "{spacy.__version__}"')
    py.append("")
    for i, (name, doc) in enumerate(FLAGS):
        py.append(f"{name} = 1 << {i}  # {doc}")
    py.append("")
    py.append(
        "# (first code point, flags) of every run of code points with equal flags, ascending."
    )
    py.append("RANGE_STARTS = (")
    for i in range(0, len(ranges), 8):
        py.append("    " + ", ".join(f"0x{s:x}" for s, _ in ranges[i : i + 8]) + ",")
    py.append(")")
    py.append("RANGE_FLAGS = (")
    for i in range(0, len(ranges), 8):
        py.append("    " + ", ".join(f"0x{f:x}" for _, f in ranges[i : i + 8]) + ",")
    py.append(")")
    py.append("")
    py.append("# spaCy English tokenizer exceptions: word -> its tokens.")
    py.append("SPECIAL_CASES: dict[str, tuple[str, ...]] = {")
    for key, pieces in specials:
        py.extend(py_entry(key, pieces))
    py.append("}")
    py.append(
        "# The special-case matcher: exception text -> the tokens the affix rules make of it."
    )
    py.append("MATCHER_PATTERNS: dict[str, tuple[str, ...]] = {")
    for key, pieces in patterns:
        py.extend(py_entry(key, pieces))
    py.append("}")
    py.append(f"MAX_SPECIAL_KEY_CHARS = {max(len(k) for k, _ in specials)}")
    py.append("")
    for name, items in (("UNIT_SUFFIXES", units), ("CURRENCY_SUFFIXES", currency)):
        py.append(f"{name} = (")
        line = "   "
        for item in items:
            piece = f" {py_string(item)},"
            if len(line) + len(piece) > 100:
                py.append(line)
                line = "   "
            line += piece
        py.append(line)
        py.append(")")
    py.append("# fmt: on")
    py.append("")
    return "\n".join(cxx), "\n".join(py)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    cxx, py = generate()
    if args.check:
        stale = [str(p) for p, text in ((CC_OUT, cxx), (PY_OUT, py)) if p.read_text() != text]
        if stale:
            print("stale generated tables: " + ", ".join(stale), file=sys.stderr)
            return 1
        return 0
    CC_OUT.write_text(cxx)
    PY_OUT.write_text(py)
    print(f"wrote {CC_OUT.relative_to(ROOT)} and {PY_OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

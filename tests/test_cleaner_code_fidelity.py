"""Real code survives the default TextCleaner: a sample of the standard library's Python files
parses to the same AST after cleaning, a sample of /usr/include headers keeps its token stream,
and both backends give the same bytes (bench/code_fidelity.py runs every file and records the
figures in docs/cleaner.md). The old ``whitespace="collapse"`` rule is shown to break both."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import code_fidelity as cf

SAMPLE = 40


def test_tokenizer_and_verdicts_can_fail() -> None:
    assert cf.c_tokens("#define A(x) \\\n  ((x) + 1) /* c\n */ int a;\n") == [
        "#", "define", "A", "(", "x", ")", "(", "(", "x", ")", "+", "1", ")", "\n", "int", "a", ";",
    ]  # fmt: skip
    assert cf.c_verdict('char *s = "a  b";', 'char *s = "a b";') == "DIFFERENT"
    assert cf.c_verdict('s = "a  \\\n b";', 's = "a\\\n b";') == "DIFFERENT"
    assert cf.python_verdict("if x:\n    y = 1\n    z = 2\n", "if x:\n y = 1\n z = 2\n") == "same"
    assert cf.python_verdict("s = '''a  \n\n\n\nb'''\n", "s = '''a\n\nb'''\n") == (
        "same_modulo_literal_line_ends"
    )
    assert cf.python_verdict("s = 'a  b'\n", "s = 'a b'\n") == "DIFFERENT"
    assert cf.python_verdict("if x:\n    y\n  z\n", "if x:\n y\n z\n") == "unparsable"


def test_stdlib_python_sample_keeps_its_ast() -> None:
    files = cf.python_files(SAMPLE)
    if not files:
        pytest.skip("no standard library sources on this machine")
    r = cf.check_corpus(files, cf.python_verdict, "preserve_indent")
    assert r["verdicts"].get("DIFFERENT", 0) == 0, r["failures"]
    assert r["verdicts"].get("BACKENDS_DIFFER", 0) == 0, r["failures"]
    assert r["verdicts"].get("same", 0) >= SAMPLE * 3 // 4
    assert r["indented_lines_after"] == r["indented_lines_before"] > 0
    old = cf.check_corpus(files, cf.python_verdict, "collapse")
    assert old["verdicts"].get("DIFFERENT", 0) > SAMPLE // 2
    assert old["indented_lines_after"] == 0


def test_usr_include_sample_keeps_its_tokens() -> None:
    files = cf.header_files(SAMPLE)
    if not files:
        pytest.skip("no /usr/include on this machine")
    r = cf.check_corpus(files, cf.c_verdict, "preserve_indent")
    assert r["verdicts"].get("DIFFERENT", 0) == 0, r["failures"]
    assert r["verdicts"].get("BACKENDS_DIFFER", 0) == 0, r["failures"]
    assert r["indented_lines_after"] == r["indented_lines_before"] > 0

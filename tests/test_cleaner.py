"""TextCleaner through the public API (docs/cleaner.md): every step on and off, the repair rule,
options and their errors, str/bytes/Arrow input, hostile input and the counters. Runs on the live
backend; ``LUMINAMOON_FORCE_FALLBACK=1`` runs it on the fallback."""

from __future__ import annotations

import importlib
import subprocess
import sys
import threading
import time
import warnings
from typing import Any

import pytest

import luminamoon.data as lmd
from luminamoon.data import ConfigError
from luminamoon.data.errors import MalformedInputError

pa: Any
try:
    pa = importlib.import_module("pyarrow")
except ImportError:  # Arrow input is optional; everything else still runs
    pa = None
needs_arrow = pytest.mark.skipif(pa is None, reason="pyarrow is not installed")

TC = lmd.TextCleaner
FLAGS = (
    "repair_utf8",
    "normalize_newlines",
    "remove_controls",
    "strip_trailing_spaces",
    "limit_newlines",
    "strip",
    "nfc",
)
FFFD = "\ufffd"


def only(step: str) -> TC:
    """A cleaner with exactly one step on (repair stays on: off, invalid input is an error).
    Step 4 is on with ``"preserve_indent"`` or ``"collapse"``, off with ``"keep"``."""
    options: dict[str, Any] = dict.fromkeys(FLAGS, False)
    options["repair_utf8"] = True
    options["whitespace"] = "keep"
    if step in ("preserve_indent", "collapse"):
        options["whitespace"] = step
    else:
        options[step] = True
    return TC(**options)


def none() -> TC:
    return TC(**{**dict.fromkeys(FLAGS, False), "repair_utf8": True, "whitespace": "keep"})


# -- each step ---------------------------------------------------------------------------------

STEP_CASES = [
    # (step, input, output)
    ("normalize_newlines", "a\r\nb\rc\n\r\r\nd", "a\nb\nc\n\n\nd"),
    ("normalize_newlines", "\r\x00\n", "\n\x00\n"),
    ("remove_controls", "a\x00\x01\x08\t\n\x0b\x0c\x1f\x7f\x80\x85\x9f\xa0z", "a\t\n\xa0z"),
    ("remove_controls", "a\r\nb\rc", "a\nbc"),  # CR is a control when newlines are not normalised
    ("collapse", "a  b\tc \t d\xa0e\u3000\u200af\n \n", "a b c d e f\n \n"),
    (
        "collapse",
        "a\u200b\u200bb\u2028\u2028c\ufeff\ufeffd",
        "a\u200b\u200bb\u2028\u2028c\ufeff\ufeffd",
    ),
    ("preserve_indent", "a  b\tc \t d\xa0e\u3000\u200af\n \n", "a  b\tc \t d e  f\n \n"),
    ("preserve_indent", "a\u200b\u2028\u1680\u202f\u205fb", "a\u200b\u2028   b"),
    ("strip_trailing_spaces", "a \t\xa0\nb \n  c  ", "a\nb\n  c"),
    ("limit_newlines", "a\n\n\n\nb\n\nc\n\n\n", "a\n\nb\n\nc\n\n"),
    ("limit_newlines", "a\n\n \n\nb", "a\n\n \n\nb"),
    ("strip", "\n \t\u3000 a b \n\n\xa0", " \t\u3000 a b"),  # leading blank lines only
    ("strip", " \n\t\n ", ""),
    ("strip", "\ufeff a \u200b", "\ufeff a \u200b"),
    (
        "nfc",
        "e\u0301 \u212b a\u0301\u0316 \u1100\u1161\u11a8 \u0958",
        "\xe9 \xc5 \xe1\u0316 \uac01 \u0915\u093c",
    ),
]


@pytest.mark.parametrize(("step", "text", "expected"), STEP_CASES)
def test_each_step_alone(step: str, text: str, expected: str) -> None:
    assert only(step).clean(text) == expected
    assert only(step).clean(text.encode()) == expected


@pytest.mark.parametrize("step", [*FLAGS[1:6], "whitespace"])
def test_each_step_can_be_switched_off(step: str) -> None:
    text = "\n  a \x00\r\n\r\n\r\n\t b\xa0\xa0c \rd  \n"
    full = TC().clean(text)
    without = TC(**{step: "keep" if step == "whitespace" else False}).clean(text)
    assert without != full
    assert none().clean(text) == text


def test_defaults_on_a_document() -> None:
    raw = b"  \xef\xbb\xbfTitle  \r\n\r\n\r\n\r\nBody\x00 text\t\xff here. \n\n\n"
    assert TC().clean(raw) == "  \ufeffTitle\n\nBody text\t\ufffd here."
    assert TC(whitespace="collapse").clean(raw) == "\ufeffTitle\n\nBody text \ufffd here."


def test_steps_see_each_other() -> None:
    c = TC(whitespace="collapse")
    assert c.clean("a \x00 b") == "a b"  # the removed NUL no longer separates the spaces
    assert TC().clean("a \x00 b") == "a  b"
    assert c.clean("a\n\x00\n\x00\nb") == "a\n\nb"
    assert c.clean("a\n \n \n b") == "a\n\n b"  # blank-looking lines are blank
    assert TC().clean("a\n \n \n b") == "a\n\n b"
    assert TC(strip_trailing_spaces=False).clean("a\n \n \nb") == "a\n \n \nb"
    assert TC(whitespace="keep").clean("a \t\u3000\nb") == "a\nb"
    assert c.clean("a\n\n  b") == "a\n\n b"  # strip only touches the ends
    assert TC().clean("a\n\n  b") == "a\n\n  b"


# -- whitespace modes: code survives by default ------------------------------------------------

PYTHON_SOURCE = "def f(x):\r\n    if x:   \r\n        return [1,  2,\t3]\n\n\n\n\n    return 0  \n"
MAKEFILE = "all: a\n\ta:\ta.c\n\t\t$(CC) -o $@   $<\n"
TABLE = "name    size\u00a0\u00a0 kind\nfoo        12  file\n\u3000bar         3  dir\n"


def test_preserve_indent_keeps_code_intact() -> None:
    c = TC()
    assert c.clean(PYTHON_SOURCE) == (
        "def f(x):\n    if x:\n        return [1,  2,\t3]\n\n    return 0"
    )
    assert c.clean(MAKEFILE) == MAKEFILE.rstrip("\n")
    # exotic spaces become U+0020 one for one, so the columns stay aligned
    assert c.clean(TABLE) == TABLE.replace("\u00a0", " ").replace("\u3000", " ").rstrip("\n")
    assert c.stats()["unicode_spaces_replaced"] == 3
    assert c.stats()["whitespace_runs_collapsed"] == 0


def test_collapse_mode_is_the_old_rule() -> None:
    c = TC(whitespace="collapse")
    assert c.clean(PYTHON_SOURCE) == "def f(x):\n if x:\n return [1, 2, 3]\n\n return 0"
    assert c.clean("\n\n    x = 1") == "x = 1"
    assert c.stats()["unicode_spaces_replaced"] == 0


def test_strip_keeps_the_first_lines_indentation() -> None:
    assert TC().clean(" \t\n\u3000 \n    x = 1\n  y\n\n") == "    x = 1\n  y"
    assert TC().clean("\xa0\xa0x") == "  x"
    assert TC(whitespace="keep").clean("\n\xa0x ") == "\xa0x"
    assert TC(whitespace="collapse").clean("\n\xa0x ") == "x"


def test_whitespace_mode_errors() -> None:
    with pytest.raises(
        ConfigError, match="unknown whitespace mode 'colapse'; did you mean 'collapse'"
    ):
        TC(whitespace="colapse")
    with pytest.raises(ConfigError, match="did you mean 'preserve_indent'"):
        TC(whitespace="preserve_indents")
    with pytest.raises(ConfigError, match="valid modes: preserve_indent, collapse, keep"):
        TC(whitespace="xyz")
    with pytest.raises(TypeError, match="whitespace must be a str"):
        TC(whitespace=True)  # type: ignore[arg-type]


def test_collapse_whitespace_is_a_deprecated_alias() -> None:
    with pytest.warns(DeprecationWarning, match="use whitespace='collapse'"):
        c = TC(collapse_whitespace=True)
    assert c.options["whitespace"] == "collapse"
    assert "collapse_whitespace" not in c.options
    with pytest.warns(DeprecationWarning, match="whitespace='keep'"):
        assert TC(collapse_whitespace=False).options["whitespace"] == "keep"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TC(whitespace="collapse")  # no warning
    with pytest.raises(ConfigError, match="not both"):
        TC(whitespace="collapse", collapse_whitespace=True)
    with pytest.raises(TypeError, match="collapse_whitespace must be a bool"):
        TC(collapse_whitespace="yes")  # type: ignore[arg-type]


def test_empty_and_whitespace_only() -> None:
    c = TC()
    for text in ("", " ", "\n", "\r\n", "\t \xa0\u3000\n\n", "\x00\x01"):
        assert c.clean(text) == ""
        assert c.clean(text.encode()) == ""
    assert none().clean("") == ""
    assert none().clean(" \n ") == " \n "


def test_nfc_is_off_by_default_and_last() -> None:
    assert TC().clean("e\u0301") == "e\u0301"
    assert TC(nfc=True).clean("e\u0301") == "\xe9"
    # NFC maps U+2000 to U+2002 after trailing-space removal has run: both are whitespace.
    assert TC(whitespace="keep", strip=False, nfc=True).clean("a\u2000b") == "a\u2002b"


# -- step 1: CPython's repair rule -----------------------------------------------------------

REPAIR_CASES = [
    b"a\xf1\x80\x80\xe1\x80\xc2b\x80c\x80\xbfd",  # Unicode table 3-8
    b"\xc0\xaf",
    b"\xe0\x80\xaf",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xf8\x88\x80\x80\x80",
    b"\xe2\x82",
    b"\xf0\x9f\x98",
    b"\xe1\x80A",
    b"\xf0\x9f\x98\x80",
    b"\xfe\xff",
    b"\x80\x80",
    b"\xef\xbf\xbd\xff",
    bytes(range(256)),
]


@pytest.mark.parametrize("raw", REPAIR_CASES)
def test_repair_is_cpythons_replace(raw: bytes) -> None:
    c = none()
    assert c.clean(raw) == raw.decode("utf-8", "replace")
    expected = raw.decode("utf-8", "replace").count(FFFD) - raw.count(b"\xef\xbf\xbd")
    assert c.stats()["invalid_sequences_replaced"] == expected
    # The invalid bytes are the ones a strict decoder rejects, one error at a time.
    invalid, rest = 0, raw
    while rest:
        try:
            rest.decode("utf-8")
            break
        except UnicodeDecodeError as exc:
            invalid += exc.end - exc.start
            rest = rest[exc.end :]
    assert c.stats()["invalid_bytes_replaced"] == invalid


def test_repair_table_3_8_exactly() -> None:
    raw = b"\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64"
    assert none().clean(raw) == "a" + FFFD * 3 + "b" + FFFD + "c" + FFFD * 2 + "d"


def test_repair_off_raises_with_offset() -> None:
    c = TC(repair_utf8=False)
    assert c.clean(b"caf\xc3\xa9") == "caf\xe9"
    with pytest.raises(MalformedInputError) as info:
        c.clean(b"abc\xe2\x82")
    assert str(info.value) == (
        "TextCleaner: text is not valid UTF-8: unexpected end of data at byte offset 3 "
        "(byte 0xe2); pass repair_utf8=True to replace each invalid sequence with U+FFFD"
    )
    assert isinstance(info.value, ValueError)
    with pytest.raises(
        ValueError,
        match=r"texts\[2\] is not valid UTF-8: invalid start byte at byte offset 1 \(byte 0xff\)",
    ):
        c.clean_batch(["ok", b"fine", b"x\xff", b"\xc0"])
    with pytest.raises(ValueError, match="invalid continuation byte at byte offset 0"):
        c.clean(b"\xed\xa0\x80")
    assert c.stats()["documents"] == 1  # failed calls count nothing


def test_lone_surrogates_in_str() -> None:
    # A str is cleaned as its 'surrogatepass' encoding: ED A0 80 is three maximal subparts.
    c = none()
    assert c.clean("a\ud800b") == "a" + FFFD * 3 + "b"
    assert c.clean("\udcff") == FFFD * 3
    assert c.clean_batch(["x\ud83d\ude00"]) == ["x" + FFFD * 6]  # a pair of lone surrogates
    assert c.stats()["invalid_sequences_replaced"] == 12
    assert c.stats()["invalid_bytes_replaced"] == 12
    assert c.stats()["bytes_in"] == 5 + 3 + 7
    with pytest.raises(MalformedInputError, match="byte offset 1"):
        TC(repair_utf8=False).clean("a\ud800")


# -- input types -------------------------------------------------------------------------------


def test_str_and_bytes_like_agree() -> None:
    text = "  Grüße\r\n\r\n\r\nfrom  \u4e2d\u6587\t\n"
    raw = text.encode()
    c = TC()
    expected = c.clean(text)
    assert expected == "  Grüße\n\nfrom  \u4e2d\u6587"
    assert c.clean(raw) == c.clean(bytearray(raw)) == c.clean(memoryview(raw)) == expected
    assert c.clean(memoryview(b"xx" + raw)[2:]) == expected
    assert c.clean_batch([text, raw, bytearray(raw), memoryview(raw)]) == [expected] * 4
    assert c.clean_batch((text,)) == [expected]


def test_bad_input_types() -> None:
    c = TC()
    for bad in (None, 1, 1.5, ["a"], object()):
        with pytest.raises(TypeError):
            c.clean(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        c.clean_batch(["a", 3])
    for bad in ("abc", b"abc", None, 3, {"a": 1}):
        with pytest.raises(TypeError):
            c.clean_batch(bad)
    assert c.stats()["documents"] == 0
    assert c.clean_batch([]) == []


def test_nul_bytes() -> None:
    assert TC().clean(b"a\x00b\x00\x00 c\x00") == "ab c"
    assert TC(remove_controls=False).clean(b"\x00a\x00") == "\x00a\x00"
    assert TC().clean(b"\x00" * 1000) == ""


@needs_arrow
@pytest.mark.parametrize(
    "type_name", ["string", "large_string", "string_view", "binary", "large_binary", "binary_view"]
)
def test_arrow_input(type_name: str) -> None:
    values = ["  a  b ", "x\r\ny", "", "\u3000\u4e2d\u6587\u3000"]
    arrow_type = getattr(pa, type_name)()
    if "binary" in type_name:
        array = pa.array([v.encode() for v in values], type=arrow_type)
    else:
        array = pa.array(values, type=arrow_type)
    c = TC()
    expected = [c.clean(v) for v in values]
    assert c.clean_batch(array) == expected
    assert c.clean_batch(pa.chunked_array([array[:1], array[1:]])) == expected


@needs_arrow
def test_arrow_invalid_utf8_and_nulls() -> None:
    c = TC()
    raw = [b"ok", b"\xff\xfe", b"a\xe2\x82"]
    assert c.clean_batch(pa.array(raw, type=pa.binary())) == [
        r.decode("utf-8", "replace") for r in raw
    ]
    with pytest.raises(ValueError, match=r"\b2\b.* is null"):  # the index across chunks
        c.clean_batch(pa.chunked_array([pa.array(["a", "b"]), pa.array([None, "c"])]))
    with pytest.raises(TypeError):
        c.clean_batch(pa.array([1, 2]))
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        TC(repair_utf8=False).clean_batch(pa.array(raw, type=pa.binary()))


# -- options -----------------------------------------------------------------------------------


def test_options_and_repr() -> None:
    c = TC()
    assert c.options == {
        **dict.fromkeys(FLAGS, True),
        "nfc": False,
        "whitespace": "preserve_indent",
        "threads": 0,
    }
    assert list(c.options) == [*FLAGS, "whitespace", "threads"]
    assert repr(c) == "TextCleaner()"
    c = TC(strip=False, nfc=True, threads=3, whitespace="collapse")
    assert c.options["strip"] is False
    assert c.options["nfc"] is True
    assert c.options["threads"] == 3
    assert repr(c) == "TextCleaner(strip=False, nfc=True, whitespace='collapse', threads=3)"


@pytest.mark.parametrize(
    ("typo", "suggestion"),
    [
        ("repair_utf", "repair_utf8"),
        ("normalise_newlines", "normalize_newlines"),
        ("remove_control", "remove_controls"),
        ("collapse_whitespaces", "collapse_whitespace"),
        ("whitespaces", "whitespace"),
        ("strip_trailing_space", "strip_trailing_spaces"),
        ("limit_newline", "limit_newlines"),
        ("stirp", "strip"),
        ("nfd", "nfc"),
        ("thread", "threads"),
    ],
)
def test_option_typos_suggest(typo: str, suggestion: str) -> None:
    with pytest.raises(ConfigError, match=f"did you mean '{suggestion}'"):
        TC(**{typo: True})


def test_unknown_option_lists_valid_ones() -> None:
    with pytest.raises(ConfigError, match="valid options: repair_utf8, normalize_newlines"):
        TC(lowercase=True)


def test_option_types() -> None:
    for bad in (1, 0, None, "yes"):
        with pytest.raises(TypeError, match="strip must be a bool"):
            TC(strip=bad)  # type: ignore[arg-type]
    for bad_threads in (-1, 1.5, True, 2**40):
        with pytest.raises(ValueError, match="threads"):
            TC(threads=bad_threads)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        TC(True)  # type: ignore[misc]  # keyword-only


# -- counters ----------------------------------------------------------------------------------


def test_counters_of_one_document() -> None:
    c = TC(whitespace="collapse")
    raw = b"  Hi\r\n\r\n\r\n\tthere\x00  \xff \xc2\xa0x \n"
    assert c.clean(raw) == "Hi\n\n there \ufffd x"
    assert c.stats() == {
        "documents": 1,
        "documents_changed": 1,
        "bytes_in": len(raw),
        "bytes_out": 16,
        "invalid_sequences_replaced": 1,
        "invalid_bytes_replaced": 1,
        "newlines_normalized": 3,
        "controls_removed": 1,
        "whitespace_runs_collapsed": 4,
        "unicode_spaces_replaced": 0,
        "trailing_spaces_removed": 1,
        "newline_runs_limited": 1,
        "whitespace_stripped": 2,
        "nfc_changed_documents": 0,
    }


def test_counters_accumulate_and_reset() -> None:
    c = TC(nfc=True)
    c.clean("clean already")
    c.clean_batch(["e\u0301", "\nx "])
    s = c.stats()
    assert s["documents"] == 3
    assert s["documents_changed"] == 2
    assert s["nfc_changed_documents"] == 1
    assert s["bytes_in"] == 13 + 3 + 3
    assert s["bytes_out"] == 13 + 2 + 1
    assert s["whitespace_stripped"] == 1
    assert s["trailing_spaces_removed"] == 1
    c.reset_stats()
    assert set(c.stats().values()) == {0}
    with pytest.raises(TypeError):
        c.clean_batch(["fine", None])
    assert c.stats()["documents"] == 0


def test_threads_do_not_change_results() -> None:
    docs = [
        f"doc {i}\r\n\r\n\r\n  {'word ' * (i % 50)}\t\xff".encode("latin-1") for i in range(3000)
    ]
    reference = TC(threads=1)
    expected = reference.clean_batch(docs)
    for threads in (0, 2, 7):
        c = TC(threads=threads)
        assert c.clean_batch(docs) == expected
        assert c.stats() == reference.stats()


def test_concurrent_use_from_threads() -> None:
    c = TC()
    docs = ["\n  a\r\n b  "] * 2000
    errors: list[BaseException] = []

    def work() -> None:
        try:
            assert c.clean_batch(docs) == ["  a\n b"] * 2000
        except BaseException as exc:  # surfaced in the main thread
            errors.append(exc)

    workers = [threading.Thread(target=work) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors
    assert c.stats()["documents"] == 8000


# -- hostile input -----------------------------------------------------------------------------


def test_fifty_megabyte_document() -> None:
    line = b"The quick brown fox \t jumps over the lazy dog.\r\n\r\n\r\n"
    raw = line * (50 * 2**20 // len(line))
    c = TC(whitespace="collapse")
    start = time.perf_counter()
    out = c.clean(raw)
    elapsed = time.perf_counter() - start
    assert out.startswith("The quick brown fox jumps over the lazy dog.\n\nThe quick")
    assert out.endswith("lazy dog.")
    n = raw.count(b"\r\n")
    assert c.stats()["newlines_normalized"] == n
    assert c.stats()["whitespace_runs_collapsed"] == n // 3
    assert elapsed < 60  # seconds on the fallback, tens of ms natively


def test_hostile_documents_do_not_hang() -> None:
    c = TC()
    mb = 2**20
    assert c.clean(b" " * (4 * mb)) == ""
    assert TC(whitespace="collapse").clean(b"\t" * (4 * mb) + b"x") == "x"
    assert c.clean(b"\t" * (4 * mb) + b"x") == "\t" * (4 * mb) + "x"
    assert c.clean(b"\n \n" * mb + b" " * (2 * mb) + b"x") == " " * (2 * mb) + "x"
    assert TC(whitespace="keep", strip=False).clean(" " * mb + "x" + " " * mb) == (" " * mb + "x")
    assert c.clean(b"\n" * (4 * mb)) == ""
    assert c.clean(b"\xff" * (4 * mb)) == FFFD * (4 * mb)
    noise = bytes(range(256)) * (mb // 64)
    assert c.clean(c.clean(noise)) == c.clean(noise)


def test_bad_simd_override_is_a_config_error(subprocess_env: dict[str, str]) -> None:
    if lmd.BACKEND != "native":
        pytest.skip("LUMINAMOON_SIMD selects native kernels")
    env = {**subprocess_env, "LUMINAMOON_SIMD": "avx9000"}
    code = (
        "import luminamoon.data as lmd\n"
        "try:\n    lmd.TextCleaner()\nexcept lmd.ConfigError as e:\n    print('ConfigError', e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.startswith("ConfigError LUMINAMOON_SIMD")

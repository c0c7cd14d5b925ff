"""NFC on long runs of combining marks (issue 13): bounded time on both backends, and the
fallback's ordered path gives exactly what ``unicodedata.normalize`` gives."""

from __future__ import annotations

import time
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

import luminamoon.data as lmd
from luminamoon.data.fallbacks.cleaner import nfc

# Starters, non-starters of several classes (sorting matters), composing pairs, Hangul jamo,
# singletons and exclusions.
ALPHABET = [chr(c) for c in (0x61, 0x65, 0x41, 0x300, 0x301, 0x316, 0x327, 0x308, 0x345, 0x1DCE)]
ALPHABET += [chr(c) for c in (0x1100, 0x1161, 0x11A8, 0xAC00, 0x212B, 0x958, 0x304B, 0x3099)]
ALPHABET += [chr(c) for c in (0x5D9, 0x5B4, 0x5BF, 0x1E94A, 0x1D165, 0x1D16E)]


@settings(max_examples=150, deadline=None)
@given(
    head=st.text(alphabet=ALPHABET, max_size=40),
    run=st.lists(st.sampled_from(ALPHABET[3:10]), min_size=0, max_size=90),
    tail=st.text(alphabet=ALPHABET, max_size=40),
)
def test_fallback_nfc_equals_unicodedata(head: str, run: list[str], tail: str) -> None:
    text = head + "".join(run) + tail
    assert nfc(text) == unicodedata.normalize("NFC", text)


def test_long_combining_run_is_not_quadratic() -> None:
    cleaner = lmd.TextCleaner(nfc=True)
    small = "a" + "\u0301\u0316" * 2_000
    expected_small = unicodedata.normalize("NFC", small)
    assert cleaner.clean(small) == expected_small
    big = "a" + "\u0301\u0316" * 100_000  # 400 KB of UTF-8: seconds to minutes when quadratic
    started = time.perf_counter()
    out = cleaner.clean(big)
    elapsed = time.perf_counter() - started
    # Canonical order puts U+0316 (class 220) before U+0301 (230); 'a' + U+0301 composes.
    assert out == "\u00e1" + "\u0316" * 100_000 + "\u0301" * 99_999
    assert elapsed < 10.0, f"{elapsed:.1f} s for a 200,001-mark run"
    assert cleaner.stats()["nfc_changed_documents"] == 2

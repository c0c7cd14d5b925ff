"""PIIMasker on a labelled set of real text (tests/data/pii/real_labelled.jsonl: lines of Debian
and upstream changelogs, GNU Info manuals and CPython's test e-mails, labelled by reading them;
see bench/pii_real_text.py). Span-exact per-category floors at the figures of docs/pii.md, on the
live backend (the suite runs again with LUMINAMOON_FORCE_FALLBACK=1)."""

from __future__ import annotations

import sys
from pathlib import Path

import luminamoon.data as lmd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import pii_real_text as prt


def test_labelled_set_shape() -> None:
    rows = prt.load_labelled()
    assert len(rows) == 112
    for row in rows:
        assert row["source"]
        assert row["text"]
        for category, text in row["spans"]:
            assert category in prt.CATEGORIES
            assert row["text"].count(text) == 1


def test_precision_and_recall_on_real_text() -> None:
    scores = prt.score_labelled(lmd.PIIMasker, prt.load_labelled())
    ip, email = scores["IP_ADDRESS"], scores["EMAIL"]
    assert (ip["tp"], ip["fn"]) == (15, 0)
    assert ip["fp"] <= 1  # 31 before the IPv4 context rules
    assert (email["tp"], email["fn"]) == (27, 0)
    assert email["fp"] <= 1  # a file name, en@boldquot.header: see docs/pii.md (8 before)
    assert scores["CREDIT_CARD"]["fp"] == 0
    assert scores["API_KEY"]["fp"] == 0

""" "Did you mean ...?" (SPEC 5): the distance, the public ``did_you_mean`` and every option of
every class."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import luminamoon.data as lmd

# The pure-Python distance is the reference both backends' suggestions are built on; it is
# importable whichever backend is live.
from luminamoon.data.fallbacks import suggest as reference

dl = reference.damerau_levenshtein


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("", "", 0),
        ("", "abc", 3),
        ("abc", "", 3),
        ("abc", "abc", 0),
        ("abc", "abd", 1),  # substitution
        ("abc", "abcd", 1),  # insertion
        ("abcd", "acd", 1),  # deletion
        ("ab", "ba", 1),  # adjacent transposition counts 1
        ("read_only", "read_onyl", 1),
        ("durable", "durabel", 1),
        ("ca", "abc", 3),  # optimal string alignment: no edit of a transposed pair
        ("kitten", "sitting", 3),
        ("héllo", "hello", 1),  # code points, not bytes
    ],
)
def test_damerau_levenshtein(a: str, b: str, distance: int) -> None:
    assert dl(a, b) == distance
    assert dl(b, a) == distance


@given(st.text(max_size=8), st.text(max_size=8), st.text(max_size=8))
def test_distance_is_a_metric_like_function(a: str, b: str, c: str) -> None:
    assert dl(a, b) == dl(b, a)
    assert (dl(a, b) == 0) == (a == b)
    assert abs(len(a) - len(b)) <= dl(a, b) <= max(len(a), len(b))


def test_did_you_mean_basics() -> None:
    options = ["read_only", "durable"]
    assert lmd.did_you_mean("readonly", options) == "read_only"
    assert lmd.did_you_mean("durabel", options) == "durable"
    assert lmd.did_you_mean("durable", options) == "durable"
    assert lmd.did_you_mean("compression", options) is None
    assert lmd.did_you_mean("x", []) is None


def test_did_you_mean_ties_go_to_first_candidate() -> None:
    assert lmd.did_you_mean("ab", ["ac", "ad"]) == "ac"
    assert lmd.did_you_mean("ab", ["ad", "ac"]) == "ad"
    assert lmd.did_you_mean("abcd", ["abxd", "abcd"]) == "abcd"  # closer beats earlier


def test_did_you_mean_threshold() -> None:
    # len 3 -> limit max(2, 1) = 2
    assert lmd.did_you_mean("abc", ["axy"]) == "axy"  # distance 2
    assert lmd.did_you_mean("abc", ["xyz"]) is None  # distance 3
    # len 12 -> limit 4
    name = "abcdefghijkl"
    assert lmd.did_you_mean(name, ["wxyzefghijkl"]) == "wxyzefghijkl"  # distance 4
    assert lmd.did_you_mean(name, ["vwxyzfghijkl"]) is None  # distance 5


@given(
    st.text(alphabet="abcdr_", max_size=10),
    st.lists(st.text(alphabet="abcdr_", max_size=10), max_size=6),
)
def test_did_you_mean_matches_reference(name: str, candidates: list[str]) -> None:
    assert lmd.did_you_mean(name, candidates) == reference.did_you_mean(name, candidates)


# -- "typo of every option of every class" ---------------------------------------------------


def _typos(name: str) -> list[str]:
    middle = len(name) // 2
    candidates = [
        name[:middle] + name[middle + 1 :],  # deletion
        name[: middle - 1] + name[middle] + name[middle - 1] + name[middle + 1 :],  # swap
        name[:-1] + ("q" if name[-1] != "q" else "z"),  # substitution
        name + "s",  # insertion
        name.upper(),  # case matters: FOO is not foo, but still far from everything else
    ]
    return [t for t in dict.fromkeys(candidates) if t != name]


COORDINATE_FIELDS = (
    "shard_id",
    "byte_offset",
    "row_group_idx",
    "page_idx",
    "row_offset_in_page",
    "global_row_idx",
)
TRACKER_OPTIONS = ("read_only", "durable")
DEDUP_OPTIONS = ("threads",)

Build = Callable[[Path, str], object]


def _replace(_: Path, typo: str) -> object:
    return lmd.StreamCoordinate().replace(**{typo: 1})


def _tracker(tmp: Path, typo: str) -> object:
    return lmd.StateTracker(tmp / "t.meta", **{typo: False})


def _dedup(_: Path, typo: str) -> object:
    return lmd.StreamDeduplicator(**{typo: 1})


CASES = [
    pytest.param(build, name, typo, id=f"{label}-{typo}")
    for label, build, names in (
        ("replace", _replace, COORDINATE_FIELDS),
        ("tracker", _tracker, TRACKER_OPTIONS),
        ("dedup", _dedup, DEDUP_OPTIONS),
    )
    for name in names
    for typo in _typos(name)
]


@pytest.mark.parametrize(("build", "name", "typo"), CASES)
def test_typo_of_every_option(tmp_path: Path, build: Build, name: str, typo: str) -> None:
    with pytest.raises(lmd.ConfigError) as info:
        build(tmp_path, typo)
    message = str(info.value)
    assert f"'{typo}'" in message
    if typo.isupper():
        assert "did you mean" not in message  # every letter differs: too far to suggest
    else:
        assert message.endswith(f"did you mean '{name}'?")

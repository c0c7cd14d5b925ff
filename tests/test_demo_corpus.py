"""The demo corpus (luminamoon.data.demo_corpus): deterministic bytes, planted kinds in the
stated proportions, and each kind is what a curation run must see it as (read with the
ShardReader, PII found by the PIIMasker, junk dropped by the quality presets)."""

from __future__ import annotations

import collections
import gzip
from pathlib import Path

import pytest

import luminamoon.data as lmd
from luminamoon.data.demo_corpus import (
    JUNK_KINDS,
    KIND_SHARES,
    MALFORMED_KINDS,
    demo_documents,
    jaccard,
    kind_counts,
    write_demo_corpus,
)

N = 2000


@pytest.fixture(scope="module")
def docs() -> list:
    return demo_documents(N)


def test_shares_sum_to_one() -> None:
    assert sum(KIND_SHARES.values()) == pytest.approx(1.0)


@pytest.mark.parametrize("n", [1, 7, 100, 999, N])
def test_kind_counts_are_the_stated_shares(n: int) -> None:
    counts = kind_counts(n)
    assert sum(counts.values()) == n
    for kind, share in KIND_SHARES.items():
        if kind != "prose":
            assert counts[kind] == int(share * n)
    assert counts["prose"] >= int(KIND_SHARES["prose"] * n)
    got = collections.Counter(d.kind for d in demo_documents(n, seed=3))
    assert dict(got) == {k: v for k, v in counts.items() if v}


def test_every_planted_variety_is_present(docs: list) -> None:
    details = collections.defaultdict(set)
    for d in docs:
        details[d.kind].add(d.detail)
    assert details["junk"] == set(JUNK_KINDS)
    assert details["malformed"] == set(MALFORMED_KINDS)
    assert details["code"] == {"python", "javascript", "c", "shell", "yaml"}
    assert len(details["multilingual"]) == 12
    assert details["prose"] == {"news", "encyclopedia", "howto", "review", "forum"}
    assert {c for d in docs for c in d.pii} == {"EMAIL", "IP_ADDRESS", "API_KEY", "CREDIT_CARD"}
    # Code keeps its indentation.
    for d in docs:
        if d.kind == "code":
            assert any(line.startswith("  ") for line in d.text.splitlines())


def test_deterministic_bytes(tmp_path: Path) -> None:
    for compression in (None, "gz", "zst"):
        a = write_demo_corpus(
            tmp_path / f"a-{compression}", documents=300, shards=3, compression=compression
        )
        b = write_demo_corpus(
            tmp_path / f"b-{compression}", documents=300, shards=3, compression=compression
        )
        assert [Path(p).name for p in a] == [Path(p).name for p in b]
        assert [Path(p).read_bytes() for p in a] == [Path(p).read_bytes() for p in b]
    other = write_demo_corpus(tmp_path / "seed1", documents=300, shards=3, seed=1)
    plain = [
        Path(p).read_bytes() for p in write_demo_corpus(tmp_path / "c", documents=300, shards=3)
    ]
    assert [Path(p).read_bytes() for p in other] != plain


def test_shards_hold_the_records_in_order(tmp_path: Path) -> None:
    paths = write_demo_corpus(tmp_path, documents=301, shards=4, compression="gz")
    assert [Path(p).name for p in paths] == [f"demo-{k:05d}.jsonl.gz" for k in range(4)]
    data = b"".join(gzip.decompress(Path(p).read_bytes()) for p in paths)
    assert data == b"".join(d.line + b"\n" for d in demo_documents(301))
    sizes = [gzip.decompress(Path(p).read_bytes()).count(b"\n") for p in paths]
    assert sizes == [75, 75, 75, 76]
    assert not list(tmp_path.glob("*.tmp"))


def test_the_reader_sees_every_planted_malformed_record(tmp_path: Path, docs: list) -> None:
    paths = write_demo_corpus(tmp_path, documents=N, shards=4, compression="zst")
    reader = lmd.ShardReader(paths, fields=["id", "url"])
    texts: list[str] = []
    ids: list[str] = []
    for batch in reader:
        texts.extend(batch.texts)
        ids.extend(batch.fields["id"])
    good = [d for d in docs if d.kind != "malformed"]
    assert texts == [d.text for d in good]
    assert ids == [d.id for d in good]
    planted = collections.Counter(d.detail for d in docs if d.kind == "malformed")
    stats = reader.stats()
    assert stats["records"] == N
    assert stats["malformed_json"] == (
        planted["truncated_json"] + planted["html_line"] + planted["invalid_utf8"]
    )
    assert stats["missing_field"] == planted["missing_text"]
    assert stats["non_string_field"] == planted["null_text"]
    assert "did you mean 'txt'" in " ".join(
        i.message for i in reader.errors if i.kind == "missing_field"
    )


def test_duplicates(docs: list) -> None:
    assert len({d.id for d in docs}) == N
    for d in docs:
        if d.kind == "exact_duplicate":
            src = docs[d.source]
            assert d.source < d.index
            assert src.kind in ("prose", "code", "multilingual", "pii", "junk")
            assert d.text == src.text
            assert d.id != src.id
        elif d.kind == "near_duplicate":
            src = docs[d.source]
            assert d.source < d.index
            assert src.kind == "prose"
            assert d.text != src.text
            assert jaccard(d.text, src.text) >= 0.85
            assert d.detail
        else:
            assert d.source is None
    originals = [d.text for d in docs if d.kind not in ("exact_duplicate", "malformed")]
    assert len(set(originals)) == len(originals)


def test_near_duplicates_are_found_by_minhash(docs: list) -> None:
    subset = [d for d in docs[:800] if d.text is not None]
    keep = lmd.MinHashDeduplicator(threshold=0.8).filter_batch([d.text for d in subset])
    near = [k for d, k in zip(subset, keep, strict=True) if d.kind == "near_duplicate"]
    assert sum(not k for k in near) >= 0.85 * len(near)


def test_pii_is_exactly_where_it_was_planted(docs: list) -> None:
    masker = lmd.PIIMasker()
    for d in docs:
        if d.text is None:
            continue
        found = tuple(sorted({span.category for span in masker.find(d.text)}))
        assert found == tuple(sorted(d.pii)), (d.index, d.kind, d.detail)
    assert sum(d.kind == "pii" for d in docs) == int(KIND_SHARES["pii"] * N)


def test_quality_presets_drop_the_junk_and_keep_the_prose(docs: list) -> None:
    subset = [d for d in docs[:600] if d.kind in ("prose", "junk", "pii", "near_duplicate")]
    result = lmd.QualityFilter(("gopher_quality", "c4_lines", "fineweb")).filter_batch(
        [d.text for d in subset]
    )
    by_kind = collections.defaultdict(list)
    for d, k in zip(subset, result.keep, strict=True):
        by_kind[d.kind].append(bool(k))
    assert not any(by_kind["junk"])
    # Number-heavy news prose can fall under Gopher's 80% alphabetic-words line, as real news does.
    assert sum(by_kind["prose"]) >= 0.97 * len(by_kind["prose"])
    assert sum(by_kind["pii"]) >= 0.9 * len(by_kind["pii"])
    assert sum(by_kind["near_duplicate"]) >= 0.9 * len(by_kind["near_duplicate"])


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="documents must be >= 1"):
        demo_documents(0)
    with pytest.raises(TypeError, match="documents must be an int"):
        demo_documents(10.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="compression must be None, 'gz' or 'zst'"):
        write_demo_corpus(tmp_path, documents=10, compression="bz2")
    with pytest.raises(ValueError, match=r"shards must be in \[1, documents=10\]"):
        write_demo_corpus(tmp_path, documents=10, shards=11)
    with pytest.raises(TypeError, match="shards must be an int"):
        write_demo_corpus(tmp_path, documents=10, shards=True)

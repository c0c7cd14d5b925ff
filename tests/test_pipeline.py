"""FusedPipeline through the public API (docs/pipeline.md); runs on whichever backend is live."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import luminamoon.data as lmd
from luminamoon.data import ConfigError


def prose(seed: int, sentences: int = 6) -> str:
    return "".join(
        f"The river {seed} flows past the house number {seed * 7 + s} and the people walk to "
        f"the edge of it with a dog. "
        for s in range(sentences)
    )


EMAIL_DOC = prose(2) + "Write to jane.roe@example.com or call the office."
BATCH = [prose(1), "   \r\n ", "too short", prose(1), prose(1) + " extra", EMAIL_DOC]


def pipeline(**kwargs: object) -> lmd.FusedPipeline:
    kwargs.setdefault("quality", "gopher_quality")
    return lmd.FusedPipeline(**kwargs)  # type: ignore[arg-type]


def test_every_stage_drops_with_its_reason_and_counts() -> None:
    p = pipeline(threads=2)
    assert p.stages == tuple(s for s in lmd.STAGES if s != "language")  # off by default
    r = p.process(BATCH)
    assert r.total == 6
    assert len(r) == 2
    assert r.keep.dtype == np.bool_
    assert r.keep.tolist() == [True, False, False, False, False, True]
    assert r.indices.dtype == np.int64
    assert r.indices.tolist() == [0, 5]
    assert r.dropped_by.dtype == np.uint8
    assert r.dropped_by.tolist() == [0, 1, 3, 4, 5, 0]
    reasons = r.reasons
    assert reasons[0] is None
    assert reasons[1] == lmd.PipelineRejection("cleaner", "empty")
    assert reasons[2] is not None
    assert reasons[2].stage == "quality"
    assert reasons[2].rule == "gopher_min_words"
    assert reasons[2].value == 2.0
    assert reasons[2].threshold == 50.0
    assert reasons[3] == lmd.PipelineRejection("exact_dedup", "duplicate", None, None)
    assert reasons[4] == lmd.PipelineRejection("near_dedup", "near_duplicate", None, 0.8)
    texts = list(r.texts)
    assert texts[0] == prose(1).strip()
    assert "<EMAIL>" in texts[1]
    assert "jane.roe" not in texts[1]
    c = r.counters
    assert list(c) == ["input", "cleaner", "quality", "exact_dedup", "near_dedup", "pii", "output"]
    assert c["input"] == {"documents": 6, "bytes": sum(len(t.encode()) for t in BATCH)}
    assert c["cleaner"]["dropped_empty"] == 1
    assert c["quality"]["rejected"] == 1
    assert c["quality"]["gopher_min_words"] == 1
    assert c["exact_dedup"] == {"total": 4, "duplicates": 1}
    assert c["near_dedup"] == {"total": 3, "duplicates": 1}
    assert c["pii"]["EMAIL"] == 1
    assert c["pii"]["documents_changed"] == 1
    assert c["output"] == {"documents": 2, "bytes": sum(len(t.encode()) for t in texts)}
    # Across batches: a document seen in the first batch is a duplicate in the second.
    again = p.process([prose(1)])
    assert again.reasons[0] == lmd.PipelineRejection("exact_dedup", "duplicate")
    stats = p.stats()
    assert stats["input"]["documents"] == 7
    assert stats["exact_dedup"]["duplicates"] == 2


def test_stages_can_be_switched_off() -> None:
    p = lmd.FusedPipeline(cleaner=False, quality=None, exact_dedup=False, near_dedup=False)
    assert p.stages == ("pii",)
    r = p.process([b"caf\xff", "a@b.example.org is here", "   "])
    assert list(r.texts) == ["caf\ufffd", "<EMAIL> is here", "   "]
    assert list(r.counters) == ["input", "pii", "output"]
    nothing = lmd.FusedPipeline(
        cleaner=False, quality=False, exact_dedup=False, near_dedup=False, pii=False
    )
    assert nothing.stages == ()
    assert list(nothing.process(["x", "x"]).texts) == ["x", "x"]


def test_c4_lines_replaces_the_text() -> None:
    doc = prose(3) + "\nshort line\n" + prose(4)
    r = lmd.FusedPipeline(quality="c4_lines", pii=False, near_dedup=False).process([doc])
    assert len(r) == 1
    assert "short line" not in r.texts[0]


def test_inputs_reader_batches_carry_fields_and_coordinates(tmp_path: Path) -> None:
    shard = tmp_path / "a.jsonl"
    with shard.open("w") as f:
        for i, text in enumerate(BATCH):
            f.write(json.dumps({"id": i, "text": text, "meta": {"url": f"u{i}"}}) + "\n")
    reader = lmd.ShardReader(str(shard), fields=["id", "meta.url"], batch_size=100)
    batch = next(iter(reader))
    r = pipeline().process(batch)
    assert r.fields == {"id": [0, 5], "meta.url": ["u0", "u5"]}
    coords = r.coordinates
    assert coords is not None
    assert [c.global_row_idx for c in coords] == [1, 6]
    assert r.end == batch.end
    assert r.coordinates is not None
    # Other inputs: StringTensor, Arrow, tuples and bytes give the same answers.
    expected = list(pipeline().process(BATCH).texts)
    assert list(pipeline().process(lmd.StringTensor(BATCH)).texts) == expected
    assert list(pipeline().process(tuple(t.encode() for t in BATCH)).texts) == expected
    pa = pytest.importorskip("pyarrow")
    assert list(pipeline().process(pa.array(BATCH)).texts) == expected
    assert list(pipeline().process(pa.chunked_array([BATCH[:2], BATCH[2:]])).texts) == expected


def test_fields_and_coordinates_given_by_the_caller() -> None:
    coords = [lmd.StreamCoordinate(global_row_idx=i + 1) for i in range(len(BATCH))]
    r = pipeline().process(BATCH, fields={"id": list(range(6))}, coordinates=coords)
    assert r.fields == {"id": [0, 5]}
    assert [c.global_row_idx for c in r.coordinates or []] == [1, 6]
    assert r.end is None
    with pytest.raises(ValueError, match="field 'id' has 2 values for 6 documents"):
        pipeline().process(BATCH, fields={"id": [1, 2]})
    with pytest.raises(ValueError, match="1 coordinates for 6 documents"):
        pipeline().process(BATCH, coordinates=coords[:1])
    with pytest.raises(TypeError, match="coordinates must be StreamCoordinate"):
        pipeline().process(BATCH, coordinates=list(range(6)))  # type: ignore[arg-type]


def test_bad_batches_are_type_errors() -> None:
    p = pipeline()
    with pytest.raises(TypeError, match="batch must be"):
        p.process("one string")
    with pytest.raises(TypeError, match="batch must be"):
        p.process(42)
    with pytest.raises(TypeError, match=r"texts\[1\]|document 1"):
        p.process(["ok", 3])


def test_results_do_not_depend_on_threads() -> None:
    docs = [prose(i % 400) + ("" if i % 3 else " x@y.org") for i in range(1500)]
    outs = []
    for threads in (1, 2, 4):
        r = lmd.FusedPipeline(quality="fineweb", threads=threads).process(docs)
        outs.append((list(r.texts), r.dropped_by.tolist(), r.counters))
    assert outs[0] == outs[1] == outs[2]


def test_dedup_state_commits_with_the_tracker(tmp_path: Path) -> None:
    meta = tmp_path / "run.meta"
    first = [prose(10), prose(11)]
    with lmd.StateTracker(meta) as tracker:
        p = pipeline(tracker=tracker)
        r = p.process(first)
        assert len(r) == 2
        tracker.update(1, lmd.StreamCoordinate(global_row_idx=2))
        p.commit()
        p.process([prose(12)])
        p.rollback()  # prose(12) was staged only
    with lmd.StateTracker(meta) as tracker:
        p = pipeline(tracker=tracker)
        r = p.process([prose(10), prose(11) + " extra", prose(12)])
        assert r.dropped_by.tolist() == [4, 5, 0]


def test_commit_and_rollback_without_a_tracker() -> None:
    p = pipeline()
    p.process([prose(20)])
    p.rollback()
    assert len(p.process([prose(20)])) == 1
    p.commit()
    assert p.exact_dedup is not None
    assert p.exact_dedup.committed_count == 1


def test_config_round_trip_dict_and_toml(tmp_path: Path) -> None:
    p = lmd.FusedPipeline(
        cleaner={"nfc": True},
        quality={
            "presets": ["gopher_quality", "fineweb"],
            "gopher_min_words": 20,
            "fineweb_min_line_punct_ratio": None,
        },
        near_dedup={"threshold": 0.7, "num_perm": 32},
        pii={"credit_card": False, "tags": {"EMAIL": "[mail]"}},
        exact_dedup=False,
        threads=2,
    )
    config = p.to_config()
    assert config["exact_dedup"] is False
    assert config["cleaner"]["nfc"] is True
    assert config["quality"]["presets"] == ["gopher_quality", "fineweb"]
    assert config["quality"]["gopher_min_words"] == 20
    assert config["quality"]["fineweb_min_line_punct_ratio"] is None
    assert config["near_dedup"]["num_perm"] == 32
    assert config["pii"]["credit_card"] is False
    assert config["pii"]["tags"]["EMAIL"] == "[mail]"
    assert lmd.FusedPipeline.from_config(config).to_config() == config
    path = tmp_path / "pipeline.toml"
    p.save_config(path)
    text = path.read_text()
    assert 'fineweb_min_line_punct_ratio = "off"' in text
    again = lmd.FusedPipeline.from_config(path)
    assert again.to_config() == config
    assert lmd.FusedPipeline.from_config(path, threads=1).threads == 1
    # A file names only what it changes: absent stages take the defaults.
    small = tmp_path / "small.toml"
    small.write_text('pii = false\n[quality]\npresets = ["c4"]\n')
    q = lmd.FusedPipeline.from_config(small)
    assert q.stages == ("cleaner", "quality", "exact_dedup", "near_dedup")
    assert q.to_config()["quality"]["presets"] == ["c4"]


def test_config_errors_name_the_place_and_suggest(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown key 'qualty'; did you mean 'quality'"):
        lmd.FusedPipeline.from_config({"qualty": {}})
    with pytest.raises(
        ConfigError, match="unknown stage or option 'clener'; did you mean 'cleaner'"
    ):
        lmd.FusedPipeline(clener=True)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match="did you mean 'nfc'"):
        lmd.FusedPipeline(cleaner={"nfd": True})
    with pytest.raises(ConfigError, match="gopher_min_words"):
        lmd.FusedPipeline(quality={"presets": ["gopher_quality"], "gopher_min_wrds": 3})
    with pytest.raises(ConfigError, match="'threads' is set once"):
        lmd.FusedPipeline(pii={"threads": 2})
    with pytest.raises(TypeError, match="pii must be True, False, None or a mapping"):
        lmd.FusedPipeline(pii=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threads must be in"):
        lmd.FusedPipeline(threads=-1)
    bad = tmp_path / "bad.toml"
    bad.write_text("[quality\npresets = 1\n")
    with pytest.raises(ConfigError, match=f"pipeline config {bad}"):
        lmd.FusedPipeline.from_config(bad)
    typo = tmp_path / "typo.toml"
    typo.write_text("[near_dedup]\nthreshhold = 0.5\n")
    with pytest.raises(ConfigError, match=f"pipeline config {typo}: .*did you mean 'threshold'"):
        lmd.FusedPipeline.from_config(typo)
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('cleaner = "yes"\n')
    with pytest.raises(ConfigError, match="cleaner must be a table of options or true/false"):
        lmd.FusedPipeline.from_config(wrong)
    with pytest.raises(FileNotFoundError, match="no such file"):
        lmd.FusedPipeline.from_config(tmp_path / "missing.toml")


def test_arrow_export_types_the_reader_fields(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    shard = tmp_path / "f.jsonl"
    records = [
        {"text": prose(30), "id": 1, "f": 1.5, "m": 1, "b": True, "big": 2**63, "mixed": 1e16},
        {"text": prose(31), "id": 2, "f": 2, "m": "x", "b": None, "big": 5, "mixed": "q"},
        {"text": prose(32), "id": 3, "f": None, "m": True, "b": False, "big": 7, "mixed": 1e-5},
    ]
    shard.write_text("".join(json.dumps(r) + "\n" for r in records))
    names = ["id", "f", "m", "b", "big", "mixed", "absent"]
    reader = lmd.ShardReader(str(shard), fields=names)
    r = lmd.FusedPipeline(quality=False, near_dedup=False).process(next(iter(reader)))
    table = pa.table(r)
    assert table.schema.names == ["text", *names]
    assert [str(t) for t in table.schema.types] == [
        "string",
        "int64",
        "double",
        "string",
        "bool",
        "uint64",
        "string",
        "null",
    ]
    assert table.column("m").to_pylist() == ["1", "x", "true"]
    assert table.column("mixed").to_pylist() == ["1e+16", "q", "1e-05"]
    assert table.column("big").to_pylist() == [2**63, 5, 7]
    assert table.column("text").to_pylist() == list(r.texts)
    view = pa.RecordBatchReader._import_from_c_capsule(r.export_arrow("body", "large_string"))
    assert view.schema.field("body").type == pa.large_string()
    with pytest.raises(ConfigError, match="did you mean 'string'"):
        r.export_arrow(text_type="strin")
    # Fields given by the caller keep pyarrow's own inference.
    given = lmd.FusedPipeline(quality=False).process([prose(33)], fields={"x": [{"a": 1}]})
    assert pa.table(given).column("x").to_pylist() == [{"a": 1}]

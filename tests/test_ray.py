"""The Ray engine (``luminamoon-data run --engine ray``) against the local run.

One local Ray (``num_cpus=2``) serves the whole module and is shut down at its end. Every Ray run
is compared with the single-node run on the same inputs: the same kept documents in the same
order, the same text and fields, the same per-stage counters, drops (with examples), reader
counters and input issues. Fault injection kills a stage actor and a write task mid-task (Ray
restarts and retries them): the output is still identical, nothing doubled. Bad input: an address
that does not answer, an unreadable shard, Ray not installed.
"""

from __future__ import annotations

import json
import random
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import luminamoon.data as lmd  # noqa: E402
from luminamoon.data import cli  # noqa: E402
from luminamoon.data import ray as lray  # noqa: E402
from luminamoon.data.errors import RunError  # noqa: E402
from luminamoon.data.run import run as local_run  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from run_corpus import write_corpus  # noqa: E402

# The fallback computes MinHash signatures in pure Python: a smaller corpus keeps the file fast.
PER_SHARD = 60 if lmd.BACKEND == "fallback" else 120
FIELDS = ["id", "url"]
# A bad shard exercises the workers' error path and the driver, which do not depend on the
# backend: run it once (native), keeping the fallback pass of this file short.
ray_machinery = pytest.mark.skipif(
    lmd.BACKEND == "fallback", reason="Ray retries and errors are backend-independent"
)


@pytest.fixture(scope="module")
def ray_session() -> Any:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    import ray.data

    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("ray_corpus")
    inputs = write_corpus(root / "in", per_shard=PER_SHARD)
    # A fourth shard repeating near-duplicates of the first shard's documents across shards.
    rng = random.Random(7)
    lines = []
    for line in (root / "in" / "a.jsonl").read_text(encoding="utf-8").splitlines()[::3]:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if "text" not in record:
            continue
        words = record["text"].split()
        if len(words) > 4:
            words[rng.randrange(len(words))] = "meadow"
        lines.append(json.dumps({"id": "d-" + record["id"], "text": " ".join(words), "url": "u"}))
    (root / "in" / "d.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [*inputs, str(root / "in" / "d.jsonl")]


def _rows(outdir: Path, fmt: str) -> Any:
    ext = {"parquet": "parquet", "ipc": "arrow", "jsonl": "jsonl"}[fmt]
    files = sorted(p for p in outdir.iterdir() if p.name.endswith("." + ext))
    if fmt == "jsonl":
        return b"".join(p.read_bytes() for p in files)
    if fmt == "parquet":
        return pa.concat_tables([pq.read_table(p) for p in files])
    tables = []
    for p in files:
        with pa.memory_map(str(p)) as source:
            tables.append(pa.ipc.open_file(source).read_all())
    return pa.concat_tables(tables)


def _assert_same(local: dict[str, Any], remote: dict[str, Any]) -> None:
    # Everything but the file layout (the Ray engine writes one file per input shard).
    for key, value in local.items():
        if key != "output":
            assert remote[key] == value, key
    assert remote["output"]["format"] == local["output"]["format"]
    assert sum(f["rows"] for f in remote["output"]["files"]) == local["documents"]["out"]


@pytest.fixture(scope="module")
def reference(corpus: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ray_ref") / "local"
    local_run(corpus, out, fields=FIELDS, progress="none")
    return out


def test_ray_run_equals_local_run_with_an_actor_and_a_task_killed(
    ray_session: Any, corpus: list[str], reference: Path, tmp_path: Path
) -> None:
    # Native pass: the stage actor holding shard 1 dies mid-task (Ray restarts the actor and
    # retries the task) and the write task of shard 2 dies after half-writing its file (Ray
    # retries it); the result must still equal the local run's, nothing doubled. The fallback
    # pass runs without the kills (Ray's retries do not depend on the backend) to stay short.
    markers = tmp_path / "markers"
    markers.mkdir()
    kill = lmd.BACKEND == "native"
    out = tmp_path / "ray"
    report = lray.run(
        None,
        corpus,
        out,
        fields=FIELDS,
        actors=2,
        partitions=3,
        batch_size=50,
        _fault={"stage": [1], "write": [2], "dir": str(markers)} if kill else None,
    )
    if kill:
        assert (markers / "killed-stage-1").exists()
        assert (markers / "killed-write-2").exists()
    local = json.loads((reference / "report.json").read_bytes())
    _assert_same(local, report)
    assert json.loads((out / "report.json").read_bytes()) == report
    # The proof is not vacuous: every stage dropped something, on several shards.
    assert report["duplicates"]["exact"] > 10
    assert report["duplicates"]["near"] > 5
    assert report["pii"]["documents_changed"] > 0
    assert len({e["shard"] for e in report["drops"]["exact_dedup"]["duplicate"]["examples"]}) >= 1
    a, b = _rows(reference, "parquet"), _rows(out, "parquet")
    assert a.equals(b)
    assert a.schema.equals(b.schema, check_metadata=True)
    assert len(set(b.column("id").to_pylist())) == b.num_rows  # nothing doubled
    # The stage files are gone; the output directory holds the output, the config and the report.
    assert not (out / ".luminamoon" / "ray").exists()
    assert not [p.name for p in out.rglob("*.partial")]
    assert (out / "pipeline.toml").read_text() == (reference / "pipeline.toml").read_text()


def test_cli_engine_ray_jsonl_and_config(
    ray_session: Any,
    corpus: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = tmp_path / "pipeline.toml"
    config.write_text(
        "[near_dedup]\nthreshold = 0.6\nnum_perm = 32\nstore_signatures = true\n"
        "[quality]\npresets = ['gopher_repetition']\n",
        encoding="utf-8",
    )
    local = tmp_path / "local"
    local_report = local_run(
        corpus,
        local,
        config=config,
        fields=["id"],
        format="jsonl",
        pii=False,
        languages=["en"],
        progress="none",
    )
    out = tmp_path / "ray"
    args = [*corpus, "-o", str(out), "--config", str(config), "--fields", "id", "--no-pii"]
    args += ["--languages", "en"]  # the language stage runs in the actors, as in the local run
    capsys.readouterr()  # only what the command prints; Ray's late notes of earlier tests aside
    code = cli.main(["run", *args, "--format", "jsonl", "--engine", "ray", "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    _assert_same(local_report, report)
    assert report["duplicates"]["near"] > 0
    assert report["stages"]["language"]["rejected"] > 0  # --languages reached the actors
    assert report["pii"] is None
    assert _rows(local, "jsonl") == _rows(out, "jsonl")


def test_cli_json_stdout_carries_the_report_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ray's driver prints cluster messages ("(raylet) A worker died ...") to sys.stdout from a
    # background thread at any moment of the run; with --json they must land on stderr.
    note = "\x1b[33m(raylet)\x1b[0m A worker died or was killed while executing a task"

    def noisy_run(*_args: Any, **_kwargs: Any) -> dict[str, Any]:
        print(note)
        thread = threading.Thread(target=print, args=(note,))
        thread.start()
        thread.join()
        return {"documents": {"in": 3, "out": 2}}

    monkeypatch.setattr(cli, "require_ray", lambda: None)
    monkeypatch.setattr(cli, "ray_run", noisy_run)
    code = cli.main(
        ["run", str(tmp_path / "in.jsonl"), "-o", str(tmp_path), "--engine", "ray", "--json"]
    )
    assert code == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"documents": {"in": 3, "out": 2}}
    assert captured.err.count(note) == 2


@ray_machinery
def test_unreadable_shard_names_it_and_leaves_no_output(
    ray_session: Any, corpus: list[str], tmp_path: Path
) -> None:
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1 this is not a parquet file")
    out = tmp_path / "ray"
    with pytest.raises(RunError, match=r"broken\.parquet") as info:
        lray.run(None, [corpus[0], str(bad)], out, actors=2, partitions=2)
    assert "(shard 2)" in str(info.value)  # the glob of corpus[0] is two shards
    assert sorted(p.name for p in out.iterdir()) == [".luminamoon"]
    assert not list((out / ".luminamoon").iterdir())


def test_address_that_does_not_answer(corpus: list[str], tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RunError, match=rf"127\.0\.0\.1:{port}' does not answer"):
        lray.run(None, corpus, tmp_path / "out", address=f"127.0.0.1:{port}")
    assert not (tmp_path / "out" / "report.json").exists()
    assert not (tmp_path / "out" / ".luminamoon" / "ray").exists()


def test_without_ray_the_option_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, corpus: list[str], tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    monkeypatch.setitem(sys.modules, "ray.data", None)
    code = cli.main(["run", *corpus, "-o", str(tmp_path / "o"), "--engine", "ray"])
    assert code == 1
    with pytest.raises(RunError, match=r"pip install 'luminamoon-data\[ray\]'"):
        lray.require_ray()
    # The local engine does not need Ray; --address without --engine ray is a usage error.
    assert cli.main(["run", *corpus, "-o", str(tmp_path / "o2"), "--address", "auto"]) == 2


# -- the near-dedup resolution, without Ray ---------------------------------------------------


def _candidates(texts: list[str], near: Any) -> tuple[Any, dict[int, Any]]:
    """Band rows and buckets of ``texts`` computed like the Ray stages (positions = indices)."""
    import numpy as np

    sig = near.signatures(pa.array(texts)).astype("<u4")
    mask = (1 << near.value_bits) - 1
    width = near.num_perm * 4
    table = pa.table(
        {
            "pos": pa.array(np.arange(len(texts)), pa.int64()),
            "sig": pa.FixedSizeBinaryArray.from_buffers(
                pa.binary(width), len(texts), [None, pa.py_buffer(sig.tobytes())]
            ),
        }
    )
    bands = lray._band_rows(
        table, bands=near.bands, rows=near.rows, mask=mask, num_perm=near.num_perm
    )
    groups = bands.group_by("key").aggregate([("pos", "list")])
    members = [
        (k, p)
        for k, ps in zip(groups["key"].to_pylist(), groups["pos_list"].to_pylist(), strict=True)
        if len(ps) > 1
        for p in ps
    ]
    candidates = pa.table(
        {
            "key": pa.array([k for k, _ in members], pa.binary()),
            "pos": pa.array([p for _, p in members], pa.int64()),
        }
    )
    stored = {i: sig[i] & np.uint32(mask) for i in range(len(texts))}
    return candidates, stored


def test_resolution_equals_the_streaming_deduplicator() -> None:
    rng = random.Random(3)
    words = [f"w{i}" for i in range(40)]
    base = [" ".join(rng.choice(words) for _ in range(30)) for _ in range(25)]
    texts = []
    for _ in range(160):
        text = rng.choice(base).split()
        for _ in range(rng.randrange(4)):
            text[rng.randrange(len(text))] = rng.choice(words)
        texts.append(" ".join(text))
    for options in ({}, {"threshold": 0.5, "num_perm": 32}, {"store_signatures": True}):
        near = lmd.MinHashDeduplicator(**options)
        expected = [i for i, k in enumerate(near.filter_batch(texts)) if not k]
        candidates, stored = _candidates(texts, lmd.MinHashDeduplicator(**options))
        dropped, _ = lray._resolve_near(candidates, stored, near.min_matches)
        assert dropped == expected, options
        assert 0 < len(dropped) < len(texts)


def test_huge_bucket_costs_checks_against_kept_documents_only() -> None:
    # 3,000 near-identical boilerplate pages (a counter differs): one kept, the rest dropped;
    # all-pairs verification would be 4.5M checks, the resolution makes one per page.
    body = " ".join(f"term{i}" for i in range(200))
    pages = 3000 if lmd.BACKEND == "native" else 600
    texts = [f"{body} page {i}" for i in range(pages)]
    near = lmd.MinHashDeduplicator()
    candidates, stored = _candidates(texts, near)
    dropped, stats = lray._resolve_near(candidates, stored, near.min_matches)
    assert dropped == list(range(1, pages))
    assert stats["largest_bucket"] >= pages * 0.9
    assert stats["checks"] < 2 * pages

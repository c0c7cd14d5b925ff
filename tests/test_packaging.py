"""Packaging contract: extras, core dependencies, the optional-import messages, build_info and
the ``info`` command (both backends), and the files contributors expect."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import luminamoon.data as lmd
from luminamoon.data import _optional, cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - CPython 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
NATIVE_LIBRARIES = ("simdjson", "abseil", "utf8proc", "xxhash", "zstd", "zlib")


def _names(requirements: list[str]) -> list[str]:
    out = []
    for requirement in requirements:
        name = requirement.split(";")[0]
        for stop in "<>=![ ":
            name = name.split(stop)[0]
        out.append(name.strip())
    return out


def test_core_dependencies_are_numpy_pyarrow_and_toml() -> None:
    deps = PYPROJECT["project"]["dependencies"]
    assert _names(deps) == ["numpy", "pyarrow", "tomli", "tomli-w"]
    tomli = next(d for d in deps if d.startswith(("tomli>", "tomli;")))
    assert "python_version<'3.11'" in tomli.replace(" ", "")
    assert _names(deps)[:2] == list(_optional.CORE)


def test_runtime_extras_match_the_helper() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"]
    for extra, dists in _optional.EXTRAS.items():
        assert _names(extras[extra]) == list(dists), extra
    for extra in ("torch", "arrow", "ray", "hf", "bench", "dev", "test"):
        assert extra in extras
    for module, extra in _optional.MODULE_EXTRA.items():
        if extra is not None:
            assert module in _optional.EXTRAS[extra], module


def test_build_requirements_are_pinned_like_requirements_dev() -> None:
    requires = PYPROJECT["build-system"]["requires"]
    assert all("==" in r for r in requires), requires
    dev = (ROOT / "requirements-dev.txt").read_text(encoding="utf-8").splitlines()
    for requirement in requires:
        assert requirement in dev, requirement


@pytest.mark.parametrize(
    ("module", "call", "extra"),
    [
        ("torch", lambda t: t.to_torch(), "torch"),
        ("polars", lambda t: t.to_polars(), "arrow"),
    ],
)
def test_missing_extra_names_it_on_first_use(
    monkeypatch: pytest.MonkeyPatch, module: str, call: object, extra: str
) -> None:
    tensor = lmd.StringTensor(["a", "b"])
    monkeypatch.setitem(sys.modules, module, None)  # import of it raises ImportError
    with pytest.raises(ImportError) as info:
        call(tensor)  # type: ignore[operator]
    message = str(info.value)
    assert module in message
    assert f"pip install 'luminamoon-data[{extra}]'" in message
    assert info.value.name == module
    assert isinstance(info.value.__cause__, ImportError)


def test_require_names_feature_and_core_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(ImportError, match=r"load_hf needs datasets.*luminamoon-data\[hf\]"):
        _optional.require("datasets", "load_hf")
    assert _optional.install_hint("numpy") == "pip install 'luminamoon-data' (or pip install numpy)"
    assert _optional.require("json", "x") is json


def test_build_info_reports_the_backend_libraries() -> None:
    info = lmd.build_info()
    assert all(isinstance(k, str) and isinstance(v, str) and v for k, v in info.items())
    if lmd.BACKEND == "native":
        assert list(info)[:2] == ["compiler", "cxx_standard"]
        assert tuple(list(info)[2:]) == NATIVE_LIBRARIES
        import zlib

        # One libz.so.1 per process: the module reports the same runtime as Python's zlib.
        assert info["zlib"].split()[0] == zlib.ZLIB_RUNTIME_VERSION
    else:
        assert list(info) == ["python", "xxhash", "zstd", "zlib", "unicodedata"]


def test_info_command_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"luminamoon-data {lmd.__version__}\n")
    assert f"backend     {lmd.BACKEND}" in out
    for extra in _optional.EXTRAS:
        assert f"extra [{extra}] " in out
    if lmd.BACKEND == "native" or "native      /" in out:
        assert "native libs simdjson " in out
        assert f"simd        {lmd.simd_isa()}" in out or lmd.BACKEND == "fallback"


def test_info_command_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["luminamoon-data"] == lmd.__version__
    assert info["backend"] == lmd.BACKEND
    assert set(info["extras"]) == set(_optional.EXTRAS)
    assert info["core"]["numpy"] is not None
    assert info["core"]["tomli-w"] is not None
    if info["native"]["module"] is not None:
        assert set(NATIVE_LIBRARIES) <= set(info["native"]["build"])
        assert info["native"]["simd_isa"] in info["native"]["supported_isas"]


def test_contributor_files() -> None:
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.lstrip().startswith("Apache License")
    assert "Version 2.0, January 2004" in license_text
    assert "END OF TERMS AND CONDITIONS" in license_text
    assert PYPROJECT["project"]["license"] == {"text": "Apache-2.0"}
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for item in ("gtest", "parity", "fuzz", "benchmark", "check_stubs.sh", "CHANGELOG"):
        assert item in contributing, item
    presets = json.loads((ROOT / "CMakePresets.json").read_text(encoding="utf-8"))
    names = {p["name"] for p in presets["configurePresets"]}
    assert {"dev", "release", "asan", "tsan", "fuzz", "bench"} <= names
    tsan = next(p for p in presets["configurePresets"] if p["name"] == "tsan")
    assert tsan["cacheVariables"]["LUMINAMOON_SANITIZE_THREAD"] == "ON"

"""SIMD instruction-set selection (SPEC 4, TextCleaner kernels): ``simd_isa``,
``supported_isas`` and the ``LUMINAMOON_SIMD`` override. The override is read once per process,
so every forced value is tried in a child interpreter."""

from __future__ import annotations

import subprocess
import sys

import pytest

import luminamoon.data as lmd
from luminamoon.data.fallbacks import simd as fallback_simd

ISA_NAMES = ("scalar", "avx2", "avx512", "neon")

# Prints simd_isa(), or "ConfigError: <message>".
CHILD = """
import luminamoon.data as lmd
try:
    print(lmd.simd_isa())
except lmd.ConfigError as exc:
    print("ConfigError: " + str(exc))
"""


def child_simd_isa(env: dict[str, str], forced: str | None) -> str:
    env = dict(env)
    env.pop("LUMINAMOON_SIMD", None)
    if forced is not None:
        env["LUMINAMOON_SIMD"] = forced
    result = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


def test_simd_isa_is_a_supported_name() -> None:
    supported = lmd.supported_isas()
    assert supported[0] == "scalar"
    assert set(supported) <= set(ISA_NAMES)
    assert len(set(supported)) == len(supported)
    assert lmd.simd_isa() in supported


def test_fallback_reports_scalar_only() -> None:
    assert fallback_simd.supported_isas() == ["scalar"]
    if lmd.BACKEND == "fallback":
        assert lmd.simd_isa() == "scalar"


def test_unset_picks_the_best_supported(subprocess_env: dict[str, str]) -> None:
    assert child_simd_isa(subprocess_env, None) == lmd.supported_isas()[-1]
    assert child_simd_isa(subprocess_env, "") == lmd.supported_isas()[-1]


@pytest.mark.parametrize("name", ISA_NAMES)
def test_forcing_a_supported_isa(subprocess_env: dict[str, str], name: str) -> None:
    if name not in lmd.supported_isas():
        pytest.skip(f"{name} is not supported by this backend on this machine")
    expected = name if lmd.BACKEND == "native" else "scalar"
    assert child_simd_isa(subprocess_env, name) == expected


def test_forcing_an_unsupported_isa(subprocess_env: dict[str, str]) -> None:
    unsupported = [name for name in ISA_NAMES if name not in lmd.supported_isas()]
    if not unsupported:
        pytest.skip("every instruction set is supported here")
    out = child_simd_isa(subprocess_env, unsupported[0])
    if lmd.BACKEND == "fallback":
        assert out == "scalar"  # known names are accepted; the fallback has no SIMD to force
        return
    assert out.startswith("ConfigError: "), out
    assert f"LUMINAMOON_SIMD={unsupported[0]}" in out
    assert "supported here: " + ", ".join(lmd.supported_isas()) in out


@pytest.mark.parametrize(
    ("forced", "suggestion"),
    [("avx3", "avx2"), ("AVX2", "avx2"), ("avx-512", "avx512"), ("scaler", "scalar")],
)
def test_unknown_name_suggests_the_closest(
    subprocess_env: dict[str, str], forced: str, suggestion: str
) -> None:
    out = child_simd_isa(subprocess_env, forced)
    assert out.startswith("ConfigError: "), out
    assert f"unknown instruction set '{forced}'" in out
    assert f"did you mean '{suggestion}'?" in out


def test_unknown_name_far_from_all_lists_them(subprocess_env: dict[str, str]) -> None:
    out = child_simd_isa(subprocess_env, "sse4.2")
    assert out.startswith("ConfigError: "), out
    assert "did you mean" not in out
    assert "valid: scalar, avx2, avx512, neon" in out


def test_fallback_validates_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # The fallback reads LUMINAMOON_SIMD on every call, so it can be tested in-process.
    monkeypatch.setenv("LUMINAMOON_SIMD", "avx512")
    assert fallback_simd.simd_isa() == "scalar"
    monkeypatch.setenv("LUMINAMOON_SIMD", "avx3")
    with pytest.raises(lmd.ConfigError, match="did you mean 'avx2'"):
        fallback_simd.simd_isa()
    monkeypatch.delenv("LUMINAMOON_SIMD")
    assert fallback_simd.simd_isa() == "scalar"

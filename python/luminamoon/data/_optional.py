"""Optional dependencies: one place that imports them and says which extra brings each one.

``luminamoon-data`` installs with numpy and pyarrow (its core dependencies) and nothing heavy;
torch, polars, duckdb, datasets and ray come with extras. Every lazy import of an optional
module goes through :func:`require`, so a missing one fails on the first call that needs it with
the same message naming the extra::

    ImportError: StringTensor.to_torch needs torch, which is not installed:
    pip install 'luminamoon-data[torch]'
"""

from __future__ import annotations

import importlib
import sys
from importlib import metadata
from typing import Any

__all__ = [
    "CORE",
    "EXTRAS",
    "MODULE_EXTRA",
    "core_status",
    "extras_status",
    "install_hint",
    "require",
]

# The extras of pyproject.toml ([project.optional-dependencies]) that bring runtime features,
# as extra -> the distributions it installs. `info` reports which are present. Kept equal to
# pyproject.toml by tests/test_packaging.py.
EXTRAS: dict[str, tuple[str, ...]] = {
    "torch": ("torch",),
    "arrow": ("pyarrow", "polars", "duckdb"),
    "ray": ("ray",),
    "hf": ("datasets",),
    "fast-fallback": ("xxhash", "zstandard"),
    "bench": (
        "datatrove",
        "spacy",
        "regex",
        "xxhash",
        "zstandard",
        "orjson",
        "datasketch",
        "rensa",
    ),
}

# Core dependencies: installed with the package; a missing one means a broken environment.
CORE: tuple[str, ...] = ("numpy", "pyarrow")

# Importable module -> the extra that installs it (None: a core dependency).
MODULE_EXTRA: dict[str, str | None] = {
    "numpy": None,
    "pyarrow": None,
    "polars": "arrow",
    "duckdb": "arrow",
    "torch": "torch",
    "ray": "ray",
    "datasets": "hf",
    "xxhash": "fast-fallback",
    "zstandard": "fast-fallback",
}


def install_hint(module: str) -> str:
    """The pip command that installs ``module`` the supported way."""
    extra = MODULE_EXTRA.get(module)
    if extra is None:
        return f"pip install 'luminamoon-data' (or pip install {module})"
    return f"pip install 'luminamoon-data[{extra}]'"


def require(module: str, feature: str) -> Any:
    """Import ``module`` for ``feature`` (what the user called, e.g. ``StringTensor.to_torch``).

    Raises ``ImportError`` naming the feature, the module and the extra to install; the original
    error is chained (``__cause__``), because a module that is installed but fails to import
    (a broken build) says why there.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{feature} needs {module}, which is not installed or failed to import "
            f"({exc}): {install_hint(module)}",
            name=module,
        ) from exc


def _distribution_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def extras_status() -> dict[str, dict[str, str | None]]:
    """extra -> {distribution: installed version or None}, read from package metadata only
    (nothing is imported, so torch does not cost its import time here)."""
    return {
        extra: {dist: _distribution_version(dist) for dist in dists}
        for extra, dists in EXTRAS.items()
    }


def core_status() -> dict[str, str | None]:
    """Core dependency -> installed version or None (tomli only before CPython 3.11)."""
    dists = [*CORE, "tomli-w"] + (["tomli"] if sys.version_info < (3, 11) else [])
    return {dist: _distribution_version(dist) for dist in dists}

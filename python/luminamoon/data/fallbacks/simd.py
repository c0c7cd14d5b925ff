"""Instruction-set reporting of the pure-Python backend, mirroring ``_native.simd_isa``.

The fallback has no SIMD kernels: ``simd_isa()`` is always ``"scalar"``. ``LUMINAMOON_SIMD`` is
still validated the way the native module validates it, so a typo fails on both backends: an
unknown name raises ``ConfigError`` with a "did you mean" suggestion; a known name (``scalar``,
``avx2``, ``avx512``, ``neon``) is accepted, and the fallback still reports ``"scalar"``,
because forcing an instruction set only chooses among native kernels.
"""

from __future__ import annotations

import os

from ..errors import ConfigError
from .suggest import did_you_mean

__all__ = ["ISA_NAMES", "simd_isa", "supported_isas"]

ISA_NAMES: tuple[str, ...] = ("scalar", "avx2", "avx512", "neon")


def _check_forced(forced: str) -> None:
    if forced == "" or forced in ISA_NAMES:
        return
    message = f"LUMINAMOON_SIMD: unknown instruction set '{forced}'"
    # ASCII-only lowering, as the native module does, so both suggest the same name.
    lowered = "".join(c.lower() if "A" <= c <= "Z" else c for c in forced)
    best = did_you_mean(lowered, ISA_NAMES)
    if best is not None:
        message += f"; did you mean '{best}'?"
    message += (
        f" (valid: {', '.join(ISA_NAMES)}; supported here: scalar; unset it to pick the best)"
    )
    raise ConfigError(message)


def simd_isa() -> str:
    """The instruction set the byte kernels use: always ``"scalar"`` in the fallback.

    Raises ``ConfigError`` when ``LUMINAMOON_SIMD`` names no instruction set.
    """
    _check_forced(os.environ.get("LUMINAMOON_SIMD", ""))
    return "scalar"


def supported_isas() -> list[str]:
    """Every instruction set this backend can run: ``["scalar"]``."""
    return ["scalar"]

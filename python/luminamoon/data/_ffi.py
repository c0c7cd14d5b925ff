"""Backend selection: the native C++ module when it imports, else the pure-Python fallbacks.

``LUMINAMOON_FORCE_FALLBACK=1`` forces the fallback (used by the test suite to run every test on
both backends). Everything public is re-exported by ``luminamoon.data``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

__all__ = ["BACKEND", "NATIVE_IMPORT_ERROR", "impl"]

NATIVE_IMPORT_ERROR: ImportError | None = None

if TYPE_CHECKING:
    # The stubs of the native module are the typed contract; the fallback mirrors it.
    from . import _native as impl
elif os.environ.get("LUMINAMOON_FORCE_FALLBACK", "") not in ("", "0"):
    from . import fallbacks as impl
else:
    try:
        from . import _native as impl
    except ImportError as exc:  # not built for this interpreter
        NATIVE_IMPORT_ERROR = exc
        from . import fallbacks as impl

BACKEND: str = "native" if impl.__name__.endswith("._native") else "fallback"

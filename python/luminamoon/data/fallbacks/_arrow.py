"""Arrow string/binary input for the fallback backend, read through pyarrow.

The native module reads the Arrow C data interface directly; here pyarrow does the decoding so
that the fallback accepts exactly the same objects (anything exporting ``__arrow_c_array__`` or
``__arrow_c_stream__``) and the same six types.
"""

from __future__ import annotations

from typing import Any

from .._optional import require

__all__ = ["SUPPORTED_TYPES", "is_arrow_object", "iter_arrow_values"]

SUPPORTED_TYPES = ("utf8", "large_utf8", "utf8_view", "binary", "large_binary", "binary_view")


def is_arrow_object(obj: object) -> bool:
    """Whether ``obj`` exports the Arrow PyCapsule interface (array or stream)."""
    return hasattr(obj, "__arrow_c_array__") or hasattr(obj, "__arrow_c_stream__")


def _import_pyarrow() -> Any:
    # Imported on first Arrow input only (it costs ~0.1 s to import).
    return require("pyarrow", "reading Arrow input with the pure-Python fallback backend")


def iter_arrow_values(obj: object) -> list[bytes]:
    """Every element of an Arrow string/binary array or stream, as bytes, in order.

    Raises ``TypeError`` for any other Arrow type and ``ValueError`` naming the (global) index
    of the first null.
    """
    pa = _import_pyarrow()
    if isinstance(obj, pa.Array):
        chunks = [obj]
        arrow_type = obj.type
    elif isinstance(obj, pa.ChunkedArray):
        chunks = list(obj.chunks)
        arrow_type = obj.type
    elif hasattr(obj, "__arrow_c_array__"):
        array = pa.array(obj)
        chunks = [array]
        arrow_type = array.type
    elif hasattr(obj, "__arrow_c_stream__"):
        chunked = pa.chunked_array(obj)
        chunks = list(chunked.chunks)
        arrow_type = chunked.type
    else:
        raise TypeError(
            f"expected an object exporting __arrow_c_array__ or __arrow_c_stream__, "
            f"got {type(obj).__name__}"
        )

    types = pa.types
    if not (
        types.is_string(arrow_type)
        or types.is_large_string(arrow_type)
        or types.is_string_view(arrow_type)
        or types.is_binary(arrow_type)
        or types.is_large_binary(arrow_type)
        or types.is_binary_view(arrow_type)
    ):
        raise TypeError(
            f"Arrow input of type {arrow_type} is not supported; supported types: "
            + ", ".join(SUPPORTED_TYPES)
        )

    values: list[bytes] = []
    for chunk in chunks:
        if chunk.null_count:
            first_null = chunk.is_null().to_pylist().index(True)
            raise ValueError(
                f"texts[{len(values) + first_null}] is null; drop or fill nulls before "
                "deduplicating"
            )
        # One cast gives uniform bytes for all six types (view types included).
        values.extend(chunk.cast(pa.large_binary()).to_pylist())
    return values

"""StringTensor conversions to and from other libraries, shared by both backends.

Both ``StringTensor`` classes (native and fallback) delegate here, so they accept the same
inputs and return the same objects. Everything goes through the tensor's public protocol:
``__arrow_c_array__`` / ``__arrow_c_stream__`` for pyarrow, Polars and DuckDB (zero-copy),
``offsets_and_payload()`` and ``from_buffers()`` for NumPy and PyTorch (DLPack). pyarrow, polars,
numpy and torch are imported on first use through ``_optional.require``, which names the extra
to install when one is missing.
"""

from __future__ import annotations

from typing import Any

from . import _ffi
from ._optional import require
from .errors import ConfigError

__all__ = [
    "arrow_type",
    "from_numpy",
    "from_torch",
    "rebuild",
    "reduce",
    "repr_of",
    "to_arrow",
    "to_numpy",
    "to_polars",
    "to_torch",
]

# Names accepted by to_arrow(type=...): the Arrow C format names and pyarrow's type names.
_ARROW_TYPE_NAMES = {
    "utf8_view": "string_view",
    "string_view": "string_view",
    "utf8": "string",
    "string": "string",
    "large_utf8": "large_string",
    "large_string": "large_string",
}
_REPR_ITEMS = 5


def _require(module: str, what: str) -> Any:
    return require(module, f"StringTensor.{what}")


def arrow_type(type: object) -> Any:
    """The pyarrow DataType for ``type``: None (utf8_view), a name or a string DataType."""
    pa = _require("pyarrow", "to_arrow")
    if type is None:
        return pa.string_view()
    if isinstance(type, str):
        name = _ARROW_TYPE_NAMES.get(type)
        if name is None:
            best = _ffi.impl.did_you_mean(type, list(_ARROW_TYPE_NAMES))
            hint = f"did you mean '{best}'?" if best else "use utf8_view, utf8 or large_utf8"
            raise ConfigError(f"to_arrow: unknown Arrow string type '{type}'; {hint}")
        return getattr(pa, name)()
    if isinstance(type, pa.DataType) and type in (
        pa.string_view(),
        pa.string(),
        pa.large_string(),
    ):
        return type
    raise TypeError(
        f"to_arrow: type must be utf8_view, utf8 or large_utf8 (a name or a pyarrow type), "
        f"got {type!r}"
    )


def to_arrow(tensor: Any, type: object = None) -> Any:
    """A pyarrow Array over the tensor's buffers (requested through the PyCapsule protocol)."""
    pa = _require("pyarrow", "to_arrow")
    return pa.array(tensor, type=arrow_type(type))


def to_polars(tensor: Any, name: str = "") -> Any:
    """A polars String Series; Polars imports utf8_view without copying views or bytes."""
    pl = _require("polars", "to_polars")
    return pl.Series(tensor).alias(name)  # the Arrow field is unnamed


def to_numpy(tensor: Any) -> Any:
    """A NumPy array of str: StringDType on NumPy >= 2, object dtype before. Always a copy."""
    np = _require("numpy", "to_numpy")
    items = tensor.to_pylist()
    dtypes = getattr(np, "dtypes", None)
    if dtypes is not None and hasattr(dtypes, "StringDType"):
        return np.array(items, dtype=dtypes.StringDType())
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


def to_torch(tensor: Any, device: object = "cpu") -> tuple[Any, Any]:
    """(offsets, payload) torch tensors through DLPack.

    On the CPU they share memory with ``offsets_and_payload()`` (no copy when the tensor keeps
    its contiguous layout). For another device each buffer is moved in one transfer; the uint32
    offsets travel as int32 bits and are viewed back as uint32 on the device, because PyTorch
    implements few operations for its unsigned types.
    """
    torch = _require("torch", "to_torch")
    offsets_np, payload_np = tensor.offsets_and_payload()
    offsets = torch.from_dlpack(offsets_np)
    payload = torch.from_dlpack(payload_np)
    target = torch.device(device)
    if target.type == "cpu":
        return offsets, payload
    bits = torch.int32 if offsets.dtype == torch.uint32 else torch.int64
    moved = offsets.view(bits).to(target).view(offsets.dtype)
    return moved, payload.to(target)


def from_torch(cls: Any, offsets: Any, payload: Any) -> Any:
    """A tensor from (offsets, payload) torch tensors; those on a GPU are copied to the CPU."""
    torch = _require("torch", "from_torch")
    parts = []
    for what, given in (("offsets", offsets), ("payload", payload)):
        if not isinstance(given, torch.Tensor):
            raise TypeError(
                f"from_torch: {what} must be a torch.Tensor, got {type(given).__name__}"
            )
        value = given
        if value.device.type != "cpu":
            if what == "offsets" and value.element_size() in (4, 8):
                bits = torch.int32 if value.element_size() == 4 else torch.int64
                value = value.view(bits).cpu().view(given.dtype)
            else:
                value = value.cpu()
        parts.append(value.contiguous())
    return cls.from_buffers(parts[0], parts[1])


def from_numpy(cls: Any, array: Any) -> Any:
    """A tensor from a 1-D NumPy array of str ('U', StringDType, object) or bytes ('S')."""
    np = _require("numpy", "from_numpy")
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    if array.ndim != 1:
        raise ValueError(f"from_numpy: expected a 1-D array, got {array.ndim} dimensions")
    kind = array.dtype.kind
    if kind == "U":
        width = array.dtype.itemsize // 4
        units = np.ascontiguousarray(array, dtype=f"<U{max(width, 1)}").view("<u4")
        return cls._from_utf32(units.reshape(-1), max(width, 1))
    if kind == "S":
        width = array.dtype.itemsize
        data = np.ascontiguousarray(array).view(np.uint8) if width else np.empty(0, np.uint8)
        return cls._from_fixed_width(data.reshape(-1), width)
    if kind in ("T", "O"):
        return cls.from_pylist(array.tolist())
    raise TypeError(f"from_numpy: expected a str or bytes array, got dtype {array.dtype}")


def reduce(tensor: Any) -> tuple[Any, tuple[Any, Any, Any]]:
    """Pickle support: rebuilt by ``from_buffers`` from the contiguous layout (so a tensor sent
    to a DataLoader worker or another process arrives with both layouts)."""
    offsets, payload = tensor.offsets_and_payload()
    return rebuild, (type(tensor), offsets, payload.tobytes())


def rebuild(cls: Any, offsets: Any, payload: bytes) -> Any:
    """The unpickling side of :func:`reduce`."""
    return cls.from_buffers(offsets, payload)


def repr_of(tensor: Any) -> str:
    """``StringTensor(['a', 'b', ...], len=N)``: the first five strings."""
    n = len(tensor)
    head = [repr(tensor[i]) for i in range(min(n, _REPR_ITEMS))]
    if n > _REPR_ITEMS:
        head.append("...")
    return f"StringTensor([{', '.join(head)}], len={n})"

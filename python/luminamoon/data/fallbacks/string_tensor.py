"""StringTensor: immutable UTF-8 strings in Arrow's utf8_view layout (SPEC 4, stage 5).

Pure-Python backend and the reference the native module is tested against. It keeps exactly
the native layout, built by the same rules, so the two produce byte-identical views, data
buffers, offsets and payloads:

* ``_views``: ``16 * n`` bytes of Arrow views (u32 length; strings of at most 12 bytes inline and
  zero-padded, longer ones a 4-byte prefix, a u32 buffer index and a u32 offset);
* ``_buffers``: the data buffers the views point into (memoryviews; shared, never copied by
  slices, ``take``, ``filter`` or ``concat``);
* ``_offsets`` / ``_payload``: the contiguous layout (``n + 1`` u32 or u64 offsets into one
  payload) when it is kept, else ``None``.

Every buffer is a memoryview over bytes, a pyarrow buffer, a NumPy array or another exporter,
so slices and Arrow exports share memory as the native module does. pyarrow is needed only for
Arrow input and output, numpy only for the array-returning methods.
"""

from __future__ import annotations

import ctypes
import itertools
import struct
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .. import _string_tensor_interop as interop
from .._optional import require

__all__ = ["StringTensor"]

_VIEW = struct.Struct("<I12s")  # length + 12 inline bytes (zero-padded by struct)
_REF = struct.Struct("<I4sII")  # length + prefix + buffer index + offset
_INLINE = 12
_MAX_LENGTH = 2**31 - 1  # Arrow's int32 limit: one string, a view offset, a buffer index
_MAX_U32_PAYLOAD = 2**32 - 1
_MAX_VIEW_BUFFER = _MAX_LENGTH
_VIEW_TYPES = ("vu", "u", "U")
_BINARY = {"vz": "vu", "z": "u", "Z": "U"}


def _invalid_utf8(index: int, data: bytes, exc: UnicodeDecodeError) -> ValueError:
    return ValueError(
        f"element {index} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset "
        f"{exc.start} of {len(data)}); decode it with errors='replace' first, or repair it "
        "with TextCleaner"
    )


def _check_utf8(index: int, data: bytes) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _invalid_utf8(index, data, exc) from None


def _too_long(index: int, length: int) -> ValueError:
    return ValueError(
        f"element {index} is {length} bytes long; a StringTensor element holds at most "
        "2^31 - 1 bytes (Arrow's limit for one string view)"
    )


def _validate_contiguous(offsets: Sequence[int], payload: memoryview, base: int) -> None:
    """The native check: one decode of the whole range, then each non-empty string must start
    on a code point (not on a 10xxxxxx byte); on failure, string by string for the index."""
    n = len(offsets) - 1
    if n <= 0:
        return
    ok = True
    try:
        str(payload[offsets[0] : offsets[n]], "utf-8")
    except UnicodeDecodeError:
        ok = False
    if ok:
        for i in range(n):
            start = offsets[i]
            if offsets[i + 1] != start and payload[start] & 0xC0 == 0x80:
                ok = False
                break
    if ok:
        return
    for i in range(n):
        _check_utf8(base + i, bytes(payload[offsets[i] : offsets[i + 1]]))


def _build_views(
    offsets: Sequence[int], payload: memoryview, limit: int = _MAX_VIEW_BUFFER
) -> tuple[bytes, list[memoryview]]:
    """Views of every string and the data buffers they point into (native: build_views).

    Buffer 0 starts at payload byte 0; a long string that would end more than ``limit`` bytes
    past its buffer's start opens a new buffer at its first byte. Short strings are inlined.
    """
    n = len(offsets) - 1
    starts = [0]
    parts: list[bytes] = []
    append = parts.append
    pack_inline = _VIEW.pack
    pack_ref = _REF.pack
    data = (
        payload.obj if isinstance(payload.obj, bytes) and len(payload) == len(payload.obj) else None
    )
    source: Any = data if data is not None else payload
    begin = offsets[0]
    for i in range(n):
        end = offsets[i + 1]
        length = end - begin
        if length <= _INLINE:
            append(pack_inline(length, bytes(source[begin:end])))
        else:
            if end - starts[-1] > limit:
                starts.append(begin)
            append(
                pack_ref(
                    length, bytes(source[begin : begin + 4]), len(starts) - 1, begin - starts[-1]
                )
            )
        begin = end
    last = offsets[n]
    buffers = [
        payload[starts[k] : (starts[k + 1] if k + 1 < len(starts) else last)]
        for k in range(len(starts))
    ]
    return b"".join(parts), buffers


def _byte_view(obj: object, what: str) -> memoryview:
    """A memoryview over a bytes-like / buffer / DLPack (via NumPy) object."""
    try:
        view = memoryview(obj)  # type: ignore[arg-type]
    except TypeError:
        if not hasattr(obj, "__dlpack__"):
            raise TypeError(
                f"from_buffers: {what} must be a 1-D array on the CPU (NumPy, DLPack or buffer "
                f"protocol), got {type(obj).__name__}"
            ) from None
        np = _import_numpy("from_buffers")
        view = memoryview(np.from_dlpack(obj))
    if view.ndim != 1:
        raise ValueError(f"from_buffers: {what} must be 1-D, got {view.ndim} dimensions")
    if not view.c_contiguous:
        raise ValueError("from_buffers: offsets and payload must be contiguous")
    return view


def _requested_format(requested_schema: object) -> str | None:
    """The format string of a requested ArrowSchema capsule, read in place (not consumed)."""
    if requested_schema is None:
        return None
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    try:
        pointer = get_pointer(requested_schema, b"arrow_schema")
    except (ValueError, TypeError):
        raise TypeError("requested_schema: expected a PyCapsule named 'arrow_schema'") from None
    fmt = ctypes.cast(pointer, ctypes.POINTER(ctypes.c_char_p))[0]  # ArrowSchema.format
    return fmt.decode() if fmt is not None else None


def _import_pyarrow(what: str) -> Any:
    return require("pyarrow", f"StringTensor.{what} (pure-Python backend)")


def _import_numpy(what: str) -> Any:
    return require("numpy", f"StringTensor.{what}")


def _read_only(np: Any, buffer: memoryview, dtype: Any) -> Any:
    out = np.frombuffer(buffer, dtype=dtype) if len(buffer) else np.empty(0, dtype=dtype)
    out.flags.writeable = False
    return out


def _encode_items(items: Iterable[object]) -> list[bytes]:
    out: list[bytes] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            try:
                out.append(item.encode("utf-8"))
            except UnicodeEncodeError:
                raise ValueError(
                    f"items[{i}]: str cannot be encoded as UTF-8 (it contains a lone surrogate); "
                    "pass bytes, or fix the text with .encode('utf-8', 'replace')"
                ) from None
        elif isinstance(item, bytes):
            out.append(item)
        else:
            try:
                with memoryview(item) as view:  # type: ignore[arg-type]
                    if not view.c_contiguous:
                        raise TypeError(f"items[{i}]: expected a contiguous bytes-like object")
                    out.append(view.tobytes())
            except TypeError as exc:
                if "contiguous" in str(exc):
                    raise
                raise TypeError(
                    f"items[{i}]: expected str or bytes-like, got {type(item).__name__}"
                ) from None
    return out


def _values_of(obj: object, what: str) -> tuple[str | None, list[Any]]:
    """(None, items) for a list/tuple/sequence; (dtype kind, items) for a 1-D NumPy, DLPack or
    array-interface array (the native module accepts the same through nb::ndarray)."""
    if isinstance(obj, (list, tuple, range)):
        return None, list(obj)
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"{what}: expected a sequence or array, got {type(obj).__name__}")
    if hasattr(obj, "__dlpack__") or hasattr(obj, "__array_interface__"):
        np = _import_numpy(what)
        arr = np.from_dlpack(obj) if hasattr(obj, "__dlpack__") else np.asarray(obj)
        if arr.ndim != 1:
            raise TypeError(f"{what}: expected a 1-D array, got {arr.ndim} dimensions")
        return str(arr.dtype.kind), arr.tolist()
    if isinstance(obj, Sequence):
        return None, list(obj)
    raise TypeError(f"{what}: expected a sequence or array, got {type(obj).__name__}")


class StringTensor:
    """Immutable UTF-8 strings: Arrow utf8_view on CPU, offsets + payload for GPU/Arrow."""

    __slots__ = ("__weakref__", "_buffers", "_offsets", "_payload", "_views")

    _views: memoryview
    _buffers: tuple[memoryview, ...]
    _offsets: memoryview | None  # format "I" or "Q", len(self) + 1 entries, may start above 0
    _payload: memoryview | None

    def __init__(self, data: object = None, /) -> None:
        other = self._coerce(data)
        self._views = other._views
        self._buffers = other._buffers
        self._offsets = other._offsets
        self._payload = other._payload

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def _make(
        cls,
        views: memoryview,
        buffers: Sequence[memoryview],
        offsets: memoryview | None = None,
        payload: memoryview | None = None,
    ) -> StringTensor:
        t = cls.__new__(cls)
        t._views = views
        t._buffers = tuple(buffers)
        t._offsets = offsets
        t._payload = payload
        return t

    @classmethod
    def _coerce(cls, data: object) -> StringTensor:
        if data is None:
            return cls._from_encoded([])
        if isinstance(data, StringTensor):
            return data
        if isinstance(data, (list, tuple)):
            return cls.from_pylist(data)
        if hasattr(data, "__arrow_c_array__") or hasattr(data, "__arrow_c_stream__"):
            return cls.from_arrow(data)
        if type(data).__module__ == "numpy" and type(data).__name__ == "ndarray":
            return cls.from_numpy(data)
        if isinstance(data, (str, bytes, bytearray, memoryview)):
            raise TypeError(
                "StringTensor: got a single string; pass a list of strings (e.g. [text])"
            )
        if hasattr(data, "__iter__"):
            return cls.from_pylist(list(data))
        raise TypeError(
            "StringTensor: expected a list/tuple/iterable of str or bytes, an Arrow string array "
            "(__arrow_c_array__ / __arrow_c_stream__), a NumPy string array or a StringTensor, "
            f"got {type(data).__name__}"
        )

    @classmethod
    def _from_valid_contiguous(cls, offsets: memoryview, payload: memoryview) -> StringTensor:
        values = offsets.tolist()
        views, buffers = _build_views(values, payload)
        return cls._make(memoryview(views), buffers, offsets, payload)

    @classmethod
    def _from_encoded(cls, items: list[bytes]) -> StringTensor:
        for i, item in enumerate(items):
            if len(item) > _MAX_LENGTH:
                raise _too_long(i, len(item))
        payload = b"".join(items)
        fmt = "I" if len(payload) <= _MAX_U32_PAYLOAD else "Q"
        offsets = array(fmt, itertools.accumulate(map(len, items), initial=0))
        view = memoryview(payload)
        _validate_contiguous(offsets, view, 0)
        return cls._from_valid_contiguous(memoryview(offsets), view)

    @classmethod
    def _from_contiguous(
        cls, raw_offsets: memoryview, itemsize: int, n: int, payload: memoryview, base: int = 0
    ) -> StringTensor:
        """Validated, zero-copy (native: StringTensor::from_contiguous)."""
        if len(raw_offsets) // itemsize < n + 1:
            raise ValueError(
                f"offsets: expected {n} + 1 entries, got {len(raw_offsets) // itemsize}"
            )
        offsets = raw_offsets[: (n + 1) * itemsize].cast("I" if itemsize == 4 else "Q")
        values = offsets.tolist()
        size = len(payload)
        previous = values[0]
        if previous > size:
            raise ValueError(
                f"offsets[0] = {previous} is past the end of the payload ({size} bytes)"
            )
        for i in range(n):
            nxt = values[i + 1]
            if nxt < previous:
                raise ValueError(
                    f"offsets must not decrease: offsets[{i + 1}] = {nxt} < offsets[{i}] = "
                    f"{previous} (element {base + i})"
                )
            if nxt > size:
                raise ValueError(
                    f"offsets[{i + 1}] = {nxt} is past the end of the payload ({size} bytes; "
                    f"element {base + i})"
                )
            if nxt - previous > _MAX_LENGTH:
                raise _too_long(base + i, nxt - previous)
            previous = nxt
        _validate_contiguous(values, payload, base)
        views, buffers = _build_views(values, payload)
        return cls._make(memoryview(views), buffers, offsets, payload)

    @classmethod
    def _from_views(
        cls, views: memoryview, n: int, buffers: list[memoryview], base: int = 0
    ) -> StringTensor:
        """Validated, zero-copy unless padding needs repair (native: StringTensor::from_views)."""
        if len(views) // 16 < n:
            raise ValueError(f"views: expected {n} views ({n} x 16 bytes), got {len(views)} bytes")
        views = views[: 16 * n]
        repair = False
        for i in range(n):
            length, rest = _VIEW.unpack_from(views, 16 * i)
            if length > _MAX_LENGTH:
                raise ValueError(f"element {base + i}: negative view length")
            if length <= _INLINE:
                if any(rest[length:]):
                    repair = True  # padding must be zero for the 16-byte compare
                _check_utf8(base + i, rest[:length])
                continue
            _, prefix, index, offset = _REF.unpack_from(views, 16 * i)
            if index >= len(buffers):
                raise ValueError(
                    f"element {base + i}: view refers to data buffer {index}, but there are "
                    f"{len(buffers)}"
                )
            buffer = buffers[index]
            if offset > _MAX_LENGTH or offset > len(buffer) or length > len(buffer) - offset:
                raise ValueError(
                    f"element {base + i}: view [{offset}, +{length}) lies outside data buffer "
                    f"{index} ({len(buffer)} bytes)"
                )
            data = bytes(buffer[offset : offset + length])
            if data[:4] != prefix:
                raise ValueError(
                    f"element {base + i}: view prefix differs from the first 4 bytes of its string"
                )
            _check_utf8(base + i, data)
        if repair:
            fixed = bytearray(views)
            for i in range(n):
                length = int.from_bytes(fixed[16 * i : 16 * i + 4], "little")
                if length <= _INLINE:
                    fixed[16 * i + 4 + length : 16 * i + 16] = bytes(_INLINE - length)
            views = memoryview(bytes(fixed))
        return cls._make(views, buffers)

    @classmethod
    def from_pylist(cls, items: Sequence[str | bytes | bytearray | memoryview]) -> StringTensor:
        """From str (UTF-8) and bytes-like items (UTF-8 validated; the error names the index)."""
        if isinstance(items, (str, bytes)):
            raise TypeError("from_pylist: expected a sequence of str or bytes, got a single string")
        try:
            snapshot = tuple(items)
        except TypeError:
            raise TypeError(
                f"from_pylist: expected a sequence of str or bytes, got {type(items).__name__}"
            ) from None
        return cls._from_encoded(_encode_items(snapshot))

    @classmethod
    def from_arrow(cls, obj: object) -> StringTensor:
        """From an Arrow utf8/large_utf8/utf8_view (or binary) array or chunked array; zero-copy
        for one chunk."""
        if not (hasattr(obj, "__arrow_c_array__") or hasattr(obj, "__arrow_c_stream__")):
            raise TypeError(
                "from_arrow: expected an object with __arrow_c_array__ or __arrow_c_stream__, "
                f"got {type(obj).__name__}"
            )
        pa = _import_pyarrow("from_arrow")
        if isinstance(obj, pa.Array) or (
            not isinstance(obj, pa.ChunkedArray) and hasattr(obj, "__arrow_c_array__")
        ):
            array = obj if isinstance(obj, pa.Array) else pa.array(obj)
            return cls._import_chunk(pa, array, 0)
        chunked = obj if isinstance(obj, pa.ChunkedArray) else pa.chunked_array(obj)
        parts: list[StringTensor] = []
        base = 0
        for chunk in chunked.chunks:
            parts.append(cls._import_chunk(pa, chunk, base))
            base += len(chunk)
        return cls.concat(parts)

    @classmethod
    def _import_chunk(cls, pa: Any, chunk: Any, base: int) -> StringTensor:
        t = pa.types
        kind = chunk.type
        if t.is_string_view(kind) or t.is_binary_view(kind):
            layout = "vu"
        elif t.is_string(kind) or t.is_binary(kind):
            layout = "u"
        elif t.is_large_string(kind) or t.is_large_binary(kind):
            layout = "U"
        else:
            fmt = _requested_format(kind.__arrow_c_schema__())  # the C format, as native says
            raise TypeError(
                f"unsupported Arrow type (format '{fmt}'); a StringTensor imports utf8, "
                "large_utf8 and utf8_view (and binary, large_binary and binary_view holding UTF-8)"
            )
        n = len(chunk)
        if chunk.null_count:
            first = chunk.is_null().to_pylist().index(True)
            raise ValueError(
                f"element {base + first} is null; a StringTensor holds no nulls: drop or fill "
                "them first (e.g. pyarrow.compute.drop_null or fill_null(''))"
            )
        if n == 0:
            return cls._from_encoded([])
        buffers = chunk.buffers()
        offset = chunk.offset
        if layout == "vu":
            views = memoryview(buffers[1])[16 * offset : 16 * (offset + n)]
            data = [memoryview(b) if b is not None else memoryview(b"") for b in buffers[2:]]
            return cls._from_views(views, n, data, base)
        width = 4 if layout == "u" else 8
        raw = memoryview(buffers[1])[width * offset : width * (offset + n + 1)]
        signed = raw.cast("i" if width == 4 else "q")
        first, last = signed[0], signed[n]
        if first < 0 or last < 0:
            raise ValueError("malformed Arrow array: negative offsets")
        payload = memoryview(buffers[2])[:last] if buffers[2] is not None else memoryview(b"")
        return cls._from_contiguous(raw, width, n, payload, base)

    @classmethod
    def from_numpy(cls, array: Any) -> StringTensor:
        """From a 1-D NumPy array of str ('U', StringDType, object) or bytes ('S')."""
        return interop.from_numpy(cls, array)  # type: ignore[no-any-return]

    @classmethod
    def from_buffers(cls, offsets: object, payload: object) -> StringTensor:
        """Zero-copy from n + 1 offsets (int32/uint32/int64/uint64) and a UTF-8 payload (uint8),
        as NumPy arrays, DLPack tensors or bytes-like objects; validated."""
        off = _byte_view(offsets, "offsets")
        if off.format.lstrip("@=<") not in ("i", "I", "l", "L", "q", "Q") or off.itemsize not in (
            4,
            8,
        ):
            raise TypeError("from_buffers: offsets must be int32, uint32, int64 or uint64")
        data = _byte_view(payload, "payload")
        if data.format.lstrip("@=<") not in ("B", "b", "c") or data.itemsize != 1:
            raise TypeError("from_buffers: payload must be uint8 (or int8) bytes")
        if len(off) == 0:
            raise ValueError("from_buffers: offsets need n + 1 >= 1 entries")
        return cls._from_contiguous(off.cast("B"), off.itemsize, len(off) - 1, data.cast("B"))

    @classmethod
    def from_torch(cls, offsets: object, payload: object) -> StringTensor:
        """From (offsets, payload) torch tensors; CUDA tensors are copied to the CPU first."""
        return interop.from_torch(cls, offsets, payload)  # type: ignore[no-any-return]

    @classmethod
    def _from_utf32(cls, code_units: Any, width: int) -> StringTensor:
        units = memoryview(code_units).cast("B")
        step = 4 * width
        count = len(units) // step if step else 0
        if (step == 0 and len(units)) or (step and len(units) % step):
            raise ValueError(
                f"UTF-32 input of {len(units) // 4} code units is not a whole number of elements "
                f"of width {width}"
            )
        items: list[bytes] = []
        for i in range(count):
            chunk = bytes(units[i * step : (i + 1) * step])
            while chunk[-4:] == b"\0\0\0\0":
                chunk = chunk[:-4]
            try:
                items.append(chunk.decode("utf-32-le").encode("utf-8"))
            except UnicodeDecodeError as exc:
                at = exc.start // 4
                code_point = int.from_bytes(chunk[4 * at : 4 * at + 4], "little")
                raise ValueError(
                    f"element {i}: code point {code_point} at character {at} is not a Unicode "
                    "scalar value (lone surrogate or past U+10FFFF) and has no UTF-8 encoding"
                ) from None
        return cls._from_encoded(items)

    @classmethod
    def _from_fixed_width(cls, data: Any, width: int) -> StringTensor:
        raw = memoryview(data).cast("B")
        if (width == 0 and len(raw)) or (width and len(raw) % width):
            raise ValueError(
                f"fixed-width input of {len(raw)} bytes is not a whole number of elements of "
                f"width {width}"
            )
        count = len(raw) // width if width else 0
        return cls._from_encoded(
            [bytes(raw[i * width : (i + 1) * width]).rstrip(b"\0") for i in range(count)]
        )

    @staticmethod
    def concat(tensors: Iterable[StringTensor]) -> StringTensor:
        """One tensor of all strings in order; views are copied, string bytes are shared."""
        parts: list[StringTensor] = []
        for t in tensors:
            if not isinstance(t, StringTensor):
                raise TypeError(f"concat: expected StringTensor items, got {type(t).__name__}")
            parts.append(t)
        nonempty = [t for t in parts if len(t)]
        if not nonempty:
            return StringTensor._from_encoded([])
        if len(nonempty) == 1:
            return nonempty[0]
        views = bytearray()
        buffers: list[memoryview] = []
        for part in nonempty:
            base = len(buffers)
            if len(part._buffers) > _MAX_LENGTH - base:
                raise ValueError("concat: more than 2^31 - 1 data buffers")
            buffers.extend(part._buffers)
            start = len(views)
            views += part._views
            if base:
                for i in range(len(part)):
                    at = start + 16 * i
                    if int.from_bytes(views[at : at + 4], "little") > _INLINE:
                        index = int.from_bytes(views[at + 8 : at + 12], "little") + base
                        views[at + 8 : at + 12] = index.to_bytes(4, "little")
        return StringTensor._make(memoryview(bytes(views)), buffers)

    # -- access -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._views) // 16

    def _item(self, i: int) -> bytes:
        length, rest = _VIEW.unpack_from(self._views, 16 * i)
        if length <= _INLINE:
            return rest[:length]  # type: ignore[no-any-return]
        _, _, index, offset = _REF.unpack_from(self._views, 16 * i)
        return bytes(self._buffers[index][offset : offset + length])

    def _iter_bytes(self) -> Iterator[bytes]:
        buffers = self._buffers
        for length, rest in _VIEW.iter_unpack(self._views):
            if length <= _INLINE:
                yield rest[:length]
            else:
                _, index, offset = struct.unpack_from("<4sII", rest)
                yield bytes(buffers[index][offset : offset + length])

    def __getitem__(self, key: Any) -> Any:
        n = len(self)
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step == 1:
                count = max(0, stop - start)
                offsets = self._offsets
                return StringTensor._make(
                    self._views[16 * start : 16 * (start + count)],
                    self._buffers,
                    None if offsets is None else offsets[start : start + count + 1],
                    self._payload,
                )
            return self._gather(range(start, stop, step))
        try:
            i = key.__index__()
        except AttributeError:
            raise TypeError(
                f"StringTensor indices must be integers or slices, not {type(key).__name__}"
            ) from None
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"StringTensor index {i} out of range for length {n}")
        return self._item(j).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        for item in self._iter_bytes():
            yield item.decode("utf-8")

    def to_pylist(self) -> list[str]:
        """Every string as a Python str."""
        return [item.decode("utf-8") for item in self._iter_bytes()]

    def _gather(self, indices: Iterable[int]) -> StringTensor:
        views = self._views
        joined = b"".join([views[16 * i : 16 * i + 16] for i in indices])
        return StringTensor._make(memoryview(joined), self._buffers)

    def take(self, indices: Sequence[int] | Any) -> StringTensor:
        """Strings at ``indices`` (0 <= i < len; IndexError otherwise); bytes are shared."""
        kind, values = _values_of(indices, "take")
        if kind is not None:
            if kind not in ("i", "u"):
                raise TypeError("take: indices must be integers (use filter() for a boolean mask)")
            for k, v in enumerate(values):
                if v < 0:
                    raise IndexError(f"take: indices[{k}] = {v} is negative; indices count from 0")
        else:
            for k, v in enumerate(values):
                if not isinstance(v, int) or isinstance(v, bool):
                    raise TypeError(f"take: indices[{k}] must be an int, got {type(v).__name__}")
                if v < 0 or v > 2**63 - 1:
                    raise IndexError(
                        f"take: indices[{k}] = {v!r} is out of range (indices count from 0)"
                    )
        n = len(self)
        for k, v in enumerate(values):
            if v >= n:
                raise IndexError(
                    f"take: indices[{k}] = {v} is out of range for a StringTensor of {n} strings"
                )
        return self._gather(values)

    def filter(self, mask: Sequence[bool] | Any) -> StringTensor:
        """Strings whose mask entry is True (mask of the same length); bytes are shared."""
        kind, values = _values_of(mask, "filter")
        if kind is not None:
            if kind != "b":
                raise TypeError("filter: the mask must be booleans (use take() for indices)")
        else:
            for k, v in enumerate(values):
                if not isinstance(v, bool):
                    raise TypeError(f"filter: mask[{k}] must be a bool, got {type(v).__name__}")
        n = len(self)
        if len(values) != n:
            raise ValueError(
                f"filter: the mask has {len(values)} entries for a StringTensor of {n} strings; "
                "they must be equal"
            )
        return self._gather([i for i, keep in enumerate(values) if keep])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StringTensor):
            return NotImplemented
        return len(self) == len(other) and all(
            a == b for a, b in zip(self._iter_bytes(), other._iter_bytes(), strict=True)
        )

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, StringTensor):
            return NotImplemented
        return not self == other

    def __hash__(self) -> int:  # unhashable like NumPy and pyarrow arrays: == compares contents
        raise TypeError("unhashable type: 'StringTensor'")

    def __repr__(self) -> str:
        return interop.repr_of(self)

    def __reduce__(self) -> tuple[Any, tuple[Any, Any, Any]]:
        return interop.reduce(self)

    # -- layouts --------------------------------------------------------------------------------

    @property
    def nbytes(self) -> int:
        """Bytes referenced: 16 per view, every data buffer in full (shared with slices), and
        the kept offsets."""
        total = len(self._views) + sum(len(b) for b in self._buffers)
        if self._offsets is not None:
            total += len(self._offsets) * self._offsets.itemsize
        return total

    @property
    def is_contiguous(self) -> bool:
        """Whether offsets + payload are kept (offsets_and_payload, to_torch and utf8 exports
        then copy no string bytes)."""
        return self._offsets is not None

    @property
    def views(self) -> Any:
        """The (n, 16) uint8 view buffer (Arrow utf8_view), read-only, no copy."""
        np = _import_numpy("views")
        return _read_only(np, self._views, np.uint8).reshape(len(self), 16)

    @property
    def data_buffers(self) -> list[Any]:
        """The data buffers the views point into, as read-only uint8 arrays (no copy)."""
        np = _import_numpy("data_buffers")
        return [_read_only(np, b, np.uint8) for b in self._buffers]

    def _payload_size(self) -> int:
        if self._offsets is not None:
            return self._offsets[-1] - self._offsets[0]
        return sum(_VIEW.unpack_from(self._views, 16 * i)[0] for i in range(len(self)))

    def _contiguous(self, itemsize: int | None = None) -> tuple[memoryview, memoryview]:
        """(offsets starting at 0, payload), native: StringTensor::contiguous."""
        total = self._payload_size()
        if itemsize is None:
            itemsize = 4 if total <= _MAX_U32_PAYLOAD else 8
        if itemsize == 4 and total > _MAX_U32_PAYLOAD:
            raise ValueError(
                f"the payload of {total} bytes does not fit 32-bit offsets; use 64-bit offsets "
                "(large_utf8)"
            )
        fmt = "I" if itemsize == 4 else "Q"
        kept, payload = self._offsets, self._payload
        if kept is not None and payload is not None:
            first = kept[0]
            body = payload[first : first + total]
            if kept.itemsize == itemsize and first == 0:
                return kept, body
            return memoryview(array(fmt, [v - first for v in kept.tolist()])), body
        items = list(self._iter_bytes())
        offsets = array(fmt, itertools.accumulate(map(len, items), initial=0))
        return memoryview(offsets), memoryview(b"".join(items))

    def offsets_and_payload(self) -> tuple[Any, Any]:
        """(offsets, payload) as read-only NumPy arrays: n + 1 offsets starting at 0 (uint32,
        uint64 past 4 GiB - 1) and the UTF-8 bytes. No copy when is_contiguous (a slice rebases
        its offsets); otherwise built in one pass."""
        np = _import_numpy("offsets_and_payload")
        offsets, payload = self._contiguous()
        dtype = np.uint32 if offsets.itemsize == 4 else np.uint64
        return _read_only(np, offsets, dtype), _read_only(np, payload, np.uint8)

    def compact(self) -> StringTensor:
        """A copy holding exactly these strings in one payload, with both layouts."""
        return StringTensor._from_encoded(list(self._iter_bytes()))

    # -- Arrow ------------------------------------------------------------------------------------

    def _arrow_array(self, fmt: str | None) -> Any:
        pa = _import_pyarrow("__arrow_c_array__")
        layout = _BINARY.get(fmt or "", fmt)
        binary = fmt in _BINARY
        if layout not in _VIEW_TYPES:
            layout, binary = "vu", False  # unsupported requests get the default (PyCapsule rule)
        n = len(self)
        if layout == "vu":
            buffers = [None, pa.py_buffer(self._views)]
            buffers += [pa.py_buffer(b) for b in self._buffers]
            arrow_type = pa.binary_view() if binary else pa.string_view()
            return pa.Array.from_buffers(arrow_type, n, buffers, null_count=0)
        itemsize = 4 if layout == "u" else 8
        limit = 2**31 - 1 if itemsize == 4 else 2**63 - 1
        kept, payload = self._offsets, self._payload
        if (
            kept is not None
            and payload is not None
            and kept.itemsize == itemsize
            and kept[-1] <= limit
        ):
            offsets, data = kept, payload
        else:
            offsets, data = self._contiguous(itemsize)
            if offsets[-1] > limit:
                raise ValueError(
                    "utf8 (int32 offsets) addresses at most 2^31 - 1 payload bytes; this tensor "
                    f"holds {offsets[-1]}: request large_utf8 instead"
                )
        if itemsize == 4:
            arrow_type = pa.binary() if binary else pa.string()
        else:
            arrow_type = pa.large_binary() if binary else pa.large_string()
        return pa.Array.from_buffers(
            arrow_type, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)], null_count=0
        )

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """Arrow PyCapsule export: utf8_view by default; utf8/large_utf8 (or the binary types)
        when requested. Zero-copy where the layout allows."""
        return self._arrow_array(_requested_format(requested_schema)).__arrow_c_array__()  # type: ignore[no-any-return]

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Arrow PyCapsule stream of one array (same types as __arrow_c_array__)."""
        pa = _import_pyarrow("__arrow_c_stream__")
        array = self._arrow_array(_requested_format(requested_schema))
        return pa.chunked_array([array], type=array.type).__arrow_c_stream__()

    # -- other libraries (shared with the native backend) -------------------------------------

    def to_arrow(self, type: object = None) -> Any:
        """A pyarrow Array: utf8_view (default), 'utf8' or 'large_utf8'; zero-copy where the
        layout allows."""
        return interop.to_arrow(self, type)

    def to_polars(self, name: str = "") -> Any:
        """A polars Series (String) sharing the views and data buffers."""
        return interop.to_polars(self, name)

    def to_numpy(self) -> Any:
        """A NumPy array of str (StringDType; object on NumPy < 2). Copies."""
        return interop.to_numpy(self)

    def to_torch(self, device: object = "cpu") -> tuple[Any, Any]:
        """(offsets, payload) torch tensors (uint32/uint64 and uint8) through DLPack; on CPU
        they share memory, device='cuda' moves each buffer in one transfer."""
        return interop.to_torch(self, device)

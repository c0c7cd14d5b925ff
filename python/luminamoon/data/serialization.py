"""Writing curated documents: Parquet (ZSTD), Arrow IPC files, NDJSON, and sharded output files.

Shared by both backends. Parquet and Arrow IPC go through pyarrow's C++ writers; a StringTensor
reaches them through the Arrow C Data Interface (``__arrow_c_array__``), so the text column never
becomes one Python object per document. NDJSON has no Arrow writer: rows are encoded by the
standard ``json`` module (one object per row), the format whose bytes ``docs/serialization.md``
pins.

Contract notes:

* Every column is one Arrow type. Sequences of DataValues (None, bool, int, float, str, bytes,
  list, dict) are typed by :func:`infer_data_type`: null fits anywhere, int and float make float64,
  anything else mixed is a ``TypeError`` naming the column and the row.
* The schema carries the ``huggingface`` metadata key (features of every column it can describe),
  so ``datasets.load_dataset("parquet", ...)`` gives ``Value('string')`` for the text column and
  an ``Image`` feature for image columns.
* :class:`ShardedWriter` writes each file under a temporary name in the output directory, fsyncs
  it and renames it into place only when complete: a crash leaves complete files and temporary
  names, never a partial file under a final name.
"""

from __future__ import annotations

import base64
import importlib
import io
import json
import math
import os
import string
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ._ffi import impl
from .errors import ConfigError

__all__ = [
    "FORMATS",
    "ShardedWriter",
    "hf_features",
    "hf_image",
    "infer_data_type",
    "serialize_table_to_bytes",
    "serialize_to_ipc",
    "serialize_to_jsonl",
    "serialize_to_parquet",
    "to_arrow_table",
]

FORMATS = ("parquet", "ipc", "jsonl")
EXTENSIONS = {"parquet": "parquet", "ipc": "arrow", "jsonl": "jsonl"}
TEXT_TYPES = ("string", "large_string", "string_view")
_TEXT_TYPE_ALIASES = {
    "string": "string",
    "utf8": "string",
    "large_string": "large_string",
    "large_utf8": "large_string",
    "string_view": "string_view",
    "utf8_view": "string_view",
}
PARQUET_COMPRESSIONS = ("zstd", "snappy", "gzip", "brotli", "lz4", "none")
IPC_COMPRESSIONS = ("zstd", "lz4", "none")
# Options that shape the table (to_arrow_table) vs options of one format's writer.
TABLE_OPTIONS = ("text_column", "text_type", "image_columns", "schema", "hf_metadata")
WRITER_OPTIONS = {
    "parquet": ("compression", "compression_level", "row_group_size"),
    "ipc": ("compression", "compression_level", "row_group_size"),
    "jsonl": (),
}
DATA_VALUE_KINDS = "None, bool, int, float, str, bytes, list or dict"
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def _pyarrow() -> Any:
    # Imported on first use: pyarrow is an optional dependency of the package.
    try:
        return importlib.import_module("pyarrow")
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "serialization needs pyarrow: pip install 'luminamoon-data[arrow]'"
        ) from exc


def _check_choice(what: str, value: object, choices: Sequence[str]) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    if value in choices:
        return value
    hint = impl.did_you_mean(value, choices)
    suffix = f"; did you mean '{hint}'?" if hint else f"; choose one of: {', '.join(choices)}"
    raise ConfigError(f"unknown {what} '{value}'{suffix}")


def _reject_unknown(options: Mapping[str, object], known: Sequence[str], where: str) -> None:
    for name in options:
        if name not in known:
            hint = impl.did_you_mean(name, known)
            suffix = f"; did you mean '{hint}'?" if hint else f"; options: {', '.join(known)}"
            raise ConfigError(f"{where} got an unknown option '{name}'{suffix}")


def _text_arrow_type(text_type: str) -> Any:
    pa = _pyarrow()
    name = _check_choice("text_type", text_type, tuple(_TEXT_TYPE_ALIASES))
    canonical = _TEXT_TYPE_ALIASES[name]
    return {"string": pa.string, "large_string": pa.large_string, "string_view": pa.string_view}[
        canonical
    ]()


# =============================================================================================
# DataValue columns: type inference
# =============================================================================================

# A kind is a small tuple: ("null",), ("bool",), ("int",), ("float",), ("str",), ("bytes",),
# ("list", kind) or ("struct", ((key, kind), ...)) with keys in first-seen order.
_Kind = tuple[Any, ...]
_NULL: _Kind = ("null",)
_SCALAR_KINDS: dict[type, _Kind] = {
    type(None): _NULL,
    bool: ("bool",),
    int: ("int",),
    float: ("float",),
    str: ("str",),
    bytes: ("bytes",),
    bytearray: ("bytes",),
    memoryview: ("bytes",),
}
_KIND_NAMES = {
    "null": "None",
    "bool": "bool",
    "int": "int",
    "float": "float",
    "str": "str",
    "bytes": "bytes",
    "list": "list",
    "struct": "dict",
}


class _ConflictError(Exception):
    def __init__(self, path: str, before: _Kind, now: _Kind) -> None:
        super().__init__(path)
        self.path = path
        self.before = before
        self.now = now


def _kind_of(value: object, path: str) -> _Kind:
    scalar = _SCALAR_KINDS.get(type(value))
    if scalar is not None:
        if scalar[0] == "int" and not _INT64_MIN <= value <= _INT64_MAX:  # type: ignore[operator]
            raise OverflowError(f"{path}: {value} does not fit int64")
        return scalar
    if isinstance(value, (list, tuple)):
        inner = _NULL
        for i, item in enumerate(value):
            inner = _merge(inner, _kind_of(item, f"{path}[{i}]"), f"{path}[{i}]")
        return ("list", inner)
    if isinstance(value, Mapping):
        fields: dict[str, _Kind] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{path}: dict keys must be str, got {type(key).__name__}")
            fields[key] = _kind_of(item, f"{path}.{key}")
        return ("struct", tuple(fields.items()))
    raise TypeError(
        f"{path}: a {type(value).__name__} is not a DataValue (expected {DATA_VALUE_KINDS})"
    )


def _merge(a: _Kind, b: _Kind, path: str) -> _Kind:
    if b in (a, _NULL):
        return a
    if a == _NULL:
        return b
    if {a[0], b[0]} == {"int", "float"}:
        return ("float",)
    if a[0] == b[0] == "list":
        return ("list", _merge(a[1], b[1], path + "[]"))
    if a[0] == b[0] == "struct":
        merged = dict(a[1])
        for key, kind in b[1]:
            merged[key] = _merge(merged[key], kind, f"{path}.{key}") if key in merged else kind
        return ("struct", tuple(merged.items()))
    raise _ConflictError(path, a, b)


def _arrow_type_of(kind: _Kind) -> Any:
    pa = _pyarrow()
    tag = kind[0]
    if tag == "list":
        return pa.list_(_arrow_type_of(kind[1]))
    if tag == "struct":
        return pa.struct([pa.field(key, _arrow_type_of(sub)) for key, sub in kind[1]])
    return {
        "null": pa.null,
        "bool": pa.bool_,
        "int": pa.int64,
        "float": pa.float64,
        "str": pa.string,
        "bytes": pa.binary,
    }[tag]()


def _describe(kind: _Kind) -> str:
    return _KIND_NAMES[kind[0]]


def _article(name: str) -> str:
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def infer_data_type(values: Sequence[object], column: str = "column") -> Any:
    """The Arrow type of a column of DataValues.

    None fits any type; int with float gives float64 (ints beyond 2**53 lose precision, as in
    every Arrow and pandas reader); lists and dicts are typed element by element (dicts become
    structs whose fields are the union of the keys, in first-seen order). Raises ``TypeError``
    naming the column and row for a value of another kind or for incompatible kinds, and
    ``OverflowError`` for an int outside int64.
    """
    kinds = {type(v) for v in values}
    if kinds <= _SCALAR_KINDS.keys() and len({_SCALAR_KINDS[k] for k in kinds} - {_NULL}) <= 1:
        # One scalar kind (plus None): no per-row typing needed, except the int64 range check.
        kind = next((_SCALAR_KINDS[k] for k in kinds if _SCALAR_KINDS[k] != _NULL), _NULL)
        if kind[0] == "int":
            for row, value in enumerate(values):
                if value is not None and not _INT64_MIN <= value <= _INT64_MAX:  # type: ignore[operator]
                    raise OverflowError(
                        f"column '{column}', row {row}: {value} does not fit int64 (DataValue "
                        "ints are int64; write it as a str or a float)"
                    )
        return _arrow_type_of(kind)
    kind = _NULL
    first_row: dict[str, int] = {}
    for row, value in enumerate(values):
        try:
            now = _kind_of(value, f"column '{column}', row {row}")
            kind = _merge(kind, now, "")
        except _ConflictError as conflict:
            if conflict.path:
                where = f" at {conflict.path.lstrip('.')}"
                first = ""
            else:
                where = ""
                first = f" (first at row {first_row.get(_describe(conflict.before), 0)})"
            raise TypeError(
                f"column '{column}', row {row}{where}: {_article(_describe(conflict.now))} where "
                f"earlier rows hold {_describe(conflict.before)}{first}; a column holds one type "
                "(None fits anywhere, int and float mix as float)"
            ) from None
        except OverflowError as exc:
            raise OverflowError(
                f"{exc} (DataValue ints are int64; write it as a str or a float)"
            ) from None
        first_row.setdefault(_describe(now), row)
    return _arrow_type_of(kind)


def _is_string_tensor(obj: object) -> bool:
    return type(obj).__name__ == "StringTensor" and hasattr(obj, "__arrow_c_array__")


def _column_array(values: object, column: str) -> Any:
    """One column as a pyarrow Array or ChunkedArray."""
    pa = _pyarrow()
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    if hasattr(values, "__arrow_c_array__"):
        return pa.array(values)
    if hasattr(values, "__arrow_c_stream__"):
        return pa.chunked_array(values)
    if hasattr(values, "__array__") and hasattr(values, "dtype"):  # a NumPy array
        return pa.array(values)
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(
            f"column '{column}' must be a sequence of DataValues, an Arrow array or a "
            f"StringTensor, got {type(values).__name__}"
        )
    arrow_type = infer_data_type(values, column)
    if pa.types.is_binary(arrow_type) or _contains_binary(arrow_type):
        values = _normalise_bytes(values)
    return pa.array(values, type=arrow_type)


def _contains_binary(arrow_type: Any) -> bool:
    pa = _pyarrow()
    if pa.types.is_binary(arrow_type):
        return True
    if pa.types.is_list(arrow_type):
        return _contains_binary(arrow_type.value_type)
    if pa.types.is_struct(arrow_type):
        return any(_contains_binary(arrow_type.field(i).type) for i in range(arrow_type.num_fields))
    return False


def _normalise_bytes(value: Any) -> Any:
    # pyarrow takes bytes and bytearray; a memoryview becomes bytes first.
    if isinstance(value, memoryview):
        return value.tobytes()
    if isinstance(value, (list, tuple)):
        return [_normalise_bytes(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _normalise_bytes(v) for k, v in value.items()}
    return value


# =============================================================================================
# Hugging Face images and schema metadata
# =============================================================================================


def _image_type() -> Any:
    pa = _pyarrow()
    return pa.struct([pa.field("bytes", pa.binary()), pa.field("path", pa.string())])


def hf_image(
    images: Sequence[bytes | bytearray | memoryview | None],
    paths: Sequence[str | None] | None = None,
) -> Any:
    """A Hugging Face image column: a struct array ``{bytes: binary, path: string}``.

    ``images`` holds the encoded image files (PNG, JPEG, ...) or None; ``paths`` the matching
    file names (or None). Written with :func:`to_arrow_table`'s metadata (``image_columns``),
    ``datasets`` decodes the column as an ``Image`` feature.
    """
    pa = _pyarrow()
    if paths is None:
        paths = [None] * len(images)
    if len(paths) != len(images):
        raise ValueError(f"hf_image: {len(images)} images but {len(paths)} paths")
    for i, (data, path) in enumerate(zip(images, paths, strict=True)):
        if data is not None and not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"hf_image: images[{i}] is a {type(data).__name__}, not bytes")
        if path is not None and not isinstance(path, str):
            raise TypeError(f"hf_image: paths[{i}] is a {type(path).__name__}, not str")
    data_array = pa.array(
        [bytes(d) if isinstance(d, memoryview) else d for d in images], type=pa.binary()
    )
    path_array = pa.array(list(paths), type=pa.string())
    return pa.StructArray.from_arrays([data_array, path_array], fields=list(_image_type()))


def _image_column(values: object, column: str) -> Any:
    """An image column from bytes, paths (str), {bytes, path} dicts, None, or an Arrow struct."""
    pa = _pyarrow()
    if isinstance(values, (pa.Array, pa.ChunkedArray)) or hasattr(values, "__arrow_c_array__"):
        array = _column_array(values, column)
        if array.type != _image_type():
            raise TypeError(
                f"image column '{column}' has Arrow type {array.type}; expected "
                "struct<bytes: binary, path: string> (see hf_image)"
            )
        return array
    if not isinstance(values, Sequence) or isinstance(values, (str, bytes)):
        raise TypeError(f"image column '{column}' must be a sequence, got {type(values).__name__}")
    images: list[bytes | bytearray | memoryview | None] = []
    paths: list[str | None] = []
    for row, value in enumerate(values):
        if value is None or isinstance(value, (bytes, bytearray, memoryview)):
            images.append(value)
            paths.append(None)
        elif isinstance(value, str):
            images.append(None)
            paths.append(value)
        elif isinstance(value, Mapping) and set(value) <= {"bytes", "path"}:
            images.append(value.get("bytes"))
            paths.append(value.get("path"))
        else:
            raise TypeError(
                f"image column '{column}', row {row}: expected bytes, a path (str), a dict "
                f"with 'bytes'/'path' or None, got {type(value).__name__}"
            )
    try:
        return hf_image(images, paths)
    except TypeError as exc:
        raise TypeError(f"image column '{column}': {exc}") from None


def _hf_feature(arrow_type: Any) -> dict[str, Any] | None:
    """The ``datasets`` feature of a column, or None where ``datasets`` infers it itself."""
    pa = _pyarrow()
    if arrow_type == _image_type():
        return {"_type": "Image"}
    dtype = {
        pa.null(): "null",
        pa.bool_(): "bool",
        pa.int64(): "int64",
        pa.float64(): "float64",
        pa.string(): "string",
        pa.large_string(): "large_string",
        pa.string_view(): "string_view",
        pa.binary(): "binary",
        pa.large_binary(): "large_binary",
    }.get(arrow_type)
    if dtype is None:
        return None  # nested types: datasets derives the same feature from the Arrow type
    return {"dtype": dtype, "_type": "Value"}


def hf_features(schema: Any, image_columns: Iterable[str] = ()) -> dict[str, Any]:
    """The ``features`` mapping written in the ``huggingface`` schema metadata."""
    images = set(image_columns)
    out: dict[str, Any] = {}
    for field in schema:
        feature = {"_type": "Image"} if field.name in images else _hf_feature(field.type)
        if feature is not None:
            out[field.name] = feature
    return out


# =============================================================================================
# Tables
# =============================================================================================


def _columns_of(
    data: object, text_column: str, text_type: str, *, export: bool = True
) -> dict[str, object] | Any:
    """A dict of columns, or a pyarrow Table when ``data`` already is one."""
    pa = _pyarrow()
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if _is_string_tensor(data) or isinstance(data, (pa.Array, pa.ChunkedArray)):
        return {text_column: data}
    if isinstance(data, Mapping):
        return dict(data)
    if hasattr(data, "texts") and hasattr(data, "fields"):
        # A PipelineResult or a reader's DocumentBatch: the texts, then the extra fields.
        fields = data.fields
        if text_column in fields:
            raise ValueError(
                f"the extra field '{text_column}' has the text column's name; pass another "
                "text_column"
            )
        exported = _exported_result(data, text_column, text_type) if export else None
        if exported is not None:
            return exported
        return {text_column: data.texts, **dict(fields)}
    raise TypeError(
        "expected a PipelineResult, a DocumentBatch, a StringTensor, a pyarrow Table or "
        f"RecordBatch, or a mapping of column name to column, got {type(data).__name__}"
    )


class _CapsuleStream:
    """Hands an ``arrow_array_stream`` capsule to pyarrow's PyCapsule-interface import."""

    def __init__(self, capsule: object) -> None:
        self._capsule = capsule

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self._capsule


def _exported_result(data: object, text_column: str, text_type: str) -> Any:
    """A PipelineResult's own Arrow export (docs/pipeline.md "Arrow export"), or None.

    The result types its reader fields natively, without a Python object per document; fields
    passed to ``process(fields=...)`` as lists go through pyarrow's inference, and when that
    fails the caller types the columns itself (a clear error naming the column and row).
    """
    export = getattr(data, "export_arrow", None)
    if export is None:
        return None
    pa = _pyarrow()
    try:
        capsule = export(text_column=text_column, text_type=_TEXT_TYPE_ALIASES[text_type])
        return pa.RecordBatchReader.from_stream(_CapsuleStream(capsule)).read_all()
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return None


def to_arrow_table(
    data: object,
    *,
    text_column: str = "text",
    text_type: str = "string",
    image_columns: Iterable[str] = (),
    schema: Any = None,
    hf_metadata: bool = True,
) -> Any:
    """``data`` as a pyarrow Table whose text column has ``text_type``.

    ``data``: a FusedPipeline result or a reader batch (``texts`` + ``fields``), a StringTensor
    (one column named ``text_column``), a pyarrow Table or RecordBatch, or a mapping of column
    name to column (a StringTensor, an Arrow array, a NumPy array or a sequence of DataValues).
    ``text_type``: ``string`` (default, what ``datasets`` reads as ``Value('string')``),
    ``large_string`` or ``string_view``; it applies to ``text_column`` when present.
    ``image_columns``: columns converted to the Hugging Face image struct (see :func:`hf_image`).
    ``schema``: a pyarrow Schema (or a mapping of column name to Arrow type) the columns are cast
    to. ``hf_metadata``: write the ``huggingface`` schema metadata (features).
    """
    pa = _pyarrow()
    target_text = _text_arrow_type(text_type)
    images = list(image_columns)
    columns = _columns_of(data, text_column, text_type, export=not images)
    if isinstance(columns, pa.Table):
        table = columns
        for name in images:
            if name not in table.column_names:
                _raise_missing_column(name, table.column_names, "image_columns")
    else:
        for name in images:
            if name not in columns:
                _raise_missing_column(name, list(columns), "image_columns")
        arrays: dict[str, Any] = {}
        lengths: dict[str, int] = {}
        for name, values in columns.items():
            if not isinstance(name, str):
                raise TypeError(f"column names must be str, got {type(name).__name__}")
            if name in images:
                array = _image_column(values, name)
            elif name == text_column:
                array = _text_array(values, target_text, name)
            else:
                array = _column_array(values, name)
            arrays[name] = array
            lengths[name] = len(array)
        if len(set(lengths.values())) > 1:
            raise ValueError(
                "columns have different lengths: "
                + ", ".join(f"{name}={n}" for name, n in lengths.items())
            )
        table = pa.table(arrays) if arrays else pa.table({})
    if text_column in table.column_names:
        index = table.column_names.index(text_column)
        column = table.column(index)
        if column.type != target_text:
            table = table.set_column(
                index, pa.field(text_column, target_text), column.cast(target_text)
            )
    if schema is not None:
        table = _cast_to(table, schema)
    if hf_metadata:
        features = hf_features(table.schema, images)
        metadata = dict(table.schema.metadata or {})
        metadata[b"huggingface"] = json.dumps(
            {"info": {"features": features}}, separators=(",", ":")
        ).encode()
        table = table.replace_schema_metadata(metadata)
    return table


def _raise_missing_column(name: str, known: Sequence[str], option: str) -> None:
    hint = impl.did_you_mean(name, known)
    suffix = f"; did you mean '{hint}'?" if hint else f"; columns: {', '.join(known)}"
    raise ConfigError(f"{option}: no column '{name}'{suffix}")


def _text_array(values: object, target: Any, column: str) -> Any:
    pa = _pyarrow()
    if _is_string_tensor(values):
        # Through the C Data Interface: the tensor exports the requested layout itself.
        array = pa.array(values, type=target)
    elif isinstance(values, (pa.Array, pa.ChunkedArray)) or hasattr(values, "__arrow_c_array__"):
        array = _column_array(values, column)
    elif isinstance(values, Sequence) and not isinstance(values, (str, bytes)):
        array = _column_array(values, column)
        if pa.types.is_null(array.type):
            array = array.cast(target)
    else:
        raise TypeError(
            f"text column '{column}' must be a StringTensor, an Arrow array or a sequence of "
            f"str, got {type(values).__name__}"
        )
    if not (
        pa.types.is_string(array.type)
        or pa.types.is_large_string(array.type)
        or pa.types.is_string_view(array.type)
    ):
        raise TypeError(f"text column '{column}' holds {array.type}, not strings")
    return array


def _cast_to(table: Any, schema: Any) -> Any:
    pa = _pyarrow()
    targets = (
        {field.name: field.type for field in schema}
        if isinstance(schema, pa.Schema)
        else dict(schema)
    )
    for name, arrow_type in targets.items():
        if name not in table.column_names:
            _raise_missing_column(name, table.column_names, "schema")
        index = table.column_names.index(name)
        column = table.column(index)
        if column.type == arrow_type:
            continue
        try:
            cast = column.cast(arrow_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise TypeError(
                f"column '{name}' of type {column.type} cannot be cast to {arrow_type}: {exc}"
            ) from None
        table = table.set_column(index, pa.field(name, arrow_type), cast)
    return table


# =============================================================================================
# Writers of one file
# =============================================================================================


def _split_options(
    format: str, options: Mapping[str, object], where: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    known = TABLE_OPTIONS + WRITER_OPTIONS[format]
    _reject_unknown(options, known, where)
    table_options = {k: v for k, v in options.items() if k in TABLE_OPTIONS}
    writer_options = {k: v for k, v in options.items() if k not in TABLE_OPTIONS}
    return table_options, writer_options


def _positive_int(name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


class _FileWriter:
    """One open output file of one format; ``write`` appends a table, ``close`` finishes it."""

    def __init__(self, sink: IO[bytes], format: str, schema: Any, options: Mapping[str, Any]):
        pa = _pyarrow()
        self.format = format
        self.sink = sink
        self.schema = schema
        self._writer: Any = None
        if format == "parquet":
            pq = importlib.import_module("pyarrow.parquet")
            compression = _check_choice(
                "parquet compression", options.get("compression", "zstd"), PARQUET_COMPRESSIONS
            )
            level = options.get("compression_level")
            if level is None and compression == "zstd":
                level = 3
            if level is not None and compression in ("snappy", "lz4", "none"):
                raise ValueError(f"parquet compression '{compression}' takes no compression_level")
            self.row_group_size = _positive_int(
                "row_group_size", options.get("row_group_size", 65536)
            )
            text_columns = [
                f.name
                for f in schema
                if pa.types.is_string(f.type)
                or pa.types.is_large_string(f.type)
                or pa.types.is_string_view(f.type)
            ]
            self._writer = pq.ParquetWriter(
                sink,
                schema,
                compression=compression,
                compression_level=level,
                # Deduplicated documents do not repeat: a dictionary only costs time there.
                use_dictionary=[f.name for f in schema if f.name not in text_columns],
            )
        elif format == "ipc":
            compression = _check_choice(
                "IPC compression", options.get("compression", "none"), IPC_COMPRESSIONS
            )
            level = options.get("compression_level")
            codec = None
            if compression != "none":
                codec = pa.Codec(compression, compression_level=level)
            self.row_group_size = _positive_int(
                "row_group_size", options.get("row_group_size", 65536)
            )
            self._writer = pa.ipc.new_file(
                sink, schema, options=pa.ipc.IpcWriteOptions(compression=codec)
            )

    def write(self, table: Any) -> None:
        if table.schema != self.schema:
            table = _conform(table, self.schema)
        if self.format == "parquet":
            self._writer.write_table(table, row_group_size=self.row_group_size)
        elif self.format == "ipc":
            self._writer.write_table(table, max_chunksize=self.row_group_size)
        else:
            self.sink.write(encode_jsonl(table))

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


def _conform(table: Any, schema: Any) -> Any:
    """``table`` cast to the schema of the file it is appended to, or a clear error."""
    pa = _pyarrow()
    if table.column_names != schema.names:
        raise ValueError(
            f"a batch with columns {table.column_names} cannot be appended to a file with "
            f"columns {schema.names}"
        )
    arrays = []
    for field, column in zip(schema, table.columns, strict=True):
        if column.type != field.type:
            if not pa.types.is_null(column.type):
                raise TypeError(
                    f"column '{field.name}' is {column.type} in this batch but {field.type} in "
                    "the file being written; pass schema= (or ShardedWriter(schema=...)) to fix "
                    "the column types"
                )
            arrays.append(column.cast(field.type))
        else:
            arrays.append(column)
    return pa.Table.from_arrays(arrays, schema=schema)


def _write_one(data: object, sink: IO[bytes], format: str, options: Mapping[str, Any]) -> int:
    table_options, writer_options = _split_options(format, options, f"serialize_to_{format}")
    table = to_arrow_table(data, **table_options)
    writer = _FileWriter(sink, format, table.schema, writer_options)
    try:
        writer.write(table)
    finally:
        writer.close()
    return int(table.num_rows)


def _write_path(data: object, path: str | os.PathLike[str], format: str, options: Any) -> int:
    with open(path, "wb") as sink:
        return _write_one(data, sink, format, options)


def serialize_to_parquet(
    data: object,
    path: str | os.PathLike[str],
    *,
    compression: str = "zstd",
    compression_level: int | None = None,
    row_group_size: int = 65536,
    text_type: str = "string",
    **table_options: Any,
) -> int:
    """Write ``data`` (see :func:`to_arrow_table`) as one Parquet file; returns the rows written.

    ZSTD by default (``compression``: zstd, snappy, gzip, brotli, lz4 or none), at level 3 when
    ``compression_level`` is None (other codecs: their own default); row groups of at most
    ``row_group_size`` rows.
    """
    options = {
        "compression": compression,
        "compression_level": compression_level,
        "row_group_size": row_group_size,
        "text_type": text_type,
        **table_options,
    }
    return _write_path(data, path, "parquet", options)


def serialize_to_ipc(
    data: object,
    path: str | os.PathLike[str],
    *,
    compression: str = "none",
    compression_level: int | None = None,
    row_group_size: int = 65536,
    text_type: str = "string",
    **table_options: Any,
) -> int:
    """Write ``data`` as one Arrow IPC *file* (``ARROW1`` magic, random access, memory-mappable).

    Uncompressed by default so the file can be memory-mapped; ``compression="zstd"`` or ``"lz4"``
    compresses the buffers. Record batches hold at most ``row_group_size`` rows.
    """
    options = {
        "compression": compression,
        "compression_level": compression_level,
        "row_group_size": row_group_size,
        "text_type": text_type,
        **table_options,
    }
    return _write_path(data, path, "ipc", options)


def serialize_to_jsonl(
    data: object, path: str | os.PathLike[str], *, text_type: str = "string", **table_options: Any
) -> int:
    """Write ``data`` as NDJSON: one compact JSON object per row (see :func:`encode_jsonl`)."""
    return _write_path(data, path, "jsonl", {"text_type": text_type, **table_options})


def serialize_table_to_bytes(data: object, format: str = "parquet", **options: Any) -> bytes:
    """The bytes :func:`serialize_to_parquet` / ``_ipc`` / ``_jsonl`` would write to a file."""
    format = _check_choice("format", format, FORMATS)
    defaults: dict[str, Any] = {
        "parquet": {"compression": "zstd", "row_group_size": 65536},
        "ipc": {"compression": "none", "row_group_size": 65536},
        "jsonl": {},
    }[format]
    sink = io.BytesIO()
    _write_one(data, sink, format, {**defaults, **options})
    return sink.getvalue()


def _json_default(value: object) -> object:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"{type(value).__name__} cannot be written as JSON")


def _check_finite(value: object, column: str, row: int) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(
            f"column '{column}', row {row}: {value} cannot be written as JSON (NDJSON has no "
            "NaN or infinity); use Parquet or Arrow IPC, or replace it"
        )
    if isinstance(value, list):
        for item in value:
            _check_finite(item, column, row)
    elif isinstance(value, dict):
        for item in value.values():
            _check_finite(item, column, row)


def encode_jsonl(table: Any) -> bytes:
    """NDJSON bytes of a table: per row ``{"col": value, ...}`` in column order, then ``\\n``.

    Compact separators, UTF-8 (no ``\\u`` escapes except for control characters, quote and
    backslash), floats as Python's shortest repr, bytes as standard base64 strings with padding,
    structs as objects, lists as arrays, null as ``null``. NaN and infinities are an error.
    """
    names = table.column_names
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    lines: list[str] = []
    encoder = json.JSONEncoder(
        ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_json_default
    )
    for row in range(table.num_rows):
        record = {name: column[row] for name, column in zip(names, columns, strict=True)}
        try:
            lines.append(encoder.encode(record))
        except ValueError:
            for name, column in zip(names, columns, strict=True):
                _check_finite(column[row], name, row)
            raise
    if not lines:
        return b""
    return ("\n".join(lines) + "\n").encode("utf-8")


# =============================================================================================
# Sharded output
# =============================================================================================


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _check_template(template: str, extension: str) -> None:
    names = [field for _, field, _, _ in string.Formatter().parse(template) if field is not None]
    for name in names:
        if name not in ("shard", "ext"):
            hint = impl.did_you_mean(name, ("shard", "ext"))
            suffix = f"; did you mean '{{{hint}}}'?" if hint else "; use {shard} and {ext}"
            raise ConfigError(f"template '{template}' has an unknown field '{{{name}}}'{suffix}")
    if "shard" not in names:
        raise ConfigError(f"template '{template}' must contain {{shard}} (e.g. '{{shard:05d}}')")
    first = template.format(shard=0, ext=extension)
    if template.format(shard=1, ext=extension) == first:
        raise ConfigError(f"template '{template}' gives the same name to every shard")
    if "/" in first or first in ("", ".", "..") or first.startswith("."):
        raise ConfigError(
            f"template '{template}' must name a plain file in the output directory (no '/', "
            "not hidden), got '{first}'"
        )


class ShardedWriter:
    """Output files rotated by rows or bytes, each renamed into place only when complete.

    ``write(data)`` appends one batch (anything :func:`to_arrow_table` takes) to the current
    file; when the file has reached ``max_rows`` rows or ``max_bytes`` bytes after that batch, it
    is finished (footer written, fsynced, renamed from its temporary name ``.NAME.partial`` in the
    same directory, directory fsynced) and ``write`` returns its final path. A file therefore
    holds whole batches, never part of one: rotation depends only on the batches written, so a
    job that resumes after the last complete file rewrites the next files byte for byte.
    ``finish()`` completes the last, partial file. ``files`` lists the completed files.

    ``format``: parquet, ipc or jsonl. ``template``: ``{shard}`` (the file's index, from
    ``start_shard``) and ``{ext}`` (parquet, arrow, jsonl). Other keyword options are those of
    :func:`to_arrow_table` and of the format's writer (``compression``, ``compression_level``,
    ``row_group_size``). Byte sizes are measured on the file as written so far (for Parquet: the
    row groups flushed, the footer not yet counted).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        format: str = "parquet",
        template: str = "{shard:05d}.{ext}",
        max_rows: int | None = None,
        max_bytes: int | None = None,
        start_shard: int = 0,
        **format_options: Any,
    ) -> None:
        self.format = _check_choice("format", format, FORMATS)
        self.extension = EXTENSIONS[self.format]
        if not isinstance(template, str):
            raise TypeError(f"template must be a str, got {type(template).__name__}")
        _check_template(template, self.extension)
        self.template = template
        self.max_rows = None if max_rows is None else _positive_int("max_rows", max_rows)
        self.max_bytes = None if max_bytes is None else _positive_int("max_bytes", max_bytes)
        if not isinstance(start_shard, int) or isinstance(start_shard, bool) or start_shard < 0:
            raise ValueError(f"start_shard must be an int >= 0, got {start_shard!r}")
        self._table_options, self._writer_options = _split_options(
            self.format, format_options, "ShardedWriter"
        )
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._next_shard = start_shard
        self._files: list[str] = []
        self._sink: IO[bytes] | None = None
        self._writer: _FileWriter | None = None
        self._rows = 0
        self._final: Path | None = None
        self._temp: Path | None = None

    @property
    def files(self) -> list[str]:
        """Paths of the files completed so far, in order."""
        return list(self._files)

    @property
    def next_shard(self) -> int:
        """The index the next file will get (the current one's, while a file is open)."""
        return self._next_shard

    @property
    def rows_in_current_file(self) -> int:
        return self._rows

    def path_of(self, shard: int) -> Path:
        return self.directory / self.template.format(shard=shard, ext=self.extension)

    def temp_path_of(self, shard: int) -> Path:
        return self.directory / f".{self.path_of(shard).name}.partial"

    def write(self, data: object) -> str | None:
        """Append one batch; returns the path of the file this batch completed, else None."""
        table = to_arrow_table(data, **self._table_options)
        if table.num_rows == 0:
            return None
        if self._writer is None:
            self._open(table.schema)
        assert self._writer is not None
        self._writer.write(table)
        self._rows += int(table.num_rows)
        if (self.max_rows is not None and self._rows >= self.max_rows) or (
            self.max_bytes is not None and self._position() >= self.max_bytes
        ):
            return self._complete()
        return None

    def finish(self) -> str | None:
        """Complete the current file, if one holds rows; returns its path."""
        if self._writer is None:
            return None
        return self._complete()

    def abort(self) -> None:
        """Close and delete the current unfinished file (its temporary name)."""
        if self._sink is not None:
            try:
                if self._writer is not None:
                    self._writer.close()
            finally:
                self._sink.close()
            if self._temp is not None and self._temp.exists():
                self._temp.unlink()
        self._reset()

    def _position(self) -> int:
        assert self._sink is not None
        return self._sink.tell()

    def _open(self, schema: Any) -> None:
        self._final = self.path_of(self._next_shard)
        self._temp = self.temp_path_of(self._next_shard)
        self._sink = open(self._temp, "wb")  # noqa: SIM115 - closed in _complete/abort
        try:
            self._writer = _FileWriter(self._sink, self.format, schema, self._writer_options)
        except BaseException:
            self._sink.close()
            self._temp.unlink()
            raise

    def _complete(self) -> str:
        assert self._writer is not None
        assert self._sink is not None
        assert self._final is not None
        assert self._temp is not None
        self._writer.close()
        self._sink.flush()
        os.fsync(self._sink.fileno())
        self._sink.close()
        # Rename only a complete, durable file; then make the rename itself durable.
        os.replace(self._temp, self._final)
        _fsync_directory(self.directory)
        final = str(self._final)
        self._files.append(final)
        self._next_shard += 1
        self._reset()
        return final

    def _reset(self) -> None:
        self._sink = None
        self._writer = None
        self._rows = 0
        self._final = None
        self._temp = None

    def __enter__(self) -> ShardedWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.finish()
        else:
            self.abort()

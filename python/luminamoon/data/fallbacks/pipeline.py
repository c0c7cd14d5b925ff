"""Pure-Python PipelineEngine: the fallback components chained in the FusedPipeline's order.

The reference for the native engine (src/pipeline/): same stages, same rules, same counters,
byte-identical texts. docs/pipeline.md is the contract.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import ConfigError
from ._arrow import _import_pyarrow, is_arrow_object, iter_arrow_values
from .coordinate import StreamCoordinate
from .readers import DocumentBatch
from .string_tensor import StringTensor
from .suggest import did_you_mean

__all__ = ["PipelineEngine", "PipelineRejection", "PipelineResult"]

_STAGES = ("cleaner", "language", "quality", "exact_dedup", "near_dedup", "pii")
_PII_CATEGORIES = ("EMAIL", "IP_ADDRESS", "API_KEY", "CREDIT_CARD")


class PipelineRejection:
    """Why the pipeline dropped a document: the stage, its rule, and the measured value and
    threshold where the rule has them."""

    __slots__ = ("_rule", "_stage", "_threshold", "_value")

    def __init__(
        self, stage: str, rule: str, value: float | None = None, threshold: float | None = None
    ) -> None:
        self._stage = stage
        self._rule = rule
        self._value = value
        self._threshold = threshold

    @property
    def stage(self) -> str:
        return self._stage

    @property
    def rule(self) -> str:
        return self._rule

    @property
    def value(self) -> float | None:
        return self._value

    @property
    def threshold(self) -> float | None:
        return self._threshold

    def _key(self) -> tuple[str, str, float | None, float | None]:
        return (self._stage, self._rule, self._value, self._threshold)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PipelineRejection):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"PipelineRejection(stage={self._stage!r}, rule={self._rule!r}, "
            f"value={self._value!r}, threshold={self._threshold!r})"
        )


class PipelineResult:
    """One batch after the pipeline: the kept texts, the keep mask, why each other document was
    dropped, the kept documents' fields and coordinates, and this batch's counters."""

    __slots__ = (
        "_coordinates",
        "_counters",
        "_dropped_by",
        "_end",
        "_fields",
        "_reader_fields",
        "_reasons",
        "_texts",
    )

    def __init__(
        self,
        *,
        texts: StringTensor,
        dropped_by: np.ndarray[Any, Any],
        reasons: list[PipelineRejection | None],
        fields: dict[str, list[object]],
        coordinates: list[StreamCoordinate] | None,
        end: StreamCoordinate | None,
        counters: dict[str, dict[str, int]],
        reader_fields: frozenset[str] = frozenset(),
    ) -> None:
        self._reader_fields = reader_fields
        self._texts = texts
        self._dropped_by = dropped_by
        self._reasons = reasons
        self._fields = fields
        self._coordinates = coordinates
        self._end = end
        self._counters = counters

    @property
    def texts(self) -> StringTensor:
        return self._texts

    @property
    def keep(self) -> np.ndarray[Any, Any]:
        keep: np.ndarray[Any, Any] = self._dropped_by == 0
        return keep

    @property
    def indices(self) -> np.ndarray[Any, Any]:
        return np.flatnonzero(self._dropped_by == 0).astype(np.int64)

    @property
    def dropped_by(self) -> np.ndarray[Any, Any]:
        return self._dropped_by

    @property
    def reasons(self) -> list[PipelineRejection | None]:
        return list(self._reasons)

    @property
    def fields(self) -> dict[str, list[object]]:
        return {k: list(v) for k, v in self._fields.items()}

    @property
    def coordinates(self) -> list[StreamCoordinate] | None:
        return None if self._coordinates is None else list(self._coordinates)

    @property
    def end(self) -> StreamCoordinate | None:
        return self._end

    @property
    def counters(self) -> dict[str, dict[str, int]]:
        return {k: dict(v) for k, v in self._counters.items()}

    @property
    def total(self) -> int:
        """Documents in the input batch."""
        return len(self._dropped_by)

    def __len__(self) -> int:
        return len(self._texts)

    def __repr__(self) -> str:
        return f"PipelineResult(kept={len(self)}, total={self.total})"

    def export_arrow(self, text_column: str = "text", text_type: str = "string") -> Any:
        """The kept documents as one Arrow record batch (text column, then the fields), an
        'arrow_array_stream' PyCapsule; field types follow docs/pipeline.md."""
        pa = _import_pyarrow()
        types = {"string": pa.string(), "large_string": pa.large_string()}
        if hasattr(pa, "string_view"):
            types["string_view"] = pa.string_view()
        if text_type not in types:
            best = did_you_mean(text_type, ["string", "large_string", "string_view"])
            hint = (
                f"; did you mean '{best}'?"
                if best
                else "; valid: string, large_string, string_view"
            )
            raise ConfigError(f"PipelineResult.export_arrow: unknown text_type '{text_type}'{hint}")
        names = [text_column]
        arrays = [pa.array(list(self._texts), type=types[text_type])]
        for name, values in self._fields.items():
            names.append(name)
            if name in self._reader_fields:
                arrays.append(_typed_field_array(pa, values))
            else:
                arrays.append(pa.array(values))
        table = pa.Table.from_arrays(arrays, names=names)
        return table.__arrow_c_stream__()

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> Any:
        """Arrow PyCapsule stream interface: export_arrow() with its defaults."""
        return self.export_arrow()


def _field_type(values: Sequence[object]) -> str:
    """The Arrow type of a reader field column (arrow_columns.h has the same rules)."""
    kinds = set()
    any_negative = any_big = False
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool):
            kinds.add("bool")
        elif isinstance(v, int):
            kinds.add("int")
            any_negative = any_negative or v < 0
            any_big = any_big or v > 2**63 - 1
        elif isinstance(v, float):
            kinds.add("double")
        elif isinstance(v, str):
            kinds.add("string")
        else:
            kinds.add("other")
    groups = {"int": "number", "double": "number"}
    families = {groups.get(k, k) for k in kinds}
    if not families:
        return "null"
    if len(families) > 1 or "other" in families:
        return "string"
    (family,) = families
    if family in ("bool", "string"):
        return family
    if "double" in kinds:
        return "double"
    if any_big:
        return "double" if any_negative else "uint64"
    return "int64"


def _field_text(value: object) -> str:
    """A value of a mixed column as its string: str as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def _typed_field_array(pa: Any, values: Sequence[object]) -> Any:
    kind = _field_type(values)
    if kind == "null":
        return pa.nulls(len(values))
    if kind == "string":
        return pa.array([None if v is None else _field_text(v) for v in values], type=pa.string())
    arrow_type = {
        "bool": pa.bool_(),
        "int64": pa.int64(),
        "uint64": pa.uint64(),
        "double": pa.float64(),
    }[kind]
    if kind == "double":
        values = [None if v is None else float(v) for v in values]  # type: ignore[arg-type]
    return pa.array(values, type=arrow_type)


def _as_text(value: object, index: int) -> str:
    """A document as str, decoded like the native engine (CPython's "replace" rule; a str with
    lone surrogates is read as its 'surrogatepass' bytes)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    raise TypeError(
        f"FusedPipeline.process: document {index} must be str or bytes-like, "
        f"got {type(value).__name__}"
    )


def _input_documents(batch: object) -> list[object]:
    if isinstance(batch, StringTensor):
        return list(batch.to_pylist())
    if is_arrow_object(batch):
        return list(iter_arrow_values(batch))
    if not isinstance(batch, (list, tuple)):
        raise TypeError(
            "FusedPipeline.process: batch must be a DocumentBatch, a StringTensor, an Arrow "
            f"string array or a list/tuple of str/bytes, got {type(batch).__name__}"
        )
    return list(batch)


class PipelineEngine:
    """Runs a batch through the enabled components, in STAGES order (see docs/pipeline.md)."""

    def __init__(  # noqa: PLR0917 - the native engine's positional signature
        self,
        cleaner: Any,
        quality: Any,
        exact_dedup: Any,
        near_dedup: Any,
        pii: Any,
        threads: int = 0,
        language: Any = None,
    ) -> None:
        self._cleaner = cleaner
        self._language = language
        self._quality = quality
        self._exact = exact_dedup
        self._near = near_dedup
        self._pii = pii
        self._threads = threads
        self._stats: dict[str, dict[str, int]] = {}

    def stats(self) -> dict[str, dict[str, int]]:
        return {k: dict(v) for k, v in self._stats.items()}

    def process(
        self,
        batch: object,
        fields: Mapping[str, Sequence[object]] | None = None,
        coordinates: Sequence[StreamCoordinate] | None = None,
    ) -> PipelineResult:
        end: StreamCoordinate | None = None
        in_fields: dict[str, list[object]] = {}
        reader_fields: frozenset[str] = frozenset()
        in_coords: list[StreamCoordinate] | None = None
        if isinstance(batch, DocumentBatch):
            raw: list[object] = list(batch.texts)
            in_fields = {k: list(v) for k, v in batch.fields.items()}
            reader_fields = frozenset(in_fields)
            in_coords = list(batch.coordinates)
            end = batch.end
        else:
            raw = _input_documents(batch)
        n = len(raw)
        if fields is not None:
            for name, values in fields.items():
                if len(values) != n:
                    raise ValueError(
                        f"FusedPipeline.process: field {name!r} has {len(values)} values for "
                        f"{n} documents"
                    )
                in_fields[name] = list(values)
        if coordinates is not None:
            if len(coordinates) != n:
                raise ValueError(
                    f"FusedPipeline.process: {len(coordinates)} coordinates for {n} documents"
                )
            for c in coordinates:
                if not isinstance(c, StreamCoordinate):
                    raise TypeError(
                        "FusedPipeline.process: coordinates must be StreamCoordinate, got "
                        f"{type(c).__name__}"
                    )
            in_coords = list(coordinates)

        dropped_by = np.zeros(n, dtype=np.uint8)
        reasons: list[PipelineRejection | None] = [None] * n
        counters: dict[str, dict[str, int]] = {}
        input_bytes = 0
        for d in raw:
            if isinstance(d, str):
                input_bytes += len(d.encode("utf-8", "surrogatepass"))
            elif isinstance(d, (bytes, bytearray, memoryview)):
                input_bytes += len(bytes(d))
        counters["input"] = {"documents": n, "bytes": input_bytes}

        alive = list(range(n))  # input indices still in the batch
        texts: list[str]

        def drop(stage: int, index: int, rejection: PipelineRejection) -> None:
            dropped_by[index] = stage + 1
            reasons[index] = rejection

        if self._cleaner is not None:
            before = self._cleaner.stats()
            cleaned = self._cleaner.clean_batch(raw)
            after = self._cleaner.stats()
            stage_counters = {k: after[k] - before[k] for k in after}
            texts = []
            kept = []
            dropped_empty = 0
            for i, t in zip(alive, cleaned, strict=True):
                if t:
                    texts.append(t)
                    kept.append(i)
                else:
                    dropped_empty += 1
                    drop(0, i, PipelineRejection("cleaner", "empty"))
            alive = kept
            stage_counters["dropped_empty"] = dropped_empty
            counters["cleaner"] = stage_counters
        else:
            texts = [_as_text(d, i) for i, d in enumerate(raw)]

        if self._language is not None:
            lang = self._language._filter_utf8([t.encode("utf-8") for t in texts])
            kept, kept_texts = [], []
            for i, t, keep, reason in zip(alive, texts, lang.keep, lang.reasons, strict=True):
                if keep:
                    kept.append(i)
                    kept_texts.append(t)
                else:
                    drop(
                        1,
                        i,
                        PipelineRejection(
                            "language",
                            reason.rule,
                            reason.score,
                            None if math.isnan(reason.threshold) else reason.threshold,
                        ),
                    )
            alive, texts = kept, kept_texts
            counters["language"] = dict(lang.counters)

        if self._quality is not None:
            result = self._quality.filter_batch(texts)
            new_texts = result.texts
            kept_texts = []
            kept = []
            for j, (i, keep, reason) in enumerate(
                zip(alive, result.keep, result.reasons, strict=True)
            ):
                if keep:
                    kept.append(i)
                    kept_texts.append(texts[j] if new_texts is None else new_texts[j])
                else:
                    drop(
                        2,
                        i,
                        PipelineRejection("quality", reason.rule, reason.value, reason.threshold),
                    )
            alive, texts = kept, kept_texts
            counters["quality"] = dict(result.counters)

        for stage, dedup, rule in (
            (3, self._exact, "duplicate"),
            (4, self._near, "near_duplicate"),
        ):
            if dedup is None:
                continue
            keep_mask = dedup.filter_batch(texts)
            threshold = float(dedup.threshold) if stage == 4 else None
            kept, kept_texts = [], []
            duplicates = 0
            for i, t, keep in zip(alive, texts, keep_mask, strict=True):
                if keep:
                    kept.append(i)
                    kept_texts.append(t)
                else:
                    duplicates += 1
                    drop(stage, i, PipelineRejection(_STAGES[stage], rule, None, threshold))
            counters[_STAGES[stage]] = {"total": len(texts), "duplicates": duplicates}
            alive, texts = kept, kept_texts

        if self._pii is not None:
            masked = self._pii.mask_batch(texts)
            out = list(masked.texts)
            counts = masked.counts
            changed = sum(1 for a, b in zip(texts, out, strict=True) if a != b)
            counters["pii"] = {
                "documents": len(texts),
                "documents_changed": changed,
                **{c: int(counts.get(c, 0)) for c in _PII_CATEGORIES},
            }
            texts = out

        counters["output"] = {
            "documents": len(texts),
            "bytes": sum(len(t.encode("utf-8")) for t in texts),
        }
        for stage_name, stage_counters in counters.items():
            total = self._stats.setdefault(stage_name, {})
            for key, value in stage_counters.items():
                total[key] = total.get(key, 0) + value

        dropped_by.flags.writeable = False  # like the native result's view of its own array
        return PipelineResult(
            texts=StringTensor(texts),
            dropped_by=dropped_by,
            reasons=reasons,
            fields={name: [values[i] for i in alive] for name, values in in_fields.items()},
            coordinates=None if in_coords is None else [in_coords[i] for i in alive],
            end=end,
            counters=counters,
            reader_fields=reader_fields,
        )

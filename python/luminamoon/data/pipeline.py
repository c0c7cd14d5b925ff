"""FusedPipeline: clean -> language -> quality -> exact dedup -> near dedup -> PII mask, one call
per batch.

This module is shared by both backends. It turns the stage arguments (or a TOML/dict config)
into the components of the live backend and hands them to that backend's ``PipelineEngine``,
which runs a batch through every stage: in C++ with the GIL released on the native backend, by
chaining the pure-Python components on the fallback. docs/pipeline.md is the contract.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import tomli_w

from ._ffi import impl
from .errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

__all__ = ["STAGES", "FusedPipeline", "PipelineRejection", "PipelineResult"]

STAGES: tuple[str, ...] = ("cleaner", "language", "quality", "exact_dedup", "near_dedup", "pii")
"""The stages in the order they run; ``PipelineResult.dropped_by`` is 1 + an index here."""

PipelineResult = impl.PipelineResult
PipelineRejection = impl.PipelineRejection

# TOML has no null: a quality threshold that is switched off (None) is written as this string.
_OFF = "off"

_QUALITY_PRESETS_KEY = "presets"

_LANGUAGE_OPTIONS = ("languages", "min_score", "min_scores")


def _suggest(name: str, known: Sequence[str]) -> str:
    best = impl.did_you_mean(name, list(known))  # both backends rank names identically
    return f"; did you mean {best!r}?" if best else f" (known: {', '.join(known)})"


def _stage_options(stage: str, value: object, where: str) -> dict[str, Any] | None:
    """``None`` when the stage is off, else the component's keyword options."""
    if value is None or value is False:
        return None
    if value is True:
        return {}
    if stage == "language" and isinstance(value, str):
        return {"languages": [value]}
    if stage == "language" and isinstance(value, Sequence) and not isinstance(value, bytes):
        return {"languages": list(value)}
    if stage == "quality" and isinstance(value, str):
        return {_QUALITY_PRESETS_KEY: [value]}
    if stage == "quality" and isinstance(value, Sequence) and not isinstance(value, bytes):
        return {_QUALITY_PRESETS_KEY: list(value)}
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{where}{stage} must be True, False, None or a mapping of {stage} options, "
            f"got {type(value).__name__}"
        )
    options = dict(value)
    for key in options:
        if not isinstance(key, str):
            raise TypeError(f"{where}{stage}: option names must be str, got {key!r}")
    if stage == "language":
        for key in options:
            if key not in _LANGUAGE_OPTIONS and key != "threads":
                raise ConfigError(
                    f"{where}language: unknown option {key!r}" + _suggest(key, _LANGUAGE_OPTIONS)
                )
    if "threads" in options:
        raise ConfigError(
            f"{where}{stage}: 'threads' is set once for the whole pipeline "
            "(FusedPipeline(threads=...) or the top-level 'threads' key)"
        )
    return options


def _check_threads(threads: object) -> int:
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"FusedPipeline: threads must be an int, got {type(threads).__name__}")
    if threads < 0 or threads > 4096:
        raise ValueError(
            f"FusedPipeline: threads must be in [0, 4096] (0 = every core), got {threads}"
        )
    return threads


class FusedPipeline:
    """Every curation stage over one batch: clean, language, quality, exact dedup, near dedup,
    PII mask.

    Each stage argument is ``False``/``None`` (off), ``True`` (the component's defaults) or a
    mapping of the component's keyword options (``quality`` also takes a preset name or a list
    of them, ``language`` a language code or a list of them); ``language`` is off by default.
    With a ``tracker`` the deduplicators attach to it, so their state commits with the
    checkpoint. Results never depend on ``threads``.
    """

    # The backend module whose components and engine this class builds (the live one; the parity
    # tests subclass it with the other).
    _backend: ClassVar[Any] = impl

    def __init__(
        self,
        *,
        cleaner: bool | Mapping[str, object] | None = True,
        language: bool | str | Sequence[str] | Mapping[str, object] | None = False,
        quality: bool | str | Sequence[str] | Mapping[str, object] | None = True,
        exact_dedup: bool | Mapping[str, object] | None = True,
        near_dedup: bool | Mapping[str, object] | None = True,
        pii: bool | Mapping[str, object] | None = True,
        tracker: Any = None,
        threads: int = 0,
        **options: object,
    ) -> None:
        if options:
            name = next(iter(options))
            raise ConfigError(
                f"FusedPipeline: unknown stage or option {name!r}"
                + _suggest(name, (*STAGES, "tracker", "threads"))
            )
        self._threads = _check_threads(threads)
        self._tracker = tracker
        given = {
            "cleaner": cleaner,
            "language": language,
            "quality": quality,
            "exact_dedup": exact_dedup,
            "near_dedup": near_dedup,
            "pii": pii,
        }
        specs = {stage: _stage_options(stage, given[stage], "FusedPipeline: ") for stage in STAGES}
        t = self._threads
        b = self._backend
        self._cleaner = (
            None if specs["cleaner"] is None else b.TextCleaner(threads=t, **specs["cleaner"])
        )
        self._language = (
            None if specs["language"] is None else b.LanguageFilter(threads=t, **specs["language"])
        )
        self._quality = None
        if specs["quality"] is not None:
            q = dict(specs["quality"])
            presets = q.pop(_QUALITY_PRESETS_KEY, ("default",))
            if isinstance(presets, str):
                presets = (presets,)
            self._quality = b.QualityFilter(tuple(presets), threads=t, **q)
        self._exact = (
            None
            if specs["exact_dedup"] is None
            else b.StreamDeduplicator(tracker, threads=t, **specs["exact_dedup"])
        )
        self._near = (
            None
            if specs["near_dedup"] is None
            else b.MinHashDeduplicator(tracker, threads=t, **specs["near_dedup"])
        )
        self._pii = None if specs["pii"] is None else b.PIIMasker(threads=t, **specs["pii"])
        self._engine = b.PipelineEngine(
            self._cleaner, self._quality, self._exact, self._near, self._pii, t, self._language
        )

    # -- running -----------------------------------------------------------------------------

    def process(
        self,
        batch: object,
        *,
        fields: Mapping[str, Sequence[object]] | None = None,
        coordinates: Sequence[object] | None = None,
    ) -> PipelineResult:
        """Runs every enabled stage over ``batch`` (a reader ``DocumentBatch``, a StringTensor,
        an Arrow string array or stream, or a sequence of str/bytes)."""
        result: PipelineResult = self._engine.process(batch, fields, coordinates)
        return result

    def stats(self) -> dict[str, dict[str, int]]:
        """Counters of every batch processed so far, per stage (docs/pipeline.md)."""
        stats: dict[str, dict[str, int]] = self._engine.stats()
        return stats

    def commit(self) -> None:
        """Attached: the tracker's commit (position and both dedup states). Detached: staged ->
        committed in RAM."""
        if self._tracker is not None:
            self._tracker.commit()
            return
        for dedup in (self._exact, self._near):
            if dedup is not None:
                dedup.commit()

    def rollback(self) -> None:
        """Drops the dedup state staged since the last commit (attached: the tracker's rollback)."""
        if self._tracker is not None:
            self._tracker.rollback()
            return
        for dedup in (self._exact, self._near):
            if dedup is not None:
                dedup.rollback()

    # -- introspection -------------------------------------------------------------------------

    @property
    def stages(self) -> tuple[str, ...]:
        """The enabled stages, in the order they run."""
        present = (
            self._cleaner,
            self._language,
            self._quality,
            self._exact,
            self._near,
            self._pii,
        )
        return tuple(s for s, c in zip(STAGES, present, strict=True) if c is not None)

    @property
    def threads(self) -> int:
        return self._threads

    @property
    def tracker(self) -> Any:
        return self._tracker

    @property
    def cleaner(self) -> Any:
        return self._cleaner

    @property
    def language(self) -> Any:
        return self._language

    @property
    def quality(self) -> Any:
        return self._quality

    @property
    def exact_dedup(self) -> Any:
        return self._exact

    @property
    def near_dedup(self) -> Any:
        return self._near

    @property
    def pii(self) -> Any:
        return self._pii

    def __repr__(self) -> str:
        return f"FusedPipeline(stages={self.stages!r}, threads={self._threads})"

    # -- configuration -------------------------------------------------------------------------

    def to_config(self) -> dict[str, Any]:
        """Every effective option (defaults included); ``False`` for a stage that is off.

        ``FusedPipeline.from_config(p.to_config())`` builds an equal pipeline.
        """
        config: dict[str, Any] = {"threads": self._threads}
        if self._cleaner is None:
            config["cleaner"] = False
        else:
            config["cleaner"] = {k: v for k, v in self._cleaner.options.items() if k != "threads"}
        if self._language is None:
            config["language"] = False
        else:
            lang = self._language
            config["language"] = {
                "languages": list(lang.languages or ()),
                "min_score": lang.min_score,
                "min_scores": dict(lang.min_scores),
            }
        if self._quality is None:
            config["quality"] = False
        else:
            config["quality"] = {
                _QUALITY_PRESETS_KEY: list(self._quality.presets),
                **self._quality.thresholds,
            }
        config["exact_dedup"] = False if self._exact is None else {}
        if self._near is None:
            config["near_dedup"] = False
        else:
            n = self._near
            config["near_dedup"] = {
                "num_perm": n.num_perm,
                "threshold": n.threshold,
                "bands": n.bands,
                "rows": n.rows,
                "shingle": n.shingle,
                "ngram": n.ngram,
                "seed": n.seed,
                "store_signatures": n.store_signatures,
            }
        if self._pii is None:
            config["pii"] = False
        else:
            p = self._pii
            enabled = set(p.categories)
            config["pii"] = {
                "email": "EMAIL" in enabled,
                "ip_address": "IP_ADDRESS" in enabled,
                "api_key": "API_KEY" in enabled,
                "credit_card": "CREDIT_CARD" in enabled,
                "mask_private_ips": p.mask_private_ips,
                "tags": dict(p.tags),
            }
        return config

    def to_toml(self) -> str:
        """``to_config()`` as a TOML document (a switched-off threshold is written ``"off"``)."""
        return tomli_w.dumps(_to_toml_values(self.to_config()))

    def save_config(self, path: str | os.PathLike[str]) -> None:
        """Writes ``to_toml()`` to ``path``."""
        Path(path).write_text(self.to_toml(), encoding="utf-8")

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, object] | str | os.PathLike[str],
        *,
        tracker: Any = None,
        threads: int | None = None,
    ) -> FusedPipeline:
        """A pipeline from a config mapping or a TOML file (``threads`` overrides the file's)."""
        if isinstance(config, (str, os.PathLike)):
            where = f"pipeline config {os.fsdecode(config)}: "
            data = load_config_file(config)
        elif isinstance(config, Mapping):
            where = "pipeline config: "
            data = dict(config)
        else:
            raise TypeError(
                f"FusedPipeline.from_config: config must be a mapping or a path, got "
                f"{type(config).__name__}"
            )
        known = ("threads", *STAGES)
        for key in data:
            if key not in known:
                raise ConfigError(f"{where}unknown key {key!r}" + _suggest(str(key), known))
        stage_args: dict[str, Any] = {}
        for stage in STAGES:
            if stage not in data:
                continue
            value = data[stage]
            if isinstance(value, Mapping):
                value = _from_toml_values(stage, dict(value))
            elif not isinstance(value, bool):
                raise ConfigError(
                    f"{where}{stage} must be a table of options or true/false, got {value!r}"
                )
            _stage_options(stage, value, where)  # the same checks as the constructor
            stage_args[stage] = value
        file_threads = data.get("threads", 0)
        try:
            return cls(
                tracker=tracker,
                threads=_check_threads(file_threads if threads is None else threads),
                **stage_args,
            )
        except ConfigError as exc:
            raise ConfigError(f"{where}{exc}") from None


def load_config_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Reads a TOML pipeline config; a syntax error names the file and the line."""
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"pipeline config {p}: no such file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"pipeline config {p}: not UTF-8 ({exc})") from None
    try:
        data: dict[str, Any] = tomllib.loads(text)
        return data
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"pipeline config {p}: {exc}") from None


def _to_toml_values(config: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, dict):
            out[key] = {k: _OFF if v is None else v for k, v in value.items()}
        else:
            out[key] = value
    return out


def _from_toml_values(stage: str, table: dict[str, Any]) -> dict[str, Any]:
    if stage != "quality":
        return table
    out: dict[str, Any] = {}
    for key, value in table.items():
        if (value == _OFF and key != _QUALITY_PRESETS_KEY) or (
            isinstance(value, float) and math.isnan(value)
        ):
            out[key] = None
        else:
            out[key] = value
    return out

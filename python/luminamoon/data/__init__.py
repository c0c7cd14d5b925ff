"""LuminaMoon Data Engine: clean, deduplicated, PII-free training data with exact resume.

The public API. Every class here has a native (C++) and a pure-Python implementation with the
same signature, the same answers and byte-identical files; ``BACKEND`` says which one is live.
"""

from __future__ import annotations

from ._ffi import BACKEND, impl
from .errors import (
    CheckpointLockedError,
    ConfigError,
    CorruptCheckpointError,
    LuminaMoonError,
    MalformedInputError,
)
from .pipeline import STAGES, FusedPipeline, PipelineRejection, PipelineResult
from .streaming import ResumablePipeline, StreamBatch

StreamCoordinate = impl.StreamCoordinate
StateTracker = impl.StateTracker
StreamDeduplicator = impl.StreamDeduplicator
MinHashDeduplicator = impl.MinHashDeduplicator
ShardReader = impl.ShardReader
DocumentBatch = impl.DocumentBatch
ReadIssue = impl.ReadIssue
TextCleaner = impl.TextCleaner
PIIMasker = impl.PIIMasker
QualityFilter = impl.QualityFilter
LanguageFilter = impl.LanguageFilter
LanguageDetection = impl.LanguageDetection
LanguageRejection = impl.LanguageRejection
LanguageResult = impl.LanguageResult
QualityResult = impl.QualityResult
Rejection = impl.Rejection
PIISpan = impl.PIISpan
MaskResult = impl.MaskResult
StringTensor = impl.StringTensor
xxh3_64 = impl.xxh3_64
build_info = impl.build_info
did_you_mean = impl.did_you_mean
extract_field = impl.extract_field
simd_isa = impl.simd_isa
supported_isas = impl.supported_isas

__version__ = "0.1.0"

__all__ = [
    "BACKEND",
    "STAGES",
    "CheckpointLockedError",
    "ConfigError",
    "CorruptCheckpointError",
    "DocumentBatch",
    "FusedPipeline",
    "LanguageDetection",
    "LanguageFilter",
    "LanguageRejection",
    "LanguageResult",
    "LuminaMoonError",
    "MalformedInputError",
    "MaskResult",
    "MinHashDeduplicator",
    "PIIMasker",
    "PIISpan",
    "PipelineRejection",
    "PipelineResult",
    "QualityFilter",
    "QualityResult",
    "ReadIssue",
    "Rejection",
    "ResumablePipeline",
    "ShardReader",
    "StateTracker",
    "StreamBatch",
    "StreamCoordinate",
    "StreamDeduplicator",
    "StringTensor",
    "TextCleaner",
    "__version__",
    "build_info",
    "did_you_mean",
    "extract_field",
    "simd_isa",
    "supported_isas",
    "xxh3_64",
]

"""Pure-Python backend: the same API, answers and files as the native module (``_native``).

Used when the native module is not built for this interpreter, or when
``LUMINAMOON_FORCE_FALLBACK=1``; it is also the reference the native module is tested against.
"""

from __future__ import annotations

from .build_info import build_info
from .cleaner import TextCleaner
from .coordinate import StreamCoordinate
from .dedup import StreamDeduplicator, xxh3_64
from .language import LanguageDetection, LanguageFilter, LanguageRejection, LanguageResult
from .minhash import MinHashDeduplicator
from .pii import MaskResult, PIIMasker, PIISpan
from .pipeline import PipelineEngine, PipelineRejection, PipelineResult
from .quality import QualityFilter, QualityResult, Rejection
from .readers import DocumentBatch, ReadIssue, ShardReader, extract_field
from .simd import simd_isa, supported_isas
from .string_tensor import StringTensor
from .suggest import did_you_mean
from .tracker import StateTracker

__all__ = [
    "DocumentBatch",
    "LanguageDetection",
    "LanguageFilter",
    "LanguageRejection",
    "LanguageResult",
    "MaskResult",
    "MinHashDeduplicator",
    "PIIMasker",
    "PIISpan",
    "PipelineEngine",
    "PipelineRejection",
    "PipelineResult",
    "QualityFilter",
    "QualityResult",
    "ReadIssue",
    "Rejection",
    "ShardReader",
    "StateTracker",
    "StreamCoordinate",
    "StreamDeduplicator",
    "StringTensor",
    "TextCleaner",
    "build_info",
    "did_you_mean",
    "extract_field",
    "simd_isa",
    "supported_isas",
    "xxh3_64",
]

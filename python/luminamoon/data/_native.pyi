"""
LuminaMoon Data Engine native core (C++20). Use it through luminamoon.data.
"""

from collections.abc import Iterable, Iterator, Mapping, Sequence
import os
from typing import Any, SupportsIndex

import numpy
import numpy.typing

def xxh3_64(data: str | bytes | bytearray | memoryview) -> int:
    """
    XXH3-64 (seed 0) of the UTF-8 bytes of a str, or of a bytes-like object.
    """

def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """
    The candidate closest to `name` by Damerau-Levenshtein distance, or None when none is close (distance > max(2, len(name) // 3)).
    """

def simd_isa() -> str:
    """
    The instruction set the byte kernels use: 'scalar', 'avx2', 'avx512' or 'neon'. Probed once per process; LUMINAMOON_SIMD forces one, and an unknown or unsupported value raises ConfigError here.
    """

def supported_isas() -> list[str]:
    """Every instruction set this CPU and build can run, 'scalar' first."""

def build_info() -> dict[str, str]:
    """
    What this backend is built from, for bug reports: 'compiler', 'cxx_standard' and the version of every linked library ('simdjson', 'abseil', 'utf8proc', 'xxhash', 'zstd', 'zlib'). A library with a runtime version call reports the version loaded.
    """

class StreamCoordinate:
    """
    The 32-byte position of a stream (SPEC 3.1): immutable, little-endian on the wire.
    """

    def __init__(
        self,
        shard_id: int = 0,
        byte_offset: int = 0,
        row_group_idx: int = 0,
        page_idx: int = 0,
        row_offset_in_page: int = 0,
        global_row_idx: int = 0,
    ) -> None: ...
    @property
    def shard_id(self) -> int: ...
    @property
    def byte_offset(self) -> int: ...
    @property
    def row_group_idx(self) -> int: ...
    @property
    def page_idx(self) -> int: ...
    @property
    def row_offset_in_page(self) -> int: ...
    @property
    def global_row_idx(self) -> int: ...
    def to_bytes(self) -> bytes:
        """The 32-byte little-endian encoding."""

    @staticmethod
    def from_bytes(data: bytes | bytearray | memoryview, /) -> StreamCoordinate:
        """Decode 32 bytes; any other length or type raises ValueError."""

    def replace(self, **fields: int) -> StreamCoordinate:
        """A copy with the given fields changed."""

    def __eq__(self, other: object, /) -> bool: ...
    def __ne__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __repr__(self) -> str: ...
    def __getstate__(self) -> bytes: ...
    def __setstate__(self, state: bytes, /) -> None: ...

class StateTracker:
    """
    The 128-byte ping-pong .meta checkpoint (SPEC 3.2) and its .dedup WAL (SPEC 3.3).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        durable: bool = True,
        **options: object,
    ) -> None: ...
    @property
    def path(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    @property
    def epoch(self) -> int: ...
    @property
    def committed_batch_id(self) -> int: ...
    @property
    def coordinate(self) -> StreamCoordinate: ...
    @property
    def dedup_count(self) -> int: ...
    @property
    def active_slot(self) -> str | None: ...
    @property
    def has_pending(self) -> bool: ...
    def read(self) -> tuple[int, int, StreamCoordinate, int]:
        """
        (epoch, committed_batch_id, coordinate, dedup_count) of the active slot.
        """

    def update(self, batch_id: int, coordinate: StreamCoordinate) -> None:
        """Stage the position after `batch_id` in RAM; commit() makes it durable."""

    def commit(self) -> int:
        """
        WAL append + fsync, next slot + fsync, then RAM (SPEC 3.3). Returns the new epoch.
        """

    def rollback(self) -> None:
        """Drop everything staged since the last commit."""

    def close(self) -> None: ...
    def __enter__(self) -> StateTracker: ...
    def __exit__(self, exc_type: object, exc: object, tb: object, /) -> None: ...
    def __repr__(self) -> str: ...

class StreamDeduplicator:
    """
    Exact dedup by XXH3-64 in SwissTable sets, staged until commit (SPEC 3.3).
    """

    def __init__(
        self, tracker: StateTracker | None = None, *, threads: int = 0, **options: object
    ) -> None: ...
    def is_unique(self, text: str | bytes | bytearray | memoryview) -> bool:
        """True (and staged) when the document was not seen before."""

    def contains(self, text: str | bytes | bytearray | memoryview) -> bool:
        """Whether the document is committed or staged; stages nothing."""

    def filter_batch(
        self, texts: Sequence[str | bytes | bytearray | memoryview] | Any
    ) -> list[bool]:
        """
        Keep mask: first occurrence wins, also within the batch; kept documents are staged.
        """

    def commit(self) -> None:
        """
        Attached: the tracker's commit (WAL, slot, RAM). Detached: staged -> committed.
        """

    def rollback(self) -> None:
        """Attached: the tracker's rollback. Detached: drop staged hashes."""

    def limit_next_commit(self, count: int) -> None:
        """
        The next commit of the attached tracker writes and promotes only the first count staged hashes; the rest stay staged. Cleared by that commit and by a rollback.
        """

    @property
    def staged_count(self) -> int: ...
    @property
    def committed_count(self) -> int: ...
    @property
    def tracker(self) -> StateTracker | None: ...
    def memory_bytes(self) -> int:
        """Bytes held by the hash sets and the staging log (capacity, not size)."""

    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...

class Rejection:
    """
    Why a document was rejected: the first rule it failed; `value comparison threshold` holds.
    """

    @property
    def rule(self) -> str: ...
    @property
    def metric(self) -> str: ...
    @property
    def value(self) -> float: ...
    @property
    def threshold(self) -> float: ...
    @property
    def comparison(self) -> str: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __repr__(self) -> str: ...

class QualityResult:
    """
    What filter_batch returns: keep mask, the first failing rule of every rejected document, counters per rule; `texts` holds the kept texts after C4 line removal (c4_lines only).
    """

    @property
    def keep(self) -> list[bool]: ...
    @property
    def reasons(self) -> list[Rejection | None]: ...
    @property
    def counters(self) -> dict[str, int]: ...
    @property
    def texts(self) -> list[str | None] | None: ...
    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...

class QualityFilter:
    """
    Document quality metrics and rule sets (presets), with a reason for every rejection.
    """

    def __init__(
        self, presets: str | Sequence[str] = ("default",), *, threads: int = 0, **thresholds: object
    ) -> None: ...
    @property
    def presets(self) -> tuple[str, ...]: ...
    @property
    def thresholds(self) -> dict[str, float | int | bool | list[str] | dict[str, float] | None]:
        """
        Every setting of the selected presets (defaults and overrides), in rule order.
        """

    @property
    def rules(self) -> tuple[str, ...]:
        """The rules that are on, in the order they are checked."""

    @staticmethod
    def preset_defaults() -> dict[
        str, dict[str, float | int | bool | list[str] | dict[str, float] | None]
    ]:
        """Every preset with its settings and their published defaults."""

    @staticmethod
    def metric_names() -> tuple[str, ...]:
        """The keys of metrics(), in order."""

    @staticmethod
    def tokenize(text: str | bytes | bytearray | memoryview) -> list[str]:
        """
        The word tokens every word-based metric uses (spaCy English, as datatrove).
        """

    def metrics(self, text: str | bytes | bytearray | memoryview) -> dict[str, float | str]:
        """
        Every metric of the text (all presets, whichever are selected), by name; with the 'language' preset also 'language' (CLD2 code) and 'language_score'.
        """

    def check(self, text: str | bytes | bytearray | memoryview) -> Rejection | None:
        """
        The first rule the text fails, or None when it passes every selected preset.
        """

    def is_high_quality(self, text: str | bytes | bytearray | memoryview) -> bool:
        """Whether the text passes every rule of the selected presets."""

    def clean_lines(self, text: str | bytes | bytearray | memoryview) -> str:
        """
        The text after C4 line removal (this filter's c4 settings), kept or not.
        """

    def filter_batch(
        self, texts: Sequence[str | bytes | bytearray | memoryview] | Any
    ) -> QualityResult:
        """
        Keep mask, first failing rule per rejected document, and counters per rule.
        """

    def __repr__(self) -> str: ...

class LanguageDetection:
    """
    CLD2's answer for one document: its language code ('un' = unknown), the share of its letters in that language (0..1) and CLD2's reliability flag.
    """

    @property
    def language(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def reliable(self) -> bool: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __repr__(self) -> str: ...

class LanguageRejection:
    """
    Why LanguageFilter dropped a document: rule 'language' (not a wanted language; threshold NaN) or 'min_language_score' (score < threshold).
    """

    @property
    def rule(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def threshold(self) -> float: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __repr__(self) -> str: ...

class LanguageResult:
    """
    What LanguageFilter.filter_batch returns: keep mask, the rejection of every dropped document, every document's language and score, and counters per rule.
    """

    @property
    def keep(self) -> list[bool]: ...
    @property
    def reasons(self) -> list[LanguageRejection | None]: ...
    @property
    def languages(self) -> list[str]: ...
    @property
    def scores(self) -> list[float]: ...
    @property
    def counters(self) -> dict[str, int]: ...
    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...

class LanguageFilter:
    """
    Language identification (CLD2, model compiled in) and a keep rule: the document's language is one of `languages` (None = any) and its score >= min_score (or its min_scores entry).
    """

    def __init__(
        self,
        languages: Sequence[str] | None = None,
        min_score: float = 0.0,
        *,
        min_scores: dict[str, float] | None = None,
        threads: int = 0,
    ) -> None: ...
    @property
    def languages(self) -> tuple[str, ...] | None: ...
    @property
    def min_score(self) -> float: ...
    @property
    def min_scores(self) -> dict[str, float]: ...
    @property
    def threads(self) -> int: ...
    @staticmethod
    def known_languages() -> tuple[str, ...]:
        """
        Every language code CLD2 can answer, in its enum order (duplicates once).
        """

    @staticmethod
    def model_version() -> str:
        """CLD2's version string (code version - data build date)."""

    def detect(self, text: str | bytes | bytearray | memoryview) -> LanguageDetection:
        """CLD2's language, score and reliability for the text."""

    def metrics(self, text: str | bytes | bytearray | memoryview) -> dict[str, str | float]:
        """{'language': code, 'language_score': score} of the text."""

    def check(self, text: str | bytes | bytearray | memoryview) -> LanguageRejection | None:
        """Why the text would be dropped, or None when it is kept."""

    def filter_batch(
        self, texts: Sequence[str | bytes | bytearray | memoryview] | Any
    ) -> LanguageResult:
        """Keep mask, rejections, languages and scores, counters per rule."""

    def __repr__(self) -> str: ...

class MinHashDeduplicator:
    """
    Near-duplicate detection: MinHash signatures, LSH banding, candidates verified against the signature estimate; staged until commit, persisted next to a StateTracker.
    """

    def __init__(
        self,
        tracker: StateTracker | None = None,
        *,
        num_perm: int = 64,
        threshold: float = 0.8,
        bands: int | None = None,
        rows: int | None = None,
        shingle: str = "word",
        ngram: int = 5,
        seed: int = 1,
        store_signatures: bool = False,
        threads: int = 0,
        **options: object,
    ) -> None: ...
    def is_unique(self, text: str | bytes | bytearray | memoryview) -> bool:
        """
        True (and staged) when no indexed document is a verified near-duplicate of text.
        """

    def filter_batch(
        self, texts: Sequence[str | bytes | bytearray | memoryview] | Any
    ) -> list[bool]:
        """
        Keep mask: the first of each group of near-duplicates wins, also within the batch; kept documents are staged.
        """

    def signature(self, text: str | bytes | bytearray | memoryview) -> list[int]:
        """The num_perm MinHash values (u32) of text."""

    def signatures(
        self, texts: Sequence[str | bytes | bytearray | memoryview] | Any
    ) -> numpy.typing.NDArray[numpy.uint32]:
        """
        Signatures of a batch as a (len(texts), num_perm) uint32 NumPy array, computed on `threads` workers; needs numpy.
        """

    def similarity(
        self, a: str | bytes | bytearray | memoryview, b: str | bytes | bytearray | memoryview
    ) -> float:
        """Estimated Jaccard similarity: the fraction of equal signature values."""

    def jaccard(
        self, a: str | bytes | bytearray | memoryview, b: str | bytes | bytearray | memoryview
    ) -> float:
        """
        Exact Jaccard similarity of the two shingle sets (1.0 when both are empty).
        """

    def query(
        self, text: str | bytes | bytearray | memoryview, *, verify: bool = True
    ) -> list[int]:
        """
        Ids (indexing order, committed first) of indexed documents that are verified near-duplicates of text, or with verify=False every LSH candidate; stages nothing.
        """

    def cluster(self, texts: Sequence[str | bytes | bytearray | memoryview] | Any) -> list[int]:
        """
        Offline: the cluster id of every document (the index of its cluster's first document); keep texts[i] where result[i] == i. Touches no state.
        """

    def commit(self) -> None:
        """
        Attached: the tracker's commit (WAL, index records, slot, RAM). Detached: staged -> committed.
        """

    def rollback(self) -> None:
        """Attached: the tracker's rollback. Detached: drop the staged documents."""

    def limit_next_commit(self, count: int) -> None:
        """
        The next commit of the attached tracker writes and promotes only the first count staged rows; the rest stay staged. Cleared by that commit and by a rollback.
        """

    @property
    def staged_count(self) -> int: ...
    @property
    def committed_count(self) -> int: ...
    @property
    def tracker(self) -> StateTracker | None: ...
    @property
    def num_perm(self) -> int: ...
    @property
    def threshold(self) -> float: ...
    @property
    def bands(self) -> int: ...
    @property
    def rows(self) -> int: ...
    @property
    def shingle(self) -> str: ...
    @property
    def ngram(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def store_signatures(self) -> bool: ...
    @property
    def value_bits(self) -> int: ...
    @property
    def min_matches(self) -> int: ...
    def memory_bytes(self) -> int:
        """Bytes held by the index: rows and band tables (capacity, not size)."""

    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...

class TextCleaner:
    """
    UTF-8 repair, newline/control/whitespace normalisation and optional NFC; the steps, character sets and counters are specified in docs/cleaner.md.
    """

    def __init__(
        self,
        *,
        repair_utf8: bool = True,
        normalize_newlines: bool = True,
        remove_controls: bool = True,
        whitespace: str = "preserve_indent",
        strip_trailing_spaces: bool = True,
        limit_newlines: bool = True,
        strip: bool = True,
        nfc: bool = False,
        threads: int = 0,
        collapse_whitespace: bool | None = None,
        **options: object,
    ) -> None: ...
    def clean(self, text: str | bytes | bytearray | memoryview) -> str:
        """
        The cleaned text. bytes may be invalid UTF-8; a str is read as its UTF-8 encoding with 'surrogatepass' (a lone surrogate is repaired like the invalid bytes it encodes to).
        """

    def clean_batch(self, texts: Sequence[str | bytes | bytearray | memoryview] | Any) -> list[str]:
        """
        Every document cleaned, in order, on `threads` workers with the GIL released. texts: a list/tuple of str/bytes-like, or an Arrow utf8/large_utf8/utf8_view/binary/large_binary/binary_view array or stream.
        """

    def stats(self) -> dict[str, int]:
        """Counters since construction or reset_stats() (docs/cleaner.md)."""

    def reset_stats(self) -> None:
        """Zero every counter."""

    @property
    def options(self) -> dict[str, bool | int | str]:
        """The effective options, every one of them (defaults included)."""

    def __repr__(self) -> str: ...

def extract_field(record: str | bytes | bytearray | memoryview, path: str) -> str:
    """
    Parse one JSON record and return the string at the dotted `path` ('text', 'meta.body', 'messages.0.content'), fully unescaped. Malformed JSON, a missing path (with a 'did you mean' suggestion) or a non-string value raise MalformedInputError.
    """

class ReadIssue:
    """One bad record or shard: where it is, what kind of problem, and why."""

    @property
    def shard_id(self) -> int | None: ...
    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def byte_offset(self) -> int: ...
    @property
    def field(self) -> str | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def message(self) -> str: ...
    def __str__(self) -> str: ...
    def __repr__(self) -> str: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

class DocumentBatch:
    """Documents read by a ShardReader, with the coordinate after each."""

    @property
    def texts(self) -> list[str]: ...
    @property
    def fields(self) -> dict[str, list[str | int | float | bool | None]]: ...
    @property
    def coordinates(self) -> list[StreamCoordinate]: ...
    @property
    def end(self) -> StreamCoordinate: ...
    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...

class ShardReader:
    """Batches of documents from .jsonl / .txt shards (plain, .gz, .zst)."""

    def __init__(
        self,
        paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        text_field: str = "text",
        fields: Sequence[str] = (),
        format: str = "auto",
        txt_mode: str = "line",
        batch_size: int = 1024,
        start: StreamCoordinate | None = None,
        strict: bool = False,
        max_record_bytes: int = 268435456,
        threads: int = 0,
        index_dir: str | os.PathLike[str] | None = None,
        index_spacing: int = 4194304,
        http_retries: int = 4,
        http_backoff: float = 0.5,
        http_timeout: float = 30.0,
        **options: object,
    ) -> None: ...
    @property
    def shards(self) -> list[str]: ...
    @property
    def errors(self) -> list[ReadIssue]: ...
    def stats(self) -> dict[str, int]: ...
    def __iter__(self) -> ShardReader: ...
    def __next__(self) -> DocumentBatch: ...
    def close(self) -> None:
        """Close the open shard and end the stream; idempotent."""

    def __enter__(self) -> ShardReader: ...
    def __exit__(self, exc_type: object, exc: object, tb: object, /) -> None: ...
    def __repr__(self) -> str: ...

class PIISpan:
    """One masked match: category, code-point and UTF-8 byte offsets, text."""

    def __init__(
        self, category: str, start: int, end: int, byte_start: int, byte_end: int, text: str
    ) -> None: ...
    @property
    def category(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def byte_start(self) -> int: ...
    @property
    def byte_end(self) -> int: ...
    @property
    def text(self) -> str: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    def __repr__(self) -> str: ...

class MaskResult:
    """mask_batch's result: the masked texts and per-category counts."""

    @property
    def texts(self) -> list[str]: ...
    @property
    def counts(self) -> dict[str, int]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> str: ...
    def __iter__(self) -> Iterator[str]: ...
    def __repr__(self) -> str: ...

class PIIMasker:
    """
    Masks e-mails, IP addresses, API keys and credit-card numbers with validated rules (docs/pii.md).
    """

    def __init__(
        self,
        *,
        email: bool = True,
        ip_address: bool = True,
        api_key: bool = True,
        credit_card: bool = True,
        mask_private_ips: bool = False,
        tags: Mapping[str, str] | None = None,
        threads: int = 0,
        **options: object,
    ) -> None: ...
    def mask(self, text: str | bytes | bytearray | memoryview) -> str:
        """
        The text with every match replaced by its category's tag. Bytes are decoded as UTF-8 with U+FFFD for invalid sequences.
        """

    def mask_batch(self, texts: Sequence[str | bytes | bytearray | memoryview] | Any) -> MaskResult:
        """
        Masks every document (list/tuple of str or bytes, or an Arrow string/binary array) on `threads` workers with the GIL released.
        """

    def find(self, text: str | bytes | bytearray | memoryview) -> list[PIISpan]:
        """Every match, in text order: what mask() would replace."""

    @property
    def counts(self) -> dict[str, int]:
        """Per-category counts of the last mask() or mask_batch() call."""

    def stats(self) -> dict[str, int]:
        """
        Cumulative documents, bytes and per-category counts over every mask()/mask_batch().
        """

    def reset_stats(self) -> None:
        """Zero stats() and counts."""

    @property
    def tags(self) -> dict[str, str]: ...
    @property
    def categories(self) -> tuple[str, ...]:
        """The enabled categories."""

    @property
    def mask_private_ips(self) -> bool: ...
    @property
    def threads(self) -> int: ...
    def __repr__(self) -> str: ...

class StringTensor:
    """
    Immutable UTF-8 strings: Arrow utf8_view on CPU, offsets + payload for GPU/Arrow.
    """

    def __init__(self, data: object = None, /) -> None:
        """
        From a list/tuple/iterable of str or bytes (UTF-8 checked), an Arrow string array or stream (PyCapsule interface), a NumPy string array, or another StringTensor.
        """

    @staticmethod
    def from_pylist(items: Sequence[str | bytes | bytearray | memoryview]) -> StringTensor:
        """
        From str (UTF-8) and bytes-like items (UTF-8 validated; the error names the index).
        """

    @staticmethod
    def from_arrow(obj: object) -> StringTensor:
        """
        From an Arrow utf8/large_utf8/utf8_view (or binary) array or chunked array; zero-copy for one chunk.
        """

    @staticmethod
    def from_numpy(array: object) -> StringTensor:
        """
        From a 1-D NumPy array of str ('U', StringDType, object) or bytes ('S').
        """

    @staticmethod
    def from_buffers(offsets: object, payload: object) -> StringTensor:
        """
        Zero-copy from n + 1 offsets (int32/uint32/int64/uint64) and a UTF-8 payload (uint8), as NumPy arrays, DLPack tensors or bytes-like objects; validated.
        """

    @staticmethod
    def from_torch(offsets: object, payload: object) -> StringTensor:
        """
        From (offsets, payload) torch tensors; CUDA tensors are copied to the CPU first.
        """

    @staticmethod
    def concat(tensors: Iterable[StringTensor]) -> StringTensor:
        """
        One tensor of all strings in order; views are copied, string bytes are shared.
        """

    def __len__(self) -> int: ...
    def __getitem__(self, key: SupportsIndex | slice) -> str | StringTensor:
        """
        An int gives a str; a slice gives a StringTensor (step 1: a view sharing all memory; other steps: gathered views, shared bytes).
        """

    def __iter__(self) -> Iterator[str]: ...
    def to_pylist(self) -> list[str]:
        """Every string as a Python str."""

    def take(self, indices: Sequence[int] | Any) -> StringTensor:
        """
        Strings at `indices` (0 <= i < len; IndexError otherwise); bytes are shared.
        """

    def filter(self, mask: Sequence[bool] | Any) -> StringTensor:
        """
        Strings whose mask entry is True (mask of the same length); bytes are shared.
        """

    def __eq__(self, other: object) -> bool: ...
    def __ne__(self, other: object) -> bool: ...
    @property
    def nbytes(self) -> int:
        """
        Bytes referenced: 16 per view, every data buffer in full (shared with slices), and the kept offsets.
        """

    @property
    def is_contiguous(self) -> bool:
        """
        Whether offsets + payload are kept (offsets_and_payload, to_torch and utf8 exports then copy no string bytes).
        """

    @property
    def views(self) -> numpy.typing.NDArray[numpy.uint8]:
        """The (n, 16) uint8 view buffer (Arrow utf8_view), read-only, no copy."""

    @property
    def data_buffers(self) -> list[numpy.typing.NDArray[numpy.uint8]]:
        """
        The data buffers the views point into, as read-only uint8 arrays (no copy).
        """

    def offsets_and_payload(
        self,
    ) -> tuple[
        numpy.typing.NDArray[numpy.uint32] | numpy.typing.NDArray[numpy.uint64],
        numpy.typing.NDArray[numpy.uint8],
    ]:
        """
        (offsets, payload) as read-only NumPy arrays: n + 1 offsets starting at 0 (uint32, uint64 past 4 GiB - 1) and the UTF-8 bytes. No copy when is_contiguous (a slice rebases its offsets); otherwise built in one pass.
        """

    def compact(self) -> StringTensor:
        """
        A copy holding exactly these strings in one payload, with both layouts.
        """

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """
        Arrow PyCapsule export: utf8_view by default; utf8/large_utf8 (or the binary types) when requested. Zero-copy where the layout allows.
        """

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Arrow PyCapsule stream of one array (same types as __arrow_c_array__)."""

    def to_arrow(self, type: object = None) -> Any:
        """
        A pyarrow Array: utf8_view (default), 'utf8' or 'large_utf8'; zero-copy where the layout allows.
        """

    def to_polars(self, name: str = "") -> Any:
        """A polars Series (String) sharing the views and data buffers."""

    def to_numpy(self) -> Any:
        """A NumPy array of str (StringDType; object on NumPy < 2). Copies."""

    def to_torch(self, device: object = "cpu") -> tuple[Any, Any]:
        """
        (offsets, payload) torch tensors (uint32/uint64 and uint8) through DLPack; on CPU they share memory, device='cuda' moves each buffer in one transfer.
        """

    def __repr__(self) -> str: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickle support: rebuilt with from_buffers from offsets + payload."""

    def __hash__(self) -> int: ...

class PipelineRejection:
    """
    Why the pipeline dropped a document: the stage, its rule, and the measured value and threshold where the rule has them.
    """

    def __init__(
        self, stage: str, rule: str, value: float | None = None, threshold: float | None = None
    ) -> None: ...
    @property
    def stage(self) -> str: ...
    @property
    def rule(self) -> str: ...
    @property
    def value(self) -> float | None: ...
    @property
    def threshold(self) -> float | None: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __repr__(self) -> str: ...

class PipelineResult:
    """
    One batch after the pipeline: the kept texts, the keep mask, why each other document was dropped, the kept documents' fields and coordinates, and this batch's counters.
    """

    @property
    def texts(self) -> StringTensor: ...
    @property
    def keep(self) -> numpy.typing.NDArray[numpy.bool_]: ...
    @property
    def indices(self) -> numpy.typing.NDArray[numpy.int64]: ...
    @property
    def dropped_by(self) -> numpy.typing.NDArray[numpy.uint8]: ...
    @property
    def reasons(self) -> list[PipelineRejection | None]: ...
    @property
    def fields(self) -> dict[str, list[object]]: ...
    @property
    def coordinates(self) -> list[StreamCoordinate] | None: ...
    @property
    def end(self) -> StreamCoordinate | None: ...
    @property
    def counters(self) -> dict[str, dict[str, int]]: ...
    @property
    def total(self) -> int:
        """Documents in the input batch."""

    def export_arrow(self, text_column: str = "text", text_type: str = "string") -> object:
        """
        The kept documents as one Arrow record batch (text column, then the fields), an 'arrow_array_stream' PyCapsule; text_type: 'string', 'large_string' or 'string_view'. Field types follow docs/pipeline.md.
        """

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Arrow PyCapsule stream interface: export_arrow() with its defaults."""

    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...

class PipelineEngine:
    """
    The native engine behind FusedPipeline: runs a batch through the given stages in one call with the GIL released. Build it through luminamoon.data.FusedPipeline.
    """

    def __init__(
        self,
        cleaner: TextCleaner | None,
        quality: QualityFilter | None,
        exact_dedup: StreamDeduplicator | None,
        near_dedup: MinHashDeduplicator | None,
        pii: PIIMasker | None,
        threads: int = 0,
        language: LanguageFilter | None = None,
    ) -> None: ...
    def process(
        self,
        batch: object,
        fields: Mapping[str, Sequence[object]] | None = None,
        coordinates: Sequence[StreamCoordinate] | None = None,
    ) -> PipelineResult:
        """Runs every stage over the batch (see docs/pipeline.md)."""

    def stats(self) -> dict[str, dict[str, int]]:
        """The counters of every batch processed so far."""

class ShardPrefetcher:
    """
    Internal (ResumablePipeline): reads a ShardReader and runs a PipelineEngine on a native thread without the GIL, at most `depth` batches ahead.
    """

    def __init__(self, reader: ShardReader, engine: PipelineEngine | None, depth: int) -> None: ...
    def __iter__(self) -> ShardPrefetcher: ...
    def __next__(self) -> tuple[DocumentBatch, PipelineResult | None, int, int, list[ReadIssue]]:
        """
        The next batch, its result (None without an engine), the entries it staged in the exact and near deduplicators, and the reader issues it raised.
        """

    def close(self) -> None:
        """Stops the thread and waits for it; idempotent."""

"""StreamDeduplicator: exact deduplication by XXH3-64, staged then committed (SPEC 3.3, 4).

Pure-Python backend. A hash is *staged* when first seen and becomes *committed* only when the
attached tracker's commit has made it durable in the WAL, so a rollback (or a crash) forgets
exactly the documents of the uncommitted batches. Staging order is kept because the WAL is
written in that order and both backends must produce byte-identical WAL files.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import Any, TypeAlias

from ._arrow import is_arrow_object, iter_arrow_values
from ._nocopy import NoCopy
from .suggest import reject_unknown_options
from .tracker import StateTracker
from .xxh3 import xxh3_64_digest

__all__ = ["StreamDeduplicator", "xxh3_64"]

TextLike: TypeAlias = str | bytes | bytearray | memoryview
_OPTIONS = ("threads",)
_U32_MAX = 2**32 - 1


def _encode(text: object, where: str) -> bytes:
    if isinstance(text, str):
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"{where}: str cannot be encoded as UTF-8 ({exc.reason} at position "
                f"{exc.start}); lone surrogates are not text"
            ) from None
    if isinstance(text, bytes):
        return text
    try:
        view = memoryview(text)  # type: ignore[arg-type]  # any buffer, like the native module
    except TypeError:
        raise TypeError(f"{where}: expected str or bytes-like, got {type(text).__name__}") from None
    with view:
        if not view.c_contiguous:
            raise TypeError(f"{where}: expected a contiguous bytes-like object")
        return view.tobytes()


def xxh3_64(data: TextLike) -> int:
    """XXH3-64, seed 0, of a ``str`` (its UTF-8 bytes) or a bytes-like object."""
    return xxh3_64_digest(_encode(data, "xxh3_64"))


class StreamDeduplicator(NoCopy):
    """Exact dedup set with a staged and a committed stage; first occurrence wins.

    Attached to a tracker it is that tracker's first commit participant: the prepare step
    appends exactly the hashes staged at that moment to the WAL, and finish promotes exactly
    those, so documents staged by other threads during a commit stay staged for the next one.
    Thread-safe: every method takes the deduplicator's lock (a commit takes the tracker's
    first)."""

    def __init__(
        self, tracker: StateTracker | None = None, *, threads: int = 0, **options: Any
    ) -> None:
        reject_unknown_options("StreamDeduplicator", options, _OPTIONS)
        if not (
            isinstance(threads, int) and not isinstance(threads, bool) and 0 <= threads <= _U32_MAX
        ):
            raise ValueError(
                f"StreamDeduplicator: threads must be an int >= 0 (0 = all cores), got {threads!r}"
            )
        if tracker is not None and not isinstance(tracker, StateTracker):
            raise TypeError(
                "StreamDeduplicator: tracker must be a StateTracker or None, got "
                f"{type(tracker).__name__}"
            )
        # The fallback hashes on the calling thread; ``threads`` only exists for API parity.
        self._threads = threads
        self._lock = threading.Lock()
        self._committed: set[int] = set()
        self._staged: set[int] = set()
        self._staged_order: list[int] = []
        self._prepared = 0  # staged hashes (a prefix of _staged_order) the WAL append wrote
        self._commit_limit: int | None = None  # limit_next_commit; None = every staged hash
        self._tracker = tracker
        if tracker is not None:
            self._committed.update(tracker._attach(self))

    # -- the tracker's side of the commit protocol (CommitParticipant) ----------------------

    def _has_staged(self) -> bool:
        return bool(self._staged_order)

    def _companion_kind(self) -> str:
        return ""  # the WAL's committed length is the slot's dedup_count: nothing to register

    def _prepare_commit(self, epoch: int, durable: bool) -> None:
        tracker = self._tracker
        with self._lock:
            # Other threads may keep staging during the WAL write: they only append, and
            # dropping staged hashes needs the tracker's lock, which the committer holds.
            limit = self._commit_limit
            hashes = self._staged_order[:] if limit is None else self._staged_order[:limit]
            self._prepared = 0
        if tracker is None:
            return
        tracker._append_wal(hashes)
        self._prepared = len(hashes)

    def _finish_commit(self) -> None:
        with self._lock:
            done = self._staged_order[: self._prepared]
            self._committed.update(done)
            if self._prepared == len(self._staged_order):
                self._staged = set()
                self._staged_order = []
            else:
                self._staged.difference_update(done)
                del self._staged_order[: self._prepared]
            self._prepared = 0
            self._commit_limit = None

    def limit_next_commit(self, count: int) -> None:
        """The next commit of the attached tracker writes and promotes only the first ``count``
        staged hashes; the rest stay staged. Cleared by that commit and by a rollback."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise TypeError(f"limit_next_commit: count must be an int >= 0, got {count!r}")
        with self._lock:
            self._commit_limit = count

    def _tracker_closed(self) -> None:
        pass  # ``tracker`` reports None once the tracker is closed

    def _staged_count_raw(self) -> int:
        return len(self._staged_order)

    def _promote_staged(self) -> None:
        with self._lock:
            limit = self._commit_limit
            self._commit_limit = None
            if limit is not None and limit < len(self._staged_order):
                # limit_next_commit: only a prefix is committed; the rest stays staged.
                done = self._staged_order[:limit]
                self._committed.update(done)
                self._staged.difference_update(done)
                del self._staged_order[:limit]
                return
            self._committed.update(self._staged_order)
            self._staged = set()
            self._staged_order = []

    def _drop_staged(self) -> None:
        with self._lock:
            self._staged = set()
            self._staged_order = []
            self._prepared = 0
            self._commit_limit = None

    def _stage(self, digest: int) -> bool:
        if digest in self._committed or digest in self._staged:
            return False
        self._staged.add(digest)
        self._staged_order.append(digest)
        return True

    # -- public API -------------------------------------------------------------------------

    @property
    def tracker(self) -> StateTracker | None:
        """The attached tracker; None when detached or once that tracker is closed."""
        if self._tracker is not None and self._tracker.closed:
            return None
        return self._tracker

    @property
    def staged_count(self) -> int:
        return len(self._staged_order)

    @property
    def committed_count(self) -> int:
        return len(self._committed)

    def __len__(self) -> int:
        return len(self._committed) + len(self._staged_order)

    def memory_bytes(self) -> int:
        """Bytes held by the sets and the staging list (``sys.getsizeof``, ints included)."""
        int_bytes = sum(sys.getsizeof(h) for h in self._staged_order) + sum(
            sys.getsizeof(h) for h in self._committed
        )
        return (
            sys.getsizeof(self._committed)
            + sys.getsizeof(self._staged)
            + sys.getsizeof(self._staged_order)
            + int_bytes
        )

    def is_unique(self, text: TextLike) -> bool:
        """True (and staged) when ``text`` was neither committed nor staged before."""
        digest = xxh3_64_digest(_encode(text, "is_unique"))
        with self._lock:
            return self._stage(digest)

    def contains(self, text: TextLike) -> bool:
        """Whether ``text`` is committed or staged; stages nothing."""
        digest = xxh3_64_digest(_encode(text, "contains"))
        with self._lock:
            return digest in self._committed or digest in self._staged

    def filter_batch(self, texts: Sequence[TextLike] | Any) -> list[bool]:
        """Keep mask of ``texts``; every kept document is staged, in batch order.

        Everything is converted and hashed before anything is staged, so an error (a null, an
        element of the wrong type) leaves the deduplicator exactly as it was.
        """
        if isinstance(texts, (list, tuple)):
            raw = [_encode(text, f"texts[{i}]") for i, text in enumerate(texts)]
        elif is_arrow_object(texts):
            raw = iter_arrow_values(texts)
        else:
            raise TypeError(
                "filter_batch: texts must be a list or tuple of str/bytes-like, or an Arrow "
                "array or stream (__arrow_c_array__ / __arrow_c_stream__), got "
                f"{type(texts).__name__}"
            )
        digests = [xxh3_64_digest(item) for item in raw]
        with self._lock:
            return [self._stage(digest) for digest in digests]

    def commit(self) -> None:
        """Attached: ``tracker.commit()`` (durable). Detached: staged -> committed in RAM."""
        if self._tracker is not None:
            self._tracker.commit()
        else:
            self._promote_staged()

    def rollback(self) -> None:
        """Attached: ``tracker.rollback()``. Detached: drop the staged hashes."""
        if self._tracker is not None:
            self._tracker.rollback()
        else:
            self._drop_staged()

    def __repr__(self) -> str:
        attached = ", attached" if self._tracker is not None else ""
        return (
            f"StreamDeduplicator(committed={len(self._committed)}, "
            f"staged={len(self._staged_order)}{attached})"
        )

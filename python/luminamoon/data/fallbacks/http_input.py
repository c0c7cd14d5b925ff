"""Random access to a shard's bytes, pure-Python backend: a local file (``os.pread``) or an
http(s) URL through ``http.client`` (HTTP/1.1 Range requests, bounded retries with exponential
backoff on 5xx / timeouts / connection errors, the first response's ETag / Last-Modified required
of every later one). Same requests, rules and messages as native (src/readers/http_input.cc).
"""

from __future__ import annotations

import http.client
import os
import time
import urllib.parse
from typing import Final

from .xxh3 import xxh3_64_digest

__all__ = ["FileInput", "HttpInput", "InputError", "is_url", "name_for_format", "open_http_input"]

FETCH_BYTES: Final = 4 << 20
MAX_BACKOFF: Final = 60.0
MAX_REDIRECTS: Final = 5
_RANGE_IGNORED: Final = (
    "the server ignored the Range header (HTTP 200); http(s) shards need a server that "
    "supports Range requests"
)


class InputError(Exception):
    """A read that failed; ``str()`` is the reason."""


def is_url(path: str) -> bool:
    lowered = path[:8].lower()
    return lowered.startswith(("http://", "https://"))


def name_for_format(path: str) -> str:
    if not is_url(path):
        return path
    for i, ch in enumerate(path):
        if ch in "?#":
            return path[:i]
    return path


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


class FileInput:
    def __init__(self, fd: int, size: int, mtime_ns: int) -> None:
        self._fd = fd
        self.size = size
        self._mtime_ns = mtime_ns

    def pread(self, size: int, offset: int) -> bytes:
        try:
            return os.pread(self._fd, size, offset)
        except OSError as exc:
            raise InputError(exc.strerror or str(exc)) from None

    def identity(self) -> tuple[int, int]:
        return self.size, self._mtime_ns

    def validators(self) -> bytes:
        return b""

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class _Response:
    def __init__(self) -> None:
        self.transport_ok = False
        self.timed_out = False
        self.status = 0
        self.body = b""
        self.etag = ""
        self.last_modified = ""
        self.content_range = ""
        self.overflow = False


def _total_of(content_range: str) -> int | None:
    slash = content_range.rfind("/")
    digits = content_range[slash + 1 :] if slash >= 0 else ""
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    return int(digits)


class HttpInput:
    def __init__(self, url: str, retries: int, backoff: float, timeout: float) -> None:
        self._url = url
        self._retries = retries
        self._backoff = backoff
        self._timeout = timeout
        self.size = 0
        self._etag = ""
        self._last_modified = ""
        self._cache = b""
        self._cache_at = 0
        self._connection: http.client.HTTPConnection | None = None
        self._origin: tuple[str, str, int] | None = None

    # -- the first request ---------------------------------------------------------------------

    def open(self) -> str:
        ok, r, error = self._fetch(0, 0, check=False)
        if not ok:
            return error
        if r.status == 416:
            if _total_of(r.content_range) != 0:
                return "HTTP 416 for byte 0 of a non-empty file"
            self.size = 0
        elif r.status == 200:
            return _RANGE_IGNORED
        else:
            total = _total_of(r.content_range)
            if total is None:
                return "HTTP 206 without a valid Content-Range"
            self.size = total
            self._cache, self._cache_at = r.body, 0
        self._etag, self._last_modified = r.etag, r.last_modified
        return ""

    def pread(self, size: int, offset: int) -> bytes:
        if offset >= self.size or size == 0:
            return b""
        want = min(size, self.size - offset)
        if offset < self._cache_at or offset + want > self._cache_at + len(self._cache):
            last = min(self.size, offset + max(want, FETCH_BYTES)) - 1
            ok, r, error = self._fetch(offset, last, check=True)
            if not ok:
                raise InputError(error)
            if len(r.body) != last - offset + 1:
                raise InputError(
                    f"HTTP 206 with {len(r.body)} bytes for a range of {last - offset + 1}"
                )
            self._cache, self._cache_at = r.body, offset
        start = offset - self._cache_at
        return self._cache[start : start + want]

    def identity(self) -> tuple[int, int]:
        tag = (self._etag + "\n" + self._last_modified).encode("latin-1", "replace")
        return self.size, _signed64(xxh3_64_digest(tag))

    def validators(self) -> bytes:
        text = (
            f"LMHTTP 1\nsize {self.size}\netag {self._etag}\nlast-modified {self._last_modified}\n"
        )
        return text.encode("latin-1", "replace")

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    # -- requests ------------------------------------------------------------------------------

    def _changed_message(self) -> str:
        etag = self._etag or "none"
        modified = self._last_modified or "none"
        return (
            f"the remote shard changed while it was read (ETag {etag}, Last-Modified {modified} "
            "when first read); restart this shard"
        )

    def _fetch(self, first: int, last: int, *, check: bool) -> tuple[bool, _Response, str]:
        backoff = self._backoff
        attempts = self._retries + 1
        attempt = 1
        while True:
            r = self._perform(first, last, check)
            if r.overflow:
                return (
                    False,
                    r,
                    (
                        "the server ignored the Range header; http(s) shards need a server that "
                        "supports Range requests"
                    ),
                )
            if not r.transport_ok:
                failure = "timeout" if r.timed_out else "connection error"
            elif r.status >= 500:
                failure = f"HTTP {r.status}"
            elif r.status == 412 and check:
                return False, r, self._changed_message()
            elif r.status >= 400 and r.status != 416:
                return False, r, f"HTTP {r.status}"
            else:
                if (
                    check
                    and r.status == 206
                    and (
                        (self._etag and r.etag != self._etag)
                        or (
                            not self._etag
                            and self._last_modified
                            and r.last_modified != self._last_modified
                        )
                    )
                ):
                    return False, r, self._changed_message()
                if check and r.status == 200:
                    return False, r, _RANGE_IGNORED
                return True, r, ""
            if attempt >= attempts:
                plural = "attempt" if attempts == 1 else "attempts"
                return False, r, f"{failure} after {attempts} {plural}"
            time.sleep(min(backoff, MAX_BACKOFF))
            backoff *= 2
            attempt += 1

    def _connect(self, url: str) -> tuple[http.client.HTTPConnection, str]:
        parts = urllib.parse.urlsplit(url)
        scheme = parts.scheme.lower()
        host = parts.hostname or ""
        port = parts.port or (443 if scheme == "https" else 80)
        origin = (scheme, host, port)
        if self._connection is None or self._origin != origin:
            self.close()
            cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
            self._connection = cls(host, port, timeout=self._timeout)
            self._origin = origin
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        return self._connection, target

    def _perform(self, first: int, last: int, check: bool) -> _Response:
        r = _Response()
        limit = last - first + 1
        headers = {"Range": f"bytes={first}-{last}", "Accept-Encoding": "identity"}
        if check and self._etag:
            headers["If-Match"] = self._etag
        elif check and self._last_modified:
            headers["If-Unmodified-Since"] = self._last_modified
        url = self._url
        try:
            for _ in range(MAX_REDIRECTS + 1):
                connection, target = self._connect(url)
                connection.request("GET", target, headers=headers)
                response = connection.getresponse()
                location = response.getheader("Location")
                if response.status in {301, 302, 303, 307, 308} and location:
                    response.read()
                    url = urllib.parse.urljoin(url, location)
                    continue
                r.status = response.status
                r.etag = (response.getheader("ETag") or "").strip()
                r.last_modified = (response.getheader("Last-Modified") or "").strip()
                r.content_range = (response.getheader("Content-Range") or "").strip()
                if response.status not in {200, 206}:
                    response.read()  # an error page: dropped (the connection can be reused)
                    body = b""
                else:
                    body = response.read(limit + 1)
                    if len(body) > limit:
                        r.overflow = True
                        self.close()
                        return r
                r.body = body
                r.transport_ok = True
                if response.will_close:
                    self.close()
                return r
            r.status = 310  # too many redirects: reported as a connection error by status
            r.transport_ok = False
        except TimeoutError:
            r.timed_out = True
            self.close()
        except (OSError, http.client.HTTPException):
            self.close()
        return r


def open_http_input(
    url: str, retries: int, backoff: float, timeout: float
) -> tuple[HttpInput | None, str]:
    source = HttpInput(url, retries, backoff, timeout)
    error = source.open()
    if error:
        source.close()
        return None, error
    return source, ""

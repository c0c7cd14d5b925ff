"""A threaded HTTP/1.1 server on 127.0.0.1 for the reader tests: serves in-memory files with
single-range ``Range`` requests (206 + Content-Range, 416 past the end), ETag / Last-Modified and
``If-Match`` (412 when the file changed), logs every request's path and Range header, and injects
faults on demand (``"500"``/``"503"`` statuses, ``"reset"``: the connection closed with a TCP RST
and no response; ``"stall"``: one second of silence before the answer, for timeouts)."""

from __future__ import annotations

import re
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_RANGE = re.compile(r"bytes=(\d+)-(\d*)$")


class RangeServer:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.etags: dict[str, str] = {}
        self.log: list[tuple[str, str | None]] = []
        self.faults: list[str] = []
        self._lock = threading.Lock()
        self._version = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet

            def do_GET(self) -> None:
                try:
                    owner._handle(self)
                except OSError:  # the client gave up (a timeout test): nothing to answer
                    self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/{name}"

    def put(self, name: str, data: bytes) -> None:
        """Adds or replaces a file; a replacement gets a new ETag."""
        with self._lock:
            self._version += 1
            self.files["/" + name] = data
            self.etags["/" + name] = f'"v{self._version}-{len(data)}"'

    def ranges(self, name: str) -> list[str | None]:
        with self._lock:
            return [r for p, r in self.log if p == "/" + name]

    def clear_log(self) -> None:
        with self._lock:
            self.log.clear()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self.log.append((h.path, h.headers.get("Range")))
            fault = self.faults.pop(0) if self.faults else None
            data = self.files.get(h.path)
            etag = self.etags.get(h.path, "")
        if fault == "reset":
            # SO_LINGER 0: close() sends RST, the client sees a connection reset.
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.close_connection = True
            h.connection.close()
            return
        if fault == "stall":
            time.sleep(1.0)
            fault = None
        if fault is not None:
            self._send(h, int(fault), b"injected fault\n")
            return
        if data is None:
            self._send(h, 404, b"not found\n")
            return
        if_match = h.headers.get("If-Match")
        if if_match is not None and if_match != etag:
            self._send(h, 412, b"precondition failed\n")
            return
        extra = {"ETag": etag, "Last-Modified": "Tue, 01 Dec 2026 12:00:00 GMT"}
        requested = h.headers.get("Range")
        match = _RANGE.match(requested or "")
        if match is None:
            self._send(h, 200, data, extra)
            return
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else len(data) - 1
        if first >= len(data):
            extra["Content-Range"] = f"bytes */{len(data)}"
            self._send(h, 416, b"", extra)
            return
        last = min(last, len(data) - 1)
        extra["Content-Range"] = f"bytes {first}-{last}/{len(data)}"
        self._send(h, 206, data[first : last + 1], extra)

    @staticmethod
    def _send(
        h: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str] | None = None
    ) -> None:
        h.send_response(status)
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

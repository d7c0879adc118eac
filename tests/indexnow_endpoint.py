"""A real local IndexNow endpoint for the tests: answers POSTs from a script and records their bodies."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: IndexNowEndpoint

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        status, headers = self.server.answer(self.path, self.headers.get("Content-Type", ""), body)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


class IndexNowEndpoint(ThreadingHTTPServer):
    """``POST /indexnow`` on 127.0.0.1: answers ``script`` in turn (then ``status``), records every POST."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.status = 200
        #: Answers given first, one per POST: (status, headers).
        self.script: list[tuple[int, dict[str, str]]] = []
        self.posts: list[dict[str, Any]] = []  # JSON bodies of every POST, retries included
        self.paths: list[str] = []
        self.content_types: list[str] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/indexnow"

    def answer(self, path: str, content_type: str, body: bytes) -> tuple[int, dict[str, str]]:
        with self._lock:
            self.posts.append(json.loads(body))
            self.paths.append(path)
            self.content_types.append(content_type)
            return self.script.pop(0) if self.script else (self.status, {})

    def submitted(self) -> list[str]:
        """Every URL the POSTs carried, in order (a retried batch counts each time)."""
        return [url for post in self.posts for url in post["urlList"]]

    def start(self) -> IndexNowEndpoint:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self._thread.join(timeout=5)
        self.server_close()


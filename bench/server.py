"""A fast local server for the generated site: nginx if installed, else a small asyncio server.

The crawlers are measured, not the server: nginx serves tens of thousands of small files per
second on one core, the fallback a few thousand, and ``measure_rate`` checks it with wrk
(or a keep-alive client) before the crawls run. Both answer a recrawl's conditional requests
as nginx does: an ETag of the file's mtime and size, Last-Modified, and 304 to a matching
If-None-Match or, without one, to an If-Modified-Since no older than the file.
"""

from __future__ import annotations

import asyncio
import email.utils
import http.client
import mimetypes
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from urllib.parse import unquote

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)

_NGINX_CONF = """\
worker_processes 1;
daemon off;
master_process on;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    types {{ text/html html; text/css css; text/plain txt; application/javascript js; application/json json;
             application/xml xml; image/svg+xml svg; image/png png; image/jpeg jpg; image/gif gif; }}
    default_type application/octet-stream;
    client_body_temp_path {work}/body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    server {{
        listen {host}:{port};
        root {root};
        index index.html;
{redirects}
    }}
}}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(port: int, timeout: float = 10.0, host: str = "127.0.0.1") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the server did not listen on {host}:{port} within {timeout} s")


@contextmanager
def nginx(root: Path, redirects: dict[str, str], work: Path, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``root`` with nginx (one worker: the crawler needs the other core) on ``host``."""
    assert NGINX is not None
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    lines = "\n".join(f"        location = {old} {{ return 301 {new}; }}" for old, new in redirects.items())
    conf = work / "nginx.conf"
    conf.write_text(_NGINX_CONF.format(work=work, host=host, port=port, root=root, redirects=lines))
    if os.geteuid() == 0:  # nginx would switch its worker to "nobody"; keep it able to read the site
        conf.write_text("user root;\n" + conf.read_text())
    process = subprocess.Popen([NGINX, "-c", str(conf), "-p", str(work)], stderr=subprocess.PIPE)
    try:
        _wait_for(port, host=host)
        yield f"http://{host}:{port}"
    finally:
        process.send_signal(signal.SIGQUIT)  # graceful stop of master and worker
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class _StaticProtocol(asyncio.Protocol):
    """HTTP/1.1 keep-alive GET/HEAD of static files: just enough for a crawler, and fast."""

    def __init__(self, root: Path, redirects: dict[str, str]) -> None:
        self.root = root
        self.redirects = redirects
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while b"\r\n\r\n" in self.buffer:
            head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
            request_line, *lines = head.decode("latin-1").split("\r\n")
            method, target = request_line.split(" ", 2)[:2]
            fields = (line.split(":", 1) for line in lines if ":" in line)
            self._answer(method, target, {name.strip().lower(): value.strip() for name, value in fields})

    def _answer(self, method: str, target: str, fields: dict[str, str]) -> None:
        assert self.transport is not None
        # Percent-decoded as nginx does: real sites have paths with spaces and UTF-8 characters.
        path = unquote(target.split("?", 1)[0].split("#", 1)[0])
        if path in self.redirects:
            self._send(301, b"", "text/html", [("Location", self.redirects[path])], method)
            return
        file = (self.root / (path.lstrip("/") or "index.html")).resolve()
        if file.is_dir():
            file = file / "index.html"
        if not file.is_relative_to(self.root) or not file.is_file():
            self._send(404, b"<h1>Not found</h1>", "text/html", [], method)
            return
        stat = file.stat()
        validators = [("Last-Modified", email.utils.formatdate(stat.st_mtime, usegmt=True)),
                      ("ETag", f'"{int(stat.st_mtime):x}-{stat.st_size:x}"')]
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        if not_modified(fields, validators[1][1], int(stat.st_mtime)):
            self._send(304, b"", kind, validators, method)
            return
        self._send(200, file.read_bytes(), kind, validators, method)

    def _send(self, status: int, body: bytes, kind: str, headers: list[tuple[str, str]], method: str) -> None:
        assert self.transport is not None
        reason = {200: "OK", 301: "Moved Permanently", 304: "Not Modified", 404: "Not Found"}[status]
        lines = [f"HTTP/1.1 {status} {reason}", f"Content-Type: {kind}"]
        if status != 304:  # a 304 has no body, and its Content-Length would be the full file's
            lines.append(f"Content-Length: {len(body)}")
        lines += [f"{name}: {value}" for name, value in headers]
        self.transport.write(("\r\n".join(lines) + "\r\n\r\n").encode() + (b"" if method == "HEAD" else body))


def not_modified(fields: dict[str, str], etag: str, mtime: int) -> bool:
    """Whether a GET with these (lower-cased) request fields gets a 304 (RFC 9110 13.2.2)."""
    if "if-none-match" in fields:
        tags = [tag.strip().removeprefix("W/") for tag in fields["if-none-match"].split(",")]
        return "*" in tags or etag in tags
    since = email.utils.parsedate_tz(fields.get("if-modified-since", ""))  # None when absent or not a date
    return since is not None and mtime <= email.utils.mktime_tz(since)


@contextmanager
def python_server(root: Path, redirects: dict[str, str]) -> Iterator[str]:
    """Serve ``root`` from an asyncio loop on a thread of this process."""
    port = free_port()
    loop = asyncio.new_event_loop()
    root = root.resolve()
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        server = loop.run_until_complete(
            loop.create_server(lambda: _StaticProtocol(root, redirects), "127.0.0.1", port, backlog=512)
        )
        started.set()
        loop.run_forever()
        server.close()
        loop.run_until_complete(server.wait_closed())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def serve(root: Path, redirects: dict[str, str], work: Path, kind: str = "auto") -> tuple[str, AbstractContextManager[str]]:
    """The server to use: ("nginx" | "python", its context manager)."""
    if kind in ("auto", "nginx") and NGINX is not None:
        return "nginx", nginx(root, redirects, work)
    if kind == "nginx":
        sys.exit("nginx is not installed: apt-get install nginx-light, or use --server python")
    return "python", python_server(root, redirects)


def measure_rate(base: str, path: str, seconds: float = 3.0) -> tuple[float, str]:
    """Requests per second the server answers for one page: (rate, how it was measured)."""
    url = base + path
    wrk = shutil.which("wrk")
    if wrk:
        done = subprocess.run(
            [wrk, "-t1", "-c8", f"-d{seconds:.0f}s", url], capture_output=True, text=True, check=False
        )
        match = re.search(r"Requests/sec:\s+([\d.]+)", done.stdout)
        if match:
            return float(match.group(1)), "wrk -t1 -c8"
    # No wrk: one keep-alive connection from this process (a lower bound of the server's rate).
    host, port = base.split("//", 1)[1].split(":")
    connection = http.client.HTTPConnection(host, int(port))
    count, deadline = 0, time.monotonic() + seconds
    started = time.monotonic()
    while time.monotonic() < deadline:
        connection.request("GET", path)
        connection.getresponse().read()
        count += 1
    connection.close()
    return count / (time.monotonic() - started), "one keep-alive Python client"

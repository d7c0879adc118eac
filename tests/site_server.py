"""A real local HTTP server for crawl tests, and helpers to write the pages it serves.

``SiteServer`` is a ``ThreadingHTTPServer`` on 127.0.0.1 (port 0: the kernel picks a
free one) that answers GET and HEAD from a declarative route table (``Route``s of
tests/site_spec.py, or a whole ``SiteSpec``) and records every request it receives, so
tests can assert what a crawl did and did not fetch.
"""

from __future__ import annotations

import hashlib
import re
import socket
import threading
from collections.abc import Iterable, Mapping
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Final, Self
from urllib.parse import quote, unquote

from tests.site_spec import Responder, Route, SiteRequest, SiteSpec

HTML: Final = "text/html; charset=utf-8"

# Characters left alone when a route key is percent-encoded: RFC 3986 reserved and
# unreserved characters plus "%" itself, so an already-encoded key stays as it is.
_TARGET_SAFE: Final = "/?#[]@!$&'()*+,;=:%-._~"


def encode_target(target: str) -> str:
    """Percent-encode a path+query the way a conforming client sends it (UTF-8, %20)."""
    return quote(target, safe=_TARGET_SAFE)


NOT_FOUND: Final = Route(
    status=404,
    headers=(("Content-Type", HTML),),
    body=b"<!DOCTYPE html><title>Not found</title><p>No such page.</p>",
)


class _Handler(BaseHTTPRequestHandler):
    """Answers from the server's route table; HTTP/1.1 with Content-Length keeps connections alive."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, the client's delayed
    # ACK adds ~40 ms to every response and a 3,000-page crawl crawls.
    disable_nagle_algorithm = True
    server: SiteServer

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def _answer(self, *, send_body: bool) -> None:
        request = SiteRequest(
            method=self.command,
            target=self.path,
            host=self.headers.get("Host", ""),
            headers=tuple(self.headers.items()),
        )
        self.server.record(request)
        route = self.server.with_validators(self.server.resolve(request), request)
        if route.drop:
            # Nothing written and the socket closed: the client sees a dropped connection.
            self.close_connection = True
            return
        self.send_response_only(route.status)
        names = {name.lower() for name, _ in route.headers}
        if "date" not in names:
            self.send_header("Date", self.date_time_string())
        self.send_header("Server", "sitemap-fixture")
        for name, value in route.headers:
            self.send_header(name, value)
        # RFC 9110 8.6: no Content-Length (and no body) on 1xx, 204 and 304 responses.
        has_body = not (route.status < 200 or route.status in (204, 304))
        if has_body:
            self.send_header("Content-Length", str(len(route.body)))
        self.end_headers()
        if send_body and has_body and route.body:
            self.wfile.write(route.body)

    def log_message(self, format: str, *args: object) -> None:
        # The request log is the recorded list; stderr noise would bury pytest's output.
        return


class SiteServer(ThreadingHTTPServer):
    """A local HTTP server serving a route table and recording every request."""

    daemon_threads = True
    # A crawler opens several connections at once; the default backlog of 5 drops some.
    request_queue_size = 128

    def __init__(
        self,
        routes: Mapping[str, Route] | None = None,
        dynamic: Iterable[tuple[re.Pattern[str], Responder]] = (),
        host: str = "127.0.0.1",
    ) -> None:
        super().__init__((host, 0), _Handler)
        self.host = host
        self.routes: dict[str, Route] = dict(routes or {})
        self.dynamic: list[tuple[re.Pattern[str], Responder]] = list(dynamic)
        self._lock = threading.Lock()
        self._requests: list[SiteRequest] = []
        self._thread: threading.Thread | None = None
        #: Give every 200 answer with a body an ETag and answer 304 to a matching If-None-Match,
        #: as static file servers (nginx, Apache) do.
        self.validators = False

    @property
    def port(self) -> int:
        """The port the kernel gave us."""
        return int(self.server_address[1])

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash; another address when the server was given one)."""
        return f"http://{self.host}:{self.port}"

    def serve(self, spec: SiteSpec) -> None:
        """Serve a fixture site (replaces the route table)."""
        self.routes = dict(spec.routes)
        self.dynamic = list(spec.dynamic)

    def resolve(self, request: SiteRequest) -> Route:
        """The route for a request: exact key, then the canonical encoding, then dynamic."""
        target = request.target
        route = self.routes.get(target)
        if route is None:
            # A real server decodes the path, so %e9 and %E9 name one page; do the same.
            route = self.routes.get(encode_target(unquote(target)))
        if route is not None:
            return route
        for pattern, responder in self.dynamic:
            if pattern.fullmatch(target):
                return responder(request)
        return NOT_FOUND

    def with_validators(self, route: Route, request: SiteRequest) -> Route:
        """The route as a static file server answers it: with an ETag, and 304 when the client has it."""
        if not self.validators or route.status != 200 or not route.body:
            return route
        if any(name.lower() == "etag" for name, _ in route.headers):
            return route
        etag = '"' + hashlib.sha256(route.body).hexdigest()[:16] + '"'
        asked = next((value for name, value in request.headers if name.lower() == "if-none-match"), None)
        if asked == etag:
            return Route(status=304, headers=(("ETag", etag),), body=b"")
        return Route(status=route.status, headers=(*route.headers, ("ETag", etag)), body=route.body)

    def resolve_target(self, target: str) -> Route:
        """The route a GET of ``target`` gets (without recording a request)."""
        return self.resolve(SiteRequest(method="GET", target=target, host="", headers=()))

    def record(self, request: SiteRequest) -> None:
        """Remember a request (called from handler threads)."""
        with self._lock:
            self._requests.append(request)

    @property
    def requests(self) -> list[SiteRequest]:
        """A copy of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def targets(self, method: str | None = None) -> list[str]:
        """The path+query of every request received (optionally of one method)."""
        return [r.target for r in self.requests if method is None or r.method == method]

    def clear(self) -> None:
        """Forget the requests recorded so far."""
        with self._lock:
            self._requests.clear()

    def start(self) -> Self:
        """Serve in a daemon thread until :meth:`stop`."""
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        if self._thread is not None:
            self.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ---------------------------------------------------------------------------
# Page bodies
# ---------------------------------------------------------------------------


def html_page(title: str, body: str = "", head: str = "") -> bytes:
    """A small UTF-8 HTML document."""
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title>{head}</head>\n<body>\n{body}\n</body></html>\n"
    ).encode()


def anchor(href: str, rel: str | None = None) -> str:
    """One ``<a>`` element; ``href`` is given as it must appear in HTML (already escaped)."""
    rel_attr = f' rel="{rel}"' if rel else ""
    return f'<a href="{href}"{rel_attr}>{href}</a>'


def links(*hrefs: str) -> str:
    """``<a href>`` elements for hrefs given as they must appear in HTML (already escaped)."""
    return "\n".join(anchor(href) for href in hrefs)

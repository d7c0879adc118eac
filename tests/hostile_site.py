"""A hostile fixture site: a real server on 127.0.0.1 whose pages try to exhaust, hang or mislead a crawl.

``HostileServer`` answers from a table of handlers that write the raw response
themselves (streamed 50 MB bodies, a body trickling one byte a second for ever, a
gzip bomb), so nothing here is held in memory or faked. ``build_hostile_site``
returns the table and, for every URL, what the crawl must make of it. The site
sends the crawl off its origin in every way it can: redirects to other schemes,
hosts and ports, ``<base href>``, meta refresh, a robots.txt that redirects, a
rendered page whose script navigates away. ``off_origin`` is a second server the
test checks received nothing.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Final, Self

from tests.site_server import html_page, links

#: Bytes of the oversized pages: well past the crawl's DOWNLOAD_MAXSIZE.
HUGE_BYTES: Final = 50 * 1024 * 1024
#: Bytes the gzip bomb inflates to (about 200 KB on the wire).
BOMB_BYTES: Final = 256 * 1024 * 1024
#: Links on the page with very many links.
MANY_LINKS: Final = 100_000

Handler = Callable[["_Handler"], None]


@dataclass(frozen=True)
class HostileSite:
    """The routes of the hostile site and what the crawl must make of each URL."""

    routes: dict[str, Handler]
    listed: set[str]  # path of every decent page, which must be listed
    excluded: dict[str, str]  # path -> exclusion reason the report must give
    never_fetched: set[str] = field(default_factory=set)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: HostileServer

    def do_GET(self) -> None:
        self.server.record(self.command, self.path, self.headers.get("Host", ""))
        handler = self.server.routes.get(self.path.split("#")[0])
        if handler is None:
            self.answer(404, b"<title>Not found</title>")
            return
        try:
            handler(self)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the crawler gave up on this response: as it should

    def answer(self, status: int, body: bytes, content_type: str = "text/html; charset=utf-8", **headers: str) -> None:
        self.send_response_only(status)
        self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, location: str, status: int = 302) -> None:
        self.answer(status, b"", Location=location)

    def log_message(self, format: str, *args: object) -> None:
        return


class HostileServer(ThreadingHTTPServer):
    """Serves the hostile site on 127.0.0.1 (a free port) and records every request with its Host."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes: dict[str, Handler] = {}
        self._lock = threading.Lock()
        self.requests: list[tuple[str, str, str]] = []
        self.stop_streams = threading.Event()
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def record(self, method: str, target: str, host: str) -> None:
        with self._lock:
            self.requests.append((method, target, host))

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop_streams.set()  # ends the trickle, so that the serving thread can stop
        self.shutdown()
        self._thread.join(timeout=5)
        self.server_close()


# ---------------------------------------------------------------------------
# Responses that try to exhaust the crawler
# ---------------------------------------------------------------------------


def _huge(with_length: bool) -> Handler:
    def handle(h: _Handler) -> None:
        h.send_response_only(200)
        h.send_header("Content-Type", "text/html; charset=utf-8")
        if with_length:
            h.send_header("Content-Length", str(HUGE_BYTES))
        else:
            h.send_header("Connection", "close")  # the body ends when the connection does
            h.close_connection = True
        h.end_headers()
        chunk = b"<p>" + b"x" * 65_530 + b"</p>\n"
        sent = 0
        while sent < HUGE_BYTES and not h.server.stop_streams.is_set():
            h.wfile.write(chunk)
            sent += len(chunk)

    return handle


def _trickle(h: _Handler) -> None:
    h.send_response_only(200)
    h.send_header("Content-Type", "text/html; charset=utf-8")
    h.send_header("Connection", "close")  # no length: the body ends when the connection does
    h.close_connection = True
    h.end_headers()
    h.wfile.write(b"<!DOCTYPE html><title>slow</title>")
    h.wfile.flush()
    while not h.server.stop_streams.wait(1.0):  # one byte a second, for ever
        h.wfile.write(b" ")
        h.wfile.flush()


def _gzip_bomb() -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip framing
    block = b"\0" * (1024 * 1024)
    parts = [compressor.compress(b"<!DOCTYPE html><title>bomb</title>")]
    parts += [compressor.compress(block) for _ in range(BOMB_BYTES // len(block))]
    parts.append(compressor.flush())
    return b"".join(parts)


# ---------------------------------------------------------------------------
# The site
# ---------------------------------------------------------------------------


def _page(body: bytes, content_type: str = "text/html; charset=utf-8") -> Handler:
    return lambda h: h.answer(200, body, content_type)


def _to(location: str, status: int = 302) -> Handler:
    return lambda h: h.redirect(location, status)


def _redirect_chain(h: _Handler) -> None:
    number = int(h.path.rsplit("/", 1)[1])
    h.redirect(f"/chain/{number + 1}", 301)


_OFF_SCRIPT: Final = '<script src="/render/off.js"></script>'


def build_hostile_site(origin: str, off_origin: str) -> HostileSite:
    """The hostile site on ``origin``; every way off it points at ``off_origin`` or elsewhere."""
    port = origin.rsplit(":", 1)[1]
    routes: dict[str, Handler] = {}
    listed: set[str] = set()
    excluded: dict[str, str] = {}

    def decent(path: str, body: bytes, content_type: str = "text/html; charset=utf-8") -> None:
        routes[path] = _page(body, content_type)
        listed.add(path)

    for n in range(1, 6):
        decent(f"/ok/{n}", html_page(f"Decent page {n}"))
    for child in ("charset", "meta-charset", "bad-utf8", "nul", "broken", "many", "base", "rendered", "framed"):
        decent(f"/ok/{child}-child", html_page(f"Reached from the {child} page"))

    # Bogus charsets, NUL bytes, broken markup: still pages, and their links are still found.
    decent("/charset/bogus", html_page("Bogus charset", links("/ok/charset-child")), "text/html; charset=x-no-such-9")
    decent(
        "/charset/meta-bogus",
        b'<html><head><meta charset="utf-999"><title>meta</title></head><body><a href="/ok/meta-charset-child">c</a>',
        "text/html",
    )
    decent("/charset/bad-utf8", b"<title>\xff\xfe\xc3(</title>\x80\x81<a href='/ok/bad-utf8-child'>\xe9t\xe9</a>")
    decent("/nul", b"<title>N\0U\0L</title>\0\0<p>\0</p><a href=\"/ok/nul-child\">x\0</a>\0" * 3)
    decent("/broken", b"<html><body><div><p><table><tr><td><a href=/ok/broken-child>b<</td><b><i></b></i><a href=\"")

    # 100,000 links: fragments of one page, off-site URLs, unsafe schemes, and one new page.
    many = [f"/ok/1#n{n}" for n in range(MANY_LINKS // 4)]
    many += [f"{off_origin}/many/{n}" for n in range(MANY_LINKS // 4)]
    many += [f"http://169.254.169.254/latest/{n}" for n in range(MANY_LINKS // 4)]
    many += [f"javascript:go({n})" for n in range(MANY_LINKS // 4 - 1)]
    many.append("/ok/many-child")
    decent("/links/many", html_page("Many links", links(*many)))

    # <base href> pointing off the site: relative links resolve there and are not followed.
    decent("/base/off-site", html_page("Base", links("a", "b/c", "/elsewhere", f"{origin}/ok/base-child"), f'<base href="{off_origin}/based/">'))
    decent("/base/metadata", html_page("Base", links("x", "y"), '<base href="http://169.254.169.254/">'))
    decent("/base/file", html_page("Base", links("passwd", "shadow"), '<base href="file:///etc/">'))

    # Pages a browser renders, whose scripts try to take the browser off the site.
    navigate = (
        "document.getElementById('app').innerHTML = '<a href=\"/ok/1\">one</a>"
        f"<img src=\"{off_origin}/img.png\">';"
        f"fetch('{off_origin}/fetch').catch(function () {{}});"
        f"setTimeout(function () {{ location.href = '{off_origin}/navigated'; }}, 10);"
    )
    # The browser leaves the page: its static HTML is judged instead, and its links followed.
    decent("/render/escape", html_page("App", f'<div id="app"></div><script>{navigate}</script>{links("/ok/rendered-child")}'))
    frame = (
        "document.getElementById('app').innerHTML = '<a href=\"/ok/framed-child\">child</a>"
        f"<iframe src=\"{off_origin}/frame\"></iframe><iframe src=\"/render/off-frame\"></iframe>';"
    )
    decent("/render/frames", html_page("App", f'<div id="app"></div><script>{frame}</script>', _OFF_SCRIPT))
    # Same-origin resources that redirect away: Playwright does not route what a redirect requests.
    routes["/render/off.js"] = _to(f"{off_origin}/off.js")
    routes["/render/off-frame"] = _to(f"{off_origin}/off-frame")

    # Bounded by the crawl's limits, and excluded with a reason that says so.
    routes["/huge"] = _huge(with_length=True)
    routes["/huge/chunked"] = _huge(with_length=False)
    excluded.update({"/huge": "too_large", "/huge/chunked": "too_large"})
    bomb = _gzip_bomb()
    routes["/bomb"] = lambda h: h.answer(200, bomb, Content_Encoding="gzip")
    excluded["/bomb"] = "too_large"
    routes["/trickle"] = _trickle
    excluded["/trickle"] = "timeout"

    # Redirect loops and an endless chain.
    routes["/loop/a"], routes["/loop/b"], routes["/loop/self"] = _to("/loop/b"), _to("/loop/a"), _to("/loop/self")
    excluded.update({"/loop/a": "redirect", "/loop/self": "redirect"})
    for n in range(40):
        routes[f"/chain/{n}"] = _redirect_chain
    excluded["/chain/0"] = "redirect"

    # Redirects off the origin: other schemes, hosts, ports, the cloud metadata address.
    off_site = {
        "/redirect/file": "file:///etc/passwd",
        "/redirect/ftp": f"ftp://127.0.0.1:{port}/ok/1",
        "/redirect/data": "data:text/html,<a href='/ok/1'>x</a>",
        "/redirect/javascript": "javascript:alert(1)",
        "/redirect/gopher": f"gopher://127.0.0.1:{port}/",
        "/redirect/metadata": "http://169.254.169.254/latest/meta-data/",
        "/redirect/metadata-ipv6": "http://[fd00:ec2::254]/latest/meta-data/",
        "/redirect/off-origin": f"{off_origin}/redirected",
        "/redirect/localhost": f"http://localhost:{port}/ok/2",
        "/redirect/https": f"https://127.0.0.1:{port}/ok/3",
        "/redirect/protocol-relative": f"//{off_origin.split('//', 1)[1]}/relative",
    }
    for path, location in off_site.items():
        routes[path] = _to(location, 301)
        excluded[path] = "redirect"
    routes["/refresh/off-origin"] = _page(
        html_page("Refresh", head=f'<meta http-equiv="refresh" content="0; url={off_origin}/refreshed">')
    )
    excluded["/refresh/off-origin"] = "redirect"
    # robots.txt, and the sitemap it names, on another origin: neither is needed.
    routes["/robots.txt"] = _to(f"{off_origin}/robots.txt", 301)

    # The children of the odd pages are linked from them only: the crawl must find them there.
    every = sorted(path for path in {*listed, *excluded} if not path.endswith("-child"))
    home = html_page("Hostile home", links(*every))
    routes["/"] = _page(home)
    listed.add("/")
    never = {f"/chain/{n}" for n in range(21, 40)}
    return HostileSite(routes=routes, listed=listed, excluded=excluded, never_fetched=never)

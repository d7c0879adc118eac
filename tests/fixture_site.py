"""A real local HTTP server for crawl tests, and the fixture sites it serves.

``SiteServer`` is a ``ThreadingHTTPServer`` on 127.0.0.1 (port 0: the kernel picks a
free one) that answers GET and HEAD from a declarative route table and records every
request it receives, so tests can assert what a crawl did and did not fetch.

``build_case_site`` returns ONE site holding every case of issue 2, each route knowing
the outcome the sitemap spider must reach for it (``Listed`` with the exact lastmod, or
``Excluded`` with a reason); ``build_generated_site`` mixes the same cases into a site
of any size. ``SiteSpec.expected_listed()`` then gives the exact expected sitemap set.
"""

from __future__ import annotations

import itertools
import re
import socket
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Final, Self
from urllib.parse import quote, unquote, urlsplit

HTML: Final = "text/html; charset=utf-8"
PUBLIC_ORIGIN: Final = "https://www.example.com"

# Characters left alone when a route key is percent-encoded: RFC 3986 reserved and
# unreserved characters plus "%" itself, so an already-encoded key stays as it is.
_TARGET_SAFE: Final = "/?#[]@!$&'()*+,;=:%-._~"

ROBOTS_TXT: Final = b"""\
# Fixture robots.txt: a plain prefix rule and two RFC 9309 wildcard rules.
User-agent: *
Disallow: /private/
Disallow: /*?print=
Disallow: /*.php$
"""


def encode_target(target: str) -> str:
    """Percent-encode a path+query the way a conforming client sends it (UTF-8, %20)."""
    return quote(target, safe=_TARGET_SAFE)


# ---------------------------------------------------------------------------
# Expected outcomes
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Listed:
    """The URL must be in the sitemap once, with exactly this lastmod (None: no lastmod)."""

    lastmod: str | None = None


@dataclass(frozen=True)
class Excluded:
    """The URL must not be in the sitemap.

    ``reason`` is the report reason the contract asks for; ``also`` holds other reasons
    accepted where the contract leaves the choice open (a redirect loop may surface as
    ``redirect`` or ``duplicate``). ``reported`` says the JSON report must name the URL:
    False for URLs the spider may legitimately never look at (off-site links, the
    middle hops of a chain). ``lastmod`` is what the entry would carry if a setting let
    the page in (SITEMAP_INCLUDE_NOINDEX, SITEMAP_INCLUDE_CANONICALISED).
    """

    reason: str
    also: frozenset[str] = frozenset()
    reported: bool = True
    lastmod: str | None = None

    @property
    def reasons(self) -> frozenset[str]:
        """Every reason the report may give for this URL."""
        return self.also | {self.reason}


Outcome = Listed | Excluded


class _Same:
    """Marker: the outcome under ``public_url`` is the same as without it."""


SAME: Final = _Same()


# ---------------------------------------------------------------------------
# Routes and the server
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SiteRequest:
    """One request as the server received it."""

    method: str
    target: str
    host: str
    headers: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Route:
    """What the server answers for one path+query, and what the crawl must make of it.

    ``drop`` closes the connection without answering (a network error for the client).
    ``expect`` is the outcome for this URL on the served origin; ``public_expect`` the
    outcome when the crawl runs with ``-a public_url=...`` (``SAME`` if it does not
    differ); ``None`` means the crawl must never reach this route at all.
    """

    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    drop: bool = False
    expect: Outcome | None = None
    public_expect: Outcome | None | _Same = SAME


Responder = Callable[[SiteRequest], Route]

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
        route = self.server.resolve(request)
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
    ) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes: dict[str, Route] = dict(routes or {})
        self.dynamic: list[tuple[re.Pattern[str], Responder]] = list(dynamic)
        self._lock = threading.Lock()
        self._requests: list[SiteRequest] = []
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port the kernel gave us."""
        return int(self.server_address[1])

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        return f"http://127.0.0.1:{self.port}"

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
# Fixture site description
# ---------------------------------------------------------------------------


@dataclass
class SiteSpec:
    """A fixture site: its routes, and the outcome the crawl must reach for each URL.

    ``extra`` holds outcomes of URLs that are not routes of this origin (off-site links).
    ``never_fetched`` are path+query targets the server must never receive from a
    default crawl; ``nofollow_only`` are URLs reachable only through rel=nofollow links;
    ``traps`` match the path+query of infinite URL spaces, whose pages may be listed or
    not (the product bounds them; tests only assert that the bound holds).
    """

    origin: str
    public_origin: str = PUBLIC_ORIGIN
    routes: dict[str, Route] = field(default_factory=dict)
    dynamic: list[tuple[re.Pattern[str], Responder]] = field(default_factory=list)
    extra: dict[str, tuple[Outcome, Outcome | None | _Same]] = field(default_factory=dict)
    never_fetched: set[str] = field(default_factory=set)
    nofollow_only: set[str] = field(default_factory=set)
    traps: list[re.Pattern[str]] = field(default_factory=list)

    @property
    def start_url(self) -> str:
        """The URL a crawl of this site starts from."""
        return self.origin + "/"

    def outcomes(self, *, public: bool = False) -> dict[str, Outcome]:
        """Crawled URL -> expected outcome, for a default crawl (or one with public_url)."""
        result: dict[str, Outcome] = {}
        for target, route in self.routes.items():
            outcome = route.expect
            if public and not isinstance(route.public_expect, _Same):
                outcome = route.public_expect
            if outcome is not None:
                result[self.origin + target] = outcome
        for url, (normal, public_outcome) in self.extra.items():
            chosen = normal if not public or isinstance(public_outcome, _Same) else public_outcome
            if chosen is not None:
                result[url] = chosen
        return result

    def to_public(self, url: str) -> str:
        """The published form of a crawled URL under ``public_url``."""
        assert url.startswith(self.origin), url
        return self.public_origin + url[len(self.origin) :]

    def expected_listed(
        self,
        *,
        public: bool = False,
        include_reasons: Iterable[str] = (),
        drop: Iterable[str] = (),
    ) -> list[dict[str, str]]:
        """The exact expected sitemap entries ``{"loc", ["lastmod"]}``, sorted by loc.

        ``include_reasons`` lets excluded pages of those reasons in (what
        SITEMAP_INCLUDE_NOINDEX / _CANONICALISED do); ``drop`` removes crawled URLs.
        """
        let_in = set(include_reasons)
        dropped = set(drop)
        entries: list[dict[str, str]] = []
        for url, outcome in self.outcomes(public=public).items():
            if url in dropped:
                continue
            if isinstance(outcome, Excluded) and outcome.reason not in let_in:
                continue
            entry = {"loc": self.to_public(url) if public else url}
            if outcome.lastmod is not None:
                entry["lastmod"] = outcome.lastmod
            entries.append(entry)
        return sorted(entries, key=lambda e: e["loc"])

    def expected_excluded(self, *, public: bool = False) -> dict[str, Excluded]:
        """Crawled URL -> Excluded, for every URL the crawl must leave out."""
        return {
            url: outcome
            for url, outcome in self.outcomes(public=public).items()
            if isinstance(outcome, Excluded)
        }

    def is_trap(self, url: str) -> bool:
        """True for a URL (crawled or public form) inside an infinite URL space."""
        parts = urlsplit(url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        return any(p.fullmatch(target) for p in self.traps)


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


class _Auto:
    """Marker: give the page a fresh Last-Modified and expect it back as lastmod."""


AUTO: Final = _Auto()
LISTED: Final = Listed("auto")  # replaced by the page's own lastmod in SiteBuilder.page


class SiteBuilder:
    """Accumulates routes and expectations; every page gets its own Last-Modified instant."""

    def __init__(self, origin: str, public_origin: str = PUBLIC_ORIGIN) -> None:
        self.spec = SiteSpec(origin=origin.rstrip("/"), public_origin=public_origin.rstrip("/"))
        self.spec.routes["/robots.txt"] = Route(
            headers=(("Content-Type", "text/plain; charset=utf-8"),), body=ROBOTS_TXT
        )
        self._dates = itertools.count(1)

    @property
    def origin(self) -> str:
        return self.spec.origin

    def next_last_modified(self) -> tuple[str, str]:
        """(header value, expected lastmod) for a fresh, distinct instant."""
        n = next(self._dates)
        instant = datetime(2023, 1, 1, tzinfo=UTC) + timedelta(days=n, seconds=37 * n)
        return format_datetime(instant, usegmt=True), instant.isoformat()

    def page(
        self,
        target: str,
        body: bytes | str = b"",
        *,
        status: int = 200,
        content_type: str | None = HTML,
        headers: Iterable[tuple[str, str]] = (),
        last_modified: str | None | _Auto = AUTO,
        expect: Outcome | None = LISTED,
        public: Outcome | None | _Same = SAME,
    ) -> str:
        """Add a route; returns its percent-encoded key.

        With ``last_modified=AUTO`` the page sends a fresh Last-Modified and a ``Listed``
        or ``Excluded`` expectation carries the matching lastmod.
        """
        key = encode_target(target)
        all_headers: list[tuple[str, str]] = []
        if content_type is not None:
            all_headers.append(("Content-Type", content_type))
        auto_lastmod: str | None = None
        if isinstance(last_modified, _Auto):
            header, auto_lastmod = self.next_last_modified()
            all_headers.append(("Last-Modified", header))
        elif last_modified is not None:
            all_headers.append(("Last-Modified", last_modified))
        all_headers.extend(headers)
        if expect is LISTED:
            expect = Listed(auto_lastmod)
        elif isinstance(expect, Excluded) and expect.lastmod is None:
            expect = replace(expect, lastmod=auto_lastmod)
        if public is LISTED:
            public = Listed(auto_lastmod)
        payload = body.encode() if isinstance(body, str) else body
        assert key not in self.spec.routes, f"duplicate route {key}"
        self.spec.routes[key] = Route(
            status=status,
            headers=tuple(all_headers),
            body=payload,
            expect=expect,
            public_expect=public,
        )
        return key

    def redirect(
        self,
        target: str,
        location: str,
        *,
        status: int = 301,
        expect: Outcome | None = None,
        headers: Iterable[tuple[str, str]] = (),
    ) -> str:
        """Add a redirect; by default the redirecting URL must be reported as ``redirect``."""
        return self.page(
            target,
            html_page("Moved", links(escape(location))),
            status=status,
            headers=(("Location", location), *headers),
            last_modified=None,
            expect=expect if expect is not None else Excluded("redirect"),
        )

    def off_site(self, url: str, public: Outcome | None | _Same = SAME) -> None:
        """An off-site link target: never fetched; the report may name it as ``offsite``."""
        self.spec.extra[url] = (Excluded("offsite", reported=False), public)

    def never(self, target: str, body: bytes | str = b"") -> str:
        """A route a default crawl must never request (robots-disallowed, off-site twins)."""
        key = self.page(target, body or html_page("Must not be fetched"), expect=None)
        self.spec.never_fetched.add(key)
        return key


# ---------------------------------------------------------------------------
# The case site: every case of issue 2 once
# ---------------------------------------------------------------------------

CALENDAR: Final = re.compile(r"/calendar\?month=(\d+)")
MORE: Final = re.compile(r"/a/(?:more/)+")


def _calendar(request: SiteRequest) -> Route:
    match = CALENDAR.fullmatch(request.target)
    month = int(match.group(1)) if match else 1
    body = html_page(
        f"Calendar {month}",
        links(f"/calendar?month={month + 1}", f"/calendar?month={max(month - 1, 1)}"),
    )
    return Route(headers=(("Content-Type", HTML),), body=body)


def _more(request: SiteRequest) -> Route:
    # The relative href makes every page one segment deeper than the last: a classic trap.
    body = html_page("More", links("more/", "./"))
    return Route(headers=(("Content-Type", HTML),), body=body)


def _add_traps(b: SiteBuilder) -> list[str]:
    b.spec.dynamic.extend([(CALENDAR, _calendar), (MORE, _more)])
    b.spec.traps.extend([CALENDAR, MORE])
    b.page("/a/", html_page("A", links("more/")))
    return ["/calendar?month=1", "/a/"]


def _add_discovery(b: SiteBuilder) -> list[str]:
    """Every element the spider must follow, and <base href>."""
    b.page("/about", html_page("About"))
    b.page(
        "/map",
        html_page(
            "Image map",
            '<img src="/map.png" usemap="#m" alt="map"><map name="m">'
            '<area shape="rect" coords="0,0,10,10" href="/area-target" alt="a"></map>',
        ),
    )
    b.page("/area-target", html_page("Area target"))
    b.page(
        "/frameset",
        b'<!DOCTYPE html><html><head><meta charset="utf-8"><title>Frames</title></head>'
        b'<frameset cols="50%,50%"><frame src="/frame-left"><frame src="/frame-right">'
        b"</frameset></html>",
    )
    b.page("/frame-left", html_page("Left frame"))
    b.page("/frame-right", html_page("Right frame"))
    b.page("/with-iframe", html_page("Iframe", '<iframe src="/iframe-content"></iframe>'))
    b.page("/iframe-content", html_page("Iframe content"))
    # delay < 100 s: Scrapy's MetaRefreshMiddleware treats it as a redirect.
    b.page(
        "/refresh",
        html_page("Refresh", head='<meta http-equiv="refresh" content="0; url=/refresh-target">'),
        expect=Excluded("redirect"),
    )
    b.page("/refresh-target", html_page("Refresh target"))
    # A delayed refresh is not a redirect: the page stays, and its target is a link.
    b.page(
        "/refresh-slow",
        html_page(
            "Slow refresh",
            head='<meta http-equiv="Refresh" content="300; URL=\'/refresh-slow-target\'">',
        ),
    )
    b.page("/refresh-slow-target", html_page("Slow refresh target"))
    b.page(
        "/based/page",
        html_page(
            "Base href",
            links("child", "../top-from-base", "/abs-from-base"),
            head='<base href="/sub/">',
        ),
    )
    b.page("/sub/child", html_page("Child through base"))
    b.page("/top-from-base", html_page("Parent through base"))
    b.page("/abs-from-base", html_page("Absolute from base"))
    # What a crawler that ignores <base> would fetch instead: must stay untouched.
    b.never("/based/child")
    return ["/map", "/frameset", "/with-iframe", "/refresh", "/refresh-slow", "/based/page"]


def _add_schemes_and_offsite(b: SiteBuilder, other_origin: str) -> list[str]:
    host_port = urlsplit(b.origin).netloc
    port = urlsplit(b.origin).port
    public = b.spec.public_origin
    b.page(
        "/schemes",
        html_page(
            "Other schemes",
            links(
                "mailto:someone@example.com",
                "MAILTO:other@example.com",
                "tel:+15550100",
                "javascript:void(0)",
                "javascript:location.href='/js-only'",
                "data:text/html,%3Ca%20href=%22/data-only%22%3E",
                f"ftp://{host_port}/ftp-only",
            ),
        ),
    )
    for target in ("/js-only", "/data-only", "/ftp-only"):
        b.never(target)

    localhost = f"http://localhost:{port}"
    offsite_links = [
        f"{localhost}/offsite-localhost",
        f"//localhost:{port}/offsite-scheme-relative",
        f"{other_origin}/offsite-port",
        f"https://{host_port}/offsite-https",
        "http://127.0.0.1:80/offsite-default-port",
    ]
    for url in (
        f"{localhost}/offsite-localhost",
        f"{localhost}/offsite-scheme-relative",
        f"{other_origin}/offsite-port",
        f"https://{host_port}/offsite-https",
        "http://127.0.0.1/offsite-default-port",
    ):
        b.off_site(url)
    # Same paths on this server: if the spider wrongly follows localhost links it lands here.
    b.never("/offsite-localhost")
    b.never("/offsite-scheme-relative")
    b.never("/offsite-https")

    # Links written with the public origin: off-site by default, local pages with public_url.
    public_links = [
        f"{public}/pub-only",
        f"{public.upper()}/pub-upper",
        f"{public}:443/pub-default-port",
    ]
    for target in ("/pub-only", "/pub-upper", "/pub-default-port"):
        key = b.page(target, html_page(f"Public {target}"), expect=None, public=LISTED)
        b.spec.never_fetched.add(key)
    # With public_url these are the local pages above, judged under their crawled URL.
    for url in (f"{public}/pub-only", f"{public}/pub-upper", f"{public}/pub-default-port"):
        b.off_site(url, public=None)
    # Canonical written with the public origin: another (off-site) URL by default, itself
    # with public_url.
    b.page(
        "/pub-self-canon",
        html_page("Public self canonical", head=f'<link rel="canonical" href="{public}/pub-self-canon">'),
        expect=Excluded("canonical"),
        public=LISTED,
    )
    b.off_site(f"{public}/pub-self-canon", public=None)
    b.page(
        "/pub-canon-other",
        html_page(
            "Public canonical elsewhere",
            head=f'<link rel="canonical" href="{public}/canon-target">',
        ),
        expect=Excluded("canonical"),
    )
    # An absolute redirect to the public origin (what many static hosts send).
    b.redirect(
        "/r-public",
        f"{public}/pub-redirect-target",
        status=301,
        expect=Excluded("redirect", also=frozenset({"offsite"})),
    )
    key = b.page("/pub-redirect-target", html_page("Public redirect target"), expect=None, public=LISTED)
    b.spec.never_fetched.add(key)
    b.off_site(f"{public}/pub-redirect-target", public=None)
    b.page("/offsite", html_page("Off-site links", links(*offsite_links, *public_links)))
    return ["/schemes", "/offsite", "/pub-self-canon", "/pub-canon-other", "/r-public"]


def _add_normalisation(b: SiteBuilder) -> list[str]:
    origin = b.origin
    upper = "HTTP://" + urlsplit(origin).netloc
    b.page(
        "/norm/page",
        html_page(
            "Normalisation",
            links(
                f"{upper}/upper-scheme",
                "./sibling",
                "../up-target",
                "/norm/./x/../dot-segments",
                "/frag#top",
                "/frag#bottom",
                "/frag",
                "#here",
                "",
                "/about",
                "/about",
                "/about#team",
                "  /padded  ",
                "/café menu/",
                "/categories/Docker篇/",
                "/categories/Docker%E7%AF%87/",
                "/categories/Docker%e7%af%87/",
                "/Case",
                "/case",
                "/search?a=1&amp;b=2",
            ),
        ),
    )
    b.page("/upper-scheme", html_page("Upper-case scheme"))
    b.page("/norm/sibling", html_page("Sibling"))
    b.page("/up-target", html_page("Up"))
    b.page("/norm/dot-segments", html_page("Dot segments"))
    b.page("/frag", html_page("Fragments"))
    b.page("/padded", html_page("Padded href"))
    b.page("/café menu/", html_page("Café menu"))
    b.page("/categories/Docker篇/", html_page("Docker 篇"))
    b.page("/Case", html_page("Upper-case path"))
    b.page("/case", html_page("Lower-case path"))
    b.page("/search?a=1&b=2", html_page("Search with &"))
    # A Latin-1 document: the URL standard encodes the path in UTF-8 whatever the page's charset.
    b.page(
        "/latin/page",
        (
            '<!DOCTYPE html><html><head><title>Latin-1</title></head><body><a href="/latin/caf\u00e9">x</a>'
            "</body></html>"
        ).encode("latin-1"),
        content_type="text/html; charset=iso-8859-1",
    )
    b.page("/latin/caf\u00e9", html_page("Latin-1 link target"))
    return ["/norm/page", "/latin/page"]


def _add_robots_and_nofollow(b: SiteBuilder) -> list[str]:
    b.page(
        "/robots-links",
        html_page(
            "Robots",
            links(
                "/private/secret",
                "/private",
                "/article?print=1",
                "/article",
                "/legacy.php",
                "/legacy.php?page=2",
            ),
        ),
    )
    for target in ("/private/secret", "/article?print=1", "/legacy.php"):
        key = b.page(target, html_page("Disallowed"), expect=Excluded("robots"))
        b.spec.never_fetched.add(key)
    # "/private" does not match "Disallow: /private/"; "$" anchors "*.php" at the end.
    b.page("/private", html_page("Not under /private/"))
    b.page("/article", html_page("Article"))
    b.page("/legacy.php?page=2", html_page("Legacy page 2"))

    b.page(
        "/nofollow",
        html_page(
            "Nofollow links",
            '<a rel="nofollow" href="/nofollow-only">n</a>'
            '<a rel="ugc NoFollow" href="/nofollow-only-2">n2</a>',
        ),
    )
    b.page("/nofollow-only", html_page("Only through nofollow"))
    b.page("/nofollow-only-2", html_page("Only through nofollow too"))
    # A page-wide nofollow directive: followed by default like rel=nofollow links.
    b.page(
        "/meta-nofollow",
        html_page(
            "Meta nofollow",
            links("/via-meta-nofollow"),
            head='<meta name="robots" content="nofollow">',
        ),
    )
    b.page("/via-meta-nofollow", html_page("Only through a nofollow page"))
    b.spec.nofollow_only.update(
        {b.origin + "/nofollow-only", b.origin + "/nofollow-only-2", b.origin + "/via-meta-nofollow"}
    )
    return ["/robots-links", "/nofollow", "/meta-nofollow"]


def _add_noindex(b: SiteBuilder) -> list[str]:
    meta = '<meta name="{name}" content="{content}">'
    b.page(
        "/noindex-meta",
        html_page("noindex", links("/via-noindex-1"), head=meta.format(name="robots", content="noindex")),
        expect=Excluded("noindex"),
    )
    # Found only through the noindex page (noindex pages are still followed).
    b.page("/via-noindex-1", html_page("Via noindex", links("/via-noindex-2")))
    b.page("/via-noindex-2", html_page("Via noindex, one more"))
    noindex_meta = {
        "/noindex-none": meta.format(name="robots", content="NONE"),
        "/noindex-order": '<meta content="noindex,follow" name="ROBOTS">',
        "/noindex-googlebot": meta.format(name="googlebot", content="noindex"),
    }
    for target, head in noindex_meta.items():
        b.page(target, html_page(target, head=head), expect=Excluded("noindex"))
    noindex_headers = {
        "/noindex-header": "noindex",
        "/noindex-header-googlebot": "googlebot: noindex",
        "/noindex-header-mixed": "noarchive, NOINDEX",
    }
    for target, value in noindex_headers.items():
        b.page(target, html_page(target), headers=[("X-Robots-Tag", value)], expect=Excluded("noindex"))
    b.page("/otherbot-header", html_page("otherbot"), headers=[("X-Robots-Tag", "otherbot: noindex")])
    b.page(
        "/otherbot-meta",
        html_page("otherbot meta", head=meta.format(name="otherbot", content="noindex")),
    )
    b.page(
        "/index-follow",
        html_page("index, follow", head=meta.format(name="robots", content="index, follow")),
    )
    return [
        "/noindex-meta",
        *noindex_meta,
        *noindex_headers,
        "/otherbot-header",
        "/otherbot-meta",
        "/index-follow",
    ]


def _add_canonical(b: SiteBuilder) -> list[str]:
    origin = b.origin
    canon = '<link rel="canonical" href="{}">'
    b.page(
        "/canon-from",
        html_page("Canonical elsewhere", head=canon.format("/canon-target")),
        expect=Excluded("canonical"),
    )
    b.page("/canon-target", html_page("Canonical target (linked nowhere)"))
    b.page(
        "/canon-abs",
        html_page("Absolute canonical elsewhere", head=canon.format(f"{origin}/canon-abs-target")),
        expect=Excluded("canonical"),
    )
    b.page("/canon-abs-target", html_page("Absolute canonical target"))
    b.page("/self", html_page("Self canonical", head=canon.format(f"{origin}/self")))
    b.page("/promo", html_page("Promo"))
    b.page("/product?id=5", html_page("Product 5"))
    b.page(
        "/hdr-canon",
        html_page("Link header canonical"),
        headers=[("Link", f'<{origin}/hdr-canon-target>; rel="canonical"')],
        expect=Excluded("canonical"),
    )
    b.page("/hdr-canon-target", html_page("Link header canonical target"))
    # Tracking variants are never separate URLs: the stripped form is what is fetched.
    for target in (
        "/self?utm_source=x&utm_medium=y",
        "/promo?gclid=abc&fbclid=def",
        "/product?id=5&utm_campaign=z",
    ):
        b.never(target)
    return [
        "/canon-from",
        "/canon-abs",
        "/self",
        "/self?utm_source=x&amp;utm_medium=y",
        "/promo?gclid=abc&amp;fbclid=def",
        "/product?id=5&amp;utm_campaign=z",
        "/hdr-canon",
    ]


def _add_redirects(b: SiteBuilder) -> list[str]:
    port = urlsplit(b.origin).port
    for status in (301, 302, 303, 307, 308):
        # 302 uses a relative Location; 307 carries a Last-Modified of its own that must
        # not leak onto the target.
        location = f"/r{status}-target" if status == 302 else f"{b.origin}/r{status}-target"
        extra = [("Last-Modified", "Mon, 01 Jan 2001 00:00:00 GMT")] if status == 307 else []
        b.redirect(f"/r{status}", location, status=status, headers=extra)
        b.page(
            f"/r{status}-target",
            html_page(f"Target of {status}"),
            last_modified=None if status == 307 else AUTO,
        )
    b.redirect("/hop1", "/hop2", status=301)
    b.redirect("/hop2", "/hop3", status=302, expect=Excluded("redirect", reported=False))
    b.redirect("/hop3", "/hop-end", status=307, expect=Excluded("redirect", reported=False))
    b.page("/hop-end", html_page("End of the chain"))
    b.redirect("/dir", "/dir/", status=301)
    b.page("/dir/", html_page("Directory"))
    loop = Excluded("redirect", also=frozenset({"duplicate", "error"}), reported=False)
    b.redirect("/loop-a", "/loop-b", status=302, expect=loop)
    b.redirect("/loop-b", "/loop-a", status=302, expect=loop)
    b.redirect(
        "/r-offsite",
        f"http://localhost:{port}/offsite-redirect-target",
        status=302,
        expect=Excluded("redirect", also=frozenset({"offsite"})),
    )
    b.never("/offsite-redirect-target")
    b.spec.extra[f"http://localhost:{port}/offsite-redirect-target"] = (
        Excluded("offsite", also=frozenset({"redirect"}), reported=False),
        SAME,
    )
    b.redirect("/r-dup", "/about", status=301)
    b.redirect(
        "/r-private",
        "/private/redirected",
        status=302,
        expect=Excluded("redirect", also=frozenset({"robots"})),
    )
    key = b.page(
        "/private/redirected",
        html_page("Disallowed redirect target"),
        expect=Excluded("robots", reported=False),
    )
    b.spec.never_fetched.add(key)
    return [
        "/r301",
        "/r302",
        "/r303",
        "/r307",
        "/r308",
        "/hop1",
        "/dir",
        "/loop-a",
        "/r-offsite",
        "/r-dup",
        "/r-private",
    ]


def _add_statuses_and_types(b: SiteBuilder) -> list[str]:
    for status in (404, 410, 500, 503):
        b.page(
            f"/s{status}",
            html_page(f"Status {status}"),
            status=status,
            expect=Excluded("http_error"),
        )
    b.page("/s204", b"", status=204, content_type=None, expect=Excluded("status"))
    b.spec.routes["/broken"] = Route(drop=True, expect=Excluded("error"))
    pdf = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
    b.page("/download", pdf, content_type="application/pdf", expect=Excluded("non_html"))
    b.page(
        "/notes",
        "Plain text, not a page.\n",
        content_type="text/plain; charset=utf-8",
        expect=Excluded("non_html"),
    )
    b.page("/image", png, content_type="image/png", expect=Excluded("non_html"))
    b.page("/api/data", b'{"a": 1}', content_type="application/json", expect=Excluded("non_html"))
    # An extension Scrapy's LinkExtractor skips without fetching: any handling is fine.
    b.page(
        "/files/report.pdf",
        pdf,
        content_type="application/pdf",
        expect=Excluded("non_html", reported=False),
    )
    b.page(
        "/xhtml",
        b'<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
        b"<head><title>XHTML</title></head><body><p>XHTML page</p></body></html>",
        content_type="application/xhtml+xml; charset=utf-8",
    )
    b.page(
        "/upper-ctype",
        html_page("Upper-case content type"),
        content_type="Text/HTML; Charset=UTF-8",
    )
    return [
        "/s404",
        "/s410",
        "/s500",
        "/s503",
        "/s204",
        "/broken",
        "/download",
        "/notes",
        "/image",
        "/api/data",
        "/files/report.pdf",
        "/xhtml",
        "/upper-ctype",
    ]


def _add_lastmod(b: SiteBuilder) -> list[str]:
    cases = {
        # RFC 7231 IMF-fixdate, obsolete RFC 850 and asctime: all the same kind of instant.
        "/lm-rfc7231": ("Wed, 01 May 2024 10:20:30 GMT", "2024-05-01T10:20:30+00:00"),
        "/lm-rfc850": ("Sunday, 06-Nov-94 08:49:37 GMT", "1994-11-06T08:49:37+00:00"),
        "/lm-asctime": ("Sun Nov  6 08:49:37 1994", "1994-11-06T08:49:37+00:00"),
        "/lm-bad": ("the day before yesterday", None),
    }
    for target, (header, lastmod) in cases.items():
        b.page(target, html_page(target), last_modified=header, expect=Listed(lastmod))
    b.page(
        "/lm-date-only",
        html_page("Date header, no Last-Modified"),
        last_modified=None,
        headers=[("Date", "Mon, 01 Jan 2024 00:00:00 GMT")],
        expect=Listed(None),
    )
    return [*cases, "/lm-date-only"]


def _add_deep_chain(b: SiteBuilder, length: int = 40) -> list[str]:
    for n in range(1, length + 1):
        nxt = links(f"/deep/{n + 1}") if n < length else "<p>The end.</p>"
        b.page(f"/deep/{n}", html_page(f"Deep {n}", nxt))
    return ["/deep/1"]


def build_case_site(
    origin: str,
    *,
    other_origin: str | None = None,
    public_origin: str = PUBLIC_ORIGIN,
) -> SiteSpec:
    """The fixture site holding every case of issue 2; start the crawl at ``origin + "/"``.

    ``other_origin`` is another port on 127.0.0.1 (serve a recording decoy there to prove
    nothing is fetched from it); without one, a closed port is used.
    """
    b = SiteBuilder(origin, public_origin)
    other = (other_origin or f"http://127.0.0.1:{closed_port()}").rstrip("/")
    entry: list[str] = []
    entry += _add_discovery(b)
    entry += _add_schemes_and_offsite(b, other)
    entry += _add_normalisation(b)
    entry += _add_robots_and_nofollow(b)
    entry += _add_noindex(b)
    entry += _add_canonical(b)
    entry += _add_redirects(b)
    entry += _add_statuses_and_types(b)
    entry += _add_lastmod(b)
    entry += _add_deep_chain(b)
    entry += _add_traps(b)
    b.page("/", html_page("Home", links("/about", *entry)))
    return b.spec


# ---------------------------------------------------------------------------
# Generated site: the same cases in proportion, any size
# ---------------------------------------------------------------------------

_RFC850_DAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _rfc850(instant: datetime) -> str:
    return instant.strftime(f"{_RFC850_DAYS[instant.weekday()]}, %d-%b-%y %H:%M:%S GMT")


def _asctime(instant: datetime) -> str:
    # asctime pads the day with a space, not a zero.
    return instant.strftime("%a %b ") + f"{instant.day:>2}" + instant.strftime(" %H:%M:%S %Y")


class _Generator:
    """Adds one item of a given kind; returns the anchors a hub page links to it with."""

    def __init__(self, b: SiteBuilder) -> None:
        self.b = b
        self.port = urlsplit(b.origin).port

    def plain(self, i: int) -> list[str]:
        return [anchor(self.b.page(f"/g/p{i}", html_page(f"Page {i}")))]

    def plain_no_lastmod(self, i: int) -> list[str]:
        key = self.b.page(f"/g/n{i}", html_page(f"Page {i}"), last_modified=None, expect=Listed(None))
        return [anchor(key)]

    def non_ascii(self, i: int) -> list[str]:
        self.b.page(f"/g/文章-{i}/", html_page(f"文章 {i}"))
        return [anchor(f"/g/文章-{i}/")]

    def space(self, i: int) -> list[str]:
        self.b.page(f"/g/with space {i}", html_page(f"Space {i}"))
        return [anchor(f"/g/with space {i}")]

    def query(self, i: int) -> list[str]:
        self.b.page(f"/g/q?id={i}&s=x", html_page(f"Query {i}"))
        return [anchor(f"/g/q?id={i}&amp;s=x")]

    def tracking(self, i: int) -> list[str]:
        self.b.page(f"/g/t{i}", html_page(f"Tracked {i}"))
        variant = f"/g/t{i}?utm_source=hub&utm_medium=web&fbclid=z{i}"
        self.b.never(variant)
        return [anchor(escape(variant))]

    def noindex(self, i: int) -> list[str]:
        # Alternate the meta tag and the header form.
        head = '<meta name="robots" content="noindex, follow">' if i % 2 else ""
        headers = [] if i % 2 else [("X-Robots-Tag", "noindex")]
        key = self.b.page(
            f"/g/x{i}",
            html_page(f"noindex {i}", links(f"/g/x{i}-child"), head=head),
            headers=headers,
            expect=Excluded("noindex"),
        )
        self.b.page(f"/g/x{i}-child", html_page(f"Only via noindex {i}"))
        return [anchor(key)]

    def canonical(self, i: int) -> list[str]:
        key = self.b.page(
            f"/g/c{i}",
            html_page(f"Canonicalised {i}", head=f'<link rel="canonical" href="/g/c{i}-canonical">'),
            expect=Excluded("canonical"),
        )
        self.b.page(f"/g/c{i}-canonical", html_page(f"Canonical {i}"))
        return [anchor(key)]

    def redirect(self, i: int) -> list[str]:
        status = (301, 302, 303, 307, 308)[i % 5]
        key = self.b.redirect(f"/g/r{i}", f"/g/r{i}-target", status=status)
        self.b.page(f"/g/r{i}-target", html_page(f"Redirect target {i}"))
        return [anchor(key)]

    def slash(self, i: int) -> list[str]:
        key = self.b.redirect(f"/g/d{i}", f"/g/d{i}/", status=301)
        self.b.page(f"/g/d{i}/", html_page(f"Directory {i}"))
        return [anchor(key)]

    def missing(self, i: int) -> list[str]:
        status = 404 if i % 3 else 410
        key = self.b.page(f"/g/e{i}", html_page("Gone"), status=status, expect=Excluded("http_error"))
        return [anchor(key)]

    def non_html(self, i: int) -> list[str]:
        kind, body = (
            ("application/pdf", b"%PDF-1.4\n%%EOF\n"),
            ("application/json", b"{}"),
            ("text/plain", b"text"),
        )[i % 3]
        key = self.b.page(f"/g/b{i}", body, content_type=kind, expect=Excluded("non_html"))
        return [anchor(key)]

    def robots(self, i: int) -> list[str]:
        key = self.b.page(f"/private/g{i}", html_page("Disallowed"), expect=Excluded("robots"))
        self.b.spec.never_fetched.add(key)
        return [anchor(key)]

    def nofollow(self, i: int) -> list[str]:
        key = self.b.page(f"/g/f{i}", html_page(f"Nofollow target {i}"))
        self.b.spec.nofollow_only.add(self.b.origin + key)
        return [anchor(key, rel="nofollow")]

    def offsite(self, i: int) -> list[str]:
        url = f"http://localhost:{self.port}/g/o{i}"
        self.b.off_site(url)
        self.b.never(f"/g/o{i}")
        return [anchor(url)]

    def xhtml(self, i: int) -> list[str]:
        body = (
            '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
            f"<head><title>XHTML {i}</title></head><body><p>{i}</p></body></html>"
        )
        return [anchor(self.b.page(f"/g/h{i}", body, content_type="application/xhtml+xml"))]

    def old_dates(self, i: int) -> list[str]:
        instant = datetime(2020, 1, 1, tzinfo=UTC) + timedelta(hours=7 * i, seconds=i)
        header = _rfc850(instant) if i % 2 else _asctime(instant)
        key = self.b.page(
            f"/g/l{i}",
            html_page(f"Old date {i}"),
            last_modified=header,
            expect=Listed(instant.isoformat()),
        )
        return [anchor(key)]

    def refresh(self, i: int) -> list[str]:
        key = self.b.page(
            f"/g/m{i}",
            html_page("Refresh", head=f'<meta http-equiv="refresh" content="0;url=/g/m{i}-target">'),
            expect=Excluded("redirect"),
        )
        self.b.page(f"/g/m{i}-target", html_page(f"Refresh target {i}"))
        return [anchor(key)]

    def frames(self, i: int) -> list[str]:
        inner = (
            f'<iframe src="/g/i{i}-inner"></iframe>'
            if i % 2
            else f'<img src="/m.png" usemap="#m{i}" alt="m"><map name="m{i}"><area href="/g/i{i}-inner" alt="x"></map>'
        )
        key = self.b.page(f"/g/i{i}", html_page(f"Embeds {i}", inner))
        self.b.page(f"/g/i{i}-inner", html_page(f"Embedded {i}"))
        return [anchor(key)]

    def server_error(self, i: int) -> list[str]:
        key = self.b.page(f"/g/s{i}", html_page("Error"), status=500, expect=Excluded("http_error"))
        return [anchor(key)]


# Weights roughly like a real site: mostly plain pages, a few of every pathology.
_GENERATED_MIX: Final = (
    ("plain", 12),
    ("plain_no_lastmod", 3),
    ("non_ascii", 2),
    ("space", 1),
    ("query", 1),
    ("tracking", 1),
    ("noindex", 2),
    ("canonical", 1),
    ("redirect", 2),
    ("slash", 1),
    ("missing", 1),
    ("non_html", 1),
    ("robots", 1),
    ("nofollow", 1),
    ("offsite", 1),
    ("xhtml", 1),
    ("old_dates", 1),
    ("refresh", 1),
    ("frames", 1),
)
_LINKS_PER_HUB: Final = 40
_SERVER_ERROR_EVERY: Final = 997  # a few 500s (each retried by Scrapy), not hundreds


def build_generated_site(
    origin: str,
    pages: int = 3000,
    *,
    public_origin: str = PUBLIC_ORIGIN,
    chain: int = 30,
) -> SiteSpec:
    """A site of about ``pages`` routes mixing every case in proportion, expectations included.

    Home links to hub pages; each hub links to a run of items; one deep chain of
    ``chain`` pages and the two infinite URL spaces are linked from home too.
    """
    b = SiteBuilder(origin, public_origin)
    gen = _Generator(b)
    schedule = [kind for kind, weight in _GENERATED_MIX for _ in range(weight)]
    hub_anchors: list[list[str]] = [[]]
    for i in itertools.count():
        if len(b.spec.routes) >= pages:
            break
        last = i % _SERVER_ERROR_EVERY == _SERVER_ERROR_EVERY - 1
        kind = "server_error" if last else schedule[i % len(schedule)]
        if len(hub_anchors[-1]) >= _LINKS_PER_HUB:
            hub_anchors.append([])
        hub_anchors[-1].extend(getattr(gen, kind)(i))
    hubs = [
        b.page(f"/g/hub/{k}", html_page(f"Hub {k}", "\n".join(anchors)))
        for k, anchors in enumerate(hub_anchors)
    ]
    for n in range(1, chain + 1):
        nxt = links(f"/g/chain/{n + 1}") if n < chain else ""
        b.page(f"/g/chain/{n}", html_page(f"Chain {n}", nxt))
    entry = _add_traps(b)
    b.page("/", html_page("Generated home", links(*hubs, "/g/chain/1", *entry)))
    return b.spec

"""A local dynamic site for the crawl history tests: pages rendered per request, with their noise.

Every response carries a fresh CSRF token (a meta tag and a hidden input), a "generated
at" footer and random related links. Pages differ by kind:

    plain     no Last-Modified, no metadata (most pages)
    now       ``Last-Modified: <now>``, as frameworks that stamp every response
    jsonld    JSON-LD ``dateModified`` (half of them inside ``@graph``)
    meta      ``<meta property="article:modified_time">``
    etag      an ``ETag`` of the content's version, answering 304 to a matching If-None-Match,
              and a link to a child page (``/p/<n>/notes``) found only through it

The test edits, deletes, adds and breaks pages (503) between crawls, and reads what
each crawl asked for and got from the counts kept here.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from tests.site_server import HTML, NOT_FOUND, SiteServer
from tests.site_spec import Route, SiteRequest

KINDS = ("plain", "plain", "now", "jsonld", "meta", "etag")
SECTIONS = 10
PAGE = re.compile(r"/p/(\d+)(/notes)?")
MOVED = re.compile(r"/q/(\d+)")
SECTION = re.compile(r"/section/(\d+)")


@dataclass
class Page:
    n: int
    version: int = 1
    deleted: bool = False
    failing: bool = False
    moved: bool = False  # /p/<n> answers 301 to /q/<n>, which serves it (same ETag)

    @property
    def kind(self) -> str:
        return KINDS[self.n % len(KINDS)]

    @property
    def modified(self) -> datetime:
        """The date its metadata gives (jsonld and meta pages): moves with each version."""
        return datetime(2025, 1, 1, tzinfo=UTC) + timedelta(days=self.n % 300, hours=self.version, seconds=self.n)

    @property
    def etag(self) -> str:
        return f'"{self.n}-{self.version}"'


class DynamicSite:
    """The site's state and its responder (thread-safe: the server answers from several threads)."""

    def __init__(self, pages: int) -> None:
        self.pages = {n: Page(n) for n in range(pages)}
        self.statuses: Counter[str] = Counter()  # "<kind> <status>" of page responses
        self._lock = threading.Lock()
        self._serial = itertools.count()
        self._random = random.Random(16)

    def serve(self, server: SiteServer) -> None:
        server.dynamic = [(re.compile(r"/.*"), self.respond)]

    # --- changes between crawls ------------------------------------------------------
    def edit(self, n: int) -> None:
        self.pages[n].version += 1

    def delete(self, n: int) -> None:
        self.pages[n].deleted = True

    def add(self, n: int) -> None:
        self.pages[n] = Page(n)

    def change(
        self, edit: Iterable[int] = (), delete: Iterable[int] = (), add: Iterable[int] = (), fail: Iterable[int] = ()
    ) -> None:
        """Between two crawls: edit, delete and add pages, and make some fail (the history tests' changes)."""
        for n in edit:
            self.edit(n)
        for n in delete:
            self.delete(n)
        for n in add:
            self.add(n)
        for n in fail:
            self.pages[n].failing = True

    def live(self) -> list[Page]:
        return [page for page in self.pages.values() if not page.deleted]

    # --- answers ------------------------------------------------------------------------
    def respond(self, request: SiteRequest) -> Route:
        target = request.target
        with self._lock:
            if target == "/":
                return self._html("Home", "".join(f'<p><a href="/section/{k}">Section {k}</a></p>' for k in range(SECTIONS)))
            section = SECTION.fullmatch(target)
            if section is not None:
                k = int(section.group(1))
                items = "".join(
                    f'<li><a href="/p/{p.n}">Page {p.n}</a></li>' for p in self.live() if p.n % SECTIONS == k
                )
                return self._html(f"Section {k}", f"<ul>{items}</ul>")
            moved = MOVED.fullmatch(target)
            if moved is not None:
                page = self.pages.get(int(moved.group(1)))
                return NOT_FOUND if page is None or not page.moved else self._page(page, dict(request.headers))
            match = PAGE.fullmatch(target)
            page = None if match is None else self.pages.get(int(match.group(1)))
            if page is None or page.deleted or (match and match.group(2) and page.kind != "etag"):
                return NOT_FOUND
            assert match is not None
            if page.moved and not match.group(2):
                return Route(status=301, headers=(("Location", f"/q/{page.n}"),), body=b"")
            if match.group(2):
                return self._html(f"Notes of page {page.n}", f"<p>Notes on page {page.n}.</p>")
            return self._page(page, dict(request.headers))

    def _page(self, page: Page, headers: dict[str, str]) -> Route:
        if page.failing:
            self.statuses[f"{page.kind} 503"] += 1
            return Route(status=503, headers=(("Content-Type", HTML), ("Retry-After", "0")), body=b"busy")
        if page.kind == "etag" and headers.get("If-None-Match") == page.etag:
            self.statuses["etag 304"] += 1
            return Route(status=304, headers=(("ETag", page.etag),), body=b"")
        self.statuses[f"{page.kind} 200"] += 1
        extra: list[tuple[str, str]] = []
        head = ""
        body = f"<p>Page {page.n} says version {page.version}.</p>"
        if page.kind == "now":
            extra.append(("Last-Modified", format_datetime(datetime.now(UTC), usegmt=True)))
        elif page.kind == "etag":
            extra.append(("ETag", page.etag))
            body += f'<p><a href="/p/{page.n}/notes">Notes</a></p>'
        elif page.kind == "jsonld":
            node = {"@type": "Article", "headline": f"Page {page.n}", "dateModified": page.modified.isoformat()}
            data = {"@context": "https://schema.org", "@graph": [{"@type": "WebSite"}, node]} if page.n % 2 else node
            head = f'<script type="application/ld+json">{json.dumps(data)}</script>'
        elif page.kind == "meta":
            head = f'<meta property="article:modified_time" content="{page.modified.isoformat()}">'
        return self._html(f"Page {page.n}", body, head, extra)

    def _html(self, title: str, main: str, head: str = "", headers: list[tuple[str, str]] | None = None) -> Route:
        token = f"{self._random.getrandbits(128):032x}"
        now = datetime.now(UTC)
        related = "".join(
            f'<li><a href="/p/{p.n}">Page {p.n}</a></li>' for p in self._random.sample(self.live(), 3)
        )
        outer = "main" if len(title) % 2 else 'div class="content"'
        html = (
            f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title>'
            f'<meta name="csrf-token" content="{token}">{head}'
            f'<link rel="stylesheet" href="/site.css?v={token[:8]}"></head><body>'
            f'<header><nav><a href="/">Home</a></nav></header>'
            # Half the pages have no <main>: the noise around the content must be left out by name.
            f"<{outer}><h1>{title}</h1>{main}"
            f"<p>Rendered in 0.{now.microsecond:06d} s at {now:%H:%M:%S}.</p></{outer.split()[0]}>"
            f'<aside class="related"><h2>Related</h2><ul>{related}</ul></aside>'
            f'<div class="widget related-posts"><a href="/p/{self._random.randrange(len(self.pages))}">More</a></div>'
            f'<form method="post"><input type="hidden" name="csrfmiddlewaretoken" value="{token}"></form>'
            f"<footer>Page generated at {now.isoformat()} (#{next(self._serial)})</footer>"
            "</body></html>"
        )
        return Route(headers=(("Content-Type", HTML), *(headers or [])), body=html.encode())

"""``SiteBuilder``: adds pages, redirects and off-site links to a ``SiteSpec`` with their expectations.

Every page gets its own Last-Modified instant, and a ``Listed`` expectation the matching
lastmod. The fixture sites are built with it in tests/site_cases.py and
tests/generated_site.py.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from html import escape
from typing import Final

from tests.site_server import HTML, encode_target, html_page, links
from tests.site_spec import PUBLIC_ORIGIN, SAME, Excluded, Listed, Outcome, Route, Same, SiteSpec

ROBOTS_TXT: Final = b"""\
# Fixture robots.txt: a plain prefix rule and two RFC 9309 wildcard rules.
User-agent: *
Disallow: /private/
Disallow: /*?print=
Disallow: /*.php$
"""


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
        # An hour apart, from 2001: the generated site's thousands of pages stay in the past (a
        # Last-Modified later than the response is not believed).
        instant = datetime(2001, 1, 1, tzinfo=UTC) + timedelta(hours=n, seconds=37 * n)
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
        public: Outcome | None | Same = SAME,
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

    def off_site(self, url: str, public: Outcome | None | Same = SAME) -> None:
        """An off-site link target: never fetched; the report may name it as ``offsite``."""
        self.spec.extra[url] = (Excluded("offsite", reported=False), public)

    def never(self, target: str, body: bytes | str = b"") -> str:
        """A route a default crawl must never request (robots-disallowed, off-site twins)."""
        key = self.page(target, body or html_page("Must not be fetched"), expect=None)
        self.spec.never_fetched.add(key)
        return key

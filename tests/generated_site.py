"""A generated fixture site of any size: the cases of the case site in proportion, with expectations.

``build_generated_site`` links hub pages of items from the home page; every item kind is a
method of ``_Generator``, mixed by the weights of ``_GENERATED_MIX``.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from html import escape
from typing import Final
from urllib.parse import urlsplit

from tests.site_builder import SiteBuilder
from tests.site_cases_links import add_traps
from tests.site_server import anchor, html_page, links
from tests.site_spec import PUBLIC_ORIGIN, Excluded, Listed, SiteSpec

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
    entry = add_traps(b)
    b.page("/", html_page("Generated home", links(*hubs, "/g/chain/1", *entry)))
    return b.spec

"""One sitemap entry: what flows from a spider (or an input file) to the sitemap writer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SitemapEntry:
    """One ``<url>`` of a sitemap.

    ``loc`` is an absolute, percent-encoded URL (not yet XML-escaped);
    ``lastmod`` is a W3C Datetime string (a date, or a date-time with a zone);
    ``changefreq`` is one of the protocol's seven words; ``priority`` is 0.0-1.0.
    Optional fields are ``None`` when unknown and are then left out of the file.
    ``content_digest`` is never written to a sitemap: it is a hash of the page's
    body, so that a page served under several URLs is listed under one of them.
    """

    loc: str
    lastmod: str | None = None
    changefreq: str | None = None
    priority: float | None = None
    content_digest: str | None = None

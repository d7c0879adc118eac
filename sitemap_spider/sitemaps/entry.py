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

    def __repr__(self) -> str:
        # What a user recognises in a log line (Scrapy's "Scraped from"): not the internal digest.
        lastmod = f" lastmod={self.lastmod}" if self.lastmod else ""
        return f"<{type(self).__name__} {self.loc}{lastmod}>"


@dataclass(frozen=True)
class Alternate:
    """One ``<link rel="alternate" hreflang href>`` a page declares: a language version of it."""

    hreflang: str  # a BCP 47 language with an optional region ("fr", "en-GB"), or "x-default"
    href: str  # absolute, percent-encoded URL


@dataclass(frozen=True)
class Video:
    """One ``<video:video>``; the first four (one of the two locs at least) are required."""

    thumbnail_loc: str
    title: str
    description: str
    content_loc: str | None = None
    player_loc: str | None = None
    duration: int | None = None  # seconds, 0-28800
    publication_date: str | None = None  # W3C Datetime
    expiration_date: str | None = None


@dataclass(frozen=True)
class News:
    """The ``<news:news>`` of an article: its publication, date and title."""

    name: str  # the publication's name
    language: str  # ISO 639 ("en", "fr"; "zh-cn" and "zh-tw")
    publication_date: str  # W3C Datetime
    title: str


@dataclass(frozen=True)
class PageSummary:
    """What llms.txt says of a listed page (SITEMAP_LLMS_TXT): never written to a sitemap."""

    title: str  # the page's <title> (else og:title, else its first <h1>), whitespace collapsed; "" if none
    description: str = ""  # its meta description (else og:description)
    site_name: str = ""  # its og:site_name: the home page's names the site


@dataclass(frozen=True)
class RichEntry(SitemapEntry):
    """An entry with extension data: hreflang alternates, images, videos, news.

    A subclass, so that an entry without any (nearly all of them) carries none of these fields:
    not in memory, not in a feed's JSON lines, not in the sorted runs.
    """

    alternates: tuple[Alternate, ...] = ()
    images: tuple[str, ...] = ()  # absolute, percent-encoded URLs, each once
    videos: tuple[Video, ...] = ()
    news: News | None = None


@dataclass(frozen=True)
class SummarizedEntry(RichEntry):
    """A RichEntry with what llms.txt says of its page (SITEMAP_LLMS_TXT): a subclass, so that
    no other entry carries the field, in a feed's rows either."""

    page: PageSummary | None = None

"""Tests of sitemap_spider/sitemaps/rules.py: what an entry must be, and the reading of a lastmod.

An accepted value is also written and read back (the XSD, then Scrapy's Sitemap): the rules
are never looser than sitemap.xsd.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.rules import check_entry, parse_lastmod
from sitemap_spider.sitemaps.xml.elements import URLSET_CLOSE, URLSET_OPEN, url_element
from tests.sitemap_check import read_urls


def urlset(*entries: SitemapEntry) -> bytes:
    return URLSET_OPEN + b"".join(url_element(entry) for entry in entries) + URLSET_CLOSE


VALID_LOCS = [
    "http://example.com",
    "https://example.com/",
    "https://example.com:8443/a/b?c=d&e=f#frag",
    "https://user:pw@example.com/",
    "http://[::1]:8080/x",
    "https://example.com/categories/Docker%E7%AF%87/",
    "https://example.com/a%20b?q='x'&r=\"y\"&s=<z>",
    "https://a.bc/",  # 12 characters, the XSD's minimum
    "https://example.com/" + "a" * (2048 - 20),
]


@pytest.mark.parametrize("loc", VALID_LOCS)
def test_valid_locs(loc: str) -> None:
    check_entry(SitemapEntry(loc))
    assert read_urls(urlset(SitemapEntry(loc)), loc) == [{"loc": loc}]


@pytest.mark.parametrize(
    ("loc", "reason"),
    [
        ("/relative/path", "absolute"),
        ("example.com/page", "absolute"),
        ("ftp://example.com/file", "absolute"),
        ("mailto:someone@example.com", "absolute"),
        ("https:///path-without-host", "absolute"),
        ("https://example.com/" + "a" * (2049 - 20), "2048"),
        ("https://example.com/a b", "whitespace"),
        ("https://example.com/a\tb", "whitespace"),
        ("https://example.com/a\x00b", "control"),
        ("https://example.com/a\x7fb", "control"),
        ("https://example.com/caf\u00e9", "non-ASCII"),
        ("https://ex\u00e4mple.com/", "non-ASCII"),
        ("http://a.b/", "12"),
        ("https://example.com/%zz", "hex"),
        ("https://example.com/100%", "hex"),
        ("https://example.com:port/", "port"),
        ("https://example.com:/", "port"),
        ("https://example.com/a[1]", "%5B"),
        ("https://example.com/#a#b", "%23"),
        ("https://exa<mple.com/", "host"),
    ],
)
def test_invalid_locs(loc: str, reason: str) -> None:
    with pytest.raises(InvalidEntryError, match=reason):
        check_entry(SitemapEntry(loc))


@pytest.mark.parametrize(
    ("lastmod", "instant"),
    [
        ("2024-05-01", datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024-02-29", datetime(2024, 2, 29, tzinfo=UTC)),
        ("2024-05-01T10:20Z", datetime(2024, 5, 1, 10, 20, tzinfo=UTC)),
        ("2024-05-01T10:20:30+02:00", datetime(2024, 5, 1, 8, 20, 30, tzinfo=UTC)),
        ("2024-05-01T10:20:30.5-05:30", datetime(2024, 5, 1, 15, 50, 30, 500000, tzinfo=UTC)),
        ("2024-05-01T10:20:30.123456789Z", datetime(2024, 5, 1, 10, 20, 30, 123456, tzinfo=UTC)),
        ("2024-05-01T00:00:00+14:00", datetime(2024, 4, 30, 10, tzinfo=UTC)),
    ],
)
def test_valid_lastmods(lastmod: str, instant: datetime) -> None:
    check_entry(SitemapEntry("https://example.com/", lastmod=lastmod))
    assert parse_lastmod(lastmod) == instant
    [url] = read_urls(urlset(SitemapEntry("https://example.com/", lastmod=lastmod)), lastmod)
    assert parse_lastmod(url["lastmod"]) == instant


@pytest.mark.parametrize(
    ("lastmod", "reason"),
    [
        ("2024", "precision"),
        ("2024-05", "precision"),
        ("2024-05-01T10:20:30", "W3C"),  # a time without a zone
        ("2024-05-01T10:20", "W3C"),
        ("2024-05-01 10:20:30Z", "W3C"),
        ("2024-13-01", "real"),
        ("2024-02-30", "real"),
        ("2023-02-29", "real"),
        ("0000-01-01", "real"),
        ("2024-05-01T24:00:00Z", "real"),
        ("2024-05-01T10:60:00Z", "real"),
        ("2024-05-01T10:20:60Z", "real"),
        ("2024-05-01T10:20:30+14:30", "real"),
        ("2024-05-01T10:20:30+05:60", "real"),
        ("2024-05-01T10:20:30.Z", "W3C"),
        ("2024-5-1", "W3C"),
        ("now", "W3C"),
        ("", "W3C"),
        ("Wed, 01 May 2024 10:20:30 GMT", "W3C"),
    ],
)
def test_invalid_lastmods(lastmod: str, reason: str) -> None:
    with pytest.raises(InvalidEntryError, match=reason):
        check_entry(SitemapEntry("https://example.com/", lastmod=lastmod))


@pytest.mark.parametrize("changefreq", ["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"])
def test_valid_changefreqs(changefreq: str) -> None:
    check_entry(SitemapEntry("https://example.com/", changefreq=changefreq))


@pytest.mark.parametrize("changefreq", ["Daily", "sometimes", "", " weekly"])
def test_invalid_changefreqs(changefreq: str) -> None:
    with pytest.raises(InvalidEntryError, match="changefreq"):
        check_entry(SitemapEntry("https://example.com/", changefreq=changefreq))


@pytest.mark.parametrize("priority", [0, 0.0, 0.5, 1, 1.0, 0.0001])
def test_valid_priorities(priority: float) -> None:
    entry = SitemapEntry("https://example.com/", priority=priority)
    check_entry(entry)
    read_urls(urlset(entry), str(priority))


@pytest.mark.parametrize("priority", [-0.1, 1.01, 2, float("nan"), float("inf"), True, "0.5"])
def test_invalid_priorities(priority: object) -> None:
    with pytest.raises(InvalidEntryError, match="priority"):
        check_entry(SitemapEntry("https://example.com/", priority=priority))  # type: ignore[arg-type]


def test_invalid_entry_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        check_entry(SitemapEntry("nope"))

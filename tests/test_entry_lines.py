"""Tests of sitemap_spider/sitemaps/entry_lines.py: an entry as one line and back.

That a field with a tab or a newline is refused is tested through the sorter in test_sorting.py.
"""

from __future__ import annotations

import pytest

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.entry_lines import decode_entry, encode_entry


@pytest.mark.parametrize(
    "entry",
    [
        SitemapEntry("https://example.com/"),
        SitemapEntry("https://example.com/?a=1&b=2", "2024-05-01T10:20:30+02:00", "daily", 0.5),
        SitemapEntry("https://example.com/", priority=0.1 + 0.2),  # a float repr must round-trip
        SitemapEntry("https://example.com/", lastmod="-", changefreq="+"),  # the markers themselves
        SitemapEntry("https://example.com/", lastmod=""),
    ],
)
def test_encoding_round_trips(entry: SitemapEntry) -> None:
    line = encode_entry(entry)
    assert "\n" not in line
    assert decode_entry(line) == entry

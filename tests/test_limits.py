"""The one "does it fit" check of a sitemap file (sitemaps/limits.py)."""

from __future__ import annotations

import pytest

from sitemap_spider.sitemaps.limits import MAX_BYTES_PER_SITEMAP, MAX_URLS_PER_SITEMAP, bytes_left, can_fit


@pytest.mark.parametrize(
    ("used_bytes", "used_urls", "more", "closing", "fits"),
    [
        (100, 0, 50, 10, True),
        (MAX_BYTES_PER_SITEMAP - 60, 5, 50, 10, True),  # exactly full once closed
        (MAX_BYTES_PER_SITEMAP - 60, 5, 51, 10, False),  # one byte over
        (100, MAX_URLS_PER_SITEMAP - 1, 10, 10, True),
        (100, MAX_URLS_PER_SITEMAP, 10, 10, False),  # full by URLs, whatever the bytes
    ],
)
def test_can_fit(used_bytes: int, used_urls: int, more: int, closing: int, fits: bool) -> None:
    assert can_fit(used_bytes, used_urls, more, closing) is fits


def test_smaller_limits() -> None:
    assert can_fit(90, 2, 10, 0, max_bytes=100, max_urls=3)
    assert not can_fit(90, 3, 10, 0, max_bytes=100, max_urls=3)
    assert not can_fit(91, 2, 10, 0, max_bytes=100, max_urls=3)
    assert bytes_left(90, 5, 100) == 5

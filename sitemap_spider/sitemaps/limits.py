"""The sitemaps protocol's limits as search engines apply them today, defined once.

The 2006 text's 10 MB per file and 1,000 sitemaps per index are gone: a file holds
50,000 URLs and 50 MiB uncompressed, an index 50,000 sitemaps.
"""

from __future__ import annotations

from typing import Final

#: URLs in one ``<urlset>``.
MAX_URLS_PER_SITEMAP: Final = 50_000
#: Bytes of one file, uncompressed (the limit counts what a ``.xml.gz`` unpacks to).
MAX_BYTES_PER_SITEMAP: Final = 52_428_800
#: ``<sitemap>`` children of one ``<sitemapindex>``.
MAX_SITEMAPS_PER_INDEX: Final = 50_000
#: Characters of one ``<loc>`` (sitemap.xsd's tLoc maxLength).
MAX_LOC_LENGTH: Final = 2048
#: sitemap.xsd's tLoc minLength: shorter locs ("http://a.b/") fail the XSD.
MIN_LOC_LENGTH: Final = 12


def bytes_left(used: int, closing: int, max_bytes: int = MAX_BYTES_PER_SITEMAP) -> int:
    """Bytes a file of ``used`` bytes can still take and be closed by ``closing`` bytes within ``max_bytes``."""
    return max_bytes - closing - used


def can_fit(
    used_bytes: int,
    used_urls: int,
    more: int,
    closing: int,
    *,
    max_bytes: int = MAX_BYTES_PER_SITEMAP,
    max_urls: int = MAX_URLS_PER_SITEMAP,
) -> bool:
    """Whether a file holding ``used_urls`` URLs in ``used_bytes`` bytes takes one more element of
    ``more`` bytes and can still be closed (``closing`` bytes) within its limits."""
    return used_urls < max_urls and more <= bytes_left(used_bytes, closing, max_bytes)

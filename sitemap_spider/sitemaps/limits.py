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

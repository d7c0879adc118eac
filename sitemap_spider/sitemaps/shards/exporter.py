"""Scrapy feed exporter that writes one sitemap ``<urlset>`` (FEED_EXPORTERS name ``sitemap``).

For feeds of sitemap entries outside the spider's own publishing path. Items of any kind
with a ``loc`` (or ``url``) field are accepted; an item that cannot make a valid ``<url>`` is
logged with the reason and skipped, so the file never holds an invalid entry. Each URL is written
once, for its first item (``sitemap/feed/duplicate`` counts the others). One feed file
is one sitemap, so at most 50,000 URLs and 50 MiB: past either limit the file stays a valid
sitemap of what fits, and every item left out is counted (``sitemap/feed/over_limit``) and
reported as an error that says what to use instead: ``FEED_EXPORT_BATCH_ITEM_COUNT = 50000``
with a ``%(batch_id)d`` feed URI, or the add-on's pipeline, which shards and indexes the set.

Extensions (hreflang alternates, images, videos, news) are not written: alternates are checked
for reciprocity across the whole set and news goes into files of its own, which one feed file
cannot do. Each item written without its extensions is counted (``sitemap/feed/extensions_dropped``)
and reported in an error that names the pipeline, which writes them.
"""

from __future__ import annotations

import logging
from typing import IO, TYPE_CHECKING, Any

from itemadapter import ItemAdapter, is_item
from scrapy.exporters import BaseItemExporter

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

from sitemap_spider.sitemaps.entry import RichEntry, SitemapEntry
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.xml.extensions import FIELDS
from sitemap_spider.sitemaps.item_entries import entry_from_item
from sitemap_spider.sitemaps.limits import MAX_BYTES_PER_SITEMAP, MAX_URLS_PER_SITEMAP, can_fit
from sitemap_spider.sitemaps.xml.elements import URLSET_CLOSE, URLSET_OPEN, url_element

logger = logging.getLogger(__name__)

#: Stats key: items the feed could not hold (a sitemap's limits).
OVER_LIMIT_STAT = "sitemap/feed/over_limit"
#: Stats key: items written without the extensions they had.
EXTENSIONS_DROPPED_STAT = "sitemap/feed/extensions_dropped"
#: Stats key: items of a URL the feed had written already (the first item of a URL is written).
DUPLICATE_STAT = "sitemap/feed/duplicate"
EXTENSIONS_ADVICE = (
    "a sitemap feed writes plain <url> elements; for hreflang alternates, images, videos and news, "
    'publish the set with the sitemap pipeline (ADDONS = {"sitemap_spider.Addon": 0})'
)
ADVICE = (
    f"one sitemap file holds at most {MAX_URLS_PER_SITEMAP:,} URLs and {MAX_BYTES_PER_SITEMAP:,} bytes: "
    f"for more, set FEED_EXPORT_BATCH_ITEM_COUNT = {MAX_URLS_PER_SITEMAP} with %(batch_id)d in the feed "
    'URI, or publish a sharded, indexed set with the sitemap pipeline (ADDONS = {"sitemap_spider.Addon": 0})'
)


class SitemapItemExporter(BaseItemExporter):
    """Write items as the ``<url>`` elements of a single sitemap."""

    def __init__(self, file: IO[bytes], **kwargs: Any) -> None:
        # dont_fail: feed options meant for other formats (indent, encoding...) are ignored;
        # a sitemap is always UTF-8 and one <url> per line.
        super().__init__(dont_fail=True, **kwargs)
        self.file = file
        self.urls_written = 0
        self.items_skipped = 0
        self.over_limit = 0
        self.extensions_dropped = 0
        self.bytes_written = 0
        self.duplicates = 0
        self._written: set[str] = set()  # the locs in the file: at most MAX_URLS_PER_SITEMAP
        self.stats: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler, file: IO[bytes], **kwargs: Any) -> Self:
        exporter = cls(file, **kwargs)
        exporter.stats = crawler.stats
        return exporter

    def start_exporting(self) -> None:
        self._write(URLSET_OPEN)

    def export_item(self, item: Any) -> None:
        try:
            entry = entry_from_item(self._serialized(item))
        except InvalidEntryError as exc:
            self._skip("Skipping item for the sitemap: %s", exc)
            return
        if entry.loc in self._written:  # another item of it, or the same page with a #fragment
            self.duplicates += 1
            if self.stats is not None:
                self.stats.inc_value(DUPLICATE_STAT)
            logger.debug("The sitemap feed lists %s already: item skipped", entry.loc)
            return
        element = url_element(entry)
        if not can_fit(self.bytes_written, self.urls_written, len(element), len(URLSET_CLOSE)):
            self._over_limit(entry.loc)
            return
        self._write(element)
        self._written.add(entry.loc)
        self.urls_written += 1
        if _has_extensions(item):
            self._extensions_dropped(entry.loc)

    def _serialized(self, item: Any) -> Any:
        # Honour per-field serializers (scrapy.Field(serializer=...)) as other exporters do.
        if isinstance(item, SitemapEntry):
            return item
        if not is_item(item):
            raise InvalidEntryError(f"not an item: {type(item).__name__}")
        adapter = ItemAdapter(item)
        return {
            name: self.serialize_field(adapter.get_field_meta(name), name, adapter[name])
            for name in ("loc", "url", "lastmod", "changefreq", "priority")
            if name in adapter
        }

    def _over_limit(self, loc: str) -> None:
        self.over_limit += 1
        if self.stats is not None:
            self.stats.inc_value(OVER_LIMIT_STAT)
        if self.over_limit == 1:
            logger.error("The sitemap feed is full, %s is not in it: %s", loc, ADVICE)

    def _extensions_dropped(self, loc: str) -> None:
        self.extensions_dropped += 1
        if self.stats is not None:
            self.stats.inc_value(EXTENSIONS_DROPPED_STAT)
        if self.extensions_dropped == 1:
            logger.warning("The sitemap feed lists %s without its extensions: %s", loc, EXTENSIONS_ADVICE)

    def _skip(self, message: str, *args: object) -> None:
        self.items_skipped += 1
        logger.warning(message, *args)

    def finish_exporting(self) -> None:
        self._write(URLSET_CLOSE)
        if self.over_limit:
            logger.error(
                "%d item(s) are NOT in the sitemap feed (it holds %d URLs): %s",
                self.over_limit, self.urls_written, ADVICE,
            )
        if self.extensions_dropped:
            logger.error(
                "%d item(s) are in the sitemap feed WITHOUT their extensions: %s",
                self.extensions_dropped, EXTENSIONS_ADVICE,
            )  # fmt: skip
        if self.urls_written == 0:
            # An empty <urlset> is not valid per sitemap.xsd (at least one <url>).
            logger.warning("The sitemap feed has no valid URL: the file is not a valid sitemap")

    def _write(self, data: bytes) -> None:
        self.file.write(data)
        self.bytes_written += len(data)


def _has_extensions(item: Any) -> bool:
    """Whether an item carries extension data (a RichEntry, or any of the extension fields)."""
    if isinstance(item, SitemapEntry):
        return isinstance(item, RichEntry) and any(getattr(item, name) for name in FIELDS)
    return is_item(item) and any(ItemAdapter(item).get(name) for name in FIELDS)

"""Scrapy feed exporter that writes one sitemap ``<urlset>`` (FEED_EXPORTERS name ``sitemap``).

For feeds of sitemap entries outside the spider's own publishing path. Items of any kind
with a ``loc`` field are accepted; an item that cannot make a valid ``<url>`` is logged with
the reason and skipped, so the file never holds an invalid entry. One feed file is one
sitemap, so at most 50,000 URLs and 50 MiB: set FEED_EXPORT_BATCH_ITEM_COUNT = 50000 with a
``%(batch_id)d`` feed URI for bigger crawls.
"""

from __future__ import annotations

import logging
from typing import IO, Any

from itemadapter import ItemAdapter, is_item
from scrapy.exporters import BaseItemExporter

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.item_entries import entry_from_item
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.limits import MAX_BYTES_PER_SITEMAP, MAX_URLS_PER_SITEMAP
from sitemap_spider.sitemaps.xml import URLSET_CLOSE, URLSET_OPEN, url_element

logger = logging.getLogger(__name__)


class SitemapItemExporter(BaseItemExporter):
    """Write items as the ``<url>`` elements of a single sitemap."""

    def __init__(self, file: IO[bytes], **kwargs: Any) -> None:
        # dont_fail: feed options meant for other formats (indent, encoding...) are ignored;
        # a sitemap is always UTF-8 and one <url> per line.
        super().__init__(dont_fail=True, **kwargs)
        self.file = file
        self.urls_written = 0
        self.items_skipped = 0
        self.bytes_written = 0

    def start_exporting(self) -> None:
        self._write(URLSET_OPEN)

    def export_item(self, item: Any) -> None:
        try:
            entry = entry_from_item(self._serialized(item))
        except InvalidEntryError as exc:
            self._skip("Skipping item for the sitemap: %s", exc)
            return
        element = url_element(entry)
        if self.urls_written >= MAX_URLS_PER_SITEMAP:
            self._skip("Skipping %s: a sitemap holds at most %d URLs", entry.loc, MAX_URLS_PER_SITEMAP)
            return
        if self.bytes_written + len(element) + len(URLSET_CLOSE) > MAX_BYTES_PER_SITEMAP:
            self._skip("Skipping %s: a sitemap holds at most %d bytes", entry.loc, MAX_BYTES_PER_SITEMAP)
            return
        self._write(element)
        self.urls_written += 1

    def _serialized(self, item: Any) -> Any:
        # Honour per-field serializers (scrapy.Field(serializer=...)) as other exporters do.
        if isinstance(item, SitemapEntry):
            return item
        if not is_item(item):
            raise InvalidEntryError(f"not an item: {type(item).__name__}")
        adapter = ItemAdapter(item)
        return {
            name: self.serialize_field(adapter.get_field_meta(name), name, adapter[name])
            for name in ("loc", "lastmod", "changefreq", "priority")
            if name in adapter
        }

    def _skip(self, message: str, *args: object) -> None:
        self.items_skipped += 1
        logger.warning(message, *args)

    def finish_exporting(self) -> None:
        self._write(URLSET_CLOSE)
        if self.urls_written == 0:
            # An empty <urlset> is not valid per sitemap.xsd (at least one <url>).
            logger.warning("The sitemap feed has no valid URL: the file is not a valid sitemap")

    def _write(self, data: bytes) -> None:
        self.file.write(data)
        self.bytes_written += len(data)

"""The item pipeline: each item becomes an entry of the sitemap set, published when the crawl ends.

Where the entry goes and what the end does belong to the crawl's mode (modes/); a spider
that has none (a project's own spider, through the add-on) gets the one-process mode,
whose base URL is ``SITEMAP_BASE_URL`` or the origin of the first entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import DropItem

from sitemap_spider.config import SitemapConfig
from sitemap_spider.modes import CrawlMode, mode_of
from sitemap_spider.sitemaps import InvalidEntryError, SitemapEntry, item_to_entry

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


class SitemapPipeline:
    """Hand each item to the crawl's mode as a sitemap entry; let the mode end the crawl."""

    def __init__(self, crawler: Crawler, config: SitemapConfig) -> None:
        self.crawler = crawler
        self.config = config
        self.mode: CrawlMode | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        # Read here, at start-up: a bad SITEMAP_* setting stops the crawl before any request.
        pipeline = cls(crawler, SitemapConfig.from_settings(crawler.settings))
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        return pipeline

    def open_spider(self) -> None:
        self.mode = mode_of(self.crawler.spider) or CrawlMode(self.crawler, self.config, self.config.base_url)

    def process_item(self, item: Any) -> Any:
        assert self.mode is not None
        try:
            entry = item_to_entry(item)
        except InvalidEntryError as exc:
            self.mode.publisher.invalid(ItemAdapter(item).get("loc") if ItemAdapter.is_item(item) else None, exc)
            return item  # not a sitemap entry: the project's other pipelines may want it
        if not self.mode.take(entry) and isinstance(item, SitemapEntry):
            # The crawl's own entries serve only the sitemap: drop one that cannot be listed.
            raise DropItem(f"Not a valid sitemap entry: {entry.loc}")
        return item

    def spider_closed(self, reason: str) -> None:
        if self.mode is not None:
            self.mode.end(reason)

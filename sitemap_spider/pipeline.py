"""The item pipeline: each item becomes an entry of the sitemap set, published when the crawl ends.

Where the entry goes and what the end does belong to the crawl's mode (modes/); a spider
that has none (a project's own spider, through the add-on) gets the one-process mode,
whose base URL is ``SITEMAP_BASE_URL`` or the origin of the first entry.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DropItem

from sitemap_spider.config import ConfigError, SitemapConfig
from sitemap_spider.config_parsing import check_output_dir
from sitemap_spider.modes import CrawlMode, mode_of
from sitemap_spider.sitemaps import InvalidEntryError, SitemapEntry, item_loc, item_to_entry

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class SitemapPipeline:
    """Hand each item to the crawl's mode as a sitemap entry; let the mode end the crawl."""

    def __init__(self, crawler: Crawler, config: SitemapConfig) -> None:
        self.crawler = crawler
        self.config = config
        self.mode: CrawlMode | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        # Read here, at start-up: a bad SITEMAP_* setting stops the crawl before any request.
        try:
            config = SitemapConfig.from_settings(crawler.settings)
            if mode_of(crawler.spider) is None:
                # A project's own spider (the sitemap spider's start-up checked its own crawl's).
                check_output_dir(config.output_dir)
        except ConfigError as exc:
            raise stopped_at_start_up(exc) from None
        pipeline = cls(crawler, config)
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        return pipeline

    def open_spider(self) -> None:
        self.mode = mode_of(self.crawler.spider)
        if self.mode is None:
            # A project's own spider: its crawl serves the project first, and goes on whatever the set's fate.
            self.mode = CrawlMode(self.crawler, self.config, self.config.base_url)
            self.mode.publisher.stops_crawl = False

    def process_item(self, item: Any) -> Any:
        assert self.mode is not None
        try:
            entry = item_to_entry(item)
        except InvalidEntryError as exc:
            self.mode.publisher.invalid(item_loc(item), exc)
            return item  # not a sitemap entry: the project's other pipelines may want it
        if not self.mode.take(entry) and isinstance(item, SitemapEntry):
            # The crawl's own entries serve only the sitemap: drop one that cannot be listed.
            raise DropItem(f"Not a valid sitemap entry: {entry.loc}")
        return item

    def spider_closed(self, reason: str) -> None:
        if self.mode is not None:
            self.mode.end(reason)


def stopped_at_start_up(error: ConfigError) -> ConfigError:
    """Log a bad setting on one line; the caller raises it, and Scrapy ends the crawl before any request.

    Scrapy (2.13 and later, its asyncio crawler process) marks the crawl as failed, hence exit
    code 1, and leaves the exception of the crawl's task to asyncio, which prints it with the
    traceback of Scrapy's start-up ("Task exception was never retrieved"). The error is read
    when the task ends, so that the line logged here is all the user sees. Under Twisted's
    crawler process there is no such task: Twisted prints its "Unhandled error in Deferred".
    """
    logger.error("%s", error)
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no asyncio loop running
        task = None
    if task is not None:
        task.add_done_callback(_read_error)
    return error


def _read_error(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()

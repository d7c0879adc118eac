"""The item pipeline: hands each entry to the sitemap set, publishes it when the crawl ends."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import DropItem

from sitemap_spider.modes.shared import SharedCrawl
from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.item_entries import item_to_entry
from sitemap_spider.sitemaps.errors import EmptySitemapError, InvalidEntryError, SitemapError
from sitemap_spider.sitemaps.publish import PublishResult, SitemapSetBuilder
from sitemap_spider.sitemaps.xml import check_entry
from sitemap_spider.modes.workers import Helper, Leader

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: Stats key holding why nothing was published; absent when the set was published.
NOT_PUBLISHED_STAT = "sitemap/not_published"


class SitemapPipeline:
    """Collect entries while the crawl runs; publish the set only if the crawl finished.

    A crawl that was interrupted, failed or listed no page publishes nothing,
    so the set published before stays in place.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.builder: SitemapSetBuilder | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        pipeline = cls(crawler)
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        return pipeline

    def _new_builder(self) -> SitemapSetBuilder:
        spider = self._spider()
        return SitemapSetBuilder(spider.config.output_options(spider.target.base_url(spider.config)))

    def open_spider(self) -> None:
        spider = self._spider()
        workers = spider.workers
        if isinstance(workers, Helper):
            return  # the helper of a two-process crawl sends its entries to the leader
        if isinstance(workers, Leader):
            workers.on_entry = self._entry_of_helper
        # A resumable crawl keeps its entries in the crawl state (stored by
        # CrawlStateMiddleware) and builds the set from there when it ends.
        if spider.crawl_state is None:
            self.builder = self._new_builder()

    def _entry_of_helper(self, fields: dict[str, Any]) -> None:
        try:
            self.process_item(SitemapEntry(**fields))
        except DropItem:
            pass  # recorded as invalid

    def process_item(self, item: Any) -> Any:
        workers = self._spider().workers
        if isinstance(workers, Helper):
            workers.send_entry(ItemAdapter(item).asdict())  # the leader checks and counts it
            return item
        try:
            entry = item_to_entry(item)
            if self.builder is not None:
                self.builder.add(entry)  # checks the entry
            else:
                check_entry(entry)  # a resumable crawl's entries are added when it publishes
        except InvalidEntryError as exc:
            self._invalid(ItemAdapter(item).get("loc") if ItemAdapter.is_item(item) else None, exc)
            raise DropItem(f"Not a valid sitemap entry: {exc}") from None
        self.crawler.stats.inc_value("sitemap/entries")
        return item

    def _invalid(self, loc: object, error: Exception) -> None:
        self._spider().report.exclude(str(loc), "invalid", str(error))

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if isinstance(self._spider().workers, Helper):
            self._spider().report.close()
            return
        state = self._spider().crawl_state
        if self.builder is None and state is None:
            return
        report = self._spider().report
        if isinstance(state, SharedCrawl) and reason == "finished" and not state.publishes:
            self._leave_shared_crawl(state)
            return
        stats = self.crawler.stats
        summary: dict[str, Any] = {"finish_reason": reason}
        try:
            if reason != "finished":
                if self.builder is not None:
                    self.builder.discard()
                resume = ""  # the log line adds the last full stop
                if isinstance(state, SharedCrawl):
                    resume = ". The other workers go on with what it had not finished"
                elif state is not None:
                    resume = ". Run the same command again to resume"
                self._not_published(f"the crawl did not finish ({reason}){resume}")
                return
            if state is not None:
                self.builder = self._new_builder()
                for entry in state.entries():
                    try:
                        self.builder.add(entry)
                    except InvalidEntryError as exc:
                        self._invalid(entry.loc, exc)
            assert self.builder is not None
            result = self.builder.publish(self._content_duplicate)
        except EmptySitemapError:
            self._not_published("no page could be listed")
            return
        except (SitemapError, OSError) as exc:
            if self.builder is not None:
                self.builder.discard()
            self._not_published(f"publishing failed: {exc}")
            return
        else:
            stats.set_value("sitemap/urls", result.urls)
            stats.set_value("sitemap/files", result.files)
            if result.duplicates:
                stats.set_value("sitemap/excluded/duplicate", result.duplicates)
            summary.update(self._summary(result))
            self._log_summary(result, report.excluded_counts())
            if state is not None:
                state.mark_finished()
        finally:
            summary.setdefault("urls", 0)
            summary.setdefault("files", 0)
            summary.setdefault("not_published", stats.get_value(NOT_PUBLISHED_STAT))
            report.write(summary)
            report.close()
            if state is not None:
                state.close()

    def _leave_shared_crawl(self, shared: SharedCrawl) -> None:
        """A worker of a shared crawl that does not publish: say who does, write no report."""
        try:
            if shared.role == "leave":
                logger.info(
                    "Shared crawl %s ended; worker %s publishes the set (this is %s)",
                    shared.crawl_id,
                    shared.publisher,
                    shared.worker,
                )
            else:
                self._not_published(f"shared crawl {shared.crawl_id} was finished or restarted elsewhere")
        finally:
            self._spider().report.close()
            shared.close()

    def _content_duplicate(self, entry: SitemapEntry) -> None:
        spider = self._spider()
        spider.report.exclude(spider.target.site.to_crawl(entry.loc), "duplicate_content")

    def _not_published(self, why: str) -> None:
        self.crawler.stats.set_value(NOT_PUBLISHED_STAT, why)
        logger.error(
            "Sitemap NOT published: %s. Any set published earlier is left as it was.", why
        )

    @staticmethod
    def _summary(result: PublishResult) -> dict[str, Any]:
        return {
            "urls": result.urls,
            "files": result.files,
            "index": str(result.index_path),
            "index_url": result.index_url,
        }

    @staticmethod
    def _log_summary(result: PublishResult, excluded: dict[str, int]) -> None:
        reasons = ", ".join(f"{reason} {count:,}" for reason, count in excluded.items() if count)
        logger.info(
            "Sitemap published: %s URLs in %s file(s); index %s\n"
            "  not listed: %s\n"
            "  add this line to robots.txt:  Sitemap: %s",
            f"{result.urls:,}",
            result.files,
            result.index_path,
            reasons or "none",
            result.index_url,
        )

    def _spider(self) -> Any:
        return self.crawler.spider

"""How a crawl is run: the interface every crawl mode has, and the one-process crawl that is its base.

A mode is chosen once, at start-up (:func:`sitemap_spider.modes.for_crawler`). The
spider, the pipeline, the report and the middlewares talk to it through the methods
below and never ask which mode it is. A mode owns:

- the scheduler (and spider middlewares) it needs: :meth:`configure`, on the settings;
- where entries and exclusions go: :meth:`take`, :meth:`exclusion_store`;
- routing of URLs that belong to another process: :meth:`hand_over`;
- the end of the crawl: :meth:`end` publishes, leaves it to another worker, or keeps
  the state for a resume.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from scrapy import signals

from sitemap_spider import stats as keys
from sitemap_spider.crawl.report import CrawlReport
from sitemap_spider.modes.schedulers import SpillScheduler
from sitemap_spider.publishing import SetPublisher
from sitemap_spider.sitemaps.errors import InvalidEntryError

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from sitemap_spider.config import SitemapConfig
    from sitemap_spider.crawl.report import ExclusionStore
    from sitemap_spider.sitemaps.entry import SitemapEntry

logger = logging.getLogger(__name__)

#: How the spider turns a URL another process handed over into a request: (url, skip reason).
MakeRequest = Callable[[str, "str | None"], "Request"]


class CrawlMode:
    """One process, its entries in a sorted set on disk, published when the crawl finishes."""

    #: The queue of a big site does not fit in memory (see SpillScheduler).
    scheduler: type = SpillScheduler

    def __init__(
        self, crawler: Crawler, config: SitemapConfig, base_url: str | None, to_crawl: Callable[[str], str] = str
    ) -> None:
        self.crawler = crawler
        self.config = config
        self.publisher = SetPublisher(crawler, config, base_url, to_crawl)
        self.report: CrawlReport | None = None
        # The report opens with the crawl: stats and the spider exist only then.
        crawler.signals.connect(self._open_report, signal=signals.spider_opened)

    @classmethod
    def configure(cls, settings: BaseSettings) -> None:
        """The Scrapy settings this mode needs, at add-on priority."""
        settings.set("SCHEDULER", cls.scheduler, priority="addon")

    @classmethod
    def check(cls, config: SitemapConfig) -> None:
        """Before any request: :class:`~sitemap_spider.config.ConfigError` when the mode cannot run."""

    # --- the start -----------------------------------------------------------------------
    def attach(self, make_request: MakeRequest, met: set[str]) -> None:
        """How the spider makes a request of a URL handed over, and the set of links it has met."""

    def queues_start_urls(self) -> bool:
        """Whether this process queues the start URLs."""
        return True

    def start_urls_queued(self) -> None:
        """The start URLs are in the queue."""

    # --- the crawl -------------------------------------------------------------------------
    def page_seen(self) -> None:
        """Called for each page the spider is given."""

    def hand_over(self, url: str, depth: int, skip: str | None = None) -> bool:
        """Send ``url`` to the process that fetches it; False when it is this process's."""
        return False

    def hand_over_render(self, url: str, depth: int) -> bool:
        """Send a page that needs the browser to the process that renders; False: render it here."""
        return False

    def request_done(self, request: Request | None) -> None:
        """Everything a request led to has been handed on (its entry, its links)."""

    def exclusion_store(self) -> ExclusionStore | None:
        """Where exclusions are kept besides the stats; None: a spool file beside the report."""
        return None

    def _open_report(self) -> None:
        self.report = CrawlReport(self.publisher.stats, self.config.report_path, self.exclusion_store())
        self.publisher.report = self.report

    # --- entries ---------------------------------------------------------------------------
    def take(self, entry: SitemapEntry) -> bool:
        """Take one entry for the set; False (recorded as invalid) when it cannot be listed."""
        try:
            self.keep(entry)
        except InvalidEntryError as exc:
            self.publisher.invalid(entry.loc, exc)
            return False
        self.publisher.stats.inc_value(keys.ENTRIES)
        return True

    def keep(self, entry: SitemapEntry) -> None:
        """Where a valid entry goes; :class:`InvalidEntryError` when it is not one."""
        self.publisher.add(entry)

    # --- the end ---------------------------------------------------------------------------
    def end(self, reason: str) -> None:
        """The crawl closed: publish the set if it finished."""
        self.publisher.finish(reason)

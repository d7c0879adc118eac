"""The helper of a two-process crawl (see :mod:`sitemap_spider.modes.workers`): the second process.

It crawls the URLs the leader hands it, sends back the links that belong to the leader,
its entries and its exclusions, tells the leader each time it is idle, and stops when told.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider

from sitemap_spider.crawl import report_facts as facts
from sitemap_spider.modes.workers.channel import Channel
from sitemap_spider.modes.workers.handover import Workers
from sitemap_spider.sitemaps import SitemapEntry, entry_row

if TYPE_CHECKING:
    import socket

    from scrapy.crawler import Crawler

    from sitemap_spider.config import CrawlTarget, SitemapConfig
    from sitemap_spider.crawl.report import ExclusionStore
    from sitemap_spider.history.record import PageRecord

logger = logging.getLogger(__name__)


class Helper(Workers):
    """The second process: crawls its half, sends entries and exclusions to the leader."""

    index = 1
    count = 2

    def __init__(self, crawler: Crawler, config: SitemapConfig, target: CrawlTarget, sock: socket.socket) -> None:
        super().__init__(crawler, config, target)
        self._stopped = False
        self._told: tuple[int, int] | None = None
        self._sock = sock
        crawler.signals.connect(self._on_opened, signal=signals.spider_opened)
        crawler.signals.connect(self._on_idle, signal=signals.spider_idle)
        crawler.signals.connect(self._on_closed, signal=signals.spider_closed)

    def _on_opened(self) -> None:
        self.channel = Channel(self._sock, self._on_message, self._on_lost)

    def queues_start_urls(self) -> bool:
        return False  # the leader hands this process its URLs

    def take(self, entry: SitemapEntry, canonical: str | None = None) -> bool:
        """Send the entry (and the canonical URL it waits on) to the leader, which checks and counts it."""
        assert self.channel is not None
        # The row, not its JSON text: the channel encodes the whole message as JSON once.
        message = {"t": "entry", "e": entry_row(entry)}
        if canonical is not None:
            message["c"] = canonical
        self.channel.send(message)
        return True

    def observe(self, record: PageRecord) -> None:
        """Send a page's history record to the leader, which commits them with its set."""
        assert self.channel is not None
        # The values, not their JSON text: the channel encodes the whole message once.
        self.channel.send({"t": "record", "r": record.wire()})

    def exclusion_store(self) -> ExclusionStore:
        return _SentExclusions(self)

    def add_exclusion(self, url: str, reason: str, detail: str | None) -> None:
        """Send an exclusion to the leader, which records it (this process counts it too)."""
        assert self.channel is not None
        self.channel.send({"t": "exclude", "u": url, "r": reason, "d": detail})

    def send_counts(self, counts: Mapping[str, int]) -> None:
        """Send this process's last counts and its queue to the leader, which adds them to the crawl's."""
        assert self.channel is not None
        # Exclusions are counted by the leader as it records each one this process sends.
        sent = {key: amount for key, amount in counts.items() if key != facts.EXCLUDED}
        self.channel.send({"t": "counts", "c": sent, "q": self.queued()})

    def shows_progress(self) -> bool:
        return False  # the leader shows the whole crawl's

    def _move_counts(self) -> None:
        if self.report is not None and self.channel is not None and not self.report.flush():
            self.send_counts({})  # the queue, even when nothing was counted

    def add_problem(self, kind: str, reason: str, page: str, detail: str) -> None:
        """Send extension data not written (crawl/report.py's not_written) to the leader, which records it."""
        assert self.channel is not None
        self.channel.send({"t": "problem", "k": kind, "r": reason, "p": page, "d": detail})

    def end(self, reason: str) -> None:
        # The leader publishes and writes the report.
        if self.report is not None:
            self.report.close()
        self.close_history()

    def hand_over_render(self, url: str, depth: int) -> bool:
        """The leader renders every page: one browser on the machine, not two (each about 1 CPU
        second to start, and CPU while it has a page open), and one learner of templates. It
        fetches the page again, as any link handed to it, and judges it itself."""
        if not self.active:
            return False
        assert self.channel is not None
        self.channel.send({"t": "render", "l": [[url, depth, None]]})
        self.sent += 1
        return True

    def _on_message(self, message: dict[str, Any]) -> None:
        if message["t"] == "links":
            self._take_links(message["l"])
        elif message["t"] == "lend":
            # Pages of the leader's queue (leader.py _lend): its duplicate filter passed them once.
            self._take_links(message["l"], again=True)
        elif message["t"] == "met":
            self._take_met(message["u"])
        elif message["t"] == "time_up":
            self.held.time_is_up()
        elif message["t"] in ("answers", "note"):
            self._from_elsewhere(message)
        elif message["t"] == "stop":
            self._stopped = True
            self._wake()
        elif message["t"] == "quit":
            self._close("shutdown")

    def _take_met(self, urls: list[str]) -> None:
        """The leader's requests from before this process started: links and redirects to them are not fetched."""
        assert self.met is not None
        self.met.update(urls)
        scheduler = getattr(self.crawler.engine, "scheduler", None)
        seen = getattr(getattr(scheduler, "df", None), "request_seen", None)
        if seen is not None:
            for url in urls:
                seen(Request(url))

    def _on_lost(self) -> None:
        if self._stopped or not self.crawler.crawling:
            return  # ending anyway (the leader's end, or Ctrl-C)
        logger.error("The leading crawl process is gone: this worker stops")
        self._close("leader_gone")

    def _close(self, reason: str) -> None:
        self._stopped = True
        engine = self.crawler.engine
        if engine is not None and engine.spider is not None:
            asyncio.ensure_future(engine.close_spider_async(reason=reason))

    def _on_idle(self) -> None:
        if self._stopped:
            return
        if self.held.keep_open():
            # Not idle while retries are held: the leader must not end the crawl yet.
            raise DontCloseSpider
        counts = (self.received, self.sent)
        if counts != self._told:
            self._told = counts
            assert self.channel is not None
            self.channel.send({"t": "idle", "recv": self.received, "sent": self.sent})
        raise DontCloseSpider

    async def _on_closed(self, reason: str) -> None:
        if self.channel is None:
            return
        if self.report is not None:
            self.report.flush()  # the last counts go before the bye
        stats = self.crawler.stats.get_stats() if self.crawler.stats is not None else {}
        self.channel.send({"t": "bye", "reason": reason, "stats": {
            key: value for key, value in stats.items() if isinstance(value, int)
        }})
        await self.channel.drain()
        await self.channel.aclose()


class _SentExclusions:
    """The helper's exclusions: sent to the leader, none kept here."""

    def __init__(self, helper: Helper) -> None:
        self.add_exclusion = helper.add_exclusion
        self.add_counts = helper.send_counts
        self.add_problem = helper.add_problem

    def exclusions(self) -> Iterator[tuple[str, str, str | None]]:
        return iter(())

    def exclusion_counts(self) -> dict[str, int]:
        return {}

    def counts(self) -> dict[str, int]:
        return {}

"""The two processes of a two-process crawl: the leader and the helper (see :mod:`sitemap_spider.modes.workers`).

Each side of their messages: links handed over, the helper's entries and
exclusions, the idle counts that let the leader end the crawl when nothing is
left anywhere, and what each does when the other is gone.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider

from sitemap_spider.crawl.report import EXCLUDED_PREFIX
from sitemap_spider.modes.workers.channel import Channel, owner
from sitemap_spider.modes.workers.handover import Workers
from sitemap_spider.modes.workers.spawn import share_concurrency, spawn_helper, why_paced

if TYPE_CHECKING:
    import socket
    from multiprocessing.process import BaseProcess

    from scrapy.crawler import Crawler

    from sitemap_spider.config import SitemapConfig

logger = logging.getLogger(__name__)

#: Stats: 2 once the helper process has started.
WORKERS_STAT = "sitemap/workers"
# The helper's stats that are not counts of work (summing them would mean nothing): Scrapy's
# times and finish reason, each process's memory and log lines, what the leader sets itself,
# and the exclusions, which the helper sent over one by one and the leader counted. Whole keys
# and prefixes: a count whose name holds "time" or "start" (say "sitemap/render/timeout") is summed.
_NOT_SUMMED = frozenset({"start_time", "finish_time", "finish_reason", "elapsed_time_seconds", WORKERS_STAT})
_NOT_SUMMED_PREFIXES = ("memusage/", "log_count/", EXCLUDED_PREFIX, WORKERS_STAT + "/")
# Maxima (Scrapy's deepest request, scrapy-playwright's most pages open at once): the larger of
# the two processes' values, not their sum.
_MAXIMA = frozenset({"request_depth_max", "playwright/page_count/max_concurrent"})
# Responses between two looks at the queue while deciding whether to start the helper.
_CHECK_EVERY = 32


class Leader(Workers):
    """The process the user started: seeds the crawl, starts the helper, ends and publishes."""

    def __init__(self, crawler: Crawler, config: SitemapConfig, spider_kwargs: dict[str, Any]) -> None:
        super().__init__(crawler)
        self.after = config.workers_after
        self.spider_kwargs = spider_kwargs
        self.process: BaseProcess | None = None
        self.on_entry: Callable[[dict[str, Any]], None] | None = None
        self.on_exclude: Callable[[str, str, str | None], None] | None = None
        self._handed: list[tuple[str, int, str | None]] = []
        self._responses = 0
        self._helper_idle: dict[str, int] | None = None
        self._stopping = False
        self._helper_done = False
        self._decided = False  # whether to start the helper
        crawler.signals.connect(self._on_idle, signal=signals.spider_idle)
        crawler.signals.connect(self._on_closed, signal=signals.spider_closed)

    def hand_over(self, url: str, depth: int, skip: str | None = None) -> bool:
        if not super().hand_over(url, depth, skip):
            return False
        self._handed.append((url, depth, skip))  # crawled here if the helper dies
        return True

    def response_seen(self) -> None:
        """Called for each page: start the helper once the queue shows the site is big."""
        if self._decided:
            return
        self._responses += 1
        if self._responses % _CHECK_EVERY:
            return
        scheduler = getattr(self.crawler.engine, "scheduler", None)
        if scheduler is None or len(scheduler) < self.after:
            return
        paced = why_paced(self.crawler)
        if paced:
            # A second process would double the pace the site asked for: stay in one.
            logger.info("Crawling in one process: %s", paced)
            self._decided = True
            return
        self._decided = True
        self._start_helper()

    def _start_helper(self) -> None:
        started = spawn_helper(self.crawler, self.spider_kwargs)
        if started is None:
            return
        self.process, ours = started
        self.count = 2
        share_concurrency(self.crawler)
        self.channel = Channel(ours, self._on_message, self._on_lost)
        if self.met is not None:
            # URLs this process requested before the helper existed stay its own: the helper
            # must not fetch the ones its hash gives it again when it meets links to them.
            mine = [url for url in self.met if url.startswith(("http://", "https://")) and owner(url, 2) == 1]
            self.channel.send({"t": "met", "u": mine})
        assert self.crawler.stats is not None
        self.crawler.stats.set_value(WORKERS_STAT, 2)
        logger.info(
            "The queue holds over %d requests: a second crawling process (pid %s) takes half of the URLs",
            self.after, self.process.pid,
        )

    def _on_message(self, message: dict[str, Any]) -> None:
        kind = message["t"]
        if kind == "links":
            self._take_links(message["l"])
        elif kind == "entry":
            if self.on_entry is not None:
                self.on_entry(message["e"])
        elif kind == "exclude":
            if self.on_exclude is not None:
                self.on_exclude(message["u"], message["r"], message.get("d"))
        elif kind == "idle":
            self._helper_idle = message
            self._wake()
        elif kind == "bye":
            self._finish(message)

    def _finish(self, bye: dict[str, Any]) -> None:
        stats = self.crawler.stats
        assert stats is not None
        for key, value in helper_counts(bye.get("stats", {})).items():
            if key in _MAXIMA:
                stats.max_value(key, value)
            else:
                stats.inc_value(key, value)
        if bye.get("reason") != "finished" and not self._stopping:
            self._lost_soon(f"it stopped ({bye.get('reason')})")
            return
        self._helper_done = True
        if self.channel is not None:
            self.channel.close()
        self._wake()

    def _on_lost(self) -> None:
        if not self._helper_done:
            self._lost_soon("its connection was lost")

    def _lost_soon(self, why: str) -> None:
        # Ctrl-C in a terminal stops both processes: give this one's own shutdown a second
        # to begin before taking the helper's URLs over.
        asyncio.get_event_loop().call_later(1.0, self._lost, why)

    def _lost(self, why: str) -> None:
        """The helper is gone before the end: crawl what was handed to it here."""
        if self._helper_done:
            return
        self._helper_done = True
        if self.channel is not None:
            self.channel.close()
        self.count = 1
        engine = self.crawler.engine
        if self._stopping or not self.crawler.crawling or engine is None or engine.spider is None:
            return  # this process is ending too
        logger.error("The second crawling process is gone (%s): this process crawls its %d URLs",
                     why, len(self._handed))
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value("sitemap/workers/lost")
        handed, self._handed = self._handed, []
        self._take_links([list(link) for link in handed])
        self._wake()

    def _on_idle(self) -> None:
        if self.process is None or self._helper_done:
            return
        idle = self._helper_idle
        if not self._stopping and idle is not None and idle["recv"] == self.sent and idle["sent"] == self.received:
            # Both idle, every link taken in on both sides: nothing is left anywhere.
            self._stopping = True
            assert self.channel is not None
            self.channel.send({"t": "stop"})
        raise DontCloseSpider

    async def _on_closed(self, reason: str) -> None:
        process = self.process
        if process is None or process.pid is None:
            return
        if not self._helper_done and self.channel is not None:
            # The crawl ends before its time (Ctrl-C, an error): the helper stops now too.
            self._stopping = True
            self.channel.send({"t": "quit"})
        # Waiting on the loop, not in join(): the helper may still need this end to read.
        deadline = time.monotonic() + 30
        while process.is_alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if process.is_alive():
            logger.warning("The second crawling process did not end; stopping it")
            process.terminate()
        process.join(timeout=10)
        if self.channel is not None:
            await self.channel.aclose()


class Helper(Workers):
    """The second process: crawls its half, sends entries and exclusions to the leader."""

    index = 1
    count = 2

    def __init__(self, crawler: Crawler, sock: socket.socket) -> None:
        super().__init__(crawler)
        self._stopped = False
        self._told: tuple[int, int] | None = None
        self._sock = sock
        crawler.signals.connect(self._on_opened, signal=signals.spider_opened)
        crawler.signals.connect(self._on_idle, signal=signals.spider_idle)
        crawler.signals.connect(self._on_closed, signal=signals.spider_closed)

    def _on_opened(self) -> None:
        self.channel = Channel(self._sock, self._on_message, self._on_lost)

    def send_entry(self, fields: dict[str, Any]) -> None:
        assert self.channel is not None
        self.channel.send({"t": "entry", "e": fields})

    def send_exclusion(self, url: str, reason: str, detail: str | None) -> None:
        assert self.channel is not None
        self.channel.send({"t": "exclude", "u": url, "r": reason, "d": detail})

    def _on_message(self, message: dict[str, Any]) -> None:
        if message["t"] == "links":
            self._take_links(message["l"])
        elif message["t"] == "met":
            self._take_met(message["u"])
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
        counts = (self.received, self.sent)
        if counts != self._told:
            self._told = counts
            assert self.channel is not None
            self.channel.send({"t": "idle", "recv": self.received, "sent": self.sent})
        raise DontCloseSpider

    async def _on_closed(self, reason: str) -> None:
        if self.channel is None:
            return
        stats = self.crawler.stats.get_stats() if self.crawler.stats is not None else {}
        self.channel.send({"t": "bye", "reason": reason, "stats": {
            key: value for key, value in stats.items() if isinstance(value, int)
        }})
        await self.channel.drain()
        await self.channel.aclose()


def helper_counts(stats: dict[str, Any]) -> dict[str, int]:
    """The helper's stats that count work, which the leader adds to its own (maxima: keeps the larger)."""
    return {
        key: value
        for key, value in stats.items()
        if isinstance(value, int)
        and not isinstance(value, bool)
        and key not in _NOT_SUMMED
        and not key.startswith(_NOT_SUMMED_PREFIXES)
    }

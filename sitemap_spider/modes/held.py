"""Requests held back by the crawl mode: retries waiting out a back-off, and the last pass.

A retry that must wait is kept here instead of in Scrapy's downloader, where a waiting
request would hold one of the ``CONCURRENT_REQUESTS`` places (and a site with many
failing pages would stall the crawl). It is handed to the engine when its time comes;
the engine queues it like any other request. Its predecessor stays unfinished meanwhile:
with ``JOBDIR`` its row stays in flight and a resumed crawl fetches it again; in a
shared crawl its lease stays with this worker.

Pages that failed all their retries are kept for the last pass: once the crawl has
nothing else to do, and ``SITEMAP_RETRY_LAST_PASS_DELAY`` seconds after the last of
them failed, they are queued once more. Until then the mode keeps the spider open.
"""

from __future__ import annotations

import heapq
import itertools
import logging
from time import monotonic
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.utils.asyncio import CallLaterResult, call_later

from sitemap_spider import stats as keys

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class HeldRequests:
    """Requests waiting for their time, released into the engine; the crawl does not end while any wait."""

    def __init__(self, crawler: Crawler, last_pass_delay: float) -> None:
        self.crawler = crawler
        self.last_pass_delay = last_pass_delay
        self._due: list[tuple[float, int, Request]] = []  # heap of (monotonic due time, order, request)
        self._order = itertools.count()
        self._timer: CallLaterResult | None = None
        self._timer_at = 0.0
        self._last_pass: list[Request] = []
        self._last_failed = 0.0
        self._pass_timer: CallLaterResult | None = None
        crawler.signals.connect(self.close, signal=signals.spider_closed)

    def __len__(self) -> int:
        return len(self._due) + len(self._last_pass)

    def hold(self, request: Request, delay: float) -> None:
        """Queue ``request`` in ``delay`` seconds."""
        due = monotonic() + delay
        heapq.heappush(self._due, (due, next(self._order), request))
        if self._timer is None or due < self._timer_at:
            self._arm()

    def hold_for_last_pass(self, request: Request) -> None:
        """Queue ``request`` again once the rest of the crawl is done."""
        self._last_pass.append(request)
        self._last_failed = monotonic()

    def keep_open(self) -> bool:
        """At spider_idle: whether the crawl must stay open; starts the last pass when only it is left."""
        if self._due:
            return True  # the timer queues them
        if not self._last_pass:
            return False
        if self._pass_timer is None:
            wait = max(0.0, self._last_failed + self.last_pass_delay - monotonic())
            logger.info(
                "Last pass: %d page(s) that failed every retry are tried again in %.0f s",
                len(self._last_pass), wait,
            )  # fmt: skip
            self._pass_timer = call_later(wait, self._start_last_pass)
        return True

    def close(self) -> None:
        """The crawl closed: nothing more is released (a resumed crawl fetches them again)."""
        for timer in (self._timer, self._pass_timer):
            if timer is not None:
                timer.cancel()
        self._timer = self._pass_timer = None

    def _arm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._due:
            self._timer_at = self._due[0][0]
            self._timer = call_later(max(0.0, self._timer_at - monotonic()), self._release_due)

    def _release_due(self) -> None:
        self._timer = None
        now = monotonic()
        while self._due and self._due[0][0] <= now:
            self._crawl(heapq.heappop(self._due)[2])
        self._arm()

    def _start_last_pass(self) -> None:
        self._pass_timer = None
        requests, self._last_pass = self._last_pass, []
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value(keys.RETRY_LAST_PASS, len(requests))
        for request in requests:
            self._crawl(request)

    def _crawl(self, request: Request) -> None:
        engine = self.crawler.engine
        if engine is None or engine.spider is None:
            return  # closing: the request is lost with the crawl, or fetched again on resume
        # engine.crawl schedules the engine's next look at its queue.
        engine.crawl(request)

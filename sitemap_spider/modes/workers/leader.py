"""The leader of a two-process crawl (see :mod:`sitemap_spider.modes.workers`): the process the user started.

It seeds the crawl, starts the helper when the queue shows the site is big, takes in the
helper's links, entries and exclusions, ends the crawl when nothing is left in either
process, and publishes; if the helper dies, it crawls what it had handed over itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider

from sitemap_spider import request_meta as meta
from sitemap_spider import stats as keys
from sitemap_spider.history.record import PageRecord
from sitemap_spider.modes.schedulers import SpillScheduler
from sitemap_spider.modes.workers.channel import Channel, owner
from sitemap_spider.modes.workers.handover import Workers
from sitemap_spider.modes.workers.spawn import share_concurrency, slowed_down_now, spawn_helper, why_paced
from sitemap_spider.render.renderer import RENDER_PRIORITY
from sitemap_spider.sitemaps import entry_of_row

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from scrapy import Request

    from scrapy.crawler import Crawler

    from sitemap_spider.config import CrawlTarget, SitemapConfig

logger = logging.getLogger(__name__)

# The helper's stats that are not counts of work (summing them would mean nothing): Scrapy's
# times and finish reason, each process's memory and log lines, what the leader sets itself,
# and the exclusions, which the helper sent over one by one and the leader counted. Whole keys
# and prefixes: a count whose name holds "time" or "start" (say "sitemap/render/timeout") is summed.
_NOT_SUMMED = frozenset({"start_time", "finish_time", "finish_reason", "elapsed_time_seconds", keys.WORKERS})
_NOT_SUMMED_PREFIXES = ("memusage/", "log_count/", keys.EXCLUDED, keys.WORKERS + "/", keys.IMAGES, keys.VIDEO, keys.NEWS)
# Maxima (Scrapy's deepest request, scrapy-playwright's most pages open at once): the larger of
# the two processes' values, not their sum.
_MAXIMA = frozenset({"request_depth_max", "playwright/page_count/max_concurrent"})
# Responses between two looks at the queue while deciding whether to start the helper.
_CHECK_EVERY = 32
# Lending (see Leader._lend): the helper's queue at or below this is running out; at most this
# many of this process's requests lent at once (the helper says its queue about every second).
_LEND_BELOW = 16
_LEND_AT_MOST = 400


class Leader(Workers):
    """The process the user started: seeds the crawl, starts the helper, ends and publishes."""

    def __init__(
        self, crawler: Crawler, config: SitemapConfig, target: CrawlTarget, spider_kwargs: dict[str, Any]
    ) -> None:
        super().__init__(crawler, config, target)
        self.after = config.workers_after
        self.after_seconds = config.workers_after_seconds
        #: When page_seen first looked at the queue (monotonic), and the responses seen then.
        self._first_look: tuple[float, int] | None = None
        self.spider_kwargs = spider_kwargs
        self.process: BaseProcess | None = None
        self._handed: list[tuple[str, int, str | None]] = []
        self._lent: list[tuple[str, int, str | None]] = []  # requests of this process's queue lent to the helper
        self._renders = False  # whether the helper has sent a page to render (see _lend)
        self._responses = 0
        self._helper_idle: dict[str, int] | None = None
        self._stopping = False
        self._helper_done = False
        self._decided = False  # whether to start the helper
        self._waited = False  # whether it waited for the site to answer well (said once in the log)
        self._helper_queued = 0  # the helper's queue, as it last said
        # Links of the helper's half met here before it started, announced to it as requested
        # here (see _start_helper): this process must fetch them itself, when at all.
        self._announced: set[str] = set()
        crawler.signals.connect(self._on_idle, signal=signals.spider_idle)
        crawler.signals.connect(self._on_closed, signal=signals.spider_closed)

    def hand_over(self, url: str, depth: int, skip: str | None = None) -> bool:
        if url in self._announced:
            # Met before the helper started but requested only now: a page's links are all
            # marked met at once and turned into requests lazily, one by one, as Scrapy takes
            # the callback's output (with CONCURRENT_ITEMS=1, across many turns of the loop).
            # The helper was told this URL is requested here and would drop it.
            self._announced.discard(url)
            return False
        if not super().hand_over(url, depth, skip):
            return False
        self._handed.append((url, depth, skip))  # crawled here if the helper dies
        return True

    def page_seen(self) -> None:
        """Start the helper once the queue shows the site is big."""
        if self._decided:
            return
        self._responses += 1
        if self._responses % _CHECK_EVERY:
            return
        now = time.monotonic()
        if self._first_look is None:
            self._first_look = (now, self._responses)
        start, responses = self._first_look
        # The crawl's pace so far, from the first look on (one slow spell of 32 responses, a
        # collection or a history write, does not make the queue look like much work).
        pace = (now - start) / (self._responses - responses) if self._responses > responses else None
        scheduler = getattr(self.crawler.engine, "scheduler", None)
        queued = 0 if scheduler is None else len(scheduler)
        if not helper_pays_off(queued, pace, now - start, self.after, self.after_seconds):
            return
        paced = why_paced(self.crawler)
        if paced:
            # A second process would double the pace the site asked for: stay in one.
            logger.info("Crawling in one process: %s", paced)
            self._decided = True
            return
        if slowed_down_now(self.crawler):
            # Not now, nor for good: looked at again at the next look, once the site answers well.
            if not self._waited:
                self._waited = True
                logger.info("The site asked the crawl to slow down: a second process waits until it answers well")
            return
        self._decided = True
        self._start_helper(queued)

    def _start_helper(self, queued: int) -> None:
        started = spawn_helper(self.crawler, self.spider_kwargs, self.crawl_notes)
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
            self._announced = set(mine)
            self.channel.send({"t": "met", "u": mine})
        assert self.crawler.stats is not None
        self.crawler.stats.set_value(keys.WORKERS, 2)
        logger.info(
            "The queue holds %d requests: a second crawling process (pid %s) takes half of the URLs",
            queued, self.process.pid,
        )

    def _on_message(self, message: dict[str, Any]) -> None:
        kind = message["t"]
        if kind == "links":
            self._take_links(message["l"])
        elif kind == "render":
            # A page the helper would render: rendered here as soon as it comes, as its own are.
            # Past the duplicate filter: it may be a page this process queued and lent.
            self._renders = True
            self._take_links(message["l"], RENDER_PRIORITY, again=True)
        elif kind == "entry":
            # Checked and counted here, as this process's own.
            self.take(entry_of_row(message["e"]), message.get("c"))
        elif kind == "record":
            self.observe(PageRecord.from_wire(message["r"]))
        elif kind == "problem":  # counted here, as the exclusions are
            assert self.report is not None
            self.report.not_written(message["k"], message["r"], message["p"], message["d"])
        elif kind == "exclude":
            assert self.report is not None
            self.report.exclude(message["u"], message["r"], message.get("d"))
        elif kind == "counts":
            assert self.report is not None
            for key, amount in message["c"].items():
                self.report.count(key, amount)
            self._helper_queued = message["q"]
            self._lend()
        elif kind == "time_up":
            self.held.time_is_up()
        elif kind in ("answers", "note"):
            self._from_elsewhere(message)
        elif kind == "idle":
            self._helper_idle = message
            self._helper_queued = 0
            self._lend()
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
                     why, len(self._handed) + len(self._lent))
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value(keys.WORKERS_LOST)
        handed, self._handed = self._handed, []
        self._take_links([list(link) for link in handed])
        lent, self._lent = self._lent, []
        self._take_links([list(link) for link in lent], again=True)  # queued here once already
        self._wake()

    def queued(self) -> int:
        return super().queued() + (self._helper_queued if self.active else 0)

    def _lend(self) -> None:
        """The helper has (almost) nothing left to fetch while this process's queue is long: lend
        it the front of that queue, up to half of it and _LEND_AT_MOST requests at once.

        Each URL belongs to one process by its hash, so the two halves of a site end when their
        own pages are done. They rarely end together: the queue the leader had when the helper
        started stays here, and a half whose pages keep failing or answer slowly takes longer.
        The other process then sits idle with its half of the site's connections while this one
        works through its queue with the other half (30 of a fault-weather crawl's 95 s,
        BENCHMARKS.md). A lent page is fetched and judged by the helper as its own; links on it
        still go to the process their hash names, so the one that queued the page first drops them
        as met. The helper queues a lent page past its duplicate filter (meta.PAST_FILTER): this
        process's filter let it through once, and the helper's may hold it (a URL of the helper's
        half requested here before the helper started, see _start_helper). Only plain page
        requests are lent: retries, renders and redirects carry state of this process's and stay
        here. Nothing is lent on a site with pages to render: the helper would fetch a lent page
        only to send it back here to render.
        """
        if not self.active or self._stopping or self._renders or self._helper_queued > _LEND_BELOW:
            return
        assert self.crawler.stats is not None
        if self.crawler.stats.get_value(keys.RENDER_PAGES):
            self._renders = True  # this process renders pages of its own: the site has them
            return
        engine = self.crawler.engine
        scheduler = getattr(engine, "scheduler", None)
        spider = getattr(engine, "spider", None)
        if not isinstance(scheduler, SpillScheduler) or spider is None or _closing(engine):
            return
        most = min((len(scheduler) - self._helper_queued) // 2, _LEND_AT_MOST)
        if most < _LEND_BELOW:
            return

        def plain(request: Request) -> bool:
            return not request.dont_filter and request.callback == spider.parse and "redirect_urls" not in request.meta

        lent = [[r.url, r.meta.get("depth", 0), r.meta.get(meta.SKIP)] for r in scheduler.take_front(most, plain)]
        if not lent:
            return
        assert self.channel is not None
        self.channel.send({"t": "lend", "l": lent})
        self.sent += len(lent)
        self._helper_queued += len(lent)
        self._lent.extend((url, depth, skip) for url, depth, skip in lent)
        self.crawler.stats.inc_value(keys.WORKERS_LENT, len(lent))

    def _on_idle(self) -> None:
        if self.process is None or self._helper_done:
            return
        if self.held.keep_open():
            # Retries held here may still find links for the helper: not idle yet.
            raise DontCloseSpider
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


def helper_pays_off(queued: int, pace: float | None, elapsed: float, after: int, after_seconds: float) -> bool:
    """Whether to start the helper now: ``after`` requests wait and, unless ``after`` or
    ``after_seconds`` is 0, they are at least ``after_seconds`` of work at ``pace`` (seconds a
    response, None before it is known), or the crawl has gone on for twice that long with that
    many waiting (a deep site whose queue stays short for minutes). Its start-up, about a second of
    a core, must pay off: a recrawl's 304s of a site of a thousand pages are over before it is up.
    """
    if queued < after:
        return False
    if not after or not after_seconds:
        return True
    if pace is None:
        return False
    return queued * pace >= after_seconds or elapsed >= 2 * after_seconds


def _closing(engine: Any) -> bool:
    """Whether Scrapy is closing the crawl (its engine's slot says so; none: not open or closed)."""
    slot = getattr(engine, "_slot", None)
    return slot is None or getattr(slot, "closing", None) is not None


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

"""A second crawling process for the machine's other core, started by the one ``scrapy crawl``.

Scrapy runs a crawl on one core, and its fixed cost per request (the engine,
the scheduler, the event loop) is most of a crawl's CPU once links met before
cost nothing (BENCHMARKS.md). When the queue shows the site is big
(``SITEMAP_WORKERS_AFTER`` requests waiting), the crawl (the *leader*) starts
one more Scrapy process (the *helper*) with the same settings, from Python's
``multiprocessing`` "spawn" start method, joined to it by a socket pair.

From then on each URL belongs to the process its hash names: a link, a
canonical URL or a redirect target that belongs to the other process is handed
over instead of requested, and each process keeps its own queue and duplicate
filter for its half. The per-site concurrency cap is split between the two.
The helper sends its entries and exclusions to the leader, which publishes the
one set and writes the one report.

The end: a process is idle when Scrapy finds nothing queued, downloading or
being handled. The helper tells the leader each time it becomes idle, with how
many links it has received and sent. The leader ends the crawl when it is idle
itself, the helper's last idle message counts every link the leader sent it,
and the leader has taken in every link that message says the helper sent
(messages on one socket arrive in order, so nothing can be in flight). If the
helper dies, the leader crawls what it had handed over itself.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import pickle
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider
from scrapy.settings import BaseSettings, Settings

from sitemap_spider.engine import wake_engine
from sitemap_spider.worker_channel import Channel, owner

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from scrapy.crawler import Crawler

    from sitemap_spider.config import SitemapConfig

__all__ = ["WORKERS_STAT", "Helper", "Leader", "Workers", "for_crawler", "owner", "run_helper"]

logger = logging.getLogger(__name__)

#: Stats: 2 once the helper process has started.
WORKERS_STAT = "sitemap/workers"
# Settings that keep a crawl in one process: their state lives in one place.
_ONE_PROCESS_SETTINGS = ("JOBDIR", "SITEMAP_REDIS_URL")
# The helper's stats that are not counts of work (summing them would mean nothing).
_NOT_SUMMED = ("time", "memusage", "start", "finish", "log_count", "sitemap/excluded/", "sitemap/workers")
# Responses between two looks at the queue while deciding whether to start the helper.
_CHECK_EVERY = 32
# The socket the helper process was given (set in the helper before its crawl starts).
_helper_socket: socket.socket | None = None


class Workers:
    """What both processes share: handing URLs over and taking them in."""

    index = 0
    count = 1

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.channel: Channel | None = None
        self.sent = 0  # links handed to the other process
        self.received = 0  # links taken in from it
        self._make_request: Callable[[str, str | None], Request] | None = None
        self.met: set[str] | None = None  # the spider's LinkFinder's set of links met

    @property
    def active(self) -> bool:
        return self.channel is not None and not self.channel.closed

    def hand_over(self, url: str, depth: int, skip: str | None = None) -> bool:
        """Send ``url`` to the process that owns it; False if it is this process's to fetch."""
        if not self.active or owner(url, self.count) == self.index:
            return False
        assert self.channel is not None
        self.channel.send({"t": "links", "l": [[url, depth, skip]]})
        self.sent += 1
        return True

    def response_seen(self) -> None:
        """Called for each page the spider is given."""

    def attach(self, make_request: Callable[[str, str | None], Request], met: set[str]) -> None:
        """How the spider turns a URL handed over into a request, and the links it has met."""
        self._make_request = make_request
        self.met = met

    def _take_links(self, links: list[list[Any]]) -> None:
        assert self._make_request is not None and self.crawler.engine is not None
        depth_priority = self.crawler.settings.getint("DEPTH_PRIORITY")
        for url, depth, skip in links:
            self.received += 1
            request = self._make_request(url, skip)
            request.meta["depth"] = depth
            request.priority = -depth * depth_priority
            self.crawler.engine.crawl(request)

    def _wake(self) -> None:
        # News from the other process counts now, not at the engine's next heartbeat.
        wake_engine(self.crawler.engine)


class Leader(Workers):
    """The process the user started: seeds the crawl, starts the helper, ends and publishes."""

    def __init__(self, crawler: Crawler, config: SitemapConfig, spider_kwargs: dict[str, Any]) -> None:
        super().__init__(crawler)
        self.wanted = config.workers
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
        paced = self._paced()
        if paced:
            # A second process would double the pace the site asked for: stay in one.
            logger.info("Crawling in one process: %s", paced)
            self._decided = True
            return
        self._decided = True
        self._start_helper()

    def _paced(self) -> str | None:
        """Why the site's pace, not the CPU, bounds this crawl, if it does."""
        stats = self.crawler.stats
        assert stats is not None
        if stats.get_value("sitemap/crawl_delay"):
            return "robots.txt asks for a Crawl-delay"
        if self.crawler.settings.getfloat("DOWNLOAD_DELAY") > 0:
            return "DOWNLOAD_DELAY is set"
        if any(key.startswith("sitemap/backoff/") for key in stats.get_stats()):
            return "the site asked the crawl to slow down (429/503)"
        return None

    def _start_helper(self) -> None:
        settings = self.crawler.settings
        per_domain = settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN")
        values = _plain(settings)
        values.update(
            # Two processes share the site's concurrency cap and AutoThrottle's target.
            CONCURRENT_REQUESTS_PER_DOMAIN=max(1, per_domain // 2),
            AUTOTHROTTLE_TARGET_CONCURRENCY=max(1.0, settings.getfloat("AUTOTHROTTLE_TARGET_CONCURRENCY") / 2),
            LOG_FORMAT="%(asctime)s [worker 2] [%(name)s] %(levelname)s: %(message)s",
            TELNETCONSOLE_ENABLED=False,
            REMOTE_CONTROL_ENABLED=False,
            SITEMAP_REPORT=None,
        )
        ours, theirs = socket.socketpair()
        context = multiprocessing.get_context("spawn")
        process = context.Process(
            target=run_helper, args=(values, self.spider_kwargs, theirs), name="sitemap-worker-2", daemon=True
        )
        try:
            process.start()
        except (OSError, TypeError, AttributeError, pickle.PicklingError) as exc:  # a setting pickle refuses
            logger.warning("Crawling in one process: the second worker could not start (%s)", exc)
            ours.close()
            return
        finally:
            theirs.close()
        self.process = process
        self.count = 2
        self._share_concurrency(max(1, per_domain - per_domain // 2))
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
            self.after, process.pid,
        )

    def _share_concurrency(self, per_domain: int) -> None:
        engine = self.crawler.engine
        downloader = getattr(engine, "downloader", None)
        if downloader is None:
            return
        downloader.domain_concurrency = per_domain
        for slot in downloader.slots.values():
            slot.concurrency = min(slot.concurrency, per_domain)
        throttle = next(
            (ext for ext in getattr(self.crawler.extensions, "middlewares", ())
             if type(ext).__name__ == "AutoThrottle"), None,
        )
        if throttle is not None:
            throttle.target_concurrency = max(1.0, throttle.target_concurrency / 2)

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
        for key, value in bye.get("stats", {}).items():
            if isinstance(value, int) and not isinstance(value, bool) and not any(n in key for n in _NOT_SUMMED):
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


def _plain(settings: BaseSettings) -> dict[Any, Any]:
    """Settings as plain dicts, component keys left as they are (copy_to_dict makes them strings)."""
    return {
        name: _plain(value) if isinstance(value, BaseSettings) else value
        for name, value in settings.items()
    }


def for_crawler(crawler: Crawler, config: SitemapConfig, spider_kwargs: dict[str, Any]) -> Workers | None:
    """The crawl's part in a two-process crawl, or None when it runs in one process."""
    if _helper_socket is not None:
        return Helper(crawler, _helper_socket)
    settings = crawler.settings
    if config.workers < 2 or "_job" in spider_kwargs:
        return None  # Scrapyd counts and limits its jobs' processes itself
    if any(settings.get(name) for name in _ONE_PROCESS_SETTINGS) or settings.getdict("FEEDS"):
        return None  # state or output that lives in this process
    return Leader(crawler, config, dict(spider_kwargs))


def run_helper(values: dict[str, Any], spider_kwargs: dict[str, Any], sock: socket.socket) -> None:
    """The helper process: the same crawl, fed with URLs by the leader."""
    from scrapy.crawler import CrawlerProcess

    from sitemap_spider.spiders.sitemap import SitemapSpider

    global _helper_socket
    _helper_socket = sock
    settings = Settings()
    settings.setdict(values, priority="cmdline")
    process = CrawlerProcess(settings)
    process.crawl(SitemapSpider, **spider_kwargs)
    process.start()

"""A stop (Ctrl-C, SIGTERM, a close) does not wait out the site's pace or pause.

Scrapy's stop is graceful: the spider closes once every request handed to the downloader is
done, those waiting in a site's slot included, and a slot sends them one pause apart. A site
paused for its trouble (crawl/politeness.py: up to ``SITEMAP_MAX_BACKOFF``, 120 s) or slowed
by a robots.txt ``Crawl-delay`` held a stop for that pause times the requests waiting (a
40-second outage, stopped 20 s in, exited after 43.6 s; ``Crawl-delay: 0.8``, 12.7 s). Once the
spider is closing, the requests still waiting in a slot are let go without being sent, as a
held retry is (:class:`~sitemap_spider.crawl.retries.RetryLater`): not done, nothing recorded.
A stopped crawl publishes nothing, so no set misses them. With ``JOBDIR`` they are fetched when
the crawl resumes; in a shared crawl their leases go to the other workers.

Requests already sent, renders included, get :data:`STOP_GRACE` seconds to be answered (a local
or healthy site answers in milliseconds), then are let go the same way (crawl/stop_downloads.py,
the crawl's handler for http and https). Scrapy waited for each up to ``DOWNLOAD_TIMEOUT`` (30 s):
a page that answers slowly held a SIGTERM for 22.7 s, past the 10 s ``docker stop`` allows.

The browser's requests waiting in a slot are let go too. A page's render is left not done by its
errback (render/spider_side.py); a template's probe, or the read of a script file that decides
whether to render a page, leaves not done the page whose callback awaits it (crawl/spider.py):
none is judged by its static HTML, nor recorded. Kept, they were sent at their turn after the
stop, for the closing crawl to refuse them (render/handler.py): behind ``Crawl-delay: 2``, three
renders held a stop for 5.9 s, a probe started the browser after it, script files were fetched.
"""

from __future__ import annotations

import logging
from time import monotonic
from typing import TYPE_CHECKING, Any, Self

from scrapy import signals
from scrapy.utils.asyncio import create_looping_call, sleep

from sitemap_spider.crawl.retries import RetryLater

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: How often the engine is looked at for a close (here, and by a wait), in seconds.
CHECK_SECONDS = 0.25
#: Seconds a stopping crawl waits for the answers of requests already sent before letting them go.
STOP_GRACE = 3.0
#: Sent once a stopping crawl has waited STOP_GRACE seconds: let the requests in flight go.
let_go_in_flight = object()


class PromptStop:
    """Let a closing crawl's requests waiting in a download slot go unsent."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self._watch: Any = None
        self._stopping_since: float | None = None
        self._in_flight_let_go = False
        crawler.signals.connect(self._opened, signal=signals.spider_opened)
        crawler.signals.connect(self._closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def _opened(self, spider: Spider) -> None:
        self._watch = create_looping_call(self._look)
        self._watch.start(CHECK_SECONDS, now=False)

    def _closed(self, spider: Spider) -> None:
        if self._watch is not None and self._watch.running:
            self._watch.stop()

    def _look(self) -> None:
        engine = self.crawler.engine
        if engine is None or not closing(self.crawler):
            return
        if self._stopping_since is None:
            self._stopping_since = monotonic()
        elif not self._in_flight_let_go and monotonic() - self._stopping_since >= STOP_GRACE:
            self._in_flight_let_go = True
            self.crawler.signals.send_catch_log(signal=let_go_in_flight)
        let_go = 0
        for key, download_slot in engine.downloader.slots.items():
            while download_slot.queue:
                _request, waiting = download_slot.queue.popleft()
                waiting.errback(RetryLater(f"the crawl stopped while it waited for {key}: not sent, not done"))
                let_go += 1
        if let_go:
            logger.info(
                "Stopping: %d request(s) waiting for their turn not sent (not done: a resumed JOBDIR "
                "crawl or the other workers fetch them)", let_go,
            )  # fmt: skip


def closing(crawler: Crawler) -> bool:
    """Whether the crawl is stopping: the engine stopped, or the spider closing (any reason)."""
    engine = crawler.engine
    slot = getattr(engine, "_slot", None)  # Scrapy's: its ``closing`` is set once the spider closes
    return engine is None or not engine.running or slot is None or slot.closing is not None


async def wait_unless_stopping(crawler: Crawler, seconds: float) -> bool:
    """Sleep ``seconds`` in steps of :data:`CHECK_SECONDS`; False as soon as the crawl is stopping."""
    end = monotonic() + seconds
    while not closing(crawler) and (left := end - monotonic()) > 0:
        await sleep(min(CHECK_SECONDS, left))
    return not closing(crawler)


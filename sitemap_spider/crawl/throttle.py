"""AutoThrottle, pacing on a 304 as on a 200 and on the site's latency rather than one page's.

Scrapy's AutoThrottle never lowers its delay on an answer that is not a 200, so a recrawl
answered with 304s stayed at ``AUTOTHROTTLE_START_DELAY`` for its whole length. And it
paces on each answer's own latency, jumping at once to a slow one's: one page that takes
3 s set the delay between requests to 0.75 s, and it took the next fast answers a second
and a half to bring it back. On a site where a few pages are slow (a search page, a big
archive), that was most of the crawl's time: the fault benchmark's 5,000 pages, 2% of them
answering once after 3 s, took 207 s against 22.5 s without faults.

A slow page also held one of the site's places (``CONCURRENT_REQUESTS_PER_DOMAIN``) for as long
as it took: the same benchmark's 103 answers of 3 s held 309 place-seconds of 8 places, so the
other 4,900 pages went at a sixth of their pace. A request in flight far longer than the site's
usual answer now lends its place (:meth:`PacingAutoThrottle._lend_places`).

crawl/start_up.py puts :class:`PacingAutoThrottle` in AutoThrottle's place.
"""

from __future__ import annotations

from collections import deque
from time import monotonic
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from scrapy import Request, Spider, signals
from scrapy.extensions.throttle import AutoThrottle
from scrapy.utils.asyncio import create_looping_call

from sitemap_spider import request_meta as meta

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.http import Response

#: How many of a site's last answers pace it: their median latency is the site's. More than twice
#: the places a site can have in flight with the lent ones (8 + 8 by default): slow pages that
#: were in flight together, answering together, do not make the median by themselves.
LATENCY_WINDOW = 25
#: A request still unanswered after this many times the site's median latency is stalled ...
STALL_FACTOR = 5.0
#: ... and after at least this many seconds: only a page far slower than the site's usual answer.
STALL_SECONDS = 1.0
#: How often the requests in flight are looked at, in seconds.
STALL_CHECK_SECONDS = 0.25


class PacingAutoThrottle(AutoThrottle):
    """Scrapy's AutoThrottle, pacing on a 304 as on a 200, and on the median latency of the
    site's last :data:`LATENCY_WINDOW` answers instead of each answer's own.

    AutoThrottle keeps its delay on any other status, since small error pages would
    otherwise speed the crawl up against a failing server. A 304 is no error: it is the
    server's whole answer to a conditional request, and a recrawl is mostly 304s.

    A slow page is that page's, as a failing one is (crawl/site_health.py): the site slows
    down when most of its answers do. A site that turns slow moves the median within
    thirteen answers, and AutoThrottle's rule stands: the delay rises at once to the target
    the (median) latency asks for, and falls halfway towards it on a good answer.

    Nor does a slow page keep one of the site's places: a request unanswered after
    :data:`STALL_FACTOR` times the site's median latency (at least :data:`STALL_SECONDS`)
    lends its place to the next request, and takes it back when it ends. At most as many
    places are lent as the site has, so no more than twice its concurrency is ever in
    flight, half of it stalled; a site whose answers all turn slow moves its median and
    lends nothing. A slot whose concurrency someone else set since (a robots.txt
    ``Crawl-delay`` makes it 1, a second crawling process halves it) is left alone until
    it is at least 2 and stays as set. Renders are not counted: a browser page loads the
    site's scripts and styles too.
    """

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        # A downloader slot takes no weak reference: keyed by id, with the slot held so that
        # the id is not reused (a crawl has a slot per site, a handful at most).
        self._latencies: dict[int, tuple[Slot, deque[float]]] = {}
        #: Requests in flight -> when they were first seen transferring (monotonic).
        self._in_flight: dict[Request, float] = {}
        #: Slot id -> (its own concurrency, places lent now): what this extension added to it.
        self._lent: dict[int, tuple[int, int]] = {}
        self._watch: Any = None
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    def _spider_opened(self, spider: Spider) -> None:
        super()._spider_opened(spider)
        self._watch = create_looping_call(self._lend_places)
        self._watch.start(STALL_CHECK_SECONDS, now=False)

    def _spider_closed(self, spider: Spider) -> None:
        if self._watch is not None and self._watch.running:
            self._watch.stop()

    def _lend_places(self) -> None:
        """Let each site's stalled requests lend their places, up to as many as the site has."""
        engine = self.crawler.engine
        if engine is None:
            return
        downloader = engine.downloader
        now = monotonic()
        seen = self._in_flight
        in_flight: dict[Request, float] = {}
        for slot in downloader.slots.values():
            known = self._latencies.get(id(slot))
            stall = max(STALL_SECONDS, STALL_FACTOR * median_latency(known[1])) if known else None
            stalled = 0
            for request in slot.transferring:
                since = in_flight[request] = seen.get(request, now)
                if stall is not None and now - since > stall and not request.meta.get(meta.RENDER):
                    stalled += 1
            if self._lend(slot, stalled):
                # No public call for it: what the downloader runs when a download ends.
                downloader._process_queue(slot)
        self._in_flight = in_flight

    def _lend(self, slot: Slot, stalled: int) -> bool:
        """Set the slot's concurrency to its own plus ``stalled`` (at most as much again); True if raised."""
        own, lent = self._lent.get(id(slot), (slot.concurrency, 0))
        if slot.concurrency != own + lent:
            own, lent = slot.concurrency, 0  # set since by someone else: that is its own now
        lend = min(stalled, own) if own >= 2 else 0
        if lend == lent and id(slot) in self._lent:
            return False
        slot.concurrency = own + lend
        self._lent[id(slot)] = (own, lend)
        return lend > lent

    def _adjust_delay(self, slot: Slot, latency: float, response: Response) -> None:
        known = self._latencies.get(id(slot))
        if known is None:
            known = self._latencies[id(slot)] = (slot, deque(maxlen=LATENCY_WINDOW))
        recent = known[1]
        recent.append(latency)
        # AutoThrottle reads nothing of the response but its status; Response.replace would copy
        # the whole response once per 304 (a fifth of a millisecond, on every page of a recrawl).
        super()._adjust_delay(slot, median_latency(recent), _ANSWERED_200 if response.status == 304 else response)


def median_latency(latencies: deque[float]) -> float:
    """The middle of the latencies (the lower middle of an even count: a slow answer moves it last)."""
    ordered = sorted(latencies)
    return ordered[(len(ordered) - 1) // 2]


#: What PacingAutoThrottle shows AutoThrottle for a 304: an answer with the status of a 200.
_ANSWERED_200 = cast("Response", SimpleNamespace(status=200))

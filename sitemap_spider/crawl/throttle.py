"""AutoThrottle, pacing on a 304 as on a 200 and on the site's latency rather than one page's.

Scrapy's AutoThrottle never lowers its delay on an answer that is not a 200, so a recrawl
answered with 304s stayed at ``AUTOTHROTTLE_START_DELAY`` for its whole length. And it
paces on each answer's own latency, jumping at once to a slow one's: one page that takes
3 s set the delay between requests to 0.75 s, and it took the next fast answers a second
and a half to bring it back. On a site where a few pages are slow (a search page, a big
archive), that was most of the crawl's time: the fault benchmark's 5,000 pages, 2% of them
answering once after 3 s, took 207 s against 22.5 s without faults.

A first crawl starts at ``AUTOTHROTTLE_START_DELAY`` and comes down to the site's pace within a
few answers: on a site that answers in a few milliseconds, about half a second spent on its first
pages, a third of a small site's recrawl. The pace a site held at the end of a crawl is noted with
the history, and the next crawl starts at it (:meth:`PacingAutoThrottle._start_at_last_pace`).

A slow page also held one of the site's places (``CONCURRENT_REQUESTS_PER_DOMAIN``) for as long
as it took: the same benchmark's 103 answers of 3 s held 309 place-seconds of 8 places, so the
other 4,900 pages went at a sixth of their pace. A request in flight far longer than the site's
usual answer now lends its place (:meth:`PacingAutoThrottle._lend_places`).

crawl/start_up.py puts :class:`PacingAutoThrottle` in AutoThrottle's place.
"""

from __future__ import annotations

import logging
from collections import deque
from time import monotonic
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from scrapy import Request, Spider, signals
from scrapy.extensions.throttle import AutoThrottle
from scrapy.utils.asyncio import create_looping_call

from sitemap_spider import request_meta as meta
from sitemap_spider.crawl.politeness import TRANSIENT_STATUSES, Politeness

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

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
#: Places are lent only while the site's good answers of the last this-many stall times
#: outnumber its stalled requests: a site that hangs as a whole lends nothing.
ANSWER_WINDOW = 2.0
#: The history note (HistoryStore.note) of the pace a site held at the end of a crawl: its
#: downloader slot's delay between requests, in seconds.
PACE_NOTE = "pace"


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
    lends its place to the next request, and takes it back when it ends (at the next look,
    every :data:`STALL_CHECK_SECONDS`). Only while the site answers: the stalled requests
    must be fewer than its good answers (not a 429 or a gateway's fault) of the last
    :data:`ANSWER_WINDOW` stall times. A site that hangs or turns slow as a whole answers
    nothing new, and lends nothing once its earlier answers are that old. At most as many places
    are lent as the site has: never more than twice its concurrency in flight. A slot whose
    concurrency someone else set since (a robots.txt ``Crawl-delay`` makes it 1, a second crawling
    process halves it) is taken as set, and nothing is lent below 2. Renders are not counted: a
    browser page loads the site's scripts and styles too.
    """

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        # A downloader slot takes no weak reference: keyed by id, with the slot held so that
        # the id is not reused (a crawl has a slot per site, a handful at most).
        self._sites: dict[int, _Site] = {}
        #: Requests in flight -> when they were first seen transferring (monotonic).
        self._in_flight: dict[Request, float] = {}
        self._watch: Any = None
        self._broken = False
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    def _spider_opened(self, spider: Spider) -> None:
        super()._spider_opened(spider)
        self._watch = create_looping_call(self._lend_places)
        self._watch.start(STALL_CHECK_SECONDS, now=False)
        self._start_at_last_pace(spider)

    def _start_at_last_pace(self, spider: Spider) -> None:
        """Start the site's slot at the pace it held at the end of the last crawl, if faster than the start delay.

        The pace is noted with the history (a crawl without one starts as a first crawl) by the
        process that commits it, the one that publishes the set, and read by the process that
        starts the crawl (queues its start URLs): a process that joins a crawl (the second one, a
        Redis worker) starts at the start delay, as before. Of several Redis workers, the one
        that publishes is seldom the one that started: each notes its own slot's pace.
        Never below ``DOWNLOAD_DELAY``, and a site the user paces in ``DOWNLOAD_SLOTS`` is left
        to it. A site slower than last time raises the delay at its first answers (AutoThrottle's
        rule); a ``Crawl-delay`` and the back-off pauses apply as before (crawl/politeness.py).
        """
        mode = getattr(spider, "crawl_mode", None)
        target = getattr(spider, "target", None)
        history = getattr(mode, "history", None)
        notes = getattr(mode, "history_notes", None)
        if target is None or history is None or notes is None:
            return
        origin = target.site.crawl_origin
        host = urlsplit(origin).hostname or ""
        notes[PACE_NOTE] = lambda: self._pace_of(host)
        if not mode.queues_start_urls():  # type: ignore[union-attr]
            return
        try:
            # The last published crawl's: one that published nothing changed nothing in the history.
            last = float(history.note(PACE_NOTE, origin) or "nan")
        except ValueError:
            return  # not a number (written by something else): start as a first crawl
        downloader = self.crawler.engine.downloader
        start = downloader._delay  # what AutoThrottle starts every new slot at
        if not 0 <= last < start or host in downloader.per_slot_settings or downloader.ip_concurrency:
            return  # (NaN compares False: no note)
        # Scrapy's DOWNLOAD_SLOTS, which the downloader reads when it makes the site's slot.
        pace = max(self.mindelay, last)
        downloader.per_slot_settings[host] = {"delay": pace}
        logger.info("Starting at the pace of the last crawl of %s: %.3f s between requests", host, pace)

    def _pace_of(self, host: str) -> str | None:
        """The delay of ``host``'s slot at the end of the crawl, for the history note.

        None (the note is dropped) when the site did not answer, or when a back-off pause is on:
        a pause is the site's trouble, not its pace.
        """
        politeness = self.crawler.get_extension(Politeness)
        if politeness is not None and host in politeness.backoffs:
            return None
        # The slot in use at the end (the downloader keeps its slots once closed); one Scrapy dropped
        # while idle, a minute without a request, says nothing of the end.
        engine = self.crawler.engine
        slot = engine.downloader.slots.get(host) if engine is not None else None
        site = self._sites.get(id(slot)) if slot is not None else None
        if site is None or not site.latencies:
            return None
        return repr(round(site.slot.delay, 6))

    def _spider_closed(self, spider: Spider) -> None:
        if self._watch is not None and self._watch.running:
            self._watch.stop()

    def _lend_places(self) -> None:
        """Let each site's stalled requests lend their places, up to as many as the site has."""
        engine = self.crawler.engine
        if engine is None or self._broken:
            return
        try:
            self._look(engine.downloader, monotonic())
        except Exception:
            # A looping call that raises is not called again: give the places back for good.
            logger.exception("Lending the places of stalled requests failed; lending stops")
            self._broken = True
            for site in self._sites.values():
                site.give_back()

    def _look(self, downloader: Any, now: float) -> None:
        seen = self._in_flight
        in_flight: dict[Request, float] = {}
        for slot in downloader.slots.values():
            site = self._sites.get(id(slot))
            stall = site.stall() if site is not None else None
            stalled = 0
            for request in slot.transferring:
                since = in_flight[request] = seen.get(request, now)
                if stall is not None and now - since > stall and meta.RENDER not in request.meta:
                    stalled += 1
            if site is not None and site.lend(stalled, now):
                # No public call for it: what the downloader runs when a download ends.
                downloader._process_queue(slot)
        self._in_flight = in_flight

    def _adjust_delay(self, slot: Slot, latency: float, response: Response) -> None:
        site = self._sites.get(id(slot))
        if site is None:
            site = self._sites[id(slot)] = _Site(slot)
        site.latencies.append(latency)
        site.median = median_latency(site.latencies)
        if response.status not in TRANSIENT_STATUSES:
            site.answered.append(monotonic())
        # AutoThrottle reads nothing of the response but its status; Response.replace would copy
        # the whole response once per 304 (a fifth of a millisecond, on every page of a recrawl).
        super()._adjust_delay(slot, site.median, _ANSWERED_200 if response.status == 304 else response)


class _Site:
    """One downloader slot's answers, and the places its stalled requests lend."""

    def __init__(self, slot: Slot) -> None:
        self.slot = slot
        self.latencies: deque[float] = deque(maxlen=LATENCY_WINDOW)
        #: Their median, taken at each answer (the pace and the stall time both read it).
        self.median = 0.0
        #: When its good answers arrived (monotonic), the last ANSWER_WINDOW stall times' worth.
        self.answered: deque[float] = deque()
        self.own = slot.concurrency
        self.lent = 0

    def stall(self) -> float:
        """Seconds after which a request of this site is stalled."""
        return max(STALL_SECONDS, STALL_FACTOR * self.median)

    def lend(self, stalled: int, now: float) -> bool:
        """Lend a place for each stalled request while the site answers; True if places were added."""
        slot = self.slot
        if slot.concurrency != self.own + self.lent:
            self.own, self.lent = slot.concurrency, 0  # set since by someone else: that is its own now
        answered = self.answered
        window = ANSWER_WINDOW * self.stall()
        while answered and now - answered[0] > window:
            answered.popleft()
        lend = min(stalled, self.own) if self.own >= 2 and stalled < len(answered) else 0
        if lend == self.lent:
            return False
        raised = lend > self.lent
        slot.concurrency, self.lent = self.own + lend, lend
        return raised

    def give_back(self) -> None:
        if self.lent and self.slot.concurrency == self.own + self.lent:
            self.slot.concurrency = self.own
        self.lent = 0


def median_latency(latencies: deque[float]) -> float:
    """The middle of the latencies (the lower middle of an even count: a slow answer moves it last)."""
    ordered = sorted(latencies)
    return ordered[(len(ordered) - 1) // 2]


#: What PacingAutoThrottle shows AutoThrottle for a 304: an answer with the status of a 200.
_ANSWERED_200 = cast("Response", SimpleNamespace(status=200))

"""Requests held back by the crawl mode: retries waiting out a back-off, and the last pass.

A retry that must wait is kept here instead of in Scrapy's downloader, where a waiting
request would hold one of the ``CONCURRENT_REQUESTS`` places (and a site with many
failing pages would stall the crawl). It is handed to the engine when its time comes;
the engine queues it like any other request. Its predecessor stays unfinished meanwhile:
with ``JOBDIR`` its row stays in flight and a resumed crawl fetches it again; in a
shared crawl its lease stays with this worker.

The failing pages cost a bounded time once the rest of the crawl is done, not a time per
page: while the crawl has nothing left but held requests, at most
``SITEMAP_RETRY_LAST_PASS_DELAY`` seconds pass in all the crawl before the waits are cut short, even for
pages whose retries would wait longer (a ``Retry-After`` of minutes). A retry that answers
and brings new pages pauses that clock while they are fetched; it does not start it again,
or each page found only through a failing one would cost the whole delay once more, one after
the other (the fault benchmark's tail was 50 s after a 30 s delay). Then, unless the
site answered well a moment before (or never did in this crawl), one request to the
site's home page tells broken pages from a site that is down: while it fails, the
cut waits (the retry budget, retries.py, ends a site that stays down); when it answers,
every held retry goes now, and the tries a page has left follow at the first retry's
short pause (:attr:`HeldRequests.hurry`): the tail cuts waiting, never a page's tries.
A page that failed all its retries is tried once more in the last pass, at that moment
or, when nothing else is held, once that delay has passed since the last failure. Until
then the mode keeps the spider open.
"""

from __future__ import annotations

import heapq
import itertools
import logging
from time import monotonic
from urllib.parse import urljoin
from typing import TYPE_CHECKING

from scrapy import Request, signals
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.asyncio import CallLaterResult, call_later
from scrapy.utils.defer import deferred_from_coro

from sitemap_spider import request_meta as meta
from sitemap_spider import stats as keys
from sitemap_spider.crawl.politeness import TRANSIENT_STATUSES
from sitemap_spider.crawl.site_health import is_retry
from sitemap_spider.crawl.stopping import closing

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: Seconds within which a good answer, besides the failing pages' time, says the site is up.
_RECENT = 5.0
#: The scheduler priority of a request whose wait is over: ahead of every page not yet fetched.
#: With DEPTH_PRIORITY a retry keeps its page's depth (and Scrapy's RETRY_PRIORITY_ADJUST puts it one
#: lower), so it waited behind every page found since, up to the whole rest of the site, and the
#: pages only it links to were found that much later: the fault benchmark's failing pages got their
#: second try a minute after their first instead of one second.
DUE_PRIORITY = 1 << 20


class HeldRequests:
    """Requests waiting for their time, released into the engine; the crawl does not end while any wait.

    The crawl's retries see it as :class:`sitemap_spider.crawl.mode.RetryHolder`.
    """

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
        self._pass_at = 0.0
        # The tail's clock: seconds of it used in earlier spells of nothing but held requests, and
        # when the current spell began (None: pages are being fetched).
        self._tail_spent = 0.0
        self._tail_since: float | None = None
        self._checking = False  # the site check before the last pass is under way
        #: The tail's time is up: retries no longer wait their back-off (retries.py reads it).
        self.hurry = False
        self._said = False
        #: When the site last gave an answer that was not a fault (monotonic; set by retries.py); None: never.
        self.site_answered: float | None = None
        #: Called when this process's failing pages' time is up (a two-process crawl tells the other).
        self.on_time_up: list[Callable[[], object]] = []
        crawler.signals.connect(self.close, signal=signals.spider_closed)
        crawler.signals.connect(self._scheduled, signal=signals.request_scheduled)

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
        """At spider_idle: whether the crawl must stay open; schedules the last pass when only held requests are left."""
        if not self._due and not self._last_pass:
            # Every failing page is done with. The time they had stays spent: a page found by the
            # last retry that fails too waits no longer than the time left, or each link of a chain
            # of failing pages would be waited out in turn.
            self._pause_tail()
            self.hurry = False
            if self._pass_timer is not None and not self._checking:
                self._pass_timer.cancel()
                self._pass_timer = None
            return self._checking
        if self.hurry:
            # The site answered the check moments ago: a page out of retries gets its last pass
            # once no retry is waiting (they wait a short pause now).
            if not self._due and not self._checking and self._pass_timer is None:
                self._pass_timer = call_later(0, self._start_last_pass)
            return True
        now = monotonic()
        if self._tail_since is None:
            # The rest of the crawl is done: the failing pages get what is left of their time, all together.
            self._tail_since = now
            # Said once: a retry that answers brings new pages, and the clock waits for them.
            logger.log(
                logging.DEBUG if self._said else logging.INFO,
                "Only %d failing page(s) left: their retries go on for at most %.0f s, then a last pass",
                len(self), max(0.0, self.last_pass_delay - self._tail_spent),
            )  # fmt: skip
            self._said = True
        at = self._tail_since + max(0.0, self.last_pass_delay - self._tail_spent)
        if not self._due:
            at = min(at, max(now, self._last_failed + self.last_pass_delay))
        if not self._checking and (self._pass_timer is None or at < self._pass_at):
            if self._pass_timer is not None:
                self._pass_timer.cancel()
            self._pass_at = at
            self._pass_timer = call_later(max(0.0, at - now), self._check_site)
        return True

    def _scheduled(self, request: Request) -> None:
        """A new page is queued: the rest of the crawl is not done; the failing pages' clock waits until it is."""
        if self._tail_since is None or is_retry(request):
            return
        self._pause_tail()
        if self._pass_timer is not None and not self._checking:
            self._pass_timer.cancel()
            self._pass_timer = None

    def time_is_up(self) -> None:
        """Another process of the crawl ran its last pass: if nothing but failing pages is left here
        too, their time is up as well (one crawl, one tail). The site is checked as at any last pass.

        Without this, each process of a crawl waited out its own tail, and a page found late by
        one kept the whole crawl open after the other was done. A process still fetching pages
        is not at its tail: its failing pages keep their own time.
        """
        if self._tail_since is None or self._checking or self.hurry:
            return
        if self._pass_timer is not None:
            self._pass_timer.cancel()
        self._pass_at = monotonic()
        self._pass_timer = call_later(0, self._check_site)

    def _pause_tail(self) -> None:
        """Pages are being fetched again: the time since the spell began counts, the clock stops until the next."""
        if self._tail_since is not None:
            self._tail_spent += monotonic() - self._tail_since
            self._tail_since = None

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

    def _check_site(self) -> None:
        """Before the last pass: one request to the home page; the pass runs only if the site answers."""
        self._pass_timer = None
        held = [request for _, _, request in self._due] + self._last_pass
        engine = self.crawler.engine
        if not held or engine is None or engine.spider is None:
            return
        if not engine.spider_is_idle() and not self.hurry:
            # A retry that answered brought new pages: the crawl is not done yet; the clock waits for them.
            self._pause_tail()
            return
        answered = self.site_answered
        if answered is None or monotonic() - answered <= 2 * self.last_pass_delay + _RECENT:
            # The site answered a moment ago (these pages are broken, not the site), or never did in
            # this crawl (nothing was fetched to wait for): no need to ask it.
            self._start_last_pass()
            return
        self._checking = True
        home = Request(
            urljoin(held[0].url, "/"),
            callback=NO_CALLBACK,
            dont_filter=True,
            # Any answer but a fault says the server is up: nothing to follow, retry or drop.
            meta={"dont_redirect": True, "dont_retry": True, "handle_httpstatus_all": True, "dont_obey_robotstxt": True},
        )
        checked = deferred_from_coro(engine.download_async(home))
        checked.addCallbacks(lambda response: self._site_checked(response.status not in TRANSIENT_STATUSES),
                             lambda failure: self._site_checked(False))

    def _site_checked(self, answers: bool) -> None:
        self._checking = False
        if closing(self.crawler):
            return  # the crawl stopped (its check was cut short): nothing is released or waited for
        if not answers:
            # The site itself fails now: wait and check again; the retry budget ends a site that stays down.
            logger.info("The site does not answer: the last pass waits %.0f s more", self.last_pass_delay)
            self._pass_at = monotonic() + self.last_pass_delay
            self._pass_timer = call_later(self.last_pass_delay, self._check_site)
            return
        self._start_last_pass()

    def _start_last_pass(self) -> None:
        """Release every held request now: retries keep the tries they have left, the rest is the last pass."""
        self._pass_timer = None
        self.hurry = True
        for told in self.on_time_up:
            told()
        retries = [request for _, _, request in sorted(self._due)]
        self._due.clear()
        self._arm()
        last, self._last_pass = self._last_pass, []
        self._tail_since = None
        if last:
            logger.info("Last pass: %d page(s) that failed every retry are tried once more", len(last))
            assert self.crawler.stats is not None
            self.crawler.stats.inc_value(keys.RETRY_LAST_PASS, len(last))
        if retries:
            logger.info("%d retry(ies) go now, without waiting out their back-off", len(retries))
        for request in (*retries, *last):
            self._crawl(request)

    def _crawl(self, request: Request) -> None:
        engine = self.crawler.engine
        if engine is None or engine.spider is None:
            return  # closing: the request is lost with the crawl, or fetched again on resume
        # Its wait is its turn: it goes before the pages queued meanwhile. Not a page put back while
        # the site was in trouble: it goes in its turn, so that the pause's next request is a page
        # not tried yet, whose good answer ends it. Put back first, the same failing pages took
        # every turn of the pause, and it lasted 40 s (a resumed JOBDIR recrawl, 5% of pages 503).
        if request.meta.get(meta.PUT_BACK):
            request.priority = request.meta.pop(meta.OWN_PRIORITY, request.priority)
        elif request.priority < DUE_PRIORITY:
            request.meta.setdefault(meta.OWN_PRIORITY, request.priority)  # its retries keep the first
            request.priority = DUE_PRIORITY
        # engine.crawl schedules the engine's next look at its queue.
        engine.crawl(request)

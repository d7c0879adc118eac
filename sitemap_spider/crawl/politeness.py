"""Politeness to the crawled site: robots.txt ``Crawl-delay``, and slowing down when the site itself is in trouble.

Scrapy 2.19 reads ``Crawl-delay`` (``RobotParser.crawl_delay`` and the
``robots_parsed`` signal) but nothing applies it (scrapy/scrapy#892), and its
RetryMiddleware retries a 429 or 503 as soon as the scheduler hands the request
back, whatever ``Retry-After`` says (scrapy/scrapy#3849). This extension paces
through Scrapy's own means, the downloader slot of the site: a slot with a delay
starts one request per delay. It only ever raises a slot's delay above what
AutoThrottle or ``DOWNLOAD_DELAY`` chose; retries.py does the retrying, each
failing page on its own back-off.

A page's fault is not the site's trouble. The whole site is slowed down only when
the answers say the site, not a page, is struggling, as Google describes its
crawler doing on 5xx and 429 answers:

- a refused connection once the site has answered: nothing listens on its port any more (a
  restart), whichever request met it, a failing page's retry included;
- 429s: the site says we ask too often (a second one among the recent answers; a lone
  one may be one URL's limit, which its page's retry waits out);
- most of the recent answers failing (site_health.WINDOW, site_health.TROUBLE_FAULTS): the
  first failure of each page counts, not a failing page's retries, which say nothing
  new about the site;
- answer after answer asking to wait (site_health.RETRY_AFTER_STREAK ``Retry-After`` in a row).

The first good answer to a request sent after the slow-down brings the site's normal
pace back at once (site_health.py weighs the answers; throttle.py paces 304s as 200s).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from time import monotonic
from typing import TYPE_CHECKING

from scrapy import Request, signals
from scrapy.http import Response
from scrapy.utils.httpobj import urlparse_cached

from sitemap_spider import request_meta as meta
from sitemap_spider import stats as keys
from sitemap_spider.config import PolitenessConfig
from sitemap_spider.crawl.dates import parse_http_date, retry_after_seconds
from sitemap_spider.crawl.site_health import FIRST_BACKOFF, SiteHealth, is_retry, next_backoff

if TYPE_CHECKING:
    from typing import Self

    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.robotstxt import RobotParser

logger = logging.getLogger(__name__)

#: Answers that ask to come back later; a page may give them for a while (retries.py waits them out).
BACKOFF_STATUSES = frozenset({429, 503})
#: Answers of a server or gateway that failed for now: a fault of the page, or of the site.
FAULT_STATUSES = frozenset({408, 502, 504, 522, 524})
#: Statuses that say "not now" rather than "never": retried after a back-off (retries.py).
TRANSIENT_STATUSES = BACKOFF_STATUSES | FAULT_STATUSES
#: Signal (sent by retries.py): a request to the site failed without an answer; arguments request, cause.
SITE_FAULT = object()
#: Signal (sent by retries.py): the site is down and the crawl stops; no arguments.
SITE_DOWN = object()
#: Signal (sent here): a site slowed down answers again; argument key (its downloader slot).
SITE_ANSWERS = object()
#: Signal (sent by a crawl mode): another process of the crawl saw the site answer again; argument key.
SITE_ANSWERS_ELSEWHERE = object()
@dataclass
class _BackOff:
    """A slot slowed down, and what to give back when the site recovers."""

    seconds: float  # the slot's delay is kept at or above this
    since: float  # monotonic time of the last answer that set it
    normal_delay: float  # the slot's delay and jitter before the slow-down
    normal_jitter: float
    cause: str = ""  # how the answer that last set it failed ("503", "connection_refused", ...)
    excused: bool = False  # a request sent during it failed otherwise, and did not lengthen it


class Politeness:
    """Extension: keep each site's downloader slot at or above its Crawl-delay and back-off pause.

    A Crawl-delay makes the slot fetch one request at a time, that many seconds
    apart. When the site is in trouble (a 429, most recent answers failing, answer
    after answer asking to wait) it sets a pause (``Retry-After``, else exponential)
    counted from the moment the answer arrived, for every request to the site; the
    first success of a request sent after it brings the normal pace back.
    """

    def __init__(self, crawler: Crawler, config: PolitenessConfig, user_agent: str) -> None:
        self.crawler = crawler
        self.config = config
        self.user_agent = user_agent
        self.crawl_delays: dict[str, float] = {}  # netloc -> seconds
        self.backoffs: dict[str, _BackOff] = {}  # downloader slot key -> state
        self.health: dict[str, SiteHealth] = {}  # downloader slot key -> its recent answers
        self.down = False  # the site is down and the crawl stops: no more pauses
        # The first pause without Retry-After (SITEMAP_RETRY_DELAY; 0 leaves FIRST_BACKOFF).
        self._first = config.retry_delay or FIRST_BACKOFF
        # AutoThrottle (an extension of order 0) connects first, so these handlers run
        # after its own response_downloaded handler has set the slot's delay.
        crawler.signals.connect(self.robots_parsed, signal=signals.robots_parsed)
        crawler.signals.connect(self.request_reached_downloader, signal=signals.request_reached_downloader)
        crawler.signals.connect(self.response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(self.site_fault, signal=SITE_FAULT)
        crawler.signals.connect(self.site_down, signal=SITE_DOWN)
        crawler.signals.connect(self.answers_elsewhere, signal=SITE_ANSWERS_ELSEWHERE)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        # The agent RobotsTxtMiddleware matches robots.txt groups against.
        user_agent = settings.get("ROBOTSTXT_USER_AGENT") or settings.get("USER_AGENT") or ""
        return cls(crawler, PolitenessConfig.from_settings(settings), str(user_agent))

    def robots_parsed(self, robotparser: RobotParser, request: Request) -> None:
        netloc = urlparse_cached(request).netloc
        asked = robotparser.crawl_delay(self.user_agent)
        if not asked or asked <= 0:
            return
        delay = min(asked, self.config.max_crawl_delay)
        if delay <= 0:
            logger.info(
                "robots.txt of %s sets Crawl-delay: %g; ignored (SITEMAP_MAX_CRAWL_DELAY=0)", netloc, asked
            )
            return
        self.crawl_delays[netloc] = delay
        self.crawler.stats.set_value(keys.CRAWL_DELAY, delay)
        if delay < asked:
            logger.warning(
                "robots.txt of %s sets Crawl-delay: %g; waiting %g s between requests instead "
                "(SITEMAP_MAX_CRAWL_DELAY)", netloc, asked, delay,
            )  # fmt: skip
        else:
            logger.info(
                "robots.txt of %s sets Crawl-delay: %g; fetching one page at a time, %g s apart "
                "(at most %d pages an hour)", netloc, asked, delay, 3600 // delay,
            )  # fmt: skip

    def request_reached_downloader(self, request: Request) -> None:
        # No latency is noted for a failure: when it reached the downloader is the earliest it left.
        request.meta[meta.REACHED_DOWNLOADER] = monotonic()
        # The slot may be new (Scrapy drops idle slots after a minute): set it up again.
        found = self._slot(request)
        if found is not None:
            self._hold(request, *found)

    def response_downloaded(self, response: Response, request: Request) -> None:
        if meta.for_browser(request):
            return  # the browser's requests: rendering paces itself
        found = self._slot(request)
        if found is None:
            return
        key, slot = found
        now = monotonic()
        # A request sent before the last slow-down says nothing new about the site's state.
        sent = now - float(request.meta.get("download_latency") or 0.0)
        status = response.status
        if status in TRANSIENT_STATUSES or "dataloss" in response.flags:
            retry_after = response_retry_after(response)
            header = response.headers.get(b"Retry-After")
            cause = "truncated" if "dataloss" in response.flags else str(status)  # as retries.py names it
            self._fault(key, slot, request, response.url, cause, retry_after, header, now, sent)
        else:
            self._recover(key, slot, sent)
        self._hold(request, key, slot)

    def site_fault(self, request: Request, cause: str) -> None:
        """A request failed without an answer (refused, reset, timed out, truncated)."""
        found = self._slot(request)
        if found is None:
            return
        key, slot = found
        now = monotonic()
        sent = float(request.meta.get(meta.REACHED_DOWNLOADER, now))
        self._fault(key, slot, request, request.url, cause, None, None, now, sent)
        self._hold(request, key, slot)

    def site_down(self) -> None:
        """The crawl stops: what waits in the slots goes now, not at the back-off's pace.

        Scrapy closes a spider only once every request it handed to the downloader is
        done, so requests queued behind a long pause would hold the end back by minutes.
        """
        self.down = True
        self.backoffs.clear()
        for slot in self.crawler.engine.downloader.slots.values():
            slot.delay = 0.0
            self._wake(slot)

    def _fault(
        self, key: str, slot: Slot, request: Request, url: str, cause: str,
        retry_after: float | None, header: bytes | None, now: float, sent: float,
    ) -> None:  # fmt: skip
        """A failed answer: slow the site down if it is the site's trouble, not the page's."""
        health = self.health.setdefault(key, SiteHealth())
        # A page that failed before: its retries wait on their own back-off (unless the site has
        # stopped listening: site_health.SITE_WIDE_CAUSES).
        if not is_retry(request) or health.restarting(cause):
            if health.restarting(cause) or not request.meta.get(meta.PUT_BACK):  # counted when put back
                health.note(cause, retry_after)
            state = self.backoffs.get(key)
            # A request sent during the pause that fails as the trouble did: it goes on. The first one
            # failing otherwise (a page's own 502 after the site's 503s) neither ends nor lengthens
            # it: the next failure, whatever it is, does (502s and 503s by turns still double it).
            again = False
            if state is not None and sent >= state.since:
                again = cause == state.cause or health.restarting(cause) or state.excused
                state.excused = not again
            if again or health.in_trouble():
                self._back_off(key, slot, url, cause, retry_after, header, now, sent)
                health.clear()
        if key in self.backoffs:
            # Failed while the whole site is in trouble (an outage, a restart): the site's failure, not
            # the page's; retries.py puts the page back with its tries (meta.PUT_BACK), and its next
            # failures are not counted for the site again (together, they looked like new trouble).
            request.meta[meta.SITE_TROUBLE] = True

    def _slot(self, request: Request) -> tuple[str, Slot] | None:
        key = request.meta.get("download_slot")
        engine = self.crawler.engine
        if key is None or engine is None:
            return None
        slot = engine.downloader.slots.get(key)
        return None if slot is None else (key, slot)

    def _hold(self, request: Request, key: str, slot: Slot) -> None:
        """Keep the slot at or above the floors that apply to it."""
        crawl_delay = self.crawl_delays.get(urlparse_cached(request).netloc, 0.0)
        backoff = self.backoffs.get(key)
        floor = max(crawl_delay, backoff.seconds if backoff else 0.0)
        if crawl_delay:
            slot.concurrency = 1
        if floor > 0 and not self.down:
            # Scrapy's random jitter would start some requests before the floor.
            slot.jitter = 0.0
            slot.delay = max(slot.delay, floor)

    def _back_off(
        self, key: str, slot: Slot, url: str, cause: str,
        retry_after: float | None, header: bytes | None, now: float, sent: float,
    ) -> None:  # fmt: skip
        self.crawler.stats.inc_value(f"{keys.BACKOFF}{cause}")
        if self.config.max_backoff <= 0:
            return  # SITEMAP_MAX_BACKOFF=0: only immediate retries
        state = self.backoffs.get(key)
        current = state.seconds if state else 0.0
        if state is not None and sent < state.since:
            # Sent before the site was last slowed down: the same overload, do not escalate.
            seconds = (
                current if retry_after is None else max(current, min(retry_after, self.config.max_backoff))
            )
        else:
            seconds = next_backoff(current, slot.delay, retry_after, self.config.max_backoff, self._first)
        capped = retry_after is not None and retry_after > self.config.max_backoff
        if state is None:
            state = _BackOff(seconds, now, normal_delay=slot.delay, normal_jitter=slot.jitter, cause=cause)
            self.backoffs[key] = state
            logger.log(
                logging.WARNING if capped else logging.INFO,
                "%s %s%s: slowing down to one request every %g s on %s%s",
                url, _what(cause),
                f" with Retry-After: {header.decode('latin-1')}" if header else "",
                seconds, key, " (SITEMAP_MAX_BACKOFF)" if capped else "",
            )  # fmt: skip
        else:
            # Once per slow-down in the log: a site under maintenance answers 503 to every page.
            logger.debug("%s %s: one request every %g s on %s", url, _what(cause), seconds, key)
            state.seconds, state.since, state.cause, state.excused = seconds, now, cause, False
        # Without Scrapy's jitter, which would start some requests before the pause is over.
        slot.delay, slot.jitter = max(seconds, state.normal_delay), 0.0
        # The pause counts from now, not from when the refused request was sent; a wait scheduled
        # at the old pace is counted again (a shorter Retry-After takes effect at once).
        slot.lastseen = now
        if slot.latercall is not None:
            self._wake(slot)

    def _recover(self, key: str, slot: Slot, sent: float) -> None:
        # Noted from the first answer on: whether the site has answered tells a restart from a dead port.
        self.health.setdefault(key, SiteHealth()).note("", None)
        state = self._end_pause(key, sent)
        if state is None:
            return
        self._resume(slot, state)  # the downloader looks at the slot's queue right after this signal
        logger.info("%s answers again: back to its normal pace", key)
        self.crawler.signals.send_catch_log(SITE_ANSWERS, key=key, sent=sent)

    def answers_elsewhere(self, key: str, sent: float) -> None:
        """Another process of the crawl saw the site answer a request ``sent`` then (monotonic clock,
        one host): one site, one pace, though this one's next probe may be a whole pause away."""
        state = self._end_pause(key, sent)
        engine = self.crawler.engine
        if state is None or engine is None:
            return
        logger.info("%s answers again (seen by the other crawling process): back to its normal pace", key)
        slot = engine.downloader.slots.get(key)
        if slot is not None:
            self._resume(slot, state)
            self._wake(slot)

    def _wake(self, slot: Slot) -> None:
        """Call off the slot's scheduled wait; the downloader counts it again at the slot's pace."""
        _call_off(slot)
        # No public call for it: what the downloader runs when a download ends.
        self.crawler.engine.downloader._process_queue(slot)

    def _end_pause(self, key: str, sent: float) -> _BackOff | None:
        """Take away the pause of ``key`` that a good answer to a request ``sent`` then ends, if any."""
        state = self.backoffs.get(key)
        if state is None or sent < state.since:
            return None
        del self.backoffs[key]
        return state

    @staticmethod
    def _resume(slot: Slot, state: _BackOff) -> None:
        """The slot's pace before the pause; a wait scheduled at the slower pace is called off."""
        slot.delay, slot.jitter = state.normal_delay, state.normal_jitter
        _call_off(slot)


def _call_off(slot: Slot) -> None:
    if slot.latercall is not None:
        slot.latercall.cancel()
        slot.latercall = None


def response_retry_after(response: Response) -> float | None:
    """Seconds the response's ``Retry-After`` asks to wait, on the server's clock; None without one."""
    return retry_after_seconds(response.headers.get(b"Retry-After"), _response_date(response))


def _response_date(response: Response) -> datetime:
    """The server's clock (its Date header) if readable, else ours: a Retry-After date is on its clock."""
    return parse_http_date(response.headers.get(b"Date")) or datetime.now(UTC)


def _what(cause: str) -> str:
    return f"answered {cause}" if cause.isdigit() else f"failed ({cause})"

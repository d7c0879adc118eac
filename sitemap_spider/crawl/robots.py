"""robots.txt: each URL it forbids recorded, and a robots.txt that fails asked again, not read as "no rules".

Scrapy reads whatever answers to robots.txt as robots.txt. The error page of a 503 has no rule,
so a crawl that started during a deploy's outage (or whose second process did) fetched and
listed what robots.txt forbids. RFC 9309 (2.3.1.4) reads a robots.txt that answers 5xx, or that
cannot be reached, as "disallow everything" until it answers. Here, in a crawl (a spider with a
crawl mode), such a robots.txt (5xx, 429, a refused, reset or truncated answer) is asked again
on a page's back-off: ``SITEMAP_RETRY_DELAY`` doubled at each try, or its ``Retry-After`` (never
less than ``SITEMAP_RETRY_DELAY``), each wait at most ``SITEMAP_MAX_BACKOFF``, at most
``SITEMAP_RETRY_TIMES`` times more (15.5 s in all by default, unless ``Retry-After`` asks longer). Meanwhile nothing else of its host
is fetched: the site's requests wait for it, as they wait for any robots.txt being fetched.

If it still fails, the robots.txt this crawl read already applies: the run that a ``JOBDIR``
resume continues read it, or the first process read it for the second. Else the one the last
published crawl read (kept with the crawl history) applies. Either copy brings its
``Crawl-delay``, as search engines keep using their last copy; without one,
no rules, as in Scrapy, with a warning: forbidding everything would publish nothing because of
a broken robots.txt. A DNS failure or a timeout is not asked again (a timeout has waited
``DOWNLOAD_TIMEOUT``): the copy, or no rules, applies at once.

A crawl that stops meanwhile (or on the last try) lets its waiting requests go unrecorded (as a held retry,
:class:`~sitemap_spider.crawl.retries.RetryLater`): with ``JOBDIR`` or Redis they are fetched
when the crawl resumes, under the robots.txt it reads then.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import CannotResolveHostError, DownloadTimeoutError, IgnoreRequest
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler, load_object
from twisted.internet.defer import Deferred

from sitemap_spider import stats as keys
from sitemap_spider.config import PolitenessConfig
from sitemap_spider.crawl.middlewares import page_report
from sitemap_spider.crawl.politeness import response_retry_after
from sitemap_spider.crawl.retries import DATALOSS_FLAG, RetryLater, fault_cause, retry_delay
from sitemap_spider.crawl.stopping import closing, wait_unless_stopping

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.robotstxt import RobotParser

logger = logging.getLogger(__name__)

#: The history note (HistoryStore.note) of the robots.txt the crawl read: what a later crawl
#: applies when robots.txt fails for all its tries.
ROBOTS_NOTE = "robots"
#: How much of a robots.txt is read (and noted), in bytes: RFC 9309's floor, Google's limit.
_READ_BYTES = 500 * 1024


class _Unknown:
    """The parser of a robots.txt still unknown when the crawl stopped: its requests are not done."""


_STOPPED: Any = _Unknown()


class RecordingRobotsTxtMiddleware(RobotsTxtMiddleware):
    """RobotsTxtMiddleware that records each URL robots.txt forbids, and asks a failing robots.txt again.

    It also mends a Scrapy 2.19 bug: requests that wait for a robots.txt being
    fetched all await the one shared Deferred, and Twisted's ``asFuture`` passes
    ``None`` down its chain after the first waiter, so every other waiting
    request was let through unchecked (scrapy/scrapy PR #6802 removed the
    per-waiter Deferred). A crawl that starts with several requests at once (a
    resumed crawl, several start URLs, shared workers) hit it.
    """

    #: Download errors worth another try (Scrapy's RETRY_EXCEPTIONS but DNS and timeouts).
    transient: tuple[type[BaseException], ...]

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        middleware = super().from_crawler(crawler)
        middleware.transient = tuple(
            load_object(kind) if isinstance(kind, str) else kind
            for kind in crawler.settings.getlist("RETRY_EXCEPTIONS")
        )
        return middleware

    async def robot_parser(self, request: Request) -> RobotParser | None:
        netloc = urlparse_cached(request).netloc
        pending = self._parsers.get(netloc)
        if isinstance(pending, Deferred):
            waiter: Deferred[RobotParser | None] = Deferred()

            def relay(result: RobotParser | None) -> RobotParser | None:
                waiter.callback(result)
                return result  # the next waiter gets the parser too

            pending.addCallback(relay)
            return await maybe_deferred_to_future(waiter)
        if netloc not in self._parsers and getattr(self.crawler.spider, "crawl_mode", None) is not None:
            self._parsers[netloc] = Deferred()
            await self._fetch(request, netloc)
        return await super().robot_parser(request)

    def process_request_2(self, rp: RobotParser | None, request: Request) -> None:
        if rp is _STOPPED:
            raise RetryLater("robots.txt unknown when the crawl stopped: not fetched, not done")
        try:
            super().process_request_2(rp, request)
        except IgnoreRequest:
            report = page_report(self.crawler, request)
            if report is not None:
                report.exclude(request.url, "robots")
            raise

    async def _fetch(self, request: Request, netloc: str) -> None:
        """Fetch ``netloc``'s robots.txt, asking again while it fails (see the module's docstring)."""
        mode = self.crawler.spider.crawl_mode  # type: ignore[union-attr]
        origin = _crawl_origin(self.crawler, netloc)
        ours = origin is not None  # the crawled site's robots.txt: the one the history keeps
        # The copy that applies if every try fails: what this crawl read already (the run a JOBDIR
        # resume continues, the other process or another worker), else what the last crawl read.
        copy = mode.crawl_note(ROBOTS_NOTE) if ours else None
        earlier = copy is not None
        if origin is not None and mode.history is not None:
            if copy is None:
                copy = mode.history.note(ROBOTS_NOTE, origin)
            kept = copy
            # The next crawl's copy, read when the history is kept: the newest any part of this crawl
            # read (it may come after this process's tries fell back), else the last crawl's.
            mode.history_notes[ROBOTS_NOTE] = lambda: _first(mode.crawl_note(ROBOTS_NOTE), kept)
        # Read here, in a crawl: the commands' spiders (validate, audit) have no such settings.
        config = PolitenessConfig.from_settings(self.crawler.settings)
        url = f"{urlparse_cached(request).scheme}://{netloc}/robots.txt"
        cause, tries = "", 0
        try:
            for tries in range(1, config.retry_times + 2):
                robots = Request(
                    url, priority=self.DOWNLOAD_PRIORITY, callback=NO_CALLBACK, dont_filter=True,
                    # One request a try; a try after the first says nothing new of the site's health.
                    meta={"dont_obey_robotstxt": True, "dont_retry": True, "retry_times": tries - 1},
                )  # fmt: skip
                self._stats.inc_value("robotstxt/request_count")
                try:
                    response = await self.crawler.engine.download_async(robots)
                except RetryLater:  # let go at a stop (crawl/stopping.py): unknown, not "none"
                    break
                except IgnoreRequest as exc:  # a robots.txt redirected off the site: none, as in Scrapy
                    self._robots_error(exc, netloc)
                    return
                except Exception as exc:
                    cause, retry_after = fault_cause(exc), None
                    if not self._transient(exc):  # a timeout or DNS: not asked again
                        logger.warning("%s: %s", url, exc)
                        self._stats.inc_value(f"{keys.ROBOTS_UNAVAILABLE}{cause}")
                        break
                else:
                    if (
                        response.status < 500
                        and response.status != 429
                        and DATALOSS_FLAG not in response.flags
                    ):
                        await self._read(response, netloc, request, ours)
                        return
                    cause, retry_after = str(response.status), response_retry_after(response)
                self._stats.inc_value(f"{keys.ROBOTS_UNAVAILABLE}{cause}")
                if tries > config.retry_times or not self._going():
                    break
                first = config.retry_delay
                wait = min(
                    max(first, retry_delay(tries, first, config.max_backoff, retry_after, 1.0)),
                    config.max_backoff,
                )
                logger.log(
                    logging.WARNING if tries == 1 else logging.INFO,
                    "%s: %s; nothing of %s is fetched before it answers (RFC 9309): asked again in %.1f s",
                    url, cause, netloc, wait,
                )  # fmt: skip
                if not await wait_unless_stopping(self.crawler, wait):
                    break
            if not self._going():
                logger.info("%s: still unknown when the crawl stopped; its waiting pages are not done", url)
                self._settle(netloc, _STOPPED)
                return
            # Asked again now: another part of the crawl (a worker of a shared crawl started with this
            # one) may have read robots.txt while these tries failed.
            if ours and (fresh := mode.crawl_note(ROBOTS_NOTE)) is not None:
                copy, earlier = fresh, True
            await self._fall_back(url, netloc, request, cause, tries, copy, earlier)
        except Exception as exc:  # robots.txt's own parsing, or a bug: its waiting requests must not hang
            logger.exception("Reading the robots.txt of %s failed; crawling it as if it had none", netloc)
            if isinstance(self._parsers.get(netloc), Deferred):
                self._robots_error(exc, netloc)

    def _transient(self, exc: Exception) -> bool:
        return isinstance(exc, self.transient) and not isinstance(
            exc, (CannotResolveHostError, DownloadTimeoutError)
        )

    async def _read(self, response: Response, netloc: str, request: Request, noted: bool) -> None:
        body = read_part(response.body)
        if len(body) < len(response.body):
            logger.warning(
                "%s has %d bytes: its first 500 KiB are read (%d bytes, up to the last whole line), as "
                "Google reads them (RFC 9309 2.5)", response.url, len(response.body), len(body),
            )  # fmt: skip
            response = response.replace(body=body)
        if noted:
            # What is parsed is what is noted: the copy a later part of the crawl, or a later crawl, applies.
            # Bytes Scrapy's parser (Protego, UTF-8 with errors ignored) reads alike; a BOM is kept,
            # and stripped when the copy is parsed, as when the body was.
            text = body.decode("utf-8", "ignore")
            self.crawler.spider.crawl_mode.set_crawl_note(ROBOTS_NOTE, text)  # type: ignore[union-attr]
        await self._parse_robots(response, netloc, request)  # Scrapy's: counts the response too

    async def _fall_back(
        self, url: str, netloc: str, request: Request, cause: str, tries: int, copy: str | None, earlier: bool
    ) -> None:
        """robots.txt failed every try: the ``copy`` this crawl (``earlier``) or the last one read, else no rules."""
        if copy is not None:
            logger.warning(
                "%s: %s (%s); applying the robots.txt %s read", url, cause, _tries(tries),
                "this crawl" if earlier else "the last crawl",
            )  # fmt: skip
            self._stats.inc_value(keys.ROBOTS_FROM_CRAWL if earlier else keys.ROBOTS_FROM_HISTORY)
            parser = build_from_crawler(self._parserimpl, self.crawler, copy.encode())
            # As for a robots.txt just read: its Crawl-delay applies (crawl/politeness.py).
            await self.crawler.signals.send_catch_log_async(
                signal=signals.robots_parsed, robotparser=parser, request=request
            )
            self._settle(netloc, parser)
            return
        logger.warning(
            "%s: %s (%s) and no earlier copy in the crawl history; crawling %s as if it had "
            "no robots.txt", url, cause, _tries(tries), netloc,
        )  # fmt: skip
        self._stats.inc_value(keys.ROBOTS_NONE)
        self._settle(netloc, None)

    def _settle(self, netloc: str, parser: Any) -> None:
        pending = self._parsers[netloc]
        assert isinstance(pending, Deferred)
        self._parsers[netloc] = parser
        pending.callback(parser)

    def _going(self) -> bool:
        return not closing(self.crawler)


def read_part(body: bytes) -> bytes:
    """The part of a robots.txt that is read: all of it up to 500 KiB, else its first 500 KiB cut
    after the last whole line in them (RFC 9309 2.5 asks a crawler to read at least that much; a
    line ends with CR, LF or both)."""
    if len(body) <= _READ_BYTES:
        return body
    end = max(body.rfind(b"\n", 0, _READ_BYTES), body.rfind(b"\r", 0, _READ_BYTES))
    return body[: end + 1] if end >= 0 else body[:_READ_BYTES]


def _crawl_origin(crawler: Crawler, netloc: str) -> str | None:
    """The crawled site's origin, when ``netloc`` is its host (the one robots.txt the history keeps)."""
    site = getattr(getattr(crawler.spider, "target", None), "site", None)
    origin: str | None = getattr(site, "crawl_origin", None)
    return origin if origin is not None and urlsplit(origin).netloc == netloc else None


def _tries(count: int) -> str:
    return "1 try" if count == 1 else f"{count} tries"


def _first(*copies: str | None) -> str | None:
    """The first copy there is (an empty robots.txt is one)."""
    return next((copy for copy in copies if copy is not None), None)

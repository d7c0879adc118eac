"""Retries that wait out a site's bad spells instead of losing its pages.

Scrapy's RetryMiddleware retries a failed request at once, at most ``RETRY_TIMES`` (2)
times: a page that fails three times within a second is dropped from the sitemap,
though the site may answer a few seconds later (a deploy, a restarting backend, a
proxy that lost its upstream). Here a *transient* fault, one of

- the statuses 429, 502, 503, 504, 408, 522 and 524,
- Scrapy's ``RETRY_EXCEPTIONS`` (refused, reset or dropped connections, DNS) but timeouts,
- a truncated body (``Content-Length`` longer than what arrived: Scrapy's
  ``ResponseDataLossError``, or the ``dataloss`` flag when ``DOWNLOAD_FAIL_ON_DATALOSS``
  is off),

is retried up to ``SITEMAP_RETRY_TIMES`` times through Scrapy's ``get_retry_request``,
each retry held back by the crawl mode (modes/held.py) for ``SITEMAP_RETRY_DELAY``
seconds doubled at each retry, with jitter, or for the answer's ``Retry-After``; never
more than ``SITEMAP_MAX_BACKOFF``. Each failing page waits on its own back-off: the
rest of the site goes on at its pace, unless politeness.py finds the site itself in
trouble. A page that failed every retry waits for the last pass (modes/held.py): once
the rest of the crawl is done, at most ``SITEMAP_RETRY_LAST_PASS_DELAY`` seconds later,
every page still failing is tried once more, and only then given up, counted under
``sitemap/not_fetched/<cause>`` and excluded as ``http_error`` or ``error`` (or kept
listed from the crawl history). Before that pass, one request to the site's home page
tells a site that is down from pages that are broken: while the site answers nothing,
the pass waits, and a site that has answered nothing but faults for
``SITEMAP_RETRY_BUDGET`` seconds is down: the crawl stops without publishing.

A 500 is most often the page's own bug, which waiting does not mend: it keeps Scrapy's
immediate retries (``RETRY_TIMES``), as do requests that are not pages (robots.txt,
rendering, scripts) and timeouts: a timeout has waited ``DOWNLOAD_TIMEOUT`` already, and
a page that never finishes (one byte a second) would cost that many times over.
"""

from __future__ import annotations

import asyncio
import logging
import random
from time import monotonic
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.downloadermiddlewares.retry import RetryMiddleware, get_retry_request
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from scrapy.http import Response
from scrapy.http.request import NO_CALLBACK

from sitemap_spider import request_meta as meta
from sitemap_spider import stats as keys
from sitemap_spider.config import PolitenessConfig
from sitemap_spider.crawl.politeness import (
    SITE_DOWN,
    SITE_FAULT,
    TRANSIENT_STATUSES,
    response_retry_after,
)

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

    from sitemap_spider.crawl.mode import RetryHolder

logger = logging.getLogger(__name__)

#: Response flag Scrapy sets on a body shorter than its Content-Length (DOWNLOAD_FAIL_ON_DATALOSS off).
DATALOSS_FLAG = "dataloss"
#: Short names of the download errors, for stats and the summary (others: the class name).
_CAUSES: dict[type[Exception], str] = {
    DownloadTimeoutError: "timeout",
    DownloadConnectionRefusedError: "connection_refused",
    DownloadFailedError: "connection_failed",
    ResponseDataLossError: "truncated",
    CannotResolveHostError: "dns",
}


class RetryLater(IgnoreRequest):
    """The request is held back to be tried again: nothing to record, it is not done."""


def retry_delay(retry: int, first: float, cap: float, retry_after: float | None, jitter: float) -> float:
    """Seconds before retry number ``retry`` (1, 2, ...) is sent.

    The server's ``Retry-After`` if it gave one; else ``first`` doubled at each retry
    and scaled by ``jitter`` (drawn from 0.5 to 1.5, so that pages failed together are
    not retried together). Never above ``cap``.
    """
    if retry_after is not None:
        return min(retry_after, cap)
    return min(first * 2.0 ** (retry - 1) * jitter, cap)


def fault_cause(error: BaseException) -> str:
    """A download error's short name: ``timeout``, ``connection_refused``, ... or its class name."""
    for kind, name in _CAUSES.items():
        if isinstance(error, kind):
            return name
    return type(error).__name__


class BackoffRetryMiddleware(RetryMiddleware):
    """Scrapy's RetryMiddleware whose page retries of transient faults wait, held by the crawl mode."""

    config: PolitenessConfig
    #: When the site last gave an answer that was not a transient fault (monotonic).
    last_good: float
    stopping = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        middleware = super().from_crawler(crawler)
        middleware.config = PolitenessConfig.from_settings(crawler.settings)
        middleware.last_good = monotonic()
        return middleware

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        if DATALOSS_FLAG in response.flags:
            cause = "truncated"
        elif response.status in TRANSIENT_STATUSES:
            cause = str(response.status)
        else:
            # Any answer that is not a fault, robots.txt's and the site check's included: the site is up.
            self.last_good = monotonic()
            held = self._mode_held()
            if held is not None:
                held.site_answered = self.last_good
                if request.meta.get("retry_times") and 200 <= response.status < 400:
                    self._stats().inc_value(keys.RETRY_RECOVERED)
            return super().process_response(request, response)  # a 500: immediate retries
        held = self._held(request)
        if held is None:
            self._check_budget()
            return super().process_response(request, response)
        self._retry_later(request, held, cause, response_retry_after(response))
        return response  # given up: the spider records it

    def process_exception(
        self, request: Request, exception: Exception, spider: Spider | None = None
    ) -> Request | Response | None:
        if not isinstance(exception, self.exceptions_to_retry):
            return None
        cause = fault_cause(exception)
        self.crawler.signals.send_catch_log(SITE_FAULT, request=request, cause=cause)
        self._check_budget()
        if request.meta.get("dont_retry"):
            return None  # the site check of modes/held.py: a fault, not to be retried
        held = None if isinstance(exception, DownloadTimeoutError) else self._held(request)
        if held is None:
            return super().process_exception(request, exception)
        self._retry_later(request, held, cause, None)
        return None  # given up: the error reaches the spider's errback

    def _held(self, request: Request) -> RetryHolder | None:
        """Where this request's retries wait; None: Scrapy's own retries (not a page, or no crawl mode)."""
        if request.meta.get("dont_retry") or request.callback is NO_CALLBACK:
            return None  # robots.txt and other engine downloads: their caller waits for them
        if meta.for_browser(request):
            return None
        return self._mode_held()

    def _mode_held(self) -> RetryHolder | None:
        mode = getattr(self.crawler.spider, "crawl_mode", None)
        held: RetryHolder | None = getattr(mode, "held", None)
        return held

    def _retry_later(self, request: Request, held: RetryHolder, cause: str, retry_after: float | None) -> None:
        """Hold a retry (or the last pass) back and raise :class:`RetryLater`; return if giving up."""
        assert self.crawler.spider is not None
        self._check_budget()
        if request.meta.pop(meta.SITE_TROUBLE, False) and not request.meta.get(meta.LAST_PASS):
            # The whole site was failing (crawl/politeness.py slows it down meanwhile): the page
            # waits again with the tries it had. A site that stays down ends the crawl through
            # SITEMAP_RETRY_BUDGET and the site check of modes/held.py, not through its pages' tries.
            again = request.replace(dont_filter=True)
            again.meta[meta.PUT_BACK] = True
            self._stats().inc_value(keys.RETRY_SITE_TROUBLE)
            held.hold(again, self.config.retry_delay)
            raise RetryLater(f"{cause}: the site's trouble, tried again in {self.config.retry_delay:.1f} s")
        # The last pass is one try: its page had all its retries before.
        retry = None if request.meta.get(meta.LAST_PASS) else get_retry_request(
            request,
            spider=self.crawler.spider,
            reason=cause,
            max_retry_times=self.config.retry_times,
            priority_adjust=self.priority_adjust,
            logger=logger,
            give_up_log_level=logging.DEBUG,
        )
        if retry is not None:
            retry.meta.pop(meta.PUT_BACK, None)  # a try of its own now: due in its turn (modes/held.py)
            number = int(retry.meta["retry_times"])
            jitter = random.uniform(0.5, 1.5)
            delay = retry_delay(number, self.config.retry_delay, self.config.max_backoff, retry_after, jitter)
            if held.hurry:
                # The failing pages' time is up (modes/held.py): their last tries go at a short pace.
                delay = min(delay, self.config.retry_delay)
            self._stats().inc_value(keys.RETRY_HELD)
            logger.debug("Retry %d of %s (%s) in %.1f s", number, request.url, cause, delay)
            held.hold(retry, delay)
            raise RetryLater(f"{cause}: retry {number} in {delay:.1f} s")
        if not request.meta.get(meta.LAST_PASS):
            again = request.replace(dont_filter=True)
            again.meta["retry_times"] = 0
            again.meta.pop(meta.PUT_BACK, None)
            again.meta[meta.LAST_PASS] = True
            held.hold_for_last_pass(again)
            raise RetryLater(f"{cause}: kept for the last pass")
        stats = self._stats()
        stats.inc_value(keys.NOT_FETCHED)
        stats.inc_value(keys.NOT_FETCHED_CAUSE + cause)
        logger.warning("Gave up on %s after its retries and a last pass: %s", request.url, cause)

    def _check_budget(self) -> None:
        """Stop the crawl when the site has answered nothing but faults for SITEMAP_RETRY_BUDGET seconds."""
        budget = self.config.retry_budget
        if not budget or self.stopping or monotonic() - self.last_good < budget:
            return
        self.stopping = True
        logger.error(
            "The site has answered nothing but transient faults for %g s (SITEMAP_RETRY_BUDGET): "
            "it is down. Stopping the crawl.", budget,
        )  # fmt: skip
        engine = self.crawler.engine
        if engine is not None and engine.spider is not None:
            asyncio.ensure_future(engine.close_spider_async(reason="site_down"))
        self.crawler.signals.send_catch_log(SITE_DOWN)

    def _stats(self) -> Any:
        assert self.crawler.stats is not None
        return self.crawler.stats

"""Scrapy's own downloader middlewares, taught to keep the crawl's ledger.

Each subclass adds one thing to the library class it extends: the reason a
URL is not listed goes to the crawl mode's :class:`~sitemap_spider.crawl.report.CrawlReport`.
Spiders without a crawl mode get the library behaviour unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.downloadermiddlewares.offsite import OffsiteMiddleware
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from sitemap_spider import request_meta as meta
from sitemap_spider.sitemaps.urls import normalize_url

if TYPE_CHECKING:
    from scrapy.robotstxt import RobotParser

    from sitemap_spider.crawl.report import CrawlReport



def _report(crawler: Any, request: Request) -> CrawlReport | None:
    # Resources (scripts read to decide on rendering) are not pages: nothing to record.
    if request.meta.get(meta.RESOURCE):
        return None
    # The crawl mode's report; spiders without a crawl mode get the library behaviour.
    mode = getattr(crawler.spider, "crawl_mode", None)
    return getattr(mode, "report", None)


class SiteScopeMiddleware(OffsiteMiddleware):
    """Allow exactly the crawled origin (scheme, host and port), also after redirects.

    Scrapy's OffsiteMiddleware compares host names only; a site is an origin.
    Requests the spider marked with ``meta["sitemap_skip"]`` (crawler traps,
    denied URLs) are recorded and dropped here, after the duplicate filter,
    so each is recorded once however many pages link to it.
    """

    def should_follow(self, request: Request, spider: Spider) -> bool:
        site = getattr(getattr(spider, "target", None), "site", None)
        if site is None:
            return super().should_follow(request, spider)
        if site.in_scope(request.url):
            return True  # the spider's own requests are normalised already
        url = normalize_url(request.url)  # redirect targets may be spelled any way
        return url is not None and bool(site.in_scope(url))

    def request_scheduled(self, request: Request, spider: Spider) -> None:
        super().process_request(request)

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        super().process_request(request)
        reason = request.meta.get(meta.SKIP)
        if reason:
            report = _report(self.crawler, request)
            if report is not None:
                report.exclude(request.url, reason)
            raise IgnoreRequest(f"Not fetched: {reason}")


class _RecordRedirects:
    """Mixin for redirect middlewares: a URL that redirects is never listed.

    A redirect to the public origin (a staging copy sending its visitors to
    the live site) is followed on the crawled origin, as links to it are.
    """

    crawler: Any

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        report = _report(self.crawler, request)
        try:
            result = super().process_response(request, response)  # type: ignore[misc]
        except IgnoreRequest:
            if report is not None:
                report.exclude(request.url, "redirect", "too many redirects")
            raise
        if not isinstance(result, Request):
            return result  # type: ignore[no-any-return]
        if report is not None:
            how = str(response.status) if 300 <= response.status < 400 else "meta refresh"
            report.exclude(request.url, "redirect", f"{how} to {result.url}")
        # Scrapy carries the meta over: the target is another page, with retries of its own.
        result.meta.pop("retry_times", None)
        result.meta.pop(meta.LAST_PASS, None)
        spider = self.crawler.spider
        site = getattr(getattr(spider, "target", None), "site", None)
        target = normalize_url(result.url)
        if site is not None and target is not None and site.to_crawl(target) != target:
            result = result.replace(url=site.to_crawl(target))
            target = result.url
        mode = getattr(spider, "crawl_mode", None)
        # Another process may own the target by its normalised spelling, as it owns links.
        if mode is not None and target is not None and mode.hand_over(target, request.meta.get("depth", 0)):
            raise IgnoreRequest(f"{target} is fetched by the other crawling process")
        return result


class RecordingRedirectMiddleware(_RecordRedirects, RedirectMiddleware):
    """RedirectMiddleware that records the redirecting URL as excluded."""


class RecordingMetaRefreshMiddleware(_RecordRedirects, MetaRefreshMiddleware):
    """MetaRefreshMiddleware that records the refreshing URL as excluded."""


class RecordingRobotsTxtMiddleware(RobotsTxtMiddleware):
    """RobotsTxtMiddleware that records each URL robots.txt forbids.

    It also mends a Scrapy 2.19 bug: requests that wait for a robots.txt being
    fetched all await the one shared Deferred, and Twisted's ``asFuture`` passes
    ``None`` down its chain after the first waiter, so every other waiting
    request was let through unchecked (scrapy/scrapy PR #6802 removed the
    per-waiter Deferred). A crawl that starts with several requests at once (a
    resumed crawl, several start URLs, shared workers) hit it.
    """

    async def robot_parser(self, request: Request) -> RobotParser | None:
        pending = self._parsers.get(urlparse_cached(request).netloc)
        if isinstance(pending, Deferred):
            waiter: Deferred[RobotParser | None] = Deferred()

            def relay(result: RobotParser | None) -> RobotParser | None:
                waiter.callback(result)
                return result  # the next waiter gets the parser too

            pending.addCallback(relay)
            return await maybe_deferred_to_future(waiter)
        return await super().robot_parser(request)

    def process_request_2(self, rp: RobotParser | None, request: Request) -> None:
        try:
            super().process_request_2(rp, request)
        except IgnoreRequest:
            report = _report(self.crawler, request)
            if report is not None:
                report.exclude(request.url, "robots")
            raise

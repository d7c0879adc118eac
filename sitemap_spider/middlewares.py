"""Scrapy's own downloader middlewares, taught to keep the crawl's ledger.

Each subclass adds one thing to the library class it extends: the reason a
URL is not listed goes to the spider's :class:`~sitemap_spider.report.CrawlReport`.
Spiders without a ``report`` attribute get the library behaviour unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.downloadermiddlewares.offsite import OffsiteMiddleware
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response

from sitemap_spider.renderer import RESOURCE_META
from sitemap_spider.urls import normalize_url

if TYPE_CHECKING:
    from scrapy.robotstxt import RobotParser

    from sitemap_spider.report import CrawlReport

#: Request meta key: the spider asks for this URL to be recorded as excluded, not fetched.
SKIP_META = "sitemap_skip"


def _report(crawler: Any, request: Request) -> CrawlReport | None:
    # Resources (scripts read to decide on rendering) are not pages: nothing to record.
    if request.meta.get(RESOURCE_META):
        return None
    return getattr(crawler.spider, "report", None)


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
        url = normalize_url(request.url)
        return url is not None and bool(site.in_scope(url))

    def request_scheduled(self, request: Request, spider: Spider) -> None:
        super().process_request(request)

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        super().process_request(request)
        reason = request.meta.get(SKIP_META)
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
        site = getattr(getattr(self.crawler.spider, "target", None), "site", None)
        target = normalize_url(result.url)
        if site is not None and target is not None and site.to_crawl(target) != target:
            return result.replace(url=site.to_crawl(target))
        return result


class RecordingRedirectMiddleware(_RecordRedirects, RedirectMiddleware):
    """RedirectMiddleware that records the redirecting URL as excluded."""


class RecordingMetaRefreshMiddleware(_RecordRedirects, MetaRefreshMiddleware):
    """MetaRefreshMiddleware that records the refreshing URL as excluded."""


class RecordingRobotsTxtMiddleware(RobotsTxtMiddleware):
    """RobotsTxtMiddleware that records each URL robots.txt forbids."""

    def process_request_2(self, rp: RobotParser | None, request: Request) -> None:
        try:
            super().process_request_2(rp, request)
        except IgnoreRequest:
            report = _report(self.crawler, request)
            if report is not None:
                report.exclude(request.url, "robots")
            raise

"""Scrapy's own downloader middlewares, taught to keep the crawl's ledger.

Each subclass adds one thing to the library class it extends: the reason a
URL is not listed goes to the crawl mode's :class:`~sitemap_spider.crawl.report.CrawlReport`.
Spiders without a crawl mode get the library behaviour unchanged.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Self
from weakref import WeakKeyDictionary
from urllib.parse import urljoin, urlsplit

from scrapy import Request, Spider
from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from scrapy.downloadermiddlewares.offsite import OffsiteMiddleware
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response, TextResponse
from scrapy.http.request import NO_CALLBACK
from scrapy.utils import response as scrapy_response
from scrapy.utils.response import get_base_url, get_meta_refresh
from w3lib.url import safe_url_string

from sitemap_spider import request_meta as meta
from sitemap_spider import stats as keys
from sitemap_spider.sitemaps import normalize_url

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy.crawler import Crawler

    from sitemap_spider.crawl.mode import Mode
    from sitemap_spider.crawl.report import CrawlReport

logger = logging.getLogger(__name__)

#: The statuses RedirectMiddleware follows.
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


def page_report(crawler: Any, request: Request) -> CrawlReport | None:
    # Resources (scripts read to decide on rendering) and robots.txt are not pages: nothing to record.
    if request.meta.get(meta.RESOURCE) or request.callback is NO_CALLBACK:
        return None
    # The crawl mode's report; spiders without a crawl mode get the library behaviour.
    mode: Mode | None = getattr(crawler.spider, "crawl_mode", None)
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
            report = page_report(self.crawler, request)
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
        if response.status == 304:
            # Not modified: no Location, no body to hold a meta refresh. Most of a recrawl's answers;
            # Scrapy's MetaRefreshMiddleware read each empty body as HTML (3% of a recrawl's CPU).
            return response
        report = page_report(self.crawler, request)
        unsafe = _unsafe_location(request, response)
        if unsafe is not None:
            # Scrapy passes such a response on as a 3xx (file:, ftp:) or fails on it (javascript:).
            if report is not None:
                report.exclude(request.url, "redirect", f"{response.status} to {unsafe}: not followed")
            raise IgnoreRequest(f"Redirect to {unsafe} not followed: only http and https are")
        try:
            result = super().process_response(request, response)  # type: ignore[misc]
        except IgnoreRequest:
            if report is not None:
                report.exclude(request.url, "redirect", "too many redirects")
            raise
        if not isinstance(result, Request):
            return result  # type: ignore[no-any-return]
        result.meta.pop(meta.WHOLE_FOR_RENDER, None)  # the target's record decides its own
        if result.meta.pop(meta.CONDITIONAL, None):
            # The history's validators belong to the redirecting URL, not to its target.
            result.headers.pop(b"If-None-Match", None)
            result.headers.pop(b"If-Modified-Since", None)
            result.meta.pop("handle_httpstatus_list", None)
        if report is not None:
            how = str(response.status) if 300 <= response.status < 400 else "meta refresh"
            report.exclude(request.url, "redirect", f"{how} to {result.url}")
        # Scrapy carries the meta over: the target is another page, with retries of its own.
        result.meta.pop("retry_times", None)
        result.meta.pop(meta.LAST_PASS, None)
        # And dont_filter, which a retry sets: the target is a URL of its own, which the duplicate
        # filter (it may be queued already through a link) and the site's scope must both see.
        result.dont_filter = False
        spider = self.crawler.spider
        site = getattr(getattr(spider, "target", None), "site", None)
        target = normalize_url(result.url)
        if site is not None and target is not None and site.to_crawl(target) != target:
            result = result.replace(url=site.to_crawl(target))
            target = result.url
        if site is not None and target is not None and not site.in_scope(target):
            _leaving_start_url(self.crawler, request, target)
        mode: Mode | None = getattr(spider, "crawl_mode", None)
        # Another process may own the target by its normalised spelling, as it owns links.
        if mode is not None and target is not None and mode.hand_over(target, request.meta.get("depth", 0)):
            raise IgnoreRequest(f"{target} is fetched by the other crawling process")
        recrawl = getattr(spider, "recrawl", None)
        if recrawl is not None:
            # The target has validators of its own when the history knows it: a 304, not its whole body.
            prepared: Request = recrawl.prepare(result)
            return prepared
        return result


def _leaving_start_url(crawler: Any, request: Request, target: str) -> None:
    """Say so when a start URL (or a redirect of it) leads outside the crawled site: the crawl
    does not follow it, and without another way in it can list nothing. The usual cause is a
    start URL typed without its www or its https, which the site sends to its canonical origin."""
    first = (request.meta.get("redirect_urls") or [request.url])[0]
    start_urls = getattr(getattr(crawler.spider, "target", None), "start_urls", ())
    if normalize_url(first) not in start_urls or crawler.stats is None:
        return
    crawler.stats.set_value(keys.START_URL_LEAVES, target)
    logger.warning(
        "The start URL %s redirects to %s, outside the site crawled: that redirect is not followed. If that "
        "is the site, start from it (-a url=%s)", first, target, target,
    )  # fmt: skip


def _unsafe_location(request: Request, response: Response) -> str | None:
    """The target of an HTTP redirect to a scheme other than http and https, if it is one."""
    location = response.headers.get("Location")
    if response.status not in _REDIRECT_STATUSES or location is None or request.meta.get("dont_redirect"):
        return None
    target = urljoin(request.url, safe_url_string(location))
    return None if urlsplit(target).scheme in ("http", "https") else target


class RecordingRedirectMiddleware(_RecordRedirects, RedirectMiddleware):
    """RedirectMiddleware that records the redirecting URL as excluded."""


class RecordingMetaRefreshMiddleware(_RecordRedirects, MetaRefreshMiddleware):
    """MetaRefreshMiddleware that records the refreshing URL as excluded.

    A ``<base href>`` or a refresh URL that is no URL (``http://[x/``, which urlsplit refuses)
    made Scrapy's reading raise, here and in every later reader of the page (its selector
    among them): the page was lost, and a home page with one published nothing. The page's
    links resolve against its own URL then, as a browser's do, and such a refresh is none.
    """

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        try:
            return super().process_response(request, response, spider)
        except ValueError:
            if not (isinstance(response, TextResponse) and settle_bad_urls(response, self._ignore_tags)):
                raise
            return super().process_response(request, response, spider)


def settle_bad_urls(response: TextResponse, ignore_tags: Iterable[str] = ("script", "noscript")) -> bool:
    """Give Scrapy's per-response caches the page's own URL for a base that is no URL, and no
    refresh for a refresh to no URL; whether there was one (Scrapy keeps those caches private:
    tests/test_bad_urls.py notices if they go).

    The meta refresh middleware does so for every HTML response; the spider again for the pages it
    judges (two look-ups in those caches), as none went through it with METAREFRESH_ENABLED=False:
    a home page with such a base then published nothing."""
    settled = False
    try:
        get_base_url(response)
    except ValueError:
        if isinstance(bases := getattr(scrapy_response, "_baseurl_cache", None), WeakKeyDictionary):
            bases[response] = response.url
            settled = True
    try:
        get_meta_refresh(response, ignore_tags=ignore_tags)
    except ValueError:
        if isinstance(refreshes := getattr(scrapy_response, "_metaref_cache", None), WeakKeyDictionary):
            refreshes[response] = (None, None)
            settled = True
    return settled


class RecordingHttpCompressionMiddleware(HttpCompressionMiddleware):
    """HttpCompressionMiddleware that records a body decompressed past DOWNLOAD_MAXSIZE (a gzip bomb).

    The library stops inflating at the limit, so memory stays bounded, and drops the
    response with IgnoreRequest, which the spider's errback does not record.
    """

    crawler: Crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        middleware = super().from_crawler(crawler)
        middleware.crawler = crawler
        return middleware

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        try:
            return super().process_response(request, response)
        except IgnoreRequest as error:
            report = page_report(self.crawler, request)
            if report is not None:
                report.exclude(request.url, "too_large", str(error))
            raise

"""The small spider ``scrapy validate`` runs to read sitemaps from URLs, with Scrapy's machinery.

robots.txt is obeyed and the project's user agent is sent; redirects are followed up to
REDIRECT_MAX_TIMES (a loop ends there, with a finding); a body over 50 MiB is not
downloaded. Every document goes to the Session, which returns the sitemaps an index leads
to; robots.txt of the hosts that out-of-scope URLs are on is read at the end, for the
cross-submission rule.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import AsyncIterator, Iterator
from typing import Any, Final
from urllib.parse import urlsplit

import scrapy
from protego import Protego
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import DownloadCancelledError, IgnoreRequest
from scrapy.http import Request, Response
from scrapy.settings import BaseSettings
from twisted.python.failure import Failure

from sitemap_spider import default_settings, request_meta
from sitemap_spider.checking.session import Session, Target
from sitemap_spider.crawl.robots import RecordingRobotsTxtMiddleware
from sitemap_spider.sitemaps import MAX_BYTES_PER_SITEMAP, origin_of

#: Foreign hosts whose robots.txt is read for the cross-submission rule.
MAX_ROBOTS_HOSTS: Final = 20
# Every status reaches the callback (a 404 sitemap is a finding, not a log line); 3xx are
# still followed by RedirectMiddleware, which only steps aside for statuses listed here.
_ALL_ERRORS: Final = list(range(400, 600))


def is_site_url(url: str) -> bool:
    """A URL naming a site rather than a file: no path beyond "/", no query."""
    parts = urlsplit(url)
    return parts.path in ("", "/") and not parts.query


_SETTINGS: Final[dict[str, Any]] = {
    # Not the project's add-on: this crawl lists nothing and publishes nothing.
    "ADDONS": {},
    "ITEM_PIPELINES": {},
    "ROBOTSTXT_OBEY": True,
    "USER_AGENT": default_settings.USER_AGENT,
    # A file over the protocol's limit is refused unread; the uncompressed size of a
    # gzip body is bounded by the checks' own reader.
    "DOWNLOAD_MAXSIZE": MAX_BYTES_PER_SITEMAP,
    "DOWNLOAD_WARNSIZE": 0,
    "REDIRECT_MAX_TIMES": 10,
    "RETRY_TIMES": 1,
    "DOWNLOAD_TIMEOUT": 60,
    "AUTOTHROTTLE_ENABLED": False,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
    "TELNETCONSOLE_ENABLED": False,
    "REMOTE_CONTROL_ENABLED": False,
}


class ValidateSpider(scrapy.Spider):
    name = "sitemap_validate"

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        settings.setdict(_SETTINGS, priority="spider")
        # The crawl's robots.txt middleware: Scrapy 2.19's lets through every request but the
        # first that waits for a robots.txt being fetched (see RecordingRobotsTxtMiddleware).
        base = settings.getdict("DOWNLOADER_MIDDLEWARES_BASE")
        order = next(v for k, v in base.items() if k.endswith(RobotsTxtMiddleware.__name__))
        settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", RobotsTxtMiddleware, None)
        settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", RecordingRobotsTxtMiddleware, order)

    def __init__(self, session: Session, urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session = session
        self.urls = urls
        #: origin -> the sitemap URLs its robots.txt names (None: robots.txt not read yet)
        self.robots_sitemaps: dict[str, set[str]] = {}
        self._robots_asked: set[str] = set()

    async def start(self) -> AsyncIterator[Request]:
        for url in self.urls:
            try:
                request = self._first_request(url)
            except ValueError as exc:  # a port out of range, "Invalid IPv6 URL": nothing Scrapy can fetch
                # Raised here, it ended the start: no later input was read, and "valid: 0 file(s)" exited 0.
                self.session.unread(Target(url, url), "read.fetch", f"not a URL that can be fetched: {exc}")
                continue
            if request is not None:
                yield request

    def _first_request(self, url: str) -> Request | None:
        """The request of a URL given on the command line (a site's: its robots.txt); None if given before."""
        if is_site_url(url):
            origin = origin_of(url)
            self._robots_asked.add(origin)
            return Request(
                f"{origin}/robots.txt",
                callback=self._site_robots,
                errback=self._failed,
                meta={request_meta.VALIDATE_TARGET: Target(url, url), "handle_httpstatus_list": _ALL_ERRORS},
                dont_filter=True,
            )
        target = self.session.input(url, url)
        return None if target is None else self._request(target)

    def _request(self, target: Target) -> Request:
        assert target.location is not None
        # dont_filter: a redirect back to a URL already fetched is a loop to report, not to drop.
        return Request(
            target.location,
            callback=self._sitemap,
            errback=self._failed,
            meta={request_meta.VALIDATE_TARGET: target, "handle_httpstatus_list": _ALL_ERRORS},
            dont_filter=True,
        )

    def _sitemap(self, response: Response) -> Iterator[Request]:
        target: Target = response.meta[request_meta.VALIDATE_TARGET]
        if response.status != 200:
            self.session.unread(target, "read.fetch", f"HTTP status {response.status}")
            return
        if response.url != target.location:  # redirected: the scope is where it is served
            target = dataclasses.replace(target, location=response.url)
        for child in self.session.check(target, io.BytesIO(response.body)):
            yield self._request(child)
        yield from self._robots_requests()

    def _site_robots(self, response: Response) -> Iterator[Request]:
        target: Target = response.meta[request_meta.VALIDATE_TARGET]
        origin = origin_of(response.url)
        sitemaps = Protego.parse(response.text).sitemaps if response.status == 200 else []
        named = list(dict.fromkeys(sitemaps))
        self.robots_sitemaps[origin] = set(named)
        if not named:
            self.session.finding(
                "robots.no_sitemap",
                response.url,
                None,
                f"no Sitemap: line; reading {origin}/sitemap.xml",
                target.name,
            )
            named = [f"{origin}/sitemap.xml"]
        for url in named:
            child = self.session.input(url, url)
            if child is None:
                continue
            try:
                request = self._request(child)
            except ValueError as exc:  # "Missing scheme" (Sitemap: /sitemap.xml), "Invalid IPv6 URL"
                # Search engines read only an absolute URL there. Raised here, it ended the callback:
                # no later line was read, and "valid: 0 file(s)" exited 0.
                detail = f"{response.url} names it in a Sitemap: line, but {exc}"
                self.session.unread(child, "read.fetch", detail)
                continue
            yield request

    def _robots_requests(self) -> Iterator[Request]:
        for origin in sorted(self.session.origins_to_check() - self._robots_asked):
            if len(self._robots_asked) >= MAX_ROBOTS_HOSTS:
                return
            self._robots_asked.add(origin)
            yield Request(
                f"{origin}/robots.txt",
                callback=self._robots,
                errback=self._robots_failed,
                meta={"handle_httpstatus_list": _ALL_ERRORS},
                dont_filter=True,
            )

    def _robots(self, response: Response) -> None:
        sitemaps = Protego.parse(response.text).sitemaps if response.status == 200 else []
        self.robots_sitemaps[origin_of(response.url)] = set(sitemaps)

    def _robots_failed(self, failure: Failure) -> None:
        self.logger.info("robots.txt not read: %s", failure.value)

    def _failed(self, failure: Failure) -> None:
        request: Request = failure.request  # type: ignore[attr-defined]
        target: Target = request.meta[request_meta.VALIDATE_TARGET]
        error = failure.value
        assert error is not None  # Scrapy's errbacks get a failure holding its exception
        rule, detail = describe_failure(error, request)
        self.session.unread(target, rule, detail)


def describe_failure(error: BaseException, request: Request) -> tuple[str, str]:
    """The rule and the words for a request that brought no response."""
    chain = [*request.meta.get("redirect_urls", []), request.url]
    if isinstance(error, IgnoreRequest) and "max redirections" in str(error):
        loop = len(set(chain)) < len(chain)
        what = "a redirect loop" if loop else "too many redirects"
        return "read.redirects", f"{what}: {' -> '.join(chain[:12])}"
    if isinstance(error, IgnoreRequest) and "robots.txt" in str(error):
        return "read.robots", f"{request.url} is forbidden to our user agent by robots.txt"
    if isinstance(error, DownloadCancelledError) or (
        isinstance(error, IgnoreRequest) and "max size" in str(error)
    ):
        return "limits.bytes", f"larger than {MAX_BYTES_PER_SITEMAP:,} bytes; not downloaded ({error})"
    return "read.fetch", f"{type(error).__name__}: {error}"

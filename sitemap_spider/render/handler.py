"""scrapy-playwright's download handler, started at the first page to render.

The library starts Playwright (a Node.js driver process, about 100 MB) when the
engine starts. With ``render=auto``, the default, most crawls of static sites
never render a page, so this subclass starts it on the first request that asks
for the browser instead; a static crawl never pays for it.

It also keeps the browser on the crawled origin when a same-origin resource
redirects to another one, which Playwright's routing does not see (browser.py's
``abort_request`` stops every other request to another origin).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urljoin

from scrapy import Request, Spider
from scrapy.http import Response
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from sitemap_spider.render.browser import redirect_leaves_origin

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from playwright.async_api import Request as PlaywrightRequest
    from playwright.async_api import Route

    RouteHandler = Callable[[Route, PlaywrightRequest], Awaitable[None]]

logger = logging.getLogger(__name__)


class LazyPlaywrightDownloadHandler(ScrapyPlaywrightDownloadHandler):  # type: ignore[misc]  # untyped library
    """Starts Playwright on the first ``playwright`` request, not with the engine."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self._max_redirects = crawler.settings.getint("REDIRECT_MAX_TIMES")
        self._start_lock = asyncio.Lock()

    async def _maybe_launch_in_thread(self) -> None:
        """engine_started (Scrapy's async API): nothing to start yet."""

    def _engine_started(self) -> Any:
        """engine_started (Scrapy's older API): nothing to start yet."""
        return None

    async def _download_request(self, request: Request, spider: Spider | None = None) -> Response:
        async with self._start_lock:
            if getattr(self, "browser_provider", None) is None:
                await self._launch()
        response: Response = await super()._download_request(request, spider)
        return response

    def _make_request_handler(self, *args: Any, **kwargs: Any) -> RouteHandler:
        # Playwright routes no request a redirect makes: the route the library's handler
        # (scrapy-playwright 0.0.48) continues follows redirects itself, on the origin only.
        library: RouteHandler = super()._make_request_handler(*args, **kwargs)

        async def handler(route: Route, request: PlaywrightRequest) -> None:
            # The library only ever calls continue_ and abort on the route it is given.
            await library(cast("Route", _OnOriginRoute(route, request, self._max_redirects)), request)

        return handler


class _OnOriginRoute:
    """A Playwright ``Route`` whose ``continue_`` follows no redirect off the page's origin.

    Playwright routes neither the request a redirect makes nor one that follows a
    fulfilled 3xx, so the request is made by Playwright's own client without following
    redirects: those on the origin are followed here (at most REDIRECT_MAX_TIMES), and
    the browser gets the final answer; one to another origin is aborted before
    anything is sent there.
    """

    def __init__(self, route: Route, request: PlaywrightRequest, max_redirects: int) -> None:
        self._route = route
        self._request = request
        self._max_redirects = max_redirects

    def __getattr__(self, name: str) -> Any:
        return getattr(self._route, name)

    async def continue_(self, **overrides: Any) -> None:
        url = overrides.pop("url", None) or self._request.url
        for _ in range(self._max_redirects + 1):
            response = await self._route.fetch(url=url, max_redirects=0, **overrides)
            location = response.headers.get("location")
            if not (300 <= response.status < 400 and location):
                await self._route.fulfill(response=response)
                return
            url = urljoin(url, location)
            if redirect_leaves_origin(self._request, url):
                logger.debug("Not following %s's redirect to %s in the browser: another origin", self._request.url, url)
                break
        await self._route.abort()

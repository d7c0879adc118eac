"""scrapy-playwright's download handler, with its pages kept open.

The library starts Playwright (a Node.js driver process, about 100 MB) when the
engine starts. With ``render=auto``, the default, most crawls of static sites
never render a page: render/download.py builds this handler and starts its
browser at the first request that asks for one, so a static crawl neither
imports Playwright nor starts it. Built after the engine started, the handler
never sees the ``engine_started`` signal the library starts Playwright on.

The library also opens a new page for every request and closes it after. A new
page costs Chromium a renderer process (50 to 300 ms of a render's timeline on the
rendering benchmark's pages, under load). The pages are kept open instead, at most
``PLAYWRIGHT_MAX_PAGES_PER_CONTEXT``, and the next render navigates one of them. But
a browser with any page open costs CPU even when idle (about 3% of a core, as much
with four pages as with one, against nothing with none; Debian's Chromium 156), and
a site that needs few renders would pay for it through the whole crawl: pages left
unused for ``IDLE_PAGE_SECONDS`` are closed.
Each page opened gets the readiness watch (render/ready.py) once; it stays through
navigations.

It also keeps the browser on the crawled origin when a same-origin resource
redirects to another one, which Playwright's routing does not see (browser.py's
``abort_request`` stops every other request to another origin).
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urljoin

from scrapy import Request, Spider
from scrapy.http import Response
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from sitemap_spider.crawl.retries import RetryLater
from sitemap_spider.crawl.stopping import closing
from sitemap_spider.render.browser import redirect_leaves_origin
from sitemap_spider.render.ready import watch

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from playwright.async_api import Page, Route
    from playwright.async_api import Request as PlaywrightRequest

    RouteHandler = Callable[[Route, PlaywrightRequest], Awaitable[None]]

logger = logging.getLogger(__name__)

#: Seconds a page is kept open without a render. Idle pages cost about 3% of a core; opening a
#: page again cost 0.1 to 0.3 CPU seconds on a loaded machine: about this long idle.
IDLE_PAGE_SECONDS = 10.0


class PagePool:
    """Open pages between renders, and how many renders may run at once."""

    def __init__(self, size: int) -> None:
        self._idle: list[tuple[Page, float]] = []  # the last used last
        self._slots = asyncio.Semaphore(size)
        self._closing: set[asyncio.Task[None]] = set()

    async def take(self) -> Page | None:
        """An open page to render with, or None: open a new one. Waits while ``size`` renders run."""
        await self._slots.acquire()
        while self._idle:
            page, _ = self._idle.pop()
            if not page.is_closed():
                return page
        return None

    def give_back(self, page: Page | None) -> None:
        """A render ended; ``page`` is fit for the next one (None: it was closed)."""
        if page is not None and not page.is_closed():
            loop = asyncio.get_running_loop()
            self._idle.append((page, loop.time()))
            loop.call_later(IDLE_PAGE_SECONDS, self._close_idle)
        self._slots.release()

    def _close_idle(self) -> None:
        """Close the pages no render has used for ``IDLE_PAGE_SECONDS``."""
        now = asyncio.get_running_loop().time()
        # A tenth of slack: the loop may run a timer a little early, and this one sets no other.
        while self._idle and now - self._idle[0][1] >= 0.9 * IDLE_PAGE_SECONDS:
            page, _ = self._idle.pop(0)
            task = asyncio.ensure_future(_close(page))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)


class PooledPlaywrightDownloadHandler(ScrapyPlaywrightDownloadHandler):  # type: ignore[misc]  # untyped library
    """Renders in pages kept open between requests; built and started by render/download.py."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)  # Scrapy's HTTP/1.1 handler keeps it as self._crawler
        self._max_redirects = crawler.settings.getint("REDIRECT_MAX_TIMES")
        self._pages = PagePool(self.config.max_pages_per_context)

    async def start(self) -> None:
        """Start Playwright and its browser provider: what the library does when the engine starts."""
        await self._launch()

    async def _download_request(self, request: Request, spider: Spider | None = None) -> Response:
        if request.meta.get("playwright_page") is not None or request.meta.get("playwright_include_page"):
            # Someone else's page to manage: the library's own way.
            response: Response = await super()._download_request(request, spider)
            return response
        page = await self._pages.take()
        if closing(self._crawler):
            # It waited for a free page until the crawl stopped: not rendered, and not done (its
            # errback, or the probe's page, leaves it to a JOBDIR or Redis crawl's resume).
            self._pages.give_back(page)
            raise RetryLater(f"the crawl stopped before {request.url} was rendered")
        if page is None:
            request.meta["playwright_page_init_callback"] = _watch_new_page
        else:
            request.meta["playwright_page"] = page
        # The library leaves the page open then, and puts it in meta (also when the render fails).
        request.meta["playwright_include_page"] = True
        kept = None
        try:
            response = await super()._download_request(request, spider)
            kept = request.meta.pop("playwright_page", None)
            return response
        finally:
            if kept is None:
                await _close(request.meta.pop("playwright_page", None))
            # Ours, for this render only: a render again of the same request (render/download.py) is
            # pooled too. Left in meta, it read as "someone else's page": the library opened a page
            # that nobody closed, and once they filled the context the next render waited for ever.
            request.meta.pop("playwright_include_page", None)
            request.meta.pop("playwright_page_init_callback", None)
            self._pages.give_back(kept)


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


async def _watch_new_page(page: Page, request: Request) -> None:
    await watch(page)


async def _close(page: Page | None) -> None:
    """Close a page a render failed on: it may be half-way through loading."""
    if page is not None and not page.is_closed():
        with suppress(Exception):  # a crashed page or a closed browser: it is gone either way
            await page.close()

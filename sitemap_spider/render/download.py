"""The download handler of a crawl that may render: Scrapy's own for every fetch, the browser's from the first render.

``render=auto`` names a download handler for ``http`` and ``https``, and Scrapy
imports it when the crawl starts. scrapy-playwright's handler module imports
Playwright, about 0.15 s of CPU in each crawl process, which a crawl that never
renders a page (a static site, most of them) would pay for nothing: 5 to 10% of
a 500-page blog's crawl (bench/render_bench.py). This handler is Scrapy's
HTTP/1.1 handler; it imports, builds and starts the browser's handler
(render/handler.py) only when the first page to render reaches it.

A render the server answered with a fault (503, 429, 502, 504: an outage between the page's
static fetch and its render) is rendered again after a page's back-off, at most
:data:`RENDER_RETRIES` times (and ``SITEMAP_RETRY_TIMES``): an error page is not the page's DOM,
and a page whose render failed is judged by its static HTML, losing the links only its scripts
build. Not when the back-off (a ``Retry-After``) is longer than :data:`RENDER_MAX_WAIT`: the wait
holds one of the site's places and a browser tab, and the page still has its static HTML. A stop
ends the wait at once, and the render raises :class:`~sitemap_spider.crawl.retries.RetryLater`: a
page's render, and the page whose callback awaits a probe, are left not done, and a ``JOBDIR`` or
Redis crawl renders them when it resumes.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import TYPE_CHECKING


from sitemap_spider.config import PolitenessConfig
from sitemap_spider.crawl.politeness import TRANSIENT_STATUSES, response_retry_after
from sitemap_spider.crawl.retries import RetryLater, retry_delay
from sitemap_spider.crawl.stop_downloads import StoppableDownloadHandler
from sitemap_spider.crawl.stopping import wait_unless_stopping

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from sitemap_spider.render.handler import PooledPlaywrightDownloadHandler

logger = logging.getLogger(__name__)

#: Renders again of a page whose render the server answered with a fault (a render is costly).
RENDER_RETRIES = 2
#: The longest wait before a render again, in seconds.
RENDER_MAX_WAIT = 5.0


class RenderingDownloadHandler(StoppableDownloadHandler):
    """Scrapy's HTTP/1.1 handler; requests with ``meta["playwright"]`` go to the browser's handler.

    A stop lets go of both (crawl/stop_downloads.py): a render that waited on a slow script held a
    SIGTERM until its timeout (19 s, SITEMAP_RENDER_TIMEOUT 20 s), then counted as a failed render
    (its page sent to be judged by its static HTML) rather than one not done."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._browser_handler: PooledPlaywrightDownloadHandler | None = None
        self._building = asyncio.Lock()
        self._politeness = PolitenessConfig.from_settings(crawler.settings)

    async def download_request(self, request: Request) -> Response:
        if not request.meta.get("playwright"):
            return await super().download_request(request)
        if self._browser_handler is None:
            async with self._building:
                if self._browser_handler is None:
                    from sitemap_spider.render.handler import PooledPlaywrightDownloadHandler

                    handler = PooledPlaywrightDownloadHandler.from_crawler(self.crawler)
                    try:
                        await handler.start()
                    finally:
                        # Started or not, once: after a failed start renders fail, and the renderer
                        # gives up on the browser after a few; closed with this handler.
                        self._browser_handler = handler
        return await self._unless_let_go(self._render(self._browser_handler, request), request)

    async def _render(self, handler: PooledPlaywrightDownloadHandler, request: Request) -> Response:
        """The browser's render of ``request``, rendered again while the server answers it with a fault."""
        config = self._politeness
        for retry in range(1, min(RENDER_RETRIES, config.retry_times) + 1):
            response: Response = await handler.download_request(request)
            if response.status not in TRANSIENT_STATUSES:
                return response
            wait = retry_delay(
                retry, config.retry_delay, config.max_backoff, response_retry_after(response),
                random.uniform(0.5, 1.5),
            )  # fmt: skip
            if wait > RENDER_MAX_WAIT:
                return response  # a failed render: the page is judged by its static HTML
            if not await wait_unless_stopping(self.crawler, wait):
                # Not done: with JOBDIR or Redis the page is rendered when the crawl resumes.
                raise RetryLater(f"the crawl stopped while {request.url} waited to be rendered again")
            logger.debug("Rendering %s: the server answered %d; rendered again after %.1f s", request.url,
                         response.status, wait)  # fmt: skip
        last: Response = await handler.download_request(request)
        return last

    async def close(self) -> None:
        await super().close()
        if self._browser_handler is not None:
            await self._browser_handler.close()

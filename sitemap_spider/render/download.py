"""The download handler of a crawl that may render: Scrapy's own for every fetch, the browser's from the first render.

``render=auto`` names a download handler for ``http`` and ``https``, and Scrapy
imports it when the crawl starts. scrapy-playwright's handler module imports
Playwright, about 0.15 s of CPU in each crawl process, which a crawl that never
renders a page (a static site, most of them) would pay for nothing: 5 to 10% of
a 500-page blog's crawl (bench/render_bench.py). This handler is Scrapy's
HTTP/1.1 handler; it imports, builds and starts the browser's handler
(render/handler.py) only when the first page to render reaches it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from sitemap_spider.render.handler import PooledPlaywrightDownloadHandler


class RenderingDownloadHandler(HTTP11DownloadHandler):
    """Scrapy's HTTP/1.1 handler; requests with ``meta["playwright"]`` go to the browser's handler."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._browser_handler: PooledPlaywrightDownloadHandler | None = None
        self._building = asyncio.Lock()

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
        response: Response = await self._browser_handler.download_request(request)
        return response

    async def close(self) -> None:
        await super().close()
        if self._browser_handler is not None:
            await self._browser_handler.close()

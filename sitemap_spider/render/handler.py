"""scrapy-playwright's download handler, started at the first page to render.

The library starts Playwright (a Node.js driver process, about 100 MB) when the
engine starts. With ``render=auto``, the default, most crawls of static sites
never render a page, so this subclass starts it on the first request that asks
for the browser instead; a static crawl never pays for it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from scrapy import Request, Spider
from scrapy.http import Response
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler


class LazyPlaywrightDownloadHandler(ScrapyPlaywrightDownloadHandler):  # type: ignore[misc]  # untyped library
    """Starts Playwright on the first ``playwright`` request, not with the engine."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
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

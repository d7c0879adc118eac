"""The crawl's handler for http and https: a stopping crawl lets go of its requests in flight.

Once the crawl has been stopping for ``STOP_GRACE`` seconds,
:class:`~sitemap_spider.crawl.stopping.PromptStop` sends ``let_go_in_flight``: each request still
unanswered ends in :class:`~sitemap_spider.crawl.retries.RetryLater` (not done, nothing recorded),
as a request still waiting in its slot does, and its connection is closed. render/download.py's
handler, one of these, lets go of its renders the same way.

A module of its own, loaded by Scrapy as the handler: not imported with crawl/stopping.py, which
the spider's modules import (why: crawl/start_up.py's _stoppable_downloads).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.utils.asyncio import is_asyncio_available

from sitemap_spider.crawl.retries import RetryLater
from sitemap_spider.crawl.stopping import STOP_GRACE, let_go_in_flight

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)


class StoppableDownloadHandler(HTTP11DownloadHandler):
    """Scrapy's HTTP/1.1 handler, whose requests in flight a stopping crawl lets go after STOP_GRACE.

    With a reactor other than asyncio's there is no task to cancel: its requests are waited for,
    as Scrapy does (an asyncio task awaited there failed every request: "await wasn't used with
    future", and the crawl published nothing).
    """

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._in_flight: set[asyncio.Future[Response]] = set()
        self._letting_go = False
        self._stoppable = is_asyncio_available()
        crawler.signals.connect(self._let_go, signal=let_go_in_flight)

    async def download_request(self, request: Request) -> Response:
        return await self._unless_let_go(super().download_request(request), request)

    async def _unless_let_go(self, download: Coroutine[Any, Any, Response], request: Request) -> Response:
        """``download``'s response, or RetryLater once a stop lets the requests in flight go."""
        if not self._stoppable:
            return await download
        if self._letting_go:
            download.close()
            raise RetryLater(f"the crawl stopped before {request.url} was fetched: not done")
        task = asyncio.ensure_future(download)
        self._in_flight.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            if not (self._letting_go and task.cancelled()):
                raise  # this request's own cancellation, not the stop's
            raise RetryLater(f"the crawl stopped while {request.url} was being fetched: not done") from None
        finally:
            self._in_flight.discard(task)

    def _let_go(self) -> None:
        self._letting_go = True
        if self._in_flight:
            logger.info(
                "Stopping: %d request(s) still unanswered after %.0f s let go (not done: a resumed JOBDIR "
                "crawl or the other workers fetch them)", len(self._in_flight), STOP_GRACE,
            )  # fmt: skip
        for task in list(self._in_flight):
            task.cancel()

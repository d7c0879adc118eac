"""The floor of a first crawl in Scrapy: a bare spider that fetches the pages our crawl fetched, and nothing else.

    scrapy runspider bench/bare_fetch.py -a history=/abs/history.sqlite

Every URL of our crawl's history (each page it fetched: listed, left out, not HTML), one plain
GET each, all queued at the start, and a callback that does nothing: no parsing, no link
extraction, no scheduling of links, no items. ``CONCURRENT_ITEMS=1``, as our crawl runs; Scrapy's
defaults otherwise, run outside the project directory like bench/bare_spider.py. What it costs is
Scrapy's own machinery (engine, scheduler, middlewares, Twisted's HTTP client) for the pages of
a crawl, before any reading of them: ``bench/run.py --floor`` runs it after our crawl, on our
crawl's history, and compares its CPU per page with the bare spider's in the same run.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from typing import Any

from scrapy import Request, Spider
from scrapy.http import Response


class BareFetch(Spider):
    name = "bare-fetch"
    custom_settings: dict[str, Any] | None = {
        "CONCURRENT_ITEMS": 1,
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    }

    def __init__(self, history: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with sqlite3.connect(f"file:{history}?mode=ro", uri=True) as db:
            self.urls = [url for (url,) in db.execute("SELECT url FROM pages")]

    async def start(self) -> AsyncIterator[Request]:
        for url in self.urls:
            yield Request(url, dont_filter=True)

    def parse(self, response: Response, **kwargs: Any) -> None:
        return None

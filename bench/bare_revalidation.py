"""The floor of a recrawl in Scrapy: a bare spider that sends the conditional requests a recrawl sends.

    scrapy runspider bench/bare_revalidation.py -a history=/abs/history.sqlite
    scrapy runspider bench/bare_revalidation.py -a history=/abs/history.sqlite -a conditional=no

For every page of our crawl history that has a validator, one request with its
``If-None-Match`` / ``If-Modified-Since``, all queued at the start (no link following), and a
callback that does nothing. Scrapy's defaults otherwise, run outside the project directory
like bench/bare_spider.py. What it costs is what Scrapy's own machinery (engine, scheduler,
middlewares, Twisted's HTTP client) costs for the recrawl's requests, before any work of ours:
bench/recrawl_bench.py compares our recrawl with it in the same run.

With ``conditional=no``, a plain GET of every page of the history (each page the crawl fetched:
listed, left out, not HTML): the floor of a first crawl, no parsing, no link extraction, no
scheduling of links, no items. ``bench/run.py --floor`` runs it after our crawl, on our crawl's
history, and compares its CPU per page with the bare spider's in the same run.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from typing import Any

from scrapy import Request, Spider
from scrapy.http import Response


class BareRevalidation(Spider):
    name = "bare-revalidation"
    custom_settings: dict[str, Any] | None = {
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    }

    def __init__(self, history: str, conditional: str = "yes", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if conditional == "no":  # every page, asked for whole
            query = "SELECT url, NULL, NULL FROM pages"
        else:
            query = "SELECT url, etag, last_modified FROM pages WHERE etag IS NOT NULL OR last_modified IS NOT NULL"
        with sqlite3.connect(f"file:{history}?mode=ro", uri=True) as db:
            self.pages = db.execute(query).fetchall()

    async def start(self) -> AsyncIterator[Request]:
        for url, etag, last_modified in self.pages:
            headers = {}
            if etag:
                headers["If-None-Match"] = etag
            if last_modified:
                headers["If-Modified-Since"] = last_modified
            yield Request(url, headers=headers, meta={"handle_httpstatus_list": [304]}, dont_filter=True)

    def parse(self, response: Response, **kwargs: Any) -> None:
        return None

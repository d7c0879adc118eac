"""The bare Scrapy spider the crawl is compared with: default settings, LinkExtractor, every link
followed (as a CrawlSpider with one ``Rule(LinkExtractor(), follow=True)``), breadth-first.

    scrapy runspider bench/bare_spider.py -a url=http://127.0.0.1:8080/

Run it outside the project directory so that only Scrapy's own defaults apply.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar
from urllib.parse import urlsplit

from scrapy import Request, Spider
from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor


class BareSpider(Spider):
    name = "bare"
    # Breadth-first, as the sitemap spider crawls: the only settings changed from Scrapy's defaults.
    custom_settings: ClassVar[dict[str, Any]] = {
        "DEPTH_PRIORITY": 1,
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    }

    def __init__(self, url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [url]
        self.allowed_domains = [urlsplit(url).hostname or ""]
        self.link_extractor = LinkExtractor()

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        if not isinstance(response, TextResponse):
            return
        for link in self.link_extractor.extract_links(response):
            yield Request(link.url, callback=self.parse)

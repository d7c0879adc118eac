"""A request written to a queue names its spider methods without Scrapy's search of the spider, and
the dict written is the one Scrapy writes (modes/request_dict.py)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, cast

import pytest
from scrapy import Request, Spider
from scrapy.utils.request import request_from_dict
from scrapy.utils.test import get_crawler

from sitemap_spider.crawl.spider import SitemapSpider
from sitemap_spider.modes.request_dict import FifoDiskQueue, request_dict


class _Spider(Spider):
    name = "named"

    def parse(self, response: object) -> None:
        pass

    def on_error(self, failure: object) -> None:
        pass

    def __hidden(self, response: object) -> None:
        pass

    def hidden(self) -> Any:
        return self.__hidden


class _Aliased(_Spider):
    alias = _Spider.on_error


class _Elsewhere:
    def parse(self, response: object) -> None:
        pass


def _elsewhere(response: object) -> None:
    pass


@pytest.fixture
def spider() -> _Spider:
    return _Spider()


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The spiders Scrapy's search (inspect.getmembers) was run over."""
    seen: list[object] = []
    real = inspect.getmembers

    def counted(obj: object, predicate: Any = None) -> Any:
        seen.append(obj)
        return real(obj, predicate)

    monkeypatch.setattr(inspect, "getmembers", counted)
    return seen


def test_the_dict_is_scrapys_and_reads_back_the_same_methods(spider: _Spider, searches: list[object]) -> None:
    request = Request("https://example.com/a", callback=spider.parse, errback=spider.on_error, meta={"depth": 2})
    ours = request_dict(request, spider)
    assert searches == [], "the spider's members were searched"
    assert ours == request.to_dict(spider=spider)  # Scrapy's own, which searches
    assert searches, "Scrapy's to_dict no longer searches: this module can go"
    # The request is as it was.
    assert request.callback == spider.parse and request.errback == spider.on_error
    back = request_from_dict(ours, spider=spider)
    assert back.callback == spider.parse and back.errback == spider.on_error
    assert back.meta == {"depth": 2} and back.url == request.url
    # A method under two names: Scrapy writes the first in alphabetical order ("alias"), this
    # module the def's ("on_error"); either reads back as the same method.
    aliased = _Aliased()
    back = request_from_dict(request_dict(Request("https://example.com/a", errback=aliased.alias), aliased), spider=aliased)
    assert back.errback == aliased.alias == aliased.on_error


def test_what_is_not_a_plain_method_of_the_spider_is_left_to_scrapy(spider: _Spider) -> None:
    # A name-mangled method: its __name__ is not the attribute Scrapy finds.
    mangled = Request("https://example.com/b", callback=spider.hidden())
    assert request_dict(mangled, spider)["callback"] == "_Spider__hidden"
    # Another instance's method: Scrapy names it by its function, as the spider's own.
    assert request_dict(Request("https://example.com/c", callback=_Spider().parse), spider)["callback"] == "parse"
    # A plain function: Scrapy's own error, and the request as it was.
    request = Request("https://example.com/c", callback=_elsewhere)
    with pytest.raises(ValueError, match="is not an instance method"):
        request_dict(request, spider)
    assert request.callback is _elsewhere
    # Bound to the spider under the name of one of its methods, but another function: not "parse".
    impostor = _Elsewhere.parse.__get__(spider)
    with pytest.raises(ValueError, match="is not an instance method"):
        request_dict(Request("https://example.com/e", callback=impostor), spider)
    # A built-in method of the spider: Scrapy's error too (and no AttributeError of ours).
    with pytest.raises(ValueError, match="is not an instance method"):
        request_dict(Request("https://example.com/f", callback=cast("Any", spider.__sizeof__)), spider)
    # The callback named, then the errback refused: both are given back.
    elsewhere: Any = _elsewhere
    failing = Request("https://example.com/g", callback=spider.parse, errback=elsewhere)
    with pytest.raises(ValueError, match="is not an instance method"):
        request_dict(failing, spider)
    assert failing.callback == spider.parse and failing.errback is elsewhere
    # No callback at all.
    assert request_dict(Request("https://example.com/d"), spider)["callback"] is None


def test_the_disk_queue_gives_back_the_sitemap_spiders_requests(tmp_path: Path, searches: list[object]) -> None:
    crawler = get_crawler(SitemapSpider)
    crawler.spider = SitemapSpider(url="https://example.com/")
    queue = FifoDiskQueue.from_crawler(crawler, str(tmp_path / "queue"))
    spider = crawler.spider
    sent = [
        Request(f"https://example.com/{n}", callback=spider.parse, errback=spider.on_error, priority=-n)
        for n in range(3)
    ]
    for request in sent:
        queue.push(request)
    got = [queue.pop() for _ in sent]
    queue.close()
    assert searches == []
    assert [r.url for r in got if r] == [r.url for r in sent]
    assert all(r is not None and r.callback == spider.parse and r.errback == spider.on_error for r in got)
    assert [r.priority for r in got if r] == [0, -1, -2]

"""Crawls that keep their state outside the process: resumable (``JOBDIR``), and the base of shared ones.

Every response's consequences (its new requests, its entry, its exclusions) are stored
before the request is marked done, so a crash, a Ctrl-C or a SIGKILL loses nothing: the
same command resumes. The set is published from the stored entries when the crawl ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sitemap_spider import request_meta as meta
from sitemap_spider.modes.base import CrawlMode
from sitemap_spider.modes.schedulers import StateScheduler
from sitemap_spider.modes.state import CrawlState
from sitemap_spider.sitemaps import SitemapEntry, check_entry

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings

    from sitemap_spider.config import CrawlTarget, SitemapConfig
    from sitemap_spider.crawl.report import ExclusionStore
    from sitemap_spider.history.record import PageRecord


class CrawlStore(Protocol):
    """What a durable crawl state keeps: entries, exclusions, which requests are done."""

    def add_entry(self, entry: SitemapEntry, canonical: str | None = None) -> None: ...

    def entries(self) -> Iterator[tuple[SitemapEntry, str | None]]: ...

    def done(self, request_id: Any) -> None: ...

    def mark_finished(self) -> None: ...

    def close(self) -> None: ...

    def add_exclusion(self, url: str, reason: str, detail: str | None) -> None: ...

    def exclusions(self) -> Iterator[tuple[str, str, str | None]]: ...

    def exclusion_counts(self) -> dict[str, int]: ...

    def add_counts(self, counts: Mapping[str, int]) -> None: ...

    def counts(self) -> dict[str, int]: ...

    def add_observation(self, record: PageRecord) -> None: ...

    def observations(self) -> Iterator[PageRecord]: ...


class DurableMode(CrawlMode):
    """A crawl whose entries and exclusions are stored as it goes, and published from the store."""

    state: CrawlStore
    #: Told when the crawl ends before its time: what becomes of the work not done.
    resume_hint = ""

    def __init__(self, crawler: Crawler, config: SitemapConfig, target: CrawlTarget) -> None:
        super().__init__(crawler, config, target.base_url(config), target.site.to_crawl)

    @classmethod
    def configure(cls, settings: BaseSettings) -> None:
        super().configure(settings)
        settings.setdefault_in_component_priority_dict("SPIDER_MIDDLEWARES", CrawlStateMiddleware, 10)

    def request_done(self, request: Request | None) -> None:
        request_id = None if request is None else request.meta.get(meta.STATE_ID)
        if request_id is not None:
            self.state.done(request_id)

    def exclusion_store(self) -> ExclusionStore:
        return self.state

    def keep(self, entry: SitemapEntry, canonical: str | None = None) -> None:
        # Checked now, stored by CrawlStateMiddleware with the rest of its response.
        check_entry(entry)

    def store_entry(self, entry: SitemapEntry, canonical: str | None = None) -> None:
        self.state.add_entry(entry, canonical)

    def observe(self, record: PageRecord) -> None:
        # Stored with the rest of the response's consequences: a resume keeps it.
        self.state.add_observation(record)

    def observed(self) -> Iterator[PageRecord]:
        return self.state.observations()

    def end(self, reason: str) -> None:
        # The history is committed (publisher.finish) before the crawl is marked finished: after
        # a crash in between, the same command publishes the stored set again and commits it.
        try:
            stored = self.state.entries() if reason == "finished" else None
            if self.publisher.finish(reason, stored, self.resume_hint):
                self.state.mark_finished()
        finally:
            self.state.close()
            self.close_history()


class Resumable(DurableMode):
    """``JOBDIR``: frontier, seen set, entries and exclusions in one SQLite file; the same command resumes."""

    resume_hint = ". Run the same command again to resume"
    state: CrawlState
    #: Scrapy's JOBDIR queue is lost on SIGKILL while its seen set is not: keep both in SQLite.
    scheduler = StateScheduler

    def __init__(self, crawler: Crawler, config: SitemapConfig, target: CrawlTarget) -> None:
        super().__init__(crawler, config, target)
        state = CrawlState(Path(crawler.settings["JOBDIR"]) / "sitemap-state.sqlite")
        state.start(fresh=state.start_urls() not in (None, list(target.start_urls)))
        state.set_start_urls(list(target.start_urls))
        self.state = state

    def crawl_note(self, name: str) -> str | None:
        # Kept in the state: this run's, else the stopped run's (a fresh crawl's state has none).
        return self.state.note(name)

    def set_crawl_note(self, name: str, text: str) -> None:
        self.state.set_note(name, text)


class CrawlStateMiddleware:
    """Spider middleware: store what a response produced, then mark its request done.

    Entries go to the crawl state as they pass; new requests are stored by the
    scheduler as the engine receives them. Only when the callback's output is
    exhausted is the request marked done, so a crash in between fetches it again.
    """

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> CrawlStateMiddleware:
        return cls(crawler)

    def _mode(self) -> DurableMode | None:
        mode = getattr(self.crawler.spider, "crawl_mode", None)
        return mode if isinstance(mode, DurableMode) else None

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterator[Any]:
        mode = self._mode()
        for output in result:
            if mode is not None and isinstance(output, SitemapEntry):
                mode.state.add_entry(output)
            yield output
        if mode is not None:
            mode.request_done(response.request)

    async def process_spider_output_async(self, response: Response, result: AsyncIterable[Any]) -> AsyncIterator[Any]:
        mode = self._mode()
        async for output in result:
            if mode is not None and isinstance(output, SitemapEntry):
                mode.state.add_entry(output)
            yield output
        if mode is not None and not response.meta.get(meta.NOT_DONE):
            mode.request_done(response.request)

    def process_spider_exception(self, response: Response, exception: Exception) -> None:
        # The page is logged and counted as a spider error by Scrapy; it is handled.
        mode = self._mode()
        if mode is not None:
            mode.request_done(response.request)

"""One crawl shared by several workers through Redis (``SITEMAP_REDIS_URL``), nothing lost.

Every worker runs the same command. The frontier and the seen set are
scrapy-redis's (a PriorityQueue: breadth-first with DEPTH_PRIORITY; an
RFPDupeFilter); the rest is ours. Keys of one crawl, ``sitemap:<crawl id>:<name>``:

    meta        hash    status (running, ending, finished), start_urls, seeding, last_active, publisher
    notes       hash    name -> text: what one worker noted for the others (Mode.crawl_note: robots.txt)
    requests    zset    the frontier (score -priority, member the pickled request)
    seen        set     request fingerprints
    leases      hash    "<worker>:<n>" -> "<score> <request>": taken, not yet done
    lease_seq   string  lease counter
    workers     zset    worker -> its last heartbeat (Redis server time: hosts' clocks may differ)
    ended       set     workers that saw the crawl end
    entries     hash    loc -> entry (JSON): a page reached by two workers is listed once
    exclusions  hash    "<url>\\0<reason>" -> detail;  excluded  hash  reason -> count
    counts      hash    the report's and progress line's counts (crawl/report_facts.py), every worker's
    history     hash    url -> the page's crawl history record (JSON), committed by the publisher
    past, past_meta     the crawl history every worker reads, kept from one crawl to the next (history.py)
    problems    hash    JSON [kind, reason, page, detail] -> "": extension data not written (crawl/report.py)

Start (one Lua script): a crawl that is running with a live worker is joined;
an unfinished one whose workers are all gone is taken up with SITEMAP_RESUME;
otherwise the keys are cleared and this worker seeds the start URLs (while it
does, ``seeding`` names it: workers that join meanwhile see an empty queue).

A request taken from the frontier moves into ``leases`` in the same script; it
leaves once everything its response led to is stored (the JOBDIR mark-done
point), or its successor (redirect, retry) is queued. A worker whose heartbeat
is older than SITEMAP_REDIS_LEASE_SECONDS is dead: any live worker puts its
leases back. The crawl ends when the frontier and the leases are empty and no
request was taken or finished for SITEMAP_REDIS_IDLE_SECONDS; the last live
worker to see that publishes, the others name it and leave.

This module is the crawl mode; scheduler.py is what Scrapy runs, the scheduler over
scrapy-redis's queue whose pop takes a lease; the worker's side of the crawl, from
joining to the end, is :class:`~sitemap_spider.modes.shared.crawl.SharedCrawl`
(crawl.py), over the Lua scripts of scripts.py.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from sitemap_spider.config import ConfigError
from sitemap_spider.modes.resumable import DurableMode
from sitemap_spider.modes.shared.connection import check_reachable, unless_lost
from sitemap_spider.modes.shared.crawl import SharedCrawl
from sitemap_spider.modes.shared.history import SharedHistory
from sitemap_spider.modes.shared.scheduler import SharedScheduler

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from sitemap_spider.config import CrawlTarget, SitemapConfig
    from sitemap_spider.modes.base import Progress

logger = logging.getLogger(__name__)


class SharedMode(DurableMode):
    """One crawl, several workers: the frontier, seen set, entries and exclusions in Redis."""

    state: SharedCrawl
    resume_hint = ". The other workers go on with what it had not finished"
    scheduler = SharedScheduler

    def __init__(self, crawler: Crawler, config: SitemapConfig, target: CrawlTarget) -> None:
        super().__init__(crawler, config, target)
        assert config.shared is not None
        shared = SharedCrawl(crawler, config.shared, target)
        shared.keep_open = self.held.keep_open
        # One tail for the whole crawl, as in a two-process one: told through Redis.
        shared.time_is_up = self.held.time_is_up
        self.held.on_time_up.append(shared.tell_time_up)
        shared.connect()  # it joins the crawl when the spider opens
        self.state = shared

    @classmethod
    def configure(cls, settings: BaseSettings) -> None:
        # scrapy-redis's frontier and seen set, kept after each worker closes (the others go
        # on), with leases (see above).
        super().configure(settings)
        settings.set("DUPEFILTER_CLASS", "scrapy_redis.dupefilter.RFPDupeFilter", priority="addon")
        settings.set("SCHEDULER_PERSIST", True, priority="addon")
        settings.set("REDIS_URL", settings.get("SITEMAP_REDIS_URL"), priority="addon")

    @classmethod
    def check(cls, config: SitemapConfig) -> None:
        assert config.shared is not None
        problem = check_reachable(config.shared.redis_url)
        if problem is not None:
            raise ConfigError("SITEMAP_REDIS_URL", f"cannot reach Redis: {problem}")

    def open_history(self, path: Path, origin: str) -> SharedHistory:
        # The history every worker reads is Redis's: a worker on another host has another file.
        history = SharedHistory(path, self.state.redis, self.state.keys, origin)
        if not history.crawl_running():
            history.load()  # a crawl that starts: this worker's file, if Redis has older records or none
        return history

    @unless_lost(None)
    def crawl_note(self, name: str) -> str | None:
        # In Redis: a worker whose own try at robots.txt fails applies the copy another worker read,
        # and a worker that takes the crawl up again (SITEMAP_RESUME) the copy its workers read.
        value = self.state.redis.hget(self.state.keys.notes, name)
        return value.decode() if isinstance(value, bytes) else value

    @unless_lost(None)
    def set_crawl_note(self, name: str, text: str) -> None:
        self.state.redis.hset(self.state.keys.notes, name, text)

    def progress(self, counts: Mapping[str, int] | None = None) -> Progress:
        progress = super().progress(counts)
        if counts is None and self.state.role == "leave" and not progress.fetched:
            # A worker that leaves the set to another, once the publisher has dropped the crawl's
            # counts: its last line ("Progress at the end") gives its own part, said as such.
            return replace(super().progress(self.state.counted), part=True)
        return progress

    def queues_start_urls(self) -> bool:
        # Only the worker that started the crawl; the others find the requests in Redis.
        return self.state.seeds

    def start_urls_queued(self) -> None:
        # The engine queued each request before asking for the next one.
        self.state.seeded()

    def end(self, reason: str) -> None:
        failure = self.state.failure
        if failure is not None:
            # The entries and exclusions are in a Redis that is gone or lost them: no set, no report.
            try:
                self.publisher.discard()
                self.publisher.not_published(failure)
            finally:
                if self.report is not None:
                    self.report.close()
                self.state.close()
            return
        if reason == "finished" and not self.state.publishes:
            self._leave()
        else:
            super().end(reason)

    def _leave(self) -> None:
        """A worker that does not publish: say who does, write no report."""
        shared = self.state
        try:
            if shared.role == "leave":
                logger.info(
                    "Shared crawl %s ended; worker %s publishes the set (this is %s)",
                    shared.crawl_id,
                    shared.publisher,
                    shared.worker,
                )
            else:
                self.publisher.not_published(f"shared crawl {shared.crawl_id} was finished or restarted elsewhere")
        finally:
            if self.report is not None:
                self.report.flush()  # the counts of its last moments, for the report and progress
                self.report.close()
            shared.close()
            self.close_history()

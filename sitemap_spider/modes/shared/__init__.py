"""One crawl shared by several workers through Redis (``SITEMAP_REDIS_URL``), nothing lost.

Every worker runs the same command. The frontier and the seen set are
scrapy-redis's (a PriorityQueue: breadth-first with DEPTH_PRIORITY; an
RFPDupeFilter); the rest is ours. Keys of one crawl, ``sitemap:<crawl id>:<name>``:

    meta        hash    status (running, ending, finished), start_urls, seeding, last_active, publisher
    requests    zset    the frontier (score -priority, member the pickled request)
    seen        set     request fingerprints
    leases      hash    "<worker>:<n>" -> "<score> <request>": taken, not yet done
    lease_seq   string  lease counter
    workers     zset    worker -> its last heartbeat (Redis server time: hosts' clocks may differ)
    ended       set     workers that saw the crawl end
    entries     hash    loc -> entry (JSON): a page reached by two workers is listed once
    exclusions  hash    "<url>\\0<reason>" -> detail;  excluded  hash  reason -> count

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

This module is what Scrapy runs: the scheduler over scrapy-redis's queue whose
pop takes a lease. The worker's side of the crawl, from joining to the end, is
:class:`~sitemap_spider.modes.shared.crawl.SharedCrawl` (distributed_crawl.py,
re-exported here), over the Lua scripts of distributed_scripts.py.
"""

from __future__ import annotations

from typing import Any

from scrapy import Request, Spider
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.queue import PriorityQueue
from scrapy_redis.scheduler import Scheduler

from sitemap_spider.modes.shared.crawl import (
    KEY_PREFIX,
    PUBLISHER_STAT,
    CrawlKeys,
    SharedCrawl,
    check_reachable,
)
from sitemap_spider.modes.schedulers import STATE_ID_META

__all__ = [
    "KEY_PREFIX",
    "PUBLISHER_STAT",
    "CrawlKeys",
    "LeasedQueue",
    "SharedCrawl",
    "SharedScheduler",
    "check_reachable",
]


class LeasedQueue(PriorityQueue):  # type: ignore[misc]  # scrapy-redis has no type information
    """scrapy-redis's priority queue whose pop leases the request to this worker."""

    def __init__(self, shared: SharedCrawl, spider: Spider, serializer: Any = None) -> None:
        super().__init__(shared.redis, spider, shared.keys.requests, serializer)
        self.shared = shared

    def pop(self, timeout: int = 0) -> Request | None:
        taken = self.shared.take()
        if taken is None:
            return None
        lease, data = taken
        request: Request = self._decode_request(data)
        # The JOBDIR meta key: mark_done and redirects end the lease as they end a state row.
        request.meta[STATE_ID_META] = lease
        return request


class SharedScheduler(Scheduler):  # type: ignore[misc]  # scrapy-redis has no type information
    """scrapy-redis's scheduler over the leased queue; seen check and push are one Redis step."""

    def open(self, spider: Spider) -> None:
        shared: SharedCrawl = getattr(spider, "crawl_state")  # noqa: B009 - set by the sitemap spider
        if not isinstance(shared, SharedCrawl):
            raise TypeError("SharedScheduler needs the sitemap spider with SITEMAP_REDIS_URL")
        self.spider = spider
        self.shared = shared
        self.queue = LeasedQueue(shared, spider, self.serializer)
        debug = spider.settings.getbool("DUPEFILTER_DEBUG")
        self.df = RFPDupeFilter(shared.redis, key=shared.keys.seen, debug=debug)

    def enqueue_request(self, request: Request) -> bool:
        # A redirect or retry carries the lease of the request it replaces.
        replaced = request.meta.pop(STATE_ID_META, None)
        fingerprint = None if request.dont_filter else self.df.request_fingerprint(request)
        data = self.queue._encode_request(request)
        stored = self.shared.push(fingerprint, -request.priority, data, replaced)
        if self.stats:
            self.stats.inc_value("scheduler/enqueued/redis" if stored else "dupefilter/filtered")
        if not stored:
            self.df.log(request, self.spider)
        return stored

    def next_request(self) -> Request | None:
        request: Request | None = self.queue.pop()
        if request is not None and self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request

"""The scheduler of a shared crawl: scrapy-redis's, over a queue whose pop leases the request."""

from __future__ import annotations

from typing import Any

from scrapy import Request, Spider
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.queue import PriorityQueue
from scrapy_redis.scheduler import Scheduler

from sitemap_spider import request_meta as meta
from sitemap_spider.modes.request_dict import methods_named
from sitemap_spider.modes.shared.connection import unless_lost
from sitemap_spider.modes.shared.crawl import SharedCrawl


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
        request.meta[meta.STATE_ID] = lease
        return request

    def _encode_request(self, request: Request) -> Any:
        with methods_named(request, self.spider):
            return super()._encode_request(request)


class SharedScheduler(Scheduler):  # type: ignore[misc]  # scrapy-redis has no type information
    """scrapy-redis's scheduler over the leased queue; seen check and push are one Redis step.

    Once Redis is given up on, it queues nothing, has nothing and gives nothing (unless_lost):
    the crawl is stopping.
    """

    def open(self, spider: Spider) -> None:
        shared = getattr(getattr(spider, "crawl_mode", None), "state", None)
        if not isinstance(shared, SharedCrawl):
            raise TypeError("SharedScheduler needs the sitemap spider with SITEMAP_REDIS_URL")
        self.spider = spider
        self.shared = shared
        self.queue = LeasedQueue(shared, spider, self.serializer)
        debug = spider.settings.getbool("DUPEFILTER_DEBUG")
        self.df = RFPDupeFilter(shared.redis, key=shared.keys.seen, debug=debug)

    @unless_lost(False)
    def enqueue_request(self, request: Request) -> bool:
        # A redirect or retry carries the lease of the request it replaces.
        replaced = request.meta.pop(meta.STATE_ID, None)
        fingerprint = None if request.dont_filter else self.df.request_fingerprint(request)
        data = self.queue._encode_request(request)
        stored = self.shared.push(fingerprint, -request.priority, data, replaced)
        if self.stats:
            self.stats.inc_value("scheduler/enqueued/redis" if stored else "dupefilter/filtered")
        if not stored:
            self.df.log(request, self.spider)
        return stored

    @unless_lost(None)
    def next_request(self) -> Request | None:
        request: Request | None = self.queue.pop()
        if request is not None and self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request

    @unless_lost(0)
    def __len__(self) -> int:  # has_pending_requests, at each idle check; the progress line
        return len(self.queue)

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
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import redis
from scrapy import Request, Spider, signals
from scrapy.exceptions import DontCloseSpider
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.queue import PriorityQueue
from scrapy_redis.scheduler import Scheduler
from twisted.internet import task

from sitemap_spider.distributed_scripts import register_scripts
from sitemap_spider.engine import wake_engine
from sitemap_spider.items import SitemapEntry
from sitemap_spider.scheduler import STATE_ID_META

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from sitemap_spider.config import CrawlTarget, SharedConfig

logger = logging.getLogger(__name__)

KEY_PREFIX = "sitemap"
#: Stats key naming the worker that publishes the set, on the workers that leave it that job.
PUBLISHER_STAT = "sitemap/shared/publisher"


def check_reachable(url: str) -> str | None:
    """Why the Redis at ``url`` cannot be used, or None when it answers."""
    client = redis.Redis.from_url(url, socket_connect_timeout=5)
    try:
        client.ping()
    except redis.RedisError as exc:
        return str(exc)
    finally:
        client.close()
    return None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class CrawlKeys:
    """The Redis keys of one shared crawl."""

    DATA = ("requests", "seen", "leases", "lease_seq", "entries", "exclusions", "excluded")

    def __init__(self, crawl_id: str) -> None:
        self.prefix = f"{KEY_PREFIX}:{crawl_id}:"

    def __getattr__(self, name: str) -> str:
        return self.prefix + name

    def data(self) -> list[str]:
        """Every key a new crawl clears besides meta (workers and ended first, for the join script)."""
        return [self.prefix + name for name in ("workers", "ended", *self.DATA)]


class SharedCrawl:
    """This worker's side of a shared crawl: its leases, the stored entries and exclusions, the end.

    It stands where the JOBDIR :class:`~sitemap_spider.state.CrawlState` stands
    (``spider.crawl_state``): the same mark-done point releases a lease.
    """

    def __init__(self, crawler: Crawler, config: SharedConfig, target: CrawlTarget) -> None:
        self.crawler = crawler
        self.config = config
        self.crawl_id = config.crawl_id or target.site.crawl_origin
        self.keys = CrawlKeys(self.crawl_id)
        self.worker = f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(3)}"
        self.redis = redis.Redis.from_url(config.redis_url)
        self.role = "worker"  # started / joined / resumed, then publish / leave / gone
        self.publisher: str | None = None
        self._leases: set[str] = set()
        self._finished = False
        self._script = register_scripts(self.redis)
        # Several beats per idle period and per lease: neither the end nor a lease
        # is decided on one late beat.
        interval = max(0.05, min(1.0, config.idle_seconds / 3, config.lease_seconds / 5))
        self._beat = task.LoopingCall(self._heartbeat)
        self._interval = interval
        self._start_urls = json.dumps(list(target.start_urls))

    def join(self) -> str:
        """Start the crawl (clear, then seed), join it, or take it up again; return which."""
        keys = self.keys
        resume = "1" if self.config.resume else "0"
        role = _text(
            self._script["join"](
                keys=[keys.meta, *keys.data()],
                args=[self.worker, resume, self.config.lease_seconds, self._start_urls],
            )
        )
        self.role = role
        logger.info("Shared crawl %s: %s as worker %s", self.crawl_id, role, self.worker)
        if role == "resumed":
            self._requeue("")
        return role

    @property
    def seeds(self) -> bool:
        """Whether this worker queues the start URLs (only the one that started the crawl)."""
        return self.role == "started"

    def seeded(self) -> None:
        """The start URLs are queued: from now on an empty queue may mean the end."""
        self.redis.hdel(self.keys.meta, "seeding")

    def connect(self) -> None:
        signals_ = self.crawler.signals
        signals_.connect(self._opened, signal=signals.spider_opened)
        signals_.connect(self.on_idle, signal=signals.spider_idle)

    def _opened(self) -> None:
        self._beat.start(self._interval, now=True)

    def _heartbeat(self) -> None:
        try:
            self._script["heartbeat"](keys=[self.keys.workers], args=[self.worker])
            # Busy workers put back a dead one's requests too, so they wait no longer than its lease.
            self._put_back_dead()
        except redis.RedisError as exc:
            # A failed beat must not stop the loop: Redis may be back at the next one.
            logger.warning("Shared crawl heartbeat failed: %s", exc)
        # Work other workers queue and the end of the crawl are noticed at the pace of
        # this heartbeat, not at the engine's own (every 5 s).
        wake_engine(self.crawler.engine)

    # --- the frontier ------------------------------------------------------------
    def take(self) -> tuple[str, bytes] | None:
        """The next request, leased to this worker until :meth:`done`."""
        k = self.keys
        taken = self._script["take"](keys=[k.requests, k.leases, k.lease_seq, k.meta], args=[self.worker])
        if not taken:
            return None
        lease, data = _text(taken[0]), bytes(taken[1])
        self._leases.add(lease)
        return lease, data

    def push(self, fingerprint: str | None, score: int, data: bytes, replaced: str | None) -> bool:
        """Queue a request unless its fingerprint was seen; a request it replaces is done."""
        k = self.keys
        stored = self._script["push"](
            keys=[k.seen, k.requests, k.leases, k.meta],
            args=[fingerprint or "", score, data, replaced or ""],
        )
        if replaced is not None:
            self._leases.discard(replaced)
        return bool(stored)

    def done(self, lease: str) -> None:
        """Everything this request led to is stored: its lease ends."""
        self._script["done"](keys=[self.keys.leases, self.keys.meta], args=[lease])
        self._leases.discard(lease)

    def _put_back_dead(self) -> int:
        moved = self._requeue("")
        if moved:
            logger.warning("Put back %d requests taken by workers that stopped answering", moved)
            self.crawler.stats.inc_value("sitemap/shared/requeued", moved)
        return moved

    def _requeue(self, owner: str) -> int:
        k = self.keys
        moved = self._script["requeue"](keys=[k.workers, k.leases, k.requests], args=[self.config.lease_seconds, owner])
        return int(moved)

    # --- entries and exclusions, as CrawlState keeps them -------------------------
    def add_entry(self, entry: SitemapEntry) -> None:
        value = json.dumps([entry.lastmod, entry.changefreq, entry.priority, entry.content_digest])
        self.redis.hset(self.keys.entries, entry.loc, value)

    def entries(self) -> Iterator[SitemapEntry]:
        for loc, value in self.redis.hscan_iter(self.keys.entries):
            yield SitemapEntry(_text(loc), *json.loads(value))

    def add_exclusion(self, url: str, reason: str, detail: str | None) -> None:
        # A page fetched again after a lease ran out is reported once.
        if self.redis.hsetnx(self.keys.exclusions, f"{url}\0{reason}", detail or ""):
            self.redis.hincrby(self.keys.excluded, reason, 1)

    def exclusions(self) -> Iterator[tuple[str, str, str | None]]:
        rows = []
        for field, detail in self.redis.hscan_iter(self.keys.exclusions):
            url, reason = _text(field).split("\0", 1)
            rows.append((url, reason, _text(detail) or None))
        # Hash order is arbitrary: sort, so the report does not depend on which worker was first.
        yield from sorted(rows)

    def exclusion_counts(self) -> dict[str, int]:
        counts = self.redis.hgetall(self.keys.excluded)
        return {_text(reason): int(count) for reason, count in sorted(counts.items())}

    # --- the end ---------------------------------------------------------------
    def on_idle(self, spider: Spider) -> None:
        """spider_idle: keep this worker open until the whole crawl has ended."""
        if self._leases:
            # The engine is idle, so no response of ours is being handled: these were missed.
            logger.warning("Releasing %d leases not marked done", len(self._leases))
            for lease in list(self._leases):
                self.done(lease)
        if self._put_back_dead():
            raise DontCloseSpider
        k = self.keys
        outcome = self._script["end"](
            keys=[k.meta, k.workers, k.ended, k.requests, k.leases],
            args=[self.worker, self.config.idle_seconds, self.config.lease_seconds],
        )
        what = _text(outcome[0])
        if what in ("busy", "wait"):
            raise DontCloseSpider
        self.role = what
        if what == "gone":
            logger.error("Shared crawl %s was finished or restarted by another worker", self.crawl_id)
            return
        self.publisher = _text(outcome[1])
        if what == "leave":
            # Tells `scrapy crawl` that this worker ended well although it published nothing.
            self.crawler.stats.set_value(PUBLISHER_STAT, self.publisher)

    @property
    def publishes(self) -> bool:
        return self.role == "publish"

    def mark_finished(self) -> None:
        """The set is published: the next run of this crawl starts over."""
        self.redis.hset(self.keys.meta, "status", "finished")
        self._finished = True

    def close(self) -> None:
        """Stop beating; give back what this worker had not finished; drop a published crawl's data."""
        if self._beat.running:
            self._beat.stop()
        moved = self._requeue(self.worker)
        if moved:
            logger.info("Put back %d requests this worker had not finished", moved)
        self.redis.zrem(self.keys.workers, self.worker)
        if self._finished:
            # The report has been written: the frontier, seen set and entries are no longer needed.
            self.redis.unlink(*self.keys.data())
        self.redis.close()


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

"""This worker's side of a shared crawl in Redis (see :mod:`sitemap_spider.modes.shared`).

Joining or starting the crawl, the heartbeat, taking and releasing leases,
the entries and exclusions every worker stores, and the coordinated end.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import socket
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import redis
from scrapy import Spider, signals
from scrapy.exceptions import DontCloseSpider
from twisted.internet import task

from sitemap_spider import stats as keys
from sitemap_spider.history.record import PageRecord
from sitemap_spider.modes.engine import wake_engine
from sitemap_spider.modes.shared.connection import PatientRedis, RedisLost, unless_lost
from sitemap_spider.modes.shared.scripts import register_scripts
from sitemap_spider.sitemaps import SitemapEntry, candidate_from_json, entry_to_json

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from sitemap_spider.config import CrawlTarget, SharedConfig

logger = logging.getLogger(__name__)

KEY_PREFIX = "sitemap"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class CrawlKeys:
    """The Redis keys of one shared crawl."""

    DATA = (
        "requests", "seen", "leases", "lease_seq", "entries", "exclusions", "excluded", "counts", "history", "problems",
        "tail_up", "notes",
    )  # fmt: skip

    def __init__(self, crawl_id: str) -> None:
        self.prefix = f"{KEY_PREFIX}:{crawl_id}:"

    def __getattr__(self, name: str) -> str:
        return self.prefix + name

    def data(self) -> list[str]:
        """Every key a new crawl clears besides meta (workers and ended first, for the join script)."""
        return [self.prefix + name for name in ("workers", "ended", *self.DATA)]


class SharedCrawl:
    """This worker's side of a shared crawl: its leases, the stored entries and exclusions, the end.

    It stands where the JOBDIR :class:`~sitemap_spider.modes.state.CrawlState` stands
    (``spider.crawl_state``): the same mark-done point releases a lease.
    """

    def __init__(self, crawler: Crawler, config: SharedConfig, target: CrawlTarget) -> None:
        self.crawler = crawler
        self.config = config
        self.crawl_id = config.crawl_id or target.site.crawl_origin
        self.keys = CrawlKeys(self.crawl_id)
        self.worker = f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(3)}"
        self.counted: dict[str, int] = {}  # this worker's totals in the crawl's counts
        self.redis = PatientRedis.connect(config.redis_url, config.wait_seconds, self._stop)
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
        #: Whether this worker holds requests back (retries): the mode's HeldRequests.keep_open.
        self.keep_open: Callable[[], bool] = lambda: False
        #: The failing pages' time is up in another worker: the mode's HeldRequests.time_is_up.
        self.time_is_up: Callable[[], None] = lambda: None
        self._tail_told: int | None = None  # the crawl's count of last passes, as this worker last read it

    @unless_lost(None)
    def tell_time_up(self) -> None:
        """This worker ran its last pass: a worker at its own tail runs it too (held.py's time_is_up)."""
        self.redis.incr(self.keys.tail_up)

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

    @unless_lost(None)
    def seeded(self) -> None:
        """The start URLs are queued: from now on an empty queue may mean the end."""
        self.redis.hdel(self.keys.meta, "seeding")

    def connect(self) -> None:
        """Join the crawl when the spider opens, and beat from then on."""
        signals_ = self.crawler.signals
        signals_.connect(self._opened, signal=signals.spider_opened)
        signals_.connect(self.on_idle, signal=signals.spider_idle)

    def _opened(self) -> None:
        # Joined here, not when the spider is made: Scrapy's start-up between the two runs
        # without yielding to the reactor (seconds on a loaded machine), so no heartbeat could
        # go out meanwhile, and the other workers took a worker that had joined to seed the
        # crawl for dead before it had queued a URL (they then ended the crawl empty).
        self.join()
        self._beat.start(self._interval, now=True)

    def _heartbeat(self) -> None:
        if self.failure is not None:
            return
        try:
            status = self._script["heartbeat"](keys=[self.keys.workers, self.keys.meta], args=[self.worker])
            if status is None:
                # A Redis restarted without persistence (or flushed): the frontier, the seen set
                # and the entries are gone, and a set made of what is left would be partial.
                self.redis.fail(f"Redis lost the data of shared crawl {self.crawl_id} (restarted without persistence?)")
                return
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

    @unless_lost(None)
    def done(self, lease: str) -> None:
        """Everything this request led to is stored: its lease ends."""
        self._script["done"](keys=[self.keys.leases, self.keys.meta], args=[lease])
        self._leases.discard(lease)

    def _put_back_dead(self) -> int:
        moved = self._requeue("")
        if moved:
            logger.warning("Put back %d requests taken by workers that stopped answering", moved)
            self.crawler.stats.inc_value(keys.SHARED_REQUEUED, moved)
        return moved

    def _requeue(self, owner: str) -> int:
        k = self.keys
        moved = self._script["requeue"](keys=[k.workers, k.leases, k.requests], args=[self.config.lease_seconds, owner])
        return int(moved)

    # --- entries and exclusions, as CrawlState keeps them -------------------------
    @unless_lost(None)
    def add_entry(self, entry: SitemapEntry, canonical: str | None = None) -> None:
        self.redis.hset(self.keys.entries, entry.loc, entry_to_json(entry, canonical))

    def entries(self) -> Iterator[tuple[SitemapEntry, str | None]]:
        for _, value in self.redis.hscan_iter(self.keys.entries):
            yield candidate_from_json(value)

    @unless_lost(None)
    def add_exclusion(self, url: str, reason: str, detail: str | None) -> None:
        # A page fetched again after a lease ran out, or a write sent again, is reported once.
        keys = [self.keys.exclusions, self.keys.excluded]
        self._script["exclude"](keys=keys, args=[f"{url}\0{reason}", detail or "", reason])

    def exclusions(self) -> Iterator[tuple[str, str, str | None]]:
        rows = []
        for field, detail in self.redis.hscan_iter(self.keys.exclusions):
            url, reason = _text(field).split("\0", 1)
            rows.append((url, reason, _text(detail) or None))
        # Hash order is arbitrary: sort, so the report does not depend on which worker was first.
        yield from sorted(rows)

    @unless_lost(None)
    def add_problem(self, kind: str, reason: str, page: str, detail: str) -> None:
        # A page fetched again after a lease ran out is reported once.
        self.redis.hsetnx(self.keys.problems, json.dumps([kind, reason, page, detail]), "")

    def problems(self) -> Iterator[tuple[str, str, str, str]]:
        rows = [tuple(json.loads(_text(field))) for field in self.redis.hkeys(self.keys.problems)]
        yield from sorted(rows)  # hash order is arbitrary

    def problem_counts(self) -> dict[str, int]:
        return dict(Counter(f"sitemap/{kind}/{reason}" for kind, reason, _, _ in self.problems()))

    def exclusion_counts(self) -> dict[str, int]:
        counts = self.redis.hgetall(self.keys.excluded)
        return {_text(reason): int(count) for reason, count in sorted(counts.items())}

    @unless_lost(None)
    def add_counts(self, counts: Mapping[str, int]) -> None:
        """Add this worker's last counts to the crawl's, as its totals (a field per worker and count):
        HSET, not HINCRBY, as a write cut off by a lost connection is sent again (PatientRedis)."""
        for key, amount in counts.items():
            self.counted[key] = self.counted.get(key, 0) + amount
        if counts:
            self.redis.hset(self.keys.counts, mapping={f"{self.worker}\t{key}": self.counted[key] for key in counts})

    def counts(self) -> dict[str, int]:
        """The counts of every worker of the crawl, summed (none once Redis is given up on)."""
        try:
            fields = self.redis.hgetall(self.keys.counts)
        except RedisLost:
            return {}
        counts: Counter[str] = Counter()
        for field, total in fields.items():
            counts[_text(field).rpartition("\t")[2]] += int(total)
        return dict(counts)

    @unless_lost(None)
    def add_observation(self, record: PageRecord) -> None:
        """A page's crawl history record: the worker that publishes commits them all."""
        self.redis.hset(self.keys.history, record.url, record.to_json())

    def observations(self) -> Iterator[PageRecord]:
        for _url, value in self.redis.hscan_iter(self.keys.history):
            yield PageRecord.from_json(value)

    # --- the end ---------------------------------------------------------------
    def on_idle(self, spider: Spider) -> None:
        """spider_idle: keep this worker open until the whole crawl has ended."""
        self._idle()  # not itself decorated: Scrapy's signals pass a handler the arguments its code names

    @unless_lost(None)  # given up on Redis: the crawl is stopping (_stop), nothing to decide
    def _idle(self) -> None:
        # One tail for the crawl (modes/held.py): each last pass of a worker is said once to the others.
        told = int(self.redis.get(self.keys.tail_up) or 0)
        if self._tail_told is None:
            self._tail_told = told  # last passes of before this worker joined are not its business
        elif told > self._tail_told:
            self._tail_told = told
            self.time_is_up()
        if self.keep_open():
            # Retries held by this worker keep their leases: the crawl is not over.
            raise DontCloseSpider
        if self._leases:
            # The engine is idle, so no response of ours is being handled: these were missed.
            logger.warning("Releasing %d leases not marked done", len(self._leases))
            for lease in list(self._leases):
                self.done(lease)
        # Nothing is in flight, so any lease Redis still holds for this worker is an orphan: a
        # take whose answer a dropped connection lost, or one a Redis restarted from its
        # append-only file or a snapshot had. Its request goes back to the queue.
        orphans = self._requeue(self.worker)
        if orphans:
            logger.warning("Put back %d requests Redis held for this worker without it knowing", orphans)
            raise DontCloseSpider
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
            self.crawler.stats.set_value(keys.SHARED_PUBLISHER, self.publisher)

    @property
    def publishes(self) -> bool:
        return self.role == "publish"

    def mark_finished(self) -> None:
        """The set is published: the next run of this crawl starts over."""
        self.redis.hset(self.keys.meta, "status", "finished")
        self._finished = True

    @property
    def failure(self) -> str | None:
        """Why this worker gave up on Redis, if it did: the crawl stops and publishes nothing."""
        return self.redis.failure

    def _stop(self, why: str) -> None:
        logger.error("Shared crawl %s stops: %s", self.crawl_id, why)
        engine = self.crawler.engine
        if engine is not None and engine.spider is not None:
            asyncio.ensure_future(engine.close_spider_async(reason="redis_failed"))

    def close(self) -> None:
        """Stop beating; give back what this worker had not finished; drop a published crawl's data."""
        if self._beat.running:
            self._beat.stop()
        if self.failure is not None:
            self.redis.close()  # Redis cannot be trusted or reached: its leases run out on their own
            return
        moved = self._requeue(self.worker)
        if moved:
            logger.info("Put back %d requests this worker had not finished", moved)
        self.redis.zrem(self.keys.workers, self.worker)
        if self._finished:
            # The report has been written: the frontier, seen set and entries are no longer needed.
            self.redis.unlink(*self.keys.data())
        self.redis.close()

"""A Scrapy scheduler whose frontier and duplicate filter live in the crawl's SQLite state.

Used when ``JOBDIR`` is set: the crawl survives Ctrl-C, a crash, an OOM kill or
SIGKILL, and the same command resumes it. Order is Scrapy's: highest priority
first, then first in, first out (breadth-first with the spider's DEPTH_PRIORITY).
"""

from __future__ import annotations

import logging
import os
import pickle
import re
import shutil
import tempfile
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.core.scheduler import BaseScheduler, Scheduler
from scrapy.utils.request import request_from_dict

from sitemap_spider import request_meta as meta
from sitemap_spider.config import SitemapConfig
from sitemap_spider.modes.request_dict import request_dict
from sitemap_spider.modes.state import CrawlState
from sitemap_spider.sitemaps import process_alive

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

# Requests taken from the database at once; they are marked in flight together.
_BATCH = 32
#: The queue directories of crawls without JOBDIR, in the system's temporary directory.
QUEUE_PREFIX = "sitemap-queue-"
_QUEUE_NAME = re.compile(rf"{QUEUE_PREFIX}(\d+)-[^-]+")


def state_of(spider: Spider | None) -> CrawlState | None:
    """The JOBDIR crawl state of the spider's crawl mode, if it has one."""
    state = getattr(getattr(spider, "crawl_mode", None), "state", None)
    return state if isinstance(state, CrawlState) else None


class StateScheduler(BaseScheduler):
    """Frontier and seen set in SQLite; in-flight requests are put back on resume."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.state: CrawlState | None = None
        self._buffer: deque[tuple[int, bytes]] = deque()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def open(self, spider: Spider) -> None:
        self.state = state_of(spider)
        if self.state is None:
            raise RuntimeError("StateScheduler needs a spider with a crawl_state (the sitemap spider with JOBDIR)")

    def close(self, reason: str) -> None:
        # Requests taken but never handed out go back to the queue.
        if self.state is not None and self._buffer:
            logger.debug("Putting back %d requests not started", len(self._buffer))
        self._buffer.clear()

    def has_pending_requests(self) -> bool:
        assert self.state is not None
        return bool(self._buffer) or self.state.pending() > 0

    def enqueue_request(self, request: Request) -> bool:
        assert self.state is not None and self.crawler.stats is not None
        # A redirect or retry carries the row of the request it replaces: that one is done
        # once its successor is stored.
        replaced = request.meta.pop(meta.STATE_ID, None)
        fingerprint = None if request.dont_filter else self.crawler.request_fingerprinter.fingerprint(request)
        data = pickle.dumps(request_dict(request, self.crawler.spider), protocol=pickle.HIGHEST_PROTOCOL)
        stored = self.state.add_request(fingerprint, request.priority, data)
        if replaced is not None:
            self.state.done(replaced)
        if stored:
            self.crawler.stats.inc_value("scheduler/enqueued")
        else:
            self.crawler.stats.inc_value("dupefilter/filtered")
        return stored

    def next_request(self) -> Request | None:
        assert self.state is not None and self.crawler.stats is not None
        if not self._buffer:
            self._buffer.extend(self.state.take(_BATCH))
            if not self._buffer:
                return None
        request_id, data = self._buffer.popleft()
        fields: dict[str, Any] = pickle.loads(data)
        request = request_from_dict(fields, spider=self.crawler.spider)
        request.meta[meta.STATE_ID] = request_id
        self.crawler.stats.inc_value("scheduler/dequeued")
        return request

    def __len__(self) -> int:
        assert self.state is not None
        return len(self._buffer) + self.state.pending()


def _remove_abandoned_queues() -> None:
    """Remove the queue directories of crawls that were killed (SIGKILL: their exit never came)."""
    for path in Path(tempfile.gettempdir()).glob(f"{QUEUE_PREFIX}*"):
        # "<prefix><pid>-<random>": a name without the pid (earlier releases') is never taken for one.
        named = _QUEUE_NAME.fullmatch(path.name)
        if named is None or process_alive(int(named.group(1))):
            continue
        try:
            # The temporary directory is shared: another user's directory is not ours to judge.
            ours = path.is_dir() and not path.is_symlink() and path.lstat().st_uid == os.getuid()
        except FileNotFoundError:
            continue
        if ours:
            logger.info("Removing %s, the queue of a crawl that no longer runs", path)
            shutil.rmtree(path, ignore_errors=True)


class SpillScheduler(Scheduler):
    """Scrapy's scheduler, spilling its queue to disk in a temporary directory when there is no JOBDIR.

    Without JOBDIR, Scrapy keeps every queued Request in memory, about 1.5 KB each: a
    breadth-first crawl of a big site queues most of the site at once (a 200,000-page
    site held over 280 MB after two minutes). Scrapy's own disk queues, the ones JOBDIR
    uses, keep that memory flat; the directory is removed when the crawl closes.

    Pickling each request to disk and back cost about 0.8 ms of CPU a page, so the first
    ``SITEMAP_QUEUE_MEMORY`` requests stay in memory. Once that many wait, new ones go to
    disk until the disk queue is empty again: Scrapy takes the memory queue first, which
    then holds the older requests, and breadth-first order holds.
    """

    _in_memory = 0
    _spilling = True

    def open(self, spider: Spider) -> Any:
        assert self.crawler is not None
        if getattr(self, "_spill_dir", None) is not None:
            self._in_memory = SitemapConfig.from_settings(self.crawler.settings).queue_memory
            self._spilling = False
        return super().open(spider)

    def enqueue_request(self, request: Request) -> bool:
        if not request.meta.pop(meta.PAST_FILTER, False):
            return super().enqueue_request(request)
        # As Scrapy's, less the duplicate filter, and without dont_filter, which a redirect
        # would pass on to its target (and Scrapy's offsite check lets any such request go).
        assert self.stats is not None
        if self._dqpush(request):
            self.stats.inc_value("scheduler/enqueued/disk")
        else:
            self._mqpush(request)
            self.stats.inc_value("scheduler/enqueued/memory")
        self.stats.inc_value("scheduler/enqueued")
        return True

    def take_front(self, most: int, wanted: Callable[[Request], bool]) -> list[Request]:
        """Take up to ``most`` requests that ``wanted`` accepts from the front of the queue (the
        ones it would give next), looking at no more than twice that many. The others go back to
        the memory queue at their priority, as they were: a due retry waits behind no page."""
        taken: list[Request] = []
        kept: list[Request] = []
        while len(taken) < most and len(kept) < most:
            request = self.mqs.pop()
            if request is None:
                request = self._dqpop()
            if request is None:
                break
            (taken if wanted(request) else kept).append(request)
        for request in kept:
            self._mqpush(request)
        return taken

    def _dqpush(self, request: Request) -> bool:
        if not self._spilling:
            if len(self.mqs) < self._in_memory:
                return False  # Scrapy's scheduler puts it in the memory queue
            self._spilling = True
        return super()._dqpush(request)

    def _dqpop(self) -> Request | None:
        request = super()._dqpop()
        if request is None and self._in_memory:
            self._spilling = False  # the disk queue is empty: new requests stay in memory again
        return request

    def _dqdir(self, jobdir: str | None) -> str | None:
        if jobdir:
            return super()._dqdir(jobdir)
        _remove_abandoned_queues()
        # Named with the process id: only the queues of processes that no longer run are removed.
        self._spill_dir = tempfile.TemporaryDirectory(prefix=f"{QUEUE_PREFIX}{os.getpid()}-")
        return super()._dqdir(self._spill_dir.name)

    def close(self, reason: str) -> Any:
        try:
            return super().close(reason)
        finally:
            spill = getattr(self, "_spill_dir", None)
            if spill is not None:
                spill.cleanup()
            # The crawl is over: what the seen set held can serve publishing the sitemap. Scrapy
            # 2.19 keeps it in RFPDupeFilter._fingerprints; its public ``fingerprints`` is a
            # deprecated frozenset copy (clearing that would free nothing, and warn).
            # tests/test_schedulers.py pins the attribute.
            seen = getattr(self.df, "_fingerprints", None)
            if isinstance(seen, set):
                seen.clear()

"""The crawl history of a shared crawl, in Redis: every worker reads the same one, wherever it runs.

Each worker has a ``SITEMAP_HISTORY`` file of its own, and workers on other hosts do not see
one another's. So the history a shared crawl reads lives in Redis, beside the crawl's keys but
kept from one crawl to the next (a new crawl clears the others, not these):

    past       hash    url -> the page's record (msgpack of PageRecord.row(): its links stay packed)
    past_meta  hash    kinds (the extension kinds the records were written with), published_at,
                       note:<name> (what the last crawl noted for the next one: HistoryStore.note)

A worker that starts puts its own file's records of the origin there when Redis has none, or
older ones than its file (a crawl of one process ran since); otherwise Redis's stay. The worker
that publishes commits the new records to its file, as any crawl does, and to Redis: written
under a key of their own, then renamed over ``past`` in one transaction with ``past_meta``, so
a worker reads either the old history or the new one, never a mix. A crawl started from any
host then sends the same conditional requests, keeps the same pages on a bad day, and reads the
same notes (the robots.txt of the last crawl, the site's pace, what the probes learnt).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

import msgspec
import redis

from sitemap_spider.history.record import PageRecord
from sitemap_spider.history.store import HistoryStore
from sitemap_spider.modes.shared.connection import unless_lost

if TYPE_CHECKING:
    from sitemap_spider.modes.shared.crawl import CrawlKeys

logger = logging.getLogger(__name__)

#: Records sent to Redis in one round trip.
_BATCH = 1000
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder().decode
#: Stands for "the file does not note the kinds" (a history of a version before the note).
_NOT_NOTED = "\0"
#: Seconds a staging key lives if its writer dies before the swap.
_STAGING_TTL = 3600
# The swap, in one step: KEYS past, past_meta, staging; ARGV published_at, kinds, kinds noted ("1"),
# records written ("0": none), only if newer than Redis's ("1": a load, not a commit). -> 1 if swapped.
# The old records are unlinked (freed in the background), not deleted in the swap's step.
_SWAP = """
local theirs = redis.call('HGET', KEYS[2], 'published_at')
if ARGV[5] == '1' and theirs and tonumber(theirs) >= tonumber(ARGV[1]) then
  redis.call('UNLINK', KEYS[3])
  return 0
end
redis.call('UNLINK', KEYS[1])
if ARGV[4] ~= '0' then redis.call('RENAME', KEYS[3], KEYS[1]) end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'published_at', ARGV[1])
if ARGV[3] == '1' then redis.call('HSET', KEYS[2], 'kinds', ARGV[2]) end
for i = 6, #ARGV, 2 do redis.call('HSET', KEYS[2], 'note:' .. ARGV[i], ARGV[i + 1]) end
return 1
"""


def pack_record(record: PageRecord) -> bytes:
    return _encode(record.row())


def unpack_record(data: bytes) -> PageRecord:
    return PageRecord.from_row(_decode(data))


class SharedHistory(HistoryStore):
    """The history file of this worker, read through Redis's copy, which every worker shares."""

    def __init__(self, path: Path, client: redis.Redis, keys: CrawlKeys, origin: str) -> None:
        super().__init__(path)
        self.redis = client
        self.past = keys.past
        self.meta = keys.past_meta
        self.crawl_meta = keys.meta
        self._swap_script = client.register_script(_SWAP)
        self.origin = origin

    def crawl_running(self) -> bool:
        """Whether the crawl is unfinished (running, or stopped to be resumed): what it reads must not change."""
        return self.redis.hget(self.crawl_meta, "status") in (b"running", b"ending")

    def load(self) -> int:
        """Put this worker's file's records in Redis unless Redis holds as new ones; how many were put."""
        ours = HistoryStore.published_at(self, self.origin)
        theirs = self.published_at(self.origin)
        if theirs is not None and (ours is None or theirs >= ours):
            return 0
        kinds: str | None = HistoryStore.extension_kinds(self, self.origin, _NOT_NOTED)
        staging, written = self._stage(HistoryStore.records(self, self.origin))
        if not written:
            return 0  # nothing to share: Redis stays as it was
        # A file of a version that did not note the time counts as the oldest. Workers started
        # together compare again in the swap's step: the newest file wins, whichever swaps last.
        notes = HistoryStore.notes(self, self.origin)
        if not self._swap(staging, written, None if kinds == _NOT_NOTED else kinds, ours or 0.0, True, notes):
            return 0
        logger.info("Crawl history: %s record(s) of %s put in Redis from %s", written, self.origin, self.path)
        return written

    def _stage(self, records: Iterable[PageRecord]) -> tuple[str, int]:
        """Write ``records`` under a key of their own (returned, with how many)."""
        staged: list[tuple[str, int]] = []
        try:
            for _ in self._staging(records, staged):
                pass
        except BaseException:
            for staging, _written in staged:
                _forget(self.redis, staging)
            raise
        return staged[0]

    def _staging(self, records: Iterable[PageRecord], staged: list[tuple[str, int]]) -> Iterator[PageRecord]:
        """Pass ``records`` on while writing them under a new key; ``staged`` holds (the key, how many so far)."""
        staging = f"{self.past}:new:{secrets.token_hex(4)}"
        staged.append((staging, 0))
        pipe = self.redis.pipeline(transaction=False)
        written = 0
        for record in records:
            pipe.hset(staging, record.url, pack_record(record))
            written += 1
            staged[0] = (staging, written)
            if written == 1:
                pipe.expire(staging, _STAGING_TTL)
            if written % _BATCH == 0:
                pipe.execute()
            yield record
        pipe.execute()

    def _swap(
        self, staging: str, written: int, kinds: str | None, published: float, only_if_newer: bool = False,
        notes: Mapping[str, str] | None = None,
    ) -> bool:  # fmt: skip
        """The staged records become the shared ones, with their meta and notes, in one step.

        False if Redis's were newer (``only_if_newer``): nothing changed.
        """
        args = [repr(published), kinds or "", "0" if kinds is None else "1", str(written), "1" if only_if_newer else "0"]
        for name, value in (notes or {}).items():
            args += [name, value]
        try:
            return bool(self._swap_script(keys=[self.past, self.meta, staging], args=args))
        except BaseException:
            _forget(self.redis, staging)
            raise

    # --- what the crawl reads: Redis's copy ----------------------------------------------------
    @unless_lost(None)  # asked for each link: a crawl that gave up on Redis is stopping
    def get(self, url: str) -> PageRecord | None:
        data = self.redis.hget(self.past, url)
        return None if data is None else unpack_record(cast(bytes, data))

    def records(self, origin: str | None = None) -> Iterator[PageRecord]:
        for _url, data in self.redis.hscan_iter(self.past, count=_BATCH):
            yield unpack_record(cast(bytes, data))

    def __len__(self) -> int:
        return int(self.redis.hlen(self.past))

    def extension_kinds(self, origin: str, default: str) -> str:
        kinds = self.redis.hget(self.meta, "kinds")
        return default if kinds is None else cast(bytes, kinds).decode()

    def published_at(self, origin: str) -> float | None:
        value = self.redis.hget(self.meta, "published_at")
        return None if value is None else float(value)

    def note(self, name: str, origin: str) -> str | None:
        """Redis's copy of the note, which every worker shares; else this worker's file's."""
        try:
            value = self.redis.hget(self.meta, f"note:{name}")
        except redis.RedisError:
            value = None
        return cast(bytes, value).decode() if value is not None else super().note(name, origin)

    # --- the publisher's commit: its file, then Redis ---------------------------------------------
    def commit(
        self, records: Iterable[PageRecord], origin: str, kinds: Callable[[], str] | None = None,
        notes: Mapping[str, Callable[[], str | None]] | None = None,
    ) -> int:  # fmt: skip
        # The notes (what the probes learnt, the site's pace, robots.txt) go to the publisher's file
        # and to Redis, for the workers on other hosts: each asked once.
        learnt: dict[str, str | None] = {}
        once = {name: _once(learnt, name, note) for name, note in (notes or {}).items()}
        noted: list[str] = []
        staged: list[tuple[str, int]] = []

        def kinds_once() -> str:
            assert kinds is not None
            noted.append(kinds())
            return noted[0]

        try:
            written = super().commit(
                self._staging(records, staged), origin, kinds_once if kinds is not None else None, once
            )
            staging, count = staged[0] if staged else ("", 0)
            published = HistoryStore.published_at(self, origin) or time.time()
            kept = {name: value for name, value in learnt.items() if value is not None}
            self._swap(staging, count, noted[0] if noted else None, published, notes=kept)
        except redis.RedisError as exc:
            for staging, _ in staged:
                _forget(self.redis, staging)
            # The publish reports a history it could not update as it does a disk's failure (crawl_end.py).
            # The file may hold the new records already: the next crawl started on this host shares them.
            raise OSError(f"Redis: {exc}; Redis's copy of the crawl history was not updated") from exc
        except BaseException:
            for staging, _ in staged:
                _forget(self.redis, staging)
            raise
        return written


def _forget(client: redis.Redis, staging: str) -> None:
    """Remove a staging key after a failure; if Redis cannot be reached, its expiry removes it."""
    try:
        client.unlink(staging)
    except redis.RedisError:
        pass


def _once(
    learnt: dict[str, str | None], name: str, note: Callable[[], str | None]
) -> Callable[[], str | None]:
    """``note``, asked once: what it said is kept in ``learnt`` for Redis."""

    def ask() -> str | None:
        learnt[name] = note()
        return learnt[name]

    return ask

"""Compressing and validating each shard while the next one is written.

The writer puts each shard on disk as a plain file; a job here reads it once, writes the
gzipped file from those bytes and validates the same bytes (never reading the .gz back). The
jobs go to the worker processes of ``scrapy publish`` when there are any (idle once the input
is parsed; each holds one parsed tree at a time, and the main process keeps its CPU and the
GIL for merging and formatting), or else to a thread of this process (ISA-L and libxml2
release the GIL). Either way they run beside the writing of the next shards.
"""

from __future__ import annotations

import collections
import os
from concurrent.futures import Executor, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path

from sitemap_spider.sitemaps.errors import SitemapValidationError
from sitemap_spider.sitemaps.shards.files import gzip_file, write_document
from sitemap_spider.sitemaps.xml.validate import TREE_VALIDATION_MAX_BYTES, validate_document, validate_file
from sitemap_spider.sitemaps.shards.writer import ShardInfo


def finish_shard(plain: str, path: str, gzip: bool, validate: bool, urls: int, whole: bool = True) -> None:
    """Compress the plain shard ``plain`` into ``path`` (if ``gzip``) and validate it; in any process.

    Beyond the XSD, the number of ``<url>`` read back must be ``urls``, the number written.
    ``whole``: small shards may be validated as a tree (faster, ~60 MB for the biggest).
    """
    if not whole or os.path.getsize(plain) > TREE_VALIDATION_MAX_BYTES:
        # Too big to hold as a tree: compressed from the file, validated streaming.
        if gzip:
            gzip_file(Path(plain), Path(path))
            os.unlink(plain)
        found = validate_file(Path(path), whole=whole) if validate else urls
    else:
        data = Path(plain).read_bytes()
        if gzip:
            write_document(Path(path), data, gzip=True)
            os.unlink(plain)
        found = validate_document(data, path) if validate else urls
    if found != urls:
        raise SitemapValidationError(f"{Path(path).name}: {found} <url> read back, {urls} written")


class ShardFinisher:
    """Put each shard the writer closes in its final form, checked; in the background."""

    def __init__(
        self, directory: Path, *, gzip: bool, validate: bool, workers: Executor | None = None, in_flight: int = 2
    ) -> None:
        """``workers``: processes to finish shards in, else a thread here; ``in_flight``: shards
        handed over and not finished, beyond which ``submit`` waits."""
        self.directory = directory
        self.gzip = gzip
        self.validate = validate
        self._workers = workers
        self._thread: ThreadPoolExecutor | None = None
        self._shards: list[ShardInfo] = []
        self._jobs: list[Future[None]] = []
        self._in_flight: collections.deque[Future[None]] = collections.deque()
        self._max_in_flight = max(1, in_flight)

    def submit(self, shard: ShardInfo) -> None:
        """Finish ``shard``, a complete plain file in ``directory``."""
        # Wait for the oldest shards first: a failure stops the writing as soon as it is
        # known, and the writer does not run far ahead of the checks.
        while len(self._in_flight) >= self._max_in_flight:
            self._in_flight.popleft().result()
        executor = self._workers
        if executor is None:
            if self._thread is None:
                self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sitemap-finisher")
            executor = self._thread
        final = replace(shard, name=shard.name + ".gz") if self.gzip else shard
        job = executor.submit(
            finish_shard,
            str(self.directory / shard.name),
            str(self.directory / final.name),
            self.gzip,
            self.validate,
            shard.urls,
            # In this process (a crawl, whose memory holds the crawl's state) memory counts more
            # than the second or so that streaming costs: trees only in worker processes.
            self._workers is not None,
        )
        self._shards.append(final)
        self._jobs.append(job)
        self._in_flight.append(job)

    def results(self) -> list[ShardInfo]:
        """Wait for every shard; the finished shards in order, or the first failure."""
        try:
            for job in self._jobs:
                job.result()
            return list(self._shards)
        finally:
            self.cancel()

    def cancel(self) -> None:
        """Stop: drop the jobs not started, wait for those in progress; idempotent."""
        for job in self._jobs:
            job.cancel()
        # Nothing may still write into the staging directory once this returns.
        wait([job for job in self._jobs if not job.cancelled()])
        if self._thread is not None:
            self._thread.shutdown(wait=True, cancel_futures=True)

"""Build and publish a whole sitemap set: shards plus ``sitemap_index.xml``.

Used by the crawl and by the ``scrapy publish`` command. Entries go through the external
sorter (bounded memory, order-independent output), the shard writer and, when asked, the XSD
validation, all inside a staging directory; only a complete, valid set is moved into place.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Self

from sitemap_spider.items import SitemapEntry
from sitemap_spider.sitemaps.errors import EmptySitemapError, SitemapError, SitemapValidationError
from sitemap_spider.sitemaps.sorting import (
    ExternalSorter,
    LineSorter,
    decode_entry,
    decode_fields,
    encode_fields,
)
from sitemap_spider.sitemaps.storage import SitemapStorage
from sitemap_spider.sitemaps.validate import validate_file
from sitemap_spider.sitemaps.writer import (
    MAX_BYTES_PER_SITEMAP,
    MAX_URLS_PER_SITEMAP,
    ShardInfo,
    ShardWriter,
    gzip_file,
    shard_name,
    write_index,
)
from sitemap_spider.sitemaps.xml import URLSET_CLOSE, URLSET_OPEN, check_entry, check_fields, check_loc

logger = logging.getLogger(__name__)

INDEX_NAME = "sitemap_index.xml"
_SORT_DIR = "sort-runs"


@dataclass(frozen=True)
class OutputOptions:
    """Where and how a sitemap set is written; checked on construction."""

    output_dir: Path
    base_url: str  # absolute http(s) URL ending with "/"; index <loc> = base_url + file name
    max_urls: int = MAX_URLS_PER_SITEMAP
    max_bytes: int = MAX_BYTES_PER_SITEMAP
    gzip: bool = False
    validate: bool = True  # validate every file against the XSDs before publishing
    sort_run_size: int = 100_000

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str) or not self.base_url.endswith("/"):
            raise ValueError(f"base_url must be an absolute URL ending with '/': {self.base_url!r}")
        try:
            check_loc(self.base_url + shard_name(MAX_URLS_PER_SITEMAP, gzip=True))
        except ValueError as exc:
            raise ValueError(f"base_url {self.base_url!r} cannot prefix sitemap URLs: {exc}") from exc
        if not 1 <= self.max_urls <= MAX_URLS_PER_SITEMAP:
            raise ValueError(f"max_urls must be 1-{MAX_URLS_PER_SITEMAP}, not {self.max_urls}")
        smallest = len(URLSET_OPEN) + len(URLSET_CLOSE) + 1
        if not smallest <= self.max_bytes <= MAX_BYTES_PER_SITEMAP:
            raise ValueError(f"max_bytes must be {smallest}-{MAX_BYTES_PER_SITEMAP}, not {self.max_bytes}")
        if self.sort_run_size < 1:
            raise ValueError(f"sort_run_size must be at least 1, not {self.sort_run_size}")


@dataclass(frozen=True)
class PublishResult:
    """What ``SitemapSetBuilder.publish`` put in place."""

    index_path: Path
    index_url: str
    files: int  # sitemap files listed by the index (the index itself not counted)
    urls: int
    duplicates: int  # entries dropped because their loc came again
    content_duplicates: int  # entries dropped because an earlier loc has the same content_digest


class SitemapSetBuilder:
    """Collect entries, then publish them as one complete sitemap set or nothing at all."""

    def __init__(self, options: OutputOptions) -> None:
        self.options = options
        self._storage = SitemapStorage(options.output_dir)
        self._staging = self._storage.staging_dir()
        try:
            sort_dir = self._staging / _SORT_DIR
            sort_dir.mkdir()
            self._sorter = ExternalSorter(sort_dir, run_size=options.sort_run_size)
        except BaseException:
            self._storage.discard(self._staging)
            raise
        self._done = False
        self._content_duplicates = 0
        self._digests = 0  # entries added with a content_digest

    @property
    def added(self) -> int:
        """Entries accepted so far, duplicates included."""
        return self._sorter.added

    def add(self, entry: SitemapEntry) -> None:
        """Store one entry; an InvalidEntryError propagates and nothing is stored."""
        if self._done:
            raise SitemapError("SitemapSetBuilder: add() after publish() or discard()")
        check_entry(entry)
        self._sorter.add(entry)
        if entry.content_digest is not None:
            self._digests += 1

    def add_fields(
        self,
        loc: str,
        lastmod: str | None = None,
        changefreq: str | None = None,
        priority: float | None = None,
        content_digest: str | None = None,
    ) -> None:
        """``add`` for an entry given by its fields: the same checks, no dataclass per entry."""
        if self._done:
            raise SitemapError("SitemapSetBuilder: add() after publish() or discard()")
        check_fields(loc, lastmod, changefreq, priority)
        self._sorter.add_line(encode_fields(loc, lastmod, changefreq, priority, content_digest))
        if content_digest is not None:
            self._digests += 1

    @property
    def sort_dir(self) -> Path:
        """Where ``add_sorted_run`` files must be made (inside the staging directory)."""
        return self._staging / _SORT_DIR

    def add_sorted_run(self, path: Path, entries: int, duplicates: int, digests: int) -> None:
        """Take a run file that another process made of checked entries.

        Its lines come from ``encode_fields`` of entries that passed ``check_fields``, sorted by
        ``sorting.sort_into_run`` in ``sort_dir``: this is how ``scrapy publish`` parses and
        checks big inputs on every core.
        """
        if self._done:
            raise SitemapError("SitemapSetBuilder: add() after publish() or discard()")
        if Path(path).parent != self.sort_dir:
            raise SitemapError(f"{path} is not in {self.sort_dir}")
        self._sorter.add_run(path, entries, duplicates)
        self._digests += digests

    def publish(self, on_content_duplicate: Callable[[SitemapEntry], None] | None = None) -> PublishResult:
        """Write, validate and move the set into place; on any error publish nothing.

        Of entries sharing a ``content_digest`` only the first in loc order is
        written; ``on_content_duplicate`` is told of each other one.
        """
        if self._done:
            raise SitemapError("SitemapSetBuilder: publish() after publish() or discard()")
        try:
            if self._sorter.added == 0:
                raise EmptySitemapError(
                    f"no sitemap entry to publish; {self.options.output_dir} left as it was"
                )
            shards = self._write_shards(on_content_duplicate)
            write_index(self._staging / INDEX_NAME, shards, self.options.base_url)
            self._sorter.close()
            if self.options.validate:
                self._validate(shards)
            self._storage.publish(self._staging, [shard.name for shard in shards], INDEX_NAME)
        except BaseException:
            self.discard()
            raise
        self._done = True
        result = PublishResult(
            index_path=self._storage.output_dir / INDEX_NAME,
            index_url=self.options.base_url + INDEX_NAME,
            files=len(shards),
            urls=sum(shard.urls for shard in shards),
            duplicates=self._sorter.duplicates,
            content_duplicates=self._content_duplicates,
        )
        logger.info(
            "Published %s: %d URLs in %d files (%d duplicates dropped)",
            result.index_url,
            result.urls,
            result.files,
            result.duplicates,
        )
        return result

    def _write_shards(self, on_content_duplicate: Callable[[SitemapEntry], None] | None) -> list[ShardInfo]:
        options = self.options
        finisher = _ShardFinisher(self._staging, gzip=options.gzip, validate=options.validate)
        writer = ShardWriter(
            self._staging,
            max_urls=options.max_urls,
            max_bytes=options.max_bytes,
            gzip=False,  # the finisher compresses each shard on its thread
            on_close=finisher.submit,
            durable=not options.gzip,  # a plain file that is compressed next needs no fsync
        )
        lines = self._sorter.iter_unique_lines()
        if self._digests:
            lines = self._without_content_duplicates(lines, on_content_duplicate)
        try:
            write = writer.write_fields
            for line in lines:
                loc, lastmod, changefreq, priority, _ = decode_fields(line)
                write(loc, lastmod, changefreq, priority)
            writer.close()
            return finisher.results()
        except BaseException:
            writer.abort()
            finisher.cancel()
            raise

    def _without_content_duplicates(
        self, lines: Iterator[str], on_content_duplicate: Callable[[SitemapEntry], None] | None
    ) -> Iterator[str]:
        """Drop every line whose digest an earlier loc has, in bounded memory.

        A set of all digests would grow with the site; instead the unique lines are kept in
        a file while ``digest<TAB>loc`` pairs are sorted on disk, which groups each digest's
        locs in loc order: all but the first of a group are dropped.
        """
        work_dir = self._staging / _SORT_DIR
        run_size = self.options.sort_run_size
        by_digest = LineSorter(work_dir, run_size, unique=False)
        fd, name = tempfile.mkstemp(prefix="unique-", suffix=".tsv", dir=work_dir)
        with open(fd, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as out:
            for line in lines:
                out.write(line + "\n")
                digest = line[line.rindex("\t") + 1 :]
                if digest != "-":  # "+digest" when present
                    loc = line[: line.index("\t")]
                    by_digest.add_line(f"{digest[1:]}\t{loc}")
        dropped = LineSorter(work_dir, run_size)
        previous = None
        for pair in by_digest.iter_unique_lines():
            digest, _, loc = pair.partition("\t")
            if digest == previous:
                dropped.add_line(loc)
            previous = digest
        by_digest.close()
        drops = dropped.iter_unique_lines()
        next_drop = next(drops, None)
        prefix = None if next_drop is None else next_drop + "\t"
        try:
            with open(name, encoding="utf-8", errors="surrogateescape", newline="\n") as unique:
                for raw in unique:
                    line = raw[:-1]
                    if prefix is not None and line.startswith(prefix):
                        self._content_duplicates += 1
                        if on_content_duplicate is not None:
                            on_content_duplicate(decode_entry(line))
                        next_drop = next(drops, None)
                        prefix = None if next_drop is None else next_drop + "\t"
                        continue
                    yield line
        finally:
            dropped.close()
            Path(name).unlink(missing_ok=True)

    def _validate(self, shards: list[ShardInfo]) -> None:
        # Shards were validated by the finisher as they were written; the index is left.
        if validate_file(self._staging / INDEX_NAME) != len(shards):
            raise SitemapValidationError(f"{INDEX_NAME} does not list every sitemap file")

    def discard(self) -> None:
        """Drop everything collected and publish nothing; idempotent."""
        if self._done:
            return
        self._done = True
        self._sorter.close()
        self._storage.discard(self._staging)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.discard()


class _ShardFinisher:
    """Compress (gzip) and validate each shard on a thread while the next one is written.

    zlib and lxml release the GIL while they work, so this runs beside the Python work of
    merging and formatting entries: publishing with gzip and validation takes about the
    time of the slower of the two instead of their sum.
    """

    def __init__(self, directory: Path, *, gzip: bool, validate: bool) -> None:
        self.directory = directory
        self.gzip = gzip
        self.validate = validate
        self._pool: ThreadPoolExecutor | None = None
        self._jobs: list[Future[ShardInfo]] = []
        self._checked = 0  # jobs known to have succeeded

    def submit(self, shard: ShardInfo) -> None:
        """Finish ``shard``, a complete plain file in ``directory``, in the background."""
        # A failure stops the writing as soon as it is known (jobs finish in order: one thread).
        while self._checked < len(self._jobs) and self._jobs[self._checked].done():
            self._jobs[self._checked].result()
            self._checked += 1
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sitemap-finisher")
        self._jobs.append(self._pool.submit(self._finish, shard))

    def _finish(self, shard: ShardInfo) -> ShardInfo:
        path = self.directory / shard.name
        if self.gzip:
            target = path.with_name(shard.name + ".gz")
            gzip_file(path, target)
            path.unlink()
            path, shard = target, replace(shard, name=target.name)
        if self.validate:
            # Beyond the XSD, the count read back must be the count written.
            found = validate_file(path)
            if found != shard.urls:
                raise SitemapValidationError(f"{shard.name}: {found} <url> read back, {shard.urls} written")
        return shard

    def results(self) -> list[ShardInfo]:
        """Wait for every shard; the finished shards in order, or the first failure."""
        try:
            return [job.result() for job in self._jobs]
        finally:
            self.cancel()

    def cancel(self) -> None:
        """Stop: drop the shards not started, wait for the one in progress; idempotent."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

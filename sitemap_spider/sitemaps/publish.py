"""Build and publish a whole sitemap set: shards plus ``sitemap_index.xml``.

Used by the crawl and by the ``scrapy publish`` command. Entries go through the external
sorter (bounded memory, order-independent output), the shard writer and, when asked, the XSD
validation, all inside a staging directory; only a complete, valid set is moved into place.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

from sitemap_spider.items import SitemapEntry
from sitemap_spider.sitemaps.errors import EmptySitemapError, SitemapError, SitemapValidationError
from sitemap_spider.sitemaps.sorting import ExternalSorter
from sitemap_spider.sitemaps.storage import SitemapStorage
from sitemap_spider.sitemaps.validate import validate_file
from sitemap_spider.sitemaps.writer import (
    MAX_BYTES_PER_SITEMAP,
    MAX_URLS_PER_SITEMAP,
    ShardInfo,
    ShardWriter,
    shard_name,
    write_index,
)
from sitemap_spider.sitemaps.xml import URLSET_CLOSE, URLSET_OPEN, check_entry, check_loc

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
        writer = ShardWriter(
            self._staging,
            max_urls=self.options.max_urls,
            max_bytes=self.options.max_bytes,
            gzip=self.options.gzip,
        )
        # Digests only: a set of short strings, never the entries themselves.
        seen_digests: set[str] = set()
        try:
            for entry in self._sorter.iter_unique():
                digest = entry.content_digest
                if digest is not None:
                    if digest in seen_digests:
                        self._content_duplicates += 1
                        if on_content_duplicate is not None:
                            on_content_duplicate(entry)
                        continue
                    seen_digests.add(digest)
                writer.write(entry)
        except BaseException:
            writer.abort()
            raise
        return writer.close()

    def _validate(self, shards: list[ShardInfo]) -> None:
        # Beyond the XSD, the counts read back must be the counts written.
        for shard in shards:
            found = validate_file(self._staging / shard.name)
            if found != shard.urls:
                raise SitemapValidationError(f"{shard.name}: {found} <url> read back, {shard.urls} written")
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

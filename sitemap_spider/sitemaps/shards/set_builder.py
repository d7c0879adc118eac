"""Build and publish a whole sitemap set: shards plus ``sitemap_index.xml``.

Used by the crawl and by the ``scrapy publish`` command. Entries go through the external
sorter (bounded memory, order-independent output), the publishing loop (shard_loop.py: the
shard writer and, when asked, the XSD validation), all inside a staging directory; only a
complete, valid set is moved into place.
"""

from __future__ import annotations

import logging
import shutil
import weakref
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Self

from sitemap_spider.sitemaps.changes.compare import ChangeFinder, SetChanges
from sitemap_spider.sitemaps.runs.dedupe import repeated_digests, repeated_digests_of_runs
from sitemap_spider.sitemaps.entry import RichEntry, SitemapEntry, SummarizedEntry
from sitemap_spider.sitemaps.runs.lines import digest_line, encode_fields
from sitemap_spider.sitemaps.errors import EmptySitemapError, ShrinkError, SitemapError, SitemapValidationError
from sitemap_spider.sitemaps.shards.files import write_document
from sitemap_spider.sitemaps.xml.hreflang import HreflangListener
from sitemap_spider.sitemaps.names import INDEX_NAME, LLMS_PAGES_NAME, LLMS_TXT_NAME, SORT_DIR, is_news_file
from sitemap_spider.sitemaps.shards.llms_txt import LlmsPages, LlmsTxtResult, write_llms_txt, written_here
from sitemap_spider.sitemaps.options import OutputOptions
from sitemap_spider.sitemaps.shards.bucket import Bucket
from sitemap_spider.sitemaps.shards.groups import OTHER_GROUP, group_of_file
from sitemap_spider.sitemaps.shards.index_dates import dated_files
from sitemap_spider.sitemaps.shards.shard_loop import ShardLoop
from sitemap_spider.sitemaps.shards.rich_set import RichSet
from sitemap_spider.sitemaps.runs.sorting import MAX_MERGE_FAN_IN, ExternalSorter, LineSorter
from sitemap_spider.sitemaps.shards.storage import SitemapStorage
from sitemap_spider.sitemaps.xml.validate import validate_file
from sitemap_spider.sitemaps.shards.writer import ShardInfo, write_index
from sitemap_spider.sitemaps.rules import check_entry, check_fields
from sitemap_spider.sitemaps.xml.elements import is_verbatim

logger = logging.getLogger(__name__)

_DIGESTS_RUN_SIZE = 25_000


@dataclass(frozen=True)
class PublishResult:
    """What ``SitemapSetBuilder.publish`` put in place."""

    index_path: Path
    index_url: str
    files: int  # sitemap files listed by the index (the index itself not counted)
    urls: int
    duplicates: int  # entries dropped because their loc came again
    content_duplicates: int  # entries dropped because an earlier loc has the same content_digest
    news_urls: int = 0  # articles in the news files (also counted in urls: they are listed in the shards too)
    news_too_old: int = 0  # articles left out of the news files: published more than two days ago
    changes: SetChanges | None = field(default=None, compare=False)  # since the last set; closed by the caller
    #: With SITEMAP_GROUPS: URLs per group, in the order of the rules, then "other" for the URLs of no group.
    group_urls: tuple[tuple[str, int], ...] = ()
    llms_txt: LlmsTxtResult | None = None  # SITEMAP_LLMS_TXT: what llms.txt lists
    odd_lastmods: tuple[tuple[str, int], ...] = ()  # lastmods before 1991 ("placeholder"), after now ("future")
    off_base: int = 0  # locs written that are not under index_url's folder (cross-submission)
    off_base_example: str | None = None  # the first of them, in loc order


class SitemapSetBuilder:
    """Collect entries, then publish them as one complete sitemap set or nothing at all."""

    def __init__(self, options: OutputOptions, on_hreflang: HreflangListener | None = None) -> None:
        """``on_hreflang`` is told of each alternate not written, and of those written unchecked."""
        self.options = options
        self._storage = SitemapStorage(options.output_dir)
        self._staging = self._storage.staging_dir()
        # A process that exits without publishing or discarding (a second Ctrl-C or SIGTERM stops
        # Scrapy's reactor at once) still removes its staging directory on the way out.
        weakref.finalize(self, shutil.rmtree, self._staging, ignore_errors=True)
        try:
            sort_dir = self._staging / SORT_DIR
            sort_dir.mkdir()
            self._sorter = ExternalSorter(sort_dir, run_size=options.sort_run_size)
            # "+digest" of every entry with a content digest (see runs/dedupe.py); a crawl adds them
            # one by one, and a smaller buffer than the entries' keeps its memory near what it
            # was without them.
            self._digest_lines = LineSorter(sort_dir, min(options.sort_run_size, _DIGESTS_RUN_SIZE), unique=False)
            self._rich = RichSet(sort_dir, options.sort_run_size, on_hreflang)
            self._llms = LlmsPages(self._staging / LLMS_PAGES_NAME, options.groups) if options.llms_txt else None
        except BaseException:
            self._storage.discard(self._staging)
            raise
        self._done = False
        self._digests = 0  # entries added with a content_digest
        # Whether every loc and lastmod goes into the XML as it is (xml.is_verbatim): looked at as
        # entries are added here, said by the runs of other processes.
        self._verbatim = True
        self._all_digests = True  # every one of them is in self._digest_lines

    @property
    def added(self) -> int:
        """Entries accepted so far, duplicates included."""
        return self._sorter.added

    def add(self, entry: SitemapEntry) -> None:
        """Store one entry; an InvalidEntryError propagates and nothing is stored."""
        if self._done:
            raise SitemapError("SitemapSetBuilder: add() after publish() or discard()")
        check_entry(entry)
        if isinstance(entry, RichEntry):
            self._sorter.add_line(self._rich.line_of(entry))
            if self._llms is not None and isinstance(entry, SummarizedEntry) and entry.page is not None:
                self._llms.add(entry.loc, entry.page)
        else:
            self._sorter.add(entry)
        if self._verbatim and not is_verbatim(entry.loc, entry.lastmod):
            self._verbatim = False
        if entry.content_digest is not None:
            self._digests += 1
            self._digest_lines.add_line(digest_line(entry.content_digest))

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
        if self._verbatim and not is_verbatim(loc, lastmod):
            self._verbatim = False
        if content_digest is not None:
            self._digests += 1
            self._digest_lines.add_line(digest_line(content_digest))

    def hreflang_problem(self, page: str, href: str, hreflang: str, reason: str) -> None:
        """Report an alternate another process found unusable, as those added here are."""
        self._rich.tell(page, href, hreflang, reason)

    @property
    def sort_dir(self) -> Path:
        """Where ``add_sorted_run`` files must be made (inside the staging directory)."""
        return self._staging / SORT_DIR

    def add_sorted_run(
        self,
        path: Path,
        entries: int,
        duplicates: int,
        digests: int,
        digest_run: Path | None = None,
        *,
        verbatim: bool = False,
        rich: bool = False,
        alternates_run: Path | None = None,
        alternates: int = 0,
    ) -> None:
        """Take a run file that another process made of checked entries.

        Its lines come from ``encode_fields`` of entries that passed ``check_fields``, sorted by
        ``runs.sort_into_run`` in ``sort_dir``: this is how ``scrapy publish`` parses and
        checks big inputs on every core. ``digest_run``, in ``sort_dir`` too, has the sorted
        ``dedupe.digest_line`` lines of the ``digests`` entries with a content digest; without
        it, pages with the same content are found by a slower second pass. ``verbatim``: every
        loc and lastmod of the run goes into the XML as it is (``xml.is_verbatim``). ``rich``:
        some line has extensions; ``alternates_run`` (in ``sort_dir``): the sorted
        ``hreflang.alternate_lines`` (``alternates`` of them) of its entries.
        """
        if self._done:
            raise SitemapError("SitemapSetBuilder: add() after publish() or discard()")
        for run in (path, digest_run, alternates_run):
            if run is not None and Path(run).parent != self.sort_dir:
                raise SitemapError(f"{run} is not in {self.sort_dir}")
        self._sorter.add_run(path, entries, duplicates)
        self._verbatim = self._verbatim and verbatim
        self._digests += digests
        if rich:
            self._rich.rich = True
        if alternates_run is not None:
            self._rich.add_alternates_run(alternates_run, alternates)
        if digest_run is not None:
            self._digest_lines.add_run(digest_run, digests, 0)
        elif digests:
            self._all_digests = False

    def publish(
        self,
        on_content_duplicate: Callable[[SitemapEntry], None] | None = None,
        *,
        workers: Executor | None = None,
        worker_count: int = 0,
    ) -> PublishResult:
        """Write, validate and move the set into place; on any error publish nothing.

        Of entries sharing a ``content_digest`` only the first in loc order is
        written; ``on_content_duplicate`` is told of each other one. ``workers`` (a pool of
        ``worker_count`` processes) compress and validate the shards; without it, a thread
        of this process does.
        """
        if self._done:
            raise SitemapError("SitemapSetBuilder: publish() after publish() or discard()")
        changes: SetChanges | None = None
        try:
            if self._sorter.added == 0:
                raise EmptySitemapError(
                    f"no sitemap entry to publish; {self.options.output_dir} left as it was"
                )
            rich = self._rich.output()
            bucket = None if self.options.bucket is None else Bucket(self.options.bucket)
            if bucket is not None:
                # The previous set is the one the bucket serves: the working copy is made it first.
                with self._storage.publishing_lock():
                    # llms.txt also when it is off: one this package wrote is then taken down.
                    bucket.pull(self._storage.output_dir, INDEX_NAME, [LLMS_TXT_NAME])
            finder = ChangeFinder(self._storage.output_dir, INDEX_NAME)
            llms = self._llms
            # A content duplicate is not listed: not in llms.txt either.
            dropped = on_content_duplicate if llms is None else llms.dropping(on_content_duplicate)
            loop = ShardLoop(self._staging, self.options, dropped, verbatim=self._verbatim, changes=finder, rich=rich)
            try:
                shards = loop.write_shards(self._sorter, self._shared_digests(workers), workers, worker_count)
                changes = finder.finish()
            except BaseException:
                finder.close()
                finder.changes.close()
                raise
            check_shrink(changes, self.options.max_shrink)
            dated = dated_files(shards, self._staging, self._storage.output_dir, INDEX_NAME)
            write_index(self._staging / INDEX_NAME, dated, self.options.base_url, stylesheet=self.options.stylesheet)
            published = self.options.published_files()
            for name, content in published:
                write_document(self._staging / name, content, gzip=False)
            names = [name for name, _ in published]
            llms_result = None
            if llms is not None:
                llms_result = write_llms_txt(llms, self._staging, self._storage.output_dir, self.options)
                names += [LLMS_TXT_NAME] if llms_result is not None else []
            self._sorter.close()
            self._digest_lines.close()
            self._rich.close()
            if llms is not None:
                llms.close()
            if self.options.validate:
                self._validate(shards)
            # An llms.txt of an earlier set, written here while SITEMAP_LLMS_TXT was on, would go on
            # listing that set's pages: it goes with it. A hand-written one stays.
            stale = [LLMS_TXT_NAME] if llms is None and written_here(
                self._storage.output_dir / LLMS_TXT_NAME, self.options.base_url + INDEX_NAME
            ) else []  # fmt: skip
            self._storage.publish(self._staging, [shard.name for shard in shards], INDEX_NAME, names, stale)
            if bucket is not None:
                bucket.push(self._storage.output_dir, [shard.name for shard in shards], names, INDEX_NAME, stale)
        except BaseException:
            if changes is not None:
                changes.close()
            self.discard()
            raise
        self._done = True
        news_urls = 0 if rich is None else rich.news_urls
        result = PublishResult(
            index_path=self._storage.output_dir / INDEX_NAME,
            index_url=self.options.base_url + INDEX_NAME,
            files=len(shards),
            urls=sum(shard.urls for shard in shards) - news_urls,
            duplicates=self._sorter.duplicates + loop.duplicates,
            content_duplicates=loop.content_duplicates,
            news_urls=news_urls,
            news_too_old=0 if rich is None else rich.news_too_old,
            changes=changes,
            group_urls=self._group_urls(shards),
            llms_txt=llms_result,
            odd_lastmods=tuple((oddity, n) for oddity, n in loop.lastmods.counts.items() if n),
            off_base=loop.scope.count,
            off_base_example=loop.scope.example,
        )
        logger.info(
            "Published %s: %d URLs in %d files (%d duplicates dropped)",
            result.index_url,
            result.urls,
            result.files,
            result.duplicates,
        )
        return result

    def _group_urls(self, shards: list[ShardInfo]) -> tuple[tuple[str, int], ...]:
        if not self.options.groups:
            return ()
        counts = dict.fromkeys([group.name for group in self.options.groups] + [OTHER_GROUP], 0)
        for shard in shards:
            if not is_news_file(shard.name):
                counts[group_of_file(shard.name) or OTHER_GROUP] += shard.urls
        return tuple(counts.items())

    def _shared_digests(self, workers: Executor | None) -> set[str] | None:
        """The ``+digest`` that come more than once (``dedupe.repeated_digests``): those of pages
        with the same content as another, and of pages listed twice; none without digests;
        None when there are too many to hold."""
        if not self._digests:
            return set()
        if not self._all_digests:
            return None
        if workers is None or len(self._digest_lines.runs) + 1 > MAX_MERGE_FAN_IN:
            return repeated_digests(self._digest_lines.iter_blocks())
        # The two halves of the digests at once: one in a worker process, one here.
        return repeated_digests_of_runs([str(run) for run in self._digest_lines.run_files()], workers)

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
        self._digest_lines.close()
        self._rich.close()
        if self._llms is not None:
            self._llms.close()
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


def check_shrink(changes: SetChanges, max_shrink: float) -> None:
    """Refuse a set that lists fewer than ``max_shrink`` of the previous set's URLs (0: any set)."""
    previous = changes.previous_urls
    if not max_shrink or not previous or changes.new_urls >= max_shrink * previous:
        return
    raise ShrinkError(
        f"the new set lists {changes.new_urls:,} URLs, fewer than {max_shrink:.0%} of the {previous:,} "
        f"the published set lists (SITEMAP_MAX_SHRINK={max_shrink:g}); if the site really shrank, "
        "publish it with -s SITEMAP_MAX_SHRINK=0"
    )

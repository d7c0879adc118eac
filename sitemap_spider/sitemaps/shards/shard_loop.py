"""The publishing loop: the sorted entries of a set into its shards, each loc and each content once.

SitemapSetBuilder (set_builder.py) collects the entries and puts the finished set in place; in
between, this reads the sorted run lines once, drops repeated locs and the pages whose content
an earlier loc has, formats the rest as ``<url>`` lines for the shard writer and hands each
closed shard to the finisher, which compresses and validates it in the background.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sitemap_spider.sitemaps.changes.compare import ChangeFinder
from sitemap_spider.sitemaps.runs.dedupe import (
    read_lines,
    read_unique_blocks,
    unique_lines_and_shared,
    without_content_duplicates,
)
from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.runs.lines import FirstOfEach, KeptBlock, decode_entry
from sitemap_spider.sitemaps.shards.finisher import ShardFinisher
from sitemap_spider.sitemaps.shards.groups import GroupedWriter
from sitemap_spider.sitemaps.names import NEWS_PREFIX, SHARD_PREFIX
from sitemap_spider.sitemaps.options import OutputOptions
from sitemap_spider.sitemaps.shards.rich_loop import MAX_NEWS_URLS, RichOutput
from sitemap_spider.sitemaps.runs.sorting import LineSorter
from sitemap_spider.sitemaps.rules import lastmod_oddity, parse_lastmod
from sitemap_spider.sitemaps.urls import normalize_url
from sitemap_spider.sitemaps.shards.writer import ShardInfo, ShardWriter
from sitemap_spider.sitemaps.xml.elements import url_lines


class LastmodTally:
    """Counts the lastmods written that are before the web or later than now (rules.lastmod_oddity).

    A list from a CMS may hold them (a zeroed date, 1970 or 0001; a clock set ahead): they are
    published as given, and said. The common block has none, which two C-level passes (the
    earliest and latest text) show; only a block that may have some is looked at, each of its
    texts once (a zeroed list repeats one), and only one near a limit is parsed.
    """

    # Past these texts a lastmod may be odd: a day of slack each side for the zones.
    _EARLY = "1991-01-02"
    # Before this text a lastmod is before 1991 in any zone: its day has ended by 1990-12-31T14:00Z.
    _SURELY_EARLY = "1990-12-31"

    def __init__(self, now: datetime) -> None:
        self.now = now
        self._late = (now - timedelta(days=1)).strftime("%Y-%m-%d")
        # After this text a lastmod is later than now in any zone: its day begins 10 hours from now at least.
        self._surely_late = (now + timedelta(days=2)).strftime("%Y-%m-%d")
        self.counts = {"placeholder": 0, "future": 0}

    def blocks(self, blocks: Iterable[KeptBlock]) -> Iterator[KeptBlock]:
        early, late = self._EARLY, self._late
        for block in blocks:
            present = list(filter(None, block[1]))
            if present and (min(present) < early or max(present) > late):
                candidates = Counter(text for text in present if text < early or text > late)
                for lastmod, count in candidates.items():
                    oddity = self._oddity(lastmod)
                    if oddity is not None:
                        self.counts[oddity] += count
            yield block

    def _oddity(self, lastmod: str) -> str | None:
        if lastmod < self._SURELY_EARLY:
            return "placeholder"
        if lastmod > self._surely_late:
            return "future"
        return lastmod_oddity(lastmod, parse_lastmod(lastmod), self.now)


class ScopeTally:
    """Counts the locs written outside ``base_url`` (another scheme, host or port, or outside its folder).

    sitemaps.org has a sitemap list URLs under its own folder only, unless each other host's
    robots.txt names it (cross-submission): publish cannot know, so such locs are published as
    given, and said (a CMS export still holding http:// URLs after a move to https). The
    blocks come sorted by loc: when a block's first and last loc start with ``base_url``, every
    loc between them does; only another block is looked at, and a loc spelled otherwise than its
    normal form (an upper-case host, a default port) is compared in that form.
    """

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self._normal_base = normalize_url(base_url) or base_url
        self.count = 0
        self.example: str | None = None  # the first of them in loc order

    def blocks(self, blocks: Iterable[KeptBlock]) -> Iterator[KeptBlock]:
        base = self.base_url
        for block in blocks:
            locs = block[0]
            if locs and not (locs[0].startswith(base) and locs[-1].startswith(base)):
                outside = [loc for loc in locs if not loc.startswith(base) and not self._in_scope(loc)]
                self.count += len(outside)
                if outside and self.example is None:
                    self.example = outside[0]
            yield block

    def _in_scope(self, loc: str) -> bool:
        normal = normalize_url(loc)
        return normal is not None and normal.startswith(self._normal_base)


def off_base_note(count: int, base_url: str, example: str | None) -> str:
    """What ``scrapy publish`` and a crawl say of the locs ScopeTally counted."""
    such_as = f" (such as {example})" if example else ""
    return (
        f"{count:,} URL(s) not under {base_url} published as given{such_as}: search engines take them "
        "only if their own host's robots.txt names this sitemap (scrapy validate --base-url checks it)"
    )


class ShardLoop:
    """Write the sorted lines of a set into finished shards, counting the entries it drops."""

    def __init__(
        self,
        staging: Path,
        options: OutputOptions,
        on_content_duplicate: Callable[[SitemapEntry], None] | None,
        *,
        verbatim: bool = False,
        changes: ChangeFinder | None = None,
        rich: RichOutput | None = None,
    ) -> None:
        """``on_content_duplicate`` is told of each entry dropped for its content; ``verbatim``:
        every loc and lastmod goes into the XML as it is (``xml.is_verbatim``); ``changes`` is
        given every block of lines written, to compare them with the previous set; ``rich``:
        some entries have extensions (rich_loop.py), None: none has."""
        self._staging = staging
        self._changes = changes
        self._verbatim = verbatim
        self._rich = rich
        self.options = options
        self._on_content_duplicate = on_content_duplicate
        self.duplicates = 0  # repeated locs dropped while writing
        self.content_duplicates = 0  # entries dropped because an earlier loc has their content_digest
        self.lastmods = LastmodTally(datetime.now(UTC))
        self.scope = ScopeTally(options.base_url)

    def write_shards(
        self, sorter: LineSorter, shared: set[str] | None, workers: Executor | None, worker_count: int
    ) -> list[ShardInfo]:
        """Write every line of ``sorter`` but repeated locs and, of the locs whose digest is in
        ``shared`` (``dedupe.repeated_digests``), all but the first; ``shared`` is None when
        there were too many of them to hold, and the unique lines are read twice to find them.
        ``workers`` (a pool of ``worker_count`` processes) compress and validate the shards;
        without it, a thread of this process does."""
        options = self.options
        finisher = ShardFinisher(
            self._staging,
            gzip=options.gzip,
            validate=options.validate,
            workers=workers,
            # Every worker busy with a shard while the next one is assembled here.
            in_flight=worker_count + 1 if workers is not None else 2,
        )

        def shard_writer(prefix: str = SHARD_PREFIX) -> ShardWriter:
            return ShardWriter(
                self._staging,
                max_urls=options.max_urls,
                max_bytes=options.max_bytes,
                gzip=False,  # the finisher compresses each shard, in the background
                on_close=finisher.submit,
                durable=not options.gzip,  # a plain file that is compressed next needs no fsync
                prefix=prefix,
                stylesheet=options.stylesheet,
            )

        writer: ShardWriter | GroupedWriter = (
            GroupedWriter(options.groups, shard_writer) if options.groups else shard_writer()
        )
        unique: list[Path] = []
        try:
            if shared is not None:
                blocks: Iterable[list[str]] = sorter.iter_blocks()
            else:
                # More repeated digests than a set may hold, most often because many pages are
                # listed twice: the digests of the unique lines, sorted again, give the shared ones.
                unique, repeats, shared = unique_lines_and_shared(sorter, options.sort_run_size, workers)
                self.duplicates += repeats
                if shared is not None:
                    blocks = read_unique_blocks(unique)
                else:  # too many pages share content for a set: a second pass
                    lines = without_content_duplicates(
                        read_lines(unique), sorter.work_dir, options.sort_run_size, self._content_duplicate
                    )
                    blocks = iter(lambda: list(itertools.islice(lines, 4096)), [])
                    shared = set()
            # Each digest once, with whether a line of it was written yet: a set of the digests
            # seen would hold them all a second time.
            walk = FirstOfEach(dict.fromkeys(shared, False), self._content_duplicate)
            shared = None
            kept = self.scope.blocks(self.lastmods.blocks(walk.blocks(blocks)))
            if self._rich is None:
                self._write_blocks(writer, kept)
            else:
                news = ShardWriter(
                    self._staging,
                    max_urls=min(MAX_NEWS_URLS, options.max_urls),
                    max_bytes=options.max_bytes,
                    gzip=False,
                    on_close=finisher.submit,
                    durable=not options.gzip,
                    prefix=NEWS_PREFIX,
                    stylesheet=options.stylesheet,
                )
                self._rich.write_blocks(kept, writer, news, self._compare)
            self.duplicates += walk.duplicates
            writer.close()
            # The news files after the shards, as the index lists them.
            return sorted(finisher.results(), key=lambda shard: shard.name)
        except BaseException:
            writer.abort()
            finisher.cancel()
            raise
        finally:
            for path in unique:
                path.unlink(missing_ok=True)

    def _write_blocks(self, writer: ShardWriter | GroupedWriter, blocks: Iterable[KeptBlock]) -> None:
        """Write the ``<url>`` lines of the kept lines, and compare them with the previous set."""
        verbatim = self._verbatim
        for locs, lastmods, extras in blocks:
            lines = url_lines(locs, lastmods, extras, verbatim=verbatim)
            writer.write_lines(lines, lastmods)
            self._compare(lines)

    def _compare(self, lines: list[str]) -> None:
        """Hand a block of written ``<url>`` lines (loc, lastmod, changefreq, priority: no
        extensions) to the comparison with the previous set, if there is one."""
        if self._changes is not None:
            self._changes.compare(lines)

    def _content_duplicate(self, line: str) -> None:
        self.content_duplicates += 1
        if self._on_content_duplicate is not None:
            self._on_content_duplicate(decode_entry(line))

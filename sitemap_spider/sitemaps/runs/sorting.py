"""External merge sort of sitemap entries by loc, with de-duplication.

A crawl yields URLs in no useful order and may yield one URL several times; sorting on disk
keeps memory bounded by ``run_size`` whatever the size of the site, and makes the output
independent of the order in which pages were crawled.

Entries are sorted as text lines (lines.py), compared whole: of the entries with the same
loc the one kept (the latest lastmod: latest.py) does not depend on insertion order.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Self

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.runs.lines import decode_entry, encode_entry
from sitemap_spider.sitemaps.errors import SitemapError
from sitemap_spider.sitemaps.runs.latest import later
from sitemap_spider.sitemaps.runs.run_files import (
    list_blocks,
    merge_blocks,
    read_blocks,
    sort_into_run,
    write_run,
)

logger = logging.getLogger(__name__)

# More open run files than this are first merged into fewer, bigger runs, to stay well
# below the usual limit of 1,024 open files per process.
MAX_MERGE_FAN_IN = 128
# Characters of run files held in memory while merging, shared by all runs being merged (the
# lines of a block, as str objects, take about twice that); bigger blocks save little time.
_MERGE_MEMORY = 2 * 1024 * 1024
_MIN_BLOCK_CHARS = 16 * 1024
# Sources merged by one merge_blocks; more are merged in groups first.
_MERGE_GROUP = 12
# Characters buffered before a run is spilled, whatever run_size says: 100,000 entries of
# 2,000-character URLs would otherwise hold some 200 MB.
MAX_BUFFER_CHARS = 24 * 1024 * 1024


def merge_block_chars(sources: int) -> int:
    """Characters to read at a time from each of ``sources`` sorted files merged at once: all
    their blocks together stay within _MERGE_MEMORY characters."""
    return max(_MIN_BLOCK_CHARS, _MERGE_MEMORY // max(1, sources))


class LineSorter:
    """Collect text lines, then yield them sorted, each key once (the key ends at the first tab).

    Among lines with the same key one is kept: of run lines of entries, the one with the latest
    lastmod (latest.py); ``unique=False``: every line is kept. Lines must not contain a newline;
    memory holds at most ``run_size`` of them.
    """

    def __init__(self, work_dir: Path, run_size: int = 100_000, *, unique: bool = True) -> None:
        if run_size < 1:
            raise ValueError(f"run_size must be at least 1, not {run_size}")
        self.work_dir = Path(work_dir)
        self.run_size = run_size
        self.unique = unique
        self.added = 0
        self.duplicates = 0
        self._buffer: list[str] = []
        self._chars = 0  # characters in _buffer
        self._runs: list[Path] = []
        self._finished = False

    def add_line(self, line: str) -> None:
        """Add one line; spills a sorted run to disk whenever ``run_size`` lines, or
        MAX_BUFFER_CHARS characters, are buffered."""
        if self._finished:
            raise SitemapError(f"{type(self).__name__}: add() after iteration or close()")
        buffer = self._buffer
        buffer.append(line)
        self.added += 1
        self._chars += len(line)
        if len(buffer) >= self.run_size or self._chars >= MAX_BUFFER_CHARS:
            self._spill()

    def add_lines(self, lines: list[str]) -> None:
        """``add_line`` for a list of lines at once; the buffer may go over ``run_size`` by
        fewer lines than the list has before it is spilled."""
        if self._finished:
            raise SitemapError(f"{type(self).__name__}: add() after iteration or close()")
        self._buffer += lines
        self.added += len(lines)
        self._chars += sum(map(len, lines))
        if len(self._buffer) >= self.run_size or self._chars >= MAX_BUFFER_CHARS:
            self._spill()

    def add_run(self, path: Path, lines: int, duplicates: int) -> None:
        """Take over a run file made by ``sort_into_run`` (in another process, say)."""
        if self._finished:
            raise SitemapError(f"{type(self).__name__}: add() after iteration or close()")
        self._runs.append(Path(path))
        self.added += lines
        self.duplicates += duplicates

    def _spill(self) -> None:
        path, duplicates = sort_into_run(self._buffer, self.work_dir, unique=self.unique)
        self._runs.append(path)
        self.duplicates += duplicates
        self._buffer = []
        self._chars = 0

    def _write_run(self, lines: Iterable[str]) -> Path:
        return write_run(lines, self.work_dir)

    def _unique(self, sorted_lines: Iterable[str]) -> Iterator[str]:
        if not self.unique:
            yield from sorted_lines
            return
        previous_loc: str | None = None
        kept = ""  # the line of previous_loc kept so far, yielded once its loc ends
        duplicates = 0
        try:
            for line in sorted_lines:
                tab = line.find("\t")
                loc = line if tab < 0 else line[:tab]
                if loc == previous_loc:
                    duplicates += 1
                    if later(line, kept):
                        kept = line
                    continue
                if previous_loc is not None:
                    yield kept
                previous_loc = loc
                kept = line
            if previous_loc is not None:
                yield kept
        finally:
            self.duplicates += duplicates

    def _merged(self, runs: list[Path], buffer: list[str]) -> Iterator[str]:
        return itertools.chain.from_iterable(self._merged_blocks(runs, buffer))

    def _merged_blocks(self, runs: list[Path], buffer: list[str]) -> Iterator[list[str]]:
        size = merge_block_chars(len(runs) + 1)
        sources = [read_blocks(path, size) for path in runs]
        sources.append(list_blocks(buffer, max(1, size // 64)))
        # A round of merge_blocks looks at every source and emits about one block: with many
        # sources (small blocks) that is many rounds of many steps. Merged in groups first,
        # then the groups, no round looks at more than a few.
        while len(sources) > _MERGE_GROUP:
            sources = [merge_blocks(sources[at : at + _MERGE_GROUP]) for at in range(0, len(sources), _MERGE_GROUP)]
        return merge_blocks(sources)

    def _reduce_runs(self) -> None:
        # Merge the oldest runs into one until few enough files are left to open at once.
        while len(self._runs) > MAX_MERGE_FAN_IN:
            batch, self._runs = self._runs[:MAX_MERGE_FAN_IN], self._runs[MAX_MERGE_FAN_IN:]
            self._runs.append(self._write_run(self._unique(self._merged(batch, []))))
            for path in batch:
                path.unlink()

    def _begin_final_pass(self) -> None:
        if self._finished:
            raise SitemapError(f"{type(self).__name__}: iter_unique() can be called only once")
        self._finished = True
        self._buffer.sort()
        self._reduce_runs()

    def iter_unique_lines(self) -> Iterator[str]:
        """Yield every key once, sorted; ``duplicates`` is final once this is exhausted.

        Can be called once; no line can be added afterwards.
        """
        self._begin_final_pass()
        if not self._runs:
            yield from self._unique(self._buffer)
        else:
            yield from self._unique(self._merged(self._runs, self._buffer))
        self._buffer = []

    def iter_blocks(self) -> Iterator[list[str]]:
        """Yield every line, sorted, a list at a time, without dropping repeated keys.

        For callers that look at each line anyway (the publishing loop): the lines of a key
        are adjacent, and keeping the one ``iter_unique_lines`` keeps (latest.py) and dropping
        the others (and counting them) is left to the caller, which saves a pass. Can be called once, as
        ``iter_unique_lines``, instead of it.
        """
        self._begin_final_pass()
        if not self._runs:
            yield from list_blocks(self._buffer, _MIN_BLOCK_CHARS // 16)
        else:
            yield from self._merged_blocks(self._runs, self._buffer)
        self._buffer = []

    @property
    def runs(self) -> list[Path]:
        """The run files written so far."""
        return list(self._runs)

    def run_files(self) -> list[Path]:
        """The sorted run files of every line added (what is buffered is written as one more),
        for a reader that merges them elsewhere; no line can be added afterwards."""
        if self._finished:
            raise SitemapError(f"{type(self).__name__}: run_files() after iteration or close()")
        self._finished = True
        if self._buffer:
            self._spill()
        return list(self._runs)

    def close(self) -> None:
        """Remove the run files; idempotent."""
        self._finished = True
        self._buffer = []
        for path in self._runs:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        self._runs = []

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class ExternalSorter(LineSorter):
    """Collect entries, then yield them sorted by loc, each loc once."""

    def add(self, entry: SitemapEntry) -> None:
        """Add one entry; spills a sorted run to disk whenever ``run_size`` are buffered."""
        self.add_line(encode_entry(entry))

    def iter_unique(self) -> Iterator[SitemapEntry]:
        """Yield every loc once, sorted; ``duplicates`` is final once this is exhausted.

        Can be called once; no entry can be added afterwards.
        """
        return (decode_entry(line) for line in self.iter_unique_lines())

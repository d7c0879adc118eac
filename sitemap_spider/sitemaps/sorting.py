"""External merge sort of sitemap entries by loc, with de-duplication.

A crawl yields URLs in no useful order and may yield one URL several times; sorting on disk
keeps memory bounded by ``run_size`` whatever the size of the site, and makes the output
independent of the order in which pages were crawled.

Each entry is kept as one text line ``loc<TAB>lastmod<TAB>changefreq<TAB>priority<TAB>digest`` where an
optional field is ``-`` when absent and ``+value`` when present, so ``None`` and any string
stay distinct. Lines are compared whole: among entries with the same loc the kept one is the
smallest line, which does not depend on insertion order (an entry with a lastmod sorts before
one without, because ``+`` < ``-``).
"""

from __future__ import annotations

import heapq
import logging
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Self

from sitemap_spider.items import SitemapEntry
from sitemap_spider.sitemaps.errors import InvalidEntryError, SitemapError

logger = logging.getLogger(__name__)

# More open run files than this are first merged into fewer, bigger runs, to stay well
# below the usual limit of 1,024 open files per process.
MAX_MERGE_FAN_IN = 128
_ABSENT = "-"
_PRESENT = "+"


def encode_entry(entry: SitemapEntry) -> str:
    """Return the one-line form of ``entry`` (without the newline)."""
    fields = (
        entry.lastmod,
        entry.changefreq,
        None if entry.priority is None else repr(float(entry.priority)),
        entry.content_digest,
    )
    encoded = (_ABSENT if value is None else _PRESENT + value for value in fields)
    line = "\t".join((entry.loc, *encoded))
    # One check on the joined line is much cheaper than one per field, per entry.
    if line.count("\t") != 4 or "\n" in line:
        raise InvalidEntryError(f"an entry field contains a tab or newline: {entry!r}")
    return line


def decode_entry(line: str) -> SitemapEntry:
    """Return the entry of a line made by ``encode_entry``."""
    loc, lastmod, changefreq, priority, digest = line.split("\t")
    return SitemapEntry(
        loc=loc,
        lastmod=None if lastmod == _ABSENT else lastmod[1:],
        changefreq=None if changefreq == _ABSENT else changefreq[1:],
        priority=None if priority == _ABSENT else float(priority[1:]),
        content_digest=None if digest == _ABSENT else digest[1:],
    )


def _loc_of(line: str) -> str:
    return line[: line.index("\t")]


class ExternalSorter:
    """Collect entries, then yield them sorted by loc, each loc once."""

    def __init__(self, work_dir: Path, run_size: int = 100_000) -> None:
        if run_size < 1:
            raise ValueError(f"run_size must be at least 1, not {run_size}")
        self.work_dir = Path(work_dir)
        self.run_size = run_size
        self.added = 0
        self.duplicates = 0
        self._buffer: list[str] = []
        self._runs: list[Path] = []
        self._finished = False

    def add(self, entry: SitemapEntry) -> None:
        """Add one entry; spills a sorted run to disk whenever ``run_size`` are buffered."""
        if self._finished:
            raise SitemapError("ExternalSorter: add() after iter_unique() or close()")
        self._buffer.append(encode_entry(entry))
        self.added += 1
        if len(self._buffer) >= self.run_size:
            self._spill()

    def _spill(self) -> None:
        self._buffer.sort()
        self._runs.append(self._write_run(self._unique(self._buffer)))
        self._buffer = []

    def _write_run(self, lines: Iterable[str]) -> Path:
        fd, name = tempfile.mkstemp(prefix="sort-run-", suffix=".tsv", dir=self.work_dir)
        # surrogateescape: a run file must hold whatever str it is given, checked or not.
        with open(fd, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as out:
            for line in lines:
                out.write(line)
                out.write("\n")
        logger.debug("Wrote sort run %s", name)
        return Path(name)

    def _unique(self, sorted_lines: Iterable[str]) -> Iterator[str]:
        previous_loc: str | None = None
        for line in sorted_lines:
            loc = _loc_of(line)
            if loc == previous_loc:
                self.duplicates += 1
                continue
            previous_loc = loc
            yield line

    @staticmethod
    def _read_run(path: Path) -> Iterator[str]:
        with open(path, encoding="utf-8", errors="surrogateescape", newline="\n") as lines:
            for line in lines:
                yield line[:-1]

    def _reduce_runs(self) -> None:
        # Merge the oldest runs into one until few enough files are left to open at once.
        while len(self._runs) > MAX_MERGE_FAN_IN:
            batch, self._runs = self._runs[:MAX_MERGE_FAN_IN], self._runs[MAX_MERGE_FAN_IN:]
            merged = heapq.merge(*(self._read_run(path) for path in batch))
            self._runs.append(self._write_run(self._unique(merged)))
            for path in batch:
                path.unlink()

    def iter_unique(self) -> Iterator[SitemapEntry]:
        """Yield every loc once, sorted; ``duplicates`` is final once this is exhausted.

        Can be called once; no entry can be added afterwards.
        """
        if self._finished:
            raise SitemapError("ExternalSorter: iter_unique() can be called only once")
        self._finished = True
        self._buffer.sort()
        self._reduce_runs()
        sources = [self._read_run(path) for path in self._runs]
        sources.append(iter(self._buffer))
        for line in self._unique(heapq.merge(*sources)):
            yield decode_entry(line)
        self._buffer = []

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

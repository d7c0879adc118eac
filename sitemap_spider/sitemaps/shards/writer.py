"""Shard writer: streams ``<url>`` lines into numbered sitemap files that respect the limits.

Files are named ``sitemap-00001.xml`` (``.xml.gz``), ... and are closed before an entry would
push them past ``max_urls`` or ``max_bytes`` (uncompressed size of the whole file).
"""

from __future__ import annotations

import bisect
import itertools
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.errors import (
    EmptySitemapError,
    InvalidEntryError,
    SitemapError,
    TooManyShardsError,
)
from sitemap_spider.sitemaps.xml.extensions import namespace_declaration, urlset_open
from sitemap_spider.sitemaps.shards.files import OutputFile
from sitemap_spider.sitemaps.names import SHARD_PREFIX, shard_name
from sitemap_spider.sitemaps.limits import (
    MAX_BYTES_PER_SITEMAP,
    MAX_SITEMAPS_PER_INDEX,
    MAX_URLS_PER_SITEMAP,
    bytes_left,
    can_fit,
)
from sitemap_spider.sitemaps.rules import check_loc, parse_lastmod
from sitemap_spider.sitemaps.xml.elements import (
    SITEMAPINDEX_CLOSE,
    SITEMAPINDEX_OPEN,
    URLSET_CLOSE,
    URLSET_OPEN,
    loc_in,
    sitemap_element,
    url_line,
    with_stylesheet,
)

logger = logging.getLogger(__name__)



@dataclass(frozen=True)
class ShardInfo:
    """One written sitemap file; ``lastmod`` is the newest of its entries (original string)."""

    name: str
    urls: int
    bytes: int
    lastmod: str | None


class ShardWriter:
    """Write entries, already checked and sorted, into as many shards as the limits need."""

    def __init__(
        self,
        directory: Path,
        *,
        max_urls: int,
        max_bytes: int,
        gzip: bool,
        on_close: Callable[[ShardInfo], None] | None = None,
        durable: bool = True,
        prefix: str = SHARD_PREFIX,
        stylesheet: bool = False,
    ) -> None:
        """``on_close`` is told of each shard as soon as it is complete on disk, so that it can be
        compressed or validated while the next one is written; ``durable=False`` skips the
        fsync of files that are only an intermediate step; ``prefix`` names the files;
        ``stylesheet`` gives every file the line that names the set's stylesheet (SITEMAP_XSL)."""
        if not 1 <= max_urls <= MAX_URLS_PER_SITEMAP:
            raise ValueError(f"max_urls must be 1-{MAX_URLS_PER_SITEMAP}, not {max_urls}")
        self._head = with_stylesheet(URLSET_OPEN, stylesheet)
        self._stylesheet = stylesheet
        smallest = len(self._head) + len(URLSET_CLOSE)
        if not smallest < max_bytes <= MAX_BYTES_PER_SITEMAP:
            raise ValueError(f"max_bytes must be {smallest + 1}-{MAX_BYTES_PER_SITEMAP}, not {max_bytes}")
        self.directory = Path(directory)
        self.max_urls = max_urls
        self.max_bytes = max_bytes
        self.gzip = gzip
        self._on_close = on_close
        self._durable = durable
        self._shards: list[ShardInfo] = []
        self._file: OutputFile | None = None
        self._lastmods: list[str] = []  # the open shard's lastmods, "" where none
        self._urls = 0
        self._bytes = 0
        self._closed = False
        self.prefix = prefix
        # Extension prefixes the open shard uses (write_rich): its head declares them at close.
        self._namespaces: set[str] = set()

    def write(self, entry: SitemapEntry) -> None:
        """Append one ``<url>``, first closing the current shard if it would overflow."""
        self.write_fields(entry.loc, entry.lastmod, entry.changefreq, entry.priority)

    def write_fields(self, loc: str, lastmod: str | None, changefreq: str | None, priority: float | None) -> None:
        """``write`` for an entry given by its (checked) fields."""
        if lastmod is not None:
            parse_lastmod(lastmod)  # raises on a bad value, before anything is written
        self.write_lines([url_line(loc, lastmod, changefreq, priority)], [lastmod or ""])

    def write_lines(self, lines: list[str], lastmods: list[str]) -> None:
        """Append ``<url>`` lines (``xml.url_line`` of checked entries: ASCII) in order, closing
        shards as the limits require; ``lastmods[i]`` is the lastmod of ``lines[i]`` as the
        entry gave it, or "".

        The same shards as ``write`` one line at a time, with a few steps per list instead of
        per line: the publishing loop hands over thousands of lines at once.
        """
        if self._closed:
            raise SitemapError("ShardWriter: write() after close()")
        sizes = list(map(len, lines))
        count = len(lines)
        start = 0
        closing = len(URLSET_CLOSE)
        while start < count:
            if self._file is None:
                if not can_fit(len(self._head), 0, sizes[start], closing, max_bytes=self.max_bytes):
                    raise InvalidEntryError(
                        f"entry needs {sizes[start]} bytes, more than a sitemap of at most "
                        f"{self.max_bytes} bytes can hold: {loc_in(lines[start])[:100]!r}"
                    )
                self._open_shard()
            end = min(count, start + self.max_urls - self._urls)
            room = bytes_left(self._bytes, closing, self.max_bytes)
            size = sum(itertools.islice(sizes, start, end))
            if size > room:  # the shard fills up by bytes within these lines
                totals = list(itertools.accumulate(itertools.islice(sizes, start, end)))
                end = start + bisect.bisect_right(totals, room)
                size = totals[end - start - 1] if end > start else 0
            if end > start:
                whole = start == 0 and end == count
                self._append(lines if whole else lines[start:end], lastmods if whole else lastmods[start:end], size)
                start = end
            if start < count:  # full: the next line goes into a new shard
                self._close_shard()

    def write_rich(self, line: str, lastmod: str, prefixes: tuple[str, ...]) -> None:
        """Append one ``<url>`` line that may use extension namespaces (``prefixes``): the shard's
        head declares those its lines use, and the limits count the declarations too."""
        if self._closed:
            raise SitemapError("ShardWriter: write() after close()")
        if self.gzip:
            raise SitemapError("ShardWriter: extension namespaces need a plain shard (compress it afterwards)")
        closing = len(URLSET_CLOSE)
        if self._file is not None:
            extra = sum(len(namespace_declaration(p)) for p in prefixes if p not in self._namespaces)
            more = extra + len(line)
            if not can_fit(self._bytes, self._urls, more, closing, max_bytes=self.max_bytes, max_urls=self.max_urls):
                self._close_shard()
        if self._file is None:
            extra = sum(len(namespace_declaration(p)) for p in set(prefixes))
            if not can_fit(len(self._head), 0, extra + len(line), closing, max_bytes=self.max_bytes):
                raise InvalidEntryError(
                    f"entry needs {len(line) + extra} bytes, more than a sitemap of at most "
                    f"{self.max_bytes} bytes can hold: {loc_in(line)[:100]!r}"
                )
            self._open_shard()
        self._append([line], [lastmod], len(line))
        self._bytes += extra
        self._namespaces.update(prefixes)

    def _append(self, lines: list[str], lastmods: list[str], size: int) -> None:
        assert self._file is not None
        data = "".join(lines).encode()
        if len(data) != size:  # the limits count characters: they must be bytes
            raise SitemapError("ShardWriter: a <url> line is not ASCII; its fields were not checked")
        self._file.stream.write(data)
        self._urls += len(lines)
        self._bytes += size
        self._lastmods += lastmods

    def _open_shard(self) -> None:
        number = len(self._shards) + 1
        if number > MAX_SITEMAPS_PER_INDEX:
            raise TooManyShardsError(
                f"more than {MAX_SITEMAPS_PER_INDEX} sitemap files would be needed "
                f"({self.max_urls} URLs / {self.max_bytes} bytes each)"
            )
        path = self.directory / shard_name(number, gzip=self.gzip, prefix=self.prefix)
        self._file = OutputFile(path, compress=self.gzip, durable=self._durable)
        self._file.stream.write(self._head)
        self._urls = 0
        self._bytes = len(self._head)
        self._lastmods = []
        self._namespaces = set()

    def _close_shard(self) -> None:
        assert self._file is not None
        self._file.stream.write(URLSET_CLOSE)
        self._file.close()
        self._file = None
        name = shard_name(len(self._shards) + 1, gzip=self.gzip, prefix=self.prefix)
        if self._namespaces:
            _declare(self.directory / name, self._namespaces, len(self._head), self._stylesheet, durable=self._durable)
        info = ShardInfo(
            name=name,
            urls=self._urls,
            bytes=self._bytes + len(URLSET_CLOSE),
            lastmod=newest_lastmod(self._lastmods),
        )
        self._lastmods = []
        self._shards.append(info)
        logger.debug("Closed %s: %d URLs, %d bytes", info.name, info.urls, info.bytes)
        if self._on_close is not None:
            self._on_close(info)

    def close(self) -> list[ShardInfo]:
        """Finish the last shard and return all shards in order (empty if nothing written)."""
        if not self._closed:
            self._closed = True
            if self._file is not None:
                self._close_shard()
        return list(self._shards)

    def abort(self) -> None:
        """Release the open file after a failure; the shards are not usable."""
        self._closed = True
        if self._file is not None:
            self._file.abort()
            self._file = None


def newest_lastmod(lastmods: list[str]) -> str | None:
    """The lastmod naming the newest instant ("" is none), as given; the first of equal instants.

    Compared as instants: "2024-05-02T01:00:00+02:00" is older than "2024-05-01T23:30:00Z".
    """
    present = list(filter(None, lastmods))
    if not present:
        return None
    # The common case in a few C-level steps: all of one fixed-width form whose text sorts
    # as its instant (dates; date-times with seconds, all in Z or all in +00:00).
    shortest = min(map(len, present))
    if shortest == max(map(len, present)) and (
        shortest == 10
        or (shortest == 20 and "".join(present).count("Z") == len(present))
        or (shortest == 25 and "".join(present).count("+00:00") == len(present))
    ):
        return max(present)
    newest: tuple[datetime, str] | None = None
    for lastmod in present:
        if newest is not None and lastmod == newest[1]:
            continue
        instant = parse_lastmod(lastmod)
        if newest is None or instant > newest[0]:
            newest = (instant, lastmod)
    assert newest is not None
    return newest[1]


def _declare(path: Path, prefixes: set[str], written: int, stylesheet: bool, *, durable: bool) -> None:
    """Give the plain shard ``path`` a head that declares the extension namespaces it uses.

    Which ones is known only once the shard is full; the shard is written behind the plain head
    (``written`` bytes) and copied once behind the right one (only shards that use extensions).
    """
    head = with_stylesheet(urlset_open(prefixes), stylesheet)
    staged = path.with_name(path.name + ".head")
    out = OutputFile(staged, compress=False, durable=durable)
    try:
        out.stream.write(head)
        with open(path, "rb") as body:
            body.seek(written)
            while block := body.read(1 << 20):
                out.stream.write(block)
    except BaseException:
        out.abort()
        staged.unlink(missing_ok=True)
        raise
    out.close()
    os.replace(staged, path)


def write_index(path: Path, shards: list[ShardInfo], base_url: str, *, stylesheet: bool = False) -> None:
    """Write a sitemap index (never gzipped) listing ``base_url + name`` of every shard;
    ``stylesheet``: with the line that names the set's stylesheet (SITEMAP_XSL)."""
    if not shards:
        raise EmptySitemapError("a sitemap index must list at least one sitemap")
    if len(shards) > MAX_SITEMAPS_PER_INDEX:
        raise TooManyShardsError(f"{len(shards)} sitemaps, an index lists at most {MAX_SITEMAPS_PER_INDEX}")
    head = with_stylesheet(SITEMAPINDEX_OPEN, stylesheet)
    size = len(head)
    out = OutputFile(Path(path), compress=False)
    try:
        out.stream.write(head)
        for shard in shards:
            loc = base_url + shard.name
            check_loc(loc)
            element = sitemap_element(loc, shard.lastmod)
            if not can_fit(size, 0, len(element), len(SITEMAPINDEX_CLOSE)):
                raise SitemapError(
                    f"sitemap index would exceed {MAX_BYTES_PER_SITEMAP} bytes; use a shorter base URL"
                )
            out.stream.write(element)
            size += len(element)
        out.stream.write(SITEMAPINDEX_CLOSE)
    except BaseException:
        out.abort()
        raise
    out.close()

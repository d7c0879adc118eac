"""Shard writer: streams ``<url>`` lines into numbered sitemap files that respect the limits.

Files are named ``sitemap-00001.xml`` (``.xml.gz``), ... and are closed before an entry would
push them past ``max_urls`` or ``max_bytes`` (uncompressed size of the whole file).
"""

from __future__ import annotations

import bisect
import contextlib
import html
import itertools
import logging
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from zlib_ng import zlib_ng

from sitemap_spider.items import SitemapEntry
from sitemap_spider.sitemaps.errors import (
    EmptySitemapError,
    InvalidEntryError,
    SitemapError,
    TooManyShardsError,
)
from sitemap_spider.sitemaps.xml import (
    SITEMAPINDEX_CLOSE,
    SITEMAPINDEX_OPEN,
    URLSET_CLOSE,
    URLSET_OPEN,
    check_loc,
    parse_lastmod,
    sitemap_element,
    url_line,
)

logger = logging.getLogger(__name__)

MAX_URLS_PER_SITEMAP = 50_000
MAX_BYTES_PER_SITEMAP = 52_428_800
MAX_SITEMAPS_PER_INDEX = 50_000
# Deflate level of the .gz shards, compressed by zlib-ng (a publish's profile put gzip at ~18%
# of its CPU): on the 20 shards of a 1M-URL publish (96 MiB of XML) its level 6 took 0.62-0.83
# CPU s for 9.11 MB, CPython's zlib level 6 1.49-1.83 s for 9.58 MB. Changing the level, the
# slice size below or the zlib-ng version may change the bytes of every published .gz file.
GZIP_LEVEL = 6
# zlib-ng's output depends on how its input is split between calls: every file is compressed
# in slices of exactly this size (the last one shorter), whatever the sizes of the writes, so
# that its bytes depend on its content only. Large slices: zlib-ng releases the GIL for each.
_COMPRESS_BLOCK = 1 << 20
# A gzip member header without a name or a time (FLG 0, MTIME 0), XFL 0 and OS 255 (unknown):
# the header CPython's gzip module wrote, the same on every platform (zlib's own gzip wrapper
# writes the OS it was built on).
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


@dataclass(frozen=True)
class ShardInfo:
    """One written sitemap file; ``lastmod`` is the newest of its entries (original string)."""

    name: str
    urls: int
    bytes: int
    lastmod: str | None


def shard_name(number: int, *, gzip: bool) -> str:
    """Return the file name of the ``number``-th shard (1-based)."""
    return f"sitemap-{number:05d}.xml" + (".gz" if gzip else "")


class _Writable(Protocol):
    """What a file is written through: the open file itself or the gzip layer."""

    def write(self, data: bytes, /) -> int: ...


class _GzipWriter:
    """One gzip member (zlib-ng, ``GZIP_LEVEL``) whose bytes depend on its content only.

    Writes of any size are gathered and deflated in slices of exactly ``_COMPRESS_BLOCK``
    bytes, the rest by ``finish``: many small writes, one big one and a file read in blocks
    give the same bytes. The header has no name and no time.
    """

    def __init__(self, raw: _Writable) -> None:
        self._raw = raw
        # Raw deflate (negative wbits): the header and the trailer are written here.
        self._deflate = zlib_ng.compressobj(GZIP_LEVEL, zlib_ng.DEFLATED, -zlib_ng.MAX_WBITS)
        self._pending = bytearray()
        self._crc = 0
        self._size = 0
        raw.write(_GZIP_HEADER)

    def write(self, data: bytes) -> int:
        self._pending += data
        whole = len(self._pending) - len(self._pending) % _COMPRESS_BLOCK
        if whole:
            with memoryview(self._pending) as pending:
                for start in range(0, whole, _COMPRESS_BLOCK):
                    self._deflate_slice(pending[start : start + _COMPRESS_BLOCK])
            del self._pending[:whole]
        return len(data)

    def finish(self) -> None:
        """Deflate what is left and write the trailer (CRC-32 and size of the content)."""
        self._deflate_slice(self._pending)
        self._pending = bytearray()
        self._raw.write(self._deflate.flush())
        self._raw.write(struct.pack("<II", self._crc, self._size & 0xFFFFFFFF))

    def _deflate_slice(self, data: memoryview | bytearray) -> None:
        self._crc = zlib_ng.crc32(data, self._crc)
        self._size += len(data)
        self._raw.write(self._deflate.compress(data))


class _OutputFile:
    """A file written through an optional reproducible gzip layer, fsynced on close."""

    def __init__(self, path: Path, *, compress: bool, durable: bool = True) -> None:
        self._raw = open(path, "wb")  # noqa: SIM115 - closed in close()/abort()
        self._durable = durable
        self._gzip = _GzipWriter(self._raw) if compress else None
        self.stream: _Writable = self._gzip if self._gzip is not None else self._raw

    def close(self) -> None:
        if self._gzip is not None:
            self._gzip.finish()
        self._raw.flush()
        if self._durable:
            os.fsync(self._raw.fileno())
        self._raw.close()

    def abort(self) -> None:
        """Close without caring about the content: the caller throws the file away."""
        # A second error while closing a discarded file (disk full...) must not hide the
        # first one, which the caller is about to re-raise. What the gzip layer holds is
        # dropped with it: the file is not worth a trailer.
        with contextlib.suppress(OSError):
            self._raw.close()


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
    ) -> None:
        """``on_close`` is told of each shard as soon as it is complete on disk, so that it can be
        compressed or validated while the next one is written; ``durable=False`` skips the
        fsync of files that are only an intermediate step."""
        if not 1 <= max_urls <= MAX_URLS_PER_SITEMAP:
            raise ValueError(f"max_urls must be 1-{MAX_URLS_PER_SITEMAP}, not {max_urls}")
        smallest = len(URLSET_OPEN) + len(URLSET_CLOSE)
        if not smallest < max_bytes <= MAX_BYTES_PER_SITEMAP:
            raise ValueError(f"max_bytes must be {smallest + 1}-{MAX_BYTES_PER_SITEMAP}, not {max_bytes}")
        self.directory = Path(directory)
        self.max_urls = max_urls
        self.max_bytes = max_bytes
        self.gzip = gzip
        self._on_close = on_close
        self._durable = durable
        self._shards: list[ShardInfo] = []
        self._file: _OutputFile | None = None
        self._lastmods: list[str] = []  # the open shard's lastmods, "" where none
        self._urls = 0
        self._bytes = 0
        self._closed = False

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
                if len(URLSET_OPEN) + sizes[start] + closing > self.max_bytes:
                    raise InvalidEntryError(
                        f"entry needs {sizes[start]} bytes, more than a sitemap of at most "
                        f"{self.max_bytes} bytes can hold: {_loc_of(lines[start])[:100]!r}"
                    )
                self._open_shard()
            end = min(count, start + self.max_urls - self._urls)
            room = self.max_bytes - closing - self._bytes
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
        path = self.directory / shard_name(number, gzip=self.gzip)
        self._file = _OutputFile(path, compress=self.gzip, durable=self._durable)
        self._file.stream.write(URLSET_OPEN)
        self._urls = 0
        self._bytes = len(URLSET_OPEN)
        self._lastmods = []

    def _close_shard(self) -> None:
        assert self._file is not None
        self._file.stream.write(URLSET_CLOSE)
        self._file.close()
        self._file = None
        info = ShardInfo(
            name=shard_name(len(self._shards) + 1, gzip=self.gzip),
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


def _loc_of(line: str) -> str:
    # The loc of a <url> line, for a message.
    return html.unescape(line[len("<url><loc>") : line.find("</loc>")])


def write_document(path: Path, data: bytes, *, gzip: bool) -> None:
    """Write a whole document (fsynced), gzipped if asked byte for byte as a gzip ShardWriter does."""
    out = _OutputFile(Path(path), compress=gzip)
    try:
        # The gzip layer deflates fixed slices whatever the writes: one write of the whole
        # document gives the bytes of a ShardWriter's many small ones.
        out.stream.write(data)
    except BaseException:
        out.abort()
        raise
    out.close()


def gzip_file(source: Path, target: Path) -> None:
    """Compress ``source`` into ``target`` (fsynced), byte for byte as a gzip ShardWriter writes it."""
    out = _OutputFile(Path(target), compress=True)
    try:
        with open(source, "rb") as plain:
            # Reads of one slice each, deflated as they come. The gzip layer deflates fixed
            # slices whatever the writes, so these are the bytes of a gzip ShardWriter's small
            # writes (tests/test_writer.py checks it).
            while block := plain.read(_COMPRESS_BLOCK):
                out.stream.write(block)
    except BaseException:
        out.abort()
        raise
    out.close()


def write_index(path: Path, shards: list[ShardInfo], base_url: str) -> None:
    """Write a sitemap index (never gzipped) listing ``base_url + name`` of every shard."""
    if not shards:
        raise EmptySitemapError("a sitemap index must list at least one sitemap")
    if len(shards) > MAX_SITEMAPS_PER_INDEX:
        raise TooManyShardsError(f"{len(shards)} sitemaps, an index lists at most {MAX_SITEMAPS_PER_INDEX}")
    size = len(SITEMAPINDEX_OPEN) + len(SITEMAPINDEX_CLOSE)
    out = _OutputFile(Path(path), compress=False)
    try:
        out.stream.write(SITEMAPINDEX_OPEN)
        for shard in shards:
            loc = base_url + shard.name
            check_loc(loc)
            element = sitemap_element(loc, shard.lastmod)
            size += len(element)
            if size > MAX_BYTES_PER_SITEMAP:
                raise SitemapError(
                    f"sitemap index would exceed {MAX_BYTES_PER_SITEMAP} bytes; use a shorter base URL"
                )
            out.stream.write(element)
        out.stream.write(SITEMAPINDEX_CLOSE)
    except BaseException:
        out.abort()
        raise
    out.close()

"""The set published before, read back from the output directory as ``<url>`` lines, in order.

A new set is compared with it (compare.py) while the new shards are written. The shards this
package wrote hold one ``<url>`` per line, and the lines of an unchanged page are the same
text in both sets: they are read as text lines, a block at a time, and compared whole
(no parsing of an unchanged page). A file in another layout (another generator's, or a shard
of a rich set, whose head declares extension namespaces) is stream-parsed with lxml and given
as the same lines without their extensions, slower but with the same result. News files are
passed over: their URLs are in the shards too.
"""

from __future__ import annotations

import heapq
import io
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from isal import igzip
from lxml import etree  # type: ignore[import-untyped]

from sitemap_spider.sitemaps.errors import SitemapError
from sitemap_spider.sitemaps.names import is_news_file, listed_file_name, series_of
from sitemap_spider.sitemaps.xml.elements import (
    index_locs,
    url_lines_of_document,
    STYLESHEET_LINE,
    URLSET_CLOSE,
    URLSET_OPEN,
    parse_url_line,
)

_HEADER = URLSET_OPEN.decode()
_STYLESHEET = STYLESHEET_LINE.decode()
_CLOSE = URLSET_CLOSE.decode()


class PreviousSetError(SitemapError):
    """The previous set cannot be read back whole: no comparison is possible."""


def parse_line(line: str) -> tuple[str, str | None]:
    """The loc (unescaped) and lastmod of a ``<url>`` line; PreviousSetError if it is not one."""
    parsed = parse_url_line(line)
    if parsed is None:
        raise PreviousSetError(f"not a <url> line: {line[:120]!r}")
    return parsed


def previous_shards(output_dir: Path, index_name: str) -> list[Path] | None:
    """The shards the published index lists, in its order; None when there is no index."""
    index = output_dir / index_name
    if not index.is_file():
        return None
    shards = []
    try:
        for loc in index_locs(str(index)):
            name = listed_file_name(loc)
            # Only this directory's own shards: any other file would be a guess at what was listed.
            if name is None or not (output_dir / name).is_file():
                raise PreviousSetError(f"{index_name} lists {loc!r}, not a sitemap file of {output_dir}")
            path = output_dir / name
            # A news file lists again some URLs of the shards (listed before it): the shards say it all.
            if not is_news_file(name):
                shards.append(path)
    except (etree.XMLSyntaxError, OSError) as exc:
        raise PreviousSetError(f"cannot read {index}: {exc}") from exc
    return shards


def _open_text(path: Path) -> IO[str]:
    if path.name.endswith(".gz"):
        raw = igzip.open(path, "rb")  # type: ignore[no-untyped-call]
        return io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
    return open(path, encoding="utf-8", newline="\n")


def _parsed_lines(path: Path) -> Iterator[str]:
    """A shard in another layout, stream-parsed, as the lines the shard writer would write."""
    try:
        gzipped = path.name.endswith(".gz")
        with igzip.open(path, "rb") if gzipped else open(path, "rb") as raw:  # type: ignore[no-untyped-call]
            yield from url_lines_of_document(raw)
    except (etree.XMLSyntaxError, OSError, EOFError) as exc:
        raise PreviousSetError(f"cannot read {path}: {exc}") from exc


def _series_lines(shards: list[Path]) -> Iterator[str]:
    """The ``<url>`` lines of one series of files (each in loc order, one after the other)."""
    lines = PreviousLines(shards)
    try:
        while block := lines.ahead(4096):
            lines.skip(len(block))
            yield from block
    finally:
        lines.close()


def _loc_of(line: str) -> str:
    return parse_line(line)[0]


class PreviousLines:
    """The ``<url>`` lines of the previous set, read ahead a block at a time (memory: one block).

    A set in groups (SITEMAP_GROUPS) has a series of files per group, each in loc order: their
    lines are merged by loc, as the new set's lines come.
    """

    def __init__(self, shards: list[Path]) -> None:
        self._file: IO[str] | None = None
        self._parsed: Iterator[str] | None = None
        series: dict[str, list[Path]] = {}
        for shard in shards:
            series.setdefault(series_of(shard.name), []).append(shard)
        if len(series) > 1:
            self._shards: Iterator[Path] = iter(())
            self._parsed = heapq.merge(*(_series_lines(paths) for paths in series.values()), key=_loc_of)
        else:
            self._shards = iter(shards)
        self._buffer: list[str] = []
        self._pos = 0

    def ahead(self, count: int) -> list[str]:
        """The next ``count`` lines, not consumed; fewer only at the end of the set."""
        self._fill(count)
        return self._buffer[self._pos : self._pos + count]

    def skip_equal(self, lines: list[str], start: int) -> int:
        """Consume the next lines as long as they equal ``lines[start:]``; how many did."""
        self._fill(len(lines) - start)
        buffer = self._buffer
        first = position = self._pos
        end = min(len(buffer), first + len(lines) - start)
        while position < end and buffer[position] == lines[start]:
            position += 1
            start += 1
        self._pos = position
        return position - first

    def _fill(self, count: int) -> None:
        """Hold at least ``count`` lines not consumed, unless the set ends first."""
        if len(self._buffer) - self._pos < count:
            del self._buffer[: self._pos]
            self._pos = 0
            while len(self._buffer) < count and self._read(count - len(self._buffer)):
                pass

    def skip(self, count: int) -> None:
        """Consume ``count`` lines (``ahead`` has shown them)."""
        self._pos += count

    def _read(self, count: int) -> bool:
        """Append up to ``count`` lines of the current file, opening the next one; False at the end."""
        if self._file is None and self._parsed is None and not self._open_next():
            return False
        if self._parsed is not None:
            lines = list(itertools.islice(self._parsed, count))
            if not lines:
                self._parsed = None
            self._buffer += lines
            return True
        assert self._file is not None
        try:
            lines = list(itertools.islice(self._file, count))
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise PreviousSetError(f"cannot read {getattr(self._file, 'name', 'a shard')}: {exc}") from exc
        # The closing tag is the file's last line, so the last line read when it comes.
        if lines and lines[-1] == _CLOSE:
            lines.pop()
            self._close_file()
        elif len(lines) < count:
            raise PreviousSetError("a previous sitemap file ends without </urlset>")
        self._buffer += lines
        return True

    def _open_next(self) -> bool:
        path = next(self._shards, None)
        if path is None:
            return False
        try:
            text = _open_text(path)
            declaration, line = text.readline(), text.readline()
            if line == _STYLESHEET:  # a set published with SITEMAP_XSL
                line = text.readline()
            header = declaration + line
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise PreviousSetError(f"cannot read {path}: {exc}") from exc
        if header == _HEADER:
            self._file = text
        else:
            text.close()
            self._parsed = _parsed_lines(path)
        return True

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def close(self) -> None:
        """Close the open file; idempotent."""
        self._close_file()
        self._parsed = None

"""Sitemaps by section (``SITEMAP_GROUPS``): each group of URLs in a series of files of its own.

Search Console reports indexing per submitted sitemap, so a site split into sections (posts,
products, docs) sees which section is not indexed. A group is named by the first rule that
matches a URL (a path prefix, or a regular expression searched in the URL); the URLs no rule
matches stay in the plain series (``sitemap-00001.xml``), and a set without groups is written
as before, byte for byte. Each group's series (``sitemap-<group>-00001.xml``) is sharded at the
limits like the plain one, and the index lists every file, each with the newest lastmod of its
URLs.

The entries still go through one sort, by loc: :class:`GroupedWriter` takes the sorted
``<url>`` lines and hands each to its group's :class:`~.writer.ShardWriter`, so the files of
each series are in loc order, and deduplication and the comparison with the previous set see
one stream whatever the groups (a URL that moves to another group is neither removed nor added).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from sitemap_spider.sitemaps.errors import TooManyShardsError
from sitemap_spider.sitemaps.limits import MAX_SITEMAPS_PER_INDEX
from sitemap_spider.sitemaps.names import NEWS_PREFIX, SHARD_PREFIX, group_prefix, series_of
from sitemap_spider.sitemaps.shards.writer import ShardInfo, ShardWriter
from sitemap_spider.sitemaps.xml.elements import loc_in

#: What a group may be called: it goes into file names and URLs as it is.
GROUP_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
#: What the counts per group call the URLs of no group (the plain series).
OTHER_GROUP: Final = "other"
#: Names a group may not take: the news files' series, and the name of the URLs of no group.
RESERVED_NAMES: Final = frozenset({"news", OTHER_GROUP})


def group_name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a group, or None if it can."""
    if not isinstance(name, str) or not GROUP_NAME.match(name):
        return (
            "must be 1-40 lower-case letters, digits, '-' or '_', starting with a letter or digit, "
            f"got {name!r}"
        )
    if name in RESERVED_NAMES or name.isdigit():
        return f"{name!r} is reserved (the news files, the URLs of no group, a file number)"
    return None


@dataclass(frozen=True)
class SitemapGroup:
    """One rule of ``SITEMAP_GROUPS``: URLs whose path starts with ``prefix``, or in which
    ``pattern`` is found, go into the series of ``name``."""

    name: str
    prefix: str | None = None
    pattern: re.Pattern[str] | None = None

    def __post_init__(self) -> None:
        problem = group_name_problem(self.name)
        if problem is not None:
            raise ValueError(f"group name {problem}")
        if (self.prefix is None) == (self.pattern is None):
            raise ValueError("a group needs a path prefix or a pattern, not both")

    def matches(self, loc: str, path: str) -> bool:
        if self.prefix is not None:
            return path.startswith(self.prefix)
        assert self.pattern is not None
        return self.pattern.search(loc) is not None


def group_of(groups: tuple[SitemapGroup, ...], loc: str) -> str | None:
    """The name of the first group whose rule matches ``loc`` (an absolute URL); None: the plain series."""
    path = urlsplit(loc).path or "/"
    for group in groups:
        if group.matches(loc, path):
            return group.name
    return None


def group_of_file(name: str) -> str | None:
    """The group a sitemap file of a set belongs to (None: the plain series or the news files)."""
    series = series_of(name)  # sitemap-posts
    if series in (SHARD_PREFIX, NEWS_PREFIX) or not series.startswith(SHARD_PREFIX + "-"):
        return None
    return series[len(SHARD_PREFIX) + 1 :]


class GroupedWriter:
    """What the publishing loop asks of a ShardWriter, for a set in groups: each ``<url>`` line
    goes to the series of its group, each series sharded at the limits on its own."""

    def __init__(self, groups: tuple[SitemapGroup, ...], make_writer: Callable[[str], ShardWriter]) -> None:
        """``make_writer(prefix)``: a ShardWriter for the files named ``<prefix>-00001.xml``."""
        self._groups = groups
        self._make_writer = make_writer
        self._writers: dict[str | None, ShardWriter] = {None: make_writer(SHARD_PREFIX)}

    def _writer(self, line: str) -> ShardWriter:
        group = group_of(self._groups, loc_in(line))
        writer = self._writers.get(group)
        if writer is None:
            assert group is not None
            writer = self._writers[group] = self._make_writer(group_prefix(group))
        return writer

    def write_lines(self, lines: list[str], lastmods: list[str]) -> None:
        """Append ``<url>`` lines in loc order; consecutive lines of one group go in one call."""
        start = 0
        current: ShardWriter | None = None
        for index, line in enumerate(lines):
            writer = self._writer(line)
            if writer is not current:
                if current is not None:
                    current.write_lines(lines[start:index], lastmods[start:index])
                current, start = writer, index
        if current is not None:
            current.write_lines(lines[start:], lastmods[start:])

    def write_rich(self, line: str, lastmod: str, prefixes: tuple[str, ...]) -> None:
        self._writer(line).write_rich(line, lastmod, prefixes)

    def close(self) -> list[ShardInfo]:
        """Finish every series; the shards of all of them."""
        shards = [shard for writer in self._writers.values() for shard in writer.close()]
        if len(shards) > MAX_SITEMAPS_PER_INDEX:
            raise TooManyShardsError(f"the groups need {len(shards)} sitemap files, more than an index lists")
        return shards

    def abort(self) -> None:
        for writer in self._writers.values():
            writer.abort()

"""The ``<lastmod>`` a sitemap index gives each of its files: when that file last changed.

Search engines read an index's lastmod to decide which of its sitemaps to download again. The
newest lastmod of a file's entries says when the file changed in most cases, but not in all:

- a URL added without a lastmod, or one removed, changes the file while its newest entry stays;
- a file whose bytes did not change keeps the date the index gave it, whatever that was.

So, for each file of the new set, against the index published before it:

- the same bytes as the published file of its name: the date that index gave it (the newest
  entry's when it gave none);
- other bytes, and its newest entry later than that date (or no date before, or no index: a
  first publish): the newest entry's, as before;
- other bytes, and no entry later than that date: the time of this publish, which is when the
  file changed. It is the only time the set is dated by the clock: a page's lastmod never is.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from lxml import etree  # type: ignore[import-untyped]

from sitemap_spider.sitemaps.names import listed_file_name
from sitemap_spider.sitemaps.shards.storage import same_bytes
from sitemap_spider.sitemaps.shards.writer import ShardInfo
from sitemap_spider.sitemaps.xml.elements import SITEMAP_NAMESPACE

logger = logging.getLogger(__name__)

_NS = "{" + SITEMAP_NAMESPACE + "}"


def dated_files(shards: list[ShardInfo], staging: Path, output_dir: Path, index_name: str) -> list[ShardInfo]:
    """``shards`` (written in ``staging``) with the lastmod the index gives each (module doc)."""
    before = published_dates(output_dir / index_name)
    if before is None:
        return shards
    now: str | None = None
    dated = []
    for shard in shards:
        previous = before.get(shard.name)
        if same_bytes(staging / shard.name, output_dir / shard.name):
            lastmod = previous or shard.lastmod
        elif previous is not None and not _later(shard.lastmod, previous):
            now = now or datetime.now(UTC).isoformat(timespec="seconds")
            lastmod = now
        else:
            lastmod = shard.lastmod
        dated.append(shard if lastmod == shard.lastmod else replace(shard, lastmod=lastmod))
    return dated


def published_dates(index: Path) -> dict[str, str | None] | None:
    """The lastmod (None: none) the published index gives each file of its set, by name; None
    without a readable index (a first publish, or one another tool wrote)."""
    if not index.is_file():
        return None
    dates: dict[str, str | None] = {}
    try:
        for _, element in etree.iterparse(str(index), events=("end",), tag=_NS + "sitemap", no_network=True):
            name = listed_file_name((element.findtext(_NS + "loc") or "").strip())
            if name is not None:
                dates[name] = (element.findtext(_NS + "lastmod") or "").strip() or None
            element.clear()
    except (OSError, etree.XMLSyntaxError) as exc:
        logger.warning("The published index %s cannot be read (%s): its files are dated by their entries", index, exc)
        return None
    return dates


def _later(lastmod: str | None, than: str) -> bool:
    """Whether ``lastmod`` is an instant after ``than`` (W3C datetimes; a date alone is its midnight
    UTC); one that cannot be compared counts as later, so the entries' date is kept."""
    if lastmod is None:
        return False
    try:
        return _instant(lastmod) > _instant(than)
    except ValueError:
        return True


def _instant(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

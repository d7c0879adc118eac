"""An entry as it crosses processes: one row of six values, and that row as JSON text.

Every mode that keeps or sends entries outside the process that made them uses this form: the
resumable crawl's SQLite table (the row's columns), the shared crawl's Redis hash and the
second process's messages to the first (the row as JSON). A new field is one change here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.xml.extensions import extensions_json, with_extensions_json

#: loc, lastmod, changefreq, priority, content_digest, the extension fields as JSON text (or None).
EntryRow = tuple[str, str | None, str | None, float | None, str | None, str | None]
#: The columns of a row, in its order (the SQLite table's).
ROW_COLUMNS = ("loc", "lastmod", "changefreq", "priority", "content_digest", "extensions")


def entry_row(entry: SitemapEntry) -> EntryRow:
    """The row of ``entry``."""
    return (entry.loc, entry.lastmod, entry.changefreq, entry.priority, entry.content_digest, extensions_json(entry))


def entry_of_row(row: Sequence[Any]) -> SitemapEntry:
    """The entry of a row made by ``entry_row`` (a RichEntry when it has extension fields)."""
    loc, lastmod, changefreq, priority, content_digest, extensions = row
    return with_extensions_json(SitemapEntry(loc, lastmod, changefreq, priority, content_digest), extensions)


def entry_to_json(entry: SitemapEntry) -> str:
    """The row of ``entry`` as JSON text."""
    return json.dumps(entry_row(entry))


def entry_from_json(text: str | bytes) -> SitemapEntry:
    """The entry of ``entry_to_json`` text."""
    return entry_of_row(json.loads(text))

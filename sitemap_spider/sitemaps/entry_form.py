"""An entry as it crosses processes: one row of six values, and that row as JSON text.

Every mode that keeps or sends entries outside the process that made them uses this form: the
resumable crawl's SQLite table (the row's columns), the shared crawl's Redis hash and the
second process's messages to the first (the row as JSON). A new field is one change here.

An entry whose page names another URL as canonical waits for the end of the crawl with that URL
(the crawl decides then whether it is listed): its JSON text carries the URL as a seventh value.
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


def entry_to_json(entry: SitemapEntry, canonical: str | None = None) -> str:
    """The row of ``entry`` as JSON text; with the URL its page names as canonical, if another."""
    row = entry_row(entry)
    return json.dumps(row if canonical is None else (*row, canonical))


def entry_from_json(text: str | bytes) -> SitemapEntry:
    """The entry of ``entry_to_json`` text."""
    return entry_of_row(json.loads(text)[:6])


def candidate_from_json(text: str | bytes) -> tuple[SitemapEntry, str | None]:
    """The entry of ``entry_to_json`` text, and the canonical URL it was given (None if none)."""
    row = json.loads(text)
    return entry_of_row(row[:6]), row[6] if len(row) > 6 else None

"""Any item with a ``loc`` (or ``url``) field, as a checked :class:`SitemapEntry`.

Shared by the crawl's pipeline and the ``sitemap`` feed exporter, so both
accept the same items: dicts, dataclasses, ``scrapy.Item`` (through itemadapter).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from numbers import Real
from typing import Any, TypeVar

from itemadapter import ItemAdapter

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.xml.extensions import with_extensions
from sitemap_spider.sitemaps.rules import check_entry

T = TypeVar("T")


def blank_is_none(value: T) -> T | None:
    """``value``, or None for a string of nothing but whitespace: a field given empty is a field
    not given (``.get(default="")``, a CSV's empty cell, a CMS that writes "" for no date)."""
    return None if isinstance(value, str) and (not value or value.isspace()) else value


def format_lastmod(value: object) -> str | None:
    """Return a W3C Datetime string for a str, a ``date`` or an aware ``datetime``; None for
    None or a blank string.

    Aware datetimes are written in UTC with seconds (``2024-05-01T10:20:30+00:00``); a naive
    datetime is refused, because its instant is unknown.
    """
    value = blank_is_none(value)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime):  # before date: a datetime is also a date
        if value.tzinfo is None or value.utcoffset() is None:
            raise InvalidEntryError(f"lastmod {value.isoformat()} is a naive datetime (no zone)")
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    if isinstance(value, date):
        return value.isoformat()
    raise InvalidEntryError(f"lastmod must be a str, date or datetime, not {type(value).__name__}")


def format_priority(value: object) -> float | None:
    """The priority of a number or of the text of one (None for None or a blank string);
    InvalidEntryError for anything else. Its range is checked with the entry."""
    value = blank_is_none(value)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise InvalidEntryError(f"priority {value!r} is not a number") from None
    if isinstance(value, Real) and not isinstance(value, bool):
        return float(value)
    raise InvalidEntryError(f"priority must be a number, not {type(value).__name__}")


def item_to_entry(item: Any) -> SitemapEntry:
    """The SitemapEntry of any item with a ``loc`` field, converted but not yet checked."""
    if isinstance(item, SitemapEntry):
        return item
    adapter = ItemAdapter(item)
    # A project's items often call it url.
    loc = adapter.get("loc") if adapter.get("loc") is not None else adapter.get("url")
    if loc is None:
        raise InvalidEntryError("item has no loc (or url) field")
    digest = adapter.get("content_digest")
    entry = SitemapEntry(
        loc=loc,
        lastmod=format_lastmod(adapter.get("lastmod")),
        changefreq=blank_is_none(adapter.get("changefreq")),
        priority=format_priority(adapter.get("priority")),
        content_digest=None if digest is None else str(digest),
    )
    # alternates, images, videos, news (extensions.FIELDS): a RichEntry when the item has any.
    return with_extensions(entry, adapter)


def entry_from_item(item: Any) -> SitemapEntry:
    """Return the checked SitemapEntry of any item with a ``loc`` field."""
    entry = item_to_entry(item)
    check_entry(entry)
    return entry

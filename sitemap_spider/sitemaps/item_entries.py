"""Any item with a ``loc`` (or ``url``) field, as a checked :class:`SitemapEntry`; the fields of a
``scrapy publish`` line.

Shared by the crawl's pipeline, the ``sitemap`` feed exporter and ``scrapy publish``
(``to_fields``), so all accept the same values, in the same normal form: dicts, dataclasses,
``scrapy.Item`` (through itemadapter), lines of JSON, CSV or text.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from numbers import Real
from collections.abc import Mapping
from typing import Any, TypeVar

from itemadapter import ItemAdapter

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.ingest.iri import normal_fields
from sitemap_spider.sitemaps.runs.lines import Fields
from sitemap_spider.sitemaps.xml.extensions import with_extensions
from sitemap_spider.sitemaps.rules import check_entry, w3c_lastmod

T = TypeVar("T")


def blank_is_none(value: T) -> T | None:
    """``value``, or None for a string of nothing but whitespace: a field given empty is a field
    not given (``.get(default="")``, a CSV's empty cell, a CMS that writes "" for no date)."""
    return None if isinstance(value, str) and (not value or value.isspace()) else value


def format_lastmod(value: object) -> str | None:
    """Return a W3C Datetime string for a str, a ``date`` or an aware ``datetime``; None for
    None or a blank string.

    Aware datetimes are written in UTC with seconds (``2024-05-01T10:20:30+00:00``); a naive
    datetime is refused, because its instant is unknown. A string is taken as ``rules.w3c_lastmod``
    reads it (``+0530`` is ``+05:30``).
    """
    value = blank_is_none(value)
    if value is None:
        return None
    if isinstance(value, str):
        return w3c_lastmod(value)
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


def to_fields(record: Mapping[str, Any]) -> Fields:
    """``(loc, lastmod, changefreq, priority, content_digest)`` of one record, for ``add_fields``:
    converted (a blank string is no value, a loc is stripped) but not yet checked, nor in its
    normal form (``taken_fields``). No SitemapEntry per line of ``scrapy publish``: building one
    costs more than the checks.
    """
    loc = record.get("loc")
    if loc is None or loc == "":
        raise InvalidEntryError("no loc")
    digest = record.get("content_digest")
    if digest is not None:
        digest = str(digest)
        if not digest.isascii():
            try:
                digest.encode()  # a JSON escape can make a lone surrogate, which no file can hold
            except UnicodeEncodeError:
                raise InvalidEntryError(f"content_digest {digest!r} is not valid Unicode") from None
    return (
        loc.strip() if isinstance(loc, str) else loc,
        format_lastmod(record.get("lastmod")),
        blank_is_none(record.get("changefreq")),
        format_priority(record.get("priority")),
        digest,
    )


def taken_fields(record: Mapping[str, Any]) -> tuple[Fields, bool]:
    """``to_fields`` with the loc in the form it is published in (``iri.normal_fields``: raw UTF-8
    and spaces percent-encoded, no fragment); True if that changed it. Not checked yet."""
    return normal_fields(to_fields(record))


def item_to_entry(item: Any) -> SitemapEntry:
    """The SitemapEntry of any item with a ``loc`` field, converted as a line of ``scrapy
    publish`` is (``taken_fields``) but not yet checked."""
    if isinstance(item, SitemapEntry):
        return item
    adapter = ItemAdapter(item)
    loc = item_loc(adapter)
    if loc is None:
        raise InvalidEntryError("item has no loc (or url) field")
    fields, _ = taken_fields(
        {
            "loc": loc,
            "lastmod": adapter.get("lastmod"),
            "changefreq": adapter.get("changefreq"),
            "priority": adapter.get("priority"),
            "content_digest": adapter.get("content_digest"),
        }
    )
    # alternates, images, videos, news (extensions.FIELDS): a RichEntry when the item has any.
    return with_extensions(SitemapEntry(*fields), adapter)


def item_loc(item: Any) -> Any:
    """The address an item gives: its ``loc``, else its ``url`` (what a project's items often call
    it); None when it has neither, or is no item itemadapter reads."""
    if not isinstance(item, ItemAdapter):
        if not ItemAdapter.is_item(item):
            return None
        item = ItemAdapter(item)
    loc = item.get("loc")
    return item.get("url") if loc is None else loc


def entry_from_item(item: Any) -> SitemapEntry:
    """Return the checked SitemapEntry of any item with a ``loc`` field."""
    entry = item_to_entry(item)
    check_entry(entry)
    return entry

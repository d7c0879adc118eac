"""Sitemaps, from entries to one published set: entries -> runs -> shards -> the set.

The sub-packages follow that flow: ``xml/`` writes and reads the documents, ``runs/`` sorts
and deduplicates the run lines, ``shards/`` writes the shards and publishes the set,
``changes/`` compares it with the set published before, ``ingest/`` reads ``scrapy publish``'s
inputs. The modules at this level (entry, entry_form, item_entries, rules, urls, names, limits,
options, errors) are shared by several of them. Nothing here imports the rest of the package.

``__all__`` is the face the rest of the package imports from (``from sitemap_spider.sitemaps
import SitemapEntry``); inside sitemaps/ modules import each other by their real paths. The
face is lazy: a name loads its module on first use, so importing one light name (the crawl
imports SitemapEntry, normalize_url) does not load the publishing side, lxml's schemas or
Scrapy's exporters. tests/test_sitemaps_face.py keeps the table and the typed imports equal.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .entry import (
        Alternate as Alternate,
        News as News,
        PageSummary as PageSummary,
        RichEntry as RichEntry,
        SitemapEntry as SitemapEntry,
        SummarizedEntry as SummarizedEntry,
        Video as Video,
    )
    from .entry_form import (
        ROW_COLUMNS as ROW_COLUMNS,
        candidate_from_json as candidate_from_json,
        entry_from_json as entry_from_json,
        entry_of_row as entry_of_row,
        entry_row as entry_row,
        entry_to_json as entry_to_json,
    )
    from .item_entries import (
        item_loc as item_loc,
        item_to_entry as item_to_entry,
    )
    from .rules import (
        CHANGEFREQS as CHANGEFREQS,
        CHANGEFREQ_VALUES as CHANGEFREQ_VALUES,
        EARLIEST_LASTMOD as EARLIEST_LASTMOD,
        check_entry as check_entry,
        check_loc as check_loc,
        lastmod_oddity as lastmod_oddity,
        parse_lastmod as parse_lastmod,
    )
    from .urls import (
        base_url_of as base_url_of,
        normalize_url as normalize_url,
        origin_of as origin_of,
        remove_dot_segments as remove_dot_segments,
    )
    from .names import (
        INDEX_NAME as INDEX_NAME,
    )
    from .limits import (
        MAX_BYTES_PER_SITEMAP as MAX_BYTES_PER_SITEMAP,
        MAX_LOC_LENGTH as MAX_LOC_LENGTH,
        MAX_SITEMAPS_PER_INDEX as MAX_SITEMAPS_PER_INDEX,
        MAX_URLS_PER_SITEMAP as MAX_URLS_PER_SITEMAP,
    )
    from .options import (
        OutputOptions as OutputOptions,
    )
    from .errors import (
        EmptySitemapError as EmptySitemapError,
        InvalidEntryError as InvalidEntryError,
        ShrinkError as ShrinkError,
        SitemapError as SitemapError,
        describe_write_error as describe_write_error,
    )
    from .xml.elements import (
        SITEMAP_NAMESPACE as SITEMAP_NAMESPACE,
    )
    from .xml.extensions import (
        MAX_IMAGES as MAX_IMAGES,
        MAX_VIDEO_DURATION as MAX_VIDEO_DURATION,
        fields_json as fields_json,
        missing_video_field as missing_video_field,
        news_language as news_language,
        page_summary_of as page_summary_of,
        rich_fields as rich_fields,
    )
    from .xml.schema_files import (
        parse_schema as parse_schema,
    )
    from .changes.compare import (
        KINDS as KINDS,
        SetChanges as SetChanges,
    )
    from .shards.set_builder import (
        PublishResult as PublishResult,
        SitemapSetBuilder as SitemapSetBuilder,
    )
    from .shards.shard_loop import off_base_note as off_base_note
    from .shards.storage import (
        process_alive as process_alive,
    )
    from .shards.bucket import (
        BucketTarget as BucketTarget,
        parse_bucket_uri as parse_bucket_uri,
    )
    from .shards.groups import (
        SitemapGroup as SitemapGroup,
        group_name_problem as group_name_problem,
        group_of_file as group_of_file,
    )
    from .shards.exporter import (
        DUPLICATE_STAT as DUPLICATE_STAT,
        EXTENSIONS_DROPPED_STAT as EXTENSIONS_DROPPED_STAT,
        OVER_LIMIT_STAT as OVER_LIMIT_STAT,
        SitemapItemExporter as SitemapItemExporter,
    )
    from .ingest.feed import (
        BATCH_FORMATS as BATCH_FORMATS,
        Ingest as Ingest,
        IngestOptions as IngestOptions,
        Tally as Tally,
        ingest_chunks as ingest_chunks,
    )
    from .ingest.inputs import (
        BadInput as BadInput,
        FORMATS as FORMATS,
        open_input as open_input,
        read_records as read_records,
    )

# Each name of the face, under the module (relative to this package) it lives in.
_HOMES: dict[str, tuple[str, ...]] = {
    "entry": ("Alternate", "News", "PageSummary", "RichEntry", "SitemapEntry", "SummarizedEntry", "Video"),
    "entry_form": (
        "ROW_COLUMNS", "candidate_from_json", "entry_from_json", "entry_of_row", "entry_row", "entry_to_json",
    ),
    "item_entries": ("item_loc", "item_to_entry"),
    "rules": (
        "CHANGEFREQS", "CHANGEFREQ_VALUES", "EARLIEST_LASTMOD", "check_entry", "check_loc", "lastmod_oddity",
        "parse_lastmod",
    ),
    "urls": ("base_url_of", "normalize_url", "origin_of", "remove_dot_segments"),
    "names": ("INDEX_NAME",),
    "limits": ("MAX_BYTES_PER_SITEMAP", "MAX_LOC_LENGTH", "MAX_SITEMAPS_PER_INDEX", "MAX_URLS_PER_SITEMAP"),
    "options": ("OutputOptions",),
    "errors": (
        "EmptySitemapError", "InvalidEntryError", "ShrinkError", "SitemapError", "describe_write_error",
    ),
    "xml.elements": ("SITEMAP_NAMESPACE",),
    "xml.extensions": (
        "MAX_IMAGES", "MAX_VIDEO_DURATION", "fields_json",
        "missing_video_field", "news_language", "page_summary_of", "rich_fields",
    ),
    "xml.schema_files": ("parse_schema",),
    "changes.compare": ("KINDS", "SetChanges"),
    "shards.set_builder": ("PublishResult", "SitemapSetBuilder"),
    "shards.shard_loop": ("off_base_note",),
    "shards.storage": ("process_alive",),
    "shards.bucket": ("BucketTarget", "parse_bucket_uri"),
    "shards.groups": ("SitemapGroup", "group_name_problem", "group_of_file"),
    "shards.exporter": (
        "DUPLICATE_STAT", "EXTENSIONS_DROPPED_STAT", "OVER_LIMIT_STAT", "SitemapItemExporter",
    ),
    "ingest.feed": ("BATCH_FORMATS", "Ingest", "IngestOptions", "Tally", "ingest_chunks"),
    "ingest.inputs": ("BadInput", "FORMATS", "open_input", "read_records"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "Alternate",
    "BadInput",
    "base_url_of",
    "BATCH_FORMATS",
    "BucketTarget",
    "candidate_from_json",
    "CHANGEFREQ_VALUES",
    "CHANGEFREQS",
    "check_entry",
    "check_loc",
    "describe_write_error",
    "DUPLICATE_STAT",
    "EARLIEST_LASTMOD",
    "EmptySitemapError",
    "entry_from_json",
    "entry_of_row",
    "entry_row",
    "entry_to_json",
    "EXTENSIONS_DROPPED_STAT",
    "fields_json",
    "FORMATS",
    "group_name_problem",
    "group_of_file",
    "INDEX_NAME",
    "Ingest",
    "ingest_chunks",
    "IngestOptions",
    "InvalidEntryError",
    "item_loc",
    "item_to_entry",
    "KINDS",
    "lastmod_oddity",
    "MAX_BYTES_PER_SITEMAP",
    "MAX_IMAGES",
    "MAX_LOC_LENGTH",
    "MAX_SITEMAPS_PER_INDEX",
    "MAX_URLS_PER_SITEMAP",
    "MAX_VIDEO_DURATION",
    "missing_video_field",
    "News",
    "news_language",
    "normalize_url",
    "open_input",
    "off_base_note",
    "origin_of",
    "OutputOptions",
    "OVER_LIMIT_STAT",
    "page_summary_of",
    "PageSummary",
    "parse_bucket_uri",
    "parse_lastmod",
    "parse_schema",
    "process_alive",
    "PublishResult",
    "read_records",
    "remove_dot_segments",
    "rich_fields",
    "RichEntry",
    "ROW_COLUMNS",
    "SetChanges",
    "ShrinkError",
    "SITEMAP_NAMESPACE",
    "SitemapEntry",
    "SitemapGroup",
    "SitemapError",
    "SitemapItemExporter",
    "SitemapSetBuilder",
    "SummarizedEntry",
    "Tally",
    "Video",
]

# Out of mypy's sight: it types the face from the imports above, and a name missing from them
# must stay an error there, not an Any.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        module = _HOME_OF.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

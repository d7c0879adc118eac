"""Tests of sitemap_spider/sitemaps/shards/exporter.py: the ``sitemap`` feed exporter."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
import scrapy

import sitemap_spider
from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.shards.exporter import SitemapItemExporter
from sitemap_spider.sitemaps.item_entries import format_lastmod
from tests.sitemap_check import read_urls, read_urlset

PROJECT_ROOT = Path(sitemap_spider.__file__).parent.parent


class PageItem(scrapy.Item):
    loc = scrapy.Field()
    lastmod = scrapy.Field(serializer=lambda value: value.strip())
    title = scrapy.Field()


@dataclass
class Page:
    loc: str
    lastmod: datetime | None = None
    priority: float | None = None


def export(items: list[Any]) -> tuple[bytes, SitemapItemExporter]:
    out = BytesIO()
    exporter = SitemapItemExporter(out)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    return out.getvalue(), exporter


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("2024-05-01", "2024-05-01"),
        (date(2024, 5, 1), "2024-05-01"),
        (datetime(2024, 5, 1, 10, 20, 30, tzinfo=UTC), "2024-05-01T10:20:30+00:00"),
        (
            datetime(2024, 5, 1, 1, 2, 3, 999, tzinfo=timezone(timedelta(hours=2))),
            "2024-04-30T23:02:03+00:00",
        ),
        (None, None),
        # Blank: no lastmod, as None. Stripped.
        ("", None),
        (" \t", None),
        (" 2024-05-01 ", "2024-05-01"),
        # ISO 8601 forms with a zone that are not W3C Datetime, which the crawl reads in pages too.
        ("2024-04-01T10:00:00+0530", "2024-04-01T10:00:00+05:30"),
        ("2024-04-01T10:00:00.25-0800", "2024-04-01T10:00:00-08:00"),
        ("2024-04-02 10:00:00Z", "2024-04-02T10:00:00+00:00"),
        # The W3C forms as given; what is not a lastmod as given, for the checks to refuse.
        ("2024-04-01T10:00:00.987654Z", "2024-04-01T10:00:00.987654Z"),
        ("2024-04-01T10:00:00", "2024-04-01T10:00:00"),
        ("2024-13-01", "2024-13-01"),
        ("yesterday", "yesterday"),
    ],
)
def test_format_lastmod(value: object, text: str | None) -> None:
    assert format_lastmod(value) == text


@pytest.mark.parametrize("value", [datetime(2024, 5, 1, 10, 20), 1714558830, b"2024-05-01"])
def test_format_lastmod_refuses(value: object) -> None:
    with pytest.raises(InvalidEntryError):
        format_lastmod(value)


def test_exports_every_kind_of_item() -> None:
    items = [
        {"loc": "https://example.com/dict?a=1&b=2", "lastmod": "2024-05-01", "other": 1},
        Page(
            "https://example.com/dataclass",
            datetime(2024, 5, 1, 12, tzinfo=timezone(timedelta(hours=-3))),
            0.7,
        ),
        PageItem(loc="https://example.com/item", lastmod=" 2024-05-03 ", title="T"),
        SitemapEntry("https://example.com/entry", changefreq="daily", priority=1),
        {"loc": "https://example.com/str-priority", "priority": "0.25"},
    ]
    data, exporter = export(items)
    assert read_urls(data, "export") == [
        {"loc": "https://example.com/dict?a=1&b=2", "lastmod": "2024-05-01"},
        {"loc": "https://example.com/dataclass", "lastmod": "2024-05-01T15:00:00+00:00", "priority": "0.7"},
        {"loc": "https://example.com/item", "lastmod": "2024-05-03"},
        {"loc": "https://example.com/entry", "changefreq": "daily", "priority": "1.0"},
        {"loc": "https://example.com/str-priority", "priority": "0.25"},
    ]
    assert (exporter.urls_written, exporter.items_skipped) == (5, 0)


def test_invalid_items_are_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    items = [
        {"loc": "https://example.com/good"},
        {"url": "https://example.com/url-field"},  # a project's items often call it url
        {"title": "no loc, no url"},
        {"loc": "not-a-url"},
        {"loc": "https://example.com/naive", "lastmod": datetime(2024, 5, 1, 10, 20)},
        {"loc": "https://example.com/today", "lastmod": "now"},
        {"loc": "https://example.com/freq", "changefreq": "sometimes"},
        {"loc": "https://example.com/prio", "priority": "high"},
        {"loc": ["https://example.com/list"]},
        "https://example.com/just-a-string",
        Page("https://example.com/good-too"),
    ]
    with caplog.at_level(logging.WARNING, logger="sitemap_spider.sitemaps.shards.exporter"):
        data, exporter = export(items)
    assert [url["loc"] for url in read_urls(data, "export")] == [
        "https://example.com/good",
        "https://example.com/url-field",
        "https://example.com/good-too",
    ]
    assert (exporter.urls_written, exporter.items_skipped) == (3, 8)
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 8
    for reason in ("no loc", "absolute", "naive", "W3C", "changefreq", "priority", "str", "not an item"):
        assert any(reason in message for message in messages), reason


def test_urls_beyond_the_limit_are_counted_and_reported_with_what_to_use(caplog: pytest.LogCaptureFixture) -> None:
    items = [{"loc": f"https://example.com/{i}"} for i in range(50_003)]
    with caplog.at_level(logging.WARNING):
        data, exporter = export(items)
    assert (exporter.urls_written, exporter.items_skipped, exporter.over_limit) == (50_000, 0, 3)
    assert len(read_urls(data, "export")) == 50_000
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 2, errors  # the first item left out, then the count at the end
    assert "https://example.com/50000 is not in it" in errors[0]
    assert errors[1].startswith("3 item(s) are NOT in the sitemap feed (it holds 50000 URLs)")
    for error in errors:
        assert "FEED_EXPORT_BATCH_ITEM_COUNT = 50000" in error and "sitemap_spider.Addon" in error


def test_each_url_is_written_once_for_its_first_item() -> None:
    items = [
        {"loc": "https://example.com/a", "lastmod": "2024-01-01"},
        {"url": "https://example.com/b"},
        {"loc": "https://example.com/a#top", "lastmod": "2024-06-01"},  # the same page
        {"loc": "https://example.com/a"},
    ]
    data, exporter = export(items)
    assert read_urls(data, "export") == [
        {"loc": "https://example.com/a", "lastmod": "2024-01-01"},
        {"loc": "https://example.com/b"},
    ]
    assert (exporter.urls_written, exporter.duplicates, exporter.items_skipped) == (2, 2, 0)


def test_empty_export_warns(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        export([{"loc": "bad"}])
    assert "no valid URL" in caplog.text


def test_exports_into_a_file(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    with open(path, "wb") as out:
        exporter = SitemapItemExporter(out, indent=4, encoding="latin-1")  # both ignored
        exporter.start_exporting()
        exporter.export_item({"loc": "https://example.com/caf%C3%A9"})
        exporter.finish_exporting()
    assert read_urlset(path) == [{"loc": "https://example.com/caf%C3%A9"}]


def test_scrapy_feed_export_uses_the_exporter(tmp_path: Path) -> None:
    # A real crawl (no network: items come from start()) in a fresh process, since Twisted's
    # reactor cannot be restarted inside the test process.
    script = textwrap.dedent(
        """
        import sys
        import scrapy
        from scrapy.crawler import CrawlerProcess

        class Items(scrapy.Spider):
            name = "items"

            async def start(self):
                yield {"loc": "https://example.com/b", "lastmod": "2024-05-01"}
                yield {"loc": "https://example.com/a?x=1&y=2"}
                yield {"loc": "broken"}

        process = CrawlerProcess(settings={
            "FEED_EXPORTERS": {"sitemap": "sitemap_spider.sitemaps.shards.exporter.SitemapItemExporter"},
            "FEEDS": {sys.argv[1]: {"format": "sitemap"}},
            "LOG_LEVEL": "WARNING",
        })
        process.crawl(Items)
        process.start()
        """
    )
    target = tmp_path / "out" / "sitemap.xml"
    done = subprocess.run(
        [sys.executable, "-c", script, target.as_uri()],
        check=False,  # the return code is asserted below, with stderr in the message
        cwd=tmp_path,
        env={"PYTHONPATH": str(PROJECT_ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Skipping item for the sitemap" in done.stderr
    assert read_urlset(target) == [
        {"loc": "https://example.com/b", "lastmod": "2024-05-01"},
        {"loc": "https://example.com/a?x=1&y=2"},
    ]

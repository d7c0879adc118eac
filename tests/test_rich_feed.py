"""The ``sitemap`` feed format and rich items: extensions are not written, and never dropped silently."""

from __future__ import annotations

import logging
from io import BytesIO
from pathlib import Path

import pytest

from sitemap_spider.sitemaps.entry import RichEntry, SitemapEntry
from sitemap_spider.sitemaps.shards.exporter import SitemapItemExporter
from tests.crawl_fixtures import run_crawl
from tests.site_rich import SETTINGS, build_rich_site
from tests.site_server import SiteServer
from tests.sitemap_check import read_urls, read_urlset


def test_a_crawl_feed_counts_and_reports_the_extensions_it_leaves_out(tmp_path: Path) -> None:
    with SiteServer() as server:
        site = build_rich_site(server.origin)
        server.serve(site.spec)
        feed = tmp_path / "feed.xml"
        result = run_crawl(site.spec.start_url, tmp_path, "-a", "render=never", "-o", f"{feed}:sitemap", settings=SETTINGS)
    assert result.returncode == 0, result.describe()
    urls = read_urlset(feed)
    assert sorted(url["loc"] for url in urls) == [entry["loc"] for entry in site.spec.expected_listed()]
    # Every page with extensions (in its <url>, or an article) is written without them, and counted.
    origin = site.spec.origin
    # Besides: an article too old for the news files, and /it/, whose alternates are not all usable.
    with_extensions = set(site.expected) | set(site.news) | {origin + "/news/old", origin + "/it/"}
    assert result.report is not None
    assert result.report["stats"]["sitemap/feed/extensions_dropped"] == len(with_extensions)
    assert f"{len(with_extensions)} item(s) are in the sitemap feed WITHOUT their extensions" in result.stderr
    # The published set has them all.
    assert b"<image:image>" in b"".join(result.files().values())


def test_items_of_every_kind_with_extensions_are_counted(caplog: pytest.LogCaptureFixture) -> None:
    out = BytesIO()
    exporter = SitemapItemExporter(out)
    exporter.start_exporting()
    with caplog.at_level(logging.WARNING):
        exporter.export_item(RichEntry("https://example.com/a", images=("https://example.com/a.jpg",)))
        exporter.export_item({"loc": "https://example.com/b", "alternates": [["fr", "https://example.com/fr/b"]]})
        exporter.export_item(RichEntry("https://example.com/c"))  # a RichEntry with nothing in it
        exporter.export_item(SitemapEntry("https://example.com/d"))
        exporter.export_item({"loc": "https://example.com/e", "images": []})
        exporter.finish_exporting()
    assert exporter.extensions_dropped == 2 and exporter.urls_written == 5
    assert [url["loc"] for url in read_urls(out.getvalue(), "feed")] == [f"https://example.com/{p}" for p in "abcde"]
    assert "lists https://example.com/a without its extensions" in caplog.text
    assert "2 item(s) are in the sitemap feed WITHOUT their extensions" in caplog.text

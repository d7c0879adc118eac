"""``scrapy publish`` of JSON Lines with extension fields (alternates, images, videos, news): the
same bytes as the same entries added to a set in a crawl's process."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sitemap_check import read_sitemap_set
from test_publish_command import BASE, publish, write_lines

from sitemap_spider.sitemaps.entry import Alternate, News, RichEntry, SitemapEntry, Video
from sitemap_spider.sitemaps.xml.extensions import extension_record
from sitemap_spider.sitemaps.options import OutputOptions
from sitemap_spider.sitemaps.shards.set_builder import SitemapSetBuilder
from tests.crawl_fixtures import folder_files


def entries() -> list[SitemapEntry]:
    fresh = (datetime.now(UTC) - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    cluster = (Alternate("en", BASE + "en/"), Alternate("fr", BASE + "fr/"), Alternate("x-default", BASE + "en/"))
    rich: list[SitemapEntry] = [
        RichEntry(BASE + "en/", "2024-05-01", alternates=cluster),
        RichEntry(BASE + "fr/", alternates=(*cluster, Alternate("de", BASE + "de/"))),
        RichEntry(BASE + "gallery", images=(BASE + "a.png", "https://cdn.example.net/b.jpg")),
        RichEntry(
            BASE + "video",
            videos=(Video(BASE + "t.jpg", "Grilling steaks", "How to – in 5 minutes", content_loc=BASE + "v.mp4", duration=300),),
        ),
        RichEntry(BASE + "news/today", news=News("The Daily", "en", fresh, "Today's news")),
    ]
    return rich + [SitemapEntry(BASE + f"page/{n}", content_digest=f"d{n}") for n in range(2000)]


def as_line(entry: SitemapEntry) -> str:
    record = {
        "loc": entry.loc,
        "lastmod": entry.lastmod,
        "changefreq": None,
        "priority": None,
        "content_digest": entry.content_digest,
    }
    return json.dumps(record | (extension_record(entry) or {}))


def test_jsonl_extension_fields_give_the_bytes_of_the_crawl(tmp_path: Path) -> None:
    items = entries()
    builder = SitemapSetBuilder(OutputOptions(tmp_path / "crawl", BASE))
    for entry in items:
        builder.add(entry)
    builder.publish()
    # Rich lines among plain ones, in the chunks that worker processes parse.
    lines = [as_line(entry) for entry in items[5:1000]] + [as_line(e) for e in items[:5]] + [as_line(e) for e in items[1000:]]
    run = publish(tmp_path, write_lines(tmp_path / "in.jsonl", lines), "-s", "SITEMAP_SORT_RUN_SIZE=1000")
    assert run.returncode == 0, run.describe()
    assert folder_files(run.output_dir) == folder_files(tmp_path / "crawl")
    news: list[dict[str, str]] = []
    assert len(read_sitemap_set(run.output_dir, BASE, news)) == len(items)
    assert [url["loc"] for url in news] == [BASE + "news/today"]
    assert "hreflang alternates left out: target_not_listed 1" in run.stdout
    assert "1 article(s) in news files" in run.stdout

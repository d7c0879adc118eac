"""Extension data of entries (sitemaps/xml/extensions.py), and sets that carry it: the files written,
their namespaces, the limits, validation and stability (sitemaps/shards/rich_loop.py, writer.py)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from lxml import etree  # type: ignore[import-untyped]
from sitemap_check import file_bytes, read_sitemap_set

from sitemap_spider.sitemaps.entry import Alternate, News, RichEntry, SitemapEntry, Video
from sitemap_spider.sitemaps.errors import InvalidEntryError, SitemapValidationError
from sitemap_spider.sitemaps.xml.extensions import (
    clean_alternates,
    extension_record,
    missing_video_field,
    news_language,
    normal_hreflang,
    rich_fields,
    xml_text,
)
from sitemap_spider.sitemaps.options import OutputOptions
from sitemap_spider.sitemaps.shards.set_builder import SitemapSetBuilder
from sitemap_spider.sitemaps.xml.validate import validate_file

BASE = "https://www.example.com/"
NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("en", "en"),
        ("EN-gb", "en-GB"),
        ("zh-hant-tw", "zh-Hant-TW"),
        ("es-419", "es-419"),
        ("X-Default", "x-default"),
        ("en_GB", None),
        ("english", None),
        ("en-", None),
        ("e", None),
        ("", None),
    ],
)
def test_hreflang_is_a_bcp47_language_with_an_optional_region(value: str, expected: str | None) -> None:
    assert normal_hreflang(value) == expected


def test_clean_alternates_reports_bad_duplicate_and_unusable_ones() -> None:
    kept, problems = clean_alternates(
        (
            Alternate("fr", BASE + "fr/"),
            Alternate("en", BASE + "en/"),
            Alternate("EN", BASE + "en/"),  # the same pair again: kept once
            Alternate("de", BASE + "de/"),
            Alternate("de", BASE + "de-2/"),
            Alternate("english", BASE + "x/"),
            Alternate("it", "not a url"),
        )
    )
    assert kept == [Alternate("en", BASE + "en/"), Alternate("fr", BASE + "fr/")]
    assert sorted((a.hreflang, a.href, reason) for a, reason in problems) == [
        ("de", BASE + "de-2/", "duplicate_hreflang"),
        ("de", BASE + "de/", "duplicate_hreflang"),
        ("english", BASE + "x/", "bad_hreflang"),
        ("it", "not a url", "target_not_listed"),
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("en-US", "en"), ("fr", "fr"), ("zh-TW", "zh-tw"), ("zh-Hans-CN", "zh-cn"), ("zh_CN", "zh-cn"), ("x", None), (None, None)],
)
def test_news_language_of_html_lang(value: str | None, expected: str | None) -> None:
    assert news_language(value) == expected


def test_video_required_fields() -> None:
    assert missing_video_field(Video("https://a.example/t.jpg", "T", "D", content_loc="https://a.example/v.mp4")) is None
    assert missing_video_field(Video("https://a.example/t.jpg", "T", "D")) == "content_loc or player_loc"
    assert missing_video_field(Video("", "T", "D", player_loc="https://a.example/p")) == "thumbnail_loc"
    assert missing_video_field(Video("https://a.example/t.jpg", "T", "", player_loc="https://a.example/p")) == "description"


def test_xml_text_is_ascii_without_tabs_or_newlines() -> None:
    assert xml_text("Crème <brûlée> & \"tea\"\t\n\x01") == "Cr&#232;me &lt;br&#251;l&#233;e&gt; &amp; &quot;tea&quot;&#9;&#10;"


def test_records_round_trip() -> None:
    entry = RichEntry(
        BASE + "a",
        alternates=(Alternate("fr", BASE + "fr"),),
        images=(BASE + "i.png",),
        videos=(Video(BASE + "t.jpg", "T", "D", content_loc=BASE + "v.mp4", duration=5),),
        news=News("Pub", "en", "2024-05-01", "T"),
    )
    record = extension_record(entry)
    assert record is not None
    assert rich_fields(record) == {
        "alternates": entry.alternates,
        "images": entry.images,
        "videos": entry.videos,
        "news": entry.news,
    }
    assert rich_fields({"images": [], "news": None}) is None
    with pytest.raises(InvalidEntryError):
        rich_fields({"videos": ["not an object"]})


@pytest.mark.parametrize(
    ("record", "missing"),
    [
        ({"news": {"language": "en", "publication_date": "2024-05-01", "title": "T"}}, "name"),
        ({"alternates": [{"href": BASE + "fr"}]}, "hreflang"),
        ({"images": [{"url": BASE + "i.png"}]}, "loc"),
    ],
)
def test_an_extension_object_without_a_required_field_is_a_bad_entry(record: dict[str, object], missing: str) -> None:
    # A KeyError escaped before: scrapy publish stopped on the line instead of reporting and skipping it.
    with pytest.raises(InvalidEntryError, match=f"no '{missing}'"):
        rich_fields(record)


def publish(tmp_path: Path, entries: list[SitemapEntry], **options: object) -> tuple[Path, list[tuple[str, ...]]]:
    problems: list[tuple[str, ...]] = []
    output = tmp_path / "out"
    builder = SitemapSetBuilder(OutputOptions(output, BASE, **options), lambda *p: problems.append(p))  # type: ignore[arg-type]
    for entry in entries:
        builder.add(entry)
    builder.publish()
    return output, problems


def test_a_set_without_extensions_is_unchanged(tmp_path: Path) -> None:
    output, _ = publish(tmp_path, [SitemapEntry(BASE + "a"), RichEntry(BASE + "b")])
    assert (output / "sitemap-00001.xml").read_bytes() == (
        b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        b"<url><loc>https://www.example.com/a</loc></url>\n<url><loc>https://www.example.com/b</loc></url>\n</urlset>\n"
    )


def test_each_file_declares_only_the_namespaces_it_uses(tmp_path: Path) -> None:
    entries: list[SitemapEntry] = [
        SitemapEntry(BASE + "a"),
        RichEntry(BASE + "b", images=(BASE + "b.png",)),
        SitemapEntry(BASE + "c"),
        RichEntry(BASE + "d", videos=(Video(BASE + "t.jpg", "Ti", "De", player_loc=BASE + "p"),)),
    ]
    output, _ = publish(tmp_path, entries, max_urls=1)
    heads = [etree.fromstring(file_bytes(output / f"sitemap-0000{n}.xml")).nsmap for n in range(1, 5)]
    assert heads == [
        {None: "http://www.sitemaps.org/schemas/sitemap/0.9"},
        {None: "http://www.sitemaps.org/schemas/sitemap/0.9", "image": "http://www.google.com/schemas/sitemap-image/1.1"},
        {None: "http://www.sitemaps.org/schemas/sitemap/0.9"},
        {None: "http://www.sitemaps.org/schemas/sitemap/0.9", "video": "http://www.google.com/schemas/sitemap-video/1.1"},
    ]
    assert [url["loc"] for url in read_sitemap_set(output, BASE)] == [entry.loc for entry in entries]


def test_the_byte_limit_counts_extensions_and_declarations(tmp_path: Path) -> None:
    images = tuple(f"https://cdn.example.net/img/{n:04d}.jpg" for n in range(1000))
    entries = [RichEntry(BASE + f"p{n}", images=images) for n in range(3)]
    limit = 100_000  # one page of 1,000 images: ~75 kB
    output, _ = publish(tmp_path, entries, max_bytes=limit, gzip=True)
    files = sorted(output.glob("sitemap-0*.xml.gz"))
    assert len(files) == 3
    for path in files:
        assert len(file_bytes(path)) <= limit
        assert validate_file(path) == 1
    urls = read_sitemap_set(output, BASE)
    assert [url["loc"] for url in urls] == [entry.loc for entry in entries]


def test_over_1000_images_is_an_invalid_entry(tmp_path: Path) -> None:
    builder = SitemapSetBuilder(OutputOptions(tmp_path / "out", BASE))
    with pytest.raises(InvalidEntryError, match="1001 images"):
        builder.add(RichEntry(BASE + "a", images=tuple(f"{BASE}{n}.png" for n in range(1001))))
    builder.discard()


def test_news_files_hold_recent_articles_only(tmp_path: Path) -> None:
    fresh = (NOW - timedelta(hours=47)).isoformat()
    stale = (NOW - timedelta(hours=49)).isoformat()
    entries = [
        RichEntry(BASE + f"news/{n:04d}", "2024-05-01", news=News("The Daily", "en", fresh, f"Article {n}"))
        for n in range(1001)
    ]
    entries.append(RichEntry(BASE + "news/old", news=News("The Daily", "en", stale, "Old")))
    output, _ = publish(tmp_path, entries)
    news: list[dict[str, str]] = []
    urls = read_sitemap_set(output, BASE, news)
    assert len(urls) == 1002  # every article is listed in the shards too
    assert [path.name for path in sorted(output.glob("sitemap-news-*"))] == ["sitemap-news-00001.xml", "sitemap-news-00002.xml"]
    assert [url["loc"] for url in news] == [BASE + f"news/{n:04d}" for n in range(1001)]
    first = file_bytes(output / "sitemap-news-00001.xml").decode()
    assert (
        f"<url><loc>{BASE}news/0000</loc><lastmod>2024-05-01</lastmod><news:news><news:publication>"
        f"<news:name>The Daily</news:name><news:language>en</news:language></news:publication>"
        f"<news:publication_date>{fresh}</news:publication_date><news:title>Article 0</news:title></news:news></url>\n"
    ) in first


def test_same_entries_in_any_order_give_the_same_bytes(tmp_path: Path) -> None:
    entries: list[SitemapEntry] = [
        RichEntry(BASE + "en", alternates=(Alternate("en", BASE + "en"), Alternate("fr", BASE + "fr"))),
        RichEntry(BASE + "fr", alternates=(Alternate("fr", BASE + "fr"), Alternate("en", BASE + "en"))),
        RichEntry(BASE + "img", images=(BASE + "1.png", BASE + "2.png")),
        *(SitemapEntry(BASE + f"page/{n}") for n in range(50)),
    ]
    first, _ = publish(tmp_path / "1", entries, max_urls=7, sort_run_size=5)
    random.Random(7).shuffle(entries)
    second, _ = publish(tmp_path / "2", entries, max_urls=7, sort_run_size=5)
    assert {p.name: p.read_bytes() for p in first.iterdir()} == {p.name: p.read_bytes() for p in second.iterdir()}


def test_an_undeclared_extension_fails_validation(tmp_path: Path) -> None:
    path = tmp_path / "sitemap-00001.xml"
    path.write_bytes(
        b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        b'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n<url><loc>https://www.example.com/a</loc>'
        b'<xhtml:link rel="alternate" hreflang="en_GB" href="https://www.example.com/b"/></url>\n</urlset>\n'
    )
    with pytest.raises(SitemapValidationError):
        validate_file(path)
    with pytest.raises(SitemapValidationError):
        validate_file(path, whole=False)

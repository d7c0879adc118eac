"""What a page declares for rich sitemaps, read from its tree: hreflang alternates
(crawl/alternates.py), images (crawl/media.py), videos and articles (crawl/structured.py), and
dates as sitemaps take them (crawl/enrich.py)."""

from __future__ import annotations

import pytest
from parsel import Selector

from sitemap_spider.crawl.alternates import alternates_in_header, alternates_in_html
from sitemap_spider.crawl.enrich import w3c_date
from sitemap_spider.crawl.media import declared_size, image_sources, largest_candidate
from sitemap_spider.crawl.structured import (
    RawArticle,
    RawVideo,
    article,
    duration_seconds,
    json_ld,
    videos_in_elements,
    videos_in_json_ld,
    videos_in_microdata,
)


def page(head: str = "", body: str = "", lang: str = "") -> Selector:
    lang_attr = f' lang="{lang}"' if lang else ""
    return Selector(text=f"<!DOCTYPE html><html{lang_attr}><head>{head}</head><body>{body}</body></html>")


def test_alternates_in_html() -> None:
    selector = page(
        '<link rel="alternate" hreflang="fr" href="/fr/">'
        '<LINK REL="Alternate" HREFLANG="x-default" HREF=" https://a.example/ ">'
        '<link rel="alternate" type="application/rss+xml" href="/feed">'  # no hreflang
        '<link rel="canonical" hreflang="en" href="/en/">'  # not an alternate
        '<link rel="alternate" hreflang="de" href="">'
    )
    assert alternates_in_html(selector) == [("fr", "/fr/"), ("x-default", "https://a.example/")]
    assert alternates_in_html(page("<title>none</title>")) == []


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ('<https://a.example/fr/>; rel="alternate"; hreflang="fr"', [("fr", "https://a.example/fr/")]),
        (
            "</de/>; rel=alternate; hreflang=de, </en/>; hreflang=\"en\"; rel='alternate', </x>; rel=\"canonical\"",
            [("de", "/de/"), ("en", "/en/")],
        ),
        ('</fr/>; rel="alternate"', []),  # no hreflang
        ('</fr/>; rel="canonical"; hreflang="fr"', []),
        ("", []),
    ],
)
def test_alternates_in_header(header: str, expected: list[tuple[str, str]]) -> None:
    assert alternates_in_header([header.encode("latin-1")]) == expected


@pytest.mark.parametrize(
    ("srcset", "expected"),
    [
        ("a.jpg 400w, b.jpg 1200w, c.jpg 800w", "b.jpg"),
        ("a.jpg, b.jpg 2x, c.jpg 1.5x", "b.jpg"),
        ("only.jpg", "only.jpg"),
        ("a.jpg 2x, b.jpg 300w", "b.jpg"),
        ("a.jpg bogus, b.jpg 1x", "b.jpg"),
        (" , ", None),
    ],
)
def test_largest_srcset_candidate(srcset: str, expected: str | None) -> None:
    assert largest_candidate(srcset) == expected


@pytest.mark.parametrize(("value", "expected"), [("16", 16), (" 300px", 300), ("50%", None), (None, None), ("auto", None)])
def test_declared_size(value: str | None, expected: int | None) -> None:
    assert declared_size(value) == expected


def test_image_sources_skip_pixels_icons_and_data_uris() -> None:
    selector = page(
        '<meta property="og:image" content="/og.jpg">',
        '<img src="/a.jpg"><img src="/pixel.gif" width="1" height="1"><img src="/icon.png" width="16">'
        '<img src="/big.png" width="640" height="480"><img src="data:image/gif;base64,R0lGOD">'
        '<picture><source srcset="/p-1.webp 1x, /p-2.webp 2x"><img src="/p.jpg"></picture>'
        '<img srcset="/s-200.jpg 200w, /s-900.jpg 900w" src="/s.jpg">',
    )
    assert image_sources(selector, 48) == ["/og.jpg", "/a.jpg", "/big.png", "/p-2.webp", "/p.jpg", "/s-900.jpg"]
    assert "/icon.png" in image_sources(selector, 0)
    assert "/pixel.gif" not in image_sources(selector, 0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("PT1M33S", 93), ("PT2H", 7200), ("P1DT1S", 86401), ("PT0.5S", 0), ("P", None), ("1:33", None), ("", None)],
)
def test_duration_seconds(value: str, expected: int | None) -> None:
    assert duration_seconds(value) == expected


def test_videos_from_json_ld_microdata_and_video_elements() -> None:
    selector = page(
        '<script type="application/ld+json">{"@graph": [{"@type": ["VideoObject"], "name": "A", "description": "D",'
        ' "thumbnailUrl": {"@type": "ImageObject", "url": "/t.jpg"}, "contentUrl": "/a.mp4", "duration": "PT5S"}]}</script>'
        '<script type="application/ld+json">{not json</script>',
        '<div itemscope itemtype="http://schema.org/VideoObject"><span itemprop="name"> B </span>'
        '<meta itemprop="thumbnailUrl" content="/b.jpg"></div>'
        '<video poster="/c.jpg" aria-label="C"><source src="/c.mp4"></video>',
    )
    assert videos_in_json_ld(json_ld(selector)) == [
        RawVideo(thumbnail="/t.jpg", title="A", description="D", content="/a.mp4", duration="PT5S")
    ]
    assert videos_in_microdata(selector) == [RawVideo(thumbnail="/b.jpg", title="B")]
    assert videos_in_elements(selector) == [RawVideo(thumbnail="/c.jpg", title="C", content="/c.mp4")]


def test_articles() -> None:
    ld = '<script type="application/ld+json">{"@type": "NewsArticle", "headline": "H", "datePublished": "2024-05-01"}</script>'
    assert article(page(ld), json_ld(page(ld))) == RawArticle("H", "2024-05-01")
    og = '<title> Page  title </title><meta property="article:published_time" content="2024-05-01T10:00:00Z">'
    assert article(page(og), []) == RawArticle("Page title", "2024-05-01T10:00:00Z")
    plain = '<script type="application/ld+json">{"@type": "WebPage", "datePublished": "2024-05-01"}</script>'
    assert article(page(plain), json_ld(page(plain))) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-01", "2024-05-01"),
        ("2024-05-01T10:00:00+02:00", "2024-05-01T10:00:00+02:00"),
        ("2024-05-01T10:00:00.123Z", "2024-05-01T10:00:00.123Z"),
        ("2024-05-01T10:00:00+0200", "2024-05-01T10:00:00+02:00"),
        ("2024-05-01 10:00:00+00:00", "2024-05-01T10:00:00+00:00"),
        ("2024-05-01T10:00:00", None),  # no zone: no instant
        ("May 1st", None),
        ("", None),
    ],
)
def test_w3c_date(value: str, expected: str | None) -> None:
    assert w3c_date(value) == expected

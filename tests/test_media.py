"""What a page declares for rich sitemaps, read from its tree: hreflang alternates
(crawl/alternates.py), images (crawl/media.py), videos and articles (crawl/structured.py), and
dates as sitemaps take them (crawl/enrich.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

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


DATA = Path(__file__).parent / "data"


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


GIF: Final = "data:image/gif;base64,R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw=="
SVG: Final = (
    "data:image/svg+xml,%3Csvg%20xmlns='http://www.w3.org/2000/svg'"
    "%20viewBox='0%200%20800%20600'%3E%3C/svg%3E"
)
UPLOADS: Final = "https://www.example.com/wp-content/uploads/2024/05"


@pytest.mark.parametrize(
    ("markup", "expected"),
    [
        pytest.param(
            '<img src="/real.png" srcset="/img/loading.gif" lazyload alt="a">', ["/real.png"], id="hexo-fluid"
        ),
        pytest.param(f'<img data-src="/a.jpg" class="lazyload" src="{GIF}">', ["/a.jpg"], id="lazysizes"),
        pytest.param(
            '<img data-sizes="auto" data-srcset="/b-300.jpg 300w, /b-900.jpg 900w" data-src="/b-300.jpg"'
            ' src="/img/blank.gif" class="lazyload">',
            ["/b-900.jpg"], id="lazysizes-srcset",
        ),
        pytest.param(
            '<picture><source type="image/webp" data-srcset="/c.webp 1x, /c@2x.webp 2x">'
            '<img data-src="/c.jpg" src="/img/blank.gif" class="lazyload"></picture>',
            ["/c@2x.webp", "/c.jpg"], id="lazysizes-picture",
        ),
        pytest.param(
            f'<img width="800" height="600" src="{SVG}" data-lazy-src="{UPLOADS}/d.jpg"'
            f' data-lazy-srcset="{UPLOADS}/d-300x225.jpg 300w, {UPLOADS}/d.jpg 800w"'
            ' data-lazy-sizes="(max-width: 800px) 100vw">'
            f'<noscript><img width="800" height="600" src="{UPLOADS}/d.jpg"></noscript>',
            [f"{UPLOADS}/d.jpg", f"{UPLOADS}/d.jpg"], id="wordpress-data-lazy-src",
        ),
        pytest.param(
            '<img class="lazy" data-original="/e.jpg" src="/img/grey.gif" width="640">',
            ["/e.jpg"], id="jquery",
        ),
        pytest.param(
            '<img src="/f.jpg" loading="lazy" srcset="/f-480.jpg 480w, /f-960.jpg 960w">',
            ["/f-960.jpg"], id="native-lazy",
        ),
        pytest.param(f'<img src="/g.jpg" srcset="{GIF}">', ["/g.jpg"], id="data-uri-srcset"),
        pytest.param(f'<img data-src="/icon.png" src="{GIF}" width="16" height="16">', [], id="lazy-icon"),
        pytest.param(
            '<img data-src="" src="/h.jpg"> <img srcset="/only.jpg"> <img src="/i.jpg" srcset="/i.jpg">',
            ["/h.jpg", "/only.jpg", "/i.jpg"], id="plain",
        ),
    ],
)
def test_a_lazy_loaded_image_is_the_one_a_rendered_page_shows(markup: str, expected: list[str]) -> None:
    assert image_sources(page(body=markup), 48) == expected


def test_no_placeholder_of_the_real_hexo_blog_is_an_image() -> None:
    """The Fluid theme's <img src=REAL srcset=/img/loading.gif lazyload>, on 156 pages: the real one."""
    lazy, pages, placeholders = 0, set(), 0
    for path in (DATA / "sites" / "hexo-blog").rglob("*.html"):
        selector = Selector(text=path.read_text(encoding="utf-8"))
        found = image_sources(selector, 48)
        placeholders += "/img/loading.gif" in found
        for img in selector.xpath("//img[@lazyload]"):
            assert img.attrib["srcset"] == "/img/loading.gif"
            assert img.attrib["src"] in found, path
            lazy += 1
            pages.add(path)
    assert (lazy, len(pages), placeholders) == (1099, 156, 0)


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

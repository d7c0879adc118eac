"""The render decision's quick "does this page link the site?" against Scrapy's LinkExtractor.

On real pages (the three real sites' and the CMS pages', sources in SOURCES.md beside them) and edges.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scrapy.http import HtmlResponse
from scrapy.linkextractors import LinkExtractor

from sitemap_spider.crawl.urls import Site
from sitemap_spider.render.spider_side import links_to_site
from sitemap_spider.sitemaps.urls import normalize_url

DATA = Path(__file__).parent / "data"
PAGES = sorted(
    [*(DATA / "cms").glob("*.html")]
    + [
        page
        for site in ("hexo-blog", "javadoc", "sphinx-docs")
        for page in sorted((DATA / "sites" / site).rglob("*.html"))[:60]
    ]
)
ORIGIN = "http://127.0.0.1:8000"
# The extractor the spider reads links with (render/spider_side.py).
_EXTRACTOR = LinkExtractor(
    tags=("a", "area", "frame", "iframe"), attrs=("href", "src"), canonicalize=False, unique=True
)


def _by_extractor(response: HtmlResponse, site: Site) -> bool:
    for link in _EXTRACTOR.extract_links(response):
        url = normalize_url(link.url)
        if url is not None and site.in_scope(site.to_crawl(url)):
            return True
    return False


def _response(url: str, body: bytes) -> HtmlResponse:
    return HtmlResponse(url, body=body, headers={"Content-Type": "text/html; charset=utf-8"})


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(DATA)))
def test_it_agrees_with_the_link_extractor_on_real_pages(path: Path) -> None:
    body = path.read_bytes()
    page = f"{ORIGIN}/{path.relative_to(DATA).as_posix()}"
    for site in (Site(ORIGIN, ORIGIN), Site("https://elsewhere.test", "https://elsewhere.test")):
        response = _response(page, body)
        assert links_to_site(response, site) == _by_extractor(response, site), (path, site)


@pytest.mark.parametrize(
    ("links", "expected"),
    [
        # files the extractor leaves out
        ('<a href="/guide.pdf">pdf</a> <a href="/photo.JPG">photo</a>', False),
        ('<a href="https://other.test/">elsewhere</a> <a href="mailto:me@example.com">mail</a>', False),
        ('<a href="  /page  ">spaces</a>', True),
        ('<a name="top">no href</a> <area href="/map-area">', True),
        ('<iframe src="/frame.html"></iframe>', True),
        ('<base href="https://other.test/"><a href="/page">under another base</a>', False),
    ],
)
def test_edges_agree_with_the_link_extractor(links: str, expected: bool) -> None:
    site = Site("http://127.0.0.1:8000", "http://127.0.0.1:8000")
    body = f"<html><head></head><body>{links}</body></html>".encode()
    response = _response(ORIGIN + "/dir/page.html", body)
    assert _by_extractor(response, site) is expected
    assert links_to_site(response, site) is expected

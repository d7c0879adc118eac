"""A page whose <base href> or meta refresh names no URL is still a page, as it is to a browser.

``http://[x/`` is refused by urlsplit ("Invalid IPv6 URL"). Scrapy reads a page's base URL and
its refresh once per response, in the meta refresh middleware and again for its selector, and
both raised: the page was excluded as an error with everything only it links to, and a home
page with such a base published nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from weakref import WeakKeyDictionary

import pytest
from scrapy.utils import response as scrapy_response
from sitemap_check import read_sitemap_set

from tests.crawl_fixtures import run_crawl
from tests.site_server import SiteServer, html_page
from tests.site_spec import Route

HTML = "text/html; charset=utf-8"
TEXT = "<p>" + "A paragraph that a reader came for, long enough to be content. " * 3 + "</p>"


def _page(title: str, body: str, head: str = "") -> Route:
    return Route(headers=(("Content-Type", HTML),), body=html_page(title, TEXT + body, head))


def test_scrapy_still_keeps_the_caches_the_crawl_settles() -> None:
    """The crawl fills Scrapy's private per-response caches for such pages (crawl/middlewares.py)."""
    assert isinstance(scrapy_response._baseurl_cache, WeakKeyDictionary)
    assert isinstance(scrapy_response._metaref_cache, WeakKeyDictionary)


# METAREFRESH_ENABLED=False: no meta refresh middleware settled the page, and its selector raised (nothing
# was published); the spider settles what it judges.
@pytest.mark.parametrize(("render", "refresh"), [("never", "True"), ("auto", "True"), ("never", "False")])
def test_a_base_or_a_refresh_that_is_no_url_loses_no_page(tmp_path: Path, render: str, refresh: str) -> None:
    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
        # Links resolve against the page's own URL: "b" is /b, as a browser reads it.
        "/": _page("Home", '<a href="/a">A</a> <a href="b">B</a>', head='<base href="http://[x/">'),
        "/a": _page("A", '<a href="/c">C</a>', head='<meta http-equiv="refresh" content="5; url=http://[x/">'),
        "/b": _page("B", '<a href="/">Home</a>'),
        "/c": _page("C", '<a href="/">Home</a>', head='<meta http-equiv="refresh" content="0; url=http://[y/">'),
    }
    with SiteServer(routes) as server:
        settings = {"METAREFRESH_ENABLED": refresh}
        result = run_crawl(server.origin + "/", tmp_path, "-a", f"render={render}", settings=settings)
    assert result.returncode == 0, result.describe()
    entries = read_sitemap_set(result.output_dir, server.origin + "/")
    listed = {url["loc"][len(server.origin) :] for url in entries}
    assert listed == {"/", "/a", "/b", "/c"}, result.describe()
    assert "Invalid IPv6 URL" not in result.stderr, result.describe()


def page(title: str, body: str = "", head: str = "") -> Route:
    """A page of its own content: pages alike would be left out as duplicates."""
    return _page(title, f"<p>This page is about {title.lower()}, and nothing else.</p>{body}", head)


NAV_JS = (
    "const nav = document.getElementById('nav'); const a = document.createElement('a');"
    " a.href = '/from-script'; a.textContent = 'More'; nav.appendChild(a);"
)


@pytest.mark.parametrize("render", ["never", "auto"])
def test_an_address_that_is_no_url_anywhere_in_a_page_loses_no_page(tmp_path: Path, render: str) -> None:
    """A canonical, an alternate, an image, a video or a link that urlsplit refuses is none, as to a browser.

    A template's ``https://[DOMAIN]/`` left unfilled raised in the spider ('does not appear to be an
    IPv4 or IPv6 address'): the page was lost, and with a ``Link`` header, every page only it links to.
    With render=auto, such a link on a page whose navigation scripts were rendered before did the same.
    """
    video = {
        "@context": "https://schema.org", "@type": "VideoObject", "name": "A film", "description": "About it",
        "thumbnailUrl": "http://[x/t.jpg", "contentUrl": "https://[DOMAIN]/v.mp4", "uploadDate": "2024-01-01",
    }  # fmt: skip
    canonical_header = ("Link", '<https://[DOMAIN]/canonical-header>; rel="canonical"')
    alternate_header = ("Link", '<https://[DOMAIN]/de/>; rel="alternate"; hreflang="de"')
    navigation = '<div id="nav"></div><script src="/nav.js"></script>'
    bad_link = '<a href="https://[DOMAIN]/">x</a>'
    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
        "/": page("Home", "".join(f'<a href="/{name}">{name}</a>' for name in (
            "canonical", "canonical-header", "alternate", "alternate-header", "image", "video", "scripted"))),
        "/canonical": page("Canonical", head='<link rel="canonical" href="https://[DOMAIN]/canonical">'),
        "/canonical-header": Route(
            headers=(("Content-Type", HTML), canonical_header),
            body=html_page("Canonical header", TEXT + '<a href="/only-from-header">On</a>'),
        ),
        "/only-from-header": page("Only from the header page"),
        "/alternate": page("Alternate", head='<link rel="alternate" hreflang="fr" href="http://[x/fr/">'),
        "/alternate-header": Route(
            headers=(("Content-Type", HTML), alternate_header),
            body=html_page("Alternate header", TEXT),
        ),
        "/image": page("Image", '<img src="//[cdn]/a.png" width="300" height="300" alt="A">'),
        "/video": page("Video", f'<script type="application/ld+json">{json.dumps(video)}</script>'),
        # render=auto: the second page with these navigation scripts asks for its static links to the site.
        "/nav.js": Route(headers=(("Content-Type", "application/javascript"),), body=NAV_JS.encode()),
        "/from-script": page("From the script"),
        "/scripted": page("Scripted", navigation + '<a href="/scripted-2">2</a>'),
        "/scripted-2": page("Scripted 2", navigation + bad_link + '<a href="/after">3</a>'),
        "/after": page("After"),
    }
    settings = {"SITEMAP_IMAGES": "True", "SITEMAP_VIDEOS": "True"}
    with SiteServer(routes) as server:
        result = run_crawl(server.origin + "/", tmp_path, "-a", f"render={render}", settings=settings)
    assert result.returncode == 0, result.describe()
    entries = read_sitemap_set(result.output_dir, server.origin + "/")
    listed = {url["loc"][len(server.origin) :] for url in entries}
    pages = set(routes) - {"/robots.txt", "/nav.js"} - ({"/from-script"} if render == "never" else set())
    assert listed >= pages, (sorted(pages - listed), result.describe())
    assert "Spider error" not in result.stderr, result.describe()

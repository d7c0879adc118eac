"""A page whose <base href> or meta refresh names no URL is still a page, as it is to a browser.

``http://[x/`` is refused by urlsplit ("Invalid IPv6 URL"). Scrapy reads a page's base URL and
its refresh once per response, in the meta refresh middleware and again for its selector, and
both raised: the page was excluded as an error with everything only it links to, and a home
page with such a base published nothing.
"""

from __future__ import annotations

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


@pytest.mark.parametrize("render", ["never", "auto"])
def test_a_base_or_a_refresh_that_is_no_url_loses_no_page(tmp_path: Path, render: str) -> None:
    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
        # Links resolve against the page's own URL: "b" is /b, as a browser reads it.
        "/": _page("Home", '<a href="/a">A</a> <a href="b">B</a>', head='<base href="http://[x/">'),
        "/a": _page("A", '<a href="/c">C</a>', head='<meta http-equiv="refresh" content="5; url=http://[x/">'),
        "/b": _page("B", '<a href="/">Home</a>'),
        "/c": _page("C", '<a href="/">Home</a>', head='<meta http-equiv="refresh" content="0; url=http://[y/">'),
    }
    with SiteServer(routes) as server:
        result = run_crawl(server.origin + "/", tmp_path, "-a", f"render={render}")
    assert result.returncode == 0, result.describe()
    listed = {url["loc"][len(server.origin) :] for url in read_sitemap_set(result.output_dir, server.origin + "/")}
    assert listed == {"/", "/a", "/b", "/c"}, result.describe()
    assert "Invalid IPv6 URL" not in result.stderr, result.describe()

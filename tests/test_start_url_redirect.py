"""A start URL that redirects outside the crawled site: the crawl says where to start instead.

The most common first command names the site without its www or its https, and the site sends
every visitor to its canonical origin. That redirect leaves the crawled origin, so it is not
followed and nothing can be listed: before, the crawl ended with "no page could be listed" and
the redirect was named only in the report.
"""

from __future__ import annotations

from pathlib import Path

from tests.crawl_fixtures import run_crawl
from tests.site_server import SiteServer, html_page
from tests.site_spec import Route

HTML = "text/html; charset=utf-8"


def test_a_start_url_sent_to_another_origin_names_it(tmp_path: Path) -> None:
    with SiteServer() as server:
        # The same server under another host name: another origin, as www.example.com is to example.com.
        elsewhere = f"http://localhost:{server.port}"
        server.routes = {
            "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
            "/": Route(status=301, headers=(("Location", elsewhere + "/home"),)),
            "/home": Route(status=302, headers=(("Location", elsewhere + "/"),)),
            "/old": Route(status=301, headers=(("Location", "/"),)),
        }
        result = run_crawl(server.origin + "/", tmp_path)
        assert result.returncode == 1, result.describe()
        why = f"no page could be listed: the start URL redirects to {elsewhere}/home, outside the site crawled"
        assert why in result.stderr, result.describe()
        assert result.report is not None and result.report["stats"]["sitemap/not_published"].startswith(why)
        # Through a redirect of its own origin first, the same.
        result = run_crawl(server.origin + "/old", tmp_path / "old")
        assert result.returncode == 1, result.describe()
        assert f"The start URL {server.origin}/old redirects to {elsewhere}/home" in result.stderr, result.describe()


def test_a_link_that_redirects_elsewhere_is_no_start_url(tmp_path: Path) -> None:
    """Only the start URL's redirects are named: a page linking out through a redirect is ordinary."""
    page = Route(headers=(("Content-Type", HTML),), body=html_page("Home", '<p>Home page.</p><a href="/out">Out</a>'))
    with SiteServer() as server:
        server.routes = {
            "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
            "/": page,
            "/out": Route(status=301, headers=(("Location", f"http://localhost:{server.port}/"),)),
        }
        result = run_crawl(server.origin + "/", tmp_path)
    assert result.returncode == 0, result.describe()
    assert "The start URL" not in result.stderr, result.describe()
    assert result.report is not None and "sitemap/start_url_redirects_to" not in result.report["stats"]

"""render=auto with the crawl history: a site script that changes while the pages' HTML does not.

A 304 tells that a page's HTML is as it was, not what its scripts build. Each test crawls a real
local site twice (three times) with the history and a real Chromium: the pages answer 304 to a
matching If-None-Match (an ETag of their bytes, as static file servers give), and between crawls
only the shared navigation script changes. The recrawl must list what a crawl without a history
lists, and an unchanged site must still be recrawled with 304s.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from sitemap_spider.history.store import HistoryStore
from sitemap_spider.render.revisits import script_set_key
from tests.crawl_fixtures import CrawlResult, run_crawl
from tests.site_server import HTML, SiteServer, html_page
from tests.site_spec import Route, SiteRequest
from tests.sitemap_check import read_sitemap_set

pytestmark = pytest.mark.slow

TEXT = "<p>" + "A paragraph that a reader came for, long enough to be content. " * 3 + "</p>"
NAV = '<nav id="menu"></nav><script src="/nav.js"></script>'
PLAIN = [f"/p/{n}" for n in range(150)]


def menu_script(paths: list[str]) -> str:
    """A navigation script that builds its menu's links at load."""
    return (
        f"for (const path of {paths!r}) {{ const a = document.createElement('a'); a.href = path;"
        " a.textContent = path; document.getElementById('menu').append(a); }"
    )


# Builds its link only on a click: a render at load finds nothing (as a theme's search box does).
ON_CLICK = (
    "document.getElementById('menu').addEventListener('click', () => {"
    " const a = document.createElement('a'); a.href = '/js-a.html'; document.body.append(a); });"
)


def _page(title: str, body: str) -> Route:
    return Route(headers=(("Content-Type", HTML),), body=html_page(title, TEXT + body + NAV))


def _children(n: int) -> str:
    """A binary tree of pages: a second crawling process starts while most are still to fetch."""
    children = [child for child in (2 * n + 1, 2 * n + 2) if child < len(PLAIN)]
    return " ".join(f'<a href="/p/{child}">{child}</a>' for child in children)


class NavSite:
    """A home page, a tree of plain pages and the pages only the menu links to; every page loads /nav.js."""

    def __init__(self, script: str, home_links: str = "") -> None:
        self.script = script
        self.routes = {
            "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
            "/": _page("Home", '<a href="/p/0">Pages</a> ' + home_links),
            **{path: _page(path, '<a href="/">Home</a> ' + _children(n)) for n, path in enumerate(PLAIN)},
            **{f"/js-{x}.html": _page(f"Menu page {x}", '<a href="/">Home</a>') for x in "abc"},
        }

    def respond(self, request: SiteRequest) -> Route:
        return Route(headers=(("Content-Type", "text/javascript"),), body=self.script.encode())


def crawl(
    server: SiteServer, out: Path, history: Path, settings: dict[str, str] | None = None
) -> tuple[CrawlResult, set[str]]:
    result = run_crawl(
        server.origin + "/", out, "-a", "render=auto",
        settings={"SITEMAP_HISTORY": str(history), "SITEMAP_RENDER_TIMEOUT": "5", **(settings or {})},
        timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.describe()
    # Valid against the XSDs, and read back by Scrapy's sitemap reader.
    urls = read_sitemap_set(result.output_dir, server.origin + "/")
    return result, {url["loc"][len(server.origin) :] for url in urls}


def _serve(site: NavSite) -> SiteServer:
    server = SiteServer(site.routes, dynamic=[(re.compile(r"/nav\.js"), site.respond)])
    server.validators = True  # an ETag on every 200, a 304 to a matching If-None-Match
    return server


def _count(result: CrawlResult, key: str) -> int:
    value = result.stats.get(key, 0)
    assert isinstance(value, int), (key, value)
    return value


LISTED = {"/", *PLAIN}


@pytest.mark.parametrize("mode", ["one", "jobdir", "two"])
def test_a_link_the_changed_menu_script_adds_is_found_though_the_page_answers_304(
    mode: str, tmp_path: Path
) -> None:
    """The home page's render found the menu's links; the next day the menu gains one, its HTML does not."""
    settings = {
        "one": {"SITEMAP_WORKERS": "1"},
        "jobdir": {"JOBDIR": str(tmp_path / "job")},
        "two": {"SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "0", "SITEMAP_WORKERS_AFTER_SECONDS": "0"},
    }[mode]
    site = NavSite(menu_script(["/js-a.html", "/js-b.html"]))
    history = tmp_path / "history.sqlite"
    with _serve(site) as server:
        first, listed = crawl(server, tmp_path / "first", history, settings)
        assert listed == LISTED | {"/js-a.html", "/js-b.html"}, first.describe()
        site.script = menu_script(["/js-a.html", "/js-b.html", "/js-c.html"])
        if mode == "jobdir":
            settings["JOBDIR"] = str(tmp_path / "job2")  # a finished job's state is kept: a new job
        server.clear()
        second, listed = crawl(server, tmp_path / "second", history, settings)
        requests = server.requests
    assert listed == LISTED | {"/js-a.html", "/js-b.html", "/js-c.html"}, second.describe()
    if mode == "two":
        assert _count(second, "sitemap/workers") == 2, "the second process never started"
    # The page the menu was rendered on is fetched whole, the others of its script set answer 304.
    not_modified = _count(second, "sitemap/history/not_modified")
    assert not_modified >= len(LISTED) - 2, second.stats
    assert _count(second, "sitemap/history/whole_for_render/rendered") >= 1, second.stats
    homes = [r for r in requests if r.target == "/"]  # the crawl's and the browser's
    assert homes and not any(name.lower() == "if-none-match" for r in homes for name, _ in r.headers)


@pytest.mark.parametrize("first_script", ["static_copy", "on_click"])
def test_a_menu_script_whose_probe_found_nothing_is_probed_again_once_it_changed(
    first_script: str, tmp_path: Path
) -> None:
    """The probe of the home page found nothing its HTML lacked: the menu built only links the page
    had (``static_copy``), or built nothing at load (``on_click``, a verdict the history keeps). The
    script then builds a link to a new page, and the home page's HTML is the same: one page of the
    script set is fetched whole in every crawl and goes through the render decision again."""
    static_links = '<a href="/js-a.html">A</a> <a href="/js-b.html">B</a>'
    script = menu_script(["/js-a.html", "/js-b.html"]) if first_script == "static_copy" else ON_CLICK
    site = NavSite(script, static_links)
    history = tmp_path / "history.sqlite"
    with _serve(site) as server:
        first, listed = crawl(server, tmp_path / "first", history)
        assert listed == LISTED | {"/js-a.html", "/js-b.html"}, first.describe()
        assert _count(first, "sitemap/render/probes") == 1, first.stats
        assert "sitemap/render/pages" not in first.stats, first.stats  # nothing rendered but the probe
        # Unchanged: the recrawl answers with 304s but for the one page of the script set read whole.
        second, listed = crawl(server, tmp_path / "second", history)
        assert listed == LISTED | {"/js-a.html", "/js-b.html"}
        pages = len(listed)
        assert _count(second, "sitemap/history/whole_for_render/scripts") == 1, second.stats
        assert _count(second, "sitemap/history/not_modified") == pages - 1, second.stats
        if first_script == "on_click":  # its verdict was kept: no browser in this crawl
            assert _count(second, "sitemap/render/skipped/scripts_found_nothing_before") == 1, second.stats
            assert not [key for key in second.stats if key.startswith("playwright/")], second.stats
        site.script = menu_script(["/js-a.html", "/js-b.html", "/js-c.html"])
        third, listed = crawl(server, tmp_path / "third", history)
    assert listed == LISTED | {"/js-a.html", "/js-b.html", "/js-c.html"}, third.describe()
    assert "sitemap/render/skipped/scripts_found_nothing_before" not in third.stats, third.stats


def test_an_unchanged_site_whose_menu_a_script_builds_is_recrawled_with_304s(tmp_path: Path) -> None:
    site = NavSite(menu_script(["/js-a.html", "/js-b.html"]))
    history = tmp_path / "history.sqlite"
    with _serve(site) as server:
        first, listed = crawl(server, tmp_path / "first", history)
        server.clear()
        second, again = crawl(server, tmp_path / "second", history)
        asked = [r for r in server.requests if r.target.startswith(("/p/", "/js-")) or r.target == "/"]
    assert again == listed == LISTED | {"/js-a.html", "/js-b.html"}
    assert second.files() == first.files()
    not_modified = _count(second, "sitemap/history/not_modified")
    judged = sum(_count(second, f"sitemap/history/{k}") for k in ("new", "changed", "unchanged"))
    pages = not_modified + judged
    assert not_modified >= 0.9 * pages, second.stats
    # The one page the menu is rendered on: fetched whole, and rendered, as in every crawl.
    assert _count(second, "sitemap/history/whole_for_render/rendered") == 1, second.stats
    assert _count(second, "sitemap/render/probes") + _count(second, "sitemap/render/pages") == 1, second.stats
    conditional = [r for r in asked if any(name.lower() == "if-none-match" for name, _ in r.headers)]
    assert len(conditional) >= 0.9 * pages, (len(conditional), pages)


def test_a_history_written_before_records_kept_the_render_decision_is_read_whole_once(tmp_path: Path) -> None:
    """An earlier release's history does not tell which pages' links came from a render: a crawl that
    renders fetches its HTML pages whole once, and asks for 304s again from the next crawl on."""
    site = NavSite(menu_script(["/js-a.html", "/js-b.html"]))
    history = tmp_path / "history.sqlite"
    with _serve(site) as server:
        crawl(server, tmp_path / "first", history)
        with sqlite3.connect(history) as db:  # the layout before records kept the render decision
            db.execute("ALTER TABLE pages DROP COLUMN render")
        db.close()
        site.script = menu_script(["/js-a.html", "/js-b.html", "/js-c.html"])
        second, listed = crawl(server, tmp_path / "second", history)
        assert listed == LISTED | {"/js-a.html", "/js-b.html", "/js-c.html"}, second.describe()
        assert "sitemap/history/not_modified" not in second.stats, second.stats
        assert _count(second, "sitemap/history/whole_for_render/undecided") == len(LISTED) + 2, second.stats
        store = HistoryStore(history)
        try:
            menu = script_set_key((server.origin + "/nav.js",))
            # The home page went to the browser; every other page loads the same navigation script.
            assert {record.render for record in store.records()} == {f"browser {menu}", menu}
        finally:
            store.close()
        third, again = crawl(server, tmp_path / "third", history)
    assert again == listed
    assert _count(third, "sitemap/history/not_modified") == len(listed) - 1, third.stats

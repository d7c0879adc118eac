"""Rich sitemaps beside the crawl history: a page that answers 304, or is kept listed after a
failure, is listed with the extensions it had (real crawls of tests/site_rich.py on 127.0.0.1)."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from sitemap_spider.history.record import EXTENSIONS_UNKNOWN, RENDER_UNDECIDED, PageRecord
from sitemap_spider.history.store import HistoryStore
from tests.crawl_fixtures import CrawlResult, run_crawl
from tests.site_rich import SETTINGS, RichSite, build_rich_site
from tests.site_server import HTML, SiteServer, html_page, links
from tests.site_spec import Route, SiteRequest
from tests.sitemap_check import read_sitemap_set
from tests.test_rich_site import check

#: Static fetches only: which pages render=auto sends to a browser is not what this is about.
NO_RENDER = ("-a", "render=never")


class EtagSite:
    """The rich site, each 200 answered with an ETag of its body and a 304 to a matching If-None-Match."""

    def __init__(self, server: SiteServer, site: RichSite) -> None:
        self.routes = dict(site.spec.routes)
        self.not_modified = 0
        self.failing: set[str] = set()
        server.routes = {}
        server.dynamic = [(re.compile(r"/.*"), self.respond)]

    def respond(self, request: SiteRequest) -> Route:
        route = self.routes.get(request.target)
        if route is None:
            return Route(status=404, body=b"not found")
        if request.target in self.failing:
            return Route(status=503, body=b"down for a moment")
        if route.status != 200:
            return route
        etag = '"' + hashlib.sha256(route.body + repr(route.headers).encode()).hexdigest()[:16] + '"'
        asked = {name.lower(): value for name, value in request.headers}.get("if-none-match")
        if asked == etag:
            self.not_modified += 1
            return Route(status=304, headers=(("ETag", etag),))
        return replace(route, headers=(*route.headers, ("ETag", etag)))


@pytest.fixture
def etag_site() -> Iterator[tuple[RichSite, EtagSite]]:
    with SiteServer() as server:
        site = build_rich_site(server.origin)
        yield site, EtagSite(server, site)


def _crawl(site: RichSite, tmp_path: Path) -> CrawlResult:
    # No backing off from the 503s of the failing pages: the crawl would wait for minutes.
    result = run_crawl(site.spec.start_url, tmp_path, *NO_RENDER, settings=SETTINGS | {"SITEMAP_MAX_BACKOFF": "0"})
    assert result.returncode == 0, result.describe()
    read_sitemap_set(result.output_dir, site.spec.origin + "/")
    return result


def _check_again(result: CrawlResult, site: RichSite, first: CrawlResult) -> None:
    """A re-crawl publishes the first crawl's bytes; the hreflang problems are found again (they
    are the set's), those of a page's images or videos only when the page itself is read."""
    assert result.files() == first.files()
    assert result.report is not None
    problems = {(row["kind"], row["reason"], row["page"]) for row in result.report["extension_problems"]}
    assert problems == {problem for problem in site.problems if problem[0] == "hreflang"}


def test_pages_answering_304_keep_their_extensions(etag_site: tuple[RichSite, EtagSite], tmp_path: Path) -> None:
    site, server = etag_site
    first = _crawl(site, tmp_path)
    check(first, site)
    assert server.not_modified == 0
    second = _crawl(site, tmp_path)  # the same output directory and history: a scheduled re-crawl
    _check_again(second, site, first)
    listed = len(site.spec.expected_listed())
    assert second.report is not None
    # Every listed page answered 304, and so did the pages left out for what they say of themselves.
    assert second.report["stats"]["sitemap/history/not_modified"] == server.not_modified >= listed


def test_pages_kept_on_a_bad_day_keep_their_extensions(etag_site: tuple[RichSite, EtagSite], tmp_path: Path) -> None:
    site, server = etag_site
    first = _crawl(site, tmp_path)
    check(first, site)
    # Pages of a cluster, a gallery, a video and a news article fail for a moment.
    server.failing = {"/fr/", "/at/", "/gallery", "/video-ld", "/news/fresh"}
    kept = _crawl(site, tmp_path)
    _check_again(kept, site, first)
    assert kept.report is not None
    assert kept.report["stats"]["sitemap/kept/transient_error"] == len(server.failing)


def test_a_history_of_the_first_layout_is_brought_up_to_date(
    etag_site: tuple[RichSite, EtagSite], tmp_path: Path
) -> None:
    site, server = etag_site
    first = _crawl(site, tmp_path)
    check(first, site)
    history = tmp_path / "history.sqlite"
    with sqlite3.connect(history) as db:  # the layout before records kept extensions
        db.execute("ALTER TABLE pages DROP COLUMN extensions")
    db.close()
    # Records that do not know a page's extensions are not asked for a 304: the page is fetched whole.
    second = _crawl(site, tmp_path)
    check(second, site)
    assert second.files() == first.files()
    assert server.not_modified == 0
    store = HistoryStore(history)
    try:
        assert all(record.extensions != EXTENSIONS_UNKNOWN for record in store.records())
        assert any(record.extensions for record in store.records())
    finally:
        store.close()
    third = _crawl(site, tmp_path)
    _check_again(third, site, first)
    assert third.report is not None
    assert third.report["stats"]["sitemap/history/not_modified"] == server.not_modified
    assert server.not_modified >= len(site.spec.expected_listed())


def test_a_record_keeps_its_extensions_on_the_wire_and_reads_the_older_form() -> None:
    record = PageRecord("http://a/", "http://a/", None, None, '"e"', 1.0, 1.0, None, 200, 1.0,
                        extensions='{"images": ["http://a/i.jpg"]}', render="browser",
                        canonical="http://a/c")  # fmt: skip
    assert PageRecord.from_json(record.to_json()) == record
    assert PageRecord.from_row(record.row()) == record
    # Records sent by a process of an earlier layout: before records kept a canonical URL (none,
    # then), before records kept the render decision (not known, then), before records of pages
    # left out, and before records kept extensions.
    no_canonical = replace(record, canonical=None)
    undecided = replace(no_canonical, render=RENDER_UNDECIDED)
    for fields, expected in ((-1, no_canonical), (-2, undecided), (-3, undecided)):
        older = json.loads(record.to_json())[:fields]
        assert PageRecord.from_json(json.dumps(older)) == expected
        assert PageRecord.from_row(record.row()[:fields]) == expected
    oldest = json.loads(record.to_json())[:-4]
    assert PageRecord.from_json(json.dumps(oldest)) == replace(undecided, extensions=None)


def test_a_rich_site_crawled_again_tells_what_changed(etag_site: tuple[RichSite, EtagSite], tmp_path: Path) -> None:
    """The set comparison of a rich set with the rich set before it: news files passed over,
    extensions no change, a lastmod that moved a change."""
    site, server = etag_site
    origin = site.spec.origin
    routes = server.routes
    page = routes["/gallery"]
    routes["/gallery"] = replace(page, headers=(*page.headers, ("Last-Modified", "Mon, 01 Jan 2024 10:00:00 GMT")))
    # Linked from the start, not there yet.
    routes["/"] = replace(routes["/"], body=html_page("Home", links(*sorted(routes), "/added")))
    routes["/added"] = Route(status=404, body=b"not yet")
    first = _crawl(site, tmp_path)
    assert first.report is not None and first.report["changes"]["previous"] == "first set"
    assert list(first.output_dir.glob("sitemap-news-*.xml")), "a set with news files"

    # Edited (a Last-Modified that moves while the page does not is not believed).
    edited = page.body.replace(b'<img src="/img/a.jpg" alt="a">', b'<p>More</p><img src="/img/a.jpg" alt="a">')
    assert edited != page.body
    routes["/gallery"] = replace(
        page, body=edited, headers=(*page.headers, ("Last-Modified", "Tue, 02 Jan 2024 10:00:00 GMT"))
    )
    routes["/added"] = Route(headers=(("Content-Type", HTML),), body=html_page("Added", '<img src="/img/new.jpg">'))
    routes["/news/og"] = Route(status=404, body=b"gone")
    second = _crawl(site, tmp_path)
    report = second.report
    assert report is not None
    assert report["changes"] == {"previous": "compared", "added": 1, "changed": 1, "removed": 1}
    assert (report["added_urls"], report["changed_urls"], report["removed_urls"]) == (
        [origin + "/added"], [origin + "/gallery"], [origin + "/news/og"]
    )
    stats = report["stats"]
    assert (stats["sitemap/diff/added"], stats["sitemap/diff/changed"], stats["sitemap/diff/removed"]) == (1, 1, 1)
    assert "sitemap/diff/none" not in stats
    # The pages that answered 304 are in the set with their extensions, and no change.
    assert stats["sitemap/history/not_modified"] >= len(site.expected) - 1

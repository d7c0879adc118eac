"""Rich sitemaps end to end (issue 17): the real ``scrapy crawl`` of tests/site_rich.py on 127.0.0.1.

Each page's ``<url>`` must carry exactly its expected extensions, the news files exactly the
recent articles, every file must be valid (the extensions' XSDs loaded, strictly) and read
back by Scrapy; the report lists what was left out; a resumable crawl and ``scrapy publish``
of the crawl's feed give the same bytes.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
from sitemap_check import file_bytes, read_sitemap_set

from tests.crawl_fixtures import REPO_ROOT, CrawlResult, run_crawl
from tests.fault_server import FaultPlan, FaultServer
from tests.site_rich import SETTINGS, RichSite, build_rich_site
from tests.site_server import HTML, SiteServer, html_page, links
from tests.site_spec import Listed, Route, SiteSpec

_URL: Final = re.compile(r"<url><loc>([^<]+)</loc>(.*)</url>")


def url_lines(output: Path, prefix: str) -> dict[str, str]:
    """loc -> what follows its <loc> in its <url>, for every file named ``prefix``-NNNNN.xml."""
    found: dict[str, str] = {}
    for path in sorted(output.glob(f"{prefix}-[0-9]*.xml")):
        for line in file_bytes(path).decode("ascii").splitlines():
            match = _URL.fullmatch(line)
            if match:
                found[match.group(1)] = match.group(2)
    return found


def check(result: CrawlResult, site: RichSite) -> None:
    assert result.returncode == 0, result.describe()
    news: list[dict[str, str]] = []
    urls = read_sitemap_set(result.output_dir, site.spec.origin + "/", news)
    assert [url["loc"] for url in urls] == [entry["loc"] for entry in site.spec.expected_listed()]
    written = url_lines(result.output_dir, "sitemap")
    assert {loc: xml for loc, xml in written.items() if xml} == site.expected
    assert url_lines(result.output_dir, "sitemap-news") == site.news
    assert [url["loc"] for url in news] == sorted(site.news)
    report = result.report
    assert report is not None
    problems = {(row["kind"], row["reason"], row["page"]) for row in report["extension_problems"]}
    assert problems == site.problems
    assert report["hreflang_unchecked_hosts"] == ["www.example.dk"]
    stats = report["stats"]
    assert stats["sitemap/hreflang/not_reciprocal"] == 1
    assert stats["sitemap/hreflang/target_not_listed"] == 1
    assert stats["sitemap/hreflang/bad_hreflang"] == 1
    assert stats["sitemap/hreflang/duplicate_hreflang"] == 2
    assert stats["sitemap/hreflang/unchecked"] == 1
    assert stats["sitemap/video/missing_field"] == 1
    assert stats["sitemap/news/urls"] == 2
    assert stats["sitemap/news/too_old"] == 1


def test_a_rich_site_is_written_exactly_and_published_the_same_every_way(
    rich_site: tuple[RichSite, SiteServer], tmp_path: Path
) -> None:
    site, _ = rich_site
    feed = tmp_path / "entries.jl"
    crawled = run_crawl(site.spec.start_url, tmp_path / "crawl", "-o", f"{feed}:jsonl", settings=SETTINGS)
    check(crawled, site)
    published = crawled.files()

    # The same entries through scrapy publish: the same bytes.
    out = tmp_path / "published"
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "publish", str(feed), "-s", f"SITEMAP_OUTPUT_DIR={out}",
         "-s", f"SITEMAP_BASE_URL={site.spec.origin}/"],
        cwd=REPO_ROOT, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == published

    # A resumable crawl (entries in SQLite) gives the same bytes.
    # Without rendering: a page rendered in one crawl and not in the other is the same page, but
    # which pages render=auto sends to the browser is not what this compares.
    resumable = run_crawl(
        site.spec.start_url, tmp_path / "resumable", "-a", "render=never",
        settings=SETTINGS | {"JOBDIR": str(tmp_path / "job")},
    )  # fmt: skip
    check(resumable, site)
    assert resumable.files() == published


def test_without_the_options_only_hreflang_is_written(rich_site: tuple[RichSite, SiteServer], tmp_path: Path) -> None:
    site, _ = rich_site
    result = run_crawl(site.spec.start_url, tmp_path)
    assert result.returncode == 0, result.describe()
    written = url_lines(result.output_dir, "sitemap")
    hreflang = {loc: xml for loc, xml in site.expected.items() if xml.startswith("<xhtml:")}
    assert {loc: xml for loc, xml in written.items() if xml} == hreflang
    assert not list(result.output_dir.glob("sitemap-news-*"))
    read_sitemap_set(result.output_dir, site.spec.origin + "/")


def _js_page(origin: str, name: str, other: str) -> bytes:
    # The alternates exist only in the rendered DOM: a script adds them to <head>.
    script = "".join(
        f"var l=document.createElement('link');l.rel='alternate';l.hreflang='{h}';l.href='{origin}/js/{h}';"
        "document.head.appendChild(l);"
        for h in sorted((name, other))
    )
    return html_page(f"JS {name}", f"<p>Page {name}</p><script>{script}</script>")


def test_alternates_of_the_rendered_dom(tmp_path: Path) -> None:
    with SiteServer() as server:
        origin = server.origin
        routes = {
            "/": Route(headers=(("Content-Type", HTML),), body=html_page("Home", links("/js/en", "/js/fr")), expect=Listed()),
            "/js/en": Route(headers=(("Content-Type", HTML),), body=_js_page(origin, "en", "fr"), expect=Listed()),
            "/js/fr": Route(headers=(("Content-Type", HTML),), body=_js_page(origin, "fr", "en"), expect=Listed()),
        }
        server.serve(SiteSpec(origin, routes=routes))
        result = run_crawl(origin + "/", tmp_path, "-a", "render=always", settings={"SITEMAP_BROWSER_PATH": "/usr/bin/chromium"})
    assert result.returncode == 0, result.describe()
    read_sitemap_set(result.output_dir, origin + "/")
    cluster = f'<xhtml:link rel="alternate" hreflang="en" href="{origin}/js/en"/><xhtml:link rel="alternate" hreflang="fr" href="{origin}/js/fr"/>'
    assert url_lines(result.output_dir, "sitemap") == {origin + "/": "", origin + "/js/en": cluster, origin + "/js/fr": cluster}


@pytest.fixture
def bigger_rich_site() -> Iterator[RichSite]:
    with SiteServer() as server:
        site = build_rich_site(server.origin, plain_pages=80)
        server.serve(site.spec)
        yield site


@pytest.mark.parametrize("mode", ["workers", "shared"])
def test_every_crawl_mode_gives_the_same_bytes(
    mode: str, bigger_rich_site: RichSite, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Rich entries reach the set through each mode's take: a second process's channel, Redis."""
    site = bigger_rich_site
    one = run_crawl(site.spec.start_url, tmp_path / "one", "-a", "render=never", settings=SETTINGS | {"SITEMAP_WORKERS": "1"})
    check(one, site)
    if mode == "workers":
        extra = {"SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "0"}
    else:
        redis_url = request.getfixturevalue("redis_url")
        extra = {"SITEMAP_REDIS_URL": redis_url, "SITEMAP_REDIS_IDLE_SECONDS": "0.5", "SITEMAP_REDIS_LEASE_SECONDS": "2"}
    other = run_crawl(site.spec.start_url, tmp_path / mode, "-a", "render=never", settings=SETTINGS | extra, timeout=300)
    check(other, site)
    if mode == "workers":
        assert "a second crawling process" in other.stderr, other.describe()
    assert other.files() == one.files()


def test_extensions_turned_on_after_a_history_fetch_the_pages_whole_once(
    rich_site: tuple[RichSite, SiteServer], tmp_path: Path
) -> None:
    """A history kept with images, videos and news off knows none of them: the crawl that turns
    them on fetches every listed page whole instead of asking for a 304, and the next one asks."""
    site, server = rich_site
    server.validators = True  # ETags and 304s, as a static file server gives them
    plain = run_crawl(site.spec.start_url, tmp_path)
    assert plain.returncode == 0, plain.describe()
    seen = len(server.requests)
    turned_on = run_crawl(site.spec.start_url, tmp_path, settings=SETTINGS)
    check(turned_on, site)
    # No listed page was asked for a 304 (the pages left out still were: they need no extensions).
    listed = {entry["loc"][len(site.spec.origin) :] for entry in site.spec.expected_listed()}
    conditional = {r.target for r in server.requests[seen:] if "If-None-Match" in dict(r.headers)}
    assert conditional and not conditional & listed, (conditional, listed)
    assert "Extensions turned on since the last crawl (images, news, videos)" in turned_on.stderr
    published = turned_on.files()
    again = run_crawl(site.spec.start_url, tmp_path, settings=SETTINGS)
    assert again.returncode == 0, again.describe()
    assert again.files() == published
    assert again.report is not None
    assert again.report["stats"].get("sitemap/history/not_modified", 0) >= len(listed), again.report["stats"]


def test_a_page_kept_while_extensions_were_turned_on_is_fetched_whole_later(tmp_path: Path) -> None:
    """The crawl that turns images on lists /gallery from its old record while it fails (kept,
    without images): the history then notes only the kinds both crawls read, and the next crawl
    fetches the listed pages whole again, /gallery with its images."""
    with FaultServer() as server:
        site = build_rich_site(server.origin)
        server.serve(site.spec)
        server.validators = True
        quick = {"SITEMAP_RETRY_TIMES": "1", "SITEMAP_RETRY_DELAY": "0.1", "SITEMAP_RETRY_LAST_PASS_DELAY": "1"}
        plain = run_crawl(site.spec.start_url, tmp_path, settings=quick)
        assert plain.returncode == 0, plain.describe()
        server.inject(FaultPlan(share=0, outage_after=0, refuse_after=0, fixed=(("/gallery", "503", 10**9),)))
        failing = run_crawl(site.spec.start_url, tmp_path, settings={**SETTINGS, **quick})
        assert failing.returncode == 0, failing.describe()
        gallery = site.spec.origin + "/gallery"
        assert gallery in url_lines(failing.output_dir, "sitemap")  # kept, from its old record
        assert "image:" not in url_lines(failing.output_dir, "sitemap")[gallery]
        server.inject(FaultPlan(share=0, outage_after=0, refuse_after=0))
        seen = len(server.requests)
        back = run_crawl(site.spec.start_url, tmp_path, settings={**SETTINGS, **quick})
        check(back, site)
        asked = [r for r in server.requests[seen:] if r.target == "/gallery"]
        assert asked and "If-None-Match" not in dict(asked[0].headers)


def test_a_history_kept_with_hreflang_off_notes_no_kind(tmp_path: Path) -> None:
    """A history written with hreflang off knows no kind (""), not the default's hreflang: when
    /en/ fails during the crawl that turns it back on (listed from its old record, without
    alternates), the next crawl fetches /en/ whole and lists its alternates."""
    with FaultServer() as server:
        site = build_rich_site(server.origin)
        server.serve(site.spec)
        server.validators = True
        quick = {"SITEMAP_RETRY_TIMES": "1", "SITEMAP_RETRY_DELAY": "0.1", "SITEMAP_RETRY_LAST_PASS_DELAY": "1"}
        off = run_crawl(site.spec.start_url, tmp_path, settings={**quick, "SITEMAP_HREFLANG": "off"})
        assert off.returncode == 0, off.describe()
        server.inject(FaultPlan(share=0, outage_after=0, refuse_after=0, fixed=(("/en/", "503", 10**9),)))
        failing = run_crawl(site.spec.start_url, tmp_path, settings=quick)
        assert failing.returncode == 0, failing.describe()
        english = site.spec.origin + "/en/"
        assert url_lines(failing.output_dir, "sitemap")[english] == ""  # kept, from its old record
        server.inject(FaultPlan(share=0, outage_after=0, refuse_after=0))
        back = run_crawl(site.spec.start_url, tmp_path, settings=quick)
        assert back.returncode == 0, back.describe()
        assert url_lines(back.output_dir, "sitemap")[english] == site.expected[english]

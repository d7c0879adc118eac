"""What a publish changed, and IndexNow (sitemap_spider/indexnow.py): the real ``scrapy publish`` and
``scrapy crawl`` in subprocesses, POSTing to a real local endpoint (tests/indexnow_endpoint.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from scrapy.settings import Settings

from sitemap_spider.config import ConfigError, SitemapConfig, apply_defaults
from sitemap_spider.indexnow import DEFAULT_ENDPOINT, IndexNowConfig, retry_after
from tests.crawl_fixtures import REPO_ROOT, RunningSite, run_crawl
from tests.indexnow_endpoint import IndexNowEndpoint
from tests.site_server import HTML, closed_port, html_page
from tests.site_spec import Route
from tests.sitemap_check import read_sitemap_set

BASE = "https://www.example.com/"
KEY = "a1b2c3d4-e5f6-4a5b-9c8d-7e6f5a4b3c2d"


@pytest.fixture
def endpoint() -> Iterator[IndexNowEndpoint]:
    """An IndexNow endpoint served on 127.0.0.1 for the length of a test."""
    server = IndexNowEndpoint().start()
    try:
        yield server
    finally:
        server.stop()


def publish(
    tmp_path: Path, pages: dict[str, str | None], *settings: str, base: str = BASE
) -> subprocess.CompletedProcess[str]:
    """``scrapy publish`` of ``pages`` (path -> lastmod) as JSON Lines into ``tmp_path/out``, served from ``base``."""
    source = tmp_path / "entries.jl"
    with source.open("w", encoding="utf-8") as out:
        for path, lastmod in pages.items():
            out.write(json.dumps({"loc": BASE + path, "lastmod": lastmod}) + "\n")
    args = [sys.executable, "-m", "scrapy", "publish", str(source), "-s", f"SITEMAP_OUTPUT_DIR={tmp_path / 'out'}"]
    args += ["-s", f"SITEMAP_BASE_URL={base}"]
    for setting in settings:
        args += ["-s", setting]
    done = subprocess.run(
        args, check=False, cwd=REPO_ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{done.returncode}\n{done.stdout}\n{done.stderr[-4000:]}"
    read_sitemap_set(tmp_path / "out", base)
    return done


def indexnow(server: IndexNowEndpoint | str) -> tuple[str, ...]:
    url = server if isinstance(server, str) else server.url
    return (f"SITEMAP_INDEXNOW_KEY={KEY}", f"SITEMAP_INDEXNOW_ENDPOINT={url}")


def pages(count: int, lastmod: str = "2024-05-01") -> dict[str, str | None]:
    return {f"p/{i:06d}.html": lastmod for i in range(count)}


def test_second_publish_submits_exactly_what_changed(tmp_path: Path, endpoint: IndexNowEndpoint) -> None:
    before = pages(50)
    first = publish(tmp_path, before, *indexnow(endpoint))
    assert "Changed since the previous set: none (first set)" in first.stdout
    assert endpoint.posts == []  # a first set submits nothing
    key_file = tmp_path / "out" / f"{KEY}.txt"
    assert key_file.read_text() == KEY
    after = dict(before)
    del after["p/000010.html"]
    after["p/000020.html"] = "2024-06-01"
    after["p/000030.html"] = "2024-05-01T00:00:00Z"  # the same instant: no change
    after["new.html"] = None
    second = publish(tmp_path, after, *indexnow(endpoint))
    assert "Changed since the previous set: 1 added, 1 changed, 1 removed" in second.stdout
    assert "IndexNow: 3 URL(s) submitted in 1 request(s)" in second.stdout
    assert endpoint.posts == [
        {
            "host": "www.example.com",
            "key": KEY,
            "keyLocation": BASE + f"{KEY}.txt",
            "urlList": [BASE + "new.html", BASE + "p/000010.html", BASE + "p/000020.html"],
        }
    ]
    assert endpoint.paths == ["/indexnow"]
    assert endpoint.content_types == ["application/json; charset=utf-8"]
    assert key_file.read_text() == KEY  # published again with the set
    assert not list((tmp_path / "out").glob(".*"))  # no spool or staging file left in the served directory


def test_groups_submit_what_changed_across_them(tmp_path: Path, endpoint: IndexNowEndpoint) -> None:
    """SITEMAP_GROUPS: a set in series per group; a page moved to another group is no change."""
    groups = '[{"group": "odd", "pattern": "[13579]\\\\.html$"}, {"group": "low", "prefix": "/p/00000"}]'
    before = pages(30)
    publish(tmp_path, before, *indexnow(endpoint), f"SITEMAP_GROUPS={groups}", "SITEMAP_MAX_URLS=4")
    names = sorted(path.name for path in (tmp_path / "out").glob("sitemap-*.xml"))
    assert names[0] == "sitemap-00001.xml" and "sitemap-low-00001.xml" in names and "sitemap-odd-00004.xml" in names
    after = dict(before)
    del after["p/000013.html"]  # in "odd"
    after["p/000004.html"] = "2024-06-01"  # in "low"
    after["p/000020.html"] = "2024-06-01"  # in the plain series
    after["q/new.html"] = None
    # The rules change too: "low" goes, its pages go to the plain series (or stay in "odd").
    second = publish(tmp_path, after, *indexnow(endpoint), f"SITEMAP_GROUPS={groups[:groups.index('}') + 1]}]")
    assert "Changed since the previous set: 1 added, 2 changed, 1 removed" in second.stdout, second.stdout
    assert "By group: odd 14, other 16." in second.stdout
    assert endpoint.posts[-1]["urlList"] == [
        BASE + "p/000004.html", BASE + "p/000013.html", BASE + "p/000020.html", BASE + "q/new.html"
    ]
    assert not list((tmp_path / "out").glob("sitemap-low-*"))  # the files of a group gone are removed


def test_batches_of_at_most_10000(tmp_path: Path, endpoint: IndexNowEndpoint) -> None:
    publish(tmp_path, pages(25_000), *indexnow(endpoint))
    after = {path: lastmod for path, lastmod in pages(25_000).items() if not path.startswith("p/00")}
    after |= {f"q/{i:06d}.html": None for i in range(15_001)}  # 10,000 removed above, 15,001 added
    done = publish(tmp_path, after, *indexnow(endpoint))
    assert "15,001 added, 0 changed, 10,000 removed" in done.stdout
    assert [len(post["urlList"]) for post in endpoint.posts] == [10_000, 10_000, 5_001]
    expected = sorted([BASE + f"p/{i:06d}.html" for i in range(10_000)] + [BASE + f"q/{i:06d}.html" for i in range(15_001)])
    assert endpoint.submitted() == expected


def test_only_urls_under_the_key_file_are_submitted(tmp_path: Path, endpoint: IndexNowEndpoint) -> None:
    maps = BASE + "p/"
    publish(tmp_path, {"a.html": None, "p/b.html": None}, *indexnow(endpoint), base=maps)
    done = publish(tmp_path, {"a.html": "2024-01-01", "p/b.html": "2024-01-01"}, *indexnow(endpoint), base=maps)
    assert (tmp_path / "out" / f"{KEY}.txt").read_text() == KEY
    assert endpoint.posts == [
        {"host": "www.example.com", "key": KEY, "keyLocation": maps + f"{KEY}.txt", "urlList": [maps + "b.html"]}
    ]
    assert "1 changed URL(s) not under the base URL" in done.stderr


def test_429_is_retried_after_retry_after(tmp_path: Path, endpoint: IndexNowEndpoint) -> None:
    publish(tmp_path, pages(5), *indexnow(endpoint))
    endpoint.script = [(429, {"Retry-After": "1"})]
    done = publish(tmp_path, pages(5, "2024-07-01"), *indexnow(endpoint))
    assert "IndexNow: 5 URL(s) submitted in 2 request(s)" in done.stdout
    assert len(endpoint.posts) == 2 and endpoint.posts[0] == endpoint.posts[1]


@pytest.mark.parametrize(("status", "posts"), [(500, 3), (503, 3), (403, 1), (422, 1)])
def test_endpoint_failing_never_fails_the_publish(
    tmp_path: Path, endpoint: IndexNowEndpoint, status: int, posts: int
) -> None:
    publish(tmp_path, pages(5), *indexnow(endpoint))
    endpoint.status = status
    endpoint.script = [(status, {"Retry-After": "0"})] * 3
    done = publish(tmp_path, {**pages(5), "new.html": None}, *indexnow(endpoint))
    assert "1 added, 0 changed, 0 removed" in done.stdout
    assert "IndexNow: 1 URL(s) not submitted" in done.stderr and str(status) in done.stderr
    assert len(endpoint.posts) == posts  # 429 and 5xx retried, other refusals not
    assert BASE + "new.html" in {url["loc"] for url in read_sitemap_set(tmp_path / "out", BASE)}


def test_endpoint_down_never_fails_the_publish(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{closed_port()}/indexnow"
    publish(tmp_path, pages(5), *indexnow(down))
    done = publish(tmp_path, pages(6), *indexnow(down))
    assert "IndexNow: 1 URL(s) not submitted" in done.stderr, done.stderr[-2000:]


@pytest.mark.parametrize("key", ["short", "x" * 129, "has_underscore1", "has space 123"])
def test_bad_key_fails_at_start_up_naming_the_setting(tmp_path: Path, key: str) -> None:
    source = tmp_path / "urls.txt"
    source.write_text(BASE + "a\n")
    args = [sys.executable, "-m", "scrapy", "publish", str(source), "-s", f"SITEMAP_OUTPUT_DIR={tmp_path / 'out'}"]
    done = subprocess.run(
        [*args, "-s", f"SITEMAP_INDEXNOW_KEY={key}"], check=False, cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert done.returncode == 2 and "SITEMAP_INDEXNOW_KEY" in done.stderr, done.stderr[-2000:]
    assert not (tmp_path / "out").exists()


def test_bad_endpoint_fails_at_start_up_naming_the_setting(tmp_path: Path) -> None:
    done = run_crawl(
        "http://127.0.0.1:1/", tmp_path, settings={"SITEMAP_INDEXNOW_KEY": KEY, "SITEMAP_INDEXNOW_ENDPOINT": "ftp://x/"}
    )
    assert done.returncode != 0 and "SITEMAP_INDEXNOW_ENDPOINT" in done.stderr, done.describe()
    done = run_crawl("http://127.0.0.1:1/", tmp_path, settings={"SITEMAP_INDEXNOW_KEY": "bad!key!"})
    assert done.returncode != 0 and "SITEMAP_INDEXNOW_KEY" in done.stderr, done.describe()


def config(**values: str) -> SitemapConfig:
    settings = Settings(values)
    apply_defaults(settings)
    return SitemapConfig.from_settings(settings)


def test_settings() -> None:
    assert config().indexnow is None
    assert config().output_options(BASE).extra_files == ()
    on = config(SITEMAP_INDEXNOW_KEY=KEY)
    assert on.indexnow == IndexNowConfig(KEY, DEFAULT_ENDPOINT)
    assert on.output_options(BASE).extra_files == ((f"{KEY}.txt", KEY.encode()),)
    assert config(SITEMAP_INDEXNOW_KEY="x" * 128).indexnow is not None
    assert config(SITEMAP_INDEXNOW_KEY="Ab-34567").indexnow is not None


@pytest.mark.parametrize("url", ["ftp://x/", "http://127.0.0.1:abc/indexnow", "indexnow", "https:///indexnow"])
def test_bad_endpoint_setting(url: str) -> None:
    with pytest.raises(ConfigError, match="^SITEMAP_INDEXNOW_ENDPOINT"):
        config(SITEMAP_INDEXNOW_KEY=KEY, SITEMAP_INDEXNOW_ENDPOINT=url)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(None, 2.0), ("0", 0.0), ("7", 7.0), ("3600", 60.0), ("soon", 2.0), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0)],
)
def test_retry_after(value: str | None, seconds: float) -> None:
    assert retry_after(value, 2.0) == seconds


def _target(site: RunningSite, loc: str) -> str:
    return loc[len(site.origin) :]


def _link_from_start(site: RunningSite, target: str, status: int = 200) -> None:
    """Serve ``target`` (a page, or a 404 at ``status=404``) and link to it from the start page."""
    routes = site.server.routes
    routes[target] = Route(status=status, headers=(("Content-Type", HTML),), body=html_page(target))
    start = routes[_target(site, site.start_url)]
    link = f'<a href="{target}">{target}</a>'.encode()
    if link not in start.body:
        routes[_target(site, site.start_url)] = replace(start, body=start.body.replace(b"</body>", link + b"</body>"))


def _edited(body: bytes) -> bytes:
    """``body`` with a sentence more in its main content (what the history's fingerprint reads)."""
    for closing in (b"</main>", b"</article>", b"</body>"):
        if closing in body:
            return body.replace(closing, b"<p>A new sentence.</p>" + closing, 1)
    return body + b"<p>A new sentence.</p>"


def test_crawled_twice(case_site: RunningSite, endpoint: IndexNowEndpoint, tmp_path: Path) -> None:
    settings = dict(p.split("=", 1) for p in indexnow(endpoint))
    _link_from_start(case_site, "/indexnow-deleted.html")
    first = run_crawl(case_site.start_url, tmp_path, settings=settings)
    assert first.returncode == 0, first.describe()
    assert first.report is not None and first.report["changes"] == {"previous": "first set", "added": 0, "changed": 0, "removed": 0}
    assert first.report["stats"]["sitemap/diff/none"] == "first set"
    assert endpoint.posts == []
    base = case_site.origin + "/"
    before = {url["loc"]: url.get("lastmod") for url in read_sitemap_set(first.output_dir, base)}
    assert (first.output_dir / f"{KEY}.txt").read_text() == KEY

    routes = case_site.server.routes
    plain = [
        loc
        for loc in before
        if "?" not in loc and "%" not in loc and _target(case_site, loc) in routes
        and loc not in (case_site.start_url, base)
    ]
    dated = next(
        loc for loc in plain if before[loc] and any(n == "Last-Modified" for n, _ in routes[_target(case_site, loc)].headers)
    )
    # Marked noindex rather than deleted: its links still lead on to the pages only it links to.
    gone = next(loc for loc in plain if loc != dated and b"<head>" in routes[_target(case_site, loc)].body)
    route = routes[_target(case_site, dated)]
    # Edited too: with the crawl history (on by default), a Last-Modified that moves while the
    # page does not is not believed.
    routes[_target(case_site, dated)] = replace(
        route,
        body=_edited(route.body),
        headers=tuple((n, "Tue, 02 Jan 2024 03:04:05 GMT" if n == "Last-Modified" else v) for n, v in route.headers),
    )
    noindex = routes[_target(case_site, gone)]
    routes[_target(case_site, gone)] = replace(
        noindex, body=noindex.body.replace(b"<head>", b'<head><meta name="robots" content="noindex">', 1)
    )
    _link_from_start(case_site, "/indexnow-deleted.html", status=404)
    _link_from_start(case_site, "/indexnow-added.html")

    second = run_crawl(case_site.start_url, tmp_path, settings=settings)
    assert second.returncode == 0, second.describe()
    after = {url["loc"]: url.get("lastmod") for url in read_sitemap_set(second.output_dir, base)}
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(loc for loc in set(after) & set(before) if after[loc] != before[loc])
    # The start page changed too: it links to the added page now, while its Last-Modified stayed
    # (a header that stays while the content changes does not date the change: crawl/dates.py).
    assert (added, changed, removed) == (
        [base + "indexnow-added.html"], sorted([base, dated]), sorted([gone, base + "indexnow-deleted.html"])
    )
    report = second.report
    assert report is not None
    assert report["changes"] == {"previous": "compared", "added": 1, "changed": 2, "removed": 2}
    assert (report["added_urls"], report["changed_urls"], report["removed_urls"]) == (added, changed, removed)
    stats = report["stats"]
    assert (stats["sitemap/diff/added"], stats["sitemap/diff/changed"], stats["sitemap/diff/removed"]) == (1, 2, 2)
    assert stats["sitemap/indexnow/urls"] == 5 and stats["sitemap/indexnow/requests"] == 1
    assert "changed since the previous set: 1 added, 2 changed, 2 removed" in second.stderr
    assert endpoint.submitted() == sorted(added + changed + removed)
    assert endpoint.posts[0]["host"] == case_site.origin.split("://")[1]
    assert endpoint.posts[0]["keyLocation"] == base + f"{KEY}.txt"


def test_crawl_with_endpoint_down_still_publishes(case_site: RunningSite, tmp_path: Path) -> None:
    settings = dict(p.split("=", 1) for p in indexnow(f"http://127.0.0.1:{closed_port()}/indexnow"))
    first = run_crawl(case_site.start_url, tmp_path, settings=settings)
    assert first.returncode == 0, first.describe()
    _link_from_start(case_site, "/indexnow-added.html")
    second = run_crawl(case_site.start_url, tmp_path, settings=settings)
    assert second.returncode == 0, second.describe()
    assert second.report is not None
    stats = second.report["stats"]
    # The added page, and the start page that now links to it (changed: its header stayed).
    assert stats["sitemap/diff/added"] == 1 and stats["sitemap/indexnow/not_submitted"] == 2
    assert "sitemap/indexnow/failed" in stats and "sitemap/not_published" not in stats
    assert "IndexNow submission failed" in second.stderr
    assert case_site.origin + "/indexnow-added.html" in {
        url["loc"] for url in read_sitemap_set(second.output_dir, case_site.origin + "/")
    }

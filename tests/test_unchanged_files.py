"""A publish leaves in place every published file whose bytes it would write again
(sitemaps/shards/storage.py): a web server's ETag and Last-Modified of an unchanged sitemap, made
of its inode, size and mtime, stay the same across recrawls, and search engines download only the
files that changed. Both through ``scrapy publish`` and a real crawl of a local site; every set is
validated against the XSDs and read back by Scrapy (``read_sitemap_set``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sitemap_spider.sitemaps.names import INDEX_NAME, LLMS_TXT_NAME, STYLESHEET_NAME
from sitemap_spider.sitemaps.shards.index_dates import published_dates
from tests.crawl_fixtures import REPO_ROOT, file_identities, run_crawl
from tests.site_server import HTML, SiteServer, html_page, links
from tests.site_spec import Route, SiteSpec
from tests.sitemap_check import read_sitemap_set

BASE = "https://www.example.com/"


def publish(tmp_path: Path, pages: dict[str, str], *settings: str) -> subprocess.CompletedProcess[str]:
    """``scrapy publish`` of ``pages`` (path -> lastmod) into ``tmp_path/out``."""
    source = tmp_path / "entries.jl"
    lines = [json.dumps({"loc": BASE + path, "lastmod": day}) + "\n" for path, day in pages.items()]
    source.write_text("".join(lines))
    args = [sys.executable, "-m", "scrapy", "publish", str(source)]
    output = f"SITEMAP_OUTPUT_DIR={tmp_path / 'out'}"
    for setting in (output, "SITEMAP_BASE_URL=" + BASE, "SITEMAP_MAX_URLS=10", *settings):
        args += ["-s", setting]
    environment = dict(os.environ)
    return subprocess.run(args, check=False, cwd=REPO_ROOT, env=environment, capture_output=True, text=True)


def changed_names(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> set[str]:
    """Files added, removed, or another inode or mtime."""
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


@pytest.mark.parametrize("gzip", ["False", "True"])
def test_publishing_the_same_entries_again_leaves_every_file_in_place(tmp_path: Path, gzip: str) -> None:
    pages = {f"p/{i:04d}.html": f"2026-05-{i % 28 + 1:02d}" for i in range(35)}
    settings = (f"SITEMAP_GZIP={gzip}", "SITEMAP_XSL=on")
    first = publish(tmp_path, pages, *settings)
    assert first.returncode == 0, first.stderr[-3000:]
    out = tmp_path / "out"
    before = file_identities(out)
    suffix = ".gz" if gzip == "True" else ""
    shards = [f"sitemap-{n:05d}.xml{suffix}" for n in (1, 2, 3, 4)]
    assert sorted(before) == sorted([*shards, INDEX_NAME, STYLESHEET_NAME])
    urls = read_sitemap_set(out, BASE)

    again = publish(tmp_path, pages, *settings)
    assert again.returncode == 0, again.stderr[-3000:]
    assert file_identities(out) == before
    assert "0 files new or changed, 6 unchanged left in place" in again.stderr, again.stderr[-3000:]
    assert read_sitemap_set(out, BASE) == urls

    # One page of the third file changes: that file and the index (its lastmod for that file) only.
    pages["p/0025.html"] = "2026-06-30"
    third = publish(tmp_path, pages, *settings)
    assert third.returncode == 0, third.stderr[-3000:]
    after = file_identities(out)
    assert changed_names(before, after) == {shards[2], INDEX_NAME}
    lastmods = {url["loc"]: url["lastmod"] for url in read_sitemap_set(out, BASE)}
    assert lastmods[BASE + "p/0025.html"] == "2026-06-30"

    index_dates = published_dates(out / INDEX_NAME)
    assert index_dates is not None and index_dates[shards[2]] == "2026-06-30"

    # One page fewer, not the newest of its file: that file shrinks, and no entry's date says so.
    # The index dates the file by this publish, when it changed, so that a search engine reads it
    # again; the other files keep their dates.
    del pages["p/0030.html"]
    started = datetime.now(UTC).replace(microsecond=0)
    fourth = publish(tmp_path, pages, *settings)
    assert fourth.returncode == 0, fourth.stderr[-3000:]
    final = file_identities(out)
    assert changed_names(after, final) == {shards[3], INDEX_NAME}
    assert len(read_sitemap_set(out, BASE)) == 34
    dates = published_dates(out / INDEX_NAME)
    assert dates is not None
    assert started <= datetime.fromisoformat(dates[shards[3]] or "") <= datetime.now(UTC)
    assert {name: dates[name] for name in shards[:3]} == {name: index_dates[name] for name in shards[:3]}

    # The same entries again: nothing moves, and that file keeps the date of the publish that changed it.
    fifth = publish(tmp_path, pages, *settings)
    assert fifth.returncode == 0, fifth.stderr[-3000:]
    assert file_identities(out) == final
    assert published_dates(out / INDEX_NAME) == dates


PAGES = 12
LAST_MODIFIED = "Fri, 01 May 2026 10:00:00 GMT"


def page_route(number: int, text: str = "The text.", last_modified: str = LAST_MODIFIED) -> Route:
    head = f'<meta name="description" content="Page {number}.">'
    body = html_page(f"Page {number}", f"<main><p>{text}</p></main>", head)
    return Route(headers=(("Content-Type", HTML), ("Last-Modified", last_modified)), body=body)


def small_site(origin: str) -> SiteSpec:
    head = '<meta name="description" content="A site.">'
    home = html_page("Home", links(*(f"/p/{n:02d}.html" for n in range(PAGES))), head)
    routes = {"/": Route(headers=(("Content-Type", HTML), ("Last-Modified", LAST_MODIFIED)), body=home)}
    routes.update({f"/p/{n:02d}.html": page_route(n) for n in range(PAGES)})
    return SiteSpec(origin=origin, routes=routes)


@pytest.mark.parametrize("gzip", ["False", "True"])
def test_a_recrawl_of_an_unchanged_site_leaves_every_file_in_place(tmp_path: Path, gzip: str) -> None:
    settings = {"SITEMAP_MAX_URLS": "5", "SITEMAP_GZIP": gzip, "SITEMAP_LLMS_TXT": "on"}
    with SiteServer() as server:
        spec = small_site(server.origin)
        server.serve(spec)
        base = server.origin + "/"
        first = run_crawl(spec.start_url, tmp_path, settings=settings)
        assert first.returncode == 0, first.describe()
        out = first.output_dir
        before = file_identities(out)
        suffix = ".gz" if gzip == "True" else ""
        shards = [f"sitemap-{n:05d}.xml{suffix}" for n in (1, 2, 3)]
        assert sorted(before) == sorted([*shards, INDEX_NAME, LLMS_TXT_NAME])
        urls = read_sitemap_set(out, base)
        assert len(urls) == PAGES + 1

        second = run_crawl(spec.start_url, tmp_path, settings=settings)
        assert second.returncode == 0, second.describe()
        assert file_identities(out) == before
        assert read_sitemap_set(out, base) == urls

        # /p/07.html (the second file: /, /p/00-03, then /p/04-08) is edited and dated later;
        # its title and description stay, so llms.txt does too.
        server.routes["/p/07.html"] = page_route(7, "Other text.", "Sat, 02 May 2026 10:00:00 GMT")
        third = run_crawl(spec.start_url, tmp_path, settings=settings)
        assert third.returncode == 0, third.describe()
        assert changed_names(before, file_identities(out)) == {shards[1], INDEX_NAME}
        lastmods = {url["loc"]: url.get("lastmod") for url in read_sitemap_set(out, base)}
        assert lastmods[base + "p/07.html"] == "2026-05-02T10:00:00+00:00"

"""The add-on from a Scrapy project that is not this one: its own spider's items become a published set.

The project is written to a temporary directory; it names ``sitemap_spider.Addon`` in
ADDONS and nothing else of ours. Its spider crawls a real local HTTP server.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.sitemap_check import read_sitemap_set, read_urlset

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PAGES = 120

SETTINGS = """
BOT_NAME = "shop"
SPIDER_MODULES = ["shop.spiders"]
ADDONS = {"sitemap_spider.Addon": 0}
ROBOTSTXT_OBEY = False
REMOTE_CONTROL_ENABLED = False
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"
"""

SPIDER = '''
import pathlib
import shutil

import scrapy
from scrapy.linkextractors import LinkExtractor


class Products(scrapy.Spider):
    name = "products"

    def __init__(self, start="", break_dir="", **kwargs):
        super().__init__(**kwargs)
        self.start_url = start
        self.break_dir = break_dir

    async def start(self):
        if self.break_dir:
            # After the start-up checks, before the first item: a folder made a file, as a disk can fail.
            shutil.rmtree(self.break_dir)
            pathlib.Path(self.break_dir).write_text("")
        yield scrapy.Request(self.start_url)

    def parse(self, response):
        if response.url.endswith("/index.html"):
            yield {"url": "not-a-url"}  # the very first item cannot be listed: it must not name the site
        # A project's own item: the page's address under "url", a date, and fields of its own.
        yield {"url": response.url, "lastmod": "2024-05-01", "title": response.css("title::text").get()}
        if response.url.endswith("/index.html"):
            yield {"kind": "summary", "pages": 0}  # not a page: other pipelines and feeds still get it
        for link in LinkExtractor().extract_links(response):
            yield response.follow(link.url)
'''


#: The paths shop_site was asked for.
REQUESTS: list[str] = []


class RecordingHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        REQUESTS.append(self.path)


@pytest.fixture
def shop_site(tmp_path: Path) -> Iterator[str]:
    """A static site of PAGES pages linked in a chain, served on 127.0.0.1."""
    root = tmp_path / "www"
    root.mkdir()
    for n in range(PAGES):
        next_link = f'<a href="p{n + 1}.html">next</a>' if n + 1 < PAGES else ""
        name = "index.html" if n == 0 else f"p{n}.html"
        (root / name).write_text(f"<html><head><title>Page {n}</title></head><body>{next_link}</body></html>")
    # The chain's links name p1.html from the index; the index is p0.
    handler = functools.partial(RecordingHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    REQUESTS.clear()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()


def write_project(where: Path) -> Path:
    (where / "shop" / "spiders").mkdir(parents=True)
    (where / "scrapy.cfg").write_text("[settings]\ndefault = shop.settings\n")
    (where / "shop" / "__init__.py").write_text("")
    (where / "shop" / "settings.py").write_text(SETTINGS)
    (where / "shop" / "spiders" / "__init__.py").write_text("")
    (where / "shop" / "spiders" / "products.py").write_text(textwrap.dedent(SPIDER))
    return where


def run_scrapy(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_a_project_with_the_addon_publishes_its_items_as_a_sitemap_set(shop_site: str, tmp_path: Path) -> None:
    project = write_project(tmp_path / "project")
    out = tmp_path / "sitemaps"
    done = run_scrapy(
        project, "crawl", "products", "-a", f"start={shop_site}",
        "-s", f"SITEMAP_OUTPUT_DIR={out}", "-s", "SITEMAP_MAX_URLS=50", "-s", f"SITEMAP_REPORT={tmp_path / 'r.json'}",
        "-o", f"{tmp_path / 'items.jl'}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    origin = shop_site.rsplit("/", 1)[0]
    # No SITEMAP_BASE_URL: the index is served from the origin of the first entry.
    urls = read_sitemap_set(out, origin + "/")
    expected = sorted([f"{origin}/index.html"] + [f"{origin}/p{n}.html" for n in range(1, PAGES)])
    assert [url["loc"] for url in urls] == expected
    assert {url["lastmod"] for url in urls} == {"2024-05-01"}
    assert len(list(out.glob("sitemap-*.xml"))) == 3  # 120 URLs at 50 per file: sharded and indexed
    assert "Sitemap published: 120 URLs in 3 file(s)" in done.stderr
    # The pipeline hands every item on: the project's own feed still has all of them.
    items = [json.loads(line) for line in (tmp_path / "items.jl").read_text().splitlines()]
    assert len(items) == PAGES + 2
    assert {"kind": "summary", "pages": 0} in items and {"url": "not-a-url"} in items
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["urls"] == PAGES
    assert report["excluded"] == {"invalid": 2}  # "not-a-url", and the summary item (no loc, no url)
    assert "'sitemap/entries': 120" in done.stderr


def test_the_addon_brings_the_sitemap_feed_format(shop_site: str, tmp_path: Path) -> None:
    project = write_project(tmp_path / "project")
    target = tmp_path / "feed" / "urls.xml"
    # FEEDS, not -o: Scrapy checks the format of -o before add-ons load (docs/addon.md says so).
    feeds = json.dumps({str(target): {"format": "sitemap"}})
    done = run_scrapy(
        project, "crawl", "products", "-a", f"start={shop_site}",
        "-s", f"SITEMAP_OUTPUT_DIR={tmp_path / 'sitemaps'}", "-s", f"FEEDS={feeds}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    origin = shop_site.rsplit("/", 1)[0]
    locs = [url["loc"] for url in read_urlset(target)]
    assert sorted(locs) == sorted([f"{origin}/index.html"] + [f"{origin}/p{n}.html" for n in range(1, PAGES)])


def assert_stopped_at_start_up(done: subprocess.CompletedProcess[str], message: str, feed: Path) -> None:
    """One ERROR line naming the setting, no traceback, a failed exit, no request, the feed untouched."""
    assert done.returncode == 1, done.stderr[-3000:]  # Scrapy's exit code of a crawl that could not start
    assert f"ERROR: {message}" in done.stderr, done.stderr[-3000:]
    assert done.stderr.count(message) == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "never retrieved" not in done.stderr, done.stderr[-3000:]
    assert REQUESTS == []
    assert not feed.exists()


def test_a_bad_sitemap_setting_stops_the_project_at_start_up_naming_it(shop_site: str, tmp_path: Path) -> None:
    project = write_project(tmp_path / "project")
    feed = tmp_path / "items.jl"
    done = run_scrapy(
        project, "crawl", "products", "-a", f"start={shop_site}",
        "-s", "SITEMAP_MAX_URLS=60000", "-o", str(feed),
    )  # fmt: skip
    assert_stopped_at_start_up(done, "SITEMAP_MAX_URLS: must be between 1 and 50,000, got 60,000", feed)


@pytest.mark.parametrize("where", ["under a file", "a file"])
def test_an_output_dir_that_cannot_be_written_stops_the_project_at_start_up(
    shop_site: str, tmp_path: Path, where: str
) -> None:
    project = write_project(tmp_path / "project")
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    out = blocker / "sitemaps" if where == "under a file" else blocker
    feed = tmp_path / "items.jl"
    done = run_scrapy(
        project, "crawl", "products", "-a", f"start={shop_site}",
        "-s", f"SITEMAP_OUTPUT_DIR={out}", "-o", str(feed),
    )  # fmt: skip
    message = (
        f"SITEMAP_OUTPUT_DIR: the sitemap files cannot be written in {out}: {blocker} is not a directory"
    )
    assert_stopped_at_start_up(done, message, feed)


def test_a_new_output_dir_is_not_left_by_a_crawl_that_lists_nothing(shop_site: str, tmp_path: Path) -> None:
    project = write_project(tmp_path / "project")
    out = tmp_path / "new" / "sitemaps"
    # A bad start URL: the crawl starts (the check made and removed the folders) and lists nothing.
    done = run_scrapy(
        project, "crawl", "products", "-a", f"start={shop_site}.missing", "-s", f"SITEMAP_OUTPUT_DIR={out}"
    )
    assert "Sitemap NOT published: no page could be listed" in done.stderr, done.stderr[-3000:]
    assert not (tmp_path / "new").exists()


def test_storage_failing_mid_crawl_passes_every_item_on_and_publishes_nothing(
    shop_site: str, tmp_path: Path
) -> None:
    project = write_project(tmp_path / "project")
    box = tmp_path / "box"
    box.mkdir()
    out = box / "sitemaps"
    feed = tmp_path / "items.jl"
    done = run_scrapy(
        project, "crawl", "products", "-a", f"start={shop_site}", "-a", f"break_dir={box}",
        "-s", f"SITEMAP_OUTPUT_DIR={out}", "-o", str(feed),
    )  # fmt: skip
    # The project's crawl goes on whole: its feed has every item, none failed in a pipeline.
    items = [json.loads(line) for line in feed.read_text().splitlines()]
    assert len(items) == PAGES + 2, done.stderr[-3000:]
    assert "Error processing" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "(finished)" in done.stderr
    # Our failure, said once with its cause, counted, and why nothing was published.
    assert done.stderr.count("Cannot store the sitemap's entries") == 1, done.stderr[-3000:]
    assert "Not a directory" in done.stderr
    # The stats dump wraps the value.
    assert "'sitemap/storage_failed': '[Errno 20] Not a directory: '" in done.stderr
    assert f"'sitemap/not_stored': {PAGES}" in done.stderr
    assert "ERROR: Sitemap NOT published: storing the entries failed: " in done.stderr
    assert done.returncode == 0  # Scrapy's exit code: the project's crawl did what it does

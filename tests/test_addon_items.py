"""The values a project's items really carry, through the add-on's pipeline and the ``sitemap`` feed.

A project that is not this one (written to a temporary directory, ``ADDONS`` naming the add-on)
crawls a real local site: each page's item takes its lastmod with the common idiom
``.get(default="")``, so a page without a date gives ""; the first page also yields the items of
a JSON file the test writes. Every set is validated against the XSDs and read back by Scrapy's
reader (tests/sitemap_check.py).
"""

from __future__ import annotations

import functools
import json
import textwrap
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.sitemap_check import read_sitemap_set, read_urlset
from tests.test_addon import SETTINGS, run_scrapy

PAGES = 33
DATED = range(0, PAGES, 5)  # pages 0, 5, 10, ...: 7 with a date in their metadata

SPIDER = '''
import json
import scrapy


class Pages(scrapy.Spider):
    name = "pages"

    def __init__(self, start="", items="", **kwargs):
        super().__init__(**kwargs)
        self.start_url = start
        self.items_path = items

    async def start(self):
        yield scrapy.Request(self.start_url)

    def parse(self, response):
        if response.url == self.start_url and self.items_path:
            with open(self.items_path, encoding="utf-8") as items:
                yield from json.load(items)
        yield {
            "url": response.url,
            "title": response.css("title::text").get(),
            "lastmod": response.css('meta[property="article:modified_time"]::attr(content)').get(default=""),
        }
        yield from response.follow_all(css="a", callback=self.parse)
'''


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    """PAGES pages linked in a chain on 127.0.0.1; those of DATED carry an article:modified_time,
    every other one with its zone written without a colon, as many sites do (+0530)."""
    root = tmp_path / "www"
    root.mkdir()
    for n in range(PAGES):
        zone = "+0530" if n % 2 else "+02:00"
        meta = f'<meta property="article:modified_time" content="2024-05-{n % 28 + 1:02d}T10:00:00{zone}">'
        link = f'<a href="p{n + 1}.html">next</a>' if n + 1 < PAGES else ""
        (root / f"p{n}.html").write_text(
            f"<html><head><title>Page {n}</title>{meta if n in DATED else ''}</head><body>{link}</body></html>"
        )
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def crawl(tmp_path: Path, site: str, items: list[dict[str, Any]] | None = None, *settings: str) -> str:
    """Crawl ``site`` with the project, the set published into tmp_path/sitemaps, the feed into
    tmp_path/feed.xml; the log."""
    project = tmp_path / "project"
    if not project.exists():
        (project / "shop" / "spiders").mkdir(parents=True)
        (project / "scrapy.cfg").write_text("[settings]\ndefault = shop.settings\n")
        (project / "shop" / "__init__.py").write_text("")
        (project / "shop" / "settings.py").write_text(SETTINGS)
        (project / "shop" / "spiders" / "__init__.py").write_text("")
        (project / "shop" / "spiders" / "pages.py").write_text(textwrap.dedent(SPIDER))
    items_path = tmp_path / "items.json"
    items_path.write_text(json.dumps(items or []))
    feeds = json.dumps({str(tmp_path / "feed.xml"): {"format": "sitemap", "overwrite": True}})
    done = run_scrapy(
        project, "crawl", "pages", "-a", f"start={site}p0.html", "-a", f"items={items_path}",
        "-s", f"SITEMAP_OUTPUT_DIR={tmp_path / 'sitemaps'}", "-s", f"SITEMAP_BASE_URL={site}",
        "-s", f"FEEDS={feeds}", *settings,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stderr


def published(tmp_path: Path, site: str) -> dict[str, dict[str, str]]:
    """The set the add-on published, by loc, checked and read back."""
    return {url["loc"]: url for url in read_sitemap_set(tmp_path / "sitemaps", site)}


def fed(tmp_path: Path) -> dict[str, dict[str, str]]:
    """The feed's one sitemap file, by loc, checked and read back; each loc once."""
    urls = read_urlset(tmp_path / "feed.xml")
    assert len(urls) == len({url["loc"] for url in urls}), urls
    return {url["loc"]: url for url in urls}


def test_an_empty_lastmod_from_get_default_lists_the_page_without_one(tmp_path: Path, site: str) -> None:
    log = crawl(tmp_path, site, [{"url": site + "blank", "lastmod": " ", "changefreq": "", "priority": ""}])
    expected = {f"{site}p{n}.html" for n in range(PAGES)} | {site + "blank"}
    for urls in (published(tmp_path, site), fed(tmp_path)):
        assert set(urls) == expected
        assert {loc for loc, url in urls.items() if "lastmod" in url} == {f"{site}p{n}.html" for n in DATED}
        assert urls[site + "blank"] == {"loc": site + "blank"}
        assert urls[site + "p5.html"]["lastmod"] == "2024-05-06T10:00:00+05:30"
    assert "invalid" not in log and "Skipping item" not in log, log[-3000:]


def test_invalid_items_are_warned_of_with_their_reason_a_bounded_number(tmp_path: Path, site: str) -> None:
    items = [{"url": f"{site}bad/{n}", "lastmod": "yesterday"} for n in range(30)] + [{"kind": "stat"}]
    log = crawl(tmp_path, site, items)
    warnings = [line for line in log.splitlines() if "WARNING: Not listed in the sitemap (invalid)" in line]
    assert len(warnings) == 20, log[-3000:]
    assert f"{site}bad/0: lastmod 'yesterday' is not a W3C Datetime" in warnings[0]
    assert "further invalid entries are counted" in warnings[-1]
    assert "not listed: invalid 31" in log
    assert len(published(tmp_path, site)) == PAGES


def test_items_take_the_normal_form_publish_gives_their_urls_and_dates(tmp_path: Path, site: str) -> None:
    """Raw UTF-8 and spaces percent-encoded, a fragment dropped (then a repeated URL), a zone
    without a colon read: as ``scrapy publish`` takes a line, not refused as invalid."""
    items = [
        {"url": site + "caf\u00e9", "lastmod": "2024-04-01T10:00:00+0530"},
        {"url": site + "my page.html"},
        {"url": site + "frag#top"},
        {"url": site + "frag", "lastmod": "2024-04-02"},
        {"loc": " " + site + "spaced "},
    ]
    log = crawl(tmp_path, site, items)
    expected = {
        site + "caf%C3%A9": {"loc": site + "caf%C3%A9", "lastmod": "2024-04-01T10:00:00+05:30"},
        site + "my%20page.html": {"loc": site + "my%20page.html"},
        site + "frag": {"loc": site + "frag", "lastmod": "2024-04-02"},
        site + "spaced": {"loc": site + "spaced"},
    }
    pipeline = published(tmp_path, site)
    assert {loc: pipeline[loc] for loc in expected} == expected
    assert len(pipeline) == PAGES + len(expected)
    assert "not listed: duplicate 1" in log and "invalid" not in log, log[-3000:]
    # The feed writes in item order: the first item of a URL.
    feed = fed(tmp_path)
    assert feed[site + "frag"] == {"loc": site + "frag"}
    assert len(feed) == PAGES + len(expected)
    assert "Skipping item" not in log


@pytest.mark.parametrize("run_size", [None, 1000])
def test_an_item_given_twice_is_listed_with_its_latest_lastmod(
    tmp_path: Path, site: str, run_size: int | None
) -> None:
    """As ``scrapy publish`` lists a URL given twice; with runs of 1,000 entries the two items of a
    URL are sorted into different runs."""
    firsts = [
        {"url": site + "a", "lastmod": "2024-06-01"},
        {"url": site + "e", "lastmod": "2024-06-01T10:00:00Z"},
        {"url": site + "g"},
    ]
    seconds = [
        {"url": site + "a", "lastmod": "2024-01-01", "priority": 0.2},
        {"url": site + "e", "lastmod": "2024-06-01T09:00:00-05:00"},  # 14:00 UTC
        {"url": site + "g", "lastmod": "2020-01-01"},
    ]
    filler = [{"url": f"{site}f/{n}"} for n in range(1200)]
    settings = ("-s", f"SITEMAP_SORT_RUN_SIZE={run_size}") if run_size else ()
    log = crawl(tmp_path, site, firsts + filler + seconds, *settings)
    urls = published(tmp_path, site)
    assert [urls[site + name] for name in ("a", "e", "g")] == [
        {"loc": site + "a", "lastmod": "2024-06-01"},
        {"loc": site + "e", "lastmod": "2024-06-01T09:00:00-05:00"},
        {"loc": site + "g", "lastmod": "2020-01-01"},
    ]
    assert "not listed: duplicate 3" in log, log[-3000:]


def test_urls_not_under_the_base_url_are_counted_and_warned_of(tmp_path: Path, site: str) -> None:
    """As ``scrapy publish`` says it: published as given (cross-submission), with a count and an example."""
    https = "https" + site[len("http") :]
    items = [{"url": "http://other.example.org/x"}, {"url": https + "https-variant"}]
    log = crawl(tmp_path, site, items)
    assert {"http://other.example.org/x", https + "https-variant"} <= set(published(tmp_path, site))
    warning = next((line for line in log.splitlines() if "not under" in line), "")
    assert "WARNING: Sitemap: 2 URL(s) not under " + site in warning, log[-3000:]
    assert "(such as http://other.example.org/x)" in warning
    assert "'sitemap/off_base': 2" in log
    assert "not under" not in crawl(tmp_path, site)  # the pages alone: all under it

"""The stylesheet for people (SITEMAP_XSL, issue 27): ``sitemap.xsl`` beside the set, and the
``<?xml-stylesheet?>`` line in every file.

The real ``scrapy crawl`` of the rich fixture site (tests/site_rich.py: language versions, images,
videos, news) with the stylesheet on: every file stays valid against the XSDs and is read back by
Scrapy's reader; ``scrapy validate`` finds nothing; a recrawl with the history reads the previous
set back and finds it unchanged. The files are then served over HTTP from the site's origin (where
the index says they are) and opened in the real headless Chromium, which applies the stylesheet:
the table it shows must hold each file's URLs, lastmods, image and video counts and language
versions, exactly as the XML says. Screenshots go to test-artifacts/ for a person to look at.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree
from playwright.sync_api import Page, sync_playwright

from sitemap_spider.sitemaps.names import INDEX_NAME, STYLESHEET_NAME
from sitemap_spider.sitemaps.shards.writer import ShardWriter
from sitemap_spider.sitemaps.xml.elements import STYLESHEET_LINE, URLSET_CLOSE, URLSET_OPEN, XML_DECLARATION
from sitemap_spider.sitemaps.xml.stylesheet import stylesheet_document
from sitemap_spider.sitemaps.xml.validate import validate_file
from tests.crawl_fixtures import run_crawl
from tests.report_browser import ARTIFACTS, CHROMIUM
from tests.site_rich import SETTINGS, RichSite, build_rich_site
from tests.site_server import SiteServer
from tests.site_spec import Route
from tests.test_rich_site import check
from tests.sitemap_check import read_sitemap_set
from tests.test_publish_command import publish
from tests.test_validate_command import assert_clean, validate

NS = {
    "sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
    "xhtml": "http://www.w3.org/1999/xhtml",
}


def test_the_writer_counts_the_stylesheet_line_in_the_size_limit(tmp_path: Path) -> None:
    line = "<url><loc>https://www.example.com/p</loc></url>\n"
    head = XML_DECLARATION + STYLESHEET_LINE + URLSET_OPEN[len(XML_DECLARATION) :]
    # Room for exactly three lines behind the longer head: a fourth opens a second file.
    max_bytes = len(head) + 3 * len(line) + len(URLSET_CLOSE)
    writer = ShardWriter(tmp_path, max_urls=50_000, max_bytes=max_bytes, gzip=False, stylesheet=True)
    writer.write_lines([line] * 4, [""] * 4)
    shards = writer.close()
    assert [shard.urls for shard in shards] == [3, 1]
    first = (tmp_path / shards[0].name).read_bytes()
    assert first.startswith(head) and len(first) == max_bytes == shards[0].bytes
    assert validate_file(tmp_path / shards[0].name) == 3


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RichSite, SiteServer, Path]]:
    tmp_path = tmp_path_factory.mktemp("stylesheet")
    with SiteServer() as server:
        site = build_rich_site(server.origin)
        server.serve(site.spec)
        settings = {**SETTINGS, "SITEMAP_XSL": "on", "SITEMAP_MAX_URLS": "4"}
        result = run_crawl(site.spec.start_url, tmp_path, settings=settings)
        check(result, site)  # every file valid against the XSDs and read back by Scrapy's reader
        # A recrawl with the history reads the set back (its files begin with the stylesheet line).
        again = run_crawl(site.spec.start_url, tmp_path, settings=settings)
        check(again, site)
        assert again.report is not None
        assert again.report["changes"] == {"previous": "compared", "added": 0, "changed": 0, "removed": 0}
        yield site, server, result.output_dir


def test_every_file_names_the_stylesheet_published_beside_it(
    published: tuple[RichSite, SiteServer, Path],
) -> None:
    _, _, output = published
    files = sorted(output.glob("sitemap*.xml"))
    assert len(files) >= 4 and output / INDEX_NAME in files
    for path in files:
        assert path.read_bytes().startswith(XML_DECLARATION + STYLESHEET_LINE), path.name
    assert (output / STYLESHEET_NAME).read_bytes() == stylesheet_document()
    run = validate(str(output / INDEX_NAME), "--json")
    assert_clean(run, files=len(files))


def _rows(page: Page, selector: str) -> list[list[str]]:
    return [
        [cell.strip() for cell in row]
        for row in page.eval_on_selector_all(
            selector, "rows => rows.map(row => Array.from(row.cells, cell => cell.innerText))"
        )
    ]


def _expected_rows(data: bytes) -> list[list[str]]:
    """What the table must show for a urlset: loc (and its news title), lastmod, images, videos,
    language versions, one row per <url> in file order."""
    rows = []
    for url in etree.fromstring(data).iterfind("sm:url", NS):
        loc = url.findtext("sm:loc", namespaces=NS)
        title = url.findtext("news:news/news:title", namespaces=NS)
        hreflangs = [link.get("hreflang") for link in url.iterfind("xhtml:link", NS)]
        rows.append([
            loc if title is None else f"{loc}\nNews: {title}",
            url.findtext("sm:lastmod", default="", namespaces=NS),
            str(len(url.findall("image:image", NS))),
            str(len(url.findall("video:video", NS))),
            "\n".join(hreflangs),
        ])  # fmt: skip
    return rows


def _show(page: Page, server: SiteServer, output: Path, name: str) -> None:
    """Serve every file of ``output`` at the server's root (where the index would say they are,
    the site's public origin standing for it) and open ``name``."""
    for path in output.iterdir():
        kind = "application/xml" if path.suffix in (".xml", ".xsl") else "text/plain"
        server.routes[f"/{path.name}"] = Route(headers=(("Content-Type", kind),), body=path.read_bytes())
    page.goto(f"{server.origin}/{name}")


def _check_set(page: Page, server: SiteServer, output: Path, label: str) -> list[list[str]]:
    """Open the index and each file it lists; each table must show what the XML holds. Returns
    every row of every urlset."""
    index = etree.fromstring((output / INDEX_NAME).read_bytes())
    listed = [
        [element.findtext("sm:loc", namespaces=NS), element.findtext("sm:lastmod", default="", namespaces=NS)]
        for element in index.iterfind("sm:sitemap", NS)
    ]
    _show(page, server, output, INDEX_NAME)
    assert page.title() == "Sitemap index"
    assert _rows(page, "table.sitemaps tbody tr") == listed
    assert page.inner_text(".total") == str(len(listed))
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"stylesheet-{label}-index.png"), full_page=True)
    shown = []
    for loc, _ in listed:
        name = loc.rsplit("/", 1)[1]
        expected = _expected_rows((output / name).read_bytes())
        _show(page, server, output, name)
        assert page.title() == "Sitemap"
        assert _rows(page, "table.urls tbody tr") == expected, name
        assert page.inner_text(".total") == str(len(expected))
        page.screenshot(path=str(ARTIFACTS / f"stylesheet-{label}-{name}.png"), full_page=True)
        shown += expected
    return shown


def test_chromium_shows_each_file_as_a_table_of_what_it_lists(
    published: tuple[RichSite, SiteServer, Path], tmp_path: Path
) -> None:
    _, server, output = published
    # scrapy publish of a CMS-like list, with lastmods, an IRI and a query string.
    source = tmp_path / "entries.jl"
    source.write_text(
        '{"loc": "https://www.example.com/caf\u00e9?a=1&b=2", "lastmod": "2026-11-02T10:00:00+01:00"}\n'
        '{"loc": "https://www.example.com/about", "lastmod": "2026-10-01"}\n'
        '{"loc": "https://www.example.com/", "lastmod": null}\n',
        encoding="utf-8",
    )
    done = publish(tmp_path, source, "-s", "SITEMAP_XSL=on", base_url="https://www.example.com/")
    assert done.returncode == 0, done.stderr
    read_sitemap_set(done.output_dir, "https://www.example.com/")
    with sync_playwright() as playwright:
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=args)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            rich = _check_set(page, server, output, "rich")
            # The rich site shows images, videos, language versions and a news title.
            for column in (2, 3):
                assert any(row[column] != "0" for row in rich), column
            assert any(row[4] for row in rich) and any("\nNews: " in row[0] for row in rich)
            plain = _check_set(page, server, done.output_dir, "publish")
            assert plain == [
                ["https://www.example.com/", "", "0", "0", ""],
                ["https://www.example.com/about", "2026-10-01", "0", "0", ""],
                ["https://www.example.com/caf%C3%A9?a=1&b=2", "2026-11-02T10:00:00+01:00", "0", "0", ""],
            ]
            assert errors == []
        finally:
            browser.close()

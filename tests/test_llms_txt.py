"""llms.txt from the same crawl (SITEMAP_LLMS_TXT, issue 27): sitemaps/shards/llms_txt.py.

Real crawls of a local site whose pages name themselves in every way a page does (``<title>``,
``og:title``, a bare ``<h1>``; meta and ``og:`` descriptions), beside pages that must not be in
llms.txt (noindex, canonicalised elsewhere, a 404, a content duplicate). llms.txt is checked line
by line against the set the crawl published (validated and read back by Scrapy's reader); a
recrawl answered with 304s writes the same file from the history; a history kept without llms.txt
has its pages fetched whole once; the JOBDIR mode writes the same bytes; ``scrapy publish``
refuses the setting. The sections and the bound are checked on LlmsPages directly.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import escape
from pathlib import Path

import pytest

from sitemap_spider.sitemaps import PageSummary, SitemapGroup
from sitemap_spider.sitemaps.names import LLMS_TXT_NAME
from sitemap_spider.sitemaps.shards.llms_txt import LlmsPages, llms_txt, written_here
from tests.crawl_fixtures import CrawlResult, run_crawl
from tests.site_server import HTML, SiteServer, links
from tests.site_spec import Route
from tests.sitemap_check import read_sitemap_set
from tests.test_publish_command import publish


def page(head: str, body: str = "") -> bytes:
    return f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">{head}</head>\n<body>\n{body}\n</body></html>\n'.encode()


def meta(name: str, content: str, attribute: str = "name") -> str:
    return f'<meta {attribute}="{name}" content="{escape(content)}">'


PATHS = [
    "/about", "/docs/", "/docs/install", "/docs/use?x=1&amp;y=(2)", "/blog/2026/hello", "/hidden", "/copy",
    "/dup-a", "/dup-b", "/missing", "/docs/empty",
]  # fmt: skip
DUPLICATE = page("<title>Same</title>", "<p>The same bytes under two URLs.</p>")


def site_routes() -> dict[str, Route]:
    ok = (("Content-Type", HTML),)
    return {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nDisallow:\n"),
        "/": Route(headers=ok, body=page(
            "<title>Home | Acme</title>" + meta("og:site_name", "Acme", "property")
            + meta("description", "Acme makes   anvils.\nGood ones."),
            links(*PATHS),
        )),
        "/about": Route(headers=ok, body=page("<title>About us - Acme</title>" + meta("description", "Who we are."))),
        "/docs/": Route(headers=ok, body=page("<title>Docs</title>" + meta("description", "All the docs."))),
        "/docs/install": Route(headers=ok, body=page(
            "<title>Install [beta] – Acme</title>" + meta("description", "How to\n   install.")
        )),
        "/docs/use?x=1&y=(2)": Route(headers=ok, body=page(
            meta("og:title", "Use it", "property") + meta("og:description", "Using it.", "property")
        )),
        # A theme's site-wide description on a page: it says nothing of the page.
        "/docs/empty": Route(headers=ok, body=page(
            "<title>Empty</title>" + meta("description", "Acme makes anvils. Good ones.")
        )),
        "/blog/2026/hello": Route(headers=ok, body=page("", "<h1>Hello <em>world</em></h1>")),
        "/hidden": Route(headers=ok, body=page("<title>Hidden</title>" + meta("robots", "noindex"))),
        "/copy": Route(headers=ok, body=page('<title>Copy</title><link rel="canonical" href="/about">')),
        "/dup-a": Route(headers=ok, body=DUPLICATE),
        "/dup-b": Route(headers=ok, body=DUPLICATE),
    }


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    with SiteServer() as server:
        server.routes = site_routes()
        server.validators = True  # ETags and 304s, as a static file server gives them
        yield server


def expected_lines(origin: str) -> list[str]:
    """llms.txt as the site above must give it: the home page names and describes the site."""
    return [
        "# Acme",
        "",
        "> Acme makes anvils. Good ones.",
        "",
        f"The 8 pages of the site's sitemap, by section. The sitemap: {origin}/sitemap_index.xml",
        "",
        "## Pages",
        "",
        f"- [Home]({origin}/): Acme makes anvils. Good ones.",
        f"- [About us]({origin}/about): Who we are.",
        f"- [Same]({origin}/dup-a)",
        "",
        "## Blog",
        "",
        f"- [Hello world]({origin}/blog/2026/hello)",
        "",
        "## Docs",
        "",
        f"- [Docs]({origin}/docs/): All the docs.",
        f"- [Empty]({origin}/docs/empty)",
        f"- [Install \\[beta\\]]({origin}/docs/install): How to install.",
        f"- [Use it]({origin}/docs/use?x=1&y=%282%29): Using it.",
    ]


def crawl(site: SiteServer, tmp_path: Path, **settings: str) -> CrawlResult:
    result = run_crawl(site.origin + "/", tmp_path, settings={"SITEMAP_LLMS_TXT": "on", **settings})
    assert result.returncode == 0, result.describe()
    return result


def check_against_the_set(result: CrawlResult, origin: str) -> list[str]:
    """llms.txt lists exactly the URLs of the published set, and is what the site must give."""
    urls = [url["loc"] for url in read_sitemap_set(result.output_dir, origin + "/")]
    lines = (result.output_dir / LLMS_TXT_NAME).read_text(encoding="utf-8").splitlines()
    linked = [line.split("](", 1)[1].split(")", 1)[0] for line in lines if line.startswith("- [")]
    assert sorted(link.replace("%28", "(").replace("%29", ")") for link in linked) == sorted(urls)
    assert lines == expected_lines(origin)
    return lines


def test_llms_txt_lists_the_published_pages_and_a_recrawl_of_304s_writes_it_again(
    site: SiteServer, tmp_path: Path
) -> None:
    first = crawl(site, tmp_path)
    check_against_the_set(first, site.origin)
    assert first.report is not None
    assert first.report["llms_txt"] == {"listed": 8, "pages": 8, "added": None, "removed": None}
    assert "llms.txt: 8 pages; first one" in first.stderr
    before = (first.output_dir / LLMS_TXT_NAME).read_bytes()
    again = crawl(site, tmp_path)
    assert again.report is not None
    stats = again.report["stats"]
    assert stats["sitemap/history/not_modified"] >= 8, stats  # every listed page from the history
    assert (again.output_dir / LLMS_TXT_NAME).read_bytes() == before
    assert again.report["llms_txt"] == {"listed": 8, "pages": 8, "added": 0, "removed": 0}
    # The same crawl resumable (entries through the job's SQLite state) writes the same bytes.
    jobdir = crawl(site, tmp_path / "job", JOBDIR=str(tmp_path / "job" / "state"))
    assert (jobdir.output_dir / LLMS_TXT_NAME).read_bytes() == before


def test_llms_txt_turned_off_goes_with_the_set_it_listed_and_a_hand_written_one_stays(
    site: SiteServer, tmp_path: Path
) -> None:
    on = crawl(site, tmp_path)
    assert (on.output_dir / LLMS_TXT_NAME).is_file()
    off = run_crawl(site.origin + "/", tmp_path)  # SITEMAP_LLMS_TXT off, as by default
    assert off.returncode == 0, off.describe()
    assert not (off.output_dir / LLMS_TXT_NAME).exists()
    assert "Removing llms.txt of the earlier set" in off.stderr
    # One the site's owner wrote, naming the sitemap too, is theirs: it stays.
    own = f"# Example\n\n> Our pages, by hand. The sitemap: {site.origin}/sitemap_index.xml\n"
    (off.output_dir / LLMS_TXT_NAME).write_text(own, encoding="utf-8")
    again = run_crawl(site.origin + "/", tmp_path)
    assert again.returncode == 0, again.describe()
    assert (again.output_dir / LLMS_TXT_NAME).read_text(encoding="utf-8") == own


def test_a_history_kept_without_llms_txt_has_its_pages_fetched_whole_once(site: SiteServer, tmp_path: Path) -> None:
    plain = run_crawl(site.origin + "/", tmp_path)
    assert plain.returncode == 0 and not (plain.output_dir / LLMS_TXT_NAME).exists()
    seen = len(site.requests)
    turned_on = crawl(site, tmp_path)
    check_against_the_set(turned_on, site.origin)
    # The listed pages were asked for whole (their records hold no summary), and so was /copy, which
    # names another URL as canonical: it is listed if that URL cannot be (crawl/canonicals.py). The
    # page left out (noindex) still for a 304: it needs none.
    conditional = {
        request.target for request in site.requests[seen:] if "If-None-Match" in dict(request.headers)
    }
    assert conditional == {"/hidden"}


def test_scrapy_publish_refuses_llms_txt(tmp_path: Path) -> None:
    source = tmp_path / "urls.txt"
    source.write_text("https://www.example.com/\n")
    done = publish(tmp_path, source, "-s", "SITEMAP_LLMS_TXT=on")
    assert done.returncode == 2
    assert "SITEMAP_LLMS_TXT: llms.txt is written by scrapy crawl sitemap" in done.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def _pages(tmp_path: Path, locs: list[str], groups: tuple[SitemapGroup, ...] = ()) -> LlmsPages:
    """Pages titled by their path ("Home - Site" for the home page, whose og:site_name is Site)."""
    pages = LlmsPages(tmp_path / "pages.sqlite", groups)
    for loc in locs:
        path = loc.split("/", 3)[3].strip("/")
        pages.add(loc, PageSummary(path, "") if path else PageSummary("Home - Site", "", "Site"))
    return pages


def test_over_the_bound_each_section_keeps_its_shallowest_pages(tmp_path: Path) -> None:
    base = "https://www.example.com/"
    posts = [f"{base}blog/2026/01/post-{n:03d}" for n in range(50)]
    locs = [base, f"{base}about", f"{base}tags/", *(f"{base}tags/t{n:03d}" for n in range(50)), *posts]
    pages = _pages(tmp_path, locs)
    text, listed = llms_txt(pages, base + "sitemap_index.xml", 7)
    assert listed == 7
    lines = text.splitlines()
    assert lines[:3] == [
        "# Site",
        "",
        f"This file lists 7 of the 103 pages of the site's sitemap, the shallowest of each section; "
        f"the sitemap lists them all: {base}sitemap_index.xml",
    ]
    # Turns: each section's first page, then each one's second, ... (the shallower first within a
    # turn): the deep posts keep theirs against fifty shallower tag pages.
    assert [line for line in lines[3:] if line] == [
        "## Pages", f"- [Home]({base})", f"- [about]({base}about)",
        "## Blog", f"- [blog/2026/01/post-000]({base}blog/2026/01/post-000)",
        f"- [blog/2026/01/post-001]({base}blog/2026/01/post-001)",
        "## Tags", f"- [tags]({base}tags/)", f"- [tags/t000]({base}tags/t000)", f"- [tags/t001]({base}tags/t001)",
    ]  # fmt: skip
    pages.close()


@pytest.mark.parametrize("limit", [2, 100], ids=["some-listed", "all-listed"])
def test_an_llms_txt_written_here_is_known_by_its_sitemap_line(tmp_path: Path, limit: int) -> None:
    """Whether it lists every page or some, the llms.txt written for a set is known as this
    package's (a publish with SITEMAP_LLMS_TXT off takes it down); not for another set's index,
    nor one written by hand that names the sitemap too."""
    base = "https://www.example.com/"
    index = base + "sitemap_index.xml"
    pages = _pages(tmp_path, [base, f"{base}about", f"{base}blog/a", f"{base}blog/b", f"{base}blog/c"])
    text, _ = llms_txt(pages, index, limit)
    written = tmp_path / LLMS_TXT_NAME
    written.write_text(text, encoding="utf-8")
    assert written_here(written, index)
    assert not written_here(written, "https://other.example.com/sitemap_index.xml")
    written.write_text(f"# Site\n\n> By hand. The sitemap: {index}\n", encoding="utf-8")
    assert not written_here(written, index)
    assert not written_here(tmp_path / "missing.txt", index)


def test_groups_make_the_sections_in_their_order(tmp_path: Path) -> None:
    base = "https://www.example.com/"
    groups = (SitemapGroup("posts", prefix="/blog/"), SitemapGroup("docs", pattern=re.compile("/docs/")))
    pages = _pages(tmp_path, [base, f"{base}docs/a", f"{base}blog/x", f"{base}about"], groups)
    text, listed = llms_txt(pages, base + "sitemap_index.xml", 100)
    assert listed == 4
    assert [line for line in text.splitlines() if line.startswith("## ")] == ["## posts", "## docs", "## Other"]
    pages.close()


def test_a_page_cannot_put_markup_or_controls_into_llms_txt(tmp_path: Path) -> None:
    """Titles and descriptions are a page's own words: Markdown links, HTML, terminal escapes
    and bidirectional controls come out as text. The site's name and description too; the home
    page is the site's page at /, wherever the sitemaps are served (SITEMAP_BASE_URL)."""
    base = "https://www.example.com/"
    pages = LlmsPages(tmp_path / "pages.sqlite", ())
    pages.add(base, PageSummary("Home", "Site](https://evil.example) [x <b>", "Site](https://evil.example) [x"))
    pages.add(base + "a", PageSummary("Hi\x1b[2J\x1b]0;owned\x07 \u202eevil", "desc [evil](https://evil.example)\r\nnext"))
    pages.add(base + "pages/x", PageSummary("X", ""))
    pages.add(base + "my-docs/a", PageSummary("A", ""))
    pages.add(base + "my_docs/b", PageSummary("B", ""))
    text, listed = llms_txt(pages, "https://cdn.example.net/sitemaps/sitemap_index.xml", 100)
    assert listed == 5
    assert text.splitlines() == [
        "# Site\\](https://evil.example) \\[x",
        "",
        "> Site\\](https://evil.example) \\[x \\<b\\>",
        "",
        "The 5 pages of the site's sitemap, by section. The sitemap: https://cdn.example.net/sitemaps/sitemap_index.xml",
        "",
        "## Pages",
        "",
        f"- [Home]({base}): Site\\](https://evil.example) \\[x \\<b\\>",
        f"- [Hi \\[2J \\]0;owned evil]({base}a): desc \\[evil\\](https://evil.example) next",
        "",
        "## My docs",
        "",
        f"- [A]({base}my-docs/a)",
        "",
        "## My docs (my\\_docs)",
        "",
        f"- [B]({base}my_docs/b)",
        "",
        "## Pages (pages)",
        "",
        f"- [X]({base}pages/x)",
    ]
    pages.close()


def test_an_icon_title_does_not_name_the_page() -> None:
    from parsel import Selector

    from sitemap_spider.crawl.pages import page_summary

    icon = '<svg><title>Close menu</title></svg>'
    og = '<meta property="og:title" content="Pricing plans">'
    assert page_summary(Selector(text=f"<html><head>{og}</head><body>{icon}<h1>H</h1></body></html>")).title == "Pricing plans"
    assert page_summary(Selector(text=f"<html><body>{icon}<h1>Plans</h1></body></html>")).title == "Plans"
    long = "word " * 1000
    summary = page_summary(Selector(text=f'<title>{long}</title><meta name="description" content="{long}">'))
    assert len(summary.title) == 300 and len(summary.description) == 1000

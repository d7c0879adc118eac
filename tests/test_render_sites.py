"""render=auto on static sites full of scripts (issue #15), and learning per template, with a real Chromium.

The javadoc and blog fixtures (bench/js_sites.py) carry on every page scripts that build
nothing a crawler needs: auto must list what never lists and start no browser at all.
The template fixture has scripts the rules cannot read: auto renders a few pages of each
template, stops rendering a template whose renders found nothing, and starts again when
a sample of it finds something.
"""

from __future__ import annotations

import re
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bench.doxygen_site import doxygen_site
from bench.js_sites import BLOG_FILES, JAVADOC_FILES, Pages, blog_site, javadoc_site
from sitemap_spider.render.learning import RENDERS_TO_LEARN, SAMPLE_EVERY
from tests.crawl_fixtures import CrawlResult, run_crawl
from tests.site_server import HTML, SiteServer
from tests.site_spec import Route, SiteRequest
from tests.sitemap_check import read_sitemap_set

pytestmark = pytest.mark.slow


def _routes(pages: Pages, files: dict[str, str]) -> dict[str, Route]:
    routes = {path: Route(headers=(("Content-Type", HTML),), body=html.encode()) for path, html in pages.items()}
    for path, text in files.items():
        kind = "application/javascript" if path.endswith(".js") else "text/css" if path.endswith(".css") else "text/plain"
        routes[path] = Route(headers=(("Content-Type", kind),), body=text.encode())
    return routes


def _watched_chromium(tmp_path: Path) -> tuple[Path, Path]:
    """A Chromium that leaves a mark when it is started: a wrapper around the real one."""
    marker = tmp_path / "chromium-started"
    wrapper = tmp_path / "chromium-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho started >> "{marker}"\nexec /usr/bin/chromium "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper, marker


def crawl(server: SiteServer, tmp_path: Path, mode: str, wrapper: Path, start: str = "/",
          settings: dict[str, str] | None = None) -> tuple[CrawlResult, set[str]]:
    out = tmp_path / mode
    out.mkdir()
    result = run_crawl(
        server.origin + start,
        out,
        "-a",
        f"render={mode}",
        settings={"SITEMAP_BROWSER_PATH": str(wrapper), "SITEMAP_RENDER_TIMEOUT": "10", **(settings or {})},
        timeout=300,
    )
    assert result.returncode == 0, result.describe()
    urls = read_sitemap_set(result.output_dir, server.origin + "/")
    return result, {url["loc"][len(server.origin) :] for url in urls}


def stats(result: CrawlResult) -> dict[str, int]:
    assert result.report is not None
    return dict(result.report["stats"])


def _no_browser_started(result: CrawlResult, marker: Path) -> None:
    assert not marker.exists(), "Chromium was started"
    assert "Starting download handler" not in result.stderr, result.describe()  # no Playwright driver either
    rendering = [key for key in stats(result) if key.startswith(("playwright/", "sitemap/render/"))]
    assert set(rendering) <= {"sitemap/render/scripts_read"}  # reading a script file is not rendering


JAVADOC_PAGES, JAVADOC_LISTED = javadoc_site(packages=3, classes_per_package=12)


@pytest.fixture
def javadoc_server() -> Iterator[SiteServer]:
    pages = JAVADOC_PAGES
    index = Route(headers=(("Content-Type", HTML),), body=pages["/api/index.html"].encode())
    # index.html?java/pkg00/String.html: the frameset, told which class to show
    with SiteServer(_routes(pages, JAVADOC_FILES), dynamic=[(re.compile(r"/api/index\.html\?.*"), lambda _: index)]) as s:
        yield s


def test_javadoc_auto_lists_what_never_lists_and_renders_nothing(javadoc_server: SiteServer, tmp_path: Path) -> None:
    wrapper, marker = _watched_chromium(tmp_path)
    _, never = crawl(javadoc_server, tmp_path, "never", wrapper)
    auto_result, auto = crawl(javadoc_server, tmp_path, "auto", wrapper)
    assert auto == never
    assert JAVADOC_LISTED <= auto
    assert "Rendering: auto" in auto_result.stderr
    _no_browser_started(auto_result, marker)


def test_blog_auto_lists_what_never_lists_and_starts_no_browser(tmp_path: Path) -> None:
    pages, expected = blog_site(posts=40)
    wrapper, marker = _watched_chromium(tmp_path)
    with SiteServer(_routes(pages, BLOG_FILES)) as server:
        _, never = crawl(server, tmp_path, "never", wrapper)
        auto_result, auto = crawl(server, tmp_path, "auto", wrapper)
        # the theme script was read and found to build nothing
        assert "/js/script.js" in server.targets()
    assert auto == never == expected
    _no_browser_started(auto_result, marker)


# A script the rules cannot read (markup from a variable): only rendering tells what it adds.
_TEMPLATE_SCRIPT = (
    "<div id=more></div><script>var {var} = document.body.getAttribute('data-more') || '/';"
    "document.getElementById('more').innerHTML = '<a href=\"' + {var} + '\">more</a>';</script>"
)
_QUIET = 60  # pages of a template whose script only ever links home
# pages of a template whose script, from page _LATE_FROM on, links a page found nowhere else; each late
# page links the next, so later pages are met after the samples of earlier ones have been rendered
_LATE = 100
_LATE_FROM = 30


def _template_page(title: str, more: str | None, script: str, following: str = "/") -> Route:
    data = f' data-more="{more}"' if more else ""
    body = (f"<!DOCTYPE html><html><head><title>{title}</title></head><body{data}><p>{title}, some text.</p>"
            f'<a href="/">home</a> <a href="{following}">next</a>{script}</body></html>')
    return Route(headers=(("Content-Type", HTML),), body=body.encode())


def template_site() -> dict[str, Route]:
    routes = {"/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b"")}
    links = [f"/quiet/{n}" for n in range(_QUIET)] + ["/late/0"]
    index = "".join(f'<a href="{link}">{link}</a> ' for link in links)
    routes["/"] = Route(headers=(("Content-Type", HTML),), body=f"<html><body>{index}</body></html>".encode())
    for n in range(_QUIET):
        routes[f"/quiet/{n}"] = _template_page(f"Quiet {n}", None, _TEMPLATE_SCRIPT.format(var="quiet"))
    for n in range(_LATE):
        more = f"/hidden/{n}" if n >= _LATE_FROM else "/"
        following = f"/late/{n + 1}" if n + 1 < _LATE else "/"
        routes[f"/late/{n}"] = _template_page(f"Late {n}", more, _TEMPLATE_SCRIPT.format(var="late"), following)
        routes[f"/hidden/{n}"] = _template_page(f"Hidden {n}", None, "")
    return routes


def test_auto_learns_per_template_whether_rendering_pays(tmp_path: Path) -> None:
    wrapper, _ = _watched_chromium(tmp_path)
    with SiteServer(template_site()) as server:
        result, listed = crawl(server, tmp_path, "auto", wrapper)
    counts = stats(result)
    # Both templates are first judged no-gain (their first renders link home only) ...
    assert counts["sitemap/render/templates/no_gain"] == 2
    # ... one is put back to rendering by a sample: its later pages link pages found nowhere else.
    assert counts["sitemap/render/templates/regained"] == 1
    hidden = {url for url in listed if url.startswith("/hidden/")}
    # Pages judged statically before the sample miss their link; the pages after it do not.
    assert len(hidden) >= _LATE - _LATE_FROM - SAMPLE_EVERY - 2 * RENDERS_TO_LEARN
    assert counts["sitemap/render/urls_found"] >= len(hidden) - 1
    assert counts["sitemap/render/skipped/no_gain"] >= _QUIET - RENDERS_TO_LEARN - 2
    assert counts["sitemap/render/probes"] >= 2 * RENDERS_TO_LEARN
    assert {f"/quiet/{n}" for n in range(_QUIET)} <= listed
    assert "rendering found" in result.stderr.lower(), result.describe()
    # the end-of-crawl summary says what rendering bought
    summary = re.search(r"Rendering: ([\d,]+) page\(s\) rendered .*, ([\d,]+) URL\(s\) found only by rendering; "
                        r"(\d+) template\(s\) judged statically", result.stderr)
    assert summary is not None, result.describe()
    assert int(summary[3]) == 2 and int(summary[2].replace(",", "")) == counts["sitemap/render/urls_found"]
    # The report's count of renders (its summary, the progress line): each page the browser returned.
    assert result.report is not None
    assert result.report["counts"]["rendered"] == counts["sitemap/render/pages"] + counts["sitemap/render/probes"]



def _slow_script(body: str) -> Callable[[SiteRequest], Route]:
    def answer(_: SiteRequest) -> Route:
        time.sleep(0.2)  # each section of the tree arrives a while after the tree asked for it
        return Route(headers=(("Content-Type", "application/javascript"),), body=body.encode())

    return answer


def test_doxygen_auto_reaches_what_the_browser_reaches(tmp_path: Path) -> None:
    """Navigation built after a chain of script loads: the render waits for the whole chain."""
    pages, scripts, every_page = doxygen_site()
    sections = {path: text for path, text in scripts.items() if "/navtree_" in path}
    routes = _routes(pages, {path: text for path, text in scripts.items() if path not in sections})
    slow = [(re.compile(re.escape(path)), _slow_script(text)) for path, text in sections.items()]
    wrapper, _ = _watched_chromium(tmp_path)
    with SiteServer(routes, dynamic=slow) as server:
        _, never = crawl(server, tmp_path, "never", wrapper, start="/docs/index.html")
        _, always = crawl(server, tmp_path, "always", wrapper, start="/docs/index.html")
        auto_result, auto = crawl(server, tmp_path, "auto", wrapper, start="/docs/index.html")
    assert always == every_page
    assert len(never) < len(every_page) / 2
    assert len(auto & always) >= 0.95 * len(always)
    counts = stats(auto_result)
    # the shared navigation scripts are rendered on a few pages, not on every page
    assert counts.get("sitemap/render/pages", 0) + counts.get("sitemap/render/probes", 0) <= 5


def test_two_processes_render_in_one_browser(tmp_path: Path) -> None:
    """The second crawling process sends the pages it would render to the first: one Chromium."""
    script = ("<div id=more></div><script>const a = document.createElement('a'); a.href = '/hidden/{n}';"
              "a.textContent = 'more'; document.getElementById('more').appendChild(a);</script>")
    routes = {"/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b"")}
    # A binary tree of pages: the second process starts early on, and most pages are met after.
    size = 255
    for n in range(size):
        children = "".join(f'<a href="/t/{c}">{c}</a> ' for c in (2 * n + 1, 2 * n + 2) if c < size)
        routes["/" if n == 0 else f"/t/{n}"] = _template_page(f"Page {n}", None,
                                                              children + (script.format(n=n) if n % 5 == 0 else ""))
    hidden = {f"/hidden/{n}" for n in range(0, size, 5)}
    for path in hidden:
        routes[path] = _template_page(path, None, "")
    wrapper, marker = _watched_chromium(tmp_path)
    with SiteServer(routes) as server:
        result, listed = crawl(server, tmp_path, "auto", wrapper,
                               settings={"SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "0"})
    counts = stats(result)
    assert counts["sitemap/workers"] == 2, result.describe()
    assert hidden <= listed
    assert marker.read_text().count("started") == 1
    assert counts["sitemap/render/handed_over"] >= 1

"""End to end with a real Chromium: which pages each render mode renders, and what it finds.

CI installs Debian's chromium-headless-shell (the browser find_browser takes) and chromium; these
tests are not skipped when a browser is missing, because rendering is part of the product.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitemap_spider.render.browser import find_browser
from tests.crawl_fixtures import CrawlResult, crawl_command, crawl_then_stop, run_crawl
from tests.site_server import HTML, SiteServer, html_page
from tests.site_spec import Route, SiteRequest
from tests.sitemap_check import read_sitemap_set

TEXT = "<p>" + "A paragraph that a reader came for, long enough to be content. " * 3 + "</p>"
GTM = (
    "<script>(function(w,d,s,l,i){w[l]=w[l]||[];var f=d.getElementsByTagName(s)[0],"
    "j=d.createElement(s);j.src='https://www.googletagmanager.com/gtm.js?id='+i;"
    "f.parentNode.insertBefore(j,f);})(window,document,'script','dataLayer','GTM-X');</script>"
)
APP_JS = """
const routes = {"/spa/": "Home of the app", "/spa/about": "About the app", "/spa/contact": "Contact"};
function render() {
  const root = document.getElementById("root");
  root.replaceChildren();
  const nav = document.createElement("nav");
  for (const path of Object.keys(routes)) {
    const a = document.createElement("a");
    a.href = path;
    a.textContent = path;
    a.addEventListener("click", (e) => { e.preventDefault(); history.pushState({}, "", path); render(); });
    nav.appendChild(a);
  }
  const main = document.createElement("main");
  main.textContent = routes[location.pathname] || "Not found";
  root.append(nav, main);
}
render();
"""
SHELL = html_page("App", '<div id="root"></div><script src="/app.js"></script>')
# Links that exist only some time after `load`: after a fetch, after a timer, after a chain of
# fetches, and after a timer, a slow fetch and another timer in turn. The render must wait for each.
LATER = "const link = (href) => {{ const a = document.createElement('a'); a.href = href; a.textContent = href; document.getElementById('later').append(a); }};{}"
LATER_SCRIPTS = {
    "/after-fetch": "fetch('/api/links.json').then((r) => r.json()).then((d) => d.links.forEach(link));",
    "/after-timer": "setTimeout(() => link('/from-timer'), 300);",
    "/after-chain": (
        "fetch('/api/first.json').then((r) => r.json()).then((d) => fetch(d.next)).then((r) => r.json())"
        ".then((d) => fetch(d.next)).then((r) => r.json()).then((d) => link(d.link));"
    ),
    "/after-slow-chain": (
        "setTimeout(() => fetch('/api/slow.json').then((r) => r.json())"
        ".then((d) => setTimeout(() => link(d.link), 300)), 200);"
    ),
}
LATER_FOUND = {"/from-fetch", "/from-timer", "/from-chain", "/from-slow-chain"}


def _page(title: str, body: str, head: str = "") -> Route:
    # Every page shows an image: the browser must never ask for it.
    return Route(headers=(("Content-Type", HTML),), body=html_page(title, TEXT + body + '<img src="/logo.png">', head))


def _hang(request: SiteRequest) -> Route:
    time.sleep(8)  # longer than the test's render timeout: the page never finishes loading
    return Route(headers=(("Content-Type", "application/javascript"),), body=b"")


def _json(body: str) -> Route:
    return Route(headers=(("Content-Type", "application/json"),), body=body.encode())


def _slow_json(request: SiteRequest) -> Route:
    time.sleep(0.3)  # a slow API: the network is busy for a while and no DOM changes meanwhile
    return _json('{"link": "/from-slow-chain"}')


def js_site() -> dict[str, Route]:
    inject = "<script>document.head.insertAdjacentHTML('beforeend', '{}')</script>"
    later = {
        path: _page(path, '<div id="later"></div><script>' + LATER.format(script) + "</script>")
        for path, script in LATER_SCRIPTS.items()
    }
    return {
        **later,
        **{path: _page(path, '<a href="/">home</a>') for path in LATER_FOUND},
        "/api/links.json": _json('{"links": ["/from-fetch"]}'),
        "/api/first.json": _json('{"next": "/api/second.json"}'),
        "/api/second.json": _json('{"next": "/api/third.json"}'),
        "/api/third.json": _json('{"link": "/from-chain"}'),
        "/": _page(
            "Home",
            '<a href="/plain">plain</a> <a href="/analytics">analytics</a> <a href="/spa/">app</a> '
            '<a href="/inject-noindex">i1</a> <a href="/inject-canonical">i2</a> <a href="/slow">slow</a>'
            + "".join(f'<a href="{path}">later</a>' for path in LATER_SCRIPTS)
            + '<div id="nav"></div><script>const a = document.createElement("a"); a.href = "/js-built";'
            'a.textContent = "built"; document.getElementById("nav").appendChild(a);</script>',
        ),
        "/js-built": _page("Built", '<a href="/">home</a>'),
        "/plain": _page("Plain", '<a href="/">home</a><script>console.log("hi")</script>'),
        "/analytics": _page("Analytics", '<a href="/">home</a>' + GTM),
        "/inject-noindex": _page("Noindex", "", inject.format('<meta name="robots" content="noindex">')),
        "/inject-canonical": _page("Canonical", "", inject.format('<link rel="canonical" href="/plain">')),
        "/slow": _page(
            "Slow",
            '<script src="/hang.js"></script><script>const l = document.createElement("a"); l.href = "/";'
            "document.body.append(l)</script>",
        ),
        "/spa/": Route(headers=(("Content-Type", HTML),), body=SHELL),
        "/spa/about": Route(headers=(("Content-Type", HTML),), body=SHELL),
        "/spa/contact": Route(headers=(("Content-Type", HTML),), body=SHELL),
        "/app.js": Route(headers=(("Content-Type", "application/javascript"),), body=APP_JS.encode()),
        "/logo.png": Route(headers=(("Content-Type", "image/png"),), body=b"\x89PNG"),
    }


STATIC_LISTED = {"/", "/plain", "/analytics", "/spa/", "/inject-noindex", "/inject-canonical", "/slow", *LATER_SCRIPTS}
RENDERED_LISTED = {
    "/", "/js-built", "/plain", "/analytics", "/spa/", "/spa/about", "/spa/contact", "/slow", *LATER_SCRIPTS, *LATER_FOUND
}


@pytest.fixture
def js_server() -> Iterator[SiteServer]:
    dynamic = [(re.compile(r"/hang\.js"), _hang), (re.compile(r"/api/slow\.json"), _slow_json)]
    with SiteServer(js_site(), dynamic=dynamic) as server:
        yield server


def crawl(
    server: SiteServer, tmp_path: Path, mode: str, settings: dict[str, str] | None = None
) -> tuple[CrawlResult, set[str]]:
    result = run_crawl(
        server.origin + "/",
        tmp_path,
        "-a",
        f"render={mode}",
        settings={"SITEMAP_RENDER_TIMEOUT": "3", **(settings or {})},
    )
    assert result.returncode == 0, result.describe()
    urls = read_sitemap_set(result.output_dir, server.origin + "/")
    return result, {url["loc"][len(server.origin) :] for url in urls}


def render_stats(result: CrawlResult) -> dict[str, int]:
    assert result.report is not None
    return {
        key[len("sitemap/render/") :]: value
        for key, value in result.report["stats"].items()
        if key.startswith("sitemap/render/")
    }


def test_a_browser_is_installed_for_these_tests() -> None:
    assert find_browser(None) is not None, "CI installs chromium; without it these tests prove nothing"


def test_the_system_s_headless_shell_comes_before_its_full_chromium(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both on the PATH (as CI installs them), no Playwright download: the headless shell renders."""
    for name in ("chromium", "chromium-headless-shell", "google-chrome"):
        program = tmp_path / name
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "no-downloads"))
    found = find_browser(None)
    assert found is not None and found.executable == str(tmp_path / "chromium-headless-shell")
    (tmp_path / "chromium-headless-shell").unlink()
    found = find_browser(None)
    assert found is not None and found.executable == str(tmp_path / "chromium")


def test_never_starts_no_browser_and_misses_script_built_pages(js_server: SiteServer, tmp_path: Path) -> None:
    result, listed = crawl(js_server, tmp_path, "never")
    assert listed == STATIC_LISTED
    assert render_stats(result) == {}
    assert "/js-built" not in js_server.targets()


def test_auto_renders_only_pages_that_need_it(js_server: SiteServer, tmp_path: Path) -> None:
    result, listed = crawl(js_server, tmp_path, "auto")
    assert listed == RENDERED_LISTED
    assert result.report is not None
    excluded = {item["url"][len(js_server.origin) :]: item["reason"] for item in result.report["excluded_urls"]}
    assert excluded["/inject-noindex"] == "noindex"
    assert excluded["/inject-canonical"] == "canonical"
    stats = render_stats(result)
    # /, the two injecting pages, /slow and the four pages that link later have DOM-building inline
    # scripts; the app's routes are empty shells. /plain (console.log only), /analytics (GTM),
    # /js-built and the pages linked later are not rendered.
    assert stats["reason/inline_script"] == 8
    assert stats["reason/app_root"] == 3
    # Each of them goes to the browser once: the first page of each template as a probe (whose DOM,
    # when it gains, is judged without rendering the page again), the app's other routes after it.
    assert stats["probes"] + stats["pages"] + stats["failed"] == 8 + 3
    assert stats["pages"] == 2
    assert stats["urls_found"] == len({"/js-built", "/spa/about", "/spa/contact", *LATER_FOUND})
    assert stats["failed"] == 1  # /slow never finishes loading: judged by its static HTML
    assert "reason/always" not in stats
    assert "/logo.png" not in js_server.targets()  # images are aborted in the browser


def test_auto_on_a_static_site_never_starts_playwright(tmp_path: Path) -> None:
    """The browser's driver (about 100 MB) starts with the first page to render, not with the crawl.

    Playwright is not even imported (about 0.15 s of CPU per crawl process), though the
    download handler that would render is in place (tests/mode_probe.py).
    """
    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
        "/": _page("Home", TEXT + '<a href="/a">A</a><script src="/lib/jquery.min.js"></script>'),
        "/a": _page("A", TEXT + '<a href="/">Home</a>'),
    }
    probe = tmp_path / "probe.json"
    with SiteServer(routes) as server:
        result, listed = crawl(server, tmp_path, "auto", {"EXTENSIONS": json.dumps({"tests.mode_probe.ModeProbe": 0}),
                                                          "MODE_PROBE": str(probe)})
    assert listed == {"/", "/a"}
    assert "Rendering: auto" in result.stderr, result.describe()
    facts = json.loads(probe.read_text())
    assert facts["download_handlers"]["https"] == "sitemap_spider.render.download.RenderingDownloadHandler"
    assert facts["playwright_modules"] == []
    assert "Starting download handler" not in result.stderr, result.describe()
    assert not [key for key in result.report["stats"] if key.startswith("playwright/")]  # type: ignore[index]


def test_a_probe_does_not_hold_back_the_pages_links(tmp_path: Path) -> None:
    """The browser takes seconds to start and render: the static links of the page it probes go first."""
    static = [f"/s{n}" for n in range(5)]
    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
        "/": _page(
            "Home",
            "".join(f'<a href="{path}">{path}</a> ' for path in static)
            + '<div id="nav"></div><script>const a = document.createElement("a"); a.href = "/js-built";'
            'a.textContent = "built"; document.getElementById("nav").appendChild(a);</script>',
        ),
        "/js-built": _page("Built", '<a href="/">home</a>'),
        **{path: _page(path, '<a href="/">home</a>') for path in static},
    }
    with SiteServer(routes) as server:
        result, listed = crawl(server, tmp_path, "auto")
        targets = server.targets()
    assert listed == {"/", "/js-built", *static}
    assert render_stats(result)["probes"] == 1  # the home page, whose render gained /js-built
    # The browser's own request for the page it renders is the second request for "/".
    rendered_at = [i for i, target in enumerate(targets) if target == "/"][1]
    assert all(targets.index(path) < rendered_at for path in static), targets


# A same-site script that, by the rules, could build navigation, but only on a click: a render at
# load finds nothing (as a theme's search box or menu does).
ON_CLICK_JS = (
    "document.getElementById('more').addEventListener('click', () => {"
    " const a = document.createElement('a'); a.href = '/clicked'; document.body.append(a); });"
)


def test_the_next_crawl_does_not_probe_scripts_a_probe_found_nothing_in(tmp_path: Path) -> None:
    """A daily recrawl where one page changed: the probe of its script files is not made again (no
    browser), while the files are the ones probed; a file changed, and it probes again."""
    script = {"body": ON_CLICK_JS}

    def page(title: str, links: str) -> Route:
        return _page(title, TEXT + links + '<button id="more">More</button><script src="/js/menu.js"></script>')

    home = {"body": page("Home", '<a href="/a">A</a> <a href="/b">B</a>')}  # changed between crawls
    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
        "/a": page("A", '<a href="/">Home</a>'),
        "/b": page("B", '<a href="/">Home</a>'),
    }

    def changing(request: SiteRequest) -> Route:
        if request.target == "/js/menu.js":
            return Route(headers=(("Content-Type", "text/javascript"),), body=script["body"].encode())
        return home["body"]

    history = {"SITEMAP_HISTORY": str(tmp_path / "history.sqlite")}
    with SiteServer(routes, dynamic=[(re.compile(r"/|/js/menu\.js"), changing)]) as server:
        server.validators = True
        first, listed = crawl(server, tmp_path / "first", "auto", history)
        assert listed == {"/", "/a", "/b"}
        assert render_stats(first)["probes"] == 1, render_stats(first)
        home["body"] = page("Home", '<a href="/a">A</a> <a href="/b">B</a> <p>A new post.</p>')
        second, listed = crawl(server, tmp_path / "second", "auto", history)
        assert listed == {"/", "/a", "/b"}
        stats = render_stats(second)
        assert stats.get("skipped/scripts_found_nothing_before") == 1 and "probes" not in stats, stats
        assert not [key for key in second.report["stats"] if key.startswith("playwright/")]  # type: ignore[index]
        # The script changed: what was learnt of the old one no longer holds.
        script["body"] = ON_CLICK_JS + " // v2"
        home["body"] = page("Home", '<a href="/a">A</a> <a href="/b">B</a> <p>Another post.</p>')
        third, listed = crawl(server, tmp_path / "third", "auto", history)
        assert listed == {"/", "/a", "/b"}
        assert render_stats(third).get("probes") == 1, render_stats(third)


def test_scripts_that_write_links_at_load_are_probed_in_every_crawl(tmp_path: Path) -> None:
    """The menu a script builds at load held only links the home page also had in its HTML: the
    probe found nothing new. The next day the home page loses its static copy of one: only the menu
    leads there, and the next crawl must render to find it."""
    menu = (
        "for (const path of ['/a', '/b', '/x']) { const a = document.createElement('a'); a.href = path;"
        " a.textContent = path; document.getElementById('menu').append(a); }"
    )
    home = {"links": '<a href="/a">A</a> <a href="/b">B</a> <a href="/x">X</a>'}

    def changing(request: SiteRequest) -> Route:
        if request.target == "/js/menu.js":
            return Route(headers=(("Content-Type", "text/javascript"),), body=menu.encode())
        return _page("Home", TEXT + home["links"] + '<nav id="menu"></nav><script src="/js/menu.js"></script>')

    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
        **{path: _page(path, TEXT + '<a href="/">Home</a>') for path in ("/a", "/b", "/x")},
    }
    history = {"SITEMAP_HISTORY": str(tmp_path / "history.sqlite")}
    with SiteServer(routes, dynamic=[(re.compile(r"/|/js/menu\.js"), changing)]) as server:
        server.validators = True
        first, listed = crawl(server, tmp_path / "first", "auto", history)
        assert listed == {"/", "/a", "/b", "/x"}
        assert render_stats(first)["probes"] == 1, render_stats(first)
        home["links"] = '<a href="/a">A</a> <a href="/b">B</a>'
        second, listed = crawl(server, tmp_path / "second", "auto", history)
    assert "skipped/scripts_found_nothing_before" not in render_stats(second), render_stats(second)
    assert listed == {"/", "/a", "/b", "/x"}


def test_a_probe_read_before_the_page_settled_is_not_kept(tmp_path: Path) -> None:
    """The page still fetched when the render's time was up: what its DOM held then proves nothing."""
    busy = ON_CLICK_JS + " setInterval(() => fetch('/ping?' + Math.random()), 50);"
    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
        "/": _page("Home", TEXT + '<a href="/a">A</a><button id="more">More</button><script src="/js/menu.js"></script>'),
        "/a": _page("A", TEXT + '<a href="/">Home</a>'),
        "/js/menu.js": Route(headers=(("Content-Type", "text/javascript"),), body=busy.encode()),
    }
    settings = {"SITEMAP_HISTORY": str(tmp_path / "history.sqlite"), "SITEMAP_RENDER_IDLE_TIMEOUT": "1"}
    with SiteServer(routes, dynamic=[(re.compile(r"/ping\?.*"), lambda request: Route(body=b"pong"))]) as server:
        first, listed = crawl(server, tmp_path / "first", "auto", settings)
        assert listed == {"/", "/a"} and render_stats(first)["probes"] == 1, render_stats(first)
        second, listed = crawl(server, tmp_path / "second", "auto", settings)
    assert listed == {"/", "/a"}
    assert "skipped/scripts_found_nothing_before" not in render_stats(second), render_stats(second)


def test_always_renders_every_html_page(js_server: SiteServer, tmp_path: Path) -> None:
    result, listed = crawl(js_server, tmp_path, "always")
    assert listed == RENDERED_LISTED
    stats = render_stats(result)
    html_pages = len(RENDERED_LISTED) + 2  # the two pages excluded after rendering
    assert stats["reason/always"] == html_pages
    assert stats["pages"] == html_pages - 1
    assert stats["failed"] == 1
    assert "/logo.png" not in js_server.targets()
    # Browser tabs are kept open from one render to the next (4 at a time), also after the failure.
    opened = re.search(r"'playwright/page_count': (\d+)", result.stderr)
    assert opened is not None, result.describe()
    assert int(opened[1]) < html_pages / 2


def test_always_without_a_browser_fails_at_start_up(js_server: SiteServer, tmp_path: Path) -> None:
    result = run_crawl(
        js_server.origin + "/", tmp_path, "-a", "render=always", settings={"SITEMAP_BROWSER_PATH": "/nonexistent/chrome"}
    )
    assert result.returncode == 2
    assert "SITEMAP_BROWSER_PATH" in result.stderr
    assert js_server.targets() == []


def test_auto_without_a_browser_crawls_on_and_says_how_to_install_one(js_server: SiteServer, tmp_path: Path) -> None:
    # No browser on the PATH, no Playwright download in HOME.
    env = {**os.environ, "PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path)}
    env.pop("PLAYWRIGHT_BROWSERS_PATH", None)
    result = run_crawl(js_server.origin + "/", tmp_path, "-a", "render=auto", env=env)
    assert result.returncode == 0, result.describe()
    listed = {url["loc"][len(js_server.origin) :] for url in read_sitemap_set(result.output_dir, js_server.origin + "/")}
    assert listed == STATIC_LISTED
    assert result.stderr.count("looked JavaScript-built") == 1
    assert "playwright install chromium" in result.stderr
    assert render_stats(result)["unavailable/inline_script"] == 8


BUILDS_A_LINK = _page(
    "Home", '<div id="nav"></div><script>const a = document.createElement("a"); a.href = "/js-built";'
    'a.textContent = "built"; document.getElementById("nav").appendChild(a);</script>',
)
BUSY = Route(status=503, headers=(("Content-Type", HTML),), body=b"<html><body>busy</body></html>")


def _home_busy_for(browser_requests: int, busy: Route = BUSY) -> SiteServer:
    """A site whose home page builds a link with a script; the browser's first requests for it get a 503."""
    answers = itertools.count()

    def home(_request: SiteRequest) -> Route:
        # The first request for "/" is the static fetch; the next ones are the browser's.
        return busy if 1 <= next(answers) <= browser_requests else BUILDS_A_LINK

    routes = {"/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""), "/js-built": _page("Built", "")}
    return SiteServer(routes, dynamic=[(re.compile(r"/$"), home)])


def test_a_probe_answered_with_an_error_page_is_a_failed_render_not_a_verdict(tmp_path: Path) -> None:
    """The browser's fetch of the probed page gets a 503 for every try (an outage between the
    static fetch and the render): the error page is not the page's DOM. Judged against it, the
    probe "found nothing", said so for the page's template, and logged nothing."""
    with _home_busy_for(3) as server:  # the render and its two renders again (SITEMAP_RETRY_TIMES=2)
        result, listed = crawl(server, tmp_path, "auto")
    assert listed == {"/"}  # judged by its static HTML, as any page whose render failed
    stats = render_stats(result)
    assert stats.get("failed") == 1 and not stats.get("probes"), stats
    assert "Rendering http" in result.stderr and "failed (the browser got a 503)" in result.stderr


def test_a_render_answered_with_a_fault_is_rendered_again_after_a_back_off(tmp_path: Path) -> None:
    """The browser's first fetch of the page gets a 503; the render is asked again, and the link
    only the page's script builds is found and listed in this crawl, not the next one."""
    with _home_busy_for(1) as server:
        result, listed = crawl(server, tmp_path, "auto", settings={"LOG_LEVEL": "DEBUG"})
        asked = server.targets().count("/")
    assert listed == {"/", "/js-built"}, result.describe()
    stats = render_stats(result)
    assert stats.get("probes") == 1 and not stats.get("failed"), stats
    assert "the server answered 503; rendered again after" in result.stderr
    assert asked == 3, asked  # the static fetch, the render, the render again


def test_renders_again_of_many_pages_end_and_the_crawl_with_them(tmp_path: Path) -> None:
    """Every browser fetch of six pages gets a 503 (render=always, two browser tabs). Each render
    again of a page opened a browser page that nobody closed: once they filled the browser's
    context, the next render waited for a page for ever, and the crawl never ended."""
    count = 6
    asked: dict[str, int] = {}
    busy = Route(status=503, headers=(("Content-Type", HTML), ("Retry-After", "1")), body=b"<p>busy")

    def page(request: SiteRequest) -> Route:
        n = asked[request.target] = asked.get(request.target, 0) + 1
        # The static fetch, then the browser's render and its two renders again: 503s.
        return busy if 2 <= n <= 4 else _page(f"P{request.target}", "<p>text</p>")

    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
        "/": _page("Home", "".join(f'<a href="/p{i}">p</a>' for i in range(count))),
    }
    with SiteServer(routes, dynamic=[(re.compile(r"/p\d+"), page)]) as server:
        result, listed = crawl(server, tmp_path, "always", settings={"SITEMAP_RENDER_PAGES": "2"})
    assert listed == {"/", *(f"/p{i}" for i in range(count))}
    # The static fetch, three renders, and the static fetch the page falls back to.
    assert all(asked[f"/p{i}"] == 5 for i in range(count)), asked
    assert render_stats(result).get("failed") == count, render_stats(result)


def test_a_render_asked_to_wait_long_is_not_rendered_again(tmp_path: Path) -> None:
    """Retry-After: 30 on the browser's fetch: the wait would hold a place of the site and a browser
    tab for half a minute; the page is judged by its static HTML instead, at once."""
    busy = Route(status=503, headers=(("Content-Type", HTML), ("Retry-After", "30")), body=b"<p>busy")
    started = time.monotonic()
    with _home_busy_for(1, busy) as server:
        result, listed = crawl(server, tmp_path, "auto")
        asked = server.targets().count("/")
    assert time.monotonic() - started < 20, result.describe()
    assert listed == {"/"}
    assert asked == 2, asked  # the static fetch and the render: not rendered again
    assert render_stats(result).get("failed") == 1


def _builds_its_link(i: str) -> Route:
    """Page /p<i> of a template whose script builds a link to /built-<i>."""
    return _page(f"P{i}", f'<div id="nav"></div><script>const a = document.createElement("a"); '
                 f'a.href = "/built-{i}"; document.getElementById("nav").appendChild(a);</script>')


def _template_site(count: int) -> dict[str, Route]:
    """robots.txt, a home page linking /p0 to /p<count - 1> (the test serves them), and /built-<i>."""
    return {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
        "/": _page("Home", "".join(f'<a href="/p{i}">p</a>' for i in range(count))),
        **{f"/built-{i}": _page(f"Built {i}", "") for i in range(count)},
    }


def test_a_stop_while_probes_wait_sends_the_pages_waiting_for_their_verdict_to_no_browser(tmp_path: Path) -> None:
    """Eight pages of one template (render=auto, JOBDIR): the first three are probed, the others
    wait for the template's verdict. Every render gets a 503 with Retry-After: 4, after 2 s. SIGTERM
    while the probes wait: the waiting pages, woken by the probes' end, were sent to the browser one
    probe after the other (a stop of 13.5 s for 20 pages). Now nothing goes to the browser after the
    stop, and the resumed crawl renders every page."""
    count = 8
    down = {"on": True}
    asked: dict[str, int] = {}
    stopped_at: list[float] = []
    after_stop: list[str] = []

    def template_page(request: SiteRequest) -> Route:
        n = asked[request.target] = asked.get(request.target, 0) + 1
        if n > 1 and stopped_at:
            after_stop.append(request.target)
        if n > 1 and down["on"]:  # the browser's fetch, in the outage
            time.sleep(2)
            return Route(status=503, headers=(("Content-Type", HTML), ("Retry-After", "4")), body=b"<p>busy")
        return _builds_its_link(request.target[2:])

    routes = _template_site(count)
    settings = {"SITEMAP_RENDER_TIMEOUT": "3", "JOBDIR": str(tmp_path / "job")}
    with SiteServer(routes, dynamic=[(re.compile(r"/p\d+"), template_page)]) as server:
        args = crawl_command(server.origin + "/", tmp_path, "-a", "render=auto", settings=settings)

        def probes_wait() -> bool:
            if sum(n > 1 for n in asked.values()) < 3:
                return False
            time.sleep(3)  # the 503s are in, their back-off has begun
            stopped_at.append(time.monotonic())
            return True

        stopped = crawl_then_stop(args, probes_wait, 0, timeout=60)
        sent_after_stop = list(after_stop)
        down["on"] = False
        resumed = run_crawl(server.origin + "/", tmp_path, "-a", "render=auto", settings=settings)
    assert stopped.seconds < 2.5, (stopped.seconds, stopped.stderr[-3000:])
    assert sent_after_stop == [], sent_after_stop
    listed = {url["loc"][len(server.origin) :] for url in read_sitemap_set(resumed.output_dir, server.origin + "/")}
    assert {f"/built-{i}" for i in range(count)} <= listed, resumed.describe()


def test_a_stop_renders_none_of_the_pages_waiting_for_a_browser_tab(tmp_path: Path) -> None:
    """One browser tab (SITEMAP_RENDER_PAGES=1), render=always, six pages whose renders take 2 s
    each: SIGTERM while the first renders. The others waited for the tab and were rendered after
    the stop, one after the other; now they are left not done, and the resumed crawl renders them."""
    count = 6
    asked: dict[str, int] = {}
    stopped_at: list[float] = []
    after_stop: list[str] = []

    def slow_page(request: SiteRequest) -> Route:
        n = asked[request.target] = asked.get(request.target, 0) + 1
        if stopped_at:
            after_stop.append(request.target)
        if n > 1:
            time.sleep(2)  # the browser's fetch
        return _builds_its_link(request.target[2:])

    routes = _template_site(count)
    settings = {"SITEMAP_RENDER_PAGES": "1", "SITEMAP_RENDER_TIMEOUT": "5", "JOBDIR": str(tmp_path / "job")}
    with SiteServer(routes, dynamic=[(re.compile(r"/p\d+"), slow_page)]) as server:
        args = crawl_command(server.origin + "/", tmp_path, "-a", "render=always", settings=settings)

        def rendering() -> bool:
            if not any(n > 1 for n in asked.values()):
                return False
            stopped_at.append(time.monotonic())
            return True

        stopped = crawl_then_stop(args, rendering, 0.5, timeout=90)
        sent_after_stop = list(after_stop)
        resumed = run_crawl(server.origin + "/", tmp_path, "-a", "render=always", settings=settings, timeout=180)
    # The render under way at the stop, at most.
    assert len(sent_after_stop) <= 1, (sent_after_stop, stopped.stderr[-3000:])
    assert stopped.seconds < 5, (stopped.seconds, stopped.stderr[-3000:])
    listed = {url["loc"][len(server.origin) :] for url in read_sitemap_set(resumed.output_dir, server.origin + "/")}
    assert {f"/built-{i}" for i in range(count)} <= listed, resumed.describe()


@pytest.mark.parametrize("mode", ["always", "auto"])
def test_a_stop_does_not_wait_for_a_render_again_and_the_resumed_crawl_renders_the_page(
    tmp_path: Path, mode: str
) -> None:
    """SIGTERM while a page's render waits to be rendered again (Retry-After: 4, JOBDIR): the crawl
    stops at once, renders nothing after the stop, and leaves the page not done; the same command,
    once the site answers, renders it and lists the link its script builds. With render=auto the
    render is the probe of the page's template, which the page's own callback awaits: the page was
    judged by its static HTML and done, and the resumed crawl never rendered it."""
    busy = Route(status=503, headers=(("Content-Type", HTML), ("Retry-After", "4")), body=b"<p>busy")
    settings = {"SITEMAP_RENDER_TIMEOUT": "3", "JOBDIR": str(tmp_path / "job")}
    with _home_busy_for(1, busy) as server:
        args = crawl_command(server.origin + "/", tmp_path, "-a", f"render={mode}", settings=settings)
        # Once the static fetch and the browser's have come, 1.5 s into the 4 s wait.
        stopped = crawl_then_stop(args, lambda: server.targets().count("/") >= 2, 1.5, timeout=60)
        asked = server.targets().count("/")
        resumed = run_crawl(server.origin + "/", tmp_path, "-a", f"render={mode}", settings=settings)
    assert stopped.seconds < 2.5, (stopped.seconds, stopped.stderr[-3000:])
    assert asked == 2, asked
    assert "Resuming the crawl" in resumed.stderr, resumed.describe()
    assert {url["loc"][len(server.origin) :] for url in read_sitemap_set(resumed.output_dir, server.origin + "/")} == {
        "/", "/js-built"
    }, resumed.describe()

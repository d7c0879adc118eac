"""A stop does not wait out the site's pause (crawl/stopping.py): a real crawl, SIGTERM, then the resume."""

from __future__ import annotations

import itertools
import re
import time
from pathlib import Path

import pytest

from tests.crawl_fixtures import crawl_command, crawl_then_stop, run_crawl
from tests.site_server import HTML, SiteServer
from tests.site_spec import Route, SiteRequest
from tests.test_politeness import TimedServer, listed_paths, page
from tests.test_render import RENDERED_LISTED, _builds_its_link, _hang, _page, _slow_json, _template_site
from tests.test_render import js_site

PAGES = [f"/p{n}" for n in range(200)]
#: The pages served before the outage begins.
BEFORE = 20
ROBOTS = b"User-agent: *\nCrawl-delay: 5\n"
UNAVAILABLE = Route(status=503, headers=(("Content-Type", HTML), ("Retry-After", "30")), body=b"deploying")


def test_a_stop_in_a_long_pause_exits_at_once_and_the_resumed_crawl_loses_nothing(tmp_path: Path) -> None:
    """After its first pages the site answers 503 with ``Retry-After: 30``: it is paused for 30 s
    with pages waiting in its slot. SIGTERM: the crawl exits in seconds, not after the pause (and
    one pause per waiting page); the same command with the same JOBDIR, once the site is back,
    publishes every page."""
    down = {"on": True}
    served = itertools.count()

    def pages(request: SiteRequest) -> Route:
        return UNAVAILABLE if next(served) >= BEFORE and down["on"] else page(request.target)

    with TimedServer({"/": page("Home", *PAGES)}, [(path, pages) for path in PAGES]) as server:
        settings = {"JOBDIR": str(tmp_path / "job")}
        args = crawl_command(server.origin + "/", tmp_path, settings=settings)
        # 1.5 s after: the pause has begun, the other pages wait in the slot.
        stopped = crawl_then_stop(
            args, lambda: sum(target.startswith("/p") for target in server.target_order()) >= BEFORE + 3, 1.5
        )
        err = stopped.stderr
        assert stopped.returncode != 0, err[-3000:]
        assert "waiting for their turn not sent" in err, err[-3000:]
        assert stopped.seconds < 6, (stopped.seconds, err[-3000:])
        down["on"] = False
        resumed = run_crawl(server.origin + "/", tmp_path, settings=settings)
    assert listed_paths(resumed, server) == {"/", *PAGES}


def test_a_stop_lets_a_render_probe_waiting_behind_a_crawl_delay_go_and_the_resumed_crawl_renders_it(
    tmp_path: Path,
) -> None:
    """A ``Crawl-delay: 5`` site with script-built links: SIGTERM once its home page was fetched,
    while the probe that renders it waits in the slot. The probe is let go with the page requests,
    not done: it is not a failed render (the home page judged by its static HTML, and the resumed
    crawl missing the page only a script links to). Kept, it was sent at its turn after the stop,
    which started the browser only for the closing crawl to refuse it: a stop of 4.0 s."""
    routes = {**js_site(), "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=ROBOTS)}
    dynamic = [(re.compile(r"/hang\.js"), _hang), (re.compile(r"/api/slow\.json"), _slow_json)]
    with SiteServer(routes, dynamic=dynamic) as server:
        settings = {"JOBDIR": str(tmp_path / "job"), "SITEMAP_RENDER_TIMEOUT": "3"}
        args = crawl_command(server.origin + "/", tmp_path, "-a", "render=auto", settings=settings)
        # 1.5 s after: the home page is parsed, its probe and its links wait for the next 5 s.
        stopped = crawl_then_stop(args, lambda: "/" in server.targets(), 1.5)
        err = stopped.stderr
        assert stopped.returncode != 0, err[-3000:]
        assert "waiting for their turn not sent" in err, err[-3000:]
        assert "failed (the crawl stopped" not in err, err[-3000:]
        assert "Starting download handler" not in err, err[-3000:]  # no browser for a stopping crawl
        assert stopped.seconds < 3, (stopped.seconds, err[-3000:])
        # The resumed crawl without the delay, to keep the test short.
        resumed = run_crawl(
            server.origin + "/", tmp_path, "-a", "render=auto",
            settings={**settings, "SITEMAP_MAX_CRAWL_DELAY": "0"}, timeout=300,
        )  # fmt: skip
    assert listed_paths(resumed, server) == RENDERED_LISTED


#: Page /p<i>'s script file, /js/menu-<i>.js: it builds the page's link to /built-<i>.
MENU_JS = (
    "const a = document.createElement('a'); a.href = '/built-{}'; a.textContent = 'built';"
    " document.getElementById('nav').append(a);"
)


@pytest.mark.parametrize("mode", ["always", "auto"])
def test_a_stop_lets_the_browser_s_requests_waiting_behind_a_crawl_delay_go_too(
    tmp_path: Path, mode: str
) -> None:
    """``Crawl-delay: 2``, six pages whose links a script builds (JOBDIR): SIGTERM once the third
    page's static fetch is in. The browser's requests waiting in the site's slot then (the pages'
    renders with render=always; with render=auto the reads of their script files, which decide
    whether to render them) were kept and sent one turn apart after the stop, for a crawl that
    refused to render: a stop of 5.9 s (always), or 4.7 s and three script files fetched after it
    (auto). Now they are let go with the rest, not done: a script read let go is not "builds
    nothing" (its page judged by its static HTML and done), and the resumed crawl renders every page."""
    count = 6
    arrived: list[tuple[float, str]] = []
    stop: list[float] = []

    def answer(request: SiteRequest) -> Route:
        arrived.append((time.monotonic(), request.target))
        if request.target.startswith("/js/"):
            script = MENU_JS.format(request.target[len("/js/menu-") : -len(".js")])
            return Route(headers=(("Content-Type", "text/javascript"),), body=script.encode())
        i = request.target[2:]
        if mode == "always":
            return _builds_its_link(i)  # an inline script
        script_file = f'<div id="nav"></div><script src="/js/menu-{i}.js"></script>'
        return _page(f"P{i}", '<a href="/">home</a>' + script_file)

    def third_page_in() -> bool:
        if not any(target == "/p2" for _, target in arrived):
            return False
        stop.append(time.monotonic() + 0.3)  # when crawl_then_stop sends SIGTERM
        return True

    delay = Route(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nCrawl-delay: 2\n")
    routes = {**_template_site(count), "/robots.txt": delay}
    settings = {"JOBDIR": str(tmp_path / "job"), "SITEMAP_RENDER_TIMEOUT": "5"}
    with SiteServer(routes, dynamic=[(re.compile(r"/p\d+|/js/menu-\d+\.js"), answer)]) as server:
        args = crawl_command(server.origin + "/", tmp_path, "-a", f"render={mode}", settings=settings)
        stopped = crawl_then_stop(args, third_page_in, 0.3)
        after_stop = [target for at, target in arrived if at > stop[0]]
        err = stopped.stderr
        assert stopped.returncode != 0, err[-3000:]
        assert stopped.seconds < 3, (stopped.seconds, err[-3000:])
        assert after_stop == [], (after_stop, err[-3000:])
        resumed = run_crawl(
            server.origin + "/", tmp_path, "-a", f"render={mode}",
            settings={**settings, "SITEMAP_MAX_CRAWL_DELAY": "0"}, timeout=180,
        )  # fmt: skip
    assert "Resuming the crawl" in resumed.stderr, resumed.describe()
    assert {f"/built-{i}" for i in range(count)} <= listed_paths(resumed, server), resumed.describe()


def test_a_stop_during_the_last_pass_s_site_check_announces_no_further_wait(tmp_path: Path) -> None:
    """The failing pages' last pass first asks the home page whether the site answers at all
    (modes/held.py); a SIGTERM while that question is out cut it short, and the cut was read as
    "the site does not answer": the log announced another wait for a crawl that was stopping."""
    homes = itertools.count()
    busy = Route(status=503, headers=(("Content-Type", HTML), ("Retry-After", "4")), body=b"busy")

    def home(_request: SiteRequest) -> Route:
        if next(homes) > 0:
            time.sleep(5)  # the site check: still out when the crawl is stopped
        return page("Home", "/bad", "/hang")

    def hang(_request: SiteRequest) -> Route:
        time.sleep(5)  # times out (DOWNLOAD_TIMEOUT 4): no good answer for longer than the check's threshold
        return page("Hang")

    with TimedServer({"/bad": busy}, [("/", home), ("/hang", hang)]) as server:
        settings = {"SITEMAP_HISTORY": "off", "SITEMAP_RETRY_TIMES": "1", "DOWNLOAD_TIMEOUT": "4"}
        args = crawl_command(server.origin + "/", tmp_path, settings=settings)
        stopped = crawl_then_stop(args, lambda: server.target_order().count("/") == 2, 0.3)
    err = stopped.stderr
    assert "Only 1 failing page(s) left" in err, err[-3000:]
    assert "the last pass waits" not in err, err[-3000:]
    assert "Last pass:" not in err, err[-3000:]


def test_a_stop_does_not_send_what_waits_behind_a_crawl_delay_under_a_second(tmp_path: Path) -> None:
    """``Crawl-delay: 0.8``: up to 16 requests wait in the site's slot, sent 0.8 s apart. A stop sent
    them all first (12.7 s); now they are left for the resumed crawl, which publishes every page."""
    robots_txt = Route(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nCrawl-delay: 0.8\n")
    with TimedServer(
        {"/": page("Home", *PAGES[:40]), "/robots.txt": robots_txt},
        [(p, lambda r: page(r.target)) for p in PAGES[:40]],
    ) as server:
        settings = {"JOBDIR": str(tmp_path / "job")}
        args = crawl_command(server.origin + "/", tmp_path, settings=settings)
        stopped = crawl_then_stop(
            args, lambda: sum(t.startswith("/p") for t in server.target_order()) >= 2, 0.2
        )
        assert stopped.seconds < 3, (stopped.seconds, stopped.stderr[-3000:])
        assert "waiting for their turn not sent" in stopped.stderr, stopped.stderr[-3000:]
        resumed = run_crawl(
            server.origin + "/", tmp_path, settings={**settings, "SITEMAP_MAX_CRAWL_DELAY": "0"}
        )
    assert listed_paths(resumed, server) == {"/", *PAGES[:40]}


def test_a_crawl_on_a_reactor_other_than_asyncio_s_still_fetches_its_pages(tmp_path: Path) -> None:
    """The handler that lets go of requests in flight at a stop (crawl/stop_downloads.py) awaited an
    asyncio task, which Twisted's coroutines cannot: every request failed ("await wasn't used with
    future") and the crawl published nothing. Without asyncio its requests are waited for, as Scrapy's."""
    routes = {"/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
              "/": page("Home", "/a"), "/a": page("A", "/")}  # fmt: skip
    with SiteServer(routes) as server:
        reactor = {"TWISTED_REACTOR": "twisted.internet.epollreactor.EPollReactor"}
        result = run_crawl(server.origin + "/", tmp_path, "-a", "render=never", settings=reactor)
    assert listed_paths(result, server) == {"/", "/a"}

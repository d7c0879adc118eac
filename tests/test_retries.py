"""Retries held back, the last pass and pages given up (crawl/retries.py, modes/held.py), in every crawl mode.

Real crawls of tests/fault_server.py's FaultServer: a page down for more requests than its
retries allow is listed thanks to the last pass; a page down for good, or always cut short,
is given up: excluded with its cause, counted, said in the summary, and the rest published.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy.exceptions import DownloadConnectionRefusedError, DownloadTimeoutError, ResponseDataLossError

from sitemap_spider.crawl.retries import fault_cause, retry_delay
from tests.crawl_fixtures import REPO_ROOT, CrawlResult, crawl_command, run_crawl
from tests.fault_server import FaultPlan, FaultServer
from tests.generated_site import build_generated_site
from tests.site_server import HTML, html_page, links
from tests.site_spec import Route, SiteSpec
from tests.sitemap_check import read_sitemap_set

# One retry, 0.1 s apart, and the last pass a second after the last failure: each page gets
# two tries, then two more in the last pass.
QUICK = {"SITEMAP_RETRY_TIMES": "1", "SITEMAP_RETRY_DELAY": "0.1", "SITEMAP_RETRY_LAST_PASS_DELAY": "1"}
NEVER = 10**9
QUIET: dict[str, Any] = {"share": 0, "outage_after": 0, "refuse_after": 0}


@pytest.mark.parametrize(
    ("retry", "first", "cap", "retry_after", "jitter", "expected"),
    [
        (1, 1.0, 120.0, None, 1.0, 1.0),
        (2, 1.0, 120.0, None, 1.0, 2.0),
        (5, 1.0, 120.0, None, 1.0, 16.0),  # 1, 2, 4, 8, 16: a 30-s deploy is waited out
        (3, 1.0, 120.0, None, 0.5, 2.0),  # jitter scales the pause
        (3, 1.0, 120.0, None, 1.5, 6.0),
        (10, 1.0, 120.0, None, 1.0, 120.0),  # never above the cap
        (1, 1.0, 120.0, 30.0, 1.0, 30.0),  # Retry-After is the server's word
        (4, 1.0, 120.0, 0.0, 1.0, 0.0),  # also when it says now
        (1, 1.0, 120.0, 3600.0, 1.0, 120.0),  # within the cap
        (3, 0.25, 120.0, None, 1.0, 1.0),
    ],
)
def test_retry_delay(
    retry: int, first: float, cap: float, retry_after: float | None, jitter: float, expected: float
) -> None:
    assert retry_delay(retry, first, cap, retry_after, jitter) == expected


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (DownloadTimeoutError(), "timeout"),
        (DownloadConnectionRefusedError(), "connection_refused"),
        (ResponseDataLossError(), "truncated"),
        (ConnectionResetError(), "ConnectionResetError"),
    ],
)
def test_fault_cause(error: Exception, cause: str) -> None:
    assert fault_cause(error) == cause


# ---------------------------------------------------------------------------
# The last pass, and pages given up, in each crawl mode
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def faulty_site() -> Iterator[tuple[FaultServer, SiteSpec]]:
    with FaultServer() as server:
        spec = build_generated_site(server.origin, 300)
        server.serve(spec)
        yield server, spec


def _plain_pages(spec: SiteSpec) -> list[str]:
    return sorted(t for t in spec.routes if t.startswith("/g/p") and spec.routes[t].expect is not None)


def _mode_settings(mode: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, str]:
    if mode == "jobdir":
        return {"JOBDIR": str(tmp_path / "job")}
    if mode == "two":
        return {"SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "0"}
    if mode == "redis":
        return {"SITEMAP_REDIS_URL": request.getfixturevalue("redis_url")}
    return {"SITEMAP_WORKERS": "1"}


@pytest.mark.parametrize("mode", ["one", "jobdir", "two", "redis"])
def test_the_last_pass_lists_late_pages_and_the_rest_is_given_up(
    mode: str, faulty_site: tuple[FaultServer, SiteSpec], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    server, spec = faulty_site
    pages = _plain_pages(spec)
    # Spread over the site: failures that come together would put the whole site in trouble,
    # and a page's failure then is the site's, not one of its tries (test_politeness.py).
    late, dead, cut = pages[2::12][:6], pages[20], pages[44]
    # 502 for two requests: the first try and its one retry; the last pass gets the page.
    plan = FaultPlan(**QUIET, fixed=(*((p, "502", 2) for p in late), (dead, "502", NEVER), (cut, "truncated", NEVER)))
    server.inject(plan)
    server.clear()
    result = run_crawl(spec.start_url, tmp_path, settings={**QUICK, **_mode_settings(mode, tmp_path, request)})

    assert result.returncode == 0, result.describe()
    lost = {spec.origin + dead, spec.origin + cut}
    expected = [e for e in spec.expected_listed() if e["loc"] not in lost]
    got = read_sitemap_set(result.output_dir, spec.origin + "/")
    assert [e for e in got if not spec.is_trap(e["loc"])] == [e for e in expected if not spec.is_trap(e["loc"])]
    assert {spec.origin + p for p in late} <= {e["loc"] for e in got}

    stats = result.stats
    assert stats["sitemap/retry/last_pass"] == len(late) + 2, stats
    assert stats["sitemap/not_fetched"] == 2
    assert stats["sitemap/not_fetched/502"] == 1
    assert stats["sitemap/not_fetched/truncated"] == 1
    assert "could not be fetched (after every retry and a last pass): 2 (502 1, truncated 1)" in result.stderr
    assert "Last pass: " in result.stderr
    excluded = _excluded(result)
    assert excluded[spec.origin + dead] == ("http_error", "502")
    assert excluded[spec.origin + cut][0] == "error"
    # The first try, its one retry (SITEMAP_RETRY_TIMES), then one in the last pass: no more.
    assert server.targets().count(dead) == 3
    assert "Traceback" not in result.stderr, result.describe()
    if mode == "two":
        assert stats.get("sitemap/workers") == 2, result.describe()


@pytest.mark.parametrize("mode", ["one", "jobdir", "two", "redis"])
def test_a_retry_whose_wait_is_over_goes_before_the_pages_queued_meanwhile(
    mode: str, faulty_site: tuple[FaultServer, SiteSpec], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    server, spec = faulty_site
    # The first hub answers 503 with Retry-After: 1 once. Its retry keeps the hub's depth
    # (DEPTH_PRIORITY), one lower still (RETRY_PRIORITY_ADJUST): before modes/held.py put a
    # retry whose wait is over first, it waited behind every item of the other hubs queued at
    # that depth meanwhile, and the first hub's items were found only at the end of the crawl.
    hub = "/g/hub/0"
    server.inject(FaultPlan(**QUIET, fixed=((hub, "503", 1),)))
    server.clear()
    # At most 100 requests a second: the crawl's 420 take 4 s or more, so most of the other
    # hubs' items are still queued when the retry's second is over.
    settings = {**QUICK, "DOWNLOAD_DELAY": "0.01", **_mode_settings(mode, tmp_path, request)}
    result = run_crawl(spec.start_url, tmp_path, settings=settings)
    fetched = server.targets()

    assert result.returncode == 0, result.describe()
    got = read_sitemap_set(result.output_dir, spec.origin + "/")
    assert [e for e in got if not spec.is_trap(e["loc"])] == [
        e for e in spec.expected_listed() if not spec.is_trap(e["loc"])
    ]
    first, retry = [i for i, target in enumerate(fetched) if target == hub]
    # With it, about 100 requests come between the two (at most 100 a second); without, 220.
    assert retry - first < len(fetched) // 3, (first, retry, len(fetched))


def test_the_tail_clock_waits_while_a_retry_brings_new_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """SITEMAP_RETRY_LAST_PASS_DELAY is spent only while nothing but held requests is left, and once in a crawl."""
    from scrapy import Request
    from scrapy.utils.test import get_crawler

    from sitemap_spider.modes import held as held_module

    now = [1000.0]
    timers: list[float] = []

    class Timer:
        def cancel(self) -> None:
            pass

    def call_later(delay: float, *_: object) -> Timer:
        timers.append(now[0] + delay)
        return Timer()

    monkeypatch.setattr(held_module, "monotonic", lambda: now[0])
    monkeypatch.setattr(held_module, "call_later", call_later)
    held = held_module.HeldRequests(get_crawler(), last_pass_delay=30.0)
    held.hold(Request("https://example.com/failing"), 100.0)
    assert held.keep_open()  # the rest of the crawl is done
    assert timers[-1] == 1030.0
    now[0] = 1020.0
    held._scheduled(Request("https://example.com/found-by-a-retry"))  # a retry answered with a new page
    now[0] = 1025.0
    assert held.keep_open()  # that page is fetched: only held requests again
    assert timers[-1] == 1035.0
    # The page answered 5 s later, and the page it links to fails in turn: 5 s are left, not 30.
    now[0] = 1030.0
    held._due.clear()
    assert not held.keep_open()
    held.hold(Request("https://example.com/failing-too"), 100.0)
    now[0] = 1031.0
    assert held.keep_open()
    assert timers[-1] == 1036.0
    # The time is up: a page that fails after that gets no wait but its retries' short pause.
    held._due.clear()
    now[0] = 1040.0
    assert not held.keep_open()
    held.hold(Request("https://example.com/failing-last"), 100.0)
    assert held.keep_open()
    assert timers[-1] == 1040.0


def test_another_process_s_last_pass_cuts_only_a_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    """time_is_up (the other process ran its last pass): at once if only failing pages are left
    here too; ignored while this process still fetches pages, whose failing pages keep their time."""
    from scrapy import Request
    from scrapy.utils.test import get_crawler

    from sitemap_spider.modes import held as held_module

    now = [1000.0]
    timers: list[tuple[float, object]] = []

    class Timer:
        def cancel(self) -> None:
            pass

    def call_later(delay: float, func: object, *_: object) -> Timer:
        timers.append((now[0] + delay, func))
        return Timer()

    monkeypatch.setattr(held_module, "monotonic", lambda: now[0])
    monkeypatch.setattr(held_module, "call_later", call_later)
    held = held_module.HeldRequests(get_crawler(), last_pass_delay=30.0)
    held.hold(Request("https://example.com/failing"), 100.0)
    held.time_is_up()  # pages are still fetched here: nothing changes
    assert timers == [(1100.0, held._release_due)]
    assert held.keep_open()
    assert timers[-1] == (1030.0, held._check_site)
    now[0] = 1005.0
    held.time_is_up()  # only failing pages left here too: the site check, then the last pass, now
    assert timers[-1] == (1005.0, held._check_site)
    # A later spell of failing pages (the check has run) still has the rest of its own time.
    held._pass_timer, held._tail_since, held._tail_spent = None, None, 5.0
    now[0] = 1200.0
    assert held.keep_open()
    assert timers[-1] == (1225.0, held._check_site)


def _excluded(result: CrawlResult) -> dict[str, tuple[str, str | None]]:
    assert result.report is not None, result.describe()
    return {row["url"]: (row["reason"], row.get("detail")) for row in result.report["excluded_urls"]}


# ---------------------------------------------------------------------------
# A truncated body is never judged
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("fail_on_dataloss", ["True", "False"])
def test_a_truncated_page_is_neither_listed_nor_read_for_links(fail_on_dataloss: str, tmp_path: Path) -> None:
    # The link is in the half that arrives; the rest of the page is padding.
    cut_body = html_page("Cut", links("/only-via-cut") + "<p>" + "padding " * 500 + "</p>")
    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nDisallow:\n"),
        "/": Route(headers=(("Content-Type", HTML),), body=html_page("Home", links("/cut", "/ok"))),
        "/cut": Route(headers=(("Content-Type", HTML),), body=cut_body),
        "/ok": Route(headers=(("Content-Type", HTML),), body=html_page("OK")),
        "/only-via-cut": Route(headers=(("Content-Type", HTML),), body=html_page("Hidden")),
    }
    with FaultServer() as server:
        server.routes = routes
        server.inject(FaultPlan(**QUIET, fixed=(("/cut", "truncated", NEVER),)))
        settings = {**QUICK, "DOWNLOAD_FAIL_ON_DATALOSS": fail_on_dataloss}
        result = run_crawl(server.origin + "/", tmp_path, settings=settings)
        fetched = server.targets()
    assert result.returncode == 0, result.describe()
    got = {e["loc"][len(server.origin) :] for e in read_sitemap_set(result.output_dir, server.origin + "/")}
    assert got == {"/", "/ok"}
    assert "/only-via-cut" not in fetched
    assert fetched.count("/cut") == 3
    reason, detail = _excluded(result)[server.origin + "/cut"]
    assert reason == "error", detail
    if fail_on_dataloss == "False":
        assert detail == "truncated body"
    assert result.stats["sitemap/not_fetched/truncated"] == 1


# ---------------------------------------------------------------------------
# A site that is down for good: the crawl stops, nothing is published
# ---------------------------------------------------------------------------


def test_a_site_down_for_longer_than_the_budget_stops_the_crawl(tmp_path: Path) -> None:
    pages = [f"/p{i}" for i in range(5)]
    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nDisallow:\n"),
        "/": Route(headers=(("Content-Type", HTML),), body=html_page("Home", links(*pages))),
        **{page: Route(headers=(("Content-Type", HTML),), body=html_page(page)) for page in pages},
    }
    with FaultServer() as server:
        server.routes = routes
        server.inject(FaultPlan(**QUIET, fixed=tuple((page, "502", NEVER) for page in pages)))
        settings = {"SITEMAP_RETRY_TIMES": "50", "SITEMAP_RETRY_DELAY": "0.2", "SITEMAP_RETRY_BUDGET": "3"}
        result = run_crawl(server.origin + "/", tmp_path, settings=settings, timeout=60)
    assert result.returncode == 1, result.describe()
    assert "nothing but transient faults for 3 s (SITEMAP_RETRY_BUDGET)" in result.stderr
    assert "Sitemap NOT published: the crawl did not finish (site_down)" in result.stderr
    assert not (result.output_dir / "sitemap_index.xml").exists()
    assert result.seconds < 40, result.describe()


# ---------------------------------------------------------------------------
# JOBDIR: a retry held when the crawl is killed is fetched on resume
# ---------------------------------------------------------------------------


def test_a_retry_held_at_a_sigkill_is_fetched_on_resume(tmp_path: Path) -> None:
    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nDisallow:\n"),
        "/": Route(headers=(("Content-Type", HTML),), body=html_page("Home", links("/late", "/ok"))),
        "/late": Route(headers=(("Content-Type", HTML),), body=html_page("Late", links("/after-late"))),
        "/ok": Route(headers=(("Content-Type", HTML),), body=html_page("OK")),
        "/after-late": Route(headers=(("Content-Type", HTML),), body=html_page("After")),
    }
    jobdir = tmp_path / "job"
    with FaultServer() as server:
        server.routes = routes
        server.inject(FaultPlan(**QUIET, fixed=(("/late", "502", 1),)))
        # The retry waits 20 to 60 s, and the rest of the crawl done, it may wait that long: the
        # crawl is killed while it is held.
        held = {"JOBDIR": str(jobdir), "SITEMAP_RETRY_DELAY": "40", "SITEMAP_RETRY_LAST_PASS_DELAY": "120"}
        process = subprocess.Popen(
            crawl_command(server.origin + "/", tmp_path, settings={**QUICK, **held}),
            cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while server.targets().count("/late") < 1 or "/ok" not in server.targets():
                assert time.monotonic() < deadline and process.poll() is None, server.targets()
                time.sleep(0.1)
            time.sleep(2)  # its answer handled, the retry held
            assert process.poll() is None
        finally:
            process.kill()
            process.wait()
        assert not (tmp_path / "sitemaps").exists()
        result = run_crawl(server.origin + "/", tmp_path, settings={**QUICK, "JOBDIR": str(jobdir)})
        fetched = server.targets()
    assert result.returncode == 0, result.describe()
    got = {e["loc"][len(server.origin) :] for e in read_sitemap_set(result.output_dir, server.origin + "/")}
    assert got == {"/", "/ok", "/late", "/after-late"}
    assert fetched.count("/late") == 2  # the failure, then the resumed crawl's fetch


# ---------------------------------------------------------------------------
# Faults in a row slow the whole site down (politeness.py)
# ---------------------------------------------------------------------------


def test_most_answers_failing_slow_the_site_down(tmp_path: Path) -> None:
    pages = [f"/f{i}" for i in range(6)]
    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nDisallow:\n"),
        "/": Route(headers=(("Content-Type", HTML),), body=html_page("Home", links(*pages))),
        **{page: Route(headers=(("Content-Type", HTML),), body=html_page(page)) for page in pages},
    }
    with FaultServer() as server:
        server.routes = routes
        server.inject(FaultPlan(**QUIET, fixed=tuple((page, "502", 1) for page in pages)))
        # One request at a time, and retries long after the first answers: five 502s of seven answers.
        settings = {**QUICK, "CONCURRENT_REQUESTS_PER_DOMAIN": "1", "SITEMAP_RETRY_DELAY": "2"}
        result = run_crawl(server.origin + "/", tmp_path, settings=settings)
    assert result.returncode == 0, result.describe()
    got = {e["loc"][len(server.origin) :] for e in read_sitemap_set(result.output_dir, server.origin + "/")}
    assert got == {"/", *pages}
    backoffs = result.stats.get("sitemap/backoff/502")
    assert isinstance(backoffs, int) and backoffs >= 1, result.describe()
    assert "answered 502: slowing down to one request every 2 s" in result.stderr
    assert "back to its normal pace" in result.stderr


def test_a_few_failing_pages_do_not_slow_the_site_down(tmp_path: Path) -> None:
    pages = [f"/p{i}" for i in range(12)]
    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nDisallow:\n"),
        "/": Route(headers=(("Content-Type", HTML),), body=html_page("Home", links(*pages))),
        **{page: Route(headers=(("Content-Type", HTML),), body=html_page(page)) for page in pages},
    }
    with FaultServer() as server:
        server.routes = routes
        # Three pages fail for good, every try: their retries say nothing new about the site.
        server.inject(FaultPlan(**QUIET, fixed=tuple((page, "502", NEVER) for page in pages[:3])))
        settings = {**QUICK, "CONCURRENT_REQUESTS_PER_DOMAIN": "1", "SITEMAP_RETRY_TIMES": "4"}
        result = run_crawl(server.origin + "/", tmp_path, settings=settings)
    assert result.returncode == 0, result.describe()
    got = {e["loc"][len(server.origin) :] for e in read_sitemap_set(result.output_dir, server.origin + "/")}
    assert got == {"/", *pages[3:]}
    assert not [k for k in result.stats if k.startswith("sitemap/backoff/")], result.stats
    assert result.stats["sitemap/not_fetched"] == 3


def test_a_retried_page_s_redirect_target_is_filtered_and_kept_in_scope(tmp_path: Path) -> None:
    """A retry goes past the duplicate filter (dont_filter); its redirect target is a URL of its
    own: fetched once though a link also leads there, and never when it is on another site."""
    with FaultServer() as server, FaultServer() as elsewhere:
        elsewhere.routes = {"/": Route(headers=(("Content-Type", HTML),), body=html_page("Elsewhere"))}
        away = elsewhere.origin.replace("127.0.0.1", "localhost") + "/"
        server.routes = {
            "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nDisallow:\n"),
            "/": Route(headers=(("Content-Type", HTML),), body=html_page("Home", links("/moved", "/away", "/c/d", "/dest"))),
            # Linked from a page one level down: the redirect reaches /dest first, then the link.
            "/c/d": Route(headers=(("Content-Type", HTML),), body=html_page("Deeper", links("/dest"))),
            "/moved": Route(status=301, headers=(("Location", "/dest"),)),
            "/away": Route(status=301, headers=(("Location", away),)),
            "/dest": Route(headers=(("Content-Type", HTML),), body=html_page("Destination")),
        }
        # Both redirecting pages fail once first: their redirects come from a retry.
        server.inject(FaultPlan(**QUIET, fixed=(("/moved", "502", 1), ("/away", "502", 1))))
        result = run_crawl(server.origin + "/", tmp_path, settings={**QUICK, "CONCURRENT_REQUESTS_PER_DOMAIN": "1"})
        fetched = server.targets("GET")
        assert result.returncode == 0, result.describe()
        assert fetched.count("/moved") == 2, fetched
        assert fetched.count("/dest") == 1, fetched
        assert elsewhere.targets() == [], elsewhere.targets()
    got = {e["loc"][len(server.origin) :] for e in read_sitemap_set(result.output_dir, server.origin + "/")}
    assert got == {"/", "/c/d", "/dest"}


def test_a_page_put_back_in_a_pause_goes_in_its_own_turn() -> None:
    """A held request whose wait is over goes ahead of every page (DUE_PRIORITY); one put back while
    its site was paused (meta PUT_BACK) goes in its own turn, a retry included, whose priority its
    first release had raised: ahead of every page, the same failing pages took every turn of the
    pause, and only a page not tried yet can end it."""
    from types import SimpleNamespace

    from scrapy import Request
    from scrapy.utils.test import get_crawler

    from sitemap_spider import request_meta as meta
    from sitemap_spider.modes.held import DUE_PRIORITY, HeldRequests

    crawler = get_crawler()
    queued: list[Request] = []
    crawler.engine = SimpleNamespace(spider=object(), crawl=queued.append)  # type: ignore[assignment]
    held = HeldRequests(crawler, last_pass_delay=30.0)
    retry = Request("https://example.com/p", priority=-3, meta={"retry_times": 1})
    held._crawl(retry)
    assert queued[-1].priority == DUE_PRIORITY
    second = retry.replace(priority=retry.priority - 1)  # its next retry (RETRY_PRIORITY_ADJUST)
    second.meta["retry_times"] = 2
    held._crawl(second)
    assert queued[-1].priority == DUE_PRIORITY
    put_back = second.replace(dont_filter=True)  # what retries.py holds when it fails in a pause
    put_back.meta[meta.PUT_BACK] = True
    held._crawl(put_back)
    assert queued[-1].priority == -3
    first_try = Request("https://example.com/q", priority=-2, meta={meta.PUT_BACK: True})
    held._crawl(first_try)
    assert queued[-1].priority == -2

"""A robots.txt that fails (crawl/robots.py): asked again, never taken for "no rules" while it may answer.

Real crawls against a local server; the order of the requests is the server's. RFC 9309
(2.3.1.4) reads a robots.txt answering 5xx, or unreachable, as "disallow everything" until it
answers: Scrapy read the error page as a robots.txt without rules, and a crawl that started
during an outage fetched and listed what robots.txt forbids.
"""

from __future__ import annotations

import itertools
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.crawl_fixtures import REPO_ROOT, crawl_command, crawl_then_stop, log_count, run_crawl
from tests.sitemap_check import read_sitemap_set
from tests.site_server import HTML
from tests.site_spec import Route, SiteRequest
from tests.test_politeness import TimedServer, in_turn, listed_paths, page, robots
from tests.test_shared import run_workers

RULES = "User-agent: *\nDisallow: /private/\n"
ROUTES = {"/": page("Home", "/a", "/private/secret"), "/a": page("A"), "/private/secret": page("Secret")}
UNAVAILABLE = Route(
    status=503, headers=(("Content-Type", HTML),), body=b"<html><body>deploying</body></html>"
)
BROKEN = Route(status=500, headers=(("Content-Type", HTML),), body=b"<html><body>oops</body></html>")


def test_a_robots_txt_answering_503_is_asked_again_and_nothing_else_goes_before_it_answers(
    tmp_path: Path,
) -> None:
    robots_txt = in_turn(UNAVAILABLE, UNAVAILABLE, UNAVAILABLE, robots(RULES))
    with TimedServer(ROUTES, [("/robots.txt", robots_txt)]) as server:
        result = run_crawl(server.origin + "/", tmp_path, settings={"SITEMAP_RETRY_TIMES": "5"})
        order = server.target_order()
        asked = server.arrivals("/robots.txt")
    assert listed_paths(result, server) == {"/", "/a"}
    assert order[:4] == ["/robots.txt"] * 4, order
    assert "/private/secret" not in order
    # On a page's back-off: 0.1, 0.2, then 0.4 s (SITEMAP_RETRY_DELAY=0.1 in the tests).
    waits = [later - earlier for earlier, later in zip(asked, asked[1:], strict=False)]
    assert [round(wait, 1) >= floor for wait, floor in zip(waits, (0.1, 0.2, 0.4), strict=True)] == [
        True
    ] * 3, waits
    assert result.stats.get("sitemap/robots/unavailable/503") == 3
    assert "robots.txt: 503; nothing of" in result.stderr


def test_a_robots_txt_failing_for_good_applies_the_last_crawl_s_copy(tmp_path: Path) -> None:
    """Search engines keep using their last copy of a robots.txt that fails; so does a recrawl."""
    answer = {"robots": robots(RULES)}
    with TimedServer(ROUTES, [("/robots.txt", lambda _request: answer["robots"])]) as server:
        first = run_crawl(server.origin + "/", tmp_path)
        assert listed_paths(first, server) == {"/", "/a"}
        answer["robots"] = BROKEN  # a bug in the robots.txt handler, for the whole recrawl
        served = len(server.target_order())
        second = run_crawl(server.origin + "/", tmp_path)
        recrawl = server.target_order()[served:]
    assert listed_paths(second, server) == {"/", "/a"}
    assert recrawl[:3] == ["/robots.txt"] * 3, recrawl  # the first try and SITEMAP_RETRY_TIMES (2) more
    assert "/private/secret" not in recrawl
    assert second.stats.get("sitemap/robots/unavailable/500") == 3
    assert second.stats.get("sitemap/robots/from_history") == 1
    assert "applying the robots.txt the last crawl read" in second.stderr
    # The copy is kept for the next crawl, though this one could not read robots.txt.
    third = run_crawl(server.origin + "/", tmp_path)
    assert third.stats.get("sitemap/robots/from_history") == 1, third.describe()


def test_a_shared_crawl_s_worker_on_another_host_applies_the_copy_too(tmp_path: Path, redis_url: str) -> None:
    """The copy is shared through Redis: a worker whose host never published (no history file of
    its own) applies it as the publisher would."""
    answer = {"robots": robots(RULES)}
    shared = {"SITEMAP_REDIS_URL": redis_url, "SITEMAP_REDIS_IDLE_SECONDS": "0.5"}
    with TimedServer(ROUTES, [("/robots.txt", lambda _request: answer["robots"])]) as server:
        first = run_crawl(server.origin + "/", tmp_path / "host-a", settings=shared)
        assert listed_paths(first, server) == {"/", "/a"}
        answer["robots"] = BROKEN
        served = len(server.target_order())
        second = run_crawl(server.origin + "/", tmp_path / "host-b", settings=shared)
        recrawl = server.target_order()[served:]
    assert listed_paths(second, server) == {"/", "/a"}
    assert "/private/secret" not in recrawl, recrawl
    assert second.stats.get("sitemap/robots/from_history") == 1, second.describe()


def test_a_robots_txt_failing_with_no_earlier_copy_is_read_as_scrapy_reads_it(tmp_path: Path) -> None:
    with TimedServer(ROUTES, [("/robots.txt", lambda _request: BROKEN)]) as server:
        result = run_crawl(server.origin + "/", tmp_path, settings={"SITEMAP_HISTORY": "off"})
    assert listed_paths(result, server) == {"/", "/a", "/private/secret"}
    assert result.stats.get("sitemap/robots/none") == 1
    assert "no earlier copy in the crawl history" in result.stderr


def test_the_last_crawl_s_copy_brings_its_crawl_delay_and_applies_after_a_timeout(tmp_path: Path) -> None:
    """A robots.txt that times out is not asked again (it waited DOWNLOAD_TIMEOUT), but the last
    copy applies all the same, with its Crawl-delay."""
    answer = {"robots": robots(RULES + "Crawl-delay: 0.4\n")}

    def respond(_request: SiteRequest) -> Route:
        route = answer["robots"]
        if route is BROKEN:
            time.sleep(3)  # past DOWNLOAD_TIMEOUT
        return route

    with TimedServer(ROUTES, [("/robots.txt", respond)]) as server:
        first = run_crawl(server.origin + "/", tmp_path)
        assert listed_paths(first, server) == {"/", "/a"}
        answer["robots"] = BROKEN
        served = len(server.target_order())
        second = run_crawl(server.origin + "/", tmp_path, settings={"DOWNLOAD_TIMEOUT": "1"})
        recrawl = server.target_order()[served:]
        pages = [t for t in server.arrivals() if t >= server.arrivals("/robots.txt")[-1]][1:]
    assert listed_paths(second, server) == {"/", "/a"}
    assert "/private/secret" not in recrawl, recrawl
    assert second.stats.get("sitemap/robots/from_history") == 1
    assert second.stats.get("sitemap/robots/unavailable/timeout") == 1
    assert second.stats.get("sitemap/crawl_delay") == 0.4
    assert len(pages) == 2 and pages[1] - pages[0] >= 0.35, pages


def test_a_crawl_that_stops_on_robots_txt_s_last_try_fetches_nothing_it_may_forbid(tmp_path: Path) -> None:
    """The site-down budget runs out on the last try: the crawl is closing, and the start URL, which
    robots.txt forbids, must not go out during the close (it was fetched, recorded as done with
    JOBDIR, and published by the resumed crawl)."""
    with TimedServer(ROUTES, [("/robots.txt", lambda _request: UNAVAILABLE)]) as server:
        settings = {
            "JOBDIR": str(tmp_path / "job"),
            "SITEMAP_RETRY_TIMES": "0",
            "SITEMAP_RETRY_BUDGET": "0.01",
        }
        result = run_crawl(server.origin + "/private/secret", tmp_path, settings=settings)
        order = server.target_order()
    assert result.returncode != 0, result.describe()
    assert "site_down" in result.stderr
    assert set(order) == {"/robots.txt"}, order
    assert "still unknown when the crawl stopped" in result.stderr


def test_a_crawl_stopped_while_robots_txt_fails_stops_at_once_and_resumes_with_nothing_lost(
    tmp_path: Path,
) -> None:
    """SIGTERM in the wait between tries: the crawl stops without waiting for the next try, the
    requests that waited are not recorded (not as forbidden by robots.txt), and the same command
    with the same JOBDIR, once robots.txt answers, publishes the whole set."""
    answer = {"robots": UNAVAILABLE}
    jobdir = tmp_path / "job"
    with TimedServer(ROUTES, [("/robots.txt", lambda _request: answer["robots"])]) as server:
        settings = {"JOBDIR": str(jobdir), "SITEMAP_RETRY_DELAY": "5", "SITEMAP_RETRY_TIMES": "5"}
        args = crawl_command(server.origin + "/", tmp_path, settings=settings)
        # 0.3 s into the wait before the third try.
        stopped = crawl_then_stop(args, lambda: len(server.arrivals("/robots.txt")) >= 2, 0.3, timeout=60)
        assert set(server.target_order()) == {"/robots.txt"}
        assert stopped.returncode != 0
        assert not (tmp_path / "sitemaps").exists()
        assert stopped.seconds < 4, stopped.seconds  # not the 10 s wait for the third try
        answer["robots"] = robots(RULES)
        resumed = run_crawl(server.origin + "/", tmp_path, settings=settings)
    assert listed_paths(resumed, server) == {"/", "/a"}
    assert "/private/secret" not in server.target_order()


def test_a_resumed_crawl_applies_the_robots_txt_its_stopped_run_read(tmp_path: Path) -> None:
    """A first crawl (no history) with JOBDIR, stopped after its first page, resumed while robots.txt
    fails for good: the robots.txt the stopped run read applies, not "no rules"."""
    answer = {"robots": robots(RULES)}
    settings = {"JOBDIR": str(tmp_path / "job"), "SITEMAP_HISTORY": "off", "SITEMAP_RETRY_TIMES": "1"}
    with TimedServer(ROUTES, [("/robots.txt", lambda _request: answer["robots"])]) as server:
        stopped = run_crawl(server.origin + "/", tmp_path, settings={**settings, "CLOSESPIDER_PAGECOUNT": "1"})
        # robots.txt read; "/" may be fetched or, waiting in the site's slot at the close, let go.
        assert server.target_order()[:1] == ["/robots.txt"], stopped.describe()
        answer["robots"] = BROKEN
        resumed = run_crawl(server.origin + "/", tmp_path, settings=settings)
        order = server.target_order()
    assert "Resuming the crawl" in resumed.stderr, resumed.describe()
    assert listed_paths(resumed, server) == {"/", "/a"}
    assert "/private/secret" not in order, order
    assert resumed.stats.get("sitemap/robots/from_this_crawl") == 1, resumed.describe()
    assert "applying the robots.txt this crawl read" in resumed.stderr


def test_the_second_process_applies_the_robots_txt_the_first_one_read(tmp_path: Path) -> None:
    """robots.txt answers the first process, then fails for good: the second process, which asks
    it again, applies the one the first read (no history to fall back on)."""
    count = 200
    routes = {
        "/": page("Home", *(f"/p{n}" for n in range(count))),
        **{f"/p{n}": page(f"P{n}", f"/private/s{n}") for n in range(count)},
        **{f"/private/s{n}": page(f"Secret {n}") for n in range(count)},
    }
    settings = {
        "SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "0", "SITEMAP_HISTORY": "off",
        "SITEMAP_RETRY_TIMES": "0",
    }  # fmt: skip
    with TimedServer(routes, [("/robots.txt", in_turn(robots(RULES), BROKEN))]) as server:
        result = run_crawl(server.origin + "/", tmp_path, settings=settings)
        order = server.target_order()
    assert result.stats.get("sitemap/workers") == 2, result.describe()
    assert order.count("/robots.txt") == 2, order  # the second process's try failed
    assert not [target for target in order if target.startswith("/private/")]
    assert listed_paths(result, server) == {"/", *(f"/p{n}" for n in range(count))}
    assert "[worker 2]" in result.stderr and "applying the robots.txt this crawl read" in result.stderr


def test_a_shared_crawl_s_worker_whose_own_try_fails_applies_the_robots_txt_another_worker_read(
    tmp_path: Path, redis_url: str
) -> None:
    """robots.txt answers the worker that starts a shared crawl, then fails for good: a worker that
    joins, whose own try fails, applies the copy the first one read (no history to fall back on).

    The first worker's pages are answered only once the second has asked robots.txt, so the crawl
    cannot end before the second joins; both then take pages whose links lead to /private/.
    """
    count = 100
    asked_again = threading.Event()
    first_robots = in_turn(robots(RULES), BROKEN)

    def robots_txt(request: SiteRequest) -> Route:
        route = first_robots(request)
        if route is BROKEN:
            asked_again.set()
        return route

    def held(n: int) -> Callable[[SiteRequest], Route]:
        def respond(_request: SiteRequest) -> Route:
            asked_again.wait(60)
            return page(f"P{n}", f"/private/s{n}")

        return respond

    routes = {
        "/": page("Home", *(f"/p{n}" for n in range(count))),
        **{f"/private/s{n}": page(f"Secret {n}") for n in range(count)},
    }
    dynamic = [("/robots.txt", robots_txt), *((f"/p{n}", held(n)) for n in range(count))]
    settings = {
        "SITEMAP_REDIS_URL": redis_url, "SITEMAP_REDIS_IDLE_SECONDS": "0.5", "SITEMAP_HISTORY": "off",
        "SITEMAP_RETRY_TIMES": "0",
    }  # fmt: skip
    with TimedServer(routes, dynamic) as server:
        args = crawl_command(server.origin + "/", tmp_path, settings=settings)
        logs = [tmp_path / "worker-1.log", tmp_path / "worker-2.log"]
        workers = []
        for log in logs:
            with log.open("w", encoding="utf-8") as out:
                workers.append(subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=out))
            # The first worker has read robots.txt (and noted it) once it asks for a page.
            deadline = time.monotonic() + 60
            while "/" not in server.target_order() and time.monotonic() < deadline:
                time.sleep(0.05)
        codes = [worker.wait(timeout=120) for worker in workers]
        order = server.target_order()
    texts = [log.read_text(encoding="utf-8") for log in logs]
    assert codes == [0, 0], [text[-3000:] for text in texts]
    assert order.count("/robots.txt") == 2, order  # the second worker's own try failed
    assert not [target for target in order if target.startswith("/private/")], order
    second = texts[1]
    assert "applying the robots.txt this crawl read" in second, second[-3000:]
    assert log_count(second, "sitemap/robots/from_this_crawl") == 1
    assert log_count(second, "scheduler/dequeued/redis") > 0, second[-3000:]  # it took pages too
    urls = read_sitemap_set(tmp_path / "sitemaps", server.origin + "/")
    assert {url["loc"][len(server.origin) :] for url in urls} == {"/", *(f"/p{n}" for n in range(count))}


def test_shared_workers_started_together_apply_the_robots_txt_one_of_them_read_while_the_other_tried(
    tmp_path: Path, redis_url: str
) -> None:
    """Two workers started at once: the first robots.txt answer (the rules) comes after 2 s, every
    other try fails. The worker whose tries fail looked for another worker's copy before the other
    had read it; it looks again before falling back, and applies the copy read meanwhile."""
    count = 60
    answers = itertools.count()

    def robots_txt(_request: SiteRequest) -> Route:
        if next(answers) == 0:
            time.sleep(2)
            return robots(RULES)
        return BROKEN

    routes = {f"/s{n}": page(f"S{n}", f"/private/x{n}") for n in range(count)}
    routes.update({f"/private/x{n}": page(f"X{n}") for n in range(count)})
    settings = {
        "SITEMAP_REDIS_URL": redis_url, "SITEMAP_REDIS_IDLE_SECONDS": "0.5", "SITEMAP_HISTORY": "off",
        "SITEMAP_RETRY_TIMES": "2", "SITEMAP_RETRY_DELAY": "1",
    }  # fmt: skip
    with TimedServer(routes, [("/robots.txt", robots_txt)]) as server:
        starts = " ".join(f"{server.origin}/s{n}" for n in range(count))
        workers = run_workers(crawl_command(starts, tmp_path, settings=settings), tmp_path, 2)
        results = [worker.finish(timeout=120) for worker in workers]
        order = server.target_order()
    texts = [text for _, text in results]
    assert [code for code, _ in results] == [0, 0], [text[-3000:] for text in texts]
    assert not [target for target in order if target.startswith("/private/")], order
    assert sum("applying the robots.txt this crawl read" in text for text in texts) == 1, [t[-3000:] for t in texts]
    assert not any("as if it had no robots.txt" in text for text in texts)


def test_a_shared_crawl_keeps_for_the_next_crawl_the_robots_txt_a_worker_read_after_another_fell_back(
    tmp_path: Path, redis_url: str
) -> None:
    """Worker B's one try fails and it applies the last crawl's copy; worker A then joins and reads
    the new robots.txt (Disallow: /new/). A is stopped, B publishes: the history kept the copy B
    fell back to, and the next crawl, whose robots.txt fails, fetched /new/y."""
    old, new = "User-agent: *\nDisallow: /old/\n", "User-agent: *\nDisallow: /new/\n"
    answer = {"robots": robots(old)}
    pages = [f"/p{n}" for n in range(80)]

    def slow(request: SiteRequest) -> Route:
        time.sleep(0.25)
        return page(request.target)

    routes = {"/": page("Home", *pages, "/old/x", "/new/y"), "/old/x": page("Old"), "/new/y": page("New")}
    shared = {"SITEMAP_REDIS_URL": redis_url, "SITEMAP_REDIS_IDLE_SECONDS": "0.5", "SITEMAP_RETRY_TIMES": "0",
              "SITEMAP_HISTORY": str(tmp_path / "history-b.sqlite")}  # fmt: skip
    with TimedServer(routes, [("/robots.txt", lambda _r: answer["robots"]), *((p, slow) for p in pages)]) as server:
        assert run_crawl(server.origin + "/", tmp_path / "crawl-0", settings=shared).returncode == 0
        answer["robots"] = BROKEN
        served = len(server.target_order())
        logs = {name: tmp_path / f"{name}.log" for name in ("a", "b")}
        with logs["b"].open("w", encoding="utf-8") as out:
            args = crawl_command(server.origin + "/", tmp_path / "b", settings=shared)
            b = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=out)
        deadline = time.monotonic() + 60
        while "applying the robots.txt" not in logs["b"].read_text(encoding="utf-8"):
            assert time.monotonic() < deadline and b.poll() is None
            time.sleep(0.05)
        answer["robots"] = robots(new)
        with logs["a"].open("w", encoding="utf-8") as out:
            settings = {**shared, "SITEMAP_HISTORY": str(tmp_path / "history-a.sqlite")}
            args = crawl_command(server.origin + "/", tmp_path / "a", settings=settings)
            a = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=out)
        while server.target_order()[served:].count("/robots.txt") < 2:
            assert time.monotonic() < deadline and a.poll() is None
            time.sleep(0.05)
        time.sleep(1)
        a.send_signal(signal.SIGTERM)
        assert (a.wait(timeout=60), b.wait(timeout=120))[1] == 0, logs["b"].read_text(encoding="utf-8")[-3000:]
        answer["robots"] = BROKEN
        served = len(server.target_order())
        alone = {name: value for name, value in shared.items() if name != "SITEMAP_REDIS_URL"}
        third = run_crawl(server.origin + "/", tmp_path / "crawl-2", settings=alone)
        fetched = server.target_order()[served:]
    assert "applying the robots.txt the last crawl read" in third.stderr, third.describe()
    assert "/new/y" not in fetched and "/old/x" in fetched, fetched


def test_a_two_process_crawl_keeps_for_the_next_crawl_the_robots_txt_its_second_process_read(
    tmp_path: Path,
) -> None:
    """The first process's try fails (it applies the last crawl's copy); the second process reads the
    new robots.txt (Disallow: /new/). The first publishes: its history kept the last crawl's copy,
    and the next crawl, whose robots.txt fails, fetched /new/y."""
    old, new = "User-agent: *\nDisallow: /old/\n", "User-agent: *\nDisallow: /new/\n"
    pages = [f"/p{n}" for n in range(200)]
    slow = threading.Event()  # the two-process crawl's pages are slow: it lasts until the second asks

    def some_page(request: SiteRequest) -> Route:
        if slow.is_set():
            time.sleep(0.2)
        return page(request.target)

    answer: dict[str, Callable[[SiteRequest], Route]] = {"robots": lambda _r: robots(old)}
    routes = {"/": page("Home", *pages, "/old/x", "/new/y"), "/old/x": page("Old"), "/new/y": page("New")}
    dynamic = [("/robots.txt", lambda request: answer["robots"](request)), *((p, some_page) for p in pages)]
    settings = {"SITEMAP_RETRY_TIMES": "0"}
    with TimedServer(routes, dynamic) as server:
        assert run_crawl(server.origin + "/", tmp_path, settings=settings).returncode == 0
        answer["robots"] = in_turn(BROKEN, robots(new))
        slow.set()
        two = run_crawl(server.origin + "/", tmp_path, settings={**settings, "SITEMAP_WORKERS": "2",
                                                                 "SITEMAP_WORKERS_AFTER": "0"})  # fmt: skip
        assert two.returncode == 0 and two.stats.get("sitemap/workers") == 2, two.describe()
        answer["robots"] = lambda _r: BROKEN
        slow.clear()
        served = len(server.target_order())
        third = run_crawl(server.origin + "/", tmp_path, settings=settings)
        fetched = server.target_order()[served:]
    assert "applying the robots.txt the last crawl read" in third.stderr, third.describe()
    assert "/new/y" not in fetched and "/old/x" in fetched, fetched


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_a_robots_txt_over_500_kib_is_read_as_far_by_the_crawl_and_by_its_copy(tmp_path: Path, end: str) -> None:
    """Google reads the first 500 KiB of a robots.txt (RFC 9309 asks for at least that much): a rule
    past them applies neither in the crawl nor in the copy that a later crawl (or the crawl's second
    process) applies when robots.txt fails. Before, the crawl read all of it and the copy 500 KiB.
    The cut comes after a whole line, whatever ends its lines (a cut inside "Disallow: /private/x"
    reads "Disallow: /")."""
    head = RULES.replace("\n", end)
    # Rules of one length, placed so that byte 500 KiB falls right after the "Disallow: /" of one.
    rule, limit = (lambda n: f"Disallow: /archive/{n:06d}/{end}"), 500 * 1024 - len("Disallow: /")
    count = (limit - len(head) - 40) // len(rule(0))
    pad = limit - len(head) - count * len(rule(0))
    big = head + "#" * (pad - len(end)) + end + "".join(map(rule, range(count + 400))) + "Disallow: /a" + end
    assert big.encode()[: 500 * 1024].endswith(b"Disallow: /")
    assert len(big.encode()) > 500 * 1024
    answer = {"robots": robots(big)}
    with TimedServer(ROUTES, [("/robots.txt", lambda _request: answer["robots"])]) as server:
        first = run_crawl(server.origin + "/", tmp_path)
        listed_first = listed_paths(first, server)  # read now: the second crawl publishes in its place
        answer["robots"] = BROKEN
        served = len(server.target_order())
        second = run_crawl(server.origin + "/", tmp_path)
        recrawl = server.target_order()[served:]
    assert listed_first == {"/", "/a"}, first.describe()
    assert "bytes: its first 500 KiB are read" in first.stderr
    assert listed_paths(second, server) == {"/", "/a"}
    assert "/private/secret" not in recrawl
    assert second.stats.get("sitemap/robots/from_history") == 1

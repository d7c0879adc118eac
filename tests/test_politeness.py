"""Crawl-delay and 429/503 back-off: real crawls against a local server that notes when each request arrives.

Times are taken on the server, as each request arrives: they are what the site sees.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import pytest

from sitemap_spider.crawl.site_health import FIRST_BACKOFF, next_backoff
from tests.crawl_fixtures import CrawlResult, run_crawl
from tests.site_server import HTML, SiteServer, html_page, links
from tests.site_spec import Responder, Route, SiteRequest
from tests.sitemap_check import read_sitemap_set

# ---------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("current", "slot_delay", "retry_after", "cap", "expected"),
    [
        (0.0, 0.0, None, 120.0, FIRST_BACKOFF),  # first refusal, no Retry-After
        (0.0, 0.25, None, 120.0, FIRST_BACKOFF),  # AutoThrottle's small delay doubled is below it
        (1.0, 1.0, None, 120.0, 2.0),  # refused again: doubles
        (2.0, 1.0, None, 120.0, 4.0),
        (0.0, 10.0, None, 120.0, 20.0),  # a site already slow (Crawl-delay 10): twice that
        (100.0, 100.0, None, 120.0, 120.0),  # never above the cap
        (0.0, 0.0, 2.0, 120.0, 2.0),  # Retry-After is the server's word
        (8.0, 8.0, 2.0, 120.0, 2.0),  # also when it allows a quicker pace than ours
        (0.0, 0.0, 3600.0, 120.0, 120.0),  # capped
        (4.0, 0.0, None, 0.0, 0.0),  # cap 0: no back-off
    ],
)
def test_next_backoff(
    current: float, slot_delay: float, retry_after: float | None, cap: float, expected: float
) -> None:
    assert next_backoff(current, slot_delay, retry_after, cap) == expected


# ---------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------


class TimedServer(SiteServer):
    """A SiteServer that also notes when each request arrived (monotonic clock, shared with the crawler's)."""

    def __init__(self, routes: Mapping[str, Route], dynamic: Iterable[tuple[str, Responder]] = ()) -> None:
        super().__init__(routes, [(re.compile(re.escape(path)), responder) for path, responder in dynamic])
        self._arrivals_lock = threading.Lock()
        self._arrivals: list[tuple[float, str]] = []

    def record(self, request: SiteRequest) -> None:
        arrived = time.monotonic()
        super().record(request)
        with self._arrivals_lock:
            self._arrivals.append((arrived, request.target))

    def arrivals(self, target: str | None = None) -> list[float]:
        """Arrival times of every request (or of those for one target), in order."""
        with self._arrivals_lock:
            return sorted(t for t, path in self._arrivals if target is None or path == target)

    def target_order(self) -> list[str]:
        with self._arrivals_lock:
            return [path for _, path in sorted(self._arrivals)]


def page(title: str, *hrefs: str) -> Route:
    return Route(headers=(("Content-Type", HTML),), body=html_page(title, links(*hrefs)))


def robots(text: str) -> Route:
    return Route(headers=(("Content-Type", "text/plain; charset=utf-8"),), body=text.encode())


def in_turn(*routes: Route) -> Responder:
    """Successive requests get each route in turn, then the last one for good."""
    lock = threading.Lock()
    count = itertools.count()

    def respond(_request: SiteRequest) -> Route:
        with lock:
            n = next(count)
        return routes[min(n, len(routes) - 1)]

    return respond


def gaps(times: list[float]) -> list[float]:
    return [later - earlier for earlier, later in itertools.pairwise(times)]


def listed_paths(result: CrawlResult, server: SiteServer) -> set[str]:
    """Check the published set (XSDs, Scrapy's reader) and return the listed paths."""
    assert result.returncode == 0, result.describe()
    urls = read_sitemap_set(result.output_dir, server.origin + "/")
    return {url["loc"][len(server.origin) :] for url in urls}


# ---------------------------------------------------------------------------
# robots.txt Crawl-delay
# ---------------------------------------------------------------------------

SLOW_SECONDS = 1.5


@pytest.fixture
def crawl_delay_site() -> Iterator[tuple[TimedServer, list[float]]]:
    """Crawl-delay 1 for our agent (30 for another one); /slow takes 1.5 s to answer."""
    answered: list[float] = []

    def slow(_request: SiteRequest) -> Route:
        time.sleep(SLOW_SECONDS)
        answered.append(time.monotonic())
        return page("Slow", "/b")

    routes = {
        "/robots.txt": robots(
            "User-agent: otherbot\nCrawl-delay: 30\n\nUser-agent: sitemap_spider\nCrawl-delay: 1\nDisallow: /private/\n"
        ),
        "/": page("Home", "/slow", "/b"),
        "/b": page("B"),
    }
    with TimedServer(routes, [("/slow", slow)]) as server:
        yield server, answered


def test_crawl_delay_spaces_requests_and_serialises_them(
    crawl_delay_site: tuple[TimedServer, list[float]], tmp_path: Path
) -> None:
    server, answered = crawl_delay_site
    result = run_crawl(server.origin + "/", tmp_path)
    assert listed_paths(result, server) == {"/", "/slow", "/b"}
    assert server.target_order() == ["/robots.txt", "/", "/slow", "/b"]
    spacing = gaps(server.arrivals())
    # Our agent's group (1 s) applies, with AutoThrottle on, from the request after robots.txt on.
    assert all(gap >= 0.95 for gap in spacing), spacing
    assert max(spacing) < 5, spacing  # not otherbot's 30 s
    # One request at a time: /b waits for /slow's answer although its delay was over.
    (slow_done,) = answered
    assert server.arrivals("/b")[0] >= slow_done
    assert result.stderr.count("sets Crawl-delay: 1;") == 1, result.describe()
    assert result.stats.get("sitemap/crawl_delay") == 1.0


def test_a_long_crawl_delay_is_capped(tmp_path: Path) -> None:
    routes = {
        "/robots.txt": robots("User-agent: *\nCrawl-delay: 30\n"),
        "/": page("Home", "/a", "/b"),
        "/a": page("A"),
        "/b": page("B"),
    }
    with TimedServer(routes) as server:
        result = run_crawl(server.origin + "/", tmp_path, settings={"SITEMAP_MAX_CRAWL_DELAY": "0.5"})
        assert listed_paths(result, server) == {"/", "/a", "/b"}
        spacing = gaps(server.arrivals())
    assert len(spacing) == 3
    assert all(0.45 <= gap < 5 for gap in spacing), spacing
    assert (
        "sets Crawl-delay: 30; waiting 0.5 s between requests instead (SITEMAP_MAX_CRAWL_DELAY)"
        in result.stderr
    )
    assert result.stats.get("sitemap/crawl_delay") == 0.5


# ---------------------------------------------------------------------------
# 429 and 503
# ---------------------------------------------------------------------------


def test_one_page_s_503_holds_back_that_page_not_the_site(tmp_path: Path) -> None:
    unavailable = Route(status=503, headers=(("Content-Type", HTML), ("Retry-After", "2")), body=b"busy")
    routes = {
        "/robots.txt": robots("User-agent: *\nDisallow: /private/\n"),
        "/": page("Home", "/flaky", "/p1", "/p2", "/p3"),
        "/p1": page("P1"),
        "/p2": page("P2"),
        "/p3": page("P3"),
    }
    with TimedServer(routes, [("/flaky", in_turn(unavailable, page("Flaky")))]) as server:
        settings = {"DOWNLOAD_DELAY": "0.5", "DOWNLOAD_DELAY_JITTER": "0"}
        result = run_crawl(server.origin + "/", tmp_path, settings=settings)
        assert listed_paths(result, server) == {"/", "/flaky", "/p1", "/p2", "/p3"}
        refused, retried = server.arrivals("/flaky")
        others = [server.arrivals(path)[0] for path in ("/p1", "/p2", "/p3")]
    # The page's retry waited for its Retry-After ...
    assert retried - refused >= 2.0
    # ... while the rest of the site went on at its pace (0.5 s apart; 1.5 s for the three).
    assert max(others) - refused < 1.9, [t - refused for t in others]
    assert result.stats.get("sitemap/backoff/503") is None
    assert "slowing down" not in result.stderr


def test_one_slow_page_does_not_slow_the_site(tmp_path: Path) -> None:
    """AutoThrottle alone jumps to one answer's latency: a page taking 2 s spaced the next
    requests 0.5 s, 0.25 s, ... apart. The site's pace is its answers' median latency."""
    answered: list[float] = []

    def slow(_request: SiteRequest) -> Route:
        time.sleep(2.0)
        answered.append(time.monotonic())
        return page("Slow")

    # Pages found a few at a time down a chain (within DEPTH_LIMIT), each step at least 40 ms
    # (a chain is fetched one step after another): the crawl goes on well after /slow answers.
    chain = 90

    def step(request: SiteRequest) -> Route:
        time.sleep(0.04)
        i = int(request.target[2:])
        return page(f"C{i}", f"/c{i + 1}", *(f"/c{i}/{leaf}" for leaf in "abc"))

    leaves = {f"/c{i}/{leaf}": page(f"C{i} {leaf}") for i in range(chain) for leaf in "abc"}
    routes = {
        "/robots.txt": robots("User-agent: *\nDisallow: /private/\n"),
        "/": page("Home", "/slow", "/c0"),
        f"/c{chain}": page("End"),
        **leaves,
    }
    steps = [(f"/c{i}", step) for i in range(chain)]
    with TimedServer(routes, [("/slow", slow), *steps]) as server:
        result = run_crawl(server.origin + "/", tmp_path, settings={"RANDOMIZE_DOWNLOAD_DELAY": "False"})
        assert listed_paths(result, server) == {"/", "/slow", *(f"/c{i}" for i in range(chain + 1)), *leaves}
        after = [t for t in server.arrivals() if t > answered[0]]
    assert len(after) >= 20, "the chain ended before /slow answered: make it longer"
    long_gaps = [gap for gap in gaps(after[:20]) if gap >= 0.24]
    assert len(long_gaps) < 2, long_gaps


class InFlight:
    """Responders that count the requests the server is answering at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = 0
        self.most = 0

    def taking(self, seconds: float, links: Callable[[str], tuple[str, ...]] = lambda target: ()) -> Responder:
        def respond(request: SiteRequest) -> Route:
            with self._lock:
                self.now += 1
                self.most = max(self.most, self.now)
            time.sleep(seconds)
            with self._lock:
                self.now -= 1
            return page(request.target, *links(request.target))

        return respond


def test_slow_pages_lend_their_places_to_the_rest_of_the_site(tmp_path: Path) -> None:
    """Eight pages taking 4 s each, as many as the site's places (CONCURRENT_REQUESTS_PER_DOMAIN),
    while the rest of the site answers at once. Holding their places, they kept the rest waiting
    until one of them answered; stalled (unanswered after 1 s, the site answering in milliseconds)
    they lend them, and the hub and its 40 pages are fetched meanwhile."""
    quick = [f"/q{i}" for i in range(20)]
    slow_pages = [f"/slow{i}" for i in range(8)]
    fast = [f"/f{i}" for i in range(40)]
    counted = InFlight()
    routes = {
        "/robots.txt": robots("User-agent: *\nDisallow: /private/\n"),
        # Breadth first: the quick pages are answered, then the slow ones take every place.
        "/": page("Home", *quick, *slow_pages, "/hub"),
        "/hub": page("Hub", *fast),
        **{path: page(path) for path in (*quick, *fast)},
    }
    with TimedServer(routes, [(path, counted.taking(4.0)) for path in slow_pages]) as server:
        result = run_crawl(server.origin + "/", tmp_path, settings={"RANDOMIZE_DOWNLOAD_DELAY": "False"})
        assert listed_paths(result, server) == {"/", "/hub", *quick, *slow_pages, *fast}
        first_slow = min(server.arrivals(path)[0] for path in slow_pages)
        hub = server.arrivals("/hub")[0]
        fast_done = max(server.arrivals(path)[0] for path in fast)
    # Holding their places, the slow pages kept the hub waiting until one of them answered, 4 s
    # after the first was sent. Lent after about 1 s, the places served the hub and its 40 pages
    # before any slow page answered.
    assert hub - first_slow < 3.0, hub - first_slow
    assert fast_done - first_slow < 4.0, fast_done - first_slow


def test_a_site_that_hangs_is_not_sent_more_than_its_places(tmp_path: Path) -> None:
    """Every page but the home page takes 4 s: the whole site is slow, not a few pages, and it
    answers nothing new while its requests stall. No place is lent: never more than 8 requests
    in flight (Scrapy's overall CONCURRENT_REQUESTS raised, so that it is not what holds them)."""
    pages = [f"/h{i}" for i in range(24)]
    counted = InFlight()
    routes = {"/robots.txt": robots("User-agent: *\nDisallow: /private/\n"), "/": page("Home", *pages)}
    with TimedServer(routes, [(path, counted.taking(4.0)) for path in pages]) as server:
        result = run_crawl(server.origin + "/", tmp_path, settings={
            "RANDOMIZE_DOWNLOAD_DELAY": "False", "CONCURRENT_REQUESTS": "64", "AUTOTHROTTLE_START_DELAY": "0",
        })  # fmt: skip
        assert listed_paths(result, server) == {"/", *pages}
    assert counted.most <= 8, counted.most


def test_a_site_whose_answers_all_take_long_is_paced_by_their_latency(tmp_path: Path) -> None:
    """The median of a slow site's answers is slow: AutoThrottle's pace (latency / target
    concurrency, 0.4 s / 4 here) holds once a few answers are in."""

    def slow(request: SiteRequest) -> Route:
        time.sleep(0.4)
        return page(request.target)

    pages = [f"/s{i}" for i in range(30)]
    routes = {"/robots.txt": robots("User-agent: *\nDisallow: /private/\n"), "/": page("Home", *pages)}
    with TimedServer(routes, [(path, slow) for path in pages]) as server:
        result = run_crawl(server.origin + "/", tmp_path, settings={"RANDOMIZE_DOWNLOAD_DELAY": "False"})
        assert listed_paths(result, server) == {"/", *pages}
        arrivals = [t for t in server.arrivals() if t > server.arrivals("/")[0]]
    later = sorted(gaps(arrivals[10:]))
    assert later[len(later) // 2] >= 0.09, later


def test_a_page_s_failures_while_the_whole_site_fails_do_not_use_up_its_tries(tmp_path: Path) -> None:
    """Five pages failing in a row put the site in trouble; /p's failures while it is in trouble are
    the site's. /p fails three times: with one retry and the last pass (three tries), it is listed
    only if a failure in the trouble did not count as one of its tries."""
    unavailable = Route(status=503, headers=(("Content-Type", HTML),), body=b"busy")
    busy = [f"/b{i}" for i in range(1, 7)]
    routes = {"/robots.txt": robots("User-agent: *\nDisallow: /private/\n"), "/": page("Home", *busy, "/p")}
    dynamic = [
        *((path, in_turn(unavailable, unavailable, page(path))) for path in busy),
        ("/p", in_turn(unavailable, unavailable, unavailable, page("P"))),
    ]
    with TimedServer(routes, dynamic) as server:
        settings = {
            "CONCURRENT_REQUESTS_PER_DOMAIN": "1",  # the answers come in the order of the links
            "AUTOTHROTTLE_ENABLED": "False",
            "DOWNLOAD_DELAY": "0",
            "SITEMAP_RETRY_TIMES": "1",
            "SITEMAP_RETRY_DELAY": "0.2",
            "SITEMAP_RETRY_LAST_PASS_DELAY": "1",
        }
        result = run_crawl(server.origin + "/", tmp_path, settings=settings)
        assert listed_paths(result, server) == {"/", *busy, "/p"}
        assert len(server.arrivals("/p")) == 4
    held_for_the_site = result.stats.get("sitemap/retry/site_trouble")
    assert isinstance(held_for_the_site, int) and held_for_the_site >= 1
    assert "slowing down" in result.stderr


def test_a_page_s_own_fault_after_the_site_s_trouble_does_not_lengthen_the_pause() -> None:
    """The site answered 503 to five pages in a row: a pause of 1 s ("503"). A request sent after
    the pause that fails as the trouble did (503 again) doubles it; one that fails otherwise (a
    page's own 502 once the 503s are over) neither doubles it nor ends it; a good answer ends it.
    The extension's own decision, on a real crawler and downloader slot."""
    from types import SimpleNamespace

    from scrapy import Request
    from scrapy.core.downloader import Slot
    from scrapy.http import Response
    from scrapy.statscollectors import MemoryStatsCollector
    from scrapy.utils.test import get_crawler

    from sitemap_spider import default_settings
    from sitemap_spider.crawl.politeness import SITE_ANSWERS, SITE_ANSWERS_ELSEWHERE, Politeness

    ours = {name: value for name, value in vars(default_settings).items() if name.startswith("SITEMAP_")}
    crawler = get_crawler(settings_dict={**ours, "SITEMAP_RETRY_DELAY": 1})
    crawler.stats = MemoryStatsCollector(crawler)
    politeness = Politeness.from_crawler(crawler)
    slot = Slot(concurrency=8, delay=0.0, jitter=0.0)
    clock = [100.0]

    def answer(path: str, cause: str) -> None:
        now = clock[0]
        request = Request(f"https://www.example.com{path}")
        if cause:
            politeness._fault("www.example.com", slot, request, request.url, cause, None, None, now, now)
        else:
            politeness._recover("www.example.com", slot, now)
        clock[0] += 0.1

    for i in range(5):
        answer(f"/b{i}", "503")
    state = politeness.backoffs["www.example.com"]
    assert (state.seconds, slot.delay) == (1.0, 1.0)
    def pause() -> float:
        return politeness.backoffs["www.example.com"].seconds

    answer("/x", "502")  # a page's own fault: the pause stays as it was
    assert pause() == 1.0
    answer("/y", "503")  # as the trouble did: it goes on
    assert pause() == 2.0
    # An outage whose answers come by turns as 502 and 503 still doubles every other one: the
    # first fault otherwise is excused, the next one, whatever it is, says the trouble goes on.
    seen = []
    for cause in ("502", "503", "502", "503", "502"):
        answer("/z", cause)
        seen.append(pause())
    assert seen == [2.0, 4.0, 4.0, 8.0, 8.0]
    answer("/z", "502")  # a second fault otherwise in a row: the trouble goes on, as 502s now
    assert pause() == 16.0
    told: list[tuple[str, float]] = []
    crawler.signals.connect(lambda key, sent: told.append((key, sent)), signal=SITE_ANSWERS, weak=False)
    answer("/p", "")  # a good answer: the site's pace is back, and the other process is told
    assert "www.example.com" not in politeness.backoffs and slot.delay == 0.0
    assert [key for key, _ in told] == ["www.example.com"]
    assert crawler.stats.get_value("sitemap/backoff/503") == 4
    assert crawler.stats.get_value("sitemap/backoff/502") == 1
    # Told by the other process of a two-process crawl (modes/workers): one site, one pace; but
    # not by news older than a pause started here since.
    for i in range(5):
        answer(f"/c{i}", "503")
    since = politeness.backoffs["www.example.com"].since
    crawler.signals.send_catch_log(SITE_ANSWERS_ELSEWHERE, key="www.example.com", sent=since - 1)
    assert "www.example.com" in politeness.backoffs
    crawler.signals.send_catch_log(SITE_ANSWERS_ELSEWHERE, key="www.example.com", sent=since + 0.01)
    assert "www.example.com" not in politeness.backoffs
    # A truncated body (DOWNLOAD_FAIL_ON_DATALOSS off: a 200 flagged "dataloss") is the fault
    # retries.py calls "truncated", not a "200", here too. The engine's slot table is all it reads.
    crawler.engine = SimpleNamespace(downloader=SimpleNamespace(slots={"www.example.com": slot}))
    for i in range(5):
        answer(f"/d{i}", "503")
    for i in range(2):  # the first is excused, the second says the trouble goes on
        request = Request(f"https://www.example.com/t{i}", meta={"download_slot": "www.example.com"})
        politeness.response_downloaded(Response(request.url, status=200, flags=["dataloss"], request=request), request)
    assert crawler.stats.get_value("sitemap/backoff/truncated") == 1
    assert crawler.stats.get_value("sitemap/backoff/200") is None


def test_pages_put_back_in_a_pause_do_not_start_the_next_one() -> None:
    """Pages that failed while the site was paused wait again with the tries they had (retries.py,
    meta PUT_BACK). When they fail together after the pause, that is their own failure, counted for
    the site once already: no new pause, and retries.py counts it as one of their tries (no
    SITE_TROUBLE). Counted again, a resumed JOBDIR recrawl whose queue held little but pages
    answering 503 with Retry-After paused the site for ever. Fresh pages failing so still do."""
    from scrapy import Request
    from scrapy.core.downloader import Slot
    from scrapy.statscollectors import MemoryStatsCollector
    from scrapy.utils.test import get_crawler

    from sitemap_spider import default_settings
    from sitemap_spider import request_meta as meta
    from sitemap_spider.crawl.politeness import Politeness

    ours = {name: value for name, value in vars(default_settings).items() if name.startswith("SITEMAP_")}
    crawler = get_crawler(settings_dict={**ours, "SITEMAP_RETRY_DELAY": 1})
    crawler.stats = MemoryStatsCollector(crawler)
    politeness = Politeness.from_crawler(crawler)
    slot = Slot(concurrency=8, delay=0.0, jitter=0.0)
    clock = [100.0]

    def fail(path: str, put_back: bool) -> Request:
        now = clock[0]
        request = Request(f"https://www.example.com{path}", meta={meta.PUT_BACK: True} if put_back else None)
        politeness._fault("www.example.com", slot, request, request.url, "503", 1.0, b"1", now, now)
        clock[0] += 0.1
        return request

    for i in range(5):
        fail(f"/p{i}", put_back=False)
    assert "www.example.com" in politeness.backoffs
    politeness._recover("www.example.com", slot, clock[0])
    assert "www.example.com" not in politeness.backoffs
    after = [fail(f"/p{i}", put_back=True) for i in range(5)]
    assert "www.example.com" not in politeness.backoffs
    assert not any(request.meta.get(meta.SITE_TROUBLE) for request in after)
    for i in range(5):
        fail(f"/q{i}", put_back=False)
    assert "www.example.com" in politeness.backoffs


def test_answers_that_each_ask_to_wait_slow_the_whole_site_then_it_recovers(tmp_path: Path) -> None:
    unavailable = Route(status=503, headers=(("Content-Type", HTML), ("Retry-After", "2")), body=b"busy")
    busy = ["/b1", "/b2", "/b3"]
    routes = {
        "/robots.txt": robots("User-agent: *\nDisallow: /private/\n"),
        "/": page("Home", *busy, "/p1", "/p2", "/p3", "/p4"),
        **{path: page(path) for path in ("/p1", "/p2", "/p3", "/p4")},
    }
    dynamic = [(path, in_turn(unavailable, page(path))) for path in busy]
    with TimedServer(routes, dynamic) as server:
        # One request at a time, 0.5 s apart: the three 503s come in a row.
        settings = {"DOWNLOAD_DELAY": "0.5", "DOWNLOAD_DELAY_JITTER": "0", "CONCURRENT_REQUESTS_PER_DOMAIN": "1"}
        result = run_crawl(server.origin + "/", tmp_path, settings=settings)
        assert listed_paths(result, server) == {"/", *busy, "/p1", "/p2", "/p3", "/p4"}
        third = server.arrivals(busy[-1])[0]
        after = [t for t in server.arrivals() if t > third]
    # The third Retry-After in a row: every request to the site waited, not only the retries.
    assert min(after) - third >= 2.0, [t - third for t in after]
    # Then the first good answer brings the normal pace back at once.
    assert min(gaps(after)) < 0.9, gaps(after)
    assert result.stats.get("sitemap/backoff/503") == 1
    assert "slowing down to one request every 2 s" in result.stderr
    assert "back to its normal pace" in result.stderr


def test_a_pause_wakes_the_slot_at_its_own_pace_without_jitter() -> None:
    """A wait the downloader scheduled at the site's pace before a slow-down is called off, and
    the downloader counts the pause again at once: without Scrapy's jitter (0.5 by default,
    which could start the next request after half the pause)."""
    from types import SimpleNamespace

    from scrapy import Request
    from scrapy.core.downloader import Slot
    from scrapy.statscollectors import MemoryStatsCollector
    from scrapy.utils.test import get_crawler

    from sitemap_spider import default_settings
    from sitemap_spider.crawl.politeness import Politeness

    ours = {name: value for name, value in vars(default_settings).items() if name.startswith("SITEMAP_")}
    crawler = get_crawler(settings_dict=ours)
    crawler.stats = MemoryStatsCollector(crawler)
    politeness = Politeness.from_crawler(crawler)
    slot = Slot(concurrency=8, delay=0.25, jitter=0.5)
    counted: list[tuple[float, float]] = []
    crawler.engine = SimpleNamespace(downloader=SimpleNamespace(
        slots={"www.example.com": slot}, _process_queue=lambda s: counted.append((s.delay, s.jitter))
    ))  # fmt: skip

    class Wait:
        cancelled = False

        def cancel(self) -> None:
            self.cancelled = True

    wait = Wait()
    slot.latercall = wait  # type: ignore[assignment]
    for i, now in enumerate((100.0, 100.1)):  # a second 429 among the recent answers: the site's trouble
        request = Request(f"https://www.example.com/l{i}")
        politeness._fault("www.example.com", slot, request, request.url, "429", 8.0, b"8", now, now)
    assert wait.cancelled and slot.latercall is None
    assert counted == [(8.0, 0.0)]


def test_a_shorter_pause_takes_effect_at_once(tmp_path: Path) -> None:
    """Three pages ask to wait 4 s in a row: the site pauses 4 s. The next answer asks for 1 s: the
    request after it goes 1 s later, not when the wait scheduled at the 4-second pace ends. In the
    fault benchmark, an outage's doubled pause (8 s) held the crawl back 8 s more although the
    next answer had asked for 1 s."""
    served = itertools.count()

    def shared(request: SiteRequest) -> Route:
        n = next(served)
        if n < 4:  # the first three for 4 s, the fourth for 1 s
            return Route(status=503, headers=(("Content-Type", HTML), ("Retry-After", "4" if n < 3 else "1")), body=b"busy")
        return page(request.target)

    pages = [f"/p{i}" for i in range(1, 7)]
    routes = {"/robots.txt": robots("User-agent: *\nDisallow: /private/\n"), "/": page("Home", *pages)}
    with TimedServer(routes) as server:
        server.dynamic.append((re.compile(r"/p\d"), shared))
        settings = {"DOWNLOAD_DELAY": "0.5", "DOWNLOAD_DELAY_JITTER": "0", "CONCURRENT_REQUESTS_PER_DOMAIN": "1"}
        result = run_crawl(server.origin + "/", tmp_path, settings=settings)
        assert listed_paths(result, server) == {"/", *pages}
        times = [t for t in server.arrivals() if t >= server.arrivals("/")[0]]
    third, fourth, fifth = times[3], times[4], times[5]  # the home page, then three pages asked to wait
    assert fourth - third >= 3.9, gaps(times)
    assert 0.9 <= fifth - fourth < 2.0, gaps(times)


@pytest.mark.parametrize("autothrottle", ["True", "False"])
def test_429s_of_several_pages_back_the_site_off_exponentially(autothrottle: str, tmp_path: Path) -> None:
    too_many = Route(status=429, headers=(("Content-Type", HTML),), body=b"slow down")
    limited = ["/l1", "/l2", "/l3"]
    routes = {
        "/robots.txt": robots("User-agent: *\nDisallow: /private/\n"),
        "/": page("Home", *limited, "/after"),
        "/after": page("After"),
    }
    dynamic = [(path, in_turn(too_many, page(path))) for path in limited]
    with TimedServer(routes, dynamic) as server:
        # One request at a time (a delay: without one Scrapy's slot may start two at once), the
        # default first pause (the fixture crawls' QUICK_RETRIES shorten it), and time for the
        # retries once the rest of the crawl is done.
        settings = {
            "AUTOTHROTTLE_ENABLED": autothrottle,
            "CONCURRENT_REQUESTS_PER_DOMAIN": "1",
            "DOWNLOAD_DELAY": "0.2",
            "DOWNLOAD_DELAY_JITTER": "0",
            "SITEMAP_RETRY_DELAY": str(FIRST_BACKOFF),
            "SITEMAP_RETRY_LAST_PASS_DELAY": "20",
        }
        result = run_crawl(server.origin + "/", tmp_path, settings=settings)
        assert listed_paths(result, server) == {"/", *limited, "/after"}
        order = server.target_order()
        times = server.arrivals()
    second, third = times[order.index("/l2")], times[order.index("/l3")]
    following = times[order.index("/l3") + 1]
    # A lone 429 is its page's own: the second one in a row slows the whole site down, and a
    # third one sent after that pause doubles it.
    assert third - second >= FIRST_BACKOFF, (third - second)
    assert following - third >= 2 * FIRST_BACKOFF, (following - third)
    assert result.stats.get("sitemap/backoff/429") == 2


# ---------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SITEMAP_MAX_CRAWL_DELAY", "-1"),
        ("SITEMAP_MAX_CRAWL_DELAY", "a minute"),
        ("SITEMAP_MAX_BACKOFF", "86400"),
    ],
)
def test_a_bad_politeness_setting_stops_the_crawl(name: str, value: str, tmp_path: Path) -> None:
    with TimedServer({"/": page("Home")}) as server:
        result = run_crawl(server.origin + "/", tmp_path, settings={name: value})
        assert server.arrivals() == []
    assert result.returncode == 2, result.describe()
    assert f"error: {name}: " in result.stderr
    assert not result.output_dir.exists()

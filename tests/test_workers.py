"""Two crawling processes, one command: the same set and report as one process, nothing fetched twice."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from scrapy.settings import Settings

from sitemap_spider.crawl.politeness import Politeness, _BackOff
from sitemap_spider.modes.workers import owner
from sitemap_spider.modes.workers.channel import Channel
from sitemap_spider.modes.workers.leader import helper_counts, helper_pays_off
from sitemap_spider.modes.workers.spawn import slowed_down_now
from tests.crawl_fixtures import REPO_ROOT, RunningSite, crawl_command, log_stat, run_crawl, serve_site
from tests.fault_server import FaultPlan, FaultServer
from tests.generated_site import build_generated_site
from tests.report_counts import count_problems
from tests.sitemap_check import read_sitemap_set
from tests.test_crawl import (
    SiteCrawl,
    assert_same_entries,
    crawl_site,
    published,
    report_problems,
    without_traps,
)

pytestmark = pytest.mark.slow

# The second process starts at the first look at the queue (after 32 pages).
TWO = {"SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "0"}
PAGES = 1500


def page_fetches(site: RunningSite) -> Counter[str]:
    return Counter(r.target for r in site.server.requests if r.method == "GET" and r.target != "/robots.txt")


@pytest.fixture(scope="module")
def generated() -> Iterator[RunningSite]:
    with serve_site(lambda origin, _other: build_generated_site(origin, PAGES)) as site:
        yield site


def test_owner_splits_urls_between_the_processes() -> None:
    urls = [f"http://127.0.0.1:8000/p{i}.html" for i in range(10_000)]
    counts = Counter(owner(url, 2) for url in urls)
    assert set(counts) == {0, 1}
    assert 0.45 < counts[0] / len(urls) < 0.55
    assert all(owner(url, 2) == owner(url, 2) for url in urls[:100])
    assert {owner(url, 1) for url in urls} == {0}


# Stats a helper sends with its goodbye, taken from real crawls, and counts whose names hold
# "time", "start" or "finish": the counts of work, which the leader adds to its own ...
_HELPER_COUNTS = {
    "downloader/response_count": 76,
    "downloader/exception_type_count/twisted.internet.error.TimeoutError": 2,
    "retry/reason_count/504 Gateway Time-out": 1,
    "sitemap/render/timeout": 3,
    "sitemap/links/started_from_sitemap": 4,
    "item_finished_count": 5,
    "scheduler/enqueued/disk": 75,
    "request_depth_count/3": 9,
}
# ... and the others.
_HELPER_OTHER_STATS = {
    "start_time": datetime(2026, 1, 1, tzinfo=UTC),
    "finish_time": datetime(2026, 1, 1, tzinfo=UTC),
    "finish_reason": "finished",
    "elapsed_time_seconds": 2.2,
    "memusage/startup": 99_397_632,
    "memusage/max": 99_397_632,
    "log_count/INFO": 2,
    "sitemap/excluded/noindex": 7,  # sent to the leader one by one, counted there
    "sitemap/excluded/timeout": 1,
    "sitemap/workers": 2,
    "sitemap/workers/lost": 1,
    "responses_per_minute": 2280.0,
    "some/flag": True,
}


def test_the_channel_delivers_every_message_in_order_and_flushes_at_close() -> None:
    """Lines written together, a message larger than one read, and what was sent just before a close."""

    async def exchange() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        left, right = socket.socketpair()
        got: list[dict[str, Any]] = []
        lost = asyncio.get_running_loop().create_future()
        sender = Channel(left, lambda message: None, lambda: None)
        receiver = Channel(right, got.append, lambda: lost.set_result(None))
        sent: list[dict[str, Any]] = []
        for number in range(3000):
            message: dict[str, Any] = {"t": "links", "l": [[f"https://example.com/p{number}", 2, None]]}
            if number == 1000:
                message = {"t": "met", "u": ["https://example.com/" + "x" * 1000] * 3000}  # 3 MB: several reads
            sent.append(message)
            sender.send(message)
            if number % 7 == 0:
                await asyncio.sleep(0)  # some turns of the loop write several lines at once
        # Half of a character, as a page's JSON-LD may escape it ("\ud83d"): no UTF-8 can hold it.
        sender.send({"t": "entry", "e": ["https://example.com/v", "Bad \ud83d title"]})
        sent.append({"t": "entry", "e": ["https://example.com/v", "Bad \ud83d title"]})
        sender.send({"t": "bye"})
        sent.append({"t": "bye"})
        await sender.aclose()  # right after the last send: the last lines still leave
        await asyncio.wait_for(lost, 10)
        await receiver.aclose()
        return sent, got

    sent, got = asyncio.run(exchange())
    assert got == sent


def test_the_leader_sums_the_helpers_counts_of_work_only() -> None:
    assert helper_counts({**_HELPER_COUNTS, **_HELPER_OTHER_STATS}) == _HELPER_COUNTS


def test_case_site_with_two_processes_matches_one_process(case_site: RunningSite, tmp_path: Path) -> None:
    """Redirects, canonicals, meta refresh, robots, traps: every case of the fixture site split in two."""
    one = crawl_site(case_site, tmp_path / "one", settings={"SITEMAP_WORKERS": "1"})
    assert one.result.returncode == 0, one.result.describe()
    two = crawl_site(case_site, tmp_path / "two", settings=TWO)
    assert two.result.returncode == 0, two.result.describe()
    assert "a second crawling process" in two.result.stderr, two.result.describe()
    assert log_stat(two.result.stderr, "sitemap/workers") == 2
    # A maximum, not a sum of the two processes' maxima: every page sits at the same depth either way.
    assert log_stat(two.result.stderr, "request_depth_max") == log_stat(one.result.stderr, "request_depth_max")
    assert "[worker 2]" in two.result.stderr
    urls = published(two)
    assert_same_entries(without_traps(two.spec, urls), two.spec.expected_listed())
    assert two.result.files() == one.result.files()
    assert two.result.report is not None and one.result.report is not None
    problems = report_problems(two.spec, two.result.report)
    assert not problems, "\n".join(problems[:50])

    def reasons(report: dict) -> set[tuple[str, str]]:  # type: ignore[type-arg]
        return {(row["url"], row["reason"]) for row in report["excluded_urls"]}

    assert reasons(two.result.report) == reasons(one.result.report)
    # The same requests (each process reads robots.txt itself). How often a URL that fails is
    # tried again depends on timing (Twisted retries a dropped connection once more or not).
    failing = {target for target, route in case_site.spec.routes.items() if route.drop or route.status >= 500}

    def fetched(crawl: SiteCrawl) -> Counter[str]:
        targets = Counter(r.target for r in crawl.requests if r.target != "/robots.txt")
        return Counter({target: 1 if target in failing else n for target, n in targets.items()})

    assert fetched(two) == fetched(one)


def test_generated_site_two_processes_fetch_each_page_once(generated: RunningSite, tmp_path: Path) -> None:
    generated.server.clear()
    result = run_crawl(generated.start_url, tmp_path, settings=TWO, timeout=300)
    assert result.returncode == 0, result.describe()
    assert log_stat(result.stderr, "sitemap/workers") == 2
    # The helper is handed the settings that differ from Scrapy's defaults, not the deprecated
    # names among those (which it then warned about, as if the user had set them).
    assert "[worker 2]" in result.stderr and "ScrapyDeprecationWarning" not in result.stderr, result.describe()
    urls = read_sitemap_set(result.output_dir, generated.origin + "/")
    assert_same_entries(without_traps(generated.spec, urls), generated.spec.expected_listed())
    fetches = page_fetches(generated)
    # Scrapy's RetryMiddleware fetches a failing page three times, in one process as in two.
    retried = {target for target, route in generated.spec.routes.items() if route.status in (500, 502, 503, 504, 429)}
    twice = {target: n for target, n in fetches.items() if n > 1 and target not in retried}
    assert not twice, f"{len(twice)} pages fetched more than once: {sorted(twice)[:20]}"
    assert result.report is not None
    problems = report_problems(generated.spec, result.report)
    assert not problems, "\n".join(problems[:50])
    # Both processes fetched pages: the helper's responses are in the leader's count.
    assert log_stat(result.stderr, "downloader/response_count") == sum(fetches.values()) + 2
    # The report's counts (its charts, the progress line) are both processes'.
    problems = count_problems(result.report, sum(fetches.values()))
    assert not problems, problems


def test_the_helper_logs_at_the_crawl_s_own_level(generated: RunningSite, tmp_path: Path) -> None:
    """Without a log level asked for, the crawl logs at INFO (commands/crawl.py sets it at Scrapy's
    default priority): the second process too, not Scrapy's two DEBUG lines a page."""
    args = crawl_command(generated.start_url, tmp_path, settings=TWO)
    at = args.index("LOG_LEVEL=INFO")
    del args[at - 1 : at + 1]
    result = subprocess.run(args, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    helper = [line for line in result.stderr.splitlines() if "[worker 2]" in line]
    assert helper, result.stderr[-3000:]
    assert not [line for line in helper if " DEBUG: " in line], helper[:5]


def test_links_met_before_the_helper_started_are_all_fetched(generated: RunningSite, tmp_path: Path) -> None:
    """A page's links are all met at once but requested one by one as Scrapy takes the callback's
    output: with CONCURRENT_ITEMS=1 that spans many turns of the loop, and the helper may start
    in between. The links of its half met before are the leader's to fetch (they were lost)."""
    result = run_crawl(generated.start_url, tmp_path, settings={**TWO, "CONCURRENT_ITEMS": "1"}, timeout=300)
    assert result.returncode == 0, result.describe()
    assert log_stat(result.stderr, "sitemap/workers") == 2
    urls = read_sitemap_set(result.output_dir, generated.origin + "/")
    assert_same_entries(without_traps(generated.spec, urls), generated.spec.expected_listed())


def test_a_small_site_stays_in_one_process(generated: RunningSite, tmp_path: Path) -> None:
    result = run_crawl(generated.start_url, tmp_path, settings={"SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "100000"})
    assert result.returncode == 0, result.describe()
    assert "[worker 2]" not in result.stderr
    assert log_stat(result.stderr, "sitemap/workers") is None


def test_a_queue_that_is_little_work_at_the_crawl_s_pace_stays_in_one_process(
    generated: RunningSite, tmp_path: Path
) -> None:
    """SITEMAP_WORKERS_AFTER requests are waiting from the first pages on, but at the crawl's pace
    they are far less work than SITEMAP_WORKERS_AFTER_SECONDS: no second process."""
    settings = {"SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "1", "SITEMAP_WORKERS_AFTER_SECONDS": "3600"}
    result = run_crawl(generated.start_url, tmp_path, settings=settings)
    assert result.returncode == 0, result.describe()
    assert "[worker 2]" not in result.stderr
    assert log_stat(result.stderr, "sitemap/workers") is None


@pytest.mark.parametrize(
    ("queued", "pace", "elapsed", "after", "after_seconds", "start"),
    [
        (499, 0.01, 1.0, 500, 4.0, False),  # fewer than SITEMAP_WORKERS_AFTER wait
        (1_000, None, 0.0, 500, 4.0, False),  # the pace is not known yet
        (1_000, 0.002, 1.0, 500, 4.0, False),  # a recrawl's 304s: 2 s of work
        (1_000, 0.005, 1.0, 500, 4.0, True),  # 5 s of work
        (600, 0.002, 8.0, 500, 4.0, True),  # a short queue, but 8 s of crawling with it waiting
        (1_000, 0.002, 1.0, 500, 0.0, True),  # SITEMAP_WORKERS_AFTER_SECONDS=0: the count alone
        (0, None, 0.0, 0, 4.0, True),  # SITEMAP_WORKERS_AFTER=0: at once
    ],
)
def test_the_helper_starts_when_the_queue_is_worth_its_start_up(
    queued: int, pace: float | None, elapsed: float, after: int, after_seconds: float, start: bool
) -> None:
    assert helper_pays_off(queued, pace, elapsed, after, after_seconds) is start


def test_one_slow_spell_does_not_start_the_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pace is the crawl's since the leader first looked, not the last 32 responses': a
    queue of 1,000 at 2 ms a response is 2 s of work, and a 0.1 s pause (a collection, a
    history write) once does not make it 4."""

    from sitemap_spider.modes.workers import leader as leader_module
    from sitemap_spider.modes.workers.leader import _CHECK_EVERY, Leader

    clock = [100.0]
    monkeypatch.setattr(leader_module.time, "monotonic", lambda: clock[0])
    started: list[int] = []
    leader = Leader.__new__(Leader)
    leader._decided, leader._responses, leader._first_look = False, 0, None
    leader.after, leader.after_seconds = 500, 4.0
    leader.crawler = SimpleNamespace(  # type: ignore[assignment]
        engine=SimpleNamespace(scheduler=[None] * 1_000),
        stats=SimpleNamespace(get_value=lambda key: None, get_stats=dict),
        settings=Settings({"DOWNLOAD_DELAY": 0}),
        get_extension=lambda cls: None,  # no pause to wait on
    )
    leader._start_helper = started.append  # type: ignore[method-assign]
    for look in range(40):
        for _ in range(_CHECK_EVERY):
            clock[0] += 0.002
            leader.page_seen()
        if look == 20:
            clock[0] += 0.1  # one slow spell
    assert not started
    clock[0] += 8.0  # then the crawl goes on with the queue as full: it is a big site after all
    for _ in range(_CHECK_EVERY):
        leader.page_seen()
    assert started == [1_000]


def _helper_pid(log: Path, deadline: float) -> int:
    while time.monotonic() < deadline:
        found = re.search(r"second crawling process \(pid (\d+)\)", log.read_text(errors="replace"))
        if found:
            return int(found.group(1))
        time.sleep(0.05)
    pytest.fail(f"no second process started:\n{log.read_text(errors='replace')[-3000:]}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (dead, not yet reaped by its parent) counts as gone.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[1].startswith("Z"))


def _start(site: RunningSite, tmp_path: Path, log: Path) -> subprocess.Popen[bytes]:
    # A slow site (AutoThrottle off, few requests at once) leaves time to interrupt mid-crawl.
    settings = {**TWO, "CONCURRENT_REQUESTS_PER_DOMAIN": "2", "AUTOTHROTTLE_ENABLED": "False", "DOWNLOAD_DELAY": "0"}
    args = crawl_command(site.start_url, tmp_path, settings=settings)
    with open(log, "wb") as out:
        # A session of its own: a test can signal the crawl's process group as a terminal would.
        return subprocess.Popen(args, cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def test_a_helper_that_dies_loses_nothing(generated: RunningSite, tmp_path: Path) -> None:
    log = tmp_path / "crawl.log"
    crawl = _start(generated, tmp_path, log)
    try:
        pid = _helper_pid(log, time.monotonic() + 60)
        time.sleep(1.0)
        os.kill(pid, signal.SIGKILL)
        assert crawl.wait(timeout=300) == 0, log.read_text(errors="replace")[-4000:]
    finally:
        crawl.kill()
    text = log.read_text(errors="replace")
    assert "The second crawling process is gone" in text
    assert log_stat(text, "sitemap/workers/lost") == 1
    urls = read_sitemap_set(tmp_path / "sitemaps", generated.origin + "/")
    assert_same_entries(without_traps(generated.spec, urls), generated.spec.expected_listed())


@pytest.mark.parametrize(
    ("kill", "group"),
    [(signal.SIGKILL, False), (signal.SIGINT, False), (signal.SIGINT, True)],
    ids=["sigkill", "sigint-leader", "ctrl-c-terminal"],
)
def test_the_helper_ends_with_the_leader(
    generated: RunningSite, tmp_path: Path, kill: signal.Signals, group: bool
) -> None:
    log = tmp_path / "crawl.log"
    crawl = _start(generated, tmp_path, log)
    try:
        pid = _helper_pid(log, time.monotonic() + 60)
        time.sleep(0.5)
        if group:
            os.killpg(crawl.pid, kill)  # Ctrl-C in a terminal: both processes get it
        else:
            crawl.send_signal(kill)  # the leader alone
        assert crawl.wait(timeout=60) != 0
    finally:
        crawl.kill()
    text = log.read_text(errors="replace")
    if kill == signal.SIGINT:
        # A deliberate stop is not reported as a failure of either process.
        assert "is gone" not in text, text[-3000:]
        assert "Task was destroyed" not in text, text[-3000:]
        assert "Sitemap NOT published: the crawl did not finish (shutdown)" in text
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the second process outlived the crawl"
    assert not (tmp_path / "sitemaps" / "sitemap_index.xml").exists(), "an unfinished crawl published"


def test_a_crawl_delay_keeps_the_crawl_in_one_process(tmp_path: Path) -> None:
    def build(origin: str, _other: str):  # type: ignore[no-untyped-def]
        spec = build_generated_site(origin, 200)
        robots = spec.routes["/robots.txt"]
        spec.routes["/robots.txt"] = replace(robots, body=robots.body.replace(b"User-agent: *\n", b"User-agent: *\nCrawl-delay: 0.01\n"))
        return spec

    with serve_site(build) as site:
        result = run_crawl(site.start_url, tmp_path, settings=TWO, timeout=300)
    assert result.returncode == 0, result.describe()
    assert "Crawling in one process: robots.txt asks for a Crawl-delay" in result.stderr, result.describe()
    assert "[worker 2]" not in result.stderr


def test_a_pause_that_no_request_can_end_does_not_keep_the_crawl_in_one_process() -> None:
    """A host that failed and then got no request (a script's CDN, a dead host) keeps its pause:
    it holds the second process back only while its trouble is recent."""
    politeness = Politeness.__new__(Politeness)  # only its pauses are read
    politeness.backoffs = {}
    settings = Settings({"DOWNLOAD_TIMEOUT": 30})
    crawler = SimpleNamespace(settings=settings, get_extension=lambda cls: politeness if cls is Politeness else None)
    assert not slowed_down_now(crawler, now=1000.0)  # type: ignore[arg-type]
    politeness.backoffs["cdn.example.net"] = _BackOff(seconds=4.0, since=995.0, normal_delay=0, normal_jitter=0)
    assert slowed_down_now(crawler, now=1000.0)  # type: ignore[arg-type]
    # A probe sent now may time out 30 s later: 10 s, plus that, without a failure.
    assert slowed_down_now(crawler, now=1030.0)  # type: ignore[arg-type]
    assert not slowed_down_now(crawler, now=1036.0)  # type: ignore[arg-type]
    # A long pause (an outage near SITEMAP_MAX_BACKOFF) fails again only at each probe: twice the pause.
    politeness.backoffs["127.0.0.1"] = _BackOff(seconds=60.0, since=1000.0, normal_delay=0, normal_jitter=0)
    assert slowed_down_now(crawler, now=1140.0)  # type: ignore[arg-type]
    assert not slowed_down_now(crawler, now=1151.0)  # type: ignore[arg-type]


def test_a_site_that_was_slowed_down_once_still_gets_the_second_process(tmp_path: Path) -> None:
    """A 503 outage of 2 s early in the crawl: the crawl slows down, then the site answers well
    again, and the second process starts (it used to keep the crawl in one process to the end)."""
    with FaultServer() as server:
        spec = build_generated_site(server.origin, PAGES)
        server.serve(spec)
        server.inject(FaultPlan(share=0, outage_after=10, outage_seconds=2.0, refuse_after=0))
        result = run_crawl(spec.start_url, tmp_path, settings=TWO, timeout=300)
    assert result.returncode == 0, result.describe()
    assert server.injected["outage"] >= 1, server.injected
    assert result.stats.get("sitemap/backoff/503"), result.describe()
    assert "Crawling in one process" not in result.stderr, result.describe()
    assert "a second crawling process" in result.stderr and "[worker 2]" in result.stderr, result.describe()
    entries = read_sitemap_set(result.output_dir, spec.origin + "/")
    assert [e for e in entries if not spec.is_trap(e["loc"])] == [
        e for e in spec.expected_listed() if not spec.is_trap(e["loc"])
    ]


@pytest.mark.parametrize("value", ["3", "0", "many"])
def test_a_bad_workers_setting_stops_the_crawl(value: str, tmp_path: Path) -> None:
    result = run_crawl("http://127.0.0.1:9/", tmp_path, settings={"SITEMAP_WORKERS": value})
    assert result.returncode == 2
    assert "SITEMAP_WORKERS" in result.stderr


@pytest.mark.parametrize("queue_memory", ["10000", "50"], ids=["queue-in-memory", "queue-on-disk"])
def test_the_leader_lends_its_queue_when_the_helper_runs_dry(
    generated: RunningSite, tmp_path: Path, queue_memory: str
) -> None:
    """Started late, the helper has only the links found since while the leader keeps the queue
    it had, half of it URLs the hash gives the helper (announced to it as the leader's). Once the
    helper runs dry, the leader lends it the front of that queue: every page is still fetched
    once, the announced ones included, and the set is the one the site must have, whether the
    front of the queue is in memory or on disk."""
    generated.server.clear()
    # With 50 requests in memory, most of the leader's queue is on disk when it lends.
    settings = {"SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "400", "SITEMAP_WORKERS_AFTER_SECONDS": "0",
                "SITEMAP_QUEUE_MEMORY": queue_memory}
    result = run_crawl(generated.start_url, tmp_path, settings=settings, timeout=300)
    assert result.returncode == 0, result.describe()
    assert log_stat(result.stderr, "sitemap/workers") == 2
    lent = log_stat(result.stderr, "sitemap/workers/lent")
    assert lent, result.describe()
    urls = read_sitemap_set(result.output_dir, generated.origin + "/")
    assert_same_entries(without_traps(generated.spec, urls), generated.spec.expected_listed())
    retried = {target for target, route in generated.spec.routes.items() if route.status in (500, 502, 503, 504, 429)}
    twice = {target: n for target, n in page_fetches(generated).items() if n > 1 and target not in retried}
    assert not twice, f"{len(twice)} pages fetched more than once: {sorted(twice)[:20]}"


def test_each_process_keeps_half_of_the_site_s_concurrency_and_of_autothrottle_s_target() -> None:
    """When the helper starts, the leader keeps half of CONCURRENT_REQUESTS_PER_DOMAIN and half of
    AUTOTHROTTLE_TARGET_CONCURRENCY (the helper gets the other halves through its settings). The
    crawl's AutoThrottle is PacingAutoThrottle: looking for Scrapy's class by name missed it, and
    the leader kept the whole target."""
    from types import SimpleNamespace

    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from sitemap_spider.crawl.throttle import PacingAutoThrottle
    from sitemap_spider.modes.workers.spawn import share_concurrency

    crawler = get_crawler(Spider, {
        "EXTENSIONS": {"scrapy.extensions.throttle.AutoThrottle": None, PacingAutoThrottle: 0},
        "AUTOTHROTTLE_ENABLED": True,
        "AUTOTHROTTLE_TARGET_CONCURRENCY": 4.0,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    })  # fmt: skip
    crawler._apply_settings()
    slot = SimpleNamespace(concurrency=8)
    crawler.engine = SimpleNamespace(downloader=SimpleNamespace(domain_concurrency=8, slots={"site": slot}))  # type: ignore[assignment]
    share_concurrency(crawler)
    (throttle,) = [ext for ext in crawler.extensions.middlewares if isinstance(ext, PacingAutoThrottle)]
    assert throttle.target_concurrency == 2.0
    assert crawler.engine.downloader.domain_concurrency == 4 and slot.concurrency == 4

"""The crawl people run most: a recrawl with the history, of a site with a few broken pages (#24).

Each test crawls a real local site twice with the history, in every crawl mode (one
process, JOBDIR, two processes, Redis):

- an unchanged site served as static file servers serve it (an ETag on every page, 304 to a
  matching If-None-Match) is recrawled with 304s, paced as 200s: with an AutoThrottle start
  delay of 2 s, a crawl that never lowered its delay on a 304 would take ten minutes here;
- a recrawl starts at the pace the site held at the end of the last crawl, not at the start delay;
- a site where 5% of the pages fail for the whole recrawl (503 with Retry-After, 502, or a
  timeout) ends on its own, lists those pages with their previous entries, names them in the
  report, and publishes; the failing pages do not set the rest of the site's pace.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.crawl_fixtures import CrawlResult, crawl_command, run_crawl
from tests.fault_server import FaultPlan, FaultServer
from tests.generated_site import build_generated_site
from tests.site_spec import SiteSpec
from tests.sitemap_check import read_sitemap_set
from tests.test_shared import run_workers

pytestmark = pytest.mark.slow

PAGES = 300
NEVER = 10**9
QUIET: dict[str, Any] = {"share": 0, "outage_after": 0, "refuse_after": 0}
MODES = ["one", "jobdir", "two", "redis"]


@pytest.fixture
def site() -> Iterator[tuple[FaultServer, SiteSpec]]:
    with FaultServer() as server:
        server.validators = True
        spec = build_generated_site(server.origin, PAGES)
        server.serve(spec)
        yield server, spec


def _mode_settings(mode: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, str]:
    if mode == "jobdir":
        return {"JOBDIR": str(tmp_path / "job")}
    if mode == "two":
        return {"SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "0"}
    if mode == "redis":
        return {"SITEMAP_REDIS_URL": request.getfixturevalue("redis_url"), "SITEMAP_REDIS_IDLE_SECONDS": "0.5"}
    return {"SITEMAP_WORKERS": "1"}


def _count(stats: dict[str, object], key: str) -> int:
    value = stats.get(key, 0)
    assert isinstance(value, int), (key, value)
    return value


def _exclusions(result: CrawlResult) -> dict[str, tuple[str, str | None]]:
    assert result.report is not None, result.describe()
    return {row["url"]: (row["reason"], row.get("detail")) for row in result.report["excluded_urls"]}


def _page_answers(server: FaultServer) -> list[str]:
    return [t for t in server.targets() if t != "/robots.txt"]


@pytest.mark.parametrize("mode", MODES)
def test_an_unchanged_site_is_recrawled_with_304s_at_full_pace(
    mode: str, site: tuple[FaultServer, SiteSpec], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    server, spec = site
    # A slow start: AutoThrottle must come down from it on 304s as it does on 200s.
    settings = {"AUTOTHROTTLE_START_DELAY": "2", **_mode_settings(mode, tmp_path, request)}
    first = run_crawl(spec.start_url, tmp_path, settings=settings)
    assert first.returncode == 0, first.describe()
    first_files = first.files()
    if mode == "jobdir":
        settings["JOBDIR"] = str(tmp_path / "job2")  # a finished job's state is kept: the recrawl is a new job
    server.clear()
    second = run_crawl(spec.start_url, tmp_path, settings=settings, timeout=180)
    assert second.returncode == 0, second.describe()

    assert second.files() == first_files
    read_sitemap_set(second.output_dir, spec.origin + "/")  # valid (XSDs) and read by Scrapy's reader
    stats = second.stats
    # The report's stats are the crawl's own (sitemap/*): pages judged anew and pages answered 304.
    not_modified = _count(stats, "sitemap/history/not_modified")
    pages = not_modified + sum(_count(stats, f"sitemap/history/{k}") for k in ("new", "changed", "unchanged"))
    assert not_modified >= 0.9 * pages, stats
    assert not [k for k in stats if k.startswith("sitemap/backoff/")], stats
    # As the site sees it: pages left out (noindex, canonical, not HTML) are asked for
    # conditionally too, so nearly every request of the recrawl is answered 304.
    asked = [r for r in server.requests if r.target != "/robots.txt"]
    conditional = [r for r in asked if any(name.lower() == "if-none-match" for name, _ in r.headers)]
    assert len(conditional) >= 0.9 * len(asked), (len(conditional), len(asked))
    # ... and each is judged as before.
    assert _exclusions(second) == _exclusions(first)
    print(f"\n{mode}: first crawl {first.seconds:.1f} s, recrawl {second.seconds:.1f} s, {not_modified}/{pages} 304")


@pytest.mark.parametrize("mode", MODES)
def test_a_recrawl_starts_at_the_pace_the_site_held_last_time(
    mode: str, site: tuple[FaultServer, SiteSpec], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    server, spec = site
    arrivals: list[tuple[float, str]] = []
    record = server.record

    def timed(request: Any) -> None:
        arrivals.append((time.monotonic(), request.target))
        record(request)

    server.record = timed  # type: ignore[method-assign]
    # A start delay far above the site's pace (a few milliseconds an answer).
    settings = {"AUTOTHROTTLE_START_DELAY": "3", **_mode_settings(mode, tmp_path, request)}
    first = run_crawl(spec.start_url, tmp_path, settings=settings)
    assert first.returncode == 0, first.describe()
    with sqlite3.connect(tmp_path / "history.sqlite") as db:
        (noted,) = db.execute("SELECT value FROM meta WHERE key = ?", (f"pace {spec.origin}",)).fetchone()
    assert 0 <= float(noted) < 0.5, noted

    def gaps() -> tuple[float, float]:
        """Seconds from robots.txt to the first page request, and to the fifth."""
        times = [t for t, _ in arrivals]
        assert arrivals[0][1] == "/robots.txt" and len(times) > 5, arrivals[:8]
        return times[1] - times[0], times[5] - times[0]

    # The first crawl: robots.txt, then a page every start delay (with AutoThrottle's jitter,
    # half of it at least) until the answers bring it down.
    assert gaps()[1] > 1.5, arrivals[:8]
    for run in range(2):
        arrivals.clear()
        if mode == "jobdir":
            settings["JOBDIR"] = str(tmp_path / f"job{run + 2}")  # a finished job's state is kept
        second = run_crawl(spec.start_url, tmp_path, settings=settings)
        assert second.returncode == 0, second.describe()
        assert second.files() == first.files()
        read_sitemap_set(second.output_dir, spec.origin + "/")
        to_first, to_fifth = gaps()
        assert to_first < 0.5 and to_fifth < 1.0, arrivals[:8]
        assert "Starting at the pace of the last crawl of 127.0.0.1" in second.stderr, second.describe()

    # A note that is not a number is not used: the crawl starts as a first crawl (and notes its own).
    with sqlite3.connect(tmp_path / "history.sqlite") as db:
        db.execute("UPDATE meta SET value = 'fast' WHERE key = ?", (f"pace {spec.origin}",))
    if mode == "redis":  # the workers' shared copy of the notes
        client = redis.Redis.from_url(settings["SITEMAP_REDIS_URL"])
        (meta,) = [key for key in client.scan_iter() if client.type(key) == b"hash" and client.hexists(key, "note:pace")]
        client.hset(meta, "note:pace", "fast")
    arrivals.clear()
    if mode == "jobdir":
        settings["JOBDIR"] = str(tmp_path / "job9")
    third = run_crawl(spec.start_url, tmp_path, settings=settings)
    assert third.returncode == 0, third.describe()
    assert gaps()[1] > 1.5, arrivals[:8]
    assert "Starting at the pace" not in third.stderr


def test_several_redis_workers_note_the_pace_and_the_one_that_starts_reads_it(
    site: tuple[FaultServer, SiteSpec], tmp_path: Path, redis_url: str
) -> None:
    # The worker that publishes (and commits the history) is seldom the one that queued the start
    # URLs: each notes its own pace, and the starter of the next crawl reads the publisher's.
    server, spec = site
    settings = {"AUTOTHROTTLE_START_DELAY": "3", "SITEMAP_REDIS_URL": redis_url, "SITEMAP_REDIS_IDLE_SECONDS": "0.5"}
    args = crawl_command(spec.start_url, tmp_path, settings=settings)
    for run in range(2):
        results = [worker.finish(timeout=300) for worker in run_workers(args, tmp_path / f"run{run}", 3)]
        logs = [log for _, log in results]
        assert [code for code, _ in results] == [0, 0, 0], [log[-3000:] for log in logs]
        assert sum("Sitemap published:" in log for log in logs) == 1
        read_sitemap_set(tmp_path / "sitemaps", spec.origin + "/")
        with sqlite3.connect(tmp_path / "history.sqlite") as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (f"pace {spec.origin}",)).fetchone()
        assert row is not None and 0 <= float(row[0]) < 0.5, row
        paced = [log for log in logs if "Starting at the pace of the last crawl of 127.0.0.1" in log]
        assert len(paced) == (1 if run else 0), [log[-2000:] for log in logs]


@pytest.mark.parametrize(
    ("mode", "kind"),
    [(mode, "503") for mode in MODES] + [("one", "502"), ("one", "slow")],
)
def test_pages_failing_for_the_whole_recrawl_keep_their_entries_and_the_crawl_publishes(
    mode: str, kind: str, site: tuple[FaultServer, SiteSpec], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    server, spec = site
    settings = {
        # The defaults but for the time the failing pages get once the rest is done, and the first
        # back-off: 0.25 s, doubled at each of the five retries (7.75 s in all, not 31 s: a 502
        # has no Retry-After, and each of those tests waited them out).
        "SITEMAP_RETRY_TIMES": "5",
        "SITEMAP_RETRY_DELAY": "0.25",
        "SITEMAP_RETRY_LAST_PASS_DELAY": "5",
        "DOWNLOAD_TIMEOUT": "2",
        **_mode_settings(mode, tmp_path, request),
    }
    first = run_crawl(spec.start_url, tmp_path, settings=settings)
    assert first.returncode == 0, first.describe()
    first_entries = read_sitemap_set(first.output_dir, spec.origin + "/")

    listed = sorted(e["loc"][len(spec.origin) :] for e in first_entries if "/g/p" in e["loc"])
    failing = listed[:: len(listed) * 20 // len(first_entries) or 1][: len(first_entries) // 20]  # 5% of the set
    assert len(failing) >= 8, (len(listed), len(first_entries))
    # 503 with Retry-After: 1, 502 without, or answers slower than DOWNLOAD_TIMEOUT.
    server.inject(FaultPlan(**QUIET, slow_seconds=5.0, fixed=tuple((p, kind, NEVER) for p in failing)))
    server.clear()
    if mode == "jobdir":
        settings["JOBDIR"] = str(tmp_path / "job2")  # a finished job's state is kept: the recrawl is a new job
    second = run_crawl(spec.start_url, tmp_path, settings=settings, timeout=240)
    assert second.returncode == 0, second.describe()

    # Published, with the failing pages' previous entries: the same set as the first crawl.
    assert read_sitemap_set(second.output_dir, spec.origin + "/") == first_entries
    assert second.report is not None
    kept = {row["url"] for row in second.report["kept_urls"]}
    assert kept == {spec.origin + p for p in failing}, second.describe()
    stats = second.stats
    assert _count(stats, "sitemap/kept/transient_error") == len(failing)
    # A page's fault is not the site's trouble: the failing pages do not set the site's pace. Answers
    # come in the order the server finishes them, so on a loaded machine three of the scattered
    # failing pages may answer in a row and slow the site down once (site_health.RETRY_AFTER_STREAK).
    assert sum(_count(stats, k) for k in stats if k.startswith("sitemap/backoff/")) <= 1, stats
    # Bounded: a few seconds more than the first crawl (the tail is SITEMAP_RETRY_LAST_PASS_DELAY).
    assert second.seconds < first.seconds + 90, (first.seconds, second.seconds)
    if kind != "slow":
        # Each failing page: its first try, five retries, and one last pass; and if the site was
        # slowed down once (above), a failure in that pause is the site's, not one of its tries.
        tries = [_page_answers(server).count(p) for p in failing]
        assert max(tries) <= 7 + _count(stats, "sitemap/retry/site_trouble"), (tries, stats)
    print(f"\n{mode} {kind}: first crawl {first.seconds:.1f} s, recrawl {second.seconds:.1f} s")

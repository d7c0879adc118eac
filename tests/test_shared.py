"""One crawl, several workers (SITEMAP_REDIS_URL): one complete set, published once, nothing lost."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from sitemap_spider.modes.shared.crawl import KEY_PREFIX
from tests.crawl_fixtures import REPO_ROOT, CrawlResult, RunningSite, crawl_command, log_count, run_crawl, serve_site
from tests.generated_site import build_generated_site
from tests.redis_fixtures import free_port
from tests.report_counts import count_problems
from tests.sitemap_check import read_sitemap_set
from tests.test_crawl import assert_same_entries, without_traps
from tests.test_resumable import page_fetches, wait_for_fetches

pytestmark = pytest.mark.slow

PAGES = 1500
# Short waits keep the tests fast; the defaults (3 s, 30 s) suit real crawls.
SHARED = {"SITEMAP_REDIS_IDLE_SECONDS": "0.5", "SITEMAP_REDIS_LEASE_SECONDS": "2"}


@pytest.fixture
def site() -> Iterator[RunningSite]:
    with serve_site(lambda origin, _other: build_generated_site(origin, PAGES)) as running:
        yield running


@dataclass(frozen=True)
class SingleCrawl:
    """The site crawled by one process: what every count of workers must publish."""

    site: RunningSite
    result: CrawlResult
    fetches: int  # pages that crawl fetched


@pytest.fixture(scope="module")
def single_crawl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SingleCrawl]:
    with serve_site(lambda origin, _other: build_generated_site(origin, PAGES)) as site:
        result = run_crawl(site.start_url, tmp_path_factory.mktemp("single"), timeout=300)
        yield SingleCrawl(site, result, sum(page_fetches(site).values()))


@dataclass
class Worker:
    process: subprocess.Popen[str]
    log: Path

    def finish(self, timeout: float = 180) -> tuple[int, str]:
        code = self.process.wait(timeout=timeout)
        return code, self.log.read_text(encoding="utf-8")


def run_workers(args: list[str], directory: Path, count: int) -> list[Worker]:
    """``count`` workers running the very same command; each logs to its own file in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    workers = []
    for n in range(count):
        log = directory / f"worker-{n}.log"
        with log.open("w", encoding="utf-8") as out:
            process = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=out, text=True)
        workers.append(Worker(process, log))
    return workers


def start_workers(site: RunningSite, tmp_path: Path, redis_url: str, count: int) -> list[Worker]:
    """``count`` workers of one shared crawl of ``site``."""
    args = crawl_command(site.start_url, tmp_path, settings={"SITEMAP_REDIS_URL": redis_url, **SHARED})
    return run_workers(args, tmp_path, count)


def dequeued(log: str) -> int:
    """Requests a worker took from the shared queue, from its stats dump."""
    return log_count(log, "scheduler/dequeued/redis")


def assert_one_publisher(logs: list[str]) -> None:
    published = [log for log in logs if "Sitemap published:" in log]
    assert len(published) == 1, [log[-3000:] for log in logs]
    leaving = [log for log in logs if "publishes the set" in log]
    assert len(leaving) == len(logs) - 1


def assert_complete_set(site: RunningSite, output: Path) -> None:
    urls = read_sitemap_set(output, site.origin + "/")
    assert_same_entries(without_traps(site.spec, urls), site.spec.expected_listed())


@pytest.mark.xdist_group("test_shared.single_crawl")  # one worker: the one-process crawl is run once
@pytest.mark.parametrize("count", [2, 3])
def test_workers_publish_what_one_process_publishes(
    single_crawl: SingleCrawl, tmp_path: Path, redis_url: str, count: int
) -> None:
    site, single, alone = single_crawl.site, single_crawl.result, single_crawl.fetches
    assert single.returncode == 0, single.describe()
    before = sum(page_fetches(site).values())

    shared_dir = tmp_path / "shared"
    started = time.monotonic()
    workers = start_workers(site, shared_dir, redis_url, count)
    results = [worker.finish() for worker in workers]
    seconds = time.monotonic() - started
    logs = [log for _, log in results]
    assert [code for code, _ in results] == [0] * count, [log[-3000:] for log in logs]
    assert_one_publisher(logs)

    assert_complete_set(site, shared_dir / "sitemaps")
    files = {p.name: p.read_bytes() for p in sorted((shared_dir / "sitemaps").iterdir()) if p.is_file()}
    assert files == single.files()
    together = sum(page_fetches(site).values()) - before
    taken = [dequeued(log) for log in logs]
    print(f"\npages fetched: 1 process {alone} in {single.seconds:.1f} s;"
          f" {count} workers {together} in {seconds:.1f} s, taken per worker {taken}")  # fmt: skip
    assert together <= 1.05 * alone, (together, alone)
    assert sum(n > 0 for n in taken) >= 2, "the work was not shared"
    # The report of the whole crawl is written once, by the publisher.
    report = (shared_dir / "report.json").read_text(encoding="utf-8")
    assert '"http_error"' in report
    # Its counts (the HTML report's charts, the progress line) are every worker's.
    problems = count_problems(json.loads(report), together)
    assert not problems, problems
    # So is the progress line of the worker that publishes: its last one counts every worker's pages.
    publisher = next(log for log in logs if "Sitemap published:" in log)
    final = re.search(r"Progress at the end: ([\d,]+) pages fetched, 0 queued", publisher)
    assert final is not None and int(final.group(1).replace(",", "")) == together, publisher[-3000:]
    # The others' last lines: the crawl's totals, or once the publisher dropped them, their own
    # part (said as such), not zeros.
    for log in logs:
        if log is not publisher:
            left = re.search(r"Progress at the end( \(this worker's part\))?: ([\d,]+) pages fetched", log)
            assert left is not None, log[-3000:]
            fetched = int(left.group(2).replace(",", ""))
            assert (fetched == together) if left.group(1) is None else (0 < fetched < together), log[-3000:]
    # Once every worker has ended, the crawl's data are gone, whoever ended last.
    client = redis.Redis.from_url(redis_url)
    assert sorted(key.decode() for key in client.keys(f"{KEY_PREFIX}:*")) == [
        f"{KEY_PREFIX}:{site.origin}:{name}" for name in ("meta", "past", "past_meta")
    ]


def test_a_killed_worker_loses_nothing(site: RunningSite, tmp_path: Path, redis_url: str) -> None:
    workers = start_workers(site, tmp_path, redis_url, 3)
    victim, *others = workers
    wait_for_fetches(site, PAGES // 3, victim.process)
    os.kill(victim.process.pid, signal.SIGKILL)
    assert victim.process.wait(timeout=30) == -signal.SIGKILL
    results = [worker.finish() for worker in others]
    logs = [log for _, log in results]
    assert [code for code, _ in results] == [0, 0], [log[-3000:] for log in logs]
    assert_one_publisher(logs)
    assert_complete_set(site, tmp_path / "sitemaps")
    fetches = page_fetches(site)
    fetched_again = sum(count - 1 for count in fetches.values() if count > 1)
    print(f"\nkilled worker: {fetched_again} pages fetched again out of {len(fetches)}")
    assert fetched_again <= 0.05 * len(fetches)


def test_a_worker_slow_to_start_does_not_end_the_crawl_empty(
    site: RunningSite, tmp_path: Path, redis_url: str
) -> None:
    """A worker whose start-up outlasts the lease, started first, and a quick one started after it.

    Both run the same crawl: the first to be ready seeds it, the other joins, and the set is whole.
    """
    settings = {"SITEMAP_REDIS_URL": redis_url, **SHARED}
    slow = {"EXTENSIONS": '{"tests.slow_start.SlowStart": 0}', "SLOW_START_SECONDS": "4"}
    workers = []
    for n, extra in enumerate((slow, {})):
        args = crawl_command(site.start_url, tmp_path, settings={**settings, **extra})
        log = tmp_path / f"worker-{n}.log"
        with log.open("w", encoding="utf-8") as out:
            workers.append(Worker(subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=out), log))
        time.sleep(0.5)
    results = [worker.finish() for worker in workers]
    logs = [log for _, log in results]
    assert [code for code, _ in results] == [0, 0], [log[-3000:] for log in logs]
    assert_one_publisher(logs)
    assert_complete_set(site, tmp_path / "sitemaps")


def test_a_new_crawl_starts_over_and_a_finished_one_leaves_no_data(
    case_site: RunningSite, tmp_path: Path, redis_url: str
) -> None:
    site = case_site
    settings = {"SITEMAP_REDIS_URL": redis_url, **SHARED}
    first = run_crawl(site.start_url, tmp_path, settings=settings, timeout=300)
    assert first.returncode == 0, first.describe()
    assert "started as worker" in first.stderr
    client = redis.Redis.from_url(redis_url)
    # Only the crawl's status and its history (which the next crawl reads, from any host) are kept
    # once its set is published.
    assert sorted(key.decode() for key in client.keys(f"{KEY_PREFIX}:*")) == [
        f"{KEY_PREFIX}:{site.origin}:{name}" for name in ("meta", "past", "past_meta")
    ]
    assert client.hget(f"{KEY_PREFIX}:{site.origin}:meta", "status") == b"finished"
    second = run_crawl(site.start_url, tmp_path, settings=settings, timeout=300)
    assert second.returncode == 0, second.describe()
    assert "started as worker" in second.stderr
    assert second.files() == first.files()


def test_a_crawl_whose_workers_all_died_is_resumed_when_asked(
    site: RunningSite, tmp_path: Path, redis_url: str
) -> None:
    (worker,) = start_workers(site, tmp_path, redis_url, 1)
    wait_for_fetches(site, PAGES // 3, worker.process)
    os.kill(worker.process.pid, signal.SIGKILL)
    worker.process.wait(timeout=30)
    # Once its heartbeat is older than the lease, the worker counts as gone.
    time.sleep(float(SHARED["SITEMAP_REDIS_LEASE_SECONDS"]) + 0.5)
    settings = {"SITEMAP_REDIS_URL": redis_url, "SITEMAP_RESUME": "True", **SHARED}
    result = run_crawl(site.start_url, tmp_path, settings=settings, timeout=300)
    assert result.returncode == 0, result.describe()
    assert "resumed as worker" in result.stderr
    assert_complete_set(site, tmp_path / "sitemaps")
    fetches = page_fetches(site)
    fetched_again = sum(count - 1 for count in fetches.values() if count > 1)
    assert fetched_again <= 0.05 * len(fetches)


@pytest.mark.parametrize(
    ("url", "problem"),
    [("http://127.0.0.1:6379/0", "needs a redis://"), ("redis://127.0.0.1:{port}/0", "cannot reach Redis")],
    ids=["not-redis", "unreachable"],
)
def test_a_bad_redis_url_stops_the_crawl_before_any_request(
    case_site: RunningSite, tmp_path: Path, url: str, problem: str
) -> None:
    settings = {"SITEMAP_REDIS_URL": url.format(port=free_port())}
    result = run_crawl(case_site.start_url, tmp_path, settings=settings)
    assert result.returncode == 2, result.describe()
    assert f"SITEMAP_REDIS_URL: {problem}" in result.stderr
    assert not case_site.server.requests

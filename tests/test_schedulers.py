"""The queue of a crawl without JOBDIR spills to disk past SITEMAP_QUEUE_MEMORY requests (SpillScheduler),
and is gone when the crawl ends."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest
from scrapy import Request, Spider
from scrapy.settings import BaseSettings
from scrapy.utils.test import get_crawler

from sitemap_spider.config import apply_sitemap_defaults
from sitemap_spider.modes.schedulers import SpillScheduler
from tests.crawl_fixtures import RunningSite, log_count, log_stat, run_crawl
from tests.sitemap_check import read_sitemap_set
from tests.test_crawl import assert_same_entries, without_traps


def test_the_queue_goes_to_a_temporary_directory_and_is_removed(case_site: RunningSite, tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    settings = {"SITEMAP_WORKERS": "1", "SITEMAP_QUEUE_MEMORY": "0"}
    result = run_crawl(case_site.start_url, tmp_path, settings=settings, env=env)
    assert result.returncode == 0, result.describe()
    enqueued = log_stat(result.stderr, "scheduler/enqueued")
    assert enqueued and enqueued > 100
    # Requests that cannot be pickled would stay in memory; the crawl's own all go to disk.
    assert log_stat(result.stderr, "scheduler/enqueued/disk") == enqueued
    assert log_stat(result.stderr, "scheduler/enqueued/memory") is None
    assert not list(temp.glob("sitemap-queue-*")), "the queue directory was left behind"
    urls = read_sitemap_set(result.output_dir, case_site.origin + "/")
    assert_same_entries(without_traps(case_site.spec, urls), case_site.spec.expected_listed())


@pytest.mark.parametrize(("in_memory", "on_disk"), [("100000", False), ("5", True)])
def test_the_first_requests_wait_in_memory_the_rest_on_disk(
    in_memory: str, on_disk: bool, case_site: RunningSite, tmp_path: Path
) -> None:
    settings = {"SITEMAP_WORKERS": "1", "SITEMAP_QUEUE_MEMORY": in_memory}
    result = run_crawl(case_site.start_url, tmp_path, settings=settings)
    assert result.returncode == 0, result.describe()
    enqueued = log_stat(result.stderr, "scheduler/enqueued")
    memory = log_count(result.stderr, "scheduler/enqueued/memory")
    disk = log_count(result.stderr, "scheduler/enqueued/disk")
    assert enqueued and memory + disk == enqueued
    if on_disk:
        # Five wait in memory at most: the site's links come many at once, and go to disk
        # until the disk queue is empty again.
        assert disk > enqueued / 4 and memory >= 5
    else:
        assert disk == 0
    # Either way every page is crawled, breadth-first: the same set, each at its depth.
    urls = read_sitemap_set(result.output_dir, case_site.origin + "/")
    assert_same_entries(without_traps(case_site.spec, urls), case_site.spec.expected_listed())


def test_the_seen_set_is_emptied_when_the_crawl_closes_without_a_warning() -> None:
    # Pins Scrapy's private RFPDupeFilter._fingerprints: if a Scrapy upgrade moves it, the
    # crawl would keep every fingerprint in memory while it publishes.
    settings = {
        "REMOTE_CONTROL_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        # Scrapy's default queue asks the engine's downloader for its slots; there is no engine here.
        "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue",
    }
    ours = BaseSettings()
    apply_sitemap_defaults(ours)  # SpillScheduler reads SITEMAP_QUEUE_MEMORY
    crawler = get_crawler(Spider, {**settings, **ours.copy_to_dict()})
    crawler.spider = spider = Spider.from_crawler(crawler, name="seen")
    scheduler = SpillScheduler.from_crawler(crawler)
    scheduler.open(spider)
    for number in range(5):
        scheduler.enqueue_request(Request(f"http://127.0.0.1/{number}"))
    assert not scheduler.enqueue_request(Request("http://127.0.0.1/0")), "a repeated request was queued"
    seen = scheduler.df._fingerprints  # type: ignore[attr-defined]
    assert isinstance(seen, set) and len(seen) == 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Scrapy's deprecated public copy must not be touched
        scheduler.close("finished")
    assert not seen

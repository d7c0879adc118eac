"""SIGTERM, which Scrapyd's cancel sends, stops a crawl as Ctrl-C does: nothing published half-way.

A second SIGTERM forces the shutdown (Scrapy stops the reactor at once): still no
partial set. With JOBDIR the same command then resumes to the whole set; with two
crawling processes the second one does not outlive the first.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crawl_fixtures import REPO_ROOT, RunningSite, crawl_command, serve_site
from tests.generated_site import build_generated_site
from tests.test_resumable import assert_complete, page_fetches, publish_earlier_set, wait_for_fetches
from tests.test_workers import _alive, _helper_pid, _start

PAGES = 3000

TERMS = pytest.mark.parametrize("terms", [1, 2], ids=["sigterm", "sigterm-twice"])


@pytest.fixture
def site() -> Iterator[RunningSite]:
    with serve_site(lambda origin, _other: build_generated_site(origin, PAGES)) as running:
        yield running


def terminate(process: subprocess.Popen[bytes], terms: int) -> int:
    """SIGTERM ``terms`` times (the second one forces the shutdown); the exit code."""
    process.send_signal(signal.SIGTERM)
    for _ in range(terms - 1):
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
    return process.wait(timeout=90)


def output_listing(output: Path) -> dict[str, bytes | None]:
    """Every entry of the output directory, hidden staging directories included (None: a directory)."""
    return {p.name: p.read_bytes() if p.is_file() else None for p in output.iterdir()}


@TERMS
def test_sigterm_keeps_the_previous_set_byte_for_byte(site: RunningSite, tmp_path: Path, terms: int) -> None:
    output = tmp_path / "sitemaps"
    earlier = publish_earlier_set(site, output)
    args = crawl_command(site.start_url, tmp_path, settings={"SITEMAP_WORKERS": "1"})
    with (tmp_path / "stderr.txt").open("w") as err:
        process = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=err)
        try:
            wait_for_fetches(site, PAGES // 3, process)
            signalled = time.monotonic()
            assert terminate(process, terms) != 0
            seconds = time.monotonic() - signalled
        finally:
            if process.poll() is None:
                process.kill()
    stderr = (tmp_path / "stderr.txt").read_text(errors="replace")
    peak = re.findall(r"'memusage/max': (\d+)", stderr)
    print(f"\nSIGTERM x{terms}: exit {seconds:.1f} s after, peak {int(peak[-1]) // 2**20 if peak else '?'} MB")
    assert sum(page_fetches(site).values()) < PAGES, "the crawl was not interrupted"
    assert output_listing(output) == earlier, stderr[-3000:]
    if terms == 1:
        assert "Sitemap NOT published: the crawl did not finish (shutdown)" in stderr, stderr[-3000:]


@TERMS
def test_sigterm_with_jobdir_resumes_to_the_whole_set(site: RunningSite, tmp_path: Path, terms: int) -> None:
    output = tmp_path / "sitemaps"
    earlier = publish_earlier_set(site, output)
    jobdir = tmp_path / "job"
    args = crawl_command(site.start_url, tmp_path, settings={"JOBDIR": str(jobdir), "LOG_LEVEL": "WARNING"})
    process = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_fetches(site, PAGES // 3, process)
        assert terminate(process, terms) != 0
    finally:
        if process.poll() is None:
            process.kill()
    assert output_listing(output) == earlier
    # The same command goes on where it stopped and publishes exactly the uninterrupted crawl's set.
    assert_complete(site, tmp_path, jobdir)
    fetches = page_fetches(site)
    print(f"\nSIGTERM x{terms} with JOBDIR: {sum(n - 1 for n in fetches.values() if n > 1)} pages fetched twice")


@TERMS
def test_sigterm_stops_the_second_process_too(tmp_path: Path, terms: int) -> None:
    with serve_site(lambda origin, _other: build_generated_site(origin, 1500)) as site:
        log = tmp_path / "crawl.log"
        crawl = _start(site, tmp_path, log)
        try:
            pid = _helper_pid(log, time.monotonic() + 60)
            time.sleep(0.5)
            assert terminate(crawl, terms) != 0
        finally:
            if crawl.poll() is None:
                os.killpg(crawl.pid, signal.SIGKILL)
                crawl.wait()
        deadline = time.monotonic() + 30
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        text = log.read_text(errors="replace")
        assert not _alive(pid), "the second process outlived the crawl:\n" + text[-3000:]
        assert not (tmp_path / "sitemaps").exists() or not any((tmp_path / "sitemaps").iterdir()), text[-3000:]

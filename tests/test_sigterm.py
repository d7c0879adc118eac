"""SIGTERM, which Scrapyd's cancel sends, stops a crawl as Ctrl-C does: nothing published half-way.

A second SIGTERM or Ctrl-C forces the shutdown (Scrapy stops the reactor at once): still no
partial set, no temporary file left beside the output, the report or the history, and the
history as it was. With JOBDIR the same command then resumes to the whole set; with two
crawling processes the second one does not outlive the first.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sitemap_spider.crawl.stopping import STOP_GRACE
from sitemap_spider.history.store import HistoryStore
from tests.crawl_fixtures import REPO_ROOT, RunningSite, crawl_command, run_crawl, serve_site
from tests.generated_site import build_generated_site
from tests.site_server import SiteServer, html_page
from tests.site_spec import Route, SiteRequest
from tests.sitemap_check import read_sitemap_set
from tests.test_history_store import record
from tests.test_resumable import assert_complete, page_fetches, publish_earlier_set, wait_for_fetches
from tests.test_workers import _alive, _helper_pid, _start

pytestmark = pytest.mark.slow

#: Pages of the site stopped a third of the way (as tests/test_resumable.py's).
PAGES = 1500

TERMS = pytest.mark.parametrize("terms", [1, 2], ids=["sigterm", "sigterm-twice"])
#: How a crawl is stopped: Scrapyd's cancel (once, or twice to force it), and Ctrl-C twice.
STOPS = pytest.mark.parametrize(
    ("signum", "times"),
    [(signal.SIGTERM, 1), (signal.SIGTERM, 2), (signal.SIGINT, 2)],
    ids=["sigterm", "sigterm-twice", "ctrl-c-twice"],
)


@pytest.fixture
def site() -> Iterator[RunningSite]:
    with serve_site(lambda origin, _other: build_generated_site(origin, PAGES)) as running:
        yield running


def terminate(process: subprocess.Popen[bytes], terms: int, signum: int = signal.SIGTERM) -> int:
    """Send ``signum`` ``terms`` times (the second one forces the shutdown); the exit code."""
    process.send_signal(signum)
    for _ in range(terms - 1):
        time.sleep(0.3)
        process.send_signal(signum)
    return process.wait(timeout=90)


@contextmanager
def hanging(server: SiteServer) -> Iterator[None]:
    """The server holds every answer (up to 60 s) until the block ends, then drops it.

    A second signal forces the shutdown only while the first one's clean stop still waits for
    requests in flight: a local site answers them in milliseconds, and the crawl would be over.
    By the end of the block the crawl is gone: an answer would only meet a closed socket.
    """
    release = threading.Event()
    resolve = server.resolve

    def held(_request: SiteRequest) -> Route:
        release.wait(60)
        return Route(drop=True)

    server.resolve = held  # type: ignore[method-assign]
    try:
        time.sleep(0.5)  # the requests under way now hang
        yield
    finally:
        release.set()
        server.resolve = resolve  # type: ignore[method-assign]


def stop(process: subprocess.Popen[bytes], server: SiteServer, signum: int, times: int) -> int:
    """Stop the crawl with ``times`` ``signum``; a second one lands while the first's stop still waits."""
    if times == 1:
        return terminate(process, 1, signum)
    with hanging(server):
        process.send_signal(signum)
        time.sleep(1.0)
        assert process.poll() is None, "the first signal's clean stop ended before the second signal"
        process.send_signal(signum)
        return process.wait(timeout=90)


def output_listing(output: Path) -> dict[str, bytes | None]:
    """Every entry of the output directory, hidden staging directories included (None: a directory)."""
    return {p.name: p.read_bytes() if p.is_file() else None for p in output.iterdir()}


def seed_history(site: RunningSite, path: Path) -> str:
    """A history of an earlier crawl of the site, closed; the SHA-256 of its bytes."""
    store = HistoryStore(path)
    store.commit([record("/", origin=site.origin), record("/earlier-page", origin=site.origin)], site.origin)
    store.close()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_no_litter(folder: Path, before: set[str], stderr: str) -> None:
    """``folder`` (the report's and the history's) holds what it held, and at most a complete report."""
    new = {p.name for p in folder.iterdir()} - before
    assert new <= {"report.json"}, f"left beside the report and the history: {sorted(new)}\n{stderr[-3000:]}"
    if new:
        json.loads((folder / "report.json").read_text(encoding="utf-8"))  # whole, not cut off


@STOPS
def test_a_stopped_crawl_keeps_the_previous_set_and_history_and_leaves_nothing(
    site: RunningSite, tmp_path: Path, signum: int, times: int
) -> None:
    output = tmp_path / "sitemaps"
    earlier = publish_earlier_set(site, output)
    history = seed_history(site, tmp_path / "history.sqlite")
    stderr_path = tmp_path / "stderr.txt"
    before = {p.name for p in tmp_path.iterdir()} | {stderr_path.name}
    args = crawl_command(site.start_url, tmp_path, settings={"SITEMAP_WORKERS": "1"})
    with stderr_path.open("w") as err:
        process = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=err)
        try:
            wait_for_fetches(site, PAGES // 3, process)
            signalled = time.monotonic()
            assert stop(process, site.server, signum, times) != 0
            seconds = time.monotonic() - signalled
        finally:
            if process.poll() is None:
                process.kill()
    stderr = stderr_path.read_text(errors="replace")
    peak = re.findall(r"'memusage/max': (\d+)", stderr)
    print(f"\n{signal.Signals(signum).name} x{times}: exit {seconds:.1f} s after, "
          f"peak {int(peak[-1]) // 2**20 if peak else '?'} MB")
    assert sum(page_fetches(site).values()) < PAGES, "the crawl was not interrupted"
    assert output_listing(output) == earlier, stderr[-3000:]
    assert_no_litter(tmp_path, before, stderr)
    assert hashlib.sha256((tmp_path / "history.sqlite").read_bytes()).hexdigest() == history
    if times == 1:
        assert "Sitemap NOT published: the crawl did not finish (shutdown)" in stderr, stderr[-3000:]


@STOPS
def test_a_stopped_crawl_with_jobdir_resumes_to_the_whole_set(
    site: RunningSite, tmp_path: Path, signum: int, times: int
) -> None:
    output = tmp_path / "sitemaps"
    earlier = publish_earlier_set(site, output)
    history = seed_history(site, tmp_path / "history.sqlite")
    jobdir = tmp_path / "job"
    before = {p.name for p in tmp_path.iterdir()} | {jobdir.name}
    args = crawl_command(site.start_url, tmp_path, settings={"JOBDIR": str(jobdir), "LOG_LEVEL": "WARNING"})
    process = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_fetches(site, PAGES // 3, process)
        assert stop(process, site.server, signum, times) != 0
    finally:
        if process.poll() is None:
            process.kill()
    assert output_listing(output) == earlier
    assert_no_litter(tmp_path, before, "")
    assert hashlib.sha256((tmp_path / "history.sqlite").read_bytes()).hexdigest() == history
    # The same command goes on where it stopped and publishes exactly the uninterrupted crawl's set.
    assert_complete(site, tmp_path, jobdir)
    fetches = page_fetches(site)
    print(f"\n{signal.Signals(signum).name} x{times} with JOBDIR: "
          f"{sum(n - 1 for n in fetches.values() if n > 1)} pages fetched twice")



@pytest.mark.parametrize("render", ["never", "auto"])  # Scrapy's HTTP/1.1 handler, and render=auto's
def test_a_stop_lets_go_of_requests_that_go_unanswered(site: RunningSite, tmp_path: Path, render: str) -> None:
    """Answers that do not come hold a SIGTERM STOP_GRACE seconds, not DOWNLOAD_TIMEOUT (30 s) each;
    the requests let go are not done, and the same command with JOBDIR fetches them."""
    jobdir = tmp_path / "job"
    log = tmp_path / "stop.log"
    settings = {"JOBDIR": str(jobdir), "LOG_LEVEL": "INFO"}
    args = crawl_command(site.start_url, tmp_path, "-a", f"render={render}", settings=settings)
    with log.open("wb") as err:
        process = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=err)
        try:
            wait_for_fetches(site, PAGES // 3, process)
            with hanging(site.server):  # every request under way now gets no answer for 60 s
                started = time.monotonic()
                assert terminate(process, 1) != 0
                took = time.monotonic() - started
        finally:
            if process.poll() is None:
                process.kill()
    text = log.read_text(errors="replace")
    assert took < STOP_GRACE + 8, (took, text[-3000:])
    assert re.search(r"Stopping: \d+ request\(s\) still unanswered after 3 s let go", text), text[-3000:]
    assert_complete(site, tmp_path, jobdir)

def test_after_a_sigkill_the_next_crawl_removes_what_the_killed_one_left(site: RunningSite, tmp_path: Path) -> None:
    """Nothing cleans up after a SIGKILL: the next crawl removes temporary files and folders of our own
    naming that no running crawl owns (staging, the queue, a partial report, an earlier release's
    spool), and says so; other files stay."""
    output = tmp_path / "sitemaps"
    publish_earlier_set(site, output)
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    args = crawl_command(site.start_url, tmp_path, settings={"SITEMAP_WORKERS": "1"})
    process = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        wait_for_fetches(site, PAGES // 3, process)
    finally:
        process.kill()
        process.wait()
    left = sorted(p.name for p in output.iterdir() if p.name.startswith(".sitemap-staging-"))
    assert left, "the killed crawl left no staging directory: the test tests nothing"
    assert list(temp.glob("sitemap-queue-*")), "the killed crawl left no queue: the test tests nothing"
    # What a kill while the report was written, and an earlier release's killed crawl, leave.
    planted = [tmp_path / ".report.json.partial", tmp_path / ".report.json.k2x_9qzr.jl"]
    foreign = [tmp_path / ".report.json.notes", tmp_path / ".other.json.partial", temp / "sitemap-queue-keep"]
    for path in planted + foreign[:2]:
        path.write_text("{")
    foreign[2].mkdir()
    result = run_crawl(site.start_url, tmp_path, settings={"SITEMAP_WORKERS": "1"}, env=env, timeout=300)
    assert result.returncode == 0, result.describe()
    assert not [p.name for p in output.iterdir() if p.name.startswith(".")], result.describe()
    assert [p.name for p in temp.iterdir()] == ["sitemap-queue-keep"]
    assert not [p for p in planted if p.exists()] and all(p.exists() for p in foreign)
    assert result.stderr.count("left by a crawl that was killed") == len(planted), result.describe()
    assert "the queue of a crawl that no longer runs" in result.stderr
    assert f"{output / left[0]}, left by a process that no longer runs" in result.stderr


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
        # Nor did either process leave anything beside the report, nor make a history where there was none.
        assert_no_litter(tmp_path, {log.name, "sitemaps"}, text)


def test_a_stop_lets_go_of_a_render_whose_page_does_not_load(tmp_path: Path) -> None:
    """A render waiting on a script that does not come held a SIGTERM to its timeout (19 s, 20 s the
    default), then counted as a failed render; now it is let go after STOP_GRACE, not done, and the
    same command with JOBDIR renders it."""
    release = threading.Event()

    def script(_request: SiteRequest) -> Route:
        release.wait(30)
        return Route(headers=(("Content-Type", "application/javascript"),), body=b"var loaded = 1;")

    def page(title: str, words: str, script: str) -> Route:
        body = html_page(title, f"<p>{words}, with words of its own to be read as content.</p>", script)
        return Route(headers=(("Content-Type", "text/html"),), body=body)

    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
        "/": page("Home", 'Home <a href="/a">A</a> <a href="/b">B</a>', '<script src="/slow.js"></script>'),
        "/a": page("A", "The page A", '<script src="/slow.js?a"></script>'),
        "/b": page("B", "The page B", '<script src="/slow.js?b"></script>'),
    }
    jobdir = tmp_path / "job"
    log = tmp_path / "stop.log"
    with SiteServer(routes, dynamic=[(re.compile(r"/slow\.js.*"), script)]) as server:
        command = (server.origin + "/", tmp_path, "-a", "render=always")
        args = crawl_command(*command, settings={"JOBDIR": str(jobdir)})
        try:
            with log.open("wb") as err:
                process = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=err)
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and "/slow.js" not in server.targets():
                    time.sleep(0.1)
                time.sleep(0.5)  # the render waits for the script now
                started = time.monotonic()
                assert terminate(process, 1) != 0
                took = time.monotonic() - started
        finally:
            release.set()  # from now on the script comes at once
            if process.poll() is None:
                process.kill()
        text = log.read_text(errors="replace")
        assert took < STOP_GRACE + 8, (took, text[-3000:])
        assert "request(s) still unanswered after 3 s let go" in text, text[-3000:]
        assert "'sitemap/render/failed'" not in text, text[-3000:]
        result = run_crawl(*command, settings={"JOBDIR": str(jobdir)})
    assert result.returncode == 0, result.describe()
    assert "Resuming the crawl" in result.stderr, result.describe()
    entries = read_sitemap_set(result.output_dir, server.origin + "/")
    listed = {url["loc"][len(server.origin) :] for url in entries}
    assert listed == {"/", "/a", "/b"}, result.describe()

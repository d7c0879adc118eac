"""The crawl history in every crawl mode, and its settings at start-up (#16).

Each mode crawls the dynamic site twice (edits, deletions, additions and 503s between)
and must publish what the one-process crawl publishes: the same model checks as
test_history.py. A JOBDIR crawl killed in the middle of its second run resumes and
commits the history once it publishes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sitemap_spider.history.location import file_name
from sitemap_spider.history.store import HistoryStore
from tests.crawl_fixtures import REPO_ROOT, CrawlResult, crawl_command, run_crawl
from tests.dynamic_site import DynamicSite
from tests.site_server import SiteServer
from tests.sitemap_check import read_sitemap_set
from tests.test_history import SETTINGS, Crawl, Model, _check, _crawl

PAGES = 120
EDIT, DELETE, ADD, FAIL = range(10, 22), range(22, 28), range(120, 126), range(28, 40)


def _change(site: DynamicSite) -> None:
    site.change(edit=EDIT, delete=DELETE, add=ADD, fail=FAIL)


def _assert_second_crawl(first: Crawl, second: Crawl) -> None:
    assert not _check(first, None), _check(first, None)[:10]
    problems = _check(second, first)
    assert not problems, "\n".join(problems[:20])
    assert second.result.report is not None
    assert {row["url"] for row in second.result.report["kept_urls"]} == {f"{second.origin}/p/{n}" for n in FAIL}
    assert second.unchanged_etag_pages >= 10
    assert second.statuses.get("etag 304", 0) >= 0.9 * second.unchanged_etag_pages


@pytest.mark.parametrize("mode", ["jobdir", "two_processes", "redis"])
def test_history_in_every_mode(mode: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    settings = {
        "jobdir": {"JOBDIR": str(tmp_path / "job")},
        "two_processes": {"SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "0"},
        "redis": {"SITEMAP_REDIS_IDLE_SECONDS": "0.5"},
    }[mode]
    if mode == "redis":
        settings["SITEMAP_REDIS_URL"] = request.getfixturevalue("redis_url")
    site = DynamicSite(PAGES)
    with SiteServer() as server:
        site.serve(server)
        model = Model(site, server.origin)
        first = _crawl(site, server, tmp_path, model, None, **settings)
        _change(site)
        second = _crawl(site, server, tmp_path, model, first, **settings)
    _assert_second_crawl(first, second)
    if mode == "two_processes":
        assert first.stats.get("sitemap/workers") == 2, "the second process never started"
        # The helper's records reached the leader, which committed them: the 304s and the
        # kept pages of both halves are in the set.
        assert second.stats["sitemap/history/not_modified"] == second.statuses["etag 304"]


def test_a_killed_jobdir_crawl_resumes_and_then_commits_the_history(tmp_path: Path) -> None:
    settings = {**SETTINGS, "JOBDIR": str(tmp_path / "job"), "CONCURRENT_REQUESTS_PER_DOMAIN": "2"}
    site = DynamicSite(PAGES)
    with SiteServer() as server:
        site.serve(server)
        model = Model(site, server.origin)
        first = _crawl(site, server, tmp_path, model, None, **settings)
        _change(site)
        expected, unchanged_etag = model.expect(first, keep=True)
        before = (tmp_path / "sitemaps" / "sitemap_index.xml").read_bytes()
        history = list(HistoryStore(tmp_path / "history.sqlite").records())
        assert len(history) == len(first.listed)
        args = crawl_command(server.origin + "/", tmp_path, "-a", "render=never", settings=settings)
        site.statuses.clear()
        killed_started = datetime.now(UTC).replace(microsecond=0)
        proc = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            while sum(site.statuses.values()) < 40:
                assert time.monotonic() < deadline and proc.poll() is None, "the crawl ended too early"
                time.sleep(0.02)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert (tmp_path / "sitemaps" / "sitemap_index.xml").read_bytes() == before
        # A crawl that published nothing left the history as it was.
        assert list(HistoryStore(tmp_path / "history.sqlite").records()) == history
        killed = Counter(site.statuses)
        second = _crawl(site, server, tmp_path, model, first, **settings)
        second.expected, second.unchanged_etag_pages = expected, unchanged_etag
        # The killed run and its resumption are one crawl: its window opens with the first.
        second.started = killed_started
        # What the killed run fetched (304s among it) is not fetched again.
        second.statuses = dict(killed + Counter(second.statuses))
        assert "Resuming the crawl" in second.result.stderr
        _assert_second_crawl(first, second)
        # The history was committed with the resumed crawl's set: a third crawl revalidates.
        third = _crawl(site, server, tmp_path, model, second, **settings)
    assert not _check(third, second)
    assert third.statuses.get("etag 304", 0) >= 0.9 * third.unchanged_etag_pages > 0


def test_history_off_crawls_as_before(tmp_path: Path) -> None:
    site = DynamicSite(60)
    with SiteServer() as server:
        site.serve(server)
        for _ in range(2):
            result = run_crawl(server.origin + "/", tmp_path, "-a", "render=never",
                               settings={**SETTINGS, "SITEMAP_HISTORY": "off"})
            assert result.returncode == 0, result.describe()
            assert result.report is not None
            assert not any(key.startswith(("sitemap/history/", "sitemap/kept/")) for key in result.report["stats"])
            assert "kept_urls" not in result.report
    assert site.statuses.get("etag 304", 0) == 0
    assert not (tmp_path / "history.sqlite").exists()


@pytest.mark.parametrize(
    ("value", "problem"),
    [("{out}/history.sqlite", "inside SITEMAP_OUTPUT_DIR"), ("{out}", "inside SITEMAP_OUTPUT_DIR"),
     ("{tmp}", "is a directory")],
)
def test_a_bad_history_place_fails_at_start_up(tmp_path: Path, value: str, problem: str) -> None:
    out = tmp_path / "sitemaps"
    setting = value.format(out=out, tmp=tmp_path)
    result = run_crawl("http://127.0.0.1:9/", tmp_path, settings={"SITEMAP_HISTORY": setting})
    assert result.returncode != 0
    assert "SITEMAP_HISTORY" in result.stderr and problem in result.stderr, result.describe()


def _not_modified(result: CrawlResult) -> int:
    assert result.returncode == 0, result.describe()
    assert result.report is not None
    return int(result.report["stats"].get("sitemap/history/not_modified", 0))


def test_a_history_at_the_old_default_place_is_moved_and_used(tmp_path: Path, private_data_home: Path) -> None:
    """Earlier releases kept the default history in the project's .scrapy, relative to where the crawl
    started: the first crawl after the upgrade moves it to the user's data directory and revalidates
    with it, and so does a crawl started elsewhere afterwards (as cron, with the settings module named)."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "scrapy.cfg").write_text((REPO_ROOT / "scrapy.cfg").read_text())
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    site = DynamicSite(60)
    with SiteServer() as server:
        site.serve(server)
        start = server.origin + "/"
        old = project / ".scrapy" / "sitemap-history" / file_name(server.origin)
        new = private_data_home / "sitemap_spider" / "sitemap-history" / file_name(server.origin)
        # What an earlier release's default left: a history at the old default place.
        earlier = run_crawl(start, tmp_path, "-a", "render=never", settings={**SETTINGS, "SITEMAP_HISTORY": str(old)},
                            cwd=project, env=env)
        assert _not_modified(earlier) == 0 and old.is_file()
        upgraded = run_crawl(start, tmp_path, "-a", "render=never", settings={**SETTINGS, "SITEMAP_HISTORY": None},
                             cwd=project, env=env)
        assert _not_modified(upgraded) > 0, upgraded.describe()
        assert upgraded.stderr.count("Crawl history moved from") == 1, upgraded.describe()
        assert f"{old}" in upgraded.stderr and f"{new}" in upgraded.stderr
        assert new.is_file() and not old.exists()
        cron = run_crawl(start, tmp_path, "-a", "render=never", settings={**SETTINGS, "SITEMAP_HISTORY": None},
                         cwd=elsewhere, env={**env, "SCRAPY_SETTINGS_MODULE": "sitemap_spider.settings"})
        assert _not_modified(cron) > 0, cron.describe()
        assert "Crawl history moved" not in cron.stderr
    assert not list(elsewhere.iterdir()), "the crawl started elsewhere wrote where it was started"


def test_a_redirect_drops_the_validators_of_the_redirecting_url(tmp_path: Path) -> None:
    """/p/<n> moves to /q/<n> with the same ETag: asked with /p/<n>'s validators, /q/<n> would answer
    304 for a page the history does not know, and be lost."""
    site = DynamicSite(60)
    moved = [n for n in range(60) if site.pages[n].kind == "etag"][:4]
    with SiteServer() as server:
        site.serve(server)
        first = run_crawl(server.origin + "/", tmp_path, "-a", "render=never", settings=SETTINGS)
        assert first.returncode == 0, first.describe()
        for n in moved:
            site.pages[n].moved = True
        site.statuses.clear()
        second = run_crawl(server.origin + "/", tmp_path, "-a", "render=never", settings=SETTINGS)
        conditional_to_moved = [
            r for r in server.requests if r.target.startswith("/q/") and "If-None-Match" in dict(r.headers)
        ]
    assert second.returncode == 0, second.describe()
    assert not conditional_to_moved
    assert second.report is not None
    listed = set(_locs(second))
    for n in moved:
        assert f"{server.origin}/q/{n}" in listed and f"{server.origin}/p/{n}" not in listed
    assert not [row for row in second.report["excluded_urls"] if "304" in row.get("detail", "")]


def _locs(result: CrawlResult) -> list[str]:
    start = next(arg for arg in result.args if arg.startswith("url="))[len("url="):]
    return [entry["loc"] for entry in read_sitemap_set(result.output_dir, start)]

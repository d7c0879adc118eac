"""Each crawl mode, chosen by the settings alone, crawls the case site into the same set.

One real crawl of the real local case site per mode; a probe extension says which mode
object ran and what it held before its end (tests/mode_probe.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.crawl_fixtures import RunningSite
from tests.test_crawl import SiteCrawl, assert_same_entries, crawl_site, published, without_traps

PROBE = {"EXTENSIONS": json.dumps({"tests.mode_probe.ModeProbe": 0})}


def crawl_in_mode(site: RunningSite, tmp_path: Path, **settings: str) -> tuple[SiteCrawl, dict[str, Any]]:
    probe = tmp_path / "probe.json"
    crawl = crawl_site(site, tmp_path, settings={**PROBE, "MODE_PROBE": str(probe), **settings}, timeout=300)
    assert crawl.result.returncode == 0, crawl.result.describe()
    urls = published(crawl)
    assert_same_entries(without_traps(crawl.spec, urls), crawl.spec.expected_listed())
    return crawl, json.loads(probe.read_text())


def test_one_process_mode(case_site: RunningSite, tmp_path: Path) -> None:
    _, facts = crawl_in_mode(case_site, tmp_path, SITEMAP_WORKERS="1")
    assert facts["mode"] == "CrawlMode"
    assert facts["scheduler"] == "SpillScheduler"
    assert facts["stored_entries"] is None
    # No durable state: the middleware that stores each response's consequences is not installed.
    assert not any("CrawlStateMiddleware" in name for name in facts["spider_middlewares"])


def test_resumable_mode(case_site: RunningSite, tmp_path: Path) -> None:
    crawl, facts = crawl_in_mode(case_site, tmp_path, JOBDIR=str(tmp_path / "job"))
    assert facts["mode"] == "Resumable"
    assert facts["scheduler"] == "StateScheduler"
    assert any("CrawlStateMiddleware" in name for name in facts["spider_middlewares"])
    # Every listed page was stored as it was crawled, and the set published from the store.
    assert crawl.result.report is not None
    assert facts["stored_entries"] >= crawl.result.report["urls"] > 0
    # Those decided when the set is published are not stored yet when the crawl closes: the duplicates,
    # and the pages that name another URL of the site as canonical (crawl/canonicals.py).
    report = crawl.result.report
    canonical_on_the_site = f"names {crawl.spec.origin}/"
    at_the_end = sum(
        1
        for row in report["excluded_urls"]
        if row["reason"] == "canonical" and row["detail"].startswith(canonical_on_the_site)
    )
    assert facts["stored_exclusions"] == sum(
        n for reason, n in report["excluded"].items() if reason not in ("duplicate", "duplicate_content")
    ) - at_the_end
    assert (tmp_path / "job" / "sitemap-state.sqlite").is_file()


def test_two_process_mode(case_site: RunningSite, tmp_path: Path) -> None:
    crawl, facts = crawl_in_mode(case_site, tmp_path, SITEMAP_WORKERS="2", SITEMAP_WORKERS_AFTER="0")
    assert facts["mode"] == "Leader"
    helper = json.loads((tmp_path / "probe.helper.json").read_text())
    assert helper["mode"] == "Helper"
    assert "[worker 2]" in crawl.result.stderr


def test_shared_mode(case_site: RunningSite, tmp_path: Path, redis_url: str) -> None:
    crawl, facts = crawl_in_mode(
        case_site, tmp_path, SITEMAP_REDIS_URL=redis_url, SITEMAP_REDIS_IDLE_SECONDS="0.5"
    )
    assert facts["mode"] == "SharedMode"
    assert facts["scheduler"] == "SharedScheduler"
    assert crawl.result.report is not None
    assert facts["stored_entries"] >= crawl.result.report["urls"] > 0


def test_the_mode_chooser_the_settings_name_makes_the_mode(case_site: RunningSite, tmp_path: Path) -> None:
    # SITEMAP_WORKERS=2 would start a second process; the project's chooser keeps the crawl in one.
    crawl, facts = crawl_in_mode(
        case_site,
        tmp_path,
        SITEMAP_WORKERS="2",
        SITEMAP_WORKERS_AFTER="0",
        SITEMAP_MODE_CHOOSER="tests.mode_probe.OneProcessChooser",
    )
    assert facts["mode"] == "CrawlMode"
    assert facts["scheduler"] == "SpillScheduler"
    assert not (tmp_path / "probe.helper.json").exists()
    assert "[worker 2]" not in crawl.result.stderr


@pytest.mark.parametrize(
    "chooser",
    [
        "tests.mode_probe.NoSuchChooser",  # not there
        "tests.mode_probe.ModeProbe",  # cannot be made without a crawler
        "pathlib.PurePath",  # made, but chooses nothing
    ],
)
def test_a_mode_chooser_that_is_not_one_stops_the_crawl(
    case_site: RunningSite, tmp_path: Path, chooser: str
) -> None:
    crawl = crawl_site(case_site, tmp_path, settings={"SITEMAP_MODE_CHOOSER": chooser})
    assert crawl.result.returncode == 2, crawl.result.describe()
    assert "error: SITEMAP_MODE_CHOOSER: " in crawl.result.stderr
    assert crawl.requests == []


@pytest.mark.parametrize("setting", ["JOBDIR", "SITEMAP_REDIS_URL"])
def test_a_scheduler_of_the_projects_own_means_no_state(
    case_site: RunningSite, tmp_path: Path, setting: str, redis_url: str
) -> None:
    value = str(tmp_path / "job") if setting == "JOBDIR" else redis_url
    _, facts = crawl_in_mode(
        case_site, tmp_path, SCHEDULER="scrapy.core.scheduler.Scheduler", SITEMAP_WORKERS="1", **{setting: value}
    )
    assert facts["mode"] == "CrawlMode"
    assert facts["scheduler"] == "Scheduler"


def test_collecting_mode_publishes_nothing_and_writes_its_report(case_site: RunningSite, tmp_path: Path) -> None:
    probe = tmp_path / "probe.json"
    crawl = crawl_site(
        case_site, tmp_path, settings={**PROBE, "MODE_PROBE": str(probe), "SITEMAP_PUBLISH": "False"}, timeout=300
    )
    assert crawl.result.returncode == 0, crawl.result.describe()  # finished: nothing was to be published
    facts = json.loads(probe.read_text())
    assert facts["mode"] == "CollectingMode"
    assert crawl.result.files() == {}
    assert "nothing published (SITEMAP_PUBLISH is False)" in crawl.result.stderr
    assert "no sitemap published" not in crawl.result.stderr
    # SITEMAP_REPORT=report.json (crawl_site's): written as by a publishing crawl, naming no file.
    report = crawl.result.report
    assert report is not None, crawl.result.describe()
    expected = [e["loc"] for e in crawl.spec.expected_listed()]
    assert [loc for loc in facts["collected"] if not crawl.spec.is_trap(loc)] == expected
    assert report["urls"] == len(facts["collected"]) and report["files"] == 0
    assert report["finish_reason"] == "finished" and report["not_published"].startswith("SITEMAP_PUBLISH is False")
    assert "index" not in report and "findings" not in report
    assert sum(report["listed"]["sections"].values()) == report["urls"]
    assert report["counts"]["fetched"] > report["urls"]
    assert len(report["excluded_urls"]) == sum(report["excluded"].values()) > 0


@pytest.mark.parametrize("mode", ["one", "jobdir", "two"])
def test_a_crawl_that_publishes_nothing_writes_its_report_in_a_new_folder(tmp_path: Path, mode: str) -> None:
    """The start page answers 404: nothing is published, and the report says why, in a folder
    that did not exist. With JOBDIR (a mode that keeps the exclusions in its state, not in a
    spool beside the report) the report was lost to a FileNotFoundError."""
    from tests.crawl_fixtures import run_crawl
    from tests.site_server import SiteServer
    from tests.site_spec import Route

    report = tmp_path / "reports" / "today" / "report.json"
    settings = {"SITEMAP_REPORT": str(report), **MODE_SETTINGS[mode](tmp_path)}
    with SiteServer({"/": Route(status=404, body=b"gone")}) as server:
        result = run_crawl(server.origin + "/", tmp_path, settings=settings)
    assert result.returncode != 0, result.describe()
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    written = json.loads(report.read_text(encoding="utf-8"))
    assert written["urls"] == 0 and written["excluded"]["http_error"] == 1, written


MODE_SETTINGS = {
    "one": lambda _tmp: {"SITEMAP_WORKERS": "1"},
    "jobdir": lambda tmp: {"JOBDIR": str(tmp / "job")},
    "two": lambda _tmp: {"SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "0"},
}

"""The JOBDIR crawl state (sitemap_spider/modes/state.py): rich entries, the canonical URLs entries
wait on and extension problems survive a reopening, a state file of an earlier version gains the
extensions and canonical columns, and a done mark is committed with the commit after its own."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from types import SimpleNamespace

import pytest

from sitemap_spider.modes import state as state_module
from sitemap_spider.modes.state import COMMIT_INTERVAL, DONE, IN_FLIGHT, CrawlState
from sitemap_spider.sitemaps.entry import Alternate, News, RichEntry, SitemapEntry, Video

BASE = "https://www.example.com/"


def test_rich_entries_and_problems_survive_a_reopening(tmp_path: Path) -> None:
    path = tmp_path / "sitemap-state.sqlite"
    rich = RichEntry(
        BASE + "a",
        "2024-05-01",
        alternates=(Alternate("fr", BASE + "fr/a"),),
        images=(BASE + "a.png",),
        videos=(Video(BASE + "t.jpg", "T", "D", content_loc=BASE + "v.mp4", duration=3),),
        news=News("N", "en", "2024-05-01", "T"),
    )
    state = CrawlState(path)
    state.start(fresh=True)
    state.add_entry(rich)
    state.add_entry(SitemapEntry(BASE + "b"))
    state.add_entry(SitemapEntry(BASE + "c"), canonical=BASE + "b")  # listed at the end only if b is not
    state.add_problem("video", "missing_field", BASE + "c", "description")
    state.add_problem("video", "missing_field", BASE + "c", "description")  # a page fetched again
    state.add_problem("images", "over_limit", BASE + "d", "1100 images")
    state.close()

    again = CrawlState(path)
    assert list(again.entries()) == [
        (rich, None), (SitemapEntry(BASE + "b"), None), (SitemapEntry(BASE + "c"), BASE + "b")
    ]
    assert type(list(again.entries())[1][0]) is SitemapEntry
    assert list(again.problems()) == [
        ("video", "missing_field", BASE + "c", "description"),
        ("images", "over_limit", BASE + "d", "1100 images"),
    ]
    assert again.problem_counts() == {"sitemap/video/missing_field": 1, "sitemap/images/over_limit": 1}
    again.close()


def test_a_state_file_of_an_earlier_version_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "sitemap-state.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE entries (loc TEXT PRIMARY KEY, lastmod TEXT, changefreq TEXT, priority REAL, content_digest TEXT)"
        )
        db.execute("INSERT INTO entries VALUES (?, '2024-05-01', NULL, NULL, NULL)", (BASE + "old",))
    db.close()
    state = CrawlState(path)
    assert list(state.entries()) == [(SitemapEntry(BASE + "old", "2024-05-01"), None)]
    state.add_entry(RichEntry(BASE + "new", images=(BASE + "n.png",)), canonical=BASE + "old")
    # loc order
    assert next(iter(state.entries())) == (RichEntry(BASE + "new", images=(BASE + "n.png",)), BASE + "old")
    state.close()


def test_a_done_mark_is_committed_with_the_commit_after_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a SIGKILL loses: the done marks of the last two commit intervals, fetched again on resume
    (tests/test_resumable.py times it in a real crawl)."""
    clock = [0.0]
    monkeypatch.setattr(state_module, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    path = tmp_path / "sitemap-state.sqlite"
    state = CrawlState(path)
    state.start(fresh=True)
    for n in range(3):
        state.add_request(f"{n}".encode(), 0, f"request {n}".encode())
    ids = [request_id for request_id, _ in state.take(3)]

    def on_disk() -> list[int]:
        with closing(sqlite3.connect(path)) as db:
            return [int(row[0]) for row in db.execute("SELECT state FROM requests ORDER BY id")]

    state.done(ids[0])  # before the interval is over: no commit
    clock[0] = COMMIT_INTERVAL
    state.done(ids[1])  # a commit, without the marks: Scrapy queues the callbacks' requests later
    assert on_disk() == [IN_FLIGHT] * 3
    clock[0] = 2 * COMMIT_INTERVAL
    state.done(ids[2])  # the next commit: the marks of the interval before
    assert on_disk() == [DONE, DONE, IN_FLIGHT]

    state._db.close()  # killed: what is not committed is lost
    resumed = CrawlState(path)
    resumed.start(fresh=False)
    assert resumed.resumed and resumed.take(3) == [(ids[2], b"request 2")]
    resumed.close()

"""The JOBDIR crawl state (sitemap_spider/modes/state.py): rich entries and extension problems
survive a reopening, and a state file of an earlier version gains the extensions column."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sitemap_spider.modes.state import CrawlState
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
    state.add_problem("video", "missing_field", BASE + "c", "description")
    state.add_problem("video", "missing_field", BASE + "c", "description")  # a page fetched again
    state.add_problem("images", "over_limit", BASE + "d", "1100 images")
    state.close()

    again = CrawlState(path)
    assert list(again.entries()) == [rich, SitemapEntry(BASE + "b")]
    assert type(list(again.entries())[1]) is SitemapEntry
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
    assert list(state.entries()) == [SitemapEntry(BASE + "old", "2024-05-01")]
    state.add_entry(RichEntry(BASE + "new", images=(BASE + "n.png",)))
    assert next(iter(state.entries())) == RichEntry(BASE + "new", images=(BASE + "n.png",))  # loc order
    state.close()

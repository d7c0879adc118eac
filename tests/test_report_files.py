"""report/files.py: a report is whole or absent, and what a killed writer left is removed.

The crawl's own files (the report's spool, a killed crawl's litter) are tested end to end in
tests/test_sigterm.py.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from sitemap_spider.crawl.report import CrawlReport
from sitemap_spider.report.files import remove_stale, replacing, stale_partial


def test_a_report_appears_whole_and_leaves_no_partial_file(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text("the previous report")
    with replacing(path) as out:
        out.write("{")
        assert path.read_text() == "the previous report"
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == [".report.json.partial"]
        out.write("}")
    assert path.read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_report_that_fails_half_way_leaves_the_previous_one_and_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text("the previous report")
    with pytest.raises(OSError), replacing(path) as out:
        out.write("{")
        raise OSError("No space left on device")
    assert path.read_text() == "the previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_only_our_own_names_older_than_the_run_are_removed(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    stale, fresh = tmp_path / ".report.json.partial", tmp_path / ".other.json.partial"
    for name in (stale, fresh, tmp_path / "report.json.partial", tmp_path / ".report.json.partial.keep"):
        name.write_text("{")
    os.utime(stale, (time.time() - 60, time.time() - 60))
    os.utime(fresh, (time.time() - 60, time.time() - 60))
    started = time.time() - 10
    assert remove_stale(tmp_path, stale_partial(path), started) == [stale]
    # Written since the run started: another crawl writing the same report right now.
    (tmp_path / ".report.json.partial").write_text("{")
    assert remove_stale(tmp_path, stale_partial(path), started) == []
    assert remove_stale(tmp_path / "missing", re.compile(".*"), started) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".other.json.partial", ".report.json.partial", ".report.json.partial.keep", "report.json.partial",
    ]  # fmt: skip


def test_the_exclusion_spool_has_no_name_and_an_old_named_one_is_removed(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    old_spool = tmp_path / ".report.json.k2x_9qzr.jl"  # what earlier releases' killed crawls left
    old_spool.write_text("")
    os.utime(old_spool, (time.time() - 60, time.time() - 60))
    report = CrawlReport(MemoryStatsCollector(get_crawler()), path)
    report.exclude("https://example.com/a", "robots")
    try:
        assert list(tmp_path.iterdir()) == []
    finally:
        report.close()

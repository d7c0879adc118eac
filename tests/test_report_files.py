"""report/files.py: a report is whole or absent; the report's spool has no name.

A stopped crawl's files are tested end to end in tests/test_sigterm.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from sitemap_spider.crawl.report import CrawlReport
from sitemap_spider.report.files import replacing


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


def test_the_exclusion_spool_has_no_name(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    report = CrawlReport(MemoryStatsCollector(get_crawler()), path)
    report.exclude("https://example.com/a", "robots")
    try:
        assert list(tmp_path.iterdir()) == []
    finally:
        report.close()

from __future__ import annotations

from scrapy.settings import Settings
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from sitemap_spider.crawl.counting import CountingStatsCollector
from sitemap_spider.crawl.start_up import configure_settings


def _apply(collector: MemoryStatsCollector) -> dict[str, object]:
    collector.inc_value("a")
    collector.inc_value("a", 2)
    collector.inc_value("b", 1, start=10)
    collector.max_value("m", 3)
    collector.max_value("m", 1)
    collector.max_value("m", 7)
    collector.min_value("n", 5)
    collector.min_value("n", 2)
    collector.min_value("n", 9)
    collector.set_value("s", "x")
    assert collector.get_value("missing", "default") == "default"
    return dict(collector.get_stats())


def test_counts_as_scrapy_counts() -> None:
    crawler = get_crawler()
    ours = CountingStatsCollector(crawler)
    assert _apply(ours) == _apply(MemoryStatsCollector(crawler))
    assert ours.get_stats() == {"a": 3, "b": 11, "m": 7, "n": 2, "s": "x"}
    ours.inc_value("a", spider=None)  # Scrapy's deprecated argument is still taken, and ignored
    ours.max_value("m", 8, spider=None)
    assert ours.get_value("a") == 4
    assert ours.get_value("m") == 8


def test_the_sitemap_crawl_counts_with_it_unless_the_project_chooses() -> None:
    settings = Settings()
    configure_settings(settings)
    assert settings["STATS_CLASS"] == "sitemap_spider.crawl.counting.CountingStatsCollector"
    own = Settings({"STATS_CLASS": "scrapy.statscollectors.MemoryStatsCollector"}, priority="project")
    configure_settings(own)
    assert own["STATS_CLASS"] == "scrapy.statscollectors.MemoryStatsCollector"

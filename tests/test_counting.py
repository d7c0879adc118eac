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


# Where Scrapy's collector takes its deprecated ``spider`` argument (its index among the
# positional ones). CountingStatsCollector no longer warns of it, so pyproject's
# "error::DeprecationWarning:sitemap_spider.*" no longer catches a call of ours that passes it.
_SPIDER_INDEX = {
    "get_value": 2, "set_value": 2, "inc_value": 3, "max_value": 2, "min_value": 2,
    "get_stats": 0, "set_stats": 1, "clear_stats": 0,
}


def test_the_package_passes_no_spider_to_its_stats() -> None:
    import ast
    from pathlib import Path

    import sitemap_spider

    found = []
    for path in Path(sitemap_spider.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            index = _SPIDER_INDEX.get(node.func.attr)
            if index is None or "stats" not in ast.unparse(node.func.value):
                continue
            if len(node.args) > index or any(k.arg == "spider" for k in node.keywords):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert not found

"""A Scrapy extension for tests/test_modes.py: what the crawl mode held when the crawl closed.

Named with ``-s EXTENSIONS={"tests.mode_probe.ModeProbe": 0}`` and ``-s MODE_PROBE=path``;
it connects to spider_closed before the pipeline does, so it sees the mode before its end.
:class:`OneProcessChooser` is a project's own ``SITEMAP_MODE_CHOOSER``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler

from sitemap_spider.config import CrawlTarget, SitemapConfig
from sitemap_spider.modes import CrawlMode, SettingsChooser


class ModeProbe:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.path = Path(crawler.settings["MODE_PROBE"])
        crawler.signals.connect(self.closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> ModeProbe:
        return cls(crawler)

    def closed(self, spider: Spider) -> None:
        mode = spider.crawl_mode  # type: ignore[attr-defined]
        state = getattr(mode, "state", None)
        facts = {
            "mode": type(mode).__name__,
            "scheduler": type(self.crawler.engine._slot.scheduler).__name__,
            "stored_entries": None if state is None else sum(1 for _ in state.entries()),
            "stored_exclusions": None if state is None else sum(state.exclusion_counts().values()),
            # A collecting crawl (SITEMAP_PUBLISH=False): the URLs it kept, each once.
            "collected": sorted({e.loc for e in mode.entries}) if type(mode).__name__ == "CollectingMode" else None,
            "spider_middlewares": sorted(str(name) for name in self.crawler.settings.getdict("SPIDER_MIDDLEWARES")),
            "download_handlers": dict(self.crawler.settings.getwithbase("DOWNLOAD_HANDLERS")),
            # Whether the process imported Playwright (tests/test_render.py: not on a static site).
            "playwright_modules": sorted(m for m in sys.modules if m.split(".")[0] in ("playwright", "scrapy_playwright")),
        }
        # The helper of a two-process crawl writes beside the leader.
        path = self.path if type(mode).__name__ != "Helper" else self.path.with_suffix(".helper.json")
        path.write_text(json.dumps(facts))


class OneProcessChooser(SettingsChooser):
    """The settings' scheduler and checks, and a crawl in this one process whatever SITEMAP_WORKERS says."""

    def for_crawler(
        self, crawler: Crawler, config: SitemapConfig, target: CrawlTarget, spider_kwargs: dict[str, Any]
    ) -> CrawlMode:
        mode = CrawlMode(crawler, config, target.base_url(config), target.site.to_crawl)
        origin = target.site.crawl_origin
        mode.use_history(config.history.file_for(origin), origin)
        return mode

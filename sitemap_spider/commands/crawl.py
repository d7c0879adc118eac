"""``scrapy crawl``, with the sitemap spider's start-up checks first and an honest exit code.

Scrapy's own command exits 0 whenever the crawl started. Here, for a spider
that has ``check_start_up`` (the sitemap spider), bad settings or arguments
stop the command before any request (exit 2), and a crawl that published
nothing exits 1.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from sitemap_spider import stats as keys
from sitemap_spider.config import ConfigError

if TYPE_CHECKING:
    import argparse

logger = logging.getLogger(__name__)


class Command(ScrapyCrawlCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            super().run(args, opts)
            return
        assert self.crawler_process and self.settings is not None
        spider_cls = self.crawler_process.spider_loader.load(args[0])
        check = getattr(spider_cls, "check_start_up", None)
        if check is None:
            super().run(args, opts)
            return
        try:
            settings = self.settings.copy()
            spider_cls.update_settings(settings)
            check(settings, opts.spargs)
        except ConfigError as exc:
            # Logged as well: Scrapyd keeps a job's log file, not its standard error.
            logger.error("%s", exc)
            print(f"error: {exc}", file=sys.stderr)
            self.exitcode = 2
            return
        # Pass the name, not a Crawler: Scrapy merges the process settings into a
        # Crawler given to crawl() again, over what the spider set for itself.
        self.crawler_process.crawl(args[0], **opts.spargs)
        crawler = next(iter(self.crawler_process.crawlers))
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        elif crawler.stats.get_value(keys.SHARED_PUBLISHER) is not None:
            pass  # a worker of a shared crawl that left publishing to another one
        elif crawler.stats.get_value(keys.COLLECTED) is not None:
            pass  # SITEMAP_PUBLISH=False: a finished crawl that was not to publish
        elif crawler.stats.get_value(keys.URLS) is None:
            why = crawler.stats.get_value(keys.NOT_PUBLISHED) or "the crawl failed"
            print(f"error: no sitemap published: {why}", file=sys.stderr)
            self.exitcode = 1

"""``scrapy crawl``, with the sitemap spider's start-up checks first and an honest exit code.

Scrapy's own command exits 0 whenever the crawl started. Here, for a spider
that has ``check_start_up`` (the sitemap spider), bad settings or arguments
stop the command before any request (exit 2), and a crawl that published
nothing exits 1.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.settings import SETTINGS_PRIORITIES

from sitemap_spider import stats as keys
from sitemap_spider.config import ConfigError
from sitemap_spider.exiting import skip_exit_collection

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

#: Scrapy's loggers of what it set up and its closing stats dump, quiet unless a log level is asked
#: for: a first crawl's terminal shows the status line and the summary, as a sitemap tool's should.
_SET_UP_LOGGERS = (
    "scrapy.utils.log",  # the Scrapy and library versions
    "scrapy.addons",
    "scrapy.middleware",  # the enabled extensions, middlewares and pipelines
    "scrapy.crawler",  # the overridden settings
    "scrapy.extensions.telnet",
    "scrapy.extensions.logstats",  # "Crawled 0 pages": the progress line says more
    "scrapy.statscollectors",  # the stats dump; the summary and SITEMAP_REPORT carry them
)


def quiet_by_default(settings: BaseSettings) -> bool:
    """Log at INFO, without Scrapy's set-up lists and stats dump, unless a log level was asked for.

    Scrapy's DEBUG default prints two lines a page ("Crawled (200)", "Scraped from" with the
    entry): most of a crawl's output. ``-L DEBUG``, ``-s LOG_LEVEL=...`` or the project's
    settings.py bring Scrapy's output back whole, and so does a ``LOG_FILE`` (Scrapyd's job log).
    """
    if (settings.getpriority("LOG_LEVEL") or 0) > SETTINGS_PRIORITIES["default"] or settings.get("LOG_FILE"):
        return False  # a level asked for, or a log file (Scrapyd's job logs) that nobody reads live
    settings.set("LOG_LEVEL", "INFO", priority="default")
    quiet_loggers(_SET_UP_LOGGERS)
    return True


def quiet_loggers(names: Iterable[str]) -> None:
    """Keep only the warnings and errors of the loggers ``names``."""
    for name in names:
        # A filter, not a level: Scrapy's logging set-up (dictConfig) resets its loggers' levels.
        logging.getLogger(name).addFilter(_warnings_only)


def quieted_loggers() -> tuple[str, ...]:
    """The set-up loggers quiet_by_default quieted in this process: the second crawling process,
    a new interpreter, quiets them too (modes/workers/spawn.py)."""
    return tuple(name for name in _SET_UP_LOGGERS if _warnings_only in logging.getLogger(name).filters)


def _warnings_only(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING


class Command(ScrapyCrawlCommand):
    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        # Before the crawler process exists: it logs its versions as it starts.
        quiet_by_default(self.settings)

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
        skip_exit_collection()  # the crawl is over: about 0.4 s less before the process ends
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

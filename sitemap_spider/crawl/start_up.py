"""The sitemap spider's start-up: the settings it brings, the checks before any request, its crawl state.

:class:`~sitemap_spider.crawl.spider.SitemapSpider`'s ``update_settings``,
``check_start_up`` and ``from_crawler`` call these; the spider module keeps to
finding pages and judging them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.downloadermiddlewares.offsite import OffsiteMiddleware
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware

from sitemap_spider.crawl import middlewares
from sitemap_spider.render.browser import INSTALL_HINT, Browser, find_browser
from sitemap_spider.config import ConfigError, CrawlTarget, SitemapConfig, apply_defaults
from sitemap_spider.modes.shared import SharedCrawl, SharedScheduler, check_reachable
from sitemap_spider.pipeline import SitemapPipeline
from sitemap_spider.modes.schedulers import SpillScheduler, StateScheduler
from sitemap_spider.modes.state import CrawlState

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

# Library middleware -> the subclass that also records why a URL is not listed.
_REPLACED_MIDDLEWARES = {
    OffsiteMiddleware: middlewares.SiteScopeMiddleware,
    RobotsTxtMiddleware: middlewares.RecordingRobotsTxtMiddleware,
    RedirectMiddleware: middlewares.RecordingRedirectMiddleware,
    MetaRefreshMiddleware: middlewares.RecordingMetaRefreshMiddleware,
}


def configure_settings(settings: BaseSettings) -> None:
    """The spider's defaults, its middlewares and pipeline, and the scheduler its kind of crawl needs."""
    apply_defaults(settings)
    base = settings.getdict("DOWNLOADER_MIDDLEWARES_BASE")
    for library_cls, ours in _REPLACED_MIDDLEWARES.items():
        order = next(v for k, v in base.items() if k.endswith(library_cls.__name__))
        settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", library_cls, None)
        settings.setdefault_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", ours, order)
    settings.setdefault_in_component_priority_dict("ITEM_PIPELINES", SitemapPipeline, 300)
    settings.setdefault_in_component_priority_dict("SPIDER_MIDDLEWARES", middlewares.CrawlStateMiddleware, 10)
    redis_url = settings.get("SITEMAP_REDIS_URL")
    if redis_url:
        # One crawl, several workers: scrapy-redis's frontier and seen set, kept after
        # each worker closes (the others go on), with leases (see distributed.py).
        settings.set("SCHEDULER", SharedScheduler, priority="addon")
        settings.set("DUPEFILTER_CLASS", "scrapy_redis.dupefilter.RFPDupeFilter", priority="addon")
        settings.set("SCHEDULER_PERSIST", True, priority="addon")
        settings.set("REDIS_URL", redis_url, priority="addon")
    elif settings.get("JOBDIR"):
        # Scrapy's JOBDIR queue is lost on SIGKILL while its seen set is not: keep both in SQLite.
        settings.set("SCHEDULER", StateScheduler, priority="addon")
    else:
        # The queue of a big site does not fit in memory (see SpillScheduler).
        settings.set("SCHEDULER", SpillScheduler, priority="addon")


def check_start_up(
    settings: BaseSettings, arguments: dict[str, Any]
) -> tuple[SitemapConfig, CrawlTarget, Browser | None]:
    """Validate settings and arguments and find the browser; :class:`ConfigError` names the culprit."""
    config = SitemapConfig.from_settings(settings)
    target = CrawlTarget.from_arguments(arguments, config.strip_params)
    if "_job" in arguments:
        # Scrapyd (it always passes _job) runs jobs in its own working directory.
        for name in ("SITEMAP_OUTPUT_DIR", "SITEMAP_REPORT"):
            value = settings.get(name)
            if value is not None and not Path(str(value)).is_absolute():
                raise ConfigError(name, f"must be an absolute path under Scrapyd, got {value!r}")
    if config.shared is not None:
        problem = check_reachable(config.shared.redis_url)
        if problem is not None:
            raise ConfigError("SITEMAP_REDIS_URL", f"cannot reach Redis: {problem}")
    mode = target.render_mode(config)
    browser = None if mode == "never" else find_browser(config.browser_path)
    if browser is None and config.browser_path and mode != "never":
        raise ConfigError("SITEMAP_BROWSER_PATH", f"no executable browser at {config.browser_path!r}")
    if browser is None and mode == "always":
        raise ConfigError("render", f"render=always needs a browser: {INSTALL_HINT}")
    return config, target, browser


def open_crawl_state(
    crawler: Crawler, config: SitemapConfig, target: CrawlTarget
) -> CrawlState | SharedCrawl | None:
    """The crawl's persistent state: a shared crawl in Redis, the JOBDIR SQLite state, or none."""
    if config.shared is not None and crawler.settings.get("SCHEDULER") is SharedScheduler:
        shared = SharedCrawl(crawler, config.shared, target)
        shared.join()
        shared.connect()
        return shared
    jobdir = crawler.settings.get("JOBDIR")
    if not jobdir or crawler.settings.get("SCHEDULER") is not StateScheduler:
        return None
    state = CrawlState(Path(jobdir) / "sitemap-state.sqlite")
    state.start(fresh=state.start_urls() not in (None, list(target.start_urls)))
    state.set_start_urls(list(target.start_urls))
    return state

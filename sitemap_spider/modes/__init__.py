"""How the crawl is run, chosen once: one process (which may start a second one), resumable, or shared.

``JOBDIR`` makes a crawl resumable, ``SITEMAP_REDIS_URL`` shares it between workers, and
``SITEMAP_WORKERS`` lets one process start a second; :class:`SettingsChooser` (the default
``SITEMAP_MODE_CHOOSER``) alone reads them to pick the mode. The crawl sees it through
:class:`sitemap_spider.crawl.mode.Mode`; everything else asks
:class:`~sitemap_spider.modes.base.CrawlMode`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sitemap_spider.config import ConfigError
from sitemap_spider.config_parsing import read_bool
from sitemap_spider.crawl.mode import ModeChooser
from sitemap_spider.modes import workers
from sitemap_spider.modes.base import CrawlMode
from sitemap_spider.modes.collecting import CollectingMode
from sitemap_spider.modes.resumable import DurableMode, Resumable

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from sitemap_spider.config import CrawlTarget, SitemapConfig

__all__ = ["CollectingMode", "CrawlMode", "SettingsChooser", "mode_class", "mode_of"]


def mode_class(settings: BaseSettings) -> type[CrawlMode]:
    """The mode the settings ask for; a one-process crawl decides later whether it starts a second process."""
    if not _publishes(settings):
        return CollectingMode
    if settings.get("SITEMAP_REDIS_URL"):
        return _shared_mode()
    if settings.get("JOBDIR"):
        return Resumable
    return CrawlMode


def _shared_mode() -> type[CrawlMode]:
    """The shared mode, imported when asked for: scrapy-redis is optional (the ``redis`` extra)."""
    try:
        from sitemap_spider.modes.shared import SharedMode
    except ModuleNotFoundError as exc:
        if exc.name not in ("redis", "scrapy_redis"):
            raise
        hint = f"needs scrapy-redis: pip install 'sitemap_spider[redis]' ({exc})"
        raise ConfigError("SITEMAP_REDIS_URL", hint) from exc
    return SharedMode


def _publishes(settings: BaseSettings) -> bool:
    """SITEMAP_PUBLISH read as SitemapConfig reads it (on / off too), True when unset."""
    if settings.get("SITEMAP_PUBLISH") is None:
        return True
    try:
        return read_bool(settings, "SITEMAP_PUBLISH")
    except ConfigError:
        return True  # SitemapConfig names the bad value at start-up


class SettingsChooser(ModeChooser):
    """This package's modes, picked by SITEMAP_PUBLISH, SITEMAP_REDIS_URL, JOBDIR and SITEMAP_WORKERS."""

    def configure(self, settings: BaseSettings) -> None:
        """The scheduler and middlewares of the mode the settings ask for."""
        mode_class(settings).configure(settings)

    def check(self, settings: BaseSettings, config: SitemapConfig) -> None:
        """Before any request: :class:`~sitemap_spider.config.ConfigError` when the mode cannot run."""
        cls = mode_class(settings)
        if cls is CollectingMode and settings.get("JOBDIR"):
            # What a collecting crawl keeps lives in memory: there would be nothing to resume.
            raise ConfigError("SITEMAP_PUBLISH", "False (collecting) cannot be combined with JOBDIR")
        cls.check(config)

    def for_crawler(
        self, crawler: Crawler, config: SitemapConfig, target: CrawlTarget, spider_kwargs: dict[str, Any]
    ) -> CrawlMode:
        """The mode of this crawl's process."""
        mode = _mode_for(crawler, config, target, spider_kwargs)
        origin = target.site.crawl_origin
        mode.use_history(config.history.file_for(origin), origin)
        return mode


def _mode_for(
    crawler: Crawler, config: SitemapConfig, target: CrawlTarget, spider_kwargs: dict[str, Any]
) -> CrawlMode:
    cls = mode_class(crawler.settings)
    # A project that names its own SCHEDULER gets a crawl without the mode's state.
    if issubclass(cls, DurableMode) and crawler.settings.get("SCHEDULER") is cls.scheduler:
        return cls(crawler, config, target)
    if cls is CollectingMode:
        return CollectingMode(crawler, config, target.base_url(config), target.site.to_crawl)
    two = workers.for_crawler(crawler, config, target, spider_kwargs)
    if two is not None:
        return two
    return CrawlMode(crawler, config, target.base_url(config), target.site.to_crawl)


def mode_of(spider: Any) -> CrawlMode | None:
    """The crawl mode of a spider that has one (the sitemap spider)."""
    mode = getattr(spider, "crawl_mode", None)
    return mode if isinstance(mode, CrawlMode) else None

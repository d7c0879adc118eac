"""The sitemap spider's start-up: the settings it brings and the checks before any request.

:class:`~sitemap_spider.crawl.spider.SitemapSpider`'s ``update_settings`` and
``check_start_up`` call these; the spider module keeps to finding pages and judging them.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from scrapy.downloadermiddlewares.offsite import OffsiteMiddleware
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.extensions.throttle import AutoThrottle

from sitemap_spider.addon import Addon
from sitemap_spider.config import ConfigError, CrawlTarget, SitemapConfig, apply_crawl_defaults
from sitemap_spider.config_parsing import check_output_dir
from sitemap_spider.crawl import middlewares, retries, robots, throttle
from sitemap_spider.crawl.mode import mode_chooser
from sitemap_spider.history.location import HistoryLocation, old_default_file
from sitemap_spider.history.moving import move_old_history
from sitemap_spider.render.browser import INSTALL_HINT, Browser, find_browser, rendering_installed

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

# Library middleware -> the subclass that also records why a URL is not listed.
_REPLACED_MIDDLEWARES = {
    OffsiteMiddleware: middlewares.SiteScopeMiddleware,
    RobotsTxtMiddleware: robots.RecordingRobotsTxtMiddleware,
    RedirectMiddleware: middlewares.RecordingRedirectMiddleware,
    MetaRefreshMiddleware: middlewares.RecordingMetaRefreshMiddleware,
    HttpCompressionMiddleware: middlewares.RecordingHttpCompressionMiddleware,
    RetryMiddleware: retries.BackoffRetryMiddleware,
}


def configure_settings(settings: BaseSettings) -> None:
    """The add-on, the crawl's Scrapy defaults, its middlewares, and what its mode needs."""
    Addon().update_settings(settings)
    apply_crawl_defaults(settings)
    base = settings.getdict("DOWNLOADER_MIDDLEWARES_BASE")
    for library_cls, ours in _REPLACED_MIDDLEWARES.items():
        order = next(v for k, v in base.items() if k.endswith(library_cls.__name__))
        settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", library_cls, None)
        settings.setdefault_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", ours, order)
    # AutoThrottle, pacing on 304s too: a recrawl is mostly 304s.
    order = next(v for k, v in settings.getdict("EXTENSIONS_BASE").items() if k.endswith(AutoThrottle.__name__))
    settings.set_in_component_priority_dict("EXTENSIONS", AutoThrottle, None)
    settings.setdefault_in_component_priority_dict("EXTENSIONS", throttle.PacingAutoThrottle, order)
    _leave_out_unused(settings)
    _stoppable_downloads(settings)
    mode_chooser(settings).configure(settings)


_REMOTE_CONTROL = "scrapy.extensions.remote_control.RemoteControl"
# Spider middlewares a sitemap crawl has no use for, each a layer every request of every page's
# output passes through: Scrapy's URL length limit (the spider leaves out longer URLs than a
# <loc> may hold, 2,048 characters, and says why), and the check that a spider does not copy
# response.meta into its requests (a help while writing a spider; this one sets each request's
# meta itself). The Referer middleware stays: Scrapy's redirect middlewares look for it and warn
# at start-up without it.
_URL_LENGTH = "scrapy.spidermiddlewares.urllength.UrlLengthMiddleware"
_UNUSED_SPIDER_MIDDLEWARES = (_URL_LENGTH, "scrapy.spidermiddlewares.metacopy.MetaCopyDetectionMiddleware")


def _leave_out_unused(settings: BaseSettings) -> None:
    """Take out of Scrapy's base lists the components this crawl never uses.

    Scrapy imports every extension its settings name, those that are off included (it loads
    each key to merge EXTENSIONS with EXTENSIONS_BASE), and its remote control imports aiohttp:
    with ``REMOTE_CONTROL_ENABLED`` off (the helper process always, tests and benchmarks), that
    was a quarter of a second of every start-up. A component the user names in their own
    setting stays, with their order, and so does the URL length limit when the user sets
    ``URLLENGTH_LIMIT`` (Scrapy's default leaves it at priority 0).
    """
    if not settings.getbool("REMOTE_CONTROL_ENABLED"):
        _leave_out_of_base(settings, "EXTENSIONS", (_REMOTE_CONTROL,))
    user_limit = (settings.getpriority("URLLENGTH_LIMIT") or 0) > 0
    unused = tuple(path for path in _UNUSED_SPIDER_MIDDLEWARES if not (user_limit and path == _URL_LENGTH))
    _leave_out_of_base(settings, "SPIDER_MIDDLEWARES", unused)


_HTTP11 = "scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler"
_STOPPABLE = "sitemap_spider.crawl.stop_downloads.StoppableDownloadHandler"


def _stoppable_downloads(settings: BaseSettings) -> None:
    """http and https through Scrapy's handler that a stop lets go of (crawl/stop_downloads.py), in the base
    list: a project's own ``DOWNLOAD_HANDLERS`` for a scheme, and render=auto's, still win.

    Scrapy's HTTP/1.1 handler is imported here, on a short stack of imports: its TLS modules call
    inspect.stack() (Scrapy's create_deprecated_class), which scans every loaded module once for each
    import frame on the stack. Imported with crawl/stopping.py, as the spider's modules import it,
    that cost a crawl 290 million instructions more at start-up (bench/instructions.py, 100 pages:
    3.73 billion, then 4.03); imported by the handler's own module, loaded by Scrapy, 44,000 more
    steps of that scan than Scrapy's own handler; here, fewer than either.
    """
    import scrapy.core.downloader.handlers.http11  # noqa: F401
    base = settings.getdict("DOWNLOAD_HANDLERS_BASE")
    if any(base.get(scheme) == _HTTP11 for scheme in ("http", "https")):
        handlers = {scheme: _STOPPABLE if path == _HTTP11 else path for scheme, path in base.items()}
        settings.set("DOWNLOAD_HANDLERS_BASE", handlers, settings.getpriority("DOWNLOAD_HANDLERS_BASE") or 0)


def _leave_out_of_base(settings: BaseSettings, name: str, paths: tuple[str, ...]) -> None:
    named = {key if isinstance(key, str) else f"{key.__module__}.{key.__qualname__}"
             for key in settings.getdict(name)}
    base = settings.getdict(f"{name}_BASE")
    left = {key: order for key, order in base.items() if key not in paths or key in named}
    if len(left) < len(base):
        settings.set(f"{name}_BASE", left, settings.getpriority(f"{name}_BASE") or 0)


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
    scrapyd = "_job" in arguments
    if config.publish:  # a collecting crawl (scrapy audit's) writes no sitemap file
        check_output_dir(config.output_dir)
    problem = config.history.problem(target.site.crawl_origin, config.output_dir, scrapyd)
    if problem is not None:
        raise ConfigError("SITEMAP_HISTORY", problem)
    if not scrapyd:  # the old default was refused under Scrapyd: no file of it can be there
        _move_old_default_history(config.history, target.site.crawl_origin)
    mode_chooser(settings).check(settings, config)
    mode = target.render_mode(config)
    browser = None if mode == "never" else find_browser(config.browser_path)
    if browser is None and config.browser_path and mode != "never":
        if not rendering_installed():
            raise ConfigError(
                "SITEMAP_BROWSER_PATH",
                f"names {config.browser_path!r}, but driving a browser needs scrapy-playwright, which is not "
                "installed: pip install 'sitemap_spider[render]' (or crawl with -a render=never)",
            )
        raise ConfigError("SITEMAP_BROWSER_PATH", f"no executable browser at {config.browser_path!r}")
    if browser is None and mode == "always":
        raise ConfigError("render", f"render=always needs a browser: {INSTALL_HINT}")
    return config, target, browser


def _move_old_default_history(history: HistoryLocation, origin: str) -> None:
    """Move the history of an earlier release's default place to the per-user one, once."""
    old = old_default_file(origin) if history.is_default else None
    new = history.file_for(origin)
    if old is None or new is None:
        return
    try:
        move_old_history(old, new)
    except (sqlite3.Error, OSError) as exc:
        # Crawling on with an empty history would re-date every page and keep none on a bad day.
        raise ConfigError(
            "SITEMAP_HISTORY", f"the history at {old} could not be moved to {new} ({exc}); name the file to use"
        ) from exc

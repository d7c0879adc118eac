"""Starting the helper process of a two-process crawl (see :mod:`sitemap_spider.modes.workers`).

Whether the site lets a second process speed the crawl up, the helper's
settings, the "spawn" start with a socket pair, the site's concurrency shared
between the two, and :func:`run_helper`, what the helper process runs.
"""

from __future__ import annotations

import logging
import multiprocessing
import pickle
import socket
from time import monotonic
from typing import TYPE_CHECKING, Any

from scrapy.extensions.throttle import AutoThrottle
from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings, Settings

from sitemap_spider import stats as keys
from sitemap_spider.crawl.mode import CRAWL_NOTES_SETTING
from sitemap_spider.crawl.politeness import Politeness
from sitemap_spider.exiting import skip_exit_collection

if TYPE_CHECKING:
    from collections.abc import Mapping
    from multiprocessing.process import BaseProcess

    from scrapy import Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

# The socket the helper process was given (set in the helper before its crawl starts).
_helper_socket: socket.socket | None = None


def helper_socket() -> socket.socket | None:
    """In the helper process, its end of the socket pair; None in any other process."""
    return _helper_socket


def why_paced(crawler: Crawler) -> str | None:
    """Why the site's pace, not the CPU, bounds this whole crawl, if it does (a delay for every request)."""
    stats = crawler.stats
    assert stats is not None
    if stats.get_value(keys.CRAWL_DELAY):
        return "robots.txt asks for a Crawl-delay"
    if crawler.settings.getfloat("DOWNLOAD_DELAY") > 0:
        return "DOWNLOAD_DELAY is set"
    return None


# A pause counts while its last failure is this recent (seconds; at least twice the pause, as a
# site still in trouble fails again at each probe, plus DOWNLOAD_TIMEOUT, as a probe that times out
# fails that much later): a host that failed and then got no request (a script's CDN, a dead host
# of the site) keeps a pause no good answer ends.
_RECENT_TROUBLE = 10.0


def slowed_down_now(crawler: Crawler, now: float | None = None) -> bool:
    """Whether a host of the crawl asked it to slow down (429, 503, an outage) lately, and has not
    answered well since.

    Each process keeps its own pause: two would send twice the pace the host asked for. The
    pause ends at the host's first good answer (crawl/politeness.py), and a site that was in
    trouble once is not paced for the rest of the crawl.
    """
    politeness = crawler.get_extension(Politeness)
    if politeness is None:
        return False
    now = monotonic() if now is None else now
    timeout = crawler.settings.getfloat("DOWNLOAD_TIMEOUT")
    for state in politeness.backoffs.values():
        if now - state.since < max(_RECENT_TROUBLE, 2 * state.seconds) + timeout:
            return True
    return False


def spawn_helper(
    crawler: Crawler, spider_kwargs: dict[str, Any], notes: Mapping[str, str]
) -> tuple[BaseProcess, socket.socket] | None:
    """Start the helper process: it and this process's end of their socket pair, or None if it failed.

    ``notes`` are the crawl's notes so far (Mode.crawl_note): the robots.txt this process read.
    """
    settings = crawler.settings
    # What differs from Scrapy's defaults, which the helper's own Settings() starts from: the
    # defaults' deprecated names, handed over, were warned about as if the user had set them. By
    # value too: the crawl command sets LOG_LEVEL=INFO at the default priority (commands/crawl.py).
    defaults = Settings()
    values = {
        name: value for name, value in _plain(settings).items()
        if (settings.getpriority(name) or 0) > SETTINGS_PRIORITIES["default"] or value != _default(defaults, name)
    }
    values.update(
        # Two processes share the site's concurrency cap and AutoThrottle's target.
        CONCURRENT_REQUESTS_PER_DOMAIN=max(1, settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") // 2),
        AUTOTHROTTLE_TARGET_CONCURRENCY=max(1.0, settings.getfloat("AUTOTHROTTLE_TARGET_CONCURRENCY") / 2),
        LOG_FORMAT="%(asctime)s [worker 2] [%(name)s] %(levelname)s: %(message)s",
        TELNETCONSOLE_ENABLED=False,
        REMOTE_CONTROL_ENABLED=False,
        SITEMAP_REPORT=None,
        **{CRAWL_NOTES_SETTING: dict(notes)},
    )
    from sitemap_spider.commands.crawl import quieted_loggers

    ours, theirs = socket.socketpair()
    context = multiprocessing.get_context("spawn")
    process = context.Process(
        target=run_helper,
        args=(crawler.spidercls, values, spider_kwargs, theirs, quieted_loggers()),
        name="sitemap-worker-2",
        daemon=True,
    )
    try:
        process.start()
    except (OSError, TypeError, AttributeError, pickle.PicklingError) as exc:  # a setting pickle refuses
        logger.warning("Crawling in one process: the second worker could not start (%s)", exc)
        ours.close()
        return None
    finally:
        theirs.close()
    return process, ours


def share_concurrency(crawler: Crawler) -> None:
    """Keep this process's half of the site's concurrency cap and of AutoThrottle's target."""
    per_domain = crawler.settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN")
    per_domain = max(1, per_domain - per_domain // 2)  # the helper has the other half
    downloader = getattr(crawler.engine, "downloader", None)
    if downloader is None:
        return
    downloader.domain_concurrency = per_domain
    for slot in downloader.slots.values():
        slot.concurrency = min(slot.concurrency, per_domain)
    # AutoThrottle or the crawl's PacingAutoThrottle, a subclass (matching the class name alone
    # missed the latter: the leader kept the whole target).
    throttle = crawler.get_extension(AutoThrottle)
    if throttle is not None:
        throttle.target_concurrency = max(1.0, throttle.target_concurrency / 2)


def _default(defaults: Settings, name: str) -> Any:
    # Read from its attribute: Settings.get of a deprecated name warns.
    attribute = defaults.attributes.get(name)
    value = None if attribute is None else attribute.value
    return _plain(value) if isinstance(value, BaseSettings) else value


def _plain(settings: BaseSettings) -> dict[Any, Any]:
    """Settings as plain dicts, component keys left as they are (copy_to_dict makes them strings)."""
    return {
        name: _plain(value) if isinstance(value, BaseSettings) else value
        for name, value in settings.items()
    }


def run_helper(
    spider_cls: type[Spider],
    values: dict[str, Any],
    spider_kwargs: dict[str, Any],
    sock: socket.socket,
    quiet: tuple[str, ...] = (),
) -> None:
    """The helper process: the same crawl, fed with URLs by the leader. ``quiet``: the loggers
    the leader keeps to warnings (Scrapy's set-up lists and stats dump, commands/crawl.py)."""
    from scrapy.crawler import CrawlerProcess

    from sitemap_spider.commands.crawl import quiet_loggers
    from sitemap_spider.config_parsing import warned_elsewhere

    quiet_loggers(quiet)
    warned_elsewhere(values)  # the leader warned of the SITEMAP_* settings that are none of ours

    global _helper_socket
    _helper_socket = sock
    settings = Settings()
    settings.setdict(values, priority="cmdline")
    process = CrawlerProcess(settings)
    process.crawl(spider_cls, **spider_kwargs)
    process.start()
    skip_exit_collection()

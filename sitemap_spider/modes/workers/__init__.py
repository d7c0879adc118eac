"""A second crawling process for the machine's other core, started by the one ``scrapy crawl``.

Scrapy runs a crawl on one core, and its fixed cost per request (the engine,
the scheduler, the event loop) is most of a crawl's CPU once links met before
cost nothing (BENCHMARKS.md). When the queue shows the site is big
(``SITEMAP_WORKERS_AFTER`` requests waiting), the crawl (the *leader*) starts
one more Scrapy process (the *helper*) with the same settings, from Python's
``multiprocessing`` "spawn" start method, joined to it by a socket pair.

From then on each URL belongs to the process its hash names: a link, a
canonical URL or a redirect target that belongs to the other process is handed
over instead of requested, and each process keeps its own queue and duplicate
filter for its half. The per-site concurrency cap is split between the two.
When the helper's queue runs dry while the leader's is long, the leader lends
it the front of its queue (leader.py ``_lend``).
The helper sends its entries and exclusions to the leader, which publishes the
one set and writes the one report.

The end: a process is idle when Scrapy finds nothing queued, downloading or
being handled. The helper tells the leader each time it becomes idle, with how
many links it has received and sent. The leader ends the crawl when it is idle
itself, the helper's last idle message counts every link the leader sent it,
and the leader has taken in every link that message says the helper sent
(messages on one socket arrive in order, so nothing can be in flight). If the
helper dies, the leader crawls what it had handed over itself. The failing
pages have one tail for the crawl (modes/held.py): when either process runs its
last pass, it tells the other, whose failing pages have had their time too.

The pieces: spawn.py starts the helper; handover.py says which process owns a
URL and hands it over (the crawl mode both sides share); leader.py and helper.py
are each side's messages and part in the end; channel.py carries them. This
module decides which part, if any, this process plays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sitemap_spider.modes.workers.channel import owner
from sitemap_spider.modes.workers.handover import Workers
from sitemap_spider.modes.workers.helper import Helper
from sitemap_spider.modes.workers.leader import Leader
from sitemap_spider.modes.workers.spawn import helper_socket, run_helper

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from sitemap_spider.config import CrawlTarget, SitemapConfig

__all__ = ["Helper", "Leader", "Workers", "for_crawler", "owner", "run_helper"]

# Settings that keep a crawl in one process: their state lives in one place.
_ONE_PROCESS_SETTINGS = ("JOBDIR", "SITEMAP_REDIS_URL")


def for_crawler(
    crawler: Crawler, config: SitemapConfig, target: CrawlTarget, spider_kwargs: dict[str, Any]
) -> Workers | None:
    """The crawl's part in a two-process crawl, or None when it runs in one process."""
    sock = helper_socket()
    if sock is not None:
        return Helper(crawler, config, target, sock)
    settings = crawler.settings
    if config.workers < 2 or "_job" in spider_kwargs:
        return None  # Scrapyd counts and limits its jobs' processes itself
    if any(settings.get(name) for name in _ONE_PROCESS_SETTINGS) or settings.getdict("FEEDS"):
        return None  # state or output that lives in this process
    return Leader(crawler, config, target, dict(spider_kwargs))

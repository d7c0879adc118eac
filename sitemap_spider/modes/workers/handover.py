"""Which process of a two-process crawl fetches a URL, and handing URLs between them.

See :mod:`sitemap_spider.modes.workers` for the whole design; :class:`Workers` is
what the leader (leader.py) and the helper (helper.py) have in common: a crawl mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sitemap_spider import request_meta as meta
from sitemap_spider.crawl.politeness import SITE_ANSWERS, SITE_ANSWERS_ELSEWHERE
from sitemap_spider.modes.base import CrawlMode
from sitemap_spider.modes.engine import wake_engine
from sitemap_spider.modes.workers.channel import owner

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from sitemap_spider.config import CrawlTarget, SitemapConfig
    from sitemap_spider.crawl.mode import MakeRequest
    from sitemap_spider.modes.workers.channel import Channel


class Workers(CrawlMode):
    """What both processes share: handing URLs over and taking them in."""

    index = 0
    count = 1

    def __init__(self, crawler: Crawler, config: SitemapConfig, target: CrawlTarget) -> None:
        super().__init__(crawler, config, target.base_url(config), target.site.to_crawl)
        self.channel: Channel | None = None
        self.sent = 0  # links handed to the other process
        self.received = 0  # links taken in from it
        self._make_request: MakeRequest | None = None
        self.met: set[str] | None = None  # the spider's LinkFinder's set of links met
        # One tail for the crawl: when one process's failing pages have had their time, so have the other's.
        self.held.on_time_up.append(self._tell_time_up)
        # One site, one pace: when it answers again after a pause in one process, the other goes on too.
        crawler.signals.connect(self._tell_answers, signal=SITE_ANSWERS)

    def _tell_answers(self, key: str, sent: float) -> None:
        if self.active:
            assert self.channel is not None
            self.channel.send({"t": "answers", "k": key, "s": sent})

    def set_crawl_note(self, name: str, text: str) -> None:
        # The other process applies it if its own try at robots.txt fails, and the leader keeps the
        # newest copy either read for the next crawl (its history commit reads the note).
        super().set_crawl_note(name, text)
        if self.active:
            assert self.channel is not None
            self.channel.send({"t": "note", "n": name, "x": text})

    def _from_elsewhere(self, message: dict[str, Any]) -> None:
        """What the other process shares: a crawl note, or the site answering again."""
        if message["t"] == "note":
            self.crawl_notes[message["n"]] = message["x"]
            return
        # The two processes share the host's monotonic clock: "sent" compares with this one's pauses.
        self.crawler.signals.send_catch_log(SITE_ANSWERS_ELSEWHERE, key=message["k"], sent=message["s"])

    def _tell_time_up(self) -> None:
        if self.active:
            assert self.channel is not None
            self.channel.send({"t": "time_up"})

    @property
    def active(self) -> bool:
        return self.channel is not None and not self.channel.closed

    def hand_over(self, url: str, depth: int, skip: str | None = None) -> bool:
        """Send ``url`` to the process that owns it; False if it is this process's to fetch."""
        if not self.active or owner(url, self.count) == self.index:
            return False
        assert self.channel is not None
        self.channel.send({"t": "links", "l": [[url, depth, skip]]})
        self.sent += 1
        return True

    def attach(self, make_request: MakeRequest, met: set[str]) -> None:
        """How the spider turns a URL handed over into a request, and the links it has met."""
        self._make_request = make_request
        self.met = met

    def _take_links(self, links: list[list[Any]], priority: int | None = None, *, again: bool = False) -> None:
        """Request the links handed over, by depth; ``priority``: ahead of that (pages to render);
        ``again``: past this process's duplicate filter (URLs it queued and lent, see leader.py)."""
        assert self._make_request is not None and self.crawler.engine is not None
        depth_priority = self.crawler.settings.getint("DEPTH_PRIORITY")
        for url, depth, skip in links:
            self.received += 1
            request = self._make_request(url, skip)
            request.meta["depth"] = depth
            request.priority = -depth * depth_priority if priority is None else priority
            if again:
                request.meta[meta.PAST_FILTER] = True
            self.crawler.engine.crawl(request)

    def _wake(self) -> None:
        # News from the other process counts now, not at the engine's next heartbeat.
        wake_engine(self.crawler.engine)

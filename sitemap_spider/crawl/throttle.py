"""AutoThrottle, pacing on a 304 as on a 200 and on the site's latency rather than one page's.

Scrapy's AutoThrottle never lowers its delay on an answer that is not a 200, so a recrawl
answered with 304s stayed at ``AUTOTHROTTLE_START_DELAY`` for its whole length. And it
paces on each answer's own latency, jumping at once to a slow one's: one page that takes
3 s set the delay between requests to 0.75 s, and it took the next fast answers a second
and a half to bring it back. On a site where a few pages are slow (a search page, a big
archive), that was most of the crawl's time: the fault benchmark's 5,000 pages, 2% of them
answering once after 3 s, took 207 s against 22.5 s without faults.
crawl/start_up.py puts :class:`PacingAutoThrottle` in AutoThrottle's place.
"""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

from scrapy.extensions.throttle import AutoThrottle

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.http import Response

#: How many of a site's last answers pace it: their median latency is the site's.
LATENCY_WINDOW = 9


class PacingAutoThrottle(AutoThrottle):
    """Scrapy's AutoThrottle, pacing on a 304 as on a 200, and on the median latency of the
    site's last :data:`LATENCY_WINDOW` answers instead of each answer's own.

    AutoThrottle keeps its delay on any other status, since small error pages would
    otherwise speed the crawl up against a failing server. A 304 is no error: it is the
    server's whole answer to a conditional request, and a recrawl is mostly 304s.

    A slow page is that page's, as a failing one is (crawl/site_health.py): the site slows
    down when most of its answers do. A site that turns slow moves the median within
    five answers, and AutoThrottle's rule stands: the delay rises at once to the target
    the (median) latency asks for, and falls halfway towards it on a good answer.
    """

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        # A downloader slot takes no weak reference: keyed by id, with the slot held so that
        # the id is not reused (a crawl has a slot per site, a handful at most).
        self._latencies: dict[int, tuple[Slot, deque[float]]] = {}

    def _adjust_delay(self, slot: Slot, latency: float, response: Response) -> None:
        known = self._latencies.get(id(slot))
        if known is None:
            known = self._latencies[id(slot)] = (slot, deque(maxlen=LATENCY_WINDOW))
        recent = known[1]
        recent.append(latency)
        # AutoThrottle reads nothing of the response but its status; Response.replace would copy
        # the whole response once per 304 (a fifth of a millisecond, on every page of a recrawl).
        super()._adjust_delay(slot, median_latency(recent), _ANSWERED_200 if response.status == 304 else response)


def median_latency(latencies: deque[float]) -> float:
    """The middle of the latencies (the lower middle of an even count: a slow answer moves it last)."""
    ordered = sorted(latencies)
    return ordered[(len(ordered) - 1) // 2]


#: What PacingAutoThrottle shows AutoThrottle for a 304: an answer with the status of a 200.
_ANSWERED_200 = cast("Response", SimpleNamespace(status=200))

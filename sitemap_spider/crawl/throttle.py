"""AutoThrottle, pacing on a 304 as on a 200.

Scrapy's AutoThrottle never lowers its delay on an answer that is not a 200, so a recrawl
answered with 304s stayed at ``AUTOTHROTTLE_START_DELAY`` for its whole length.
crawl/start_up.py puts :class:`PacingAutoThrottle` in AutoThrottle's place.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

from scrapy.extensions.throttle import AutoThrottle

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot
    from scrapy.http import Response


class PacingAutoThrottle(AutoThrottle):
    """Scrapy's AutoThrottle, pacing on a 304 as on a 200.

    AutoThrottle keeps its delay on any other status, since small error pages would
    otherwise speed the crawl up against a failing server. A 304 is no error: it is the
    server's whole answer to a conditional request, and a recrawl is mostly 304s.
    """

    def _adjust_delay(self, slot: Slot, latency: float, response: Response) -> None:
        # AutoThrottle reads nothing of the response but its status; Response.replace would copy
        # the whole response once per 304 (a fifth of a millisecond, on every page of a recrawl).
        super()._adjust_delay(slot, latency, _ANSWERED_200 if response.status == 304 else response)


#: What PacingAutoThrottle shows AutoThrottle for a 304: an answer with the status of a 200.
_ANSWERED_200 = cast("Response", SimpleNamespace(status=200))

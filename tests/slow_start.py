"""A Scrapy extension that makes a crawl's start-up slow (``-s SLOW_START_SECONDS=...``), as a loaded
machine does: Scrapy builds its components without yielding to the reactor, so nothing else of
the crawl (a heartbeat) runs meanwhile."""

from __future__ import annotations

import time
from typing import Any


class SlowStart:
    @classmethod
    def from_crawler(cls, crawler: Any) -> SlowStart:
        time.sleep(crawler.settings.getfloat("SLOW_START_SECONDS"))
        return cls()

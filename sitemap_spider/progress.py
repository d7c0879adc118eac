"""The crawl's progress: one live status line on a terminal, a periodic log line everywhere.

A Scrapy extension the sitemap spider installs (default_settings.EXTENSIONS). The numbers
are the whole crawl's, every process's: the crawl mode, which alone knows how the crawl is
run, adds them up (:meth:`sitemap_spider.modes.base.CrawlMode.progress`). On a terminal,
tqdm draws the line in place, and log records are written above it (the line is cleared,
the record written, the line drawn again); at the end the line is removed. Without a
terminal (Scrapyd, cron, CI, a pipe) nothing but the log line is written: no control
characters. ``SITEMAP_PROGRESS``: ``auto`` (this), ``log`` (the log line only), ``off``.
"""

from __future__ import annotations

import logging
import sys
import time
from collections import deque
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TextIO

from scrapy import signals
from scrapy.exceptions import NotConfigured
from tqdm import tqdm
from twisted.internet import task

from sitemap_spider.config import SitemapConfig
from sitemap_spider.modes import mode_of

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

    from sitemap_spider.modes.base import CrawlMode, Progress

logger = logging.getLogger(__name__)

#: Seconds between two updates of the live line.
LIVE_EVERY = 1.0
# The pages/s of the live line is measured over about this many seconds.
_RATE_WINDOW = 10.0


class CrawlProgress:
    """Scrapy extension: the live status line on a terminal, and a log line every ``LOGSTATS_INTERVAL``."""

    def __init__(self, crawler: Crawler, setting: str, log_every: float, stream: TextIO) -> None:
        self.crawler = crawler
        self.setting = setting
        self.log_every = log_every
        self.stream = stream
        self.mode: CrawlMode | None = None
        self.bar: tqdm[Any] | None = None
        self._started = time.monotonic()
        self._samples: deque[tuple[float, int]] = deque()
        self._loops: list[task.LoopingCall] = []
        self._handlers: list[_AboveTheLine] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        setting = SitemapConfig.from_settings(crawler.settings).progress
        if setting == "off":
            raise NotConfigured("SITEMAP_PROGRESS is off")
        progress = cls(crawler, setting, crawler.settings.getfloat("LOGSTATS_INTERVAL"), sys.stderr)
        crawler.signals.connect(progress.start, signal=signals.spider_opened)
        crawler.signals.connect(progress.stop, signal=signals.spider_closed)
        return progress

    def live(self) -> bool:
        """Whether the line is drawn in place: only on a terminal, and only if the log is on."""
        return (
            self.setting == "auto"
            and self.stream.isatty()
            and self.crawler.settings.getbool("LOG_ENABLED")
        )

    def start(self) -> None:
        self.mode = mode_of(self.crawler.spider)
        if self.mode is None or not self.mode.shows_progress():
            return  # another spider, or the second process of a crawl (its leader shows the whole)
        self._started = time.monotonic()
        if self.live():
            self._open_bar()
            self._every(LIVE_EVERY, self._draw)
        if self.log_every > 0:
            self._every(self.log_every, self._log)

    def _every(self, seconds: float, call: Any) -> None:
        loop = task.LoopingCall(call)
        loop.start(seconds, now=False)
        self._loops.append(loop)

    def _open_bar(self) -> None:
        # bar_format "{desc}": tqdm keeps to the terminal's width, redraws in place and
        # clears the line on close (leave=False); no bar, no rate of its own.
        self.bar = tqdm(file=self.stream, bar_format="{desc}", leave=False, dynamic_ncols=True)
        root = logging.getLogger()
        for handler in list(root.handlers):
            if isinstance(handler, logging.StreamHandler) and handler.stream in (sys.stderr, sys.stdout):
                above = _AboveTheLine(handler, self.stream)
                root.removeHandler(handler)
                root.addHandler(above)
                self._handlers.append(above)

    def now(self) -> tuple[Progress, float, timedelta]:
        """The crawl's progress, its pages per second lately, and the time since this process started."""
        assert self.mode is not None
        progress = self.mode.progress()
        moment = time.monotonic()
        self._samples.append((moment, progress.fetched))
        while len(self._samples) > 2 and moment - self._samples[1][0] >= _RATE_WINDOW:
            self._samples.popleft()
        first_at, first_fetched = self._samples[0]
        rate = (progress.fetched - first_fetched) / (moment - first_at) if moment > first_at else 0.0
        return progress, rate, timedelta(seconds=round(moment - self._started))

    def _draw(self) -> None:
        progress, rate, elapsed = self.now()
        assert self.bar is not None
        self.bar.set_description_str(
            f"fetched {progress.fetched:,} \u00b7 queued {progress.queued:,} \u00b7 listed {progress.listed:,}"
            f" \u00b7 excluded {progress.excluded:,} \u00b7 rendered {progress.rendered:,}"
            f" \u00b7 {rate:,.1f} pages/s \u00b7 {elapsed}"
        )

    def _log(self, final: bool = False) -> None:
        progress, rate, elapsed = self.now()
        if final and elapsed.total_seconds() > 0:
            # The recent rate is 0 once the crawl has ended: the last line gives the whole crawl's.
            rate = progress.fetched / elapsed.total_seconds()
        logger.info(
            "Progress%s: %s pages fetched, %s queued, %s listed, %s excluded, %s rendered; %s pages/s; %s elapsed",
            (" at the end" if final else "") + (" (this worker's part)" if progress.part else ""), f"{progress.fetched:,}", f"{progress.queued:,}", f"{progress.listed:,}", f"{progress.excluded:,}",
            f"{progress.rendered:,}", f"{rate:,.1f}", elapsed,
        )

    def stop(self) -> None:
        if not self._loops:
            return  # not shown in this process
        for loop in self._loops:
            if loop.running:
                loop.stop()
        self._loops.clear()
        if self.bar is not None:
            self.bar.close()  # leave=False: the line is removed
            self.bar = None
        root = logging.getLogger()
        for above in self._handlers:
            root.removeHandler(above)
            root.addHandler(above.inner)
        self._handlers.clear()
        self._log(final=True)


class _AboveTheLine(logging.Handler):
    """Writes each record through the console handler it replaces, above the live line."""

    def __init__(self, inner: logging.StreamHandler[Any], stream: TextIO) -> None:
        super().__init__()  # level NOTSET: the inner handler keeps its own level and filters
        self.inner = inner
        self.stream = stream

    def handle(self, record: logging.LogRecord) -> bool:
        if record.levelno < self.inner.level or not self.inner.filter(record):
            return False  # not written: the line is left alone
        with tqdm.external_write_mode(file=self.stream):
            return bool(self.inner.handle(record))

    def emit(self, record: logging.LogRecord) -> None:
        self.inner.emit(record)

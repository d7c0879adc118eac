"""How a crawl is run: the interface every crawl mode has, and the one-process crawl that is its base.

A mode is chosen once, at start-up, by the settings (:class:`sitemap_spider.modes.SettingsChooser`).
The spider and its middlewares see it as :class:`sitemap_spider.crawl.mode.Mode`, which it
implements; the pipeline, the report and the progress line talk to it through the methods
below. None of them asks which mode it is. A mode owns:

- the scheduler (and spider middlewares) it needs: :meth:`configure`, on the settings;
- where entries and exclusions go: :meth:`take`, :meth:`exclusion_store`;
- routing of URLs that belong to another process: :meth:`hand_over`;
- the end of the crawl: :meth:`end` publishes, leaves it to another worker, or keeps
  the state for a resume;
- the whole crawl's progress, every process's: :meth:`progress`.
- the crawl history: where this crawl's page records wait (:meth:`observe`) until the
  set is published, and their commit right after it.
- requests held back (retries waiting out a back-off, the last pass): :attr:`held`, which
  its idle logic asks (:meth:`HeldRequests.keep_open`) before it lets the crawl end.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from twisted.internet import task

from sitemap_spider import request_meta as meta
from sitemap_spider import stats as keys
from sitemap_spider.crawl import report_facts as facts
from sitemap_spider.crawl.mode import CRAWL_NOTES_SETTING
from sitemap_spider.crawl.report import CrawlReport
from sitemap_spider.history.store import HistoryStore, Staging
from sitemap_spider.modes.held import HeldRequests
from sitemap_spider.modes.schedulers import SpillScheduler
from sitemap_spider.rich_config import RichConfig, noted_kinds
from sitemap_spider.crawl_end import SetPublisher
from sitemap_spider.sitemaps import InvalidEntryError

if TYPE_CHECKING:
    from pathlib import Path

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings

    from sitemap_spider.config import SitemapConfig
    from sitemap_spider.crawl.mode import MakeRequest
    from sitemap_spider.crawl.report import ExclusionStore
    from sitemap_spider.history.record import PageRecord
    from sitemap_spider.sitemaps import SitemapEntry

logger = logging.getLogger(__name__)

# Seconds between two moves of the report's counts to the mode's store (shared with the
# other processes of the crawl, and read by the progress line).
_COUNTS_EVERY = 1.0


@dataclass(frozen=True)
class Progress:
    """How far the whole crawl is: pages fetched, requests queued, URLs listed, excluded, rendered."""

    fetched: int
    queued: int
    listed: int
    excluded: int
    rendered: int
    #: The counts are this process's part only (a Redis worker that left the set to another).
    part: bool = False


class CrawlMode:
    """One process, its entries in a sorted set on disk, published when the crawl finishes."""

    #: The queue of a big site does not fit in memory (see SpillScheduler).
    scheduler: type = SpillScheduler

    def __init__(
        self, crawler: Crawler, config: SitemapConfig, base_url: str | None, to_crawl: Callable[[str], str] = str
    ) -> None:
        self.crawler = crawler
        self.config = config
        self.publisher = SetPublisher(crawler, config, base_url, to_crawl)
        self.report: CrawlReport | None = None
        self._counts_loop: task.LoopingCall | None = None
        self.history: HistoryStore | None = None
        #: Notes for the next crawl, by name, committed with the history (crawl/mode.py's Mode):
        #: what render=auto learnt (render/known.py), the site's pace (crawl/throttle.py).
        self.history_notes: dict[str, Callable[[], str | None]] = {}
        #: The extension kinds this crawl reads, as the history notes them (the spider's Enricher.kinds).
        self.extension_kinds = config.rich.kinds()
        self._history_origin = ""
        self._staging: Staging | None = None
        # The report opens with the crawl: stats and the spider exist only then.
        crawler.signals.connect(self._open_report, signal=signals.spider_opened)
        crawler.signals.connect(self._page_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(self._stop_counts, signal=signals.spider_closed)
        # Idle, a process has all its counts in the store: a shared crawl ends only once every
        # worker was idle, so the report the last one writes misses none of them.
        crawler.signals.connect(self._move_counts, signal=signals.spider_idle)
        #: Retries waiting out a back-off, and pages kept for the last pass.
        self.held = HeldRequests(crawler, config.politeness.last_pass_delay)
        #: What this crawl noted for its own later parts (Mode.crawl_note); a second process gets them.
        self.crawl_notes: dict[str, str] = dict(crawler.settings.getdict(CRAWL_NOTES_SETTING))
        crawler.signals.connect(self._keep_open_for_held, signal=signals.spider_idle)

    @classmethod
    def configure(cls, settings: BaseSettings) -> None:
        """The Scrapy settings this mode needs, at add-on priority."""
        settings.set("SCHEDULER", cls.scheduler, priority="addon")

    @classmethod
    def check(cls, config: SitemapConfig) -> None:
        """Before any request: :class:`~sitemap_spider.config.ConfigError` when the mode cannot run."""

    # --- the start -----------------------------------------------------------------------
    def attach(self, make_request: MakeRequest, met: set[str]) -> None:
        """How the spider makes a request of a URL handed over, and the set of links it has met."""

    def queues_start_urls(self) -> bool:
        """Whether this process queues the start URLs."""
        return True

    def start_urls_queued(self) -> None:
        """The start URLs are in the queue."""

    # --- the crawl -------------------------------------------------------------------------
    def page_seen(self) -> None:
        """Called for each page the spider is given."""

    def hand_over(self, url: str, depth: int, skip: str | None = None) -> bool:
        """Send ``url`` to the process that fetches it; False when it is this process's."""
        return False

    def hand_over_render(self, url: str, depth: int) -> bool:
        """Send a page that needs the browser to the process that renders; False: render it here."""
        return False

    def request_done(self, request: Request | None) -> None:
        """Everything a request led to has been handed on (its entry, its links)."""

    def _keep_open_for_held(self) -> None:
        # Modes with their own idle logic (workers, shared) ask the same before deciding the end.
        if self.held.keep_open():
            raise DontCloseSpider

    def exclusion_store(self) -> ExclusionStore | None:
        """Where exclusions are kept besides the stats; None: a spool file beside the report."""
        return None

    def _open_report(self) -> None:
        self.report = CrawlReport(self.publisher.stats, self.config.report_path, self.exclusion_store())
        self.publisher.report = self.report
        # Made now, not with the mode: a LoopingCall imports the reactor, which a process started
        # from Python (the helper of a two-process crawl) installs only after making the spider.
        self._counts_loop = task.LoopingCall(self._move_counts)
        self._counts_loop.start(_COUNTS_EVERY, now=False)

    def _page_downloaded(self, response: Response, request: Request) -> None:
        """Count a page for the report: its status and depth, or a render."""
        report = self.report
        if report is None:
            return
        if request.meta.get(meta.RENDER) is not None:
            report.count(facts.RENDERED)  # the page itself was counted when it was fetched
        elif not request.meta.get(meta.RESOURCE) and not request.meta.get("dont_obey_robotstxt"):
            # Pages only: not the scripts read to decide on rendering, nor robots.txt.
            report.count_page(response.status, request.meta.get("depth", 0))

    def _move_counts(self) -> None:
        if self.report is not None:
            self.report.flush()

    def _stop_counts(self) -> None:
        if self._counts_loop is not None and self._counts_loop.running:
            self._counts_loop.stop()

    # --- progress --------------------------------------------------------------------------
    def shows_progress(self) -> bool:
        """Whether this process shows the crawl's progress (a helper process does not)."""
        return True

    def queued(self) -> int:
        """Requests waiting to be fetched, in the whole crawl."""
        scheduler = getattr(self.crawler.engine, "scheduler", None)
        return len(scheduler) if scheduler is not None else 0

    def progress(self, counts: Mapping[str, int] | None = None) -> Progress:
        """The whole crawl's progress: counts from the report's store (or ``counts``), plus the queue."""
        if counts is None:
            counts = self.report.counts() if self.report is not None else {}
        return Progress(
            fetched=counts.get(facts.FETCHED, 0),
            queued=self.queued(),
            listed=counts.get(facts.LISTED, 0),
            excluded=counts.get(facts.EXCLUDED, 0),
            rendered=counts.get(facts.RENDERED, 0),
        )

    # --- entries ---------------------------------------------------------------------------
    def take(self, entry: SitemapEntry, canonical: str | None = None) -> bool:
        """Take one entry for the set; False (recorded as invalid) when it cannot be listed.

        ``canonical``: the other URL its page names as canonical; whether it is listed is decided
        when the set is complete (crawl/canonicals.py), and it is counted then.
        """
        try:
            self.keep(entry, canonical)
        except InvalidEntryError as exc:
            self.publisher.invalid(entry.loc, exc)
            return False
        if canonical is None:
            self.publisher.stats.inc_value(keys.ENTRIES)
            if self.report is not None:
                self.report.count(facts.LISTED)
        return True

    def keep(self, entry: SitemapEntry, canonical: str | None = None) -> None:
        """Where a valid entry goes; :class:`InvalidEntryError` when it is not one."""
        self.publisher.add(entry, canonical)

    def store_entry(self, entry: SitemapEntry, canonical: str | None = None) -> None:
        """Store an entry taken outside a response's output (a durable mode stores it now)."""

    def take_candidate(self, entry: SitemapEntry, canonical: str) -> None:
        """A page that names ``canonical`` as its canonical URL: listed at the end if that URL is not."""
        if self.take(entry, canonical):
            self.store_entry(entry, canonical)

    # --- the crawl history -----------------------------------------------------------------
    def use_history(self, path: Path | None, origin: str) -> None:
        """Read the history at ``path`` (None: none) and commit this crawl's records when the set is published."""
        if path is None:
            return
        self.history = self.open_history(path, origin)
        self._history_origin = origin
        self.publisher.after_publish = self._commit_history

    def open_history(self, path: Path, origin: str) -> HistoryStore:
        """The history this crawl reads and commits to: the file (a shared crawl's is in Redis too)."""
        return HistoryStore(path)

    def observe(self, record: PageRecord) -> None:
        """Keep a listed page's record until the set is published."""
        if self._staging is None:
            self._staging = Staging()
        self._staging.add(record)

    def observed(self) -> Iterator[PageRecord]:
        """This crawl's records."""
        return iter(()) if self._staging is None else self._staging.records()

    def keep_previous(self, entry: SitemapEntry, canonical: str | None, record: PageRecord) -> None:
        """List a page of the last set as it was (it failed now), with its record; ``canonical``: see take."""
        if self.take(entry, canonical):
            self.store_entry(entry, canonical)
        self.observe(record)

    def crawl_note(self, name: str) -> str | None:
        """What this crawl noted under ``name`` before this process (a durable mode's earlier run, the leader's)."""
        return self.crawl_notes.get(name)

    def set_crawl_note(self, name: str, text: str) -> None:
        """Note ``text`` for the rest of this crawl: a second process started later, a resumed run."""
        self.crawl_notes[name] = text

    def _commit_history(self) -> dict[str, Any]:
        """Right after the publish: this crawl's records become the history; the report lists kept pages."""
        assert self.history is not None
        kept: list[dict[str, Any]] = []

        def records() -> Iterator[PageRecord]:
            for record in self.observed():
                if record.outcome == "kept":
                    last_ok = datetime.fromtimestamp(record.last_ok, UTC).isoformat(timespec="seconds")
                    kept.append({"url": record.url, "status": record.status, "last_fetched_well": last_ok})
                yield record

        before = self.history.extension_kinds(self._history_origin, RichConfig.DEFAULT_KINDS)

        def kinds() -> str:
            # A page kept after failing keeps its old record: while one is listed, only the kinds
            # both crawls read (under the same settings) are known, and the next crawl that asks for
            # another fetches whole again.
            now = self.extension_kinds
            return "".join(kind for kind in noted_kinds(now) if kind in noted_kinds(before)) if kept else now

        written = self.history.commit(records(), self._history_origin, kinds, self.history_notes)
        stats = self.publisher.stats
        stats.set_value(keys.HISTORY_RECORDS, written)
        stats.set_value(keys.KEPT_TRANSIENT_ERROR, len(kept))
        logger.info("Crawl history %s: %s page(s), %s kept listed after failing", self.history.path, written, len(kept))
        return {"kept_urls": kept}

    # --- the end ---------------------------------------------------------------------------
    def end(self, reason: str) -> None:
        """The crawl closed: publish the set if it finished."""
        try:
            self.publisher.finish(reason)
        finally:
            self.close_history()

    def close_history(self) -> None:
        if self._staging is not None:
            self._staging.close()
            self._staging = None
        if self.history is not None:
            self.history.close()

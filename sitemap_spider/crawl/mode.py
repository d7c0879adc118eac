"""What the crawl needs from the way it is run, stated here so that the crawl never asks which way that is.

The spider, its middlewares and its retries see the mode of their process only through
:class:`Mode`: where exclusions are recorded (its report), where a retry waits
(:class:`RetryHolder`), which URLs another process fetches (:meth:`Mode.hand_over`), and
where a page's record waits for the publish. The modes themselves (one process,
resumable, two processes, shared through Redis) live in :mod:`sitemap_spider.modes`,
which implements these protocols; nothing in ``crawl/`` imports it.

Which mode a crawl runs in is chosen by the settings, as Scrapy chooses its scheduler:
``SITEMAP_MODE_CHOOSER`` names a :class:`ModeChooser`, loaded here at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from scrapy.utils.misc import load_object

from sitemap_spider.config import ConfigError

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from sitemap_spider.config import CrawlTarget, SitemapConfig
    from sitemap_spider.crawl.report import CrawlReport
    from sitemap_spider.history.record import PageRecord
    from sitemap_spider.history.store import HistoryStore
    from sitemap_spider.sitemaps import SitemapEntry

#: How the spider turns a URL another process handed over into a request: (url, skip reason).
MakeRequest = Callable[[str, "str | None"], "Request"]

#: The setting that names the mode chooser.
CHOOSER_SETTING = "SITEMAP_MODE_CHOOSER"
#: The setting a second process of the crawl is given the crawl's notes in (Mode.crawl_note).
CRAWL_NOTES_SETTING = "_SITEMAP_CRAWL_NOTES"


class RetryHolder(Protocol):
    """Where a page's retry waits out its back-off, and a page out of retries waits for the last pass."""

    #: When the site last gave an answer that was not a transient fault (monotonic), if it did.
    site_answered: float | None
    @property
    def hurry(self) -> bool:
        """The failing pages' time is up: their remaining tries go at the first retry's short pause."""
        ...

    def hold(self, request: Request, delay: float) -> None:
        """Send ``request`` to the engine ``delay`` seconds from now."""
        ...

    def hold_for_last_pass(self, request: Request) -> None:
        """Send ``request`` once more when the rest of the crawl is done."""
        ...


class Mode(Protocol):
    """The mode of this crawl's process, as the spider and its middlewares use it."""

    #: Notes for the next crawl, by name, each asked when the history is committed (HistoryStore.note):
    #: what render=auto learnt (render/known.py), the site's pace (crawl/throttle.py).
    history_notes: dict[str, Callable[[], str | None]]
    #: The extension kinds the crawl reads, noted with its records (RichConfig.kinds, Enricher.kinds).
    extension_kinds: str

    @property
    def report(self) -> CrawlReport | None:
        """The ledger of URLs not listed, where exclusions are recorded; None until the crawl has opened."""
        ...

    @property
    def history(self) -> HistoryStore | None:
        """The last published crawl's records, or None without a history."""
        ...

    @property
    def held(self) -> RetryHolder:
        """Retries and last-pass pages waiting."""
        ...

    def attach(self, make_request: MakeRequest, met: set[str]) -> None:
        """How the spider makes a request of a URL handed over, and the set of links it has met."""
        ...

    def queues_start_urls(self) -> bool:
        """Whether this process queues the start URLs."""
        ...

    def start_urls_queued(self) -> None:
        """The start URLs are in the queue."""
        ...

    def page_seen(self) -> None:
        """Called for each page the spider is given."""
        ...

    def hand_over(self, url: str, depth: int, skip: str | None = None) -> bool:
        """Send ``url`` to the process that fetches it; False when it is this process's."""
        ...

    def hand_over_render(self, url: str, depth: int) -> bool:
        """Send a page that needs the browser to the process that renders; False: render it here."""
        ...

    def request_done(self, request: Request | None) -> None:
        """Everything a request led to has been handed on (its entry, its links)."""
        ...

    def observe(self, record: PageRecord) -> None:
        """Keep a page's record until the set is published."""
        ...

    def keep_previous(self, entry: SitemapEntry, canonical: str | None, record: PageRecord) -> None:
        """List a page of the last set as it was (it failed now), with its record; ``canonical``: the
        other URL it names as canonical when it waits on it (see :meth:`take_candidate`)."""
        ...

    def take_candidate(self, entry: SitemapEntry, canonical: str) -> None:
        """Keep the entry of a page that names ``canonical`` (another URL, crawled form) as its
        canonical URL until the set is complete: listed then if that URL is not (crawl/canonicals.py)."""
        ...

    def crawl_note(self, name: str) -> str | None:
        """What this same crawl noted under ``name`` before this process: the run that a ``JOBDIR``
        resume continues, or the process that started a second one. None if nothing."""
        ...

    def set_crawl_note(self, name: str, text: str) -> None:
        """Note ``text`` under ``name`` for the rest of this crawl (see :meth:`crawl_note`)."""
        ...


class ModeChooser(Protocol):
    """Chooses the mode the settings ask for, and makes it: what ``SITEMAP_MODE_CHOOSER`` names."""

    def configure(self, settings: BaseSettings) -> None:
        """The scheduler and middlewares of the chosen mode, at add-on priority."""
        ...

    def check(self, settings: BaseSettings, config: SitemapConfig) -> None:
        """Before any request: :class:`~sitemap_spider.config.ConfigError` when the mode cannot run."""
        ...

    def for_crawler(
        self, crawler: Crawler, config: SitemapConfig, target: CrawlTarget, spider_kwargs: dict[str, Any]
    ) -> Mode:
        """The mode of this crawl's process."""
        ...


def mode_chooser(settings: BaseSettings) -> ModeChooser:
    """A chooser of the class ``SITEMAP_MODE_CHOOSER`` names; :class:`ConfigError` when it names none."""
    path = settings.get(CHOOSER_SETTING)
    try:
        chooser = load_object(path)()
    except (ImportError, NameError, ValueError, TypeError) as exc:
        raise ConfigError(CHOOSER_SETTING, f"must name a class that can be made: {path!r} ({exc})") from exc
    needed = ("configure", "check", "for_crawler")
    missing = [name for name in needed if not callable(getattr(chooser, name, None))]
    if missing:
        raise ConfigError(CHOOSER_SETTING, f"{path!r} has no {', '.join(missing)}")
    result: ModeChooser = chooser
    return result

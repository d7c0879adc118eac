"""A crawl that publishes nothing: its entries, exclusions and the URLs its pages lead to are kept.

``SITEMAP_PUBLISH = False`` chooses it. ``scrapy audit`` runs it in its own process and reads
what it kept when the crawl has ended; everything stays in memory (a few hundred bytes per URL),
so it is one process only: no second worker, no ``JOBDIR``, no Redis. Its end writes the report
(``SITEMAP_REPORT``) as every crawl's does, unless the report was held for an audit's findings.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from scrapy import signals

from sitemap_spider import stats as keys
from sitemap_spider.config import ConfigError
from sitemap_spider.crawl.canonicals import KIND, UNLISTABLE
from sitemap_spider.modes.base import CrawlMode
from sitemap_spider.sitemaps import normalize_url

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    from sitemap_spider.config import SitemapConfig
    from sitemap_spider.crawl.report import ExclusionStore
    from sitemap_spider.sitemaps import SitemapEntry

logger = logging.getLogger(__name__)

#: Why the report of a collecting crawl lists no sitemap file.
NOT_PUBLISHED = "SITEMAP_PUBLISH is False: nothing is published"


class CollectingMode(CrawlMode):
    """One process; entries and exclusions kept in memory; the end publishes nothing."""

    def __init__(
        self,
        crawler: Crawler,
        config: SitemapConfig,
        base_url: str | None,
        to_crawl: Callable[[str], str] = str,
    ) -> None:
        super().__init__(crawler, config, base_url, to_crawl)
        self.entries: list[SitemapEntry] = []
        self.excluded: list[tuple[str, str, str | None]] = []
        #: Every URL a page led to (a link, a canonical URL, a redirect of such a request).
        self.linked: set[str] = set()
        #: Every URL asked for, with the depth it was first asked at (0: a start URL): how the
        #: audit tells an endless series (a calendar) the crawl walked into DEPTH_LIMIT.
        self.depths: dict[str, int] = {}
        self._counts: Counter[str] = Counter()
        self.end_reason: str | None = None
        self._report_held = False
        self.crawler.signals.connect(self._scheduled, signal=signals.request_scheduled)

    @classmethod
    def check(cls, config: SitemapConfig) -> None:
        if config.shared is not None:
            raise ConfigError(
                "SITEMAP_PUBLISH", "False (collecting) cannot be combined with SITEMAP_REDIS_URL"
            )

    def _scheduled(self, request: Request) -> None:
        url = normalize_url(request.url) or request.url
        # Start requests have no depth; what a page's callback yields has 1 or more.
        depth: int = request.meta.get("depth", 0)
        self.depths.setdefault(url, depth)
        if depth >= 1:
            self.linked.add(url)

    def keep(self, entry: SitemapEntry, canonical: str | None = None) -> None:
        # Pages that name another URL as canonical wait in the publisher's candidates, as in a
        # publishing crawl, and are decided the same way at the end.
        candidates = self.publisher.candidates
        if canonical is not None:
            candidates.add(entry, canonical)
            return
        candidates.listed(entry.loc)
        self.entries.append(entry)
        if self.report is not None:
            self.report.listed.add(entry.loc, entry.lastmod)  # the report's lastmod ages and sections

    def _settle_candidates(self) -> None:
        """The pages that name another URL as canonical, decided as a publishing crawl decides them."""
        assert self.report is not None
        for entry, canonical, why in self.publisher.candidates.settle(self.report.redirects):
            if why is None:
                self.report.exclude(self.publisher.to_crawl(entry.loc), "canonical", f"names {canonical}")
            else:
                self.take(entry)
                self.report.not_written(KIND, UNLISTABLE, entry.loc, f"{canonical} {why}")

    def exclusion_store(self) -> ExclusionStore | None:
        return self

    def add_exclusion(self, url: str, reason: str, detail: str | None) -> None:
        self.excluded.append((url, reason, detail))

    def exclusions(self) -> Iterator[tuple[str, str, str | None]]:
        return iter(self.excluded)

    def exclusion_counts(self) -> dict[str, int]:
        return dict(Counter(reason for _, reason, _ in self.excluded))

    def add_counts(self, counts: Mapping[str, int]) -> None:
        self._counts.update(counts)

    def counts(self) -> dict[str, int]:
        return dict(self._counts)

    def end(self, reason: str) -> None:
        self.end_reason = reason
        if reason == "finished":
            self._settle_candidates()
            self.publisher.stats.set_value(keys.COLLECTED, len(self.entries))
        self.publisher.candidates.close()
        logger.info(
            "Crawl %s: %d page(s) listable, %d URL(s) left out; nothing published (SITEMAP_PUBLISH is False)",
            reason,
            len(self.entries),
            len(self.excluded),
        )
        if not self._report_held:
            self.write_report()

    def hold_report(self) -> None:
        """Leave the report to a later :meth:`write_report` (``scrapy audit`` adds its findings)."""
        self._report_held = True

    def write_report(
        self, findings: Iterable[Mapping[str, object]] | None = None, extra: Mapping[str, Any] | None = None
    ) -> None:
        """Write ``SITEMAP_REPORT`` (if set) once the crawl has ended, with an audit's ``findings``
        and ``extra`` summary fields (the audit's counts)."""
        if self.report is None:
            return
        summary: dict[str, Any] = {
            "finish_reason": self.end_reason,
            "site": self.publisher.base_url,
            # What a publishing crawl would have listed (a page can be kept twice: counted once).
            "urls": len({entry.loc for entry in self.entries}),
            "files": 0,
            "not_published": NOT_PUBLISHED,
            **(extra or {}),
        }
        self.report.write(summary, findings=findings)
        self.report.close()

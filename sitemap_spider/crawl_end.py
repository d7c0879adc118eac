"""The end of a crawl, whatever its mode: the set is published only if the crawl finished.

A crawl that was interrupted, failed or listed no page publishes nothing, so the set
published before stays in place. Either way the report is written.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitemap_spider import stats as keys
from sitemap_spider.crawl import report_facts as facts
from sitemap_spider.crawl.canonicals import KIND, UNLISTABLE, Candidates
from sitemap_spider.indexnow import Submission, submit_in_thread
from sitemap_spider.publish_summary import log_published, report_fields
from sitemap_spider.sitemaps import (
    KINDS,
    EmptySitemapError,
    InvalidEntryError,
    SetChanges,
    ShrinkError,
    SitemapError,
    SitemapSetBuilder,
    base_url_of,
    check_entry,
    describe_write_error,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from sitemap_spider.config import SitemapConfig
    from sitemap_spider.crawl.report import CrawlReport
    from sitemap_spider.sitemaps import SitemapEntry

logger = logging.getLogger(__name__)

#: Entries that could not be listed logged one by one at WARNING level; past this, at DEBUG
#: level only (each is counted, and the closing summary gives the count).
MAX_LOGGED_INVALID = 20


class SetPublisher:
    """Collects the entries of a crawl into a sitemap set and publishes it at the end.

    ``base_url`` None: the origin of the first entry (a project's own spider through the
    add-on); ``to_crawl`` maps a listed URL back to the URL that was crawled, for the report.
    """

    def __init__(
        self,
        crawler: Crawler,
        config: SitemapConfig,
        base_url: str | None,
        to_crawl: Callable[[str], str] = str,
    ) -> None:
        self.crawler = crawler
        self.config = config
        self.base_url = base_url
        self.to_crawl = to_crawl
        self.report: CrawlReport | None = None  # set when the crawl opens
        self.builder: SitemapSetBuilder | None = None
        #: Why entries could not be stored (a full disk): nothing is published.
        self.failed: str | None = None
        #: Whether that failure stops the crawl: not a project's own crawl, through the add-on.
        self.stops_crawl = True
        #: Called right after a publish (the crawl history's commit); returns fields for the report.
        self.after_publish: Callable[[], dict[str, Any]] | None = None
        self.invalid_count = 0
        #: Pages that name another URL as canonical, decided once the set is complete.
        self.candidates = Candidates(to_crawl, config.strip_params)

    @property
    def stats(self) -> StatsCollector:
        """The crawl's stats (they exist once the crawl has started)."""
        assert self.crawler.stats is not None
        return self.crawler.stats

    def _new_builder(self, first: SitemapEntry) -> SitemapSetBuilder:
        base_url = self.base_url
        if base_url is None:
            # Checked first: an invalid first entry is reported as such, and names no site.
            check_entry(first)
            base_url = base_url_of(first.loc)
            logger.info("SITEMAP_BASE_URL not set: using %s, the origin of the first entry", base_url)
        return SitemapSetBuilder(self.config.output_options(base_url), self._hreflang)

    def add(self, entry: SitemapEntry, canonical: str | None = None) -> None:
        """Add an entry to the set (``canonical``: a candidate, see crawl/canonicals.py);
        :class:`InvalidEntryError` when it cannot be one."""
        if self.failed is not None:
            self.stats.inc_value(keys.NOT_STORED)
            return  # nothing will be published
        try:
            if canonical is not None:
                check_entry(entry)
                self.candidates.add(entry, canonical)  # spooled in the temporary folder
                return
            if self.builder is None:
                self.builder = self._new_builder(entry)  # makes SITEMAP_OUTPUT_DIR
            self.builder.add(entry)
        except OSError as exc:
            # A set missing the entries of a run that could not be written would be published
            # as if whole: publish nothing.
            where = self.config.output_dir if canonical is None else Path(tempfile.gettempdir())
            self._storage_failed(describe_write_error(exc, where))
            return
        self.candidates.listed(entry.loc)
        if self.report is not None:
            self.report.listed.add(entry.loc, entry.lastmod)  # the report's lastmod ages and sections

    def _storage_failed(self, why: str) -> None:
        """Say once why entries cannot be stored; stop the crawl when it serves the sitemap alone."""
        self.failed = why
        self.stats.set_value(keys.STORAGE_FAILED, why)
        self.stats.inc_value(keys.NOT_STORED)
        if not self.stops_crawl:
            # A project's own crawl (the add-on) goes on for its other pipelines and feeds.
            logger.error(
                "Cannot store the sitemap's entries: %s. No sitemap will be published by this crawl; "
                "its items still go to the project's other pipelines.", why,
            )
            return
        logger.error("Cannot store the sitemap's entries: %s. Stopping the crawl.", why)
        engine = self.crawler.engine
        if engine is not None and engine.spider is not None:
            asyncio.ensure_future(engine.close_spider_async(reason="sitemap_storage_failed"))

    def invalid(self, loc: object, error: Exception) -> None:
        """Record an entry that could not be listed; the first ones are logged as warnings."""
        assert self.report is not None
        self.invalid_count += 1
        if self.invalid_count <= MAX_LOGGED_INVALID:
            logger.warning(
                "Not listed in the sitemap (invalid): %s: %s%s", "an item" if loc is None else loc, error,
                "; further invalid entries are counted, and logged at DEBUG level only"
                if self.invalid_count == MAX_LOGGED_INVALID else "",
            )  # fmt: skip
        self.report.exclude(str(loc), "invalid", str(error))

    def finish(
        self, reason: str, stored: Iterable[tuple[SitemapEntry, str | None]] | None = None, resume: str = ""
    ) -> bool:
        """End the crawl: publish if it finished, then write the report; whether a set was published.

        ``stored``: the entries a crawl kept in its state (each with its canonical URL if
        another), added now; ``resume``: what the user can do when the crawl did not finish.
        """
        assert self.report is not None
        summary: dict[str, Any] = {"finish_reason": reason}
        changes: SetChanges | None = None
        try:
            if reason == "finished" and self.failed is None:
                for entry, canonical in stored or ():
                    try:
                        self.add(entry, canonical)
                    except InvalidEntryError as exc:
                        self.invalid(entry.loc, exc)
                self._settle_candidates()
            if self.failed is not None:  # before the end, or as the set was completed now
                self.discard()
                self.not_published(f"storing the entries failed: {self.failed}")
                return False
            if reason != "finished":
                self.discard()
                self.not_published(f"the crawl did not finish ({reason}){resume}")
                return False
            if self.builder is None:
                raise EmptySitemapError("no entry")
            result = self.builder.publish(self._content_duplicate)
        except EmptySitemapError:
            leaves = self.stats.get_value(keys.START_URL_LEAVES)
            hint = f": the start URL redirects to {leaves}, outside the site crawled; start from it" if leaves else ""
            self.not_published("no page could be listed" + hint)
            return False
        except ShrinkError as exc:
            self.not_published(str(exc))
            return False
        except (SitemapError, OSError) as exc:
            self.discard()
            self.not_published(f"publishing failed: {describe_write_error(exc, self.config.output_dir)}")
            return False
        else:
            self.stats.set_value(keys.URLS, result.urls)
            self.report.published(result.urls)
            self.stats.set_value(keys.FILES, result.files)
            for group, urls in result.group_urls:
                self.stats.set_value(keys.GROUP_URLS + group, urls)
            if result.llms_txt is not None:
                self.stats.set_value(keys.LLMS_TXT_PAGES, result.llms_txt.listed)
            if result.duplicates:
                self.stats.set_value(keys.EXCLUDED + "duplicate", result.duplicates)
            if result.off_base:
                self.stats.set_value(keys.OFF_BASE, result.off_base)
            changes = result.changes
            if result.news_urls or result.news_too_old:
                self.stats.set_value(keys.NEWS_URLS, result.news_urls)
                self.stats.set_value(keys.NEWS + "too_old", result.news_too_old)
            summary.update(report_fields(result))
            summary.update(self._run_after_publish())
            log_published(result, self.report.excluded_counts(), self.stats)
            if changes is not None:
                self._record_changes(changes)
                summary["changes"] = self._change_counts(changes)
                self._announce(changes)
            return True
        finally:
            summary.setdefault("urls", 0)
            summary.setdefault("files", 0)
            summary.setdefault("not_published", self.stats.get_value(keys.NOT_PUBLISHED))
            self.report.write(summary, changes)
            self.report.close()
            self.candidates.close()
            if changes is not None:
                changes.close()

    def _record_changes(self, changes: SetChanges) -> None:
        if changes.compared:
            for kind in KINDS:
                self.stats.set_value(keys.DIFF + kind, changes.counts[kind])
        else:
            self.stats.set_value(keys.DIFF_NONE, changes.previous)

    @staticmethod
    def _change_counts(changes: SetChanges) -> dict[str, Any]:
        return {"previous": changes.previous or "compared", **changes.counts}

    def _announce(self, changes: SetChanges) -> None:
        """IndexNow, when configured: a failure is counted and logged, the set stays published."""
        if self.config.indexnow is None or self.builder is None:
            return
        outcome = submit_in_thread(self.config.indexnow, changes, self.builder.options.base_url)
        record_submission(self.stats, outcome)

    def _run_after_publish(self) -> dict[str, Any]:
        # The set is out: a failure here is reported, never turned into a failed publish.
        if self.after_publish is None:
            return {}
        try:
            return self.after_publish()
        except (sqlite3.Error, OSError) as exc:
            logger.error("The sitemap is published, but the crawl history could not be updated: %s", exc)
            self.stats.set_value(keys.HISTORY_NOT_UPDATED, str(exc))
            return {"history_not_updated": str(exc)}

    def _settle_candidates(self) -> None:
        """The set is complete: list the candidates whose canonical URL cannot be listed (canonicals.py)."""
        assert self.report is not None
        for entry, canonical, why in self.candidates.settle(self.report.redirects):
            if why is None:
                self.report.exclude(self.to_crawl(entry.loc), "canonical", f"names {canonical}")
                continue
            self.add(entry)
            self.stats.inc_value(keys.ENTRIES)
            self.report.count(facts.LISTED)
            self.report.not_written(KIND, UNLISTABLE, entry.loc, f"{canonical} {why}")

    def discard(self) -> None:
        """Drop what was collected: nothing is published."""
        if self.builder is not None:
            self.builder.discard()

    def _hreflang(self, page: str, href: str, hreflang: str, reason: str) -> None:
        """An alternate not written, or written unchecked (sitemaps/xml/hreflang.py)."""
        assert self.report is not None
        self.report.not_written("hreflang", reason, page, href if reason == "unchecked" else f"{hreflang} {href}")

    def _content_duplicate(self, entry: SitemapEntry) -> None:
        assert self.report is not None
        self.report.exclude(self.to_crawl(entry.loc), "duplicate_content")
        self.report.listed.add(entry.loc, entry.lastmod, -1)

    def not_published(self, why: str) -> None:
        """Say, in the log and the stats, why nothing was published."""
        self.stats.set_value(keys.NOT_PUBLISHED, why)
        logger.error("Sitemap NOT published: %s. Any set published earlier is left as it was.", why)


def record_submission(stats: StatsCollector, outcome: Submission) -> None:
    """An IndexNow submission's counts (and failure) in the crawl's stats."""
    for key, value in (
        (keys.INDEXNOW_URLS, outcome.urls),
        (keys.INDEXNOW_REQUESTS, outcome.requests),
        (keys.INDEXNOW_RETRIES, outcome.retries),
        (keys.INDEXNOW_OUT_OF_SCOPE, outcome.out_of_scope),
        (keys.INDEXNOW_NOT_SUBMITTED, outcome.not_submitted),
    ):
        if value:
            stats.set_value(key, value)
    if outcome.failed is not None:
        stats.set_value(keys.INDEXNOW_FAILED, outcome.failed)

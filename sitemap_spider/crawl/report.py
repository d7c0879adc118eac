"""Every URL the crawl leaves out, counted in stats and kept for the report; the counts the report charts.

The report is JSON, or one self-contained HTML page when ``SITEMAP_REPORT`` ends in ``.html``.
"""

from __future__ import annotations

import json
import logging
import re
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Protocol

from scrapy.exceptions import DownloadCancelledError, DownloadTimeoutError
from scrapy.statscollectors import StatsCollector
from twisted.internet.error import TimeoutError as TwistedTimeoutError

from sitemap_spider.crawl import report_facts as facts
from sitemap_spider.report import FINDING_FIELDS, write_html
from sitemap_spider.report.files import remove_stale, replacing, stale_partial
from sitemap_spider.sitemaps import KINDS, SetChanges
from sitemap_spider.stats import EXCLUDED as EXCLUDED_PREFIX

#: Said in the report when alternates on other hosts were written: nothing here could check them.
UNCHECKED_NOTE = (
    "alternates on other hosts (listed in hreflang_unchecked_hosts) are written without a check: "
    "their reciprocity can only be checked by a crawl of those hosts"
)

logger = logging.getLogger(__name__)

#: Every reason a URL is not listed (stats ``sitemap/excluded/<reason>``), as the README explains them.
REASONS = {
    "redirect": "the URL redirects (HTTP 3xx or meta refresh); its target is judged instead",
    "http_error": "final status 4xx or 5xx",
    "status": "a 2xx status other than 200",
    "error": "no response (connection refused, reset, ...) or a truncated body, after every retry",
    "timeout": "no complete response within DOWNLOAD_TIMEOUT (a server that trickles or hangs)",
    "too_large": "larger than DOWNLOAD_MAXSIZE, on the wire or once decompressed (a gzip bomb)",
    "offsite": "the page ended up on another origin",
    "robots": "disallowed by robots.txt",
    "non_html": "not text/html or application/xhtml+xml",
    "noindex": "noindex or none in robots meta tags or X-Robots-Tag",
    "canonical": "names another URL as canonical",
    "duplicate": "the same URL came twice",
    "duplicate_content": "byte for byte the same page as a URL earlier in sort order",
    "pattern": "SITEMAP_INCLUDE / SITEMAP_EXCLUDE",
    "denied": "SITEMAP_DENY: never fetched",
    "trap": "a path repeating a segment more than SITEMAP_MAX_SEGMENT_REPEATS times: never fetched",
    "too_long": "longer than the protocol's 2,048 characters",
    "invalid": "could not make a valid sitemap entry",
}


def error_reason(error: BaseException | None) -> str:
    """The exclusion reason of a request that failed with ``error`` (one of :data:`REASONS`)."""
    if isinstance(error, (DownloadTimeoutError, TimeoutError, TwistedTimeoutError)):
        return "timeout"
    # DOWNLOAD_MAXSIZE is the only thing that cancels downloads in this crawl.
    if isinstance(error, DownloadCancelledError):
        return "too_large"
    return "error"


def _row(url: str, reason: str, detail: str | None) -> dict[str, str]:
    row = {"url": url, "reason": reason}
    if detail:
        row["detail"] = detail
    return row


class ExclusionStore(Protocol):
    """Where a crawl that keeps state elsewhere (a crawl mode's) keeps its exclusions and counts.

    Counts (:mod:`~sitemap_spider.crawl.report_facts` keys) arrive as sums over the last
    second or so; ``counts`` are the totals of the whole crawl, every process's.
    """

    def add_exclusion(self, url: str, reason: str, detail: str | None) -> None: ...

    def exclusions(self) -> Iterator[tuple[str, str, str | None]]: ...

    def exclusion_counts(self) -> dict[str, int]: ...

    def add_counts(self, counts: Mapping[str, int]) -> None: ...

    def counts(self) -> dict[str, int]: ...


class CrawlReport:
    """Counts exclusions under ``sitemap/excluded/<reason>``; keeps them for the report.

    Without a ``store`` they are spooled to an unnamed JSON Lines file in the report's folder,
    so a crawl of millions of URLs does not hold its exclusions in memory.
    """

    def __init__(self, stats: StatsCollector, path: Path | None, store: ExclusionStore | None = None) -> None:
        self._stats = stats
        self._path = path
        self._store = store
        self._spool: IO[str] | None = None
        self._pending: Counter[str] = Counter()  # counts not yet in the store
        self._totals: Counter[str] = Counter()  # without a store: the counts themselves
        self.listed = facts.ListedFacts()
        self._problems: IO[str] | None = None  # rows of not_written, spooled once there is one
        #: Without a report nor a store, the redirects alone, which the canonical rule follows
        #: (crawl/canonicals.py); spooled once there is one.
        self._redirects: IO[str] | None = None
        self._unchecked_hosts: set[str] = set()
        if path is not None:
            _remove_litter(path)
        if path is not None and store is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Unnamed (unlinked at once): nothing is left beside the report however the crawl
            # ends, a forced stop or a SIGKILL included. In the report's folder rather than the
            # system's temporary one, often a small tmpfs: a million exclusions make ~100 MB.
            self._spool = tempfile.TemporaryFile("w+", encoding="utf-8", dir=path.parent)  # noqa: SIM115 - closed in close()

    def exclude(self, url: str, reason: str, detail: str | None = None) -> None:
        """Record that ``url`` is not listed, and why (one of :data:`REASONS`)."""
        if reason not in REASONS:
            raise ValueError(f"unknown exclusion reason {reason!r}")
        self._stats.inc_value(EXCLUDED_PREFIX + reason)
        self._pending[facts.EXCLUDED] += 1
        logger.debug("Not listed (%s%s): %s", reason, f": {detail}" if detail else "", url)
        if self._store is not None:
            # A crawl mode that keeps state keeps the exclusions with it (or sends them on).
            self._store.add_exclusion(url, reason, detail)
        elif self._spool is not None:
            self._spool.write(json.dumps(_row(url, reason, detail), ensure_ascii=False) + "\n")
        elif reason == "redirect" and detail is not None:
            if self._redirects is None:  # closed in close()
                self._redirects = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
            self._redirects.write(json.dumps(_row(url, reason, detail), ensure_ascii=False) + "\n")

    def not_written(self, kind: str, reason: str, page: str, detail: str) -> None:
        """Record extension data of a listed page that is not written (an alternate, a video,
        an article), or an alternate written unchecked: ``sitemap/<kind>/<reason>`` and a row
        of the report's ``extension_problems``."""
        self._stats.inc_value(f"sitemap/{kind}/{reason}")
        logger.debug("%s %s of %s: %s", kind, reason, page, detail)
        if kind == "hreflang" and reason == "unchecked":  # only ever found by the publishing process
            self._unchecked_hosts.add(detail.split("/")[2] if detail.count("/") >= 2 else detail)
            return
        # A crawl mode's store keeps them (JOBDIR, Redis: every worker's, over resumes) or sends
        # them to the process that writes the report (a second crawling process).
        forward = getattr(self._store, "add_problem", None)
        if forward is not None:
            forward(kind, reason, page, detail)
            return
        if self._path is not None:
            if self._problems is None:
                self._path.parent.mkdir(parents=True, exist_ok=True)  # a crawl mode's store made no spool there
                self._problems = tempfile.TemporaryFile("w+", encoding="utf-8", dir=self._path.parent)  # noqa: SIM115 - closed in close()
            row = {"kind": kind, "reason": reason, "page": page, "detail": detail}
            self._problems.write(json.dumps(row, ensure_ascii=False) + "\n")

    def excluded_counts(self) -> dict[str, int]:
        """Exclusions so far by reason, from the stats."""
        stats = self._stats.get_stats()
        counts = {
            key[len(EXCLUDED_PREFIX) :]: int(value)
            for key, value in stats.items()
            if key.startswith(EXCLUDED_PREFIX)
        }
        if self._store is not None:
            counts.update(self._store.exclusion_counts())  # this run's and those before a resume
        return dict(sorted(counts.items()))

    def count(self, key: str, amount: int = 1) -> None:
        """Add to one of the crawl's counts (a :mod:`~sitemap_spider.crawl.report_facts` key)."""
        self._pending[key] += amount

    def count_page(self, status: int, depth: int) -> None:
        """A page was fetched (a response, redirects included) at ``depth``."""
        pending = self._pending
        pending[facts.FETCHED] += 1
        pending[f"{facts.STATUS}{status}"] += 1
        pending[facts.depth_key(depth)] += 1

    def published(self, urls: int) -> None:
        """The set was published with ``urls`` URLs: the listed count becomes that. Pages counted as
        they were taken and dropped while the set was built (a copy of another page's bytes, a URL
        taken twice) are not listed."""
        counted = self.counts().get(facts.LISTED, 0)  # before the pending counts: counts() moves them on
        self._pending[facts.LISTED] += urls - counted

    def flush(self) -> bool:
        """Move the counts of the last moments to the store (every second or so, and at the end)."""
        if not self._pending:
            return False
        pending, self._pending = self._pending, Counter()
        if self._store is not None:
            self._store.add_counts(pending)
        else:
            self._totals.update(pending)
        return True

    def counts(self) -> dict[str, int]:
        """The crawl's counts so far: every process's, and those before a resume."""
        self.flush()
        return self._store.counts() if self._store is not None else dict(self._totals)

    def write(
        self,
        summary: Mapping[str, Any],
        changes: SetChanges | None = None,
        findings: Iterable[Mapping[str, object]] | None = None,
    ) -> None:
        """Write the report: ``summary`` fields, counts, sitemap stats, every exclusion, then the
        URLs ``changes`` lists (``added_urls``, ``changed_urls``, ``removed_urls``), then the
        ``findings`` of an audit (each a mapping of :data:`sitemap_spider.report.FINDING_FIELDS`).

        A path ending in ``.html`` gets the HTML page, with a table of the findings when given.
        """
        if self._path is None:
            return
        # A crawl that made neither a spool nor its output there (JOBDIR keeps its rows in its state).
        self._path.parent.mkdir(parents=True, exist_ok=True)
        head = dict(summary)
        head["excluded"] = self.excluded_counts()
        head["counts"] = dict(sorted(self.counts().items()))
        head["listed"] = {"lastmod_age": dict(self.listed.ages), "sections": dict(self.listed.sections.most_common())}
        head["start_time"] = self._stats.get_value("start_time")
        problem_counts = getattr(self._store, "problem_counts", None)
        if problem_counts is not None:  # every worker's, and those found before a resume
            for key, count in problem_counts().items():
                self._stats.set_value(key, count)
        head["stats"] = {
            key: value
            for key, value in sorted(self._stats.get_stats().items())
            if key.startswith("sitemap/")
        }
        if self._unchecked_hosts:
            head["hreflang_unchecked"] = UNCHECKED_NOTE
            head["hreflang_unchecked_hosts"] = sorted(self._unchecked_hosts)
        if self._path.suffix.lower() in (".html", ".htm"):
            report = facts.html_report(head, self.listed, self._exclusions(), REASONS, findings)
            size = write_html(self._path, report)
            logger.info("Crawl report written to %s (%s bytes)", self._path, f"{size:,}")
            return
        with replacing(self._path) as out:
            # Stream the spooled rows into the list instead of loading them all.
            out.write(json.dumps(head, ensure_ascii=False, indent=1, default=str)[:-2])
            out.write(',\n "excluded_urls": [')
            for index, line in enumerate(self._excluded_rows()):
                out.write(("\n  " if index == 0 else ",\n  ") + line.rstrip("\n"))
            out.write("\n ],\n \"extension_problems\": [")
            for index, line in enumerate(self._problem_rows()):
                out.write(("\n  " if index == 0 else ",\n  ") + line.rstrip("\n"))
            out.write("\n ]")
            if changes is not None:
                _write_changed_urls(out, changes)
            if findings is not None:
                _write_findings(out, findings)
            out.write("\n}\n")
        logger.info("Crawl report written to %s", self._path)

    def redirects(self) -> Iterator[tuple[str, str]]:
        """Every redirect recorded so far, every process's: the URL, and where to as its detail writes it."""
        rows = self._exclusions()
        if self._store is None and self._spool is None and self._redirects is not None:
            self._redirects.flush()
            self._redirects.seek(0)
            spooled = map(json.loads, self._redirects)
            rows = ((row["url"], row["reason"], row.get("detail")) for row in spooled)
        for url, reason, detail in rows:
            if reason == "redirect" and detail is not None and " to " in detail:
                yield url, detail.split(" to ", 1)[1]

    def _exclusions(self) -> Iterator[tuple[str, str, str | None]]:
        if self._store is not None:
            yield from self._store.exclusions()
            return
        for line in self._excluded_rows():
            row = json.loads(line)
            yield row["url"], row["reason"], row.get("detail")

    def _excluded_rows(self) -> Iterator[str]:
        if self._store is not None:
            for url, reason, detail in self._store.exclusions():
                yield json.dumps(_row(url, reason, detail), ensure_ascii=False)
        elif self._spool is not None:
            self._spool.flush()
            self._spool.seek(0)
            yield from self._spool

    def _problem_rows(self) -> Iterator[str]:
        stored = getattr(self._store, "problems", None)
        if stored is not None:
            for kind, reason, page, detail in stored():
                yield json.dumps({"kind": kind, "reason": reason, "page": page, "detail": detail}, ensure_ascii=False)
        elif self._problems is not None:
            self._problems.seek(0)
            yield from self._problems

    def close(self) -> None:
        """Drop the spool file."""
        if self._spool is not None:
            self._spool.close()
            self._spool = None
        if self._problems is not None:
            self._problems.close()
            self._problems = None
        if self._redirects is not None:
            self._redirects.close()
            self._redirects = None


def _remove_litter(path: Path) -> None:
    """Remove what a killed crawl left beside the report ``path``: its partial report, and the named
    spool of releases that spooled exclusions to ``.<report>.<8 random characters>.jl``."""
    started = time.time()
    remove_stale(path.parent, stale_partial(path), started)
    remove_stale(path.parent, re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}\.jl"), started)


def _write_changed_urls(out: IO[str], changes: SetChanges) -> None:
    """The lists of URLs a publish added, changed and removed, streamed from their spool files."""
    for kind in KINDS:
        out.write(f',\n "{kind}_urls": [')
        for index, url in enumerate(changes.urls(kind)):
            out.write(("\n  " if index == 0 else ",\n  ") + json.dumps(url, ensure_ascii=False))
        out.write("\n ]")


def _write_findings(out: IO[str], findings: Iterable[Mapping[str, object]]) -> None:
    """An audit's findings, one object of the FINDING_FIELDS each, as its ``--json`` prints them."""
    out.write(',\n "findings": [')
    for index, finding in enumerate(findings):
        row = {name: finding.get(name) for name in FINDING_FIELDS}
        out.write(("\n  " if index == 0 else ",\n  ") + json.dumps(row, ensure_ascii=False, default=str))
    out.write("\n ]")

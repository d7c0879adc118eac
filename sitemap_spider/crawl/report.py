"""Every URL the crawl leaves out: counted in stats, and kept for the JSON report."""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Protocol

from scrapy.statscollectors import StatsCollector

from sitemap_spider.stats import EXCLUDED as EXCLUDED_PREFIX

logger = logging.getLogger(__name__)

#: Every reason a URL is not listed (stats ``sitemap/excluded/<reason>``), as the README explains them.
REASONS = {
    "redirect": "the URL redirects (HTTP 3xx or meta refresh); its target is judged instead",
    "http_error": "final status 4xx or 5xx",
    "status": "a 2xx status other than 200",
    "error": "no response (connection refused, timeout, ...) or a truncated body, after every retry",
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


def _row(url: str, reason: str, detail: str | None) -> dict[str, str]:
    row = {"url": url, "reason": reason}
    if detail:
        row["detail"] = detail
    return row


class ExclusionStore(Protocol):
    """Where a crawl that keeps state elsewhere (a crawl mode's) keeps its exclusions."""

    def add_exclusion(self, url: str, reason: str, detail: str | None) -> None: ...

    def exclusions(self) -> Iterator[tuple[str, str, str | None]]: ...

    def exclusion_counts(self) -> dict[str, int]: ...


class CrawlReport:
    """Counts exclusions under ``sitemap/excluded/<reason>``; keeps them for the report.

    Without a ``store`` they are spooled to a JSON Lines file next to the report, so a
    crawl of millions of URLs does not hold its exclusions in memory.
    """

    def __init__(self, stats: StatsCollector, path: Path | None, store: ExclusionStore | None = None) -> None:
        self._stats = stats
        self._path = path
        self._store = store
        self._spool: IO[str] | None = None
        if path is not None and store is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._spool = tempfile.NamedTemporaryFile(
                "w+", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", suffix=".jl"
            )

    def exclude(self, url: str, reason: str, detail: str | None = None) -> None:
        """Record that ``url`` is not listed, and why (one of :data:`REASONS`)."""
        if reason not in REASONS:
            raise ValueError(f"unknown exclusion reason {reason!r}")
        self._stats.inc_value(EXCLUDED_PREFIX + reason)
        logger.debug("Not listed (%s%s): %s", reason, f": {detail}" if detail else "", url)
        if self._store is not None:
            # A crawl mode that keeps state keeps the exclusions with it (or sends them on).
            self._store.add_exclusion(url, reason, detail)
        elif self._spool is not None:
            self._spool.write(json.dumps(_row(url, reason, detail), ensure_ascii=False) + "\n")

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

    def write(self, summary: Mapping[str, Any]) -> None:
        """Write the report: ``summary`` fields, counts, sitemap stats, then every exclusion."""
        if self._path is None:
            return
        head = dict(summary)
        head["excluded"] = self.excluded_counts()
        head["stats"] = {
            key: value
            for key, value in sorted(self._stats.get_stats().items())
            if key.startswith("sitemap/")
        }
        partial = self._path.with_name(f".{self._path.name}.partial")
        with partial.open("w", encoding="utf-8") as out:
            # Stream the spooled rows into the list instead of loading them all.
            out.write(json.dumps(head, ensure_ascii=False, indent=1, default=str)[:-2])
            out.write(',\n "excluded_urls": [')
            for index, line in enumerate(self._excluded_rows()):
                out.write(("\n  " if index == 0 else ",\n  ") + line.rstrip("\n"))
            out.write("\n ]\n}\n")
        os.replace(partial, self._path)
        logger.info("Crawl report written to %s", self._path)

    def _excluded_rows(self) -> Iterator[str]:
        if self._store is not None:
            for url, reason, detail in self._store.exclusions():
                yield json.dumps(_row(url, reason, detail), ensure_ascii=False)
        elif self._spool is not None:
            self._spool.flush()
            self._spool.seek(0)
            yield from self._spool

    def close(self) -> None:
        """Drop the spool file."""
        if self._spool is not None:
            self._spool.close()
            self._spool = None

"""What the HTML report shows besides the excluded URLs: a few counters, never a list of URLs.

Pages fetched by status and by depth, renders, entries listed and exclusions are counted
as the crawl goes (:class:`~sitemap_spider.crawl.report.CrawlReport` keeps them, in the
crawl mode's store when there is one, so every process of a crawl adds to the same
totals). The age of each listed page's ``lastmod`` and its section of the site are
counted from the entries of the set as the publisher takes them, which in every mode
is once per entry, in the one process that publishes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from sitemap_spider.report import Bar, Chart, Column, HtmlReport, Table, findings_table

#: Keys of the crawl's counts (CrawlReport.count); ``status/<code>`` and ``depth/<n>`` are prefixes.
FETCHED = "fetched"
RENDERED = "rendered"
LISTED = "listed"
EXCLUDED = "excluded"
STATUS = "status/"
DEPTH = "depth/"
#: Deeper pages are counted together, so the counters stay few with DEPTH_LIMIT=0 (no limit).
DEPTH_CAP = 100
#: Distinct sections counted; the entries of any further one are counted as one "other" section.
MAX_SECTIONS = 2_000
OTHER_SECTIONS = "(other sections)"
_TOP_SECTIONS = 15
# lastmod age buckets: (label, newer than this many days), in the order the chart shows them.
_AGES = (("under a day", 1), ("under a week", 7), ("under a month", 31), ("under a year", 366))
_OLDER, _FUTURE, _NONE = "a year or more", "in the future", "no lastmod"
_TONES = {"2": "ok", "3": "moved", "4": "warn", "5": "bad"}
# Depths shown one by one up to the first bound; deeper ones in ranges that end at each bound.
_DEPTH_RANGES = (15, 20, 30, 50, DEPTH_CAP - 1)


def depth_key(depth: int) -> str:
    """The counter of pages fetched at ``depth`` (clicks from a start URL)."""
    return f"{DEPTH}{min(depth, DEPTH_CAP)}"


def section_of(loc: str) -> str:
    """The first directory of a URL's path ("/blog/"), or "/" for pages at the top."""
    path = urlsplit(loc).path
    head, slash, _ = path.lstrip("/").partition("/")
    return f"/{head}/" if slash else "/"


def lastmod_age(lastmod: str | None, now: datetime) -> str:
    """Which age bucket a W3C Datetime ``lastmod`` falls in, seen from ``now``."""
    if not lastmod:
        return _NONE
    try:
        when = datetime.fromisoformat(lastmod)
    except ValueError:
        return _NONE
    if when.tzinfo is None:  # a date: its midnight, UTC
        when = when.replace(tzinfo=UTC)
    age = now - when
    if age < timedelta(0):
        return _FUTURE
    return next((label for label, days in _AGES if age < timedelta(days=days)), _OLDER)


class ListedFacts:
    """The age of the ``lastmod`` and the section of the entries of the set, counted as they come."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now or datetime.now(UTC)
        self.ages: Counter[str] = Counter()
        self.sections: Counter[str] = Counter()

    def add(self, loc: str, lastmod: str | None, count: int = 1) -> None:
        """Count an entry (``count`` -1: take back one the set dropped)."""
        self.ages[lastmod_age(lastmod, self.now)] += count
        section = section_of(loc)
        if section not in self.sections and len(self.sections) >= MAX_SECTIONS:
            section = OTHER_SECTIONS
        self.sections[section] += count


def charts(counts: Mapping[str, int], excluded: Mapping[str, int], listed: ListedFacts) -> list[Chart]:
    """The five charts of a crawl report."""
    statuses = sorted((key[len(STATUS) :], n) for key, n in counts.items() if key.startswith(STATUS))
    depths = sorted((int(key[len(DEPTH) :]), n) for key, n in counts.items() if key.startswith(DEPTH))
    ages = [label for label, _ in _AGES] + [_OLDER, _FUTURE, _NONE]
    sections = listed.sections.most_common(_TOP_SECTIONS)
    return [
        Chart("Status codes", [Bar(code, n, _TONES.get(code[:1], "")) for code, n in statuses],
              "The HTTP status of every page fetched, redirects included (robots.txt and scripts not)."),
        Chart("Exclusions by reason", [Bar(reason, n) for reason, n in sorted(excluded.items(), key=_largest) if n],
              "URLs not listed, by the reason they were left out."),
        Chart("Pages by depth", _depth_bars(depths),
              "Pages fetched, by the number of links followed from a start URL."),
        Chart("lastmod age", [Bar(label, listed.ages[label], "bad" if label == _FUTURE else "")
                              for label in ages if listed.ages[label] > 0],
              f"Listed pages by the age of their lastmod on {listed.now:%Y-%m-%d %H:%M} UTC."),
        Chart("Largest sections", [Bar(section, n) for section, n in sections if n > 0],
              f"Listed pages by the first directory of their path (the {_TOP_SECTIONS} largest)."),
    ]


def _depth_bars(depths: Iterable[tuple[int, int]]) -> list[Bar]:
    """One bar per depth near the start, then ranges, so a deep site still gets a short chart."""
    grouped: Counter[str] = Counter()
    for depth, n in depths:
        if depth <= _DEPTH_RANGES[0]:
            label = str(depth)
        elif depth >= DEPTH_CAP:
            label = f"{DEPTH_CAP}+"
        else:
            low = max(bound for bound in _DEPTH_RANGES if bound < depth) + 1
            high = min(bound for bound in _DEPTH_RANGES if bound >= depth)
            label = f"{low}\u2013{high}"
        grouped[label] += n
    return [Bar(label, n) for label, n in grouped.items()]  # depths come in order, so do the labels


def _largest(item: tuple[str, int]) -> tuple[int, str]:
    return (-item[1], item[0])


def html_report(
    head: Mapping[str, Any],
    listed: ListedFacts,
    rows: Iterable[tuple[str, str, str | None]],
    reasons: Mapping[str, str],
    findings: Iterable[Mapping[str, object]] | None,
) -> HtmlReport:
    """The HTML report of a crawl from the JSON report's head, the listed facts and the exclusions."""
    counts: Mapping[str, int] = head.get("counts", {})
    excluded: Mapping[str, int] = head.get("excluded", {})
    tables = [Table("excluded", "Excluded URLs", [Column("url"), Column("reason", "category"), Column("detail")],
                    rows, "Every URL the crawl left out of the sitemap, with its reason.")]
    if findings is not None:
        tables.append(findings_table(findings))
    kind = "crawl" if findings is None else "audit"
    return HtmlReport(
        title=f"Sitemap {kind} report \u2014 {head.get('index_url') or head.get('site') or ''}".rstrip(" \u2014"),
        summary=_summary(head, counts, excluded),
        charts=charts(counts, excluded, listed),
        tables=tables,
        legend={reason: meaning for reason, meaning in reasons.items() if excluded.get(reason)},
    )


def _summary(head: Mapping[str, Any], counts: Mapping[str, int], excluded: Mapping[str, int]) -> list[tuple[str, str]]:
    rows = [("Listed URLs", f"{head.get('urls', 0):,}"), ("Sitemap files", f"{head.get('files', 0):,}")]
    if head.get("index"):
        rows.append(("Index", f"{head['index']} ({head.get('index_url', '')})"))
    if head.get("not_published"):
        rows.append(("Not published", str(head["not_published"])))
    if isinstance(head.get("audit"), Mapping):
        rows.append(audit_row(head["audit"]))
        rows += audit_crawl_row(head["audit"])
    by_reason = ", ".join(f"{reason} {n:,}" for reason, n in sorted(excluded.items(), key=_largest) if n)
    rows.append(("Excluded URLs", f"{sum(excluded.values()):,}" + (f" ({by_reason})" if by_reason else "")))
    rows.append(("Pages fetched", f"{counts.get(FETCHED, 0):,} ({counts.get(RENDERED, 0):,} rendered)"))
    rows += _times(head.get("start_time"))
    rows.append(("Finish reason", str(head.get("finish_reason", ""))))
    return rows


def audit_row(audit: Mapping[str, Any]) -> tuple[str, str]:
    """The summary row of an audit's counts (``scrapy audit``'s JSON ``summary``)."""
    counts = f"{audit.get('errors', 0):,} error(s), {audit.get('warnings', 0):,} warning(s)"
    return ("Audit", f"{counts} in {audit.get('files', 0):,} sitemap file(s) listing {audit.get('urls', 0):,} URL(s)")


def audit_crawl_row(audit: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The summary row of what an audit says of its crawl (complete or not), if one ran."""
    crawl = audit.get("crawl")
    if not isinstance(crawl, Mapping) or "verdict" not in crawl:
        return []
    return [("Audit's crawl", str(crawl["verdict"]))]


def _times(start: object) -> list[tuple[str, str]]:
    if not isinstance(start, datetime):
        return []
    end = datetime.now(UTC)
    elapsed = timedelta(seconds=round((end - start).total_seconds()))
    return [("Started", f"{start:%Y-%m-%d %H:%M:%S} UTC"), ("Finished", f"{end:%Y-%m-%d %H:%M:%S} UTC"),
            ("Time (this process)", str(elapsed))]

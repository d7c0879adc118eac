"""``scrapy audit``: what the sitemaps list, compared with what a crawl of the site found.

Pure: the command hands over the session that read the sitemaps (which kept every listed URL)
and what the crawl kept (``modes.collecting.CollectingMode``: entries, exclusions, the URLs
pages led to); ``compare`` reports the differences as findings of the AUDIT_RULES.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from sitemap_spider.checking.session import Session
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.urls import normalize_url, origin_of
from sitemap_spider.sitemaps.xml import parse_lastmod

#: How the crawl's reasons for leaving a URL out read as findings on a listed URL.
_REASON_RULES: Final = {
    "redirect": "audit.redirect",
    "http_error": "audit.http_error",
    "status": "audit.status",
    "error": "audit.status",
    "noindex": "audit.noindex",
    "canonical": "audit.canonical",
    "robots": "audit.robots",
    "offsite": "audit.offsite",
}
#: One lastmod on at least this share of the listed URLs (and at least UNIFORM_MIN of them).
UNIFORM_SHARE: Final = 0.9
UNIFORM_MIN: Final = 10
# A lastmod a little after the page's own date is clock skew, not a false date.
_SKEW: Final = timedelta(minutes=1)


@dataclass(frozen=True)
class Listed:
    """Where a URL is first listed."""

    loc: str
    file: str
    line: int
    lastmod: str | None


class AuditSession(Session):
    """A validation session that also keeps every listed URL (one entry per URL)."""

    def __init__(self, now: datetime | None = None) -> None:
        super().__init__(now)
        self.listed_urls: dict[str, Listed] = {}

    def listed(self, loc: str, file: str, line: int, lastmod: str | None = None) -> None:
        super().listed(loc, file, line, lastmod)
        self.listed_urls.setdefault(url_key(loc), Listed(loc, file, line, lastmod))


def url_key(url: str) -> str:
    try:
        return normalize_url(url) or url
    except UnicodeError:
        return url


@dataclass
class CrawlFacts:
    """What the crawl kept: listable pages, exclusions, linked URLs.

    ``pages`` maps each listable page to the date it gives itself: its Last-Modified header
    (unless it is the response's own time), else its metadata's. That is the lastmod of a crawl
    without history, which the audit's always is: a date from an earlier crawl says nothing of
    the page as it is.
    """

    pages: dict[str, str | None] = field(default_factory=dict)
    excluded: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)
    linked: set[str] = field(default_factory=set)


def crawl_facts(
    entries: list[tuple[str, str | None]], excluded: list[tuple[str, str, str | None]], linked: set[str]
) -> CrawlFacts:
    facts = CrawlFacts(linked={url_key(url) for url in linked})
    for loc, lastmod in entries:
        facts.pages[url_key(loc)] = lastmod
    for url, reason, detail in excluded:
        facts.excluded.setdefault(url_key(url), []).append((reason, detail))
    return facts


def compare(session: AuditSession, facts: CrawlFacts, start_url: str) -> None:
    """Report the differences between the listed URLs and the crawl, into the session's findings."""
    site = origin_of(url_key(start_url))
    start = url_key(start_url)
    for key, listed in session.listed_urls.items():
        if origin_of(key) != site:
            _finding(session, "audit.offsite", listed, f"on {origin_of(key)}, not on the audited site {site}")
            continue
        if key in facts.pages:
            _check_lastmod(session, listed, facts.pages[key])
        else:
            _report_exclusion(session, listed, facts.excluded.get(key, []))
        if key != start and key not in facts.linked:
            _finding(session, "audit.orphan", listed, "no crawled page links to it")
    for key in sorted(facts.pages.keys() - session.listed_urls.keys()):
        session.finding("audit.unlisted", None, None, "indexable, found by the crawl, in no sitemap", key)
    _check_uniform(session)


def _finding(session: Session, rule: str, listed: Listed, detail: str) -> None:
    session.finding(rule, listed.file, listed.line, detail, listed.loc)


def _report_exclusion(session: Session, listed: Listed, reasons: list[tuple[str, str | None]]) -> None:
    # "duplicate" says only that the URL came twice: the other reason is the one that matters.
    relevant = [(reason, detail) for reason, detail in reasons if reason != "duplicate"]
    if not relevant:
        _finding(session, "audit.status", listed, "not reached by the crawl")
        return
    reason, detail = relevant[0]
    rule = _REASON_RULES.get(reason, "audit.not_listable")
    _finding(session, rule, listed, f"{reason}: {detail}" if detail else reason)


def _check_lastmod(session: Session, listed: Listed, page_date: str | None) -> None:
    if listed.lastmod is None or page_date is None:
        return
    try:
        claimed = parse_lastmod(listed.lastmod)
        served = parse_lastmod(page_date)
    except InvalidEntryError:
        return  # a bad lastmod is validate's finding
    if "T" not in listed.lastmod:  # a date: later only if the day is after the page's
        later = claimed.date() > served.date()
    else:
        later = claimed > served + _SKEW
    if later:
        detail = (
            f"lastmod {listed.lastmod} is later than the page's own date, {page_date} "
            "(its Last-Modified header, else its metadata)"
        )
        _finding(session, "audit.lastmod_after_page", listed, detail)


def _check_uniform(session: AuditSession) -> None:
    lastmods = Counter(listed.lastmod for listed in session.listed_urls.values() if listed.lastmod)
    if not lastmods:
        return
    value, count = lastmods.most_common(1)[0]
    total = len(session.listed_urls)
    if count >= UNIFORM_MIN and count >= UNIFORM_SHARE * total:
        session.finding(
            "audit.lastmod_uniform",
            None,
            None,
            f"{count:,} of {total:,} listed URLs have lastmod {value}: a build or export time, not when each page changed",
        )

"""``scrapy audit``: what the sitemaps list, compared with what a crawl of the site found.

Pure: the command hands over the session that read the sitemaps (which kept every listed URL)
and what the crawl kept (``modes.collecting.CollectingMode``: entries, exclusions, the URLs
pages led to and their depths, how the crawl ended); ``compare`` reports the differences as
findings of the AUDIT_RULES, every one of them, in the order that matters: pages missing from
the sitemaps first, then broken listed URLs, then the rest, crawler-trap-like pages last.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from sitemap_spider.checking.findings import RULES, Finding, FindingLog, Severity
from sitemap_spider.checking.session import Session
from sitemap_spider.checking.traps import Traps, find_traps
from sitemap_spider.sitemaps import InvalidEntryError, normalize_url, origin_of, parse_lastmod

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
_RULE_ORDER: Final = {rule: index for index, rule in enumerate(RULES)}


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
        self.log = FindingLog(limit=None)  # the reports hold every finding; only the terminal is cut
        self.listed_urls: dict[str, Listed] = {}

    def listed(self, loc: str, file: str, line: int, lastmod: str | None = None, *, news: bool = False) -> None:
        super().listed(loc, file, line, lastmod, news=news)
        self.listed_urls.setdefault(url_key(loc), Listed(loc, file, line, lastmod))


def url_key(url: str) -> str:
    try:
        return normalize_url(url) or url
    except UnicodeError:
        return url


@dataclass(frozen=True)
class CrawlEnd:
    """How the audit's crawl ended: Scrapy's finish reason, DEPTH_LIMIT, the links the limit dropped."""

    reason: str
    depth_limit: int = 0
    depth_dropped: int = 0  # Scrapy's depth/request_ignored_count
    #: How the site's robots.txt failed when every try did ("503 x3"), and the crawl read no rules.
    robots_failed: str = ""

    @property
    def stopped(self) -> bool:
        """Ended by something else than its end or a limit the user set (Ctrl-C, SIGTERM, the site down)."""
        return self.reason != "finished" and not self.reason.startswith("closespider_")


FINISHED: Final = CrawlEnd("finished")


@dataclass
class CrawlFacts:
    """What the crawl kept: listable pages, exclusions, linked URLs, depths, and how it ended.

    ``pages`` maps each listable page to the date it gives itself: its metadata's, else its
    Last-Modified header (unless it is the response's own time). That is the lastmod of a crawl
    without history, which the audit's always is: a date from an earlier crawl says nothing of
    the page as it is. ``depths``: every URL the crawl asked for, at the depth it first did.
    """

    pages: dict[str, str | None] = field(default_factory=dict)
    excluded: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)
    linked: set[str] = field(default_factory=set)
    depths: dict[str, int] = field(default_factory=dict)
    end: CrawlEnd = FINISHED


def crawl_facts(
    entries: list[tuple[str, str | None]],
    excluded: list[tuple[str, str, str | None]],
    linked: set[str],
    depths: dict[str, int] | None = None,
    end: CrawlEnd = FINISHED,
) -> CrawlFacts:
    facts = CrawlFacts(linked={url_key(url) for url in linked}, end=end)
    for loc, lastmod in entries:
        facts.pages[url_key(loc)] = lastmod
    for url, reason, detail in excluded:
        facts.excluded.setdefault(url_key(url), []).append((reason, detail))
    for url, depth in (depths or {}).items():
        facts.depths.setdefault(url_key(url), depth)
    return facts


@dataclass(frozen=True)
class AuditedCrawl:
    """What the audit says of its crawl: whether it reached the whole site, and what it found unlisted."""

    end: CrawlEnd
    incomplete_because: tuple[str, ...]
    listed_not_reached: int
    missing_pages: int
    trap_like_pages: int
    endless_series: Mapping[str, int]

    @property
    def complete(self) -> bool:
        return not self.incomplete_because

    def verdict(self) -> str:
        """In one line: complete or not, and how many pages it found in no sitemap."""
        series = ", ".join(f"{shape} {count:,}" for shape, count in sorted(self.endless_series.items()))
        found = f"{self.missing_pages:,} page(s) in no sitemap, and {self.trap_like_pages:,} trap-like" + (
            f" (endless series: {series})" if series else ""
        )
        if self.complete:
            return f"complete; {found}"
        return f"INCOMPLETE ({'; '.join(self.incomplete_because)}); so far {found}"

    def as_json(self) -> dict[str, object]:
        """The ``crawl`` of the audit's JSON summary."""
        return {
            "verdict": self.verdict(),
            "complete": self.complete,
            "incomplete_because": list(self.incomplete_because),
            "finish_reason": self.end.reason,
            "depth_limit": self.end.depth_limit,
            "listed_not_reached": self.listed_not_reached,
            "missing_pages": self.missing_pages,
            "trap_like_pages": self.trap_like_pages,
            "endless_series": dict(sorted(self.endless_series.items())),
        }


def compare(session: AuditSession, facts: CrawlFacts, start_url: str) -> AuditedCrawl:
    """Report the differences between the listed URLs and the crawl into the session's findings,
    in the order that matters (:func:`finding_order`); return what the audit says of its crawl."""
    site = origin_of(url_key(start_url))
    start = url_key(start_url)
    traps = find_traps(facts.depths, facts.end.depth_limit)
    gaps = incomplete_because(facts, traps)
    not_reached = 0
    for key, listed in session.listed_urls.items():
        if origin_of(key) != site:
            _finding(session, "audit.offsite", listed, f"on {origin_of(key)}, not on the audited site {site}")
            continue
        if key in facts.pages:
            _check_lastmod(session, listed, facts.pages[key])
        elif gaps and key not in facts.excluded:
            not_reached += 1  # the crawl stopped before it: nothing is known of it
            continue
        else:
            _report_exclusion(session, listed, facts.excluded.get(key, []))
        if key != start and key not in facts.linked:
            cut = " (the crawl was cut short: a page it did not reach may)" if gaps else ""
            _finding(session, "audit.orphan", listed, "no crawled page links to it" + cut)
    missing, trap_like = _report_unlisted(session, facts, traps, bool(gaps))
    _check_uniform(session)
    if gaps:
        session.finding("audit.crawl_incomplete", None, None, _incomplete_detail(gaps, not_reached))
    if facts.end.robots_failed:
        session.finding(
            "audit.robots_unavailable", None, None,
            f"{site}/robots.txt: {facts.end.robots_failed}. RFC 9309 reads that as 'disallow everything' "
            "until it answers, and search engines stop crawling the site; this audit crawled it as if it "
            "had no robots.txt, so what robots.txt forbids (audit.robots) is not known",
        )  # fmt: skip
    session.log.listed.sort(key=finding_order)
    return AuditedCrawl(facts.end, gaps, not_reached, missing, trap_like, traps.series)


def incomplete_because(facts: CrawlFacts, traps: Traps) -> tuple[str, ...]:
    """Why the crawl did not reach the whole site; empty when it did.

    DEPTH_LIMIT counts only where it kept the crawl from following a page that is not a trap:
    stopping an endless series is what it is for.
    """
    end = facts.end
    gaps = [] if end.reason == "finished" else [_ended_by(end.reason)]
    if end.depth_limit > 0 and end.depth_dropped > 0:
        cut = sorted(
            url for url, depth in facts.depths.items() if depth >= end.depth_limit and traps.why(url) is None
        )
        if cut:
            gaps.append(
                f"DEPTH_LIMIT ({end.depth_limit}) kept it from following the links of {len(cut):,} page(s) "
                f"outside an endless series, such as {cut[0]}"
            )
    return tuple(gaps)


def _ended_by(reason: str) -> str:
    # Scrapy's CloseSpider extension names its finish reasons after its settings.
    if reason.startswith("closespider_"):
        return f"{reason.upper()} ended it"
    if reason == "shutdown":
        return "it was stopped (Ctrl-C or SIGTERM)"
    if reason == "site_down":
        return "the site answered nothing but faults for SITEMAP_RETRY_BUDGET seconds"
    return f"it ended early ({reason})"


def _incomplete_detail(gaps: tuple[str, ...], not_reached: int) -> str:
    unjudged = f"; {not_reached:,} listed URL(s) it had not judged yet are left out" if not_reached else ""
    return (
        f"the crawl was cut short: {'; '.join(gaps)}{unjudged}. More pages may be missing from the sitemaps "
        "than the findings say, a calendar or an archive that goes on for ever is told from real pages only "
        "once the crawl reaches DEPTH_LIMIT, and an orphan may be linked from a page the crawl did not reach"
    )


def _report_unlisted(
    session: AuditSession, facts: CrawlFacts, traps: Traps, incomplete: bool
) -> tuple[int, int]:
    """``audit.unlisted`` and ``audit.unlisted_trap``, the shallowest first; how many of each."""
    unlisted = facts.pages.keys() - session.listed_urls.keys()
    missing = trap_like = 0
    for key in sorted(unlisted, key=lambda key: (facts.depths.get(key, 0), key)):
        why = traps.why(key)
        if why is None:
            missing += 1
            more = " (the crawl was cut short: there may be more)" if incomplete else ""
            detail = "indexable, found by the crawl, in no sitemap" + more
            session.finding("audit.unlisted", None, None, detail, key)
        else:
            trap_like += 1
            detail = f"indexable, found by the crawl, in no sitemap; trap-like: {why}"
            session.finding("audit.unlisted_trap", None, None, detail, key)
    return missing, trap_like


def finding_order(finding: Finding) -> tuple[int, int]:
    """Where a finding goes: what the crawl could not tell first, then the pages missing from the
    sitemaps, the broken listed URLs, the other warnings, and the trap-like pages last."""
    if finding.rule in ("audit.crawl_incomplete", "audit.robots_unavailable"):
        group = 0
    elif finding.rule == "audit.unlisted":
        group = 1
    elif finding.rule == "audit.unlisted_trap":
        group = 4
    else:
        group = 2 if finding.severity is Severity.ERROR else 3
    return group, _RULE_ORDER[finding.rule]


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
            "(its metadata, else its Last-Modified header)"
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

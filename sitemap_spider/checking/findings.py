"""What ``scrapy validate`` can find: the rule table, a finding, and the log that keeps them bounded.

Every rule has a stable id (``loc.not_absolute``) and one severity. An *error* breaks the
protocol or the official XSD, or makes a search engine drop the URL or the file; a *warning*
is accepted by search engines but is wrong or wasted (a future lastmod, a URL listed twice).
The README's rule table is written from RULES.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from typing import Final


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Rule:
    severity: Severity
    meaning: str


E, W = Severity.ERROR, Severity.WARNING

VALIDATE_RULES: Final[dict[str, Rule]] = {
    "read.missing": Rule(E, "a local file that does not exist or cannot be opened"),
    "read.fetch": Rule(
        E, "a URL that could not be fetched: connection, DNS, timeout, HTTP status other than 200"
    ),
    "read.redirects": Rule(E, "a redirect loop, or more redirects than Scrapy's REDIRECT_MAX_TIMES"),
    "read.robots": Rule(E, "a sitemap URL that the host's robots.txt forbids to our user agent"),
    "read.gzip": Rule(E, "a .gz file whose compressed data is corrupt or cut short"),
    "limits.bytes": Rule(
        E, "more than 50 MiB (52,428,800 bytes) uncompressed; reading stops there (gzip bombs)"
    ),
    "limits.urls": Rule(E, "more than 50,000 <url> (or lines of a text sitemap) in one file"),
    "limits.sitemaps": Rule(E, "more than 50,000 <sitemap> in one index; the ones after are not followed"),
    "limits.entry": Rule(
        E, "a <url> or <sitemap> holding more than 10,000 elements (Google reads 1,000 images); reading stops there"
    ),
    "text.line_too_long": Rule(E, "a line of a text sitemap over 64 KiB; reading stops there"),
    "text.encoding": Rule(E, "a text sitemap that is not UTF-8"),
    "xml.not_well_formed": Rule(E, "not well-formed XML (with libxml2's message); reading stops there"),
    "xml.dtd": Rule(E, "a DOCTYPE: DTDs and entity declarations are refused unread (XXE, billion laughs)"),
    "xml.encoding": Rule(E, "an XML declaration naming an encoding other than UTF-8"),
    "xml.root": Rule(E, "a root element other than <urlset> or <sitemapindex> (an HTML page, a feed)"),
    "xml.namespace": Rule(E, "<urlset>/<sitemapindex> not in http://www.sitemaps.org/schemas/sitemap/0.9"),
    "xsd": Rule(E, "a violation of the official XSDs that no more specific rule names (libxml2's message, in words)"),
    "xsd.unknown_extension": Rule(
        W, "an element of a namespace with no known schema (not image, video, news, xhtml)"
    ),
    "link.ignored": Rule(
        W,
        "an <xhtml:link> search engines do not read in a sitemap: rel other than alternate (amphtml, ...), "
        "or no hreflang and no media",
    ),
    "link.hreflang": Rule(
        W,
        "an hreflang the XSD accepts that search engines do not read: not an ISO 639-1 language, "
        "optionally with script and region, nor x-default (es-419, eng, en-UK)",
    ),
    "link.not_absolute": Rule(W, "an <xhtml:link> href that is relative, or without '//' and a host: the link is ignored"),
    "link.href": Rule(
        W, "an <xhtml:link> href that <loc> would refuse for another reason (scheme, encoding, length): ignored"
    ),
    "file.binary": Rule(
        E, "binary data (a control byte in the first 4 KiB: an image, an archive, a PDF), not a sitemap"
    ),
    "file.empty": Rule(E, "a sitemap listing no URL, or an index listing no sitemap"),
    "index.nested": Rule(E, "a sitemap index listed by a sitemap index: indexes may not nest"),
    "index.depth": Rule(E, "a sitemap deeper than --max-depth below the input: not read"),
    "index.loop": Rule(E, "an index that lists itself or one of the indexes that led to it"),
    "index.duplicate": Rule(W, "a sitemap listed more than once (read once)"),
    "index.child_not_local": Rule(
        W, "sitemaps of a local index with no file of their name beside it: not read (one finding per index)"
    ),
    "loc.not_absolute": Rule(E, "a relative URL, or one without '//' and a host"),
    "loc.scheme": Rule(E, "a URL whose scheme is not http or https"),
    "loc.too_long": Rule(E, "a URL over 2,048 characters"),
    "loc.not_encoded": Rule(
        E, "raw non-ASCII, white space, control characters or a '%' not followed by two hex digits"
    ),
    "loc.invalid": Rule(
        E, "any other URL that RFC 3986 or the XSD refuses (host, port, brackets, length under 12)"
    ),
    "loc.double_escaped": Rule(W, "'&amp;', '&lt;' ... left in the URL after XML decoding: escaped twice"),
    "loc.fragment": Rule(W, "a URL with a #fragment, which search engines drop: list the URL without it"),
    "loc.cross_submission": Rule(
        E,
        "a URL on another host, or outside the sitemap's directory, with no robots.txt Sitemap: line allowing it",
    ),
    "lastmod.format": Rule(
        E, "a lastmod that is not a W3C Datetime with a full date that sitemap.xsd accepts"
    ),
    "lastmod.timezone": Rule(E, "a lastmod with a time of day and no time zone"),
    "lastmod.future": Rule(W, "a lastmod later than now (a date: not yet begun in any time zone)"),
    "lastmod.placeholder": Rule(W, "a lastmod before 1991, before the web: a placeholder such as 1970-01-01"),
    "changefreq.invalid": Rule(
        E, "a changefreq other than always, hourly, daily, weekly, monthly, yearly, never"
    ),
    "priority.invalid": Rule(E, "a priority that is not a decimal from 0.0 to 1.0"),
    "duplicate.in_file": Rule(W, "a URL listed again in the same file"),
    "duplicate.across_files": Rule(W, "a URL listed in another file already read"),
    "robots.no_sitemap": Rule(
        W, "a site's robots.txt names no sitemap (Sitemap: line); /sitemap.xml is read instead"
    ),
}

#: ``scrapy audit``: the sitemaps compared with a crawl of the site.
AUDIT_RULES: Final[dict[str, Rule]] = {
    "audit.redirect": Rule(E, "a listed URL redirects (3xx); the detail names the target"),
    "audit.http_error": Rule(E, "a listed URL answers 4xx or 5xx"),
    "audit.status": Rule(E, "a listed URL answers another status than 200, or nothing at all"),
    "audit.noindex": Rule(E, "a listed URL says noindex (robots meta tag or X-Robots-Tag)"),
    "audit.canonical": Rule(
        E, "a listed URL names another URL as canonical, one the crawl lists (or that leads to one)"
    ),
    "audit.robots": Rule(E, "a listed URL that robots.txt forbids"),
    "audit.robots_unavailable": Rule(
        E, "the site's robots.txt failed every try (5xx, 429, no answer): search engines stop crawling the site"
    ),
    "audit.offsite": Rule(E, "a listed URL on another host than the site, or redirected to one"),
    "audit.not_listable": Rule(
        W, "a listed URL the crawl would leave out for another reason (not HTML, ...)"
    ),
    "audit.unlisted": Rule(W, "an indexable page the crawl found that no sitemap lists: a missing page"),
    "audit.unlisted_trap": Rule(
        W, "the same, but like a crawler trap: in an endless series, or a path repeating itself (listed last)"
    ),
    "audit.orphan": Rule(W, "a listed URL no crawled page links to"),
    "audit.lastmod_after_page": Rule(
        W, "a lastmod later than the date the page gives itself (its metadata, else its Last-Modified header)"
    ),
    "audit.lastmod_uniform": Rule(
        W, "one lastmod on nearly all listed URLs (a build time, not a change time)"
    ),
    "audit.crawl_incomplete": Rule(
        W, "the crawl was cut short (a limit, a stop): orphans and pages in no sitemap may be more or fewer"
    ),
}

RULES: Final[dict[str, Rule]] = {**VALIDATE_RULES, **AUDIT_RULES}

#: Findings kept per file and rule; the rest are only counted (a file can have 50,000 bad URLs).
MAX_LISTED_PER_RULE: Final = 100


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    file: str | None  # None: a finding of the crawl, about no file (``scrapy audit``)
    line: int | None
    detail: str
    url: str | None = None

    @property
    def severity(self) -> Severity:
        return RULES[self.rule].severity

    def as_json(self) -> dict[str, object]:
        """The JSON shape of a finding, shared with ``scrapy audit``."""
        return {
            "rule": self.rule,
            "severity": str(self.severity),
            "url": self.url,
            "file": self.file,
            "line": self.line,
            "detail": self.detail,
        }

    def as_text(self) -> str:
        where = self.file or self.url or "-"
        where = where if self.line is None else f"{where}:{self.line}"
        return f"{where}: {self.severity} [{self.rule}] {self.detail}"


class FindingLog:
    """Every finding counted; the first ``limit`` of each rule in each file kept (None: all)."""

    def __init__(self, limit: int | None = MAX_LISTED_PER_RULE) -> None:
        self.limit = limit
        self.listed: list[Finding] = []
        self.by_rule: Counter[str] = Counter()
        self._per_file: Counter[tuple[str | None, str]] = Counter()

    def add(self, finding: Finding) -> None:
        if finding.rule not in RULES:
            raise KeyError(f"undocumented rule {finding.rule!r}")
        self.by_rule[finding.rule] += 1
        key = (finding.file, finding.rule)
        self._per_file[key] += 1
        if self.limit is None or self._per_file[key] <= self.limit:
            self.listed.append(finding)

    def count(self, severity: Severity) -> int:
        return sum(n for rule, n in self.by_rule.items() if RULES[rule].severity is severity)

    @property
    def not_listed(self) -> int:
        return sum(self.by_rule.values()) - len(self.listed)

    def count_more(self, rule: str, number: int) -> None:
        """Count findings of ``rule`` that are not listed one by one."""
        self.by_rule[rule] += number

"""HTTP and page dates in, W3C Datetime out: the page's true last modification or nothing.

The lastmod of a page (:func:`choose_lastmod`): with a history, an unchanged content fingerprint
keeps the lastmod in force; otherwise, in this order of evidence, the date its metadata gives, if
plausible (and, the content changed, later than the lastmod in force); its ``Last-Modified`` header
unless that is the response's own time or later, moves while the content does not, or (the content
changed) is no later than the lastmod in force; its content history (a changed fingerprint is
dated at this fetch); otherwise none. Never the crawl time for a page with no evidence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime
from functools import lru_cache
from typing import Any

from sitemap_spider.crawl.fingerprint import same_content
from sitemap_spider.crawl.pages import page_tags
from sitemap_spider.sitemaps import EARLIEST_LASTMOD, InvalidEntryError, parse_lastmod

# The delay-seconds form of Retry-After.
_DELTA_SECONDS = re.compile(r"\d+(?:\.\d+)?")

# Real servers still send the two obsolete forms RFC 9110 section 5.6.7 asks
# recipients to accept; email.utils does not read them.
_OBSOLETE_FORMATS = (
    "%A, %d-%b-%y %H:%M:%S GMT",  # RFC 850
    "%a %b %d %H:%M:%S %Y",  # asctime(), with a space-padded day
)
_IMF_FIXDATE = re.compile(r"[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT")
# email.utils reads a four-digit year under 100 as a two-digit one: .NET's DateTime.MinValue,
# "Mon, 01 Jan 0001 00:00:00 GMT", became 2001, and "0069" 1969. A year written with a leading
# zero is read as no date. A zone such as "+0100" or "-0100" is not a year, but a dash after the
# month is: email.utils also reads the RFC 850 layout with a four-digit year, "01-Jan-0001" (the
# Netscape cookie form), where the same year became 2001.
_ZERO_LED_YEAR = re.compile(r"(?:(?<=[A-Za-z]-)|(?<![+\-:\d]))0\d{3}(?!\d)")


def parse_http_date(value: str | bytes | None) -> datetime | None:
    """Parse an HTTP-date header value into an aware UTC datetime, or ``None``.

    A value without a zone is not an instant, so it is refused rather than guessed.

    >>> parse_http_date("Wed, 01 May 2024 10:20:30 GMT").isoformat()
    '2024-05-01T10:20:30+00:00'
    """
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if not value or not value.strip():
        return None
    if len(value) > 64:  # not an HTTP date (29 characters): not worth a place in the cache
        return _parse_http_date.__wrapped__(value)
    return _parse_http_date(value)


# Each response's Date and most of a site's Last-Modified values repeat from page to page
# (a second's answers, a static site's build time): each is parsed once (1% of a crawl's CPU).
@lru_cache(maxsize=256)
def _parse_http_date(value: str) -> datetime | None:
    text = " ".join(value.split())
    if _ZERO_LED_YEAR.search(text):
        return None
    if _IMF_FIXDATE.fullmatch(text):
        # The form RFC 9110 asks senders for, on nearly every response: read it without first
        # failing through the obsolete forms (two strptime exceptions cost 10x the parse).
        try:
            return parsedate_to_datetime(text).astimezone(UTC)
        except ValueError:
            return None  # "31 Feb"
    for fmt in _OBSOLETE_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    try:
        parsed = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed.tzinfo is None:
        return None
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        return None  # "31 Dec 9999 23:59:59 -0100": past what a datetime holds once in UTC


def w3c_datetime(moment: datetime) -> str:
    """Format an aware datetime as W3C Datetime with seconds and a numeric zone."""
    if moment.tzinfo is None:
        raise ValueError("a W3C date-time needs a timezone")
    return moment.replace(microsecond=0).isoformat()


def lastmod_from_header(value: str | bytes | None) -> str | None:
    """The ``<lastmod>`` for a ``Last-Modified`` header value, ``None`` when unusable."""
    parsed = parse_http_date(value)
    return None if parsed is None or parsed < EARLIEST_LASTMOD else w3c_datetime(parsed)


# --- what the page says of its own date ------------------------------------------
#: A Last-Modified this close to the response's Date (or its receipt) is the response's time.
RESPONSE_TIME_SLACK = timedelta(seconds=10)
#: The elements that date a page, in order of trust: (tag, attribute, its value, the attribute
#: with the date).
_META_DATES = (
    ("meta", "property", "article:modified_time", "content"),
    ("meta", "property", "og:updated_time", "content"),
    ("meta", "itemprop", "dateModified", "content"),
    ("time", "itemprop", "dateModified", "datetime"),
)
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class PageDate:
    """A date a page gives: the instant to compare, and the W3C Datetime to write."""

    moment: datetime
    text: str


def parse_page_date(value: str | None) -> PageDate | None:
    """An ISO 8601 date or date-time from page metadata; a time without a zone counts as its date only."""
    value = (value or "").strip()
    if _DATE_ONLY.fullmatch(value):
        try:
            day = date.fromisoformat(value)
        except ValueError:
            return None
        return PageDate(datetime(day.year, day.month, day.day, tzinfo=UTC), value)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        day = parsed.date()
        return PageDate(datetime(day.year, day.month, day.day, tzinfo=UTC), day.isoformat())
    try:
        moment = parsed.astimezone(UTC)
    except OverflowError:
        # "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00": no instant a datetime holds in
        # UTC. A page gave it, so it is no date, not a crash that drops the page from the sitemap.
        return None
    return PageDate(moment, w3c_datetime(parsed))


def _json_ld_dates(data: Any) -> Iterator[Any]:
    """``dateModified`` values of a JSON-LD document, the top level before ``@graph`` and nested nodes."""
    queue = [data]
    while queue:
        node = queue.pop(0)
        if isinstance(node, list):
            queue.extend(node)
        elif isinstance(node, dict):
            if "dateModified" in node:
                yield node["dateModified"]
            queue.extend(value for value in node.values() if isinstance(value, (dict, list)))


def metadata_date(root: Any, response_time: datetime) -> PageDate | None:
    """The page's own modification date (JSON-LD, then meta tags), if plausible: not the
    response's own time (within RESPONSE_TIME_SLACK) or after it. A date before the web
    (``EARLIEST_LASTMOD``, sitemaps/rules.py) is passed over for the next source."""
    tags = page_tags(root)
    candidates: list[Any] = []
    for script in tags.json_ld:
        try:
            candidates.extend(_json_ld_dates(json.loads(script.text or "")))
        except ValueError:
            continue  # broken JSON-LD is common; the other sources may still say
    for tag, attribute, value, dated_by in _META_DATES:
        elements = tags.metas if tag == "meta" else tags.times
        candidates.extend(
            element.get(dated_by) for element in elements
            if element.get(attribute) == value and element.get(dated_by) is not None
        )
    for candidate in candidates:
        found = parse_page_date(candidate if isinstance(candidate, str) else None)
        if found is None or found.moment < EARLIEST_LASTMOD:
            # No date, or a CMS's zero time written for none (Hugo's 0001-01-01, the Unix epoch),
            # as an unreadable one is: another source of the page may have the date.
            continue
        # After the response, the page's clock or its CMS is wrong, and its other dates with it;
        # within the slack of it, a template stamping "now" (new Date() in a JSON-LD), as a
        # Last-Modified is refused: first in line, it would date every page at the crawl. Their
        # difference, not a moment plus the slack: 31 Dec 9999 23:59:55 plus it is past datetime.max.
        return found if response_time - found.moment > RESPONSE_TIME_SLACK else None
    return None


# --- the lastmod to write -----------------------------------------------------------
@dataclass(frozen=True)
class Prior:
    """What the crawl history holds of a page: its fingerprint, Last-Modified and lastmod in force."""

    fingerprint: str | None
    last_modified: str | None
    lastmod: str | None


@dataclass(frozen=True)
class Evidence:
    """What one fetch of a page says about its date."""

    last_modified: str | None  # the header as sent
    response_time: datetime  # the Date header, else the time of receipt
    metadata: PageDate | None
    fingerprint: str | None
    fetched_at: datetime


def header_date(evidence: Evidence, prior: Prior | None) -> str | None:
    """The Last-Modified header as a lastmod, unless it is the response's time or later, before the
    web, or moves alone."""
    moment = parse_http_date(evidence.last_modified)
    if moment is None or moment < EARLIEST_LASTMOD:
        return None  # unreadable, or a placeholder
    if moment >= evidence.response_time - RESPONSE_TIME_SLACK:
        # Within the slack of the response's time it was stamped "now" and says nothing about
        # the content. Later than that, it is a clock ahead or a CMS's bug: RFC 9110 section
        # 8.8.2.1 has an origin never send a Last-Modified after its Date, and metadata after
        # the response is refused too. The slack also covers Date and Last-Modified being read
        # from the clock at different moments and rounded to whole seconds.
        return None
    if (
        prior is not None
        and same_content(prior.fingerprint, evidence.fingerprint)
        and prior.last_modified is not None
        and parse_http_date(prior.last_modified) != moment
    ):
        return None  # moves while the content does not
    return w3c_datetime(moment)


def stored_lastmod(lastmod: str | None, last_modified: str | None) -> str | None:
    """The lastmod a history record holds, unless these rules refuse it: before the web, or the
    reading of a ``Last-Modified`` they no longer read (``last_modified``, the header as stored).

    A history written before those rules would keep it for ever: a 304 lists the page as its
    record has it, and an unchanged page keeps the lastmod in force.
    """
    if lastmod is None:
        return None
    header_read = last_modified is None or parse_http_date(last_modified) is not None
    if "1991" < lastmod[:4] <= "9999" and header_read:
        # Nearly every record, twice a page of a recrawl: the year is enough, the history holding
        # only lastmods a crawl wrote (W3C Datetimes, the year first).
        return lastmod
    try:
        instant = parse_lastmod(lastmod)
    except InvalidEntryError:
        return None
    if instant < EARLIEST_LASTMOD:
        return None  # 1970-01-01T00:00:01 of a Nix store's header, as earlier releases published it
    if last_modified is not None and not header_read:
        # .NET's "Mon, 01 Jan 0001 00:00:00 GMT", which email.utils read as 2001-01-01.
        try:
            read = parsedate_to_datetime(" ".join(last_modified.split()))
        except (TypeError, ValueError, IndexError):
            return lastmod
        if read.tzinfo is not None and read == instant:
            return None
    return lastmod


def choose_lastmod(evidence: Evidence, prior: Prior | None) -> str | None:
    """The ``<lastmod>``: page metadata, Last-Modified, content history, or nothing; never the crawl time.

    With a history, content whose fingerprint did not change keeps the lastmod in force, whatever
    its header or metadata now say: a deploy that touches every file moves every Last-Modified,
    and a header refused for that at one crawl, steady at the next, or the page's metadata in
    between, each dated the page anew (a lastmod that flipped at every crawl, a change to tell
    IndexNow each time). The sources date a page seen first, changed, or without a lastmod yet.

    The page's own metadata comes before its Last-Modified: on static hosting the header is the
    deploy's time, the same for every page, where the page's dateModified is its own. Metadata no
    later than the lastmod in force of a page whose content changed is stale (a CMS that does not
    restamp it): the header, else the history, dates the change; so is a header no later than it (one
    that stayed while the content changed, a script's file time on a CMS page).
    """
    if prior is not None and prior.lastmod is not None and evidence.fingerprint is not None:
        if same_content(prior.fingerprint, evidence.fingerprint):
            return prior.lastmod
    metadata = evidence.metadata
    if metadata is not None and not _no_later(metadata.moment, prior):
        return metadata.text
    from_header = header_date(evidence, prior)
    if from_header is not None and not _no_later(from_header, prior):
        return from_header
    if prior is None or evidence.fingerprint is None:
        return None  # seen for the first time, no evidence
    if same_content(prior.fingerprint, evidence.fingerprint):
        return prior.lastmod
    return w3c_datetime(evidence.fetched_at)  # changed since the last crawl: first seen now


def _no_later(moment: datetime | str, prior: Prior | None) -> bool:
    """Whether a date of the page (its metadata's, its header's lastmod) is no later than the lastmod in
    force: stale for a changed page, whose change came after the crawl that saw the lastmod in force.

    Compared as written, to the second: a dateModified of 10:39:15.951 is the lastmod 10:39:15 in force.
    A lastmod text is read only when there is a lastmod in force (not on a first crawl's every page).
    """
    if prior is None or prior.lastmod is None:
        return False
    try:
        if isinstance(moment, str):
            moment = parse_lastmod(moment)
        return moment.replace(microsecond=0) <= parse_lastmod(prior.lastmod)
    except InvalidEntryError:
        return False


def retry_after_seconds(value: str | bytes | None, now: datetime) -> float | None:
    """Seconds a ``Retry-After`` value asks to wait from ``now``; None if absent or unreadable.

    Both forms of RFC 9110 section 10.2.3 are read: a number of seconds and an
    HTTP-date (a date already past means no wait).
    """
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    text = (value or "").strip()
    if not text:
        return None
    if _DELTA_SECONDS.fullmatch(text):
        return float(text)
    moment = parse_http_date(text)
    if moment is None:
        return None
    return max(0.0, (moment - now).total_seconds())

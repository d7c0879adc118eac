"""Rules: what an entry must be to be written, and the reading of its lastmod. All pure.

``check_entry`` accepts only entries whose ``<url>`` validates against the official sitemap.xsd
(as libxml2 applies it) and follows the protocol, so that one bad page is refused on its own
instead of failing the XSD validation of a whole sitemap set at publish time. Where the two
differ it follows the stricter: W3C Datetime allows "2024" and "2024-05" but the XSD does not,
so they are refused.
"""

from __future__ import annotations

import functools
import ipaddress
import math
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Final

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.limits import MAX_LOC_LENGTH, MIN_LOC_LENGTH

# sitemap.xsd's tChangeFreq, from the most to the least frequent.
CHANGEFREQ_VALUES: Final = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
CHANGEFREQS: Final = frozenset(CHANGEFREQ_VALUES)

# The W3C Datetime profile (www.w3.org/TR/NOTE-datetime): YYYY, YYYY-MM, YYYY-MM-DD,
# or a date-time with hh:mm, hh:mm:ss or hh:mm:ss.s+ and a mandatory zone.
_W3C_DATETIME = re.compile(
    r"(?P<year>\d{4})"
    r"(?:-(?P<month>\d{2})"
    r"(?:-(?P<day>\d{2})"
    r"(?:T(?P<hour>\d{2}):(?P<minute>\d{2})"
    r"(?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?"
    r"(?P<zone>Z|[+-]\d{2}:\d{2}))?)?)?",
    re.ASCII,
)
# Fast path of parse_lastmod: the forms sites and CMSs actually write (a date, or a date-time
# with seconds and a zone), with every field already in range, so that only the day of the
# month is left for datetime to check. Anything else takes the general path.
_COMMON_LASTMOD = re.compile(
    r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
    r"(?:T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,6})?(?:Z|[+-](?:0\d|1[0-3]):[0-5]\d|[+-]14:00))?",
    re.ASCII,
)
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
# Fast path of check_loc: a subset of what the full checks accept (lower- or upper-case
# http(s), a plain host, a port of at most 4 digits, no "%", "#", "[" or "]"): such a URL
# passes every one of them, so it is accepted after one regex instead of five.
_PLAIN_LOC = re.compile(
    r"(?:https?|HTTPS?)://[A-Za-z0-9.\-]+(?::[0-9]{1,4})?(?:[/?][A-Za-z0-9\-._~!$&'()*+,;=:@/?]*)?",
    re.ASCII,
)
# An absolute URL split the RFC 3986 way (appendix B), with "://" required. One regex is
# several times faster than urlsplit, and this runs once per URL of a site.
_URL = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://(?P<authority>[^/?#]*)(?P<rest>[^#]*)"
    r"(?:#(?P<fragment>.*))?",
    re.ASCII | re.DOTALL,
)
_SUB_DELIMS_UNRESERVED = r"A-Za-z0-9\-._~!$&'()*+,;=%"
# authority = [userinfo "@"] (IP-literal | reg-name) [":" port]
_AUTHORITY = re.compile(
    rf"(?:[{_SUB_DELIMS_UNRESERVED}:]*@)?"
    rf"(?:\[(?P<literal>[^\[\]]*)\]|[{_SUB_DELIMS_UNRESERVED}]+)"
    r"(?::(?P<port>[0-9]+))?",
    re.ASCII,
)
_IP_FUTURE = re.compile(rf"[vV][0-9A-Fa-f]+\.[{_SUB_DELIMS_UNRESERVED}:]+", re.ASCII)
_MAX_ZONE_OFFSET = timedelta(hours=14)  # the XSD date/time types allow -14:00..+14:00
#: The web's first pages were served at the end of 1990: a page's date before this one is a
#: placeholder, not a change (the Unix epoch of a file whose time was zeroed, as a Nix store
#: serves 1970-01-01T00:00:01; the DOS epoch zip archives give their files, 1980-01-01; .NET's
#: DateTime.MinValue, 0001-01-01). The crawl writes no such lastmod, and validate warns of one.
EARLIEST_LASTMOD = datetime(1991, 1, 1, tzinfo=UTC)
# A date alone parses as midnight UTC: it has begun somewhere once midnight at +14:00 has passed.
_DATE_LEAD = timedelta(hours=14)
# A date-time a few minutes ahead is a clock's drift, not a date from the future.
_CLOCK_SKEW = timedelta(minutes=5)


def lastmod_oddity(value: str, instant: datetime, now: datetime) -> str | None:
    """``"placeholder"`` for a lastmod before the web, ``"future"`` for one later than ``now``, else None.

    ``instant`` is ``parse_lastmod(value)``; ``now`` an aware datetime. Search engines distrust a
    site's lastmods once they meet such dates: validate warns of them, publish counts them.
    """
    if instant < EARLIEST_LASTMOD:
        return "placeholder"
    begins = instant - _DATE_LEAD if "T" not in value else instant - _CLOCK_SKEW
    return "future" if begins > now else None


def w3c_lastmod(text: str) -> str:
    """``text`` (stripped) as a lastmod: as it is when it has the W3C Datetime form (``parse_lastmod``
    then says whether it is a valid one); else, when it is an ISO 8601 date-time with a zone that
    is not that form (``+0530`` for ``+05:30``, a space for the ``T``: what the crawl reads in pages,
    crawl/dates.py), its W3C form with seconds; else as it is, for ``parse_lastmod`` to refuse."""
    text = text.strip()
    if _W3C_DATETIME.fullmatch(text):
        return text
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text
    if moment.utcoffset() is None:
        return text  # a naive date-time: its instant is unknown
    return moment.replace(microsecond=0).isoformat()


def parse_lastmod(value: str) -> datetime:
    """Return the instant a lastmod names, as an aware datetime (a date is midnight UTC).

    Raises InvalidEntryError for anything that is not a W3C Datetime sitemap.xsd accepts.
    """
    if _COMMON_LASTMOD.fullmatch(value):
        try:
            instant = datetime.fromisoformat(value)
        except ValueError:
            pass  # a day the month does not have: the general path says so
        else:
            return instant if instant.tzinfo is not None else instant.replace(tzinfo=UTC)
    match = _W3C_DATETIME.fullmatch(value)
    if match is None:
        raise InvalidEntryError(
            f"lastmod {value!r} is not a W3C Datetime: use YYYY-MM-DD or "
            "YYYY-MM-DDThh:mm:ss[.s] with a zone (Z or +hh:mm), the forms sitemap.xsd accepts"
        )
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    if day is None:
        # Valid W3C Datetime, but sitemap.xsd's tLastmod is xsd:date | xsd:dateTime,
        # which both need a full date: writing it would make the whole file invalid.
        raise InvalidEntryError(
            f"lastmod {value!r} has only year or month precision, which sitemap.xsd "
            "rejects: give a full date (YYYY-MM-DD) or leave lastmod out"
        )
    try:
        if hour is None:
            return datetime(int(year), int(month), int(day), tzinfo=UTC)
        return datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second or 0),
            int(fraction[:6].ljust(6, "0")) if fraction else 0,
            _parse_zone(zone),
        )
    except ValueError as exc:
        raise InvalidEntryError(f"lastmod {value!r} is not a real date/time: {exc}") from exc


@functools.lru_cache(maxsize=256)  # a site uses a handful of zones; building one is slow
def _parse_zone(text: str) -> timezone:
    if text == "Z":
        return UTC
    hours, minutes = int(text[1:3]), int(text[4:6])
    if minutes > 59:
        raise ValueError(f"zone minutes {minutes} out of range")
    offset = timedelta(hours=hours, minutes=minutes)
    if offset > _MAX_ZONE_OFFSET:
        raise ValueError(f"zone {text} is beyond +/-14:00")
    return timezone(-offset if text[0] == "-" else offset)


def check_loc(loc: object) -> None:
    """Raise InvalidEntryError unless ``loc`` is a URL a sitemap may list."""
    if not isinstance(loc, str):
        raise InvalidEntryError(f"loc must be a str, not {type(loc).__name__}")
    if len(loc) > MAX_LOC_LENGTH:
        raise InvalidEntryError(
            f"loc is {len(loc)} characters long, the limit is {MAX_LOC_LENGTH}: {loc[:80]!r}..."
        )
    # Fast paths first: this runs once per URL of the crawl and of `scrapy publish`.
    if MIN_LOC_LENGTH <= len(loc) and _PLAIN_LOC.fullmatch(loc):
        return
    if not (loc.isascii() and loc.isprintable()) or " " in loc:
        _reject_bad_characters(loc)
    url = _URL.fullmatch(loc)
    if url is None or url["scheme"].lower() not in ("http", "https") or not url["authority"]:
        raise InvalidEntryError(f"loc is not an absolute http(s) URL with a host: {loc!r}")
    _check_authority(url["authority"], loc)
    # What follows are RFC 3986 rules that libxml2 enforces on xsd:anyURI.
    if _BAD_PERCENT.search(loc):
        raise InvalidEntryError(f"loc has a '%' not followed by two hex digits: {loc!r}")
    after_host = url["rest"] + (url["fragment"] or "")
    if "[" in after_host or "]" in after_host:
        raise InvalidEntryError(f"loc has '[' or ']' outside an IPv6 host, encode them as %5B/%5D: {loc!r}")
    if url["fragment"] and "#" in url["fragment"]:
        raise InvalidEntryError(f"loc has a second '#', encode it as %23: {loc!r}")
    if len(loc) < MIN_LOC_LENGTH:
        raise InvalidEntryError(
            f"loc {loc!r} is shorter than the {MIN_LOC_LENGTH} characters sitemap.xsd requires"
        )


def _check_authority(authority: str, loc: str) -> None:
    match = _AUTHORITY.fullmatch(authority)
    if match is None:
        raise InvalidEntryError(f"loc has an invalid host or port {authority!r}: {loc!r}")
    if match["port"] is not None and int(match["port"]) > 65535:
        raise InvalidEntryError(f"loc has a port out of range 0-65535: {loc!r}")
    literal = match["literal"]
    if literal is not None and not _IP_FUTURE.fullmatch(literal) and not _is_ipv6(literal):
        raise InvalidEntryError(f"loc has an invalid IPv6 host [{literal}]: {loc!r}")


def _is_ipv6(text: str) -> bool:
    if "%" in text:  # a zone identifier (RFC 6874) has no place in a public URL
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _reject_bad_characters(loc: str) -> None:
    for char in loc:
        if char.isspace():
            raise InvalidEntryError(f"loc contains whitespace {char!r}: {loc!r}")
        if not char.isascii():
            raise InvalidEntryError(f"loc contains non-ASCII {char!r}, it must be percent-encoded: {loc!r}")
        if not char.isprintable():
            raise InvalidEntryError(f"loc contains control character {char!r}: {loc!r}")


def check_entry(entry: SitemapEntry) -> None:
    """Raise InvalidEntryError, with the reason, unless ``entry`` can be written."""
    check_fields(entry.loc, entry.lastmod, entry.changefreq, entry.priority)


def check_fields(
    loc: object, lastmod: object = None, changefreq: object = None, priority: object = None
) -> None:
    """``check_entry`` for an entry given by its fields (no dataclass built on the hot path)."""
    check_loc(loc)
    if lastmod is not None:
        if not isinstance(lastmod, str):
            raise InvalidEntryError(f"lastmod must be a W3C Datetime str, not {type(lastmod).__name__}")
        parse_lastmod(lastmod)
    if changefreq is not None and (not isinstance(changefreq, str) or changefreq not in CHANGEFREQS):
        raise InvalidEntryError(f"changefreq {changefreq!r} is not one of {', '.join(sorted(CHANGEFREQS))}")
    if priority is not None:
        _check_priority(priority)


def _check_priority(priority: object) -> None:
    if isinstance(priority, bool) or not isinstance(priority, (int, float)):
        raise InvalidEntryError(f"priority must be a number, not {type(priority).__name__}")
    if math.isnan(priority) or not 0.0 <= priority <= 1.0:
        raise InvalidEntryError(f"priority {priority!r} is outside 0.0-1.0")

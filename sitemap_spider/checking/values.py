"""Pure checks of the values of one ``<url>`` (or ``<sitemap>``): loc, lastmod, changefreq, priority.

Each returns the problems found as ``(rule, detail)`` pairs, an empty list when the value is
fine. The writer's own checks (sitemaps/xml/elements.py) decide what is valid; these only say which
rule a refused value breaks, so that a report names the cause rather than the XSD's symptom.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Final
from urllib.parse import urlsplit

from sitemap_spider.sitemaps import (
    CHANGEFREQS,
    CHANGEFREQ_VALUES,
    MAX_LOC_LENGTH,
    InvalidEntryError,
    check_loc,
    lastmod_oddity,
    normalize_url,
    parse_lastmod,
    remove_dot_segments,
)

Problem = tuple[str, str]

_SCHEME: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_STRAY_PERCENT: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_ENTITY: Final = re.compile(r"&(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9A-Fa-f]+);")
_TIME_WITHOUT_ZONE: Final = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?", re.ASCII)
# W3C Datetime allows hh:mm without seconds; sitemap.xsd's xsd:dateTime does not.
_NO_SECONDS: Final = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(Z|[+-]\d{2}:\d{2})?", re.ASCII)
_DECIMAL: Final = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)", re.ASCII)
# A date names a day that begins 14 hours earlier in the easternmost zone (+14:00); a time
# a little ahead of our clock is clock skew, not a future change.


#: The rules of loc_problems that are warnings: the URL is still listed.
LOC_WARNINGS: Final = frozenset(("loc.double_escaped", "loc.fragment"))


def loc_problems(loc: str) -> list[Problem]:
    """The rules a loc (white space around it already removed) breaks; at most one error, and
    the warnings of LOC_WARNINGS."""
    problems = [_loc_problem(loc)]
    if _ENTITY.search(loc):
        problems.append(("loc.double_escaped", f"{_cut(loc)} still holds an XML entity after decoding"))
    if problems[0] is None and "#" in loc:
        # A page's part, not a page: search engines take the URL before it (or drop the entry).
        page = _cut(loc.split("#")[0])
        detail = f"{_cut(loc)} has a #fragment, which search engines drop: list {page}"
        problems.append(("loc.fragment", detail))
    return [problem for problem in problems if problem is not None]


def _loc_problem(loc: str) -> Problem | None:
    if len(loc) > MAX_LOC_LENGTH:
        return "loc.too_long", f"{len(loc):,} characters, the limit is {MAX_LOC_LENGTH:,}: {_cut(loc)}"
    scheme = _SCHEME.match(loc)
    if scheme is None:
        return "loc.not_absolute", f"{_cut(loc)} is not an absolute URL"
    if scheme.group(1).lower() not in ("http", "https"):
        return "loc.scheme", f"{_cut(loc)} is not http or https"
    if not loc[scheme.end() :].startswith("//"):
        return "loc.not_absolute", f"{_cut(loc)} has no '//' and host"
    bad = _unencoded(loc)
    if bad is not None:
        return "loc.not_encoded", f"{_cut(loc)} has {bad}; percent-encode it ({_encoded_hint(loc)})"
    try:
        check_loc(loc)
    except InvalidEntryError as exc:
        return "loc.invalid", str(exc)
    return None


def _unencoded(loc: str) -> str | None:
    # Fast path: isprintable() is False for every white space but " ", and for control characters.
    if loc.isascii() and loc.isprintable() and " " not in loc:
        return "a '%' not followed by two hex digits" if _STRAY_PERCENT.search(loc) else None
    for char in loc:
        if char.isspace():
            return f"white space {char!r}"
        if not char.isascii():
            return f"raw non-ASCII {char!r}"
        if not char.isprintable():
            return f"control character {char!r}"
    if _STRAY_PERCENT.search(loc):
        return "a '%' not followed by two hex digits"
    return None


def _encoded_hint(loc: str) -> str:
    try:
        normal = normalize_url(loc)
    except UnicodeError:
        normal = None
    return f"as {_cut(normal)}" if normal else "UTF-8, %XX"


def _cut(text: str, limit: int = 120) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def lastmod_problems(value: str, now: datetime) -> list[Problem]:
    """The rules a lastmod breaks; ``now`` is an aware datetime."""
    no_seconds = _NO_SECONDS.fullmatch(value)
    if _TIME_WITHOUT_ZONE.fullmatch(value):
        seconds = " and the seconds (sitemap.xsd needs hh:mm:ss)" if no_seconds else ""
        return [("lastmod.timezone", f"{value!r} gives a time and no zone: add the zone (Z or +hh:mm){seconds}")]
    if no_seconds:
        fixed = f"{no_seconds.group(1)}:00{no_seconds.group(2)}"
        return [("lastmod.format", f"{value!r} has no seconds, which sitemap.xsd requires of a time: write {fixed!r}")]
    try:
        instant = parse_lastmod(value)
    except InvalidEntryError as exc:
        return [("lastmod.format", str(exc))]
    oddity = lastmod_oddity(value, instant, now)
    if oddity == "placeholder":
        return [("lastmod.placeholder", f"{value!r} is before the web (1991): a placeholder, not the page's change")]
    if oddity == "future":
        return [("lastmod.future", f"{value!r} is later than now ({now:%Y-%m-%dT%H:%M:%SZ})")]
    return []


def changefreq_problems(value: str) -> list[Problem]:
    if value in CHANGEFREQS:
        return []
    hint = " (the values are lower case)" if value.lower() in CHANGEFREQS else ""
    return [("changefreq.invalid", f"{value!r} is not one of {', '.join(CHANGEFREQ_VALUES)}{hint}")]


def priority_problems(value: str) -> list[Problem]:
    if _DECIMAL.fullmatch(value) and 0.0 <= float(value) <= 1.0:
        return []
    return [("priority.invalid", f"{value!r} is not a decimal from 0.0 to 1.0")]


def scope_of(location: str) -> tuple[str, str] | None:
    """The origin and directory path a sitemap served at ``location`` may list URLs under."""
    normal = normalize_url(location)
    if normal is None:
        return None
    parts = urlsplit(normal)
    return f"{parts.scheme}://{parts.netloc}", parts.path[: parts.path.rfind("/") + 1]


def in_scope(loc: str, scope: tuple[str, str]) -> bool:
    """True if a (valid) loc is on the scope's origin and under its directory (sitemaps.org)."""
    try:
        normal = normalize_url(loc)
    except UnicodeError:
        return False
    if normal is None:
        return False
    parts = urlsplit(normal)
    origin, directory = scope
    return f"{parts.scheme}://{parts.netloc}" == origin and remove_dot_segments(parts.path).startswith(
        directory
    )

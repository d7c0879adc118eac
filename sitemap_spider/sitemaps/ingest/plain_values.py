"""Checks of a whole block of entry values at once, in a few C-level passes over their joined text.

They accept a strict subset of what ``xml.check_fields`` accepts (plain http(s) URLs of one
site, percent-escapes allowed, lastmods of the fixed-width forms, digests without a separator): what they pass is encoded
as the general path would encode it. Used by the fast paths of ``chunk.py`` and ``jsonl_entries.py``.
"""

from __future__ import annotations

import collections
import re
import string
from datetime import datetime
from typing import Final

from sitemap_spider.sitemaps.limits import MAX_LOC_LENGTH, MIN_LOC_LENGTH

# The characters of xml._PLAIN_LOC: a host of letters, digits, "." and "-" (no port), then
# "/" and RFC 3986 path/query characters without "#", "[" or "]", and "%" in an escape.
_HOST_BYTES: Final = (string.ascii_letters + string.digits + ".-").encode()
_PLAIN_BYTES: Final = (string.ascii_letters + string.digits + "-._~!$&'()*+,;=:@/?%").encode()
_BAD_PERCENT: Final = re.compile(rb"%(?![0-9A-Fa-f]{2})")
# A lastmod's shape: its bytes with every digit turned into "0".
_DIGITS_TO_ZERO: Final = bytes.maketrans(b"123456789", b"000000000")
_DATE: Final = b"0000-00-00"
_DATETIME_UTC: Final = b"0000-00-00T00:00:00Z"
_DATETIME_ZONE: Final = (b"0000-00-00T00:00:00+00:00", b"0000-00-00T00:00:00-00:00")
_SHAPES: Final = frozenset((_DATE, _DATETIME_UTC, *_DATETIME_ZONE))
_PLAIN_BYTES_AND_NEWLINE: Final = _PLAIN_BYTES + b"\n"


def plain_locs(locs: list[str]) -> bool:
    """True if every loc is a plain URL (as xml._PLAIN_LOC, percent-escapes allowed) of the site of the first one."""
    if not locs:
        return True
    first = locs[0]
    if not plain_loc(first) or first.find("/", 8) < 0:
        return False
    origin = first[: first.find("/", 8) + 1]  # "scheme://host/", checked with the first loc
    text = "\n".join(locs)
    count = len(locs)
    # Each loc starts with the origin (no loc holds a newline: the count says so), holds only
    # plain characters, and has a length the XSD accepts: none is shorter than the origin.
    return (
        text.startswith(origin)
        and text.count("\n") == count - 1
        and text.count("\n" + origin) == count - 1
        and not text.encode().translate(None, _PLAIN_BYTES_AND_NEWLINE)
        and ("%" not in text or _BAD_PERCENT.search(text.encode()) is None)
        and (len(origin) >= MIN_LOC_LENGTH or MIN_LOC_LENGTH <= min(map(len, locs)))
        and max(map(len, locs)) <= MAX_LOC_LENGTH
    )


def plain_lastmods(lastmods: list[str]) -> bool:
    """True if every lastmod is a date, or a date-time with seconds and Z or a zone within
    +/-14:00. Only forms that go into the XML as they are (xml.is_verbatim): the chunks'
    verbatim flag counts on it."""
    if not lastmods:
        return True
    shapes = "\n".join(lastmods).encode().translate(_DIGITS_TO_ZERO)
    first = shapes[: len(lastmods[0])]
    # One form in the whole block (the crawl's) is told by one comparison; a CMS mixes them.
    forms = {first} if shapes == b"\n".join([first] * len(lastmods)) else set(shapes.split(b"\n"))
    if not forms <= _SHAPES:
        return False
    if not forms.isdisjoint(_DATETIME_ZONE) and not all(map(_in_range, _zones(lastmods, shapes))):
        return False
    try:
        # The ranges, the day of the month included.
        collections.deque(map(datetime.fromisoformat, lastmods), maxlen=0)
    except ValueError:
        return False
    return True


def _zones(lastmods: list[str], shapes: bytes) -> set[str]:
    """The zones of the lastmods with one ("+hh:mm" or "-hh:mm"); ``shapes`` are their joined shapes."""
    # Only a zone has a "+" or "-" followed by "hh:mm": one zone in every one of them (a site's)
    # is told by counting it, without a step per lastmod.
    zoned = shapes.count(b"+00:00") + shapes.count(b"-00:00")
    at = min(at for at in (shapes.find(b"+00:00"), shapes.find(b"-00:00")) if at >= 0)
    text = "\n".join(lastmods)
    zone = text[at : at + 6]
    if text.count(zone) == zoned:
        return {zone}
    return {value[19:] for value in lastmods if len(value) == len(_DATETIME_ZONE[0])}


def _in_range(zone: str) -> bool:
    """True for a zone within +/-14:00."""
    return zone[1:3] < "14" and zone[4] < "6" or zone[1:] == "14:00"


def plain_digests(digests: list[str]) -> bool:
    """True if no digest holds a tab or a newline (the run line format's separators)."""
    text = "".join(digests)
    return "\t" not in text and "\n" not in text


def plain_loc(loc: str) -> bool:
    """True for a loc of xml._PLAIN_LOC's form, percent-escapes allowed: a strict subset of what check_loc accepts."""
    if not loc.startswith(("https://", "http://")):
        return False
    url = loc.encode()
    slash = url.find(b"/", 8)
    host = url[8 if url[4] == 115 else 7 : slash if slash > 0 else len(url)]  # 115: "s"
    return (
        bool(host)
        and not host.translate(None, _HOST_BYTES)
        and not url.translate(None, _PLAIN_BYTES)
        and (b"%" not in url or _BAD_PERCENT.search(url) is None)
        and MIN_LOC_LENGTH <= len(url) <= MAX_LOC_LENGTH
    )

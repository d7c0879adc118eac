"""Checks of a whole block of entry values at once, in a few C-level passes over their joined text.

They accept a strict subset of what ``xml.check_fields`` accepts (plain http(s) URLs of one
site, lastmods of one fixed-width form, digests without a separator): what they pass is encoded
as the general path would encode it. Used by the fast paths of ``chunk.py`` and ``jsonl_entries.py``.
"""

from __future__ import annotations

import collections
import itertools
import string
from datetime import datetime
from typing import Final

from sitemap_spider.sitemaps.limits import MAX_LOC_LENGTH, MIN_LOC_LENGTH

# The characters of xml._PLAIN_LOC: a host of letters, digits, "." and "-" (no port), then
# "/" and RFC 3986 path/query characters without "%", "#", "[" or "]".
_HOST_BYTES: Final = (string.ascii_letters + string.digits + ".-").encode()
_PLAIN_BYTES: Final = (string.ascii_letters + string.digits + "-._~!$&'()*+,;=:@/?").encode()
# A lastmod's shape: its bytes with every digit turned into "0".
_DIGITS_TO_ZERO: Final = bytes.maketrans(b"123456789", b"000000000")
_DATE: Final = b"0000-00-00"
_DATETIME_UTC: Final = b"0000-00-00T00:00:00Z"
_DATETIME_ZONE: Final = (b"0000-00-00T00:00:00+00:00", b"0000-00-00T00:00:00-00:00")
_PLAIN_BYTES_AND_NEWLINE: Final = _PLAIN_BYTES + b"\n"


def plain_locs(locs: list[str]) -> bool:
    """True if every loc is a plain URL (as xml._PLAIN_LOC) of the site of the first one."""
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
        and (len(origin) >= MIN_LOC_LENGTH or MIN_LOC_LENGTH <= min(map(len, locs)))
        and max(map(len, locs)) <= MAX_LOC_LENGTH
    )


def plain_lastmods(lastmods: list[str]) -> bool:
    """True if every lastmod is of the first one's form: a date, or a date-time with seconds
    and the first one's zone. Only forms that go into the XML as they are (xml.is_verbatim):
    the chunks' verbatim flag counts on it."""
    if not lastmods:
        return True
    shape = lastmods[0].encode().translate(_DIGITS_TO_ZERO)
    count = len(lastmods)
    if shape in _DATETIME_ZONE:
        # One zone within +/-14:00, in every lastmod (its only "+" or "-" followed by "hh:mm").
        zone = lastmods[0][19:]
        if not (zone[1:3] < "14" and zone[4] < "6" or zone[1:] == "14:00"):
            return False
        if "".join(lastmods).count(zone) != count:
            return False
    elif shape != _DATE and shape != _DATETIME_UTC:
        return False
    if "\n".join(lastmods).encode().translate(_DIGITS_TO_ZERO) != b"\n".join(itertools.repeat(shape, count)):
        return False
    try:
        # The ranges, the day of the month included.
        collections.deque(map(datetime.fromisoformat, lastmods), maxlen=0)
    except ValueError:
        return False
    return True


def plain_digests(digests: list[str]) -> bool:
    """True if no digest holds a tab or a newline (the run line format's separators)."""
    text = "".join(digests)
    return "\t" not in text and "\n" not in text


def plain_loc(loc: str) -> bool:
    """True for a loc of xml._PLAIN_LOC's form: a strict subset of what check_loc accepts."""
    if not loc.startswith(("https://", "http://")):
        return False
    url = loc.encode()
    slash = url.find(b"/", 8)
    host = url[8 if url[4] == 115 else 7 : slash if slash > 0 else len(url)]  # 115: "s"
    return (
        bool(host)
        and not host.translate(None, _HOST_BYTES)
        and not url.translate(None, _PLAIN_BYTES)
        and MIN_LOC_LENGTH <= len(url) <= MAX_LOC_LENGTH
    )

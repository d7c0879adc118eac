"""IRIs, spaces and fragments in the locs of ``scrapy publish`` and of items: the crawl's normal form.

A CMS or another spider hands over URLs as people write them: raw UTF-8 paths (an IRI,
``/s20/café-0.html``) and spaces. The rule:

- a fragment (``#top``) is dropped: it names a part of a page, never a page a sitemap lists,
  and search engines ignore it (so ``/a#top`` is ``/a``, and given beside it, a repeated URL).
  It is counted as normalised;
- a loc that is valid as given is otherwise written as given: no host lower-cased, no default port
  dropped, no dot segment resolved, no escape rewritten (existing outputs do not change);
- a loc that holds non-ASCII characters or spaces, and no control character, takes the normal
  form of the crawl's URLs as a whole (``urls.normalize_url``, no query parameter stripped):
  UTF-8 percent-encoded, lower-case scheme and host, no default port, no fragment, dot segments
  resolved, escapes in upper case. It is counted as normalised;
- anything else that is not a valid loc stays a bad line, with its reason.

``normal_fields`` applies it to one entry (the general path; items: item_entries.taken_fields);
``encode_iris`` to a block of locs at once (the fast path of chunk.py), for the IRIs whose normal
form is their percent-encoding (a loc with a fragment never takes the fast path).
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from typing import Final
from urllib.parse import quote_from_bytes

from sitemap_spider.sitemaps.runs.lines import Fields
from sitemap_spider.sitemaps.urls import normalize_url

# What the fast path percent-encodes: spaces and non-ASCII characters (control characters
# are refused before).
_TO_ENCODE: Final = re.compile(rb"[\x20\x80-\xff]+")


def normal_loc(loc: str) -> str | None:
    """The loc without its fragment, and in its normal form if it holds non-ASCII characters or
    spaces and no control character; None for a loc with neither, or that has no normal form
    (not http(s), no host)."""
    base, fragment, _ = loc.partition("#")
    if (base.isascii() and " " not in base) or not base.isprintable():
        return base if fragment else None
    try:
        return normalize_url(base)
    except UnicodeError:  # a lone surrogate, from a JSON escape: no UTF-8 for it
        return None


def normal_fields(fields: Fields) -> tuple[Fields, bool]:
    """``fields`` with the loc in normal form (``normal_loc``) when it needs one; True if it changed."""
    loc = fields[0]
    if isinstance(loc, str):
        normal = normal_loc(loc)
        if normal is not None and normal != loc:
            return (normal, *fields[1:]), True
    return fields, False


def encode_iris(locs: list[str]) -> tuple[list[str], int] | None:
    """``normal_loc`` of every loc that needs it, and their number; None unless each of them is
    certainly its percent-encoding alone (a plain lower-case origin, no "%", dot segment, empty
    query, "'" (w3lib encodes it in a query) or space at the end), for the caller to check again
    as plain locs."""
    # Which locs: C-level steps per loc; the regex (some 10 ns a byte) reads these alone.
    needing = map(operator.not_, map(str.isascii, locs))
    if " " in "".join(locs):
        needing = map(operator.or_, needing, map(operator.contains, locs, itertools.repeat(" ")))
    indexes = list(itertools.compress(range(len(locs)), needing))
    if not indexes:
        return locs, 0
    iris = [locs[index] for index in indexes]
    try:
        # As UTF-8 bytes: a regex scans them several times faster than text with wide characters.
        encoded = _TO_ENCODE.sub(_percent_encoded, "\n".join(iris).encode()).decode("ascii").split("\n")
    except UnicodeEncodeError:  # a lone surrogate
        return None
    if len(encoded) != len(iris):  # a loc held a newline
        return None
    first = iris[0]
    origin = first[: first.find("/", 8) + 1]
    text = "\n".join(iris)
    # One site, the whole origin in lower case; what normalize_url changes besides the
    # percent-encoding does not occur; no control character (isprintable, without newlines).
    if not (
        origin.startswith(("https://", "http://"))
        and origin == origin.lower()
        and text.startswith(origin)
        and text.count("\n" + origin) == len(iris) - 1
        and "%" not in text
        and "'" not in text
        and "/." not in text
        and "?\n" not in text
        and " \n" not in text
        and not text.endswith(("?", " "))
        and "".join(iris).isprintable()
    ):
        return None
    normal = locs.copy()
    for index, loc in zip(indexes, encoded):
        normal[index] = loc
    return normal, len(iris)


@functools.lru_cache(maxsize=4096)  # a site's paths repeat their words
def _quoted(raw: bytes) -> bytes:
    return quote_from_bytes(raw, safe="").encode("ascii")


def _percent_encoded(match: re.Match[bytes]) -> bytes:
    return _quoted(match.group())

"""Which pages an audit found in no sitemap look like a crawler trap rather than a missing page.

Pure functions on the URLs a crawl asked for and the depth it first asked for each. A page is
*trap-like* when

- its path repeats a segment other than a number (``/docs/more/more/``): what relative links
  resolved against their own page build, which the crawl stops following past
  ``SITEMAP_MAX_SEGMENT_REPEATS``; or
- it belongs to an *endless series*: URLs that differ only in their numbers (``/calendar/2031/05``,
  ``/archive?page=88``) that the crawl followed level after level until ``DEPTH_LIMIT``, its own
  rule for endless spaces, stopped it: the series has pages at ``SERIES_DEPTHS`` or more depths,
  the deepest at ``DEPTH_LIMIT`` (so with a ``DEPTH_LIMIT`` of 0 or under ``SERIES_DEPTHS``, none
  is). A calendar or an archive that goes on for ever looks like that to a crawl; the pages of
  a real site, even numbered ones (``/product?id=12``), hang off a few listing pages and stop
  long before.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

#: Depths a series needs, the deepest at DEPTH_LIMIT, to be endless (none is with a lower DEPTH_LIMIT).
SERIES_DEPTHS: Final = 10
_NUMBER: Final = re.compile(r"\d+")
NUMBER_MARK: Final = "{n}"


def url_shape(url: str) -> str:
    """The path and query of ``url`` with every run of digits as ``{n}``: one shape per series."""
    parts = urlsplit(url)
    shape = _NUMBER.sub(NUMBER_MARK, parts.path or "/")
    return f"{shape}?{_NUMBER.sub(NUMBER_MARK, parts.query)}" if parts.query else shape


def repeated_segment(url: str) -> str | None:
    """A segment (not a number) that ``url``'s path holds more than once, or None."""
    seen: set[str] = set()
    for segment in urlsplit(url).path.split("/"):
        if not segment or segment.isdigit():
            continue  # /2024/05/05/ is a date, not a loop
        if segment in seen:
            return segment
        seen.add(segment)
    return None


@dataclass(frozen=True)
class Traps:
    """The endless series of one crawl (shape -> how many URLs of it the crawl asked for)."""

    series: Mapping[str, int]
    depth_limit: int

    def why(self, url: str) -> str | None:
        """Why ``url`` looks like a crawler trap, or None when it looks like a real page."""
        segment = repeated_segment(url)
        if segment is not None:
            return f"its path repeats {segment!r}, as relative links resolved against their own page do"
        shape = url_shape(url)
        if shape in self.series:
            return (
                f"one of {self.series[shape]:,} URLs like {shape}, followed level after level "
                f"down to DEPTH_LIMIT ({self.depth_limit}) without an end"
            )
        return None


def find_traps(depths: Mapping[str, int], depth_limit: int) -> Traps:
    """The endless series among the URLs a crawl asked for (URL -> depth of its first request)."""
    if depth_limit < SERIES_DEPTHS:
        # No limit: nothing stopped a series. A low one: too few levels to tell a walk from a site.
        return Traps({}, depth_limit)
    # Only a series that reached the limit can be endless: the others are not counted at all.
    reached = {url_shape(url) for url, depth in depths.items() if depth >= depth_limit}
    sizes: Counter[str] = Counter()
    levels: dict[str, set[int]] = {shape: set() for shape in reached}
    for url, depth in depths.items():
        shape = url_shape(url)
        if shape in levels:
            sizes[shape] += 1
            levels[shape].add(depth)
    endless = {shape: sizes[shape] for shape, found in levels.items() if len(found) >= SERIES_DEPTHS}
    return Traps(endless, depth_limit)

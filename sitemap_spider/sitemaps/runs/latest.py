"""Which line of a loc given more than once is kept: the one with the latest lastmod.

Run lines (lines.py: ``loc<TAB>lastmod<TAB>...``, the lastmod field ``+text`` or ``-``) are sorted
whole, so the lines of one loc are adjacent: those with a lastmod first (``+`` < ``-``), in the
text order of their lastmods, which is not the order of the instants they name (``10:00Z`` sorts
before ``09:00-05:00``, 14:00 UTC). Of the lines of a loc, the one kept is:

- the one whose lastmod names the latest instant (``rules.parse_lastmod``: a date alone is midnight
  UTC), so an undated line never erases a date, and a newer date is never lost to an older one;
- of lines naming the same instant, or with no lastmod, the first in sort order (the smallest).

That is the greatest line under one total order, so any grouping of the lines keeps the same one:
a run keeps it of its lines, the merge of the runs' ones (``later``'s callers compare each line
with the one kept so far, which sorts before it). The other fields (changefreq, priority, content
digest, extensions) are the kept line's. Repeated locs are rare: the walks find them with the
checks they make anyway, and only then read lastmods.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Final

from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.rules import parse_lastmod

# An absent field (lines.ABSENT, which imports this module).
_ABSENT: Final = "-"
# Before any lastmod: what a lastmod that does not parse counts as (a run holds checked lines).
_NEVER: Final = datetime.min.replace(tzinfo=UTC)


def later(line: str, kept: str) -> bool:
    """True if run line ``line`` is kept instead of ``kept``, a line of the same loc that sorts
    before it: ``line``'s lastmod names a later instant."""
    if line == kept:
        return False
    lastmod = _lastmod_field(line)
    if lastmod == _ABSENT:
        return False  # kept has one, or neither has: the first stays
    other = _lastmod_field(kept)
    return other == _ABSENT or _instant(lastmod[1:]) > _instant(other[1:])


def _lastmod_field(line: str) -> str:
    parts = line.split("\t", 2)
    return parts[1] if len(parts) > 1 else _ABSENT


def _instant(text: str) -> datetime:
    try:
        return parse_lastmod(text)
    except InvalidEntryError:
        return _NEVER


def latest_lines(block: list[str], first: list[bool]) -> list[str]:
    """The kept line of each loc of sorted ``block``, in order; ``first[i]`` is False where line
    ``i`` has the loc of the line before it."""
    kept: list[str] = []
    for line, starts in zip(block, first):
        if starts:
            kept.append(line)
        elif later(line, kept[-1]):
            kept[-1] = line
    return kept


def whole_groups(blocks: Iterable[list[str]]) -> Iterator[list[str]]:
    """The lines of sorted ``blocks``, in blocks that never split the lines of one key (up to the
    first tab, the loc of a run line) between two: the last lines of a block that share its last
    line's key go to the next one.

    The blocks are changed in place (their producers make a new list each time): a copy would
    touch the reference count of every line, which costs more than the walk's own step per line.
    """
    carry: list[str] = []
    for block in blocks:
        if not block:
            continue
        if carry:
            block[:0] = carry
        last = block[-1]
        tab = last.find("\t")
        start = len(block) - 1
        if tab < 0:  # the key is the whole line
            while start and block[start - 1] == last:
                start -= 1
        else:
            key = last[: tab + 1]
            while start and block[start - 1].startswith(key):
                start -= 1
        carry = block[start:]
        if start:
            del block[start:]
            yield block
    if carry:
        yield carry

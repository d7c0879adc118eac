"""An entry as one text line, the form in which it is sorted, merged and read back.

The line is ``loc<TAB>lastmod<TAB>changefreq<TAB>priority<TAB>digest`` where an optional field
is ``-`` when absent and ``+value`` when present, so ``None`` and any string stay distinct.
Lines are compared whole: among entries with the same loc the kept one is the smallest line,
which does not depend on insertion order (an entry with a lastmod sorts before one without,
because ``+`` < ``-``).
"""

from __future__ import annotations

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.errors import InvalidEntryError

_ABSENT = "-"
_PRESENT = "+"


Fields = tuple[str, str | None, str | None, float | None, str | None]


def encode_fields(
    loc: str,
    lastmod: str | None = None,
    changefreq: str | None = None,
    priority: float | None = None,
    content_digest: str | None = None,
) -> str:
    """Return the one-line form of an entry given by its fields (without the newline)."""
    line = "\t".join(
        (
            loc,
            _ABSENT if lastmod is None else _PRESENT + lastmod,
            _ABSENT if changefreq is None else _PRESENT + changefreq,
            _ABSENT if priority is None else _PRESENT + repr(float(priority)),
            _ABSENT if content_digest is None else _PRESENT + content_digest,
        )
    )
    # One check on the joined line is much cheaper than one per field, per entry.
    if line.count("\t") != 4 or "\n" in line:
        raise InvalidEntryError(
            "an entry field contains a tab or newline: "
            f"{SitemapEntry(loc, lastmod, changefreq, priority, content_digest)!r}"
        )
    return line


def encode_entry(entry: SitemapEntry) -> str:
    """Return the one-line form of ``entry`` (without the newline)."""
    return encode_fields(entry.loc, entry.lastmod, entry.changefreq, entry.priority, entry.content_digest)


def decode_fields(line: str) -> Fields:
    """Return ``(loc, lastmod, changefreq, priority, content_digest)`` of a line from ``encode_fields``.

    The publishing loop works on these tuples: building a frozen dataclass per entry
    costs more than everything else it does with it.
    """
    loc, lastmod, changefreq, priority, digest = line.split("\t")
    return (
        loc,
        None if lastmod == _ABSENT else lastmod[1:],
        None if changefreq == _ABSENT else changefreq[1:],
        None if priority == _ABSENT else float(priority[1:]),
        None if digest == _ABSENT else digest[1:],
    )


def decode_entry(line: str) -> SitemapEntry:
    """Return the entry of a line made by ``encode_entry``."""
    return SitemapEntry(*decode_fields(line))

"""An entry as one text line, the form in which it is sorted, merged and read back.

The line is ``loc<TAB>lastmod<TAB>changefreq<TAB>priority<TAB>digest`` where an optional field
is ``-`` when absent and ``+value`` when present, so ``None`` and any string stay distinct.
Lines are compared whole: among entries with the same loc the kept one is the smallest line,
which does not depend on insertion order (an entry with a lastmod sorts before one without,
because ``+`` < ``-``).

The line of a rich entry (images, videos, news: extensions.py) carries their XML after its
priority field's value, behind ``RICH``: ``-\x1f<url xml>\x1f<news date>\x1f<news xml>``. The
publishing loop formats lines without a priority in one step and sends the others to a general
path anyway, so entries without extensions pay nothing for them.
"""

from __future__ import annotations

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.errors import InvalidEntryError

_ABSENT = "-"
_PRESENT = "+"
#: Separates the priority's value from a rich entry's XML, and its parts from each other.
RICH = "\x1f"


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
    priority = priority.partition(RICH)[0]
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


def encode_rich_fields(fields: Fields, url_xml: str, news_date: str, news_xml: str) -> str:
    """``encode_fields`` of an entry with the rendered XML of its extensions (see the module's doc)."""
    line = encode_fields(*fields)
    if not url_xml and not news_xml:
        return line
    payload = RICH.join(("", url_xml, news_date, news_xml))
    if "\t" in payload or "\n" in payload:
        raise InvalidEntryError(f"the extensions of {fields[0]!r} hold a tab or a newline")
    loc, lastmod, changefreq, rest = line.split("\t", 3)
    priority, digest = rest.split("\t")
    return "\t".join((loc, lastmod, changefreq, priority + payload, digest))


def split_rich(priority: str) -> tuple[str, str, str, str]:
    """The priority field of a run line as (priority, url xml, news date, news xml); "" where absent."""
    if RICH not in priority:
        return priority, "", "", ""
    value, url_xml, news_date, news_xml = priority.split(RICH)
    return value, url_xml, news_date, news_xml

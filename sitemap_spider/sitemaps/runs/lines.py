"""The sorting-run line: an entry as one text line, sorted, merged and read back. Every encoder and
decoder of the line is here, the fast ones beside the general ones.

The line is ``loc<TAB>lastmod<TAB>changefreq<TAB>priority<TAB>digest`` where an optional field
is ``-`` when absent and ``+value`` when present, so ``None`` and any string stay distinct.
Lines are compared whole, so the lines of a loc are adjacent; the kept one is the one with the
latest lastmod (latest.py), which does not depend on insertion order. A digest field is also a
line of its own in the runs of digests (``digest_line``), which find the pages that share content
(dedupe.py).

The line of a rich entry (images, videos, news: xml/extensions.py) carries their XML after its
priority field's value, behind ``RICH``: ``-\x1f<url xml>\x1f<news date>\x1f<news xml>``. The
publishing loop formats lines without a priority in one step and sends the others to a general
path anyway, so entries without extensions pay nothing for them.

The fast encoders (``lines_of_columns``, ``loc_only_lines``) take fields that their callers
checked as a block; they write the same lines ``encode_fields`` writes for those fields
(tests/test_entry_lines.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Final

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.runs.latest import later, whole_groups

ABSENT: Final = "-"
PRESENT: Final = "+"
#: Separates the priority's value from a rich entry's XML, and its parts from each other.
RICH: Final = "\x1f"
#: The fields of a line.
FIELD_COUNT: Final = 5
# What follows the loc in the line of an entry with no other field.
_LOC_ONLY: Final = "\t-\t-\t-\t-"

Fields = tuple[str, str | None, str | None, float | None, str | None]
#: What a kept line has beyond its loc and lastmod: (changefreq, priority, url xml, news date,
#: news xml), "" where a part is absent; None when it has nothing beyond them (the common line).
Extras = tuple[str | None, float | None, str, str, str]
#: A block of kept lines, as columns: locs, lastmods ("" where absent), extras.
KeptBlock = tuple[list[str], list[str], list[Extras | None]]


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
            ABSENT if lastmod is None else PRESENT + lastmod,
            ABSENT if changefreq is None else PRESENT + changefreq,
            ABSENT if priority is None else PRESENT + repr(float(priority)),
            ABSENT if content_digest is None else PRESENT + content_digest,
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


def lines_of_columns(
    locs: list[str],
    lastmods: list[str | None],
    changefreqs: list[str | None],
    priorities: list[float | None],
    digests: list[str | None],
) -> list[str]:
    """``encode_fields`` of a block of checked entries given as columns, in a few C-level steps;
    no field holds a tab or a newline, a priority is a float."""
    count = len(locs)
    if changefreqs.count(None) == count and priorities.count(None) == count:
        # The crawl's entries: a loc, maybe a lastmod and a digest.
        if None not in lastmods and None not in digests:  # each has both: no "+" joined first
            return [f"{loc}\t+{lastmod}\t-\t-\t+{digest}" for loc, lastmod, digest in zip(locs, lastmods, digests)]
        return [
            f"{loc}\t{'-' if lastmod is None else '+' + lastmod}\t-\t-\t{'-' if digest is None else '+' + digest}"
            for loc, lastmod, digest in zip(locs, lastmods, digests)
        ]
    return [
        f"{loc}\t{'-' if lastmod is None else '+' + lastmod}\t{'-' if changefreq is None else '+' + changefreq}"
        f"\t{'-' if number is None else '+' + repr(number)}\t{'-' if digest is None else '+' + digest}"
        for loc, lastmod, changefreq, number, digest in zip(locs, lastmods, changefreqs, priorities, digests)
    ]


def loc_only_lines(text: str) -> list[str]:
    """``encode_fields`` of each loc of ``text`` (checked locs, one per line, no newline at the end)."""
    return (text.replace("\n", _LOC_ONLY + "\n") + _LOC_ONLY).split("\n")


def digest_line(digest: str) -> str:
    """The line of a run of digests (``dedupe.repeated_digests``), and the digest field of an
    entry's line: ``+digest``."""
    return PRESENT + digest


#: What a run of bare digests is written with before each (``runs.write_run``'s prefix).
DIGEST_LINE_PREFIX: Final = PRESENT


def decode_fields(line: str) -> Fields:
    """Return ``(loc, lastmod, changefreq, priority, content_digest)`` of a line from ``encode_fields``."""
    loc, lastmod, changefreq, priority, digest = line.split("\t")
    priority = priority.partition(RICH)[0]
    return (
        loc,
        None if lastmod == ABSENT else lastmod[1:],
        None if changefreq == ABSENT else changefreq[1:],
        None if priority == ABSENT else float(priority[1:]),
        None if digest == ABSENT else digest[1:],
    )


def decode_entry(line: str) -> SitemapEntry:
    """Return the entry of a line made by ``encode_entry``."""
    return SitemapEntry(*decode_fields(line))


def locs_and_digests(block: list[str]) -> tuple[list[str], list[str]]:
    """The loc and the digest field (``digest_line``, or ``-``) of each line of a block, as two
    columns, in a few C-level steps; ValueError for a line without its five fields."""
    fields = "\t".join(block).split("\t")
    if len(fields) != FIELD_COUNT * len(block):
        raise ValueError(f"a run line without its five fields: {block[0]!r}...")
    return fields[0::FIELD_COUNT], fields[FIELD_COUNT - 1 :: FIELD_COUNT]


def loc_and_digest(line: str) -> tuple[str, str | None]:
    """The loc and the bare digest (None when absent) of a line."""
    digest = line[line.rindex("\t") + 1 :]
    return line[: line.index("\t")], None if digest == ABSENT else digest[1:]


def _extras(changefreq: str, priority: str) -> Extras:
    value, url_xml, news_date, news_xml = priority.split(RICH) if RICH in priority else (priority, "", "", "")
    return (
        None if changefreq == ABSENT else changefreq[1:],
        None if value == ABSENT else float(value[1:]),
        url_xml,
        news_date,
        news_xml,
    )


class FirstOfEach:
    """The duplicate-dropping walk over sorted lines: the kept line of each loc (latest.py) and, of
    the locs whose digest field is in ``shared``, the first of each digest; decoded, a block at a time."""

    def __init__(self, shared: dict[str, bool], on_content_duplicate: Callable[[str], None]) -> None:
        """``shared``: the digest fields that more than one line has (``dedupe.repeated_digests``),
        each set to True once a line of it is kept; ``on_content_duplicate`` is told of the line
        of each entry dropped for its content."""
        self._shared = shared
        self._on_content_duplicate = on_content_duplicate
        self.duplicates = 0  # lines dropped because their loc came again

    def blocks(self, blocks: Iterable[list[str]]) -> Iterator[KeptBlock]:
        """The kept lines of each block of sorted ``blocks``, decoded."""
        # The one loop that runs once per published URL: inlined, the common line (no changefreq,
        # no priority) decoded in place.
        shared = self._shared
        on_content_duplicate = self._on_content_duplicate
        # Every line of a loc in one block: a line that a later one of its loc replaces is still there.
        for block in whole_groups(blocks):
            locs: list[str] = []
            lastmods: list[str] = []
            extras: list[Extras | None] = []
            add_loc, add_lastmod, add_extras = locs.append, lastmods.append, extras.append
            # Lines dropped for their content, told at the end of the block: a later line of their
            # loc may yet replace them.
            dropped: list[str] = []
            duplicates = 0
            previous = None
            kept = ""  # the line of ``previous`` taken so far
            for line in block:
                loc, lastmod, changefreq, priority, digest = line.split("\t")
                if loc == previous:
                    duplicates += 1
                    if lastmod == "-" or not later(line, kept):
                        continue
                    # A later lastmod: this line instead of the one taken.
                    self._take_back(kept, locs, lastmods, extras, dropped)
                previous = loc
                kept = line
                if digest in shared:
                    if shared[digest]:
                        dropped.append(line)
                        continue
                    shared[digest] = True
                add_loc(loc)
                add_lastmod(lastmod[1:])  # "" when absent ("-")
                add_extras(None if changefreq == "-" and priority == "-" else _extras(changefreq, priority))
            self.duplicates += duplicates
            for line in dropped:
                on_content_duplicate(line)
            yield locs, lastmods, extras

    def _take_back(
        self, line: str, locs: list[str], lastmods: list[str], extras: list[Extras | None], dropped: list[str]
    ) -> None:
        """Undo the walk's step for ``line``, the last one taken, which a later line of its loc replaces."""
        if dropped and dropped[-1] is line:  # dropped for its content
            dropped.pop()
            return
        locs.pop()
        lastmods.pop()
        extras.pop()
        digest = line[line.rindex("\t") + 1 :]
        if digest in self._shared:
            self._shared[digest] = False  # it was the first of its digest to be kept

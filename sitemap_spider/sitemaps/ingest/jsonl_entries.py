"""JSON Lines entries: decoded by msgspec, checked and encoded as sort-run lines (see chunk.py)."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import Final, NamedTuple, cast

import msgspec

from sitemap_spider.sitemaps.runs.lines import lines_of_columns
from sitemap_spider.sitemaps.ingest.inputs import too_deep
from sitemap_spider.sitemaps.ingest.iri import encode_iris
from sitemap_spider.sitemaps.ingest.plain_values import plain_digests, plain_lastmods, plain_loc, plain_locs
from sitemap_spider.sitemaps.rules import CHANGEFREQS
from sitemap_spider.sitemaps.xml.elements import needs_escaping


class Entry(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A line's entry fields, typed: a line whose fields have other types, or that has other
    fields, fails to decode and takes the general path.

    Other fields are refused because msgspec skips them without the checks the standard
    library's decoder makes (a string that is not UTF-8, an integer of 5,000 digits): the
    general path must say such a line is bad. Not tracked by the garbage collector (its fields
    are strings, numbers and None: no cycle), which would otherwise walk every entry of a
    chunk, again and again, while it is decoded.
    """

    loc: str
    lastmod: str | None = None
    changefreq: str | None = None
    priority: float | None = None  # JSON integers too, as floats
    content_digest: str | None = None


class LenientEntry(Entry, forbid_unknown_fields=False, gc=False):
    """The same fields, of a line that has other fields too (see ``decode``).

    The extension fields (extensions.FIELDS) may be null, or absent, and nothing else: a line
    with images, alternates, videos or news takes the general path, which reads them.
    """

    alternates: None = None
    images: None = None
    videos: None = None
    news: None = None


_DECODER: Final = msgspec.json.Decoder(Entry)
# A newline followed by anything but "{": a line that does not start an object. One regex scan
# is 2.5x faster than counting b"\n{" (0.07 against 0.17 CPU s per million lines).
_LINE_NOT_AN_OBJECT: Final = re.compile(rb"\n[^{]")
_LENIENT_DECODER: Final = msgspec.json.Decoder(LenientEntry)
# No integer of more digits than int() takes (sys.set_int_max_str_digits) fits in a shorter line.
_MAX_SKIPPED_LINE: Final = sys.get_int_max_str_digits() or sys.maxsize
# What msgspec raises on a line it does not take: DecodeError and UnicodeDecodeError (bytes
# that are not UTF-8 in a string) are ValueErrors; RecursionError for values nested too deeply.
_NOT_DECODED: Final = (ValueError, RecursionError)


def decode_all(data: bytes, lines: int) -> list[Entry] | None:
    """The entry of every line of ``data`` (``lines`` of them, chunk.count_lines), one per
    line; None unless every line is one."""
    # msgspec reads a stream of values: it skips blank lines, reads two values on one line
    # and one value over two lines, so an equal count alone proves nothing (nor does reading
    # the lines as the elements of one array: a line may hold "{...},{...}", and an object
    # split after a member joins up again). Here every line starts with "{", and the struct
    # takes no other field, so no value holds an object or an array: a value cannot go on
    # past its line (the next line would start with a key, not "{"; msgspec refuses a raw
    # newline in a string, as JSON does: tests/test_chunk.py pins it). Every line then
    # starts one value at least, and an equal count is one each.
    if not data.startswith(b"{") or _LINE_NOT_AN_OBJECT.search(data) is not None:
        return None
    try:
        entries = _DECODER.decode_lines(data)
    except _NOT_DECODED:
        return None
    return entries if len(entries) == lines else None


def decode(raw_lines: list[bytes], first: int, slow: list[int]) -> list[tuple[int, Entry]]:
    """The lines that decode as entries, one by one, numbered from ``first``; the indexes of
    the others into ``slow``."""
    decoded: list[tuple[int, Entry]] = []
    for index, raw in enumerate(raw_lines, first):
        try:
            decoded.append((index, _DECODER.decode(raw)))  # one value, alone on its line
            continue
        except _NOT_DECODED:  # not JSON, not an object, a field of another type, or another field
            pass
        # Other fields: msgspec skips their values without three checks of the general path:
        # the bytes must be UTF-8, an integer may not have more than 4,300 digits (the json
        # module's), values may not nest too deeply (inputs.too_deep). Lines that could fail
        # them go there.
        if len(raw) < _MAX_SKIPPED_LINE and (raw.isascii() or _is_utf8(raw)) and not too_deep(raw):
            try:
                decoded.append((index, _LENIENT_DECODER.decode(raw)))
                continue
            except _NOT_DECODED:
                pass
        slow.append(index)
    return decoded


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode()
    except UnicodeDecodeError:
        return False
    return True


class Encoded(NamedTuple):
    """Run lines of a block of entries, and what the chunk keeps of them."""

    lines: list[str]  # entry_lines.encode_fields lines
    digests: list[str]  # the content digests of the entries that have one, bare
    normalised: int  # locs taken in their normal form (iri.py)
    verbatim: bool  # every loc and lastmod goes into the XML as it is (xml.is_verbatim)


def encode_columns(entries: Sequence[Entry]) -> Encoded | None:
    """Encode a block of entries if each field passes its block checks, as columns in a few
    C-level passes; else None."""
    locs = [entry.loc for entry in entries]
    normalised = 0
    joined = "".join(locs)
    if not joined.isascii() or " " in joined:  # IRIs, spaces: their normal form (iri.py)
        encoded = encode_iris(locs)
        if encoded is None:
            return None
        locs, normalised = encoded
    lastmods = [entry.lastmod for entry in entries]
    digests = [entry.content_digest for entry in entries]
    # Without None (which mypy cannot tell from a "None not in" test).
    dated = cast("list[str]", lastmods if None not in lastmods else [value for value in lastmods if value is not None])
    digested = cast("list[str]", digests if None not in digests else [value for value in digests if value is not None])
    if not (plain_locs(locs) and plain_lastmods(dated) and plain_digests(digested)):
        return None
    changefreqs = [entry.changefreq for entry in entries]
    priorities = [entry.priority for entry in entries]
    if not CHANGEFREQS.issuperset(value for value in changefreqs if value is not None):
        return None
    # The standard library's float of the same JSON number; an integer too big for a
    # float's range check, NaN or infinity fails it and takes the general path.
    if not all(0.0 <= number <= 1.0 for number in priorities if number is not None):
        return None
    lines = lines_of_columns(locs, lastmods, changefreqs, priorities, digests)
    # Copies, made together: the decoded strings share memory pages with the rest of their
    # entries, which a chunk's digests would keep from being reused (7 MB more per worker).
    # No None in digested, no newline in a digest (plain_digests).
    copies = "\n".join(digested).split("\n") if digested else []
    # Lastmods of these shapes go into the XML as they are; a loc may need escaping.
    return Encoded(lines, copies, normalised, not needs_escaping("".join(locs)))


def encode_entries(entries: list[tuple[int, Entry]], slow: list[int]) -> Encoded:
    """Encode the decoded lines of the common shape, each checked on its own; the indexes of the
    others into ``slow``."""
    locs: list[str] = []
    lastmods: list[str | None] = []
    changefreqs: list[str | None] = []
    priorities: list[float | None] = []
    digests: list[str | None] = []
    for index, entry in entries:
        loc = entry.loc
        lastmod = entry.lastmod
        changefreq = entry.changefreq
        number = entry.priority
        digest = entry.content_digest
        if (
            # loc: "http(s)://" + host + path, every byte of a class, as rules._PLAIN_LOC.
            not plain_loc(loc)
            # lastmod: a date, or a date-time with seconds and Z or a zone within +/-14:00.
            or (lastmod is not None and not plain_lastmods([lastmod]))
            or (changefreq is not None and changefreq not in CHANGEFREQS)
            or (number is not None and not 0.0 <= number <= 1.0)  # see encode_columns
            or (digest is not None and not plain_digests([digest]))
        ):
            slow.append(index)
            continue
        locs.append(loc)
        lastmods.append(lastmod)
        changefreqs.append(changefreq)
        priorities.append(number)
        digests.append(digest)
    lines = lines_of_columns(locs, lastmods, changefreqs, priorities, digests)
    bare = [digest for digest in digests if digest is not None]
    return Encoded(lines, bare, 0, not needs_escaping("".join(locs)))  # the lastmods' shape was checked

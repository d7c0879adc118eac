"""JSON Lines entries: decoded by msgspec, checked and encoded as sort-run lines (see chunk.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import msgspec

from sitemap_spider.sitemaps.plain_values import plain_digests, plain_lastmods, plain_loc, plain_locs
from sitemap_spider.sitemaps.xml import CHANGEFREQS

if TYPE_CHECKING:  # chunk.py imports this module
    from sitemap_spider.sitemaps.chunk import EncodedChunk


class Entry(msgspec.Struct, gc=False):
    """A line's entry fields, typed: a line whose fields have other types fails to decode.

    Not tracked by the garbage collector (its fields are strings, numbers and None: no
    cycle), which would otherwise walk every entry of a chunk, again and again, while it is decoded.
    """

    loc: str
    lastmod: str | None = None
    changefreq: str | None = None
    priority: float | None = None  # JSON integers too, as floats
    content_digest: str | None = None


class ExactEntry(Entry, forbid_unknown_fields=True, gc=False):
    """An entry line with no other field (others take the slower, line by line decoding)."""


_DECODER: Final = msgspec.json.Decoder(Entry)
_EXACT_DECODER: Final = msgspec.json.Decoder(ExactEntry)


def decode_all(data: bytes) -> list[ExactEntry] | None:
    """The entry of every line of ``data``, one per line; None unless every line is one."""
    # msgspec reads a stream of values: it skips blank lines, reads two values on one line
    # and one value over two lines, so an equal count alone proves nothing (nor does reading
    # the lines as the elements of one array: a line may hold "{...},{...}", and an object
    # split after a member joins up again). Here every line starts with "{", and the struct
    # takes no other field, so no value holds an object or an array: a value cannot go on
    # past its line (the next line would start with a key, not "{"; JSON strings hold no raw
    # newline). Every line then starts one value at least, and an equal count is one each.
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    if not data.startswith(b"{") or data.count(b"\n{") != lines - 1:
        return None
    try:
        entries = _EXACT_DECODER.decode_lines(data)
    except msgspec.DecodeError:
        return None
    return entries if len(entries) == lines else None


def decode(raw_lines: list[bytes], first: int, slow: list[int]) -> list[tuple[int, Entry]]:
    """The lines that decode as entries, numbered from ``first``; the indexes of the others into ``slow``."""
    every = decode_all(b"\n".join(raw_lines))
    if every is not None:
        return list(enumerate(every, first))
    decoded = []
    for index, raw in enumerate(raw_lines, first):
        try:
            # One value, alone on its line (with other fields, ignored, too).
            decoded.append((index, _DECODER.decode(raw)))
        except msgspec.DecodeError:  # not JSON, not an object, or a field of another type
            slow.append(index)
    return decoded


def encode_columns(entries: Sequence[Entry], done: EncodedChunk) -> bool:
    """Encode a block of entries into ``done`` if each field passes its block checks, as
    columns in a few C-level passes; else False, and ``done`` is left as it was."""
    count = len(entries)
    locs = [entry.loc for entry in entries]
    lastmods = [entry.lastmod for entry in entries]
    digests = [entry.content_digest for entry in entries]
    dated = lastmods if None not in lastmods else [value for value in lastmods if value is not None]
    digested = digests if None not in digests else [value for value in digests if value is not None]
    if not (plain_locs(locs) and plain_lastmods(dated) and plain_digests(digested)):  # type: ignore[arg-type]
        return False
    changefreqs = [entry.changefreq for entry in entries]
    priorities = [entry.priority for entry in entries]
    # entry_lines.encode_fields, and dedupe.digest_pair of the entries with a digest.
    if changefreqs.count(None) == count and priorities.count(None) == count:
        # The crawl's entries: a loc, maybe a lastmod and a digest.
        lines = [
            f"{loc}\t{'-' if lastmod is None else '+' + lastmod}\t-\t-\t{'-' if digest is None else '+' + digest}"
            for loc, lastmod, digest in zip(locs, lastmods, digests)
        ]
    else:
        if not CHANGEFREQS.issuperset(value for value in changefreqs if value is not None):
            return False
        # The standard library's float of the same JSON number; an integer too big for a
        # float's range check, NaN or infinity fails it and takes the general path.
        if not all(0.0 <= number <= 1.0 for number in priorities if number is not None):
            return False
        lines = [
            f"{loc}\t{'-' if lastmod is None else '+' + lastmod}\t{'-' if changefreq is None else '+' + changefreq}"
            f"\t{'-' if number is None else '+' + repr(number)}\t{'-' if digest is None else '+' + digest}"
            for loc, lastmod, changefreq, number, digest in zip(locs, lastmods, changefreqs, priorities, digests)
        ]
    done.lines += lines
    if digested:
        done.pairs += [f"+{digest}\t{loc}" for loc, digest in zip(locs, digests) if digest is not None]
    return True


def encode_entries(entries: list[tuple[int, Entry]], done: EncodedChunk, slow: list[int]) -> None:
    """Encode the decoded lines of the common shape into ``done``, each checked on its own;
    the indexes of the others into ``slow``."""
    lines = done.lines
    pairs = done.pairs
    for index, entry in entries:
        loc = entry.loc
        # loc: "http(s)://" + host + path, every byte of a class, as xml._PLAIN_LOC.
        if not plain_loc(loc):
            slow.append(index)
            continue
        # lastmod: a date, or a date-time with seconds and Z or a zone within +/-14:00.
        lastmod = entry.lastmod
        if lastmod is not None:
            if not plain_lastmods([lastmod]):
                slow.append(index)
                continue
            lastmod = "+" + lastmod
        else:
            lastmod = "-"
        changefreq = entry.changefreq
        if changefreq is not None:
            if changefreq not in CHANGEFREQS:
                slow.append(index)
                continue
            changefreq = "+" + changefreq
        else:
            changefreq = "-"
        number = entry.priority
        if number is not None:
            if not 0.0 <= number <= 1.0:  # see encode_columns
                slow.append(index)
                continue
            priority = "+" + repr(number)
        else:
            priority = "-"
        digest = entry.content_digest
        if digest is not None:
            if not plain_digests([digest]):
                slow.append(index)
                continue
            digest = "+" + digest
            pairs.append(f"{digest}\t{loc}")  # dedupe.digest_pair, inline: one call less per line
        else:
            digest = "-"
        lines.append(f"{loc}\t{lastmod}\t{changefreq}\t{priority}\t{digest}")


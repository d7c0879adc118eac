"""A chunk of input lines as sort-run lines, with as few Python steps per line as the common case allows.

``scrapy crawl sitemap -o`` writes every line in one shape: string fields or null, a plain
http(s) URL, a lastmod that is a date or a date-time with seconds. Such lines are decoded by
msgspec straight into typed entries, a block in one call (a line whose fields have other types
fails to decode). Their loc, lastmod and digest are checked with those of the other lines of their block
(4,096 lines), in a few C-level passes over their joined text, when the whole block is of one
site and one lastmod form (and zone); otherwise each line of the block is checked on its own with a
few string operations. No regex on this path: Python's ``re`` costs more per line than the JSON
decoding. Every other line (another shape, a number where a string belongs, a bad line) takes
the general path, the one a line read alone takes: the standard library's decoder,
``to_fields``, ``check_fields``, ``encode_fields``. The fast checks accept a strict subset of
what the general ones accept and encode it the same way, so all paths give the same run lines
and the same published bytes (tests/test_chunk.py compares them).
"""

from __future__ import annotations

import collections
import itertools
import string
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

import msgspec

from sitemap_spider.sitemaps.dedupe import digest_pair
from sitemap_spider.sitemaps.entry_lines import encode_fields
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.inputs import MAX_REPORTED_BAD_LINES, READERS, to_fields
from sitemap_spider.sitemaps.xml import CHANGEFREQS, MAX_LOC_LENGTH, MIN_LOC_LENGTH, check_fields

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
# Lines checked together by _encode_columns: one odd line sends this many to the slower checks.
_BLOCK_LINES: Final = 4096
# The same for the bytes of a chunk: about 3,000 of the crawl's lines.
_BLOCK_BYTES: Final = 512 * 1024
# What follows the loc in the run line of an entry with no other field (entry_lines.encode_fields).
_LOC_ONLY: Final = "\t-\t-\t-\t-"
_MAX_BACKOFF_BLOCKS: Final = 16


@dataclass
class EncodedChunk:
    """Run lines of the good lines of a chunk, and what was wrong with the others."""

    lines: list[str] = field(default_factory=list)  # encode_fields lines, in no particular order
    pairs: list[str] = field(default_factory=list)  # dedupe.digest_pair of the entries with a digest
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line number, reason), the first ones
    bad_count: int = 0
    last_record: int = 0  # number of the last line that was an entry or a bad line; 0: none
    line_count: int = 0  # lines in the chunk


def encode_chunk(kind: str, raw: bytes | list[bytes], first_number: int, stop: bool) -> EncodedChunk:
    """Parse, check and encode the lines of ``raw`` (numbered from ``first_number``): the bytes
    of a chunk, split on b"\\n" as iterating over a binary file splits them, or its lines. In
    strict mode (``stop``) nothing after the first bad line matters."""
    lines = _Lines(raw)
    done = EncodedChunk(line_count=lines.count)
    if kind == "jsonl":
        slow: Sequence[int] = _encode_jsonl_fast(lines, done)
    elif kind == "txt":
        slow = _encode_txt_fast(lines.split(), done)
    else:
        slow = range(lines.count)
    if len(slow) < lines.count:
        last_fast = lines.count - 1
        left = set(slow)
        while last_fast in left:
            last_fast -= 1
        done.last_record = first_number + last_fast
    if slow:
        raw_lines = lines.split()
        records = READERS[kind]((first_number + index, raw_lines[index]) for index in slow)
        for number, record in records:
            done.last_record = max(done.last_record, number)
            try:
                if isinstance(record, str):
                    raise InvalidEntryError(record)
                loc, lastmod, changefreq, priority, digest = to_fields(record)
                check_fields(loc, lastmod, changefreq, priority)
                done.lines.append(encode_fields(loc, lastmod, changefreq, priority, digest))
            except InvalidEntryError as exc:
                done.bad_count += 1
                if len(done.bad) < MAX_REPORTED_BAD_LINES:
                    done.bad.append((number, str(exc)))
                if stop:
                    break
            else:
                if digest is not None:
                    done.pairs.append(digest_pair(digest, loc))
    return done


class _Lines:
    """The lines of a chunk, given as its bytes or as its lines; split only when needed."""

    def __init__(self, raw: bytes | list[bytes]) -> None:
        if isinstance(raw, bytes):
            self.data: bytes | None = raw
            self._lines: list[bytes] | None = None
            # As split(): a last line without its newline counts, nothing after the last newline does.
            self.count = raw.count(b"\n") + (1 if raw and not raw.endswith(b"\n") else 0)
        else:
            self.data = None
            self._lines = raw
            self.count = len(raw)

    def split(self) -> list[bytes]:
        if self._lines is None:
            assert self.data is not None
            lines = self.data.split(b"\n")
            if lines and not lines[-1]:
                lines.pop()  # after the last newline
            self._lines = lines
        return self._lines


def _encode_jsonl_fast(lines: _Lines, done: EncodedChunk) -> list[int]:
    """Encode the lines of the common shape into ``done``; the indexes of all the others."""
    slow: list[int] = []
    backoff = skip = 0
    for start, piece in _pieces(lines):
        # Decoded once, whichever checks the entries then take.
        numbered: list[tuple[int, _Entry]] | None = None
        block: Sequence[_Entry] | None = _decode_all(piece)
        if block is None:
            raw_lines = piece.split(b"\n")
            if piece.endswith(b"\n"):
                raw_lines.pop()
            numbered = _decode(raw_lines, start, slow)
            block = [entry for _, entry in numbered]
        if skip:
            skip -= 1
        elif _encode_columns(block, done):
            backoff = 0
            continue
        else:
            # Not all of one site, or lastmods of several forms: checked line by line. An
            # input whose blocks never qualify must not pay twice for each: the next ones go
            # straight to the line-by-line checks, more of them after each failure.
            backoff = min(2 * backoff or 1, _MAX_BACKOFF_BLOCKS)
            skip = backoff
        _encode_entries(list(enumerate(block, start)) if numbered is None else numbered, done, slow)
    # In input order: lines that did not decode come first within a block, and the general
    # path must report bad lines, and stop in strict mode, at the first one of the input.
    slow.sort()
    return slow


def _pieces(lines: _Lines) -> Iterator[tuple[int, bytes]]:
    """``(index of its first line, its bytes)`` of each block of whole lines of a chunk; every
    line but the chunk's last ends with a newline."""
    if lines.data is None:
        raw_lines = lines.split()
        for start in range(0, len(raw_lines), _BLOCK_LINES):
            yield start, b"\n".join(raw_lines[start : start + _BLOCK_LINES]) + b"\n"
        return
    data = lines.data
    start = at = 0
    while at < len(data):
        # About _BLOCK_BYTES, to the end of a line: a few of the chunk's entries in memory at a time.
        end = data.find(b"\n", at + _BLOCK_BYTES)
        end = len(data) if end < 0 else end + 1
        piece = data[at:end]
        yield start, piece
        start += piece.count(b"\n") + (0 if piece.endswith(b"\n") else 1)
        at = end


def _encode_txt_fast(raw_lines: list[bytes], done: EncodedChunk) -> list[int]:
    """Encode the blocks of plain URLs of one site into ``done``; the indexes of all other lines.

    A block qualifies as a whole: any blank line, comment, space, CR or other URL sends the
    block to the general path (``text_records``), line by line.
    """
    slow: list[int] = []
    for start in range(0, len(raw_lines), _BLOCK_LINES):
        block = raw_lines[start : start + _BLOCK_LINES]
        raw = b"\n".join(block)
        text = raw.decode("ascii") if raw.isascii() else ""
        if text and _plain_locs(text.split("\n")):
            # Run lines of entries with a loc only (entry_lines.encode_fields), in a few C-level steps.
            done.lines += (text.replace("\n", _LOC_ONLY + "\n") + _LOC_ONLY).split("\n")
        else:
            slow.extend(range(start, start + len(block)))
    return slow


def _plain_locs(locs: list[str]) -> bool:
    """True if every loc is a plain URL (as xml._PLAIN_LOC) of the site of the first one."""
    if not locs:
        return True
    first = locs[0]
    if not _plain_loc(first) or first.find("/", 8) < 0:
        return False
    origin = first[: first.find("/", 8) + 1]  # "scheme://host/", checked with the first loc
    text = "\n".join(locs)
    count = len(locs)
    # Each loc starts with the origin (no loc holds a newline: the count says so), holds only
    # plain characters, and has a length the XSD accepts.
    return (
        text.startswith(origin)
        and text.count("\n") == count - 1
        and text.count("\n" + origin) == count - 1
        and not text.encode().translate(None, _PLAIN_BYTES_AND_NEWLINE)
        and MIN_LOC_LENGTH <= min(map(len, locs))
        and max(map(len, locs)) <= MAX_LOC_LENGTH
    )


def _plain_lastmods(lastmods: list[str]) -> bool:
    """True if every lastmod is of the first one's form: a date, or a date-time with seconds
    and the first one's zone."""
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


def _plain_digests(digests: list[str]) -> bool:
    """True if no digest holds a tab or a newline (the run line format's separators)."""
    text = "".join(digests)
    return "\t" not in text and "\n" not in text


def _plain_loc(loc: str) -> bool:
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


class _Entry(msgspec.Struct, gc=False):
    """A line's entry fields, typed: a line whose fields have other types fails to decode.

    Not tracked by the garbage collector (its fields are strings, numbers and None: no
    cycle), which would otherwise walk every entry of a chunk, again and again, while it is decoded.
    """

    loc: str
    lastmod: str | None = None
    changefreq: str | None = None
    priority: float | None = None  # JSON integers too, as floats
    content_digest: str | None = None


class _ExactEntry(_Entry, forbid_unknown_fields=True, gc=False):
    """An entry line with no other field (others take the slower, line by line decoding)."""


_DECODER: Final = msgspec.json.Decoder(_Entry)
_EXACT_DECODER: Final = msgspec.json.Decoder(_ExactEntry)


def _decode_all(data: bytes) -> list[_ExactEntry] | None:
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


def _decode(raw_lines: list[bytes], first: int, slow: list[int]) -> list[tuple[int, _Entry]]:
    """The lines that decode as entries, numbered from ``first``; the indexes of the others into ``slow``."""
    every = _decode_all(b"\n".join(raw_lines))
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


def _encode_columns(entries: Sequence[_Entry], done: EncodedChunk) -> bool:
    """Encode a block of entries into ``done`` if each field passes its block checks, as
    columns in a few C-level passes; else False, and ``done`` is left as it was."""
    count = len(entries)
    locs = [entry.loc for entry in entries]
    lastmods = [entry.lastmod for entry in entries]
    digests = [entry.content_digest for entry in entries]
    dated = lastmods if None not in lastmods else [value for value in lastmods if value is not None]
    digested = digests if None not in digests else [value for value in digests if value is not None]
    if not (_plain_locs(locs) and _plain_lastmods(dated) and _plain_digests(digested)):  # type: ignore[arg-type]
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


def _encode_entries(entries: list[tuple[int, _Entry]], done: EncodedChunk, slow: list[int]) -> None:
    """Encode the decoded lines of the common shape into ``done``, each checked on its own;
    the indexes of the others into ``slow``."""
    lines = done.lines
    pairs = done.pairs
    for index, entry in entries:
        loc = entry.loc
        # loc: "http(s)://" + host + path, every byte of a class, as xml._PLAIN_LOC.
        if not _plain_loc(loc):
            slow.append(index)
            continue
        # lastmod: a date, or a date-time with seconds and Z or a zone within +/-14:00.
        lastmod = entry.lastmod
        if lastmod is not None:
            if not _plain_lastmods([lastmod]):
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
            if not 0.0 <= number <= 1.0:  # see _encode_columns
                slow.append(index)
                continue
            priority = "+" + repr(number)
        else:
            priority = "-"
        digest = entry.content_digest
        if digest is not None:
            if not _plain_digests([digest]):
                slow.append(index)
                continue
            digest = "+" + digest
            pairs.append(f"{digest}\t{loc}")  # dedupe.digest_pair, inline: one call less per line
        else:
            digest = "-"
        lines.append(f"{loc}\t{lastmod}\t{changefreq}\t{priority}\t{digest}")

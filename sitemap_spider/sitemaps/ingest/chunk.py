"""A chunk of input lines as sort-run lines, with as few Python steps per line as the common case allows.

``scrapy crawl sitemap -o`` writes every line in one shape: string fields or null, a plain
http(s) URL, a lastmod that is a date or a date-time with seconds. Such lines are decoded by
msgspec straight into typed entries, about 512 KiB of lines in one call (jsonl_entries.py; a
line whose fields have other types fails to decode). Their loc, lastmod and digest are checked
with those of the other lines of their block, as columns, in a few C-level passes over their
joined text (plain_values.py), when the whole block is of one site (percent-escapes allowed;
raw UTF-8 and spaces percent-encoded, iri.py) with lastmods of the fixed-width forms, as a CMS
exports them too; otherwise each line of the block is checked on its own with a few string operations.
No regex on this path: Python's ``re`` costs more per line than the JSON decoding. Plain-text
blocks of plain URLs of one site take the same checks. Every other line (another shape, a
number where a string belongs, a bad line) takes the general path, the one a line read alone
takes: the standard library's decoder, ``taken_fields``, ``check_fields``, ``encode_fields``.
The fast checks accept a strict subset of what the general ones accept and encode it the same
way, so all paths give the same run lines and the same published bytes (tests/test_chunk.py
compares them).

Why several encoders and the ``verbatim`` flag stay: one general path plus one fast path, with
each run line carrying its rendered ``<url>`` element so the publishing loop needs no flag, was
built and measured (1M entries, gzip and validation on, 4 alternating runs on a quiet machine):
2.81 against 2.53 s median on crawl-shaped input (+11%: the run files double, 8 -> 18 MB per
100,000 lines) and 2.93 against 2.81 s on CMS-shaped input (+4%), for the same files.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from sitemap_spider.sitemaps.entry import RichEntry
from sitemap_spider.sitemaps.runs.lines import encode_fields, loc_only_lines
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.xml.extensions import rich_fields
from sitemap_spider.sitemaps.xml.hreflang import alternate_lines
from sitemap_spider.sitemaps.ingest.inputs import MAX_REPORTED_BAD_LINES, READERS
from sitemap_spider.sitemaps.ingest.iri import encode_iris
from sitemap_spider.sitemaps.item_entries import taken_fields
from sitemap_spider.sitemaps.ingest.jsonl_entries import (
    Encoded,
    Entry,
    decode,
    decode_all,
    encode_columns,
    encode_entries,
)
from sitemap_spider.sitemaps.ingest.plain_values import plain_locs
from sitemap_spider.sitemaps.shards.rich_set import has_extensions, rich_line
from sitemap_spider.sitemaps.rules import check_fields
from sitemap_spider.sitemaps.xml.elements import is_verbatim, needs_escaping

# Lines checked together by jsonl_entries.encode_columns: one odd line sends this many to the slower checks.
_BLOCK_LINES: Final = 4096
# The same for the bytes of a chunk: about 3,000 of the crawl's lines.
_BLOCK_BYTES: Final = 512 * 1024
_MAX_BACKOFF_BLOCKS: Final = 16


@dataclass
class EncodedChunk:
    """Run lines of the good lines of a chunk, and what was wrong with the others."""

    lines: list[str] = field(default_factory=list)  # encode_fields lines, in no particular order
    # The content digests of the entries that have one, bare: a run of them is written with
    # the "+" of dedupe.digest_line (runs.write_run's prefix), sorted as they would be with it.
    digests: list[str] = field(default_factory=list)
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line number, reason), the first ones
    # Every loc and lastmod of lines goes into the XML as it is (xml.is_verbatim): the publishing
    # loop then neither looks for characters to escape nor for lastmods to complete. True until
    # a line says otherwise: every path that adds to lines must clear it when it has to
    # (tests/test_chunk.py checks each one against is_verbatim of the lines kept).
    verbatim: bool = True
    bad_count: int = 0
    normalised: int = 0  # locs of lines taken in their normal form (iri.py: IRIs, spaces)
    rich: bool = False  # some line has extensions (entry_lines.encode_rich_fields)
    alternates: list[str] = field(default_factory=list)  # hreflang.alternate_lines of the lines
    # (page, href, hreflang, reason) of the alternates the lines could not use (extensions.clean_alternates).
    hreflang_problems: list[tuple[str, str, str, str]] = field(default_factory=list)
    last_record: int = 0  # number of the last line that was an entry or a bad line; 0: none
    line_count: int = 0  # lines in the chunk

    def add(self, encoded: Encoded) -> None:
        """Take the lines of a block encoded by the fast checks (jsonl_entries.py)."""
        self.lines += encoded.lines
        self.digests += encoded.digests
        self.normalised += encoded.normalised
        self.verbatim = self.verbatim and encoded.verbatim


def encode_chunk(
    kind: str, raw: bytes | list[bytes], first_number: int, stop: bool, *, bom_line: int = 1
) -> EncodedChunk:
    """Parse, check and encode the lines of ``raw`` (numbered from ``first_number``): the bytes
    of a chunk, split on b"\\n" as iterating over a binary file splits them, or its lines. In
    strict mode (``stop``) nothing after the first bad line matters. ``bom_line``: the number
    of the input's first line, whose UTF-8 byte order mark is dropped (0: not among these)."""
    lines = _Lines(raw)
    done = EncodedChunk()
    # The lines for the general path, by index, in input order.
    if kind == "jsonl":
        slow = _encode_jsonl_fast(lines, done)
    elif kind == "txt":
        raw_lines = lines.split()
        slow = {index: raw_lines[index] for index in _encode_txt_fast(raw_lines, done)}
    else:
        slow = dict(enumerate(lines.split()))
    done.line_count = lines.count
    if len(slow) < lines.count:
        last_fast = lines.count - 1
        while last_fast in slow:
            last_fast -= 1
        done.last_record = first_number + last_fast
    if slow:
        numbered = ((first_number + index, line) for index, line in slow.items())
        for number, record in READERS[kind](numbered, bom_line=bom_line):
            done.last_record = max(done.last_record, number)
            try:
                if isinstance(record, str):
                    raise InvalidEntryError(record)
                fields, normalised = taken_fields(record)
                loc, lastmod, changefreq, priority, digest = fields
                check_fields(loc, lastmod, changefreq, priority)
                extras = rich_fields(record)
                if extras is None:
                    done.lines.append(encode_fields(loc, lastmod, changefreq, priority, digest))
                else:
                    _encode_rich(RichEntry(*fields, **extras), done)
                done.normalised += normalised
                if done.verbatim and not is_verbatim(loc, lastmod):
                    done.verbatim = False
            except InvalidEntryError as exc:
                done.bad_count += 1
                if len(done.bad) < MAX_REPORTED_BAD_LINES:
                    done.bad.append((number, str(exc)))
                if stop:
                    break
            else:
                if digest is not None:
                    done.digests.append(digest)
    return done


class _Lines:
    """The lines of a chunk, given as its bytes or as its lines; split only when needed."""

    def __init__(self, raw: bytes | list[bytes]) -> None:
        if isinstance(raw, bytes):
            self.data: bytes | None = raw
            self._lines: list[bytes] | None = None
            # Counted when first asked for, unless pieces() counted them on the way: a pass
            # over the bytes is some 7 ms per 20 MB chunk, 1% of a publish's CPU.
            self._count: int | None = None
        else:
            self.data = None
            self._lines = raw
            self._count = len(raw)

    @property
    def count(self) -> int:
        if self._count is None:
            assert self.data is not None
            self._count = count_lines(self.data)
        return self._count

    def split(self) -> list[bytes]:
        if self._lines is None:
            assert self.data is not None
            self._lines = split_lines(self.data)
        return self._lines

    def pieces(self) -> Iterator[tuple[int, bytes, int]]:
        """``(index of its first line, its bytes, its number of lines)`` of each block of whole
        lines of the chunk; every line but the chunk's last ends with a newline."""
        if self.data is None:
            raw_lines = self.split()
            for start in range(0, len(raw_lines), _BLOCK_LINES):
                block = raw_lines[start : start + _BLOCK_LINES]
                yield start, b"\n".join(block) + b"\n", len(block)
            return
        data = self.data
        start = at = 0
        while at < len(data):
            # About _BLOCK_BYTES, to the end of a line: a few of the chunk's entries in memory at a time.
            end = data.find(b"\n", at + _BLOCK_BYTES)
            end = len(data) if end < 0 else end + 1
            piece = data[at:end]
            count = count_lines(piece)
            yield start, piece, count
            start += count
            at = end
        self._count = start  # every piece counted: the chunk's lines


def _encode_rich(entry: RichEntry, done: EncodedChunk) -> None:
    """Encode the line of a checked entry with extension fields into ``done``."""
    line, rendered = rich_line(entry)
    done.lines.append(line)
    done.rich = done.rich or has_extensions(rendered)
    done.alternates += alternate_lines(entry.loc, rendered.alternates)
    done.hreflang_problems += ((entry.loc, a.href, a.hreflang, reason) for a, reason in rendered.problems)


def count_lines(data: bytes) -> int:
    """The number of lines ``split_lines`` finds in ``data``."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def split_lines(data: bytes) -> list[bytes]:
    """The lines of ``data`` split on b"\\n" only, as iterating over a binary file splits them:
    a last line without its newline counts, nothing after the last newline does."""
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    return lines


def _encode_jsonl_fast(lines: _Lines, done: EncodedChunk) -> dict[int, bytes]:
    """Encode the lines of the common shape into ``done``; all the others by index, in order."""
    slow: list[int] = []
    slow_lines: dict[int, bytes] = {}
    backoff = skip = 0
    for start, piece, count in lines.pieces():
        before = len(slow)
        # Decoded once, whichever checks the entries then take.
        raw_lines: list[bytes] | None = None
        numbered: list[tuple[int, Entry]] | None = None
        block: Sequence[Entry] | None = decode_all(piece, count)
        if block is None:
            raw_lines = split_lines(piece)
            numbered = decode(raw_lines, start, slow)
            block = [entry for _, entry in numbered]
        if skip:
            skip -= 1
            together = False
        else:
            encoded = encode_columns(block)
            together = encoded is not None
            if encoded is not None:
                done.add(encoded)
            # Not all of one site, or lastmods of several forms: checked line by line. An
            # input whose blocks never qualify must not pay twice for each: the next ones go
            # straight to the line-by-line checks, more of them after each failure.
            backoff = 0 if together else min(2 * backoff or 1, _MAX_BACKOFF_BLOCKS)
            skip = 0 if together else backoff
        if not together:
            done.add(encode_entries(list(enumerate(block, start)) if numbered is None else numbered, slow))
        if len(slow) > before:  # the piece's lines for the general path, not the whole chunk's
            raw_lines = raw_lines or split_lines(piece)
            slow_lines.update((index, raw_lines[index - start]) for index in slow[before:])
    # In input order: lines that did not decode come first within a block, and the general
    # path must report bad lines, and stop in strict mode, at the first one of the input.
    return {index: slow_lines[index] for index in sorted(slow_lines)}



def _encode_txt_fast(raw_lines: list[bytes], done: EncodedChunk) -> list[int]:
    """Encode the blocks of plain URLs of one site into ``done``; the indexes of all other lines.

    A block qualifies as a whole: any blank line, comment, space, CR or other URL sends the
    block to the general path (``text_records``), line by line.
    """
    slow: list[int] = []
    for start in range(0, len(raw_lines), _BLOCK_LINES):
        block = raw_lines[start : start + _BLOCK_LINES]
        text, normalised = _text_of(b"\n".join(block))
        if text and plain_locs(text.split("\n")):
            done.lines += loc_only_lines(text)
            done.normalised += normalised
            if done.verbatim and needs_escaping(text):
                done.verbatim = False
        else:
            slow.extend(range(start, start + len(block)))
    return slow


def _text_of(raw: bytes) -> tuple[str, int]:
    """The lines of a text block as ASCII, IRIs and spaces in their normal form (iri.py), and how
    many were normalised; "" when some cannot be, or it is not UTF-8 (the general path says which)."""
    if raw.isascii() and b" " not in raw:
        return raw.decode("ascii"), 0
    try:
        encoded = encode_iris(raw.decode().split("\n"))
    except UnicodeDecodeError:
        return "", 0
    return ("", 0) if encoded is None else ("\n".join(encoded[0]), encoded[1])

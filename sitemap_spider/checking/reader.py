"""A file's bytes, uncompressed when they are gzip, never more than a limit.

gzip is recognised by its magic bytes, not by the name (servers send ``.xml.gz`` files under
any name and type). Decompression is asked for at most a block at a time, so a gzip bomb
costs the limit in CPU and one block in memory before it is refused.
"""

from __future__ import annotations

import zlib
from typing import BinaryIO, Final

from sitemap_spider.sitemaps import MAX_BYTES_PER_SITEMAP

GZIP_MAGIC: Final = b"\x1f\x8b"
_BLOCK: Final = 64 * 1024
#: White space kept of one run; the rest is dropped before the XML parser sees it.
MAX_WHITESPACE_RUN: Final = 64 * 1024
_XML_WHITESPACE: Final = b" \t\r\n"


class TooLarge(Exception):
    """More uncompressed bytes than the limit."""


class BadGzip(Exception):
    """Corrupt or truncated gzip data."""


class BoundedReader:
    """``read(size)`` over ``raw``'s uncompressed bytes, raising TooLarge past ``limit``."""

    def __init__(self, raw: BinaryIO, limit: int = MAX_BYTES_PER_SITEMAP) -> None:
        self._raw = raw
        self.limit = limit
        self.count = 0
        #: Bytes looked at with head(), which a document refused unparsed was read up to.
        self.looked_at = 0
        first = raw.read(2)
        self.gzipped = first == GZIP_MAGIC
        self._pending = b"" if self.gzipped else first
        self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS) if self.gzipped else None
        self._input = first if self.gzipped else b""
        self._eof = False

    def read(self, size: int = -1) -> bytes:
        size = _BLOCK if size is None or size < 0 else max(size, 1)
        data = self._pending[:size] if self._pending else self._next(size)
        if self._pending:
            self._pending = self._pending[len(data) :]
        if self.count + len(data) > self.limit:
            # What is past the limit is never handed out: the file counts as read up to it.
            self.count = self.limit
            raise TooLarge(f"more than {self.limit:,} bytes uncompressed")
        self.count += len(data)
        return data

    def _next(self, size: int) -> bytes:
        if self._zlib is None:
            return self._raw.read(size)
        while not self._eof:
            if not self._input:
                self._input = self._raw.read(_BLOCK)
                if not self._input:
                    if not self._zlib.eof:
                        raise BadGzip("compressed data cut short")
                    self._eof = True
                    break
            try:
                data = self._zlib.decompress(self._input, size)
            except zlib.error as exc:
                raise BadGzip(str(exc)) from exc
            self._input = self._zlib.unconsumed_tail
            if self._zlib.eof:
                # Several gzip members are one stream (gzip -c a b); anything else after is junk.
                # (At the end of a member, unconsumed_tail repeats unused_data: take one.)
                rest = self._zlib.unused_data
                self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
                self._input = rest
                if not rest:
                    rest = self._raw.read(_BLOCK)
                    self._input = rest
                    if not rest:
                        self._eof = True
            if data:
                return data
        return b""

    def head(self, size: int) -> bytes:
        """The next ``size`` bytes (fewer at the end), given again by the following reads."""
        data = b""
        while len(data) < size:
            more = self.read(size - len(data))
            if not more:
                break
            data += more
        self.count -= len(data)
        self._pending = data + self._pending
        self.looked_at = max(self.looked_at, self.count + len(self._pending))
        return data


class SqueezedWhitespace:
    """``read(size)`` of a reader's bytes with every run of XML white space cut to MAX_WHITESPACE_RUN.

    White space between elements is text to libxml2, which refuses a text node over 10 MB
    unless told to parse "huge" documents (and then gives up its other limits too): a
    well-formed sitemap padded with gigabytes of blanks would end as not well-formed before
    the 50 MiB limit is reached. No value of the schemas is longer than 64 KiB, so a shorter
    run decides nothing; only line numbers after such a run count fewer lines.
    """

    def __init__(self, reader: BoundedReader) -> None:
        self._reader = reader
        self._run = 0  # white space at the end of what was read so far

    def read(self, size: int = -1) -> bytes:
        while True:
            chunk = self._reader.read(min(size, _BLOCK) if size and size > 0 else _BLOCK)
            if not chunk:
                return chunk
            kept = self._squeeze(chunk)
            if kept:
                return kept

    def _squeeze(self, chunk: bytes) -> bytes:
        rest = chunk.lstrip(_XML_WHITESPACE)
        lead = len(chunk) - len(rest)
        keep = max(0, min(lead, MAX_WHITESPACE_RUN - self._run))
        if not rest:  # all white space: the run goes on
            self._run += lead
            return chunk[:keep]
        # A run inside the chunk is at most the chunk long, which is at most MAX_WHITESPACE_RUN.
        self._run = len(rest) - len(rest.rstrip(_XML_WHITESPACE))
        return chunk[:keep] + rest if keep < lead else chunk

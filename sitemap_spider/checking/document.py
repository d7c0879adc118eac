"""Check one document (XML sitemap, sitemap index or text sitemap), streamed, in bounded memory.

``check_document`` reads the bytes once through a BoundedReader (50 MiB uncompressed at
most), decides what the document is from its first bytes, and reports every finding to a
``Sink``, which also sees every listed URL (duplicates across files are the sink's business).
What it cannot read stops it with a finding, never an exception.
"""

from __future__ import annotations

import codecs
import re
from typing import BinaryIO, Final

from sitemap_spider.checking.context import Context, Document, Sink
from sitemap_spider.checking.reader import BadGzip, BoundedReader, TooLarge
from sitemap_spider.checking.xml_walk import walk_xml
from sitemap_spider.sitemaps import MAX_URLS_PER_SITEMAP

_HEAD: Final = 4096
#: A line of a text sitemap longer than this is not a URL: reading stops (a URL has at most 2,048).
MAX_TEXT_LINE: Final = 64 * 1024
_HTML: Final = re.compile(rb"\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html[\s>])", re.IGNORECASE | re.DOTALL)
_UTF8_BOM: Final = codecs.BOM_UTF8
_UTF16_BOMS: Final = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# Control bytes no text has (tab, line feed, vertical tab, form feed and carriage return
# excepted): an image, an archive or a PDF has some in its first 4 KiB, a sitemap none.
_BINARY: Final = re.compile(rb"[\x00-\x08\x0e-\x1f\x7f]")


def check_document(raw: BinaryIO, name: str, location: str | None, sink: Sink) -> Document:
    """Check the document ``raw`` holds; ``location`` is the URL it is served at, when known."""
    document = Document(name, location)
    context = Context(document, sink)
    reader = BoundedReader(raw)
    try:
        head = reader.head(_HEAD)
        if head.startswith(_UTF16_BOMS):
            context.finding("xml.encoding", 1, "UTF-16: a sitemap must be UTF-8")
        elif _HTML.match(head):
            context.finding("xml.root", 1, "an HTML page, not a sitemap")
        elif head.removeprefix(_UTF8_BOM).lstrip().startswith(b"<"):
            walk_xml(reader, head, context)
        elif (binary := _BINARY.search(head)) is not None:
            context.finding(
                "file.binary", None, f"byte {binary.group()!r} at offset {binary.start():,}: binary data, not a sitemap"
            )
        else:
            _walk_text(reader, context)
    except TooLarge as exc:
        context.finding("limits.bytes", None, f"{exc}; the rest was not read")
    except BadGzip as exc:
        context.finding("read.gzip", None, f"gzip data: {exc}")
    document.bytes = max(reader.count, reader.looked_at)
    return document


def _walk_text(reader: BoundedReader, context: Context) -> None:
    """A text sitemap: one URL per line, UTF-8."""
    document = context.document
    document.kind = "text"
    for number, raw_line in enumerate(_LineIterator(reader, context), start=1):
        if document.entries >= MAX_URLS_PER_SITEMAP:  # refused whatever they are: counted, not checked
            if raw_line.strip():
                document.entries += 1
                if document.entries == MAX_URLS_PER_SITEMAP + 1:
                    context.finding(
                        "limits.urls", number, f"more than {MAX_URLS_PER_SITEMAP:,} URLs; the ones after are counted, not checked"
                    )
            continue
        if number == 1:
            raw_line = raw_line.removeprefix(_UTF8_BOM)
        try:
            text = raw_line.decode("utf-8")
        except UnicodeDecodeError as exc:
            context.finding("text.encoding", number, f"not UTF-8: {exc.reason} at byte {exc.start}")
            continue
        loc = text.strip()
        if not loc:
            continue
        document.entries += 1
        context.check_loc(loc, number)
    if document.entries == 0:
        context.finding("file.empty", None, "no URL in the text sitemap")


class _LineIterator:
    """Lines of at most MAX_TEXT_LINE bytes; a longer one ends the iteration with a finding."""

    def __init__(self, reader: BoundedReader, context: Context) -> None:
        self._reader = reader
        self._context = context
        self._buffer = b""
        self._start = 0
        self._number = 0
        self._done = False

    def __iter__(self) -> _LineIterator:
        return self

    def __next__(self) -> bytes:
        # Lines are cut from the buffer at a moving start: slicing the rest of a 64 KiB buffer
        # for every line cost seconds on a million-line file.
        while not self._done:
            end = self._buffer.find(b"\n", self._start)
            if end >= 0:
                line, self._start = self._buffer[self._start : end], end + 1
                return self._line(line)
            if len(self._buffer) - self._start > MAX_TEXT_LINE:
                self._done = True
                self._context.finding(
                    "text.line_too_long",
                    self._number + 1,
                    f"a line over {MAX_TEXT_LINE:,} bytes; reading stopped",
                )
                break
            more = self._reader.read(MAX_TEXT_LINE)
            if not more:
                self._done = True
                if self._start < len(self._buffer):
                    return self._line(self._buffer[self._start :])
                break
            self._buffer, self._start = self._buffer[self._start :] + more, 0
        raise StopIteration

    def _line(self, line: bytes) -> bytes:
        self._number += 1
        return line.removesuffix(b"\r")

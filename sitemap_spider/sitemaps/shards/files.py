"""The files of a sitemap set: written whole or streamed, optionally gzipped, fsynced on close.

The gzip layer makes a file's bytes depend on its content only (no name, no time, fixed
compression slices), so a shard compressed as it is written, a document written in one go
and a plain file compressed afterwards are byte for byte the same.
"""

from __future__ import annotations

import contextlib
import os
import struct
from pathlib import Path
from typing import Protocol

from isal import isal_zlib

# Deflate level of the .gz shards, compressed by ISA-L (isal_zlib): its level 2, the library's
# default. On the 50,000-URL shards of a 1M-URL publish it takes 4 ms a shard against 29 ms for
# zlib-ng's level 6 (the compressor before: 0.5 of a publish's ~7 CPU s), for files 23% bigger
# (565 against 460 kB; zlib-ng's level 2 makes the same size in 11 ms). Changing the level,
# the slice size below or the ISA-L version may change the bytes of every published .gz file.
GZIP_LEVEL = 2
# ISA-L's output depends on how its input is split between calls: every file is compressed
# in slices of exactly this size (the last one shorter), whatever the sizes of the writes, so
# that its bytes depend on its content only. Large slices: isal_zlib releases the GIL for each.
_COMPRESS_BLOCK = 1 << 20
# A gzip member header without a name or a time (FLG 0, MTIME 0), XFL 0 and OS 255 (unknown):
# the header CPython's gzip module wrote, the same on every platform (zlib's own gzip wrapper
# writes the OS it was built on).
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


class _Writable(Protocol):
    """What a file is written through: the open file itself or the gzip layer."""

    def write(self, data: bytes, /) -> int: ...


class _GzipWriter:
    """One gzip member (ISA-L, ``GZIP_LEVEL``) whose bytes depend on its content only.

    Writes of any size are gathered and deflated in slices of exactly ``_COMPRESS_BLOCK``
    bytes, the rest by ``finish``: many small writes, one big one and a file read in blocks
    give the same bytes. The header has no name and no time.
    """

    def __init__(self, raw: _Writable) -> None:
        self._raw = raw
        # Raw deflate (negative wbits): the header and the trailer are written here.
        self._deflate = isal_zlib.compressobj(GZIP_LEVEL, isal_zlib.DEFLATED, -isal_zlib.MAX_WBITS)
        self._pending = bytearray()
        self._crc = 0
        self._size = 0
        raw.write(_GZIP_HEADER)

    def write(self, data: bytes) -> int:
        with memoryview(data) as view:
            rest = view
            if self._pending:  # first fill the slice begun by earlier writes
                room = _COMPRESS_BLOCK - len(self._pending)
                self._pending += rest[:room]
                rest = rest[room:]
                if len(self._pending) < _COMPRESS_BLOCK:
                    return len(data)
                self._deflate_slice(self._pending)
                self._pending = bytearray()
            # Whole slices straight from ``data``: a whole document is not copied first.
            whole = len(rest) - len(rest) % _COMPRESS_BLOCK
            for start in range(0, whole, _COMPRESS_BLOCK):
                self._deflate_slice(rest[start : start + _COMPRESS_BLOCK])
            self._pending += rest[whole:]
        return len(data)

    def finish(self) -> None:
        """Deflate what is left and write the trailer (CRC-32 and size of the content)."""
        self._deflate_slice(self._pending)
        self._pending = bytearray()
        self._raw.write(self._deflate.flush())
        self._raw.write(struct.pack("<II", self._crc, self._size & 0xFFFFFFFF))

    def _deflate_slice(self, data: memoryview | bytearray) -> None:
        self._crc = isal_zlib.crc32(data, self._crc)
        self._size += len(data)
        self._raw.write(self._deflate.compress(data))


class OutputFile:
    """A file written through an optional reproducible gzip layer, fsynced on close."""

    def __init__(self, path: Path, *, compress: bool, durable: bool = True) -> None:
        self._raw = open(path, "wb")  # noqa: SIM115 - closed in close()/abort()
        self._durable = durable
        self._gzip = _GzipWriter(self._raw) if compress else None
        self.stream: _Writable = self._gzip if self._gzip is not None else self._raw

    def close(self) -> None:
        if self._gzip is not None:
            self._gzip.finish()
        self._raw.flush()
        if self._durable:
            os.fsync(self._raw.fileno())
        self._raw.close()

    def abort(self) -> None:
        """Close without caring about the content: the caller throws the file away."""
        # A second error while closing a discarded file (disk full...) must not hide the
        # first one, which the caller is about to re-raise. What the gzip layer holds is
        # dropped with it: the file is not worth a trailer.
        with contextlib.suppress(OSError):
            self._raw.close()


def write_document(path: Path, data: bytes, *, gzip: bool) -> None:
    """Write a whole document (fsynced), gzipped if asked byte for byte as a gzip ShardWriter does."""
    out = OutputFile(Path(path), compress=gzip)
    try:
        # The gzip layer deflates fixed slices whatever the writes: one write of the whole
        # document gives the bytes of a ShardWriter's many small ones.
        out.stream.write(data)
    except BaseException:
        out.abort()
        raise
    out.close()


def gzip_file(source: Path, target: Path) -> None:
    """Compress ``source`` into ``target`` (fsynced), byte for byte as a gzip ShardWriter writes it."""
    out = OutputFile(Path(target), compress=True)
    try:
        with open(source, "rb") as plain:
            # Reads of one slice each, deflated as they come. The gzip layer deflates fixed
            # slices whatever the writes, so these are the bytes of a gzip ShardWriter's small
            # writes (tests/test_writer.py checks it).
            while block := plain.read(_COMPRESS_BLOCK):
                out.stream.write(block)
    except BaseException:
        out.abort()
        raise
    out.close()

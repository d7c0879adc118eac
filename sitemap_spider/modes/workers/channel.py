"""How the two crawling processes of a two-process crawl talk (see :mod:`sitemap_spider.modes.workers`).

Which process owns a URL (a hash both compute alike), and the channel between
them: JSON lines both ways over their socket pair. A page sends several messages (its
links, its entry, its record): the lines of one turn of the event loop leave in one
write, and are read back a chunk at a time, not with one system call and one wake-up
each.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import zlib
from collections.abc import Callable
from typing import Any

import msgspec

logger = logging.getLogger(__name__)

_msgspec_encode = msgspec.json.Encoder().encode
_msgspec_decode = msgspec.json.Decoder().decode
# The most read from the socket at once.
_CHUNK = 1024 * 1024


# A lone surrogate (a page's JSON-LD may escape half of a character: "\ud83d") is no UTF-8, and
# msgspec refuses it both ways: such a message goes as json's ASCII escapes, as before msgspec.
def _encode(message: dict[str, Any]) -> bytes:
    try:
        return _msgspec_encode(message)
    except UnicodeEncodeError:
        return json.dumps(message, separators=(",", ":")).encode()


def _decode(line: bytes) -> Any:
    try:
        return _msgspec_decode(line)
    except msgspec.DecodeError:
        return json.loads(line)  # its errors are ValueErrors too: the connection is broken


def owner(url: str, workers: int) -> int:
    """The process (0: leader) that fetches ``url``: a hash every process computes alike."""
    return zlib.crc32(url.encode("utf-8")) % workers


class Channel:
    """JSON lines both ways over a socket, read on the reactor's asyncio loop."""

    def __init__(self, sock: socket.socket, on_message: Callable[[dict[str, Any]], None],
                 on_lost: Callable[[], None]) -> None:
        self._on_message = on_message
        self._on_lost = on_lost
        self._out: list[bytes] = []  # lines sent, not yet written
        self._flush_soon: asyncio.Handle | None = None
        self._writer: asyncio.StreamWriter | None = None
        self.closed = False
        self._task = asyncio.ensure_future(self._run(sock))

    async def _run(self, sock: socket.socket) -> None:
        reader, writer = await asyncio.open_connection(sock=sock)
        self._writer = writer
        self._flush()
        pieces: list[bytes] = []  # a line not whole yet
        try:
            while chunk := await reader.read(_CHUNK):
                end = chunk.rfind(b"\n")
                if end < 0:
                    pieces.append(chunk)
                    continue
                pieces.append(chunk[:end])
                whole = b"".join(pieces)
                pieces = [chunk[end + 1 :]]
                for line in whole.split(b"\n"):
                    self._on_message(_decode(line))
        except (ConnectionError, ValueError) as exc:  # msgspec.DecodeError is a ValueError
            logger.warning("Worker connection broken: %s", exc)
        finally:
            if not self.closed:
                self.closed = True
                self._on_lost()

    def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        self._out.append(_encode(message))
        if self._flush_soon is None and self._writer is not None:
            self._flush_soon = asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        """Write the lines sent since the last write (in the order sent), in one write."""
        self._flush_soon = None
        if self._out and self._writer is not None and not self._writer.is_closing():
            self._out.append(b"")
            self._writer.write(b"\n".join(self._out))
        self._out.clear()

    async def drain(self) -> None:
        """Wait until what was sent has left (before the process ends)."""
        if self._writer is not None and not self.closed:
            self._flush()
            try:
                await self._writer.drain()
            except ConnectionError:
                pass

    def close(self) -> None:
        if self._writer is not None and not self.closed:
            self._flush()  # a transport writes what it holds before it closes
        self.closed = True
        if self._flush_soon is not None:
            self._flush_soon.cancel()
            self._flush_soon = None
        if self._writer is not None:
            self._writer.close()
        self._task.cancel()

    async def aclose(self) -> None:
        """Close, and let the reading task end before the loop does (no "Task was destroyed")."""
        self.close()
        await asyncio.gather(self._task, return_exceptions=True)

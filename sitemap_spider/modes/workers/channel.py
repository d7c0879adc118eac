"""How the two crawling processes of a two-process crawl talk (see :mod:`sitemap_spider.modes.workers`).

Which process owns a URL (a hash both compute alike), and the channel between
them: JSON lines both ways over their socket pair.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import zlib
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)


def owner(url: str, workers: int) -> int:
    """The process (0: leader) that fetches ``url``: a hash every process computes alike."""
    return zlib.crc32(url.encode("utf-8")) % workers


class Channel:
    """JSON lines both ways over a socket, read on the reactor's asyncio loop."""

    def __init__(self, sock: socket.socket, on_message: Callable[[dict[str, Any]], None],
                 on_lost: Callable[[], None]) -> None:
        self._on_message = on_message
        self._on_lost = on_lost
        self._pending: list[bytes] = []
        self._writer: asyncio.StreamWriter | None = None
        self.closed = False
        self._task = asyncio.ensure_future(self._run(sock))

    async def _run(self, sock: socket.socket) -> None:
        reader, writer = await asyncio.open_connection(sock=sock, limit=64 * 1024 * 1024)
        self._writer = writer
        for line in self._pending:
            writer.write(line)
        self._pending.clear()
        try:
            while line := await reader.readline():
                self._on_message(json.loads(line))
        except (ConnectionError, ValueError) as exc:
            logger.warning("Worker connection broken: %s", exc)
        finally:
            if not self.closed:
                self.closed = True
                self._on_lost()

    def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        if self._writer is None:
            self._pending.append(line)
        else:
            self._writer.write(line)

    async def drain(self) -> None:
        """Wait until what was sent has left (before the process ends)."""
        if self._writer is not None and not self.closed:
            try:
                await self._writer.drain()
            except ConnectionError:
                pass

    def close(self) -> None:
        self.closed = True
        if self._writer is not None:
            self._writer.close()
        self._task.cancel()

    async def aclose(self) -> None:
        """Close, and let the reading task end before the loop does (no "Task was destroyed")."""
        self.close()
        await asyncio.gather(self._task, return_exceptions=True)

"""A fixture site served with transient faults injected, for the faults tests (tests/test_faults.py).

:class:`FaultServer` is a :class:`~tests.site_server.SiteServer` (a real HTTP server on
127.0.0.1) that serves a site and, once :meth:`FaultServer.inject` is called, answers a fixed
share of its URLs, chosen by a hash of the path, with a fault for their first few requests (the
kinds in turn, in the order the faulty URLs are first requested, so that each kind is drawn):

- ``503``: 503 with ``Retry-After: 1``; ``502``, ``504``: without it; ``429``: without it;
- ``reset``: the connection is reset (RST) once the request is read;
- ``drop``: the connection is closed without an answer;
- ``truncated``: the full ``Content-Length``, half of the body, then the connection closes;
- ``slow``: the right answer, after a few seconds;
- ``down``: 502 for its first four requests, more than Scrapy's two immediate retries outlast
  (the "pages down for up to four attempts" of the fault weather in issue #24).

Besides, the whole site can answer 503 to everything for a while (a deploy: ``outage``), and
stop accepting connections for a while (a restart: ``refuse``), each starting once a given
number of requests has been served. Then every fault ends: the site is whole again.
"""

from __future__ import annotations

import hashlib
import re
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Final

from tests.site_server import SiteServer, _Handler
from tests.site_spec import SiteRequest

#: Kind of fault -> how many requests of the URL get it before the right answer.
FAULT_TRIES: Final = {
    "503": 2,
    "502": 2,
    "504": 2,
    "429": 2,
    "reset": 2,
    "drop": 1,
    "truncated": 2,
    "slow": 1,
    "down": 4,
}
KINDS: Final = tuple(FAULT_TRIES)


def is_faulty(target: str, share: int) -> bool:
    """Whether a path+query gets faults of its own: about ``share`` percent of them do."""
    return int.from_bytes(hashlib.sha256(target.encode()).digest()[:8], "big") % 100 < share


@dataclass(frozen=True)
class FaultPlan:
    """What is injected: the share of faulty URLs, and the two site-wide spells."""

    share: int = 10  # percent of URLs (robots.txt and ``spared`` excepted) with a fault of their own
    outage_after: int = 120  # requests served before the whole site answers 503 (0: never) ...
    outage_seconds: float = 15.0  # ... for this long
    refuse_after: int = 260  # requests served before the site refuses connections (0: never) ...
    refuse_seconds: float = 3.0  # ... for this long
    slow_seconds: float = 3.0
    #: Path+query patterns (fullmatch) that get no fault of their own; the site-wide spells reach them.
    spared: tuple[re.Pattern[str], ...] = ()
    #: Path+query -> (kind, requests that get it), besides the share: a page down for good, say.
    fixed: tuple[tuple[str, str, int], ...] = ()


class _FaultHandler(_Handler):
    server: FaultServer

    def _answer(self, *, send_body: bool) -> None:
        fault = self.server.fault_for(self.path)
        if fault in (None, "slow"):
            if fault == "slow":
                time.sleep(self.server.plan.slow_seconds if self.server.plan else 0)
            super()._answer(send_body=send_body)
            return
        # Recorded like the right answers are, by SiteServer's handler.
        self.server.record(SiteRequest(self.command, self.path, self.headers.get("Host", ""), tuple(self.headers.items())))
        if fault in ("reset", "drop", "refused"):
            if fault == "reset":
                # SO_LINGER with a zero timeout: close() sends RST instead of FIN.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
        elif fault == "truncated":
            self._truncated()
        else:
            self._status(int(fault.split(":")[0]), retry_after=fault == "503")

    def _status(self, status: int, *, retry_after: bool) -> None:
        body = b"<!DOCTYPE html><title>Unavailable</title><p>Try again later."
        self.send_response_only(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        if retry_after:
            self.send_header("Retry-After", "1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _truncated(self) -> None:
        route = self.server.resolve(SiteRequest("GET", self.path, "", ()))
        self.send_response_only(route.status)
        for name, value in route.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(route.body)))
        self.end_headers()
        self.wfile.write(route.body[: len(route.body) // 2])
        self.wfile.flush()
        self.close_connection = True


class FaultServer(SiteServer):
    """A SiteServer that injects :class:`FaultPlan`'s faults once :meth:`inject` is called."""

    def __init__(self) -> None:
        super().__init__()
        self.RequestHandlerClass = _FaultHandler
        self.plan: FaultPlan | None = None
        self._fault_lock = threading.Lock()
        self._tries: Counter[str] = Counter()  # path -> faulty answers given
        self._kinds: dict[str, str] = {}  # faulty path -> its kind of fault
        self.injected: Counter[str] = Counter()  # kind -> faulty answers given
        self._served = 0
        self._outage_until = 0.0
        self.refusing = False
        self.refusals: list[tuple[float, float]] = []  # (start, end) of each spell of refused connections

    def inject(self, plan: FaultPlan) -> None:
        """From now on, inject ``plan``'s faults (counted afresh)."""
        with self._fault_lock:
            self.plan = plan
            self._tries.clear()
            self._kinds.clear()
            self.injected.clear()
            self._served = 0

    def fault_for(self, target: str) -> str | None:
        """The fault this request gets (called from handler threads), or None for the right answer."""
        plan = self.plan
        if plan is None:
            return None
        with self._fault_lock:
            if self.refusing:
                return "refused"  # a kept-alive connection of before the restart: closed
            self._served += 1
            now = time.monotonic()
            if self._served == plan.outage_after:
                self._outage_until = now + plan.outage_seconds
            if self._served == plan.refuse_after:
                self.refusing = True
                threading.Thread(target=self._refuse, args=(plan.refuse_seconds,), daemon=True).start()
                return "refused"
            if now < self._outage_until:
                self.injected["outage"] += 1
                return "503:outage"
            fixed = {path: (kind, tries) for path, kind, tries in plan.fixed}
            kind, tries = fixed.get(target) or (self._kind(target, plan), 0)
            if kind is None or self._tries[target] >= (tries or FAULT_TRIES[kind]):
                return None
            self._tries[target] += 1
            self.injected[kind] += 1
            return {"down": "502"}.get(kind, kind)

    def _kind(self, target: str, plan: FaultPlan) -> str | None:
        if target == "/robots.txt" or any(p.fullmatch(target) for p in plan.spared):
            return None
        if target not in self._kinds and is_faulty(target, plan.share):
            self._kinds[target] = KINDS[len(self._kinds) % len(KINDS)]
        return self._kinds.get(target)

    def _refuse(self, seconds: float) -> None:
        """Stop listening for ``seconds`` (connections are refused), then listen on the same port again."""
        started = time.monotonic()
        port = self.port
        self.shutdown()
        self.socket.close()
        time.sleep(seconds)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(self.request_queue_size)
        self.socket = listener
        with self._fault_lock:
            self.refusing = False
            self.refusals.append((started, time.monotonic()))
        self.start()

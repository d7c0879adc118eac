"""What a publish changes: the URLs added, removed, and changed (their lastmod moved) since the
set published before.

Both sets are sorted by loc, so one merge walk compares them while the new shards are
written: memory holds a block of lines of each, and the changed URLs go to spool files, not
to lists. A block of new lines equal, text for text, to the next lines of the previous set (the
common case: most pages do not change) is passed over without parsing a line.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Final

from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.names import CHANGES_PREFIX
from sitemap_spider.sitemaps.changes.previous import (
    PreviousLines,
    PreviousSetError,
    parse_line,
    previous_shards,
)
from sitemap_spider.sitemaps.rules import parse_lastmod

logger = logging.getLogger(__name__)

KINDS: Final = ("added", "changed", "removed")
#: ``SetChanges.previous`` when there was no published set to compare with.
FIRST_SET: Final = "first set"


class SetChanges:
    """The URLs a publish added, changed and removed, spooled to unnamed temporary files.

    ``previous`` is None when the sets were compared; otherwise why not (:data:`FIRST_SET`,
    or why the previous set could not be read), and every count is 0.
    """

    def __init__(self, spool_dir: Path) -> None:
        self.previous: str | None = None
        self.counts = dict.fromkeys(KINDS, 0)
        self.new_urls = 0  # URLs of the new set compared with the previous one
        # Unnamed files (unlinked at once): never served from the output directory, never left behind.
        self._spools: dict[str, IO[str]] = {
            kind: tempfile.TemporaryFile(  # noqa: SIM115 - closed by close()
                "w+", encoding="utf-8", dir=spool_dir, prefix=CHANGES_PREFIX
            )
            for kind in KINDS
        }

    @property
    def compared(self) -> bool:
        """Whether the new set was compared with a previous one."""
        return self.previous is None

    @property
    def previous_urls(self) -> int:
        """How many URLs the previous set listed (0 when the sets were not compared)."""
        if not self.compared:
            return 0
        return self.new_urls - self.counts["added"] + self.counts["removed"]

    def record(self, kind: str, loc: str) -> None:
        """Note one URL of ``kind`` (one of :data:`KINDS`)."""
        self.counts[kind] += 1
        self._spools[kind].write(loc + "\n")

    def urls(self, kind: str) -> Iterator[str]:
        """The URLs of ``kind``, in loc order."""
        spool = self._spools[kind]
        spool.flush()
        spool.seek(0)
        for line in spool:
            yield line[:-1]
        spool.seek(0, 2)  # where record() goes on writing

    def forget(self, why: str) -> None:
        """No comparison after all: drop what was recorded and say why."""
        self.previous = why
        for kind, spool in self._spools.items():
            self.counts[kind] = 0
            spool.seek(0)
            spool.truncate()

    def describe(self) -> str:
        """``12 added, 3 changed, 1 removed``, or why there is no comparison."""
        if self.previous is not None:
            return f"none ({self.previous})"
        return ", ".join(f"{self.counts[kind]:,} {kind}" for kind in KINDS)

    def close(self) -> None:
        """Drop the spool files; idempotent."""
        for spool in self._spools.values():
            spool.close()


def lastmod_moved(old: str | None, new: str | None) -> bool:
    """Whether a page's lastmod says it changed: a new instant, or one where there was none.

    A lastmod that is dropped says nothing new about the page (its date is not known any more).
    """
    if new is None or old == new:
        return False
    if old is None:
        return True
    try:
        return parse_lastmod(old) != parse_lastmod(new)  # another spelling of the same instant is no change
    except InvalidEntryError:
        return True


class ChangeFinder:
    """Compare the new set, given block by block in loc order, with the set published before."""

    def __init__(self, output_dir: Path, index_name: str) -> None:
        self.changes = SetChanges(output_dir)
        self._previous: PreviousLines | None = None
        self._last: str | None = None  # the last previous line consumed (to check the order)
        try:
            shards = previous_shards(output_dir, index_name)
        except PreviousSetError as exc:
            self._give_up(str(exc))
            return
        if shards is None:
            self.changes.previous = FIRST_SET
        else:
            self._previous = PreviousLines(shards)

    def compare(self, lines: list[str]) -> None:
        """The next ``<url>`` lines of the new set, as written."""
        previous = self._previous
        if previous is None or not lines:
            return
        self.changes.new_urls += len(lines)
        try:
            if previous.ahead(len(lines)) == lines:  # one C-level comparison for the whole block
                previous.skip(len(lines))
                self._last = lines[-1]
                return
            # Else the lines that are the same still cost a comparison each, and only the others
            # are parsed: with one URL in 100 re-dated, parsing every line of such blocks made the
            # comparison of 1M URLs 3.2 CPU s instead of 0.6 (reading the previous set included).
            done = 0
            while done < len(lines):
                same = previous.skip_equal(lines, done)
                if same:
                    done += same
                    self._last = lines[done - 1]
                if done < len(lines):
                    self._merge(*parse_line(lines[done]))
                    done += 1
        except PreviousSetError as exc:
            self._give_up(str(exc))

    def _merge(self, loc: str, lastmod: str | None) -> None:
        record = self.changes.record
        while True:
            head = self._head()
            if head is None or head[0] > loc:
                record("added", loc)
                return
            self._consume()
            if head[0] == loc:
                if lastmod_moved(head[1], lastmod):
                    record("changed", loc)
                return
            record("removed", head[0])

    def _head(self) -> tuple[str, str | None] | None:
        assert self._previous is not None
        ahead = self._previous.ahead(1)
        if not ahead:
            return None
        head = parse_line(ahead[0])
        if self._last is not None and parse_line(self._last)[0] >= head[0]:
            raise PreviousSetError("the previous set is not in loc order")
        return head

    def _consume(self) -> None:
        assert self._previous is not None
        self._last = self._previous.ahead(1)[0]
        self._previous.skip(1)

    def finish(self) -> SetChanges:
        """Every previous URL not met is removed; the changes, to be closed by the caller."""
        try:
            if self._previous is not None:
                while (head := self._head()) is not None:
                    self._consume()
                    self.changes.record("removed", head[0])
        except PreviousSetError as exc:
            self._give_up(str(exc))
        self.close()
        return self.changes

    def _give_up(self, why: str) -> None:
        logger.warning("The new sitemap set is not compared with the previous one: %s", why)
        self.changes.forget(f"previous set unreadable: {why}")
        self.close()

    def close(self) -> None:
        """Close the previous set's files (the changes stay open)."""
        if self._previous is not None:
            self._previous.close()
            self._previous = None

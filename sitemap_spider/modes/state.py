"""The crawl's state in SQLite (WAL): frontier, seen requests, entries and exclusions.

Scrapy's JOBDIR keeps its request queue in memory until the crawl closes, while
``requests.seen`` grows on disk as it goes: after a SIGKILL a resumed crawl
finds every URL "seen" and nothing to do, and pages are silently lost. Here
everything a response produced (its new requests, its entry, its exclusions)
is written before the response is marked done, on one connection, so any
commit that holds the mark holds its consequences too. A resumed crawl puts
back the requests that were in flight and fetches only those again.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from sitemap_spider.history.record import PageRecord
from sitemap_spider.sitemaps import ROW_COLUMNS, SitemapEntry, entry_of_row, entry_row

logger = logging.getLogger(__name__)

PENDING, IN_FLIGHT, DONE = 0, 1, 2
# Commits are grouped: a SIGKILL loses at most this much work, which is fetched again.
COMMIT_INTERVAL = 0.2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    id INTEGER PRIMARY KEY,
    fingerprint BLOB UNIQUE,          -- NULL for requests that bypass the duplicate filter
    priority INTEGER NOT NULL,
    state INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS pending ON requests (state, priority DESC, id);
-- canonical: the URL the page names as canonical, when another (crawl/canonicals.py decides at the end).
CREATE TABLE IF NOT EXISTS entries (loc TEXT PRIMARY KEY, lastmod TEXT, changefreq TEXT,
                                    priority REAL, content_digest TEXT, extensions TEXT, canonical TEXT);
-- A page fetched again after a resume is reported once.
CREATE TABLE IF NOT EXISTS exclusions (url TEXT NOT NULL, reason TEXT NOT NULL, detail TEXT,
                                       UNIQUE (url, reason));
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
-- The report's counts (crawl/report_facts.py keys), summed over every run of the crawl.
CREATE TABLE IF NOT EXISTS counts (key TEXT PRIMARY KEY, n INTEGER NOT NULL);
-- The crawl history's records of this crawl (history/record.py), committed once the set is published.
CREATE TABLE IF NOT EXISTS observations (url TEXT PRIMARY KEY, record TEXT NOT NULL);
-- Extension data of listed pages not written (crawl/report.py's not_written).
CREATE TABLE IF NOT EXISTS problems (kind TEXT NOT NULL, reason TEXT NOT NULL, page TEXT NOT NULL,
                                     detail TEXT NOT NULL, UNIQUE (kind, reason, page, detail));
"""


class CrawlState:
    """One crawl's durable state, in one SQLite file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, isolation_level="DEFERRED")
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL: a process crash loses nothing committed; only a power cut may lose the last commits.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(entries)")}
        for column in ("extensions", "canonical"):  # a state file of an earlier version has neither
            if column not in columns:
                self._db.execute(f"ALTER TABLE entries ADD COLUMN {column} TEXT")
        self._last_commit = time.monotonic()
        # Done marks wait one commit interval: Scrapy queues a callback's requests a loop
        # turn after its output is drained, and a mark must never be committed before them.
        self._done_recent: list[int] = []
        self._done_due: list[int] = []
        self.resumed = False

    def start(self, fresh: bool) -> None:
        """Resume an unfinished crawl, or start over when asked or when the last one finished."""
        finished = self._meta("finished") == "1"
        has_work = self._db.execute("SELECT 1 FROM requests LIMIT 1").fetchone() is not None
        if fresh or finished or not has_work:
            if has_work:
                logger.info("Starting a new crawl in %s (%s)", self.path, "asked" if fresh else "the last one finished")
            for table in ("requests", "entries", "exclusions", "meta", "counts", "observations"):
                self._db.execute(f"DELETE FROM {table}")
        else:
            moved = self._db.execute(
                "UPDATE requests SET state = ? WHERE state = ?", (PENDING, IN_FLIGHT)
            ).rowcount
            pending = self.pending()
            logger.info(
                "Resuming the crawl in %s: %d requests to do, %d of them were in flight", self.path, pending, moved
            )
            self.resumed = True
        self.commit()

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def add_request(self, fingerprint: bytes | None, priority: int, data: bytes) -> bool:
        """Store a request; False when its fingerprint was seen before."""
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO requests (fingerprint, priority, state, data) VALUES (?, ?, ?, ?)",
            (fingerprint, priority, PENDING, data),
        )
        return cursor.rowcount == 1

    def take(self, count: int) -> list[tuple[int, bytes]]:
        """Up to ``count`` pending requests, highest priority first, marked in flight."""
        rows = self._db.execute(
            "SELECT id, data FROM requests WHERE state = ? ORDER BY priority DESC, id LIMIT ?",
            (PENDING, count),
        ).fetchall()
        self._db.executemany("UPDATE requests SET state = ? WHERE id = ?", [(IN_FLIGHT, row[0]) for row in rows])
        return [(int(row[0]), bytes(row[1])) for row in rows]

    def done(self, request_id: int) -> None:
        """Everything this request led to is stored: it is not fetched again.

        The mark is written with the commit after next, so the requests and entry the
        response produced are stored first; a crash before then fetches it again.
        """
        self._done_recent.append(request_id)
        self.maybe_commit()

    def pending(self) -> int:
        row = self._db.execute("SELECT count(*) FROM requests WHERE state = ?", (PENDING,)).fetchone()
        return int(row[0])

    def add_entry(self, entry: SitemapEntry, canonical: str | None = None) -> None:
        """Store an entry (and the other URL its page names as canonical, if any); a later one for
        the same loc replaces it."""
        columns = ", ".join((*ROW_COLUMNS, "canonical"))
        values = (*entry_row(entry), canonical)
        self._db.execute(f"INSERT OR REPLACE INTO entries ({columns}) VALUES (?, ?, ?, ?, ?, ?, ?)", values)

    def entries(self) -> Iterator[tuple[SitemapEntry, str | None]]:
        """Every stored entry and its canonical URL if another (in loc order, one per loc)."""
        query = f"SELECT {', '.join(ROW_COLUMNS)}, canonical FROM entries ORDER BY loc"
        for row in self._db.execute(query):
            yield entry_of_row(row[:-1]), row[-1]

    def add_exclusion(self, url: str, reason: str, detail: str | None) -> None:
        self._db.execute("INSERT OR IGNORE INTO exclusions VALUES (?, ?, ?)", (url, reason, detail))

    def add_problem(self, kind: str, reason: str, page: str, detail: str) -> None:
        self._db.execute("INSERT OR IGNORE INTO problems VALUES (?, ?, ?, ?)", (kind, reason, page, detail))

    def problems(self) -> Iterator[tuple[str, str, str, str]]:
        yield from self._db.execute("SELECT kind, reason, page, detail FROM problems ORDER BY rowid")

    def problem_counts(self) -> dict[str, int]:
        """``sitemap/<kind>/<reason>`` -> how many, over every run of the crawl."""
        rows = self._db.execute("SELECT kind, reason, count(*) FROM problems GROUP BY kind, reason")
        return {f"sitemap/{kind}/{reason}": int(count) for kind, reason, count in rows}

    def exclusions(self) -> Iterator[tuple[str, str, str | None]]:
        yield from self._db.execute("SELECT url, reason, detail FROM exclusions ORDER BY rowid")

    def exclusion_counts(self) -> dict[str, int]:
        rows = self._db.execute("SELECT reason, count(*) FROM exclusions GROUP BY reason ORDER BY reason")
        return {str(reason): int(count) for reason, count in rows}

    def add_counts(self, counts: Mapping[str, int]) -> None:
        # Committed with the next commit: a crash loses the last moments' counts, and a page
        # fetched again on resume is counted again (the counts are the report's, not the set's).
        self._db.executemany(
            "INSERT INTO counts VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET n = n + excluded.n", counts.items()
        )

    def counts(self) -> dict[str, int]:
        return {str(key): int(n) for key, n in self._db.execute("SELECT key, n FROM counts")}

    def add_observation(self, record: PageRecord) -> None:
        """Store a page's history record; a later one for the same URL replaces it."""
        self._db.execute("INSERT OR REPLACE INTO observations VALUES (?, ?)", (record.url, record.to_json()))

    def observations(self) -> Iterator[PageRecord]:
        for (text,) in self._db.execute("SELECT record FROM observations ORDER BY url"):
            yield PageRecord.from_json(text)

    def start_urls(self) -> list[str] | None:
        """The start URLs of the crawl this state belongs to, if any."""
        value = self._meta("start_urls")
        return None if value is None else list(json.loads(value))

    def set_start_urls(self, urls: list[str]) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES ('start_urls', ?)", (json.dumps(urls),))
        self.commit()

    def note(self, name: str) -> str | None:
        """What the crawl noted under ``name`` (Mode.crawl_note), kept for the run that resumes it."""
        return self._meta(f"note:{name}")

    def set_note(self, name: str, text: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"note:{name}", text))
        self.commit()

    def mark_finished(self) -> None:
        """The crawl ended and its set was published: the next run starts over."""
        self._db.execute("INSERT OR REPLACE INTO meta VALUES ('finished', '1')")
        self.commit(all_done=True)

    def maybe_commit(self) -> None:
        if time.monotonic() - self._last_commit >= COMMIT_INTERVAL:
            self.commit()

    def commit(self, *, all_done: bool = False) -> None:
        """Commit; the done marks of the previous interval (all of them with ``all_done``) go with it."""
        due = self._done_due + (self._done_recent if all_done else [])
        self._db.executemany("UPDATE requests SET state = ?, data = x'' WHERE id = ?", [(DONE, i) for i in due])
        self._done_due = [] if all_done else self._done_recent
        self._done_recent = []
        self._db.commit()
        self._last_commit = time.monotonic()

    def close(self) -> None:
        # At close the loop has run to the end: every request produced is stored.
        self.commit(all_done=True)
        self._db.close()

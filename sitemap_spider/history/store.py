"""The crawl history's SQLite file, and the staging of a crawl's records until its set is published."""

from __future__ import annotations

import logging
import sqlite3
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from sitemap_spider.history.record import COLUMNS, EXTENSIONS_UNKNOWN, RENDER_UNDECIDED, PageRecord

logger = logging.getLogger(__name__)

_TABLE = f"""
CREATE TABLE IF NOT EXISTS pages (
    url TEXT PRIMARY KEY, {", ".join(f"{name} {kind}" for name, kind in zip(COLUMNS[1:], (
        "TEXT NOT NULL", "TEXT", "TEXT", "TEXT", "REAL NOT NULL", "REAL", "TEXT",
        "INTEGER NOT NULL", "REAL NOT NULL", "BLOB", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT",
    ), strict=True))}
) WITHOUT ROWID;
"""  # fmt: skip
# The columns named: a file brought up to date added its columns in the order it got them.
_INSERT = f"INSERT OR REPLACE INTO pages ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
_SELECT = f"SELECT {', '.join(COLUMNS)} FROM pages"
# Another process may be committing (a second crawl of the site, a Redis publisher): wait for it.
_BUSY_SECONDS = 120.0
#: Records a crawl's staging holds before writing them in one statement (Staging).
_STAGED_ROWS = 256


#: The meta key, before the origin, of the extension kinds an origin's records were written with.
_KINDS = "extension_kinds "
#: The meta key, before the origin, of when its records were last committed (seconds since the epoch).
_PUBLISHED = "published_at "


class HistoryStore:
    """One site's crawl history: read by every process of a crawl, written once, when its set is published."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._closer: weakref.finalize[[], HistoryStore] | None = None
        #: No file when last asked, and no connection since (which creates it).
        self._absent = False

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Any thread: the crawl uses the store in its one thread (the reactor's), but the
            # finalizer below runs in the thread that drops the store or collects it (the
            # garbage collector runs in whichever thread allocates), when nothing else can use it.
            db = sqlite3.connect(
                self.path, timeout=_BUSY_SECONDS, isolation_level=None, check_same_thread=False
            )
            # WAL: the crawl's readers never wait for a commit, nor a commit for them.
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_TABLE + "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);")
            _add_extensions_column(db, self.path)
            _add_column(db, "excluded")
            # Records before it do not know which pages' render decision depends on their scripts: a
            # crawl that renders fetches each HTML page whole once (render/revisits.py).
            _add_column(db, "render", RENDER_UNDECIDED, "excluded IS NULL OR excluded NOT LIKE 'non_html%'")
            # Records before it named no canonical URL (crawl/recrawl.py fetches whole once those that
            # left a page out for one).
            _add_column(db, "canonical")
            self._db = db
            self._absent = False
            # Closed at exit too: a forced stop (a second Ctrl-C or SIGTERM) never reaches
            # close(), and an open connection leaves history.sqlite-wal and -shm beside the file.
            self._closer = weakref.finalize(self, db.close)
        return self._db

    def _reader(self) -> sqlite3.Connection | None:
        """The connection to read through; None while there is no file (before the first publish).

        Reading never creates the file: a crawl that publishes nothing leaves no history
        where there was none, as it leaves an existing one as it was.
        """
        if self._db is None:
            # Checked once: the file appears with this crawl's commit (which connects), and a
            # first crawl asked on every page (a stat each time, twice a page).
            if self._absent or not self.path.exists():
                self._absent = True
                return None
        return self._connection()

    def get(self, url: str) -> PageRecord | None:
        """The record of the page crawled at ``url``, if the last published set listed it."""
        db = self._reader()
        row = None if db is None else db.execute(_SELECT + " WHERE url = ?", (url,)).fetchone()
        return None if row is None else PageRecord.from_row(row)

    def records(self, origin: str | None = None) -> Iterator[PageRecord]:
        """Every record (only ``origin``'s when given), in URL order."""
        db = self._reader()
        if db is None:
            return
        # "/" and "0" are neighbours in ASCII: exactly the URLs under origin + "/".
        rows = db.execute(_SELECT + " ORDER BY url") if origin is None else db.execute(
            _SELECT + " WHERE url >= ? AND url < ? ORDER BY url", (origin + "/", origin + "0")
        )
        for row in rows:
            yield PageRecord.from_row(row)

    def _meta(self, key: str) -> str | None:
        """A value of the meta table; None when it is not there (or there is no file)."""
        db = self._reader()
        row = None if db is None else db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def published_at(self, origin: str) -> float | None:
        """When ``origin``'s records were last committed; None if never (or by a version that did not note it)."""
        value = self._meta(_PUBLISHED + origin)
        return None if value is None else float(value)

    def __len__(self) -> int:
        db = self._reader()
        return 0 if db is None else int(db.execute("SELECT count(*) FROM pages").fetchone()[0])

    def extension_kinds(self, origin: str, default: str) -> str:
        """The extension kinds (RichConfig.kinds) ``origin``'s records were written with, which may
        be none (""); ``default`` when not noted (no history yet, or one kept before they were)."""
        value = self._meta(_KINDS + origin)
        return default if value is None else value

    def note(self, name: str, origin: str) -> str | None:
        """What the last crawl of ``origin`` noted under ``name`` for the next one; None if nothing.

        The notes: "rendering", what render=auto's probes learnt (render/known.py); "pace",
        the pace the site held (crawl/throttle.py); "robots", the robots.txt the crawl read
        (crawl/robots.py).
        """
        return self._meta(f"{name} {origin}")

    def notes(self, origin: str) -> dict[str, str]:
        """Every note the last crawl of ``origin`` left (see :meth:`note`), by name."""
        db = self._reader()
        if db is None:
            return {}
        suffix = " " + origin
        rows = db.execute("SELECT key, value FROM meta WHERE substr(key, -?) = ?", (len(suffix), suffix))
        return {
            str(key)[: -len(suffix)]: str(value) for key, value in rows
            if not str(key).startswith((_PUBLISHED, _KINDS)) and " " not in str(key)[: -len(suffix)]
        }  # fmt: skip

    def commit(
        self, records: Iterable[PageRecord], origin: str, kinds: Callable[[], str] | None = None,
        notes: Mapping[str, Callable[[], str | None]] | None = None,
    ) -> int:  # fmt: skip
        """Replace ``origin``'s records with this crawl's, in one transaction; how many were written.

        Pages of the last set that this crawl did not list are dropped with the old records.
        One file may hold several origins (a SITEMAP_HISTORY shared by several sites).
        ``kinds``: the extension kinds the records were written with (see extension_kinds),
        asked once every record is written; ``notes``: what the crawl notes for the next one, by name
        (see :meth:`note`), each asked the same way (None: nothing, and the last one's is dropped).
        """
        db = self._connection()
        db.execute("BEGIN IMMEDIATE")
        try:
            # "/" and "0" are neighbours in ASCII: exactly the URLs under origin + "/".
            db.execute("DELETE FROM pages WHERE url >= ? AND url < ?", (origin + "/", origin + "0"))
            written = 0
            for record in records:
                db.execute(_INSERT, record.row())
                written += 1
            now = repr(time.time())
            db.execute("INSERT OR REPLACE INTO meta VALUES ('published_at', ?)", (now,))
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_PUBLISHED + origin, now))
            if kinds is not None:
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_KINDS + origin, kinds()))
            for name, note in (notes or {}).items():
                key, learnt = f"{name} {origin}", note()
                if learnt is None:
                    db.execute("DELETE FROM meta WHERE key = ?", (key,))
                else:
                    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, learnt))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return written

    def close(self) -> None:
        if self._closer is not None:
            self._closer()  # closes the connection, once
            self._closer = None
        self._db = None


def _add_extensions_column(db: sqlite3.Connection, path: Path) -> None:
    """Bring a file of the first layout (no ``extensions`` column) up to date, once.

    Its records do not know the pages' extensions: they are marked so (EXTENSIONS_UNKNOWN),
    and the next crawl fetches each of those pages whole once instead of asking for a 304.
    """
    columns = {row[1] for row in db.execute("PRAGMA table_info(pages)")}
    if "extensions" in columns:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have done it while this one waited for the lock.
        if "extensions" not in {row[1] for row in db.execute("PRAGMA table_info(pages)")}:
            db.execute("ALTER TABLE pages ADD COLUMN extensions TEXT")
            db.execute("UPDATE pages SET extensions = ?", (EXTENSIONS_UNKNOWN,))
            logger.info("Crawl history %s: its records now keep the pages' sitemap extensions", path)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _add_column(db: sqlite3.Connection, name: str, value: str | None = None, where: str = "1") -> None:
    """Bring a file written before records had column ``name`` up to date, once: the records ``where``
    holds get ``value``, the others none. ``excluded`` (all NULL: listed pages, as records of pages left
    out were not kept), ``render`` (not known), ``canonical`` (all NULL: see PageRecord)."""
    if name in {row[1] for row in db.execute("PRAGMA table_info(pages)")}:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have done it while this one waited for the lock.
        if name not in {row[1] for row in db.execute("PRAGMA table_info(pages)")}:
            db.execute(f"ALTER TABLE pages ADD COLUMN {name} TEXT")
            if value is not None:
                db.execute(f"UPDATE pages SET {name} = ? WHERE {where}", (value,))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


class Staging:
    """This crawl's records until its set is published: a private SQLite file the OS reclaims at close.

    SQLite deletes a database opened with an empty name when its connection closes, so a
    crawl that ends without publishing leaves nothing behind.
    """

    def __init__(self) -> None:
        self._db = sqlite3.connect("")
        self._db.executescript(_TABLE)
        # Rows wait here and go in a few hundred at a time: one statement a page cost a
        # recrawl of 304s as much as its history lookups.
        self._rows: list[tuple[object, ...]] = []

    def add(self, record: PageRecord) -> None:
        """Stage a record; a later one for the same URL replaces it."""
        self._rows.append(record.row())
        if len(self._rows) >= _STAGED_ROWS:
            self._flush()

    def _flush(self) -> None:
        rows, self._rows = self._rows, []
        try:
            self._db.executemany(_INSERT, rows)
        except sqlite3.Error:
            # A record SQLite refuses is lost alone, as it was when each went in by itself: the rest
            # of its batch goes in one at a time, and the first error is raised (for that page).
            failed: sqlite3.Error | None = None
            for row in rows:
                try:
                    self._db.execute(_INSERT, row)
                except sqlite3.Error as error:
                    failed = failed or error
            if failed is not None:
                raise failed from None

    def records(self) -> Iterator[PageRecord]:
        self._flush()
        for row in self._db.execute(_SELECT + " ORDER BY url"):
            yield PageRecord.from_row(row)

    def close(self) -> None:
        self._db.close()

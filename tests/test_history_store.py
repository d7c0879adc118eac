"""history/: records, the SQLite store's commit and the staging (tests/test_history_location.py: where the file lives)."""

from __future__ import annotations

import dataclasses
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sitemap_spider.history.record import PageRecord, pack_links, unpack_links
from sitemap_spider.history.store import HistoryStore, Staging

ORIGIN = "http://127.0.0.1:8000"


def record(path: str, origin: str = ORIGIN, **changes: object) -> PageRecord:
    base = PageRecord(
        url=origin + path, loc="https://example.com" + path, fingerprint="f", last_modified=None,
        etag='"e1"', first_seen=1.0, changed_at=1.0, lastmod=None, status=200, last_ok=2.0,
        outlinks=pack_links([origin + "/a", origin + "/b?x=1", "http://other/c", origin + "/a"], origin),
    )  # fmt: skip
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_links_are_packed_once_each_and_only_on_the_origin() -> None:
    packed = record("/").outlinks
    assert unpack_links(packed, ORIGIN) == [ORIGIN + "/a", ORIGIN + "/b?x=1"]
    assert pack_links([], ORIGIN) == b"" and unpack_links(b"", ORIGIN) == []


def test_a_record_survives_json_and_a_row() -> None:
    original = record("/p", lastmod="2024-01-01", outcome="kept", content_digest="d")
    assert PageRecord.from_json(original.to_json()) == original
    assert PageRecord.from_row(original.row()) == original


def test_commit_replaces_the_origins_records_in_one_go(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h" / "history.sqlite")
    other = "http://127.0.0.1:80001"  # a prefix of neither kind must stay apart
    assert store.commit([record("/gone"), record("/stays"), record("/x", origin=other)], ORIGIN) == 3
    assert store.commit([record("/stays", status=503, outcome="kept"), record("/new")], ORIGIN) == 2
    assert [r.url for r in store.records()] == [ORIGIN + "/new", ORIGIN + "/stays", other + "/x"]
    got = store.get(ORIGIN + "/stays")
    assert got is not None and got.status == 503
    assert store.get(ORIGIN + "/gone") is None


def test_a_failed_commit_leaves_the_history_as_it_was(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite")
    store.commit([record("/a"), record("/b")], ORIGIN)

    def broken() -> object:
        yield record("/c")
        raise sqlite3.OperationalError("disk I/O error")

    with pytest.raises(sqlite3.OperationalError):
        store.commit(broken(), ORIGIN)  # type: ignore[arg-type]
    assert [r.url for r in HistoryStore(tmp_path / "history.sqlite").records()] == [ORIGIN + "/a", ORIGIN + "/b"]


def test_staging_keeps_the_last_record_of_a_url() -> None:
    staging = Staging()
    staging.add(record("/a", status=200))
    staging.add(record("/a", status=304))
    staging.add(record("/b"))
    assert [(r.url, r.status) for r in staging.records()] == [(ORIGIN + "/a", 304), (ORIGIN + "/b", 200)]
    staging.close()


def test_staging_keeps_every_record_across_its_batches() -> None:
    # Records are written a few hundred at a time: the last one of a URL wins across batches
    # too, and reading writes what waits.
    staging = Staging()
    for i in range(1000):
        staging.add(record(f"/p{i:04d}", status=200))
    for i in range(0, 1000, 7):
        staging.add(record(f"/p{i:04d}", status=304))
    staging.add(record("/last"))
    rows = [(r.url, r.status) for r in staging.records()]
    assert len(rows) == 1001 and rows[-1] == (ORIGIN + "/p0999", 200) and (ORIGIN + "/last", 200) in rows
    assert [status for _, status in rows if status == 304] == [304] * len(range(0, 1000, 7))
    staging.add(record("/p0001", status=304))  # after a read, a record still replaces its URL's
    assert {r.url: r.status for r in staging.records()}[ORIGIN + "/p0001"] == 304
    staging.close()


def test_a_batch_that_fails_is_lost_alone() -> None:
    staging = Staging()
    with pytest.raises(sqlite3.IntegrityError):
        for i in range(256):  # the last one fills the batch, which has a record SQLite refuses
            staging.add(record(f"/p{i:03d}", status=None) if i == 7 else record(f"/p{i:03d}"))
    staging.add(record("/after"))
    urls = [r.url for r in staging.records()]
    assert urls == [ORIGIN + "/after"] + [ORIGIN + f"/p{i:03d}" for i in range(256) if i != 7]  # in URL order
    staging.close()


def test_a_history_file_that_appears_later_is_read_after_this_store_commits(tmp_path: Path) -> None:
    # A first crawl asks once whether there is a file; its own commit creates it and reads go to it.
    store = HistoryStore(tmp_path / "history.sqlite")
    assert store.get(ORIGIN + "/a") is None and not (tmp_path / "history.sqlite").exists()
    store.commit([record("/a")], ORIGIN)
    got = store.get(ORIGIN + "/a")
    assert got is not None and got.url == ORIGIN + "/a"
    store.close()
    assert len(store) == 1  # reopened after a close, the file is read again
    store.close()


def test_notes_are_kept_by_name_and_dropped_when_none(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite")
    assert store.note("pace", ORIGIN) is None and not (tmp_path / "history.sqlite").exists()
    store.commit([record("/a")], ORIGIN, notes={"pace": lambda: "0.004", "rendering": lambda: "r"})
    assert store.note("pace", ORIGIN) == "0.004" and store.note("rendering", ORIGIN) == "r"
    store.commit([record("/a")], ORIGIN, notes={"pace": lambda: None})
    assert store.note("pace", ORIGIN) is None and store.note("rendering", ORIGIN) == "r"
    store.close()


def test_links_written_with_the_public_origin_are_kept_as_the_crawled_ones() -> None:
    packed = pack_links([ORIGIN + "/a", "https://www.example.com/b", "https://www.example.com"], ORIGIN,
                        "https://www.example.com")
    assert unpack_links(packed, ORIGIN) == [ORIGIN + "/a", ORIGIN + "/b"]


# Reads the history and exits without closing it, as a forced stop (a second Ctrl-C) does: the
# store is still referenced at exit (here from a daemon thread, in a crawl from the stopped
# engine), so no garbage collection closes it either.
_READER_THAT_FORGETS_TO_CLOSE = """
import sys, threading
from pathlib import Path
from sitemap_spider.history.store import HistoryStore
reader = HistoryStore(Path(sys.argv[1]))
assert reader.get(sys.argv[2]) is not None
holder = threading.Thread(target=lambda held: threading.Event().wait(), args=(reader,), daemon=True)
holder.start()
"""


def test_a_process_that_exits_without_closing_leaves_nothing_beside_the_file(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    store = HistoryStore(path)
    store.commit([record("/a")], ORIGIN)
    store.close()
    before = path.read_bytes()
    subprocess.run([sys.executable, "-c", _READER_THAT_FORGETS_TO_CLOSE, str(path), ORIGIN + "/a"],
                   check=True, cwd=Path(__file__).parent.parent)  # fmt: skip
    assert [p.name for p in tmp_path.iterdir()] == ["history.sqlite"]
    assert path.read_bytes() == before


def test_reading_a_history_that_does_not_exist_makes_no_file(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h" / "history.sqlite")
    assert store.get(ORIGIN + "/a") is None and list(store.records()) == [] and len(store) == 0
    store.close()
    assert list(tmp_path.iterdir()) == []
    # The first publish makes it.
    store.commit([record("/a")], ORIGIN)
    assert store.get(ORIGIN + "/a") is not None and len(store) == 1
    store.close()


def test_extension_kinds_tell_none_noted_from_not_noted(tmp_path: Path) -> None:
    """A history written with every extension off notes "" (none known), which is not the default
    a history without the note gets (hreflang, as the settings' default)."""
    store = HistoryStore(tmp_path / "history.sqlite")
    assert store.extension_kinds(ORIGIN, "h") == "h"  # no history yet
    store.commit([record("/a")], ORIGIN)
    assert store.extension_kinds(ORIGIN, "h") == "h"  # kept without the note
    store.commit([record("/a")], ORIGIN, lambda: "")
    assert store.extension_kinds(ORIGIN, "h") == ""
    store.commit([record("/a")], ORIGIN, lambda: "hi")
    assert store.extension_kinds(ORIGIN, "h") == "hi"
    assert store.extension_kinds("https://other.example", "h") == "h"  # per origin
    store.close()


def test_a_store_dropped_in_another_thread_closes_its_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The garbage collector finalizes a store in whichever thread it runs in (a cycle that holds
    one collected while a test server's thread allocates): its connection closes there too."""
    unraisable: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda raised: unraisable.append(raised.exc_value))
    path = tmp_path / "history.sqlite"
    store = HistoryStore(path)
    store.commit([record("/a")], ORIGIN)
    held = [store]
    del store
    dropper = threading.Thread(target=held.clear)  # the last reference goes in that thread
    dropper.start()
    dropper.join()
    assert unraisable == []
    assert [p.name for p in tmp_path.iterdir()] == ["history.sqlite"]  # closed: no -wal, no -shm

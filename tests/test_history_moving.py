"""history/moving.py: a history file at the old default place is moved to the new one, once.

A crawl that finds it there is tested end to end in tests/test_history_modes.py.
"""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from sitemap_spider.history.moving import move_old_history
from sitemap_spider.history.store import HistoryStore
from tests.test_history_store import ORIGIN, record

# Commits records and dies without closing the file: its last commit is only in the WAL.
_CRASHING_WRITER = """
import os, sys
from sitemap_spider.history.store import HistoryStore
from tests.test_history_store import ORIGIN, record
store = HistoryStore(__import__("pathlib").Path(sys.argv[1]))
store.commit([record("/a"), record("/b")], ORIGIN)
store.commit([record("/a"), record("/b"), record("/c")], ORIGIN)
os._exit(0)
"""


def write(path: Path, *paths: str) -> None:
    """A history file holding records of ``paths``, closed (no WAL beside it)."""
    store = HistoryStore(path)
    store.commit([record(p) for p in paths], ORIGIN)
    store.close()


def urls(path: Path) -> list[str]:
    store = HistoryStore(path)
    try:
        return [r.url for r in store.records()]
    finally:
        store.close()


def test_a_history_left_with_its_wal_is_moved_whole(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    old = tmp_path / "project" / ".scrapy" / "sitemap-history" / "origin.sqlite"
    new = tmp_path / "home" / "sitemap-history" / "origin.sqlite"
    subprocess.run([sys.executable, "-c", _CRASHING_WRITER, str(old)], check=True, cwd=Path(__file__).parent.parent)
    assert Path(f"{old}-wal").stat().st_size > 0, "the writer closed the file: the test tests nothing"
    with caplog.at_level(logging.INFO, logger="sitemap_spider.history.moving"):
        assert move_old_history(old, new)
    assert urls(new) == [ORIGIN + "/a", ORIGIN + "/b", ORIGIN + "/c"]
    # Nothing is left at the old place, nor half-copied at the new one.
    assert not old.parent.exists()
    assert [p.name for p in new.parent.iterdir()] == ["origin.sqlite"]
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and str(old) in said[0] and str(new) in said[0], said
    # Once: the next crawl finds it in its place.
    assert not move_old_history(old, new)


def test_a_history_at_the_new_place_wins_and_the_old_one_is_left_alone(tmp_path: Path) -> None:
    old, new = tmp_path / "old" / "h.sqlite", tmp_path / "new" / "h.sqlite"
    write(old, "/old")
    write(new, "/new")
    assert not move_old_history(old, new)
    assert urls(new) == [ORIGIN + "/new"] and urls(old) == [ORIGIN + "/old"]


def test_without_an_old_history_nothing_is_made(tmp_path: Path) -> None:
    old, new = tmp_path / "old" / "h.sqlite", tmp_path / "new" / "h.sqlite"
    assert not move_old_history(old, new)
    assert not old.exists() and not new.exists()


def test_another_history_in_the_old_folder_stays(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    write(folder / "a.sqlite", "/a")
    write(folder / "b.sqlite", "/b")
    assert move_old_history(folder / "a.sqlite", tmp_path / "new" / "a.sqlite")
    assert sorted(p.name for p in folder.iterdir()) == ["b.sqlite"]


def test_a_file_that_is_no_database_is_not_moved(tmp_path: Path) -> None:
    old, new = tmp_path / "old" / "h.sqlite", tmp_path / "new" / "h.sqlite"
    old.parent.mkdir()
    old.write_bytes(b"not a database, but someone's file" * 100)
    with pytest.raises(sqlite3.DatabaseError) as raised:
        move_old_history(old, new)
    assert "database" in str(raised.value)
    assert old.read_bytes().startswith(b"not a database") and not new.exists()
    assert not list(new.parent.iterdir()), "a partial copy was left"

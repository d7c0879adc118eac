"""history/: records, the SQLite store's commit and the staging (tests/test_history_location.py: where the file lives)."""

from __future__ import annotations

import dataclasses
import sqlite3
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


def test_links_written_with_the_public_origin_are_kept_as_the_crawled_ones() -> None:
    packed = pack_links([ORIGIN + "/a", "https://www.example.com/b", "https://www.example.com"], ORIGIN,
                        "https://www.example.com")
    assert unpack_links(packed, ORIGIN) == [ORIGIN + "/a", ORIGIN + "/b"]

"""crawl/recrawl.py: which failures keep a page of the last set listed, and for how long."""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from scrapy.http import HtmlResponse

from sitemap_spider.config import CrawlTarget
from sitemap_spider.crawl.recrawl import DAY, Recrawl, is_transient, response_facts
from sitemap_spider.history.record import PageRecord
from sitemap_spider.history.store import HistoryStore

ORIGIN = "http://127.0.0.1:8000"


@pytest.mark.parametrize(
    ("status", "transient"),
    [(0, True), (408, True), (429, True), (500, True), (503, True), (599, True),
     (404, False), (410, False), (403, False), (401, False), (200, False), (304, False)],
)
def test_which_failures_may_pass(status: int, transient: bool) -> None:
    assert is_transient(status) is transient


def _recrawl(tmp_path: Path, fetched_days_ago: float, days: float = 7.0) -> Recrawl:
    store = HistoryStore(tmp_path / "history.sqlite")
    record = PageRecord(
        url=ORIGIN + "/p", loc=ORIGIN + "/p", fingerprint="v1:f", last_modified=None, etag=None,
        first_seen=0.0, changed_at=0.0, lastmod="2024-01-01", status=200,
        last_ok=time.time() - fetched_days_ago * DAY,
    )  # fmt: skip
    store.commit([record], ORIGIN)
    crawler: Any = None  # kept() counts nothing
    return Recrawl(store, CrawlTarget.from_arguments({"url": ORIGIN + "/"}), days, crawler)


@pytest.mark.parametrize(("days_ago", "kept"), [(0.0, True), (6.9, True), (7.1, False)])
def test_a_page_is_kept_for_the_days_since_it_was_last_fetched_well(
    tmp_path: Path, days_ago: float, kept: bool
) -> None:
    recrawl = _recrawl(tmp_path, days_ago)
    record = recrawl.kept(ORIGIN + "/p", 503)
    assert (record is not None) is kept
    if record is not None:
        assert record.status == 503 and record.outcome == "kept" and record.lastmod == "2024-01-01"
        assert dataclasses.replace(record, status=200, outcome="new") == recrawl.record(ORIGIN + "/p")


def test_a_page_that_is_gone_or_unknown_is_not_kept(tmp_path: Path) -> None:
    recrawl = _recrawl(tmp_path, 1.0)
    assert recrawl.kept(ORIGIN + "/p", 404) is None
    assert recrawl.kept(ORIGIN + "/other", 503) is None
    assert _recrawl(tmp_path / "zero", 0.0001, days=0.0).kept(ORIGIN + "/p", 503) is None


@pytest.mark.parametrize(
    ("last_modified", "lastmod", "kept"),
    [
        ("Thu, 01 Jan 1970 00:00:01 GMT", "1970-01-01T00:00:01+00:00", None),  # a Nix store's
        (None, "1980-01-01", None),  # metadata of a zip's files
        ("Mon, 01 Jan 0001 00:00:00 GMT", "2001-01-01T00:00:00+00:00", None),  # email.utils' reading
        ("Mon, 01-Jan-0001 00:00:00 GMT", "2001-01-01T00:00:00+00:00", None),
        ("Mon, 01 Jan 0001 00:00:00 GMT", "2024-05-01", "2024-05-01"),  # dated by metadata or a change
        ("Mon, 01 Jan 2001 00:00:00 GMT", "2001-01-01T00:00:00+00:00", "2001-01-01T00:00:00+00:00"),
        (None, "2024-01-01", "2024-01-01"),
    ],
)
def test_a_placeholder_lastmod_of_an_earlier_release_is_not_kept(
    tmp_path: Path, last_modified: str | None, lastmod: str, kept: str | None
) -> None:
    """Before the 1991 floor a history kept such lastmods; a 304, a kept page and unchanged content
    would list them for ever, all read through Recrawl.record."""
    store = HistoryStore(tmp_path / "history.sqlite")
    record = PageRecord(
        url=ORIGIN + "/p", loc=ORIGIN + "/p", fingerprint="v1:f", last_modified=last_modified, etag=None,
        first_seen=0.0, changed_at=0.0, lastmod=lastmod, status=200, last_ok=time.time(),
    )  # fmt: skip
    store.commit([record], ORIGIN)
    crawler: Any = None
    recrawl = Recrawl(store, CrawlTarget.from_arguments({"url": ORIGIN + "/"}), 7.0, crawler)
    found = recrawl.record(ORIGIN + "/p")
    assert found is not None and found.lastmod == kept
    assert dataclasses.replace(found, lastmod=lastmod) == record
    kept_record = recrawl.kept(ORIGIN + "/p", 503)
    assert kept_record is not None and kept_record.lastmod == kept


def test_a_server_clock_ahead_of_ours_vouches_for_no_lastmod_in_the_future() -> None:
    """A Date a year ahead once let a Last-Modified up to it through as the lastmod (a future one,
    which validate warns of and search engines ignore): the response is dated at its receipt then."""
    ahead = time.time() + 365 * DAY
    headers = {"Date": format_datetime(_utc(ahead), usegmt=True),
               "Last-Modified": format_datetime(_utc(ahead - 30 * DAY), usegmt=True)}
    facts = response_facts(HtmlResponse("http://h/", body=b"<html></html>", headers=headers))
    assert facts["response_time"] == facts["fetched_at"]
    behind = time.time() - DAY  # a clock behind ours: its Date still dates the response
    headers["Date"] = format_datetime(_utc(behind), usegmt=True)
    facts = response_facts(HtmlResponse("http://h/", body=b"<html></html>", headers=headers))
    assert facts["response_time"] == pytest.approx(int(behind))


def _utc(timestamp: float) -> datetime:
    return datetime.fromtimestamp(int(timestamp), UTC)

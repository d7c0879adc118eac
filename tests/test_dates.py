from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from parsel import Selector

from sitemap_spider.crawl.dates import (
    Evidence,
    PageDate,
    Prior,
    choose_lastmod,
    lastmod_from_header,
    metadata_date,
    parse_http_date,
    parse_page_date,
    retry_after_seconds,
    w3c_datetime,
)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("Wed, 01 May 2024 10:20:30 GMT", "2024-05-01T10:20:30+00:00"),
        (b"Wed, 01 May 2024 10:20:30 GMT", "2024-05-01T10:20:30+00:00"),
        ("Wed,  01 May 2024 10:20:30 GMT ", "2024-05-01T10:20:30+00:00"),
        ("Wednesday, 01-May-24 10:20:30 GMT", "2024-05-01T10:20:30+00:00"),  # RFC 850
        ("Wed May  1 10:20:30 2024", "2024-05-01T10:20:30+00:00"),  # asctime
        ("Sat, 29 Feb 2020 23:59:59 +0200", "2020-02-29T21:59:59+00:00"),
        ("Wed, 01 May 2024 10:20:30", None),  # no zone: not an instant
        ("Wed, 01 May 2024 10:20:30 -0000", None),  # RFC 5322's "zone unknown"
        ("yesterday", None),
        ("Wed, 31 Feb 2024 10:20:30 GMT", None),
        ("Fri, 31 Dec 9999 23:59:59 -0100", None),  # in UTC, past datetime.max: not an error
        # Placeholders, not changes: .NET's DateTime.MinValue (email.utils read it as 2001), a year
        # written with a leading zero (0069 was 1969), the Unix and DOS epochs of zeroed file times.
        ("Mon, 01 Jan 0001 00:00:00 GMT", None),
        ("Mon, 01 Jan 0001 00:00:00 +0000", None),
        ("Tue, 01 Jan 0069 00:00:00 GMT", None),
        ("Mon, 01-Jan-0001 00:00:00 GMT", None),  # the dashed layout, a four-digit year (was 2001)
        ("Saturday, 01-Jan-0000 00:00:00 GMT", None),  # was 2000-01-01, a date after the web
        ("Sat, 01-Jan-2000 00:00:00 GMT", "2000-01-01T00:00:00+00:00"),
        ("Sat, 29 Feb 2020 23:59:59-0200", "2020-03-01T01:59:59+00:00"),  # a zone with no space is no year
        ("Thu, 01 Jan 1970 00:00:01 GMT", None),
        ("Tue, 01 Jan 1980 00:00:00 GMT", None),
        ("Tue, 01 Jan 1991 00:00:00 GMT", "1991-01-01T00:00:00+00:00"),  # the earliest kept
        ("", None),
        (None, None),
    ],
)
def test_lastmod_from_header(header: str | bytes | None, expected: str | None) -> None:
    assert lastmod_from_header(header) == expected


def test_parse_http_date_is_aware_utc() -> None:
    parsed = parse_http_date("Wed, 01 May 2024 10:20:30 GMT")
    assert parsed == datetime(2024, 5, 1, 10, 20, 30, tzinfo=UTC)


def test_parse_http_date_reads_repeated_and_overlong_values_alike() -> None:
    """Parsed values are cached by their text; a value too long to be an HTTP date is not kept."""
    moment = datetime(2024, 5, 1, 10, 20, 30, tzinfo=UTC)
    assert parse_http_date(b"Wed, 01 May 2024 10:20:30 GMT") == moment
    assert parse_http_date("Wed, 01 May 2024 10:20:30 GMT") == moment
    padded = "Wed,  01 May 2024" + " " * 60 + "10:20:30 GMT"
    assert parse_http_date(padded) == moment
    assert parse_http_date("x" * 100) is None


def test_w3c_datetime_refuses_naive_times() -> None:
    with pytest.raises(ValueError):
        w3c_datetime(datetime(2024, 5, 1))


# --- page metadata and the order of evidence --------------------------------------

RESPONSE = datetime(2026, 11, 24, 10, 0, 0, tzinfo=UTC)
NOW_HEADER = "Tue, 24 Nov 2026 10:00:00 GMT"
OLD_HEADER = "Wed, 01 May 2024 10:20:30 GMT"


def _root(head: str) -> object:
    return Selector(text=f"<html><head>{head}</head><body><p>x</p></body></html>").root


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ('<script type="application/ld+json">{"@type": "Article", "dateModified": "2025-03-04T05:06:07Z"}</script>',
         "2025-03-04T05:06:07+00:00"),
        (('<script type="application/ld+json">{"@graph": [{"@type": "WebSite"}, '
          '{"@type": "WebPage", "dateModified": "2025-03-04T07:06:07+02:00"}]}</script>'),
         "2025-03-04T07:06:07+02:00"),
        ('<script type="application/ld+json">[{"dateModified": "2025-03-04"}]</script>', "2025-03-04"),
        (('<script type="application/ld+json">{broken</script>'
          '<meta property="article:modified_time" content="2024-12-31T23:00:00+00:00">'),
         "2024-12-31T23:00:00+00:00"),
        ('<meta property="og:updated_time" content="2024-12-30T01:02:03Z">', "2024-12-30T01:02:03+00:00"),
        ('<meta itemprop="dateModified" content="2024-02-29">', "2024-02-29"),
        ('<meta itemprop="dateModified" content="2024-02-29T10:00:00">', "2024-02-29"),  # no zone: its date
        ("<time itemprop=\"dateModified\" datetime=\"2023-07-08T09:10:11Z\">July</time>", "2023-07-08T09:10:11+00:00"),
        ('<meta property="article:modified_time" content="2026-11-25T00:00:00Z">', None),  # after the response
        ('<meta property="article:modified_time" content="last week">', None),
        ('<meta property="article:published_time" content="2024-01-01">', None),
        ('<meta itemprop="dateModified" content="0001-01-01">', None),  # a placeholder, before the web
        ('<script type="application/ld+json">{"dateModified": "-0001-11-30T00:00:00+00:00"}</script>', None),
        # Instants out of datetime's range once in UTC: no date (they raised OverflowError, and the
        # page was dropped from the sitemap).
        ('<meta property="article:modified_time" content="0001-01-01T00:00:00+14:00">', None),
        ('<script type="application/ld+json">{"dateModified": "9999-12-31T23:59:59-14:00"}</script>', None),
        ("", None),
    ],
)
def test_metadata_date(head: str, expected: str | None) -> None:
    found = metadata_date(_root(head), RESPONSE)
    assert (found.text if found else None) == expected


@pytest.mark.parametrize(
    ("modified", "expected"),
    [
        ("2026-11-24T10:00:00Z", None),  # the response's second: a template's new Date()
        ("2026-11-24T09:59:55.123Z", None),
        ("2026-11-24T09:59:49Z", "2026-11-24T09:59:49+00:00"),  # as a Last-Modified 11 s before Date
        ("2026-11-24", "2026-11-24"),  # a date alone is the day's, not the response's second
    ],
)
def test_metadata_stamped_at_the_response_is_no_date(modified: str, expected: str | None) -> None:
    """Metadata comes before a Last-Modified: a dateModified stamped per request ("now") would date
    every page at the crawl (and, without a history, anew at every crawl) where the header had a date."""
    head = f'<script type="application/ld+json">{{"dateModified": "{modified}"}}</script>'
    found = metadata_date(_root(head), RESPONSE)
    assert (found.text if found else None) == expected
    if expected is None:
        assert choose_lastmod(Evidence(OLD_HEADER, RESPONSE, found, None, RESPONSE), None) == (
            "2024-05-01T10:20:30+00:00"
        ), "the header dates the page"


def test_metadata_date_beside_a_response_dated_at_the_end_of_time() -> None:
    """A Date header within the slack of datetime.max: the comparison does not overflow."""
    head = '<meta property="article:modified_time" content="2024-03-01T10:00:00+00:00">'
    found = metadata_date(_root(head), datetime(9999, 12, 31, 23, 59, 55, tzinfo=UTC))
    assert found is not None and found.text == "2024-03-01T10:00:00+00:00"


def test_a_placeholder_is_passed_over_for_the_next_source() -> None:
    """A zero time written for no date, as an unreadable date is; a date after the response is not."""
    head = ('<script type="application/ld+json">{"dateModified": "1970-01-01T00:00:00Z"}</script>'
            '<meta property="article:modified_time" content="2024-03-01T10:00:00+00:00">')
    found = metadata_date(_root(head), RESPONSE)
    assert found is not None and found.text == "2024-03-01T10:00:00+00:00"
    head = ('<script type="application/ld+json">{"dateModified": "2026-11-25T00:00:00Z"}</script>'
            '<meta property="article:modified_time" content="2024-03-01T10:00:00+00:00">')
    assert metadata_date(_root(head), RESPONSE) is None


def test_json_ld_comes_before_meta_tags() -> None:
    head = ('<meta property="article:modified_time" content="2020-01-01T00:00:00Z">'
            '<script type="application/ld+json">{"dateModified": "2021-01-01T00:00:00Z"}</script>')
    found = metadata_date(_root(head), RESPONSE)
    assert found is not None and found.text == "2021-01-01T00:00:00+00:00"


def _evidence(
    header: str | None = None, metadata: str | None = None, fingerprint: str = "v1:f1", fetched: datetime = RESPONSE
) -> Evidence:
    return Evidence(header, RESPONSE, parse_page_date(metadata), fingerprint, fetched)


CHANGED_AT = "2026-11-24T10:00:00+00:00"


@pytest.mark.parametrize(
    ("label", "evidence", "prior", "expected"),
    [
        ("old Last-Modified", _evidence(OLD_HEADER), None, "2024-05-01T10:20:30+00:00"),
        ("Last-Modified = Date: no date", _evidence(NOW_HEADER), None, None),
        ("Last-Modified a few s before Date", _evidence("Tue, 24 Nov 2026 09:59:55 GMT"), None, None),
        ("Last-Modified 2 s after Date", _evidence("Tue, 24 Nov 2026 10:00:02 GMT"), None, None),
        ("Last-Modified = Date, metadata", _evidence(NOW_HEADER, "2025-01-02"), None, "2025-01-02"),
        # Unchanged content keeps the lastmod in force; the page's metadata dates a change, or a page without one.
        ("unchanged: history beats new metadata", _evidence(None, "2025-01-02"), Prior("v1:f1", None, "2020-01-01"),
         "2020-01-01"),
        ("changed: metadata beats history", _evidence(None, "2025-01-02", fingerprint="v1:f2"),
         Prior("v1:f1", None, "2020-01-01"), "2025-01-02"),
        ("unchanged, no lastmod in force: metadata", _evidence(None, "2025-01-02"), Prior("v1:f1", None, None),
         "2025-01-02"),
        # The page's own date before its Last-Modified (on static hosting, the deploy's time)...
        ("first seen: metadata beats Last-Modified", _evidence(OLD_HEADER, "2025-01-02"), None, "2025-01-02"),
        ("changed: metadata beats Last-Modified", _evidence(OLD_HEADER, "2025-01-02", fingerprint="v1:f2"),
         Prior("v1:f1", "Sun, 01 Nov 2020 00:00:00 GMT", "2020-11-01T00:00:00+00:00"), "2025-01-02"),
        # ...unless, the content changed, it is no later than the lastmod in force: a stale one.
        ("changed, stale metadata: Last-Modified", _evidence(OLD_HEADER, "2020-01-01", fingerprint="v1:f2"),
         Prior("v1:f1", "Sun, 01 Nov 2020 00:00:00 GMT", "2020-11-01T00:00:00+00:00"), "2024-05-01T10:20:30+00:00"),
        ("changed, stale metadata, no header: dated at this fetch", _evidence(None, "2020-11-01", fingerprint="v1:f2"),
         Prior("v1:f1", None, "2020-11-01T00:00:00+00:00"), CHANGED_AT),
        # Compared as written, to the second: a dateModified with milliseconds (Hexo's, any toISOString)
        # is the lastmod it gave, stale once the content changed.
        ("changed, stale metadata with milliseconds: Last-Modified",
         _evidence(OLD_HEADER, "2023-02-05T10:39:15.951Z", fingerprint="v1:f2"),
         Prior("v1:f1", "Sun, 01 Nov 2020 00:00:00 GMT", "2023-02-05T10:39:15+00:00"),
         "2024-05-01T10:20:30+00:00"),
        # A header no later than the lastmod in force cannot date a change seen since (a CMS script's
        # file time, steady): the lastmod would go back in time, and IndexNow be told so.
        ("changed, stale metadata, steady older header: dated at this fetch",
         _evidence("Sun, 01 Jan 2023 00:00:00 GMT", "2024-06-01T00:00:00Z", fingerprint="v1:f2"),
         Prior("v1:f1", "Sun, 01 Jan 2023 00:00:00 GMT", "2024-06-01T00:00:00+00:00"), CHANGED_AT),
        ("first seen, no evidence", _evidence(), None, None),
        ("unchanged keeps none", _evidence(), Prior("v1:f1", None, None), None),
        ("unchanged keeps its date", _evidence(NOW_HEADER), Prior("v1:f1", None, "2025-05-05"), "2025-05-05"),
        ("changed: dated at this fetch", _evidence(NOW_HEADER, fingerprint="v1:f2"), Prior("v1:f1", None, None), CHANGED_AT),
        ("Last-Modified moving, content not", _evidence("Mon, 02 Nov 2026 00:00:00 GMT"),
         Prior("v1:f1", "Sun, 01 Nov 2026 00:00:00 GMT", "2026-11-01T00:00:00+00:00"), "2026-11-01T00:00:00+00:00"),
        ("Last-Modified moving with the content", _evidence("Mon, 02 Nov 2026 00:00:00 GMT", fingerprint="v1:f2"),
         Prior("v1:f1", "Sun, 01 Nov 2026 00:00:00 GMT", "2026-11-01T00:00:00+00:00"), "2026-11-02T00:00:00+00:00"),
        ("Last-Modified steady, unchanged", _evidence(OLD_HEADER), Prior("v1:f1", OLD_HEADER, "x"), "x"),
        ("Last-Modified steady, no lastmod in force", _evidence(OLD_HEADER), Prior("v1:f1", OLD_HEADER, None),
         "2024-05-01T10:20:30+00:00"),
        ("Last-Modified a placeholder, then metadata", _evidence("Thu, 01 Jan 1970 00:00:01 GMT", "2025-01-02"),
         None, "2025-01-02"),
        ("Last-Modified a placeholder, first seen", _evidence("Mon, 01 Jan 0001 00:00:00 GMT"), None, None),
    ],
)
def test_choose_lastmod(label: str, evidence: Evidence, prior: Prior | None, expected: str | None) -> None:
    assert choose_lastmod(evidence, prior) == expected, label


def test_a_touched_file_does_not_move_the_lastmod_of_unchanged_content() -> None:
    """A deploy touches every file: the header moves, then stays; the page's metadata says another date.

    Found by trying the product on the Hexo blog (touch a post, crawl again twice): its lastmod went
    from the first crawl's header to the metadata, then to the touched header, each a change.
    """
    first_header, touched = "Sun, 01 Nov 2026 00:00:00 GMT", "Tue, 10 Nov 2026 00:00:00 GMT"
    first = choose_lastmod(_evidence(first_header, "2022-05-30"), None)
    assert first == "2022-05-30"  # the page's own date before the deploy's
    second = choose_lastmod(_evidence(touched, "2022-05-30"), Prior("v1:f1", first_header, first))
    # The record keeps the touched header as the validator: the next crawl sees it steady.
    third = choose_lastmod(_evidence(touched, "2022-05-30"), Prior("v1:f1", touched, second))
    assert second == third == first
    # Once the content changes, the evidence dates it again: its header, moved with it (the
    # metadata, no later than the lastmod in force, is stale).
    edited = "Fri, 20 Nov 2026 00:00:00 GMT"
    assert choose_lastmod(_evidence(edited, "2022-05-30", fingerprint="v1:f2"), Prior("v1:f1", touched, third)) == (
        "2026-11-20T00:00:00+00:00"
    )


FUTURE_HEADER = "Tue, 24 Nov 2026 11:00:00 GMT"  # an hour after the response's Date


@pytest.mark.parametrize(
    ("label", "evidence", "prior", "expected"),
    [
        ("an hour after Date", _evidence(FUTURE_HEADER), None, None),
        ("years after Date", _evidence("Fri, 01 Jan 2100 00:00:00 GMT"), None, None),
        ("11 s after Date", _evidence("Tue, 24 Nov 2026 10:00:11 GMT"), None, None),
        ("11 s before Date: believed", _evidence("Tue, 24 Nov 2026 09:59:49 GMT"), None,
         "2026-11-24T09:59:49+00:00"),
        ("refused, then metadata", _evidence(FUTURE_HEADER, "2025-01-02"), None, "2025-01-02"),
        ("refused, then history: unchanged", _evidence(FUTURE_HEADER),
         Prior("v1:f1", FUTURE_HEADER, "2025-05-05"), "2025-05-05"),
        ("refused, then history: changed", _evidence(FUTURE_HEADER, fingerprint="v1:f2"),
         Prior("v1:f1", FUTURE_HEADER, "2025-05-05"), CHANGED_AT),
        ("refused, then history: a fingerprint of another version",
         _evidence(FUTURE_HEADER, fingerprint="v2:f1"), Prior("v1:f1", None, "2025-05-05"), "2025-05-05"),
        ("refused, then nothing: first seen", _evidence(FUTURE_HEADER, fingerprint="v1:f2"), None, None),
        # The record keeps the header as sent (the server's validator for If-Modified-Since); once
        # corrected, it moved while the content did not, so it waits like any moved header.
        ("corrected while the content is unchanged", _evidence(OLD_HEADER),
         Prior("v1:f1", FUTURE_HEADER, "2025-05-05"), "2025-05-05"),
        # ...and once corrected with the content, no later than the lastmod in force: no date of the change.
        ("corrected with the content", _evidence(OLD_HEADER, fingerprint="v1:f2"),
         Prior("v1:f1", FUTURE_HEADER, "2025-05-05"), CHANGED_AT),
        ("corrected with the content, later than the lastmod in force",
         _evidence(OLD_HEADER, fingerprint="v1:f2"),
         Prior("v1:f1", FUTURE_HEADER, "2024-05-01"), "2024-05-01T10:20:30+00:00"),
    ],
)
def test_a_last_modified_after_the_response_is_refused(
    label: str, evidence: Evidence, prior: Prior | None, expected: str | None
) -> None:
    """RFC 9110 section 8.8.2.1: an origin never sends a Last-Modified later than its Date."""
    assert choose_lastmod(evidence, prior) == expected, label


def test_parse_page_date_refuses_nonsense() -> None:
    assert parse_page_date("2024-02-30") is None
    assert parse_page_date(None) is None
    assert parse_page_date("2024-05-01T10:20:30Z") == PageDate(
        datetime(2024, 5, 1, 10, 20, 30, tzinfo=UTC), "2024-05-01T10:20:30+00:00"
    )


RETRY_NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("2", 2.0),
        (b"120", 120.0),
        (" 7 ", 7.0),
        ("0", 0.0),
        ("1.5", 1.5),
        (format_datetime(RETRY_NOW + timedelta(seconds=30), usegmt=True), 30.0),
        ("Wed, 01 May 2024 12:01:00 GMT", 60.0),
        ("Wednesday, 01-May-24 12:00:10 GMT", 10.0),  # RFC 850
        ("Wed May  1 12:00:05 2024", 5.0),  # asctime
        ("Wed, 01 May 2024 11:00:00 GMT", 0.0),  # already past: no wait
        (None, None),
        ("", None),
        ("soon", None),
        ("-5", None),
        ("Wed, 01 May 2024 12:01:00", None),  # no zone: not an instant
    ],
)
def test_retry_after_seconds_reads_both_forms(value: str | bytes | None, seconds: float | None) -> None:
    assert retry_after_seconds(value, RETRY_NOW) == seconds


def test_a_json_ld_date_after_a_stray_closing_html_tag_counts() -> None:
    from scrapy.http import HtmlResponse

    body = b'<p>x</p></html><script type="application/ld+json">{"dateModified": "2024-02-02"}</script>'
    root = HtmlResponse(url="http://x/", encoding="utf-8", body=body).selector.root
    found = metadata_date(root, RESPONSE)
    assert found is not None and found.text == "2024-02-02"

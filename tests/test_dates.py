from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sitemap_spider.crawl.dates import lastmod_from_header, parse_http_date, w3c_datetime


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
        ("", None),
        (None, None),
    ],
)
def test_lastmod_from_header(header: str | bytes | None, expected: str | None) -> None:
    assert lastmod_from_header(header) == expected


def test_parse_http_date_is_aware_utc() -> None:
    parsed = parse_http_date("Wed, 01 May 2024 10:20:30 GMT")
    assert parsed == datetime(2024, 5, 1, 10, 20, 30, tzinfo=UTC)


def test_w3c_datetime_refuses_naive_times() -> None:
    with pytest.raises(ValueError):
        w3c_datetime(datetime(2024, 5, 1))

"""Tables for sitemap_spider/checking/values.py and reader.py: which rule each value breaks."""

from __future__ import annotations

import gzip
import io
import re
from datetime import UTC, datetime

import pytest
from lxml import etree  # type: ignore[import-untyped]

from sitemap_spider.checking.reader import BadGzip, BoundedReader, TooLarge
from sitemap_spider.checking.values import (
    changefreq_problems,
    in_scope,
    lastmod_problems,
    loc_problems,
    priority_problems,
    scope_of,
)
from tests.sitemap_check import NAMESPACE, schema

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("loc", "rules"),
    [
        ("https://www.example.com/", []),
        ("http://www.example.com/a?b=1&c=2", []),
        ("https://www.example.com/%C3%A9", []),
        ("https://[2001:db8::1]/", []),
        ("/relative", ["loc.not_absolute"]),
        ("www.example.com/page", ["loc.not_absolute"]),
        ("//www.example.com/page", ["loc.not_absolute"]),
        ("https:www.example.com/page", ["loc.not_absolute"]),
        ("ftp://www.example.com/file", ["loc.scheme"]),
        ("mailto:someone@example.com", ["loc.scheme"]),
        ("https://www.example.com/" + "a" * 2030, ["loc.too_long"]),
        ("https://www.example.com/caf\u00e9", ["loc.not_encoded"]),
        ("https://www.example.com/a b", ["loc.not_encoded"]),
        ("https://www.example.com/100%", ["loc.not_encoded"]),
        ("https://www.example.com/\x07", ["loc.not_encoded"]),
        ("https://www.example.com:99999/", ["loc.invalid"]),
        ("https://www.example.com/a[1]", ["loc.invalid"]),
        ("http://a.b/", ["loc.invalid"]),
        ("https://www.example.com/?a=1&amp;b=2", ["loc.double_escaped"]),
    ],
)
def test_loc(loc: str, rules: list[str]) -> None:
    assert [rule for rule, _ in loc_problems(loc)] == rules


def test_the_limit_is_2048_characters() -> None:
    base = "https://www.example.com/"
    assert loc_problems(base + "a" * (2048 - len(base))) == []
    assert [rule for rule, _ in loc_problems(base + "a" * (2049 - len(base)))] == ["loc.too_long"]


def test_a_not_encoded_loc_is_shown_encoded() -> None:
    [(_, detail)] = loc_problems("https://www.example.com/caf\u00e9 au lait")
    assert "https://www.example.com/caf%C3%A9%20au%20lait" in detail


@pytest.mark.parametrize(
    ("value", "rules"),
    [
        ("2024-05-01", []),
        ("2024-05-01T10:20:30+02:00", []),
        ("2024-05-01T10:20Z", ["lastmod.format"]),  # W3C Datetime, but sitemap.xsd wants seconds
        ("2024-05-01T10:20+02:00", ["lastmod.format"]),
        ("2024-05-01T10:20:30.123456-05:00", []),
        ("2026-11-24", []),  # today
        ("2026-11-25", []),  # tomorrow has begun at +14:00 (10:00 UTC today)
        ("2026-11-26", ["lastmod.future"]),
        ("2026-11-24T12:04:00Z", []),  # clock skew
        ("2026-11-24T13:00:00Z", ["lastmod.future"]),
        ("2999-01-01", ["lastmod.future"]),
        ("1970-01-01T00:00:01Z", ["lastmod.placeholder"]),  # a zeroed file time (a Nix store)
        ("1980-01-01", ["lastmod.placeholder"]),  # the DOS epoch of files from a zip archive
        ("0001-01-01T00:00:00+00:00", ["lastmod.placeholder"]),  # .NET's DateTime.MinValue (an OverflowError)
        ("0001-01-01", ["lastmod.placeholder"]),
        ("1991-01-01", []),
        ("2024-05-01T10:20:30", ["lastmod.timezone"]),
        ("2024-05-01T10:20", ["lastmod.timezone"]),
        ("2024-13-01", ["lastmod.format"]),
        ("2024-02-30", ["lastmod.format"]),
        ("2024", ["lastmod.format"]),
        ("2024-05", ["lastmod.format"]),
        ("01/05/2024", ["lastmod.format"]),
        ("Wed, 01 May 2024 10:20:30 GMT", ["lastmod.format"]),
        ("2024-05-01T10:20:30+15:00", ["lastmod.format"]),
    ],
)
def test_lastmod(value: str, rules: list[str]) -> None:
    assert [rule for rule, _ in lastmod_problems(value, NOW)] == rules


@pytest.mark.parametrize(
    "value", ["2024-05-01T10:20Z", "2024-05-01T10:20", "2024-05-01T10:20:30", "01/05/2024", "2024-13-01"]
)
def test_the_lastmod_advice_is_what_the_schema_accepts(value: str) -> None:
    """What a lastmod finding tells people to write validates against sitemap.xsd (#25: hh:mm did not)."""
    (_, detail), *_ = lastmod_problems(value, NOW)
    assert "hh:mm[" not in detail  # seconds are never offered as optional
    forms = re.findall(r"'(\d{4}-\d{2}-\d{2}T[^']*)'", detail)
    forms += [template.replace("YYYY-MM-DD", "2024-05-01").replace("hh:mm:ss", "10:20:30") + zone
              for template in re.findall(r"YYYY-MM-DDThh:mm:ss", detail) for zone in ("Z", "+02:00")]  # fmt: skip
    for form in forms:
        if form == value:
            continue
        url = f'<url><loc>https://www.example.com/</loc><lastmod>{form}</lastmod></url>'
        document = etree.fromstring(f'<urlset xmlns="{NAMESPACE}">{url}</urlset>')
        assert schema("sitemap.xsd").validate(document), (form, detail)


@pytest.mark.parametrize(
    ("value", "ok"),
    [("daily", True), ("never", True), ("Daily", False), ("fortnightly", False), ("", False)],
)
def test_changefreq(value: str, ok: bool) -> None:
    assert (changefreq_problems(value) == []) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [("0.5", True), ("1", True), ("1.0", True), ("0", True), (".5", True), ("+0.5", True),
     ("1.5", False), ("-0.1", False), ("high", False), ("0,5", False), ("", False), ("nan", False)],
)  # fmt: skip
def test_priority(value: str, ok: bool) -> None:
    assert (priority_problems(value) == []) is ok


@pytest.mark.parametrize(
    ("location", "loc", "ok"),
    [
        ("https://www.example.com/sitemap.xml", "https://www.example.com/any/page", True),
        ("https://www.example.com/catalog/sitemap.xml", "https://www.example.com/catalog/item", True),
        ("https://www.example.com/catalog/sitemap.xml", "https://www.example.com/other/item", False),
        ("https://www.example.com/catalog/sitemap.xml", "https://www.example.com/catalog/../other", False),
        ("https://www.example.com/sitemap.xml", "http://www.example.com/page", False),
        ("https://www.example.com/sitemap.xml", "https://example.com/page", False),
        ("https://www.example.com/sitemap.xml", "https://WWW.Example.com:443/page", True),
        ("http://127.0.0.1:8000/sitemap.xml", "http://127.0.0.1:8001/page", False),
    ],
)
def test_scope(location: str, loc: str, ok: bool) -> None:
    scope = scope_of(location)
    assert scope is not None
    assert in_scope(loc, scope) is ok


def read_all(reader: BoundedReader) -> bytes:
    chunks = []
    while chunk := reader.read(1000):
        chunks.append(chunk)
    return b"".join(chunks)


def test_reader_gzip_members_and_head() -> None:
    data = b"<urlset/>" * 10_000
    reader = BoundedReader(io.BytesIO(gzip.compress(data) + gzip.compress(b"more")))
    assert reader.gzipped
    assert reader.head(5) == b"<urls"
    assert read_all(reader) == data + b"more"
    assert reader.count == len(data) + 4


def test_reader_plain() -> None:
    reader = BoundedReader(io.BytesIO(b"abcdef"))
    assert not reader.gzipped
    assert reader.head(100) == b"abcdef"
    assert read_all(reader) == b"abcdef"


def test_reader_stops_at_the_limit_of_uncompressed_bytes() -> None:
    bomb = gzip.compress(b"\n" * 5_000_000)
    reader = BoundedReader(io.BytesIO(bomb), limit=1_000_000)
    with pytest.raises(TooLarge):
        read_all(reader)
    assert reader.count == 1_000_000


def test_reader_corrupt_gzip() -> None:
    with pytest.raises(BadGzip):
        read_all(BoundedReader(io.BytesIO(gzip.compress(b"x" * 100_000)[:-30])))
    with pytest.raises(BadGzip):
        read_all(BoundedReader(io.BytesIO(b"\x1f\x8b" + b"garbage" * 10)))

"""Tests of sitemap_spider/sitemaps/xml/elements.py: escaping, formatting, elements, and reading a <url> line back
(the entry checks: test_rules.py; the property tests here write what the rules accept)."""

from __future__ import annotations

from datetime import datetime
from string import ascii_letters, digits

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree  # type: ignore[import-untyped]

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.runs.lines import Extras
from sitemap_spider.sitemaps.rules import check_entry, parse_lastmod
from sitemap_spider.sitemaps.xml.elements import (
    SITEMAPINDEX_CLOSE,
    SITEMAPINDEX_OPEN,
    URLSET_CLOSE,
    URLSET_OPEN,
    escape,
    format_priority,
    parse_url_line,
    sitemap_element,
    url_element,
    url_lines,
    xml_lastmod,
)
from tests.sitemap_check import as_instant, read_urls, schema


def urlset(*entries: SitemapEntry) -> bytes:
    return URLSET_OPEN + b"".join(url_element(entry) for entry in entries) + URLSET_CLOSE


def test_document_frames_use_the_http_namespace() -> None:
    assert URLSET_OPEN == (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    )
    assert URLSET_CLOSE == b"</urlset>\n"
    assert SITEMAPINDEX_OPEN.endswith(b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n')
    assert SITEMAPINDEX_CLOSE == b"</sitemapindex>\n"


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("plain", "plain"),
        ("a&b", "a&amp;b"),
        ("<>", "&lt;&gt;"),
        ("\"'", "&quot;&apos;"),
        ("&amp;", "&amp;amp;"),
        ("?q=1&r='x'&s=\"<y>\"", "?q=1&amp;r=&apos;x&apos;&amp;s=&quot;&lt;y&gt;&quot;"),
    ],
)
def test_escape(raw: str, escaped: str) -> None:
    assert escape(raw) == escaped


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.5, "0.5"),
        (1, "1.0"),
        (1.0, "1.0"),
        (0, "0.0"),
        (0.75, "0.75"),
        (0.1234, "0.1234"),
        (0.12345, "0.1235"),
        (1e-05, "0.0"),
        (-0.0, "0.0"),
        (0.3, "0.3"),
        (2.5e-1, "0.25"),
    ],
)
def test_format_priority(value: float, text: str) -> None:
    assert format_priority(value) == text


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        (SitemapEntry("https://example.com/"), b"<url><loc>https://example.com/</loc></url>\n"),
        (
            SitemapEntry("https://example.com/a?b=1&c=2", "2024-05-01", "daily", 0.8),
            (
                b"<url><loc>https://example.com/a?b=1&amp;c=2</loc><lastmod>2024-05-01</lastmod>"
                b"<changefreq>daily</changefreq><priority>0.8</priority></url>\n"
            ),
        ),
        (
            SitemapEntry("https://example.com/", priority=1),
            b"<url><loc>https://example.com/</loc><priority>1.0</priority></url>\n",
        ),
        (
            SitemapEntry("https://example.com/", lastmod="2024-05-01T10:20+02:00"),
            b"<url><loc>https://example.com/</loc><lastmod>2024-05-01T10:20:00+02:00</lastmod></url>\n",
        ),
    ],
)
def test_url_element(entry: SitemapEntry, line: bytes) -> None:
    check_entry(entry)
    assert url_element(entry) == line
    read_urls(urlset(entry), "one entry")


def test_sitemap_element() -> None:
    assert sitemap_element("https://example.com/s-1.xml", None) == (
        b"<sitemap><loc>https://example.com/s-1.xml</loc></sitemap>\n"
    )
    assert sitemap_element("https://example.com/?a&b", "2024-05-01T10:20Z") == (
        b"<sitemap><loc>https://example.com/?a&amp;b</loc><lastmod>2024-05-01T10:20:00Z</lastmod></sitemap>\n"
    )


# --- property tests -------------------------------------------------------------------

_UNRESERVED = ascii_letters + digits + "-._~"
_PATH_CHARS = _UNRESERVED + "!$&'()*+,;=:@" + "&'\"<>"
_PERCENT = st.builds(lambda b: f"%{b:02X}", st.integers(0, 255))


def _component(chars: str) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(list(chars)) | _PERCENT, max_size=12).map("".join)


_HOSTS = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?(\.[a-z0-9]{1,8}){0,2}\.[a-z]{2,6}", fullmatch=True)
_URLS = st.builds(
    lambda scheme, host, port, segments, query, fragment: (
        f"{scheme}://{host}{port}/" + "/".join(segments) + query + fragment
    ),
    st.sampled_from(["http", "https"]),
    _HOSTS,
    st.sampled_from(["", ":8080", ":1"]),
    st.lists(_component(_PATH_CHARS), max_size=4),
    st.none().map(lambda _: "") | _component(_PATH_CHARS + "/?").map(lambda q: "?" + q),
    st.none().map(lambda _: "") | _component(_PATH_CHARS + "/?").map(lambda f: "#" + f),
).filter(lambda url: len(url) >= 12)


@st.composite
def _lastmods(draw: st.DrawFn) -> str:
    moment = draw(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 30)))
    style = draw(st.sampled_from(["date", "minutes", "seconds", "fraction"]))
    # Formatted by hand: strftime("%Y") does not pad years below 1000 on every platform.
    day = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
    if style == "date":
        return day
    minutes = draw(st.integers(-14 * 60, 14 * 60))
    zone = (
        "Z"
        if minutes == 0 and draw(st.booleans())
        else (f"{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}")
    )
    text = f"{day}T{moment.hour:02d}:{moment.minute:02d}"
    if style != "minutes":
        text += f":{moment.second:02d}"
    if style == "fraction":
        text += "." + str(draw(st.integers(0, 10**9))).zfill(draw(st.integers(1, 10)))
    return text + zone


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    loc=_URLS,
    lastmod=st.none() | _lastmods(),
    changefreq=st.none() | st.sampled_from(["always", "daily", "never"]),
    priority=st.none() | st.floats(0.0, 1.0),
)
def test_any_valid_entry_validates_and_reads_back(
    loc: str, lastmod: str | None, changefreq: str | None, priority: float | None
) -> None:
    entry = SitemapEntry(loc, lastmod, changefreq, priority)
    check_entry(entry)
    [url] = read_urls(urlset(entry), loc)
    assert url.pop("loc") == loc
    if lastmod is not None:
        written = url.pop("lastmod")
        assert written == xml_lastmod(lastmod)
        assert parse_lastmod(written) == parse_lastmod(lastmod)
    if changefreq is not None:
        assert url.pop("changefreq") == changefreq
    if priority is not None:
        assert abs(float(url.pop("priority")) - priority) <= 0.00005
    assert url == {}


@settings(max_examples=300, deadline=None)
@given(
    tail=st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=20),
    host=st.sampled_from(["example.com", "[::1]", "u:p@example.com", "example.com:80"]),
)
def test_accepted_locs_always_satisfy_the_xsd(tail: str, host: str) -> None:
    # check_entry may be stricter than sitemap.xsd, never looser.
    entry = SitemapEntry(f"https://{host}/{tail}")
    try:
        check_entry(entry)
    except InvalidEntryError:
        return
    assert schema("sitemap.xsd").validate(etree.fromstring(urlset(entry))), entry


@settings(max_examples=300, deadline=None)
@given(st.from_regex(r"\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d{0,3})?)?(Z|[+-]\d\d:\d\d)?)?", fullmatch=True))
def test_accepted_lastmods_always_satisfy_the_xsd(lastmod: str) -> None:
    entry = SitemapEntry("https://example.com/", lastmod=lastmod)
    try:
        check_entry(entry)
    except InvalidEntryError:
        return
    assert schema("sitemap.xsd").validate(etree.fromstring(urlset(entry))), lastmod
    assert parse_lastmod(lastmod).tzinfo is not None


# url_lines, the publishing loop's fast path, read back by lxml (the XSD) and Scrapy's Sitemap:
# every loc and instant as the entries gave them, whichever branch formatted the line.
FAST_PATH_ENTRIES = [
    # (loc, lastmod or "", changefreq, priority)
    ("https://example.com/plain", "", None, None),
    ("https://example.com/dated", "2024-05-01", None, None),
    ("https://example.com/timed", "2024-05-01T10:20:30+02:00", None, None),
    ("https://example.com/z", "2024-05-01T10:20:30.25Z", None, None),
    ("https://example.com/both", "2024-05-01", "daily", 0.8),
    ("https://example.com/freq", "", "never", None),
    ("https://example.com/prio", "", None, 0.0),
]
ESCAPED_ENTRIES = [
    ("https://example.com/q?a=1&b=<2>", "", None, None),
    ("https://example.com/it's", "2024-05-01T10:20+02:00", None, None),  # no seconds: ":00" added
    ('https://example.com/"q"&x', "2024-05-01T10:20Z", "weekly", 1.0),
]


@pytest.mark.parametrize(
    ("entries", "verbatim"),
    [(FAST_PATH_ENTRIES, True), (FAST_PATH_ENTRIES, False), (FAST_PATH_ENTRIES + ESCAPED_ENTRIES, False)],
)
def test_url_lines_read_back_as_the_entries_gave_them(
    entries: list[tuple[str, str, str | None, float | None]], verbatim: bool
) -> None:
    locs = [loc for loc, _, _, _ in entries]
    lastmods = [lastmod for _, lastmod, _, _ in entries]
    extras: list[Extras | None] = [
        None if changefreq is None and priority is None else (changefreq, priority, "", "", "")
        for _, _, changefreq, priority in entries
    ]
    lines = url_lines(locs, lastmods, extras, verbatim=verbatim)
    urls = read_urls(URLSET_OPEN + "".join(lines).encode() + URLSET_CLOSE, "url_lines")
    assert [url["loc"] for url in urls] == locs
    for url, (_, lastmod, changefreq, priority) in zip(urls, entries):
        assert ("lastmod" in url) == bool(lastmod)
        if lastmod:
            assert as_instant(url["lastmod"]) == as_instant(lastmod)
        assert url.get("changefreq") == changefreq
        assert (float(url["priority"]) if "priority" in url else None) == priority
    # One <url> per line: the previous set is read back a line at a time.
    assert [parse_url_line(line) for line in lines] == [(loc, url.get("lastmod")) for loc, url in zip(locs, urls)]

"""Tests of sitemap_spider/sitemaps/ingest/chunk.py: the fast paths give what the general path gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_spider.sitemaps.ingest import chunk
from sitemap_spider.sitemaps.ingest.chunk import _BLOCK_LINES, encode_chunk
from sitemap_spider.sitemaps.runs.lines import decode_fields, digest_line, encode_fields
from sitemap_spider.sitemaps.errors import InvalidEntryError
from sitemap_spider.sitemaps.ingest.inputs import READERS
from sitemap_spider.sitemaps.item_entries import taken_fields
from sitemap_spider.sitemaps.options import OutputOptions
from sitemap_spider.sitemaps.shards.set_builder import SitemapSetBuilder
from sitemap_spider.sitemaps.rules import check_fields
from sitemap_spider.sitemaps.runs.run_files import sort_into_run
from sitemap_spider.sitemaps.xml.elements import is_verbatim
from tests.sitemap_check import read_sitemap_set

BASE = "https://www.example.com/"


def general(
    raw_lines: list[bytes], first: int = 1, kind: str = "jsonl"
) -> tuple[list[str], list[str], list[tuple[int, str]], int]:
    """Each line alone through the format's reader (for JSON, the standard library's decoder),
    the loc in normal form where it needs one (iri.py) and the full checks."""
    normalised = 0
    lines: list[str] = []
    digests: list[str] = []
    bad: list[tuple[int, str]] = []
    for number, record in READERS[kind](enumerate(raw_lines, first)):
        try:
            if isinstance(record, str):
                raise InvalidEntryError(record)
            fields, changed = taken_fields(record)
            loc, lastmod, changefreq, priority, digest = fields
            check_fields(loc, lastmod, changefreq, priority)
            lines.append(encode_fields(loc, lastmod, changefreq, priority, digest))
        except InvalidEntryError as exc:
            bad.append((number, str(exc)))
        else:
            normalised += changed
            if digest is not None:
                digests.append(digest)
    return lines, digests, bad, normalised


def assert_same_as_general(raw_lines: list[bytes], first: int = 1, kind: str = "jsonl") -> None:
    lines, digests, bad, normalised = general(raw_lines, first, kind)
    # The chunk as its lines, and as its bytes (with and without a newline at the end).
    data = b"\n".join(raw_lines)
    for raw, piece_bytes in (
        (raw_lines, chunk._BLOCK_BYTES),
        (data + b"\n", chunk._BLOCK_BYTES),
        (data + b"\n", 300),  # pieces of a line or two
        (data if raw_lines and raw_lines[-1] else None, 300),
    ):
        if raw is None:
            continue
        default, chunk._BLOCK_BYTES = chunk._BLOCK_BYTES, piece_bytes  # type: ignore[misc]
        try:
            done = encode_chunk(kind, raw, first, stop=False)
        finally:
            chunk._BLOCK_BYTES = default  # type: ignore[misc]
        assert done.line_count == len(raw_lines)
        assert sorted(done.lines) == sorted(lines)
        assert sorted(done.digests) == sorted(digests)
        # Exactly when every loc and lastmod that was kept goes into the XML as it is.
        assert done.verbatim == all(is_verbatim(*decode_fields(line)[:2]) for line in lines)
        assert done.bad == bad[:20]
        assert done.bad_count == len(bad)
        assert done.normalised == normalised


def crawl_line(loc: str, lastmod: object = None, changefreq: object = None, priority: object = None,
               digest: object = "d1") -> bytes:
    # What `scrapy crawl sitemap -o entries.jl` writes.
    record = {"loc": loc, "lastmod": lastmod, "changefreq": changefreq, "priority": priority, "content_digest": digest}
    return json.dumps(record).encode()


@pytest.mark.parametrize(
    "line",
    [
        crawl_line(BASE + "a", "2024-05-01T10:20:30+00:00"),
        crawl_line(BASE + "a", "2024-05-01T10:20:30Z"),
        crawl_line(BASE + "a", "2024-05-01"),
        crawl_line(BASE + "a", "2024-05-01T10:20:30+05:30"),
        crawl_line(BASE + "a", "2024-05-01T10:20:30-14:00"),
        crawl_line(BASE + "a", "2024-05-01T10:20:30+14:01"),  # beyond +/-14:00
        crawl_line(BASE + "a", "2024-05-01T10:20:30+13:60"),
        crawl_line(BASE + "a", "2024-05-01T24:00:00+00:00"),  # hour 24: refused (as fromisoformat does)
        crawl_line(BASE + "a", "2024-05-01T23:59:60Z"),
        crawl_line(BASE + "a", "2024-02-29"),
        crawl_line(BASE + "a", "2023-02-29"),
        crawl_line(BASE + "a", "2024-04-31"),
        crawl_line(BASE + "a", "0000-01-01"),
        crawl_line(BASE + "a", "2024-13-01"),
        crawl_line(BASE + "a", "2024-05-01T10:20+02:00"),  # no seconds: general path, ":00" in the XML
        crawl_line(BASE + "a", "2024-05-01T10:20:30.5Z"),
        crawl_line(BASE + "a", "2024-05"),
        crawl_line(BASE + "a", "２０２４-05-01"),  # non-ASCII digits
        crawl_line(BASE + "a", 20240501),
        crawl_line(BASE + "a", changefreq="daily"),
        crawl_line(BASE + "a", changefreq="sometimes"),
        crawl_line(BASE + "a", changefreq=["daily"]),
        crawl_line(BASE + "a", priority=0.5),
        crawl_line(BASE + "a", priority=1),
        crawl_line(BASE + "a", priority=0),
        crawl_line(BASE + "a", priority=True),
        crawl_line(BASE + "a", priority="0.5"),
        crawl_line(BASE + "a", priority=1.5),
        crawl_line(BASE + "a", priority=-0.0),
        crawl_line(BASE + "a", priority=1e-7),
        crawl_line(BASE + "a", digest=None),
        crawl_line(BASE + "a", digest=""),
        crawl_line(BASE + "a", digest=12),
        crawl_line(BASE + "a", digest=123456789012345678901234567890),  # a number where a string belongs
        crawl_line(BASE + "a", digest=[1, 2]),
        crawl_line(BASE + "a", digest="tab\there"),
        crawl_line(BASE + "a", digest="café\u2028"),
        b'{"loc": "https://www.example.com/big", "priority": 123456789012345678901234567890}',
        b'{"loc": "https://www.example.com/nan", "priority": NaN}',
        b'{"loc": "https://www.example.com/inf", "priority": 1e400}',
        b'{"loc": "https://www.example.com/x", "loc": "https://www.example.com/dup"}',
        b'{"loc": "https:\\/\\/www.example.com\\/escaped"}',
        b'{"loc": "https://www.example.com/\\u00e9"}',
        b'{"loc": "https://www.example.com/\\ud800"}',
        b'{"loc": "https://www.example.com/nul\\u0000"}',
        b'{"loc": "https://www.example.com/raw\x01control"}',
        b'{"loc": "https://www.example.com/cr"}\r',
        b'  {"loc": "https://www.example.com/spaces"}  ',
        b'{"loc": "  https://www.example.com/padded  "}',
        b'{"loc":"https://www.example.com/compact","lastmod":"2024-05-01"}',
        b'{"lastmod": "2024-05-01", "loc": "https://www.example.com/reordered", "extra": [1]}',
        b'{"loc": 42}',
        b'{"loc": null}',
        b'{"loc": ""}',
        b'{"lastmod": "2024-05-01"}',
        b'[1, 2]',
        b'"just a string"',
        b"not json",
        b"",
        b"   ",
        b"\xff\xfe not utf-8",
        b'\xef\xbb\xbf{"loc": "https://www.example.com/bom"}',
        b'{"loc": "https://www.example.com/trunc',
        # Found in review: bytes that are not UTF-8 in a string or a key, other fields that
        # msgspec would skip without the standard library's checks, a lone surrogate, nesting.
        b'{"loc": "https://www.example.com/a", "content_digest": "a\xffb"}',
        b'{"loc": "https://www.example.com/a", "\xff": 1}',
        b'{"loc": "https://www.example.com/a", "x": "\xff"}',
        b'{"loc": "https://www.example.com/a", "x": ' + b"1" * 5000 + b"}",
        b'{"loc": "https://www.example.com/a", "x": ' + b"1" * 4200 + b"}",
        b'{"loc": "https://www.example.com/a", "title": "caf\xc3\xa9", "x": {"y": [1, null]}}',
        b'{"loc": "https://www.example.com/a", "content_digest": "\\ud800"}',
        b'{"loc": "https://www.example.com/a", "content_digest": "\\udc80"}',
        b'{"loc": "https://www.example.com/a", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        # Near Python's recursion limit msgspec went two levels deeper than the json module.
        b'{"loc": "https://www.example.com/a", "x": ' + b"[" * 993 + b"]" * 993 + b"}",
        b'{"loc": "https://www.example.com/a", "x": ' + b"[" * 499 + b"]" * 499 + b"}",
        b'{"loc": "https://www.example.com/a", "x": ' + b"[" * 500 + b"]" * 500 + b"}",
        b'{"loc": "https://www.example.com/a", "x": "' + b"[" * 600 + b'"}',
    ],
)
def test_a_line_gives_what_the_general_path_gives(line: bytes) -> None:
    assert_same_as_general([line])
    assert_same_as_general([line], first=7)


@pytest.mark.parametrize(
    "loc",
    [
        BASE + "plain/path?q=1&r='2'",
        "http://www.example.com/",
        "https://www.example.com",
        "HTTPS://WWW.EXAMPLE.COM/upper",
        "https://www.example.com:8080/port",
        "https://www.example.com:99999/port",
        "https://user@www.example.com/",
        "https://[::1]/v6",
        "https://[zz]/v6",
        "https://www.example.com/a%20b",
        "https://www.example.com/a%zz",
        "https://www.example.com/frag#x",
        "https://www.example.com/br[ack]et",
        "https://www.example.com/sp ace",
        "https://www.example.com/caf\u00e9",
        "https://www.example.com/lt<gt>",
        "https://www.example.com?query",
        "https://_bad_.example.com/",
        "http://a.b/",
        "http:///x",
        "https:///x",
        "ftp://www.example.com/",
        "/relative",
        BASE + "x" * 2030,
        BASE + "x" * 2024,
        BASE + "x" * 2025,
    ],
)
def test_locs_give_what_the_general_path_gives(loc: str) -> None:
    assert_same_as_general([crawl_line(loc, "2024-05-01")])


def test_a_block_of_one_site_and_an_odd_line_in_it() -> None:
    site = [crawl_line(f"{BASE}p/{i}", f"2024-05-{i % 28 + 1:02d}T10:20:30+00:00", digest=f"d{i % 50}")
            for i in range(_BLOCK_LINES + 100)]
    assert_same_as_general(site)
    for odd in (
        crawl_line("https://other.example.com/x", "2024-05-01T10:20:30+00:00"),  # another site
        crawl_line(BASE + "z", "2024-05-01"),  # another lastmod form
        crawl_line(BASE + "z", "2023-02-29T10:20:30+00:00"),  # a bad day
        crawl_line(BASE + "z", "2024-05-01T10:20:30-00:00"),  # another zone
        crawl_line(BASE + "caf\u00e9"),
        crawl_line(BASE + "z", digest="tab\t"),
        b"not json",
    ):
        assert_same_as_general([*site[:10], odd, *site[10:]])


def test_a_loc_too_short_for_the_xsd_in_a_block_of_a_short_origin() -> None:
    # The block check leaves out the shortest-loc test only for an origin of 12 characters
    # or more: "http://a.b/" is 11, and the loc that is only the origin is a bad line.
    lines = [crawl_line(f"http://a.b/{i}", "2024-05-01") for i in range(5)]
    lines.insert(3, crawl_line("http://a.b/", "2024-05-01"))
    assert general(lines)[2][0][0] == 4
    assert_same_as_general(lines)


def test_a_loc_the_xml_escapes_is_noticed_on_every_path() -> None:
    # The publishing loop looks for characters to escape only in runs that do not say they have none.
    site = [crawl_line(f"{BASE}p/{i}", "2024-05-01") for i in range(2 * _BLOCK_LINES)]
    two_sites = [crawl_line(f"https://{'a' if i % 2 else 'b'}.example.com/{i}", "2024-05-01") for i in range(40)]
    for lines in (site, two_sites):
        # The third is a bad line (a control character): nothing of it is written; the fourth an
        # IRI, written in its normal form (iri.py), "&" and all.
        for loc, escapes in ((BASE + "q?a=1&b=2", True), (BASE + "it's", True), (BASE + "caf\u00e9\x01?a&b", False),
                             (BASE + "caf\u00e9?a&b", True), (BASE + "plain", False)):
            for at in (0, 7, len(lines) - 1):
                mixed = [*lines[:at], crawl_line(loc, "2024-05-01"), *lines[at:]]
                assert_same_as_general(mixed)
                assert encode_chunk("jsonl", mixed, 1, stop=False).verbatim == (not escapes)
    urls = [f"{BASE}p/{i}".encode() for i in range(_BLOCK_LINES + 10)]
    # "sp ace&" is written percent-encoded (iri.py); "sp\x01ace&" is a bad line.
    for odd in (BASE.encode() + b"q?a=1&b=2", BASE.encode() + b"sp ace&", BASE.encode() + b"sp\x01ace&",
                BASE.encode() + b"plain"):
        mixed = [*urls[:5], odd, *urls[5:]]
        assert_same_as_general(mixed, kind="txt")
        assert encode_chunk("txt", mixed, 1, stop=False).verbatim == (b"&" not in odd or b"\x01" in odd)


def test_a_lastmod_without_seconds_is_noticed_on_the_general_path() -> None:
    # W3C Datetime allows hh:mm; the XML gets ":00" added, so the run is not verbatim.
    site = [crawl_line(f"{BASE}p/{i}", "2024-05-01T10:20:30Z") for i in range(20)]
    for lastmod, expected in (("2024-05-01T10:20Z", False), ("2024-05-01T10:20+02:00", False),
                              ("2024-05-01T10:20:30.5Z", True), ("2024-05-01", True)):
        mixed = [*site[:3], crawl_line(BASE + "x", lastmod), *site[3:]]
        assert_same_as_general(mixed)
        assert encode_chunk("jsonl", mixed, 1, stop=False).verbatim == expected


def test_a_line_of_two_objects_beside_a_blank_line() -> None:
    # msgspec reads a stream of values: two on one line and none on another give the count of
    # lines; the general path says the first line is bad (extra data) and skips the blank one.
    site = [crawl_line(f"{BASE}p/{i}", "2024-05-01") for i in range(50)]
    two = crawl_line(BASE + "x", "2024-05-01") + b" " + crawl_line(BASE + "y", "2024-05-01")
    for blank in (b"", b"  ", b"\r"):
        assert_same_as_general([*site[:10], two, *site[10:20], blank, *site[20:]])
        assert_same_as_general([*site[:10], blank, *site[10:20], two, *site[20:]], first=5)
    # An object spread over lines, each of which starts with "{".
    assert_same_as_general([*site[:3], b'{"loc": "https://www.example.com/a", "x":', b'{"y": 1}}', *site[3:]])
    # An object over two lines (one fewer entry) and a line of two objects, with a comma between
    # them (one more): joined by commas, or read as a stream, the count comes out right.
    halves = [b'{"loc": "https://www.example.com/h"', b'"lastmod": "2024-05-01"}']
    comma = crawl_line(BASE + "x", "2024-05-01") + b"," + crawl_line(BASE + "y", "2024-05-01")
    assert_same_as_general([*site[:5], *halves, *site[5:30], comma, *site[30:]])
    assert_same_as_general([*site[:5], comma, *site[5:30], *halves, *site[30:]])
    nested = [b'{"loc": "https://www.example.com/n", "x": [', b'{"y": 1}]}']
    assert_same_as_general([*site[:5], *nested, *site[5:30], two, *site[30:]])
    # A string over two lines: msgspec must refuse a raw newline in a string, as JSON does.
    split_string = [b'{"loc": "https://www.example.com/s', b'{", "lastmod": null}']
    assert_same_as_general([*site[:5], *split_string, *site[5:30], two, *site[30:]])


def test_strict_mode_stops_at_the_first_bad_line() -> None:
    lines = [crawl_line(f"{BASE}{i}") for i in range(10)]
    lines[3] = b"not json"
    lines[6] = crawl_line("relative")
    done = encode_chunk("jsonl", lines, 1, stop=True)
    assert done.bad == [(4, "not JSON (Expecting value: line 1 column 1 (char 0))")]
    assert done.bad_count == 1


def test_bad_lines_are_reported_in_input_order_whatever_makes_them_bad() -> None:
    # A line that decodes but fails a check, before lines that do not decode at all.
    lines = [crawl_line(f"{BASE}{i}") for i in range(30)]
    lines[2] = crawl_line("relative")
    lines[5] = b"not json"
    lines[9] = crawl_line(BASE + "x", "2023-02-29")
    lines[12] = crawl_line(BASE + "x", digest=12)
    assert_same_as_general(lines)
    assert_same_as_general([*lines, *lines[:3]] * 2, first=100)
    done = encode_chunk("jsonl", lines, 1, stop=True)
    assert [number for number, _ in done.bad] == [3]
    assert done.bad_count == 1


def test_last_record_skips_blank_lines_at_the_end() -> None:
    lines = [crawl_line(BASE + "a"), b"", crawl_line(BASE + "b"), b"", b"  "]
    assert encode_chunk("jsonl", lines, 11, stop=False).last_record == 13
    assert encode_chunk("jsonl", [b"", b""], 11, stop=False).last_record == 0
    assert encode_chunk("txt", [b"https://www.example.com/a", b"# comment"], 1, stop=False).last_record == 1


_DIGIT = st.sampled_from("0123456789")


@st.composite
def lastmods(draw: st.DrawFn) -> str:
    # Every shape the fast checks consider, with any digits: ranges are for them to refuse.
    digits = "".join(draw(st.lists(_DIGIT, min_size=14, max_size=14)))
    date = f"{digits[:4]}-{digits[4:6]}-{digits[6:8]}"
    form = draw(st.sampled_from(["date", "z", "zone"]))
    if form == "date":
        return date
    time = f"T{digits[8:10]}:{digits[10:12]}:{digits[12:14]}"
    if form == "z":
        return date + time + "Z"
    zone = "".join(draw(st.lists(_DIGIT, min_size=4, max_size=4)))
    return f"{date}{time}{draw(st.sampled_from('+-'))}{zone[:2]}:{zone[2:]}"


@settings(max_examples=400, deadline=None)
@given(lastmod=lastmods())
def test_any_lastmod_of_a_fast_shape(lastmod: str) -> None:
    assert_same_as_general([crawl_line(BASE + "a", lastmod)])
    # In a block (the checks made once for the block), after a good line of the same form.
    good = {"date": "2024-05-01", "Z": "2024-05-01T10:20:30Z"}.get(
        "date" if len(lastmod) == 10 else "Z" if lastmod.endswith("Z") else "", "2024-05-01T10:20:30" + lastmod[19:]
    )
    assert_same_as_general([crawl_line(BASE + "a", good), crawl_line(BASE + "b", lastmod)])


@settings(max_examples=300, deadline=None)
@given(path=st.text(alphabet=st.characters(codec="utf-8"), max_size=30))
def test_any_path(path: str) -> None:
    assert_same_as_general([crawl_line(BASE + path, "2024-05-01"), crawl_line(BASE + "b", "2024-05-02")])


def test_blocks_of_any_one_zone_and_blocks_that_never_qualify() -> None:
    # A site whose lastmods are all in +02:00; then blocks of two sites (checked line by line,
    # the following ones without trying the block checks first), then one site again.
    zoned = [crawl_line(f"{BASE}z/{i}", f"2024-05-{i % 28 + 1:02d}T10:20:30+02:00") for i in range(2 * _BLOCK_LINES)]
    mixed = [crawl_line(f"https://{'a' if i % 2 else 'b'}.example.com/{i}", "2024-05-01") for i in range(8 * _BLOCK_LINES)]
    plain = [crawl_line(f"{BASE}p/{i}", "2024-05-01T10:20:30Z") for i in range(3 * _BLOCK_LINES)]
    assert_same_as_general(zoned + mixed + plain)
    assert_same_as_general([*zoned[:5], crawl_line(BASE + "x", "2024-05-01T10:20:30+14:30"), *zoned[5:]])


def test_plain_text_blocks_of_one_site_and_odd_lines_in_them() -> None:
    urls = [f"{BASE}p/{i}?q={i % 7}".encode() for i in range(2 * _BLOCK_LINES + 100)]
    done = encode_chunk("txt", urls, 1, stop=False)
    assert sorted(done.lines) == sorted(f"{url.decode()}\t-\t-\t-\t-" for url in urls)
    assert done.last_record == len(urls)
    assert_same_as_general(urls, kind="txt")
    for odd in (
        b"",
        b"   ",
        b"# a comment",
        b"  https://www.example.com/padded  ",
        b"https://www.example.com/crlf\r",
        b"https://other.example.com/another-site",
        b"https://www.example.com/caf\xc3\xa9",
        b"https://www.example.com/sp ace",
        b"https://www.example.com/a%20b",
        b"\xff not utf-8",
        b"/relative",
        b"https://www.example.com/" + b"x" * 2030,
    ):
        mixed = [*urls[:10], odd, *urls[10:]]
        assert_same_as_general(mixed, kind="txt")
        assert_same_as_general(mixed, first=1000, kind="txt")


def test_a_workers_digest_run_holds_the_sorted_digest_lines_of_its_chunk(tmp_path: Path) -> None:
    # Sorted bare and written with digest_line's prefix: the lines the builder's own sorter
    # would hold, in its order, also for digests that sort below the prefix ("!") or are empty.
    from sitemap_spider.sitemaps.ingest.feed import parse_chunk

    digests = ["b7", "!low", "", "a", "b7", "zz", "+plus", "a0"]
    raw = b"".join(crawl_line(f"https://example.com/p{n}", digest=d) + b"\n" for n, d in enumerate(digests))
    raw += crawl_line("https://example.com/none", digest=None) + b"\n"
    source = tmp_path / "chunk.jl"
    source.write_bytes(raw)
    done = parse_chunk("jsonl", str(source), 0, len(raw), str(tmp_path), False, False)
    assert (done.lines, done.entries, done.digests) == (9, 9, len(digests))
    assert done.digest_run is not None
    written = Path(done.digest_run).read_text(encoding="utf-8").split("\n")
    assert written == [*sorted(digest_line(d) for d in digests), ""]


def cms_line(n: int) -> bytes:
    # Loc and lastmod only, as a CMS exports them: several lastmod forms, "&" in some queries.
    lastmod = (None, "2024-05-01", "2024-05-01T10:20:30+02:00", "2024-05-01T08:20:30Z")[n % 4]
    query = f"?id={n}&lang=en" if n % 3 == 0 else ""
    return json.dumps({"loc": f"{BASE}cms/p{n:05d}.html{query}", "lastmod": lastmod}).encode()


@pytest.mark.parametrize(
    ("kind", "raw_lines"),
    [
        # The crawl's shape, every field on every line: the column checks.
        ("jsonl", [crawl_line(f"{BASE}crawl/{n:05d}", "2024-05-01T10:20:30+00:00", digest=f"d{n}") for n in range(3000)]),
        # Some with changefreq and priority, some without a lastmod: columns of mixed fields.
        (
            "jsonl",
            [
                crawl_line(f"{BASE}mixed/{n}", None if n % 5 else "2024-05-01", "daily" if n % 7 == 0 else None,
                           0.5 if n % 11 == 0 else None, None if n % 2 else f"d{n}")
                for n in range(3000)
            ],
        ),  # fmt: skip
        ("jsonl", [cms_line(n) for n in range(3000)]),  # lastmods of several forms: line by line
        ("txt", [f"{BASE}text/{n}?a=1&b={n}".encode() for n in range(3000)]),  # plain URLs of one site
    ],
)
def test_the_fast_encoders_publish_what_the_input_says(kind: str, raw_lines: list[bytes], tmp_path: Path) -> None:
    # Pinned to an independent reader: the published files, read back by Scrapy's Sitemap
    # after the XSD, give each line's fields as json.loads (or the line itself) reads them.
    done = encode_chunk(kind, raw_lines, 1, stop=False)
    assert not done.bad and len(done.lines) == len(raw_lines)
    with SitemapSetBuilder(OutputOptions(tmp_path, BASE, max_urls=1000)) as builder:
        run, duplicates = sort_into_run(done.lines, builder.sort_dir)
        digests = sort_into_run([digest_line(d) for d in done.digests], builder.sort_dir, unique=False)[0]
        builder.add_sorted_run(run, len(done.lines), duplicates, len(done.digests), digests, verbatim=done.verbatim)
        builder.publish()
    records = [json.loads(line) if kind == "jsonl" else {"loc": line.decode()} for line in raw_lines]
    expected = sorted(records, key=lambda record: record["loc"])
    urls = read_sitemap_set(tmp_path, BASE)
    assert [url["loc"] for url in urls] == [record["loc"] for record in expected]
    for url, record in zip(urls, expected):
        assert url.get("lastmod") == record.get("lastmod")  # these forms go in as they are
        assert url.get("changefreq") == record.get("changefreq")
        assert (float(url["priority"]) if "priority" in url else None) == record.get("priority")

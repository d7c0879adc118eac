"""Tests of sitemap_spider/sitemaps/runs/lines.py: an entry as one line and back.

That a field with a tab or a newline is refused is tested through the sorter in test_sorting.py.
"""

from __future__ import annotations

import pytest

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.runs.lines import (
    FirstOfEach,
    decode_entry,
    digest_line,
    encode_entry,
    encode_fields,
    lines_of_columns,
    loc_only_lines,
)


@pytest.mark.parametrize(
    "entry",
    [
        SitemapEntry("https://example.com/"),
        SitemapEntry("https://example.com/?a=1&b=2", "2024-05-01T10:20:30+02:00", "daily", 0.5),
        SitemapEntry("https://example.com/", priority=0.1 + 0.2),  # a float repr must round-trip
        SitemapEntry("https://example.com/", lastmod="-", changefreq="+"),  # the markers themselves
        SitemapEntry("https://example.com/", lastmod=""),
    ],
)
def test_encoding_round_trips(entry: SitemapEntry) -> None:
    line = encode_entry(entry)
    assert "\n" not in line
    assert decode_entry(line) == entry


Columns = tuple[list[str], list[str | None], list[str | None], list[float | None], list[str | None]]
COLUMNS: list[Columns] = [
    # locs, lastmods, changefreqs, priorities, digests
    (["https://example.com/a", "https://example.com/b"], ["2024-05-01", "2024-05-02"], [None, None], [None, None], ["d1", "d2"]),
    (["https://example.com/a", "https://example.com/b"], [None, "2024-05-02"], [None, None], [None, None], ["d1", None]),
    (["https://example.com/a", "https://example.com/b"], [None, "2024-05-02"], ["daily", None], [None, 0.5], [None, "d"]),
    ([], [], [], [], []),
]


@pytest.mark.parametrize("columns", COLUMNS)
def test_the_column_encoder_writes_the_lines_of_encode_fields(columns: Columns) -> None:
    assert lines_of_columns(*columns) == [encode_fields(*fields) for fields in zip(*columns, strict=True)]


def test_the_loc_only_encoder_writes_the_lines_of_encode_fields() -> None:
    locs = ["https://example.com/a", "https://example.com/b?x=1&y=2"]
    assert loc_only_lines("\n".join(locs)) == [encode_fields(loc) for loc in locs]


def test_the_walk_keeps_the_first_line_of_each_loc_and_of_each_shared_digest() -> None:
    entries = [
        SitemapEntry("https://example.com/a", "2024-05-01", content_digest="same"),
        SitemapEntry("https://example.com/a", content_digest="other"),  # the loc again
        SitemapEntry("https://example.com/b", content_digest="same"),  # the content of /a
        SitemapEntry("https://example.com/c", changefreq="daily", priority=0.5),
    ]
    lines = sorted(encode_entry(entry) for entry in entries)
    dropped: list[str] = []
    walk = FirstOfEach({digest_line("same"): False}, dropped.append)
    blocks = list(walk.blocks([lines[:2], lines[2:]]))
    assert blocks == [
        (["https://example.com/a"], ["2024-05-01"], [None]),
        (["https://example.com/c"], [""], [("daily", 0.5, "", "", "")]),
    ]
    assert walk.duplicates == 1
    assert [decode_entry(line).loc for line in dropped] == ["https://example.com/b"]


def _flat(blocks: list[tuple[list[str], list[str], list[object]]]) -> list[tuple[str, str, object]]:
    return [row for locs, lastmods, extras in blocks for row in zip(locs, lastmods, extras)]


def test_the_walk_keeps_the_latest_lastmod_of_a_loc_and_judges_its_content_by_that_line() -> None:
    a, b, c, d, e = (f"https://example.com/{name}" for name in "abcde")
    entries = [
        SitemapEntry(a, "2024-05-01", content_digest="same"),
        SitemapEntry(a, "2024-06-01", priority=0.4, content_digest="other"),  # later: /a is this line
        SitemapEntry(b, content_digest="same"),  # /a's line without it: not the content of another
        SitemapEntry(c, "2024-01-01", content_digest="other"),  # the content of /a ...
        SitemapEntry(c, "2024-02-01", content_digest="fresh"),  # ... but /c is this line
        SitemapEntry(d, "2024-06-01T10:00:00Z"),
        SitemapEntry(d, "2024-06-01T09:00:00-05:00", changefreq="daily"),  # 14:00 UTC: later, as text earlier
        SitemapEntry(d, "2024-06-01"),
        SitemapEntry(d),  # no lastmod erases none
        SitemapEntry(e, "2024-03-01", content_digest="other"),  # the content of /a: dropped
        SitemapEntry(e, content_digest="fresh"),
    ]
    lines = sorted(encode_entry(entry) for entry in entries)
    shared = {digest_line(digest): False for digest in ("same", "other", "fresh")}
    for cut in range(len(lines) + 1):  # a loc's lines in one block or split between two
        dropped: list[str] = []
        walk = FirstOfEach(dict(shared), dropped.append)
        blocks = [lines[:cut], lines[cut:]]
        assert _flat(list(walk.blocks(blocks))) == [
            (a, "2024-06-01", (None, 0.4, "", "", "")),
            (b, "", None),
            (c, "2024-02-01", None),
            (d, "2024-06-01T09:00:00-05:00", ("daily", None, "", "", "")),
        ], cut
        assert walk.duplicates == 6
        assert [decode_entry(line) for line in dropped] == [entries[-2]]

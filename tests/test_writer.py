"""Tests of sitemap_spider/sitemaps/shards/writer.py: rotation at the limits, gzip, index."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.errors import EmptySitemapError, InvalidEntryError, TooManyShardsError
from sitemap_spider.sitemaps.names import shard_name
from sitemap_spider.sitemaps.shards.files import _COMPRESS_BLOCK, gzip_file, write_document
from sitemap_spider.sitemaps.shards.writer import (
    MAX_SITEMAPS_PER_INDEX,
    ShardInfo,
    ShardWriter,
    write_index,
)
from sitemap_spider.sitemaps.xml.elements import URLSET_CLOSE, URLSET_OPEN, url_element, url_line
from tests.sitemap_check import assert_valid, check_gzip, file_bytes, read_urls, read_urlset

FRAME = len(URLSET_OPEN) + len(URLSET_CLOSE)
BASE = "https://example.com/sitemaps/"
SLICE = _COMPRESS_BLOCK  # the writer deflates every file in slices of this size


def same_size_entries(count: int) -> list[SitemapEntry]:
    return [SitemapEntry(f"https://example.com/p/{i:06d}") for i in range(count)]


def write_all(directory: Path, items: list[SitemapEntry], **options: object) -> list[ShardInfo]:
    writer = ShardWriter(directory, **options)  # type: ignore[arg-type]
    for entry in items:
        writer.write(entry)
    return writer.close()


def write_in_lists(writer: ShardWriter, items: list[SitemapEntry], batch: int) -> list[ShardInfo]:
    for start in range(0, len(items), batch):
        part = items[start : start + batch]
        lines = [url_line(e.loc, e.lastmod, e.changefreq, e.priority) for e in part]
        writer.write_lines(lines, [e.lastmod or "" for e in part])
    return writer.close()


def check_shards(directory: Path, shards: list[ShardInfo]) -> list[str]:
    locs = []
    for shard in shards:
        data = file_bytes(directory / shard.name)
        assert len(data) == shard.bytes
        urls = read_urls(data, shard.name)
        assert len(urls) == shard.urls
        locs += [url["loc"] for url in urls]
    return locs


@pytest.mark.parametrize(
    ("count", "max_urls", "sizes"),
    [
        (6, 3, [3, 3]),
        (7, 3, [3, 3, 1]),
        (5, 3, [3, 2]),
        (1, 1, [1]),
        (3, 1, [1, 1, 1]),
        (3, 50_000, [3]),
    ],
)
def test_rotation_at_max_urls(tmp_path: Path, count: int, max_urls: int, sizes: list[int]) -> None:
    items = same_size_entries(count)
    shards = write_all(tmp_path, items, max_urls=max_urls, max_bytes=52_428_800, gzip=False)
    assert [shard.urls for shard in shards] == sizes
    assert [shard.name for shard in shards] == [shard_name(i + 1, gzip=False) for i in range(len(sizes))]
    assert check_shards(tmp_path, shards) == [entry.loc for entry in items]
    assert sorted(path.name for path in tmp_path.iterdir()) == [shard.name for shard in shards]


@pytest.mark.parametrize(
    ("per_shard", "slack", "sizes"),
    [
        (3, 0, [3, 3, 3, 1]),  # exactly three lines fit: the file is exactly max_bytes
        (3, -1, [2, 2, 2, 2, 2]),  # one byte short: only two fit
        (3, 5, [3, 3, 3, 1]),
        (1, 0, [1] * 10),
    ],
)
def test_rotation_at_max_bytes(tmp_path: Path, per_shard: int, slack: int, sizes: list[int]) -> None:
    items = same_size_entries(10)
    line = len(url_element(items[0]))
    max_bytes = FRAME + per_shard * line + slack
    shards = write_all(tmp_path, items, max_urls=50_000, max_bytes=max_bytes, gzip=False)
    assert [shard.urls for shard in shards] == sizes
    assert all(shard.bytes <= max_bytes for shard in shards)
    assert [shard.bytes for shard in shards] == [FRAME + n * line for n in sizes]
    assert check_shards(tmp_path, shards) == [entry.loc for entry in items]


def test_rotation_with_mixed_sizes_never_exceeds_max_bytes(tmp_path: Path) -> None:
    items = [SitemapEntry(f"https://example.com/{'x' * (i * 37 % 300)}/{i}") for i in range(200)]
    max_bytes = FRAME + 2000
    shards = write_all(tmp_path, items, max_urls=50_000, max_bytes=max_bytes, gzip=True)
    assert all(shard.bytes <= max_bytes for shard in shards)
    # Each shard was closed only because the next line would not fit.
    lines = [len(url_element(entry)) for entry in items]
    start = 0
    for shard in shards[:-1]:
        end = start + shard.urls
        assert shard.bytes + lines[end] > max_bytes
        start = end
    assert check_shards(tmp_path, shards) == [entry.loc for entry in items]


def test_entry_too_big_for_an_empty_shard(tmp_path: Path) -> None:
    big = SitemapEntry("https://example.com/" + "y" * 500)
    writer = ShardWriter(tmp_path, max_urls=10, max_bytes=FRAME + 100, gzip=False)
    with pytest.raises(InvalidEntryError, match="bytes"):
        writer.write(big)
    assert list(tmp_path.iterdir()) == []
    writer.abort()


def test_gzip_is_reproducible_and_holds_the_plain_bytes(tmp_path: Path) -> None:
    items = same_size_entries(500)
    for run in ("plain", "a", "b"):
        (tmp_path / run).mkdir()
        write_all(tmp_path / run, items, max_urls=200, max_bytes=52_428_800, gzip=run != "plain")
    plain = sorted((tmp_path / "plain").iterdir())
    first = sorted((tmp_path / "a").iterdir())
    second = sorted((tmp_path / "b").iterdir())
    assert [path.name for path in plain] == [f"sitemap-0000{i}.xml" for i in (1, 2, 3)]
    assert [path.name for path in first] == [f"sitemap-0000{i}.xml.gz" for i in (1, 2, 3)]
    for plain_path, path, again in zip(plain, first, second):
        data = path.read_bytes()
        assert data == again.read_bytes(), "same input, same bytes"
        assert data[:2] == b"\x1f\x8b"
        assert data[4:8] == b"\0\0\0\0", "mtime must be 0"
        assert not data[3] & 0x08, "no file name in the header"
        assert gzip.decompress(data) == plain_path.read_bytes()
        read_urlset(path)


def test_gzip_bytes_depend_on_the_content_only(tmp_path: Path) -> None:
    # ISA-L's output depends on how its input is split between calls: a ShardWriter's writes
    # of one line each or of thousands, write_document's single write and gzip_file's reads
    # must still give the same bytes. The first shard spans several compression slices.
    entries = random_entries(20_000, seed=3)
    for name in ("plain", "lines", "lists"):
        (tmp_path / name).mkdir()
    write_all(tmp_path / "plain", entries, max_urls=15_000, max_bytes=52_428_800, gzip=False)
    write_all(tmp_path / "lines", entries, max_urls=15_000, max_bytes=52_428_800, gzip=True)
    writer = ShardWriter(tmp_path / "lists", max_urls=15_000, max_bytes=52_428_800, gzip=True)
    shards = write_in_lists(writer, entries, 7_001)
    assert [shard.urls for shard in shards] == [15_000, 5_000]
    assert shards[0].bytes > 2 * SLICE and shards[1].bytes < SLICE
    for number in (1, 2):
        plain_path = tmp_path / "plain" / shard_name(number, gzip=False)
        plain = plain_path.read_bytes()
        expected = (tmp_path / "lines" / shard_name(number, gzip=True)).read_bytes()
        check_gzip(expected, plain)
        assert (tmp_path / "lists" / shard_name(number, gzip=True)).read_bytes() == expected
        write_document(tmp_path / f"{number}-whole.gz", plain, gzip=True)
        assert (tmp_path / f"{number}-whole.gz").read_bytes() == expected
        gzip_file(plain_path, tmp_path / f"{number}-file.gz")
        assert (tmp_path / f"{number}-file.gz").read_bytes() == expected


def test_shard_lastmod_is_the_newest_instant_across_zones(tmp_path: Path) -> None:
    loc = "https://example.com/"
    items = [
        SitemapEntry(loc + "1", lastmod="2024-05-02T01:00:00+02:00"),  # 2024-05-01T23:00Z
        SitemapEntry(loc + "2", lastmod="2024-05-01T23:30:00Z"),  # newest
        SitemapEntry(loc + "3", lastmod="2024-05-01"),  # 2024-05-01T00:00Z
        SitemapEntry(loc + "4"),
        SitemapEntry(loc + "5", lastmod="2024-05-01T18:29-05:00"),  # 2024-05-01T23:29Z
        SitemapEntry(loc + "6", lastmod="2024-05-01T20:00:00.5-14:00"),  # 2024-05-02T10:00Z
        SitemapEntry(loc + "7", lastmod="2024-05-02"),  # 2024-05-02T00:00Z
        SitemapEntry(loc + "8"),
    ]
    shards = write_all(tmp_path, items, max_urls=5, max_bytes=52_428_800, gzip=False)
    assert [shard.lastmod for shard in shards] == [
        "2024-05-01T23:30:00Z",
        "2024-05-01T20:00:00.5-14:00",
    ]


def test_shard_without_lastmods_has_none(tmp_path: Path) -> None:
    items = [
        SitemapEntry("https://example.com/a", lastmod="2024-01-01"),
        SitemapEntry("https://example.com/b"),
    ]
    shards = write_all(tmp_path, items, max_urls=1, max_bytes=52_428_800, gzip=False)
    assert [shard.lastmod for shard in shards] == ["2024-01-01", None]


def test_write_index(tmp_path: Path) -> None:
    shards = [
        ShardInfo("sitemap-00001.xml.gz", 3, 300, "2024-05-01T10:20+02:00"),
        ShardInfo("sitemap-00002.xml.gz", 1, 100, None),
    ]
    path = tmp_path / "sitemap_index.xml"
    write_index(path, shards, BASE)
    data = path.read_bytes()
    assert_valid(data, "siteindex.xsd", "index")
    assert b"<loc>https://example.com/sitemaps/sitemap-00001.xml.gz</loc>" in data
    assert b"<lastmod>2024-05-01T10:20:00+02:00</lastmod>" in data
    assert data.count(b"<sitemap>") == 2


def test_write_index_refuses_empty_and_too_many(tmp_path: Path) -> None:
    with pytest.raises(EmptySitemapError):
        write_index(tmp_path / "i.xml", [], BASE)
    too_many = [ShardInfo(shard_name(1, gzip=False), 1, 1, None)] * (MAX_SITEMAPS_PER_INDEX + 1)
    with pytest.raises(TooManyShardsError):
        write_index(tmp_path / "i.xml", too_many, BASE)
    assert not (tmp_path / "i.xml").exists()


def test_too_many_shards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sitemap_spider.sitemaps.shards import writer as writer_module

    monkeypatch.setattr(writer_module, "MAX_SITEMAPS_PER_INDEX", 3)
    writer = ShardWriter(tmp_path, max_urls=2, max_bytes=52_428_800, gzip=False)
    for entry in same_size_entries(6):
        writer.write(entry)
    with pytest.raises(TooManyShardsError):
        writer.write(SitemapEntry("https://example.com/one-too-many"))
    writer.abort()


@pytest.mark.parametrize(
    ("max_urls", "max_bytes"),
    [
        (0, 1000),
        (50_001, 1000),
        (10, FRAME),
        (10, 52_428_801),
    ],
)
def test_limits_are_checked(tmp_path: Path, max_urls: int, max_bytes: int) -> None:
    with pytest.raises(ValueError):
        ShardWriter(tmp_path, max_urls=max_urls, max_bytes=max_bytes, gzip=False)


def test_close_with_nothing_written(tmp_path: Path) -> None:
    assert ShardWriter(tmp_path, max_urls=5, max_bytes=10_000, gzip=True).close() == []
    assert list(tmp_path.iterdir()) == []


def test_shards_read_back_with_all_fields(tmp_path: Path) -> None:
    entry = SitemapEntry("https://example.com/?a=1&b=<2>", "2024-05-01", "monthly", 0.25)
    [shard] = write_all(tmp_path, [entry], max_urls=5, max_bytes=10_000, gzip=True)
    assert read_urlset(tmp_path / shard.name) == [
        {"loc": entry.loc, "lastmod": "2024-05-01", "changefreq": "monthly", "priority": "0.25"}
    ]


def random_entries(count: int, seed: int) -> list[SitemapEntry]:
    rng = random.Random(seed)
    return [
        SitemapEntry(
            f"https://example.com/{i:05d}/" + "x" * rng.choice([0, 5, 80, 400]),
            lastmod=rng.choice([None, "2024-05-01", "2024-05-02T01:00:00+02:00", "2024-05-01T23:30:00Z"]),
        )
        for i in range(count)
    ]


@pytest.mark.parametrize(
    ("max_urls", "max_bytes", "batch"),
    [(50_000, 52_428_800, 97), (7, 52_428_800, 10), (100, FRAME + 2000, 33), (3, FRAME + 700, 1000), (1, FRAME + 600, 5)],
)
def test_lines_written_in_lists_make_the_shards_of_entries_written_one_by_one(
    tmp_path: Path, max_urls: int, max_bytes: int, batch: int
) -> None:
    entries = random_entries(300, seed=max_urls + batch)
    (tmp_path / "one").mkdir()
    (tmp_path / "lists").mkdir()
    one = write_all(tmp_path / "one", entries, max_urls=max_urls, max_bytes=max_bytes, gzip=False)
    writer = ShardWriter(tmp_path / "lists", max_urls=max_urls, max_bytes=max_bytes, gzip=False)
    assert write_in_lists(writer, entries, batch) == one
    for shard in one:
        assert (tmp_path / "lists" / shard.name).read_bytes() == (tmp_path / "one" / shard.name).read_bytes()


@pytest.mark.parametrize(
    ("lastmods", "newest"),
    [
        ([], None),
        (["", ""], None),
        (["2024-05-01", "", "2024-05-03", "2024-05-02"], "2024-05-03"),
        (["2024-05-01T10:00:00Z", "2024-05-01T09:00:00Z"], "2024-05-01T10:00:00Z"),
        (["2024-05-01T10:00:00+00:00", "2024-05-02T09:00:00+00:00"], "2024-05-02T09:00:00+00:00"),
        # Not of one form: compared as instants, the first of equal ones kept.
        (["2024-05-02T01:00:00+02:00", "2024-05-01T23:30:00Z"], "2024-05-01T23:30:00Z"),
        (["2024-05-01T23:00:00+00:00", "2024-05-02T01:00:00+02:00"], "2024-05-01T23:00:00+00:00"),
        (["2024-05-02T01:00:00+02:00", "2024-05-01T23:00:00+00:00"], "2024-05-02T01:00:00+02:00"),
        (["2024-05-01", "2024-05-01T00:00:00Z"], "2024-05-01"),
        (["2024-05-01T10:00:00+05:00", "2024-05-01T09:00:00+00:00"], "2024-05-01T09:00:00+00:00"),
        (["2024-05-01T10:00:00.5Z", "2024-05-01T10:00:00.25Z"], "2024-05-01T10:00:00.5Z"),
    ],
)
def test_newest_lastmod(lastmods: list[str], newest: str | None) -> None:
    from sitemap_spider.sitemaps.shards.writer import newest_lastmod

    assert newest_lastmod(lastmods) == newest

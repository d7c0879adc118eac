"""End-to-end tests of sitemap_spider/sitemaps/publish.py through SitemapSetBuilder."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from tests.sitemap_check import read_sitemap_set

from sitemap_spider.items import SitemapEntry
from sitemap_spider.sitemaps import writer as writer_module
from sitemap_spider.sitemaps.errors import (
    EmptySitemapError,
    InvalidEntryError,
    SitemapError,
    TooManyShardsError,
)
from sitemap_spider.sitemaps.publish import OutputOptions, PublishResult, SitemapSetBuilder

BASE = "https://example.com/sitemaps/"


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def site(count: int) -> list[SitemapEntry]:
    return [
        SitemapEntry(
            f"https://example.com/p/{i}?q=a&b='{i % 7}'",
            lastmod=None if i % 4 == 0 else f"2024-0{i % 9 + 1}-1{i % 10}T0{i % 10}:30:00+0{i % 5}:00",
            changefreq="weekly" if i % 10 == 0 else None,
            priority=0.5 if i % 20 == 0 else None,
        )
        for i in range(count)
    ]


def build(options: OutputOptions, entries: list[SitemapEntry]) -> PublishResult:
    with SitemapSetBuilder(options) as builder:
        for entry in entries:
            builder.add(entry)
        return builder.publish()


def expected(entries: list[SitemapEntry]) -> list[str]:
    return sorted({entry.loc for entry in entries})


@pytest.mark.parametrize("gzip", [False, True])
def test_end_to_end_with_small_shards(tmp_path: Path, gzip: bool) -> None:
    entries = site(95)
    options = OutputOptions(tmp_path, BASE, max_urls=10, gzip=gzip, sort_run_size=16)
    result = build(options, random.Random(5).sample(entries, len(entries)))
    assert result == PublishResult(
        index_path=tmp_path / "sitemap_index.xml",
        index_url=BASE + "sitemap_index.xml",
        files=10,
        urls=95,
        duplicates=0,
        content_duplicates=0,
    )
    urls = read_sitemap_set(tmp_path, BASE)
    assert [url["loc"] for url in urls] == expected(entries)
    by_loc = {entry.loc: entry for entry in entries}
    for url in urls:
        entry = by_loc[url["loc"]]
        assert url.get("changefreq") == entry.changefreq
        assert ("priority" in url) == (entry.priority is not None)
        assert ("lastmod" in url) == (entry.lastmod is not None)
    suffix = ".xml.gz" if gzip else ".xml"
    assert all(path.name.endswith(suffix) for path in tmp_path.glob("sitemap-*"))


def test_one_shard_still_gets_an_index(tmp_path: Path) -> None:
    result = build(OutputOptions(tmp_path, BASE), [SitemapEntry("https://example.com/")])
    assert result.files == 1
    assert read_sitemap_set(tmp_path, BASE) == [{"loc": "https://example.com/"}]


def test_duplicates_are_published_once(tmp_path: Path) -> None:
    entries = site(30)
    result = build(OutputOptions(tmp_path, BASE, sort_run_size=7), entries + entries[:12])
    assert (result.urls, result.duplicates) == (30, 12)
    assert [url["loc"] for url in read_sitemap_set(tmp_path, BASE)] == expected(entries)


@pytest.mark.parametrize("gzip", [False, True])
def test_same_entries_in_any_order_give_identical_bytes(tmp_path: Path, gzip: bool) -> None:
    entries = site(120) + site(40)
    outputs = []
    for seed in range(3):
        output = tmp_path / str(seed)
        shuffled = random.Random(seed).sample(entries, len(entries))
        build(OutputOptions(output, BASE, max_urls=25, gzip=gzip, sort_run_size=13 + seed), shuffled)
        outputs.append(snapshot(output))
    assert outputs[0] == outputs[1] == outputs[2]
    # Publishing again over the same directory changes nothing either.
    build(OutputOptions(tmp_path / "0", BASE, max_urls=25, gzip=gzip), entries)
    assert snapshot(tmp_path / "0") == outputs[0]


def test_rerun_with_fewer_urls_removes_stale_shards(tmp_path: Path) -> None:
    build(OutputOptions(tmp_path, BASE, max_urls=5), site(23))
    assert len(list(tmp_path.glob("sitemap-*.xml"))) == 5
    build(OutputOptions(tmp_path, BASE, max_urls=5), site(7))
    assert len(read_sitemap_set(tmp_path, BASE)) == 7
    assert len(list(tmp_path.glob("sitemap-*.xml"))) == 2


def test_empty_set_publishes_nothing_and_keeps_the_old_set(tmp_path: Path) -> None:
    build(OutputOptions(tmp_path, BASE, max_urls=5), site(12))
    before = snapshot(tmp_path)
    builder = SitemapSetBuilder(OutputOptions(tmp_path, BASE))
    with pytest.raises(EmptySitemapError):
        builder.publish()
    assert snapshot(tmp_path) == before
    assert list(tmp_path.glob(".sitemap-staging-*")) == []


def test_empty_set_in_a_new_directory(tmp_path: Path) -> None:
    with (
        pytest.raises(EmptySitemapError),
        SitemapSetBuilder(OutputOptions(tmp_path / "new", BASE)) as builder,
    ):
        builder.publish()
    assert list((tmp_path / "new").iterdir()) == []


def test_invalid_entry_is_refused_and_not_stored(tmp_path: Path) -> None:
    with SitemapSetBuilder(OutputOptions(tmp_path, BASE)) as builder:
        builder.add(SitemapEntry("https://example.com/ok"))
        with pytest.raises(InvalidEntryError, match="lastmod"):
            builder.add(SitemapEntry("https://example.com/bad", lastmod="yesterday"))
        with pytest.raises(InvalidEntryError):
            builder.add(SitemapEntry("relative/url"))
        assert builder.added == 1
        assert builder.publish().urls == 1
    assert read_sitemap_set(tmp_path, BASE) == [{"loc": "https://example.com/ok"}]


def test_failure_while_writing_keeps_the_old_set(tmp_path: Path) -> None:
    build(OutputOptions(tmp_path, BASE, max_urls=5), site(12))
    before = snapshot(tmp_path)
    # Valid on its own, but bigger than the configured shard size: fails mid-way through
    # writing, after some shards of the new set were already staged.
    small = OutputOptions(tmp_path, BASE, max_bytes=700)
    huge = SitemapEntry("https://example.com/zzz/" + "x" * 800)
    builder = SitemapSetBuilder(small)
    for entry in [*site(20), huge]:
        builder.add(entry)
    with pytest.raises(InvalidEntryError, match="bytes"):
        builder.publish()
    assert snapshot(tmp_path) == before
    read_sitemap_set(tmp_path, BASE)


def test_too_many_shards_keeps_the_old_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(OutputOptions(tmp_path, BASE, max_urls=5), site(12))
    before = snapshot(tmp_path)
    monkeypatch.setattr(writer_module, "MAX_SITEMAPS_PER_INDEX", 3)
    with pytest.raises(TooManyShardsError):
        build(OutputOptions(tmp_path, BASE, max_urls=2, gzip=True), site(7))
    assert snapshot(tmp_path) == before


def test_exception_in_the_caller_discards(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), SitemapSetBuilder(OutputOptions(tmp_path, BASE)) as builder:
        builder.add(SitemapEntry("https://example.com/"))
        raise RuntimeError("crawl failed")
    assert list(tmp_path.iterdir()) == []


def test_discard_is_idempotent_and_final(tmp_path: Path) -> None:
    builder = SitemapSetBuilder(OutputOptions(tmp_path, BASE, sort_run_size=2))
    for entry in site(9):
        builder.add(entry)
    builder.discard()
    builder.discard()
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(SitemapError):
        builder.add(SitemapEntry("https://example.com/"))
    with pytest.raises(SitemapError):
        builder.publish()


def test_publish_twice_is_refused(tmp_path: Path) -> None:
    builder = SitemapSetBuilder(OutputOptions(tmp_path, BASE))
    builder.add(SitemapEntry("https://example.com/"))
    builder.publish()
    with pytest.raises(SitemapError):
        builder.publish()
    builder.discard()  # after a publish: nothing to drop, the set stays
    assert len(read_sitemap_set(tmp_path, BASE)) == 1


def test_without_validation(tmp_path: Path) -> None:
    build(OutputOptions(tmp_path, BASE, validate=False, gzip=True), site(3))
    assert len(read_sitemap_set(tmp_path, BASE)) == 3


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"base_url": "https://example.com/sitemaps"}, "base_url"),
        ({"base_url": "/sitemaps/"}, "base_url"),
        ({"base_url": "ftp://example.com/"}, "base_url"),
        ({"max_urls": 0}, "max_urls"),
        ({"max_urls": 50_001}, "max_urls"),
        ({"max_bytes": 100}, "max_bytes"),
        ({"max_bytes": 52_428_801}, "max_bytes"),
        ({"sort_run_size": 0}, "sort_run_size"),
    ],
)
def test_options_are_checked(tmp_path: Path, changes: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"output_dir": tmp_path, "base_url": BASE, **changes}
    with pytest.raises(ValueError, match=message):
        OutputOptions(**arguments)  # type: ignore[arg-type]


def test_pages_with_the_same_content_are_listed_once_under_their_first_url(tmp_path: Path) -> None:
    entries = [
        SitemapEntry("https://www.example.com/index.html?b", content_digest="aa"),
        SitemapEntry("https://www.example.com/", content_digest="aa"),
        SitemapEntry("https://www.example.com/index.html", content_digest="aa"),
        SitemapEntry("https://www.example.com/other", content_digest="bb"),
        SitemapEntry("https://www.example.com/unknown"),
        SitemapEntry("https://www.example.com/unknown-too"),
    ]
    dropped: list[str] = []
    with SitemapSetBuilder(OutputOptions(tmp_path, BASE)) as builder:
        for entry in reversed(entries):
            builder.add(entry)
        result = builder.publish(lambda entry: dropped.append(entry.loc))
    assert result.content_duplicates == 2
    assert dropped == ["https://www.example.com/index.html", "https://www.example.com/index.html?b"]
    assert [url["loc"] for url in read_sitemap_set(tmp_path, BASE)] == [
        "https://www.example.com/",
        "https://www.example.com/other",
        "https://www.example.com/unknown",
        "https://www.example.com/unknown-too",
    ]

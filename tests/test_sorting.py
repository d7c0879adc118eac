"""Tests of sitemap_spider/sitemaps/runs/sorting.py: external sort, de-duplication, cleanup."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from sitemap_spider.sitemaps.runs import sorting
from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.errors import InvalidEntryError, SitemapError
from sitemap_spider.sitemaps.runs.sorting import ExternalSorter, LineSorter


def entries(count: int) -> list[SitemapEntry]:
    return [
        SitemapEntry(
            f"https://example.com/page/{i}",
            lastmod=None if i % 3 else f"2024-05-{i % 28 + 1:02d}",
            changefreq=None if i % 4 else "weekly",
            priority=None if i % 5 else (i % 11) / 10,
        )
        for i in range(count)
    ]


def run_files(work_dir: Path) -> list[Path]:
    return sorted(work_dir.glob("sort-run-*"))


def sort_all(work_dir: Path, items: list[SitemapEntry], run_size: int) -> tuple[list[SitemapEntry], int]:
    with ExternalSorter(work_dir, run_size=run_size) as sorter:
        for entry in items:
            sorter.add(entry)
        result = list(sorter.iter_unique())
        return result, sorter.duplicates


@pytest.mark.parametrize(
    "entry",
    [
        SitemapEntry("https://example.com/a\tb"),
        SitemapEntry("https://example.com/a\nb"),
        SitemapEntry("https://example.com/", lastmod="2024\t"),
        SitemapEntry("https://example.com/", changefreq="daily\n"),
    ],
)
def test_tabs_and_newlines_are_refused(entry: SitemapEntry, tmp_path: Path) -> None:
    with pytest.raises(InvalidEntryError):
        ExternalSorter(tmp_path).add(entry)


def test_sorts_in_memory_when_below_run_size(tmp_path: Path) -> None:
    items = entries(50)
    shuffled = random.Random(1).sample(items, len(items))
    result, duplicates = sort_all(tmp_path, shuffled, run_size=1000)
    assert result == sorted(items, key=lambda entry: entry.loc)
    assert duplicates == 0
    assert run_files(tmp_path) == []


def test_spills_runs_and_merges_them(tmp_path: Path) -> None:
    items = entries(1000)
    shuffled = random.Random(2).sample(items, len(items))
    sorter = ExternalSorter(tmp_path, run_size=64)
    for entry in shuffled:
        sorter.add(entry)
    # 1000 entries, 64 per run: 15 full runs on disk, 40 entries still in memory.
    assert len(run_files(tmp_path)) == 1000 // 64
    assert list(sorter.iter_unique()) == sorted(items, key=lambda entry: entry.loc)
    sorter.close()
    assert run_files(tmp_path) == []


def test_long_lines_spill_by_characters_before_run_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sorting, "MAX_BUFFER_CHARS", 10_000)
    sorter = LineSorter(tmp_path, run_size=100_000)
    lines = [f"https://www.example.com/{i:04d}/" + "x" * 990 for i in range(100)]
    for line in random.Random(3).sample(lines, len(lines)):
        sorter.add_line(line)
    # About 1,020 characters a line: a run every 10 lines, whatever run_size says.
    assert len(run_files(tmp_path)) == 10
    assert list(sorter.iter_unique_lines()) == lines
    sorter.close()


def test_duplicates_are_dropped_and_counted(tmp_path: Path) -> None:
    base = entries(300)
    items = base + base[:100] + base[50:60]
    shuffled = random.Random(3).sample(items, len(items))
    result, duplicates = sort_all(tmp_path, shuffled, run_size=37)
    assert [entry.loc for entry in result] == sorted(entry.loc for entry in base)
    assert duplicates == 110


@pytest.mark.parametrize("fan_in", [128, 2])
def test_kept_duplicate_does_not_depend_on_insertion_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fan_in: int
) -> None:
    monkeypatch.setattr(sorting, "MAX_MERGE_FAN_IN", fan_in)  # 2: runs merged in passes too
    loc = "https://example.com/same"
    variants = [
        SitemapEntry(loc),
        SitemapEntry(loc, lastmod="2024-05-01", priority=0.3),
        SitemapEntry(loc, lastmod="2024-05-02T10:00:00Z"),
        SitemapEntry(loc, lastmod="2024-05-02T14:00:00+00:00", changefreq="daily"),
        SitemapEntry(loc, lastmod="2024-05-02T09:00:00-05:00", priority=0.9),  # 14:00 UTC too
        SitemapEntry(loc, changefreq="daily"),
    ]
    kept = set()
    for seed in range(6):
        shuffled = random.Random(seed).sample(variants, len(variants))
        for run_size in (1, 2, 10):
            work_dir = tmp_path / f"{seed}-{run_size}"
            work_dir.mkdir()
            result, duplicates = sort_all(work_dir, shuffled, run_size)
            assert duplicates == 5
            kept.add(result[0])
    # One and the same entry every time, with all its fields: the latest lastmod as an instant (not
    # as text); of two naming that instant, the first in sort order.
    assert kept == {SitemapEntry(loc, lastmod="2024-05-02T09:00:00-05:00", priority=0.9)}


def test_many_runs_are_merged_in_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sorting, "MAX_MERGE_FAN_IN", 3)
    items = entries(200) * 2
    shuffled = random.Random(4).sample(items, len(items))
    result, duplicates = sort_all(tmp_path, shuffled, run_size=10)
    assert result == sorted(entries(200), key=lambda entry: entry.loc)
    assert duplicates == 200
    assert run_files(tmp_path) == []


def test_sort_order_is_code_point_order_of_loc(tmp_path: Path) -> None:
    locs = [
        "https://example.com/b",
        "https://example.com/a/b",
        "https://example.com/a",
        "https://example.com/A",
        "https://example.com/a%20",
        "https://example.com/a-",
    ]
    result, _ = sort_all(tmp_path, [SitemapEntry(loc) for loc in locs], run_size=2)
    assert [entry.loc for entry in result] == sorted(locs)


def test_empty_sorter_yields_nothing(tmp_path: Path) -> None:
    assert sort_all(tmp_path, [], run_size=5) == ([], 0)


def test_add_after_iteration_and_second_iteration_fail(tmp_path: Path) -> None:
    sorter = ExternalSorter(tmp_path, run_size=2)
    sorter.add(SitemapEntry("https://example.com/"))
    list(sorter.iter_unique())
    with pytest.raises(SitemapError):
        sorter.add(SitemapEntry("https://example.com/x"))
    with pytest.raises(SitemapError):
        list(sorter.iter_unique())
    sorter.close()
    sorter.close()


def test_close_mid_iteration_removes_runs(tmp_path: Path) -> None:
    sorter = ExternalSorter(tmp_path, run_size=5)
    for entry in entries(50):
        sorter.add(entry)
    iterator = sorter.iter_unique()
    next(iterator)
    sorter.close()
    assert run_files(tmp_path) == []


def test_run_size_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="run_size"):
        ExternalSorter(tmp_path, run_size=0)

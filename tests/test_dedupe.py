"""Tests of sitemap_spider/sitemaps/runs/dedupe.py: finding the digests that several pages share."""

from __future__ import annotations

import collections
import contextlib
import random
from datetime import UTC, datetime
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sitemap_spider.sitemaps.runs import dedupe
from sitemap_spider.sitemaps.runs.dedupe import (
    read_lines,
    repeated_digests,
    repeated_digests_in,
    split_key,
    unique_lines_and_shared,
)
from sitemap_spider.sitemaps.runs.lines import digest_line
from sitemap_spider.sitemaps.runs.lines import encode_fields
from sitemap_spider.sitemaps.runs.run_files import sort_into_run
from sitemap_spider.sitemaps.runs.sorting import LineSorter
from tests.sitemap_check import as_instant


def digest_lines(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    # Digests that are prefixes of others or sort next to them, a digest that comes once.
    digests = ["a", "ab", "abc", "b", "b\x01", "b ", *(f"{n:x}" for n in range(200))]
    return [*(digest_line(rng.choice(digests)) for _ in range(count)), digest_line("zz-once")]


def expected(lines: list[str]) -> set[str]:
    return {line for line, count in collections.Counter(lines).items() if count > 1}


def kept_lines(lines: list[str]) -> list[str]:
    """The line kept of each loc of run lines, sorted (runs/latest.py, told another way): the
    latest instant; of lines naming it, or of undated lines, the smallest."""
    by_loc: dict[str, list[str]] = collections.defaultdict(list)
    for line in lines:
        by_loc[line.split("\t", 1)[0]].append(line)

    def instant(line: str) -> datetime:
        lastmod = line.split("\t")[1]
        return datetime.min.replace(tzinfo=UTC) if lastmod == "-" else as_instant(lastmod[1:])

    kept = []
    for group in by_loc.values():
        latest = max(map(instant, group))
        kept.append(min(line for line in group if instant(line) == latest))
    return sorted(kept)


def test_repeated_digests() -> None:
    lines = sorted(digest_lines(500, seed=1))
    found = repeated_digests([lines[:100], lines[100:]])
    assert found == expected(lines) and found
    assert "+zz-once" not in found
    assert repeated_digests([lines], limit=3) is None


@pytest.mark.parametrize("seed", range(5))
def test_two_halves_of_the_runs_find_what_one_pass_finds(tmp_path: Path, seed: int) -> None:
    lines = digest_lines(3000, seed)
    runs = [sort_into_run(lines[at : at + 700], tmp_path, unique=False)[0] for at in range(0, len(lines), 700)]
    split = split_key(runs)
    assert split is not None and split.startswith("+")
    names = [str(run) for run in runs]
    low = repeated_digests_in(names, None, split)
    high = repeated_digests_in(names, split, None)
    assert low is not None and high is not None
    assert not low & high
    assert low | high == expected(lines) == repeated_digests_in(names, None, None)
    assert all(digest < split for digest in low) and all(digest >= split for digest in high)


def test_no_split_key_without_digests(tmp_path: Path) -> None:
    assert split_key([]) is None
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    assert split_key([empty]) is None


@pytest.mark.parametrize("seed", range(6))
def test_digests_of_one_length_in_blocks_of_any_size(seed: int) -> None:
    # Hashes (one length), repeated within a block or across the boundary between two
    # blocks: what counting them finds.
    rng = random.Random(seed)
    digests = [f"{n:016x}" for n in rng.sample(range(1 << 40), 300)]
    lines = sorted(digest_line(rng.choice(digests)) for _ in range(400))
    blocks: list[list[str]] = []
    at = 0
    while at < len(lines):
        size = rng.choice([1, 2, 3, 7, 50, 200])
        blocks.append(lines[at : at + size])
        at += size
    found = repeated_digests(blocks)
    assert found == expected(lines)
    assert found and len(found) < len(set(lines))  # some digests repeated, not all
    unique = sorted(set(lines))  # no digest twice: nothing, whatever the blocks
    assert repeated_digests([unique[:5], unique[5:9], unique[9:]]) == set()


@pytest.mark.parametrize("slice_size", [1, 2, 5, 64])
def test_a_big_merged_block_compared_in_slices(monkeypatch: pytest.MonkeyPatch, slice_size: int) -> None:
    # Digests repeated within a slice and across slice boundaries, some two to nine times; a
    # repeated digest all in the last, partial slice; digests that come once; empty blocks.
    monkeypatch.setattr(dedupe, "_SCAN_SLICE", slice_size)
    rng = random.Random(slice_size)
    digests = [f"{n:012x}" for n in rng.sample(range(1 << 40), 60)]
    lines = [digest_line(rng.choice(digests[:30])) for _ in range(100)]
    for digest in digests[30:40]:
        lines += [digest_line(digest)] * rng.randrange(2, 10)
    lines += [digest_line(digest) for digest in digests[40:]]  # once each
    lines += [digest_line("~last")] * 2
    lines.sort()
    found = repeated_digests([lines[:7], [], lines[7:]])
    assert found == expected(lines)
    assert "+~last" in found and not found & {digest_line(digest) for digest in digests[40:]}


def test_the_limit_is_the_most_repeated_digests_returned() -> None:
    lines = sorted(digest_lines(500, seed=2))
    count = len(expected(lines))
    assert repeated_digests([lines], limit=count) == expected(lines)
    assert repeated_digests([lines], limit=count - 1) is None


@pytest.mark.parametrize(("workers", "fan_in", "digest_run_size"), [(0, 128, 13), (2, 128, 13), (2, 25, 1)])
def test_the_unique_lines_give_the_shared_digests_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int, fan_in: int, digest_run_size: int
) -> None:
    # Run lines of entries, some locs two or three times (with other lastmods): the kept line of
    # each loc (the latest lastmod) goes to the files, and a digest on two of those is shared; a
    # page listed twice is not. A line without a digest has none. With workers, two halves of the locs.
    rng = random.Random(5)  # a seed with more than 25 blocks of unique lines (digest runs)
    lastmods = [None, "2024-01-02", "2024-01-02T10:00:00Z", "2024-01-02T06:00:00-05:00", "2023-12-31"]
    lines = [
        encode_fields(
            f"https://example.com/{n % 240}", rng.choice(lastmods), None, None,
            rng.choice([None, f"d{n}", f"s{n % 7}"]),
        )  # fmt: skip
        for n in range(300)
    ]
    unique = kept_lines(lines)
    with_digests = [line.rsplit("\t", 1)[1] for line in unique if not line.endswith("\t-")]
    limits = {"room": dedupe.MAX_SHARED_DIGESTS, "no room": len(expected(with_digests)) - 1}
    # A fan-in of 25 and digest runs of one line: the entries' 24 runs are read in two halves,
    # and the 26 digest runs, more than are opened at once, go through a LineSorter.
    monkeypatch.setattr(dedupe, "MAX_MERGE_FAN_IN", fan_in)
    scans: list[int] = []
    scan = dedupe.repeated_digests_of_runs

    def counted_scan(runs: list[str], *args: Any) -> set[str] | None:
        scans.append(len(runs))
        return scan(runs, *args)

    monkeypatch.setattr(dedupe, "repeated_digests_of_runs", counted_scan)
    with ProcessPoolExecutor(max_workers=workers) if workers else contextlib.nullcontext() as pool:
        for name, limit in limits.items():
            monkeypatch.setattr(dedupe, "MAX_SHARED_DIGESTS", limit)
            sorter = LineSorter(tmp_path / name, run_size=13, unique=False)
            sorter.work_dir.mkdir()
            for line in lines:
                sorter.add_line(line)
            paths, repeats, shared = unique_lines_and_shared(sorter, digest_run_size, pool)
            assert repeats == len(lines) - len(unique) > 0
            assert list(read_lines(paths)) == unique
            assert len(paths) == (2 if workers else 1)
            if name == "room":
                assert shared == expected(with_digests) and shared
            else:
                assert shared is None
            sorter.close()
            assert sorted(p.name for p in sorter.work_dir.iterdir()) == sorted(p.name for p in paths)  # digest runs gone
    assert scans == ([] if fan_in == 25 else [scans[0]] * 2) and all(count <= fan_in for count in scans)

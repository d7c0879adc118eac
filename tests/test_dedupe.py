"""Tests of sitemap_spider/sitemaps/dedupe.py: finding the digests that several pages share."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from sitemap_spider.sitemaps import dedupe
from sitemap_spider.sitemaps.dedupe import digest_pair, shared_digests, shared_digests_in, split_key
from sitemap_spider.sitemaps.runs import sort_into_run


def pairs(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    # Digests that are prefixes of others, and one page listed twice under one digest.
    digests = ["a", "ab", "abc", "b", "b\x01", *(f"{n:x}" for n in range(200))]
    result = [digest_pair(rng.choice(digests), f"https://example.com/{rng.randrange(count)}") for _ in range(count)]
    return [*result, digest_pair("zz", "https://example.com/twice"), digest_pair("zz", "https://example.com/twice")]


def expected(lines: list[str]) -> set[str]:
    locs: dict[str, set[str]] = {}
    for line in lines:
        digest, _, loc = line.partition("\t")
        locs.setdefault(digest, set()).add(loc)
    return {digest for digest, found in locs.items() if len(found) > 1}


def test_shared_digests() -> None:
    lines = sorted(pairs(500, seed=1))
    found = shared_digests([lines[:100], lines[100:]])
    assert found == expected(lines)
    assert "+zz" not in found
    assert shared_digests([lines], limit=3) is None


@pytest.mark.parametrize("seed", range(5))
def test_two_halves_of_the_runs_find_what_one_pass_finds(tmp_path: Path, seed: int) -> None:
    lines = pairs(3000, seed)
    runs = [sort_into_run(lines[at : at + 700], tmp_path, unique=False)[0] for at in range(0, len(lines), 700)]
    split = split_key(runs)
    assert split is not None and split.endswith("\t")
    names = [str(run) for run in runs]
    low = shared_digests_in(names, None, split)
    high = shared_digests_in(names, split, None)
    assert low is not None and high is not None
    assert not low & high
    assert low | high == expected(lines) == shared_digests_in(names, None, None)
    assert all(digest + "\t" < split for digest in low) and all(digest + "\t" >= split for digest in high)


def test_no_split_key_without_pairs(tmp_path: Path) -> None:
    assert split_key([]) is None
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    assert split_key([empty]) is None


@pytest.mark.parametrize("seed", range(6))
def test_digests_of_one_length_in_blocks_of_any_size(seed: int) -> None:
    # Hashes (one length), pages listed twice, and digests shared within a block or across
    # the boundary between two blocks: what the pair-by-pair reading finds.
    rng = random.Random(seed)
    digests = [f"{n:016x}" for n in rng.sample(range(1 << 40), 300)]
    lines = [digest_pair(rng.choice(digests), f"https://example.com/{rng.randrange(400)}") for _ in range(600)]
    lines += rng.sample(lines, 100)  # pages listed twice
    lines.sort()
    blocks: list[list[str]] = []
    at = 0
    while at < len(lines):
        size = rng.choice([1, 2, 3, 7, 50, 200])
        blocks.append(lines[at : at + size])
        at += size
    found = shared_digests(blocks)
    assert found == expected(lines)
    assert found and len(found) < len(digests)  # some digests shared, not all
    unique = sorted(set(lines))  # no digest with two pages: nothing, whatever the blocks
    singles = [pair for index, pair in enumerate(unique) if index == 0 or pair[:17] != unique[index - 1][:17]]
    assert shared_digests([singles[:5], singles[5:9], singles[9:]]) == set()
    assert shared_digests([singles[:5], [singles[4]] * 3, singles[5:]]) == set()


def test_a_pair_without_its_tab_is_an_error_not_a_miscount() -> None:
    # Two columns only when every pair has exactly one tab; anything else is a bug upstream.
    lines = sorted([digest_pair("a", "https://example.com/1"), "+a https://example.com/2"])
    with pytest.raises(ValueError, match="tab"):
        shared_digests([lines])


@pytest.mark.parametrize("slice_size", [1, 2, 5, 64])
def test_a_big_merged_block_compared_in_slices(monkeypatch: pytest.MonkeyPatch, slice_size: int) -> None:
    # Digests shared within a slice and across slice boundaries; digests whose only pairs are
    # one page listed several times, wherever the boundaries fall; a shared digest whose pairs
    # are all in the last, partial slice; blocks that are empty.
    monkeypatch.setattr(dedupe, "_SCAN_SLICE", slice_size)
    rng = random.Random(slice_size)
    digests = [f"{n:012x}" for n in rng.sample(range(1 << 40), 40)]
    lines = [digest_pair(rng.choice(digests[:30]), f"https://example.com/{rng.randrange(90)}") for _ in range(300)]
    lines += rng.sample(lines, 30)
    for digest in digests[30:39]:  # one page, two to nine times
        lines += [digest_pair(digest, f"https://example.com/once-{digest}")] * rng.randrange(2, 10)
    lines += [digest_pair("~last", "https://example.com/a"), digest_pair("~last", "https://example.com/b")]
    lines.sort()
    found = shared_digests([lines[:7], [], lines[7:]])
    assert found == expected(lines)
    assert "+~last" in found and not found & {f"+{digest}" for digest in digests[30:]}


def test_the_limit_is_the_most_shared_digests_returned() -> None:
    lines = sorted(pairs(500, seed=2))
    count = len(expected(lines))
    assert shared_digests([lines], limit=count) == expected(lines)
    assert shared_digests([lines], limit=count - 1) is None

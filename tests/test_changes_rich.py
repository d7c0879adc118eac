"""What a publish changed, when a set or the set before it has extensions (rich entries, news files)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sitemap_spider.sitemaps.changes.compare import SetChanges, lastmod_moved
from sitemap_spider.sitemaps.entry import Alternate, News, RichEntry, SitemapEntry
from sitemap_spider.sitemaps.options import OutputOptions
from sitemap_spider.sitemaps.shards.set_builder import SitemapSetBuilder
from tests.sitemap_check import read_sitemap_set

BASE = "https://example.com/"
NOW = datetime.now(UTC).replace(microsecond=0)
Pages = dict[str, str | None]


def entry(path: str, lastmod: str | None, rich: bool) -> SitemapEntry:
    """A page; ``rich``: with what a rich set may give it, by its number (images, an article, a pair of languages)."""
    loc = BASE + path
    number = int(path.rsplit("/", 1)[-1][:5])
    if not rich or number % 3 == 2:
        return SitemapEntry(loc, lastmod, "daily" if number % 5 == 0 else None)
    images = (f"https://example.com/img/{number}.jpg",) if number % 3 == 0 else ()
    news = News("The Daily", "en", (NOW - timedelta(hours=3)).isoformat(), f"Story {number}") if number % 10 == 4 else None
    twin = f"{BASE}{path}x" if not path.endswith("x") else loc[:-1]
    alternates = (Alternate("en", loc), Alternate("fr", twin)) if number % 7 == 0 else ()
    return RichEntry(loc, lastmod, None, 0.5 if number % 2 else None, None, alternates, images, (), news)


def publish(output: Path, pages: Pages, rich: bool, **options: object) -> SetChanges:
    with SitemapSetBuilder(OutputOptions(output, BASE, **options)) as builder:  # type: ignore[arg-type]
        for path, lastmod in pages.items():
            builder.add(entry(path, lastmod, rich))
        result = builder.publish()
    read_sitemap_set(output, BASE, [])
    assert result.changes is not None
    return result.changes


def listed(changes: SetChanges) -> dict[str, list[str]]:
    return {kind: list(changes.urls(kind)) for kind in ("added", "changed", "removed")}


def expected(before: Pages, after: Pages) -> dict[str, list[str]]:
    return {
        "added": sorted(BASE + path for path in set(after) - set(before)),
        "changed": sorted(BASE + path for path in set(after) & set(before) if lastmod_moved(before[path], after[path])),
        "removed": sorted(BASE + path for path in set(before) - set(after)),
    }


def pages(seed: int) -> tuple[Pages, Pages]:
    rng = random.Random(seed)
    before: Pages = {f"p/{i:05d}": rng.choice([None, "2024-01-01"]) for i in range(0, 3_000, 2)}
    # Twins of the pages with alternates: each names the other.
    before |= {f"{path}x": lastmod for path, lastmod in before.items() if int(path[2:]) % 7 == 0}
    after = {path: lastmod for path, lastmod in before.items() if rng.random() > 0.03}
    for path in rng.sample(sorted(after), 60):
        after[path] = rng.choice([None, "2024-01-01", "2024-02-02T10:00:00+02:00"])
    after |= {f"p/{i:05d}": "2024-03-03" for i in rng.sample(range(1, 3_000, 2), 40)}
    return before, after


@pytest.mark.parametrize(("rich_before", "rich_after"), [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("gzip_shards", [False, True])
def test_rich_sets_compare_by_loc_and_lastmod(
    tmp_path: Path, rich_before: bool, rich_after: bool, gzip_shards: bool
) -> None:
    before, after = pages(1)
    publish(tmp_path, before, rich_before, max_urls=400, gzip=gzip_shards).close()
    if rich_before:
        assert list(tmp_path.glob("sitemap-news-*")), "the previous set has news files"
    changes = publish(tmp_path, after, rich_after, max_urls=400, gzip=gzip_shards)
    assert changes.compared, changes.previous
    want = expected(before, after)
    assert all(want.values())
    assert listed(changes) == want
    changes.close()


def test_an_unchanged_rich_set_changes_nothing(tmp_path: Path) -> None:
    before, _ = pages(2)
    publish(tmp_path, before, True, max_urls=400).close()
    same = publish(tmp_path, before, True, max_urls=400)
    assert same.compared and same.counts == {"added": 0, "changed": 0, "removed": 0}, same.describe()
    same.close()

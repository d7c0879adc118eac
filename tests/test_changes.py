"""What a publish changed since the previous set (sitemaps/changes/compare.py and previous.py), through SitemapSetBuilder."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from sitemap_spider.sitemaps.changes.compare import FIRST_SET, SetChanges, lastmod_moved
from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.options import OutputOptions
from sitemap_spider.sitemaps.shards.set_builder import SitemapSetBuilder
from tests.sitemap_check import read_sitemap_set

BASE = "https://example.com/"


def entries(pages: dict[str, str | None]) -> list[SitemapEntry]:
    return [SitemapEntry(BASE + path, lastmod=lastmod) for path, lastmod in pages.items()]


def publish(output: Path, pages: dict[str, str | None], **options: object) -> SetChanges:
    with SitemapSetBuilder(OutputOptions(output, BASE, **options)) as builder:  # type: ignore[arg-type]
        for entry in entries(pages):
            builder.add(entry)
        result = builder.publish()
    read_sitemap_set(output, BASE)
    assert result.changes is not None
    return result.changes


def listed(changes: SetChanges) -> dict[str, list[str]]:
    return {kind: list(changes.urls(kind)) for kind in ("added", "changed", "removed")}


def many(count: int, lastmod: str | None = "2024-05-01") -> dict[str, str | None]:
    return {f"p/{i:06d}?a=1&b='{i}'": lastmod for i in range(count)}


def test_first_set_has_no_comparison(tmp_path: Path) -> None:
    changes = publish(tmp_path, many(10))
    assert changes.previous == FIRST_SET and not changes.compared
    assert changes.counts == {"added": 0, "changed": 0, "removed": 0}
    assert changes.describe() == "none (first set)"
    changes.close()


@pytest.mark.parametrize("gzip_shards", [False, True])
def test_added_changed_removed_across_shards(tmp_path: Path, gzip_shards: bool) -> None:
    before = many(3_000)
    publish(tmp_path, before, max_urls=700, gzip=gzip_shards).close()
    after = dict(before)
    del after["p/000000?a=1&b='0'"], after["p/001500?a=1&b='1500'"], after["p/002999?a=1&b='2999'"]
    after["p/000700?a=1&b='700'"] = "2024-06-01T10:00:00+02:00"  # moved
    after["p/000701?a=1&b='701'"] = "2024-05-01T00:00:00Z"  # the same instant, another spelling
    after["p/000702?a=1&b='702'"] = None  # dropped: says nothing new
    after["a/first"] = after["p/001500x"] = after["q/last"] = "2024-07-01"
    changes = publish(tmp_path, after, max_urls=700, gzip=gzip_shards)
    assert changes.compared
    assert listed(changes) == {
        "added": [BASE + "a/first", BASE + "p/001500x", BASE + "q/last"],
        "changed": [BASE + "p/000700?a=1&b='700'"],
        "removed": [BASE + "p/000000?a=1&b='0'", BASE + "p/001500?a=1&b='1500'", BASE + "p/002999?a=1&b='2999'"],
    }
    assert changes.describe() == "3 added, 1 changed, 3 removed"
    changes.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scattered_changes_match_a_plain_comparison(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    before: dict[str, str | None] = {f"p/{i:05d}": rng.choice([None, "2024-01-01"]) for i in range(0, 20_000, 2)}
    publish(tmp_path, before, max_urls=3_000).close()
    after = {path: lastmod for path, lastmod in before.items() if rng.random() > 0.02}
    for path in rng.sample(sorted(after), 150):
        after[path] = rng.choice([None, "2024-01-01", "2024-02-02"])
    after |= {f"p/{i:05d}": None for i in rng.sample(range(1, 20_000, 2), 120)}
    changes = publish(tmp_path, after, max_urls=3_000)
    expected = {
        "added": sorted(BASE + path for path in set(after) - set(before)),
        "changed": sorted(
            BASE + path for path in set(after) & set(before) if lastmod_moved(before[path], after[path])
        ),
        "removed": sorted(BASE + path for path in set(before) - set(after)),
    }
    assert listed(changes) == expected
    assert all(expected.values())
    changes.close()


def test_a_page_gaining_a_lastmod_is_changed(tmp_path: Path) -> None:
    publish(tmp_path, {"a": None, "b": None}).close()
    changes = publish(tmp_path, {"a": "2024-01-02", "b": None})
    assert listed(changes) == {"added": [], "changed": [BASE + "a"], "removed": []}
    changes.close()


def test_unchanged_set_and_everything_replaced(tmp_path: Path) -> None:
    publish(tmp_path, many(500)).close()
    same = publish(tmp_path, many(500))
    assert same.compared and same.counts == {"added": 0, "changed": 0, "removed": 0}
    same.close()
    other = publish(tmp_path, {"z/only": None})
    assert other.counts == {"added": 1, "changed": 0, "removed": 500}
    assert list(other.urls("removed")) == [BASE + path for path in sorted(many(500))]
    other.close()


def test_previous_set_of_another_generator_is_parsed(tmp_path: Path) -> None:
    # Pretty-printed, a prefix for the namespace, gzipped, a CDATA loc: not this package's layout.
    shard = (
        '<?xml version="1.0"?>\n<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        "  <s:url>\n    <s:loc>https://example.com/a</s:loc>\n    <s:lastmod>2024-01-01</s:lastmod>\n  </s:url>\n"
        "  <s:url><s:loc><![CDATA[https://example.com/b?x=1&y=2]]></s:loc></s:url>\n"
        "  <s:url><s:loc>https://example.com/c</s:loc><s:lastmod>2024-01-01</s:lastmod></s:url>\n"
        "</s:urlset>\n"
    )
    (tmp_path / "sitemap-00001.xml.gz").write_bytes(gzip.compress(shard.encode()))
    (tmp_path / "sitemap_index.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<sitemap><loc>https://cdn.example.com/maps/sitemap-00001.xml.gz</loc></sitemap></sitemapindex>\n"
    )
    changes = publish(tmp_path, {"a": "2024-01-01", "b?x=1&y=2": None, "c": "2024-02-01", "d": None})
    assert listed(changes) == {"added": [BASE + "d"], "changed": [BASE + "c"], "removed": []}
    changes.close()


@pytest.mark.parametrize(
    ("index", "why"),
    [
        ("<sitemap><loc>https://example.com/other.xml</loc></sitemap>", "not a sitemap file of"),
        ("<sitemap><loc>https://example.com/sitemap-00009.xml</loc></sitemap>", "not a sitemap file of"),
        ("<sitemap><loc>https://example.com/sitemap-00001.xml</loc>", "cannot read"),
        ("<sitemap><loc>https://example.com/sitemap-00002.xml</loc></sitemap>", "not in loc order"),
    ],
)
def test_unreadable_previous_set_gives_no_comparison(tmp_path: Path, index: str, why: str) -> None:
    (tmp_path / "sitemap-00001.xml").write_text("<urlset/>")
    # This package's layout, but out of order: the walk notices it.
    (tmp_path / "sitemap-00002.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        "<url><loc>https://example.com/b</loc></url>\n<url><loc>https://example.com/a</loc></url>\n</urlset>\n"
    )
    (tmp_path / "sitemap_index.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{index}</sitemapindex>\n"
    )
    changes = publish(tmp_path, {"a": None, "c": None})
    assert not changes.compared
    assert changes.previous is not None and why in changes.previous, changes.previous
    assert changes.counts == {"added": 0, "changed": 0, "removed": 0}
    assert listed(changes) == {"added": [], "changed": [], "removed": []}
    changes.close()


@pytest.mark.parametrize(
    ("old", "new", "moved"),
    [
        (None, None, False),
        (None, "2024-01-01", True),
        ("2024-01-01", None, False),
        ("2024-01-01", "2024-01-01T00:00:00Z", False),
        ("2024-01-01T02:00:00+02:00", "2024-01-01T00:00:00+00:00", False),
        ("2024-01-01", "2024-01-02", True),
        ("not a date", "2024-01-02", True),
    ],
)
def test_lastmod_moved(old: str | None, new: str | None, moved: bool) -> None:
    assert lastmod_moved(old, new) is moved

"""Tests of sitemap_spider/sitemaps/shards/storage.py: staging, atomic publish, stale shards."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sitemap_spider.sitemaps.entry import SitemapEntry
from sitemap_spider.sitemaps.errors import SitemapError, SitemapValidationError
from sitemap_spider.sitemaps.shards.storage import SitemapStorage
from sitemap_spider.sitemaps.xml.validate import validate_file
from sitemap_spider.sitemaps.shards.writer import ShardInfo, ShardWriter, write_index
from tests.crawl_fixtures import file_identities as identities, tree_files
from tests.sitemap_check import read_sitemap_set

BASE = "https://example.com/"
INDEX = "sitemap_index.xml"


def stage(
    storage: SitemapStorage, count: int, *, max_urls: int, gzip: bool = False, prefix: str = "p"
) -> tuple[Path, list[ShardInfo]]:
    return stage_paths(storage, [f"{prefix}/{i:04d}" for i in range(count)], max_urls=max_urls, gzip=gzip)


def stage_paths(
    storage: SitemapStorage, paths: list[str], *, max_urls: int, gzip: bool = False
) -> tuple[Path, list[ShardInfo]]:
    """A set of the sorted ``paths`` under BASE, staged, not published."""
    staging = storage.staging_dir()
    writer = ShardWriter(staging, max_urls=max_urls, max_bytes=52_428_800, gzip=gzip)
    for path in paths:
        writer.write(SitemapEntry(BASE + path))
    shards = writer.close()
    write_index(staging / INDEX, shards, BASE)
    return staging, shards


def publish(
    storage: SitemapStorage, count: int, *, max_urls: int, gzip: bool = False, prefix: str = "p"
) -> None:
    staging, shards = stage(storage, count, max_urls=max_urls, gzip=gzip, prefix=prefix)
    storage.publish(staging, [shard.name for shard in shards], INDEX)


def test_creates_output_dir_and_staging_beside_it(tmp_path: Path) -> None:
    storage = SitemapStorage(tmp_path / "a" / "b")
    staging = storage.staging_dir()
    assert staging.parent == tmp_path / "a" / "b"
    assert staging.name.startswith(".sitemap-staging-")
    assert staging != storage.staging_dir()
    storage.discard(staging)
    assert not staging.exists()
    storage.discard(staging)  # already gone: fine


def test_publish_moves_files_and_removes_staging(tmp_path: Path) -> None:
    storage = SitemapStorage(tmp_path)
    publish(storage, 5, max_urls=2)
    urls = read_sitemap_set(tmp_path, BASE)
    assert [url["loc"] for url in urls] == [f"{BASE}p/{i:04d}" for i in range(5)]
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "sitemap-00001.xml",
        "sitemap-00002.xml",
        "sitemap-00003.xml",
        INDEX,
    ]


def test_publish_replaces_and_removes_stale_shards(tmp_path: Path) -> None:
    storage = SitemapStorage(tmp_path)
    publish(storage, 7, max_urls=2)
    (tmp_path / "robots.txt").write_text("Sitemap: https://example.com/sitemap_index.xml\n")
    (tmp_path / "sitemap-extra.xml").write_text("not ours")
    (tmp_path / "sitemap-1.xml").write_text("not ours either")
    publish(storage, 3, max_urls=2, prefix="q")
    names = sorted(path.name for path in tmp_path.iterdir())
    # Files that do not follow our shard naming are never touched.
    assert names == [
        "robots.txt",
        "sitemap-00001.xml",
        "sitemap-00002.xml",
        "sitemap-1.xml",
        "sitemap-extra.xml",
        INDEX,
    ]
    (tmp_path / "sitemap-extra.xml").unlink()
    (tmp_path / "sitemap-1.xml").unlink()
    urls = read_sitemap_set(tmp_path, BASE)
    assert [url["loc"] for url in urls] == [f"{BASE}q/{i:04d}" for i in range(3)]


def test_switching_to_gzip_removes_the_plain_files(tmp_path: Path) -> None:
    storage = SitemapStorage(tmp_path)
    publish(storage, 4, max_urls=2)
    publish(storage, 4, max_urls=2, gzip=True)
    urls = read_sitemap_set(tmp_path, BASE)
    assert len(urls) == 4
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "sitemap-00001.xml.gz",
        "sitemap-00002.xml.gz",
        INDEX,
    ]


@pytest.mark.parametrize("gzip", [False, True])
def test_files_of_the_same_bytes_are_left_in_place(tmp_path: Path, gzip: bool) -> None:
    storage = SitemapStorage(tmp_path)
    paths = [f"p/{i:04d}" for i in range(5)]
    staging, shards = stage_paths(storage, paths, max_urls=2, gzip=gzip)
    names = [shard.name for shard in shards]
    assert storage.publish(staging, names, INDEX) == [*names, INDEX]
    first = identities(tmp_path)

    staging, shards = stage_paths(storage, paths, max_urls=2, gzip=gzip)
    assert storage.publish(staging, names, INDEX) == []
    assert identities(tmp_path) == first
    assert not staging.exists()

    # Another URL in the second shard: that file alone changes. The index lists the same files
    # with the same (no) lastmods, so its bytes and it stay too.
    paths[2] = "p/0002-new"
    staging, shards = stage_paths(storage, paths, max_urls=2, gzip=gzip)
    assert storage.publish(staging, names, INDEX) == [names[1]]
    now = identities(tmp_path)
    assert {name for name in now if now[name] != first[name]} == {names[1]}
    assert [url["loc"] for url in read_sitemap_set(tmp_path, BASE)] == [BASE + path for path in paths]


def test_a_published_file_of_the_same_size_but_other_bytes_is_replaced(tmp_path: Path) -> None:
    storage = SitemapStorage(tmp_path)
    publish(storage, 5, max_urls=2)
    shard = tmp_path / "sitemap-00001.xml"
    good = shard.read_bytes()
    with open(shard, "r+b") as out:  # edited in place: same size, same inode
        out.seek(len(good) - 40)
        out.write(b"X")
    staging, shards = stage(storage, 5, max_urls=2)
    assert storage.publish(staging, [shard.name for shard in shards], INDEX) == [shard.name]
    assert shard.read_bytes() == good


def test_a_link_to_the_same_bytes_is_replaced_by_the_file(tmp_path: Path) -> None:
    storage = SitemapStorage(tmp_path / "out")
    publish(storage, 5, max_urls=2)
    shard = tmp_path / "out" / "sitemap-00002.xml"
    (tmp_path / "copy.xml").write_bytes(shard.read_bytes())
    shard.unlink()
    shard.symlink_to(tmp_path / "copy.xml")
    staging, shards = stage(storage, 5, max_urls=2)
    assert storage.publish(staging, [shard.name for shard in shards], INDEX) == [shard.name]
    assert not shard.is_symlink()
    assert len(read_sitemap_set(tmp_path / "out", BASE)) == 5


def test_publish_refuses_a_missing_file_before_moving_anything(tmp_path: Path) -> None:
    storage = SitemapStorage(tmp_path)
    publish(storage, 5, max_urls=2)
    before = tree_files(tmp_path)
    staging, shards = stage(storage, 9, max_urls=2, prefix="new")
    (staging / shards[-1].name).unlink()  # the last shard never got written
    with pytest.raises(SitemapError, match="missing"):
        storage.publish(staging, [shard.name for shard in shards], INDEX)
    storage.discard(staging)
    assert tree_files(tmp_path) == before
    read_sitemap_set(tmp_path, BASE)


def test_invalid_staged_file_is_caught_before_publish(tmp_path: Path) -> None:
    storage = SitemapStorage(tmp_path)
    publish(storage, 5, max_urls=2)
    before = tree_files(tmp_path)
    staging, shards = stage(storage, 3, max_urls=2, prefix="new")
    broken = staging / shards[0].name
    broken.write_bytes(broken.read_bytes().replace(b"</url>", b"<lastmod>yesterday</lastmod></url>"))
    with pytest.raises(SitemapValidationError, match="lastmod"):
        for shard in shards:
            validate_file(staging / shard.name)
    storage.discard(staging)
    assert tree_files(tmp_path) == before


@pytest.mark.parametrize("name", ["../evil.xml", "sub/x.xml", ".hidden"])
def test_publish_refuses_names_that_are_not_plain_files(tmp_path: Path, name: str) -> None:
    storage = SitemapStorage(tmp_path)
    staging, _shards = stage(storage, 1, max_urls=2)
    with pytest.raises(SitemapError, match="plain file name"):
        storage.publish(staging, [name], INDEX)
    storage.discard(staging)


def test_only_own_staging_dirs_can_be_removed(tmp_path: Path) -> None:
    storage = SitemapStorage(tmp_path / "out")
    victim = tmp_path / "precious"
    victim.mkdir()
    with pytest.raises(SitemapError, match="not a staging directory"):
        storage.discard(victim)
    elsewhere = SitemapStorage(tmp_path / "other").staging_dir()
    with pytest.raises(SitemapError, match="not a staging directory"):
        storage.discard(elsewhere)
    assert victim.exists() and elsewhere.exists()


def test_staging_left_by_a_dead_process_is_removed_and_a_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    abandoned = tmp_path / f".sitemap-staging-{dead.stdout.strip()}-abc"
    (abandoned / "sort-runs").mkdir(parents=True)
    live = tmp_path / f".sitemap-staging-{os.getppid()}-xyz"
    live.mkdir()
    storage = SitemapStorage(tmp_path)
    staging = storage.staging_dir()
    assert not abandoned.exists()
    assert live.is_dir() and staging.is_dir()
    assert staging.name.startswith(f".sitemap-staging-{os.getpid()}-")

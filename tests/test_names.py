"""The file names of a sitemap set (sitemaps/names.py)."""

from __future__ import annotations

import pytest

from sitemap_spider.sitemaps.names import INDEX_NAME, NEWS_PREFIX, SHARD_FILE_PATTERN, is_news_file, shard_name


def test_shard_names() -> None:
    assert shard_name(1, gzip=False) == "sitemap-00001.xml"
    assert shard_name(50_000, gzip=True) == "sitemap-50000.xml.gz"
    assert shard_name(3, gzip=False, prefix=NEWS_PREFIX) == "sitemap-news-00003.xml"


@pytest.mark.parametrize(
    ("name", "of_the_set"),
    [
        ("sitemap-00001.xml", True),
        ("sitemap-00001.xml.gz", True),
        ("sitemap-news-00002.xml", True),
        ("sitemap-news-00002.xml.gz", True),
        (INDEX_NAME, False),  # the index is named on its own
        ("sitemap-1.xml", False),
        ("sitemap-00001.xml.bak", False),
        ("robots.txt", False),
    ],
)
def test_which_files_belong_to_a_set(name: str, of_the_set: bool) -> None:
    assert bool(SHARD_FILE_PATTERN.match(name)) is of_the_set


def test_news_files_are_told_from_shards() -> None:
    assert is_news_file(shard_name(1, gzip=True, prefix=NEWS_PREFIX))
    assert not is_news_file(shard_name(1, gzip=True))

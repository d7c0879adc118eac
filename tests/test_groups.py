"""Sitemaps by section (SITEMAP_GROUPS, sitemaps/shards/groups.py): real crawls of a local site.

Each group's URLs go into a series of files of its own, sharded at the limits; the rest stay in
``sitemap-00001.xml``; the index lists every file with the newest lastmod of its URLs (checked by
``read_sitemap_set``, which also validates every file and reads it back with Scrapy's reader);
the summary and the stats count URLs per group; and a URL that moves to another group between
two crawls is neither removed nor added.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import Settings

from sitemap_spider.config import ConfigError
from sitemap_spider.config_parsing import read_groups
from sitemap_spider.sitemaps import SitemapGroup
from sitemap_spider.sitemaps.names import SHARD_FILE_PATTERN, is_news_file
from sitemap_spider.sitemaps.shards.groups import group_of, group_of_file
from tests.crawl_fixtures import run_crawl
from tests.site_server import HTML, SiteServer, html_page, links
from tests.site_spec import Route
from tests.sitemap_check import read_sitemap_set, read_urlset

PAGES = {
    "/": "Mon, 02 Nov 2026 10:00:00 GMT",
    "/about": "Tue, 03 Nov 2026 10:00:00 GMT",
    "/blog/1": "Wed, 04 Nov 2026 10:00:00 GMT",
    "/blog/2": "Thu, 05 Nov 2026 10:00:00 GMT",
    "/blog/3": "Fri, 06 Nov 2026 10:00:00 GMT",
    "/docs/a": "Sat, 07 Nov 2026 10:00:00 GMT",
    "/docs/b?v=2&lang=en": "Sun, 08 Nov 2026 10:00:00 GMT",
}
GROUPS = [{"group": "posts", "prefix": "/blog/"}, {"group": "docs", "pattern": r"/docs/"}]


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    routes = {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nDisallow:\n"),
    }
    for path, modified in PAGES.items():
        body = html_page(path, links(*[p for p in PAGES if p != path]) if path == "/" else links("/"))
        routes[path] = Route(headers=(("Content-Type", HTML), ("Last-Modified", modified)), body=body)
    with SiteServer() as server:
        server.routes = routes
        yield server


def _crawl(site: SiteServer, out: Path, groups: list[dict[str, str]]) -> tuple[dict[str, list[str]], str, Any]:
    settings = {"SITEMAP_GROUPS": json.dumps(groups), "SITEMAP_MAX_URLS": "2", "SITEMAP_HISTORY": "off"}
    result = run_crawl(site.origin + "/", out, settings=settings)
    assert result.returncode == 0, result.describe()
    origin = site.origin
    read_sitemap_set(result.output_dir, origin + "/")  # the index, its lastmods, every file valid
    files = {}
    for path in sorted(result.output_dir.glob("sitemap-*.xml")):
        files[path.name] = [url["loc"][len(origin) :] for url in read_urlset(path)]
    assert result.report is not None
    return files, result.stderr, result.report


def test_each_group_has_its_own_series_and_a_move_between_groups_changes_nothing(
    site: SiteServer, tmp_path: Path
) -> None:
    files, stderr, report = _crawl(site, tmp_path, GROUPS)
    stats = report["stats"]
    assert files == {
        "sitemap-00001.xml": ["/", "/about"],
        "sitemap-docs-00001.xml": ["/docs/a", "/docs/b?v=2&lang=en"],
        "sitemap-posts-00001.xml": ["/blog/1", "/blog/2"],
        "sitemap-posts-00002.xml": ["/blog/3"],
    }
    assert "by group: posts 3, docs 2, other 2" in stderr
    assert stats["sitemap/group_urls/posts"] == 3
    assert stats["sitemap/group_urls/docs"] == 2
    assert stats["sitemap/group_urls/other"] == 2
    assert report["groups"] == {"posts": 3, "docs": 2, "other": 2}  # the report's summary

    # The docs move into the plain series, the posts stay: the same URLs, the same lastmods.
    files, stderr, _ = _crawl(site, tmp_path, GROUPS[:1])
    assert files == {
        "sitemap-00001.xml": ["/", "/about"],
        "sitemap-00002.xml": ["/docs/a", "/docs/b?v=2&lang=en"],
        "sitemap-posts-00001.xml": ["/blog/1", "/blog/2"],
        "sitemap-posts-00002.xml": ["/blog/3"],
    }
    assert "changed since the previous set: 0 added, 0 changed, 0 removed" in stderr
    # And back to one series, from a set in groups.
    files, stderr, _ = _crawl(site, tmp_path, [])
    assert list(files) == ["sitemap-00001.xml", "sitemap-00002.xml", "sitemap-00003.xml", "sitemap-00004.xml"]
    assert "changed since the previous set: 0 added, 0 changed, 0 removed" in stderr
    assert "by group" not in stderr


def test_group_of_takes_the_first_matching_rule() -> None:
    groups = (
        SitemapGroup("posts", prefix="/blog/"),
        SitemapGroup("all-blog", pattern=re.compile(r"blog")),
    )
    assert group_of(groups, "https://example.com/blog/1") == "posts"
    assert group_of(groups, "https://example.com/myblog") == "all-blog"
    assert group_of(groups, "https://example.com/blog") == "all-blog"  # not under the prefix "/blog/"
    assert group_of(groups, "https://example.com/") is None
    assert group_of_file("sitemap-posts-00001.xml.gz") == "posts"
    assert group_of_file("sitemap-00001.xml") is None
    assert group_of_file("sitemap-news-00001.xml") is None
    assert SHARD_FILE_PATTERN.match("sitemap-all-blog-00003.xml.gz")
    # A group whose name starts with "news-" is a group, not the news files.
    assert group_of_file("sitemap-news-archive-00001.xml") == "news-archive"
    assert not is_news_file("sitemap-news-archive-00001.xml")
    assert is_news_file("sitemap-news-00002.xml.gz")


@pytest.mark.parametrize(
    ("value", "where", "message"),
    [
        ('[{"group": "Posts", "prefix": "/blog/"}]', "SITEMAP_GROUPS[0]", "lower-case"),
        ('[{"group": "news", "prefix": "/news/"}]', "SITEMAP_GROUPS[0]", "reserved"),
        ('[{"group": "other", "prefix": "/o/"}]', "SITEMAP_GROUPS[0]", "reserved"),
        ('[{"group": "2024", "prefix": "/2024/"}]', "SITEMAP_GROUPS[0]", "reserved"),
        ('[{"group": "posts"}]', "SITEMAP_GROUPS[0]", "either a 'prefix'"),
        ('[{"group": "posts", "prefix": "/a/", "pattern": "b"}]', "SITEMAP_GROUPS[0]", "either a 'prefix'"),
        ('[{"group": "posts", "prefix": "blog/"}]', "SITEMAP_GROUPS[0]", "starting with '/'"),
        ('[{"group": "posts", "pattern": "("}]', "SITEMAP_GROUPS[0]", ""),
        ('[{"group": "posts", "prefix": "/a/", "where": 1}]', "SITEMAP_GROUPS[0]", "unknown keys"),
        (
            '[{"group": "posts", "prefix": "/a/"}, {"group": "posts", "prefix": "/b/"}]',
            "SITEMAP_GROUPS[1]",
            "earlier rule",
        ),
        ('{"group": "posts"}', "SITEMAP_GROUPS", "must be a list"),
    ],
)
def test_a_bad_group_rule_names_the_setting(value: str, where: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        read_groups(Settings({"SITEMAP_GROUPS": value}), "SITEMAP_GROUPS")
    assert raised.value.name == where
    assert message in str(raised.value)


def test_a_prefix_in_raw_utf8_or_with_spaces_matches_the_locs_that_spell_it_encoded() -> None:
    """A loc's path is percent-encoded (the crawl's normal form, and scrapy publish's for an IRI):
    a prefix written as the site's readers see it, ``/博客/``, used to match no URL at all."""
    value = '[{"group": "blog", "prefix": "/博客/"}, {"group": "docs", "prefix": "/my docs/"}]'
    groups = read_groups(Settings({"SITEMAP_GROUPS": value}), "SITEMAP_GROUPS")
    assert group_of(groups, "https://example.com/%E5%8D%9A%E5%AE%A2/a") == "blog"
    assert group_of(groups, "https://example.com/my%20docs/b") == "docs"
    assert group_of(groups, "https://example.com/%E5%8D%9A/") is None
    # A prefix a loc can hold is compared as given, escapes and all.
    value = '[{"group": "users", "prefix": "/%7euser/"}]'
    groups = read_groups(Settings({"SITEMAP_GROUPS": value}), "SITEMAP_GROUPS")
    assert group_of(groups, "https://example.com/%7euser/a") == "users"

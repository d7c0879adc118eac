"""Where and how a sitemap set is written: the options every step of a publish reads."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sitemap_spider.sitemaps.limits import MAX_BYTES_PER_SITEMAP, MAX_URLS_PER_SITEMAP
from sitemap_spider.sitemaps.names import (
    INDEX_NAME,
    LLMS_TXT_NAME,
    SHARD_FILE_PATTERN,
    STYLESHEET_NAME,
    shard_name,
)
from sitemap_spider.sitemaps.rules import check_loc
from sitemap_spider.sitemaps.xml.stylesheet import stylesheet_document
from sitemap_spider.sitemaps.xml.elements import URLSET_CLOSE, URLSET_OPEN, with_stylesheet

if TYPE_CHECKING:
    from sitemap_spider.sitemaps.shards.bucket import BucketTarget
    from sitemap_spider.sitemaps.shards.groups import SitemapGroup


@dataclass(frozen=True)
class OutputOptions:
    """Where and how a sitemap set is written; checked on construction."""

    output_dir: Path
    base_url: str  # absolute http(s) URL ending with "/"; index <loc> = base_url + file name
    max_urls: int = MAX_URLS_PER_SITEMAP
    max_bytes: int = MAX_BYTES_PER_SITEMAP
    gzip: bool = False
    validate: bool = True  # validate every file against the XSDs before publishing
    #: A set listing fewer than this share of the previous set's URLs is not published (0: any set is).
    max_shrink: float = 0.0
    sort_run_size: int = 100_000
    #: Files published with the set, beside the index: (plain file name, content).
    extra_files: tuple[tuple[str, bytes], ...] = ()
    #: SITEMAP_GROUPS: each group's URLs in a series of their own (shards/groups.py); (): one series.
    groups: tuple[SitemapGroup, ...] = ()
    #: SITEMAP_XSL: every file names the stylesheet published beside the set (names.STYLESHEET_NAME).
    stylesheet: bool = False
    #: SITEMAP_LLMS_TXT: llms.txt listing at most this many pages of the set (shards/llms_txt.py); 0: none.
    llms_txt: int = 0
    #: SITEMAP_OUTPUT_URI: the bucket the set is published to, from ``output_dir`` (shards/bucket.py).
    bucket: BucketTarget | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str) or not self.base_url.endswith("/"):
            raise ValueError(f"base_url must be an absolute URL ending with '/': {self.base_url!r}")
        try:
            check_loc(self.base_url + shard_name(MAX_URLS_PER_SITEMAP, gzip=True))
        except ValueError as exc:
            raise ValueError(f"base_url {self.base_url!r} cannot prefix sitemap URLs: {exc}") from exc
        if not 1 <= self.max_urls <= MAX_URLS_PER_SITEMAP:
            raise ValueError(f"max_urls must be 1-{MAX_URLS_PER_SITEMAP}, not {self.max_urls}")
        smallest = len(with_stylesheet(URLSET_OPEN, self.stylesheet)) + len(URLSET_CLOSE) + 1
        if not smallest <= self.max_bytes <= MAX_BYTES_PER_SITEMAP:
            raise ValueError(f"max_bytes must be {smallest}-{MAX_BYTES_PER_SITEMAP}, not {self.max_bytes}")
        if self.llms_txt < 0:
            raise ValueError(f"llms_txt must be 0 (none) or more, not {self.llms_txt}")
        if not 0.0 <= self.max_shrink <= 1.0:
            raise ValueError(f"max_shrink must be 0-1, not {self.max_shrink}")
        if self.sort_run_size < 1:
            raise ValueError(f"sort_run_size must be at least 1, not {self.sort_run_size}")
        names = [group.name for group in self.groups]
        if len(set(names)) != len(names):
            raise ValueError(f"groups must have names of their own: {names}")
        for name, _ in self.extra_files:
            if (
                Path(name).name != name
                or name.startswith(".")
                or name in (INDEX_NAME, STYLESHEET_NAME, LLMS_TXT_NAME)
                or SHARD_FILE_PATTERN.match(name)
            ):
                raise ValueError(f"extra file {name!r} must be a plain file name of its own")

    def published_files(self) -> tuple[tuple[str, bytes], ...]:
        """The files published beside the index: ``extra_files``, and the stylesheet when on."""
        if not self.stylesheet:
            return self.extra_files
        return (*self.extra_files, (STYLESHEET_NAME, stylesheet_document()))

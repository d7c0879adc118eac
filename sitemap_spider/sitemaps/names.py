"""Every name a sitemap set gives its files: the index, the shards, the news files, the work files.

One place, so that the writer that makes a file, the storage that moves it, the reader of the
previous set and the option checks all agree on which names belong to a set.
"""

from __future__ import annotations

import re
from typing import Final

#: The sitemap index of a set, listing every other sitemap file of it.
INDEX_NAME: Final = "sitemap_index.xml"
#: The shards: ``sitemap-00001.xml`` (``.xml.gz``), ...
SHARD_PREFIX: Final = "sitemap"
#: The news files of a rich set: ``sitemap-news-00001.xml``, ...
NEWS_PREFIX: Final = "sitemap-news"
#: Every sitemap file of a set but its index (shards, the shards of a group (SITEMAP_GROUPS,
#: shards/groups.py) and news files, plain or gzipped).
SHARD_FILE_PATTERN: Final = re.compile(r"^sitemap-(?:[a-z0-9][a-z0-9_-]{0,39}-)?\d{5}\.xml(\.gz)?$")
#: SITEMAP_XSL: the stylesheet published beside the set, which every file of it names.
STYLESHEET_NAME: Final = "sitemap.xsl"
#: SITEMAP_LLMS_TXT: the listed pages as Markdown links for language models (shards/llms_txt.py).
LLMS_TXT_NAME: Final = "llms.txt"
#: The page summaries of a set being built with llms.txt, inside its staging directory.
LLMS_PAGES_NAME: Final = "llms-pages.sqlite"
#: The staging directory of a set being built, inside the output directory.
STAGING_PREFIX: Final = ".sitemap-staging-"
#: The sort runs of a set being built, inside its staging directory.
SORT_DIR: Final = "sort-runs"
#: The spool files of the changes since the previous set (unnamed once made).
CHANGES_PREFIX: Final = ".sitemap-changes-"


def shard_name(number: int, *, gzip: bool, prefix: str = SHARD_PREFIX) -> str:
    """Return the file name of the ``number``-th shard (1-based)."""
    return f"{prefix}-{number:05d}.xml" + (".gz" if gzip else "")


def group_prefix(group: str) -> str:
    """The prefix of a group's shards: ``sitemap-<group>`` (``sitemap-<group>-00001.xml``, ...)."""
    return f"{SHARD_PREFIX}-{group}"


def series_of(name: str) -> str:
    """The series a sitemap file of a set belongs to: its name without the number and extension."""
    return name.split(".", 1)[0].rsplit("-", 1)[0]


def listed_file_name(loc: str) -> str | None:
    """The file of a set an index ``<loc>`` names (its last path segment), or None if that is not one."""
    name = loc.rsplit("/", 1)[-1]
    return name if SHARD_FILE_PATTERN.match(name) else None


def is_news_file(name: str) -> bool:
    """Whether a sitemap file of a set is a news file (its URLs are in the shards too); a group
    named ``news-archive`` (``sitemap-news-archive-00001.xml``) is not."""
    return series_of(name) == NEWS_PREFIX

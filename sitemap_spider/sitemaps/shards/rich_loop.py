"""The publishing loop of a set with extensions: hreflang links, images, videos, news files.

A set none of whose entries has extensions never comes here (shard_loop.py's own loop). Here
each line is formatted on its own: its ``<url>`` gets the joined ``xhtml:link`` elements of its
loc (hreflang.LinkReader, read in step) and the images and videos rendered when it was added;
an article published within the last two days also goes into the news files
(``sitemap-news-00001.xml``, at most 1,000 URLs each), written beside the shards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final

from sitemap_spider.sitemaps.runs.lines import Extras, KeptBlock
from sitemap_spider.sitemaps.xml.extensions import prefixes_in
from sitemap_spider.sitemaps.xml.hreflang import LinkReader
from sitemap_spider.sitemaps.shards.writer import ShardWriter
from sitemap_spider.sitemaps.rules import parse_lastmod
from sitemap_spider.sitemaps.xml.elements import url_line, with_extensions

if TYPE_CHECKING:
    from sitemap_spider.sitemaps.shards.groups import GroupedWriter

#: News files hold at most this many URLs (Google's news sitemap limit).
MAX_NEWS_URLS: Final = 1000
#: Articles older than this are left out of the news files.
NEWS_WINDOW: Final = timedelta(days=2)
# The extras of a line with no extension XML: alternates alone, or nothing.
_PLAIN: Final[Extras] = (None, None, "", "", "")


class RichOutput:
    """What the loop of a rich set needs besides the lines, and what it counts."""

    def __init__(self, links: LinkReader | None, now: datetime) -> None:
        self.links = links
        self.news_cutoff = now - NEWS_WINDOW
        self.news_urls = 0
        self.news_too_old = 0

    def write_blocks(
        self,
        blocks: Iterable[KeptBlock],
        writer: ShardWriter | GroupedWriter,
        news: ShardWriter,
        compare: Callable[[list[str]], None],
    ) -> None:
        """Write the kept lines of a rich set into ``writer``'s shards and ``news``'s news files;
        ``compare`` is given each block's ``<url>`` lines as a plain set would have them (a
        comparison with the previous set is of locs and lastmods, whatever the extensions)."""
        try:
            for locs, lastmods, extras in blocks:
                compare(
                    [
                        self._write_line(writer, news, loc, lastmod, _PLAIN if extra is None else extra)
                        for loc, lastmod, extra in zip(locs, lastmods, extras)
                    ]
                )
            if self.links is not None:
                self.links.finish()
            news.close()
        except BaseException:
            news.abort()
            raise

    def _write_line(
        self, writer: ShardWriter | GroupedWriter, news: ShardWriter, loc: str, lastmod: str, extras: Extras
    ) -> str:
        """Write one entry's ``<url>`` (and its news ``<url>``); its ``<url>`` line without extensions."""
        changefreq, priority, url_xml, news_date, news_xml = extras
        plain = url_line(loc, lastmod or None, changefreq, priority)
        links = "" if self.links is None else self.links.links_of(loc)
        writer.write_rich(with_extensions(plain, links + url_xml), lastmod, (("xhtml",) if links else ()) + prefixes_in(url_xml))
        if news_xml:
            if parse_lastmod(news_date) < self.news_cutoff:
                self.news_too_old += 1
            else:
                # The page's lastmod too, as on its <url> in the shards: the index's lastmod of a news
                # file is the newest of its entries', as for every file.
                news.write_rich(with_extensions(url_line(loc, lastmod or None, None, None), news_xml), lastmod, ("news",))
                self.news_urls += 1
        return plain

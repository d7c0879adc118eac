"""The publishing loop of a set with extensions: hreflang links, images, videos, news files.

A set none of whose entries has extensions never comes here (publish_loop.py's own loop). Here
each line is formatted on its own: its ``<url>`` gets the joined ``xhtml:link`` elements of its
loc (hreflang.LinkReader, read in step) and the images and videos rendered when it was added;
an article published within the last two days also goes into the news files
(``sitemap-news-00001.xml``, at most 1,000 URLs each), written beside the shards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final

from sitemap_spider.sitemaps.entry_lines import split_rich
from sitemap_spider.sitemaps.extensions import prefixes_in
from sitemap_spider.sitemaps.hreflang import LinkReader
from sitemap_spider.sitemaps.writer import ShardInfo, ShardWriter
from sitemap_spider.sitemaps.xml import parse_lastmod, url_line

if TYPE_CHECKING:
    from sitemap_spider.sitemaps.publish_loop import PublishLoop

#: News files hold at most this many URLs (Google's news sitemap limit).
MAX_NEWS_URLS: Final = 1000
#: Articles older than this are left out of the news files.
NEWS_WINDOW: Final = timedelta(days=2)
NEWS_PREFIX: Final = "sitemap-news"
_URL_CLOSE: Final = "</url>\n"


class RichOutput:
    """What the loop of a rich set needs besides the lines, and what it counts."""

    def __init__(self, links: LinkReader | None, now: datetime) -> None:
        self.links = links
        self.news_cutoff = now - NEWS_WINDOW
        self.news_urls = 0
        self.news_too_old = 0

    def write_blocks(
        self,
        loop: PublishLoop,
        writer: ShardWriter,
        blocks: Iterable[list[str]],
        shared: dict[str, bool],
        submit: Callable[[ShardInfo], None],
    ) -> None:
        """``PublishLoop._write_blocks`` for a rich set: the same entries dropped, the same counts."""
        options = loop.options
        news = ShardWriter(
            writer.directory,
            max_urls=min(MAX_NEWS_URLS, options.max_urls),
            max_bytes=options.max_bytes,
            gzip=False,
            on_close=submit,
            durable=not options.gzip,
            prefix=NEWS_PREFIX,
        )
        try:
            previous = None
            for block in blocks:
                # Each <url> as a plain set would have it: a comparison with the previous set
                # is of locs and lastmods, whatever the extensions.
                plain: list[str] = []
                for line in block:
                    loc, lastmod, changefreq, priority, digest = line.split("\t")
                    if loc == previous:
                        loop.duplicates += 1
                        continue
                    previous = loc
                    if digest in shared:
                        if shared[digest]:
                            loop.content_duplicate(line)
                            continue
                        shared[digest] = True
                    plain.append(self._write_line(writer, news, loc, lastmod[1:], changefreq, priority))
                loop.compare(plain)
            if self.links is not None:
                self.links.finish()
            news.close()
        except BaseException:
            news.abort()
            raise

    def _write_line(
        self, writer: ShardWriter, news: ShardWriter, loc: str, lastmod: str, changefreq: str, priority: str
    ) -> str:
        """Write one entry's ``<url>`` (and its news ``<url>``); its ``<url>`` line without extensions."""
        priority, url_xml, news_date, news_xml = split_rich(priority)
        element = url_line(
            loc,
            lastmod or None,
            None if changefreq == "-" else changefreq[1:],
            None if priority == "-" else float(priority[1:]),
        )
        plain = element
        links = "" if self.links is None else self.links.links_of(loc)
        if links or url_xml:
            element = element[: -len(_URL_CLOSE)] + links + url_xml + _URL_CLOSE
        writer.write_rich(element, lastmod, (("xhtml",) if links else ()) + prefixes_in(url_xml))
        if news_xml:
            if parse_lastmod(news_date) < self.news_cutoff:
                self.news_too_old += 1
            else:
                # The page's lastmod too, as on its <url> in the shards: the index's lastmod of a news
                # file is the newest of its entries', as for every file.
                news_element = url_line(loc, lastmod or None, None, None)
                news_element = news_element[: -len(_URL_CLOSE)] + news_xml + _URL_CLOSE
                news.write_rich(news_element, lastmod, ("news",))
                self.news_urls += 1
        return plain

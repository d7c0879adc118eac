"""The extension side of a sitemap set being built: rich entries as run lines, their alternates.

The builder (set_builder.py) hands every RichEntry here; entries without extensions never come
here. At publish time this makes what the publishing loop of a rich set needs (rich_loop.py).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from sitemap_spider.sitemaps.entry import RichEntry
from sitemap_spider.sitemaps.runs.lines import encode_rich_fields
from sitemap_spider.sitemaps.xml.extensions import Rendered, render
from sitemap_spider.sitemaps.xml.hreflang import HreflangJoin, HreflangListener, LinkReader
from sitemap_spider.sitemaps.shards.rich_loop import RichOutput


def rich_line(entry: RichEntry) -> tuple[str, Rendered]:
    """The run line of a checked rich entry, and its rendered extensions; InvalidEntryError
    when they cannot be written."""
    rendered = render(entry)
    fields = (entry.loc, entry.lastmod, entry.changefreq, entry.priority, entry.content_digest)
    return encode_rich_fields(fields, rendered.url_xml, rendered.news_date, rendered.news_xml), rendered


def has_extensions(rendered: Rendered) -> bool:
    """Whether a rendered entry puts anything in the files beyond its plain ``<url>``."""
    return bool(rendered.alternates or rendered.url_xml or rendered.news_xml)


class RichSet:
    """Rich entries' lines, the alternates of the set, and whether any entry had extensions."""

    def __init__(self, work_dir: Path, run_size: int, on_hreflang: HreflangListener | None) -> None:
        self.work_dir = work_dir
        self.run_size = run_size
        self.on_hreflang = on_hreflang
        self.rich = False  # some entry has extensions: the set takes the rich publishing loop
        self._join: HreflangJoin | None = None

    def line_of(self, entry: RichEntry) -> str:
        """The run line of a checked rich entry; its alternates are kept for the join.
        InvalidEntryError (nothing kept) when its extensions cannot be written."""
        line, rendered = rich_line(entry)
        for alternate, reason in rendered.problems:
            self._tell(entry.loc, alternate.href, alternate.hreflang, reason)
        if rendered.alternates:
            self.join.add(entry.loc, rendered.alternates)
        if has_extensions(rendered):
            self.rich = True
        return line

    @property
    def join(self) -> HreflangJoin:
        if self._join is None:
            self._join = HreflangJoin(self.work_dir, self.run_size)
        return self._join

    def add_alternates_run(self, path: Path, lines: int) -> None:
        """A sorted run of ``hreflang.alternate_lines`` made by another process."""
        self.join.add_run(path, lines)
        self.rich = True

    def output(self, now: datetime | None = None) -> RichOutput | None:
        """What the publishing loop needs for the extensions; None when no entry had any."""
        if not self.rich:
            return None
        links = None
        if self._join is not None:
            joined = self._join.join(self.on_hreflang)
            links = LinkReader(joined, self._join.unanswered(), self.on_hreflang)
        return RichOutput(links, now or datetime.now(UTC))

    def tell(self, page: str, href: str, hreflang: str, reason: str) -> None:
        """Pass on an alternate another process could not use."""
        self._tell(page, href, hreflang, reason)

    def _tell(self, page: str, href: str, hreflang: str, reason: str) -> None:
        if self.on_hreflang is not None:
            self.on_hreflang(page, href, hreflang, reason)

    def close(self) -> None:
        if self._join is not None:
            self._join.close()

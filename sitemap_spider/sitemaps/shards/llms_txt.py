"""llms.txt (llmstxt.org) from the same crawl (SITEMAP_LLMS_TXT): the listed pages as Markdown links.

The set builder hands over the page summary (title, description) of every entry that carries one
(``SummarizedEntry.page``, read by the crawl); they wait in a SQLite table in the staging directory, so
memory does not grow with the site. Once the shards are written, the pages of the set (not those
dropped as content duplicates) are written, one section per group (SITEMAP_GROUPS) or per first
path segment, under the site's name and description from its home page. A site of more pages
than the bound lists its shallowest pages and says so. The file is published with the set,
atomically, and compared with the one published before.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlsplit

from sitemap_spider.sitemaps.entry import PageSummary, SitemapEntry
from sitemap_spider.sitemaps.names import INDEX_NAME, LLMS_TXT_NAME
from sitemap_spider.sitemaps.options import OutputOptions
from sitemap_spider.sitemaps.shards.files import write_document
from sitemap_spider.sitemaps.shards.groups import SitemapGroup, group_of

logger = logging.getLogger(__name__)

#: The line of llms.txt that names the sitemap, when it lists every page and when it lists some:
#: llms_txt writes it, written_here knows this package's own llms.txt by it.
_ALL_LISTED: Final = "The {total:,} pages of the site's sitemap, by section. The sitemap: {index_url}"
_SOME_LISTED: Final = (
    "This file lists {listed:,} of the {total:,} pages of the site's sitemap, the shallowest of each "
    "section; the sitemap lists them all: {index_url}"
)
#: How much of a published llms.txt is read to tell whether it is ours (the line comes after the title).
_HEAD_CHARS: Final = 8192

#: The top-level pages' section (``/``, ``/about``), first.
TOP_SECTION: Final = "Pages"
#: With SITEMAP_GROUPS: the section of the pages of no group, last.
OTHER: Final = "Other"
#: A description longer than this is cut at a word, with an ellipsis.
MAX_DESCRIPTION: Final = 300
_SPACE: Final = re.compile(r"\s+")
# C0 and C1 controls, DEL, and the bidirectional controls that could make a line read otherwise
# than it is (a terminal's escape sequences, a link text shown reversed).
_CONTROLS: Final = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# What a Markdown reader would take for markup in a page's own words: links, emphasis, HTML.
_MARKDOWN: Final = re.compile(r"([\\`*_\[\]<>])")


@dataclass(frozen=True)
class LlmsTxtResult:
    """What was written: pages listed, of how many, and the link lines added and removed since
    the file published before (None: there was none)."""

    listed: int
    pages: int
    added: int | None
    removed: int | None

    def describe(self) -> str:
        """A line of the crawl's summary."""
        of = "" if self.listed == self.pages else f" of {self.pages:,} (SITEMAP_LLMS_TXT_MAX)"
        since = "first one" if self.added is None else f"{self.added:,} added, {self.removed:,} removed"
        return f"llms.txt: {self.listed:,} pages{of}; {since}"


def _clean(text: str) -> str:
    """One line of plain text: no controls, whitespace collapsed."""
    return _SPACE.sub(" ", _CONTROLS.sub(" ", text)).strip()


def _markdown(text: str) -> str:
    """A page's own words as Markdown text: its markup characters escaped."""
    return _MARKDOWN.sub(r"\\\1", text)


def _depth(loc: str) -> int:
    return len([segment for segment in urlsplit(loc).path.split("/") if segment])


def _segment(loc: str) -> str:
    """The first segment of the URL's path ("" for the home page)."""
    return urlsplit(loc).path.lstrip("/").split("/", 1)[0]


def _section_title(segment: str) -> str:
    name = _clean(unquote(segment).replace("-", " ").replace("_", " "))
    return name[:1].upper() + name[1:] if name else TOP_SECTION


def _link_text(summary: PageSummary, loc: str, site: str) -> str:
    text = _clean(summary.title)
    if site and text != site:  # "Install - Example Docs": the site's name once, in the heading
        text = re.sub(rf"\s*[-|–—·:»]\s*{re.escape(site)}$", "", text) or text
    return _markdown(text or unquote(urlsplit(loc).path) or loc)


def _description(text: str) -> str:
    text = _clean(text)
    if len(text) <= MAX_DESCRIPTION:
        return text
    cut = text[:MAX_DESCRIPTION].rsplit(" ", 1)[0]
    return cut.rstrip(" ,.;:") + "…"


def link_line(loc: str, summary: PageSummary, site: str = "", site_description: str = "") -> str:
    """The Markdown list item of a page, ``- [title](url): description``; ``site``, the site's
    name, is cut from the end of the title, and a description that is the site's own (a theme's
    default on every page) says nothing of the page: left out."""
    url = loc.replace("(", "%28").replace(")", "%29").replace(" ", "%20")
    description = _description(summary.description)
    if site_description and description == site_description:
        description = ""
    return f"- [{_link_text(summary, loc, site)}]({url})" + (f": {_markdown(description)}" if description else "")


class LlmsPages:
    """The page summaries of a set being built, in a SQLite file of the staging directory."""

    def __init__(self, path: Path, groups: tuple[SitemapGroup, ...]) -> None:
        """``groups`` (SITEMAP_GROUPS) make the sections; without them, first path segments do."""
        self.groups = groups
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute(
            "CREATE TABLE pages (loc TEXT PRIMARY KEY, depth INTEGER, segment TEXT, title TEXT, description TEXT, "
            "site TEXT)"
        )
        self._db.execute("BEGIN")

    def add(self, loc: str, summary: PageSummary) -> None:
        """Keep a page's summary; a loc added twice keeps its last one (the set lists it once)."""
        segment = (group_of(self.groups, loc) or OTHER) if self.groups else _segment(loc)
        self._db.execute(
            "INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?, ?, ?)",
            (loc, _depth(loc), segment, summary.title, summary.description, summary.site_name),
        )

    def drop(self, loc: str) -> None:
        """A page the set does not list after all (a content duplicate of another)."""
        self._db.execute("DELETE FROM pages WHERE loc = ?", (loc,))

    def dropping(self, told: Callable[[SitemapEntry], None] | None) -> Callable[[SitemapEntry], None]:
        """A content-duplicate listener that drops the entry here, then tells ``told``."""

        def dropped(entry: SitemapEntry) -> None:
            self.drop(entry.loc)
            if told is not None:
                told(entry)

        return dropped

    def home(self) -> tuple[str, PageSummary | None]:
        """The site's home page (its page at ``/``) and its summary; without one, the origin of
        a page of the set and None (every page of a set is on the one site)."""
        row = self._db.execute(
            "SELECT loc, title, description, site FROM pages WHERE depth = 0 ORDER BY length(loc), loc LIMIT 1"
        ).fetchone()
        if row is not None and urlsplit(row[0]).path in ("", "/") and not urlsplit(row[0]).query:
            return row[0], PageSummary(*row[1:])
        any_loc = self._db.execute("SELECT loc FROM pages LIMIT 1").fetchone()
        parts = urlsplit(any_loc[0] if any_loc else "")
        return f"{parts.scheme}://{parts.netloc}/", None

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM pages").fetchone()[0])

    def sections(self, limit: int) -> dict[str, list[tuple[str, PageSummary]]]:
        """At most ``limit`` pages by section, each section's shallowest first (then in loc order).

        A section is a group, or a first path segment with pages below it (``/docs/`` goes with
        ``/docs/install``); the other top-level pages make the section "" (``/``, ``/about``).
        Over ``limit``, the sections take turns: each one's first page, then each one's second,
        ..., so that a section of deep pages (a blog's posts) is not crowded out by shallow ones.
        """
        if self.groups:
            section = "segment"
        else:
            section = "CASE WHEN segment IN (SELECT segment FROM pages WHERE depth >= 2) THEN segment ELSE '' END"
        query = (
            f"SELECT section, loc, title, description, site FROM (SELECT *, {section} AS section, "
            f"row_number() OVER (PARTITION BY {section} ORDER BY depth, loc) AS turn FROM pages) "
            "ORDER BY turn, depth, loc LIMIT ?"
        )
        found: dict[str, list[tuple[str, PageSummary]]] = {}
        for name, loc, title, description, site in self._db.execute(query, (limit,)):
            found.setdefault(name, []).append((loc, PageSummary(title, description, site)))
        return found

    def close(self) -> None:
        self._db.close()


def llms_txt(pages: LlmsPages, index_url: str, limit: int) -> tuple[str, int]:
    """The text of llms.txt, and how many pages it lists. The home page (the page at ``/``)
    names the site (og:site_name, else its title) and describes it."""
    total = pages.count()
    chosen = pages.sections(limit)
    listed = sum(map(len, chosen.values()))
    home, home_page = pages.home()
    name = description = ""
    if home_page is not None:
        name = _clean(home_page.site_name) or _clean(home_page.title)
        description = _description(home_page.description)
    groups = pages.groups
    sections: dict[str, list[str]] = {}
    # Section title -> the segment that has it; the top-level pages keep theirs.
    titles: dict[str, str] = {} if groups else {TOP_SECTION: ""}
    for section, rows in chosen.items():
        title = section if groups else _section_title(section)
        if titles.setdefault(title, section) != section:  # /pages/ beside the top-level "Pages"; a-b, a_b
            title = f"{title} ({_markdown(unquote(section))})"
        sections[title] = [
            link_line(loc, summary, name, "" if loc == home else description) for loc, summary in rows
        ]
    lines = [f"# {_markdown(name or urlsplit(home).netloc)}", ""]
    if description:
        lines += [f"> {_markdown(description)}", ""]
    template = _SOME_LISTED if listed < total else _ALL_LISTED
    lines.append(template.format(listed=listed, total=total, index_url=index_url))
    if groups:
        order = [group.name for group in groups] + [OTHER]
    else:
        order = [TOP_SECTION, *sorted(set(sections) - {TOP_SECTION}, key=str.lower)]
    assert set(order) >= set(sections)
    for section in order:
        if section in sections:
            lines += ["", f"## {section}", "", *sections[section]]
    return "\n".join(lines) + "\n", listed


def write_llms_txt(pages: LlmsPages, staging: Path, output_dir: Path, options: OutputOptions) -> LlmsTxtResult | None:
    """Write llms.txt into ``staging`` for the set ``options`` describe, and compare it with
    the one published in ``output_dir``; None (nothing written) when no page has a summary."""
    if pages.count() == 0:
        logger.warning(
            "llms.txt not written: no page of the set has a title or description "
            "(scrapy crawl sitemap reads them; items of other spiders carry none)"
        )
        return None
    text, listed = llms_txt(pages, options.base_url + INDEX_NAME, options.llms_txt)
    write_document(staging / LLMS_TXT_NAME, text.encode(), gzip=False)
    added, removed = compare(output_dir / LLMS_TXT_NAME, text)
    return LlmsTxtResult(listed, pages.count(), added, removed)


def written_here(path: Path, index_url: str) -> bool:
    """Whether ``path`` is an llms.txt this package wrote for the set whose index is ``index_url``:
    it has the line naming that index that :func:`llms_txt` writes. A hand-written one has not."""
    try:
        with open(path, encoding="utf-8") as file:
            head = file.read(_HEAD_CHARS)
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
        return False
    # The templates as patterns: any count, this index.
    fields = {re.escape("{listed:,}"): r"[\d,]+", re.escape("{total:,}"): r"[\d,]+",
              re.escape("{index_url}"): re.escape(index_url)}  # fmt: skip
    patterns = []
    for template in (_ALL_LISTED, _SOME_LISTED):
        pattern = re.escape(template)
        for field, value in fields.items():
            pattern = pattern.replace(field, value)
        patterns.append(re.compile(pattern))
    return any(pattern.fullmatch(line) for line in head.splitlines() for pattern in patterns)


def compare(previous: Path, text: str) -> tuple[int | None, int | None]:
    """Link lines added and removed since ``previous`` (None, None when there is none)."""
    try:
        before = previous.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None, None
    old = {line for line in before.splitlines() if line.startswith("- [")}
    new = {line for line in text.splitlines() if line.startswith("- [")}
    return len(new - old), len(old - new)

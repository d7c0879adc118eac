"""A validation run over several documents: which to read next, duplicates across files, cross-submission.

The session is the ``Sink`` of every document it checks. It does no I/O: the caller reads
each ``Target`` (a local file, or a URL through Scrapy) and hands the bytes to ``check``,
which returns the sitemaps an index leads to. Memory grows with the number of distinct
URLs (one 64-bit hash and one int each, about 100 bytes), never with their length.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import BinaryIO, Final

from sitemap_spider.checking.context import Document
from sitemap_spider.checking.document import check_document
from sitemap_spider.checking.findings import Finding, FindingLog
from sitemap_spider.sitemaps import normalize_url, origin_of

#: How many index levels below an input are read (the protocol allows one: index -> sitemaps).
DEFAULT_MAX_DEPTH: Final = 3


@dataclass(frozen=True)
class Target:
    """A document to read: its name in findings, the URL it is served at, how it was reached."""

    name: str
    location: str | None
    depth: int = 0
    chain: tuple[str, ...] = ()  # keys of the indexes that led here, the input first
    listed_at: tuple[str, int] | None = None  # (file, line) of the index that lists it


@dataclass
class _OutOfScope:
    examples: list[tuple[str, str, int]] = field(default_factory=list)  # (loc, file, line)
    count: int = 0


def sitemap_key(url: str) -> str:
    """The one spelling of a sitemap URL, so that a loop is seen whatever its spelling."""
    try:
        return normalize_url(url) or url
    except UnicodeError:
        return url


class Session:
    """Findings, documents read and state shared by all the documents of one run."""

    def __init__(self, now: datetime | None = None, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
        self.now = now or datetime.now(UTC)
        self.max_depth = max_depth
        self.log = FindingLog()
        self.documents: list[Document] = []
        self.unread_inputs: list[str] = []
        self.allowed_by_robots = 0
        self._files: dict[str, int] = {}
        self._file_names: list[str] = []
        self._seen: dict[int, int] = {}
        self._visited: set[str] = set()
        self._out_of_scope: dict[tuple[str, str], _OutOfScope] = {}

    # --- the Sink of every document -------------------------------------------------

    def finding(
        self, rule: str, file: str | None, line: int | None, detail: str, url: str | None = None
    ) -> None:
        self.log.add(Finding(rule, file, line, detail, url))

    def listed(self, loc: str, file: str, line: int, lastmod: str | None = None, *, news: bool = False) -> None:
        """Count a listed URL, and report it listed twice. A news entry (``news``) is a duplicate
        of another news entry only: Google News wants an article in the news sitemap, and
        the site's other sitemaps may list it too."""
        number = self._files.setdefault(file, len(self._files))
        if number == len(self._file_names):
            self._file_names.append(file)
        data = loc.encode("utf-8", "surrogatepass")
        key = int.from_bytes(hashlib.blake2b(data, digest_size=8, person=b"news" if news else b"").digest())
        first = self._seen.setdefault(key, number << 32 | line)
        if first == number << 32 | line:
            return
        first_file, first_line = self._file_names[first >> 32], first & 0xFFFFFFFF
        if first_file == file:
            self.finding("duplicate.in_file", file, line, f"listed already at line {first_line}", loc)
        else:
            self.finding(
                "duplicate.across_files", file, line, f"listed already in {first_file}:{first_line}", loc
            )

    def out_of_scope(self, loc: str, file: str, line: int, location: str) -> None:
        origin = origin_of(normalize_url(loc) or loc)
        pending = self._out_of_scope.setdefault((location, origin), _OutOfScope())
        pending.count += 1
        if self.log.limit is None or len(pending.examples) < self.log.limit:
            pending.examples.append((loc, file, line))

    # --- which documents are read -----------------------------------------------------

    def input(self, name: str, location: str | None, key: str | None = None) -> Target | None:
        """The target of a document named on the command line; None if it was given before.

        ``key`` names the document for loop detection (a local file's real path); by default
        its location, else its name.
        """
        key = key or (sitemap_key(location) if location else name)
        if key in self._visited:
            return None
        self._visited.add(key)
        return Target(name, location, chain=(key,))

    def check(
        self, target: Target, raw: BinaryIO, key_of: Callable[[str], str] = sitemap_key
    ) -> list[Target]:
        """Check one document; return the sitemaps it lists that are still to be read.

        ``key_of`` gives the key of a listed sitemap (see ``input``).
        """
        document = check_document(raw, target.name, target.location, self)
        self.documents.append(document)
        if document.kind is None and target.depth == 0:
            self.unread_inputs.append(target.name)  # its finding says why
        if document.kind == "sitemapindex" and target.listed_at is not None:
            file, line = target.listed_at
            self.finding(
                "index.nested", file, line, f"lists {target.name}, itself a sitemap index", target.location
            )
        return self._children(target, document, key_of) if document.kind == "sitemapindex" else []

    def unread(self, target: Target, rule: str, detail: str) -> None:
        """A document that could not be read at all."""
        self.finding(rule, target.name, None, detail, target.location)
        if target.depth == 0:
            self.unread_inputs.append(target.name)

    def _children(self, target: Target, document: Document, key_of: Callable[[str], str]) -> list[Target]:
        children: list[Target] = []
        for loc, line in document.children:
            key = key_of(loc)
            if key in target.chain:
                self.finding("index.loop", target.name, line, f"lists {loc}, which led to this index", loc)
            elif key in self._visited:
                self.finding(
                    "index.duplicate", target.name, line, f"{loc} is listed more than once; read once", loc
                )
            elif target.depth + 1 > self.max_depth:
                self.finding(
                    "index.depth",
                    target.name,
                    line,
                    f"{loc} is {target.depth + 1} levels deep; not read",
                    loc,
                )
            else:
                self._visited.add(key)
                children.append(Target(loc, loc, target.depth + 1, (*target.chain, key), (target.name, line)))
        return children

    # --- cross-submission ------------------------------------------------------------

    def origins_to_check(self) -> set[str]:
        """The origins whose robots.txt could allow the URLs found outside their sitemap's scope."""
        return {origin for _, origin in self._out_of_scope}

    def resolve_cross_submission(self, robots_sitemaps: dict[str, set[str]] | None) -> None:
        """Report out-of-scope URLs, except where robots.txt of their origin names the sitemap.

        ``robots_sitemaps``: origin -> the sitemap URLs of its robots.txt; None when robots.txt
        could not be read (local files).
        """
        for (location, origin), pending in sorted(self._out_of_scope.items()):
            named = {sitemap_key(url) for url in (robots_sitemaps or {}).get(origin, set())}
            if sitemap_key(location) in named:
                self.allowed_by_robots += pending.count
                continue
            if robots_sitemaps is None or origin not in robots_sitemaps:
                why = f"allowed only if {origin}/robots.txt has a 'Sitemap: {location}' line (not checked)"
            else:
                why = f"{origin}/robots.txt has no 'Sitemap: {location}' line that would allow it"
            for loc, file, line in pending.examples:
                self.finding(
                    "loc.cross_submission", file, line, f"outside the scope of {location}; {why}", loc
                )
            self.log.count_more("loc.cross_submission", pending.count - len(pending.examples))
        self._out_of_scope.clear()

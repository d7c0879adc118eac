"""One document being checked: where its findings and URLs go (a ``Sink``) and what was read of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from sitemap_spider.checking.values import LOC_WARNINGS, in_scope, loc_problems, scope_of


class Sink(Protocol):
    """Where a document's findings and URLs go."""

    now: datetime

    def finding(
        self, rule: str, file: str, line: int | None, detail: str, url: str | None = None
    ) -> None: ...

    def listed(self, loc: str, file: str, line: int, lastmod: str | None = None, *, news: bool = False) -> None: ...

    def out_of_scope(self, loc: str, file: str, line: int, location: str) -> None: ...


@dataclass
class Document:
    """What was read of one document."""

    name: str
    location: str | None
    kind: str | None = None  # "urlset", "sitemapindex", "text"; None when not a sitemap
    entries: int = 0
    bytes: int = 0
    children: list[tuple[str, int]] = field(default_factory=list)


class Context:
    """One document being checked: its name, its scope and the sink, for the helpers below."""

    def __init__(self, document: Document, sink: Sink) -> None:
        self.document = document
        self.sink = sink
        self.name = document.name
        self.scope = scope_of(document.location) if document.location else None

    def finding(self, rule: str, line: int | None, detail: str, url: str | None = None) -> None:
        self.sink.finding(rule, self.name, line, detail, url)

    def check_loc(
        self, loc: str, line: int, listed: bool = True, lastmod: str | None = None, *, news: bool = False
    ) -> bool:
        """Report the loc's problems; True if it has no error (then it is counted as listed).
        ``news``: the ``<url>`` carries a ``<news:news>`` (see Session.listed)."""
        ok = True
        for rule, detail in loc_problems(loc):
            self.finding(rule, line, detail, loc)
            ok = ok and rule in LOC_WARNINGS
        if not ok:
            return False
        if self.scope is not None and self.document.location and not in_scope(loc, self.scope):
            self.sink.out_of_scope(loc, self.name, line, self.document.location)
        if listed:
            self.sink.listed(loc, self.name, line, lastmod, news=news)
        return True

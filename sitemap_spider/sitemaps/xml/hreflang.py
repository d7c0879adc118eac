"""hreflang clusters: which alternates of the set are reciprocal, in bounded memory.

A page's alternates can be written only once every page of the set is known: A's link to B
is kept when B names A too. Each alternate A -> B (hreflang h) becomes two sort lines,
``A<TAB>B<TAB>0<TAB>h`` ("A names B as h") and ``B<TAB>A<TAB>1<TAB>h`` ("A names B as h",
filed under B). Sorted, the lines of a pair (X, Y) are adjacent: a 0 and a 1 mean X names Y
and Y names X. The join reads them once, in the order of X, so its result (the links of each
page) comes out in loc order, beside the entries; only one page's lines are in memory.

A page on another host than the page naming it (a ccTLD site) is not crawled: its link is
written unchecked, and said so. An unanswered alternate on the same host is ``not_reciprocal``
when its target is listed and ``target_not_listed`` when not; which of the two is known only as
the publishing loop walks the listed locs, so those lines are sorted again by target.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Final

from sitemap_spider.sitemaps.entry import Alternate
from sitemap_spider.sitemaps.xml.extensions import NAMESPACES
from sitemap_spider.sitemaps.runs.run_files import read_blocks, write_run
from sitemap_spider.sitemaps.runs.sorting import LineSorter
from sitemap_spider.sitemaps.xml.elements import escape

#: Told of each alternate that is not written (page, href, hreflang, reason), and of each one
#: written unchecked (reason ``unchecked``).
HreflangListener = Callable[[str, str, str, str], None]
UNCHECKED: Final = "unchecked"
XHTML_NAMESPACE: Final = NAMESPACES["xhtml"]


def alternate_lines(loc: str, alternates: Iterable[Alternate]) -> list[str]:
    """The sort lines of the (checked) alternates of the page ``loc``."""
    lines: list[str] = []
    origin = _origin(loc)
    for alternate in alternates:
        lines.append(f"{loc}\t{alternate.href}\t0\t{alternate.hreflang}")
        if _origin(alternate.href) == origin:  # another host's pages never answer
            lines.append(f"{alternate.href}\t{loc}\t1\t{alternate.hreflang}")
    return lines


def _origin(url: str) -> str:
    return url[: url.find("/", url.find("//") + 2) % (len(url) + 1)].lower()


def links_xml(links: list[tuple[str, str]]) -> str:
    """The ``xhtml:link`` elements of (hreflang, href) pairs, sorted."""
    return "".join(
        f'<xhtml:link rel="alternate" hreflang="{hreflang}" href="{escape(href)}"/>' for hreflang, href in sorted(links)
    )


class HreflangJoin:
    """Collect the alternates of the set's pages; at publish time, the links of each page."""

    def __init__(self, work_dir: Path, run_size: int) -> None:
        self.work_dir = work_dir
        self._lines = LineSorter(work_dir, run_size, unique=False)
        self._unanswered = LineSorter(work_dir, run_size, unique=False)

    def add(self, loc: str, alternates: Iterable[Alternate]) -> None:
        lines = alternate_lines(loc, alternates)
        if lines:
            self._lines.add_lines(lines)

    def add_run(self, path: Path, lines: int) -> None:
        """A sorted run of ``alternate_lines`` made elsewhere (a worker process of ``scrapy publish``)."""
        self._lines.add_run(path, lines, 0)

    def join(self, on_problem: HreflangListener | None) -> Path:
        """Decide every page's links: a file of ``loc<TAB>xml`` lines in loc order."""
        return write_run(self._links(on_problem), self.work_dir)

    def _links(self, on_problem: HreflangListener | None) -> Iterator[str]:
        lines = itertools.chain.from_iterable(self._lines.iter_blocks())
        for page, page_lines in itertools.groupby(lines, key=lambda line: line[: line.index("\t")]):
            links = self._page_links(page, page_lines, on_problem)
            if links:
                yield f"{page}\t{links_xml(links)}"

    def _page_links(
        self, page: str, page_lines: Iterable[str], on_problem: HreflangListener | None
    ) -> list[tuple[str, str]]:
        links: set[tuple[str, str]] = set()
        called: set[str] = set()  # what the page's reciprocal partners call it
        origin = _origin(page)
        pairs = (line.split("\t")[1:] for line in page_lines)
        for target, pair in itertools.groupby(pairs, key=lambda fields: fields[0]):
            kinds = list(pair)
            names = sorted({hreflang for _, kind, hreflang in kinds if kind == "0"})
            answered = [hreflang for _, kind, hreflang in kinds if kind == "1"]
            if not names:
                continue  # named by the target, not naming it: reported from the target's side
            if answered or target == page:
                links.update((hreflang, target) for hreflang in names)
                if target != page:
                    called.update(answered)
            elif _origin(target) != origin:
                links.update((hreflang, target) for hreflang in names)
                for hreflang in names:
                    if on_problem is not None:
                        on_problem(page, target, hreflang, UNCHECKED)
            else:
                self._unanswered.add_lines([f"{target}\t{page}\t{hreflang}" for hreflang in names])
        if all(target == page for _, target in links):
            return []  # no other version: not a cluster
        if not any(target == page for _, target in links) and called:
            links.add((min(called - {"x-default"} or called), page))  # itself, as the others call it
        return sorted(links)

    def unanswered(self) -> Iterator[tuple[str, str, str]]:
        """(target, page, hreflang) of the same-host alternates not answered, in target order;
        after ``join``."""
        for line in self._unanswered.iter_unique_lines():
            target, page, hreflang = line.split("\t")
            yield target, page, hreflang

    def close(self) -> None:
        self._lines.close()
        self._unanswered.close()


class LinkReader:
    """The joined links of each loc, read in step with the publishing loop (locs in order); and
    the reasons of the unanswered alternates, decided as the listed locs go by."""

    def __init__(self, links: Path, unanswered: Iterator[tuple[str, str, str]], on_problem: HreflangListener | None):
        self._links = itertools.chain.from_iterable(read_blocks(links, 64 * 1024))
        self._next_link = next(self._links, None)
        self._unanswered = unanswered
        self._next_unanswered = next(unanswered, None)
        self._on_problem = on_problem

    def links_of(self, loc: str) -> str:
        """The ``xhtml:link`` XML of ``loc`` ("" without), a listed loc; locs must come in order."""
        while self._next_unanswered is not None and self._next_unanswered[0] <= loc:
            target, page, hreflang = self._next_unanswered
            self._problem(page, target, hreflang, "not_reciprocal" if target == loc else "target_not_listed")
            self._next_unanswered = next(self._unanswered, None)
        xml = ""
        while self._next_link is not None:
            page, _, links = self._next_link.partition("\t")
            if page > loc:
                break
            if page == loc:
                xml = links
            self._next_link = next(self._links, None)
        return xml

    def finish(self) -> None:
        """Every loc went by: the alternates still unanswered name pages not listed."""
        while self._next_unanswered is not None:
            target, page, hreflang = self._next_unanswered
            self._problem(page, target, hreflang, "target_not_listed")
            self._next_unanswered = next(self._unanswered, None)

    def _problem(self, page: str, target: str, hreflang: str, reason: str) -> None:
        if self._on_problem is not None:
            self._on_problem(page, target, hreflang, reason)

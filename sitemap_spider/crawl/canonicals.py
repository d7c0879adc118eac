"""Pages that name another URL as canonical: each is left out only if that URL is listed.

A canonical link is a hint, which a search engine ignores when the URL it names cannot be indexed
(a 404, noindex, disallowed by robots.txt, a redirect back to the page, a loop of canonicals): it
then indexes the page itself. So the spider keeps such a page as a *candidate*, its entry with the
URL it names (its target, crawled form), and the decision waits until the set is complete, in the
process that publishes it, whatever the crawl mode: the target's verdict may come later, or from
another process. Then the chain from a candidate is followed, from each URL to the URL it names
as canonical (a candidate's target) or redirects to (the redirects the report recorded):

- a candidate whose chain reaches a page listed for itself is left out (``canonical``), as before;
- otherwise one candidate of the chain is listed: the last before a URL that cannot be listed, or,
  when the chain comes back (a loop of canonicals, a target that redirects back to the page), the
  first of the loop in URL order. The others lead to it and are left out.

What is listed so is counted (``sitemap/canonical/target_unlistable``) and named with its target
in the report's ``extension_problems``. Pages that name themselves, the common case, are no
candidates: they cost nothing here, nor do redirects while there is no candidate.
"""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Callable, Container, Hashable, Iterable, Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any, Final, TypeVar

from scrapy.http import TextResponse
from scrapy.utils.response import get_base_url

from sitemap_spider import stats as keys
from sitemap_spider.crawl.pages import canonical_from_html
from sitemap_spider.sitemaps import SitemapEntry, candidate_from_json, entry_to_json, normalize_url

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from sitemap_spider.config import CrawlTarget, SitemapConfig

#: ``CrawlReport.not_written`` kind and reason of a candidate listed itself (stats.CANONICAL).
KIND: Final = keys.CANONICAL.split("/")[1]
UNLISTABLE: Final = "target_unlistable"
#: Why a candidate is listed, as the report says it after the target.
NOT_LISTED: Final = "is not listed"
LOOP: Final = "leads back to this page"

Node = TypeVar("Node", bound=Hashable)


def listed_candidates(
    names: Mapping[Node, Node],
    listed: Container[Node],
    moves: Mapping[Node, Node],
    order: Callable[[Node], str],
) -> dict[Node, str]:
    """The candidates to list, each with why (:data:`NOT_LISTED` or :data:`LOOP`).

    ``names``: each candidate and the URL it names; ``moves``: each URL that redirects and where
    to; ``listed``: the URLs listed for themselves (a candidate among them is none); ``order``:
    a candidate's URL, which picks the one of a loop.
    """
    chosen: dict[Node, str] = {}
    decided: set[Node] = set()  # URLs whose chain reaches a page listed, or one chosen
    dead: set[Node] = set()  # redirects past a chain's last candidate: they lead to no page listed
    for start in names:
        path: list[Node] = []
        on_path: dict[Node, int] = {}
        node = start
        while node not in listed and node not in decided and node not in dead and node not in on_path:
            after = names.get(node, moves.get(node))
            if after is None:
                break
            on_path[node] = len(path)
            path.append(node)
            node = after
        # A chain that ends at a page listed, or at one decided before, has its page already.
        if node not in listed and node not in decided:
            loop = [n for n in path[on_path[node] :] if n in names] if node in on_path else []
            if loop:
                chosen[min(loop, key=order)] = LOOP
            else:  # the end: a URL that cannot be listed (or that leads to one)
                last = next((i for i in range(len(path) - 1, -1, -1) if path[i] in names), None)
                if last is not None:
                    chosen[path[last]] = NOT_LISTED
                    # Another candidate whose chain meets those redirects is listed as well.
                    dead.update(path[last + 1 :])
                    del path[last + 1 :]
        decided.update(path)
    return chosen


def crawled_form(to_crawl: Callable[[str], str], strip_params: Iterable[str]) -> Callable[[str], str | None]:
    """A URL as the crawl fetches it: normalised, on the crawled origin; None for no URL."""
    strip = tuple(strip_params)

    def crawled(url: str) -> str | None:
        normal = normalize_url(url, strip)
        return None if normal is None else to_crawl(normal)

    return crawled


def redirect_moves(
    redirects: Callable[[], Iterable[tuple[str, str]]],
    starts: Iterable[Node],
    key: Callable[[str], Node],
    crawled: Callable[[str], str | None],
) -> dict[Node, Node]:
    """Where the URLs ``starts`` (``key`` of the crawled form) lead through the redirects a report
    recorded (each a URL, and where to as its detail writes it), a hop a reading: only the redirects
    of those chains are kept, not every redirect of the site. Most targets redirect nowhere: one read."""
    moves: dict[Node, Node] = {}
    wanted = set(starts)
    while wanted:
        found: dict[Node, Node] = {}
        for url, target in redirects():
            source = crawled(url)
            if source is not None and key(source) in wanted and (after := crawled(target)) is not None:
                found[key(source)] = key(after)
        moves.update(found)
        wanted = {after for after in found.values() if after not in moves}
    return moves


class Candidates:
    """The candidates of a crawl, where its set is published, and the URLs listed for themselves.

    Of a listed URL only its ``hash`` is kept (8 bytes); the candidates' entries wait in an
    unnamed file, their URLs and targets in memory. ``to_crawl``: a loc's crawled URL;
    ``strip_params``: the query parameters the crawl strips (SITEMAP_STRIP_PARAMS).
    """

    def __init__(self, to_crawl: Callable[[str], str], strip_params: Iterable[str] = ()) -> None:
        self._to_crawl = to_crawl
        self._crawled = crawled_form(to_crawl, strip_params)
        self._listed = array("q")
        self._targets: dict[str, str] = {}
        self._spool: IO[str] | None = None

    def listed(self, loc: str) -> None:
        """A loc listed for itself."""
        self._listed.append(hash(self._to_crawl(loc)))

    def add(self, entry: SitemapEntry, canonical: str) -> None:
        """A candidate: ``entry``, whose page names ``canonical``; a later one of its loc replaces it."""
        if self._spool is None:
            self._spool = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._spool.write(entry_to_json(entry, canonical) + "\n")
        self._targets[self._to_crawl(entry.loc)] = canonical

    def __len__(self) -> int:
        return len(self._targets)

    def settle(
        self, redirects: Callable[[], Iterable[tuple[str, str]]]
    ) -> Iterator[tuple[SitemapEntry, str, str | None]]:
        """Each candidate once (none listed for itself too): its entry, its target, and why it is
        listed (None: it is left out). The set must be complete; ``redirects``: the report's."""
        if self._spool is None:
            return
        targets = self._targets
        names = {hash(url): hash(target) for url, target in targets.items()}
        urls = {hash(url): url for url in targets}
        moves = redirect_moves(redirects, names.values(), hash, self._crawled)
        wanted = {*names, *names.values(), *moves, *moves.values()}
        listed = wanted.intersection(self._listed)
        chosen = listed_candidates(names, listed, moves, urls.__getitem__)
        self._spool.seek(0)
        for line in self._spool:
            entry, canonical = candidate_from_json(line)
            url = self._to_crawl(entry.loc)
            if canonical is None or targets.get(url) != canonical or hash(url) in listed:
                continue  # replaced by a later one, given already, or listed for itself
            del targets[url]
            yield entry, canonical, chosen.get(hash(url))

    def close(self) -> None:
        if self._spool is not None:
            self._spool.close()
            self._spool = None


class CanonicalMixin:
    """The spider's side: which other URL a page names as canonical, and whether the page waits on it."""

    config: SitemapConfig
    target: CrawlTarget
    crawler: Crawler

    if TYPE_CHECKING:  # defined by the spider; declared here for the type checker

        def _resolve(self, base: str, href: str | None) -> str | None: ...

    def _canonical(self, response: TextResponse, facts: dict[str, Any]) -> str | None:
        """The other URL the page names as canonical (``<link>``, else the ``Link`` header), crawled
        form; None when it names itself or nothing. Its own URL under the other scheme is itself."""
        href = canonical_from_html(response.selector)
        canonical = self._resolve(get_base_url(response), href) if href else facts["canonical"]
        if canonical is None or canonical == facts["url"]:
            return None
        canonical = self.target.site.other_scheme(canonical)
        if canonical == facts["url"]:
            assert self.crawler.stats is not None
            self.crawler.stats.inc_value(keys.CANONICAL_OTHER_SCHEME)
            return None
        return canonical

    def _candidate(self, canonical: str | None) -> str | None:
        """The other URL a page names as canonical, when the page waits on its verdict (None: it
        does not, or SITEMAP_INCLUDE_CANONICALISED lists it anyway)."""
        return None if self.config.include_canonicalised else canonical

"""The crawl's scope: one origin, its public spelling, and crawler traps. Pure functions on strings."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from sitemap_spider.sitemaps import normalize_url, origin_of


def joined(base: str, href: str) -> str | None:
    """``urljoin(base, href)``, or None for an address that is no URL, as a browser takes it.

    urlsplit raises ValueError for ``http://[x/``, a template's ``https://[DOMAIN]/``, or a host
    that NFKC normalisation changes: in a page's canonical, hreflang alternates, images,
    videos or (render=auto) links, that lost the page; in a ``Link`` header, the pages only it
    links to as well.
    """
    try:
        return urljoin(base, href)
    except ValueError:
        return None


def resolved(base: str, href: str, strip_params: Iterable[str] = ()) -> str | None:
    """The normal form (``normalize_url``) of ``href`` against ``base``; None for no URL."""
    absolute = joined(base, href)
    return None if absolute is None else normalize_url(absolute, strip_params)


def repeated_segment_count(url: str) -> int:
    """How often the most frequent path segment occurs (``/a/b/b/b`` gives 3).

    Relative links that resolve against their own page (``more/`` on
    ``/a/more/``) build ever longer paths; a segment that repeats is their mark.
    """
    counts: dict[str, int] = {}
    for segment in urlsplit(url).path.split("/"):
        if segment:
            counts[segment] = counts.get(segment, 0) + 1
    return max(counts.values(), default=0)


@dataclass(frozen=True)
class Site:
    """The crawl's scope (one origin) and its mapping to the public origin.

    ``crawl_origin`` is where pages are fetched from; ``public_origin`` is
    what the sitemap says (the same unless ``public_url`` is given, for a
    staging or local copy of a site).
    """

    crawl_origin: str
    public_origin: str

    def in_scope(self, url: str) -> bool:
        """Whether a normalised URL belongs to the crawled site (scheme, host and port)."""
        return url.startswith(self.crawl_origin) and (
            len(url) == len(self.crawl_origin) or url[len(self.crawl_origin)] in "/?"
        )

    def to_crawl(self, url: str) -> str:
        """A normalised URL on the public origin, rewritten to be fetched from the crawled one."""
        if self.public_origin != self.crawl_origin and origin_of(url) == self.public_origin:
            return self.crawl_origin + url[len(self.public_origin) :]
        return url

    def other_scheme(self, url: str) -> str:
        """A normalised URL on the crawled or public host under the other scheme (http for https, or
        the reverse), whatever its port, as the crawled origin's; any other URL as it is.

        For canonical URLs: a site moved to https whose pages still name their http URLs (which
        redirect to https) as canonical names its own pages. The other scheme is never fetched.
        """
        parts = urlsplit(url)
        for origin in (self.crawl_origin, self.public_origin):
            mine = urlsplit(origin)
            if parts.hostname == mine.hostname and {parts.scheme, mine.scheme} == {"http", "https"}:
                return self.crawl_origin + url[len(origin_of(url)) :]
        return url

    def to_public(self, url: str) -> str:
        """A crawled URL as the sitemap lists it."""
        if self.public_origin != self.crawl_origin and self.in_scope(url):
            return self.public_origin + url[len(self.crawl_origin) :]
        return url

"""URL normalisation and crawl scope: pure functions on strings.

Every URL the crawler meets goes through :func:`normalize_url` once, so that the
many spellings of one page (``HTTP://Host:80/a/./b#top``, raw UTF-8, spaces,
tracking parameters) become one percent-encoded string. That string is both
what is requested and what is written to the sitemap.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from w3lib.url import safe_url_string

#: Schemes a sitemap may list; links with any other scheme are ignored.
WEB_SCHEMES = frozenset({"http", "https"})
DEFAULT_PORTS = {"http": 80, "https": 443}
#: The protocol's limit on a ``<loc>``.
MAX_URL_LENGTH = 2048

_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")
# A "%" that starts no escape stands for itself (servers read "/100%" so), and
# RFC 3986 spells that "%25".
_STRAY_PERCENT = re.compile(r"%(?![0-9a-fA-F]{2})")
# RFC 3986 section 2.3: escapes of these characters mean the character itself.
_UNRESERVED = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)


def _normalize_escape(match: re.Match[str]) -> str:
    char = chr(int(match.group(0)[1:], 16))
    return char if char in _UNRESERVED else match.group(0).upper()


def _escapes(text: str) -> str:
    return _ESCAPE.sub(_normalize_escape, _STRAY_PERCENT.sub("%25", text))


def remove_dot_segments(path: str) -> str:
    """Resolve ``.`` and ``..`` segments as RFC 3986 section 5.2.4 does.

    >>> remove_dot_segments("/a/./b/../c/")
    '/a/c/'
    """
    if "." not in path:
        return path
    output: list[str] = []
    segments = path.split("/")
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == ".":
            if last:
                output.append("")
        elif segment == "..":
            if len(output) > 1:
                output.pop()
            if last:
                output.append("")
        else:
            output.append(segment)
    result = "/".join(output)
    if path.startswith("/") and not result.startswith("/"):
        result = "/" + result
    return result


def strip_query_params(query: str, patterns: Iterable[str]) -> str:
    """Drop the query parameters whose name matches a glob pattern (``utm_*``).

    The order of the remaining parameters is kept: the URL a site links to is
    the URL it serves, and sorting would publish a URL the site never uses.
    """
    patterns = tuple(patterns)
    if not query or not patterns:
        return query
    kept = []
    for pair in query.split("&"):
        name = pair.split("=", 1)[0]
        if not pair or any(fnmatch.fnmatchcase(name.lower(), p) for p in patterns):
            continue
        kept.append(pair)
    return "&".join(kept)


def normalize_url(url: str, strip_params: Iterable[str] = ()) -> str | None:
    """Return the one normal form of an absolute http(s) URL, or ``None``.

    Lower-case scheme and host, no default port, no fragment, dot segments
    resolved, non-ASCII and spaces percent-encoded as UTF-8, escapes in upper
    case, tracking parameters removed. ``None`` for other schemes and for
    URLs that cannot be parsed.
    """
    try:
        parts = urlsplit(safe_url_string(url.strip()))
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in WEB_SCHEMES or not host:
        return None
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = _escapes(remove_dot_segments(parts.path) or "/")
    query = _escapes(strip_query_params(parts.query, strip_params))
    return urlunsplit((scheme, netloc, path, query, ""))


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a normalised URL."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


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

    def to_public(self, url: str) -> str:
        """A crawled URL as the sitemap lists it."""
        if self.public_origin != self.crawl_origin and self.in_scope(url):
            return self.public_origin + url[len(self.crawl_origin) :]
        return url

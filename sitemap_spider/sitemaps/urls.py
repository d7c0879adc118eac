"""The one normal form of a URL, which is both what the crawl requests and what a ``<loc>`` says.

Every URL the crawler meets goes through :func:`normalize_url` once, so that the
many spellings of one page (``HTTP://Host:80/a/./b#top``, raw UTF-8, spaces,
tracking parameters) become one percent-encoded string. That string is both
what is requested and what is written to the sitemap.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

from w3lib.url import safe_url_string

#: Schemes a sitemap may list; links with any other scheme are ignored.
WEB_SCHEMES = frozenset({"http", "https"})
DEFAULT_PORTS = {"http": 80, "https": 443}

_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")
# A "%" that starts no escape stands for itself (servers read "/100%" so), and
# RFC 3986 spells that "%25".
_STRAY_PERCENT = re.compile(r"%(?![0-9a-fA-F]{2})")
# RFC 3986 section 2.3: escapes of these characters mean the character itself.
_UNRESERVED = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
# A URL already in its normal form, as nearly every link of a crawl is once its page's base has
# been joined: lower-case scheme and host name, a path of characters w3lib keeps as they are,
# no escape (its case may need changing), no fragment, maybe a non-empty query of such characters
# (w3lib quotes "'" there). Its port and its dot segments are checked after the match.
_NORMAL = re.compile(
    r"(https?)://([a-z0-9][a-z0-9.-]*)(?::([1-9][0-9]{0,4}))?"
    r"(/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*)(?:\?([A-Za-z0-9\-._~!$&()*+,;=:@/?]+))?"
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
        if not pair or _stripped(pair, patterns):
            continue
        kept.append(pair)
    return "&".join(kept)


def _stripped(parameter: str, patterns: tuple[str, ...]) -> bool:
    """Whether a ``name=value`` parameter's name matches one of the glob ``patterns`` (any case)."""
    name = parameter.split("=", 1)[0].lower()
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def strip_path_params(path: str, patterns: Iterable[str]) -> str:
    """Drop the path parameters (``;name=value`` after a segment) whose name matches a glob pattern:
    a Java server's ``;jsessionid=...``, which names a visitor's session, not a page."""
    patterns = tuple(patterns)
    if ";" not in path or not patterns:
        return path
    segments = []
    for segment in path.split("/"):
        head, *params = segment.split(";")
        kept = [param for param in params if not _stripped(param, patterns)]
        segments.append(";".join([head, *kept]))
    return "/".join(segments)


def normalize_url(url: str, strip_params: Iterable[str] = ()) -> str | None:
    """Return the one normal form of an absolute http(s) URL, or ``None``.

    Lower-case scheme and host, no default port, no fragment, dot segments
    resolved, non-ASCII and spaces percent-encoded as UTF-8, escapes in upper
    case, tracking and session parameters removed (of the query and of the path's segments:
    ``;jsessionid=``). ``None`` for other schemes and for
    URLs that cannot be parsed.
    """
    plain = _NORMAL.fullmatch(url)
    if plain is not None and "/." not in plain[4] and ";" not in plain[4]:
        scheme, port, query = plain[1], plain[3], plain[5]
        # The same string as below, without w3lib's and urllib's passes (3% of a crawl's CPU).
        if port is None or (int(port) <= 65535 and int(port) != DEFAULT_PORTS[scheme]):
            if query is None:
                return url
            kept = strip_query_params(query, strip_params)
            if kept == query:
                return url
            return url[: plain.start(5)] + kept if kept else url[: plain.start(5) - 1]  # no "?" left
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
    path = _escapes(strip_path_params(remove_dot_segments(parts.path), strip_params) or "/")
    query = _escapes(strip_query_params(parts.query, strip_params))
    return urlunsplit((scheme, netloc, path, query, ""))


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a normalised URL."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def base_url_of(loc: str) -> str:
    """Where a set is served from when no base URL is configured: the origin of a valid loc,
    in its normal spelling (the index is served from the host's canonical spelling)."""
    return origin_of(normalize_url(loc) or loc) + "/"

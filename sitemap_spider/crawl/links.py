"""The links of a page that the crawl has not met before, read from the tree parsel built.

Scrapy's LinkExtractor resolves, quotes and wraps every link of every page in a
:class:`~scrapy.link.Link`, with its text. On a site most links of a page are its
navigation, met on every page before: profiling the crawl (BENCHMARKS.md) put
LinkExtractor and the work after it on links already requested at two thirds of
the crawl's CPU. :class:`LinkFinder` reads the same elements and attributes
as the spider's LinkExtractor (``<a>``, ``<area>``, ``<frame>``, ``<iframe>``;
``href`` and ``src``), with the same whitespace stripping, ``<base href>``
resolution, quoting (w3lib's ``safe_url_string`` in the page's encoding),
ignored file extensions and ``rel="nofollow"``, but looks each href up in a set
of the hrefs already handled *before* resolving it. An href whose resolution
does not depend on the page it is on (absolute, or host-relative on the same
origin) costs one string concatenation and one set lookup the second time; a
path-relative one ("../b.html") is resolved once per folder it is met in.
Fragments are dropped first: the crawl fetches a page, not a place in it, and a
javadoc links to each method of a class apart.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from scrapy.http import TextResponse
from scrapy.linkextractors import IGNORED_EXTENSIONS
from scrapy.utils.misc import rel_has_nofollow
from scrapy.utils.response import get_base_url
from scrapy.utils.url import url_has_any_extension
from w3lib.url import safe_url_string

#: The elements and attributes links are read from (the spider's LinkExtractor reads the same).
LINK_TAGS = ("a", "area", "frame", "iframe")
LINK_ATTRS = ("href", "src")
# HTML's white space, stripped from both ends of an attribute value (what w3lib's strip does).
_HTML_SPACE = " \t\n\r\x0c"
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
DENY_EXTENSIONS = frozenset("." + extension for extension in IGNORED_EXTENSIONS)
_SCHEMES = ("http://", "https://")
_UTF8 = frozenset({"utf-8", "utf8"})
# Path-relative hrefs resolved, by folder: kept up to this many (about 5 MB), then started afresh.
# A javadoc of 591 pages has 11,080 (folder, href) pairs; the crawl's memory budget is for 200,000 pages.
_MAX_RESOLVED = 20_000
_UNSET = object()


class LinkFinder:
    """Hands out each link of a crawl once: the absolute URLs of links not met before.

    ``met`` holds lookup keys (an absolute href as written; the page's origin plus
    a host-relative href) and the absolute URLs they resolved to. A key maps to one
    absolute URL whatever page it is on, so a key met before is skipped unresolved.
    A link skipped for ``rel="nofollow"`` is not marked: another page may link to
    the same URL without it.
    """

    def __init__(self, follow_nofollow: bool = True) -> None:
        self.follow_nofollow = follow_nofollow
        self.met: set[str] = set()
        # A path-relative href's URL (None: not a URL), by the folder of the page's base URL.
        self._resolved: dict[str, str | None] = {}

    def new_links(self, response: TextResponse, every: list[str] | None = None) -> list[str]:
        """Absolute http(s) URLs of the page's links that were not handed out before, in page order,
        without their fragments.

        ``every`` receives every link followed, met before or not, absolute but not
        normalised (the crawl history keeps a page's links for a 304).
        """
        base = get_base_url(response)
        parts = urlsplit(base)
        origin = f"{parts.scheme}://{parts.netloc}"
        # What a path-relative href is resolved against: the base URL up to its last "/".
        folder = origin + parts.path[: parts.path.rfind("/") + 1] + "\0" if parts.path else origin + "/\0"
        # Non-ASCII hrefs are quoted in the page's encoding: only UTF-8 pages may share their keys.
        ascii_only = response.encoding.lower() not in _UTF8
        met = self.met
        resolved = self._resolved
        found: list[str] = []
        for element in response.selector.root.iter(*LINK_TAGS):
            for attr in LINK_ATTRS:
                value = element.get(attr)
                if value is None:
                    continue
                href = value.strip(_HTML_SPACE).partition("#")[0]
                key = self._key(href, origin, ascii_only)
                if key is not None and key in met:
                    if every is not None:
                        every.append(key)
                    continue
                if not self.follow_nofollow and rel_has_nofollow(element.get("rel")):
                    continue
                if key is not None or not _folder_relative(href) or (ascii_only and not href.isascii()):
                    url = self._resolve(base, href, response.encoding)
                else:  # relative to the folder alone: resolved once per folder
                    where = folder + href
                    url = resolved.get(where, _UNSET)  # type: ignore[arg-type]
                    if url is _UNSET:
                        url = self._resolve(base, href, response.encoding)
                        if len(resolved) >= _MAX_RESOLVED:
                            resolved.clear()
                        resolved[where] = url
                if key is not None:
                    met.add(key)
                if url is None:
                    continue
                if every is not None:
                    every.append(url)
                if url != key and url in met:
                    continue
                met.add(url)
                if self._followable(url):
                    found.append(url)
        return found

    def mark(self, url: str) -> bool:
        """Record a URL the spider derived from a link (its normalised form); False if met before."""
        if url in self.met:
            return False
        self.met.add(url)
        return True

    @staticmethod
    def _key(href: str, origin: str, ascii_only: bool) -> str | None:
        """The lookup key of an href whose resolution does not depend on the page's path."""
        if ascii_only and not href.isascii():
            return None
        if href.startswith("/"):
            return None if href.startswith("//") else origin + href
        scheme = _SCHEME.match(href)
        if scheme is None:
            return None  # relative to the page's path (or its query, or fragment): resolve it
        if scheme.group(1).lower() in ("http", "https"):
            # "http:page.html" and "http:///page" are relative to the page in urljoin's reading.
            rest = href[scheme.end():]
            if not rest.startswith("//") or rest[2:3] in ("", "/"):
                return None
        return href

    @staticmethod
    def _resolve(base: str, href: str, encoding: str) -> str | None:
        # The steps LinkExtractor takes: join against <base href>, then quote.
        try:
            return safe_url_string(urljoin(base, href), encoding=encoding)
        except ValueError:
            return None  # a bogus link ("http://[::1")

    @staticmethod
    def _followable(url: str) -> bool:
        if not url.startswith(_SCHEMES):
            return False  # mailto:, javascript:, tel:, data:, ftp: ...
        return not url_has_any_extension(url, DENY_EXTENSIONS)


def _folder_relative(href: str) -> bool:
    """Whether ``href`` resolves against the folder of the base URL alone: a relative path.

    Not a query ("?x"), parameters of the page's last segment (";", ";?x"), a network path ("//",
    "//?x"), a scheme-relative form ("http:?x" on an http page), nor an href whose leading control
    characters or inner tabs and newlines urlsplit removes (they may hide one of those): each of
    these also depends on the page's own path.
    """
    first = href[:1]
    if not first or first <= " " or first in "/\\?;" or _SCHEME.match(href):
        return False
    return "\t" not in href and "\n" not in href and "\r" not in href

"""What a fetched page says about itself: indexability, canonical URL, content type.

These functions read headers and an already parsed document (a parsel
``Selector``, the one Scrapy's response caches and the LinkExtractor uses),
so every page is parsed once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from parsel import Selector

from sitemap_spider.sitemaps import PageSummary

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

# Directives that carry a colon of their own and so are not "agent: directive".
_COLON_DIRECTIVES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)
_LINK_HEADER_ITEM = re.compile(r"<([^>]*)>\s*((?:;\s*[^;,]+)*)")
_REL_PARAM = re.compile(r"""rel\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;,]+))""", re.IGNORECASE)


def media_type(content_type: str | bytes | None) -> str:
    """The lower-cased media type of a ``Content-Type`` value, without parameters."""
    if isinstance(content_type, bytes):
        content_type = content_type.decode("latin-1")
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_html(content_type: str | bytes | None) -> bool:
    """Whether a ``Content-Type`` header names an HTML document."""
    return media_type(content_type) in HTML_TYPES


def content_digest(body: bytes) -> str:
    """A short hash of a page's bytes: equal for the same page served under two URLs."""
    return hashlib.blake2b(body, digest_size=10).hexdigest()


@dataclass(frozen=True)
class RobotsDirectives:
    """The indexing directives that apply to this crawler."""

    noindex: bool = False
    nofollow: bool = False

    def merge(self, other: RobotsDirectives) -> RobotsDirectives:
        return RobotsDirectives(self.noindex or other.noindex, self.nofollow or other.nofollow)


def _directives(tokens: Iterable[str]) -> RobotsDirectives:
    words = {token.strip().lower() for token in tokens}
    none = "none" in words
    return RobotsDirectives(noindex=none or "noindex" in words, nofollow=none or "nofollow" in words)


class PageTags:
    """The elements of a page that its judgement reads, in document order, found in one walk of its tree.

    ``<meta>``, ``<link>``, ``<time>`` and ``<script>`` elements, wherever they are
    (a robots meta tag in the body still counts). One walk of lxml's C iterator replaces an
    XPath query per question (robots, canonical, each metadata date), each of which walked the
    whole tree and wrapped every match in a parsel Selector. render=auto's decision reads the
    scripts from it too.
    """

    __slots__ = ("json_ld", "links", "metas", "root", "scripts", "times")

    def __init__(self, root: Any) -> None:
        self.root = root
        self.metas: list[Any] = []
        self.links: list[Any] = []
        self.times: list[Any] = []
        self.scripts: list[Any] = []
        self.json_ld: list[Any] = []
        for element in _document_elements(root):
            tag = element.tag
            if tag == "meta":
                self.metas.append(element)
            elif tag == "link":
                self.links.append(element)
            elif tag == "time":
                self.times.append(element)
            else:
                self.scripts.append(element)
                if element.get("type") == "application/ld+json":
                    self.json_ld.append(element)

    def inline_scripts(self) -> list[str]:
        """The text of every ``<script>`` without a ``src``, those with any text (blank included)."""
        return [script.text for script in self.scripts if script.text and script.get("src") is None]

    def script_sources(self) -> list[str]:
        """The ``src`` of every ``<script>`` that has one, as written."""
        return [src for script in self.scripts if (src := script.get("src")) is not None]


def _document_elements(root: Any) -> Iterator[Any]:
    """The document's meta, link, time and script elements, as ``//`` finds them from any node.

    libxml2 puts what follows a stray ``</html>`` (a trailing script, a second document pasted
    after the first) in top-level siblings of the root: they count too.
    """
    top = root.getroottree().getroot()
    for element in (top, *top.itersiblings()):
        yield from element.iter("meta", "link", "time", "script")


_last_tags: PageTags | None = None


def page_tags(page: Selector | Any) -> PageTags:
    """The :class:`PageTags` of a parsed page (a parsel Selector or an lxml root element).

    The last page's are kept: the spider asks several questions of one page in a row. The kept
    object holds its tree, so an identity check cannot match another page's.
    """
    global _last_tags
    root = page.root if isinstance(page, Selector) else page
    tags = _last_tags
    if tags is None or tags.root is not root:
        tags = _last_tags = PageTags(root)
    return tags


#: What a page summary keeps of a title and of a description (llms.txt cuts descriptions
#: further): a page cannot make every record of the history and every entry row heavy.
MAX_SUMMARY_TITLE = 300
MAX_SUMMARY_DESCRIPTION = 1000


def _text(element: Any, limit: int = MAX_SUMMARY_TITLE) -> str:
    return " ".join("".join(element.itertext()).split())[:limit] if element is not None else ""


def _document_title(root: Any) -> Any:
    """The page's ``<title>``: the one in its head, else the first outside an inline SVG (whose
    ``<title>`` names an icon: "Close menu")."""
    title = root.find("head/title")
    if title is None:
        title = next((t for t in root.iter("title") if not any(a.tag == "svg" for a in t.iterancestors())), None)
    return title


def page_summary(page: Selector | Any) -> PageSummary:
    """What llms.txt says of a page: its title (``<title>``, else ``og:title``, else its first
    ``<h1>``), its description (meta ``description``, else ``og:description``) and the site's
    name (``og:site_name``), whitespace collapsed, each of bounded length."""
    tags = page_tags(page)
    found: dict[str, str] = {}
    for meta in tags.metas:
        key = (meta.get("name") or meta.get("property") or "").strip().lower()
        if key in ("description", "og:description", "og:title", "og:site_name") and key not in found:
            found[key] = " ".join((meta.get("content") or "").split())[:MAX_SUMMARY_DESCRIPTION]
    root = tags.root
    return PageSummary(
        title=_text(_document_title(root)) or found.get("og:title", "")[:MAX_SUMMARY_TITLE] or _text(root.find(".//h1")),
        description=found.get("description") or found.get("og:description", ""),
        site_name=found.get("og:site_name", "")[:MAX_SUMMARY_TITLE],
    )


def robots_from_meta(page: Selector | Any, agents: Iterable[str]) -> RobotsDirectives:
    """Directives of ``<meta name="robots">`` and of the named agents' own meta tags.

    HTML attribute names are case-insensitive in the parser already; the value
    of ``name`` is not, so it is compared lower-cased.
    """
    names = {"robots", *(agent.lower() for agent in agents)}
    result = RobotsDirectives()
    for meta in page_tags(page).metas:
        name, content = meta.get("name"), meta.get("content")
        if name is not None and content is not None and name.strip().lower() in names:
            result = result.merge(_directives(content.split(",")))
    return result


def robots_from_header(values: Iterable[str | bytes], agents: Iterable[str]) -> RobotsDirectives:
    """Directives of ``X-Robots-Tag`` header values.

    A value may start with ``agent:`` and then applies to that agent only;
    ``unavailable_after: <date>`` is a directive, not an agent.
    """
    wanted = {agent.lower() for agent in agents}
    result = RobotsDirectives()
    for raw in values:
        value = raw.decode("latin-1") if isinstance(raw, bytes) else raw
        head, sep, rest = value.partition(":")
        agent = head.strip().lower()
        if sep and agent not in _COLON_DIRECTIVES and "," not in head:
            if agent not in wanted:
                continue
            value = rest
        result = result.merge(_directives(value.split(",")))
    return result


def canonical_from_html(page: Selector | Any) -> str | None:
    """The href of the first ``<link rel="canonical">``, as written."""
    for link in page_tags(page).links:
        rel: str | None = link.get("rel")
        href: str | None = link.get("href")
        if rel is not None and href is not None and "canonical" in rel.lower().split() and href.strip():
            return href.strip()
    return None


def canonical_from_header(values: Iterable[str | bytes]) -> str | None:
    """The target of a ``Link: <url>; rel="canonical"`` header, as written."""
    for raw in values:
        value = raw.decode("latin-1") if isinstance(raw, bytes) else raw
        for match in _LINK_HEADER_ITEM.finditer(value):
            for rel in _REL_PARAM.finditer(match.group(2) or ""):
                words = next(g for g in rel.groups() if g is not None).lower().split()
                if "canonical" in words and match.group(1).strip():
                    return match.group(1).strip()
    return None

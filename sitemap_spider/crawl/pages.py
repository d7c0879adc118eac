"""What a fetched page says about itself: indexability, canonical URL, content type.

These functions read headers and an already parsed document (a parsel
``Selector``, the one Scrapy's response caches and the LinkExtractor uses),
so every page is parsed once.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from parsel import Selector

from sitemap_spider.sitemaps import PageSummary

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

# Directives that carry a colon of their own and so are not "agent: directive".
_COLON_DIRECTIVES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)
_WEEKDAY_ONLY = re.compile(r"unavailable_after\s*:\s*[a-z]+\s*$", re.IGNORECASE)
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


def content_type(response: Any) -> str:
    """A response's ``Content-Type`` header, as text ("" without one)."""
    return (response.headers.get("Content-Type") or b"").decode("latin-1")


def is_html_response(response: Any) -> bool:
    """Whether a text response is an HTML document: by its ``Content-Type``, else by what Scrapy sniffed."""
    header = response.headers.get("Content-Type")
    if header is None:
        return bool(response.__class__.__name__ == "HtmlResponse")
    return is_html(header)


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
    words = set()
    for token in tokens:
        name, sep, argument = token.partition(":")
        name = name.strip().lower()
        if sep and name == "unavailable_after":
            # Google leaves a page out of its results once this date has passed: as noindex then.
            words.add("noindex" if _has_passed(argument) else name)
        else:
            words.add(token.strip().lower())
    none = "none" in words
    return RobotsDirectives(noindex=none or "noindex" in words, nofollow=none or "nofollow" in words)


def _tokens(value: str) -> list[str]:
    """The comma-separated items of a robots value, with an ``unavailable_after`` date whose
    weekday a comma follows (RFC 850 and RFC 1123 forms: ``Friday, 25-Jun-10 ...``) in one piece."""
    tokens = value.split(",")
    joined: list[str] = []
    for token in tokens:
        if joined and _WEEKDAY_ONLY.search(joined[-1]):
            joined[-1] += "," + token
        else:
            joined.append(token)
    return joined


def _has_passed(text: str) -> bool:
    """Whether an ``unavailable_after`` date is in the past; a date that cannot be read is not
    (Google ignores it). A date or time without a zone is read as UTC."""
    text = text.strip()
    try:
        moment = datetime.fromisoformat(text) if text[:4].isdigit() else parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return False
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp() < time.time()


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
            result = result.merge(_directives(_tokens(content)))
    return result


def robots_from_header(values: Iterable[str | bytes], agents: Iterable[str]) -> RobotsDirectives:
    """Directives of ``X-Robots-Tag`` header values.

    An item ``agent: directive`` applies to that agent, and so do the items after it up to the
    next agent's (``otherbot: noarchive, googlebot: noindex``: headers a proxy or CDN merged into
    one line); items before any agent apply to every crawler, and each header value starts anew.
    ``unavailable_after: <date>``, ``max-snippet: <n>`` and the like are directives, not agents.
    """
    wanted = {agent.lower() for agent in agents}
    result = RobotsDirectives()
    for raw in values:
        value = raw.decode("latin-1") if isinstance(raw, bytes) else raw
        ours: list[str] = []
        applies = True
        for token in _tokens(value):
            head, sep, rest = token.partition(":")
            agent = head.strip().lower()
            if sep and agent not in _COLON_DIRECTIVES:
                applies, token = agent in wanted, rest
            if applies:
                ours.append(token)
        result = result.merge(_directives(ours))
    return result


def canonical_from_html(page: Selector | Any) -> str | None:
    """The href of the page's ``<link rel="canonical">``, as written; None without one, and when the
    page names two different ones: Google then ignores them all, and so does the crawl."""
    found: str | None = None
    for link in page_tags(page).links:
        rel: str | None = link.get("rel")
        href: str | None = link.get("href")
        if rel is not None and href is not None and "canonical" in rel.lower().split() and href.strip():
            if found is not None and href.strip() != found:
                return None
            found = href.strip()
    return found


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

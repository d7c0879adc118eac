"""Does a page need a browser? Signs in its static HTML that scripts build what a visitor sees.

Pure functions on a parsed page (and on script text): the spider asks them
for every HTML page in ``render=auto`` mode and renders only pages that give
a reason, so an ordinary site never pays a browser's cost.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from lxml import etree  # type: ignore[import-untyped]
from parsel import Selector

from sitemap_spider.crawl.pages import page_tags
from sitemap_spider.crawl.urls import resolved
from sitemap_spider.render.scripts import adds_content
from sitemap_spider.sitemaps import origin_of

RENDER_MODES = ("never", "auto", "always")

# Ids (and custom element names) of the empty mount points single-page apps render into.
APP_ROOTS = frozenset(
    {"root", "app", "__next", "__nuxt", "___gatsby", "svelte", "app-root", "application", "main-app", "spa-root"}
)
# DOM-building calls: the standard DOM API, jQuery's and the frameworks' mount functions.
_DOM_BUILDING = re.compile(
    r"createElement\s*\(|appendChild\s*\(|insertBefore\s*\(|\.innerHTML\s*[+]?=|insertAdjacentHTML|"
    r"document\.write|replaceChildren|\.append\s*\(|\.prepend\s*\(|\.html\s*\(|"
    r"ReactDOM|createRoot\s*\(|hydrateRoot\s*\(|createApp\s*\(|new\s+Vue\s*\(|customElements\.define"
)
# What makes navigation: links, or routes pushed into the history.
_NAVIGATION = re.compile(r"href|<a[\s>]|pushState|location\s*=|router", re.IGNORECASE)
# Analytics and tag managers: their snippets create <script> elements but never content.
_ANALYTICS = re.compile(
    r"googletagmanager|google-analytics|gtag\s*\(|/gtag/js|gtm\.js|dataLayer|_gaq|_paq|matomo|piwik|fbq\s*\(|"
    r"connect\.facebook\.net|hotjar|clarity\.ms|plausible|cdn\.segment|analytics\.js|"
    r"cloudflareinsights|newrelic|nr-data|sentry|mc\.yandex|umami|hs-scripts|intercom|"
    r"static\.ads-twitter|snap\.licdn|doubleclick",
    re.IGNORECASE,
)
# Libraries whose file name says what they are: they build nothing of the site by themselves.
_LIBRARY_NAME = re.compile(
    r"(^|[/._-])(jquery|bootstrap|popper|lodash|underscore|modernizr|polyfills?|core-js|"
    r"html5shiv|respond|moment|highlight|prism|mathjax|katex|fontawesome|swiper|slick)([._-]|$)",
    re.IGNORECASE,
)
# Visible text below this, with no link, in a page that has scripts: a shell for a script to fill.
NEAR_EMPTY_TEXT = 80


def is_analytics(text: str) -> bool:
    """Whether a script's text or URL belongs to analytics or a tag manager."""
    return bool(_ANALYTICS.search(text))


_cached_analytics = lru_cache(maxsize=4096)(is_analytics)


def _analytics_address(src: str) -> bool:
    """is_analytics for a script's address: a template's pages repeat the same ones (a long one is not kept)."""
    return _cached_analytics(src) if len(src) <= 512 else is_analytics(src)


def builds_dom(script: str) -> bool:
    """Whether script text builds or changes the DOM."""
    return bool(_DOM_BUILDING.search(script))


def builds_navigation(script: str) -> bool:
    """Whether script text builds DOM content that can hold links."""
    return builds_dom(script) and bool(_NAVIGATION.search(script)) and adds_content(script, lambda href: False)


# Every HTML page of an auto crawl is read here, so the reading goes to lxml directly: parsel
# wraps each node an XPath returns in a Selector, which on a javadoc page of a few hundred links
# cost more than the rest of this module (bench/render_bench.py, py-spy).
def _xpath(selector: Selector, query: str) -> list[Any]:
    return selector.root.xpath(query, smart_strings=False)  # type: ignore[no-any-return]


# The document's table of ids, which libxml2's HTML parser fills as it parses: a look-up of the
# mount points' ids, where "//body//*[@id]" walked the whole tree (150-250 us a page of the real
# sites of tests/data, three quarters of the render decision's own work on a static page).
_APP_ROOT_IDS = etree.XPath("id($ids)")
_APP_ROOT_ID_LIST = " ".join(sorted(APP_ROOTS))


def _has_empty_app_root(selector: Selector) -> bool:
    """An empty element in the body whose id names an app's mount point, or an empty ``<app-root>``.

    Ids are matched as written (HTML's ids are case-sensitive, as the frameworks' look-ups are).
    The table answers only for an empty element of the body found by its own id. It keeps the
    first element of each id alone (a ``<script id="app">`` in the head, a filled ``<div id="app">``
    before an empty one), and libxml2 enters the name of an ``<a>`` as an id too (a javadoc
    field's anchor, ``<a name="root">``): whenever it holds anything else, the body is walked.
    """
    found = _APP_ROOT_IDS(selector.root, ids=_APP_ROOT_ID_LIST)
    for element in found:
        if element.get("id") in APP_ROOTS and _in_body(element) and _is_empty(element):
            return True
    if found and any(
        _is_empty(element) for element in _xpath(selector, "//body//*[@id]") if element.get("id") in APP_ROOTS
    ):
        return True
    top = selector.root.getroottree().getroot()
    return any(_is_empty(element) for root in (top, *top.itersiblings()) for element in root.iter("app-root"))


def _in_body(element: Any) -> bool:
    return any(parent.tag == "body" for parent in element.iterancestors())


def _is_empty(element: Any) -> bool:
    return not element.xpath("./*[not(self::noscript)]") and not "".join(
        element.xpath("./text()", smart_strings=False)
    ).strip()


def _near_empty_body(selector: Selector) -> bool:
    # The tags the crawl follows: a frameset page has no body, its frames are its content.
    for element in selector.root.iter("a", "area", "frame", "iframe"):
        if element.get("src" if element.tag in ("frame", "iframe") else "href") is not None:
            return False
    text = " ".join(_xpath(selector, "//body//text()[not(ancestor::script) and not(ancestor::style)]"))
    return len(" ".join(text.split())) < NEAR_EMPTY_TEXT


def static_links(selector: Selector, base_url: str) -> set[str]:
    """The normalised URLs the page links to in its static HTML (``<noscript>`` included)."""
    links = set()
    for value in _xpath(selector, _LINK_VALUES):
        url = resolved(base_url, value.strip())
        if url is not None:
            links.add(url)
    return links


_LINK_VALUES = "//a/@href | //area/@href | //frame/@src | //iframe/@src"


def _known_link(selector: Selector, base_url: str) -> Callable[[str], bool]:
    """Whether an href written by a script leads where a static link of the page already does."""
    written: set[str] | None = None
    links: set[str] | None = None

    def known(href: str) -> bool:
        nonlocal written, links
        if not href or href.startswith("#") or href.lower().startswith(("javascript:", "mailto:", "tel:")):
            return True  # nothing for the crawl to follow
        # Read once, and only for a script that writes links: the hrefs as written first (the
        # usual case, and ten times cheaper than resolving and normalising them all), then normalised.
        if written is None:
            written = {value.strip() for value in _xpath(selector, _LINK_VALUES)}
        if href in written:
            return True
        if links is None:
            links = static_links(selector, base_url)
        url = resolved(base_url, href)
        return url is not None and url in links

    return known


def static_render_reason(selector: Selector, base_url: str = "") -> str | None:
    """Why the static HTML alone shows that a browser would see more, or ``None``.

    Reasons: ``inline_script`` (an inline script may add a link, a robots meta
    tag or a canonical link the static HTML lacks: scripts/adds_content),
    ``app_root`` (an empty single-page-app mount point), ``empty_body``
    (scripts and next to no text or links). Loaders, cosmetic scripts and
    scripts that write links the page has already count for nothing.
    """
    known = _known_link(selector, base_url)
    tags = page_tags(selector)
    scripts = [text for text in tags.inline_scripts() if text.strip()]
    for script in scripts:
        # Analytics snippets are told apart only when they would count: the test reads the whole
        # script, and most scripts add nothing anyway.
        if adds_content(script, known) and not is_analytics(script):
            return "inline_script"
    script_urls = [src for src in tags.script_sources() if not _analytics_address(src)]
    if not scripts and not script_urls:
        return None
    if _has_empty_app_root(selector):
        reason = "app_root"
    elif _near_empty_body(selector):
        reason = "empty_body"
    else:
        return None
    # Analytics alone builds no page: a shell holding only a tracking snippet is just a small page.
    if not script_urls and all(is_analytics(script) for script in scripts):
        return None
    return reason


def site_script_urls(selector: Selector, base_url: str, origin: str) -> list[str]:
    """Same-site script files worth reading: not analytics, not a library named as such.

    A page names its scripts as its template does, and an address resolves alike on every page
    of the same directory (one from the site's root, or with a host, on every page of the host):
    its verdict is kept per (that part of the page's base, the page's origin, the address).
    Resolving every script of every page again was half of the render decision on a static
    page of the Hexo blog (about 200 us for its ~20 scripts).
    """
    urls = []
    bases: dict[bool, str | None] = {}
    for written in page_tags(selector).script_sources():
        src = written.strip()
        rooted = _ROOTED.match(src) is not None
        if rooted not in bases:
            bases[rooted] = _resolution_base(base_url, rooted)
        base = bases[rooted] if rooted or _RELATIVE.match(src) else None
        if base is None or len(base) + len(src) > _MAX_KEPT_LENGTH or _REMOVED_BY_URLSPLIT.search(src):
            url = _site_script(base_url, origin, src)
        else:
            key = (base, origin, src)
            url = _SITE_SCRIPTS.get(key, _UNKNOWN)
            if url is _UNKNOWN:
                url = _site_script(base_url, origin, src)
                if len(_SITE_SCRIPTS) >= _MAX_KEPT:
                    _SITE_SCRIPTS.clear()  # a crawl moves on through a site's directories
                _SITE_SCRIPTS[key] = url
        if url is not None and url not in urls:
            urls.append(url)
    return urls


# What of the base an address's resolution depends on (each form checked against urljoin over
# random addresses): from the site's root ("/js/a.js") or with a host, the base's scheme and
# host; a relative path ("js/a.js", "../a.js") that is not a scheme, the base's directory. Other
# forms (";x", "?v=1", "http:a.js") are resolved on each page.
_ROOTED = re.compile(r"/(?![/\\])|[A-Za-z][A-Za-z0-9+.-]*://[^/?#\\\s]|//[^/?#\\\s]")
_RELATIVE = re.compile(r"(?![A-Za-z][A-Za-z0-9+.-]*:)[A-Za-z0-9_.~%!$&'()*+,=@-]")
_UNKNOWN = "\0"
_SITE_SCRIPTS: dict[tuple[str, str, str], str | None] = {}
_MAX_KEPT = 4096
# urlsplit drops tabs and newlines anywhere in an address: "/\t/" becomes "//", the page's own
# address, which depends on all of the base. Such addresses are resolved on each page.
_REMOVED_BY_URLSPLIT = re.compile(r"[\t\n\r]")
# A verdict is kept for an address and base part of up to this many characters together: a page
# may name a script by a megabyte-long address, which 4096 entries would keep by the gigabyte.
_MAX_KEPT_LENGTH = 1024


def _resolution_base(base_url: str, rooted: bool) -> str | None:
    if rooted:
        parts = urlsplit(base_url)
        return f"{parts.scheme}://{parts.netloc}"
    head = base_url.split("#", 1)[0].split("?", 1)[0]
    start = head.find("://")
    slash = head.rfind("/")
    return None if start < 0 or slash <= start + 2 else head[: slash + 1]


def _site_script(base_url: str, origin: str, src: str) -> str | None:
    """The normalised URL of a script address, when it is a same-site script worth reading."""
    url = resolved(base_url, src)
    if url is None or origin_of(url) != origin or is_analytics(url):
        return None
    path = url.split("?", 1)[0]
    return None if _LIBRARY_NAME.search(path.rsplit("/", 1)[-1]) else url

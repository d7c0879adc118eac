"""A fingerprint of a page's main content: equal across fetches unless the content itself changed.

Dynamic sites put per-request noise in every response: CSRF tokens and nonces,
"generated at" stamps, random "related posts", cache-busting query strings on
assets, navigation that lists the newest items. Hashing the bytes would call
every fetch a change, and content-history dates would become crawl times. The
fingerprint reads the text of the page's main content (``<main>``, else the one
``<article>``, else ``<body>``) from the tree parsel already built, leaving out
the parts that are not content, and image sources without their query.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

# Elements whose whole subtree is not content, or not text: form fields hold tokens in
# their values. A <form> itself is content: MediaWiki's page history is a list inside its
# compare form, and ASP.NET WebForms wrap the whole page in one.
_SKIPPED_TAGS = frozenset({
    "script", "style", "noscript", "template", "nav", "footer", "aside",
    "input", "button", "select", "textarea", "iframe", "svg", "canvas", "dialog",
})  # fmt: skip
# The page's banner; inside an <article>, <section> or <main> a <header> holds the item's
# title (a Drupal views row, a WordPress archive entry), and titles are content.
_BANNER_TAG = "header"
_SECTIONING_TAGS = frozenset({"article", "section", "main"})
_SKIPPED_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "dialog"})
# Words that name a box changing per request or per day without the page changing, when
# they are the first part of a class or id ("widget_recent_entries", "related-posts",
# "relatedPosts", "csrf-token", "sidebar-first").
_NOISE_HEADS = frozenset({
    "related", "recommended", "recommendations", "sidebar", "sidebars", "widget", "widgets",
    "share", "sharing", "social", "cookie", "cookies", "advert", "adverts", "advertisement",
    "advertising", "ad", "ads", "promo", "breadcrumb", "breadcrumbs", "csrf", "nonce", "captcha",
    "timestamp",
})  # fmt: skip
# At the end of a class, only the words that name a whole box ("left-sidebar", "yarpp-related"):
# "elementor-widget" and jQuery UI's "ui-widget" are components that hold the content, and
# MediaWiki's "mw-category-generated" is a category's member list.
_NOISE_TAILS = frozenset({
    "sidebar", "sidebars", "related", "breadcrumb", "breadcrumbs", "ads", "advertisement",
})  # fmt: skip
# A first part that makes the class a property of the element, not its kind: WordPress's
# post classes tag-<slug> and category-<slug> ("tag-social-media"), and wrappers' has-sidebar.
_LABEL_HEADS = frozenset({
    "tag", "tags", "category", "categories", "cat", "term", "taxonomy", "topic", "format", "type",
    "status", "has", "no", "with", "without", "is",
})  # fmt: skip
_NAME_PARTS = re.compile(r"[-_]+|(?<=[a-z])(?=[A-Z])")
# Text that stamps the response rather than the content: "generated at 10:11:12", "rendered
# in 0.02 s". Only with a number in the sentence (a time, a date, a duration): "How this
# blog is built" is a title, and a title that changes is a change.
_STAMP_SENTENCE = re.compile(
    r"\b(?:generated|rendered|served|built|cached|page\s+(?:created|loaded))\b"
    r"(?=(?:[^.\n]|\.(?=\S))*\d)(?:[^.\n]|\.(?=\S))*",
    re.IGNORECASE,
)
#: Changes whenever the same page would give another fingerprint (see same_content).
VERSION = "v2:"
_STAMP_WORDS = ("generated", "rendered", "served", "built", "cached")
# "page" alone is on most pages ("Page 2", "Next page"): only "page created/loaded" starts a stamp.
_PAGE_STAMP = re.compile(r"page\s+(?:created|loaded)")
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?:\s*(?:Z|[+-]\d{2}:?\d{2}|UTC|GMT))?")


# Elements with a role, whose value is compared in Python: a third faster than the comparison
# in the XPath, on pages without <main> (bench/page_reading.py).
_WITH_ROLE = etree.XPath("descendant-or-self::*[@role]")
# A walk that tells where each element starts and ends, and can leave a subtree out.
_WALK_EVENTS = ("start", "end", "comment", "pi")


def content_fingerprint(root: Any) -> str:
    """The fingerprint (hex) of the main content of an lxml HTML tree; the tree is not changed.

    ``root`` is ``response.selector.root``: the crawl parses each page once.
    """
    parts = _collect(_main(root))
    # One pass of the patterns over the whole text, not one per text node (5x faster);
    # the newlines between nodes end a stamp's sentence at its element.
    text = "\n".join(parts)
    lowered = text.lower()
    # Python's re tries the stamp's alternation at every position: look for its words first.
    if any(word in lowered for word in _STAMP_WORDS) or ("page" in lowered and _PAGE_STAMP.search(lowered)):
        text = _STAMP_SENTENCE.sub(" ", text)
    if ":" in text:
        text = _CLOCK.sub(" ", text)
    text = " ".join(text.split())
    return VERSION + hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def same_content(before: str | None, now: str | None) -> bool:
    """Whether two fingerprints say the content did not change.

    Fingerprints of another version of this module cannot be compared: taken as unchanged,
    so that an upgrade does not date every page at the crawl after it.
    """
    if before == now or before is None or now is None:
        return before == now
    return before.split(":", 1)[0] != now.split(":", 1)[0]


def _main(root: Any) -> Any:
    """The element holding the page's main content: the one <main>, else the one <article>, else <body>."""
    # The role search in lxml's XPath, not a Python loop over every element: half the cost on
    # pages without <main> (a javadoc, Sphinx), bench/page_reading.py.
    mains = list(root.iter("main")) or [element for element in _WITH_ROLE(root) if element.get("role") == "main"]
    if len(mains) == 1:
        return mains[0]
    articles = list(root.iter("article"))
    if len(articles) == 1:
        return articles[0]
    return next(root.iter("body"), root)


def _is_sectioning(element: Any) -> bool:
    return element.tag in _SECTIONING_TAGS or element.get("role") == "main"


@lru_cache(maxsize=4096)
def is_noise_name(names: str) -> bool:
    """Whether a class attribute or id names a box that is not content (see the word sets above).

    Whole tokens are read part by part, never as substrings: "tag-share" is a WordPress
    post tagged "share", "no-sidebars" a page without one.
    """
    for token in names.split():
        parts = [part.lower() for part in _NAME_PARTS.split(token) if part]
        if not parts:
            continue
        if parts[0] in _NOISE_HEADS:
            return True
        if len(parts) > 1 and parts[0] not in _LABEL_HEADS and parts[-1] in _NOISE_TAILS:
            return True
    return False


def _is_noise(element: Any, main: Any) -> bool:
    """Whether an element inside ``main`` is not content (comments and processing instructions are not)."""
    tag = element.tag
    if not isinstance(tag, str):
        return True
    if tag in _SKIPPED_TAGS or (tag == _BANNER_TAG and not _in_section(element, main)):
        return True
    if not element.attrib:
        return False  # most elements: no attribute to read
    if element.get("hidden") is not None:
        return True
    role = element.get("role")
    if role is not None and role.lower() in _SKIPPED_ROLES:
        return True
    # Class and id apart: is_noise_name's cache then sees each site's few class strings.
    names = element.get("class")
    ident = element.get("id")
    return (names is not None and is_noise_name(names)) or (ident is not None and is_noise_name(ident))


def _in_section(element: Any, main: Any) -> bool:
    """Whether a <header> is an item's (inside an <article>, <section> or <main>, ``main`` included)."""
    node = element
    while node is not None:
        if _is_sectioning(node):
            return True
        if node is main:
            return False
        node = node.getparent()
    return False


def _collect(main: Any) -> list[str]:
    """The text and image sources of ``main``, in document order, less what is not content.

    One walk of lxml's (iterwalk): a subtree that is not content is left out whole, and the
    text after it (its tail) is content. About a fifth faster than a recursive walk of the
    children (bench/page_reading.py), for the same parts.
    """
    parts: list[str] = []
    append = parts.append
    walk = etree.iterwalk(main, events=_WALK_EVENTS)
    for event, element in walk:
        if event != "start":  # an element's end, a comment, a processing instruction: the text after it
            if element is not main and (tail := element.tail):
                append(tail)
            continue
        if element is not main and _is_noise(element, main):
            walk.skip_subtree()  # its "end" still comes, with its tail
            continue
        if element.tag == "img" and (src := element.get("src")):
            append("img:" + src.split("?", 1)[0])
        if text := element.text:
            append(text)
    return parts

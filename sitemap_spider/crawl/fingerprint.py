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
from typing import Any

# Elements whose whole subtree is not content (or not text: forms' fields hold tokens).
_SKIPPED_TAGS = frozenset({
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside",
    "form", "input", "button", "select", "textarea", "iframe", "svg", "canvas", "dialog",
})  # fmt: skip
_SKIPPED_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "dialog"})
# Class or id words of boxes that change per request or per day without the page changing.
_NOISE_NAMES = re.compile(
    r"(?:^|[\s_-])(?:related|recommend\w*|sidebar|widget|share|social|cookie\w*|advert\w*|ads?|promo|"
    r"breadcrumbs?|csrf|nonce|token|timestamp|generated)(?:$|[\s_-])",
    re.IGNORECASE,
)
# Text that stamps the response rather than the content: "generated at ...", clock times.
_STAMP_SENTENCE = re.compile(
    r"\b(?:generated|rendered|served|built|cached|page\s+(?:created|loaded))\b(?:[^.\n]|\.(?=\S))*",
    re.IGNORECASE,
)
#: Changes whenever the same page would give another fingerprint (see same_content).
VERSION = "v1:"
_STAMP_WORDS = ("generated", "rendered", "served", "built", "cached", "page")
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?:\s*(?:Z|[+-]\d{2}:?\d{2}|UTC|GMT))?")


def content_fingerprint(root: Any) -> str:
    """The fingerprint (hex) of the main content of an lxml HTML tree; the tree is not changed.

    ``root`` is ``response.selector.root``: the crawl parses each page once.
    """
    parts: list[str] = []
    _collect(_main(root), parts)
    # One pass of the patterns over the whole text, not one per text node (5x faster);
    # the newlines between nodes end a stamp's sentence at its element.
    text = "\n".join(parts)
    lowered = text.lower()
    # Python's re tries the stamp's alternation at every position: look for its words first.
    if any(word in lowered for word in _STAMP_WORDS):
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
    mains = [e for e in root.iter("main")] or [e for e in root.iter() if e.get("role") == "main"]
    if len(mains) == 1:
        return mains[0]
    articles = list(root.iter("article"))
    if len(articles) == 1:
        return articles[0]
    return next(root.iter("body"), root)


def _is_noise(element: Any) -> bool:
    tag = element.tag
    if not isinstance(tag, str):
        return True  # comments and processing instructions
    if tag in _SKIPPED_TAGS or element.get("hidden") is not None:
        return True
    role = element.get("role")
    if role is not None and role.lower() in _SKIPPED_ROLES:
        return True
    names = element.get("class")
    ident = element.get("id")
    if ident is not None:
        names = f"{names} {ident}" if names else ident
    return names is not None and _NOISE_NAMES.search(names) is not None


def _collect(element: Any, parts: list[str]) -> None:
    """An element's text and image sources, in document order (the element itself is content)."""
    if element.tag == "img":
        src = element.get("src")
        if src:
            parts.append("img:" + src.split("?", 1)[0])
    if element.text:
        parts.append(element.text)
    for child in element:
        if not _is_noise(child):
            _collect(child, parts)
        if child.tail:
            parts.append(child.tail)  # the text after a skipped element is content

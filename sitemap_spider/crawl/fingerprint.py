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
from collections.abc import Iterator
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
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?:\s*(?:Z|[+-]\d{2}:?\d{2}|UTC|GMT))?")
_SPACE = re.compile(r"\s+")


def content_fingerprint(root: Any) -> str:
    """The fingerprint (hex) of the main content of an lxml HTML tree; the tree is not changed.

    ``root`` is ``response.selector.root``: the crawl parses each page once.
    """
    digest = hashlib.blake2b(digest_size=12)
    main = _main(root)
    # The main element itself is content whatever its class says; its tail is outside it.
    for token in _content(main):
        digest.update(token.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()


def _main(root: Any) -> Any:
    """The element holding the page's main content."""
    for path in ("//main", "//*[@role='main']"):
        found = root.xpath(path)
        if len(found) == 1:
            return found[0]
    articles = root.xpath("//article")
    if len(articles) == 1:
        return articles[0]
    body = root.xpath("//body")
    return body[0] if body else root


def _is_noise(element: Any) -> bool:
    tag = element.tag
    if not isinstance(tag, str):
        return True  # comments and processing instructions
    if tag.lower() in _SKIPPED_TAGS or element.get("hidden") is not None:
        return True
    if (element.get("role") or "").lower() in _SKIPPED_ROLES:
        return True
    names = f"{element.get('class') or ''} {element.get('id') or ''}"
    return bool(names.strip()) and _NOISE_NAMES.search(names) is not None


def _content(element: Any) -> Iterator[str]:
    """An element's text and image sources, in document order."""
    if element.tag == "img" and element.get("src"):
        yield "img:" + element.get("src").split("?", 1)[0]
    yield from _clean(element.text)
    for child in element:
        if not _is_noise(child):
            yield from _content(child)
        yield from _clean(child.tail)  # the text after a skipped element is content


def _clean(text: str | None) -> Iterator[str]:
    if not text:
        return
    text = _CLOCK.sub(" ", _STAMP_SENTENCE.sub(" ", text))
    text = _SPACE.sub(" ", text).strip()
    if text:
        yield text

"""The content images of a page, as written: ``<img>``, ``<picture><source>``, ``og:image``.

Pure functions on the tree parsel built. Which of them are listed (their host, how many) is
decided by the caller once they are resolved (enrich.py). Images are never downloaded: a
tracking pixel or an icon is known by the size its tag declares, or not at all.

An element's image is the one a search engine sees once the page is rendered and scrolled
through (see :func:`element_image`): a lazy loader's real URL, never its placeholder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from parsel import Selector

#: Where lazy loaders (lazysizes, WordPress's and jQuery's plugins) keep the real image until it
#: comes into view, when they copy it into srcset or src: src is then a placeholder. In order of
#: preference: a set of candidates first, as srcset comes before src.
_LAZY_SETS: Final = ("data-srcset", "data-lazy-srcset")
_LAZY_URLS: Final = ("data-src", "data-lazy-src", "data-original")
_LAZY: Final = " or ".join(f"@{name}" for name in (*_LAZY_SETS, *_LAZY_URLS))
# One XPath for the three sources, in document order.
_IMAGES: Final = (
    f"//img[@src or @srcset or {_LAZY}] | //picture/source[@srcset or {_LAZY}]"
    ' | //meta[(@property="og:image" or @property="og:image:url" or @property="og:image:secure_url") and @content]'
)
_DESCRIPTOR: Final = re.compile(r"^(\d+(?:\.\d+)?)([wx])$", re.IGNORECASE)
_PIXELS: Final = re.compile(r"\s*(\d+)(?:px)?\s*$", re.IGNORECASE)


def largest_candidate(srcset: str) -> str | None:
    """The URL of the largest candidate of a ``srcset`` (by its w, else its x descriptor)."""
    best: tuple[float, str] | None = None
    for candidate in srcset.split(","):
        parts = candidate.split()
        if not parts:
            continue
        size = 1.0  # no descriptor: 1x
        if len(parts) > 1:
            match = _DESCRIPTOR.match(parts[1])
            if match is None:
                continue
            # A width outranks any density: 800w is larger than 2x in any real page.
            size = float(match.group(1)) * (1.0 if match.group(2).lower() == "x" else 1_000.0)
        if best is None or size > best[0]:
            best = (size, parts[0])
    return None if best is None else best[1]


def declared_size(value: str | None) -> int | None:
    """A ``width`` / ``height`` attribute in pixels, or None (absent, a percentage, ...)."""
    if value is None:
        return None
    match = _PIXELS.match(value)
    return None if match is None else int(match.group(1))


def element_image(attributes: Mapping[str, str]) -> str | None:
    """The image of an ``<img>`` or ``<source>`` as a rendering crawler sees it; None without one.

    - A lazy loader's attribute (``data-srcset``, ``data-lazy-srcset``, ``data-src``,
      ``data-lazy-src``, ``data-original``) holds the real image: taken, its largest candidate
      for a set; src and srcset hold the placeholder shown until then.
    - Else the largest ``srcset`` candidate, and ``src`` without one. A srcset of a single URL
      without a descriptor that is not src's is a placeholder laid over a real src (Hexo's Fluid
      theme: ``<img src=REAL srcset=/img/loading.gif lazyload>``, removed when the image is in
      view): src is taken.
    - A ``data:`` URI is never taken: the next source is (a srcset of one over a real src).
    """
    for name in _LAZY_SETS:
        if url := _url(largest_candidate(attributes.get(name) or "")):
            return url
    for name in _LAZY_URLS:
        if url := _url(attributes.get(name)):
            return url
    src = _url(attributes.get("src"))
    srcset = attributes.get("srcset") or ""
    largest = _url(largest_candidate(srcset))
    if largest is None or (src is not None and largest != src and _one_bare_url(srcset)):
        return src
    return largest


def _url(value: str | None) -> str | None:
    """``value`` stripped, or None when it is empty or a ``data:`` URI."""
    value = (value or "").strip()
    return value if value and not value.lower().startswith("data:") else None


def _one_bare_url(srcset: str) -> bool:
    """Whether a srcset is a single candidate without a descriptor (``srcset="/img/loading.gif"``)."""
    candidates = [candidate.split() for candidate in srcset.split(",") if candidate.strip()]
    return len(candidates) == 1 and len(candidates[0]) == 1


def image_sources(selector: Selector, min_size: int) -> list[str]:
    """The image URLs of a page as written (:func:`element_image`), in page order, without ``data:``
    URIs, declared 1x1 pixels, and images with a declared width or height under ``min_size`` pixels."""
    found: list[str] = []
    for element in selector.xpath(_IMAGES):
        attributes = element.attrib
        tag = element.root.tag
        if tag == "meta":
            url = _url(attributes.get("content"))
        else:
            sizes = [declared_size(attributes.get(name)) for name in ("width", "height")]
            if sizes == [1, 1] or any(size is not None and size < min_size for size in sizes):
                continue
            url = element_image(attributes)
        if url:
            found.append(url)
    return found

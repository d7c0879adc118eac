"""The content images of a page, as written: ``<img>``, ``<picture><source>``, ``og:image``.

Pure functions on the tree parsel built. Which of them are listed (their host, how many) is
decided by the caller once they are resolved (enrich.py). Images are never downloaded: a
tracking pixel or an icon is known by the size its tag declares, or not at all.
"""

from __future__ import annotations

import re
from typing import Final

from parsel import Selector

# One XPath for the three sources, in document order.
_IMAGES: Final = (
    "//img[@src or @srcset] | //picture/source[@srcset]"
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


def image_sources(selector: Selector, min_size: int) -> list[str]:
    """The image URLs of a page as written, in page order, without ``data:`` URIs, declared
    1x1 pixels, and images with a declared width or height under ``min_size`` pixels."""
    found: list[str] = []
    for element in selector.xpath(_IMAGES):
        attributes = element.attrib
        tag = element.root.tag
        if tag == "meta":
            url: str | None = attributes.get("content")
        else:
            sizes = [declared_size(attributes.get(name)) for name in ("width", "height")]
            if sizes == [1, 1] or any(size is not None and size < min_size for size in sizes):
                continue
            srcset = attributes.get("srcset")
            url = (largest_candidate(srcset) if srcset else None) or attributes.get("src")
        if url:
            url = url.strip()
            if url and not url.lower().startswith("data:"):
                found.append(url)
    return found

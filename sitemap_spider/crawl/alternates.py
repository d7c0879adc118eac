"""The hreflang alternates a page declares: ``<link rel="alternate" hreflang href>`` and the
``Link: <url>; rel="alternate"; hreflang="fr"`` header. As written: the spider resolves them.

Read from the tree parsel built already (the rendered DOM when the page was rendered); the
spider looks at a page's tree only when its bytes hold the word (crawl/enrich.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from parsel import Selector

_LINK_HEADER_ITEM: Final = re.compile(r"<([^>]*)>\s*((?:;\s*[^;,]+)*)")
_PARAM: Final = re.compile(r"""(\w+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;,]+))""")


def alternates_in_html(selector: Selector) -> list[tuple[str, str]]:
    """(hreflang, href) of each ``<link rel="alternate" hreflang href>``, as written."""
    found: list[tuple[str, str]] = []
    # The tree's <link> elements, walked in C (a little cheaper than an XPath, which wraps each
    # element in a Selector). The parser lower-cases attribute names.
    for link in selector.root.iter("link"):
        attributes = link.attrib
        if "hreflang" in attributes and "alternate" in (attributes.get("rel") or "").lower().split():
            href = (attributes.get("href") or "").strip()
            if href:
                found.append(((attributes.get("hreflang") or "").strip(), href))
    return found


def alternates_in_header(values: Iterable[str | bytes]) -> list[tuple[str, str]]:
    """(hreflang, href) of each ``Link`` header item with rel="alternate" and an hreflang."""
    found: list[tuple[str, str]] = []
    for raw in values:
        value = raw.decode("latin-1") if isinstance(raw, bytes) else raw
        if "hreflang" not in value.lower():
            continue
        for item in _LINK_HEADER_ITEM.finditer(value):
            params = {
                match.group(1).lower(): next(group for group in match.groups()[1:] if group is not None)
                for match in _PARAM.finditer(item.group(2) or "")
            }
            href = item.group(1).strip()
            if "alternate" in params.get("rel", "").lower().split() and "hreflang" in params and href:
                found.append((params["hreflang"].strip(), href))
    return found

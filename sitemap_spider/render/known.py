"""What earlier crawls learnt of a site's navigation scripts, kept in the crawl history.

A page whose only reason to render is its same-site script files (``script_file``) is
rendered once per crawl and per set of such scripts, as a probe. When the probe found
nothing its static HTML lacked, rendering that set gains nothing: the next crawl (the
daily recrawl, where the changed pages are read, and one page of each set, whose scripts
are read again: render/revisits.py) need not start a browser to learn it again. A set is
trusted while:

- each of its script files is byte for byte the one probed (a digest of each file is
  kept, and a crawl compares the files it reads; a file that changed drops the set);
- its probe is at most ``TRUSTED_DAYS`` old: a page's markup may change how the same
  scripts behave, so a weekly crawl still probes once.

A set is kept only when its probe answered 200, the page settled (it was not read as it stood at
the render's timeout), and its scripts wrote no link at all at load (the rendered page has the very
links of its static HTML, as a search box or a menu built on a click does). A set whose scripts
build links at load is rendered in every crawl, even when they were all in the static HTML then: a
page may lose its static copy of a link the next day. A set whose probe found something is never
kept either.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from typing import Any

from sitemap_spider.crawl.links import LINK_ATTRS, LINK_TAGS

#: How long a probe that found nothing is trusted, in days.
TRUSTED_DAYS = 7.0
# Sets kept at most (a site with more script sets than this renders as before).
_MAX_SETS = 1_000
_DAY = 86_400.0


def quiet_render(static: Any, rendered: Any) -> bool:
    """Whether a probe may be kept: it answered 200, the page settled (render/ready.py), and its
    scripts, at load, added, removed or changed none of the page's links (Scrapy responses)."""
    methods = rendered.meta.get("playwright_page_methods") or ()
    settled = all(getattr(method, "result", True) is not False for method in methods)
    if rendered.status != 200 or not settled:
        return False
    return _links(static.selector.root) == _links(rendered.selector.root)


def _links(root: Any) -> Counter[str]:
    found = (element.get(attr) for element in root.iter(*LINK_TAGS) for attr in LINK_ATTRS)
    return Counter(value for value in found if value is not None)


def script_digest(body: bytes) -> str:
    """The digest a script file is recognised by in the next crawl."""
    return hashlib.blake2b(body, digest_size=12).hexdigest()


class ScriptSetKnowledge:
    """Script sets whose render found nothing, from earlier crawls and from this one."""

    def __init__(self, stored: str | None = None, now: float | None = None) -> None:
        self._now = time.time() if now is None else now
        # A set -> (each script's digest when probed, when probed).
        self._known: dict[tuple[str, ...], tuple[tuple[str, ...], float]] = {}
        self._gained: set[tuple[str, ...]] = set()  # sets whose probe found something, this crawl
        for item in _read(stored):
            try:
                scripts, digests = tuple(map(str, item["scripts"])), tuple(map(str, item["digests"]))
                probed = float(item["probed"])
            except (KeyError, TypeError, ValueError):
                continue  # written by another version, or damaged: learnt again
            if len(scripts) == len(digests) and self._now - probed <= TRUSTED_DAYS * _DAY:
                self._known[scripts] = (digests, probed)

    def found_nothing_before(self, scripts: tuple[str, ...], digests: dict[str, str]) -> bool:
        """Whether a probe of ``scripts`` found nothing, each file as this crawl read it (``digests``)."""
        known = self._known.get(scripts)
        if known is None or scripts in self._gained:
            return False
        return all(digests.get(script) == digest for script, digest in zip(scripts, known[0], strict=True))

    def learn(self, scripts: tuple[str, ...], gained: bool, digests: dict[str, str]) -> None:
        """A probe of a page whose reason was ``scripts`` ended."""
        if gained:
            self._gained.add(scripts)
            self._known.pop(scripts, None)
        elif scripts not in self._gained and all(script in digests for script in scripts):
            if scripts in self._known or len(self._known) < _MAX_SETS:
                self._known[scripts] = (tuple(digests[script] for script in scripts), self._now)

    def dumps(self, digests: dict[str, str]) -> str | None:
        """What the next crawl is to trust (``digests``: the script files this crawl read); None: nothing."""
        kept = []
        for scripts, (known, probed) in sorted(self._known.items()):
            pairs = zip(scripts, known, strict=True)
            if any(script in digests and digests[script] != digest for script, digest in pairs):
                continue  # a file changed since the probe
            kept.append({"scripts": list(scripts), "digests": list(known), "probed": probed})
        return json.dumps(kept, separators=(",", ":")) if kept else None


def _read(stored: str | None) -> list[Any]:
    if not stored:
        return []
    try:
        value = json.loads(stored)
    except ValueError:
        return []
    return value if isinstance(value, list) else []

"""What the crawl history keeps of a page's render decision, and which pages a recrawl fetches whole for it.

A 304 says that a page's HTML is as it was; not that what its scripts build is. A page's record
keeps (``PageRecord.render``) what its render decision depended on beyond its HTML, and a crawl
that renders (render=auto or always, with a browser) asks for a 304 only where that cannot have
changed:

- ``browser``: the page went to the browser (rendered, or its render or probe failed). Its links
  came from a DOM that its scripts and the data they load built: it is fetched whole and goes
  through the render decision in every crawl, as without a history.
- a key of its navigation script set (the same-site script files that build links, render/signs.py):
  the first page of each set that a crawl requests is fetched whole, and its render decision reads
  the set's files again (once per crawl), so a file that changed is probed again (render/known.py
  compares each file's digest). The set's other pages answer 304: navigation built by shared
  scripts is the same on every page that loads them, as within a crawl.
- RENDER_UNDECIDED: not known (a record of an earlier release, or written by a crawl that could
  not render): fetched whole once.
- none: the static HTML decided alone; a 304 lists the page from its record.

A page with neither a render nor a navigation script set costs a recrawl nothing more.
"""

from __future__ import annotations

import hashlib
from typing import Final

from sitemap_spider.history.record import RENDER_UNDECIDED

BROWSER: Final = "browser"
# Script sets claimed in one crawl at most; past this, a set's pages are asked for a 304 as before.
_MAX_SETS = 10_000


def script_set_key(scripts: tuple[str, ...]) -> str:
    """How a record names the navigation script set its page loads."""
    return hashlib.blake2b("\n".join(scripts).encode(), digest_size=8).hexdigest()


def history_mark(can_render: bool, browser: bool, script_set: str | None) -> str | None:
    """``PageRecord.render`` of a page this crawl judged: ``browser``, whether it went to the browser;
    ``script_set``, the key of its navigation script set, if it has one."""
    if not can_render:
        return RENDER_UNDECIDED
    return " ".join(part for part in (BROWSER if browser else None, script_set) if part) or None


class Revisits:
    """This crawl's choice of the known pages fetched whole for their render decision."""

    def __init__(self) -> None:
        self._claimed: set[str] = set()  # the script sets whose page to fetch whole is chosen

    def why(self, mark: str | None) -> str | None:
        """Why the page whose record holds ``mark`` is fetched whole (a stat's name); None: a 304 will do.

        Asked once per request made for a page (crawl/recrawl.py ``prepare``): the first page of a
        script set asked about is the one fetched whole.
        """
        if not mark:
            return None
        if mark == RENDER_UNDECIDED:
            return "undecided"
        parts = mark.split()
        new = [part for part in parts if part != BROWSER and part not in self._claimed]
        if new and len(self._claimed) + len(new) > _MAX_SETS:
            new = []
        self._claimed.update(new)
        return "rendered" if BROWSER in parts else "scripts" if new else None

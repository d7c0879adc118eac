"""One page's record in the crawl history, and its forms on the wire (JSON) and on disk (a row)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

#: What this crawl found of a page compared with the history: the stats count each.
Outcome = Literal["new", "changed", "unchanged", "not_modified", "kept"]

#: ``PageRecord.extensions`` of a record written before records kept extensions: not known.
EXTENSIONS_UNKNOWN: Final = "?"
#: ``PageRecord.render`` of a record whose render decision is not known: written before records kept
#: it, or by a crawl that could not render (render=never, no browser).
RENDER_UNDECIDED: Final = "?"
#: The columns of a record, in row order.
COLUMNS = (
    "url", "loc", "fingerprint", "last_modified", "etag", "first_seen", "changed_at", "lastmod",
    "status", "last_ok", "outlinks", "content_digest", "outcome", "extensions", "excluded", "render",
    "canonical",
)  # fmt: skip


@dataclass(frozen=True)
class PageRecord:
    """What the history keeps of one listed page (times in seconds since the epoch, UTC).

    ``url`` is the URL crawled, ``loc`` the one listed; ``status`` is the last status
    (0: no response); ``last_ok`` the last time the page was fetched well (200 or 304);
    ``outlinks`` its links on the site, compressed (see :func:`pack_links`);
    ``extensions`` its sitemap extension fields (alternates, images, videos, news) as JSON text,
    None without any (EXTENSIONS_UNKNOWN: not known): a page that answers 304 or is kept on a
    bad day is listed with them again. ``excluded``: for a page fetched well but not listed for
    what it says of itself (noindex, a canonical elsewhere, not HTML), the reason and its detail
    (:func:`exclusion`): a 304 of it gives the same verdict and follows its stored links, so a
    recrawl fetches none of them whole again. Such a record has no ``loc``. ``render``: what the
    page's render decision depended on beyond its HTML (render/revisits.py): None for nothing, so a
    304 lists it as it was; RENDER_UNDECIDED when not known (a record of an earlier layout, read
    from a row or the wire without it, is one). ``canonical``: the other URL (crawled) the page
    names as canonical: a page listed only if that URL is not (crawl/canonicals.py), or one left
    out for a canonical on another site; None for a page that names itself or none (and for every
    record of an earlier layout, read without it).
    """

    url: str
    loc: str
    fingerprint: str | None
    last_modified: str | None
    etag: str | None
    first_seen: float
    changed_at: float | None
    lastmod: str | None
    status: int
    last_ok: float
    outlinks: bytes = b""
    content_digest: str | None = None
    outcome: Outcome = "new"
    extensions: str | None = None
    excluded: str | None = None
    render: str | None = None
    canonical: str | None = None

    @property
    def exclusion(self) -> tuple[str, str | None] | None:
        """Why the page is not listed (reason, detail), for a record of a page left out."""
        if self.excluded is None:
            return None
        reason, _, detail = self.excluded.partition("\t")
        return reason, detail or None

    def row(self) -> tuple[Any, ...]:
        # Not dataclasses.astuple, which deep-copies every field: 10x slower, once per page.
        return (
            self.url, self.loc, self.fingerprint, self.last_modified, self.etag, self.first_seen,
            self.changed_at, self.lastmod, self.status, self.last_ok, self.outlinks, self.content_digest,
            self.outcome, self.extensions, self.excluded, self.render, self.canonical,
        )  # fmt: skip

    @classmethod
    def from_row(cls, row: Iterable[Any]) -> PageRecord:
        values = _of_this_layout(list(row))
        values[10] = bytes(values[10] or b"")
        return cls(*values)

    def wire(self) -> list[Any]:
        """The record as a list of JSON values (the links in hex), for a message that holds it."""
        values = self.row()
        return [*values[:10], values[10].hex(), *values[11:]]

    @classmethod
    def from_wire(cls, values: list[Any]) -> PageRecord:
        values = _of_this_layout(values)
        values[10] = bytes.fromhex(values[10])
        return cls(*values)

    def to_json(self) -> str:
        """The record as JSON text (in Redis, and in a JOBDIR's state)."""
        return json.dumps(self.wire(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> PageRecord:
        return cls.from_wire(json.loads(text))

    def links(self, origin: str) -> list[str]:
        """The page's links on the site, as absolute URLs."""
        return unpack_links(self.outlinks, origin)


#: Where ``render`` is in a record's values: a record of a layout before it has fewer.
_RENDER = COLUMNS.index("render")


def _of_this_layout(values: list[Any]) -> list[Any]:
    """A record's values as this layout has them: one of an earlier layout (a Redis copy, a JOBDIR state
    of an earlier release) lacks the last fields, added in COLUMNS' order, which were none (``canonical``:
    none named, or not kept), but for its render decision, not known when it has no ``render``."""
    if len(values) >= len(COLUMNS):
        return values
    padded = [*values, *[None] * (len(COLUMNS) - len(values))]
    if len(values) <= _RENDER:
        padded[_RENDER] = RENDER_UNDECIDED
    return padded


def exclusion(reason: str, detail: str | None) -> str:
    """``PageRecord.excluded`` of a page left out for ``reason`` (its detail after a tab)."""
    return reason if not detail else f"{reason}\t{detail}"


def pack_links(urls: Iterable[str], *origins: str) -> bytes:
    """The links of a page on one of ``origins`` as their paths, once each, compressed: a few bytes a link."""
    prefixes = tuple(dict.fromkeys(origin + "/" for origin in origins))
    paths = dict.fromkeys(url[url.index("/", url.index("//") + 2):] for url in urls if url.startswith(prefixes))
    return zlib.compress("\n".join(paths).encode("utf-8")) if paths else b""


def unpack_links(data: bytes, origin: str) -> list[str]:
    if not data:
        return []
    return [origin + path for path in zlib.decompress(data).decode("utf-8").split("\n")]

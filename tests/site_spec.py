"""How a fixture site is described: its route table, and what a crawl must make of each URL.

A ``SiteSpec`` holds the routes a ``SiteServer`` (tests/site_server.py) answers from, each
``Route`` knowing the outcome the sitemap spider must reach for its URL (``Listed`` with the
exact lastmod, or ``Excluded`` with a reason). ``SiteSpec.expected_listed()`` then gives the
exact expected sitemap set. The sites themselves are built with ``SiteBuilder``
(tests/site_builder.py): see tests/site_cases.py and tests/generated_site.py.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

PUBLIC_ORIGIN: Final = "https://www.example.com"


# ---------------------------------------------------------------------------
# Expected outcomes
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Listed:
    """The URL must be in the sitemap once, with exactly this lastmod (None: no lastmod)."""

    lastmod: str | None = None


@dataclass(frozen=True)
class Excluded:
    """The URL must not be in the sitemap.

    ``reason`` is the report reason the contract asks for; ``also`` holds other reasons
    accepted where the contract leaves the choice open (a redirect loop may surface as
    ``redirect`` or ``duplicate``). ``reported`` says the JSON report must name the URL:
    False for URLs the spider may legitimately never look at (off-site links, the
    middle hops of a chain). ``lastmod`` is what the entry would carry if a setting let
    the page in (SITEMAP_INCLUDE_NOINDEX, SITEMAP_INCLUDE_CANONICALISED).
    """

    reason: str
    also: frozenset[str] = frozenset()
    reported: bool = True
    lastmod: str | None = None

    @property
    def reasons(self) -> frozenset[str]:
        """Every reason the report may give for this URL."""
        return self.also | {self.reason}


Outcome = Listed | Excluded


class Same:
    """Marker: the outcome under ``public_url`` is the same as without it."""


SAME: Final = Same()


# ---------------------------------------------------------------------------
# Routes
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SiteRequest:
    """One request as the server received it."""

    method: str
    target: str
    host: str
    headers: tuple[tuple[str, str], ...]
    #: When the server received it (time.monotonic()): what a test times against its own clock.
    received: float = field(default_factory=time.monotonic, compare=False)


@dataclass(frozen=True)
class Route:
    """What the server answers for one path+query, and what the crawl must make of it.

    ``drop`` closes the connection without answering (a network error for the client).
    ``expect`` is the outcome for this URL on the served origin; ``public_expect`` the
    outcome when the crawl runs with ``-a public_url=...`` (``SAME`` if it does not
    differ); ``None`` means the crawl must never reach this route at all.
    """

    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    drop: bool = False
    expect: Outcome | None = None
    public_expect: Outcome | None | Same = SAME


Responder = Callable[[SiteRequest], Route]


# ---------------------------------------------------------------------------
# Fixture site description
# ---------------------------------------------------------------------------


@dataclass
class SiteSpec:
    """A fixture site: its routes, and the outcome the crawl must reach for each URL.

    ``extra`` holds outcomes of URLs that are not routes of this origin (off-site links).
    ``never_fetched`` are path+query targets the server must never receive from a
    default crawl; ``nofollow_only`` are URLs reachable only through rel=nofollow links;
    ``traps`` match the path+query of infinite URL spaces, whose pages may be listed or
    not (the product bounds them; tests only assert that the bound holds).
    """

    origin: str
    public_origin: str = PUBLIC_ORIGIN
    routes: dict[str, Route] = field(default_factory=dict)
    dynamic: list[tuple[re.Pattern[str], Responder]] = field(default_factory=list)
    extra: dict[str, tuple[Outcome, Outcome | None | Same]] = field(default_factory=dict)
    never_fetched: set[str] = field(default_factory=set)
    nofollow_only: set[str] = field(default_factory=set)
    traps: list[re.Pattern[str]] = field(default_factory=list)

    @property
    def start_url(self) -> str:
        """The URL a crawl of this site starts from."""
        return self.origin + "/"

    def outcomes(self, *, public: bool = False) -> dict[str, Outcome]:
        """Crawled URL -> expected outcome, for a default crawl (or one with public_url)."""
        result: dict[str, Outcome] = {}
        for target, route in self.routes.items():
            outcome = route.expect
            if public and not isinstance(route.public_expect, Same):
                outcome = route.public_expect
            if outcome is not None:
                result[self.origin + target] = outcome
        for url, (normal, public_outcome) in self.extra.items():
            chosen = normal if not public or isinstance(public_outcome, Same) else public_outcome
            if chosen is not None:
                result[url] = chosen
        return result

    def to_public(self, url: str) -> str:
        """The published form of a crawled URL under ``public_url``."""
        assert url.startswith(self.origin), url
        return self.public_origin + url[len(self.origin) :]

    def expected_listed(
        self,
        *,
        public: bool = False,
        include_reasons: Iterable[str] = (),
        drop: Iterable[str] = (),
    ) -> list[dict[str, str]]:
        """The exact expected sitemap entries ``{"loc", ["lastmod"]}``, sorted by loc.

        ``include_reasons`` lets excluded pages of those reasons in (what
        SITEMAP_INCLUDE_NOINDEX / _CANONICALISED do); ``drop`` removes crawled URLs.
        """
        let_in = set(include_reasons)
        dropped = set(drop)
        entries: list[dict[str, str]] = []
        for url, outcome in self.outcomes(public=public).items():
            if url in dropped:
                continue
            if isinstance(outcome, Excluded) and outcome.reason not in let_in:
                continue
            entry = {"loc": self.to_public(url) if public else url}
            if outcome.lastmod is not None:
                entry["lastmod"] = outcome.lastmod
            entries.append(entry)
        return sorted(entries, key=lambda e: e["loc"])

    def expected_excluded(self, *, public: bool = False) -> dict[str, Excluded]:
        """Crawled URL -> Excluded, for every URL the crawl must leave out."""
        return {
            url: outcome
            for url, outcome in self.outcomes(public=public).items()
            if isinstance(outcome, Excluded)
        }

    def is_trap(self, url: str) -> bool:
        """True for a URL (crawled or public form) inside an infinite URL space."""
        parts = urlsplit(url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        return any(p.fullmatch(target) for p in self.traps)

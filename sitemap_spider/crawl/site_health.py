"""Whether the site itself is in trouble, not one of its pages (its recent answers weighed); its pause.

politeness.py slows the whole site down only when these say so, as Google describes its
crawler doing on 5xx and 429 answers; a failing page's own retries wait on their own
back-off (retries.py) and say nothing new about the site.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sitemap_spider import request_meta as meta

if TYPE_CHECKING:
    from scrapy import Request

#: Seconds between requests after the site's first trouble when SITEMAP_RETRY_DELAY is 0; it doubles while it goes on.
FIRST_BACKOFF = 1.0


def next_backoff(
    current: float, slot_delay: float, retry_after: float | None, cap: float, first: float = FIRST_BACKOFF
) -> float:
    """The pause between requests to a site after it answered 429 or 503.

    With ``Retry-After`` the server's figure; without it, twice the pace the
    site just refused (at least ``first``, ``SITEMAP_RETRY_DELAY``). Never above ``cap``.
    """
    if retry_after is not None:
        return min(retry_after, cap)
    return min(max(first, 2 * max(current, slot_delay)), cap)


#: The answer that says "you ask too often": the site slows down once it is not a lone one.
RATE_LIMIT_STATUSES = frozenset({429})
#: 429s among the last WINDOW answers that slow the site down: a rate limiter refuses request after
#: request (or one in ten, mildly exceeded), while a lone 429 (one URL's own limit, a proxy's
#: hiccup) is its page's retry to wait out.
RATE_LIMITED = 2
#: Recent answers from the site weighed to tell the site's trouble from a page's.
WINDOW = 20
#: Failures among the last WINDOW answers (and more than half of them) that slow the site down.
TROUBLE_FAULTS = 5
#: Answers in a row with a Retry-After that slow the site down to it.
RETRY_AFTER_STREAK = 3
_RATE_LIMIT_CAUSES = frozenset(str(status) for status in RATE_LIMIT_STATUSES)
#: Faults that no single page can cause: nothing listens on the site's port (a restart, a deploy).
#: Once the site has answered in this crawl, one of them is the site's trouble, even on a failing
#: page's retry: after an outage the requests in flight are mostly retries, and each refused one
#: would otherwise spend one of its page's tries. A site that never answered (a wrong port, a host
#: that is down) is not waited out: its pages' tries end the crawl as before.
SITE_WIDE_CAUSES = frozenset({"connection_refused"})


@dataclass
class SiteHealth:
    """The recent answers of one site: whether each failed, and the run of Retry-After answers."""

    answers: deque[str] = field(default_factory=lambda: deque(maxlen=WINDOW))  # "" good, else the cause
    asked_to_wait: int = 0
    answered: bool = False  # the site has given a good answer in this crawl

    def note(self, cause: str, retry_after: float | None) -> None:
        self.answers.append(cause)
        self.asked_to_wait = self.asked_to_wait + 1 if retry_after is not None else 0
        self.answered = self.answered or not cause

    def restarting(self, cause: str) -> bool:
        """Whether a fault says the site, which answered before, stopped listening (see SITE_WIDE_CAUSES)."""
        return self.answered and cause in SITE_WIDE_CAUSES

    def in_trouble(self) -> bool:
        """Whether the site, not a page, is failing.

        A refused connection, 429s, most recent answers failing, or answer after answer asking to wait.
        """
        faults = sum(1 for cause in self.answers if cause)
        limited = sum(1 for cause in self.answers if cause in _RATE_LIMIT_CAUSES)
        return (
            any(self.restarting(cause) for cause in self.answers)
            or limited >= RATE_LIMITED
            or (faults >= TROUBLE_FAULTS and 2 * faults > len(self.answers))
            or self.asked_to_wait >= RETRY_AFTER_STREAK
        )

    def clear(self) -> None:
        self.answers.clear()
        self.asked_to_wait = 0


def is_retry(request: Request) -> bool:
    """Whether the request retries a page that failed before: its failure is the page's, already counted."""
    return bool(request.meta.get("retry_times") or request.meta.get(meta.LAST_PASS))


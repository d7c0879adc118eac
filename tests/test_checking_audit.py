"""sitemap_spider/checking/audit.py: the comparison of listed URLs with what a crawl kept."""

from __future__ import annotations

from typing import Any

import pytest

from sitemap_spider.checking.audit import FINISHED, AuditedCrawl, AuditSession, CrawlEnd, compare, crawl_facts
from sitemap_spider.checking.findings import Finding

SITE = "https://www.example.com/"


def audit(
    listed: list[tuple[str, str | None]],
    pages: list[tuple[str, str | None]],
    excluded: list[tuple[str, str, str | None]] | None = None,
    linked: set[str] | None = None,
) -> list[tuple[str, str | None]]:
    session = AuditSession()
    for line, (loc, lastmod) in enumerate(listed, start=3):
        session.listed(loc, "sitemap.xml", line, lastmod)
    every = {loc for loc, _ in listed} if linked is None else linked
    compare(session, crawl_facts(pages, excluded or [], every), SITE)
    return sorted(((f.rule, f.url) for f in session.log.listed), key=str)


def test_listed_and_found_alike_is_clean() -> None:
    assert audit([(SITE + "a", "2024-05-01")], [(SITE + "a", "2024-05-01T10:00:00+00:00")]) == []


@pytest.mark.parametrize(
    ("claimed", "served", "later"),
    [
        ("2024-05-01", "2024-05-01T23:59:00+00:00", False),  # the same day
        ("2024-05-02", "2024-05-01T23:59:00+00:00", True),
        ("2024-05-01T10:00:30+00:00", "2024-05-01T10:00:00+00:00", False),  # skew
        ("2024-05-01T12:00:00+02:00", "2024-05-01T10:00:00+00:00", False),  # the same instant
        ("2024-05-01T10:05:00+00:00", "2024-05-01T10:00:00+00:00", True),
        ("2023-01-01", "2024-05-01T10:00:00+00:00", False),
        ("2024-05-02", None, False),  # no Last-Modified: nothing to compare
    ],
)
def test_lastmod_after_page(claimed: str, served: str | None, later: bool) -> None:
    found = audit([(SITE + "a", claimed)], [(SITE + "a", served)])
    assert found == ([("audit.lastmod_after_page", SITE + "a")] if later else [])


@pytest.mark.parametrize(
    ("same", "other", "uniform"), [(9, 0, False), (10, 0, True), (9, 1, False), (10, 1, True), (10, 2, False)]
)
def test_lastmod_uniform(same: int, other: int, uniform: bool) -> None:
    listed = [(f"{SITE}p{i}", "2024-01-01") for i in range(same)]
    listed += [(f"{SITE}q{i}", f"2023-02-{i + 1:02d}") for i in range(other)]
    found = audit(listed, [(loc, None) for loc, _ in listed])
    assert (("audit.lastmod_uniform", None) in found) is uniform


@pytest.mark.parametrize(
    ("reasons", "rule"),
    [
        ([("redirect", "301 to x")], "audit.redirect"),
        ([("duplicate", None), ("http_error", "410")], "audit.http_error"),
        ([("error", "connection refused")], "audit.status"),
        ([("status", "204")], "audit.status"),
        ([("robots", None)], "audit.robots"),
        ([("non_html", "application/pdf")], "audit.not_listable"),
        ([("duplicate", None)], "audit.status"),  # only "came twice": never judged
        ([], "audit.status"),  # never reached
    ],
)
def test_exclusions_of_listed_urls(reasons: list[tuple[str, str | None]], rule: str) -> None:
    excluded = [(SITE + "a", reason, detail) for reason, detail in reasons]
    assert audit([(SITE + "a", None)], [], excluded) == [(rule, SITE + "a")]


def test_orphans_unlisted_and_offsite() -> None:
    found = audit(
        [(SITE, None), (SITE + "linked", None), (SITE + "orphan", None), ("https://cdn.example.org/x", None)],
        [(SITE, None), (SITE + "linked", None), (SITE + "orphan", None), (SITE + "new", None)],
        linked={SITE + "linked", SITE + "new"},
    )
    assert found == sorted(
        [
            ("audit.orphan", SITE + "orphan"),
            ("audit.unlisted", SITE + "new"),
            ("audit.offsite", "https://cdn.example.org/x"),
        ],
        key=str,
    )


def audited(
    listed: list[str], pages: list[str], depths: dict[str, int], end: CrawlEnd = FINISHED, **kw: Any
) -> tuple[list[Finding], AuditedCrawl]:
    """Compare: every finding in its order, and what the audit says of the crawl."""
    session = AuditSession()
    for line, loc in enumerate(listed, start=3):
        session.listed(loc, "sitemap.xml", line)
    entries = [(page, None) for page in pages]
    facts = crawl_facts(entries, kw.get("excluded", []), kw.get("linked", set(listed)), depths, end)
    crawl = compare(session, facts, SITE)
    return session.log.listed, crawl


def months(first: int, last: int) -> dict[str, int]:
    """A calendar walked one month a level, from depth ``first`` to ``last``."""
    return {f"{SITE}calendar/{2024 + n // 12}/{n % 12 + 1:02d}": n + first for n in range(last - first + 1)}


def test_missing_pages_first_broken_listed_urls_next_trap_like_pages_last() -> None:
    calendar = months(1, 100)
    real = [SITE + "team", SITE + "product?id=1"]
    found, crawl = audited(
        [SITE, SITE + "gone", SITE + "orphan"],
        [SITE, SITE + "orphan", *real, *calendar],
        {SITE: 0, SITE + "team": 2, SITE + "product?id=1": 1, **calendar},
        CrawlEnd("finished", depth_limit=100, depth_dropped=2),
        excluded=[(SITE + "gone", "http_error", "404")],
        linked={SITE + "gone"},
    )
    rules = [f.rule for f in found]
    assert rules == ["audit.unlisted"] * 2 + ["audit.http_error", "audit.orphan"] + ["audit.unlisted_trap"] * 100, rules
    assert [f.url for f in found[:2]] == [SITE + "product?id=1", SITE + "team"]  # the shallowest first
    assert found[4].url == SITE + "calendar/2024/01"
    # The limit stopped the calendar only: the crawl reached the whole site.
    assert crawl.complete and crawl.as_json()["endless_series"] == {"/calendar/{n}/{n}": 100}
    assert (crawl.missing_pages, crawl.trap_like_pages) == (2, 100)
    assert crawl.verdict() == (
        "complete; 2 page(s) in no sitemap, and 100 trap-like (endless series: /calendar/{n}/{n} 100)"
    )


def test_every_finding_is_kept() -> None:
    pages = [f"{SITE}p{n}" for n in range(250)]
    found, _ = audited([SITE], [SITE, *pages], {page: 1 for page in pages})
    assert [f.rule for f in found] == ["audit.unlisted"] * 250


def test_a_crawl_cut_short_says_so_next_to_its_orphans_and_unlisted_pages() -> None:
    found, crawl = audited(
        [SITE, SITE + "orphan", SITE + "unreached"],
        [SITE, SITE + "orphan", SITE + "new"],
        {SITE: 0, SITE + "orphan": 0, SITE + "unreached": 0, SITE + "new": 1},
        CrawlEnd("closespider_pagecount"),
        linked=set(),
    )
    assert [f.rule for f in found] == ["audit.crawl_incomplete", "audit.unlisted", "audit.orphan"]
    assert found[0].detail.startswith(
        "the crawl was cut short: CLOSESPIDER_PAGECOUNT ended it; "
        "1 listed URL(s) it had not judged yet are left out."
    )
    assert found[1].detail.endswith("(the crawl was cut short: there may be more)")
    assert found[2].detail.endswith("(the crawl was cut short: a page it did not reach may)")
    assert not crawl.complete and crawl.listed_not_reached == 1
    assert crawl.verdict().startswith("INCOMPLETE (CLOSESPIDER_PAGECOUNT ended it")


def test_depth_limit_makes_a_crawl_incomplete_where_it_stops_a_real_page() -> None:
    depths = {SITE: 0, SITE + "a": 1, SITE + "a/b": 2, **months(1, 2)}
    found, crawl = audited([SITE], [SITE, SITE + "a", SITE + "a/b"], depths, CrawlEnd("finished", 2, 3))
    assert crawl.incomplete_because == (
        "DEPTH_LIMIT (2) kept it from following the links of 2 page(s) outside an endless series, "
        f"such as {SITE}a/b",
    )
    assert found[0].rule == "audit.crawl_incomplete"
    # Nothing was dropped: the pages at the limit had no link to a deeper one.
    _, crawl = audited([SITE], [SITE, SITE + "a", SITE + "a/b"], depths, CrawlEnd("finished", 2, 0))
    assert crawl.complete


@pytest.mark.parametrize(
    ("reason", "stopped"),
    [("finished", False), ("closespider_pagecount", False), ("closespider_timeout", False),
     ("shutdown", True), ("site_down", True)],
)  # fmt: skip
def test_which_ends_are_stops(reason: str, stopped: bool) -> None:
    assert CrawlEnd(reason).stopped is stopped

"""sitemap_spider/checking/audit.py: the comparison of listed URLs with what a crawl kept."""

from __future__ import annotations

import pytest

from sitemap_spider.checking.audit import AuditSession, compare, crawl_facts

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

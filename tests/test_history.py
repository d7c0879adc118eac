"""The crawl history end to end (#16): a dynamic local site crawled four times with changes between.

Crawl 1 sees the site; before crawl 2 pages are edited, deleted, added, and some answer 503;
before crawl 3 most of those recover (a few edited meanwhile), others are edited or deleted,
and a few still fail; crawl 4 changes nothing but SITEMAP_KEEP_FAILED_DAYS=0, so the pages
still failing leave. Each published set is checked against a model of the site: which URLs,
and for each its exact lastmod (metadata), a lastmod inside the window of the crawl that
first saw a change, or the lastmod it had before.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.crawl_fixtures import CrawlResult, run_crawl
from tests.dynamic_site import SECTIONS, DynamicSite
from tests.site_server import SiteServer
from tests.sitemap_check import as_instant, read_sitemap_set

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("test_history.crawls")]

PAGES = 300
EDIT_2, DELETE_2, FAIL_2, ADD_2 = range(30, 66), range(66, 78), range(78, 102), range(300, 312)
STILL_FAILING = range(78, 84)  # fail in crawls 2, 3 and 4
EDIT_DURING_OUTAGE = range(84, 90)  # edited while failing: crawl 3 sees the change
EDIT_3, DELETE_3 = range(102, 126), range(126, 132)
#: Settings of every crawl here: no pause after a 503 (RetryMiddleware still retries), no browser.
SETTINGS = {"SITEMAP_MAX_BACKOFF": "0"}


@dataclass
class Crawl:
    """One crawl: its result, its window, what it listed, and what the site answered."""

    origin: str
    result: CrawlResult
    started: datetime
    ended: datetime
    listed: dict[str, str | None]  # loc -> lastmod
    statuses: dict[str, int]
    #: The model's expectation: loc -> "exact:<lastmod>", "same", "window" or "none".
    expected: dict[str, str] = field(default_factory=dict)
    unchanged_etag_pages: int = 0

    @property
    def stats(self) -> dict[str, Any]:
        assert self.result.report is not None
        return dict(self.result.report["stats"])


class Model:
    """What each URL's content is, so that a change can be told from none."""

    def __init__(self, site: DynamicSite, origin: str) -> None:
        self.site = site
        self.origin = origin
        self.seen: dict[str, object] = {}  # loc -> content signature at its last good fetch

    def urls(self) -> dict[str, tuple[object, str | None, int | None]]:
        """loc -> (content signature, exact metadata lastmod or None, the page whose answer it hangs on)."""
        site, o = self.site, self.origin
        found: dict[str, tuple[object, str | None, int | None]] = {o + "/": ("home", None, None)}
        for k in range(SECTIONS):
            members = tuple(p.n for p in site.live() if p.n % SECTIONS == k)
            found[f"{o}/section/{k}"] = (members, None, None)
        for page in site.live():
            exact = page.modified.isoformat() if page.kind in ("jsonld", "meta") else None
            found[f"{o}/p/{page.n}"] = (page.version, exact, page.n)
            if page.kind == "etag":
                # Linked from its page only: reached while the page answers, or is kept.
                found[f"{o}/p/{page.n}/notes"] = ("notes", None, page.n)
        return found

    def expect(self, previous: Crawl | None, keep: bool) -> tuple[dict[str, str], int]:
        """The expectation of each loc for the next crawl; and how many ETag pages are unchanged."""
        expected: dict[str, str] = {}
        unchanged_etag = 0
        for loc, (signature, exact, n) in self.urls().items():
            known = previous is not None and loc in previous.listed
            page = None if n is None else self.site.pages[n]
            if page is not None and page.failing:
                parent_kept = previous is not None and f"{self.origin}/p/{n}" in previous.listed and keep
                if parent_kept and known:
                    expected[loc] = "same"
                continue
            unchanged = known and self.seen.get(loc) == signature
            if exact is not None:
                expected[loc] = "exact:" + exact
            elif not known:
                expected[loc] = "none"
            else:
                expected[loc] = "same" if unchanged else "window"
            if unchanged and page is not None and page.kind == "etag" and not loc.endswith("/notes"):
                unchanged_etag += 1
        return expected, unchanged_etag

    def fetched(self) -> None:
        for loc, (signature, _exact, n) in self.urls().items():
            if n is None or not self.site.pages[n].failing or loc.endswith("/notes"):
                self.seen[loc] = signature


def _crawl(site: DynamicSite, server: SiteServer, tmp: Path, model: Model, previous: Crawl | None,
           keep: bool = True, **settings: str) -> Crawl:
    expected, unchanged_etag = model.expect(previous, keep)
    site.statuses.clear()
    started = datetime.now(UTC).replace(microsecond=0)
    result = run_crawl(server.origin + "/", tmp, "-a", "render=never", settings={**SETTINGS, **settings}, timeout=600)
    ended = datetime.now(UTC)
    assert result.returncode == 0, result.describe()
    listed = {e["loc"]: e.get("lastmod") for e in read_sitemap_set(result.output_dir, server.origin + "/")}
    model.fetched()
    return Crawl(server.origin, result, started, ended, listed, dict(site.statuses), expected, unchanged_etag)


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Crawl]]:
    tmp = tmp_path_factory.mktemp("history")
    site = DynamicSite(PAGES)
    with SiteServer() as server:
        site.serve(server)
        model = Model(site, server.origin)
        first = _crawl(site, server, tmp, model, None)
        site.change(edit=EDIT_2, delete=DELETE_2, add=ADD_2, fail=FAIL_2)
        second = _crawl(site, server, tmp, model, first)
        for n in FAIL_2:
            site.pages[n].failing = n in STILL_FAILING
        for n in (*EDIT_DURING_OUTAGE, *EDIT_3):
            site.edit(n)
        for n in DELETE_3:
            site.delete(n)
        third = _crawl(site, server, tmp, model, second)
        fourth = _crawl(site, server, tmp, model, third, keep=False, SITEMAP_KEEP_FAILED_DAYS="0")
        _print_figures([first, second, third, fourth])
        yield [first, second, third, fourth]


def _check(crawl: Crawl, previous: Crawl | None) -> list[str]:
    problems = []
    if set(crawl.listed) != set(crawl.expected):
        problems.append(f"listed but not expected: {sorted(set(crawl.listed) - set(crawl.expected))[:5]}; "
                        f"expected but not listed: {sorted(set(crawl.expected) - set(crawl.listed))[:5]}")
    low, high = crawl.started - timedelta(seconds=1), crawl.ended + timedelta(seconds=1)
    for loc, rule in crawl.expected.items():
        got = crawl.listed.get(loc, "(missing)")
        if rule.startswith("exact:"):
            ok = got == rule[6:]
        elif rule == "none":
            ok = got is None
        elif rule == "same":
            ok = previous is not None and got == previous.listed.get(loc)
        else:
            ok = got is not None and got != "(missing)" and low <= as_instant(got) <= high
        if not ok:
            problems.append(f"{loc}: {rule}, got {got}" + (f" (before: {previous.listed.get(loc)})" if previous else ""))
    return problems


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_each_set_lists_the_right_pages_with_honest_dates(crawls: list[Crawl], index: int) -> None:
    crawl = crawls[index]
    problems = _check(crawl, crawls[index - 1] if index else None)
    assert not problems, "\n".join(problems[:20])


def test_the_first_crawl_dates_only_what_pages_say(crawls: list[Crawl]) -> None:
    first = crawls[0]
    dated = {loc for loc, lastmod in first.listed.items() if lastmod}
    # jsonld and meta pages only: 2 of every 6 pages; Last-Modified: <now> dates nothing.
    assert len(dated) == 100, sorted(dated)[:5]
    assert first.stats["sitemap/history/new"] == len(first.listed)
    assert "sitemap/history/not_modified" not in first.stats


def test_a_change_is_dated_in_the_crawl_that_saw_it(crawls: list[Crawl]) -> None:
    windows = [sum(1 for rule in crawl.expected.values() if rule == "window") for crawl in crawls]
    # Every section changes in crawls 2 and 3 (pages added and deleted); plain, now and etag
    # pages edited: 24 in crawl 2, 4 + 16 in crawl 3; nothing in crawl 4.
    # Crawl 3: the 6 sections that lost a page, 4 pages edited while failing, 16 edited.
    assert windows == [0, 10 + 24, 6 + 4 + 16, 0]
    assert crawls[1].stats["sitemap/history/changed"] >= 34


def test_failing_pages_stay_listed_then_leave(crawls: list[Crawl]) -> None:
    _, second, third, fourth = crawls
    for crawl, failing in ((second, FAIL_2), (third, STILL_FAILING)):
        kept = {row["url"] for row in crawl.result.report["kept_urls"]}  # type: ignore[index]
        assert kept == {f"{crawl.origin}/p/{n}" for n in failing}
        assert crawl.stats["sitemap/kept/transient_error"] == len(failing)
        assert all(row["status"] == 503 for row in crawl.result.report["kept_urls"])  # type: ignore[index]
    assert fourth.stats["sitemap/kept/transient_error"] == 0
    assert not any(f"{fourth.origin}/p/{n}" in fourth.listed for n in STILL_FAILING)
    # An ETag page kept while failing still leads to its child page (its stored links).
    assert f"{third.origin}/p/83/notes" in third.listed
    assert f"{fourth.origin}/p/83/notes" not in fourth.listed


def test_unchanged_etag_pages_are_revalidated_with_a_304(crawls: list[Crawl]) -> None:
    for crawl in crawls[1:]:
        not_modified = crawl.statuses.get("etag 304", 0)
        assert crawl.unchanged_etag_pages > 30
        assert not_modified >= 0.9 * crawl.unchanged_etag_pages, (not_modified, crawl.unchanged_etag_pages)
        assert crawl.stats["sitemap/history/not_modified"] == not_modified
    assert crawls[0].statuses.get("etag 304", 0) == 0


def _print_figures(crawls: list[Crawl]) -> None:
    """The figures of the four crawls, for the record (pytest -s shows them)."""
    for number, crawl in enumerate(crawls, 1):
        stats = crawl.stats
        print(
            f"crawl {number}: {len(crawl.listed)} listed, {sum(1 for v in crawl.listed.values() if v)} dated; "
            f"304s {crawl.statuses.get('etag 304', 0)} of {crawl.unchanged_etag_pages} unchanged ETag pages; "
            f"history new {stats.get('sitemap/history/new', 0)}, changed {stats.get('sitemap/history/changed', 0)}, "
            f"unchanged {stats.get('sitemap/history/unchanged', 0)}, "
            f"not_modified {stats.get('sitemap/history/not_modified', 0)}; "
            f"kept {stats.get('sitemap/kept/transient_error', 0)}; {crawl.result.seconds:.1f} s"
        )

"""End to end: the real ``scrapy crawl sitemap`` against tests/site_cases.py and tests/generated_site.py.

Each test compares the published set, read back through tests/sitemap_check.py (XSD
validation + Scrapy's own sitemap reader), with the set the fixture site says is
right, exactly: every loc, every lastmod, the order. Infinite URL spaces are the only
place where counts are bounded rather than exact.
"""

from __future__ import annotations

import json
import math
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sitemap_spider.crawl.report import REASONS
from tests.crawl_fixtures import (  # noqa: F401 - fixtures used by name
    GENERATED_PAGES,
    REPO_ROOT,
    CrawlResult,
    RunningSite,
    case_site,
    crawl_command,
    run_crawl,
    serve_site,
)
from tests.generated_site import build_generated_site
from tests.report_counts import count_problems
from tests.site_builder import SiteBuilder
from tests.site_cases import build_case_site
from tests.site_cases_links import CALENDAR, MORE
from tests.site_server import HTML, NOT_FOUND, closed_port, html_page, links
from tests.site_spec import Listed, Route, SiteRequest, SiteSpec
from tests.sitemap_check import file_bytes, read_sitemap_set, read_urlset

PUBLIC = "https://www.example.com"
# Generous bounds for the infinite URL spaces: the product stops them with a depth limit
# and a repeated-segment rule; the test only insists that it does stop them.
MAX_CALENDAR_PAGES = 200
MAX_MORE_PAGES = 20

Entry = dict[str, str]


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SiteCrawl:
    """One crawl of a served site, with the requests the servers received during it."""

    site: RunningSite
    result: CrawlResult
    requests: list[SiteRequest]
    decoy_requests: list[SiteRequest]

    @property
    def spec(self) -> SiteSpec:
        return self.site.spec

    def targets(self) -> list[str]:
        return [r.target for r in self.requests]


def crawl_site(site: RunningSite, tmp_path: Path, *extra: str, **kwargs: Any) -> SiteCrawl:
    """run_crawl on ``site``, recording only the requests made by this crawl."""
    site.server.clear()
    site.decoy.clear()
    start = kwargs.pop("start_url", site.start_url)
    result = run_crawl(start, tmp_path, *extra, **kwargs)
    return SiteCrawl(site, result, site.server.requests, site.decoy.requests)


def published(crawl: SiteCrawl, base_url: str | None = None) -> list[Entry]:
    """The published set, validated and read back; the crawl must have succeeded."""
    result = crawl.result
    assert result.returncode == 0, result.describe()
    return read_sitemap_set(result.output_dir, base_url or crawl.spec.origin + "/")


def without_traps(spec: SiteSpec, entries: list[Entry]) -> list[Entry]:
    return [e for e in entries if not spec.is_trap(e["loc"])]


def assert_same_entries(got: list[Entry], expected: list[Entry]) -> None:
    """Exact equality, with a readable account of the difference when it fails."""
    if got == expected:
        return
    got_by_loc = {e["loc"]: e for e in got}
    expected_by_loc = {e["loc"]: e for e in expected}
    missing = sorted(set(expected_by_loc) - set(got_by_loc))
    unexpected = sorted(set(got_by_loc) - set(expected_by_loc))
    wrong = [
        f"{loc}: expected {expected_by_loc[loc]} got {got_by_loc[loc]}"
        for loc in sorted(set(got_by_loc) & set(expected_by_loc))
        if got_by_loc[loc] != expected_by_loc[loc]
    ]
    duplicates = [loc for loc, n in Counter(e["loc"] for e in got).items() if n > 1]
    order = [e["loc"] for e in got] != sorted(e["loc"] for e in got)
    pytest.fail(
        "published set differs from the expected set\n"
        f"missing ({len(missing)}): {missing}\nunexpected ({len(unexpected)}): {unexpected}\n"
        f"wrong fields ({len(wrong)}):\n  " + "\n  ".join(wrong) + f"\nduplicates: {duplicates}\n"
        f"not sorted by loc: {order}"
    )


def report_problems(spec: SiteSpec, report: dict[str, Any], *, public: bool = False) -> list[str]:
    """How the report's excluded URLs disagree with the site's expectations."""
    problems: list[str] = []
    reasons: dict[str, set[str]] = {}
    for item in report["excluded_urls"]:
        reasons.setdefault(item["url"], set()).add(item["reason"])
    outcomes = spec.outcomes(public=public)
    for url, outcome in outcomes.items():
        got = reasons.get(url, set())
        if isinstance(outcome, Listed):
            if got:
                problems.append(f"{url}: listed page reported as excluded ({sorted(got)})")
        elif got - outcome.reasons:
            problems.append(f"{url}: expected {sorted(outcome.reasons)}, reported {sorted(got)}")
        elif outcome.reported and not got:
            problems.append(f"{url}: not in the report (expected {outcome.reason})")
    for url, got in reasons.items():
        # A trap page's fate is open (cut off as a trap, or a duplicate of its twin):
        # any reason will do, and test_report_uses_the_contracts_reasons checks the names.
        if url not in outcomes and not spec.is_trap(url):
            problems.append(f"{url}: reported as {sorted(got)} but the site has no such case")
    return problems


# ---------------------------------------------------------------------------
# One crawl of the case site, shared by the tests that only look at it
# ---------------------------------------------------------------------------


#: The tests reading one crawl of a module-scoped fixture run on one pytest-xdist worker (with
#: ``--dist loadgroup``), so that the crawl is run once, not once per worker that got one of them.
CASE_CRAWL = pytest.mark.xdist_group("test_crawl.case_crawl")
GENERATED_CRAWL = pytest.mark.xdist_group("test_crawl.generated_crawl")


@pytest.fixture(scope="module")
def shared_site() -> Iterator[RunningSite]:
    with serve_site(lambda origin, other: build_case_site(origin, other_origin=other)) as site:
        yield site


@pytest.fixture(scope="module")
def case_crawl(shared_site: RunningSite, tmp_path_factory: pytest.TempPathFactory) -> SiteCrawl:
    return crawl_site(shared_site, tmp_path_factory.mktemp("case"))


@CASE_CRAWL
def test_case_site_crawl_ends_on_its_own(case_crawl: SiteCrawl) -> None:
    result = case_crawl.result
    assert result.returncode == 0, result.describe()
    assert result.report is not None, result.describe()
    assert "Traceback" not in result.stderr, result.describe()


@CASE_CRAWL
def test_case_site_publishes_exactly_the_indexable_pages(case_crawl: SiteCrawl) -> None:
    """The core assertion: every indexable page once, nothing else, exact lastmod, sorted."""
    urls = published(case_crawl)
    assert_same_entries(without_traps(case_crawl.spec, urls), case_crawl.spec.expected_listed())
    assert [u["loc"] for u in urls] == sorted(u["loc"] for u in urls)
    # Nobody configured rules: Google and Bing ignore these fields, so none are written.
    assert not [u for u in urls if "changefreq" in u or "priority" in u]


@CASE_CRAWL
def test_case_site_xml_escapes_the_ampersand(case_crawl: SiteCrawl) -> None:
    shard = file_bytes(case_crawl.result.output_dir / "sitemap-00001.xml")
    origin = case_crawl.spec.origin.encode()
    assert b"<loc>" + origin + b"/search?a=1&amp;b=2</loc>" in shard
    assert b"/caf%C3%A9%20menu/</loc>" in shard
    assert b"/categories/Docker%E7%AF%87/</loc>" in shard


@CASE_CRAWL
def test_case_site_infinite_spaces_are_bounded_and_deep_pages_found(case_crawl: SiteCrawl) -> None:
    fetched = case_crawl.targets()
    calendar = {t for t in fetched if CALENDAR.fullmatch(t)}
    more = {t for t in fetched if MORE.fullmatch(t)}
    assert 1 <= len(calendar) <= MAX_CALENDAR_PAGES, sorted(calendar)
    assert 1 <= len(more) <= MAX_MORE_PAGES, sorted(more)
    assert "/deep/40" in fetched
    listed = {u["loc"] for u in published(case_crawl)}
    assert {f"{case_crawl.spec.origin}/deep/{n}" for n in range(1, 41)} <= listed


@CASE_CRAWL
def test_case_site_report_gives_each_exclusion_its_reason(case_crawl: SiteCrawl) -> None:
    report = case_crawl.result.report
    assert report is not None, case_crawl.result.describe()
    problems = report_problems(case_crawl.spec, report)
    assert not problems, "\n".join(problems)


@CASE_CRAWL
def test_report_uses_documented_reasons(case_crawl: SiteCrawl) -> None:
    report = case_crawl.result.report
    assert report is not None
    used = {item["reason"] for item in report["excluded_urls"]} | set(report["excluded"])
    assert used <= set(REASONS), sorted(used - set(REASONS))
    rules = (Path(__file__).parent.parent / "docs" / "crawling.md").read_text(encoding="utf-8")
    undocumented = [reason for reason in REASONS if f"`{reason}`" not in rules]
    assert not undocumented, undocumented


@CASE_CRAWL
def test_case_site_report_totals(case_crawl: SiteCrawl) -> None:
    report = case_crawl.result.report
    assert report is not None
    urls = published(case_crawl)
    out = case_crawl.result.output_dir
    assert report["urls"] == len(urls) == report["stats"]["sitemap/urls"]
    assert report["files"] == 1 == report["stats"]["sitemap/files"]
    assert Path(report["index"]).resolve() == (out / "sitemap_index.xml").resolve()
    assert report["index_url"] == case_crawl.spec.origin + "/sitemap_index.xml"
    counted = Counter(item["reason"] for item in report["excluded_urls"])
    assert {k: v for k, v in report["excluded"].items() if v} == dict(counted)
    for reason, count in counted.items():
        assert report["stats"][f"sitemap/excluded/{reason}"] == count, reason


@CASE_CRAWL
def test_case_site_report_counts(case_crawl: SiteCrawl) -> None:
    """The counts behind the HTML report's charts: one per page the site answered, one per listed URL."""
    report = case_crawl.result.report
    assert report is not None
    routes = case_crawl.spec.routes
    dropped = {target for target, route in routes.items() if route.drop}
    answered = [r for r in case_crawl.requests if r.target != "/robots.txt" and r.target not in dropped]
    problems = count_problems(report, len(answered))
    assert not problems, problems
    assert report["counts"]["status/200"] > 0 and report["counts"]["status/404"] > 0
    assert report["counts"]["depth/0"] == 1  # the start URL


@CASE_CRAWL
def test_case_site_summary_gives_the_robots_line(case_crawl: SiteCrawl) -> None:
    result = case_crawl.result
    line = f"Sitemap: {case_crawl.spec.origin}/sitemap_index.xml"
    assert line in result.stdout + result.stderr, result.describe()


@CASE_CRAWL
def test_case_site_crawl_never_fetches_what_it_must_not(case_crawl: SiteCrawl) -> None:
    spec = case_crawl.spec
    fetched = case_crawl.targets()
    assert not set(fetched) & spec.never_fetched, sorted(set(fetched) & spec.never_fetched)
    # Off-site: localhost is another host (though the same server), the decoy another port.
    hosts = {r.host for r in case_crawl.requests}
    assert hosts == {spec.origin.removeprefix("http://")}, hosts
    assert case_crawl.decoy_requests == [], [r.target for r in case_crawl.decoy_requests]
    assert "/robots.txt" in fetched
    # Every page of the site that is listed was really fetched (nothing listed from links alone).
    for entry in spec.expected_listed():
        target = entry["loc"][len(spec.origin) :]
        assert target in fetched, target


@CASE_CRAWL
def test_second_crawl_of_unchanged_site_is_byte_identical(
    case_crawl: SiteCrawl, shared_site: RunningSite, tmp_path: Path
) -> None:
    again = crawl_site(shared_site, tmp_path)
    assert again.result.returncode == 0, again.result.describe()
    first, second = case_crawl.result.files(), again.result.files()
    assert sorted(first) == sorted(second) == ["sitemap-00001.xml", "sitemap_index.xml"]
    assert first == second


@CASE_CRAWL
def test_small_gzipped_shards_and_index(
    case_crawl: SiteCrawl, shared_site: RunningSite, tmp_path: Path
) -> None:
    settings = {"SITEMAP_MAX_URLS": "7", "SITEMAP_GZIP": "True"}
    runs = [crawl_site(shared_site, tmp_path / f"run{n}", settings=settings) for n in (1, 2)]
    reference = published(case_crawl)
    urls = published(runs[0])
    assert urls == reference
    files = runs[0].result.files()
    shards = math.ceil(len(reference) / 7)
    names = [f"sitemap-{n:05d}.xml.gz" for n in range(1, shards + 1)]
    assert sorted(files) == sorted([*names, "sitemap_index.xml"])
    for n, name in enumerate(names):
        # Reproducible gzip: no timestamp in the header (bytes 4-8 are MTIME).
        assert files[name][4:8] == b"\0\0\0\0", name
        entries = read_urlset(runs[0].result.output_dir / name)
        assert entries == reference[n * 7 : (n + 1) * 7], name
    index = files["sitemap_index.xml"].decode()
    locs = re.findall(r"<loc>([^<]*)</loc>", index)
    assert locs == [f"{shared_site.origin}/{name}" for name in names]
    assert runs[1].result.files() == files
    report = runs[0].result.report
    assert report is not None and report["files"] == shards


@CASE_CRAWL
def test_case_site_fetches_each_url_once(case_crawl: SiteCrawl) -> None:
    """No page is downloaded twice (retries of failing URLs aside): the site is not hammered."""
    retried = {"/s500", "/s503", "/broken"}
    counts = Counter(r.target for r in case_crawl.requests if r.target not in retried)
    assert not {t: n for t, n in counts.items() if n > 1}


@CASE_CRAWL
def test_small_max_bytes_closes_shards_before_the_limit(
    case_crawl: SiteCrawl, shared_site: RunningSite, tmp_path: Path
) -> None:
    limit = 4096
    crawl = crawl_site(shared_site, tmp_path, settings={"SITEMAP_MAX_BYTES": str(limit)})
    assert published(crawl) == published(case_crawl)
    files = crawl.result.files()
    names = sorted(n for n in files if n.startswith("sitemap-"))
    assert len(names) > 2, names
    for name, following in zip(names, [*names[1:], None], strict=True):
        assert len(files[name]) <= limit, name
        if following is not None:
            # Full: the next shard's first entry would have pushed this one over the limit.
            first = re.search(rb"<url>.*?</url>\n?", files[following], re.DOTALL)
            assert first is not None, following
            assert len(files[name]) + len(first.group()) > limit, name


@CASE_CRAWL
def test_base_url_is_where_the_index_points(
    case_crawl: SiteCrawl, shared_site: RunningSite, tmp_path: Path
) -> None:
    base = "https://cdn.example.org/maps/"
    crawl = crawl_site(shared_site, tmp_path, settings={"SITEMAP_BASE_URL": base})
    assert published(crawl, base_url=base) == published(case_crawl)
    report = crawl.result.report
    assert report is not None and report["index_url"] == base + "sitemap_index.xml"
    assert f"Sitemap: {base}sitemap_index.xml" in crawl.result.stdout + crawl.result.stderr


def test_public_url_publishes_the_public_origin(shared_site: RunningSite, tmp_path: Path) -> None:
    crawl = crawl_site(shared_site, tmp_path, "-a", f"public_url={PUBLIC}/")
    urls = published(crawl, base_url=PUBLIC + "/")
    spec = crawl.spec
    assert_same_entries(without_traps(spec, urls), spec.expected_listed(public=True))
    assert all(u["loc"].startswith(PUBLIC + "/") for u in urls)
    index = crawl.result.files()["sitemap_index.xml"].decode()
    assert re.findall(r"<loc>([^<]*)</loc>", index) == [f"{PUBLIC}/sitemap-00001.xml"]
    # Links written with the public origin were fetched from the local server.
    fetched = crawl.targets()
    for target in ("/pub-only", "/pub-upper", "/pub-default-port", "/pub-redirect-target"):
        assert target in fetched, target
    report = crawl.result.report
    assert report is not None
    assert report["index_url"] == f"{PUBLIC}/sitemap_index.xml"
    problems = report_problems(spec, report, public=True)
    assert not problems, "\n".join(problems)


def test_several_start_urls(shared_site: RunningSite, tmp_path: Path) -> None:
    origin = shared_site.origin
    crawl = crawl_site(shared_site, tmp_path, start_url=f"{origin}/frameset  {origin}/nofollow")
    locs = [u["loc"] for u in published(crawl)]
    paths = ["/frame-left", "/frame-right", "/frameset", "/nofollow", "/nofollow-only", "/nofollow-only-2"]
    assert locs == [origin + p for p in paths]


@CASE_CRAWL
def test_start_url_spelling_does_not_matter(
    case_crawl: SiteCrawl, shared_site: RunningSite, tmp_path: Path
) -> None:
    # Upper-case scheme, no trailing slash: the same origin, the same set.
    start = "HTTP://" + shared_site.origin.removeprefix("http://")
    crawl = crawl_site(shared_site, tmp_path, start_url=start)
    assert published(crawl) == published(case_crawl)


# ---------------------------------------------------------------------------
# Settings that change what is listed or crawled
# ---------------------------------------------------------------------------


def test_nofollow_links_not_followed_when_turned_off(shared_site: RunningSite, tmp_path: Path) -> None:
    crawl = crawl_site(shared_site, tmp_path, settings={"SITEMAP_FOLLOW_NOFOLLOW": "False"})
    spec = crawl.spec
    expected = spec.expected_listed(drop=spec.nofollow_only)
    assert_same_entries(without_traps(spec, published(crawl)), expected)
    assert not {spec.origin + t for t in crawl.targets()} & spec.nofollow_only


@pytest.mark.parametrize(
    ("setting", "reason"),
    [("SITEMAP_INCLUDE_NOINDEX", "noindex"), ("SITEMAP_INCLUDE_CANONICALISED", "canonical")],
)
def test_settings_let_excluded_pages_in(
    shared_site: RunningSite, tmp_path: Path, setting: str, reason: str
) -> None:
    crawl = crawl_site(shared_site, tmp_path, settings={setting: "True"})
    expected = crawl.spec.expected_listed(include_reasons={reason})
    assert_same_entries(without_traps(crawl.spec, published(crawl)), expected)


def test_exclude_pattern_lists_less_but_crawls_everything(shared_site: RunningSite, tmp_path: Path) -> None:
    crawl = crawl_site(shared_site, tmp_path, settings={"SITEMAP_EXCLUDE": json.dumps(["/deep/"])})
    spec = crawl.spec
    deep = {f"{spec.origin}/deep/{n}" for n in range(1, 41)}
    assert_same_entries(without_traps(spec, published(crawl)), spec.expected_listed(drop=deep))
    # Excluded from the listing, still crawled: the end of the chain was reached.
    assert "/deep/40" in crawl.targets()
    report = crawl.result.report
    assert report is not None
    assert {i["url"] for i in report["excluded_urls"] if i["reason"] == "pattern"} == deep


def test_include_pattern_lists_only_matches(shared_site: RunningSite, tmp_path: Path) -> None:
    crawl = crawl_site(shared_site, tmp_path, settings={"SITEMAP_INCLUDE": json.dumps([r"/deep/\d+$"])})
    spec = crawl.spec
    expected = [e for e in spec.expected_listed() if re.search(r"/deep/\d+$", e["loc"])]
    assert len(expected) == 40
    assert_same_entries(published(crawl), expected)


def test_deny_pattern_is_never_fetched(shared_site: RunningSite, tmp_path: Path) -> None:
    crawl = crawl_site(shared_site, tmp_path, settings={"SITEMAP_DENY": json.dumps(["/deep/3"])})
    spec = crawl.spec
    # /deep/3 is never fetched, so the rest of the chain is never found.
    gone = {f"{spec.origin}/deep/{n}" for n in range(3, 41)}
    assert_same_entries(without_traps(spec, published(crawl)), spec.expected_listed(drop=gone))
    assert not [t for t in crawl.targets() if t.startswith("/deep/3")]


def test_a_denied_canonical_target_is_never_fetched(shared_site: RunningSite, tmp_path: Path) -> None:
    """A canonical link is checked as a page's links are (denied, a trap, too long for a <loc>)."""
    crawl = crawl_site(shared_site, tmp_path, settings={"SITEMAP_DENY": json.dumps(["/canon-target$"])})
    assert "/canon-target" not in crawl.targets()
    assert "/canon-abs-target" in crawl.targets()  # the other canonical targets are fetched as before
    assert crawl.spec.origin + "/canon-target" not in {entry["loc"] for entry in published(crawl)}


def test_rules_write_changefreq_and_priority(shared_site: RunningSite, tmp_path: Path) -> None:
    rules = [
        {"pattern": r"/deep/", "changefreq": "monthly", "priority": 0.3},
        {"pattern": r"/about$", "priority": 0.9},
    ]
    crawl = crawl_site(shared_site, tmp_path, settings={"SITEMAP_RULES": json.dumps(rules)})
    by_loc = {u["loc"]: u for u in published(crawl)}
    origin = crawl.spec.origin
    for loc, entry in by_loc.items():
        fields = (entry.get("changefreq"), float(entry["priority"]) if "priority" in entry else None)
        if "/deep/" in loc:
            assert fields == ("monthly", 0.3), entry
        elif loc == origin + "/about":
            assert fields == (None, 0.9), entry
        else:
            assert fields == (None, None), entry


# ---------------------------------------------------------------------------
# Bad input fails before any request
# ---------------------------------------------------------------------------

BAD_INPUT = [
    pytest.param("", {}, "url", id="missing-url"),
    pytest.param("/foo", {}, "url", id="relative-url"),
    pytest.param(None, {"SITEMAP_MAX_URLS": "50001"}, "SITEMAP_MAX_URLS", id="max-urls"),
    pytest.param(None, {"SITEMAP_MAX_BYTES": "60000000"}, "SITEMAP_MAX_BYTES", id="max-bytes"),
    pytest.param(None, {"SITEMAP_EXCLUDE": '["("]'}, "SITEMAP_EXCLUDE", id="bad-regex"),
    pytest.param(
        None,
        {"SITEMAP_RULES": json.dumps([{"pattern": "/", "changefreq": "sometimes"}])},
        "SITEMAP_RULES",
        id="changefreq",
    ),
    pytest.param(
        None,
        {"SITEMAP_RULES": json.dumps([{"pattern": "/", "priority": 1.5}])},
        "SITEMAP_RULES",
        id="priority",
    ),
]


@pytest.mark.parametrize(("start_url", "settings", "name"), BAD_INPUT)
def test_bad_input_fails_before_any_request(
    case_site: RunningSite,  # noqa: F811
    tmp_path: Path,
    start_url: str | None,
    settings: dict[str, str],
    name: str,
) -> None:
    start = case_site.start_url if start_url is None else start_url
    result = run_crawl(start, tmp_path, settings=settings)
    assert result.returncode != 0, result.describe()
    assert re.search(rf"\b{name}\b", result.stderr), result.describe()
    assert case_site.server.requests == [], case_site.server.targets()
    assert not (result.output_dir / "sitemap_index.xml").exists()


# ---------------------------------------------------------------------------
# A crawl that finds nothing keeps the published set
# ---------------------------------------------------------------------------


def _small_site(origin: str, _other: str) -> SiteSpec:
    b = SiteBuilder(origin)
    b.page("/", html_page("Small home", links("/one", "/two")))
    b.page("/one", html_page("One"))
    b.page("/two", html_page("Two"), last_modified=None, expect=Listed(None))
    return b.spec


@pytest.mark.parametrize("failure", ["start-404", "closed-port"])
def test_nothing_crawlable_keeps_the_previous_set(tmp_path: Path, failure: str) -> None:
    with serve_site(_small_site) as site:
        first = run_crawl(site.start_url, tmp_path)
        assert first.returncode == 0, first.describe()
        assert_same_entries(
            read_sitemap_set(first.output_dir, site.origin + "/"), site.spec.expected_listed()
        )
        before = first.files()
        if failure == "start-404":
            site.server.routes["/"] = NOT_FOUND
            start = site.start_url
        else:
            start = f"http://127.0.0.1:{closed_port()}/"
        # A site that refuses every connection is waited out with a doubling pause (up to
        # SITEMAP_MAX_BACKOFF): 28 s of this test's time with the default cap.
        second = run_crawl(start, tmp_path, settings={"SITEMAP_MAX_BACKOFF": "1"})
    assert second.returncode != 0, second.describe()
    assert second.files() == before
    read_sitemap_set(second.output_dir, site.origin + "/")


SLOW = re.compile(r"/slow/\d+")


def _slow_page(request: SiteRequest) -> Route:
    # Slow enough that the crawl is surely still running when it is interrupted.
    time.sleep(1.0)
    return Route(headers=(("Content-Type", HTML),), body=html_page(request.target))


def test_interrupted_crawl_keeps_the_previous_set(tmp_path: Path) -> None:
    with serve_site(_small_site) as site:
        first = run_crawl(site.start_url, tmp_path)
        assert first.returncode == 0, first.describe()
        before = first.files()
        slow = SiteBuilder(site.origin)
        slow.page("/", html_page("Slow home", links(*(f"/slow/{n}" for n in range(40)))))
        slow.spec.dynamic.append((SLOW, _slow_page))
        site.server.serve(slow.spec)
        site.server.clear()
        args = crawl_command(site.start_url, tmp_path)
        with (tmp_path / "stderr.txt").open("w") as err:
            proc = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=err)
            try:
                deadline = time.monotonic() + 60
                while not any(SLOW.fullmatch(t) for t in site.server.targets()):
                    assert time.monotonic() < deadline, "the crawl never reached the slow pages"
                    assert proc.poll() is None, "the crawl ended before it was interrupted"
                    time.sleep(0.05)
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=90)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    stderr = (tmp_path / "stderr.txt").read_text(errors="replace")
    # Really interrupted: it did not get round to every slow page.
    slow_fetched = [t for t in site.server.targets() if SLOW.fullmatch(t)]
    assert len(slow_fetched) < 40, stderr[-3000:]
    # files() reads the directory now: the set published before is still there, unchanged.
    assert first.files() == before, stderr[-3000:]
    read_sitemap_set(first.output_dir, site.origin + "/")


# ---------------------------------------------------------------------------
# The generated site
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated_shared() -> Iterator[RunningSite]:
    with serve_site(lambda origin, _other: build_generated_site(origin, GENERATED_PAGES)) as site:
        yield site


@pytest.fixture(scope="module")
def generated_crawl(generated_shared: RunningSite, tmp_path_factory: pytest.TempPathFactory) -> SiteCrawl:
    return crawl_site(generated_shared, tmp_path_factory.mktemp("generated"), timeout=300)


@GENERATED_CRAWL
def test_generated_site(generated_crawl: SiteCrawl) -> None:
    crawl = generated_crawl
    spec = crawl.spec
    urls = published(crawl)
    expected = spec.expected_listed()
    assert len(expected) > 2000
    assert_same_entries(without_traps(spec, urls), expected)
    assert not set(crawl.targets()) & spec.never_fetched
    report = crawl.result.report
    assert report is not None
    problems = report_problems(spec, report)
    assert not problems, "\n".join(problems[:50])
    print(f"generated site: {len(urls)} URLs, {len(crawl.requests)} requests, {crawl.result.seconds:.1f} s")


@GENERATED_CRAWL
def test_generated_site_sorted_in_small_runs_gives_the_same_files(
    generated_crawl: SiteCrawl, generated_shared: RunningSite, tmp_path: Path
) -> None:
    """Sorting through spilled runs (SITEMAP_SORT_RUN_SIZE: its minimum, 1,000) merges to the same bytes."""
    again = crawl_site(generated_shared, tmp_path, settings={"SITEMAP_SORT_RUN_SIZE": "1000"}, timeout=300)
    assert again.result.returncode == 0, again.result.describe()
    assert again.result.files() == generated_crawl.result.files()


# ---------------------------------------------------------------------------
# The `sitemap` feed format
# ---------------------------------------------------------------------------


def test_feed_format_from_the_sitemap_spider(shared_site: RunningSite, tmp_path: Path) -> None:
    feed = tmp_path / "urls.xml"
    crawl = crawl_site(shared_site, tmp_path, "-o", f"{feed}:sitemap")
    assert crawl.result.returncode == 0, crawl.result.describe()
    entries = without_traps(crawl.spec, read_urlset(feed))
    key = [(e["loc"], e.get("lastmod")) for e in entries]
    expected = [(e["loc"], e.get("lastmod")) for e in crawl.spec.expected_listed()]
    assert sorted(key) == expected


SPIDER_WITH_ITEMS = """
from __future__ import annotations

from dataclasses import dataclass

import scrapy


@dataclass
class Page:
    loc: str
    lastmod: str | None = None


class PageItem(scrapy.Item):
    loc = scrapy.Field()
    lastmod = scrapy.Field()
    changefreq = scrapy.Field()
    priority = scrapy.Field()


class ItemsSpider(scrapy.Spider):
    name = "items"

    async def start(self):
        yield {"loc": "https://example.com/a?b=1&c=2", "lastmod": "2024-05-01T10:20:30+00:00"}
        yield Page("https://example.com/caf%C3%A9")
        yield PageItem(loc="https://example.com/z", changefreq="daily", priority=0.5)
"""


def test_feed_format_from_any_spider(tmp_path: Path) -> None:
    spider = tmp_path / "items_spider.py"
    spider.write_text(textwrap.dedent(SPIDER_WITH_ITEMS), encoding="utf-8")
    feed = tmp_path / "urls.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "runspider", str(spider), "-o", f"{feed}:sitemap"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert b"a?b=1&amp;c=2" in feed.read_bytes()
    entries = sorted(read_urlset(feed), key=lambda e: e["loc"])
    assert entries[0] == {"loc": "https://example.com/a?b=1&c=2", "lastmod": "2024-05-01T10:20:30+00:00"}
    assert entries[1] == {"loc": "https://example.com/caf%C3%A9"}
    assert entries[2]["loc"] == "https://example.com/z"
    assert entries[2]["changefreq"] == "daily" and float(entries[2]["priority"]) == 0.5


def test_requests_waiting_for_robots_txt_are_all_checked(shared_site: RunningSite, tmp_path: Path) -> None:
    """Several requests wait for robots.txt at once: each is checked (Scrapy 2.19 let all but one through)."""
    private = [f"{shared_site.origin}/private/{name}" for name in ("a", "b", "c", "d")]
    before = len(shared_site.server.requests)
    result = run_crawl(" ".join([shared_site.start_url, *private]), tmp_path)
    assert result.returncode == 0, result.describe()
    fetched = [r.target for r in shared_site.server.requests[before:]]
    assert not [target for target in fetched if target.startswith("/private/")], fetched
    assert result.report is not None
    assert result.report["excluded"]["robots"] >= len(private)

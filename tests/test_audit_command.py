"""End-to-end tests of ``scrapy audit`` (sitemap_spider/commands/audit.py) on real local sites whose
sitemaps were left stale: every planted defect is reported, and nothing else; the site as it answers
now, whatever the crawl history says; the missing pages before a calendar's and an archive's; a
crawl cut short that says so."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from scrapy.settings import Settings

from sitemap_spider.commands.audit import use_audit_settings
from tests.crawl_fixtures import REPO_ROOT, run_crawl
from tests.site_server import HTML, SiteServer, html_page, links
from tests.site_spec import Route, SiteRequest
from tests.sitemap_check import read_sitemap_set

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
XML = (("Content-Type", "application/xml"),)
BUILD_TIME = "2024-01-01"
A_MODIFIED = "2023-06-01T08:00:00+00:00"


def urlset(*entries: tuple[str, str]) -> bytes:
    urls = "".join(f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod></url>\n" for loc, lastmod in entries)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>\n{urls}</urlset>\n'.encode()


def page(title: str, body: str = "", head: str = "", headers: tuple[tuple[str, str], ...] = ()) -> Route:
    return Route(headers=(("Content-Type", HTML), *headers), body=html_page(title, body, head))


def plant(server: SiteServer, other: str) -> None:
    """A site, and sitemaps written once and never updated since."""
    o = server.origin
    listed_a = ["/", "/a", "/old", "/gone", "/noidx", "/canon", "/private/x", "/orphan"]
    server.routes.update({
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),),
                             body=f"User-agent: *\nDisallow: /private/\nSitemap: {o}/sitemap_index.xml\n".encode()),
        "/sitemap_index.xml": Route(headers=XML, body=(
            f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {NS}>\n'
            f"<sitemap><loc>{o}/sitemap-a.xml</loc></sitemap>\n<sitemap><loc>{o}/sitemap-b.xml</loc></sitemap>\n"
            "</sitemapindex>\n").encode()),
        "/sitemap-a.xml": Route(headers=XML, body=urlset(*((o + path, BUILD_TIME) for path in listed_a))),
        "/sitemap-b.xml": Route(headers=XML, body=urlset(
            (o + "/stale", BUILD_TIME), (o + "/a", BUILD_TIME), (other + "/page", BUILD_TIME), (o + "/future", "2999-01-01"),
        )),
        "/": page("Home", links("/a", "/old", "/gone", "/noidx", "/canon", "/private/x", "/stale", "/unlisted", "/future")),
        # Its metadata dates it before the sitemap's lastmod (and it sends no Last-Modified).
        "/a": page("A", links("/"), head=f'<meta property="article:modified_time" content="{A_MODIFIED}">'),
        "/old": Route(status=301, headers=(("Location", "/a"),)),
        "/gone": Route(status=404, headers=(("Content-Type", HTML),), body=html_page("Gone")),
        "/noidx": page("No index", links("/"), head='<meta name="robots" content="noindex">'),
        "/canon": page("Copy of A", links("/"), head=f'<link rel="canonical" href="{o}/a">'),
        "/private/x": page("Private"),
        "/orphan": page("Nobody links here"),
        "/stale": page("Stale", links("/"), headers=(("Last-Modified", "Mon, 01 Jan 2018 00:00:00 GMT"),)),
        "/unlisted": page("Not in the sitemap", links("/")),
        "/future": page("Future", links("/")),
    })  # fmt: skip


def audit(
    *args: str, tmp_path: Path, timeout: float = 300, as_json: bool = True
) -> tuple[int, Any, str]:
    """Run ``scrapy audit``: its exit code, what it printed (parsed with ``as_json``), and a description."""
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "audit", *args, *(["--json"] if as_json else []),
         "-s", "REMOTE_CONTROL_ENABLED=False", "-s", "TELNETCONSOLE_ENABLED=False",
         "-s", f"SITEMAP_OUTPUT_DIR={tmp_path / 'out'}", "-s", "SITEMAP_RENDER=never"],
        check=False, cwd=REPO_ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    printed: Any = done.stdout
    if as_json:
        printed = json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}
    return done.returncode, printed, f"exit {done.returncode}\n{done.stdout[-5000:]}\n{done.stderr[-5000:]}"


def planted_findings(o: str, other: str) -> list[tuple[str, str | None]]:
    """(rule, url) of every defect :func:`plant` plants, sorted."""
    return sorted([
        ("audit.redirect", f"{o}/old"),
        ("audit.http_error", f"{o}/gone"),
        ("audit.noindex", f"{o}/noidx"),
        ("audit.canonical", f"{o}/canon"),
        ("audit.robots", f"{o}/private/x"),
        ("audit.orphan", f"{o}/orphan"),
        ("audit.lastmod_after_page", f"{o}/stale"),
        ("audit.lastmod_after_page", f"{o}/a"),
        ("audit.unlisted", f"{o}/unlisted"),
        ("audit.lastmod_uniform", None),
        ("audit.offsite", f"{other}/page"),
        ("loc.cross_submission", f"{other}/page"),  # the protocol's side of the same URL
        ("lastmod.future", f"{o}/future"),
        ("duplicate.across_files", f"{o}/a"),
    ], key=str)  # fmt: skip


def test_audit_reports_every_planted_defect_and_nothing_else(tmp_path: Path) -> None:
    with SiteServer() as server, SiteServer() as other:
        plant(server, other.origin)
        code, report, described = audit(server.origin + "/", tmp_path=tmp_path)
        fetched = server.targets()
    o = server.origin
    assert code == 1, described
    found = sorted(((f["rule"], f["url"]) for f in report["findings"]), key=str)
    assert found == planted_findings(o, other.origin), described
    details = {f["rule"]: f["detail"] for f in report["findings"]}
    assert details["audit.redirect"] == f"redirect: 301 to {o}/a"
    assert details["audit.http_error"] == "http_error: 404"
    dated = {f["url"]: f["detail"] for f in report["findings"] if f["rule"] == "audit.lastmod_after_page"}
    later = f"lastmod {BUILD_TIME} is later than the page's own date"
    assert dated[f"{o}/a"].startswith(f"{later}, {A_MODIFIED} (its metadata, else its")
    assert dated[f"{o}/stale"].startswith(f"{later}, 2018-01-01T00:00:00+00:00")
    assert details["audit.lastmod_uniform"].startswith(f"10 of 11 listed URLs have lastmod {BUILD_TIME}")
    every = {"rule", "severity", "url", "file", "line", "detail"}
    assert all(set(f) == every for f in report["findings"])
    assert report["summary"]["errors"] == 7 and report["summary"]["warnings"] == 7
    assert "/private/x" not in fetched
    assert not (tmp_path / "out").exists()  # nothing published


def test_a_sitemap_in_step_with_the_site_has_no_finding(tmp_path: Path) -> None:
    with SiteServer() as server:
        o = server.origin
        server.routes.update({
            "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nAllow: /\n"),
            "/current.xml": Route(headers=XML, body=urlset((o + "/", "2024-05-01"), (o + "/a", "2024-05-02"))),
            "/": page("Home", links("/a")),
            "/a": page("A", links("/"), headers=(("Last-Modified", "Thu, 02 May 2024 10:00:00 GMT"),)),
        })  # fmt: skip
        code, report, described = audit(o, "-a", f"sitemap={o}/current.xml", tmp_path=tmp_path)
        fetched = server.targets()
    assert code == 0, described
    assert report["findings"] == []
    assert [f["file"] for f in report["files"]] == [f"{o}/current.xml"]
    assert "/sitemap.xml" not in fetched  # the sitemap named by -a, not the default one


def test_audit_without_a_readable_sitemap_exits_2(tmp_path: Path) -> None:
    written = tmp_path / "reports" / "audit.json"
    written.parent.mkdir()
    written.write_text("an older audit's report")
    with SiteServer() as server:
        code, report, described = audit(server.origin + "/", "-s", f"SITEMAP_REPORT={written}", tmp_path=tmp_path)
    assert code == 2, described
    assert sorted(f["rule"] for f in report["findings"]) == ["read.fetch", "robots.no_sitemap"]
    # No crawl ran: SITEMAP_REPORT holds the findings alone, in place of the older report.
    saved = json.loads(written.read_text(encoding="utf-8"))
    assert saved["findings"] == report["findings"] and saved["audit"] == report["summary"], described
    assert saved["site"] == server.origin + "/" and saved["finish_reason"] is None
    assert sorted(p.name for p in written.parent.iterdir()) == ["audit.json"]  # no partial file left


def test_a_bad_setting_stops_the_audit_before_any_request(tmp_path: Path) -> None:
    with SiteServer() as server:
        code, report, described = audit(server.origin + "/", "-s", "SITEMAP_MAX_URLS=many", tmp_path=tmp_path)
        fetched = server.targets()
    assert code == 2 and report == {}, described
    assert "SITEMAP_MAX_URLS" in described
    assert fetched == []


def test_an_audit_describes_the_site_as_it_answers_now_whatever_the_history_says(tmp_path: Path) -> None:
    """A crawl with history, then a listed page answers 503: the audit reports it at once and
    asks nothing conditionally, keeps nothing from the history and writes nothing to it."""
    history = tmp_path / "history.sqlite"
    with SiteServer() as server:
        server.validators = True  # ETags and 304s, as a static file server: the history would use them
        o = server.origin
        server.routes.update({
            "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nAllow: /\n"),
            "/": page("Home", links("/a", "/b")),
            "/a": page("A", links("/"), headers=(("Last-Modified", "Thu, 02 May 2024 10:00:00 GMT"),)),
            "/b": page("B", links("/"), headers=(("Last-Modified", "Fri, 03 May 2024 10:00:00 GMT"),)),
        })  # fmt: skip
        crawl = run_crawl(o + "/", tmp_path, settings={"SITEMAP_HISTORY": str(history)})
        assert crawl.returncode == 0, crawl.describe()
        published = read_sitemap_set(crawl.output_dir, o + "/")
        assert sorted(url["loc"] for url in published) == [o + "/", o + "/a", o + "/b"]
        for file in crawl.output_dir.iterdir():  # the site serves the set its crawl published
            server.routes["/" + file.name] = Route(headers=XML, body=file.read_bytes())
        server.routes["/robots.txt"] = Route(
            headers=(("Content-Type", "text/plain"),), body=f"User-agent: *\nSitemap: {o}/sitemap_index.xml\n".encode()
        )
        # Down, asking for a minute: the audit reports it within seconds all the same.
        server.routes["/b"] = Route(status=503, headers=(("Retry-After", "60"),), body=b"Down")
        before = hashlib.sha256(history.read_bytes()).hexdigest()
        server.clear()
        started = time.monotonic()
        code, report, described = audit(o + "/", "-s", f"SITEMAP_HISTORY={history}", tmp_path=tmp_path, timeout=120)
        seconds = time.monotonic() - started
        asked = server.requests
    assert code == 1, described
    assert [(f["rule"], f["url"], f["detail"]) for f in report["findings"]] == [
        ("audit.http_error", o + "/b", "http_error: 503")
    ], described
    assert not [r.target for r in asked if any(n.lower().startswith("if-") for n, _ in r.headers)], described
    assert hashlib.sha256(history.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["history.sqlite", "report.json", "sitemaps"])
    # The audit's retries (docs/audit.md): two, then a last pass, a few seconds on this site (measured: 5 s)
    # where the crawl's own (five from 1 s, then up to 30 s for the last pass) took 33 s.
    assert [r.target for r in asked].count("/b") == 4, described
    assert seconds < 25, described


#: The real pages of the trap site that its stale sitemap leaves out (numbers in a URL do not make a trap).
MISSING = [
    "/team", "/contact", "/blog/2023/05/hello-world", "/blog/2024/01/second-post", "/product?id=1", "/product?id=2"
]  # fmt: skip


def month(request: SiteRequest) -> Route:
    """A calendar that goes on for ever both ways: each month links to the one before and after."""
    match = re.fullmatch(r"/calendar/(\d+)/(\d+)", request.target)
    assert match is not None
    n = int(match.group(1)) * 12 + int(match.group(2)) - 1
    before, after = (f"/calendar/{m // 12}/{m % 12 + 1:02d}" for m in (n - 1, n + 1))
    return page(f"Events {match.group(1)}-{match.group(2)}", links(before, after))


def archive_page(request: SiteRequest) -> Route:
    """An archive whose every page has an "older" link, the last ones empty."""
    number = int(request.target.rpartition("=")[2])
    return page(f"Archive, page {number}", links(f"/archive?page={number + 1}"))


def plant_trap_site(server: SiteServer) -> None:
    """A small site with a calendar and an archive that go on for ever, and a stale sitemap
    listing the home page and its sections but six of the real pages."""
    listed = ["/", "/about", "/blog/", "/products/", "/archive"]
    server.routes.update({
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),),
                             body=f"User-agent: *\nSitemap: {server.origin}/sitemap.xml\n".encode()),
        "/sitemap.xml": Route(headers=XML, body=urlset(*((server.origin + path, BUILD_TIME) for path in listed))),
        "/": page("Home", links("/about", "/blog/", "/products/", "/contact", "/calendar/2024/05", "/archive")),
        "/about": page("About", links("/team")),
        "/team": page("Team"),
        "/contact": page("Contact"),
        "/blog/": page("Blog", links("/blog/2023/05/hello-world", "/blog/2024/01/second-post")),
        "/blog/2023/05/hello-world": page("Hello"),
        "/blog/2024/01/second-post": page("Second post"),
        "/products/": page("Products", links("/product?id=1", "/product?id=2")),
        "/product?id=1": page("Product 1"),
        "/product?id=2": page("Product 2"),
        "/archive": page("Archive", links("/archive?page=2")),
    })  # fmt: skip
    server.dynamic = [
        (re.compile(r"/calendar/\d+/\d+"), month),
        (re.compile(r"/archive\?page=\d+"), archive_page),
    ]


def test_the_pages_missing_from_a_stale_sitemap_come_first_and_the_traps_last(tmp_path: Path) -> None:
    written = tmp_path / "audit.json"
    with SiteServer() as server:
        plant_trap_site(server)
        code, printed, described = audit(
            server.origin + "/", "-s", f"SITEMAP_REPORT={written}", tmp_path=tmp_path, as_json=False
        )
    o = server.origin
    assert code == 0, described  # warnings only
    report = json.loads(written.read_text(encoding="utf-8"))
    rules = [f["rule"] for f in report["findings"]]
    # The six real pages first, then every page of the calendar and the archive, none left out:
    # the calendar's 199 months (depth 1 to DEPTH_LIMIT, 100, both ways from 2024-05) and the
    # archive's pages 2 to 101.
    assert rules == ["audit.unlisted"] * 6 + ["audit.unlisted_trap"] * (199 + 100), described
    assert sorted(f["url"] for f in report["findings"][:6]) == sorted(o + path for path in MISSING)
    traps = report["findings"][6:]
    assert {f"{o}/calendar/2024/05", f"{o}/calendar/2032/08", f"{o}/archive?page=101"} <= {f["url"] for f in traps}
    why = {f["url"]: f["detail"] for f in traps}
    assert why[f"{o}/calendar/2024/05"] == (
        "indexable, found by the crawl, in no sitemap; trap-like: one of 199 URLs like /calendar/{n}/{n}, "
        "followed level after level down to DEPTH_LIMIT (100) without an end"
    )
    assert "trap-like: one of 100 URLs like /archive?page={n}, followed" in why[f"{o}/archive?page=2"]
    crawl = report["audit"]["crawl"]
    assert crawl["complete"] is True and crawl["incomplete_because"] == [], crawl
    assert crawl["endless_series"] == {"/archive?page={n}": 100, "/calendar/{n}/{n}": 199}, crawl
    assert (crawl["missing_pages"], crawl["trap_like_pages"]) == (6, 299)
    # The terminal: the same order, cut at 20 findings of a rule, and where the rest are.
    lines = printed.splitlines()
    assert [line.split(": ")[0] for line in lines[:6]] == [f["url"] for f in report["findings"][:6]], described
    assert all("[audit.unlisted_trap]" in line for line in lines[6:26]), described
    everything = f"--json lists them all, and so does {written}"
    assert lines[26] == f"... and 279 more audit.unlisted_trap finding(s), not shown: {everything}", described
    assert lines[27] == (
        "crawl: complete; 6 page(s) in no sitemap, and 299 trap-like "
        "(endless series: /archive?page={n} 100, /calendar/{n}/{n} 199)"
    ), described


def test_an_audit_whose_crawl_was_cut_short_says_so_first(tmp_path: Path) -> None:
    with SiteServer() as server:
        plant_trap_site(server)
        code, report, described = audit(
            server.origin + "/", "-s", "CLOSESPIDER_PAGECOUNT=12", tmp_path=tmp_path
        )
    assert code == 0, described  # cut short by a limit the user set: audited as far as it went
    findings = report["findings"]
    assert findings[0]["rule"] == "audit.crawl_incomplete", described
    assert findings[0]["detail"].startswith(
        "the crawl was cut short: CLOSESPIDER_PAGECOUNT ended it"
    )
    unlisted = [f for f in findings if f["rule"] == "audit.unlisted"]
    assert unlisted, described
    assert all(f["detail"].endswith("(the crawl was cut short: there may be more)") for f in unlisted)
    crawl = report["summary"]["crawl"]
    assert crawl["complete"] is False and crawl["finish_reason"] == "closespider_pagecount", crawl
    assert crawl["verdict"].startswith("INCOMPLETE (CLOSESPIDER_PAGECOUNT ended it); so far "), crawl


def test_the_audits_own_settings_and_which_of_them_s_overrides() -> None:
    settings = Settings({"SITEMAP_HISTORY": "history.sqlite", "SITEMAP_RETRY_TIMES": 9}, priority="project")
    settings.setdict({"SITEMAP_HISTORY": "h.sqlite", "SITEMAP_RETRY_DELAY": 3.0}, priority="cmdline")
    use_audit_settings(settings)
    assert settings["SITEMAP_HISTORY"] == "off"  # whatever the settings say
    assert settings.getbool("SITEMAP_PUBLISH") is False and settings["SITEMAP_WORKERS"] == "1"
    assert settings.getint("SITEMAP_RETRY_TIMES") == 2  # the project's crawl setting is not the audit's
    assert settings.getfloat("SITEMAP_RETRY_DELAY") == 3.0  # -s names it
    assert settings.getfloat("SITEMAP_RETRY_LAST_PASS_DELAY") == 2.0
    assert settings.getfloat("SITEMAP_RETRY_BUDGET") == 30.0


def test_a_robots_txt_failing_every_try_is_an_error_of_its_own(tmp_path: Path) -> None:
    """robots.txt answers 503 throughout: the audit crawls as if there were none (as a crawl with
    no earlier copy does) and says so first, since search engines stop crawling such a site."""
    with SiteServer() as server:
        o = server.origin
        server.routes.update({
            "/robots.txt": Route(status=503, headers=(("Content-Type", HTML),), body=b"<p>down for a deploy"),
            "/current.xml": Route(headers=XML, body=urlset((o + "/", "2024-05-01"), (o + "/a", "2024-05-02"))),
            "/": page("Home", links("/a")),
            "/a": page("A", links("/"), headers=(("Last-Modified", "Thu, 02 May 2024 10:00:00 GMT"),)),
        })  # fmt: skip
        code, report, described = audit(o, "-a", f"sitemap={o}/current.xml", tmp_path=tmp_path)
        asked = server.targets().count("/robots.txt")
    assert code == 1, described
    findings = report["findings"]
    assert [f["rule"] for f in findings] == ["audit.robots_unavailable"], described
    assert findings[0]["detail"].startswith(f"{o}/robots.txt: 503 x3. RFC 9309 reads that as"), findings
    assert asked >= 3, asked  # the audit's first try and its SITEMAP_RETRY_TIMES (2)

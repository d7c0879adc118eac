"""End-to-end tests of ``scrapy validate`` (sitemap_spider/commands/validate.py): the real command in a
subprocess, on what ``scrapy crawl sitemap`` and ``scrapy publish`` write, and on URLs served by real
local HTTP servers (robots.txt, redirects, gzip, cross-submission)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.crawl_fixtures import REPO_ROOT, RunningSite, run_crawl
from tests.site_server import SiteServer
from tests.site_spec import Route

DATA = Path(__file__).parent / "data" / "validate"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
XML = (("Content-Type", "application/xml"),)
GZIP = (("Content-Type", "application/gzip"),)
TEXT = (("Content-Type", "text/plain"),)


@dataclass(frozen=True)
class Validation:
    returncode: int
    stdout: str
    stderr: str

    @property
    def report(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.stdout)
        return parsed

    def findings(self) -> list[tuple[str, str | None]]:
        """(rule, url) of every finding, sorted."""
        return sorted(((f["rule"], f["url"]) for f in self.report["findings"]), key=str)

    def describe(self) -> str:
        return f"exit code {self.returncode}\n--- stdout\n{self.stdout[-6000:]}\n--- stderr\n{self.stderr[-4000:]}"


def validate(*args: str) -> Validation:
    command = [sys.executable, "-m", "scrapy", "validate", *args,
               "-s", "REMOTE_CONTROL_ENABLED=False", "-s", "TELNETCONSOLE_ENABLED=False"]  # fmt: skip
    # The timeout only guards against a hang: every hostile input must end with its finding.
    done = subprocess.run(
        command, check=False, cwd=REPO_ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=180
    )
    return Validation(done.returncode, done.stdout, done.stderr)


def urlset(*locs: str) -> bytes:
    urls = "".join(f"<url><loc>{loc}</loc></url>\n" for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>\n{urls}</urlset>\n'.encode()


def sitemapindex(*locs: str) -> bytes:
    items = "".join(f"<sitemap><loc>{loc}</loc></sitemap>\n" for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {NS}>\n{items}</sitemapindex>\n'.encode()


def robots(*lines: str) -> Route:
    return Route(headers=TEXT, body="".join(f"{line}\n" for line in lines).encode())


# --- what the project writes validates with no finding -----------------------------------------------


def assert_clean(run: Validation, files: int) -> None:
    assert run.returncode == 0, run.describe()
    assert run.report["findings"] == []
    assert run.report["summary"]["files"] == files, run.describe()
    assert run.report["summary"]["warnings"] == 0


def test_a_crawl_output_validates_with_no_finding(case_site: RunningSite, tmp_path: Path) -> None:
    crawl = run_crawl(
        case_site.start_url, tmp_path, settings={"SITEMAP_MAX_URLS": "7", "SITEMAP_GZIP": "True"}
    )
    assert crawl.returncode == 0, crawl.describe()
    shards = sorted(crawl.output_dir.glob("sitemap-*.xml.gz"))
    assert len(shards) >= 2
    # Locally: the index, and each shard read from beside it.
    run = validate(str(crawl.output_dir / "sitemap_index.xml"), "--json")
    assert_clean(run, files=1 + len(shards))
    urls = sum(f["entries"] for f in run.report["files"] if f["kind"] == "urlset")
    assert urls == run.report["summary"]["urls"] > 7
    # Over HTTP, from where the crawl says the set is served: the cross-submission rule applies too.
    for path in crawl.output_dir.iterdir():
        case_site.server.routes[f"/{path.name}"] = Route(
            headers=GZIP if path.suffix == ".gz" else XML, body=path.read_bytes()
        )
    run = validate(f"{case_site.origin}/sitemap_index.xml", "--json")
    assert_clean(run, files=1 + len(shards))
    assert {f["location"] for f in run.report["files"]} == {
        f"{case_site.origin}/{path.name}" for path in crawl.output_dir.iterdir()
    }


def test_a_published_set_validates_with_no_finding(tmp_path: Path) -> None:
    base = "https://www.example.com/"
    lines = [
        {
            "loc": f"{base}p/{i}?a=1&b=2",
            "lastmod": f"2024-05-{i % 28 + 1:02d}T10:20:30+02:00",
            "priority": 0.5,
        }
        for i in range(120)
    ] + [{"loc": f"{base}caf\u00e9/{i}", "changefreq": "daily"} for i in range(30)]
    source = tmp_path / "entries.jl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    output = tmp_path / "out"
    publish = subprocess.run(
        [sys.executable, "-m", "scrapy", "publish", str(source), "-s", f"SITEMAP_OUTPUT_DIR={output}",
         "-s", f"SITEMAP_BASE_URL={base}", "-s", "SITEMAP_MAX_URLS=40", "-s", "SITEMAP_GZIP=True"],
        check=False, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert publish.returncode == 0, publish.stderr[-3000:]
    run = validate(str(output / "sitemap_index.xml"), "--json", "--base-url", base)
    assert_clean(run, files=5)
    assert run.report["summary"]["urls"] == 150


def test_a_news_entry_may_also_be_in_a_regular_sitemap_but_not_twice_in_news(tmp_path: Path) -> None:
    news_ns = 'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'

    def news_file(*locs: str) -> bytes:
        urls = "".join(
            f"<url><loc>{loc}</loc><news:news><news:publication><news:name>The Daily</news:name>"
            "<news:language>en</news:language></news:publication>"
            "<news:publication_date>2026-11-20</news:publication_date>"
            "<news:title>A title</news:title></news:news></url>\n"
            for loc in locs
        )
        return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS} {news_ns}>\n{urls}</urlset>\n'.encode()

    article, other = "https://www.example.com/news/a", "https://www.example.com/news/b"
    (tmp_path / "sitemap-00001.xml").write_bytes(urlset(article, other))
    (tmp_path / "sitemap-news-00001.xml").write_bytes(news_file(article))
    run = validate(str(tmp_path / "sitemap-00001.xml"), str(tmp_path / "sitemap-news-00001.xml"), "--json")
    assert_clean(run, files=2)
    # Listed twice among news entries is a duplicate, as in any two sitemaps.
    (tmp_path / "sitemap-news-00002.xml").write_bytes(news_file(other, article))
    run = validate(*(str(tmp_path / name) for name in sorted(os.listdir(tmp_path))), "--json")
    assert run.findings() == [("duplicate.across_files", article)], run.describe()


# --- the command line: output, exit codes ---------------------------------------------------------------


def test_summary_and_exit_codes() -> None:
    broken = DATA / "broken"
    run = validate(str(DATA / "valid" / "extensions.xml"))
    assert run.returncode == 0, run.describe()
    assert run.stdout.rstrip().endswith("valid: 1 file(s), 4 URL(s); 0 error(s), 0 warning(s)")
    run = validate(str(broken / "lastmod.future.xml"))
    assert run.returncode == 0, run.describe()  # a warning alone
    assert "lastmod.future.xml:3: warning [lastmod.future]" in run.stdout
    run = validate(str(broken / "loc.scheme.xml"))
    assert run.returncode == 1, run.describe()
    assert (
        "loc.scheme.xml:3: error [loc.scheme] 'ftp://www.example.com/file.txt' is not http or https"
        in run.stdout
    )
    run = validate(str(broken / "loc.scheme.xml"), str(broken / "no-such.xml"), "--json")
    assert run.returncode == 2, run.describe()
    assert run.report["summary"]["unread_inputs"] == [str(broken / "no-such.xml")]
    assert {f["rule"] for f in run.report["findings"]} == {"loc.scheme", "read.missing"}
    finding = next(f for f in run.report["findings"] if f["rule"] == "loc.scheme")
    assert finding == {
        "rule": "loc.scheme", "severity": "error", "url": "ftp://www.example.com/file.txt",
        "file": str(broken / "loc.scheme.xml"), "line": 3, "detail": "'ftp://www.example.com/file.txt' is not http or https",
    }  # fmt: skip


def test_strict_fails_on_warnings() -> None:
    """--strict (#25): for CI pipelines that want no warnings; errors and unreadable inputs as before."""
    broken = DATA / "broken"
    run = validate(str(broken / "lastmod.future.xml"), "--strict")
    assert run.returncode == 1, run.describe()
    assert run.stdout.rstrip().endswith(
        "INVALID (--strict: warnings fail): 1 file(s), 2 URL(s); 0 error(s), 1 warning(s) (lastmod.future 1)"
    )
    run = validate(str(DATA / "valid" / "extensions.xml"), "--strict", "--json")
    assert run.returncode == 0, run.describe()
    assert run.report["summary"]["exit_code"] == 0
    run = validate(str(broken / "link.ignored.xml"), str(broken / "file.binary.png"), "--strict", "--json")
    assert run.returncode == 2, run.describe()  # a binary file is not a sitemap at all
    assert run.report["summary"]["unread_inputs"] == [str(broken / "file.binary.png")]


def test_hostile_files_end_with_their_finding() -> None:
    broken = DATA / "broken"
    names = [
        "xml.dtd-xxe.xml",
        "xml.dtd-billion_laughs.xml",
        "limits.bytes-gzip_bomb.xml.gz",
        "text.line_too_long.txt.gz",
    ]
    run = validate(*(str(broken / name) for name in names), "--json")
    assert run.returncode == 2, run.describe()  # the refused ones cannot be read
    assert sorted((Path(f["file"]).name, f["rule"]) for f in run.report["findings"]) == [
        ("limits.bytes-gzip_bomb.xml.gz", "limits.bytes"),
        ("text.line_too_long.txt.gz", "text.line_too_long"),
        ("xml.dtd-billion_laughs.xml", "xml.dtd"),
        ("xml.dtd-xxe.xml", "xml.dtd"),
    ]
    assert "root:" not in json.dumps(run.report)  # nothing of /etc/passwd


# --- URLs, from a real local server --------------------------------------------------------------------


def test_a_site_url_is_read_through_robots_txt() -> None:
    with SiteServer() as server:
        origin = server.origin
        server.routes.update({
            "/robots.txt": robots("User-agent: *", "Disallow: /private/", f"Sitemap: {origin}/sm/index.xml"),
            "/sm/index.xml": Route(headers=XML, body=sitemapindex(f"{origin}/sm/a.xml.gz", f"{origin}/sm/b.txt")),
            "/sm/a.xml.gz": Route(headers=GZIP, body=gzip.compress(urlset(f"{origin}/sm/1", f"{origin}/sm/2"))),
            "/sm/b.txt": Route(headers=TEXT, body=f"{origin}/sm/3\n{origin}/sm/1\n".encode()),
        })  # fmt: skip
        run = validate(origin + "/", "--json")
        requests = server.requests
    assert run.returncode == 0, run.describe()
    assert run.findings() == [("duplicate.across_files", f"{origin}/sm/1")]
    # The two sitemaps are fetched at once: either may be read first.
    assert sorted((f["file"], f["kind"], f["entries"]) for f in run.report["files"]) == [
        (f"{origin}/sm/a.xml.gz", "urlset", 2),
        (f"{origin}/sm/b.txt", "text", 2),
        (f"{origin}/sm/index.xml", "sitemapindex", 2),
    ]
    assert all("sitemap_spider/0.1" in dict(r.headers).get("User-Agent", "") for r in requests)


def test_fetch_failures_are_findings() -> None:
    with SiteServer() as server:
        origin = server.origin
        server.routes.update({
            "/robots.txt": robots("User-agent: *", "Disallow: /private/"),
            "/loop-a.xml": Route(status=302, headers=(("Location", "/loop-b.xml"),)),
            "/loop-b.xml": Route(status=302, headers=(("Location", "/loop-a.xml"),)),
            "/private/sitemap.xml": Route(headers=XML, body=urlset(f"{origin}/private/x")),
            # A valid sitemap, then 60 MiB of white space: about 60 KB on the wire.
            "/bomb.xml.gz": Route(headers=GZIP, body=gzip.compress(urlset(f"{origin}/a") + b"\n" * (60 << 20), 9)),
        })  # fmt: skip
        run = validate(f"{origin}/loop-a.xml", f"{origin}/missing.xml", f"{origin}/private/sitemap.xml",
                       f"{origin}/bomb.xml.gz", "--json")  # fmt: skip
        fetched = server.targets()
    assert run.returncode == 2, run.describe()
    by_file = {f["file"]: (f["rule"], f["detail"]) for f in run.report["findings"]}
    assert by_file.keys() == {
        f"{origin}/{name}" for name in ("loop-a.xml", "missing.xml", "private/sitemap.xml", "bomb.xml.gz")
    }
    assert by_file[f"{origin}/loop-a.xml"][0] == "read.redirects"
    assert by_file[f"{origin}/loop-a.xml"][1].startswith(
        f"a redirect loop: {origin}/loop-a.xml -> {origin}/loop-b.xml"
    )
    assert by_file[f"{origin}/missing.xml"] == ("read.fetch", "HTTP status 404")
    assert by_file[f"{origin}/private/sitemap.xml"][0] == "read.robots"
    assert by_file[f"{origin}/bomb.xml.gz"][0] == "limits.bytes"
    assert "/private/sitemap.xml" not in fetched
    assert fetched.count("/loop-a.xml") == 6  # REDIRECT_MAX_TIMES 10: the loop ended


def test_a_site_without_sitemap_line_falls_back_to_sitemap_xml() -> None:
    with SiteServer() as server:
        origin = server.origin
        server.routes["/sitemap.xml"] = Route(headers=XML, body=urlset(f"{origin}/a"))
        run = validate(origin, "--json")
    assert run.returncode == 0, run.describe()
    assert run.findings() == [("robots.no_sitemap", origin)]
    assert [f["file"] for f in run.report["files"]] == [f"{origin}/sitemap.xml"]


def test_cross_submission_is_allowed_by_robots_txt_of_the_url_host() -> None:
    with SiteServer() as server, SiteServer() as allowing, SiteServer() as silent:
        origin = server.origin
        sitemap = f"{origin}/sm/sitemap.xml"
        server.routes.update({
            "/robots.txt": robots("User-agent: *", "Allow: /"),
            "/sm/sitemap.xml": Route(headers=XML, body=urlset(
                f"{origin}/sm/in-scope", f"{origin}/elsewhere", f"{allowing.origin}/page", f"{silent.origin}/page",
            )),
        })  # fmt: skip
        allowing.routes["/robots.txt"] = robots("User-agent: *", "Allow: /", f"Sitemap: {sitemap}")
        silent.routes["/robots.txt"] = robots("User-agent: *", "Allow: /")
        run = validate(sitemap, "--json")
    assert run.returncode == 1, run.describe()
    assert run.findings() == sorted(
        [("loc.cross_submission", f"{origin}/elsewhere"), ("loc.cross_submission", f"{silent.origin}/page")], key=str
    )
    details = {f["url"]: f["detail"] for f in run.report["findings"]}
    assert details[f"{silent.origin}/page"] == (
        f"outside the scope of {sitemap}; {silent.origin}/robots.txt has no 'Sitemap: {sitemap}' line that would allow it"
    )
    assert run.report["summary"]["allowed_by_robots"] == 1


def test_indexes_over_http_nested_and_looping() -> None:
    with SiteServer() as server:
        origin = server.origin
        server.routes.update({
            "/index.xml": Route(headers=XML, body=sitemapindex(f"{origin}/inner.xml", f"{origin}/a.xml")),
            "/inner.xml": Route(headers=XML, body=sitemapindex(f"{origin}/index.xml", f"{origin}/a.xml", f"{origin}/b.xml")),
            "/a.xml": Route(headers=XML, body=urlset(f"{origin}/1")),
            "/b.xml": Route(headers=XML, body=urlset(f"{origin}/2")),
        })  # fmt: skip
        run = validate(f"{origin}/index.xml", "--json")
        fetched = server.targets()
    assert run.returncode == 1, run.describe()
    assert run.findings() == [
        ("index.duplicate", f"{origin}/a.xml"),
        ("index.loop", f"{origin}/index.xml"),
        ("index.nested", f"{origin}/inner.xml"),
    ]
    assert sorted(t for t in fetched if t != "/robots.txt") == [
        "/a.xml",
        "/b.xml",
        "/index.xml",
        "/inner.xml",
    ]


@pytest.mark.parametrize("argument", ["--max-depth=-1", "--base-url=www.example.com"])
def test_bad_usage(argument: str) -> None:
    run = validate(str(DATA / "valid" / "urls.txt"), argument)
    assert run.returncode == 2, run.describe()
    assert "Usage" in run.stderr or "error" in run.stderr.lower()


def test_a_sitemap_line_that_is_no_absolute_url_is_a_finding_and_the_next_lines_are_read() -> None:
    """``Sitemap: /sitemap.xml`` is a common slip: Scrapy's Request refused it, which ended the callback
    reading the lines; the sitemaps named after it were never read, and the run said 'valid: 0 file(s)'."""
    with SiteServer() as server:
        origin = server.origin
        server.routes.update({
            "/robots.txt": robots("User-agent: *", "Allow: /", "Sitemap: /sitemap.xml",
                                  "Sitemap: https://[DOMAIN]/sitemap.xml", f"Sitemap: {origin}/real.xml"),
            "/real.xml": Route(headers=XML, body=urlset(f"{origin}/a")),
        })  # fmt: skip
        run = validate(origin, "--json")
    assert run.returncode == 2, run.describe()
    assert run.findings() == [("read.fetch", "/sitemap.xml"), ("read.fetch", "https://[DOMAIN]/sitemap.xml")]
    assert [f["file"] for f in run.report["files"]] == [f"{origin}/real.xml"]
    assert "Traceback" not in run.stderr, run.describe()


def test_an_input_that_is_no_url_scrapy_can_fetch_is_a_finding_not_a_valid_run() -> None:
    """A port out of range, or 'Invalid IPv6 URL': Scrapy's Request refused it in the spider's start, which
    ended it; no URL input after it was read, and the run said 'valid: 0 file(s)' and exited 0."""
    with SiteServer() as server:
        server.routes["/real.xml"] = Route(headers=XML, body=urlset(f"{server.origin}/a"))
        inputs = ("http://127.0.0.1:99999/sitemap.xml", "http://[x/", f"{server.origin}/real.xml")
        run = validate(*inputs, "--json")
    assert run.returncode == 2, run.describe()
    assert run.findings() == [("read.fetch", "http://127.0.0.1:99999/sitemap.xml"), ("read.fetch", "http://[x/")]
    assert [f["file"] for f in run.report["files"]] == [f"{server.origin}/real.xml"]

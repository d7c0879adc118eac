"""SITEMAP_MAX_SHRINK: a set that lists a small share of the previous one does not replace it.

A site half down, a robots.txt accident or a login wall makes a crawl find a fraction of the
site; publishing that fraction would tell search engines the rest is gone.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.crawl_fixtures import REPO_ROOT, run_crawl
from tests.site_server import HTML, SiteServer, html_page
from tests.site_spec import Route
from tests.sitemap_check import read_sitemap_set

PAGES = [f"/p{n}" for n in range(19)]
BASE = "https://www.example.com/"


def _routes(linked: list[str]) -> dict[str, Route]:
    home = "".join(f'<a href="{path}">{path}</a> ' for path in linked)
    return {
        "/robots.txt": Route(headers=(("Content-Type", "text/plain"),), body=b""),
        "/": Route(headers=(("Content-Type", HTML),), body=html_page("Home", home)),
        **{path: Route(headers=(("Content-Type", HTML),), body=html_page(path, '<a href="/">home</a>'))
           for path in PAGES},
    }


def test_a_crawl_finding_a_fraction_of_the_site_publishes_nothing_and_keeps_the_last(tmp_path: Path) -> None:
    with SiteServer(_routes(PAGES)) as server:
        first = run_crawl(server.origin + "/", tmp_path)
        assert first.returncode == 0, first.describe()
        before = first.files()
        assert len(read_sitemap_set(first.output_dir, server.origin + "/")) == 20
        history = (tmp_path / "history.sqlite").read_bytes()

        # The home page now links 4 of its 19 pages (a login wall, a broken menu): 5 URLs of 20.
        server.routes = _routes(PAGES[:4])
        second = run_crawl(server.origin + "/", tmp_path)
        assert second.returncode == 1, second.describe()
        # Both counts and the setting, in the log and the report.
        assert "SITEMAP_MAX_SHRINK" in second.stderr, second.describe()
        assert "5 URLs" in second.stderr and "20 the" in second.stderr, second.describe()
        assert second.files() == before  # the published set, byte for byte
        assert (tmp_path / "history.sqlite").read_bytes() == history  # and the history
        assert second.report is not None and "SITEMAP_MAX_SHRINK" in second.report["not_published"]

        # A deliberate shrink: the guard off.
        third = run_crawl(server.origin + "/", tmp_path, settings={"SITEMAP_MAX_SHRINK": "0"})
        assert third.returncode == 0, third.describe()
        assert len(read_sitemap_set(third.output_dir, server.origin + "/")) == 5


def test_a_set_that_keeps_half_of_the_urls_is_published(tmp_path: Path) -> None:
    with SiteServer(_routes(PAGES)) as server:
        assert run_crawl(server.origin + "/", tmp_path).returncode == 0
        server.routes = _routes(PAGES[:9])  # 10 URLs of 20: the default's limit, not below it
        second = run_crawl(server.origin + "/", tmp_path)
        assert second.returncode == 0, second.describe()
        assert len(read_sitemap_set(second.output_dir, server.origin + "/")) == 10


def _publish(tmp_path: Path, pages: int, *options: str) -> subprocess.CompletedProcess[str]:
    """``scrapy publish`` of ``pages`` URLs into tmp_path/out."""
    entries = tmp_path / "entries.jl"
    entries.write_text("".join(json.dumps({"loc": f"{BASE}page/{n}"}) + "\n" for n in range(pages)))
    command = [sys.executable, "-m", "scrapy", "publish", str(entries),
               "-s", f"SITEMAP_OUTPUT_DIR={tmp_path / 'out'}", "-s", f"SITEMAP_BASE_URL={BASE}", *options]
    return subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False)


def _files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir()) if path.is_file()}


def test_scrapy_publish_has_the_same_guard(tmp_path: Path) -> None:
    assert _publish(tmp_path, 10).returncode == 0
    before = _files(tmp_path / "out")

    refused = _publish(tmp_path, 3)
    assert refused.returncode == 1, refused.stderr
    assert "SITEMAP_MAX_SHRINK" in refused.stderr and "3 URLs" in refused.stderr, refused.stderr
    assert _files(tmp_path / "out") == before

    allowed = _publish(tmp_path, 3, "-s", "SITEMAP_MAX_SHRINK=0")
    assert allowed.returncode == 0, allowed.stderr
    assert len(read_sitemap_set(tmp_path / "out", BASE)) == 3


def test_a_bad_value_fails_at_start_up_naming_the_setting(tmp_path: Path) -> None:
    result = run_crawl("http://127.0.0.1:9/", tmp_path, settings={"SITEMAP_MAX_SHRINK": "1.5"})
    assert result.returncode == 2
    assert "SITEMAP_MAX_SHRINK" in result.stderr

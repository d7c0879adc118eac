"""The README's first command as a newcomer sees it: the summary, not two log lines a page (#26).

The real ``scrapy crawl sitemap`` of a generated site of 500 pages, with no log level asked
for, prints at most 40 lines (the live status line is drawn only on a terminal); ``-L DEBUG``
brings Scrapy's whole output back, each entry shown as a user recognises it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.crawl_fixtures import QUICK_RETRIES, REPO_ROOT
from tests.generated_site import build_generated_site
from tests.site_server import SiteServer
from tests.sitemap_check import read_sitemap_set


def _crawl(origin: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    # As the README has it: no REMOTE_CONTROL_ENABLED or TELNETCONSOLE_ENABLED given (both off by default).
    args = [
        sys.executable, "-m", "scrapy", "crawl", "sitemap", "-a", f"url={origin}/",
        "-s", f"SITEMAP_OUTPUT_DIR={tmp_path / 'sitemaps'}", "-s", "SITEMAP_HISTORY=off",
        *(arg for name, value in QUICK_RETRIES.items() for arg in ("-s", f"{name}={value}")),
        *extra,
    ]  # fmt: skip
    return subprocess.run(args, cwd=REPO_ROOT, capture_output=True, text=True, timeout=180, env=dict(os.environ))


def test_the_first_command_prints_a_summary_not_the_pages(tmp_path: Path) -> None:
    with SiteServer() as server:
        spec = build_generated_site(server.origin, 500)
        server.serve(spec)
        quiet = _crawl(server.origin, tmp_path / "quiet")
        loud = _crawl(server.origin, tmp_path / "loud", "-L", "DEBUG")
    assert quiet.returncode == 0, quiet.stderr[-3000:]
    listed = read_sitemap_set(tmp_path / "quiet" / "sitemaps", server.origin + "/")
    assert len(listed) > 300
    lines = (quiet.stdout + quiet.stderr).splitlines()
    assert len(lines) <= 40, "\n".join(lines)
    assert "Sitemap published:" in quiet.stderr
    assert "Crawled (200)" not in quiet.stderr and "Dumping Scrapy stats" not in quiet.stderr
    # The last progress line gives the whole crawl's rate, not the last seconds' (0 at the end).
    final = next(line for line in lines if "Progress at the end" in line)
    assert " 0.0 pages/s" not in final, final

    assert loud.returncode == 0, loud.stderr[-3000:]
    assert loud.stderr.count("Crawled (200)") >= len(listed)
    # A scheduled crawl opens no port: neither Scrapy's telnet console nor its remote control.
    assert "Telnet console listening" not in loud.stderr and "Remote control HTTP server" not in loud.stderr
    assert "scrapy.extensions.telnet.TelnetConsole" not in loud.stderr.split("Enabled extensions:")[1][:3000]
    assert "Enabled downloader middlewares" in loud.stderr and "Dumping Scrapy stats" in loud.stderr
    # An entry reads as its URL and lastmod, not as every field with the internal digest.
    scraped = [line for line in loud.stderr.splitlines() if line.startswith("<SitemapEntry ")]
    assert scraped and "content_digest" not in loud.stderr


def test_the_second_crawling_process_is_as_quiet(tmp_path: Path) -> None:
    """On a machine of two cores a crawl that queues enough starts a second process (a new
    interpreter): it printed Scrapy's versions, set-up lists and stats dump, about 100 lines."""
    with SiteServer() as server:
        server.serve(build_generated_site(server.origin, 500))
        two = _crawl(
            server.origin, tmp_path, "-s", "SITEMAP_WORKERS=2", "-s", "SITEMAP_WORKERS_AFTER=0", "-s", "SITEMAP_GZIPP=1"
        )
    assert two.returncode == 0, two.stderr[-3000:]
    assert "[worker 2]" in two.stderr, two.stderr[-3000:]
    # A setting that is none of ours is named once per crawl, not once more by the second process.
    typo = [line for line in two.stderr.splitlines() if "SITEMAP_GZIPP is not a setting" in line]
    assert len(typo) == 1, "\n".join(typo)
    lines = (two.stdout + two.stderr).splitlines()
    assert len(lines) <= 40, "\n".join(lines)
    set_up = ("Versions:", "Enabled extensions", "Overridden settings", "Dumping Scrapy stats",
              "Crawled 0 pages")
    assert [line for line in set_up if line in two.stderr] == [], two.stderr[-3000:]

"""The progress line (sitemap_spider/progress.py): live in a pseudo-terminal, a plain log line on a pipe.

Both tests run the real ``scrapy crawl sitemap`` against a local fixture site, slowed by a
download delay so that the crawl lasts a few seconds and the line is drawn several times.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crawl_fixtures import REPO_ROOT, RunningSite, crawl_command, run_crawl, serve_site
from tests.generated_site import build_generated_site

#: A crawl of a few seconds: one request at a time, 40 ms apart.
SLOW = {
    "AUTOTHROTTLE_ENABLED": "False",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "1",
    "DOWNLOAD_DELAY": "0.04",
    "DOWNLOAD_DELAY_JITTER": "0",
    "LOGSTATS_INTERVAL": "1",
    "SITEMAP_WORKERS": "1",
}
LIVE_LINE = re.compile(r"\rfetched ([\d,]+) \u00b7 queued [\d,]+ \u00b7 listed [\d,]+ \u00b7 excluded [\d,]+"
                       r" \u00b7 rendered [\d,]+ \u00b7 [\d,.]+ pages/s \u00b7 \d+:\d\d:\d\d")  # fmt: skip


@pytest.fixture(scope="module")
def small_site() -> Iterator[RunningSite]:
    with serve_site(lambda origin, _other: build_generated_site(origin, 120, chain=5)) as site:
        yield site


def run_in_terminal(args: list[str], timeout: float = 180) -> str:
    """Run a command with a pseudo-terminal (160 columns) as its standard streams; what it wrote."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
    process = subprocess.Popen(args, cwd=REPO_ROOT, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    output = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer of the terminal has gone
                break
            if not data:
                break
            output += data
        else:
            process.kill()
            pytest.fail(f"the crawl did not end within {timeout} s:\n{output.decode(errors='replace')[-3000:]}")
        assert process.wait(timeout=30) == 0, output.decode(errors="replace")[-3000:]
    finally:
        os.close(master)
    return output.decode("utf-8", errors="replace")


def screen(text: str) -> list[str]:
    """The lines a terminal shows at the end: a carriage return goes back to the line's start."""
    lines = []
    for raw in text.split("\n"):
        cells: list[str] = []
        column = 0
        for char in raw:
            if char == "\r":
                column = 0
                continue
            if column < len(cells):
                cells[column] = char
            else:
                cells.append(char)
            column += 1
        lines.append("".join(cells).rstrip())
    return lines


def test_progress_is_drawn_in_place_in_a_terminal(small_site: RunningSite, tmp_path: Path) -> None:
    text = run_in_terminal(crawl_command(small_site.start_url, tmp_path, settings=SLOW))
    fetched = [int(n.replace(",", "")) for n in LIVE_LINE.findall(text)]
    # Redrawn in place (a carriage return, no new line) as the crawl went on.
    assert len(set(fetched)) >= 3, text[-3000:]
    assert fetched == sorted(fetched)
    shown = screen(text)
    # Removed at the end, and never left in the middle of a log line written while it was shown.
    assert not [line for line in shown if "pages/s \u00b7" in line], "\n".join(shown[-40:])
    logged = [line for line in shown if "[sitemap_spider.progress] INFO: Progress:" in line]
    assert logged and all(re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", line) for line in logged), logged
    assert any("Sitemap published:" in line for line in shown)


def test_progress_is_a_plain_log_line_on_a_pipe(small_site: RunningSite, tmp_path: Path) -> None:
    result = run_crawl(small_site.start_url, tmp_path, settings=SLOW)
    assert result.returncode == 0, result.describe()
    output = result.stdout + result.stderr
    assert not re.search(r"[\r\x1b\x08]", output), "control characters on a pipe"
    progress = re.findall(r"INFO: Progress: ([\d,]+) pages fetched, [\d,]+ queued, [\d,]+ listed, [\d,]+ excluded, "
                          r"[\d,]+ rendered; [\d,.]+ pages/s; \d+:\d\d:\d\d elapsed", result.stderr)  # fmt: skip
    assert len(progress) >= 2, result.describe()
    assert "fetched " not in output.replace("pages fetched", "")  # no live line


def test_progress_off_logs_nothing(small_site: RunningSite, tmp_path: Path) -> None:
    result = run_crawl(small_site.start_url, tmp_path, settings={**SLOW, "SITEMAP_PROGRESS": "off"})
    assert result.returncode == 0, result.describe()
    assert "Progress:" not in result.stderr


def test_the_leader_shows_both_processes_totals(small_site: RunningSite, tmp_path: Path) -> None:
    small_site.server.clear()
    two = {"SITEMAP_WORKERS": "2", "SITEMAP_WORKERS_AFTER": "0", "LOGSTATS_INTERVAL": "1"}
    result = run_crawl(small_site.start_url, tmp_path, settings=two)
    assert result.returncode == 0, result.describe()
    assert "a second crawling process" in result.stderr, result.describe()
    assert not re.search(r"\[worker 2\] \[sitemap_spider.progress\]", result.stderr), "the helper shows progress"
    final = re.findall(r"Progress at the end: ([\d,]+) pages fetched, 0 queued, ([\d,]+) listed", result.stderr)
    assert len(final) == 1, result.describe()
    served = [r for r in small_site.server.requests if r.method == "GET" and r.target != "/robots.txt"]
    assert result.report is not None
    assert int(final[0][0].replace(",", "")) == len(served) == result.report["counts"]["fetched"]
    # The line comes as the crawl ends, before the set is built: pages then dropped as copies of
    # another page's bytes are still in its count, no longer in the report's.
    assert int(final[0][1].replace(",", "")) >= result.report["counts"]["listed"] == result.report["urls"]

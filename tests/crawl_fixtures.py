"""Fixtures for end-to-end crawls: running fixture sites, and the real ``scrapy crawl`` in a subprocess.

conftest.py imports the fixtures from here; ``run_crawl`` is a plain helper.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.generated_site import build_generated_site
from tests.site_cases import build_case_site
from tests.site_server import SiteServer
from tests.site_spec import SiteSpec

#: The project root (holds scrapy.cfg): ``scrapy`` finds the project settings from there.
REPO_ROOT = Path(__file__).resolve().parent.parent

#: Pages in the generated site of the big end-to-end test.
GENERATED_PAGES = 3000
#: Given to every crawl unless its test names them: fixture sites have pages down for good (the
#: case site's /s503 and /broken), which the defaults (5 retries from 1 s, doubling, a last pass
#: 30 s later) would try for about 90 s. tests/test_faults.py and test_retries.py set their own.
QUICK_RETRIES = {"SITEMAP_RETRY_TIMES": "2", "SITEMAP_RETRY_LAST_PASS_DELAY": "1", "SITEMAP_RETRY_DELAY": "0.1"}


@dataclass(frozen=True)
class CrawlResult:
    """What one ``scrapy crawl sitemap`` run left behind."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    output_dir: Path
    report_path: Path
    report: dict[str, Any] | None
    seconds: float

    def files(self) -> dict[str, bytes]:
        """Every published file (name -> bytes); empty if the directory does not exist."""
        return folder_files(self.output_dir)

    @property
    def stats(self) -> dict[str, Any]:
        """The crawl's Scrapy stats, as its report holds them."""
        assert self.report is not None, self.describe()
        stats: dict[str, Any] = self.report["stats"]
        return stats

    def describe(self, tail: int = 4000) -> str:
        """The command, exit code and the end of stderr, for assertion messages."""
        return (
            f"command: {' '.join(self.args)}\nexit code: {self.returncode}\n"
            f"--- stderr (last {tail} chars) ---\n{self.stderr[-tail:]}"
        )


def folder_files(folder: Path) -> dict[str, bytes]:
    """The files directly in ``folder`` (name -> bytes), a published set's; empty if there is no folder."""
    if not folder.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def tree_files(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (its path relative to it -> bytes), staging folders included."""
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def file_identities(directory: Path) -> dict[str, tuple[int, int]]:
    """Each file directly in ``directory`` -> (inode, mtime in ns): what a web server makes a
    file's ETag and Last-Modified of."""
    found = {}
    for path in directory.iterdir():
        if path.is_file():
            status = path.stat()
            found[path.name] = (status.st_ino, status.st_mtime_ns)
    return found


def log_stat(log: str, key: str) -> int | None:
    """A Scrapy stat in a crawl's log, from its last stats dump (a leader's counts both of its
    processes); None when no dump has it."""
    found = re.findall(rf"'{re.escape(key)}': (\d+)", log)
    return int(found[-1]) if found else None


def log_count(log: str, key: str) -> int:
    """A count among a crawl's stats in its log, 0 when no dump has it (Scrapy leaves out counts never increased)."""
    return log_stat(log, key) or 0


def crawl_command(
    start_url: str,
    tmp_path: Path,
    *extra_args: str,
    settings: Mapping[str, str | None] | None = None,
) -> list[str]:
    """The ``scrapy crawl sitemap`` command line run_crawl runs (for tests that drive it themselves).

    ``start_url=""`` leaves out ``-a url`` entirely; a setting given as None is left out, so
    that the product's default applies (``SITEMAP_HISTORY``, which is given otherwise).
    """
    args = [sys.executable, "-m", "scrapy", "crawl", "sitemap"]
    if start_url:
        args += ["-a", f"url={start_url}"]
    args += [
        "-s", f"SITEMAP_OUTPUT_DIR={tmp_path / 'sitemaps'}",
        "-s", f"SITEMAP_REPORT={tmp_path / 'report.json'}",
        "-s", "LOG_LEVEL=INFO",
        "-s", "REMOTE_CONTROL_ENABLED=False",
        "-s", "TELNETCONSOLE_ENABLED=False",
    ]  # fmt: skip
    # The crawl history beside the output: two runs in one tmp_path share it, and crawls of
    # one test in different folders do not (the default, per user, is per test: private_data_home).
    given = {"SITEMAP_HISTORY": str(tmp_path / "history.sqlite"), **QUICK_RETRIES, **(settings or {})}
    for name, value in given.items():
        if value is not None:
            args += ["-s", f"{name}={value}"]
    return [*args, *extra_args]


@dataclass(frozen=True)
class StoppedCrawl:
    """A crawl stopped with SIGTERM (:func:`crawl_then_stop`): its exit code, stderr, and how long it took to exit."""

    returncode: int
    stderr: str
    seconds: float  # from the SIGTERM to the exit


def crawl_then_stop(args: list[str], ready: Callable[[], bool], settle: float, timeout: float = 120) -> StoppedCrawl:
    """Run a crawl command, wait until ``ready()`` (at most 60 s), ``settle`` seconds more, then SIGTERM it."""
    process = subprocess.Popen(args, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not ready():
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()[1][-3000:]
        time.sleep(0.05)
    time.sleep(settle)
    stopped = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _out, err = process.communicate(timeout=timeout)
    return StoppedCrawl(process.returncode, err, time.monotonic() - stopped)


def run_crawl(
    start_url: str,
    tmp_path: Path,
    *extra_args: str,
    settings: Mapping[str, str | None] | None = None,
    timeout: float = 120,
    env: dict[str, str] | None = None,
    cwd: Path = REPO_ROOT,
) -> CrawlResult:
    """Run the real ``scrapy crawl sitemap -a url=START_URL`` from the project root (or ``cwd``).

    Output goes to ``tmp_path/sitemaps`` and the report to ``tmp_path/report.json``;
    calling twice with one ``tmp_path`` publishes into the same directory, as a
    scheduled re-crawl does. ``start_url=""`` leaves out ``-a url`` entirely.
    """
    report = tmp_path / "report.json"
    # A report from an earlier run in this directory must not pass for this run's.
    report.unlink(missing_ok=True)
    args = crawl_command(start_url, tmp_path, *extra_args, settings=settings)
    started = time.monotonic()
    try:
        proc = subprocess.run(
            args,
            check=False,
            cwd=cwd,
            env=dict(os.environ) if env is None else env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        # subprocess.run has killed the crawl; what it logged says where it was stuck.
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr
        pytest.fail(f"crawl did not end within {timeout} s: {' '.join(args)}\n{(stderr or '')[-4000:]}")
    seconds = time.monotonic() - started
    parsed = json.loads(report.read_text(encoding="utf-8")) if report.is_file() else None
    return CrawlResult(
        args=args,
        returncode=proc.returncode,
        stdout=proc.stdout,
        stderr=proc.stderr,
        output_dir=tmp_path / "sitemaps",
        report_path=report,
        report=parsed,
        seconds=seconds,
    )


@dataclass(frozen=True)
class RunningSite:
    """A fixture site being served, with a decoy server on another port of 127.0.0.1."""

    spec: SiteSpec
    server: SiteServer
    decoy: SiteServer

    @property
    def origin(self) -> str:
        return self.spec.origin

    @property
    def start_url(self) -> str:
        return self.spec.start_url


@contextmanager
def serve_site(build: Callable[[str, str], SiteSpec]) -> Iterator[RunningSite]:
    """Start a server and a decoy, build the site for their origins, serve it, stop both after.

    ``build(origin, other_origin)`` returns the site; the decoy answers every path with
    a page and records requests, so an off-site link to it that is followed is caught.
    """
    with SiteServer() as server, SiteServer() as decoy:
        decoy.serve(build_case_site(decoy.origin))
        spec = build(server.origin, decoy.origin)
        server.serve(spec)
        yield RunningSite(spec=spec, server=server, decoy=decoy)


@pytest.fixture(autouse=True)
def private_data_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """XDG_DATA_HOME of this test and of every crawl it starts: a folder of its own.

    The default crawl history lives in the user's data directory (platformdirs honours
    XDG_DATA_HOME on Linux): without this, tests would write into the real home, and a
    test's site on a reused port would find an earlier test's history.
    """
    home = tmp_path_factory.mktemp("data-home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


@pytest.fixture
def case_site() -> Iterator[RunningSite]:
    """The fixture site holding every case of issue 2, served on 127.0.0.1."""
    with serve_site(lambda origin, other: build_case_site(origin, other_origin=other)) as site:
        yield site


@pytest.fixture
def generated_site() -> Iterator[RunningSite]:
    """A generated site of GENERATED_PAGES pages mixing every case, served on 127.0.0.1."""
    with serve_site(lambda origin, _other: build_generated_site(origin, GENERATED_PAGES)) as site:
        yield site

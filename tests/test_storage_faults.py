"""The published set under a misbehaving machine: a full disk, two publishers at once, an output
directory no file can be made in.

Real processes (`scrapy publish`), a real small filesystem (a tmpfs mounted here; CI runs as
root, as the brief's machines do), the real lock.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitemap_spider.sitemaps.names import STAGING_PREFIX
from sitemap_spider.sitemaps.shards.storage import SitemapStorage
from sitemap_spider.writable import write_problem
from tests.crawl_fixtures import RunningSite, run_crawl
from tests.sitemap_check import read_sitemap_set

REPO_ROOT = Path(__file__).resolve().parent.parent
BASE = "https://example.com/"


def write_urls(path: Path, count: int, prefix: str) -> Path:
    path.write_text("".join(f"{BASE}{prefix}/page-{i:06d}.html\n" for i in range(count)))
    return path


def publish_command(source: Path, output_dir: Path) -> list[str]:
    return [
        sys.executable, "-m", "scrapy", "publish", str(source),
        "-s", f"SITEMAP_OUTPUT_DIR={output_dir}", "-s", f"SITEMAP_BASE_URL={BASE}",
    ]  # fmt: skip


def files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture
def small_disk(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """A small tmpfs (256 KiB, or the test's ``disk_size`` mark): room for a small set, not a big one."""
    mark = request.node.get_closest_marker("disk_size")
    size = mark.args[0] if mark else "256k"
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)],
        capture_output=True, text=True, check=False,  # a refusal is reported below
    )  # fmt: skip
    if mounted.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail(f"cannot mount a tmpfs in CI: {mounted.stderr}")
        pytest.skip(f"mounting a tmpfs needs root: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)


def test_a_full_disk_leaves_the_previous_set_intact_and_no_staging(small_disk: Path, tmp_path: Path) -> None:
    out = small_disk / "sitemaps"
    first = subprocess.run(publish_command(write_urls(tmp_path / "small.txt", 200, "old"), out),
                           cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert first.returncode == 0, first.stderr[-2000:]
    before = files(out)
    assert len(read_sitemap_set(out, BASE)) == 200
    # 20,000 URLs are some 1.5 MB of XML, and their sort runs: far more than the disk holds.
    second = subprocess.run(publish_command(write_urls(tmp_path / "big.txt", 20_000, "new"), out),
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert second.returncode == 1, second.stderr[-2000:]
    assert "nothing published" in second.stderr
    assert "No space left on device" in second.stderr
    assert str(out) in second.stderr  # the message names where it could not write
    assert files(out) == before, "the previous set changed"
    assert len(read_sitemap_set(out, BASE)) == 200
    assert not list(out.glob(f"{STAGING_PREFIX}*")), "a staging directory was left behind"


def test_a_second_publisher_waits_for_the_one_moving_its_files(tmp_path: Path) -> None:
    out = tmp_path / "sitemaps"
    storage = SitemapStorage(out)
    source = write_urls(tmp_path / "urls.txt", 500, "p")
    stderr: list[str] = []
    with storage.publishing_lock():
        process = subprocess.Popen(publish_command(source, out), cwd=REPO_ROOT, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)  # fmt: skip
        assert process.stderr is not None
        reader = threading.Thread(target=lambda: stderr.extend(process.stderr), daemon=True)  # type: ignore[arg-type]
        reader.start()
        deadline = time.monotonic() + 60
        while not any("waiting for it" in line for line in stderr):
            assert process.poll() is None, "".join(stderr)[-2000:]
            assert time.monotonic() < deadline, "the second publisher did not reach the lock"
            time.sleep(0.05)
        time.sleep(0.5)
        # Everything is written and validated, but nothing moved while the lock is held.
        assert process.poll() is None
        assert not (out / "sitemap_index.xml").exists()
    assert process.wait(timeout=60) == 0, "".join(stderr)[-2000:]
    reader.join(timeout=10)
    assert len(read_sitemap_set(out, BASE)) == 500


@pytest.mark.disk_size("64k")
def test_a_crawl_that_fills_the_disk_stops_and_publishes_nothing(
    small_disk: Path, tmp_path: Path, generated_site: RunningSite
) -> None:
    out = small_disk / "sitemaps"
    settings = {"SITEMAP_OUTPUT_DIR": str(out), "SITEMAP_REPORT": str(tmp_path / "r.json"), "SITEMAP_WORKERS": "1"}
    # A first crawl lists a few pages: a small set that fits.
    first = run_crawl(generated_site.start_url, tmp_path / "first",
                      settings={**settings, "SITEMAP_INCLUDE": r"7/$|7\.html$|7$"})  # fmt: skip
    assert first.returncode == 0, first.describe()
    before = files(out)
    listed = read_sitemap_set(out, generated_site.origin + "/")
    assert 0 < len(listed) < 500
    # The whole site's entries spill to sorted runs of 1,000 on the small disk, which fills
    # while the crawl runs: it stops there rather than publish a set missing a run.
    second = run_crawl(generated_site.start_url, tmp_path / "second",
                       settings={**settings, "SITEMAP_SORT_RUN_SIZE": "1000"})  # fmt: skip
    assert second.returncode == 1, second.describe()
    assert "Cannot store the sitemap's entries" in second.stderr
    assert "No space left on device" in second.stderr and str(out) in second.stderr
    assert "no sitemap published: storing the entries failed" in second.stderr
    assert files(out) == before, "the previous set changed"
    assert not list(out.glob(f"{STAGING_PREFIX}*")), "a staging directory was left behind"


def unusable_output_dirs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Output directories no file can be made in, whoever runs the tests, and the reason given."""
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    cases = {
        "under a file": (blocker / "sitemaps", f"{blocker} is not a directory"),
        "a file": (blocker, f"{blocker} is not a directory"),
    }
    if Path("/proc/self").is_dir():  # Linux: root may write there by its mode bits, yet makes nothing
        cases["in /proc"] = (Path("/proc/sitemap-spider-test"), "creating /proc/sitemap-spider-test failed: ")
    return cases


@pytest.mark.parametrize("case", ["under a file", "a file", "in /proc"])
def test_an_output_dir_that_cannot_be_written_stops_the_crawl_before_any_request(
    tmp_path: Path, generated_site: RunningSite, case: str
) -> None:
    cases = unusable_output_dirs(tmp_path)
    if case not in cases:
        pytest.skip("no /proc")
    out, reason = cases[case]
    generated_site.server.clear()
    done = run_crawl(generated_site.start_url, tmp_path, settings={"SITEMAP_OUTPUT_DIR": str(out)})
    assert done.returncode == 2, done.describe()
    assert f"error: SITEMAP_OUTPUT_DIR: the sitemap files cannot be written in {out}: {reason}" in done.stderr
    assert "Traceback" not in done.stderr
    assert generated_site.server.requests == []


def test_the_check_leaves_no_folder_it_made(tmp_path: Path) -> None:
    assert write_problem(tmp_path / "a" / "b" / "sitemaps") is None
    assert list(tmp_path.iterdir()) == []
    # Folders made before the one that failed are removed too.
    problem = write_problem(tmp_path / "a" / "b" / ("x" * 300))
    assert problem is not None and problem.endswith("File name too long"), problem
    assert list(tmp_path.iterdir()) == []
    # An existing folder keeps what it holds, and gets nothing more.
    (tmp_path / "kept.txt").write_text("")
    assert write_problem(tmp_path) is None
    assert [p.name for p in tmp_path.iterdir()] == ["kept.txt"]


def test_two_processes_starting_at_once_both_pass_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers started together, the output folder missing: the other one makes a folder between
    this one's look and its mkdir (FileExistsError), or removes one this one built on. Either was a
    ConfigError ("creating ... failed: File exists") for a folder that can be written in."""
    target = tmp_path / "a" / "b"
    mkdir = Path.mkdir
    raced: list[Path] = []

    def the_other_made_it_first(self: Path, *args: object, **kwargs: object) -> None:
        if not raced:  # the other process makes it, and is still at its probe
            raced.append(self)
            mkdir(self)
        mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", the_other_made_it_first)
    assert write_problem(target) is None
    assert raced == [tmp_path / "a"]
    assert (tmp_path / "a").is_dir() and not target.exists()  # the other's folder is the other's to remove
    monkeypatch.undo()
    # The other one removes what it made as this one is making its file: this one asks again.
    mkstemp, calls = tempfile.mkstemp, []

    def removed_meanwhile(*args: object, **kwargs: object) -> tuple[int, str]:
        calls.append(1)
        if len(calls) == 1:
            raise FileNotFoundError(2, "No such file or directory")
        return mkstemp(*args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(tempfile, "mkstemp", removed_meanwhile)
    assert write_problem(tmp_path / "c" / "d") is None
    assert len(calls) == 2
